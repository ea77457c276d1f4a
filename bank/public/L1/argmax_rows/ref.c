/* argmax_rows reference: y[r] = first index of the row maximum.
 * One work item is one row (it owns one output); accumulates in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(ka_i64) y)
{
	KA_IN(float) row = x + item * C;
	double m = (double)row[0];
	ka_i64 best = 0;
	for (ka_i64 c = 0; c < C; c++) {
		double v = (double)row[c];
		if (v > m) {
			m = v;
			best = c;
		}
	}
	y[item] = best;
}
