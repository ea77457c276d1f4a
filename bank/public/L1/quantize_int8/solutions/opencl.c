/* quantize_int8, OpenCL solution: clamp(round(x / scale), -128, 127) as int8.
 *
 * One work item per element. scale (a->scalars[0]) is a power of two, so
 * x / scale is exact in float; rint rounds half to even like torch.round.
 * Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void qz(long n, float scale, __global const float *x, __global char *y)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i < n)\n"
	"        y[i] = (char)clamp(rint(x[i] / scale), -128.0f, 127.0f);\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters R, C; scalar scale; tensor x; y. */
	cl_long n = a->params[0] * a->params[1];
	cl_float scale = (cl_float)a->scalars[0];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "qz", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof n, &n);
	err |= clSetKernelArg(k, 1, sizeof scale, &scale);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 64;
	size_t global = ((size_t)n + 63) / 64 * 64;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
