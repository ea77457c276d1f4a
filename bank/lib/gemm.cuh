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

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include "ka_kernel.h"

namespace kagemm {

static const size_t CUBLAS_WS_BYTES = 32u << 20; // NVIDIA's advice for Hopper
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

template <class T, class Op>
__global__ void k_unary(const T *__restrict__ a, T *__restrict__ out, long long n, Op op)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = dt<T>::st(op(dt<T>::ld(a[i])));
}

// out[i] = a[i] + v[i % N] (a [.., N] plus a row vector: `t + b`)
template <class T>
__global__ void k_add_rowvec(const T *__restrict__ a, const T *__restrict__ v, T *__restrict__ out,
			     long long n, long long N)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = dt<T>::st(dt<T>::ld(a[i]) + dt<T>::ld(v[i % N]));
}

// out[i] = a[i] (+|*) b[i]
template <class T, bool MUL>
__global__ void k_binary(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ out,
			 long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float x = dt<T>::ld(a[i]), y = dt<T>::ld(b[i]);
		out[i] = dt<T>::st(MUL ? x * y : x + y);
	}
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
	k_unary<T, Op><<<ew_blocks(n), EW_THREADS, 0, c->s>>>(a, out, n, op);
	return launched();
}
template <class T>
static inline int add_rowvec(ctx *c, const T *a, const T *v, T *out, long long n, long long N)
{
	k_add_rowvec<T><<<ew_blocks(n), EW_THREADS, 0, c->s>>>(a, v, out, n, N);
	return launched();
}
template <class T> static inline int add(ctx *c, const T *a, const T *b, T *out, long long n)
{
	k_binary<T, false><<<ew_blocks(n), EW_THREADS, 0, c->s>>>(a, b, out, n);
	return launched();
}
template <class T> static inline int mul(ctx *c, const T *a, const T *b, T *out, long long n)
{
	k_binary<T, true><<<ew_blocks(n), EW_THREADS, 0, c->s>>>(a, b, out, n);
	return launched();
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
