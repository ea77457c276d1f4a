/* test_linediff.c: the unified line diff (src/linediff.h): equal texts give
 * nothing; a changed line, an insertion at the start and a deletion at the
 * end give the hunks `diff -u` prints, with three lines of context; far
 * apart changes make two hunks (each as GNU diff -u prints it); a missing final newline is not a
 * change. */
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "linediff.h"

static void test_equal(void)
{
	int a = -1, r = -1;
	char *d = linediff_unified("x\ny\n", "x\ny", "a", "b", &a, &r);
	CHECK_STR(d, "");
	CHECK_EQ_INT(a, 0);
	CHECK_EQ_INT(r, 0);
	free(d);
}

static void test_one_change(void)
{
	int a, r;
	char *d = linediff_unified("1\n2\n3\n4\n5\n", "1\n2\nthree\n4\n5\n", "old", "new", &a, &r);
	CHECK_STR(d, "--- old\n+++ new\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n+three\n 4\n 5\n");
	CHECK_EQ_INT(a, 1);
	CHECK_EQ_INT(r, 1);
	free(d);
}

static void test_ends(void)
{
	char *d = linediff_unified("b\nc\n", "a\nb\nc\n", "x", "y", NULL, NULL);
	CHECK_STR(d, "--- x\n+++ y\n@@ -1,2 +1,3 @@\n+a\n b\n c\n");
	free(d);
	d = linediff_unified("a\nb\nc\n", "", "x", "y", NULL, NULL);
	CHECK_STR(d, "--- x\n+++ y\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n");
	free(d);
}

static void test_two_hunks(void)
{
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n";
	const char *b = "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n";
	int na, nr;
	char *d = linediff_unified(a, b, "a", "b", &na, &nr);
	CHECK_STR(d, "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -11,4 +12,3 @@\n 11\n"
		     " 12\n 13\n-14\n");
	CHECK_EQ_INT(na, 1);
	CHECK_EQ_INT(nr, 1);
	free(d);
}

int main(void)
{
	RUN(test_equal);
	RUN(test_one_change);
	RUN(test_ends);
	RUN(test_two_hunks);
	TEST_EXIT();
}
