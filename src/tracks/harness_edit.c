/* harness_edit.c: the researcher's side of track 4 (see track_harness.h,
 * docs/harness.md): the evidence it reads before round r (the train split
 * only: per-task results, the arms' history, losses, diversity, its last
 * edit and that edit's diff, what the current harness does with this
 * round's pool), the edit request (harnesses/edit.md), its reply (a
 * journaled request), and the decision: an edit is accepted only when it
 * parses, loads in the sandbox and its dry run on this round's pool gives
 * an output within the bounds; otherwise it is rejected with the reason and
 * the previous harness goes on. A journaled decision stands on resumption. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linediff.h"
#include "procedure.h"
#include "track_harness.h"

#define EVIDENCE_DIFF_MAX 3000 /* bytes of the last edit's diff shown */
#define EVIDENCE_LOG_MAX 1500  /* bytes of the current harness's log shown */

static void evidence_tasks(struct util_buf *b, const struct htrack *t, int r)
{
	const struct arm_round *x = &t->ar[TH_IMP][r - 1];
	util_buf_printf(b, "\nPer train task, the %s model's %d samples at round %d:\n",
			r == 1 ? "base" : "trained", t->o->k, r - 1);
	for (int i = 0; i < t->nt; i++) {
		int n, d;
		th_pool_count(t->pool[TH_IMP], t->r.train.t[i]->name, &n, &d);
		util_buf_printf(b,
				"- %s: %.0f of %d verified, mean score %.2f; in the pool now: %d "
				"kernels, %d distinct\n",
				t->r.train.t[i]->name, x->tok[i] * t->o->k, t->o->k, x->tc[i], n,
				d);
	}
}

static void evidence_history(struct util_buf *b, const struct htrack *t, int r)
{
	if (r < 2)
		return;
	util_buf_puts(b, "\nHistory (train split; improved is your harness, frozen keeps "
			 "round 0's):\n| round | arm | harness | status | examples | distinct "
			 "| final loss | SFT diversity | train verified |\n|---|---|---|---|---|"
			 "---|---|---|---|\n");
	for (int k = 1; k < r; k++)
		for (int a = 0; a < 2; a++) {
			const struct arm_round *x = &t->ar[a][k];
			char vn[32];
			util_buf_printf(b, "| %d | %s | %s | %s | %d | %d | ", k, th_arms[a],
					th_vname(x->version, vn, sizeof vn), x->status,
					x->n_examples, x->n_distinct);
			util_buf_printf(b, isnan(x->loss) ? "- | " : "%.4f | ", x->loss);
			util_buf_printf(b, x->diversity < 0 ? "- | " : "%.3f | ", x->diversity);
			util_buf_printf(b, "%.2f |\n", th_mean(x->tok, t->nt));
		}
}

static void evidence_last_edit(struct util_buf *b, const struct htrack *t, int r)
{
	if (r < 2)
		return;
	const json_t *ed = json_array_get(t->edits, (size_t)r - 2);
	const struct arm_round *x = &t->ar[TH_IMP][r - 1];
	util_buf_printf(b, "\nYour last edit (before round %d) was %s", r - 1,
			json_is_true(json_object_get(ed, "accepted")) ? "accepted" : "rejected");
	if (!json_is_true(json_object_get(ed, "accepted")))
		util_buf_printf(b, ": %s", json_string_value(json_object_get(ed, "reason")));
	char vn[32];
	util_buf_printf(b, ". Round %d trained with %s's harness (%s%s%s).\n", r - 1,
			th_vname(x->version, vn, sizeof vn), x->status, x->reason[0] ? ": " : "",
			x->reason);
	char *d = linediff_unified(t->hv[r - 2], t->hv[r - 1], "before", "after", NULL, NULL);
	if (*d)
		util_buf_printf(b, "What it changed:\n```diff\n%.*s%s```\n", EVIDENCE_DIFF_MAX, d,
				strlen(d) > EVIDENCE_DIFF_MAX ? "\n[diff truncated]\n" : "");
	free(d);
}

static void evidence_current(struct util_buf *b, const struct htrack *t, int r,
			     const struct harness_result *cur)
{
	int n, d;
	th_pool_count(t->pool[TH_IMP], NULL, &n, &d);
	util_buf_printf(b, "\nThe pool for round %d: %d verified train kernels, %d distinct.\n", r,
			n, d);
	if (cur->log && *cur->log)
		util_buf_printf(
			b, "The current harness's log on it (ka.log, print):\n```\n%.*s%s```\n",
			EVIDENCE_LOG_MAX, cur->log,
			strlen(cur->log) > EVIDENCE_LOG_MAX ? "\n[log truncated]\n" : "");
	if (cur->why[0]) {
		util_buf_printf(b, "The current harness fails on this pool: %s\n", cur->why);
		return;
	}
	util_buf_printf(b,
			"The current harness on this pool: %d examples (%d selected, %d "
			"distinct), lr %g, epochs %d, lora_r %d, batch %d, max_examples %d, "
			"order %s.\n",
			(int)json_array_size(cur->examples), cur->n_selected, cur->n_distinct,
			cur->hyper.lr, cur->hyper.epochs, cur->hyper.lora_r, cur->hyper.batch,
			cur->hyper.max_examples, cur->hyper.as_given ? "as_given" : "shuffle");
}

/* The evidence before round r (train split only; never a held-out result). */
static char *evidence(const struct htrack *t, int r, const struct harness_result *cur)
{
	struct util_buf b = {0};
	const struct arm_round *x = &t->ar[TH_IMP][r - 1];
	char vn[32];
	if (r == 1)
		util_buf_puts(&b, "Round 0: the base trainee, untrained, sampled the train "
				  "tasks; its verified kernels are the pool.\n");
	else {
		util_buf_printf(&b,
				"Round %d: the improved arm trained on %d examples (%d distinct "
				"kernels) chosen by %s's harness",
				r - 1, x->n_examples, x->n_distinct,
				th_vname(x->version, vn, sizeof vn));
		util_buf_printf(&b, isnan(x->loss) ? "; not trained.\n" : "; final loss %.4f.\n",
				x->loss);
	}
	evidence_tasks(&b, t, r);
	evidence_history(&b, t, r);
	evidence_last_edit(&b, t, r);
	evidence_current(&b, t, r, cur);
	char *s = util_buf_take(&b);
	return s ? s : xstrdup("");
}

static char *edit_prompt(const struct htrack *t, int r, const char *ev)
{
	char rs[16], budget[16];
	snprintf(rs, sizeof rs, "%d", r);
	snprintf(budget, sizeof budget, "%d", t->o->max_examples);
	json_t *bj = harness_bounds_json(&t->bounds), *dj = harness_hyper_json(&t->defaults);
	char *bs = json_dumps(bj, JSON_COMPACT), *ds = json_dumps(dj, JSON_COMPACT);
	const char *keys[] = {"round", "harness", "evidence", "bounds", "defaults", "data_budget"};
	const char *v[] = {rs, t->hv[r - 1], ev, bs, ds, budget};
	char *s = procedure_subst(t->edit_tmpl, keys, v, 6);
	free(bs);
	free(ds);
	json_decref(bj);
	json_decref(dj);
	return s;
}

/* The decision on reply (a new one: journaled is NULL) for round r:
 * accepted (0, *next the new harness) or rejected with why. */
static int judge_edit(struct htrack *t, int r, const char *reply, const json_t *ctx, char **next,
		      char *why, size_t cap)
{
	*next = NULL;
	if (harness_parse_edit(reply, next, why, cap))
		return -1;
	char name[64];
	snprintf(name, sizeof name, "round-%d.proposed.lua", r);
	th_write_text(t, name, *next);
	if (harness_validate(*next, &t->box, why, cap))
		goto bad;
	struct harness_input in;
	th_input_of(t, ctx, r, &in);
	struct harness_result hr;
	int rc = harness_run(*next, &in, &hr);
	if (rc)
		snprintf(why, cap, "dry run on round %d's pool: %s", r, hr.why);
	harness_result_free(&hr);
	if (rc)
		goto bad;
	return 0;
bad:
	free(*next);
	*next = NULL;
	return -1;
}

/* The researcher's reply of round r (journaled: a resumed run sends
 * nothing again). 0 with rep (check rep->ok), -1 reported. */
static int ask_researcher(struct htrack *t, int r, const char *key, const char *ev,
			  struct journal_reply *rep)
{
	struct ka_err e;
	char *prompt = edit_prompt(t, r, ev);
	char name[64];
	snprintf(name, sizeof name, "round-%d.edit-prompt.md", r);
	th_write_text(t, name, prompt);
	int sent = 0;
	int rc = round_generate(t->r.d.j, t->r.m, key, r * 1000, prompt, NULL, rep, &sent, &e);
	free(prompt);
	if (rc) {
		procrun_fail(&t->r, "%s: %s", key, e.msg);
		return -1;
	}
	t->r.sent += sent;
	t->spend[r].requests++;
	t->spend[r].tokens += rep->in_tokens + rep->out_tokens;
	if (!rep->ok) {
		procrun_fail(&t->r,
			     "%s: request failed: %s; run the same command again to continue", key,
			     rep->error ? rep->error : "?");
		return -1;
	}
	snprintf(name, sizeof name, "round-%d.edit-reply.md", r);
	th_write_text(t, name, rep->text ? rep->text : "");
	return 0;
}

/* The edit before round r: hv[r] is the researcher's new harness when it is
 * accepted, else hv[r - 1]; the outcome joins t->edits. 0 or -1 reported. */
static int do_edit(struct htrack *t, int r, const json_t *ctx, const char *ev)
{
	char key[ROUND_KEY_MAX];
	round_key(key, sizeof key, r, "improved", "edit", NULL);
	struct ka_err e;
	json_t *done = NULL;
	if (round_unit_get(t->r.d.j, key, &done, &e) < 0) {
		procrun_fail(&t->r, "%s", e.msg);
		return -1;
	}
	struct journal_reply rep;
	if (ask_researcher(t, r, key, ev, &rep)) {
		journal_reply_free(&rep);
		json_decref(done);
		return -1;
	}
	char why[600] = "", *next = NULL;
	int accepted;
	if (done) {
		/* a journaled decision stands: the accepted reply is applied
		 * again, nothing is re-judged */
		accepted = json_is_true(json_object_get(done, "accepted"));
		snprintf(why, sizeof why, "%s", json_string_value(json_object_get(done, "reason")));
		if (accepted && harness_parse_edit(rep.text, &next, why, sizeof why)) {
			procrun_fail(&t->r, "%s: the journaled edit no longer parses: %s", key,
				     why);
			journal_reply_free(&rep);
			json_decref(done);
			return -1;
		}
	} else {
		accepted = judge_edit(t, r, rep.text ? rep.text : "", ctx, &next, why,
				      sizeof why) == 0;
	}
	journal_reply_free(&rep);
	t->hv[r] = accepted ? next : xstrdup(t->hv[r - 1]);
	int added, removed, rc = 0;
	th_save_version(t, r, &added, &removed);
	json_t *oc = json_pack("{s:b,s:s,s:i,s:i}", "accepted", accepted, "reason",
			       accepted ? "accepted" : why, "lines_added", added, "lines_removed",
			       removed);
	if (!done && round_unit_put(t->r.d.j, key, oc, &e)) {
		procrun_fail(&t->r, "%s", e.msg);
		rc = -1;
	}
	json_array_append_new(t->edits, oc);
	if (accepted)
		th_say(t, "round %d: edit accepted (+%d -%d lines)", r, added, removed);
	else
		th_say(t, "round %d: edit rejected: %s; round %d keeps round-%d's harness", r, why,
		       r, r - 1);
	json_decref(done);
	return rc;
}

int th_edit(struct htrack *t, int r, const json_t *ctx)
{
	struct harness_input in;
	th_input_of(t, ctx, r, &in);
	struct harness_result cur;
	harness_run(t->hv[r - 1], &in, &cur);
	char *ev = evidence(t, r, &cur);
	harness_result_free(&cur);
	int rc = do_edit(t, r, ctx, ev);
	free(ev);
	return rc;
}
