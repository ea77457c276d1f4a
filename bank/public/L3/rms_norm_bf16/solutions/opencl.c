/* rms_norm_bf16, OpenCL solution: one work item per row: fp32 sum of squares, then the bf16 write. */
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
	"__kernel void rms(long R, long C, __global const ushort *x, __global const ushort *w, __global ushort *y)\n"
	"{\n"
	"    long row = get_global_id(0);\n"
	"    if (row >= R)\n"
	"        return;\n"
	"    long o = row * C;\n"
	"    float s = 0.0f;\n"
	"    for (long c = 0; c < C; c++) {\n"
	"        float v = LDB(x, o + c);\n"
	"#if 0\n"
	"        h[o + c] = bf(v + LDB(r, o + c));\n"
	"        v = LDB(h, o + c);\n"
	"#endif\n"
	"        s += v * v;\n"
	"    }\n"
	"    float rs = 1.0f / sqrt(s / (float)C + 1e-6f);\n"
	"    for (long c = 0; c < C; c++) {\n"
	"#if 0\n"
	"        float v = LDB(h, o + c);\n"
	"#else\n"
	"        float v = LDB(x, o + c);\n"
	"#endif\n"
	"        y[o + c] = bf(v * rs * LDB(w, c));\n"
	"    }\n"
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
