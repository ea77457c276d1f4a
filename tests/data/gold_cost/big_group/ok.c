/* expect: ok
 * y = x - mean over each group: one work-item per group sums it in chunks
 * of 1024 (float), then writes the group. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"__kernel void k(long g, long m, __global const float *x, __global float *y)\n"
	"{\n"
	"    long i = get_global_id(0);\n"
	"    if (i >= g) return;\n"
	"    __global const float *r = x + i * m;\n"
	"    float s = 0.0f;\n"
	"    for (long c = 0; c < m; c += 1024) {\n"
	"        float part = 0.0f;\n"
	"        for (long j = c; j < c + 1024 && j < m; j++) part += r[j];\n"
	"        s += part;\n"
	"    }\n"
	"    float mean = s / (float)m;\n"
	"    for (long j = 0; j < m; j++) y[i * m + j] = r[j] - mean;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long g = a->params[0], m = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof g, &g);
	clSetKernelArg(k, 1, sizeof m, &m);
	clSetKernelArg(k, 2, sizeof x, &x);
	clSetKernelArg(k, 3, sizeof y, &y);
	size_t global = (size_t)g;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) ? -1 : 0;
}
