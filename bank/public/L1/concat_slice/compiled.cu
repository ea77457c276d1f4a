// concat_slice, compiled baseline: torch.cat([a, b], dim=-1)[:, S:S + W]
// .contiguous() as torch.compile produces it: cat, slice and copy fuse into
// one pointwise kernel over y that loads from a or from b by the column
// (bank/lib/compiled.cuh generate); the concatenation is never stored.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "ka_kernel.h"

struct window_f {
	const float *a, *b;
	long long Ca, Cb, S, W;
	__device__ float operator()(long long i) const
	{
		long long r = i / W, c = S + i % W;
		return c < Ca ? a[r * Ca + c] : b[r * Cb + c - Ca];
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, Ca, Cb, S, W; inputs a [R, Ca], b [R, Cb] fp32; output y [R, W] fp32.
	long long R = a->params[0], Ca = a->params[1], Cb = a->params[2], S = a->params[3], W = a->params[4];
	window_f f{(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr, Ca, Cb, S, W};
	return ka::generate((float *)a->outputs[0].ptr, R * W, f, stream);
}
