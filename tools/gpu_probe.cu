// gpu_probe.cu: measures the timing floor of the GPU the grader runs on, for
// docs/PERF.md: L2 size, the flush (a write of max(2 x L2, 256 MiB)), an empty
// event pair, an empty kernel between events, an empty graph launch, and the
// runner's timing window: two events recorded as graph nodes, empty and
// around an empty kernel.
// Prints one JSON object. Medians over 200 repetitions after 20 warm-ups.
// Build: nvcc -O2 -arch=sm_90a -o build/gpu_probe tools/gpu_probe.cu
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main()
{
	cudaDeviceProp p;
	cudaGetDeviceProperties(&p, 0);
	size_t flush = std::max<size_t>(2 * (size_t)p.l2CacheSize, 256u << 20);
	void *buf;
	cudaMalloc(&buf, flush);
	cudaStream_t s;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
	empty_kernel<<<1, 1, 0, s>>>();
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&ge, g, 0);
	/* The runner's window: event nodes first and last in the graph. */
	cudaGraphExec_t win_empty, win_kernel;
	for (int k = 0; k < 2; k++) {
		cudaGraph_t w;
		cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
		cudaEventRecordWithFlags(a, s, cudaEventRecordExternal);
		if (k)
			empty_kernel<<<1, 1, 0, s>>>();
		cudaEventRecordWithFlags(b, s, cudaEventRecordExternal);
		cudaStreamEndCapture(s, &w);
		cudaGraphInstantiate(k ? &win_kernel : &win_empty, w, 0);
	}
	std::vector<float> t_flush, t_pair, t_kernel, t_graph, t_wempty, t_wkernel;
	for (int i = 0; i < 220; i++) {
		float ms;
		cudaEventRecord(a, s);
		cudaMemsetAsync(buf, i & 0xFF, flush, s);
		cudaEventRecord(b, s);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms, a, b);
		if (i >= 20)
			t_flush.push_back(ms * 1000);
		cudaEventRecord(a, s);
		cudaEventRecord(b, s);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms, a, b);
		if (i >= 20)
			t_pair.push_back(ms * 1000);
		cudaEventRecord(a, s);
		empty_kernel<<<1, 1, 0, s>>>();
		cudaEventRecord(b, s);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms, a, b);
		if (i >= 20)
			t_kernel.push_back(ms * 1000);
		cudaEventRecord(a, s);
		cudaGraphLaunch(ge, s);
		cudaEventRecord(b, s);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms, a, b);
		if (i >= 20)
			t_graph.push_back(ms * 1000);
		for (int k = 0; k < 2; k++) {
			cudaGraphLaunch(k ? win_kernel : win_empty, s);
			cudaStreamSynchronize(s);
			cudaEventElapsedTime(&ms, a, b);
			if (i >= 20)
				(k ? t_wkernel : t_wempty).push_back(ms * 1000);
		}
	}
	int drv = 0, rt = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	printf("{\"gpu\":\"%s\",\"driver\":%d,\"runtime\":%d,\"l2_bytes\":%d,\"persisting_l2_max_bytes\":%d,"
	       "\"sms\":%d,\"flush_bytes\":%zu,\"flush_us\":%.2f,\"flush_gbps\":%.0f,"
	       "\"event_pair_us\":%.2f,\"empty_kernel_us\":%.2f,\"empty_graph_us\":%.2f,"
	       "\"window_empty_us\":%.2f,\"window_empty_kernel_us\":%.2f,"
	       "\"error\":\"%s\"}\n",
	       p.name, drv, rt, p.l2CacheSize, p.persistingL2CacheMaxSize, p.multiProcessorCount,
	       flush, median(t_flush), flush / (median(t_flush) * 1e3), median(t_pair),
	       median(t_kernel), median(t_graph), median(t_wempty), median(t_wkernel),
	       cudaGetErrorString(cudaGetLastError()));
	return 0;
}
