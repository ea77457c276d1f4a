/* model.c: the backend-independent part of model.h: spec parsing, the
 * request loop over libcurl's multi interface (concurrency, retries with
 * backoff and Retry-After, reply caps, timeouts), worker threads for local
 * backends, the reply cache, the price table and code extraction. Each
 * protocol lives in its own model_<backend>.c. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "model_backend.h"
#include "sigv4.h"

#define MODEL_MAX_CONCURRENCY 1024
#define MODEL_PRICES_CAP (1 << 20)

static const struct model_backend *const backends[] = {
	&model_openai_backend, &model_anthropic_backend, &model_bedrock_backend,
	&model_cmd_backend,    &model_replay_backend,	 &model_archive_backend,
};

/* ---- helpers for backends ---------------------------------------------- */

void model_fail(struct model_reply *rep, const char *backend, const char *fmt, ...)
{
	char msg[KA_ERRLEN - 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rep->ok = 0;
	snprintf(rep->error, sizeof rep->error, "%.24s: %s", backend, msg);
	for (char *c = rep->error; *c; c++)
		if ((unsigned char)*c < 32)
			*c = ' ';
}

int model_split_url(const char *backend, const char *arg, char **name, char **url, struct ka_err *e)
{
	*name = *url = NULL;
	const char *at = NULL;
	for (const char *p = strchr(arg, '@'); p; p = strchr(p + 1, '@'))
		if (!strncmp(p + 1, "http://", 7) || !strncmp(p + 1, "https://", 8))
			at = p;
	if (!at && strchr(arg, '@')) {
		const char *p = strrchr(arg, '@');
		return ka_err_set(e, "%s: base URL '%s' must start with http:// or https://",
				  backend, p + 1);
	}
	size_t n = at ? (size_t)(at - arg) : strlen(arg);
	if (n == 0)
		return ka_err_set(e, "%s: missing model name (%s:<model>[@<base-url>])", backend,
				  backend);
	*name = xmalloc(n + 1);
	memcpy(*name, arg, n);
	(*name)[n] = 0;
	if (at)
		*url = xstrdup(at + 1);
	return 0;
}

void model_header(struct curl_slist **list, const char *name, const char *value)
{
	char *h = xasprintf("%s: %s", name, value);
	struct curl_slist *l = curl_slist_append(*list, h);
	free(h);
	if (!l) {
		fputs("ka: out of memory\n", stderr);
		abort();
	}
	*list = l;
}

void model_http_body(struct model_http *h, json_t *root)
{
	h->body = json_dumps(root, JSON_COMPACT);
	if (!h->body) {
		fputs("ka: out of memory\n", stderr);
		abort();
	}
	h->body_len = strlen(h->body);
	json_decref(root);
}

char *model_join_text(const json_t *blocks, int text_type_only)
{
	struct util_buf b = {0};
	size_t i;
	json_t *block;
	json_array_foreach(blocks, i, block)
	{
		const char *type = json_string_value(json_object_get(block, "type"));
		const char *s = json_string_value(json_object_get(block, "text"));
		if (s && !(text_type_only && type && strcmp(type, "text")))
			util_buf_printf(&b, "%s", s);
	}
	return b.s ? b.s : xstrdup("");
}

const char *model_env(const char *a, const char *b)
{
	const char *v = getenv(a);
	if (v && *v)
		return v;
	if (b) {
		v = getenv(b);
		if (v && *v)
			return v;
	}
	return NULL;
}

/* ---- params, open, close ------------------------------------------------ */

void model_params_default(struct model_params *p)
{
	memset(p, 0, sizeof *p);
	p->temperature = 0.7;
	p->top_p = 1.0;
	p->max_tokens = 8192;
	p->seed = 0;
	p->concurrency = 16;
	p->timeout_s = 600;
	p->max_retries = 5;
	p->retry_base_s = 1.0;
	p->retry_max_s = 120;
	p->max_reply_bytes = (size_t)4 << 20;
}

static int check_params(const struct model_params *p, struct ka_err *e)
{
	if (!(p->temperature >= 0 && p->temperature <= 2))
		return ka_err_set(e, "model: temperature %g is outside [0, 2]", p->temperature);
	if (!(p->top_p > 0 && p->top_p <= 1))
		return ka_err_set(e, "model: top_p %g is outside (0, 1]", p->top_p);
	if (p->max_tokens < 1)
		return ka_err_set(e, "model: max_tokens %d must be at least 1", p->max_tokens);
	if (p->concurrency < 1 || p->concurrency > MODEL_MAX_CONCURRENCY)
		return ka_err_set(e, "model: concurrency %d is outside [1, %d]", p->concurrency,
				  MODEL_MAX_CONCURRENCY);
	if (!(p->timeout_s > 0))
		return ka_err_set(e, "model: timeout %g s must be positive", p->timeout_s);
	if (p->max_retries < 0 || p->max_retries > 100)
		return ka_err_set(e, "model: max_retries %d is outside [0, 100]", p->max_retries);
	if (p->max_reply_bytes < 1024)
		return ka_err_set(e, "model: max_reply_bytes %zu is under 1024",
				  p->max_reply_bytes);
	return 0;
}

/* Built-in prices, USD per million input / output tokens. A name matches
 * when the key occurs in it as a whole dash-separated stem (so
 * "anthropic.claude-3-5-sonnet-20240620-v1:0" is claude-3-5-sonnet); the
 * longest matching key wins, a prices file's key on a tie. */
struct price {
	const char *key;
	double in, out;
};

static const struct price builtin_prices[] = {
	{"gpt-4o", 2.50, 10.00},
	{"gpt-4o-mini", 0.15, 0.60},
	{"gpt-4.1", 2.00, 8.00},
	{"gpt-4.1-mini", 0.40, 1.60},
	{"gpt-4.1-nano", 0.10, 0.40},
	{"gpt-5", 1.25, 10.00},
	{"gpt-5-mini", 0.25, 2.00},
	{"gpt-5-nano", 0.05, 0.40},
	{"o1", 15.00, 60.00},
	{"o3", 2.00, 8.00},
	{"o3-mini", 1.10, 4.40},
	{"o4-mini", 1.10, 4.40},
	{"claude-3-haiku", 0.25, 1.25},
	{"claude-3-5-haiku", 0.80, 4.00},
	{"claude-haiku-4-5", 1.00, 5.00},
	{"claude-3-5-sonnet", 3.00, 15.00},
	{"claude-3-7-sonnet", 3.00, 15.00},
	{"claude-sonnet-4", 3.00, 15.00},
	{"claude-3-opus", 15.00, 75.00},
	{"claude-opus-4", 15.00, 75.00},
	{"claude-opus-4-5", 5.00, 25.00},
	{"amazon.nova-micro", 0.035, 0.14},
	{"amazon.nova-lite", 0.06, 0.24},
	{"amazon.nova-pro", 0.80, 3.20},
};

static int price_matches(const char *name, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(name, key); p; p = strstr(p + 1, key)) {
		char before = p == name ? 0 : p[-1];
		char after = p[kl];
		if ((before == 0 || before == '.' || before == '/' || before == ':') &&
		    (after == 0 || after == '-' || after == ':' || after == '@'))
			return 1;
	}
	return 0;
}

static int load_prices(struct model *m, struct ka_err *e)
{
	m->priced = 0;
	if (!m->price_name)
		return 0;
	const char *file = m->p.prices_file ? m->p.prices_file : model_env("KA_PRICES", NULL);
	size_t best = 0;
	if (file) {
		char *text = NULL;
		if (util_read_file(file, MODEL_PRICES_CAP, &text, NULL, e) != 0)
			return ka_err_set(e, "model: prices file: %s", e->msg);
		json_error_t je;
		json_t *root = json_loads(text, 0, &je);
		free(text);
		if (!root || !json_is_object(root)) {
			json_decref(root);
			return ka_err_set(e, "model: prices file %s: line %d: %s", file, je.line,
					  root ? "not a JSON object" : je.text);
		}
		const char *key;
		json_t *v;
		json_object_foreach(root, key, v)
		{
			json_t *pi = json_object_get(v, "input_per_mtok");
			json_t *po = json_object_get(v, "output_per_mtok");
			if (!json_is_number(pi) || !json_is_number(po) ||
			    json_number_value(pi) < 0 || json_number_value(po) < 0) {
				json_decref(root);
				return ka_err_set(e,
						  "model: prices file %s: %s: needs numbers "
						  "input_per_mtok and output_per_mtok >= 0",
						  file, key);
			}
			if (price_matches(m->price_name, key) && strlen(key) > best) {
				best = strlen(key);
				m->price_in = json_number_value(pi);
				m->price_out = json_number_value(po);
				m->priced = 1;
			}
		}
		json_decref(root);
	}
	/* A built-in key wins only when it is longer than the file's match, so
	 * overriding "gpt-4o" leaves "gpt-4o-mini" at its own price. */
	for (size_t i = 0; i < sizeof builtin_prices / sizeof builtin_prices[0]; i++) {
		const struct price *pr = &builtin_prices[i];
		if (price_matches(m->price_name, pr->key) && strlen(pr->key) > best) {
			best = strlen(pr->key);
			m->price_in = pr->in;
			m->price_out = pr->out;
			m->priced = 1;
		}
	}
	return 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct model *model_open(const char *spec, const struct model_params *p, struct ka_err *e)
{
	if (!spec || !*spec)
		return ka_err_set(e, "empty model spec (expected backend:argument, e.g. "
				     "openai:gpt-4o)"),
		       NULL;
	const char *colon = strchr(spec, ':');
	if (!colon)
		return ka_err_set(e,
				  "model spec '%s' has no backend (expected backend:argument; "
				  "backends: openai, anthropic, bedrock, cmd, replay, archive)",
				  spec),
		       NULL;
	size_t bl = (size_t)(colon - spec);
	const struct model_backend *be = NULL;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strlen(backends[i]->name) == bl && !strncmp(backends[i]->name, spec, bl))
			be = backends[i];
	if (!be)
		return ka_err_set(e,
				  "unknown backend '%.*s' in model spec '%s' (backends: openai, "
				  "anthropic, bedrock, cmd, replay, archive)",
				  (int)(bl > 64 ? 64 : bl), spec, spec),
		       NULL;
	struct model *m = xcalloc(1, sizeof *m);
	m->spec = xstrdup(spec);
	m->be = be;
	if (p)
		m->p = *p;
	else
		model_params_default(&m->p);
	if (check_params(&m->p, e) != 0)
		goto fail;
	if (!colon[1]) {
		ka_err_set(e, "%s: nothing after '%s:' in the spec", be->name, be->name);
		goto fail;
	}
	if (be->open(m, colon + 1, e) != 0)
		goto fail;
	if (load_prices(m, e) != 0)
		goto fail;
	if (be->http) {
		pthread_once(&curl_once, curl_init);
		if (curl_init_rc != CURLE_OK) {
			ka_err_set(e, "%s: libcurl cannot start: %s", be->name,
				   curl_easy_strerror(curl_init_rc));
			goto fail;
		}
		m->multi = curl_multi_init();
		if (!m->multi) {
			ka_err_set(e, "%s: libcurl cannot start", be->name);
			goto fail;
		}
		curl_multi_setopt(m->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)m->p.concurrency);
	}
	if (m->p.cache_dir && be->cacheable && util_mkdirs(m->p.cache_dir, e) != 0) {
		ka_err_set(e, "%s: cache folder: %s", be->name, e->msg);
		goto fail;
	}
	return m;
fail:
	model_close(m);
	return NULL;
}

void model_close(struct model *m)
{
	if (!m)
		return;
	if (m->be && m->be->close && m->impl)
		m->be->close(m);
	if (m->multi)
		curl_multi_cleanup(m->multi);
	free(m->price_name);
	free(m->spec);
	free(m);
}

const char *model_backend_name(const struct model *m)
{
	return m->be->name;
}

const char *model_spec(const struct model *m)
{
	return m->spec;
}

int model_price(const struct model *m, double *in_per_mtok, double *out_per_mtok)
{
	if (in_per_mtok)
		*in_per_mtok = m->priced ? m->price_in : 0;
	if (out_per_mtok)
		*out_per_mtok = m->priced ? m->price_out : 0;
	return m->priced;
}

void model_get_stats(const struct model *m, struct model_stats *out)
{
	*out = m->stats;
}

int model_reply_marked(const struct model_reply *r)
{
	return r->ok &&
	       (!strcmp(r->finish, MODEL_FINISH_OVER_CAP) || !strcmp(r->finish, MODEL_FINISH_NUL));
}

void model_reply_free(struct model_reply *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->code);
	r->text = r->code = NULL;
}

/* ---- cache --------------------------------------------------------------- */

/* One field of the cache key: "<length>:<bytes>\n". */
static void key_field(struct util_buf *b, const char *s)
{
	size_t n = strlen(s);
	util_buf_printf(b, "%zu:", n);
	util_buf_add(b, s, n);
	util_buf_putc(b, '\n');
}

/* Path of the cache file of a request: sha256 of the spec, the prompts, the
 * sample index and the sampling parameters. Caller frees. */
static char *cache_path(const struct model *m, const struct model_request *r)
{
	char num[64];
	struct util_buf key = {0};
	key_field(&key, "ka-model-cache-v1");
	key_field(&key, m->spec);
	key_field(&key, r->system ? r->system : "");
	key_field(&key, r->prompt ? r->prompt : "");
	snprintf(num, sizeof num, "%d", r->sample);
	key_field(&key, num);
	snprintf(num, sizeof num, "%lld", (long long)(m->p.seed + r->sample));
	key_field(&key, num);
	snprintf(num, sizeof num, "%.17g/%.17g/%d", m->p.temperature, m->p.top_p, m->p.max_tokens);
	key_field(&key, num);
	char hex[65];
	sigv4_sha256_hex(key.s, key.len, hex);
	util_buf_free(&key);
	return xasprintf("%s/%.2s/%s.json", m->p.cache_dir, hex, hex);
}

static int cache_get(const struct model *m, const struct model_request *r, struct model_reply *rep)
{
	char *path = cache_path(m, r), *text = NULL;
	int found = 0;
	if (util_read_file(path, m->p.max_reply_bytes * 2 + 65536, &text, NULL, NULL) == 0) {
		json_t *root = json_loads(text, 0, NULL);
		json_t *t = json_object_get(root, "text");
		if (json_is_string(t)) {
			rep->ok = 1;
			rep->cached = 1;
			rep->text = xstrdup(json_string_value(t));
			rep->in_tokens = json_integer_value(json_object_get(root, "in_tokens"));
			rep->out_tokens = json_integer_value(json_object_get(root, "out_tokens"));
			rep->latency_s = json_number_value(json_object_get(root, "latency_s"));
			rep->cost_usd = json_number_value(json_object_get(root, "cost_usd"));
			rep->http_status =
				(int)json_integer_value(json_object_get(root, "http_status"));
			const char *fin = json_string_value(json_object_get(root, "finish"));
			snprintf(rep->finish, sizeof rep->finish, "%s", fin ? fin : "");
			found = 1;
		}
		json_decref(root);
	}
	free(text);
	free(path);
	return found;
}

static void cache_put(const struct model *m, const struct model_request *r,
		      const struct model_reply *rep)
{
	char *path = cache_path(m, r);
	char *slash = strrchr(path, '/');
	*slash = 0;
	struct ka_err e;
	if (util_mkdirs(path, &e) == 0) {
		*slash = '/';
		json_t *o = json_pack("{s:s, s:s, s:i, s:I, s:s, s:I, s:I, s:f, s:f, s:i, s:s}",
				      "spec", m->spec, "task", r->task ? r->task : "", "sample",
				      r->sample, "seed", (json_int_t)rep->seed, "text", rep->text,
				      "in_tokens", (json_int_t)rep->in_tokens, "out_tokens",
				      (json_int_t)rep->out_tokens, "latency_s", rep->latency_s,
				      "cost_usd", rep->cost_usd, "http_status", rep->http_status,
				      "finish", rep->finish);
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
		/* A cache that cannot be written only costs a resumed run money. */
		if (s && util_write_file(path, s, strlen(s), &e) != 0 && m->p.verbose)
			fprintf(stderr, "ka model: cache: %s\n", e.msg);
		free(s);
		json_decref(o);
	}
	free(path);
}

/* ---- delivery ------------------------------------------------------------ */

/* Complete a reply (code, cost, cache, totals), hand it to on_done, free it. */
static void deliver(struct model *m, const struct model_request *r, struct model_reply *rep,
		    model_done_fn on_done, void *ctx)
{
	rep->seed = m->p.seed + r->sample;
	int marked = model_reply_marked(rep);
	if (rep->ok && marked) {
		/* NUL bytes or over the cap: no code, the evidence in error,
		 * not cached (the journal records it once). */
		if (!rep->text)
			rep->text = xstrdup("");
		free(rep->code);
		rep->code = NULL;
	} else if (rep->ok) {
		if (!rep->text)
			rep->text = xstrdup("");
		if (!rep->code)
			rep->code = extract_code(rep->text, r->lang);
		if (!rep->cached) {
			rep->cost_usd = m->priced ? ((double)rep->in_tokens * m->price_in +
						     (double)rep->out_tokens * m->price_out) /
							    1e6
						  : 0;
			if (m->p.cache_dir && m->be->cacheable)
				cache_put(m, r, rep);
		}
		rep->error[0] = 0;
	} else {
		free(rep->text);
		free(rep->code);
		rep->text = rep->code = NULL;
		if (!rep->error[0])
			model_fail(rep, m->be->name, "failed for an unknown reason");
	}
	m->stats.requests++;
	if (!rep->ok)
		m->stats.failed++;
	if (rep->cached) {
		m->stats.cached++;
	} else {
		m->stats.in_tokens += rep->in_tokens;
		m->stats.out_tokens += rep->out_tokens;
		m->stats.cost_usd += rep->cost_usd;
	}
	on_done(r, rep, ctx);
	model_reply_free(rep);
}

/* ---- HTTP transport ------------------------------------------------------ */

struct xfer {
	int idx;
	int attempt;	 /* attempts started */
	double ready_at; /* when a retry may start */
	double t0;
	CURL *easy;
	struct model_http h;
	struct util_buf body; /* capped at max_reply_bytes */
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	struct xfer *x = userp;
	size_t n = size * nmemb;
	if (util_buf_add(&x->body, data, n))
		return 0; /* over the cap: aborts the transfer with CURLE_WRITE_ERROR */
	return n;
}

static void xfer_reset(struct xfer *x)
{
	if (x->easy)
		curl_easy_cleanup(x->easy);
	x->easy = NULL;
	curl_slist_free_all(x->h.headers);
	free(x->h.url);
	free(x->h.body);
	memset(&x->h, 0, sizeof x->h);
	util_buf_free(&x->body);
	x->errbuf[0] = 0;
}

/* Build and add one attempt. 0, or -1 with rep filled (a failure to deliver). */
static int xfer_start(struct model *m, struct xfer *x, const struct model_request *r,
		      struct model_reply *rep)
{
	struct ka_err e = {{0}};
	if (m->be->build(m, r, m->p.seed + r->sample, &x->h, &e) != 0) {
		rep->ok = 0;
		snprintf(rep->error, sizeof rep->error, "%s", e.msg);
		xfer_reset(x);
		return -1;
	}
	model_header(&x->h.headers, "Expect", ""); /* no 100-continue round trip */
	CURL *c = curl_easy_init();
	if (!c) {
		model_fail(rep, m->be->name, "libcurl cannot create a transfer");
		xfer_reset(x);
		return -1;
	}
	x->easy = c;
	util_buf_init_cap(&x->body, m->p.max_reply_bytes);
	curl_easy_setopt(c, CURLOPT_URL, x->h.url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->h.headers);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, x->h.body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->h.body_len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_PRIVATE, x);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(m->p.timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(m->p.timeout_s < 30 ? m->p.timeout_s * 1000 : 30000));
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "KernelAscent/0.1 (libcurl)");
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (curl_multi_add_handle(m->multi, c) != CURLM_OK) {
		model_fail(rep, m->be->name, "libcurl cannot add a transfer");
		xfer_reset(x);
		return -1;
	}
	x->attempt++;
	x->t0 = util_now();
	m->stats.attempts++;
	if (x->attempt > 1)
		m->stats.retries++;
	return 0;
}

/* The message an error body carries: error.message (OpenAI, Anthropic),
 * message / Message (Bedrock), detail or error as a string (vLLM, FastAPI),
 * else the start of the body. */
static void error_text(const char *body, size_t len, char *out, size_t cap)
{
	out[0] = 0;
	if (!body || !len)
		return;
	json_t *root = json_loadb(body, len, 0, NULL);
	const char *msg = NULL;
	if (root) {
		json_t *err = json_object_get(root, "error");
		msg = json_string_value(json_object_get(err, "message"));
		if (!msg)
			msg = json_string_value(err);
		if (!msg)
			msg = json_string_value(json_object_get(root, "message"));
		if (!msg)
			msg = json_string_value(json_object_get(root, "Message"));
		if (!msg)
			msg = json_string_value(json_object_get(root, "detail"));
	}
	if (msg)
		snprintf(out, cap, "%s", msg);
	else
		snprintf(out, cap, "%.*s", (int)(len < 160 ? len : 160), body);
	json_decref(root);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 32)
			*c = ' ';
}

enum xfer_outcome { XFER_DONE, XFER_RETRY };

static int retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_WRITE_ERROR:
	case CURLE_LOGIN_DENIED:
	case CURLE_TOO_MANY_REDIRECTS: return 0;
	default: return 1;
	}
}

static double backoff(const struct model *m, int attempt)
{
	double d = m->p.retry_base_s * pow(2.0, attempt - 1);
	double jitter = 0.5 + (double)(util_random64() >> 11) / 9007199254740992.0;
	d *= jitter;
	return d > m->p.retry_max_s ? m->p.retry_max_s : d;
}

/* Judge a finished attempt: a reply in rep (XFER_DONE) or a retry after
 * *delay seconds. */
static enum xfer_outcome xfer_finish(struct model *m, struct xfer *x, CURLcode rc,
				     struct model_reply *rep, double *delay)
{
	const char *be = m->be->name;
	long status = 0;
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	rep->http_status = (int)status;
	rep->attempts = x->attempt;
	rep->latency_s = util_now() - x->t0;
	int can_retry = x->attempt <= m->p.max_retries;
	if (x->body.over) {
		/* The sample's outcome, recorded once (never retried on each
		 * start): a completion with no code, the cap as its evidence. */
		rep->ok = 1;
		free(rep->text);
		rep->text = xstrdup("");
		snprintf(rep->finish, sizeof rep->finish, "%s", MODEL_FINISH_OVER_CAP);
		snprintf(rep->error, sizeof rep->error,
			 "%s: reply over the cap of %zu bytes (HTTP %ld)", be, m->p.max_reply_bytes,
			 status);
		return XFER_DONE;
	}
	if (rc != CURLE_OK) {
		if (rc == CURLE_OPERATION_TIMEDOUT)
			model_fail(rep, be, "no reply within %g s from %s (%d attempt%s)",
				   m->p.timeout_s, x->h.url, x->attempt,
				   x->attempt == 1 ? "" : "s");
		else
			model_fail(rep, be, "%s: %s (%s; %d attempt%s)", x->h.url,
				   curl_easy_strerror(rc), x->errbuf[0] ? x->errbuf : "no detail",
				   x->attempt, x->attempt == 1 ? "" : "s");
		if (can_retry && retryable_curl(rc)) {
			*delay = backoff(m, x->attempt);
			return XFER_RETRY;
		}
		return XFER_DONE;
	}
	if (status == 429 || status == 408 || status >= 500) {
		char msg[256];
		error_text(x->body.s, x->body.len, msg, sizeof msg);
		model_fail(rep, be, "HTTP %ld: %s (%d attempt%s)", status, msg, x->attempt,
			   x->attempt == 1 ? "" : "s");
		if (!can_retry)
			return XFER_DONE;
		curl_off_t ra = -1;
		if (curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
			*delay = (double)ra > m->p.retry_max_s ? m->p.retry_max_s : (double)ra;
		else
			*delay = backoff(m, x->attempt);
		return XFER_RETRY;
	}
	if (status < 200 || status >= 300) {
		char msg[256];
		error_text(x->body.s, x->body.len, msg, sizeof msg);
		model_fail(rep, be, "HTTP %ld: %s", status, msg[0] ? msg : "(empty body)");
		return XFER_DONE;
	}
	json_error_t je;
	json_t *root = json_loadb(x->body.s ? x->body.s : "", x->body.len, 0, &je);
	if (!root) {
		model_fail(rep, be, "reply is not JSON (%s at byte %d; %zu bytes, starts '%.40s')",
			   je.text, je.position, x->body.len, x->body.s ? x->body.s : "");
		return XFER_DONE;
	}
	rep->ok = 1;
	if (m->be->parse(m, root, rep) != 0) {
		rep->ok = 0;
		if (!rep->error[0])
			model_fail(rep, be, "reply has no completion");
	}
	json_decref(root);
	return XFER_DONE;
}

static int run_http(struct model *m, const struct model_request *reqs, const int *todo, int ntodo,
		    model_done_fn on_done, void *ctx)
{
	struct xfer *xs = xcalloc((size_t)ntodo, sizeof *xs);
	struct xfer **waiting = xcalloc((size_t)ntodo, sizeof *waiting);
	int next = 0, inflight = 0, done = 0, nwait = 0, status = 0;
	while (done < ntodo) {
		double now = util_now();
		while (inflight < m->p.concurrency) {
			struct xfer *x = NULL;
			int wi = -1;
			for (int k = 0; k < nwait; k++)
				if (waiting[k]->ready_at <= now &&
				    (wi < 0 || waiting[k]->ready_at < waiting[wi]->ready_at))
					wi = k;
			if (wi >= 0) {
				x = waiting[wi];
				waiting[wi] = waiting[--nwait];
			} else if (next < ntodo) {
				x = &xs[next];
				x->idx = todo[next++];
			} else {
				break;
			}
			struct model_reply rep;
			memset(&rep, 0, sizeof rep);
			if (xfer_start(m, x, &reqs[x->idx], &rep) != 0) {
				rep.attempts = x->attempt;
				deliver(m, &reqs[x->idx], &rep, on_done, ctx);
				done++;
				continue;
			}
			inflight++;
		}
		int running = 0;
		if (curl_multi_perform(m->multi, &running) != CURLM_OK) {
			status = -1;
			break;
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m->multi, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			CURL *easy = msg->easy_handle;
			CURLcode rc = msg->data.result;
			struct xfer *x = NULL;
			curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
			curl_multi_remove_handle(m->multi, easy);
			inflight--;
			struct model_reply rep;
			memset(&rep, 0, sizeof rep);
			double delay = 0;
			enum xfer_outcome o = xfer_finish(m, x, rc, &rep, &delay);
			if (o == XFER_RETRY) {
				if (m->p.verbose)
					fprintf(stderr, "ka model: %s; retrying in %.1f s\n",
						rep.error, delay);
				model_reply_free(&rep);
				xfer_reset(x);
				x->ready_at = util_now() + delay;
				waiting[nwait++] = x;
				continue;
			}
			xfer_reset(x);
			deliver(m, &reqs[x->idx], &rep, on_done, ctx);
			done++;
		}
		if (done >= ntodo)
			break;
		int timeout_ms = 1000;
		if (nwait && inflight < m->p.concurrency) {
			double soonest = waiting[0]->ready_at;
			for (int k = 1; k < nwait; k++)
				if (waiting[k]->ready_at < soonest)
					soonest = waiting[k]->ready_at;
			double ms = (soonest - util_now()) * 1000;
			timeout_ms = ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms + 1;
		}
		if (inflight == 0 && next >= ntodo && nwait == 0)
			break; /* nothing left to wait for (cannot happen) */
		curl_multi_poll(m->multi, NULL, 0, timeout_ms, NULL);
	}
	for (int i = 0; i < ntodo; i++) {
		if (xs[i].easy)
			curl_multi_remove_handle(m->multi, xs[i].easy);
		xfer_reset(&xs[i]);
	}
	free(waiting);
	free(xs);
	return status;
}

/* ---- local backends on worker threads ----------------------------------- */

struct pool {
	struct model *m;
	const struct model_request *reqs;
	const int *todo;
	int ntodo, next;
	struct model_reply *replies;
	int *done_q; /* indices into todo, in completion order */
	int nq;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *pool_worker(void *arg)
{
	struct pool *pl = arg;
	for (;;) {
		pthread_mutex_lock(&pl->mu);
		int k = pl->next < pl->ntodo ? pl->next++ : -1;
		pthread_mutex_unlock(&pl->mu);
		if (k < 0)
			return NULL;
		const struct model_request *r = &pl->reqs[pl->todo[k]];
		struct model_reply *rep = &pl->replies[k];
		double t0 = util_now();
		pl->m->be->answer(pl->m, r, pl->m->p.seed + r->sample, rep);
		if (rep->latency_s == 0)
			rep->latency_s = util_now() - t0;
		if (rep->attempts == 0)
			rep->attempts = 1;
		pthread_mutex_lock(&pl->mu);
		pl->done_q[pl->nq++] = k;
		pthread_cond_signal(&pl->cv);
		pthread_mutex_unlock(&pl->mu);
	}
}

static int run_local(struct model *m, const struct model_request *reqs, const int *todo, int ntodo,
		     model_done_fn on_done, void *ctx)
{
	struct pool pl = {.m = m, .reqs = reqs, .todo = todo, .ntodo = ntodo};
	pl.replies = xcalloc((size_t)ntodo, sizeof *pl.replies);
	pl.done_q = xcalloc((size_t)ntodo, sizeof *pl.done_q);
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.cv, NULL);
	int nthreads = m->p.concurrency < ntodo ? m->p.concurrency : ntodo;
	pthread_t *th = xcalloc((size_t)nthreads, sizeof *th);
	int started = 0;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, pool_worker, &pl) == 0)
			started++;
	if (started == 0) {
		/* No threads: answer inline, one at a time. */
		pool_worker(&pl);
	}
	int delivered = 0;
	while (delivered < ntodo) {
		pthread_mutex_lock(&pl.mu);
		while (delivered >= pl.nq)
			pthread_cond_wait(&pl.cv, &pl.mu);
		int k = pl.done_q[delivered];
		pthread_mutex_unlock(&pl.mu);
		m->stats.attempts += pl.replies[k].attempts;
		m->stats.retries += pl.replies[k].attempts - 1;
		deliver(m, &reqs[todo[k]], &pl.replies[k], on_done, ctx);
		delivered++;
	}
	for (int i = 0; i < nthreads && i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	pthread_mutex_destroy(&pl.mu);
	pthread_cond_destroy(&pl.cv);
	free(pl.done_q);
	free(pl.replies);
	return 0;
}

/* ---- model_run ----------------------------------------------------------- */

int model_run(struct model *m, const struct model_request *reqs, int n, model_done_fn on_done,
	      void *ctx)
{
	if (!m || n < 0 || (n > 0 && (!reqs || !on_done)))
		return -1;
	int *todo = xcalloc((size_t)(n ? n : 1), sizeof *todo);
	int ntodo = 0;
	for (int i = 0; i < n; i++) {
		struct model_reply rep;
		memset(&rep, 0, sizeof rep);
		if (m->p.cache_dir && m->be->cacheable && cache_get(m, &reqs[i], &rep)) {
			deliver(m, &reqs[i], &rep, on_done, ctx);
			continue;
		}
		todo[ntodo++] = i;
	}
	int rc = 0;
	if (ntodo > 0)
		rc = m->be->http ? run_http(m, reqs, todo, ntodo, on_done, ctx)
				 : run_local(m, reqs, todo, ntodo, on_done, ctx);
	free(todo);
	return rc;
}

static void copy_reply(const struct model_request *req, const struct model_reply *rep, void *ctx)
{
	struct model_reply *out = ctx;
	*out = *rep;
	out->text = rep->text ? xstrdup(rep->text) : NULL;
	out->code = rep->code ? xstrdup(rep->code) : NULL;
}

int model_complete(struct model *m, const struct model_request *req, struct model_reply *out)
{
	memset(out, 0, sizeof *out);
	return model_run(m, req, 1, copy_reply, out);
}
