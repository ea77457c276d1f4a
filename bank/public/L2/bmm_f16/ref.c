/* bmm_f16 reference: Y[z] = X[z] @ W[z] for every batch index z: X [Bt, M, K], W [Bt, K, N] (not transposed), Y [Bt, M, N].
 * One work item is one output element, item = (z * M + m) * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 Bt, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_half) x, KA_IN(ka_half) w, KA_OUT(ka_half) y)
{
	ka_i64 n = item % N, m = item / N % M, z = item / N / M;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_F16(x, (z * M + m) * K + k) * KA_LD_F16(w, z * N * K + k * N + n);
	double v = acc;
	KA_ST_F16(y, item, v);
}
