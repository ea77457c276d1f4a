/* silu_scale reference: y = 0.5 * silu(x), silu(v) = v / (1 + exp(-v)).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double v = (double)x[item];
	double r = 0.5 * (v / (1.0 + exp(-v)));
	y[item] = r;
}
