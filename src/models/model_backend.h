/* model_backend.h: what a model backend implements, and the helpers model.c
 * offers them. Private to src/model*.c: callers use model.h. A backend is
 * either HTTP (it builds one request and parses one JSON reply; model.c does
 * the transport, retries, caps, cache and accounting) or local (it answers
 * one request itself, blocking; model.c runs several on worker threads). */
#ifndef KA_MODEL_BACKEND_H
#define KA_MODEL_BACKEND_H

#include <curl/curl.h>
#include <jansson.h>

#include "model.h"

/* One HTTP request built by a backend: POSTed with body to url. model.c frees
 * all of it (curl_slist_free_all, free). */
struct model_http {
	char *url;
	struct curl_slist *headers;
	char *body;
	size_t body_len;
};

struct model_backend {
	const char *name;
	int http;      /* 1: build + parse; 0: answer */
	int cacheable; /* replies go to the cache (not for replay/archive) */
	/* Parse the part of the spec after "name:" into m->impl; check
	 * credentials. 0 or -1 with e set to "<name>: <cause>". */
	int (*open)(struct model *m, const char *arg, struct ka_err *e);
	/* HTTP: the request for r, sending seed. 0 or -1 with e set. */
	int (*build)(struct model *m, const struct model_request *r, int64_t seed,
		     struct model_http *h, struct ka_err *e);
	/* HTTP: read a 2xx JSON reply into rep (text, tokens, finish). 0, or -1
	 * with rep->error set ("<name>: reply has no ..."). */
	int (*parse)(struct model *m, json_t *root, struct model_reply *rep);
	/* Local: answer r into rep (ok, text, maybe code, tokens, error).
	 * Called from worker threads, concurrently. */
	void (*answer)(struct model *m, const struct model_request *r, int64_t seed,
		       struct model_reply *rep);
	void (*close)(struct model *m);
};

struct model {
	char *spec;
	const struct model_backend *be;
	void *impl; /* the backend's state */
	struct model_params p;
	char *price_name; /* model name matched against the price table */
	double price_in, price_out;
	int priced;
	struct model_stats stats;
	CURLM *multi;
};

extern const struct model_backend model_openai_backend;
extern const struct model_backend model_anthropic_backend;
extern const struct model_backend model_bedrock_backend;
extern const struct model_backend model_cmd_backend;
extern const struct model_backend model_replay_backend;
extern const struct model_backend model_archive_backend;

/* Set rep->ok = 0 and rep->error to "<backend>: <message>" squeezed onto one
 * line (newlines and control characters become spaces). */
void model_fail(struct model_reply *rep, const char *backend, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Split "x@y" at the last '@' whose right side starts with "http://" or
 * "https://" (URL variant) into a new *name and *url (NULL when absent).
 * Returns -1 with e set when name is empty or an '@' is followed by something
 * that is not a URL. The caller frees both. */
int model_split_url(const char *backend, const char *arg, char **name, char **url,
		    struct ka_err *e);

/* Append a header "name: value" to *list. */
void model_header(struct curl_slist **list, const char *name, const char *value);

/* Take a JSON object, serialise it compactly into h->body. Steals root. */
void model_http_body(struct model_http *h, json_t *root);

/* The "text" strings of the blocks of a reply's content array, joined in
 * order (a new string, "" if none). With text_type_only, a block whose
 * "type" is present and not "text" is skipped (Anthropic's thinking and tool
 * blocks). */
char *model_join_text(const json_t *blocks, int text_type_only);

/* The first non-empty of getenv(a), getenv(b) (b may be NULL), or NULL. */
const char *model_env(const char *a, const char *b);

/* Run a shell command (/bin/sh -c) with stdin_data on its stdin, extra_env
 * ("K=V" strings, NULL-terminated, may be NULL) added to the environment, a
 * wall-clock limit and a cap on stdout. Returns the exit status (0..255),
 * 124 on timeout, 128+signal, -1 if it could not start (errline set), or -2
 * when stdout went over cap (the command is killed). *out (NUL-terminated,
 * caller frees) holds stdout; errline receives the first line of stderr.
 * Thread-safe. */
int model_shell(const char *command, const char *stdin_data, size_t stdin_len,
		char *const *extra_env, double timeout_s, size_t cap, char **out, size_t *out_len,
		char *errline, size_t errline_cap);

#endif
