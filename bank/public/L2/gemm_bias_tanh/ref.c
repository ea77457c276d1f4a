/* gemm_bias_tanh reference: Y = tanh(X @ W.T + b).
 * One work item is one output element, item = m * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(float) x, KA_IN(float) w, KA_IN(float) b, KA_OUT(float) y)
{
	ka_i64 n = item % N, m = item / N;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += (double)x[m * K + k] * (double)w[n * K + k];
	double v = acc;
	v += (double)b[n];
	v = tanh(v);
	y[item] = v;
}
