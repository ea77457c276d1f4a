#!/usr/bin/env bash
# grade_same_source.sh: the same OpenCL candidate given twice to ka grade
# with 2 graders (a model that answers two samples alike): both are ok and
# ka exits 0. The two compiles share the source's folder; without the
# folder's lock one's clean-up removed the other's candidate.c mid-compile
# (a grader failure).
set -u
KA=${KA:-build/ka}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sol=bank/public/L1/row_sum/solutions/opencl.c
for round in 1 2 3; do
	"$KA" grade --target opencl --task bank/public/L1/row_sum --kernel "$sol" --kernel "$sol" \
		--graders 2 --no-timing --workdir "$tmp/w$round" >"$tmp/out$round" 2>&1
	rc=$?
	n=$(grep -c "^verdict   ok" "$tmp/out$round")
	if [ "$rc" = 0 ] && [ "$n" = 2 ]; then
		echo "PASS grade_same_source/round_$round"
	else
		echo "FAIL grade_same_source/round_$round: exit $rc, $n ok verdicts: $(head -c 300 "$tmp/out$round" | tr '\n' ' ')"
	fi
done
