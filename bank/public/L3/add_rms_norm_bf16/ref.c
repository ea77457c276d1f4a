/* add_rms_norm_bf16 reference: h = x + r (exact), y = h / sqrt(mean(h^2) + 1e-6) * w per row, in double.
 * One work item is one row (it owns C elements of each output). eps is baked
 * in: it wants a float scalar parameter once the format has them. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(ka_bf16) x, KA_IN(ka_bf16) r, KA_IN(ka_bf16) w, KA_OUT(ka_bf16) h_out,
	       KA_OUT(ka_bf16) y)
{
	ka_i64 o = item * C;
	double ss = 0.0;
	for (ka_i64 c = 0; c < C; c++) {
		double h = KA_LD_BF16(x, o + c) + KA_LD_BF16(r, o + c);
		ss += h * h;
	}
	double rs = 1.0 / sqrt(ss / (double)C + 1e-6);
	for (ka_i64 c = 0; c < C; c++) {
		double h = KA_LD_BF16(x, o + c) + KA_LD_BF16(r, o + c);
		KA_ST_BF16(h_out, o + c, h);
		KA_ST_BF16(y, o + c, h * rs * KA_LD_BF16(w, c));
	}
}
