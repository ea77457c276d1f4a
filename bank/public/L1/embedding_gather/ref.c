/* embedding_gather reference: y[n, :] = weight[idx[n], :].
 * One work item is one index n (it owns the output row's D elements). The
 * task's distribution keeps idx in [0, V). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 V, ka_i64 D, KA_IN(ka_i64) idx, KA_IN(float) weight,
	       KA_OUT(float) y)
{
	KA_IN(float) row = weight + idx[item] * D;
	for (ka_i64 d = 0; d < D; d++)
		y[item * D + d] = (double)row[d];
}
