/* log_softmax reference: y = x - max - log(sum exp(x - max)) per row, in double.
 * One work item is one row (C outputs). */
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
	double lse = mx + log(sum);
	for (ka_i64 c = 0; c < C; c++)
		y[item * C + c] = (double)row[c] - lse;
}
