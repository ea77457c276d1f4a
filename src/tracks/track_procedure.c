/* track_procedure.c: track 3, procedure RSI (see track.h,
 * docs/procedures.md). Two arms over R rounds:
 *   self    its procedure is rewritten by the model after every round
 *   frozen  keeps the round-0 procedure
 * Round r: both arms solve every held-out task with their procedure at the
 * same budget (Q = mean score over held-out tasks; at round 0 both arms hold
 * the same procedure and share one evaluation); then, for r < R, the self
 * arm solves the train split (verified kernels go to its archive), the
 * model is shown the procedure's files and the train evidence (never a
 * held-out result) and returns new files; an edit that does not apply,
 * parse, stay in its caps or pass a dry run on one train task is rejected
 * with its reason and the old procedure goes on. Every unit is journaled
 * (round.h): the same command continues a killed run. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "procrun.h"
#include "prompt.h"
#include "scorecard.h"
#include "track.h"

struct ptrack {
	struct procrun r;
	struct procedure p0, cur;
	char *edit_tmpl;
	int R, nh;
	double *q_self, *q_frozen;			      /* [(R + 1) * nh] */
	struct round_budget *use_self, *use_frozen, *improve; /* [R + 1] */
	char (*hash)[17];				      /* self procedure per round */
	json_t *edits;					      /* per round: the edit outcome */
	/* the self arm's archive: verified train kernels */
	struct procedure_archive_entry *ar;
	json_t **ar_code; /* the outcomes the entries borrow from */
	int n_ar;
};

static void pt_free(struct ptrack *t)
{
	procedure_free(&t->p0);
	procedure_free(&t->cur);
	free(t->edit_tmpl);
	free(t->q_self);
	free(t->q_frozen);
	free(t->use_self);
	free(t->use_frozen);
	free(t->improve);
	free(t->hash);
	json_decref(t->edits);
	for (int i = 0; i < t->n_ar; i++)
		json_decref(t->ar_code[i]);
	free(t->ar);
	free(t->ar_code);
	procrun_free(&t->r);
}

static void say(const struct ptrack *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct ptrack *t, const char *fmt, ...)
{
	if (t->r.o->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("ka: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Add a verified train kernel (one entry per task: a better score replaces). */
static void archive_add(struct ptrack *t, const struct ka_task *task, json_t *oc)
{
	double score = json_number_value(json_object_get(oc, "score"));
	const char *code = json_string_value(json_object_get(oc, "code"));
	if (!code || !json_is_true(json_object_get(oc, "ok")))
		return;
	for (int i = 0; i < t->n_ar; i++)
		if (!strcmp(t->ar[i].task, task->name)) {
			if (score <= t->ar[i].score)
				return;
			json_decref(t->ar_code[i]);
			t->ar_code[i] = json_incref(oc);
			t->ar[i].code = code;
			t->ar[i].score = score;
			return;
		}
	t->ar = xrealloc(t->ar, (size_t)(t->n_ar + 1) * sizeof *t->ar);
	t->ar_code = xrealloc(t->ar_code, (size_t)(t->n_ar + 1) * sizeof *t->ar_code);
	t->ar_code[t->n_ar] = json_incref(oc);
	t->ar[t->n_ar++] = (struct procedure_archive_entry){
		.task = task->name, .description = task->description, .code = code, .score = score};
}

/* The archive index (archive.json) and the kernels under OUT/archive/. */
static char *archive_index(const struct ptrack *t)
{
	json_t *a = json_array();
	struct ka_err e;
	char *dir = xasprintf("%s/archive", t->r.o->out);
	util_mkdirs(dir, &e);
	for (int i = 0; i < t->n_ar; i++) {
		char *rel =
			xasprintf("archive/%s%s", t->ar[i].task, prompt_source_ext(t->r.target));
		char *path = xasprintf("%s/%s", t->r.o->out, rel);
		util_write_file(path, t->ar[i].code, strlen(t->ar[i].code), &e);
		json_array_append_new(a, json_pack("{s:s,s:f,s:s}", "task", t->ar[i].task, "score",
						   t->ar[i].score, "path", rel));
		free(rel);
		free(path);
	}
	free(dir);
	char *s = json_dumps(a, JSON_INDENT(2));
	json_decref(a);
	return s;
}

static int save_version(struct ptrack *t, const char *arm, int round, struct procedure *p)
{
	struct ka_err e;
	if (!strcmp(arm, "self")) {
		free(p->archive);
		p->archive = archive_index(t);
	}
	char *dir = xasprintf("%s/procedures/%s/r%d", t->r.o->out, arm, round);
	int rc = procedure_save(p, dir, &e);
	free(dir);
	if (rc)
		procrun_fail(&t->r, "%s", e.msg);
	return rc;
}

/* ---- one round's pieces ---------------------------------------------------- */

static int eval_heldout(struct ptrack *t, int round)
{
	struct procrun *r = &t->r;
	struct ka_err e;
	for (int i = 0; i < t->nh; i++) {
		for (int arm = 0; arm < 2; arm++) {
			if (round == 0 && arm == 1)
				break;
			char key[ROUND_KEY_MAX];
			round_key(key, sizeof key, round,
				  round == 0 ? "both"
				  : arm	     ? "frozen"
					     : "self",
				  "heldout", r->heldout.t[i]->name);
			const struct procedure *p = arm ? &t->p0 : &t->cur;
			json_t *oc;
			/* The frozen arm keeps round 0's procedure and its (empty)
			 * archive; the self arm's archive grows. */
			if (procrun_unit(r, key, round * 1000, p, &r->heldout, i,
					 arm ? NULL : t->ar, arm ? 0 : t->n_ar, 1, &oc, &e)) {
				procrun_fail(r, "%s: %s", key, e.msg);
				return -1;
			}
			double s = json_number_value(json_object_get(oc, "score"));
			struct round_budget u;
			procrun_used(oc, &u);
			size_t at = (size_t)round * t->nh + i;
			if (arm == 0) {
				t->q_self[at] = s;
				round_budget_add(&t->use_self[round], &u);
			}
			if (arm == 1 || round == 0) {
				t->q_frozen[at] = s;
				round_budget_add(&t->use_frozen[round], &u);
			}
			if (r->o->verbose)
				say(t, "%s: %s (score %.2f)", key,
				    json_string_value(json_object_get(oc, "verdict")), s);
			json_decref(oc);
		}
	}
	return 0;
}

/* The self arm on the train split: the round's evidence, and the archive. */
static int solve_train(struct ptrack *t, int round, struct util_buf *ev)
{
	struct procrun *r = &t->r;
	struct ka_err e;
	int n_ok = 0;
	util_buf_printf(ev,
			"Round %d on the train split: %d tasks, budget %d generations and %d "
			"checks per task.\n",
			round, r->train.n, r->o->budget, r->o->budget);
	for (int i = 0; i < r->train.n; i++) {
		char key[ROUND_KEY_MAX];
		round_key(key, sizeof key, round, "self", "train", r->train.t[i]->name);
		json_t *oc;
		if (procrun_unit(r, key, round * 1000, &t->cur, &r->train, i, t->ar, t->n_ar, 1,
				 &oc, &e)) {
			procrun_fail(r, "%s: %s", key, e.msg);
			return -1;
		}
		struct round_budget u;
		procrun_used(oc, &u);
		round_budget_add(&t->improve[round], &u);
		int ok = json_is_true(json_object_get(oc, "ok"));
		n_ok += ok;
		const json_t *sp = json_object_get(oc, "speedup_eager");
		util_buf_printf(ev, "- task %s: %s, verdict %s, score %.2f", r->train.t[i]->name,
				ok ? "ok" : "FAILED",
				json_string_value(json_object_get(oc, "verdict")),
				json_number_value(json_object_get(oc, "score")));
		if (json_is_number(sp))
			util_buf_printf(ev, ", speedup vs eager %.2fx", json_number_value(sp));
		const char *st = json_string_value(json_object_get(oc, "status"));
		if (st && strcmp(st, "ok"))
			util_buf_printf(ev, ", the procedure stopped: %s",
					json_string_value(json_object_get(oc, "why")));
		const char *det = json_string_value(json_object_get(oc, "detail"));
		if (!ok && det && *det)
			util_buf_printf(ev, "\n  grader: %.300s", det);
		util_buf_printf(ev, " (used %lld generations, %lld checks)\n",
				(long long)u.requests, (long long)u.checks);
		archive_add(t, r->train.t[i], oc);
		json_decref(oc);
	}
	util_buf_printf(ev, "Verified on train this round: %d of %d. Archive: %d verified kernels",
			n_ok, r->train.n, t->n_ar);
	for (int i = 0; i < t->n_ar; i++)
		util_buf_printf(ev, "%s%s", i ? ", " : " (", t->ar[i].task);
	util_buf_puts(ev, t->n_ar ? ").\n" : ".\n");
	return 0;
}

static const char *allowed_files(const char *mode)
{
	return !strcmp(mode, "prompt")	     ? "prompt.md"
	       : !strcmp(mode, "strategies") ? "prompt.md, strategies.md"
					     : "prompt.md, strategies.md, procedure.lua";
}

static char *edit_prompt(const struct ptrack *t, const char *evidence)
{
	struct util_buf files = {0};
	const char *names[] = {"procedure.lua", "prompt.md", "strategies.md"};
	const char *vals[] = {t->cur.lua, t->cur.prompt, t->cur.strategies};
	for (int i = 0; i < 3; i++)
		util_buf_printf(&files, "=== file: %s ===\n%s%s=== end ===\n\n", names[i], vals[i],
				*vals[i] && vals[i][strlen(vals[i]) - 1] != '\n' ? "\n" : "");
	const char *keys[] = {"mode", "allowed", "files", "evidence"};
	const char *v[] = {t->r.o->mode, allowed_files(t->r.o->mode), files.s ? files.s : "",
			   evidence};
	char *s = procedure_subst(t->edit_tmpl, keys, v, 4);
	util_buf_free(&files);
	return s;
}

/* The edit of round `round`: accepted (t->cur replaced) or rejected. */
static int do_edit(struct ptrack *t, int round, const char *evidence)
{
	struct procrun *r = &t->r;
	struct ka_err e;
	char key[ROUND_KEY_MAX];
	round_key(key, sizeof key, round, "self", "edit", NULL);
	json_t *done = NULL;
	int have = round_unit_get(r->d.j, key, &done, &e);
	if (have < 0) {
		procrun_fail(r, "%s", e.msg);
		return -1;
	}
	char *prompt = edit_prompt(t, evidence);
	char *ppath = xasprintf("%s/procedures/self/r%d.edit-prompt.md", r->o->out, round);
	util_write_file(ppath, prompt, strlen(prompt), &e);
	free(ppath);
	struct journal_reply rep;
	int sent = 0, rc = -1;
	if (round_generate(r->d.j, r->m, key, round * 1000, prompt, NULL, &rep, &sent, &e)) {
		procrun_fail(r, "%s: %s", key, e.msg);
		free(prompt);
		json_decref(done);
		return -1;
	}
	free(prompt);
	r->sent += sent;
	t->improve[round].requests++;
	t->improve[round].tokens += rep.in_tokens + rep.out_tokens;
	if (!rep.ok) {
		procrun_fail(r, "%s: request failed: %s; run the same command again to continue",
			     key, rep.error ? rep.error : "?");
		goto out;
	}
	char *rpath = xasprintf("%s/procedures/self/r%d.edit-reply.md", r->o->out, round);
	util_write_file(rpath, rep.text, strlen(rep.text), &e);
	free(rpath);
	char why[600] = "";
	struct procedure next;
	int accepted = 0;
	struct luabox_limits lim = {.instructions = r->o->lua_instructions,
				    .memory = r->o->lua_memory,
				    .wall_s = r->o->lua_wall_s < 10 ? r->o->lua_wall_s : 10};
	char dkey[ROUND_KEY_MAX];
	round_key(dkey, sizeof dkey, round, "self", "dry", r->train.t[0]->name);
	if (done) {
		/* A decision already journaled stands: the edit is applied
		 * again only when it was accepted, and nothing is re-run. */
		accepted = json_is_true(json_object_get(done, "accepted"));
		const char *jw = json_string_value(json_object_get(done, "reason"));
		snprintf(why, sizeof why, "%s", jw ? jw : "rejected");
		json_t *dry = NULL;
		if (round_unit_get(r->d.j, dkey, &dry, &e) == 0) {
			struct round_budget u;
			procrun_used(dry, &u);
			round_budget_add(&t->improve[round], &u);
			json_decref(dry);
		}
		if (accepted) {
			char w2[600];
			if (procedure_apply_edit(&t->cur, rep.text, r->o->mode, &next, w2,
						 sizeof w2)) {
				procrun_fail(r, "%s: the journaled edit no longer applies: %s", key,
					     w2);
				goto out;
			}
			procedure_free(&t->cur);
			t->cur = next;
		}
	} else if (procedure_apply_edit(&t->cur, rep.text, r->o->mode, &next, why, sizeof why) ==
		   0) {
		if (procedure_validate(&next, &lim, why, sizeof why) == 0) {
			/* The dry run: the new version solves one train task
			 * (journaled like any unit; its submission is not
			 * graded). */
			json_t *oc;
			if (procrun_unit(r, dkey, round * 1000, &next, &r->train, 0, t->ar, t->n_ar,
					 0, &oc, &e)) {
				procrun_fail(r, "%s: %s", dkey, e.msg);
				procedure_free(&next);
				goto out;
			}
			struct round_budget u;
			procrun_used(oc, &u);
			round_budget_add(&t->improve[round], &u);
			const char *st = json_string_value(json_object_get(oc, "status"));
			if (strcmp(st, "ok"))
				snprintf(why, sizeof why, "dry run on %s: %s (%s)",
					 r->train.t[0]->name,
					 json_string_value(json_object_get(oc, "why")), st);
			else
				accepted = 1;
			json_decref(oc);
		}
		if (accepted) {
			procedure_free(&t->cur);
			t->cur = next;
		} else {
			procedure_free(&next);
		}
	}
	if (!accepted && !why[0])
		snprintf(why, sizeof why, "rejected");
	json_t *oc =
		json_pack("{s:b,s:s}", "accepted", accepted, "reason", accepted ? "accepted" : why);
	if (!done && round_unit_put(r->d.j, key, oc, &e)) {
		procrun_fail(r, "%s", e.msg);
		json_decref(oc);
		goto out;
	}
	json_array_append_new(t->edits, oc);
	say(t, "round %d: edit %s%s%s", round, accepted ? "accepted" : "rejected",
	    accepted ? "" : ": ", accepted ? "" : why);
	rc = 0;
out:
	journal_reply_free(&rep);
	json_decref(done);
	return rc;
}

/* ---- the scorecard ------------------------------------------------------------ */

static json_t *fig(const struct metrics_figure *f)
{
	return scorecard_figure_json(f);
}

static json_t *pt_scorecard(struct ptrack *t)
{
	struct procrun *r = &t->r;
	const struct procedure_opts *o = r->o;
	json_t *sc = procrun_scorecard_base(r, "procedure_rsi");
	json_t *rows = json_array();
	struct round_budget allow = r->per_solve;
	allow.requests *= t->nh;
	allow.checks *= t->nh;
	allow.tokens *= t->nh;
	uint64_t seed = (uint64_t)o->seed;
	struct metrics_figure qs = {0}, qf = {0}, d = {0}, q0 = {0};
	for (int k = 0; k <= t->R; k++) {
		const double *a = t->q_self + (size_t)k * t->nh,
			     *b = t->q_frozen + (size_t)k * t->nh;
		round_mean_figure(a, t->nh, seed + 2 * k, &qs);
		round_mean_figure(b, t->nh, seed + 2 * k + 1, &qf);
		round_paired_diff(a, b, t->nh, seed + 7919 + k, &d);
		if (k == 0)
			q0 = qs;
		json_t *self =
			json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "round", k, "arm", "self",
				  "q", fig(&qs), "q_minus_frozen", fig(&d), "budget_allowed",
				  round_budget_json(&allow), "budget_used",
				  round_budget_json(&t->use_self[k]), "improvement_spend",
				  round_budget_json(&t->improve[k]), "procedure", t->hash[k]);
		if (k > 0)
			json_object_set(self, "edit", json_array_get(t->edits, (size_t)k - 1));
		json_array_append_new(rows, self);
		json_array_append_new(
			rows, json_pack("{s:i,s:s,s:o,s:o,s:o,s:s}", "round", k, "arm", "frozen",
					"q", fig(&qf), "budget_allowed", round_budget_json(&allow),
					"budget_used", round_budget_json(&t->use_frozen[k]),
					"procedure", t->hash[0]));
	}
	json_object_set_new(sc, "rounds", rows);
	/* After the loop qs, qf and d are the last round's. */
	enum metrics_verdict v = metrics_rsi_verdict(&d, qs.value > q0.value);
	int accepted = 0;
	for (size_t i = 0; i < json_array_size(t->edits); i++)
		accepted += json_is_true(json_object_get(json_array_get(t->edits, i), "accepted"));
	json_t *sum = json_pack(
		"{s:s,s:i,s:o,s:o,s:o,s:s,s:s,s:i,s:i,s:i,s:i,s:i}", "mode", o->mode, "rounds",
		t->R, "q0", fig(&q0), "q_final", fig(&qs), "q_gain_vs_frozen", fig(&d), "verdict",
		metrics_verdict_name(v), "verdict_rule", ROUND_VERDICT_RULE, "budget_per_task",
		o->budget, "n_train", r->train.n, "n_heldout", t->nh, "edits_accepted", accepted,
		"edits_rejected", (int)json_array_size(t->edits) - accepted);
	json_object_set_new(sc, "summary", sum);
	return sc;
}

/* ---- the run ------------------------------------------------------------------ */

static int pt_prepare(struct ptrack *t, const struct procedure_opts *o)
{
	if (procrun_prepare(&t->r, o, "procedure"))
		return -1;
	struct ka_err e;
	char *root = xasprintf("%s/procedures", util_data_root());
	char *p0 = o->procedure ? xstrdup(o->procedure) : xasprintf("%s/one_shot", root);
	char *et = xasprintf("%s/edit.md", o->procedures ? o->procedures : root);
	size_t len;
	int rc = 0;
	char why[600];
	struct luabox_limits lim = {
		.instructions = o->lua_instructions, .memory = o->lua_memory, .wall_s = 10};
	if (procedure_load(p0, &t->p0, &e) ||
	    util_read_file(et, 1 << 20, &t->edit_tmpl, &len, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		rc = -1;
	} else if (procedure_validate(&t->p0, &lim, why, sizeof why)) {
		procrun_fail(&t->r, "%s: %s", p0, why);
		rc = -1;
	}
	free(root);
	free(p0);
	free(et);
	if (rc)
		return -1;
	t->R = o->rounds;
	t->nh = t->r.heldout.n;
	size_t nq = (size_t)(t->R + 1) * t->nh;
	t->q_self = xcalloc(nq, sizeof *t->q_self);
	t->q_frozen = xcalloc(nq, sizeof *t->q_frozen);
	t->use_self = xcalloc((size_t)t->R + 1, sizeof *t->use_self);
	t->use_frozen = xcalloc((size_t)t->R + 1, sizeof *t->use_frozen);
	t->improve = xcalloc((size_t)t->R + 1, sizeof *t->improve);
	t->hash = xcalloc((size_t)t->R + 1, sizeof *t->hash);
	t->edits = json_array();
	procedure_copy(&t->cur, &t->p0);
	/* Both arms evaluate with the same per-task allowance on the same
	 * tasks; refuse a run where that would not hold. */
	struct round_budget allow[2] = {t->r.per_solve, t->r.per_solve};
	for (int a = 0; a < 2; a++) {
		allow[a].requests *= t->nh;
		allow[a].checks *= t->nh;
		allow[a].tokens *= t->nh;
	}
	const char *arms[] = {"self", "frozen"};
	if (round_budgets_equal(allow, arms, 2, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	return 0;
}

static int pt_rounds(struct ptrack *t)
{
	for (int k = 0; k <= t->R; k++) {
		if (save_version(t, "self", k, &t->cur) ||
		    (k == 0 && save_version(t, "frozen", 0, &t->p0)))
			return -1;
		procedure_hash(&t->cur, t->hash[k]);
		if (eval_heldout(t, k))
			return -1;
		say(t, "round %d: held-out evaluated (%d tasks)", k, t->nh);
		if (k == t->R)
			break;
		struct util_buf ev = {0};
		int rc = solve_train(t, k, &ev) || do_edit(t, k, ev.s ? ev.s : "");
		util_buf_free(&ev);
		if (rc)
			return -1;
	}
	return 0;
}

int track_procedure_run(const struct procedure_opts *o)
{
	struct ptrack t;
	memset(&t, 0, sizeof t);
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	if (pt_prepare(&t, o))
		goto out;
	json_t *args = procrun_identity(&t.r);
	char ph[17];
	procedure_hash(&t.p0, ph);
	json_object_set_new(args, "procedure_hash", json_string(ph));
	json_object_set_new(args, "mode", json_string(o->mode));
	json_object_set_new(args, "rounds", json_integer(o->rounds));
	rc = procrun_open(&t.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	if (!o->quiet)
		say(&t, "procedure track in %s: %d train, %d held-out tasks, %d rounds, mode %s",
		    o->out, t.r.train.n, t.nh, t.R, o->mode);
	if (pt_rounds(&t))
		goto out;
	json_t *sc = pt_scorecard(&t);
	char *path = NULL;
	if (procrun_write_scorecard(&t.r, sc, &path) == 0) {
		const json_t *s = json_object_get(sc, "summary");
		printf("scorecard: %s\n", path);
		if (!o->quiet) {
			struct metrics_figure f[3];
			scorecard_figure_get(json_object_get(s, "q0"), &f[0]);
			scorecard_figure_get(json_object_get(s, "q_final"), &f[1]);
			scorecard_figure_get(json_object_get(s, "q_gain_vs_frozen"), &f[2]);
			printf("  Q0 %.3f, Q final %.3f, gain vs frozen %+.3f [%+.3f, %+.3f]: %s\n",
			       f[0].value, f[1].value, f[2].value, f[2].lo, f[2].hi,
			       json_string_value(json_object_get(s, "verdict")));
			printf("  model requests sent by this process: %d\n", t.r.sent);
		}
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	pt_free(&t);
	return rc;
}
