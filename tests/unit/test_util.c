/* test_util.c: util_buf, the growing text buffer bank.c, gold.c and the
 * board build their generated text in: appends in a row, an empty append,
 * growth far past the first allocation, and the exact bytes. */
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

int main(void)
{
	RUN(test_buf_appends);
	RUN(test_buf_grows);
	TEST_EXIT();
}
