/* expr.c: parser and evaluator of integer shape expressions (see expr.h).
 * A recursive-descent parser builds a small tree; evaluation walks it with
 * checked int64 arithmetic. Errors carry the 0-based character position.
 * This module knows nothing about tasks: task.c supplies the names. */
#include "expr.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_TEXT 1024 /* cap on the source text */
#define EXPR_MAX_DEPTH 64  /* cap on nesting, so recursion stays bounded */

enum expr_op {
	EXPR_OP_INT,
	EXPR_OP_NAME,
	EXPR_OP_NEG,
	EXPR_OP_ADD,
	EXPR_OP_SUB,
	EXPR_OP_MUL,
	EXPR_OP_DIV,
	EXPR_OP_MOD,
	EXPR_OP_MIN,
	EXPR_OP_MAX,
};

struct expr_node {
	enum expr_op op;
	int64_t val; /* EXPR_OP_INT: the value; EXPR_OP_NAME: the name index */
	struct expr_node *l, *r;
};

struct expr {
	char *text;
	struct expr_node *root;
};

struct expr_parser {
	const char *s;
	size_t pos;
	const char (*names)[KA_NAMELEN];
	int n_names;
	int depth;
	struct ka_err *e;
	int failed;
};

static void node_free(struct expr_node *n)
{
	if (!n)
		return;
	node_free(n->l);
	node_free(n->r);
	free(n);
}

static struct expr_node *node_new(enum expr_op op, struct expr_node *l, struct expr_node *r)
{
	struct expr_node *n = xcalloc(1, sizeof *n);
	n->op = op;
	n->l = l;
	n->r = r;
	return n;
}

static void skip_ws(struct expr_parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

/* Record the first error only; later ones are consequences. */
static struct expr_node *fail_at(struct expr_parser *p, size_t pos, const char *what)
{
	if (!p->failed) {
		p->failed = 1;
		char c = p->s[pos];
		if (!c)
			ka_err_set(p->e, "%s at end", what);
		else if (isprint((unsigned char)c))
			ka_err_set(p->e, "%s '%c' at %zu", what, c, pos);
		else
			ka_err_set(p->e, "%s character 0x%02x at %zu", what, (unsigned char)c, pos);
	}
	return NULL;
}

static int is_name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static int is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static struct expr_node *parse_expr(struct expr_parser *p);

static int expect(struct expr_parser *p, char c)
{
	skip_ws(p);
	if (p->s[p->pos] != c) {
		char what[32];
		snprintf(what, sizeof what, "expected '%c', found", c);
		if (!p->s[p->pos]) {
			if (!p->failed) {
				p->failed = 1;
				ka_err_set(p->e, "expected '%c' at end", c);
			}
			return -1;
		}
		fail_at(p, p->pos, what);
		return -1;
	}
	p->pos++;
	return 0;
}

static struct expr_node *parse_atom(struct expr_parser *p)
{
	skip_ws(p);
	size_t start = p->pos;
	char c = p->s[start];
	if (isdigit((unsigned char)c)) {
		int64_t v = 0;
		while (isdigit((unsigned char)p->s[p->pos])) {
			int d = p->s[p->pos] - '0';
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v)) {
				if (!p->failed) {
					p->failed = 1;
					ka_err_set(p->e, "integer too large at %zu", start);
				}
				return NULL;
			}
			p->pos++;
		}
		if (is_name_char(p->s[p->pos]))
			return fail_at(p, p->pos, "unexpected");
		struct expr_node *n = node_new(EXPR_OP_INT, NULL, NULL);
		n->val = v;
		return n;
	}
	if (is_name_start(c)) {
		while (is_name_char(p->s[p->pos]))
			p->pos++;
		size_t len = p->pos - start;
		const char *w = p->s + start;
		if ((len == 3 && !strncmp(w, "min", 3)) || (len == 3 && !strncmp(w, "max", 3))) {
			enum expr_op op = w[1] == 'i' ? EXPR_OP_MIN : EXPR_OP_MAX;
			if (expect(p, '(') != 0)
				return NULL;
			struct expr_node *a = parse_expr(p);
			if (!a)
				return NULL;
			if (expect(p, ',') != 0) {
				node_free(a);
				return NULL;
			}
			struct expr_node *b = parse_expr(p);
			if (!b) {
				node_free(a);
				return NULL;
			}
			if (expect(p, ')') != 0) {
				node_free(a);
				node_free(b);
				return NULL;
			}
			return node_new(op, a, b);
		}
		for (int i = 0; i < p->n_names; i++) {
			if (strlen(p->names[i]) == len && !strncmp(p->names[i], w, len)) {
				struct expr_node *n = node_new(EXPR_OP_NAME, NULL, NULL);
				n->val = i;
				return n;
			}
		}
		if (!p->failed) {
			p->failed = 1;
			ka_err_set(p->e, "unknown name '%.*s' at %zu", (int)(len > 40 ? 40 : len),
				   w, start);
		}
		return NULL;
	}
	if (c == '(') {
		p->pos++;
		struct expr_node *n = parse_expr(p);
		if (!n)
			return NULL;
		if (expect(p, ')') != 0) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (!c) {
		if (!p->failed) {
			p->failed = 1;
			ka_err_set(p->e, "expected an operand at end");
		}
		return NULL;
	}
	return fail_at(p, start, "unexpected");
}

static struct expr_node *parse_unary(struct expr_parser *p)
{
	skip_ws(p);
	if (p->s[p->pos] == '-') {
		if (++p->depth > EXPR_MAX_DEPTH)
			return fail_at(p, p->pos, "nesting too deep");
		p->pos++;
		struct expr_node *a = parse_unary(p);
		p->depth--;
		return a ? node_new(EXPR_OP_NEG, a, NULL) : NULL;
	}
	return parse_atom(p);
}

static struct expr_node *parse_term(struct expr_parser *p)
{
	struct expr_node *l = parse_unary(p);
	while (l) {
		skip_ws(p);
		char c = p->s[p->pos];
		enum expr_op op;
		if (c == '*')
			op = EXPR_OP_MUL;
		else if (c == '/')
			op = EXPR_OP_DIV;
		else if (c == '%')
			op = EXPR_OP_MOD;
		else
			break;
		p->pos++;
		struct expr_node *r = parse_unary(p);
		if (!r) {
			node_free(l);
			return NULL;
		}
		l = node_new(op, l, r);
	}
	return l;
}

static struct expr_node *parse_expr(struct expr_parser *p)
{
	if (++p->depth > EXPR_MAX_DEPTH) {
		skip_ws(p);
		return fail_at(p, p->pos, "nesting too deep");
	}
	struct expr_node *l = parse_term(p);
	while (l) {
		skip_ws(p);
		char c = p->s[p->pos];
		if (c != '+' && c != '-')
			break;
		p->pos++;
		struct expr_node *r = parse_term(p);
		if (!r) {
			node_free(l);
			return NULL;
		}
		l = node_new(c == '+' ? EXPR_OP_ADD : EXPR_OP_SUB, l, r);
	}
	p->depth--;
	return l;
}

struct expr *expr_parse(const char *text, const char names[][KA_NAMELEN], int n, struct ka_err *e)
{
	if (!text)
		text = "";
	size_t len = strlen(text);
	if (len > EXPR_MAX_TEXT) {
		ka_err_set(e, "expression is %zu characters, over the cap of %d", len,
			   EXPR_MAX_TEXT);
		return NULL;
	}
	struct expr_parser p = {.s = text, .names = names, .n_names = n, .e = e};
	skip_ws(&p);
	if (!text[p.pos]) {
		ka_err_set(e, "empty expression");
		return NULL;
	}
	struct expr_node *root = parse_expr(&p);
	if (root) {
		skip_ws(&p);
		if (text[p.pos]) {
			fail_at(&p, p.pos, "unexpected");
			node_free(root);
			root = NULL;
		}
	}
	if (!root)
		return NULL;
	struct expr *x = xmalloc(sizeof *x);
	x->text = xstrdup(text);
	x->root = root;
	return x;
}

static int eval_node(const struct expr_node *n, const int64_t *vals, int64_t *out, struct ka_err *e)
{
	int64_t a, b;
	switch (n->op) {
	case EXPR_OP_INT: *out = n->val; return 0;
	case EXPR_OP_NAME: *out = vals[n->val]; return 0;
	case EXPR_OP_NEG:
		if (eval_node(n->l, vals, &a, e))
			return -1;
		if (__builtin_sub_overflow((int64_t)0, a, out))
			return ka_err_set(e, "overflow");
		return 0;
	default: break;
	}
	if (eval_node(n->l, vals, &a, e) || eval_node(n->r, vals, &b, e))
		return -1;
	switch (n->op) {
	case EXPR_OP_ADD:
		if (__builtin_add_overflow(a, b, out))
			return ka_err_set(e, "overflow");
		return 0;
	case EXPR_OP_SUB:
		if (__builtin_sub_overflow(a, b, out))
			return ka_err_set(e, "overflow");
		return 0;
	case EXPR_OP_MUL:
		if (__builtin_mul_overflow(a, b, out))
			return ka_err_set(e, "overflow");
		return 0;
	case EXPR_OP_DIV:
	case EXPR_OP_MOD:
		if (b == 0)
			return ka_err_set(e, "division by zero");
		if (a == INT64_MIN && b == -1)
			return ka_err_set(e, "overflow");
		*out = n->op == EXPR_OP_DIV ? a / b : a % b;
		return 0;
	case EXPR_OP_MIN: *out = a < b ? a : b; return 0;
	case EXPR_OP_MAX: *out = a > b ? a : b; return 0;
	default: return ka_err_set(e, "bad expression node");
	}
}

int expr_eval(const struct expr *x, const int64_t *vals, int64_t *out, struct ka_err *e)
{
	return eval_node(x->root, vals, out, e);
}

const char *expr_text(const struct expr *x)
{
	return x->text;
}

void expr_free(struct expr *x)
{
	if (!x)
		return;
	node_free(x->root);
	free(x->text);
	free(x);
}
