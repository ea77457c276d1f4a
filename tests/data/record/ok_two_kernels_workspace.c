/* expect: ok. Two kernels from one program, a workspace, a fill and a copy:
 * y = 2 * x + 1 computed as
 *   fill(ws, 0)                           ops[0]: fill buffer 2 (the workspace)
 *   twice: ws = 2 * x                     ops[1]: launch "twice", 2-D, local 2x4
 *   copy ws -> y                          ops[2]: copy buffer 2 -> buffer 1
 *   add_one on the second half of y,      ops[3]: launch "add_one" on a
 *     through a sub-buffer whose origin       sub-buffer: buffer 1 + origin
 *     is half of y rounded down to the
 *     device's base address alignment
 *   add_one on the elements before it     ops[4]: launch "add_one" on buffer 1
 * x and y are rows x cols float matrices (the test records 4 x 250). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *src =
	"__kernel void twice(__global const float *x, __global float *ws, int cols) {\n"
	"  size_t c = get_global_id(0), r = get_global_id(1);\n"
	"  ws[r * cols + c] = 2.0f * x[r * cols + c];\n"
	"}\n"
	"__kernel void add_one(__global float *y, __local float *tmp) {\n"
	"  size_t i = get_global_id(0);\n"
	"  tmp[get_local_id(0)] = y[i] + 1.0f;\n"
	"  y[i] = tmp[get_local_id(0)];\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	cl_int err;
	cl_mem x = (cl_mem)a->inputs[0].ptr, y = (cl_mem)a->outputs[0].ptr;
	int rows = (int)a->inputs[0].shape[0], cols = (int)a->inputs[0].shape[1];
	size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "-DUNUSED=1 -cl-mad-enable", NULL, NULL))
		return 1;
	cl_kernel twice = clCreateKernel(p, "twice", &err);
	cl_kernel add_one = clCreateKernel(p, "add_one", &err);
	cl_mem ws = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	if (err)
		return 2;
	float zero = 0.0f;
	if (clEnqueueFillBuffer(queue, ws, &zero, sizeof zero, 0, bytes, 0, NULL, NULL))
		return 3;
	clSetKernelArg(twice, 0, sizeof x, &x);
	clSetKernelArg(twice, 1, sizeof ws, &ws);
	clSetKernelArg(twice, 2, sizeof cols, &cols);
	size_t g2[2] = {(size_t)cols, (size_t)rows}, l2[2] = {2, 4};
	if (clEnqueueNDRangeKernel(queue, twice, 2, NULL, g2, l2, 0, NULL, NULL))
		return 4;
	if (clEnqueueCopyBuffer(queue, ws, y, 0, 0, bytes, 0, NULL, NULL))
		return 5;
	cl_uint align_bits;
	if (clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL))
		return 6;
	size_t origin = bytes / 2 / (align_bits / 8) * (align_bits / 8);
	cl_buffer_region tail = {origin, bytes - origin};
	cl_mem y2 = clCreateSubBuffer(y, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &tail, &err);
	if (err)
		return 6;
	size_t n = (bytes - origin) / sizeof(float), local = 8;
	clSetKernelArg(add_one, 0, sizeof y2, &y2);
	clSetKernelArg(add_one, 1, local * sizeof(float), NULL);
	if (clEnqueueNDRangeKernel(queue, add_one, 1, NULL, &n, &local, 0, NULL, NULL))
		return 7;
	clSetKernelArg(add_one, 0, sizeof y, &y);
	n = origin / sizeof(float);
	if (clEnqueueNDRangeKernel(queue, add_one, 1, NULL, &n, &local, 0, NULL, NULL))
		return 8;
	clReleaseMemObject(y2);
	clReleaseMemObject(ws);
	clReleaseKernel(twice);
	clReleaseKernel(add_one);
	clReleaseProgram(p);
	return 0;
}
