/* test_trainee.c: the trainee's host side (src/tracks/trainee.h) against a
 * fake engine (a small Python script): a sample call's prompts, the replies
 * file read back (blank lines skipped, a last line without a newline, the
 * budget counted, held-out samples kept), a journaled call not run again,
 * the replies that stop a run (not JSON, no id, an id naming no prompt),
 * the arm's allowance and the scorecard's model object. The replies carry
 * no code block, so nothing reaches the grader. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ka_test.h"
#include "trainee.h"

static char dir[] = "/tmp/ka_test_trainee_XXXXXX";

/* model "ok": every prompt k times, a blank line after the first reply and
 * no newline after the last; "badjson", "noid", "badid": one bad line. */
static const char fake_py[] =
	"import json, sys\n"
	"m = json.load(open(sys.argv[1]))\n"
	"lines = [json.dumps({'id': p['id'], 'sample': j, 'text': 'no code: ' + p['text'],\n"
	"                     'tokens_in': 3, 'tokens_out': 5})\n"
	"         for p in m['prompts'] for j in range(m['k'])]\n"
	"if m['model'] == 'badjson':\n"
	"    lines = lines[:1] + ['', 'not json']\n"
	"elif m['model'] == 'noid':\n"
	"    lines = [json.dumps({'text': 'x'})]\n"
	"elif m['model'] == 'badid':\n"
	"    lines = [json.dumps({'id': 'heldout/99', 'text': 'x'})]\n"
	"else:\n"
	"    lines = lines[:1] + [''] + lines[1:]\n"
	"open(m['out'], 'w').write('\\n'.join(lines))\n"
	"json.dump({'format': m['format'], 'ok': True, 'op': m['op'], 'replies': len(lines)},\n"
	"          open(sys.argv[2], 'w'))\n";

struct fixture {
	struct procedure_opts po;
	struct procrun r;
	struct ka_task tasks[3];
	struct ka_task *held[2], *train[1];
	char *held_prompts[2], *train_prompts[1];
	struct trainee t;
	char *py, *out;
};

/* Two held-out tasks and one train task, a journal in dir/out, the fake
 * engine. 0 or -1. */
static int fixture_open(struct fixture *f)
{
	struct ka_err e;
	memset(f, 0, sizeof *f);
	if (asprintf(&f->py, "%s/fake.py", dir) < 0 || asprintf(&f->out, "%s/out", dir) < 0)
		return -1;
	procedure_opts_default(&f->po);
	f->po.out = f->out;
	f->po.quiet = 1;
	f->r.o = &f->po;
	f->r.label = "test";
	f->r.target = "opencl";
	static char *const names[] = {"h0", "h1", "t0"};
	for (int i = 0; i < 3; i++)
		f->tasks[i].name = names[i];
	f->held[0] = &f->tasks[0];
	f->held[1] = &f->tasks[1];
	f->train[0] = &f->tasks[2];
	f->held_prompts[0] = "solve h0";
	f->held_prompts[1] = "solve h1";
	f->train_prompts[0] = "solve t0";
	f->r.heldout = (struct procrun_split){f->held, f->held_prompts, 2};
	f->r.train = (struct procrun_split){f->train, f->train_prompts, 1};
	char *jp = NULL;
	if (util_write_file(f->py, fake_py, strlen(fake_py), &e) || util_mkdirs(f->out, &e) ||
	    asprintf(&jp, "%s/journal.sqlite", f->out) < 0)
		return -1;
	f->r.d.j = journal_open(jp, &e);
	free(jp);
	if (!f->r.d.j || trainee_open(&f->t, &f->r, f->py, 60, "solver", 2, &e) ||
	    trainee_mkdirs(&f->t, &e))
		return -1;
	return 0;
}

static void fixture_close(struct fixture *f)
{
	trainee_close(&f->t);
	journal_close(f->r.d.j);
	free(f->py);
	free(f->out);
}

static void test_sample(void)
{
	struct fixture f;
	struct ka_err e;
	CHECK(fixture_open(&f) == 0);
	double hc[2] = {0}, hok[2] = {0}, tc[1] = {0}, tok[1] = {0};
	int hs[2] = {0};
	struct rsi_samples smp;
	rsi_samples_init(&smp, 2, 2);
	json_t *ver = json_array();
	struct trainee_graded g = {.hc = hc,
				   .hok = hok,
				   .tc = tc,
				   .tok = tok,
				   .hs = hs,
				   .hsmp = &smp,
				   .verified = ver};
	CHECK(trainee_sample(&f.t, "r0/base/sample", "ok", 1, 1, 7, &g, &e) == 0);
	/* 3 prompts x k 2, each 3 + 5 tokens; no code block: no check */
	CHECK_EQ_INT(g.used.requests, 6);
	CHECK_EQ_INT(g.used.tokens, 48);
	CHECK_EQ_INT(g.used.checks, 0);
	CHECK_EQ_INT(smp.n[0], 2);
	CHECK_EQ_INT(smp.n[1], 2);
	CHECK_EQ_INT(smp.s[0].ok, 0);
	CHECK_EQ_INT(hs[0] + hs[1], 0);
	CHECK_NEAR(hc[0] + hc[1] + hok[0] + tc[0] + tok[0], 0, 0);
	CHECK_EQ_INT(json_array_size(ver), 0);
	CHECK_EQ_INT(f.t.calls_run, 1);
	/* the replies file: every prompt of both splits, named by the key */
	char *path = NULL, *text = NULL;
	size_t len;
	CHECK(asprintf(&path, "%s/data/r0_base_sample.jsonl", f.out) > 0);
	CHECK(util_read_file(path, 1 << 20, &text, &len, &e) == 0);
	CHECK(strstr(text, "\"heldout/1\"") && strstr(text, "solve h1"));
	CHECK(strstr(text, "\"train/0\"") && strstr(text, "solve t0"));
	free(text);
	free(path);
	/* the same call again: journaled, graded again from the file */
	struct trainee_graded g2 = {.verified = ver};
	CHECK(trainee_sample(&f.t, "r0/base/sample", "ok", 1, 1, 7, &g2, &e) == 0);
	CHECK_EQ_INT(f.t.calls_run, 1);
	CHECK_EQ_INT(g2.used.requests, 6);
	/* only the train prompts */
	struct trainee_graded g3 = {.verified = ver};
	CHECK(trainee_sample(&f.t, "r1/fresh/base_sample", "ok", 0, 1, 8, &g3, &e) == 0);
	CHECK_EQ_INT(g3.used.requests, 2);
	json_decref(ver);
	rsi_samples_free(&smp);
	fixture_close(&f);
}

static void test_bad_replies(void)
{
	struct fixture f;
	struct ka_err e;
	CHECK(fixture_open(&f) == 0);
	struct trainee_graded g = {0};
	CHECK(trainee_sample(&f.t, "r1/a/sample", "badjson", 1, 0, 1, &g, &e) == -1);
	CHECK(strstr(e.msg, "r1_a_sample.jsonl: line 3 is not JSON") != NULL);
	CHECK(trainee_sample(&f.t, "r1/b/sample", "noid", 1, 0, 1, &g, &e) == -1);
	CHECK(strstr(e.msg, "a line without id and text") != NULL);
	CHECK(trainee_sample(&f.t, "r1/c/sample", "badid", 1, 0, 1, &g, &e) == -1);
	CHECK(strstr(e.msg, "unknown prompt id 'heldout/99'") != NULL);
	fixture_close(&f);
}

static void test_allowance_and_model(void)
{
	struct fixture f;
	CHECK(fixture_open(&f) == 0);
	f.po.max_tokens = 100;
	/* k 2 x (2 held-out + 1 train) x rounds 0..3 */
	struct round_budget b = trainee_allowance(&f.t, 3);
	CHECK_EQ_INT(b.requests, 24);
	CHECK_EQ_INT(b.checks, 24);
	CHECK_EQ_INT(b.tokens, 2400);
	json_t *m = trainee_model_json(&f.t, "/models/tiny");
	CHECK_EQ_STR(json_string_value(json_object_get(m, "name")), "tiny");
	CHECK_EQ_STR(json_string_value(json_object_get(m, "spec")), "/models/tiny");
	CHECK_EQ_STR(json_string_value(json_object_get(m, "backend")), f.py);
	CHECK_EQ_STR(json_string_value(json_object_get(m, "kind")), "open");
	json_decref(m);
	m = trainee_model_json(&f.t, "org/");
	CHECK_EQ_STR(json_string_value(json_object_get(m, "name")), "org/");
	json_decref(m);
	fixture_close(&f);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_sample);
	RUN(test_bad_replies);
	RUN(test_allowance_and_model);
	util_rmtree(dir);
	TEST_EXIT();
}
