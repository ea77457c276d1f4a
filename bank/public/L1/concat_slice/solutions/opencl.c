/* concat_slice, OpenCL solution: torch.cat([a, b], dim=-1)[:, S:S + W].contiguous().
 *
 * One work item per row, written for a CPU device (PoCL): the row of y is
 * two contiguous copies, a[r, S:Ca] then b[r, 0:S+W-Ca]; the concatenation
 * is never built. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void win(long R, long Ca, long Cb, long S, long W, __global const float *a,\n"
	"                  __global const float *b, __global float *y)\n"
	"{\n"
	"    long r = get_global_id(0);\n"
	"    if (r >= R)\n"
	"        return;\n"
	"    long na = Ca - S;\n"
	"    __global float *yr = y + r * W;\n"
	"    __global const float *ar = a + r * Ca + S, *br = b + r * Cb;\n"
	"    for (long j = 0; j < na; j++)\n"
	"        yr[j] = ar[j];\n"
	"    for (long j = na; j < W; j++)\n"
	"        yr[j] = br[j - na];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: R, Ca, Cb, S, W; a, b; y. */
	cl_long p[5];
	for (int i = 0; i < 5; i++)
		p[i] = a->params[i];
	cl_mem ta = (cl_mem)a->inputs[0].ptr, tb = (cl_mem)a->inputs[1].ptr;
	cl_mem ty = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "win", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = CL_SUCCESS;
	for (int i = 0; i < 5; i++)
		err |= clSetKernelArg(k, (cl_uint)i, sizeof p[i], &p[i]);
	err |= clSetKernelArg(k, 5, sizeof ta, &ta);
	err |= clSetKernelArg(k, 6, sizeof tb, &tb);
	err |= clSetKernelArg(k, 7, sizeof ty, &ty);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 4;
	size_t global = ((size_t)p[0] + 3) / 4 * 4;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
