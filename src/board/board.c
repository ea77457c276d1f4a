/* board.c: `ka board` site generation. Reads scorecards (each checked with
 * scorecard_check_file; bad ones are skipped with one line), then writes
 * index.html with every board of the original (capability, weight RSI,
 * standardized banks, harness RSI, controls, procedure RSI, frontier,
 * diagnostics, datasets), one page per scorecard under m/ (with copies of
 * the kernel sources it names), and the embedded style.css and board.js.
 * Tables are complete HTML (they read without JavaScript); board.js only
 * sorts them. Every scorecard string is escaped (board_esc). */
#include "board.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scorecard.h"
#include "sign.h"

#define MAX_CARDS 4096
#define MAX_SOURCE_BYTES ((size_t)1 << 20)

struct card {
	char *path;
	json_t *sc;
	enum scorecard_track track;
	char id[96]; /* page m/<id>.html, sources in m/<id>/ */
	const char *name;
	int standardized; /* weight_rsi with summary.bank_tier */
	int verified;	  /* PATH.sig checks with a key of $KA_TRUSTED_KEYS (sign.h) */
	char signer[SIGN_PUB_HEX];
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
static void td_fig(struct util_buf *b, const json_t *fig, enum fmt f)
{
	struct metrics_figure x;
	scorecard_figure_get(fig, &x);
	if (!x.defined) {
		util_buf_printf(b, "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		return;
	}
	char v[32], lo[32], hi[32];
	num_text(v, sizeof v, x.value, f);
	num_text(lo, sizeof lo, x.lo, f);
	num_text(hi, sizeof hi, x.hi, f);
	util_buf_printf(b,
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

static void td_int(struct util_buf *b, long long v)
{
	util_buf_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld</td>", v, v);
}

static void td_text(struct util_buf *b, const char *s)
{
	util_buf_printf(b, "<td>");
	if (s && *s)
		board_esc(b, s, 200);
	else
		util_buf_printf(b, "\xe2\x80\x94");
	util_buf_printf(b, "</td>");
}

static void split_tag(struct util_buf *b, const struct card *c)
{
	if (!strcmp(jstr(c->sc, "bank.split"), "public"))
		util_buf_printf(b, " <span class=\"tag\" title=\"scored on the public split "
				   "(development), not on the held-out split\">public</span>");
	if (json_is_true(jget(c->sc, "device.test_grade")))
		util_buf_printf(
			b,
			" <span class=\"tag grey\" title=\"timed on a test-grade "
			"device (PoCL on a CPU): speedups are not comparable\">test grade</span>");
}

/* The model cell: name linking to its page, plus the split tag. */
static void td_model(struct util_buf *b, const struct card *c, const char *key)
{
	const json_t *m = json_object_get(c->sc, key);
	util_buf_printf(b, "<td data-v=\"");
	board_esc(b, jstr(m, "name"), 200);
	util_buf_printf(b, "\"><a href=\"m/%s.html\" title=\"", c->id);
	board_esc(b, jstr(m, "spec"), 300);
	util_buf_printf(b, "\">");
	board_esc(b, jstr(m, "name"), 80);
	util_buf_printf(b, "</a>");
	split_tag(b, c);
	if (c->verified)
		util_buf_printf(b,
				" <span class=\"verified\" title=\"signed by ed25519 %s\">"
				"\xe2\x9c\x93 verified</span>",
				c->signer);
	util_buf_printf(b, "</td>");
}

static void td_verdict(struct util_buf *b, const char *v)
{
	enum metrics_verdict mv;
	if (metrics_verdict_parse(v, &mv)) {
		td_text(b, v);
		return;
	}
	static const char *const cls[] = {"pos", "none", "neg"};
	static const int order[] = {2, 1, 0};
	util_buf_printf(b, "<td data-v=\"%d\"><span class=\"verdict %s\">%s</span></td>", order[mv],
			cls[mv], metrics_verdict_name(mv));
}

/* Header row: cols[i] with type 'n' (numeric) or 't' (text); sorted marks
 * the column the rows are already in (descending), -1 for none. */
static void table_open(struct util_buf *b, const char *id, const char *const *cols,
		       const char *types, int sorted)
{
	util_buf_printf(
		b, "<div class=\"tablewrap\"><table class=\"board\" id=\"%s\">\n<thead><tr>", id);
	for (int i = 0; cols[i]; i++)
		util_buf_printf(b,
				"<th scope=\"col\" class=\"%s\" data-type=\"%s\" aria-sort=\"%s\">"
				"<button type=\"button\">%s</button></th>",
				types[i] == 'n' ? "num" : "", types[i] == 'n' ? "num" : "text",
				sorted >= 0 && i == sorted ? "descending" : "none", cols[i]);
	util_buf_printf(b, "</tr></thead>\n<tbody>\n");
}

static void table_close(struct util_buf *b)
{
	util_buf_printf(b, "</tbody></table></div>\n");
}

/* A board with no cards: the note, and the end of its section. */
static void empty_section(struct util_buf *b)
{
	util_buf_printf(b, "<p class=\"empty\">No scorecards for this board yet.</p>\n");
	util_buf_printf(b, "</section>\n");
}

static double figv(const json_t *sc, const char *path)
{
	const json_t *f = jget(sc, path);
	return json_is_object(f) ? json_number_value(json_object_get(f, "value")) : -INFINITY;
}

/* Indices of the cards of one kind, ordered by the figure at key (a path in
 * the scorecard) descending, stable; a card without it goes last. */
typedef int (*card_pred)(const struct card *);

static int select_cards(const struct site *s, card_pred pred, const char *key, int *idx)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (pred(&s->c[i]))
			idx[n++] = i;
	for (int i = 1; i < n; i++)
		for (int j = i;
		     j > 0 && figv(s->c[idx[j]].sc, key) > figv(s->c[idx[j - 1]].sc, key); j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return n;
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
	if (c->track != SCORECARD_TRACK_WEIGHT_RSI)
		return 0;
	const json_t *rounds = json_object_get(c->sc, "rounds");
	for (size_t i = 0; i < json_array_size(rounds); i++)
		if (json_object_get(json_array_get(rounds, i), "diversity"))
			return 1;
	return 0;
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
static void plot_cards(struct util_buf *b, const struct site *s, const int *idx, int n,
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
		else if (c->standardized) /* the same model may also run the plain bank */
			names[i] = xasprintf("%s (%s)", c->name, jstr(c->sc, "summary.bank_tier"));
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

static void section_open(struct util_buf *b, const char *id, const char *title, const char *intro)
{
	util_buf_printf(b, "<section id=\"%s\">\n<h2>%s</h2>\n<p class=\"intro\">%s</p>\n", id,
			title, intro);
}

/* One column of a board's table: its header, the scorecard field its cells
 * show (a path such as "summary.c0"), how a cell is drawn, and the number
 * format of figure cells. */
struct column;
typedef void (*cell_fn)(struct util_buf *b, const struct card *c, const struct column *col);
struct column {
	const char *header;
	const char *field;
	cell_fn cell;
	enum fmt fmt;
};

static void cell_model(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_model(b, c, col->field);
}

static void cell_text(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_text(b, jstr(c->sc, col->field));
}

static void cell_int(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_int(b, (long long)json_integer_value(jget(c->sc, col->field)));
}

static void cell_fig(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_fig(b, jget(c->sc, col->field), col->fmt);
}

/* A figure against the compiled baseline: a dash where there is none. */
static void cell_fig_compiled(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_fig(b, has_compiled(c->sc) ? jget(c->sc, col->field) : NULL, col->fmt);
}

static void cell_verdict(struct util_buf *b, const struct card *c, const struct column *col)
{
	td_verdict(b, jstr(c->sc, col->field));
}

/* A standardized bank's tier (field: the summary), sorted small < mid <
 * large, with the anchor model in the hover title. */
static void cell_bank_tier(struct util_buf *b, const struct card *c, const struct column *col)
{
	const json_t *sm = jget(c->sc, col->field);
	const char *tier = jstr(sm, "bank_tier");
	int order = !strcmp(tier, "small") ? 0 : !strcmp(tier, "mid") ? 1 : 2;
	util_buf_printf(b, "<td data-v=\"%d\" title=\"anchor: ", order);
	board_esc(b, jstr(sm, "anchor"), 200);
	util_buf_printf(b, "\">");
	board_esc(b, tier, 20);
	util_buf_printf(b, "</td>");
}

/* A plain number (not a figure), or a dash. */
static void cell_num(struct util_buf *b, const struct card *c, const struct column *col)
{
	const json_t *v = jget(c->sc, col->field);
	if (!json_is_number(v)) {
		td_text(b, NULL);
		return;
	}
	char t[32];
	num_text(t, sizeof t, json_number_value(v), col->fmt);
	util_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%s</td>", json_number_value(v), t);
}

/* Tasks a standardized bank kept of its source (field: summary.standardized),
 * with the band in the hover title, sorted by the tasks kept. */
static void cell_kept(struct util_buf *b, const struct card *c, const struct column *col)
{
	const json_t *st = jget(c->sc, col->field);
	if (!json_is_object(st)) {
		td_text(b, NULL);
		return;
	}
	const json_t *band = json_object_get(st, "band");
	long long n = (long long)json_integer_value(json_object_get(st, "n_tasks"));
	util_buf_printf(b,
			"<td class=\"num\" data-v=\"%lld\" title=\"anchor pass-rate band [%.3f, "
			"%.3f], k %lld\">%lld of %lld</td>",
			n, json_number_value(json_array_get(band, 0)),
			json_number_value(json_array_get(band, 1)),
			(long long)json_integer_value(json_object_get(st, "k")), n,
			(long long)json_integer_value(json_object_get(st, "n_source_tasks")));
}

/* The frontier's size (field: the summary), first -> final, sorted by the
 * final size. */
static void cell_frontier(struct util_buf *b, const struct card *c, const struct column *col)
{
	const json_t *sm = jget(c->sc, col->field);
	long long f0 = (long long)json_integer_value(json_object_get(sm, "frontier_size0"));
	long long f1 = (long long)json_integer_value(json_object_get(sm, "frontier_final"));
	util_buf_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld \xe2\x86\x92 %lld</td>", f1, f0,
			f1);
}

/* Text columns sort as text, every other as numbers. */
static int column_is_text(const struct column *col)
{
	return col->cell == cell_model || col->cell == cell_text;
}

/* A line plot over rounds, one line per card (plot_cards). */
struct plot {
	const char *title, *ylabel, *arm, *field, *minus_arm;
	int zero_line;
	const char *name_key;
};

/* One board of the index: which cards, the table (columns end with a NULL
 * header; rows sorted descending on the figure of column sorted), then
 * extra drawing and the line plots (ending with a NULL title). */
struct board {
	const char *id, *title, *intro;
	card_pred pred;
	const char *table_id;
	const struct column *cols;
	int sorted;
	const char *sort_key; /* boards without a table */
	void (*extra)(struct util_buf *b, const struct site *s, const int *idx, int n);
	const struct plot *plots;
};

#define BOARD_MAX_COLS 32

static void board_table(struct util_buf *b, const struct site *s, const struct board *bd,
			const int *idx, int n)
{
	const char *heads[BOARD_MAX_COLS + 1];
	char types[BOARD_MAX_COLS + 1];
	int nc = 0;
	for (; nc < BOARD_MAX_COLS && bd->cols[nc].header; nc++) {
		heads[nc] = bd->cols[nc].header;
		types[nc] = column_is_text(&bd->cols[nc]) ? 't' : 'n';
	}
	heads[nc] = NULL;
	types[nc] = 0;
	table_open(b, bd->table_id, heads, types, bd->sorted);
	for (int i = 0; i < n; i++) {
		const struct card *c = &s->c[idx[i]];
		util_buf_printf(b, "<tr>");
		for (int k = 0; k < nc; k++)
			bd->cols[k].cell(b, c, &bd->cols[k]);
		util_buf_printf(b, "</tr>\n");
	}
	table_close(b);
}

static void board_render(struct util_buf *b, const struct site *s, const struct board *bd, int *idx)
{
	section_open(b, bd->id, bd->title, bd->intro);
	const char *key = bd->cols ? bd->cols[bd->sorted].field : bd->sort_key;
	int n = select_cards(s, bd->pred, key, idx);
	if (!n) {
		empty_section(b);
		return;
	}
	if (bd->cols)
		board_table(b, s, bd, idx, n);
	if (bd->extra)
		bd->extra(b, s, idx, n);
	if (bd->plots) {
		util_buf_printf(b, "<div class=\"plots\">\n");
		for (const struct plot *p = bd->plots; p->title; p++)
			plot_cards(b, s, idx, n, p->title, p->ylabel, p->arm, p->field,
				   p->minus_arm, p->zero_line, p->name_key);
		util_buf_printf(b, "</div>\n");
	}
	util_buf_printf(b, "</section>\n");
}

/* The capability board's per-task speedup distributions: rows are tasks
 * (union over models), colours are models. */
static void capability_strip(struct util_buf *b, const struct site *s, const int *idx, int n)
{
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
}

#define MINUS "\xe2\x88\x92"
#define OVERALL "aggregates.overall."

static const struct column cols_capability[] = {
	{"Model", "model", cell_model, 0},
	{"Kind", "model.kind", cell_text, 0},
	{"correct", OVERALL "correct", cell_fig, FMT_RATE},
	{"fast", OVERALL "fast", cell_fig, FMT_RATE},
	{"mean C", OVERALL "mean_c", cell_fig, FMT_RATE},
	{"fast vs compiled", OVERALL "fast_compiled", cell_fig_compiled, FMT_RATE},
	{"pass@k", OVERALL "pass_at_k", cell_fig, FMT_RATE},
	{"speedup (geomean)", OVERALL "geomean_speedup", cell_fig, FMT_SPEED},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_weight_rsi[] = {
	{"Model", "model", cell_model, 0},
	{"Family", "model.family", cell_text, 0},
	{"rounds", "summary.rounds", cell_int, 0},
	{"C0", "summary.c0", cell_fig, FMT_RATE},
	{"final", "summary.c_final", cell_fig, FMT_RATE},
	{"correct", "summary.correct", cell_fig, FMT_RATE},
	{"compiled x", "summary.compiled_x", cell_fig, FMT_SPEED},
	{"delta vs frozen", "summary.delta_vs_frozen", cell_fig, FMT_DIFF},
	{"self vs fresh-frozen", "summary.self_minus_fresh", cell_fig, FMT_DIFF},
	{"verdict", "summary.verdict", cell_verdict, 0},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_standardized[] = {
	{"Model", "model", cell_model, 0},
	{"Tier", "summary", cell_bank_tier, 0},
	{"rounds", "summary.rounds", cell_int, 0},
	{"C0 (speed)", "summary.c0", cell_fig, FMT_RATE},
	{"C final", "summary.c_final", cell_fig, FMT_RATE},
	{"self vs fresh-frozen", "summary.self_minus_fresh", cell_fig, FMT_DIFF},
	{"verdict", "summary.verdict", cell_verdict, 0},
	{"Anchor", "summary.anchor", cell_text, 0},
	{"anchor pass", "summary.standardized.pass_rate", cell_num, FMT_RATE},
	{"anchor C", "summary.standardized.c", cell_num, FMT_RATE},
	{"tasks kept", "summary.standardized", cell_kept, 0},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_harness[] = {
	{"Open trainee", "trainee", cell_model, 0},
	{"Researcher", "model.name", cell_text, 0},
	{"rounds", "summary.rounds", cell_int, 0},
	{"C0", "summary.c0", cell_fig, FMT_RATE},
	{"C improved", "summary.c_improved", cell_fig, FMT_RATE},
	{"C frozen", "summary.c_frozen", cell_fig, FMT_RATE},
	{"improved vs frozen", "summary.improved_vs_frozen", cell_fig, FMT_DIFF},
	{"verdict", "summary.verdict", cell_verdict, 0},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_controls[] = {
	{"Model", "model", cell_model, 0},
	{"weight-RSI C", "summary.weight_rsi_c", cell_fig, FMT_RATE},
	{"best-of-k", "summary.best_of_k", cell_fig, FMT_RATE},
	{"self-refine", "summary.self_refine", cell_fig, FMT_RATE},
	{"retrieval", "summary.retrieval", cell_fig, FMT_RATE},
	{"recursion gain", "summary.recursion_gain", cell_fig, FMT_DIFF},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_procedure[] = {
	{"Model", "model", cell_model, 0},
	{"Mode", "summary.mode", cell_text, 0},
	{"rounds", "summary.rounds", cell_int, 0},
	{"Q0", "summary.q0", cell_fig, FMT_RATE},
	{"Q final", "summary.q_final", cell_fig, FMT_RATE},
	{"Q gain vs frozen", "summary.q_gain_vs_frozen", cell_fig, FMT_DIFF},
	{"verdict", "summary.verdict", cell_verdict, 0},
	{NULL, NULL, NULL, 0},
};

static const struct column cols_frontier[] = {
	{"Model", "model", cell_model, 0},
	{"Proposer", "proposer.name", cell_text, 0},
	{"rounds", "summary.rounds", cell_int, 0},
	{"frontier tasks", "summary", cell_frontier, 0},
	{"C0", "summary.c0", cell_fig, FMT_RATE},
	{"C final", "summary.c_final", cell_fig, FMT_RATE},
	{"C change", "summary.c_change", cell_fig, FMT_DIFF},
	{"verdict", "summary.verdict", cell_verdict, 0},
	{NULL, NULL, NULL, 0},
};

static const struct plot plots_weight_rsi[] = {
	{"C of the self arm per round", "mean C", "self", "c", NULL, 0, NULL},
	{"Self minus fresh-frozen per round", "C(self) " MINUS " C(fresh-frozen)", "self", "c",
	 "fresh_frozen", 1, NULL},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

static const struct plot plots_standardized[] = {
	{"C (speed vs compiled) of the self arm per round", "mean C", "self", "c", NULL, 0, NULL},
	{"Self minus fresh-frozen per round", "C(self) " MINUS " C(fresh-frozen)", "self", "c",
	 "fresh_frozen", 1, NULL},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

static const struct plot plots_harness[] = {
	{"C of the trainee under the improved harness", "mean C", "improved", "c", NULL, 0,
	 "trainee"},
	{"Improved minus frozen harness per round", "C(improved) " MINUS " C(frozen)", "improved",
	 "c", "frozen", 1, "trainee"},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

static const struct plot plots_procedure[] = {
	{"Q of the self-modifying procedure per round", "Q", "self", "q", NULL, 0, NULL},
	{"Self-modify minus frozen procedure per round", "Q(self) " MINUS " Q(frozen)", "self", "q",
	 "frozen", 1, NULL},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

static const struct plot plots_frontier[] = {
	{"C on the growing frontier per round", "mean C", "self", "c", NULL, 0, NULL},
	{"Frontier size per round", "tasks", "self", "frontier_size", NULL, 0, NULL},
	{"Frontier difficulty per round", "1 " MINUS " solver pass rate", "self", "difficulty",
	 NULL, 0, NULL},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

static const struct plot plots_diagnostics[] = {
	{"Self-data diversity (distinct token 4-grams)", "distinct share", "self", "diversity",
	 NULL, 0, NULL},
	{"Self-data compression ratio (zlib, lower is more repetitive)", "compressed / raw", "self",
	 "compression", NULL, 0, NULL},
	{"Retention of round-0 solutions", "retention", "self", "retention", NULL, 0, NULL},
	{"Self minus fresh-frozen", "C(self) " MINUS " C(fresh-frozen)", "self", "c",
	 "fresh_frozen", 1, NULL},
	{"Recursion interruption: continued self minus checkpoint-frozen",
	 "C(self) " MINUS " C(ckpt-frozen)", "self", "c", "ckpt_frozen", 1, NULL},
	{NULL, NULL, NULL, NULL, NULL, 0, NULL},
};

/* The boards of the index, in page order (the datasets table follows). */
static const struct board boards[] = {
	{"capability", "Task 1 \xc2\xb7 Capability",
	 "Can the model write a correct and fast kernel in one shot? Fixed tasks, "
	 "k samples each. <em>correct</em> matches the fp32-or-better gold; "
	 "<em>fast</em> means the lower end of the speedup CI is above 1 against the "
	 "eager baseline (the compiled baseline is reported separately). "
	 "<em>mean C</em> is the mean score s. Open and closed models both compete. "
	 "Click a header to sort.",
	 is_cap, "t-capability", cols_capability, 4, NULL, capability_strip, NULL},
	{"weight-rsi", "Task 2 \xc2\xb7 Weight RSI",
	 "Open models only, rounds on the difficulty-standardized hard bank. Three arms "
	 "run in parallel: <em>self</em> trains on its own kernels, <em>fresh-frozen</em> "
	 "on kernels freshly sampled from the unchanged base each round, <em>round0</em> "
	 "retrains on the first round's data. The key column is <em>self vs "
	 "fresh-frozen</em>: positive means an improving producer makes better "
	 "descendants than a frozen producer given the same fresh data. Correctness and "
	 "compiled speedup are shown separately.",
	 is_wrsi, "t-weight-rsi", cols_weight_rsi, 8, NULL, NULL, plots_weight_rsi},
	{"standardized", "Standardized banks",
	 "Each model runs on a bank difficulty-filtered against a frozen anchor of its "
	 "own scale (small 1.5B, mid 7B, large 14B), scored on speed against the "
	 "compiled baseline where every size has headroom. This removes the benchmark "
	 "confound.",
	 is_std, "t-standardized", cols_standardized, 5, NULL, NULL, plots_standardized},
	{"harness-rsi", "Task 4 \xc2\xb7 Harness RSI",
	 "A closed model with fixed weights rewrites the training harness each round; "
	 "the harness trains an open model. The key column is <em>improved vs "
	 "frozen</em> harness on the open trainee: positive means the closed model's "
	 "edits causally produced a better open model.",
	 is_harness, "t-harness-rsi", cols_harness, 6, NULL, NULL, plots_harness},
	{"controls", "Non-recursive controls",
	 "Every gain is checked against non-recursive methods at the same generation "
	 "budget (best-of-k sampling, in-context self-refine, archive retrieval), all "
	 "frozen-weight and scored with the identical grader. <em>recursion gain</em> = "
	 "weight-RSI final C minus the best non-recursive baseline: positive means "
	 "training on your own kernels beats simply sampling more.",
	 is_controls, "t-controls", cols_controls, 5, NULL, NULL, NULL},
	{"procedure-rsi", "Task 3 \xc2\xb7 Procedure RSI",
	 "A model with fixed weights rewrites its own executable research procedure "
	 "each round (strategy library, solver prompt, verified-kernel archive). "
	 "<em>Q</em> is the held-out quality of the current procedure; the key column "
	 "is <em>Q gain vs frozen</em> procedure. Open and closed models both compete.",
	 is_proc, "t-procedure-rsi", cols_procedure, 5, NULL, NULL, plots_procedure},
	{"frontier", "Task 5 \xc2\xb7 Frontier",
	 "Each round a proposer mutates the kernels the model just solved into "
	 "strictly harder variants, validates them on the GPU and grows the frontier, "
	 "so difficulty co-evolves with the solver. Holding or rising C on a growing "
	 "frontier is genuine compounding, not fitting a fixed set.",
	 is_frontier, "t-frontier", cols_frontier, 5, NULL, NULL, plots_frontier},
	{"diagnostics", "Diagnostics",
	 "Rounds of weight RSI, logging the state of each model's own training signal "
	 "every round. Models that keep self-data diversity high and retain their "
	 "round-0 solutions keep gaining; models whose self-generated kernels collapse "
	 "in diversity and forget prior solutions drive self-minus-fresh negative. Each "
	 "line is a model.",
	 is_diag, NULL, NULL, 0, "summary.self_minus_fresh", NULL, plots_diagnostics},
};

static const char *track_label(enum scorecard_track t)
{
	static const char *const l[] = {"Capability",  "Weight RSI", "Procedure RSI",
					"Harness RSI", "Frontier",   "Controls"};
	return (unsigned)t < SCORECARD_TRACK_COUNT ? l[t] : "?";
}

static void board_datasets(struct util_buf *b, const struct site *s)
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
		util_buf_printf(b, "<tr><td>%s</td>", track_label(c->track));
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
			util_buf_printf(b, "<td>");
			board_esc(b, jstr(bk, "path"), 120);
			util_buf_printf(
				b, " (%lld tasks, hash <code>",
				(long long)json_integer_value(json_object_get(bk, "n_tasks")));
			board_esc(b, jstr(bk, "hash"), 12);
			util_buf_printf(b, "</code>)</td>");
		} else {
			td_text(b, NULL);
		}
		if (held >= 0)
			util_buf_printf(
				b, "<td>%lld tasks, unreleased</td>",
				(long long)json_integer_value(jget(s->c[held].sc, "bank.n_tasks")));
		else
			td_text(b, NULL);
		util_buf_printf(b, "</tr>\n");
	}
	free(done);
	table_close(b);
	util_buf_printf(b, "</section>\n");
}

/* ---- page frame ---------------------------------------------------------------- */

static void page_open(struct util_buf *b, const char *title_esc_src, const char *root)
{
	util_buf_printf(b,
			"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			"<title>");
	board_esc(b, title_esc_src, 200);
	util_buf_printf(b,
			"</title>\n<link rel=\"stylesheet\" href=\"%sstyle.css\">\n"
			"<script src=\"%sboard.js\" defer></script>\n</head>\n<body>\n",
			root, root);
	util_buf_printf(b,
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
		util_buf_printf(b, "<a href=\"%sindex.html#%s\">%s</a>", root, nav[i][0],
				nav[i][1]);
	util_buf_printf(b, "</nav></header>\n<main>\n");
}

static void page_close(struct util_buf *b)
{
	util_buf_printf(b,
			"</main>\n<footer>Built by <code>ka board</code> from scorecards "
			"(schemas %s and %s). Every figure shows its 95%% bootstrap CI over "
			"tasks.</footer>\n</body>\n</html>\n",
			SCORECARD_SCHEMA, SCORECARD_SCHEMA_2);
}

static int write_buf(const struct site *s, const char *rel, struct util_buf *b, struct ka_err *e)
{
	char *p = xasprintf("%s/%s", s->out, rel);
	int rc = util_write_file(p, b->s ? b->s : "", b->len, e);
	free(p);
	return rc;
}

/* ---- per-scorecard pages ----------------------------------------------------------- */

static void kv(struct util_buf *b, const char *k, const char *v)
{
	util_buf_printf(b, "<tr><th scope=\"row\">%s</th><td>", k);
	board_esc(b, v && *v ? v : "\xe2\x80\x94", 400);
	util_buf_printf(b, "</td></tr>\n");
}

static void facts(struct util_buf *b, const struct card *c)
{
	const json_t *sc = c->sc;
	char t[256];
	util_buf_printf(b, "<table class=\"facts\">\n");
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
	struct util_buf p = {0};
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)jget(sc, "protocol"), key, val)
	{
		if (json_is_integer(val))
			util_buf_printf(&p, "%s%s = %lld", p.len ? ", " : "", key,
					(long long)json_integer_value(val));
		else if (json_is_real(val))
			util_buf_printf(&p, "%s%s = %g", p.len ? ", " : "", key,
					json_real_value(val));
		else if (json_is_string(val))
			util_buf_printf(&p, "%s%s = %s", p.len ? ", " : "", key,
					json_string_value(val));
	}
	kv(b, "protocol", p.s);
	free(p.s);
	snprintf(t, sizeof t, "%s by ka %s", jstr(sc, "created"), jstr(sc, "ka_version"));
	kv(b, "created", t);
	util_buf_printf(b, "</table>\n");
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

/* The capability page's aggregates, one row per tier and overall. */
static void page_aggregates(struct util_buf *b, const struct card *c)
{
	const json_t *ag = json_object_get(c->sc, "aggregates");
	util_buf_printf(b, "<h2>Aggregates</h2>\n");
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
		util_buf_printf(b, "<tr><td>%s</td>", keys[i]);
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
		util_buf_printf(b, "</tr>\n");
	}
	table_close(b);
}

/* The capability page's speedups per task (the first 64 tasks). */
static void page_speedups(struct util_buf *b, const struct card *c)
{
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
	util_buf_printf(b, "<h2>Speedups</h2>\n");
	board_svg_strip(b, "Speedup vs eager per task (each dot a correct sample)",
			"speedup vs eager (log scale)", &st);
	free(rows);
	free(prow);
	free(pgrp);
	free(pv);
}

/* The samples cell of a task row: each sample's verdict, speedup and a link
 * to its source (copied next to the page). */
static void td_samples(struct util_buf *b, const struct site *s, const struct card *c, size_t t,
		       const json_t *samples)
{
	size_t n = json_array_size(samples);
	util_buf_printf(b, "<td class=\"samples\">");
	for (size_t j = 0; j < n; j++) {
		const json_t *sm = json_array_get(samples, j);
		const char *vd = jstr(sm, "verdict");
		int isok = !strcmp(vd, "ok");
		util_buf_printf(b, "<span class=\"sample %s\" title=\"", isok ? "ok" : "bad");
		board_esc(b, jstr(sm, "detail"), 400);
		util_buf_printf(b, "\">#%lld ",
				(long long)json_integer_value(json_object_get(sm, "sample")));
		board_esc(b, vd, 40);
		const json_t *sp = json_object_get(sm, "speedup_eager");
		if (json_is_object(sp))
			util_buf_printf(b, " %.2f\xc3\x97 [%.2f, %.2f]",
					json_number_value(json_object_get(sp, "median")),
					json_number_value(json_object_get(sp, "lo")),
					json_number_value(json_object_get(sp, "hi")));
		const char *sp_path = jstr(sm, "source_path");
		if (*sp_path) {
			char *link = copy_source(s, c, t, j, sp_path);
			if (link) {
				util_buf_printf(b, " <a href=\"");
				board_esc(b, link, 0);
				util_buf_printf(b, "\">source</a>");
				free(link);
			} else {
				util_buf_printf(b, " <span class=\"missing\" title=\"");
				board_esc(b, sp_path, 200);
				util_buf_printf(b, " was not found next to the scorecard\">"
						   "(source missing)</span>");
			}
		}
		util_buf_printf(b, "</span> ");
	}
}

/* A standardized bank's facts in one cell of the summary table. */
static void td_standardized(struct util_buf *b, const json_t *st)
{
	const json_t *band = json_object_get(st, "band");
	char *t = xasprintf(
		"%s bank: %lld of %lld tasks with an anchor pass rate in [%.3f, %.3f] (k %lld); "
		"anchor %s",
		jstr(st, "scale"), (long long)json_integer_value(json_object_get(st, "n_tasks")),
		(long long)json_integer_value(json_object_get(st, "n_source_tasks")),
		json_number_value(json_array_get(band, 0)),
		json_number_value(json_array_get(band, 1)),
		(long long)json_integer_value(json_object_get(st, "k")), jstr(st, "anchor"));
	td_text(b, t);
	free(t);
}

/* The capability page's table of tasks. */
static void page_tasks(struct util_buf *b, const struct site *s, const struct card *c)
{
	const json_t *tasks = json_object_get(c->sc, "tasks");
	size_t nt = json_array_size(tasks);
	util_buf_printf(b, "<h2>Tasks</h2>\n");
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
		util_buf_printf(b, "<tr>");
		td_text(b, jstr(task, "name"));
		td_text(b, jstr(task, "tier"));
		util_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%d / %zu</td>",
				n ? (double)ok / (double)n : 0, ok, n);
		util_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%.2f</td>", ssum / (double)n,
				ssum / (double)n);
		if (best > 0)
			util_buf_printf(b, "<td class=\"num\" data-v=\"%.6g\">%.2f\xc3\x97</td>",
					best, best);
		else
			util_buf_printf(b, "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		td_samples(b, s, c, t, samples);
		util_buf_printf(b, "</td></tr>\n");
	}
	table_close(b);
}

static void page_capability(struct util_buf *b, const struct site *s, const struct card *c)
{
	page_aggregates(b, c);
	page_speedups(b, c);
	page_tasks(b, s, c);
}

static void page_rounds(struct util_buf *b, const struct card *c)
{
	const json_t *sm = json_object_get(c->sc, "summary");
	const json_t *rounds = json_object_get(c->sc, "rounds");
	util_buf_printf(b, "<h2>Summary</h2>\n<table class=\"facts\">\n");
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)sm, key, val)
	{
		util_buf_printf(b, "<tr><th scope=\"row\">");
		board_esc(b, key, 60);
		util_buf_printf(b, "</th>");
		if (json_is_object(val) && json_object_get(val, "value"))
			td_fig(b, val,
			       strstr(key, "minus") || strstr(key, "vs") || strstr(key, "delta") ||
					       strstr(key, "gain") || strstr(key, "change")
				       ? FMT_DIFF
				       : FMT_RATE);
		else if (!strcmp(key, "verdict"))
			td_verdict(b, json_string_value(val));
		else if (!strcmp(key, "standardized"))
			td_standardized(b, val);
		else if (json_is_string(val))
			td_text(b, json_string_value(val));
		else if (json_is_integer(val))
			td_int(b, (long long)json_integer_value(val));
		else
			td_text(b, NULL);
		util_buf_printf(b, "</tr>\n");
	}
	util_buf_printf(b, "</table>\n");
	if (!rounds)
		return;
	/* C (or Q) per arm. */
	int proc = c->track == SCORECARD_TRACK_PROCEDURE_RSI;
	const char *field = proc ? "q" : "c";
	static const char *const arm_names[] = {"self",	    "fresh_frozen", "round0",
						"improved", "frozen",	    "ckpt_frozen"};
	struct ser sr[6];
	struct board_series bs[6];
	int ns = 0;
	for (int a = 0; a < 6; a++) {
		ser_build(c->sc, arm_names[a], field, NULL, &sr[ns]);
		if (!sr[ns].n) {
			ser_free(&sr[ns]);
			continue;
		}
		bs[ns] = (struct board_series){arm_names[a], sr[ns].n,	sr[ns].x,
					       sr[ns].y,     sr[ns].lo, sr[ns].hi};
		ns++;
	}
	util_buf_printf(b, "<h2>Rounds</h2>\n<div class=\"plots\">\n");
	board_svg_lines(b, proc ? "Q per arm" : "C per arm", "round", proc ? "Q" : "mean C", bs, ns,
			0);
	for (int i = 0; i < ns; i++)
		ser_free(&sr[i]);
	util_buf_printf(b, "</div>\n");
	static const char *const cols[] = {"round",	"arm",	      "C",	   "Q",
					   "correct",	"compiled x", "diversity", "compression",
					   "retention", NULL};
	table_open(b, "t-rounds", cols, "ntnnnnnnn", -1);
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		const json_t *r = json_array_get(rounds, i);
		util_buf_printf(b, "<tr>");
		td_int(b, (long long)json_integer_value(json_object_get(r, "round")));
		td_text(b, jstr(r, "arm"));
		td_fig(b, json_object_get(r, "c"), FMT_RATE);
		td_fig(b, json_object_get(r, "q"), FMT_RATE);
		td_fig(b, json_object_get(r, "correct"), FMT_RATE);
		td_fig(b, json_object_get(r, "compiled_x"), FMT_SPEED);
		static const char *const plain[] = {"diversity", "compression", "retention"};
		for (int k = 0; k < 3; k++) {
			const json_t *v = json_object_get(r, plain[k]);
			if (json_is_number(v))
				util_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.2f</td>",
						json_number_value(v), json_number_value(v));
			else
				util_buf_printf(b,
						"<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		}
		util_buf_printf(b, "</tr>\n");
	}
	table_close(b);
}

/* Harness RSI: which harness each arm trained with in each round, what it
 * chose and how the researcher's edit was decided (the rows' harness
 * fields, docs/harness.md). */
static void page_harness(struct util_buf *b, const struct card *c)
{
	const json_t *rounds = json_object_get(c->sc, "rounds");
	static const char *const cols[] = {"round",    "arm",	      "harness", "status",
					   "examples", "distinct",    "pool",	 "train loss",
					   "edit",     "edit reason", NULL};
	util_buf_printf(b, "<h2>Harness versions</h2>\n<p>Each version is kept in the run's "
			   "<code>OUT/harness/round-N.lua</code> with its diff "
			   "<code>round-N.diff</code>.</p>\n");
	table_open(b, "t-harness", cols, "ntttnnnntt", -1);
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		const json_t *r = json_array_get(rounds, i);
		const json_t *ed = json_object_get(r, "edit");
		char ver[48];
		snprintf(ver, sizeof ver, "round-%lld (%s)",
			 (long long)json_integer_value(json_object_get(r, "harness_version")),
			 jstr(r, "harness"));
		util_buf_printf(b, "<tr>");
		td_int(b, (long long)json_integer_value(json_object_get(r, "round")));
		td_text(b, jstr(r, "arm"));
		td_text(b, ver);
		td_text(b, jstr(r, "harness_status"));
		static const char *const ints[] = {"n_examples", "n_distinct", "n_pool"};
		for (int k = 0; k < 3; k++)
			td_int(b, (long long)json_integer_value(json_object_get(r, ints[k])));
		const json_t *loss = json_object_get(r, "train_loss");
		if (json_is_number(loss))
			util_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.4f</td>",
					json_number_value(loss), json_number_value(loss));
		else
			util_buf_printf(b, "<td class=\"num\" data-v=\"\">\xe2\x80\x94</td>");
		td_text(b, !ed						   ? NULL
			   : json_is_true(json_object_get(ed, "accepted")) ? "accepted"
									   : "rejected");
		td_text(b, ed && !json_is_true(json_object_get(ed, "accepted")) ? jstr(ed, "reason")
										: NULL);
		util_buf_printf(b, "</tr>\n");
	}
	table_close(b);
}

static int write_card_page(const struct site *s, const struct card *c, struct ka_err *e)
{
	struct util_buf b = {0};
	char *title =
		xasprintf("%s \xc2\xb7 %s \xc2\xb7 KernelAscent", c->name, track_label(c->track));
	page_open(&b, title, "../");
	free(title);
	util_buf_printf(&b, "<h1>");
	board_esc(&b, c->name, 200);
	util_buf_printf(&b, " <span class=\"sub\">%s</span>", track_label(c->track));
	split_tag(&b, c);
	util_buf_printf(&b, "</h1>\n");
	facts(&b, c);
	if (json_object_get(c->sc, "tasks"))
		page_capability(&b, s, c);
	if (c->track != SCORECARD_TRACK_CAPABILITY)
		page_rounds(&b, c);
	if (c->track == SCORECARD_TRACK_HARNESS_RSI)
		page_harness(&b, c);
	page_close(&b);
	char *rel = xasprintf("m/%s.html", c->id);
	int rc = write_buf(s, rel, &b, e);
	free(rel);
	free(b.s);
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

/* Verified rows: with KA_TRUSTED_KEYS naming a list of public keys (lines
 * "ed25519 HEX [name]"), a scorecard whose PATH.sig checks against one of
 * them is marked; a .sig that does not check is named on log. NULL when the
 * variable is unset or the list cannot be read (said on log). */
static struct sign_keys *trusted_keys(FILE *log)
{
	const char *path = getenv("KA_TRUSTED_KEYS");
	if (!path || !*path)
		return NULL;
	struct sign_keys *k = xcalloc(1, sizeof *k);
	struct ka_err e;
	if (sign_keys_load(path, k, &e)) {
		fprintf(log, "no row marked verified: %s\n", e.msg);
		free(k);
		return NULL;
	}
	return k;
}

static void mark_verified(struct card *c, const struct sign_keys *trusted, FILE *log)
{
	struct ka_err e;
	char *sig = xasprintf("%s.sig", c->path);
	if (trusted && access(sig, F_OK) == 0) {
		if (sign_verify_file(c->path, sig, trusted, c->signer, &e) == 0)
			c->verified = 1;
		else
			fprintf(log, "not verified %s: %s\n", c->path, e.msg);
	}
	free(sig);
}

int board_build(char *const *paths, int n_paths, const char *out_dir, FILE *log, int *n_ok,
		int *n_skipped, struct ka_err *e)
{
	struct site s = {0};
	struct sign_keys *trusted = trusted_keys(log);
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
		mark_verified(c, trusted, log);
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
	struct util_buf b = {0};
	page_open(&b, "KernelAscent leaderboard", "");
	util_buf_printf(&b,
			"<h1>KernelAscent leaderboard</h1>\n<p class=\"lede\">Do language "
			"models get better at writing GPU kernels? A model writes a kernel; the "
			"grader checks it against an fp32-or-better gold reference and times it "
			"against baselines. Built from %d scorecard%s.</p>\n",
			s.n, s.n == 1 ? "" : "s");
	int *idx = xcalloc((size_t)(s.n ? s.n : 1), sizeof *idx);
	for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++)
		board_render(&b, &s, &boards[i], idx);
	board_datasets(&b, &s);
	util_buf_printf(&b, "<section id=\"submit\">\n<h2>Submitting</h2>\n<p class=\"intro\">Run "
			    "<code>ka</code> on the public split, check the result with <code>ka "
			    "submit check scorecard.json</code>, and open a model submission issue "
			    "with the scorecard. Maintainers re-run on the held-out split and add "
			    "the row.</p>\n</section>\n");
	free(idx);
	page_close(&b);
	int w = write_buf(&s, "index.html", &b, e);
	free(b.s);
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
	free(trusted);
	return rc;
}
