/* linediff.c: a unified line diff (see linediff.h). The texts are split into
 * lines, the common prefix and suffix are taken as they are, and the middle
 * is aligned by a longest common subsequence (a table of 16-bit lengths,
 * filled from the end). The edit script is a string of ops, one per line of
 * the output: ' ' kept, '-' removed (from a), '+' added (from b); hunks are
 * the runs of changes with LINEDIFF_CONTEXT kept lines around them. */
#include "linediff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct lines {
	const char **s; /* start of each line */
	size_t *len;	/* its length without the newline */
	size_t n;
};

static void split_lines(const char *t, struct lines *l)
{
	size_t cap = 16;
	l->n = 0;
	l->s = xmalloc(cap * sizeof *l->s);
	l->len = xmalloc(cap * sizeof *l->len);
	for (const char *p = t; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (l->n == cap) {
			cap *= 2;
			l->s = xrealloc(l->s, cap * sizeof *l->s);
			l->len = xrealloc(l->len, cap * sizeof *l->len);
		}
		l->s[l->n] = p;
		l->len[l->n++] = n;
		p += n + (nl ? 1 : 0);
	}
}

static int same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->s[i], b->s[j], a->len[i]);
}

/* The ops aligning a[a0..a1) with b[b0..b1) appended to ops at *k. */
static void align_middle(const struct lines *a, size_t a0, size_t a1, const struct lines *b,
			 size_t b0, size_t b1, char *ops, size_t *k)
{
	size_t n = a1 - a0, m = b1 - b0;
	int small = n < 65535 && m < 65535 && (n + 1) * (m + 1) <= LINEDIFF_CELLS;
	uint16_t *t = small && n && m ? xcalloc((n + 1) * (m + 1), sizeof *t) : NULL;
	if (t) {
		for (size_t i = n; i-- > 0;)
			for (size_t j = m; j-- > 0;) {
				uint16_t *c = &t[i * (m + 1) + j];
				if (same(a, a0 + i, b, b0 + j))
					*c = (uint16_t)(t[(i + 1) * (m + 1) + j + 1] + 1);
				else {
					uint16_t d = t[(i + 1) * (m + 1) + j],
						 r = t[i * (m + 1) + j + 1];
					*c = d > r ? d : r;
				}
			}
	}
	size_t i = 0, j = 0;
	while (t && i < n && j < m) {
		if (same(a, a0 + i, b, b0 + j)) {
			ops[(*k)++] = ' ';
			i++;
			j++;
		} else if (t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) {
			ops[(*k)++] = '-';
			i++;
		} else {
			ops[(*k)++] = '+';
			j++;
		}
	}
	for (; i < n; i++)
		ops[(*k)++] = '-';
	for (; j < m; j++)
		ops[(*k)++] = '+';
	free(t);
}

/* Print the hunk of ops[h0..h1) whose first line is a's line ai, b's bj. */
static void print_hunk(struct util_buf *o, const char *ops, size_t h0, size_t h1,
		       const struct lines *a, size_t ai, const struct lines *b, size_t bj)
{
	size_t na = 0, nb = 0;
	for (size_t k = h0; k < h1; k++) {
		na += ops[k] != '+';
		nb += ops[k] != '-';
	}
	util_buf_printf(o, "@@ -%zu,%zu +%zu,%zu @@\n", na ? ai + 1 : ai, na, nb ? bj + 1 : bj, nb);
	for (size_t k = h0; k < h1; k++) {
		const struct lines *l = ops[k] == '+' ? b : a;
		size_t at = ops[k] == '+' ? bj : ai;
		util_buf_putc(o, ops[k]);
		util_buf_add(o, l->s[at], l->len[at]);
		util_buf_putc(o, '\n');
		ai += ops[k] != '+';
		bj += ops[k] != '-';
	}
}

/* The hunks of ops (nops of them) into o. */
static void print_hunks(struct util_buf *o, const char *ops, size_t nops, const struct lines *a,
			const struct lines *b)
{
	size_t k = 0, ai = 0, bj = 0;
	while (k < nops) {
		if (ops[k] == ' ') {
			k++, ai++, bj++;
			continue;
		}
		/* a change at k: back up over context, then run to the end of
		 * the last change followed by less than 2 x context kept lines */
		size_t back = k < LINEDIFF_CONTEXT ? k : LINEDIFF_CONTEXT;
		size_t h0 = k - back, end = k;
		for (size_t q = k; q < nops; q++) {
			if (ops[q] != ' ') {
				end = q + 1;
				continue;
			}
			if (q - end >= 2 * LINEDIFF_CONTEXT)
				break;
		}
		size_t h1 = end + LINEDIFF_CONTEXT < nops ? end + LINEDIFF_CONTEXT : nops;
		print_hunk(o, ops, h0, h1, a, ai - back, b, bj - back);
		for (size_t q = k; q < h1; q++) {
			ai += ops[q] != '+';
			bj += ops[q] != '-';
		}
		k = h1;
	}
}

char *linediff_unified(const char *a, const char *b, const char *name_a, const char *name_b,
		       int *added, int *removed)
{
	struct lines la, lb;
	split_lines(a, &la);
	split_lines(b, &lb);
	size_t pre = 0, suf = 0;
	while (pre < la.n && pre < lb.n && same(&la, pre, &lb, pre))
		pre++;
	while (suf < la.n - pre && suf < lb.n - pre &&
	       same(&la, la.n - 1 - suf, &lb, lb.n - 1 - suf))
		suf++;
	char *ops = xmalloc(la.n + lb.n + 1);
	size_t k = 0;
	for (size_t i = 0; i < pre; i++)
		ops[k++] = ' ';
	align_middle(&la, pre, la.n - suf, &lb, pre, lb.n - suf, ops, &k);
	for (size_t i = 0; i < suf; i++)
		ops[k++] = ' ';
	int na = 0, nr = 0;
	for (size_t i = 0; i < k; i++) {
		na += ops[i] == '+';
		nr += ops[i] == '-';
	}
	struct util_buf o;
	util_buf_init(&o);
	if (na || nr) {
		util_buf_printf(&o, "--- %s\n+++ %s\n", name_a, name_b);
		print_hunks(&o, ops, k, &la, &lb);
	}
	if (added)
		*added = na;
	if (removed)
		*removed = nr;
	free(ops);
	free(la.s);
	free(la.len);
	free(lb.s);
	free(lb.len);
	char *s = util_buf_take(&o);
	return s ? s : xstrdup("");
}
