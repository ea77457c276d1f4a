/* bmm_f16 reference: C[z] = A[z] @ B[z] for every batch index z: A [Bt, M, K], B [Bt, K, N] (not transposed), C [Bt, M, N].
 * One work item is one output element, item = (z * M + m) * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 Bt, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(ka_half) a, KA_IN(ka_half) b, KA_OUT(ka_half) c)
{
	ka_i64 n = item % N, m = item / N % M, z = item / N / M;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += KA_LD_F16(a, (z * M + m) * K + k) * KA_LD_F16(b, z * N * K + k * N + n);
	double v = acc;
	KA_ST_F16(c, item, v);
}
