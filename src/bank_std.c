/* bank_std.c: difficulty-standardized banks (bank_std.h, docs/bank.md).
 *
 * `ka bank standardize` in four steps:
 *   1. the anchor's capability run on the whole source bank in WORK (the
 *      normal sampler and grader, journaled: the same command continues);
 *   2. per task, from that run's scorecard: the anchor's pass rate, its C
 *      (against the compiled baseline where one was timed, else eager) and
 *      its geometric-mean speedups;
 *   3. the tasks whose pass rate lies in the band, copied (with the bank's
 *      lib/) into a temporary folder beside OUT with standardized.json;
 *   4. that folder renamed to OUT (a previous standardized bank there is
 *      replaced; anything else is refused before step 1). */
#include "bank_std.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "jsonf.h"
#include "metrics.h"
#include "scorecard.h"
#include "task.h"
#include "track.h"

#define STD_ANCHOR_MAX 256
#define STD_FILE_CAP ((size_t)16 << 20)
#define COPY_DEPTH 8

static const char *const scales[] = {"small", "mid", "large", NULL};
/* Default bands (docs/bank.md): a task is kept when the anchor solves it at
 * least once in 8 samples (learnable: a verified kernel is in reach) and at
 * most this often (hard); larger anchors solve more, so the ceiling falls
 * with scale to leave the same headroom. */
static const double band_hi[] = {0.75, 0.625, 0.5};
#define BAND_LO 0.125

void bank_std_opts_default(struct bank_std_opts *o)
{
	memset(o, 0, sizeof *o);
	o->scale = "small";
	o->target = "auto";
	o->k = BANK_STD_K;
	o->concurrency = 16;
	o->temperature = 0.7;
	o->max_tokens = 8192;
	grade_protocol_default(&o->proto);
}

int bank_std_default_band(const char *scale, double *lo, double *hi)
{
	for (int i = 0; scales[i]; i++)
		if (scale && !strcmp(scale, scales[i])) {
			*lo = BAND_LO;
			*hi = band_hi[i];
			return 0;
		}
	return -1;
}

static void std_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void std_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ka bank standardize: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- step 1: the anchor's run ---------------------------------------------------- */

static int anchor_run(const struct bank_std_opts *o, const char *work)
{
	struct capability_opts co;
	capability_opts_default(&co);
	co.model = o->anchor;
	co.bank = o->bank;
	co.tier = o->tier;
	co.target = o->target;
	co.platform = o->platform;
	co.prompt = o->prompt;
	co.out = work;
	co.k = o->k;
	co.concurrency = o->concurrency;
	co.temperature = o->temperature;
	co.max_tokens = o->max_tokens;
	co.seed = o->seed;
	co.quiet = o->quiet;
	co.fresh = o->fresh;
	co.proto = o->proto;
	return track_capability_run(&co);
}

/* ---- step 2: the anchor's figures per task --------------------------------------- */

struct std_task {
	const char *name, *tier; /* borrowed from the scorecard */
	char *dir;		 /* the task folder in the source bank */
	int n, ok, kept;
	double pass, c;
	struct metrics_figure cx, ex; /* geomean speedups vs compiled, eager */
};

/* The anchor's C of one task: the mean sample score, against the compiled
 * baseline when compiled (else the eager score the grader gave). */
static double task_c(const struct metrics_task *mt, const json_t *samples, int compiled)
{
	double sum = 0;
	for (int j = 0; j < mt->n_samples; j++) {
		const struct metrics_sample *s = &mt->samples[j];
		if (compiled)
			sum += metrics_score(s->ok, s->compiled.present ? s->compiled.median : NAN,
					     s->compiled.present ? s->compiled.lo : NAN);
		else
			sum += json_number_value(
				json_object_get(json_array_get(samples, (size_t)j), "score"));
	}
	return mt->n_samples ? sum / mt->n_samples : 0;
}

/* Figures of every task of the anchor's scorecard sc into st (m's order). */
static void task_figures(const json_t *sc, const struct scorecard_metrics *m, int compiled,
			 double lo, double hi, struct std_task *st)
{
	const json_t *tasks = json_object_get(sc, "tasks");
	for (int i = 0; i < m->n_tasks; i++) {
		const struct metrics_task *mt = &m->tasks[i];
		struct std_task *t = &st[i];
		t->name = mt->name;
		t->tier = mt->tier;
		t->n = mt->n_samples;
		for (int j = 0; j < mt->n_samples; j++)
			t->ok += mt->samples[j].ok != 0;
		t->pass = t->n ? (double)t->ok / t->n : 0;
		t->c = task_c(mt, json_object_get(json_array_get(tasks, (size_t)i), "samples"),
			      compiled);
		struct metrics_agg agg;
		metrics_aggregate(mt, 1, NULL, mt->n_samples, &agg);
		t->cx = agg.geomean_speedup_compiled;
		t->ex = agg.geomean_speedup;
		t->kept = t->n > 0 && t->pass >= lo - 1e-12 && t->pass <= hi + 1e-12;
	}
}

/* The source folder of every task of st, by name. 0 or -1 with e. */
static int task_dirs(const char *bank, struct std_task *st, int n, struct ka_err *e)
{
	struct bank_list l = {0, NULL};
	if (bank_scan(bank, &l, e))
		return -1;
	for (int d = 0; d < l.n; d++) {
		struct ka_task *t = task_load(l.dirs[d], NULL);
		for (int i = 0; t && i < n; i++)
			if (!st[i].dir && !strcmp(st[i].name, t->name))
				st[i].dir = xstrdup(l.dirs[d]);
		task_free(t);
	}
	bank_list_free(&l);
	for (int i = 0; i < n; i++)
		if (!st[i].dir)
			return ka_err_set(e, "%s: no task '%s' (the anchor's run names it)", bank,
					  st[i].name);
	return 0;
}

/* ---- step 3: the standardized bank ----------------------------------------------- */

/* Copy the regular files and folders under src to dst (made), depth-bounded;
 * links and other files are not copied. 0 or -1 with e. */
static int copy_tree(const char *src, const char *dst, int depth, struct ka_err *e)
{
	if (depth > COPY_DEPTH)
		return ka_err_set(e, "%s: folders nested deeper than %d", src, COPY_DEPTH);
	if (util_mkdirs(dst, e))
		return -1;
	DIR *d = opendir(src);
	if (!d)
		return ka_err_set(e, "cannot read %s: %s", src, strerror(errno));
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *s = xasprintf("%s/%s", src, de->d_name),
		     *t = xasprintf("%s/%s", dst, de->d_name);
		struct stat st;
		if (lstat(s, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = copy_tree(s, t, depth + 1, e);
		} else if (lstat(s, &st) == 0 && S_ISREG(st.st_mode)) {
			char *buf = NULL;
			size_t len = 0;
			rc = util_read_file(s, STD_FILE_CAP, &buf, &len, e) ||
					     util_write_file(t, buf, len, e)
				     ? -1
				     : 0;
			free(buf);
		}
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

static json_t *fig_or_null(const struct metrics_figure *f)
{
	return f->defined ? json_real(f->value) : json_null();
}

static json_t *task_json(const struct std_task *t)
{
	return json_pack("{s:s,s:s,s:b,s:i,s:i,s:f,s:f,s:o,s:o}", "name", t->name, "tier", t->tier,
			 "kept", t->kept, "n", t->n, "ok", t->ok, "pass_rate", t->pass, "c", t->c,
			 "compiled_x", fig_or_null(&t->cx), "eager_x", fig_or_null(&t->ex));
}

/* The anchor's figures over the kept tasks: mean pass rate and C, and the
 * geometric-mean speedup against compiled as the capability track computes
 * it (or null with the reason). */
static json_t *kept_figures(const struct scorecard_metrics *m, const struct std_task *st,
			    const char *target, int timing)
{
	struct metrics_task *k = xcalloc((size_t)m->n_tasks + 1, sizeof *k);
	int nk = 0, maxn = 1;
	double pass = 0, c = 0;
	for (int i = 0; i < m->n_tasks; i++)
		if (st[i].kept) {
			k[nk++] = m->tasks[i];
			pass += st[i].pass;
			c += st[i].c;
			maxn = m->tasks[i].n_samples > maxn ? m->tasks[i].n_samples : maxn;
		}
	struct metrics_agg agg;
	metrics_aggregate(k, nk, NULL, maxn, &agg);
	free(k);
	json_t *f = json_pack("{s:o,s:o,s:o}", "pass_rate", nk ? json_real(pass / nk) : json_null(),
			      "c", nk ? json_real(c / nk) : json_null(), "compiled_x",
			      fig_or_null(&agg.geomean_speedup_compiled));
	if (!agg.geomean_speedup_compiled.defined)
		json_object_set_new(
			f, "compiled_x_reason",
			json_string(
				!timing ? "not timed (--no-timing)"
				: strcmp(target, "cuda")
					? "the target has no compiled baseline (only CUDA has one)"
					: "no correct kept kernel was timed against the compiled "
					  "baseline"));
	return f;
}

/* standardized.json of the bank being written in dir. 0 or -1 with e. */
static int write_manifest(const struct bank_std_opts *o, const char *dir, const json_t *sc,
			  const struct scorecard_metrics *m, const struct std_task *st,
			  const char *work, struct ka_err *e)
{
	char hash[17], created[32];
	int n = 0;
	if (bank_content_hash_hex(dir, hash, &n, e))
		return -1;
	util_iso_now(created, sizeof created);
	const char *target = json_string_value(json_object_get(sc, "target"));
	int compiled = !strcmp(target, "cuda") && o->proto.timing;
	json_t *tasks = json_array();
	for (int i = 0; i < m->n_tasks; i++)
		json_array_append_new(tasks, task_json(&st[i]));
	const json_t *bank = json_object_get(sc, "bank");
	json_t *j = json_pack(
		"{s:s,s:s,s:s,s:s,s:i,s:[f,f],s:s,s:s,s:b,s:s,s:i,s:{s:O,s:O,s:O},s:s,s:o,s:o}",
		"format", BANK_STD_FORMAT, "created", created, "scale", o->scale, "anchor",
		o->anchor, "k", o->k, "band", o->lo, o->hi, "baseline",
		compiled ? "compiled" : "eager", "target", target, "timed", o->proto.timing, "hash",
		hash, "n_tasks", n, "source", "path", json_object_get(bank, "path"), "hash",
		json_object_get(bank, "hash"), "n_tasks", json_object_get(bank, "n_tasks"),
		"anchor_run", work, "figures", kept_figures(m, st, target, o->proto.timing),
		"tasks", tasks);
	char *path = xasprintf("%s/%s", dir, BANK_STD_FILE);
	char *txt = json_dumps(j, JSON_INDENT(1));
	char *line = xasprintf("%s\n", txt);
	int rc = util_write_file(path, line, strlen(line), e);
	free(line);
	free(txt);
	free(path);
	json_decref(j);
	return rc ? -1 : 0;
}

/* The kept tasks of st and the bank's lib/ copied into dir, with the
 * manifest. 0 or -1 with e. */
static int build_bank(const struct bank_std_opts *o, const char *dir, const json_t *sc,
		      const struct scorecard_metrics *m, const struct std_task *st,
		      const char *work, struct ka_err *e)
{
	if (util_mkdirs(dir, e))
		return -1;
	for (int i = 0; i < m->n_tasks; i++) {
		if (!st[i].kept)
			continue;
		const char *base = strrchr(st[i].dir, '/');
		char *dst = xasprintf("%s/%s/%s", dir, st[i].tier, base ? base + 1 : st[i].dir);
		int rc = copy_tree(st[i].dir, dst, 0, e);
		free(dst);
		if (rc)
			return -1;
	}
	char *lib = xasprintf("%s/lib", o->bank), *dlib = xasprintf("%s/lib", dir);
	struct stat sb;
	int rc = stat(lib, &sb) == 0 && S_ISDIR(sb.st_mode) ? copy_tree(lib, dlib, 0, e) : 0;
	free(lib);
	free(dlib);
	return rc ? -1 : write_manifest(o, dir, sc, m, st, work, e);
}

/* ---- step 4 and the command ---------------------------------------------------------- */

/* OUT may be written: absent, empty, or a previous standardized bank. */
static int out_writable(const char *out, struct ka_err *e)
{
	DIR *d = opendir(out);
	if (!d)
		return errno == ENOENT ? 0 : ka_err_set(e, "%s: %s", out, strerror(errno));
	int entries = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	char *m = xasprintf("%s/%s", out, BANK_STD_FILE);
	int ours = access(m, F_OK) == 0;
	free(m);
	if (entries && !ours)
		return ka_err_set(
			e,
			"%s exists and is not a standardized bank (no %s): choose another "
			"OUT or remove it",
			out, BANK_STD_FILE);
	return 0;
}

static int check_opts(const struct bank_std_opts *o, struct ka_err *e)
{
	double lo, hi;
	if (bank_std_default_band(o->scale, &lo, &hi))
		return ka_err_set(e, "--scale must be small, mid or large, not '%s'", o->scale);
	if (strlen(o->anchor) > STD_ANCHOR_MAX)
		return ka_err_set(e, "--anchor: a model spec of at most %d bytes", STD_ANCHOR_MAX);
	if (!(o->lo >= 0 && o->lo <= o->hi && o->hi <= 1))
		return ka_err_set(e, "--band LO,HI needs 0 <= LO <= HI <= 1");
	struct bank_list l = {0, NULL};
	if (bank_scan(o->bank, &l, e))
		return -1;
	int n = l.n;
	bank_list_free(&l);
	if (!n)
		return ka_err_set(e, "%s: no task in the bank", o->bank);
	char *rb = realpath(o->bank, NULL), *ro = realpath(o->out, NULL);
	int same = rb && ro && !strcmp(rb, ro);
	free(rb);
	free(ro);
	if (same)
		return ka_err_set(e,
				  "OUT %s is the source bank: write the standardized bank "
				  "elsewhere",
				  o->out);
	return out_writable(o->out, e);
}

/* Print what was kept. */
static void report(const struct bank_std_opts *o, const struct std_task *st, int n)
{
	int kept = 0;
	for (int i = 0; i < n; i++)
		kept += st[i].kept;
	printf("standardized bank: %s (%s, anchor %s, k %d, pass-rate band [%.3f, %.3f]): %d of "
	       "%d tasks kept\n",
	       o->out, o->scale, o->anchor, o->k, o->lo, o->hi, kept, n);
	for (int i = 0; i < n && !o->quiet; i++)
		printf("  %-4s %-3s %-28s pass %d/%d  C %.3f\n", st[i].kept ? "keep" : "drop",
		       st[i].tier, st[i].name, st[i].ok, st[i].n, st[i].c);
}

/* Steps 2 to 4 on the anchor's scorecard in work. 0 or -1 with e. */
static int standardize(const struct bank_std_opts *o, const char *work, struct ka_err *e)
{
	char *scp = xasprintf("%s/scorecard.json", work);
	json_t *sc = scorecard_check_file(scp, e);
	free(scp);
	if (!sc)
		return -1;
	struct scorecard_metrics m;
	scorecard_metrics_from_json(sc, &m);
	struct std_task *st = xcalloc((size_t)m.n_tasks + 1, sizeof *st);
	const char *target = json_string_value(json_object_get(sc, "target"));
	task_figures(sc, &m, !strcmp(target, "cuda") && o->proto.timing, o->lo, o->hi, st);
	char *tmp = xasprintf("%s.tmp-%d", o->out, (int)getpid());
	util_rmtree(tmp);
	int rc = task_dirs(o->bank, st, m.n_tasks, e) || build_bank(o, tmp, sc, &m, st, work, e)
			 ? -1
			 : 0;
	if (!rc && out_writable(o->out, e) == 0) {
		util_rmtree(o->out);
		if (rename(tmp, o->out))
			rc = ka_err_set(e, "cannot rename %s to %s: %s", tmp, o->out,
					strerror(errno));
	} else if (!rc) {
		rc = -1;
	}
	if (!rc)
		report(o, st, m.n_tasks);
	util_rmtree(tmp);
	for (int i = 0; i < m.n_tasks; i++)
		free(st[i].dir);
	free(st);
	free(tmp);
	scorecard_metrics_free(&m);
	json_decref(sc);
	return rc;
}

int bank_std_run(const struct bank_std_opts *in)
{
	struct bank_std_opts o = *in;
	struct ka_err e;
	if (!o.band_set)
		bank_std_default_band(o.scale, &o.lo, &o.hi);
	if (check_opts(&o, &e)) {
		std_fail("%s", e.msg);
		return KA_EXIT_USAGE;
	}
	size_t len = strlen(o.out);
	while (len > 1 && o.out[len - 1] == '/')
		len--;
	char *work = o.work ? xstrdup(o.work) : xasprintf("%.*s.anchor", (int)len, o.out);
	int rc = anchor_run(&o, work);
	if (rc) {
		std_fail("the anchor's run in %s did not finish (exit %d); the same command "
			 "continues it",
			 work, rc);
		free(work);
		return rc == KA_EXIT_USAGE ? KA_EXIT_USAGE : KA_EXIT_FAIL;
	}
	rc = standardize(&o, work, &e) ? KA_EXIT_FAIL : KA_EXIT_OK;
	if (rc)
		std_fail("%s", e.msg);
	free(work);
	return rc;
}

/* ---- reading a standardized bank ------------------------------------------------------ */

static int read_figures(const struct jsonf *c, const json_t *f, struct bank_std_info *out)
{
	static const char *const keys[] = {"pass_rate", "c", "compiled_x", "compiled_x_reason",
					   NULL};
	json_t *p, *cc, *x, *why;
	out->pass_rate = out->c = out->compiled_x = -1;
	if (jsonf_type(c, "figures", f, JSON_OBJECT, "an object") ||
	    jsonf_keys(c, "figures", f, keys, NULL) ||
	    jsonf_get(c, f, "figures", "pass_rate", 1, &p) ||
	    jsonf_get(c, f, "figures", "c", 1, &cc) ||
	    jsonf_get(c, f, "figures", "compiled_x", 1, &x) ||
	    jsonf_get(c, f, "figures", "compiled_x_reason", 0, &why))
		return -1;
	if ((!json_is_null(p) && jsonf_number(c, "figures.pass_rate", p, 0, 1, &out->pass_rate)) ||
	    (!json_is_null(cc) && jsonf_number(c, "figures.c", cc, 0, 1, &out->c)) ||
	    (!json_is_null(x) &&
	     jsonf_number(c, "figures.compiled_x", x, 1e-300, 1e300, &out->compiled_x)))
		return -1;
	char *s = NULL;
	if (why && jsonf_string(c, "figures.compiled_x_reason", why, 255, &s))
		return -1;
	snprintf(out->compiled_x_reason, sizeof out->compiled_x_reason, "%s", s ? s : "");
	free(s);
	if (json_is_null(x) && !why)
		return jsonf_bad(c, "figures.compiled_x_reason", "missing (compiled_x is null)");
	return 0;
}

/* A string field of the manifest into out (cap bytes with the NUL). */
static int read_str(const struct jsonf *c, const json_t *j, const char *key, char *out, size_t cap)
{
	json_t *v;
	char *s = NULL;
	if (jsonf_get(c, j, "", key, 1, &v) || jsonf_string(c, key, v, cap - 1, &s))
		return -1;
	snprintf(out, cap, "%s", s);
	free(s);
	return 0;
}

static int read_manifest(const struct jsonf *c, const json_t *j, struct bank_std_info *out)
{
	json_t *v, *band, *src;
	int64_t k, n, ns;
	size_t nb;
	if (jsonf_type(c, "", j, JSON_OBJECT, "an object") ||
	    read_str(c, j, "format", out->hash, sizeof out->hash))
		return -1;
	if (strcmp(out->hash, BANK_STD_FORMAT))
		return jsonf_bad(c, "format", "\"%s\", this ka reads \"%s\"", out->hash,
				 BANK_STD_FORMAT);
	if (read_str(c, j, "scale", out->scale, sizeof out->scale) ||
	    read_str(c, j, "anchor", out->anchor, STD_ANCHOR_MAX + 1) ||
	    read_str(c, j, "baseline", out->baseline, sizeof out->baseline) ||
	    read_str(c, j, "hash", out->hash, sizeof out->hash) ||
	    jsonf_get(c, j, "", "k", 1, &v) || jsonf_int(c, "k", v, 1, 1000, &k) ||
	    jsonf_get(c, j, "", "n_tasks", 1, &v) ||
	    jsonf_int(c, "n_tasks", v, 0, BANK_MAX_TASKS, &n) ||
	    jsonf_get(c, j, "", "source", 1, &src) ||
	    jsonf_type(c, "source", src, JSON_OBJECT, "an object") ||
	    jsonf_get(c, src, "source", "n_tasks", 1, &v) ||
	    jsonf_int(c, "source.n_tasks", v, 0, BANK_MAX_TASKS, &ns) ||
	    jsonf_get(c, j, "", "band", 1, &band) || jsonf_array(c, "band", band, 2, 2, &nb) ||
	    jsonf_number(c, "band[0]", json_array_get(band, 0), 0, 1, &out->lo) ||
	    jsonf_number(c, "band[1]", json_array_get(band, 1), out->lo, 1, &out->hi) ||
	    jsonf_get(c, j, "", "figures", 1, &v) || read_figures(c, v, out))
		return -1;
	double lo, hi;
	if (bank_std_default_band(out->scale, &lo, &hi))
		return jsonf_bad(c, "scale", "\"%s\" is not small, mid or large", out->scale);
	if (strcmp(out->baseline, "compiled") && strcmp(out->baseline, "eager"))
		return jsonf_bad(c, "baseline", "\"%s\" is not compiled or eager", out->baseline);
	if (strlen(out->hash) != 16 || strspn(out->hash, "0123456789abcdef") != 16)
		return jsonf_bad(c, "hash", "expected 16 lowercase hex digits");
	out->k = (int)k;
	out->n_tasks = (int)n;
	out->n_source = (int)ns;
	return 0;
}

int bank_std_read(const char *bank_dir, struct bank_std_info *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	char *path = xasprintf("%s/%s", bank_dir, BANK_STD_FILE);
	char *txt = NULL;
	size_t len = 0;
	int rc = 1;
	if (access(path, F_OK) != 0)
		goto done;
	rc = -1;
	if (util_read_file(path, STD_FILE_CAP, &txt, &len, e))
		goto done;
	json_error_t je;
	json_t *j = json_loadb(txt, len, 0, &je);
	if (!j) {
		ka_err_set(e, "%s: not JSON (%s at line %d)", path, je.text, je.line);
		goto done;
	}
	struct jsonf c = {path, e, 0};
	rc = read_manifest(&c, j, out) ? -1 : 0;
	json_decref(j);
done:
	free(txt);
	free(path);
	return rc;
}

json_t *bank_std_summary_json(const struct bank_std_info *s)
{
	json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:[f,f],s:i,s:i,s:s,s:o,s:o,s:o}", "format",
			      BANK_STD_FORMAT, "scale", s->scale, "anchor", s->anchor, "k", s->k,
			      "band", s->lo, s->hi, "n_tasks", s->n_tasks, "n_source_tasks",
			      s->n_source, "baseline", s->baseline, "pass_rate",
			      s->pass_rate < 0 ? json_null() : json_real(s->pass_rate), "c",
			      s->c < 0 ? json_null() : json_real(s->c), "compiled_x",
			      s->compiled_x > 0 ? json_real(s->compiled_x) : json_null());
	if (s->compiled_x <= 0)
		json_object_set_new(j, "compiled_x_reason",
				    json_string(*s->compiled_x_reason ? s->compiled_x_reason
								      : "none recorded"));
	return j;
}
