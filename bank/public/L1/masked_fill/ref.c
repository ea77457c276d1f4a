/* masked_fill reference: y[i] = fill where mask[i], else x[i].
 * One work item is one element; fill is the task's scalar. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, double fill, KA_IN(float) x, KA_IN(ka_bool) mask,
	       KA_OUT(float) y)
{
	(void)R;
	(void)C;
	y[item] = mask[item] ? fill : (double)x[item];
}
