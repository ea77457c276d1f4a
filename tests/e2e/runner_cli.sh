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

# Phased calls (runner protocol 3): after preparing, the runner sends
# {"phase":"ready"} and does nothing more until {"op":"go"}; then
# {"phase":"replayed"} after the replay, then the reply. Anything else in
# place of the go ends the call with an error reply.
if ! grep -aq '"phased_calls":true' "$tmp/out"; then
	echo "FAIL runner_phased_hello: the hello does not offer phased calls"
else
	echo "PASS runner_phased_hello"
	PLAN='{"format":"ka-plan/1","target":"opencl","status":0,"programs":[{"source":"__kernel void k(__global const float *x, __global float *y) { size_t i = get_global_id(0); y[i] = x[i]; }","options":""}],"kernels":[{"name":"k","program":0,"max_dynamic_smem":0,"carveout":-1}],"workspaces":[],"ops":[{"op":"launch","kernel":0,"work_dim":1,"grid":[64,1,1],"block":[0,1,1],"goffset":[0,0,0],"cluster":[0,0,0],"smem":0,"args":[{"kind":"buffer","buf":0,"offset":0},{"kind":"buffer","buf":1,"offset":0}]}]}'
	LOAD='{"op":"load","slot":0,"plan":'"$PLAN"',"tensors":[{"bytes":256,"dtype":0},{"bytes":256,"dtype":0}]}'
	CALL='{"op":"call","slot":0,"inputs":[{"key":"0000000000000001","kind":0,"a":0.0,"b":1.0}],"poison":"0000000000000002","flush":true,"time":true,"phased":true,"return":"all"}'
	# In order: ready, replayed, then the reply with its time.
	{ frame "$LOAD"; frame "$CALL"; frame '{"op":"go"}'; frame '{"op":"quit"}'; } \
		| timeout 60 "$R" >"$tmp/ph1" 2>&1
	order=$(tr -d '\0' <"$tmp/ph1" | grep -ao '"phase":"[a-z]*"\|"time_ns"' | tr '\n' ' ')
	[ "$order" = '"phase":"ready" "phase":"replayed" "time_ns" ' ]
	check runner_phased_order $? "frames: $order; $(tr -d '\0' <"$tmp/ph1" | head -c 300)"
	# No go: the runner waits after "ready" (killed by timeout, nothing more sent).
	{ frame "$LOAD"; frame "$CALL"; sleep 4; } | timeout 2 "$R" >"$tmp/ph2" 2>&1
	grep -aq '"phase":"ready"' "$tmp/ph2" && ! grep -aq 'replayed\|time_ns' "$tmp/ph2"
	check runner_phased_waits_for_go $? "$(tr -d '\0' <"$tmp/ph2" | head -c 300)"
	# Another request in place of the go: an error reply to the call, and
	# the runner goes on (the quit is answered).
	{ frame "$LOAD"; frame "$CALL"; frame '{"op":"hello"}'; frame '{"op":"quit"}'; } \
		| timeout 60 "$R" >"$tmp/ph3" 2>&1
	rc=$?
	grep -aq 'expected {\\"op\\":\\"go\\"} after' "$tmp/ph3" && ! grep -aq 'replayed' "$tmp/ph3" \
		&& [ "$(grep -ao '"ok":' "$tmp/ph3" | wc -l)" = 3 ]
	check runner_phased_no_go $(( $? != 0 || rc != 0 )) "exit $rc: $(tr -d '\0' <"$tmp/ph3" | head -c 300)"
	# The parent gone after "ready": the runner ends.
	{ frame "$LOAD"; frame "$CALL"; } | timeout 30 "$R" >"$tmp/ph4" 2>&1
	rc=$?
	check runner_phased_eof $(( rc == 124 )) "exit $rc"
fi
