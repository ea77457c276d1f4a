/* Row softmax summing each row from its last element to its first, in fp32:
 * a different summation order must still pass.
 * expect: ok */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"__kernel void k(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R) return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    __global float *yr = y + r * C;\n"
	"    float m = xr[C - 1];\n"
	"    for (long c = C - 1; c >= 0; c--) m = fmax(m, xr[c]);\n"
	"    float s = 0.0f;\n"
	"    for (long c = C - 1; c >= 0; c--) s += exp(xr[c] - m);\n"
	"    float inv = 1.0f / s;\n"
	"    for (long c = 0; c < C; c++) yr[c] = exp(xr[c] - m) * inv;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
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
	clSetKernelArg(k, 3, sizeof y, &y);
	size_t global = (size_t)R;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) ? -1 : 0;
}
