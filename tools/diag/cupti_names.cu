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
#include "cupti_diag.h"

static char got[256];
static int n_got;

static void diag_keep(const CUpti_ActivityKernel9 *k)
{
	snprintf(got, sizeof got, "%s", k->name ? k->name : "?");
	n_got++;
}

int main(int argc, char **argv)
{
	int keep = argc > 1 && !strcmp(argv[1], "keep");
	int n = argc > 2 ? atoi(argv[2]) : 200;
	CUstream st;
	CUdeviceptr p;
	diag_open(&st, &p);
	size_t free0, total;
	CHECK(cuMemGetInfo(&free0, &total));
	CUmodule *kept = (CUmodule *)calloc((size_t)n, sizeof *kept);
	static char ptx[1 << 16];
	int bad = 0;
	for (int i = 0; i < n; i++) {
		char name[64];
		/* Names of two families, as candidates of two tasks would have. */
		snprintf(name, sizeof name, i % 2 ? "beta_kernel_%d" : "alpha_scalar_%d", i);
		int l = ptx_header(ptx, sizeof ptx);
		ptx_entry(ptx + l, sizeof ptx - (size_t)l, name, i, 1 + (i * 7) % 50);
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
		pthread_mutex_lock(&diag_mu);
		n_got = 0;
		got[0] = 0;
		pthread_mutex_unlock(&diag_mu);
		CHECK(cuGraphLaunch(ge, st));
		CHECK(cuStreamSynchronize(st));
		cuptiActivityFlushAll(1);
		pthread_mutex_lock(&diag_mu);
		if (n_got != 1 || strcmp(got, name)) {
			bad++;
			if (bad <= 10)
				printf("module %d: launched %s, CUPTI says %s (%d records)\n", i,
				       name, got, n_got);
		}
		pthread_mutex_unlock(&diag_mu);
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
