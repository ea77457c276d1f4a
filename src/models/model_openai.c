/* model_openai.c: the OpenAI-compatible chat completions backend (OpenAI,
 * vLLM, SGLang, llama.cpp server, Ollama): spec openai:<model>[@<base-url>].
 * It builds the request and reads the reply; transport, retries and caps are
 * model.c's. It does not stream. */
#include <stdlib.h>
#include <string.h>

#include "model_backend.h"

#define OPENAI_DEFAULT_BASE "https://api.openai.com/v1"

struct openai {
	char *model;
	char *url;     /* full chat/completions URL */
	char *key;     /* NULL: no Authorization header (local servers) */
	int reasoning; /* o1/o3/o4/gpt-5: max_completion_tokens, no sampling knobs */
};

static int openai_open(struct model *m, const char *arg, struct ka_err *e)
{
	char *name, *base;
	if (model_split_url("openai", arg, &name, &base, e) != 0)
		return -1;
	struct openai *o = xcalloc(1, sizeof *o);
	m->impl = o;
	o->model = name;
	m->price_name = xstrdup(name);
	int custom = base != NULL;
	if (!base) {
		const char *env = model_env("OPENAI_BASE_URL", NULL);
		base = xstrdup(env ? env : OPENAI_DEFAULT_BASE);
		custom = env != NULL;
	}
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		base[--bl] = 0;
	if (bl >= 17 && !strcmp(base + bl - 17, "/chat/completions"))
		o->url = xstrdup(base);
	else
		o->url = xasprintf("%s/chat/completions", base);
	free(base);
	const char *key = model_env("KA_OPENAI_API_KEY", "OPENAI_API_KEY");
	if (key)
		o->key = xstrdup(key);
	else if (!custom)
		return ka_err_set(
			e,
			"openai: no API key for %s (set OPENAI_API_KEY or "
			"KA_OPENAI_API_KEY, or give a local server as openai:%s@<base-url>)",
			OPENAI_DEFAULT_BASE, name);
	static const char *const reasoning[] = {"o1", "o3", "o4", "gpt-5"};
	for (size_t i = 0; i < sizeof reasoning / sizeof reasoning[0]; i++) {
		size_t n = strlen(reasoning[i]);
		if (!strncmp(name, reasoning[i], n) && (name[n] == 0 || name[n] == '-'))
			o->reasoning = 1;
	}
	return 0;
}

static int openai_build(struct model *m, const struct model_request *r, int64_t seed,
			struct model_http *h, struct ka_err *e)
{
	struct openai *o = m->impl;
	/* json_string refuses bytes that are not UTF-8: say so rather than send
	 * a request without the prompt. */
	json_t *user = json_string(r->prompt ? r->prompt : "");
	json_t *sys = r->system && *r->system ? json_string(r->system) : NULL;
	if (!user || (r->system && *r->system && !sys)) {
		json_decref(user);
		json_decref(sys);
		return ka_err_set(e, "openai: the %s is not valid UTF-8",
				  user ? "system prompt" : "prompt");
	}
	json_t *msgs = json_array();
	if (sys)
		json_array_append_new(msgs,
				      json_pack("{s:s, s:o}", "role", "system", "content", sys));
	json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", "user", "content", user));
	json_t *body = json_pack("{s:s, s:o, s:I}", "model", o->model, "messages", msgs, "seed",
				 (json_int_t)seed);
	if (!body)
		return ka_err_set(e, "openai: cannot encode the request");
	if (o->reasoning) {
		json_object_set_new(body, "max_completion_tokens", json_integer(m->p.max_tokens));
	} else {
		json_object_set_new(body, "max_tokens", json_integer(m->p.max_tokens));
		json_object_set_new(body, "temperature", json_real(m->p.temperature));
		json_object_set_new(body, "top_p", json_real(m->p.top_p));
	}
	h->url = xstrdup(o->url);
	model_header(&h->headers, "Content-Type", "application/json");
	if (o->key) {
		char *auth = xasprintf("Bearer %s", o->key);
		model_header(&h->headers, "Authorization", auth);
		free(auth);
	}
	model_http_body(h, body);
	return 0;
}

static int openai_parse(struct model *m, json_t *root, struct model_reply *rep)
{
	json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
	json_t *msg = json_object_get(choice, "message");
	json_t *content = json_object_get(msg, "content");
	if (!msg)
		return model_fail(rep, "openai", "reply has no choices[0].message"), -1;
	if (json_is_string(content)) {
		rep->text = xstrdup(json_string_value(content));
	} else if (json_is_array(content)) {
		/* Some servers send content parts: join their text. */
		rep->text = model_join_text(content, 0);
	} else {
		rep->text = xstrdup(""); /* null content: e.g. all tokens spent reasoning */
	}
	json_t *usage = json_object_get(root, "usage");
	rep->in_tokens = json_integer_value(json_object_get(usage, "prompt_tokens"));
	rep->out_tokens = json_integer_value(json_object_get(usage, "completion_tokens"));
	const char *fin = json_string_value(json_object_get(choice, "finish_reason"));
	snprintf(rep->finish, sizeof rep->finish, "%s", fin ? fin : "");
	return 0;
}

static void openai_close(struct model *m)
{
	struct openai *o = m->impl;
	free(o->model);
	free(o->url);
	free(o->key);
	free(o);
}

const struct model_backend model_openai_backend = {
	.name = "openai",
	.http = 1,
	.cacheable = 1,
	.open = openai_open,
	.build = openai_build,
	.parse = openai_parse,
	.close = openai_close,
};
