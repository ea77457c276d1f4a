/* test_rsi_diag.c: the weight-RSI diagnostics (src/tracks/rsi_diag.h):
 * distinct token n-grams and the zlib compression ratio of kernel sets
 * (identical kernels are less diverse and compress better than different
 * ones; whitespace does not count as a token), the kernels extracted from
 * SFT completions, retention, the compiled-x figure against the capability
 * track's aggregate, and the reasons a compiled x is null. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "rsi_diag.h"

static const char k_add[] = "__kernel void f(__global const float *x, __global float *y, long n)\n"
			    "{ long i = get_global_id(0); if (i < n) y[i] = x[i] + 1.0f; }\n";
static const char k_max[] =
	"__kernel void g(__global const float *a, __global float *b, long m, long cols)\n"
	"{ long r = get_global_id(0); float v = a[r * cols];\n"
	"  for (long c = 1; c < cols; c++) v = fmax(v, a[r * cols + c]); b[r] = v; }\n";

static void test_distinct(void)
{
	struct rsi_data_diag one, same, two, spaced;
	const char *a[] = {k_add};
	const char *aa[] = {k_add, k_add, k_add, k_add};
	const char *ab[] = {k_add, k_max};
	rsi_diag_kernels(a, 1, &one);
	rsi_diag_kernels(aa, 4, &same);
	rsi_diag_kernels(ab, 2, &two);
	CHECK_EQ_INT(same.n_kernels, 4);
	/* four copies: every n-gram four times, so a quarter of one copy's share */
	CHECK_NEAR(same.distinct, one.distinct / 4, 1e-12);
	CHECK(two.distinct > same.distinct);
	CHECK(one.distinct > 0.9 && one.distinct <= 1);
	/* whitespace is not a token: re-spaced kernels are the same n-grams */
	const char *sp[] = {k_add,
			    "__kernel   void f(__global const float*x,__global float *y,long "
			    "n){long i=get_global_id(0);if(i<n)y[i]=x[i]+1.0f;}"};
	rsi_diag_kernels(sp, 2, &spaced);
	CHECK_NEAR(spaced.distinct, 0.5, 1e-12);
	/* compression: repeated kernels compress far better than different ones */
	CHECK(same.compression > 0 && two.compression > 0);
	CHECK(same.compression < two.compression);
	CHECK(same.compression < 0.5);
	/* nothing, or too little, to measure */
	struct rsi_data_diag none;
	const char *nul[] = {NULL, "x y"};
	rsi_diag_kernels(nul, 2, &none);
	CHECK_EQ_INT(none.n_kernels, 1);
	CHECK(none.distinct == -1);
	CHECK(none.compression == -1);
}

static void test_examples(void)
{
	/* completions with a fenced block count only the kernel, those without
	 * count as they are */
	char *fenced = NULL;
	if (asprintf(&fenced, "Here it is:\n```opencl\n%s```\nDone, with many words of chat.",
		     k_add) < 0)
		return;
	json_t *ex = json_pack("[{s:s},{s:s},{s:i}]", "completion", fenced, "completion", k_add,
			       "completion", 3);
	struct rsi_data_diag d, k;
	rsi_diag_examples(ex, "opencl", &d);
	const char *two[] = {k_add, k_add};
	rsi_diag_kernels(two, 2, &k);
	CHECK_EQ_INT(d.n_kernels, 2);
	CHECK_NEAR(d.distinct, k.distinct, 1e-12);
	CHECK_NEAR(d.compression, k.compression, 1e-12);
	json_decref(ex);
	free(fenced);
}

static void test_retention(void)
{
	int base[] = {1, 1, 0, 1}, now[] = {1, 0, 1, 1}, zero[] = {0, 0, 0, 0};
	CHECK_NEAR(rsi_diag_retention(base, now, 4), 2.0 / 3, 1e-12);
	CHECK(rsi_diag_retention(zero, now, 4) == -1);
}

static struct metrics_sample ok_at(double comp)
{
	struct metrics_sample s = {1, {1, 2.0, 1.9, 2.1}, {0, 0, 0, 0}};
	if (comp > 0)
		s.compiled = (struct metrics_speedup){1, comp, comp * 0.95, comp * 1.05};
	return s;
}

static void test_compiled_x(void)
{
	struct rsi_samples x;
	struct metrics_figure f;
	rsi_samples_init(&x, 3, 2);
	struct metrics_sample bad = {0, {0, 0, 0, 0}, {0, 0, 0, 0}};
	rsi_samples_add(&x, 0, &bad);
	rsi_samples_add(&x, 1, &bad);
	rsi_samples_compiled_x(&x, &f);
	CHECK(!f.defined); /* nothing correct was timed */
	struct metrics_sample a = ok_at(2.0), b = ok_at(0.5), c = ok_at(4.0), u = ok_at(0);
	rsi_samples_add(&x, 0, &a);
	rsi_samples_add(&x, 1, &u); /* ok but not timed: no value for task 1 */
	rsi_samples_add(&x, 2, &b);
	rsi_samples_add(&x, 2, &c);
	rsi_samples_add(&x, 2, &c); /* task 2 is full (k = 2): ignored */
	rsi_samples_add(&x, 7, &c); /* no task 7: ignored */
	CHECK_EQ_INT(x.n[2], 2);
	rsi_samples_compiled_x(&x, &f);
	/* tasks 0 (log 2) and 2 (mean of log 0.5 and log 4 = log 2 / 2) */
	CHECK(f.defined);
	CHECK_NEAR(f.value, exp((log(2.0) + log(2.0) / 2) / 2), 1e-12);
	CHECK(f.lo <= f.value && f.value <= f.hi);
	/* the capability track's aggregate over the same samples agrees */
	struct metrics_task t[3];
	for (int i = 0; i < 3; i++)
		t[i] = (struct metrics_task){"t", "L1", &x.s[i * 2], x.n[i]};
	struct metrics_agg agg;
	metrics_aggregate(t, 3, NULL, 2, &agg);
	CHECK_NEAR(f.value, agg.geomean_speedup_compiled.value, 1e-15);
	CHECK_NEAR(f.lo, agg.geomean_speedup_compiled.lo, 1e-15);
	rsi_samples_free(&x);
	CHECK(strstr(rsi_compiled_x_reason(0, "cuda"), "--no-timing") != NULL);
	CHECK(strstr(rsi_compiled_x_reason(1, "opencl"), "no compiled baseline") != NULL);
	CHECK(strstr(rsi_compiled_x_reason(1, "cuda"), "no correct held-out kernel") != NULL);
}

int main(void)
{
	RUN(test_distinct);
	RUN(test_examples);
	RUN(test_retention);
	RUN(test_compiled_x);
	TEST_EXIT();
}
