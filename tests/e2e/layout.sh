#!/usr/bin/env bash
# layout.sh: the three programs' trust split, as the folders show it
# (docs/architecture.md). Files of the recorder (src/recorder/), the runner
# (src/runner/), the confined gold (src/goldbox/) and the code they all link
# (src/common/) may include only system headers, include/, src/common/ and
# their own folder: never a parent file. The build enforces it too (they compile with -Iinclude -Isrc/common
# only); this test names the offending line. It also checks that no header
# name is used twice in src/, so an include cannot pick the wrong module.
set -u
cd "${KA_HOME:-.}" || exit 1
check_folder() { # folder
	local dir=$1 f inc bad=0
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu; do
		[ -f "$f" ] || continue
		while IFS= read -r inc; do
			local name=${inc#*\"}; name=${name%\"*}
			if [ -f "$dir/$name" ] || [ -f "src/common/$name" ] || [ -f "include/$name" ]; then
				continue
			fi
			echo "FAIL layout_$(basename "$dir"): $f includes \"$name\", which is not in $dir/, src/common/ or include/"
			bad=$((bad + 1))
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	done
	[ "$bad" -eq 0 ] && echo "PASS layout_$(basename "$dir")"
}
for d in src/common src/recorder src/runner src/goldbox; do
	check_folder "$d"
done
dups=$(find src -name '*.h' -printf '%f\n' | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "FAIL layout_unique_headers: header names used twice in src/: $(echo $dups)"
else
	echo "PASS layout_unique_headers"
fi
