/* scatter_add, OpenCL solution: src.new_zeros(V, D).index_add_(0, idx, src).
 *
 * Written for a CPU device (PoCL), without atomics: one work item per slice
 * of 8 columns. It zeroes its slice of every row of y, then walks the
 * source rows in order and adds each one's slice into y's row idx[n]. Work
 * items own disjoint columns, so nothing races, and each sum is taken in
 * index order. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void scat(long N, long V, long D, __global const long *idx,\n"
	"                   __global const float *src, __global float *y)\n"
	"{\n"
	"    long d0 = get_global_id(0) * 8;\n"
	"    if (d0 >= D)\n"
	"        return;\n"
	"    long d1 = min(D, d0 + 8);\n"
	"    for (long v = 0; v < V; v++)\n"
	"        for (long d = d0; d < d1; d++)\n"
	"            y[v * D + d] = 0.f;\n"
	"    for (long n = 0; n < N; n++) {\n"
	"        __global float *dst = y + idx[n] * D;\n"
	"        __global const float *s = src + n * D;\n"
	"        for (long d = d0; d < d1; d++)\n"
	"            dst[d] += s[d];\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: N, V, D; idx, src; y. */
	cl_long N = a->params[0], V = a->params[1], D = a->params[2];
	cl_mem idx = (cl_mem)a->inputs[0].ptr, src = (cl_mem)a->inputs[1].ptr;
	cl_mem y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "scat", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof N, &N);
	err |= clSetKernelArg(k, 1, sizeof V, &V);
	err |= clSetKernelArg(k, 2, sizeof D, &D);
	err |= clSetKernelArg(k, 3, sizeof idx, &idx);
	err |= clSetKernelArg(k, 4, sizeof src, &src);
	err |= clSetKernelArg(k, 5, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 1;
	size_t global = ((size_t)D + 7) / 8;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
