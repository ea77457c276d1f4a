// bank/lib/norm.cuh: the row kernels of the normalisation and softmax-family
// baselines (layer_norm, rms_norm, add + rms_norm, group_norm, log_softmax,
// cross_entropy, softmax), as PyTorch 2.11 eager and torch.compile run them.
//
// Eager (ATen's CUDA kernels, described, not copied):
//   - ln_eager: vectorized_layer_norm_kernel, also behind F.rms_norm's fused
//     CUDA kernel: one block of 128 threads a row, 4-element vector loads
//     whatever the dtype, per-thread statistics (Welford for layer norm, a
//     sum of squares for RMS), a block combine, then a second read of the
//     row (from L2) writing w * (rstd * (x - mean)) (+ b) in fp32, rounded
//     once. Odd shapes (C % 4, misaligned pointers) take the same kernel
//     with scalar loads (ATen has a two-kernel fallback there; only check
//     shapes, never timed, reach it).
//   - softmax_fwd: cunn_SoftMaxForward, for rows too long for the
//     shared-memory variant (ka::softmax_rows in eager.cuh): one block a row
//     of min(C, 1024) threads (rounded up to a warp), float4 loads, three
//     passes over the row (max, sum of exp(x - max), the write), the last two
//     mostly from L2; the LogSoftMax or SoftMax epilogue.
//   - nll_rows: nll_loss_forward_no_reduce: one thread a row.
//   - row_moments: RowwiseMomentsCUDAKernel (group norm's statistics):
//     a block a row of 512 threads, scalar loads, ATen's WelfordOps (true
//     division), a block combine, mean and rstd written per row.
//   - group_norm_affine: ComputeFusedParamsCUDAKernel (a = rstd * w, b =
//     bias - a * mean per (n, c)), then TensorIterator's
//     elementwise_kernel<128, 4> for y = a * x + b with a, b broadcast along
//     each row (stride 0: no vector loads), the row from a 32-bit fast
//     division as its offset calculator does; for HW = 1 ATen's
//     GroupNorm1dForward instead, one such kernel for (x - mean) * rstd * w + b.
// Compiled (Inductor's Triton kernels, for torch.compile(dynamic=False)):
//   - ln_looped / add_rms_looped: a looped reduction with the epilogue fused:
//     one block of 256 threads (num_warps = 8) a row, RBLOCK = 2048 elements
//     an iteration (16-byte vectors, all of an iteration's loads issued
//     before their uses), the statistic per thread (Welford with a true
//     division, or a sum of squares), a block combine, then a second loop
//     reading the row again (from L2) and writing the outputs.
//   - online_rows: Inductor's online softmax for a looped reduction: one
//     pass keeping a running (max, sum of exp(x - max)) per element slot
//     (two exp an element, Triton's exp2(x * log2 e)), one float4 load a
//     thread an iteration, a block combine by shuffle trees
//     (block_all_tree, as Triton reduces across warps), then a write pass
//     (softmax, log_softmax: R0_BLOCK = 2048, 512 threads, x
//     loaded evict_last in the first pass and evict_first in the second, as
//     Inductor asks for a buffer a loop loads again), or only the loss
//     lse - x[t] (cross-entropy).
//   - rms_persistent: a persistent reduction (the row held in registers, one
//     16-byte vector a thread of 512 at C = 4096 bf16), x read once.
//   - row_moments with vector loads is the reduction kernel of a norm whose
//     epilogue Inductor emits as a separate pointwise kernel (group norm).
// Every launch helper returns 0, or -1 when the launch failed.
// Trusted code: it runs natively in the runner. Keep it small and reviewed.
#ifndef KA_BANK_NORM_CUH
#define KA_BANK_NORM_CUH

#include "compiled.cuh"
#include "intdiv.cuh"

namespace ka {

// ---- shared pieces ----------------------------------------------------------

// Triton lowers an fp32 exp(x) to ex2.approx(x * log2 e): Inductor's kernels'
// exp is exp2f(x * LOG2E).
static const float LOG2E = 1.4426950408889634f;

// The op's accumulator combined over a warp by a shuffle tree; every lane
// returns the same value.
template <typename Op> __device__ typename Op::acc_t warp_all(typename Op::acc_t a, Op op)
{
	for (int o = 16; o > 0; o >>= 1)
		a = op.combine(a, shfl(a, o));
	return a;
}

// Each warp's combined accumulator into red[warp] (blockDim.x threads, a
// multiple of 32, at most 1024); on return every warp's entry is set.
template <typename Op> __device__ void warp_partials(typename Op::acc_t a, Op op, typename Op::acc_t *red)
{
	a = warp_all(a, op);
	__syncthreads(); // red[] may still be read by a previous call
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = a;
	__syncthreads();
}

// The op's accumulator combined over the whole block (blockDim.x threads, a
// multiple of 32, at most 1024); every thread returns the same value.
template <typename Op> __device__ typename Op::acc_t block_all(typename Op::acc_t a, Op op)
{
	typedef typename Op::acc_t A;
	__shared__ A red[32];
	warp_partials(a, op, red);
	a = red[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++)
		a = op.combine(a, red[w]);
	return a;
}

// The same combined as Triton's tl.reduce and ATen's blockReduce do it: a
// shuffle tree within each warp, the warps' partials through shared memory,
// then a shuffle tree over those in every warp (log2 steps, where block_all
// combines the partials one after another in every thread: with 16 warps
// that cost more than a softmax row of 4096 itself). Op::ident() pads the
// lanes past the last warp.
template <typename Op> __device__ typename Op::acc_t block_all_tree(typename Op::acc_t a, Op op)
{
	typedef typename Op::acc_t A;
	__shared__ A red[32];
	warp_partials(a, op, red);
	int lane = threadIdx.x & 31;
	return warp_all(lane < (int)(blockDim.x >> 5) ? red[lane] : op.ident(), op);
}

// f(v, q) for each vector q = threadIdx.x + k * blockDim.x < nv of p, in
// order; the U loads of an iteration are issued before their uses (U = 1:
// ATen's plain loop; U > 1: a Triton tile of U vectors a thread).
template <int U, typename V, typename F>
__device__ __forceinline__ void row_vectors(const V *__restrict__ p, long long nv, F f)
{
	for (long long q0 = threadIdx.x; q0 < nv; q0 += (long long)U * blockDim.x) {
		V v[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long long q = q0 + (long long)u * blockDim.x;
			if (q < nv)
				v[u] = p[q];
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long long q = q0 + (long long)u * blockDim.x;
			if (q < nv)
				f(v[u], q);
		}
	}
}

// p is a multiple of `bytes` (a power of two); NULL counts as aligned.
static inline bool aligned_to(const void *p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

// ATen's layer-norm Welford step: multiplies by 1 / n (its "proper division
// is slow"); the combine is var_op's.
struct ln_welford_op : var_op {
	__device__ welford_t reduce(welford_t a, float x, long long) const
	{
		return welford_step(a, x, [](float d, float n) { return d * (1.f / n); });
	}
};

// ---- eager: layer norm and RMS norm (vectorized_layer_norm_kernel) ----------

static const int LN_THREADS = 128; // dim3(32, 4)

// y[r, :] = w * (rstd * (x[r, :] - mean)) + b, in fp32, rounded once; RMS:
// mean = 0, no b, rstd = rsqrt(mean(x^2) + eps). VEC divides C.
template <typename T, int VEC, bool RMS>
__global__ void __launch_bounds__(LN_THREADS)
ln_eager_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
		T *__restrict__ y, long long C, float eps)
{
	typedef vec_t<T, VEC> V;
	const V *xr = reinterpret_cast<const V *>(x + (long long)blockIdx.x * C);
	const V *wv = reinterpret_cast<const V *>(w), *bv = reinterpret_cast<const V *>(b);
	V *yr = reinterpret_cast<V *>(y + (long long)blockIdx.x * C);
	long long nv = C / VEC;
	float mean = 0.f, rstd;
	if (RMS) {
		float s = 0.f;
		row_vectors<1>(xr, nv, [&](const V &v, long long) {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				s += to_f(v.v[j]) * to_f(v.v[j]);
		});
		s = block_all(s, sum_op{1.f});
		rstd = rsqrtf(s / (float)C + eps);
	} else {
		ln_welford_op op{};
		welford_t a = op.ident();
		row_vectors<1>(xr, nv, [&](const V &v, long long) {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				a = op.reduce(a, to_f(v.v[j]), 0);
		});
		a = block_all(a, op);
		mean = a.mean;
		rstd = rsqrtf(a.m2 / (float)C + eps);
	}
	row_vectors<1>(xr, nv, [&](const V &v, long long q) {
		V g = wv[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			o.v[j] = from_f<T>(to_f(g.v[j]) * (rstd * (to_f(v.v[j]) - mean)) +
					   (RMS ? 0.f : to_f(bv[q].v[j])));
		yr[q] = o;
	});
}

// F.layer_norm (RMS false) or F.rms_norm (RMS true, b NULL) over rows of C.
template <typename T, bool RMS>
int ln_eager(const T *x, const T *w, const T *b, T *y, long long R, long long C, float eps, cudaStream_t s)
{
	size_t vb = 4 * sizeof(T);
	if (C % 4 == 0 && aligned_to(x, vb) && aligned_to(y, vb) && aligned_to(w, vb) && aligned_to(b, vb))
		ln_eager_kernel<T, 4, RMS><<<(unsigned)R, LN_THREADS, 0, s>>>(x, w, b, y, C, eps);
	else
		ln_eager_kernel<T, 1, RMS><<<(unsigned)R, LN_THREADS, 0, s>>>(x, w, b, y, C, eps);
	return launch_status();
}

// ---- eager: softmax over long rows (cunn_SoftMaxForward) ----------------------

// LOG: y = x - max - log(sum); else y = exp(x - max) / sum. fp32; VEC divides C.
template <int VEC, bool LOG>
__global__ void __launch_bounds__(1024)
softmax_fwd_kernel(const float *__restrict__ x, float *__restrict__ y, long long C)
{
	typedef vec_t<float, VEC> V;
	const V *xr = reinterpret_cast<const V *>(x + (long long)blockIdx.x * C);
	V *yr = reinterpret_cast<V *>(y + (long long)blockIdx.x * C);
	long long nv = C / VEC;
	float m = -INFINITY, s = 0.f;
	row_vectors<1>(xr, nv, [&](const V &v, long long) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			m = fmaxf(m, v.v[j]);
	});
	m = block_all(m, max_op());
	row_vectors<1>(xr, nv, [&](const V &v, long long) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += expf(v.v[j] - m);
	});
	s = block_all(s, sum_op{1.f});
	float ls = logf(s);
	row_vectors<1>(xr, nv, [&](const V &v, long long q) {
		V o;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			o.v[j] = LOG ? v.v[j] - m - ls : expf(v.v[j] - m) / s;
		yr[q] = o;
	});
}

template <bool LOG> int softmax_fwd(const float *x, float *y, long long R, long long C, cudaStream_t s)
{
	long long t = C < 1024 ? C : 1024;
	unsigned threads = (unsigned)((t + 31) / 32 * 32);
	if (C % 4 == 0 && aligned16(x) && aligned16(y))
		softmax_fwd_kernel<4, LOG><<<(unsigned)R, threads, 0, s>>>(x, y, C);
	else
		softmax_fwd_kernel<1, LOG><<<(unsigned)R, threads, 0, s>>>(x, y, C);
	return launch_status();
}

// ---- eager: nll_loss (reduction='none') ----------------------------------------

// loss[r] = -logp[r, t[r]] (NaN for a target outside [0, C)).
__global__ void nll_rows_kernel(const float *__restrict__ logp, const int64_t *__restrict__ t,
				float *__restrict__ loss, long long R, long long C)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= R)
		return;
	long long k = t[r];
	loss[r] = k >= 0 && k < C ? -logp[r * C + k] : NAN;
}

static inline int nll_rows(const float *logp, const int64_t *t, float *loss, long long R, long long C,
			   cudaStream_t s)
{
	nll_rows_kernel<<<grid_for(R, 256), 256, 0, s>>>(logp, t, loss, R, C);
	return launch_status();
}

// ---- row moments (group norm's statistics) -------------------------------------

// mean[r] and rstd[r] = rsqrt(var + eps) of x[r, 0:L] (biased variance):
// Welford with a true division per element (ATen's WelfordOps, Triton's
// welford_reduce), VEC-wide loads, U an iteration. VEC divides L.
template <int VEC, int U>
__global__ void __launch_bounds__(1024)
row_moments_kernel(const float *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd,
		   long long L, float eps)
{
	typedef vec_t<float, VEC> V;
	var_op op{0.f};
	welford_t a = op.ident();
	row_vectors<U>(reinterpret_cast<const V *>(x + (long long)blockIdx.x * L), L / VEC,
		       [&](const V &v, long long) {
#pragma unroll
			       for (int j = 0; j < VEC; j++)
				       a = op.reduce(a, v.v[j], 0);
		       });
	a = block_all(a, op);
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = a.mean;
		rstd[blockIdx.x] = rsqrtf(a.m2 / (float)L + eps);
	}
}

// Eager (vec false): ATen's launch, scalar loads, 512 threads (32 for rows
// shorter than 512). Compiled (vec true): float4 loads two an iteration when
// L % 4 == 0 and x is aligned, 512 threads.
static inline int row_moments(const float *x, float *mean, float *rstd, long long R, long long L, float eps,
			      bool vec, cudaStream_t s)
{
	unsigned threads = !vec && L < 512 ? 32 : 512;
	if (vec && L % 4 == 0 && aligned16(x))
		row_moments_kernel<4, 2><<<(unsigned)R, threads, 0, s>>>(x, mean, rstd, L, eps);
	else
		row_moments_kernel<1, 1><<<(unsigned)R, threads, 0, s>>>(x, mean, rstd, L, eps);
	return launch_status();
}

// ---- eager: group norm's fused parameters and affine pass -----------------------

// For nc < N * C (c = nc % C, group row ng = nc / CG): a[nc] = rstd[ng] * w[c],
// b[nc] = bias[c] - a[nc] * mean[ng].
__global__ void group_norm_params_kernel(const float *__restrict__ mean, const float *__restrict__ rstd,
					 const float *__restrict__ w, const float *__restrict__ bias,
					 float *__restrict__ a, float *__restrict__ b, long long NC,
					 long long C, long long CG)
{
	long long nc = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (nc >= NC)
		return;
	long long c = nc % C, ng = nc / CG;
	float sc = rstd[ng] * w[c];
	a[nc] = sc;
	b[nc] = -sc * mean[ng] + bias[c];
}

// y[i] = a[i / L] * x[i] + b[i / L] for i < n.
__global__ void __launch_bounds__(EW_THREADS)
row_affine_kernel(const float *__restrict__ x, const float *__restrict__ a, const float *__restrict__ b,
		  float *__restrict__ y, long long n, fast_div by_L)
{
	long long base = (long long)blockIdx.x * EW_THREADS * EW_WORK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < EW_WORK; j++) {
		long long i = base + (long long)j * EW_THREADS;
		if (i < n) {
			long long r = by_L.div(i);
			y[i] = a[r] * x[i] + b[r];
		}
	}
}

// HW = 1 (GroupNorm1dForward): y[i] = (x[i] - mean[g]) * rstd[g] * w[c] + b[c]
// for i < n = N * C, g = i / CG, c = i % C.
__global__ void __launch_bounds__(EW_THREADS)
group_norm_1d_kernel(const float *__restrict__ x, const float *__restrict__ mean, const float *__restrict__ rstd,
		     const float *__restrict__ w, const float *__restrict__ bias, float *__restrict__ y, long long n,
		     fast_div by_CG, fast_div by_C)
{
	long long base = (long long)blockIdx.x * EW_THREADS * EW_WORK + threadIdx.x;
#pragma unroll
	for (int j = 0; j < EW_WORK; j++) {
		long long i = base + (long long)j * EW_THREADS;
		if (i < n) {
			long long g = by_CG.div(i), c = by_C.mod(i);
			y[i] = (x[i] - mean[g]) * rstd[g] * w[c] + bias[c];
		}
	}
}

// F.group_norm's launches after the moments: x [N, C, HW], G groups of CG = C
// / G channels, mean/rstd [N * G]; ab: scratch of 2 * N * C floats.
static inline int group_norm_affine(const float *x, const float *mean, const float *rstd, const float *w,
				    const float *bias, float *ab, float *y, long long N, long long C,
				    long long CG, long long HW, cudaStream_t s)
{
	long long NC = N * C, n = NC * HW;
	unsigned blocks = (unsigned)((n + EW_THREADS * EW_WORK - 1) / (EW_THREADS * EW_WORK));
	if (HW == 1) {
		group_norm_1d_kernel<<<blocks, EW_THREADS, 0, s>>>(x, mean, rstd, w, bias, y, n, make_fast_div(CG, n),
								   make_fast_div(C, n));
		return launch_status();
	}
	group_norm_params_kernel<<<grid_for(NC, 256), 256, 0, s>>>(mean, rstd, w, bias, ab, ab + NC, NC, C, CG);
	row_affine_kernel<<<blocks, EW_THREADS, 0, s>>>(x, ab, ab + NC, y, n, make_fast_div(HW, n));
	return launch_status();
}

// ---- compiled: looped reductions with their epilogue -------------------------------

static const int LOOP_THREADS = 256; // num_warps = 8

// y = (x - mean) * rstd * w + b per row (fp32 layer norm); VEC divides C.
template <int VEC, int U>
__global__ void __launch_bounds__(LOOP_THREADS)
ln_looped_kernel(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
		 float *__restrict__ y, long long C, float eps)
{
	typedef vec_t<float, VEC> V;
	const V *xr = reinterpret_cast<const V *>(x + (long long)blockIdx.x * C);
	const V *wv = reinterpret_cast<const V *>(w), *bv = reinterpret_cast<const V *>(b);
	V *yr = reinterpret_cast<V *>(y + (long long)blockIdx.x * C);
	long long nv = C / VEC;
	var_op op{0.f};
	welford_t a = op.ident();
	row_vectors<U>(xr, nv, [&](const V &v, long long) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			a = op.reduce(a, v.v[j], 0);
	});
	a = block_all(a, op);
	float mean = a.mean, rstd = rsqrtf(a.m2 / (float)C + eps);
	row_vectors<U>(xr, nv, [&](const V &v, long long q) {
		V g = wv[q], h = bv[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			o.v[j] = (v.v[j] - mean) * rstd * g.v[j] + h.v[j];
		yr[q] = o;
	});
}

static inline int ln_looped(const float *x, const float *w, const float *b, float *y, long long R, long long C,
			    float eps, cudaStream_t s)
{
	if (C % 4 == 0 && aligned16(x) && aligned16(y) && aligned16(w) && aligned16(b))
		ln_looped_kernel<4, 2><<<(unsigned)R, LOOP_THREADS, 0, s>>>(x, w, b, y, C, eps);
	else
		ln_looped_kernel<1, 1><<<(unsigned)R, LOOP_THREADS, 0, s>>>(x, w, b, y, C, eps);
	return launch_status();
}

// h = x + r rounded to T (an output), y = h * rsqrt(mean(h^2) + eps) * w,
// rounded once. The second loop reads x and r again and recomputes h
// (bit-identical), as Inductor reloads its inputs. VEC divides C.
template <typename T, int VEC>
__global__ void __launch_bounds__(LOOP_THREADS)
add_rms_looped_kernel(const T *__restrict__ x, const T *__restrict__ r, const T *__restrict__ w,
		      T *__restrict__ h, T *__restrict__ y, long long C, float eps)
{
	typedef vec_t<T, VEC> V;
	long long off = (long long)blockIdx.x * C, nv = C / VEC;
	const V *xr = reinterpret_cast<const V *>(x + off), *rr = reinterpret_cast<const V *>(r + off);
	const V *wv = reinterpret_cast<const V *>(w);
	V *hr = reinterpret_cast<V *>(h + off), *yr = reinterpret_cast<V *>(y + off);
	float s = 0.f;
	for (long long q = threadIdx.x; q < nv; q += LOOP_THREADS) {
		V a = xr[q], b = rr[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			o.v[j] = from_f<T>(to_f(a.v[j]) + to_f(b.v[j]));
			s += to_f(o.v[j]) * to_f(o.v[j]);
		}
		hr[q] = o;
	}
	float rstd = rsqrtf(block_all(s, sum_op{1.f}) / (float)C + eps);
	for (long long q = threadIdx.x; q < nv; q += LOOP_THREADS) {
		V a = xr[q], b = rr[q], g = wv[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			float hv = to_f(from_f<T>(to_f(a.v[j]) + to_f(b.v[j])));
			o.v[j] = from_f<T>(hv * rstd * to_f(g.v[j]));
		}
		yr[q] = o;
	}
}

template <typename T>
int add_rms_looped(const T *x, const T *r, const T *w, T *h, T *y, long long R, long long C, float eps,
		   cudaStream_t s)
{
	constexpr int V = 16 / sizeof(T);
	if (C % V == 0 && aligned16(x) && aligned16(r) && aligned16(w) && aligned16(h) && aligned16(y))
		add_rms_looped_kernel<T, V><<<(unsigned)R, LOOP_THREADS, 0, s>>>(x, r, w, h, y, C, eps);
	else
		add_rms_looped_kernel<T, 1><<<(unsigned)R, LOOP_THREADS, 0, s>>>(x, r, w, h, y, C, eps);
	return launch_status();
}

// ---- compiled: online softmax family ------------------------------------------------

enum online_kind { ONLINE_SOFTMAX, ONLINE_LOG_SOFTMAX, ONLINE_XENT };

// Triton's tl.load(..., eviction_policy=...) on sm_80 and later: an L1
// eviction priority plus an L2 cache hint from createpolicy.fractional
// (fraction 1.0). Inductor asks evict_last for a load in a reduction loop whose
// buffer the kernel loads again later, evict_first for its last load
// (codegen/triton.py, load: decide_later). LAST: evict_last, else evict_first.
template <bool LAST, int VEC> __device__ __forceinline__ vec_t<float, VEC> ld_evict(const vec_t<float, VEC> *p)
{
	static_assert(VEC == 4 || VEC == 1, "float4 or float");
#ifdef KA_CUDA_EMU
	// The CPU emulation harness (tools/cuda_emu, docs/cuda-emu.md) has no
	// PTX: the same load without the cache policy. nvcc never defines
	// KA_CUDA_EMU, so the device code below is what the GPU runs.
	return *p;
#else
	vec_t<float, VEC> v;
	unsigned long long pol;
	if (LAST)
		asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
	else
		asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
	if constexpr (VEC == 4) {
		if (LAST)
			asm("ld.global.L1::evict_last.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
			    : "=f"(v.v[0]), "=f"(v.v[1]), "=f"(v.v[2]), "=f"(v.v[3])
			    : "l"(p), "l"(pol));
		else
			asm("ld.global.L1::evict_first.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
			    : "=f"(v.v[0]), "=f"(v.v[1]), "=f"(v.v[2]), "=f"(v.v[3])
			    : "l"(p), "l"(pol));
	} else {
		if (LAST)
			asm("ld.global.L1::evict_last.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v.v[0]) : "l"(p), "l"(pol));
		else
			asm("ld.global.L1::evict_first.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v.v[0]) : "l"(p), "l"(pol));
	}
	return v;
#endif
}

// One pass keeping a running (max m, sum s of exp(x - m)) per element slot of
// a thread (Triton's per-element accumulators of the RBLOCK tile: two exp an
// element), the slots and the block combined, then: softmax y = exp(x - m) /
// s; log_softmax y = x - m - log(s); cross-entropy loss[row] = m + log(s) -
// x[t[row]] (no write pass; NaN for a target outside [0, C)). fp32; VEC
// divides C; U vector loads a thread an iteration, all issued before their
// uses, each into its own VEC slots (RBLOCK = U x VEC x threads). Softmax and
// log_softmax load x with Inductor's eviction policies when HINT: evict_last
// in the first loop (x is loaded again), evict_first in the second (its last
// use); plain loads otherwise.
template <int VEC, int U, int KIND, bool HINT = KIND != ONLINE_XENT>
__global__ void __launch_bounds__(1024)
online_rows_kernel(const float *__restrict__ x, float *__restrict__ y, const int64_t *__restrict__ t,
		   long long C)
{
	typedef vec_t<float, VEC> V;
	const float *row = x + (long long)blockIdx.x * C;
	const V *xr = reinterpret_cast<const V *>(row);
	float m[U * VEC], s[U * VEC];
#pragma unroll
	for (int j = 0; j < U * VEC; j++) {
		m[j] = -INFINITY;
		s[j] = 0.f;
	}
	long long nv = C / VEC;
	for (long long q0 = threadIdx.x; q0 < nv; q0 += (long long)U * blockDim.x) {
		V v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			if (q0 + (long long)u * blockDim.x < nv)
				v[u] = HINT ? ld_evict<true, VEC>(xr + q0 + (long long)u * blockDim.x)
					    : xr[q0 + (long long)u * blockDim.x];
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (q0 + (long long)u * blockDim.x >= nv)
				break;
#pragma unroll
			for (int j = 0; j < VEC; j++) {
				int k = u * VEC + j;
				float mn = fmaxf(m[k], v[u].v[j]);
				if (mn != -INFINITY) { // else nothing but -inf yet: (m, s) stays (-inf, 0)
					s[k] = s[k] * exp2f((m[k] - mn) * LOG2E) + exp2f((v[u].v[j] - mn) * LOG2E);
					m[k] = mn;
				}
			}
		}
	}
	online_softmax_op op;
	online_t a{m[0], s[0]};
#pragma unroll
	for (int j = 1; j < U * VEC; j++)
		a = op.combine(a, online_t{m[j], s[j]});
	a = block_all_tree(a, op);
	if (KIND == ONLINE_XENT) {
		if (threadIdx.x == 0) {
			long long k = t[blockIdx.x];
			y[blockIdx.x] = k >= 0 && k < C ? a.m + logf(a.s) - row[k] : NAN;
		}
		return;
	}
	float ls = logf(a.s);
	V *yr = reinterpret_cast<V *>(y + (long long)blockIdx.x * C);
	for (long long q = threadIdx.x; q < nv; q += blockDim.x) {
		V v = HINT ? ld_evict<false, VEC>(xr + q) : xr[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			o.v[j] = KIND == ONLINE_LOG_SOFTMAX ? v.v[j] - a.m - ls : exp2f((v.v[j] - a.m) * LOG2E) / a.s;
		yr[q] = o;
	}
}

// Softmax and log_softmax: Inductor's config for an INNER looped reduction
// (triton_heuristics: XBLOCK = 1, R0_BLOCK = min(next_pow2(C), 2048),
// num_warps = R0_BLOCK / 128 between 2 and 16): 512 threads from C = 2048 on,
// one float4 a thread an iteration (R0_BLOCK / threads = 4). Cross-entropy
// has no second pass: Inductor's looped reduction as it launches it at
// cross_entropy's benchmark shape (tools/torch_kernels.py --launches on the
// H200: a block of 512 threads a row), two float4 a thread an iteration.
// y: [R, C], or loss [R] with t. threads: a block's threads where a task's
// notes say why it differs from that rule (0: the rule).
template <int KIND>
int online_rows(const float *x, float *y, const int64_t *t, long long R, long long C, cudaStream_t s,
		unsigned threads = 0)
{
	if (!threads && KIND == ONLINE_XENT)
		threads = 512;
	if (!threads) {
		long long r0 = 1;
		while (r0 < C && r0 < 2048)
			r0 <<= 1;
		threads = (unsigned)(r0 / 128 < 2 ? 2 : r0 / 128) * 32;
	}
	bool vec = C % 4 == 0 && aligned16(x) && (KIND == ONLINE_XENT || aligned16(y));
	if (KIND == ONLINE_XENT && vec)
		online_rows_kernel<4, 2, KIND><<<(unsigned)R, threads, 0, s>>>(x, y, t, C);
	else if (vec)
		online_rows_kernel<4, 1, KIND><<<(unsigned)R, threads, 0, s>>>(x, y, t, C);
	else
		online_rows_kernel<1, 1, KIND><<<(unsigned)R, threads, 0, s>>>(x, y, t, C);
	return launch_status();
}

// ---- compiled: RMS norm as one persistent reduction -------------------------------

static const int PERSIST_THREADS = 512; // num_warps = 16

// y = x * rsqrt(mean(x^2) + eps) * w per row, fp32, rounded once. PER > 0:
// the row held in registers, PER vectors a thread (one read of x: Inductor's
// persistent reduction); PER = 0: rows too long for that, read twice. VEC
// divides C.
template <typename T, int VEC, int PER>
__global__ void __launch_bounds__(PERSIST_THREADS)
rms_rows_kernel(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, long long C, float eps)
{
	typedef vec_t<T, VEC> V;
	const V *xr = reinterpret_cast<const V *>(x + (long long)blockIdx.x * C), *wv = reinterpret_cast<const V *>(w);
	V *yr = reinterpret_cast<V *>(y + (long long)blockIdx.x * C);
	long long nv = C / VEC;
	float s = 0.f;
	auto sum_sq = [&](const V &v, long long) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += to_f(v.v[j]) * to_f(v.v[j]);
	};
	auto write = [&](const V &v, long long q, float rstd) {
		V g = wv[q], o;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			o.v[j] = from_f<T>(to_f(v.v[j]) * rstd * to_f(g.v[j]));
		yr[q] = o;
	};
	if (PER > 0) {
		V v[PER > 0 ? PER : 1];
#pragma unroll
		for (int k = 0; k < PER; k++) {
			long long q = threadIdx.x + (long long)k * PERSIST_THREADS;
			if (q < nv) {
				v[k] = xr[q];
				sum_sq(v[k], q);
			}
		}
		float rstd = rsqrtf(block_all(s, sum_op{1.f}) / (float)C + eps);
#pragma unroll
		for (int k = 0; k < PER; k++) {
			long long q = threadIdx.x + (long long)k * PERSIST_THREADS;
			if (q < nv)
				write(v[k], q, rstd);
		}
	} else {
		row_vectors<1>(xr, nv, sum_sq);
		float rstd = rsqrtf(block_all(s, sum_op{1.f}) / (float)C + eps);
		row_vectors<1>(xr, nv, [&](const V &v, long long q) { write(v, q, rstd); });
	}
}

template <typename T, int VEC>
int rms_rows_launch(const T *x, const T *w, T *y, long long R, long long C, float eps, cudaStream_t s)
{
	long long per = (C / VEC + PERSIST_THREADS - 1) / PERSIST_THREADS;
	unsigned g = (unsigned)R;
	if (per <= 1)
		rms_rows_kernel<T, VEC, 1><<<g, PERSIST_THREADS, 0, s>>>(x, w, y, C, eps);
	else if (per <= 4)
		rms_rows_kernel<T, VEC, 4><<<g, PERSIST_THREADS, 0, s>>>(x, w, y, C, eps);
	else
		rms_rows_kernel<T, VEC, 0><<<g, PERSIST_THREADS, 0, s>>>(x, w, y, C, eps);
	return launch_status();
}

// F.rms_norm over rows of C (torch.compile's form).
template <typename T>
int rms_persistent(const T *x, const T *w, T *y, long long R, long long C, float eps, cudaStream_t s)
{
	constexpr int V = 16 / sizeof(T);
	if (C % V == 0 && aligned16(x) && aligned16(w) && aligned16(y))
		return rms_rows_launch<T, V>(x, w, y, R, C, eps, s);
	return rms_rows_launch<T, 1>(x, w, y, R, C, eps, s);
}

} // namespace ka

#endif
