/* trainee.c: an open model sampled, graded and trained through an engine
 * (see trainee.h). */
#include "trainee.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "metrics.h"
#include "prompt.h"

#define REPLIES_CAP ((size_t)1 << 30)	  /* bytes of one sample call's replies */
#define REPLY_LINE_CAP ((size_t)64 << 20) /* bytes of one reply line */

int trainee_open(struct trainee *t, struct procrun *r, const char *engine, double timeout_s,
		 const char *prompt_style, int k, struct ka_err *e)
{
	memset(t, 0, sizeof *t);
	t->r = r;
	t->k = k;
	t->prompt_style = prompt_style;
	t->lang = prompt_extract_lang(r->target);
	if (engine_find(engine, &t->en, e))
		return -1;
	t->en.timeout_s = timeout_s;
	t->dir_engine = xasprintf("%s/engine", r->o->out);
	t->dir_models = xasprintf("%s/models", r->o->out);
	t->dir_data = xasprintf("%s/data", r->o->out);
	return 0;
}

int trainee_mkdirs(struct trainee *t, struct ka_err *e)
{
	return util_mkdirs(t->dir_engine, e) || util_mkdirs(t->dir_data, e) ||
			       util_mkdirs(t->dir_models, e)
		       ? -1
		       : 0;
}

void trainee_close(struct trainee *t)
{
	engine_free(&t->en);
	free(t->dir_engine);
	free(t->dir_models);
	free(t->dir_data);
	t->dir_engine = t->dir_models = t->dir_data = NULL;
}

char *trainee_prompt(const struct trainee *t, const struct procrun_split *s, int i)
{
	if (!strcmp(t->prompt_style, "short"))
		return xasprintf("task: %s\n### opencl\n", s->t[i]->name);
	return xstrdup(s->prompts[i]);
}

static void add_prompts(const struct trainee *t, json_t *arr, const struct procrun_split *s,
			const char *prefix)
{
	for (int i = 0; i < s->n; i++) {
		char *id = xasprintf("%s/%d", prefix, i);
		char *p = trainee_prompt(t, s, i);
		json_array_append_new(arr, json_pack("{s:s,s:s}", "id", id, "text", p));
		free(id);
		free(p);
	}
}

/* A held-out grade gr of task i into g: its score (against the compiled
 * baseline when t->score_compiled, else the grader's), verdict and sample. */
static void add_heldout(const struct trainee *t, struct trainee_graded *g, int i,
			const struct round_grade *gr)
{
	double score = gr->score;
	if (t->score_compiled)
		score = metrics_score(gr->ok, gr->compiled.present ? gr->compiled.median : NAN,
				      gr->compiled.present ? gr->compiled.lo : NAN);
	if (g->hc) {
		g->hc[i] += score / t->k;
		g->hok[i] += (gr->ok ? 1.0 : 0.0) / t->k;
	}
	if (g->hs)
		g->hs[i] |= gr->ok;
	if (g->hsmp) {
		struct metrics_sample ms = {gr->ok, gr->eager, gr->compiled};
		rsi_samples_add(g->hsmp, i, &ms);
	}
}

/* A verified train reply o (task i of s, code extracted, graded gr) appended
 * to g->verified. */
static void add_verified(const struct trainee *t, struct trainee_graded *g,
			 const struct procrun_split *s, int i, const json_t *o, const char *code,
			 const struct round_grade *gr)
{
	char h[17];
	snprintf(h, sizeof h, "%016llx", (unsigned long long)util_hash64(code, strlen(code), 1));
	char *p = trainee_prompt(t, s, i);
	json_array_append_new(
		g->verified,
		json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:I,s:I,s:i}", "task", s->t[i]->name,
			  "tier", s->t[i]->tier, "prompt", p, "completion",
			  json_string_value(json_object_get(o, "text")), "code", code, "hash", h,
			  "score", gr->score, "sample",
			  json_integer_value(json_object_get(o, "sample")), "tokens_out",
			  json_integer_value(json_object_get(o, "tokens_out")), "round", g->round));
	free(p);
}

/* One reply line o (from path): graded into g. */
static int grade_one(struct trainee *t, const char *path, json_t *o, struct trainee_graded *g,
		     struct ka_err *e)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *text = json_string_value(json_object_get(o, "text"));
	if (!id || !text || !strchr(id, '/'))
		return ka_err_set(e, "%s: a line without id and text", path);
	int train = !strncmp(id, "train/", 6);
	const struct procrun_split *s = train ? &t->r->train : &t->r->heldout;
	int i = atoi(strchr(id, '/') + 1);
	if (i < 0 || i >= s->n)
		return ka_err_set(e, "%s: unknown prompt id '%s'", path, id);
	g->used.requests++;
	g->used.tokens += json_integer_value(json_object_get(o, "tokens_in")) +
			  json_integer_value(json_object_get(o, "tokens_out"));
	char *code = extract_code(text, t->lang);
	struct round_grade gr;
	memset(&gr, 0, sizeof gr);
	int fresh = 0, rc = 0;
	if (code) {
		g->used.checks++;
		rc = round_grade_code(t->r->d.j, t->r->gs, t->r->start_id, s->t[i], code, &gr,
				      &fresh, e);
	}
	if (!rc && !train)
		add_heldout(t, g, i, &gr);
	if (!rc && train && g->tc) {
		g->tc[i] += gr.score / t->k;
		g->tok[i] += (gr.ok ? 1.0 : 0.0) / t->k;
	}
	if (!rc && train && gr.ok && g->verified)
		add_verified(t, g, s, i, o, code, &gr);
	round_grade_free(&gr);
	free(code);
	return rc;
}

/* The replies file, read whole before any reply is graded (grading forks
 * compilers and recorders; nothing of the file is then shared with them),
 * one JSON object a line; blank lines are skipped. */
static int grade_file(struct trainee *t, const char *path, struct trainee_graded *g,
		      struct ka_err *e)
{
	char *text = NULL;
	size_t total = 0;
	if (util_read_file(path, REPLIES_CAP, &text, &total, e))
		return -1;
	int rc = 0, n = 0;
	char *next = text, *end = text + total;
	while (!rc && next < end) {
		char *line = next, *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		line[len] = '\0';
		next = line + len + 1;
		n++;
		if (len == 0)
			continue;
		if (len > REPLY_LINE_CAP) {
			rc = ka_err_set(e, "%s: line %d is over %zu bytes", path, n,
					REPLY_LINE_CAP);
			break;
		}
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!o)
			rc = ka_err_set(e, "%s: line %d is not JSON: %s", path, n, je.text);
		else
			rc = grade_one(t, path, o, g, e);
		json_decref(o);
	}
	free(text);
	return rc;
}

/* key with '/' as '_' (a file name). */
static char *key_file(const char *dir, const char *key, const char *ext)
{
	char *s = xasprintf("%s/%s%s", dir, key, ext);
	for (char *p = s + strlen(dir) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	return s;
}

int trainee_sample(struct trainee *t, const char *key, const char *model, int heldout, int train,
		   int64_t seed, struct trainee_graded *g, struct ka_err *e)
{
	const struct procedure_opts *o = t->r->o;
	json_t *prompts = json_array();
	if (heldout)
		add_prompts(t, prompts, &t->r->heldout, "heldout");
	if (train)
		add_prompts(t, prompts, &t->r->train, "train");
	char *out = key_file(t->dir_data, key, ".jsonl");
	json_t *m = json_pack("{s:s,s:s,s:o,s:i,s:f,s:i,s:I,s:s}", "op", "sample", "model", model,
			      "prompts", prompts, "k", t->k, "temperature", o->temperature,
			      "max_tokens", o->max_tokens, "seed", (json_int_t)seed, "out", out);
	const char *outs[] = {out, NULL};
	json_t *res = NULL;
	int ran = 0;
	int rc = engine_call(&t->en, t->r->d.j, key, t->dir_engine, m, NULL, outs, &res, &ran, e);
	t->calls_run += ran;
	if (!rc)
		rc = grade_file(t, out, g, e);
	if (!rc && !o->quiet)
		fprintf(stderr, "ka: %s: %s\n", key, ran ? "sampled" : "journaled");
	json_decref(m);
	json_decref(res);
	free(out);
	return rc;
}

int trainee_write_sft(const char *path, const json_t *examples, struct ka_err *e)
{
	struct util_buf b;
	memset(&b, 0, sizeof b);
	size_t i;
	json_t *x;
	json_array_foreach(examples, i, x)
	{
		json_t *one = json_pack("{s:O,s:O}", "prompt", json_object_get(x, "prompt"),
					"completion", json_object_get(x, "completion"));
		char *s = json_dumps(one, JSON_COMPACT);
		util_buf_add(&b, s, strlen(s));
		util_buf_add(&b, "\n", 1);
		free(s);
		json_decref(one);
	}
	int rc = util_write_file(path, b.s ? b.s : "", b.len, e);
	util_buf_free(&b);
	return rc;
}

int trainee_train(struct trainee *t, const char *key, const char *base, const char *sft,
		  size_t n_examples, json_t *hyper, int64_t seed, const char *out, json_t **result,
		  struct ka_err *e)
{
	json_t *m = json_pack("{s:s,s:s,s:s,s:O,s:I,s:s}", "op", "train", "base", base, "examples",
			      sft, "hyper", hyper, "seed", (json_int_t)seed, "out", out);
	const char *ins[] = {sft, NULL}, *outs[] = {out, NULL};
	int ran = 0;
	*result = NULL;
	int rc = engine_call(&t->en, t->r->d.j, key, t->dir_engine, m, ins, outs, result, &ran, e);
	t->calls_run += ran;
	if (!rc && !t->r->o->quiet)
		fprintf(stderr, "ka: %s: %s on %zu examples (%s, final loss %.4g)\n", key,
			ran ? "trained" : "journaled", n_examples,
			json_string_value(json_object_get(*result, "method")),
			json_number_value(json_object_get(*result, "final_loss")));
	json_decref(m);
	return rc;
}

struct round_budget trainee_allowance(const struct trainee *t, int rounds)
{
	struct round_budget b;
	b.requests = (int64_t)t->k * (t->r->heldout.n + t->r->train.n) * (rounds + 1);
	b.checks = b.requests;
	b.tokens = b.requests * t->r->o->max_tokens;
	return b;
}

json_t *trainee_model_json(const struct trainee *t, const char *spec)
{
	const char *slash = strrchr(spec, '/');
	return json_pack("{s:s,s:s,s:s,s:s}", "spec", spec, "backend", t->en.name, "name",
			 slash && slash[1] ? slash + 1 : spec, "kind", "open");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

double trainee_diversity(const json_t *examples)
{
	size_t n = 0, cap = 0, i;
	uint64_t *h = NULL;
	json_t *x;
	json_array_foreach(examples, i, x)
	{
		const char *s = json_string_value(json_object_get(x, "completion"));
		size_t len = s ? strlen(s) : 0;
		for (size_t k = 0; k + 4 <= len; k++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				h = xrealloc(h, cap * sizeof *h);
			}
			h[n++] = util_hash64(s + k, 4, 7);
		}
	}
	if (!n)
		return -1;
	size_t d = 0;
	qsort(h, n, sizeof *h, cmp_u64);
	for (size_t a = 0; a < n; a++)
		if (!a || h[a] != h[a - 1])
			d++;
	free(h);
	return (double)d / (double)n;
}
