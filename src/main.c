/* main.c: the ka entrypoint. Dispatches to one subcommand per src/cmd_*.c.
 * ka never runs candidate code and never opens a GPU context itself: it talks
 * to the recorder and runner programs beside it (see docs/architecture.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rundir.h"
#include "util.h"

#define KA_VERSION "0.1.0"

struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
};

static const struct command commands[] = {
	{"bank", cmd_bank, "list, show and validate task banks"},
	{"gold", cmd_gold, "write gold outputs and inputs of a task as .npy files"},
	{"grade", cmd_grade, "grade one candidate kernel against a task"},
	{"prompt", cmd_prompt, "print exactly what a model is sent for a task"},
	{"model", cmd_model, "talk to a model backend (ka model test SPEC)"},
	{"scorecard", cmd_scorecard, "check a scorecard.json against the schema"},
	{"board", cmd_board, "build the static leaderboard site from scorecards"},
	{"submit", cmd_submit, "check a scorecard for submission"},
	{"slurm", cmd_slurm, "run a track as a Slurm job array, one shard a task"},
	{"shard", cmd_shard, "grade one shard of a ka slurm plan (run by the array)"},
	{"merge", cmd_merge, "merge the shards of a sharded run into one scorecard"},
	{"verify", cmd_verify, "re-run a scorecard's model on a held-out bank"},
	{"keygen", cmd_keygen, "make an ed25519 key pair for signing scorecards"},
	{"sign", cmd_sign, "sign a scorecard (writes SCORECARD.sig)"},
	{"verify-signature", cmd_verify_signature, "check a scorecard's signature"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"KernelAscent %s: does a language model get better at writing GPU kernels?\n\n"
		"usage: ka --track capability --api-model SPEC [--tier medium] [options]\n"
		"       ka <command> [options]     (ka <command> --help for each)\n\n"
		"commands:\n",
		KA_VERSION);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-16s %s\n", "version", "print the version");
	fprintf(f, "\ntracks: ka --track capability --help\n"
		   "exit codes: 0 ok, 1 the run failed, 2 bad usage or bad input.\n");
}

/* The parent's OpenMP threads (the CPU gold, input generation) sleep
 * between parallel regions instead of spinning: libgomp's default spins
 * each idle thread for a while after every region, and a grade runs
 * thousands of small regions, so the spinning took the cores the runner
 * (PoCL's kernels, CUDA's host side) and the next region needed; on PoCL
 * it cost more than the checking itself (docs/PERF.md, "Where a grade's
 * time goes"). libgomp reads OMP_WAIT_POLICY once, when it loads, so ka
 * sets it and starts itself again, once; a value the user set is kept. */
static void omp_sleep_when_idle(char **argv)
{
	if (getenv("OMP_WAIT_POLICY"))
		return;
	setenv("OMP_WAIT_POLICY", "passive", 1);
	execv("/proc/self/exe", argv);
	/* Not fatal: ka works with spinning threads, only slower. */
}

int main(int argc, char **argv)
{
	omp_sleep_when_idle(argv);
	if (argc < 2)
		return cli_usage_error(NULL, "missing command");
	const char *c = argv[1];
	if (!strcmp(c, "-h") || !strcmp(c, "--help") || !strcmp(c, "help")) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	if (!strcmp(c, "version") || !strcmp(c, "--version")) {
		printf("ka %s\n", KA_VERSION);
		return KA_EXIT_OK;
	}
	if (!strcmp(c, "--track") || !strncmp(c, "--track=", 8)) {
		/* SIGTERM like SIGINT: a clean stop, exit 128 + the signal. */
		rundir_signals_install();
		return rundir_exit_code(cmd_track(argc, argv));
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(c, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return cli_usage_error(NULL, "unknown command '%s'", c);
}
