/* fixed_rows: an OpenCL candidate, x.sum(dim=1).
 * a task with no parameters (tests/data/tasks_edge/fixed_rows) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void rows(__global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= 3)\n"
	"        return;\n"
	"    float s = 0.0f;\n"
	"    for (int c = 0; c < 5; c++)\n"
	"        s += x[r * 5 + c];\n"
	"    y[r] = s;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	cl_mem a0 = (cl_mem)a->inputs[0].ptr;
	cl_mem a1 = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "rows", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = CL_SUCCESS;
	err |= clSetKernelArg(k, 0, sizeof a0, &a0);
	err |= clSetKernelArg(k, 1, sizeof a1, &a1);
	if (err != CL_SUCCESS)
		goto out;
	size_t global[1] = {(size_t)(3)};
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, global, NULL, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
