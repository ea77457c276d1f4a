/* one_hot, OpenCL solution: F.one_hot(idx, C) with int64 output.
 *
 * One work item per row, written for a CPU device (PoCL): it reads idx[n]
 * once and writes the row's C elements in order (0 everywhere but a 1 at
 * idx[n]). Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void onehot(long N, long C, __global const long *idx, __global long *y)\n"
	"{\n"
	"    long n = get_global_id(0);\n"
	"    if (n >= N)\n"
	"        return;\n"
	"    long k = idx[n];\n"
	"    __global long *yr = y + n * C;\n"
	"    for (long c = 0; c < C; c++)\n"
	"        yr[c] = c == k;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: N, C; idx; y. */
	cl_long N = a->params[0], C = a->params[1];
	cl_mem idx = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "onehot", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof N, &N);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof idx, &idx);
	err |= clSetKernelArg(k, 3, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 16;
	size_t global = ((size_t)N + 15) / 16 * 16;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
