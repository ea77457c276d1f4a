#!/usr/bin/env bash
# GPU tier: candidates that are right in every untimed call and cut work in
# the timed ones (docs/grader.md, "Every timed output is verified"). Each
# fixture of tests/data/timed tells the calls apart its own way (the L2
# cache's state after the runner's flush, a call counter in a __device__
# variable) and must get wrong_answer in phase timing: the sampled check of
# every warm-up and timed call sees the work it skipped. With --no-timing
# the same fixtures must grade ok (they are right whenever not timed, so the
# detection itself is what is being tested). SKIP where there is no GPU or
# no CUDA runner. About a minute of device time besides compiling.
set -u
. tests/gpu/lib/need_gpu.sh timed_cheats
tmp=${KA_GPU_OUT:-$(mktemp -d)}
mkdir -p "$tmp"
task=bank/public/L1/gelu_bias_scale
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
for src in tests/data/timed/*.cu; do
	name=$(basename "$src" .cu)
	"$KA" grade --target cuda --task "$task" --kernel "$src" --no-timing --workdir "$tmp/work" \
		--json "$tmp/$name-untimed.json" >"$tmp/$name-untimed.log" 2>&1
	got=$(field "$tmp/$name-untimed.json" 'r["verdict"]')
	if [ "$got" = ok ]; then
		echo "PASS timed_cheats/${name}_untimed (ok: right whenever not timed)"
	else
		echo "FAIL timed_cheats/${name}_untimed: want ok, got '${got:-none}': $(tail -c 400 "$tmp/$name-untimed.log" | tr '\n' ' ')"
	fi
	"$KA" grade --target cuda --task "$task" --kernel "$src" --max-seconds 10 --workdir "$tmp/work" \
		--json "$tmp/$name.json" >"$tmp/$name.log" 2>&1
	rc=$?
	got=$(field "$tmp/$name.json" '"%s %s" % (r["verdict"], r["phase"])')
	if [ "$rc" -eq 0 ] && [ "$got" = "wrong_answer timing" ]; then
		echo "PASS timed_cheats/$name (wrong_answer in timing)"
	else
		echo "FAIL timed_cheats/$name: want 'wrong_answer timing', got '${got:-none}' (exit $rc): $(field "$tmp/$name.json" 'r["detail"]' | head -c 300) $(tail -c 300 "$tmp/$name.log" | tr '\n' ' ')"
	fi
done
