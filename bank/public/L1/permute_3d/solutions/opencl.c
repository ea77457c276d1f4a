/* permute_3d, OpenCL solution: x.permute(2, 0, 1).contiguous() for fp16.
 *
 * y[c, a, b] = x[a, b, c]: x viewed as [L = A*B, C] is transposed into y
 * viewed as [C, L]. One work item per 32 x 32 block, written for a CPU
 * device (PoCL): the block's rows are read as contiguous runs and its
 * columns written as rows of y while the block stays in cache. The halves
 * are moved as 16-bit words (no arithmetic). Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void perm(long L, long C, long bc, __global const ushort *x, __global ushort *y)\n"
	"{\n"
	"    long b = get_global_id(0);\n"
	"    long l0 = b / bc * 32, c0 = b % bc * 32;\n"
	"    if (l0 >= L)\n"
	"        return;\n"
	"    long l1 = min(L, l0 + 32), c1 = min(C, c0 + 32);\n"
	"    for (long c = c0; c < c1; c++)\n"
	"        for (long l = l0; l < l1; l++)\n"
	"            y[c * L + l] = x[l * C + c];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: A, B, C; x; y. */
	cl_long L = a->params[0] * a->params[1], C = a->params[2];
	cl_long bc = (C + 31) / 32, bl = (L + 31) / 32;
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "perm", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof L, &L);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof bc, &bc);
	err |= clSetKernelArg(k, 3, sizeof x, &x);
	err |= clSetKernelArg(k, 4, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4;
	size_t global = ((size_t)(bl * bc) + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
