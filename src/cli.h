/* cli.h: the ka command table and small helpers every subcommand uses for
 * consistent argument errors. Each subcommand lives in src/cmd_<name>.c and
 * returns an exit code (enum ka_exit in util.h). */
#ifndef KA_CLI_H
#define KA_CLI_H

#include <stdint.h>

int cmd_bank(int argc, char **argv);
int cmd_gold(int argc, char **argv);
int cmd_grade(int argc, char **argv);
int cmd_prompt(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_scorecard(int argc, char **argv);
int cmd_board(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_track(int argc, char **argv); /* ka --track NAME ... */

/* Print "ka <cmd>: <message>" and a hint to stderr; returns KA_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "ka <cmd>: <message>" to stderr; returns KA_EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict integer parse of s into [lo, hi]. 0 or -1. */
int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Strict float parse. 0 or -1. */
int cli_parse_double(const char *s, double *out);

/* getopt_long error helper: after getopt_long returned '?' or ':', print the
 * right one-line message for argv[optind-1] and return KA_EXIT_USAGE. */
int cli_bad_option(const char *cmd, int c, char **argv);

/* True if any argument is -h or --help. */
int cli_wants_help(int argc, char **argv);

/* An output folder given on the command line (what: "-o"): fine if path does
 * not exist yet (the command creates it) or is a folder. Otherwise prints one
 * line "ka <cmd>: <what> <path>: exists and is not a folder" and returns
 * KA_EXIT_USAGE; 0 if fine. */
int cli_check_outdir(const char *cmd, const char *what, const char *path);

/* An input path given on the command line must exist: 0, or one line
 * "ka <cmd>: <path>: <reason>" and KA_EXIT_USAGE. want_dir: 1 for a folder,
 * 0 for a regular file, -1 for either. */
int cli_check_input(const char *cmd, const char *path, int want_dir);

#endif
