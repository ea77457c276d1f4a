/* cli.h: the ka command table and the helpers every subcommand uses, so that
 * one kind of command-line value is parsed in one place and one kind of error
 * is printed one way. Each subcommand lives in src/cmd_<name>.c and returns
 * an exit code (enum ka_exit in util.h).
 *
 * Numbers on the command line: decimal only, an optional sign, no spaces, no
 * hex, nothing after the number; reals also take a fraction and an exponent
 * but never nan, inf or a value that overflows. "-0" is 0. The same string
 * gets the same answer from every subcommand; only the range differs. */
#ifndef KA_CLI_H
#define KA_CLI_H

#include <getopt.h>
#include <stdint.h>

struct grade_protocol;

int cmd_bank(int argc, char **argv);
int cmd_bank_standardize(int argc, char **argv); /* cmd_bank_std.c: ka bank standardize */
int cmd_gold(int argc, char **argv);
int cmd_grade(int argc, char **argv);
int cmd_prompt(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_scorecard(int argc, char **argv);
int cmd_board(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_track(int argc, char **argv);		 /* ka --track NAME ... */
int cmd_slurm(int argc, char **argv);		 /* cmd_slurm.c */
int cmd_shard(int argc, char **argv);		 /* cmd_slurm.c: one array task */
int cmd_merge(int argc, char **argv);		 /* cmd_merge.c */
int cmd_verify(int argc, char **argv);		 /* cmd_verify.c */
int cmd_keygen(int argc, char **argv);		 /* cmd_sign.c */
int cmd_sign(int argc, char **argv);		 /* cmd_sign.c */
int cmd_verify_signature(int argc, char **argv); /* cmd_sign.c */

/* Print "ka <cmd>: <message> (see 'ka <cmd> --help')" on one line of stderr;
 * returns KA_EXIT_USAGE. cmd NULL: "ka: <message> (see 'ka --help')". For a
 * command line that is wrong as such (unknown option, missing argument). */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "ka <cmd>: <message>" (cmd NULL: "ka: <message>") on one line of
 * stderr; returns KA_EXIT_USAGE. For input named on a well-formed command line
 * that is bad (a task that does not load, a file that is not there). */
int cli_bad_input(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "ka <cmd>: <message>" on one line of stderr; returns KA_EXIT_FAIL.
 * For a run that could not be done (a write failed, the grader broke). */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict integer parse of s (grammar above) into [lo, hi]. 0, or -1 with
 * *out untouched. Prints nothing. */
int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Strict unsigned parse of s into [0, UINT64_MAX] ("-0" is 0; any other
 * negative is refused). 0, or -1 with *out untouched. Prints nothing. */
int cli_parse_u64(const char *s, uint64_t *out);

/* Strict real parse of s (grammar above): a finite double, -0 given as +0.
 * 0, or -1 with *out untouched. Prints nothing. */
int cli_parse_double(const char *s, double *out);

/* The value of option flag (e.g. "--k") of command cmd: an integer in
 * [lo, hi] into *out and 0; otherwise one line
 * "ka <cmd>: <flag>: '<s>' is not in <lo>..<hi> (see ...)" and KA_EXIT_USAGE,
 * *out untouched. */
int cli_opt_int(const char *cmd, const char *flag, const char *s, int64_t lo, int64_t hi,
		int64_t *out);

/* As cli_opt_int for an unsigned 64-bit value (the whole range); the message
 * says "is not an unsigned 64-bit integer". */
int cli_opt_u64(const char *cmd, const char *flag, const char *s, uint64_t *out);

/* As cli_opt_int for a real in [lo, hi], or (lo, hi] when lo_open. hi may be
 * HUGE_VAL (no upper bound). The message names the interval:
 * "is not in (0, 3600]", or "is not a number > 0" without an upper bound. */
int cli_opt_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
		   int lo_open, double *out);

/* The timing options that `ka grade` and the tracks share, as getopt_long
 * codes above every character. Put CLI_PROTOCOL_OPTIONS in the option table
 * and CLI_PROTOCOL_CASES as case labels before a call to
 * cli_protocol_option. */
enum cli_protocol_opt {
	CLI_OPT_MAX_SECONDS = 0x100,
	CLI_OPT_MIN_SAMPLES,
	CLI_OPT_MAX_SAMPLES,
	CLI_OPT_NO_TIMING,
};
#define CLI_PROTOCOL_OPTIONS                                                                       \
	{"max-seconds", required_argument, 0, CLI_OPT_MAX_SECONDS},                                \
		{"min-samples", required_argument, 0, CLI_OPT_MIN_SAMPLES},                        \
		{"max-samples", required_argument, 0, CLI_OPT_MAX_SAMPLES},                        \
	{                                                                                          \
		"no-timing", no_argument, 0, CLI_OPT_NO_TIMING                                     \
	}
#define CLI_PROTOCOL_CASES                                                                         \
	case CLI_OPT_MAX_SECONDS:                                                                  \
	case CLI_OPT_MIN_SAMPLES:                                                                  \
	case CLI_OPT_MAX_SAMPLES:                                                                  \
	case CLI_OPT_NO_TIMING

/* Apply timing option c (an enum cli_protocol_opt) with value arg to p:
 * --max-seconds in (0, 3600], --min-samples in 1..500, --max-samples in
 * 1..100000, --no-timing. 0, or the one-line usage error and KA_EXIT_USAGE
 * (p untouched); KA_EXIT_USAGE for a code that is not a timing option. */
int cli_protocol_option(const char *cmd, int c, const char *arg, struct grade_protocol *p);

/* After every option: 0, or the usage error and KA_EXIT_USAGE when
 * --min-samples is above --max-samples. */
int cli_protocol_check(const char *cmd, const struct grade_protocol *p);

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
