/* Right until the twelfth call at the benchmark shape, then every call
 * crashes the runner. Only candidate calls run this code and the twelfth
 * call at that shape is always a timed one (a few correctness calls, a
 * warm-up of one to four, then blocks of timed calls), so with two graders
 * on the device the crash always falls in a phased timed call, between
 * "go" and "replayed" (tests/e2e/grade_pipeline.sh). Counted as in
 * timed_wrong_then_crash.c: one count per shape (C % 7), moved on by the
 * last work item of a call to finish.
 * expect: runtime_fault (phase timing) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"__global int calls[7], done[7]; /* one count per shape: C % 7 differs */\n"
	"__kernel void k(long R, long C, __global const float *x, __global const float *scale,\n"
	"              __global const float *bias, __global float *y)\n"
	"{\n"
	"    long n = R * C, i = get_global_id(0);\n"
	"    if (i >= n) return;\n"
	"    int s = (int)(C % 7), c = calls[s];\n"
	"    float v = x[i] * scale[i % C] + bias[i % C];\n"
	"    float r = 0.5f * v * (1.0f + erf(v * 0.70710678f));\n"
	"    if (c >= 11) y[i - (1L << 40)] = r;\n"
	"    else y[i] = r;\n"
	"    if (atomic_inc(&done[s]) == (int)n - 1) {\n"
	"        atomic_xchg(&done[s], 0);\n"
	"        calls[s] = c + 1;\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, s = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "-cl-std=CL2.0", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof R, &R);
	clSetKernelArg(k, 1, sizeof C, &C);
	clSetKernelArg(k, 2, sizeof x, &x);
	clSetKernelArg(k, 3, sizeof s, &s);
	clSetKernelArg(k, 4, sizeof b, &b);
	clSetKernelArg(k, 5, sizeof y, &y);
	size_t global = (size_t)((R * C + 63) / 64 * 64), local = 64;
	if (clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL))
		return -1;
	return 0;
}
