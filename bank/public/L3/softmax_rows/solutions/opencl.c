/* softmax_rows, OpenCL solution: Y[r, :] = softmax(X[r, :]).
 *
 * One work item per row, written for a CPU device (PoCL), where a row of a
 * few thousand floats stays in the core's cache: pass 1 takes the row max
 * with float16 vectors; pass 2 writes e = exp(x - max) into Y and sums it in
 * 16 fp32 lanes (16 partial sums keep the summation error small); pass 3
 * scales Y by 1 / sum. One exp per element, passes 2 and 3 read from cache.
 * The C % 16 tail of each pass goes element by element. Nothing is kept
 * between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void softmax_rows(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    __global float *yr = y + r * C;\n"
	"    long cv = C / 16 * 16; /* vector part [0, cv), scalar tail [cv, C) */\n"
	"    float16 m16 = (float16)(-INFINITY);\n"
	"    for (long c = 0; c < cv; c += 16)\n"
	"        m16 = fmax(m16, vload16(0, xr + c));\n"
	"    float8 m8 = fmax(m16.lo, m16.hi);\n"
	"    float4 m4 = fmax(m8.lo, m8.hi);\n"
	"    float m = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));\n"
	"    for (long c = cv; c < C; c++)\n"
	"        m = fmax(m, xr[c]);\n"
	"    float16 s16 = (float16)(0.0f);\n"
	"    for (long c = 0; c < cv; c += 16) {\n"
	"        float16 e = exp(vload16(0, xr + c) - m);\n"
	"        vstore16(e, 0, yr + c);\n"
	"        s16 += e;\n"
	"    }\n"
	"    float8 s8 = s16.lo + s16.hi;\n"
	"    float4 s4 = s8.lo + s8.hi;\n"
	"    float s = (s4.x + s4.y) + (s4.z + s4.w);\n"
	"    for (long c = cv; c < C; c++) {\n"
	"        float e = exp(xr[c] - m);\n"
	"        yr[c] = e;\n"
	"        s += e;\n"
	"    }\n"
	"    float inv = 1.0f / s;\n"
	"    for (long c = 0; c < cv; c += 16)\n"
	"        vstore16(vload16(0, yr + c) * inv, 0, yr + c);\n"
	"    for (long c = cv; c < C; c++)\n"
	"        yr[c] *= inv;\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, C; x; y. */
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "softmax_rows", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof R, &R);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	/* Groups of 4 rows; the global size is rounded up and the kernel skips
	 * the work items past the last row. */
	size_t local = 4;
	size_t global = ((size_t)R + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
