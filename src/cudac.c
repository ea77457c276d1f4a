/* cudac.c: compile a CUDA candidate for the recorder (see cudac.h).
 * Order of checks: #include lines (before anything runs), nvcc with fixed
 * flags in a private directory under a time limit, the compiler's own list of
 * files it read (-MD), the object's undefined dynamic symbols, and the
 * kernels' parameter layouts from the cubin. The cache holds the object (or
 * the compile log) under a key over the source, the arch, the flag string,
 * the nvcc version and the allowed libraries; the checks after compilation
 * run again on every hit, so a cache hit is judged by the current policy. */
#include "cudac.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "libc_allow.h"
#include "target.h"

#define KEEP_DIR "keep"

/* The fixed flags (besides -arch, -I, -MD/-MF, -o and the source). Part of
 * the cache key. --keep and -save-temps keep the host compiler's assembler
 * input (keep/candidate.s), which is scanned for file-reading directives. */
static const char *const nvcc_flags[] = {
	"-O3",	  "-std=c++17", "-cudart", "none",	 "-Xcompiler",	"-fPIC", "-shared",
	"--keep", "--keep-dir", KEEP_DIR,  "-Xcompiler", "-save-temps", NULL};

static void nvcc_argv(const char *nvcc, const char *archflag, char **argv);

/* ---- symbols ---- */

/* Symbols nvcc's host code imports for ordinary device code: the host stub
 * of a non-inline __device__ function is a body that calls exit (checked with
 * nvcc 13: `nm -D --undefined-only` of a .cu with one such function adds
 * exit and nothing else). Host code that calls exit itself is harmless: it
 * runs only in the recorder, whose process then ends without a plan
 * (record_error); the runner never runs host code (docs/grader.md). */
static int cudac_stub_symbol(const char *name)
{
	return !strcmp(name, "exit");
}

/* 0 if every undefined symbol of so is acceptable under libs; else 1 with
 * why naming the first one that is not. -1 with e if the file is unreadable. */
static int check_symbols(const char *so, const char *const *libs, char *why, size_t cap,
			 struct ka_err *e)
{
	struct elf_symlist l;
	struct ka_err pe;
	if (elf_dynsyms(so, &l, &pe)) {
		snprintf(why, cap, "the compiled object cannot be checked: %s", pe.msg);
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < l.n && !bad; i++) {
		const struct elf_sym *s = &l.s[i];
		if (s->defined)
			continue;
		switch (cudasym_classify(s->name)) {
		case CUDASYM_PROVIDED:
		case CUDASYM_CUDA: /* the recorder answers record_error naming it */ break;
		case CUDASYM_LIBRARY:
			if (!cudasym_in_list(cudasym_library(s->name), libs)) {
				snprintf(why, cap,
					 "host code calls %s: %s is not allowed by this "
					 "task's policy",
					 s->name, cudasym_library(s->name));
				bad = 1;
			}
			break;
		case CUDASYM_OTHER_CUDA:
			snprintf(why, cap, "host code calls %s: that CUDA library is not available",
				 s->name);
			bad = 1;
			break;
		case CUDASYM_OTHER:
			if (!libc_allow_has(s->name) && !cudac_stub_symbol(s->name)) {
				snprintf(why, cap,
					 "host code imports %s, which is not on the "
					 "allow-list (docs/cuda-target.md)",
					 s->name);
				bad = 1;
			}
			break;
		}
	}
	elf_symlist_free(&l);
	(void)e;
	return bad;
}

/* ---- includes ---- */

static const char *const std_headers[] = {
	"assert.h", "float.h",		"limits.h", "math.h",	"stdbool.h",  "stddef.h",
	"stdint.h", "stdio.h",		"stdlib.h", "string.h", "inttypes.h", "stdalign.h",
	"stdarg.h", "cstdint",		"cstddef",  "cmath",	"cstdio",     "cstdlib",
	"cstring",  "climits",		"cfloat",   "cassert",	"cinttypes",  "type_traits",
	"utility",  "algorithm",	"limits",   "array",	"tuple",      "functional",
	"numeric",  "initializer_list", "new",	    "cstdarg",	NULL,
};

static const char *const cuda_headers[] = {
	"cuda_runtime.h",
	"cuda_runtime_api.h",
	"cuda.h",
	"cudaTypedefs.h",
	"cuda_fp16.h",
	"cuda_bf16.h",
	"cuda_fp8.h",
	"cuda_fp6.h",
	"cuda_fp4.h",
	"mma.h",
	"cuda_pipeline.h",
	"cuda_pipeline_primitives.h",
	"cuda_awbarrier.h",
	"cuda_awbarrier_primitives.h",
	"cooperative_groups.h",
	"vector_types.h",
	"vector_functions.h",
	"device_launch_parameters.h",
	"math_constants.h",
	"cuda_occupancy.h",
	"ka_kernel.h",
	NULL,
};

static const char *const cublas_headers[] = {"cublas_v2.h", "cublas_api.h", NULL};
static const char *const cublaslt_headers[] = {"cublasLt.h", NULL};
static const char *const cudnn_headers[] = {"cudnn.h", NULL};

/* "cuda/barrier", "cuda/std/cstdint", "cooperative_groups/reduce.h": one or two
 * components of lower-case letters, digits and '_' (a final ".h" allowed). */
static int cuda_subdir_header(const char *name)
{
	const char *rest = NULL;
	if (!strncmp(name, "cuda/std/", 9))
		rest = name + 9;
	else if (!strncmp(name, "cuda/", 5))
		rest = name + 5;
	else if (!strncmp(name, "cooperative_groups/", 19))
		rest = name + 19;
	if (!rest || !*rest)
		return 0;
	size_t n = strlen(rest);
	if (n > 2 && !strcmp(rest + n - 2, ".h"))
		n -= 2;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)rest[i]) || isdigit((unsigned char)rest[i]) ||
		      rest[i] == '_'))
			return 0;
	return 1;
}

/* The headers a CUDA candidate may include under the task's libraries
 * (libs: NULL-terminated "cublas", "cublasLt", "cudnn", or NULL). */
static int header_allowed(const char *name, const void *ctx)
{
	const char *const *libs = ctx;
	if (cudasym_in_list(name, std_headers) || cudasym_in_list(name, cuda_headers) ||
	    cuda_subdir_header(name))
		return 1;
	if (cudasym_in_list("cublas", libs) && cudasym_in_list(name, cublas_headers))
		return 1;
	if (cudasym_in_list("cublasLt", libs) && cudasym_in_list(name, cublaslt_headers))
		return 1;
	if (cudasym_in_list("cudnn", libs) && (cudasym_in_list(name, cudnn_headers) ||
					       (!strncmp(name, "cudnn_", 6) && !strchr(name, '/'))))
		return 1;
	return 0;
}

int cudac_check_includes(const char *text, size_t text_len, const char *const *libs, char *why,
			 size_t cap)
{
	return target_check_includes(text, text_len, header_allowed, libs, why, cap);
}

/* ---- nvcc ---- */

/* Where nvcc is: the given path, else $CUDA_HOME/bin, $PATH, /usr/local/cuda.
 * The search runs once per process, under a lock: compile threads (the
 * capability track's compile-ahead pool) call this concurrently. */
static const char *search_nvcc(char *path, size_t cap);

static const char *find_nvcc(const char *given)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char path[PATH_MAX];
	static const char *found;
	static int done;
	if (given && *given)
		return given;
	pthread_mutex_lock(&mu);
	if (!done) {
		found = search_nvcc(path, sizeof path);
		done = 1;
	}
	pthread_mutex_unlock(&mu);
	return found;
}

static const char *search_nvcc(char *path, size_t cap)
{
	const char *home = getenv("CUDA_HOME");
	if (home && *home) {
		snprintf(path, cap, "%s/bin/nvcc", home);
		if (access(path, X_OK) == 0)
			return path;
	}
	const char *pathenv = getenv("PATH");
	if (pathenv) {
		char *dup = xstrdup(pathenv), *save = NULL;
		for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(path, cap, "%s/nvcc", d);
			if (access(path, X_OK) == 0) {
				free(dup);
				return path;
			}
		}
		free(dup);
	}
	if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		return "/usr/local/cuda/bin/nvcc";
	return NULL;
}

static void nvcc_version_read(const char *nvcc, char *version, size_t cap);

const char *cudac_nvcc_version(const char *nvcc)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char version[128];
	static int done;
	pthread_mutex_lock(&mu);
	if (!done) {
		nvcc_version_read(find_nvcc(nvcc), version, sizeof version);
		done = 1;
	}
	pthread_mutex_unlock(&mu);
	return version[0] ? version : NULL;
}

/* "release X.Y, VX.Y.Z" from `nvcc --version` into version ("" if none). */
static void nvcc_version_read(const char *nvcc, char *version, size_t cap)
{
	if (!nvcc)
		return;
	char *argv[] = {(char *)nvcc, "--version", NULL};
	char *out = NULL;
	struct ka_err e;
	int st = util_run(argv, NULL, 30, 4096, &out, NULL, NULL, &e);
	if (st == 0 && out) {
		const char *r = strstr(out, "release ");
		if (r) {
			size_t n = strcspn(r, "\n");
			if (n >= cap)
				n = cap - 1;
			memcpy(version, r, n);
			version[n] = 0;
		}
	}
	free(out);
}

const char *cudac_compiler(const struct cudac_opts *o, struct ka_err *e)
{
	const char *c = o && o->compiler ? o->compiler : getenv("KA_CUDA_COMPILER");
	if (!c || !*c || !strcmp(c, "split"))
		return "split";
	if (!strcmp(c, "nvcc"))
		return "nvcc";
	ka_err_set(e, "unknown CUDA compiler '%s' (KA_CUDA_COMPILER: split or nvcc)", c);
	return NULL;
}

/* Whether this compile takes the split path: selected and usable. When it
 * is selected but cannot be used (no ka-cudaphases, an nvcc whose phases it
 * does not know), it says so once and nvcc compiles. */
static int use_split(const char *compiler, const char *nvcc, const struct cudac_opts *o,
		     double limit)
{
	static int told;
	if (strcmp(compiler, "split"))
		return 0;
	char *archflag = xasprintf("-arch=%s", o->arch);
	char *argv[32];
	nvcc_argv(nvcc, archflag, argv);
	struct ka_err e;
	int ok = cudasplit_prepare(argv, o->cache_dir, limit, &e) == 0;
	if (!ok && !__atomic_exchange_n(&told, 1, __ATOMIC_SEQ_CST))
		fprintf(stderr, "ka: note: %s; compiling with nvcc\n", e.msg);
	free(archflag);
	return ok;
}

static int arch_ok(const char *arch)
{
	if (!arch || strncmp(arch, "sm_", 3) || !isdigit((unsigned char)arch[3]))
		return 0;
	const char *p = arch + 3;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == 'a' || *p == 'f')
		p++;
	return *p == 0 && p - arch < 12;
}

static uint64_t cache_key(const char *src, size_t len, const struct cudac_opts *o,
			  const char *version, const char *compiler)
{
	uint64_t h = util_hash64(src, len, 0xc0dac);
	if (strcmp(compiler, "nvcc")) /* nvcc's keys are the ones from before the split path */
		h = util_hash64(compiler, strlen(compiler) + 1, h);
	h = util_hash64(o->arch, strlen(o->arch), h);
	for (int i = 0; nvcc_flags[i]; i++)
		h = util_hash64(nvcc_flags[i], strlen(nvcc_flags[i]) + 1, h);
	h = util_hash64(version, strlen(version), h);
	/* Library list, order-independent. */
	uint64_t libs = 0;
	for (int i = 0; o->libs && o->libs[i]; i++)
		libs ^= util_hash64(o->libs[i], strlen(o->libs[i]), 7);
	return util_mix64(h ^ libs);
}

void cudac_result_free(struct cudac_result *r)
{
	if (!r)
		return;
	free(r->so_path);
	elf_kernels_free(&r->kernels);
	memset(r, 0, sizeof *r);
}

/* Checks after a successful compile (and on every cache hit). */
static void post_checks(const char *so, const struct cudac_opts *o, struct cudac_result *r)
{
	char why[1024];
	struct ka_err e;
	if (check_symbols(so, o->libs, why, sizeof why, &e)) {
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "%s", why);
		return;
	}
	uint8_t *fb = NULL;
	size_t fbl = 0;
	if (elf_section(so, ".nv_fatbin", &fb, &fbl, &e) ||
	    elf_fatbin_kernels(fb, fbl, &r->kernels, &e)) {
		/* nvcc made this object, so an unreadable fat binary means the
		 * source bent the output (e.g. a hand-made section). */
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "the object's device code cannot be read: %s",
			 e.msg);
		free(fb);
		return;
	}
	free(fb);
	r->verdict = VERDICT_OK;
	r->so_path = xstrdup(so);
}

/* 1 with r filled when the cache holds the object (judged again by
 * post_checks) or the compile log for this key; else 0. */
static int cache_lookup(const char *so, const char *errf, const struct cudac_opts *o,
			struct cudac_result *r)
{
	if (access(so, R_OK) == 0) {
		r->cached = 1;
		post_checks(so, o, r);
		return 1;
	}
	char *cached_log = NULL;
	size_t cl = 0;
	if (util_read_file(errf, sizeof r->detail - 1, &cached_log, &cl, NULL) != 0)
		return 0;
	r->cached = 1;
	r->verdict = VERDICT_COMPILE_ERROR;
	snprintf(r->detail, sizeof r->detail, "%s", cached_log);
	free(cached_log);
	return 1;
}

/* Fills the new directory work with candidate.cu, include/ka_kernel.h and an
 * empty keep directory; 0, or -1 with e. */
static int make_workdir(const char *work, const char *src, size_t len, const struct cudac_opts *o,
			struct ka_err *e)
{
	char *hdr_src = o->include_dir ? xasprintf("%s/ka_kernel.h", o->include_dir)
				       : xasprintf("%s/include/ka_kernel.h", util_data_root());
	char *hdr = NULL;
	size_t hl = 0;
	char *inc = xasprintf("%s/include", work);
	char *keep = xasprintf("%s/" KEEP_DIR, work);
	char *hdr_dst = xasprintf("%s/ka_kernel.h", inc);
	char *cu = xasprintf("%s/candidate.cu", work);
	int setup = util_read_file(hdr_src, 1 << 20, &hdr, &hl, e) || util_mkdirs(inc, e) ||
		    util_mkdirs(keep, e) || util_write_file(hdr_dst, hdr, hl, e) ||
		    util_write_file(cu, src, len, e);
	free(keep);
	free(hdr);
	free(hdr_src);
	free(hdr_dst);
	free(inc);
	free(cu);
	return setup ? -1 : 0;
}

/* nvcc's command line for work/candidate.cu (argv: 32 entries), with the
 * fixed flags; archflag is "-arch=<arch>" (the caller frees it). */
static void nvcc_argv(const char *nvcc, const char *archflag, char **argv)
{
	int a = 0;
	argv[a++] = (char *)nvcc;
	for (int i = 0; nvcc_flags[i]; i++)
		argv[a++] = (char *)nvcc_flags[i];
	argv[a++] = (char *)archflag;
	argv[a++] = "-Iinclude";
	argv[a++] = "-MD";
	argv[a++] = "-MF";
	argv[a++] = "deps.d";
	argv[a++] = "-o";
	argv[a++] = "candidate.so";
	argv[a++] = "candidate.cu";
	argv[a] = NULL;
}

/* Compiles work/candidate.cu under limit seconds and sets r->seconds: one
 * nvcc run in the compiler jail, or (split) nvcc's phases through
 * cudasplit.c, whose outcome reads the same (rr->code, the log in rr->out,
 * candidate.so, deps.d, keep/ *.s). 0 with rr filled (the caller frees
 * it), or -1 with e. */
static int run_compiler(const char *nvcc, const char *work, const char *src, size_t len,
			const struct cudac_opts *o, int split, double limit, struct cudac_result *r,
			struct util_run_result *rr, struct ka_err *e)
{
	char *archflag = xasprintf("-arch=%s", o->arch);
	char *argv[32];
	nvcc_argv(nvcc, archflag, argv);
	double t0 = util_now();
	int ran = -1;
	if (split) {
		char mid[64];
		cudasplit_module_id(util_hash64(src, len, 0x1d), mid, sizeof mid);
		ran = cudasplit_compile(argv, o->cache_dir, work, mid, limit, CUDAC_MAX_LOG, rr,
					&r->stats, e);
		r->split = 1;
	} else {
		struct jail_opts jo;
		struct util_run_opts ro = {
			.timeout_s = limit, .out_cap = CUDAC_MAX_LOG, .merge_err = 1, .jail = &jo};
		if (jail_opts_compiler(&jo, nvcc, work, limit, e) == 0)
			ran = util_run_child(argv, &ro, rr, e);
	}
	r->seconds = util_now() - t0;
	free(archflag);
	return ran ? -1 : 0;
}

/* For nvcc's nonzero exit status st (124: over limit): removes work, frees rr
 * and sets COMPILE_ERROR with the escaped log, cached in errf unless a
 * timeout; 0, or -1 with e when the cache's disk is short of space. */
static int nvcc_failed(int st, double limit, const char *work, const char *errf,
		       const struct cudac_opts *o, struct util_run_result *rr,
		       struct cudac_result *r, struct ka_err *e)
{
	util_rmtree(work);
	if (st != 124 && jail_check_space(o->cache_dir, e)) {
		util_run_result_free(rr);
		return -1;
	}
	size_t dl = 0;
	if (st == 124)
		dl = (size_t)snprintf(r->detail, sizeof r->detail,
				      "nvcc ran over its time limit of %.0f s\n", limit);
	jail_log_escape(rr->out.s, rr->out.len, r->detail + dl, sizeof r->detail - dl);
	if (rr->out_truncated)
		snprintf(r->detail + strlen(r->detail), sizeof r->detail - strlen(r->detail),
			 "\n[log truncated]");
	util_run_result_free(rr);
	r->verdict = VERDICT_COMPILE_ERROR;
	/* Cache the failure, but not a timeout (it may be load) nor a death by
	 * SIGKILL or a stop signal (the OOM killer, a job's end): the next
	 * grade compiles again. */
	if (st != 124 && !util_code_outside_death(st))
		util_write_file(errf, r->detail, strlen(r->detail), NULL);
	return 0;
}

/* 0 if work/deps.d names only files under work, the toolkit of nvcc, its
 * include directory, /usr/include and /usr/lib/gcc; else nonzero with why. */
static int check_deps(const char *nvcc, const char *work, char *why, size_t cap)
{
	char *cuda_root = realpath(nvcc, NULL); /* .../bin/nvcc -> toolkit root */
	char *cuda_dir = NULL;
	if (cuda_root) {
		char *slash = strrchr(cuda_root, '/');
		if (slash)
			*slash = 0;
		slash = strrchr(cuda_root, '/');
		if (slash)
			*slash = 0;
		char *inc_dir = xasprintf("%s/include", cuda_root);
		cuda_dir = realpath(inc_dir, NULL);
		free(inc_dir);
	}
	const char *dirs[] = {cuda_root ? cuda_root : "/nonexistent",
			      cuda_dir ? cuda_dir : "/nonexistent", "/usr/include", "/usr/lib/gcc",
			      NULL};
	char *deps = xasprintf("%s/deps.d", work);
	int deps_bad = target_check_deps(deps, work, dirs, why, cap);
	free(deps);
	free(cuda_root);
	free(cuda_dir);
	return deps_bad;
}

/* The checks before anything runs: the architecture (-1 with e when bad),
 * the size (compile_error) and the #include lines and file-reading
 * directives (forbidden): 0 with r's verdict set, or 1 to go on. */
static int pre_checks(const char *src, size_t len, const struct cudac_opts *o,
		      struct cudac_result *r, struct ka_err *e)
{
	char why[1024];
	if (!arch_ok(o->arch))
		return ka_err_set(e, "cudac: bad architecture '%s'", o->arch ? o->arch : "(null)");
	if (len > CUDAC_MAX_SOURCE) {
		r->verdict = VERDICT_COMPILE_ERROR;
		snprintf(r->detail, sizeof r->detail, "source is %zu bytes, over the cap of %u",
			 len, CUDAC_MAX_SOURCE);
		return 0;
	}
	if (cudac_check_includes(src, len, o->libs, why, sizeof why) ||
	    jail_check_source_text(src, len, why, sizeof why)) {
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "%s", why);
		return 0;
	}
	return 1;
}

int cudac_compile(const char *src, size_t len, const struct cudac_opts *o, struct cudac_result *r,
		  struct ka_err *e)
{
	memset(r, 0, sizeof *r);
	char why[1024];
	int pre = pre_checks(src, len, o, r, e);
	if (pre <= 0)
		return pre;
	const char *nvcc = find_nvcc(o->nvcc);
	const char *version = nvcc ? cudac_nvcc_version(nvcc) : NULL;
	const char *compiler = cudac_compiler(o, e);
	if (!compiler)
		return -1;
	if (!nvcc || !version)
		return ka_err_set(e, "cudac: nvcc not found or not runnable");
	if (util_mkdirs(o->cache_dir, e))
		return -1;
	double limit = o->timeout_s > 0 ? o->timeout_s : CUDAC_TIMEOUT_S;
	int split = use_split(compiler, nvcc, o, limit);
	uint64_t key = cache_key(src, len, o, version, split ? "split" : "nvcc");
	r->split = split;
	char *so = xasprintf("%s/cu-%016llx.so", o->cache_dir, (unsigned long long)key);
	char *errf = xasprintf("%s/cu-%016llx.err", o->cache_dir, (unsigned long long)key);
	char *work = NULL;
	int rc = -1;
	if (cache_lookup(so, errf, o, r)) {
		rc = 0;
		goto out;
	}
	/* A private directory holding only the source and include/ka_kernel.h. */
	work = xasprintf("%s/tmp-XXXXXX", o->cache_dir);
	if (!mkdtemp(work)) {
		ka_err_set(e, "%s: %s", work, strerror(errno));
		goto out;
	}
	if (make_workdir(work, src, len, o, e))
		goto out;
	struct util_run_result rr;
	if (run_compiler(nvcc, work, src, len, o, split, limit, r, &rr, e))
		goto out;
	int st = rr.code;
	/* The host compiler's assembler input (kept even when the compile
	 * failed, for instance because the jail hid the file a directive
	 * named): directives that read files, in whatever form the source
	 * built them, are forbidden whatever happened next. */
	char *kdir = xasprintf("%s/" KEEP_DIR, work);
	int asm_bad = st == 124 ? 0 : jail_check_asm_dir(kdir, why, sizeof why);
	free(kdir);
	if (asm_bad > 0) {
		util_run_result_free(&rr);
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "%s", why);
		rc = 0;
		goto out;
	}
	if (st != 0) {
		rc = nvcc_failed(st, limit, work, errf, o, &rr, r, e);
		goto out;
	}
	util_run_result_free(&rr);
	if (asm_bad < 0) {
		ka_err_set(e, "cudac: %s", why); /* nvcc did not keep it: ours */
		goto out;
	}
	if (check_deps(nvcc, work, why, sizeof why)) {
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "%s", why);
		rc = 0;
		goto out;
	}
	/* The host object as the compiler left it, before either linker (nvcc's
	 * ld.bfd, the split path's gold) made anything of it. */
	char *obj = xasprintf("%s/" KEEP_DIR "/candidate.o", work);
	struct ka_err oe;
	int obj_bad = elf_check_object(obj, &oe);
	free(obj);
	if (obj_bad) {
		r->verdict = VERDICT_FORBIDDEN;
		snprintf(r->detail, sizeof r->detail, "the host object: %s", oe.msg);
		rc = 0;
		goto out;
	}
	char *built = xasprintf("%s/candidate.so", work);
	if (target_object_too_big(built, why, sizeof why)) {
		/* Not kept: the cache holds its verdict, not its bytes. */
		free(built);
		r->verdict = VERDICT_COMPILE_ERROR;
		snprintf(r->detail, sizeof r->detail, "%s", why);
		util_write_file(errf, r->detail, strlen(r->detail), NULL);
		rc = 0;
		goto out;
	}
	int mv = rename(built, so);
	free(built);
	if (mv != 0) {
		ka_err_set(e, "%s: cannot store the compiled candidate: %s", so, strerror(errno));
		goto out;
	}
	post_checks(so, o, r);
	rc = 0;
out:
	if (work && !getenv("KA_CUDAC_KEEP"))
		util_rmtree(work);
	else if (work)
		fprintf(stderr, "cudac: kept %s\n", work);
	free(work);
	free(so);
	free(errf);
	return rc;
}

/* Report candidate i, and every later duplicate of it, as compiled. */
static void ahead_done(int i, int n, const int *dup_of, cudac_done_fn done, void *arg)
{
	if (!done)
		return;
	done(i, arg);
	for (int j = i + 1; j < n; j++)
		if (dup_of[j] == i)
			done(j, arg);
}

int cudac_compile_ahead(int n, const char *const *srcs, const size_t *lens,
			const struct cudac_opts *o, int jobs, int first_jobs, int first_n,
			cudac_done_fn done, void *arg)
{
	if (jobs <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? (int)c : 1;
	}
	if (first_n <= 0 || first_jobs <= 0 || first_jobs > jobs)
		first_jobs = jobs;
	/* The split path's plan and precompiled prefix, made once here rather
	 * than in every child. */
	const char *nvcc = find_nvcc(o->nvcc), *compiler = cudac_compiler(o, NULL);
	if (nvcc && compiler && n > 1 && util_mkdirs(o->cache_dir, NULL) == 0 &&
	    use_split(compiler, nvcc, o, o->timeout_s > 0 ? o->timeout_s : CUDAC_TIMEOUT_S)) {
		/* and its fork servers, which the children's compiles use */
		char *archflag = xasprintf("-arch=%s", o->arch), *argv[32];
		nvcc_argv(nvcc, archflag, argv);
		cudasplit_serve(argv, o->cache_dir);
		free(archflag);
	}
	/* Children compile into the cache, one per distinct source, in order,
	 * at most jobs at a time; each is reported as it ends. */
	uint64_t *h = xcalloc((size_t)(n ? n : 1), sizeof *h);
	pid_t *pid = xcalloc((size_t)(n ? n : 1), sizeof *pid);
	int *dup_of = xcalloc((size_t)(n ? n : 1), sizeof *dup_of);
	for (int i = 0; i < n; i++) {
		h[i] = util_hash64(srcs[i], lens[i], 1);
		dup_of[i] = -1;
		for (int j = 0; j < i && dup_of[i] < 0; j++)
			if (dup_of[j] < 0 && h[j] == h[i] && lens[j] == lens[i] &&
			    !memcmp(srcs[j], srcs[i], lens[i]))
				dup_of[i] = j;
	}
	/* ended: distinct sources compiled so far; the width is first_jobs
	 * until first_n of them have ended, then jobs. */
	int running = 0, ended = 0;
	for (int i = 0; i <= n; i++) {
		while (running > 0 &&
		       (running >= (ended < first_n ? first_jobs : jobs) || i == n)) {
			int st;
			pid_t w = waitpid(-1, &st, 0);
			if (w < 0 && errno == EINTR)
				continue;
			running--;
			for (int j = 0; w > 0 && j < i; j++)
				if (pid[j] == w) {
					ended++;
					ahead_done(j, n, dup_of, done, arg);
				}
		}
		if (i == n)
			break;
		if (dup_of[i] >= 0)
			continue;
		fflush(NULL);
		pid[i] = n > 1 && jobs > 1 ? fork() : -1;
		if (pid[i] == 0) {
			struct cudac_result cr;
			struct ka_err ce;
			int x = cudac_compile(srcs[i], lens[i], o, &cr, &ce);
			cudac_result_free(&cr);
			_exit(x ? 1 : 0);
		}
		if (pid[i] > 0) {
			running++;
		} else { /* one at a time (or fork failed): here */
			struct cudac_result cr;
			struct ka_err ce;
			cudac_compile(srcs[i], lens[i], o, &cr, &ce);
			cudac_result_free(&cr);
			ended++;
			ahead_done(i, n, dup_of, done, arg);
		}
	}
	free(h);
	free(pid);
	free(dup_of);
	return 0;
}

int cudac_compile_many(int n, const char *const *srcs, const size_t *lens,
		       const struct cudac_opts *o, int jobs, struct cudac_result *r, int *rc,
		       struct ka_err *e)
{
	/* Phase 1: children compile into the cache (one per distinct source).
	 * Phase 2: this process reads every result from the cache, so results
	 * need no transport and identical sources share one nvcc run. */
	if (n > 1 && jobs != 1)
		cudac_compile_ahead(n, srcs, lens, o, jobs, 0, 0, NULL, NULL);
	int all = 0;
	for (int i = 0; i < n; i++) {
		rc[i] = cudac_compile(srcs[i], lens[i], o, &r[i], &e[i]);
		if (rc[i])
			all = -1;
	}
	return all;
}

json_t *cudac_kernels_json(const struct elf_kernels *ks)
{
	json_t *arr = json_array();
	for (int i = 0; ks && i < ks->n; i++) {
		const struct elf_kernel *k = &ks->k[i];
		json_t *ps = json_array();
		for (int p = 0; p < k->n_params; p++)
			json_array_append_new(ps, json_pack("{s:i,s:i}", "offset",
							    (int)k->params[p].offset, "size",
							    (int)k->params[p].size));
		json_array_append_new(
			arr, json_pack("{s:s,s:o,s:i,s:i,s:I,s:I,s:I,s:i}", "name", k->name,
				       "params", ps, "param_bytes", (int)k->param_bytes, "num_regs",
				       k->num_regs, "static_smem", (json_int_t)k->static_smem,
				       "local_bytes", (json_int_t)k->local_bytes, "const_bytes",
				       (json_int_t)k->const_bytes, "max_threads", k->max_threads));
	}
	return arr;
}
