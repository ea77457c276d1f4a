/* y[g, m] = x[g, m] - mean over m' of x[g, m']: item g is the whole group. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 G, ka_i64 M, KA_IN(float) x, KA_OUT(float) y)
{
	(void)G;
	double s = 0.0;
	for (ka_i64 m = 0; m < M; m++)
		s += (double)x[item * M + m];
	double mean = s / (double)M;
	for (ka_i64 m = 0; m < M; m++)
		y[item * M + m] = (double)x[item * M + m] - mean;
}
