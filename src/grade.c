/* grade.c: the grading protocol, target-agnostic (see grade.h and
 * docs/grader.md). Trust: this file runs in the parent. It never loads or
 * runs candidate code; it starts the recorder (sandboxed, candidate host
 * code) and the runner (trusted replay) and decides everything from data. */
#include "grade.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmp.h"
#include "devgold.h"
#include "devlock.h"
#include "gen.h"
#include "gold.h"
#include "ka_gen.h"
#include "plan.h"
#include "recclient.h"
#include "runclient.h"
#include "target.h"

#define GRADE_MAX_SHAPES (KA_MAX_SHAPES + 1)
#define AHEAD_NICE 10	     /* the gold ahead's threads (ahead_main) */
#define AHEAD_MIN_THREADS 16 /* a grade with fewer has no gold ahead (ahead_start) */
#define GRADE_SLOT_EAGER 14
#define GRADE_SLOT_COMPILED 15
#define GRADE_BOOT_REPS 1000
#define GRADE_SAMPLE_ELEMS 65536   /* sampled output elements per call, roughly */
#define GRADE_SAMPLE_CAP (1 << 19) /* sampled elements a call may return (runner: 1 << 20) */
#define GRADE_GOLD_CHECK_S 1.0	   /* parent's gold wall seconds, untimed call */
#define GRADE_GOLD_TIMED_S 0.05	   /* parent's gold wall seconds, timed call */
#define GRADE_GEN_CHECKED 64	   /* task and shape keys a session remembers as checked */

struct grade_session {
	const struct target_ops *ops;
	struct grade_protocol proto;
	struct runclient *rc;
	json_t *device;
	uint64_t nonce; /* secret: never written anywhere */
	uint64_t calls; /* call counter: every call gets fresh keys */
	char *workdir;
	char *recorder;
	int test_grade;
	int cpu_device;	 /* the kernels run on the parent's cores (PoCL) */
	int precompiled; /* grade_session_precompiled: no gold ahead */
	double peak_bw, peak_flops;
	double window_ns;     /* subtracted from every timed call (CUDA's calibration) */
	struct devlock *lock; /* shared with the other sessions on this device */
	int phased;	      /* the runner takes phased calls (and KA_PHASED_CALLS
			       * is not "off"): see call_issue */
	uint64_t base_key;    /* what the baseline slots hold, loaded and checked
			       * against gold (0: nothing): see load_baselines */
	uint64_t gen_checked[GRADE_GEN_CHECKED]; /* task and shape keys whose untimed
						  * large call passed the generator and
						  * lazy gold checks (see call_gold) */
	int n_gen_checked;
	int idle; /* grade_session_idle: the runner's memory freed, counted idle */
};

/* Everything about one shape of one task during one grade. */
struct shape_state {
	struct ka_shape sh;
	char name[128];
	int n_tensors;
	int64_t numel[2 * KA_MAX_TENSORS];
	uint64_t bytes[2 * KA_MAX_TENSORS];
	int dtype[2 * KA_MAX_TENSORS];
	int64_t items;
	int64_t per_item[KA_MAX_TENSORS];
	struct gen_params gp[KA_MAX_TENSORS]; /* generator parameters of each input here */
	int lazy_checked;		      /* the lazy gold was compared with the C gold here */
	int slot;
	void *host_in[KA_MAX_TENSORS]; /* CPU copy of the current inputs */
	double *gold[KA_MAX_TENSORS];  /* gold per output, full numel, kept across
					  calls and touched once up front: a
					  sample's items land on random pages,
					  and faulting them in per call cost more
					  than the gold itself */
};

void grade_protocol_default(struct grade_protocol *p)
{
	p->min_samples = 20;
	p->max_samples = 500;
	p->max_seconds = 60;
	p->ci_target = 0.01;
	p->block = 5;
	p->checks_per_shape = 2;
	p->sample_items = 256;
	p->full_check_max = 1 << 20;
	p->call_timeout = 20;
	p->record_timeout = 10;
	p->compile_timeout = 120;
	p->floor_factor = 1e-3;
	p->timing = 1;
	p->pipeline = GRADE_PIPELINE_AUTO;
}

static const char *const PIPELINE_NAMES[] = {"off", "on", "auto"};

int grade_pipeline_parse(const char *text, int *out)
{
	for (int i = 0; i < 3; i++)
		if (text && !strcmp(text, PIPELINE_NAMES[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

json_t *grade_protocol_json(const struct grade_protocol *p)
{
	int pl = p->pipeline >= 0 && p->pipeline <= 2 ? p->pipeline : GRADE_PIPELINE_AUTO;
	return json_pack("{s:i,s:i,s:f,s:f,s:i,s:i,s:i,s:I,s:f,s:f,s:f,s:s,s:s,s:s,s:s}",
			 "min_samples", p->min_samples, "max_samples", p->max_samples,
			 "max_seconds", p->max_seconds, "ci_target", p->ci_target, "block",
			 p->block, "checks_per_shape", p->checks_per_shape, "sample_items",
			 p->sample_items, "full_check_max", (json_int_t)p->full_check_max,
			 "call_timeout_s", p->call_timeout, "record_timeout_s", p->record_timeout,
			 "floor_factor", p->floor_factor, "speedup",
			 "median(baseline)/median(candidate)", "ci",
			 "95% bootstrap (1000 resamples); median CI by order statistics", "order",
			 "ABAB blocks, flush before every sample, fresh inputs every call",
			 "pipeline", PIPELINE_NAMES[pl]);
}

static double json_num(const json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The parts of a session both kinds share: target, protocol, nonce, the
 * work folder and the recorder's path. NULL with e. */
static struct grade_session *session_new(const char *target, const struct grade_protocol *p,
					 const char *workdir, struct ka_err *e)
{
	const struct target_ops *ops = target_find(target);
	if (!ops) {
		ka_err_set(e, "unknown or unavailable target '%s'", target ? target : "");
		return NULL;
	}
	if (util_mkdirs(workdir, e))
		return NULL;
	struct grade_session *s = xcalloc(1, sizeof *s);
	s->ops = ops;
	s->proto = *p;
	s->nonce = util_random64();
	char *real = realpath(workdir, NULL);
	s->workdir = real ? real : xstrdup(workdir);
	s->recorder = xasprintf("%s/%s", util_exe_dir(), ops->recorder);
	return s;
}

struct grade_session *grade_session_open(const char *target, const char *platform, int device,
					 const struct grade_protocol *p, const char *workdir,
					 struct ka_err *e)
{
	struct grade_session *s = session_new(target, p, workdir, e);
	if (!s)
		return NULL;
	char *key = xasprintf("%s:%s:%d", s->ops->name, platform ? platform : "", device);
	s->lock = devlock_get(key);
	free(key);
	/* The runner calibrates its timing window at start: exclusive. */
	devlock_acquire(s->lock, 1);
	s->rc = runclient_start(s->ops->name, platform, device, s->workdir, e);
	int hello = s->rc ? runclient_hello(s->rc, &s->device, e) : -1;
	devlock_release(s->lock);
	if (hello) {
		grade_session_close(s);
		return NULL;
	}
	json_t *tg = json_object_get(s->device, "test_grade");
	s->test_grade = json_is_true(tg);
	/* Physical ceilings for the roofline floor: what the runner reports, or
	 * generous defaults by device type (docs/grader.md). */
	const char *type = json_string_value(json_object_get(s->device, "type"));
	int gpu = type && !strcmp(type, "gpu");
	s->cpu_device = type && !strcmp(type, "cpu");
	s->peak_bw = json_num(s->device, "peak_bytes_per_s", gpu ? 1e13 : 1e12);
	s->peak_flops = json_num(s->device, "peak_flops", gpu ? 4e15 : 1e14);
	/* What the event window costs besides the kernels, as the runner
	 * calibrated it at start (docs/grader.md, "Timing"); a value outside
	 * [0, 50] us is not believed. */
	double over = json_num(s->device, "window_overhead_us", 0);
	s->window_ns = over > 0 && over <= 50 ? over * 1e3 : 0;
	const char *ph = getenv("KA_PHASED_CALLS");
	s->phased = json_is_true(json_object_get(s->device, "phased_calls")) &&
		    !(ph && !strcmp(ph, "off"));
	return s;
}

struct grade_session *grade_session_open_offline(const char *target, const json_t *device,
						 const struct grade_protocol *p,
						 const char *workdir, struct ka_err *e)
{
	if (!json_is_object(device)) {
		ka_err_set(e, "the device description is not a JSON object");
		return NULL;
	}
	struct grade_session *s = session_new(target, p, workdir, e);
	if (!s)
		return NULL;
	s->device = json_deep_copy(device);
	s->test_grade = 1;
	return s;
}

void grade_session_close(struct grade_session *s)
{
	if (!s)
		return;
	if (s->idle)
		devlock_idle(s->lock, -1);
	runclient_stop(s->rc);
	devlock_put(s->lock);
	json_decref(s->device);
	free(s->workdir);
	free(s->recorder);
	free(s);
}

void grade_session_idle(struct grade_session *s)
{
	/* Alone on its device nobody needs its memory: the runner stays warm. */
	if (!s || !s->rc || s->idle || devlock_users(s->lock) <= 1)
		return;
	runclient_forget(s->rc);
	s->base_key = 0;
	s->idle = 1;
	devlock_idle(s->lock, 1);
}

const json_t *grade_session_device(const struct grade_session *s)
{
	return s->device;
}

int grade_precompile(struct grade_session *s, const struct ka_task *t, int n,
		     const char *const *srcs, const size_t *lens, const struct target_width *w,
		     void (*done)(int i, void *arg), void *arg, struct ka_err *e)
{
	if (!s->ops->precompile || n <= 0)
		return 0;
	return s->ops->precompile(t, n, srcs, lens, s->workdir, s->device, w, done, arg, e);
}

int grade_compiles_ahead(const struct grade_session *s)
{
	return s->ops->precompile != NULL;
}

void grade_session_precompiled(struct grade_session *s)
{
	s->precompiled = 1;
}

int grade_warm(const struct grade_session *s, const struct ka_task *t, const char *src, size_t len,
	       struct ka_err *e)
{
	if (!s->ops->precompile)
		return 1;
	if (src) {
		struct ka_err ce;
		const struct target_width one = {.jobs = 1};
		s->ops->precompile(t, 1, &src, &len, s->workdir, s->device, &one, NULL, NULL, &ce);
		return 0;
	}
	struct target_baseline base[2];
	int n = 0;
	if (s->ops->baselines(t, &t->bench, s->device, s->workdir, base, &n, e))
		return -1;
	for (int b = 0; b < n; b++)
		target_baseline_free(&base[b]);
	/* The device gold module too (devgold.h; built on first need else). */
	if (s->ops->gold_module && t->trusted && devgold_enabled() &&
	    json_is_true(json_object_get(s->device, "device_check"))) {
		struct ka_err ge;
		free(s->ops->gold_module(t, s->device, s->workdir, &ge));
	}
	return 0;
}

const char *grade_session_target(const struct grade_session *s)
{
	return s->ops->name;
}

/* ---- helpers ---- */

static void set_verdict(struct grade_result *r, enum verdict v, const char *phase,
			const char *shape, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void set_verdict(struct grade_result *r, enum verdict v, const char *phase,
			const char *shape, const char *fmt, ...)
{
	r->verdict = v;
	snprintf(r->phase, sizeof r->phase, "%s", phase);
	snprintf(r->shape, sizeof r->shape, "%s", shape ? shape : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof r->detail, fmt, ap);
	va_end(ap);
}

static int shape_init(const struct ka_task *t, const struct ka_shape *sh, int slot,
		      const struct grade_protocol *p, struct shape_state *st, struct ka_err *e)
{
	memset(st, 0, sizeof *st);
	st->sh = *sh;
	st->slot = slot;
	task_shape_str(t, sh, st->name, sizeof st->name);
	st->n_tensors = t->n_inputs + t->n_outputs;
	for (int i = 0; i < st->n_tensors; i++) {
		const struct ka_tensor_spec *ts =
			i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
		if (task_numel(t, ts, sh, &st->numel[i], e))
			return -1;
		size_t es = dtype_size(ts->dtype);
		if (st->numel[i] < 0 || (uint64_t)st->numel[i] > (16ull << 30) / es)
			return ka_err_set(e, "%s: tensor %s at %s is too large", t->name, ts->name,
					  st->name);
		st->bytes[i] = (uint64_t)st->numel[i] * es;
		st->dtype[i] = (int)ts->dtype;
	}
	if (task_item_count(t, sh, &st->items, e))
		return -1;
	for (int k = 0; k < t->n_inputs; k++)
		if (gen_params_at(t, k, sh, &st->gp[k], e))
			return -1;
	for (int j = 0; j < t->n_outputs; j++) {
		struct ka_err e2;
		if (expr_eval(t->outputs[j].per_item, sh->v, &st->per_item[j], &e2))
			return ka_err_set(e, "%s: outputs[%d].per_item: %s", t->name, j, e2.msg);
	}
	(void)p; /* full or sampled is chosen per call by the gold's cost */
	return 0;
}

static void shape_free(struct shape_state *st)
{
	for (int i = 0; i < KA_MAX_TENSORS; i++) {
		util_free_unforked(st->host_in[i]);
		util_free_unforked(st->gold[i]);
	}
}

/* The recorder request: the tensors as the candidate will see them, the
 * parameters and the device (docs/plan-format.md), plus what the target adds
 * (CUDA: the kernels' parameter layouts). NULL with e on failure. */
static char *record_request(const struct grade_session *s, const struct ka_task *t,
			    const struct shape_state *st, const json_t *extra, struct ka_err *e)
{
	struct recclient_tensor ts[2 * KA_MAX_TENSORS];
	memset(ts, 0, sizeof ts);
	for (int i = 0; i < st->n_tensors; i++) {
		const struct ka_tensor_spec *sp =
			i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
		ts[i].name = sp->name;
		ts[i].dtype = (int32_t)sp->dtype;
		ts[i].ndim = sp->ndim;
		for (int d = 0; d < sp->ndim; d++)
			expr_eval(sp->shape[d], st->sh.v, &ts[i].shape[d], NULL);
		ts[i].numel = st->numel[i];
		ts[i].bytes = st->bytes[i];
	}
	const char *names[KA_MAX_PARAMS];
	for (int i = 0; i < t->n_params; i++)
		names[i] = t->params[i];
	char *dev = json_dumps(s->device, JSON_COMPACT);
	char *text = recclient_request_json(s->ops->name, t->n_inputs, t->n_outputs, ts,
					    t->n_params, names, st->sh.v, dev, e);
	free(dev);
	if (!text || (!extra && !t->n_scalars))
		return text;
	json_t *req = json_loads(text, 0, NULL);
	free(text);
	if (!req) {
		ka_err_set(e, "recorder request: cannot merge the target's fields");
		return NULL;
	}
	if (extra)
		json_object_update(req, (json_t *)extra);
	if (t->n_scalars) { /* the task's float scalars, for ka_args */
		json_t *sn = json_array(), *sv = json_array();
		for (int i = 0; i < t->n_scalars; i++) {
			json_array_append_new(sn, json_string(t->scalar_names[i]));
			json_array_append_new(sv, json_real(t->scalars[i]));
		}
		json_object_set_new(req, "scalars",
				    json_pack("{s:o,s:o}", "names", sn, "values", sv));
	}
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return text;
}

/* Map a recorder/runner verdict name to the enum (unknown: runtime_fault). */
static enum verdict verdict_of(const char *name)
{
	int v = verdict_parse(name);
	return v < 0 ? VERDICT_RUNTIME_FAULT : (enum verdict)v;
}

/* Element indices of output j owned by the given items (contiguous blocks).
 * When they are more than cap, each item gives a spread of its elements
 * instead: its first and last and evenly spaced ones from a random phase
 * (items larger than the runner may send back are still checked). */
static int64_t *sample_elems(const int64_t *items, int64_t n_items, int64_t per, int64_t cap,
			     uint64_t seed, int64_t *n_out)
{
	int64_t take = per;
	if (n_items > 0 && n_items * per > cap)
		take = cap / n_items < 2 ? 2 : cap / n_items;
	if (take > per)
		take = per;
	int64_t n = n_items * take;
	int64_t *idx = xmalloc((size_t)(n ? n : 1) * sizeof *idx);
	int64_t k = 0;
	for (int64_t i = 0; i < n_items; i++) {
		if (take == per) {
			for (int64_t q = 0; q < per; q++)
				idx[k++] = items[i] * per + q;
			continue;
		}
		int64_t step = (per - 1) / (take - 1), phase = (int64_t)(seed % (uint64_t)step);
		idx[k++] = items[i] * per;
		for (int64_t q = 1; q < take - 1; q++)
			idx[k++] = items[i] * per + phase + q * step;
		idx[k++] = items[i] * per + per - 1;
	}
	*n_out = n;
	return idx;
}

static struct grade_figure figure_of(const double *x, int n, double scale)
{
	struct grade_figure f = {0};
	if (n <= 0)
		return f;
	f.valid = 1;
	f.n = n;
	f.median = stats_median(x, (size_t)n) * scale;
	struct ci c = stats_median_ci(x, (size_t)n);
	f.lo = c.lo * scale;
	f.hi = c.hi * scale;
	return f;
}

static int converged(const double *x, int n, const struct grade_protocol *p)
{
	if (n < p->min_samples)
		return 0;
	double m = stats_median(x, (size_t)n);
	struct ci c = stats_median_ci(x, (size_t)n);
	double half = (c.hi - c.lo) / 2;
	return m > 0 && half / m <= p->ci_target;
}

/* Pick the benchmark shape: the override, else on a test-grade device the
 * largest check shape (a CPU cannot run the GPU-sized benchmark in useful
 * time), else the task's benchmark shape. */
static int bench_shape(const struct grade_session *s, const struct ka_task *t, const char *override,
		       struct ka_shape *out, struct ka_err *e)
{
	if (override) {
		struct ka_err ce;
		if (task_shape_parse(t, override, out, e))
			return -1;
		if (task_check_shape(t, out, 0, &ce))
			return ka_err_set(e, "%s/task.json: %s at --bench-shape %s", t->dir, ce.msg,
					  override);
		return 0;
	}
	if (!s->test_grade) {
		*out = t->bench;
		return 0;
	}
	/* The check shape with the most data (bytes of inputs and outputs). */
	int64_t best = -1;
	for (int i = 0; i < t->n_checks; i++) {
		int64_t n = 0;
		for (int k = 0; k < t->n_inputs + t->n_outputs; k++) {
			const struct ka_tensor_spec *ts =
				k < t->n_inputs ? &t->inputs[k] : &t->outputs[k - t->n_inputs];
			int64_t ne;
			if (task_numel(t, ts, &t->checks[i], &ne, e))
				return -1;
			n += ne * (int64_t)dtype_size(ts->dtype);
		}
		if (n > best) {
			best = n;
			*out = t->checks[i];
		}
	}
	return 0;
}

static int only_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* ---- the pure parts: sample size, output comparison, timing checks ---- */

int64_t grade_sample_count(int sample_items, const int64_t *per_item, int n_outputs)
{
	/* Random items plus the boundary: at most ~64 Ki elements come back per
	 * call, so row-sized items (softmax rows) sample fewer rows. */
	int64_t widest = 1;
	for (int j = 0; j < n_outputs; j++)
		if (per_item[j] > widest)
			widest = per_item[j];
	int64_t n_random = (int64_t)sample_items;
	if (n_random * widest > GRADE_SAMPLE_ELEMS)
		n_random = GRADE_SAMPLE_ELEMS / widest;
	if (n_random < 8)
		n_random = 8;
	return n_random;
}

void grade_tally_init(struct grade_tally *tl)
{
	memset(tl, 0, sizeof *tl);
	tl->mismatches = json_array();
}

void grade_tally_free(struct grade_tally *tl)
{
	if (!tl)
		return;
	json_decref(tl->mismatches);
	tl->mismatches = NULL;
}

void grade_compare_output(const char *name, int dtype, const uint8_t *got, int64_t n,
			  const int64_t *idx, const double *gold, double atol, double rtol,
			  struct grade_tally *tl)
{
	size_t es = dtype_size((enum ka_dtype)dtype);
	int is_int = ka_cmp_is_int(dtype);
	if (is_int)
		atol = rtol = 0; /* integer outputs (indices, masks, quantised) are exact */
	for (int64_t q = 0; q < n; q++) {
		int64_t at = idx ? idx[q] : q;
		double v = ka_cmp_value(got + (size_t)q * es, dtype);
		double want = gold[at];
		char why[sizeof tl->inexact_why];
		if (is_int && isfinite(want) &&
		    dtype_int_gold_check((enum ka_dtype)dtype, want, why, sizeof why)) {
			if (!tl->n_inexact++) {
				tl->inexact_output = name;
				tl->inexact_index = at;
				memcpy(tl->inexact_why, why, sizeof why);
			}
			continue;
		}
		/* The rule the device check applies too (src/common/cmp.h). */
		int how = ka_cmp_elem(v, want, atol, rtol);
		if (how == KA_CMP_OK)
			continue;
		int finite = how != KA_CMP_NONFINITE;
		double err = finite ? fabs(v - want) : INFINITY;
		if (!finite)
			tl->n_nonfinite++;
		tl->n_bad++;
		if (finite && err > tl->max_err)
			tl->max_err = err;
		if (json_array_size(tl->mismatches) < GRADE_MAX_MISMATCH)
			json_array_append_new(tl->mismatches,
					      json_pack("{s:s,s:I,s:f,s:f}", "output", name,
							"index", (json_int_t)at, "got",
							finite ? v : 0.0, "expected", want));
	}
}

/* v as evidence: an integer (the values of integer outputs, and integral
 * floats) with all its digits, so that 123456789 and 123456790 differ;
 * anything else with 9 significant digits. */
static const char *evidence_num(double v, char *buf, size_t cap)
{
	if (v < 9007199254740992.0 && v > -9007199254740992.0 && v == (double)(int64_t)v)
		snprintf(buf, cap, "%lld", (long long)v);
	else
		snprintf(buf, cap, "%.9g", v);
	return buf;
}

enum verdict grade_tally_describe(const struct grade_tally *tl, double atol, double rtol,
				  int sampled, char *detail, size_t cap)
{
	char first[512] = "", g[32], w[32];
	size_t fl = 0;
	for (size_t m = 0; m < json_array_size(tl->mismatches) && m < 3; m++) {
		json_t *x = json_array_get(tl->mismatches, m);
		fl += (size_t)snprintf(
			first + fl, sizeof first - fl, "%s[%lld] got %s want %s; ",
			json_string_value(json_object_get(x, "output")),
			(long long)json_integer_value(json_object_get(x, "index")),
			evidence_num(json_real_value(json_object_get(x, "got")), g, sizeof g),
			evidence_num(json_real_value(json_object_get(x, "expected")), w, sizeof w));
		if (fl >= sizeof first)
			break;
	}
	snprintf(detail, cap,
		 "%lld of the checked elements are outside atol %g + rtol %g%s (%lld "
		 "non-finite); %s",
		 (long long)tl->n_bad, atol, rtol, sampled ? " (sampled items)" : "",
		 (long long)tl->n_nonfinite, first);
	return tl->n_nonfinite ? VERDICT_NONFINITE : VERDICT_WRONG_ANSWER;
}

double grade_roofline_s(int64_t min_bytes, int64_t min_flops, double peak_bw, double peak_flops)
{
	return fmax((double)min_bytes / peak_bw, (double)min_flops / peak_flops);
}

enum verdict grade_timing_check(double sum_event_s, double sum_wall_s, double median_us,
				double floor_s, double floor_factor, char *why, size_t cap)
{
	if (sum_event_s > sum_wall_s * 1.0001) {
		snprintf(why, cap, "device time %.6f s exceeds the wall-clock time %.6f s",
			 sum_event_s, sum_wall_s);
		return VERDICT_IMPLAUSIBLE_TIME;
	}
	if (median_us * 1e-6 < floor_factor * floor_s) {
		snprintf(why, cap, "median %.3f us is below %g x the physical minimum %.3f us",
			 median_us, floor_factor, floor_s * 1e6);
		return VERDICT_IMPLAUSIBLE_TIME;
	}
	if (cap)
		why[0] = 0;
	return VERDICT_OK;
}

/* ---- one grade's state ---- */

/* Everything one grade_candidate holds, freed by grade_run_free. Each step
 * of the grade returns 0 to go on, 1 when r holds the final result (a
 * verdict, or the last phase done), or -1 with e (the grader cannot work). */
struct grade_run {
	struct grade_session *s;
	const struct ka_task *t;
	struct grade_result *r;
	double t0; /* when the grade began */
	struct target_compiled cc;
	struct gold *g;
	struct shape_state *shapes; /* the check shapes, then the benchmark shape */
	int n_shapes;
	struct shape_state *bench;
	struct target_baseline base[2]; /* eager, compiled */
	int n_base;
	/* Timing samples (max_samples each): candidate, baselines, CUPTI spans. */
	double *tc, *tb[2], *spans;
	int nc, nb[2], n_span;
	double cand_min_ns;		/* the fastest timed candidate call so far (0: none) */
	double sum_event_s, sum_wall_s; /* over the candidate's timed calls */
	double t_timing;		/* when the timing phase began */
	struct call_ctx *prev; /* the call pipeline: answered, not yet verified (or NULL) */
	char *devgold;	       /* the task's device gold module (devgold.h) */
	/* The gold ahead (ahead_start): each shape's first correctness call,
	 * built before the compile with a call number reserved for it, its
	 * CPU half (inputs, their hash, gold) computed on a thread of its own
	 * while the candidate compiles. */
	struct call_ctx *ahead[GRADE_MAX_SHAPES];
	uint64_t ahead_base; /* the first reserved call number */
	int ahead_threads;   /* OpenMP threads of the ahead thread's gold */
	int main_threads;    /* the grade's own (the check plans are made with it) */
	int ahead_started;
	int ahead_stop; /* (atomic) the grade ended early: stop after this call */
	pthread_t ahead_th;
	int devgold_state; /* 0 not built yet, 1 built, -1 not available */
	int task_fault;	   /* the -1 is the task's: its baseline, derived from a
			    * ref.c that is not trusted bank code, failed */
};

struct call_ctx;
static void call_free(struct call_ctx *c);

static void grade_run_free(struct grade_run *gr)
{
	for (int i = 0; i < gr->n_shapes; i++)
		shape_free(&gr->shapes[i]);
	free(gr->shapes);
	for (int b = 0; b < gr->n_base; b++)
		target_baseline_free(&gr->base[b]);
	free(gr->tc);
	free(gr->spans);
	free(gr->tb[0]);
	free(gr->tb[1]);
	for (int i = 0; i < GRADE_MAX_SHAPES; i++)
		call_free(gr->ahead[i]);
	gold_close(gr->g);
	free(gr->devgold);
	target_compiled_free(&gr->cc);
	call_free(gr->prev);
}

/* ---- one runner call: build the request, run it, integrity checks, gold,
 * compare outputs ---- */

/* One call of a slot with fresh inputs. The caller sets the fields up to r
 * (the rest zero); the steps fill the others. */
struct call_ctx {
	struct grade_run *gr;	/* session, task, gold */
	struct shape_state *st; /* the shape called */
	int slot;
	int verify; /* check outputs against gold (0: only the runner-side
		     * checks, for trusted baselines) */
	int timed;
	const char *phase;	/* named in a verdict */
	struct grade_result *r; /* where a verdict and the runner time go */
	/* Measured, when the call got that far (else 0). */
	double time_ns; /* event time less the window's cost */
	double wall_s;	/* the parent's wall clock around the runner call */
	double span_ns; /* CUDA: CUPTI's first kernel start to last end */
	/* The call's working state. */
	uint64_t call;
	int sampled;		   /* outputs checked on sampled items */
	int lazy;		   /* gold from the lazy build (timed sampled calls) */
	int check;		   /* enum devgold_check: how the outputs are checked */
	struct run_check_res dres; /* device-full: the device check's reply */
	int dres_set;		   /* dres holds a reply */
	int64_t *items, n_items;
	int64_t *elems[KA_MAX_TENSORS];
	struct run_call_req req;
	struct run_call_res res;
	void *inputs[KA_MAX_TENSORS];
	int issued;		 /* sent to the runner, reply not read yet */
	int baseline;		 /* the trusted baseline called (0, 1), or -1 */
	struct grade_result own; /* a baseline call's verdict lands here, never
				  * in the grade's result */
	double at[3];		 /* KA_GRADE_TRACE: built, issued, collected */
	int reserved;		 /* c->call was set by the caller (ahead_main) */
	int built;		 /* the request is built (ahead: before the compile) */
	/* The CPU half of the checks, computed ahead (ahead_call: cpu_inputs
	 * and call_gold): the inputs' CPU hashes, and the gold's outcome,
	 * taken where call_gold would have computed it (call_verify). */
	int cpu_done;
	uint64_t cpu_hash[KA_MAX_TENSORS];
	int gold_rc;
	struct ka_err gold_e;
};

/* A call for the grade gr of slot at shape st, verified or not, timed or
 * not; phase names it in a verdict. Free with call_free. */
static struct call_ctx *call_new(struct grade_run *gr, struct shape_state *st, int slot, int verify,
				 int timed, const char *phase)
{
	struct call_ctx *c = xcalloc(1, sizeof *c);
	c->gr = gr;
	c->st = st;
	c->slot = slot;
	c->verify = verify;
	c->timed = timed;
	c->phase = phase;
	c->r = gr->r;
	c->baseline = -1;
	return c;
}

static void call_free(struct call_ctx *c)
{
	if (!c)
		return;
	run_call_res_free(&c->res);
	run_check_res_free(&c->dres);
	for (int j = 0; j < KA_MAX_TENSORS; j++)
		free(c->elems[j]);
	free(c->items);
	json_decref(c->own.evidence);
	free(c);
}

/* The call's whole inputs as the CPU generates them, into st->host_in
 * (allocated on first use) and c->inputs. */
static void host_inputs_fill(struct call_ctx *c)
{
	const struct ka_task *t = c->gr->t;
	struct shape_state *st = c->st;
	for (int k = 0; k < t->n_inputs; k++) {
		if (!st->host_in[k])
			st->host_in[k] = util_alloc_unforked(st->bytes[k]);
		gen_fill(st->host_in[k], t->inputs[k].dtype, st->numel[k], c->req.in[k].key,
			 &c->st->gp[k]);
		c->inputs[k] = st->host_in[k];
	}
}

/* The lazy gold against the C gold just computed into st->gold, on the same
 * items: where they differ in one bit, the lazy gold is turned off for this
 * reference (one line on stderr says so) and timed calls regenerate whole
 * inputs. 0: they agree; 1: they differ, or ref.c has no lazy build; -1
 * with e. */
static int lazy_cross_check(const struct call_ctx *c, struct ka_err *e)
{
	const struct ka_task *t = c->gr->t;
	const struct shape_state *st = c->st;
	struct ka_gen_src src[KA_MAX_TENSORS];
	double *lz[KA_MAX_TENSORS] = {0};
	for (int k = 0; k < t->n_inputs; k++)
		gen_src_of(&src[k], t->inputs[k].dtype, c->req.in[k].key, &c->st->gp[k]);
	for (int j = 0; j < t->n_outputs; j++)
		lz[j] = xcalloc(
			(size_t)(st->numel[t->n_inputs + j] ? st->numel[t->n_inputs + j] : 1),
			sizeof(double));
	int rc = gold_compute_lazy(c->gr->g, &st->sh, src, lz, c->items, c->n_items, e);
	for (int64_t q = 0; rc == 0 && q < c->n_items; q++)
		for (int j = 0; j < t->n_outputs; j++) {
			size_t at = (size_t)(c->items[q] * st->per_item[j]),
			       n = (size_t)st->per_item[j];
			if (!memcmp(st->gold[j] + at, lz[j] + at, n * sizeof(double)))
				continue;
			fprintf(stderr,
				"ka: %s: the lazy gold differs from the C gold at item %lld (a "
				"grader "
				"problem with this ref.c; its timed calls regenerate whole inputs "
				"instead)\n",
				t->name, (long long)c->items[q]);
			gold_lazy_off(c->gr->g);
			rc = 1;
			break;
		}
	for (int j = 0; j < t->n_outputs; j++)
		free(lz[j]);
	return rc;
}

/* The key of c's task and shape among the session's checked ones. */
static uint64_t gen_checked_key(const struct call_ctx *c)
{
	return util_hash64(c->st->name, strlen(c->st->name), task_hash(c->gr->t)) | 1;
}

/* Whether this session already checked c's task and shape: the generator
 * against the runner's bytes on whole inputs, and the lazy gold against
 * the C gold (call_gold). */
static int gen_checked(const struct call_ctx *c)
{
	const struct grade_session *s = c->gr->s;
	uint64_t key = gen_checked_key(c);
	for (int i = 0; i < s->n_gen_checked && i < GRADE_GEN_CHECKED; i++)
		if (s->gen_checked[i] == key)
			return 1;
	return 0;
}

/* The task's device gold module, built on first need (devgold.h); NULL
 * where the target has none, or it does not build (one line on stderr:
 * the calls are then sampled as before, never failed for it). */
static const char *devgold_module(struct grade_run *gr)
{
	struct grade_session *s = gr->s;
	if (gr->devgold_state == 0) {
		struct ka_err e;
		gr->devgold_state = -1;
		if (s->ops->gold_module &&
		    (gr->devgold = s->ops->gold_module(gr->t, s->device, s->workdir, &e)))
			gr->devgold_state = 1;
		else if (s->ops->gold_module)
			fprintf(stderr,
				"ka: %s: no device gold (its large shapes stay sampled): %s\n",
				gr->t->name, e.msg);
	}
	return gr->devgold_state > 0 ? gr->devgold : NULL;
}

/* How a verified call is checked: in full on the CPU, in full on the device
 * (an untimed call of a trusted task whose CPU gold is unaffordable, on a
 * runner that checks), or sampled (devgold_choose). */
static enum devgold_check call_check_kind(struct call_ctx *c, const struct gold_check *gc)
{
	struct grade_run *gr = c->gr;
	const struct shape_state *st = c->st;
	struct devgold_when w = {
		.cpu_full = gc->full,
		.timed = c->timed,
		.trusted = gr->t->trusted,
		.device_ok = gr->s->ops->gold_module != NULL && devgold_enabled() &&
			     json_is_true(json_object_get(gr->s->device, "device_check")),
		.device_s = devgold_cost_s(gc->item_s, st->items),
	};
	enum devgold_check k = devgold_choose(&w);
	if (k == DEVGOLD_DEVICE_FULL && !devgold_module(gr))
		k = DEVGOLD_SAMPLED;
	return k;
}

/* Step 1: the request, with fresh keys and poison, and (verified calls on
 * large shapes) the sampled items. 0, or -1 with e. */
static int call_build_request(struct call_ctx *c, struct ka_err *e)
{
	struct grade_session *s = c->gr->s;
	const struct ka_task *t = c->gr->t;
	const struct shape_state *st = c->st;
	const struct gen_params *gp = st->gp;
	struct run_call_req *req = &c->req;
	double t0 = util_now();
	if (!c->reserved) /* ahead calls come with their number */
		c->call = s->calls++;
	uint64_t thash = task_hash(t);
	req->slot = c->slot;
	req->n_inputs = t->n_inputs;
	req->n_outputs = t->n_outputs;
	for (int k = 0; k < t->n_inputs; k++) {
		req->in[k].key = gen_tensor_key(s->nonce, thash, &st->sh, k, c->call);
		req->in[k].kind = gp[k].kind;
		req->in[k].a = gp[k].a;
		req->in[k].b = gp[k].b;
		req->in[k].lo = gp[k].lo;
		req->in[k].range = gp[k].range;
	}
	req->poison = util_mix64(s->nonce ^ util_mix64(c->call ^ 0x9015011ULL));
	req->flush = c->timed;
	req->time = c->timed;
	c->n_items = st->items;
	/* Full or sampled, and how many items: by the gold's cost (gold.h). */
	struct gold_check gc = {.full = 1};
	const struct gold_check_limits lim = {
		s->proto.full_check_max,
		grade_sample_count(s->proto.sample_items, st->per_item, t->n_outputs),
		GRADE_SAMPLE_CAP, GRADE_GOLD_CHECK_S, GRADE_GOLD_TIMED_S};
	if (c->verify && gold_check_plan(c->gr->g, &st->sh, c->timed, &lim, &gc, e))
		return -1;
	c->sampled = c->verify && !gc.full;
	c->check = !c->verify ? DEVGOLD_SAMPLED : call_check_kind(c, &gc);
	/* Checked in full on the device: the CPU's sample is a cross-check of
	 * the device gold (and, once per session, of the generator and the
	 * lazy gold), so it gets a timed call's budget, not an untimed one's
	 * (1 s of every core the grader has, per grade, for nothing the
	 * device check does not already cover). */
	if (c->check == DEVGOLD_DEVICE_FULL && gold_check_plan(c->gr->g, &st->sh, 1, &lim, &gc, e))
		return -1;
	/* Timed calls are checked on a sample of items: the lazy gold draws
	 * just the input elements those items read (a timed call would
	 * otherwise regenerate whole tensors, ~10 ns an element). So is an
	 * untimed sampled call (the benchmark shape's, checked in full on the
	 * device where it can be) once this session has checked the generator
	 * and the lazy gold on whole inputs at this task and shape: 536 M
	 * input elements for decode_f16_d128, 1.3 s of four cores per grade
	 * on the H200 host. Unless whole inputs cost less (gc.whole_inputs). */
	c->lazy = c->verify && c->sampled && !gc.whole_inputs && (c->timed || gen_checked(c));
	if (c->sampled) {
		if (gold_sample_items_edges(t, &st->sh, util_mix64(s->nonce ^ c->call),
					    (int)gc.n_random, gc.edge_max, &c->items, &c->n_items,
					    e))
			return -1;
		req->sample = 1;
		int64_t per_sum = 0;
		for (int j = 0; j < t->n_outputs; j++)
			per_sum += st->per_item[j];
		for (int j = 0; j < t->n_outputs; j++) {
			c->elems[j] = sample_elems(
				c->items, c->n_items, st->per_item[j],
				c->n_items * per_sum > gc.elem_cap ? gc.elem_cap / t->n_outputs
								   : INT64_MAX,
				util_mix64(s->nonce ^ c->call ^ (uint64_t)j), &req->n_sample[j]);
			req->sample_idx[j] = c->elems[j];
		}
	} else if (!c->verify) {
		/* Trusted baseline: the runner's own checks suffice; return nothing. */
		req->sample = 1;
	}
	c->at[0] = util_now();
	c->gr->r->protocol_s += c->at[0] - t0;
	c->built = 1;
	return 0;
}

/* A phased call's frames (runclient.h): the device lock goes from shared
 * (the runner prepares) to exclusive (it flushes and replays: released
 * first, then taken, never upgraded in place, so two graders that both
 * wait to upgrade cannot hold each other up) and back to shared, without
 * letting a writer in, while the runner reads back. The waits count as
 * device_wait (call_collect). */
static void call_phase(void *arg, enum run_phase phase)
{
	struct call_ctx *c = arg;
	struct devlock *d = c->gr->s->lock;
	if (phase == RUN_PHASE_READY) {
		devlock_release(d);
		devlock_acquire(d, 1);
	} else {
		devlock_downgrade(d);
	}
}

/* Step 2a: send the call to the runner, which starts on it at once. The
 * device lock is held from here to the reply (call_collect): checking
 * calls share it with other sessions' calls (devlock.h); a timed (or
 * flushed) call needs the device to itself only for its flush and replay.
 * With other graders on the device it is phased (call_phase), so that its
 * preparation and read back share the device; alone, it holds the lock
 * exclusive throughout, and the runner needs no extra frames. 0, or -1
 * with e. */
static int call_issue(struct call_ctx *c, struct ka_err *e)
{
	struct grade_session *s = c->gr->s;
	struct grade_result *g = c->gr->r;
	int excl = c->req.time || c->req.flush;
	c->req.phased = excl && s->phased && devlock_users(s->lock) > 1;
	c->req.on_phase = c->req.phased ? call_phase : NULL;
	c->req.phase_arg = c;
	g->device_wait_s += devlock_acquire(s->lock, excl && !c->req.phased);
	if (runclient_call_start(s->rc, &c->req, &c->res, s->proto.call_timeout, e)) {
		devlock_release(s->lock);
		return -1;
	}
	c->issued = 1;
	c->at[1] = util_now();
	g->protocol_s += c->res.send_s;
	return 0;
}

/* Step 2b: the reply of an issued call. The parent's time from here to the
 * reply is time spent waiting for the runner. 0, 1 (the runner reported a
 * verdict), or -1 with e. */
static int call_collect(struct call_ctx *c, struct ka_err *e)
{
	struct grade_session *s = c->gr->s;
	struct grade_result *g = c->gr->r;
	double w0 = util_now();
	int rc = runclient_call_finish(s->rc, &c->req, &c->res, e);
	devlock_release(s->lock);
	c->issued = 0;
	c->at[2] = util_now();
	g->runner_s += c->at[2] - w0 - c->res.parse_s - c->res.phase_wait_s;
	g->device_wait_s += c->res.phase_wait_s;
	g->protocol_s += c->res.parse_s;
	if (rc < 0)
		return -1;
	if (c->res.status != RUNCLIENT_OK) {
		enum verdict v = c->res.status == RUNCLIENT_TIMEOUT ? VERDICT_TIMEOUT
								    : verdict_of(c->res.verdict);
		set_verdict(c->r, v, c->phase, c->st->name, "%s", c->res.detail);
		c->r->killed_outside |= c->res.killed_outside;
		return 1;
	}
	/* The window's own cost comes off; never more than half a call. */
	double net = c->res.time_ns - s->window_ns;
	c->time_ns = net > c->res.time_ns / 2 ? net : c->res.time_ns / 2;
	c->wall_s = c->res.wall_s;
	return 0;
}

/* Step 3a: what the device side saw (CUDA: CUPTI and NVML). 0 or 1. */
static int call_device_checks(struct call_ctx *c)
{
	const struct run_call_res *res = &c->res;
	struct grade_result *r = c->r;
	/* CUDA: CUPTI saw every kernel of the call. None may run outside the
	 * call's window, none may come from elsewhere than the plan, and the
	 * launches must be those of the plan (a kernel launching others from the
	 * device, or work deferred past the timed window, shows up here). */
	if (res->cupti && c->verify) {
		const char *opening = json_string_value(json_object_get(res->cupti, "opening"));
		r->cupti_host_openings += opening && !strcmp(opening, "host");
		json_int_t outside = json_integer_value(json_object_get(res->cupti, "outside"));
		json_int_t foreign = json_integer_value(json_object_get(res->cupti, "foreign"));
		int match = json_is_true(json_object_get(res->cupti, "signature_match"));
		if (outside || foreign || !match) {
			set_verdict(r, VERDICT_IMPLAUSIBLE_TIME, c->phase, c->st->name,
				    "CUPTI: %lld kernel(s) outside the call's window, %lld not "
				    "from the "
				    "plan, launch signature %s",
				    (long long)outside, (long long)foreign,
				    match ? "matches" : "differs from the recorded plan");
			json_decref(r->evidence);
			r->evidence = json_incref(res->cupti);
			return 1;
		}
		/* The tight bound: the kernels ran within the event window, so
		 * their span cannot exceed the events' time (CUPTI's and the
		 * events' clocks agree to well under 5% + 2 us). */
		double span = json_number_value(json_object_get(res->cupti, "span_ns"));
		if (c->timed && res->time_ns > 0 && span > res->time_ns * 1.05 + 2000) {
			set_verdict(r, VERDICT_IMPLAUSIBLE_TIME, c->phase, c->st->name,
				    "CUPTI saw the kernels run for %.3f us, longer than the event "
				    "window's %.3f us: work ran outside the timed window",
				    span * 1e-3, res->time_ns * 1e-3);
			json_decref(r->evidence);
			r->evidence = json_incref(res->cupti);
			return 1;
		}
		c->span_ns = span;
	}
	if (res->clocks) {
		int sm = (int)json_integer_value(json_object_get(res->clocks, "sm_mhz"));
		int mem = (int)json_integer_value(json_object_get(res->clocks, "mem_mhz"));
		if (sm && (!r->clock_sm_min || sm < r->clock_sm_min))
			r->clock_sm_min = sm;
		if (sm > r->clock_sm_max)
			r->clock_sm_max = sm;
		if (mem)
			r->clock_mem = mem;
		r->throttle_reasons |=
			json_integer_value(json_object_get(res->clocks, "throttle_reasons"));
	}
	return 0;
}

/* Input k after the call: its unkeyed hash, and the runner's exact comparison
 * with a fresh regeneration made after the candidate's work finished (which
 * a candidate that restores the hash but not the bytes cannot pass). 1 with
 * the verdict set when it was modified. */
static int input_modified(struct call_ctx *c, int k)
{
	const struct run_call_res *res = &c->res;
	if (res->in_hash_after[k] == res->in_hash_before[k] && res->in_modified_at[k] < 0)
		return 0;
	const struct ka_task *t = c->gr->t;
	if (res->in_modified_at[k] >= 0)
		set_verdict(c->r, VERDICT_INPUT_MODIFIED, c->phase, c->st->name,
			    "input %s was modified by the candidate (first at byte %lld%s)",
			    t->inputs[k].name, (long long)res->in_modified_at[k],
			    res->in_hash_after[k] == res->in_hash_before[k]
				    ? "; its unkeyed hash was restored"
				    : "");
	else
		set_verdict(c->r, VERDICT_INPUT_MODIFIED, c->phase, c->st->name,
			    "input %s was modified by the candidate", t->inputs[k].name);
	return 1;
}

/* The CPU's side of the generator check: the call's whole inputs as the
 * CPU generates them (verified calls that are not lazy) and, where the
 * check is made (call_integrity), their hashes into c->cpu_hash. */
static void cpu_inputs(struct call_ctx *c)
{
	const struct ka_task *t = c->gr->t;
	if (c->verify && !c->lazy)
		host_inputs_fill(c);
	for (int k = 0; c->verify && !c->timed && !c->lazy && k < t->n_inputs; k++)
		c->cpu_hash[k] = gen_hash(c->st->host_in[k], c->st->bytes[k]);
}

/* Step 3b: the integrity checks on the buffers: the generator agrees with
 * the CPU, no canary changed, no input changed, every output element was
 * written. 0, 1 (verdict), or -1 with e (generator divergence). */
static int call_integrity(struct call_ctx *c, struct ka_err *e)
{
	const struct ka_task *t = c->gr->t;
	const struct shape_state *st = c->st;
	const struct run_call_res *res = &c->res;
	/* Inputs as the CPU generates them; the runner's hash of what it generated
	 * must agree (else the generator diverged: a grader bug, not a verdict).
	 * Trusted baselines' calls skip this CPU work. */
	if (!c->cpu_done)
		cpu_inputs(c);
	/* The generator check is made on every untimed call (all of the
	 * correctness phase) but those the session checked already at this
	 * task and shape (lazy: gen_checked); timed calls skip the CPU hash,
	 * since a divergence would show as wrong gold there anyway. */
	for (int k = 0; c->verify && !c->timed && !c->lazy && k < t->n_inputs; k++)
		if (c->cpu_hash[k] != res->in_hash_before[k])
			return ka_err_set(e,
					  "%s: input %s at %s: device-generated bytes differ from "
					  "the CPU generator (grader bug)",
					  t->name, t->inputs[k].name, st->name);
	for (int b = 0; b < res->n_buffers; b++)
		if (!res->canary_ok[b]) {
			const char *what = b < t->n_inputs     ? t->inputs[b].name
					   : b < st->n_tensors ? t->outputs[b - t->n_inputs].name
							       : "workspace";
			set_verdict(c->r, VERDICT_OUT_OF_BOUNDS_WRITE, c->phase, st->name,
				    "a write landed outside buffer %d (%s): its canary changed", b,
				    what);
			return 1;
		}
	for (int k = 0; k < t->n_inputs; k++)
		if (input_modified(c, k))
			return 1;
	for (int j = 0; j < t->n_outputs; j++) {
		/* Every bit pattern of an int32/int64 is a valid value, the
		 * poison's too (a hash, a bitwise result, values near 2^31):
		 * an element equal to it may be written. As for int8/uint8,
		 * whose poison the runners do not count, the comparison with
		 * gold decides: an unwritten element holds this call's random
		 * poison, and fails unless its gold is that very value. */
		int dt = st->dtype[t->n_inputs + j];
		if (dtype_is_int((enum ka_dtype)dt) && dt != KA_DTYPE_BOOL)
			continue;
		if (res->unwritten[j] > 0) {
			set_verdict(c->r, VERDICT_UNWRITTEN_OUTPUT, c->phase, st->name,
				    "output %s: %lld of %lld elements never written (first at "
				    "index %lld)",
				    t->outputs[j].name, (long long)res->unwritten[j],
				    (long long)st->numel[t->n_inputs + j],
				    (long long)res->first_unwritten[j]);
			return 1;
		}
	}
	return 0;
}

/* Step 4: gold in fp64 on the CPU for the items checked, into st->gold. 0,
 * or -1 with e. */
static int call_gold(struct call_ctx *c, struct ka_err *e)
{
	const struct ka_task *t = c->gr->t;
	struct shape_state *st = c->st;
	for (int j = 0; j < t->n_outputs; j++)
		if (!st->gold[j]) {
			size_t ne = (size_t)(st->numel[t->n_inputs + j] ? st->numel[t->n_inputs + j]
									: 1);
			st->gold[j] = util_alloc_unforked(ne * sizeof(double)); /* zeroed */
		}
	int gx = 1;
	if (c->lazy) {
		struct ka_gen_src src[KA_MAX_TENSORS];
		for (int k = 0; k < t->n_inputs; k++)
			gen_src_of(&src[k], t->inputs[k].dtype, c->req.in[k].key, &c->st->gp[k]);
		gx = gold_compute_lazy(c->gr->g, &st->sh, src, st->gold, c->items, c->n_items, e);
		if (gx > 0) /* no lazy build of this reference: whole inputs */
			host_inputs_fill(c);
	}
	if (gx > 0)
		gx = gold_compute(c->gr->g, &st->sh, c->inputs, st->gold,
				  c->sampled ? c->items : NULL, c->n_items, e);
	if (gx < 0)
		return -1;
	if (c->sampled && !c->timed && !c->lazy && !st->lazy_checked) {
		/* Once per grade, at the benchmark shape's untimed call (whole
		 * inputs and the C gold are at hand): the lazy gold on the same
		 * items must agree, so a C/C++ difference in some reference (a
		 * grader problem, never the candidate's) cannot decide a timed
		 * call's verdict. */
		st->lazy_checked = 1;
		int lx = lazy_cross_check(c, e);
		if (lx < 0)
			return -1;
		if (lx == 0 && !gen_checked(c)) { /* a ring: the oldest key goes */
			struct grade_session *s = c->gr->s;
			s->gen_checked[s->n_gen_checked++ % GRADE_GEN_CHECKED] = gen_checked_key(c);
		}
	}
	return 0;
}

/* Step 5: the outputs against gold within the task's tolerance. 0, 1
 * (wrong_answer or nonfinite, with evidence), or -1 with e (the runner sent
 * the wrong number of bytes). */
static int call_compare(struct call_ctx *c, struct ka_err *e)
{
	const struct ka_task *t = c->gr->t;
	const struct shape_state *st = c->st;
	struct grade_result *r = c->r;
	struct grade_tally tl;
	grade_tally_init(&tl);
	int out = 0;
	for (int j = 0; j < t->n_outputs; j++) {
		int dt = st->dtype[t->n_inputs + j];
		size_t es = dtype_size((enum ka_dtype)dt);
		int64_t n = c->sampled ? c->req.n_sample[j] : st->numel[t->n_inputs + j];
		if (c->res.out_len[j] != (size_t)n * es) {
			out = ka_err_set(e,
					 "runner returned %zu bytes for output %s, expected %lld",
					 c->res.out_len[j], t->outputs[j].name,
					 (long long)n * (long long)es);
			goto done;
		}
		grade_compare_output(t->outputs[j].name, dt, c->res.out[j], n,
				     c->sampled ? c->elems[j] : NULL, st->gold[j], t->atol, t->rtol,
				     &tl);
	}
	if (tl.n_inexact) {
		out = ka_err_set(e,
				 "%s/ref.c: output '%s': the gold at element %lld at %s: %s (%lld "
				 "such elements; docs/task-format.md)",
				 t->dir, tl.inexact_output, (long long)tl.inexact_index, st->name,
				 tl.inexact_why, (long long)tl.n_inexact);
		goto done;
	}
	if (tl.n_bad) {
		char detail[sizeof r->detail];
		enum verdict v = grade_tally_describe(&tl, t->atol, t->rtol, c->sampled, detail,
						      sizeof detail);
		set_verdict(r, v, c->phase, st->name, "%s", detail);
		json_decref(r->evidence);
		r->evidence = json_pack("{s:O,s:I,s:I,s:f}", "mismatches", tl.mismatches, "count",
					(json_int_t)tl.n_bad, "nonfinite",
					(json_int_t)tl.n_nonfinite, "max_abs_error", tl.max_err);
		out = 1;
	}
done:
	grade_tally_free(&tl);
	return out;
}

/* The device check's outcome as the call's verdict (devgold_outcome): the
 * golds' disagreement is -1 with e, mismatches the CPU comparison's verdict
 * and evidence. 0, 1 or -1. */
static int device_verdict(struct call_ctx *c, const struct run_check_res *res, struct ka_err *e)
{
	const struct ka_task *t = c->gr->t;
	struct shape_state *st = c->st;
	struct grade_result *r = c->r;
	enum verdict v;
	char detail[sizeof r->detail];
	json_t *ev = NULL;
	int x = devgold_outcome(t, st->name, st->dtype + t->n_inputs, res,
				(const int64_t *const *)c->elems, st->gold, &v, detail,
				sizeof detail, &ev, e);
	if (x == 1) {
		set_verdict(r, v, c->phase, st->name, "%s", detail);
		json_decref(r->evidence);
		r->evidence = ev;
	}
	return x;
}

/* Step 2c (device-full calls): every element of the outputs checked on the
 * device against the gold module's fp64 gold (runner op "check"), under the
 * device lock shared like any untimed call, right after the reply and before
 * the next call is issued (the check reads the slot's buffers, which the
 * next call overwrites); its outcome is taken in call_verify. 0, or -1 with
 * e (the check itself failed: the grader's). */
static int call_device_full(struct call_ctx *c, struct ka_err *e)
{
	struct grade_session *s = c->gr->s;
	const struct ka_task *t = c->gr->t;
	const struct shape_state *st = c->st;
	struct run_check_req q = {.slot = c->slot,
				  .cubin = c->gr->devgold,
				  .items = st->items,
				  .n_params = t->n_params,
				  .atol = t->atol,
				  .rtol = t->rtol,
				  .n_inputs = t->n_inputs,
				  .n_outputs = t->n_outputs};
	for (int p = 0; p < t->n_params; p++)
		q.params[p] = st->sh.v[p];
	for (int j = 0; j < t->n_outputs; j++) {
		q.sample_idx[j] = c->elems[j];
		q.n_sample[j] = c->req.n_sample[j];
	}
	struct ka_err ce;
	c->r->device_wait_s += devlock_acquire(s->lock, 0);
	int rc = runclient_check(s->rc, &q, &c->dres, DEVGOLD_TIMEOUT_S, &ce);
	devlock_release(s->lock);
	c->r->runner_s += c->dres.wall_s;
	if (rc)
		return ka_err_set(e, "%s at %s: the device check failed: %s", t->name, st->name,
				  ce.msg);
	c->dres_set = 1;
	return 0;
}

/* Note how a correctness call of the candidate was checked (the grade
 * JSON's "checks"). */
static void call_note_check(const struct call_ctx *c)
{
	if (!c->verify || c->timed || strcmp(c->phase, "correctness"))
		return;
	struct grade_result *r = c->r;
	if (!r->checks)
		r->checks = json_array();
	json_array_append_new(r->checks, json_pack("{s:s,s:s}", "shape", c->st->name, "check",
						   devgold_check_name(c->check)));
}

/* KA_GRADE_TRACE=1: one line per call on stderr, milliseconds after the
 * grade's start: when it was built, issued and collected, how long the
 * runner took from issue to reply, and the parent's verification from vt0
 * for vms (docs/grader.md, "Where a grade's time goes"). */
static void call_trace(const struct call_ctx *c, double vt0, double vms)
{
	static int on = -1;
	if (on < 0)
		on = getenv("KA_GRADE_TRACE") && strcmp(getenv("KA_GRADE_TRACE"), "0");
	if (!on)
		return;
	double t0 = c->gr->t0;
	fprintf(stderr,
		"ka-trace: call %llu %s%s %s slot %d check %s: built %.2f issued %.2f collected "
		"%.2f (runner %.2f) verified %.2f for %.2f ms\n",
		(unsigned long long)c->call, c->phase, c->timed ? " timed" : "", c->st->name,
		c->slot, c->verify ? devgold_check_name(c->check) : "runner", (c->at[0] - t0) * 1e3,
		(c->at[1] - t0) * 1e3, (c->at[2] - t0) * 1e3, (c->at[2] - c->at[1]) * 1e3,
		(vt0 - t0) * 1e3, vms);
}

/* Steps 3b to 5: the parent's checks of an answered call. 0, 1 (c->r
 * holds the verdict) or -1 with e. */
static int call_verify(struct call_ctx *c, struct ka_err *e)
{
	double t0 = util_now();
	int x = call_integrity(c, e);
	if (!x && c->verify) {
		x = c->cpu_done ? c->gold_rc : call_gold(c, e);
		if (x < 0 && c->cpu_done)
			*e = c->gold_e;
	}
	if (!x && c->dres_set)
		x = device_verdict(c, &c->dres, e);
	if (!x && c->verify)
		x = call_compare(c, e);
	double t1 = util_now();
	c->gr->r->verify_s += t1 - t0;
	call_trace(c, t0, (t1 - t0) * 1e3);
	return x;
}

/* A call's outcome x as the grade sees it: a trusted baseline's verdict is
 * a bank or grader problem (-1 with e), never the candidate's. */
static int call_outcome(struct call_ctx *c, int x, struct ka_err *e)
{
	if (c->baseline < 0 || x <= 0)
		return x;
	struct grade_run *gr = c->gr;
	/* a runner killed from outside: neither the task's fault nor the grader's */
	gr->r->killed_outside |= c->own.killed_outside;
	gr->task_fault =
		!gr->t->trusted && !c->own.killed_outside; /* derived from a model's ref.c */
	return ka_err_set(e, "%s: trusted baseline '%s' %s at %s: %s: %.300s", gr->t->name,
			  gr->base[c->baseline].name,
			  c->verify ? "is not correct" : "failed while timing", gr->bench->name,
			  verdict_name(c->own.verdict), c->own.detail);
}

/* ---- the call pipeline (docs/grader.md, "Call-level overlap") ----
 *
 * A call is built, issued (sent), collected (its reply read, the runner's
 * own verdicts and CUPTI's checks applied) and verified (inputs, canaries,
 * unwritten outputs, gold, comparison). pipe_push issues call k+1 before it
 * verifies call k, so the parent's checking overlaps the runner's work; the
 * outcomes are still taken strictly in call order: call k's verification
 * decides before anything of call k+1, and a verdict at call k drains call
 * k+1 (its reply is read and dropped). After pipe_push returns nothing is
 * outstanding in the runner; the last call collected waits in gr->prev
 * until the next push or pipe_flush verifies it. */

/* Whether c may run while the parent verifies the previous call. Auto:
 * not a timed call on a CPU device (the checks would share its cores), and
 * only while this session is alone on its device: an overlapped call holds
 * the device lock (exclusive when timed) while the parent verifies the one
 * before, so other graders' calls would wait on an idle device. */
static int pipe_overlaps(const struct grade_run *gr, const struct call_ctx *c)
{
	int mode = gr->s->proto.pipeline;
	if (mode == GRADE_PIPELINE_AUTO)
		return !(c->req.time && gr->s->cpu_device) && devlock_users(gr->s->lock) <= 1;
	return mode == GRADE_PIPELINE_ON;
}

/* Verify the call waiting in gr->prev, if any. 0, 1 or -1 as call_verify. */
static int pipe_flush(struct grade_run *gr, struct ka_err *e)
{
	struct call_ctx *c = gr->prev;
	if (!c)
		return 0;
	gr->prev = NULL;
	int x = call_outcome(c, call_verify(c, e), e);
	call_free(c);
	return x;
}

/* Read and drop the reply of an issued call whose outcome no longer matters
 * (an earlier call ended the grade). */
static void call_drain(struct call_ctx *c)
{
	struct ka_err ignored;
	c->r = &c->own; /* whatever it says, the grade's verdict stands */
	if (c->issued)
		call_collect(c, &ignored);
}

/* Run call c (owned: freed here or kept in gr->prev) and verify the one
 * before it. Returns 0 (c answered: its time_ns, wall_s and span_ns are
 * valid until the next push or flush), 1 (gr->r holds the verdict of the
 * first call in order that has one), or -1 with e. */
static int pipe_push(struct grade_run *gr, struct call_ctx *c, struct ka_err *e)
{
	int x = c->built ? 0 : call_build_request(c, e), v = 0;
	if (!x)
		call_note_check(c);
	if (!x && pipe_overlaps(gr, c)) {
		struct ka_err ie;
		x = call_issue(c, &ie);
		v = pipe_flush(gr, e); /* while the runner runs c */
		if (x && !v)
			*e = ie;
	} else {
		v = pipe_flush(gr, e);
		if (!x && !v)
			x = call_issue(c, e);
	}
	if (v) { /* the earlier call decides */
		call_drain(c);
		call_free(c);
		return v;
	}
	if (!x)
		x = call_collect(c, e);
	if (!x)
		x = call_device_checks(c);
	if (!x && c->check == DEVGOLD_DEVICE_FULL)
		x = call_device_full(c, e);
	if (x) {
		x = call_outcome(c, x, e);
		call_free(c);
		return x;
	}
	gr->prev = c;
	return 0;
}

/* The runner slot of baseline b (0 eager, 1 compiled). */
static int base_slot(int b)
{
	return b == 0 ? GRADE_SLOT_EAGER : GRADE_SLOT_COMPILED;
}

/* One call of trusted baseline b on the benchmark shape: checked against
 * gold (check: the one verified call before timing) or timed with the
 * runner's own checks only (*ns gets the time, when not NULL). Its verdict
 * never touches the candidate's result: a baseline that fails is a bank or
 * grader problem, -1 with e. 1: an earlier call of the candidate, verified
 * meanwhile, ended the grade (pipe_push). */
static int baseline_call(struct grade_run *gr, int b, int check, double *ns, struct ka_err *e)
{
	struct call_ctx *c = call_new(gr, gr->bench, base_slot(b), check, !check, "baseline");
	c->baseline = b;
	c->r = &c->own;
	int x = pipe_push(gr, c, e);
	if (!x && ns)
		*ns = c->time_ns;
	return x;
}

/* ---- the gold ahead ----
 *
 * The parent has nothing to do while the candidate compiles, and the first
 * correctness call of a shape needs nothing of the candidate on the CPU:
 * its keys, whole inputs, their hash and its gold follow from the call
 * number alone. So each shape's first correctness call is built before the
 * compile, under a call number reserved for it, and a thread computes its
 * CPU half meanwhile (at the benchmark shape of L1 row_sum, 67 M input
 * elements generated, hashed and summed: 75 ms of 16 cores on the H200
 * host, most of the correctness phase). The calls are the same calls in the
 * same order; only when the CPU work is done changes, and each outcome is
 * taken where it was (call_verify). Not on a CPU device (the compile would
 * share the kernels' cores), nor with fewer than 16 threads (several
 * graders on a machine: with the 1 to 5 threads it could have at 8 to 15,
 * the 75 ms of 16 cores above would outlast the compile, and the grade
 * would wait longer than its own threads would have taken), nor when the
 * candidates were compiled ahead (no compile to hide behind), unless
 * KA_GOLD_AHEAD=1 (=0: never). */

/* One shape's first correctness call, built, its CPU half computed. 0, or
 * -1 (nothing kept: the correctness phase builds the call again and meets
 * the error there). */
static int ahead_call(struct grade_run *gr, int i)
{
	struct shape_state *st = &gr->shapes[i];
	struct call_ctx *c = call_new(gr, st, st->slot, 1, 0, "correctness");
	struct ka_err e;
	c->reserved = 1;
	c->call = gr->ahead_base + (uint64_t)i;
	/* The build's time overlaps the compile: not the parent's protocol
	 * time (no other phase writes it meanwhile). Its check plan (full or
	 * sampled, by the gold's cost on the cores it may use) is made with
	 * the grade's own thread count, so it is the plan a build after the
	 * compile would make; the gold then leaves the compile 3 cores. */
	double p0 = gr->r->protocol_s;
	omp_set_num_threads(gr->main_threads);
	int x = call_build_request(c, &e);
	omp_set_num_threads(gr->ahead_threads);
	gr->r->protocol_s = p0;
	if (x) {
		call_free(c);
		return -1;
	}
	cpu_inputs(c);
	c->gold_rc = call_gold(c, &c->gold_e);
	c->cpu_done = 1;
	gr->ahead[i] = c;
	return 0;
}

static void *ahead_main(void *arg)
{
	struct grade_run *gr = arg;
	double t0 = util_now();
	/* Idle cores only: the compile's steps come first. The OpenMP threads
	 * this thread starts inherit its nice value (Linux: per thread). */
	util_background_priority(AHEAD_NICE);
	omp_set_num_threads(gr->main_threads);
	struct ka_err e;
	gr->g = gold_open(gr->t, &e);
	for (int i = 0;
	     gr->g && i < gr->n_shapes && !__atomic_load_n(&gr->ahead_stop, __ATOMIC_RELAXED); i++)
		if (ahead_call(gr, i))
			break;
	gr->r->ahead_s = util_now() - t0; /* read after the join */
	return NULL;
}

/* Start the gold ahead for gr (its shapes set), where it applies. */
static void ahead_start(struct grade_run *gr)
{
	struct grade_session *s = gr->s;
	int n = omp_get_max_threads();
	/* KA_GOLD_AHEAD: 0 never, 1 always (the tests, on PoCL), else auto */
	const char *env = getenv("KA_GOLD_AHEAD");
	int force = env && !strcmp(env, "1");
	if (!s->rc || (env && !strcmp(env, "0")) ||
	    (!force && (s->cpu_device || s->precompiled || n < AHEAD_MIN_THREADS)))
		return;
	/* Half the grade's threads less the compile's 3 steps at once
	 * (src/cudasplit.c): a core's two hardware threads share it, and on
	 * the H200 host all 16 beside the compile made it 10 to 40% slower. */
	gr->main_threads = n;
	gr->ahead_threads = n / 2 - 3 > 1 ? n / 2 - 3 : 1;
	gr->ahead_base = s->calls;
	s->calls += (uint64_t)gr->n_shapes;
	gr->ahead_started = !pthread_create(&gr->ahead_th, NULL, ahead_main, gr);
}

/* Wait for the gold ahead: before the correctness phase (the wait is the
 * parent's verification time), or, stop, at the grade's end (it stops at
 * its next call; nothing of it is needed). */
static void ahead_join(struct grade_run *gr, int stop)
{
	if (!gr->ahead_started)
		return;
	double t0 = util_now();
	__atomic_store_n(&gr->ahead_stop, stop, __ATOMIC_RELAXED);
	pthread_join(gr->ahead_th, NULL);
	gr->ahead_started = 0;
	if (!stop)
		gr->r->verify_s += util_now() - t0;
}

/* ---- the grade's steps ---- */

/* 1. compile (after the no-code check). */
static int grade_compile(struct grade_run *gr, const char *src, size_t len, struct ka_err *e)
{
	struct grade_session *s = gr->s;
	const struct ka_task *t = gr->t;
	if (!src || only_space(src, len)) {
		set_verdict(gr->r, VERDICT_NO_CODE, "extract", NULL, "no kernel source");
		return 1;
	}
	if (s->ops->compile(t, src, len, s->workdir, s->device, &gr->cc, e))
		return -1;
	gr->r->compile_s = util_now() - gr->t0;
	if (gr->cc.verdict != VERDICT_OK) {
		set_verdict(gr->r, gr->cc.verdict, "compile", NULL, "%s", gr->cc.detail);
		return 1;
	}
	return 0;
}

/* 2. shapes: every check shape, then the benchmark shape. */
static int grade_shapes(struct grade_run *gr, const char *bench_override, struct ka_err *e)
{
	const struct ka_task *t = gr->t;
	const struct grade_protocol *p = &gr->s->proto;
	struct ka_shape bsh;
	if (bench_shape(gr->s, t, bench_override, &bsh, e))
		return -1;
	for (int i = 0; i < t->n_checks; i++)
		if (shape_init(t, &t->checks[i], i, p, &gr->shapes[gr->n_shapes++], e))
			return -1;
	gr->bench = &gr->shapes[gr->n_shapes];
	if (shape_init(t, &bsh, gr->n_shapes, p, gr->bench, e))
		return -1;
	gr->n_shapes++;
	snprintf(gr->r->bench_shape, sizeof gr->r->bench_shape, "%s", gr->bench->name);
	return 0;
}

/* One shape's recording, made on a thread of its own: recclient_run is
 * self-contained (a private folder and a sandboxed child each), so the
 * shapes of a grade record at once instead of one after the other. */
struct record_job {
	const struct grade_session *s;
	const char *so_path;
	char *reqj; /* the recording request (owned) */
	struct plan plan;
	struct recclient_result rr;
	int x; /* recclient_run's return */
	struct ka_err e;
	pthread_t th;
	int started;
};

static void *record_main(void *arg)
{
	struct record_job *j = arg;
	j->x = recclient_run(j->s->recorder, j->so_path, j->reqj, j->s->proto.record_timeout,
			     &j->plan, &j->rr, &j->e);
	return NULL;
}

/* What shape st's recording j gave: its verdict, or its plan loaded in the
 * runner (offline: record only). j's plan is consumed. 0, 1 (verdict), or -1
 * with e. */
static int record_take(struct grade_run *gr, struct shape_state *st, struct record_job *j,
		       struct ka_err *e)
{
	struct grade_session *s = gr->s;
	struct grade_result *r = gr->r;
	struct plan *plan = &j->plan;
	r->killed_outside |= j->rr.killed_outside;
	if (j->x < 0) {
		*e = j->e;
		return -1;
	}
	if (strcmp(j->rr.verdict, "ok")) {
		/* launch_error comes with the plan that was read: free it too */
		plan_free(plan);
		set_verdict(r, verdict_of(j->rr.verdict), "record", st->name, "%s", j->rr.detail);
		return 1;
	}
	int launches = 0;
	for (int o = 0; o < plan->n_ops; o++)
		launches += plan->ops[o].kind == PLAN_OP_LAUNCH;
	if (plan->status != 0 || launches == 0) {
		if (plan->status)
			set_verdict(r, VERDICT_LAUNCH_ERROR, "record", st->name,
				    "ka_launch returned %d", plan->status);
		else
			set_verdict(r, VERDICT_LAUNCH_ERROR, "record", st->name,
				    "ka_launch launched no kernel");
		plan_free(plan);
		return 1;
	}
	if (!s->rc) { /* offline: the record stage is all there is */
		plan_free(plan);
		return 0;
	}
	char *pj = plan_write(plan);
	plan_free(plan);
	struct run_status ls;
	/* A load runs work on the device (allocations, a cuBLAS warm-up):
	 * never beside another grader's timed section. */
	r->device_wait_s += devlock_acquire(s->lock, 0);
	double tl = util_now();
	int x = runclient_load(s->rc, st->slot, pj, st->n_tensors, st->bytes, st->dtype,
			       gr->cc.module, NULL, &ls, e);
	r->load_s += util_now() - tl;
	devlock_release(s->lock);
	free(pj);
	if (x < 0)
		return -1;
	if (ls.status != RUNCLIENT_OK) {
		set_verdict(r,
			    ls.status == RUNCLIENT_TIMEOUT ? VERDICT_TIMEOUT
							   : verdict_of(ls.verdict),
			    "load", st->name, "%s", ls.detail);
		r->killed_outside |= ls.killed_outside;
		return 1;
	}
	return 0;
}

/* 3. record every shape (at once) and load the plans (in shape order, so
 * the outcome is the serial one: the first shape's verdict, or its load's,
 * before anything of the next); offline sessions stop here. */
static int grade_record(struct grade_run *gr, struct ka_err *e)
{
	double tr = util_now(), w0 = gr->r->device_wait_s;
	struct record_job *jobs = xcalloc((size_t)gr->n_shapes, sizeof *jobs);
	int x = 0;
	for (int i = 0; i < gr->n_shapes && !x; i++) {
		jobs[i].s = gr->s;
		jobs[i].so_path = gr->cc.so_path;
		jobs[i].reqj = record_request(gr->s, gr->t, &gr->shapes[i], gr->cc.record_extra, e);
		x = jobs[i].reqj ? 0 : -1;
	}
	for (int i = 0; i < gr->n_shapes && !x; i++)
		jobs[i].started = !pthread_create(&jobs[i].th, NULL, record_main, &jobs[i]);
	for (int i = 0; i < gr->n_shapes && !x; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
		else
			record_main(&jobs[i]); /* no thread to be had: here */
	}
	for (int i = 0; i < gr->n_shapes; i++) {
		if (!x)
			x = record_take(gr, &gr->shapes[i], &jobs[i], e);
		else
			plan_free(&jobs[i].plan);
		free(jobs[i].reqj);
	}
	free(jobs);
	if (x)
		return x;
	/* The loads' waits for the device lock are device_wait. */
	gr->r->record_s = util_now() - tr - (gr->r->device_wait_s - w0);
	if (!gr->s->rc) {
		snprintf(gr->r->phase, sizeof gr->r->phase, "record");
		snprintf(gr->r->detail, sizeof gr->r->detail,
			 "record stage only: no runner, nothing ran");
		return 1;
	}
	return 0;
}

/* 4. correctness: fresh inputs on every call; the benchmark shape once. */
static int grade_correctness(struct grade_run *gr, struct ka_err *e)
{
	struct grade_result *r = gr->r;
	double tcor = util_now();
	ahead_join(gr, 0);
	double tg = util_now();
	if (!gr->g) /* no gold ahead, or it failed: here, with the error */
		gr->g = gold_open(gr->t, e);
	r->setup_s += util_now() - tg;
	if (!gr->g)
		return -1;
	int x = 0;
	for (int i = 0; !x && i < gr->n_shapes; i++) {
		struct shape_state *st = &gr->shapes[i];
		int calls = i == gr->n_shapes - 1 ? 1 : gr->s->proto.checks_per_shape;
		for (int k = 0; !x && k < calls; k++) {
			struct call_ctx *c = k == 0 ? gr->ahead[i] : NULL;
			if (c)
				gr->ahead[i] = NULL;
			else
				c = call_new(gr, st, st->slot, 1, 0, "correctness");
			x = pipe_push(gr, c, e);
		}
	}
	if (!x)
		x = pipe_flush(gr, e);
	r->correct_s = util_now() - tcor;
	if (x)
		return x;
	return gr->s->proto.timing ? 0 : 1;
}

/* Load the trusted baselines at the benchmark shape and check each once:
 * a wrong baseline is a bank or grader bug and would make every speedup
 * meaningless. 0, or -1 with e. */
static int load_baselines(struct grade_run *gr, struct ka_err *e)
{
	struct grade_session *s = gr->s;
	struct shape_state *bench = gr->bench;
	double t0 = util_now();
	int x = s->ops->baselines(gr->t, &bench->sh, s->device, s->workdir, gr->base, &gr->n_base,
				  e);
	gr->r->setup_s += util_now() - t0;
	if (x)
		return -1;
	/* The same task, shape and baseline objects as the session's previous
	 * grade: the slots still hold them (a restarted runner reloads every
	 * slot) and they were checked against gold then, so neither the load
	 * nor the check is repeated. */
	uint64_t key = util_hash64(bench->name, strlen(bench->name), task_hash(gr->t));
	for (int b = 0; b < gr->n_base; b++) {
		const char *parts[3] = {gr->base[b].native, gr->base[b].module,
					gr->base[b].plan_json};
		for (int k = 0; k < 3; k++)
			key = util_hash64(parts[k] ? parts[k] : "", parts[k] ? strlen(parts[k]) : 0,
					  key + (uint64_t)k);
	}
	key |= 1; /* never 0 */
	if (key == s->base_key)
		return 0;
	s->base_key = 0;
	for (int b = 0; b < gr->n_base; b++) {
		/* Loads are not calls (pipe_push leaves nothing outstanding);
		 * the previous baseline's check is verified before, as serially. */
		if ((x = pipe_flush(gr, e)))
			return x;
		struct run_status ls;
		/* Device work (the baseline's first call): shared, as record_take. */
		gr->r->device_wait_s += devlock_acquire(s->lock, 0);
		t0 = util_now();
		x = runclient_load(s->rc, base_slot(b), gr->base[b].plan_json, bench->n_tensors,
				   bench->bytes, bench->dtype, gr->base[b].module,
				   gr->base[b].native, &ls, e);
		gr->r->setup_s += util_now() - t0;
		devlock_release(s->lock);
		if (x)
			return -1;
		if (ls.status != RUNCLIENT_OK) {
			gr->r->killed_outside |= ls.killed_outside;
			gr->task_fault = !gr->t->trusted && !ls.killed_outside;
			return ka_err_set(e, "%s: trusted baseline '%s' failed to load: %s: %s",
					  gr->t->name, gr->base[b].name, ls.verdict, ls.detail);
		}
		if ((x = baseline_call(gr, b, 1, NULL, e)))
			return x;
	}
	/* Checked only once its verification has passed. */
	if ((x = pipe_flush(gr, e)))
		return x;
	s->base_key = key;
	return 0;
}

/* One timed, verified call of the candidate at the benchmark shape; with
 * keep, its times join the samples. 0, 1 (verdict), or -1 with e. */
static int candidate_timed_call(struct grade_run *gr, int keep, struct ka_err *e)
{
	struct call_ctx *c = call_new(gr, gr->bench, gr->bench->slot, 1, 1, "timing");
	int x = pipe_push(gr, c, e);
	/* c is answered (its verification may still be pending in gr->prev;
	 * every decision on these figures flushes the pipeline first). */
	if (!x && (gr->cand_min_ns <= 0 || c->time_ns < gr->cand_min_ns))
		gr->cand_min_ns = c->time_ns;
	if (x || !keep)
		return x;
	if (c->span_ns > 0)
		gr->spans[gr->n_span++] = c->span_ns;
	gr->tc[gr->nc++] = c->time_ns;
	gr->sum_event_s += c->time_ns * 1e-9;
	gr->sum_wall_s += c->wall_s;
	return 0;
}

/* Bounded grades (docs/grader.md, "Bounded grades"): once the eager baseline
 * has a time, a candidate whose fastest timed call so far is over
 * GRADE_SLOW_FACTOR times the eager median (and over GRADE_SLOW_MIN_S, below
 * which a slow call costs nothing worth stopping) ends the grade with
 * `timeout`; the runner's watchdog (call_timeout_s) is the absolute cap on
 * any one call. 1 with the verdict set, or 0. */
#define GRADE_SLOW_FACTOR 50.0
#define GRADE_SLOW_MIN_S 0.001
static int timing_too_slow(struct grade_run *gr, const double *eager_ns, int n_eager)
{
	if (n_eager < 1 || gr->cand_min_ns <= 0)
		return 0;
	double eager = stats_median(eager_ns, (size_t)n_eager);
	if (eager <= 0 || gr->cand_min_ns <= GRADE_SLOW_FACTOR * eager ||
	    gr->cand_min_ns <= GRADE_SLOW_MIN_S * 1e9)
		return 0;
	set_verdict(gr->r, VERDICT_TIMEOUT, "timing", gr->bench->name,
		    "calls take at least %.3f ms, %.0fx the eager baseline's median %.3f ms (the "
		    "limit is %.0fx): the grade stops here",
		    gr->cand_min_ns * 1e-6, gr->cand_min_ns / eager, eager * 1e-6,
		    GRADE_SLOW_FACTOR);
	return 1;
}

/* Randomised warm-up (1..4 calls each), verified like every other call. */
static int timing_warmup(struct grade_run *gr, struct ka_err *e)
{
	int warm = 1 + (int)(util_mix64(gr->s->nonce ^ gr->s->calls) % 4);
	double eager[4];
	for (int w = 0; w < warm; w++) {
		int x = candidate_timed_call(gr, 0, e);
		for (int b = 0; !x && b < gr->n_base; b++)
			x = baseline_call(gr, b, 0, b == 0 ? &eager[w] : NULL, e);
		if (!x) /* every call before a decision is verified first */
			x = pipe_flush(gr, e);
		if (x)
			return x;
		if (gr->n_base && timing_too_slow(gr, eager, w + 1))
			return 1;
	}
	return 0;
}

/* ABAB blocks until every side's median CI is tight enough, the sample cap
 * or the time cap. 0, 1 (verdict), or -1 with e. */
static int timing_samples(struct grade_run *gr, struct ka_err *e)
{
	const struct grade_protocol *p = &gr->s->proto;
	int cap = p->max_samples;
	for (;;) {
		int x = 0;
		for (int k = 0; !x && k < p->block && gr->nc < cap; k++)
			x = candidate_timed_call(gr, 1, e);
		for (int b = 0; !x && b < gr->n_base; b++)
			for (int k = 0; !x && k < p->block && gr->nb[b] < cap; k++) {
				double ns = 0;
				if (!(x = baseline_call(gr, b, 0, &ns, e)))
					gr->tb[b][gr->nb[b]++] = ns;
			}
		if (!x) /* every call before a decision is verified first */
			x = pipe_flush(gr, e);
		if (x)
			return x;
		double t0 = util_now();
		int slow = gr->n_base && timing_too_slow(gr, gr->tb[0], gr->nb[0]);
		int done = converged(gr->tc, gr->nc, p);
		for (int b = 0; b < gr->n_base; b++)
			done = done && converged(gr->tb[b], gr->nb[b], p);
		gr->r->stats_s += util_now() - t0;
		if (slow)
			return 1;
		if (done || gr->nc >= cap || util_now() - gr->t_timing > p->max_seconds)
			return 0;
	}
}

/* The figures, the cross-checks (event time cannot exceed the parent's wall
 * clock, and no kernel can beat the roofline by orders of magnitude) and
 * the speedups with their CIs. Always 1: the result is final. */
static int timing_results(struct grade_run *gr)
{
	struct grade_session *s = gr->s;
	const struct ka_task *t = gr->t;
	struct grade_result *r = gr->r;
	double t0 = util_now();
	r->time_us = figure_of(gr->tc, gr->nc, 1e-3);
	r->cupti_span_us = figure_of(gr->spans, gr->n_span, 1e-3);
	int64_t mb = 0, mf = 0;
	if (t->min_bytes)
		expr_eval(t->min_bytes, gr->bench->sh.v, &mb, NULL);
	if (t->min_flops)
		expr_eval(t->min_flops, gr->bench->sh.v, &mf, NULL);
	double floor_s = grade_roofline_s(mb, mf, s->peak_bw, s->peak_flops);
	char why[256];
	enum verdict v = grade_timing_check(gr->sum_event_s, gr->sum_wall_s, r->time_us.median,
					    floor_s, s->proto.floor_factor, why, sizeof why);
	if (v != VERDICT_OK) {
		set_verdict(r, v, "timing", gr->bench->name, "%s", why);
		r->stats_s += util_now() - t0;
		return 1;
	}
	for (int b = 0; b < gr->n_base; b++) {
		struct grade_figure *f = b == 0 ? &r->eager_us : &r->compiled_us;
		struct grade_figure *sp = b == 0 ? &r->speedup_eager : &r->speedup_compiled;
		*f = figure_of(gr->tb[b], gr->nb[b], 1e-3);
		struct ci c =
			stats_ratio_ci(gr->tb[b], (size_t)gr->nb[b], gr->tc, (size_t)gr->nc,
				       GRADE_BOOT_REPS, util_mix64(task_hash(t) ^ (uint64_t)b));
		sp->valid = 1;
		sp->n = gr->nc;
		sp->median = f->median / r->time_us.median;
		sp->lo = c.lo;
		sp->hi = c.hi;
	}
	r->stats_s += util_now() - t0;
	r->timing_s = util_now() - gr->t_timing;
	return 1;
}

/* 5. timing against the trusted baselines, interleaved in blocks. */
static int grade_timing(struct grade_run *gr, struct ka_err *e)
{
	gr->t_timing = util_now();
	if (load_baselines(gr, e))
		return -1;
	size_t cap = (size_t)gr->s->proto.max_samples;
	gr->tc = xcalloc(cap, sizeof *gr->tc);
	gr->spans = xcalloc(cap, sizeof *gr->spans);
	for (int b = 0; b < gr->n_base; b++)
		gr->tb[b] = xcalloc(cap, sizeof *gr->tb[b]);
	int x = timing_warmup(gr, e);
	if (!x)
		x = timing_samples(gr, e);
	if (x > 0)
		gr->r->timing_s = util_now() - gr->t_timing;
	return x ? x : timing_results(gr);
}

int grade_graders_default(int n_devices)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long n = cores / 4 / (n_devices > 0 ? n_devices : 1);
	return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

void grade_thread_share(int n_graders)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int n = n_graders > 0 ? (int)(cores / n_graders) : (int)cores;
	omp_set_num_threads(n > 0 ? n : 1);
}

/* Free everything the session's runner holds on the device (the runner is
 * killed, its slots forgotten) and start a fresh one: exclusive, as at the
 * session's start (the runner calibrates its timing window). 0, or -1 with e. */
static int session_fresh_runner(struct grade_session *s, struct ka_err *e)
{
	runclient_forget(s->rc);
	s->base_key = 0;
	devlock_acquire(s->lock, 1);
	int x = runclient_restart(s->rc, e);
	devlock_release(s->lock);
	return x;
}

/* One grade of the candidate: grade_candidate's contract, without the
 * second grade. */
static int grade_once(struct grade_session *s, const struct ka_task *t, const char *src, size_t len,
		      const char *bench_override, struct grade_result *r, struct ka_err *e)
{
	memset(r, 0, sizeof *r);
	r->verdict = VERDICT_OK;
	r->test_grade = s->test_grade;
	struct grade_run gr = {.s = s, .t = t, .r = r, .t0 = util_now()};
	/* Back from grade_session_idle: a fresh runner (none is running). */
	if (s->idle) {
		devlock_idle(s->lock, -1);
		s->idle = 0;
		if (session_fresh_runner(s, e))
			return -1;
	}
	/* Another session's memory turn: free this runner's memory, wait for
	 * the turn to end, then go on with a fresh runner. */
	if (s->lock && devlock_turn_wanted(s->lock, s)) {
		runclient_forget(s->rc);
		s->base_key = 0;
		r->device_wait_s += devlock_park(s->lock, s);
		if (session_fresh_runner(s, e))
			return -1;
	}
	gr.shapes = xcalloc(GRADE_MAX_SHAPES, sizeof *gr.shapes);
	/* Each step: 0 goes on, 1 ends with r final, -1 ends with e. The
	 * shapes come first: the gold ahead works on them during the compile. */
	int x = grade_shapes(&gr, bench_override, e);
	if (!x)
		ahead_start(&gr);
	if (!x)
		x = grade_compile(&gr, src, len, e);
	if (!x)
		x = grade_record(&gr, e);
	if (!x)
		x = grade_correctness(&gr, e);
	if (!x)
		x = grade_timing(&gr, e);
	ahead_join(&gr, 1); /* still running when the grade ended before correctness */
	r->total_s = util_now() - gr.t0;
	r->other_s = r->total_s - r->compile_s - r->record_s - r->setup_s - r->protocol_s -
		     r->runner_s - r->verify_s - r->stats_s - r->device_wait_s;
	/* A task that is not trusted bank code failed, not the candidate nor
	 * the grader: its boxed gold (gold_broken) or its derived baseline. */
	const char *broken = x < 0 ? gold_broken(gr.g) : NULL;
	r->killed_outside |= gold_killed_outside(gr.g);
	if (broken || (x < 0 && gr.task_fault)) {
		char why[KA_ERRLEN];
		snprintf(why, sizeof why, "%s", broken ? broken : e->msg);
		ka_err_set(e, "task %s is broken: %s", t->name, why);
		x = -2;
	}
	grade_run_free(&gr);
	return x < 0 ? x : 0;
}

/* How long a memory turn waits for the other sessions on the device to
 * park: one that is not grading holds its memory until its next grade. */
#define GRADE_TURN_WAIT_S 120.0

/* A grade that ran out of device memory beside other graders (docs/grader.md,
 * "Device memory"): graded again in the device's memory turn, once the
 * other sessions have freed what their runners held. grade_once's return,
 * with r the second grade's and r->regraded saying why. */
static int grade_in_turn(struct grade_session *s, const struct ka_task *t, const char *src,
			 size_t len, const char *bench_override, struct grade_result *r,
			 struct ka_err *e)
{
	char why[sizeof r->regraded];
	int users = devlock_users(s->lock);
	snprintf(why, sizeof why,
		 "the first grade ran out of device memory with %d graders on the device; graded "
		 "again with the others' memory freed: %.400s",
		 users, e->msg);
	grade_result_free(r);
	runclient_forget(s->rc); /* this session's memory first */
	s->base_key = 0;
	double waited = devlock_turn_take(s->lock, s, GRADE_TURN_WAIT_S);
	int x = session_fresh_runner(s, e);
	if (!x)
		x = grade_once(s, t, src, len, bench_override, r, e);
	devlock_turn_give(s->lock, s);
	if (x == -1 && runclient_device_memory(e)) {
		char m[KA_ERRLEN];
		snprintf(m, sizeof m, "%s", e->msg);
		ka_err_set(e,
			   "%.400s (again with the device's memory freed of the other %d graders)",
			   m, users - 1);
	}
	r->device_wait_s += waited;
	snprintf(r->regraded, sizeof r->regraded, "%s", why);
	return x;
}

int grade_candidate(struct grade_session *s, const struct ka_task *t, const char *src, size_t len,
		    const char *bench_override, struct grade_result *r, struct ka_err *e)
{
	int x = grade_once(s, t, src, len, bench_override, r, e);
	if (x == -1 && runclient_device_memory(e) && devlock_users(s->lock) > 1)
		x = grade_in_turn(s, t, src, len, bench_override, r, e);
	if (!r->killed_outside || (x == 0 && r->verdict == VERDICT_OK))
		return x;
	char why[sizeof r->regraded];
	snprintf(why, sizeof why,
		 "the first grade's %s rested on a helper's death (the runner, the recorder or the "
		 "gold box) by a SIGKILL that ka did not send, no evidence about the candidate: "
		 "%.400s",
		 x == -2 ? "task failure"
		 : x	 ? "grader failure"
			 : verdict_name(r->verdict),
		 x ? e->msg : r->detail);
	grade_result_free(r);
	x = grade_once(s, t, src, len, bench_override, r, e);
	snprintf(r->regraded, sizeof r->regraded, "%s", why);
	return x;
}

void grade_result_free(struct grade_result *r)
{
	if (!r)
		return;
	json_decref(r->evidence);
	r->evidence = NULL;
	json_decref(r->checks);
	r->checks = NULL;
}

static json_t *figure_json(const struct grade_figure *f)
{
	if (!f->valid)
		return json_null();
	return json_pack("{s:f,s:f,s:f,s:i}", "median", f->median, "lo", f->lo, "hi", f->hi, "n",
			 f->n);
}

json_t *grade_result_json(const struct grade_session *s, const struct ka_task *t,
			  const struct grade_result *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "schema", json_string("ka-grade/1"));
	json_object_set_new(j, "task", json_string(t->name));
	json_object_set_new(j, "tier", json_string(t->tier));
	json_object_set_new(j, "target", json_string(s->ops->name));
	json_object_set_new(j, "test_grade", json_boolean(r->test_grade));
	json_object_set_new(j, "verdict", json_string(verdict_name(r->verdict)));
	json_object_set_new(j, "phase", json_string(r->phase));
	json_object_set_new(j, "shape", json_string(r->shape));
	json_object_set_new(j, "detail", json_string(r->detail));
	json_object_set_new(j, "evidence", r->evidence ? json_incref(r->evidence) : json_null());
	json_object_set_new(j, "checks", r->checks ? json_incref(r->checks) : json_array());
	json_object_set_new(j, "bench_shape", json_string(r->bench_shape));
	json_object_set_new(j, "time_us", figure_json(&r->time_us));
	json_object_set_new(j, "eager_us", figure_json(&r->eager_us));
	json_object_set_new(j, "compiled_us", figure_json(&r->compiled_us));
	json_object_set_new(j, "speedup_eager", figure_json(&r->speedup_eager));
	json_object_set_new(j, "speedup_compiled", figure_json(&r->speedup_compiled));
	json_object_set_new(j, "cupti_span_us", figure_json(&r->cupti_span_us));
	json_object_set_new(j, "cupti_host_openings", json_integer(r->cupti_host_openings));
	json_object_set_new(j, "regraded", r->regraded[0] ? json_string(r->regraded) : json_null());
	json_object_set_new(j, "window_overhead_us", json_real(s->window_ns * 1e-3));
	json_object_set_new(
		j, "clocks_seen",
		r->clock_sm_max ? json_pack("{s:i,s:i,s:i,s:I}", "sm_mhz_min", r->clock_sm_min,
					    "sm_mhz_max", r->clock_sm_max, "mem_mhz", r->clock_mem,
					    "throttle_reasons", (json_int_t)r->throttle_reasons)
				: json_null());
	json_object_set_new(j, "seconds",
			    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
				      "compile", r->compile_s, "record", r->record_s, "load",
				      r->load_s, "correctness", r->correct_s, "timing", r->timing_s,
				      "total", r->total_s, "ahead", r->ahead_s, "runner",
				      r->runner_s, "verify", r->verify_s, "device_wait",
				      r->device_wait_s, "setup", r->setup_s, "protocol",
				      r->protocol_s, "stats", r->stats_s, "other", r->other_s));
	json_object_set(j, "device", s->device);
	json_object_set_new(j, "protocol", grade_protocol_json(&s->proto));
	return j;
}
