/* A device-side result cache keyed on content: it remembers the first input
 * element and the results of the call that saw it, and replays the results
 * when it sees the same first element again. Fresh inputs every call mean
 * the key never matches, so the kernel always computes: the cheat gains
 * nothing (and would be wrong if it ever fired).
 * expect: ok */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"__global float cache[1 << 20]; __global float key; __global int have;\n"
	"__kernel void k(long R, long C, __global const float *x, __global const float *scale,\n"
	"              __global const float *bias, __global float *y)\n"
	"{\n"
	"    long n = R * C, i = get_global_id(0);\n"
	"    if (i >= n) return;\n"
	"    if (have == 1 && key == x[0] && i < (1 << 20)) { y[i] = cache[i]; return; }\n"
	"    float v = x[i] * scale[i % C] + bias[i % C];\n"
	"    float r = 0.5f * v * (1.0f + erf(v * 0.70710678f));\n"
	"    y[i] = r;\n"
	"    if (i < (1 << 20)) cache[i] = r;\n"
	"}\n"
	"__kernel void upd(__global const float *x) { key = x[0]; have = 1; }\n";

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
	/* Remember this call's key once the results are in (in-order queue). */
	cl_kernel u = clCreateKernel(p, "upd", &err);
	size_t one = 1;
	if (err || clSetKernelArg(u, 0, sizeof x, &x) ||
	    clEnqueueNDRangeKernel(q, u, 1, NULL, &one, NULL, 0, NULL, NULL))
		return -1;
	return 0;
}
