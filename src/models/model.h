/* model.h: talking to language models. One spec string names a backend and
 * its model (docs/models.md):
 *
 *   openai:<model>[@<base-url>]     OpenAI-compatible chat completions
 *   anthropic:<model>[@<base-url>]  Anthropic Messages API
 *   bedrock:<model-id>[@<region>]   AWS Bedrock Runtime Converse, SigV4-signed
 *   cmd:<shell command>             prompt on stdin, completion on stdout
 *   replay:<file.jsonl>             recorded completions by task and sample
 *   archive:<bank-path>             the bank's verified solution of each task
 *
 * model_run sends a batch of requests with many in flight (libcurl multi),
 * retries 429, 5xx and connection errors with backoff and jitter (honouring
 * Retry-After), caps every reply, counts tokens and cost, caches replies on
 * disk and extracts the code block. A failure of one request is recorded in
 * that request's reply and the batch goes on. This module does not build
 * prompts or grade code. */
#ifndef KA_MODEL_H
#define KA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Sampling and transport settings of one run. Start from model_params_default
 * and change what you need; the strings are borrowed (kept alive by the
 * caller until model_close). */
struct model_params {
	double temperature;	 /* default 0.7 */
	double top_p;		 /* default 1.0; not sent to Anthropic/Bedrock when 1.0 */
	int max_tokens;		 /* default 8192 */
	int64_t seed;		 /* base seed: sample i is sent seed + i (default 0) */
	int concurrency;	 /* requests in flight, default 16, at most 1024 */
	double timeout_s;	 /* per attempt, whole reply; default 600. No low-speed cutoff */
	int max_retries;	 /* retries after the first attempt, default 5 */
	double retry_base_s;	 /* first backoff (doubling, jitter x0.5..1.5), default 1 */
	double retry_max_s;	 /* cap on one wait, Retry-After included, default 120 */
	size_t max_reply_bytes;	 /* cap on one reply body / command output, default 4 MiB */
	const char *cache_dir;	 /* reply cache folder; NULL = no cache */
	const char *prices_file; /* JSON price table; NULL = $KA_PRICES, else built-in only */
	int verbose;		 /* 1: one stderr line per retry */
};

/* One prompt to send. task and sample identify it (replay and archive look
 * them up; the cache key includes sample); lang is the target whose code is
 * extracted from the reply ("cuda", "opencl" or "c"; NULL = any block).
 * system may be NULL. user is the caller's, passed back untouched. */
struct model_request {
	const char *task;
	int sample;
	const char *system;
	const char *prompt;
	const char *lang;
	void *user;
};

/* The outcome of one request. text and code belong to the model module and
 * live until on_done returns (copy what you keep), except for replies from
 * model_complete, which the caller frees with model_reply_free. */
struct model_reply {
	int ok;	      /* 1: a completion arrived (text set, maybe without code) */
	char *text;   /* the completion; NULL when !ok */
	char *code;   /* extracted block, NULL = no_code (or !ok) */
	int64_t seed; /* the seed sent: params seed + sample */
	int64_t in_tokens, out_tokens;
	double latency_s;      /* duration of the attempt that answered */
	double cost_usd;       /* from the price table; 0 when the model is not priced */
	int cached;	       /* 1: served from the cache, nothing sent or paid now;
				  tokens, latency and cost are those of the original */
	int http_status;       /* last HTTP status, 0 for none (local backends, no reply) */
	int attempts;	       /* attempts made (0 when cached) */
	char finish[24];       /* stop reason as the API named it ("stop", "length",
				  "end_turn", "max_tokens", ...); "" if unknown */
	char error[KA_ERRLEN]; /* when !ok: one line "<backend>: <cause>" */
};

/* Totals since model_open, for scorecards. */
struct model_stats {
	int64_t requests;	       /* replies delivered */
	int64_t failed;		       /* of which !ok */
	int64_t cached;		       /* of which from the cache */
	int64_t attempts;	       /* HTTP requests / command runs made */
	int64_t retries;	       /* of which were retries */
	int64_t in_tokens, out_tokens; /* of the non-cached replies */
	double cost_usd;	       /* of the non-cached replies */
};

struct model;

typedef void (*model_done_fn)(const struct model_request *req, const struct model_reply *rep,
			      void *ctx);

/* Defaults listed in struct model_params. */
void model_params_default(struct model_params *p);

/* Parse spec, check credentials and settings (no network traffic), load the
 * price table. Returns a model (model_close), or NULL with e set to one line
 * naming the backend and the cause ("unknown backend 'foo'", "anthropic: no
 * API key (set ANTHROPIC_API_KEY)", ...). p NULL means the defaults. */
struct model *model_open(const char *spec, const struct model_params *p, struct ka_err *e);

/* Send all n requests, up to concurrency at a time, calling on_done once per
 * request, in completion order, from the calling thread. Cached replies are
 * delivered first without a request. Returns 0 when every request got its
 * on_done (whatever each outcome), -1 only if the model cannot work at all
 * (e.g. libcurl cannot start), in which case no more on_done calls come.
 * reqs is not modified. Not re-entrant on the same model. */
int model_run(struct model *m, const struct model_request *reqs, int n, model_done_fn on_done,
	      void *ctx);

/* One request, synchronously: fills *out, which the caller frees with
 * model_reply_free. Returns 0 (check out->ok) or -1 as model_run. */
int model_complete(struct model *m, const struct model_request *req, struct model_reply *out);

/* A reply that is the sample's outcome without being a usable completion:
 * ok = 1, code NULL, finish one of these, error the evidence ("reply holds
 * NUL bytes at offset N", "reply over the cap of N bytes"). Recorded once
 * (as no_code), never retried; never cached. */
#define MODEL_FINISH_OVER_CAP "ka_over_cap"
#define MODEL_FINISH_NUL "ka_nul_bytes"

/* 1 when rep is such a reply. */
int model_reply_marked(const struct model_reply *r);

/* Free text and code of a reply from model_complete. */
void model_reply_free(struct model_reply *r);

/* "openai", "anthropic", "bedrock", "cmd", "replay" or "archive". */
const char *model_backend_name(const struct model *m);

/* The spec as given to model_open. */
const char *model_spec(const struct model *m);

/* Prices in USD per million tokens used for this model; returns 1 if the
 * model is priced (built-in table or prices file), 0 if not (costs are 0). */
int model_price(const struct model *m, double *in_per_mtok, double *out_per_mtok);

/* Totals since model_open. */
void model_get_stats(const struct model *m, struct model_stats *out);

/* Free everything; NULL is fine. */
void model_close(struct model *m);

#endif
