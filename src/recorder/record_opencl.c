/* record_opencl.c: the recording OpenCL API (ka-record-opencl).
 *
 * Exports the OpenCL functions a kernel launcher needs, with the real
 * signatures of <CL/cl.h>; the recorder links no OpenCL library. Queries are
 * answered from the request's device properties; program sources, build
 * options, kernels, arguments, launches, workspace buffers, fills and copies
 * are written into a launch plan (plan.h). Every handle is a pointer into a
 * table owned here and is checked on each use: a handle this file did not hand
 * out is a record_error. Host transfers, synchronisation, queues, contexts,
 * events and binaries are not available: those calls are a record_error naming
 * the call (record_fail). It does not build or run anything: the runner does. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/clopts.h"
#include "record.h"

#define MAX_MEMS (RECORD_MAX_TENSORS + PLAN_MAX_WORKSPACES + 256)
#define MAX_KERNEL_HANDLES 256
#define MAX_ARG_BYTES 1024 /* CL_DEVICE_MAX_PARAMETER_SIZE's minimum */
#define MAX_SOURCE_STRINGS 4096

enum { MAGIC_OBJ = 0x4b41434cu };

/* cl.h only declares these structs: the recorder's handles are its own. */
struct _cl_platform_id {
	uint32_t magic;
};
struct _cl_device_id {
	uint32_t magic;
};
struct _cl_context {
	uint32_t magic;
};
struct _cl_command_queue {
	uint32_t magic;
};
struct _cl_event {
	uint32_t magic;
};
struct _cl_mem {
	int used;
	int buf;	 /* plan buffer index */
	uint64_t offset; /* into the plan buffer */
	uint64_t size;
	int parent; /* index in g_mems of the parent of a sub-buffer, or -1 */
	cl_mem_flags flags;
};
struct _cl_program {
	int used;
	int index; /* into g_plan.sources */
	int built;
};
struct karg {
	int set;
	enum plan_arg_kind kind;
	uint32_t size;
	uint8_t *bytes;	     /* BYTES */
	struct plan_ref ref; /* BUFFER */
};
struct _cl_kernel {
	int used;
	int kernel; /* into g_plan.kernels */
	struct _cl_program *program;
	int n_args; /* highest set index + 1 */
	struct karg args[PLAN_MAX_ARGS];
};

static struct _cl_platform_id g_platform = {MAGIC_OBJ};
static struct _cl_device_id g_device = {MAGIC_OBJ};
static struct _cl_context g_context = {MAGIC_OBJ};
static struct _cl_command_queue g_queue = {MAGIC_OBJ};
static struct _cl_event g_event = {MAGIC_OBJ};
static struct _cl_mem g_mems[MAX_MEMS];
static int g_n_mems;
static struct _cl_program g_programs[PLAN_MAX_PROGRAMS];
static struct _cl_kernel g_kernels[MAX_KERNEL_HANDLES];
static int g_n_kernels;
static int g_n_tensors;
static uint64_t g_workspace_total;
static struct plan g_plan;

/* The device as the runner reported it (docs/plan-format.md, "device"). */
static struct {
	char name[256], vendor[256], version[128], driver[128], platform[256], cversion[128],
		profile[64], extensions[8192];
	cl_device_type type;
	cl_uint compute_units, clock_mhz, align_bits, cacheline, vendor_id, wg_multiple, addr_bits,
		max_dims, pref[7] /* char short int long float double half */;
	char platform_version[128];
	size_t max_wg, item[3], max_param;
	cl_ulong local_mem, global_mem, max_alloc, cache_bytes, max_constant;
	int fp64, fp16;
} dev;

/* ---- handle checks ---- */

#define IN_TABLE(p, table)                                                                         \
	((uintptr_t)(p) >= (uintptr_t)(table) &&                                                   \
	 (uintptr_t)(p) < (uintptr_t)(table) + sizeof(table) &&                                    \
	 ((uintptr_t)(p) - (uintptr_t)(table)) % sizeof((table)[0]) == 0)

static struct _cl_mem *mem_of(const char *call, cl_mem m)
{
	if (IN_TABLE(m, g_mems) && m->used)
		return m;
	if (call)
		record_fail(
			"%s: unknown cl_mem %p (only the tensors' cl_mem and buffers created in "
			"this call are valid)",
			call, (void *)m);
	return NULL;
}

static struct _cl_kernel *kernel_of(const char *call, cl_kernel k)
{
	if (IN_TABLE(k, g_kernels) && k->used)
		return k;
	record_fail("%s: unknown cl_kernel %p", call, (void *)k);
	return NULL;
}

static struct _cl_program *program_of(const char *call, cl_program p)
{
	if (IN_TABLE(p, g_programs) && p->used)
		return p;
	record_fail("%s: unknown cl_program %p", call, (void *)p);
	return NULL;
}

static int queue_ok(const char *call, cl_command_queue q)
{
	if (q == &g_queue)
		return 1;
	record_fail("%s: not the command queue ka_launch was given", call);
	return 0;
}

static int context_ok(const char *call, cl_context c)
{
	if (c == &g_context)
		return 1;
	record_fail("%s: not the context ka_launch was given", call);
	return 0;
}

static int device_ok(const char *call, cl_device_id d)
{
	if (d == &g_device)
		return 1;
	record_fail("%s: not the device ka_launch was given", call);
	return 0;
}

static int events_ok(const char *call, cl_uint n, const cl_event *list, cl_event *out)
{
	if ((n > 0) != (list != NULL)) {
		record_fail("%s: event wait list and its length disagree", call);
		return 0;
	}
	for (cl_uint i = 0; i < n; i++)
		if (list[i] != &g_event) {
			record_fail("%s: unknown event in the wait list", call);
			return 0;
		}
	if (out)
		*out = &g_event;
	return 1;
}

static void set_err(cl_int *errcode_ret, cl_int v)
{
	if (errcode_ret)
		*errcode_ret = v;
}

/* ---- info answers ---- */

static cl_int answer(const void *v, size_t n, size_t size, void *out, size_t *ret)
{
	if (ret)
		*ret = n;
	if (out) {
		if (size < n)
			return CL_INVALID_VALUE;
		memcpy(out, v, n);
	}
	return CL_SUCCESS;
}

#define ANSWER(v) answer(&(v), sizeof(v), size, out, ret)
#define ANSWER_STR(s) answer((s), strlen(s) + 1, size, out, ret)

static cl_int unknown_param(const char *call, unsigned param)
{
	record_note("%s: parameter 0x%x is not answered while recording (CL_INVALID_VALUE)", call,
		    param);
	return CL_INVALID_VALUE;
}

/* ---- the target's hooks ---- */

static void jstr(json_t *d, const char *key, char *dst, size_t cap, const char *dflt)
{
	const char *s = json_string_value(json_object_get(d, key));
	snprintf(dst, cap, "%s", s ? s : dflt);
}

static uint64_t jnum(json_t *d, const char *key, uint64_t dflt)
{
	json_t *v = json_object_get(d, key);
	if (json_is_integer(v) && json_integer_value(v) >= 0)
		return (uint64_t)json_integer_value(v);
	return dflt;
}

static int ocl_prepare(const struct record_request *req, struct ka_err *e)
{
	json_t *d = req->device;
	jstr(d, "name", dev.name, sizeof dev.name, "unknown device");
	jstr(d, "vendor", dev.vendor, sizeof dev.vendor, "unknown vendor");
	jstr(d, "version", dev.version, sizeof dev.version, "OpenCL 3.0");
	jstr(d, "driver", dev.driver, sizeof dev.driver, "unknown");
	jstr(d, "platform", dev.platform, sizeof dev.platform, "KernelAscent recorder");
	jstr(d, "opencl_c_version", dev.cversion, sizeof dev.cversion, "OpenCL C 1.2");
	jstr(d, "profile", dev.profile, sizeof dev.profile, "FULL_PROFILE");
	jstr(d, "extensions", dev.extensions, sizeof dev.extensions, "");
	const char *type = json_string_value(json_object_get(d, "type"));
	dev.type = type && !strcmp(type, "cpu")		  ? CL_DEVICE_TYPE_CPU
		   : type && !strcmp(type, "accelerator") ? CL_DEVICE_TYPE_ACCELERATOR
							  : CL_DEVICE_TYPE_GPU;
	int cpu = dev.type == CL_DEVICE_TYPE_CPU;
	dev.compute_units = (cl_uint)jnum(d, "compute_units", 1);
	dev.clock_mhz = (cl_uint)jnum(d, "max_clock_mhz", 1000);
	jstr(d, "platform_version", dev.platform_version, sizeof dev.platform_version, dev.version);
	/* bytes, as the runner reports it; OpenCL answers in bits */
	uint64_t align = jnum(d, "base_addr_align", 128);
	dev.align_bits = align > 0 && align <= (1u << 20) ? (cl_uint)(8 * align) : 0;
	dev.cacheline = (cl_uint)jnum(d, "cache_line_bytes", cpu ? 64 : 128);
	dev.addr_bits = (cl_uint)jnum(d, "address_bits", 64);
	dev.max_dims = (cl_uint)jnum(d, "max_work_item_dims", 3);
	static const char *const vec[7] = {"char",  "short",  "int", "long",
					   "float", "double", "half"};
	static const cl_uint vec_cpu[7] = {16, 8, 4, 2, 4, 2, 0},
			     vec_gpu[7] = {1, 1, 1, 1, 1, 1, 0};
	json_t *pv = json_object_get(d, "preferred_vector_widths");
	for (int i = 0; i < 7; i++)
		dev.pref[i] = (cl_uint)jnum(pv, vec[i], cpu ? vec_cpu[i] : vec_gpu[i]);
	dev.vendor_id = (cl_uint)jnum(d, "vendor_id", 0);
	dev.wg_multiple = (cl_uint)jnum(d, "preferred_wg_multiple", cpu ? 8 : 32);
	dev.max_wg = (size_t)jnum(d, "max_work_group", 256);
	dev.max_param = (size_t)jnum(d, "max_parameter_size", 1024);
	json_t *items = json_object_get(d, "max_work_item_sizes");
	for (int i = 0; i < 3; i++) {
		json_t *v = json_array_get(items, (size_t)i);
		dev.item[i] = json_is_integer(v) && json_integer_value(v) > 0
				      ? (size_t)json_integer_value(v)
				      : dev.max_wg;
	}
	dev.local_mem = jnum(d, "local_mem_bytes", 32768);
	dev.global_mem = jnum(d, "global_mem_bytes", 1ull << 30);
	dev.max_alloc = jnum(d, "max_mem_alloc", dev.global_mem / 4);
	dev.cache_bytes = jnum(d, "cache_bytes", 0);
	dev.max_constant = jnum(d, "max_constant_bytes", 65536);
	dev.fp64 = json_is_true(json_object_get(d, "fp64"));
	dev.fp16 = json_is_true(json_object_get(d, "fp16"));
	if (!dev.fp64)
		dev.pref[5] = 0;
	if (dev.max_wg == 0 || dev.align_bits == 0 || (dev.align_bits & (dev.align_bits - 1)) ||
	    dev.max_dims < 1 || dev.max_dims > 3)
		return ka_err_set(e, "request: device: max_work_group, max_work_item_dims or "
				     "base_addr_align (bytes, a power of 2) is invalid");

	g_n_tensors = req->n_inputs + req->n_outputs;
	for (int i = 0; i < g_n_tensors; i++) {
		struct _cl_mem *m = &g_mems[i];
		m->used = 1;
		m->buf = i;
		m->offset = 0;
		m->size = req->tensors[i].bytes;
		m->parent = -1;
		m->flags = CL_MEM_READ_WRITE;
	}
	g_n_mems = g_n_tensors;
	return 0;
}

static void *ocl_tensor_ptr(int i)
{
	return &g_mems[i];
}

typedef int (*ocl_launch_fn)(const struct ka_args *, cl_context, cl_device_id, cl_command_queue);

static int ocl_invoke(void *entry, const struct ka_args *a)
{
	ocl_launch_fn f;
	memcpy(&f, &entry, sizeof f);
	return f(a, &g_context, &g_device, &g_queue);
}

static int ocl_finish(struct plan *p, struct ka_err *e)
{
	(void)e;
	*p = g_plan;
	memset(&g_plan, 0, sizeof g_plan);
	return 0;
}

static const char *const ocl_exports[] = {
	"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo",
	"clGetContextInfo", "clGetCommandQueueInfo", "clCreateProgramWithSource", "clBuildProgram",
	"clGetProgramBuildInfo", "clGetProgramInfo", "clCreateKernel", "clSetKernelArg",
	"clGetKernelInfo", "clGetKernelWorkGroupInfo", "clEnqueueNDRangeKernel", "clCreateBuffer",
	"clCreateSubBuffer", "clEnqueueFillBuffer", "clEnqueueCopyBuffer", "clGetMemObjectInfo",
	"clFlush", "clRetainMemObject", "clReleaseMemObject", "clRetainKernel", "clReleaseKernel",
	"clRetainProgram", "clReleaseProgram", "clRetainEvent", "clReleaseEvent",
	"clRetainCommandQueue", "clReleaseCommandQueue", "clRetainContext", "clReleaseContext",
	"clRetainDevice", "clReleaseDevice",
	/* exported so that the call itself is reported (record_error) */
	"clFinish", "clWaitForEvents", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
	"clEnqueueMapBuffer", "clEnqueueUnmapMemObject", "clCreateCommandQueue",
	"clCreateCommandQueueWithProperties", "clCreateContext", "clCreateContextFromType",
	"clCreateUserEvent", "clSVMAlloc", "clEnqueueNativeKernel", "clCreateProgramWithBinary",
	"clCreateProgramWithIL", "clLinkProgram", "clCompileProgram", "clCreateKernelsInProgram",
	"clEnqueueTask", "clGetEventProfilingInfo", "clGetEventInfo",
	"clGetExtensionFunctionAddressForPlatform", "clEnqueueBarrierWithWaitList",
	"clEnqueueMarkerWithWaitList", "clCloneKernel", "clSetKernelArgSVMPointer",
	"clGetKernelArgInfo", NULL};

static enum record_sym ocl_classify(const char *s)
{
	for (int i = 0; ocl_exports[i]; i++)
		if (!strcmp(ocl_exports[i], s))
			return RECORD_SYM_PROVIDED;
	if (s[0] == 'c' && s[1] == 'l' && s[2] >= 'A' && s[2] <= 'Z')
		return RECORD_SYM_UNSUPPORTED;
	if (!strcmp(s, "ka_workspace")) /* the CUDA target's scratch memory */
		return RECORD_SYM_UNSUPPORTED;
	return RECORD_SYM_OTHER;
}

const struct record_target record_target = {
	.name = "opencl",
	.exports = ocl_exports,
	.prepare = ocl_prepare,
	.classify = ocl_classify,
	.libraries = NULL,
	.tensor_ptr = ocl_tensor_ptr,
	.invoke = ocl_invoke,
	.finish = ocl_finish,
};

/* ---- platform, device, context, queue ---- */

cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
	if (platforms && num_entries == 0)
		return CL_INVALID_VALUE;
	if (platforms)
		platforms[0] = &g_platform;
	if (num_platforms)
		*num_platforms = 1;
	return CL_SUCCESS;
}

cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size, void *out,
			 size_t *ret)
{
	if (platform && platform != &g_platform)
		return CL_INVALID_PLATFORM;
	switch (param) {
	case CL_PLATFORM_PROFILE: return ANSWER_STR(dev.profile);
	case CL_PLATFORM_VERSION: return ANSWER_STR(dev.platform_version);
	case CL_PLATFORM_NAME: return ANSWER_STR(dev.platform);
	case CL_PLATFORM_VENDOR: return ANSWER_STR(dev.vendor);
	case CL_PLATFORM_EXTENSIONS: return ANSWER_STR("");
	default: return unknown_param("clGetPlatformInfo", param);
	}
}

cl_int clGetDeviceIDs(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
		      cl_device_id *devices, cl_uint *num_devices)
{
	if (platform && platform != &g_platform)
		return CL_INVALID_PLATFORM;
	if (devices && num_entries == 0)
		return CL_INVALID_VALUE;
	if (!(type & dev.type) && type != CL_DEVICE_TYPE_ALL && type != CL_DEVICE_TYPE_DEFAULT) {
		if (num_devices)
			*num_devices = 0;
		return CL_DEVICE_NOT_FOUND;
	}
	if (devices)
		devices[0] = &g_device;
	if (num_devices)
		*num_devices = 1;
	return CL_SUCCESS;
}

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void *out,
		       size_t *ret)
{
	if (!device_ok("clGetDeviceInfo", device))
		return CL_INVALID_DEVICE;
	cl_uint u;
	cl_ulong ul;
	size_t sz;
	cl_bool b;
	cl_device_fp_config fp;
	switch (param) {
	case CL_DEVICE_TYPE: return ANSWER(dev.type);
	case CL_DEVICE_VENDOR_ID: return ANSWER(dev.vendor_id);
	case CL_DEVICE_MAX_COMPUTE_UNITS: return ANSWER(dev.compute_units);
	case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: return ANSWER(dev.max_dims);
	case CL_DEVICE_MAX_WORK_ITEM_SIZES:
		return answer(dev.item, sizeof dev.item, size, out, ret);
	case CL_DEVICE_MAX_WORK_GROUP_SIZE: return ANSWER(dev.max_wg);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR: return ANSWER(dev.pref[0]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT: return ANSWER(dev.pref[1]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT: return ANSWER(dev.pref[2]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG: return ANSWER(dev.pref[3]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: return ANSWER(dev.pref[4]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE: return ANSWER(dev.pref[5]);
	case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
	case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF: return ANSWER(dev.pref[6]);
	case CL_DEVICE_MAX_CLOCK_FREQUENCY: return ANSWER(dev.clock_mhz);
	case CL_DEVICE_ADDRESS_BITS: return ANSWER(dev.addr_bits);
	case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return ANSWER(dev.max_alloc);
	case CL_DEVICE_IMAGE_SUPPORT:
	case CL_DEVICE_ERROR_CORRECTION_SUPPORT: b = CL_FALSE; return ANSWER(b);
	case CL_DEVICE_MAX_PARAMETER_SIZE: return ANSWER(dev.max_param);
	case CL_DEVICE_MEM_BASE_ADDR_ALIGN: return ANSWER(dev.align_bits);
	case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: u = 128; return ANSWER(u);
	case CL_DEVICE_SINGLE_FP_CONFIG:
		fp = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
		return ANSWER(fp);
	case CL_DEVICE_DOUBLE_FP_CONFIG:
		fp = dev.fp64 ? CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
					CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA
			      : 0;
		return ANSWER(fp);
	case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE: {
		cl_device_mem_cache_type t = dev.cache_bytes ? CL_READ_WRITE_CACHE : CL_NONE;
		return ANSWER(t);
	}
	case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE: return ANSWER(dev.cacheline);
	case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: return ANSWER(dev.cache_bytes);
	case CL_DEVICE_GLOBAL_MEM_SIZE: return ANSWER(dev.global_mem);
	case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE: return ANSWER(dev.max_constant);
	case CL_DEVICE_MAX_CONSTANT_ARGS: u = 8; return ANSWER(u);
	case CL_DEVICE_LOCAL_MEM_TYPE: {
		cl_device_local_mem_type t = dev.type == CL_DEVICE_TYPE_CPU ? CL_GLOBAL : CL_LOCAL;
		return ANSWER(t);
	}
	case CL_DEVICE_LOCAL_MEM_SIZE: return ANSWER(dev.local_mem);
	case CL_DEVICE_HOST_UNIFIED_MEMORY: b = dev.type == CL_DEVICE_TYPE_CPU; return ANSWER(b);
	case CL_DEVICE_PROFILING_TIMER_RESOLUTION: sz = 1; return ANSWER(sz);
	case CL_DEVICE_ENDIAN_LITTLE:
	case CL_DEVICE_AVAILABLE:
	case CL_DEVICE_COMPILER_AVAILABLE:
	case CL_DEVICE_LINKER_AVAILABLE: b = CL_TRUE; return ANSWER(b);
	case CL_DEVICE_EXECUTION_CAPABILITIES: {
		cl_device_exec_capabilities c = CL_EXEC_KERNEL;
		return ANSWER(c);
	}
	case CL_DEVICE_QUEUE_PROPERTIES: {
		cl_command_queue_properties q = CL_QUEUE_PROFILING_ENABLE;
		return ANSWER(q);
	}
	case CL_DEVICE_PLATFORM: {
		cl_platform_id p = &g_platform;
		return ANSWER(p);
	}
	case CL_DEVICE_PARENT_DEVICE: {
		cl_device_id p = NULL;
		return ANSWER(p);
	}
	case CL_DEVICE_PARTITION_MAX_SUB_DEVICES: u = 0; return ANSWER(u);
	case CL_DEVICE_REFERENCE_COUNT: u = 1; return ANSWER(u);
	case CL_DEVICE_NAME: return ANSWER_STR(dev.name);
	case CL_DEVICE_VENDOR: return ANSWER_STR(dev.vendor);
	case CL_DRIVER_VERSION: return ANSWER_STR(dev.driver);
	case CL_DEVICE_PROFILE: return ANSWER_STR(dev.profile);
	case CL_DEVICE_VERSION: return ANSWER_STR(dev.version);
	case CL_DEVICE_OPENCL_C_VERSION: return ANSWER_STR(dev.cversion);
	case CL_DEVICE_EXTENSIONS: return ANSWER_STR(dev.extensions);
	case CL_DEVICE_BUILT_IN_KERNELS: return ANSWER_STR("");
	case CL_DEVICE_PRINTF_BUFFER_SIZE: sz = 1 << 20; return ANSWER(sz);
	case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC: b = CL_TRUE; return ANSWER(b);
	case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
	case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
	case CL_DEVICE_MAX_NUM_SUB_GROUPS:
	case CL_DEVICE_MAX_PIPE_ARGS: u = 0; return ANSWER(u);
	case CL_DEVICE_SVM_CAPABILITIES: {
		cl_device_svm_capabilities c = 0;
		return ANSWER(c);
	}
	case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
	case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
	case CL_DEVICE_PIPE_SUPPORT:
	case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT: b = CL_FALSE; return ANSWER(b);
	case CL_DEVICE_MAX_READ_IMAGE_ARGS:
	case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
	case CL_DEVICE_MAX_SAMPLERS: u = 0; return ANSWER(u);
	case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: sz = 0; return ANSWER(sz);
	case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE: sz = 0; return ANSWER(sz);
	default: (void)ul; return unknown_param("clGetDeviceInfo", param);
	}
}

cl_int clGetContextInfo(cl_context context, cl_context_info param, size_t size, void *out,
			size_t *ret)
{
	if (!context_ok("clGetContextInfo", context))
		return CL_INVALID_CONTEXT;
	cl_uint u = 1;
	cl_device_id d = &g_device;
	switch (param) {
	case CL_CONTEXT_REFERENCE_COUNT:
	case CL_CONTEXT_NUM_DEVICES: return ANSWER(u);
	case CL_CONTEXT_DEVICES: return ANSWER(d);
	case CL_CONTEXT_PROPERTIES: return answer("", 0, size, out, ret);
	default: return unknown_param("clGetContextInfo", param);
	}
}

cl_int clGetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info param, size_t size,
			     void *out, size_t *ret)
{
	if (!queue_ok("clGetCommandQueueInfo", queue))
		return CL_INVALID_COMMAND_QUEUE;
	cl_context c = &g_context;
	cl_device_id d = &g_device;
	cl_uint u = 1;
	cl_command_queue_properties p = 0;
	switch (param) {
	case CL_QUEUE_CONTEXT: return ANSWER(c);
	case CL_QUEUE_DEVICE: return ANSWER(d);
	case CL_QUEUE_REFERENCE_COUNT: return ANSWER(u);
	case CL_QUEUE_PROPERTIES: return ANSWER(p);
	default: return unknown_param("clGetCommandQueueInfo", param);
	}
}

/* ---- programs and kernels ---- */

static int utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t k = c < 0x80	    ? 0
			   : (c >> 5) == 6  ? 1
			   : (c >> 4) == 14 ? 2
			   : (c >> 3) == 30 ? 3
					    : 9;
		if (k == 9 || i + k >= n + (k == 0))
			return 0;
		for (size_t j = 1; j <= k; j++)
			if ((s[i + j] & 0xC0) != 0x80)
				return 0;
		i += k + 1;
	}
	return 1;
}

cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
				     const size_t *lengths, cl_int *errcode_ret)
{
	const char *call = "clCreateProgramWithSource";
	set_err(errcode_ret, CL_INVALID_VALUE);
	if (!context_ok(call, context))
		return set_err(errcode_ret, CL_INVALID_CONTEXT), NULL;
	if (count == 0 || !strings || count > MAX_SOURCE_STRINGS) {
		record_fail("%s: %u strings (1..%d required)", call, count, MAX_SOURCE_STRINGS);
		return NULL;
	}
	if (g_plan.n_programs >= PLAN_MAX_PROGRAMS) {
		record_fail("%s: more than %d programs", call, PLAN_MAX_PROGRAMS);
		return NULL;
	}
	size_t total = 0;
	size_t lens[MAX_SOURCE_STRINGS];
	for (cl_uint i = 0; i < count; i++) {
		if (!strings[i]) {
			record_fail("%s: string %u is NULL", call, i);
			return NULL;
		}
		lens[i] = lengths && lengths[i] ? lengths[i]
						: strnlen(strings[i], PLAN_MAX_SOURCE + 1);
		if (lens[i] > PLAN_MAX_SOURCE || total + lens[i] > PLAN_MAX_SOURCE) {
			record_fail("%s: program source over %u bytes", call, PLAN_MAX_SOURCE);
			return NULL;
		}
		total += lens[i];
	}
	char *src = xmalloc(total + 1);
	size_t at = 0;
	for (cl_uint i = 0; i < count; i++) {
		memcpy(src + at, strings[i], lens[i]);
		at += lens[i];
	}
	src[total] = 0;
	if (strlen(src) != total || !utf8_valid((const unsigned char *)src, total)) {
		free(src);
		record_fail("%s: the source holds a NUL byte or is not UTF-8", call);
		return NULL;
	}
	int idx = g_plan.n_programs++;
	g_plan.sources[idx] = src;
	g_plan.options[idx][0] = 0;
	struct _cl_program *p = &g_programs[idx];
	p->used = 1;
	p->index = idx;
	p->built = 0;
	set_err(errcode_ret, CL_SUCCESS);
	return p;
}

cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
		      const char *options,
		      void(CL_CALLBACK *pfn_notify)(cl_program program, void *user_data),
		      void *user_data)
{
	const char *call = "clBuildProgram";
	struct _cl_program *p = program_of(call, program);
	if (!p)
		return CL_INVALID_PROGRAM;
	if ((num_devices > 0) != (device_list != NULL)) {
		record_fail("%s: device list and its length disagree", call);
		return CL_INVALID_VALUE;
	}
	for (cl_uint i = 0; i < num_devices; i++)
		if (!device_ok(call, device_list[i]))
			return CL_INVALID_DEVICE;
	const char *opts = options ? options : "";
	if (strnlen(opts, PLAN_MAX_OPTIONS) >= PLAN_MAX_OPTIONS) {
		record_fail("%s: options over %d bytes", call, PLAN_MAX_OPTIONS - 1);
		return CL_INVALID_BUILD_OPTIONS;
	}
	char bad[256];
	if (!clopts_allowed(opts, bad, sizeof bad)) {
		record_fail(
			"%s: build option '%s' is not allowed (only -D, -U, -cl-*, -w, -Werror, "
			"-g)",
			call, bad);
		return CL_INVALID_BUILD_OPTIONS;
	}
	snprintf(g_plan.options[p->index], PLAN_MAX_OPTIONS, "%s", opts);
	p->built = 1;
	/* The runner builds for real; a compile error is its verdict. */
	if (pfn_notify)
		pfn_notify(program, user_data);
	return CL_SUCCESS;
}

cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info param,
			     size_t size, void *out, size_t *ret)
{
	const char *call = "clGetProgramBuildInfo";
	struct _cl_program *p = program_of(call, program);
	if (!p)
		return CL_INVALID_PROGRAM;
	if (!device_ok(call, device))
		return CL_INVALID_DEVICE;
	switch (param) {
	case CL_PROGRAM_BUILD_STATUS: {
		cl_build_status s = p->built ? CL_BUILD_SUCCESS : CL_BUILD_NONE;
		return ANSWER(s);
	}
	case CL_PROGRAM_BUILD_OPTIONS: return ANSWER_STR(g_plan.options[p->index]);
	case CL_PROGRAM_BUILD_LOG: return ANSWER_STR("");
	case CL_PROGRAM_BINARY_TYPE: {
		cl_program_binary_type t =
			p->built ? CL_PROGRAM_BINARY_TYPE_EXECUTABLE : CL_PROGRAM_BINARY_TYPE_NONE;
		return ANSWER(t);
	}
	default: return unknown_param(call, param);
	}
}

cl_int clGetProgramInfo(cl_program program, cl_program_info param, size_t size, void *out,
			size_t *ret)
{
	const char *call = "clGetProgramInfo";
	struct _cl_program *p = program_of(call, program);
	if (!p)
		return CL_INVALID_PROGRAM;
	cl_uint u = 1;
	cl_context c = &g_context;
	cl_device_id d = &g_device;
	switch (param) {
	case CL_PROGRAM_REFERENCE_COUNT:
	case CL_PROGRAM_NUM_DEVICES: return ANSWER(u);
	case CL_PROGRAM_CONTEXT: return ANSWER(c);
	case CL_PROGRAM_DEVICES: return ANSWER(d);
	case CL_PROGRAM_SOURCE: return ANSWER_STR(g_plan.sources[p->index]);
	default:
		record_fail("%s: parameter 0x%x needs a compiled program, which the recorder does "
			    "not have",
			    call, param);
		return CL_INVALID_VALUE;
	}
}

static int name_ok(const char *s)
{
	size_t n = strnlen(s, PLAN_MAX_NAME);
	if (n == 0 || n >= PLAN_MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

cl_kernel clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret)
{
	const char *call = "clCreateKernel";
	struct _cl_program *p = program_of(call, program);
	if (!p)
		return set_err(errcode_ret, CL_INVALID_PROGRAM), NULL;
	if (!p->built) {
		record_fail("%s: the program was not built (call clBuildProgram first)", call);
		return set_err(errcode_ret, CL_INVALID_PROGRAM_EXECUTABLE), NULL;
	}
	if (!kernel_name || !name_ok(kernel_name)) {
		record_fail("%s: the kernel name is not an identifier of at most %d characters",
			    call, PLAN_MAX_NAME - 1);
		return set_err(errcode_ret, CL_INVALID_KERNEL_NAME), NULL;
	}
	int k = -1;
	for (int i = 0; i < g_plan.n_kernels; i++)
		if (g_plan.kernels[i].program == p->index &&
		    !strcmp(g_plan.kernels[i].name, kernel_name))
			k = i;
	if (k < 0) {
		if (g_plan.n_kernels >= PLAN_MAX_KERNELS) {
			record_fail("%s: more than %d kernels", call, PLAN_MAX_KERNELS);
			return set_err(errcode_ret, CL_OUT_OF_RESOURCES), NULL;
		}
		k = g_plan.n_kernels++;
		struct plan_kernel *pk = &g_plan.kernels[k];
		snprintf(pk->name, sizeof pk->name, "%s", kernel_name);
		pk->program = p->index;
		pk->max_dynamic_smem = 0;
		pk->carveout = -1;
	}
	if (g_n_kernels >= MAX_KERNEL_HANDLES) {
		record_fail("%s: more than %d kernel objects", call, MAX_KERNEL_HANDLES);
		return set_err(errcode_ret, CL_OUT_OF_RESOURCES), NULL;
	}
	struct _cl_kernel *kh = &g_kernels[g_n_kernels++];
	memset(kh, 0, sizeof *kh);
	kh->used = 1;
	kh->kernel = k;
	kh->program = p;
	set_err(errcode_ret, CL_SUCCESS);
	return kh;
}

cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value)
{
	const char *call = "clSetKernelArg";
	struct _cl_kernel *k = kernel_of(call, kernel);
	if (!k)
		return CL_INVALID_KERNEL;
	if (arg_index >= PLAN_MAX_ARGS) {
		record_fail("%s: argument index %u over the cap of %d", call, arg_index,
			    PLAN_MAX_ARGS - 1);
		return CL_INVALID_ARG_INDEX;
	}
	struct karg *a = &k->args[arg_index];
	free(a->bytes);
	memset(a, 0, sizeof *a);
	if (!arg_value) {
		/* __local memory of arg_size bytes (the runner checks that the
		 * kernel's argument is __local) */
		if (arg_size == 0 || arg_size > dev.local_mem || arg_size > (1u << 24)) {
			record_fail("%s: __local argument %u of %zu bytes (1..%llu allowed)", call,
				    arg_index, arg_size, (unsigned long long)dev.local_mem);
			return CL_INVALID_ARG_SIZE;
		}
		a->kind = PLAN_ARG_LOCAL;
		a->size = (uint32_t)arg_size;
	} else if (arg_size == sizeof(cl_mem) && mem_of(NULL, *(const cl_mem *)arg_value)) {
		struct _cl_mem *m = *(const cl_mem *)arg_value;
		a->kind = PLAN_ARG_BUFFER;
		a->size = sizeof(cl_mem);
		a->ref.buf = m->buf;
		a->ref.offset = m->offset;
	} else {
		if (arg_size == 0 || arg_size > MAX_ARG_BYTES) {
			record_fail("%s: argument %u of %zu bytes (1..%d allowed)", call, arg_index,
				    arg_size, MAX_ARG_BYTES);
			return CL_INVALID_ARG_SIZE;
		}
		a->kind = PLAN_ARG_BYTES;
		a->size = (uint32_t)arg_size;
		a->bytes = xmalloc(arg_size);
		memcpy(a->bytes, arg_value, arg_size);
	}
	a->set = 1;
	if ((int)arg_index + 1 > k->n_args)
		k->n_args = (int)arg_index + 1;
	return CL_SUCCESS;
}

/* Count the parameters of `__kernel ... name(...)` in the source: a textual
 * answer for CL_KERNEL_NUM_ARGS, or -1 when the declaration is not plain. */
static int count_kernel_params(const char *src, const char *name)
{
	size_t nl = strlen(name);
	for (const char *s = strstr(src, name); s; s = strstr(s + 1, name)) {
		if (s > src && (s[-1] == '_' || ((s[-1] | 32) >= 'a' && (s[-1] | 32) <= 'z') ||
				(s[-1] >= '0' && s[-1] <= '9')))
			continue;
		const char *q = s + nl;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q != '(')
			continue;
		/* "kernel" must appear since the previous ';', '}' or '#' */
		const char *b = s;
		while (b > src && b[-1] != ';' && b[-1] != '}' && b[-1] != '#')
			b--;
		char head[512];
		size_t hl = (size_t)(s - b) < sizeof head - 1 ? (size_t)(s - b) : sizeof head - 1;
		memcpy(head, b, hl);
		head[hl] = 0;
		if (!strstr(head, "kernel"))
			continue;
		int depth = 0, commas = 0, any = 0;
		for (q++; *q; q++) {
			if (*q == '(')
				depth++;
			else if (*q == ')' && depth-- == 0)
				break;
			else if (*q == ',' && depth == 0)
				commas++;
			else if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r')
				any = 1;
		}
		if (!*q)
			return -1;
		return any ? commas + 1 : 0;
	}
	return -1;
}

cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param, size_t size, void *out, size_t *ret)
{
	const char *call = "clGetKernelInfo";
	struct _cl_kernel *k = kernel_of(call, kernel);
	if (!k)
		return CL_INVALID_KERNEL;
	cl_uint u = 1;
	cl_context c = &g_context;
	cl_program p = k->program;
	switch (param) {
	case CL_KERNEL_FUNCTION_NAME: return ANSWER_STR(g_plan.kernels[k->kernel].name);
	case CL_KERNEL_NUM_ARGS: {
		int n = count_kernel_params(g_plan.sources[k->program->index],
					    g_plan.kernels[k->kernel].name);
		if (n < 0) {
			record_fail("%s(CL_KERNEL_NUM_ARGS): the declaration of %s is not plain "
				    "enough to count its arguments without compiling",
				    call, g_plan.kernels[k->kernel].name);
			return CL_INVALID_VALUE;
		}
		u = (cl_uint)n;
		return ANSWER(u);
	}
	case CL_KERNEL_REFERENCE_COUNT: return ANSWER(u);
	case CL_KERNEL_CONTEXT: return ANSWER(c);
	case CL_KERNEL_PROGRAM: return ANSWER(p);
	case CL_KERNEL_ATTRIBUTES: return ANSWER_STR("");
	default: return unknown_param(call, param);
	}
}

cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
				cl_kernel_work_group_info param, size_t size, void *out,
				size_t *ret)
{
	const char *call = "clGetKernelWorkGroupInfo";
	if (!kernel_of(call, kernel))
		return CL_INVALID_KERNEL;
	if (device && !device_ok(call, device))
		return CL_INVALID_DEVICE;
	size_t sz;
	cl_ulong ul = 0;
	size_t three[3] = {0, 0, 0};
	switch (param) {
	case CL_KERNEL_WORK_GROUP_SIZE: return ANSWER(dev.max_wg);
	case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: return answer(three, sizeof three, size, out, ret);
	case CL_KERNEL_LOCAL_MEM_SIZE:
	case CL_KERNEL_PRIVATE_MEM_SIZE: return ANSWER(ul);
	case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: sz = dev.wg_multiple; return ANSWER(sz);
	default: return unknown_param(call, param);
	}
}

/* ---- enqueue ---- */

static struct plan_op *new_op(const char *call)
{
	if (g_plan.n_ops >= PLAN_MAX_OPS) {
		record_fail("%s: more than %d operations", call, PLAN_MAX_OPS);
		return NULL;
	}
	return plan_add_op(&g_plan);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
			      const size_t *global_work_offset, const size_t *global_work_size,
			      const size_t *local_work_size, cl_uint num_events_in_wait_list,
			      const cl_event *event_wait_list, cl_event *event)
{
	const char *call = "clEnqueueNDRangeKernel";
	if (!queue_ok(call, queue))
		return CL_INVALID_COMMAND_QUEUE;
	struct _cl_kernel *k = kernel_of(call, kernel);
	if (!k)
		return CL_INVALID_KERNEL;
	const char *kname = g_plan.kernels[k->kernel].name;
	if (work_dim < 1 || work_dim > 3) {
		record_fail("%s: work_dim %u (1..3)", call, work_dim);
		return CL_INVALID_WORK_DIMENSION;
	}
	if (!global_work_size) {
		record_fail("%s: global_work_size is NULL", call);
		return CL_INVALID_GLOBAL_WORK_SIZE;
	}
	size_t group = 1;
	if (work_dim > dev.max_dims) {
		record_fail("%s: work_dim %u, over the device's %u", call, work_dim, dev.max_dims);
		return CL_INVALID_WORK_DIMENSION;
	}
	for (cl_uint d = 0; d < work_dim; d++) {
		if (global_work_size[d] > ((size_t)1 << 40)) {
			record_fail("%s: global size %zu in dimension %u is over 2^40", call,
				    global_work_size[d], d);
			return CL_INVALID_GLOBAL_WORK_SIZE;
		}
		if (global_work_offset && global_work_offset[d] > ((size_t)1 << 40)) {
			record_fail("%s: global offset over 2^40", call);
			return CL_INVALID_GLOBAL_OFFSET;
		}
		if (local_work_size) {
			size_t l = local_work_size[d];
			if (l == 0 || l > dev.item[d] || l > (1u << 16)) {
				record_fail("%s: local size %zu in dimension %u (1..%zu on this "
					    "device)",
					    call, l, d, dev.item[d]);
				return CL_INVALID_WORK_ITEM_SIZE;
			}
			group *= l;
		}
	}
	if (group > dev.max_wg) {
		record_fail("%s: work-group of %zu items, over the device's %zu", call, group,
			    dev.max_wg);
		return CL_INVALID_WORK_GROUP_SIZE;
	}
	for (int i = 0; i < k->n_args; i++)
		if (!k->args[i].set) {
			record_fail("%s: argument %d of kernel %s is not set", call, i, kname);
			return CL_INVALID_KERNEL_ARGS;
		}
	if (!events_ok(call, num_events_in_wait_list, event_wait_list, event))
		return CL_INVALID_EVENT_WAIT_LIST;
	struct plan_op *o = new_op(call);
	if (!o)
		return CL_OUT_OF_RESOURCES;
	o->kind = PLAN_OP_LAUNCH;
	o->kernel = k->kernel;
	o->work_dim = work_dim;
	for (cl_uint d = 0; d < 3; d++) {
		o->grid[d] = d < work_dim ? global_work_size[d] : 1;
		o->block[d] = !local_work_size ? 0 : d < work_dim ? local_work_size[d] : 1;
		o->goffset[d] = d < work_dim && global_work_offset ? global_work_offset[d] : 0;
	}
	o->n_args = k->n_args;
	o->args = xcalloc(k->n_args ? (size_t)k->n_args : 1, sizeof *o->args);
	for (int i = 0; i < k->n_args; i++) {
		const struct karg *a = &k->args[i];
		struct plan_arg *g = &o->args[i];
		g->kind = a->kind;
		g->size = a->size;
		if (a->kind == PLAN_ARG_BYTES) {
			g->bytes = xmalloc(a->size);
			memcpy(g->bytes, a->bytes, a->size);
		} else if (a->kind == PLAN_ARG_BUFFER) {
			g->n_relocs = 1;
			g->relocs = xcalloc(1, sizeof *g->relocs);
			g->relocs[0].ref = a->ref;
		}
	}
	return CL_SUCCESS;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
		      cl_int *errcode_ret)
{
	const char *call = "clCreateBuffer";
	if (!context_ok(call, context))
		return set_err(errcode_ret, CL_INVALID_CONTEXT), NULL;
	if (host_ptr ||
	    (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR))) {
		record_fail("%s: host memory is not allowed (no host pointer, no "
			    "CL_MEM_*_HOST_PTR): device scratch only",
			    call);
		return set_err(errcode_ret, CL_INVALID_VALUE), NULL;
	}
	if (size == 0 || size > dev.max_alloc) {
		record_fail("%s: %zu bytes (1..%llu on this device)", call, size,
			    (unsigned long long)dev.max_alloc);
		return set_err(errcode_ret, CL_INVALID_BUFFER_SIZE), NULL;
	}
	if (g_plan.n_workspaces >= PLAN_MAX_WORKSPACES ||
	    g_workspace_total + size > PLAN_MAX_WORKSPACE_BYTES || g_n_mems >= MAX_MEMS) {
		record_fail("%s: over the cap of %d workspace buffers or %llu bytes in all", call,
			    PLAN_MAX_WORKSPACES, (unsigned long long)PLAN_MAX_WORKSPACE_BYTES);
		return set_err(errcode_ret, CL_OUT_OF_RESOURCES), NULL;
	}
	int w = g_plan.n_workspaces++;
	g_plan.workspace[w] = size;
	g_workspace_total += size;
	struct _cl_mem *m = &g_mems[g_n_mems++];
	m->used = 1;
	m->buf = g_n_tensors + w;
	m->offset = 0;
	m->size = size;
	m->parent = -1;
	m->flags = flags ? flags : CL_MEM_READ_WRITE;
	set_err(errcode_ret, CL_SUCCESS);
	return m;
}

cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
			 const void *info, cl_int *errcode_ret)
{
	const char *call = "clCreateSubBuffer";
	struct _cl_mem *parent = mem_of(call, buffer);
	if (!parent)
		return set_err(errcode_ret, CL_INVALID_MEM_OBJECT), NULL;
	if (parent->parent >= 0) {
		record_fail("%s: a sub-buffer of a sub-buffer", call);
		return set_err(errcode_ret, CL_INVALID_MEM_OBJECT), NULL;
	}
	if (type != CL_BUFFER_CREATE_TYPE_REGION || !info) {
		record_fail("%s: only CL_BUFFER_CREATE_TYPE_REGION with a region", call);
		return set_err(errcode_ret, CL_INVALID_VALUE), NULL;
	}
	if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)) {
		record_fail("%s: host pointer flags", call);
		return set_err(errcode_ret, CL_INVALID_VALUE), NULL;
	}
	const cl_buffer_region *r = info;
	if (r->size == 0 || r->origin > parent->size || r->size > parent->size - r->origin) {
		record_fail("%s: region [%zu, +%zu) outside the buffer of %llu bytes", call,
			    r->origin, r->size, (unsigned long long)parent->size);
		return set_err(errcode_ret, r->size ? CL_INVALID_VALUE : CL_INVALID_BUFFER_SIZE),
		       NULL;
	}
	if (r->origin % (dev.align_bits / 8)) {
		record_fail("%s: origin %zu is not a multiple of the device's base address "
			    "alignment (%u bytes)",
			    call, r->origin, dev.align_bits / 8);
		return set_err(errcode_ret, CL_MISALIGNED_SUB_BUFFER_OFFSET), NULL;
	}
	if (g_n_mems >= MAX_MEMS) {
		record_fail("%s: more than %d memory objects", call, MAX_MEMS);
		return set_err(errcode_ret, CL_OUT_OF_RESOURCES), NULL;
	}
	struct _cl_mem *m = &g_mems[g_n_mems++];
	m->used = 1;
	m->buf = parent->buf;
	m->offset = parent->offset + r->origin;
	m->size = r->size;
	m->parent = (int)(parent - g_mems);
	m->flags = flags ? flags : parent->flags;
	set_err(errcode_ret, CL_SUCCESS);
	return m;
}

cl_int clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer, const void *pattern,
			   size_t pattern_size, size_t offset, size_t size,
			   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
			   cl_event *event)
{
	const char *call = "clEnqueueFillBuffer";
	if (!queue_ok(call, queue))
		return CL_INVALID_COMMAND_QUEUE;
	struct _cl_mem *m = mem_of(call, buffer);
	if (!m)
		return CL_INVALID_MEM_OBJECT;
	if (!pattern || pattern_size == 0 || pattern_size > 128 ||
	    (pattern_size & (pattern_size - 1))) {
		record_fail("%s: pattern of %zu bytes (1, 2, 4, ... 128)", call, pattern_size);
		return CL_INVALID_VALUE;
	}
	if (offset % pattern_size || size % pattern_size || offset > m->size ||
	    size > m->size - offset) {
		record_fail("%s: [%zu, +%zu) is outside the buffer of %llu bytes or not a multiple "
			    "of the pattern size",
			    call, offset, size, (unsigned long long)m->size);
		return CL_INVALID_VALUE;
	}
	if (!events_ok(call, num_events_in_wait_list, event_wait_list, event))
		return CL_INVALID_EVENT_WAIT_LIST;
	struct plan_op *o = new_op(call);
	if (!o)
		return CL_OUT_OF_RESOURCES;
	o->kind = PLAN_OP_FILL;
	o->dst.buf = m->buf;
	o->dst.offset = m->offset + offset;
	o->size = size;
	memcpy(o->pattern, pattern, pattern_size);
	o->pattern_size = (uint32_t)pattern_size;
	return CL_SUCCESS;
}

cl_int clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src_buffer, cl_mem dst_buffer,
			   size_t src_offset, size_t dst_offset, size_t size,
			   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
			   cl_event *event)
{
	const char *call = "clEnqueueCopyBuffer";
	if (!queue_ok(call, queue))
		return CL_INVALID_COMMAND_QUEUE;
	struct _cl_mem *s = mem_of(call, src_buffer);
	struct _cl_mem *d = s ? mem_of(call, dst_buffer) : NULL;
	if (!s || !d)
		return CL_INVALID_MEM_OBJECT;
	if (size == 0 || src_offset > s->size || size > s->size - src_offset ||
	    dst_offset > d->size || size > d->size - dst_offset) {
		record_fail("%s: %zu bytes from +%zu to +%zu fall outside the buffers", call, size,
			    src_offset, dst_offset);
		return CL_INVALID_VALUE;
	}
	uint64_t a = s->offset + src_offset, b = d->offset + dst_offset;
	if (s->buf == d->buf && a < b + size && b < a + size) {
		record_fail("%s: source and destination overlap", call);
		return CL_MEM_COPY_OVERLAP;
	}
	if (!events_ok(call, num_events_in_wait_list, event_wait_list, event))
		return CL_INVALID_EVENT_WAIT_LIST;
	struct plan_op *o = new_op(call);
	if (!o)
		return CL_OUT_OF_RESOURCES;
	o->kind = PLAN_OP_COPY;
	o->src.buf = s->buf;
	o->src.offset = a;
	o->dst.buf = d->buf;
	o->dst.offset = b;
	o->size = size;
	return CL_SUCCESS;
}

cl_int clGetMemObjectInfo(cl_mem memobj, cl_mem_info param, size_t size, void *out, size_t *ret)
{
	const char *call = "clGetMemObjectInfo";
	struct _cl_mem *m = mem_of(call, memobj);
	if (!m)
		return CL_INVALID_MEM_OBJECT;
	cl_mem_object_type t = CL_MEM_OBJECT_BUFFER;
	size_t sz = (size_t)m->size;
	void *hp = NULL;
	cl_uint u;
	cl_context c = &g_context;
	cl_mem parent = m->parent >= 0 ? &g_mems[m->parent] : NULL;
	cl_bool b = CL_FALSE;
	switch (param) {
	case CL_MEM_TYPE: return ANSWER(t);
	case CL_MEM_FLAGS: return ANSWER(m->flags);
	case CL_MEM_SIZE: return ANSWER(sz);
	case CL_MEM_HOST_PTR: return ANSWER(hp);
	case CL_MEM_MAP_COUNT: u = 0; return ANSWER(u);
	case CL_MEM_REFERENCE_COUNT: u = 1; return ANSWER(u);
	case CL_MEM_CONTEXT: return ANSWER(c);
	case CL_MEM_ASSOCIATED_MEMOBJECT: return ANSWER(parent);
	case CL_MEM_OFFSET:
		sz = parent ? (size_t)(m->offset - parent->offset) : 0;
		return ANSWER(sz);
	case CL_MEM_USES_SVM_POINTER: return ANSWER(b);
	default: return unknown_param(call, param);
	}
}

cl_int clFlush(cl_command_queue queue)
{
	return queue_ok("clFlush", queue) ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
}

/* ---- reference counts: handles live for the whole call ---- */

#define RETAIN_RELEASE(fn, type, check, err)                                                       \
	cl_int fn(type h)                                                                          \
	{                                                                                          \
		return check ? CL_SUCCESS : err;                                                   \
	}
RETAIN_RELEASE(clRetainMemObject, cl_mem, mem_of("clRetainMemObject", h) != NULL,
	       CL_INVALID_MEM_OBJECT)
RETAIN_RELEASE(clReleaseMemObject, cl_mem, mem_of("clReleaseMemObject", h) != NULL,
	       CL_INVALID_MEM_OBJECT)
RETAIN_RELEASE(clRetainKernel, cl_kernel, kernel_of("clRetainKernel", h) != NULL, CL_INVALID_KERNEL)
RETAIN_RELEASE(clReleaseKernel, cl_kernel, kernel_of("clReleaseKernel", h) != NULL,
	       CL_INVALID_KERNEL)
RETAIN_RELEASE(clRetainProgram, cl_program, program_of("clRetainProgram", h) != NULL,
	       CL_INVALID_PROGRAM)
RETAIN_RELEASE(clReleaseProgram, cl_program, program_of("clReleaseProgram", h) != NULL,
	       CL_INVALID_PROGRAM)
RETAIN_RELEASE(clRetainEvent, cl_event,
	       (h == &g_event || (record_fail("clRetainEvent: unknown event"), 0)),
	       CL_INVALID_EVENT)
RETAIN_RELEASE(clReleaseEvent, cl_event,
	       (h == &g_event || (record_fail("clReleaseEvent: unknown event"), 0)),
	       CL_INVALID_EVENT)
RETAIN_RELEASE(clRetainCommandQueue, cl_command_queue, queue_ok("clRetainCommandQueue", h),
	       CL_INVALID_COMMAND_QUEUE)
RETAIN_RELEASE(clReleaseCommandQueue, cl_command_queue, queue_ok("clReleaseCommandQueue", h),
	       CL_INVALID_COMMAND_QUEUE)
RETAIN_RELEASE(clRetainContext, cl_context, context_ok("clRetainContext", h), CL_INVALID_CONTEXT)
RETAIN_RELEASE(clReleaseContext, cl_context, context_ok("clReleaseContext", h), CL_INVALID_CONTEXT)
RETAIN_RELEASE(clRetainDevice, cl_device_id, device_ok("clRetainDevice", h), CL_INVALID_DEVICE)
RETAIN_RELEASE(clReleaseDevice, cl_device_id, device_ok("clReleaseDevice", h), CL_INVALID_DEVICE)

/* ---- calls that are not available: each is a record_error naming it ---- */

#define NO_SYNC "synchronisation is not allowed (ka_launch only enqueues)"
#define NO_HOST "host transfers are not allowed (the grader owns the data)"
#define NO_OBJ "ka_launch must use the context and queue it was given"

static cl_int unavailable(const char *call, const char *why)
{
	record_fail("%s: not available: %s", call, why);
	return CL_INVALID_OPERATION;
}

cl_int clFinish(cl_command_queue q)
{
	(void)q;
	return unavailable("clFinish", NO_SYNC);
}

cl_int clWaitForEvents(cl_uint n, const cl_event *l)
{
	(void)n, (void)l;
	return unavailable("clWaitForEvents", NO_SYNC);
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off, size_t sz,
			   void *p, cl_uint n, const cl_event *w, cl_event *e)
{
	(void)q, (void)b, (void)blk, (void)off, (void)sz, (void)p, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueReadBuffer", NO_HOST);
}

cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blk, size_t off, size_t sz,
			    const void *p, cl_uint n, const cl_event *w, cl_event *e)
{
	(void)q, (void)b, (void)blk, (void)off, (void)sz, (void)p, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueWriteBuffer", NO_HOST);
}

void *clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blk, cl_map_flags f, size_t off,
			 size_t sz, cl_uint n, const cl_event *w, cl_event *e, cl_int *err)
{
	(void)q, (void)b, (void)blk, (void)f, (void)off, (void)sz, (void)n, (void)w, (void)e;
	set_err(err, unavailable("clEnqueueMapBuffer", NO_HOST));
	return NULL;
}

cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w,
			       cl_event *e)
{
	(void)q, (void)m, (void)p, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueUnmapMemObject", NO_HOST);
}

cl_command_queue clCreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties p,
				      cl_int *err)
{
	(void)c, (void)d, (void)p;
	set_err(err, unavailable("clCreateCommandQueue", NO_OBJ));
	return NULL;
}

cl_command_queue clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
						    const cl_queue_properties *p, cl_int *err)
{
	(void)c, (void)d, (void)p;
	set_err(err, unavailable("clCreateCommandQueueWithProperties", NO_OBJ));
	return NULL;
}

cl_context clCreateContext(const cl_context_properties *p, cl_uint n, const cl_device_id *d,
			   void(CL_CALLBACK *f)(const char *, const void *, size_t, void *),
			   void *u, cl_int *err)
{
	(void)p, (void)n, (void)d, (void)f, (void)u;
	set_err(err, unavailable("clCreateContext", NO_OBJ));
	return NULL;
}

cl_context clCreateContextFromType(const cl_context_properties *p, cl_device_type t,
				   void(CL_CALLBACK *f)(const char *, const void *, size_t, void *),
				   void *u, cl_int *err)
{
	(void)p, (void)t, (void)f, (void)u;
	set_err(err, unavailable("clCreateContextFromType", NO_OBJ));
	return NULL;
}

cl_event clCreateUserEvent(cl_context c, cl_int *err)
{
	(void)c;
	set_err(err, unavailable("clCreateUserEvent", NO_SYNC));
	return NULL;
}

void *clSVMAlloc(cl_context c, cl_svm_mem_flags f, size_t sz, cl_uint a)
{
	(void)c, (void)f, (void)sz, (void)a;
	unavailable("clSVMAlloc", "shared virtual memory is not supported");
	return NULL;
}

cl_int clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *f)(void *), void *a, size_t cb,
			     cl_uint nm, const cl_mem *ml, const void **loc, cl_uint n,
			     const cl_event *w, cl_event *e)
{
	(void)q, (void)f, (void)a, (void)cb, (void)nm, (void)ml, (void)loc, (void)n, (void)w,
		(void)e;
	return unavailable("clEnqueueNativeKernel", "host functions cannot be enqueued");
}

cl_program clCreateProgramWithBinary(cl_context c, cl_uint n, const cl_device_id *d,
				     const size_t *l, const unsigned char **b, cl_int *bs,
				     cl_int *err)
{
	(void)c, (void)n, (void)d, (void)l, (void)b, (void)bs;
	set_err(err, unavailable("clCreateProgramWithBinary", "programs come from source only"));
	return NULL;
}

cl_program clCreateProgramWithIL(cl_context c, const void *il, size_t l, cl_int *err)
{
	(void)c, (void)il, (void)l;
	set_err(err, unavailable("clCreateProgramWithIL", "programs come from source only"));
	return NULL;
}

cl_program clLinkProgram(cl_context c, cl_uint n, const cl_device_id *d, const char *o, cl_uint ni,
			 const cl_program *ip, void(CL_CALLBACK *f)(cl_program, void *), void *u,
			 cl_int *err)
{
	(void)c, (void)n, (void)d, (void)o, (void)ni, (void)ip, (void)f, (void)u;
	set_err(err, unavailable("clLinkProgram", "use clBuildProgram"));
	return NULL;
}

cl_int clCompileProgram(cl_program p, cl_uint n, const cl_device_id *d, const char *o, cl_uint nh,
			const cl_program *h, const char **hn,
			void(CL_CALLBACK *f)(cl_program, void *), void *u)
{
	(void)p, (void)n, (void)d, (void)o, (void)nh, (void)h, (void)hn, (void)f, (void)u;
	return unavailable("clCompileProgram", "use clBuildProgram");
}

cl_int clCreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel *k, cl_uint *nr)
{
	(void)p, (void)n, (void)k, (void)nr;
	return unavailable("clCreateKernelsInProgram",
			   "the recorder cannot know the kernels' names: use clCreateKernel");
}

cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event *w, cl_event *e)
{
	(void)q, (void)k, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueTask", "use clEnqueueNDRangeKernel");
}

cl_int clGetEventProfilingInfo(cl_event ev, cl_profiling_info p, size_t sz, void *v, size_t *r)
{
	(void)ev, (void)p, (void)sz, (void)v, (void)r;
	return unavailable("clGetEventProfilingInfo", "the grader does the timing");
}

cl_int clGetEventInfo(cl_event ev, cl_event_info p, size_t sz, void *v, size_t *r)
{
	(void)ev, (void)p, (void)sz, (void)v, (void)r;
	return unavailable("clGetEventInfo", NO_SYNC);
}

void *clGetExtensionFunctionAddressForPlatform(cl_platform_id p, const char *name)
{
	(void)p;
	record_fail("clGetExtensionFunctionAddressForPlatform(%.100s): not available: extension "
		    "functions are not supported",
		    name ? name : "NULL");
	return NULL;
}

cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e)
{
	(void)q, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueBarrierWithWaitList", "the queue is in order: not needed");
}

cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e)
{
	(void)q, (void)n, (void)w, (void)e;
	return unavailable("clEnqueueMarkerWithWaitList", NO_SYNC);
}

cl_kernel clCloneKernel(cl_kernel k, cl_int *err)
{
	(void)k;
	set_err(err, unavailable("clCloneKernel", "use clCreateKernel"));
	return NULL;
}

cl_int clSetKernelArgSVMPointer(cl_kernel k, cl_uint i, const void *v)
{
	(void)k, (void)i, (void)v;
	return unavailable("clSetKernelArgSVMPointer", "shared virtual memory is not supported");
}

cl_int clGetKernelArgInfo(cl_kernel k, cl_uint i, cl_kernel_arg_info p, size_t sz, void *v,
			  size_t *r)
{
	(void)k, (void)i, (void)p, (void)sz, (void)v, (void)r;
	return unavailable("clGetKernelArgInfo", "needs a compiled program");
}
