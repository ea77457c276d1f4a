/* topk_rows, OpenCL solution: torch.topk(x, K, dim=-1), K <= 8.
 *
 * One work item per row, written for a CPU device (PoCL): a sorted list of
 * the K best values and their indices; an element that beats the K-th best
 * is inserted below every entry that is not smaller, so equal values stay
 * in index order (the task's tie rule). Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void topk(long R, long C, int K, __global const float *x, __global float *vals,\n"
	"                   __global long *idx)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    __global const float *xr = x + r * C;\n"
	"    float v[8];\n"
	"    long ix[8];\n"
	"    int n = 0;\n"
	"    for (long c = 0; c < C; c++) {\n"
	"        float val = xr[c];\n"
	"        if (n == K && !(val > v[K - 1]))\n"
	"            continue;\n"
	"        int p = n < K ? n : K - 1;\n"
	"        while (p > 0 && val > v[p - 1]) {\n"
	"            v[p] = v[p - 1];\n"
	"            ix[p] = ix[p - 1];\n"
	"            p--;\n"
	"        }\n"
	"        v[p] = val;\n"
	"        ix[p] = c;\n"
	"        if (n < K)\n"
	"            n++;\n"
	"    }\n"
	"    for (int j = 0; j < K; j++) {\n"
	"        vals[r * K + j] = v[j];\n"
	"        idx[r * K + j] = ix[j];\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, C, K; x; values, indices. */
	cl_long R = a->params[0], C = a->params[1];
	cl_int K = (cl_int)a->params[2];
	cl_mem x = (cl_mem)a->inputs[0].ptr;
	cl_mem vals = (cl_mem)a->outputs[0].ptr, idx = (cl_mem)a->outputs[1].ptr;
	if (K < 1 || K > 8)
		return -1;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "topk", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof R, &R);
	err |= clSetKernelArg(k, 1, sizeof C, &C);
	err |= clSetKernelArg(k, 2, sizeof K, &K);
	err |= clSetKernelArg(k, 3, sizeof x, &x);
	err |= clSetKernelArg(k, 4, sizeof vals, &vals);
	err |= clSetKernelArg(k, 5, sizeof idx, &idx);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 64;
	size_t global = ((size_t)R + 63) / 64 * 64;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
