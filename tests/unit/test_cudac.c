/* test_cudac.c: the parent's CUDA compile step: the #include scan and the
 * symbol classification as tables (no nvcc needed), then, when nvcc exists,
 * compile errors, the cache, parallel compilation and the recorder's exports
 * (every name the parent lets through as "provided" must really be exported by
 * $BUILD/ka-record-cuda). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cudac.h"
#include "libc_allow.h"
#include "ka_test.h"

static const struct {
	const char *src;
	int ok;
} includes[] = {
	{"#include <cuda_runtime.h>\n#include \"ka_kernel.h\"\n", 1},
	{"#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <mma.h>\n", 1},
	{"#include <cuda/barrier>\n#include <cuda/std/cstdint>\n#include "
	 "<cooperative_groups/reduce.h>\n",
	 1},
	{"#include <cuda.h>\n#include <cstdint>\n#include <math.h>\n", 1},
	{"#include \"/etc/passwd\"\n", 0},
	{"#include \"../x.h\"\n", 0},
	{"#include <cuda/../../../etc/passwd>\n", 0},
	{"/* c */ #include \"../x.h\"\n", 0},
	{"#  include \\\n \"/etc/passwd\"\n", 0},
	{"%:include \"/etc/passwd\"\n", 0},
	{"#define F \"/etc/passwd\"\n#include F\n", 0},
	{"#include \"x\\\\..\\\\y\"\n", 0},
	{"#embed \"/etc/passwd\"\n", 0},
	{"#include <cublas_v2.h>\n", 0},
	{"#include <sys/socket.h>\n", 0},
	{"// #include \"/etc/passwd\" in a comment\nint x;\n", 1},
	{"const char *s = \"#include </etc/passwd>\";\n", 1},
};

static void test_include_table(void)
{
	for (size_t i = 0; i < sizeof includes / sizeof includes[0]; i++) {
		char why[256] = "";
		int r = cudac_check_includes(includes[i].src, strlen(includes[i].src), NULL, why,
					     sizeof why);
		if ((r == 0) != includes[i].ok)
			printf("# include case %zu: got %d (%s)\n", i, r, why);
		CHECK_EQ_INT((r == 0), includes[i].ok);
	}
}

static void test_include_policy(void)
{
	static const char *const libs[] = {"cublas", NULL};
	const char *s = "#include <cublas_v2.h>\n";
	char why[256];
	CHECK_EQ_INT(cudac_check_includes(s, strlen(s), libs, why, sizeof why), 0);
	CHECK_EQ_INT(cudac_check_includes(s, strlen(s), NULL, why, sizeof why), -1);
	CHECK(strstr(why, "cublas_v2.h") != NULL);
}

static const struct {
	const char *name;
	enum cudasym kind;
} syms[] = {
	{"__cudaLaunchKernel", CUDASYM_PROVIDED},
	{"cudaLaunchKernelExC", CUDASYM_PROVIDED},
	{"ka_workspace", CUDASYM_PROVIDED},
	{"__cxa_guard_acquire", CUDASYM_PROVIDED},
	{"cudaStreamCreate", CUDASYM_CUDA},
	{"cudaMalloc", CUDASYM_CUDA},
	{"cudaDeviceSynchronize", CUDASYM_CUDA},
	{"cudaGraphLaunch", CUDASYM_CUDA},
	{"cuLaunchKernel", CUDASYM_CUDA},
	{"cuGetProcAddress_v2", CUDASYM_CUDA},
	{"cuTensorMapEncodeTiled", CUDASYM_PROVIDED},
	{"cuTensorMapEncodeIm2col", CUDASYM_CUDA},
	{"cublasCreate_v2", CUDASYM_LIBRARY},
	{"cublasLtMatmul", CUDASYM_LIBRARY},
	{"cudnnCreate", CUDASYM_LIBRARY},
	{"curandCreateGenerator", CUDASYM_OTHER_CUDA},
	{"ncclAllReduce", CUDASYM_OTHER_CUDA},
	{"fopen", CUDASYM_OTHER},
	{"cut", CUDASYM_OTHER},
};

static void test_sym_table(void)
{
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		if (cudasym_classify(syms[i].name) != syms[i].kind)
			printf("# %s: %d\n", syms[i].name, cudasym_classify(syms[i].name));
		CHECK_EQ_INT(cudasym_classify(syms[i].name), syms[i].kind);
	}
	CHECK(libc_allow_has("memcpy"));
	CHECK(libc_allow_has("expf"));
	CHECK(!libc_allow_has("fopen"));
	CHECK(!libc_allow_has("dlopen"));
	CHECK(!libc_allow_has("pthread_create"));
}

static char cache[PATH_MAX], inc[PATH_MAX + 16];

static struct cudac_opts opts(void)
{
	struct cudac_opts o = {.arch = "sm_90a", .cache_dir = cache, .include_dir = inc};
	return o;
}

static const char good[] = "#include <cuda_runtime.h>\n#include \"ka_kernel.h\"\n"
			   "__global__ void k(float *z) { z[threadIdx.x] = 1.0f; }\n"
			   "extern \"C\" int ka_launch(const struct ka_args *a, cudaStream_t s)\n"
			   "{ k<<<1, 32, 0, s>>>((float *)a->outputs[0].ptr); return 0; }\n";

static void test_bad_arch(void)
{
	struct cudac_opts o = opts();
	o.arch = "sm_90a -o /etc/x";
	struct cudac_result r;
	struct ka_err e;
	CHECK_EQ_INT(cudac_compile(good, strlen(good), &o, &r, &e), -1);
	CHECK(strstr(e.msg, "architecture") != NULL);
}

static void test_compile_error_and_cache(void)
{
	struct cudac_opts o = opts();
	struct cudac_result r;
	struct ka_err e;
	const char *bad = "__global__ void k( { }\n";
	CHECK_EQ_INT(cudac_compile(bad, strlen(bad), &o, &r, &e), 0);
	CHECK_EQ_INT(r.verdict, VERDICT_COMPILE_ERROR);
	CHECK(strstr(r.detail, "error") != NULL);
	CHECK(!r.cached);
	cudac_result_free(&r);
	CHECK_EQ_INT(cudac_compile(bad, strlen(bad), &o, &r, &e), 0);
	CHECK(r.verdict == VERDICT_COMPILE_ERROR && r.cached);
	cudac_result_free(&r);
	CHECK_EQ_INT(cudac_compile(good, strlen(good), &o, &r, &e), 0);
	CHECK(r.verdict == VERDICT_OK && !r.cached && r.kernels.n == 1);
	char *first = xstrdup(r.so_path);
	cudac_result_free(&r);
	CHECK_EQ_INT(cudac_compile(good, strlen(good), &o, &r, &e), 0);
	CHECK(r.verdict == VERDICT_OK && r.cached && !strcmp(first, r.so_path));
	free(first);
	cudac_result_free(&r);
	/* Another arch is another key. */
	o.arch = "sm_80";
	CHECK_EQ_INT(cudac_compile(good, strlen(good), &o, &r, &e), 0);
	CHECK(r.verdict == VERDICT_OK && !r.cached && r.kernels.arch == 80);
	cudac_result_free(&r);
}

static void test_compile_many(void)
{
	struct cudac_opts o = opts();
	const char *b = "#include <cuda_runtime.h>\n__global__ void k2(int *z) { z[0] = 2; }\n"
			"extern \"C\" int ka_launch(const void *a, cudaStream_t s) { return 0; }\n";
	const char *srcs[3] = {b, good, b};
	size_t lens[3] = {strlen(b), strlen(good), strlen(b)};
	struct cudac_result r[3];
	int rc[3];
	struct ka_err e[3];
	CHECK_EQ_INT(cudac_compile_many(3, srcs, lens, &o, 2, r, rc, e), 0);
	for (int i = 0; i < 3; i++) {
		CHECK(rc[i] == 0 && r[i].verdict == VERDICT_OK);
		cudac_result_free(&r[i]);
	}
}

static void test_recorder_exports(void)
{
	const char *b = getenv("BUILD");
	char *rec = b && b[0] == '/'
			    ? xasprintf("%s/ka-record-cuda", b)
			    : xasprintf("%s/%s/ka-record-cuda", util_data_root(), b ? b : "build");
	struct elf_symlist l;
	struct ka_err e;
	if (access(rec, R_OK) != 0) {
		printf("SKIP test_recorder_exports: %s missing\n", rec);
		free(rec);
		return;
	}
	int rd = elf_dynsyms(rec, &l, &e);
	free(rec);
	CHECK_EQ_INT(rd, 0);
#define CUDAC_T_(n) #n,
	static const char *const want[] = {CUDASYM_RECORDER_EXPORTS(CUDAC_T_) NULL};
	for (int i = 0; want[i]; i++) {
		int found = 0;
		for (int k = 0; k < l.n; k++)
			if (!strcmp(l.s[k].name, want[i]) && l.s[k].defined)
				found = 1;
		if (!found)
			printf("# %s not exported\n", want[i]);
		CHECK(found);
	}
	elf_symlist_free(&l);
}

/* The compile-ahead's width, with a stand-in nvcc that prints when its
 * compile starts and ends (in the compiler jail it can write nowhere else)
 * and fails it after 0.3 s: at most first_jobs compiles at once until
 * first_n have ended, then up to jobs. The times come back as the cached
 * compile logs. The compile runs in a child, so the stand-in's version
 * string is not cached for the tests of the real nvcc. */
static void ahead_width_case(const char *dir, int jobs, int first_jobs, int first_n, int *max_first,
			     int *max_after)
{
	enum { N = 7 };
	char *nvcc = xasprintf("%s/bin/nvcc", dir);
	char *cdir = xasprintf("%s/cache-%d-%d-%d", dir, jobs, first_jobs, first_n);
	*max_first = *max_after = -1;
	FILE *f = fopen(nvcc, "w");
	if (!f) {
		CHECK(f != NULL);
		goto out;
	}
	fprintf(f, "#!/bin/sh\n"
		   "case \"$1\" in --version) echo 'Cuda compilation tools, release 13.0, "
		   "V13.0.88'; exit 0;; esac\n"
		   "echo \"start $(date +%%s%%N)\"\nsleep 0.3\necho \"end $(date +%%s%%N)\"\n"
		   "exit 1\n");
	fclose(f);
	chmod(nvcc, 0755);
	char *srcs[N];
	size_t lens[N];
	for (int i = 0; i < N; i++) {
		srcs[i] = xasprintf("%s// copy %d\n", good, i);
		lens[i] = strlen(srcs[i]);
	}
	struct cudac_opts o = {.arch = "sm_90a",
			       .cache_dir = cdir,
			       .include_dir = inc,
			       .nvcc = nvcc,
			       .compiler = "nvcc"};
	int fds[2];
	CHECK_EQ_INT(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		cudac_compile_ahead(N, (const char *const *)srcs, lens, &o, jobs, first_jobs,
				    first_n, NULL, NULL);
		/* Each compile's log, from the cache, as "start end" lines. */
		for (int i = 0; i < N; i++) {
			struct cudac_result r;
			struct ka_err e;
			cudac_compile(srcs[i], lens[i], &o, &r, &e);
			const char *s0 = strstr(r.detail, "start "), *s1 = strstr(r.detail, "end ");
			dprintf(fds[1], "%d %lld %lld\n", r.cached, s0 ? atoll(s0 + 6) : 0LL,
				s1 ? atoll(s1 + 4) : 0LL);
			cudac_result_free(&r);
		}
		_exit(0);
	}
	close(fds[1]);
	long long t[2 * N];
	int d[2 * N], n = 0, cached = 0, c;
	long long t0, t1;
	f = fdopen(fds[0], "r");
	while (f && n < 2 * N && fscanf(f, "%d %lld %lld", &c, &t0, &t1) == 3) {
		cached += c;
		t[n] = t0, d[n++] = 1;
		t[n] = t1, d[n++] = -1;
	}
	if (f)
		fclose(f);
	waitpid(pid, NULL, 0);
	CHECK_EQ_INT(n, 2 * N);
	CHECK_EQ_INT(cached, N); /* every log from the compile ahead, none again */
	/* The events in time order (an end before a start at the same time):
	 * the running count at each start, and whether first_n compiles had
	 * ended by then. */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && (t[k] < t[k - 1] || (t[k] == t[k - 1] && d[k] < d[k - 1]));
		     k--) {
			long long tt = t[k];
			t[k] = t[k - 1];
			t[k - 1] = tt;
			int dd = d[k];
			d[k] = d[k - 1];
			d[k - 1] = dd;
		}
	int running = 0, ended = 0;
	*max_first = *max_after = 0;
	for (int i = 0; i < n; i++) {
		running += d[i];
		if (d[i] < 0)
			ended++;
		else if (ended < first_n && running > *max_first)
			*max_first = running;
		else if (ended >= first_n && running > *max_after)
			*max_after = running;
	}
	for (int i = 0; i < N; i++)
		free(srcs[i]);
out:
	free(nvcc);
	free(cdir);
}

static void test_ahead_width(void)
{
	char dir[] = "/tmp/ka-test-ahead-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	char *bin = xasprintf("%s/bin", dir);
	mkdir(bin, 0755);
	free(bin);
	int first, after;
	/* one at a time until 2 have ended, then 3 at once */
	ahead_width_case(dir, 3, 1, 2, &first, &after);
	CHECK_EQ_INT(first, 1);
	CHECK_EQ_INT(after, 3);
	/* first_n 0: 3 at once from the start */
	ahead_width_case(dir, 3, 1, 0, &first, &after);
	CHECK_EQ_INT(after, 3);
	util_rmtree(dir);
}

int main(void)
{
	RUN(test_include_table);
	RUN(test_include_policy);
	RUN(test_sym_table);
	RUN(test_recorder_exports);
	snprintf(inc, sizeof inc, "%s/include", util_data_root());
	RUN(test_ahead_width);
	if (!cudac_nvcc_version(NULL)) {
		printf("SKIP test_cudac_nvcc: nvcc missing\n");
		TEST_EXIT();
	}
	snprintf(cache, sizeof cache, "/tmp/ka-test-cudac-XXXXXX");
	if (!mkdtemp(cache)) {
		printf("FAIL test_cudac: mkdtemp\n");
		return 1;
	}
	snprintf(inc, sizeof inc, "%s/include", util_data_root());
	RUN(test_bad_arch);
	RUN(test_compile_error_and_cache);
	RUN(test_compile_many);
	util_rmtree(cache);
	TEST_EXIT();
}
