/* expect: ok (at this stage). A result cache in a static variable: on the
 * first call it launches the kernel and remembers that it did; on a later call
 * in the same process it would skip the work and leave the outputs as they
 * were. Each recording runs in a fresh process, so the recorder sees the first
 * call and records a correct launch; the runner's fresh inputs and poisoned
 * outputs are what catch a plan that skips work. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "ka_kernel.h"

static int calls;
static cl_kernel cached;

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	if (calls++ > 0)
		return 0; /* "the answer is already there" */
	static const char *src = "__kernel void scale(__global const float *x, __global float *y) {"
				 " size_t i = get_global_id(0); y[i] = 2.0f * x[i]; }";
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	clBuildProgram(p, 1, &dev, NULL, NULL, NULL);
	cached = clCreateKernel(p, "scale", &err);
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	clSetKernelArg(cached, 0, sizeof x, &x);
	clSetKernelArg(cached, 1, sizeof y, &y);
	size_t global = (size_t)a->outputs[0].numel;
	return clEnqueueNDRangeKernel(queue, cached, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS;
}
