/* one_hot reference: y[n, c] = (idx[n] == c). One work item is one index n
 * (it owns the output row's C elements). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 C, KA_IN(ka_i64) idx, KA_OUT(ka_i64) y)
{
	ka_i64 k = idx[item];
	for (ka_i64 c = 0; c < C; c++)
		y[item * C + c] = c == k ? 1 : 0;
}
