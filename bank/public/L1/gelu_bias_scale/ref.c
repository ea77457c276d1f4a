/* gelu_bias_scale reference: y[r, c] = gelu(x[r, c] * scale[c] + bias[c])
 * with the exact (erf) GELU: gelu(v) = 0.5 * v * (1 + erf(v / sqrt(2))).
 * One work item is one output element, item = r * C + c. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_IN(float) scale,
	       KA_IN(float) bias, KA_OUT(float) y)
{
	ka_i64 c = item % C; /* column: selects scale and bias */
	double v = (double)x[item] * (double)scale[c] + (double)bias[c];
	y[item] = 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); /* 1/sqrt(2) */
}
