/* GEMM accumulating k from K-1 down to 0 with fused multiply-adds:
 * another summation order, must pass.
 * expect: ok */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"__kernel void k(long M, long N, long K, __global const float *x, __global const float *w,\n"
	"              __global const float *b, __global float *y)\n"
	"{\n"
	"    long j = get_global_id(0), i = get_global_id(1);\n"
	"    if (i >= M || j >= N) return;\n"
	"    float acc = 0.0f;\n"
	"    for (long k = K - 1; k >= 0; k--) acc = fma(x[i * K + k], w[j * K + k], acc);\n"
	"    float v = acc + b[j];\n"
	"    y[i * N + j] = 0.5f * v * (1.0f + erf(v * 0.70710678f));\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long M = a->params[0], N = a->params[1], K = a->params[2];
	cl_mem x = (cl_mem)a->inputs[0].ptr, w = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof M, &M);
	clSetKernelArg(k, 1, sizeof N, &N);
	clSetKernelArg(k, 2, sizeof K, &K);
	clSetKernelArg(k, 3, sizeof x, &x);
	clSetKernelArg(k, 4, sizeof w, &w);
	clSetKernelArg(k, 5, sizeof b, &b);
	clSetKernelArg(k, 6, sizeof y, &y);
	size_t global[2] = {(size_t)N, (size_t)M};
	return clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL) ? -1 : 0;
}
