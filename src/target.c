/* target.c: the table of targets and what all targets share (see target.h). */
#include "target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

extern const struct target_ops target_opencl;
extern const struct target_ops target_cuda __attribute__((weak));

const struct target_ops *target_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "opencl"))
		return &target_opencl;
	if (!strcmp(name, "cuda") && &target_cuda)
		return &target_cuda;
	return NULL;
}

void target_compiled_free(struct target_compiled *c)
{
	if (!c)
		return;
	free(c->so_path);
	free(c->module);
	json_decref(c->record_extra);
	memset(c, 0, sizeof *c);
}

void target_baseline_free(struct target_baseline *b)
{
	if (!b)
		return;
	free(b->plan_json);
	free(b->module);
	free(b->native);
	memset(b, 0, sizeof *b);
}

/* The C and C++ standard library headers a kernel file may use. */
static const char *const std_headers[] = {
	"assert.h", "float.h", "limits.h", "math.h", "stdbool.h", "stddef.h", "stdint.h",
	"stdio.h", "stdlib.h", "string.h", "inttypes.h", "stdalign.h", "stdarg.h",
	"cstdint", "cstddef", "cmath", "cstdio", "cstdlib", "cstring", "climits", "cfloat",
	"type_traits", "utility", "algorithm", "limits", "array", "cassert", NULL,
};

static int in_list(const char *name, const char *const *list)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

int target_check_includes(const char *text, size_t text_len, const char *const *allowed,
			  char *why, size_t why_cap)
{
	/* Undo line splices and spell the digraph %: and trigraph ??= as '#',
	 * so a directive cannot hide from the scan. The compiler's own list of
	 * the files it read is checked afterwards too (see the targets). */
	char *src = xmalloc(text_len + 1);
	size_t len = 0;
	for (size_t k = 0; k < text_len; k++) {
		if (text[k] == '\\' && k + 1 < text_len && text[k + 1] == '\n') {
			k++;
			continue;
		}
		if (text[k] == '%' && k + 1 < text_len && text[k + 1] == ':') {
			src[len++] = '#';
			k++;
			continue;
		}
		if (text[k] == '?' && k + 2 < text_len && text[k + 1] == '?' && text[k + 2] == '=') {
			src[len++] = '#';
			k += 2;
			continue;
		}
		src[len++] = text[k];
	}
	int rc = 0;
	size_t i = 0;
	int line = 1;
	while (i < len) {
		size_t eol = i;
		while (eol < len && src[eol] != '\n')
			eol++;
		size_t p = i;
		while (p < eol && isspace((unsigned char)src[p]))
			p++;
		if (p < eol && src[p] == '#') {
			p++;
			while (p < eol && isspace((unsigned char)src[p]))
				p++;
			if (eol - p >= 7 && !strncmp(src + p, "include", 7)) {
				p += 7;
				while (p < eol && isspace((unsigned char)src[p]))
					p++;
				char name[256];
				size_t n = 0;
				char close = p < eol && src[p] == '<' ? '>' : '"';
				if (p < eol && (src[p] == '<' || src[p] == '"')) {
					p++;
					while (p < eol && src[p] != close && n + 1 < sizeof name)
						name[n++] = src[p++];
				}
				name[n] = 0;
				if (!n) {
					snprintf(why, why_cap, "line %d: #include of a macro or "
							       "malformed name is not allowed", line);
					rc = -1;
					break;
				}
				if (name[0] == '/' || strstr(name, "..")) {
					snprintf(why, why_cap, "line %d: #include \"%s\": absolute "
							       "paths and '..' are forbidden", line, name);
					rc = -1;
					break;
				}
				if (!in_list(name, std_headers) && !in_list(name, allowed)) {
					snprintf(why, why_cap, "line %d: #include <%s> is not an "
							       "allowed header", line, name);
					rc = -1;
					break;
				}
			}
		}
		i = eol + 1;
		line++;
	}
	free(src);
	return rc;
}

int target_check_deps(const char *deps_path, const char *workdir, const char *const *system_dirs,
		      char *why, size_t cap)
{
	char *text = NULL;
	size_t len = 0;
	struct ka_err e;
	if (util_read_file(deps_path, 1 << 22, &text, &len, &e)) {
		snprintf(why, cap, "no dependency list from the compiler");
		return -1;
	}
	int rc = 0;
	char *save = NULL;
	/* Make-style: "target: dep dep \\\n dep". Skip the target. */
	char *colon = strchr(text, ':');
	char *p = colon ? colon + 1 : text;
	for (char *tok = strtok_r(p, " \t\r\n\\", &save); tok; tok = strtok_r(NULL, " \t\r\n\\", &save)) {
		if (tok[strlen(tok) - 1] == ':')
			continue; /* phony targets from -MP */
		char real[4096];
		const char *path = tok;
		if (tok[0] != '/') {
			snprintf(real, sizeof real, "%s/%s", workdir, tok);
			path = real;
		}
		char *canon = realpath(path, NULL);
		int ok = 0;
		if (canon) {
			size_t wl = strlen(workdir);
			if (!strncmp(canon, workdir, wl) && canon[wl] == '/')
				ok = 1;
			for (int i = 0; !ok && system_dirs[i]; i++) {
				size_t sl = strlen(system_dirs[i]);
				if (!strncmp(canon, system_dirs[i], sl) && canon[sl] == '/')
					ok = 1;
			}
		}
		if (!ok) {
			snprintf(why, cap, "the compilation read '%s', outside the allowed headers", tok);
			rc = -1;
			free(canon);
			break;
		}
		free(canon);
	}
	free(text);
	return rc;
}

