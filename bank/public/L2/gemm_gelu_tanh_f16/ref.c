/* gemm_gelu_tanh_f16 reference: Y = gelu_tanh(X @ W.T + b), the tanh approximation: 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
 * One work item is one output element, item = m * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_half) x, KA_IN(ka_half) w, KA_IN(ka_half) b, KA_OUT(ka_half) y)
{
	ka_i64 n = item % N, m = item / N;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_F16(x, m * K + k) * KA_LD_F16(w, n * K + k);
	double v = acc;
	v += KA_LD_F16(b, n);
	v = 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
	KA_ST_F16(y, item, v);
}
