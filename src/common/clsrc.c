/* clsrc.c: OpenCL C sources as the preprocessor reads them (clsrc.h). */
#include "clsrc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *clsrc_splice(const char *src, char *why, size_t cap)
{
	size_t n = strlen(src);
	int line = 1;
	for (size_t i = 0; i < n; i++) {
		line += src[i] == '\n';
		if (src[i] == '?' && src[i + 1] == '?' && src[i + 2] &&
		    strchr("=/'()!<>-", src[i + 2])) {
			snprintf(why, cap, "line %d: trigraph ??%c", line, src[i + 2]);
			return NULL;
		}
		if (src[i] == '\\') {
			size_t j = i + 1;
			while (src[j] == ' ' || src[j] == '\t' || src[j] == '\f' ||
			       src[j] == '\v' || (src[j] == '\r' && src[j + 1] != '\n'))
				j++;
			if (j > i + 1 &&
			    (src[j] == '\n' || (src[j] == '\r' && src[j + 1] == '\n'))) {
				snprintf(why, cap,
					 "line %d: a backslash separated from its newline by white "
					 "space",
					 line);
				return NULL;
			}
		}
	}
	char *t = xmalloc(n + 1), *o = t;
	for (size_t i = 0; i < n; i++) {
		if (src[i] == '\\' && src[i + 1] == '\n') {
			i++;
			continue;
		}
		if (src[i] == '\\' && src[i + 1] == '\r' && src[i + 2] == '\n') {
			i += 2;
			continue;
		}
		*o++ = src[i];
	}
	*o = 0;
	return t;
}

/* Append the identifiers of t (comments and string literals skipped) to
 * ids (space-separated); 1 if t holds a token-pasting operator (## or %:%:). */
static int collect_idents(const char *t, struct util_buf *ids)
{
	int paste = 0;
	for (size_t i = 0; t[i];) {
		char c = t[i];
		if (c == '/' && t[i + 1] == '*') {
			for (i += 2; t[i] && !(t[i] == '*' && t[i + 1] == '/'); i++)
				;
			i += t[i] ? 2 : 0;
		} else if (c == '/' && t[i + 1] == '/') {
			while (t[i] && t[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			for (i++; t[i] && t[i] != c && t[i] != '\n'; i++)
				if (t[i] == '\\' && t[i + 1])
					i++;
			i += t[i] == c;
		} else if ((c == '#' && t[i + 1] == '#') ||
			   (c == '%' && t[i + 1] == ':' && t[i + 2] == '%' && t[i + 3] == ':')) {
			paste = 1;
			i += c == '#' ? 2 : 4;
		} else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			size_t s = i;
			while (t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') ||
			       (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9'))
				i++;
			util_buf_add(ids, t + s, i - s);
			util_buf_putc(ids, ' ');
		} else if (c >= '0' && c <= '9') {
			while (t[i] == '.' || t[i] == '_' || (t[i] >= '0' && t[i] <= '9') ||
			       (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z'))
				i++; /* a pp-number: its letters are not an identifier */
		} else {
			i++;
		}
	}
	return paste;
}

/* 1 if word can be written as a concatenation of the identifiers in ids
 * (each usable any number of times): what token pasting could build. */
static int composable(const char *word, const char *ids)
{
	size_t n = strlen(word);
	char ok[16] = {1}; /* ok[k]: word[0..k) can be built */
	for (size_t k = 0; k < n; k++) {
		if (!ok[k])
			continue;
		for (const char *p = ids; *p;) {
			size_t l = strcspn(p, " ");
			if (l && k + l <= n && !strncmp(word + k, p, l))
				ok[k + l] = 1;
			p += l + (p[l] == ' ');
		}
	}
	return ok[n];
}

/* 1 if the space-separated ids hold word as a whole identifier. */
static int has_ident(const char *ids, const char *word)
{
	size_t m = strlen(word);
	for (const char *p = ids; *p;) {
		size_t l = strcspn(p, " ");
		if (l == m && !strncmp(p, word, m))
			return 1;
		p += l + (p[l] == ' ');
	}
	return 0;
}

/* The line in t of the first whole-identifier use of word (1 if none). */
static int line_of_word(const char *t, const char *word)
{
	size_t m = strlen(word);
	for (const char *q = t; (q = strstr(q, word)); q += m) {
		int pre = q > t && (q[-1] == '_' || isalnum((unsigned char)q[-1]));
		int post = q[m] == '_' || isalnum((unsigned char)q[m]);
		if (!pre && !post) {
			int line = 1;
			for (const char *r = t; r < q; r++)
				line += *r == '\n';
			return line;
		}
	}
	return 1;
}

int clsrc_inline_asm(const char *spliced, const char *options, char *which, size_t cap)
{
	static const char *const spellings[] = {"asm", "__asm", "__asm__", NULL};
	struct util_buf src_ids, opt_ids;
	util_buf_init_cap(&src_ids, 8u << 20);
	util_buf_init_cap(&opt_ids, 1u << 20);
	int paste = collect_idents(spliced, &src_ids);
	paste |= collect_idents(options ? options : "", &opt_ids);
	util_buf_add(&src_ids, "", 0);
	util_buf_add(&opt_ids, "", 0);
	int line = 0;
	if (src_ids.over || opt_ids.over) {
		snprintf(which, cap, "%s", "a source too large to check for inline assembly");
		line = 1;
	}
	for (int k = 0; spellings[k] && !line; k++) {
		if (has_ident(src_ids.s, spellings[k]))
			line = line_of_word(spliced, spellings[k]);
		else if (has_ident(opt_ids.s, spellings[k]))
			line = 1;
		if (line)
			snprintf(which, cap, "inline assembly (%s)", spellings[k]);
	}
	if (!line && paste) {
		util_buf_add(&src_ids, opt_ids.s, strlen(opt_ids.s));
		util_buf_add(&src_ids, "", 0);
		for (int k = 0; spellings[k] && !line; k++)
			if (composable(spellings[k], src_ids.s)) {
				snprintf(which, cap,
					 "token pasting that can build inline assembly (%s)",
					 spellings[k]);
				line = 1;
			}
	}
	util_buf_free(&src_ids);
	util_buf_free(&opt_ids);
	return line;
}
