/* test_expr.c: shape expressions: values, parse errors with positions, and
 * evaluation errors (overflow, division by zero). */
#include <stdint.h>
#include <stdio.h>

#include "expr.h"
#include "ka_test.h"

static const char names[3][KA_NAMELEN] = {"M", "N", "K_dim"};
static const int64_t vals[3] = {128, 1031, 7};

static void test_expr_values(void)
{
	static const struct {
		const char *text;
		int64_t want;
	} cases[] = {
		{"42", 42},
		{"M", 128},
		{"M*N", 131968},
		{"  M * N  ", 131968},
		{"M+N*K_dim", 128 + 1031 * 7},
		{"(M+N)*K_dim", (128 + 1031) * 7},
		{"(N+255)/256", 5},
		{"N%8", 7},
		{"N-M-K_dim", 1031 - 128 - 7},
		{"-N+1", -1030},
		{"--M", 128},
		{"-(M-N)", 903},
		{"min(M,N)", 128},
		{"max(M, N)", 1031},
		{"min(max(M,K_dim),3)", 3},
		{"7/-2", -3},
		{"-7%3", -1},
		{"N/M*M", 1024},
		{"9223372036854775807", INT64_MAX},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ka_err e = {{0}};
		struct expr *x = expr_parse(cases[i].text, names, 3, &e);
		if (!x)
			printf("# %s: %s\n", cases[i].text, e.msg);
		CHECK(x != NULL);
		CHECK_STR(expr_text(x), cases[i].text);
		int64_t v = 0;
		int rc = expr_eval(x, vals, &v, &e);
		expr_free(x);
		if (rc || v != cases[i].want)
			printf("# %s = %lld, want %lld\n", cases[i].text, (long long)v,
			       (long long)cases[i].want);
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(v, cases[i].want);
	}
}

static void test_expr_parse_errors(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "empty expression"},
		{"   ", "empty expression"},
		{"M*", "expected an operand at end"},
		{"M+)", "unexpected ')' at 2"},
		{"(M+N", "expected ')' at end"},
		{"M N", "unexpected 'N' at 2"},
		{"Q*2", "unknown name 'Q' at 0"},
		{"M*Nn", "unknown name 'Nn' at 2"},
		{"2M", "unexpected 'M' at 1"},
		{"M ^ 2", "unexpected '^' at 2"},
		{"min(M)", "expected ',', found ')' at 5"},
		{"max(M,N", "expected ')' at end"},
		{"min", "expected '(' at end"},
		{"99999999999999999999", "integer too large at 0"},
		{"M*#", "unexpected '#' at 2"},
		{"M\x01", "unexpected character 0x01 at 1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ka_err e = {{0}};
		struct expr *x = expr_parse(cases[i].text, names, 3, &e);
		CHECK(x == NULL);
		CHECK_STR(e.msg, cases[i].msg);
	}
}

static void test_expr_eval_errors(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"N/(M-128)", "division by zero"},
		{"N%(M-M)", "division by zero"},
		{"N*N*N*N*N*N*N", "overflow"},
		{"9223372036854775807+1", "overflow"},
		{"-9223372036854775807-2", "overflow"},
		{"4611686018427387904*2", "overflow"},
		{"(-9223372036854775807-1)/-1", "overflow"},
		{"-(-9223372036854775807-1)", "overflow"},
		{"min(N/0, 1)", "division by zero"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ka_err e = {{0}};
		struct expr *x = expr_parse(cases[i].text, names, 3, &e);
		CHECK(x != NULL);
		int64_t v = 0;
		int rc = expr_eval(x, vals, &v, &e);
		expr_free(x);
		CHECK_EQ_INT(rc, -1);
		CHECK_STR(e.msg, cases[i].msg);
	}
}

static void test_expr_caps(void)
{
	/* Nesting is capped, so hostile text cannot exhaust the stack. */
	char deep[300];
	for (int i = 0; i < 100; i++)
		deep[i] = '(';
	deep[100] = '1';
	for (int i = 0; i < 100; i++)
		deep[101 + i] = ')';
	deep[201] = 0;
	struct ka_err e = {{0}};
	struct expr *x = expr_parse(deep, names, 3, &e);
	CHECK(x == NULL);
	CHECK_STR(e.msg, "nesting too deep '(' at 64");
	expr_free(NULL);
}

int main(void)
{
	RUN(test_expr_values);
	RUN(test_expr_parse_errors);
	RUN(test_expr_eval_errors);
	RUN(test_expr_caps);
	TEST_EXIT();
}
