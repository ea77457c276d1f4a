/* test_metrics.c: metrics.h with literal expected values: the score s, the
 * unbiased pass@k, every aggregate on a small hand-computed set of tasks,
 * and the RSI verdict rule. */
#include <math.h>

#include "ka_test.h"
#include "metrics.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * (1 + fabs(b));
}
#define NEAR(a, b) near((a), (b))

static void test_score(void)
{
	static const struct {
		int ok;
		double med, lo, want;
	} t[] = {
		{0, NAN, NAN, 0},    /* not ok */
		{0, 3.0, 2.5, 0},    /* not ok, whatever the timing says */
		{1, NAN, NAN, 0.5},  /* ok, no baseline */
		{1, 1.2, 0.9, 0.5},  /* ok, CI reaches 1: not fast */
		{1, 1.05, 1.0, 0.5}, /* lo must be above 1 */
		{1, 2.0, 1.1, 0.75}, /* 0.5 + 0.5 * log2(2) / 2 */
		{1, 1.4142135623730951, 1.01, 0.625},
		{1, 4.0, 3.5, 1.0}, /* 4x saturates */
		{1, 16.0, 12.0, 1.0},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		CHECK(NEAR(metrics_score(t[i].ok, t[i].med, t[i].lo), t[i].want));
}

static void test_pass_at_k(void)
{
	static const struct {
		int n, c, k;
		double want;
	} t[] = {
		{5, 0, 1, 0},	{5, 5, 1, 1},
		{5, 1, 1, 0.2}, {5, 2, 2, 0.7},
		{5, 1, 5, 1},	{3, 1, 5, 1}, /* n < k: pass@n */
		{3, 0, 5, 0},	{10, 3, 5, 1 - 21.0 / 252.0},
		{0, 0, 1, 0},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		CHECK(NEAR(metrics_pass_at_k(t[i].n, t[i].c, t[i].k), t[i].want));
}

/* T1 (L1): ok 2.0x [1.5, 2.5] (compiled 1.2x [0.9, 1.4]), and a failure.
 * T2 (L2): ok 0.8x [0.7, 0.9], ok 4.0x [3.5, 4.5] (compiled 2.5x [2.2, 2.8]). */
static const struct metrics_sample s1[] = {
	{1, {1, 2.0, 1.5, 2.5}, {1, 1.2, 0.9, 1.4}},
	{0, {0, 0, 0, 0}, {0, 0, 0, 0}},
};
static const struct metrics_sample s2[] = {
	{1, {1, 0.8, 0.7, 0.9}, {0, 0, 0, 0}},
	{1, {1, 4.0, 3.5, 4.5}, {1, 2.5, 2.2, 2.8}},
};
static const struct metrics_task tasks[] = {{"t1", "L1", s1, 2}, {"t2", "L2", s2, 2}};

static void test_aggregate(void)
{
	struct metrics_agg a;
	metrics_aggregate(tasks, 2, NULL, 2, &a);
	CHECK(a.n_tasks == 2 && a.n_samples == 4);
	CHECK(a.correct.defined && NEAR(a.correct.value, 0.75));
	CHECK(NEAR(a.fast.value, 0.5));
	CHECK(NEAR(a.fast_compiled.value, 0.25));
	CHECK(NEAR(a.fast_p[0].value, a.fast.value));
	CHECK(NEAR(a.fast_p[1].value, 0.25)); /* lo 1.5 is not above 1.5 */
	CHECK(NEAR(a.fast_p[2].value, 0.25));
	CHECK(NEAR(a.fast_p_compiled[1].value, 0.25));
	CHECK(NEAR(a.fast_p_compiled[2].value, 0.25));
	CHECK(NEAR(a.mean_c.value, (0.375 + 0.75) / 2));
	CHECK(NEAR(a.pass_at_k.value, 1));
	CHECK(NEAR(a.geomean_speedup.value, sqrt(2 * sqrt(3.2))));
	CHECK(NEAR(a.geomean_speedup_compiled.value, sqrt(3.0)));
	/* The CI over two tasks spans the two per-task values. */
	CHECK(a.correct.lo >= 0.5 && a.correct.hi <= 1 && a.correct.lo < 0.75);
	CHECK(NEAR(a.mean_c.lo, 0.375) || a.mean_c.lo > 0.375);

	/* Reproducible: the same input gives the same CIs. */
	struct metrics_agg b;
	metrics_aggregate(tasks, 2, NULL, 2, &b);
	CHECK(a.mean_c.lo == b.mean_c.lo && a.mean_c.hi == b.mean_c.hi);

	/* Tier filter: one task, no spread. */
	metrics_aggregate(tasks, 2, "L1", 2, &a);
	CHECK(a.n_tasks == 1 && a.n_samples == 2);
	CHECK(a.correct.value == 0.5 && a.correct.lo == 0.5 && a.correct.hi == 0.5);
	CHECK(NEAR(a.geomean_speedup.value, 2.0));

	/* Nothing in the tier: undefined figures. */
	metrics_aggregate(tasks, 2, "L3", 2, &a);
	CHECK(a.n_tasks == 0 && !a.correct.defined && !a.geomean_speedup.defined);

	/* No correct sample: geomean undefined, rates zero. */
	static const struct metrics_sample bad[] = {{0, {0, 0, 0, 0}, {0, 0, 0, 0}}};
	static const struct metrics_task tb[] = {{"x", "L3", bad, 1}};
	metrics_aggregate(tb, 1, NULL, 5, &a);
	CHECK(a.correct.defined && a.correct.value == 0 && !a.geomean_speedup.defined);
	CHECK(a.mean_c.value == 0 && a.pass_at_k.value == 0);
}

static void test_verdict(void)
{
	static const struct {
		double lo, hi;
		int beats;
		enum metrics_verdict want;
	} t[] = {
		{0.01, 0.05, 1, METRICS_VERDICT_POSITIVE},
		{0.01, 0.05, 0, METRICS_VERDICT_NO_SIGNAL}, /* does not beat round0 */
		{-0.01, 0.02, 1, METRICS_VERDICT_NO_SIGNAL},
		{0.0, 0.02, 1, METRICS_VERDICT_NO_SIGNAL}, /* touching 0 is not above */
		{-0.05, -0.01, 1, METRICS_VERDICT_NEGATIVE},
		{-0.05, -0.01, 0, METRICS_VERDICT_NEGATIVE},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct metrics_figure f = {1, (t[i].lo + t[i].hi) / 2, t[i].lo, t[i].hi};
		CHECK(metrics_rsi_verdict(&f, t[i].beats) == t[i].want);
	}
	enum metrics_verdict v;
	CHECK(metrics_verdict_parse("no signal", &v) == 0 && v == METRICS_VERDICT_NO_SIGNAL);
	CHECK(metrics_verdict_parse("maybe", &v) == -1);
	CHECK_STR(metrics_verdict_name(METRICS_VERDICT_NEGATIVE), "negative");
}

int main(void)
{
	RUN(test_score);
	RUN(test_pass_at_k);
	RUN(test_aggregate);
	RUN(test_verdict);
	TEST_EXIT();
}
