/* sdpa_causal_bf16_d64, OpenCL solution: causal scaled dot-product attention, bf16, head dim 64.
 *
 * One work item per query row, written for a CPU device (PoCL): the query
 * row (pre-scaled by 1/sqrt(HD)) is held in a private float array, and one pass over the
 * visible keys keeps an online softmax in fp32: running max m, running sum l
 * and the unnormalised output o, rescaled by exp(m_old - m_new) whenever the
 * max grows. The result o / l is rounded to bf16 once. Keys and values are
 * read as bf16 and widened to float. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "ka_kernel.h"

static const char *kernel_src =
	"#define HD 64\n"
	"#define ROPE 0\n"
	"#define BF16 1\n"
	"#if BF16\n"
	"#define LD(p, i) as_float((uint)(p)[i] << 16)\n"
	"#define LD16(p, i) as_float16(convert_uint16(vload16(0, (p) + (i))) << 16)\n"
	"static void st(__global ushort *p, long i, float v)\n"
	"{\n"
	"    uint u = as_uint(v);\n"
	"    p[i] = (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
	"}\n"
	"#else\n"
	"#define LD(p, i) vload_half(i, p)\n"
	"#define LD16(p, i) vload_half16(0, (p) + (i))\n"
	"static void st(__global half *p, long i, float v) { vstore_half_rte(v, i, p); }\n"
	"#endif\n"
	"#if BF16\n"
	"typedef ushort T;\n"
	"#else\n"
	"typedef half T;\n"
	"#endif\n"
	"/* rotate_half rotary value of element d of row x at position pos */\n"
	"static float rope(__global const T *x, __global const T *cs, __global const T *sn, long pos, int d)\n"
	"{\n"
	"    float r = d < HD / 2 ? -LD(x, d + HD / 2) : LD(x, d - HD / 2);\n"
	"    return LD(x, d) * LD(cs, pos * HD + d) + r * LD(sn, pos * HD + d);\n"
	"}\n"
	"__kernel void attn_rows(long n, long Hq, long G, long Sq, long Skv, int causal, long window,\n"
	"                        __global const T *q, __global const T *k, __global const T *v,\n"
	"                        __global const T *cs, __global const T *sn, __global T *o)\n"
	"{\n"
	"    long item = get_global_id(0);\n"
	"    if (item >= n)\n"
	"        return;\n"
	"    long i = item % Sq, bh = item / Sq, b = bh / Hq, h = bh % Hq;\n"
	"    long kv0 = (b * (Hq / G) + h / G) * Skv * HD;\n"
	"    __global const T *qr = q + item * HD;\n"
	"    long hi = causal ? min(Skv, i + Skv - Sq + 1) : Skv;\n"
	"    long lo = window > 0 ? max(0L, i + Skv - Sq - window + 1) : 0;\n"
	"    float sc = 1.0f / sqrt((float)HD);\n"
	"    float m = -INFINITY, l = 0.0f;\n"
	"#if ROPE\n"
	"    float qf[HD], of[HD];\n"
	"    for (int d = 0; d < HD; d++) {\n"
	"        qf[d] = rope(qr, cs, sn, i, d) * sc;\n"
	"        of[d] = 0.0f;\n"
	"    }\n"
	"    for (long j = lo; j < hi; j++) {\n"
	"        __global const T *kr = k + kv0 + j * HD;\n"
	"        __global const T *vr = v + kv0 + j * HD;\n"
	"        float s = 0.0f;\n"
	"        for (int d = 0; d < HD; d++)\n"
	"            s += qf[d] * rope(kr, cs, sn, j, d);\n"
	"        float mn = fmax(m, s);\n"
	"        float a = exp(m - mn), p = exp(s - mn);\n"
	"        l = l * a + p;\n"
	"        for (int d = 0; d < HD; d++)\n"
	"            of[d] = of[d] * a + p * LD(vr, d);\n"
	"        m = mn;\n"
	"    }\n"
	"    for (int d = 0; d < HD; d++)\n"
	"        st(o, item * HD + d, of[d] / l);\n"
	"#else\n"
	"    /* float16 vectors over the head dimension */\n"
	"    float16 qv[HD / 16], ov[HD / 16];\n"
	"    for (int c = 0; c < HD / 16; c++) {\n"
	"        qv[c] = LD16(qr, c * 16) * sc;\n"
	"        ov[c] = (float16)(0.0f);\n"
	"    }\n"
	"    for (long j = lo; j < hi; j++) {\n"
	"        __global const T *kr = k + kv0 + j * HD;\n"
	"        __global const T *vr = v + kv0 + j * HD;\n"
	"        float16 acc = (float16)(0.0f);\n"
	"        for (int c = 0; c < HD / 16; c++)\n"
	"            acc += qv[c] * LD16(kr, c * 16);\n"
	"        float8 a8 = acc.lo + acc.hi;\n"
	"        float4 a4 = a8.lo + a8.hi;\n"
	"        float s = (a4.x + a4.y) + (a4.z + a4.w);\n"
	"        float mn = fmax(m, s);\n"
	"        float a = exp(m - mn), p = exp(s - mn);\n"
	"        l = l * a + p;\n"
	"        for (int c = 0; c < HD / 16; c++)\n"
	"            ov[c] = ov[c] * a + p * LD16(vr, c * 16);\n"
	"        m = mn;\n"
	"    }\n"
	"    float inv = 1.0f / l;\n"
	"    for (int c = 0; c < HD / 16; c++) {\n"
	"        float16 r = ov[c] * inv;\n"
	"        for (int e = 0; e < 16; e++)\n"
	"            st(o, item * HD + c * 16 + e, r[e]);\n"
	"    }\n"
	"#endif\n"
	"}\n";

/* Enqueue attn_rows over n = B * Hq * Sq query rows. cs/sn may be NULL
 * (no rotary): q is passed in their place and never read. */
static int attn_run(cl_context ctx, cl_device_id dev, cl_command_queue queue, cl_long B,
		    cl_long Hq, cl_long G, cl_long Sq, cl_long Skv, cl_int causal, cl_long window,
		    cl_mem q, cl_mem k, cl_mem v, cl_mem cs, cl_mem sn, cl_mem o)
{
	cl_int err;
	cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
	if (err != CL_SUCCESS)
		return -1;
	int rc = -1;
	cl_kernel kern = NULL;
	cl_long n = B * Hq * Sq;
	if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
		goto out;
	kern = clCreateKernel(prog, "attn_rows", &err);
	if (err != CL_SUCCESS)
		goto out;
	if (!cs)
		cs = q;
	if (!sn)
		sn = q;
	err = clSetKernelArg(kern, 0, sizeof n, &n);
	err |= clSetKernelArg(kern, 1, sizeof Hq, &Hq);
	err |= clSetKernelArg(kern, 2, sizeof G, &G);
	err |= clSetKernelArg(kern, 3, sizeof Sq, &Sq);
	err |= clSetKernelArg(kern, 4, sizeof Skv, &Skv);
	err |= clSetKernelArg(kern, 5, sizeof causal, &causal);
	err |= clSetKernelArg(kern, 6, sizeof window, &window);
	err |= clSetKernelArg(kern, 7, sizeof q, &q);
	err |= clSetKernelArg(kern, 8, sizeof k, &k);
	err |= clSetKernelArg(kern, 9, sizeof v, &v);
	err |= clSetKernelArg(kern, 10, sizeof cs, &cs);
	err |= clSetKernelArg(kern, 11, sizeof sn, &sn);
	err |= clSetKernelArg(kern, 12, sizeof o, &o);
	if (err != CL_SUCCESS)
		goto out;
	size_t local = 8, global = ((size_t)n + 7) / 8 * 8;
	if (clEnqueueNDRangeKernel(queue, kern, 1, NULL, &global, &local, 0, NULL, NULL) != CL_SUCCESS)
		goto out;
	rc = 0;
out:
	if (kern)
		clReleaseKernel(kern);
	clReleaseProgram(prog);
	return rc;
}

int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue queue)
{
	/* Task order: params B, H, S; inputs q, k, v; output o. */
	const int64_t *p = a->params;
	(void)p;
	return attn_run(ctx, dev, queue, p[0], p[1], 1, p[2], p[2], 1, 0, (cl_mem)a->inputs[0].ptr,
			(cl_mem)a->inputs[1].ptr, (cl_mem)a->inputs[2].ptr, NULL, NULL, (cl_mem)a->outputs[0].ptr);

}
