/* bank_grade.c: the bank's solutions graded and the calibration table (see
 * bank_grade.h). */
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bank_grade.h"
#include "cli.h"
#include "task.h"
#include "util.h"
#include "verdict.h"

#define SOURCE_CAP (1 << 20)

/* The ratio of a baseline's median (us) to the calibration's record
 * {"median_us": ...}: 0 when either is missing or not a positive number. */
static double cal_ratio(double median_us, const json_t *cal_form)
{
	double ref = json_number_value(json_object_get(cal_form, "median_us"));
	return median_us > 0 && ref > 0 ? median_us / ref : 0;
}

/* 1 when both ratios are in the band. */
static int in_band(double eager_ratio, double compiled_ratio)
{
	return eager_ratio >= BANK_BAND_LO && eager_ratio <= BANK_BAND_HI &&
	       compiled_ratio >= BANK_BAND_LO && compiled_ratio <= BANK_BAND_HI;
}

/* The calibration of gpu (spaces as '_') for bank: calibration/<gpu>.json
 * inside the bank or beside it (bank/public -> bank/calibration); its
 * "tasks" object (owned by *root), or NULL where there is none. A file
 * that is not a calibration is said on stderr and ignored. */
static json_t *calibration_tasks(const char *bank, const char *gpu, json_t **root)
{
	char name[256];
	snprintf(name, sizeof name, "%s", gpu);
	for (char *c = name; *c; c++)
		if (*c == ' ' || *c == '/')
			*c = '_';
	char *copy = xstrdup(bank);
	char *paths[2] = {xasprintf("%s/calibration/%s.json", bank, name),
			  xasprintf("%s/calibration/%s.json", dirname(copy), name)};
	*root = NULL;
	for (int i = 0; i < 2 && !*root; i++) {
		if (access(paths[i], F_OK))
			continue;
		json_error_t je;
		*root = json_load_file(paths[i], 0, &je);
		if (!*root || !json_is_object(json_object_get(*root, "tasks"))) {
			fprintf(stderr, "ka bank: %s: not a calibration file (%s); no ratios\n",
				paths[i], *root ? "no \"tasks\" object" : je.text);
			json_decref(*root);
			*root = NULL;
		}
	}
	free(paths[0]);
	free(paths[1]);
	free(copy);
	return *root ? json_object_get(*root, "tasks") : NULL;
}

/* A table cell of text: at most cap - 1 bytes of s, with '|' and line
 * breaks made spaces so that a row stays one row. */
static void cell(char *out, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);
	memcpy(out, s, n);
	out[n] = 0;
	for (char *c = out; *c; c++)
		if (*c == '|' || *c == '\n' || *c == '\r')
			*c = ' ';
}

static void fig_us(char *out, size_t cap, const struct grade_figure *f)
{
	if (f->valid)
		snprintf(out, cap, "%.1f", f->median);
	else
		snprintf(out, cap, "-");
}

static void fig_ci(char *out, size_t cap, const struct grade_figure *f)
{
	if (f->valid)
		snprintf(out, cap, "%.2fx [%.2f, %.2f]", f->median, f->lo, f->hi);
	else
		snprintf(out, cap, "-");
}

static void ratio_str(char *out, size_t cap, double r, int stale)
{
	if (stale)
		snprintf(out, cap, "stale");
	else if (r > 0)
		snprintf(out, cap, "%.2f", r);
	else
		snprintf(out, cap, "-");
}

/* One task's row; *ok: the solution graded ok; *er, *cr: the ratios (0:
 * none); *stale: the calibration is of another PyTorch form. jf: the JSON
 * lines file or NULL. */
static void grade_one(struct grade_session *s, const struct bank_grade_opts *o, json_t *cal,
		      const char *dir, FILE *jf, int *ok, double *er, double *cr, int *stale,
		      char *name, size_t name_cap)
{
	struct ka_err e;
	char row[1024], detail[512] = "", msg[400];
	*ok = 0;
	*er = *cr = 0;
	*stale = 0;
	snprintf(name, name_cap, "%s", dir);
	struct ka_task *t = task_load(dir, &e);
	if (!t) {
		cell(msg, sizeof msg, e.msg);
		printf("| %s | bad task | %s |\n", dir, msg);
		return;
	}
	bank_trust(t);
	snprintf(name, name_cap, "%s", t->name);
	char *path = xasprintf("%s/solutions/%s", dir,
			       strcmp(o->target, "cuda") ? "opencl.c" : "cuda.cu");
	char *src = NULL;
	size_t len = 0;
	if (util_read_file(path, SOURCE_CAP, &src, &len, &e)) {
		cell(msg, sizeof msg, e.msg);
		printf("| %s | no solution | %s |\n", t->name, msg);
		goto out;
	}
	struct grade_result r;
	int x = grade_candidate(s, t, src, len, NULL, &r, &e);
	if (x) {
		cell(msg, sizeof msg, e.msg);
		printf("| %s | grader failure | %s |\n", t->name, msg);
		goto out;
	}
	*ok = r.verdict == VERDICT_OK;
	const json_t *rec = cal ? json_object_get(cal, t->name) : NULL;
	if (rec) {
		const char *form = t->baseline_torch ? t->baseline_torch : t->torch;
		const char *cf = json_string_value(json_object_get(rec, "baseline_torch"));
		if (!cf)
			cf = json_string_value(json_object_get(rec, "torch"));
		*stale = !cf || !form || strcmp(cf, form);
		if (!*stale) {
			*er = cal_ratio(r.eager_us.valid ? r.eager_us.median : 0,
					json_object_get(rec, "eager"));
			*cr = cal_ratio(r.compiled_us.valid ? r.compiled_us.median : 0,
					json_object_get(rec, "compiled"));
		}
	}
	char tu[32], eu[32], cu[32], se[64], sc[64], re[16], rc[16];
	fig_us(tu, sizeof tu, &r.time_us);
	fig_us(eu, sizeof eu, &r.eager_us);
	fig_us(cu, sizeof cu, &r.compiled_us);
	fig_ci(se, sizeof se, &r.speedup_eager);
	fig_ci(sc, sizeof sc, &r.speedup_compiled);
	ratio_str(re, sizeof re, *er, *stale);
	ratio_str(rc, sizeof rc, *cr, *stale);
	if (!*ok) {
		cell(msg, sizeof msg, r.detail);
		snprintf(detail, sizeof detail, " (%s)", msg);
	}
	snprintf(row, sizeof row, "| %s | %s%s | %s | %s | %s | %s | %s | %s | %s |", t->name,
		 verdict_name(r.verdict), detail, tu, eu, cu, se, sc, re, rc);
	printf("%s\n", row);
	if (jf) {
		json_t *j = grade_result_json(s, t, &r);
		json_object_set_new(j, "task_dir", json_string(dir));
		char *text = json_dumps(j, JSON_COMPACT);
		fprintf(jf, "%s\n", text);
		fflush(jf);
		free(text);
		json_decref(j);
	}
	grade_result_free(&r);
out:
	fflush(stdout);
	free(src);
	free(path);
	task_free(t);
}

int bank_grade_run(const struct bank_grade_opts *o, const struct bank_list *tasks)
{
	struct ka_err e;
	FILE *jf = NULL;
	if (o->json && !(jf = fopen(o->json, "we")))
		return cli_usage_error("bank", "--json %s: cannot write", o->json);
	struct grade_session *s = grade_session_open(o->target, NULL, 0, &o->proto, o->workdir, &e);
	if (!s) {
		if (jf)
			fclose(jf);
		return cli_fail("bank", "cannot start the %s grader: %s", o->target, e.msg);
	}
	const char *gpu = json_string_value(json_object_get(grade_session_device(s), "name"));
	json_t *root = NULL, *cal = calibration_tasks(o->bank, gpu ? gpu : "unknown", &root);
	printf("\ngraded on %s (%s target)%s\n\n", gpu ? gpu : "an unnamed device", o->target,
	       cal ? "" : "; no calibration of this device in the bank: no ratios");
	printf("| task | verdict | solution us | eager.cu us | compiled.cu us | vs eager | vs "
	       "compiled | eager.cu / torch eager | compiled.cu / torch.compile |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	int n_ok = 0, n_cal = 0, n_band = 0;
	struct util_buf out;
	util_buf_init(&out);
	for (int i = 0; i < tasks->n; i++) {
		int ok, stale;
		double er, cr;
		char name[256];
		grade_one(s, o, cal, tasks->dirs[i], jf, &ok, &er, &cr, &stale, name, sizeof name);
		n_ok += ok;
		if (er > 0 && cr > 0) {
			n_cal++;
			if (in_band(er, cr)) {
				n_band++;
			} else {
				util_buf_printf(&out, "%s%s (%.3f, %.3f)", out.len ? ", " : "",
						name, er, cr);
			}
		}
	}
	printf("\n");
	if (out.len)
		printf("out of the band [%.2f, %.2f] (eager, compiled ratio): %s\n", BANK_BAND_LO,
		       BANK_BAND_HI, out.s);
	printf("%d of %d solutions ok; %d of %d calibrated tasks with both baseline ratios in "
	       "[%.2f, %.2f] (device: %s)\n",
	       n_ok, tasks->n, n_band, n_cal, BANK_BAND_LO, BANK_BAND_HI, gpu ? gpu : "unnamed");
	util_buf_free(&out);
	json_decref(root);
	grade_session_close(s);
	if (jf)
		fclose(jf);
	return n_ok == tasks->n ? KA_EXIT_OK : KA_EXIT_FAIL;
}
