/* gemm_bias_gelu reference: Y[m, n] = gelu(sum_k X[m, k] * W[n, k] + b[n])
 * with the exact (erf) GELU: gelu(v) = 0.5 * v * (1 + erf(v / sqrt(2))).
 * W is stored [N, K] like torch.nn.Linear's weight, so Y = gelu(X @ W.T + b).
 * One work item is one output element, item = m * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(float) x, KA_IN(float) w,
	       KA_IN(float) b, KA_OUT(float) y)
{
	ka_i64 m = item / N, n = item % N;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += (double)x[m * K + k] * (double)w[n * K + k];
	double v = acc + (double)b[n];
	y[item] = 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); /* 1/sqrt(2) */
}
