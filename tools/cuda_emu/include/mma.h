// tools/cuda_emu/include/mma.h: the host form of CUDA's <mma.h> WMMA API
// (nvcuda::wmma) for the CPU emulation harness (docs/cuda-emu.md); the
// harness puts this folder first on the include path. CUDA leaves a
// fragment's element layout unspecified; here lane l holds the tile's
// elements l * E .. l * E + E - 1 in row-major order (E = num_elements).
// load_matrix_sync and store_matrix_sync are warp-synchronous (all 32 lanes
// must call them); mma_sync is a warp collective that computes D = A B + C
// in fp32 (the products exact, accumulated onto C in k order).
#ifndef KA_CUDA_EMU_MMA_H
#define KA_CUDA_EMU_MMA_H

namespace nvcuda
{
namespace wmma
{

struct matrix_a {
};
struct matrix_b {
};
struct accumulator {
};
struct row_major {
};
struct col_major {
};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K> struct tile;
template <int M, int N, int K> struct tile<matrix_a, M, N, K> {
	static const int R = M, C = K;
};
template <int M, int N, int K> struct tile<matrix_b, M, N, K> {
	static const int R = K, C = N;
};
template <int M, int N, int K> struct tile<accumulator, M, N, K> {
	static const int R = M, C = N;
};

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
	static const int R = tile<Use, M, N, K>::R, C = tile<Use, M, N, K>::C;
	static const int num_elements = R * C / 32;
	T x[num_elements];
};

template <class F, class V> static inline void fill_fragment(F &f, const V &v)
{
	for (int i = 0; i < F::num_elements; i++)
		f.x[i] = v;
}

// Where element i of this lane's fragment lies in memory of leading
// dimension ldm (col: column-major): lane l holds the tile's elements
// l * E .. l * E + E - 1 in row-major order.
template <class F> static inline size_t offset(int i, unsigned ldm, bool col)
{
	int e = ::ka_emu::lane() * F::num_elements + i, r = e / F::C, c = e % F::C;
	return col ? (size_t)c * ldm + r : (size_t)r * ldm + c;
}

template <class Use, int M, int N, int K, class T, class L, class P>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, L> &f, const P *p, unsigned ldm)
{
	__syncwarp();
	for (int i = 0; i < f.num_elements; i++)
		f.x[i] = p[offset<fragment<Use, M, N, K, T, L>>(i, ldm,
								std::is_same<L, col_major>::value)];
}

template <int M, int N, int K, class T, class P>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, T> &f, const P *p, unsigned ldm,
				    layout_t l)
{
	__syncwarp();
	for (int i = 0; i < f.num_elements; i++)
		f.x[i] = p[offset<fragment<accumulator, M, N, K, T>>(i, ldm, l == mem_col_major)];
}

template <int M, int N, int K, class T, class P>
static inline void store_matrix_sync(P *p, const fragment<accumulator, M, N, K, T> &f, unsigned ldm,
				     layout_t l)
{
	__syncwarp();
	for (int i = 0; i < f.num_elements; i++)
		p[offset<fragment<accumulator, M, N, K, T>>(i, ldm, l == mem_col_major)] = f.x[i];
	__syncwarp();
}

template <class FA, class FB, class FC> struct mma_payload {
	decltype(FA::x) a;
	decltype(FB::x) b;
	decltype(FC::x) c;
};

template <class FA, class FB, class FC, class FD> static void mma_fn(::ka_emu::warp_call &w)
{
	typedef mma_payload<FA, FB, FC> P;
	const int M = FA::R, K = FA::C, N = FB::C;
	static P in[32];
	for (int l = 0; l < 32; l++)
		memcpy(&in[l], w.in[l], sizeof(P));
	auto A = [&](int r, int k) {
		int e = r * K + k;
		return (float)in[e / FA::num_elements].a[e % FA::num_elements];
	};
	auto B = [&](int k, int n) {
		int e = k * N + n;
		return (float)in[e / FB::num_elements].b[e % FB::num_elements];
	};
	for (int l = 0; l < 32; l++) {
		decltype(FD::x) d;
		for (int i = 0; i < FD::num_elements; i++) {
			int e = l * FD::num_elements + i, r = e / N, n = e % N;
			float s = (float)in[l].c[i];
			for (int k = 0; k < K; k++)
				s = fmaf(A(r, k), B(k, n), s);
			d[i] = s;
		}
		memcpy(w.out[l], d, sizeof d);
	}
	(void)M;
}

template <class FD, class FA, class FB, class FC>
static inline void mma_sync(FD &d, const FA &a, const FB &b, const FC &c)
{
	typedef mma_payload<FA, FB, FC> P;
	static_assert(sizeof(P) <= sizeof(::ka_emu::warp_call::in[0]),
		      "the fragments of a lane fit one warp call");
	static_assert(sizeof(FD::x) <= sizeof(::ka_emu::warp_call::out[0]),
		      "a lane's result fits one warp call");
	P in;
	memcpy(in.a, a.x, sizeof a.x);
	memcpy(in.b, b.x, sizeof b.x);
	memcpy(in.c, c.x, sizeof c.x);
	::ka_emu::warp_collective(0xffffffffu, mma_fn<FA, FB, FC, FD>, &in, sizeof in, d.x,
				  sizeof d.x);
}

} // namespace wmma
} // namespace nvcuda

#endif
