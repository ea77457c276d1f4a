/* cast_bf16_fp32 reference: y = x widened to fp32 (exact).
 * One work item is one element, item = r * C + c; computed in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(ka_bf16) x, KA_OUT(float) y)
{
	double v = KA_LD_BF16(x, item);
	double r = v;
	y[item] = r;
}
