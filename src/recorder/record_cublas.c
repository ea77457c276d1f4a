/* record_cublas.c: the recording cuBLAS (docs/cuda-target.md, "cuBLAS"). Linked
 * into ka-record-cuda and exported with the recording CUDA runtime; the
 * recorder lets a candidate import these names only when the task's policy
 * lists cublas (record_cuda.c, cuda_classify). No cuBLAS is loaded: a handle
 * is a recorder-owned record of its stream, math mode and pointer mode, and
 * each GEMM becomes a plan step (plan_gemm.h) with all its parameters,
 * operands resolved to (buffer, offset) and checked by plan_gemm_check
 * against the buffers, as the runner checks them again before it calls the
 * real cuBLAS. Work must go on the stream ka_launch was given (set with
 * cublasSetStream_v2; a new handle's stream is the legacy default stream, as
 * in cuBLAS); alpha and beta must be host values. Declarations follow CUDA
 * 13.0's cublas_api.h (cublasStatus_t, cublasOperation_t, cudaDataType_t,
 * cublasComputeType_t and cublasGemmAlgo_t are int-sized enums). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "record_cuda.h"

/* cublasStatus_t */
enum {
	BLAS_OK = 0,
	BLAS_NOT_INITIALIZED = 1,
	BLAS_ALLOC_FAILED = 3,
	BLAS_INVALID_VALUE = 7,
	BLAS_NOT_SUPPORTED = 15,
};

#define BLAS_POINTER_MODE_DEVICE 1
#define MAX_HANDLES 16

struct blas_handle {
	int used;
	void *stream;	  /* NULL: the legacy default stream, refused at a GEMM */
	int32_t math;	  /* cublasMath_t */
	int32_t ptr_mode; /* always host: device mode is refused when set */
};

static struct blas_handle handles[MAX_HANDLES];

static struct blas_handle *handle_of(const void *h)
{
	for (int i = 0; i < MAX_HANDLES; i++)
		if ((const void *)&handles[i] == h && handles[i].used)
			return &handles[i];
	return NULL;
}

static struct blas_handle *handle_or_fail(const void *h, const char *api)
{
	struct blas_handle *b = handle_of(h);
	if (!b)
		record_fail("%s: handle %p is not a live handle from cublasCreate_v2", api, h);
	return b;
}

int cublasCreate_v2(void **handle);
int cublasCreate_v2(void **handle)
{
	if (!handle) {
		record_fail("cublasCreate_v2: handle is NULL");
		return BLAS_INVALID_VALUE;
	}
	for (int i = 0; i < MAX_HANDLES; i++)
		if (!handles[i].used) {
			memset(&handles[i], 0, sizeof handles[i]);
			handles[i].used = 1;
			*handle = &handles[i];
			return BLAS_OK;
		}
	record_note("cublasCreate_v2: more than %d live handles", MAX_HANDLES);
	return BLAS_ALLOC_FAILED;
}

int cublasDestroy_v2(void *handle);
int cublasDestroy_v2(void *handle)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasDestroy_v2");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	b->used = 0;
	return BLAS_OK;
}

int cublasSetStream_v2(void *handle, void *stream);
int cublasSetStream_v2(void *handle, void *stream)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasSetStream_v2");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	b->stream = stream; /* checked where work is issued, as for kernels */
	return BLAS_OK;
}

int cublasGetStream_v2(void *handle, void **stream);
int cublasGetStream_v2(void *handle, void **stream)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasGetStream_v2");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	if (!stream)
		return BLAS_INVALID_VALUE;
	*stream = b->stream;
	return BLAS_OK;
}

/* Any cublasMath_t: a base mode 0..3 (default, tensor op, pedantic, TF32)
 * with or without CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (16). The
 * runner replays the mode with each GEMM; the task's tolerance judges it. */
int cublasSetMathMode(void *handle, int32_t mode);
int cublasSetMathMode(void *handle, int32_t mode)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasSetMathMode");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	if ((mode & 0xf) > 3 || (mode & ~0x1f)) {
		record_note("cublasSetMathMode: mode %d is not a cublasMath_t", (int)mode);
		return BLAS_INVALID_VALUE;
	}
	b->math = mode;
	return BLAS_OK;
}

int cublasGetMathMode(void *handle, int32_t *mode);
int cublasGetMathMode(void *handle, int32_t *mode)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasGetMathMode");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	if (!mode)
		return BLAS_INVALID_VALUE;
	*mode = b->math;
	return BLAS_OK;
}

int cublasSetPointerMode_v2(void *handle, int32_t mode);
int cublasSetPointerMode_v2(void *handle, int32_t mode)
{
	static const char api[] = "cublasSetPointerMode_v2";
	struct blas_handle *b = handle_or_fail(handle, api);
	if (!b)
		return BLAS_NOT_INITIALIZED;
	if (mode == BLAS_POINTER_MODE_DEVICE) {
		record_fail("%s: CUBLAS_POINTER_MODE_DEVICE cannot be recorded (alpha and beta "
			    "must be host values)",
			    api);
		return BLAS_NOT_SUPPORTED;
	}
	if (mode != 0)
		return BLAS_INVALID_VALUE;
	b->ptr_mode = mode;
	return BLAS_OK;
}

int cublasGetPointerMode_v2(void *handle, int32_t *mode);
int cublasGetPointerMode_v2(void *handle, int32_t *mode)
{
	struct blas_handle *b = handle_or_fail(handle, "cublasGetPointerMode_v2");
	if (!b)
		return BLAS_NOT_INITIALIZED;
	if (!mode)
		return BLAS_INVALID_VALUE;
	*mode = b->ptr_mode;
	return BLAS_OK;
}

static const struct {
	int code;
	const char *name, *text;
} statuses[] = {
	{BLAS_OK, "CUBLAS_STATUS_SUCCESS", "success"},
	{BLAS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
	{BLAS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
	{BLAS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
	 "an invalid numeric value was used as "
	 "an argument"},
	{BLAS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
	 "the functionality requested is not "
	 "supported"},
};

const char *cublasGetStatusName(int status);
const char *cublasGetStatusName(int status)
{
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		if (statuses[i].code == status)
			return statuses[i].name;
	return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(int status);
const char *cublasGetStatusString(int status)
{
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		if (statuses[i].code == status)
			return statuses[i].text;
	return "unknown error";
}

/* ---- GEMMs ---- */

/* A host scalar (float, or double for a 64F compute type) into *out; 0, or
 * -1 after record_fail (NULL, or a fake device address). */
static int host_scalar(const char *api, const char *name, const void *p, int is_double, double *out)
{
	int b = -1;
	uint64_t off = 0;
	if (!p) {
		record_fail("%s: %s is NULL", api, name);
		return -1;
	}
	if (rcuda_resolve(p, &b, &off) != 0) {
		record_fail("%s: %s (%p) is a device address: only CUBLAS_POINTER_MODE_HOST can be "
			    "recorded",
			    api, name, p);
		return -1;
	}
	if (is_double) {
		double d;
		memcpy(&d, p, sizeof d);
		*out = d;
	} else {
		float f;
		memcpy(&f, p, sizeof f);
		*out = (double)f;
	}
	return 0;
}

static int operand(const char *api, const char *name, const void *p, struct plan_gemm_ref *r)
{
	int b = -1;
	uint64_t off = 0;
	if (rcuda_resolve(p, &b, &off) != 1) {
		record_fail("%s: %s (%p) is not inside a buffer of this call", api, name, p);
		return -1;
	}
	r->buf = b;
	r->offset = off;
	return 0;
}

/* Record g (its enums, dimensions and strides filled by the caller) after
 * the handle, stream, scalars and operands are resolved and the whole call
 * passes plan_gemm_check against the buffers. A cublasStatus_t. */
static int record_gemm(void *handle, struct plan_gemm *g, const void *alpha, const void *beta,
		       const void *A, const void *B, const void *C)
{
	const char *api = plan_gemm_api_name(g->api);
	struct blas_handle *h = handle_or_fail(handle, api);
	if (!h)
		return BLAS_NOT_INITIALIZED;
	if (!rcuda_stream_ok(h->stream, api))
		return BLAS_NOT_SUPPORTED;
	g->math_mode = h->math;
	int dbl = g->compute == PLAN_COMPUTE_64F || g->compute == PLAN_COMPUTE_64F_PEDANTIC;
	if (host_scalar(api, "alpha", alpha, dbl, &g->alpha) ||
	    host_scalar(api, "beta", beta, dbl, &g->beta) || operand(api, "A", A, &g->a) ||
	    operand(api, "B", B, &g->b) || operand(api, "C", C, &g->c))
		return BLAS_INVALID_VALUE;
	const uint64_t *sizes;
	int n = rcuda_buffers(&sizes);
	char why[256];
	if (plan_gemm_check(g, n, sizes, why, sizeof why)) {
		record_fail("%s: %s", api, why);
		return BLAS_INVALID_VALUE;
	}
	struct plan_op *o = rcuda_add_op(api);
	if (!o)
		return BLAS_NOT_SUPPORTED;
	o->kind = PLAN_OP_GEMM;
	o->gemm = *g;
	return BLAS_OK;
}

static struct plan_gemm gemm_of(int32_t api, int transa, int transb, int m, int n, int k)
{
	struct plan_gemm g;
	memset(&g, 0, sizeof g);
	g.api = api;
	g.transa = transa;
	g.transb = transb;
	g.m = m;
	g.n = n;
	g.k = k;
	g.batch = 1;
	g.atype = g.btype = g.ctype = PLAN_DT_R_32F;
	g.compute = PLAN_COMPUTE_32F;
	g.algo = -1;
	return g;
}

int cublasSgemm_v2(void *handle, int transa, int transb, int m, int n, int k, const float *alpha,
		   const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
		   int ldc);
int cublasSgemm_v2(void *handle, int transa, int transb, int m, int n, int k, const float *alpha,
		   const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
		   int ldc)
{
	struct plan_gemm g = gemm_of(PLAN_GEMM_SGEMM, transa, transb, m, n, k);
	g.lda = lda;
	g.ldb = ldb;
	g.ldc = ldc;
	return record_gemm(handle, &g, alpha, beta, A, B, C);
}

int cublasSgemmStridedBatched(void *handle, int transa, int transb, int m, int n, int k,
			      const float *alpha, const float *A, int lda, long long strideA,
			      const float *B, int ldb, long long strideB, const float *beta,
			      float *C, int ldc, long long strideC, int batchCount);
int cublasSgemmStridedBatched(void *handle, int transa, int transb, int m, int n, int k,
			      const float *alpha, const float *A, int lda, long long strideA,
			      const float *B, int ldb, long long strideB, const float *beta,
			      float *C, int ldc, long long strideC, int batchCount)
{
	struct plan_gemm g = gemm_of(PLAN_GEMM_SGEMM_STRIDED, transa, transb, m, n, k);
	g.lda = lda;
	g.ldb = ldb;
	g.ldc = ldc;
	g.stride_a = strideA;
	g.stride_b = strideB;
	g.stride_c = strideC;
	g.batch = batchCount;
	return record_gemm(handle, &g, alpha, beta, A, B, C);
}

int cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
		 const void *A, int Atype, int lda, const void *B, int Btype, int ldb,
		 const void *beta, void *C, int Ctype, int ldc, int computeType, int algo);
int cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
		 const void *A, int Atype, int lda, const void *B, int Btype, int ldb,
		 const void *beta, void *C, int Ctype, int ldc, int computeType, int algo)
{
	struct plan_gemm g = gemm_of(PLAN_GEMM_EX, transa, transb, m, n, k);
	g.atype = Atype;
	g.btype = Btype;
	g.ctype = Ctype;
	g.lda = lda;
	g.ldb = ldb;
	g.ldc = ldc;
	g.compute = computeType;
	g.algo = algo;
	return record_gemm(handle, &g, alpha, beta, A, B, C);
}

int cublasGemmStridedBatchedEx(void *handle, int transa, int transb, int m, int n, int k,
			       const void *alpha, const void *A, int Atype, int lda,
			       long long strideA, const void *B, int Btype, int ldb,
			       long long strideB, const void *beta, void *C, int Ctype, int ldc,
			       long long strideC, int batchCount, int computeType, int algo);
int cublasGemmStridedBatchedEx(void *handle, int transa, int transb, int m, int n, int k,
			       const void *alpha, const void *A, int Atype, int lda,
			       long long strideA, const void *B, int Btype, int ldb,
			       long long strideB, const void *beta, void *C, int Ctype, int ldc,
			       long long strideC, int batchCount, int computeType, int algo)
{
	struct plan_gemm g = gemm_of(PLAN_GEMM_STRIDED_EX, transa, transb, m, n, k);
	g.atype = Atype;
	g.btype = Btype;
	g.ctype = Ctype;
	g.lda = lda;
	g.ldb = ldb;
	g.ldc = ldc;
	g.stride_a = strideA;
	g.stride_b = strideB;
	g.stride_c = strideC;
	g.batch = batchCount;
	g.compute = computeType;
	g.algo = algo;
	return record_gemm(handle, &g, alpha, beta, A, B, C);
}
