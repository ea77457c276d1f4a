/* test_ka_test.c: the harness's own checks (ka_test.h). Each check is run
 * once where it holds (nothing printed, the test not failed) and once where
 * it does not, with stdout caught in a temporary file: the FAIL line must
 * name the expression and both values. */
#include "ka_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Runs fn with stdout going to a temporary file; returns what it printed
 * (caller frees; NULL if the file could not be made) and whether it failed. */
static char *caught(void (*fn)(void), int *failed)
{
	FILE *f = tmpfile();
	if (!f)
		return NULL;
	fflush(stdout);
	int saved = dup(1);
	dup2(fileno(f), 1);
	int was = ka_test_failed;
	ka_test_failed = 0;
	fn();
	*failed = ka_test_failed;
	ka_test_failed = was;
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	off_t n = lseek(fileno(f), 0, SEEK_END);
	char *s = calloc(1, n > 0 ? (size_t)n + 1 : 1);
	if (s && n > 0) {
		rewind(f);
		size_t got = fread(s, 1, (size_t)n, f);
		s[got] = 0;
	}
	fclose(f);
	return s;
}

static int64_t seven = 7;
static const char *const word = "kernel";
static double third = 1.0 / 3.0;

static void holds(void)
{
	CHECK(seven > 0);
	CHECK_EQ_INT(seven, 7);
	CHECK_EQ_INT(-1, -1LL);
	CHECK_EQ_UINT(UINT64_MAX, 0xffffffffffffffffULL);
	CHECK_EQ_STR(word, "kernel");
	CHECK_STR(word, "kernel");
	CHECK_NEAR(third, 0.3333, 1e-4);
	CHECK_NEAR(INFINITY, INFINITY, 0);
}
static void fails_check(void)
{
	CHECK(seven < 0);
}
static void fails_int(void)
{
	CHECK_EQ_INT(seven + 1, 9);
}
static void fails_uint(void)
{
	CHECK_EQ_UINT(seven, 0x10u);
}
static void fails_str(void)
{
	CHECK_EQ_STR(word, "kernels");
}
static void fails_str_null(void)
{
	CHECK_EQ_STR(NULL, word);
}
static void fails_near(void)
{
	CHECK_NEAR(third, 0.5, 0.1);
}
static void fails_nan(void)
{
	CHECK_NEAR(NAN, NAN, 1e300);
}
static void fails_then_stops(void)
{
	CHECK_EQ_INT(1, 2);
	printf("not reached\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
	const char *want; /* the end of the FAIL line; NULL: passes silently */
} cases[] = {
	{"holds", holds, NULL},
	{"check", fails_check, ": seven < 0\n"},
	{"int", fails_int, ": seven + 1 == 9: got 8, want 9\n"},
	{"uint", fails_uint, ": seven == 0x10u: got 7 (0x7), want 16 (0x10)\n"},
	{"str", fails_str, ": word == \"kernels\": got \"kernel\", want \"kernels\"\n"},
	{"str_null", fails_str_null, ": NULL == word: got \"(null)\", want \"kernel\"\n"},
	{"near", fails_near, ": third ~= 0.5: got 0.33333333333333331, want 0.5 (tolerance 0.1)\n"},
	{"nan", fails_nan, ": NAN ~= NAN: got nan, want nan (tolerance 1e+300)\n"},
	{"stops", fails_then_stops, ": 1 == 2: got 1, want 2\n"},
};

static void test_checks(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int failed = -1;
		char *out = caught(cases[i].fn, &failed);
		CHECK(out != NULL);
		int ok;
		if (!cases[i].want) {
			ok = failed == 0 && out[0] == 0;
		} else {
			/* "FAIL test_checks: tests/unit/test_ka_test.c:<line><want>" */
			size_t lo = strlen(out), lw = strlen(cases[i].want);
			ok = failed == 1 && !strncmp(out, "FAIL test_checks: ", 18) &&
			     strstr(out, "test_ka_test.c:") && lo >= lw &&
			     !strcmp(out + lo - lw, cases[i].want);
		}
		if (!ok)
			printf("# case %s: failed=%d, printed '%s'\n", cases[i].name, failed, out);
		free(out);
		CHECK(ok);
	}
}

int main(void)
{
	RUN(test_checks);
	TEST_EXIT();
}
