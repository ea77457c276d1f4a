/* model_anthropic.c: the Anthropic Messages API backend: spec
 * anthropic:<model>[@<base-url>], key from ANTHROPIC_API_KEY. It builds the
 * request and reads the reply; transport, retries and caps are model.c's. */
#include <stdlib.h>
#include <string.h>

#include "model_backend.h"

#define ANTHROPIC_DEFAULT_BASE "https://api.anthropic.com"
#define ANTHROPIC_VERSION "2023-06-01"

struct anthropic {
	char *model, *url, *key;
};

static int anthropic_open(struct model *m, const char *arg, struct ka_err *e)
{
	char *name, *base;
	if (model_split_url("anthropic", arg, &name, &base, e) != 0)
		return -1;
	struct anthropic *a = xcalloc(1, sizeof *a);
	m->impl = a;
	a->model = name;
	m->price_name = xstrdup(name);
	int custom = base != NULL;
	if (!base)
		base = xstrdup(ANTHROPIC_DEFAULT_BASE);
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		base[--bl] = 0;
	if (bl >= 9 && !strcmp(base + bl - 9, "/messages"))
		a->url = xstrdup(base);
	else if (bl >= 3 && !strcmp(base + bl - 3, "/v1"))
		a->url = xasprintf("%s/messages", base);
	else
		a->url = xasprintf("%s/v1/messages", base);
	free(base);
	const char *key = model_env("KA_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY");
	if (key)
		a->key = xstrdup(key);
	else if (!custom)
		return ka_err_set(e, "anthropic: no API key (set ANTHROPIC_API_KEY)");
	return 0;
}

static int anthropic_build(struct model *m, const struct model_request *r, int64_t seed,
			   struct model_http *h, struct ka_err *e)
{
	struct anthropic *a = m->impl;
	json_t *msgs =
		json_pack("[{s:s, s:s}]", "role", "user", "content", r->prompt ? r->prompt : "");
	json_t *body =
		json_pack("{s:s, s:i, s:o, s:f}", "model", a->model, "max_tokens", m->p.max_tokens,
			  "messages", msgs, "temperature", m->p.temperature);
	if (!body)
		return ka_err_set(e, "anthropic: the prompt is not valid UTF-8");
	if (r->system && *r->system &&
	    json_object_set_new(body, "system", json_string(r->system)) != 0) {
		json_decref(body);
		return ka_err_set(e, "anthropic: the system prompt is not valid UTF-8");
	}
	/* Recent models refuse temperature and top_p together: send top_p only
	 * when the run asks for one. The API has no seed. */
	if (m->p.top_p < 1.0)
		json_object_set_new(body, "top_p", json_real(m->p.top_p));
	h->url = xstrdup(a->url);
	model_header(&h->headers, "Content-Type", "application/json");
	model_header(&h->headers, "anthropic-version", ANTHROPIC_VERSION);
	if (a->key)
		model_header(&h->headers, "x-api-key", a->key);
	model_http_body(h, body);
	return 0;
}

static int anthropic_parse(struct model *m, json_t *root, struct model_reply *rep)
{
	json_t *content = json_object_get(root, "content");
	if (!json_is_array(content))
		return model_fail(rep, "anthropic", "reply has no content array"), -1;
	rep->text = model_join_text(content, 1); /* thinking, tool blocks: not the answer */
	json_t *usage = json_object_get(root, "usage");
	rep->in_tokens = json_integer_value(json_object_get(usage, "input_tokens")) +
			 json_integer_value(json_object_get(usage, "cache_read_input_tokens")) +
			 json_integer_value(json_object_get(usage, "cache_creation_input_tokens"));
	rep->out_tokens = json_integer_value(json_object_get(usage, "output_tokens"));
	const char *fin = json_string_value(json_object_get(root, "stop_reason"));
	snprintf(rep->finish, sizeof rep->finish, "%s", fin ? fin : "");
	return 0;
}

static void anthropic_close(struct model *m)
{
	struct anthropic *a = m->impl;
	free(a->model);
	free(a->url);
	free(a->key);
	free(a);
}

const struct model_backend model_anthropic_backend = {
	.name = "anthropic",
	.http = 1,
	.cacheable = 1,
	.open = anthropic_open,
	.build = anthropic_build,
	.parse = anthropic_parse,
	.close = anthropic_close,
};
