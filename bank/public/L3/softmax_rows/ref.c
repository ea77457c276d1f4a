/* softmax_rows reference: Y[r, :] = softmax(X[r, :]), i.e.
 * Y[r, c] = exp(X[r, c] - max_j X[r, j]) / sum_j exp(X[r, j] - max_j X[r, j]).
 * Subtracting the row maximum first keeps exp from overflowing; the result is
 * the same function. One work item is one row (it owns C outputs). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_OUT(float) y)
{
	KA_IN(float) row = x + item * C;
	double mx = (double)row[0];
	for (ka_i64 c = 1; c < C; c++)
		mx = fmax(mx, (double)row[c]);
	double sum = 0.0;
	for (ka_i64 c = 0; c < C; c++)
		sum += exp((double)row[c] - mx);
	for (ka_i64 c = 0; c < C; c++)
		y[item * C + c] = exp((double)row[c] - mx) / sum;
}
