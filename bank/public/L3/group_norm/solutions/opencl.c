/* group_norm, OpenCL solution: one work item per (sample, group): two-pass mean and variance in fp32 (float16 vectors), then y = (x - mean) * (rstd * w[c]) + b[c] per channel (subtracting the mean first: folding it into the shift would cancel catastrophically at a mean of 30). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"static float vsum(__global const float *p, long L, float sub, int sq)\n"
	"{\n"
	"    long lv = L / 16 * 16;\n"
	"    float16 a = (float16)(0.0f);\n"
	"    for (long i = 0; i < lv; i += 16) {\n"
	"        float16 d = vload16(0, p + i) - sub;\n"
	"        a += sq ? d * d : d;\n"
	"    }\n"
	"    float8 a8 = a.lo + a.hi;\n"
	"    float4 a4 = a8.lo + a8.hi;\n"
	"    float s = (a4.x + a4.y) + (a4.z + a4.w);\n"
	"    for (long i = lv; i < L; i++)\n"
	"        s += sq ? (p[i] - sub) * (p[i] - sub) : p[i] - sub;\n"
	"    return s;\n"
	"}\n"
	"__kernel void gn(long N, long CG, long HW, __global const float *x, __global const float *w,\n"
	"                 __global const float *b, __global float *y)\n"
	"{\n"
	"    long g = get_global_id(0);\n"
	"    if (g >= N * 32)\n"
	"        return;\n"
	"    long L = CG * HW;\n"
	"    __global const float *xg = x + g * L;\n"
	"    __global float *yg = y + g * L;\n"
	"    float mean = vsum(xg, L, 0.0f, 0) / (float)L;\n"
	"    float rstd = 1.0f / sqrt(vsum(xg, L, mean, 1) / (float)L + 1e-5f);\n"
	"    long hv = HW / 16 * 16;\n"
	"    for (long ch = 0; ch < CG; ch++) {\n"
	"        long c = (g % 32) * CG + ch;\n"
	"        float sc = rstd * w[c], sh = b[c];\n"
	"        __global const float *xc = xg + ch * HW;\n"
	"        __global float *yc = yg + ch * HW;\n"
	"        for (long i = 0; i < hv; i += 16)\n"
	"            vstore16((vload16(0, xc + i) - mean) * sc + sh, 0, yc + i);\n"
	"        for (long i = hv; i < HW; i++)\n"
	"            yc[i] = (xc[i] - mean) * sc + sh;\n"
	"    }\n"
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
	return run_rows(a, ctx, dev, queue, "gn", (size_t)(a->params[0] * 32));
}
