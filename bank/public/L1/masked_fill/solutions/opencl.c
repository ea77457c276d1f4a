/* masked_fill, OpenCL solution: x.masked_fill(mask, fill).
 *
 * One work item per 64 consecutive elements (a CPU device streams them
 * through one core's cache and vectorises the loop): a select between x and
 * the scalar fill (a->scalars[0]). Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"__kernel void mf(long n, float fill, __global const float *x, __global const uchar *m,\n"
	"                 __global float *y)\n"
	"{\n"
	"    long i0 = get_global_id(0) * 64, e = min(i0 + 64, n);\n"
	"    for (long i = i0; i < e; i++)\n"
	"        y[i] = m[i] ? fill : x[i];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters R, C; scalar fill; tensors x, mask; y. */
	cl_long n = a->params[0] * a->params[1];
	cl_float fill = (cl_float)a->scalars[0];
	cl_mem x = (cl_mem)a->inputs[0].ptr, m = (cl_mem)a->inputs[1].ptr;
	cl_mem y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "mf", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof n, &n);
	err |= clSetKernelArg(k, 1, sizeof fill, &fill);
	err |= clSetKernelArg(k, 2, sizeof x, &x);
	err |= clSetKernelArg(k, 3, sizeof m, &m);
	err |= clSetKernelArg(k, 4, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 64;
	size_t groups = ((size_t)n + 63) / 64;
	size_t global = (groups + 63) / 64 * 64;
	if (clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
