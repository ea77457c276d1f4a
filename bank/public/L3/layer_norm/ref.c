/* layer_norm reference: y = (x - mean) / sqrt(var + 1e-5) * w + b per row
 * (biased variance, two passes in double). One work item is one row (C outputs).
 * eps is baked in: it wants a float scalar parameter once the format has them. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, KA_IN(float) w, KA_IN(float) b,
	       KA_OUT(float) y)
{
	KA_IN(float) row = x + item * C;
	double mean = 0.0, var = 0.0;
	for (ka_i64 c = 0; c < C; c++)
		mean += (double)row[c];
	mean /= (double)C;
	for (ka_i64 c = 0; c < C; c++)
		var += ((double)row[c] - mean) * ((double)row[c] - mean);
	var /= (double)C;
	double rstd = 1.0 / sqrt(var + 1e-5);
	for (ka_i64 c = 0; c < C; c++)
		y[item * C + c] = ((double)row[c] - mean) * rstd * (double)w[c] + (double)b[c];
}
