/* group_norm, OpenCL solution: one work item per (sample, group): two-pass mean and variance in fp32, then the affine write. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void gn(long N, long CG, long HW, __global const float *x, __global const float *w,\n"
	"                 __global const float *b, __global float *y)\n"
	"{\n"
	"    long g = get_global_id(0);\n"
	"    if (g >= N * 32)\n"
	"        return;\n"
	"    long L = CG * HW;\n"
	"    __global const float *xg = x + g * L;\n"
	"    float s = 0.0f, q = 0.0f;\n"
	"    for (long i = 0; i < L; i++)\n"
	"        s += xg[i];\n"
	"    float mean = s / (float)L;\n"
	"    for (long i = 0; i < L; i++)\n"
	"        q += (xg[i] - mean) * (xg[i] - mean);\n"
	"    float rstd = 1.0f / sqrt(q / (float)L + 1e-5f);\n"
	"    for (long i = 0; i < L; i++) {\n"
	"        long c = (g % 32) * CG + i / HW;\n"
	"        y[g * L + i] = (xg[i] - mean) * rstd * w[c] + b[c];\n"
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
	return run_rows(a, ctx, dev, queue, "gn", (size_t)(a->params[0] * 32));
}
