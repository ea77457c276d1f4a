/* col_sum reference: y[c] = sum over r of x[r, c].
 * One work item is one column (it owns one output); accumulates in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	double s = 0.0;
	for (ka_i64 r = 0; r < R; r++)
		s += (double)x[r * C + item];
	y[item] = s;
}
