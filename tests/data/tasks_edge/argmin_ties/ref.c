/* idx[r] = the first index of the row minimum. One work item is one row. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(int) idx)
{
	(void)R;
	ka_i64 best = 0;
	for (ka_i64 c = 1; c < C; c++)
		if (x[item * C + c] < x[item * C + best])
			best = c;
	idx[item] = (int)best;
}
