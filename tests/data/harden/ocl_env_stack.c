// expect: runtime_fault
/* Host code: ka's environment strings, left at the top of the recorder's
 * stack by exec (clearenv drops only the pointers), found by scanning up from
 * a local for "SECRET=" and carried out through the OpenCL program source,
 * whose build log the runner returns as the compile_error's evidence. With
 * the recorder exec'd without ka's environment the scan runs off the stack:
 * runtime_fault, and nothing to carry. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <string.h>
#include "ka_kernel.h"
static char src[512];
int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	volatile char here = 0;
	const char *p = (const char *)&here, *hit = 0;
	for (long i = 0; i < (1L << 22) && !hit; i++, p++)
		if (p[0] == 'S' && !memcmp(p, "SECRET=", 7))
			hit = p + 7;
	strcpy(src, "#error ");
	if (hit)
		strncat(src, hit, 100);
	else
		strcat(src, "nothing-found");
	strcat(src, "\n__kernel void k(__global float *y) { y[0] = 1; }\n");
	const char *s = src;
	cl_int err;
	cl_program pr = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
	if (err || clBuildProgram(pr, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(pr, "k", &err);
	cl_mem y = (cl_mem)a->outputs[0].ptr;
	clSetKernelArg(k, 0, sizeof y, &y);
	size_t g = 1;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL) ? -1 : 0;
}
