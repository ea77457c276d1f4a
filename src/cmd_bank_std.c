/* cmd_bank_std.c: `ka bank standardize`, the command-line face of
 * bank_std.h. Parses and checks options, then runs bank_std_run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank_std.h"
#include "cli.h"

#define CMD "bank standardize"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ka bank standardize --anchor MODEL --scale small|mid|large [--k %d]\n"
		"                           [--band LO,HI] [options] BANK OUT\n\n"
		"Samples the anchor model (a model spec, docs/models.md) k times on every task\n"
		"of BANK through the capability track (the normal sampler and grader, in WORK:\n"
		"the same command continues a killed run), keeps the tasks whose anchor pass\n"
		"rate lies in the band (hard but learnable), scores the anchor's speed against\n"
		"the compiled baseline where one is timed, and writes OUT: a bank folder of the\n"
		"kept tasks (and BANK/lib) with OUT/%s, the anchor's figures per\n"
		"task and over the kept tasks. `ka --track rsi --bank OUT` reads it and its\n"
		"scorecard goes on the standardized board (docs/bank.md).\n\n"
		"options:\n"
		"  --anchor MODEL     the frozen anchor of this scale (required)\n"
		"  --scale S          small (1.5B anchor), mid (7B), large (14B); default small\n"
		"  --k K              samples per task (default %d)\n"
		"  --band LO,HI       pass-rate band kept, inclusive (default per scale:\n"
		"                     small 0.125,0.75; mid 0.125,0.625; large 0.125,0.5)\n"
		"  --work DIR         the anchor's capability run (default OUT.anchor)\n"
		"  --tier T, --target T, --platform P, --prompt FILE, --seed N,\n"
		"  --temperature X, --max-tokens N, --concurrency N, --fresh, --quiet,\n"
		"  --max-seconds S, --min-samples N, --max-samples N, --no-timing\n"
		"                     as `ka --track capability`\n"
		"exit codes: 0 written, 1 the anchor's run did not finish (run the command\n"
		"again) or OUT could not be written, 2 bad usage or bad input.\n",
		BANK_STD_K, BANK_STD_FILE, BANK_STD_K);
}

/* "LO,HI" into o. 0 or the usage error. */
static int parse_band(const char *s, struct bank_std_opts *o)
{
	const char *comma = strchr(s, ',');
	if (!comma || comma == s || !comma[1])
		return cli_usage_error(CMD, "--band: '%s' is not LO,HI", s);
	char lo[64];
	snprintf(lo, sizeof lo, "%.*s", (int)(comma - s), s);
	int rc = cli_opt_double(CMD, "--band LO", lo, 0, 1, 0, &o->lo);
	if (!rc)
		rc = cli_opt_double(CMD, "--band HI", comma + 1, 0, 1, 0, &o->hi);
	if (!rc && o->lo > o->hi)
		rc = cli_usage_error(CMD, "--band: LO %g is above HI %g", o->lo, o->hi);
	o->band_set = 1;
	return rc;
}

/* One option c with value arg into o. 0 or the usage error. */
static int std_option(int c, const char *arg, struct bank_std_opts *o)
{
	int64_t v = 0;
	int rc = 0;
	switch (c) {
	case 'a': o->anchor = arg; break;
	case 'S': o->scale = arg; break;
	case 'B': return parse_band(arg, o);
	case 'w': o->work = arg; break;
	case 't': o->tier = arg; break;
	case 'T': o->target = arg; break;
	case 'P': o->platform = arg; break;
	case 'p': o->prompt = arg; break;
	case 'F': o->fresh = 1; break;
	case 'q': o->quiet = 1; break;
	case 'k':
		if (!(rc = cli_opt_int(CMD, "--k", arg, 1, 1000, &v)))
			o->k = (int)v;
		break;
	case 's':
		if (!(rc = cli_opt_int(CMD, "--seed", arg, 0, INT64_MAX, &v)))
			o->seed = v;
		break;
	case 'x':
		if (!(rc = cli_opt_int(CMD, "--max-tokens", arg, 1, 1000000, &v)))
			o->max_tokens = (int)v;
		break;
	case 'c':
		if (!(rc = cli_opt_int(CMD, "--concurrency", arg, 1, 1024, &v)))
			o->concurrency = (int)v;
		break;
	case 'e': rc = cli_opt_double(CMD, "--temperature", arg, 0, 2, 0, &o->temperature); break;
	default: rc = cli_protocol_option(CMD, c, arg, &o->proto); break;
	}
	return rc;
}

int cmd_bank_standardize(int argc, char **argv)
{
	static const struct option opts[] = {
		{"anchor", required_argument, 0, 'a'},
		{"scale", required_argument, 0, 'S'},
		{"band", required_argument, 0, 'B'},
		{"work", required_argument, 0, 'w'},
		{"k", required_argument, 0, 'k'},
		{"tier", required_argument, 0, 't'},
		{"target", required_argument, 0, 'T'},
		{"platform", required_argument, 0, 'P'},
		{"prompt", required_argument, 0, 'p'},
		{"seed", required_argument, 0, 's'},
		{"max-tokens", required_argument, 0, 'x'},
		{"concurrency", required_argument, 0, 'c'},
		{"temperature", required_argument, 0, 'e'},
		{"fresh", no_argument, 0, 'F'},
		{"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct bank_std_opts o;
	bank_std_opts_default(&o);
	optind = 1;
	opterr = 0;
	int c, rc;
	while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return KA_EXIT_OK;
		}
		if (c == '?' || c == ':')
			return cli_bad_option(CMD, c, argv);
		if ((rc = std_option(c, optarg, &o)))
			return rc;
	}
	if (argc - optind != 2)
		return cli_usage_error(CMD, "needs BANK and OUT (got %d argument%s)", argc - optind,
				       argc - optind == 1 ? "" : "s");
	o.bank = argv[optind];
	o.out = argv[optind + 1];
	if (!o.anchor || !*o.anchor)
		return cli_usage_error(CMD, "--anchor MODEL is required");
	if ((rc = cli_protocol_check(CMD, &o.proto)) || (rc = cli_check_input(CMD, o.bank, 1)) ||
	    (rc = cli_check_outdir(CMD, "OUT", o.out)))
		return rc;
	return bank_std_run(&o);
}
