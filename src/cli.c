/* cli.c: argument helpers shared by the subcommands (see cli.h): the one
 * parser per kind of command-line value, the timing options that `ka grade`
 * and the tracks share, and the one-line error reports. Runs nothing. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grade.h"
#include "util.h"

/* The one place that writes an error line: "ka[ <cmd>]: <message>[ hint]". */
static void report(const char *cmd, int hint, const char *fmt, va_list ap)
{
	fprintf(stderr, "ka%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	if (hint)
		fprintf(stderr, " (see 'ka%s%s --help')", cmd ? " " : "", cmd ? cmd : "");
	fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(cmd, 1, fmt, ap);
	va_end(ap);
	return KA_EXIT_USAGE;
}

int cli_bad_input(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(cmd, 0, fmt, ap);
	va_end(ap);
	return KA_EXIT_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(cmd, 0, fmt, ap);
	va_end(ap);
	return KA_EXIT_FAIL;
}

/* s as [+-]digits with nothing else: the sign and the magnitude, or -1 when
 * s is not that or the magnitude does not fit 64 bits. */
static int parse_digits(const char *s, int *neg, uint64_t *mag)
{
	if (!s)
		return -1;
	*neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	uint64_t m = 0;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (m > (UINT64_MAX - d) / 10)
			return -1;
		m = m * 10 + d;
	}
	if (*s)
		return -1;
	*mag = m;
	return 0;
}

int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	int neg;
	uint64_t mag;
	if (parse_digits(s, &neg, &mag))
		return -1;
	int64_t v;
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -1;
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			return -1;
		v = (int64_t)mag;
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	int neg;
	uint64_t mag;
	if (parse_digits(s, &neg, &mag) || (neg && mag))
		return -1;
	*out = mag;
	return 0;
}

/* s is [+-](digits[.digits*] | .digits)[(e|E)[+-]digits] and nothing else:
 * strtod's decimal form without spaces, hex, nan or inf. */
static int is_decimal_real(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	int digits = 0;
	for (; isdigit((unsigned char)*s); s++)
		digits++;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			digits++;
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == 0;
}

int cli_parse_double(const char *s, double *out)
{
	if (!s || !is_decimal_real(s))
		return -1;
	errno = 0;
	double v = strtod(s, NULL);
	/* ERANGE: overflow (1e999) or underflow (1e-400), neither what was
	 * typed. */
	if (errno || !isfinite(v))
		return -1;
	*out = v == 0 ? 0.0 : v;
	return 0;
}

int cli_opt_int(const char *cmd, const char *flag, const char *s, int64_t lo, int64_t hi,
		int64_t *out)
{
	if (!cli_parse_i64(s, lo, hi, out))
		return 0;
	return cli_usage_error(cmd, "%s: '%s' is not in %lld..%lld", flag, s ? s : "",
			       (long long)lo, (long long)hi);
}

int cli_opt_u64(const char *cmd, const char *flag, const char *s, uint64_t *out)
{
	if (!cli_parse_u64(s, out))
		return 0;
	return cli_usage_error(cmd, "%s: '%s' is not an unsigned 64-bit integer", flag, s ? s : "");
}

int cli_opt_double(const char *cmd, const char *flag, const char *s, double lo, double hi,
		   int lo_open, double *out)
{
	double v;
	if (!cli_parse_double(s, &v) && (lo_open ? v > lo : v >= lo) && v <= hi) {
		*out = v;
		return 0;
	}
	if (isinf(hi))
		return cli_usage_error(cmd, "%s: '%s' is not a number %s %g", flag, s ? s : "",
				       lo_open ? ">" : ">=", lo);
	return cli_usage_error(cmd, "%s: '%s' is not in %c%g, %g]", flag, s ? s : "",
			       lo_open ? '(' : '[', lo, hi);
}

int cli_protocol_option(const char *cmd, int c, const char *arg, struct grade_protocol *p)
{
	int64_t v;
	int rc;
	switch (c) {
	case CLI_OPT_MAX_SECONDS:
		return cli_opt_double(cmd, "--max-seconds", arg, 0, 3600, 1, &p->max_seconds);
	case CLI_OPT_MIN_SAMPLES:
		if ((rc = cli_opt_int(cmd, "--min-samples", arg, 1, 500, &v)))
			return rc;
		p->min_samples = (int)v;
		return 0;
	case CLI_OPT_MAX_SAMPLES:
		if ((rc = cli_opt_int(cmd, "--max-samples", arg, 1, 100000, &v)))
			return rc;
		p->max_samples = (int)v;
		return 0;
	case CLI_OPT_NO_TIMING: p->timing = 0; return 0;
	default: return cli_usage_error(cmd, "option code %d is not a timing option", c);
	}
}

int cli_protocol_check(const char *cmd, const struct grade_protocol *p)
{
	if (p->min_samples > p->max_samples)
		return cli_usage_error(cmd, "--min-samples is above --max-samples");
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
	return cli_bad_input(cmd, "%s %s: exists and is not a folder", what, path);
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
	return cli_bad_input(cmd, "%s: %s", path, why);
}
