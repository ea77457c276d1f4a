/* linediff.h: a unified diff of two texts, line by line (what `diff -u`
 * prints), for showing what an edit changed: the harness versions of track
 * 4 (OUT/harness/round-N.diff) and the evidence a researcher reads. The
 * common prefix and suffix are matched first; the rest by a longest common
 * subsequence of lines, or, past LINEDIFF_CELLS of table, as one block
 * removed and one added (still a correct diff, only a longer one). */
#ifndef KA_LINEDIFF_H
#define KA_LINEDIFF_H

#define LINEDIFF_CELLS (4u << 20) /* LCS table cells at most */
#define LINEDIFF_CONTEXT 3	  /* lines of context around a change */

/* The unified diff from a (named name_a) to b (name_b): "--- name_a\n+++
 * name_b\n" and hunks "@@ -l,n +l,n @@"; "" when the texts are equal. A
 * missing final newline is treated as present. *added and *removed (may be
 * NULL) get the counts of added and removed lines. Caller frees. */
char *linediff_unified(const char *a, const char *b, const char *name_a, const char *name_b,
		       int *added, int *removed);

#endif
