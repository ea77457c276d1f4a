/* row_var reference: y[r] = unbiased variance of x[r, :] (two passes).
 * One work item is one row (it owns one output); accumulates in double. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	KA_IN(float) row = x + item * C;
	double s = 0.0;
	for (ka_i64 c = 0; c < C; c++)
		s += (double)row[c];
	double mean = s / (double)C, q = 0.0;
	for (ka_i64 c = 0; c < C; c++) {
		double v = (double)row[c];
		q += (v - mean) * (v - mean);
	}
	y[item] = q / (double)(C - 1);
}
