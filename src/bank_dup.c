/* bank_dup.c: normalised references and torch expressions, and the pairwise
 * comparison of two banks (see bank_dup.h). The tokeniser knows just enough
 * C (and Python) for this: identifiers, numbers, string and character
 * literals, comments, and one-character punctuation. */
#include "bank_dup.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "task.h"

#define DUP_MAX_NAMES 4096

/* Identifiers a reference keeps as they are: C keywords and the math
 * functions of the dialect (include/ka_ref.h); KA_ and ka_ names too. */
static const char *const dup_keep[] = {
	"auto",	    "break",  "case",	"char",	     "const",	 "continue",  "default",  "do",
	"double",   "else",   "enum",	"extern",    "float",	 "for",	      "goto",	  "if",
	"inline",   "int",    "long",	"register",  "restrict", "return",    "short",	  "signed",
	"sizeof",   "static", "struct", "switch",    "typedef",	 "union",     "unsigned", "void",
	"volatile", "while",  "_Bool",	"include",   "define",	 "ref",	      "acos",	  "asin",
	"atan",	    "cos",    "sin",	"tan",	     "acosh",	 "asinh",     "atanh",	  "cosh",
	"sinh",	    "tanh",   "exp",	"exp2",	     "expm1",	 "log",	      "log10",	  "log1p",
	"log2",	    "logb",   "cbrt",	"fabs",	     "sqrt",	 "erf",	      "erfc",	  "lgamma",
	"tgamma",   "ceil",   "floor",	"nearbyint", "rint",	 "round",     "trunc",	  "atan2",
	"pow",	    "hypot",  "fmod",	"remainder", "copysign", "nextafter", "fdim",	  "fmax",
	"fmin",	    "fma",    "ldexp",	"scalbn",    "abs",	 "INFINITY",  "NAN",	  NULL};

/* Renaming table: names seen so far, in order of first use. */
struct dup_names {
	int n;
	char *v[DUP_MAX_NAMES];
};

static int dup_rename(struct dup_names *nm, const char *id)
{
	for (int i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], id))
			return i;
	if (nm->n == DUP_MAX_NAMES)
		return DUP_MAX_NAMES;
	nm->v[nm->n] = xstrdup(id);
	return nm->n++;
}

static void dup_names_free(struct dup_names *nm)
{
	for (int i = 0; i < nm->n; i++)
		free(nm->v[i]);
	nm->n = 0;
}

static int dup_kept(const char *id)
{
	if (!strncmp(id, "KA_", 3) || !strncmp(id, "ka_", 3))
		return 1;
	for (int i = 0; dup_keep[i]; i++)
		if (!strcmp(dup_keep[i], id))
			return 1;
	return 0;
}

/* Tokenise s into b. rename(id, ctx) says whether an identifier is replaced. */
static void dup_tokens(const char *s, struct util_buf *b, int (*rename)(const char *, void *),
		       void *ctx)
{
	struct dup_names nm = {0};
	const char *p = s;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		if (isspace(c)) {
			p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			p = end ? end + 2 : p + strlen(p);
			continue;
		}
		const char *start = p;
		if (isalpha(c) || c == '_') {
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			char id[256];
			size_t len = (size_t)(p - start);
			if (len >= sizeof id)
				len = sizeof id - 1;
			memcpy(id, start, len);
			id[len] = 0;
			if (rename(id, ctx))
				util_buf_printf(b, "%s$%d", b->len ? " " : "", dup_rename(&nm, id));
			else
				util_buf_printf(b, "%s%s", b->len ? " " : "", id);
			continue;
		}
		if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
			while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
			       ((*p == '+' || *p == '-') && strchr("eEpP", p[-1])))
				p++;
		} else if (c == '"' || c == '\'') {
			p++;
			while (*p && *p != (char)c) {
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
			if (*p)
				p++;
		} else {
			p++;
		}
		if (b->len)
			util_buf_putc(b, ' ');
		util_buf_add(b, start, (size_t)(p - start));
	}
	dup_names_free(&nm);
}

static int dup_rename_c(const char *id, void *ctx)
{
	(void)ctx;
	return !dup_kept(id);
}

char *bank_dup_norm_c(const char *src)
{
	struct util_buf b;
	util_buf_init_cap(&b, BANK_DUP_SRC_CAP);
	dup_tokens(src, &b, dup_rename_c, NULL);
	char *s = util_buf_take(&b);
	return s ? s : xstrdup("");
}

struct dup_torch_ctx {
	const char *const *names;
	int n;
};

static int dup_rename_torch(const char *id, void *ctx)
{
	const struct dup_torch_ctx *c = ctx;
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], id))
			return 1;
	return 0;
}

/* Replace every occurrence of from by to in s (in place; to is not longer). */
static void dup_replace(char *s, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to);
	char *p = s;
	while ((p = strstr(p, from))) {
		memcpy(p, to, lt);
		memmove(p + lt, p + lf, strlen(p + lf) + 1);
		p += lt;
	}
}

char *bank_dup_norm_torch(const char *expr, const char *const *names, int n)
{
	struct util_buf b;
	util_buf_init_cap(&b, BANK_DUP_SRC_CAP);
	struct dup_torch_ctx ctx = {names, n};
	dup_tokens(expr, &b, dup_rename_torch, &ctx);
	char *s = util_buf_take(&b);
	if (!s)
		return xstrdup("");
	dup_replace(s, "torch . nn . functional .", "F .");
	dup_replace(s, "nn . functional .", "F .");
	return s;
}

/* One task's comparable forms. */
struct dup_task {
	char *dir, *name, *norm_c, *norm_torch;
};

static int dup_load(const char *bank, struct dup_task **out, int *n, struct ka_err *e)
{
	struct bank_list l = {0};
	if (bank_scan(bank, &l, e))
		return -1;
	struct dup_task *v = xcalloc((size_t)(l.n ? l.n : 1), sizeof *v);
	int rc = 0, k = 0;
	for (; k < l.n; k++) {
		struct ka_task *t = task_load(l.dirs[k], e);
		if (!t) {
			rc = -1;
			break;
		}
		const char *names[3 * KA_MAX_TENSORS + KA_MAX_PARAMS];
		int m = 0;
		for (int i = 0; i < t->n_params; i++)
			names[m++] = t->params[i];
		for (int i = 0; i < t->n_inputs; i++)
			names[m++] = t->inputs[i].name;
		for (int i = 0; i < t->n_outputs; i++)
			names[m++] = t->outputs[i].name;
		v[k].dir = xstrdup(l.dirs[k]);
		v[k].name = xstrdup(t->name);
		v[k].norm_c = bank_dup_norm_c(t->ref_src);
		v[k].norm_torch = bank_dup_norm_torch(t->torch, names, m);
		task_free(t);
	}
	bank_list_free(&l);
	*out = v;
	*n = k;
	return rc;
}

static void dup_free(struct dup_task *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].dir);
		free(v[i].name);
		free(v[i].norm_c);
		free(v[i].norm_torch);
	}
	free(v);
}

int bank_dup_check(const char *a, const char *b, struct util_buf *report, int *n_clash, int *n_a,
		   int *n_b, struct ka_err *e)
{
	struct dup_task *ta = NULL, *tb = NULL;
	int na = 0, nb = 0, rc = -1, clash = 0;
	if (dup_load(a, &ta, &na, e) || dup_load(b, &tb, &nb, e))
		goto done;
	for (int i = 0; i < na; i++) {
		for (int j = 0; j < nb; j++) {
			const char *why[3];
			int k = 0;
			if (!strcmp(ta[i].name, tb[j].name))
				why[k++] = "same name";
			if (!strcmp(ta[i].norm_c, tb[j].norm_c))
				why[k++] = "same normalised ref.c";
			if (!strcmp(ta[i].norm_torch, tb[j].norm_torch))
				why[k++] = "same normalised torch expression";
			for (int w = 0; w < k; w++)
				util_buf_printf(report, "%s: %s %s\n", why[w], ta[i].dir,
						tb[j].dir);
			clash += k;
		}
	}
	*n_clash = clash;
	*n_a = na;
	*n_b = nb;
	rc = 0;
done:
	dup_free(ta, na);
	dup_free(tb, nb);
	return rc;
}
