/* One item per row (b, m): a weighted and a plain sum over K. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 B, ka_i64 M, ka_i64 K, KA_IN(ka_bf16) x, KA_IN(int) w,
	       KA_OUT(double) out)
{
	(void)B;
	(void)M;
	double s = 0.0, t = 0.0;
	for (ka_i64 k = 0; k < K; k++) {
		double v = KA_LD_BF16(x, item * K + k);
		s += v * (double)w[k];
		t += v;
	}
	out[2 * item] = s;
	out[2 * item + 1] = t;
}
