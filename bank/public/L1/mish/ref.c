/* mish reference: y = x * tanh(softplus(x)).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double v = (double)x[item];
	double sp = log1p(exp(-fabs(v))) + fmax(v, 0.0); /* softplus without overflow */
	double r = v * tanh(sp);
	y[item] = r;
}
