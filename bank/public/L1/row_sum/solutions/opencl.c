/* row_sum, OpenCL solution: torch.sum(x, dim=-1).
 *
 * One work item per row, written for a CPU device (PoCL), where the row
 * streams through the core's cache: a serial pass with float accumulators
 * (for sums, 8 partial sums keep the rounding error small). Nothing is kept
 * between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void red(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};\n"
	"    for (long c = 0; c < C; c++) {\n"
	"        float v = xr[c];\n"
	"        s[c & 7] += v;\n"
	"    }\n"
	"    y[r] = (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])));\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, C; x; y. */
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "red", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof R, &R);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4;
	size_t global = ((size_t)R + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
