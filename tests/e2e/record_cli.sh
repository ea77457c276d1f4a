#!/usr/bin/env bash
# record_cli.sh: ka-record-opencl as a program: usage, its export table
# against the symbols the binary really exports, a standalone recording with
# the request on stdin, and the harness errors it must report as such.
set -u
BUILD=${BUILD:-build}
REC="$BUILD/ka-record-opencl"
if [ ! -x "$REC" ] || ! command -v gcc >/dev/null; then
	echo "SKIP record_cli: $REC or gcc missing"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { # name condition-exit-status message
	if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; fi
}

out=$("$REC" --help); rc=$?
[ $rc -eq 0 ] && grep -q 'usage: ka-record-opencl --so PATH --request FILE|-' <<<"$out"
check record_cli_help $? "--help: rc $rc, output: $out"

"$REC" --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; check record_cli_bad_flag $? "unknown flag: rc $rc, want 2"

# every name in the export table is exported, and every exported cl* function
# is in the table (so the import check and the binary agree)
"$REC" --exports >"$tmp/exports"; rc=$?
nm -D --defined-only "$REC" | awk '$2 == "T" && $3 ~ /^cl[A-Z]/ {print $3}' | sort >"$tmp/defined"
sort "$tmp/exports" >"$tmp/table"
[ $rc -eq 0 ] && ! grep -q MISSING "$tmp/exports" && diff -q "$tmp/table" "$tmp/defined" >/dev/null &&
	[ "$(wc -l <"$tmp/table")" -ge 60 ]
check record_cli_exports $? "export table and binary differ: $(diff "$tmp/table" "$tmp/defined" | head -5 | tr '\n' ' ')"

mkdir "$tmp/root"
gcc -O2 -fPIC -shared -Iinclude -o "$tmp/root/candidate.so" tests/data/record/ok_one_kernel.c
req='{"target":"opencl","n_inputs":1,"tensors":[{"name":"x","dtype":0,"ndim":1,"shape":[100],"numel":100,"bytes":400},{"name":"y","dtype":0,"ndim":1,"shape":[100],"numel":100,"bytes":400}],"params":{"names":["N"],"values":[100]},"device":{"type":"gpu","max_work_group":1024}}'
out=$("$REC" --so "$tmp/root/candidate.so" --request - <<<"$req" 2>"$tmp/err"); rc=$?
[ $rc -eq 0 ] && [ "$(sed -n 1p <<<"$out")" = "stage loading" ] && [ "$(sed -n 2p <<<"$out")" = plan ] &&
	sed -n 3p <<<"$out" | grep -q '"grid":\[128,1,1\],"block":\[64,1,1\]' &&
	grep -q 'ka-record: sandbox: .*seccomp=on' "$tmp/err"
check record_cli_stdin_plan $? "rc $rc, output: $(head -c 300 <<<"$out") stderr: $(head -c 300 "$tmp/err")"

touch "$tmp/root/intruder"
out=$("$REC" --so "$tmp/root/candidate.so" --request - <<<"$req" 2>/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q '^harness sandbox: .* must be alone in its directory' <<<"$out"
check record_cli_not_alone $? "rc $rc, output: $out"
rm "$tmp/root/intruder"

out=$("$REC" --so "$tmp/root/candidate.so" --request - <<<'{"target":"cuda"}' 2>/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q '^harness request:' <<<"$out"
check record_cli_bad_request $? "rc $rc, output: $out"
