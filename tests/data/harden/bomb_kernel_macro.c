// expect: compile_error
/* A macro bomb in the OpenCL kernel source (4^14 copies of a string):
 * PoCL builds it inside the runner, which must stay under the compile
 * memory cap (KA_COMPILE_MEM_MB) as every other compiler does. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
"#define A0(x) x x x x\n"
"#define A1(x) A0(A0(x))\n"
"#define A2(x) A1(A1(x))\n"
"#define A3(x) A2(A2(x))\n"
"#define A4(x) A3(A3(x))\n"
"#define A5(x) A4(A4(x))\n"
"#define A6(x) A5(A5(x))\n"
"constant char bomb[] = A6(\"0123456789abcdef0123456789abcdef\");\n"
"#define HOOK\n"
"__kernel void k(long R, long C, __global const float *x, __global const float *scale,\n"
"              __global const float *bias, __global float *y)\n"
"{\n"
"    long n = R * C, i = get_global_id(0);\n"
"    if (i >= n) return;\n"
"    float v = x[i] * scale[i % C] + bias[i % C];\n"
"    y[i] = 0.5f * v * (1.0f + erf(v * 0.70710678f));\n"
"    HOOK\n"
"}\n"
"\n"
;
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
