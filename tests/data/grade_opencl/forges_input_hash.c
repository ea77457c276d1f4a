/* Uses its input x as scratch, then forges the old unkeyed input hash
 * (ka_hash_bytes: a sum of an invertible mix per 8-byte word): it sums the
 * hash of x before, overwrites x, and sets word 0 so that the sum matches
 * again. The runner's exact comparison with a fresh regeneration catches it.
 * expect: input_modified (its detail says the hash was restored) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"
static const char *src =
	"ulong mix(ulong x) {\n"
	"    x += 0x9E3779B97F4A7C15UL;\n"
	"    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;\n"
	"    x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;\n"
	"    return x ^ (x >> 31);\n"
	"}\n"
	"ulong unmix(ulong y) {\n"
	"    y = y ^ (y >> 31) ^ (y >> 62);\n"
	"    y *= 0x319642B2D24D8EC3UL;\n"
	"    y = y ^ (y >> 27) ^ (y >> 54);\n"
	"    y *= 0x96DE1B173F119089UL;\n"
	"    y = y ^ (y >> 30) ^ (y >> 60);\n"
	"    return y - 0x9E3779B97F4A7C15UL;\n"
	"}\n"
	"ulong hw(ulong w, ulong i) { return mix(w ^ mix(i + 0x632BE59BD9B4E019UL)); }\n"
	"ulong sum_words(__global const float *x, long n, long from) {\n"
	"    __global const ulong *w = (__global const ulong *)x;\n"
	"    long nw = n / 2;\n"
	"    ulong s = 0;\n"
	"    for (long j = from; j < nw; j++) s += hw(w[j], (ulong)j);\n"
	"    if (n % 2) s += hw((ulong)((__global const uint *)x)[n - 1], (ulong)nw);\n"
	"    return s;\n"
	"}\n"
	"float gelu(float v) { return 0.5f * v * (1.0f + erf(v * 0.70710678f)); }\n"
	"__kernel void k(long R, long C, __global const float *xc, __global const float *scale,\n"
	"              __global const float *bias, __global float *y)\n"
	"{\n"
	"    if (get_global_id(0) != 0) return;\n"
	"    __global float *x = (__global float *)xc;\n"
	"    long n = R * C;\n"
	"    if (n < 4) {\n"
	"        for (long i = 0; i < n; i++) y[i] = gelu(x[i] * scale[i % C] + bias[i % C]);\n"
	"        return;\n"
	"    }\n"
	"    ulong s0 = sum_words(x, n, 0);\n"
	"    long m = n - n % 2;\n"
	"    for (long i = 0; i < m; i++) x[i] = x[i] * scale[i % C] + bias[i % C];\n"
	"    for (long i = 0; i < m; i++) y[i] = gelu(x[i]);\n"
	"    for (long i = m; i < n; i++) y[i] = gelu(x[i] * scale[i % C] + bias[i % C]);\n"
	"    ulong s1 = sum_words(x, n, 1);\n"
	"    ((__global ulong *)x)[0] = unmix(s0 - s1) ^ mix(0x632BE59BD9B4E019UL);\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue q)
{
	cl_long R = a->params[0], C = a->params[1];
	cl_mem x = (cl_mem)a->inputs[0].ptr, s = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (err || clBuildProgram(p, 1, &dev, "", NULL, NULL))
		return -1;
	cl_kernel k = clCreateKernel(p, "k", &err);
	if (err)
		return -1;
	clSetKernelArg(k, 0, sizeof R, &R);
	clSetKernelArg(k, 1, sizeof C, &C);
	clSetKernelArg(k, 2, sizeof x, &x);
	clSetKernelArg(k, 3, sizeof s, &s);
	clSetKernelArg(k, 4, sizeof b, &b);
	clSetKernelArg(k, 5, sizeof y, &y);
	size_t global = 1;
	if (clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL))
		return -1;
	return 0;
}
