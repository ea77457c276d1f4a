/* col_sum, OpenCL solution: torch.sum(x, dim=0).
 *
 * One work item per 16 consecutive columns, written for a CPU device (PoCL):
 * it walks all the rows, reading 64 contiguous bytes of each, and sums in
 * two levels (blocks of 64 rows into a block sum, block sums into the
 * total), which keeps the fp32 rounding error near that of a tree. Nothing
 * is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void colsum(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long c0 = get_global_id(0) * 16;\n"
	"    if (c0 >= C)\n"
	"        return;\n"
	"    int w = (int)min((long)16, C - c0);\n"
	"    float tot[16], blk[16];\n"
	"    for (int j = 0; j < 16; j++)\n"
	"        tot[j] = 0.f;\n"
	"    for (long r0 = 0; r0 < R; r0 += 64) {\n"
	"        for (int j = 0; j < 16; j++)\n"
	"            blk[j] = 0.f;\n"
	"        long r1 = min(R, r0 + 64);\n"
	"        for (long r = r0; r < r1; r++) {\n"
	"            __global const float *xr = x + r * C + c0;\n"
	"            for (int j = 0; j < w; j++)\n"
	"                blk[j] += xr[j];\n"
	"        }\n"
	"        for (int j = 0; j < 16; j++)\n"
	"            tot[j] += blk[j];\n"
	"    }\n"
	"    for (int j = 0; j < w; j++)\n"
	"        y[c0 + j] = tot[j];\n"
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
	k = clCreateKernel(prog, "colsum", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof R, &R);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t groups = ((size_t)C + 15) / 16;
	size_t local = 4, global = (groups + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
