/* target_cuda.c: the CUDA target. A candidate is one .cu file: kernels plus
 * the extern "C" host entry point ka_launch (include/ka_kernel.h). cudac.c
 * compiles it with fixed nvcc flags into a shared object (includes and
 * imported symbols checked); the recorder runs its host code with the
 * recording CUDA runtime; the runner loads only its fat binary. The trusted
 * baselines are the task's eager.cu and compiled.cu, compiled here as native
 * libraries that the runner calls directly (bank code, allowed cuBLAS). */
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudac.h"
#include "devgold.h"
#include "jail.h"
#include "plan.h"

/* The architecture to compile for: what the runner reported ("sm_90a" on
 * Hopper), else sm_90a. */
static const char *device_arch(const json_t *device)
{
	const char *a = json_string_value(json_object_get(device, "arch"));
	return a && *a ? a : "sm_90a";
}

/* The compile options for task t on device (libs points into the caller's
 * array of at least KA_MAX_LIBS + 1 entries). */
static struct cudac_opts cuda_opts(const struct ka_task *t, const json_t *device, const char *cache,
				   const char **libs)
{
	for (int i = 0; i < t->n_libs; i++)
		libs[i] = !strcmp(t->libs[i], "cublaslt") ? "cublasLt" : t->libs[i];
	libs[t->n_libs] = NULL;
	struct cudac_opts o = {.arch = device_arch(device), .cache_dir = cache, .libs = libs};
	return o;
}

static int cuda_precompile(const struct ka_task *t, int n, const char *const *srcs,
			   const size_t *lens, const char *workdir, const json_t *device,
			   const struct target_width *w, void (*done)(int i, void *arg), void *arg,
			   struct ka_err *e)
{
	(void)e;
	const char *libs[KA_MAX_LIBS + 1];
	char *cache = xasprintf("%s/cuda", workdir);
	struct cudac_opts o = cuda_opts(t, device, cache, libs);
	int rc = cudac_compile_ahead(n, srcs, lens, &o, w->jobs, w->first_jobs, w->first_n, done,
				     arg);
	free(cache);
	return rc;
}

static int cuda_compile(const struct ka_task *t, const char *src, size_t len, const char *workdir,
			const json_t *device, struct target_compiled *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	const char *libs[KA_MAX_LIBS + 1];
	char *cache = xasprintf("%s/cuda", workdir);
	struct cudac_opts o = cuda_opts(t, device, cache, libs);
	struct cudac_result r;
	memset(&r, 0, sizeof r);
	int rc = cudac_compile(src, len, &o, &r, e);
	free(cache);
	if (rc) {
		cudac_result_free(&r);
		return -1;
	}
	out->verdict = r.verdict;
	snprintf(out->detail, sizeof out->detail, "%.4000s", r.detail);
	if (r.verdict == VERDICT_OK) {
		out->so_path = xstrdup(r.so_path);
		out->module = xstrdup(r.so_path);
		/* The recorder answers attribute queries with the real kernels'
		 * layouts: give it the device description with them inside. */
		json_t *dev = json_deep_copy(device);
		json_t *cu = json_object_get(dev, "cuda");
		if (!json_is_object(cu)) {
			cu = json_object();
			json_object_set_new(dev, "cuda", cu);
		}
		json_object_set_new(cu, "kernels", cudac_kernels_json(&r.kernels));
		/* The libraries the policy allows: the recorder provides their
		 * recorded entry points (cuBLAS) to this candidate only. */
		json_t *jl = json_array();
		for (int i = 0; libs[i]; i++)
			json_array_append_new(jl, json_string(libs[i]));
		out->record_extra = json_pack("{s:o,s:o}", "device", dev, "libraries", jl);
	}
	cudac_result_free(&r);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The bank's baseline library (bank/lib): the first ancestor of the task
 * folder holding lib/eager.cuh. Returns "<ancestor>/lib" (caller frees), or
 * NULL when there is none (a task outside a bank: no library, no -I). */
static char *bank_lib_dir(const char *task_dir)
{
	char *d = xasprintf("%s", task_dir);
	for (int depth = 0; depth < 16; depth++) {
		char *probe = xasprintf("%s/lib/eager.cuh", d);
		int found = access(probe, R_OK) == 0;
		free(probe);
		if (found) {
			char *lib = xasprintf("%s/lib", d);
			char *real = realpath(lib, NULL); /* a jail binds it by this path */
			free(lib);
			free(d);
			return real;
		}
		char *up = xasprintf("%s/..", d);
		free(d);
		d = up;
	}
	free(d);
	return NULL;
}

/* The baseline library's headers (every .cuh file in lib) folded into hash h, in a fixed
 * order, so that editing the library rebuilds every baseline. Returns 0, or
 * -1 with e when a header cannot be read. */
static int hash_lib(const char *lib, uint64_t *h, struct ka_err *e)
{
	DIR *dp = opendir(lib);
	if (!dp)
		return ka_err_set(e, "%s: %s", lib, strerror(errno));
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l > 4 && strcmp(de->d_name + l - 4, ".cuh") == 0 && n < 256) {
			names = xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = xasprintf("%s", de->d_name);
		}
	}
	closedir(dp);
	if (n > 1)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *p = xasprintf("%s/%s", lib, names[i]);
		char *src = NULL;
		size_t len = 0;
		if (rc == 0 && util_read_file(p, 1 << 20, &src, &len, e) == 0) {
			*h = util_hash64(names[i], strlen(names[i]), *h);
			*h = util_hash64(src, len, *h);
		} else {
			rc = -1;
		}
		free(src);
		free(p);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Compile a trusted baseline (bank code) as a native library, with
 * -I<bank>/lib when the bank has a baseline library; cached by the hash of
 * the source, the architecture and the library's headers. Returns the .so
 * path (caller frees) or NULL with e. */
static char *build_native(const struct ka_task *t, const char *file, const char *arch,
			  const char *workdir, struct ka_err *e)
{
	/* Absolute paths: nvcc runs jailed with its own work folder as cwd. */
	char *rel = xasprintf("%s/%s", t->dir, file);
	char *path = realpath(rel, NULL);
	char *src = NULL;
	size_t len = 0;
	if (!path) {
		ka_err_set(e, "%s: %s", rel, strerror(errno));
		free(rel);
		return NULL;
	}
	free(rel);
	if (util_read_file(path, 1 << 20, &src, &len, e)) {
		free(path);
		return NULL;
	}
	uint64_t h = util_hash64(src, len, util_hash64(arch, strlen(arch), 0xba5e));
	free(src);
	char *lib = bank_lib_dir(t->dir);
	if (lib && hash_lib(lib, &h, e)) {
		free(lib);
		free(path);
		return NULL;
	}
	char *libinc = lib ? xasprintf("-I%s", lib) : xasprintf("-I%s/include", util_data_root());
	char *dir = xasprintf("%s/baseline", workdir);
	char *so = xasprintf("%s/%s-%016llx.so", dir, t->name, (unsigned long long)h);
	if (access(so, R_OK) == 0) {
		free(lib);
		free(libinc);
		free(dir);
		free(path);
		return so;
	}
	/* A private folder per build (several threads or processes may build
	 * the same baseline); nvcc runs jailed in it: trusted bank code, but
	 * the jail costs little and bounds its memory too. */
	char *work = xasprintf("%s/build-XXXXXX", dir);
	char tmp[4096] = ""; /* <work>/baseline.so, once mkdtemp has named work */
	char *archflag = xasprintf("-arch=%s", arch);
	char *inc = xasprintf("-I%s/include", util_data_root());
	const char *nvcc = getenv("NVCC");
	char *argv[] = {(char *)(nvcc && *nvcc ? nvcc : "nvcc"),
			"-O3",
			"-std=c++17",
			archflag,
			"-shared",
			"-Xcompiler",
			"-fPIC",
			inc,
			libinc,
			"-o",
			tmp,
			path,
			"-lcublas",
			"-lcublasLt",
			NULL};
	struct jail_opts jo;
	struct util_run_result rr = {0};
	struct util_run_opts ro = {.timeout_s = 300, .out_cap = 16384, .merge_err = 1, .jail = &jo};
	int st = -1;
	if (util_mkdirs(dir, e) == 0 &&
	    (mkdtemp(work) || ka_err_set(e, "%s: %s", work, strerror(errno)) == 0) &&
	    snprintf(tmp, sizeof tmp, "%s/baseline.so", work) > 0 &&
	    jail_opts_compiler(&jo, argv[0], work, 300, e) == 0 &&
	    jail_add_ro(&jo, t->dir, e) == 0 && (!lib || jail_add_ro(&jo, lib, e) == 0) &&
	    util_run_child(argv, &ro, &rr, e) == 0)
		st = rr.code;
	if (st != 0 || rename(tmp, so) != 0) {
		if (st > 0) {
			char esc[512];
			jail_log_escape(rr.out.s, rr.out.len < 400 ? rr.out.len : 400, esc,
					sizeof esc);
			ka_err_set(e, "%s: trusted baseline does not compile: %s", path, esc);
		}
		free(so);
		so = NULL;
	}
	if (st >= 0)
		util_run_result_free(&rr);
	if (strstr(work, "XXXXXX") == NULL)
		util_rmtree(work);
	free(work);
	free(archflag);
	free(inc);
	free(libinc);
	free(lib);
	free(dir);
	free(path);
	return so;
}

static int cuda_baselines(const struct ka_task *t, const struct ka_shape *sh, const json_t *device,
			  const char *workdir, struct target_baseline *out, int *n,
			  struct ka_err *e)
{
	*n = 0;
	/* Scratch for intermediates (op-by-op baselines keep them in memory):
	 * four times the task's tensors plus 64 MiB for library workspaces, plus
	 * what the task declares (baseline_workspace: attention's scores). */
	int64_t extra;
	if (task_baseline_workspace(t, sh, &extra, e))
		return -1;
	uint64_t total = (64ull << 20) + (uint64_t)extra;
	for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
		const struct ka_tensor_spec *s =
			i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
		int64_t numel;
		if (task_numel(t, s, sh, &numel, e))
			return -1;
		total += 4 * (uint64_t)numel * dtype_size(s->dtype);
	}
	static const char *const files[2] = {"eager.cu", "compiled.cu"};
	static const char *const names[2] = {"eager", "compiled"};
	for (int b = 0; b < 2; b++) {
		char *p = xasprintf("%s/%s", t->dir, files[b]);
		int exists = access(p, R_OK) == 0;
		free(p);
		if (!exists)
			continue;
		char *so = build_native(t, files[b], device_arch(device), workdir, e);
		if (!so) {
			for (int k = 0; k < *n; k++)
				target_baseline_free(&out[k]);
			*n = 0;
			return -1;
		}
		struct target_baseline *tb = &out[(*n)++];
		memset(tb, 0, sizeof *tb);
		snprintf(tb->name, sizeof tb->name, "%s", names[b]);
		tb->native = so;
		json_t *pv = json_array();
		for (int i = 0; i < t->n_params; i++)
			json_array_append_new(pv, json_integer(sh->v[i]));
		json_t *plan = json_pack("{s:s,s:s,s:i,s:[],s:[],s:[I],s:[],s:o,s:i}", "format",
					 "ka-plan/1", "target", "cuda", "status", 0, "programs",
					 "kernels", "workspaces", (json_int_t)total, "ops",
					 "params", pv, "n_inputs", t->n_inputs);
		tb->plan_json = json_dumps(plan, JSON_COMPACT);
		json_decref(plan);
	}
	return 0;
}

/* The task's device gold module (devgold.h), for the device's architecture. */
static char *cuda_gold_module(const struct ka_task *t, const json_t *device, const char *workdir,
			      struct ka_err *e)
{
	return devgold_build(t, device_arch(device), workdir, e);
}

const struct target_ops target_cuda = {
	.name = "cuda",
	.recorder = "ka-record-cuda",
	.runner = "ka-run-cuda",
	.src_ext = ".cu",
	.compile = cuda_compile,
	.precompile = cuda_precompile,
	.baselines = cuda_baselines,
	.gold_module = cuda_gold_module,
};
