/* gemv_bias_tanh reference: y = tanh(W @ x + b), a matrix-vector product (GEMV) with an epilogue: W [N, K], x [K], b [N], y [N].
 * One work item is one output element y[item]. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 K, KA_IN(float) w, KA_IN(float) x, KA_IN(float) b, KA_OUT(float) y)
{
	double acc = 0.0; /* fp64 accumulation: exact enough to be the gold */
	for (ka_i64 k = 0; k < K; k++)
		acc += (double)w[item * K + k] * (double)x[k];
	double v = acc + (double)b[item];
	y[item] = tanh(v);
}
