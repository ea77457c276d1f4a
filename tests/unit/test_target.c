/* test_target.c: the one #include scan both targets use (target_check_includes)
 * as a table of sources against a two-name allow-list, with the tricks that
 * would hide a directive from a naive scan (splices, trigraphs, digraphs,
 * comments, raw strings); then each target's own header list on the same
 * sources (OpenCL through its compile step, which refuses before running a
 * compiler; CUDA through cudac_check_includes); then target_check_deps. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudac.h"
#include "ka_test.h"
#include "target.h"
#include "task.h"
#include "util.h"

static int allow_two(const char *name, const void *ctx)
{
	return !strcmp(name, "ok.h") || !strcmp(name, "CL/cl.h");
}

static const struct {
	const char *src;
	int ok;
} scan[] = {
	{"#include \"ok.h\"\n#include <CL/cl.h>\n", 1},
	{"  #  include <ok.h>\nint x;\n", 1},
	{"#include <bad.h>\n", 0},
	{"#include \"/etc/passwd\"\n", 0},
	{"#include \"../ok.h\"\n", 0},
	{"#include \"a\\\\ok.h\"\n", 0},
	{"#define F \"ok.h\"\n#include F\n", 0},
	{"#include <ok.h\n", 0},
	{"#include <>\n", 0},
	{"#include_next <bad.h>\n", 0},
	{"#import <bad.h>\n", 0},
	{"#embed \"bad.bin\"\n", 0},
	/* splices, trigraphs, digraphs */
	{"#inc\\\nlude <bad.h>\n", 0},
	{"#include \\\r\n<bad.h>\n", 0},
	{"%:include <bad.h>\n", 0},
	{"?\?=include <bad.h>\n", 0},
	{"#inc?\?/\nlude <bad.h>\n", 0},
	/* comments */
	{"#/**/include/**/<bad.h>\n", 0},
	{"/* c */ #include <bad.h>\n", 0},
	{"/*\n*/ #include <bad.h>\n", 0},
	{"// #include <bad.h>\nint x;\n", 1},
	{"/*\n#include <bad.h>\n*/\n", 0},	    /* stricter than the compiler, on purpose */
	{"// a comment \\\n#include <bad.h>\n", 1}, /* the splice makes it part of the comment */
	/* literals */
	{"const char *s = \"#include <bad.h>\";\n", 1},
	{"const char *s = R\"(\" /* )\";\n#include <bad.h>\n// */\n", 0},
	{"char c = '\"'; /* x */\n#include <bad.h>\n", 0},
	{"const char *k = R\"CL(\n__kernel void f(void) {}\n)CL\";\n#include <ok.h>\n", 1},
	{"const char *k = R\"CL(\n)\";\n#include <bad.h>\n)CL\";\n", 0},
};

static void test_scan_table(void)
{
	for (size_t i = 0; i < sizeof scan / sizeof scan[0]; i++) {
		char why[256] = "";
		int r = target_check_includes(scan[i].src, strlen(scan[i].src), allow_two, NULL,
					      why, sizeof why);
		if ((r == 0) != scan[i].ok)
			printf("# scan case %zu: got %d (%s)\n", i, r, why);
		CHECK_EQ_INT((r == 0), scan[i].ok);
	}
}

static void test_scan_message(void)
{
	const char *s = "int x;\n/* two */\n#include <bad.h>\n";
	char why[256] = "";
	CHECK_EQ_INT(target_check_includes(s, strlen(s), allow_two, NULL, why, sizeof why), -1);
	CHECK(strstr(why, "line 3") != NULL);
	CHECK(strstr(why, "bad.h") != NULL);
	/* a name longer than the scan's buffer is refused, not cut */
	char long_inc[600];
	snprintf(long_inc, sizeof long_inc, "#include <%0400d.h>\n", 0);
	CHECK(target_check_includes(long_inc, strlen(long_inc), allow_two, NULL, why, sizeof why) ==
	      -1);
	/* nothing to check */
	CHECK_EQ_INT(target_check_includes("", 0, allow_two, NULL, why, sizeof why), 0);
}

/* The same source against each target's list. */
static const struct {
	const char *src;
	int opencl_ok, cuda_ok;
} per_target[] = {
	{"#include <CL/cl.h>\n", 1, 0},
	{"#include \"ka_kernel.h\"\n", 1, 1},
	{"#include <cuda_runtime.h>\n", 0, 1},
	{"#include <cuda/barrier>\n", 0, 1},
	{"#include <math.h>\n#include <string.h>\n", 1, 1},
	{"#include <sys/socket.h>\n", 0, 0},
	{"#include <unistd.h>\n", 0, 0},
	{"#include <cublas_v2.h>\n", 0, 0},
};

static char tmp[64];

static void test_per_target_lists(void)
{
	struct ka_err e;
	struct ka_task *t = task_load("tests/data/tasks_good/add_scale", &e);
	CHECK(t != NULL);
	const struct target_ops *cl = target_find("opencl");
	CHECK(cl != NULL);
	for (size_t i = 0; i < sizeof per_target / sizeof per_target[0]; i++) {
		char why[256] = "";
		const char *s = per_target[i].src;
		int c = cudac_check_includes(s, strlen(s), NULL, why, sizeof why);
		if ((c == 0) != per_target[i].cuda_ok)
			printf("# cuda case %zu: got %d (%s)\n", i, c, why);
		CHECK_EQ_INT((c == 0), per_target[i].cuda_ok);
		struct target_compiled out;
		CHECK(cl->compile(t, s, strlen(s), tmp, NULL, &out, &e) == 0);
		int forbidden = out.verdict == VERDICT_FORBIDDEN;
		if (forbidden == per_target[i].opencl_ok)
			printf("# opencl case %zu: verdict %d (%s)\n", i, out.verdict, out.detail);
		target_compiled_free(&out);
		CHECK(forbidden != per_target[i].opencl_ok);
	}
	task_free(t);
}

static void test_deps(void)
{
	static const struct {
		const char *deps; /* {W} is the work directory */
		int ok;
	} cases[] = {
		{"x.o: {W}/candidate.c /usr/include/stdio.h \\\n /usr/include/math.h\n", 1},
		{"x.o: candidate.c\n", 1},
		{"x.o: candidate.c /etc/passwd\n", 0},
		{"x.o: candidate.c {W}/../outside.h\n", 0},
		{"x.o: candidate.c /usr/include/../../etc/passwd\n", 0},
		{"x.o: candidate.c\n/usr/include/stdio.h:\n", 1},
	};
	static const char *const sys[] = {"/usr/include", NULL};
	struct ka_err e;
	char *w = xasprintf("%s/work", tmp);
	char *c = xasprintf("%s/candidate.c", w);
	char *d = xasprintf("%s/deps.d", w);
	CHECK_EQ_INT(util_mkdirs(w, &e), 0);
	CHECK_EQ_INT(util_write_file(c, "int x;\n", 7, &e), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512], why[256] = "";
		const char *p = strstr(cases[i].deps, "{W}");
		if (p)
			snprintf(text, sizeof text, "%.*s%s%s", (int)(p - cases[i].deps),
				 cases[i].deps, w, p + 3);
		else
			snprintf(text, sizeof text, "%s", cases[i].deps);
		CHECK_EQ_INT(util_write_file(d, text, strlen(text), &e), 0);
		int r = target_check_deps(d, w, sys, why, sizeof why);
		if ((r == 0) != cases[i].ok)
			printf("# deps case %zu: got %d (%s)\n", i, r, why);
		CHECK_EQ_INT((r == 0), cases[i].ok);
	}
	char why[256];
	CHECK_EQ_INT(target_check_deps("/nonexistent/deps.d", w, sys, why, sizeof why), -1);
	free(w);
	free(c);
	free(d);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/ka-test-target-XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("FAIL test_target: mkdtemp\n");
		return 1;
	}
	RUN(test_scan_table);
	RUN(test_scan_message);
	RUN(test_per_target_lists);
	RUN(test_deps);
	util_rmtree(tmp);
	TEST_EXIT();
}
