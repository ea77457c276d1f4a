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
 *    binary byte for byte (so the same SASS). Skips the compiles where nvcc
 *    is missing. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudac.h"
#include "cudaplan.h"
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
					    "link",
					    NULL};
	for (int i = 0; order[i]; i++)
		CHECK_EQ_STR(i < p.n ? p.ph[i].name : "", order[i]);
	CHECK_EQ_INT(p.n, 12);
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
	CHECK(depends(&p, ln, cc) && depends(&p, ln, as));
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
	char *t = cudaplan_text(&p, "/w", "/pch/P.h", 3, 1u << 30, 60, -1, &e);
	CHECK(t && strstr(t, "jobs 3\nmem 1073741824\nlimit 60\n") &&
	      strstr(t, "pchprefix /pch/P.h\n") &&
	      strstr(t, "pchinput keep/candidate.compute_90a.cudafe1.cpp\n"));
	free(t);
	/* only cudafe++ and what it needs */
	t = cudaplan_text(&p, "/w", NULL, 1, 1u << 30, 60, fe, &e);
	CHECK(t && strstr(t, "step cpp candidate.cpp4.ii\n") && strstr(t, "step cudafe++\n") &&
	      !strstr(t, "cicc") && strstr(t, "dep 0\n"));
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

/* Every .cu of folder rel, SECRET_PATH replaced by secret. */
static void add_folder(const char *rel, const char *secret)
{
	char *dir = xasprintf("%s/%s", root, rel);
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".cu"))
			continue;
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
			char *name = xasprintf("%s/%s", rel, de->d_name);
			add_fixture(name, b.s, b.len);
			free(name);
			util_buf_free(&b);
		}
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

/* Compare the two results of fixture f. */
static void compare_one(const struct fixture *f, const struct cudac_result *a, int rca,
			const struct cudac_result *b, int rcb)
{
	if (rca || rcb || a->verdict != b->verdict || strcmp(a->detail, b->detail)) {
		printf("# %s: nvcc %d %s / split %d %s\n#  nvcc: %.300s\n#  split: %.300s\n",
		       f->name, rca, verdict_name(a->verdict), rcb, verdict_name(b->verdict),
		       a->detail, b->detail);
		CHECK(0);
	}
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
	ka_test_failed = ok != n_fx;
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
	if (access(driver, X_OK) != 0) {
		printf("SKIP test_cudasplit_driver: %s missing\n", driver);
	} else {
		RUN(test_driver_order_and_failure);
		RUN(test_driver_memory_rerun);
		RUN(test_driver_prefix);
	}
	if (!cudac_nvcc_version(NULL) || access(driver, X_OK) != 0) {
		printf("SKIP test_same_verdicts: nvcc or ka-cudaphases missing\n");
	} else {
		/* the bombs end at 1 GiB, as in tests/e2e/harden_files.sh */
		setenv("KA_COMPILE_MEM_MB", "1024", 1);
		char *secret = xasprintf("%s/secret.txt", tmp);
		util_write_file(secret, "ka-split-secret\n", 16, NULL);
		add_folder("tests/data/cuda", secret);
		add_folder("tests/data/harden", secret);
		for (int i = 0; made[i][0]; i++)
			add_fixture(made[i][0], made[i][1], strlen(made[i][1]));
		add_bank("L1/row_sum");
		add_bank("L2/gemm_bias_gelu_bf16");
		add_bank("L3/sdpa_bf16_d128");
		RUN(test_same_verdicts);
		free(secret);
		for (int i = 0; i < n_fx; i++)
			free(fx[i].src);
	}
	util_rmtree(tmp);
	TEST_EXIT();
}
