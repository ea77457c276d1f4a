/* test_goldbox.c: the gold of a task that is not trusted bank code runs in
 * ka-goldbox (gold.h, goldclient.h): its values are bit-identical to the
 * trusted gold's, in full, on sampled items and lazily; a reference that
 * loops at one item ends at the deadline the cost model gives; one that
 * aborts, writes past the end or before the start of its output, answers
 * NaN, writes on the box's stdout or exits before its reply is the task's
 * failure (gold_broken),
 * every later call failing the same way; the box holds none of ka's
 * environment and no open descriptor of ka's. Each hostile reference would
 * hang, crash or corrupt this process were it run in it (trusted). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "gold.h"
#include "ka_gen.h"
#include "ka_test.h"
#include "task.h"
#include "task_fixture.h"
#include "util.h"

/* tests/data/tasks_good/add_scale (z = 2x + y over N) with ref.c replaced
 * by body (the statements of ref, with item, N, x, y, z in scope; a few libc
 * functions declared, for what the dialect would refuse) in a new temporary
 * folder (*dir, for util_rmtree): not trusted. NULL on failure. */
static struct ka_task *task_with_body(const char *body, char **dir)
{
	struct ka_err e = {{0}};
	char *ref = xasprintf("#include \"ka_ref.h\"\n"
			      "void abort(void);\nlong write(int, const void *, unsigned long);\n"
			      "long read(int, void *, unsigned long);\n"
			      "char *getenv(const char *);\nvoid _exit(int);\n"
			      "KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(float) x, "
			      "KA_IN(ka_half) y, KA_OUT(float) z)\n{\n%s\n}\n",
			      body);
	*dir = task_fixture_dir(ref);
	free(ref);
	return *dir ? task_load(*dir, &e) : NULL;
}

#define OK_BODY "\t(void)N;\n\tz[item] = 2.0 * (double)x[item] + KA_LD_F16(y, item);"

/* The gold of t at N (every item, arrays) into a new array; 0 or -1 with e. */
static int full_gold(struct gold *g, const struct ka_task *t, int64_t n, double **out,
		     struct ka_err *e)
{
	struct ka_shape sh = {{n}};
	void *in[KA_MAX_TENSORS];
	if (gold_inputs_new(t, &sh, 7, 3, 0, in, e))
		return -1;
	int rc = gold_outputs_new(t, &sh, 0, out, e) || gold_compute(g, &sh, in, out, NULL, 0, e);
	gold_buffers_free(in, t->n_inputs);
	return rc ? -1 : 0;
}

/* The same reference trusted (in this process) and not (in the box): the
 * same bits in full, on sampled items with the arrays, and lazily. */
static void test_box_equals_trusted(void)
{
	char *dir = NULL;
	struct ka_err e = {{0}};
	struct ka_task *t = task_with_body(OK_BODY, &dir);
	CHECK(t != NULL);
	struct ka_task *tt = task_load(dir, &e);
	CHECK(tt != NULL);
	tt->trusted = 1;
	struct gold *box = gold_open(t, &e), *here = gold_open(tt, &e);
	CHECK(box && here);
	double *a[KA_MAX_TENSORS], *b[KA_MAX_TENSORS];
	CHECK_EQ_INT(full_gold(box, t, 1031, a, &e), 0);
	CHECK_EQ_INT(full_gold(here, tt, 1031, b, &e), 0);
	CHECK(!memcmp(a[0], b[0], 1031 * sizeof(double)));
	gold_buffers_free((void **)a, 1);
	gold_buffers_free((void **)b, 1);
	/* Sampled, lazily: inputs drawn on demand in the box. */
	struct ka_shape sh = {{5000}};
	int64_t items[3] = {0, 2500, 4999};
	struct ka_gen_src src[2];
	for (int k = 0; k < 2; k++) {
		struct gen_params gp;
		CHECK_EQ_INT(gen_params_at(t, k, &sh, &gp, &e), 0);
		gen_src_of(&src[k], t->inputs[k].dtype, 99 + (uint64_t)k, &gp);
	}
	CHECK_EQ_INT(gold_outputs_new(t, &sh, 0, a, &e), 0);
	CHECK_EQ_INT(gold_outputs_new(t, &sh, 0, b, &e), 0);
	CHECK_EQ_INT(gold_compute_lazy(box, &sh, src, a, items, 3, &e), 0);
	CHECK_EQ_INT(gold_compute_lazy(here, &sh, src, b, items, 3, &e), 0);
	CHECK(!memcmp(a[0], b[0], 5000 * sizeof(double)));
	CHECK(a[0][2500] != 0 && a[0][1] == 0); /* the items written, nothing else */
	gold_buffers_free((void **)a, 1);
	gold_buffers_free((void **)b, 1);
	/* The measured cost of an item comes from the box's own clock. */
	double item_s = 0;
	CHECK_EQ_INT(gold_item_cost(box, &sh, &item_s, &e), 0);
	CHECK(item_s > 0 && item_s < 0.05);
	CHECK(gold_broken(box) == NULL && gold_broken(here) == NULL);
	gold_close(box);
	gold_close(here);
	task_free(t);
	task_free(tt);
	util_rmtree(dir);
	free(dir);
}

/* A hostile reference's full gold at N: -1, gold_broken holding want, a
 * second call failing at once the same way (no second box). */
static void expect_broken(const char *body, int64_t n, const char *want, double max_s)
{
	char *dir = NULL;
	struct ka_err e = {{0}};
	struct ka_task *t = task_with_body(body, &dir);
	CHECK(t != NULL);
	struct gold *g = gold_open(t, &e);
	CHECK(g != NULL);
	double *out[KA_MAX_TENSORS] = {0};
	double t0 = util_now();
	int rc = full_gold(g, t, n, out, &e);
	double took = util_now() - t0;
	gold_buffers_free((void **)out, 1);
	printf("# %.1f s: %s\n", took, e.msg);
	CHECK_EQ_INT(rc, -1);
	CHECK(gold_broken(g) != NULL);
	CHECK(strstr(gold_broken(g), want) != NULL);
	CHECK(strstr(gold_broken(g), "at shape N=") != NULL);
	CHECK(took < max_s);
	t0 = util_now();
	CHECK_EQ_INT(full_gold(g, t, n, out, &e), -1);
	gold_buffers_free((void **)out, 1);
	CHECK(util_now() - t0 < 1.0);
	CHECK(strstr(e.msg, want) != NULL);
	gold_close(g);
	task_free(t);
	util_rmtree(dir);
	free(dir);
}

/* Loops (almost) forever at one item of a shape the check shapes do not
 * reach: ended at the deadline, GOLD_BOX_FLOOR_S (5 s) plus the cost
 * model's share, not a hang. */
static void test_box_loops_at_one_item(void)
{
	expect_broken(OK_BODY "\n\tfor (ka_i64 k = 0; k < (item == 4000 ? 4000000000000 : 0); k++)"
			      "\n\t\tz[item] = z[item] + 1e-30;",
		      5000, "ran over its deadline", 30);
}

/* The dialect forbids calls; the box holds when it is bypassed. */
static void test_box_aborts(void)
{
	expect_broken(OK_BODY "\n\tif (item == 700)\n\t\tabort();", 1031, "killed by signal 6", 30);
}

static void test_box_writes_past_output(void)
{
	expect_broken(OK_BODY "\n\tz[item + N] = 1;", 1031, "killed by signal 11", 30);
}

static void test_box_writes_before_output(void)
{
	expect_broken(OK_BODY "\n\tif (item == 0)\n\t\tz[item - 1] = 1;", 1031,
		      "wrote before the start of an output", 30);
}

static void test_box_not_finite(void)
{
	expect_broken(OK_BODY "\n\tif (item == 77)\n\t\tz[item] = 0.0 / (double)(item - 77);", 1031,
		      "is not finite", 30);
}

static void test_box_writes_its_reply(void)
{
	expect_broken(OK_BODY "\n\tif (item == 5)\n\t\twrite(1, \"forged\", 6);", 1031,
		      "malformed reply", 30);
}

static void test_box_exits_early(void)
{
	expect_broken(OK_BODY "\n\tif (item == 9)\n\t\t_exit(0);", 1031, "malformed reply", 30);
}

/* What the box can reach: ka's environment (a planted secret) is not in
 * it, and a descriptor ka holds open (not close-on-exec) is closed there.
 * The reference writes 1 at item 0 when it found the secret, 2 when it read
 * ka's descriptor, else 0. */
static void test_box_holds_nothing_of_ka(void)
{
	char *dir = NULL;
	struct ka_err e = {{0}};
	char secret[] = "/tmp/ka-test-goldbox-secret-XXXXXX";
	int sfd = mkstemp(secret);
	CHECK(sfd >= 0);
	CHECK(write(sfd, "s", 1) == 1);
	int keep = open(secret, O_RDONLY); /* inherited: no O_CLOEXEC */
	CHECK(keep >= 0);
	setenv("KA_GOLDBOX_TEST_SECRET", "hunter2", 1);
	char *body = xasprintf(
		"\t(void)N; (void)x; (void)y;\n\tz[item] = 0;\n\tif (item == 0 && "
		"getenv(\"KA_GOLDBOX_TEST_SECRET\"))\n\t\tz[item] = 1;\n\tchar c;\n\tif (item == "
		"1 && read(%d, &c, 1) >= 0)\n\t\tz[item] = 2;\n",
		keep);
	struct ka_task *t = task_with_body(body, &dir);
	free(body);
	CHECK(t != NULL);
	struct gold *g = gold_open(t, &e);
	CHECK(g != NULL);
	double *out[KA_MAX_TENSORS];
	CHECK_EQ_INT(full_gold(g, t, 64, out, &e), 0);
	CHECK_NEAR(out[0][0], 0, 0);
	CHECK_NEAR(out[0][1], 0, 0);
	gold_buffers_free((void **)out, 1);
	unsetenv("KA_GOLDBOX_TEST_SECRET");
	close(keep);
	close(sfd);
	unlink(secret);
	gold_close(g);
	task_free(t);
	util_rmtree(dir);
	free(dir);
}

int main(void)
{
	RUN(test_box_equals_trusted);
	RUN(test_box_loops_at_one_item);
	RUN(test_box_aborts);
	RUN(test_box_writes_past_output);
	RUN(test_box_writes_before_output);
	RUN(test_box_not_finite);
	RUN(test_box_writes_its_reply);
	RUN(test_box_exits_early);
	RUN(test_box_holds_nothing_of_ka);
	TEST_EXIT();
}
