/* test_elfread.c: the ELF, fat-binary and cubin reader on real inputs (this test
 * binary itself; a shared object nvcc compiles here when nvcc exists) and on
 * truncated and corrupted copies of them, which must give an error and never
 * a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudac.h"
#include "elfread.h"
#include "ka_test.h"

static char *self;
static size_t self_len;

static void test_dynsyms_of_self(void)
{
	struct elf_symlist l;
	struct ka_err e;
	CHECK_EQ_INT(elf_dynsyms("/proc/self/exe", &l, &e), 0);
	int malloc_undef = 0;
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.s[i].name, "malloc") && !l.s[i].defined && l.s[i].func)
			malloc_undef = 1;
	elf_symlist_free(&l);
	CHECK(malloc_undef);
}

static void test_section_of_self(void)
{
	uint8_t *d = NULL;
	size_t n = 0;
	struct ka_err e;
	CHECK_EQ_INT(elf_section("/proc/self/exe", ".text", &d, &n, &e), 0);
	CHECK(n > 1000);
	free(d);
	CHECK_EQ_INT(elf_section("/proc/self/exe", ".nv_fatbin", &d, &n, &e), -1);
	CHECK(strstr(e.msg, "no section .nv_fatbin") != NULL);
	CHECK_EQ_INT(elf_section("/nonexistent/x.so", ".text", &d, &n, &e), -1);
}

static void test_truncated(void)
{
	static const size_t cuts[] = {0, 1, 4, 16, 63, 64, 65, 200, 4096};
	struct ka_err e;
	struct elf_symlist l;
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
		CHECK_EQ_INT(elf_dynsyms_mem((const uint8_t *)self, cuts[i], &l, &e), -1);
	/* Section headers sit at the end of the file: any cut loses them. */
	CHECK_EQ_INT(elf_dynsyms_mem((const uint8_t *)self, self_len / 2, &l, &e), -1);
	CHECK_EQ_INT(elf_dynsyms_mem((const uint8_t *)self, self_len - 1, &l, &e), -1);
	CHECK_EQ_INT(elf_dynsyms_mem((const uint8_t *)self, self_len, &l, &e), 0);
	elf_symlist_free(&l);
}

/* Flip bytes in the ELF header and the section header table: every outcome
 * is 0 or -1, never a crash. */
static void test_corrupted(void)
{
	uint8_t *copy = malloc(self_len);
	uint64_t shoff;
	memcpy(&shoff, self + 40, 8);
	uint64_t x = 12345;
	int errors = 0;
	for (int it = 0; it < 3000; it++) {
		memcpy(copy, self, self_len);
		for (int k = 0; k < 4; k++) {
			x = util_mix64(x);
			size_t at = (x & 1) ? (x >> 8) % 64 : shoff + (x >> 8) % (self_len - shoff);
			copy[at] = (uint8_t)(x >> 40);
		}
		struct elf_symlist l;
		struct ka_err e;
		uint8_t *d;
		size_t n;
		int r = elf_dynsyms_mem(copy, self_len, &l, &e);
		if (r == 0)
			elf_symlist_free(&l);
		else
			errors++;
		if (elf_section_mem(copy, self_len, ".text", &d, &n, &e) == 0)
			free(d);
	}
	free(copy);
	CHECK(errors > 0);
}

static const char kernel_src[] =
	"#include <cuda_runtime.h>\n"
	"struct S { float a; double b; int c; };\n"
	"struct P { float *a[40]; };\n"
	"__global__ void two(S s, const float *p, char c, float *q) { q[0] = s.a + p[0] + c; }\n"
	"__global__ void __launch_bounds__(256) sm(float *x) { __shared__ float t[1000];\n"
	"  t[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = t[999 - "
	"threadIdx.x]; }\n"
	"__global__ void hugep(P p) { p.a[threadIdx.x][0] = 1; }\n"
	"__global__ void noparam() {}\n"
	"extern \"C\" int ka_launch(const void *a, cudaStream_t s) { return 0; }\n";

static struct cudac_result compiled;
static int have_compiled;

static void test_cubin_layouts(void)
{
	if (!have_compiled) {
		printf("SKIP test_cubin_layouts: nvcc missing\n");
		return;
	}
	const struct elf_kernels *ks = &compiled.kernels;
	CHECK(ks->arch == 90);
	CHECK(ks->n == 4);
	const struct elf_kernel *k = elf_kernels_find(ks, "_Z3two1SPKfcPf");
	CHECK(k != NULL);
	CHECK(k->n_params == 4);
	static const uint32_t off[4] = {0, 24, 32, 40}, size[4] = {24, 8, 1, 8};
	for (int i = 0; i < 4; i++) {
		CHECK(k->params[i].offset == off[i]);
		CHECK(k->params[i].size == size[i]);
	}
	CHECK(k->param_bytes == 48);
	CHECK(k->num_regs > 0);
	k = elf_kernels_find(ks, "_Z5hugep1P");
	CHECK(k && k->n_params == 1 && k->params[0].size == 320);
	k = elf_kernels_find(ks, "_Z2smPf");
	CHECK(k && k->max_threads == 256 && k->static_smem >= 4000);
	k = elf_kernels_find(ks, "_Z7noparamv");
	CHECK(k && k->n_params == 0);
}

static void test_fatbin_corrupted(void)
{
	if (!have_compiled) {
		printf("SKIP test_fatbin_corrupted: nvcc missing\n");
		return;
	}
	uint8_t *fb = NULL;
	size_t n = 0;
	struct ka_err e;
	struct elf_kernels ks;
	CHECK_EQ_INT(elf_section(compiled.so_path, ".nv_fatbin", &fb, &n, &e), 0);
	for (size_t cut = 0; cut < n; cut += 97)
		if (elf_fatbin_kernels(fb, cut, &ks, &e) == 0)
			elf_kernels_free(&ks);
	uint8_t *copy = malloc(n);
	uint64_t x = 99;
	for (int it = 0; it < 2000; it++) {
		memcpy(copy, fb, n);
		for (int k = 0; k < 3; k++) {
			x = util_mix64(x);
			copy[(x >> 8) % n] = (uint8_t)(x >> 40);
		}
		if (elf_fatbin_kernels(copy, n, &ks, &e) == 0)
			elf_kernels_free(&ks);
	}
	memcpy(copy, fb, n);
	copy[0] ^= 0xff;
	CHECK_EQ_INT(elf_fatbin_kernels(copy, n, &ks, &e), -1);
	CHECK(strstr(e.msg, "magic") != NULL);
	free(copy);
	free(fb);
}

/* An object cc makes of text, in dir; its bytes in *d (caller frees). */
static int cc_object(const char *dir, const char *name, const char *text, char **d, size_t *n)
{
	char *src = xasprintf("%s/%s.c", dir, name), *obj = xasprintf("%s/%s.o", dir, name);
	char *cmd = xasprintf("cc -O2 -fPIC -w -c -o %s %s 2>/dev/null", obj, src);
	struct ka_err e;
	int rc = util_write_file(src, text, strlen(text), &e) || system(cmd) != 0 ||
		 util_read_file(obj, ELF_MAX_FILE, d, n, &e);
	free(src);
	free(obj);
	free(cmd);
	return rc ? -1 : 0;
}

/* A host object holds only what a compiler writes: a plain one (code,
 * data, an init array, unwind tables) passes; one section
 * of a type only a linker makes, of an unknown type, or named as a
 * linker's own fails, naming it; an executable and cut copies fail. */
static void test_object_sections(void)
{
	char dir[] = "/tmp/ka-test-obj-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	static const char plain[] =
		"#include <stdio.h>\n"
		"int v[4] = {1, 2, 3, 4}; static int z[64];\n"
		"__attribute__((constructor)) static void init(void) { z[0] = v[1]; }\n"
		"inline int f(int x) { return x + z[x & 63]; }\n"
		"int g(int x) { printf(\"%d\", f(x)); return v[x & 3]; }\n";
	static const struct {
		const char *name, *asm_text, *want;
	} bad[] = {
		{"dynsym", ".section .b,\\\"a\\\",@11\\n.zero 24", "type 0xb"},
		{"dynamic", ".section .b,\\\"aw\\\",@6\\n.quad 0, 0", "type 0x6"},
		{"hash", ".section .b,\\\"a\\\",@5\\n.long 0, 0", "type 0x5"},
		{"gnu_hash", ".section .b,\\\"a\\\",@0x6ffffff6\\n.long 0", "type 0x6ffffff6"},
		{"versym", ".section .b,\\\"a\\\",@0x6fffffff\\n.short 0", "type 0x6fffffff"},
		{"unknown", ".section .b,\\\"a\\\",@0x60000123\\n.byte 0", "type 0x60000123"},
		{"dynstr_name", ".section .dynstr,\\\"a\\\",@progbits\\n.asciz \\\"x\\\"",
		 "named .dynstr"},
		{"got_name", ".section .got,\\\"aw\\\",@progbits\\n.quad 0", "named .got"},
	};
	char *d = NULL;
	size_t n = 0;
	struct ka_err e;
	if (cc_object(dir, "plain", plain, &d, &n)) {
		printf("SKIP test_object_sections: cc cannot compile here\n");
		util_rmtree(dir);
		return;
	}
	CHECK_EQ_INT(elf_check_object_mem((const uint8_t *)d, n, &e), 0);
	for (size_t cut = 0; cut < n; cut += n / 7 + 1)
		CHECK_EQ_INT(elf_check_object_mem((const uint8_t *)d, cut, &e), -1);
	free(d);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *text =
			xasprintf("%s__asm__(\"%s\\n.previous\\n\");\n", plain, bad[i].asm_text);
		CHECK_EQ_INT(cc_object(dir, bad[i].name, text, &d, &n), 0);
		CHECK_EQ_INT(elf_check_object_mem((const uint8_t *)d, n, &e), -1);
		CHECK_STR_CONTAINS(e.msg, bad[i].want);
		free(d);
		free(text);
	}
	CHECK_EQ_INT(elf_check_object("/proc/self/exe", &e), -1);
	CHECK_STR_CONTAINS(e.msg, "not an x86-64 relocatable object");
	CHECK_EQ_INT(elf_check_object("/nonexistent/x.o", &e), -1);
	util_rmtree(dir);
}

int main(void)
{
	struct ka_err e;
	if (util_read_file("/proc/self/exe", ELF_MAX_FILE, &self, &self_len, &e)) {
		printf("FAIL test_elfread: %s\n", e.msg);
		return 1;
	}
	if (cudac_nvcc_version(NULL)) {
		char dir[] = "/tmp/ka-test-elf-XXXXXX";
		if (mkdtemp(dir)) {
			char *inc = xasprintf("%s/include", util_data_root());
			struct cudac_opts o = {
				.arch = "sm_90a", .cache_dir = dir, .include_dir = inc};
			if (cudac_compile(kernel_src, strlen(kernel_src), &o, &compiled, &e) == 0 &&
			    compiled.verdict == VERDICT_OK)
				have_compiled = 1;
			else
				printf("# compile: %s %.300s\n", e.msg, compiled.detail);
			free(inc);
		}
		RUN(test_cubin_layouts);
		RUN(test_fatbin_corrupted);
		cudac_result_free(&compiled);
		util_rmtree(dir);
	} else {
		printf("SKIP test_cubin_layouts: nvcc missing\n");
	}
	RUN(test_dynsyms_of_self);
	RUN(test_section_of_self);
	RUN(test_truncated);
	RUN(test_corrupted);
	RUN(test_object_sections);
	free(self);
	TEST_EXIT();
}
