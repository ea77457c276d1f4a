/* gemm_bias_relu_bf16 reference: Y = relu(X @ W.T + b).
 * One work item is one output element, item = m * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_bf16) x, KA_IN(ka_bf16) w, KA_IN(ka_bf16) b, KA_OUT(ka_bf16) y)
{
	ka_i64 n = item % N, m = item / N;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_BF16(x, m * K + k) * KA_LD_BF16(w, n * K + k);
	double v = acc;
	v += KA_LD_BF16(b, n);
	v = v > 0.0 ? v : 0.0;
	KA_ST_BF16(y, item, v);
}
