/* permute_3d reference: y[c, a, b] = x[a, b, c] (fp16, copied exactly).
 * One work item is one output row (c, a), item = c * A + a; it owns the
 * row's B outputs. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 A, ka_i64 B, ka_i64 C, KA_IN(ka_half) x, KA_OUT(ka_half) y)
{
	ka_i64 c = item / A, a = item % A;
	for (ka_i64 b = 0; b < B; b++) {
		double v = KA_LD_F16(x, (a * B + b) * C + c);
		KA_ST_F16(y, item * B + b, v);
	}
}
