/* board.c: `ka board` site generation. Reads scorecards (each checked with
 * scorecard_check_file; bad ones are skipped with one line), then writes
 * index.html with every board of the original (capability, weight RSI,
 * standardized banks, harness RSI, controls, procedure RSI, frontier,
 * diagnostics, datasets), one page per scorecard under m/ (with copies of
 * the kernel sources it names), and the embedded style.css and board.js.
 * Tables are complete HTML (they read without JavaScript); board.js only
 * sorts them. Every scorecard string is escaped (board_buf_esc). */
#include "board.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scorecard.h"

#define MAX_CARDS 4096
#define MAX_SOURCE_BYTES ((size_t)1 << 20)

struct card {
	char *path;
	json_t *sc;
	enum scorecard_track track;
	char id[96]; /* page m/<id>.html, sources in m/<id>/ */
	const char *name;
	int standardized; /* weight_rsi with summary.bank_tier */
};

struct site {
	struct card *c;
	int n;
	const char *out;
	int n_skipped;
};

/* ---- small accessors over validated scorecards ----------------------------- */

static const json_t *jget(const json_t *o, const char *path)
{
	/* "a.b.c" */
	char key[64];
	const json_t *j = o;
	while (j && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		j = json_object_get(j, key);
		path += n + (path[n] == '.');
	}
	return j;
}

static const char *jstr(const json_t *o, const char *path)
{
	const char *s = json_string_value(jget(o, path));
	return s ? s : "";
}

/* ---- table cells ------------------------------------------------------------- */

enum fmt { FMT_RATE, FMT_SPEED, FMT_DIFF };

static void num_text(char *out, size_t cap, double v, enum fmt f)
{
	switch (f) {
	case FMT_RATE: snprintf(out, cap, "%.2f", v); break;
	case FMT_SPEED: snprintf(out, cap, "%.2f\xc3\x97", v); break;
	case FMT_DIFF: snprintf(out, cap, "%+.3f", v); break;
	}
}

/* A figure cell: value, its CI beside it and in the hover title. */
static void td_fig(struct board_buf *b, const json_t *fig, enum fmt f)
{
	struct metrics_figure x;
	scorecard_figure_get(fig, &x);
	if (!x.defined) {
		board_buf_printf(b, "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		return;
	}
	char v[32], lo[32], hi[32];
	num_text(v, sizeof v, x.value, f);
	num_text(lo, sizeof lo, x.lo, f);
	num_text(hi, sizeof hi, x.hi, f);
	board_buf_printf(b,
			 "<td class=\"num\" data-v=\"%.17g\" title=\"95%% CI [%s, %s]\">%s"
			 "<span class=\"ci\"> [%s, %s]</span></td>",
			 x.value, lo, hi, v, lo, hi);
}

/* Whether any sample of the scorecard has a speedup against a compiled
 * baseline: on a target with none (OpenCL), the compiled columns say "n/a"
 * (a dash) rather than a rate of 0. */
static int has_compiled(const json_t *sc)
{
	size_t i, j;
	json_t *t, *smp;
	json_array_foreach(json_object_get(sc, "tasks"), i, t)
	{
		json_array_foreach(json_object_get(t, "samples"), j, smp)
		{
			if (json_is_object(json_object_get(smp, "speedup_compiled")))
				return 1;
		}
	}
	return 0;
}

static void td_int(struct board_buf *b, long long v)
{
	board_buf_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld</td>", v, v);
}

static void td_text(struct board_buf *b, const char *s)
{
	board_buf_printf(b, "<td>");
	if (s && *s)
		board_buf_esc(b, s, 200);
	else
		board_buf_printf(b, "\xe2\x80\x94");
	board_buf_printf(b, "</td>");
}

static void split_tag(struct board_buf *b, const struct card *c)
{
	if (!strcmp(jstr(c->sc, "bank.split"), "public"))
		board_buf_printf(b, " <span class=\"tag\" title=\"scored on the public split "
				    "(development), not on the held-out split\">public</span>");
	if (json_is_true(jget(c->sc, "device.test_grade")))
		board_buf_printf(
			b,
			" <span class=\"tag grey\" title=\"timed on a test-grade "
			"device (PoCL on a CPU): speedups are not comparable\">test grade</span>");
}

/* The model cell: name linking to its page, plus the split tag. */
static void td_model(struct board_buf *b, const struct card *c, const char *key)
{
	const json_t *m = json_object_get(c->sc, key);
	board_buf_printf(b, "<td data-v=\"");
	board_buf_esc(b, jstr(m, "name"), 200);
	board_buf_printf(b, "\"><a href=\"m/%s.html\" title=\"", c->id);
	board_buf_esc(b, jstr(m, "spec"), 300);
	board_buf_printf(b, "\">");
	board_buf_esc(b, jstr(m, "name"), 80);
	board_buf_printf(b, "</a>");
	split_tag(b, c);
	board_buf_printf(b, "</td>");
}

static void td_verdict(struct board_buf *b, const char *v)
{
	enum metrics_verdict mv;
	if (metrics_verdict_parse(v, &mv)) {
		td_text(b, v);
		return;
	}
	static const char *const cls[] = {"pos", "none", "neg"};
	static const int order[] = {2, 1, 0};
	board_buf_printf(b, "<td data-v=\"%d\"><span class=\"verdict %s\">%s</span></td>",
			 order[mv], cls[mv], metrics_verdict_name(mv));
}

/* Header row: cols[i] with type 'n' (numeric) or 't' (text); sorted marks
 * the column the rows are already in (descending), -1 for none. */
static void table_open(struct board_buf *b, const char *id, const char *const *cols,
		       const char *types, int sorted)
{
	board_buf_printf(
		b, "<div class=\"tablewrap\"><table class=\"board\" id=\"%s\">\n<thead><tr>", id);
	for (int i = 0; cols[i]; i++)
		board_buf_printf(b,
				 "<th scope=\"col\" class=\"%s\" data-type=\"%s\" aria-sort=\"%s\">"
				 "<button type=\"button\">%s</button></th>",
				 types[i] == 'n' ? "num" : "", types[i] == 'n' ? "num" : "text",
				 sorted >= 0 && i == sorted ? "descending" : "none", cols[i]);
	board_buf_printf(b, "</tr></thead>\n<tbody>\n");
}

static void table_close(struct board_buf *b)
{
	board_buf_printf(b, "</tbody></table></div>\n");
}

/* A board with no cards: the note, and the end of its section. */
static void empty_section(struct board_buf *b)
{
	board_buf_printf(b, "<p class=\"empty\">No scorecards for this board yet.</p>\n");
	board_buf_printf(b, "</section>\n");
}

/* Indices of the cards of one kind, ordered by key descending (stable). */
typedef int (*card_pred)(const struct card *);
typedef double (*card_key)(const struct card *);

static int select_cards(const struct site *s, card_pred pred, card_key key, int *idx)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (pred(&s->c[i]))
			idx[n++] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && key(&s->c[idx[j]]) > key(&s->c[idx[j - 1]]); j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return n;
}

/* select_cards for a board whose section is open; with none, the section is
 * closed with the empty note. */
static int section_cards(struct board_buf *b, const struct site *s, card_pred pred, card_key key,
			 int *idx)
{
	int n = select_cards(s, pred, key, idx);
	if (!n)
		empty_section(b);
	return n;
}

static double figv(const json_t *sc, const char *path)
{
	const json_t *f = jget(sc, path);
	return json_is_object(f) ? json_number_value(json_object_get(f, "value")) : -INFINITY;
}

static int is_cap(const struct card *c)
{
	return c->track == SCORECARD_TRACK_CAPABILITY;
}
static int is_wrsi(const struct card *c)
{
	return c->track == SCORECARD_TRACK_WEIGHT_RSI && !c->standardized;
}
static int is_std(const struct card *c)
{
	return c->track == SCORECARD_TRACK_WEIGHT_RSI && c->standardized;
}
static int is_harness(const struct card *c)
{
	return c->track == SCORECARD_TRACK_HARNESS_RSI;
}
static int is_controls(const struct card *c)
{
	return c->track == SCORECARD_TRACK_CONTROLS;
}
static int is_proc(const struct card *c)
{
	return c->track == SCORECARD_TRACK_PROCEDURE_RSI;
}
static int is_frontier(const struct card *c)
{
	return c->track == SCORECARD_TRACK_FRONTIER;
}
static int is_diag(const struct card *c)
{
	if (!is_wrsi(c))
		return 0;
	const json_t *rounds = json_object_get(c->sc, "rounds");
	for (size_t i = 0; i < json_array_size(rounds); i++)
		if (json_object_get(json_array_get(rounds, i), "diversity"))
			return 1;
	return 0;
}
static double key_meanc(const struct card *c)
{
	return figv(c->sc, "aggregates.overall.mean_c");
}
static double key_smf(const struct card *c)
{
	return figv(c->sc, "summary.self_minus_fresh");
}
static double key_ivf(const struct card *c)
{
	return figv(c->sc, "summary.improved_vs_frozen");
}
static double key_gain(const struct card *c)
{
	return figv(c->sc, "summary.recursion_gain");
}
static double key_qgain(const struct card *c)
{
	return figv(c->sc, "summary.q_gain_vs_frozen");
}
static double key_cfinal(const struct card *c)
{
	return figv(c->sc, "summary.c_final");
}

/* ---- series over rounds ---------------------------------------------------- */

struct ser {
	int n;
	double *x, *y, *lo, *hi;
	int has_ci;
};

static void ser_free(struct ser *s)
{
	free(s->x);
	free(s->y);
	free(s->lo);
	free(s->hi);
	memset(s, 0, sizeof *s);
}

static const json_t *row_of(const json_t *rounds, long long r, const char *arm)
{
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		const json_t *row = json_array_get(rounds, i);
		if (json_integer_value(json_object_get(row, "round")) == r &&
		    !strcmp(json_string_value(json_object_get(row, "arm")), arm))
			return row;
	}
	return NULL;
}

/* field of arm over rounds (a figure or a plain number); with minus_arm, the
 * value minus that arm's value at the same round (no CI). */
static void ser_build(const json_t *sc, const char *arm, const char *field, const char *minus_arm,
		      struct ser *s)
{
	const json_t *rounds = json_object_get(sc, "rounds");
	size_t n = json_array_size(rounds);
	memset(s, 0, sizeof *s);
	s->x = xcalloc(n + 1, sizeof *s->x);
	s->y = xcalloc(n + 1, sizeof *s->y);
	s->lo = xcalloc(n + 1, sizeof *s->lo);
	s->hi = xcalloc(n + 1, sizeof *s->hi);
	s->has_ci = 1;
	long long last = (long long)json_integer_value(jget(sc, "summary.rounds"));
	for (long long r = 0; r <= last; r++) {
		const json_t *row = row_of(rounds, r, arm);
		const json_t *f = row ? json_object_get(row, field) : NULL;
		if (!f || json_is_null(f))
			continue;
		double y, lo, hi;
		if (json_is_object(f)) {
			y = json_number_value(json_object_get(f, "value"));
			lo = json_number_value(json_object_get(f, "lo"));
			hi = json_number_value(json_object_get(f, "hi"));
		} else {
			y = lo = hi = json_number_value(f);
			s->has_ci = 0;
		}
		if (minus_arm) {
			const json_t *o = row_of(rounds, r, minus_arm);
			const json_t *g = o ? json_object_get(o, field) : NULL;
			if (!json_is_object(g))
				continue;
			y -= json_number_value(json_object_get(g, "value"));
			s->has_ci = 0;
		}
		s->x[s->n] = (double)r;
		s->y[s->n] = y;
		s->lo[s->n] = lo;
		s->hi[s->n] = hi;
		s->n++;
	}
}

/* One line per card: field of arm (minus minus_arm). name_key picks the
 * model object naming the line. */
static void plot_cards(struct board_buf *b, const struct site *s, const int *idx, int n,
		       const char *title, const char *ylabel, const char *arm, const char *field,
		       const char *minus_arm, int zero_line, const char *name_key)
{
	struct ser *sr = xcalloc((size_t)n + 1, sizeof *sr);
	struct board_series *bs = xcalloc((size_t)n + 1, sizeof *bs);
	char **names = xcalloc((size_t)n + 1, sizeof *names);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		ser_build(c->sc, arm, field, minus_arm, &sr[i]);
		if (name_key)
			names[i] = xasprintf("%s / %s", jstr(c->sc, "trainee.name"),
					     jstr(c->sc, "model.name"));
		else
			names[i] = xstrdup(c->name);
		bs[i] = (struct board_series){names[i],
					      sr[i].n,
					      sr[i].x,
					      sr[i].y,
					      sr[i].has_ci ? sr[i].lo : NULL,
					      sr[i].has_ci ? sr[i].hi : NULL};
	}
	board_svg_lines(b, title, "round", ylabel, bs, n, zero_line);
	for (int i = 0; i < n; i++) {
		ser_free(&sr[i]);
		free(names[i]);
	}
	free(names);
	free(sr);
	free(bs);
}

/* ---- the boards -------------------------------------------------------------- */

static void section_open(struct board_buf *b, const char *id, const char *title, const char *intro)
{
	board_buf_printf(b, "<section id=\"%s\">\n<h2>%s</h2>\n<p class=\"intro\">%s</p>\n", id,
			 title, intro);
}

static void board_capability(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(b, "capability", "Task 1 \xc2\xb7 Capability",
		     "Can the model write a correct and fast kernel in one shot? Fixed tasks, "
		     "k samples each. <em>correct</em> matches the fp32-or-better gold; "
		     "<em>fast</em> means the lower end of the speedup CI is above 1 against the "
		     "eager baseline (the compiled baseline is reported separately). "
		     "<em>mean C</em> is the mean score s. Open and closed models both compete. "
		     "Click a header to sort.");
	int n = section_cards(b, s, is_cap, key_meanc, idx);
	if (!n)
		return;
	static const char *const cols[] = {"Model",   "Kind",
					   "correct", "fast",
					   "mean C",  "fast vs compiled",
					   "pass@k",  "speedup (geomean)",
					   NULL};
	table_open(b, "t-capability", cols, "ttnnnnnn", 4);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *o = jget(c->sc, "aggregates.overall");
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		td_text(b, jstr(c->sc, "model.kind"));
		td_fig(b, json_object_get(o, "correct"), FMT_RATE);
		td_fig(b, json_object_get(o, "fast"), FMT_RATE);
		td_fig(b, json_object_get(o, "mean_c"), FMT_RATE);
		td_fig(b, has_compiled(c->sc) ? json_object_get(o, "fast_compiled") : NULL,
		       FMT_RATE);
		td_fig(b, json_object_get(o, "pass_at_k"), FMT_RATE);
		td_fig(b, json_object_get(o, "geomean_speedup"), FMT_SPEED);
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);

	/* Per-task speedup distributions: rows are tasks (union over models),
	 * colours are models. */
	int max_rows = 64, nr = 0, np = 0, cap_pts = 0;
	const char **rows = xcalloc((size_t)max_rows, sizeof *rows);
	const char **groups = xcalloc((size_t)n, sizeof *groups);
	for (int i = 0; i < n; i++) {
		int nt, ns;
		scorecard_counts(s->c[idx[i]].sc, &nt, &ns);
		cap_pts += ns;
	}
	int *prow = xcalloc((size_t)cap_pts + 1, sizeof *prow);
	int *pgrp = xcalloc((size_t)cap_pts + 1, sizeof *pgrp);
	double *pv = xcalloc((size_t)cap_pts + 1, sizeof *pv);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		groups[i] = c->name;
		const json_t *tasks = json_object_get(c->sc, "tasks");
		for (size_t t = 0; t < json_array_size(tasks); t++) {
			const json_t *task = json_array_get(tasks, t);
			const char *tn = jstr(task, "name");
			int r = 0;
			while (r < nr && strcmp(rows[r], tn))
				r++;
			if (r == nr) {
				if (nr == max_rows)
					continue;
				rows[nr++] = tn;
			}
			const json_t *samples = json_object_get(task, "samples");
			for (size_t j = 0; j < json_array_size(samples); j++) {
				const json_t *sp =
					jget(json_array_get(samples, j), "speedup_eager");
				if (!json_is_object(sp))
					continue;
				prow[np] = r;
				pgrp[np] = i;
				pv[np++] = json_number_value(json_object_get(sp, "median"));
			}
		}
	}
	struct board_strip st = {nr, n, np, rows, groups, prow, pgrp, pv};
	board_svg_strip(b, "Speedup vs eager per task (each dot a correct sample)",
			"speedup vs eager (log scale)", &st);
	free(rows);
	free(groups);
	free(prow);
	free(pgrp);
	free(pv);
	board_buf_printf(b, "</section>\n");
}

static void board_weight_rsi(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(
		b, "weight-rsi", "Task 2 \xc2\xb7 Weight RSI",
		"Open models only, rounds on the difficulty-standardized hard bank. Three arms "
		"run in parallel: <em>self</em> trains on its own kernels, <em>fresh-frozen</em> "
		"on kernels freshly sampled from the unchanged base each round, <em>round0</em> "
		"retrains on the first round's data. The key column is <em>self vs "
		"fresh-frozen</em>: positive means an improving producer makes better "
		"descendants than a frozen producer given the same fresh data. Correctness and "
		"compiled speedup are shown separately.");
	int n = section_cards(b, s, is_wrsi, key_smf, idx);
	if (!n)
		return;
	static const char *const cols[] = {"Model",
					   "Family",
					   "rounds",
					   "C0",
					   "final",
					   "correct",
					   "compiled x",
					   "delta vs frozen",
					   "self vs fresh-frozen",
					   "verdict",
					   NULL};
	table_open(b, "t-weight-rsi", cols, "ttnnnnnnnn", 8);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		td_text(b, jstr(c->sc, "model.family"));
		td_int(b, (long long)json_integer_value(json_object_get(sm, "rounds")));
		td_fig(b, json_object_get(sm, "c0"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_final"), FMT_RATE);
		td_fig(b, json_object_get(sm, "correct"), FMT_RATE);
		td_fig(b, json_object_get(sm, "compiled_x"), FMT_SPEED);
		td_fig(b, json_object_get(sm, "delta_vs_frozen"), FMT_DIFF);
		td_fig(b, json_object_get(sm, "self_minus_fresh"), FMT_DIFF);
		td_verdict(b, jstr(sm, "verdict"));
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "C of the self arm per round", "mean C", "self", "c", NULL, 0,
		   NULL);
	plot_cards(b, s, idx, n, "Self minus fresh-frozen per round",
		   "C(self) \xe2\x88\x92 C(fresh-frozen)", "self", "c", "fresh_frozen", 1, NULL);
	board_buf_printf(b, "</div>\n</section>\n");
}

static void board_standardized(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(b, "standardized", "Standardized banks",
		     "Each model runs on a bank difficulty-filtered against a frozen anchor of its "
		     "own scale (small 1.5B, mid 7B, large 14B), scored on speed against the "
		     "compiled baseline where every size has headroom. This removes the benchmark "
		     "confound.");
	int n = section_cards(b, s, is_std, key_smf, idx);
	if (!n)
		return;
	static const char *const cols[] = {"Model",	 "Tier",    "rounds",
					   "C0 (speed)", "C final", "self vs fresh-frozen",
					   "verdict",	 NULL};
	table_open(b, "t-standardized", cols, "tnnnnnn", 5);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		const char *tier = jstr(sm, "bank_tier");
		int order = !strcmp(tier, "small") ? 0 : !strcmp(tier, "mid") ? 1 : 2;
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		board_buf_printf(b, "<td data-v=\"%d\" title=\"anchor: ", order);
		board_buf_esc(b, jstr(sm, "anchor"), 200);
		board_buf_printf(b, "\">");
		board_buf_esc(b, tier, 20);
		board_buf_printf(b, "</td>");
		td_int(b, (long long)json_integer_value(json_object_get(sm, "rounds")));
		td_fig(b, json_object_get(sm, "c0"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_final"), FMT_RATE);
		td_fig(b, json_object_get(sm, "self_minus_fresh"), FMT_DIFF);
		td_verdict(b, jstr(sm, "verdict"));
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "C (speed vs compiled) of the self arm per round", "mean C",
		   "self", "c", NULL, 0, NULL);
	plot_cards(b, s, idx, n, "Self minus fresh-frozen per round",
		   "C(self) \xe2\x88\x92 C(fresh-frozen)", "self", "c", "fresh_frozen", 1, NULL);
	board_buf_printf(b, "</div>\n</section>\n");
}

static void board_harness(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(b, "harness-rsi", "Task 4 \xc2\xb7 Harness RSI",
		     "A closed model with fixed weights rewrites the training harness each round; "
		     "the harness trains an open model. The key column is <em>improved vs "
		     "frozen</em> harness on the open trainee: positive means the closed model's "
		     "edits causally produced a better open model.");
	int n = section_cards(b, s, is_harness, key_ivf, idx);
	if (!n)
		return;
	static const char *const cols[] = {
		"Open trainee", "Researcher",	      "rounds",	 "C0", "C improved",
		"C frozen",	"improved vs frozen", "verdict", NULL};
	table_open(b, "t-harness-rsi", cols, "ttnnnnnn", 6);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		board_buf_printf(b, "<tr>");
		td_model(b, c, "trainee");
		td_text(b, jstr(c->sc, "model.name"));
		td_int(b, (long long)json_integer_value(json_object_get(sm, "rounds")));
		td_fig(b, json_object_get(sm, "c0"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_improved"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_frozen"), FMT_RATE);
		td_fig(b, json_object_get(sm, "improved_vs_frozen"), FMT_DIFF);
		td_verdict(b, jstr(sm, "verdict"));
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "C of the trainee under the improved harness", "mean C",
		   "improved", "c", NULL, 0, "trainee");
	plot_cards(b, s, idx, n, "Improved minus frozen harness per round",
		   "C(improved) \xe2\x88\x92 C(frozen)", "improved", "c", "frozen", 1, "trainee");
	board_buf_printf(b, "</div>\n</section>\n");
}

static void board_controls(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(
		b, "controls", "Non-recursive controls",
		"Every gain is checked against non-recursive methods at the same generation "
		"budget (best-of-k sampling, in-context self-refine, archive retrieval), all "
		"frozen-weight and scored with the identical grader. <em>recursion gain</em> = "
		"weight-RSI final C minus the best non-recursive baseline: positive means "
		"training on your own kernels beats simply sampling more.");
	int n = section_cards(b, s, is_controls, key_gain, idx);
	if (!n)
		return;
	static const char *const cols[] = {"Model",	  "weight-RSI C", "best-of-k",
					   "self-refine", "retrieval",	  "recursion gain",
					   NULL};
	table_open(b, "t-controls", cols, "tnnnnn", 5);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		td_fig(b, json_object_get(sm, "weight_rsi_c"), FMT_RATE);
		td_fig(b, json_object_get(sm, "best_of_k"), FMT_RATE);
		td_fig(b, json_object_get(sm, "self_refine"), FMT_RATE);
		td_fig(b, json_object_get(sm, "retrieval"), FMT_RATE);
		td_fig(b, json_object_get(sm, "recursion_gain"), FMT_DIFF);
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "</section>\n");
}

static void board_procedure(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(
		b, "procedure-rsi", "Task 3 \xc2\xb7 Procedure RSI",
		"A model with fixed weights rewrites its own executable research procedure "
		"each round (strategy library, solver prompt, verified-kernel archive). "
		"<em>Q</em> is the held-out quality of the current procedure; the key column "
		"is <em>Q gain vs frozen</em> procedure. Open and closed models both compete.");
	int n = section_cards(b, s, is_proc, key_qgain, idx);
	if (!n)
		return;
	static const char *const cols[] = {
		"Model", "Mode", "rounds", "Q0", "Q final", "Q gain vs frozen", "verdict", NULL};
	table_open(b, "t-procedure-rsi", cols, "ttnnnnn", 5);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		td_text(b, jstr(sm, "mode"));
		td_int(b, (long long)json_integer_value(json_object_get(sm, "rounds")));
		td_fig(b, json_object_get(sm, "q0"), FMT_RATE);
		td_fig(b, json_object_get(sm, "q_final"), FMT_RATE);
		td_fig(b, json_object_get(sm, "q_gain_vs_frozen"), FMT_DIFF);
		td_verdict(b, jstr(sm, "verdict"));
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "Q of the self-modifying procedure per round", "Q", "self", "q",
		   NULL, 0, NULL);
	plot_cards(b, s, idx, n, "Self-modify minus frozen procedure per round",
		   "Q(self) \xe2\x88\x92 Q(frozen)", "self", "q", "frozen", 1, NULL);
	board_buf_printf(b, "</div>\n</section>\n");
}

static void board_frontier(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(b, "frontier", "Task 5 \xc2\xb7 Frontier",
		     "Each round a proposer mutates the kernels the model just solved into "
		     "strictly harder variants, validates them on the GPU and grows the frontier, "
		     "so difficulty co-evolves with the solver. Holding or rising C on a growing "
		     "frontier is genuine compounding, not fitting a fixed set.");
	int n = section_cards(b, s, is_frontier, key_cfinal, idx);
	if (!n)
		return;
	static const char *const cols[] = {"Model",	     "Proposer", "rounds",
					   "frontier tasks", "C0",	 "C final",
					   "C change",	     "verdict",	 NULL};
	table_open(b, "t-frontier", cols, "ttnnnnnn", 5);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		const json_t *sm = json_object_get(c->sc, "summary");
		long long f0 = (long long)json_integer_value(json_object_get(sm, "frontier_size0"));
		long long f1 = (long long)json_integer_value(json_object_get(sm, "frontier_final"));
		board_buf_printf(b, "<tr>");
		td_model(b, c, "model");
		td_text(b, jstr(c->sc, "proposer.name"));
		td_int(b, (long long)json_integer_value(json_object_get(sm, "rounds")));
		board_buf_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld \xe2\x86\x92 %lld</td>",
				 f1, f0, f1);
		td_fig(b, json_object_get(sm, "c0"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_final"), FMT_RATE);
		td_fig(b, json_object_get(sm, "c_change"), FMT_DIFF);
		td_verdict(b, jstr(sm, "verdict"));
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "C on the growing frontier per round", "mean C", "self", "c", NULL,
		   0, NULL);
	board_buf_printf(b, "</div>\n</section>\n");
}

static void board_diagnostics(struct board_buf *b, const struct site *s, int *idx)
{
	section_open(
		b, "diagnostics", "Diagnostics",
		"Rounds of weight RSI, logging the state of each model's own training signal "
		"every round. Models that keep self-data diversity high and retain their "
		"round-0 solutions keep gaining; models whose self-generated kernels collapse "
		"in diversity and forget prior solutions drive self-minus-fresh negative. Each "
		"line is a model.");
	int n = section_cards(b, s, is_diag, key_smf, idx);
	if (!n)
		return;
	board_buf_printf(b, "<div class=\"plots\">\n");
	plot_cards(b, s, idx, n, "Self-data diversity", "diversity", "self", "diversity", NULL, 0,
		   NULL);
	plot_cards(b, s, idx, n, "Retention of round-0 solutions", "retention", "self", "retention",
		   NULL, 0, NULL);
	plot_cards(b, s, idx, n, "Self minus fresh-frozen", "C(self) \xe2\x88\x92 C(fresh-frozen)",
		   "self", "c", "fresh_frozen", 1, NULL);
	board_buf_printf(b, "</div>\n</section>\n");
}

static const char *track_label(enum scorecard_track t)
{
	static const char *const l[] = {"Capability",  "Weight RSI", "Procedure RSI",
					"Harness RSI", "Frontier",   "Controls"};
	return (unsigned)t < SCORECARD_TRACK_COUNT ? l[t] : "?";
}

static void board_datasets(struct board_buf *b, const struct site *s)
{
	section_open(b, "datasets", "Datasets",
		     "Every task ships a public split for development and a disjoint held-out "
		     "split that is never released. The board is scored on held-out; rows marked "
		     "<span class=\"tag\">public</span> were scored on the public split. This "
		     "table lists the banks the scorecards above name.");
	if (!s->n) {
		empty_section(b);
		return;
	}
	static const char *const cols[] = {"Task", "Dataset", "Tiers", "Public", "Held out", NULL};
	table_open(b, "t-datasets", cols, "ttttt", -1);
	char *done = xcalloc((size_t)s->n, 1);
	for (int i = 0; i < s->n; i++) {
		if (done[i])
			continue;
		const struct card *c = &s->c[i];
		const char *bank = jstr(c->sc, "bank.name");
		int tiers[3] = {0}, pub = -1, held = -1;
		char std[64] = "";
		for (int j = i; j < s->n; j++) {
			const struct card *d = &s->c[j];
			if (done[j] || d->track != c->track ||
			    strcmp(jstr(d->sc, "bank.name"), bank))
				continue;
			done[j] = 1;
			const json_t *tasks = json_object_get(d->sc, "tasks");
			for (size_t t = 0; t < json_array_size(tasks); t++) {
				const char *tr = jstr(json_array_get(tasks, t), "tier");
				if (tr[0] == 'L' && tr[1] >= '1' && tr[1] <= '3')
					tiers[tr[1] - '1'] = 1;
			}
			const char *bt = jstr(d->sc, "summary.bank_tier");
			if (*bt && !strstr(std, bt))
				snprintf(std + strlen(std), sizeof std - strlen(std), "%s%s",
					 *std ? ", " : "", bt);
			if (!strcmp(jstr(d->sc, "bank.split"), "public"))
				pub = j;
			else
				held = j;
		}
		board_buf_printf(b, "<tr><td>%s</td>", track_label(c->track));
		td_text(b, bank);
		char tl[64] = "";
		for (int t = 0; t < 3; t++)
			if (tiers[t])
				snprintf(tl + strlen(tl), sizeof tl - strlen(tl), "%sL%d",
					 *tl ? ", " : "", t + 1);
		if (*std)
			snprintf(tl + strlen(tl), sizeof tl - strlen(tl), "%s%s", *tl ? "; " : "",
				 std);
		td_text(b, tl);
		if (pub >= 0) {
			const json_t *bk = json_object_get(s->c[pub].sc, "bank");
			board_buf_printf(b, "<td>");
			board_buf_esc(b, jstr(bk, "path"), 120);
			board_buf_printf(
				b, " (%lld tasks, hash <code>",
				(long long)json_integer_value(json_object_get(bk, "n_tasks")));
			board_buf_esc(b, jstr(bk, "hash"), 12);
			board_buf_printf(b, "</code>)</td>");
		} else {
			td_text(b, NULL);
		}
		if (held >= 0)
			board_buf_printf(
				b, "<td>%lld tasks, unreleased</td>",
				(long long)json_integer_value(jget(s->c[held].sc, "bank.n_tasks")));
		else
			td_text(b, NULL);
		board_buf_printf(b, "</tr>\n");
	}
	free(done);
	table_close(b);
	board_buf_printf(b, "</section>\n");
}

/* ---- page frame ---------------------------------------------------------------- */

static void page_open(struct board_buf *b, const char *title_esc_src, const char *root)
{
	board_buf_printf(
		b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<title>");
	board_buf_esc(b, title_esc_src, 200);
	board_buf_printf(b,
			 "</title>\n<link rel=\"stylesheet\" href=\"%sstyle.css\">\n"
			 "<script src=\"%sboard.js\" defer></script>\n</head>\n<body>\n",
			 root, root);
	board_buf_printf(b,
			 "<header class=\"top\"><a class=\"brand\" href=\"%sindex.html\">"
			 "KernelAscent</a><nav>",
			 root);
	static const char *const nav[][2] = {
		{"capability", "Capability"},	  {"weight-rsi", "Weight RSI"},
		{"standardized", "Standardized"}, {"harness-rsi", "Harness RSI"},
		{"controls", "Controls"},	  {"procedure-rsi", "Procedure RSI"},
		{"frontier", "Frontier"},	  {"diagnostics", "Diagnostics"},
		{"datasets", "Datasets"}};
	for (size_t i = 0; i < sizeof nav / sizeof nav[0]; i++)
		board_buf_printf(b, "<a href=\"%sindex.html#%s\">%s</a>", root, nav[i][0],
				 nav[i][1]);
	board_buf_printf(b, "</nav></header>\n<main>\n");
}

static void page_close(struct board_buf *b)
{
	board_buf_printf(
		b,
		"</main>\n<footer>Built by <code>ka board</code> from scorecards "
		"(schema %s). Every figure shows its 95%% bootstrap CI over tasks.</footer>\n"
		"</body>\n</html>\n",
		SCORECARD_SCHEMA);
}

static int write_buf(const struct site *s, const char *rel, struct board_buf *b, struct ka_err *e)
{
	char *p = xasprintf("%s/%s", s->out, rel);
	int rc = util_write_file(p, b->p ? b->p : "", b->len, e);
	free(p);
	return rc;
}

/* ---- per-scorecard pages ----------------------------------------------------------- */

static void kv(struct board_buf *b, const char *k, const char *v)
{
	board_buf_printf(b, "<tr><th scope=\"row\">%s</th><td>", k);
	board_buf_esc(b, v && *v ? v : "\xe2\x80\x94", 400);
	board_buf_printf(b, "</td></tr>\n");
}

static void facts(struct board_buf *b, const struct card *c)
{
	const json_t *sc = c->sc;
	char t[256];
	board_buf_printf(b, "<table class=\"facts\">\n");
	kv(b, "track", jstr(sc, "track"));
	kv(b, "model spec", jstr(sc, "model.spec"));
	snprintf(t, sizeof t, "%s, %s%s%s", jstr(sc, "model.backend"), jstr(sc, "model.kind"),
		 *jstr(sc, "model.family") ? ", family " : "", jstr(sc, "model.family"));
	kv(b, "backend, kind", t);
	if (json_object_get(sc, "trainee"))
		kv(b, "trainee", jstr(sc, "trainee.spec"));
	if (json_object_get(sc, "proposer"))
		kv(b, "proposer", jstr(sc, "proposer.spec"));
	snprintf(t, sizeof t, "%s (%s split, %lld tasks) at %s", jstr(sc, "bank.name"),
		 jstr(sc, "bank.split"), (long long)json_integer_value(jget(sc, "bank.n_tasks")),
		 jstr(sc, "bank.path"));
	kv(b, "bank", t);
	kv(b, "bank hash", jstr(sc, "bank.hash"));
	snprintf(t, sizeof t, "k = %lld, seed = %lld, target = %s",
		 (long long)json_integer_value(json_object_get(sc, "k")),
		 (long long)json_integer_value(json_object_get(sc, "seed")), jstr(sc, "target"));
	kv(b, "run", t);
	const json_t *cl = jget(sc, "device.clocks");
	char clk[96] = "clocks not reported";
	if (json_is_number(json_object_get(cl, "sm_mhz_max")))
		snprintf(clk, sizeof clk, "SM %g\xe2\x80\x93%g MHz, memory %g MHz",
			 json_number_value(json_object_get(cl, "sm_mhz_min")),
			 json_number_value(json_object_get(cl, "sm_mhz_max")),
			 json_number_value(json_object_get(cl, "mem_mhz")));
	snprintf(t, sizeof t, "%s; driver %s; %s; %s%s", jstr(sc, "device.name"),
		 jstr(sc, "device.driver"), jstr(sc, "device.runtime"), clk,
		 json_is_true(jget(sc, "device.test_grade"))
			 ? " (test grade: timings not comparable)"
			 : "");
	kv(b, "device", t);
	/* Protocol: its scalar fields in document order. */
	struct board_buf p = {0};
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)jget(sc, "protocol"), key, val)
	{
		if (json_is_integer(val))
			board_buf_printf(&p, "%s%s = %lld", p.len ? ", " : "", key,
					 (long long)json_integer_value(val));
		else if (json_is_real(val))
			board_buf_printf(&p, "%s%s = %g", p.len ? ", " : "", key,
					 json_real_value(val));
		else if (json_is_string(val))
			board_buf_printf(&p, "%s%s = %s", p.len ? ", " : "", key,
					 json_string_value(val));
	}
	kv(b, "protocol", p.p);
	board_buf_free(&p);
	snprintf(t, sizeof t, "%s by ka %s", jstr(sc, "created"), jstr(sc, "ka_version"));
	kv(b, "created", t);
	board_buf_printf(b, "</table>\n");
}

static void sanitize(char *out, size_t cap, const char *in)
{
	size_t k = 0;
	for (const char *p = in; *p && k + 1 < cap; p++) {
		char ch = *p;
		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_')
			out[k++] = ch;
		else if (ch >= 'A' && ch <= 'Z')
			out[k++] = (char)(ch - 'A' + 'a');
		else if (k && out[k - 1] != '-')
			out[k++] = '-';
	}
	while (k && (out[k - 1] == '-' || out[k - 1] == '.'))
		k--;
	out[k] = 0;
	if (!k)
		snprintf(out, cap, "x");
}

/* Copy the kernel source a sample names (relative to the scorecard's folder)
 * to m/<id>/; returns the link relative to the page, or NULL. */
static char *copy_source(const struct site *s, const struct card *c, size_t ti, size_t si,
			 const char *rel)
{
	const char *slash = strrchr(c->path, '/');
	char *src =
		slash ? xasprintf("%.*s/%s", (int)(slash - c->path), c->path, rel) : xstrdup(rel);
	char *data = NULL, *link = NULL;
	size_t len;
	struct ka_err e;
	struct stat st;
	if (stat(src, &st) || !S_ISREG(st.st_mode) ||
	    util_read_file(src, MAX_SOURCE_BYTES, &data, &len, &e))
		goto out;
	const char *base = strrchr(rel, '/');
	char name[96];
	sanitize(name, sizeof name, base ? base + 1 : rel);
	/* Always .txt: a browser shows it as text and never runs it. */
	link = xasprintf("%s/t%zu-s%zu-%s.txt", c->id, ti, si, name);
	char *dir = xasprintf("%s/m/%s", s->out, c->id);
	char *dst = xasprintf("%s/m/%s", s->out, link);
	if (util_mkdirs(dir, &e) || util_write_file(dst, data, len, &e)) {
		free(link);
		link = NULL;
	}
	free(dir);
	free(dst);
out:
	free(src);
	free(data);
	return link;
}

static void page_capability(struct board_buf *b, const struct site *s, const struct card *c)
{
	const json_t *ag = json_object_get(c->sc, "aggregates");
	board_buf_printf(b, "<h2>Aggregates</h2>\n");
	static const char *const cols[] = {"Tier",
					   "tasks",
					   "samples",
					   "correct",
					   "fast",
					   "fast vs compiled",
					   "fast_p 1.5",
					   "fast_p 2",
					   "pass@k",
					   "speedup (geomean)",
					   "vs compiled (geomean)",
					   "mean C",
					   NULL};
	table_open(b, "t-aggregates", cols, "tnnnnnnnnnnn", -1);
	static const char *const keys[] = {"L1", "L2", "L3", "overall"};
	int compiled = has_compiled(c->sc);
	for (int i = 0; i < 4; i++) {
		const json_t *a = json_object_get(ag, keys[i]);
		if (!a)
			continue;
		board_buf_printf(b, "<tr><td>%s</td>", keys[i]);
		td_int(b, (long long)json_integer_value(json_object_get(a, "n_tasks")));
		td_int(b, (long long)json_integer_value(json_object_get(a, "n_samples")));
		td_fig(b, json_object_get(a, "correct"), FMT_RATE);
		td_fig(b, json_object_get(a, "fast"), FMT_RATE);
		td_fig(b, compiled ? json_object_get(a, "fast_compiled") : NULL, FMT_RATE);
		td_fig(b, json_object_get(json_object_get(a, "fast_p"), "1.5"), FMT_RATE);
		td_fig(b, json_object_get(json_object_get(a, "fast_p"), "2"), FMT_RATE);
		td_fig(b, json_object_get(a, "pass_at_k"), FMT_RATE);
		td_fig(b, json_object_get(a, "geomean_speedup"), FMT_SPEED);
		td_fig(b, compiled ? json_object_get(a, "geomean_speedup_compiled") : NULL,
		       FMT_SPEED);
		td_fig(b, json_object_get(a, "mean_c"), FMT_RATE);
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);

	const json_t *tasks = json_object_get(c->sc, "tasks");
	size_t nt = json_array_size(tasks);
	int nt_plot = nt > 64 ? 64 : (int)nt, np = 0, ns_all, ntk;
	scorecard_counts(c->sc, &ntk, &ns_all);
	const char **rows = xcalloc(nt + 1, sizeof *rows);
	int *prow = xcalloc((size_t)ns_all + 1, sizeof *prow),
	    *pgrp = xcalloc((size_t)ns_all + 1, sizeof *pgrp);
	double *pv = xcalloc((size_t)ns_all + 1, sizeof *pv);
	for (int t = 0; t < nt_plot; t++) {
		const json_t *task = json_array_get(tasks, (size_t)t);
		rows[t] = jstr(task, "name");
		const json_t *samples = json_object_get(task, "samples");
		for (size_t j = 0; j < json_array_size(samples); j++) {
			const json_t *sp = jget(json_array_get(samples, j), "speedup_eager");
			if (json_is_object(sp)) {
				prow[np] = t;
				pv[np++] = json_number_value(json_object_get(sp, "median"));
			}
		}
	}
	const char *groups[1] = {c->name};
	struct board_strip st = {nt_plot, 1, np, rows, groups, prow, pgrp, pv};
	board_buf_printf(b, "<h2>Speedups</h2>\n");
	board_svg_strip(b, "Speedup vs eager per task (each dot a correct sample)",
			"speedup vs eager (log scale)", &st);
	free(rows);
	free(prow);
	free(pgrp);
	free(pv);

	board_buf_printf(b, "<h2>Tasks</h2>\n");
	static const char *const tcols[] = {"Task",	    "Tier",    "correct", "mean s",
					    "best speedup", "samples", NULL};
	table_open(b, "t-tasks", tcols, "ttnnnt", -1);
	for (size_t t = 0; t < nt; t++) {
		const json_t *task = json_array_get(tasks, t);
		const json_t *samples = json_object_get(task, "samples");
		size_t n = json_array_size(samples);
		int ok = 0;
		double ssum = 0, best = 0;
		for (size_t j = 0; j < n; j++) {
			const json_t *sm = json_array_get(samples, j);
			ok += !strcmp(jstr(sm, "verdict"), "ok");
			ssum += json_number_value(json_object_get(sm, "score"));
			const json_t *sp = json_object_get(sm, "speedup_eager");
			if (json_is_object(sp))
				best = fmax(best, json_number_value(json_object_get(sp, "median")));
		}
		board_buf_printf(b, "<tr>");
		td_text(b, jstr(task, "name"));
		td_text(b, jstr(task, "tier"));
		board_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%d / %zu</td>",
				 n ? (double)ok / (double)n : 0, ok, n);
		board_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%.2f</td>", ssum / (double)n,
				 ssum / (double)n);
		if (best > 0)
			board_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%.2f\xc3\x97</td>",
					 best, best);
		else
			board_buf_printf(b, "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		board_buf_printf(b, "<td class=\"samples\">");
		for (size_t j = 0; j < n; j++) {
			const json_t *sm = json_array_get(samples, j);
			const char *vd = jstr(sm, "verdict");
			int isok = !strcmp(vd, "ok");
			board_buf_printf(b, "<span class=\"sample %s\" title=\"",
					 isok ? "ok" : "bad");
			board_buf_esc(b, jstr(sm, "detail"), 400);
			board_buf_printf(
				b, "\">#%lld ",
				(long long)json_integer_value(json_object_get(sm, "sample")));
			board_buf_esc(b, vd, 40);
			const json_t *sp = json_object_get(sm, "speedup_eager");
			if (json_is_object(sp))
				board_buf_printf(b, " %.2f\xc3\x97 [%.2f, %.2f]",
						 json_number_value(json_object_get(sp, "median")),
						 json_number_value(json_object_get(sp, "lo")),
						 json_number_value(json_object_get(sp, "hi")));
			const char *sp_path = jstr(sm, "source_path");
			if (*sp_path) {
				char *link = copy_source(s, c, t, j, sp_path);
				if (link) {
					board_buf_printf(b, " <a href=\"");
					board_buf_esc(b, link, 0);
					board_buf_printf(b, "\">source</a>");
					free(link);
				} else {
					board_buf_printf(b, " <span class=\"missing\" title=\"");
					board_buf_esc(b, sp_path, 200);
					board_buf_printf(b,
							 " was not found next to the scorecard\">"
							 "(source missing)</span>");
				}
			}
			board_buf_printf(b, "</span> ");
		}
		board_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
}

static void page_rounds(struct board_buf *b, const struct card *c)
{
	const json_t *sm = json_object_get(c->sc, "summary");
	const json_t *rounds = json_object_get(c->sc, "rounds");
	board_buf_printf(b, "<h2>Summary</h2>\n<table class=\"facts\">\n");
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)sm, key, val)
	{
		board_buf_printf(b, "<tr><th scope=\"row\">");
		board_buf_esc(b, key, 60);
		board_buf_printf(b, "</th>");
		if (json_is_object(val) && json_object_get(val, "value"))
			td_fig(b, val,
			       strstr(key, "minus") || strstr(key, "vs") || strstr(key, "delta") ||
					       strstr(key, "gain") || strstr(key, "change")
				       ? FMT_DIFF
				       : FMT_RATE);
		else if (!strcmp(key, "verdict"))
			td_verdict(b, json_string_value(val));
		else if (json_is_string(val))
			td_text(b, json_string_value(val));
		else if (json_is_integer(val))
			td_int(b, (long long)json_integer_value(val));
		else
			td_text(b, NULL);
		board_buf_printf(b, "</tr>\n");
	}
	board_buf_printf(b, "</table>\n");
	if (!rounds)
		return;
	/* C (or Q) per arm. */
	int proc = c->track == SCORECARD_TRACK_PROCEDURE_RSI;
	const char *field = proc ? "q" : "c";
	static const char *const arm_names[] = {"self", "fresh_frozen", "round0", "improved",
						"frozen"};
	struct ser sr[5];
	struct board_series bs[5];
	int ns = 0;
	for (int a = 0; a < 5; a++) {
		ser_build(c->sc, arm_names[a], field, NULL, &sr[ns]);
		if (!sr[ns].n) {
			ser_free(&sr[ns]);
			continue;
		}
		bs[ns] = (struct board_series){arm_names[a], sr[ns].n,	sr[ns].x,
					       sr[ns].y,     sr[ns].lo, sr[ns].hi};
		ns++;
	}
	board_buf_printf(b, "<h2>Rounds</h2>\n<div class=\"plots\">\n");
	board_svg_lines(b, proc ? "Q per arm" : "C per arm", "round", proc ? "Q" : "mean C", bs, ns,
			0);
	for (int i = 0; i < ns; i++)
		ser_free(&sr[i]);
	board_buf_printf(b, "</div>\n");
	static const char *const cols[] = {"round",	 "arm",	      "C",	   "Q", "correct",
					   "compiled x", "diversity", "retention", NULL};
	table_open(b, "t-rounds", cols, "ntnnnnnn", -1);
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		const json_t *r = json_array_get(rounds, i);
		board_buf_printf(b, "<tr>");
		td_int(b, (long long)json_integer_value(json_object_get(r, "round")));
		td_text(b, jstr(r, "arm"));
		td_fig(b, json_object_get(r, "c"), FMT_RATE);
		td_fig(b, json_object_get(r, "q"), FMT_RATE);
		td_fig(b, json_object_get(r, "correct"), FMT_RATE);
		td_fig(b, json_object_get(r, "compiled_x"), FMT_SPEED);
		static const char *const plain[] = {"diversity", "retention"};
		for (int k = 0; k < 2; k++) {
			const json_t *v = json_object_get(r, plain[k]);
			if (json_is_number(v))
				board_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.2f</td>",
						 json_number_value(v), json_number_value(v));
			else
				board_buf_printf(b,
						 "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		}
		board_buf_printf(b, "</tr>\n");
	}
	table_close(b);
}

static int write_card_page(const struct site *s, const struct card *c, struct ka_err *e)
{
	struct board_buf b = {0};
	char *title =
		xasprintf("%s \xc2\xb7 %s \xc2\xb7 KernelAscent", c->name, track_label(c->track));
	page_open(&b, title, "../");
	free(title);
	board_buf_printf(&b, "<h1>");
	board_buf_esc(&b, c->name, 200);
	board_buf_printf(&b, " <span class=\"sub\">%s</span>", track_label(c->track));
	split_tag(&b, c);
	board_buf_printf(&b, "</h1>\n");
	facts(&b, c);
	if (json_object_get(c->sc, "tasks"))
		page_capability(&b, s, c);
	if (c->track != SCORECARD_TRACK_CAPABILITY)
		page_rounds(&b, c);
	page_close(&b);
	char *rel = xasprintf("m/%s.html", c->id);
	int rc = write_buf(s, rel, &b, e);
	free(rel);
	board_buf_free(&b);
	return rc;
}

/* ---- building -------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand a folder into its *.json files, in name order. */
static int expand(const char *path, char ***out, int *n, int *cap)
{
	struct stat st;
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*out = xrealloc(*out, (size_t)*cap * sizeof **out);
		}
		(*out)[(*n)++] = xstrdup(path);
		return 0;
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int first = *n;
	struct dirent *de;
	while ((de = readdir(d)) && *n < MAX_CARDS) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*out = xrealloc(*out, (size_t)*cap * sizeof **out);
		}
		(*out)[(*n)++] = xasprintf("%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
					   de->d_name);
	}
	closedir(d);
	qsort(*out + first, (size_t)(*n - first), sizeof **out, cmp_str);
	return 0;
}

int board_build(char *const *paths, int n_paths, const char *out_dir, FILE *log, int *n_ok,
		int *n_skipped, struct ka_err *e)
{
	struct site s = {0};
	s.out = out_dir;
	char **files = NULL;
	int nf = 0, capf = 0, rc = -1;
	for (int i = 0; i < n_paths; i++)
		if (expand(paths[i], &files, &nf, &capf))
			fprintf(log, "skipped %s: cannot open the folder\n", paths[i]);
	s.c = xcalloc((size_t)(nf ? nf : 1), sizeof *s.c);
	for (int i = 0; i < nf && s.n < MAX_CARDS; i++) {
		struct ka_err le;
		json_t *sc = scorecard_check_file(files[i], &le);
		if (!sc) {
			fprintf(log, "skipped %s\n", le.msg);
			s.n_skipped++;
			continue;
		}
		struct card *c = &s.c[s.n];
		c->path = files[i];
		files[i] = NULL;
		c->sc = sc;
		scorecard_track_parse(jstr(sc, "track"), &c->track);
		c->name = jstr(sc, c->track == SCORECARD_TRACK_HARNESS_RSI ? "trainee.name"
									   : "model.name");
		c->standardized = json_object_get(jget(sc, "summary"), "bank_tier") != NULL;
		char slug[48];
		sanitize(slug, sizeof slug, jstr(sc, "model.name"));
		snprintf(c->id, sizeof c->id, "%03d-%s-%s", s.n, slug, jstr(sc, "track"));
		s.n++;
	}
	char *mdir = xasprintf("%s/m", out_dir);
	if (util_mkdirs(mdir, e)) {
		free(mdir);
		goto out;
	}
	free(mdir);
	for (int i = 0; board_assets[i].name; i++) {
		char *p = xasprintf("%s/%s", out_dir, board_assets[i].name);
		int w = util_write_file(p, board_assets[i].data, strlen(board_assets[i].data), e);
		free(p);
		if (w)
			goto out;
	}
	struct board_buf b = {0};
	page_open(&b, "KernelAscent leaderboard", "");
	board_buf_printf(&b,
			 "<h1>KernelAscent leaderboard</h1>\n<p class=\"lede\">Do language "
			 "models get better at writing GPU kernels? A model writes a kernel; the "
			 "grader checks it against an fp32-or-better gold reference and times it "
			 "against baselines. Built from %d scorecard%s.</p>\n",
			 s.n, s.n == 1 ? "" : "s");
	int *idx = xcalloc((size_t)(s.n ? s.n : 1), sizeof *idx);
	board_capability(&b, &s, idx);
	board_weight_rsi(&b, &s, idx);
	board_standardized(&b, &s, idx);
	board_harness(&b, &s, idx);
	board_controls(&b, &s, idx);
	board_procedure(&b, &s, idx);
	board_frontier(&b, &s, idx);
	board_diagnostics(&b, &s, idx);
	board_datasets(&b, &s);
	board_buf_printf(&b,
			 "<section id=\"submit\">\n<h2>Submitting</h2>\n<p class=\"intro\">Run "
			 "<code>ka</code> on the public split, check the result with <code>ka "
			 "submit check scorecard.json</code>, and open a model submission issue "
			 "with the scorecard. Maintainers re-run on the held-out split and add "
			 "the row.</p>\n</section>\n");
	free(idx);
	page_close(&b);
	int w = write_buf(&s, "index.html", &b, e);
	board_buf_free(&b);
	if (w)
		goto out;
	for (int i = 0; i < s.n; i++)
		if (write_card_page(&s, &s.c[i], e))
			goto out;
	rc = 0;
out:
	if (n_ok)
		*n_ok = s.n;
	if (n_skipped)
		*n_skipped = s.n_skipped;
	for (int i = 0; i < s.n; i++) {
		free(s.c[i].path);
		json_decref(s.c[i].sc);
	}
	for (int i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	free(s.c);
	return rc;
}
