/* devgold.c: the device gold, the parent's side (see devgold.h). */
#include "devgold.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bank.h"
#include "cmp.h"
#include "jail.h"

#define DEVGOLD_CC_TIMEOUT_S 300.0
#define DEVGOLD_THREAD_CORES 20.0  /* one GPU thread runs an item this many times slower */
#define DEVGOLD_DEVICE_CORES 500.0 /* the device's threads together, in CPU cores */

const char *devgold_check_name(enum devgold_check c)
{
	switch (c) {
	case DEVGOLD_CPU_FULL: return "cpu-full";
	case DEVGOLD_DEVICE_FULL: return "device-full";
	default: return "sampled";
	}
}

enum devgold_check devgold_choose(const struct devgold_when *w)
{
	if (w->cpu_full)
		return DEVGOLD_CPU_FULL;
	if (!w->timed && w->trusted && w->device_ok && w->device_s <= DEVGOLD_BUDGET_S)
		return DEVGOLD_DEVICE_FULL;
	return DEVGOLD_SAMPLED;
}

int devgold_enabled(void)
{
	const char *v = getenv("KA_DEVICE_GOLD");
	return !v || (strcmp(v, "off") && strcmp(v, "0"));
}

double devgold_cost_s(double item_s, int64_t items)
{
	double one = item_s * DEVGOLD_THREAD_CORES;
	double all = item_s * (double)items / DEVGOLD_DEVICE_CORES;
	return one > all ? one : all;
}

/* The compiler command (also part of the cache key): device code only, no
 * multiply-add contraction (the CPU gold is built with -ffp-contract=off). */
static const char *const devgold_cmd[] = {"-cubin", "-O3", "-std=c++17", "-fmad=false"};
#define DEVGOLD_N_CMD (int)(sizeof devgold_cmd / sizeof devgold_cmd[0])

/* Compile src in a private folder under dir into cubin (renamed into place).
 * 0, or -1 with e. */
static int devgold_compile(const struct ka_task *t, const char *src, const char *nvcc,
			   const char *arch, const char *dir, const char *cubin, struct ka_err *e)
{
	char *work = xasprintf("%s/build-XXXXXX", dir);
	char *archflag = xasprintf("-arch=%s", arch);
	char tmp[4096] = "", file[4096] = "";
	char *argv[16];
	int n = 0, st = -1, ran = 0;
	argv[n++] = (char *)nvcc;
	for (int i = 0; i < DEVGOLD_N_CMD; i++)
		argv[n++] = (char *)devgold_cmd[i];
	argv[n++] = archflag;
	argv[n++] = "-o";
	argv[n++] = tmp;
	argv[n++] = file;
	argv[n] = NULL;
	struct jail_opts jo;
	struct util_run_result rr = {0};
	struct util_run_opts ro = {
		.timeout_s = DEVGOLD_CC_TIMEOUT_S, .out_cap = 16384, .merge_err = 1, .jail = &jo};
	if (util_mkdirs(dir, e) || !mkdtemp(work)) {
		if (strstr(work, "XXXXXX"))
			ka_err_set(e, "%s: %s", work, strerror(errno));
		goto done;
	}
	snprintf(tmp, sizeof tmp, "%s/gold.cubin", work);
	snprintf(file, sizeof file, "%s/gold.cu", work);
	if (util_write_file(file, src, strlen(src), e) ||
	    jail_opts_compiler(&jo, nvcc, work, DEVGOLD_CC_TIMEOUT_S, e) ||
	    util_run_child(argv, &ro, &rr, e))
		goto done;
	ran = 1;
	st = rr.code;
	if (st != 0) {
		char sum[400], esc[400];
		if (st == 124)
			snprintf(sum, sizeof sum, "compiler ran over %.0f s", DEVGOLD_CC_TIMEOUT_S);
		else
			util_log_summary(rr.out.s, sum, sizeof sum);
		jail_log_escape(sum, strlen(sum), esc, sizeof esc);
		ka_err_set(e, "%s/ref.c: does not compile as the device gold: %s", t->dir, esc);
		st = -1;
	} else if (rename(tmp, cubin) != 0) {
		ka_err_set(e, "%s: %s", cubin, strerror(errno));
		st = -1;
	}
done:
	if (ran)
		util_run_result_free(&rr);
	if (!strstr(work, "XXXXXX"))
		util_rmtree(work);
	free(work);
	free(archflag);
	return st == 0 ? 0 : -1;
}

char *devgold_build(const struct ka_task *t, const char *arch, const char *workdir,
		    struct ka_err *e)
{
	char *src = bank_cuda_gold_source(t);
	if (!src) {
		ka_err_set(e, "%s/include: cannot read ka_gen.h/ka_ref.h", util_data_root());
		return NULL;
	}
	char why[400];
	if (jail_check_source_text(src, strlen(src), why, sizeof why)) {
		ka_err_set(e, "%s/ref.c: %s", t->dir, why);
		free(src);
		return NULL;
	}
	const char *env = getenv("NVCC");
	const char *nvcc = env && *env ? env : "nvcc";
	uint64_t h = util_hash64(src, strlen(src), 0xde7601d);
	h = util_hash64(arch, strlen(arch), h);
	h = util_hash64(nvcc, strlen(nvcc), h);
	for (int i = 0; i < DEVGOLD_N_CMD; i++)
		h = util_hash64(devgold_cmd[i], strlen(devgold_cmd[i]), h);
	char *dir = xasprintf("%s/devgold", workdir);
	char *cubin = xasprintf("%s/%s-%016llx.cubin", dir, t->name, (unsigned long long)h);
	if (access(cubin, R_OK) != 0 && devgold_compile(t, src, nvcc, arch, dir, cubin, e)) {
		free(cubin);
		cubin = NULL;
	}
	free(dir);
	free(src);
	return cubin;
}

void devgold_tally(const struct run_check_res *r, const char *const *names, struct grade_tally *tl)
{
	for (int j = 0; j < r->n_outputs; j++) {
		const struct run_check_out *co = &r->out[j];
		tl->n_bad += co->bad;
		tl->n_nonfinite += co->nonfinite;
		if (co->max_abs_error > tl->max_err)
			tl->max_err = co->max_abs_error;
		for (int k = 0; k < co->n_first; k++) {
			if (json_array_size(tl->mismatches) >= GRADE_MAX_MISMATCH)
				break;
			json_array_append_new(tl->mismatches,
					      json_pack("{s:s,s:I,s:f,s:f}", "output", names[j],
							"index", (json_int_t)co->index[k], "got",
							co->finite[k] ? co->got[k] : 0.0,
							"expected", co->gold[k]));
		}
	}
}

int devgold_cross_check(const double *dev, const int64_t *idx, int64_t n, const double *cpu,
			double atol, double rtol, int64_t *at)
{
	for (int64_t q = 0; q < n; q++) {
		double c = cpu[idx[q]], d = dev[q];
		if (c == d || (isnan(c) && isnan(d)))
			continue;
		double bound = 1e-3 * (atol + rtol * fabs(c));
		if (bound < 1e-12 * fabs(c))
			bound = 1e-12 * fabs(c);
		/* Non-finite golds agree only when equal (above); a NaN
		 * difference is never within the bound. */
		if (isfinite(c) && isfinite(d) && fabs(c - d) <= bound)
			continue;
		*at = idx[q];
		return 1;
	}
	return 0;
}

/* The golds' cross-check of every output: -1 with e naming the task, the
 * element and both values at the first disagreement. */
static int cross_check_all(const struct ka_task *t, const char *shape, const int *dtypes,
			   const struct run_check_res *res, const int64_t *const *elems,
			   double *const *cpu, struct ka_err *e)
{
	for (int j = 0; j < res->n_outputs; j++) {
		int exact = ka_cmp_is_int(dtypes[j]);
		int64_t at, q = 0;
		if (!devgold_cross_check(res->gold[j], elems[j], res->n_gold[j], cpu[j],
					 exact ? 0 : t->atol, exact ? 0 : t->rtol, &at))
			continue;
		while (elems[j][q] != at)
			q++;
		return ka_err_set(
			e,
			"%s: the device gold and the CPU gold differ at %s[%lld] at %s: "
			"%.17g against %.17g (a grader problem with this task's reference "
			"on the device, not the candidate's)",
			t->name, t->outputs[j].name, (long long)at, shape, res->gold[j][q],
			cpu[j][at]);
	}
	return 0;
}

int devgold_outcome(const struct ka_task *t, const char *shape, const int *dtypes,
		    const struct run_check_res *res, const int64_t *const *elems,
		    double *const *cpu, enum verdict *v, char *detail, size_t cap,
		    json_t **evidence, struct ka_err *e)
{
	if (cross_check_all(t, shape, dtypes, res, elems, cpu, e))
		return -1;
	const char *names[KA_MAX_TENSORS];
	for (int j = 0; j < t->n_outputs && j < KA_MAX_TENSORS; j++)
		names[j] = t->outputs[j].name;
	struct grade_tally tl;
	grade_tally_init(&tl);
	devgold_tally(res, names, &tl);
	int out = 0;
	if (tl.n_bad) {
		*v = grade_tally_describe(&tl, t->atol, t->rtol, 0, detail, cap);
		*evidence = json_pack("{s:O,s:I,s:I,s:f,s:s}", "mismatches", tl.mismatches, "count",
				      (json_int_t)tl.n_bad, "nonfinite", (json_int_t)tl.n_nonfinite,
				      "max_abs_error", tl.max_err, "check",
				      devgold_check_name(DEVGOLD_DEVICE_FULL));
		out = 1;
	}
	grade_tally_free(&tl);
	return out;
}
