/* log_softmax, OpenCL solution: one work item per row: an online logsumexp pass, then the write pass. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"static float row_lse(__global const float *xr, long C)\n"
	"{\n"
	"    float m = -INFINITY, s = 0.0f;\n"
	"    for (long c = 0; c < C; c++) {\n"
	"        float v = xr[c];\n"
	"        if (v > m) {\n"
	"            s = s * exp(m - v) + 1.0f;\n"
	"            m = v;\n"
	"        } else {\n"
	"            s += exp(v - m);\n"
	"        }\n"
	"    }\n"
	"    return m + log(s);\n"
	"}\n"
	"\n"
	"__kernel void lsm(long R, long C, __global const float *x, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    float lse = row_lse(x + r * C, C);\n"
	"    for (long c = 0; c < C; c++)\n"
	"        y[r * C + c] = x[r * C + c] - lse;\n"
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
	return run_rows(a, ctx, dev, queue, "lsm", (size_t)(a->params[0]));
}
