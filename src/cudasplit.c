/* cudasplit.c: the split CUDA compile (see cudasplit.h). The plan comes
 * from `nvcc --dryrun` (cudaplan.c); ka-cudaphases (tools/cudaphases.c) runs
 * it in the compile jail; this file prepares the work folder, keeps the
 * per-process state (the plans, the precompiled prefixes) and reads the
 * outcome back as nvcc's exit status and log. */
#include "cudasplit.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cudafork.h"
#include "cudaplan.h"
#include "jail.h"

#define JOBS 3	    /* phases at once: the plan is at most ~4 wide */
#define MAX_PLANS 4 /* nvcc command lines (archs) kept per process */
#define MAX_PCH 8   /* cache folders with a precompiled prefix */
#define SENTINEL "__ka_pch_sentinel"
#define RESULT_CAP (64u << 10)

struct plan_slot {
	uint64_t key; /* hash of the nvcc command line */
	int ok;	      /* 1 parsed; -1 failed (err says why) */
	struct cudaplan plan;
	char err[KA_ERRLEN];
};

struct pch_slot {
	uint64_t key;	    /* plan key and cache folder */
	int state;	    /* 1 ready, -1 failed */
	char dir[PATH_MAX]; /* holds P.h and P.h.gch */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct plan_slot plans[MAX_PLANS];
static int n_plans;
static struct pch_slot pchs[MAX_PCH];
static int n_pchs;
static char driver[PATH_MAX];

void cudasplit_module_id(uint64_t h, char *out, size_t cap)
{
	snprintf(out, cap, "_%08x_12_candidate_cu_%08x", (unsigned)(h >> 32), (unsigned)h);
}

static uint64_t argv_key(char *const *argv)
{
	uint64_t h = 0x5917;
	for (int i = 0; argv[i]; i++)
		h = util_hash64(argv[i], strlen(argv[i]) + 1, h);
	return h;
}

static void driver_init(void)
{
	static const char *const where[] = {"", "/..", NULL};
	for (int i = 0; where[i]; i++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s%s/ka-cudaphases", util_exe_dir(), where[i]);
		/* resolved: the jail binds it by this path */
		if (access(path, X_OK) == 0 && realpath(path, driver))
			return;
	}
	driver[0] = 0;
}

/* ka-cudaphases beside this program (or one folder up, for the unit tests
 * in build/tests/); NULL when there is none. */
static const char *driver_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, driver_init);
	return driver[0] ? driver : NULL;
}

/* ---- the plan ---- */

static int run_dryrun(char *const *nvcc_argv, const char *cache_dir, const char *kept,
		      struct plan_slot *slot, struct ka_err *e);

/* The file that keeps nvcc's dryrun for nvcc_argv under cache_dir: keyed
 * by the command line and nvcc's file (size and time), so that another
 * toolkit is another file. Caller frees. */
static char *dryrun_file(char *const *nvcc_argv, const char *cache_dir)
{
	struct stat st;
	char *real = realpath(nvcc_argv[0], NULL);
	uint64_t h = argv_key(nvcc_argv);
	if (real && stat(real, &st) == 0) {
		h = util_hash64(real, strlen(real), h);
		h = util_hash64(&st.st_size, sizeof st.st_size, h);
		h = util_hash64(&st.st_mtime, sizeof st.st_mtime, h);
	}
	free(real);
	return xasprintf("%s/split-dryrun-%016llx.txt", cache_dir, (unsigned long long)h);
}

/* nvcc --dryrun of nvcc_argv, from the cache folder's copy or run in a
 * fresh folder under cache_dir with the jail's environment (so PATH is the
 * one the phases will see, and no PWD, as in the jail), parsed into slot. 0,
 * or -1 with e. */
static int read_plan(char *const *nvcc_argv, const char *cache_dir, struct plan_slot *slot,
		     struct ka_err *e)
{
	char *kept = dryrun_file(nvcc_argv, cache_dir), *text = NULL;
	size_t len = 0;
	if (util_read_file(kept, 1 << 20, &text, &len, NULL) == 0) {
		int rc = cudaplan_parse(text, "/nonexistent", &slot->plan, e);
		free(text);
		free(kept);
		return rc;
	}
	int rc = run_dryrun(nvcc_argv, cache_dir, kept, slot, e);
	free(kept);
	return rc;
}

/* Run nvcc --dryrun (see read_plan), parse it, and keep its text in kept. */
static int run_dryrun(char *const *nvcc_argv, const char *cache_dir, const char *kept,
		      struct plan_slot *slot, struct ka_err *e)
{
	char *dir = xasprintf("%s/dryrun-XXXXXX", cache_dir);
	if (util_mkdirs(cache_dir, e)) {
		free(dir);
		return -1;
	}
	if (!mkdtemp(dir)) {
		ka_err_set(e, "%s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	char *home = xasprintf("HOME=%s", dir);
	char *argv[64];
	int a = 0;
	argv[a++] = "/usr/bin/env";
	argv[a++] = "-i";
	argv[a++] = "PATH=" JAIL_PATH;
	argv[a++] = home;
	argv[a++] = "LANG=C";
	argv[a++] = nvcc_argv[0];
	argv[a++] = "--dryrun";
	for (int i = 1; nvcc_argv[i] && a < 63; i++)
		argv[a++] = nvcc_argv[i];
	argv[a] = NULL;
	char *out = NULL;
	int st = util_run(argv, dir, 60, 1 << 20, &out, NULL, NULL, e);
	int rc = -1;
	if (st == 0)
		rc = cudaplan_parse(out, dir, &slot->plan, e);
	else if (st > 0)
		ka_err_set(e, "nvcc --dryrun exited with %d", st);
	/* kept only when it names no folder of its own (nvcc saw no PWD) */
	if (rc == 0 && !strstr(out, dir)) {
		char *t = xasprintf("%s.tmp%d", kept, (int)getpid());
		if (util_write_file(t, out, strlen(out), NULL) == 0)
			rename(t, kept);
		free(t);
	}
	free(out);
	free(home);
	util_rmtree(dir);
	free(dir);
	return rc;
}

/* The plan for nvcc_argv (read once per process); NULL with e. Called with
 * mu held. */
static const struct cudaplan *get_plan(char *const *nvcc_argv, const char *cache_dir,
				       struct ka_err *e)
{
	uint64_t key = argv_key(nvcc_argv);
	for (int i = 0; i < n_plans; i++)
		if (plans[i].key == key) {
			if (plans[i].ok < 0)
				ka_err_set(e, "%s", plans[i].err);
			return plans[i].ok > 0 ? &plans[i].plan : NULL;
		}
	if (n_plans == MAX_PLANS) {
		ka_err_set(e, "cudasplit: over %d nvcc command lines", MAX_PLANS);
		return NULL;
	}
	struct plan_slot *s = &plans[n_plans++];
	memset(s, 0, sizeof *s);
	s->key = key;
	struct ka_err pe = {{0}};
	if (!driver_path()) {
		ka_err_set(&pe, "ka-cudaphases is not beside %s", util_exe_dir());
	} else if (read_plan(nvcc_argv, cache_dir, s, &pe) == 0) {
		/* gold links a candidate's two objects in about a third of
		 * ld.bfd's time, on the compile's critical path (docs/compile.md,
		 * section 3, item 8); the host object was checked to hold only
		 * what a compiler writes, so the verdict does not depend on it */
		char ld[PATH_MAX];
		if (util_which("ld.gold", ld, sizeof ld) == 0)
			cudaplan_fuse_ld(&s->plan, "gold");
		s->ok = 1;
		return &s->plan;
	}
	cudaplan_free(&s->plan);
	s->ok = -1;
	snprintf(s->err, sizeof s->err, "the split compile cannot be used: %.400s", pe.msg);
	ka_err_set(e, "%s", s->err);
	return NULL;
}

/* ---- running ka-cudaphases ---- */

/* Run ka-cudaphases on work/<plan_name> in the compile jail of nvcc (plus
 * the driver and, if not NULL, the precompiled prefix's folder and the fork
 * servers' folder), under limit_s. 0 with rr filled (the driver's exit
 * status and its result lines), or -1 with e. */
static int run_driver(const char *nvcc, const char *work, const char *plan_name,
		      const char *pch_dir, const char *fork_dir, double limit_s,
		      struct util_run_result *rr, struct ka_err *e)
{
	struct jail_opts jo;
	if (jail_opts_compiler(&jo, nvcc, work, limit_s, e) || jail_add_ro(&jo, driver_path(), e) ||
	    (pch_dir && jail_add_ro(&jo, pch_dir, e)) ||
	    (fork_dir && jail_add_ro(&jo, fork_dir, e)))
		return -1;
	char *argv[] = {(char *)driver_path(), (char *)plan_name, NULL};
	struct util_run_opts ro = {
		.timeout_s = limit_s, .out_cap = RESULT_CAP, .merge_err = 1, .jail = &jo};
	return util_run_child(argv, &ro, rr, e);
}

/* Write text to work/name and run it; 0 with rr, or -1 with e. */
static int run_text(const char *nvcc, const char *work, const char *name, const char *text,
		    const char *pch_dir, const char *fork_dir, double limit_s,
		    struct util_run_result *rr, struct ka_err *e)
{
	char *path = xasprintf("%s/%s", work, name);
	char *logs = xasprintf("%s/logs", work);
	int rc = util_mkdirs(logs, e) || util_write_file(path, text, strlen(text), e)
			 ? -1
			 : run_driver(nvcc, work, name, pch_dir, fork_dir, limit_s, rr, e);
	free(path);
	free(logs);
	return rc;
}

/* One step's line of the driver's report. */
struct step_result {
	int code;		  /* -1: not run */
	double ms, cpu_ms, at_ms; /* at: its start after the driver's */
	int pch, forked, early;
	char state, wchan[64]; /* its "stuck" line (at the deadline), else '?' */
};

/* Read the driver's "step K code C ms M ..." lines, and the "stuck K STATE
 * WCHAN" lines it writes at the deadline before the kill, into res (n
 * steps). 0, or -1 when a step has no "step" line. */
static int parse_results(const char *out, struct step_result *res, int n)
{
	for (int k = 0; k < n; k++) {
		res[k].code = -2;
		res[k].state = '?';
		snprintf(res[k].wchan, sizeof res[k].wchan, "?");
	}
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		int k, code, pch, runs;
		double ms, cpu, at = -1;
		long rss;
		int forked = 0, early = 0;
		char st, w[64];
		if (sscanf(l, "stuck %d %c %63s", &k, &st, w) == 3 && k >= 0 && k < n) {
			res[k].state = st;
			snprintf(res[k].wchan, sizeof res[k].wchan, "%s", w);
			continue;
		}
		if (sscanf(l,
			   "step %d code %d ms %lf rss %ld pch %d runs %d cpu %lf fork %d at %lf "
			   "early %d",
			   &k, &code, &ms, &rss, &pch, &runs, &cpu, &forked, &at, &early) >= 7 &&
		    k >= 0 && k < n) {
			res[k].code = code;
			res[k].ms = ms;
			res[k].pch = pch;
			res[k].cpu_ms = cpu;
			res[k].forked = forked;
			res[k].early = early;
			res[k].at_ms = at;
		}
	}
	for (int k = 0; k < n; k++)
		if (res[k].code == -2)
			return -1;
	return 0;
}

/* A driver run that went wrong (not a phase: the driver itself): e says
 * so with the start of its output. Always -1. */
static int driver_failed(const struct util_run_result *rr, struct ka_err *e)
{
	char summary[300];
	util_log_summary(rr->out.s ? rr->out.s : "", summary, sizeof summary);
	return ka_err_set(e, "ka-cudaphases failed (status %d): %s", rr->code, summary);
}

/* ---- the precompiled prefix ---- */

/* The length of the prefix of cudafe++'s output (text) for the sentinel
 * source that every candidate shares: up to the line marker before the
 * sentinel's declaration. 0 when it is not found. */
static size_t prefix_len(const char *text)
{
	const char *s = strstr(text, SENTINEL);
	if (!s)
		return 0;
	for (const char *l = s; l > text; l--)
		if (l[-1] == '\n' && l[0] == '#' && l[1] == ' ')
			return (size_t)(l - text);
	return 0;
}

/* In the fresh folder tmp: the sentinel through cudafe++, the prefix of its
 * output as P.h, precompiled as P.h.gch by the host compile's own flags. 0,
 * or -1 with e. */
static int make_prefix(const struct cudaplan *p, const char *nvcc, const char *tmp, double limit_s,
		       struct ka_err *e)
{
	int fe = cudaplan_find(p, CUDAPHASE_CUDAFE), cc = cudaplan_find(p, CUDAPHASE_HOSTCC);
	uint64_t mem = jail_mem_limit(NULL);
	char *cu = xasprintf("%s/candidate.cu", tmp), *keep = xasprintf("%s/keep", tmp);
	char *mid = xasprintf("%s/%s", tmp, p->module_id_file);
	char *gen = xasprintf("%s/%s", tmp, p->ph[cc].input);
	char *hdr = xasprintf("%s/P.h", tmp), *gch = xasprintf("%s/P.h.gch", tmp);
	char *text = NULL, *out = NULL;
	size_t len = 0, pl = 0;
	struct util_run_result rr = {0};
	int rc = -1;
	const char *src = "static int " SENTINEL ";\n";
	if (util_write_file(cu, src, strlen(src), e) || util_mkdirs(keep, e) ||
	    util_write_file(mid, "_ka_pch_12_candidate_cu_0", 25, e))
		goto out;
	text = cudaplan_text(p, tmp, NULL, NULL, 1, mem, (int)limit_s, fe, e);
	if (!text || run_text(nvcc, tmp, "prefix.plan", text, NULL, NULL, limit_s, &rr, e))
		goto out;
	if (rr.code != 0 || util_read_file(gen, 256u << 20, &out, &len, e) ||
	    !(pl = prefix_len(out))) {
		ka_err_set(e, "the prefix source does not go through cudafe++ (status %d)",
			   rr.code);
		goto out;
	}
	free(text);
	util_run_result_free(&rr);
	text = cudaplan_pch_text(p, tmp, hdr, gch, mem, e);
	if (!text || util_write_file(hdr, out, pl, e) ||
	    run_text(nvcc, tmp, "gch.plan", text, NULL, NULL, limit_s, &rr, e))
		goto out;
	if (rr.code != 0 || access(gch, R_OK) != 0) {
		ka_err_set(e, "the prefix does not precompile (status %d)", rr.code);
		goto out;
	}
	rc = 0;
out:
	util_run_result_free(&rr);
	free(cu);
	free(keep);
	free(mid);
	free(gen);
	free(hdr);
	free(gch);
	free(text);
	free(out);
	return rc;
}

/* Build the prefix folder dir: in a fresh folder beside it, renamed into
 * place, so that concurrent builders (other ka processes) never see half of
 * one. 0 when dir holds a prefix afterwards, or -1 with e. */
static int build_prefix(const struct cudaplan *p, const char *nvcc, const char *dir, double limit_s,
			struct ka_err *e)
{
	char *tmp = xasprintf("%s.tmp-XXXXXX", dir);
	if (!mkdtemp(tmp)) {
		ka_err_set(e, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	int rc = make_prefix(p, nvcc, tmp, limit_s, e);
	if (rc == 0) {
		/* only P.h and P.h.gch stay */
		static const char *const junk[] = {"keep", "logs", NULL};
		for (int i = 0; junk[i]; i++) {
			char *j = xasprintf("%s/%s", tmp, junk[i]);
			util_rmtree(j);
			free(j);
		}
		DIR *d = opendir(tmp);
		for (struct dirent *de; d && (de = readdir(d));)
			if (de->d_name[0] != '.' && strncmp(de->d_name, "P.h", 3)) {
				char *j = xasprintf("%s/%s", tmp, de->d_name);
				unlink(j);
				free(j);
			}
		if (d)
			closedir(d);
		if (rename(tmp, dir) != 0 && errno != EEXIST && errno != ENOTEMPTY)
			rc = ka_err_set(e, "%s: %s", dir, strerror(errno));
	}
	util_rmtree(tmp);
	free(tmp);
	return rc;
}

/* The folder of the precompiled prefix for plan p (key) under cache_dir,
 * built on first use; NULL when there is none (the host compile then reads
 * all of cudafe++'s output: slower, the same result). Called with mu held. */
static const char *get_prefix(const struct cudaplan *p, uint64_t key, const char *nvcc,
			      const char *cache_dir, double limit_s)
{
	char real[PATH_MAX];
	if (!realpath(cache_dir, real))
		return NULL;
	uint64_t k = util_hash64(real, strlen(real), key);
	for (int i = 0; i < n_pchs; i++)
		if (pchs[i].key == k)
			return pchs[i].state > 0 ? pchs[i].dir : NULL;
	if (n_pchs == MAX_PCH)
		return NULL;
	struct pch_slot *s = &pchs[n_pchs++];
	s->key = k;
	snprintf(s->dir, sizeof s->dir, "%s/pch-%016llx", real, (unsigned long long)key);
	char *gch = xasprintf("%s/P.h.gch", s->dir);
	struct ka_err e;
	s->state =
		access(gch, R_OK) == 0 || build_prefix(p, nvcc, s->dir, limit_s, &e) == 0 ? 1 : -1;
	if (s->state < 0)
		fprintf(stderr, "ka: note: no precompiled prefix for the CUDA host compile: %s\n",
			e.msg);
	free(gch);
	return s->state > 0 ? s->dir : NULL;
}

/* ---- one compile ---- */

int cudasplit_prepare(char *const *nvcc_argv, const char *cache_dir, double limit_s,
		      struct ka_err *e)
{
	pthread_mutex_lock(&mu);
	const struct cudaplan *p = get_plan(nvcc_argv, cache_dir, e);
	if (p)
		get_prefix(p, argv_key(nvcc_argv), nvcc_argv[0], cache_dir, limit_s);
	pthread_mutex_unlock(&mu);
	return p ? 0 : -1;
}

void cudasplit_serve(char *const *nvcc_argv, const char *cache_dir)
{
	struct ka_err e;
	pthread_mutex_lock(&mu);
	const struct cudaplan *p = get_plan(nvcc_argv, cache_dir, &e);
	pthread_mutex_unlock(&mu);
	if (p)
		cudafork_start(p, nvcc_argv[0], driver_path(), cache_dir);
}

/* What fatbinary's --embedded-fatbin would have written, but naming the fat
 * binary by an outside symbol (fatbin.o defines it), and fatbin.s, which
 * puts the fat binary into .nv_fatbin as nvcc's own file does. */
static int write_fatbin_files(const struct cudaplan *p, const char *work, struct ka_err *e)
{
	static const char wrapper[] =
		"#ifndef __SKIP_INTERNAL_FATBINARY_HEADERS\n"
		"#include \"fatbinary_section.h\"\n"
		"#endif\n"
		"#define __CUDAFATBINSECTION  \".nvFatBinSegment\"\n"
		"#define __CUDAFATBINDATASECTION  \".nv_fatbin\"\n"
		"#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
		"extern const unsigned long long fatbinData[] "
		"__attribute__((visibility(\"hidden\")));\n"
		"#ifdef __cplusplus\n}\n#endif\n"
		"#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
		"static const __fatBinC_Wrapper_t __fatDeviceText __attribute__ ((aligned (8))) "
		"__attribute__ ((section (__CUDAFATBINSECTION)))= \n"
		"\t{ 0x466243b1, 1, fatbinData, 0 };\n"
		"#ifdef __cplusplus\n}\n#endif\n";
	if (strchr(p->fatbin, '"') || strchr(p->fatbin, '\\'))
		return ka_err_set(e, "fat binary path %s", p->fatbin);
	char *s = xasprintf("\t.section .nv_fatbin, \"a\"\n\t.align 8\n\t.globl fatbinData\n"
			    "\t.hidden fatbinData\n\t.type fatbinData, @object\nfatbinData:\n"
			    "\t.incbin \"%s\"\n\t.balign 8, 0\n\t.size fatbinData, .-fatbinData\n"
			    "\t.section .note.GNU-stack,\"\",@progbits\n",
			    p->fatbin);
	char *c_path = xasprintf("%s/%s", work, p->fatbin_c);
	char *s_path = xasprintf("%s/" CUDAPLAN_FATBIN_S, work);
	int rc = util_write_file(c_path, wrapper, strlen(wrapper), e) ||
				 util_write_file(s_path, s, strlen(s), e)
			 ? -1
			 : 0;
	free(s);
	free(c_path);
	free(s_path);
	return rc;
}

/* nvcc's log: the steps' logs in nvcc's order up to the first that failed
 * or did not run, capped at cap; sets rr->code. Returns the index of the
 * first step that failed or did not run (p->n when none). */
static int compose_log(const struct cudaplan *p, const char *work, const struct step_result *res,
		       size_t cap, struct util_run_result *rr)
{
	util_buf_init_cap(&rr->out, cap);
	util_buf_puts(&rr->out, "");
	rr->code = 0;
	for (int k = 0; k < p->n; k++) {
		if (res[k].code < 0)
			return k;
		char *path = xasprintf("%s/logs/%d.log", work, k), *t = NULL;
		size_t n = 0;
		if (util_read_file(path, cap + 1, &t, &n, NULL) == 0)
			util_buf_add(&rr->out, t, n);
		free(path);
		free(t);
		if (res[k].code != 0) {
			rr->code = res[k].code;
			return k;
		}
	}
	return p->n;
}

/* Remove the host compiler's assembler files (keep/ *.s) of a compile that
 * failed before the host compile in nvcc's order: nvcc would not have
 * written them, so the assembler scan must not see them. */
static void drop_host_asm(const char *work)
{
	char *keep = xasprintf("%s/keep", work);
	DIR *d = opendir(keep);
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (l > 2 && !strcmp(de->d_name + l - 2, ".s")) {
			char *f = xasprintf("%s/%s", keep, de->d_name);
			unlink(f);
			free(f);
		}
	}
	if (d)
		closedir(d);
	free(keep);
}

/* work/deps.d: one make rule holding every preprocessor run's dependencies
 * (deps-K.d, each "target: deps"). */
static void merge_deps(const struct cudaplan *p, const char *work)
{
	struct util_buf b;
	util_buf_init(&b);
	util_buf_puts(&b, "candidate.so:");
	for (int k = 0; k < p->n; k++) {
		char *path = xasprintf("%s/deps-%d.d", work, k), *t = NULL;
		size_t n = 0;
		if (p->ph[k].kind == CUDAPHASE_CPP &&
		    util_read_file(path, 1 << 22, &t, &n, NULL) == 0) {
			char *colon = strchr(t, ':');
			util_buf_puts(&b, " \\\n ");
			util_buf_puts(&b, colon ? colon + 1 : t);
		}
		free(path);
		free(t);
	}
	char *out = xasprintf("%s/deps.d", work);
	util_write_file(out, b.s, b.len, NULL);
	free(out);
	util_buf_free(&b);
}

static void fill_stats(const struct cudaplan *p, const struct step_result *res,
		       struct cudasplit_stats *st)
{
	memset(st, 0, sizeof *st);
	for (int k = 0; k < p->n && k < 24; k++) {
		st->phase_ms[k] = res[k].code >= 0 ? res[k].ms : -1;
		st->phase_cpu_ms[k] = res[k].code >= 0 ? res[k].cpu_ms : -1;
		st->phase_at_ms[k] = res[k].code >= 0 ? res[k].at_ms : -1;
		snprintf(st->phase_name[k], sizeof st->phase_name[k], "%s", p->ph[k].name);
		st->steps += res[k].code >= 0;
		st->pch |= res[k].pch;
		st->forked += res[k].forked;
		st->early += res[k].early;
	}
}

/* KA_CUDAC_TRACE: each phase's time on stderr. */
static void trace(const struct cudasplit_stats *st, int code)
{
	fprintf(stderr,
		"cudac split: status %d, precompiled prefix %s, %d steps forked, %d started "
		"early\n",
		code, st->pch ? "used" : "not used", st->forked, st->early);
	for (int k = 0; k < 24 && st->phase_name[k][0]; k++)
		fprintf(stderr, "  %-40s %8.1f ms wall %8.1f ms cpu, from %6.1f to %6.1f ms\n",
			st->phase_name[k], st->phase_ms[k], st->phase_cpu_ms[k], st->phase_at_ms[k],
			st->phase_at_ms[k] + st->phase_ms[k]);
	fprintf(stderr, "  driver run %.1f ms, split compile %.1f ms\n", st->driver_ms,
		st->total_ms);
}

/* Prepare work for plan p and run it (fork_dir: the fork servers' folder,
 * or NULL); 0 with the driver's run in drr. */
static int run_plan(const struct cudaplan *p, const char *nvcc, const char *work,
		    const char *module_id, const char *pch_dir, const char *fork_dir,
		    double limit_s, struct util_run_result *drr, struct ka_err *e)
{
	char *mid = xasprintf("%s/%s", work, p->module_id_file);
	char *hdr = pch_dir ? xasprintf("%s/P.h", pch_dir) : NULL;
	char *text = NULL;
	int rc = -1;
	if (util_write_file(mid, module_id, strlen(module_id), e) || write_fatbin_files(p, work, e))
		goto out;
	/* a second under ka's own limit, so that the driver kills its steps'
	 * process groups itself (ka's kill of its group would not reach them) */
	text = cudaplan_text(p, work, hdr, fork_dir, JOBS, jail_mem_limit(NULL), (int)limit_s - 1,
			     -1, e);
	if (text)
		rc = run_text(nvcc, work, "phases.plan", text, pch_dir, fork_dir, limit_s, drr, e);
out:
	free(mid);
	free(hdr);
	free(text);
	return rc;
}

int cudasplit_compile(char *const *nvcc_argv, const char *cache_dir, const char *work,
		      const char *module_id, double limit_s, size_t out_cap,
		      struct util_run_result *rr, struct cudasplit_stats *st, struct ka_err *e)
{
	memset(rr, 0, sizeof *rr);
	memset(st, 0, sizeof *st);
	double t0 = util_now();
	pthread_mutex_lock(&mu);
	const struct cudaplan *p = get_plan(nvcc_argv, cache_dir, e);
	const char *pch =
		p ? get_prefix(p, argv_key(nvcc_argv), nvcc_argv[0], cache_dir, limit_s) : NULL;
	pthread_mutex_unlock(&mu);
	if (!p)
		return -1;
	char fork_dir[PATH_MAX];
	int forks =
		cudafork_dir(p, nvcc_argv[0], driver_path(), cache_dir, fork_dir, sizeof fork_dir);
	struct util_run_result drr = {0};
	double t_drv = util_now();
	if (run_plan(p, nvcc_argv[0], work, module_id, pch, forks ? fork_dir : NULL, limit_s, &drr,
		     e))
		return -1;
	t_drv = util_now() - t_drv;
	struct step_result res[CUDAPLAN_MAX];
	int parsed = parse_results(drr.out.s, res, p->n);
	if (drr.code != 124 && (parsed || (drr.code != 0 && drr.code != 1))) {
		driver_failed(&drr, e);
		util_run_result_free(&drr);
		return -1;
	}
	if (parsed)
		for (int k = 0; k < p->n; k++)
			res[k].code = -1;
	int stop = compose_log(p, work, res, out_cap, rr);
	rr->out_truncated = rr->out.over;
	if (drr.code == 124) {
		rr->code = 124;
		for (int k = 0; !parsed && k < p->n; k++)
			if (res[k].code >= 128) /* killed at the deadline */
				util_buf_printf(&rr->out,
						"[at the time limit: %s had run %.1f s; state %c, "
						"waiting in %s]\n",
						p->ph[k].name, res[k].ms / 1000, res[k].state,
						res[k].wchan);
	}
	if (stop < cudaplan_find(p, CUDAPHASE_HOSTCC))
		drop_host_asm(work);
	merge_deps(p, work);
	fill_stats(p, res, st);
	st->driver_ms = t_drv * 1000;
	st->total_ms = (util_now() - t0) * 1000;
	if (getenv("KA_CUDAC_TRACE"))
		trace(st, rr->code);
	util_run_result_free(&drr);
	return 0;
}
