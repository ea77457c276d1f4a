/* Right on every call but one: the first call at R=7,C=1031 (the second check
 * shape) is wrong, and the call after it, which runs while the parent checks
 * the wrong one (docs/grader.md, "Call-level overlap"), crashes the runner.
 * A call count per shape (program-scope variables, PoCL
 * shares them between programs of one source: counted by C % 7, which
 * differs between the task's shapes; the last work item of a call to
 * finish moves it on) tells the calls apart. The verdict is the wrong
 * call's, never the crash's: outcomes are taken in call order.
 * expect: wrong_answer */
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
	"    if (C == 1031 && c == 0) r = -12345.0f;\n"
	"    if (C == 1031 && c >= 1) y[i - (1L << 40)] = r;\n"
	"    else y[i] = r;\n"
	"    /* the last item of the call to finish moves the count on */\n"
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
