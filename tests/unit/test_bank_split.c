/* test_bank_split.c: the pure parts of the bank tools, as tables with
 * literal expected results: split targets and assignment (bank_split.h),
 * splits.json round trip, normalised references and torch expressions
 * (bank_dup.h), and the tolerance error unit and mantissa rounding
 * (bank_tol.h). The commands themselves are tested in tests/e2e/bank_*.sh. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "bank_dup.h"
#include "bank_split.h"
#include "bank_tol.h"
#include "ka_test.h"

static void test_split_dev_target(void)
{
	static const struct {
		int n;
		double frac;
		int want;
	} cases[] = {{0, 0.8, 0}, {1, 0.8, 0}, {2, 0.8, 1},  {3, 0.8, 1},
		     {5, 0.8, 1}, {8, 0.8, 2}, {10, 0.8, 2}, {25, 0.8, 5},
		     {2, 0.1, 1}, {5, 0.5, 3}, {4, 0.99, 1}, {4, 0.01, 3}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(bank_split_dev_target(cases[i].n, cases[i].frac) == cases[i].want);
}

#define N8 8
static void fill8(struct bank_split_entry *e)
{
	static const char *const names[N8] = {"relu", "gelu", "silu", "mish",
					      "tanh", "gemm", "bmm",  "softmax"};
	static const char *const tiers[N8] = {"L1", "L1", "L1", "L1", "L1", "L2", "L2", "L3"};
	for (int i = 0; i < N8; i++) {
		snprintf(e[i].name, sizeof e[i].name, "%s", names[i]);
		snprintf(e[i].tier, sizeof e[i].tier, "%s", tiers[i]);
		e[i].split = BANK_SPLIT_NONE;
	}
}

static void test_split_assign_table(void)
{
	static const struct {
		uint64_t seed;
		double frac;
		const char *want; /* T/D per entry of fill8 */
	} cases[] = {{1, 0.8, "TDTTTDTT"}, {7, 0.5, "TDTDDTDT"}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct bank_split_entry e[N8];
		fill8(e);
		bank_split_assign(e, N8, cases[c].seed, cases[c].frac);
		char got[N8 + 1];
		for (int i = 0; i < N8; i++)
			got[i] = e[i].split == BANK_SPLIT_DEV ? 'D' : 'T';
		got[N8] = 0;
		CHECK_STR(got, cases[c].want);
	}
}

/* Tasks already assigned keep their split; a tier of two gets both. */
static void test_split_assign_stable(void)
{
	struct bank_split_entry e[N8];
	fill8(e);
	bank_split_assign(e, 5, 1, 0.8); /* the L1 tier alone first */
	enum bank_split_kind before[5];
	for (int i = 0; i < 5; i++)
		before[i] = e[i].split;
	bank_split_assign(e, N8, 1, 0.8); /* then L2 and L3 join */
	for (int i = 0; i < 5; i++)
		CHECK(e[i].split == before[i]);
	CHECK(e[5].split != e[6].split); /* L2: one train, one dev */
	CHECK(e[7].split == BANK_SPLIT_TRAIN);
	/* Reassigning does nothing: everything is assigned. */
	struct bank_split_entry f[N8];
	memcpy(f, e, sizeof f);
	bank_split_assign(f, N8, 99, 0.2);
	CHECK(!memcmp(f, e, sizeof f));
}

static void test_split_file_roundtrip(void)
{
	char dir[] = "/tmp/ka-test-split-XXXXXX";
	CHECK(mkdtemp(dir));
	struct bank_split_entry e[N8];
	fill8(e);
	bank_split_assign(e, N8, 1, 0.8);
	struct bank_split s = {1, 0.8, N8, e}, r = {0};
	struct ka_err err;
	CHECK(bank_split_read(dir, &r, &err) == 1); /* no file yet */
	CHECK(bank_split_write(dir, &s, &err) == 0);
	CHECK(bank_split_read(dir, &r, &err) == 0);
	CHECK(r.n == N8 && r.seed == 1 && r.train_frac == 0.8);
	CHECK_STR(r.tasks[0].name, "gelu"); /* sorted by tier, then name */
	CHECK(bank_split_of(&r, "gelu") == BANK_SPLIT_DEV);
	CHECK(bank_split_of(&r, "gemm") == BANK_SPLIT_DEV);
	CHECK(bank_split_of(&r, "relu") == BANK_SPLIT_TRAIN);
	CHECK(bank_split_of(&r, "nope") == BANK_SPLIT_NONE);
	bank_split_free(&r);
	/* A broken file names the field. */
	char *path = xasprintf("%s/splits.json", dir);
	const char *bad = "{\"schema\": \"ka-splits/1\", \"seed\": 1, \"train_frac\": 0.8, "
			  "\"tasks\": [{\"name\": \"a\", \"tier\": \"L1\", \"split\": \"test\"}]}";
	CHECK(util_write_file(path, bad, strlen(bad), &err) == 0);
	CHECK(bank_split_read(dir, &r, &err) == -1);
	CHECK(strstr(err.msg, "tasks[0]: split: expected \"train\" or \"dev\""));
	unlink(path);
	free(path);
	rmdir(dir);
}

static void test_dup_norm_c(void)
{
	static const struct {
		const char *src, *want;
	} cases[] = {
		{"int a = b; // x\n a += 1.5e-3f; /* c */ exp(a);",
		 "int $0 = $1 ; $0 + = 1.5e-3f ; exp ( $0 ) ;"},
		{"double   s=0;for(ka_i64 c=0;c<C;c++) s+=x[c];",
		 "double $0 = 0 ; for ( ka_i64 $1 = 0 ; $1 < $2 ; $1 + + ) $0 + = $3 [ $1 ] ;"},
		/* renaming alone gives the same text */
		{"double t = 0; for (ka_i64 j = 0; j < N; j++) t += v[j];",
		 "double $0 = 0 ; for ( ka_i64 $1 = 0 ; $1 < $2 ; $1 + + ) $0 + = $3 [ $1 ] ;"},
		{"#include \"ka_ref.h\"\nKA_FN void ref(ka_i64 item) { y[item] = tanh(1e-3); }",
		 "# include \"ka_ref.h\" KA_FN void ref ( ka_i64 $0 ) { $1 [ $0 ] = tanh ( 1e-3 ) "
		 "; }"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *s = bank_dup_norm_c(cases[i].src);
		CHECK_STR(s, cases[i].want);
		free(s);
	}
}

static void test_dup_norm_torch(void)
{
	const char *const names[] = {"R", "x", "w", "bias"};
	static const struct {
		const char *expr, *want;
	} cases[] = {
		{"torch.nn.functional.relu(w @ x)", "F . relu ( $0 @ $1 )"},
		{"F.relu(x@w)", "F . relu ( $0 @ $1 )"},
		{"nn.functional.gelu(x + bias, approximate='tanh')",
		 "F . gelu ( $0 + $1 , approximate = 'tanh' )"},
		{"torch.softmax(x, dim=-1)", "torch . softmax ( $0 , dim = - 1 )"},
		{"x.sum(dim=1) / R", "$0 . sum ( dim = 1 ) / $1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *s = bank_dup_norm_torch(cases[i].expr, names, 4);
		CHECK_STR(s, cases[i].want);
		free(s);
	}
}

static void test_tol_err(void)
{
	static const struct {
		double out, gold, atol, want;
	} cases[] = {
		{1.0, 1.0, 0, 0},	    {1.5, 1.0, 0, 0.5},	     {1.5, 1.0, 0.25, 0.25},
		{1.1, 1.0, 0.5, 0},	    {-3.0, -2.0, 0, 0.5},    {1e-7, 0, 1e-6, 0},
		{1e-5, 0, 1e-6, INFINITY},  {NAN, 1.0, 1, INFINITY}, {INFINITY, 1.0, 1, INFINITY},
		{INFINITY, INFINITY, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double got = bank_tol_err(cases[i].out, cases[i].gold, cases[i].atol);
		CHECK(got == cases[i].want || fabs(got - cases[i].want) < 1e-12);
	}
}

static void test_tol_round(void)
{
	static const struct {
		float x;
		int mbits;
		float want;
	} cases[] = {
		{1.0f, 10, 1.0f},
		{1.0f + 0x1p-11f, 10, 1.0f},			   /* half an ulp, even: down */
		{1.0f + 0x1p-10f + 0x1p-11f, 10, 1.0f + 0x1p-9f},  /* half, odd: up */
		{1.0f + 0x1p-11f + 0x1p-20f, 10, 1.0f + 0x1p-10f}, /* over half: up */
		{-1.0f - 0x1p-8f - 0x1p-9f, 7, -1.0f - 0x1p-7f},
		{3.14159265f, 7, 3.140625f},
		{3.14159265f, 10, 3.140625f},
		{3.14159265f, 23, 3.14159265f},
		{INFINITY, 7, INFINITY},
		{0.0f, 7, 0.0f},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(bank_tol_round_mantissa(cases[i].x, cases[i].mbits) == cases[i].want);
	CHECK(isnan(bank_tol_round_mantissa(NAN, 10)));
}

int main(void)
{
	RUN(test_split_dev_target);
	RUN(test_split_assign_table);
	RUN(test_split_assign_stable);
	RUN(test_split_file_roundtrip);
	RUN(test_dup_norm_c);
	RUN(test_dup_norm_torch);
	RUN(test_tol_err);
	RUN(test_tol_round);
	TEST_EXIT();
}
