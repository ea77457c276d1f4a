/* cmd_track.c: `ka --track NAME [options]`, the entrypoint of the tracks
 * (argv[0] is "ka", argv[1] is "--track" or "--track=NAME"). Parses the
 * options of the capability track into struct capability_opts and runs it;
 * names the tracks this version does not have. Runs nothing itself. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "procedure.h"
#include "track.h"
#include "util.h"

#define OPT_GRADERS_PER_GPU 1001 /* a long option without a letter */
#define CMD "--track"

static void usage(FILE *f)
{
	fputs("usage: ka --track capability --api-model SPEC [--tier medium] [options]\n\n"
	      "Track 1, capability: k one-shot samples of every task from a model, each\n"
	      "graded for correctness against the fp64 gold and timed against the eager and\n"
	      "compiled baselines, scored and written to OUT/scorecard.json. Every step is\n"
	      "journaled in OUT/journal.sqlite: killed and started again with the same\n"
	      "arguments, the run continues where it stopped (docs/capability.md).\n\n"
	      "options:\n"
	      "  --api-model SPEC   the model (also --model): openai:NAME[@URL], anthropic:NAME,\n"
	      "                     bedrock:ID[@REGION], cmd:COMMAND, replay:FILE,\n"
	      "                     archive:BANK (docs/models.md)\n"
	      "  --k N              samples per task (default 5)\n"
	      "  --tier T           L1|easy, L2|medium, L3|hard or all (default all)\n"
	      "  --bank PATH        task bank (default: bank/public)\n"
	      "  --split S          public (default) or heldout (needs --bank)\n"
	      "  --target T         cuda, opencl or auto (default auto: cuda when ka-run-cuda\n"
	      "                     is built and a GPU is visible, else opencl)\n"
	      "  --out DIR          output folder (default out)\n"
	      "  --fresh            discard an earlier run in DIR instead of continuing it\n"
	      "  --gpus LIST        CUDA devices to grade on, e.g. 0,1 (default: all visible)\n"
	      "  --graders-per-gpu N  candidates graded at once per GPU, each with its own\n"
	      "                     runner; timed calls still have the GPU to themselves\n"
	      "                     (default: one per 4 cores, 1 to 4, shared by the GPUs)\n"
	      "  --platform SUBSTR  OpenCL platform (default: the first that works)\n"
	      "  --concurrency N    model requests in flight (default 16)\n"
	      "  --seed N           base sampling seed; sample i is sent seed + i (default 0)\n"
	      "  --temperature X    sampling temperature (default 0.7)\n"
	      "  --max-tokens N     reply cap (default 8192)\n"
	      "  --prompt FILE      solver prompt template (default prompts/solver.md)\n"
	      "  --model-kind K     open or closed, for the scorecard (default: guessed)\n"
	      "  --prices FILE      price table for cost accounting\n"
	      "  --max-seconds S    cap of each timing phase (default 60)\n"
	      "  --min-samples N    timing samples per side before stopping (default 20)\n"
	      "  --max-samples N    timing sample cap per side (default 500)\n"
	      "  --no-timing        correctness only (no speedups)\n"
	      "  --quiet            no progress line, only the scorecard path\n"
	      "  --verbose          one line per graded sample, and timing totals\n\n"
	      "tracks: capability, procedure, controls (ka --track procedure --help),\n"
	      "frontier (ka --track frontier --help), rsi (ka --track rsi --help),\n"
	      "harness (ka --track harness --help).\n"
	      "exit codes: 0 done, 1 the run failed or is incomplete (run it again to\n"
	      "continue), 2 bad usage or bad input.\n",
	      f);
}

/* "easy" -> "L1", ...; NULL for "all"; *bad = 1 if unknown. */
static const char *parse_tier(const char *s, int *bad)
{
	*bad = 0;
	if (!strcasecmp(s, "all"))
		return NULL;
	if (!strcasecmp(s, "L1") || !strcasecmp(s, "easy"))
		return "L1";
	if (!strcasecmp(s, "L2") || !strcasecmp(s, "medium"))
		return "L2";
	if (!strcasecmp(s, "L3") || !strcasecmp(s, "hard"))
		return "L3";
	*bad = 1;
	return NULL;
}

/* The getopt rows of the options every round-based track (procedure,
 * frontier, weight RSI, harness) takes: the split (bank, train, held-out),
 * the target and device, the run folder, sampling and output; their codes
 * are those shared_option and parse_track read. */
#define ROUND_TRACK_OPTIONS                                                                        \
	{"bank", required_argument, 0, 'b'}, {"train", required_argument, 0, 'A'},                 \
		{"heldout", required_argument, 0, 'H'}, {"train-pct", required_argument, 0, 'C'},  \
		{"tier", required_argument, 0, 't'}, {"target", required_argument, 0, 'T'},        \
		{"out", required_argument, 0, 'o'}, {"fresh", no_argument, 0, 'F'},                \
		{"gpu", required_argument, 0, 'g'}, {"platform", required_argument, 0, 'P'},       \
		{"seed", required_argument, 0, 's'}, {"temperature", required_argument, 0, 'e'},   \
		{"max-tokens", required_argument, 0, 'x'}, {"quiet", no_argument, 0, 'q'},         \
		{"verbose", no_argument, 0, 'v'},                                                  \
	{                                                                                          \
		"help", no_argument, 0, 'h'                                                        \
	}

/* Where the options every track takes live in one track's options. */
struct shared_refs {
	const char **model, **model_kind, **tier, **bank, **target, **out, **platform, **prices;
	int *fresh, *max_tokens, *quiet, *verbose;
	int64_t *seed;
	double *temperature;
	struct grade_protocol *proto;
	const char *model_flag; /* named when the model is missing; NULL: --api-model */
};

/* An option every track takes (getopt code c, value arg) into r: 0, the
 * exit code of a usage error (reported), or -1 when c is not one of them. */
static int shared_option(int c, const char *arg, const struct shared_refs *r)
{
	int64_t v = 0;
	int bad, rc = 0;
	switch (c) {
	case 'm': *r->model = arg; break;
	case 'K':
		if (strcmp(arg, "open") && strcmp(arg, "closed"))
			return cli_usage_error(CMD, "--model-kind must be open or closed, not '%s'",
					       arg);
		*r->model_kind = arg;
		break;
	case 't':
		*r->tier = parse_tier(arg, &bad);
		if (bad)
			return cli_usage_error(CMD,
					       "--tier: unknown tier '%s' (L1, L2, L3, easy, "
					       "medium, hard or all)",
					       arg);
		break;
	case 'b': *r->bank = arg; break;
	case 'T':
		if (strcmp(arg, "cuda") && strcmp(arg, "opencl") && strcmp(arg, "auto"))
			return cli_usage_error(
				CMD, "--target must be cuda, opencl or auto, not '%s'", arg);
		*r->target = arg;
		break;
	case 'o':
		if (!*arg)
			return cli_usage_error(CMD, "--out: empty folder name");
		*r->out = arg;
		break;
	case 'F': *r->fresh = 1; break;
	case 'P': *r->platform = arg; break;
	case 's': rc = cli_opt_int(CMD, "--seed", arg, 0, INT64_MAX / 2, r->seed); break;
	case 'e': rc = cli_opt_double(CMD, "--temperature", arg, 0, 2, 0, r->temperature); break;
	case 'x':
		if (!(rc = cli_opt_int(CMD, "--max-tokens", arg, 1, 1000000, &v)))
			*r->max_tokens = (int)v;
		break;
	case 'r':
		*r->prices = arg;
		break;
	CLI_PROTOCOL_CASES:
		rc = cli_protocol_option(CMD, c, arg, r->proto);
		break;
	case 'q': *r->quiet = 1; break;
	case 'v': *r->verbose = 1; break;
	default: return -1;
	}
	return rc;
}

#define SHARED_REFS(o)                                                                             \
	{                                                                                          \
		&(o)->model, &(o)->model_kind, &(o)->tier, &(o)->bank, &(o)->target, &(o)->out,    \
			&(o)->platform, &(o)->prices, &(o)->fresh, &(o)->max_tokens, &(o)->quiet,  \
			&(o)->verbose, &(o)->seed, &(o)->temperature, &(o)->proto, NULL            \
	}

/* One option (getopt code c, value arg) into a track's options o: 0 or the
 * exit code of a usage error, reported. */
typedef int (*track_option_fn)(int c, const char *arg, void *o);

/* The getopt loop and the checks every track makes (no stray argument, a
 * model, consistent timing options, not --quiet with --verbose), with the
 * fields as r locates them in o. Returns -1 to go on and run, else the exit
 * code (KA_EXIT_OK after --help). */
static int parse_track(int argc, char **argv, const struct option *opts, void (*help)(FILE *),
		       track_option_fn fn, void *o, const struct shared_refs *r)
{
	optind = 1;
	opterr = 0;
	int c, rc;
	while ((c = getopt_long(argc, argv, ":hqv", opts, NULL)) != -1) {
		if (c == 'h') {
			help(stdout);
			return KA_EXIT_OK;
		}
		if (c == '?' || c == ':')
			return cli_bad_option(CMD, c, argv);
		if ((rc = fn(c, optarg, o)))
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (!*r->model || !**r->model)
		return cli_usage_error(CMD, "%s is required",
				       r->model_flag ? r->model_flag : "--api-model (or --model)");
	if ((rc = cli_protocol_check(CMD, r->proto)))
		return rc;
	if (*r->quiet && *r->verbose)
		return cli_usage_error(CMD, "--quiet and --verbose together");
	return -1;
}

/* The rules of a track's split options: --train and --heldout together, and
 * not with --bank. 0, or the exit code of a usage error, reported. */
static int check_split_options(const char *train, const char *heldout, const char *bank)
{
	if (!train != !heldout)
		return cli_usage_error(CMD, "--train and --heldout go together");
	if (train && bank)
		return cli_usage_error(CMD, "--bank or --train/--heldout, not both");
	return 0;
}

/* One option of the capability track (getopt code c, value arg) into o: 0
 * or the exit code of a usage error, reported. */
static int capability_option(int c, const char *arg, void *opts)
{
	struct capability_opts *o = opts;
	const struct shared_refs r = SHARED_REFS(o);
	int64_t v = 0;
	int rc = shared_option(c, arg, &r);
	if (rc >= 0)
		return rc;
	rc = 0;
	switch (c) {
	case 'k':
		if (!(rc = cli_opt_int(CMD, "--k", arg, 1, 1000, &v)))
			o->k = (int)v;
		break;
	case 'S':
		if (strcmp(arg, "public") && strcmp(arg, "heldout"))
			return cli_usage_error(CMD, "--split must be public or heldout, not '%s'",
					       arg);
		o->split = arg;
		break;
	case 'g': o->gpus = arg; break;
	case OPT_GRADERS_PER_GPU:
		if (!(rc = cli_opt_int(CMD, "--graders-per-gpu", arg, 1, 16, &v)))
			o->graders_per_gpu = (int)v;
		break;
	case 'c':
		if (!(rc = cli_opt_int(CMD, "--concurrency", arg, 1, 1024, &v)))
			o->concurrency = (int)v;
		break;
	case 'p': o->prompt = arg; break;
	}
	return rc;
}

static int run_capability(int argc, char **argv)
{
	static const struct option opts[] = {
		{"api-model", required_argument, 0, 'm'},
		{"model", required_argument, 0, 'm'},
		{"model-kind", required_argument, 0, 'K'},
		{"k", required_argument, 0, 'k'},
		{"tier", required_argument, 0, 't'},
		{"bank", required_argument, 0, 'b'},
		{"split", required_argument, 0, 'S'},
		{"target", required_argument, 0, 'T'},
		{"out", required_argument, 0, 'o'},
		{"fresh", no_argument, 0, 'F'},
		{"gpus", required_argument, 0, 'g'},
		{"graders-per-gpu", required_argument, 0, OPT_GRADERS_PER_GPU},
		{"platform", required_argument, 0, 'P'},
		{"concurrency", required_argument, 0, 'c'},
		{"seed", required_argument, 0, 's'},
		{"temperature", required_argument, 0, 'e'},
		{"max-tokens", required_argument, 0, 'x'},
		{"prompt", required_argument, 0, 'p'},
		{"prices", required_argument, 0, 'r'},
		{"quiet", no_argument, 0, 'q'},
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct capability_opts o;
	capability_opts_default(&o);
	const struct shared_refs r = SHARED_REFS(&o);
	int rc = parse_track(argc, argv, opts, usage, capability_option, &o, &r);
	if (rc >= 0)
		return rc;
	if (!strcmp(o.split, "heldout") && !o.bank)
		return cli_usage_error(CMD, "--split heldout needs --bank (the held-out bank is "
					    "never in the repository)");
	return track_capability_run(&o);
}

static void usage_procedure(FILE *f)
{
	fputs("usage: ka --track procedure --api-model SPEC [--rounds 5] [--budget 4]\n"
	      "                [--mode prompt|strategies|full] [options]\n"
	      "       ka --track controls --api-model SPEC [--budget 4] [--rsi-scorecard FILE]\n"
	      "                [options]\n\n"
	      "Track 3, procedure RSI: each round the self arm's procedure (a Lua script,\n"
	      "a solver prompt, a strategy library and an archive of verified kernels)\n"
	      "solves the train split, then the model rewrites it from the evidence; the\n"
	      "frozen arm keeps round 0's procedure; Q = held-out mean C per arm and round,\n"
	      "with task-level paired bootstrap CIs. The controls track runs best_of_k,\n"
	      "self_refine and retrieval, frozen, at the same budget. Every unit of work is\n"
	      "journaled in OUT/journal.sqlite: the same command continues a killed run\n"
	      "(docs/procedures.md).\n\n"
	      "options:\n"
	      "  --api-model SPEC   the model (also --model; docs/models.md)\n"
	      "  --rounds N         edit rounds (procedure; default 5)\n"
	      "  --budget B         generations and checks per task per solve, the same for\n"
	      "                     every arm and method (default 4); tokens: B x --max-tokens\n"
	      "  --mode M           what an edit may change: prompt, strategies (default), full\n"
	      "  --procedure DIR    round-0 procedure (default procedures/one_shot)\n"
	      "  --procedures DIR   folder of the shipped procedures and edit.md\n"
	      "                     (default procedures/)\n"
	      "  --rsi-scorecard F  controls: a weight-RSI scorecard of the same model, for\n"
	      "                     the recursion gain (else it is left empty)\n"
	      "  --bank PATH        task bank, split train/held-out by task-name hash\n"
	      "                     (default bank/public)\n"
	      "  --train-pct P      percent of --bank that is train (default 50)\n"
	      "  --train BANK --heldout BANK   two banks instead (a task in both is refused)\n"
	      "  --tier T           L1|easy, L2|medium, L3|hard or all (default all)\n"
	      "  --target T         cuda, opencl or auto (default auto)\n"
	      "  --out DIR          output folder (default out)\n"
	      "  --fresh            discard an earlier run in DIR\n"
	      "  --gpu N            CUDA device to grade on (default 0)\n"
	      "  --platform SUBSTR  OpenCL platform (default: the first that works)\n"
	      "  --seed N, --temperature X, --max-tokens N, --prices FILE, --model-kind K\n"
	      "  --lua-seconds S    wall-clock cap of one procedure solve (default 600)\n"
	      "  --max-seconds S, --min-samples N, --max-samples N, --no-timing   grader\n"
	      "  --quiet, --verbose\n"
	      "exit codes: 0 done, 1 the run failed or is incomplete (run it again to\n"
	      "continue), 2 bad usage or bad input.\n",
	      f);
}

/* One option of the procedure and controls tracks (getopt code c, value
 * arg) into o: 0 or the exit code of a usage error, reported. */
static int procedure_option(int c, const char *arg, void *opts)
{
	struct procedure_opts *o = opts;
	const struct shared_refs r = SHARED_REFS(o);
	int64_t v = 0;
	int rc = shared_option(c, arg, &r);
	if (rc >= 0)
		return rc;
	rc = 0;
	switch (c) {
	case 'R':
		if (!(rc = cli_opt_int(CMD, "--rounds", arg, 1, 1000, &v)))
			o->rounds = (int)v;
		break;
	case 'B':
		if (!(rc = cli_opt_int(CMD, "--budget", arg, 1, 1000, &v)))
			o->budget = (int)v;
		break;
	case 'M':
		if (!procedure_mode_known(arg))
			return cli_usage_error(
				CMD, "--mode must be prompt, strategies or full, not '%s'", arg);
		o->mode = arg;
		break;
	case 'p': o->procedure = arg; break;
	case 'D': o->procedures = arg; break;
	case 'W': o->rsi_scorecard = arg; break;
	case 'A': o->train = arg; break;
	case 'H': o->heldout = arg; break;
	case 'C':
		if (!(rc = cli_opt_int(CMD, "--train-pct", arg, 1, 99, &v)))
			o->train_pct = (int)v;
		break;
	case 'g':
		if (!(rc = cli_opt_int(CMD, "--gpu", arg, 0, 1023, &v)))
			o->gpu = (int)v;
		break;
	case 'L':
		rc = cli_opt_double(CMD, "--lua-seconds", arg, 0, 86400, 1, &o->lua_wall_s);
		break;
	}
	return rc;
}

/* ka --track procedure / controls (controls = 1). */
static int run_procedure(int argc, char **argv, int controls)
{
	static const struct option opts[] = {
		{"api-model", required_argument, 0, 'm'},
		{"model", required_argument, 0, 'm'},
		{"model-kind", required_argument, 0, 'K'},
		{"rounds", required_argument, 0, 'R'},
		{"budget", required_argument, 0, 'B'},
		{"mode", required_argument, 0, 'M'},
		{"procedure", required_argument, 0, 'p'},
		{"procedures", required_argument, 0, 'D'},
		{"rsi-scorecard", required_argument, 0, 'W'},
		{"prices", required_argument, 0, 'r'},
		{"lua-seconds", required_argument, 0, 'L'},
		ROUND_TRACK_OPTIONS,
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct procedure_opts o;
	procedure_opts_default(&o);
	const struct shared_refs r = SHARED_REFS(&o);
	int rc = parse_track(argc, argv, opts, usage_procedure, procedure_option, &o, &r);
	if (rc >= 0)
		return rc;
	if ((rc = check_split_options(o.train, o.heldout, o.bank)))
		return rc;
	if (controls && o.procedure)
		return cli_usage_error(CMD, "--procedure is for the procedure track (controls "
					    "run the shipped procedures; see --procedures)");
	if (!controls && o.rsi_scorecard)
		return cli_usage_error(CMD, "--rsi-scorecard is for the controls track");
	return controls ? track_controls_run(&o) : track_procedure_run(&o);
}

static void usage_frontier(FILE *f)
{
	fputs("usage: ka --track frontier --api-model SOLVER --proposer MODEL [--rounds 2]\n"
	      "                [--k 3] [--proposals 1] [options]\n\n"
	      "Track 5, the co-evolving frontier: the frontier starts as the train split of\n"
	      "the bank. Each round the solver takes k samples of every frontier task; for\n"
	      "every solved task the proposer sees the task and a verified solution and\n"
	      "proposes a harder variant (task.json + ref.c). Each proposal is validated\n"
	      "(schema, reference dialect, gold in a confined child: compiles, finite, not\n"
	      "degenerate; benchmark runtime floor and ceiling; novelty against the\n"
	      "frontier and the held-out split; harder, measured from the solver's samples)\n"
	      "and an accepted one joins the frontier in OUT/frontier/<name> with its\n"
	      "lineage. A proposed baseline is dropped: the naive kernel derived from ref.c\n"
	      "replaces it. A proposal's gold is computed in ka-goldbox whenever it is\n"
	      "graded; one that hangs, crashes or answers garbage there makes the task\n"
	      "broken (rejected at grade_gold, or dropped from the frontier). Nothing a\n"
	      "proposer wrote enters the held-out split. Every step is\n"
	      "journaled: the same command continues a killed run (docs/frontier.md).\n\n"
	      "options:\n"
	      "  --api-model SPEC   the solver (also --model; docs/models.md)\n"
	      "  --proposer SPEC    the proposer model (required)\n"
	      "  --rounds N         rounds (default 2)\n"
	      "  --k N              solver samples per task and round (default 3)\n"
	      "  --proposals N      proposals asked per solved task and round (default 1)\n"
	      "  --gold-seconds S   wall-clock cap of one proposal's confined gold (default 120)\n"
	      "  --bank PATH, --train-pct P, --train BANK --heldout BANK   the split: the train\n"
	      "                     side seeds the frontier, the held-out side is a novelty fence\n"
	      "  --tier T, --target T, --out DIR, --fresh, --gpu N, --platform SUBSTR\n"
	      "  --seed N, --temperature X, --max-tokens N, --prices FILE, --model-kind K\n"
	      "  --max-seconds S, --min-samples N, --max-samples N, --no-timing   grader\n"
	      "  --quiet, --verbose\n"
	      "exit codes: 0 done, 1 the run failed or is incomplete (run it again to\n"
	      "continue), 2 bad usage or bad input.\n",
	      f);
}

/* One option of the frontier track into opts (a struct frontier_opts): its
 * own, else the procedure track's. 0 or a reported usage error's code. */
static int frontier_option(int c, const char *arg, void *opts)
{
	struct frontier_opts *o = opts;
	int64_t v = 0;
	int rc = 0;
	switch (c) {
	case 'Q': o->proposer = arg; break;
	case 'k':
		if (!(rc = cli_opt_int(CMD, "--k", arg, 1, 1000, &v)))
			o->k = (int)v;
		break;
	case 'N':
		if (!(rc = cli_opt_int(CMD, "--proposals", arg, 1, 100, &v)))
			o->proposals = (int)v;
		break;
	case 'G':
		rc = cli_opt_double(CMD, "--gold-seconds", arg, 0, 86400, 1, &o->gold_wall_s);
		break;
	default: rc = procedure_option(c, arg, &o->p); break;
	}
	return rc;
}

/* ka --track frontier. */
static int run_frontier(int argc, char **argv)
{
	static const struct option opts[] = {
		{"api-model", required_argument, 0, 'm'},
		{"model", required_argument, 0, 'm'},
		{"model-kind", required_argument, 0, 'K'},
		{"proposer", required_argument, 0, 'Q'},
		{"rounds", required_argument, 0, 'R'},
		{"k", required_argument, 0, 'k'},
		{"proposals", required_argument, 0, 'N'},
		{"gold-seconds", required_argument, 0, 'G'},
		{"prices", required_argument, 0, 'r'},
		ROUND_TRACK_OPTIONS,
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct frontier_opts o;
	memset(&o, 0, sizeof o);
	procedure_opts_default(&o.p);
	o.p.rounds = 2;
	o.k = 3;
	o.proposals = 1;
	o.gold_wall_s = 120;
	const struct shared_refs r = SHARED_REFS(&o.p);
	int rc = parse_track(argc, argv, opts, usage_frontier, frontier_option, &o, &r);
	if (rc >= 0)
		return rc;
	if (!o.proposer)
		return cli_usage_error(CMD, "--proposer is required");
	if ((rc = check_split_options(o.p.train, o.p.heldout, o.p.bank)))
		return rc;
	return track_frontier_run(&o);
}

static void usage_rsi(FILE *f)
{
	fputs("usage: ka --track rsi --model HF_ID|FOLDER [--rounds 5] [--k 3] [--engine torch]\n"
	      "                [options]\n\n"
	      "Track 2, weight RSI: an open model trained on its own verified kernels. Arms:\n"
	      "self (its own verified train-split kernels, accumulated), fresh_frozen\n"
	      "(kernels sampled fresh from the unchanged base each round, as many examples)\n"
	      "and round0 (round 0's data again). Each arm retrains from the base each round\n"
	      "and is scored on the held-out split with the same grader and the same\n"
	      "generations; training and sampling run in the engine (docs/engines.md), every\n"
	      "call journaled in OUT/journal.sqlite: the same command continues a killed run\n"
	      "(docs/rsi.md).\n\n"
	      "options:\n"
	      "  --model M          HF id or local folder (also --api-model)\n"
	      "  --rounds N         training rounds (default 5)\n"
	      "  --k K              samples per task per round and arm (default 3)\n"
	      "  --engine E         engine name (engines/E/engine.py) or path (default torch)\n"
	      "  --finetune F       auto (full below 100M parameters, else LoRA), full, lora\n"
	      "  --continue         continued training instead of retraining from the base\n"
	      "  --interrupt-after I  the recursion-interruption control: a fourth arm,\n"
	      "                     ckpt_frozen, trains from round I+1 on kernels sampled\n"
	      "                     from self's round-I checkpoint, frozen (continued self\n"
	      "                     vs checkpoint-frozen); I below --rounds\n"
	      "  --per-task-cap N   SFT examples per task (default 4)\n"
	      "  --epochs N, --batch N, --lr X   training (default 2, 8, 1e-4)\n"
	      "  --prompt-style S   solver (the standard solver prompt, default) or short\n"
	      "                     (\"task: NAME\", for the tiny test model)\n"
	      "  --engine-timeout S wall-clock cap of one engine call (default 86400)\n"
	      "  --bank, --train-pct, --train/--heldout, --tier, --target, --out, --fresh,\n"
	      "  --gpu, --platform, --seed, --temperature, --max-tokens, --quiet, --verbose,\n"
	      "  --max-seconds, --min-samples, --max-samples, --no-timing   as the procedure\n"
	      "                     track (ka --track procedure --help)\n"
	      "exit codes: 0 done, 1 the run failed or is incomplete (run it again to\n"
	      "continue), 2 bad usage or bad input.\n",
	      f);
}

/* ka --track rsi. */
static int run_rsi(int argc, char **argv)
{
	static const struct option opts[] = {
		{"api-model", required_argument, 0, 'm'},
		{"model", required_argument, 0, 'm'},
		{"rounds", required_argument, 0, 'R'},
		{"k", required_argument, 0, 'k'},
		{"engine", required_argument, 0, 'E'},
		{"finetune", required_argument, 0, 'U'},
		{"continue", no_argument, 0, 'N'},
		{"interrupt-after", required_argument, 0, 'I'},
		{"per-task-cap", required_argument, 0, 'Y'},
		{"epochs", required_argument, 0, 'Z'},
		{"batch", required_argument, 0, 'z'},
		{"lr", required_argument, 0, 'l'},
		{"prompt-style", required_argument, 0, 'y'},
		{"engine-timeout", required_argument, 0, 'X'},
		ROUND_TRACK_OPTIONS,
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct rsi_opts o;
	rsi_opts_default(&o);
	o.p.max_tokens = 2048;
	const char *model = NULL;
	optind = 1;
	opterr = 0;
	int c, rc = 0;
	int64_t v = 0;
	while ((c = getopt_long(argc, argv, ":hqv", opts, NULL)) != -1) {
		if (c == 'h') {
			usage_rsi(stdout);
			return KA_EXIT_OK;
		}
		if (c == '?' || c == ':')
			return cli_bad_option(CMD, c, argv);
		switch (c) {
		case 'm': model = optarg; break;
		case 'R':
			if (!(rc = cli_opt_int(CMD, "--rounds", optarg, 1, 1000, &v)))
				o.rounds = (int)v;
			break;
		case 'k':
			if (!(rc = cli_opt_int(CMD, "--k", optarg, 1, 1000, &v)))
				o.k = (int)v;
			break;
		case 'E': o.engine = optarg; break;
		case 'U':
			if (strcmp(optarg, "auto") && strcmp(optarg, "full") &&
			    strcmp(optarg, "lora"))
				return cli_usage_error(CMD,
						       "--finetune must be auto, full or lora");
			o.finetune = optarg;
			break;
		case 'N': o.cont = 1; break;
		case 'I':
			if (!(rc = cli_opt_int(CMD, "--interrupt-after", optarg, 1, 999, &v)))
				o.interrupt_after = (int)v;
			break;
		case 'Y':
			if (!(rc = cli_opt_int(CMD, "--per-task-cap", optarg, 1, 1000, &v)))
				o.per_task_cap = (int)v;
			break;
		case 'Z':
			if (!(rc = cli_opt_int(CMD, "--epochs", optarg, 1, 1000, &v)))
				o.epochs = (int)v;
			break;
		case 'z':
			if (!(rc = cli_opt_int(CMD, "--batch", optarg, 1, 4096, &v)))
				o.batch = (int)v;
			break;
		case 'l': rc = cli_opt_double(CMD, "--lr", optarg, 0, 1, 0, &o.lr); break;
		case 'y':
			if (strcmp(optarg, "solver") && strcmp(optarg, "short"))
				return cli_usage_error(CMD,
						       "--prompt-style must be solver or short");
			o.prompt_style = optarg;
			break;
		case 'X':
			rc = cli_opt_double(CMD, "--engine-timeout", optarg, 0, 30 * 86400, 0,
					    &o.engine_timeout_s);
			break;
		default: rc = procedure_option(c, optarg, &o.p); break;
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (!model || !*model)
		return cli_usage_error(CMD, "--model (an HF id or a local folder) is required");
	o.model = model;
	o.p.model = "cmd:false";
	o.p.rounds = o.rounds;
	if ((rc = cli_protocol_check(CMD, &o.p.proto)))
		return rc;
	if ((rc = check_split_options(o.p.train, o.p.heldout, o.p.bank)))
		return rc;
	if (o.p.quiet && o.p.verbose)
		return cli_usage_error(CMD, "--quiet and --verbose together");
	if (o.interrupt_after && o.interrupt_after >= o.rounds)
		return cli_usage_error(CMD, "--interrupt-after %d must be below --rounds %d",
				       o.interrupt_after, o.rounds);
	return track_rsi_run(&o);
}

static void usage_harness(FILE *f)
{
	fputs("usage: ka --track harness --researcher SPEC --trainee HF_ID|FOLDER [--rounds 3]\n"
	      "                [--k 3] [--engine torch] [--harness FILE] [options]\n\n"
	      "Track 4, harness RSI: a researcher model with fixed weights rewrites the\n"
	      "training harness (harness.lua, a sandboxed Lua script that picks, formats and\n"
	      "weights the SFT examples and sets the hyperparameters within bounds) of an open\n"
	      "trainee each round, from the train-split evidence. Arms: improved (the\n"
	      "researcher's harness) and frozen (round 0's), the same trainee, seeds, data and\n"
	      "generation budgets; both retrain the base each round and are scored on the\n"
	      "held-out split. Every harness version is kept in OUT/harness/ with its diff; a\n"
	      "failed edit is rejected with its reason and the round keeps the previous\n"
	      "harness. Every step is journaled: the same command continues a killed run\n"
	      "(docs/harness.md).\n\n"
	      "options:\n"
	      "  --researcher SPEC  the researcher model (docs/models.md)\n"
	      "  --trainee M        the open trainee: an HF id or a local folder\n"
	      "  --rounds N         training rounds (default 3)\n"
	      "  --k K              trainee samples per task per round and arm (default 3)\n"
	      "  --harness FILE     round 0's harness (default harnesses/default.lua)\n"
	      "  --harnesses DIR    folder of the researcher's edit.md (default harnesses/)\n"
	      "  --max-examples N   the data budget: SFT examples per training (default 256)\n"
	      "  --epochs N, --batch N, --lr X, --lora-r N   the defaults a harness sees\n"
	      "                     (default 2, 8, 1e-4, 16; bounds in docs/harness.md)\n"
	      "  --engine E         engine name (engines/E/engine.py) or path (default torch)\n"
	      "  --finetune F       auto (full below 100M parameters, else LoRA), full, lora\n"
	      "  --prompt-style S   solver (default) or short (\"task: NAME\", the tiny model's)\n"
	      "  --engine-timeout S wall-clock cap of one engine call (default 86400)\n"
	      "  --lua-seconds S    wall-clock cap of one harness run (default 30)\n"
	      "  --bank, --train-pct, --train/--heldout, --tier, --target, --out, --fresh,\n"
	      "  --gpu, --platform, --seed, --temperature, --max-tokens, --prices,\n"
	      "  --model-kind, --quiet, --verbose, --max-seconds, --min-samples,\n"
	      "  --max-samples, --no-timing   as the procedure track\n"
	      "exit codes: 0 done, 1 the run failed or is incomplete (run it again to\n"
	      "continue), 2 bad usage or bad input.\n",
	      f);
}

/* One option of the harness track into opts (a struct harness_opts): its
 * own, else the procedure track's. 0 or a reported usage error's code. */
static int harness_option(int c, const char *arg, void *opts)
{
	struct harness_opts *o = opts;
	int64_t v = 0;
	int rc = 0, *ints[] = {&o->k, &o->max_examples, &o->epochs, &o->batch, &o->lora_r};
	/* the whole-number options and their ranges (docs/harness.md's bounds) */
	static const int codes[] = {'k', 'Y', 'Z', 'z', 'I'};
	static const char *const names[] = {"--k", "--max-examples", "--epochs", "--batch",
					    "--lora-r"};
	static const int64_t hi[] = {1000, 100000, 10, 64, 256};
	for (int i = 0; i < 5; i++)
		if (c == codes[i]) {
			if ((rc = cli_opt_int(CMD, names[i], arg, 1, hi[i], &v)))
				return rc;
			*ints[i] = (int)v;
			return 0;
		}
	switch (c) {
	case 'Q': o->trainee = arg; break;
	case 'E': o->engine = arg; break;
	case 'p': o->harness = arg; break;
	case 'D': o->harnesses = arg; break;
	case 'U':
		if (strcmp(arg, "auto") && strcmp(arg, "full") && strcmp(arg, "lora"))
			return cli_usage_error(CMD, "--finetune must be auto, full or lora");
		o->finetune = arg;
		break;
	case 'l': rc = cli_opt_double(CMD, "--lr", arg, 1e-6, 1e-2, 0, &o->lr); break;
	case 'y':
		if (strcmp(arg, "solver") && strcmp(arg, "short"))
			return cli_usage_error(CMD, "--prompt-style must be solver or short");
		o->prompt_style = arg;
		break;
	case 'X':
		rc = cli_opt_double(CMD, "--engine-timeout", arg, 0, 30 * 86400, 0,
				    &o->engine_timeout_s);
		break;
	default: rc = procedure_option(c, arg, &o->p); break;
	}
	return rc;
}

/* ka --track harness. */
static int run_harness(int argc, char **argv)
{
	static const struct option opts[] = {
		{"researcher", required_argument, 0, 'm'},
		{"model-kind", required_argument, 0, 'K'},
		{"trainee", required_argument, 0, 'Q'},
		{"rounds", required_argument, 0, 'R'},
		{"k", required_argument, 0, 'k'},
		{"harness", required_argument, 0, 'p'},
		{"harnesses", required_argument, 0, 'D'},
		{"max-examples", required_argument, 0, 'Y'},
		{"epochs", required_argument, 0, 'Z'},
		{"batch", required_argument, 0, 'z'},
		{"lr", required_argument, 0, 'l'},
		{"lora-r", required_argument, 0, 'I'},
		{"engine", required_argument, 0, 'E'},
		{"finetune", required_argument, 0, 'U'},
		{"prompt-style", required_argument, 0, 'y'},
		{"engine-timeout", required_argument, 0, 'X'},
		{"lua-seconds", required_argument, 0, 'L'},
		{"prices", required_argument, 0, 'r'},
		ROUND_TRACK_OPTIONS,
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	struct harness_opts o;
	harness_opts_default(&o);
	struct shared_refs r = SHARED_REFS(&o.p);
	r.model_flag = "--researcher (a model spec)";
	int rc = parse_track(argc, argv, opts, usage_harness, harness_option, &o, &r);
	if (rc >= 0)
		return rc;
	if (!o.trainee || !*o.trainee)
		return cli_usage_error(CMD, "--trainee (an HF id or a local folder) is required");
	o.rounds = o.p.rounds;
	if ((rc = check_split_options(o.p.train, o.p.heldout, o.p.bank)))
		return rc;
	return track_harness_run(&o);
}

int cmd_track(int argc, char **argv)
{
	/* argv: ka --track NAME opts... or ka --track=NAME opts... */
	const char *name;
	int first;
	if (!strncmp(argv[1], "--track=", 8)) {
		name = argv[1] + 8;
		first = 2;
	} else {
		if (argc < 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
			if (argc >= 3) {
				usage(stdout);
				return KA_EXIT_OK;
			}
			return cli_usage_error(CMD, "a track name is required (capability)");
		}
		name = argv[2];
		first = 3;
	}
	int proc = !strcmp(name, "procedure") || !strcmp(name, "procedure_rsi");
	int ctrl = !strcmp(name, "controls");
	int fron = !strcmp(name, "frontier");
	int rsi = !strcmp(name, "rsi") || !strcmp(name, "weight_rsi");
	int har = !strcmp(name, "harness") || !strcmp(name, "harness_rsi");
	int avail = proc || ctrl || fron || rsi || har ? 1 : track_available(name);
	if (avail < 0)
		return cli_usage_error(CMD,
				       "unknown track '%s' (this version has: capability, "
				       "procedure, controls, frontier, rsi, harness)",
				       name);
	if (avail == 0)
		return cli_bad_input(CMD,
				     "the '%s' track is not available in this version of ka (this "
				     "version has: capability, procedure, controls, frontier, rsi, "
				     "harness)",
				     name);
	/* Hand getopt an argv whose [0] names the command. */
	int n = argc - first + 1;
	char **sub = xcalloc((size_t)n + 1, sizeof *sub);
	sub[0] = (char *)CMD;
	for (int i = first; i < argc; i++)
		sub[i - first + 1] = argv[i];
	int rc = proc	? run_procedure(n, sub, 0)
		 : ctrl ? run_procedure(n, sub, 1)
		 : fron ? run_frontier(n, sub)
		 : rsi	? run_rsi(n, sub)
		 : har	? run_harness(n, sub)
			: run_capability(n, sub);
	free(sub);
	return rc;
}
