/* plan.c: the launch plan's JSON form and its structural checks (plan.h,
 * docs/plan-format.md). Everything read here comes from the recorder, which
 * ran candidate code: every count, index and size is bounded before use. */
#include "plan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_FORMAT "ka-plan/1"

static json_t *hex_of(const uint8_t *b, size_t n)
{
	char *s = xmalloc(2 * n + 1);
	util_hex(b, n, s);
	json_t *j = json_string(s);
	free(s);
	return j;
}

static json_t *ref_json(struct plan_ref r)
{
	return json_pack("{s:i,s:I}", "buf", (int)r.buf, "offset", (json_int_t)r.offset);
}

static json_t *dims_json(const uint64_t *d)
{
	return json_pack("[I,I,I]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

char *plan_write(const struct plan *p)
{
	json_t *root = json_object();
	json_object_set_new(root, "format", json_string(PLAN_FORMAT));
	json_object_set_new(root, "target", json_string(p->target));
	json_object_set_new(root, "status", json_integer(p->status));
	json_t *progs = json_array();
	for (int i = 0; i < p->n_programs; i++)
		json_array_append_new(progs, json_pack("{s:s,s:s}", "source",
						       p->sources[i] ? p->sources[i] : "",
						       "options", p->options[i]));
	json_object_set_new(root, "programs", progs);
	json_t *ks = json_array();
	for (int i = 0; i < p->n_kernels; i++) {
		const struct plan_kernel *k = &p->kernels[i];
		json_array_append_new(ks,
				      json_pack("{s:s,s:i,s:i,s:i}", "name", k->name, "program",
						k->program, "max_dynamic_smem",
						(int)k->max_dynamic_smem, "carveout", k->carveout));
	}
	json_object_set_new(root, "kernels", ks);
	json_t *ws = json_array();
	for (int i = 0; i < p->n_workspaces; i++)
		json_array_append_new(ws, json_integer((json_int_t)p->workspace[i]));
	json_object_set_new(root, "workspaces", ws);
	json_t *ops = json_array();
	for (int i = 0; i < p->n_ops; i++) {
		const struct plan_op *o = &p->ops[i];
		json_t *jo = json_object();
		switch (o->kind) {
		case PLAN_OP_LAUNCH: {
			json_object_set_new(jo, "op", json_string("launch"));
			json_object_set_new(jo, "kernel", json_integer(o->kernel));
			json_object_set_new(jo, "work_dim", json_integer(o->work_dim));
			json_object_set_new(jo, "grid", dims_json(o->grid));
			json_object_set_new(jo, "block", dims_json(o->block));
			json_object_set_new(jo, "goffset", dims_json(o->goffset));
			json_object_set_new(jo, "cluster",
					    json_pack("[i,i,i]", (int)o->cluster[0],
						      (int)o->cluster[1], (int)o->cluster[2]));
			json_object_set_new(jo, "smem", json_integer(o->smem));
			json_t *args = json_array();
			for (int a = 0; a < o->n_args; a++) {
				const struct plan_arg *g = &o->args[a];
				json_t *ja = json_object();
				if (g->kind == PLAN_ARG_BUFFER) {
					json_object_set_new(ja, "kind", json_string("buffer"));
					json_object_set_new(ja, "buf",
							    json_integer(g->relocs[0].ref.buf));
					json_object_set_new(
						ja, "offset",
						json_integer((json_int_t)g->relocs[0].ref.offset));
				} else if (g->kind == PLAN_ARG_LOCAL) {
					json_object_set_new(ja, "kind", json_string("local"));
					json_object_set_new(ja, "size", json_integer(g->size));
				} else {
					json_object_set_new(ja, "kind", json_string("bytes"));
					json_object_set_new(ja, "hex", hex_of(g->bytes, g->size));
					json_t *rl = json_array();
					for (int r = 0; r < g->n_relocs; r++)
						json_array_append_new(
							rl, json_pack("{s:i,s:i,s:I}", "at",
								      (int)g->relocs[r].at, "buf",
								      (int)g->relocs[r].ref.buf,
								      "offset",
								      (json_int_t)g->relocs[r]
									      .ref.offset));
					json_object_set_new(ja, "relocs", rl);
				}
				json_array_append_new(args, ja);
			}
			json_object_set_new(jo, "args", args);
			break;
		}
		case PLAN_OP_FILL:
			json_object_set_new(jo, "op", json_string("fill"));
			json_object_set_new(jo, "dst", ref_json(o->dst));
			json_object_set_new(jo, "size", json_integer((json_int_t)o->size));
			json_object_set_new(jo, "pattern", hex_of(o->pattern, o->pattern_size));
			break;
		case PLAN_OP_COPY:
			json_object_set_new(jo, "op", json_string("copy"));
			json_object_set_new(jo, "dst", ref_json(o->dst));
			json_object_set_new(jo, "src", ref_json(o->src));
			json_object_set_new(jo, "size", json_integer((json_int_t)o->size));
			break;
		case PLAN_OP_SYMBOL:
			json_object_set_new(jo, "op", json_string("symbol"));
			json_object_set_new(jo, "symbol", json_string(o->symbol));
			json_object_set_new(jo, "offset", json_integer((json_int_t)o->dst.offset));
			json_object_set_new(jo, "hex", hex_of(o->data, o->size));
			break;
		}
		json_array_append_new(ops, jo);
	}
	json_object_set_new(root, "ops", ops);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

/* ---- reading ---- */

static int get_int(json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *out,
		   const char *where, struct ka_err *e)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		return ka_err_set(e, "plan: %s: '%s' missing or not an integer", where, key);
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return ka_err_set(e, "plan: %s: '%s' = %lld is out of range", where, key,
				  (long long)x);
	*out = x;
	return 0;
}

static int unhex(const char *s, uint8_t *out, size_t cap, size_t *n)
{
	size_t l = strlen(s);
	if (l % 2 || l / 2 > cap)
		return -1;
	for (size_t i = 0; i < l / 2; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*n = l / 2;
	return 0;
}

static int get_hex(json_t *o, const char *key, uint8_t *out, size_t cap, size_t *n,
		   const char *where, struct ka_err *e)
{
	const char *s = json_string_value(json_object_get(o, key));
	if (!s || unhex(s, out, cap, n))
		return ka_err_set(e, "plan: %s: '%s' missing, not hex or over %zu bytes", where,
				  key, cap);
	return 0;
}

static int get_ref(json_t *o, const char *key, struct plan_ref *r, const char *where,
		   struct ka_err *e)
{
	json_t *j = json_object_get(o, key);
	int64_t b, off;
	if (!json_is_object(j))
		return ka_err_set(e, "plan: %s: '%s' missing", where, key);
	if (get_int(j, "buf", 0, 64, &b, where, e) ||
	    get_int(j, "offset", 0, INT64_MAX, &off, where, e))
		return -1;
	r->buf = (int32_t)b;
	r->offset = (uint64_t)off;
	return 0;
}

static int get_dims(json_t *o, const char *key, uint64_t *d, int64_t max, const char *where,
		    struct ka_err *e)
{
	json_t *a = json_object_get(o, key);
	if (!json_is_array(a) || json_array_size(a) != 3)
		return ka_err_set(e, "plan: %s: '%s' must be an array of 3", where, key);
	for (int i = 0; i < 3; i++) {
		json_t *v = json_array_get(a, (size_t)i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
			return ka_err_set(e, "plan: %s: '%s'[%d] out of range", where, key, i);
		d[i] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int read_arg(json_t *ja, struct plan_arg *g, const char *where, struct ka_err *e)
{
	const char *kind = json_string_value(json_object_get(ja, "kind"));
	if (!kind)
		return ka_err_set(e, "plan: %s: arg without kind", where);
	if (!strcmp(kind, "buffer")) {
		int64_t b, off;
		if (get_int(ja, "buf", 0, 64, &b, where, e) ||
		    get_int(ja, "offset", 0, INT64_MAX, &off, where, e))
			return -1;
		g->kind = PLAN_ARG_BUFFER;
		g->size = 8;
		g->n_relocs = 1;
		g->relocs = xcalloc(1, sizeof *g->relocs);
		g->relocs[0].ref.buf = (int32_t)b;
		g->relocs[0].ref.offset = (uint64_t)off;
		return 0;
	}
	if (!strcmp(kind, "local")) {
		int64_t sz;
		if (get_int(ja, "size", 1, 1 << 24, &sz, where, e))
			return -1;
		g->kind = PLAN_ARG_LOCAL;
		g->size = (uint32_t)sz;
		return 0;
	}
	if (strcmp(kind, "bytes"))
		return ka_err_set(e, "plan: %s: unknown arg kind '%s'", where, kind);
	g->kind = PLAN_ARG_BYTES;
	g->bytes = xmalloc(PLAN_MAX_ARG_BYTES);
	size_t n;
	if (get_hex(ja, "hex", g->bytes, PLAN_MAX_ARG_BYTES, &n, where, e))
		return -1;
	g->size = (uint32_t)n;
	json_t *rl = json_object_get(ja, "relocs");
	size_t nr = json_is_array(rl) ? json_array_size(rl) : 0;
	if (nr > PLAN_MAX_RELOCS)
		return ka_err_set(e, "plan: %s: %zu relocations, over the cap", where, nr);
	g->relocs = xcalloc(nr ? nr : 1, sizeof *g->relocs);
	for (size_t r = 0; r < nr; r++) {
		json_t *jr = json_array_get(rl, r);
		int64_t at, b, off;
		if (get_int(jr, "at", 0, (int64_t)n - 8, &at, where, e) ||
		    get_int(jr, "buf", 0, 64, &b, where, e) ||
		    get_int(jr, "offset", 0, INT64_MAX, &off, where, e))
			return -1;
		g->relocs[r].at = (uint32_t)at;
		g->relocs[r].ref.buf = (int32_t)b;
		g->relocs[r].ref.offset = (uint64_t)off;
		g->n_relocs = (int)r + 1;
	}
	return 0;
}

static int read_op(json_t *jo, struct plan_op *o, int idx, struct ka_err *e)
{
	char where[48];
	snprintf(where, sizeof where, "ops[%d]", idx);
	const char *op = json_string_value(json_object_get(jo, "op"));
	int64_t v;
	if (!op)
		return ka_err_set(e, "plan: %s: missing 'op'", where);
	if (!strcmp(op, "launch")) {
		o->kind = PLAN_OP_LAUNCH;
		if (get_int(jo, "kernel", 0, PLAN_MAX_KERNELS - 1, &v, where, e))
			return -1;
		o->kernel = (int32_t)v;
		if (get_int(jo, "work_dim", 1, 3, &v, where, e))
			return -1;
		o->work_dim = (uint32_t)v;
		if (get_dims(jo, "grid", o->grid, INT64_C(1) << 40, where, e) ||
		    get_dims(jo, "block", o->block, 1 << 16, where, e) ||
		    get_dims(jo, "goffset", o->goffset, INT64_C(1) << 40, where, e))
			return -1;
		json_t *cl = json_object_get(jo, "cluster");
		for (int i = 0; i < 3; i++) {
			json_t *c = json_array_get(cl, (size_t)i);
			json_int_t cv = json_is_integer(c) ? json_integer_value(c) : 0;
			if (cv < 0 || cv > 64)
				return ka_err_set(e, "plan: %s: cluster out of range", where);
			o->cluster[i] = (uint32_t)cv;
		}
		if (get_int(jo, "smem", 0, 1 << 20, &v, where, e))
			return -1;
		o->smem = (uint32_t)v;
		json_t *args = json_object_get(jo, "args");
		size_t na = json_is_array(args) ? json_array_size(args) : 0;
		if (na > PLAN_MAX_ARGS)
			return ka_err_set(e, "plan: %s: %zu args, over the cap", where, na);
		o->args = xcalloc(na ? na : 1, sizeof *o->args);
		for (size_t a = 0; a < na; a++) {
			o->n_args = (int)a + 1;
			if (read_arg(json_array_get(args, a), &o->args[a], where, e))
				return -1;
		}
		return 0;
	}
	if (!strcmp(op, "fill")) {
		o->kind = PLAN_OP_FILL;
		size_t n;
		if (get_ref(jo, "dst", &o->dst, where, e) ||
		    get_int(jo, "size", 0, INT64_MAX, &v, where, e) ||
		    get_hex(jo, "pattern", o->pattern, sizeof o->pattern, &n, where, e))
			return -1;
		if (n == 0 || (n & (n - 1)))
			return ka_err_set(e, "plan: %s: pattern size must be a power of 2", where);
		o->size = (uint64_t)v;
		o->pattern_size = (uint32_t)n;
		return 0;
	}
	if (!strcmp(op, "copy")) {
		o->kind = PLAN_OP_COPY;
		if (get_ref(jo, "dst", &o->dst, where, e) ||
		    get_ref(jo, "src", &o->src, where, e) ||
		    get_int(jo, "size", 0, INT64_MAX, &v, where, e))
			return -1;
		o->size = (uint64_t)v;
		return 0;
	}
	if (!strcmp(op, "symbol")) {
		o->kind = PLAN_OP_SYMBOL;
		const char *s = json_string_value(json_object_get(jo, "symbol"));
		if (!s || !*s || strlen(s) >= PLAN_MAX_NAME)
			return ka_err_set(e, "plan: %s: bad 'symbol'", where);
		snprintf(o->symbol, sizeof o->symbol, "%s", s);
		if (get_int(jo, "offset", 0, PLAN_MAX_SYMBOL_BYTES, &v, where, e))
			return -1;
		o->dst.buf = -1;
		o->dst.offset = (uint64_t)v;
		o->data = xmalloc(PLAN_MAX_SYMBOL_BYTES);
		size_t n;
		if (get_hex(jo, "hex", o->data, PLAN_MAX_SYMBOL_BYTES, &n, where, e))
			return -1;
		o->size = n;
		return 0;
	}
	return ka_err_set(e, "plan: %s: unknown op '%s'", where, op);
}

int plan_read(const char *text, size_t len, struct plan *p, struct ka_err *e)
{
	memset(p, 0, sizeof *p);
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root)
		return ka_err_set(e, "plan: not JSON (%s at line %d)", je.text, je.line);
	int rc = -1;
	int64_t v;
	const char *fmt = json_string_value(json_object_get(root, "format"));
	const char *target = json_string_value(json_object_get(root, "target"));
	if (!fmt || strcmp(fmt, PLAN_FORMAT)) {
		ka_err_set(e, "plan: format is not %s", PLAN_FORMAT);
		goto out;
	}
	if (!target || (strcmp(target, "opencl") && strcmp(target, "cuda"))) {
		ka_err_set(e, "plan: unknown target");
		goto out;
	}
	snprintf(p->target, sizeof p->target, "%s", target);
	if (get_int(root, "status", INT32_MIN, INT32_MAX, &v, "plan", e))
		goto out;
	p->status = (int)v;
	json_t *progs = json_object_get(root, "programs");
	size_t np = json_is_array(progs) ? json_array_size(progs) : 0;
	if (np > PLAN_MAX_PROGRAMS) {
		ka_err_set(e, "plan: %zu programs, over the cap of %d", np, PLAN_MAX_PROGRAMS);
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		json_t *jp = json_array_get(progs, i);
		const char *src = json_string_value(json_object_get(jp, "source"));
		const char *opt = json_string_value(json_object_get(jp, "options"));
		if (!src || strlen(src) > PLAN_MAX_SOURCE) {
			ka_err_set(e, "plan: programs[%zu]: source missing or over the cap", i);
			goto out;
		}
		if (opt && strlen(opt) >= PLAN_MAX_OPTIONS) {
			ka_err_set(e, "plan: programs[%zu]: options over the cap", i);
			goto out;
		}
		p->sources[i] = xstrdup(src);
		snprintf(p->options[i], PLAN_MAX_OPTIONS, "%s", opt ? opt : "");
		p->n_programs = (int)i + 1;
	}
	json_t *ks = json_object_get(root, "kernels");
	size_t nk = json_is_array(ks) ? json_array_size(ks) : 0;
	if (nk > PLAN_MAX_KERNELS) {
		ka_err_set(e, "plan: %zu kernels, over the cap of %d", nk, PLAN_MAX_KERNELS);
		goto out;
	}
	for (size_t i = 0; i < nk; i++) {
		json_t *jk = json_array_get(ks, i);
		struct plan_kernel *k = &p->kernels[i];
		const char *name = json_string_value(json_object_get(jk, "name"));
		if (!name || !*name || strlen(name) >= PLAN_MAX_NAME) {
			ka_err_set(e, "plan: kernels[%zu]: bad name", i);
			goto out;
		}
		snprintf(k->name, sizeof k->name, "%s", name);
		if (get_int(jk, "program", -1, PLAN_MAX_PROGRAMS - 1, &v, "kernels", e))
			goto out;
		k->program = (int32_t)v;
		if (get_int(jk, "max_dynamic_smem", 0, 1 << 20, &v, "kernels", e))
			goto out;
		k->max_dynamic_smem = (uint32_t)v;
		if (get_int(jk, "carveout", -1, 100, &v, "kernels", e))
			goto out;
		k->carveout = (int32_t)v;
		p->n_kernels = (int)i + 1;
	}
	json_t *ws = json_object_get(root, "workspaces");
	size_t nw = json_is_array(ws) ? json_array_size(ws) : 0;
	if (nw > PLAN_MAX_WORKSPACES) {
		ka_err_set(e, "plan: %zu workspaces, over the cap of %d", nw, PLAN_MAX_WORKSPACES);
		goto out;
	}
	for (size_t i = 0; i < nw; i++) {
		json_t *w = json_array_get(ws, i);
		if (!json_is_integer(w) || json_integer_value(w) <= 0 ||
		    (uint64_t)json_integer_value(w) > PLAN_MAX_WORKSPACE_BYTES) {
			ka_err_set(e, "plan: workspaces[%zu]: size out of range", i);
			goto out;
		}
		p->workspace[i] = (uint64_t)json_integer_value(w);
		p->n_workspaces = (int)i + 1;
	}
	json_t *ops = json_object_get(root, "ops");
	size_t no = json_is_array(ops) ? json_array_size(ops) : 0;
	if (no > PLAN_MAX_OPS) {
		ka_err_set(e, "plan: %zu operations, over the cap of %d", no, PLAN_MAX_OPS);
		goto out;
	}
	p->ops = xcalloc(no ? no : 1, sizeof *p->ops);
	for (size_t i = 0; i < no; i++) {
		p->n_ops = (int)i + 1;
		if (read_op(json_array_get(ops, i), &p->ops[i], (int)i, e))
			goto out;
		if (p->ops[i].kind == PLAN_OP_LAUNCH && p->ops[i].kernel >= p->n_kernels) {
			ka_err_set(e, "plan: ops[%zu]: kernel %d does not exist", i,
				   p->ops[i].kernel);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		plan_free(p);
	return rc;
}

static int ref_inside(struct plan_ref r, uint64_t len, int nbuf, const uint64_t *sizes)
{
	if (r.buf < 0 || r.buf >= nbuf)
		return 0;
	uint64_t cap = sizes[r.buf];
	return r.offset <= cap && len <= cap - r.offset;
}

int plan_check_refs(const struct plan *p, int n_tensors, const uint64_t *tensor_bytes,
		    struct ka_err *e)
{
	int nbuf = n_tensors + p->n_workspaces;
	uint64_t sizes[64 + PLAN_MAX_WORKSPACES];
	if (n_tensors > 64)
		return ka_err_set(e, "plan: too many tensors");
	for (int i = 0; i < n_tensors; i++)
		sizes[i] = tensor_bytes[i];
	for (int i = 0; i < p->n_workspaces; i++)
		sizes[n_tensors + i] = p->workspace[i];
	for (int i = 0; i < p->n_ops; i++) {
		const struct plan_op *o = &p->ops[i];
		switch (o->kind) {
		case PLAN_OP_FILL:
			if (o->size % o->pattern_size || o->dst.offset % o->pattern_size ||
			    !ref_inside(o->dst, o->size, nbuf, sizes))
				return ka_err_set(e,
						  "ops[%d]: fill of %llu bytes at buffer %d + %llu "
						  "is outside the buffer or misaligned",
						  i, (unsigned long long)o->size, o->dst.buf,
						  (unsigned long long)o->dst.offset);
			break;
		case PLAN_OP_COPY:
			if (!ref_inside(o->dst, o->size, nbuf, sizes) ||
			    !ref_inside(o->src, o->size, nbuf, sizes))
				return ka_err_set(
					e, "ops[%d]: copy of %llu bytes is outside its buffers", i,
					(unsigned long long)o->size);
			break;
		case PLAN_OP_LAUNCH:
			for (int a = 0; a < o->n_args; a++)
				for (int r = 0; r < o->args[a].n_relocs; r++) {
					struct plan_ref ref = o->args[a].relocs[r].ref;
					/* A pointer may point one past the end (an empty
					 * range) but not beyond. */
					if (!ref_inside(ref, 0, nbuf, sizes))
						return ka_err_set(
							e,
							"ops[%d]: argument %d points outside "
							"buffer %d",
							i, a, ref.buf);
				}
			break;
		case PLAN_OP_SYMBOL: break;
		}
	}
	return 0;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_programs; i++)
		free(p->sources[i]);
	for (int i = 0; i < p->n_ops; i++) {
		struct plan_op *o = &p->ops[i];
		for (int a = 0; a < o->n_args; a++) {
			free(o->args[a].bytes);
			free(o->args[a].relocs);
		}
		free(o->args);
		free(o->data);
	}
	free(p->ops);
	memset(p, 0, sizeof *p);
}

struct plan_op *plan_add_op(struct plan *p)
{
	p->ops = xrealloc(p->ops, (size_t)(p->n_ops + 1) * sizeof *p->ops);
	struct plan_op *o = &p->ops[p->n_ops++];
	memset(o, 0, sizeof *o);
	return o;
}

char *plan_signature(const struct plan *p)
{
	size_t cap = 256, len = 0;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (int i = 0; i < p->n_ops; i++) {
		const struct plan_op *o = &p->ops[i];
		char item[PLAN_MAX_NAME + 160];
		if (o->kind == PLAN_OP_LAUNCH)
			snprintf(item, sizeof item, "%s<%llux%llux%llu,%llux%llux%llu>;",
				 p->kernels[o->kernel].name, (unsigned long long)o->grid[0],
				 (unsigned long long)o->grid[1], (unsigned long long)o->grid[2],
				 (unsigned long long)o->block[0], (unsigned long long)o->block[1],
				 (unsigned long long)o->block[2]);
		else
			snprintf(item, sizeof item, "%s;",
				 o->kind == PLAN_OP_FILL   ? "fill"
				 : o->kind == PLAN_OP_COPY ? "copy"
							   : "symbol");
		size_t il = strlen(item);
		if (len + il + 1 > cap) {
			cap = 2 * (len + il + 1);
			s = xrealloc(s, cap);
		}
		memcpy(s + len, item, il + 1);
		len += il;
	}
	return s;
}
