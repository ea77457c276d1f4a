/* online_rows_probe.cu: the compiled softmax baselines' launch choices,
 * timed one at a time (bank/public/L3/softmax_rows/notes.md).
 *
 * bank/lib/norm.cuh's online_rows_kernel (Inductor's online softmax in a
 * looped reduction) at softmax_rows' benchmark shape (R = C = 4096) and
 * log_softmax's (R = 4096, C = 32000), for threads a row in {64, 128, 256,
 * 512, 1024}, with and without the eviction hints, one or two float4 loads a
 * thread an iteration. Each variant: 50 calls, each after a 256 MiB write
 * that flushes L2, timed by CUDA events; prints the median and the
 * quartiles in microseconds. The inputs are uniform in [-4, 4). Then
 * bank/lib/attn.cuh's fused softmax of the compiled attention (fp32 scores
 * to 16-bit probabilities, 256 threads) at sdpa_bf16_d128's scores (131072
 * rows of 2048: the looped kernel) and sdpa_f16_d64's (131072 of 1024: the
 * persistent one), and the unmasked looped one in three loops
 * (softmax_looped3_kernel). (The warp-by-warp block combine these kernels
 * had before, timed beside them in docs/PERF.md, is in this probe and
 * bank/lib/attn.cuh as of commit aefcfb5.)
 *
 * Build: nvcc -O3 -std=c++17 -arch=sm_90a -Ibank/lib -Iinclude \
 *          -o online_rows_probe tools/diag/online_rows_probe.cu -lcublas -lcublasLt
 * Run:   ./online_rows_probe
 */
#include "ka_kernel.h"
#include "attn.cuh"
#include "norm.cuh"
#include <algorithm>
#include <stdio.h>
#include <vector>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_) {                                                                          \
			fprintf(stderr, "%s: %s at line %d\n", #x, cudaGetErrorString(e_),         \
				__LINE__);                                                         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

__global__ void fill(float *x, long long n)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u;
		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		x[i] = (float)(h & 0xffffff) / 16777216.f * 8.f - 4.f;
	}
}

typedef void (*kern_t)(const float *, float *, const int64_t *, long long);

/* The median and quartiles of 50 timed calls of launch() (5 more first),
 * each after flush_bytes written to flush (L2 cold). */
template <typename L> static void run(const char *what, L launch, void *flush, size_t flush_bytes)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	std::vector<float> t;
	for (int i = 0; i < 55; i++) {
		CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
		CK(cudaEventRecord(a));
		launch();
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		float ms;
		CK(cudaEventElapsedTime(&ms, a, b));
		if (i >= 5)
			t.push_back(ms * 1000.f);
	}
	CK(cudaGetLastError());
	std::sort(t.begin(), t.end());
	printf("%-58s: median %8.1f us  [q1 %8.1f, q3 %8.1f]\n", what, t[t.size() / 2],
	       t[t.size() / 4], t[3 * t.size() / 4]);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
}

static void rows(const char *what, kern_t k, unsigned threads, long long R, long long C,
		 const float *x, float *y, void *flush, size_t flush_bytes)
{
	char w[128];
	snprintf(w, sizeof w, "%s threads %4u", what, threads);
	run(
		w, [&] { k<<<(unsigned)R, threads>>>(x, y, NULL, C); }, flush, flush_bytes);
}

int main()
{
	const long long R = 4096, Cs[2] = {4096, 32000};
	const char *names[2] = {"softmax_rows (C 4096)", "log_softmax (C 32000)"};
	size_t flush_bytes = 256u << 20;
	void *flush;
	float *x, *y;
	CK(cudaMalloc(&flush, flush_bytes));
	const long long n = 131072ll * 2048; // the largest: sdpa_bf16_d128's scores
	CK(cudaMalloc(&x, (size_t)n * sizeof(float)));
	CK(cudaMalloc(&y, (size_t)n * sizeof(float)));
	fill<<<1024, 256>>>(x, n);
	CK(cudaDeviceSynchronize());
	for (int s = 0; s < 2; s++) {
		long long C = Cs[s];
		char what[96];
		unsigned th[5] = {64, 128, 256, 512, 1024};
		for (int i = 0; i < 5; i++) {
			if (s == 0) {
				snprintf(what, sizeof what, "%s softmax U1 hints", names[s]);
				rows(what, ka::online_rows_kernel<4, 1, ka::ONLINE_SOFTMAX, true>,
				     th[i], R, C, x, y, flush, flush_bytes);
				snprintf(what, sizeof what, "%s softmax U1 plain", names[s]);
				rows(what, ka::online_rows_kernel<4, 1, ka::ONLINE_SOFTMAX, false>,
				     th[i], R, C, x, y, flush, flush_bytes);
				snprintf(what, sizeof what, "%s softmax U2 plain", names[s]);
				rows(what, ka::online_rows_kernel<4, 2, ka::ONLINE_SOFTMAX, false>,
				     th[i], R, C, x, y, flush, flush_bytes);
			} else {
				snprintf(what, sizeof what, "%s log U1 hints", names[s]);
				rows(what,
				     ka::online_rows_kernel<4, 1, ka::ONLINE_LOG_SOFTMAX, true>,
				     th[i], R, C, x, y, flush, flush_bytes);
				snprintf(what, sizeof what, "%s log U1 plain", names[s]);
				rows(what,
				     ka::online_rows_kernel<4, 1, ka::ONLINE_LOG_SOFTMAX, false>,
				     th[i], R, C, x, y, flush, flush_bytes);
			}
		}
	}
	// The compiled attention's fused softmax (attn::softmax_fused's kernels).
	const long long AR = 131072;
	attn::mask_spec mk = {false, 0};
	float scale = 0.08838834764831845f;
	ka::fast_div by_sq = ka::make_fast_div(2048, AR);
	__nv_bfloat16 *yb = (__nv_bfloat16 *)y;
	run(
		"sdpa_bf16_d128 looped, bf16, online",
		[&] {
			attn::softmax_looped_kernel<4, __nv_bfloat16>
				<<<AR, attn::SF_THREADS>>>(x, yb, 2048, by_sq, scale, mk);
		},
		flush, flush_bytes);
	run(
		"sdpa_bf16_d128 looped, three loops (no online softmax)",
		[&] {
			attn::softmax_looped3_kernel<4, __nv_bfloat16>
				<<<AR, attn::SF_THREADS>>>(x, yb, 2048, scale);
		},
		flush, flush_bytes);
	by_sq = ka::make_fast_div(1024, AR);
	__half *yh = (__half *)y;
	run(
		"sdpa_f16_d64 persistent, f16",
		[&] {
			attn::softmax_persistent_kernel<4, 1, __half>
				<<<AR, attn::SF_THREADS>>>(x, yh, 1024, by_sq, scale, mk);
		},
		flush, flush_bytes);
	return 0;
}
