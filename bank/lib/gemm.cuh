// gemm.cuh: the GEMM side of the trusted baselines (eager.cu, compiled.cu of
// the L2 tasks): cuBLAS calls with the math mode PyTorch uses per dtype, and
// the kernels that follow a GEMM in PyTorch eager (one launch per op) and in
// torch.compile's output (one fused epilogue kernel).
//
// Math modes, as PyTorch sets them (torch.backends.cuda.matmul defaults):
//   fp32       cublasSgemm / cublasSgemmStridedBatched / cublasSgemv with
//              CUBLAS_DEFAULT_MATH: full fp32, no TF32 (allow_tf32 = False);
//   fp16/bf16  cublasGemmEx / cublasGemmStridedBatchedEx with
//              CUBLAS_COMPUTE_32F: fp32 accumulation, the output rounded to
//              the input dtype once (allow_*_reduced_precision_reduction =
//              True is cuBLAS's default math mode as well).
// All matrices are row-major; the wrappers map them onto column-major cuBLAS
// (a row-major [R, C] matrix is the column-major [C, R] transpose).
//
// Launch shapes: eager's same-shape pointwise ops are TensorIterator's
// vectorized kernel (eager.cuh), its broadcast bias add the legacy
// elementwise_kernel<128, 4|2>; the compiled epilogue is `fused` (one
// element a thread, 4 a thread in 256-thread blocks) or `fused_vec`
// (Inductor's XBLOCK = 1024 layout with 16-byte vectors); `gemm_bias_lt` is
// PyTorch's addmm with a vector bias (cuBLASLt, bias epilogue), which
// torch.compile emits for `x @ w.T + b` alone.
//
// Pointwise and row kernels compute in fp32 and store the tensor's dtype, as
// PyTorch's TensorIterator kernels and Inductor's generated kernels do: in
// eager every intermediate is rounded to the dtype (it is a tensor), in the
// fused kernels only the final output is.
//
// Trusted code: it runs natively in the runner. The cuBLAS handle is created
// on the first call (a function-local static); each call binds the stream and
// a cuBLAS workspace carved out of ka_workspace, so cuBLAS allocates nothing
// while the runner captures or replays a call.
#ifndef KA_BANK_GEMM_CUH
#define KA_BANK_GEMM_CUH

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include "eager.cuh"
#include "intdiv.cuh"
#include "ka_kernel.h"

namespace kagemm {

static const size_t CUBLAS_WS_BYTES = 32u << 20; // NVIDIA's advice for Hopper
// PyTorch's cuBLASLt workspace (getCUDABlasLtWorkspaceSize):
// CUBLASLT_WORKSPACE_SIZE, default 1024 KiB on CUDA; the unified-workspace
// option only caps it at the cuBLAS workspace. gemm_and_bias (addmm with a
// vector bias) asks the heuristic for algorithms within it.
static const size_t LT_WS_BYTES = 1u << 20;
static const int EW_THREADS = 256;		 // pointwise kernels: one element a thread
static const int FUSED_PER_THREAD = 4;		 // Inductor's XBLOCK-style unrolled pointwise
static const int ROW_THREADS = 256;		 // row kernels: one block a row

// ---- dtype plumbing ------------------------------------------------------

template <class T> struct dt;
template <> struct dt<float> {
	static __device__ __forceinline__ float ld(float v) { return v; }
	static __device__ __forceinline__ float st(float v) { return v; }
	static const cudaDataType_t cuda = CUDA_R_32F;
};
template <> struct dt<__half> {
	static __device__ __forceinline__ float ld(__half v) { return __half2float(v); }
	static __device__ __forceinline__ __half st(float v) { return __float2half_rn(v); }
	static const cudaDataType_t cuda = CUDA_R_16F;
};
template <> struct dt<__nv_bfloat16> {
	static __device__ __forceinline__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
	static __device__ __forceinline__ __nv_bfloat16 st(float v) { return __float2bfloat16_rn(v); }
	static const cudaDataType_t cuda = CUDA_R_16BF;
};

// ---- context: handle, stream, workspace ----------------------------------

struct ctx {
	cublasHandle_t h;
	cudaStream_t s;
	char *scratch; // caller's intermediates
	size_t used, cap;
};

static inline size_t round256(size_t n) { return (n + 255) / 256 * 256; }

// Binds the shared handle to `stream` and takes one ka_workspace of
// scratch_bytes (the caller's intermediates, carved with alloc below) plus
// the cuBLAS workspace. Returns 0, or -1 (no handle, no workspace).
static inline int begin(ctx *c, cudaStream_t stream, size_t scratch_bytes)
{
	static cublasHandle_t handle;
	if (!handle) {
		if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
			return -1;
		if (cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)
			return -1;
	}
	c->h = handle;
	c->s = stream;
	c->cap = round256(scratch_bytes);
	c->used = 0;
	char *ws = (char *)ka_workspace(c->cap + CUBLAS_WS_BYTES);
	if (!ws)
		return -1;
	c->scratch = ws;
	if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetWorkspace(handle, ws + c->cap, CUBLAS_WS_BYTES) != CUBLAS_STATUS_SUCCESS)
		return -1;
	return 0;
}

// n elements of T from the scratch given to begin (256-byte aligned), or NULL
// when it does not fit.
template <class T> static inline T *alloc(ctx *c, size_t n)
{
	size_t b = round256(n * sizeof(T));
	if (c->used + b > c->cap)
		return NULL;
	T *p = (T *)(c->scratch + c->used);
	c->used += b;
	return p;
}

// ---- GEMM ------------------------------------------------------------------

// C[z] = alpha * A[z] @ op(B[z]) for z < batch, all row-major: A [M, K],
// C [M, N]; B is [N, K] when b_nk (torch.nn.Linear's weight, C = A @ B.T)
// and [K, N] otherwise (C = A @ B). Batch strides in elements; a stride of 0
// broadcasts that operand. batch == 1 is one plain GEMM (torch.mm), batch > 1
// one strided-batched call (torch.bmm). Returns 0 or -1.
template <class T>
static inline int gemm(ctx *c, bool b_nk, long long M, long long N, long long K, const T *A,
		       const T *B, T *C, long long batch = 1, long long sA = 0, long long sB = 0,
		       long long sC = 0, float alpha = 1.0f)
{
	// Column-major: C^T [N, M] = op(B)^T [N, K] * A^T [K, M]. Row-major A is
	// column-major A^T (ld K). Row-major B [N, K] is column-major B^T [K, N]
	// (ld K): op T gives [N, K]. Row-major B [K, N] is column-major [N, K]
	// (ld N): op N.
	cublasOperation_t ob = b_nk ? CUBLAS_OP_T : CUBLAS_OP_N;
	int ldb = (int)(b_nk ? K : N);
	const float beta = 0.0f;
	cublasStatus_t st;
	if (dt<T>::cuda == CUDA_R_32F) {
		const float *a = (const float *)A, *b = (const float *)B;
		float *cc = (float *)C;
		if (batch == 1)
			st = cublasSgemm(c->h, ob, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, b, ldb, a,
					 (int)K, &beta, cc, (int)N);
		else
			st = cublasSgemmStridedBatched(c->h, ob, CUBLAS_OP_N, (int)N, (int)M, (int)K,
						       &alpha, b, ldb, sB, a, (int)K, sA, &beta, cc,
						       (int)N, sC, (int)batch);
	} else if (batch == 1) {
		st = cublasGemmEx(c->h, ob, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B, dt<T>::cuda,
				  ldb, A, dt<T>::cuda, (int)K, &beta, C, dt<T>::cuda, (int)N,
				  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	} else {
		st = cublasGemmStridedBatchedEx(c->h, ob, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha,
						B, dt<T>::cuda, ldb, sB, A, dt<T>::cuda, (int)K, sA,
						&beta, C, dt<T>::cuda, (int)N, sC, (int)batch,
						CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	}
	return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

// y [N] = W [N, K] (row-major) @ x [K], fp32 (torch.mv / 2-D @ 1-D:
// cublasSgemv). Returns 0 or -1.
static inline int gemv_f32(ctx *c, long long N, long long K, const float *W, const float *x,
			   float *y)
{
	// Row-major W is column-major W^T [K, N] (ld K); W x = (W^T)^T x: op T.
	const float one = 1.0f, zero = 0.0f;
	return cublasSgemv(c->h, CUBLAS_OP_T, (int)K, (int)N, &one, W, (int)K, x, 1, &zero, y, 1) ==
			       CUBLAS_STATUS_SUCCESS
		       ? 0
		       : -1;
}

// ---- pointwise ops (fp32 math) ----------------------------------------------

struct op_id {
	__device__ float operator()(float v) const { return v; }
};
struct op_gelu { // exact: 0.5 v (1 + erf(v / sqrt 2))
	__device__ float operator()(float v) const
	{
		return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
	}
};
struct op_gelu_tanh { // approximate='tanh'
	__device__ float operator()(float v) const
	{
		float u = 0.79788456080286536f * (v + 0.044715f * v * v * v);
		return 0.5f * v * (1.0f + tanhf(u));
	}
};
struct op_silu {
	__device__ float operator()(float v) const { return v / (1.0f + expf(-v)); }
};
struct op_relu {
	__device__ float operator()(float v) const { return v > 0.0f ? v : 0.0f; }
};
struct op_tanh {
	__device__ float operator()(float v) const { return tanhf(v); }
};
struct op_scale {
	float s;
	__device__ float operator()(float v) const { return v * s; }
};
struct op_clamp {
	float lo, hi;
	__device__ float operator()(float v) const { return fminf(fmaxf(v, lo), hi); }
};
template <class F, class G> struct op_then { // g(f(v))
	F f;
	G g;
	__device__ float operator()(float v) const { return g(f(v)); }
};

// ---- eager: one kernel per op ----------------------------------------------
// Same-shape ops (unary, add, mul) are TensorIterator's vectorized kernel
// (eager.cuh ka::unary / ka::binary: 128 threads, one 16-byte vector a
// thread). An op with a broadcast operand (a [.., N] plus a row vector, or a
// per-row divisor) cannot vectorize: ATen's legacy elementwise_kernel<128,
// vt> (vt = 4 for 2-byte types, 2 for 4-byte ones), each thread vt elements
// 128 apart, 32-bit indices, the broadcast operand's index from a
// multiply-high division (its offset calculator), and one element's load,
// op and store before the next (no restrict: the stores may alias).

template <class T> struct legacy_vt {
	static const int v = sizeof(T) >= 4 ? 2 : 4;
};
static const int LEGACY_THREADS = 128;

// out[i] = a[i] + v[i % N] (a [.., N] plus a row vector: `t + b`)
template <class T, class X>
__global__ void __launch_bounds__(LEGACY_THREADS)
k_add_rowvec(const T *a, const T *v, T *out, X n, ka::fast_div N)
{
	X i = (X)blockIdx.x * (LEGACY_THREADS * legacy_vt<T>::v) + threadIdx.x;
#pragma unroll
	for (int j = 0; j < legacy_vt<T>::v; j++, i += LEGACY_THREADS)
		if (i < n)
			out[i] = dt<T>::st(dt<T>::ld(a[i]) + dt<T>::ld(v[N.mod(i)]));
}

// out[i] = a[i] / d[i / N] (a [M, N] divided by a per-row scalar d [M])
template <class T>
__global__ void k_div_rowscalar(const T *__restrict__ a, const T *__restrict__ d,
				T *__restrict__ out, long long n, long long N)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = dt<T>::st(dt<T>::ld(a[i]) / dt<T>::ld(d[i / N]));
}

static inline unsigned ew_blocks(long long n) { return (unsigned)((n + EW_THREADS - 1) / EW_THREADS); }
static inline int launched() { return cudaGetLastError() == cudaSuccess ? 0 : -1; }

template <class T, class Op> static inline int unary(ctx *c, const T *a, T *out, long long n, Op op)
{
	return ka::unary(a, out, n, op, c->s);
}
template <class T>
static inline int add_rowvec(ctx *c, const T *a, const T *v, T *out, long long n, long long N)
{
	const long long per = LEGACY_THREADS * legacy_vt<T>::v;
	unsigned blocks = (unsigned)((n + per - 1) / per);
	ka::fast_div d = ka::make_fast_div(N, n + per);
	if (!d.wide)
		k_add_rowvec<T, int><<<blocks, LEGACY_THREADS, 0, c->s>>>(a, v, out, (int)n, d);
	else
		k_add_rowvec<T, long long><<<blocks, LEGACY_THREADS, 0, c->s>>>(a, v, out, n, d);
	return launched();
}
struct f_add {
	__device__ float operator()(float x, float y) const { return x + y; }
};
struct f_mul {
	__device__ float operator()(float x, float y) const { return x * y; }
};
template <class T> static inline int add(ctx *c, const T *a, const T *b, T *out, long long n)
{
	return ka::binary(a, b, out, n, f_add(), c->s);
}
template <class T> static inline int mul(ctx *c, const T *a, const T *b, T *out, long long n)
{
	return ka::binary(a, b, out, n, f_mul(), c->s);
}
template <class T>
static inline int div_rowscalar(ctx *c, const T *a, const T *d, T *out, long long n, long long N)
{
	k_div_rowscalar<T><<<ew_blocks(n), EW_THREADS, 0, c->s>>>(a, d, out, n, N);
	return launched();
}

// ---- compiled: one fused epilogue after the GEMM ----------------------------

// out[i] = op(t[i] + bias[i % N]) + res[i]; bias and res may be NULL (left
// out); a second GEMM output t2 (may be NULL) multiplies: op(t) * t2 (the
// SwiGLU gate). Loads upcast to fp32, one rounding on the store.
template <class T, class Op>
__global__ void k_fused(const T *__restrict__ t, const T *__restrict__ bias,
			const T *__restrict__ res, const T *__restrict__ t2, T *__restrict__ out,
			long long n, long long N, Op op)
{
	long long base = (long long)blockIdx.x * (EW_THREADS * FUSED_PER_THREAD) + threadIdx.x;
#pragma unroll
	for (int j = 0; j < FUSED_PER_THREAD; j++) {
		long long i = base + (long long)j * EW_THREADS;
		if (i < n) {
			float v = dt<T>::ld(t[i]);
			if (bias)
				v += dt<T>::ld(bias[i % N]);
			v = op(v);
			if (t2)
				v *= dt<T>::ld(t2[i]);
			if (res)
				v += dt<T>::ld(res[i]);
			out[i] = dt<T>::st(v);
		}
	}
}

template <class T, class Op>
static inline int fused(ctx *c, const T *t, const T *bias, const T *res, const T *t2, T *out,
			long long n, long long N, Op op)
{
	const long long per_block = EW_THREADS * FUSED_PER_THREAD;
	k_fused<T, Op><<<(unsigned)((n + per_block - 1) / per_block), EW_THREADS, 0, c->s>>>(
		t, bias, res, t2, out, n, N, op);
	return launched();
}

// The same epilogue as Inductor's pointwise kernel lays it out (XBLOCK =
// 1024, num_warps = 4): 128 threads, each one 16-byte vector of every
// operand an access (two of them for fp32), the bias column from a
// multiply-high division (Triton divides by the static N), fp32 math, one
// rounding on the store. Shapes it cannot vectorize (N not a multiple of the
// vector, misaligned pointers) take `fused` above.
static const int PW_THREADS = 128, PW_BLOCK = 1024;
template <class T, int V, class Op>
__global__ void __launch_bounds__(PW_THREADS)
k_fused_vec(const T *__restrict__ t, const T *__restrict__ bias, const T *__restrict__ res,
	    const T *__restrict__ t2, T *__restrict__ out, long long n, ka::fast_div N, Op op)
{
	typedef ka::vec_t<T, V> vv;
	long long b0 = (long long)blockIdx.x * PW_BLOCK;
#pragma unroll
	for (int g = 0; g < PW_BLOCK / (PW_THREADS * V); g++) {
		long long i0 = b0 + ((long long)g * PW_THREADS + threadIdx.x) * V;
		if (i0 >= n)
			continue;
		vv a = *reinterpret_cast<const vv *>(t + i0), bb, rr, uu, o;
		if (bias)
			bb = *reinterpret_cast<const vv *>(bias + N.mod(i0));
		if (res)
			rr = *reinterpret_cast<const vv *>(res + i0);
		if (t2)
			uu = *reinterpret_cast<const vv *>(t2 + i0);
#pragma unroll
		for (int j = 0; j < V; j++) {
			float v = dt<T>::ld(a.v[j]);
			if (bias)
				v += dt<T>::ld(bb.v[j]);
			v = op(v);
			if (t2)
				v *= dt<T>::ld(uu.v[j]);
			if (res)
				v += dt<T>::ld(rr.v[j]);
			o.v[j] = dt<T>::st(v);
		}
		*reinterpret_cast<vv *>(out + i0) = o;
	}
}

template <class T, class Op>
static inline int fused_vec(ctx *c, const T *t, const T *bias, const T *res, const T *t2, T *out,
			    long long n, long long N, Op op)
{
	constexpr int V = 16 / sizeof(T);
	bool ok = N % V == 0 && ka::aligned16(t) && ka::aligned16(out) && ka::aligned16(bias) &&
		  ka::aligned16(res) && ka::aligned16(t2);
	if (!ok)
		return fused(c, t, bias, res, t2, out, n, N, op);
	k_fused_vec<T, V, Op><<<(unsigned)((n + PW_BLOCK - 1) / PW_BLOCK), PW_THREADS, 0, c->s>>>(
		t, bias, res, t2, out, n, ka::make_fast_div(N, n), op);
	return launched();
}

// ---- compiled: addmm through cuBLASLt with the bias in its epilogue ----------

// The largest power of two up to 256 dividing p (PyTorch's _getAlignment).
static inline uint32_t lt_align(const void *p)
{
	uint32_t a = 256;
	while ((uintptr_t)p % a)
		a /= 2;
	return a;
}

// C [M, N] = A [M, K] @ B.T + bias (B [N, K], bias [N], all row-major) as
// PyTorch's addmm with a vector bias runs it (gemm_and_bias): one
// cublasLtMatmul, CUBLASLT_EPILOGUE_BIAS, fp32 compute (no TF32), the first
// algorithm of cublasLtMatmulAlgoGetHeuristic under PyTorch's cuBLASLt
// workspace size (LT_WS_BYTES: 1 MiB, which bounds how far the algorithm may
// split K) and the operands' alignments. torch.compile emits that addmm for
// `x @ w.T + b` when no pointwise op follows the sum (Inductor's mm + add ->
// addmm pattern); eager runs mm then add. Where PyTorch does not take that path
// (a dimension of 1) or cuBLASLt offers no algorithm, gemm() then the bias
// added in place. Returns 0 or -1.
template <class T>
static inline int lt_bias_call(ctx *c, long long M, long long N, long long K, const T *A, const T *B,
			       const T *bias, T *C)
{
	static cublasLtHandle_t lt;
	if (!lt && cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
		return -1;
	const cublasStatus_t ok = CUBLAS_STATUS_SUCCESS;
	const cudaDataType_t ty = dt<T>::cuda;
	cublasLtMatmulDesc_t op = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
	uint64_t ws = LT_WS_BYTES;
	uint32_t al_a = lt_align(B), al_b = lt_align(A), al_c = lt_align(C);
	cublasLtMatmulHeuristicResult_t h;
	int found = 0, rc = -1;
	const float one = 1.0f, zero = 0.0f;
	// Column-major as in gemm(): D^T [N, M] = op_T(B^T [K, N]) @ A^T [K, M].
	if (cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == ok &&
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == ok &&
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) == ok &&
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) == ok &&
	    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) == ok &&
	    cublasLtMatrixLayoutCreate(&la, ty, (uint64_t)K, (uint64_t)N, K) == ok &&
	    cublasLtMatrixLayoutCreate(&lb, ty, (uint64_t)K, (uint64_t)M, K) == ok &&
	    cublasLtMatrixLayoutCreate(&lc, ty, (uint64_t)N, (uint64_t)M, N) == ok &&
	    cublasLtMatmulPreferenceCreate(&pref) == ok &&
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) == ok &&
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a) == ok &&
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b) == ok &&
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c) == ok &&
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c) == ok &&
	    cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &h, &found) == ok && found > 0 &&
	    cublasLtMatmul(lt, op, &one, B, la, A, lb, &zero, C, lc, C, lc, &h.algo, c->scratch + c->cap, ws, c->s) == ok)
		rc = 0;
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (lc)
		cublasLtMatrixLayoutDestroy(lc);
	if (lb)
		cublasLtMatrixLayoutDestroy(lb);
	if (la)
		cublasLtMatrixLayoutDestroy(la);
	if (op)
		cublasLtMatmulDescDestroy(op);
	return rc;
}

template <class T>
static inline int gemm_bias_lt(ctx *c, long long M, long long N, long long K, const T *A, const T *B,
			       const T *bias, T *C)
{
	if (M > 1 && N > 1 && K > 1 && lt_bias_call(c, M, N, K, A, B, bias, C) == 0)
		return 0;
	if (gemm(c, true, M, N, K, A, B, C))
		return -1;
	return add_rowvec(c, (const T *)C, bias, C, M * N, N); // in place: that kernel has no restrict
}

// ---- row kernels: one block of ROW_THREADS per row ---------------------------

// Block-wide reduction of v (max when MAX, else sum); every thread gets it.
template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float *sh)
{
	for (int o = 16; o > 0; o >>= 1) {
		float w = __shfl_xor_sync(0xffffffffu, v, o);
		v = MAX ? fmaxf(v, w) : v + w;
	}
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	__syncthreads(); // sh may still be read from a previous reduction
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	v = sh[0];
	for (int k = 1; k < ROW_THREADS / 32; k++)
		v = MAX ? fmaxf(v, sh[k]) : v + sh[k];
	return v;
}

template <class T>
__device__ __forceinline__ float row_at(const T *r, const T *bias, long long j)
{
	return dt<T>::ld(r[j]) + (bias ? dt<T>::ld(bias[j]) : 0.0f);
}

// y[m, :] = softmax(a[m, :] + bias) (bias NULL: none), fp32 math.
template <class T>
__global__ void __launch_bounds__(ROW_THREADS)
	k_row_softmax(const T *__restrict__ a, const T *__restrict__ bias, T *__restrict__ y, long long N)
{
	__shared__ float sh[ROW_THREADS / 32];
	const T *r = a + (long long)blockIdx.x * N;
	T *o = y + (long long)blockIdx.x * N;
	float mx = -INFINITY;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS)
		mx = fmaxf(mx, row_at(r, bias, j));
	mx = block_reduce<true>(mx, sh);
	float s = 0.0f;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS)
		s += expf(row_at(r, bias, j) - mx);
	s = block_reduce<false>(s, sh);
	float inv = 1.0f / s;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS)
		o[j] = dt<T>::st(expf(row_at(r, bias, j) - mx) * inv);
}

// y[m] = max_j (a[m, j] + bias[j]) (torch.amax(dim=-1)).
template <class T>
__global__ void __launch_bounds__(ROW_THREADS)
	k_row_max(const T *__restrict__ a, const T *__restrict__ bias, T *__restrict__ y, long long N)
{
	__shared__ float sh[ROW_THREADS / 32];
	const T *r = a + (long long)blockIdx.x * N;
	float mx = -INFINITY;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS)
		mx = fmaxf(mx, row_at(r, bias, j));
	mx = block_reduce<true>(mx, sh);
	if (threadIdx.x == 0)
		y[blockIdx.x] = dt<T>::st(mx);
}

// Eager F.normalize, first op: nrm[m] = ||a[m, :]||_2 (torch.linalg.vector_norm).
template <class T>
__global__ void __launch_bounds__(ROW_THREADS)
	k_row_norm(const T *__restrict__ a, T *__restrict__ nrm, long long N)
{
	__shared__ float sh[ROW_THREADS / 32];
	const T *r = a + (long long)blockIdx.x * N;
	float s = 0.0f;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS) {
		float v = dt<T>::ld(r[j]);
		s += v * v;
	}
	s = block_reduce<false>(s, sh);
	if (threadIdx.x == 0)
		nrm[blockIdx.x] = dt<T>::st(sqrtf(s));
}

// Fused F.normalize: y[m, :] = a[m, :] / max(||a[m, :]||_2, eps).
template <class T>
__global__ void __launch_bounds__(ROW_THREADS)
	k_row_l2normalize(const T *__restrict__ a, T *__restrict__ y, long long N, float eps)
{
	__shared__ float sh[ROW_THREADS / 32];
	const T *r = a + (long long)blockIdx.x * N;
	T *o = y + (long long)blockIdx.x * N;
	float s = 0.0f;
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS) {
		float v = dt<T>::ld(r[j]);
		s += v * v;
	}
	s = block_reduce<false>(s, sh);
	float inv = 1.0f / fmaxf(sqrtf(s), eps);
	for (long long j = threadIdx.x; j < N; j += ROW_THREADS)
		o[j] = dt<T>::st(dt<T>::ld(r[j]) * inv);
}

template <class T>
static inline int row_softmax(ctx *c, const T *a, const T *bias, T *y, long long M, long long N)
{
	k_row_softmax<T><<<(unsigned)M, ROW_THREADS, 0, c->s>>>(a, bias, y, N);
	return launched();
}
template <class T>
static inline int row_max(ctx *c, const T *a, const T *bias, T *y, long long M, long long N)
{
	k_row_max<T><<<(unsigned)M, ROW_THREADS, 0, c->s>>>(a, bias, y, N);
	return launched();
}
template <class T> static inline int row_norm(ctx *c, const T *a, T *nrm, long long M, long long N)
{
	k_row_norm<T><<<(unsigned)M, ROW_THREADS, 0, c->s>>>(a, nrm, N);
	return launched();
}
template <class T>
static inline int row_l2normalize(ctx *c, const T *a, T *y, long long M, long long N, float eps)
{
	k_row_l2normalize<T><<<(unsigned)M, ROW_THREADS, 0, c->s>>>(a, y, N, eps);
	return launched();
}

} // namespace kagemm

#endif
