/* test_board.c: board rendering. board_esc on hostile text; and a site built
 * by board_build from two small capability scorecards (fixtures, one renamed
 * to a <script> tag) in a temporary folder: the capability table's headers
 * and sort attributes, a figure cell, the row order (mean C descending), the
 * hostile name escaped and never raw, and the empty boards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "ka_test.h"
#include "scorecard.h"
#include "util.h"

/* Checks that print both values when they fail. */
#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                                \
			printf("FAIL %s: %s:%d: %s == \"%s\", want \"%s\"\n", ka_test_name,        \
			       __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");    \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define T_EQ_INT(a, b)                                                                             \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			printf("FAIL %s: %s:%d: %s == %lld, want %lld\n", ka_test_name, __FILE__,  \
			       __LINE__, #a, a_, b_);                                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)
/* hay contains needle (hay shown cut to 300 bytes). */
#define T_CONTAINS(hay, needle)                                                                    \
	do {                                                                                       \
		const char *h_ = (hay), *n_ = (needle);                                            \
		if (!h_ || !strstr(h_, n_)) {                                                      \
			printf("FAIL %s: %s:%d: \"%.300s\" lacks \"%s\"\n", ka_test_name,          \
			       __FILE__, __LINE__, h_ ? h_ : "(null)", n_);                        \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static char tmpdir[256];

static void test_esc(void)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} cases[] = {
		{"<script>alert(1)</script>", 0, "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"a&b \"c\" 'd'", 0, "a&amp;b &quot;c&quot; &#39;d&#39;"},
		{"abcdef", 3, "abc\xe2\x80\xa6"},
		{"\xc3\xa9\xc3\xa9", 3, "\xc3\xa9\xe2\x80\xa6"}, /* not cut inside a character */
		{"", 0, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct util_buf b = {0};
		util_buf_printf(&b, "%s", "");
		board_esc(&b, cases[i].in, cases[i].max);
		char got[128];
		snprintf(got, sizeof got, "%s", b.s);
		free(b.s);
		T_EQ_STR(got, cases[i].want);
	}
}

/* The text of the element <table ... id="id"> ... </table>, or NULL. */
static char *table_of(const char *html, const char *id)
{
	char *open = xasprintf("<table class=\"board\" id=\"%s\">", id);
	const char *a = strstr(html, open);
	free(open);
	const char *z = a ? strstr(a, "</table>") : NULL;
	return z ? xasprintf("%.*s", (int)(z - a), a) : NULL;
}

static int copy_renamed(const char *from, const char *to, const char *name)
{
	struct ka_err e;
	json_t *sc = scorecard_load(from, &e);
	if (!sc)
		return -1;
	if (name)
		json_object_set_new(json_object_get(sc, "model"), "name", json_string(name));
	int rc = json_dump_file(sc, to, JSON_INDENT(1));
	json_decref(sc);
	return rc;
}

static void test_capability_table(void)
{
	char *cards = xasprintf("%s/cards", tmpdir), *site = xasprintf("%s/site", tmpdir);
	char *a = xasprintf("%s/a.json", cards), *b = xasprintf("%s/b.json", cards);
	struct ka_err e;
	CHECK(util_mkdirs(cards, &e) == 0);
	CHECK(copy_renamed("tests/data/scorecards/good/cap_qwen7b.json", a,
			   "<script>alert(9)</script>") == 0);
	CHECK(copy_renamed("tests/data/scorecards/good/cap_fable.json", b, NULL) == 0);
	int n_ok = 0, n_skipped = 0;
	FILE *log = fopen("/dev/null", "w");
	int rc = board_build(&cards, 1, site, log, &n_ok, &n_skipped, &e);
	fclose(log);
	T_EQ_INT(rc, 0);
	T_EQ_INT(n_ok, 2);
	T_EQ_INT(n_skipped, 0);
	char *ip = xasprintf("%s/index.html", site), *html = NULL;
	size_t len;
	CHECK(util_read_file(ip, (size_t)16 << 20, &html, &len, &e) == 0);
	char *t = table_of(html, "t-capability");
	CHECK(t);
	/* Headers: text then numeric columns; mean C is the sorted one. */
	T_CONTAINS(t, "<th scope=\"col\" class=\"\" data-type=\"text\" aria-sort=\"none\">"
		      "<button type=\"button\">Model</button></th>"
		      "<th scope=\"col\" class=\"\" data-type=\"text\" aria-sort=\"none\">"
		      "<button type=\"button\">Kind</button></th>"
		      "<th scope=\"col\" class=\"num\" data-type=\"num\" aria-sort=\"none\">"
		      "<button type=\"button\">correct</button></th>");
	T_CONTAINS(t, "<th scope=\"col\" class=\"num\" data-type=\"num\" aria-sort=\"descending\">"
		      "<button type=\"button\">mean C</button></th>");
	/* Fable's mean C cell: sort value, figure, CI beside it and in the title. */
	T_CONTAINS(t, "<td class=\"num\" data-v=\"0.48779146604247603\" title=\"95% CI [0.37, "
		      "0.59]\">0.49<span class=\"ci\"> [0.37, 0.59]</span></td>");
	/* Rows in mean C order: Fable (0.49) before the renamed Qwen (0.30). */
	const char *fable = strstr(t, ">Fable-5.1</a>");
	const char *hostile = strstr(t, ">&lt;script&gt;alert(9)&lt;/script&gt;</a>");
	CHECK(fable && hostile);
	CHECK(fable < hostile);
	T_CONTAINS(t, "<td data-v=\"&lt;script&gt;alert(9)&lt;/script&gt;\">");
	/* Never raw anywhere on the page. */
	CHECK(!strstr(html, "<script>alert(9)"));
	/* The six other boards with tables, and diagnostics, say they are empty. */
	int empty = 0;
	for (const char *p = html; (p = strstr(p, "No scorecards for this board yet.")); p++)
		empty++;
	T_EQ_INT(empty, 7);
	free(t);
	free(html);
	free(ip);
	free(a);
	free(b);
	free(cards);
	free(site);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ka-test-board-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL test_board: mkdtemp\n");
		return 1;
	}
	RUN(test_esc);
	RUN(test_capability_table);
	util_rmtree(tmpdir);
	TEST_EXIT();
}
