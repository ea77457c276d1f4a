/* target.c: the table of targets and what all targets share (see target.h). */
#include "target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- #include scan ---- */

/* Translation phases 1 and 2 as far as directives care: the trigraphs ??=
 * and ??/ and the digraph %: spelled '#' and '\', then line splices (also
 * before \r\n) removed. Trigraphs count even where the language has none
 * (gnu17, C++17): reading more directives than the compiler does is safe. */
static char *splice_lines(const char *t, size_t n, size_t *out_len)
{
	char *a = xmalloc(n + 1);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '?' && i + 2 < n && t[i + 1] == '?' &&
		    (t[i + 2] == '=' || t[i + 2] == '/')) {
			a[m++] = t[i + 2] == '=' ? '#' : '\\';
			i += 2;
		} else if (t[i] == '%' && i + 1 < n && t[i + 1] == ':') {
			a[m++] = '#';
			i++;
		} else {
			a[m++] = t[i];
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < m; i++) {
		if (a[i] == '\\' && i + 1 < m && a[i + 1] == '\n') {
			i++;
			continue;
		}
		if (a[i] == '\\' && i + 2 < m && a[i + 1] == '\r' && a[i + 2] == '\n') {
			i += 2;
			continue;
		}
		a[o++] = a[i];
	}
	a[o] = 0;
	*out_len = o;
	return a;
}

/* Length of the raw string literal prefix (R", LR", uR", UR", u8R") ending at
 * t[i] == '"', or 0. */
static size_t raw_prefix(const char *t, size_t i)
{
	if (i < 1 || t[i - 1] != 'R')
		return 0;
	size_t k = i - 1;
	if (k >= 2 && t[k - 2] == 'u' && t[k - 1] == '8')
		k -= 2;
	else if (k >= 1 && (t[k - 1] == 'L' || t[k - 1] == 'u' || t[k - 1] == 'U'))
		k -= 1;
	if (k > 0 && (isalnum((unsigned char)t[k - 1]) || t[k - 1] == '_'))
		return 0; /* part of a longer identifier: FOOR"..." is not a raw string */
	return i - k + 1;
}

/* Phase 3 as far as directives care: comments replaced by a space outside
 * string, character and raw string literals (gnu17 and C++ both have raw
 * strings). Newlines are kept so line numbers hold. */
static char *strip_comments(const char *t, size_t n, size_t *out_len)
{
	char *s = xmalloc(n + 1);
	size_t o = 0;
	char quote = 0;
	for (size_t i = 0; i < n; i++) {
		if (quote) {
			if (t[i] == '\\' && i + 1 < n) {
				s[o++] = t[i++];
				s[o++] = t[i];
				continue;
			}
			if (t[i] == quote || t[i] == '\n')
				quote = 0;
			s[o++] = t[i];
			continue;
		}
		if (t[i] == '"' && raw_prefix(t, i)) {
			/* R"delim( ... )delim": copied through, newlines and all */
			size_t d = i + 1, dl = 0;
			while (d + dl < n && dl < 16 && t[d + dl] != '(' && t[d + dl] != '\n')
				dl++;
			if (d + dl < n && t[d + dl] == '(') {
				size_t j = d + dl + 1;
				while (j < n &&
				       !(t[j] == ')' && j + 1 + dl < n &&
					 !memcmp(t + j + 1, t + d, dl) && t[j + 1 + dl] == '"'))
					j++;
				size_t end = j < n ? j + dl + 2 : n;
				for (size_t k = i; k < end; k++)
					s[o++] = t[k] == '\n' ? '\n' : 'r';
				i = end - 1;
				continue;
			}
		}
		if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
			size_t j = i + 2;
			while (j + 1 < n && !(t[j] == '*' && t[j + 1] == '/')) {
				if (t[j] == '\n')
					s[o++] = '\n';
				j++;
			}
			s[o++] = ' ';
			i = j + 1;
			continue;
		}
		if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
			while (i + 1 < n && t[i + 1] != '\n')
				i++;
			s[o++] = ' ';
			continue;
		}
		if (t[i] == '"' || t[i] == '\'')
			quote = t[i];
		s[o++] = t[i];
	}
	s[o] = 0;
	*out_len = o;
	return s;
}

/* p past white space and comments that end on this line (to eol). */
static size_t skip_blank(const char *s, size_t p, size_t eol)
{
	for (;;) {
		while (p < eol && isspace((unsigned char)s[p]))
			p++;
		if (p + 1 < eol && s[p] == '/' && s[p + 1] == '*') {
			size_t q = p + 2;
			while (q + 1 < eol && !(s[q] == '*' && s[q + 1] == '/'))
				q++;
			if (q + 1 >= eol)
				return p;
			p = q + 2;
			continue;
		}
		return p;
	}
}

/* The directive that may start at s[p] ('#' expected). 0 if it is not an
 * include-like directive or is allowed; -1 with why otherwise. */
static int check_directive(const char *s, size_t p, size_t eol, int line,
			   int (*allowed)(const char *name, const void *ctx), const void *ctx,
			   char *why, size_t cap)
{
	if (p >= eol || s[p] != '#')
		return 0;
	p = skip_blank(s, p + 1, eol);
	size_t w = p;
	while (w < eol && (isalnum((unsigned char)s[w]) || s[w] == '_'))
		w++;
	int is_inc = (w - p == 7 && !strncmp(s + p, "include", 7)) ||
		     (w - p == 12 && !strncmp(s + p, "include_next", 12)) ||
		     (w - p == 6 && !strncmp(s + p, "import", 6)) ||
		     (w - p == 5 && !strncmp(s + p, "embed", 5));
	if (!is_inc)
		return 0;
	p = skip_blank(s, w, eol);
	char name[256];
	size_t n = 0;
	int ok = p < eol && (s[p] == '<' || s[p] == '"');
	if (ok) {
		char close = s[p] == '<' ? '>' : '"';
		p++;
		while (p < eol && s[p] != close && n + 1 < sizeof name)
			name[n++] = s[p++];
		ok = p < eol && s[p] == close && n > 0;
	}
	name[n] = 0;
	if (!ok) {
		snprintf(why, cap,
			 "line %d: #include of a macro or a malformed name is not allowed", line);
		return -1;
	}
	if (name[0] == '/' || strstr(name, "..") || strchr(name, '\\')) {
		snprintf(why, cap,
			 "line %d: #include \"%s\": absolute paths and '..' are forbidden", line,
			 name);
		return -1;
	}
	if (!allowed(name, ctx)) {
		snprintf(why, cap, "line %d: #include <%s> is not an allowed header", line, name);
		return -1;
	}
	return 0;
}

/* Every line of s; at its start and, when after_comments, after each "*" "/"
 * on it (the end of a comment the other pass may have misread). */
static int scan_lines(const char *s, size_t len, int after_comments,
		      int (*allowed)(const char *name, const void *ctx), const void *ctx, char *why,
		      size_t cap)
{
	int line = 1;
	for (size_t i = 0; i < len; line++) {
		size_t eol = i;
		while (eol < len && s[eol] != '\n')
			eol++;
		if (check_directive(s, skip_blank(s, i, eol), eol, line, allowed, ctx, why, cap))
			return -1;
		for (size_t k = i; after_comments && k + 1 < eol; k++)
			if (s[k] == '*' && s[k + 1] == '/' &&
			    check_directive(s, skip_blank(s, k + 2, eol), eol, line, allowed, ctx,
					    why, cap))
				return -1;
		i = eol + 1;
	}
	return 0;
}

int target_object_too_big(const char *so, char *why, size_t cap)
{
	struct stat st;
	if (stat(so, &st) != 0 || (uint64_t)st.st_size <= TARGET_MAX_OBJECT)
		return 0;
	snprintf(why, cap,
		 "the compiled object is %lld bytes, over the cap of %u MiB (a large initialised "
		 "array?): not kept",
		 (long long)st.st_size, TARGET_MAX_OBJECT >> 20);
	unlink(so);
	return 1;
}

int target_check_includes(const char *text, size_t text_len,
			  int (*allowed)(const char *name, const void *ctx), const void *ctx,
			  char *why, size_t cap)
{
	/* Two readings, and a directive found by either is checked: comments
	 * stripped with literals respected (what the compiler does), and
	 * comments kept (so that a literal the scan misreads cannot hide a
	 * directive inside what it takes for a comment). The compiler's own list
	 * of the files it read is checked afterwards too (target_check_deps). */
	size_t len, clen;
	char *src = splice_lines(text, text_len, &len);
	char *code = strip_comments(src, len, &clen);
	int rc = scan_lines(code, clen, 0, allowed, ctx, why, cap);
	if (!rc)
		rc = scan_lines(src, len, 1, allowed, ctx, why, cap);
	free(code);
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
		snprintf(why, cap, "the compiler wrote no dependency list");
		return -1;
	}
	char *wcanon = realpath(workdir, NULL);
	int rc = 0;
	char *save = NULL;
	/* Make-style: "target: dep dep \\\n dep". Skip the target. */
	char *colon = strchr(text, ':');
	for (char *tok = strtok_r(colon ? colon + 1 : text, " \t\r\n\\", &save); tok && !rc;
	     tok = strtok_r(NULL, " \t\r\n\\", &save)) {
		if (tok[strlen(tok) - 1] == ':')
			continue; /* phony targets from -MP */
		char *path = tok[0] == '/' ? xstrdup(tok) : xasprintf("%s/%s", workdir, tok);
		char *canon = realpath(path, NULL);
		int ok = 0;
		if (canon) {
			size_t wl = wcanon ? strlen(wcanon) : 0;
			if (wcanon && !strncmp(canon, wcanon, wl) && canon[wl] == '/')
				ok = 1;
			for (int i = 0; !ok && system_dirs[i]; i++) {
				size_t sl = strlen(system_dirs[i]);
				if (sl && !strncmp(canon, system_dirs[i], sl) && canon[sl] == '/')
					ok = 1;
			}
		}
		if (!ok) {
			snprintf(why, cap, "the compilation read '%s', outside the allowed headers",
				 tok);
			rc = -1;
		}
		free(canon);
		free(path);
	}
	free(wcanon);
	free(text);
	return rc;
}
