/* cli.c: argument helpers shared by the subcommands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ka %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'ka %s --help')\n", cmd);
	return KA_EXIT_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ka %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return KA_EXIT_FAIL;
}

int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_double(const char *s, double *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	if (optopt && optopt != '?' && arg && arg[0] == '-' && arg[1] != '-')
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg ? arg : "?");
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

int cli_check_outdir(const char *cmd, const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
		return 0;
	fprintf(stderr, "ka %s: %s %s: exists and is not a folder\n", cmd, what, path);
	return KA_EXIT_USAGE;
}

int cli_check_input(const char *cmd, const char *path, int want_dir)
{
	struct stat st;
	const char *why = NULL;
	if (stat(path, &st) != 0)
		why = strerror(errno);
	else if (want_dir == 1 && !S_ISDIR(st.st_mode))
		why = "not a folder";
	else if (want_dir == 0 && !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (want_dir == -1 && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		why = "neither a file nor a folder";
	if (!why)
		return 0;
	fprintf(stderr, "ka %s: %s: %s\n", cmd, path, why);
	return KA_EXIT_USAGE;
}
