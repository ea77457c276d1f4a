/* cmd_model.c: `ka model test SPEC`: send one prompt to a model backend and
 * print the reply, tokens, latency and cost. For checking a spec and its
 * credentials before a long run; the tracks call model.h directly. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"
#include "util.h"

#define CMD_MODEL_PROMPT_CAP ((size_t)4 << 20)

static const char default_prompt[] =
	"Write a CUDA kernel that adds two float vectors of length n. Reply with one ```cuda "
	"code block.";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ka model test SPEC [options]\n"
		"\n"
		"Send one prompt to a model and print the reply, tokens, latency and cost.\n"
		"SPEC is one of (docs/models.md):\n"
		"  openai:<model>[@<base-url>]     OpenAI-compatible chat (OPENAI_API_KEY)\n"
		"  anthropic:<model>[@<base-url>]  Anthropic Messages (ANTHROPIC_API_KEY)\n"
		"  bedrock:<model-id>[@<region>]   AWS Bedrock Converse (AWS_PROFILE, env keys)\n"
		"  cmd:<shell command>             prompt on stdin, completion on stdout\n"
		"  replay:<file.jsonl>             recorded completions by task and sample\n"
		"  archive:<bank-path>             the bank's verified solutions\n"
		"\n"
		"options:\n"
		"  --prompt TEXT         the prompt (default: a small CUDA request)\n"
		"  --prompt-file FILE    read the prompt from FILE\n"
		"  --system TEXT         system prompt\n"
		"  --task NAME           task name (replay, archive; default model-test)\n"
		"  --sample N            sample index (default 0)\n"
		"  --lang L              extract code for cuda, opencl or c (default any)\n"
		"  --max-tokens N        default 8192\n"
		"  --temperature T       default 0.7\n"
		"  --top-p P             default 1.0\n"
		"  --seed N              base seed (default 0)\n"
		"  --timeout S           seconds per attempt (default 600)\n"
		"  --retries N           retries on 429, 5xx, connection errors (default 5)\n"
		"  --cache DIR           reply cache folder\n"
		"  --json                print the reply as one JSON object instead\n"
		"  -v, --verbose         report retries on stderr\n"
		"\n"
		"exit: 0 a reply arrived, 1 the request failed, 2 bad usage, spec or "
		"credentials.\n");
}

#define CMD "model test"

/* The command line of one `ka model test`. */
struct model_test_args {
	struct model_params p;
	const char *spec, *prompt, *prompt_file, *system, *task, *lang;
	int64_t sample;
	int json;
	int help; /* --help was given and answered */
};

/* One option (getopt code c, value arg) into a: 0 or the exit code of a
 * usage error, reported. */
static int model_test_option(int c, const char *arg, struct model_test_args *a)
{
	int64_t v = 0;
	int rc = 0;
	switch (c) {
	case 'p': a->prompt = arg; break;
	case 'P': a->prompt_file = arg; break;
	case 's': a->system = arg; break;
	case 'k': a->task = arg; break;
	case 'l':
		if (strcmp(arg, "cuda") && strcmp(arg, "opencl") && strcmp(arg, "c"))
			return cli_usage_error(CMD, "--lang must be cuda, opencl or c, not '%s'",
					       arg);
		a->lang = arg;
		break;
	case 'n': rc = cli_opt_int(CMD, "--sample", arg, 0, 1000000, &a->sample); break;
	case 'm':
		/* The shared parser with this command's own wording, which
		 * tests/e2e/model_cli.sh checks. */
		if (cli_parse_i64(arg, 1, 1000000, &v))
			return cli_usage_error(
				CMD, "--max-tokens needs a positive integer, not '%s'", arg);
		a->p.max_tokens = (int)v;
		break;
	case 't': rc = cli_opt_double(CMD, "--temperature", arg, 0, 2, 0, &a->p.temperature); break;
	case 'T': rc = cli_opt_double(CMD, "--top-p", arg, 0, 1, 0, &a->p.top_p); break;
	case 'S': rc = cli_opt_int(CMD, "--seed", arg, 0, INT64_MAX / 2, &a->p.seed); break;
	case 'o':
		rc = cli_opt_double(CMD, "--timeout", arg, 0, HUGE_VAL, 1, &a->p.timeout_s);
		break;
	case 'r':
		if (!(rc = cli_opt_int(CMD, "--retries", arg, 0, 100, &v)))
			a->p.max_retries = (int)v;
		break;
	case 'c': a->p.cache_dir = arg; break;
	case 'j': a->json = 1; break;
	case 'v': a->p.verbose = 1; break;
	}
	return rc;
}

/* Step 1: the command line into a. 0 (a->help set when --help was
 * answered) or the exit code of a usage error, reported. */
static int model_test_parse(int argc, char **argv, struct model_test_args *a)
{
	static const struct option opts[] = {
		{"prompt", required_argument, 0, 'p'},
		{"prompt-file", required_argument, 0, 'P'},
		{"system", required_argument, 0, 's'},
		{"task", required_argument, 0, 'k'},
		{"sample", required_argument, 0, 'n'},
		{"lang", required_argument, 0, 'l'},
		{"max-tokens", required_argument, 0, 'm'},
		{"temperature", required_argument, 0, 't'},
		{"top-p", required_argument, 0, 'T'},
		{"seed", required_argument, 0, 'S'},
		{"timeout", required_argument, 0, 'o'},
		{"retries", required_argument, 0, 'r'},
		{"cache", required_argument, 0, 'c'},
		{"json", no_argument, 0, 'j'},
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	*a = (struct model_test_args){.prompt = default_prompt, .task = "model-test"};
	model_params_default(&a->p);
	optind = 1;
	opterr = 0;
	int c, rc;
	while ((c = getopt_long(argc, argv, ":v", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			a->help = 1;
			return 0;
		}
		if (c == '?' || c == ':')
			return cli_bad_option(CMD, c, argv);
		if ((rc = model_test_option(c, optarg, a)))
			return rc;
	}
	if (optind >= argc)
		return cli_usage_error(CMD, "missing SPEC (e.g. openai:gpt-4o)");
	if (optind + 1 < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
	a->spec = argv[optind];
	return 0;
}

/* The reply as one JSON object on stdout. */
static void print_json(const struct model_test_args *a, struct model *m,
		       const struct model_reply *rep, int priced)
{
	json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:f, s:i, s:b, s:i}", "spec", a->spec,
			      "backend", model_backend_name(m), "ok", rep->ok, "seed",
			      (json_int_t)rep->seed, "in_tokens", (json_int_t)rep->in_tokens,
			      "out_tokens", (json_int_t)rep->out_tokens, "latency_s",
			      rep->latency_s, "attempts", rep->attempts, "cached", rep->cached,
			      "http_status", rep->http_status);
	json_object_set_new(o, "cost_usd", priced ? json_real(rep->cost_usd) : json_null());
	json_object_set_new(o, "text", rep->text ? json_string(rep->text) : json_null());
	json_object_set_new(o, "code", rep->code ? json_string(rep->code) : json_null());
	json_object_set_new(o, "finish", json_string(rep->finish));
	json_object_set_new(o, "error", rep->ok ? json_null() : json_string(rep->error));
	char *s = json_dumps(o, JSON_INDENT(2));
	puts(s ? s : "{}");
	free(s);
	json_decref(o);
}

/* The reply, then one line each for tokens, latency, cost and code. */
static void print_text(const struct model_test_args *a, struct model *m,
		       const struct model_reply *rep, int priced, double pin, double pout)
{
	if (rep->ok) {
		fputs(rep->text, stdout);
		if (!*rep->text || rep->text[strlen(rep->text) - 1] != '\n')
			putchar('\n');
		puts("----");
	} else {
		printf("failed: %s\n", rep->error);
	}
	printf("model:    %s (backend %s)\n", a->spec, model_backend_name(m));
	printf("tokens:   in %lld, out %lld\n", (long long)rep->in_tokens,
	       (long long)rep->out_tokens);
	if (rep->finish[0])
		printf("finish:   %s\n", rep->finish);
	printf("latency:  %.3f s (%d attempt%s%s", rep->latency_s, rep->attempts,
	       rep->attempts == 1 ? "" : "s", rep->cached ? ", cached" : "");
	if (rep->http_status)
		printf(", HTTP %d", rep->http_status);
	printf(")\n");
	if (priced)
		printf("cost:     $%.6f (at $%.3f in / $%.3f out per million tokens)\n",
		       rep->cost_usd, pin, pout);
	else
		printf("cost:     unknown (model not in the price table; see KA_PRICES)\n");
	if (!rep->ok)
		return;
	if (rep->code) {
		int lines = 0;
		for (const char *q = rep->code; *q; q++)
			lines += *q == '\n';
		printf("code:     %d lines extracted%s%s\n", lines, a->lang ? " for " : "",
		       a->lang ? a->lang : "");
	} else {
		printf("code:     none (no_code)\n");
	}
}

static int model_test(int argc, char **argv)
{
	struct model_test_args a;
	int rc = model_test_parse(argc, argv, &a);
	if (rc || a.help)
		return rc;
	char *prompt_buf = NULL;
	struct model *m = NULL;
	struct model_reply rep;
	int have_reply = 0;
	struct ka_err e = {{0}};
	if (a.prompt_file) {
		size_t plen = 0;
		if (util_read_file(a.prompt_file, CMD_MODEL_PROMPT_CAP, &prompt_buf, &plen, &e)) {
			rc = cli_bad_input(CMD, "%s", e.msg);
			goto out;
		}
		if (plen == 0) {
			rc = cli_bad_input(CMD, "%s: the prompt file is empty", a.prompt_file);
			goto out;
		}
		a.prompt = prompt_buf;
	}
	if (!(m = model_open(a.spec, &a.p, &e))) {
		rc = cli_bad_input(CMD, "%s", e.msg);
		goto out;
	}
	struct model_request req = {.task = a.task,
				    .sample = (int)a.sample,
				    .system = a.system,
				    .prompt = a.prompt,
				    .lang = a.lang};
	if (model_complete(m, &req, &rep) != 0) {
		rc = cli_fail(CMD, "%s: the backend cannot work", a.spec);
		goto out;
	}
	have_reply = 1;
	double pin = 0, pout = 0;
	int priced = model_price(m, &pin, &pout);
	if (a.json)
		print_json(&a, m, &rep, priced);
	else
		print_text(&a, m, &rep, priced, pin, pout);
	rc = rep.ok ? KA_EXIT_OK : KA_EXIT_FAIL;
	if (!rep.ok && !a.json)
		cli_fail(CMD, "%s", rep.error);
out:
	if (have_reply)
		model_reply_free(&rep);
	model_close(m);
	free(prompt_buf);
	return rc;
}

int cmd_model(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("model", "missing subcommand (expected: test)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	if (!strcmp(argv[1], "test"))
		return model_test(argc - 1, argv + 1);
	return cli_usage_error("model", "unknown subcommand '%s' (expected: test)", argv[1]);
}
