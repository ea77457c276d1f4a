/* gemv_bias_tanh, OpenCL solution: y = tanh(W @ x + b), W [N, K], x [K].
 *
 * Memory-bound: each work item owns one row of W and streams it against x in
 * float8 vectors (8 fp32 accumulators, fp32 throughout, no reduced
 * precision), sums the lanes, adds the K % 8 tail, then bias and tanh.
 * Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void gemv(long N, long K, __global const float *w, __global const float *x,\n"
	"                   __global const float *b, __global float *y)\n"
	"{\n"
	"    long n = get_global_id(0);\n"
	"    if (n >= N)\n"
	"        return;\n"
	"    __global const float *r = w + n * K;\n"
	"    float8 acc = (float8)(0.0f);\n"
	"    long k = 0;\n"
	"    for (; k + 8 <= K; k += 8)\n"
	"        acc = fma(vload8(0, r + k), vload8(0, x + k), acc);\n"
	"    float4 h = acc.lo + acc.hi;\n"
	"    float s = (h.x + h.y) + (h.z + h.w);\n"
	"    for (; k < K; k++)\n"
	"        s = fma(r[k], x[k], s);\n"
	"    y[n] = tanh(s + b[n]);\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Task order: params N, K; inputs w, x, b; output y. */
	cl_long N = a->params[0], K = a->params[1];
	cl_mem w = (cl_mem)a->inputs[0].ptr, x = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "gemv", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof N, &N);
	err |= clSetKernelArg(k, 1, sizeof K, &K);
	err |= clSetKernelArg(k, 2, sizeof w, &w);
	err |= clSetKernelArg(k, 3, sizeof x, &x);
	err |= clSetKernelArg(k, 4, sizeof b, &b);
	err |= clSetKernelArg(k, 5, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t global = (size_t)N;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
