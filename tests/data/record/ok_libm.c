/* expect: ok. Host code that calls libm (log2, exp2, built without -lm) to
 * pick its work-group size: libm is on the allow-list and already loaded in
 * the recorder, so nothing is opened from disk inside the sandbox. For
 * numel 1000 the local size is exp2(floor(log2(1000 / 8))) = 64. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include "ka_kernel.h"

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	static const char *src = "__kernel void scale(__global const float *x, __global float *y) {"
				 " size_t i = get_global_id(0); y[i] = 2.0f * x[i]; }";
	volatile double n = (double)a->outputs[0].numel;
	size_t local = (size_t)exp2(floor(log2(n / 8)));
	size_t global = ((size_t)n + local - 1) / local * local;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	clBuildProgram(p, 1, &dev, NULL, NULL, NULL);
	cl_kernel k = clCreateKernel(p, "scale", &err);
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	clSetKernelArg(k, 0, sizeof x, &x);
	clSetKernelArg(k, 1, sizeof y, &y);
	return clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS;
}
