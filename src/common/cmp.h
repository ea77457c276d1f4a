/* cmp.h: the rule that decides whether one output element matches its fp64
 * gold, shared by the parent's comparison (grade.c grade_compare_output) and
 * the CUDA runner's device check of every element (src/runner/devcheck.cu),
 * so that both paths give the same verdict on the same bytes. Header only:
 * plain C for the parent, __host__ __device__ under nvcc. Dtype codes are
 * those of dtype.h / include/ka_kernel.h; the fp16/bf16 conversions are
 * include/ka_gen.h's, the ones the generators use. */
#ifndef KA_CMP_H
#define KA_CMP_H

#include <math.h>
#include <string.h>

#include "ka_gen.h"

#ifdef __CUDACC__
#define KA_CMP_FN static inline __host__ __device__
#else
#define KA_CMP_FN static inline
#endif

/* Outcomes of ka_cmp_elem. */
enum { KA_CMP_OK = 0, KA_CMP_WRONG = 1, KA_CMP_NONFINITE = 2 };

/* Element p (dtype code dtype) as a double: fp16/bf16 through float, the
 * integers and bool as their value. */
KA_CMP_FN double ka_cmp_value(const unsigned char *p, int dtype)
{
	switch (dtype) {
	case 0: { /* fp32 */
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	case 1: { /* fp16 */
		unsigned short h;
		memcpy(&h, p, 2);
		return ka_f16_to_f32(h);
	}
	case 2: { /* bf16 */
		unsigned short h;
		memcpy(&h, p, 2);
		return ka_bf16_to_f32(h);
	}
	case 3: { /* fp64 */
		double d;
		memcpy(&d, p, 8);
		return d;
	}
	case 4: { /* int32 */
		int v;
		memcpy(&v, p, 4);
		return v;
	}
	case 6:				/* bool */
	case 8: return *p;		/* uint8 */
	case 7: return (signed char)*p; /* int8 */
	default: {			/* int64 */
		long long v;
		memcpy(&v, p, 8);
		return (double)v;
	}
	}
}

/* 1 for the integer dtypes (int32, int64, bool, int8, uint8): compared
 * exactly, whatever the task's tolerance. */
KA_CMP_FN int ka_cmp_is_int(int dtype)
{
	return dtype == 4 || dtype == 5 || dtype == 6 || dtype == 7 || dtype == 8;
}

/* Whether got (the element's value) matches want (gold): KA_CMP_OK when
 * finite and |got - want| <= atol + rtol * |want| (written so that a NaN
 * gold never matches), KA_CMP_NONFINITE when got is NaN or infinite, else
 * KA_CMP_WRONG. The caller zeroes atol and rtol for integer dtypes. The
 * product and the sum are rounded one at a time on both sides (no fma: the
 * parent builds with -ffp-contract=off, the device uses the _rn
 * intrinsics, which nvcc never contracts). */
KA_CMP_FN int ka_cmp_elem(double got, double want, double atol, double rtol)
{
	if (!isfinite(got))
		return KA_CMP_NONFINITE;
	double err = fabs(got - want);
#ifdef __CUDA_ARCH__
	double bound = __dadd_rn(atol, __dmul_rn(rtol, fabs(want)));
#else
	double bound = atol + rtol * fabs(want);
#endif
	return err <= bound ? KA_CMP_OK : KA_CMP_WRONG;
}

#endif
