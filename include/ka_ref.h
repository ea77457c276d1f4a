/* ka_ref.h: the dialect of a task's single-source reference (ref.c).
 *
 * A reference is one function, `ref`, that computes every output element
 * owned by one work item, accumulating in double:
 *
 *   KA_FN void ref(ka_i64 item, <ka_i64 param>..., KA_IN(T) input...,
 *                  KA_OUT(T) output...)
 *
 * Parameters come in task.json order, then inputs, then outputs. The same
 * file compiles as:
 *   - plain C for the CPU gold (KA_GOLD defined): outputs are double arrays,
 *     so gold keeps full fp64 precision;
 *   - CUDA device code (nvcc) and OpenCL C: outputs have the task's dtype and
 *     the double result is rounded once on store.
 * Restricted C: no globals, no recursion, no allocation, no library calls but
 * the math functions common to C99, CUDA and OpenCL C (exp, log, sqrt, tanh,
 * erf, fabs, fmax, fmin, pow, ...), double and integer arithmetic only. Load
 * fp16/bf16 inputs with KA_LD_F16 / KA_LD_BF16; store fp16/bf16 outputs with
 * KA_ST_F16 / KA_ST_BF16. */
#ifndef KA_REF_H
#define KA_REF_H

#include "ka_gen.h"

#if defined(__OPENCL_VERSION__)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define KA_FN static
#define KA_GLOBAL __global
typedef ushort ka_half;
typedef ushort ka_bf16;
#elif defined(__CUDACC__)
#define KA_FN static __device__
#define KA_GLOBAL
typedef unsigned short ka_half;
typedef unsigned short ka_bf16;
#else
#include <math.h>
#define KA_FN static
#define KA_GLOBAL
typedef unsigned short ka_half;
typedef unsigned short ka_bf16;
#endif

#if defined(__CUDACC__) || defined(__cplusplus)
#define KA_RESTRICT __restrict__
#else
#define KA_RESTRICT restrict
#endif
#if defined(KA_GOLD_LAZY) && defined(__cplusplus)
/* The lazy gold (the parent's timed-call checks, built as C++ from the same
 * ref.c): an input is its generator, and indexing it draws that one element,
 * so checking a sample of items costs the elements those items read instead
 * of regenerating whole tensors. Supports what the dialect allows on an
 * input: x[i], *x, x + n, x - n. Values are bit-identical to the arrays
 * (ka_gen_elem is what fills them). */
template <class T> struct ka_lazy {
	const struct ka_gen_src *src;
	ka_i64 off;
	T operator[](ka_i64 i) const
	{
		ka_u64 bits = ka_gen_elem(src, (ka_u64)(off + i));
		T v;
		memcpy(&v, &bits, sizeof v);
		return v;
	}
	T operator*() const { return (*this)[0]; }
	ka_lazy operator+(ka_i64 d) const { return ka_lazy{src, off + d}; }
	ka_lazy operator-(ka_i64 d) const { return ka_lazy{src, off - d}; }
};
#define KA_IN(T) ka_lazy<T>
#else
#define KA_IN(T) KA_GLOBAL const T *KA_RESTRICT
#endif
#ifdef KA_GOLD
/* Gold keeps the exact double: the tolerance covers the output's rounding. */
#define KA_OUT(T) double *KA_RESTRICT
#define KA_ST_F16(p, i, v) ((p)[i] = (double)(v))
#define KA_ST_BF16(p, i, v) ((p)[i] = (double)(v))
#else
#define KA_OUT(T) KA_GLOBAL T *KA_RESTRICT
#define KA_ST_F16(p, i, v) ((p)[i] = ka_f32_to_f16((float)(v)))
#define KA_ST_BF16(p, i, v) ((p)[i] = ka_f32_to_bf16((float)(v)))
#endif
#define KA_LD_F16(p, i) ((double)ka_f16_to_f32((p)[i]))
#define KA_LD_BF16(p, i) ((double)ka_bf16_to_f32((p)[i]))

#endif
