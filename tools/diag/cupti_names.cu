/* cupti_names.cu: does CUPTI name a kernel after one of an unloaded module?
 *
 * The question behind a false "not from the plan" verdict (docs/PERF.md,
 * "CUPTI names"): a runner loads and unloads one module per graded
 * candidate; a kernel record of a later candidate came back named after a
 * kernel of an earlier one. This loads N modules in turn (PTX text, each
 * with one kernel of its own name and size), launches the kernel through a
 * captured graph as the runner does, reads the kernel record and compares
 * its name with the kernel's; then unloads the module (mode "unload") or
 * keeps it loaded to the end (mode "keep"). Prints the mismatches and the
 * device memory the kept modules hold.
 *
 * Build: nvcc -O2 -o cupti_names tools/diag/cupti_names.cu -lcuda -lcupti
 *   (-I/-L for CUPTI where it is not beside the toolkit's own headers)
 * Run:   ./cupti_names unload 400; ./cupti_names keep 400
 */
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char got[256];
static int n_got;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&mu);
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		CUpti_ActivityKernel9 *k = (CUpti_ActivityKernel9 *)rec;
		snprintf(got, sizeof got, "%s", k->name ? k->name : "?");
		n_got++;
	}
	pthread_mutex_unlock(&mu);
	free(buf);
}

#define CHECK(x)                                                                \
	do {                                                                    \
		CUresult r_ = (x);                                              \
		if (r_) {                                                       \
			fprintf(stderr, "%s: error %d at line %d\n", #x, r_, __LINE__); \
			exit(1);                                                \
		}                                                               \
	} while (0)

/* PTX of one kernel named name that adds i to *p, reps times. */
static void ptx_of(char *out, size_t cap, const char *name, int i, int reps)
{
	int l = snprintf(out, cap,
			 ".version 8.0\n.target sm_90\n.address_size 64\n"
			 ".visible .entry %s(.param .u64 p)\n{\n.reg .u64 %%a;\n.reg .u32 %%v;\n"
			 "ld.param.u64 %%a, [p];\ncvta.to.global.u64 %%a, %%a;\n"
			 "ld.global.u32 %%v, [%%a];\n",
			 name);
	for (int r = 0; r < reps; r++)
		l += snprintf(out + l, cap - (size_t)l, "add.u32 %%v, %%v, %d;\n", i + r);
	snprintf(out + l, cap - (size_t)l, "st.global.u32 [%%a], %%v;\nret;\n}\n");
}

int main(int argc, char **argv)
{
	int keep = argc > 1 && !strcmp(argv[1], "keep");
	int n = argc > 2 ? atoi(argv[2]) : 200;
	CUdevice dev;
	CUcontext ctx;
	CUstream st;
	CUdeviceptr p;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CUctxCreateParams cp;
	memset(&cp, 0, sizeof cp);
	CHECK(cuCtxCreate(&ctx, &cp, 0, dev));
	if (cuptiActivityRegisterCallbacks(request, complete) ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
		fprintf(stderr, "no CUPTI\n");
		return 1;
	}
	CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&p, 4));
	size_t free0, total;
	CHECK(cuMemGetInfo(&free0, &total));
	CUmodule *kept = (CUmodule *)calloc((size_t)n, sizeof *kept);
	static char ptx[1 << 16];
	int bad = 0;
	for (int i = 0; i < n; i++) {
		char name[64];
		/* Names of two families, as candidates of two tasks would have. */
		snprintf(name, sizeof name, i % 2 ? "beta_kernel_%d" : "alpha_scalar_%d", i);
		ptx_of(ptx, sizeof ptx, name, i, 1 + (i * 7) % 50);
		CUmodule m;
		CUfunction f;
		CHECK(cuModuleLoadData(&m, ptx));
		CHECK(cuModuleGetFunction(&f, m, name));
		void *args[] = {&p};
		CUgraph g;
		CUgraphExec ge;
		CHECK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
		CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, st, args, NULL));
		CHECK(cuStreamEndCapture(st, &g));
		CHECK(cuGraphInstantiate(&ge, g, 0));
		pthread_mutex_lock(&mu);
		n_got = 0;
		got[0] = 0;
		pthread_mutex_unlock(&mu);
		CHECK(cuGraphLaunch(ge, st));
		CHECK(cuStreamSynchronize(st));
		cuptiActivityFlushAll(1);
		pthread_mutex_lock(&mu);
		if (n_got != 1 || strcmp(got, name)) {
			bad++;
			if (bad <= 10)
				printf("module %d: launched %s, CUPTI says %s (%d records)\n", i, name,
				       got, n_got);
		}
		pthread_mutex_unlock(&mu);
		CHECK(cuGraphExecDestroy(ge));
		CHECK(cuGraphDestroy(g));
		if (keep)
			kept[i] = m;
		else
			CHECK(cuModuleUnload(m));
	}
	size_t free1;
	CHECK(cuMemGetInfo(&free1, &total));
	printf("mode %s: %d modules, %d with the wrong name; %.1f MiB of device memory held "
	       "(%.1f KiB a module)\n",
	       keep ? "keep" : "unload", n, bad, (double)(free0 - free1) / 1048576.0,
	       (double)(free0 - free1) / 1024.0 / n);
	return bad != 0;
}
