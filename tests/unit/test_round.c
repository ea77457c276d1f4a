/* test_round.c: the round machinery of the RSI tracks (src/tracks/round.h):
 * the hash split (deterministic, both sides filled, overlap refused), budget
 * equality within 1%, journaled units (stored once, read back), replayed
 * model calls (a journaled reply is never requested again: the cmd backend
 * counts its runs), paired bootstrap CIs (a constant gain has a CI above 0,
 * noise around 0 has a CI across 0, the value is exactly the difference of
 * the means) and the verdict. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ka_test.h"
#include "metrics.h"
#include "round.h"

static void test_split(void)
{
	const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
	int t1[12], t2[12];
	round_split(names, 12, 50, t1);
	round_split(names, 12, 50, t2);
	int n_train = 0;
	for (int i = 0; i < 12; i++) {
		CHECK(t1[i] == t2[i]);
		CHECK(t1[i] == round_is_train(names[i], 50));
		n_train += t1[i];
	}
	CHECK(n_train > 0 && n_train < 12);
	/* All on one side: one task moves over. */
	int t3[3];
	round_split(names, 3, 0, t3);
	CHECK(t3[0] + t3[1] + t3[2] == 1);
	round_split(names, 3, 100, t3);
	CHECK(t3[0] + t3[1] + t3[2] == 2);
	struct ka_err e;
	const char *tr[] = {"x", "y"}, *he[] = {"z", "y"};
	CHECK(round_check_disjoint(tr, 2, he, 1, &e) == 0);
	CHECK(round_check_disjoint(tr, 2, he, 2, &e) == -1);
	CHECK(strstr(e.msg, "task 'y' is in both") != NULL);
}

static void test_budgets(void)
{
	struct round_budget a[2] = {{100, 100, 100000}, {100, 100, 100900}};
	const char *arms[] = {"self", "frozen"};
	struct ka_err e;
	CHECK(round_budgets_equal(a, arms, 2, &e) == 0); /* 0.9% */
	a[1].tokens = 101100;				 /* 1.1% */
	CHECK(round_budgets_equal(a, arms, 2, &e) == -1);
	CHECK(strstr(e.msg, "arms 'self' and 'frozen' differ by 1.1% in tokens") != NULL);
	a[1].tokens = 100000;
	a[1].requests = 98;
	CHECK(round_budgets_equal(a, arms, 2, &e) == -1);
	CHECK(strstr(e.msg, "in requests") != NULL);
	struct round_budget s = {1, 2, 3};
	round_budget_add(&s, &a[0]);
	CHECK(s.requests == 101 && s.checks == 102 && s.tokens == 100003);
	char key[ROUND_KEY_MAX];
	round_key(key, sizeof key, 3, "self", "heldout", "gelu");
	CHECK_STR(key, "r3/self/heldout/gelu");
	round_key(key, sizeof key, 0, "self", "edit", NULL);
	CHECK_STR(key, "r0/self/edit");
}

static char dir[] = "/tmp/ka_test_round_XXXXXX";

static void test_units_and_replay(void)
{
	struct ka_err e;
	char *path = NULL;
	if (asprintf(&path, "%s/journal.sqlite", dir) < 0)
		return;
	struct journal *j = journal_open(path, &e);
	free(path);
	CHECK(j != NULL);
	json_t *o = NULL;
	CHECK(round_unit_get(j, "r0/self/train/x", &o, &e) == 1);
	json_t *put = json_pack("{s:s,s:f}", "task", "x", "score", 0.5);
	CHECK(round_unit_put(j, "r0/self/train/x", put, &e) == 0);
	CHECK(round_unit_put(j, "r0/self/train/x", put, &e) == -1); /* once */
	CHECK(round_unit_get(j, "r0/self/train/x", &o, &e) == 0);
	CHECK(json_equal(o, put));
	json_decref(o);
	json_decref(put);

	/* A cmd model that counts its runs in a file. */
	char *counter = NULL, *spec = NULL;
	if (asprintf(&counter, "%s/runs", dir) < 0 ||
	    asprintf(&spec, "cmd:echo x >> %s; echo '```c'; echo 'int k;'; echo '```'", counter) <
		    0)
		return;
	struct model *m = model_open(spec, NULL, &e);
	CHECK(m != NULL);
	struct journal_reply r;
	int sent = 0;
	CHECK(round_generate(j, m, "r0/self/train/x", 0, "prompt", "c", &r, &sent, &e) == 0);
	CHECK(r.ok && sent == 1 && r.text && strstr(r.text, "int k;"));
	journal_reply_free(&r);
	CHECK(round_generate(j, m, "r0/self/train/x", 0, "prompt", "c", &r, &sent, &e) == 0);
	CHECK(r.ok && sent == 0 && r.text && strstr(r.text, "int k;"));
	journal_reply_free(&r);
	CHECK(round_generate(j, m, "r0/self/train/x", 1, "prompt", "c", &r, &sent, &e) == 0);
	CHECK(sent == 1);
	journal_reply_free(&r);
	model_close(m);
	char *text = NULL;
	size_t len = 0;
	CHECK(util_read_file(counter, 4096, &text, &len, &e) == 0);
	CHECK(len == 4); /* two runs: "x\nx\n" */
	free(text);
	free(counter);
	free(spec);
	journal_close(j);
}

static void test_paired_bootstrap(void)
{
	double a[20], b[20], n1[20], n2[20];
	for (int i = 0; i < 20; i++) {
		a[i] = (i % 4) * 0.1 + 0.5;
		b[i] = (i % 4) * 0.1;
		n1[i] = (i % 2) ? 0.5 : 0.0;
		n2[i] = (i % 3) ? 0.0 : 0.5;
	}
	struct metrics_figure d;
	round_paired_diff(a, b, 20, 1, &d);
	CHECK(d.defined && d.value > 0.499 && d.value < 0.501 && d.lo > 0.49);
	CHECK(metrics_rsi_verdict(&d, 1) == METRICS_VERDICT_POSITIVE);
	CHECK(metrics_rsi_verdict(&d, 0) == METRICS_VERDICT_NO_SIGNAL);
	round_paired_diff(n1, n2, 20, 1, &d);
	CHECK(d.lo < 0 && d.hi > 0);
	CHECK(d.lo <= d.value && d.value <= d.hi);
	CHECK(metrics_rsi_verdict(&d, 1) == METRICS_VERDICT_NO_SIGNAL);
	round_paired_diff(b, a, 20, 1, &d);
	CHECK(metrics_rsi_verdict(&d, 0) == METRICS_VERDICT_NEGATIVE);
	struct metrics_figure f;
	round_mean_figure(n1, 20, 3, &f);
	CHECK(f.defined && f.value == 0.25 && f.lo <= 0.25 && f.hi >= 0.25 && f.lo < f.hi);
	round_mean_figure(n1, 0, 3, &f);
	CHECK(!f.defined);
	/* The value is the difference of the means, whatever the seed. */
	round_paired_diff(n1, n2, 20, 99, &d);
	double ma = 0, mb = 0;
	for (int i = 0; i < 20; i++)
		ma += n1[i], mb += n2[i];
	CHECK(d.value == ma / 20 - mb / 20);
	CHECK(strstr(ROUND_VERDICT_RULE, "paired") != NULL);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_split);
	RUN(test_budgets);
	RUN(test_units_and_replay);
	RUN(test_paired_bootstrap);
	util_rmtree(dir);
	TEST_EXIT();
}
