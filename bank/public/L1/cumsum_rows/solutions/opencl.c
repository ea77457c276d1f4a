/* cumsum_rows, OpenCL solution: torch.cumsum(x, dim=-1).
 *
 * One work item per row, written for a CPU device (PoCL), where the row
 * streams through one core's cache: a running sum in blocks of 64 elements
 * (each block's own running sum starts at 0 and is added to the carry of the
 * blocks before it), which keeps the fp32 rounding error of long rows near
 * that of a tree. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void scan(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    __global float *yr = y + r * C;\n"
	"    float carry = 0.f;\n"
	"    for (long c0 = 0; c0 < C; c0 += 64) {\n"
	"        long c1 = min(C, c0 + 64);\n"
	"        float run = 0.f;\n"
	"        for (long c = c0; c < c1; c++) {\n"
	"            run += xr[c];\n"
	"            yr[c] = carry + run;\n"
	"        }\n"
	"        carry += run;\n"
	"    }\n"
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
	k = clCreateKernel(prog, "scan", &err);
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
