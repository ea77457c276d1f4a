/* test_cudasplit.c: the split CUDA compile (docs/compile.md).
 *  - cudaplan: nvcc 13.0's dryrun (tests/data/cuda/nvcc13.0-dryrun.txt)
 *    read into steps, dependencies and the changes for parallel runs; what
 *    the parser must refuse;
 *  - ka-cudaphases on small shell plans: order, a failure stopping later
 *    steps but not earlier ones, the rerun alone with the whole memory
 *    budget, the precompiled-prefix rewrite;
 *  - both paths on the CUDA compile fixtures (tests/data/cuda, the
 *    hardening candidates of tests/data/harden, and sources made here:
 *    syntax and device errors, sm_90a-only code, forbidden symbols and
 *    includes): the same verdict, the same compile log, and for every
 *    compiled fixture and one bank solution of each tier the same fat
 *    binary byte for byte (so the same SASS);
 *  - the split path with its fork servers (docs/compile.md, section 7;
 *    KA_CUDA_FORKSRV=on) on the same fixtures: the same verdict and log as
 *    without them, and the same shared object byte for byte (so the same
 *    PTX, cubin and host object); the servers served the compiles;
 *  - cudaplan's fork-server lines and serving plan; and ka-cudaphases on a
 *    kept compile folder while the servers run: the forked steps give the
 *    plain run's products, and each refusal runs the step plainly with the
 *    same products: an input whose prefix differs, a program file that is
 *    not the server's, a memory cap below the server's peak, no server;
 *    a forked run that fails leaves the plain run's log.
 * Skips the compiles where nvcc is missing (and the fork-server parts where
 * the servers cannot run: no PID namespace for their jail). The quick tier
 * compares a third of the folder fixtures (a fixed choice by name: the
 * compiles are most of its time) with every made one and the L1 bank
 * solution; KA_CUDASPLIT_FIXTURES=all, which the bank tier sets
 * (tests/bank/cudasplit_fixtures.sh), compares every fixture and the L2
 * and L3 solutions too. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudac.h"
#include "cudaplan.h"
#include "cudasplit.h"
#include "elfread.h"
#include "ka_test.h"
#include "util.h"

static char root[PATH_MAX], tmp[PATH_MAX], driver[PATH_MAX + 64];

/* ---- cudaplan ---- */

static char *read_text(const char *rel)
{
	char *p = xasprintf("%s/%s", root, rel), *t = NULL;
	size_t n = 0;
	if (util_read_file(p, 1 << 20, &t, &n, NULL))
		t = NULL;
	free(p);
	return t;
}

static int find_named(const struct cudaplan *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->ph[i].name, name))
			return i;
	return -1;
}

static int depends(const struct cudaplan *p, int j, int i)
{
	for (int d = 0; d < p->ph[j].n_deps; d++)
		if (p->ph[j].deps[d] == i)
			return 1;
	return 0;
}

static int has_arg(const struct cudaphase *ph, const char *a)
{
	for (int k = 0; k < ph->argc; k++)
		if (!strcmp(ph->argv[k], a))
			return 1;
	return 0;
}

static void test_plan_nvcc13(void)
{
	char *text = read_text("tests/data/cuda/nvcc13.0-dryrun.txt");
	CHECK(text != NULL);
	struct cudaplan p;
	struct ka_err e;
	int rc = cudaplan_parse(text, "/nowhere", &p, &e);
	free(text);
	if (rc)
		printf("# %s\n", e.msg);
	CHECK_EQ_INT(rc, 0);
	/* nvcc's order: three preprocessor runs, cudafe++, cicc + ptxas per
	 * architecture, fatbinary, then the added as, the host compile, link */
	static const char *const order[] = {"cpp candidate.compute_90.cpp1.ii",
					    "cpp candidate.compute_90a.cpp1.ii",
					    "cpp candidate.cpp4.ii",
					    "cudafe++",
					    "cicc compute_90",
					    "ptxas compute_90",
					    "cicc compute_90a",
					    "ptxas sm_90a",
					    "fatbinary",
					    "as",
					    "host cc",
					    "host as",
					    "link",
					    NULL};
	for (int i = 0; order[i]; i++)
		CHECK_EQ_STR(i < p.n ? p.ph[i].name : "", order[i]);
	CHECK_EQ_INT(p.n, 13);
	int fe = find_named(&p, "cudafe++"), c90 = find_named(&p, "cicc compute_90"),
	    c90a = find_named(&p, "cicc compute_90a"), px = find_named(&p, "ptxas sm_90a"),
	    fb = find_named(&p, "fatbinary"), as = find_named(&p, "as"),
	    cc = find_named(&p, "host cc"), ln = find_named(&p, "link");
	/* each phase after what it reads, and cicc no longer after cudafe++ */
	CHECK(depends(&p, fe, 2) && depends(&p, c90, 0) && depends(&p, c90a, 1));
	CHECK(!depends(&p, c90, fe) && !depends(&p, c90a, fe));
	CHECK(depends(&p, px, c90a) && depends(&p, fb, px) && depends(&p, fb, c90) &&
	      depends(&p, as, fb));
	CHECK(depends(&p, cc, fe) && depends(&p, cc, c90a) && !depends(&p, cc, fb));
	/* the host compile writes X.s, host as makes X.o from it, the link
	 * reads that */
	int has = find_named(&p, "host as");
	CHECK(has_arg(&p.ph[cc], "-S") && !has_arg(&p.ph[cc], "-c") &&
	      !has_arg(&p.ph[cc], "-save-temps") && has_arg(&p.ph[cc], "keep/candidate.s"));
	CHECK(depends(&p, has, cc) && has_arg(&p.ph[has], "keep/candidate.o") &&
	      has_arg(&p.ph[has], "keep/candidate.s"));
	CHECK(depends(&p, ln, has) && depends(&p, ln, as) && !depends(&p, ln, cc));
	/* the changes: module id, fat binary object, dependency lists */
	CHECK(!has_arg(&p.ph[fe], "--gen_module_id_file"));
	CHECK_EQ_STR(p.module_id_file, "keep/candidate.module_id");
	CHECK_EQ_STR(p.fatbin, "keep/candidate.fatbin");
	CHECK_EQ_STR(p.fatbin_c, "keep/candidate.fatbin.c");
	for (int k = 0; k < p.ph[fb].argc; k++)
		CHECK(strncmp(p.ph[fb].argv[k], "--embedded-fatbin", 17));
	CHECK(has_arg(&p.ph[0], "-MD") && has_arg(&p.ph[ln], CUDAPLAN_FATBIN_O));
	CHECK_EQ_STR(p.ph[cc].input, "keep/candidate.compute_90a.cudafe1.cpp");
	CHECK(has_arg(&p.ph[fe], "/nowhere/candidate.cu")); /* nvcc's real run: absolute */
	CHECK(has_arg(&p.ph[c90], "/usr/local/cuda/bin/../nvvm/bin/cicc")); /* $CICC_PATH */
	/* the text ka-cudaphases reads: the host compile gets the prefix */
	char *t = cudaplan_text(&p, "/w", "/pch/P.h", NULL, 3, 1u << 30, 60, -1, &e);
	CHECK(t && strstr(t, "jobs 3\nmem 1073741824\nlimit 60\n") &&
	      strstr(t, "pchprefix /pch/P.h\n") &&
	      strstr(t, "pchinput keep/candidate.compute_90a.cudafe1.cpp\n"));
	free(t);
	/* only cudafe++ and what it needs */
	t = cudaplan_text(&p, "/w", NULL, NULL, 1, 1u << 30, 60, fe, &e);
	CHECK(t && strstr(t, "step cpp candidate.cpp4.ii\n") && strstr(t, "step cudafe++\n") &&
	      !strstr(t, "cicc") && strstr(t, "dep 0\n"));
	free(t);
	/* the linker: the link step alone gets -fuse-ld, right after the driver */
	int argc_ln = p.ph[ln].argc;
	CHECK(!has_arg(&p.ph[ln], "-fuse-ld=gold"));
	cudaplan_fuse_ld(&p, "gold");
	CHECK_EQ_STR(p.ph[ln].argv[1], "-fuse-ld=gold");
	CHECK_EQ_INT(p.ph[ln].argc, argc_ln + 1);
	CHECK(p.ph[ln].argv[p.ph[ln].argc] == NULL);
	for (int k = 0; k < p.n; k++)
		CHECK(k == ln || !has_arg(&p.ph[k], "-fuse-ld=gold"));
	t = cudaplan_text(&p, "/w", NULL, NULL, 1, 1u << 30, 60, -1, &e);
	CHECK(t && strstr(t, "step link\n") && strstr(t, "arg -fuse-ld=gold\n"));
	free(t);
	cudaplan_free(&p);
}

static void test_plan_refused(void)
{
	char *text = read_text("tests/data/cuda/nvcc13.0-dryrun.txt");
	CHECK(text != NULL);
	struct cudaplan p;
	struct ka_err e;
	/* a phase the split compile does not know (relocatable device code) */
	char *t = xasprintf("%s#$ nvlink -o x.o y.o\n", text);
	CHECK_EQ_INT(cudaplan_parse(t, "/w", &p, &e), -1);
	CHECK(strstr(e.msg, "nvlink") != NULL);
	cudaplan_free(&p);
	free(t);
	/* a variable nvcc did not set */
	t = xasprintf("#$ \"$NOPE/cicc\" x\n%s", text);
	CHECK_EQ_INT(cudaplan_parse(t, "/w", &p, &e), -1);
	CHECK(strstr(e.msg, "unknown variable") != NULL);
	cudaplan_free(&p);
	free(t);
	/* no fatbinary */
	char *fb = strstr(text, "#$ fatbinary");
	CHECK(fb != NULL);
	fb[1] = '#'; /* the line is no longer a command */
	CHECK_EQ_INT(cudaplan_parse(text, "/w", &p, &e), -1);
	cudaplan_free(&p);
	free(text);
}

/* The socket named for step `step` in plan text t (into name), 1 if any. */
static int sock_of(const char *t, const char *step, char *name, size_t cap)
{
	char *key = xasprintf("step %s\n", step);
	const char *at = strstr(t, key), *next = at ? strstr(at + 1, "\nstep ") : NULL;
	const char *f = at ? strstr(at, "\nforksock ") : NULL;
	free(key);
	if (!f || (next && f > next))
		return 0;
	snprintf(name, cap, "%.*s", (int)strcspn(f + 10, "\n"), f + 10);
	return 1;
}

static void test_plan_fork(void)
{
	char *text = read_text("tests/data/cuda/nvcc13.0-dryrun.txt");
	CHECK(text != NULL);
	struct cudaplan p, q;
	struct ka_err e;
	CHECK_EQ_INT(cudaplan_parse(text, "/d1", &p, &e), 0);
	CHECK_EQ_INT(cudaplan_parse(text, "/d2", &q, &e), 0);
	free(text);
	char *a = cudaplan_text(&p, "/w1", NULL, "/spool", 3, 1u << 30, 60, -1, &e);
	char *b = cudaplan_text(&q, "/w2", NULL, "/spool", 3, 1u << 30, 60, -1, &e);
	CHECK(a && b);
	/* the two cicc steps and cudafe++ name a server, the same for any work
	 * folder; their inputs are the .ii files; nothing else names one */
	static const char *const forked[] = {"cicc compute_90", "cicc compute_90a", "cudafe++"};
	char na[3][32], nb[32];
	for (int i = 0; i < 3; i++) {
		CHECK(sock_of(a, forked[i], na[i], sizeof na[i]) && sock_of(b, forked[i], nb, 32));
		CHECK_EQ_STR(na[i], nb);
		CHECK(na[i][0] == 'f' && strlen(na[i]) == 17);
	}
	CHECK(strcmp(na[0], na[1]) && strcmp(na[1], na[2]));
	CHECK(strstr(a, "forkdir /spool\nforksock ") &&
	      strstr(a, "forkinput keep/candidate.compute_90a.cpp1.ii\n") &&
	      strstr(a, "forkinput keep/candidate.cpp4.ii\n"));
	char *c = a;
	int n = 0;
	while ((c = strstr(c + 1, "\nforkdir ")))
		n++;
	CHECK_EQ_INT(n, 3);
	/* the serving plan: the same names, the preprocessor runs they need */
	char *sv = cudaplan_serve_text(&p, "/spool", "/x/ka-forkshim.so", "__s", 1u << 30, &e);
	CHECK(sv && strstr(sv, "shim /x/ka-forkshim.so\nsentinel __s\n") &&
	      strstr(sv, "step cpp candidate.cpp4.ii\n") && !strstr(sv, "ptxas") &&
	      !strstr(sv, "link") && !strstr(sv, "forkdir"));
	for (int i = 0; i < 3; i++) {
		char *l = xasprintf("serve %s\nforkinput ", na[i]);
		CHECK(strstr(sv, l) != NULL);
		free(l);
	}
	free(sv);
	/* another flag, another server; line information: none */
	int k = find_named(&q, "cicc compute_90a"), ftz = -1;
	for (int w = 0; w < q.ph[k].argc; w++)
		if (!strcmp(q.ph[k].argv[w], "-ftz=0"))
			ftz = w;
	CHECK(ftz > 0);
	q.ph[k].argv[ftz][5] = '1';
	free(b);
	b = cudaplan_text(&q, "/w2", NULL, "/spool", 3, 1u << 30, 60, -1, &e);
	CHECK(sock_of(b, "cicc compute_90a", nb, sizeof nb) && strcmp(nb, na[1]));
	free(q.ph[k].argv[ftz]);
	q.ph[k].argv[ftz] = xstrdup("-generate-line-info");
	free(b);
	b = cudaplan_text(&q, "/w2", NULL, "/spool", 3, 1u << 30, 60, -1, &e);
	CHECK(!sock_of(b, "cicc compute_90a", nb, sizeof nb) && sock_of(b, "cudafe++", nb, 32));
	free(a);
	free(b);
	cudaplan_free(&p);
	cudaplan_free(&q);
}

/* ---- ka-cudaphases ---- */

/* Run the driver on plan text in folder tmp; its exit status, its stdout
 * in *out (caller frees). */
static int run_driver(const char *text, char **out)
{
	char *plan = xasprintf("%s/t.plan", tmp), *logs = xasprintf("%s/logs", tmp);
	util_mkdirs(logs, NULL);
	util_write_file(plan, text, strlen(text), NULL);
	char *argv[] = {driver, plan, NULL};
	struct ka_err e;
	int st = util_run(argv, tmp, 60, 1 << 16, out, NULL, NULL, &e);
	free(plan);
	free(logs);
	return st;
}

/* The code ka-cudaphases reported for step k (-99 when none). */
static int step_code(const char *out, int k, int *runs, int *pch)
{
	char key[32];
	snprintf(key, sizeof key, "step %d code ", k);
	const char *l = strstr(out, key);
	int code = -99, r = 0, p = 0;
	if (l)
		sscanf(l + strlen(key), "%d ms %*f rss %*d pch %d runs %d", &code, &p, &r);
	if (runs)
		*runs = r;
	if (pch)
		*pch = p;
	return code;
}

static int exists(const char *name)
{
	char *p = xasprintf("%s/%s", tmp, name);
	int ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}

#define SH(name, cmd) "step " name "\nlog logs/" name ".log\narg /bin/sh\narg -c\narg " cmd "\n"

static void test_driver_order_and_failure(void)
{
	char *out = NULL;
	/* slow (0) finishes although fast (1), after it in order, fails first;
	 * later (2, sleeping) is killed; after (3) depends on it, never runs */
	const char *plan = "jobs 3\nmem 1073741824\n" SH("slow", "sleep 0.5; touch slow.done")
		SH("fast", "echo fast failed; exit 3") SH("later", "sleep 20; touch later.done")
			SH("after", "touch after.done") "dep 2\n";
	double t0 = util_now();
	int st = run_driver(plan, &out);
	CHECK_EQ_INT(st, 1);
	CHECK(util_now() - t0 < 10);
	CHECK_EQ_INT(step_code(out, 0, NULL, NULL), 0);
	CHECK_EQ_INT(step_code(out, 1, NULL, NULL), 3);
	CHECK_EQ_INT(step_code(out, 3, NULL, NULL), -1);
	CHECK(exists("slow.done") && !exists("later.done") && !exists("after.done"));
	free(out);
	/* dependencies order the steps */
	plan = "jobs 3\nmem 1073741824\n" SH("a", "sleep 0.3; echo a >> seq")
		SH("b", "echo b >> seq") "dep 0\n" SH("c", "echo c >> seq") "dep 1\n";
	CHECK_EQ_INT(run_driver(plan, &out), 0);
	free(out);
	char *seq = xasprintf("%s/seq", tmp), *t = NULL;
	size_t n = 0;
	CHECK_EQ_INT(util_read_file(seq, 64, &t, &n, NULL), 0);
	CHECK_EQ_STR(t, "a\nb\nc\n");
	free(t);
	free(seq);
	/* the deadline: the step and what it started (its process group)
	 * are killed, the status is 124 */
	plan = "jobs 3\nmem 1073741824\nlimit 1\n" SH("hangs",
						      "(sleep 2; touch late.done) & sleep 30");
	t0 = util_now();
	CHECK_EQ_INT(run_driver(plan, &out), 124);
	CHECK(util_now() - t0 < 10);
	CHECK_EQ_INT(step_code(out, 0, NULL, NULL), 128 + 9);
	free(out);
	usleep(2500 * 1000);
	CHECK(!exists("late.done"));
	/* a bad plan is the driver's failure (2), not a step's */
	CHECK_EQ_INT(run_driver("jobs 3\nstep x\ndep 5\n", &out), 2);
	free(out);
}

static void test_driver_memory_rerun(void)
{
	if (access("/usr/bin/perl", X_OK) != 0) {
		printf("SKIP test_driver_memory_rerun: no perl\n");
		return;
	}
	/* 250 MB does not fit in a third of 600 MiB, and fits in all of it */
	char *out = NULL;
	const char *plan = "jobs 3\nmem 629145600\nstep big\nlog logs/big.log\narg /usr/bin/perl\n"
			   "arg -e\narg $x = \"a\" x (250 * 1024 * 1024); exit 0\n"
			   "step small\nlog logs/small.log\narg /bin/true\n";
	CHECK_EQ_INT(run_driver(plan, &out), 0);
	int runs = 0;
	CHECK_EQ_INT(step_code(out, 0, &runs, NULL), 0);
	CHECK_EQ_INT(runs, 2);
	free(out);
	/* an ordinary failure runs once */
	plan = "jobs 3\nmem 629145600\n" SH("fails", "exit 1");
	CHECK_EQ_INT(run_driver(plan, &out), 1);
	CHECK_EQ_INT(step_code(out, 0, &runs, NULL), 1);
	CHECK_EQ_INT(runs, 1);
	free(out);
}

/* Step k's "early" field (-99 when none). */
static int step_early(const char *out, int k)
{
	char key[32];
	snprintf(key, sizeof key, "step %d code ", k);
	const char *l = strstr(out, key), *x = l ? strstr(l, " early ") : NULL;
	const char *nl = l ? strchr(l, '\n') : NULL;
	int v = -99;
	if (x && (!nl || x < nl))
		sscanf(x, " early %d", &v);
	return v;
}

static char *tmp_text(const char *name)
{
	char *p = xasprintf("%s/%s", tmp, name), *t = NULL;
	size_t n = 0;
	if (util_read_file(p, 4096, &t, &n, NULL))
		t = NULL;
	free(p);
	return t;
}

/* The early start (docs/compile.md 7.5): a step with early/earlyfile
 * starts once its dep made FILE.ready, and stands only if that dep ends
 * well with FILE as it was. */
static void test_driver_early(void)
{
	static const char *const files[] = {"f",     "f.ready",	  "out", "r.done",
					    "w.saw", "after.out", NULL};
	struct {
		const char *writer, *reader;
		int status, w_code, r_code, r_runs, r_early, after_code;
		const char *out; /* the reader's out at the end, or NULL: none */
	} cases[] = {
		/* confirmed: the reader ran while the writer still did */
		{"printf A > f; touch f.ready; sleep 0.4; [ -e r.done ] && touch w.saw; exit 0",
		 "cat f > out; touch r.done", 0, 0, 0, 1, 1, 0, "A"},
		/* the file grew after the mark: dropped, run again on all of it */
		{"printf A > f; touch f.ready; sleep 0.4; printf B >> f", "cat f > out", 0, 0, 0, 2,
		 0, 0, "AB"},
		/* the writer failed after the mark: its failure, nothing after it
		 * (what the dropped run wrote stays: src/cudasplit.c removes the
		 * host compile's .s when a step before it failed) */
		{"printf A > f; touch f.ready; sleep 0.4; exit 4", "cat f > out", 1, 4, -1, 1, 0,
		 -1, "A"},
		/* rewritten with the same bytes after the mark: dropped too */
		{"printf A > f; touch f.ready; sleep 0.4; printf A > f", "cat f > out", 0, 0, 0, 2,
		 0, 0, "A"},
		/* a mark older than the writer's run is not its mark */
		{"sleep 0.2; printf A > f; sleep 0.2", "cat f > out", 0, 0, 0, 1, 0, 0, "A"},
		/* an early failure on a stale file is not a failure */
		{"printf A > f; touch f.ready; sleep 0.4; printf B >> f",
		 "grep -q B f && touch out", 0, 0, 0, 2, 0, 0, ""},
		/* an early failure on the final file is the step's failure */
		{"printf A > f; touch f.ready; sleep 0.4", "exit 5", 1, 0, 5, 1, 1, -1, NULL},
		/* no mark: the reader waits for the writer's end */
		{"printf A > f; sleep 0.2", "cat f > out", 0, 0, 0, 1, 0, 0, "A"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int f = 0; files[f]; f++) {
			char *q = xasprintf("%s/%s", tmp, files[f]);
			unlink(q);
			free(q);
		}
		char *plan = xasprintf(
			"jobs 3\nmem 1073741824\n"
			"step w\nlog logs/w.log\narg /bin/sh\narg -c\narg %s\n"
			"step r\nlog logs/r.log\ndep 0\nearly 0\nearlyfile f\narg "
			"/bin/sh\narg -c\narg %s\n" SH("after", "cat out > after.out") "dep 1\n",
			cases[i].writer, cases[i].reader);
		char *out = NULL;
		int runs = -1;
		if (i == 4) { /* a stale mark and file from an earlier run */
			char *f = xasprintf("%s/f", tmp), *m = xasprintf("%s/f.ready", tmp);
			util_write_file(f, "old", 3, NULL);
			util_write_file(m, "", 0, NULL);
			free(f);
			free(m);
		}
		printf("# early case %zu\n", i);
		CHECK_EQ_INT(run_driver(plan, &out), cases[i].status);
		CHECK_EQ_INT(step_code(out, 0, NULL, NULL), cases[i].w_code);
		CHECK_EQ_INT(step_code(out, 1, &runs, NULL), cases[i].r_code);
		CHECK_EQ_INT(runs, cases[i].r_runs);
		CHECK_EQ_INT(step_early(out, 1), cases[i].r_early);
		CHECK_EQ_INT(step_code(out, 2, NULL, NULL), cases[i].after_code);
		char *got = tmp_text("out");
		if (cases[i].out)
			CHECK(got && !strcmp(got, cases[i].out));
		else
			CHECK(got == NULL);
		if (i == 0)
			CHECK(exists("w.saw"));
		free(got);
		free(out);
		free(plan);
	}
	/* early names one of the step's deps, with its file */
	char *out = NULL;
	CHECK_EQ_INT(run_driver("jobs 3\n" SH("a", "true") SH("b", "true") "early 0\n", &out), 2);
	free(out);
	CHECK_EQ_INT(run_driver("jobs 3\n" SH("a", "true") SH("b", "true") "early 0\nearlyfile f\n",
				&out),
		     2);
	free(out);
}

static void test_driver_prefix(void)
{
	char *pre = xasprintf("%s/P.h", tmp), *in = xasprintf("%s/in.cpp", tmp);
	char *other = xasprintf("%s/other.cpp", tmp);
	util_write_file(pre, "int a;\n", 7, NULL);
	const char *body = "int a;\n# 1 \"x.cu\"\nint b;\n";
	util_write_file(in, body, strlen(body), NULL);
	util_write_file(other, "int z;\n# 1 \"x.cu\"\n", 18, NULL);
	char *plan = xasprintf("jobs 1\nmem 1073741824\nstep cc\nlog logs/cc.log\npchprefix %s\n"
			       "pchinput in.cpp\narg /bin/true\nstep cc2\nlog logs/cc2.log\n"
			       "pchprefix %s\npchinput other.cpp\narg /bin/true\n",
			       pre, pre);
	char *out = NULL;
	CHECK_EQ_INT(run_driver(plan, &out), 0);
	int pch = -1;
	CHECK_EQ_INT(step_code(out, 0, NULL, &pch), 0);
	CHECK_EQ_INT(pch, 1);
	CHECK_EQ_INT(step_code(out, 1, NULL, &pch), 0);
	CHECK_EQ_INT(pch, 0);
	char *t = NULL, *want = xasprintf("#include \"%s\"\n# 1 \"x.cu\"\nint b;\n", pre);
	size_t n = 0;
	CHECK_EQ_INT(util_read_file(in, 4096, &t, &n, NULL), 0);
	CHECK_EQ_STR(t, want);
	free(t);
	CHECK_EQ_INT(util_read_file(other, 4096, &t, &n, NULL), 0);
	CHECK_EQ_STR(t, "int z;\n# 1 \"x.cu\"\n");
	free(t);
	free(want);
	free(out);
	free(plan);
	free(pre);
	free(in);
	free(other);
}

/* ---- both paths on the fixtures ---- */

#define MAX_SRC 64

struct fixture {
	char name[96];
	char *src;
	size_t len;
};

static struct fixture fx[MAX_SRC];
static int n_fx;

static void add_fixture(const char *name, const char *src, size_t len)
{
	if (n_fx == MAX_SRC)
		return;
	snprintf(fx[n_fx].name, sizeof fx[n_fx].name, "%s", name);
	fx[n_fx].src = xmalloc(len + 1);
	memcpy(fx[n_fx].src, src, len);
	fx[n_fx].src[len] = 0;
	fx[n_fx].len = len;
	n_fx++;
}

/* Whether every fixture is compared (KA_CUDASPLIT_FIXTURES=all, the bank
 * tier's tests/bank/cudasplit_fixtures.sh). */
static int fixtures_all(void)
{
	const char *all = getenv("KA_CUDASPLIT_FIXTURES");
	return all && !strcmp(all, "all");
}

/* Whether the folder fixture name is compared: all of them with
 * fixtures_all, else a third chosen by a hash of the name. */
static int fixture_chosen(const char *name)
{
	return fixtures_all() || util_hash64(name, strlen(name), 0) % 3 == 0;
}

/* Every .cu of folder rel (those fixture_chosen takes), SECRET_PATH
 * replaced by secret. */
static void add_folder(const char *rel, const char *secret)
{
	char *dir = xasprintf("%s/%s", root, rel);
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".cu"))
			continue;
		char *name = xasprintf("%s/%s", rel, de->d_name);
		if (!fixture_chosen(name)) {
			free(name);
			continue;
		}
		char *p = xasprintf("%s/%s", dir, de->d_name), *t = NULL;
		size_t n = 0;
		if (util_read_file(p, 1 << 20, &t, &n, NULL) == 0) {
			struct util_buf b;
			util_buf_init(&b);
			for (const char *c = t; *c;) {
				if (!strncmp(c, "SECRET_PATH", 11)) {
					util_buf_puts(&b, secret);
					c += 11;
				} else {
					util_buf_putc(&b, *c++);
				}
			}
			add_fixture(name, b.s, b.len);
			util_buf_free(&b);
		}
		free(name);
		free(t);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
}

static const char *const made[][2] = {
	{"syntax", "__global__ void k( { }\n"},
	{"device_undeclared", "__global__ void k(int *x) { x[0] = nowhere(); }\n"},
	{"host_from_device", "int h() { return 1; }\n__global__ void k(int *x) { x[0] = h(); }\n"},
	{"sm90a_unguarded", "__global__ void k(float *x) {\n"
			    "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n"
			    "  x[0] = 1; }\n"},
	{"error_on_compute_90",
	 "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
	 "#error this needs sm_90a\n#endif\n"
	 "__global__ void k(float *x) { x[0] = 1; }\n"},
	{"error_on_host_pass", "#ifndef __CUDA_ARCH__\nint broken = ;\n#endif\n"
			       "__global__ void k(float *x) { x[0] = 1; }\n"},
	{"anon_namespace", "#include \"ka_kernel.h\"\nnamespace { __global__ void k(float *x) "
			   "{ x[0] = 1; } }\nstatic __global__ void s(float *x) { x[1] = 2; }\n"
			   "extern \"C\" int ka_launch(const struct ka_args *a, cudaStream_t st)\n"
			   "{ k<<<1, 1, 0, st>>>((float *)a->outputs[0].ptr);\n"
			   "  s<<<1, 1, 0, st>>>((float *)a->outputs[0].ptr); return 0; }\n"},
	{"warnings_only", "__global__ void k(float *x) { int unused; x[0] = 1; }\n"},
	{"forbidden_symbol", "#include <stdio.h>\nextern \"C\" int ka_launch(const void *a, "
			     "void *s) { return fopen(\"/etc/passwd\", \"r\") != 0; }\n"},
	{"include_abs", "#include \"/etc/passwd\"\n"},
	{NULL, NULL},
};

static void add_bank(const char *task)
{
	char *p = xasprintf("%s/bank/public/%s/solutions/cuda.cu", root, task), *t = NULL;
	size_t n = 0;
	if (util_read_file(p, 1 << 20, &t, &n, NULL) == 0)
		add_fixture(task, t, n);
	free(t);
	free(p);
}

/* The .nv_fatbin section of so, or NULL. */
static uint8_t *fatbin_of(const char *so, size_t *n)
{
	uint8_t *fb = NULL;
	struct ka_err e;
	if (elf_section(so, ".nv_fatbin", &fb, n, &e))
		return NULL;
	return fb;
}

/* The module id in a cubin: the "_xxxxxxxx_12_candidate_cu_xxxxxxxx" after
 * "_GLOBAL__N_" in the name of an entity of an anonymous namespace; its
 * length, 0 when there is none. */
static size_t module_id_in(const uint8_t *c, size_t n, const uint8_t **at)
{
	static const char tag[] = "_GLOBAL__N_";
	const uint8_t *p = memmem(c, n, tag, sizeof tag - 1);
	if (!p)
		return 0;
	p += sizeof tag - 1;
	static const char mid[] = "_candidate_cu_";
	const uint8_t *m = memmem(p, (size_t)(c + n - p), mid, sizeof mid - 1);
	if (!m || m - p > 24 || m + sizeof mid - 1 + 8 > c + n)
		return 0;
	*at = p;
	return (size_t)(m - p) + sizeof mid - 1 + 8; /* up to the second 8-hex word */
}

/* Fat binaries that differ: nvcc names the anonymous namespace after its
 * own module id, the split path after the one it chose (docs/compile.md).
 * 1 when the cubins are equal once the split one's id is replaced by
 * nvcc's (the PTX entries are compressed, so they cannot be compared). */
static int same_but_module_id(const char *name, const uint8_t *fa, size_t na, const uint8_t *fb,
			      size_t nb)
{
	size_t aat, asz, bat, bsz;
	struct ka_err e;
	if (elf_fatbin_cubin(fa, na, &aat, &asz, &e) || elf_fatbin_cubin(fb, nb, &bat, &bsz, &e) ||
	    asz != bsz)
		return 0;
	const uint8_t *ida = NULL, *idb = NULL;
	size_t la = module_id_in(fa + aat, asz, &ida), lb = module_id_in(fb + bat, bsz, &idb);
	if (!la || la != lb)
		return 0;
	uint8_t *copy = xmalloc(bsz);
	memcpy(copy, fb + bat, bsz);
	for (uint8_t *p = copy; (p = memmem(p, bsz - (size_t)(p - copy), idb, lb)) != NULL; p += lb)
		memcpy(p, ida, la);
	int same = !memcmp(copy, fa + aat, asz);
	free(copy);
	if (same)
		printf("# %s: the same cubin but for the module id (%.*s / %.*s)\n", name, (int)la,
		       (const char *)ida, (int)lb, (const char *)idb);
	return same;
}

/* 1 when fixture f compiled both ways (named an and bn) with the same
 * verdict and log; else says how they differ. */
static int same_outcome(const struct fixture *f, const char *an, const struct cudac_result *a,
			int rca, const char *bn, const struct cudac_result *b, int rcb)
{
	if (!rca && !rcb && a->verdict == b->verdict && !strcmp(a->detail, b->detail))
		return 1;
	printf("# %s: %s %d %s / %s %d %s\n#  %s: %.300s\n#  %s: %.300s\n", f->name, an, rca,
	       verdict_name(a->verdict), bn, rcb, verdict_name(b->verdict), an, a->detail, bn,
	       b->detail);
	return 0;
}

/* Compare the two results of fixture f. */
static void compare_one(const struct fixture *f, const struct cudac_result *a, int rca,
			const struct cudac_result *b, int rcb)
{
	CHECK(same_outcome(f, "nvcc", a, rca, "split", b, rcb));
	CHECK(!a->split);
	if (a->verdict != VERDICT_OK)
		return;
	CHECK(b->split);
	size_t na = 0, nb = 0;
	uint8_t *fa = fatbin_of(a->so_path, &na), *fb = fatbin_of(b->so_path, &nb);
	int same = fa && fb && na == nb && !memcmp(fa, fb, na);
	if (!same && fa && fb)
		same = same_but_module_id(f->name, fa, na, fb, nb);
	if (!same)
		printf("# %s: the fat binaries differ (%zu and %zu bytes)\n", f->name, na, nb);
	free(fa);
	free(fb);
	CHECK(same);
}

/* ---- the fork servers on the fixtures ---- */

/* The bytes of file path (NULL when unreadable); *n its length. */
static char *slurp(const char *path, size_t *n)
{
	char *t = NULL;
	return path && util_read_file(path, 64u << 20, &t, n, NULL) == 0 ? t : NULL;
}

/* Compile variants of the L1 solution with the servers on (cache) until
 * one has its three forkable phases forked (the servers are ready), at most
 * ~30 s. 1 when that happened. */
static int warm_servers(const char *cache, const char *inc)
{
	char *p = xasprintf("%s/bank/public/L1/row_sum/solutions/cuda.cu", root);
	size_t n = 0;
	char *base = slurp(p, &n);
	free(p);
	int forked = 0;
	for (int i = 0; base && i < 30 && forked < 3; i++) {
		char *src = xasprintf("// warm-up %d\n%s", i, base);
		struct cudac_opts o = {.arch = "sm_90a",
				       .cache_dir = cache,
				       .include_dir = inc,
				       .compiler = "split"};
		struct cudac_result r;
		struct ka_err e;
		if (cudac_compile(src, strlen(src), &o, &r, &e) == 0) {
			forked = r.split && r.verdict == VERDICT_OK ? r.stats.forked : 0;
			cudac_result_free(&r);
		}
		free(src);
		if (forked < 3)
			usleep(300 * 1000);
	}
	free(base);
	return forked == 3;
}

/* The lines "ka-forkshim: <what>" in the servers' logs in spool. */
static int notes_in(const char *spool, const char *what)
{
	int n = 0;
	char *line = xasprintf("ka-forkshim: %s\n", what);
	for (int k = 0; k < 16; k++) {
		char *log = xasprintf("%s/logs/%d.log", spool, k);
		size_t len = 0;
		char *t = slurp(log, &len);
		for (const char *l = t; l && (l = strstr(l, line)); l++)
			n++;
		free(t);
		free(log);
	}
	free(line);
	return n;
}

/* The "served" lines in the servers' logs (the spools fsrv-X in cache). */
static int served_count(const char *cache)
{
	int n = 0;
	DIR *d = opendir(cache);
	for (struct dirent *de; d && (de = readdir(d));) {
		if (strncmp(de->d_name, "fsrv-", 5))
			continue;
		char *spool = xasprintf("%s/%s", cache, de->d_name);
		n += notes_in(spool, "served");
		free(spool);
	}
	if (d)
		closedir(d);
	return n;
}

/* The same verdict, log and shared object, with and without the servers. */
static void compare_forked(const struct fixture *f, const struct cudac_result *a, int rca,
			   const struct cudac_result *b, int rcb)
{
	CHECK(same_outcome(f, "split", a, rca, "forked", b, rcb));
	if (a->verdict != VERDICT_OK)
		return;
	size_t na = 0, nb = 0;
	char *sa = slurp(a->so_path, &na), *sb = slurp(b->so_path, &nb);
	int same = sa && sb && na == nb && !memcmp(sa, sb, na);
	if (!same)
		printf("# %s: the shared objects differ (%zu and %zu bytes)\n", f->name, na, nb);
	free(sa);
	free(sb);
	CHECK(same);
}

static int servers_ok; /* forked_pass saw the servers serve */

/* Every fixture through the split path with the fork servers (a cache of
 * their own), against split (the results without them). */
static void forked_pass(const char *const *srcs, const size_t *lens, struct cudac_result *split,
			int *rc_split)
{
	char *cache = xasprintf("%s/cache-fork", tmp), *inc = xasprintf("%s/include", root);
	const char *libs[] = {"cublas", NULL};
	setenv("KA_CUDA_FORKSRV", "on", 1);
	if (!warm_servers(cache, inc)) {
		printf("# the fork servers never served (no PID namespace here?): forked pass "
		       "skipped\n");
		goto out;
	}
	servers_ok = 1;
	int before = served_count(cache);
	struct cudac_opts o = {.arch = "sm_90a",
			       .cache_dir = cache,
			       .include_dir = inc,
			       .libs = libs,
			       .compiler = "split"};
	struct cudac_result *r = xcalloc((size_t)n_fx, sizeof *r);
	int *rc = xcalloc((size_t)n_fx, sizeof *rc), ok = 0, compiled = 0, early = 0;
	struct ka_err *e = xcalloc((size_t)n_fx, sizeof *e);
	cudac_compile_many(n_fx, srcs, lens, &o, 2, r, rc, e);
	for (int i = 0; i < n_fx; i++) {
		ka_test_failed = 0;
		compare_forked(&fx[i], &split[i], rc_split[i], &r[i], rc[i]);
		ok += !ka_test_failed;
		compiled += r[i].verdict == VERDICT_OK;
		early += r[i].stats.early;
		if (ka_test_failed)
			printf("# ^ %s (forked)\n", fx[i].name);
		cudac_result_free(&r[i]);
	}
	int served = served_count(cache) - before;
	printf("# forked pass: %d of %d fixtures the same; the servers served %d phases for %d "
	       "compiled fixtures, %d host compiles stood on the early stub\n",
	       ok, n_fx, served, compiled, early);
	/* (how many start early depends on the machine's load: test_early_stub
	 * checks that it happens) */
	ka_test_failed = ok != n_fx || served < 3 * compiled;
	free(r);
	free(rc);
	free(e);
out:
	setenv("KA_CUDA_FORKSRV", "off", 1);
	free(cache);
	free(inc);
}

static void test_same_verdicts(void)
{
	const char *srcs[MAX_SRC];
	size_t lens[MAX_SRC];
	for (int i = 0; i < n_fx; i++) {
		srcs[i] = fx[i].src;
		lens[i] = fx[i].len;
	}
	char *cache = xasprintf("%s/cache", tmp), *inc = xasprintf("%s/include", root);
	const char *libs[] = {"cublas", NULL};
	struct cudac_result *r[2];
	int *rc[2];
	struct ka_err *e[2];
	static const char *const paths[2] = {"nvcc", "split"};
	for (int k = 0; k < 2; k++) {
		struct cudac_opts o = {.arch = "sm_90a",
				       .cache_dir = cache,
				       .include_dir = inc,
				       .libs = libs,
				       .compiler = paths[k]};
		r[k] = xcalloc((size_t)n_fx, sizeof **r);
		rc[k] = xcalloc((size_t)n_fx, sizeof **rc);
		e[k] = xcalloc((size_t)n_fx, sizeof **e);
		cudac_compile_many(n_fx, srcs, lens, &o, 2, r[k], rc[k], e[k]);
	}
	int ok = 0;
	for (int i = 0; i < n_fx; i++) {
		ka_test_failed = 0;
		compare_one(&fx[i], &r[0][i], rc[0][i], &r[1][i], rc[1][i]);
		ok += !ka_test_failed;
		if (ka_test_failed)
			printf("# ^ %s\n", fx[i].name);
	}
	printf("# %d of %d fixtures: same verdict, log and fat binary\n", ok, n_fx);
	int fork_failed = 0;
	if (ok == n_fx) {
		forked_pass(srcs, lens, r[1], rc[1]);
		fork_failed = ka_test_failed;
	}
	ka_test_failed = ok != n_fx || fork_failed;
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < n_fx; i++)
			cudac_result_free(&r[k][i]);
		free(r[k]);
		free(rc[k]);
		free(e[k]);
	}
	free(cache);
	free(inc);
	CHECK(ok == n_fx);
}

/* ---- ka-cudaphases with the fork servers ---- */

/* The tmp-* work folder under dir (the one KA_CUDAC_KEEP kept), or NULL. */
static char *kept_folder(const char *dir)
{
	char *found = NULL;
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));)
		if (!strncmp(de->d_name, "tmp-", 4) && !found)
			found = xasprintf("%s/%s", dir, de->d_name);
	if (d)
		closedir(d);
	return found;
}

/* tmp/name: a fresh copy of folder from; the copy's path (caller frees). */
static char *copy_of(const char *from, const char *name)
{
	char *to = xasprintf("%s/%s", tmp, name), *out = NULL;
	util_rmtree(to);
	char *argv[] = {"/bin/cp", "-a", (char *)from, to, NULL};
	struct ka_err e;
	if (util_run(argv, NULL, 60, 4096, &out, NULL, NULL, &e) != 0)
		printf("# cp %s %s failed\n", from, to);
	free(out);
	return to;
}

/* Rewrite folder/rel: drop the lines that start with drop (or none), then
 * replace every from with to (or nothing). */
static void edit(const char *folder, const char *rel, const char *drop, const char *from,
		 const char *to)
{
	char *path = xasprintf("%s/%s", folder, rel);
	size_t n = 0;
	char *t = slurp(path, &n);
	struct util_buf b;
	util_buf_init(&b);
	util_buf_puts(&b, "");
	for (const char *l = t; l && *l;) {
		size_t len = strcspn(l, "\n") + (l[strcspn(l, "\n")] ? 1 : 0);
		if (!drop || strncmp(l, drop, strlen(drop)))
			util_buf_add(&b, l, len);
		l += len;
	}
	struct util_buf o;
	util_buf_init(&o);
	util_buf_puts(&o, "");
	for (const char *c = b.s; *c;) {
		if (from && !strncmp(c, from, strlen(from))) {
			util_buf_puts(&o, to);
			c += strlen(from);
		} else {
			util_buf_putc(&o, *c++);
		}
	}
	util_write_file(path, o.s, o.len, NULL);
	util_buf_free(&o);
	util_buf_free(&b);
	free(t);
	free(path);
}

/* Run ka-cudaphases on folder/phases.plan; its report (caller frees). */
static char *run_in(const char *folder)
{
	char *argv[] = {driver, "phases.plan", NULL}, *out = NULL;
	struct ka_err e;
	util_run(argv, folder, 300, 1 << 16, &out, NULL, NULL, &e);
	return out ? out : xstrdup("");
}

/* Step k's status in a report (-99: none); *forked its fork flag. */
static int step_forked(const char *out, int k, int *forked)
{
	char key[32];
	snprintf(key, sizeof key, "step %d code ", k);
	const char *l = strstr(out, key);
	int code = -99;
	*forked = -1;
	if (l)
		sscanf(l + strlen(key), "%d ms %*f rss %*d pch %*d runs %*d cpu %*f fork %d", &code,
		       forked);
	return code;
}

/* The rest of the first line of folder/phases.plan that starts with key
 * (caller frees), or NULL. */
static char *plan_value(const char *folder, const char *key)
{
	char *path = xasprintf("%s/phases.plan", folder), *k = xasprintf("\n%s", key);
	size_t n = 0;
	char *t = slurp(path, &n), *v = NULL;
	const char *at = t ? strstr(t, k) : NULL;
	if (at)
		v = xasprintf("%.*s", (int)strcspn(at + strlen(k), "\n"), at + strlen(k));
	free(t);
	free(k);
	free(path);
	return v;
}

/* The index of step name in folder/phases.plan, or -1. */
static int plan_index(const char *folder, const char *name)
{
	char *path = xasprintf("%s/phases.plan", folder), *key = xasprintf("step %s\n", name);
	size_t n = 0;
	char *t = slurp(path, &n);
	const char *at = t ? strstr(t, key) : NULL;
	int k = -1; /* the steps whose line comes before or is at */
	for (const char *l = t ? strstr(t, "\nstep ") : NULL; at && l && l < at;
	     l = strstr(l + 1, "\nstep "))
		k++;
	free(t);
	free(path);
	free(key);
	return k;
}

/* 1 when the files a/ra and b/rb exist, are not empty and hold the same
 * bytes. */
static int same_bytes(const char *a, const char *ra, const char *b, const char *rb)
{
	char *pa = xasprintf("%s/%s", a, ra), *pb = xasprintf("%s/%s", b, rb);
	size_t na = 0, nb = 0;
	char *ta = slurp(pa, &na), *tb = slurp(pb, &nb);
	int same = ta && tb && na == nb && na > 0 && !memcmp(ta, tb, na);
	if (!same)
		printf("# %s and %s differ (or one is missing or empty)\n", pa, pb);
	free(ta);
	free(tb);
	free(pa);
	free(pb);
	return same;
}

/* 1 when file rel is the same in folders a and b. */
static int same_file(const char *a, const char *b, const char *rel)
{
	return same_bytes(a, rel, b, rel);
}

/* The products of a compile folder: the same in a and b. */
static int same_products(const char *a, const char *b)
{
	return same_file(a, b, "candidate.so") &&
	       same_file(a, b, "keep/candidate.compute_90a.ptx") &&
	       same_file(a, b, "keep/candidate.compute_90.ptx");
}

/* Run folder's plan: every step succeeds; the three forkable steps'
 * fork flags are want[] (cudafe++, cicc compute_90, cicc compute_90a; -1:
 * either). */
static void expect_run(const char *folder, const int want[3])
{
	static const char *const names[] = {"cudafe++", "cicc compute_90", "cicc compute_90a"};
	char *out = run_in(folder);
	for (int k = 0; k < 12; k++) {
		int forked, code = step_forked(out, k, &forked);
		if (code != 0)
			printf("# %s: step %d status %d\n%s", folder, k, code, out);
		CHECK(code == 0);
	}
	for (int i = 0; i < 3; i++) {
		int forked;
		step_forked(out, plan_index(folder, names[i]), &forked);
		if (want[i] >= 0 && forked != want[i])
			printf("# %s: %s forked %d, want %d\n", folder, names[i], forked, want[i]);
		CHECK(want[i] < 0 || forked == want[i]);
	}
	free(out);
}

/* A compile folder kept with the servers on: its plan names them. */
static char *kept_compile(const char *cache, const char *inc)
{
	char *p = xasprintf("%s/bank/public/L1/row_sum/solutions/cuda.cu", root), *w = NULL;
	size_t n = 0;
	char *base = slurp(p, &n), *src = xasprintf("// kept\n%s", base ? base : "");
	struct cudac_opts o = {
		.arch = "sm_90a", .cache_dir = cache, .include_dir = inc, .compiler = "split"};
	struct cudac_result r;
	struct ka_err e;
	setenv("KA_CUDA_FORKSRV", "on", 1);
	setenv("KA_CUDAC_KEEP", "1", 1);
	if (cudac_compile(src, strlen(src), &o, &r, &e) == 0) {
		if (r.verdict == VERDICT_OK && r.stats.forked == 3)
			w = kept_folder(cache);
		cudac_result_free(&r);
	}
	unsetenv("KA_CUDAC_KEEP");
	setenv("KA_CUDA_FORKSRV", "off", 1);
	free(src);
	free(base);
	free(p);
	return w;
}

/* A copy of the kept folder w, named name, whose run must fork want[]
 * and give ref's products after change(copy). */
static void refusal(const char *w, const char *ref, const char *name, const int want[3],
		    void (*change)(const char *))
{
	char *x = copy_of(w, name);
	change(x);
	expect_run(x, want);
	CHECK(same_products(ref, x));
	free(x);
}

static void no_fork_lines(const char *x)
{
	edit(x, "phases.plan", "fork", NULL, NULL);
}

static void nothing(const char *x)
{
	(void)x;
}

/* The step of the compute_90a preprocessor run copies file `from` (in
 * folder x) to its output instead: an input no source can give. */
static void copy_step(const char *x, const char *from)
{
	char *path = xasprintf("%s/phases.plan", x);
	size_t n = 0;
	char *t = slurp(path, &n);
	const char *st = t ? strstr(t, "step cpp candidate.compute_90a.cpp1.ii\n") : NULL;
	const char *next = st ? strstr(st + 1, "\nstep ") : NULL;
	struct util_buf b;
	util_buf_init(&b);
	util_buf_add(&b, t, st ? (size_t)(st - t) : n);
	for (const char *l = st; l && l < next;) {
		size_t len = strcspn(l, "\n") + 1;
		if (strncmp(l, "arg ", 4))
			util_buf_add(&b, l, len);
		l += len;
	}
	if (next) {
		util_buf_printf(&b, "arg /bin/cp\narg %s\narg keep/candidate.compute_90a.cpp1.ii",
				from);
		util_buf_puts(&b, next);
	}
	util_write_file(path, b.s, b.len, NULL);
	util_buf_free(&b);
	free(t);
	free(path);
}

/* the compute_90a input with a blank at the end of a pragma of the prefix */
static void other_prefix(const char *x)
{
	char *from = xasprintf("%s/keep/candidate.compute_90a.cpp1.ii", x);
	char *to = xasprintf("%s/altered.ii", x), *out = NULL;
	char *argv[] = {"/bin/cp", from, to, NULL};
	struct ka_err e;
	util_run(argv, NULL, 60, 4096, &out, NULL, NULL, &e);
	edit(x, "altered.ii", NULL, "diagnostic push\n", "diagnostic push \n");
	copy_step(x, "altered.ii");
	free(out);
	free(to);
	free(from);
}

/* the servers' folder holds no server */
static void no_server(const char *x)
{
	char *dir = plan_value(x, "forkdir "), *empty = xasprintf("%s/empty", tmp);
	util_mkdirs(empty, NULL);
	edit(x, "phases.plan", NULL, dir, empty);
	free(dir);
	free(empty);
}

/* cudafe++ from a copy of its file: not the program its server runs */
static void other_program(const char *x)
{
	char *here = plan_value(x, "env _HERE_=");
	char *from = xasprintf("%s/cudafe++", here), *to = xasprintf("%s/cudafe++", x), *out = NULL;
	char *argv[] = {"/bin/cp", from, to, NULL};
	struct ka_err e;
	util_run(argv, NULL, 60, 4096, &out, NULL, NULL, &e);
	char *arg = xasprintf("\narg %s\n", to);
	edit(x, "phases.plan", NULL, "\narg cudafe++\n", arg);
	free(arg);
	free(out);
	free(to);
	free(from);
	free(here);
}

/* a memory budget whose share (120 MiB) is below the servers' peaks: they
 * refuse (the steps then fail for memory and run again alone with all of
 * it, which the servers may serve) */
static void small_memory(const char *x)
{
	char *mem = plan_value(x, "mem ");
	char *line = xasprintf("mem %s\n", mem ? mem : ""),
	     *want = xasprintf("mem %d\n", 360 << 20);
	edit(x, "phases.plan", NULL, line, want);
	free(line);
	free(want);
	free(mem);
}

/* A compile past its time limit: compile_error, and the detail names the
 * step that was still running (the template bomb grows for a minute before
 * any cap; 8 GiB of memory here, so that the 2 s limit comes first). */
static void test_time_limit_names_step(void)
{
	char *path = xasprintf("%s/tests/data/harden/bomb_template.cu", root);
	char *cache = xasprintf("%s/cache-limit", tmp), *inc = xasprintf("%s/include", root);
	size_t n = 0;
	char *src = slurp(path, &n);
	struct cudac_opts o = {.arch = "sm_90a",
			       .cache_dir = cache,
			       .include_dir = inc,
			       .compiler = "split",
			       .timeout_s = 2};
	struct cudac_result r;
	struct ka_err e;
	setenv("KA_COMPILE_MEM_MB", "8192", 1);
	int rc = src ? cudac_compile(src, n, &o, &r, &e) : -1;
	setenv("KA_COMPILE_MEM_MB", "1024", 1);
	CHECK_EQ_INT(rc, 0);
	if (rc == 0) {
		CHECK_EQ_INT(r.verdict, VERDICT_COMPILE_ERROR);
		if (!strstr(r.detail, "[at the time limit: "))
			printf("# detail: %.400s\n", r.detail);
		CHECK(strstr(r.detail, "nvcc ran over its time limit of 2 s") != NULL);
		CHECK(strstr(r.detail, "[at the time limit: cudafe++ had run ") != NULL ||
		      strstr(r.detail, "[at the time limit: cicc") != NULL);
		/* where it was (the jail has /proc): running, or a wait */
		CHECK(strstr(r.detail, "; state R, waiting in ") != NULL ||
		      strstr(r.detail, "; state S, waiting in ") != NULL ||
		      strstr(r.detail, "; state D, waiting in ") != NULL);
		cudac_result_free(&r);
	}
	free(src);
	free(inc);
	free(cache);
	free(path);
}
/* a syntax error at the end of the source: cudafe++'s forked run fails,
 * the step runs again plainly; its status and log are a plain run's */
static void failing_run(const char *w)
{
	char *x[2], *log[2];
	int code[2], forked[2];
	for (int i = 0; i < 2; i++) {
		x[i] = copy_of(w, i ? "fails-plain" : "fails-forked");
		char *cu = xasprintf("%s/candidate.cu", x[i]);
		FILE *f = fopen(cu, "a");
		if (f) {
			fputs("int broken( {\n", f);
			fclose(f);
		}
		free(cu);
		if (i)
			no_fork_lines(x[i]);
		int k = plan_index(x[i], "cudafe++");
		char *out = run_in(x[i]), *lp = xasprintf("%s/logs/%d.log", x[i], k);
		code[i] = step_forked(out, k, &forked[i]);
		size_t n = 0;
		log[i] = slurp(lp, &n);
		free(lp);
		free(out);
	}
	if (!(code[0] > 0 && code[0] == code[1] && forked[0] == 0 && forked[1] == 0))
		printf("# failing run: status %d / %d, forked %d / %d\n", code[0], code[1],
		       forked[0], forked[1]);
	CHECK(code[0] > 0 && code[0] == code[1] && forked[0] == 0 && forked[1] == 0);
	CHECK(log[0] && log[1] && strstr(log[0], "error") && !strcmp(log[0], log[1]));
	for (int i = 0; i < 2; i++) {
		free(log[i]);
		free(x[i]);
	}
}

static void test_fork_driver(void)
{
	char *cache = xasprintf("%s/cache-kept", tmp), *inc = xasprintf("%s/include", root);
	char *w = servers_ok ? kept_compile(cache, inc) : NULL;
	if (!w) {
		printf("SKIP test_fork_driver: no compile forked by the servers here\n");
		CHECK(!servers_ok);
		free(cache);
		free(inc);
		return;
	}
	static const int all[3] = {1, 1, 1}, none[3] = {0, 0, 0};
	static const int fe_plain[3] = {0, 1, 1}, c90a_plain[3] = {1, 1, 0};
	/* the plain run (no fork lines) is the reference */
	char *ref = copy_of(w, "plain");
	no_fork_lines(ref);
	expect_run(ref, none);
	refusal(w, ref, "forked", all, nothing);
	refusal(w, ref, "prefix", c90a_plain, other_prefix);
	refusal(w, ref, "noserver", none, no_server);
	refusal(w, ref, "program", fe_plain, other_program);
	char *spool = plan_value(w, "forkdir ");
	int before = notes_in(spool, "refused: memory cap");
	static const int either[3] = {-1, -1, -1};
	refusal(w, ref, "memory", either, small_memory);
	CHECK(notes_in(spool, "refused: memory cap") >= before + 3);
	free(spool);
	failing_run(w);
	free(ref);
	free(w);
	free(cache);
	free(inc);
}

/* The arguments of step name in folder/phases.plan into argv (at most cap,
 * NULL-terminated; the strings point into *text, which the caller frees). */
#define MAX_ARGS_T 256
static int step_args(const char *folder, const char *name, char **text, char **argv, int cap)
{
	char *path = xasprintf("%s/phases.plan", folder), *key = xasprintf("step %s\n", name);
	size_t n = 0;
	*text = slurp(path, &n);
	char *at = *text ? strstr(*text, key) : NULL;
	int argc = 0;
	if (at)
		at += strlen(key);
	while (at && *at && strncmp(at, "step ", 5) && argc < cap - 1) {
		char *nl = strchr(at, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(at, "arg ", 4))
			argv[argc++] = at + 4;
		at = nl ? nl + 1 : NULL;
	}
	argv[argc] = NULL;
	free(path);
	free(key);
	return argc;
}

/* A kept compile folder of its own (cache folder name) for test, or NULL
 * with a SKIP line: the servers never served here. */
static char *kept_for(const char *test, const char *name)
{
	char *cache = xasprintf("%s/%s", tmp, name), *inc = xasprintf("%s/include", root);
	char *w = servers_ok ? kept_compile(cache, inc) : NULL;
	if (!w)
		printf("SKIP %s: no kept compile here\n", test);
	free(cache);
	free(inc);
	return w;
}

/* The host compile as two steps (cudaplan's split_host_asm: -S, then as)
 * makes the same assembler file and object as the one `-c -save-temps`
 * command nvcc runs. */
static void test_host_asm(void)
{
	char *w = kept_for("test_host_asm", "cache-kept-asm");
	if (!w)
		return;
	char *t1 = NULL, *t2 = NULL, *cc[MAX_ARGS_T], *as[16], *one[MAX_ARGS_T + 2];
	int n = step_args(w, "host cc", &t1, cc, MAX_ARGS_T),
	    m = step_args(w, "host as", &t2, as, 16);
	CHECK(n > 4 && m == 5);
	int k1 = 0, s_at = -1;
	for (int k = 0; k < n; k++) {
		if (!strcmp(cc[k], "-S")) {
			one[k1++] = "-c";
			one[k1++] = "-save-temps";
			s_at = k;
			continue;
		}
		one[k1++] = k > 0 && !strcmp(cc[k - 1], "-o") ? "keep/one.o" : cc[k];
	}
	one[k1] = NULL;
	CHECK(s_at > 0 && !strcmp(as[0], "as") && !strcmp(as[3], "keep/candidate.o"));
	struct ka_err e;
	char *out = NULL;
	CHECK_EQ_INT(util_run(cc, w, 120, 1 << 16, &out, NULL, NULL, &e), 0);
	free(out);
	CHECK_EQ_INT(util_run(as, w, 120, 1 << 16, &out, NULL, NULL, &e), 0);
	free(out);
	CHECK_EQ_INT(util_run(one, w, 120, 1 << 16, &out, NULL, NULL, &e), 0);
	free(out);
	CHECK(same_bytes(w, "keep/candidate.s", w, "keep/one.s"));
	CHECK(same_bytes(w, "keep/candidate.o", w, "keep/one.o"));
	free(t1);
	free(t2);
	free(w);
}

/* A forked cicc marks its stub written before it ends (the shim's early
 * stub, docs/compile.md 7.5), and a step on it starts early and stands:
 * the kept folder's plan cut to its cicc compute_90a (its input is there
 * already) and a step that copies the stub as it found it. */
static void test_early_stub(void)
{
	char *w = kept_for("test_early_stub", "cache-kept-stub");
	if (!w)
		return;
	char *path = xasprintf("%s/phases.plan", w);
	size_t n = 0;
	char *t = slurp(path, &n);
	struct util_buf b;
	util_buf_init(&b);
	const char *first = t ? strstr(t, "\nstep ") : NULL;
	const char *blk = t ? strstr(t, "\nstep cicc compute_90a\n") : NULL;
	const char *end = blk ? strstr(blk + 1, "\nstep ") : NULL;
	char stub[512] = "";
	CHECK(first && blk && end);
	if (first && blk && end) {
		util_buf_printf(&b, "%.*s\n", (int)(first - t), t);
		for (const char *l = blk + 1; l < end;) {
			const char *nl = strchr(l, '\n');
			int len = (int)(nl - l);
			if (strncmp(l, "dep ", 4))
				util_buf_printf(&b, "%.*s\n", len, l);
			if (!strncmp(l, "senv KA_FORK_STUB=", 18))
				snprintf(stub, sizeof stub, "%.*s", len - 18, l + 18);
			l = nl + 1;
		}
		util_buf_printf(&b,
				"step probe\nlog logs/probe.log\ndep 0\nearly 0\nearlyfile %s\n"
				"arg /bin/sh\narg -c\narg cp %s early.stub\n",
				stub, stub);
	}
	CHECK(stub[0] != 0);
	char *plan = util_buf_take(&b), *cut = xasprintf("%s/early.plan", w);
	util_write_file(cut, plan, strlen(plan), NULL);
	char *argv[] = {driver, cut, NULL}, *out = NULL;
	struct ka_err e;
	CHECK_EQ_INT(util_run(argv, w, 120, 1 << 16, &out, NULL, NULL, &e), 0);
	int forked;
	CHECK_EQ_INT(step_forked(out ? out : "", 0, &forked), 0);
	CHECK_EQ_INT(forked, 1);
	CHECK_EQ_INT(step_early(out ? out : "", 1), 1);
	if (step_early(out ? out : "", 1) != 1)
		printf("# %s", out ? out : "");
	CHECK(stub[0] && same_bytes(w, "early.stub", w, stub));
	free(out);
	free(plan);
	free(cut);
	free(t);
	free(path);
	free(w);
}

int main(void)
{
	snprintf(root, sizeof root, "%s", util_data_root());
	const char *b = getenv("BUILD");
	snprintf(driver, sizeof driver, "%s%s%s/ka-cudaphases", b && b[0] == '/' ? "" : root,
		 b && b[0] == '/' ? "" : "/", b ? b : "build");
	snprintf(tmp, sizeof tmp, "/tmp/ka-test-cudasplit-XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("FAIL test_cudasplit: mkdtemp\n");
		return 1;
	}
	RUN(test_plan_nvcc13);
	RUN(test_plan_refused);
	RUN(test_plan_fork);
	if (access(driver, X_OK) != 0) {
		printf("SKIP test_cudasplit_driver: %s missing\n", driver);
	} else {
		RUN(test_driver_order_and_failure);
		RUN(test_driver_memory_rerun);
		RUN(test_driver_prefix);
		RUN(test_driver_early);
	}
	if (!cudac_nvcc_version(NULL) || access(driver, X_OK) != 0) {
		printf("SKIP test_same_verdicts: nvcc or ka-cudaphases missing\n");
	} else {
		/* the bombs end at 1 GiB, as in tests/e2e/harden_files.sh */
		setenv("KA_COMPILE_MEM_MB", "1024", 1);
		setenv("KA_CUDA_FORKSRV", "off", 1); /* forked_pass turns them on */
		char *secret = xasprintf("%s/secret.txt", tmp);
		util_write_file(secret, "ka-split-secret\n", 16, NULL);
		add_folder("tests/data/cuda", secret);
		add_folder("tests/data/harden", secret);
		for (int i = 0; made[i][0]; i++)
			add_fixture(made[i][0], made[i][1], strlen(made[i][1]));
		add_bank("L1/row_sum");
		if (fixtures_all()) { /* the slowest compiles: bank tier only */
			add_bank("L2/gemm_bias_gelu_bf16");
			add_bank("L3/sdpa_bf16_d128");
		}
		RUN(test_same_verdicts);
		RUN(test_fork_driver);
		RUN(test_host_asm);
		RUN(test_early_stub);
		RUN(test_time_limit_names_step);
		free(secret);
		for (int i = 0; i < n_fx; i++)
			free(fx[i].src);
	}
	util_rmtree(tmp);
	TEST_EXIT();
}
