/* silu_scale with an 80 MiB constant table in its OpenCL C program
 * (initialised, so it is in every kernel PoCL compiles from it: 80 MiB in
 * the driver's cache per kernel and launch shape, kept forever before): the
 * candidate's launch_error, "the kernels' compile at their first launch
 * wrote 80 MiB to the driver's cache, over the cap of 64 MiB". */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__constant char table[80 << 20] = {1};\n"
	"__kernel void ew(long n, __global const float *x, __global float *y)\n"
	"{\n"
	"    long i0 = (long)get_global_id(0) * 8;\n"
	"    for (long i = i0; i < i0 + 8 && i < n; i++) {\n"
	"        float v = x[i];\n"
	"        float r = 0.5f * (v / (1.0f + exp(-v)));\n"
	"        y[i] = r + (float)table[(i * 4099) % (80 << 20)] * 1e-30f;\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, C; x; y. */
	cl_long n = a->params[0] * a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "ew", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof n, &n);
	err |= clSetKernelArg(k, 1, sizeof x, &x);
	err |= clSetKernelArg(k, 2, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 64;
	size_t global = ((size_t)(n + 7) / 8 + local - 1) / local * local;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
