/* cmd_model.c: `ka model test SPEC`: send one prompt to a model backend and
 * print the reply, tokens, latency and cost. For checking a spec and its
 * credentials before a long run; the tracks call model.h directly. */
#include <getopt.h>
#include <jansson.h>
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

static int model_test(int argc, char **argv)
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
	struct model_params p;
	model_params_default(&p);
	const char *prompt = default_prompt, *prompt_file = NULL, *system = NULL;
	const char *task = "model-test", *lang = NULL;
	int64_t sample = 0, v;
	int json = 0;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":v", opts, NULL)) != -1) {
		switch (c) {
		case 'p': prompt = optarg; break;
		case 'P': prompt_file = optarg; break;
		case 's': system = optarg; break;
		case 'k': task = optarg; break;
		case 'l':
			if (strcmp(optarg, "cuda") && strcmp(optarg, "opencl") &&
			    strcmp(optarg, "c"))
				return cli_usage_error("model test",
						       "--lang must be cuda, opencl or c, not '%s'",
						       optarg);
			lang = optarg;
			break;
		case 'n':
			if (cli_parse_i64(optarg, 0, 1000000, &sample) != 0)
				return cli_usage_error("model test",
						       "--sample needs an integer >= 0, not '%s'",
						       optarg);
			break;
		case 'm':
			if (cli_parse_i64(optarg, 1, 10000000, &v) != 0)
				return cli_usage_error(
					"model test",
					"--max-tokens needs a positive integer, not '%s'", optarg);
			p.max_tokens = (int)v;
			break;
		case 't':
			if (cli_parse_double(optarg, &p.temperature) != 0)
				return cli_usage_error("model test",
						       "--temperature needs a number, not '%s'",
						       optarg);
			break;
		case 'T':
			if (cli_parse_double(optarg, &p.top_p) != 0)
				return cli_usage_error("model test",
						       "--top-p needs a number, not '%s'", optarg);
			break;
		case 'S':
			if (cli_parse_i64(optarg, INT64_MIN / 2, INT64_MAX / 2, &p.seed) != 0)
				return cli_usage_error("model test",
						       "--seed needs an integer, not '%s'", optarg);
			break;
		case 'o':
			if (cli_parse_double(optarg, &p.timeout_s) != 0 || !(p.timeout_s > 0))
				return cli_usage_error("model test",
						       "--timeout needs seconds > 0, not '%s'",
						       optarg);
			break;
		case 'r':
			if (cli_parse_i64(optarg, 0, 100, &v) != 0)
				return cli_usage_error(
					"model test",
					"--retries needs an integer in [0, 100], not '%s'", optarg);
			p.max_retries = (int)v;
			break;
		case 'c': p.cache_dir = optarg; break;
		case 'j': json = 1; break;
		case 'v': p.verbose = 1; break;
		case 'h': usage(stdout); return KA_EXIT_OK;
		default: return cli_bad_option("model test", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("model test", "missing SPEC (e.g. openai:gpt-4o)");
	if (optind + 1 < argc)
		return cli_usage_error("model test", "unexpected argument '%s'", argv[optind + 1]);
	const char *spec = argv[optind];
	char *prompt_buf = NULL;
	if (prompt_file) {
		struct ka_err e;
		size_t plen = 0;
		if (util_read_file(prompt_file, CMD_MODEL_PROMPT_CAP, &prompt_buf, &plen, &e) !=
		    0) {
			fprintf(stderr, "ka model test: %s\n", e.msg);
			return KA_EXIT_USAGE;
		}
		if (plen == 0) {
			fprintf(stderr, "ka model test: %s: the prompt file is empty\n",
				prompt_file);
			free(prompt_buf);
			return KA_EXIT_USAGE;
		}
		prompt = prompt_buf;
	}
	struct ka_err e = {{0}};
	struct model *m = model_open(spec, &p, &e);
	if (!m) {
		fprintf(stderr, "ka model test: %s\n", e.msg);
		free(prompt_buf);
		return KA_EXIT_USAGE;
	}
	struct model_request req = {.task = task,
				    .sample = (int)sample,
				    .system = system,
				    .prompt = prompt,
				    .lang = lang};
	struct model_reply rep;
	if (model_complete(m, &req, &rep) != 0) {
		fprintf(stderr, "ka model test: %s: the backend cannot work\n", spec);
		model_close(m);
		free(prompt_buf);
		return KA_EXIT_FAIL;
	}
	double pin = 0, pout = 0;
	int priced = model_price(m, &pin, &pout);
	if (json) {
		json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:f, s:i, s:b, s:i}", "spec",
				      spec, "backend", model_backend_name(m), "ok", rep.ok, "seed",
				      (json_int_t)rep.seed, "in_tokens", (json_int_t)rep.in_tokens,
				      "out_tokens", (json_int_t)rep.out_tokens, "latency_s",
				      rep.latency_s, "attempts", rep.attempts, "cached", rep.cached,
				      "http_status", rep.http_status);
		json_object_set_new(o, "cost_usd", priced ? json_real(rep.cost_usd) : json_null());
		json_object_set_new(o, "text", rep.text ? json_string(rep.text) : json_null());
		json_object_set_new(o, "code", rep.code ? json_string(rep.code) : json_null());
		json_object_set_new(o, "finish", json_string(rep.finish));
		json_object_set_new(o, "error", rep.ok ? json_null() : json_string(rep.error));
		char *s = json_dumps(o, JSON_INDENT(2));
		puts(s ? s : "{}");
		free(s);
		json_decref(o);
	} else {
		if (rep.ok) {
			fputs(rep.text, stdout);
			if (!*rep.text || rep.text[strlen(rep.text) - 1] != '\n')
				putchar('\n');
			puts("----");
		} else {
			printf("failed: %s\n", rep.error);
		}
		printf("model:    %s (backend %s)\n", spec, model_backend_name(m));
		printf("tokens:   in %lld, out %lld\n", (long long)rep.in_tokens,
		       (long long)rep.out_tokens);
		if (rep.finish[0])
			printf("finish:   %s\n", rep.finish);
		printf("latency:  %.3f s (%d attempt%s%s", rep.latency_s, rep.attempts,
		       rep.attempts == 1 ? "" : "s", rep.cached ? ", cached" : "");
		if (rep.http_status)
			printf(", HTTP %d", rep.http_status);
		printf(")\n");
		if (priced)
			printf("cost:     $%.6f (at $%.3f in / $%.3f out per million tokens)\n",
			       rep.cost_usd, pin, pout);
		else
			printf("cost:     unknown (model not in the price table; see KA_PRICES)\n");
		if (rep.ok) {
			if (rep.code) {
				int lines = 0;
				for (const char *q = rep.code; *q; q++)
					lines += *q == '\n';
				printf("code:     %d lines extracted%s%s\n", lines,
				       lang ? " for " : "", lang ? lang : "");
			} else {
				printf("code:     none (no_code)\n");
			}
		}
	}
	int rc = rep.ok ? KA_EXIT_OK : KA_EXIT_FAIL;
	if (!rep.ok && !json)
		fprintf(stderr, "ka model test: %s\n", rep.error);
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
