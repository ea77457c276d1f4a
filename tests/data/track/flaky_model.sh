#!/bin/sh
# flaky_model.sh: a cmd: model for tests/e2e/track_capability.sh. Sample 1
# fails (exit 1, no retry) until the file $KA_TEST_FLAKY_OK exists; every
# other answer is the bank's OpenCL solution of gelu_bias_scale in a ```c
# block. Each call appends its sample number to $KA_TEST_FLAKY_LOG.
cat >/dev/null
echo "$KA_MODEL_SAMPLE" >>"$KA_TEST_FLAKY_LOG"
if [ "$KA_MODEL_SAMPLE" = 1 ] && [ ! -e "$KA_TEST_FLAKY_OK" ]; then
	echo "model unavailable" >&2
	exit 1
fi
printf 'kernel:\n```c\n'
cat "$KA_HOME/bank/public/L1/gelu_bias_scale/solutions/opencl.c"
printf '```\n'
