/* task.c: loading and checking one bank task (see task.h and
 * docs/task-format.md). task_load parses task.json strictly with jansson
 * (unknown fields, wrong types and bad values are errors naming the field),
 * parses every expression, evaluates every shape the task lists and reads
 * ref.c. It does not compile or run the reference: gold.c does. */
#include "task.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "jsonf.h"

#define TASK_JSON_CAP (1u << 20)  /* task.json */
#define TASK_REF_CAP (256u << 10) /* ref.c */
#define TASK_TEXT_CAP (64u << 10) /* description, torch */
#define TASK_PARAM_MAX (INT64_C(1) << 40)
#define TASK_CHECK_NUMEL_CAP (INT64_C(1) << 27) /* per tensor, on check shapes */

static const char *const task_known_libs[] = {"cublas", "cublaslt", "cudnn"};

/* ---- errors -------------------------------------------------------------- */

struct loader {
	struct jsonf jf; /* file "<dir>/task.json" */
	struct ka_err *e;
	struct ka_task *t;
};

static int is_ident(const char *s)
{
	if (!s[0] || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return 0;
	size_t n = 0;
	for (; s[n]; n++) {
		char ch = s[n];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			return 0;
	}
	return n < KA_NAMELEN;
}

/* ---- field parsers ------------------------------------------------------- */

/* An expression: a string or a non-negative integer. */
static int get_expr(struct loader *c, const char *field, const json_t *j, struct expr **out)
{
	char buf[32];
	const char *text;
	if (json_is_integer(j)) {
		if (json_integer_value(j) < 0)
			return jsonf_bad(&c->jf, field, "negative integer %lld",
					 (long long)json_integer_value(j));
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(j));
		text = buf;
	} else if (json_is_string(j)) {
		text = json_string_value(j);
		if (strlen(text) != json_string_length(j))
			return jsonf_bad(&c->jf, field, "string contains a NUL character");
	} else {
		return jsonf_bad(&c->jf, field,
				 "expected an expression (string or integer), got %s",
				 jsonf_kind(j));
	}
	struct ka_err pe;
	*out = expr_parse(text, c->t->params, c->t->n_params, &pe);
	if (!*out)
		return jsonf_bad(&c->jf, field, "cannot parse '%.80s': %s", text, pe.msg);
	return 0;
}

/* A shape object: exactly one integer in [1, 2^40] per parameter. */
static int get_shape(struct loader *c, const char *field, const json_t *j, struct ka_shape *sh)
{
	char f[96];
	struct ka_task *t = c->t;
	if (jsonf_type(&c->jf, field, j, JSON_OBJECT, "an object"))
		return -1;
	memset(sh, 0, sizeof *sh);
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)j, key, v)
	{
		int k = -1;
		for (int i = 0; i < t->n_params; i++)
			if (!strcmp(t->params[i], key))
				k = i;
		if (k < 0)
			return jsonf_bad(&c->jf, field, "unknown parameter '%.64s'", key);
		snprintf(f, sizeof f, "%s.%s", field, key);
		if (!json_is_integer(v))
			return jsonf_bad(&c->jf, f, "expected an integer, got %s", jsonf_kind(v));
		json_int_t x = json_integer_value(v);
		if (x < 1 || x > TASK_PARAM_MAX)
			return jsonf_bad(&c->jf, f, "%lld is out of range [1, 2^40]", (long long)x);
		sh->v[k] = x;
	}
	for (int i = 0; i < t->n_params; i++)
		if (!json_object_get(j, t->params[i]))
			return jsonf_bad(&c->jf, field, "missing parameter '%s'", t->params[i]);
	return 0;
}

/* The value checks of a distribution whose bounds are numbers (a, b):
 * uniform lo < hi; int lo <= hi, within +-2^53 and the integer dtype's range;
 * the largest value finite in dt. 0, or -1 with msg ("needs lo < hi"). The
 * std of a normal is checked by the parser. */
static int dist_values_check(enum ka_dtype dt, const struct ka_dist *d, char *msg, size_t cap)
{
	double a = d->a, b = d->b, bound;
	switch (d->kind) {
	case KA_DIST_NORMAL: bound = fabs(a) + 6 * b; break;
	case KA_DIST_UNIFORM:
		if (!(a < b))
			return snprintf(msg, cap, "needs lo < hi"), -1;
		bound = fmax(fabs(a), fabs(b));
		break;
	default:
		if (a > b)
			return snprintf(msg, cap, "needs lo <= hi"), -1;
		if (fabs(a) > 9007199254740992.0 || fabs(b) > 9007199254740992.0)
			return snprintf(msg, cap, "lo and hi must be within +-2^53"), -1;
		if (dt != KA_DTYPE_INT64 && dtype_is_int(dt)) {
			double dlo, dhi;
			dtype_int_range(dt, &dlo, &dhi);
			if (a < dlo || b > dhi)
				return snprintf(msg, cap, "range does not fit %s", dtype_name(dt)),
				       -1;
		}
		bound = fmax(fabs(a), fabs(b));
		break;
	}
	double dmax = dt == KA_DTYPE_FP16 ? 65504.0 : 3.0e38;
	if (bound > dmax)
		return snprintf(msg, cap, "values up to %g overflow %s", bound, dtype_name(dt)), -1;
	return 0;
}

/* One bound of a distribution (field "<dist>.<name>"): a number, or for kind
 * int an integer or an expression string over the parameters (*x set). */
static int get_bound(struct loader *c, const char *field, const json_t *j, int is_int, double *v,
		     struct expr **x)
{
	if (is_int && json_is_string(j))
		return get_expr(c, field, j, x);
	if (jsonf_number(&c->jf, field, j, -HUGE_VAL, HUGE_VAL, v))
		return -1;
	if (is_int && !json_is_integer(j))
		return jsonf_bad(&c->jf, field, "expected an integer or an expression string");
	return 0;
}

/* s->dist (and s->lo_x, s->hi_x) from j, for an input of dtype s->dtype. */
static int get_dist(struct loader *c, const char *field, const json_t *j, struct ka_tensor_spec *s)
{
	enum ka_dtype dt = s->dtype;
	struct ka_dist *d = &s->dist;
	static const char *const req_kind[] = {"kind", NULL};
	static const char *const any_keys[] = {"kind", "mean", "std", "lo", "hi", NULL};
	static const char *const normal_keys[] = {"kind", "mean", "std", NULL};
	static const char *const range_keys[] = {"kind", "lo", "hi", NULL};
	char f[192], msg[128];
	if (jsonf_type(&c->jf, field, j, JSON_OBJECT, "an object"))
		return -1;
	if (jsonf_keys(&c->jf, field, j, any_keys, req_kind))
		return -1;
	json_t *k = json_object_get(j, "kind");
	snprintf(f, sizeof f, "%s.kind", field);
	if (jsonf_type(&c->jf, f, k, JSON_STRING, "a string"))
		return -1;
	const char *kind = json_string_value(k);
	if (!strcmp(kind, "normal")) {
		d->kind = KA_DIST_NORMAL;
		if (jsonf_keys(&c->jf, field, j, normal_keys, normal_keys))
			return -1;
	} else if (!strcmp(kind, "uniform") || !strcmp(kind, "int")) {
		d->kind = kind[0] == 'u' ? KA_DIST_UNIFORM : KA_DIST_INT;
		if (jsonf_keys(&c->jf, field, j, range_keys, range_keys))
			return -1;
	} else {
		return jsonf_bad(&c->jf, f, "unknown distribution '%.32s' (normal, uniform or int)",
				 kind);
	}
	if (dtype_is_int(dt) && d->kind != KA_DIST_INT)
		return jsonf_bad(&c->jf, f, "%s %s input needs kind 'int'",
				 dtype_name(dt)[0] == 'i' ? "an" : "a", dtype_name(dt));
	const char *na = d->kind == KA_DIST_NORMAL ? "mean" : "lo";
	const char *nb = d->kind == KA_DIST_NORMAL ? "std" : "hi";
	int is_int = d->kind == KA_DIST_INT;
	snprintf(f, sizeof f, "%s.%s", field, na);
	if (get_bound(c, f, json_object_get(j, na), is_int, &d->a, &s->lo_x))
		return -1;
	snprintf(f, sizeof f, "%s.%s", field, nb);
	if (get_bound(c, f, json_object_get(j, nb), is_int, &d->b, &s->hi_x))
		return -1;
	if (d->kind == KA_DIST_NORMAL && d->b < 0)
		return jsonf_bad(&c->jf, f, "std must not be negative");
	if (s->lo_x || s->hi_x) { /* checked at every shape by task_check_shape */
		d->a = s->lo_x ? NAN : d->a;
		d->b = s->hi_x ? NAN : d->b;
		return 0;
	}
	if (dist_values_check(dt, d, msg, sizeof msg))
		return jsonf_bad(&c->jf, field, "%s", msg);
	struct gen_params gp;
	struct ka_err ge;
	if (gen_params_of(d, &gp, &ge))
		return jsonf_bad(&c->jf, field, "%s", ge.msg);
	return 0;
}

static int get_tensor(struct loader *c, const char *field, const json_t *j, int is_input,
		      struct ka_tensor_spec *s)
{
	static const char *const in_keys[] = {"name", "dtype", "shape", "dist", NULL};
	static const char *const out_keys[] = {"name", "dtype", "shape", "per_item", NULL};
	const char *const *keys = is_input ? in_keys : out_keys;
	char f[128];
	if (jsonf_type(&c->jf, field, j, JSON_OBJECT, "an object"))
		return -1;
	if (jsonf_keys(&c->jf, field, j, keys, keys))
		return -1;
	json_t *n = json_object_get(j, "name");
	snprintf(f, sizeof f, "%s.name", field);
	if (jsonf_type(&c->jf, f, n, JSON_STRING, "a string"))
		return -1;
	if (!is_ident(json_string_value(n)))
		return jsonf_bad(&c->jf, f, "'%.40s' is not an identifier of at most %d characters",
				 json_string_value(n), KA_NAMELEN - 1);
	snprintf(s->name, sizeof s->name, "%s", json_string_value(n));
	json_t *dt = json_object_get(j, "dtype");
	snprintf(f, sizeof f, "%s.dtype", field);
	if (jsonf_type(&c->jf, f, dt, JSON_STRING, "a string"))
		return -1;
	if (dtype_parse(json_string_value(dt), &s->dtype))
		return jsonf_bad(&c->jf, f, "unknown dtype '%.32s'", json_string_value(dt));
	json_t *sh = json_object_get(j, "shape");
	snprintf(f, sizeof f, "%s.shape", field);
	if (jsonf_type(&c->jf, f, sh, JSON_ARRAY, "an array"))
		return -1;
	size_t nd = json_array_size(sh);
	if (nd < 1 || nd > KA_MAX_DIMS)
		return jsonf_bad(&c->jf, f, "%zu dimensions, expected 1 to %d", nd, KA_MAX_DIMS);
	for (size_t d = 0; d < nd; d++) {
		snprintf(f, sizeof f, "%s.shape[%zu]", field, d);
		if (get_expr(c, f, json_array_get(sh, d), &s->shape[d]))
			return -1;
		s->ndim = (int)d + 1;
	}
	if (is_input) {
		snprintf(f, sizeof f, "%s.dist", field);
		return get_dist(c, f, json_object_get(j, "dist"), s);
	}
	snprintf(f, sizeof f, "%s.per_item", field);
	return get_expr(c, f, json_object_get(j, "per_item"), &s->per_item);
}

static int get_tensors(struct loader *c, const char *field, const json_t *j, int is_input)
{
	struct ka_task *t = c->t;
	char f[64];
	if (jsonf_type(&c->jf, field, j, JSON_ARRAY, "an array"))
		return -1;
	size_t n = json_array_size(j);
	if (n < 1 || n > KA_MAX_TENSORS)
		return jsonf_bad(&c->jf, field, "%zu entries, expected 1 to %d", n, KA_MAX_TENSORS);
	for (size_t i = 0; i < n; i++) {
		snprintf(f, sizeof f, "%s[%zu]", field, i);
		struct ka_tensor_spec *s = is_input ? &t->inputs[i] : &t->outputs[i];
		if (is_input)
			t->n_inputs = (int)i + 1;
		else
			t->n_outputs = (int)i + 1;
		if (get_tensor(c, f, json_array_get(j, i), is_input, s))
			return -1;
		/* Names are unique over parameters, inputs and outputs. */
		for (int p = 0; p < t->n_params; p++)
			if (!strcmp(t->params[p], s->name))
				return jsonf_bad(&c->jf, f, "name '%s' is also a parameter",
						 s->name);
		for (int p = 0; p < t->n_scalars; p++)
			if (!strcmp(t->scalar_names[p], s->name))
				return jsonf_bad(&c->jf, f, "name '%s' is also a scalar", s->name);
		int n_prev_in = is_input ? (int)i : t->n_inputs;
		for (int k = 0; k < n_prev_in; k++)
			if (!strcmp(t->inputs[k].name, s->name))
				return jsonf_bad(&c->jf, f, "duplicate tensor name '%s'", s->name);
		for (int k = 0; !is_input && k < (int)i; k++)
			if (!strcmp(t->outputs[k].name, s->name))
				return jsonf_bad(&c->jf, f, "duplicate tensor name '%s'", s->name);
	}
	return 0;
}

/* ---- evaluating shapes --------------------------------------------------- */

static void shape_label(const struct ka_task *t, int which, char *buf, size_t cap)
{
	char s[256];
	const struct ka_shape *sh = which < 0 ? &t->bench : &t->checks[which];
	task_shape_str(t, sh, s, sizeof s);
	if (which < 0)
		snprintf(buf, cap, "bench (%s)", s);
	else
		snprintf(buf, cap, "checks[%d] (%s)", which, s);
}

/* Evaluate x; errors are "field: 'text': problem". */
static int eval_field(const struct expr *x, const struct ka_shape *sh, const char *field,
		      int64_t *out, struct ka_err *e)
{
	struct ka_err ee;
	if (expr_eval(x, sh->v, out, &ee))
		return ka_err_set(e, "%s: '%.80s': %s", field, expr_text(x), ee.msg);
	return 0;
}

static void tensor_field(const struct ka_task *t, const struct ka_tensor_spec *s, char *buf,
			 size_t cap)
{
	if (s >= t->inputs && s < t->inputs + KA_MAX_TENSORS)
		snprintf(buf, cap, "inputs[%d]", (int)(s - t->inputs));
	else if (s >= t->outputs && s < t->outputs + KA_MAX_TENSORS)
		snprintf(buf, cap, "outputs[%d]", (int)(s - t->outputs));
	else
		snprintf(buf, cap, "%s", s->name);
}

static int tensor_dims(const struct ka_task *t, const struct ka_tensor_spec *s,
		       const struct ka_shape *sh, int64_t *dims, int64_t *numel, struct ka_err *e)
{
	char base[32], f[64];
	tensor_field(t, s, base, sizeof base);
	int64_t n = 1;
	for (int d = 0; d < s->ndim; d++) {
		snprintf(f, sizeof f, "%s.shape[%d]", base, d);
		int64_t v;
		if (eval_field(s->shape[d], sh, f, &v, e))
			return -1;
		if (v < 0)
			return ka_err_set(e, "%s: '%.80s': negative size %lld", f,
					  expr_text(s->shape[d]), (long long)v);
		if (dims)
			dims[d] = v;
		if (__builtin_mul_overflow(n, v, &n))
			return ka_err_set(e, "%s.shape: element count overflows int64", base);
	}
	int64_t bytes;
	if (__builtin_mul_overflow(n, (int64_t)dtype_size(s->dtype), &bytes))
		return ka_err_set(e, "%s.shape: size in bytes overflows int64", base);
	*numel = n;
	return 0;
}

int task_numel(const struct ka_task *t, const struct ka_tensor_spec *s, const struct ka_shape *sh,
	       int64_t *out, struct ka_err *e)
{
	return tensor_dims(t, s, sh, NULL, out, e);
}

int task_item_dims(const struct ka_task *t, const struct ka_shape *sh, int64_t *dims,
		   struct ka_err *e)
{
	char f[32];
	for (int d = 0; d < t->n_item_dims; d++) {
		snprintf(f, sizeof f, "items[%d]", d);
		if (eval_field(t->items[d], sh, f, &dims[d], e))
			return -1;
		if (dims[d] < 1)
			return ka_err_set(e, "%s: '%.80s': %lld items, expected at least 1", f,
					  expr_text(t->items[d]), (long long)dims[d]);
	}
	return 0;
}

int task_item_count(const struct ka_task *t, const struct ka_shape *sh, int64_t *out,
		    struct ka_err *e)
{
	int64_t dims[KA_MAX_DIMS], n = 1;
	if (task_item_dims(t, sh, dims, e))
		return -1;
	for (int d = 0; d < t->n_item_dims; d++)
		if (__builtin_mul_overflow(n, dims[d], &n))
			return ka_err_set(e, "items: item count overflows int64");
	*out = n;
	return 0;
}

int task_dist_at(const struct ka_task *t, int k, const struct ka_shape *sh, struct ka_dist *out,
		 struct ka_err *e)
{
	if (k < 0 || k >= t->n_inputs)
		return ka_err_set(e, "inputs[%d]: no such input", k);
	const struct ka_tensor_spec *s = &t->inputs[k];
	char f[64], msg[128];
	*out = s->dist;
	if (!s->lo_x && !s->hi_x)
		return 0;
	struct expr *const xs[2] = {s->lo_x, s->hi_x};
	double *vs[2] = {&out->a, &out->b};
	for (int i = 0; i < 2; i++) {
		int64_t v;
		snprintf(f, sizeof f, "inputs[%d].dist.%s", k, i ? "hi" : "lo");
		if (xs[i] && eval_field(xs[i], sh, f, &v, e))
			return -1;
		if (xs[i])
			*vs[i] = (double)v;
	}
	if (dist_values_check(s->dtype, out, msg, sizeof msg))
		return ka_err_set(e, "inputs[%d].dist: %s (lo %.0f, hi %.0f)", k, msg, out->a,
				  out->b);
	return 0;
}

int task_check_shape(const struct ka_task *t, const struct ka_shape *sh, int64_t numel_cap,
		     struct ka_err *e)
{
	char f[64];
	int64_t n, items = 0, v;
	for (int p = 0; p < t->n_params; p++)
		if (sh->v[p] < 1)
			return ka_err_set(e, "%s: %lld is below 1", t->params[p],
					  (long long)sh->v[p]);
	for (int k = 0; k < t->n_constraints; k++) {
		snprintf(f, sizeof f, "constraints[%d]", k);
		if (eval_field(t->constraints[k], sh, f, &v, e))
			return -1;
		if (v != 0)
			return ka_err_set(e, "%s: '%.80s' is %lld, must be 0", f,
					  expr_text(t->constraints[k]), (long long)v);
	}
	if (task_item_count(t, sh, &items, e))
		return -1;
	for (int k = 0; k < t->n_inputs; k++) {
		struct ka_dist d;
		if (task_dist_at(t, k, sh, &d, e))
			return -1;
		if (task_numel(t, &t->inputs[k], sh, &n, e))
			return -1;
		if (numel_cap > 0 && n > numel_cap)
			return ka_err_set(e,
					  "inputs[%d].shape: %lld elements, over the cap of %lld",
					  k, (long long)n, (long long)numel_cap);
	}
	for (int k = 0; k < t->n_outputs; k++) {
		const struct ka_tensor_spec *s = &t->outputs[k];
		if (task_numel(t, s, sh, &n, e))
			return -1;
		if (numel_cap > 0 && n > numel_cap)
			return ka_err_set(e,
					  "outputs[%d].shape: %lld elements, over the cap of %lld",
					  k, (long long)n, (long long)numel_cap);
		snprintf(f, sizeof f, "outputs[%d].per_item", k);
		if (eval_field(s->per_item, sh, f, &v, e))
			return -1;
		int64_t owned;
		if (v < 1)
			return ka_err_set(e, "%s: '%.80s': %lld, expected at least 1", f,
					  expr_text(s->per_item), (long long)v);
		if (__builtin_mul_overflow(v, items, &owned) || owned != n)
			return ka_err_set(e,
					  "%s: %lld items x %lld elements each does not cover the "
					  "%lld elements of '%s'",
					  f, (long long)items, (long long)v, (long long)n, s->name);
	}
	if (eval_field(t->min_bytes, sh, "min_bytes", &v, e))
		return -1;
	if (v < 0)
		return ka_err_set(e, "min_bytes: '%.80s': negative (%lld)", expr_text(t->min_bytes),
				  (long long)v);
	if (eval_field(t->min_flops, sh, "min_flops", &v, e))
		return -1;
	if (v < 0)
		return ka_err_set(e, "min_flops: '%.80s': negative (%lld)", expr_text(t->min_flops),
				  (long long)v);
	return task_baseline_workspace(t, sh, &v, e);
}

int task_baseline_workspace(const struct ka_task *t, const struct ka_shape *sh, int64_t *bytes,
			    struct ka_err *e)
{
	*bytes = 0;
	if (!t->baseline_ws)
		return 0;
	if (eval_field(t->baseline_ws, sh, "baseline_workspace", bytes, e))
		return -1;
	if (*bytes < 0 || *bytes > TASK_MAX_BASELINE_WS)
		return ka_err_set(e, "baseline_workspace: '%.80s': %lld bytes, expected 0 to %lld",
				  expr_text(t->baseline_ws), (long long)*bytes,
				  (long long)TASK_MAX_BASELINE_WS);
	return 0;
}

/* ---- shapes as text ------------------------------------------------------ */

void task_shape_str(const struct ka_task *t, const struct ka_shape *sh, char *buf, size_t cap)
{
	size_t used = 0;
	if (cap)
		buf[0] = 0;
	for (int i = 0; i < t->n_params && used < cap; i++) {
		int w = snprintf(buf + used, cap - used, "%s%s=%lld", i ? "," : "", t->params[i],
				 (long long)sh->v[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

const char *task_shape_label(const char *name)
{
	return name[0] ? name : "(the fixed shape)";
}

int task_shape_parse(const struct ka_task *t, const char *text, struct ka_shape *sh,
		     struct ka_err *e)
{
	int seen[KA_MAX_PARAMS] = {0};
	memset(sh, 0, sizeof *sh);
	if (strlen(text) > 1024)
		return ka_err_set(e, "shape: text over the cap of 1024 characters");
	const char *p = text;
	while (*p) {
		const char *eq = strchr(p, '=');
		if (!eq)
			return ka_err_set(e, "shape '%.80s': expected NAME=VALUE at '%.40s'", text,
					  p);
		size_t nl = (size_t)(eq - p);
		int k = -1;
		for (int i = 0; i < t->n_params; i++)
			if (strlen(t->params[i]) == nl && !strncmp(t->params[i], p, nl))
				k = i;
		if (k < 0)
			return ka_err_set(e, "shape '%.80s': unknown parameter '%.*s'", text,
					  (int)(nl > 40 ? 40 : nl), p);
		if (seen[k])
			return ka_err_set(e, "shape '%.80s': parameter '%s' given twice", text,
					  t->params[k]);
		seen[k] = 1;
		const char *v = eq + 1;
		const char *end = strchr(v, ',');
		size_t vl = end ? (size_t)(end - v) : strlen(v);
		char num[32];
		if (vl == 0 || vl >= sizeof num)
			return ka_err_set(e, "shape '%.80s': bad value for '%s'", text,
					  t->params[k]);
		memcpy(num, v, vl);
		num[vl] = 0;
		int64_t x = 0;
		for (size_t i = 0; i < vl; i++) {
			if (num[i] < '0' || num[i] > '9' || __builtin_mul_overflow(x, 10, &x) ||
			    __builtin_add_overflow(x, num[i] - '0', &x))
				return ka_err_set(e, "shape '%.80s': bad value '%s' for '%s'", text,
						  num, t->params[k]);
		}
		if (x < 1 || x > TASK_PARAM_MAX)
			return ka_err_set(e, "shape '%.80s': %s=%lld is out of range [1, 2^40]",
					  text, t->params[k], (long long)x);
		sh->v[k] = x;
		p = end ? end + 1 : v + vl;
		if (end && !*p)
			return ka_err_set(e, "shape '%.80s': trailing ','", text);
	}
	for (int i = 0; i < t->n_params; i++)
		if (!seen[i])
			return ka_err_set(e, "shape '%.80s': missing parameter '%s'", text,
					  t->params[i]);
	return 0;
}

/* ---- loading ------------------------------------------------------------- */

static int load_params(struct loader *c, const json_t *j)
{
	struct ka_task *t = c->t;
	char f[32];
	if (jsonf_type(&c->jf, "params", j, JSON_ARRAY, "an array"))
		return -1;
	size_t n = json_array_size(j);
	if (n > KA_MAX_PARAMS)
		return jsonf_bad(&c->jf, "params", "%zu parameters, at most %d", n, KA_MAX_PARAMS);
	for (size_t i = 0; i < n; i++) {
		json_t *p = json_array_get(j, i);
		snprintf(f, sizeof f, "params[%zu]", i);
		if (jsonf_type(&c->jf, f, p, JSON_STRING, "a string"))
			return -1;
		const char *s = json_string_value(p);
		if (!is_ident(s))
			return jsonf_bad(&c->jf, f,
					 "'%.40s' is not an identifier of at most %d characters", s,
					 KA_NAMELEN - 1);
		if (!strcmp(s, "min") || !strcmp(s, "max"))
			return jsonf_bad(&c->jf, f, "'%s' is reserved", s);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(t->params[k], s))
				return jsonf_bad(&c->jf, f, "duplicate parameter '%s'", s);
		snprintf(t->params[i], KA_NAMELEN, "%s", s);
		t->n_params = (int)i + 1;
	}
	return 0;
}

/* "scalars": [{"name": "eps", "value": 1e-5}, ...], optional. */
static int load_scalars(struct loader *c, const json_t *j)
{
	static const char *const keys[] = {"name", "value", NULL};
	struct ka_task *t = c->t;
	char f[48];
	if (!j)
		return 0;
	if (jsonf_type(&c->jf, "scalars", j, JSON_ARRAY, "an array"))
		return -1;
	size_t n = json_array_size(j);
	if (n > KA_MAX_SCALARS)
		return jsonf_bad(&c->jf, "scalars", "%zu scalars, at most %d", n, KA_MAX_SCALARS);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(j, i), *nm;
		snprintf(f, sizeof f, "scalars[%zu]", i);
		if (jsonf_type(&c->jf, f, o, JSON_OBJECT, "an object") ||
		    jsonf_keys(&c->jf, f, o, keys, keys))
			return -1;
		nm = json_object_get(o, "name");
		snprintf(f, sizeof f, "scalars[%zu].name", i);
		if (jsonf_type(&c->jf, f, nm, JSON_STRING, "a string"))
			return -1;
		const char *s = json_string_value(nm);
		if (!is_ident(s))
			return jsonf_bad(&c->jf, f,
					 "'%.40s' is not an identifier of at most %d characters", s,
					 KA_NAMELEN - 1);
		for (int p = 0; p < t->n_params; p++)
			if (!strcmp(t->params[p], s))
				return jsonf_bad(&c->jf, f, "name '%s' is also a parameter", s);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(t->scalar_names[k], s))
				return jsonf_bad(&c->jf, f, "duplicate scalar '%s'", s);
		snprintf(f, sizeof f, "scalars[%zu].value", i);
		if (jsonf_number(&c->jf, f, json_object_get(o, "value"), -HUGE_VAL, HUGE_VAL,
				 &t->scalars[i]))
			return -1;
		if (!isfinite(t->scalars[i]))
			return jsonf_bad(&c->jf, f, "must be finite");
		snprintf(t->scalar_names[i], KA_NAMELEN, "%s", s);
		t->n_scalars = (int)i + 1;
	}
	return 0;
}

/* name, tier, description, torch and the optional baseline_torch of root
 * (a non-blank expression other than torch); 0, or -1 with c->e. */
static int load_names(struct loader *c, const json_t *root)
{
	struct ka_task *t = c->t;
	if (jsonf_string(&c->jf, "name", json_object_get(root, "name"), 64, &t->name))
		return -1;
	size_t nl = strlen(t->name);
	if (nl < 1 || nl > 31 || strspn(t->name, "abcdefghijklmnopqrstuvwxyz0123456789_") != nl)
		return jsonf_bad(&c->jf, "name", "'%.40s' must be 1 to 31 characters of [a-z0-9_]",
				 t->name);
	if (jsonf_string(&c->jf, "tier", json_object_get(root, "tier"), 8, &t->tier))
		return -1;
	if (strcmp(t->tier, "L1") && strcmp(t->tier, "L2") && strcmp(t->tier, "L3"))
		return jsonf_bad(&c->jf, "tier", "'%s' is not L1, L2 or L3", t->tier);
	if (jsonf_string(&c->jf, "description", json_object_get(root, "description"), TASK_TEXT_CAP,
			 &t->description) ||
	    jsonf_string(&c->jf, "torch", json_object_get(root, "torch"), TASK_TEXT_CAP, &t->torch))
		return -1;
	const json_t *bt = json_object_get(root, "baseline_torch");
	if (!bt)
		return 0;
	if (jsonf_string(&c->jf, "baseline_torch", bt, TASK_TEXT_CAP, &t->baseline_torch))
		return -1;
	if (t->baseline_torch[strspn(t->baseline_torch, " \t\n")] == 0)
		return jsonf_bad(&c->jf, "baseline_torch", "must not be blank");
	if (!strcmp(t->baseline_torch, t->torch))
		return jsonf_bad(
			&c->jf, "baseline_torch",
			"is the same as torch (leave it out: the baselines then mirror torch)");
	return 0;
}

/* The items array (1 to KA_MAX_DIMS expressions); 0, or -1 with c->e. */
static int load_items(struct loader *c, const json_t *items)
{
	struct ka_task *t = c->t;
	char f[64];
	if (jsonf_type(&c->jf, "items", items, JSON_ARRAY, "an array"))
		return -1;
	size_t ni = json_array_size(items);
	if (ni < 1 || ni > KA_MAX_DIMS)
		return jsonf_bad(&c->jf, "items", "%zu dimensions, expected 1 to %d", ni,
				 KA_MAX_DIMS);
	for (size_t i = 0; i < ni; i++) {
		snprintf(f, sizeof f, "items[%zu]", i);
		if (get_expr(c, f, json_array_get(items, i), &t->items[i]))
			return -1;
		t->n_item_dims = (int)i + 1;
	}
	return 0;
}

/* The checks array (2 to KA_MAX_SHAPES shapes); 0, or -1 with c->e. */
static int load_checks(struct loader *c, const json_t *checks)
{
	struct ka_task *t = c->t;
	char f[64];
	if (jsonf_type(&c->jf, "checks", checks, JSON_ARRAY, "an array"))
		return -1;
	size_t nc = json_array_size(checks);
	if (nc < 2 || nc > KA_MAX_SHAPES)
		return jsonf_bad(&c->jf, "checks", "%zu check shapes, expected 2 to %d", nc,
				 KA_MAX_SHAPES);
	for (size_t i = 0; i < nc; i++) {
		snprintf(f, sizeof f, "checks[%zu]", i);
		if (get_shape(c, f, json_array_get(checks, i), &t->checks[i]))
			return -1;
		t->n_checks = (int)i + 1;
	}
	return 0;
}

/* The tolerance object (atol, rtol, neither negative); 0, or -1 with c->e. */
static int load_tolerance(struct loader *c, const json_t *tol)
{
	struct ka_task *t = c->t;
	static const char *const tol_keys[] = {"atol", "rtol", NULL};
	if (jsonf_type(&c->jf, "tolerance", tol, JSON_OBJECT, "an object") ||
	    jsonf_keys(&c->jf, "tolerance", tol, tol_keys, tol_keys) ||
	    jsonf_number(&c->jf, "tolerance.atol", json_object_get(tol, "atol"), -HUGE_VAL,
			 HUGE_VAL, &t->atol) ||
	    jsonf_number(&c->jf, "tolerance.rtol", json_object_get(tol, "rtol"), -HUGE_VAL,
			 HUGE_VAL, &t->rtol))
		return -1;
	if (t->atol < 0)
		return jsonf_bad(&c->jf, "tolerance.atol", "must not be negative");
	if (t->rtol < 0)
		return jsonf_bad(&c->jf, "tolerance.rtol", "must not be negative");
	return 0;
}

/* The optional libraries array (known names, no duplicates); 0, or -1 with
 * c->e. */
static int load_libraries(struct loader *c, const json_t *libs)
{
	struct ka_task *t = c->t;
	char f[64];
	if (!libs)
		return 0;
	if (jsonf_type(&c->jf, "libraries", libs, JSON_ARRAY, "an array"))
		return -1;
	size_t nlib = json_array_size(libs);
	if (nlib > KA_MAX_LIBS)
		return jsonf_bad(&c->jf, "libraries", "%zu entries, at most %d", nlib, KA_MAX_LIBS);
	for (size_t i = 0; i < nlib; i++) {
		json_t *l = json_array_get(libs, i);
		snprintf(f, sizeof f, "libraries[%zu]", i);
		if (jsonf_type(&c->jf, f, l, JSON_STRING, "a string"))
			return -1;
		const char *s = json_string_value(l);
		int known = 0;
		for (size_t k = 0; k < sizeof task_known_libs / sizeof *task_known_libs; k++)
			known |= !strcmp(task_known_libs[k], s);
		if (!known)
			return jsonf_bad(&c->jf, f,
					 "unknown library '%.32s' (cublas, cublaslt, cudnn)", s);
		for (int k = 0; k < t->n_libs; k++)
			if (!strcmp(t->libs[k], s))
				return jsonf_bad(&c->jf, f, "duplicate library '%s'", s);
		snprintf(t->libs[t->n_libs++], KA_NAMELEN, "%s", s);
	}
	return 0;
}

/* The optional constraints array of expression strings; 0, or -1 with c->e. */
static int load_constraints(struct loader *c, const json_t *cons)
{
	struct ka_task *t = c->t;
	char f[64];
	if (!cons)
		return 0;
	if (jsonf_type(&c->jf, "constraints", cons, JSON_ARRAY, "an array"))
		return -1;
	size_t ncon = json_array_size(cons);
	if (ncon > KA_MAX_CONSTRAINTS)
		return jsonf_bad(&c->jf, "constraints", "%zu entries, at most %d", ncon,
				 KA_MAX_CONSTRAINTS);
	for (size_t i = 0; i < ncon; i++) {
		snprintf(f, sizeof f, "constraints[%zu]", i);
		if (!json_is_string(json_array_get(cons, i)))
			return jsonf_bad(&c->jf, f, "expected a string, got %s",
					 jsonf_kind(json_array_get(cons, i)));
		if (get_expr(c, f, json_array_get(cons, i), &t->constraints[i]))
			return -1;
		t->n_constraints = (int)i + 1;
	}
	return 0;
}

/* The bench and check shapes all evaluate cleanly and some check shape has
 * an odd size; 0, or -1 with c->e. */
static int check_shapes(struct loader *c)
{
	struct ka_task *t = c->t;
	for (int w = -1; w < t->n_checks; w++) {
		struct ka_err se;
		char label[320];
		const struct ka_shape *sh = w < 0 ? &t->bench : &t->checks[w];
		if (task_check_shape(t, sh, w < 0 ? 0 : TASK_CHECK_NUMEL_CAP, &se)) {
			shape_label(t, w, label, sizeof label);
			return ka_err_set(c->e, "%s: %s at %s", c->jf.file, se.msg, label);
		}
	}
	/* An odd size: a parameter value, or a dimension of a tensor (a task of
	 * fixed shapes has no parameters, "shape": [3, 5]). */
	int odd = 0;
	for (int w = 0; w < t->n_checks; w++) {
		for (int p = 0; p < t->n_params; p++)
			odd |= t->checks[w].v[p] % 8 != 0;
		for (int k = 0; k < t->n_inputs + t->n_outputs; k++) {
			const struct ka_tensor_spec *s =
				k < t->n_inputs ? &t->inputs[k] : &t->outputs[k - t->n_inputs];
			int64_t dims[KA_MAX_DIMS], n;
			if (tensor_dims(t, s, &t->checks[w], dims, &n, NULL) == 0)
				for (int d = 0; d < s->ndim; d++)
					odd |= dims[d] % 8 != 0;
		}
	}
	if (!odd)
		return jsonf_bad(&c->jf, "checks",
				 "no check shape has an odd size (a parameter value or a tensor "
				 "dimension that is not a multiple of 8)");
	return 0;
}

static int load_json(struct loader *c, const json_t *root)
{
	static const char *const keys[] = {"name",	"tier",		  "description",
					   "torch",	"baseline_torch", "params",
					   "inputs",	"outputs",	  "items",
					   "bench",	"checks",	  "tolerance",
					   "libraries", "min_bytes",	  "min_flops",
					   "scalars",	"constraints",	  "baseline_workspace",
					   NULL};
	static const char *const required[] = {
		"name",	 "tier",  "description", "torch",     "params",	   "inputs",	"outputs",
		"items", "bench", "checks",	 "tolerance", "min_bytes", "min_flops", NULL};
	struct ka_task *t = c->t;
	if (!json_is_object(root))
		return ka_err_set(c->e, "%s: top level: expected an object, got %s", c->jf.file,
				  jsonf_kind(root));
	if (jsonf_keys(&c->jf, "", root, keys, required) || load_names(c, root))
		return -1;
	if (load_params(c, json_object_get(root, "params")))
		return -1;
	if (load_scalars(c, json_object_get(root, "scalars")))
		return -1;
	if (get_tensors(c, "inputs", json_object_get(root, "inputs"), 1) ||
	    get_tensors(c, "outputs", json_object_get(root, "outputs"), 0))
		return -1;
	if (load_items(c, json_object_get(root, "items")) ||
	    get_shape(c, "bench", json_object_get(root, "bench"), &t->bench) ||
	    load_checks(c, json_object_get(root, "checks")) ||
	    load_tolerance(c, json_object_get(root, "tolerance")) ||
	    load_libraries(c, json_object_get(root, "libraries")))
		return -1;
	if (get_expr(c, "min_bytes", json_object_get(root, "min_bytes"), &t->min_bytes) ||
	    get_expr(c, "min_flops", json_object_get(root, "min_flops"), &t->min_flops))
		return -1;
	if (load_constraints(c, json_object_get(root, "constraints")))
		return -1;
	const json_t *bw = json_object_get(root, "baseline_workspace");
	if (bw && get_expr(c, "baseline_workspace", bw, &t->baseline_ws))
		return -1;
	/* Every listed shape must evaluate cleanly. */
	return check_shapes(c);
}

struct ka_task *task_load(const char *dir, struct ka_err *e)
{
	size_t dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	char *file = xasprintf("%.*s/task.json", (int)dl, dir);
	char *ref = xasprintf("%.*s/ref.c", (int)dl, dir);
	struct ka_task *t = xcalloc(1, sizeof *t);
	t->dir = xasprintf("%.*s", (int)dl, dir);
	struct loader c = {.jf = {.file = file, .e = e, .unknown_names_key = 1}, .e = e, .t = t};
	char *buf = NULL;
	size_t len = 0;
	json_t *root = NULL;
	int rc = -1;
	if (util_read_file(file, TASK_JSON_CAP, &buf, &len, e))
		goto done;
	json_error_t je;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		ka_err_set(e, "%s: line %d, column %d: invalid JSON: %s", file, je.line, je.column,
			   je.text);
		goto done;
	}
	if (load_json(&c, root))
		goto done;
	if (util_read_file(ref, TASK_REF_CAP, &t->ref_src, NULL, e))
		goto done;
	rc = 0;
done:
	json_decref(root);
	free(buf);
	free(file);
	free(ref);
	if (rc) {
		task_free(t);
		return NULL;
	}
	return t;
}

void task_free(struct ka_task *t)
{
	if (!t)
		return;
	free(t->dir);
	free(t->name);
	free(t->tier);
	free(t->description);
	free(t->torch);
	free(t->baseline_torch);
	for (int k = 0; k < KA_MAX_TENSORS; k++) {
		struct ka_tensor_spec *ss[2] = {&t->inputs[k], &t->outputs[k]};
		for (int w = 0; w < 2; w++) {
			for (int d = 0; d < KA_MAX_DIMS; d++)
				expr_free(ss[w]->shape[d]);
			expr_free(ss[w]->per_item);
			expr_free(ss[w]->lo_x);
			expr_free(ss[w]->hi_x);
		}
	}
	for (int d = 0; d < KA_MAX_DIMS; d++)
		expr_free(t->items[d]);
	expr_free(t->min_bytes);
	expr_free(t->baseline_ws);
	expr_free(t->min_flops);
	for (int k = 0; k < KA_MAX_CONSTRAINTS; k++)
		expr_free(t->constraints[k]);
	free(t->ref_src);
	free(t);
}

/* ---- identity ------------------------------------------------------------ */

/* The hash covers a canonical rendering of every parsed field plus the bytes
 * of ref.c, so reformatting task.json (spacing, key order) keeps the identity
 * and the generated inputs, while any change of meaning changes both. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	return util_hash64(s ? s : "", s ? strlen(s) + 1 : 1, h);
}

static uint64_t hash_i64(uint64_t h, int64_t v)
{
	return util_hash64(&v, sizeof v, h);
}

static uint64_t hash_f64(uint64_t h, double v)
{
	return util_hash64(&v, sizeof v, h);
}

static uint64_t hash_tensor(uint64_t h, const struct ka_tensor_spec *s, int is_input)
{
	h = hash_str(h, s->name);
	h = hash_i64(h, s->dtype);
	h = hash_i64(h, s->ndim);
	for (int d = 0; d < s->ndim; d++)
		h = hash_str(h, expr_text(s->shape[d]));
	if (is_input) {
		h = hash_i64(h, s->dist.kind);
		h = hash_f64(h, s->dist.a);
		h = hash_f64(h, s->dist.b);
		/* Hashed only when present: tasks with number bounds keep their
		 * identity from before expression bounds existed. */
		if (s->lo_x || s->hi_x) {
			h = hash_str(h, s->lo_x ? expr_text(s->lo_x) : "");
			h = hash_str(h, s->hi_x ? expr_text(s->hi_x) : "");
		}
	} else {
		h = hash_str(h, expr_text(s->per_item));
	}
	return h;
}

uint64_t task_hash(const struct ka_task *t)
{
	uint64_t h = 0x6b612d7461736bULL; /* "ka-task" */
	h = hash_str(h, t->name);
	h = hash_str(h, t->tier);
	h = hash_str(h, t->description);
	h = hash_str(h, t->torch);
	h = hash_i64(h, t->n_params);
	for (int i = 0; i < t->n_params; i++)
		h = hash_str(h, t->params[i]);
	h = hash_i64(h, t->n_inputs);
	for (int i = 0; i < t->n_inputs; i++)
		h = hash_tensor(h, &t->inputs[i], 1);
	h = hash_i64(h, t->n_outputs);
	for (int i = 0; i < t->n_outputs; i++)
		h = hash_tensor(h, &t->outputs[i], 0);
	h = hash_i64(h, t->n_item_dims);
	for (int i = 0; i < t->n_item_dims; i++)
		h = hash_str(h, expr_text(t->items[i]));
	h = util_hash64(t->bench.v, sizeof t->bench.v, h);
	h = hash_i64(h, t->n_checks);
	for (int i = 0; i < t->n_checks; i++)
		h = util_hash64(t->checks[i].v, sizeof t->checks[i].v, h);
	h = hash_f64(h, t->atol);
	h = hash_f64(h, t->rtol);
	h = hash_i64(h, t->n_libs);
	for (int i = 0; i < t->n_libs; i++)
		h = hash_str(h, t->libs[i]);
	h = hash_str(h, t->min_bytes ? expr_text(t->min_bytes) : "");
	if (t->baseline_ws) /* only when present: other tasks keep their hash */
		h = hash_str(h, expr_text(t->baseline_ws));
	if (t->baseline_torch) /* likewise */
		h = hash_str(h, t->baseline_torch);
	h = hash_str(h, t->min_flops ? expr_text(t->min_flops) : "");
	/* Hashed only when present, so tasks without them keep their identity
	 * (and their inputs) from before these fields existed. */
	if (t->n_scalars) {
		h = hash_i64(h, t->n_scalars);
		for (int i = 0; i < t->n_scalars; i++) {
			h = hash_str(h, t->scalar_names[i]);
			h = hash_f64(h, t->scalars[i]);
		}
	}
	if (t->n_constraints) {
		h = hash_i64(h, t->n_constraints);
		for (int i = 0; i < t->n_constraints; i++)
			h = hash_str(h, expr_text(t->constraints[i]));
	}
	return hash_str(h, t->ref_src);
}
