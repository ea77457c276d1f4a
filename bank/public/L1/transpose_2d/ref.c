/* transpose_2d reference: y[n, m] = x[m, n].
 * One work item is one output row n (it owns the row's M outputs). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, KA_IN(float) x, KA_OUT(float) y)
{
	for (ka_i64 m = 0; m < M; m++)
		y[item * M + m] = (double)x[m * N + item];
}
