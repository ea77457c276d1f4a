/* model_replay.c: the replay backend, spec replay:<file.jsonl>. Each line of
 * the file is {"task": "...", "sample": N, "completion": "..."} (optional
 * "in_tokens", "out_tokens"); a request gets the completion recorded for its
 * task and sample, or fails when there is none. Nothing is sent anywhere. */
#include <stdlib.h>
#include <string.h>

#include "model_backend.h"

#define REPLAY_FILE_CAP ((size_t)512 << 20)

struct replay_entry {
	char *task;
	int sample;
	char *completion;
	int64_t in_tokens, out_tokens;
};

struct replay {
	char *path;
	struct replay_entry *e;
	size_t n;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct replay_entry *x = a, *y = b;
	int c = strcmp(x->task, y->task);
	return c ? c : (x->sample > y->sample) - (x->sample < y->sample);
}

static int replay_open(struct model *m, const char *arg, struct ka_err *e)
{
	struct replay *rp = xcalloc(1, sizeof *rp);
	m->impl = rp;
	rp->path = xstrdup(arg);
	char *text = NULL;
	size_t len = 0;
	struct ka_err fe;
	if (util_read_file(arg, REPLAY_FILE_CAP, &text, &len, &fe) != 0)
		return ka_err_set(e, "replay: %s", fe.msg);
	size_t cap = 0;
	int lineno = 0, rc = 0;
	char *p = text;
	while (p && *p) {
		char *eol = strchr(p, '\n');
		if (eol)
			*eol = 0;
		lineno++;
		char *s = p;
		p = eol ? eol + 1 : NULL;
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			continue;
		json_error_t je;
		json_t *o = json_loads(s, 0, &je);
		json_t *task = json_object_get(o, "task"), *sample = json_object_get(o, "sample");
		json_t *comp = json_object_get(o, "completion");
		const char *bad = !o			     ? je.text
				  : !json_is_string(task)    ? "needs a string \"task\""
				  : !json_is_integer(sample) ? "needs an integer \"sample\""
				  : !json_is_string(comp)    ? "needs a string \"completion\""
							     : NULL;
		if (bad) {
			rc = ka_err_set(e, "replay: %s:%d: %s", arg, lineno, bad);
			json_decref(o);
			break;
		}
		if (rp->n == cap) {
			cap = cap ? cap * 2 : 64;
			rp->e = xrealloc(rp->e, cap * sizeof *rp->e);
		}
		struct replay_entry *en = &rp->e[rp->n++];
		en->task = xstrdup(json_string_value(task));
		en->sample = (int)json_integer_value(sample);
		en->completion = xstrdup(json_string_value(comp));
		en->in_tokens = json_integer_value(json_object_get(o, "in_tokens"));
		en->out_tokens = json_integer_value(json_object_get(o, "out_tokens"));
		json_decref(o);
	}
	free(text);
	if (rc == 0 && rp->n)
		qsort(rp->e, rp->n, sizeof *rp->e, entry_cmp);
	return rc;
}

static void replay_answer(struct model *m, const struct model_request *r, int64_t seed,
			  struct model_reply *rep)
{
	struct replay *rp = m->impl;
	struct replay_entry key = {.task = (char *)(r->task ? r->task : ""), .sample = r->sample};
	const struct replay_entry *en =
		rp->n ? bsearch(&key, rp->e, rp->n, sizeof *rp->e, entry_cmp) : NULL;
	if (!en) {
		model_fail(rep, "replay", "no completion for task '%s' sample %d in %s", key.task,
			   r->sample, rp->path);
		return;
	}
	rep->ok = 1;
	rep->text = xstrdup(en->completion);
	rep->in_tokens = en->in_tokens;
	rep->out_tokens = en->out_tokens;
}

static void replay_close(struct model *m)
{
	struct replay *rp = m->impl;
	for (size_t i = 0; i < rp->n; i++) {
		free(rp->e[i].task);
		free(rp->e[i].completion);
	}
	free(rp->e);
	free(rp->path);
	free(rp);
}

const struct model_backend model_replay_backend = {
	.name = "replay",
	.http = 0,
	.cacheable = 0,
	.open = replay_open,
	.answer = replay_answer,
	.close = replay_close,
};
