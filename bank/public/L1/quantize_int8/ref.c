/* quantize_int8 reference: y[i] = clamp(rint(x[i] / scale), -128, 127).
 * One work item is one element; scale is the task's scalar (a power of two,
 * so the division is exact); rint rounds half to even, as torch.round. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, double scale, KA_IN(float) x, KA_OUT(ka_i8) y)
{
	(void)R;
	(void)C;
	double q = rint((double)x[item] / scale);
	q = fmin(fmax(q, -128.0), 127.0);
	y[item] = (ka_i8)q;
}
