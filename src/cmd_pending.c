/* cmd_pending.c: weak placeholders for subcommands whose module has not landed
 * yet, so ka links while the modules are built in parallel. Each says so and
 * exits 2. A module that defines the command replaces its placeholder. This
 * file is deleted once every command exists. */
#include <stdio.h>

#include "cli.h"
#include "util.h"

#define PENDING(fn, name)                                                                          \
	__attribute__((weak)) int fn(int argc, char **argv)                                        \
	{                                                                                          \
		fprintf(stderr, "ka %s: not available in this build\n", name);                    \
		return KA_EXIT_USAGE;                                                              \
	}

PENDING(cmd_bank, "bank")
PENDING(cmd_gold, "gold")
PENDING(cmd_grade, "grade")
PENDING(cmd_prompt, "prompt")
PENDING(cmd_model, "model")
PENDING(cmd_scorecard, "scorecard")
PENDING(cmd_board, "board")
PENDING(cmd_submit, "submit")
PENDING(cmd_track, "--track")
