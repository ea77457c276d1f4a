/* layer_norm, OpenCL solution: one work item per row, two-pass mean and variance in fp32 (float16 vectors, 16 partial sums), then the affine write. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void ln(long R, long C, __global const float *x, __global const float *w,\n"
	"                 __global const float *b, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    __global float *yr = y + r * C;\n"
	"    long cv = C / 16 * 16; /* float16 part [0, cv), scalar tail [cv, C) */\n"
	"    float16 s16 = (float16)(0.0f);\n"
	"    for (long c = 0; c < cv; c += 16)\n"
	"        s16 += vload16(0, xr + c);\n"
	"    float8 s8 = s16.lo + s16.hi;\n"
	"    float4 s4 = s8.lo + s8.hi;\n"
	"    float s = (s4.x + s4.y) + (s4.z + s4.w);\n"
	"    for (long c = cv; c < C; c++)\n"
	"        s += xr[c];\n"
	"    float mean = s / (float)C;\n"
	"    float16 q16 = (float16)(0.0f);\n"
	"    for (long c = 0; c < cv; c += 16) {\n"
	"        float16 d = vload16(0, xr + c) - mean;\n"
	"        q16 += d * d;\n"
	"    }\n"
	"    float8 q8 = q16.lo + q16.hi;\n"
	"    float4 q4 = q8.lo + q8.hi;\n"
	"    float q = (q4.x + q4.y) + (q4.z + q4.w);\n"
	"    for (long c = cv; c < C; c++)\n"
	"        q += (xr[c] - mean) * (xr[c] - mean);\n"
	"    float rstd = 1.0f / sqrt(q / (float)C + 1e-5f);\n"
	"    for (long c = 0; c < cv; c += 16)\n"
	"        vstore16((vload16(0, xr + c) - mean) * rstd * vload16(0, w + c) + vload16(0, b + c), 0, yr + c);\n"
	"    for (long c = cv; c < C; c++)\n"
	"        yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];\n"
	"}\n"
	;

/* Build kernel_src, set the arguments (cl_long params first, then the
 * tensors in task order) and run one work item per row over `rows`. */
static int run_rows(const struct ka_args *a, cl_context ctx, cl_device_id dev,
		    cl_command_queue queue, const char *kname, size_t rows)
{
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, kname, &err);
	if (err != CL_SUCCESS)
		goto out;
	cl_uint arg = 0;
	for (int i = 0; i < a->n_params; i++) {
		cl_long v = a->params[i];
		err |= clSetKernelArg(k, arg++, sizeof v, &v);
	}
	for (int i = 0; i < a->n_inputs; i++) {
		cl_mem m = (cl_mem)a->inputs[i].ptr;
		err |= clSetKernelArg(k, arg++, sizeof m, &m);
	}
	for (int i = 0; i < a->n_outputs; i++) {
		cl_mem m = (cl_mem)a->outputs[i].ptr;
		err |= clSetKernelArg(k, arg++, sizeof m, &m);
	}
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4, global = (rows + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	return run_rows(a, ctx, dev, queue, "ln", (size_t)(a->params[0]));
}
