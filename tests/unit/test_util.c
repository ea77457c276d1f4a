/* test_util.c: util_buf, the growing text buffer bank.c, gold.c and the
 * board build their generated text in (appends in a row, an empty append,
 * growth far past the first allocation, the exact bytes), and
 * util_log_summary, the one-line compiler log summary of bank and gold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "util.h"

static void test_buf_appends(void)
{
	struct util_buf b = {0};
	util_buf_printf(&b, "%s", "");
	CHECK(b.len == 0 && b.s && b.s[0] == 0);
	util_buf_printf(&b, "x=%d", 42);
	util_buf_printf(&b, ", %s", "y");
	util_buf_printf(&b, "%c", '!');
	CHECK_STR(b.s, "x=42, y!");
	CHECK(b.len == 8);
	free(b.s);
}

static void test_buf_grows(void)
{
	struct util_buf b = {0};
	for (int i = 0; i < 1000; i++)
		util_buf_printf(&b, "%04d;", i);
	CHECK(b.len == 5000);
	CHECK(strlen(b.s) == 5000);
	CHECK(!strncmp(b.s, "0000;0001;", 10));
	CHECK_STR(b.s + 4990, "0998;0999;");
	CHECK(b.cap > b.len);
	/* one append larger than everything before it */
	char big[3000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	util_buf_printf(&b, "%s", big);
	CHECK(b.len == 5000 + 2999 && b.s[b.len] == 0 && b.s[b.len - 1] == 'a');
	free(b.s);
}

static const struct {
	const char *log;
	size_t cap;
	const char *want;
} summaries[] = {
	{"a.c:1: warning: w\na.c:2: error: y\nnote\na.c:3: error: z\n", 256,
	 "a.c:2: error: y | a.c:3: error: z"},
	{"no errors here\n\nsecond\nthird\nfourth\n", 256, "no errors here | second | third"},
	{"e1 error:\ne2 error:\ne3 error:\ne4 error:\n", 256, "e1 error: | e2 error: | e3 error:"},
	{"x\terror: tab\r\n", 256, "x error: tab "},
	{"error: abcdefghij\n", 8, "error: "},
	{"", 256, ""},
};

static void test_log_summary(void)
{
	for (size_t i = 0; i < sizeof summaries / sizeof summaries[0]; i++) {
		char out[256];
		util_log_summary(summaries[i].log, out, summaries[i].cap);
		CHECK_STR(out, summaries[i].want);
	}
}

int main(void)
{
	RUN(test_buf_appends);
	RUN(test_buf_grows);
	RUN(test_log_summary);
	TEST_EXIT();
}
