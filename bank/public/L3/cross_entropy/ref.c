/* cross_entropy reference: loss[r] = logsumexp(x[r, :]) - x[r, t[r]], in
 * double with the max subtracted. One work item is one row (one output). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 V, KA_IN(float) x, KA_IN(ka_i64) t, KA_OUT(float) loss)
{
	KA_IN(float) row = x + item * V;
	double mx = (double)row[0];
	for (ka_i64 c = 1; c < V; c++)
		mx = fmax(mx, (double)row[c]);
	double sum = 0.0;
	for (ka_i64 c = 0; c < V; c++)
		sum += exp((double)row[c] - mx);
	loss[item] = mx + log(sum) - (double)row[t[item]];
}
