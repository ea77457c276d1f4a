/* sampler_collect.c: the samples a run has graded, read back from its
 * journal into what a track writes (see sampler.h): the scorecard's "tasks"
 * array, results.jsonl and the metrics arrays. The metrics arrays are built
 * from the same "tasks" JSON by scorecard_metrics_from_json, so a scorecard
 * and its recomputation (`ka scorecard check`) read the samples one way.
 * Also the kernel files under out/kernels/ and the small pure helpers the
 * pipeline shares. */
#include "sampler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prompt.h"

char *sampler_clean_utf8(const char *s, size_t cap)
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

void sampler_speedup_clean(const struct grade_figure *f, struct metrics_speedup *out)
{
	memset(out, 0, sizeof *out);
	if (!f->valid || !(f->median > 0) || !isfinite(f->median))
		return;
	out->present = 1;
	out->median = f->median;
	out->lo = isfinite(f->lo) && f->lo > 0 && f->lo <= f->median ? f->lo : f->median;
	out->hi = isfinite(f->hi) && f->hi >= f->median ? f->hi : f->median;
}

char *sampler_kernel_path(const struct sampler_opts *o, const char *task, int sample)
{
	return xasprintf("kernels/%s/%d%s", task, sample, prompt_source_ext(o->target));
}

int sampler_write_kernel(const struct sampler_opts *o, const char *task, int sample,
			 const char *code, int force, struct ka_err *e)
{
	char *rel = sampler_kernel_path(o, task, sample);
	char *path = xasprintf("%s/%s", o->out, rel);
	char *dir = xasprintf("%s/kernels/%s", o->out, task);
	struct stat st;
	int rc = 0;
	if (force || stat(path, &st) != 0)
		rc = util_mkdirs(dir, e) || util_write_file(path, code, strlen(code), e) ? -1 : 0;
	free(rel);
	free(path);
	free(dir);
	return rc;
}

/* The speedup object key of a grader's result JSON, cleaned, as scorecard
 * JSON (null when absent). */
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
	sampler_speedup_clean(&g, &s);
	return scorecard_speedup_json(&s);
}

/* One sample's scorecard object from its journaled grade and reply. */
static json_t *sample_json(int sample, const char *verdict, const char *det, const json_t *res,
			   const struct journal_reply *rep)
{
	int ok = verdict && !strcmp(verdict, "ok");
	json_t *se = ok ? speedup_from_result(res, "speedup_eager") : json_null();
	struct metrics_sample m = {.ok = ok};
	scorecard_speedup_get(se, &m.eager);
	char *detail = sampler_clean_utf8(det ? det : "", SAMPLER_DETAIL_MAX);
	json_t *sj = json_object();
	json_object_set_new(sj, "sample", json_integer(sample));
	json_object_set_new(sj, "verdict", json_string(verdict));
	json_object_set_new(sj, "detail", json_string(detail));
	json_object_set_new(sj, "score", json_real(metrics_sample_score(&m)));
	json_object_set_new(sj, "speedup_eager", se);
	json_object_set_new(sj, "speedup_compiled",
			    ok ? speedup_from_result(res, "speedup_compiled") : json_null());
	json_object_set_new(sj, "time_us", ok ? speedup_from_result(res, "time_us") : json_null());
	json_object_set_new(sj, "tokens",
			    json_pack("{s:I,s:I}", "in", (json_int_t)rep->in_tokens, "out",
				      (json_int_t)rep->out_tokens));
	json_object_set_new(sj, "cost_usd", json_real(rep->cost_usd));
	json_object_set_new(sj, "latency_s", json_real(rep->latency_s));
	free(detail);
	return sj;
}

/* Read sample s of task t: 1 when it has no grade, 0 with *out (a new
 * scorecard sample object) and a results.jsonl line appended, -1 with e. */
static int collect_sample(struct journal *j, const struct sampler_opts *o, const struct ka_task *t,
			  int s, json_t **out, struct util_buf *jsonl, struct ka_err *e)
{
	char *verdict = NULL, *result = NULL, *det = NULL;
	struct journal_reply rep;
	memset(&rep, 0, sizeof rep);
	int rc = journal_get_grade(j, t->name, s, &verdict, &det, &result, e);
	if (rc)
		goto out;
	if (journal_get_reply(j, t->name, s, &rep, e) < 0) {
		rc = -1;
		goto out;
	}
	json_t *res = json_loads(result ? result : "{}", 0, NULL);
	if (!res)
		res = json_object();
	json_t *sj = sample_json(s, verdict, det, res, &rep);
	if (rep.code) {
		char *rel = sampler_kernel_path(o, t->name, s);
		struct ka_err we;
		if (sampler_write_kernel(o, t->name, s, rep.code, 0, &we))
			fprintf(stderr, "ka: %s\n", we.msg);
		json_object_set_new(sj, "source_path", json_string(rel));
		free(rel);
	}
	json_t *line = json_deep_copy(sj);
	json_object_set_new(line, "task", json_string(t->name));
	json_object_set_new(line, "tier", json_string(t->tier));
	json_object_set_new(line, "grade", res);
	char *text = json_dumps(line, JSON_COMPACT);
	util_buf_printf(jsonl, "%s\n", text ? text : "");
	free(text);
	json_decref(line);
	*out = sj;
out:
	free(verdict);
	free(det);
	free(result);
	journal_reply_free(&rep);
	return rc;
}

int sampler_collect(struct journal *j, const struct sampler_task *tasks, int n,
		    const struct sampler_opts *o, struct sampler_outputs *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	out->tasks = json_array();
	out->holder_ = json_pack("{s:O}", "tasks", out->tasks);
	util_buf_printf(&out->jsonl, "%s", "");
	for (int i = 0; i < n; i++) {
		const struct ka_task *t = tasks[i].t;
		json_t *samples = json_array();
		for (int s = 0; s < o->k; s++) {
			json_t *sj = NULL;
			int g = collect_sample(j, o, t, s, &sj, &out->jsonl, e);
			if (g < 0) {
				json_decref(samples);
				return -1;
			}
			if (g == 1)
				continue;
			const char *v = json_string_value(json_object_get(sj, "verdict"));
			out->n_ok += v && !strcmp(v, "ok");
			out->n_samples++;
			json_array_append_new(samples, sj);
		}
		if (json_array_size(samples) > 0)
			json_array_append_new(out->tasks,
					      json_pack("{s:s,s:s,s:o}", "name", t->name, "tier",
							t->tier, "samples", samples));
		else
			json_decref(samples);
	}
	scorecard_metrics_from_json(out->holder_, &out->m);
	return 0;
}

void sampler_outputs_free(struct sampler_outputs *out)
{
	scorecard_metrics_free(&out->m);
	json_decref(out->tasks);
	json_decref(out->holder_);
	free(out->jsonl.s);
	memset(out, 0, sizeof *out);
}
