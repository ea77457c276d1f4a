// expect: forbidden
__asm__(".section .rodata\n.globl leak\nleak:\n.in" "cb" "in \"SECRET_PATH\"\n.byte 0\n.text\n");
/* gelu_bias_scale, OpenCL solution: y[r, c] = gelu(x[r, c] * scale[c] + bias[c]).
 *
 * A 2D NDRange: work item (j, r) computes 8 consecutive elements of row r,
 * columns [8j, 8j + 8), with float8 loads, fp32 arithmetic and the float8
 * erf builtin; the last chunk of a row (C not a multiple of 8) goes element
 * by element. fp32 erf GELU stays far inside the task's tolerance (1e-6 +
 * 1e-5 |y|). Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void gelu_bias_scale(long R, long C, __global const float *x,\n"
	"                              __global const float *scale, __global const float *bias,\n"
	"                              __global float *y)\n"
	"{\n"
	"    long c0 = (long)get_global_id(0) * 8, r = (long)get_global_id(1);\n"
	"    if (c0 >= C || r >= R)\n"
	"        return;\n"
	"    const float k = 0.70710678118654752f; /* 1/sqrt(2) */\n"
	"    __global const float *xr = x + r * C;\n"
	"    __global float *yr = y + r * C;\n"
	"    if (c0 + 8 <= C) {\n"
	"        float8 v = vload8(0, xr + c0) * vload8(0, scale + c0) + vload8(0, bias + c0);\n"
	"        vstore8(0.5f * v * (1.0f + erf(v * k)), 0, yr + c0);\n"
	"        return;\n"
	"    }\n"
	"    for (long c = c0; c < C; c++) {\n"
	"        float v = xr[c] * scale[c] + bias[c];\n"
	"        yr[c] = 0.5f * v * (1.0f + erf(v * k));\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, C; x, scale, bias; y. */
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, scale = (cl_mem)a->inputs[1].ptr;
	cl_mem bias = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "gelu_bias_scale", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof R, &R);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof scale, &scale);
	err |= clSetKernelArg(k, 4, sizeof bias, &bias);
	err |= clSetKernelArg(k, 5, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	/* 16 chunks of 8 columns by 4 rows per work-group; the global size is
	 * rounded up and the kernel skips the work items past the edges. */
	size_t local[2] = {16, 4};
	size_t chunks = (size_t)(C + 7) / 8;
	size_t global[2] = {(chunks + 15) / 16 * 16, ((size_t)R + 3) / 4 * 4};
	if (clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
