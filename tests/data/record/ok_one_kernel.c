/* expect: ok. A correct one-kernel OpenCL candidate: y = 2 * x. One launch of
 * "scale" with global size n rounded up to 64 and local size 64; arguments:
 * buffer 0 (x), buffer 1 (y), bytes (int n). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"__kernel void scale(__global const float *x, __global float *y, int n) {\n"
	"  int i = get_global_id(0);\n"
	"  if (i < n) y[i] = 2.0f * x[i];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err != CL_SUCCESS || clBuildProgram(p, 1, &dev, "-cl-fast-relaxed-math", NULL, NULL))
		return 1;
	cl_kernel k = clCreateKernel(p, "scale", &err);
	if (err != CL_SUCCESS)
		return 2;
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	int n = (int)a->inputs[0].numel;
	clSetKernelArg(k, 0, sizeof x, &x);
	clSetKernelArg(k, 1, sizeof y, &y);
	clSetKernelArg(k, 2, sizeof n, &n);
	size_t local = 64, global = ((size_t)n + 63) / 64 * 64;
	err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
	clReleaseKernel(k);
	clReleaseProgram(p);
	return err == CL_SUCCESS ? 0 : 3;
}
