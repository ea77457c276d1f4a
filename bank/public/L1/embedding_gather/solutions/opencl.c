/* embedding_gather, OpenCL solution: F.embedding(idx, weight).
 *
 * One work item per output row, written for a CPU device (PoCL): it reads
 * idx[n] once and copies weight's row (contiguous) into y's row. Nothing is
 * kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void gather(long N, long D, __global const long *idx, __global const float *w,\n"
	"                     __global float *y)\n"
	"{\n"
	"    long n = get_global_id(0);\n"
	"    if (n >= N)\n"
	"        return;\n"
	"    __global const float *src = w + idx[n] * D;\n"
	"    __global float *dst = y + n * D;\n"
	"    for (long d = 0; d < D; d++)\n"
	"        dst[d] = src[d];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: N, V, D; idx, weight; y. */
	cl_long N = a->params[0], D = a->params[2];
	cl_mem idx = (cl_mem)a->inputs[0].ptr, w = (cl_mem)a->inputs[1].ptr;
	cl_mem y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "gather", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof N, &N);
	err |= clSetKernelArg(k, 1, sizeof D, &D);
	err |= clSetKernelArg(k, 2, sizeof idx, &idx);
	err |= clSetKernelArg(k, 3, sizeof w, &w);
	err |= clSetKernelArg(k, 4, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4;
	size_t global = ((size_t)N + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
