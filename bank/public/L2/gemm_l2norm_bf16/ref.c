/* gemm_l2norm_bf16 reference: Y = normalize(X @ W.T) along each row: Y[m, :] = T[m, :] / max(||T[m, :]||_2, 1e-12), T = X @ W.T.
 * One work item is one row y[m, :], m = item; the dot products are computed twice (norm, then output). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_bf16) x, KA_IN(ka_bf16) w, KA_OUT(ka_bf16) y)
{
	ka_i64 m = item;
	double ss = 0.0;
	for (ka_i64 n = 0; n < N; n++) {
		double acc = 0.0; /* fp64 accumulation */
		for (ka_i64 k = 0; k < K; k++)
			acc += KA_LD_BF16(x, m * K + k) * KA_LD_BF16(w, n * K + k);
		ss += acc * acc;
	}
	double nrm = sqrt(ss);
	double den = nrm > 1e-12 ? nrm : 1e-12;
	for (ka_i64 n = 0; n < N; n++) {
		double acc = 0.0; /* fp64 accumulation */
		for (ka_i64 k = 0; k < K; k++)
			acc += KA_LD_BF16(x, m * K + k) * KA_LD_BF16(w, n * K + k);
		KA_ST_BF16(y, m * N + n, acc / den);
	}
}
