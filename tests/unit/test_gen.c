/* test_gen.c: the input generator. Literal golden values (computed by an
 * independent Python model of include/ka_gen.h, NumPy's float16 cast for
 * fp16) for each distribution and dtype; fp16/bf16 conversion edge cases;
 * distribution parameters; tensor keys; and the CPU against OpenCL on PoCL
 * (build/ka-clc gen) bit for bit over 100003 elements for every dtype and
 * distribution (SKIP without ka-clc or an OpenCL platform). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "ka_gen.h"
#include "ka_test.h"
#include "util.h"

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* key, index, normal(0.5, 2) as fp32 bits, fp16 bits, bf16 bits,
 * uniform[-1, 3) as fp32 bits, int[-5, 9]. */
static const struct {
	uint64_t key;
	int64_t i;
	uint32_t normal;
	uint16_t normal_f16, normal_bf16;
	uint32_t uniform;
	int64_t ival;
} golden[] = {
	{0x0123456789abcdefULL, 0, 0xbf19e060u, 0xb8cfu, 0xbf1au, 0xbf339f60u, 0},
	{0x0123456789abcdefULL, 1, 0xbf77e860u, 0xbbbfu, 0xbf78u, 0x3e20fab0u, -1},
	{0x0123456789abcdefULL, 1000003, 0xbeb83580u, 0xb5c2u, 0xbeb8u, 0x3f4ba298u, -3},
	{0x000000000000002aULL, 0, 0x3f117de0u, 0x388cu, 0x3f11u, 0x3e59b3f0u, 7},
	{0x000000000000002aULL, 1, 0x40514468u, 0x428au, 0x4051u, 0x3f7aceccu, 5},
	{0x000000000000002aULL, 1000003, 0x3eb98e40u, 0x35ccu, 0x3ebau, 0x3f02cc98u, -3},
};

#define GOLD_N 1000004

static void test_gen_golden_values(void)
{
	struct ka_dist dn = {KA_DIST_NORMAL, 0.5, 2.0}, du = {KA_DIST_UNIFORM, -1.0, 3.0},
		       di = {KA_DIST_INT, -5, 9};
	struct gen_params pn, pu, pi;
	CHECK_EQ_INT(gen_params_of(&dn, &pn, NULL), 0);
	CHECK_EQ_INT(gen_params_of(&du, &pu, NULL), 0);
	CHECK_EQ_INT(gen_params_of(&di, &pi, NULL), 0);
	float *f32 = xmalloc(GOLD_N * 4), *u32 = xmalloc(GOLD_N * 4);
	uint16_t *h = xmalloc(GOLD_N * 2), *bf = xmalloc(GOLD_N * 2);
	double *f64 = xmalloc(GOLD_N * 8);
	int32_t *i32 = xmalloc(GOLD_N * 4);
	int64_t *i64 = xmalloc(GOLD_N * 8);
	float *if32 = xmalloc(GOLD_N * 4);
	int ok = 1;
	for (size_t c = 0; c < sizeof golden / sizeof *golden && ok; c++) {
		uint64_t key = golden[c].key;
		int64_t i = golden[c].i;
		gen_fill(f32, KA_DTYPE_FP32, GOLD_N, key, &pn);
		gen_fill(h, KA_DTYPE_FP16, GOLD_N, key, &pn);
		gen_fill(bf, KA_DTYPE_BF16, GOLD_N, key, &pn);
		gen_fill(f64, KA_DTYPE_FP64, GOLD_N, key, &pn);
		gen_fill(u32, KA_DTYPE_FP32, GOLD_N, key, &pu);
		gen_fill(i32, KA_DTYPE_INT32, GOLD_N, key, &pi);
		gen_fill(i64, KA_DTYPE_INT64, GOLD_N, key, &pi);
		gen_fill(if32, KA_DTYPE_FP32, GOLD_N, key, &pi);
		ok = f2u(f32[i]) == golden[c].normal && h[i] == golden[c].normal_f16 &&
		     bf[i] == golden[c].normal_bf16 && f64[i] == (double)u2f(golden[c].normal) &&
		     f2u(u32[i]) == golden[c].uniform && i32[i] == golden[c].ival &&
		     i64[i] == golden[c].ival && if32[i] == (float)golden[c].ival &&
		     f2u(ka_gen_float(key, (uint64_t)i, KA_GEN_NORMAL, 0.5f, 2.0f)) ==
			     golden[c].normal;
		if (!ok)
			printf("# case %zu: normal %08x f16 %04x bf16 %04x uniform %08x int %d\n",
			       c, f2u(f32[i]), h[i], bf[i], f2u(u32[i]), i32[i]);
	}
	free(f32);
	free(u32);
	free(h);
	free(bf);
	free(f64);
	free(i32);
	free(i64);
	free(if32);
	CHECK(ok);
}

static void test_gen_statistics(void)
{
	/* A weak sanity check on top of the literals: 1e6 normal(0.5, 2) draws
	 * have mean 0.5 +- 0.01, std 2 +- 0.01, and |z| <= 6 by construction;
	 * uniform[-1, 3) stays in range; int[-5, 9] hits both ends. */
	enum { N = 1000000 };
	float *v = xmalloc(N * 4);
	struct gen_params p;
	struct ka_dist dn = {KA_DIST_NORMAL, 0.5, 2.0}, du = {KA_DIST_UNIFORM, -1.0, 3.0};
	gen_params_of(&dn, &p, NULL);
	gen_fill(v, KA_DTYPE_FP32, N, 7, &p);
	double s = 0, s2 = 0, mx = 0;
	for (int i = 0; i < N; i++) {
		s += v[i];
		s2 += (double)v[i] * v[i];
		mx = fmax(mx, fabs(v[i] - 0.5));
	}
	double mean = s / N, sd = sqrt(s2 / N - mean * mean);
	int ok_n = fabs(mean - 0.5) < 0.01 && fabs(sd - 2.0) < 0.01 && mx <= 12.0;
	gen_params_of(&du, &p, NULL);
	gen_fill(v, KA_DTYPE_FP32, N, 7, &p);
	float lo = 1e9f, hi = -1e9f;
	for (int i = 0; i < N; i++) {
		lo = fminf(lo, v[i]);
		hi = fmaxf(hi, v[i]);
	}
	int64_t *iv = xmalloc(N * 8);
	struct ka_dist di = {KA_DIST_INT, -5, 9};
	gen_params_of(&di, &p, NULL);
	gen_fill(iv, KA_DTYPE_INT64, N, 7, &p);
	int64_t ilo = 100, ihi = -100;
	for (int i = 0; i < N; i++) {
		ilo = iv[i] < ilo ? iv[i] : ilo;
		ihi = iv[i] > ihi ? iv[i] : ihi;
	}
	free(v);
	free(iv);
	CHECK(ok_n);
	CHECK(lo >= -1.0f && hi < 3.0f && lo < -0.99f && hi > 2.99f);
	CHECK(ilo == -5 && ihi == 9);
}

static void test_gen_f16_edges(void)
{
	static const struct {
		uint32_t f;
		uint16_t h;
	} cases[] = {
		{0x477fe000u, 0x7bffu}, /* 65504, the largest half */
		{0x477fefffu, 0x7bffu}, /* 65519.996 rounds down */
		{0x477ff000u, 0x7c00u}, /* 65520 rounds to infinity */
		{0x4e6e6b28u, 0x7c00u}, /* 1e9 */
		{0xff800000u, 0xfc00u}, /* -inf */
		{0x7fc00000u, 0x7e00u}, /* NaN */
		{0x7f800001u, 0x7e00u}, /* signalling NaN stays NaN */
		{0x33800000u, 0x0001u}, /* 2^-24, the smallest subnormal */
		{0x33000000u, 0x0000u}, /* 2^-25: tie, to even (0) */
		{0x33000001u, 0x0001u}, /* just above the tie */
		{0x33c00000u, 0x0002u}, /* 3*2^-25: tie, to even (2) */
		{0x33a00000u, 0x0001u}, /* 5*2^-26 */
		{0x38800000u, 0x0400u}, /* 2^-14, the smallest normal */
		{0x387fe000u, 0x0400u}, /* subnormal rounding up into the normals */
		{0x3f801000u, 0x3c00u}, /* 1 + 2^-11: tie, to even */
		{0x3f803000u, 0x3c02u}, /* 1 + 3*2^-11: tie, to even */
		{0x80000000u, 0x8000u}, /* -0 */
		{0xc77fe000u, 0xfbffu}, /* -65504 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint16_t got = ka_f32_to_f16(u2f(cases[i].f));
		if (got != cases[i].h)
			printf("# f16(%08x) = %04x, want %04x\n", cases[i].f, got, cases[i].h);
		CHECK_EQ_UINT(got, cases[i].h);
	}
	static const struct {
		uint16_t h;
		uint32_t f;
	} back[] = {
		{0x0001u, 0x33800000u}, {0x03ffu, 0x387fc000u}, {0x0400u, 0x38800000u},
		{0x3c00u, 0x3f800000u}, {0x7bffu, 0x477fe000u}, {0x7c00u, 0x7f800000u},
		{0xfc00u, 0xff800000u}, {0x8000u, 0x80000000u}, {0x8001u, 0xb3800000u},
	};
	for (size_t i = 0; i < sizeof back / sizeof *back; i++)
		CHECK_EQ_UINT(f2u(ka_f16_to_f32(back[i].h)), back[i].f);
	CHECK(isnan(ka_f16_to_f32(0x7e00u)));
}

static void test_gen_bf16_edges(void)
{
	static const struct {
		uint32_t f;
		uint16_t b;
	} cases[] = {
		{0x3f808000u, 0x3f80u}, /* 1 + 2^-8: tie, to even */
		{0x3f818000u, 0x3f82u}, /* 1 + 3*2^-8: tie, to even */
		{0x3f808001u, 0x3f81u}, /* above the tie */
		{0x7f7fffffu, 0x7f80u}, /* FLT_MAX rounds to infinity */
		{0x7f7f7fffu, 0x7f7fu}, /* largest that rounds down */
		{0x7fc00000u, 0x7fc0u}, /* NaN */
		{0x7f800001u, 0x7fc0u}, /* signalling NaN becomes quiet, not infinity */
		{0xff800000u, 0xff80u}, /* -inf */
		{0x00000001u, 0x0000u}, /* smallest float subnormal */
		{0x00018000u, 0x0002u}, /* subnormal tie, to even */
		{0xbf800000u, 0xbf80u}, /* -1 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		uint16_t got = ka_f32_to_bf16(u2f(cases[i].f));
		if (got != cases[i].b)
			printf("# bf16(%08x) = %04x, want %04x\n", cases[i].f, got, cases[i].b);
		CHECK_EQ_UINT(got, cases[i].b);
	}
	CHECK_EQ_UINT(f2u(ka_bf16_to_f32(0x3f81u)), 0x3f810000u);
}

static void test_gen_params(void)
{
	static const struct {
		struct ka_dist d;
		int kind;
		float a, b;
		int64_t lo;
		uint64_t range;
		const char *err;
	} cases[] = {
		{{KA_DIST_NORMAL, 0.1, 0.2}, KA_GEN_NORMAL, 0.1f, 0.2f, 0, 0, NULL},
		{{KA_DIST_UNIFORM, -1, 3}, KA_GEN_UNIFORM, -1.0f, 4.0f, 0, 0, NULL},
		/* w = 0.7f - 0.1f from the float-rounded ends, not (float)0.6 = 0x1.333334p-1 */
		{{KA_DIST_UNIFORM, 0.1, 0.7}, KA_GEN_UNIFORM, 0.1f, 0x1.333332p-1f, 0, 0, NULL},
		{{KA_DIST_INT, -5, 9}, KA_GEN_INT, 0, 0, -5, 15, NULL},
		{{KA_DIST_INT, 7, 7}, KA_GEN_INT, 0, 0, 7, 1, NULL},
		{{KA_DIST_INT, -9223372036854775808.0, 9223372036854774784.0},
		 KA_GEN_INT,
		 0,
		 0,
		 INT64_MIN,
		 18446744073709550593ULL,
		 NULL},
		{{KA_DIST_INT, 3, 2}, 0, 0, 0, 0, 0, "int: needs lo <= hi"},
		{{KA_DIST_INT, 0.5, 2},
		 0,
		 0,
		 0,
		 0,
		 0,
		 "int: lo and hi must be integers in int64 range"},
		{{KA_DIST_INT, 0, 9223372036854775808.0},
		 0,
		 0,
		 0,
		 0,
		 0,
		 "int: lo and hi must be integers in int64 range"},
		{{KA_DIST_NORMAL, 0, -1},
		 0,
		 0,
		 0,
		 0,
		 0,
		 "normal: mean and std must be finite, std >= 0"},
		{{KA_DIST_UNIFORM, 1, 1},
		 0,
		 0,
		 0,
		 0,
		 0,
		 "uniform: lo and hi must be finite, lo < hi"},
		{{KA_DIST_UNIFORM, -3e38, 3e38}, 0, 0, 0, 0, 0, "uniform: range overflows float"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct gen_params p;
		struct ka_err e = {{0}};
		int rc = gen_params_of(&cases[i].d, &p, &e);
		if (cases[i].err) {
			CHECK_EQ_INT(rc, -1);
			CHECK_STR(e.msg, cases[i].err);
			continue;
		}
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(p.kind, cases[i].kind);
		if (p.kind == KA_GEN_INT) {
			CHECK(p.lo == cases[i].lo && p.range == cases[i].range);
		} else {
			CHECK_EQ_UINT(f2u(p.a), f2u(cases[i].a));
			CHECK_EQ_UINT(f2u(p.b), f2u(cases[i].b));
		}
	}
}

static void test_gen_keys(void)
{
	struct ka_shape s = {{1031}}, s2 = {{1032}};
	CHECK_EQ_UINT(gen_tensor_key(1, 0xdeadbeef, &s, 0, 0), 0x819602a9b089ca19ULL);
	CHECK_EQ_UINT(gen_tensor_key(1, 0xdeadbeef, &s, 1, 0), 0x6449f8e2f7d36785ULL);
	CHECK_EQ_UINT(gen_tensor_key(2, 0xdeadbeef, &s, 0, 0), 0x3bc32f8cf3c8bdaeULL);
	CHECK_EQ_UINT(gen_tensor_key(1, 0xdeadbeef, &s, 0, 1), 0xef6602cfc2a2a5d6ULL);
	CHECK_EQ_UINT(gen_tensor_key(1, 0xdeadbeef, &s2, 0, 0), 0x2fe02310bfe77f4eULL);
}

/* ---- CPU against OpenCL (PoCL) -------------------------------------------- */

static char clc_path[4096];

static int find_clc(void)
{
	const char *b = getenv("BUILD");
	if (b && *b)
		snprintf(clc_path, sizeof clc_path, "%s/ka-clc", b);
	else
		snprintf(clc_path, sizeof clc_path, "%s/../ka-clc", util_exe_dir());
	return access(clc_path, X_OK) == 0 ? 0 : -1;
}

/* Run ka-clc gen; returns its exit status and the bytes in *out. */
static int clc_gen(const char *dtype, const char *kind, const struct gen_params *p, uint64_t key,
		   int64_t n, unsigned char *out, size_t bytes)
{
	char *cmd = xasprintf("'%s' gen --dtype %s --kind %s --a %a --b %a --lo %lld --range %llu "
			      "--key %llx --n %lld 2>/dev/null",
			      clc_path, dtype, kind, (double)p->a, (double)p->b, (long long)p->lo,
			      (unsigned long long)p->range, (unsigned long long)key, (long long)n);
	FILE *f = popen(cmd, "r");
	free(cmd);
	if (!f)
		return -1;
	size_t got = fread(out, 1, bytes, f);
	int extra = fgetc(f) != EOF;
	int st = pclose(f);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (rc == 0 && (got != bytes || extra))
		return -2;
	return rc;
}

static void test_gen_cpu_vs_pocl(void)
{
	enum { N = 100003 };
	static const char *const dtypes[] = {"fp32",  "fp16", "bf16", "fp64", "int32",
					     "int64", "bool", "int8", "uint8"};
	static const char *const kinds[] = {"normal", "uniform", "int"};
	static const struct ka_dist dists[] = {{KA_DIST_NORMAL, 0.25, 3.0},
					       {KA_DIST_UNIFORM, -2.0, 5.0},
					       {KA_DIST_INT, -1000, 1000}};
	unsigned char *cpu = xmalloc(N * 8), *dev = xmalloc(N * 8);
	int mismatches = 0, runs = 0;
	/* The one-byte dtypes take only int draws within their range. */
	static const struct ka_dist byte_dists[] = {
		{KA_DIST_INT, 0, 1}, {KA_DIST_INT, -128, 127}, {KA_DIST_INT, 0, 255}};
	for (int d = 0; d < 9; d++) {
		for (int k = d < 6 ? 0 : 2; k < 3; k++) {
			struct gen_params p;
			gen_params_of(d < 6 ? &dists[k] : &byte_dists[d - 6], &p, NULL);
			uint64_t key = util_mix64((uint64_t)(d * 3 + k) + 0x5eed);
			size_t bytes = (size_t)N * dtype_size((enum ka_dtype)d);
			gen_fill(cpu, (enum ka_dtype)d, N, key, &p);
			memset(dev, 0xA5, bytes);
			int rc = clc_gen(dtypes[d], kinds[k], &p, key, N, dev, bytes);
			runs++;
			if (rc != 0 || memcmp(cpu, dev, bytes) != 0) {
				printf("# %s/%s: ka-clc exit %d, %s\n", dtypes[d], kinds[k], rc,
				       rc ? "no data" : "bytes differ");
				mismatches++;
			}
		}
	}
	free(cpu);
	free(dev);
	CHECK_EQ_INT(runs, 21);
	CHECK_EQ_INT(mismatches, 0);
}

/* bool, int8 and uint8 store the int draw's value in one byte: the same
 * values as the int64 fill of the same key and range. */
static void test_gen_byte_dtypes(void)
{
	enum { N = 4099 };
	static const struct {
		enum ka_dtype dt;
		double lo, hi;
	} cases[] = {{KA_DTYPE_BOOL, 0, 1}, {KA_DTYPE_INT8, -128, 127}, {KA_DTYPE_UINT8, 0, 255}};
	int64_t wide[N];
	unsigned char narrow[N];
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		struct ka_dist d = {KA_DIST_INT, cases[c].lo, cases[c].hi};
		struct gen_params p;
		CHECK(gen_params_of(&d, &p, NULL) == 0);
		CHECK(dtype_size(cases[c].dt) == 1);
		gen_fill(wide, KA_DTYPE_INT64, N, 0x5eedULL + c, &p);
		gen_fill(narrow, cases[c].dt, N, 0x5eedULL + c, &p);
		int same = 1, lo_seen = 0, hi_seen = 0;
		for (int i = 0; i < N; i++) {
			int64_t v = cases[c].dt == KA_DTYPE_INT8 ? (int64_t)(int8_t)narrow[i]
								 : (int64_t)narrow[i];
			same &= v == wide[i];
			lo_seen |= v == (int64_t)cases[c].lo;
			hi_seen |= v == (int64_t)cases[c].hi;
		}
		CHECK(same);
		CHECK(lo_seen && hi_seen);
	}
}

int main(void)
{
	RUN(test_gen_golden_values);
	RUN(test_gen_byte_dtypes);
	RUN(test_gen_statistics);
	RUN(test_gen_f16_edges);
	RUN(test_gen_bf16_edges);
	RUN(test_gen_params);
	RUN(test_gen_keys);
	if (find_clc() != 0) {
		printf("SKIP test_gen_cpu_vs_pocl: no ka-clc at %s (OpenCL not built)\n", clc_path);
	} else {
		/* Exit 3 means no OpenCL platform: skip rather than fail. */
		struct gen_params p = {.kind = KA_GEN_UNIFORM, .a = 0, .b = 1};
		unsigned char b[4];
		int rc = clc_gen("fp32", "uniform", &p, 1, 1, b, 4);
		if (rc == 3)
			printf("SKIP test_gen_cpu_vs_pocl: no OpenCL platform\n");
		else
			RUN(test_gen_cpu_vs_pocl);
	}
	TEST_EXIT();
}
