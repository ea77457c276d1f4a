/* ka_test.h: the tiny unit-test harness. A test file defines test functions
 * and lists them in main with RUN(fn). Each check failing prints
 * "FAIL <test>: <file>:<line>: <expr>"; each test that passes prints
 * "PASS <test>". tests/run.sh counts those lines. */
#ifndef KA_TEST_H
#define KA_TEST_H

#include <stdio.h>
#include <string.h>

static int ka_test_failed;
static const char *ka_test_name;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s: %s:%d: %s\n", ka_test_name, __FILE__, __LINE__, #cond);   \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *sa_ = (a), *sb_ = (b);                                                 \
		if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                                            \
			printf("FAIL %s: %s:%d: \"%s\" != \"%s\"\n", ka_test_name, __FILE__,       \
			       __LINE__, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define RUN(fn)                                                                                    \
	do {                                                                                       \
		ka_test_name = #fn;                                                                \
		ka_test_failed = 0;                                                                \
		fn();                                                                              \
		if (!ka_test_failed)                                                               \
			printf("PASS %s\n", #fn);                                                  \
		else                                                                               \
			ka_test_any_failed = 1;                                                    \
	} while (0)

static int ka_test_any_failed;
#define TEST_EXIT() return ka_test_any_failed

#endif
