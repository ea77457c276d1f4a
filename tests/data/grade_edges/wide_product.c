/* wide_product: an OpenCL candidate, a.long() * b.long().
 * p = a * b in int64 (tests/data/tasks_edge/wide_product) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void prod(long N, __global const int *a, __global const int *b, __global long *p)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i < N)\n"
	"        p[i] = (long)a[i] * (long)b[i];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	cl_long a0 = a->params[0];
	cl_mem a1 = (cl_mem)a->inputs[0].ptr;
	cl_mem a2 = (cl_mem)a->inputs[1].ptr;
	cl_mem a3 = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "prod", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = CL_SUCCESS;
	err |= clSetKernelArg(k, 0, sizeof a0, &a0);
	err |= clSetKernelArg(k, 1, sizeof a1, &a1);
	err |= clSetKernelArg(k, 2, sizeof a2, &a2);
	err |= clSetKernelArg(k, 3, sizeof a3, &a3);
	if (err != CL_SUCCESS)
		goto out;
	size_t global[1] = {(size_t)(a0)};
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, global, NULL, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
