/* extract.c: fenced-block extraction from model replies (see extract.h). */
#include "extract.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define EXTRACT_TAGLEN 32

/* 3: the language itself, 2: a close relative, 1: untagged, 0: other. */
static int tag_rank(const char *tag, const char *lang)
{
	static const char *const cuda_own[] = {"cuda", "cu", "cuh", NULL};
	static const char *const cuda_near[] = {"c++", "cpp", "cxx", "cc", "c", "h", "hpp", NULL};
	static const char *const ocl_own[] = {"opencl", "cl", "ocl", "c", NULL};
	static const char *const ocl_near[] = {"c++", "cpp", "h", "opencl-c", NULL};
	static const char *const c_own[] = {"c", "h", NULL};
	static const char *const c_near[] = {"c++", "cpp",  "cc", "opencl",
					     "cl",  "cuda", "cu", NULL};
	if (!tag[0])
		return 1;
	if (!lang)
		return 2;
	const char *const *own = NULL, *const *near = NULL;
	if (!strcmp(lang, "cuda")) {
		own = cuda_own;
		near = cuda_near;
	} else if (!strcmp(lang, "opencl")) {
		own = ocl_own;
		near = ocl_near;
	} else if (!strcmp(lang, "c")) {
		own = c_own;
		near = c_near;
	} else {
		return strcmp(tag, lang) ? 0 : 3;
	}
	for (int i = 0; own[i]; i++)
		if (!strcmp(tag, own[i]))
			return 3;
	for (int i = 0; near[i]; i++)
		if (!strcmp(tag, near[i]))
			return 2;
	return 0;
}

/* If the line [p, end) is a fence (up to 3 spaces, then 3+ backticks or
 * tildes), return its run length and set *ch; else 0. */
static size_t fence_run(const char *p, const char *end, char *ch)
{
	int indent = 0;
	while (p < end && *p == ' ' && indent < 4) {
		p++;
		indent++;
	}
	if (indent > 3 || p >= end || (*p != '`' && *p != '~'))
		return 0;
	char c = *p;
	size_t n = 0;
	while (p + n < end && p[n] == c)
		n++;
	if (n < 3)
		return 0;
	*ch = c;
	return n;
}

/* Copy the reply with <think>...</think> sections blanked out (replaced by
 * a newline, so fences on either side stay on their own lines). */
static char *strip_think(const char *reply)
{
	const char *start = reply;
	/* A lone closing tag: everything before it was reasoning. */
	const char *close = strstr(reply, "</think>");
	const char *open = strstr(reply, "<think>");
	if (close && (!open || open > close)) {
		const char *last = close;
		while ((close = strstr(last + 8, "</think>")) && (!open || close < open))
			last = close;
		start = last + 8;
	}
	size_t n = strlen(start);
	char *out = xmalloc(n + 2);
	size_t k = 0;
	const char *p = start;
	while (*p) {
		const char *o = strstr(p, "<think>");
		if (!o) {
			size_t rest = strlen(p);
			memcpy(out + k, p, rest);
			k += rest;
			break;
		}
		memcpy(out + k, p, (size_t)(o - p));
		k += (size_t)(o - p);
		out[k++] = '\n';
		const char *c = strstr(o + 7, "</think>");
		if (!c)
			break; /* unterminated thinking: nothing after it counts */
		p = c + 8;
	}
	out[k] = 0;
	return out;
}

char *extract_code(const char *reply, const char *lang)
{
	if (!reply)
		return NULL;
	char *text = strip_think(reply);
	const char *best = NULL, *best_end = NULL;
	int best_rank = 0;

	const char *p = text, *end = text + strlen(text);
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = eol ? eol : end;
		char ch;
		size_t run = fence_run(p, line_end, &ch);
		if (!run) {
			p = eol ? eol + 1 : end;
			continue;
		}
		/* Opening fence: the info string's first word is the tag. */
		const char *q = p;
		while (*q == ' ')
			q++;
		q += run;
		while (q < line_end && (*q == ' ' || *q == '{' || *q == '.'))
			q++;
		char tag[EXTRACT_TAGLEN];
		size_t t = 0;
		while (q < line_end && !isspace((unsigned char)*q) && *q != '}' && *q != ',' &&
		       t + 1 < sizeof tag)
			tag[t++] = (char)tolower((unsigned char)*q++);
		tag[t] = 0;
		const char *body = eol ? eol + 1 : end;
		/* Find the closing fence: same character, at least as long, with
		 * nothing but spaces after it. */
		const char *body_end = end, *next = end;
		const char *r = body;
		while (r < end) {
			const char *reol = memchr(r, '\n', (size_t)(end - r));
			const char *rend = reol ? reol : end;
			char c2;
			size_t run2 = fence_run(r, rend, &c2);
			if (run2 >= run && c2 == ch) {
				const char *s = r;
				while (*s == ' ')
					s++;
				s += run2;
				while (s < rend && (*s == ' ' || *s == '\t' || *s == '\r'))
					s++;
				if (s == rend) {
					body_end = r;
					next = reol ? reol + 1 : end;
					break;
				}
			}
			r = reol ? reol + 1 : end;
		}
		int rank = tag_rank(tag, lang);
		if (rank > 0 && rank >= best_rank) {
			best = body;
			best_end = body_end;
			best_rank = rank;
		}
		p = next;
	}

	char *code = NULL;
	if (best) {
		size_t n = (size_t)(best_end - best);
		while (n > 0 && (best[n - 1] == '\n' || best[n - 1] == '\r'))
			n--;
		code = xmalloc(n + 2);
		memcpy(code, best, n);
		code[n] = '\n';
		code[n + 1] = 0;
	}
	free(text);
	return code;
}
