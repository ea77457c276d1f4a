/* test_cudac.c: the parent's CUDA compile step: the #include scan and the
 * symbol classification as tables (no nvcc needed), then, when nvcc exists,
 * compile errors, the cache, parallel compilation and the recorder's exports
 * (every name the parent lets through as "provided" must really be exported by
 * $BUILD/ka-record-cuda). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	RUN(test_include_table);
	RUN(test_include_policy);
	RUN(test_sym_table);
	RUN(test_recorder_exports);
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
