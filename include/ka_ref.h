/* ka_ref.h: the dialect of a task's single-source reference (ref.c).
 *
 * A reference is one function, `ref`, that computes every output element
 * owned by one work item, accumulating in double:
 *
 *   KA_FN void ref(ka_i64 item, <ka_i64 param>..., <double scalar>...,
 *                  KA_IN(T) input..., KA_OUT(T) output...)
 *
 * Parameters come in task.json order, then the float scalars (task.json
 * "scalars", as double), then inputs, then outputs. T for bool, int8 and
 * uint8 is ka_bool (one byte, 0 or 1), ka_i8 and ka_u8. The same
 * file compiles as:
 *   - plain C for the CPU gold (KA_GOLD defined): outputs are double arrays,
 *     so gold keeps full fp64 precision;
 *   - CUDA device code with KA_GOLD defined, for the device gold of a large
 *     shape (src/devgold.c): double outputs as the CPU gold, C's argument
 *     conversions for the math functions, built with -fmad=false;
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
typedef uchar ka_bool;
typedef char ka_i8;
typedef uchar ka_u8;
#elif defined(__CUDACC__)
#define KA_FN static __device__
#define KA_GLOBAL
typedef unsigned short ka_half;
typedef unsigned short ka_bf16;
typedef unsigned char ka_bool;
typedef signed char ka_i8;
typedef unsigned char ka_u8;
#else
#include <math.h>
#define KA_FN static
#define KA_GLOBAL
typedef unsigned short ka_half;
typedef unsigned short ka_bf16;
typedef unsigned char ka_bool;
typedef signed char ka_i8;
typedef unsigned char ka_u8;
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
#if (defined(KA_GOLD_LAZY) && defined(__cplusplus)) || (defined(KA_GOLD) && defined(__CUDACC__))
/* C's argument conversions for the math functions, for the two golds built
 * as C++: the lazy gold and the device gold (KA_GOLD under nvcc: the
 * parent's full check of a large shape on the GPU, src/devgold.c). In C,
 * exp(x[i]) with a float converts it to double and calls the double
 * function; C++ (and CUDA) would pick the float overload and compute in
 * float, so these golds would differ from the C gold. Every C99 <math.h>
 * double function name becomes a call that takes doubles (int for the int
 * arguments), as in C. */
#ifdef __CUDACC__
#define KA_CFN static __device__ inline
#else
#define KA_CFN static inline
#endif
#define KA_C1(f)                                                                         \
	KA_CFN double ka_c_##f(double a) { return ::f(a); }
#define KA_C2(f)                                                                         \
	KA_CFN double ka_c_##f(double a, double b) { return ::f(a, b); }
KA_C1(acos) KA_C1(asin) KA_C1(atan) KA_C1(cos) KA_C1(sin) KA_C1(tan) KA_C1(acosh)
KA_C1(asinh) KA_C1(atanh) KA_C1(cosh) KA_C1(sinh) KA_C1(tanh) KA_C1(exp) KA_C1(exp2)
KA_C1(expm1) KA_C1(log) KA_C1(log10) KA_C1(log1p) KA_C1(log2) KA_C1(logb) KA_C1(cbrt)
KA_C1(fabs) KA_C1(sqrt) KA_C1(erf) KA_C1(erfc) KA_C1(lgamma) KA_C1(tgamma) KA_C1(ceil)
KA_C1(floor) KA_C1(nearbyint) KA_C1(rint) KA_C1(round) KA_C1(trunc)
KA_C2(atan2) KA_C2(pow) KA_C2(hypot) KA_C2(fmod) KA_C2(remainder) KA_C2(copysign)
KA_C2(nextafter) KA_C2(fdim) KA_C2(fmax) KA_C2(fmin)
KA_CFN double ka_c_fma(double a, double b, double c) { return ::fma(a, b, c); }
KA_CFN double ka_c_ldexp(double a, int e) { return ::ldexp(a, e); }
KA_CFN double ka_c_scalbn(double a, int e) { return ::scalbn(a, e); }
KA_CFN int ka_c_abs(int a) { return ::abs(a); }
#undef KA_C1
#undef KA_C2
#define acos(a) ka_c_acos(a)
#define asin(a) ka_c_asin(a)
#define atan(a) ka_c_atan(a)
#define cos(a) ka_c_cos(a)
#define sin(a) ka_c_sin(a)
#define tan(a) ka_c_tan(a)
#define acosh(a) ka_c_acosh(a)
#define asinh(a) ka_c_asinh(a)
#define atanh(a) ka_c_atanh(a)
#define cosh(a) ka_c_cosh(a)
#define sinh(a) ka_c_sinh(a)
#define tanh(a) ka_c_tanh(a)
#define exp(a) ka_c_exp(a)
#define exp2(a) ka_c_exp2(a)
#define expm1(a) ka_c_expm1(a)
#define log(a) ka_c_log(a)
#define log10(a) ka_c_log10(a)
#define log1p(a) ka_c_log1p(a)
#define log2(a) ka_c_log2(a)
#define logb(a) ka_c_logb(a)
#define cbrt(a) ka_c_cbrt(a)
#define fabs(a) ka_c_fabs(a)
#define sqrt(a) ka_c_sqrt(a)
#define erf(a) ka_c_erf(a)
#define erfc(a) ka_c_erfc(a)
#define lgamma(a) ka_c_lgamma(a)
#define tgamma(a) ka_c_tgamma(a)
#define ceil(a) ka_c_ceil(a)
#define floor(a) ka_c_floor(a)
#define nearbyint(a) ka_c_nearbyint(a)
#define rint(a) ka_c_rint(a)
#define round(a) ka_c_round(a)
#define trunc(a) ka_c_trunc(a)
#define atan2(a, b) ka_c_atan2(a, b)
#define pow(a, b) ka_c_pow(a, b)
#define hypot(a, b) ka_c_hypot(a, b)
#define fmod(a, b) ka_c_fmod(a, b)
#define remainder(a, b) ka_c_remainder(a, b)
#define copysign(a, b) ka_c_copysign(a, b)
#define nextafter(a, b) ka_c_nextafter(a, b)
#define fdim(a, b) ka_c_fdim(a, b)
#define fmax(a, b) ka_c_fmax(a, b)
#define fmin(a, b) ka_c_fmin(a, b)
#define fma(a, b, c) ka_c_fma(a, b, c)
#define ldexp(a, e) ka_c_ldexp(a, e)
#define scalbn(a, e) ka_c_scalbn(a, e)
#define abs(a) ka_c_abs(a)
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
