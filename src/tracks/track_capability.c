/* track_capability.c: track 1, capability (see track.h, docs/capability.md).
 *
 * One run: k samples of every selected task from one model, each graded once
 * and scored. The main thread prepares everything that can fail on bad input
 * (tasks, prompts, the model spec) before touching the output folder, then:
 *   - opens the journal and checks that out/ holds this run or nothing;
 *   - queues the replies already in the journal but not graded;
 *   - starts one grading worker per grade session (one per GPU), and where
 *     the target compiles ahead (CUDA) a pool of compile threads that fill
 *     the compile caches with every task's baselines and every reply's
 *     source while the workers grade, so compilation overlaps grading;
 *   - sends the missing requests with model_run; each reply is journaled and
 *     queued for grading from the model callback, so generation and grading
 *     overlap;
 *   - waits for the workers, then writes the scorecard, results.jsonl and the
 *     kernels from the journal (so a resumed run writes the same files).
 * The journal is the only state that survives the process. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "journal.h"
#include "metrics.h"
#include "model.h"
#include "prompt.h"
#include "scorecard.h"
#include "track.h"
#include "util.h"
#include "verdict.h"

#define CAP_VERSION "0.1.0" /* ka_version written in scorecards */
#define CAP_MAX_SESSIONS 64
#define CAP_SOURCE_MAX ((size_t)1 << 20)

const char *const track_names[] = {"capability",    "rsi",     "weight_rsi",  "procedure",
				   "procedure_rsi", "harness", "harness_rsi", "frontier",
				   "controls",	    NULL};

int track_available(const char *name)
{
	if (!strcmp(name, "capability"))
		return 1;
	for (int i = 0; track_names[i]; i++)
		if (!strcmp(name, track_names[i]))
			return 0;
	return -1;
}

void capability_opts_default(struct capability_opts *o)
{
	memset(o, 0, sizeof *o);
	o->split = "public";
	o->target = "auto";
	o->out = "out";
	o->k = 5;
	o->concurrency = 16;
	o->temperature = 0.7;
	o->max_tokens = 8192;
	grade_protocol_default(&o->proto);
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

const char *track_resolve_target(const char *target)
{
	if (strcmp(target, "auto"))
		return target;
	char *runner = xasprintf("%s/ka-run-cuda", util_exe_dir());
	int cuda = access(runner, X_OK) == 0 && file_exists("/dev/nvidia0");
	free(runner);
	return cuda ? "cuda" : "opencl";
}

/* ---- the run's state ------------------------------------------------------ */

struct cap_task {
	struct ka_task *t;
	char *prompt;
	char prompt_hash[17];
};

/* A queued job: a sample to grade, or on the compile-ahead queue a source
 * to compile (code NULL there: the task's baselines; sample unused). */
struct grade_item {
	int task, sample;
	char *code; /* NULL: the reply held no code */
	struct grade_item *next;
};

struct run;

struct worker {
	struct run *r;
	struct grade_session *s;
	int index;
	pthread_t th;
	int started, dead;
	double busy_s, compile_s, record_s, correct_s, timing_s;
	int graded;
};

struct run {
	const struct capability_opts *o;
	const char *target;
	struct cap_task *tasks;
	int n_tasks, k;
	struct journal *j;
	int start_id;
	/* grading queue */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct grade_item *head, *tail;
	int queued, closed, workers_alive;
	/* compile-ahead queue (under mu): on only where the target compiles
	 * ahead; warm_s is one grade session, used read-only */
	pthread_cond_t wcv;
	struct grade_item *whead, *wtail;
	const struct grade_session *warm_s;
	int warm_on, warm_stop, warmed, warm_threads;
	/* progress (under mu) */
	int total, graded, ok, graded_now, failed_requests, fatal;
	int64_t in_tokens, out_tokens;
	double cost;
	double t0, last_draw;
	int tty;
	char fatal_msg[KA_ERRLEN];
};

static void run_fatal(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_fatal(struct run *r, const char *fmt, ...)
{
	pthread_mutex_lock(&r->mu);
	if (!r->fatal) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->fatal_msg, sizeof r->fatal_msg, fmt, ap);
		va_end(ap);
		r->fatal = 1;
	}
	pthread_cond_broadcast(&r->cv);
	pthread_cond_broadcast(&r->wcv);
	pthread_mutex_unlock(&r->mu);
}

/* ---- progress ------------------------------------------------------------- */

static void fmt_duration(double s, char *buf, size_t cap)
{
	if (!(s >= 0) || s > 1e7)
		snprintf(buf, cap, "?");
	else if (s < 60)
		snprintf(buf, cap, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, cap, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, cap, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void fmt_tokens(int64_t n, char *buf, size_t cap)
{
	if (n < 10000)
		snprintf(buf, cap, "%lld", (long long)n);
	else if (n < 10000000)
		snprintf(buf, cap, "%.1fk", n / 1e3);
	else
		snprintf(buf, cap, "%.1fM", n / 1e6);
}

/* Redraw the terminal line; caller holds mu. force: draw even if recent. */
static void progress_draw(struct run *r, int force)
{
	if (!r->tty || r->o->quiet)
		return;
	double now = util_now();
	if (!force && now - r->last_draw < 0.2)
		return;
	r->last_draw = now;
	char eta[32] = "?", tok[32];
	int left = r->total - r->graded;
	if (left == 0)
		snprintf(eta, sizeof eta, "0s");
	else if (r->graded_now > 0)
		fmt_duration((now - r->t0) / r->graded_now * left, eta, sizeof eta);
	fmt_tokens(r->in_tokens + r->out_tokens, tok, sizeof tok);
	fprintf(stderr,
		"\r\033[Kcapability: %d/%d graded, %d correct, %d queued, ETA %s, %s tokens, $%.2f",
		r->graded, r->total, r->ok, r->queued, eta, tok, r->cost);
	if (r->failed_requests)
		fprintf(stderr, ", %d requests failed", r->failed_requests);
	fflush(stderr);
}

/* Print one line above the progress line; caller holds mu. */
static void progress_line(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void progress_line(struct run *r, const char *fmt, ...)
{
	if (r->tty && !r->o->quiet)
		fputs("\r\033[K", stderr);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	progress_draw(r, 1);
}

/* ---- small helpers -------------------------------------------------------- */

/* A copy of s that is valid UTF-8 (bad bytes become '?'), at most cap bytes
 * without cutting a character. */
static char *utf8_clean(const char *s, size_t cap)
{
	size_t n = strlen(s);
	char *out = xmalloc(n + 1);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80	      ? 1
			     : (c >> 5) == 6  ? 2
			     : (c >> 4) == 14 ? 3
			     : (c >> 3) == 30 ? 4
					      : 0;
		int good = len > 0 && i + len <= n;
		for (size_t k = 1; good && k < len; k++)
			good = ((unsigned char)s[i + k] >> 6) == 2;
		if (!good)
			len = 1;
		if (o + (good ? len : 1) > cap)
			break;
		if (good) {
			memcpy(out + o, s + i, len);
			o += len;
		} else {
			out[o++] = '?';
		}
		i += len;
	}
	out[o] = 0;
	return out;
}

static char *kernel_rel_path(const struct run *r, int task, int sample)
{
	return xasprintf("kernels/%s/%d%s", r->tasks[task].t->name, sample,
			 prompt_source_ext(r->target));
}

/* Write out/kernels/<task>/<sample>.<ext> (if missing or force). */
static int write_kernel(const struct run *r, int task, int sample, const char *code, int force,
			struct ka_err *e)
{
	char *rel = kernel_rel_path(r, task, sample);
	char *path = xasprintf("%s/%s", r->o->out, rel);
	char *dir = xasprintf("%s/kernels/%s", r->o->out, r->tasks[task].t->name);
	int rc = 0;
	if (force || !file_exists(path))
		rc = util_mkdirs(dir, e) || util_write_file(path, code, strlen(code), e) ? -1 : 0;
	free(rel);
	free(path);
	free(dir);
	return rc;
}

/* ---- the grading queue and its workers ------------------------------------ */

/* Queue a compile-ahead job (nothing when compile-ahead is off). */
/* A new job, and appending one to a queue (the caller holds r->mu). */
static struct grade_item *item_new(int task, int sample, const char *code)
{
	struct grade_item *it = xcalloc(1, sizeof *it);
	it->task = task;
	it->sample = sample;
	it->code = code ? xstrdup(code) : NULL;
	return it;
}

static void item_append(struct grade_item **head, struct grade_item **tail, struct grade_item *it)
{
	if (*tail)
		(*tail)->next = it;
	else
		*head = it;
	*tail = it;
}

/* Free a queue's jobs left (the threads that use it have stopped). */
static void items_free(struct grade_item **head, struct grade_item **tail)
{
	while (*head) {
		struct grade_item *it = *head;
		*head = it->next;
		free(it->code);
		free(it);
	}
	*tail = NULL;
}

static void warm_push(struct run *r, int task, const char *code)
{
	if (!r->warm_on)
		return;
	struct grade_item *it = item_new(task, -1, code);
	pthread_mutex_lock(&r->mu);
	item_append(&r->whead, &r->wtail, it);
	pthread_cond_signal(&r->wcv);
	pthread_mutex_unlock(&r->mu);
}

/* A compile thread: jobs until the graders are done (or the run fails). */
static void *warm_main(void *arg)
{
	struct run *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (!r->whead && !r->warm_stop && !r->fatal)
			pthread_cond_wait(&r->wcv, &r->mu);
		struct grade_item *it = r->fatal || r->warm_stop ? NULL : r->whead;
		if (it) {
			r->whead = it->next;
			if (!r->whead)
				r->wtail = NULL;
		}
		pthread_mutex_unlock(&r->mu);
		if (!it)
			return NULL;
		struct ka_err e;
		const struct ka_task *t = r->tasks[it->task].t;
		if (grade_warm(r->warm_s, t, it->code, it->code ? strlen(it->code) : 0, &e) < 0)
			/* Not fatal: the grade builds it again and reports. */
			fprintf(stderr, "ka: compiling ahead for %s: %s\n", t->name, e.msg);
		pthread_mutex_lock(&r->mu);
		r->warmed++;
		pthread_mutex_unlock(&r->mu);
		free(it->code);
		free(it);
	}
}

/* Stop the compile threads (a job under way finishes first), join them and
 * drop the jobs left. Safe to call again. */
static void warm_join(struct run *r, pthread_t *th, int *n)
{
	pthread_mutex_lock(&r->mu);
	r->warm_stop = 1;
	pthread_cond_broadcast(&r->wcv);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < *n; i++)
		pthread_join(th[i], NULL);
	*n = 0;
	items_free(&r->whead, &r->wtail);
}

static void queue_push(struct run *r, int task, int sample, const char *code)
{
	if (code)
		warm_push(r, task, code);
	struct grade_item *it = item_new(task, sample, code);
	pthread_mutex_lock(&r->mu);
	item_append(&r->head, &r->tail, it);
	r->queued++;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Next item, or NULL when the queue is closed and empty (or the run failed). */
static struct grade_item *queue_pop(struct run *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->head && !r->closed && !r->fatal)
		pthread_cond_wait(&r->cv, &r->mu);
	struct grade_item *it = NULL;
	if (r->head && !r->fatal) {
		it = r->head;
		r->head = it->next;
		if (!r->head)
			r->tail = NULL;
		r->queued--;
	}
	pthread_mutex_unlock(&r->mu);
	return it;
}

static void figure_clean(const struct grade_figure *f, struct metrics_speedup *out)
{
	memset(out, 0, sizeof *out);
	if (!f->valid || !(f->median > 0) || !isfinite(f->median))
		return;
	out->present = 1;
	out->median = f->median;
	out->lo = isfinite(f->lo) && f->lo > 0 && f->lo <= f->median ? f->lo : f->median;
	out->hi = isfinite(f->hi) && f->hi >= f->median ? f->hi : f->median;
}

static void grade_one(struct worker *w, struct grade_item *it)
{
	struct run *r = w->r;
	const struct cap_task *ct = &r->tasks[it->task];
	struct grade_result res;
	memset(&res, 0, sizeof res);
	struct ka_err e;
	double t0 = util_now();
	const char *src = it->code ? it->code : "";
	if (grade_candidate(w->s, ct->t, src, strlen(src), NULL, &res, &e)) {
		grade_result_free(&res);
		pthread_mutex_lock(&r->mu);
		w->dead = 1;
		r->workers_alive--;
		progress_line(r, "ka: grade session %d stopped: grader failure on %s sample %d: %s",
			      w->index, ct->t->name, it->sample, e.msg);
		if (r->workers_alive == 0 && !r->fatal) {
			snprintf(r->fatal_msg, sizeof r->fatal_msg,
				 "every grade session failed (last: %.400s)", e.msg);
			r->fatal = 1;
			pthread_cond_broadcast(&r->cv);
		}
		pthread_mutex_unlock(&r->mu);
		return;
	}
	double dt = util_now() - t0;
	json_t *rj = grade_result_json(w->s, ct->t, &res);
	char *text = json_dumps(rj, JSON_COMPACT);
	json_decref(rj);
	char *detail = utf8_clean(res.detail, 4000);
	const char *vname = verdict_name(res.verdict);
	int rc = journal_put_grade(r->j, ct->t->name, it->sample, vname, detail, text ? text : "{}",
				   r->start_id, w->index, &e);
	free(text);
	if (rc) {
		run_fatal(r, "%s", e.msg);
		free(detail);
		grade_result_free(&res);
		return;
	}
	w->busy_s += dt;
	w->compile_s += res.compile_s;
	w->record_s += res.record_s;
	w->correct_s += res.correct_s;
	w->timing_s += res.timing_s;
	w->graded++;
	struct metrics_sample ms = {.ok = res.verdict == VERDICT_OK};
	figure_clean(&res.speedup_eager, &ms.eager);
	pthread_mutex_lock(&r->mu);
	r->graded++;
	r->graded_now++;
	r->ok += res.verdict == VERDICT_OK;
	if (r->o->verbose) {
		char sp[96] = "";
		if (ms.ok && ms.eager.present)
			snprintf(sp, sizeof sp, "  %.3fx [%.3f, %.3f] vs eager", ms.eager.median,
				 ms.eager.lo, ms.eager.hi);
		char first[121];
		snprintf(first, sizeof first, "%s", detail);
		char *nl = strchr(first, '\n');
		if (nl)
			*nl = 0;
		progress_line(r, "  %s/%d  %s%s  s=%.3f  (%.1fs)%s%s", ct->t->name, it->sample,
			      vname, sp, metrics_sample_score(&ms), dt, ms.ok ? "" : "  ",
			      ms.ok ? "" : first);
	} else {
		progress_draw(r, 0);
	}
	pthread_mutex_unlock(&r->mu);
	free(detail);
	grade_result_free(&res);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct grade_item *it;
	while (!w->dead && (it = queue_pop(w->r))) {
		grade_one(w, it);
		free(it->code);
		free(it);
	}
	return NULL;
}

/* ---- the model callback ---------------------------------------------------- */

static void on_reply(const struct model_request *req, const struct model_reply *rep, void *ctx)
{
	struct run *r = ctx;
	int task = (int)(intptr_t)req->user;
	/* Journaled even after a failure of the graders: the reply is paid for,
	 * and the next start grades it. */
	struct journal_reply jr = {
		.ok = rep->ok,
		.text = rep->text,
		.code = rep->code,
		.lang = (char *)req->lang,
		.finish = (char *)rep->finish,
		.error = (char *)rep->error,
		.seed = rep->seed,
		.in_tokens = rep->in_tokens,
		.out_tokens = rep->out_tokens,
		.cost_usd = rep->cost_usd,
		.latency_s = rep->latency_s,
		.cached = rep->cached,
		.http_status = rep->http_status,
		.attempts = rep->attempts,
	};
	struct ka_err e;
	if (journal_put_reply(r->j, req->task, req->sample, &jr, &e)) {
		run_fatal(r, "%s", e.msg);
		return;
	}
	if (rep->ok && rep->code && write_kernel(r, task, req->sample, rep->code, 1, &e))
		fprintf(stderr, "ka: %s (the journal keeps the source)\n", e.msg);
	pthread_mutex_lock(&r->mu);
	if (rep->ok) {
		r->in_tokens += rep->in_tokens;
		r->out_tokens += rep->out_tokens;
		r->cost += rep->cost_usd;
	} else {
		r->failed_requests++;
		if (r->o->verbose)
			progress_line(r, "  %s/%d  request failed: %s", req->task, req->sample,
				      rep->error);
	}
	progress_draw(r, 0);
	int fatal = r->fatal;
	pthread_mutex_unlock(&r->mu);
	if (rep->ok && !fatal)
		queue_push(r, task, req->sample, rep->code);
}

/* ---- identity of a run ------------------------------------------------------ */

/* The first key whose value differs between two argument objects, with both
 * values, into msg. */
static void args_diff(const char *old_json, const char *new_json, char *msg, size_t cap)
{
	json_t *a = json_loads(old_json, 0, NULL), *b = json_loads(new_json, 0, NULL);
	snprintf(msg, cap, "the arguments differ");
	const char *key;
	json_t *va;
	if (a && b) {
		json_object_foreach(a, key, va)
		{
			json_t *vb = json_object_get(b, key);
			if (vb && json_equal(va, vb))
				continue;
			char *sa = json_dumps(va, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
			char *sb =
				vb ? json_dumps(vb, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS)
				   : xstrdup("(none)");
			snprintf(msg, cap, "%s is %.120s there, %.120s here", key, sa ? sa : "?",
				 sb ? sb : "?");
			free(sa);
			free(sb);
			break;
		}
	}
	json_decref(a);
	json_decref(b);
}

/* ---- scorecard ---------------------------------------------------------------- */

static const char *model_name_of(const char *spec, char *buf, size_t cap)
{
	const char *colon = strchr(spec, ':');
	const char *be_end = colon ? colon : spec;
	size_t be_len = (size_t)(be_end - spec);
	int api = colon && ((be_len == 6 && !strncmp(spec, "openai", 6)) ||
			    (be_len == 9 && !strncmp(spec, "anthropic", 9)) ||
			    (be_len == 7 && !strncmp(spec, "bedrock", 7)));
	if (!api) {
		snprintf(buf, cap, "%s", spec);
		return buf;
	}
	const char *name = colon + 1, *at = strchr(name, '@');
	size_t n = at ? (size_t)(at - name) : strlen(name);
	snprintf(buf, cap, "%.*s", (int)n, name);
	return buf;
}

/* open or closed: --model-kind, else anthropic and bedrock and OpenAI's own
 * API are closed; an OpenAI-compatible server at a given URL (vLLM, SGLang,
 * llama.cpp, Ollama) and local backends serve open models. */
static const char *model_kind_of(const struct capability_opts *o, const struct model *m)
{
	if (o->model_kind)
		return o->model_kind;
	const char *be = model_backend_name(m);
	if (!strcmp(be, "anthropic") || !strcmp(be, "bedrock"))
		return "closed";
	if (!strcmp(be, "openai"))
		return strchr(o->model, '@') ? "open" : "closed";
	return "open";
}

static json_t *str_or(const json_t *d, const char *const *keys, const char *dflt)
{
	for (int i = 0; keys[i]; i++) {
		const char *s = json_string_value(json_object_get(d, keys[i]));
		if (s && *s)
			return json_string(s);
	}
	return json_string(dflt);
}

static json_t *num_or_null(const json_t *d, const char *const *keys)
{
	for (int i = 0; keys[i]; i++) {
		json_t *v = json_object_get(d, keys[i]);
		if (json_is_number(v))
			return json_real(json_number_value(v));
	}
	return json_null();
}

/* The scorecard's device object from what the runner reported (its whole
 * report goes under extra). */
static json_t *device_json(struct worker *w, int n)
{
	const json_t *d = grade_session_device(w[0].s);
	static const char *const name_k[] = {"name", NULL};
	static const char *const driver_k[] = {"driver", "driver_version", NULL};
	static const char *const runtime_k[] = {"runtime",	    "cuda_runtime", "cuda_version",
						"platform_version", "version",	    NULL};
	static const char *const smin_k[] = {"sm_mhz_min", "sm_clock_mhz_min", NULL};
	static const char *const smax_k[] = {"sm_mhz_max", "sm_clock_mhz_max", "max_clock_mhz",
					     NULL};
	static const char *const mem_k[] = {"mem_mhz", "mem_clock_mhz", NULL};
	const json_t *clk = json_object_get(d, "clocks");
	const json_t *cs = json_is_object(clk) ? clk : d;
	json_t *clocks = json_object();
	json_t *lo = num_or_null(cs, smin_k), *hi = num_or_null(cs, smax_k);
	if (json_is_number(lo) && json_is_number(hi) &&
	    json_number_value(lo) > json_number_value(hi)) {
		json_decref(lo);
		lo = json_null();
	}
	json_object_set_new(clocks, "sm_mhz_min", lo);
	json_object_set_new(clocks, "sm_mhz_max", hi);
	json_object_set_new(clocks, "mem_mhz", num_or_null(cs, mem_k));
	json_t *extra = json_deep_copy(d);
	if (!json_is_object(extra)) {
		json_decref(extra);
		extra = json_object();
	}
	if (n > 1) {
		json_t *all = json_array();
		for (int i = 0; i < n; i++)
			json_array_append(all, (json_t *)grade_session_device(w[i].s));
		json_object_set_new(extra, "sessions", all);
	}
	return json_pack("{s:o,s:o,s:o,s:b,s:o,s:o}", "name", str_or(d, name_k, "unknown"),
			 "driver", str_or(d, driver_k, "unknown"), "runtime",
			 str_or(d, runtime_k, "unknown"), "test_grade",
			 json_is_true(json_object_get(d, "test_grade")), "clocks", clocks, "extra",
			 extra);
}

static json_t *protocol_json(const struct capability_opts *o, const json_t *device)
{
	json_t *p = grade_protocol_json(&o->proto);
	/* The scorecard requires flush_bytes and warmup; take them from the
	 * grader when it reports them, else from the runner's device report and
	 * the grader's randomised warm-up cap (docs/capability.md). */
	if (!json_object_get(p, "flush_bytes")) {
		json_t *fb = json_object_get(device, "flush_bytes");
		json_object_set_new(p, "flush_bytes",
				    json_integer(json_is_integer(fb) ? json_integer_value(fb)
								     : (json_int_t)256 << 20));
	}
	if (!json_object_get(p, "warmup"))
		json_object_set_new(p, "warmup", json_integer(4));
	return p;
}

static json_t *speedup_from_result(const json_t *res, const char *key)
{
	const json_t *f = json_object_get(res, key);
	if (!json_is_object(f))
		return json_null();
	struct grade_figure g = {.valid = 1,
				 .median = json_number_value(json_object_get(f, "median")),
				 .lo = json_number_value(json_object_get(f, "lo")),
				 .hi = json_number_value(json_object_get(f, "hi"))};
	struct metrics_speedup s;
	figure_clean(&g, &s);
	return scorecard_speedup_json(&s);
}

struct outputs {
	json_t *tasks; /* scorecard tasks array */
	char *jsonl;   /* results.jsonl text */
	size_t jsonl_len, jsonl_cap;
	struct metrics_task *mt;
	struct metrics_sample *ms;
	int n_mt, n_samples, n_ok;
};

static void jsonl_add(struct outputs *out, json_t *line)
{
	char *s = json_dumps(line, JSON_COMPACT);
	size_t n = s ? strlen(s) : 0;
	if (out->jsonl_len + n + 2 > out->jsonl_cap) {
		out->jsonl_cap = (out->jsonl_len + n + 2) * 2;
		out->jsonl = xrealloc(out->jsonl, out->jsonl_cap);
	}
	memcpy(out->jsonl + out->jsonl_len, s ? s : "", n);
	out->jsonl_len += n;
	out->jsonl[out->jsonl_len++] = '\n';
	out->jsonl[out->jsonl_len] = 0;
	free(s);
}

/* Read every graded sample from the journal into the scorecard's tasks,
 * results.jsonl lines and metrics arrays; rewrite missing kernel files. */
static int collect(struct run *r, struct outputs *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	out->tasks = json_array();
	out->jsonl = xstrdup("");
	out->jsonl_cap = 1;
	out->mt = xcalloc((size_t)r->n_tasks, sizeof *out->mt);
	out->ms = xcalloc((size_t)r->n_tasks * (size_t)r->k, sizeof *out->ms);
	for (int i = 0; i < r->n_tasks; i++) {
		const struct ka_task *t = r->tasks[i].t;
		json_t *samples = json_array();
		struct metrics_sample *first = &out->ms[out->n_samples];
		int n = 0;
		for (int s = 0; s < r->k; s++) {
			char *verdict = NULL, *result = NULL, *det = NULL;
			int g = journal_get_grade(r->j, t->name, s, &verdict, &det, &result, e);
			if (g < 0)
				return -1;
			if (g == 1)
				continue;
			struct journal_reply rep;
			if (journal_get_reply(r->j, t->name, s, &rep, e) < 0) {
				free(verdict);
				free(det);
				free(result);
				return -1;
			}
			json_t *res = json_loads(result ? result : "{}", 0, NULL);
			if (!res)
				res = json_object();
			int ok = verdict && !strcmp(verdict, "ok");
			json_t *se = ok ? speedup_from_result(res, "speedup_eager") : json_null();
			json_t *sc =
				ok ? speedup_from_result(res, "speedup_compiled") : json_null();
			json_t *tu = ok ? speedup_from_result(res, "time_us") : json_null();
			struct metrics_sample *m = &out->ms[out->n_samples];
			m->ok = ok;
			scorecard_speedup_get(se, &m->eager);
			scorecard_speedup_get(sc, &m->compiled);
			char *detail = utf8_clean(det ? det : "", 4000);
			json_t *sj = json_object();
			json_object_set_new(sj, "sample", json_integer(s));
			json_object_set_new(sj, "verdict", json_string(verdict));
			json_object_set_new(sj, "detail", json_string(detail));
			json_object_set_new(sj, "score", json_real(metrics_sample_score(m)));
			json_object_set_new(sj, "speedup_eager", se);
			json_object_set_new(sj, "speedup_compiled", sc);
			json_object_set_new(sj, "time_us", tu);
			json_object_set_new(sj, "tokens",
					    json_pack("{s:I,s:I}", "in", (json_int_t)rep.in_tokens,
						      "out", (json_int_t)rep.out_tokens));
			json_object_set_new(sj, "cost_usd", json_real(rep.cost_usd));
			json_object_set_new(sj, "latency_s", json_real(rep.latency_s));
			if (rep.code) {
				char *rel = kernel_rel_path(r, i, s);
				struct ka_err we;
				if (write_kernel(r, i, s, rep.code, 0, &we))
					fprintf(stderr, "ka: %s\n", we.msg);
				json_object_set_new(sj, "source_path", json_string(rel));
				free(rel);
			}
			json_array_append(samples, sj);
			json_t *line = json_deep_copy(sj);
			json_object_set_new(line, "task", json_string(t->name));
			json_object_set_new(line, "tier", json_string(t->tier));
			json_object_set_new(line, "grade", res);
			jsonl_add(out, line);
			json_decref(line);
			json_decref(sj);
			out->n_samples++;
			out->n_ok += ok;
			n++;
			free(detail);
			free(det);
			free(verdict);
			free(result);
			journal_reply_free(&rep);
		}
		if (n > 0) {
			json_array_append_new(out->tasks,
					      json_pack("{s:s,s:s,s:o}", "name", t->name, "tier",
							t->tier, "samples", samples));
			out->mt[out->n_mt] = (struct metrics_task){
				.name = t->name, .tier = t->tier, .samples = first, .n_samples = n};
			out->n_mt++;
		} else {
			json_decref(samples);
		}
	}
	return 0;
}

static void outputs_free(struct outputs *o)
{
	json_decref(o->tasks);
	free(o->jsonl);
	free(o->mt);
	free(o->ms);
}

static void iso_now(char *buf, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the run ------------------------------------------------------------------ */

static int lock_out(const char *out, int *fd, struct ka_err *e)
{
	char *path = xasprintf("%s/.lock", out);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(path);
	if (*fd < 0)
		return ka_err_set(e, "%s/.lock: %s", out, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		close(*fd);
		*fd = -1;
		return ka_err_set(e, "another ka is running with --out %s", out);
	}
	return 0;
}

static void remove_run(const char *out)
{
	static const char *const files[] = {"journal.sqlite",	  "journal.sqlite-wal",
					    "journal.sqlite-shm", "scorecard.json",
					    "results.jsonl",	  NULL};
	static const char *const dirs[] = {"kernels", "cache", ".grade", NULL};
	for (int i = 0; files[i]; i++) {
		char *p = xasprintf("%s/%s", out, files[i]);
		unlink(p);
		free(p);
	}
	for (int i = 0; dirs[i]; i++) {
		char *p = xasprintf("%s/%s", out, dirs[i]);
		util_rmtree(p);
		free(p);
	}
}

/* Parse "0,2,3" into device indices. */
static int parse_gpus(const char *s, int *out, int *n, struct ka_err *e)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 1023 || (*end && *end != ','))
			return ka_err_set(e, "--gpus: '%s' is not a list of GPU indices like 0,1,3",
					  s);
		for (int i = 0; i < *n; i++)
			if (out[i] == (int)v)
				return ka_err_set(e, "--gpus: GPU %ld is listed twice", v);
		if (*n == CAP_MAX_SESSIONS)
			return ka_err_set(e, "--gpus: more than %d GPUs", CAP_MAX_SESSIONS);
		out[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (*n == 0)
		return ka_err_set(e, "--gpus: empty list");
	return 0;
}

/* GPUs visible to CUDA: CUDA_VISIBLE_DEVICES if set, else /dev/nvidiaN. */
static int count_gpus(void)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	if (v) {
		int n = 0;
		for (const char *p = v; *p; p++)
			if (isdigit((unsigned char)*p) && (p == v || p[-1] == ','))
				n++;
		return n;
	}
	int n = 0;
	for (int i = 0; i < CAP_MAX_SESSIONS; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/nvidia%d", i);
		if (!file_exists(path))
			break;
		n++;
	}
	return n;
}

static void print_figure(const char *label, const json_t *agg, const char *key)
{
	struct metrics_figure f;
	scorecard_figure_get(json_object_get(agg, key), &f);
	if (f.defined)
		printf("  %-9s %.3f [%.3f, %.3f]\n", label, f.value, f.lo, f.hi);
	else
		printf("  %-9s n/a\n", label);
}

int track_capability_run(const struct capability_opts *o)
{
	struct ka_err e;
	struct run R;
	memset(&R, 0, sizeof R);
	struct run *r = &R;
	r->o = o;
	r->k = o->k;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_cond_init(&r->wcv, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE, lock_fd = -1, n_workers = 0, n_warm = 0;
	pthread_t warm_th[16];
	struct model *m = NULL;
	struct worker *workers = NULL;
	struct model_request *reqs = NULL;
	char *tmpl = NULL, *args_key = NULL, *args_pretty = NULL, *old_key = NULL;
	char *bank_real = NULL, *cache_dir = NULL;
	json_t *args = NULL;
	int n_reqs = 0;

	/* 1. Everything that bad input can break, before out/ is touched. */
	r->target = track_resolve_target(o->target);
	const char *bank = o->bank ? o->bank : bank_default_path();
	bank_real = realpath(bank, NULL);
	if (!bank_real) {
		fprintf(stderr, "ka --track capability: bank '%s': %s\n", bank, strerror(errno));
		goto out;
	}
	char bhash[17];
	int bank_n = 0;
	if (bank_content_hash_hex(bank_real, bhash, &bank_n, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out;
	}
	struct bank_list list = {0};
	if (bank_scan(bank_real, &list, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out;
	}
	r->tasks = xcalloc((size_t)(list.n ? list.n : 1), sizeof *r->tasks);
	const char *tmpl_path = o->prompt ? o->prompt : prompt_default_template();
	if (prompt_load_template(tmpl_path, &tmpl, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		bank_list_free(&list);
		goto out;
	}
	for (int i = 0; i < list.n; i++) {
		struct ka_task *t = task_load(list.dirs[i], &e);
		if (!t) {
			fprintf(stderr, "ka --track capability: %s\n", e.msg);
			bank_list_free(&list);
			goto out;
		}
		if (o->tier && strcmp(t->tier, o->tier)) {
			task_free(t);
			continue;
		}
		struct cap_task *ct = &r->tasks[r->n_tasks++];
		ct->t = t;
		ct->prompt = prompt_render(tmpl, t, r->target, &e);
		if (!ct->prompt) {
			fprintf(stderr, "ka --track capability: %s: %s\n", tmpl_path, e.msg);
			bank_list_free(&list);
			goto out;
		}
		snprintf(ct->prompt_hash, sizeof ct->prompt_hash, "%016llx",
			 (unsigned long long)util_hash64(ct->prompt, strlen(ct->prompt), 0));
	}
	bank_list_free(&list);
	if (r->n_tasks == 0) {
		fprintf(stderr, "ka --track capability: no %s task in bank %s\n",
			o->tier ? o->tier : "", bank_real);
		goto out;
	}
	struct model_params mp;
	model_params_default(&mp);
	mp.temperature = o->temperature;
	mp.max_tokens = o->max_tokens;
	mp.seed = o->seed;
	mp.concurrency = o->concurrency;
	mp.prices_file = o->prices;
	mp.verbose = o->verbose;
	cache_dir = xasprintf("%s/cache", o->out);
	mp.cache_dir = cache_dir;
	m = model_open(o->model, &mp, &e);
	if (!m) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out;
	}
	int gpus[CAP_MAX_SESSIONS], n_gpus = 1;
	gpus[0] = 0;
	if (!strcmp(r->target, "cuda")) {
		if (o->gpus) {
			if (parse_gpus(o->gpus, gpus, &n_gpus, &e)) {
				fprintf(stderr, "ka --track capability: %s\n", e.msg);
				goto out_model;
			}
		} else {
			n_gpus = count_gpus();
			if (n_gpus < 1)
				n_gpus = 1;
			for (int i = 0; i < n_gpus; i++)
				gpus[i] = i;
		}
	}

	/* The run's identity: every argument that decides the results. */
	args = json_object();
	json_object_set_new(args, "model", json_string(o->model));
	json_object_set_new(args, "bank", json_string(bank_real));
	json_object_set_new(args, "bank_hash", json_string(bhash));
	json_object_set_new(args, "split", json_string(o->split));
	json_object_set_new(args, "tier", json_string(o->tier ? o->tier : "all"));
	json_object_set_new(args, "k", json_integer(o->k));
	json_object_set_new(args, "seed", json_integer(o->seed));
	json_object_set_new(args, "target", json_string(r->target));
	json_object_set_new(args, "temperature", json_real(o->temperature));
	json_object_set_new(args, "max_tokens", json_integer(o->max_tokens));
	char th[17];
	snprintf(th, sizeof th, "%016llx", (unsigned long long)util_hash64(tmpl, strlen(tmpl), 0));
	json_object_set_new(args, "prompt_hash", json_string(th));
	json_object_set_new(args, "protocol", grade_protocol_json(&o->proto));
	args_key = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	args_pretty = json_dumps(args, JSON_INDENT(2) | JSON_SORT_KEYS);

	/* 2. The output folder: locked, then this run's journal. */
	if (util_mkdirs(o->out, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out_model;
	}
	if (lock_out(o->out, &lock_fd, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out_model;
	}
	if (o->fresh)
		remove_run(o->out);
	char *jpath = xasprintf("%s/journal.sqlite", o->out);
	r->j = journal_open(jpath, &e);
	free(jpath);
	if (!r->j) {
		fprintf(stderr, "ka --track capability: %s (use --fresh to start over)\n", e.msg);
		goto out_model;
	}
	int have = journal_run_get(r->j, &old_key, NULL, &e);
	if (have < 0) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		rc = KA_EXIT_FAIL;
		goto out_model;
	}
	if (have == 0 && strcmp(old_key, args_key)) {
		char why[400];
		args_diff(old_key, args_key, why, sizeof why);
		fprintf(stderr,
			"ka --track capability: %s holds a different run (%s); use --fresh to "
			"discard it, or another --out\n",
			o->out, why);
		goto out_model;
	}
	if (have == 1 && journal_run_set(r->j, args_key, args_pretty, bhash, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		rc = KA_EXIT_FAIL;
		goto out_model;
	}
	int resumed = have == 0;
	rc = KA_EXIT_FAIL;

	/* 3. Grade sessions, one per GPU (one for OpenCL). */
	workers = xcalloc((size_t)n_gpus, sizeof *workers);
	for (int i = 0; i < n_gpus; i++) {
		/* CUDA's work folder holds only content-addressed files (the
		 * compile cache, the baselines), so its sessions share one and
		 * one compile-ahead pool serves them all. */
		char *wd = strcmp(r->target, "cuda") ? xasprintf("%s/.grade/%d", o->out, i)
						     : xasprintf("%s/.grade/cuda", o->out);
		struct grade_session *s =
			grade_session_open(r->target, o->platform, gpus[i], &o->proto, wd, &e);
		free(wd);
		if (!s) {
			fprintf(stderr,
				"ka --track capability: cannot start the %s grader on device %d: "
				"%s\n",
				r->target, gpus[i], e.msg);
			goto out_model;
		}
		workers[n_workers++] = (struct worker){.r = r, .s = s, .index = i};
	}
	/* Compile-ahead: the baselines of every task first, then each reply's
	 * source as it is queued for grading (queue_push). */
	if (n_workers > 0 && grade_compiles_ahead(workers[0].s)) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		int want = cores > 2 ? (int)cores - 1 : 1;
		if (want > 16)
			want = 16;
		r->warm_s = workers[0].s;
		r->warm_on = 1;
		for (int i = 0; i < r->n_tasks; i++)
			warm_push(r, i, NULL);
		for (; n_warm < want; n_warm++)
			if (pthread_create(&warm_th[n_warm], NULL, warm_main, r))
				break;
		r->warm_threads = n_warm;
	}
	json_t *devs = json_array();
	for (int i = 0; i < n_workers; i++)
		json_array_append(devs, (json_t *)grade_session_device(workers[i].s));
	char *devs_text = json_dumps(devs, JSON_COMPACT);
	json_decref(devs);
	int jr = journal_start(r->j, devs_text, &r->start_id, &e);
	free(devs_text);
	if (jr) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		goto out_model;
	}

	/* 4. What is left: replies to grade, requests to send. */
	r->total = r->n_tasks * r->k;
	reqs = xcalloc((size_t)r->total, sizeof *reqs);
	const char *lang = prompt_extract_lang(r->target);
	int n_regrade = 0;
	for (int i = 0; i < r->n_tasks; i++) {
		const char *name = r->tasks[i].t->name;
		for (int s = 0; s < r->k; s++) {
			enum journal_state st;
			if (journal_state(r->j, name, s, &st, &e)) {
				fprintf(stderr, "ka --track capability: %s\n", e.msg);
				goto out_model;
			}
			if (st == JOURNAL_STATE_GRADED) {
				char *v = NULL;
				if (journal_get_grade(r->j, name, s, &v, NULL, NULL, &e) < 0) {
					fprintf(stderr, "ka --track capability: %s\n", e.msg);
					goto out_model;
				}
				r->graded++;
				r->ok += v && !strcmp(v, "ok");
				free(v);
			} else if (st == JOURNAL_STATE_REPLIED) {
				struct journal_reply rep;
				if (journal_get_reply(r->j, name, s, &rep, &e)) {
					fprintf(stderr, "ka --track capability: %s\n", e.msg);
					goto out_model;
				}
				queue_push(r, i, s, rep.code);
				n_regrade++;
				journal_reply_free(&rep);
			} else {
				reqs[n_reqs++] = (struct model_request){
					.task = name,
					.sample = s,
					.prompt = r->tasks[i].prompt,
					.lang = lang,
					.user = (void *)(intptr_t)i,
				};
			}
		}
	}
	struct journal_totals tot;
	if (journal_totals(r->j, &tot, &e) == 0) {
		r->in_tokens = tot.in_tokens;
		r->out_tokens = tot.out_tokens;
		r->cost = tot.cost_usd;
	}
	r->tty = isatty(2);
	r->t0 = util_now();
	if (!o->quiet && (resumed || o->verbose))
		fprintf(stderr,
			"ka: %s run in %s: %d of %d samples graded, %d replies to grade, %d "
			"requests to send\n",
			resumed ? "resuming the" : "starting a", o->out, r->graded, r->total,
			n_regrade, n_reqs);
	if (o->verbose)
		fprintf(stderr, "ka: target %s, %d grade session%s, model %s\n", r->target,
			n_workers, n_workers > 1 ? "s" : "", o->model);

	/* 5. The pipeline: graders start on what is queued while requests go out. */
	r->workers_alive = n_workers;
	for (int i = 0; i < n_workers; i++) {
		if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i])) {
			run_fatal(r, "cannot start a grading thread");
			break;
		}
		workers[i].started = 1;
	}
	double gen_t0 = util_now(), gen_s = 0;
	for (int i = 0; i < n_reqs; i++) {
		int64_t seed = o->seed + reqs[i].sample;
		if (journal_request(r->j, reqs[i].task, reqs[i].sample,
				    r->tasks[(intptr_t)reqs[i].user].prompt_hash, seed, &e)) {
			run_fatal(r, "%s", e.msg);
			break;
		}
	}
	if (n_reqs > 0 && !r->fatal && model_run(m, reqs, n_reqs, on_reply, r))
		run_fatal(r, "the model backend cannot work (%s)", model_backend_name(m));
	gen_s = util_now() - gen_t0;
	pthread_mutex_lock(&r->mu);
	r->closed = 1;
	pthread_cond_broadcast(&r->cv);
	progress_draw(r, 1);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < n_workers; i++)
		if (workers[i].started)
			pthread_join(workers[i].th, NULL);
	warm_join(r, warm_th, &n_warm);
	double wall = util_now() - r->t0;
	if (r->tty && !o->quiet)
		fputs("\r\033[K", stderr);
	items_free(&r->head, &r->tail);

	/* 6. Outputs, from the journal. */
	struct outputs outp;
	if (collect(r, &outp, &e)) {
		fprintf(stderr, "ka --track capability: %s\n", e.msg);
		outputs_free(&outp);
		goto out_model;
	}
	char created[32], mname[256];
	iso_now(created, sizeof created);
	json_t *sc = json_object();
	json_object_set_new(sc, "schema", json_string(SCORECARD_SCHEMA));
	json_object_set_new(sc, "track", json_string("capability"));
	json_object_set_new(sc, "created", json_string(created));
	json_object_set_new(sc, "ka_version", json_string(CAP_VERSION));
	json_object_set_new(sc, "model",
			    json_pack("{s:s,s:s,s:s,s:s}", "spec", o->model, "backend",
				      model_backend_name(m), "name",
				      model_name_of(o->model, mname, sizeof mname), "kind",
				      model_kind_of(o, m)));
	const char *slash = strrchr(bank_real, '/');
	json_object_set_new(sc, "bank",
			    json_pack("{s:s,s:s,s:s,s:s,s:i}", "name",
				      slash && slash[1] ? slash + 1 : bank_real, "path", bank_real,
				      "hash", bhash, "split", o->split, "n_tasks", bank_n));
	json_object_set_new(sc, "k", json_integer(o->k));
	json_object_set_new(sc, "seed", json_integer(o->seed));
	json_object_set_new(sc, "target", json_string(r->target));
	json_object_set_new(sc, "device", device_json(workers, n_workers));
	json_object_set_new(sc, "protocol", protocol_json(o, grade_session_device(workers[0].s)));
	json_object_set_new(sc, "tasks", json_incref(outp.tasks));
	json_t *agg = scorecard_aggregates_json(outp.mt, outp.n_mt, o->k);
	json_object_set_new(sc, "aggregates", agg);
	char *sc_text = json_dumps(sc, JSON_INDENT(2));
	char *sc_path = xasprintf("%s/scorecard.json", o->out);
	char *jl_path = xasprintf("%s/results.jsonl", o->out);
	int wrote = sc_text && !util_write_file(sc_path, sc_text, strlen(sc_text), &e) &&
		    !util_write_file(jl_path, outp.jsonl, outp.jsonl_len, &e);
	if (!wrote)
		fprintf(stderr, "ka --track capability: %s\n", sc_text ? e.msg : "cannot encode");
	json_t *overall = json_object_get(agg, "overall");
	int complete = outp.n_samples == r->total;
	if (wrote) {
		printf("scorecard: %s\n", sc_path);
		if (!o->quiet) {
			const json_t *dev = json_object_get(sc, "device");
			printf("  %s, %s on %s%s: %d of %d samples graded (%d tasks, k = %d)\n",
			       o->model, r->target, json_string_value(json_object_get(dev, "name")),
			       json_is_true(json_object_get(dev, "test_grade")) ? " [test-grade]"
										: "",
			       outp.n_samples, r->total, r->n_tasks, o->k);
			print_figure("correct", overall, "correct");
			print_figure("fast", overall, "fast");
			print_figure("mean C", overall, "mean_c");
		}
	}
	if (o->verbose) {
		double busy = 0, comp = 0, rec = 0, corr = 0, tim = 0;
		for (int i = 0; i < n_workers; i++) {
			busy += workers[i].busy_s;
			comp += workers[i].compile_s;
			rec += workers[i].record_s;
			corr += workers[i].correct_s;
			tim += workers[i].timing_s;
		}
		fprintf(stderr,
			"ka: wall %.1fs; generation %.1fs; grading busy %.1fs over %d session%s "
			"(%.0f%% of wall): compile %.1fs, record %.1fs, correctness %.1fs, timing "
			"%.1fs\n",
			wall, gen_s, busy, n_workers, n_workers > 1 ? "s" : "",
			wall > 0 ? 100 * busy / (wall * n_workers) : 0, comp, rec, corr, tim);
		if (r->warm_on)
			fprintf(stderr,
				"ka: compiled ahead on %d threads: %d jobs (every task's "
				"baselines, "
				"then each reply's source)\n",
				r->warm_threads, r->warmed);
	}
	if (r->fatal)
		fprintf(stderr,
			"ka --track capability: %s; run the same command again to continue\n",
			r->fatal_msg);
	else if (!complete)
		fprintf(stderr,
			"ka --track capability: %d of %d samples are not graded (%d requests "
			"failed); run the same command again to retry them\n",
			r->total - outp.n_samples, r->total, r->failed_requests);
	rc = wrote && complete && !r->fatal ? KA_EXIT_OK : KA_EXIT_FAIL;
	free(sc_text);
	free(sc_path);
	free(jl_path);
	json_decref(sc);
	outputs_free(&outp);
out_model:
	warm_join(r, warm_th, &n_warm);
	for (int i = 0; i < n_workers; i++)
		grade_session_close(workers[i].s);
	free(workers);
	model_close(m);
out:
	free(cache_dir);
	journal_close(r->j);
	if (lock_fd >= 0)
		close(lock_fd);
	for (int i = 0; i < r->n_tasks; i++) {
		task_free(r->tasks[i].t);
		free(r->tasks[i].prompt);
	}
	free(r->tasks);
	free(reqs);
	free(tmpl);
	free(args_key);
	free(args_pretty);
	free(old_key);
	free(bank_real);
	json_decref(args);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	pthread_cond_destroy(&r->wcv);
	return rc;
}
