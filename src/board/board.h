/* board.h: the leaderboard, a static site built from scorecards only (the
 * scorecard schema is the contract). board.c lays out the pages and tables,
 * board_svg.c draws the plots as inline SVG, board_assets.c (generated from
 * web/ by tools/embed.sh) holds the CSS and JavaScript. Every string that
 * comes from a scorecard is HTML-escaped on the way out. Nothing here talks
 * to the network or reads anything but the scorecards and the kernel sources
 * they name. */
#ifndef KA_BOARD_H
#define KA_BOARD_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* Build the site into out_dir from paths (scorecard files, or folders whose
 * *.json files are taken in name order). A scorecard that does not pass
 * scorecard_check_file is skipped with one line "skipped FILE: field:
 * problem" on log. Writes index.html, style.css, board.js and one page per
 * scorecard under m/. Returns 0 once the site is written (*n_ok and
 * *n_skipped say how many scorecards were used and skipped), or -1 with e
 * when the site could not be written. */
int board_build(char *const *paths, int n_paths, const char *out_dir, FILE *log, int *n_ok,
		int *n_skipped, struct ka_err *e);

/* Append s to b HTML-escaped (& < > " '), at most max bytes of it (0 = all;
 * a cut never splits a UTF-8 character and ends with an ellipsis). */
void board_esc(struct util_buf *b, const char *s, size_t max);

/* One line of a line plot: n points (x[i], y[i]); lo/hi (may be NULL) give a
 * CI band. name is outside text (escaped when drawn). */
struct board_series {
	const char *name;
	int n;
	const double *x, *y, *lo, *hi;
};

/* A line plot with labelled axes, integer x ticks, a legend, one colour per
 * series (by its index: a series without points is neither drawn nor in
 * the legend, and the others keep their colours), and a dashed line at
 * y = 0 when zero_line is set and 0 is in range. Appends
 * <figure><svg>...</svg></figure> to b; with no points it appends a note
 * instead. */
void board_svg_lines(struct util_buf *b, const char *title, const char *xlabel, const char *ylabel,
		     const struct board_series *s, int ns, int zero_line);

/* A strip plot: one row per task (rows names), each point a speedup on a
 * log2 x axis, coloured by group (groups names, the legend). Point i is in
 * row row[i] and group group[i]. */
struct board_strip {
	int n_rows, n_groups, n;
	const char *const *rows;
	const char *const *groups;
	const int *row, *group;
	const double *v;
};
void board_svg_strip(struct util_buf *b, const char *title, const char *xlabel,
		     const struct board_strip *s);

/* The colour of series i (a fixed colour-blind-safe palette). */
const char *board_color(int i);

/* Embedded web assets (board_assets.c, generated). */
struct board_asset {
	const char *name;
	const char *data;
};
extern const struct board_asset board_assets[]; /* ends with {NULL, NULL} */

#endif
