/* plan_gemm.h: a cuBLAS GEMM as a step of a CUDA launch plan (docs/cuda-target.md,
 * "cuBLAS"). The recorder writes one for every GEMM the candidate's host code
 * asks cuBLAS for; the trusted runner replays it with its own handle on its
 * own stream. Since the plan may have been written by hand, every field is
 * checked here, by one pure function that both sides call: the enums against
 * what the runner can replay, the dimensions against cuBLAS's own rules, and
 * the memory every operand can touch against the buffer it lies in, with
 * overflow-checked arithmetic. No I/O, no CUDA. */
#ifndef KA_PLAN_GEMM_H
#define KA_PLAN_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Which cuBLAS entry point the candidate called (the runner calls the same). */
enum plan_gemm_api {
	PLAN_GEMM_SGEMM,	 /* cublasSgemm_v2 */
	PLAN_GEMM_SGEMM_STRIDED, /* cublasSgemmStridedBatched */
	PLAN_GEMM_EX,		 /* cublasGemmEx */
	PLAN_GEMM_STRIDED_EX,	 /* cublasGemmStridedBatchedEx */
	PLAN_GEMM_N_API
};

/* cudaDataType_t and cublasComputeType_t values (CUDA 13.0 headers). */
#define PLAN_DT_R_32F 0
#define PLAN_DT_R_64F 1
#define PLAN_DT_R_16F 2
#define PLAN_DT_R_16BF 14
#define PLAN_COMPUTE_32F 68
#define PLAN_COMPUTE_32F_PEDANTIC 69
#define PLAN_COMPUTE_64F 70
#define PLAN_COMPUTE_64F_PEDANTIC 71
#define PLAN_COMPUTE_32F_FAST_16F 74
#define PLAN_COMPUTE_32F_FAST_16BF 75
#define PLAN_COMPUTE_32F_FAST_TF32 77
#define PLAN_GEMM_MAX_DIM 2147483647 /* cuBLAS takes int dimensions */

/* A buffer reference as plan.h has it (kept apart so this header stands
 * alone): byte `offset` of buffer `buf`. */
struct plan_gemm_ref {
	int32_t buf;
	uint64_t offset;
};

/* C = alpha op(A) op(B) + beta C, column-major, for `batch` matrices `stride_*`
 * elements apart. Non-batched calls have batch 1 and strides 0. alpha and
 * beta are the host values the candidate passed (float values for the 32F
 * compute types, exact in a double). */
struct plan_gemm {
	int32_t api;		/* enum plan_gemm_api */
	int32_t transa, transb; /* cublasOperation_t: 0 N, 1 T, 2 C */
	int64_t m, n, k;
	double alpha, beta;
	struct plan_gemm_ref a, b, c;
	int32_t atype, btype, ctype; /* cudaDataType_t */
	int64_t lda, ldb, ldc;
	int64_t stride_a, stride_b, stride_c; /* elements */
	int64_t batch;
	int32_t compute;   /* cublasComputeType_t (Sgemm: 32F) */
	int32_t algo;	   /* cublasGemmAlgo_t (Sgemm: -1, the default) */
	int32_t math_mode; /* the handle's cublasMath_t at the call */
};

/* The cuBLAS function name of api ("cublasGemmEx"), or "?" (static). */
const char *plan_gemm_api_name(int32_t api);

/* The plan's short name of api ("gemm_ex"), or NULL; and back: the api of a
 * short name, or -1. */
const char *plan_gemm_api_key(int32_t api);
int plan_gemm_api_of(const char *key);

/* Bytes per element of a supported cudaDataType_t (32F 4, 64F 8, 16F and
 * 16BF 2), 0 for any other. */
uint32_t plan_gemm_elem_bytes(int32_t dtype);

/* Bytes from an operand's first element to one past the last byte any of
 * its `batch` matrices of rows x cols (column-major, leading dimension ld,
 * `stride` elements apart, es bytes each) can touch: 0 when rows, cols or
 * batch is 0, else ((batch-1) stride + (cols-1) ld + rows) es. UINT64_MAX on
 * overflow. Inputs are the validated non-negative values. */
uint64_t plan_gemm_extent(uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride,
			  uint64_t batch, uint64_t es);

/* Check g completely: api, transposes, types and compute type among those
 * the runner replays (32F/16F/16BF operands with a 32F compute type, 64F with
 * a 64F one), the algorithm and math mode values, m, n, k in 0..2^31-1, batch
 * 0..2^31-1 (1 for the non-batched calls), strides >= 0 (0 for the
 * non-batched calls), lda/ldb/ldc >= max(1, rows of the stored matrix) as
 * cuBLAS requires, alpha/beta finite; then each of A, B, C: its buffer among
 * the n_buf buffers of sizes[], its offset a multiple of the element size,
 * and its whole extent (plan_gemm_extent) inside the buffer from its offset.
 * 0, or -1 with why (cap bytes) naming the field as cuBLAS names it ("lda = 3
 * is less than max(1, m = 64)", "C: 16384 bytes from buffer 3 + 0 run past
 * its end (4096 bytes)"). */
int plan_gemm_check(const struct plan_gemm *g, int n_buf, const uint64_t *sizes, char *why,
		    size_t cap);

#endif
