/* expect: ok
 * Row sums over bf16 x weighted by int32 w, written as fp64, on OpenCL: the
 * runner's bf16 and int generators must match the CPU's bit for bit. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"__kernel void k(long rows, long K, __global const ushort *x, __global const int *w,\n"
	"                __global double *out)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= rows) return;\n"
	"    double s = 0.0, t = 0.0;\n"
	"    for (long j = 0; j < K; j++) {\n"
	"        double v = (double)as_float((uint)x[r * K + j] << 16);\n"
	"        s += v * (double)w[j];\n"
	"        t += v;\n"
	"    }\n"
	"    out[2 * r] = s;\n"
	"    out[2 * r + 1] = t;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long rows = a->params[0] * a->params[1], K = a->params[2];
	cl_mem x = (cl_mem)a->inputs[0].ptr, w = (cl_mem)a->inputs[1].ptr;
	cl_mem out = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof rows, &rows);
	clSetKernelArg(k, 1, sizeof K, &K);
	clSetKernelArg(k, 2, sizeof x, &x);
	clSetKernelArg(k, 3, sizeof w, &w);
	clSetKernelArg(k, 4, sizeof out, &out);
	size_t global = (size_t)rows;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) ? -1 : 0;
}
