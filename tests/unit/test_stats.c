/* test_stats.c: stats.h with literal expected values. Bootstrap CIs are
 * pinned to the values this implementation gives for a seed (a change in
 * the RNG or the percentile rule shows up here). */
#include <math.h>

#include "ka_test.h"
#include "stats.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * (1 + fabs(b));
}
#define NEAR(a, b) near((a), (b))

static void test_median(void)
{
	double a[] = {3, 1, 2}, b[] = {4, 1, 3, 2}, c[] = {7};
	CHECK(stats_median(a, 3) == 2);
	CHECK(a[0] == 3 && a[1] == 1); /* not modified */
	CHECK(stats_median(b, 4) == 2.5);
	CHECK(stats_median(c, 1) == 7);
}

static void test_quantile(void)
{
	double s[] = {1, 2, 3, 4, 5};
	static const struct {
		double q, want;
	} t[] = {{0, 1}, {1, 5}, {0.25, 2}, {0.1, 1.4}, {0.5, 3}, {0.975, 4.9}, {-1, 1}, {2, 5}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		CHECK(NEAR(stats_quantile_sorted(s, 5, t[i].q), t[i].want));
}

static void test_median_ci(void)
{
	double x[20];
	for (int i = 0; i < 20; i++)
		x[i] = 20 - i; /* 20..1, unsorted on purpose */
	static const struct {
		size_t n;
		double lo, hi;
	} t[] = {
		{5, 16, 20},  /* n < 6: [min, max] of 20..16 */
		{6, 15, 20},  /* j = 1 still: [min, max] */
		{10, 12, 19}, /* 20..11 sorted 11..20: j = 2 -> [12, 19] */
		{20, 6, 15},  /* j = 6 -> [x_6, x_15] */
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct ci c = stats_median_ci(x, t[i].n);
		CHECK(c.lo == t[i].lo && c.hi == t[i].hi);
	}
}

static void test_geomean(void)
{
	double a[] = {1, 4, 16}, b[] = {2, 8};
	CHECK(NEAR(stats_geomean(a, 3), 4));
	CHECK(NEAR(stats_geomean(b, 2), 4));
	CHECK(stats_geomean(a, 0) == 0);
}

static void test_mean_ci(void)
{
	double same[] = {2, 2, 2, 2}, m;
	struct ci c = stats_mean_ci(same, 4, 1000, 1, &m);
	CHECK(m == 2 && c.lo == 2 && c.hi == 2);
	double x[10];
	for (int i = 0; i < 10; i++)
		x[i] = i + 1;
	c = stats_mean_ci(x, 10, 1000, 42, &m);
	CHECK(m == 5.5);
	CHECK(c.lo < 5.5 && c.hi > 5.5 && c.lo > 3 && c.hi < 8);
	struct ci d = stats_mean_ci(x, 10, 1000, 42, &m);
	CHECK(c.lo == d.lo && c.hi == d.hi);	   /* same seed, same CI */
	CHECK(NEAR(c.lo, 3.7) && NEAR(c.hi, 7.4)); /* pinned: seed 42 */
	struct ci e = stats_mean_ci(x, 10, 1000, 43, &m);
	CHECK(e.lo != c.lo || e.hi != c.hi);
}

static void test_grouped(void)
{
	/* groups {1, 1}, {3}, {} (empty: no part), {5, 7} */
	double v[] = {1, 1, 3, 5, 7};
	size_t off[] = {0, 2, 3, 3}, cnt[] = {2, 1, 0, 2};
	double m;
	struct ci c = stats_grouped_mean_ci(v, off, cnt, 4, 1000, 7, &m);
	CHECK(NEAR(m, (1 + 3 + 6) / 3.0));
	CHECK(c.lo >= 1 && c.hi <= 6 && c.lo < m && c.hi > m);
	size_t zero[] = {0, 0};
	c = stats_grouped_mean_ci(v, off, zero, 2, 1000, 7, &m);
	CHECK(isnan(m) && isnan(c.lo));
	/* one group: no spread */
	c = stats_grouped_mean_ci(v, off, cnt, 1, 1000, 7, &m);
	CHECK(m == 1 && c.lo == 1 && c.hi == 1);
}

static void test_ratio(void)
{
	double a[] = {2, 2, 2}, b[] = {1, 1};
	struct ci c = stats_ratio_ci(a, 3, b, 2, 500, 3);
	CHECK(c.lo == 2 && c.hi == 2);
	double a2[] = {10, 11, 12, 13, 14}, b2[] = {5, 5.5, 6, 6.5, 7};
	c = stats_ratio_ci(a2, 5, b2, 5, 1000, 9);
	CHECK(c.lo < 2 && c.hi > 2 && c.lo > 1.4 && c.hi < 2.8);
}

int main(void)
{
	RUN(test_median);
	RUN(test_quantile);
	RUN(test_median_ci);
	RUN(test_geomean);
	RUN(test_mean_ci);
	RUN(test_grouped);
	RUN(test_ratio);
	TEST_EXIT();
}
