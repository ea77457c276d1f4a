#!/usr/bin/env bash
# harden_runner.sh: the OpenCL runner's defences (docs/runner.md, "The PoCL
# caveat"; docs/grader.md, "Input checks" and "Bounded grades"), on PoCL:
#  - confinement: after the platform opens, a native payload inside the runner
#    (--self-test-confinement) cannot open a planted secret file, read its
#    parent's /proc environ, see a secret variable, signal or ptrace its
#    parent, read its memory, open a socket or exec; PoCL still builds and
#    runs a kernel;
#  - the input check: a kernel that uses an input as scratch and restores the
#    old unkeyed hash gets input_modified, and the detail says the hash was
#    restored (so the forge itself worked);
#  - bounded grades: correct calls several hundred times slower than the eager baseline end
#    with timeout in seconds, not ok after a minute.
# SKIP when there is no OpenCL runner or platform.
set -u
KA=${KA:-build/ka}
BUILD=${BUILD:-build}
RUN="$BUILD/ka-run-opencl"
if [ ! -x "$RUN" ] || ! command -v clinfo >/dev/null || [ "$(clinfo -l 2>/dev/null | grep -c Platform)" = 0 ]; then
	echo "SKIP harden_runner: no OpenCL runner or platform on this machine"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS harden_runner/$1"; }
fail() { echo "FAIL harden_runner/$1: $2"; }

# 1. Confinement, probed from inside the runner.
secret="$tmp/secret.txt"
echo "KA-SECRET-$$" >"$secret"
KA_SECRET_VAR="KA-SECRET-$$" "$RUN" --self-test-confinement --secret "$secret" \
	--secret-env KA_SECRET_VAR >"$tmp/probe.out" 2>"$tmp/probe.err"
rc=$?
for what in "open(secret file)" "open(/proc/<parent>/environ)" "getenv(secret)" \
	"kill(parent, 0)" "ptrace(attach parent)" "process_vm_readv(parent)" \
	"socket(AF_INET)" "execve(/bin/true)"; do
	if grep -qxF "refused $what" "$tmp/probe.out"; then
		pass "confine: $what"
	else
		fail "confine: $what" "$(tr '\n' ' ' <"$tmp/probe.out") $(tail -c 300 "$tmp/probe.err")"
	fi
done
if [ $rc -eq 0 ] && grep -qx "ok kernel run after confinement" "$tmp/probe.out" &&
	grep -qx "allowed kill(self, 0)" "$tmp/probe.out"; then
	pass "confine: PoCL still builds and runs kernels (exit 0)"
else
	fail "confine: kernel" "exit $rc: $(tr '\n' ' ' <"$tmp/probe.out")"
fi
# The planted file is readable outside the runner (so a refusal is the
# confinement's doing, not a missing file).
if grep -q "KA-SECRET-$$" "$secret"; then
	pass "confine: the secret is readable outside the runner"
else
	fail "confine: secret" "cannot read back $secret"
fi

# 2. A forged unkeyed input hash.
L1=bank/public/L1/gelu_bias_scale
"$KA" grade --task "$L1" --target opencl --kernel tests/data/grade_opencl/forges_input_hash.c \
	--no-timing --workdir "$tmp/work" --json "$tmp/forge.json" >"$tmp/forge.log" 2>&1
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["verdict"], "|", r.get("detail",""))' "$tmp/forge.json" 2>/dev/null)
case "$got" in
"input_modified | "*"unkeyed hash was restored"*) pass "forged input hash: input_modified" ;;
*) fail "forged input hash" "got '$got': $(tail -c 300 "$tmp/forge.log" | tr '\n' ' ')" ;;
esac

# 3. Calls several hundred times slower than the eager baseline (the cut is
# 50x; 100x measured as little as 33x on a loaded PoCL): timeout, quickly.
t0=$(date +%s)
"$KA" grade --task "$L1" --target opencl --kernel tests/data/grade_opencl/slow_calls.c \
	--max-seconds 60 --workdir "$tmp/work" --json "$tmp/slow.json" >"$tmp/slow.log" 2>&1
t1=$(date +%s)
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["verdict"], "|", r.get("detail",""))' "$tmp/slow.json" 2>/dev/null)
case "$got" in
"timeout | "*"eager baseline"*)
	if [ $((t1 - t0)) -lt 45 ]; then
		pass "slow calls: timeout in $((t1 - t0)) s"
	else
		fail "slow calls" "timeout, but only after $((t1 - t0)) s"
	fi
	;;
*) fail "slow calls" "got '$got': $(tail -c 300 "$tmp/slow.log" | tr '\n' ' ')" ;;
esac
