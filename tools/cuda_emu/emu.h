// tools/cuda_emu/emu.h: the CUDA dialect of the bank's trusted code as host
// C++, for the CPU emulation harness (docs/cuda-emu.md). g++ force-includes
// it (-include) before a baseline that tools/cuda_emu/xform.py rewrote:
// kernel launches become ka_emu::launch calls, __shared__ declarations
// static storage registered per block, and each kernel body starts with
// KA_EMU_KERNEL (its identity and launch bounds).
//
// What it provides: CUDA's own runtime, fp16/bf16 and cuBLAS headers in host
// mode (the types, enums and conversions are CUDA's); threadIdx, blockIdx,
// blockDim and gridDim of the running emulated thread; __syncthreads and the
// warp primitives (blocking calls into the scheduler of emu.cpp, which runs
// each block's threads as fibers); atomics (the fibers never run at once, so
// a read-modify-write is atomic); the device intrinsics and math functions
// the bank uses. __CUDA_ARCH__ is 900 after the CUDA headers, so code under
// `#if __CUDA_ARCH__ >= 900` takes the branch the H200 build takes.
// Inline PTX has no host form: trusted code that uses asm keeps a host
// fallback under `#ifdef KA_CUDA_EMU` (ldmatrix_x4 and mma_bf16 below are
// the warp-level forms of two such instructions).
#ifndef KA_CUDA_EMU_H
#define KA_CUDA_EMU_H

#define KA_CUDA_EMU 1

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>

#define __CUDA_ARCH__ 900
#define __launch_bounds__(...)
#define warpSize 32

namespace ka_emu
{

// The running emulated thread's coordinates (set by the scheduler).
extern uint3 thread_idx, block_idx;
extern dim3 block_dim, grid_dim;

// ---- launches ---------------------------------------------------------------

// Runs body(ctx) as the kernel of grid x block threads, block by block,
// each block's threads as fibers; sets the launch error on a bad
// configuration (the error cudaGetLastError then returns). text names the
// launch in messages.
void run_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char *text,
		void (*body)(void *), void *ctx);

// `k<<<grid, block, smem, stream>>>(args...)` as xform.py writes it: the
// arguments evaluated once, as a launch does, each thread calling k on its
// copy of them.
template <class F, class... A>
void launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char *text, F f,
	    A &&...args)
{
	struct ctx_t {
		F f;
		std::tuple<std::decay_t<A>...> args;
	} c{f, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)};
	run_launch(
		grid, block, smem, stream, text,
		[](void *p) {
			ctx_t *x = static_cast<ctx_t *>(p);
			std::apply(x->f, x->args);
		},
		&c);
}

// The first statement of every kernel body (xform.py): checks the launch
// against the kernel's launch bounds (max_threads, 0 for none) and its
// dynamic shared memory against the kernel's cudaFuncSetAttribute limit;
// a failing check ends the launch with an error. fn: the kernel's address.
void kernel_entry(const void *fn, const char *name, int max_threads);

// ---- shared memory ------------------------------------------------------------

// A static __shared__ variable's storage (a function-local static): filled
// with the poison byte the first time a thread of each block reaches it,
// and given a place in the block's shared window (__cvta_generic_to_shared).
void shared_static(void *p, size_t bytes);
// The block's dynamic shared memory (the launch's smem bytes, poisoned per
// block).
void *dyn_shared();
// Shared window address <-> host pointer (for ldmatrix's addresses).
unsigned shared_addr(const void *p);
void *shared_ptr(unsigned addr, size_t bytes);

// ---- barriers and warp collectives ---------------------------------------------

// One warp-wide call: every lane of mask that has not exited calls it with
// the same fn; when the last arrives, fn computes every lane's out from
// every lane's in (in[l], out[l]: 64 bytes each, arrived: the lanes that
// called). Returns once this lane's out is written.
struct warp_call {
	unsigned mask, arrived;
	uint64_t in[32][8], out[32][8];
};
void warp_collective(unsigned mask, void (*fn)(warp_call &), const void *in, size_t in_bytes,
		     void *out, size_t out_bytes);
// The value fn gives a lane that reads from a lane not in the call
// (undefined on the GPU): the poison pattern; counted.
uint64_t undefined_lane_value();

uint64_t shfl_bits(unsigned mask, int mode, uint64_t v, int arg, int width);
enum { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_BFLY };
// The ballot of pred over the lanes that call (all: 1 when every caller's
// pred is nonzero, else 0).
unsigned vote(unsigned mask, int pred, int all);
int barrier(int mode, int pred); // __syncthreads (mode 0), _count, _and, _or
enum { BAR_PLAIN, BAR_COUNT, BAR_AND, BAR_OR };
void syncwarp(unsigned mask);

// The running thread's lane (its linear index in the block mod 32).
int lane();

// Ends the launch with an error (a trap: __trap, a failed check).
[[noreturn]] void trap(const char *why);

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 and
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (d += a b), as the
// PTX ISA defines their fragment layouts.
void ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3);
void mma_bf16_m16n8k16(float *d, const unsigned *a, unsigned b0, unsigned b1);

// cp.async emulation (tools/cuda_emu/include/cuda_pipeline.h): copies are
// queued per thread and land at __pipeline_wait_prior.
void pipeline_copy(void *dst, const void *src, size_t bytes, size_t zfill);
void pipeline_commit();
void pipeline_wait_prior(size_t n);

template <class T> static inline uint64_t to_bits(const T &v)
{
	static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
	uint64_t b = 0;
	memcpy(&b, &v, sizeof v);
	return b;
}
template <class T> static inline T from_bits(uint64_t b)
{
	T v;
	memcpy(&v, &b, sizeof v);
	return v;
}

} // namespace ka_emu

#define threadIdx (static_cast<const uint3 &>(::ka_emu::thread_idx))
#define blockIdx (static_cast<const uint3 &>(::ka_emu::block_idx))
#define blockDim (static_cast<const dim3 &>(::ka_emu::block_dim))
#define gridDim (static_cast<const dim3 &>(::ka_emu::grid_dim))

// cuda_runtime.h's C++ overload of cudaFuncSetAttribute (for nvcc only).
template <class T>
static inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value)
{
	return ::cudaFuncSetAttribute((const void *)entry, attr, value);
}

#define KA_EMU_KERNEL(max_threads, ...)                                                            \
	::ka_emu::kernel_entry((const void *)(__VA_ARGS__), __PRETTY_FUNCTION__, (max_threads))
#define KA_EMU_SHARED(var) ::ka_emu::shared_static((void *)&(var), sizeof(var))

// ---- barriers, votes, shuffles --------------------------------------------------

static inline void __syncthreads()
{
	::ka_emu::barrier(::ka_emu::BAR_PLAIN, 1);
}
static inline int __syncthreads_count(int p)
{
	return ::ka_emu::barrier(::ka_emu::BAR_COUNT, p);
}
static inline int __syncthreads_and(int p)
{
	return ::ka_emu::barrier(::ka_emu::BAR_AND, p);
}
static inline int __syncthreads_or(int p)
{
	return ::ka_emu::barrier(::ka_emu::BAR_OR, p);
}
static inline void __syncwarp(unsigned mask = 0xffffffffu)
{
	::ka_emu::syncwarp(mask);
}
static inline unsigned __ballot_sync(unsigned mask, int p)
{
	return ::ka_emu::vote(mask, p, 0);
}
static inline int __any_sync(unsigned mask, int p)
{
	return ::ka_emu::vote(mask, p, 0) != 0;
}
static inline int __all_sync(unsigned mask, int p)
{
	return ::ka_emu::vote(mask, p, 1) != 0;
}
static inline size_t __cvta_generic_to_shared(const void *p)
{
	return ::ka_emu::shared_addr(p);
}
static inline void __threadfence()
{
}
static inline void __threadfence_block()
{
}
[[noreturn]] static inline void __trap()
{
	::ka_emu::trap("__trap()");
}

template <class T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
	return ::ka_emu::from_bits<T>(
		::ka_emu::shfl_bits(mask, ::ka_emu::SHFL_IDX, ::ka_emu::to_bits(v), src, width));
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32)
{
	return ::ka_emu::from_bits<T>(
		::ka_emu::shfl_bits(mask, ::ka_emu::SHFL_UP, ::ka_emu::to_bits(v), (int)d, width));
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32)
{
	return ::ka_emu::from_bits<T>(::ka_emu::shfl_bits(mask, ::ka_emu::SHFL_DOWN,
							  ::ka_emu::to_bits(v), (int)d, width));
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
	return ::ka_emu::from_bits<T>(::ka_emu::shfl_bits(mask, ::ka_emu::SHFL_BFLY,
							  ::ka_emu::to_bits(v), lane_mask, width));
}

// ---- atomics (one fiber runs at a time: plain read-modify-write) --------------------

#define KA_EMU_ATOMIC(name, update)                                                                \
	template <class T> static inline T name(T *p, T v)                                         \
	{                                                                                          \
		T o = *p;                                                                          \
		*p = (update);                                                                     \
		return o;                                                                          \
	}
KA_EMU_ATOMIC(atomicAdd, o + v)
KA_EMU_ATOMIC(atomicSub, o - v)
KA_EMU_ATOMIC(atomicExch, v)
KA_EMU_ATOMIC(atomicMax, o > v ? o : v)
KA_EMU_ATOMIC(atomicMin, o < v ? o : v)
KA_EMU_ATOMIC(atomicOr, o | v)
KA_EMU_ATOMIC(atomicAnd, o &v)
KA_EMU_ATOMIC(atomicXor, o ^ v)
#undef KA_EMU_ATOMIC
static inline float4 atomicAdd(float4 *p, float4 v) // sm_90's vector atomic
{
	float4 o = *p;
	*p = make_float4(o.x + v.x, o.y + v.y, o.z + v.z, o.w + v.w);
	return o;
}
static inline float2 atomicAdd(float2 *p, float2 v)
{
	float2 o = *p;
	*p = make_float2(o.x + v.x, o.y + v.y);
	return o;
}
template <class T> static inline T atomicCAS(T *p, T cmp, T v)
{
	T o = *p;
	if (o == cmp)
		*p = v;
	return o;
}
static inline unsigned atomicInc(unsigned *p, unsigned v)
{
	unsigned o = *p;
	*p = o >= v ? 0 : o + 1;
	return o;
}

// ---- loads and stores with cache hints: plain accesses here ---------------------

#define KA_EMU_LOAD(name)                                                                          \
	template <class T> static inline T name(const T *p)                                        \
	{                                                                                          \
		return *p;                                                                         \
	}
#define KA_EMU_STORE(name)                                                                         \
	template <class T> static inline void name(T *p, T v)                                      \
	{                                                                                          \
		*p = v;                                                                            \
	}
KA_EMU_LOAD(__ldg)
KA_EMU_LOAD(__ldcg)
KA_EMU_LOAD(__ldca)
KA_EMU_LOAD(__ldcs)
KA_EMU_LOAD(__ldlu)
KA_EMU_LOAD(__ldcv)
KA_EMU_STORE(__stwb)
KA_EMU_STORE(__stcg)
KA_EMU_STORE(__stcs)
KA_EMU_STORE(__stwt)
#undef KA_EMU_LOAD
#undef KA_EMU_STORE

// ---- integer and bit intrinsics ------------------------------------------------------

static inline int __popc(unsigned x)
{
	return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x)
{
	return __builtin_popcountll(x);
}
static inline int __clz(int x)
{
	return x ? __builtin_clz((unsigned)x) : 32;
}
static inline int __clzll(long long x)
{
	return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x)
{
	return __builtin_ffs(x);
}
static inline int __ffsll(long long x)
{
	return __builtin_ffsll(x);
}
static inline unsigned __brev(unsigned x)
{
	unsigned r = 0;
	for (int i = 0; i < 32; i++)
		r |= ((x >> i) & 1u) << (31 - i);
	return r;
}
static inline unsigned __umulhi(unsigned a, unsigned b)
{
	return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline int __mulhi(int a, int b)
{
	return (int)(((long long)a * b) >> 32);
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s)
{
	unsigned long long v = ((unsigned long long)hi << 32) | lo;
	return (unsigned)((v << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s)
{
	unsigned long long v = ((unsigned long long)hi << 32) | lo;
	return (unsigned)(v >> (s & 31));
}

// CUDA's min/max overloads of the integer and float types.
#define KA_EMU_MINMAX(T)                                                                           \
	static inline T min(T a, T b)                                                              \
	{                                                                                          \
		return a < b ? a : b;                                                              \
	}                                                                                          \
	static inline T max(T a, T b)                                                              \
	{                                                                                          \
		return a > b ? a : b;                                                              \
	}
KA_EMU_MINMAX(int)
KA_EMU_MINMAX(unsigned)
KA_EMU_MINMAX(long)
KA_EMU_MINMAX(unsigned long)
KA_EMU_MINMAX(long long)
KA_EMU_MINMAX(unsigned long long)
#undef KA_EMU_MINMAX
static inline float min(float a, float b)
{
	return fminf(a, b);
}
static inline float max(float a, float b)
{
	return fmaxf(a, b);
}
static inline double min(double a, double b)
{
	return fmin(a, b);
}
static inline double max(double a, double b)
{
	return fmax(a, b);
}

// ---- float intrinsics: the IEEE operation (the _rn forms are exact
// roundings; the fast approximations are within their documented error of
// these). glibc declares __expf, __logf, ... without exporting them: macros.
#define __expf expf
#define __exp10f exp10f
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define __sincosf sincosf
#define __powf powf

static inline unsigned __float_as_uint(float f)
{
	return ::ka_emu::from_bits<unsigned>(::ka_emu::to_bits(f));
}
static inline int __float_as_int(float f)
{
	return ::ka_emu::from_bits<int>(::ka_emu::to_bits(f));
}
static inline float __uint_as_float(unsigned u)
{
	return ::ka_emu::from_bits<float>(::ka_emu::to_bits(u));
}
static inline float __int_as_float(int u)
{
	return ::ka_emu::from_bits<float>(::ka_emu::to_bits(u));
}
static inline long long __double_as_longlong(double d)
{
	return ::ka_emu::from_bits<long long>(::ka_emu::to_bits(d));
}
static inline double __longlong_as_double(long long v)
{
	return ::ka_emu::from_bits<double>(::ka_emu::to_bits(v));
}
static inline float __fadd_rn(float a, float b)
{
	return a + b;
}
static inline float __fsub_rn(float a, float b)
{
	return a - b;
}
static inline float __fmul_rn(float a, float b)
{
	return a * b;
}
static inline float __fdiv_rn(float a, float b)
{
	return a / b;
}
static inline float __fmaf_rn(float a, float b, float c)
{
	return fmaf(a, b, c);
}
static inline double __dadd_rn(double a, double b)
{
	return a + b;
}
static inline double __dmul_rn(double a, double b)
{
	return a * b;
}
static inline float __frcp_rn(float a)
{
	return 1.f / a;
}
static inline float __fsqrt_rn(float a)
{
	return sqrtf(a);
}
static inline float __frsqrt_rn(float a)
{
	return 1.f / sqrtf(a);
}
static inline float rsqrtf(float a)
{
	return 1.f / sqrtf(a);
}
static inline double rsqrt(double a)
{
	return 1.0 / sqrt(a);
}
static inline float rcbrtf(float a)
{
	return 1.f / cbrtf(a);
}
static inline float __fdividef(float a, float b)
{
	return a / b;
}
static inline float fdividef(float a, float b)
{
	return a / b;
}
static inline float __saturatef(float a)
{
	return a != a ? 0.f : a < 0.f ? 0.f : a > 1.f ? 1.f : a;
}
static inline float normcdff(float a)
{
	return 0.5f * erfcf(-a * 0.70710678118654752f);
}
static inline double normcdf(double a)
{
	return 0.5 * erfc(-a * 0.70710678118654752);
}
static inline int __float2int_rn(float a)
{
	return (int)nearbyintf(a);
}
static inline int __float2int_rz(float a)
{
	return (int)a;
}
static inline int __float2int_rd(float a)
{
	return (int)floorf(a);
}
static inline int __float2int_ru(float a)
{
	return (int)ceilf(a);
}
static inline unsigned __float2uint_rn(float a)
{
	return (unsigned)nearbyintf(a);
}
static inline long long __float2ll_rn(float a)
{
	return (long long)nearbyintf(a);
}
static inline float __int2float_rn(int a)
{
	return (float)a;
}
static inline float __ll2float_rn(long long a)
{
	return (float)a;
}

#endif
