/* record_cuda.c: the recording CUDA runtime (docs/cuda-target.md). Linked into
 * ka-record-cuda and exported (record_cuda.dynlist) to the candidate's shared object,
 * which nvcc built with -cudart none, so every runtime call its host code and
 * its <<<>>> launches make lands here. Nothing runs on a GPU and no CUDA
 * library is loaded: launches, memsets, device-to-device copies, symbol
 * uploads, attributes and workspace requests are written into the launch
 * plan; queries are answered from the request's device properties and the
 * module's kernel attributes (which the parent read from the cubin, or the
 * runner from the real device). Pointers are fake device addresses, one
 * 64 GiB window per buffer, so any 8-byte word of a kernel argument that falls
 * in a buffer becomes a relocation. Streams, events, graphs, synchronisation,
 * allocation, libraries and driver entry points are refused (record_error) by
 * classify before the candidate is loaded, except the recorded cuBLAS of
 * record_cublas.c where the request's "libraries" lists cublas. cuTensorMapEncodeTiled is
 * recorded as a plan tensor map: the candidate gets 128 bytes of a fake
 * encoding (a magic word and the map's index) that may only reach a kernel
 * as a whole __grid_constant__ const CUtensorMap parameter, where it becomes a
 * tensor map relocation. Declarations follow CUDA 13.0's
 * headers (crt/host_runtime.h, cuda_runtime_api.h, driver_types.h); the
 * structure offsets are checked by tests/unit/test_cudac.c against nvcc. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cudasym.h"
#include "../common/elfread.h"
#include "record.h"
#include "record_cuda.h"

/* ---- CUDA 13 ABI pieces (values from the toolkit headers) ---- */

typedef int cudaError_t;
enum {
	CUDA_SUCCESS_ = 0,
	CUDA_ERR_INVALID_VALUE = 1,
	CUDA_ERR_MEMORY_ALLOCATION = 2,
	CUDA_ERR_INVALID_CONFIGURATION = 9,
	CUDA_ERR_INVALID_SYMBOL = 13,
	CUDA_ERR_INVALID_DEVICE_FUNCTION = 98,
	CUDA_ERR_INVALID_DEVICE = 101,
	CUDA_ERR_INVALID_RESOURCE_HANDLE = 400,
	CUDA_ERR_NOT_SUPPORTED = 801,
};

struct dim3_ {
	unsigned x, y, z;
};

/* cudaLaunchConfig_t and cudaLaunchAttribute (sizes 56 and 72). */
struct launch_attr_ {
	int id;
	int pad_;
	union {
		unsigned char raw[64];
		struct {
			unsigned x, y, z;
		} cluster;
		int pdl; /* programmaticStreamSerializationAllowed */
	} val;
};
struct launch_config_ {
	struct dim3_ grid, block;
	size_t smem;
	void *stream;
	struct launch_attr_ *attrs;
	unsigned num_attrs;
};
_Static_assert(sizeof(struct launch_attr_) == 72, "cudaLaunchAttribute is 72 bytes");
_Static_assert(sizeof(struct launch_config_) == 56, "cudaLaunchConfig_t is 56 bytes");

#define LAUNCH_ATTR_CLUSTER_DIM 4
#define LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION 6
#define FUNC_ATTR_MAX_DYN_SMEM 8
#define FUNC_ATTR_CARVEOUT 9
#define MEMCPY_H2D 1
#define MEMCPY_D2D 3
#define MEMCPY_DEFAULT 4
#define DEVICE_PROP_SIZE 1008
#define FUNC_ATTR_SIZE 144

/* Driver API (cuda.h) */
#define CU_ERR_INVALID_VALUE 1

/* ---- state ---- */

#define FAKE_BASE 0x5a0000000000ull
#define FAKE_SHIFT 36
#define FAKE_BUFFERS 64
#define MAX_FUNCS 256
#define MAX_VARS 256
#define MAX_KINFO ELF_MAX_KERNELS

struct kinfo {
	char name[ELF_MAX_NAME];
	int n_params;
	struct elf_param params[PLAN_MAX_ARGS];
	uint32_t param_bytes, static_smem, local_bytes, const_bytes;
	int num_regs, max_threads;
};

struct func {
	const void *host; /* the host stub nvcc registered */
	char name[ELF_MAX_NAME];
	const struct kinfo *info; /* NULL if the module has no such kernel */
	int plan_idx;		  /* -1 until first launched or configured */
	uint32_t max_dyn_smem;	  /* 0 = default */
	int32_t carveout;	  /* -1 = default */
};

struct var {
	const void *host;
	char name[PLAN_MAX_NAME];
	size_t size;
	int constant;
};

/* Device figures, H200 values unless the request says otherwise. */
struct dev {
	char name[256];
	long long total_mem, smem_per_block, smem_per_sm, smem_optin, reserved_smem, const_mem, l2,
		persist_l2, mem_pitch, tex_align;
	int regs_per_block, regs_per_sm, warp, max_threads_block, max_block[3], max_grid[3], major,
		minor, sms, max_threads_sm, max_blocks_sm, clock_khz, mem_clock_khz, bus_width,
		pageable, coop, cluster, access_window;
};

static struct {
	int n_tensors;
	uint64_t size[FAKE_BUFFERS]; /* bytes; tensors then workspaces */
	int n_kinfo;
	struct kinfo *kinfo;
	int n_funcs;
	struct func funcs[MAX_FUNCS];
	int n_vars;
	struct var vars[MAX_VARS];
	struct dev dev;
	struct plan plan; /* kernels, workspaces, ops being recorded */
	cudaError_t last_error;
	int pushed; /* a <<<>>> configuration is pending */
	struct dim3_ push_grid, push_block;
	size_t push_smem;
	void *push_stream;
	int fatbins;
} rc;

static char given_stream_obj; /* the address is the given stream's handle */
#define GIVEN_STREAM ((void *)&given_stream_obj)

static void set_error(cudaError_t err)
{
	if (err != CUDA_SUCCESS_)
		rc.last_error = err;
}

static uint64_t fake_base(int buf)
{
	return FAKE_BASE + ((uint64_t)buf << FAKE_SHIFT);
}

static int n_buffers(void)
{
	return rc.n_tensors + rc.plan.n_workspaces;
}

/* Resolve a fake device address: 1 with *buf and *off when it lies in a buffer
 * (one past the end included); 0 when it is not a fake address at all; -1
 * when it is in a buffer's window but outside the buffer. */
static int resolve(uint64_t v, int *buf, uint64_t *off)
{
	if (v < FAKE_BASE - (1ull << (FAKE_SHIFT - 1)) ||
	    v >= FAKE_BASE + ((uint64_t)FAKE_BUFFERS << FAKE_SHIFT))
		return 0;
	if (v < FAKE_BASE)
		return -1;
	int b = (int)((v - FAKE_BASE) >> FAKE_SHIFT);
	uint64_t o = v - fake_base(b);
	if (b >= n_buffers() || o > rc.size[b]) {
		*buf = b;
		*off = o;
		return -1;
	}
	*buf = b;
	*off = o;
	return 1;
}

static int stream_ok(void *stream, const char *api)
{
	if (stream == GIVEN_STREAM)
		return 1;
	if (!stream)
		record_fail("%s: on stream 0 (the legacy default stream): work must go on the "
			    "stream ka_launch was given",
			    api);
	else
		record_fail("%s: on a stream other than the one ka_launch was given", api);
	return 0;
}

/* ---- request ---- */

static json_t *cuda_obj(void)
{
	json_t *d = record_get_request() ? record_get_request()->device : NULL;
	json_t *c = json_object_get(d, "cuda");
	return json_is_object(c) ? c : d;
}

static long long jint(json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static void dev_load(json_t *o)
{
	struct dev *d = &rc.dev;
	const char *name = json_string_value(json_object_get(o, "name"));
	snprintf(d->name, sizeof d->name, "%s", name ? name : "NVIDIA H200");
	d->total_mem = jint(o, "totalGlobalMem", 150754820096LL);
	d->smem_per_block = jint(o, "sharedMemPerBlock", 49152);
	d->smem_per_sm = jint(o, "sharedMemPerMultiprocessor", 233472);
	d->smem_optin = jint(o, "sharedMemPerBlockOptin", 232448);
	d->reserved_smem = jint(o, "reservedSharedMemPerBlock", 1024);
	d->const_mem = jint(o, "totalConstMem", 65536);
	d->l2 = jint(o, "l2CacheSize", 62914560);
	d->persist_l2 = jint(o, "persistingL2CacheMaxSize", 38797312);
	d->mem_pitch = jint(o, "memPitch", 2147483647);
	d->tex_align = jint(o, "textureAlignment", 512);
	d->regs_per_block = (int)jint(o, "regsPerBlock", 65536);
	d->regs_per_sm = (int)jint(o, "regsPerMultiprocessor", 65536);
	d->warp = (int)jint(o, "warpSize", 32);
	d->max_threads_block = (int)jint(o, "maxThreadsPerBlock", 1024);
	static const int mb[3] = {1024, 1024, 64}, mg[3] = {2147483647, 65535, 65535};
	json_t *a = json_object_get(o, "maxThreadsDim"), *g = json_object_get(o, "maxGridSize");
	for (int i = 0; i < 3; i++) {
		json_t *x = json_array_get(a, (size_t)i), *y = json_array_get(g, (size_t)i);
		d->max_block[i] = json_is_integer(x) ? (int)json_integer_value(x) : mb[i];
		d->max_grid[i] = json_is_integer(y) ? (int)json_integer_value(y) : mg[i];
	}
	d->major = (int)jint(o, "major", 9);
	d->minor = (int)jint(o, "minor", 0);
	d->sms = (int)jint(o, "multiProcessorCount", 132);
	d->max_threads_sm = (int)jint(o, "maxThreadsPerMultiProcessor", 2048);
	d->max_blocks_sm = (int)jint(o, "maxBlocksPerMultiProcessor", 32);
	d->clock_khz = (int)jint(o, "clockRate", 1980000);
	d->mem_clock_khz = (int)jint(o, "memoryClockRate", 3201000);
	d->bus_width = (int)jint(o, "memoryBusWidth", 6144);
	d->pageable = (int)jint(o, "pageableMemoryAccess", 0);
	d->coop = (int)jint(o, "cooperativeLaunch", 1);
	d->cluster = (int)jint(o, "clusterLaunch", 1);
	d->access_window = (int)jint(o, "accessPolicyMaxWindowSize", 134213632);
}

static int kinfo_load(json_t *arr, struct ka_err *e)
{
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	if (n > MAX_KINFO)
		return ka_err_set(e, "request: device.kernels: %zu kernels, over the cap", n);
	rc.kinfo = xcalloc(n ? n : 1, sizeof *rc.kinfo);
	for (size_t i = 0; i < n; i++) {
		json_t *k = json_array_get(arr, i);
		struct kinfo *ki = &rc.kinfo[i];
		const char *name = json_string_value(json_object_get(k, "name"));
		json_t *ps = json_object_get(k, "params");
		if (!name || strlen(name) >= sizeof ki->name || !json_is_array(ps))
			return ka_err_set(e, "request: device.kernels[%zu]: bad name or params", i);
		snprintf(ki->name, sizeof ki->name, "%s", name);
		size_t np = json_array_size(ps);
		/* More than the plan can carry: the kernel stays unusable (launch ->
		 * record_error), the request is still fine. */
		ki->n_params = np > PLAN_MAX_ARGS ? -1 : (int)np;
		for (size_t p = 0; p < np && p < PLAN_MAX_ARGS; p++) {
			json_t *jp = json_array_get(ps, p);
			long long off = jint(jp, "offset", -1), sz = jint(jp, "size", -1);
			if (off < 0 || sz < 0 || off + sz > 65536)
				return ka_err_set(e,
						  "request: device.kernels[%zu].params[%zu]: bad "
						  "offset or size",
						  i, p);
			ki->params[p].offset = (uint32_t)off;
			ki->params[p].size = (uint32_t)sz;
		}
		ki->param_bytes = (uint32_t)jint(k, "param_bytes", 0);
		ki->num_regs = (int)jint(k, "num_regs", 32);
		ki->static_smem = (uint32_t)jint(k, "static_smem", 0);
		ki->local_bytes = (uint32_t)jint(k, "local_bytes", 0);
		ki->const_bytes = (uint32_t)jint(k, "const_bytes", 0);
		ki->max_threads = (int)jint(k, "max_threads", 0);
		rc.n_kinfo = (int)i + 1;
	}
	return 0;
}

/* The libraries the task's policy allows (the request's "libraries"). */
#define MAX_LIBS 4
static char allowed_libs[MAX_LIBS][16];
static int n_allowed_libs;

static int libs_load(json_t *arr, struct ka_err *e)
{
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	if (n > MAX_LIBS)
		return ka_err_set(e, "request: libraries: %zu entries, over the cap", n);
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (!s || strlen(s) >= sizeof allowed_libs[0])
			return ka_err_set(e, "request: libraries[%zu]: not a short string", i);
		snprintf(allowed_libs[i], sizeof allowed_libs[i], "%s", s);
		n_allowed_libs = (int)i + 1;
	}
	return 0;
}

int rcuda_library_allowed(const char *lib)
{
	for (int i = 0; lib && i < n_allowed_libs; i++)
		if (!strcmp(allowed_libs[i], lib))
			return 1;
	return 0;
}

static int cuda_prepare(const struct record_request *req, struct ka_err *e)
{
	rc.n_tensors = req->n_inputs + req->n_outputs;
	if (rc.n_tensors + PLAN_MAX_WORKSPACES > FAKE_BUFFERS)
		return ka_err_set(e, "request: too many tensors for the CUDA recorder");
	for (int i = 0; i < rc.n_tensors; i++) {
		if (req->tensors[i].bytes >= (1ull << FAKE_SHIFT))
			return ka_err_set(e, "request: tensors[%d] is over 64 GiB", i);
		rc.size[i] = req->tensors[i].bytes;
	}
	json_t *c = req->device;
	json_t *cu = json_object_get(c, "cuda");
	if (json_is_object(cu))
		c = cu;
	dev_load(c);
	snprintf(rc.plan.target, sizeof rc.plan.target, "cuda");
	if (libs_load(json_object_get(req->root, "libraries"), e))
		return -1;
	return kinfo_load(json_object_get(c, "kernels"), e);
}

/* Besides the shared table: hints the recorder accepts and ignores. */
#define CUDA_EXTRA_EXPORTS "cudaFuncSetCacheConfig"

static enum record_sym cuda_classify(const char *symbol)
{
	/* nvcc's host stub of a non-inline __device__ function calls exit (it
	 * is never reached: device functions cannot be called from the host).
	 * Host code calling exit itself only ends this sandboxed process
	 * (exit_group is allowed) before a plan exists: runtime_fault. */
	if (!strcmp(symbol, "exit") || !strcmp(symbol, CUDA_EXTRA_EXPORTS))
		return RECORD_SYM_PROVIDED;
	static const char *const cublas[] = {CUDASYM_CUBLAS_EXPORTS(CUDASYM_STR_) NULL};
	switch (cudasym_classify(symbol)) {
	case CUDASYM_PROVIDED: return RECORD_SYM_PROVIDED;
	case CUDASYM_LIBRARY:
		/* Recorded only where the task's policy lists the library. */
		return rcuda_library_allowed(cudasym_library(symbol)) &&
				       cudasym_in_list(symbol, cublas)
			       ? RECORD_SYM_PROVIDED
			       : RECORD_SYM_UNSUPPORTED;
	case CUDASYM_CUDA: return RECORD_SYM_UNSUPPORTED;
	case CUDASYM_OTHER_CUDA:
	case CUDASYM_OTHER: break;
	}
	return RECORD_SYM_OTHER;
}

int rcuda_resolve(const void *p, int *buf, uint64_t *off)
{
	return resolve((uint64_t)(uintptr_t)p, buf, off);
}

int rcuda_stream_ok(void *stream, const char *api)
{
	return stream_ok(stream, api);
}

int rcuda_buffers(const uint64_t **sizes)
{
	*sizes = rc.size;
	return n_buffers();
}

struct plan_op *rcuda_add_op(const char *api)
{
	if (rc.plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("%s: more than %d operations in one call", api, PLAN_MAX_OPS);
		return NULL;
	}
	return plan_add_op(&rc.plan);
}

static void *cuda_tensor_ptr(int i)
{
	return (void *)(uintptr_t)fake_base(i);
}

static int cuda_invoke(void *entry, const struct ka_args *a)
{
	int (*fn)(const struct ka_args *, void *) = (int (*)(const struct ka_args *, void *))entry;
	return fn(a, GIVEN_STREAM);
}

static int cuda_finish(struct plan *p, struct ka_err *e)
{
	if (rc.pushed)
		record_note("a <<<>>> configuration was pushed but never launched");
	for (int i = 0; i < rc.n_funcs; i++) {
		const struct func *f = &rc.funcs[i];
		if (f->plan_idx < 0)
			continue;
		struct plan_kernel *k = &rc.plan.kernels[f->plan_idx];
		k->max_dynamic_smem = f->max_dyn_smem;
		k->carveout = f->carveout;
	}
	p->n_kernels = rc.plan.n_kernels;
	memcpy(p->kernels, rc.plan.kernels, sizeof p->kernels);
	p->n_workspaces = rc.plan.n_workspaces;
	memcpy(p->workspace, rc.plan.workspace, sizeof p->workspace);
	p->n_tensormaps = rc.plan.n_tensormaps;
	memcpy(p->tensormaps, rc.plan.tensormaps, sizeof p->tensormaps);
	p->n_ops = rc.plan.n_ops;
	p->ops = rc.plan.ops;
	rc.plan.ops = NULL;
	rc.plan.n_ops = 0;
	(void)e;
	return 0;
}

static const char *const cuda_libraries[] = CUDASYM_LIBRARIES;

/* The candidate's object needs libstdc++ and libgcc_s, which cannot be opened
 * once the sandbox is up: referencing one of their symbols keeps them among
 * the recorder's own dependencies (the linker may drop an unused -lstdc++). */
int __cxa_guard_acquire(int64_t *guard);
void _Unwind_Resume(void *exception);
void *const record_cuda_keep_cxx_[] = {(void *)__cxa_guard_acquire, (void *)_Unwind_Resume};
static const char *const cuda_exports[] = {CUDASYM_RECORDER_EXPORTS(CUDASYM_STR_)
						   CUDASYM_CUBLAS_EXPORTS(CUDASYM_STR_)
							   CUDA_EXTRA_EXPORTS,
					   NULL};

const struct record_target record_target = {
	.name = "cuda",
	.exports = cuda_exports,
	.prepare = cuda_prepare,
	.classify = cuda_classify,
	.libraries = cuda_libraries,
	.tensor_ptr = cuda_tensor_ptr,
	.invoke = cuda_invoke,
	.finish = cuda_finish,
};

/* ---- registration ---- */

static struct func *func_of_host(const void *host)
{
	for (int i = 0; i < rc.n_funcs; i++)
		if (rc.funcs[i].host == host)
			return &rc.funcs[i];
	return NULL;
}

/* A handle from __cudaGetKernel must be one of ours. */
static struct func *func_of_handle(const void *h)
{
	for (int i = 0; i < rc.n_funcs; i++)
		if ((const void *)&rc.funcs[i] == h)
			return &rc.funcs[i];
	return NULL;
}

static int func_plan_idx(struct func *f)
{
	if (f->plan_idx >= 0)
		return f->plan_idx;
	if (rc.plan.n_kernels >= PLAN_MAX_KERNELS) {
		record_fail("more than %d distinct kernels launched", PLAN_MAX_KERNELS);
		return -1;
	}
	if (strlen(f->name) >= PLAN_MAX_NAME) {
		record_fail("kernel name %.80s... is over %d bytes", f->name, PLAN_MAX_NAME - 1);
		return -1;
	}
	f->plan_idx = rc.plan.n_kernels++;
	struct plan_kernel *k = &rc.plan.kernels[f->plan_idx];
	memcpy(k->name, f->name, strlen(f->name) + 1); /* length checked above */
	k->program = -1;
	k->carveout = -1;
	return f->plan_idx;
}

static char fatbin_handle_obj;

void **__cudaRegisterFatBinary(void *fat_cubin);
void **__cudaRegisterFatBinary(void *fat_cubin)
{
	(void)fat_cubin; /* the runner takes the fat binary from the file itself */
	rc.fatbins++;
	return (void **)&fatbin_handle_obj;
}

void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFatBinaryEnd(void **handle)
{
	(void)handle;
}

void __cudaUnregisterFatBinary(void **handle);
void __cudaUnregisterFatBinary(void **handle)
{
	(void)handle;
}

void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
			    const char *device_name, int thread_limit, void *tid, void *bid,
			    void *bdim, void *gdim, int *wsize);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
			    const char *device_name, int thread_limit, void *tid, void *bid,
			    void *bdim, void *gdim, int *wsize)
{
	if (rc.n_funcs >= MAX_FUNCS) {
		record_fail("__cudaRegisterFunction: more than %d kernels", MAX_FUNCS);
		return;
	}
	const char *name = device_fun ? device_fun : device_name;
	if (!name || strnlen(name, ELF_MAX_NAME) >= ELF_MAX_NAME) {
		record_fail("__cudaRegisterFunction: kernel name missing or too long");
		return;
	}
	struct func *f = &rc.funcs[rc.n_funcs++];
	memset(f, 0, sizeof *f);
	f->host = host_fun;
	snprintf(f->name, sizeof f->name, "%s", name);
	f->plan_idx = -1;
	f->carveout = -1;
	for (int i = 0; i < rc.n_kinfo; i++)
		if (!strcmp(rc.kinfo[i].name, f->name))
			f->info = &rc.kinfo[i];
}

void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name,
		       int ext, size_t size, int constant, int global);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name,
		       int ext, size_t size, int constant, int global)
{
	const char *name = device_address ? device_address : device_name;
	if (rc.n_vars >= MAX_VARS || !name || strnlen(name, PLAN_MAX_NAME) >= PLAN_MAX_NAME) {
		record_note("__cudaRegisterVar: variable not tracked");
		return;
	}
	struct var *v = &rc.vars[rc.n_vars++];
	v->host = host_var;
	snprintf(v->name, sizeof v->name, "%s", name);
	v->size = size;
	v->constant = constant;
}

unsigned __cudaPushCallConfiguration(struct dim3_ grid, struct dim3_ block, size_t smem,
				     void *stream);
unsigned __cudaPushCallConfiguration(struct dim3_ grid, struct dim3_ block, size_t smem,
				     void *stream)
{
	rc.pushed = 1;
	rc.push_grid = grid;
	rc.push_block = block;
	rc.push_smem = smem;
	rc.push_stream = stream;
	return 0;
}

cudaError_t __cudaPopCallConfiguration(struct dim3_ *grid, struct dim3_ *block, size_t *smem,
				       void *stream);
cudaError_t __cudaPopCallConfiguration(struct dim3_ *grid, struct dim3_ *block, size_t *smem,
				       void *stream)
{
	if (!rc.pushed)
		return CUDA_ERR_INVALID_CONFIGURATION;
	rc.pushed = 0;
	*grid = rc.push_grid;
	*block = rc.push_block;
	*smem = rc.push_smem;
	*(void **)stream = rc.push_stream;
	return CUDA_SUCCESS_;
}

cudaError_t __cudaGetKernel(void **kernel, const void *host_fun);
cudaError_t __cudaGetKernel(void **kernel, const void *host_fun)
{
	struct func *f = func_of_host(host_fun);
	if (!f) {
		*kernel = NULL;
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	*kernel = f;
	return CUDA_SUCCESS_;
}

/* ---- TMA descriptors ---- */

/* The fake CUtensorMap: word 0 the magic (bytes "Z\xffK-TMAP", far above the
 * fake address windows), word 1 the plan index, words 2..15 zero. */
#define TMAP_MAGIC 0x50414d542d4bff5aull
#define TMAP_WORDS (PLAN_TENSORMAP_BYTES / 8)

/* Offset of the first copy of the magic in b[from..n) at any byte offset, or
 * -1. */
static long tmap_find(const uint8_t *b, size_t n, size_t from)
{
	uint64_t m = TMAP_MAGIC;
	for (size_t i = from; i + 8 <= n; i++)
		if (!memcmp(b + i, &m, 8))
			return (long)i;
	return -1;
}

/* The index of an unmodified fake encoding at b (128 bytes), or -1. */
static int tmap_index_of(const uint8_t *b)
{
	uint64_t w[TMAP_WORDS];
	memcpy(w, b, sizeof w);
	if (w[0] != TMAP_MAGIC || w[1] >= (uint64_t)rc.plan.n_tensormaps)
		return -1;
	for (int i = 2; i < TMAP_WORDS; i++)
		if (w[i])
			return -1;
	return (int)w[1];
}

/* CUresult cuTensorMapEncodeTiled(CUtensorMap *, CUtensorMapDataType, cuuint32_t
 * rank, void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t
 * *globalStrides, const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
 * interleave, swizzle, l2Promotion, oobFill): the driver's checks
 * (plan_tensormap_check), the global address inside one buffer with the whole
 * extent, then a plan tensor map (identical requests share one). */
int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *global, const uint64_t *dims,
			   const uint64_t *strides, const uint32_t *box,
			   const uint32_t *elem_strides, int interleave, int swizzle, int l2,
			   int oob);
int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *global, const uint64_t *dims,
			   const uint64_t *strides, const uint32_t *box,
			   const uint32_t *elem_strides, int interleave, int swizzle, int l2,
			   int oob)
{
	static const char api[] = "cuTensorMapEncodeTiled";
	if (!map || (uintptr_t)map % 64) {
		record_fail("%s: the CUtensorMap at %p is not 64-byte aligned", api, map);
		return CU_ERR_INVALID_VALUE;
	}
	if (rank < 1 || rank > PLAN_TENSORMAP_MAX_RANK || !dims || !box || !elem_strides ||
	    (rank > 1 && !strides)) {
		record_fail("%s: rank %u is not 1..5 or an array is NULL", api, rank);
		return CU_ERR_INVALID_VALUE;
	}
	if (dtype < 0 || interleave < 0 || swizzle < 0 || l2 < 0 || oob < 0) {
		record_fail("%s: a negative enum value", api);
		return CU_ERR_INVALID_VALUE;
	}
	struct plan_tensormap t;
	memset(&t, 0, sizeof t);
	t.dtype = (uint32_t)dtype;
	t.rank = rank;
	for (uint32_t i = 0; i < rank; i++) {
		t.dims[i] = dims[i];
		t.box[i] = box[i];
		t.elem_strides[i] = elem_strides[i];
		if (i + 1 < rank)
			t.strides[i] = strides[i];
	}
	t.interleave = (uint32_t)interleave;
	t.swizzle = (uint32_t)swizzle;
	t.l2_promotion = (uint32_t)l2;
	t.oob_fill = (uint32_t)oob;
	int b = -1;
	uint64_t off = 0;
	if (resolve((uint64_t)(uintptr_t)global, &b, &off) != 1) {
		record_fail("%s: globalAddress %p is not inside a buffer of this call", api,
			    global);
		return CU_ERR_INVALID_VALUE;
	}
	t.global.buf = b;
	t.global.offset = off;
	char why[160];
	if (plan_tensormap_check(&t, why, sizeof why)) {
		record_fail("%s: %s", api, why);
		return CU_ERR_INVALID_VALUE;
	}
	uint64_t extent = plan_tensormap_extent(&t);
	if (extent == UINT64_MAX || extent > rc.size[b] - off) {
		record_fail("%s: the map's global extent (%llu bytes from buffer %d + %llu) runs "
			    "past the end of the buffer (%llu bytes)",
			    api, (unsigned long long)extent, b, (unsigned long long)off,
			    (unsigned long long)rc.size[b]);
		return CU_ERR_INVALID_VALUE;
	}
	int idx = -1;
	for (int i = 0; i < rc.plan.n_tensormaps && idx < 0; i++)
		if (!memcmp(&rc.plan.tensormaps[i], &t, sizeof t))
			idx = i;
	if (idx < 0) {
		if (rc.plan.n_tensormaps >= PLAN_MAX_TENSORMAPS) {
			record_fail("%s: more than %d distinct tensor maps", api,
				    PLAN_MAX_TENSORMAPS);
			return CU_ERR_INVALID_VALUE;
		}
		idx = rc.plan.n_tensormaps++;
		memcpy(&rc.plan.tensormaps[idx], &t, sizeof t);
	}
	uint64_t w[TMAP_WORDS];
	memset(w, 0, sizeof w);
	w[0] = TMAP_MAGIC;
	w[1] = (uint64_t)idx;
	memcpy(map, w, sizeof w);
	return 0;
}

/* ---- launches ---- */

/* Copy parameter i's bytes and find the pointers in it, or the one tensor map
 * it is. */
static int record_arg(const struct func *f, int i, void *src, struct plan_arg *g)
{
	const struct elf_param *pp = &f->info->params[i];
	g->kind = PLAN_ARG_BYTES;
	g->size = pp->size;
	g->bytes = xmalloc(pp->size ? pp->size : 1);
	if (pp->size)
		memcpy(g->bytes, src, pp->size);
	long tm = tmap_find(g->bytes, pp->size, 0);
	if (tm >= 0) {
		/* The parameter's alignment is the compiler's (CUtensorMap is
		 * alignas(128) in CUDA 13; nvcc aligns the constant-bank address,
		 * so the cubin's parameter offset need not be a multiple of 64:
		 * 112 for a first CUtensorMap on sm_90). */
		int idx =
			tm == 0 && pp->size == PLAN_TENSORMAP_BYTES ? tmap_index_of(g->bytes) : -1;
		if (idx < 0) {
			record_fail(
				"launch of %s: argument %d (%u bytes at parameter offset %u) "
				"holds a tensor map from cuTensorMapEncodeTiled at byte %ld that "
				"is not a whole, unmodified __grid_constant__ const CUtensorMap "
				"parameter (128 bytes)",
				f->name, i, pp->size, pp->offset, tm);
			return -1;
		}
		g->n_tmaps = 1;
		g->tmaps = xcalloc(1, sizeof *g->tmaps);
		g->tmaps[0].at = 0;
		g->tmaps[0].tensormap = idx;
		return 0;
	}
	g->relocs = xcalloc(PLAN_MAX_RELOCS, sizeof *g->relocs);
	/* Device pointers are 8-byte aligned in the parameter space. */
	for (uint32_t j = (8 - pp->offset % 8) % 8; j + 8 <= pp->size; j += 8) {
		uint64_t v;
		memcpy(&v, g->bytes + j, 8);
		int b = -1;
		uint64_t off = 0;
		int r = resolve(v, &b, &off);
		if (r == 0)
			continue;
		if (r < 0) {
			record_fail("launch of %s: argument %d holds the address %#llx, outside "
				    "every buffer (buffer %d is %llu bytes)",
				    f->name, i, (unsigned long long)v, b,
				    b >= 0 && b < FAKE_BUFFERS ? (unsigned long long)rc.size[b]
							       : 0ull);
			return -1;
		}
		if (g->n_relocs >= PLAN_MAX_RELOCS) {
			record_fail("launch of %s: argument %d holds more than %d pointers",
				    f->name, i, PLAN_MAX_RELOCS);
			return -1;
		}
		g->relocs[g->n_relocs].at = j;
		g->relocs[g->n_relocs].ref.buf = b;
		g->relocs[g->n_relocs].ref.offset = off;
		g->n_relocs++;
	}
	return 0;
}

/* What cudaLaunchKernelEx's attributes asked for (plain launches: none). */
struct launch_ex {
	unsigned cluster[3]; /* 0 = none */
	int pdl;	     /* programmatic stream serialization allowed */
};

static cudaError_t launch(struct func *f, struct dim3_ grid, struct dim3_ block, void **args,
			  size_t smem, void *stream, const struct launch_ex *ex, const char *api)
{
	const unsigned *cluster = ex ? ex->cluster : NULL;
	if (!stream_ok(stream, api))
		return CUDA_ERR_INVALID_RESOURCE_HANDLE;
	if (!f) {
		record_fail("%s: not a kernel of this module", api);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	if (!f->info || f->info->n_params < 0) {
		record_fail("%s: kernel %s has no parameter layout (not in the module's cubin, "
			    "or over %d parameters)",
			    api, f->name, PLAN_MAX_ARGS);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	const struct dev *d = &rc.dev;
	uint64_t threads = (uint64_t)block.x * block.y * block.z;
	int max_t = f->info->max_threads > 0 ? f->info->max_threads : d->max_threads_block;
	if (!grid.x || !grid.y || !grid.z || !threads || block.x > (unsigned)d->max_block[0] ||
	    block.y > (unsigned)d->max_block[1] || block.z > (unsigned)d->max_block[2] ||
	    grid.x > (unsigned)d->max_grid[0] || grid.y > (unsigned)d->max_grid[1] ||
	    grid.z > (unsigned)d->max_grid[2] || threads > (uint64_t)max_t) {
		record_fail("%s: launch of %s with grid (%u,%u,%u) and block (%u,%u,%u) is invalid "
			    "on this device (at most %d threads per block for this kernel)",
			    api, f->name, grid.x, grid.y, grid.z, block.x, block.y, block.z, max_t);
		return CUDA_ERR_INVALID_CONFIGURATION;
	}
	uint64_t dyn_max = f->max_dyn_smem ? f->max_dyn_smem
					   : (uint64_t)d->smem_per_block - f->info->static_smem;
	if (smem > dyn_max) {
		record_fail("%s: launch of %s asks for %zu bytes of dynamic shared memory; the "
			    "limit is %llu (raise it with cudaFuncSetAttribute("
			    "cudaFuncAttributeMaxDynamicSharedMemorySize))",
			    api, f->name, smem, (unsigned long long)dyn_max);
		return CUDA_ERR_INVALID_VALUE;
	}
	if (cluster && (cluster[0] | cluster[1] | cluster[2])) {
		unsigned c0 = cluster[0] ? cluster[0] : 1, c1 = cluster[1] ? cluster[1] : 1,
			 c2 = cluster[2] ? cluster[2] : 1;
		if (!d->cluster || grid.x % c0 || grid.y % c1 || grid.z % c2 ||
		    (uint64_t)c0 * c1 * c2 > 16) {
			record_fail("%s: launch of %s: cluster (%u,%u,%u) does not divide grid "
				    "(%u,%u,%u) or is over the device's limit",
				    api, f->name, c0, c1, c2, grid.x, grid.y, grid.z);
			return CUDA_ERR_INVALID_CONFIGURATION;
		}
	}
	if (rc.plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("%s: more than %d operations in one call", api, PLAN_MAX_OPS);
		return CUDA_ERR_NOT_SUPPORTED;
	}
	int kidx = func_plan_idx(f);
	if (kidx < 0)
		return CUDA_ERR_NOT_SUPPORTED;
	int np = f->info->n_params;
	if (np && !args) {
		record_fail("%s: launch of %s without its %d arguments", api, f->name, np);
		return CUDA_ERR_INVALID_VALUE;
	}
	struct plan_op *o = plan_add_op(&rc.plan);
	o->kind = PLAN_OP_LAUNCH;
	o->kernel = kidx;
	o->work_dim = 3;
	o->grid[0] = grid.x;
	o->grid[1] = grid.y;
	o->grid[2] = grid.z;
	o->block[0] = block.x;
	o->block[1] = block.y;
	o->block[2] = block.z;
	if (cluster)
		for (int i = 0; i < 3; i++)
			o->cluster[i] = cluster[i];
	o->pdl = ex && ex->pdl;
	o->smem = (uint32_t)smem;
	o->args = xcalloc(np ? (size_t)np : 1, sizeof *o->args);
	for (int i = 0; i < np; i++) {
		o->n_args = i + 1;
		if (record_arg(f, i, args[i], &o->args[i]))
			return CUDA_ERR_INVALID_VALUE;
	}
	return CUDA_SUCCESS_;
}

cudaError_t __cudaLaunchKernel(void *kernel, struct dim3_ grid, struct dim3_ block, void **args,
			       size_t smem, void *stream);
cudaError_t __cudaLaunchKernel(void *kernel, struct dim3_ grid, struct dim3_ block, void **args,
			       size_t smem, void *stream)
{
	cudaError_t err =
		launch(func_of_handle(kernel), grid, block, args, smem, stream, NULL, "<<<>>>");
	set_error(err);
	return err;
}

cudaError_t cudaLaunchKernel(const void *func, struct dim3_ grid, struct dim3_ block, void **args,
			     size_t smem, void *stream);
cudaError_t cudaLaunchKernel(const void *func, struct dim3_ grid, struct dim3_ block, void **args,
			     size_t smem, void *stream)
{
	cudaError_t err = launch(func_of_host(func), grid, block, args, smem, stream, NULL,
				 "cudaLaunchKernel");
	set_error(err);
	return err;
}

/* A launch attribute's name (cudaLaunchAttributeID of CUDA 13), for errors;
 * an unknown id gives "number N". Not reentrant (a static buffer). */
static const char *launch_attr_name(int id)
{
	static const char *const names[] = {"Ignore",
					    "AccessPolicyWindow",
					    "Cooperative",
					    "SynchronizationPolicy",
					    "ClusterDimension",
					    "ClusterSchedulingPolicyPreference",
					    "ProgrammaticStreamSerialization",
					    "ProgrammaticEvent",
					    "Priority",
					    "MemSyncDomainMap",
					    "MemSyncDomain",
					    "PreferredClusterDimension",
					    "LaunchCompletionEvent",
					    "DeviceUpdatableKernelNode",
					    "PreferredSharedMemoryCarveout",
					    NULL,
					    "NvlinkUtilCentricScheduling"};
	static char buf[64];
	if (id >= 0 && id < (int)(sizeof names / sizeof names[0]) && names[id])
		snprintf(buf, sizeof buf, "cudaLaunchAttribute%s (%d)", names[id], id);
	else
		snprintf(buf, sizeof buf, "number %d", id);
	return buf;
}

cudaError_t cudaLaunchKernelExC(const struct launch_config_ *cfg, const void *func, void **args);
cudaError_t cudaLaunchKernelExC(const struct launch_config_ *cfg, const void *func, void **args)
{
	struct launch_ex ex = {{0, 0, 0}, 0};
	if (!cfg) {
		set_error(CUDA_ERR_INVALID_VALUE);
		return CUDA_ERR_INVALID_VALUE;
	}
	if (cfg->num_attrs > 16 || (cfg->num_attrs && !cfg->attrs)) {
		record_fail("cudaLaunchKernelEx: bad attribute list");
		return CUDA_ERR_INVALID_VALUE;
	}
	for (unsigned i = 0; i < cfg->num_attrs; i++) {
		const struct launch_attr_ *a = &cfg->attrs[i];
		if (a->id == LAUNCH_ATTR_CLUSTER_DIM) {
			ex.cluster[0] = a->val.cluster.x;
			ex.cluster[1] = a->val.cluster.y;
			ex.cluster[2] = a->val.cluster.z;
		} else if (a->id == LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION) {
			/* CUDA reads any non-zero value as 1; the plan holds 0 or 1
			 * exactly, so another value is refused rather than guessed. */
			if (a->val.pdl != 0 && a->val.pdl != 1) {
				record_fail("cudaLaunchKernelEx: %s: value %d is not 0 or 1",
					    launch_attr_name(a->id), a->val.pdl);
				return CUDA_ERR_INVALID_VALUE;
			}
			ex.pdl = a->val.pdl;
		} else {
			record_fail("cudaLaunchKernelEx: launch attribute %s is not supported "
				    "(only cudaLaunchAttributeClusterDimension and "
				    "cudaLaunchAttributeProgrammaticStreamSerialization)",
				    launch_attr_name(a->id));
			return CUDA_ERR_NOT_SUPPORTED;
		}
	}
	cudaError_t err = launch(func_of_host(func), cfg->grid, cfg->block, args, cfg->smem,
				 cfg->stream, &ex, "cudaLaunchKernelEx");
	set_error(err);
	return err;
}

/* ---- attributes and queries ---- */

cudaError_t cudaFuncSetAttribute(const void *func, int attr, int value);
cudaError_t cudaFuncSetAttribute(const void *func, int attr, int value)
{
	struct func *f = func_of_host(func);
	if (!f) {
		set_error(CUDA_ERR_INVALID_DEVICE_FUNCTION);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	if (attr == FUNC_ATTR_MAX_DYN_SMEM) {
		long long stat = f->info ? f->info->static_smem : 0;
		if (value < 0 || value + stat > rc.dev.smem_optin) {
			set_error(CUDA_ERR_INVALID_VALUE);
			return CUDA_ERR_INVALID_VALUE;
		}
		f->max_dyn_smem = (uint32_t)value;
	} else if (attr == FUNC_ATTR_CARVEOUT) {
		if (value < -1 || value > 100) {
			set_error(CUDA_ERR_INVALID_VALUE);
			return CUDA_ERR_INVALID_VALUE;
		}
		f->carveout = value;
	} else {
		record_note("cudaFuncSetAttribute: attribute %d of %s not recorded", attr, f->name);
	}
	return CUDA_SUCCESS_;
}

/* A cache preference (cudaFuncCachePreferNone/Shared/L1/Equal, 0..3) is a
 * hint the device may ignore: accepted for a known kernel, not recorded (the
 * replay runs with the default preference). */
cudaError_t cudaFuncSetCacheConfig(const void *func, int config);
cudaError_t cudaFuncSetCacheConfig(const void *func, int config)
{
	struct func *f = func_of_host(func);
	if (!f) {
		set_error(CUDA_ERR_INVALID_DEVICE_FUNCTION);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	if (config < 0 || config > 3) {
		set_error(CUDA_ERR_INVALID_VALUE);
		return CUDA_ERR_INVALID_VALUE;
	}
	record_note("cudaFuncSetCacheConfig(%s, %d): a hint, ignored", f->name, config);
	return CUDA_SUCCESS_;
}

static int max_threads_of(const struct kinfo *k)
{
	int limit = k->max_threads > 0 ? k->max_threads : rc.dev.max_threads_block;
	if (k->num_regs > 0) {
		int per_warp = (k->num_regs * 32 + 255) / 256 * 256;
		int warps = rc.dev.regs_per_block / per_warp;
		if (warps * 32 < limit)
			limit = warps * 32;
	}
	return limit;
}

cudaError_t cudaFuncGetAttributes(void *attr, const void *func);
cudaError_t cudaFuncGetAttributes(void *attr, const void *func)
{
	struct func *f = func_of_host(func);
	if (!f || !f->info || !attr) {
		set_error(CUDA_ERR_INVALID_DEVICE_FUNCTION);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	const struct kinfo *k = f->info;
	unsigned char *b = attr;
	memset(b, 0, FUNC_ATTR_SIZE);
	size_t z;
	int v;
	z = k->static_smem;
	memcpy(b + 0, &z, 8);
	z = k->const_bytes;
	memcpy(b + 8, &z, 8);
	z = k->local_bytes;
	memcpy(b + 16, &z, 8);
	v = max_threads_of(k);
	memcpy(b + 24, &v, 4);
	v = k->num_regs;
	memcpy(b + 28, &v, 4);
	v = rc.dev.major * 10 + rc.dev.minor;
	memcpy(b + 32, &v, 4);
	memcpy(b + 36, &v, 4);
	v = f->max_dyn_smem ? (int)f->max_dyn_smem : (int)(rc.dev.smem_per_block - k->static_smem);
	memcpy(b + 44, &v, 4);
	v = f->carveout;
	memcpy(b + 48, &v, 4);
	return CUDA_SUCCESS_;
}

cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDevice(int *device)
{
	*device = 0;
	return CUDA_SUCCESS_;
}

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceCount(int *count)
{
	*count = 1;
	return CUDA_SUCCESS_;
}

cudaError_t cudaSetDevice(int device);
cudaError_t cudaSetDevice(int device)
{
	if (device != 0) {
		set_error(CUDA_ERR_INVALID_DEVICE);
		return CUDA_ERR_INVALID_DEVICE;
	}
	return CUDA_SUCCESS_;
}

cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaDriverGetVersion(int *v)
{
	*v = (int)jint(cuda_obj(), "driverVersion", 13000);
	return CUDA_SUCCESS_;
}

cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS_;
}

static void put32(unsigned char *b, size_t off, long long v)
{
	int x = (int)v;
	memcpy(b + off, &x, 4);
}

static void put64(unsigned char *b, size_t off, long long v)
{
	memcpy(b + off, &v, 8);
}

/* cudaDeviceProp as CUDA 13.0 lays it out (1008 bytes). */
cudaError_t cudaGetDeviceProperties(void *prop, int device);
cudaError_t cudaGetDeviceProperties(void *prop, int device)
{
	if (device != 0 || !prop) {
		set_error(CUDA_ERR_INVALID_DEVICE);
		return CUDA_ERR_INVALID_DEVICE;
	}
	const struct dev *d = &rc.dev;
	unsigned char *b = prop;
	memset(b, 0, DEVICE_PROP_SIZE);
	snprintf((char *)b, 256, "%s", d->name);
	put64(b, 288, d->total_mem);
	put64(b, 296, d->smem_per_block);
	put32(b, 304, d->regs_per_block);
	put32(b, 308, d->warp);
	put64(b, 312, d->mem_pitch);
	put32(b, 320, d->max_threads_block);
	for (int i = 0; i < 3; i++) {
		put32(b, 324 + 4 * (size_t)i, d->max_block[i]);
		put32(b, 336 + 4 * (size_t)i, d->max_grid[i]);
	}
	put64(b, 352, d->const_mem);
	put32(b, 360, d->major);
	put32(b, 364, d->minor);
	put64(b, 368, d->tex_align);
	put64(b, 376, 32);
	put32(b, 384, d->sms);
	put32(b, 560, 1); /* concurrentKernels */
	put32(b, 564, 1); /* ECCEnabled */
	put32(b, 584, 3); /* asyncEngineCount */
	put32(b, 588, 1); /* unifiedAddressing */
	put32(b, 592, d->bus_width);
	put32(b, 596, d->l2);
	put32(b, 600, d->persist_l2);
	put32(b, 604, d->max_threads_sm);
	put32(b, 608, 1); /* streamPrioritiesSupported */
	put32(b, 612, 1); /* globalL1CacheSupported */
	put32(b, 616, 1); /* localL1CacheSupported */
	put64(b, 624, d->smem_per_sm);
	put32(b, 632, d->regs_per_sm);
	put32(b, 636, 1); /* managedMemory */
	put32(b, 652, d->pageable);
	put32(b, 660, 1); /* computePreemptionSupported */
	put32(b, 668, d->coop);
	put64(b, 672, d->smem_optin);
	put32(b, 688, d->max_blocks_sm);
	put32(b, 692, d->access_window);
	put64(b, 696, d->reserved_smem);
	put32(b, 748, d->cluster);
	return CUDA_SUCCESS_;
}

cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device);
cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device)
{
	const struct dev *d = &rc.dev;
	if (device != 0 || !value) {
		set_error(CUDA_ERR_INVALID_DEVICE);
		return CUDA_ERR_INVALID_DEVICE;
	}
	long long v;
	switch (attr) {
	case 1: v = d->max_threads_block; break;
	case 2:
	case 3:
	case 4: v = d->max_block[attr - 2]; break;
	case 5:
	case 6:
	case 7: v = d->max_grid[attr - 5]; break;
	case 8: v = d->smem_per_block; break;
	case 9: v = d->const_mem; break;
	case 10: v = d->warp; break;
	case 11: v = d->mem_pitch; break;
	case 12: v = d->regs_per_block; break;
	case 13: v = d->clock_khz; break;
	case 14: v = d->tex_align; break;
	case 15: v = 1; break; /* gpuOverlap */
	case 16: v = d->sms; break;
	case 17: v = 0; break; /* kernelExecTimeout */
	case 18: v = 0; break; /* integrated */
	case 19: v = 1; break; /* canMapHostMemory */
	case 20: v = 0; break; /* computeMode default */
	case 31: v = 1; break; /* concurrentKernels */
	case 32: v = 1; break; /* ECC */
	case 36: v = d->mem_clock_khz; break;
	case 37: v = d->bus_width; break;
	case 38: v = d->l2; break;
	case 39: v = d->max_threads_sm; break;
	case 40: v = 3; break; /* asyncEngineCount */
	case 41: v = 1; break; /* unifiedAddressing */
	case 75: v = d->major; break;
	case 76: v = d->minor; break;
	case 78:
	case 79:
	case 80: v = 1; break;
	case 81: v = d->smem_per_sm; break;
	case 82: v = d->regs_per_sm; break;
	case 83: v = 1; break; /* managedMemory */
	case 88: v = d->pageable; break;
	case 95: v = d->coop; break;
	case 97: v = d->smem_optin; break;
	case 106: v = d->max_blocks_sm; break;
	case 108: v = d->persist_l2; break;
	case 109: v = d->access_window; break;
	case 111: v = d->reserved_smem; break;
	case 120: v = d->cluster; break;
	default:
		record_note("cudaDeviceGetAttribute: attribute %d not known to the recorder", attr);
		set_error(CUDA_ERR_INVALID_VALUE);
		return CUDA_ERR_INVALID_VALUE;
	}
	*value = (int)v;
	return CUDA_SUCCESS_;
}

/* The CUDA occupancy calculation for the device's figures: the least of the
 * block, warp, register and shared-memory limits per SM. */
static int occupancy(const struct func *f, int block_size, size_t dyn_smem)
{
	const struct dev *d = &rc.dev;
	const struct kinfo *k = f->info;
	if (block_size <= 0 || block_size > max_threads_of(k))
		return 0;
	int warps = (block_size + d->warp - 1) / d->warp;
	int lim = d->max_blocks_sm;
	int by_warps = d->max_threads_sm / d->warp / warps;
	if (by_warps < lim)
		lim = by_warps;
	if (k->num_regs > 0) {
		int per_warp = (k->num_regs * d->warp + 255) / 256 * 256;
		int by_regs = (d->regs_per_sm / per_warp) / warps;
		if (by_regs < lim)
			lim = by_regs;
	}
	long long smem = (long long)k->static_smem + (long long)dyn_smem + d->reserved_smem;
	smem = (smem + 127) / 128 * 128;
	if (smem > 0) {
		long long by_smem = d->smem_per_sm / smem;
		if (by_smem < lim)
			lim = (int)by_smem;
	}
	return lim < 0 ? 0 : lim;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func,
								   int block_size, size_t dyn_smem,
								   unsigned flags);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func,
								   int block_size, size_t dyn_smem,
								   unsigned flags)
{
	struct func *f = func_of_host(func);
	(void)flags;
	if (!f || !f->info || !n) {
		set_error(CUDA_ERR_INVALID_DEVICE_FUNCTION);
		return CUDA_ERR_INVALID_DEVICE_FUNCTION;
	}
	*n = occupancy(f, block_size, dyn_smem);
	return CUDA_SUCCESS_;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block_size,
							  size_t dyn_smem);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block_size,
							  size_t dyn_smem)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, block_size, dyn_smem,
								      0);
}

/* ---- memory operations ---- */

cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, void *stream);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, void *stream)
{
	if (!stream_ok(stream, "cudaMemsetAsync"))
		return CUDA_ERR_INVALID_RESOURCE_HANDLE;
	int b = -1;
	uint64_t off = 0;
	if (resolve((uint64_t)(uintptr_t)dst, &b, &off) != 1 || count > rc.size[b] - off) {
		record_fail("cudaMemsetAsync: %zu bytes at %p are not inside one buffer", count,
			    dst);
		return CUDA_ERR_INVALID_VALUE;
	}
	if (rc.plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("cudaMemsetAsync: more than %d operations in one call", PLAN_MAX_OPS);
		return CUDA_ERR_NOT_SUPPORTED;
	}
	struct plan_op *o = plan_add_op(&rc.plan);
	o->kind = PLAN_OP_FILL;
	o->dst.buf = b;
	o->dst.offset = off;
	o->size = count;
	o->pattern[0] = (uint8_t)value;
	o->pattern_size = 1;
	return CUDA_SUCCESS_;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, void *stream);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, void *stream)
{
	if (!stream_ok(stream, "cudaMemcpyAsync"))
		return CUDA_ERR_INVALID_RESOURCE_HANDLE;
	int bd = -1, bs = -1;
	uint64_t od = 0, os = 0;
	int rd = resolve((uint64_t)(uintptr_t)dst, &bd, &od);
	int rs = resolve((uint64_t)(uintptr_t)src, &bs, &os);
	if ((kind != MEMCPY_D2D && kind != MEMCPY_DEFAULT) || rd != 1 || rs != 1) {
		record_fail("cudaMemcpyAsync: only device-to-device copies between the task's "
			    "buffers and workspaces can be recorded (kind %d)",
			    kind);
		return CUDA_ERR_NOT_SUPPORTED;
	}
	if (count > rc.size[bd] - od || count > rc.size[bs] - os) {
		record_fail("cudaMemcpyAsync: %zu bytes run past the end of a buffer", count);
		return CUDA_ERR_INVALID_VALUE;
	}
	if (rc.plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("cudaMemcpyAsync: more than %d operations in one call", PLAN_MAX_OPS);
		return CUDA_ERR_NOT_SUPPORTED;
	}
	struct plan_op *o = plan_add_op(&rc.plan);
	o->kind = PLAN_OP_COPY;
	o->dst.buf = bd;
	o->dst.offset = od;
	o->src.buf = bs;
	o->src.offset = os;
	o->size = count;
	return CUDA_SUCCESS_;
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
				    size_t offset, int kind, void *stream);
cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
				    size_t offset, int kind, void *stream)
{
	if (!stream_ok(stream, "cudaMemcpyToSymbolAsync"))
		return CUDA_ERR_INVALID_RESOURCE_HANDLE;
	const struct var *v = NULL;
	for (int i = 0; i < rc.n_vars; i++)
		if (rc.vars[i].host == symbol)
			v = &rc.vars[i];
	if (!v) {
		set_error(CUDA_ERR_INVALID_SYMBOL);
		return CUDA_ERR_INVALID_SYMBOL;
	}
	int b = -1;
	uint64_t off = 0;
	if ((kind != MEMCPY_H2D && kind != MEMCPY_DEFAULT) ||
	    resolve((uint64_t)(uintptr_t)src, &b, &off) != 0) {
		record_fail("cudaMemcpyToSymbolAsync: only host-to-symbol copies can be recorded");
		return CUDA_ERR_NOT_SUPPORTED;
	}
	if (offset > v->size || count > v->size - offset || count > PLAN_MAX_SYMBOL_BYTES) {
		record_fail("cudaMemcpyToSymbolAsync: %zu bytes at offset %zu do not fit %s (%zu "
			    "bytes, cap %u)",
			    count, offset, v->name, v->size, PLAN_MAX_SYMBOL_BYTES);
		return CUDA_ERR_INVALID_VALUE;
	}
	if (rc.plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("cudaMemcpyToSymbolAsync: more than %d operations", PLAN_MAX_OPS);
		return CUDA_ERR_NOT_SUPPORTED;
	}
	if (count && tmap_find(src, count, 0) >= 0) {
		record_fail("cudaMemcpyToSymbolAsync: the data holds a tensor map from "
			    "cuTensorMapEncodeTiled; pass it as a __grid_constant__ const "
			    "CUtensorMap kernel parameter");
		return CUDA_ERR_NOT_SUPPORTED;
	}
	struct plan_op *o = plan_add_op(&rc.plan);
	o->kind = PLAN_OP_SYMBOL;
	snprintf(o->symbol, sizeof o->symbol, "%s", v->name);
	o->dst.buf = -1;
	o->dst.offset = offset;
	o->size = count;
	o->data = xmalloc(count ? count : 1);
	if (count)
		memcpy(o->data, src, count);
	return CUDA_SUCCESS_;
}

void *ka_workspace(size_t bytes)
{
	if (bytes == 0 || bytes > PLAN_MAX_WORKSPACE_BYTES ||
	    rc.plan.n_workspaces >= PLAN_MAX_WORKSPACES ||
	    rc.n_tensors + rc.plan.n_workspaces >= FAKE_BUFFERS) {
		record_note("ka_workspace(%zu): over the cap, returned NULL", bytes);
		return NULL;
	}
	int w = rc.plan.n_workspaces++;
	rc.plan.workspace[w] = bytes;
	rc.size[rc.n_tensors + w] = bytes;
	return (void *)(uintptr_t)fake_base(rc.n_tensors + w);
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void);
cudaError_t cudaGetLastError(void)
{
	cudaError_t e = rc.last_error;
	rc.last_error = CUDA_SUCCESS_;
	return e;
}

cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaPeekAtLastError(void)
{
	return rc.last_error;
}

static const struct {
	int code;
	const char *name, *text;
} error_names[] = {
	{CUDA_SUCCESS_, "cudaSuccess", "no error"},
	{CUDA_ERR_INVALID_VALUE, "cudaErrorInvalidValue", "invalid argument"},
	{CUDA_ERR_MEMORY_ALLOCATION, "cudaErrorMemoryAllocation", "out of memory"},
	{CUDA_ERR_INVALID_CONFIGURATION, "cudaErrorInvalidConfiguration",
	 "invalid configuration argument"},
	{CUDA_ERR_INVALID_SYMBOL, "cudaErrorInvalidSymbol", "invalid device symbol"},
	{CUDA_ERR_INVALID_DEVICE_FUNCTION, "cudaErrorInvalidDeviceFunction",
	 "invalid device function"},
	{CUDA_ERR_INVALID_DEVICE, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{CUDA_ERR_INVALID_RESOURCE_HANDLE, "cudaErrorInvalidResourceHandle",
	 "invalid resource handle"},
	{CUDA_ERR_NOT_SUPPORTED, "cudaErrorNotSupported", "operation not supported"},
};

const char *cudaGetErrorString(cudaError_t err);
const char *cudaGetErrorString(cudaError_t err)
{
	for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
		if (error_names[i].code == err)
			return error_names[i].text;
	return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t err);
const char *cudaGetErrorName(cudaError_t err)
{
	for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
		if (error_names[i].code == err)
			return error_names[i].name;
	return "cudaErrorUnknown";
}
