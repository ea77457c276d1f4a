/* plan_gemm.c: the checks of a cuBLAS GEMM plan step (plan_gemm.h). The
 * recorder runs them with the buffer sizes it knows, the runner again on
 * every plan it loads (plan_check_refs), so a hand-written plan cannot make
 * cuBLAS read or write outside a buffer. */
#include "plan_gemm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const api_names[PLAN_GEMM_N_API] = {"cublasSgemm_v2",
						       "cublasSgemmStridedBatched", "cublasGemmEx",
						       "cublasGemmStridedBatchedEx"};
static const char *const api_keys[PLAN_GEMM_N_API] = {"sgemm", "sgemm_strided", "gemm_ex",
						      "gemm_strided_ex"};

const char *plan_gemm_api_name(int32_t api)
{
	return api >= 0 && api < PLAN_GEMM_N_API ? api_names[api] : "?";
}

const char *plan_gemm_api_key(int32_t api)
{
	return api >= 0 && api < PLAN_GEMM_N_API ? api_keys[api] : NULL;
}

int plan_gemm_api_of(const char *key)
{
	for (int i = 0; key && i < PLAN_GEMM_N_API; i++)
		if (!strcmp(key, api_keys[i]))
			return i;
	return -1;
}

uint32_t plan_gemm_elem_bytes(int32_t dtype)
{
	switch (dtype) {
	case PLAN_DT_R_32F: return 4;
	case PLAN_DT_R_64F: return 8;
	case PLAN_DT_R_16F:
	case PLAN_DT_R_16BF: return 2;
	default: return 0;
	}
}

uint64_t plan_gemm_extent(uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride,
			  uint64_t batch, uint64_t es)
{
	if (!rows || !cols || !batch)
		return 0;
	uint64_t last = 0; /* index of the last element, in elements */
	if ((batch - 1) && stride > UINT64_MAX / (batch - 1))
		return UINT64_MAX;
	last = (batch - 1) * stride;
	if ((cols - 1) && ld > (UINT64_MAX - last) / (cols - 1))
		return UINT64_MAX;
	last += (cols - 1) * ld;
	if (rows - 1 > UINT64_MAX - last - 1)
		return UINT64_MAX;
	uint64_t count = last + rows; /* last + (rows - 1) + 1 */
	if (es && count > UINT64_MAX / es)
		return UINT64_MAX;
	return count * es;
}

#define GEMM_BAD(...)                                                                              \
	do {                                                                                       \
		snprintf(why, cap, __VA_ARGS__);                                                   \
		return -1;                                                                         \
	} while (0)

/* The types and compute type the runner replays (cuBLAS's GemmEx table,
 * restricted to real floating point). */
static int types_ok(const struct plan_gemm *g, char *why, size_t cap)
{
	int32_t at = g->atype, bt = g->btype, ct = g->ctype;
	if (g->api == PLAN_GEMM_SGEMM || g->api == PLAN_GEMM_SGEMM_STRIDED) {
		if (at != PLAN_DT_R_32F || bt != at || ct != at || g->compute != PLAN_COMPUTE_32F ||
		    g->algo != -1)
			GEMM_BAD("%s: the types must be CUDA_R_32F with computeType 32F and the "
				 "default algorithm",
				 plan_gemm_api_name(g->api));
		return 0;
	}
	switch (g->compute) {
	case PLAN_COMPUTE_32F:
	case PLAN_COMPUTE_32F_PEDANTIC:
		if ((at == PLAN_DT_R_32F && bt == at && ct == at) ||
		    ((at == PLAN_DT_R_16F || at == PLAN_DT_R_16BF) && bt == at &&
		     (ct == at || ct == PLAN_DT_R_32F)))
			return 0;
		break;
	case PLAN_COMPUTE_32F_FAST_16F:
	case PLAN_COMPUTE_32F_FAST_16BF:
	case PLAN_COMPUTE_32F_FAST_TF32:
		if (at == PLAN_DT_R_32F && bt == at && ct == at)
			return 0;
		break;
	case PLAN_COMPUTE_64F:
	case PLAN_COMPUTE_64F_PEDANTIC:
		if (at == PLAN_DT_R_64F && bt == at && ct == at)
			return 0;
		break;
	default:
		GEMM_BAD("computeType %d is not supported (32F, 32F_PEDANTIC, 32F_FAST_16F, "
			 "32F_FAST_16BF, 32F_FAST_TF32, 64F, 64F_PEDANTIC)",
			 (int)g->compute);
	}
	GEMM_BAD("Atype %d, Btype %d, Ctype %d are not a supported combination for computeType %d "
		 "(CUDA_R_32F/16F/16BF operands with a 32F compute type, CUDA_R_64F with 64F)",
		 (int)at, (int)bt, (int)ct, (int)g->compute);
}

/* Enums and scalar ranges, before any arithmetic. */
static int fields_ok(const struct plan_gemm *g, char *why, size_t cap)
{
	if (g->api < 0 || g->api >= PLAN_GEMM_N_API)
		GEMM_BAD("api %d is not a recorded cuBLAS GEMM", (int)g->api);
	if (g->transa < 0 || g->transa > 2 || g->transb < 0 || g->transb > 2)
		GEMM_BAD("transa %d / transb %d is not a cublasOperation_t (0, 1, 2)",
			 (int)g->transa, (int)g->transb);
	if (types_ok(g, why, cap))
		return -1;
	if (!(g->algo == -1 || (g->algo >= 0 && g->algo <= 23) ||
	      (g->algo >= 99 && g->algo <= 115)))
		GEMM_BAD("algo %d is not a cublasGemmAlgo_t", (int)g->algo);
	int32_t mm = g->math_mode;
	if ((mm & 0xf) > 3 || (mm & ~0x1f))
		GEMM_BAD("math mode %d is not a cublasMath_t", (int)mm);
	const struct {
		const char *name;
		int64_t v;
	} dims[] = {{"m", g->m}, {"n", g->n}, {"k", g->k}, {"batchCount", g->batch}};
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
		if (dims[i].v < 0 || dims[i].v > PLAN_GEMM_MAX_DIM)
			GEMM_BAD("%s = %lld is not 0..2^31-1", dims[i].name, (long long)dims[i].v);
	int batched = g->api == PLAN_GEMM_SGEMM_STRIDED || g->api == PLAN_GEMM_STRIDED_EX;
	if (!batched && (g->batch != 1 || g->stride_a || g->stride_b || g->stride_c))
		GEMM_BAD("a non-batched call has batchCount 1 and strides 0");
	if (g->stride_a < 0 || g->stride_b < 0 || g->stride_c < 0)
		GEMM_BAD("strideA %lld, strideB %lld, strideC %lld: negative strides are not "
			 "supported",
			 (long long)g->stride_a, (long long)g->stride_b, (long long)g->stride_c);
	if (!isfinite(g->alpha) || !isfinite(g->beta))
		GEMM_BAD("alpha and beta must be finite");
	return 0;
}

/* One operand: its leading dimension against cuBLAS's rule, then its extent
 * inside its buffer. */
static int operand_ok(const char *name, const char *ldname, const char *rowname, int64_t rows,
		      int64_t cols, int64_t ld, int64_t stride, int64_t batch, int32_t dtype,
		      struct plan_gemm_ref r, int n_buf, const uint64_t *sizes, char *why,
		      size_t cap)
{
	int64_t need = rows > 1 ? rows : 1;
	if (ld > PLAN_GEMM_MAX_DIM)
		GEMM_BAD("%s = %lld is over 2^31-1", ldname, (long long)ld);
	if (ld < need)
		GEMM_BAD("%s = %lld is less than max(1, %s = %lld)", ldname, (long long)ld, rowname,
			 (long long)rows);
	uint32_t es = plan_gemm_elem_bytes(dtype);
	if (r.buf < 0 || r.buf >= n_buf)
		GEMM_BAD("%s: buffer %d does not exist", name, (int)r.buf);
	if (r.offset % es)
		GEMM_BAD("%s: offset %llu in buffer %d is not a multiple of the element size %u",
			 name, (unsigned long long)r.offset, (int)r.buf, es);
	uint64_t ext = plan_gemm_extent((uint64_t)rows, (uint64_t)cols, (uint64_t)ld,
					(uint64_t)stride, (uint64_t)batch, es);
	uint64_t size = sizes[r.buf];
	if (ext == UINT64_MAX)
		GEMM_BAD("%s: the extent overflows 64 bits", name);
	if (r.offset > size || ext > size - r.offset)
		GEMM_BAD("%s: %llu bytes from buffer %d + %llu run past its end (%llu bytes)", name,
			 (unsigned long long)ext, (int)r.buf, (unsigned long long)r.offset,
			 (unsigned long long)size);
	return 0;
}

int plan_gemm_check(const struct plan_gemm *g, int n_buf, const uint64_t *sizes, char *why,
		    size_t cap)
{
	if (fields_ok(g, why, cap))
		return -1;
	/* Stored shapes: op(A) is m x k, so A is m x k (N) or k x m (T, C). */
	int64_t ar = g->transa ? g->k : g->m, ac = g->transa ? g->m : g->k;
	int64_t br = g->transb ? g->n : g->k, bc = g->transb ? g->k : g->n;
	if (operand_ok("A", "lda", g->transa ? "k" : "m", ar, ac, g->lda, g->stride_a, g->batch,
		       g->atype, g->a, n_buf, sizes, why, cap) ||
	    operand_ok("B", "ldb", g->transb ? "n" : "k", br, bc, g->ldb, g->stride_b, g->batch,
		       g->btype, g->b, n_buf, sizes, why, cap) ||
	    operand_ok("C", "ldc", "m", g->m, g->n, g->ldc, g->stride_c, g->batch, g->ctype, g->c,
		       n_buf, sizes, why, cap))
		return -1;
	return 0;
}
