// concat_slice, eager baseline: torch.cat([a, b], dim=-1)[:, S:S + W]
// .contiguous() as PyTorch eager runs it: two launches, the concatenation
// into a full [R, Ca + Cb] tensor (bank/lib/eager.cuh cat2_cols, one launch
// for both inputs) and the copy of the sliced view into y (strided_copy: the
// view's rows are Ca + Cb apart). The slice itself is a view (no launch).
// Trusted code: it runs natively in the runner, not through the recorder.
#include "eager.cuh"
#include "ka_kernel.h"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, Ca, Cb, S, W; inputs a [R, Ca], b [R, Cb] fp32; output y [R, W] fp32.
	long long R = a->params[0], Ca = a->params[1], Cb = a->params[2], S = a->params[3], W = a->params[4];
	float *cat = (float *)ka_workspace((size_t)(R * (Ca + Cb)) * sizeof(float));
	if (!cat)
		return -1;
	if (ka::cat2_cols((const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr, cat, R, Ca, Cb, stream))
		return -1;
	const long long d[3] = {1, R, W}, st[3] = {0, Ca + Cb, 1};
	return ka::strided_copy((const float *)cat + S, (float *)a->outputs[0].ptr, d, st, stream);
}
