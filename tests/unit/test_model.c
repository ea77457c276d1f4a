/* test_model.c: the model backends against real HTTP on loopback
 * (tools/fakeserver.py, which speaks OpenAI, Anthropic and Bedrock Converse
 * and checks every Bedrock SigV4 signature), plus the cmd, replay and archive
 * backends, spec errors, prices and the cache. Run from the repository root
 * (tests/run.sh does). Tests that need the server SKIP without python3. */
#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "ka_test.h"
#include "model.h"

static pid_t srv_pid;
static int srv_port;
static char tmpdir[256];

#define TEST_AK "AKIDEXAMPLE"
#define TEST_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define COLON_ID "anthropic.claude-3-5-sonnet-20240620-v1:0"

/* ---- the fake server ------------------------------------------------------ */

static int server_start(void)
{
	/* The server's stdin is a pipe only we hold: if this test dies, the
	 * pipe closes and the server exits (--exit-on-stdin-eof). */
	int pfd[2], life[2];
	if (pipe(pfd) != 0 || pipe2(life, O_CLOEXEC) != 0)
		return -1;
	srv_pid = fork();
	if (srv_pid == 0) {
		dup2(pfd[1], 1);
		dup2(life[0], 0);
		close(pfd[0]);
		execlp("python3", "python3", "tools/fakeserver.py", "--port", "0",
		       "--exit-on-stdin-eof", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	close(life[0]);
	char line[32] = {0};
	size_t k = 0;
	while (k + 1 < sizeof line) {
		ssize_t n = read(pfd[0], line + k, 1);
		if (n <= 0 || line[k] == '\n')
			break;
		k++;
	}
	close(pfd[0]);
	srv_port = atoi(line);
	return srv_port > 0 ? 0 : -1;
}

static void server_stop(void)
{
	if (srv_pid > 0) {
		kill(srv_pid, SIGTERM);
		waitpid(srv_pid, NULL, 0);
		srv_pid = 0;
	}
}

struct body {
	char buf[4096];
	size_t len;
};

static size_t on_ctl(char *d, size_t s, size_t n, void *u)
{
	struct body *b = u;
	size_t len = s * n;
	if (b->len + len >= sizeof b->buf)
		return 0;
	memcpy(b->buf + b->len, d, len);
	b->len += len;
	b->buf[b->len] = 0;
	return len;
}

/* GET /_stats (or POST /_reset): the JSON reply, or NULL. */
static json_t *server_ctl(const char *route, int post)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", srv_port, route);
	struct body b = {.len = 0};
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_ctl);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (post)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return rc == CURLE_OK ? json_loads(b.buf, 0, NULL) : NULL;
}

static void server_reset(void)
{
	json_decref(server_ctl("/_reset", 1));
}

static long long server_stat(const char *key)
{
	json_t *s = server_ctl("/_stats", 0);
	long long v = json_integer_value(json_object_get(s, key));
	json_decref(s);
	return v;
}

static char *spec_at(const char *fmt)
{
	char *s = NULL;
	if (asprintf(&s, fmt, srv_port) < 0)
		abort();
	return s;
}

/* ---- batches ----------------------------------------------------------------- */

struct batch {
	const struct model_request *reqs;
	struct model_reply r[128];
	int calls;
};

static void collect(const struct model_request *q, const struct model_reply *rep, void *ctx)
{
	struct batch *b = ctx;
	struct model_reply *o = &b->r[q - b->reqs];
	*o = *rep;
	o->text = rep->text ? strdup(rep->text) : NULL;
	o->code = rep->code ? strdup(rep->code) : NULL;
	b->calls++;
}

static struct batch *run(struct model *m, const struct model_request *reqs, int n)
{
	struct batch *b = calloc(1, sizeof *b);
	b->reqs = reqs;
	if (model_run(m, reqs, n, collect, b) != 0)
		b->calls = -1;
	return b;
}

static void batch_free(struct batch *b)
{
	for (int i = 0; i < 128; i++)
		model_reply_free(&b->r[i]);
	free(b);
}

static struct model_params fast_params(void)
{
	struct model_params p;
	model_params_default(&p);
	p.retry_base_s = 0.02;
	p.timeout_s = 20;
	return p;
}

static int contains(const char *hay, const char *needle)
{
	int ok = hay && strstr(hay, needle);
	if (!ok)
		printf("# expected '%s' in '%.300s'\n", needle, hay ? hay : "(null)");
	return ok;
}

/* ---- spec errors (no network) ---------------------------------------------- */

static void test_spec_errors(void)
{
	static const char *cases[][2] = {
		{"", "empty model spec"},
		{"gpt-4o", "model spec 'gpt-4o' has no backend"},
		{"foo:bar", "unknown backend 'foo' in model spec 'foo:bar'"},
		{"openai:", "openai: nothing after 'openai:'"},
		{"openai:@http://127.0.0.1:1", "openai: missing model name"},
		{"openai:m@ftp://host", "openai: base URL 'ftp://host' must start with http://"},
		{"openai:gpt-4o", "openai: no API key for https://api.openai.com/v1"},
		{"anthropic:claude-3-5-sonnet-20241022",
		 "anthropic: no API key (set ANTHROPIC_API_KEY)"},
		{"bedrock:@us-east-1", "bedrock: missing model ID"},
		{"bedrock:m@US_EAST", "bedrock: region 'US_EAST' is not like us-east-1"},
		{"bedrock:" COLON_ID, "bedrock: no AWS credentials"},
		{"cmd:   ", "cmd: empty command"},
		{"replay:/nonexistent/r.jsonl", "replay: /nonexistent/r.jsonl: No such file"},
		{"replay:tests/data/model/replay_bad.jsonl",
		 "replay: tests/data/model/replay_bad.jsonl:1: needs a string \"completion\""},
		{"archive:/nonexistent/bank",
		 "archive: bank path '/nonexistent/bank' is not a folder"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ka_err e = {{0}};
		struct model *m = model_open(cases[i][0], NULL, &e);
		if (m)
			printf("# spec '%s' opened\n", cases[i][0]);
		CHECK(m == NULL);
		CHECK(contains(e.msg, cases[i][1]));
		CHECK(strchr(e.msg, '\n') == NULL);
	}
	/* Bad parameters. */
	struct model_params p;
	model_params_default(&p);
	p.temperature = 3;
	struct ka_err e;
	CHECK(model_open("cmd:cat", &p, &e) == NULL);
	CHECK(contains(e.msg, "temperature 3 is outside [0, 2]"));
	model_params_default(&p);
	p.concurrency = 0;
	CHECK(model_open("cmd:cat", &p, &e) == NULL);
	CHECK(contains(e.msg, "concurrency 0 is outside [1, 1024]"));
}

static void test_price_table(void)
{
	static const struct {
		const char *model;
		double in, out;
	} cases[] = {
		{"gpt-4o", 2.50, 10.00},
		{"gpt-4o-2024-08-06", 2.50, 10.00},
		{"gpt-4o-mini", 0.15, 0.60},
		{"claude-3-5-sonnet-20241022", 3.00, 15.00},
		{"claude-opus-4-5-20251101", 5.00, 25.00},
		{"claude-opus-4-1-20250805", 15.00, 75.00},
		{"llama-3.1-8b-instruct", -1, -1},
		{"my-o1-clone", -1, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char spec[128];
		snprintf(spec, sizeof spec, "openai:%s@http://127.0.0.1:9/v1", cases[i].model);
		struct ka_err e;
		struct model *m = model_open(spec, NULL, &e);
		CHECK(m != NULL);
		double in, out;
		int priced = model_price(m, &in, &out);
		model_close(m);
		if (cases[i].in < 0) {
			CHECK(!priced);
		} else {
			CHECK(priced);
			CHECK(in == cases[i].in && out == cases[i].out);
		}
	}
	/* A Bedrock model ID names its price by the stem. */
	setenv("AWS_ACCESS_KEY_ID", TEST_AK, 1);
	setenv("AWS_SECRET_ACCESS_KEY", TEST_SK, 1);
	struct model *m =
		model_open("bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0", NULL, NULL);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK(m != NULL);
	double in, out;
	CHECK(model_price(m, &in, &out) == 1 && in == 3.0 && out == 15.0);
	model_close(m);
}

static void test_prices_file(void)
{
	struct model_params p;
	model_params_default(&p);
	p.prices_file = "tests/data/model/prices.json";
	static const struct {
		const char *spec;
		double in, out;
	} cases[] = {
		{"openai:gpt-4o@http://127.0.0.1:9/v1", 100, 200}, /* file beats built-in */
		{"openai:my-local-model@http://127.0.0.1:9/v1", 1, 2},
		{"openai:gpt-4o-mini@http://127.0.0.1:9/v1", 0.15, 0.60}, /* built-in, longer */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct model *m = model_open(cases[i].spec, &p, NULL);
		CHECK(m != NULL);
		double in, out;
		CHECK(model_price(m, &in, &out) == 1);
		CHECK(in == cases[i].in && out == cases[i].out);
		model_close(m);
	}
	/* Through the environment, and a broken file. */
	setenv("KA_PRICES", "tests/data/model/prices.json", 1);
	struct model *m = model_open("openai:my-local-model@http://127.0.0.1:9/v1", NULL, NULL);
	CHECK(m != NULL && model_price(m, NULL, NULL) == 1);
	model_close(m);
	setenv("KA_PRICES", "tests/data/model/replay.jsonl", 1);
	struct ka_err e;
	CHECK(model_open("openai:x@http://127.0.0.1:9/v1", NULL, &e) == NULL);
	CHECK(contains(e.msg, "model: prices file tests/data/model/replay.jsonl"));
	unsetenv("KA_PRICES");
}

/* ---- HTTP backends ----------------------------------------------------------- */

static void test_openai_basic(void)
{
	char *spec = spec_at("openai:gpt-4o@http://127.0.0.1:%d/v1");
	struct model_params p = fast_params();
	p.seed = 40;
	struct model *m = model_open(spec, &p, NULL);
	CHECK(m != NULL);
	CHECK_STR(model_backend_name(m), "openai");
	struct model_request q = {
		.task = "t", .sample = 2, .system = "sys", .prompt = "hello", .lang = "cuda"};
	struct model_reply r;
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok);
	CHECK(r.seed == 42);
	CHECK(contains(r.text, "model=gpt-4o seed=42"));
	CHECK(contains(r.text, "\"max_tokens\": 8192"));
	CHECK(contains(r.text, "system=3 prompt=hello"));
	CHECK_STR(r.code, "__global__ void k(float *x) { x[0] = 42; }\n");
	CHECK(r.in_tokens == 11 && r.out_tokens == 7);
	CHECK(fabs(r.cost_usd - (11 * 2.5 + 7 * 10.0) / 1e6) < 1e-12);
	CHECK(r.http_status == 200 && r.attempts == 1 && !r.cached);
	CHECK_STR(r.finish, "stop");
	model_reply_free(&r);
	struct model_stats st;
	model_get_stats(m, &st);
	CHECK(st.requests == 1 && st.attempts == 1 && st.in_tokens == 11 && st.failed == 0);
	model_close(m);
	free(spec);
}

static void test_anthropic_think(void)
{
	char *spec = spec_at("anthropic:claude-3-5-sonnet-20241022@http://127.0.0.1:%d");
	struct model *m = model_open(spec, NULL, NULL);
	CHECK(m != NULL);
	struct model_request q = {.task = "t", .prompt = "[[fixture:think]]", .lang = "cuda"};
	struct model_reply r;
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok);
	CHECK_STR(r.code, "__global__ void final_k() {}\n");
	CHECK(r.in_tokens == 1000 && r.out_tokens == 2000);
	CHECK(fabs(r.cost_usd - 0.033) < 1e-12);
	CHECK_STR(r.finish, "end_turn");
	model_reply_free(&r);
	model_close(m);
	free(spec);
}

static struct model_reply bedrock_once(const char *spec, int *opened, char *err)
{
	struct model_reply r;
	memset(&r, 0, sizeof r);
	struct ka_err e = {{0}};
	struct model_params p = fast_params();
	struct model *m = model_open(spec, &p, &e);
	*opened = m != NULL;
	if (err)
		snprintf(err, KA_ERRLEN, "%s", e.msg);
	if (!m)
		return r;
	struct model_request q = {
		.task = "t", .system = "be brief", .prompt = "hi", .lang = "cuda"};
	model_complete(m, &q, &r);
	model_close(m);
	return r;
}

static void clear_aws_env(void)
{
	static const char *vars[] = {
		"AWS_ACCESS_KEY_ID",  "AWS_SECRET_ACCESS_KEY",	     "AWS_SESSION_TOKEN",
		"AWS_PROFILE",	      "AWS_DEFAULT_PROFILE",	     "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
}

/* Bedrock with keys from the environment, a model ID with a colon: the
 * server recomputes the signature over the double-encoded path. */
static void test_bedrock_env(void)
{
	clear_aws_env();
	char *ep = spec_at("http://127.0.0.1:%d");
	setenv("KA_BEDROCK_ENDPOINT", ep, 1);
	setenv("AWS_ACCESS_KEY_ID", TEST_AK, 1);
	setenv("AWS_SECRET_ACCESS_KEY", TEST_SK, 1);
	int opened;
	struct model_reply r = bedrock_once("bedrock:" COLON_ID "@us-east-1", &opened, NULL);
	CHECK(opened);
	if (!r.ok)
		printf("# %s\n", r.error);
	CHECK(r.ok);
	CHECK(contains(r.text, "model=" COLON_ID " "));
	CHECK(contains(r.text, "\"maxTokens\": 8192"));
	CHECK(contains(r.text, "system=8 prompt=hi"));
	CHECK_STR(r.code, "__global__ void k(float *x) { x[0] = 0; }\n");
	CHECK(fabs(r.cost_usd - (11 * 3.0 + 7 * 15.0) / 1e6) < 1e-12);
	model_reply_free(&r);
	/* A wrong secret: 403 from the server's own check, not retried. */
	setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
	r = bedrock_once("bedrock:" COLON_ID, &opened, NULL);
	CHECK(opened && !r.ok);
	CHECK(r.http_status == 403 && r.attempts == 1);
	CHECK(contains(r.error, "bedrock: HTTP 403: The request signature we calculated does not "
				"match"));
	model_reply_free(&r);
	clear_aws_env();
	free(ep);
}

static void test_bedrock_profiles(void)
{
	clear_aws_env();
	char *ep = spec_at("http://127.0.0.1:%d");
	setenv("KA_BEDROCK_ENDPOINT", ep, 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "tests/data/model/aws/credentials", 1);
	setenv("AWS_CONFIG_FILE", "tests/data/model/aws/config", 1);
	int opened;
	char err[KA_ERRLEN];
	/* Static keys of a named profile. */
	setenv("AWS_PROFILE", "katest", 1);
	struct model_reply r = bedrock_once("bedrock:" COLON_ID, &opened, err);
	CHECK(opened && r.ok);
	model_reply_free(&r);
	/* The default profile holds wrong keys: the server refuses them. */
	unsetenv("AWS_PROFILE");
	r = bedrock_once("bedrock:" COLON_ID, &opened, err);
	CHECK(opened && !r.ok && r.http_status == 403);
	CHECK(contains(r.error, "unknown access key AKIDWRONG"));
	model_reply_free(&r);
	/* credential_process with a session token (the server requires it). */
	setenv("AWS_PROFILE", "kaproc", 1);
	r = bedrock_once("bedrock:amazon.nova-pro-v1:0", &opened, err);
	if (!opened)
		printf("# %s\n", err);
	CHECK(opened && r.ok);
	model_reply_free(&r);
	setenv("AWS_PROFILE", "kabadproc", 1);
	r = bedrock_once("bedrock:amazon.nova-pro-v1:0", &opened, err);
	CHECK(!opened);
	CHECK(contains(err, "bedrock: credential_process 'sh -c 'echo no credentials here >&2; "
			    "exit 3'' failed (status 3): no credentials here"));
	setenv("AWS_PROFILE", "nosuchprofile", 1);
	r = bedrock_once("bedrock:amazon.nova-pro-v1:0", &opened, err);
	CHECK(!opened);
	CHECK(contains(err, "bedrock: AWS profile 'nosuchprofile' not found"));
	clear_aws_env();
	free(ep);
}

/* 64 requests in flight at once: the server counts them. */
static void test_concurrency_64(void)
{
	char *spec = spec_at("openai:gpt-4o@http://127.0.0.1:%d/v1");
	struct model_params p = fast_params();
	p.concurrency = 64;
	p.seed = 1000;
	struct model *m = model_open(spec, &p, NULL);
	CHECK(m != NULL);
	struct model_request q[64];
	for (int i = 0; i < 64; i++)
		q[i] = (struct model_request){
			.task = "t", .sample = i, .prompt = "[[fixture:slow]]", .lang = "cuda"};
	server_reset();
	double t0 = util_now();
	struct batch *b = run(m, q, 64);
	double wall = util_now() - t0;
	CHECK(b->calls == 64);
	for (int i = 0; i < 64; i++) {
		char want[64];
		snprintf(want, sizeof want, "slow seed=%d\n", 1000 + i);
		CHECK(b->r[i].ok);
		CHECK(contains(b->r[i].text, want));
		CHECK_STR(b->r[i].code, "S\n");
	}
	long long maxc = server_stat("max_concurrent"), nreq = server_stat("requests");
	printf("# 64 requests of 1 s each: %.2f s wall, %lld at once on the server\n", wall, maxc);
	CHECK(nreq == 64);
	CHECK(maxc == 64);
	CHECK(wall < 8.0); /* one at a time would take 64 s */
	batch_free(b);
	model_close(m);
	free(spec);
}

static void test_cache(void)
{
	char *spec = spec_at("openai:gpt-4o@http://127.0.0.1:%d/v1");
	char cache[300];
	snprintf(cache, sizeof cache, "%s/cache", tmpdir);
	struct model_params p = fast_params();
	p.cache_dir = cache;
	struct model_request q[8];
	for (int i = 0; i < 8; i++)
		q[i] = (struct model_request){
			.task = "t", .sample = i, .prompt = "cache me", .lang = "cuda"};
	char first[8][512];
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 2)
			p.temperature = 0.2; /* other parameters: other keys */
		struct model *m = model_open(spec, &p, NULL);
		CHECK(m != NULL);
		server_reset();
		struct batch *b = run(m, q, 8);
		CHECK(b->calls == 8);
		long long nreq = server_stat("requests");
		CHECK(nreq == (pass == 1 ? 0 : 8));
		for (int i = 0; i < 8; i++) {
			CHECK(b->r[i].ok);
			CHECK(b->r[i].cached == (pass == 1));
			CHECK(b->r[i].in_tokens == 11 && b->r[i].out_tokens == 7);
			CHECK(b->r[i].code != NULL);
			if (pass == 0)
				snprintf(first[i], sizeof first[i], "%s", b->r[i].text);
			if (pass == 1)
				CHECK_STR(b->r[i].text, first[i]);
		}
		struct model_stats st;
		model_get_stats(m, &st);
		CHECK(st.cached == (pass == 1 ? 8 : 0));
		CHECK(st.attempts == (pass == 1 ? 0 : 8));
		batch_free(b);
		model_close(m);
	}
	free(spec);
}

static void test_retries(void)
{
	char *spec = spec_at("openai:gpt-4o@http://127.0.0.1:%d/v1");
	struct model_params p = fast_params();
	struct model *m = model_open(spec, &p, NULL);
	CHECK(m != NULL);
	/* 429 with Retry-After: 1, then 200. */
	struct model_request q = {.task = "t", .prompt = "[[fixture:retry_429]]"};
	struct model_reply r;
	double t0 = util_now();
	CHECK(model_complete(m, &q, &r) == 0);
	double wall = util_now() - t0;
	CHECK(r.ok && r.attempts == 2 && r.http_status == 200);
	CHECK(r.in_tokens == 100 && r.out_tokens == 50);
	CHECK(wall >= 0.95 && wall < 5); /* waited the Retry-After second */
	model_reply_free(&r);
	/* 503, 502, then 200, with backoff. */
	q.prompt = "[[fixture:retry_503]]";
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok && r.attempts == 3);
	CHECK_STR(r.text, "ok after 503 and 502");
	CHECK(r.code == NULL);
	model_reply_free(&r);
	struct model_stats st;
	model_get_stats(m, &st);
	CHECK(st.attempts == 5 && st.retries == 3 && st.failed == 0);
	model_close(m);
	/* Retries run out. */
	p.max_retries = 2;
	m = model_open(spec, &p, NULL);
	q.prompt = "[[fixture:always_500]]";
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(!r.ok && r.attempts == 3 && r.http_status == 500);
	CHECK(contains(r.error, "openai: HTTP 500: internal boom (3 attempts)"));
	model_reply_free(&r);
	model_close(m);
	free(spec);
}

/* One batch with bad replies among good ones: each is recorded, the rest go
 * on. */
static void test_bad_replies(void)
{
	char *spec = spec_at("anthropic:claude-3-5-haiku-20241022@http://127.0.0.1:%d");
	struct model_params p = fast_params();
	struct model *m = model_open(spec, &p, NULL);
	CHECK(m != NULL);
	static const struct {
		const char *prompt;
		int ok;
		const char *err;
		int attempts;
	} cases[] = {
		{"fine", 1, NULL, 1},
		{"[[fixture:not_json]]", 0, "anthropic: reply is not JSON", 1},
		{"[[fixture:truncated]]", 0, "anthropic: reply is not JSON", 1},
		/* over the cap: the sample's outcome (no code, the evidence), not a
		 * failure retried on every start */
		{"[[fixture:huge]]", 1, "anthropic: reply over the cap of 4194304 bytes", 1},
		{"[[fixture:bad_request]]", 0, "anthropic: HTTP 400: max_tokens: 999999 > 8192", 1},
		{"bad \xff\xfe bytes", 0, "anthropic: the prompt is not valid UTF-8", 0},
		{"also fine", 1, NULL, 1},
	};
	enum { N = sizeof cases / sizeof cases[0] };
	struct model_request q[N];
	for (int i = 0; i < N; i++)
		q[i] = (struct model_request){.task = "t", .sample = i, .prompt = cases[i].prompt};
	struct batch *b = run(m, q, N);
	CHECK(b->calls == N);
	for (int i = 0; i < N; i++) {
		CHECK(b->r[i].ok == cases[i].ok);
		if (!cases[i].ok) {
			CHECK(contains(b->r[i].error, cases[i].err));
			CHECK(b->r[i].text == NULL && b->r[i].code == NULL);
		} else if (cases[i].err) {
			CHECK(contains(b->r[i].error, cases[i].err));
			CHECK(b->r[i].code == NULL && model_reply_marked(&b->r[i]));
			CHECK_STR(b->r[i].finish, MODEL_FINISH_OVER_CAP);
		}
		CHECK(b->r[i].attempts == cases[i].attempts);
	}
	struct model_stats st;
	model_get_stats(m, &st);
	CHECK(st.requests == N && st.failed == 4 && st.attempts == 6);
	batch_free(b);
	model_close(m);
	free(spec);
}

static void test_timeout_and_unreachable(void)
{
	char *spec = spec_at("openai:gpt-4o@http://127.0.0.1:%d/v1");
	struct model_params p = fast_params();
	p.timeout_s = 0.5;
	p.max_retries = 1;
	struct model *m = model_open(spec, &p, NULL);
	CHECK(m != NULL);
	struct model_request q = {.task = "t", .prompt = "[[fixture:very_slow]]"};
	struct model_reply r;
	double t0 = util_now();
	CHECK(model_complete(m, &q, &r) == 0);
	double wall = util_now() - t0;
	CHECK(!r.ok && r.attempts == 2);
	CHECK(contains(r.error, "openai: no reply within 0.5 s from http://127.0.0.1:"));
	CHECK(wall > 0.9 && wall < 3.5);
	model_reply_free(&r);
	model_close(m);
	free(spec);

	/* A port nothing listens on. */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	bind(s, (struct sockaddr *)&a, sizeof a);
	getsockname(s, (struct sockaddr *)&a, &al);
	close(s);
	char spec2[128];
	snprintf(spec2, sizeof spec2, "openai:gpt-4o@http://127.0.0.1:%d/v1", ntohs(a.sin_port));
	p = fast_params();
	p.max_retries = 2;
	m = model_open(spec2, &p, NULL);
	CHECK(m != NULL);
	q.prompt = "anyone?";
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(!r.ok && r.attempts == 3 && r.http_status == 0);
	CHECK(contains(r.error, "openai: http://127.0.0.1:"));
	CHECK(contains(r.error, "Couldn't connect to server"));
	model_reply_free(&r);
	model_close(m);
}

/* ---- local backends ------------------------------------------------------------ */

static void test_cmd(void)
{
	struct model_params p = fast_params();
	p.seed = 10;
	struct model *m = model_open("cmd:tr a-z A-Z", &p, NULL);
	CHECK(m != NULL);
	struct model_request q = {.task = "vec_add", .sample = 3, .system = "SYS", .prompt = "abc"};
	struct model_reply r;
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok);
	CHECK_STR(r.text, "ABC");
	model_reply_free(&r);
	model_close(m);

	m = model_open(
		"cmd:echo $KA_MODEL_TASK $KA_MODEL_SAMPLE $KA_MODEL_SEED $KA_MODEL_MAX_TOKENS;"
		" cat \"$KA_MODEL_SYSTEM_FILE\"",
		&p, NULL);
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok);
	CHECK_STR(r.text, "vec_add 3 13 8192\nSYS");
	model_reply_free(&r);
	model_close(m);

	m = model_open("cmd:echo oops >&2; exit 3", &p, NULL);
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(!r.ok);
	CHECK(contains(r.error, "cmd: 'echo oops >&2; exit 3' exited with status 3: oops"));
	model_reply_free(&r);
	model_close(m);

	p.timeout_s = 0.3;
	m = model_open("cmd:sleep 5", &p, NULL);
	double t0 = util_now();
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(!r.ok && util_now() - t0 < 2);
	CHECK(contains(r.error, "cmd: no output within 0.3 s (killed)"));
	model_reply_free(&r);
	model_close(m);

	/* Exit 75 asks for a retry. */
	p = fast_params();
	char cmd[600];
	snprintf(cmd, sizeof cmd,
		 "cmd:f=%s/n; n=$(cat $f 2>/dev/null || echo 0); echo $((n+1)) > $f; "
		 "[ $n -ge 1 ] && printf done || exit 75",
		 tmpdir);
	m = model_open(cmd, &p, NULL);
	CHECK(model_complete(m, &q, &r) == 0);
	CHECK(r.ok && r.attempts == 2);
	CHECK_STR(r.text, "done");
	model_reply_free(&r);
	model_close(m);

	/* Commands run concurrently: 8 of 0.5 s with 8 in flight. */
	p.concurrency = 8;
	m = model_open("cmd:sleep 0.5; echo $KA_MODEL_SAMPLE", &p, NULL);
	struct model_request qs[8];
	for (int i = 0; i < 8; i++)
		qs[i] = (struct model_request){.task = "t", .sample = i, .prompt = ""};
	t0 = util_now();
	struct batch *b = run(m, qs, 8);
	double wall = util_now() - t0;
	CHECK(b->calls == 8);
	for (int i = 0; i < 8; i++) {
		char want[16];
		snprintf(want, sizeof want, "%d\n", i);
		CHECK_STR(b->r[i].text, want);
	}
	CHECK(wall < 2.5);
	batch_free(b);
	model_close(m);
}

static void test_replay(void)
{
	struct model *m = model_open("replay:tests/data/model/replay.jsonl", NULL, NULL);
	CHECK(m != NULL);
	struct model_request q[] = {
		{.task = "vec_add", .sample = 0, .prompt = "p", .lang = "cuda"},
		{.task = "vec_add", .sample = 1, .prompt = "p", .lang = "cuda"},
		{.task = "vec_add", .sample = 2, .prompt = "p", .lang = "cuda"},
		{.task = "softmax", .sample = 0, .prompt = "p", .lang = "opencl"},
	};
	struct batch *b = run(m, q, 4);
	CHECK(b->calls == 4);
	CHECK(b->r[0].ok);
	CHECK_STR(b->r[0].code, "zero\n");
	CHECK(b->r[0].in_tokens == 5 && b->r[0].out_tokens == 3);
	CHECK(b->r[1].ok && b->r[1].code == NULL);
	CHECK_STR(b->r[1].text, "sample one, no code");
	CHECK(!b->r[2].ok);
	CHECK(contains(b->r[2].error, "replay: no completion for task 'vec_add' sample 2 in "
				      "tests/data/model/replay.jsonl"));
	CHECK_STR(b->r[3].code, "softmax\n");
	batch_free(b);
	model_close(m);
}

static void test_archive(void)
{
	struct model *m = model_open("archive:tests/data/model/bank/", NULL, NULL);
	CHECK(m != NULL);
	struct model_request q[] = {
		{.task = "vec_add", .sample = 0, .prompt = "p", .lang = "cuda"},
		{.task = "vec_add", .sample = 4, .prompt = "p", .lang = "opencl"},
		{.task = "softmax", .sample = 0, .prompt = "p", .lang = "cuda"},
		{.task = "nope", .sample = 0, .prompt = "p", .lang = "cuda"},
		{.task = "../aws", .sample = 0, .prompt = "p", .lang = "cuda"},
	};
	struct batch *b = run(m, q, 5);
	CHECK(b->calls == 5);
	char *cu = NULL, *cl = NULL;
	CHECK(util_read_file("tests/data/model/bank/L1/vec_add/solutions/cuda.cu", 1 << 20, &cu,
			     NULL, NULL) == 0);
	CHECK(util_read_file("tests/data/model/bank/L1/vec_add/solutions/opencl.c", 1 << 20, &cl,
			     NULL, NULL) == 0);
	CHECK(b->r[0].ok);
	CHECK_STR(b->r[0].code, cu);
	CHECK(contains(b->r[0].text, "```cuda\n// vec_add"));
	CHECK(b->r[1].ok);
	CHECK_STR(b->r[1].code, cl);
	CHECK(!b->r[2].ok);
	CHECK(contains(b->r[2].error, "archive: task 'softmax' has no cuda solution"));
	CHECK(!b->r[3].ok);
	CHECK(contains(b->r[3].error, "archive: no task 'nope' under tests/data/model/bank"));
	CHECK(!b->r[4].ok);
	CHECK(contains(b->r[4].error, "archive: bad task name '../aws'"));
	free(cu);
	free(cl);
	batch_free(b);
	model_close(m);
}

int main(void)
{
	/* No real keys or profiles may reach the fake server or the tests. */
	static const char *vars[] = {"OPENAI_API_KEY",	     "KA_OPENAI_API_KEY",
				     "OPENAI_BASE_URL",	     "ANTHROPIC_API_KEY",
				     "KA_ANTHROPIC_API_KEY", "KA_PRICES",
				     "KA_BEDROCK_ENDPOINT"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	clear_aws_env();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ka-test-model-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	setenv("HOME", tmpdir, 1);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	RUN(test_spec_errors);
	RUN(test_price_table);
	RUN(test_prices_file);
	RUN(test_cmd);
	RUN(test_replay);
	RUN(test_archive);
	if (server_start() != 0) {
		printf("SKIP test_model_http: tools/fakeserver.py did not start (python3 "
		       "missing?)\n");
	} else {
		RUN(test_openai_basic);
		RUN(test_anthropic_think);
		RUN(test_bedrock_env);
		RUN(test_bedrock_profiles);
		RUN(test_concurrency_64);
		RUN(test_cache);
		RUN(test_retries);
		RUN(test_bad_replies);
		RUN(test_timeout_and_unreachable);
		server_stop();
	}
	util_rmtree(tmpdir);
	TEST_EXIT();
}
