/* bank.c: scanning banks, the standalone device sources of a reference and
 * task validation (see bank.h). Compilers run jailed (common/jail.h) through
 * util_run_child with a wall-clock limit and a capped log; sources go to a
 * private temporary folder that is removed afterwards. */
#include "bank.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp.h"
#include "gold.h"
#include "jail.h"

#define BANK_HDR_CAP (256u << 10)
#define BANK_LOG_CAP (64u << 10)
#define BANK_CC_TIMEOUT_S 180.0
#define BANK_GOLD_CAP ((size_t)1 << 31) /* bytes per tensor on a check shape */

/* ---- scanning ------------------------------------------------------------ */

const char *bank_default_path(void)
{
	static char path[4096];
	if (!path[0])
		snprintf(path, sizeof path, "%s/bank/public", util_data_root());
	return path;
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_task(const char *dir)
{
	char *p = xasprintf("%s/task.json", dir);
	struct stat st;
	int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
	free(p);
	return ok;
}

static void list_add(struct bank_list *l, const char *dir)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->dirs[i], dir))
			return;
	l->dirs = xrealloc(l->dirs, (size_t)(l->n + 1) * sizeof *l->dirs);
	l->dirs[l->n++] = xstrdup(dir);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add task folders under dir, depth levels deep (1 or 2). */
static int scan_dir(const char *dir, int depth, struct bank_list *out, struct ka_err *e)
{
	DIR *d = opendir(dir);
	if (!d)
		return ka_err_set(e, "%s: %s", dir, strerror(errno));
	struct bank_list found = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *sub = xasprintf("%s/%s", dir, de->d_name);
		if (is_dir(sub)) {
			if (has_task(sub))
				list_add(&found, sub);
			else if (depth > 1)
				scan_dir(sub, depth - 1, &found, NULL);
		}
		free(sub);
		if (found.n > BANK_MAX_TASKS)
			break;
	}
	closedir(d);
	if (found.n > BANK_MAX_TASKS) {
		bank_list_free(&found);
		return ka_err_set(e, "%s: more than %d tasks", dir, BANK_MAX_TASKS);
	}
	if (found.n) /* an empty bank has no array: qsort(NULL, 0) is undefined */
		qsort(found.dirs, (size_t)found.n, sizeof *found.dirs, cmp_str);
	for (int i = 0; i < found.n; i++)
		list_add(out, found.dirs[i]);
	bank_list_free(&found);
	return 0;
}

static char *strip_slashes(const char *p)
{
	char *s = xstrdup(p);
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = 0;
	return s;
}

int bank_scan(const char *path, struct bank_list *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	char *p = strip_slashes(path);
	int rc = 0;
	if (!is_dir(p))
		rc = ka_err_set(e, "%s: not a bank folder (%s)", p,
				access(p, F_OK) ? strerror(errno) : "not a directory");
	else if (has_task(p))
		list_add(out, p);
	else
		rc = scan_dir(p, 2, out, e);
	free(p);
	return rc;
}

int bank_resolve(const char *bank, int argc, char **argv, struct bank_list *out, struct ka_err *e)
{
	struct bank_list all = {0};
	int have_all = 0, rc = 0;
	if (argc == 0) {
		rc = bank_scan(bank, &all, e);
		for (int i = 0; rc == 0 && i < all.n; i++)
			list_add(out, all.dirs[i]);
		bank_list_free(&all);
		return rc;
	}
	for (int a = 0; a < argc && rc == 0; a++) {
		const char *arg = argv[a];
		if (is_dir(arg)) {
			struct bank_list one;
			rc = bank_scan(arg, &one, e);
			if (rc == 0 &&
			    one.n == 0) /* named by the user: a typo, not an empty bank */
				rc = ka_err_set(
					e, "%s: no task folder in it (none holds task.json)", arg);
			for (int i = 0; rc == 0 && i < one.n; i++)
				list_add(out, one.dirs[i]);
			bank_list_free(&one);
			continue;
		}
		if (strchr(arg, '/')) {
			rc = ka_err_set(e, "%s: no such task folder", arg);
			break;
		}
		if (!have_all) {
			rc = bank_scan(bank, &all, e);
			have_all = 1;
			if (rc)
				break;
		}
		int hit = 0;
		for (int i = 0; i < all.n; i++) {
			const char *base = strrchr(all.dirs[i], '/');
			base = base ? base + 1 : all.dirs[i];
			if (!strcmp(base, arg)) {
				list_add(out, all.dirs[i]);
				hit = 1;
			}
		}
		if (!hit)
			rc = ka_err_set(e, "no task '%.64s' in %s", arg, bank);
	}
	bank_list_free(&all);
	return rc;
}

void bank_list_free(struct bank_list *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		free(l->dirs[i]);
	free(l->dirs);
	l->dirs = NULL;
	l->n = 0;
}

int bank_trust(struct ka_task *t)
{
	char *p = xasprintf("%s/" BANK_LINEAGE_FILE, t->dir);
	t->trusted = access(p, F_OK) != 0;
	free(p);
	return t->trusted;
}

int bank_content_hash(const char *path, uint64_t *hash, int *n_tasks, struct ka_err *e)
{
	struct bank_list l = {0};
	if (bank_scan(path, &l, e))
		return -1;
	uint64_t h = util_hash64("ka-bank", 7, 0);
	for (int i = 0; i < l.n; i++) {
		struct ka_task *t = task_load(l.dirs[i], e);
		if (!t) {
			bank_list_free(&l);
			return -1;
		}
		uint64_t th = task_hash(t);
		h = util_hash64(t->name, strlen(t->name), h);
		h = util_hash64(&th, sizeof th, h);
		task_free(t);
	}
	if (n_tasks)
		*n_tasks = l.n;
	bank_list_free(&l);
	*hash = h;
	return 0;
}

int bank_content_hash_hex(const char *path, char out[17], int *n_tasks, struct ka_err *e)
{
	uint64_t h;
	if (bank_content_hash(path, &h, n_tasks, e))
		return -1;
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	return 0;
}

/* ---- standalone reference sources --------------------------------------- */

/* True if the line is an #include of ka_gen.h or ka_ref.h (any #include when
 * any_header is set). */
static int is_ka_include(const char *line, size_t len, int any_header)
{
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i >= len || line[i] != '#')
		return 0;
	i++;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i < 7 || strncmp(line + i, "include", 7))
		return 0;
	i += 7;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i >= len || (line[i] != '"' && line[i] != '<'))
		return 0;
	i++;
	if (any_header)
		return 1;
	return len - i >= 8 &&
	       (!strncmp(line + i, "ka_gen.h", 8) || !strncmp(line + i, "ka_ref.h", 8));
}

/* Append text with its includes of the KernelAscent headers blanked (line
 * count kept, so #line positions stay right). For OpenCL every #include goes:
 * the runner builds only sources that read no files, and the system headers
 * sit in branches OpenCL C never takes. */
static void add_inlined(struct util_buf *b, const char *name, const char *text, int any_header)
{
	/* The name as a string literal: quotes, backslashes and control
	 * characters escaped, so no bank path can end the #line directive. */
	util_buf_puts(b, "#line 1 \"");
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			util_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			util_buf_printf(b, "\\%03o", c);
		else
			util_buf_putc(b, (char)c);
	}
	util_buf_puts(b, "\"\n");
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (is_ka_include(p, len, any_header))
			util_buf_printf(b, "/* (inlined above) */\n");
		else
			util_buf_printf(b, "%.*s\n", (int)len, p);
		p = nl ? nl + 1 : p + len;
	}
}

static char *read_header(const char *name)
{
	char *path = xasprintf("%s/include/%s", util_data_root(), name);
	char *text = NULL;
	if (util_read_file(path, BANK_HDR_CAP, &text, NULL, NULL))
		text = NULL;
	free(path);
	return text;
}

/* The standalone reference source: mode 0 OpenCL C, 1 CUDA (outputs in the
 * task's dtypes), 2 the CUDA device gold (KA_GOLD: double outputs, the C
 * gold's math; kernel ka_gold). */
static char *ref_source(const struct ka_task *t, int mode)
{
	int cuda = mode > 0, gold = mode == 2;
	char *gen = read_header("ka_gen.h"), *ref = read_header("ka_ref.h");
	if (!gen || !ref) {
		free(gen);
		free(ref);
		return NULL;
	}
	const char *kname = gold ? "ka_gold" : "ka_ref_kernel";
	struct util_buf b = {0};
	util_buf_printf(
		&b,
		"/* Generated by ka from task '%s': a standalone %s source of its reference.\n"
		" * include/ka_gen.h, include/ka_ref.h and ref.c are inlined below, then\n"
		" * %s(n, params..., inputs..., outputs...) runs ref() for\n"
		" * items 0..n-1, one %s per item. */\n",
		t->name,
		gold   ? "CUDA device gold (fp64 outputs)"
		: cuda ? "CUDA"
		       : "OpenCL C",
		kname, cuda ? "thread" : "work item");
	if (gold)
		util_buf_puts(&b, "#define KA_GOLD 1\n");
	add_inlined(&b, "ka_gen.h", gen, !cuda);
	add_inlined(&b, "ka_ref.h", ref, !cuda);
	char *refname = xasprintf("%s/ref.c", t->dir);
	add_inlined(&b, refname, t->ref_src, !cuda);
	free(refname);
	util_buf_printf(&b, "#line 1 \"%s\"\n", kname);
	if (cuda) {
		util_buf_printf(&b, "extern \"C\" __global__ void %s(long long n", kname);
		for (int p = 0; p < t->n_params; p++)
			util_buf_printf(&b, ", long long p_%s", t->params[p]);
		for (int k = 0; k < t->n_inputs; k++)
			util_buf_printf(&b, ", const %s *__restrict__ in_%s",
					dtype_ctype(t->inputs[k].dtype), t->inputs[k].name);
		for (int j = 0; j < t->n_outputs; j++)
			util_buf_printf(&b, ", %s *__restrict__ out_%s",
					gold ? "double" : dtype_ctype(t->outputs[j].dtype),
					t->outputs[j].name);
		util_buf_printf(&b, ")\n{\n\tlong long i = (long long)blockIdx.x * blockDim.x + "
				    "threadIdx.x;\n");
	} else {
		util_buf_printf(&b, "__kernel void ka_ref_kernel(long n");
		for (int p = 0; p < t->n_params; p++)
			util_buf_printf(&b, ", long p_%s", t->params[p]);
		for (int k = 0; k < t->n_inputs; k++)
			util_buf_printf(&b, ", __global const %s *in_%s",
					dtype_ctype(t->inputs[k].dtype), t->inputs[k].name);
		for (int j = 0; j < t->n_outputs; j++)
			util_buf_printf(&b, ", __global %s *out_%s",
					dtype_ctype(t->outputs[j].dtype), t->outputs[j].name);
		util_buf_printf(&b, ")\n{\n\tlong i = get_global_id(0);\n");
	}
	util_buf_printf(&b, "\tif (i < n)\n\t\tref(i");
	for (int p = 0; p < t->n_params; p++)
		util_buf_printf(&b, ", p_%s", t->params[p]);
	/* The task's scalars, exact hexadecimal double literals. */
	for (int q = 0; q < t->n_scalars; q++)
		util_buf_printf(&b, ", (%a)", t->scalars[q]);
	for (int k = 0; k < t->n_inputs; k++)
		util_buf_printf(&b, ", in_%s", t->inputs[k].name);
	for (int j = 0; j < t->n_outputs; j++)
		util_buf_printf(&b, ", out_%s", t->outputs[j].name);
	util_buf_printf(&b, ");\n}\n");
	free(gen);
	free(ref);
	return b.s;
}

char *bank_opencl_ref_source(const struct ka_task *t)
{
	return ref_source(t, 0);
}

char *bank_cuda_ref_source(const struct ka_task *t)
{
	return ref_source(t, 1);
}

char *bank_cuda_gold_source(const struct ka_task *t)
{
	return ref_source(t, 2);
}

/* ---- validation ---------------------------------------------------------- */

static int find_in_path(const char *prog, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	if (!path)
		return -1;
	const char *p = path;
	while (*p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len > 0 && len + strlen(prog) + 2 < cap) {
			snprintf(out, cap, "%.*s/%s", (int)len, p, prog);
			if (access(out, X_OK) == 0)
				return 0;
		}
		p = colon ? colon + 1 : p + len;
	}
	out[0] = 0;
	return -1;
}

void bank_tools_find(struct bank_tools *tools)
{
	memset(tools, 0, sizeof *tools);
	snprintf(tools->clc, sizeof tools->clc, "%s/ka-clc", util_exe_dir());
	if (access(tools->clc, X_OK) != 0)
		tools->clc[0] = 0;
	const char *env = getenv("NVCC");
	if (env && *env && access(env, X_OK) == 0)
		snprintf(tools->nvcc, sizeof tools->nvcc, "%s", env);
	else if (find_in_path("nvcc", tools->nvcc, sizeof tools->nvcc) != 0 &&
		 access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		snprintf(tools->nvcc, sizeof tools->nvcc, "/usr/local/cuda/bin/nvcc");
}

/* The jail of a bank compile in dir: the toolchain of argv0, or for ka-clc
 * (one file, no toolchain folder) the base paths, the program itself and
 * the OpenCL platform's registry; the repository's include/ in both. */
static int bank_jail(struct jail_opts *o, const char *argv0, const char *dir, struct ka_err *e)
{
	const char *base = strrchr(argv0, '/');
	if (!base || strcmp(base + 1, "ka-clc"))
		return jail_opts_compiler(o, argv0, dir, BANK_CC_TIMEOUT_S, e);
	jail_opts_base(o, dir);
	o->cpu_s = (int)BANK_CC_TIMEOUT_S + 1;
	static __thread char inc[4096];
	snprintf(inc, sizeof inc, "%s/include", util_data_root());
	/* PoCL's CPU driver reads the CPU topology (hwloc) from /sys */
	static const char *const ocl[] = {"/etc/OpenCL", "/sys/devices/system/cpu",
					  "/sys/devices/system/node", NULL};
	if (jail_add_ro(o, argv0, e) || (access(inc, R_OK) == 0 && jail_add_ro(o, inc, e)))
		return -1;
	for (int i = 0; ocl[i]; i++)
		if (access(ocl[i], R_OK) == 0 && jail_add_ro(o, ocl[i], e))
			return -1;
	return 0;
}

/* Compile src with argv (argv's "SRC" and "OUT" entries are replaced by
 * files in a fresh temporary folder), jailed in that folder (ref.c may come
 * from a proposer model). Returns the exit status, -1 if it could not run
 * (the jail included); the log summary (escaped) goes to sum. */
static int compile_with(char **argv, const char *src, const char *ext, char *sum, size_t cap)
{
	char tmpl[] = "/tmp/ka-bank-XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir) {
		snprintf(sum, cap, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	char *file = xasprintf("%s/ref%s", dir, ext);
	char *obj = xasprintf("%s/ref.o", dir);
	char *args[32];
	int n = 0;
	for (; n < 31 && argv[n]; n++)
		args[n] = !strcmp(argv[n], "SRC") ? file : !strcmp(argv[n], "OUT") ? obj : argv[n];
	args[n] = NULL;
	struct ka_err e;
	int st = -1;
	struct jail_opts jo;
	struct util_run_result rr;
	struct util_run_opts ro = {.timeout_s = BANK_CC_TIMEOUT_S,
				   .out_cap = BANK_LOG_CAP,
				   .merge_err = 1,
				   .jail = &jo};
	if (jail_check_source_text(src, strlen(src), sum, cap)) {
		st = 1;
	} else if (util_write_file(file, src, strlen(src), &e) ||
		   bank_jail(&jo, args[0], dir, &e) || util_run_child(args, &ro, &rr, &e)) {
		snprintf(sum, cap, "%.300s", e.msg);
	} else {
		st = rr.code;
		char raw[400];
		if (st == 124)
			snprintf(raw, sizeof raw, "compiler ran over %.0f s", BANK_CC_TIMEOUT_S);
		else
			util_log_summary(rr.out.s, raw, sizeof raw);
		jail_log_escape(raw, strlen(raw), sum, cap);
		util_run_result_free(&rr);
	}
	util_rmtree(dir);
	free(file);
	free(obj);
	return st;
}

struct vline {
	char *s;
	size_t cap, used;
};

static void vadd(struct vline *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vadd(struct vline *v, const char *fmt, ...)
{
	if (v->used + 1 >= v->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(v->s + v->used, v->cap - v->used, fmt, ap);
	va_end(ap);
	if (w > 0)
		v->used = v->used + (size_t)w < v->cap ? v->used + (size_t)w : v->cap - 1;
}

/* The value of float dtype d nearest to g (g itself for fp64): fp32 by the
 * correctly rounded conversion, fp16/bf16 the closest of the float
 * conversion's result and its two neighbours (the conversion through float
 * rounds twice). NAN when no finite value of d is near (an fp16 gold beyond
 * 65504 gets 65504). */
static double nearest_of(enum ka_dtype d, double g)
{
	float f = (float)g;
	if (d == KA_DTYPE_FP32)
		return f;
	if (d != KA_DTYPE_FP16 && d != KA_DTYPE_BF16)
		return g;
	int half = d == KA_DTYPE_FP16;
	unsigned short h = half ? ka_f32_to_f16(f) : ka_f32_to_bf16(f);
	int inf = half ? 0x7c00 : 0x7f80, sign = h & 0x8000, m = h & 0x7fff;
	double best = NAN;
	for (int k = m - 1; k <= m + 1; k++) {
		if (k < 0 || k >= inf)
			continue;
		unsigned short c = (unsigned short)(sign | k);
		double v = half ? ka_f16_to_f32(c) : ka_bf16_to_f32(c);
		if (isnan(best) || fabs(v - g) < fabs(best - g))
			best = v;
	}
	return best;
}

/* Whether some value of output j's dtype can match gold v (element i at the
 * shape called shs): for an integer dtype v must be one it holds exactly
 * (dtype_int_gold_check), for a float dtype its nearest value must be
 * within the task's tolerance (not so for an fp16 output under rtol 1e-6,
 * nor for an fp32 one under tolerance zero where v is not a float). 0, or
 * -1 with one line naming the file and field in why: no kernel can pass. */
static int gold_matchable(const struct ka_task *t, int j, int64_t i, const char *shs, double v,
			  char *why, size_t cap)
{
	const struct ka_tensor_spec *s = &t->outputs[j];
	char bad[160];
	if (dtype_is_int(s->dtype)) {
		if (!dtype_int_gold_check(s->dtype, v, bad, sizeof bad))
			return 0;
		snprintf(why, cap,
			 "%s/ref.c: outputs[%d] '%s' (%s): the gold at element %lld at %s: %s",
			 t->dir, j, s->name, dtype_name(s->dtype), (long long)i, shs, bad);
		return -1;
	}
	double near = nearest_of(s->dtype, v);
	if (ka_cmp_elem(near, v, t->atol, t->rtol) == KA_CMP_OK)
		return 0;
	snprintf(why, cap,
		 "%s/task.json: tolerance: atol %g + rtol %g admits no %s value for outputs[%d] "
		 "'%s' at element %lld at %s (gold %.9g, nearest %s %.9g): no kernel can pass",
		 t->dir, t->atol, t->rtol, dtype_name(s->dtype), j, s->name, (long long)i, shs, v,
		 dtype_name(s->dtype), near);
	return -1;
}

/* Outputs at one check shape: -1 when one is not finite, -2 when no kernel
 * can match its gold (gold_matchable; why names the file and field). What
 * the outputs hold is folded into masks over the shapes: bit j of
 * *zero_mask stays set while output j was all zero at every shape so far,
 * bit j of *const_mask while every element of every shape so far equalled
 * const_val[j] (set at the first shape, first == 1). One shape all zero or
 * constant is no fault: an argmin over rows of one column is all zero, a
 * full reduction has one element a shape. */
static int check_outputs(const struct ka_task *t, const struct ka_shape *sh, double **out,
			 int first, double *const_val, unsigned *zero_mask, unsigned *const_mask,
			 char *why, size_t cap)
{
	char shs[256];
	task_shape_str(t, sh, shs, sizeof shs);
	for (int j = 0; j < t->n_outputs; j++) {
		int64_t n;
		task_numel(t, &t->outputs[j], sh, &n, NULL);
		if (first && n > 0)
			const_val[j] = out[j][0];
		int64_t nonzero = 0, same = 0;
		for (int64_t i = 0; i < n; i++) {
			double v = out[j][i];
			if (!isfinite(v)) {
				snprintf(why, cap,
					 "output '%s' is not finite (%g) at element %lld at %s",
					 t->outputs[j].name, v, (long long)i, shs);
				return -1;
			}
			if (gold_matchable(t, j, i, shs, v, why, cap))
				return -2;
			nonzero += v != 0;
			same += v == const_val[j];
		}
		if (nonzero)
			*zero_mask &= ~(1u << j);
		if (same != n)
			*const_mask &= ~(1u << j);
	}
	return 0;
}

/* The reference as OpenCL C through ka-clc (skipped without ka-clc or a
 * platform), noted in d; 0, or -1 with the reason in v. */
static int check_opencl_ref(const struct ka_task *t, const struct bank_tools *tools,
			    struct vline *v, struct vline *d)
{
	char sum[400];
	if (!tools->clc[0]) {
		vadd(d, "; OpenCL skipped (no ka-clc)");
		return 0;
	}
	char *src = bank_opencl_ref_source(t);
	if (!src) {
		vadd(v, "%s/include: cannot read ka_gen.h/ka_ref.h", util_data_root());
		return -1;
	}
	char *argv[] = {(char *)tools->clc, "build", "SRC", NULL};
	int st = compile_with(argv, src, ".cl", sum, sizeof sum);
	free(src);
	if (st == 3) {
		vadd(d, "; OpenCL skipped (no OpenCL platform)");
	} else if (st != 0) {
		vadd(v, "%s/ref.c: does not compile as OpenCL C: %s", t->dir, sum);
		return -1;
	} else {
		vadd(d, "; OpenCL C");
	}
	return 0;
}

/* The reference as CUDA device code through nvcc (skipped without nvcc),
 * noted in d; 0, or -1 with the reason in v. */
static int check_cuda_ref(const struct ka_task *t, const struct bank_tools *tools, struct vline *v,
			  struct vline *d)
{
	char sum[400];
	if (!tools->nvcc[0]) {
		vadd(d, "; CUDA skipped (no nvcc)");
		return 0;
	}
	char *src = bank_cuda_ref_source(t);
	if (!src) {
		vadd(v, "%s/include: cannot read ka_gen.h/ka_ref.h", util_data_root());
		return -1;
	}
	char *argv[] = {
		(char *)tools->nvcc, "-c", "-x", "cu", "-arch=sm_90a", "-o", "OUT", "SRC", NULL};
	int st = compile_with(argv, src, ".cu", sum, sizeof sum);
	free(src);
	if (st != 0) {
		vadd(v, "%s/ref.c: does not compile as CUDA: %s", t->dir, sum);
		return -1;
	}
	vadd(d, "; CUDA sm_90a");
	return 0;
}

int bank_cuda_ref_check(const struct ka_task *t, const char *nvcc, char *why, size_t cap)
{
	struct bank_tools tools = {.clc = ""};
	snprintf(tools.nvcc, sizeof tools.nvcc, "%s", nvcc ? nvcc : "");
	char note[64] = "";
	struct vline v = {why, cap, 0}, d = {note, sizeof note, 0};
	why[0] = 0;
	return check_cuda_ref(t, &tools, &v, &d) ? -1 : 0;
}

/* Whether regenerating input k alone from another key (call 1) changes some
 * gold output at sh; in holds the inputs at sh (in[k] is restored) and
 * ref_out their outputs. 0 with *changed, or -1 with e. */
static int input_changes_output(const struct ka_task *t, struct gold *g, const struct ka_shape *sh,
				int k, void **in, double **ref_out, int *changed, struct ka_err *e)
{
	double *out[KA_MAX_TENSORS] = {0};
	int64_t n;
	task_numel(t, &t->inputs[k], sh, &n, NULL);
	size_t bytes = (size_t)n * dtype_size(t->inputs[k].dtype);
	void *alt = xmalloc(bytes ? bytes : 1);
	void *orig = in[k];
	in[k] = alt;
	int fail = gold_input_fill(t, sh, 1, 1, k, alt, e) ||
		   gold_outputs_new(t, sh, BANK_GOLD_CAP, out, e) ||
		   gold_compute(g, sh, in, out, NULL, 0, e);
	in[k] = orig;
	free(alt);
	*changed = 0;
	for (int j = 0; j < t->n_outputs && !fail && !*changed; j++) {
		int64_t m;
		task_numel(t, &t->outputs[j], sh, &m, NULL);
		for (int64_t i = 0; i < m && !*changed; i++)
			*changed = out[j][i] != ref_out[j][i];
	}
	gold_buffers_free((void **)out, t->n_outputs);
	return fail ? -1 : 0;
}

/* Gold on every check shape: finite; an integer output's values exactly
 * values of its dtype; no output all zero, or one value, over every element
 * of every check shape; and every input must change some output on some
 * check shape when it alone is regenerated from another key (call 1). Noted
 * in d; 0, or -1 with the reason in v. */
static int check_gold(const struct ka_task *t, struct gold *g, struct vline *v, struct vline *d)
{
	struct ka_err e;
	char sum[640];
	void *in[KA_MAX_TENSORS] = {0};
	double *ref_out[KA_MAX_TENSORS] = {0};
	unsigned const_all = (1u << t->n_outputs) - 1, zero_all = const_all, sensitive = 0;
	double const_val[KA_MAX_TENSORS] = {0};
	int64_t total_items = 0;
	int rc = -1;
	for (int c = 0; c < t->n_checks; c++) {
		const struct ka_shape *sh = &t->checks[c];
		int64_t items;
		if (gold_inputs_new(t, sh, 1, 0, BANK_GOLD_CAP, in, &e) ||
		    gold_outputs_new(t, sh, BANK_GOLD_CAP, ref_out, &e) ||
		    gold_compute(g, sh, in, ref_out, NULL, 0, &e) ||
		    task_item_count(t, sh, &items, &e)) {
			vadd(v, "%s/task.json: checks[%d]: %s", t->dir, c, e.msg);
			goto out;
		}
		total_items += items;
		int co = check_outputs(t, sh, ref_out, c == 0, const_val, &zero_all, &const_all,
				       sum, sizeof sum);
		if (co == -2) /* the line names its file and field */
			vadd(v, "%s", sum);
		else if (co)
			vadd(v, "%s: degenerate: %s", t->dir, sum);
		if (co)
			goto out;
		for (int k = 0; k < t->n_inputs; k++) {
			if (sensitive & (1u << k))
				continue;
			int changed;
			if (input_changes_output(t, g, sh, k, in, ref_out, &changed, &e)) {
				vadd(v, "%s/task.json: checks[%d]: %s", t->dir, c, e.msg);
				goto out;
			}
			if (changed)
				sensitive |= 1u << k;
		}
		gold_buffers_free(in, t->n_inputs);
		gold_buffers_free((void **)ref_out, t->n_outputs);
	}
	for (int j = 0; j < t->n_outputs; j++) {
		if (const_all & (1u << j)) {
			vadd(v, "%s: degenerate: output '%s' is %s on every check shape", t->dir,
			     t->outputs[j].name, zero_all & (1u << j) ? "all zero" : "constant");
			goto out;
		}
	}
	for (int k = 0; k < t->n_inputs; k++) {
		if (!(sensitive & (1u << k))) {
			vadd(v,
			     "%s: degenerate: no output changes when input '%s' changes, on any "
			     "check shape",
			     t->dir, t->inputs[k].name);
			goto out;
		}
	}
	vadd(d,
	     "; gold on %d check shapes (%lld items): finite, not constant; each input changes "
	     "the output (",
	     t->n_checks, (long long)total_items);
	for (int k = 0; k < t->n_inputs; k++)
		vadd(d, "%s%s", k ? ", " : "", t->inputs[k].name);
	vadd(d, ")");
	rc = 0;
out:
	gold_buffers_free(in, t->n_inputs);
	gold_buffers_free((void **)ref_out, t->n_outputs);
	return rc;
}

enum bank_verdict bank_validate(const char *dir, const struct bank_tools *tools, char *line,
				size_t cap)
{
	struct vline v = {.s = line, .cap = cap};
	struct ka_err e;
	line[0] = 0;
	struct ka_task *t = task_load(dir, &e);
	if (!t) {
		vadd(&v, "%s", e.msg);
		return BANK_VERDICT_BAD;
	}
	bank_trust(t); /* the operator's bank, unless a model wrote the task */
	enum bank_verdict verdict = BANK_VERDICT_BAD;
	char detail[1024];
	struct vline d = {.s = detail, .cap = sizeof detail};
	vadd(&d, "schema");

	struct gold *g = gold_open(t, &e);
	if (!g) {
		vadd(&v, "%s", e.msg);
		goto done;
	}
	vadd(&d, "; C");
	/* OpenCL C on PoCL (or whatever platform ka-clc finds), then CUDA. */
	if (check_opencl_ref(t, tools, &v, &d) || check_cuda_ref(t, tools, &v, &d))
		goto done;
	if (tools->before_gold) {
		char why[256] = "";
		if (tools->before_gold(why, sizeof why)) {
			vadd(&v, "%s: cannot confine the gold: %s", t->dir, why);
			goto done;
		}
	}
	verdict = BANK_VERDICT_DEGENERATE;
	if (check_gold(t, g, &v, &d))
		goto done;
	vadd(&v, "%s (%s %s): %s", t->dir, t->tier, t->name, detail);
	verdict = BANK_VERDICT_OK;
done:
	gold_close(g);
	task_free(t);
	return verdict;
}
