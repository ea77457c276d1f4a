/* test_cli.c: the command-line value parsers of cli.c as tables of (input,
 * range, accepted or refused, value), and the one-line messages they print:
 * nan, inf, 1e999, -0, negatives, empty, trailing garbage, spaces and hex
 * get one answer from every parser and every command. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "grade.h"
#include "ka_test.h"
#include "util.h"

/* Checks that report every failing row (both values) and go on. */
#define T_EQ_LL(row, got, want)                                                                    \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		if (g_ != w_) {                                                                    \
			printf("FAIL %s: %s:%d: input '%s': %s = %lld, want %lld\n", ka_test_name, \
			       __FILE__, __LINE__, (row) ? (row) : "(null)", #got, g_, w_);        \
			ka_test_failed = 1;                                                        \
		}                                                                                  \
	} while (0)
#define T_EQ_U64(row, got, want)                                                                   \
	do {                                                                                       \
		unsigned long long g_ = (got), w_ = (want);                                        \
		if (g_ != w_) {                                                                    \
			printf("FAIL %s: %s:%d: input '%s': %s = %llu, want %llu\n", ka_test_name, \
			       __FILE__, __LINE__, (row) ? (row) : "(null)", #got, g_, w_);        \
			ka_test_failed = 1;                                                        \
		}                                                                                  \
	} while (0)
/* Doubles compare bit for bit, so -0 against +0 is a difference. */
#define T_EQ_DBL(row, got, want)                                                                   \
	do {                                                                                       \
		double g_ = (got), w_ = (want);                                                    \
		if (memcmp(&g_, &w_, sizeof g_)) {                                                 \
			printf("FAIL %s: %s:%d: input '%s': %s = %.17g, want %.17g\n",             \
			       ka_test_name, __FILE__, __LINE__, (row) ? (row) : "(null)", #got,   \
			       g_, w_);                                                            \
			ka_test_failed = 1;                                                        \
		}                                                                                  \
	} while (0)
#define T_EQ_STR(row, got, want)                                                                   \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (strcmp(g_, w_)) {                                                              \
			printf("FAIL %s: %s:%d: input '%s': %s = \"%s\", want \"%s\"\n",           \
			       ka_test_name, __FILE__, __LINE__, (row) ? (row) : "(null)", #got,   \
			       g_, w_);                                                            \
			ka_test_failed = 1;                                                        \
		}                                                                                  \
	} while (0)

/* What the code under test writes on stderr, caught in a temporary file. */
static FILE *cap_file;
static int cap_saved = -1;
static char cap_text[1024];

static void capture_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

/* Ends the capture; cap_text holds what was written, without a last '\n'. */
static const char *capture_end(void)
{
	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(cap_text, 1, sizeof cap_text - 1, cap_file);
	fclose(cap_file);
	cap_text[n] = 0;
	if (n && cap_text[n - 1] == '\n')
		cap_text[n - 1] = 0;
	return cap_text;
}

#define REJ 0x7fff /* a value a refused row must leave untouched */

static void test_parse_i64(void)
{
	static const struct {
		const char *s;
		int64_t lo, hi;
		int ok;
		int64_t want;
	} rows[] = {
		{"5", 1, 10, 1, 5},
		{"+7", 1, 10, 1, 7},
		{"010", 0, 100, 1, 10}, /* decimal, never octal */
		{"0", 0, 10, 1, 0},
		{"-0", 0, 10, 1, 0},
		{"-1", 0, 10, 0, 0},
		{"-1", -5, 5, 1, -1},
		{"1000", 1, 1000, 1, 1000},
		{"1001", 1, 1000, 0, 0},
		{"0", 1, 1000, 0, 0},
		{"", 0, 10, 0, 0},
		{NULL, 0, 10, 0, 0},
		{" 5", 0, 10, 0, 0},
		{"5 ", 0, 10, 0, 0},
		{"3x", 0, 10, 0, 0},
		{"0x10", 0, 100, 0, 0},
		{"1e3", 0, 10000, 0, 0},
		{"2.0", 0, 10, 0, 0},
		{"nan", 0, 10, 0, 0},
		{"inf", 0, 10, 0, 0},
		{"-", 0, 10, 0, 0},
		{"+", 0, 10, 0, 0},
		{"--1", -10, 10, 0, 0},
		{"+-1", -10, 10, 0, 0},
		{"9223372036854775807", INT64_MIN, INT64_MAX, 1, INT64_MAX},
		{"9223372036854775808", INT64_MIN, INT64_MAX, 0, 0},
		{"-9223372036854775808", INT64_MIN, INT64_MAX, 1, INT64_MIN},
		{"-9223372036854775809", INT64_MIN, INT64_MAX, 0, 0},
		{"99999999999999999999", INT64_MIN, INT64_MAX, 0, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t v = REJ;
		int rc = cli_parse_i64(rows[i].s, rows[i].lo, rows[i].hi, &v);
		T_EQ_LL(rows[i].s, rc, rows[i].ok ? 0 : -1);
		T_EQ_LL(rows[i].s, v, rows[i].ok ? rows[i].want : REJ);
	}
}

static void test_parse_u64(void)
{
	static const struct {
		const char *s;
		int ok;
		uint64_t want;
	} rows[] = {
		{"7", 1, 7},
		{"0", 1, 0},
		{"-0", 1, 0},
		{"+3", 1, 3},
		{"18446744073709551615", 1, UINT64_MAX},
		{"18446744073709551616", 0, 0},
		{"-1", 0, 0},
		{"0x10", 0, 0},
		{"010", 1, 10},
		{" 1", 0, 0},
		{"1 ", 0, 0},
		{"", 0, 0},
		{"3x", 0, 0},
		{"1e3", 0, 0},
		{"nan", 0, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		uint64_t v = REJ;
		int rc = cli_parse_u64(rows[i].s, &v);
		T_EQ_LL(rows[i].s, rc, rows[i].ok ? 0 : -1);
		T_EQ_U64(rows[i].s, v, rows[i].ok ? rows[i].want : REJ);
	}
}

static void test_parse_double(void)
{
	static const struct {
		const char *s;
		int ok;
		double want;
	} rows[] = {
		{"60", 1, 60},	    {"0.5", 1, 0.5},	 {".5", 1, 0.5},    {"5.", 1, 5},
		{"1e3", 1, 1000},   {"1E-3", 1, 1e-3},	 {"2.5e+1", 1, 25}, {"-2.5", 1, -2.5},
		{"+2", 1, 2},	    {"-0", 1, 0.0}, /* +0, not -0 */
		{"-0.0e5", 1, 0.0}, {"1e308", 1, 1e308}, {"nan", 0, 0},	    {"NaN", 0, 0},
		{"-nan", 0, 0},	    {"inf", 0, 0},	 {"-inf", 0, 0},    {"Infinity", 0, 0},
		{"1e999", 0, 0},    {"-1e999", 0, 0},	 {"1e-400", 0, 0},  {"", 0, 0},
		{NULL, 0, 0},	    {".", 0, 0},	 {"-", 0, 0},	    {"e5", 0, 0},
		{"1e", 0, 0},	    {"1e+", 0, 0},	 {"3x", 0, 0},	    {" 5", 0, 0},
		{"5 ", 0, 0},	    {"0x10", 0, 0},	 {"0x1p3", 0, 0},   {"1,5", 0, 0},
		{"1..5", 0, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		double v = REJ;
		int rc = cli_parse_double(rows[i].s, &v);
		T_EQ_LL(rows[i].s, rc, rows[i].ok ? 0 : -1);
		T_EQ_DBL(rows[i].s, v, rows[i].ok ? rows[i].want : REJ);
	}
}

/* cli_opt_double: the range, open or closed at lo, and the message. */
static void test_opt_double(void)
{
	static const struct {
		const char *s;
		double lo, hi;
		int lo_open;
		const char *msg; /* NULL: accepted */
		double want;
	} rows[] = {
		{"60", 0, 3600, 1, NULL, 60},
		{"3600", 0, 3600, 1, NULL, 3600},
		{"1e-3", 0, 3600, 1, NULL, 1e-3},
		{"0", 0, 3600, 1, "ka x: --f: '0' is not in (0, 3600] (see 'ka x --help')", 0},
		{"-0", 0, 3600, 1, "ka x: --f: '-0' is not in (0, 3600] (see 'ka x --help')", 0},
		{"3600.5", 0, 3600, 1,
		 "ka x: --f: '3600.5' is not in (0, 3600] (see 'ka x --help')", 0},
		{"nan", 0, 3600, 1, "ka x: --f: 'nan' is not in (0, 3600] (see 'ka x --help')", 0},
		{"inf", 0, 3600, 1, "ka x: --f: 'inf' is not in (0, 3600] (see 'ka x --help')", 0},
		{"1e999", 0, 3600, 1, "ka x: --f: '1e999' is not in (0, 3600] (see 'ka x --help')",
		 0},
		{"", 0, 3600, 1, "ka x: --f: '' is not in (0, 3600] (see 'ka x --help')", 0},
		{"0", 0, 2, 0, NULL, 0},
		{"-0", 0, 2, 0, NULL, 0.0},
		{"2", 0, 2, 0, NULL, 2},
		{"-0.1", 0, 2, 0, "ka x: --f: '-0.1' is not in [0, 2] (see 'ka x --help')", 0},
		{"1e300", 0, HUGE_VAL, 1, NULL, 1e300},
		{"0", 0, HUGE_VAL, 1, "ka x: --f: '0' is not a number > 0 (see 'ka x --help')", 0},
		{"inf", 0, HUGE_VAL, 1, "ka x: --f: 'inf' is not a number > 0 (see 'ka x --help')",
		 0},
		{"-1", 0, HUGE_VAL, 0, "ka x: --f: '-1' is not a number >= 0 (see 'ka x --help')",
		 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		double v = REJ;
		capture_begin();
		int rc = cli_opt_double("x", "--f", rows[i].s, rows[i].lo, rows[i].hi,
					rows[i].lo_open, &v);
		const char *msg = capture_end();
		T_EQ_LL(rows[i].s, rc, rows[i].msg ? KA_EXIT_USAGE : 0);
		T_EQ_DBL(rows[i].s, v, rows[i].msg ? REJ : rows[i].want);
		T_EQ_STR(rows[i].s, msg, rows[i].msg ? rows[i].msg : "");
	}
}

/* cli_opt_int and cli_opt_u64: the value or exactly one message line. */
static void test_opt_int(void)
{
	static const struct {
		const char *s;
		int64_t lo, hi;
		const char *msg;
		int64_t want;
	} rows[] = {
		{"5", 1, 1000, NULL, 5},
		{"0", 1, 1000, "ka x: --k: '0' is not in 1..1000 (see 'ka x --help')", 0},
		{"-3", 1, 1000, "ka x: --k: '-3' is not in 1..1000 (see 'ka x --help')", 0},
		{"nan", 1, 1000, "ka x: --k: 'nan' is not in 1..1000 (see 'ka x --help')", 0},
		{"1e3", 1, 1000, "ka x: --k: '1e3' is not in 1..1000 (see 'ka x --help')", 0},
		{"", 1, 1000, "ka x: --k: '' is not in 1..1000 (see 'ka x --help')", 0},
		{"-0", 0, 1000, NULL, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t v = REJ;
		capture_begin();
		int rc = cli_opt_int("x", "--k", rows[i].s, rows[i].lo, rows[i].hi, &v);
		const char *msg = capture_end();
		T_EQ_LL(rows[i].s, rc, rows[i].msg ? KA_EXIT_USAGE : 0);
		T_EQ_LL(rows[i].s, v, rows[i].msg ? REJ : rows[i].want);
		T_EQ_STR(rows[i].s, msg, rows[i].msg ? rows[i].msg : "");
	}
	uint64_t u = REJ;
	capture_begin();
	int rc = cli_opt_u64("gold", "--seed", "-1", &u);
	const char *msg = capture_end();
	T_EQ_LL("-1", rc, KA_EXIT_USAGE);
	T_EQ_U64("-1", u, REJ);
	T_EQ_STR("-1", msg,
		 "ka gold: --seed: '-1' is not an unsigned 64-bit integer (see 'ka gold --help')");
	capture_begin();
	rc = cli_opt_u64("gold", "--seed", "18446744073709551615", &u);
	msg = capture_end();
	T_EQ_LL("18446744073709551615", rc, 0);
	T_EQ_U64("18446744073709551615", u, UINT64_MAX);
	T_EQ_STR("18446744073709551615", msg, "");
}

static int proto_same(const struct grade_protocol *a, const struct grade_protocol *b)
{
	return a->max_seconds == b->max_seconds && a->min_samples == b->min_samples &&
	       a->max_samples == b->max_samples && a->timing == b->timing;
}

/* The timing options: one answer whichever command asks ("grade" and the
 * tracks' "--track"); the message differs only in the command's name. */
static void test_protocol_options(void)
{
	static const struct {
		int code;
		const char *s;
		const char *msg; /* after "ka <cmd>: "; NULL: accepted */
	} rows[] = {
		{CLI_OPT_MAX_SECONDS, "30", NULL},
		{CLI_OPT_MAX_SECONDS, "nan", "--max-seconds: 'nan' is not in (0, 3600]"},
		{CLI_OPT_MAX_SECONDS, "inf", "--max-seconds: 'inf' is not in (0, 3600]"},
		{CLI_OPT_MAX_SECONDS, "1e999", "--max-seconds: '1e999' is not in (0, 3600]"},
		{CLI_OPT_MAX_SECONDS, "-5", "--max-seconds: '-5' is not in (0, 3600]"},
		{CLI_OPT_MAX_SECONDS, "", "--max-seconds: '' is not in (0, 3600]"},
		{CLI_OPT_MAX_SECONDS, "0", "--max-seconds: '0' is not in (0, 3600]"},
		{CLI_OPT_MIN_SAMPLES, "25", NULL},
		{CLI_OPT_MIN_SAMPLES, "0", "--min-samples: '0' is not in 1..500"},
		{CLI_OPT_MIN_SAMPLES, "nan", "--min-samples: 'nan' is not in 1..500"},
		{CLI_OPT_MIN_SAMPLES, "2.5", "--min-samples: '2.5' is not in 1..500"},
		{CLI_OPT_MAX_SAMPLES, "400", NULL},
		{CLI_OPT_MAX_SAMPLES, "100001", "--max-samples: '100001' is not in 1..100000"},
		{CLI_OPT_MAX_SAMPLES, "-1", "--max-samples: '-1' is not in 1..100000"},
		{CLI_OPT_NO_TIMING, NULL, NULL},
	};
	static const char *const cmds[] = {"grade", "--track"};
	for (size_t c = 0; c < 2; c++) {
		struct grade_protocol p, d;
		grade_protocol_default(&p);
		grade_protocol_default(&d);
		for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
			struct grade_protocol before = p;
			capture_begin();
			int rc = cli_protocol_option(cmds[c], rows[i].code, rows[i].s, &p);
			const char *msg = capture_end();
			char want[512] = "";
			if (rows[i].msg)
				snprintf(want, sizeof want, "ka %s: %s (see 'ka %s --help')",
					 cmds[c], rows[i].msg, cmds[c]);
			T_EQ_LL(rows[i].s, rc, rows[i].msg ? KA_EXIT_USAGE : 0);
			T_EQ_STR(rows[i].s, msg, want);
			if (rows[i].msg) /* a refused value changes nothing */
				T_EQ_LL(rows[i].s, proto_same(&before, &p), 1);
		}
		T_EQ_DBL(cmds[c], p.max_seconds, 30);
		T_EQ_LL(cmds[c], p.min_samples, 25);
		T_EQ_LL(cmds[c], p.max_samples, 400);
		T_EQ_LL(cmds[c], p.timing, 0);
		T_EQ_DBL(cmds[c], p.ci_target, d.ci_target); /* the rest untouched */
		T_EQ_LL(cmds[c], cli_protocol_check(cmds[c], &p), 0);
		p.min_samples = 401;
		capture_begin();
		int rc = cli_protocol_check(cmds[c], &p);
		const char *msg = capture_end();
		char want[256];
		snprintf(want, sizeof want,
			 "ka %s: --min-samples is above --max-samples (see 'ka %s --help')",
			 cmds[c], cmds[c]);
		T_EQ_LL(cmds[c], rc, KA_EXIT_USAGE);
		T_EQ_STR(cmds[c], msg, want);
	}
}

/* The report helpers: one line each, the right exit code, NULL cmd is "ka". */
static void test_reports(void)
{
	capture_begin();
	int rc = cli_usage_error(NULL, "missing command");
	const char *msg = capture_end();
	T_EQ_LL("usage NULL", rc, KA_EXIT_USAGE);
	T_EQ_STR("usage NULL", msg, "ka: missing command (see 'ka --help')");
	capture_begin();
	rc = cli_bad_input("gold", "%s: %d", "x", 3);
	msg = capture_end();
	T_EQ_LL("bad input", rc, KA_EXIT_USAGE);
	T_EQ_STR("bad input", msg, "ka gold: x: 3");
	capture_begin();
	rc = cli_fail("grade", "grader failure: %s", "boom");
	msg = capture_end();
	T_EQ_LL("fail", rc, KA_EXIT_FAIL);
	T_EQ_STR("fail", msg, "ka grade: grader failure: boom");
}

int main(void)
{
	RUN(test_parse_i64);
	RUN(test_parse_u64);
	RUN(test_parse_double);
	RUN(test_opt_double);
	RUN(test_opt_int);
	RUN(test_protocol_options);
	RUN(test_reports);
	TEST_EXIT();
}
