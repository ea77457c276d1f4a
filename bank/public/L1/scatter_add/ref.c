/* scatter_add reference: y[v, :] = sum of src[n, :] over the n with
 * idx[n] == v (zero if there is none). One work item is one output row v (it
 * owns the row's D outputs): it scans every index once and adds the matching
 * source rows in index order, accumulating in its own outputs: doubles in
 * the gold; the float outputs of the OpenCL/CUDA reference kernels make that
 * build an fp32 sum in index order, one of the orders the task allows (a
 * double accumulator per column would cost a scan of idx per block of
 * columns). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 V, ka_i64 D, KA_IN(ka_i64) idx, KA_IN(float) src,
	       KA_OUT(float) y)
{
	for (ka_i64 d = 0; d < D; d++)
		y[item * D + d] = 0.0;
	for (ka_i64 n = 0; n < N; n++) {
		if (idx[n] != item)
			continue;
		for (ka_i64 d = 0; d < D; d++)
			y[item * D + d] += (double)src[n * D + d];
	}
}
