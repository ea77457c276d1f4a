/* expect: ok
 * The closed form of heavy_item: y = x + (K - 1) / (2K). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"__kernel void k(long n, long kk, __global const float *x, __global float *y)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i < n) y[i] = x[i] + (0.5f - 0.5f / (float)kk);\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long n = a->params[0], kk = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof n, &n);
	clSetKernelArg(k, 1, sizeof kk, &kk);
	clSetKernelArg(k, 2, sizeof x, &x);
	clSetKernelArg(k, 3, sizeof y, &y);
	size_t global = (size_t)n;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) ? -1 : 0;
}
