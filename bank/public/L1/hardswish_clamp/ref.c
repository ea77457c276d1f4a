/* hardswish_clamp reference: y = clamp(x * min(max(x + 3, 0), 6) / 6, -0.25, 2).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double v = (double)x[item];
	double h = v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
	double r = fmin(fmax(h, -0.25), 2.0);
	y[item] = r;
}
