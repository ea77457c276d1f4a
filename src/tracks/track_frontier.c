/* track_frontier.c: track 5, the co-evolving frontier (docs/frontier.md).
 * The frontier starts as the train split of the bank (round.h's split; the
 * held-out split is only a novelty fence and never receives a proposal).
 * Each round the solver takes k samples of every frontier task, graded;
 * for every solved task the proposer is shown the task and a verified
 * solution and asked for harder variants; each proposal is validated
 * (frontier.h: reply, schema, dialect, confined gold, roofline floor and
 * ceiling, novelty, then "harder" measured from the solver's own samples)
 * and an accepted one joins the frontier, written under OUT/frontier/<name>
 * in the bank format with its lineage. Every model call, grade and
 * validation is a journaled unit (round.h), so a killed run continues. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bank.h"
#include "frontier.h"
#include "procrun.h"
#include "prompt.h"
#include "scorecard.h"
#include "track.h"

#define MAX_FRONTIER 4096
#define ROOF_BW 3.3e12	/* bytes/s of the roofline (H200-class HBM) */
#define ROOF_FLOPS 6e13 /* flop/s of the roofline (fp32 vector) */
#define ROOF_FLOOR 1e-6 /* the benchmark shape must take at least this long */
#define ROOF_CEIL 1.0	/* and at most this long */
/* The version of a validation outcome (OUT/frontier/validation.json, the
 * journal's validate units): 2 added each step's wall seconds "s", the
 * outcome's "wall_s" and the compile, degenerate and device baseline steps. */
#define FRONTIER_RECORD_VERSION 2

struct fentry {
	struct ka_task *t; /* owned unless seed (then borrowed from the split) */
	char *prompt;	   /* owned */
	char *parent;	   /* NULL for a seed task */
	int round;	   /* round it joined (-1 seed) */
	int own;
	/* the latest evaluation */
	double pass, mean, best;
	char *solution;
	int broken; /* its gold failed while samples were graded: off the frontier */
};

struct ftrack {
	struct procrun r;
	const struct frontier_opts *o;
	struct model *prop;
	char *tmpl;
	struct fentry *f;
	int n;
	json_t *rows, *log;
	int n_prop, n_acc;
	double fail_s; /* the wall seconds of the step that failed last */
};

static void ft_free(struct ftrack *t)
{
	for (int i = 0; i < t->n; i++) {
		if (t->f[i].own)
			task_free(t->f[i].t);
		free(t->f[i].prompt);
		free(t->f[i].parent);
		free(t->f[i].solution);
	}
	free(t->f);
	free(t->tmpl);
	model_close(t->prop);
	json_decref(t->rows);
	json_decref(t->log);
	procrun_free(&t->r);
}

/* k samples of task t by the solver as unit key: pass rate, mean and best
 * score, the first verified source. 0, -1 (reported: the run stops) or -2
 * when the task is broken (round_grade_code's -2: its gold, computed
 * confined, ran over its deadline, died or answered garbage; why gets the
 * evidence, no solution is kept). */
static int solve(struct ftrack *ft, const struct ka_task *t, const char *prompt, const char *key,
		 double *pass, double *mean, double *best, char **solution, char *why, size_t cap)
{
	struct procrun *r = &ft->r;
	int k = ft->o->k, n_ok = 0;
	double sum = 0;
	*best = 0;
	if (solution)
		*solution = NULL;
	for (int s = 0; s < k; s++) {
		struct journal_reply rep;
		struct ka_err e;
		int sent = 0;
		if (round_generate(r->d.j, r->m, key, s, prompt, prompt_extract_lang(r->target),
				   &rep, &sent, &e)) {
			procrun_fail(r, "%s: %s", key, e.msg);
			return -1;
		}
		r->sent += sent;
		if (!rep.ok) {
			procrun_fail(r, "%s: request failed: %s (run the same command again)", key,
				     rep.error ? rep.error : "?");
			journal_reply_free(&rep);
			return -1;
		}
		if (rep.code) {
			struct round_grade g;
			int fresh;
			int x = round_grade_code(r->d.j, r->gs, r->start_id, t, rep.code, &g,
						 &fresh, &e);
			if (x == -2) {
				snprintf(why, cap, "%s", e.msg);
				journal_reply_free(&rep);
				if (solution) {
					free(*solution);
					*solution = NULL;
				}
				return -2;
			}
			if (x) {
				procrun_fail(r, "%s: the grader failed: %s", key, e.msg);
				journal_reply_free(&rep);
				return -1;
			}
			if (g.ok) {
				n_ok++;
				if (solution && !*solution)
					*solution = xstrdup(rep.code);
			}
			sum += g.score;
			if (g.score > *best)
				*best = g.score;
			round_grade_free(&g);
		}
		journal_reply_free(&rep);
	}
	*pass = (double)n_ok / k;
	*mean = sum / k;
	return 0;
}

static void add_entry(struct ftrack *ft, struct ka_task *t, char *prompt, const char *parent,
		      int round, int own)
{
	if (ft->n % 64 == 0)
		ft->f = xrealloc(ft->f, sizeof *ft->f * (size_t)(ft->n + 64));
	ft->f[ft->n++] = (struct fentry){.t = t,
					 .prompt = prompt,
					 .parent = parent ? xstrdup(parent) : NULL,
					 .round = round,
					 .own = own};
}

/* The proposer's prompt for frontier entry p, proposal number idx of n. */
static char *proposer_prompt(const struct ftrack *ft, const struct fentry *p, int idx, int n)
{
	char *tj = NULL, *path = xasprintf("%s/task.json", p->t->dir);
	size_t len;
	struct ka_err e;
	if (util_read_file(path, 1 << 20, &tj, &len, &e))
		tj = xstrdup("{}");
	free(path);
	char *s = xasprintf(
		"# Frontier proposal request\n\n"
		"# Proposal %d of %d for task %s\n\n"
		"A solver model solved the task below; its verified solution follows. Write a\n"
		"strictly HARDER variant of it (new shapes, a fused op, a stricter tolerance, a\n"
		"different dtype, an added masking or indexing twist) that a solver is less\n"
		"likely to get right or fast. Reply with the new task.json in one ```json block\n"
		"(docs/task-format.md; a new name of [a-z0-9_]) and its single-source reference\n"
		"in one ```c block, in the reference dialect: #include \"ka_ref.h\" and one\n"
		"function `ref`, for loops with a visible bound only, no pointers but the\n"
		"tensors, no calls but the math functions. A baseline block is optional and\n"
		"will be replaced by the naive kernel derived from your reference.\n\n"
		"## task.json\n```json\n%s\n```\n\n## ref.c\n```c\n%s```\n\n"
		"## A verified solution (%s)\n```%s\n%s```\n",
		idx + 1, n, p->t->name, tj, p->t->ref_src, ft->r.target,
		prompt_fence_lang(ft->r.target), p->solution ? p->solution : "");
	free(tj);
	return s;
}

/* Append step name's outcome to rec: passed (ok), why, and its wall
 * seconds s (record version 2). */
static void step(json_t *rec, const char *name, int ok, const char *why, double s)
{
	json_array_append_new(rec, json_pack("{s:s,s:b,s:s,s:f}", "step", name, "ok", ok, "why",
					     why ? why : "", "s", s));
}

static int write_text(const char *dir, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct ka_err e;
	int rc = util_write_file(p, text, strlen(text), &e);
	free(p);
	return rc;
}

static int mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

/* The proposer's reply idx for entry pi in round rn (journaled: asked once)
 * into rep (the caller frees it). 0, or -1 when the run must stop (reported). */
static int fetch_proposal(struct ftrack *ft, int pi, int rn, int idx, struct journal_reply *rep)
{
	struct procrun *r = &ft->r;
	struct ka_err e;
	char pkey[ROUND_KEY_MAX];
	round_key(pkey, sizeof pkey, rn, "proposer", "propose", ft->f[pi].t->name);
	char *prompt = proposer_prompt(ft, &ft->f[pi], idx, ft->o->proposals);
	int sent = 0;
	if (round_generate(r->d.j, ft->prop, pkey, idx, prompt, NULL, rep, &sent, &e)) {
		free(prompt);
		procrun_fail(r, "%s: %s", pkey, e.msg);
		return -1;
	}
	free(prompt);
	r->sent += sent;
	if (!rep->ok) {
		procrun_fail(r, "%s: proposer request failed: %s (run the same command again)",
			     pkey, rep->error ? rep->error : "?");
		journal_reply_free(rep);
		return -1;
	}
	return 0;
}

/* Write an accepted variant into the frontier bank, OUT/frontier/<name>, with
 * its lineage (the validation record rec). Failures are reported, not fatal. */
static void accept_variant(struct ftrack *ft, int pi, int rn, const struct ka_task *t,
			   const struct frontier_proposal *p, json_t *rec)
{
	const struct frontier_opts *o = ft->o;
	char *fd = xasprintf("%s/frontier/%s", o->p.out, t->name);
	json_t *lin = json_pack("{s:s,s:i,s:s,s:s,s:O}", "parent", ft->f[pi].t->name, "round", rn,
				"proposer", o->proposer, "split", "frontier (never held-out)",
				"validation", rec);
	char *ls = json_dumps(lin, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (mkdirs(fd) || write_text(fd, "task.json", p->task_json) ||
	    write_text(fd, "ref.c", p->ref_c) || write_text(fd, "lineage.json", ls))
		fprintf(stderr, "ka --track frontier: cannot write %s\n", fd);
	free(ls);
	json_decref(lin);
	free(fd);
	if (!o->p.quiet)
		fprintf(stderr, "ka --track frontier: r%d: %s joins the frontier (parent %s)\n", rn,
			t->name, ft->f[pi].t->name);
}

/* The proposed baseline for this run's target, graded as a candidate of t
 * (recorded and replayed like any model code, never trusted); dropped
 * either way: the grader's baseline is the naive kernel derived from ref.c.
 * why gets what happened. 0, or -2 when grading it found the task broken
 * (its confined gold failed: why has the evidence). */
static int grade_proposed_baseline(struct ftrack *ft, const struct ka_task *t,
				   const struct frontier_proposal *p, char *why, size_t cap)
{
	struct procrun *r = &ft->r;
	const char *b = !strcmp(r->target, "cuda") ? p->baseline_cuda : p->baseline_opencl;
	const char *drop = "replaced by the naive kernel derived from ref.c";
	if (!b) {
		snprintf(why, cap, "%s; %s",
			 p->baseline ? "proposed baseline dropped (not for this target)"
				     : "none proposed",
			 drop);
		return 0;
	}
	struct round_grade g;
	int fresh;
	struct ka_err e;
	int x = round_grade_code(r->d.j, r->gs, r->start_id, t, b, &g, &fresh, &e);
	if (x == -2) {
		snprintf(why, cap, "grading the proposed baseline: %s", e.msg);
		return -2;
	}
	if (x) {
		snprintf(why, cap,
			 "proposed baseline dropped; the grader failed on it (%.300s); %s", e.msg,
			 drop);
		return 0;
	}
	snprintf(why, cap,
		 "proposed baseline dropped; graded as a candidate on the device: %s%s%s; %s",
		 g.verdict, g.phase[0] ? " at " : "", g.phase, drop);
	round_grade_free(&g);
	return 0;
}

/* The confined compile and gold steps (frontier_gold_confined): compile for
 * every target, gold, degenerate. NULL when all pass, else the failed step. */
static const char *check_gold(struct ftrack *ft, const char *dir, json_t *rec, char *why,
			      size_t cap)
{
	struct bank_tools tools;
	bank_tools_find(&tools);
	const char *nvcc = !strcmp(ft->r.target, "cuda") ? tools.nvcc : NULL;
	double cs, gs;
	int v = frontier_gold_confined(dir, tools.clc, nvcc, ft->o->gold_wall_s, why, cap, &cs,
				       &gs);
	ft->fail_s = v == 2 || (v == 3 && gs == 0) ? cs : gs;
	if (v == 2 || (v == 3 && gs == 0))
		return "compile";
	if (v == 3) {
		step(rec, "compile", 1, NULL, cs);
		return "gold";
	}
	if (v == 1) {
		step(rec, "compile", 1, NULL, cs);
		return "degenerate";
	}
	/* The gold line ends with the device compiles the child did. */
	char what[128];
	const char *ocl = strstr(why, " (OpenCL skipped");
	int ocl_len = ocl ? (int)strcspn(ocl, ")") + 1 : 0;
	snprintf(what, sizeof what, "C%s%.*s%s", ocl ? "" : ", OpenCL C",
		 ocl_len > 80 ? 80 : ocl_len, ocl ? ocl : "",
		 strstr(why, "; CUDA sm_90a") ? ", CUDA sm_90a" : "");
	step(rec, "compile", 1, what, cs);
	step(rec, "gold", 1, why, gs);
	step(rec, "degenerate", 1, "checked in the gold run (its seconds are the gold step's)", 0);
	return NULL;
}

/* The checks of a proposal that need no solver samples, in order: reply,
 * schema, dialect, compile, gold, degenerate (confined), baseline, runtime,
 * novelty (grade_gold when grading the proposed baseline found the gold
 * broken). Parses text into p, writes it under dir with a lineage file
 * naming parent, loads it into *tp (the caller frees both), appends each
 * passed step to rec with its seconds.
 * NULL when all pass, else the failed step's name with why (cap bytes)
 * filled and its seconds in ft->fail_s. */
static const char *check_proposal(struct ftrack *ft, const char *parent, const char *text,
				  const char *dir, struct frontier_proposal *p, struct ka_task **tp,
				  json_t *rec, char *why, size_t cap)
{
	struct procrun *r = &ft->r;
	struct ka_err e;
	double t0 = util_now();
	ft->fail_s = 0;
	if (frontier_parse(text, p, why, cap))
		return "reply";
	util_rmtree(dir);
	/* The lineage file marks the folder as a model's work wherever it is
	 * used later (bank_trust: its gold is never trusted). */
	json_t *lj = json_pack("{s:s,s:s,s:s}", "parent", parent, "proposer", ft->o->proposer,
			       "split", "proposal (validated or refused: validation.json)");
	char *lin = json_dumps(lj, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(lj);
	int werr = mkdirs(dir) || write_text(dir, "task.json", p->task_json) ||
		   write_text(dir, "ref.c", p->ref_c) || write_text(dir, BANK_LINEAGE_FILE, lin);
	free(lin);
	if (werr) {
		snprintf(why, cap, "cannot write %s", dir);
		return "reply";
	}
	step(rec, "reply", 1, NULL, util_now() - t0);
	t0 = util_now();
	*tp = task_load(dir, &e);
	struct ka_task *t = *tp;
	ft->fail_s = util_now() - t0;
	if (!t) {
		snprintf(why, cap, "%s", e.msg);
		return "schema";
	}
	step(rec, "schema", 1, NULL, ft->fail_s);
	t0 = util_now();
	int bad = frontier_dialect_check(p->ref_c, why, cap);
	ft->fail_s = util_now() - t0;
	if (bad)
		return "dialect";
	step(rec, "dialect", 1, NULL, ft->fail_s);
	const char *failed = check_gold(ft, dir, rec, why, cap);
	if (failed)
		return failed;
	t0 = util_now();
	int bx = grade_proposed_baseline(ft, t, p, why, cap);
	ft->fail_s = util_now() - t0;
	if (bx == -2)
		return "grade_gold";
	step(rec, "baseline", 1, why, ft->fail_s);
	t0 = util_now();
	double s = frontier_roofline_s(t, ROOF_BW, ROOF_FLOPS);
	ft->fail_s = util_now() - t0;
	if (s < ROOF_FLOOR || s > ROOF_CEIL) {
		snprintf(why, cap,
			 "the benchmark shape's roofline time %.3g s is outside [%g, %g] s", s,
			 ROOF_FLOOR, ROOF_CEIL);
		return "runtime";
	}
	snprintf(why, cap, "roofline %.3g s", s);
	step(rec, "runtime", 1, why, ft->fail_s);
	t0 = util_now();
	struct ka_task **all = xcalloc((size_t)ft->n + 1, sizeof *all);
	for (int i = 0; i < ft->n; i++)
		all[i] = ft->f[i].t;
	int clash = frontier_novel(t, all, ft->n, "frontier", why, cap) ||
		    frontier_novel(t, r->heldout.t, r->heldout.n, "held-out", why, cap);
	free(all);
	ft->fail_s = util_now() - t0;
	if (clash)
		return "novelty";
	step(rec, "novelty", 1, NULL, ft->fail_s);
	return NULL;
}

/* Validate proposal idx for entry pi in round rn: the outcome as JSON
 * {parent, round, proposal, name, accepted, step, why, record[]}; NULL when
 * the run must stop (reported). */
static json_t *validate(struct ftrack *ft, int pi, int rn, int idx)
{
	struct procrun *r = &ft->r;
	const struct frontier_opts *o = ft->o;
	char key[ROUND_KEY_MAX], tag[128];
	snprintf(tag, sizeof tag, "%s#%d", ft->f[pi].t->name, idx);
	round_key(key, sizeof key, rn, "proposer", "validate", tag);
	json_t *done = NULL;
	struct ka_err e;
	int got = round_unit_get(r->d.j, key, &done, &e);
	if (got < 0) {
		procrun_fail(r, "%s: %s", key, e.msg);
		return NULL;
	}
	if (got == 0)
		return done;

	struct journal_reply rep;
	if (fetch_proposal(ft, pi, rn, idx, &rep))
		return NULL;
	json_t *rec = json_array();
	char why[2048] = "";
	const char *failed = NULL;
	struct frontier_proposal p;
	struct ka_task *t = NULL;
	char *dir = xasprintf("%s/proposals/r%d/%s/p%d", o->p.out, rn, ft->f[pi].t->name, idx);
	double pass = 0, mean = 0, best = 0, t_start = util_now();

	failed = check_proposal(ft, ft->f[pi].t->name, rep.text, dir, &p, &t, rec, why, sizeof why);
	if (failed)
		goto end;
	{
		struct ka_err pe;
		char *vp = prompt_render(ft->tmpl, t, r->target, &pe);
		if (!vp) {
			snprintf(why, sizeof why, "prompt: %s", pe.msg);
			ft->fail_s = 0;
			failed = "schema";
			goto end;
		}
		char vkey[ROUND_KEY_MAX];
		round_key(vkey, sizeof vkey, rn, "solver", "variant", tag);
		double t0 = util_now();
		int rc = solve(ft, t, vp, vkey, &pass, &mean, &best, NULL, why, sizeof why);
		ft->fail_s = util_now() - t0;
		free(vp);
		if (rc == -2) {
			failed = "grade_gold";
			goto end;
		}
		if (rc) {
			frontier_proposal_free(&p);
			task_free(t);
			free(dir);
			json_decref(rec);
			journal_reply_free(&rep);
			return NULL;
		}
		const struct fentry *pe_ = &ft->f[pi];
		int harder = pass < pe_->pass ||
			     (pass == pe_->pass && pass > 0 && best + 0.05 < pe_->best);
		snprintf(why, sizeof why,
			 "solver pass rate %.2f (parent %.2f), best score %.3f (parent %.3f)", pass,
			 pe_->pass, best, pe_->best);
		if (!harder) {
			failed = "harder";
			goto end;
		}
		step(rec, "harder", 1, why, ft->fail_s);
	}
end:;
	json_t *out = json_pack("{s:i,s:s,s:i,s:i,s:s,s:b,s:s,s:s,s:f,s:f,s:o}", "version",
				FRONTIER_RECORD_VERSION, "parent", ft->f[pi].t->name, "round", rn,
				"proposal", idx, "name", t ? t->name : "", "accepted", !failed,
				"step", failed ? failed : "accepted", "why", failed ? why : "",
				"pass_rate", pass, "wall_s", util_now() - t_start, "record", rec);
	if (failed) {
		step(rec, failed, 0, why, ft->fail_s);
		fprintf(stderr, "ka --track frontier: r%d proposal %d for %s rejected at %s: %s\n",
			rn, idx, ft->f[pi].t->name, failed, why);
	} else {
		accept_variant(ft, pi, rn, t, &p, rec);
	}
	frontier_proposal_free(&p);
	task_free(t);
	free(dir);
	journal_reply_free(&rep);
	if (round_unit_put(r->d.j, key, out, &e)) {
		procrun_fail(r, "%s: %s", key, e.msg);
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Load an accepted variant back from OUT/frontier/<name>. */
static int join(struct ftrack *ft, const char *name, const char *parent, int rn)
{
	struct ka_err e;
	char *fd = xasprintf("%s/frontier/%s", ft->o->p.out, name);
	struct ka_task *t = task_load(fd, &e);
	free(fd);
	if (!t) {
		procrun_fail(&ft->r, "frontier task %s: %s", name, e.msg);
		return -1;
	}
	char *p = prompt_render(ft->tmpl, t, ft->r.target, &e);
	if (!p) {
		task_free(t);
		procrun_fail(&ft->r, "frontier task %s: %s", name, e.msg);
		return -1;
	}
	add_entry(ft, t, p, parent, rn, 1);
	return 0;
}

/* Fold outcome oc's steps into acc: per step name {n, failed, s} (runs,
 * failures, wall seconds summed); oc's wall_s into *total. */
static void add_step_seconds(json_t *acc, const json_t *oc, double *total)
{
	size_t i;
	json_t *st;
	*total += json_number_value(json_object_get(oc, "wall_s"));
	json_array_foreach(json_object_get(oc, "record"), i, st)
	{
		const char *name = json_string_value(json_object_get(st, "step"));
		if (!name)
			continue;
		json_t *a = json_object_get(acc, name);
		if (!a) {
			a = json_pack("{s:i,s:i,s:f}", "n", 0, "failed", 0, "s", 0.0);
			json_object_set_new(acc, name, a);
		}
		json_object_set_new(a, "n",
				    json_integer(json_integer_value(json_object_get(a, "n")) + 1));
		if (!json_is_true(json_object_get(st, "ok")))
			json_object_set_new(
				a, "failed",
				json_integer(json_integer_value(json_object_get(a, "failed")) + 1));
		json_object_set_new(a, "s",
				    json_real(json_number_value(json_object_get(a, "s")) +
					      json_number_value(json_object_get(st, "s"))));
	}
}

/* The frontier's tasks that are not broken. */
static int live_count(const struct ftrack *ft)
{
	int n = 0;
	for (int i = 0; i < ft->n; i++)
		n += !ft->f[i].broken;
	return n;
}

/* Whether frontier entry f is broken: known from the journal (unit
 * "frontier/broken/<task>"), or found now (x == -2 from solve, why the
 * evidence), which journals it, writes OUT/frontier/<task>/broken.json and
 * says so on stderr. 1 broken, 0 not, -1 when the journal fails (reported). */
static int entry_broken(struct ftrack *ft, struct fentry *f, int rn, int x, const char *why)
{
	char key[ROUND_KEY_MAX];
	snprintf(key, sizeof key, "frontier/broken/%s", f->t->name);
	struct ka_err e;
	json_t *known = NULL;
	int got = x == -2 ? 1 : round_unit_get(ft->r.d.j, key, &known, &e);
	json_decref(known);
	if (got < 0 || got == 0) {
		if (got < 0)
			procrun_fail(&ft->r, "%s: %s", key, e.msg);
		return got < 0 ? -1 : (f->broken = 1);
	}
	if (x != -2)
		return 0;
	json_t *rec = json_pack("{s:s,s:i,s:s}", "task", f->t->name, "round", rn, "why", why);
	int bad = round_unit_put(ft->r.d.j, key, rec, &e);
	char *text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (f->own && text && write_text(f->t->dir, "broken.json", text))
		fprintf(stderr, "ka --track frontier: cannot write %s/broken.json\n", f->t->dir);
	free(text);
	json_decref(rec);
	if (bad) {
		procrun_fail(&ft->r, "%s: %s", key, e.msg);
		return -1;
	}
	fprintf(stderr, "ka --track frontier: r%d: %s leaves the frontier, broken: %s\n", rn,
		f->t->name, why);
	return f->broken = 1;
}

/* Round rn: evaluate the frontier (less its broken tasks); then, when
 * propose is set, ask for and validate variants of every solved task. */
static int run_round(struct ftrack *ft, int rn, int propose)
{
	const struct frontier_opts *o = ft->o;
	int n_entries = ft->n, solved = 0, prop = 0, acc = 0, live = 0;
	double *c = xcalloc((size_t)n_entries + 1, sizeof *c), pass_sum = 0, t_round = util_now();
	double t_eval = 0, val_s = 0;
	json_t *steps = json_object();
	for (int i = 0; i < n_entries; i++) {
		struct fentry *f = &ft->f[i];
		char key[ROUND_KEY_MAX], why[KA_ERRLEN] = "";
		round_key(key, sizeof key, rn, "solver", "frontier", f->t->name);
		free(f->solution);
		f->solution = NULL;
		int x = f->broken ? 1 : entry_broken(ft, f, rn, 0, NULL);
		if (!x) {
			x = solve(ft, f->t, f->prompt, key, &f->pass, &f->mean, &f->best,
				  &f->solution, why, sizeof why);
			if (x == -2)
				x = entry_broken(ft, f, rn, -2, why);
		}
		if (x < 0) {
			free(c);
			json_decref(steps);
			return -1;
		}
		if (f->broken)
			continue;
		c[live++] = f->mean;
		pass_sum += f->pass;
		solved += f->solution != NULL;
	}
	int n = live; /* the tasks evaluated: the broken ones are off the frontier */
	struct metrics_figure cf;
	round_mean_figure(c, n, (uint64_t)o->p.seed + (uint64_t)rn, &cf);
	free(c);
	t_eval = util_now() - t_round;
	/* Proposals for the tasks solved this round. */
	for (int i = 0; i < n_entries && propose; i++) {
		if (!ft->f[i].solution)
			continue;
		for (int q = 0; q < o->proposals; q++) {
			json_t *oc = validate(ft, i, rn, q);
			if (!oc) {
				json_decref(steps);
				return -1;
			}
			prop++;
			add_step_seconds(steps, oc, &val_s);
			json_array_append(ft->log, oc);
			if (json_is_true(json_object_get(oc, "accepted"))) {
				acc++;
				if (join(ft, json_string_value(json_object_get(oc, "name")),
					 ft->f[i].t->name, rn)) {
					json_decref(oc);
					json_decref(steps);
					return -1;
				}
			}
			json_decref(oc);
		}
	}
	ft->n_prop += prop;
	ft->n_acc += acc;
	json_t *row = json_pack("{s:i,s:s,s:o,s:i,s:f,s:i,s:i,s:i,s:i}", "round", rn, "arm", "self",
				"c", scorecard_figure_json(&cf), "frontier_size", n, "difficulty",
				n ? 1 - pass_sum / n : 0, "n_solved", solved, "proposals", prop,
				"accepted", acc, "frontier_after", live_count(ft));
	json_object_set_new(row, "wall_s", json_real(util_now() - t_round));
	json_object_set_new(row, "evaluate_s", json_real(t_eval));
	json_object_set_new(row, "validation", json_pack("{s:f,s:o}", "s", val_s, "steps", steps));
	json_array_append_new(ft->rows, row);
	if (!o->p.quiet)
		fprintf(stderr,
			"ka --track frontier: round %d: C %.3f on %d tasks, %d solved, %d "
			"proposals, %d accepted\n",
			rn, cf.value, n, solved, prop, acc);
	return 0;
}

static json_t *scorecard(struct ftrack *ft)
{
	struct procrun *r = &ft->r;
	const struct frontier_opts *o = ft->o;
	json_t *sc = procrun_scorecard_base(r, "frontier");
	json_object_set_new(sc, "k", json_integer(o->k));
	char name[256];
	json_object_set_new(sc, "proposer",
			    json_pack("{s:s,s:s,s:s,s:s}", "spec", o->proposer, "backend",
				      model_backend_name(ft->prop), "name",
				      procrun_model_name(o->proposer, name, sizeof name), "kind",
				      "closed"));
	json_object_set(sc, "rounds", ft->rows);
	size_t nr = json_array_size(ft->rows);
	struct metrics_figure c0, c1, d;
	json_t *first = json_array_get(ft->rows, 0), *last = json_array_get(ft->rows, nr - 1);
	scorecard_figure_get(json_object_get(first, "c"), &c0);
	scorecard_figure_get(json_object_get(last, "c"), &c1);
	/* The frontier changes between rounds, so the tasks are not paired: the
	 * conservative interval from the two CIs. */
	d = (struct metrics_figure){1, c1.value - c0.value, c1.lo - c0.hi, c1.hi - c0.lo};
	if (d.lo < -1)
		d.lo = -1;
	if (d.hi > 1)
		d.hi = 1;
	if (d.lo > d.value)
		d.lo = d.value;
	if (d.hi < d.value)
		d.hi = d.value;
	json_t *s = json_object();
	json_object_set_new(s, "rounds", json_integer((json_int_t)nr - 1));
	json_object_set_new(s, "c0", scorecard_figure_json(&c0));
	json_object_set_new(s, "c_final", scorecard_figure_json(&c1));
	json_object_set_new(s, "c_change", scorecard_figure_json(&d));
	json_object_set(s, "frontier_size0", json_object_get(first, "frontier_size"));
	json_object_set_new(s, "frontier_final", json_integer(live_count(ft)));
	json_object_set_new(s, "proposals", json_integer(ft->n_prop));
	json_object_set_new(s, "accepted", json_integer(ft->n_acc));
	json_object_set_new(s, "verdict",
			    json_string(d.lo > 0   ? "positive"
					: d.hi < 0 ? "negative"
						   : "no signal"));
	json_object_set_new(s, "verdict_rule",
			    json_string("positive when the CI of C(final round) - C(round 0) "
					"on the frontier lies above 0, negative below 0, else no "
					"signal"));
	json_object_set_new(sc, "summary", s);
	return sc;
}

int track_frontier_run(const struct frontier_opts *o)
{
	struct ftrack ft;
	memset(&ft, 0, sizeof ft);
	ft.o = o;
	ft.rows = json_array();
	ft.log = json_array();
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	struct ka_err e;
	if (procrun_prepare(&ft.r, &o->p, "frontier"))
		goto out;
	struct model_params mp;
	model_params_default(&mp);
	mp.temperature = o->p.temperature;
	mp.max_tokens = o->p.max_tokens;
	ft.prop = model_open(o->proposer, &mp, &e);
	if (!ft.prop) {
		procrun_fail(&ft.r, "--proposer: %s", e.msg);
		goto out;
	}
	if (prompt_load_template(prompt_default_template(), &ft.tmpl, &e)) {
		procrun_fail(&ft.r, "%s", e.msg);
		goto out;
	}
	if (ft.r.train.n < 1) {
		procrun_fail(&ft.r, "no task in the train split to seed the frontier");
		goto out;
	}
	for (int i = 0; i < ft.r.train.n; i++)
		add_entry(&ft, ft.r.train.t[i], xstrdup(ft.r.train.prompts[i]), NULL, -1, 0);
	json_t *args = procrun_identity(&ft.r);
	json_object_set_new(args, "proposer", json_string(o->proposer));
	json_object_set_new(args, "k", json_integer(o->k));
	json_object_set_new(args, "proposals", json_integer(o->proposals));
	json_object_set_new(args, "gold_wall_s", json_real(o->gold_wall_s));
	rc = procrun_open(&ft.r, args);
	json_decref(args);
	if (rc)
		goto out;
	rc = KA_EXIT_FAIL;
	char *fdir = xasprintf("%s/frontier", o->p.out);
	mkdirs(fdir);
	free(fdir);
	for (int rn = 0; rn <= o->p.rounds; rn++)
		if (run_round(&ft, rn, rn < o->p.rounds))
			goto out;
	char *vpath = xasprintf("%s/frontier/validation.json", o->p.out);
	if (json_dump_file(ft.log, vpath, JSON_INDENT(1)))
		fprintf(stderr, "ka --track frontier: cannot write %s\n", vpath);
	free(vpath);
	json_t *sc = scorecard(&ft);
	char *path = NULL;
	if (procrun_write_scorecard(&ft.r, sc, &path) == 0) {
		printf("scorecard: %s\n", path);
		if (!o->p.quiet)
			printf("  frontier %d -> %d tasks, %d proposals, %d accepted\n",
			       ft.r.train.n, live_count(&ft), ft.n_prop, ft.n_acc);
		rc = KA_EXIT_OK;
	}
	free(path);
	json_decref(sc);
out:
	ft_free(&ft);
	return rc;
}
