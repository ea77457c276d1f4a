/* y[n, :] = w[idx[n], :] */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 V, ka_i64 D, KA_IN(ka_i8) idx, KA_IN(float) w,
	       KA_OUT(float) y)
{
	ka_i64 r = idx[item];
	for (ka_i64 d = 0; d < D; d++)
		y[item * D + d] = (double)w[r * D + d];
}
