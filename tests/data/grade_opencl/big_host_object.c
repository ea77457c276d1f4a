/* A correct kernel whose host object is over the 64 MiB cap (an initialised
 * array): the candidate's compile_error, never a grader failure (which stops
 * a track, and comes back on every resume), and the object is not kept in
 * the compile cache (the recorder refuses one too: record_error).
 * expect: compile_error */
const char ka_big[(64 << 20) + 4096] = {1};
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"__kernel void k(long R, long C, __global const float *x, __global const float *scale,\n"
	"              __global const float *bias, __global float *y)\n"
	"{\n"
	"    long n = R * C, i = get_global_id(0);\n"
	"    if (i >= n) return;\n"
	"    float v = x[i] * scale[i % C] + bias[i % C];\n"
	"    y[i] = 0.5f * v * (1.0f + erf(v * 0.70710678f));\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, s = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
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
