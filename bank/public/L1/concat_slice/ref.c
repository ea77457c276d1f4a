/* concat_slice reference: y[r, j] = cat(a, b)[r, S + j], j in [0, W).
 * One work item is one row r (it owns the row's W outputs). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 Ca, ka_i64 Cb, ka_i64 S, ka_i64 W, KA_IN(float) a,
	       KA_IN(float) b, KA_OUT(float) y)
{
	for (ka_i64 j = 0; j < W; j++) {
		ka_i64 c = S + j;
		y[item * W + j] = c < Ca ? (double)a[item * Ca + c] : (double)b[item * Cb + c - Ca];
	}
}
