/* target_opencl.c: the OpenCL target. A candidate is one C file: OpenCL C
 * kernels in a string plus the host entry point ka_launch (include/
 * ka_kernel.h). Its host code is compiled by the system C compiler into a
 * shared object that only the recorder ever loads. The trusted baseline is
 * the task's reference run as one naive kernel per work item (accumulating
 * in double, as ref.c does). */
#include "target.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bank.h"
#include "jail.h"
#include "plan.h"

#define OPENCL_CC_TIMEOUT_S 60.0
#define OPENCL_LOG_CAP 16384

/* The headers an OpenCL candidate may include: the OpenCL API, the ABI and
 * the C (and common C++) standard headers. */
static const char *const opencl_headers[] = {
	"CL/cl.h",  "CL/opencl.h", "CL/cl_platform.h", "ka_kernel.h", "assert.h", "float.h",
	"limits.h", "math.h",	   "stdbool.h",	       "stddef.h",    "stdint.h", "stdio.h",
	"stdlib.h", "string.h",	   "inttypes.h",       "stdalign.h",  "stdarg.h", "cstdint",
	"cstddef",  "cmath",	   "cstdio",	       "cstdlib",     "cstring",  "climits",
	"cfloat",   "type_traits", "utility",	       "algorithm",   "limits",	  "array",
	"cassert",  NULL,
};

static int opencl_header_allowed(const char *name, const void *ctx)
{
	for (int i = 0; opencl_headers[i]; i++)
		if (!strcmp(name, opencl_headers[i]))
			return 1;
	return 0;
}

/* Fills dir with candidate.c (src) and include/ka_kernel.h; 0, or -1 with
 * e. */
static int opencl_setup_dir(const char *dir, const char *src, size_t len, struct ka_err *e)
{
	char *c_path = xasprintf("%s/candidate.c", dir);
	char *inc = xasprintf("%s/include", dir);
	char *hdr_src = xasprintf("%s/include/ka_kernel.h", util_data_root());
	char *hdr_dst = xasprintf("%s/ka_kernel.h", inc);
	char *hdr = NULL;
	size_t hl = 0;
	int bad = util_mkdirs(inc, e) || util_write_file(c_path, src, len, e) ||
		  util_read_file(hdr_src, 1 << 20, &hdr, &hl, e) ||
		  util_write_file(hdr_dst, hdr, hl, e);
	free(hdr);
	free(hdr_src);
	free(hdr_dst);
	free(inc);
	free(c_path);
	return bad ? -1 : 0;
}

/* Runs the system C compiler on dir/candidate.c in the compiler jail, into
 * dir/candidate.so.part; 0 with rr filled (the caller frees it), or -1 with
 * e. */
static int opencl_run_cc(const char *dir, struct util_run_result *rr, struct ka_err *e)
{
	/* -save-temps keeps the assembler input (candidate.so.part-candidate.s)
	 * for the scan of file-reading directives. */
	char *argv[] = {"cc",
			"-std=gnu17",
			"-O2",
			"-fPIC",
			"-shared",
			"-save-temps",
			"-MD",
			"-MF",
			"deps.d",
			"-I",
			"include",
			"-o",
			"candidate.so.part",
			"candidate.c",
			NULL};
	struct jail_opts jo;
	struct util_run_opts ro = {.timeout_s = OPENCL_CC_TIMEOUT_S,
				   .out_cap = OPENCL_LOG_CAP,
				   .merge_err = 1,
				   .jail = &jo};
	if (jail_opts_compiler(&jo, "cc", dir, OPENCL_CC_TIMEOUT_S, e) ||
	    util_run_child(argv, &ro, rr, e))
		return -1;
	return 0;
}

/* Remove everything in dir but candidate.so (all of dir when !keep). */
static void opencl_keep_object(const char *dir, int keep)
{
	if (!keep) {
		util_rmtree(dir);
		return;
	}
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "candidate.so"))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		util_rmtree(p);
		free(p);
	}
	if (d)
		closedir(d);
}

/* The verdict on the compiler's run rr in dir: file-reading assembler
 * directives, then the files it read, then its log on failure; on success
 * the object is stored at *so and out takes that path (*so becomes NULL).
 * 0, or -1 with e. */
static int opencl_judge(const char *dir, const char *workdir, const struct util_run_result *rr,
			char **so, struct target_compiled *out, struct ka_err *e)
{
	char why[512];
	int rc = -1;
	int st = rr->code;
	char *tmp_so = xasprintf("%s/candidate.so.part", dir);
	char *deps = xasprintf("%s/deps.d", dir);
	static const char *const sysdirs[] = {"/usr/include", "/usr/lib/gcc", "/usr/local/include",
					      NULL};
	/* the assembler input, kept even when the compile failed (the jail may
	 * have hidden the file a directive named) */
	int asm_bad = st == 124 ? 0 : jail_check_asm_dir(dir, why, sizeof why);
	if (st != 0 && asm_bad < 0)
		asm_bad = 0; /* failed before assembling: the log is the verdict */
	if (st == 0 && asm_bad < 0) {
		ka_err_set(e, "opencl compile: %s", why); /* cc kept no .s: ours */
		goto done;
	}
	if (st != 0 && st != 124 && !asm_bad && jail_check_space(workdir, e))
		goto done;
	if (asm_bad) {
		out->verdict = VERDICT_FORBIDDEN;
		snprintf(out->detail, sizeof out->detail, "%s", why); /* log withheld */
	} else if (st == 0 && target_check_deps(deps, dir, sysdirs, why, sizeof why)) {
		out->verdict = VERDICT_FORBIDDEN;
		snprintf(out->detail, sizeof out->detail, "%s", why); /* log withheld */
	} else if (st != 0) {
		out->verdict = VERDICT_COMPILE_ERROR;
		size_t dl = 0;
		if (st == 124)
			dl = (size_t)snprintf(out->detail, sizeof out->detail,
					      "compiler timed out (%.0f s)\n", OPENCL_CC_TIMEOUT_S);
		jail_log_escape(rr->out.s, rr->out.len, out->detail + dl, sizeof out->detail - dl);
		if (rr->out_truncated)
			snprintf(out->detail + strlen(out->detail),
				 sizeof out->detail - strlen(out->detail), "\n[log truncated]");
	} else if (target_object_too_big(tmp_so, why, sizeof why)) {
		out->verdict = VERDICT_COMPILE_ERROR;
		snprintf(out->detail, sizeof out->detail, "%s", why);
	} else if (rename(tmp_so, *so) != 0) {
		ka_err_set(e, "%s: cannot store the compiled candidate", *so);
		goto done;
	} else {
		out->verdict = VERDICT_OK;
		out->so_path = *so;
		*so = NULL;
	}
	rc = 0;
done:
	free(deps);
	free(tmp_so);
	return rc;
}

static int opencl_compile(const struct ka_task *t, const char *src, size_t len, const char *workdir,
			  const json_t *device, struct target_compiled *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	char why[512];
	if (target_check_includes(src, len, opencl_header_allowed, NULL, why, sizeof why) ||
	    jail_check_source_text(src, len, why, sizeof why)) {
		out->verdict = VERDICT_FORBIDDEN;
		snprintf(out->detail, sizeof out->detail, "%s", why);
		return 0;
	}
	uint64_t h = util_hash64(src, len, 0x0c2); /* 0x0c2: built jailed and scanned */
	char *dir = xasprintf("%s/cl-%016llx", workdir, (unsigned long long)h);
	char *so = xasprintf("%s/candidate.so", dir);
	if (access(so, R_OK) == 0) { /* compiled before: same source, same flags */
		out->verdict = VERDICT_OK;
		out->so_path = so;
		free(dir);
		return 0;
	}
	/* One compile of a source at a time: two graders given the same
	 * candidate share its folder, and one's clean-up would remove the
	 * other's intermediates mid-compile. The second finds the object. */
	char *lock = xasprintf("%s.lock", dir);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock);
	if (lfd >= 0)
		flock(lfd, LOCK_EX);
	int rc = -1;
	if (access(so, R_OK) == 0) {
		out->verdict = VERDICT_OK;
		out->so_path = so;
		so = NULL;
		rc = 0;
		goto unlock;
	}
	struct util_run_result rr;
	if (opencl_setup_dir(dir, src, len, e) || opencl_run_cc(dir, &rr, e))
		goto done;
	rc = opencl_judge(dir, workdir, &rr, &so, out, e);
	util_run_result_free(&rr);
done:
	/* The cache keeps the object only: the compiler's intermediates (-save-
	 * temps: the assembler input of a large initialised array is several
	 * times its size) and a failed compile's folder go. */
	opencl_keep_object(dir, rc == 0 && out->verdict == VERDICT_OK);
unlock:
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	free(so);
	free(dir);
	(void)t;
	(void)device;
	return rc;
}

/* One launch of ka_ref_kernel(long n, long params..., inputs..., outputs...),
 * one work item per item. */
static int opencl_baselines(const struct ka_task *t, const struct ka_shape *sh,
			    const json_t *device, const char *workdir, struct target_baseline *out,
			    int *n, struct ka_err *e)
{
	*n = 0;
	int64_t items;
	if (task_item_count(t, sh, &items, e))
		return -1;
	struct plan p;
	memset(&p, 0, sizeof p);
	snprintf(p.target, sizeof p.target, "opencl");
	p.n_programs = 1;
	p.sources[0] = bank_opencl_ref_source(t);
	p.n_kernels = 1;
	snprintf(p.kernels[0].name, sizeof p.kernels[0].name, "ka_ref_kernel");
	p.kernels[0].carveout = -1;
	struct plan_op *o = plan_add_op(&p);
	o->kind = PLAN_OP_LAUNCH;
	o->work_dim = 1;
	o->grid[0] = (uint64_t)items;
	o->grid[1] = o->grid[2] = 1;
	int nargs = 1 + t->n_params + t->n_inputs + t->n_outputs;
	o->args = xcalloc((size_t)nargs, sizeof *o->args);
	o->n_args = nargs;
	for (int a = 0; a < 1 + t->n_params; a++) {
		int64_t v = a == 0 ? items : sh->v[a - 1];
		o->args[a].kind = PLAN_ARG_BYTES;
		o->args[a].size = 8;
		o->args[a].bytes = xmalloc(8);
		memcpy(o->args[a].bytes, &v, 8);
	}
	for (int b = 0; b < t->n_inputs + t->n_outputs; b++) {
		struct plan_arg *g = &o->args[1 + t->n_params + b];
		g->kind = PLAN_ARG_BUFFER;
		g->size = 8;
		g->n_relocs = 1;
		g->relocs = xcalloc(1, sizeof *g->relocs);
		g->relocs[0].ref.buf = b;
	}
	snprintf(out[0].name, sizeof out[0].name, "eager");
	out[0].plan_json = plan_write(&p);
	plan_free(&p);
	*n = 1;
	(void)device;
	(void)workdir;
	return 0;
}

const struct target_ops target_opencl = {
	.name = "opencl",
	.recorder = "ka-record-opencl",
	.runner = "ka-run-opencl",
	.src_ext = ".c",
	.compile = opencl_compile,
	.baselines = opencl_baselines,
};
