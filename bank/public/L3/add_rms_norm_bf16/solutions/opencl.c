/* add_rms_norm_bf16, OpenCL solution: one work item per row: h = x + r rounded to bf16 and stored, fp32 sum of squares on ushort16/float16 vectors, then the bf16 write. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"#define LDB(p, i) as_float((uint)(p)[i] << 16)\n"
	"static ushort bf(float v)\n"
	"{\n"
	"    uint u = as_uint(v);\n"
	"    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
	"}\n"
	"\n"
	"#define LDB16(p, i) as_float16(convert_uint16(vload16(0, (p) + (i))) << 16)\n"
	"static ushort16 bf16v(float16 v)\n"
	"{\n"
	"    uint16 u = as_uint16(v);\n"
	"    return convert_ushort16((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
	"}\n"
	"__kernel void rms(long R, long C, __global const ushort *x, __global const ushort *r, __global const ushort *w, __global ushort *h, __global ushort *y)\n"
	"{\n"
	"    long row = get_global_id(0);\n"
	"    if (row >= R)\n"
	"        return;\n"
	"    long o = row * C, cv = C / 16 * 16; /* ushort16 vectors over [0, cv) */\n"
	"    float16 s16 = (float16)(0.0f);\n"
	"    float s = 0.0f;\n"
	"    for (long c = 0; c < cv; c += 16) {\n"
	"        float16 v = LDB16(x, o + c);\n"
	"#if 1\n"
	"        ushort16 hb = bf16v(v + LDB16(r, o + c));\n"
	"        vstore16(hb, 0, h + o + c);\n"
	"        v = as_float16(convert_uint16(hb) << 16);\n"
	"#endif\n"
	"        s16 += v * v;\n"
	"    }\n"
	"    for (long c = cv; c < C; c++) {\n"
	"        float v = LDB(x, o + c);\n"
	"#if 1\n"
	"        h[o + c] = bf(v + LDB(r, o + c));\n"
	"        v = LDB(h, o + c);\n"
	"#endif\n"
	"        s += v * v;\n"
	"    }\n"
	"    float8 s8 = s16.lo + s16.hi;\n"
	"    float4 s4 = s8.lo + s8.hi;\n"
	"    s += (s4.x + s4.y) + (s4.z + s4.w);\n"
	"    float rs = 1.0f / sqrt(s / (float)C + 1e-6f);\n"
	"#if 1\n"
	"    __global const ushort *src = h;\n"
	"#else\n"
	"    __global const ushort *src = x;\n"
	"#endif\n"
	"    for (long c = 0; c < cv; c += 16)\n"
	"        vstore16(bf16v(LDB16(src, o + c) * rs * LDB16(w, c)), 0, y + o + c);\n"
	"    for (long c = cv; c < C; c++)\n"
	"        y[o + c] = bf(LDB(src, o + c) * rs * LDB(w, c));\n"
	"}\n"
	;

/* Build kernel_src, set the arguments (cl_long params first, then the
 * tensors in task order) and run one work item per row over `rows`. */
static int run_rows(const struct ka_args *a, cl_context ctx, cl_device_id dev,
		    cl_command_queue queue, const char *kname, size_t rows)
{
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, kname, &err);
	if (err != CL_SUCCESS)
		goto out;
	cl_uint arg = 0;
	for (int i = 0; i < a->n_params; i++) {
		cl_long v = a->params[i];
		err |= clSetKernelArg(k, arg++, sizeof v, &v);
	}
	for (int i = 0; i < a->n_inputs; i++) {
		cl_mem m = (cl_mem)a->inputs[i].ptr;
		err |= clSetKernelArg(k, arg++, sizeof m, &m);
	}
	for (int i = 0; i < a->n_outputs; i++) {
		cl_mem m = (cl_mem)a->outputs[i].ptr;
		err |= clSetKernelArg(k, arg++, sizeof m, &m);
	}
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4, global = (rows + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	return run_rows(a, ctx, dev, queue, "rms", (size_t)(a->params[0]));
}
