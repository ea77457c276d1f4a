/* clopts.h: the OpenCL build options a candidate may pass to clBuildProgram.
 * A whitelist, because the runner hands options to a real compiler (PoCL
 * passes them on to clang): -I / -include would read the runner's files and
 * -Xclang -load would run code in it. Used by the recording API (early, clear
 * record_error), by the parent (src/recclient.c) on every plan, since a plan
 * is candidate output and could have been written by hand, and by the
 * OpenCL runner before it builds. Header-only so that all three programs
 * compile the same rule. */
#ifndef KA_CLOPTS_H
#define KA_CLOPTS_H

#include <stdio.h>
#include <string.h>

/* 1 if v names an OpenCL C version (CL1.0 ... CL3.0, either case): C++ for
 * OpenCL lexes a source differently (raw string literals, no trigraphs), so
 * the source checks (clsrc.h) would not read it as the compiler does. */
static inline int clopts_c_std(const char *v)
{
	static const char *const std[] = {"cl1.0", "cl1.1", "cl1.2", "cl2.0", "cl3.0", NULL};
	for (int i = 0; std[i]; i++) {
		size_t k = 0;
		while (std[i][k] && (v[k] | 0x20) == (std[i][k] | 0x20))
			k++;
		if (!std[i][k] && !v[k])
			return 1;
	}
	return 0;
}

/* 1 if every whitespace-separated token of opts is allowed: -D<name>[=<v>]
 * (or -D followed by a separate token), -U<name>, -cl-<anything> (but
 * -cl-std= only with an OpenCL C version), -w,
 * -Werror, -g. Quotes, backslashes and non-printable bytes are refused
 * outright. 0 otherwise, with the first refused token copied into bad. */
static inline int clopts_allowed(const char *opts, char *bad, size_t badcap)
{
	const char *s = opts ? opts : "";
	for (const char *c = s; *c; c++)
		if (*c == '"' || *c == '\'' || *c == '\\' || (unsigned char)*c < 0x20 ||
		    (unsigned char)*c > 0x7e) {
			snprintf(bad, badcap, "%s", "quote, backslash or control character");
			return 0;
		}
	int want_macro = 0;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		size_t n = strcspn(s, " ");
		char tok[256];
		snprintf(tok, sizeof tok, "%.*s", (int)(n < 255 ? n : 255), s);
		s += n;
		if (want_macro) {
			want_macro = 0;
			if (tok[0] != '-')
				continue;
		}
		if (!strcmp(tok, "-D")) {
			want_macro = 1;
			continue;
		}
		if ((!strncmp(tok, "-D", 2) || !strncmp(tok, "-U", 2)) && tok[2] != '-')
			continue;
		if (!strncmp(tok, "-cl-std=", 8) && !clopts_c_std(tok + 8)) {
			snprintf(bad, badcap, "%s", tok);
			return 0;
		}
		if (!strncmp(tok, "-cl-", 4) || !strcmp(tok, "-w") || !strcmp(tok, "-Werror") ||
		    !strcmp(tok, "-g"))
			continue;
		snprintf(bad, badcap, "%s", tok);
		return 0;
	}
	return 1;
}

#endif
