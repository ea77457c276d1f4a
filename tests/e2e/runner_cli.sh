#!/usr/bin/env bash
# runner_cli.sh: ka-run-opencl as a program: its flags, the framed protocol
# on stdin/stdout (hello, a bad request, quit), the reason it gives when no
# platform matches, and that kernel printf cannot reach the protocol stream.
set -u
BUILD=${BUILD:-build}
R="$BUILD/ka-run-opencl"
if [ ! -x "$R" ]; then
	echo "SKIP runner_cli: $R not built (no OpenCL)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One framed message: 4-byte little-endian length, then the JSON.
frame() {
	local s=$1 n=${#1}
	printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $(((n >> 8) & 255)))\\x00\\x00%s" "$s"
}

check() { # name condition-exit-status message
	if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; fi
}

"$R" --help >"$tmp/help" 2>&1
rc=$?
grep -q '^usage: ka-run-opencl' "$tmp/help"
check runner_help $(( rc != 0 || $? != 0 )) "--help exit $rc"

"$R" --bogus >/dev/null 2>&1
rc=$?
check runner_bad_flag $(( rc != 2 )) "exit $rc, want 2"

"$R" --device x >/dev/null 2>&1
rc=$?
check runner_bad_device $(( rc != 2 )) "exit $rc, want 2"

# EOF right away: a clean exit.
"$R" </dev/null >/dev/null 2>"$tmp/err0"
rc=$?
check runner_eof_exit $(( rc != 0 )) "exit $rc: $(tr -d "\\0" <"$tmp/err0" | head -c 200)"

{ frame '{"op":"hello"}'; frame '{"nop":1}'; frame '{"op":"call","slot":3}'; frame '{"op":"quit"}'; } \
	| timeout 60 "$R" >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -aq 'no OpenCL platform' "$tmp/out"; then
	echo "SKIP runner_hello: no OpenCL platform"
else
	grep -aq '"ok":true' "$tmp/out" && grep -aq '"test_grade"' "$tmp/out" \
		&& grep -aq '"flush_bytes"' "$tmp/out" && grep -aq '"base_addr_align"' "$tmp/out"
	check runner_hello $(( rc != 0 || $? != 0 )) "exit $rc: $(tr -d "\\0" <"$tmp/out" | head -c 300)"
	grep -aq "request without 'op'" "$tmp/out" && grep -aq 'slot is not loaded' "$tmp/out"
	check runner_bad_requests $? "$(tr -d "\\0" <"$tmp/out" | head -c 300)"
	# Four requests, four replies: count the frames by their "ok" keys.
	n=$(grep -ao '"ok":' "$tmp/out" | wc -l)
	check runner_one_reply_each $(( n != 4 )) "$n replies to 4 requests"
fi

{ frame '{"op":"hello"}'; frame '{"op":"quit"}'; } \
	| timeout 60 "$R" --platform no-such-platform-xyz >"$tmp/out2" 2>"$tmp/err2"
grep -aq "no OpenCL platform matching 'no-such-platform-xyz'" "$tmp/out2" \
	&& grep -aq '"ok":false' "$tmp/out2"
check runner_no_platform_reason $? "$(tr -d "\\0" <"$tmp/out2" | head -c 300)"
