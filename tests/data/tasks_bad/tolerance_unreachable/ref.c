/* z[i] = 2*x[i] + y[i] */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(float) x, KA_IN(ka_half) y, KA_OUT(ka_half) z)
{
	(void)N;
	double v = 2.0 * (double)x[item] + KA_LD_F16(y, item);
	KA_ST_F16(z, item, v);
}
