/* devcheck.cu: the device check of every output element (devcheck.h).
 * Kernels are named ka_rt_* like the runner's other helpers. */
#include "devcheck.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "ka_gen.h"
#include "../common/dtype.h"
#include "../common/util.h"
#include "runner.h"
}
#include "../common/cmp.h"

#define DC_MODULES 8
#define DC_BLOCK 128

/* Per output: bad, non-finite, the largest finite error's bits, the next
 * mismatch's index. */
enum { DC_BAD, DC_NONFIN, DC_MAXERR, DC_NEXT, DC_WORDS };

__global__ void ka_rt_cmp(const unsigned char *got, int es, int dtype, const double *gold,
			  unsigned long long n, double atol, double rtol, unsigned long long *acc)
{
	unsigned long long bad = 0, nf = 0;
	double mx = 0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x) {
		double v = ka_cmp_value(got + i * (unsigned long long)es, dtype);
		int how = ka_cmp_elem(v, gold[i], atol, rtol);
		if (how == KA_CMP_OK)
			continue;
		bad++;
		if (how == KA_CMP_NONFINITE) {
			nf++;
			continue;
		}
		double err = fabs(v - gold[i]);
		if (err > mx) /* a NaN error (NaN gold) is never the largest, as in the parent */
			mx = err;
	}
	if (bad)
		atomicAdd(&acc[DC_BAD], bad);
	if (nf)
		atomicAdd(&acc[DC_NONFIN], nf);
	if (mx > 0)
		atomicMax(&acc[DC_MAXERR], (unsigned long long)__double_as_longlong(mx));
}

/* The lowest index >= from whose element does not match, min'ed into *next. */
__global__ void ka_rt_cmp_next(const unsigned char *got, int es, int dtype, const double *gold,
			       unsigned long long n, double atol, double rtol, unsigned long long from,
			       unsigned long long *next)
{
	for (unsigned long long i = from + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	     i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
		double v = ka_cmp_value(got + i * (unsigned long long)es, dtype);
		if (ka_cmp_elem(v, gold[i], atol, rtol) != KA_CMP_OK) {
			atomicMin(next, i);
			return;
		}
	}
}

__global__ void ka_rt_gather_f64(const double *g, const long long *idx, unsigned long long n,
				 double *to)
{
	for (unsigned long long q = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; q < n;
	     q += (unsigned long long)gridDim.x * blockDim.x)
		to[q] = g[idx[q]];
}

static struct {
	char path[1024];
	CUmodule mod;
	CUfunction fn;
	int n_params;
} dc_mod[DC_MODULES];
static int dc_n_mod;
static CUdeviceptr dc_gold, dc_acc;
static size_t dc_gold_bytes;

static const char *dc_err(CUresult r)
{
	if (r == CUDA_ERROR_OUT_OF_MEMORY)
		runner_note_device_memory();
	const char *s = NULL;
	cuGetErrorName(r, &s);
	return s ? s : "CUDA error";
}

/* The ka_gold kernel of the module at path (loaded once; the parent names
 * its modules by content, so a path is one module). NULL with e. */
static CUfunction dc_kernel(const char *path, int *n_params, struct ka_err *e)
{
	for (int i = 0; i < dc_n_mod; i++)
		if (!strcmp(dc_mod[i].path, path)) {
			*n_params = dc_mod[i].n_params;
			return dc_mod[i].fn;
		}
	int slot = dc_n_mod < DC_MODULES ? dc_n_mod++ : (int)(util_now() * 1e3) % DC_MODULES;
	if (dc_mod[slot].mod) {
		cuModuleUnload(dc_mod[slot].mod);
		memset(&dc_mod[slot], 0, sizeof dc_mod[slot]);
	}
	CUmodule mod;
	CUfunction fn;
	CUresult r = cuModuleLoad(&mod, path);
	if (r) {
		ka_err_set(e, "check: gold module %s does not load: %s", path, dc_err(r));
		return NULL;
	}
	if ((r = cuModuleGetFunction(&fn, mod, "ka_gold"))) {
		cuModuleUnload(mod);
		ka_err_set(e, "check: gold module %s has no ka_gold: %s", path, dc_err(r));
		return NULL;
	}
	int n = 0;
	size_t off, size;
	while (n < 256 && !cuFuncGetParamInfo(fn, (size_t)n, &off, &size)) {
		if (size != 8) {
			cuModuleUnload(mod);
			ka_err_set(e, "check: ka_gold parameter %d is %zu bytes, not 8", n, size);
			return NULL;
		}
		n++;
	}
	snprintf(dc_mod[slot].path, sizeof dc_mod[slot].path, "%s", path);
	dc_mod[slot].mod = mod;
	dc_mod[slot].fn = fn;
	dc_mod[slot].n_params = n;
	*n_params = n;
	return fn;
}

/* Room for every output's gold (doubles, 256-byte aligned each) and the
 * counters; off[j] gets output j's offset. */
static int dc_buffers(const struct devcheck_tensors *t, size_t *off, struct ka_err *e)
{
	size_t need = 0;
	for (int j = 0; j < t->n_outputs; j++) {
		off[j] = need;
		need += ((size_t)t->out_numel[j] * 8 + 255) & ~(size_t)255;
	}
	CUresult r = CUDA_SUCCESS;
	if (need > dc_gold_bytes) {
		if (dc_gold)
			cuMemFree(dc_gold);
		dc_gold = 0;
		dc_gold_bytes = 0;
		if ((r = cuMemAlloc(&dc_gold, need)))
			return ka_err_set(e, "check: cuMemAlloc of %zu bytes of gold: %s", need,
					  dc_err(r));
		dc_gold_bytes = need;
	}
	if (!dc_acc && (r = cuMemAlloc(&dc_acc, 8 * DC_WORDS * (size_t)RUNNER_MAX_TENSORS)))
		return ka_err_set(e, "check: cuMemAlloc of the counters: %s", dc_err(r));
	return 0;
}

/* Step 1: the gold of every item into the gold buffer (filled with NaN
 * first: an element the reference did not write can never match). */
static int dc_gold_run(CUstream st, const struct runner_check *c, const struct devcheck_tensors *t,
		       const size_t *off, struct ka_err *e)
{
	int n_params;
	CUfunction fn = dc_kernel(c->cubin, &n_params, e);
	if (!fn)
		return -1;
	if (n_params != 1 + c->n_params + t->n_inputs + t->n_outputs)
		return ka_err_set(e, "check: ka_gold takes %d parameters, the request gives %d",
				  n_params, 1 + c->n_params + t->n_inputs + t->n_outputs);
	long long vals[1 + 16];
	CUdeviceptr ptrs[2 * RUNNER_MAX_TENSORS];
	void *argv[1 + 16 + 2 * RUNNER_MAX_TENSORS];
	int a = 0;
	vals[0] = (long long)c->items;
	argv[a++] = &vals[0];
	for (int p = 0; p < c->n_params; p++) {
		vals[1 + p] = (long long)c->params[p];
		argv[a++] = &vals[1 + p];
	}
	for (int k = 0; k < t->n_inputs; k++) {
		ptrs[k] = t->in[k];
		argv[a++] = &ptrs[k];
	}
	for (int j = 0; j < t->n_outputs; j++) {
		ptrs[t->n_inputs + j] = dc_gold + off[j];
		argv[a++] = &ptrs[t->n_inputs + j];
		cuMemsetD32Async(dc_gold + off[j], 0xFFFFFFFFu, (size_t)t->out_numel[j] * 2, st);
	}
	unsigned long long blocks = ((unsigned long long)c->items + DC_BLOCK - 1) / DC_BLOCK;
	if (blocks > 0x7FFFFFFFull)
		return ka_err_set(e, "check: %lld items are too many for one launch",
				  (long long)c->items);
	CUresult r = cuLaunchKernel(fn, (unsigned)blocks, 1, 1, DC_BLOCK, 1, 1, 0, st, argv, NULL);
	if (!r)
		r = cuStreamSynchronize(st);
	if (r)
		return ka_err_set(e, "check: the gold kernel failed: %s", dc_err(r));
	return 0;
}

/* Step 2, output j: the counts, then the lowest-index mismatches one pass
 * each (each pass finds the least index after the previous one). */
static int dc_compare(CUstream st, const struct runner_check *c, const struct devcheck_tensors *t,
		      int j, const double *gold, struct runner_check_out *co, struct ka_err *e)
{
	cudaStream_t cs = (cudaStream_t)st;
	const unsigned char *got = (const unsigned char *)t->out[j];
	int dt = t->out_dtype[j];
	int es = (int)dtype_code_size(dt);
	double atol = ka_cmp_is_int(dt) ? 0 : c->atol, rtol = ka_cmp_is_int(dt) ? 0 : c->rtol;
	unsigned long long n = (unsigned long long)t->out_numel[j], h[DC_WORDS];
	unsigned long long *acc = (unsigned long long *)(dc_acc + 8 * DC_WORDS * (size_t)j);
	CUresult r = cuMemsetD8Async((CUdeviceptr)acc, 0, 8 * DC_WORDS, st);
	if (n)
		ka_rt_cmp<<<2048, 256, 0, cs>>>(got, es, dt, gold, n, atol, rtol, acc);
	if (!r)
		r = cuMemcpyDtoHAsync(h, (CUdeviceptr)acc, sizeof h, st);
	if (!r)
		r = cuStreamSynchronize(st);
	if (r || (r = (CUresult)cudaGetLastError()))
		return ka_err_set(e, "check: comparing output %d: %s", j, dc_err(r));
	co->checked = (int64_t)n;
	co->bad = (int64_t)h[DC_BAD];
	co->nonfinite = (int64_t)h[DC_NONFIN];
	memcpy(&co->max_abs_error, &h[DC_MAXERR], 8);
	unsigned long long from = 0;
	while (co->n_first < RUNNER_CHECK_FIRST && co->n_first < co->bad && from < n) {
		unsigned long long next = ~0ull;
		unsigned char elem[8] = {0};
		int k = co->n_first;
		r = cuMemcpyHtoDAsync((CUdeviceptr)&acc[DC_NEXT], &next, 8, st);
		ka_rt_cmp_next<<<2048, 256, 0, cs>>>(got, es, dt, gold, n, atol, rtol, from,
						      &acc[DC_NEXT]);
		if (!r)
			r = cuMemcpyDtoHAsync(&next, (CUdeviceptr)&acc[DC_NEXT], 8, st);
		if (!r)
			r = cuStreamSynchronize(st);
		if (!r && next < n)
			r = cuMemcpyDtoH(elem, (CUdeviceptr)(got + next * (unsigned long long)es),
					 (size_t)es);
		if (!r && next < n)
			r = cuMemcpyDtoH(&co->gold[k], (CUdeviceptr)(gold + next), 8);
		if (r)
			return ka_err_set(e, "check: output %d's mismatches: %s", j, dc_err(r));
		if (next >= n)
			break;
		double v = ka_cmp_value(elem, dt);
		co->index[k] = (int64_t)next;
		co->finite[k] = isfinite(v);
		co->got[k] = co->finite[k] ? v : 0.0;
		co->n_first++;
		from = next + 1;
	}
	return 0;
}

/* Step 3, output j: the device gold at the sampled elements. */
static int dc_gather(CUstream st, const struct runner_check *c, int j, const double *gold,
		     struct runner_check_result *res, struct ka_err *e)
{
	size_t m = (size_t)c->n_sample[j];
	res->gold_at[j] = (double *)xmalloc((m ? m : 1) * sizeof(double));
	if (!m)
		return 0;
	CUdeviceptr di = 0, dv = 0;
	CUresult r = cuMemAlloc(&di, m * 8);
	if (!r)
		r = cuMemAlloc(&dv, m * 8);
	if (!r)
		r = cuMemcpyHtoDAsync(di, c->sample_idx[j], m * 8, st);
	if (!r) {
		ka_rt_gather_f64<<<256, 256, 0, (cudaStream_t)st>>>(gold, (const long long *)di, m,
								    (double *)dv);
		r = (CUresult)cudaGetLastError();
	}
	if (!r)
		r = cuMemcpyDtoHAsync(res->gold_at[j], dv, m * 8, st);
	if (!r)
		r = cuStreamSynchronize(st);
	if (di)
		cuMemFree(di);
	if (dv)
		cuMemFree(dv);
	if (r)
		return ka_err_set(e, "check: gathering output %d's gold: %s", j, dc_err(r));
	return 0;
}

int devcheck_run(CUstream st, const struct runner_check *c, const struct devcheck_tensors *t,
		 struct runner_check_result *res, struct ka_err *e)
{
	size_t off[RUNNER_MAX_TENSORS];
	if (dc_buffers(t, off, e))
		return -1;
	double t0 = util_now();
	if (dc_gold_run(st, c, t, off, e))
		return -1;
	double t1 = util_now();
	for (int j = 0; j < t->n_outputs; j++) {
		const double *gold = (const double *)(dc_gold + off[j]);
		if (dc_compare(st, c, t, j, gold, &res->out[j], e) ||
		    dc_gather(st, c, j, gold, res, e))
			return -1;
	}
	res->gold_ms = (t1 - t0) * 1e3;
	res->compare_ms = (util_now() - t1) * 1e3;
	return 0;
}

void devcheck_release(void)
{
	for (int i = 0; i < dc_n_mod; i++)
		if (dc_mod[i].mod)
			cuModuleUnload(dc_mod[i].mod);
	dc_n_mod = 0;
	if (dc_gold)
		cuMemFree(dc_gold);
	if (dc_acc)
		cuMemFree(dc_acc);
	dc_gold = dc_acc = 0;
	dc_gold_bytes = 0;
}
