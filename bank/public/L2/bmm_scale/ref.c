/* bmm_scale reference: S[z] = (Q[z] @ KEY[z].T) * 0.125 for every batch index z (attention scores): Q [Bt, M, K], KEY [Bt, N, K], S [Bt, M, N].
 * One work item is one output element, item = (z * M + m) * N + n. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 Bt, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(float) q, KA_IN(float) key, KA_OUT(float) s)
{
	ka_i64 n = item % N, m = item / N % M, z = item / N / M;
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += (double)q[(z * M + m) * K + k] * (double)key[z * N * K + n * K + k];
	double v = acc;
	v = v * 0.125;
	s[item] = v;
}
