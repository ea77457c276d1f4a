/* cumsum_rows reference: y[r, c] = sum over j <= c of x[r, j].
 * One work item is one row (it owns the row's C outputs); the running sum is
 * a double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	KA_IN(float) row = x + item * C;
	double s = 0.0;
	for (ka_i64 c = 0; c < C; c++) {
		s += (double)row[c];
		y[item * C + c] = s;
	}
}
