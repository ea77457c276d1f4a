/* expect: forbidden, naming execve (the import check).
 * Host code that runs a program through libc. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "ka_kernel.h"
#include <unistd.h>

/* A correct launch, reached only if the sandbox let the call above through. */
static int launch_scale(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	static const char *src = "__kernel void scale(__global const float *x, __global float *y) {"
				 " size_t i = get_global_id(0); y[i] = 2.0f * x[i]; }";
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	clBuildProgram(p, 1, &dev, "", NULL, NULL);
	cl_kernel k = clCreateKernel(p, "scale", &err);
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	clSetKernelArg(k, 0, sizeof x, &x);
	clSetKernelArg(k, 1, sizeof y, &y);
	size_t global = (size_t)a->outputs[0].numel;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS;
}

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	char *argv[] = {"/bin/sh", "-c", "echo hi", 0};
	execve("/bin/sh", argv, 0);
	return launch_scale(a, ctx, dev, queue);
}
