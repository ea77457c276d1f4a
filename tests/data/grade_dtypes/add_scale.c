/* expect: ok
 * z = 2x + y with an fp16 input, on OpenCL: the runner's fp16 and fp32
 * generators must match the CPU's bit for bit (checked on every untimed call). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"__kernel void k(long n, __global const float *x, __global const ushort *y,\n"
	"                __global float *z)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i < n) z[i] = 2.0f * x[i] + vload_half(i, (__global const half *)y);\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long n = a->params[0];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->inputs[1].ptr;
	cl_mem z = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof n, &n);
	clSetKernelArg(k, 1, sizeof x, &x);
	clSetKernelArg(k, 2, sizeof y, &y);
	clSetKernelArg(k, 3, sizeof z, &z);
	size_t global = (size_t)n;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) ? -1 : 0;
}
