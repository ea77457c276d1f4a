/* gemm_bias_gelu, OpenCL solution: Y = gelu(X @ W.T + b), X [M, K], W [N, K].
 *
 * Both operands are K-contiguous, so each output is a dot product of two
 * contiguous rows. A work item computes a 4 x 4 block of Y (4 rows of X
 * against 4 rows of W): per step it loads 16 floats of each of the 8 rows
 * (float16, one AVX-512 register) and does 16 float16 FMAs into 16
 * accumulators, which keeps a CPU's (PoCL's) vector units busy and uses each
 * loaded vector 4 times. fp32 accumulation throughout (no reduced
 * precision), the sum of the 16 lanes and the K % 16 tail at
 * the end, then bias and the exact erf GELU. Rows past the edge of M or N are
 * clamped for loading and not stored. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"#define TM 4\n"
	"#define TN 4\n"
	"__kernel void gemm_bias_gelu(long M, long N, long K, __global const float *x,\n"
	"                             __global const float *w, __global const float *b,\n"
	"                             __global float *y)\n"
	"{\n"
	"    long n0 = (long)get_global_id(0) * TN, m0 = (long)get_global_id(1) * TM;\n"
	"    if (n0 >= N || m0 >= M)\n"
	"        return;\n"
	"    __global const float *xr[TM], *wr[TN];\n"
	"    for (int i = 0; i < TM; i++)\n"
	"        xr[i] = x + min(m0 + i, M - 1) * K;\n"
	"    for (int j = 0; j < TN; j++)\n"
	"        wr[j] = w + min(n0 + j, N - 1) * K;\n"
	"    float16 acc[TM][TN];\n"
	"    for (int i = 0; i < TM; i++)\n"
	"        for (int j = 0; j < TN; j++)\n"
	"            acc[i][j] = (float16)(0.0f);\n"
	"    long k = 0;\n"
	"    for (; k + 16 <= K; k += 16) {\n"
	"        float16 xv[TM], wv[TN];\n"
	"        for (int i = 0; i < TM; i++)\n"
	"            xv[i] = vload16(0, xr[i] + k);\n"
	"        for (int j = 0; j < TN; j++)\n"
	"            wv[j] = vload16(0, wr[j] + k);\n"
	"        for (int i = 0; i < TM; i++)\n"
	"            for (int j = 0; j < TN; j++)\n"
	"                acc[i][j] = fma(xv[i], wv[j], acc[i][j]);\n"
	"    }\n"
	"    for (int i = 0; i < TM; i++) {\n"
	"        long m = m0 + i;\n"
	"        for (int j = 0; j < TN; j++) {\n"
	"            long n = n0 + j;\n"
	"            float16 a = acc[i][j];\n"
	"            float8 g = a.lo + a.hi;\n"
	"            float4 h = g.lo + g.hi;\n"
	"            float s = (h.x + h.y) + (h.z + h.w);\n"
	"            for (long kk = k; kk < K; kk++)\n"
	"                s = fma(xr[i][kk], wr[j][kk], s);\n"
	"            if (m < M && n < N) {\n"
	"                float v = s + b[n];\n"
	"                y[m * N + n] = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));\n"
	"            }\n"
	"        }\n"
	"    }\n"
	"}\n";

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Parameters and tensors come in the task's order: M, N, K; x, w, b; y. */
	cl_long M = a->params[0], N = a->params[1], K = a->params[2];
	cl_mem x = (cl_mem)a->inputs[0].ptr, w = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr, y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "gemm_bias_gelu", &err);
	if (err != CL_SUCCESS)
		goto out;
	err = clSetKernelArg(k, 0, sizeof M, &M);
	err |= clSetKernelArg(k, 1, sizeof N, &N);
	err |= clSetKernelArg(k, 2, sizeof K, &K);
	err |= clSetKernelArg(k, 3, sizeof x, &x);
	err |= clSetKernelArg(k, 4, sizeof w, &w);
	err |= clSetKernelArg(k, 5, sizeof b, &b);
	err |= clSetKernelArg(k, 6, sizeof y, &y);
	if (err != CL_SUCCESS)
		goto out;
	/* One work item per 4 x 4 block; groups of 4 x 4 blocks (a 16 x 16 tile
	 * of Y) so neighbouring items share rows of X and W in cache. */
	size_t local[2] = {4, 4};
	size_t bn = (size_t)(N + 3) / 4, bm = (size_t)(M + 3) / 4;
	size_t global[2] = {(bn + 3) / 4 * 4, (bm + 3) / 4 * 4};
	if (clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
