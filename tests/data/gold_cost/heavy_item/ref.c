/* y[i] = (1/K) * sum over k < K of (x[i] + k/K), summed term by term: the
 * work of an item is K additions although the result has a closed form. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 K, KA_IN(float) x, KA_OUT(float) y)
{
	(void)N;
	double xi = (double)x[item], s = 0.0;
	for (ka_i64 k = 0; k < K; k++)
		s += xi + (double)k / (double)K;
	y[item] = s / (double)K;
}
