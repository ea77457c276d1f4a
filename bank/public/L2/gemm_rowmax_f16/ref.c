/* gemm_rowmax_f16 reference: y[m] = max over n of (X @ W.T + b)[m, n], the row maximum: y [M].
 * One work item is one row: y[m], m = item. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_half) x, KA_IN(ka_half) w, KA_IN(ka_half) b, KA_OUT(ka_half) y)
{
	ka_i64 m = item;
	double mx = -INFINITY;
	for (ka_i64 n = 0; n < N; n++) {
		double acc = 0.0; /* fp64 accumulation */
		for (ka_i64 k = 0; k < K; k++)
			acc += KA_LD_F16(x, m * K + k) * KA_LD_F16(w, n * K + k);
		double v = acc + KA_LD_F16(b, n);
		mx = v > mx ? v : mx;
	}
	KA_ST_F16(y, item, mx);
}
