/* softplus reference: y = x > 20 ? x : log1p(exp(x)) (torch's threshold).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double v = (double)x[item];
	double r = v > 20.0 ? v : log1p(exp(v));
	y[item] = r;
}
