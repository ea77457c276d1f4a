/* test_grade.c: the grader's pure parts (grade.h), with literal expected
 * results: how many items a sampled check draws, the comparison of outputs
 * with gold within atol + rtol (every dtype, sampled indices, NaN gold, the
 * cap on kept mismatches), the wrong-answer evidence text, the roofline
 * floor, the timing cross-checks and the call pipeline's modes. No runner,
 * no device. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "grade.h"
#include "ka_gen.h"
#include "ka_test.h"

/* Checks that print both values (named T_ to stay clear of ka_test.h). */
#define T_EQ_INT(a, b)                                                                             \
	do {                                                                                       \
		long long ta_ = (long long)(a), tb_ = (long long)(b);                              \
		if (ta_ != tb_) {                                                                  \
			printf("FAIL %s: %s:%d: %s == %lld, expected %s == %lld\n", ka_test_name,  \
			       __FILE__, __LINE__, #a, ta_, #b, tb_);                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define T_NEAR(a, b, tol)                                                                          \
	do {                                                                                       \
		double ta_ = (a), tb_ = (b);                                                       \
		if (!(fabs(ta_ - tb_) <= (tol))) {                                                 \
			printf("FAIL %s: %s:%d: %s == %.17g, expected %.17g (within %g)\n",        \
			       ka_test_name, __FILE__, __LINE__, #a, ta_, tb_, (double)(tol));     \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *ta_ = (a), *tb_ = (b);                                                 \
		if (!ta_ || !tb_ || strcmp(ta_, tb_)) {                                            \
			printf("FAIL %s: %s:%d: %s == \"%s\", expected \"%s\"\n", ka_test_name,    \
			       __FILE__, __LINE__, #a, ta_ ? ta_ : "(null)",                       \
			       tb_ ? tb_ : "(null)");                                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static void test_sample_count(void)
{
	static const struct {
		int sample_items;
		int n_outputs;
		int64_t per_item[2];
		int64_t want;
	} cases[] = {
		{256, 1, {1, 0}, 256},	   /* elementwise: the protocol's count */
		{256, 2, {3, 7}, 256},	   /* 7 * 256 elements fit in 64 Ki */
		{256, 1, {1024, 0}, 64},   /* rows: 65536 / 1024 */
		{256, 1, {1000, 0}, 65},   /* rounded down */
		{256, 1, {1 << 20, 0}, 8}, /* huge rows: never fewer than 8 */
		{4, 1, {1, 0}, 8},	   {100000, 1, {1, 0}, 65536},
		{256, 0, {0, 0}, 256}, /* no outputs: width 1 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		T_EQ_INT(grade_sample_count(cases[i].sample_items, cases[i].per_item,
					    cases[i].n_outputs),
			 cases[i].want);
}

/* The mismatch kept at position m: output, index, got, expected. */
static const json_t *mismatch(const struct grade_tally *tl, size_t m)
{
	return json_array_get(tl->mismatches, m);
}

static void test_compare_fp32(void)
{
	const float got[5] = {1.0f, 2.0f, 3.5f, NAN, INFINITY};
	const double gold[5] = {1.0, 2.0005, 3.0, 1.0, 1.0};
	struct grade_tally tl;
	grade_tally_init(&tl);
	grade_compare_output("y", KA_DTYPE_FP32, (const uint8_t *)got, 5, NULL, gold, 1e-3, 0, &tl);
	int64_t bad = tl.n_bad, nonfinite = tl.n_nonfinite;
	double max_err = tl.max_err;
	size_t kept = json_array_size(tl.mismatches);
	const json_t *m0 = mismatch(&tl, 0), *m1 = mismatch(&tl, 1);
	char out0[8];
	snprintf(out0, sizeof out0, "%s", json_string_value(json_object_get(m0, "output")));
	int64_t idx0 = json_integer_value(json_object_get(m0, "index"));
	double got0 = json_real_value(json_object_get(m0, "got"));
	double want0 = json_real_value(json_object_get(m0, "expected"));
	double got1 = json_real_value(json_object_get(m1, "got"));
	grade_tally_free(&tl);
	T_EQ_INT(bad, 3);
	T_EQ_INT(nonfinite, 2);
	T_NEAR(max_err, 0.5, 0);
	T_EQ_INT(kept, 3);
	T_EQ_STR(out0, "y");
	T_EQ_INT(idx0, 2);
	T_NEAR(got0, 3.5, 0);
	T_NEAR(want0, 3.0, 0);
	T_NEAR(got1, 0.0, 0); /* a non-finite value is kept as 0 */
}

static void test_compare_tolerance(void)
{
	/* |got - want| <= atol + rtol * |want|, boundary included. */
	static const struct {
		double got, want, atol, rtol;
		int bad;
	} cases[] = {
		{101.0, 100.0, 0, 0.01, 0},   {101.5, 100.0, 0, 0.01, 1},
		{-101.0, -100.0, 0, 0.01, 0}, {0.5, 0.0, 0.5, 0.1, 0},
		{0.5, 0.0, 0.25, 0.1, 1},     {1.0, 1.0, 0, 0, 0},
		{1.0, NAN, 1e9, 1e9, 1}, /* NaN gold never matches */
		{-0.0, 0.0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double got = cases[i].got, want = cases[i].want;
		struct grade_tally tl;
		grade_tally_init(&tl);
		grade_compare_output("y", KA_DTYPE_FP64, (const uint8_t *)&got, 1, NULL, &want,
				     cases[i].atol, cases[i].rtol, &tl);
		int64_t bad = tl.n_bad, nonfinite = tl.n_nonfinite;
		grade_tally_free(&tl);
		T_EQ_INT(bad, cases[i].bad);
		T_EQ_INT(nonfinite, 0);
	}
}

static void test_compare_dtypes(void)
{
	/* Each dtype's bytes decode to the value gold holds: one element off by
	 * a whole unit in each, at index 1. */
	uint16_t h[2] = {ka_f32_to_f16(1.5f), ka_f32_to_f16(-2.0f)};
	uint16_t bf[2] = {ka_f32_to_bf16(0.25f), ka_f32_to_bf16(8.0f)};
	double d[2] = {1e-300, 7.0};
	int32_t i32[2] = {-7, 40};
	int64_t i64[2] = {(int64_t)1 << 40, -3};
	const struct {
		int dtype;
		const void *got;
		double gold[2];
	} cases[] = {
		{KA_DTYPE_FP16, h, {1.5, -1.0}},
		{KA_DTYPE_BF16, bf, {0.25, 9.0}},
		{KA_DTYPE_FP64, d, {1e-300, 6.0}},
		{KA_DTYPE_INT32, i32, {-7.0, 41.0}},
		{KA_DTYPE_INT64, i64, {1099511627776.0, -2.0}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct grade_tally tl;
		grade_tally_init(&tl);
		grade_compare_output("y", cases[i].dtype, cases[i].got, 2, NULL, cases[i].gold,
				     1e-6, 0, &tl);
		int64_t bad = tl.n_bad;
		int64_t idx = json_integer_value(json_object_get(mismatch(&tl, 0), "index"));
		double err = tl.max_err;
		grade_tally_free(&tl);
		T_EQ_INT(cases[i].dtype * 100 + bad, cases[i].dtype * 100 + 1);
		T_EQ_INT(idx, 1);
		T_NEAR(err, 1.0, 0);
	}
}

/* An integer output whose gold no value of its dtype equals exactly (beyond
 * 2^53, fractional, out of range) is not compared: it is counted in
 * n_inexact, where an off-by-one int64 near 2^62 would otherwise match its
 * rounded gold. Within 2^53 the comparison is exact, and the evidence
 * prints every digit. */
static void test_compare_int_exactness(void)
{
	int64_t big = ((int64_t)1 << 62) + 1; /* rounds to 2^62 in fp64 */
	int64_t got[4] = {big, 300, 5, ((int64_t)1 << 52) + 1};
	double gold[4] = {(double)((int64_t)1 << 62), 300.5, 5.0, (double)((int64_t)1 << 52)};
	struct grade_tally tl;
	grade_tally_init(&tl);
	grade_compare_output("p", KA_DTYPE_INT64, (const uint8_t *)got, 4, NULL, gold, 0, 0, &tl);
	int64_t bad = tl.n_bad, inexact = tl.n_inexact, at = tl.inexact_index;
	char why[sizeof tl.inexact_why], detail[512];
	snprintf(why, sizeof why, "%s", tl.inexact_why);
	grade_tally_describe(&tl, 0, 0, 0, detail, sizeof detail);
	grade_tally_free(&tl);
	T_EQ_INT(inexact, 2); /* 2^62 and 300.5 */
	T_EQ_INT(at, 0);
	T_EQ_STR(why, "4.6116860184273879e+18 is beyond +-2^53, where the fp64 gold of an integer "
		      "output is not exact");
	T_EQ_INT(bad, 1); /* 2^52 + 1 against 2^52 */
	T_EQ_STR(detail, "1 of the checked elements are outside atol 0 + rtol 0 (0 non-finite); "
			 "p[3] got 4503599627370497 want 4503599627370496; ");

	uint8_t u8[2] = {255, 0};
	double g8[2] = {256.0, 0.0};
	grade_tally_init(&tl);
	grade_compare_output("q", KA_DTYPE_UINT8, u8, 2, NULL, g8, 0, 0, &tl);
	snprintf(why, sizeof why, "%s", tl.inexact_why);
	inexact = tl.n_inexact;
	grade_tally_free(&tl);
	T_EQ_INT(inexact, 1);
	T_EQ_STR(why, "256 is outside uint8's range [0, 255]");
}

static void test_compare_sampled(void)
{
	/* Sampled: element q is gold[idx[q]]; the kept index is the gold one. */
	double gold[10];
	for (int i = 0; i < 10; i++)
		gold[i] = i;
	const float got[3] = {2.0f, 5.0f, 8.5f};
	const int64_t idx[3] = {2, 5, 9};
	struct grade_tally tl;
	grade_tally_init(&tl);
	grade_compare_output("out", KA_DTYPE_FP32, (const uint8_t *)got, 3, idx, gold, 0.1, 0, &tl);
	int64_t bad = tl.n_bad;
	int64_t at = json_integer_value(json_object_get(mismatch(&tl, 0), "index"));
	double want = json_real_value(json_object_get(mismatch(&tl, 0), "expected"));
	grade_tally_free(&tl);
	T_EQ_INT(bad, 1);
	T_EQ_INT(at, 9);
	T_NEAR(want, 9.0, 0);
}

static void test_compare_cap_and_accumulate(void)
{
	/* Two outputs into one tally: counts add up, at most 10 kept. */
	float got[25];
	double gold[25];
	for (int i = 0; i < 25; i++) {
		got[i] = (float)i + 1;
		gold[i] = i;
	}
	struct grade_tally tl;
	grade_tally_init(&tl);
	grade_compare_output("a", KA_DTYPE_FP32, (const uint8_t *)got, 6, NULL, gold, 0, 0, &tl);
	grade_compare_output("b", KA_DTYPE_FP32, (const uint8_t *)got, 25, NULL, gold, 0, 0, &tl);
	int64_t bad = tl.n_bad;
	size_t kept = json_array_size(tl.mismatches);
	char last[8];
	snprintf(last, sizeof last, "%s",
		 json_string_value(json_object_get(mismatch(&tl, 9), "output")));
	grade_tally_free(&tl);
	T_EQ_INT(bad, 31);
	T_EQ_INT(kept, GRADE_MAX_MISMATCH);
	T_EQ_STR(last, "b");
}

static void test_describe(void)
{
	const float got[5] = {1.0f, 2.0f, 3.5f, NAN, INFINITY};
	const double gold[5] = {1.0, 2.0, 3.0, 1.0, 1.0};
	char detail[1024];
	struct grade_tally tl;
	grade_tally_init(&tl);
	grade_compare_output("y", KA_DTYPE_FP32, (const uint8_t *)got, 5, NULL, gold, 1e-3, 0, &tl);
	enum verdict v = grade_tally_describe(&tl, 1e-3, 0, 0, detail, sizeof detail);
	char small[16];
	grade_tally_describe(&tl, 1e-3, 0, 0, small, sizeof small);
	grade_tally_free(&tl);
	T_EQ_STR(verdict_name(v), "nonfinite");
	T_EQ_STR(detail, "3 of the checked elements are outside atol 0.001 + rtol 0 (2 "
			 "non-finite); y[2] got 3.5 want 3; y[3] got 0 want 1; y[4] got 0 want "
			 "1; ");
	T_EQ_STR(small, "3 of the checke"); /* truncated to the buffer */

	const float got2[2] = {0.25f, 1.0f};
	const double gold2[2] = {0.125, 1.0};
	grade_tally_init(&tl);
	grade_compare_output("z", KA_DTYPE_FP32, (const uint8_t *)got2, 2, NULL, gold2, 0, 0.5,
			     &tl);
	v = grade_tally_describe(&tl, 0, 0.5, 1, detail, sizeof detail);
	grade_tally_free(&tl);
	T_EQ_STR(verdict_name(v), "wrong_answer");
	T_EQ_STR(detail, "1 of the checked elements are outside atol 0 + rtol 0.5 (sampled items) "
			 "(0 non-finite); z[0] got 0.25 want 0.125; ");
}

static void test_roofline(void)
{
	T_NEAR(grade_roofline_s(1000000000000, 0, 1e12, 1e14), 1.0, 0);
	T_NEAR(grade_roofline_s(0, 100000000000000, 1e12, 1e14), 1.0, 0);
	T_NEAR(grade_roofline_s(1000000000, 4000000000000, 1e12, 1e14), 0.04, 1e-15);
	T_NEAR(grade_roofline_s(0, 0, 1e12, 1e14), 0.0, 0);
}

static void test_timing_check(void)
{
	static const struct {
		double event_s, wall_s, median_us, floor_s, factor;
		const char *verdict, *why;
	} cases[] = {
		{1.0, 1.0, 10, 1e-6, 1e-3, "ok", ""},
		{1.00005, 1.0, 10, 1e-6, 1e-3, "ok", ""}, /* within the 0.01% slack */
		{1.0002, 1.0, 10, 1e-6, 1e-3, "implausible_time",
		 "device time 1.000200 s exceeds the wall-clock time 1.000000 s"},
		{0.5, 1.0, 0.5, 1e-3, 1e-3, "implausible_time",
		 "median 0.500 us is below 0.001 x the physical minimum 1000.000 us"},
		{0.5, 1.0, 1.0, 1e-3, 1e-3, "ok", ""}, /* exactly at the floor */
		{2.0, 1.0, 0.5, 1e-3, 1e-3, "implausible_time",
		 "device time 2.000000 s exceeds the wall-clock time 1.000000 s"}, /* wall first */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char why[256] = "junk";
		enum verdict v =
			grade_timing_check(cases[i].event_s, cases[i].wall_s, cases[i].median_us,
					   cases[i].floor_s, cases[i].factor, why, sizeof why);
		T_EQ_STR(verdict_name(v), cases[i].verdict);
		T_EQ_STR(why, cases[i].why);
	}
}

static void test_verdict_table(void)
{
	/* One table in enum order; names and parse agree both ways. */
	T_EQ_STR(verdict_table[VERDICT_OK], "ok");
	T_EQ_STR(verdict_table[VERDICT_IMPLAUSIBLE_TIME], "implausible_time");
	T_EQ_INT(verdict_table[VERDICT_COUNT] == NULL, 1);
	for (int v = 0; v < VERDICT_COUNT; v++) {
		T_EQ_INT(verdict_table[v] != NULL, 1);
		T_EQ_INT(verdict_parse(verdict_name((enum verdict)v)), v);
	}
	T_EQ_STR(verdict_name(VERDICT_COUNT), "unknown");
	T_EQ_INT(verdict_parse("almost_ok"), -1);
	T_EQ_INT(verdict_parse(NULL), -1);
}

static void test_pipeline_modes(void)
{
	/* The three modes by name, the default auto, anything else refused
	 * (the value is left as it was). */
	struct grade_protocol p;
	grade_protocol_default(&p);
	T_EQ_INT(p.pipeline, GRADE_PIPELINE_AUTO);
	int m = -7;
	T_EQ_INT(grade_pipeline_parse("on", &m), 0);
	T_EQ_INT(m, GRADE_PIPELINE_ON);
	T_EQ_INT(grade_pipeline_parse("off", &m), 0);
	T_EQ_INT(m, GRADE_PIPELINE_OFF);
	T_EQ_INT(grade_pipeline_parse("auto", &m), 0);
	T_EQ_INT(m, GRADE_PIPELINE_AUTO);
	T_EQ_INT(grade_pipeline_parse("On", &m), -1);
	T_EQ_INT(grade_pipeline_parse("", &m), -1);
	T_EQ_INT(grade_pipeline_parse(NULL, &m), -1);
	T_EQ_INT(m, GRADE_PIPELINE_AUTO);
	json_t *j = grade_protocol_json(&p);
	T_EQ_STR(json_string_value(json_object_get(j, "pipeline")), "auto");
	json_decref(j);
}

int main(void)
{
	RUN(test_sample_count);
	RUN(test_compare_fp32);
	RUN(test_compare_tolerance);
	RUN(test_compare_dtypes);
	RUN(test_compare_int_exactness);
	RUN(test_compare_sampled);
	RUN(test_compare_cap_and_accumulate);
	RUN(test_describe);
	RUN(test_roofline);
	RUN(test_timing_check);
	RUN(test_verdict_table);
	RUN(test_pipeline_modes);
	TEST_EXIT();
}
