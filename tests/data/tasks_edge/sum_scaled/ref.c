/* y[0] = scale * sum of x; one work item owns the one output. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, double scale, KA_IN(float) x, KA_OUT(float) y)
{
	double s = 0.0;
	for (ka_i64 n = 0; n < N; n++)
		s += (double)x[n];
	y[item] = scale * s;
}
