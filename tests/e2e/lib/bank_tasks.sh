# bank_tasks.sh: sourced by the e2e scripts that go over bank tasks. Prints
# the task folders to check, one a line: the three starter tasks in the
# quick tier, every task of bank/public when KA_TEST_BANK=all (the bank tier,
# `make test-bank`, which `make test` runs after the quick tier).
bank_tasks() {
	if [ "${KA_TEST_BANK:-starters}" = all ]; then
		for d in bank/public/*/*/; do
			[ -f "$d/task.json" ] && echo "${d%/}"
		done
	else
		echo bank/public/L1/gelu_bias_scale
		echo bank/public/L2/gemm_bias_gelu
		echo bank/public/L3/softmax_rows
	fi
}
