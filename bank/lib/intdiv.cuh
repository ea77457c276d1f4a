// bank/lib/intdiv.cuh: division of an element index by a fixed divisor in a
// few instructions, for the baselines' index arithmetic (the column of a
// broadcast operand, the row of a per-row scalar).
//
// What it mirrors: PyTorch's TensorIterator offset calculator divides 32-bit
// indices with a precomputed multiply-high and shift (its IntDivider), and
// Triton divides by a compile-time constant (a shift or a multiply-high for
// the static shapes of torch.compile(dynamic=False)). A plain 64-bit `/` or
// `%` on the GPU is a subroutine of dozens of instructions, which made the
// pointwise baselines compute-bound where PyTorch's are memory-bound.
//
// The method (Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994, round-up variant): for 1 <= d < 2^31 let s be the
// least integer with 2^s >= d and m = floor(2^32 (2^s - d) / d) + 1 (which
// fits in 32 bits); then for every 0 <= n < 2^31,
// n / d = (mulhi32(n, m) + n) >> s, and mulhi32(n, m) + n < 2^32.
// Indices at or beyond 2^31 (or a divisor beyond) fall back to 64-bit
// division: the `wide` flag is set on the host from the largest index.
// Trusted code: it runs natively in the runner. Keep it small and reviewed.
#ifndef KA_BANK_INTDIV_CUH
#define KA_BANK_INTDIV_CUH

#include <cuda_runtime.h>

namespace ka {

struct fast_div {
	long long d;	// the divisor, >= 1
	unsigned m, s;	// magic multiplier and shift (when !wide)
	bool wide;	// some dividend or the divisor reaches 2^31: 64-bit `/`

	// n / d for 0 <= n < n_max (n_max as given to make_fast_div).
	__host__ __device__ __forceinline__ long long div(long long n) const
	{
		if (wide)
			return n / d;
		unsigned u = (unsigned)n;
#ifdef __CUDA_ARCH__
		unsigned t = __umulhi(u, m);
#else
		unsigned t = (unsigned)(((unsigned long long)u * m) >> 32);
#endif
		return (long long)((t + u) >> s);
	}
	// n % d, from the quotient.
	__host__ __device__ __forceinline__ long long mod(long long n) const { return n - div(n) * d; }
};

// The divider for d >= 1 and dividends in [0, n_max).
static inline fast_div make_fast_div(long long d, long long n_max)
{
	fast_div f;
	f.d = d < 1 ? 1 : d;
	f.wide = f.d >= (1ll << 31) || n_max > (1ll << 31);
	f.s = 0;
	while (f.s < 31 && (1ull << f.s) < (unsigned long long)f.d)
		f.s++;
	unsigned long long num = ((1ull << f.s) - (unsigned long long)f.d) << 32;
	f.m = f.wide ? 1u : (unsigned)(num / (unsigned long long)f.d + 1);
	return f;
}

} // namespace ka

#endif
