/* swiglu_bf16 reference: the SwiGLU gate of a transformer MLP: Y = silu(X @ W1.T) * (X @ W3.T), two GEMMs sharing the input X [M, K]; W1, W3 [H, K]; Y [M, H].
 * One work item is one output element, item = m * H + h. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 H, ka_i64 K, KA_IN(ka_bf16) x, KA_IN(ka_bf16) w1, KA_IN(ka_bf16) w3, KA_OUT(ka_bf16) y)
{
	ka_i64 m = item / H, h = item % H;
	double g = 0.0, u = 0.0; /* fp64 accumulation */
	for (ka_i64 k = 0; k < K; k++) {
		double xv = KA_LD_BF16(x, m * K + k);
		g += xv * KA_LD_BF16(w1, h * K + k);
		u += xv * KA_LD_BF16(w3, h * K + k);
	}
	KA_ST_BF16(y, item, g / (1.0 + exp(-g)) * u);
}
