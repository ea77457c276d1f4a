/* gemm_bias_softmax reference: Y = softmax(X @ W.T + b) along each row (dim=-1).
 * One work item is one row y[m, :], m = item. The logits are kept in the row itself between passes:
 * exact in the gold (double outputs), rounded to float on the devices. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 M, ka_i64 N, ka_i64 K, KA_IN(float) x, KA_IN(float) w, KA_IN(float) b, KA_OUT(float) y)
{
	ka_i64 m = item;
	double mx = -INFINITY;
	/* pass 1: the logits, kept in the output row (fp64 in the gold) */
	for (ka_i64 n = 0; n < N; n++) {
		double acc = 0.0; /* fp64 accumulation */
		for (ka_i64 k = 0; k < K; k++)
			acc += (double)x[m * K + k] * (double)w[n * K + k];
		double v = acc + (double)b[n];
		y[m * N + n] = v;
		mx = v > mx ? v : mx;
	}
	double s = 0.0;
	for (ka_i64 n = 0; n < N; n++)
		s += exp((double)y[m * N + n] - mx);
	for (ka_i64 n = 0; n < N; n++)
		y[m * N + n] = exp((double)y[m * N + n] - mx) / s;
}
