/* ka_test.h: the tiny unit-test harness. A test file defines test functions
 * and lists them in main with RUN(fn). A failing check prints one line
 * "FAIL <test>: <file>:<line>: <what>" and ends the test function; each test
 * that passes prints "PASS <test>". tests/run.sh counts those lines.
 *
 * Checks, each with the expression as written and, where there are two
 * values, both of them (so a failure says what was got and what was wanted):
 *   CHECK(cond)                 cond is true
 *   CHECK_EQ_INT(got, want)     integers equal (compared as long long)
 *   CHECK_EQ_UINT(got, want)    unsigned integers equal (unsigned long long,
 *                               printed in decimal and hex: hashes, bit patterns)
 *   CHECK_EQ_STR(got, want)     strings equal; NULL equals nothing
 *   CHECK_STR(got, want)        the same as CHECK_EQ_STR (older name)
 *   CHECK_NEAR(got, want, tol)  |got - want| <= tol (NaN is never near) */
#ifndef KA_TEST_H
#define KA_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int ka_test_failed;
static const char *ka_test_name;

#define KA_TEST_FAIL_(...)                                                                         \
	do {                                                                                       \
		printf("FAIL %s: %s:%d: ", ka_test_name, __FILE__, __LINE__);                      \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
		ka_test_failed = 1;                                                                \
		return;                                                                            \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			KA_TEST_FAIL_("%s", #cond);                                                \
	} while (0)

#define CHECK_EQ_INT(got, want)                                                                    \
	do {                                                                                       \
		long long ka_g_ = (long long)(got), ka_w_ = (long long)(want);                     \
		if (ka_g_ != ka_w_)                                                                \
			KA_TEST_FAIL_("%s == %s: got %lld, want %lld", #got, #want, ka_g_, ka_w_); \
	} while (0)

#define CHECK_EQ_UINT(got, want)                                                                   \
	do {                                                                                       \
		unsigned long long ka_g_ = (unsigned long long)(got),                              \
				   ka_w_ = (unsigned long long)(want);                             \
		if (ka_g_ != ka_w_)                                                                \
			KA_TEST_FAIL_("%s == %s: got %llu (0x%llx), want %llu (0x%llx)", #got,     \
				      #want, ka_g_, ka_g_, ka_w_, ka_w_);                          \
	} while (0)

#define CHECK_EQ_STR(got, want)                                                                    \
	do {                                                                                       \
		const char *ka_g_ = (got), *ka_w_ = (want);                                        \
		if (!ka_g_ || !ka_w_ || strcmp(ka_g_, ka_w_))                                      \
			KA_TEST_FAIL_("%s == %s: got \"%s\", want \"%s\"", #got, #want,            \
				      ka_g_ ? ka_g_ : "(null)", ka_w_ ? ka_w_ : "(null)");         \
	} while (0)

#define CHECK_STR(got, want) CHECK_EQ_STR(got, want)

#define CHECK_STR_CONTAINS(got, part)                                                              \
	do {                                                                                       \
		const char *ka_g_ = (got), *ka_p_ = (part);                                        \
		if (!ka_g_ || !ka_p_ || !strstr(ka_g_, ka_p_))                                     \
			KA_TEST_FAIL_("%s contains %s: got \"%s\", want a part \"%s\"", #got,      \
				      #part, ka_g_ ? ka_g_ : "(null)", ka_p_ ? ka_p_ : "(null)");  \
	} while (0)

#define CHECK_NEAR(got, want, tol)                                                                 \
	do {                                                                                       \
		double ka_g_ = (double)(got), ka_w_ = (double)(want), ka_t_ = (double)(tol);       \
		if (!(ka_g_ == ka_w_ || fabs(ka_g_ - ka_w_) <= ka_t_))                             \
			KA_TEST_FAIL_("%s ~= %s: got %.17g, want %.17g (tolerance %g)", #got,      \
				      #want, ka_g_, ka_w_, ka_t_);                                 \
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
		fflush(stdout); /* a test killed later still shows these lines */                  \
	} while (0)

static int ka_test_any_failed;
#define TEST_EXIT() return ka_test_any_failed

#endif
