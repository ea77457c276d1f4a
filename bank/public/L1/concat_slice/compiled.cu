// concat_slice, compiled baseline: torch.cat([a, b], dim=-1)[:, S:S + W]
// .contiguous() as torch.compile produces it: cat, slice and copy fuse into
// one pointwise kernel over y that loads from a or from b by the column
// (bank/lib/compiled.cuh generate_spans); the concatenation is never stored.
// Triton's kernel for the static bench shape divides the index by the
// constant W (here a multiply-high: bank/lib/intdiv.cuh) and, since W, S,
// Ca and Cb are multiples of 4, loads a thread's 4 outputs as one 16-byte
// vector from a and one from b, each masked by the column, and selects.
// Where they are not, it loads element by element, as here.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "compiled.cuh"
#include "intdiv.cuh"
#include "ka_kernel.h"

struct window_f {
	const float *a, *b;
	long long Ca, Cb, S, W;
	ka::fast_div w; // i / W
	__device__ float operator()(long long i) const
	{
		long long r = w.div(i), c = S + (i - r * W);
		return c < Ca ? a[r * Ca + c] : b[r * Cb + c - Ca];
	}
	// Outputs i0 .. i0 + V - 1 (i0 % V == 0): one row, all in a or all in b
	// when W, S, Ca and Cb are multiples of V.
	template <int V> __device__ ka::vec_t<float, V> span(long long i0) const
	{
		typedef ka::vec_t<float, V> vec;
		long long r = w.div(i0), c = S + (i0 - r * W);
		return c < Ca ? *reinterpret_cast<const vec *>(a + r * Ca + c)
			      : *reinterpret_cast<const vec *>(b + r * Cb + c - Ca);
	}
};

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, Ca, Cb, S, W; inputs a [R, Ca], b [R, Cb] fp32; output y [R, W] fp32.
	long long R = a->params[0], Ca = a->params[1], Cb = a->params[2], S = a->params[3], W = a->params[4];
	window_f f{(const float *)a->inputs[0].ptr, (const float *)a->inputs[1].ptr, Ca, Cb, S, W, ka::make_fast_div(W, R * W)};
	bool spans = W % 4 == 0 && S % 4 == 0 && Ca % 4 == 0 && Cb % 4 == 0 && ka::aligned16(f.a) && ka::aligned16(f.b);
	return ka::generate_spans((float *)a->outputs[0].ptr, R * W, f, spans, stream);
}
