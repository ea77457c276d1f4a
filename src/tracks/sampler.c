/* sampler.c: the sample pipeline (see sampler.h). The main thread sends the
 * model requests (model_run); the model callback journals each reply and
 * queues it; one worker thread per grade session takes replies off the
 * queue, grades them and journals the grade; with compile-ahead, a pool of
 * compile threads takes jobs off a second queue (every task's baselines
 * first, then each queued reply's source). One mutex guards both queues and
 * the progress counters. The journal is the only state that survives. */
#include "sampler.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prompt.h"
#include "rundir.h"
#include "verdict.h"

#define SAMPLER_MAX_WARM 16

/* A queued job: a sample to grade, or on the compile-ahead queue a source
 * to compile (code NULL there: the task's baselines; sample unused). */
struct grade_item {
	int task, sample;
	char *code; /* NULL: the reply held no code */
	struct grade_item *next;
};

struct worker {
	struct sampler *r;
	struct grade_session *s;
	int index;
	pthread_t th;
	int started, dead;
	double busy_s, compile_s, record_s, correct_s, timing_s;
	int graded;
};

struct sampler {
	struct sampler_opts o;
	const struct sampler_task *tasks;
	int n_tasks;
	struct journal *j;
	int start_id;
	struct worker *workers;
	int n_workers;
	struct model_request *reqs;
	int n_reqs;
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
	int warm_on, warm_stop, warmed, warm_threads, n_warm;
	pthread_t warm_th[SAMPLER_MAX_WARM];
	/* progress (under mu) */
	int total, graded, ok, graded_now, failed_requests, fatal;
	int64_t in_tokens, out_tokens;
	double cost;
	double t0, last_draw, gen_s, wall_s;
	int tty;
	char fatal_msg[KA_ERRLEN];
};

static void run_fatal(struct sampler *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void run_fatal(struct sampler *r, const char *fmt, ...)
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
static void progress_draw(struct sampler *r, int force)
{
	if (!r->tty || r->o.quiet)
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
	fprintf(stderr, "\r\033[K%s: %d/%d graded, %d correct, %d queued, ETA %s, %s tokens, $%.2f",
		r->o.label, r->graded, r->total, r->ok, r->queued, eta, tok, r->cost);
	if (r->failed_requests)
		fprintf(stderr, ", %d requests failed", r->failed_requests);
	fflush(stderr);
}

/* Print one line above the progress line; caller holds mu. */
static void progress_line(struct sampler *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void progress_line(struct sampler *r, const char *fmt, ...)
{
	if (r->tty && !r->o.quiet)
		fputs("\r\033[K", stderr);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	progress_draw(r, 1);
}

/* ---- the queues ----------------------------------------------------------- */

static struct grade_item *item_new(int task, int sample, const char *code)
{
	struct grade_item *it = xcalloc(1, sizeof *it);
	it->task = task;
	it->sample = sample;
	it->code = code ? xstrdup(code) : NULL;
	return it;
}

/* Append a job to a queue (the caller holds r->mu). */
static void item_append(struct grade_item **head, struct grade_item **tail, struct grade_item *it)
{
	if (*tail)
		(*tail)->next = it;
	else
		*head = it;
	*tail = it;
}

/* Take the first job of a queue (the caller holds r->mu), or NULL. */
static struct grade_item *item_take(struct grade_item **head, struct grade_item **tail)
{
	struct grade_item *it = *head;
	if (it) {
		*head = it->next;
		if (!*head)
			*tail = NULL;
	}
	return it;
}

static void item_free(struct grade_item *it)
{
	free(it->code);
	free(it);
}

/* Free a queue's jobs left (the threads that use it have stopped). */
static void items_free(struct grade_item **head, struct grade_item **tail)
{
	struct grade_item *it;
	while ((it = item_take(head, tail)))
		item_free(it);
}

/* Queue a compile-ahead job (nothing when compile-ahead is off). */
static void warm_push(struct sampler *r, int task, const char *code)
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
	struct sampler *r = arg;
	/* Compiling ahead yields the CPU to the graders (cmd_grade.c says why). */
	util_background_priority(10);
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (!r->whead && !r->warm_stop && !r->fatal)
			pthread_cond_wait(&r->wcv, &r->mu);
		struct grade_item *it =
			r->fatal || r->warm_stop ? NULL : item_take(&r->whead, &r->wtail);
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
		item_free(it);
	}
}

/* Stop the compile threads (a job under way finishes first), join them and
 * drop the jobs left. Safe to call again. */
static void warm_join(struct sampler *r)
{
	pthread_mutex_lock(&r->mu);
	r->warm_stop = 1;
	pthread_cond_broadcast(&r->wcv);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < r->n_warm; i++)
		pthread_join(r->warm_th[i], NULL);
	r->n_warm = 0;
	items_free(&r->whead, &r->wtail);
}

/* Start the compile threads (one per core but one, at most
 * SAMPLER_MAX_WARM) with every task's baselines queued. */
static void warm_start(struct sampler *r)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cores > 2 ? (int)cores - 1 : 1;
	if (want > SAMPLER_MAX_WARM)
		want = SAMPLER_MAX_WARM;
	r->warm_s = r->workers[0].s;
	r->warm_on = 1;
	for (int i = 0; i < r->n_tasks; i++)
		warm_push(r, i, NULL);
	for (; r->n_warm < want; r->n_warm++)
		if (pthread_create(&r->warm_th[r->n_warm], NULL, warm_main, r))
			break;
	r->warm_threads = r->n_warm;
}

static void queue_push(struct sampler *r, int task, int sample, const char *code)
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
static struct grade_item *queue_pop(struct sampler *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->head && !r->closed && !r->fatal && !rundir_stop_signal()) {
		/* Woken at least once a second to see a stop signal. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	}
	/* A stop signal: no new grade (the one under way is journaled). */
	struct grade_item *it =
		r->fatal || rundir_stop_signal() ? NULL : item_take(&r->head, &r->tail);
	if (it)
		r->queued--;
	pthread_mutex_unlock(&r->mu);
	return it;
}

/* ---- the graders ----------------------------------------------------------- */

/* A grade session failed on it: the worker stops; the run fails when no
 * worker is left. */
static void worker_died(struct worker *w, const struct grade_item *it, const char *why)
{
	struct sampler *r = w->r;
	pthread_mutex_lock(&r->mu);
	w->dead = 1;
	r->workers_alive--;
	progress_line(r, "ka: grade session %d stopped: grader failure on %s sample %d: %s",
		      w->index, r->tasks[it->task].t->name, it->sample, why);
	if (r->workers_alive == 0 && !r->fatal) {
		snprintf(r->fatal_msg, sizeof r->fatal_msg,
			 "every grade session failed (last: %.400s)", why);
		r->fatal = 1;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/* Count one journaled grade and show it (one line when verbose). */
static void note_graded(struct worker *w, const struct grade_item *it,
			const struct grade_result *res, const char *detail, double dt)
{
	struct sampler *r = w->r;
	w->busy_s += dt;
	w->compile_s += res->compile_s;
	w->record_s += res->record_s;
	w->correct_s += res->correct_s;
	w->timing_s += res->timing_s;
	w->graded++;
	struct metrics_sample ms = {.ok = res->verdict == VERDICT_OK};
	sampler_speedup_clean(&res->speedup_eager, &ms.eager);
	pthread_mutex_lock(&r->mu);
	r->graded++;
	r->graded_now++;
	r->ok += ms.ok;
	if (r->o.verbose) {
		char sp[96] = "";
		if (ms.ok && ms.eager.present)
			snprintf(sp, sizeof sp, "  %.3fx [%.3f, %.3f] vs eager", ms.eager.median,
				 ms.eager.lo, ms.eager.hi);
		char first[121];
		snprintf(first, sizeof first, "%s", detail);
		char *nl = strchr(first, '\n');
		if (nl)
			*nl = 0;
		progress_line(r, "  %s/%d  %s%s  s=%.3f  (%.1fs)%s%s", r->tasks[it->task].t->name,
			      it->sample, verdict_name(res->verdict), sp, metrics_sample_score(&ms),
			      dt, ms.ok ? "" : "  ", ms.ok ? "" : first);
	} else {
		progress_draw(r, 0);
	}
	pthread_mutex_unlock(&r->mu);
}

static void grade_one(struct worker *w, struct grade_item *it)
{
	struct sampler *r = w->r;
	const struct ka_task *t = r->tasks[it->task].t;
	struct grade_result res;
	memset(&res, 0, sizeof res);
	struct ka_err e;
	char *text = NULL, *detail = NULL;
	double t0 = util_now();
	const char *src = it->code ? it->code : "";
	if (grade_candidate(w->s, t, src, strlen(src), NULL, &res, &e)) {
		worker_died(w, it, e.msg);
		goto out;
	}
	double dt = util_now() - t0;
	if (!rundir_grade_stands(res.verdict == VERDICT_OK))
		goto out; /* not journaled: graded again when the run resumes */
	json_t *rj = grade_result_json(w->s, t, &res);
	text = json_dumps(rj, JSON_COMPACT);
	json_decref(rj);
	detail = sampler_clean_utf8(res.detail, SAMPLER_DETAIL_MAX);
	if (journal_put_grade(r->j, t->name, it->sample, verdict_name(res.verdict), detail,
			      text ? text : "{}", r->start_id, w->index, &e)) {
		run_fatal(r, "%s", e.msg);
		goto out;
	}
	note_graded(w, it, &res, detail, dt);
out:
	free(text);
	free(detail);
	grade_result_free(&res);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct grade_item *it;
	grade_thread_share(w->r->n_workers);
	while (!w->dead && (it = queue_pop(w->r))) {
		grade_one(w, it);
		item_free(it);
	}
	grade_session_idle(w->s); /* its device memory to the graders still at work */
	return NULL;
}

/* ---- the model callback ---------------------------------------------------- */

/* A reply that is the sample's outcome without grading (NUL bytes, over the
 * cap: model_reply_marked): journaled once as no_code with the evidence. 0
 * or -1 with e. */
static int grade_marked(struct sampler *r, int task, int sample, const char *evidence,
			struct ka_err *e)
{
	const struct ka_task *t = r->tasks[task].t;
	json_t *rj = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "schema", "ka-grade/1", "task", t->name,
			       "target", r->o.target, "verdict", "no_code", "phase", "extract",
			       "detail", evidence);
	char *text = rj ? json_dumps(rj, JSON_COMPACT) : NULL;
	json_decref(rj);
	char *detail = sampler_clean_utf8(evidence, SAMPLER_DETAIL_MAX);
	int rc = journal_put_grade(r->j, t->name, sample, "no_code", detail, text ? text : "{}",
				   r->start_id, -1, e);
	free(text);
	free(detail);
	if (rc == 0) {
		pthread_mutex_lock(&r->mu);
		r->graded++;
		r->graded_now++;
		if (r->o.verbose)
			progress_line(r, "  %s/%d  no_code  s=0.000  %s", t->name, sample,
				      evidence);
		pthread_mutex_unlock(&r->mu);
	}
	return rc;
}

static void on_reply(const struct model_request *req, const struct model_reply *rep, void *ctx)
{
	struct sampler *r = ctx;
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
	if (rep->ok && rep->code &&
	    sampler_write_kernel(&r->o, req->task, req->sample, rep->code, 1, &e))
		fprintf(stderr, "ka: %s (the journal keeps the source)\n", e.msg);
	pthread_mutex_lock(&r->mu);
	if (rep->ok) {
		r->in_tokens += rep->in_tokens;
		r->out_tokens += rep->out_tokens;
		r->cost += rep->cost_usd;
	} else {
		r->failed_requests++;
		if (r->o.verbose)
			progress_line(r, "  %s/%d  request failed: %s", req->task, req->sample,
				      rep->error);
	}
	progress_draw(r, 0);
	int fatal = r->fatal;
	pthread_mutex_unlock(&r->mu);
	if (rep->ok && model_reply_marked(rep)) {
		if (grade_marked(r, task, req->sample, rep->error, &e))
			run_fatal(r, "%s", e.msg);
	} else if (rep->ok && !fatal)
		queue_push(r, task, req->sample, rep->code);
}

/* ---- the sampler ------------------------------------------------------------ */

struct sampler *sampler_new(const struct sampler_opts *o, const struct sampler_task *tasks, int n,
			    struct journal *j)
{
	struct sampler *r = xcalloc(1, sizeof *r);
	r->o = *o;
	r->tasks = tasks;
	r->n_tasks = n;
	r->j = j;
	r->total = n * o->k;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_cond_init(&r->wcv, NULL);
	return r;
}

void sampler_free(struct sampler *r)
{
	if (!r)
		return;
	warm_join(r);
	items_free(&r->head, &r->tail);
	for (int i = 0; i < r->n_workers; i++)
		grade_session_close(r->workers[i].s);
	free(r->workers);
	free(r->reqs);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	pthread_cond_destroy(&r->wcv);
	free(r);
}

int sampler_open_sessions(struct sampler *r, const char *platform, const int *gpus, int n,
			  const struct grade_protocol *proto, struct ka_err *e)
{
	r->workers = xcalloc((size_t)(n > 0 ? n : 1), sizeof *r->workers);
	for (int i = 0; i < n; i++) {
		/* CUDA's work folder holds only content-addressed files (the
		 * compile cache, the baselines), so its sessions share one and
		 * one compile-ahead pool serves them all. */
		char *wd = strcmp(r->o.target, "cuda") ? xasprintf("%s/.grade/%d", r->o.out, i)
						       : xasprintf("%s/.grade/cuda", r->o.out);
		struct ka_err ge;
		struct grade_session *s =
			grade_session_open(r->o.target, platform, gpus[i], proto, wd, &ge);
		free(wd);
		if (!s)
			return ka_err_set(e, "cannot start the %s grader on device %d: %s",
					  r->o.target, gpus[i], ge.msg);
		r->workers[r->n_workers++] = (struct worker){.r = r, .s = s, .index = i};
	}
	/* Compile-ahead: the baselines of every task first, then each reply's
	 * source as it is queued for grading (queue_push). */
	if (r->n_workers > 0 && grade_compiles_ahead(r->workers[0].s))
		warm_start(r);
	json_t *devs = json_array();
	for (int i = 0; i < r->n_workers; i++)
		json_array_append(devs, (json_t *)grade_session_device(r->workers[i].s));
	char *devs_text = json_dumps(devs, JSON_COMPACT);
	json_decref(devs);
	int rc = journal_start(r->j, devs_text, &r->start_id, e);
	free(devs_text);
	return rc ? -1 : 0;
}

/* The state of one sample: counted, queued or listed as a request. */
static int plan_sample(struct sampler *r, int i, int s, const char *lang, struct sampler_plan *p,
		       struct ka_err *e)
{
	const char *name = r->tasks[i].t->name;
	enum journal_state st;
	if (journal_state(r->j, name, s, &st, e))
		return -1;
	if (st == JOURNAL_STATE_GRADED) {
		char *v = NULL;
		if (journal_get_grade(r->j, name, s, &v, NULL, NULL, e) < 0)
			return -1;
		r->graded++;
		r->ok += v && !strcmp(v, "ok");
		free(v);
	} else if (st == JOURNAL_STATE_REPLIED) {
		struct journal_reply rep;
		if (journal_get_reply(r->j, name, s, &rep, e))
			return -1;
		struct model_reply mr = {.ok = rep.ok};
		snprintf(mr.finish, sizeof mr.finish, "%s", rep.finish ? rep.finish : "");
		int rc = 0;
		if (model_reply_marked(&mr)) {
			rc = grade_marked(r, i, s, rep.error ? rep.error : "", e);
		} else {
			queue_push(r, i, s, rep.code);
			p->regrade++;
		}
		journal_reply_free(&rep);
		if (rc)
			return -1;
	} else {
		r->reqs[r->n_reqs++] = (struct model_request){
			.task = name,
			.sample = s,
			.prompt = r->tasks[i].prompt,
			.lang = lang,
			.user = (void *)(intptr_t)i,
		};
	}
	return 0;
}

int sampler_plan(struct sampler *r, struct sampler_plan *p, struct ka_err *e)
{
	memset(p, 0, sizeof *p);
	free(r->reqs);
	r->reqs = xcalloc((size_t)(r->total > 0 ? r->total : 1), sizeof *r->reqs);
	r->n_reqs = 0;
	const char *lang = prompt_extract_lang(r->o.target);
	for (int i = 0; i < r->n_tasks; i++)
		for (int s = 0; s < r->o.k; s++)
			if (plan_sample(r, i, s, lang, p, e))
				return -1;
	struct journal_totals tot;
	if (journal_totals(r->j, &tot, e) == 0) {
		r->in_tokens = tot.in_tokens;
		r->out_tokens = tot.out_tokens;
		r->cost = tot.cost_usd;
	}
	p->total = r->total;
	p->graded = r->graded;
	p->requests = r->n_reqs;
	return 0;
}

/* Send the planned requests in batches of o.batch. Before each batch: no
 * stop signal, no failure, and a journal that can take the replies (free
 * space over the floor, a write commits): a request whose reply could not
 * be stored is never sent. Each batch's requests are journaled as sent,
 * then sent. */
static void send_requests(struct sampler *r, struct model *m)
{
	struct ka_err e;
	int batch = r->o.batch > 0 ? r->o.batch : r->n_reqs;
	for (int at = 0; at < r->n_reqs; at += batch) {
		int n = r->n_reqs - at < batch ? r->n_reqs - at : batch;
		if (r->fatal || rundir_stop_signal())
			return;
		if (journal_check_writable(r->j, &e)) {
			run_fatal(r, "%s", e.msg);
			return;
		}
		for (int i = at; i < at + n; i++) {
			const struct model_request *q = &r->reqs[i];
			if (journal_request(r->j, q->task, q->sample,
					    r->tasks[(intptr_t)q->user].prompt_hash,
					    r->o.seed + q->sample, &e)) {
				run_fatal(r, "%s", e.msg);
				return;
			}
		}
		if (model_run(m, r->reqs + at, n, on_reply, r)) {
			run_fatal(r, "the model backend cannot work (%s)", model_backend_name(m));
			return;
		}
	}
}

int sampler_run(struct sampler *r, struct model *m)
{
	r->tty = isatty(2);
	r->t0 = util_now();
	r->workers_alive = r->n_workers;
	for (int i = 0; i < r->n_workers; i++) {
		if (pthread_create(&r->workers[i].th, NULL, worker_main, &r->workers[i])) {
			run_fatal(r, "cannot start a grading thread");
			break;
		}
		r->workers[i].started = 1;
	}
	double gen_t0 = util_now();
	send_requests(r, m);
	r->gen_s = util_now() - gen_t0;
	pthread_mutex_lock(&r->mu);
	r->closed = 1;
	pthread_cond_broadcast(&r->cv);
	progress_draw(r, 1);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < r->n_workers; i++)
		if (r->workers[i].started)
			pthread_join(r->workers[i].th, NULL);
	warm_join(r);
	r->wall_s = util_now() - r->t0;
	if (r->tty && !r->o.quiet)
		fputs("\r\033[K", stderr);
	items_free(&r->head, &r->tail);
	return r->fatal ? -1 : 0;
}

const char *sampler_failure(const struct sampler *r)
{
	return r->fatal ? r->fatal_msg : "";
}

int sampler_failed_requests(const struct sampler *r)
{
	return r->failed_requests;
}

int sampler_n_sessions(const struct sampler *r)
{
	return r->n_workers;
}

const json_t *sampler_device(const struct sampler *r, int i)
{
	return i >= 0 && i < r->n_workers ? grade_session_device(r->workers[i].s) : NULL;
}

void sampler_report(const struct sampler *r, FILE *log)
{
	double busy = 0, comp = 0, rec = 0, corr = 0, tim = 0, wall = r->wall_s;
	int n = r->n_workers;
	for (int i = 0; i < n; i++) {
		busy += r->workers[i].busy_s;
		comp += r->workers[i].compile_s;
		rec += r->workers[i].record_s;
		corr += r->workers[i].correct_s;
		tim += r->workers[i].timing_s;
	}
	fprintf(log,
		"ka: wall %.1fs; generation %.1fs; grading busy %.1fs over %d session%s "
		"(%.0f%% of wall): compile %.1fs, record %.1fs, correctness %.1fs, timing "
		"%.1fs\n",
		wall, r->gen_s, busy, n, n > 1 ? "s" : "", wall > 0 ? 100 * busy / (wall * n) : 0,
		comp, rec, corr, tim);
	if (r->warm_on)
		fprintf(log,
			"ka: compiled ahead on %d threads: %d jobs (every task's "
			"baselines, "
			"then each reply's source)\n",
			r->warm_threads, r->warmed);
}

/* ---- devices ------------------------------------------------------------------ */

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

/* The clocks object from a runner's report (its "clocks" or itself). */
static json_t *clocks_json(const json_t *d)
{
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
	return clocks;
}

json_t *sampler_device_json(const struct sampler *r)
{
	const json_t *d = sampler_device(r, 0);
	static const char *const name_k[] = {"name", NULL};
	static const char *const driver_k[] = {"driver", "driver_version", NULL};
	static const char *const runtime_k[] = {"runtime",	    "cuda_runtime", "cuda_version",
						"platform_version", "version",	    NULL};
	json_t *extra = json_deep_copy(d);
	if (!json_is_object(extra)) {
		json_decref(extra);
		extra = json_object();
	}
	if (r->n_workers > 1) {
		json_t *all = json_array();
		for (int i = 0; i < r->n_workers; i++)
			json_array_append(all, (json_t *)sampler_device(r, i));
		json_object_set_new(extra, "sessions", all);
	}
	return json_pack("{s:o,s:o,s:o,s:b,s:o,s:o}", "name", str_or(d, name_k, "unknown"),
			 "driver", str_or(d, driver_k, "unknown"), "runtime",
			 str_or(d, runtime_k, "unknown"), "test_grade",
			 json_is_true(json_object_get(d, "test_grade")), "clocks", clocks_json(d),
			 "extra", extra);
}

int sampler_parse_gpus(const char *s, int *out, int *n, struct ka_err *e)
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
		if (*n == SAMPLER_MAX_SESSIONS)
			return ka_err_set(e, "--gpus: more than %d GPUs", SAMPLER_MAX_SESSIONS);
		out[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (*n == 0)
		return ka_err_set(e, "--gpus: empty list");
	return 0;
}

int sampler_count_gpus(void)
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
	for (int i = 0; i < SAMPLER_MAX_SESSIONS; i++) {
		char path[32];
		struct stat st;
		snprintf(path, sizeof path, "/dev/nvidia%d", i);
		if (stat(path, &st))
			break;
		n++;
	}
	return n;
}
