/* bmm_bcast_bf16 reference: Y[z] = X[z] @ W + b for every batch index z, W broadcast over the batch: X [Bt, M, K], W [K, N] (not transposed), b [N], Y [Bt, M, N].
 * One work item is one output element, item = (z * M + m) * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 Bt, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_bf16) x, KA_IN(ka_bf16) w, KA_IN(ka_bf16) b, KA_OUT(ka_bf16) y)
{
	ka_i64 n = item % N, m = item / N % M, z = item / N / M;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_BF16(x, (z * M + m) * K + k) * KA_LD_BF16(w, k * N + n);
	double v = acc;
	v += KA_LD_BF16(b, n);
	KA_ST_BF16(y, item, v);
}
