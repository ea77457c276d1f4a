/* gelu_tanh reference: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double v = (double)x[item];
	double r = 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
	y[item] = r;
}
