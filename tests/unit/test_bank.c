/* test_bank.c: bank_content_hash, the hash a scorecard's bank.hash carries
 * (ka --track writes it, ka submit check compares it): its value for an
 * empty bank, that it names content and not location, that any change to a
 * task changes it, and its errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bank.h"
#include "ka_test.h"
#include "util.h"

static char tmp[64];

/* cp -r src dst (both plain paths of the test's own making). */
static int copy_tree(const char *src, const char *dst)
{
	char *cmd = xasprintf("cp -r '%s' '%s'", src, dst);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

static void test_empty_bank(void)
{
	char dir[128], hex[17];
	snprintf(dir, sizeof dir, "%s/empty", tmp);
	struct ka_err e;
	CHECK_EQ_INT(util_mkdirs(dir, &e), 0);
	int n = -1;
	uint64_t h = 0;
	CHECK_EQ_INT(bank_content_hash(dir, &h, &n, &e), 0);
	CHECK_EQ_INT(n, 0);
	/* util_hash64("ka-bank", 7, 0): nothing but the definition's seed */
	CHECK_EQ_UINT(h, 0x7b17ad24d1d45ec5ULL);
	CHECK_EQ_INT(bank_content_hash_hex(dir, hex, NULL, &e), 0);
	CHECK_STR(hex, "7b17ad24d1d45ec5");
}

static void test_content_not_location(void)
{
	char copy[128], a[17], b[17];
	snprintf(copy, sizeof copy, "%s/copy", tmp);
	CHECK_EQ_INT(copy_tree("tests/data/tasks_good", copy), 0);
	struct ka_err e;
	int na = 0, nb = 0;
	CHECK_EQ_INT(bank_content_hash_hex("tests/data/tasks_good", a, &na, &e), 0);
	CHECK_EQ_INT(bank_content_hash_hex(copy, b, &nb, &e), 0);
	CHECK(na == 2 && nb == 2);
	CHECK_STR(a, b);
	/* the public bank is another bank */
	char p[17];
	CHECK_EQ_INT(bank_content_hash_hex(bank_default_path(), p, NULL, &e), 0);
	CHECK(strcmp(p, a) != 0);
}

/* Each edit of one task of a copy of tests/data/tasks_good changes the hash. */
static const struct {
	const char *file;   /* under the copy */
	const char *append; /* text appended to it */
} edits[] = {
	{"add_scale/ref.c", "\n/* one more comment */\n"},
	{"row_dot/ref.c", " "},
};

static void test_any_edit_changes_it(void)
{
	struct ka_err e;
	char before[17];
	CHECK_EQ_INT(bank_content_hash_hex("tests/data/tasks_good", before, NULL, &e), 0);
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		char dir[128], after[17];
		snprintf(dir, sizeof dir, "%s/edit%zu", tmp, i);
		CHECK_EQ_INT(copy_tree("tests/data/tasks_good", dir), 0);
		char *path = xasprintf("%s/%s", dir, edits[i].file);
		FILE *f = fopen(path, "a");
		free(path);
		CHECK(f != NULL);
		fputs(edits[i].append, f);
		fclose(f);
		CHECK_EQ_INT(bank_content_hash_hex(dir, after, NULL, &e), 0);
		CHECK(strcmp(before, after) != 0);
	}
}

static void test_errors(void)
{
	struct ka_err e;
	uint64_t h;
	CHECK_EQ_INT(bank_content_hash("/nonexistent/bank", &h, NULL, &e), -1);
	CHECK(strstr(e.msg, "/nonexistent/bank") != NULL);
	/* a bank holding a task that does not load */
	char dir[128];
	snprintf(dir, sizeof dir, "%s/bad", tmp);
	CHECK_EQ_INT(util_mkdirs(dir, &e), 0);
	char *dst = xasprintf("%s/malformed_json", dir);
	CHECK_EQ_INT(copy_tree("tests/data/tasks_bad/malformed_json", dst), 0);
	free(dst);
	CHECK_EQ_INT(bank_content_hash(dir, &h, NULL, &e), -1);
	CHECK(strstr(e.msg, "task.json") != NULL);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/ka-test-bank-XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("FAIL test_bank: mkdtemp\n");
		return 1;
	}
	RUN(test_empty_bank);
	RUN(test_content_not_location);
	RUN(test_any_edit_changes_it);
	RUN(test_errors);
	util_rmtree(tmp);
	TEST_EXIT();
}
