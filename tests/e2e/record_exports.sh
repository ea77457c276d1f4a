#!/usr/bin/env bash
# record_exports.sh: each recorder exports its API and nothing else to the
# candidate's shared object. For each recorder built: the names in
# src/recorder/record_<target>.dynlist (the link's --dynamic-list) equal
# `ka-record-<target> --exports` (the recorder's own table, which the import
# check uses); the binary's exported functions equal that table; and no
# internal function (util_*, plan_*, proto_*, sandbox_*, symcheck_*, record_*,
# json_*, main) is visible.
set -u
BUILD=${BUILD:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { # name status message
	if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; fi
}
if ! command -v nm >/dev/null; then
	echo "SKIP record_exports: nm missing"; exit 0
fi

# target  least number of exports (a table that lost its entries is a failure)
for row in "opencl 60" "cuda 30"; do
	set -- $row
	t=$1 least=$2
	rec="$BUILD/ka-record-$t" list="src/recorder/record_$t.dynlist"
	if [ ! -x "$rec" ]; then
		echo "SKIP record_exports_$t: $rec not built"; continue
	fi
	"$rec" --exports >"$tmp/$t.raw"; rc=$?
	sort "$tmp/$t.raw" >"$tmp/$t.table"
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);[[:space:]]*$/\1/p' "$list" | sort >"$tmp/$t.list"
	[ $rc -eq 0 ] && ! grep -q MISSING "$tmp/$t.raw" && diff -q "$tmp/$t.table" "$tmp/$t.list" >/dev/null &&
		[ "$(wc -l <"$tmp/$t.table")" -ge "$least" ]
	check "record_exports_${t}_list" $? "$list and --exports differ (rc $rc): $(diff "$tmp/$t.table" "$tmp/$t.list" | head -5 | tr '\n' ' ')"

	# defined, exported functions of the binary (a sanitizer build adds its
	# options hook, __asan_default_options, for the sanitizer runtime)
	nm -D --defined-only "$rec" | awk '$2 == "T" || $2 == "W" || $2 == "i" {print $3}' | sed 's/@.*//' |
		grep -vx '__asan_default_options' | sort -u >"$tmp/$t.dyn"
	diff -q "$tmp/$t.table" "$tmp/$t.dyn" >/dev/null
	check "record_exports_${t}_binary" $? "exported functions differ from the table: $(diff "$tmp/$t.table" "$tmp/$t.dyn" | head -5 | tr '\n' ' ')"

	nm -D --defined-only "$rec" | awk '{print $3}' |
		grep -E '^(util_|plan_|proto_|sandbox_|symcheck_|record_|json_|libc_allow_|main$)' >"$tmp/$t.internal"
	[ ! -s "$tmp/$t.internal" ]
	check "record_exports_${t}_internal" $? "internal symbols exported: $(head -5 "$tmp/$t.internal" | tr '\n' ' ')"
done
