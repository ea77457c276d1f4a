/* test_frontier.c: the frontier's proposal validation (src/tracks/frontier.h):
 * the reply's fenced blocks, the reference dialect checker (every shipped
 * reference passes; loops without a visible bound, pointers, calls and
 * escapes are refused), novelty through the bank's normalisation, and the
 * confined gold: a valid task passes, an endless one is killed at the wall
 * cap, a degenerate one is named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "frontier.h"
#include "ka_test.h"
#include "task.h"
#include "util.h"

#define SIG                                                                                        \
	"#include \"ka_ref.h\"\nKA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, KA_IN(float) x, "  \
	"KA_OUT(float) y)\n"

static void test_parse(void)
{
	struct frontier_proposal p;
	char why[256];
	CHECK_EQ_INT(frontier_parse("x\n```json\n{\"a\": 1}\n```\nand\n```c\nint a;\n```\n"
				    "```cuda\n__global__ void k() {}\n```\n",
				    &p, why, sizeof why),
		     0);
	CHECK_EQ_STR(p.task_json, "{\"a\": 1}\n");
	CHECK_EQ_STR(p.ref_c, "int a;\n");
	CHECK(p.baseline && strstr(p.baseline, "__global__"));
	CHECK(p.baseline_cuda && strstr(p.baseline_cuda, "__global__"));
	CHECK(p.baseline_opencl == NULL);
	frontier_proposal_free(&p);
	CHECK_EQ_INT(frontier_parse("```c\nint a;\n```\n", &p, why, sizeof why), -1);
	CHECK(strstr(why, "json"));
	frontier_proposal_free(&p);
}

static int dialect(const char *body, char *why, size_t cap)
{
	char *src = xasprintf(SIG "{\n%s}\n", body);
	int rc = frontier_dialect_check(src, why, cap);
	free(src);
	return rc;
}

static void test_dialect_refuses(void)
{
	char why[512];
	static const struct {
		const char *body, *want;
	} bad[] = {
		{"\twhile (1) y[item] = 0;\n", "'while'"},
		{"\tfor (;;) y[item] = 0;\n", "without a condition"},
		{"\tfor (ka_i64 i = 0; i < C; ) y[item] = 0;\n", "without a condition or a step"},
		{"\tfor (ka_i64 i = 0; 1 < C; i++) y[item] = 0;\n", "no bound"},
		{"\ty[item] = x[item] * rand();\n", "call of 'rand'"},
		{"\tfloat *p = y; y[item] = 0;\n", "pointer type"},
		{"\tdouble v = 0; double w = *&v; y[item] = w;\n", "address-of"},
		{"\tasm(\"nop\");\n", "string"},
		{"\t__builtin_trap();\n", "'__builtin_trap'"},
		{"\tdouble v = (double)x[item]; y[item] = v->a;\n", "'->'"},
		/* what the compiler reads as other characters: line splices,
		 * trigraphs, digraphs */
		{"\ty[item] = ex\\\nit(0);\n", "'\\'"},
		{"\tdouble v = 0; if (1) <% v = 1; %> y[item] = v;\n", "'<%'"},
		{"\ty[item] = x<:item:>;\n", "'<:'"},
		{"\ty[item] = x[item] ?\?' 1;\n", "'?\?''"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = 0;
		if (dialect(bad[i].body, why, sizeof why) != 1 || !strstr(why, bad[i].want))
			KA_TEST_FAIL_("body %zu: got '%s', want '%s'", i, why, bad[i].want);
	}
	CHECK_EQ_INT(frontier_dialect_check("#include <stdlib.h>\n" SIG "{ y[item] = 0; }\n", why,
					    sizeof why),
		     1);
	CHECK(strstr(why, "preprocessor"));
	CHECK_EQ_INT(frontier_dialect_check(SIG "{ y[item] = 0; }\nint g;\n", why, sizeof why), 1);
	/* nothing but the signature before the body: no macro through a
	 * digraph, no declaration reaching ka's memory, no second function */
	static const char *const before[] = {
		"%:include <stdlib.h>\n%:define S system(\n",
		"?\?=define S system(\n",
		"char **environ;\n",
		"void f(void) <% %>\n",
		"int g(double *p) ;\n",
	};
	for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
		char *src =
			xasprintf("#include \"ka_ref.h\"\n%s" SIG "{ y[item] = 0; }\n", before[i]);
		why[0] = 0;
		if (frontier_dialect_check(src, why, sizeof why) != 1)
			KA_TEST_FAIL_("before %zu passed the dialect", i);
		free(src);
	}
	static const char *const sigs[] = {
		"KA_FN void ref(ka_i64 item, KA_IN(float) x, KA_OUT(float) y, char **e)",
		"KA_FN void ref(ka_i64 item, KA_IN(float*) x, KA_OUT(float) y)",
		"KA_FN int ref(ka_i64 item, KA_OUT(float) y)",
		"KA_FN void ref(ka_i64 item, KA_OUT(float) y,)",
		"KA_FN void ref(ka_i64 item, KA_OUT(float) y) = 0; void g(void)",
	};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		char *src = xasprintf("%s { y[item] = 0; }\n", sigs[i]);
		why[0] = 0;
		if (frontier_dialect_check(src, why, sizeof why) != 1 || !strstr(why, "signature"))
			KA_TEST_FAIL_("signature %zu: '%s'", i, why);
		free(src);
	}
	CHECK_EQ_INT(dialect("\tdouble a = 0;\n\tfor (ka_i64 i = 0; i < C; i++)\n\t\ta += "
			     "fmax(exp((double)x[i]), 1.0);\n\ty[item] = a;\n",
			     why, sizeof why),
		     0);
}

/* Every reference of the shipped bank without macros is in the dialect (a
 * proposal may not define macros: they could hide a call from the token
 * checker; the shipped L3 references that use them are trusted). */
static void test_dialect_bank(void)
{
	struct bank_list l = {0};
	struct ka_err e;
	CHECK_EQ_INT(bank_scan(bank_default_path(), &l, &e), 0);
	CHECK(l.n >= 10);
	int checked = 0;
	for (int i = 0; i < l.n; i++) {
		struct ka_task *t = task_load(l.dirs[i], &e);
		if (!t)
			KA_TEST_FAIL_("%s", e.msg);
		char why[512];
		int macros = strstr(t->ref_src, "#define") != NULL;
		int rc = macros ? 0 : frontier_dialect_check(t->ref_src, why, sizeof why);
		checked += !macros;
		task_free(t);
		if (rc)
			KA_TEST_FAIL_("%s: %s", l.dirs[i], why);
	}
	bank_list_free(&l);
	CHECK(checked >= 15);
}

static char *tmpdir;

/* A copy of silu_scale at tmpdir/NAME with ref.c's body replaced. */
static char *variant(const char *name, const char *body)
{
	char *dir = xasprintf("%s/%s", tmpdir, name);
	char *cmd = xasprintf("mkdir -p %s && cp %s/L1/silu_scale/task.json %s/ && sed -i "
			      "'s/\"silu_scale\"/\"%s\"/' %s/task.json",
			      dir, bank_default_path(), dir, name, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot run %s\n", cmd);
	free(cmd);
	char *src = xasprintf(SIG "{\n%s}\n", body), *p = xasprintf("%s/ref.c", dir);
	struct ka_err e;
	util_write_file(p, src, strlen(src), &e);
	free(src);
	free(p);
	return dir;
}

static void test_gold_confined(void)
{
	char line[2048];
	double cs, gs;
	char *ok =
		variant("v_ok", "\tdouble v = x[item];\n\ty[item] = 0.5 * v / (1.0 + exp(-v));\n");
	CHECK_EQ_INT(frontier_gold_confined(ok, NULL, NULL, 120, line, sizeof line, &cs, &gs), 0);
	CHECK(strstr(line, "gold on 5 check shapes"));
	CHECK(!strstr(line, "skipped"));
	struct bank_tools tools;
	bank_tools_find(&tools);
	if (tools.nvcc[0]) { /* the CUDA compile runs in the compile phase */
		CHECK_EQ_INT(frontier_gold_confined(ok, NULL, tools.nvcc, 120, line, sizeof line,
						    &cs, &gs),
			     0);
		CHECK(strstr(line, "; CUDA sm_90a"));
		CHECK(cs > 0 && gs < cs);
	}
	char *deg = variant("v_deg", "\tdouble v = x[item];\n\ty[item] = 1.0 + 0.0 * v;\n");
	CHECK_EQ_INT(frontier_gold_confined(deg, NULL, NULL, 120, line, sizeof line, &cs, &gs), 1);
	CHECK(strstr(line, "constant"));
	char *loop =
		variant("v_loop", "\tdouble a = 0;\n\tfor (ka_i64 i = 0; i < 4000000000000000; "
				  "i++)\n\t\ta += 1e-30 * x[item];\n\ty[item] = a;\n");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ_INT(frontier_gold_confined(loop, NULL, NULL, 2, line, sizeof line, &cs, &gs), 3);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(strstr(line, "gold ran over 2 s"));
	CHECK(cs > 0 && gs >= 2 && gs < 60); /* the compile, then the gold until the kill */
	CHECK((double)(t1.tv_sec - t0.tv_sec) < 60);
	/* A reference that got past the dialect checker (this call does not
	 * run it): it reads a file of the host and starts a program. Confined,
	 * both fail, so its output is not the constant it would write on
	 * success, and the marker is never made. */
	char *secret = xasprintf("%s/secret.txt", tmpdir), *marker = xasprintf("%s/marker", tmpdir);
	struct ka_err we;
	CHECK_EQ_INT(util_write_file(secret, "key=hunter2\n", 12, &we), 0);
	char *body =
		xasprintf("\textern void *fopen(const char *, const char *);\n"
			  "\textern int system(const char *);\n"
			  "\tstatic int state = -1;\n"
			  "\tif (state < 0)\n"
			  "\t\tstate = (fopen(\"%s\", \"r\") != 0) + (system(\"touch %s\") == 0);\n"
			  "\ty[item] = state ? 42.0 : x[item];\n",
			  secret, marker);
	char *esc = variant("v_escape", body);
	int rc = frontier_gold_confined(esc, NULL, NULL, 120, line, sizeof line, &cs, &gs);
	CHECK_EQ_INT(rc, 0);
	if (rc)
		fprintf(stderr, "v_escape: %s\n", line);
	CHECK_EQ_INT(access(marker, F_OK), -1);
	free(body);
	free(esc);
	free(secret);
	free(marker);
	char *bad = variant("v_bad", "\ty[item] = x[item] +;\n");
	CHECK_EQ_INT(frontier_gold_confined(bad, NULL, NULL, 120, line, sizeof line, &cs, &gs), 2);
	CHECK(strstr(line, "does not compile"));
	CHECK(cs > 0 && gs == 0); /* it never reached the gold */
	free(ok);
	free(deg);
	free(loop);
	free(bad);
}

static void test_novelty(void)
{
	struct ka_err e;
	char *a = xasprintf("%s/L1/silu_scale", bank_default_path());
	struct ka_task *t = task_load(a, &e), *u = NULL;
	CHECK(t);
	char *copy =
		variant("v_copy", "\tdouble w = (double)x[item];\n\tdouble s = 0.5 * (w / (1.0 "
				  "+ exp(-w)));\n\ty[item] = s;\n");
	u = task_load(copy, &e);
	CHECK(u);
	char why[512];
	struct ka_task *others[1] = {t};
	CHECK_EQ_INT(frontier_novel(u, others, 1, "frontier", why, sizeof why), 1);
	CHECK(strstr(why, "same normalised ref.c as the frontier task 'silu_scale'"));
	/* A proposal matching a held-out task is refused, the held-out side named. */
	CHECK_EQ_INT(frontier_novel(u, others, 1, "held-out", why, sizeof why), 1);
	CHECK(strstr(why, "held-out task 'silu_scale'"));
	char *nov = variant("v_nov", "\tdouble w = (double)x[item];\n\ty[item] = fmin(w, 1.0);\n");
	struct ka_task *n = task_load(nov, &e);
	CHECK(n);
	free(n->torch);
	n->torch = xstrdup("torch.clamp(x, max=1.0)");
	CHECK_EQ_INT(frontier_novel(n, others, 1, "frontier", why, sizeof why), 0);
	CHECK(frontier_roofline_s(t, 3.3e12, 6e13) > 1e-6);
	task_free(t);
	task_free(u);
	task_free(n);
	free(a);
	free(copy);
	free(nov);
}

int main(void)
{
	char tmpl[] = "/tmp/ka-test-frontier-XXXXXX";
	tmpdir = mkdtemp(tmpl);
	RUN(test_parse);
	RUN(test_dialect_refuses);
	RUN(test_dialect_bank);
	RUN(test_novelty);
	RUN(test_gold_confined);
	util_rmtree(tmpdir);
	return ka_test_failed ? 1 : 0;
}
