/* track_capability.c: track 1, capability (see track.h, docs/capability.md).
 *
 * One run: k samples of every selected task from one model, each graded once
 * and scored. track_capability_run goes through its steps in order:
 *   1. everything that bad input can break, before out/ is touched: the
 *      bank, the tasks of the tier and their prompts, the model, the GPUs;
 *   2. the run's identity (every argument that decides the results) and the
 *      output folder (rundir.h): locked, and holding this run or nothing;
 *   3. the sample pipeline (sampler.h): grade sessions, what the journal
 *      says is left, then requests and grading overlapped;
 *   4. the outputs, from the journal (so a resumed run writes the same
 *      files): scorecard.json, results.jsonl and the kernels.
 * The journal is the only state that survives the process. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "gold.h"
#include "journal.h"
#include "metrics.h"
#include "model.h"
#include "prompt.h"
#include "rundir.h"
#include "sampler.h"
#include "scorecard.h"
#include "track.h"
#include "util.h"

#define CAP_VERSION "0.1.0" /* ka_version written in scorecards */

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

/* ---- the run's inputs ------------------------------------------------------ */

/* Everything a capability run prepares before it touches out/. */
struct cap_run {
	const struct capability_opts *o;
	const char *target;
	char *bank_real;
	char bank_hash[17];
	int bank_n;
	const char *tmpl_path;
	char *tmpl;
	struct sampler_task *tasks; /* prompts owned here */
	char (*hashes)[17];
	int n_tasks;
	char *cache_dir;
	struct model *m;
	int gpus[SAMPLER_MAX_SESSIONS], n_gpus;
	char *args_key, *args_pretty;
};

/* The one place a capability run reports an error. */
static void cap_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cap_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ka --track capability: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Task dir's task, with its prompt rendered, added to c (skipped when not of
 * the tier). 0 or -1 with e. */
static int cap_add_task(struct cap_run *c, const char *dir, struct ka_err *e)
{
	struct ka_task *t = task_load(dir, e);
	if (!t)
		return -1;
	bank_trust(t); /* the operator's bank, unless a model wrote the task */
	if (c->o->tier && strcmp(t->tier, c->o->tier)) {
		task_free(t);
		return 0;
	}
	struct sampler_task *st = &c->tasks[c->n_tasks];
	st->t = t;
	st->prompt_hash = c->hashes[c->n_tasks];
	c->n_tasks++;
	struct ka_err pe;
	char *prompt = prompt_render(c->tmpl, t, c->target, &pe);
	if (!prompt)
		return ka_err_set(e, "%s: %s", c->tmpl_path, pe.msg);
	st->prompt = prompt;
	snprintf(c->hashes[c->n_tasks - 1], sizeof c->hashes[0], "%016llx",
		 (unsigned long long)util_hash64(prompt, strlen(prompt), 0));
	return 0;
}

/* The bank (its real path and content hash), the prompt template, and the
 * tasks of the tier with their prompts. 0 or -1 with e. */
static int cap_load_tasks(struct cap_run *c, struct ka_err *e)
{
	const struct capability_opts *o = c->o;
	const char *bank = o->bank ? o->bank : bank_default_path();
	c->bank_real = realpath(bank, NULL);
	if (!c->bank_real)
		return ka_err_set(e, "bank '%s': %s", bank, strerror(errno));
	if (bank_content_hash_hex(c->bank_real, c->bank_hash, &c->bank_n, e))
		return -1;
	struct bank_list list = {0};
	if (bank_scan(c->bank_real, &list, e))
		return -1;
	int rc = -1;
	c->tasks = xcalloc((size_t)(list.n ? list.n : 1), sizeof *c->tasks);
	c->hashes = xcalloc((size_t)(list.n ? list.n : 1), sizeof *c->hashes);
	c->tmpl_path = o->prompt ? o->prompt : prompt_default_template();
	if (prompt_load_template(c->tmpl_path, &c->tmpl, e))
		goto out;
	for (int i = 0; i < list.n; i++)
		if (cap_add_task(c, list.dirs[i], e))
			goto out;
	if (c->n_tasks == 0) {
		ka_err_set(e, "no %s task in bank %s", o->tier ? o->tier : "", c->bank_real);
		goto out;
	}
	rc = 0;
out:
	bank_list_free(&list);
	return rc;
}

/* Every task's reference builds as gold (compiled once, then cached): a bank
 * error is bad input, found before any model request is sent. 0 or -1 with
 * e naming the file. */
static int cap_check_gold(struct cap_run *c, struct ka_err *e)
{
	for (int i = 0; i < c->n_tasks; i++) {
		struct gold *g = gold_open(c->tasks[i].t, e);
		if (!g)
			return -1;
		gold_close(g);
	}
	return 0;
}

/* The model backend, with its response cache in out/cache. 0 or -1 with e. */
static int cap_open_model(struct cap_run *c, struct ka_err *e)
{
	const struct capability_opts *o = c->o;
	struct model_params mp;
	model_params_default(&mp);
	mp.temperature = o->temperature;
	mp.max_tokens = o->max_tokens;
	mp.seed = o->seed;
	mp.concurrency = o->concurrency;
	mp.prices_file = o->prices;
	mp.verbose = o->verbose;
	c->cache_dir = xasprintf("%s/cache", o->out);
	mp.cache_dir = c->cache_dir;
	c->m = model_open(o->model, &mp, e);
	return c->m ? 0 : -1;
}

/* Several grade sessions per GPU (--graders-per-gpu, else one per 4 cores
 * shared by the GPUs, 1 to 4): the list of devices repeats, interleaved, so
 * each GPU gets the same number; sessions of one device share its lock
 * (devlock.h). 0. */
static int cap_graders_per_gpu(struct cap_run *c)
{
	int per = c->o->graders_per_gpu ? c->o->graders_per_gpu : grade_graders_default(c->n_gpus);
	if (per * c->n_gpus > SAMPLER_MAX_SESSIONS)
		per = SAMPLER_MAX_SESSIONS / c->n_gpus;
	for (int r = 1; r < per; r++)
		for (int i = 0; i < c->n_gpus; i++)
			c->gpus[r * c->n_gpus + i] = c->gpus[i];
	c->n_gpus *= per;
	return 0;
}

/* The devices to grade on: --gpus, else every visible GPU (CUDA); one
 * session on device 0 otherwise. 0 or -1 with e. */
static int cap_pick_gpus(struct cap_run *c, struct ka_err *e)
{
	c->n_gpus = 1;
	c->gpus[0] = 0;
	if (strcmp(c->target, "cuda"))
		return 0;
	if (c->o->gpus) {
		if (sampler_parse_gpus(c->o->gpus, c->gpus, &c->n_gpus, e))
			return -1;
	} else {
		c->n_gpus = sampler_count_gpus();
		if (c->n_gpus < 1)
			c->n_gpus = 1;
		for (int i = 0; i < c->n_gpus; i++)
			c->gpus[i] = i;
	}
	return cap_graders_per_gpu(c);
}

/* The run's identity: every argument that decides the results, as the
 * canonical key and a readable copy. */
static void cap_identity(struct cap_run *c)
{
	const struct capability_opts *o = c->o;
	json_t *args = json_object();
	json_object_set_new(args, "model", json_string(o->model));
	json_object_set_new(args, "bank", json_string(c->bank_real));
	json_object_set_new(args, "bank_hash", json_string(c->bank_hash));
	json_object_set_new(args, "split", json_string(o->split));
	json_object_set_new(args, "tier", json_string(o->tier ? o->tier : "all"));
	json_object_set_new(args, "k", json_integer(o->k));
	json_object_set_new(args, "seed", json_integer(o->seed));
	json_object_set_new(args, "target", json_string(c->target));
	json_object_set_new(args, "temperature", json_real(o->temperature));
	json_object_set_new(args, "max_tokens", json_integer(o->max_tokens));
	char th[17];
	snprintf(th, sizeof th, "%016llx",
		 (unsigned long long)util_hash64(c->tmpl, strlen(c->tmpl), 0));
	json_object_set_new(args, "prompt_hash", json_string(th));
	json_object_set_new(args, "protocol", grade_protocol_json(&o->proto));
	c->args_key = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	c->args_pretty = json_dumps(args, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(args);
}

/* Step 1: everything that bad input can break. 0 or -1 (reported). */
static int cap_prepare(struct cap_run *c)
{
	struct ka_err e;
	c->target = track_resolve_target(c->o->target);
	if (cap_load_tasks(c, &e) || cap_check_gold(c, &e) || cap_open_model(c, &e) ||
	    cap_pick_gpus(c, &e)) {
		cap_fail("%s", e.msg);
		return -1;
	}
	cap_identity(c);
	return 0;
}

static void cap_free(struct cap_run *c)
{
	model_close(c->m);
	free(c->cache_dir);
	for (int i = 0; i < c->n_tasks; i++) {
		task_free(c->tasks[i].t);
		free((char *)c->tasks[i].prompt);
	}
	free(c->tasks);
	free(c->hashes);
	free(c->tmpl);
	free(c->args_key);
	free(c->args_pretty);
	free(c->bank_real);
}

/* ---- the outputs ------------------------------------------------------------- */

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

static void print_figure(const char *label, const json_t *agg, const char *key)
{
	struct metrics_figure f;
	scorecard_figure_get(json_object_get(agg, key), &f);
	if (f.defined)
		printf("  %-9s %.3f [%.3f, %.3f]\n", label, f.value, f.lo, f.hi);
	else
		printf("  %-9s n/a\n", label);
}

/* The scorecard of the run from its collected samples (new reference). */
static json_t *cap_scorecard(const struct cap_run *c, const struct sampler *s,
			     const struct sampler_outputs *outp)
{
	const struct capability_opts *o = c->o;
	char created[32], mname[256];
	util_iso_now(created, sizeof created);
	json_t *sc = json_object();
	json_object_set_new(sc, "schema", json_string(SCORECARD_SCHEMA));
	json_object_set_new(sc, "track", json_string("capability"));
	json_object_set_new(sc, "created", json_string(created));
	json_object_set_new(sc, "ka_version", json_string(CAP_VERSION));
	json_object_set_new(sc, "model",
			    json_pack("{s:s,s:s,s:s,s:s}", "spec", o->model, "backend",
				      model_backend_name(c->m), "name",
				      model_name_of(o->model, mname, sizeof mname), "kind",
				      model_kind_of(o, c->m)));
	const char *slash = strrchr(c->bank_real, '/');
	json_object_set_new(sc, "bank",
			    json_pack("{s:s,s:s,s:s,s:s,s:i}", "name",
				      slash && slash[1] ? slash + 1 : c->bank_real, "path",
				      c->bank_real, "hash", c->bank_hash, "split", o->split,
				      "n_tasks", c->bank_n));
	json_object_set_new(sc, "k", json_integer(o->k));
	json_object_set_new(sc, "seed", json_integer(o->seed));
	json_object_set_new(sc, "target", json_string(c->target));
	json_object_set_new(sc, "device", sampler_device_json(s));
	json_object_set_new(sc, "protocol", protocol_json(o, sampler_device(s, 0)));
	json_object_set_new(sc, "tasks", json_incref(outp->tasks));
	json_object_set_new(sc, "aggregates",
			    scorecard_aggregates_json(outp->m.tasks, outp->m.n_tasks, o->k));
	return sc;
}

/* The headline on stdout: where the scorecard is, and its overall figures. */
static void cap_print_summary(const struct cap_run *c, const json_t *sc, const char *sc_path,
			      int n_samples, int total)
{
	const struct capability_opts *o = c->o;
	printf("scorecard: %s\n", sc_path);
	if (o->quiet)
		return;
	const json_t *dev = json_object_get(sc, "device");
	const json_t *overall = json_object_get(json_object_get(sc, "aggregates"), "overall");
	printf("  %s, %s on %s%s: %d of %d samples graded (%d tasks, k = %d)\n", o->model,
	       c->target, json_string_value(json_object_get(dev, "name")),
	       json_is_true(json_object_get(dev, "test_grade")) ? " [test-grade]" : "", n_samples,
	       total, c->n_tasks, o->k);
	print_figure("correct", overall, "correct");
	print_figure("fast", overall, "fast");
	print_figure("mean C", overall, "mean_c");
}

/* Step 4: scorecard.json and results.jsonl from the journal, the headline,
 * and what is left to do. Returns the run's exit code. */
static int cap_write_outputs(const struct cap_run *c, const struct sampler *s, struct journal *j,
			     int total)
{
	const struct capability_opts *o = c->o;
	struct sampler_opts so = {
		.label = "capability", .out = o->out, .target = c->target, .k = o->k};
	struct sampler_outputs outp;
	struct ka_err e;
	char *sc_text = NULL, *sc_path = NULL, *jl_path = NULL;
	json_t *sc = NULL;
	int rc = KA_EXIT_FAIL;
	if (sampler_collect(j, c->tasks, c->n_tasks, &so, &outp, &e)) {
		cap_fail("%s", e.msg);
		goto out;
	}
	sc = cap_scorecard(c, s, &outp);
	sc_text = json_dumps(sc, JSON_INDENT(2));
	sc_path = xasprintf("%s/scorecard.json", o->out);
	jl_path = xasprintf("%s/results.jsonl", o->out);
	int wrote = sc_text && !util_write_file(sc_path, sc_text, strlen(sc_text), &e) &&
		    !util_write_file(jl_path, outp.jsonl.s, outp.jsonl.len, &e);
	if (!wrote)
		cap_fail("%s", sc_text ? e.msg : "cannot encode");
	else
		cap_print_summary(c, sc, sc_path, outp.n_samples, total);
	if (o->verbose)
		sampler_report(s, stderr);
	int complete = outp.n_samples == total;
	if (*sampler_failure(s))
		cap_fail("%s; run the same command again to continue", sampler_failure(s));
	else if (!complete)
		cap_fail("%d of %d samples are not graded (%d requests failed); run the same "
			 "command again to retry them",
			 total - outp.n_samples, total, sampler_failed_requests(s));
	rc = wrote && complete && !*sampler_failure(s) ? KA_EXIT_OK : KA_EXIT_FAIL;
out:
	free(sc_text);
	free(sc_path);
	free(jl_path);
	json_decref(sc);
	sampler_outputs_free(&outp);
	return rc;
}

/* ---- the run ------------------------------------------------------------------ */

/* Step 3: grade sessions, what is left, then the pipeline; step 4. Returns
 * the exit code. */
static int cap_sample(struct cap_run *c, struct rundir *d)
{
	const struct capability_opts *o = c->o;
	struct sampler_opts so = {.label = "capability",
				  .out = o->out,
				  .target = c->target,
				  .k = o->k,
				  .seed = o->seed,
				  .batch = o->concurrency,
				  .quiet = o->quiet,
				  .verbose = o->verbose};
	struct sampler *s = sampler_new(&so, c->tasks, c->n_tasks, d->j);
	struct sampler_plan p;
	struct ka_err e;
	int rc = KA_EXIT_FAIL;
	if (sampler_open_sessions(s, o->platform, c->gpus, c->n_gpus, &o->proto, &e) ||
	    sampler_plan(s, &p, &e)) {
		cap_fail("%s", e.msg);
		goto out;
	}
	if (!o->quiet && (d->resumed || o->verbose))
		fprintf(stderr,
			"ka: %s run in %s: %d of %d samples graded, %d replies to grade, %d "
			"requests to send\n",
			d->resumed ? "resuming the" : "starting a", o->out, p.graded, p.total,
			p.regrade, p.requests);
	if (o->verbose)
		fprintf(stderr, "ka: target %s, %d grade session%s, model %s\n", c->target,
			sampler_n_sessions(s), sampler_n_sessions(s) > 1 ? "s" : "", o->model);
	sampler_run(s, c->m);
	rc = cap_write_outputs(c, s, d->j, p.total);
out:
	sampler_free(s);
	return rc;
}

int track_capability_run(const struct capability_opts *o)
{
	struct cap_run c;
	memset(&c, 0, sizeof c);
	c.o = o;
	struct rundir d = {.lock_fd = -1};
	struct ka_err e;
	signal(SIGPIPE, SIG_IGN);
	int rc = KA_EXIT_USAGE;
	if (cap_prepare(&c))
		goto out;
	rc = rundir_open(&d, o->out, o->fresh, c.args_key, c.args_pretty, c.bank_hash, &e);
	if (rc) {
		cap_fail("%s", e.msg);
		goto out;
	}
	rc = cap_sample(&c, &d);
out:
	cap_free(&c);
	rundir_close(&d);
	return rundir_exit_code(rc);
}
