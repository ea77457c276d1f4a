/* gemm_bias_residual_f16 reference: Y = X @ W.T + b + R (R [M, N], a residual stream).
 * One work item is one output element, item = m * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_half) x, KA_IN(ka_half) w, KA_IN(ka_half) b, KA_IN(ka_half) r, KA_OUT(ka_half) y)
{
	ka_i64 n = item % N, m = item / N;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_F16(x, m * K + k) * KA_LD_F16(w, n * K + k);
	double v = acc;
	v += KA_LD_F16(b, n);
	v += KA_LD_F16(r, item);
	KA_ST_F16(y, item, v);
}
