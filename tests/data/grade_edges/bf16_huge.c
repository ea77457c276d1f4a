/* bf16_huge: an OpenCL candidate, x * 2^125 on the bits.
 * y = x * 2^125 (tests/data/tasks_edge/bf16_huge): 125 added to the bf16 exponent field, exact; the results cover every finite bf16 pattern from 0x7E00 to 0x7F7F */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void huge(long N, __global const ushort *a, __global ushort *y)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i < N)\n"
	"        y[i] = (ushort)(a[i] + (125 << 7));\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	cl_long a0 = a->params[0];
	cl_mem a1 = (cl_mem)a->inputs[0].ptr;
	cl_mem a2 = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "huge", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = CL_SUCCESS;
	err |= clSetKernelArg(k, 0, sizeof a0, &a0);
	err |= clSetKernelArg(k, 1, sizeof a1, &a1);
	err |= clSetKernelArg(k, 2, sizeof a2, &a2);
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
