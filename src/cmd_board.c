/* cmd_board.c: `ka board SCORECARDS... -o DIR`: build the static leaderboard
 * site (see board.h and docs/board.md). */
#include <getopt.h>
#include <stdio.h>

#include "board.h"
#include "cli.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ka board SCORECARD|FOLDER... -o DIR\n\n"
		   "Builds a self-contained static leaderboard site in DIR from scorecards\n"
		   "(a FOLDER means every *.json file in it): index.html with every board\n"
		   "(capability, weight RSI, standardized banks, harness RSI, controls,\n"
		   "procedure RSI, frontier, diagnostics, datasets), one page per scorecard\n"
		   "under DIR/m/, style.css and board.js. Open DIR/index.html from file:// or\n"
		   "serve DIR with any web server; nothing is fetched from the network.\n"
		   "A scorecard that fails `ka scorecard check` is skipped with one line\n"
		   "\"skipped FILE: field: problem\" on stderr; the site is still built.\n\n"
		   "exit codes: 0 the site was written, 1 it could not be written, 2 bad usage.\n");
}

int cmd_board(int argc, char **argv)
{
	static const struct option opts[] = {
		{"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		default: return cli_bad_option("board", c, argv);
		}
	}
	if (!out)
		return cli_usage_error("board", "missing -o DIR");
	if (optind >= argc)
		return cli_usage_error("board", "missing SCORECARD (a file or a folder)");
	if (cli_check_outdir("board", "-o", out))
		return KA_EXIT_USAGE;
	/* a path that is not there is a typo, not a bad scorecard to skip */
	for (int i = optind; i < argc; i++)
		if (cli_check_input("board", argv[i], -1))
			return KA_EXIT_USAGE;
	int n_ok = 0, n_skipped = 0;
	struct ka_err e;
	if (board_build(argv + optind, argc - optind, out, stderr, &n_ok, &n_skipped, &e))
		return cli_fail("board", "%s", e.msg);
	printf("%s/index.html: %d scorecard%s, %d skipped\n", out, n_ok, n_ok == 1 ? "" : "s",
	       n_skipped);
	return KA_EXIT_OK;
}
