/* cast_fp32_fp16 reference: y = x rounded to fp16 (gold keeps the exact value; the tolerance covers the rounding).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(ka_half) y)
{
	double v = (double)x[item];
	double r = v;
	KA_ST_F16(y, item, r);
}
