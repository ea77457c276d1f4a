/* board_svg.c: the leaderboard's plots, drawn as inline SVG text by ka
 * itself (no plotting library, no script): line plots over rounds and strip
 * plots of speedups. Also the HTML escape every board page uses. Layout numbers are in SVG user
 * units; the CSS scales the figure to the page width. */
#include "board.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void board_esc(struct util_buf *b, const char *s, size_t max)
{
	if (!s)
		return;
	size_t n = strlen(s);
	int cut = max && n > max;
	if (cut) {
		n = max;
		/* Do not split a UTF-8 sequence. */
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': util_buf_printf(b, "&amp;"); break;
		case '<': util_buf_printf(b, "&lt;"); break;
		case '>': util_buf_printf(b, "&gt;"); break;
		case '"': util_buf_printf(b, "&quot;"); break;
		case '\'': util_buf_printf(b, "&#39;"); break;
		default: util_buf_printf(b, "%c", s[i]);
		}
	}
	if (cut)
		util_buf_printf(b, "\xe2\x80\xa6"); /* ellipsis */
}

static const char *const palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
				      "#e69f00", "#56b4e9", "#7f3c8d", "#3a3a3a"};

const char *board_color(int i)
{
	return palette[(unsigned)i % (sizeof palette / sizeof palette[0])];
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for a range. */
static double nice_step(double range, int want)
{
	if (!(range > 0))
		return 1;
	double raw = range / want, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void fmt_tick(char *out, size_t cap, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (dec > 6)
		dec = 6;
	if (fabs(v) < step * 1e-6)
		v = 0;
	snprintf(out, cap, "%.*f", dec, v);
}

#define W 640
#define H 300
#define ML 60
#define MR 170 /* legend column */
#define MT 34
#define MB 48

/* The figure, its w x h svg and the title (as aria-label, <title> and the
 * visible heading at x = left); the caller ends with </svg></figure>. */
static void figure_open(struct util_buf *b, const char *title, int w, int h, int left)
{
	util_buf_printf(b,
			"<figure class=\"plot\"><svg viewBox=\"0 0 %d %d\" role=\"img\" "
			"aria-label=\"",
			w, h);
	board_esc(b, title, 0);
	util_buf_printf(b, "\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>");
	board_esc(b, title, 0);
	util_buf_printf(b, "</title>\n<text class=\"ptitle\" x=\"%d\" y=\"20\">", left);
	board_esc(b, title, 0);
	util_buf_printf(b, "</text>\n");
}

void board_svg_lines(struct util_buf *b, const char *title, const char *xlabel, const char *ylabel,
		     const struct board_series *s, int ns, int zero_line)
{
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	int npts = 0;
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < s[i].n; j++) {
			double lo = s[i].lo ? s[i].lo[j] : s[i].y[j];
			double hi = s[i].hi ? s[i].hi[j] : s[i].y[j];
			if (!isfinite(s[i].y[j]))
				continue;
			npts++;
			xmin = fmin(xmin, s[i].x[j]);
			xmax = fmax(xmax, s[i].x[j]);
			ymin = fmin(ymin, fmin(lo, s[i].y[j]));
			ymax = fmax(ymax, fmax(hi, s[i].y[j]));
		}
	if (!npts) {
		util_buf_printf(b, "<p class=\"empty\">No data to plot for ");
		board_esc(b, title, 0);
		util_buf_printf(b, ".</p>\n");
		return;
	}
	if (zero_line) {
		ymin = fmin(ymin, 0);
		ymax = fmax(ymax, 0);
	}
	if (xmax - xmin < 1)
		xmax = xmin + 1;
	double pad = (ymax - ymin) * 0.08;
	if (pad <= 0)
		pad = fabs(ymax) * 0.1 + 0.05;
	ymin -= pad;
	ymax += pad;
	double ystep = nice_step(ymax - ymin, 5);
	ymin = floor(ymin / ystep) * ystep;
	ymax = ceil(ymax / ystep) * ystep;
	const double pw = W - ML - MR, ph = H - MT - MB;
#define PX(x) (ML + ((x)-xmin) / (xmax - xmin) * pw)
#define PY(y) (MT + (ymax - (y)) / (ymax - ymin) * ph)
	figure_open(b, title, W, H, ML);
	/* Grid and y ticks. */
	char t[32];
	for (double y = ymin; y <= ymax + ystep * 1e-6; y += ystep) {
		fmt_tick(t, sizeof t, y, ystep);
		util_buf_printf(b,
				"<line class=\"grid\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" "
				"y2=\"%.1f\"/><text class=\"tick\" x=\"%d\" y=\"%.1f\" "
				"text-anchor=\"end\">%s</text>\n",
				ML, ML + pw, PY(y), PY(y), ML - 6, PY(y) + 4, t);
	}
	/* x ticks: integers, at most ~13 labels. */
	int xs = (int)ceil((xmax - xmin) / 12);
	if (xs < 1)
		xs = 1;
	for (double x = ceil(xmin); x <= xmax + 1e-9; x += xs)
		util_buf_printf(b,
				"<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
				"y2=\"%.1f\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
				"text-anchor=\"middle\">%.0f</text>\n",
				PX(x), PX(x), MT + ph, MT + ph + 5, PX(x), MT + ph + 18, x);
	util_buf_printf(b, "<line class=\"axis\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
			ML, ML + pw, MT + ph, MT + ph);
	util_buf_printf(b, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.1f\"/>\n", ML,
			ML, MT, MT + ph);
	if (zero_line && ymin < 0 && ymax > 0)
		util_buf_printf(b,
				"<line class=\"zero\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" "
				"y2=\"%.1f\"/>\n",
				ML, ML + pw, PY(0), PY(0));
	util_buf_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			ML + pw / 2, H - 8);
	board_esc(b, xlabel, 0);
	util_buf_printf(b,
			"</text>\n<text class=\"label\" transform=\"translate(16 %.1f) "
			"rotate(-90)\" text-anchor=\"middle\">",
			MT + ph / 2);
	board_esc(b, ylabel, 0);
	util_buf_printf(b, "</text>\n");
	/* Series: CI band, line, points with hover text. A series without
	 * points (a model that did not log this field) draws nothing and takes
	 * no legend entry, but keeps its color index so that a model has the
	 * same color in every plot of a board. */
	int nl = 0;
	for (int i = 0; i < ns; i++) {
		const char *col = board_color(i);
		if (!s[i].n)
			continue;
		if (s[i].lo && s[i].hi && s[i].n > 1) {
			util_buf_printf(b, "<polygon class=\"band\" fill=\"%s\" points=\"", col);
			for (int j = 0; j < s[i].n; j++)
				util_buf_printf(b, "%.1f,%.1f ", PX(s[i].x[j]), PY(s[i].hi[j]));
			for (int j = s[i].n - 1; j >= 0; j--)
				util_buf_printf(b, "%.1f,%.1f ", PX(s[i].x[j]), PY(s[i].lo[j]));
			util_buf_printf(b, "\"/>\n");
		}
		util_buf_printf(b, "<polyline class=\"line\" stroke=\"%s\" points=\"", col);
		for (int j = 0; j < s[i].n; j++)
			util_buf_printf(b, "%.1f,%.1f ", PX(s[i].x[j]), PY(s[i].y[j]));
		util_buf_printf(b, "\"/>\n");
		for (int j = 0; j < s[i].n; j++) {
			util_buf_printf(b,
					"<circle class=\"pt\" fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" "
					"r=\"3\"><title>",
					col, PX(s[i].x[j]), PY(s[i].y[j]));
			board_esc(b, s[i].name, 80);
			util_buf_printf(b, ", %s %.0f: %.3f", xlabel, s[i].x[j], s[i].y[j]);
			if (s[i].lo && s[i].hi)
				util_buf_printf(b, " [%.3f, %.3f]", s[i].lo[j], s[i].hi[j]);
			util_buf_printf(b, "</title></circle>\n");
		}
		/* Legend entry. */
		double ly = MT + 8 + nl++ * 20;
		util_buf_printf(
			b,
			"<line class=\"line\" stroke=\"%s\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
			"y2=\"%.1f\"/><text class=\"legend\" x=\"%d\" y=\"%.1f\">",
			col, W - MR + 8, W - MR + 26, ly, ly, W - MR + 32, ly + 4);
		board_esc(b, s[i].name, 18);
		util_buf_printf(b, "<title>");
		board_esc(b, s[i].name, 200);
		util_buf_printf(b, "</title></text>\n");
	}
	util_buf_printf(b, "</svg></figure>\n");
#undef PX
#undef PY
}

void board_svg_strip(struct util_buf *b, const char *title, const char *xlabel,
		     const struct board_strip *s)
{
	if (!s->n || !s->n_rows) {
		util_buf_printf(b, "<p class=\"empty\">No correct samples to plot for ");
		board_esc(b, title, 0);
		util_buf_printf(b, ".</p>\n");
		return;
	}
	/* x axis: log2 of the speedup, whole powers of two around the data. */
	double lmin = 0, lmax = 0;
	for (int i = 0; i < s->n; i++) {
		double l = log2(s->v[i]);
		lmin = fmin(lmin, l);
		lmax = fmax(lmax, l);
	}
	lmin = floor(lmin);
	lmax = ceil(lmax);
	if (lmin == lmax)
		lmax = lmin + 1;
	const int ml = 150, mr = 170, mt = 34, mb = 48, rh = 22;
	const int h = mt + mb + rh * s->n_rows;
	const double pw = W - ml - mr;
#define SX(l) (ml + ((l)-lmin) / (lmax - lmin) * pw)
	figure_open(b, title, W, h, ml);
	for (int r = 0; r < s->n_rows; r++) {
		double y = mt + rh * (r + 0.5);
		if (r % 2 == 0)
			util_buf_printf(b,
					"<rect class=\"stripe\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
					"height=\"%d\"/>\n",
					ml, y - rh / 2.0, pw, rh);
		util_buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
				ml - 8, y + 4);
		board_esc(b, s->rows[r], 24);
		util_buf_printf(b, "</text>\n");
	}
	for (double l = lmin; l <= lmax + 1e-9; l += 1) {
		double v = pow(2, l);
		util_buf_printf(b,
				"<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
				"text-anchor=\"middle\">%g\xc3\x97</text>\n",
				l == 0 ? "zero" : "grid", SX(l), SX(l), mt, h - mb, SX(l),
				h - mb + 18, v);
	}
	util_buf_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			ml + pw / 2, h - 8);
	board_esc(b, xlabel, 0);
	util_buf_printf(b, "</text>\n");
	for (int i = 0; i < s->n; i++) {
		/* Spread groups vertically inside the row so models do not hide
		 * each other; a fixed offset, no randomness. */
		double off = s->n_groups > 1
				     ? ((double)s->group[i] / (s->n_groups - 1) - 0.5) * (rh - 8)
				     : 0;
		double y = mt + rh * (s->row[i] + 0.5) + off;
		util_buf_printf(
			b,
			"<circle class=\"dot\" fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">"
			"<title>",
			board_color(s->group[i]), SX(log2(s->v[i])), y);
		board_esc(b, s->groups[s->group[i]], 80);
		util_buf_printf(b, ", ");
		board_esc(b, s->rows[s->row[i]], 80);
		util_buf_printf(b, ": %.2f\xc3\x97</title></circle>\n", s->v[i]);
	}
	for (int g = 0; g < s->n_groups; g++) {
		double ly = mt + 8 + g * 20;
		util_buf_printf(b,
				"<circle fill=\"%s\" cx=\"%d\" cy=\"%.1f\" r=\"4\"/><text "
				"class=\"legend\" x=\"%d\" y=\"%.1f\">",
				board_color(g), W - mr + 16, ly, W - mr + 26, ly + 4);
		board_esc(b, s->groups[g], 19);
		util_buf_printf(b, "<title>");
		board_esc(b, s->groups[g], 200);
		util_buf_printf(b, "</title></text>\n");
	}
	util_buf_printf(b, "</svg></figure>\n");
#undef SX
}
