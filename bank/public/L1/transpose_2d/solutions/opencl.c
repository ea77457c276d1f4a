/* transpose_2d, OpenCL solution: x.t().contiguous().
 *
 * One work item per 32 x 32 block of x, written for a CPU device (PoCL): it
 * reads the block's 32 rows (contiguous runs) and writes its 32 columns as
 * rows of y, so both sides touch whole cache lines while the block stays in
 * the core's cache. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void tr(long M, long N, long bn, __global const float *x, __global float *y)\n"
	"{\n"
	"    long b = get_global_id(0);\n"
	"    long m0 = b / bn * 32, n0 = b % bn * 32;\n"
	"    if (m0 >= M)\n"
	"        return;\n"
	"    long m1 = min(M, m0 + 32), n1 = min(N, n0 + 32);\n"
	"    for (long n = n0; n < n1; n++)\n"
	"        for (long m = m0; m < m1; m++)\n"
	"            y[n * M + m] = x[m * N + n];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: M, N; x; y. */
	cl_long M = a->params[0], N = a->params[1];
	cl_long bn = (N + 31) / 32, bm = (M + 31) / 32;
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "tr", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof M, &M);
	err |= clSetKernelArg(k, 1, sizeof N, &N);
	err |= clSetKernelArg(k, 2, sizeof bn, &bn);
	err |= clSetKernelArg(k, 3, sizeof x, &x);
	err |= clSetKernelArg(k, 4, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4;
	size_t global = ((size_t)(bm * bn) + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
