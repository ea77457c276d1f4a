/* run_opencl.c: ka-run-opencl, the trusted OpenCL runner (engine + main).
 *
 *   ka-run-opencl [--platform SUBSTR] [--device N]
 *
 * One platform, one device, one context, one in-order profiling queue. It
 * builds the plan's OpenCL C sources (never any host code), validates every
 * launch against the real kernels (argument count, address spaces, sizes,
 * work sizes), allocates each buffer as a sub-buffer between two canary
 * regions, and per call regenerates the inputs with include/ka_gen.h's
 * kernel, poisons outputs and workspaces, replays the ops, times them with
 * profiling events, and reads back what the parent needs to judge the call.
 *
 * Not here: the request loop (runner.c), gold, comparison, verdicts beyond
 * compile_error / launch_error / runtime_fault (the parent's job). On PoCL the
 * candidate's kernels run on this process's own threads and could read or
 * write its memory: results there are test-grade (docs/runner.md). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ka_gen.h"
#include "../common/clopts.h"
#include "../common/clsrc.h"
#include "confine.h"
#include "../common/dtype.h"
#include "runner.h"

#define OCL_MAX_VIEWS 1024	      /* sub-buffers for nonzero argument offsets */
#define OCL_MAX_BUILD_LOG (64u << 20) /* bigger logs are not even read */
/* A program whose build, or whose kernels' compile at their first launch,
 * adds more than this to the private driver cache is refused
 * (compile_error): PoCL keeps each kernel it compiles there, a large
 * initialised __constant array in full inside each (a 200 MiB one left
 * about 400 MiB a program, forever). Measured on the folder, not asked of
 * the driver: PoCL answers CL_PROGRAM_BINARY_SIZES by linking every kernel
 * with a linker it must start, which the confinement refuses. */
#define OCL_MAX_PROGRAM_CACHE (64u << 20)

/* What the build or first launch that began when the cache held `before`
 * bytes added to it: over OCL_MAX_PROGRAM_CACHE, the cache is emptied and
 * verdict kind set (what names the step: compile_error for a build,
 * launch_error for a call, the verdicts a call may give); else the cache is
 * kept under its total cap. 1 with v set, or 0. */
static int cache_grew(uint64_t before, const char *kind, const char *what, struct runner_verdict *v)
{
	uint64_t now = confine_cache_bytes(), grew = now > before ? now - before : 0;
	if (grew <= OCL_MAX_PROGRAM_CACHE) {
		confine_cache_trim(CONFINE_CACHE_CAP);
		return 0;
	}
	confine_cache_trim(0); /* its entries go at once */
	return runner_verdict_set(v, kind,
				  "%s wrote %llu MiB to the driver's cache, over the cap of %u MiB "
				  "(a large initialised __constant array?)",
				  what, (unsigned long long)(grew >> 20),
				  OCL_MAX_PROGRAM_CACHE >> 20);
}

#define OCL_MAX_WORK_ITEMS (1ull << 40)

struct ocl_buf {
	cl_mem whole;	/* canary | payload | canary */
	cl_mem view;	/* the payload, origin `pre` */
	uint64_t bytes; /* payload bytes */
	size_t pre;	/* canary bytes before the payload */
	size_t total;	/* bytes of `whole` */
};

struct ocl_view {
	int buf;
	uint64_t offset;
	cl_mem mem;
};

struct ocl_slot {
	int n_prog;
	cl_program prog[PLAN_MAX_PROGRAMS];
	int n_kern;
	cl_kernel kern[PLAN_MAX_KERNELS];
	int n_bufs;
	struct ocl_buf buf[RUNNER_MAX_BUFFERS];
	int *bind_at; /* per op: index of its first argument in bind */
	cl_mem *bind; /* per launch argument: the cl_mem to bind, or NULL */
	int n_views;
	struct ocl_view views[OCL_MAX_VIEWS];
	bool launched; /* a call ran: PoCL compiled its kernels (cache_grew) */
};

struct ocl {
	const char *init_error; /* set when no device could be opened */
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	cl_program gen_prog;
	cl_kernel gen_kern;
	cl_mem flush;
	uint32_t flush_count;
	/* device properties, read once */
	char name[256], vendor[256], version[256], driver[256], c_version[256];
	char platform[256], platform_version[256];
	char *extensions;
	cl_device_type type;
	cl_uint compute_units, max_dims, addr_bits, clock_mhz, cache_line;
	size_t max_wg, max_items[3];
	cl_ulong local_mem, global_mem, max_alloc, cache;
	size_t align;	 /* base address alignment in bytes */
	cl_uint pref[7]; /* preferred vector widths: char short int long float double half */
	bool fp64, test_grade;
	uint64_t flush_bytes;
	struct ocl_slot slot[RUNNER_MAX_SLOTS];
};

static const char *cl_err_name(cl_int e)
{
	switch (e) {
#define E(x)                                                                                       \
	case x: return #x
		E(CL_SUCCESS);
		E(CL_DEVICE_NOT_FOUND);
		E(CL_DEVICE_NOT_AVAILABLE);
		E(CL_COMPILER_NOT_AVAILABLE);
		E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
		E(CL_OUT_OF_RESOURCES);
		E(CL_OUT_OF_HOST_MEMORY);
		E(CL_PROFILING_INFO_NOT_AVAILABLE);
		E(CL_MEM_COPY_OVERLAP);
		E(CL_BUILD_PROGRAM_FAILURE);
		E(CL_MISALIGNED_SUB_BUFFER_OFFSET);
		E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
		E(CL_COMPILE_PROGRAM_FAILURE);
		E(CL_LINK_PROGRAM_FAILURE);
		E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
		E(CL_INVALID_VALUE);
		E(CL_INVALID_DEVICE_TYPE);
		E(CL_INVALID_PLATFORM);
		E(CL_INVALID_DEVICE);
		E(CL_INVALID_CONTEXT);
		E(CL_INVALID_QUEUE_PROPERTIES);
		E(CL_INVALID_COMMAND_QUEUE);
		E(CL_INVALID_HOST_PTR);
		E(CL_INVALID_MEM_OBJECT);
		E(CL_INVALID_BUILD_OPTIONS);
		E(CL_INVALID_PROGRAM);
		E(CL_INVALID_PROGRAM_EXECUTABLE);
		E(CL_INVALID_KERNEL_NAME);
		E(CL_INVALID_KERNEL_DEFINITION);
		E(CL_INVALID_KERNEL);
		E(CL_INVALID_ARG_INDEX);
		E(CL_INVALID_ARG_VALUE);
		E(CL_INVALID_ARG_SIZE);
		E(CL_INVALID_KERNEL_ARGS);
		E(CL_INVALID_WORK_DIMENSION);
		E(CL_INVALID_WORK_GROUP_SIZE);
		E(CL_INVALID_WORK_ITEM_SIZE);
		E(CL_INVALID_GLOBAL_OFFSET);
		E(CL_INVALID_EVENT_WAIT_LIST);
		E(CL_INVALID_EVENT);
		E(CL_INVALID_OPERATION);
		E(CL_INVALID_BUFFER_SIZE);
		E(CL_INVALID_GLOBAL_WORK_SIZE);
		E(CL_INVALID_PROPERTY);
		E(CL_INVALID_COMPILER_OPTIONS);
		E(CL_INVALID_LINKER_OPTIONS);
#undef E
	default: return "CL_error";
	}
}

/* ---- device setup ---- */

static void dev_str(cl_device_id d, cl_device_info p, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	if (clGetDeviceInfo(d, p, 0, NULL, &n) != CL_SUCCESS || n == 0 || n > (1u << 20))
		return;
	char *tmp = xmalloc(n + 1);
	if (clGetDeviceInfo(d, p, n, tmp, NULL) == CL_SUCCESS) {
		tmp[n] = 0;
		snprintf(out, cap, "%s", tmp);
	}
	free(tmp);
}

static cl_ulong dev_ulong(cl_device_id d, cl_device_info p)
{
	cl_ulong v = 0;
	clGetDeviceInfo(d, p, sizeof v, &v, NULL);
	return v;
}

static cl_uint dev_uint(cl_device_id d, cl_device_info p)
{
	cl_uint v = 0;
	clGetDeviceInfo(d, p, sizeof v, &v, NULL);
	return v;
}

static void read_props(struct ocl *o)
{
	cl_device_id d = o->dev;
	dev_str(d, CL_DEVICE_NAME, o->name, sizeof o->name);
	dev_str(d, CL_DEVICE_VENDOR, o->vendor, sizeof o->vendor);
	dev_str(d, CL_DEVICE_VERSION, o->version, sizeof o->version);
	dev_str(d, CL_DRIVER_VERSION, o->driver, sizeof o->driver);
	dev_str(d, CL_DEVICE_OPENCL_C_VERSION, o->c_version, sizeof o->c_version);
	size_t n = 0;
	clGetPlatformInfo(o->plat, CL_PLATFORM_NAME, sizeof o->platform, o->platform, &n);
	clGetPlatformInfo(o->plat, CL_PLATFORM_VERSION, sizeof o->platform_version,
			  o->platform_version, &n);
	o->extensions = xcalloc(1, 16384);
	dev_str(d, CL_DEVICE_EXTENSIONS, o->extensions, 16384);
	clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof o->type, &o->type, NULL);
	o->compute_units = dev_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS);
	o->max_dims = dev_uint(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
	o->addr_bits = dev_uint(d, CL_DEVICE_ADDRESS_BITS);
	o->clock_mhz = dev_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
	o->cache_line = dev_uint(d, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE);
	clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof o->max_wg, &o->max_wg, NULL);
	size_t items[16] = {0};
	if (o->max_dims >= 1 && o->max_dims <= 16)
		clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, o->max_dims * sizeof(size_t),
				items, NULL);
	for (int i = 0; i < 3; i++)
		o->max_items[i] = items[i];
	o->local_mem = dev_ulong(d, CL_DEVICE_LOCAL_MEM_SIZE);
	o->global_mem = dev_ulong(d, CL_DEVICE_GLOBAL_MEM_SIZE);
	o->max_alloc = dev_ulong(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
	o->cache = dev_ulong(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
	cl_uint bits = dev_uint(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
	o->align = bits >= 8 ? bits / 8 : 128;
	/* Every sub-buffer origin is a multiple of align, and the canary
	 * regions are whole multiples of it too. */
	if (o->align < 8 || (o->align & (o->align - 1)) || o->align > (1u << 20))
		o->align = 4096;
	static const cl_device_info pv[7] = {
		CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,	CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
		CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,	CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
		CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
		CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF};
	for (int i = 0; i < 7; i++)
		o->pref[i] = dev_uint(d, pv[i]);
	cl_device_fp_config fpc = 0;
	clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fpc, &fpc, NULL);
	o->fp64 = fpc != 0 || strstr(o->extensions, "cl_khr_fp64") != NULL;
	o->test_grade = (o->type & CL_DEVICE_TYPE_CPU) || strcasestr(o->platform, "portable") ||
			strcasestr(o->platform, "pocl");
	/* Flush size: docs/runner-protocol.md (hello). */
	uint64_t floor = (o->type & CL_DEVICE_TYPE_GPU) ? (256ull << 20) : (32ull << 20);
	uint64_t fb = 2 * (uint64_t)o->cache > floor ? 2 * (uint64_t)o->cache : floor;
	if (o->max_alloc && fb > o->max_alloc)
		fb = o->max_alloc;
	if (o->global_mem && fb > o->global_mem / 4)
		fb = o->global_mem / 4;
	o->flush_bytes = fb & ~(uint64_t)4095;
}

static int build_gen(struct ocl *o, struct ka_err *e)
{
	char *path = xasprintf("%s/include/ka_gen.h", util_data_root());
	char *hdr = NULL;
	size_t len;
	int rc = util_read_file(path, 1u << 20, &hdr, &len, e);
	free(path);
	if (rc)
		return -1;
	const char *pre = o->fp64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
	const char *srcs[2] = {pre, hdr};
	cl_int err;
	o->gen_prog = clCreateProgramWithSource(o->ctx, 2, srcs, NULL, &err);
	free(hdr);
	if (err)
		return ka_err_set(e, "runner: generator program: %s", cl_err_name(err));
	const char *opts = o->fp64 ? "-DKA_GEN_KERNELS -DKA_GEN_FP64" : "-DKA_GEN_KERNELS";
	err = clBuildProgram(o->gen_prog, 1, &o->dev, opts, NULL, NULL);
	if (err) {
		char log[2048] = "";
		clGetProgramBuildInfo(o->gen_prog, o->dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
				      NULL);
		return ka_err_set(e, "runner: building include/ka_gen.h failed: %s: %.400s",
				  cl_err_name(err), log);
	}
	o->gen_kern = clCreateKernel(o->gen_prog, "ka_gen_kernel", &err);
	if (err)
		return ka_err_set(e, "runner: ka_gen_kernel: %s", cl_err_name(err));
	return 0;
}

/* Pick the platform and device; 0 or -1 with e. */
static int ocl_open(struct ocl *o, const char *plat_sub, int dev_idx, struct ka_err *e)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
		return ka_err_set(e, "no OpenCL platform (is an ICD such as PoCL installed?)");
	if (np > 16)
		np = 16;
	for (cl_uint p = 0; p < np; p++) {
		char pname[256] = "", pvendor[256] = "";
		clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
		clGetPlatformInfo(plats[p], CL_PLATFORM_VENDOR, sizeof pvendor, pvendor, NULL);
		if (plat_sub && !strcasestr(pname, plat_sub) && !strcasestr(pvendor, plat_sub))
			continue;
		cl_device_id devs[64];
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS ||
		    nd == 0 || (cl_uint)dev_idx >= (nd > 64 ? 64 : nd))
			continue;
		cl_int err;
		cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
						 (cl_context_properties)plats[p], 0};
		cl_context ctx = clCreateContext(props, 1, &devs[dev_idx], NULL, NULL, &err);
		if (err)
			continue;
		cl_command_queue q =
			clCreateCommandQueue(ctx, devs[dev_idx], CL_QUEUE_PROFILING_ENABLE, &err);
		if (err) {
			clReleaseContext(ctx);
			continue;
		}
		o->plat = plats[p];
		o->dev = devs[dev_idx];
		o->ctx = ctx;
		o->q = q;
		read_props(o);
		return build_gen(o, e);
	}
	if (plat_sub)
		return ka_err_set(e, "no OpenCL platform matching '%s' with a working device %d",
				  plat_sub, dev_idx);
	return ka_err_set(e, "no OpenCL platform with a working device %d", dev_idx);
}

/* ---- hello ---- */

static int ocl_hello(void *ctx, json_t *d, struct ka_err *e)
{
	struct ocl *o = ctx;
	if (o->init_error)
		return ka_err_set(e, "%s", o->init_error);
	const char *type = (o->type & CL_DEVICE_TYPE_GPU)   ? "gpu"
			   : (o->type & CL_DEVICE_TYPE_CPU) ? "cpu"
							    : "accelerator";
	json_object_set_new(d, "name", json_string(o->name));
	json_object_set_new(d, "vendor", json_string(o->vendor));
	json_object_set_new(d, "version", json_string(o->version));
	json_object_set_new(d, "driver", json_string(o->driver));
	json_object_set_new(d, "opencl_c_version", json_string(o->c_version));
	json_object_set_new(d, "platform", json_string(o->platform));
	json_object_set_new(d, "platform_version", json_string(o->platform_version));
	json_object_set_new(d, "type", json_string(type));
	json_object_set_new(d, "compute_units", json_integer(o->compute_units));
	json_object_set_new(d, "max_clock_mhz", json_integer(o->clock_mhz));
	json_object_set_new(d, "address_bits", json_integer(o->addr_bits));
	json_object_set_new(d, "max_work_group", json_integer((json_int_t)o->max_wg));
	json_object_set_new(d, "max_work_item_dims", json_integer(o->max_dims));
	json_object_set_new(d, "max_work_item_sizes",
			    json_pack("[I,I,I]", (json_int_t)o->max_items[0],
				      (json_int_t)o->max_items[1], (json_int_t)o->max_items[2]));
	json_object_set_new(d, "local_mem_bytes", json_integer((json_int_t)o->local_mem));
	json_object_set_new(d, "global_mem_bytes", json_integer((json_int_t)o->global_mem));
	json_object_set_new(d, "max_mem_alloc", json_integer((json_int_t)o->max_alloc));
	json_object_set_new(d, "cache_bytes", json_integer((json_int_t)o->cache));
	json_object_set_new(d, "cache_line_bytes", json_integer(o->cache_line));
	json_object_set_new(d, "base_addr_align", json_integer((json_int_t)o->align));
	json_object_set_new(d, "fp64", json_boolean(o->fp64));
	json_object_set_new(d, "extensions", json_string(o->extensions));
	json_object_set_new(d, "preferred_vector_widths",
			    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "char", (int)o->pref[0],
				      "short", (int)o->pref[1], "int", (int)o->pref[2], "long",
				      (int)o->pref[3], "float", (int)o->pref[4], "double",
				      (int)o->pref[5], "half", (int)o->pref[6]));
	json_object_set_new(d, "test_grade", json_boolean(o->test_grade));
	json_object_set_new(d, "flush_bytes", json_integer((json_int_t)o->flush_bytes));
	return 0;
}

/* ---- load ---- */

/* Reject preprocessor features that read files on the runner's host:
 * #include, #import, #embed, __has_include. They cannot be produced by macro
 * expansion, so a scan of the identifiers outside comments and literals of
 * the spliced source t (clsrc_splice; literals end at a newline as the
 * preprocessor does in skipped groups) finds every use. Returns the
 * offending identifier or NULL. */
static const char *source_reads_files(const char *t)
{
	static const char *bad[] = {"include",	     "include_next",	   "import",	 "embed",
				    "__has_include", "__has_include_next", "__has_embed"};
	size_t m = strlen(t);
	const char *found = NULL;
	for (size_t i = 0; i < m && !found;) {
		char c = t[i];
		if (c == '/' && t[i + 1] == '/') {
			while (i < m && t[i] != '\n')
				i++;
		} else if (c == '/' && t[i + 1] == '*') {
			i += 2;
			while (i < m && !(t[i] == '*' && t[i + 1] == '/'))
				i++;
			i = i < m ? i + 2 : m;
		} else if (c == '"' || c == '\'') {
			i++;
			while (i < m && t[i] != c && t[i] != '\n')
				i += (t[i] == '\\' && i + 1 < m && t[i + 1] != '\n') ? 2 : 1;
			i = i < m ? i + 1 : m;
		} else if (isalpha((unsigned char)c) || c == '_') {
			size_t j = i;
			while (j < m && (isalnum((unsigned char)t[j]) || t[j] == '_'))
				j++;
			for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
				if (strlen(bad[k]) == j - i && !memcmp(t + i, bad[k], j - i))
					found = bad[k];
			i = j;
		} else if (isdigit((unsigned char)c)) {
			/* a pp-number such as 1e5 or 0x1p3: not an identifier */
			while (i < m &&
			       (isalnum((unsigned char)t[i]) || t[i] == '_' || t[i] == '.'))
				i++;
		} else {
			i++;
		}
	}
	return found;
}

static int build_program(struct ocl *o, struct ocl_slot *sl, const struct plan *p, int i,
			 struct runner_verdict *v, struct ka_err *e)
{
	/* (Inline assembly is the parent's check, on candidate plans only:
	 * the trusted baselines derived from ref.c paste tokens.) */
	char why[128];
	char *t = clsrc_splice(p->sources[i], why, sizeof why);
	if (!t)
		return runner_verdict_set(v, "compile_error",
					  "program %d, %s: the runner builds no source that "
					  "compilers read differently",
					  i, why);
	const char *bad = source_reads_files(t);
	free(t);
	if (bad)
		return runner_verdict_set(
			v, "compile_error",
			"program %d uses '%s': the runner builds sources that read no "
			"files",
			i, bad);
	char tok[PLAN_MAX_OPTIONS];
	if (!clopts_allowed(p->options[i], tok, sizeof tok))
		return runner_verdict_set(
			v, "compile_error",
			"program %d: build option '%s' is not allowed (only -D, -U, "
			"-cl-*, -w, -Werror, -g)",
			i, tok);
	cl_int err;
	const char *src = p->sources[i];
	sl->prog[i] = clCreateProgramWithSource(o->ctx, 1, &src, NULL, &err);
	if (err)
		return ka_err_set(e, "runner: clCreateProgramWithSource: %s", cl_err_name(err));
	sl->n_prog = i + 1;
	char *opts = xasprintf("%s -cl-kernel-arg-info", p->options[i]);
	struct confine_build cb;
	uint64_t cached = confine_cache_bytes();
	confine_build_begin(&cb); /* PoCL compiles in this process */
	err = clBuildProgram(sl->prog[i], 1, &o->dev, opts, NULL, NULL);
	confine_build_end(&cb);
	free(opts);
	if (err == CL_SUCCESS) {
		char what[64];
		snprintf(what, sizeof what, "program %d's build", i);
		return cache_grew(cached, "compile_error", what, v);
	}
	/* PoCL writes every program it builds to its cache: with that disk
	 * full, a build fails whatever the source, so that is ours. */
	if (confine_cache_space(e))
		return -1;
	size_t n = 0;
	clGetProgramBuildInfo(sl->prog[i], o->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
	char *log = NULL;
	if (n > 0 && n <= OCL_MAX_BUILD_LOG) {
		log = xcalloc(1, n + 1);
		clGetProgramBuildInfo(sl->prog[i], o->dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
	}
	const char *body = log ? log : "(no build log)";
	size_t bl = strlen(body);
	int cut = bl > RUNNER_MAX_LOG;
	runner_verdict_set(v, "compile_error", "program %d failed to build (%s):\n%.*s%s", i,
			   cl_err_name(err), (int)(cut ? RUNNER_MAX_LOG : bl), body,
			   cut ? "\n[build log truncated at 16 KiB]" : "");
	free(log);
	return 1;
}

/* Size of an OpenCL C scalar or vector type name, or 0 when not knowable. */
static size_t type_size(const char *name, cl_uint addr_bits)
{
	static const struct {
		const char *n;
		size_t s;
	} base[] = {{"char", 1},     {"uchar", 1},  {"unsigned char", 1},  {"signed char", 1},
		    {"short", 2},    {"ushort", 2}, {"unsigned short", 2}, {"half", 2},
		    {"int", 4},	     {"uint", 4},   {"unsigned int", 4},   {"unsigned", 4},
		    {"float", 4},    {"long", 8},   {"ulong", 8},	   {"unsigned long", 8},
		    {"double", 8},   {"size_t", 0}, {"ptrdiff_t", 0},	   {"intptr_t", 0},
		    {"uintptr_t", 0}};
	char t[128];
	snprintf(t, sizeof t, "%.127s", name);
	size_t l = strlen(t);
	while (l && isspace((unsigned char)t[l - 1]))
		t[--l] = 0;
	size_t d = l;
	while (d && isdigit((unsigned char)t[d - 1]))
		d--;
	int lanes = 1;
	if (d < l) {
		lanes = atoi(t + d);
		if (lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16)
			return 0;
		t[d] = 0;
	}
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		if (!strcmp(t, base[i].n)) {
			size_t s = base[i].s ? base[i].s : addr_bits / 8;
			if (lanes > 1 && !base[i].s)
				return 0;
			return s * (size_t)(lanes == 3 ? 4 : lanes);
		}
	return 0;
}

static int alloc_buf(struct ocl *o, struct ocl_buf *b, uint64_t bytes, struct ka_err *e)
{
	size_t pre = (RUNNER_CANARY_BYTES + o->align - 1) / o->align * o->align;
	uint64_t total = pre + bytes + RUNNER_CANARY_BYTES;
	total = (total + o->align - 1) / o->align * o->align;
	if (o->max_alloc && total > o->max_alloc)
		return ka_err_set(e, "buffer of %llu bytes is over the device's max allocation",
				  (unsigned long long)bytes);
	cl_int err;
	b->whole = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, (size_t)total, NULL, &err);
	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	    err == CL_OUT_OF_HOST_MEMORY)
		runner_note_device_memory();
	if (err)
		return ka_err_set(e, "clCreateBuffer(%llu bytes): %s", (unsigned long long)total,
				  cl_err_name(err));
	cl_buffer_region r = {.origin = pre, .size = (size_t)(bytes ? bytes : 1)};
	b->view = clCreateSubBuffer(b->whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r,
				    &err);
	if (err)
		return ka_err_set(e, "clCreateSubBuffer: %s", cl_err_name(err));
	b->bytes = bytes;
	b->pre = pre;
	b->total = (size_t)total;
	return 0;
}

/* The cl_mem that a buffer argument (buf, offset) binds to: the buffer's
 * view, or a sub-buffer starting at the offset (which must then respect the
 * device's base address alignment). NULL with *why set. */
static cl_mem arg_view(struct ocl *o, struct ocl_slot *sl, struct plan_ref r, char *why, size_t cap)
{
	struct ocl_buf *b = &sl->buf[r.buf];
	if (r.offset == 0)
		return b->view;
	if (r.offset % o->align) {
		snprintf(why, cap,
			 "offset %llu into buffer %d is not a multiple of the device's base "
			 "address alignment (%zu bytes)",
			 (unsigned long long)r.offset, r.buf, o->align);
		return NULL;
	}
	for (int i = 0; i < sl->n_views; i++)
		if (sl->views[i].buf == r.buf && sl->views[i].offset == r.offset)
			return sl->views[i].mem;
	if (sl->n_views == OCL_MAX_VIEWS) {
		snprintf(why, cap, "more than %d distinct buffer offsets", OCL_MAX_VIEWS);
		return NULL;
	}
	uint64_t left = b->bytes - r.offset;
	cl_buffer_region reg = {.origin = b->pre + r.offset, .size = (size_t)(left ? left : 1)};
	cl_int err;
	cl_mem m = clCreateSubBuffer(b->whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
				     &reg, &err);
	if (err) {
		snprintf(why, cap, "sub-buffer at offset %llu of buffer %d: %s",
			 (unsigned long long)r.offset, r.buf, cl_err_name(err));
		return NULL;
	}
	sl->views[sl->n_views++] = (struct ocl_view){r.buf, r.offset, m};
	return m;
}

static int set_arg(cl_kernel k, int a, const struct plan_arg *g, cl_mem m)
{
	if (g->kind == PLAN_ARG_BUFFER)
		return clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &m);
	if (g->kind == PLAN_ARG_LOCAL)
		return clSetKernelArg(k, (cl_uint)a, g->size, NULL);
	return clSetKernelArg(k, (cl_uint)a, g->size, g->bytes);
}

/* Check one launch against the real kernel and bind its buffer arguments.
 * 0, or -1 with why (a launch_error). */
static int check_launch(struct ocl *o, struct ocl_slot *sl, const struct plan *p, int i, char *why,
			size_t cap)
{
	const struct plan_op *op = &p->ops[i];
	const char *kname = p->kernels[op->kernel].name;
	cl_kernel k = sl->kern[op->kernel];
	cl_uint nargs = 0;
	clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
	if ((int)nargs != op->n_args) {
		snprintf(why, cap, "kernel %s takes %u arguments, the plan passes %d", kname, nargs,
			 op->n_args);
		return -1;
	}
	uint64_t local_sum = 0;
	for (int a = 0; a < op->n_args; a++) {
		const struct plan_arg *g = &op->args[a];
		cl_mem m = NULL;
		if (g->kind == PLAN_ARG_BUFFER) {
			m = arg_view(o, sl, g->relocs[0].ref, why, cap);
			if (!m)
				return -1;
		}
		sl->bind[sl->bind_at[i] + a] = m;
		if (g->kind == PLAN_ARG_LOCAL)
			local_sum += g->size;
		if (g->kind == PLAN_ARG_BYTES && g->n_relocs) {
			snprintf(why, cap, "argument %d of %s carries pointers (CUDA only)", a,
				 kname);
			return -1;
		}
		cl_kernel_arg_address_qualifier aq = 0;
		cl_int err = clGetKernelArgInfo(k, (cl_uint)a, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
						sizeof aq, &aq, NULL);
		if (err == CL_SUCCESS) {
			const char *want = NULL;
			if ((aq == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
			     aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) &&
			    g->kind != PLAN_ARG_BUFFER)
				want = "a buffer";
			else if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL && g->kind != PLAN_ARG_LOCAL)
				want = "a __local size";
			else if (aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && g->kind != PLAN_ARG_BYTES)
				want = "a value";
			if (want) {
				snprintf(why, cap, "argument %d of %s must be %s", a, kname, want);
				return -1;
			}
			char tn[128] = "";
			if (aq == CL_KERNEL_ARG_ADDRESS_PRIVATE &&
			    clGetKernelArgInfo(k, (cl_uint)a, CL_KERNEL_ARG_TYPE_NAME, sizeof tn,
					       tn, NULL) == CL_SUCCESS) {
				size_t ts = type_size(tn, o->addr_bits);
				if (ts && ts != g->size) {
					snprintf(why, cap,
						 "argument %d of %s is a %s (%zu bytes), the plan "
						 "passes %u bytes",
						 a, kname, tn, ts, g->size);
					return -1;
				}
			}
		}
		err = set_arg(k, a, g, m);
		if (err) {
			snprintf(why, cap, "clSetKernelArg(%s, %d): %s", kname, a,
				 cl_err_name(err));
			return -1;
		}
	}
	if (local_sum > o->local_mem) {
		snprintf(why, cap, "%s asks for %llu bytes of __local memory, the device has %llu",
			 kname, (unsigned long long)local_sum, (unsigned long long)o->local_mem);
		return -1;
	}
	size_t kwg = o->max_wg;
	clGetKernelWorkGroupInfo(k, o->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
	uint64_t total = 1, group = 1;
	int has_local = op->block[0] != 0;
	for (uint32_t d = 0; d < op->work_dim; d++) {
		if (op->grid[d] == 0) {
			snprintf(why, cap, "launch of %s: global size %u is 0", kname, d);
			return -1;
		}
		total *= op->grid[d]; /* each <= 2^40: check as we go */
		if (total > OCL_MAX_WORK_ITEMS) {
			snprintf(why, cap, "launch of %s: more than 2^40 work items", kname);
			return -1;
		}
		if (o->addr_bits == 32 && op->goffset[d] + op->grid[d] > (1ull << 32)) {
			snprintf(why, cap, "launch of %s: global range over 2^32", kname);
			return -1;
		}
		if (!has_local) {
			if (op->block[d]) {
				snprintf(why, cap, "launch of %s: local size given in part", kname);
				return -1;
			}
			continue;
		}
		if (op->block[d] == 0 || (d < 3 && op->block[d] > o->max_items[d])) {
			snprintf(why, cap,
				 "launch of %s: local size %llu in dimension %u is 0 or "
				 "over the device's %zu",
				 kname, (unsigned long long)op->block[d], d, o->max_items[d]);
			return -1;
		}
		if (op->grid[d] % op->block[d]) {
			snprintf(why, cap,
				 "launch of %s: global size %llu is not a multiple of local size "
				 "%llu in dimension %u",
				 kname, (unsigned long long)op->grid[d],
				 (unsigned long long)op->block[d], d);
			return -1;
		}
		group *= op->block[d];
	}
	size_t reqd[3] = {0, 0, 0};
	clGetKernelWorkGroupInfo(k, o->dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd,
				 NULL);
	for (uint32_t d = 0; has_local && reqd[0] && d < op->work_dim; d++)
		if (reqd[d] != op->block[d]) {
			snprintf(why, cap,
				 "launch of %s: local size differs from its "
				 "reqd_work_group_size",
				 kname);
			return -1;
		}
	if (has_local && (group > o->max_wg || group > kwg)) {
		snprintf(why, cap, "launch of %s: work-group of %llu items is over the limit %zu",
			 kname, (unsigned long long)group, kwg < o->max_wg ? kwg : o->max_wg);
		return -1;
	}
	return 0;
}

static void ocl_unload(void *ctx, int slot)
{
	struct ocl *o = ctx;
	struct ocl_slot *sl = &o->slot[slot];
	for (int i = 0; i < sl->n_views; i++)
		clReleaseMemObject(sl->views[i].mem);
	for (int i = 0; i < sl->n_bufs; i++) {
		if (sl->buf[i].view)
			clReleaseMemObject(sl->buf[i].view);
		if (sl->buf[i].whole)
			clReleaseMemObject(sl->buf[i].whole);
	}
	for (int i = 0; i < sl->n_kern; i++)
		if (sl->kern[i])
			clReleaseKernel(sl->kern[i]);
	for (int i = 0; i < sl->n_prog; i++)
		if (sl->prog[i])
			clReleaseProgram(sl->prog[i]);
	free(sl->bind);
	free(sl->bind_at);
	memset(sl, 0, sizeof *sl);
}

static int ocl_load(void *ctx, int slot, const struct runner_slot *s, struct runner_verdict *v,
		    struct ka_err *e)
{
	struct ocl *o = ctx;
	if (o->init_error)
		return ka_err_set(e, "%s", o->init_error);
	struct ocl_slot *sl = &o->slot[slot];
	const struct plan *p = &s->plan;
	if (s->native[0] || s->module[0])
		return ka_err_set(e, "the OpenCL runner loads plans only (no module or native "
				     "library)");
	for (int t = 0; t < s->n_tensors; t++)
		if (s->dtype[t] == KA_DTYPE_FP64 && !o->fp64)
			return ka_err_set(e, "tensor %d is fp64 and the device has no fp64", t);
	/* Programs, then kernels. */
	for (int i = 0; i < p->n_programs; i++) {
		int rc = build_program(o, sl, p, i, v, e);
		if (rc)
			return rc;
	}
	for (int i = 0; i < p->n_kernels; i++) {
		const struct plan_kernel *pk = &p->kernels[i];
		if (pk->program < 0 || pk->program >= p->n_programs)
			return runner_verdict_set(v, "launch_error",
						  "kernels[%d] (%s) names no program", i, pk->name);
		cl_int err;
		sl->kern[i] = clCreateKernel(sl->prog[pk->program], pk->name, &err);
		sl->n_kern = i + 1;
		if (err == CL_INVALID_KERNEL_NAME)
			return runner_verdict_set(v, "compile_error",
						  "no kernel named %s in program %d", pk->name,
						  pk->program);
		if (err)
			return runner_verdict_set(v, "compile_error", "clCreateKernel(%s): %s",
						  pk->name, cl_err_name(err));
	}
	/* Buffers: tensors then workspaces, each between two canaries. */
	uint64_t ws_sum = 0;
	for (int w = 0; w < p->n_workspaces; w++) {
		ws_sum += p->workspace[w];
		if (o->max_alloc &&
		    p->workspace[w] + 3 * (uint64_t)RUNNER_CANARY_BYTES > o->max_alloc)
			return runner_verdict_set(
				v, "launch_error",
				"workspace %d of %llu bytes is over the device's max "
				"allocation",
				w, (unsigned long long)p->workspace[w]);
	}
	if (ws_sum > o->global_mem / 2)
		return runner_verdict_set(
			v, "launch_error",
			"workspaces of %llu bytes in all are over half the device memory",
			(unsigned long long)ws_sum);
	for (int b = 0; b < s->n_tensors + p->n_workspaces; b++) {
		uint64_t bytes = b < s->n_tensors ? s->bytes[b] : p->workspace[b - s->n_tensors];
		sl->n_bufs = b + 1;
		if (alloc_buf(o, &sl->buf[b], bytes, e)) {
			/* A workspace the device cannot hold (other slots hold memory
			 * too) is the candidate's request failing, not the grader. */
			if (b >= s->n_tensors)
				return runner_verdict_set(v, "launch_error",
							  "workspace %d of %llu bytes cannot "
							  "be allocated: %s",
							  b - s->n_tensors,
							  (unsigned long long)bytes, e->msg);
			return -1;
		}
	}
	/* Ops. */
	int n_bind = 0;
	sl->bind_at = xcalloc((size_t)(p->n_ops ? p->n_ops : 1), sizeof(int));
	for (int i = 0; i < p->n_ops; i++) {
		sl->bind_at[i] = n_bind;
		if (p->ops[i].kind == PLAN_OP_LAUNCH)
			n_bind += p->ops[i].n_args;
	}
	sl->bind = xcalloc((size_t)(n_bind ? n_bind : 1), sizeof(cl_mem));
	char why[600];
	for (int i = 0; i < p->n_ops; i++) {
		const struct plan_op *op = &p->ops[i];
		switch (op->kind) {
		case PLAN_OP_LAUNCH:
			if (check_launch(o, sl, p, i, why, sizeof why))
				return runner_verdict_set(v, "launch_error", "ops[%d]: %s", i, why);
			break;
		case PLAN_OP_COPY:
			if (op->src.buf == op->dst.buf && op->size &&
			    op->src.offset < op->dst.offset + op->size &&
			    op->dst.offset < op->src.offset + op->size)
				return runner_verdict_set(
					v, "launch_error",
					"ops[%d]: copy within buffer %d overlaps itself", i,
					op->dst.buf);
			break;
		case PLAN_OP_FILL: break;
		case PLAN_OP_SYMBOL:
		case PLAN_OP_GEMM:
			return runner_verdict_set(
				v, "launch_error",
				"ops[%d]: symbol copies and library steps exist only on the CUDA "
				"target",
				i);
		}
	}
	return 0;
}

/* ---- call ---- */

/* Fill [off, off+len) of mem with the poison of element size es (the tail
 * that is not a whole element gets bytes 0xFF). */
static cl_int fill_poison(struct ocl *o, cl_mem mem, size_t off, uint64_t len, int es,
			  const struct runner_poison *pz)
{
	const void *pat = runner_poison_bytes(pz, es);
	uint64_t whole = len / (uint64_t)es * (uint64_t)es;
	cl_int err = CL_SUCCESS;
	if (whole)
		err = clEnqueueFillBuffer(o->q, mem, pat, (size_t)es, off, (size_t)whole, 0, NULL,
					  NULL);
	if (!err && whole < len)
		err = clEnqueueFillBuffer(o->q, mem, &pz->p1, 1, off + (size_t)whole,
					  (size_t)(len - whole), 0, NULL, NULL);
	return err;
}

static int elem_is_nonfinite(const uint8_t *p, int dtype)
{
	uint16_t h;
	uint32_t w;
	uint64_t d;
	switch (dtype) {
	case KA_DTYPE_FP32: memcpy(&w, p, 4); return (w & 0x7F800000u) == 0x7F800000u;
	case KA_DTYPE_FP16: memcpy(&h, p, 2); return (h & 0x7C00u) == 0x7C00u;
	case KA_DTYPE_BF16: memcpy(&h, p, 2); return (h & 0x7F80u) == 0x7F80u;
	case KA_DTYPE_FP64:
		memcpy(&d, p, 8);
		return (d & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
	default: return 0;
	}
}

/* Enqueue one op of the replay; *ev receives its event when ev is given. */
static cl_int enqueue_op(struct ocl *o, struct ocl_slot *sl, const struct plan *p, int i,
			 cl_event *ev, char *what, size_t cap)
{
	const struct plan_op *op = &p->ops[i];
	cl_int err = CL_SUCCESS;
	switch (op->kind) {
	case PLAN_OP_LAUNCH: {
		cl_kernel k = sl->kern[op->kernel];
		snprintf(what, cap, "ops[%d]: launch of %s", i, p->kernels[op->kernel].name);
		for (int a = 0; a < op->n_args && !err; a++)
			err = set_arg(k, a, &op->args[a], sl->bind[sl->bind_at[i] + a]);
		if (err)
			return err;
		size_t g[3], l[3], off[3];
		int any_off = 0;
		for (int d = 0; d < 3; d++) {
			g[d] = (size_t)op->grid[d];
			l[d] = (size_t)op->block[d];
			off[d] = (size_t)op->goffset[d];
			any_off |= d < (int)op->work_dim && off[d];
		}
		return clEnqueueNDRangeKernel(o->q, k, op->work_dim, any_off ? off : NULL, g,
					      op->block[0] ? l : NULL, 0, NULL, ev);
	}
	case PLAN_OP_FILL: {
		struct ocl_buf *b = &sl->buf[op->dst.buf];
		snprintf(what, cap, "ops[%d]: fill", i);
		return clEnqueueFillBuffer(o->q, b->whole, op->pattern, op->pattern_size,
					   b->pre + (size_t)op->dst.offset, (size_t)op->size, 0,
					   NULL, ev);
	}
	case PLAN_OP_COPY: {
		struct ocl_buf *d = &sl->buf[op->dst.buf], *s = &sl->buf[op->src.buf];
		snprintf(what, cap, "ops[%d]: copy", i);
		return clEnqueueCopyBuffer(
			o->q, s->whole, d->whole, s->pre + (size_t)op->src.offset,
			d->pre + (size_t)op->dst.offset, (size_t)op->size, 0, NULL, ev);
	}
	case PLAN_OP_SYMBOL:
	case PLAN_OP_GEMM: break;
	}
	return CL_INVALID_OPERATION;
}

/* Queue the generation of input i of call c into dst (the input's view, or
 * a fresh buffer for the check after the call). */
static cl_int gen_input(struct ocl *o, cl_mem dst, const struct runner_slot *s,
			const struct runner_call *c, int i)
{
	cl_int err = CL_SUCCESS;
	{
		const struct runner_input *in = &c->in[i];
		cl_ulong n = (cl_ulong)runner_numel(s, i);
		if (!n)
			return CL_SUCCESS;
		cl_ulong key = in->key, range = in->kind == KA_GEN_INT ? in->range : 1;
		cl_long lo = in->lo;
		cl_int dt = s->dtype[i], kind = in->kind;
		cl_float a = in->a, b = in->b;
		cl_kernel k = o->gen_kern;
		err = clSetKernelArg(k, 0, sizeof(cl_mem), &dst);
		err |= clSetKernelArg(k, 1, sizeof n, &n);
		err |= clSetKernelArg(k, 2, sizeof key, &key);
		err |= clSetKernelArg(k, 3, sizeof dt, &dt);
		err |= clSetKernelArg(k, 4, sizeof kind, &kind);
		err |= clSetKernelArg(k, 5, sizeof a, &a);
		err |= clSetKernelArg(k, 6, sizeof b, &b);
		err |= clSetKernelArg(k, 7, sizeof lo, &lo);
		err |= clSetKernelArg(k, 8, sizeof range, &range);
		if (err)
			return err;
		/* The kernel ignores items past n: a round global size lets the
		 * driver pick a good work-group. */
		size_t g = (size_t)((n + 255) / 256 * 256);
		err = clEnqueueNDRangeKernel(o->q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
	}
	return err;
}

/* Generate inputs, poison, canaries; finished when it returns. -1 with e: a
 * harness failure. */
static int prepare(struct ocl *o, struct ocl_slot *sl, const struct runner_slot *s,
		   const struct runner_call *c, struct ka_err *e)
{
	cl_int err = CL_SUCCESS;
	for (int i = 0; i < c->n_inputs && !err; i++)
		err = gen_input(o, sl->buf[i].view, s, c, i);
	if (err)
		return ka_err_set(e, "runner: generator launch: %s", cl_err_name(err));
	struct runner_poison pz = runner_poison_of(c->poison);
	const uint8_t canary = RUNNER_CANARY_BYTE;
	for (int b = 0; b < sl->n_bufs && !err; b++) {
		struct ocl_buf *bf = &sl->buf[b];
		if (b >= c->n_inputs) {
			int es = runner_elem_bytes(s, b);
			err = fill_poison(o, bf->whole, bf->pre, bf->bytes, es, &pz);
		}
		if (!err)
			err = clEnqueueFillBuffer(o->q, bf->whole, &canary, 1, 0, bf->pre, 0, NULL,
						  NULL);
		if (!err)
			err = clEnqueueFillBuffer(
				o->q, bf->whole, &canary, 1, bf->pre + (size_t)bf->bytes,
				bf->total - bf->pre - (size_t)bf->bytes, 0, NULL, NULL);
	}
	if (err)
		return ka_err_set(e, "runner: poison/canary fill: %s", cl_err_name(err));
	err = clFinish(o->q);
	if (err)
		return ka_err_set(e, "runner: clFinish before the call: %s", cl_err_name(err));
	return 0;
}

/* The cache flush of a call that asks for one, finished when it returns:
 * the last thing before the replay (the input hash reads every input, so
 * it comes before). -1 with e: a harness failure. */
static int flush_cache(struct ocl *o, const struct runner_call *c, struct ka_err *e)
{
	cl_int err = CL_SUCCESS;
	if (c->flush && o->flush_bytes) {
		if (!o->flush) {
			o->flush = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, (size_t)o->flush_bytes,
						  NULL, &err);
			if (err)
				return ka_err_set(e, "runner: flush buffer: %s", cl_err_name(err));
		}
		uint32_t pat = ++o->flush_count;
		err = clEnqueueFillBuffer(o->q, o->flush, &pat, 4, 0, (size_t)o->flush_bytes, 0,
					  NULL, NULL);
		if (err)
			return ka_err_set(e, "runner: flush: %s", cl_err_name(err));
		err = clFinish(o->q);
		if (err)
			return ka_err_set(e, "runner: clFinish after the flush: %s",
					  cl_err_name(err));
	}
	return 0;
}

/* Read back every input (hashes) into the caller's hash array. With c (after
 * the call), also regenerate each input into a fresh buffer from the call's
 * keys and compare byte for byte: modified_at[i] gets the first differing
 * offset (rounded down to 8) or -1. */
static int hash_inputs(struct ocl *o, struct ocl_slot *sl, const struct runner_slot *s, int n_in,
		       uint64_t *out, const struct runner_call *c, int64_t *modified_at,
		       struct ka_err *e)
{
	for (int i = 0; i < n_in; i++) {
		size_t n = (size_t)s->bytes[i];
		uint8_t *h = xmalloc(n ? n : 1);
		cl_int err = n ? clEnqueueReadBuffer(o->q, sl->buf[i].view, CL_TRUE, 0, n, h, 0,
						     NULL, NULL)
			       : CL_SUCCESS;
		out[i] = ka_hash_bytes(h, n);
		if (!err && c) {
			modified_at[i] = -1;
			if (n) {
				cl_mem fresh =
					clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, n, NULL, &err);
				uint8_t *g = err ? NULL : xmalloc(n);
				if (!err)
					err = gen_input(o, fresh, s, c, i);
				if (!err)
					err = clEnqueueReadBuffer(o->q, fresh, CL_TRUE, 0, n, g, 0,
								  NULL, NULL);
				for (size_t j = 0; !err && j < n; j++)
					if (g[j] != h[j]) {
						modified_at[i] = (int64_t)(j & ~(size_t)7);
						break;
					}
				free(g);
				if (fresh)
					clReleaseMemObject(fresh);
			}
		}
		free(h);
		if (err)
			return ka_err_set(e, "runner: reading input %d: %s", i, cl_err_name(err));
	}
	return 0;
}

static int ocl_call(void *ctx, int slot, const struct runner_slot *s, struct runner_call *c,
		    struct runner_result *res, struct runner_verdict *v, struct ka_err *e)
{
	struct ocl *o = ctx;
	struct ocl_slot *sl = &o->slot[slot];
	const struct plan *p = &s->plan;
	double tm[8];
	uint64_t cached = sl->launched ? 0 : confine_cache_bytes();
	tm[0] = util_now();
	if (prepare(o, sl, s, c, e))
		return -1;
	tm[1] = util_now();
	if (hash_inputs(o, sl, s, c->n_inputs, res->in_hash_before, NULL, NULL, e))
		return -1;
	tm[6] = util_now();
	/* Phased: the queue is drained (the hash's reads were blocking), so
	 * the parent may now take the device alone for the flush and replay. */
	if (runner_call_ready(c, e))
		return -1;
	tm[7] = util_now();
	if (flush_cache(o, c, e))
		return -1;
	tm[2] = util_now();

	/* The replay: one in-order queue; the first and the last event bound it. */
	cl_event first = NULL, last = NULL;
	cl_int err = CL_SUCCESS;
	char what[PLAN_MAX_NAME + 64] = "";
	for (int i = 0; i < p->n_ops && !err; i++) {
		const struct plan_op *op = &p->ops[i];
		if (op->kind != PLAN_OP_LAUNCH && op->size == 0)
			continue;
		cl_event ev = NULL;
		err = enqueue_op(o, sl, p, i, c->time ? &ev : NULL, what, sizeof what);
		if (err || !ev)
			continue;
		if (!first)
			first = ev;
		else if (last)
			clReleaseEvent(last);
		if (ev != first)
			last = ev;
	}
	cl_int fin = clFinish(o->q);
	if (fin) {
		v->fatal = true;
		runner_verdict_set(v, "runtime_fault", "clFinish after the call: %s",
				   cl_err_name(fin));
	} else if (err) {
		runner_verdict_set(v, "runtime_fault", "%s: %s", what, cl_err_name(err));
	}
	if (!fin && !err && c->time) {
		cl_ulong t0 = 0, t1 = 0;
		cl_int pe = CL_SUCCESS;
		if (first) {
			pe = clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0,
						     &t0, NULL);
			pe |= clGetEventProfilingInfo(last ? last : first, CL_PROFILING_COMMAND_END,
						      sizeof t1, &t1, NULL);
		}
		res->has_time = true;
		res->time_ns = t1 > t0 ? (double)(t1 - t0) : 0.0;
		if (pe)
			runner_verdict_set(v, "runtime_fault", "profiling info: %s",
					   cl_err_name(pe));
	}
	if (first)
		clReleaseEvent(first);
	if (last)
		clReleaseEvent(last);
	/* The first launch compiled the kernels (PoCL compiles one per launch
	 * shape): what that left in the cache is bounded too. */
	if (!sl->launched) {
		sl->launched = true;
		if (!v->verdict)
			cache_grew(cached, "launch_error",
				   "the kernels' compile at their first launch", v);
	}
	if (v->verdict)
		return 1;
	if (runner_call_replayed(c, e))
		return -1;
	tm[3] = util_now();

	/* Read back outputs and canaries, then hash the inputs again. */
	int nb = sl->n_bufs;
	uint8_t **can = xcalloc((size_t)nb, sizeof *can);
	for (int b = 0; b < nb && !err; b++) {
		struct ocl_buf *bf = &sl->buf[b];
		size_t post = bf->total - bf->pre - (size_t)bf->bytes;
		can[b] = xmalloc(bf->pre + post);
		err = clEnqueueReadBuffer(o->q, bf->whole, CL_FALSE, 0, bf->pre, can[b], 0, NULL,
					  NULL);
		if (!err)
			err = clEnqueueReadBuffer(o->q, bf->whole, CL_FALSE,
						  bf->pre + (size_t)bf->bytes, post,
						  can[b] + bf->pre, 0, NULL, NULL);
	}
	uint8_t *outs[RUNNER_MAX_TENSORS] = {0};
	for (int k = 0; k < c->n_outputs && !err; k++) {
		int t = c->n_inputs + k;
		size_t n = (size_t)s->bytes[t];
		outs[k] = xmalloc(n ? n : 1);
		if (n)
			err = clEnqueueReadBuffer(o->q, sl->buf[t].view, CL_FALSE, 0, n, outs[k], 0,
						  NULL, NULL);
	}
	if (!err)
		err = clFinish(o->q);
	int rc = 0;
	if (err) {
		rc = ka_err_set(e, "runner: reading back: %s", cl_err_name(err));
		goto out;
	}
	tm[4] = util_now();
	if (hash_inputs(o, sl, s, c->n_inputs, res->in_hash_after, c, res->in_modified_at, e)) {
		rc = -1;
		goto out;
	}
	tm[5] = util_now();
	res->n_buffers = nb;
	for (int b = 0; b < nb; b++) {
		struct ocl_buf *bf = &sl->buf[b];
		size_t len = bf->total - (size_t)bf->bytes;
		bool ok = true;
		for (size_t j = 0; j < len && ok; j++)
			ok = can[b][j] == RUNNER_CANARY_BYTE;
		res->canary_ok[b] = ok;
	}
	struct runner_poison pz = runner_poison_of(c->poison);
	for (int k = 0; k < c->n_outputs; k++) {
		int t = c->n_inputs + k, dt = s->dtype[t], es = runner_elem_bytes(s, t);
		int64_t n = runner_numel(s, t);
		const void *pat = runner_poison_bytes(&pz, es);
		int64_t unw = 0, first_unw = -1, nonfin = 0;
		for (int64_t j = 0; j < n; j++) {
			const uint8_t *el = outs[k] + j * es;
			/* One-byte outputs: only a bool (0 or 1) tells the poison
			 * apart; an unwritten int8/uint8 element holds this call's
			 * random poison and fails the comparison with gold. */
			if (es == 1 ? dt == KA_DTYPE_BOOL && *el > 1
				    : !memcmp(el, pat, (size_t)es)) {
				if (!unw++)
					first_unw = j;
			} else if (elem_is_nonfinite(el, dt)) {
				nonfin++;
			}
		}
		res->unwritten[k] = unw;
		res->first_unwritten[k] = first_unw;
		res->nonfinite[k] = nonfin;
		if (c->sample) {
			int64_t m = c->n_sample[k];
			uint8_t *sb = xmalloc(m ? (size_t)(m * es) : 1);
			for (int64_t j = 0; j < m; j++)
				memcpy(sb + j * es, outs[k] + c->sample_idx[k][j] * es, (size_t)es);
			res->blob[k] = sb;
			res->blob_len[k] = (size_t)(m * es);
			free(outs[k]);
		} else {
			res->blob[k] = outs[k];
			res->blob_len[k] = (size_t)s->bytes[t];
		}
		outs[k] = NULL;
	}
	if (getenv("KA_RUNNER_PROFILE"))
		fprintf(stderr,
			"ka-run-opencl: slot %d: prepare %.3f ms, inputs hashed %.3f ms, waited "
			"for go %.3f ms, flush %.3f ms, replay %.3f ms, read back %.3f ms, inputs "
			"checked %.3f ms, outputs scanned %.3f ms, event %.3f us\n",
			slot, (tm[1] - tm[0]) * 1e3, (tm[6] - tm[1]) * 1e3, (tm[7] - tm[6]) * 1e3,
			(tm[2] - tm[7]) * 1e3, (tm[3] - tm[2]) * 1e3, (tm[4] - tm[3]) * 1e3,
			(tm[5] - tm[4]) * 1e3, (util_now() - tm[5]) * 1e3,
			res->has_time ? res->time_ns * 1e-3 : 0.0);
out:
	for (int b = 0; b < nb; b++)
		free(can[b]);
	free(can);
	for (int k = 0; k < c->n_outputs; k++)
		free(outs[k]);
	return rc;
}

static void ocl_destroy(void *ctx)
{
	struct ocl *o = ctx;
	for (int i = 0; i < RUNNER_MAX_SLOTS; i++)
		ocl_unload(o, i);
	if (o->flush)
		clReleaseMemObject(o->flush);
	if (o->gen_kern)
		clReleaseKernel(o->gen_kern);
	if (o->gen_prog)
		clReleaseProgram(o->gen_prog);
	if (o->q)
		clReleaseCommandQueue(o->q);
	if (o->ctx)
		clReleaseContext(o->ctx);
	free(o->extensions);
	free(o);
}

static int report_kernel(const char *what, cl_int err);

/* --self-test-confinement: after confine_enter, a tiny kernel must still
 * build and run (PoCL compiles and links in-process), and every hostile
 * attempt of confine_self_test must be refused. Exit 0 when so. */
static int self_test_kernel(struct ocl *o)
{
	const char *src = "__kernel void t(__global int *x) { x[get_global_id(0)] *= 3; }";
	cl_int err, v[4] = {1, 2, 3, 4};
	cl_program p = clCreateProgramWithSource(o->ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &o->dev, "", NULL, NULL))
		return report_kernel("build", err);
	cl_kernel k = clCreateKernel(p, "t", &err);
	cl_mem m = err ? NULL : clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, sizeof v, NULL, &err);
	size_t g = 4;
	if (!err)
		err = clEnqueueWriteBuffer(o->q, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
	if (!err)
		err = clSetKernelArg(k, 0, sizeof m, &m);
	if (!err)
		err = clEnqueueNDRangeKernel(o->q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
	if (!err)
		err = clEnqueueReadBuffer(o->q, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
	if (!err && v[3] != 12)
		err = CL_INVALID_VALUE;
	return report_kernel("run", err);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ka-run-opencl [--platform SUBSTR] [--device N] [--private-cache DIR]\n"
		"       ka-run-opencl --self-test-confinement [--secret FILE] [--secret-env NAME]\n"
		"The trusted OpenCL runner: speaks docs/runner-protocol.md on stdin/stdout.\n"
		"It is started by ka; it is not meant to be run by hand.\n");
}

static int report_kernel(const char *what, cl_int err)
{
	printf("%s kernel %s after confinement%s%s\n", err ? "FAILED" : "ok", what, err ? ": " : "",
	       err ? cl_err_name(err) : "");
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *plat = NULL, *secret = NULL, *secret_env = NULL;
	int dev = 0, self_test = 0;
	/* Read before the environment is cleaned. */
	const char *conf = getenv("KA_RUNNER_CONFINE");
	int confine = !(conf && !strcmp(conf, "off"));
	confine_clean_env();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--self-test-confinement")) {
			self_test = 1;
		} else if (!strcmp(argv[i], "--secret") && i + 1 < argc) {
			secret = argv[++i];
		} else if (!strcmp(argv[i], "--secret-env") && i + 1 < argc) {
			secret_env = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
			plat = argv[++i];
		} else if (!strcmp(argv[i], "--private-cache") && i + 1 < argc) {
			confine_cache_private(argv[++i]); /* before the platform opens */
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			char *end;
			long d = strtol(argv[++i], &end, 10);
			if (*end || d < 0 || d > 63) {
				fprintf(stderr, "ka-run-opencl: --device wants 0..63\n");
				return 2;
			}
			dev = (int)d;
		} else {
			fprintf(stderr, "ka-run-opencl: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	int in_fd, out_fd;
	struct ka_err e = {{0}};
	if (runner_take_stdio(&in_fd, &out_fd, &e)) {
		fprintf(stderr, "ka-run-opencl: %s\n", e.msg);
		return 1;
	}
	struct ocl *o = xcalloc(1, sizeof *o);
	if (ocl_open(o, plat, dev, &e)) {
		/* Still serve, so that the parent gets the reason in the reply
		 * to its hello rather than a bare EOF. */
		fprintf(stderr, "ka-run-opencl: %s\n", e.msg);
		o->init_error = xstrdup(e.msg);
	}
	/* Confined once the platform is open: from here on, candidate kernels
	 * run natively in this process (docs/runner.md, "The PoCL caveat"). */
	struct confine_report cr = {0};
	if (confine && confine_enter(&cr, &e)) {
		fprintf(stderr, "ka-run-opencl: %s\n", e.msg);
		if (!o->init_error)
			o->init_error = xstrdup(e.msg);
	} else if (confine) {
		fprintf(stderr, "ka-run-opencl: %s\n", cr.text);
	}
	if (self_test) {
		if (o->init_error)
			return 1;
		fflush(stderr);
		/* The probe prints on the real stdout, saved by take_stdio. */
		dup2(out_fd, 1);
		int bad = self_test_kernel(o);
		bad += confine_self_test(secret, secret_env);
		printf("landlock %s\n", cr.landlock ? "on" : "off");
		return bad ? 1 : 0;
	}
	struct runner_engine eng = {
		.target = "opencl",
		.ctx = o,
		.phased = true,
		.hello = ocl_hello,
		.load = ocl_load,
		.call = ocl_call,
		.unload = ocl_unload,
		.destroy = ocl_destroy,
	};
	return runner_serve(&eng, in_fd, out_fd);
}
