/* track_controls.c: the non-recursive controls (see track.h,
 * docs/procedures.md): the shipped procedures best_of_k, self_refine and
 * retrieval, frozen, each solving every held-out task at the same budget
 * with the same grader. The retrieval archive is the train split's shipped
 * solutions for the target (verified kernels of train tasks only). Each
 * solve is a journaled unit (round.h), so a killed run continues. The
 * scorecard (track controls) holds each method's held-out mean C, the
 * paired differences between methods, and the recursion gain against a
 * weight-RSI scorecard of the same model when one is given. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "procrun.h"
#include "prompt.h"
#include "scorecard.h"
#include "track.h"

#define N_METHODS 3
static const char *const methods[N_METHODS] = {"best_of_k", "self_refine", "retrieval"};

struct ctrack {
	struct procrun r;
	struct procedure p[N_METHODS];
	double *score[N_METHODS];
	struct round_budget used[N_METHODS];
	struct procedure_archive_entry *ar;
	char **ar_code;
	int n_ar;
	json_t *rsi; /* the weight-RSI scorecard, or NULL */
};

static void ct_free(struct ctrack *t)
{
	for (int m = 0; m < N_METHODS; m++) {
		procedure_free(&t->p[m]);
		free(t->score[m]);
	}
	for (int i = 0; i < t->n_ar; i++)
		free(t->ar_code[i]);
	free(t->ar);
	free(t->ar_code);
	json_decref(t->rsi);
	procrun_free(&t->r);
}

/* The train tasks' shipped solutions for the target, as the archive. */
static void load_archive(struct ctrack *t)
{
	const struct procrun_split *s = &t->r.train;
	t->ar = xcalloc((size_t)s->n + 1, sizeof *t->ar);
	t->ar_code = xcalloc((size_t)s->n + 1, sizeof *t->ar_code);
	for (int i = 0; i < s->n; i++) {
		char *path = xasprintf("%s/solutions/%s%s", s->t[i]->dir,
				       !strcmp(t->r.target, "cuda") ? "cuda" : "opencl",
				       prompt_source_ext(t->r.target));
		char *code = NULL;
		size_t len;
		struct ka_err e;
		if (util_read_file(path, (size_t)1 << 20, &code, &len, &e) == 0) {
			t->ar_code[t->n_ar] = code;
			t->ar[t->n_ar++] = (struct procedure_archive_entry){
				.task = s->t[i]->name,
				.description = s->t[i]->description,
				.code = code,
				.score = 1,
			};
		}
		free(path);
	}
}

static int ct_prepare(struct ctrack *t, const struct procedure_opts *o)
{
	if (procrun_prepare(&t->r, o, "controls"))
		return -1;
	struct ka_err e;
	char *root = o->procedures ? xstrdup(o->procedures)
				   : xasprintf("%s/procedures", util_data_root());
	struct luabox_limits lim = {
		.instructions = o->lua_instructions, .memory = o->lua_memory, .wall_s = 10};
	int rc = 0;
	for (int m = 0; m < N_METHODS && !rc; m++) {
		char *dir = xasprintf("%s/%s", root, methods[m]);
		char why[600];
		if (procedure_load(dir, &t->p[m], &e)) {
			procrun_fail(&t->r, "%s", e.msg);
			rc = -1;
		} else if (procedure_validate(&t->p[m], &lim, why, sizeof why)) {
			procrun_fail(&t->r, "%s: %s", dir, why);
			rc = -1;
		}
		free(dir);
		t->score[m] = xcalloc((size_t)t->r.heldout.n + 1, sizeof *t->score[m]);
	}
	free(root);
	if (rc)
		return -1;
	if (o->rsi_scorecard) {
		t->rsi = scorecard_check_file(o->rsi_scorecard, &e);
		if (!t->rsi) {
			procrun_fail(&t->r, "--rsi-scorecard: %s", e.msg);
			return -1;
		}
		const char *tr = json_string_value(json_object_get(t->rsi, "track"));
		const char *mn = json_string_value(
			json_object_get(json_object_get(t->rsi, "model"), "name"));
		char name[256];
		procrun_model_name(o->model, name, sizeof name);
		if (strcmp(tr, "weight_rsi")) {
			procrun_fail(&t->r, "--rsi-scorecard: %s is a %s scorecard, not weight_rsi",
				     o->rsi_scorecard, tr);
			return -1;
		}
		if (strcmp(mn, name)) {
			procrun_fail(
				&t->r,
				"--rsi-scorecard: %s is of model '%s', not '%s' (the recursion "
				"gain compares one model with itself)",
				o->rsi_scorecard, mn, name);
			return -1;
		}
	}
	load_archive(t);
	struct round_budget allow[N_METHODS];
	for (int m = 0; m < N_METHODS; m++) {
		allow[m] = t->r.per_solve;
		allow[m].requests *= t->r.heldout.n;
		allow[m].checks *= t->r.heldout.n;
		allow[m].tokens *= t->r.heldout.n;
	}
	if (round_budgets_equal(allow, (const char *const *)methods, N_METHODS, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	return 0;
}

static int ct_solve(struct ctrack *t)
{
	struct procrun *r = &t->r;
	struct ka_err e;
	for (int m = 0; m < N_METHODS; m++) {
		for (int i = 0; i < r->heldout.n; i++) {
			char key[ROUND_KEY_MAX];
			round_key(key, sizeof key, 0, methods[m], "heldout", r->heldout.t[i]->name);
			int retr = !strcmp(methods[m], "retrieval");
			json_t *oc;
			if (procrun_unit(r, key, 0, &t->p[m], &r->heldout, i, retr ? t->ar : NULL,
					 retr ? t->n_ar : 0, 1, &oc, &e)) {
				procrun_fail(r, "%s: %s", key, e.msg);
				return -1;
			}
			t->score[m][i] = json_number_value(json_object_get(oc, "score"));
			struct round_budget u;
			procrun_used(oc, &u);
			round_budget_add(&t->used[m], &u);
			json_decref(oc);
		}
		if (!r->o->quiet)
			fprintf(stderr, "ka: %s: %d held-out tasks solved\n", methods[m],
				r->heldout.n);
	}
	return 0;
}

static json_t *ct_scorecard(struct ctrack *t)
{
	struct procrun *r = &t->r;
	const struct procedure_opts *o = r->o;
	int nh = r->heldout.n;
	json_t *sc = procrun_scorecard_base(r, "controls");
	struct metrics_figure f[N_METHODS];
	json_t *sum = json_object();
	json_object_set_new(sum, "budget", json_integer(o->budget));
	double best = -1;
	int bi = 0;
	json_t *used = json_object();
	for (int m = 0; m < N_METHODS; m++) {
		round_mean_figure(t->score[m], nh, (uint64_t)o->seed + (uint64_t)m, &f[m]);
		json_object_set_new(sum, methods[m], scorecard_figure_json(&f[m]));
		json_object_set_new(used, methods[m], round_budget_json(&t->used[m]));
		if (f[m].value > best) {
			best = f[m].value;
			bi = m;
		}
	}
	json_t *diffs = json_object();
	for (int a = 0; a < N_METHODS; a++)
		for (int b = a + 1; b < N_METHODS; b++) {
			struct metrics_figure d;
			round_paired_diff(t->score[a], t->score[b], nh,
					  (uint64_t)o->seed + 101 + (uint64_t)(a * 3 + b), &d);
			char name[64];
			snprintf(name, sizeof name, "%s_minus_%s", methods[a], methods[b]);
			json_object_set_new(diffs, name, scorecard_figure_json(&d));
		}
	if (t->rsi) {
		struct metrics_figure c;
		scorecard_figure_get(json_object_get(json_object_get(t->rsi, "summary"), "c_final"),
				     &c);
		struct metrics_figure g = {1, c.value - best, c.lo - f[bi].hi, c.hi - f[bi].lo};
		if (g.lo < -1)
			g.lo = -1;
		if (g.hi > 1)
			g.hi = 1;
		json_object_set_new(sum, "weight_rsi_c", scorecard_figure_json(&c));
		json_object_set_new(sum, "recursion_gain", scorecard_figure_json(&g));
		json_object_set_new(sum, "rsi_scorecard", json_string(o->rsi_scorecard));
	} else {
		json_object_set_new(sum, "weight_rsi_c", json_null());
		json_object_set_new(sum, "recursion_gain", json_null());
	}
	struct round_budget allow = r->per_solve;
	allow.requests *= nh;
	allow.checks *= nh;
	allow.tokens *= nh;
	json_object_set_new(sum, "budget_allowed", round_budget_json(&allow));
	json_object_set_new(sum, "budget_used", used);
	json_object_set_new(sum, "differences", diffs);
	json_object_set_new(sum, "best_control", json_string(methods[bi]));
	json_object_set_new(sum, "n_heldout", json_integer(nh));
	json_object_set_new(sum, "n_archive", json_integer(t->n_ar));
	json_object_set_new(sc, "summary", sum);
	return sc;
}

int track_controls_run(const struct procedure_opts *o)
{
	struct ctrack t;
	memset(&t, 0, sizeof t);
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	if (ct_prepare(&t, o))
		goto out;
	json_t *args = procrun_identity(&t.r);
	for (int m = 0; m < N_METHODS; m++) {
		char ph[17];
		procedure_hash(&t.p[m], ph);
		json_object_set_new(args, methods[m], json_string(ph));
	}
	rc = procrun_open(&t.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	if (ct_solve(&t))
		goto out;
	json_t *sc = ct_scorecard(&t);
	char *path = NULL;
	if (procrun_write_scorecard(&t.r, sc, &path) == 0) {
		printf("scorecard: %s\n", path);
		if (!o->quiet) {
			const json_t *s = json_object_get(sc, "summary");
			for (int m = 0; m < N_METHODS; m++) {
				struct metrics_figure f;
				scorecard_figure_get(json_object_get(s, methods[m]), &f);
				printf("  %-12s mean C %.3f [%.3f, %.3f]\n", methods[m], f.value,
				       f.lo, f.hi);
			}
			printf("  model requests sent by this process: %d\n", t.r.sent);
		}
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	ct_free(&t);
	return rc;
}
