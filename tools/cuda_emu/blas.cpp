// tools/cuda_emu/blas.cpp: the cuBLAS and cuBLASLt calls of the bank's
// trusted code, computed on the CPU (docs/cuda-emu.md). Same column-major
// operand conventions, argument checks and status codes as cuBLAS for the
// cases used: fp32 accumulation (fmaf in k order, as one output's thread of a
// GEMM kernel without split-K accumulates), alpha and beta as host floats,
// the output rounded once to its type (round to nearest even); beta = 0
// never reads C. CUBLAS_COMPUTE_32F_FAST_TF32 and the TF32 math mode round
// the operands to TF32, the _FAST_16F/_16BF compute types to those types.
// Every operand's extent must lie in one device allocation and every call
// must be on ka_launch's stream with a workspace set, as the runner needs.
// What it does not reproduce: cuBLAS's own algorithms, tile orders and
// split-K (its rounding differs by a few ulps), its workspace use.
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "emu_rt.h"

using namespace ka_emu;

struct cublasContext {
	cudaStream_t stream;
	bool stream_set, ws_set;
	cublasMath_t math;
};
struct cublasLtContext {
	int unused;
};

namespace
{

const char *type_name(cudaDataType t)
{
	switch (t) {
	case CUDA_R_32F: return "fp32";
	case CUDA_R_16F: return "fp16";
	case CUDA_R_16BF: return "bf16";
	default: return "another type";
	}
}

size_t type_size(cudaDataType t)
{
	return t == CUDA_R_32F ? 4 : 2;
}
bool type_ok(cudaDataType t)
{
	return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF;
}

float load(const void *p, cudaDataType t, size_t i)
{
	if (t == CUDA_R_32F)
		return ((const float *)p)[i];
	if (t == CUDA_R_16F)
		return __half2float(((const __half *)p)[i]);
	return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

void store(void *p, cudaDataType t, size_t i, float v)
{
	if (t == CUDA_R_32F)
		((float *)p)[i] = v;
	else if (t == CUDA_R_16F)
		((__half *)p)[i] = __float2half_rn(v);
	else
		((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
}

// What the compute type or math mode does to an operand before the products.
enum rounding { R_NONE, R_TF32, R_16F, R_16BF };
float round_op(float v, rounding r)
{
	switch (r) {
	case R_TF32: { // round to nearest even at 10 mantissa bits
		uint32_t u;
		memcpy(&u, &v, 4);
		if ((u & 0x7f800000u) != 0x7f800000u)
			u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
		memcpy(&v, &u, 4);
		return v;
	}
	case R_16F: return __half2float(__float2half_rn(v));
	case R_16BF: return __bfloat162float(__float2bfloat16_rn(v));
	default: return v;
	}
}

// One column-major matrix operand: rows x cols, leading dimension ld, batch
// stride; op T reads it transposed.
struct mat {
	const void *p;
	cudaDataType t;
	long long rows, cols, ld, stride;
};

// [first, last] bytes an operand touches over batch matrices must lie in one
// allocation.
bool in_bounds(const char *api, const char *which, const mat &m, long long batch)
{
	if (m.rows == 0 || m.cols == 0 || batch == 0)
		return true;
	if (m.stride < 0) {
		error("%s: operand %s: a negative batch stride", api, which);
		return false;
	}
	size_t last = (size_t)((m.cols - 1) * m.ld + m.rows - 1 + (batch - 1) * m.stride);
	size_t bytes = (last + 1) * type_size(m.t);
	if (!m.p || !find_allocation(m.p, bytes)) {
		char where[256];
		describe_address(m.p, where, sizeof where);
		error("%s: operand %s (%lld x %lld, ld %lld, %lld batches of stride %lld, %s) "
		      "spans %zu bytes from %s, "
		      "not inside one device allocation",
		      api, which, m.rows, m.cols, m.ld, batch, m.stride, type_name(m.t), bytes,
		      where);
		return false;
	}
	return true;
}

bool check_handle(const char *api, cublasContext *h)
{
	if (!h) {
		error("%s: no handle", api);
		return false;
	}
	if (!h->stream_set || h->stream != call_stream()) {
		error("%s: the handle's stream is not ka_launch's (cublasSetStream)", api);
		return false;
	}
	if (!h->ws_set) {
		error("%s: no workspace set (cublasSetWorkspace): cuBLAS would allocate one", api);
		return false;
	}
	return true;
}

// The tile acc[jj * mi + ii] += a[q * m + i0 + ii] * b[jj * k + q] for
// q < k (each element in k order, one fmaf a step), ii < mi, jj < nj.
// Cloned for x86-64-v3, where fmaf is one instruction and the loop over ii
// vectorizes; the default clone calls libm's fmaf.
#if defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void dot_tile(float *acc, const float *a, const float *b, long long m, long long k, long long i0, long long mi,
	      long long nj)
{
	for (long long q = 0; q < k; q++) {
		const float *aq = a + q * m + i0;
		for (long long jj = 0; jj < nj; jj++) {
			float bq = b[jj * k + q], *c = acc + jj * mi;
			for (long long ii = 0; ii < mi; ii++)
				c[ii] = fmaf(aq[ii], bq, c[ii]);
		}
	}
}

// C[z] = alpha op(A[z]) op(B[z]) + beta C[z] for z < batch, m x n x k,
// fp32 accumulation in k order; then epi(v, row) when given (cuBLASLt's
// epilogue). The operands are read once into fp32 after the compute type's
// rounding (op(A) k-major, op(B) column-major), then computed in tiles of
// 256 rows by 64 columns.
template <class E>
void gemm_core(bool ta, bool tb, long long m, long long n, long long k, float alpha, const mat &A,
	       const mat &B, float beta, const mat &C, void *D, const mat &Dm, long long batch,
	       rounding r, E epi)
{
	const long long MI = 256, NJ = 64;
	stats.blas_calls++;
	std::vector<float> a((size_t)(m * k)), b((size_t)(n * k)), acc((size_t)(MI * NJ));
	for (long long z = 0; z < batch; z++) {
		for (long long q = 0; q < k; q++)
			for (long long i = 0; i < m; i++)
				a[(size_t)(q * m + i)] =
					round_op(load(A.p, A.t,
						      (size_t)(z * A.stride +
							       (ta ? q + i * A.ld : i + q * A.ld))),
						 r);
		for (long long j = 0; j < n; j++)
			for (long long q = 0; q < k; q++)
				b[(size_t)(j * k + q)] =
					round_op(load(B.p, B.t,
						      (size_t)(z * B.stride +
							       (tb ? j + q * B.ld : q + j * B.ld))),
						 r);
		for (long long j0 = 0; j0 < n; j0 += NJ)
			for (long long i0 = 0; i0 < m; i0 += MI) {
				long long nj = n - j0 < NJ ? n - j0 : NJ,
					  mi = m - i0 < MI ? m - i0 : MI;
				std::fill(acc.begin(), acc.end(), 0.f);
				dot_tile(acc.data(), a.data(), b.data() + j0 * k, m, k, i0, mi, nj);
				for (long long jj = 0; jj < nj; jj++)
					for (long long ii = 0; ii < mi; ii++) {
						long long i = i0 + ii, j = j0 + jj;
						float v = alpha * acc[(size_t)(jj * mi + ii)];
						if (beta != 0.f)
							v += beta * load(C.p, C.t,
									 (size_t)(z * C.stride + i +
										  j * C.ld));
						store(D, Dm.t,
						      (size_t)(z * Dm.stride + i + j * Dm.ld),
						      epi(v, i));
					}
			}
	}
}

struct no_epi {
	float operator()(float v, long long) const
	{
		return v;
	}
};

// The argument checks cuBLAS makes (CUBLAS_STATUS_INVALID_VALUE), then the
// operands' extents.
cublasStatus_t gemm_checked(const char *api, cublasContext *h, cublasOperation_t ta,
			    cublasOperation_t tb, int m, int n, int k, const float *alpha,
			    const void *A, cudaDataType at, int lda, long long sa, const void *B,
			    cudaDataType bt, int ldb, long long sb, const float *beta, void *C,
			    cudaDataType ct, int ldc, long long sc, int batch, rounding r)
{
	if (!check_handle(api, h))
		return CUBLAS_STATUS_INVALID_VALUE;
	bool tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
	if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) || (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T)) {
		error("%s: an operation other than N or T", api);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	if (m < 0 || n < 0 || k < 0 || batch < 0 ||
	    lda < (tA ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) ||
	    ldb < (tB ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) || ldc < (m > 1 ? m : 1)) {
		error("%s: invalid sizes m %d n %d k %d lda %d ldb %d ldc %d batch %d", api, m, n,
		      k, lda, ldb, ldc, batch);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	if (!alpha || !beta)
		return CUBLAS_STATUS_INVALID_VALUE;
	mat Am = {A, at, tA ? k : m, tA ? m : k, lda, sa},
	    Bm = {B, bt, tB ? n : k, tB ? k : n, ldb, sb};
	mat Cm = {C, ct, m, n, ldc, sc};
	if (k > 0 && *alpha != 0.f &&
	    (!in_bounds(api, "A", Am, batch) || !in_bounds(api, "B", Bm, batch)))
		return CUBLAS_STATUS_EXECUTION_FAILED;
	if (!in_bounds(api, "C", Cm, batch))
		return CUBLAS_STATUS_EXECUTION_FAILED;
	gemm_core(tA, tB, m, n, k, *alpha, Am, Bm, *beta, Cm, C, Cm, batch, r, no_epi());
	return CUBLAS_STATUS_SUCCESS;
}

// The compute types of cublasGemmEx with fp32 scalars, and what they round.
bool compute_32f(cublasComputeType_t c, rounding *r)
{
	switch (c) {
	case CUBLAS_COMPUTE_32F:
	case CUBLAS_COMPUTE_32F_PEDANTIC: *r = R_NONE; return true;
	case CUBLAS_COMPUTE_32F_FAST_TF32: *r = R_TF32; return true;
	case CUBLAS_COMPUTE_32F_FAST_16F: *r = R_16F; return true;
	case CUBLAS_COMPUTE_32F_FAST_16BF: *r = R_16BF; return true;
	default: return false;
	}
}

// cublasGemmEx's supported (A, B, C) types with fp32 compute: 16-bit A = B
// with C that type or fp32, or all fp32.
bool ex_types_ok(cudaDataType at, cudaDataType bt, cudaDataType ct)
{
	if (!type_ok(at) || at != bt || !type_ok(ct))
		return false;
	return at == CUDA_R_32F ? ct == CUDA_R_32F : (ct == at || ct == CUDA_R_32F);
}

rounding math_rounding(const cublasContext *h)
{
	return h && h->math == CUBLAS_TF32_TENSOR_OP_MATH ? R_TF32 : R_NONE;
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t *h)
{
	*h = new cublasContext{NULL, false, false, CUBLAS_DEFAULT_MATH};
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h)
{
	delete h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
	h->stream = s;
	h->stream_set = true;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *ws, size_t bytes)
{
	if (bytes && ((uintptr_t)ws % 256 || !find_allocation(ws, bytes))) {
		error("cublasSetWorkspace(%p, %zu): not 256-byte aligned inside one device "
		      "allocation",
		      ws, bytes);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	h->ws_set = true;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
			   int n, int k, const float *alpha, const float *A, int lda,
			   const float *B, int ldb, const float *beta, float *C, int ldc)
{
	return gemm_checked("cublasSgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B,
			    CUDA_R_32F, ldb, 0, beta, C, CUDA_R_32F, ldc, 0, 1, math_rounding(h));
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
					 cublasOperation_t tb, int m, int n, int k,
					 const float *alpha, const float *A, int lda, long long sa,
					 const float *B, int ldb, long long sb, const float *beta,
					 float *C, int ldc, long long sc, int batch)
{
	return gemm_checked("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F,
			    lda, sa, B, CUDA_R_32F, ldb, sb, beta, C, CUDA_R_32F, ldc, sc, batch,
			    math_rounding(h));
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
			    int n, int k, const void *alpha, const void *A, cudaDataType at,
			    int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
			    void *C, cudaDataType ct, int ldc, cublasComputeType_t compute,
			    cublasGemmAlgo_t)
{
	rounding r;
	if (!compute_32f(compute, &r) || !ex_types_ok(at, bt, ct)) {
		error("cublasGemmEx: compute type %d with A %s, B %s, C %s: not a combination the "
		      "emulator has",
		      (int)compute, type_name(at), type_name(bt), type_name(ct));
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	if (r == R_NONE)
		r = math_rounding(h);
	return gemm_checked("cublasGemmEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, 0,
			    B, bt, ldb, 0, (const float *)beta, C, ct, ldc, 0, 1,
			    at == CUDA_R_32F ? r : R_NONE);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
					  cublasOperation_t tb, int m, int n, int k,
					  const void *alpha, const void *A, cudaDataType at,
					  int lda, long long sa, const void *B, cudaDataType bt,
					  int ldb, long long sb, const void *beta, void *C,
					  cudaDataType ct, int ldc, long long sc, int batch,
					  cublasComputeType_t compute, cublasGemmAlgo_t)
{
	rounding r;
	if (!compute_32f(compute, &r) || !ex_types_ok(at, bt, ct)) {
		error("cublasGemmStridedBatchedEx: compute type %d with A %s, B %s, C %s: not a "
		      "combination the "
		      "emulator has",
		      (int)compute, type_name(at), type_name(bt), type_name(ct));
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	if (r == R_NONE)
		r = math_rounding(h);
	return gemm_checked("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, (const float *)alpha,
			    A, at, lda, sa, B, bt, ldb, sb, (const float *)beta, C, ct, ldc, sc,
			    batch, at == CUDA_R_32F ? r : R_NONE);
}

cublasStatus_t cublasSgemv(cublasHandle_t h, cublasOperation_t trans, int m, int n,
			   const float *alpha, const float *A, int lda, const float *x, int incx,
			   const float *beta, float *y, int incy)
{
	const char *api = "cublasSgemv";
	if (!check_handle(api, h))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0 ||
	    (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T)) {
		error("%s: invalid arguments m %d n %d lda %d incx %d incy %d", api, m, n, lda,
		      incx, incy);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	if (incx < 0 || incy < 0) {
		error("%s: negative increments are not emulated", api);
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	bool t = trans == CUBLAS_OP_T;
	long long lx = t ? m : n, ly = t ? n : m;
	mat Am = {A, CUDA_R_32F, m, n, lda, 0}, X = {x, CUDA_R_32F, 1, lx, incx, 0},
	    Y = {y, CUDA_R_32F, 1, ly, incy, 0};
	if ((lx > 0 && (!in_bounds(api, "A", Am, 1) || !in_bounds(api, "x", X, 1))) ||
	    !in_bounds(api, "y", Y, 1))
		return CUBLAS_STATUS_EXECUTION_FAILED;
	stats.blas_calls++;
	for (long long j = 0; j < ly; j++) {
		float s = 0.f;
		for (long long q = 0; q < lx; q++)
			s = fmaf(t ? A[q + j * lda] : A[j + q * lda], x[q * incx], s);
		float v = *alpha * s;
		if (*beta != 0.f)
			v += *beta * y[j * incy];
		y[j * incy] = v;
	}
	return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"

// ---- cuBLASLt ---------------------------------------------------------------------------

namespace
{

struct lt_desc {
	cublasComputeType_t compute;
	cudaDataType scale;
	cublasOperation_t ta, tb;
	cublasLtEpilogue_t epi;
	const void *bias;
	int32_t bias_type;
};
struct lt_layout {
	cudaDataType t;
	uint64_t rows, cols;
	int64_t ld;
	int32_t batch;
	int64_t stride;
	int32_t order;
};
struct lt_pref {
	uint64_t max_ws;
};
static_assert(sizeof(lt_desc) <= sizeof(cublasLtMatmulDescOpaque_t),
	      "the descriptor fits cuBLASLt's");
static_assert(sizeof(lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t),
	      "the layout fits cuBLASLt's");
static_assert(sizeof(lt_pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t),
	      "the preference fits cuBLASLt's");

lt_desc *D(cublasLtMatmulDesc_t d)
{
	return reinterpret_cast<lt_desc *>(d->data);
}
lt_layout *LY(cublasLtMatrixLayout_t l)
{
	return reinterpret_cast<lt_layout *>(l->data);
}
lt_pref *P(cublasLtMatmulPreference_t p)
{
	return reinterpret_cast<lt_pref *>(p->data);
}

// An attribute's value: CUBLAS_STATUS_INVALID_VALUE when n is not its size.
template <class T>
cublasStatus_t set_attr(const char *api, int attr, T *dst, const void *buf, size_t n)
{
	if (n != sizeof(T)) {
		error("%s(%d): %zu bytes, expected %zu", api, attr, n, sizeof(T));
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	memcpy(dst, buf, n);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t not_emulated(const char *api, int attr)
{
	error("%s: attribute %d is not emulated", api, attr);
	return CUBLAS_STATUS_NOT_SUPPORTED;
}

float gelu_tanh(float v)
{
	return 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

} // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
	*h = new cublasLtContext{0};
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
	delete h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
					cudaDataType_t scale)
{
	*d = new cublasLtMatmulDescOpaque_t();
	*D(*d) = lt_desc{compute, scale, CUBLAS_OP_N, CUBLAS_OP_N, CUBLASLT_EPILOGUE_DEFAULT,
			 NULL,	  -1};
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
	delete d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
					      cublasLtMatmulDescAttributes_t a, const void *buf,
					      size_t n)
{
	const char *api = "cublasLtMatmulDescSetAttribute";
	lt_desc *x = D(d);
	switch (a) {
	case CUBLASLT_MATMUL_DESC_TRANSA: return set_attr(api, a, &x->ta, buf, n);
	case CUBLASLT_MATMUL_DESC_TRANSB: return set_attr(api, a, &x->tb, buf, n);
	case CUBLASLT_MATMUL_DESC_EPILOGUE: return set_attr(api, a, &x->epi, buf, n);
	case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return set_attr(api, a, &x->bias, buf, n);
	case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return set_attr(api, a, &x->bias_type, buf, n);
	default: return not_emulated(api, a);
	}
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t rows,
					  uint64_t cols, int64_t ld)
{
	*l = new cublasLtMatrixLayoutOpaque_t();
	*LY(*l) = lt_layout{t, rows, cols, ld, 1, 0, CUBLASLT_ORDER_COL};
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
	delete l;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
						cublasLtMatrixLayoutAttribute_t a, const void *buf,
						size_t n)
{
	const char *api = "cublasLtMatrixLayoutSetAttribute";
	lt_layout *x = LY(l);
	switch (a) {
	case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return set_attr(api, a, &x->batch, buf, n);
	case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
		return set_attr(api, a, &x->stride, buf, n);
	case CUBLASLT_MATRIX_LAYOUT_ORDER: return set_attr(api, a, &x->order, buf, n);
	default: return not_emulated(api, a);
	}
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
	*p = new cublasLtMatmulPreferenceOpaque_t();
	P(*p)->max_ws = 0;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
	delete p;
	return CUBLAS_STATUS_SUCCESS;
}

// The alignment preferences only narrow which of cuBLASLt's algorithms the
// heuristic may return; the emulator has one, which needs none.
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
						    cublasLtMatmulPreferenceAttributes_t a,
						    const void *buf, size_t n)
{
	const char *api = "cublasLtMatmulPreferenceSetAttribute";
	uint32_t align;
	switch (a) {
	case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
		return set_attr(api, a, &P(p)->max_ws, buf, n);
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return set_attr(api, a, &align, buf, n);
	default: return not_emulated(api, a);
	}
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
					      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
					      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
					      cublasLtMatmulPreference_t, int requested,
					      cublasLtMatmulHeuristicResult_t *res, int *found)
{
	if (requested < 1)
		return CUBLAS_STATUS_INVALID_VALUE;
	// KA_EMU_LT_ALGOS=0: no algorithm found (cuBLASLt's answer for some
	// alignments and sizes), to run the callers' fallback paths.
	const char *n = getenv("KA_EMU_LT_ALGOS");
	if (n && !strcmp(n, "0")) {
		*found = 0;
		return CUBLAS_STATUS_SUCCESS;
	}
	memset(&res[0], 0, sizeof res[0]);
	res[0].state = CUBLAS_STATUS_SUCCESS;
	res[0].wavesCount = 1.f;
	*found = 1;
	return CUBLAS_STATUS_SUCCESS;
}

// D = epilogue(alpha op(A) op(B) + beta C [+ bias]) with the layouts' shapes
// (column-major only), fp32 compute; bias of D's type (the default bias data
// type), one a row of D; GELU is cuBLASLt's tanh form.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t Ad, const void *B,
			      cublasLtMatrixLayout_t Bd, const void *beta, const void *C,
			      cublasLtMatrixLayout_t Cd, void *Dp, cublasLtMatrixLayout_t Dd,
			      const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes,
			      cudaStream_t stream)
{
	const char *api = "cublasLtMatmul";
	const lt_desc &d = *D(desc);
	const lt_layout &a = *LY(Ad), &b = *LY(Bd), &c = *LY(Cd), &o = *LY(Dd);
	if (!h || !algo || stream != call_stream()) {
		error("%s: %s", api,
		      stream != call_stream() ? "not on ka_launch's stream"
					      : "no handle or algorithm");
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	rounding r;
	if (!compute_32f(d.compute, &r) || d.scale != CUDA_R_32F || !ex_types_ok(a.t, b.t, o.t) ||
	    c.t != o.t || a.order != CUBLASLT_ORDER_COL || b.order != CUBLASLT_ORDER_COL ||
	    c.order != CUBLASLT_ORDER_COL || o.order != CUBLASLT_ORDER_COL || a.batch != 1 ||
	    b.batch != 1 || o.batch != 1) {
		error("%s: types, orders or batches the emulator does not have", api);
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	bool tA = d.ta == CUBLAS_OP_T, tB = d.tb == CUBLAS_OP_T;
	uint64_t m = o.rows, n = o.cols, k = tA ? a.rows : a.cols;
	if ((tA ? a.cols : a.rows) != m || (tB ? b.rows : b.cols) != n ||
	    (tB ? b.cols : b.rows) != k || c.rows != m || c.cols != n || a.ld < (int64_t)a.rows ||
	    b.ld < (int64_t)b.rows || c.ld < (int64_t)c.rows || o.ld < (int64_t)o.rows) {
		error("%s: op(A) %llu x %llu, op(B) %llu x %llu, C %llu x %llu, D %llu x %llu do "
		      "not fit or a leading "
		      "dimension is short",
		      api, (unsigned long long)(tA ? a.cols : a.rows),
		      (unsigned long long)(tA ? a.rows : a.cols),
		      (unsigned long long)(tB ? b.cols : b.rows),
		      (unsigned long long)(tB ? b.rows : b.cols), (unsigned long long)c.rows,
		      (unsigned long long)c.cols, (unsigned long long)m, (unsigned long long)n);
		return CUBLAS_STATUS_INVALID_VALUE;
	}
	bool bias = d.epi == CUBLASLT_EPILOGUE_BIAS || d.epi == CUBLASLT_EPILOGUE_RELU_BIAS ||
		    d.epi == CUBLASLT_EPILOGUE_GELU_BIAS;
	bool relu = d.epi == CUBLASLT_EPILOGUE_RELU || d.epi == CUBLASLT_EPILOGUE_RELU_BIAS;
	bool gelu = d.epi == CUBLASLT_EPILOGUE_GELU || d.epi == CUBLASLT_EPILOGUE_GELU_BIAS;
	if (!bias && !relu && !gelu && d.epi != CUBLASLT_EPILOGUE_DEFAULT) {
		error("%s: epilogue %d is not emulated", api, (int)d.epi);
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
	cudaDataType bt = d.bias_type == -1 ? o.t : (cudaDataType)d.bias_type;
	mat Am = {A, a.t, (long long)a.rows, (long long)a.cols, a.ld, 0};
	mat Bm = {B, b.t, (long long)b.rows, (long long)b.cols, b.ld, 0};
	mat Cm = {C, c.t, (long long)m, (long long)n, c.ld, 0},
	    Dm = {Dp, o.t, (long long)m, (long long)n, o.ld, 0};
	mat Bias = {d.bias, bt, (long long)m, 1, (long long)m, 0};
	float al = *(const float *)alpha, be = *(const float *)beta;
	if ((k > 0 && (!in_bounds(api, "A", Am, 1) || !in_bounds(api, "B", Bm, 1))) ||
	    (be != 0.f && !in_bounds(api, "C", Cm, 1)) || !in_bounds(api, "D", Dm, 1) ||
	    (bias && (!type_ok(bt) || !in_bounds(api, "bias", Bias, 1))))
		return CUBLAS_STATUS_EXECUTION_FAILED;
	if (ws_bytes && !find_allocation(ws, ws_bytes)) {
		error("%s: the workspace (%zu bytes) is not inside one device allocation", api,
		      ws_bytes);
		return CUBLAS_STATUS_EXECUTION_FAILED;
	}
	gemm_core(tA, tB, (long long)m, (long long)n, (long long)k, al, Am, Bm, be, Cm, Dp, Dm, 1,
		  a.t == CUDA_R_32F ? r : R_NONE, [&](float v, long long row) {
			  if (bias)
				  v += load(d.bias, bt, (size_t)row);
			  if (relu)
				  v = v > 0.f ? v : 0.f;
			  if (gelu)
				  v = gelu_tanh(v);
			  return v;
		  });
	return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
