/* bmm_bcast_bf16, OpenCL solution: torch.matmul(x, w) + b.
 *
 * A work item computes a 4 x 4 block of the output: per step of K it loads 4
 * values of each operand and does 16 fp32 FMAs (fp32 accumulation, inputs widened from bf16),
 * the epilogue applied as each output is stored. Rows and columns past the edge are clamped for loading and not
 * stored. Nothing is kept between calls. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"typedef ushort IT;\n"
	"typedef ushort OT;\n"
	"#define LD(p, i) as_float((uint)(p)[i] << 16)\n"
	"#define ST(p, i, v) ((p)[i] = bf16_rne(v))\n"
	"ushort bf16_rne(float f)\n"
	"{\n"
	"    uint u = as_uint(f);\n"
	"    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (inputs are finite) */\n"
	"    return (ushort)(u >> 16);\n"
	"}\n"
	"#define DUAL 0\n"
	"#define BOFF(n, k) ((k) * N + (n))\n"
	"#define OUTP OT\n"
	"#define EPILOGUE v += LD(bias, n); ST(y, o, v);\n"
	"\n"
	"__kernel void gemm(long M, long N, long K, long sA, long sB, __global const IT *A, __global const IT *B,\n"
	"                   __global const IT *B2, __global const IT *bias, __global const IT *res, __global OUTP *y)\n"
	"{\n"
	"    long n0 = (long)get_global_id(0) * 4, m0 = (long)get_global_id(1) * 4, z = get_global_id(2);\n"
	"    if (n0 >= N || m0 >= M)\n"
	"        return;\n"
	"    A += z * sA;\n"
	"    B += z * sB;\n"
	"    B2 += z * sB;\n"
	"    long mi[4], ni[4];\n"
	"    for (int i = 0; i < 4; i++) {\n"
	"        mi[i] = min(m0 + i, M - 1) * K;\n"
	"        ni[i] = min(n0 + i, N - 1);\n"
	"    }\n"
	"    float acc[4][4], acc2[4][4];\n"
	"    for (int i = 0; i < 4; i++)\n"
	"        for (int j = 0; j < 4; j++)\n"
	"            acc[i][j] = acc2[i][j] = 0.0f;\n"
	"    for (long k = 0; k < K; k++) {\n"
	"        float av[4], bv[4], b2v[4];\n"
	"        for (int i = 0; i < 4; i++)\n"
	"            av[i] = LD(A, mi[i] + k);\n"
	"        for (int j = 0; j < 4; j++) {\n"
	"            bv[j] = LD(B, BOFF(ni[j], k));\n"
	"            b2v[j] = DUAL ? LD(B2, BOFF(ni[j], k)) : 0.0f;\n"
	"        }\n"
	"        for (int i = 0; i < 4; i++)\n"
	"            for (int j = 0; j < 4; j++) {\n"
	"                acc[i][j] = fma(av[i], bv[j], acc[i][j]);\n"
	"                if (DUAL)\n"
	"                    acc2[i][j] = fma(av[i], b2v[j], acc2[i][j]);\n"
	"            }\n"
	"    }\n"
	"    for (int i = 0; i < 4; i++)\n"
	"        for (int j = 0; j < 4; j++) {\n"
	"            long m = m0 + i, n = n0 + j;\n"
	"            if (m < M && n < N) {\n"
	"                long o = (z * M + m) * N + n;\n"
	"                float v = acc[i][j], u = acc2[i][j];\n"
	"                EPILOGUE\n"
	"            }\n"
	"        }\n"
	"}\n";

static int set_args(cl_kernel k, const cl_long *v, int nv, const cl_mem *m, int nm)
{
	cl_int err = CL_SUCCESS;
	for (int i = 0; i < nv; i++)
		err |= clSetKernelArg(k, (cl_uint)i, sizeof v[i], &v[i]);
	for (int i = 0; i < nm; i++)
		err |= clSetKernelArg(k, (cl_uint)(nv + i), sizeof m[i], &m[i]);
	return err == CL_SUCCESS ? 0 : -1;
}

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Task order: params Bt, M, N, K; inputs x, w, b; output y. */
	cl_long Bt = a->params[0];
	cl_long M = a->params[1];
	cl_long N = a->params[2];
	cl_long K = a->params[3];
	cl_long Z = Bt;
	cl_mem x = (cl_mem)a->inputs[0].ptr;
	cl_mem w = (cl_mem)a->inputs[1].ptr;
	cl_mem b = (cl_mem)a->inputs[2].ptr;
	cl_mem y = (cl_mem)a->outputs[0].ptr;
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel k = NULL, kr = NULL;
	cl_mem t = NULL;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	k = clCreateKernel(prog, "gemm", &err);
	if (err != CL_SUCCESS)
		goto out;
	cl_long v[5] = {M, N, K, M * K, 0};
	cl_mem mm[6] = {x, w, w, b, w, y};
	if (set_args(k, v, 5, mm, 6))
		goto out;
	/* One work item per 4 x 4 block of the output, groups of 4 x 4 items. */
	size_t bn = (size_t)(N + 3) / 4, bm = (size_t)(M + 3) / 4;
	size_t local[3] = {4, 4, 1}, global[3] = {(bn + 3) / 4 * 4, (bm + 3) / 4 * 4, (size_t)Z};
	if (clEnqueueNDRangeKernel(queue, k, 3, NULL, global, local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;

	rc = 0;
out:
	if (t)
		clReleaseMemObject(t);
	if (kr)
		clReleaseKernel(kr);
	if (k)
		clReleaseKernel(k);
	clReleaseProgram(prog);
	return rc;
}
