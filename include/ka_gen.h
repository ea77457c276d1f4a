/* ka_gen.h: the one input generator of KernelAscent.
 *
 * value(element i of a tensor) = f(key, i, distribution), where key is a
 * 64-bit tensor key that the parent derives from (secret run nonce, task,
 * shape, tensor, call). Everything is integer hashing plus at most two IEEE
 * single operations (one multiply, one add) that are never contracted into an
 * FMA, so plain C, CUDA and OpenCL C produce bit-identical values. No libm.
 *
 * Distributions (docs/inputs.md):
 *   normal(mean, std): z = Irwin-Hall sum of twelve 20-bit uniforms minus 6
 *     (mean 0, variance 1, |z| <= 6), computed exactly; value = mean + std*z.
 *   uniform[lo, hi): u = 24 random bits * 2^-24 (exact); value = lo + w*u with
 *     w = hi - lo rounded to float once by the parent.
 *   int[lo, hi]: lo + h mod (hi - lo + 1), computed in 64-bit integers.
 * The float parameters (mean/std or lo/w) are passed as float values that the
 * parent rounded; all sides use the same bits.
 *
 * This file compiles as C (build with -ffp-contract=off), as CUDA (host and
 * device) and as OpenCL C (it sets FP_CONTRACT OFF itself). */
#ifndef KA_GEN_H
#define KA_GEN_H

#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
typedef ulong ka_u64;
typedef uint ka_u32;
typedef long ka_i64;
#define KA_GEN_FN static inline
#define KA_F2U(f) as_uint(f)
#define KA_U2F(u) as_float(u)
#define KA_FMUL(a, b) ((a) * (b))
#define KA_FADD(a, b) ((a) + (b))
#elif defined(__CUDACC__)
typedef unsigned long long ka_u64;
typedef unsigned int ka_u32;
typedef long long ka_i64;
#define KA_GEN_FN static __host__ __device__ inline
#ifdef __CUDA_ARCH__
#define KA_F2U(f) __float_as_uint(f)
#define KA_U2F(u) __uint_as_float(u)
#define KA_FMUL(a, b) __fmul_rn((a), (b))
#define KA_FADD(a, b) __fadd_rn((a), (b))
#else
#include <string.h>
static inline ka_u32 ka_f2u_host(float f) { ka_u32 u; memcpy(&u, &f, 4); return u; }
static inline float ka_u2f_host(ka_u32 u) { float f; memcpy(&f, &u, 4); return f; }
#define KA_F2U(f) ka_f2u_host(f)
#define KA_U2F(u) ka_u2f_host(u)
#define KA_FMUL(a, b) ((a) * (b))
#define KA_FADD(a, b) ((a) + (b))
#endif
#else
#include <stdint.h>
#include <string.h>
typedef uint64_t ka_u64;
typedef uint32_t ka_u32;
typedef int64_t ka_i64;
#define KA_GEN_FN static inline
static inline ka_u32 ka_f2u_c(float f) { ka_u32 u; memcpy(&u, &f, 4); return u; }
static inline float ka_u2f_c(ka_u32 u) { float f; memcpy(&f, &u, 4); return f; }
#define KA_F2U(f) ka_f2u_c(f)
#define KA_U2F(u) ka_u2f_c(u)
#define KA_FMUL(a, b) ((a) * (b))
#define KA_FADD(a, b) ((a) + (b))
#endif

/* Distribution kinds, as in the task format. */
#define KA_GEN_NORMAL 0
#define KA_GEN_UNIFORM 1
#define KA_GEN_INT 2

/* splitmix64 finaliser. */
KA_GEN_FN ka_u64 ka_gen_mix(ka_u64 x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* Base hash of element i under key. */
KA_GEN_FN ka_u64 ka_gen_base(ka_u64 key, ka_u64 i)
{
	return ka_gen_mix(key ^ ka_gen_mix(i));
}

/* Float value of element i: kind KA_GEN_NORMAL (a = mean, b = std) or
 * KA_GEN_UNIFORM (a = lo, b = w = hi - lo). */
KA_GEN_FN float ka_gen_float(ka_u64 key, ka_u64 i, int kind, float a, float b)
{
	ka_u64 base = ka_gen_base(key, i);
	if (kind == KA_GEN_UNIFORM) {
		float u = (float)(ka_u32)(base >> 40) * (1.0f / 16777216.0f); /* exact */
		return KA_FADD(a, KA_FMUL(b, u));
	}
	ka_i64 s = 0;
	for (int j = 0; j < 4; j++) {
		ka_u64 h = ka_gen_mix(base + (ka_u64)j);
		s += (ka_i64)(h & 0xFFFFF) + (ka_i64)((h >> 20) & 0xFFFFF) + (ka_i64)((h >> 40) & 0xFFFFF);
	}
	/* |s - 6*2^20| <= 6*2^20 < 2^24: exact in float; the scale is a power of 2. */
	float z = (float)(s - 6291456) * (1.0f / 1048576.0f);
	return KA_FADD(a, KA_FMUL(b, z));
}

/* Integer value of element i in [lo, lo + range - 1] (range >= 1). */
KA_GEN_FN ka_i64 ka_gen_int(ka_u64 key, ka_u64 i, ka_i64 lo, ka_u64 range)
{
	return lo + (ka_i64)(ka_gen_base(key, i) % range);
}

/* float -> bfloat16 bits, round to nearest even; NaN stays NaN. */
KA_GEN_FN unsigned short ka_f32_to_bf16(float f)
{
	ka_u32 u = KA_F2U(f);
	if ((u & 0x7FFFFFFFu) > 0x7F800000u)
		return (unsigned short)((u >> 16) | 0x40u);
	u += 0x7FFFu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}

/* float -> IEEE half bits, round to nearest even, with subnormals and
 * overflow to infinity. */
KA_GEN_FN unsigned short ka_f32_to_f16(float f)
{
	ka_u32 u = KA_F2U(f);
	ka_u32 sign = (u >> 16) & 0x8000u;
	ka_u32 a = u & 0x7FFFFFFFu;
	if (a > 0x7F800000u)
		return (unsigned short)(sign | 0x7E00u);
	if (a >= 0x477FF000u) /* rounds to >= 65520: infinity */
		return (unsigned short)(sign | 0x7C00u);
	if (a < 0x38800000u) { /* subnormal half or zero */
		if (a < 0x33000000u)
			return (unsigned short)sign;
		ka_u32 e = a >> 23;
		ka_u32 m = (a & 0x7FFFFFu) | 0x800000u;
		ka_u32 shift = 126u - e; /* 14..24 */
		ka_u32 q = m >> shift;
		ka_u32 rem = m & ((1u << shift) - 1u);
		ka_u32 halfway = 1u << (shift - 1u);
		if (rem > halfway || (rem == halfway && (q & 1u)))
			q++;
		return (unsigned short)(sign | q);
	}
	ka_u32 r = a + 0x0FFFu + ((a >> 13) & 1u) - 0x38000000u;
	return (unsigned short)(sign | (r >> 13));
}

/* IEEE half bits -> float (exact). */
KA_GEN_FN float ka_f16_to_f32(unsigned short h)
{
	ka_u32 sign = ((ka_u32)h & 0x8000u) << 16;
	ka_u32 e = ((ka_u32)h >> 10) & 0x1Fu;
	ka_u32 m = (ka_u32)h & 0x3FFu;
	ka_u32 u;
	if (e == 0x1Fu) {
		u = sign | 0x7F800000u | (m << 13);
	} else if (e != 0) {
		u = sign | ((e + 112u) << 23) | (m << 13);
	} else if (m == 0) {
		u = sign;
	} else {
		ka_u32 ee = 113u;
		while ((m & 0x400u) == 0) {
			m <<= 1;
			ee--;
		}
		u = sign | (ee << 23) | ((m & 0x3FFu) << 13);
	}
	return KA_U2F(u);
}

/* bfloat16 bits -> float (exact). */
KA_GEN_FN float ka_bf16_to_f32(unsigned short h)
{
	return KA_U2F((ka_u32)h << 16);
}

/* The input hash: order-free, so a GPU can compute it with a parallel sum.
 * h(bytes) = mix(len ^ sum over 8-byte little-endian words w_i (the last one
 * zero-padded) of ka_hash_word(w_i, i)), sums modulo 2^64. Used to check that
 * the device generated the parent's inputs and that a candidate left them
 * unchanged; not a cryptographic hash. */
KA_GEN_FN ka_u64 ka_hash_word(ka_u64 w, ka_u64 i)
{
	return ka_gen_mix(w ^ ka_gen_mix(i + 0x632BE59BD9B4E019ULL));
}

KA_GEN_FN ka_u64 ka_hash_final(ka_u64 sum, ka_u64 len)
{
	return ka_gen_mix(sum ^ ka_gen_mix(len));
}

#if !defined(__OPENCL_VERSION__) && !defined(__CUDA_ARCH__)
/* Sequential host version (runners; the parent has an OpenMP one in gen.c). */
static inline ka_u64 ka_hash_bytes(const void *data, ka_u64 len)
{
	const unsigned char *p = (const unsigned char *)data;
	ka_u64 sum = 0, n = len / 8, i;
	for (i = 0; i < n; i++) {
		ka_u64 w;
		memcpy(&w, p + 8 * i, 8);
		sum += ka_hash_word(w, i);
	}
	if (len % 8) {
		ka_u64 w = 0;
		memcpy(&w, p + 8 * n, (size_t)(len % 8));
		sum += ka_hash_word(w, n);
	}
	return ka_hash_final(sum, len);
}
#endif

#if !defined(__OPENCL_VERSION__) && !defined(__CUDACC__)
/* One tensor's generator, as the host sees it: everything element i's value
 * depends on. dtype is enum ka_dtype's value (0 fp32, 1 fp16, 2 bf16, 3 fp64,
 * 4 int32, 5 int64, 6 bool, 7 int8, 8 uint8); kind, a, b, lo, range as for ka_gen_float/ka_gen_int. */
struct ka_gen_src {
	ka_u64 key;
	ka_i64 lo;
	ka_u64 range;
	float a, b;
	int dtype, kind;
};

/* Element i of the tensor exactly as the generator stores it: the value
 * converted to the dtype, its bytes in the low bytes of the result (little
 * endian). Floats drawn for integer dtypes are clamped so the conversion is
 * defined. The host's whole-tensor fill and the gold's on-demand inputs both
 * go through here. */
static inline ka_u64 ka_gen_elem(const struct ka_gen_src *s, ka_u64 i)
{
	float f;
	ka_i64 v = 0;
	ka_u64 bits = 0;
	double d;
	if (s->kind == KA_GEN_INT) {
		v = ka_gen_int(s->key, i, s->lo, s->range);
		f = (float)v;
	} else {
		f = ka_gen_float(s->key, i, s->kind, s->a, s->b);
		/* As fmaxf(fminf(f, hi), lo): NaN would become hi. */
		if (s->dtype == 4) {
			float c = (f > 2147483520.0f || f != f) ? 2147483520.0f : f;
			v = (ka_i64)(c < -2147483648.0f ? -2147483648.0f : c);
		} else if (s->dtype == 5) {
			float c = (f > 9.2233715e18f || f != f) ? 9.2233715e18f : f;
			v = (ka_i64)(c < -9.2233720e18f ? -9.2233720e18f : c);
		}
	}
	switch (s->dtype) {
	case 0: bits = KA_F2U(f); break;
	case 1: bits = ka_f32_to_f16(f); break;
	case 2: bits = ka_f32_to_bf16(f); break;
	case 3:
		d = s->kind == KA_GEN_INT ? (double)v : (double)f;
		memcpy(&bits, &d, 8);
		break;
	case 4: bits = (ka_u32)(int)v; break;
	case 6: bits = v != 0; break;
	case 7:
	case 8: bits = (ka_u64)v & 0xFFu; break; /* the task keeps v in the dtype's range */
	default: bits = (ka_u64)v; break;
	}
	return bits;
}
#endif

#if defined(__OPENCL_VERSION__) && defined(KA_GEN_KERNELS)
/* Generator kernels used by the OpenCL runner (one work item per element).
 * dtype codes are enum ka_dtype's values: 0 fp32, 1 fp16, 2 bf16, 3 fp64,
 * 4 int32, 5 int64, 6 bool, 7 int8, 8 uint8 (these three one byte, drawn
 * only from int distributions within their range). fp64 needs cl_khr_fp64 and is built only when the device
 * has it (KA_GEN_FP64 defined). */
__kernel void ka_gen_kernel(__global uchar *dst, ulong n, ulong key, int dtype, int kind, float a,
			    float b, long lo, ulong range)
{
	ulong i = get_global_id(0);
	if (i >= n)
		return;
	if (kind == KA_GEN_INT) {
		long v = ka_gen_int(key, i, lo, range);
		switch (dtype) {
		case 0: ((__global float *)dst)[i] = (float)v; break;
		case 1: ((__global ushort *)dst)[i] = ka_f32_to_f16((float)v); break;
		case 2: ((__global ushort *)dst)[i] = ka_f32_to_bf16((float)v); break;
#ifdef KA_GEN_FP64
		case 3: ((__global double *)dst)[i] = (double)v; break;
#endif
		case 4: ((__global int *)dst)[i] = (int)v; break;
		case 5: ((__global long *)dst)[i] = v; break;
		case 6: dst[i] = (uchar)(v != 0); break;
		case 7:
		case 8: dst[i] = (uchar)((ulong)v & 0xFFu); break;
		}
		return;
	}
	float f = ka_gen_float(key, i, kind, a, b);
	switch (dtype) {
	case 0: ((__global float *)dst)[i] = f; break;
	case 1: ((__global ushort *)dst)[i] = ka_f32_to_f16(f); break;
	case 2: ((__global ushort *)dst)[i] = ka_f32_to_bf16(f); break;
#ifdef KA_GEN_FP64
	case 3: ((__global double *)dst)[i] = (double)f; break;
#endif
	case 4: ((__global int *)dst)[i] = (int)f; break;
	case 5: ((__global long *)dst)[i] = (long)f; break;
	}
}
#endif

#endif
