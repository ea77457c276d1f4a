/* plan.c: the launch plan's JSON form and its structural checks (plan.h,
 * docs/plan-format.md). Everything read here comes from the recorder, which
 * ran candidate code: every count, index and size is bounded before use. */
#include "plan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_FORMAT "ka-plan/1"
/* Plans with library steps (cuBLAS GEMMs): a runner that knows only
 * ka-plan/1 refuses them by their format rather than by an unknown op. */
#define PLAN_FORMAT_LIB "ka-plan/2"

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

static json_t *u64s_json(const uint64_t *v, uint32_t n)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *u32s_json(const uint32_t *v, uint32_t n)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *tensormaps_json(const struct plan *p)
{
	json_t *a = json_array();
	for (int i = 0; i < p->n_tensormaps; i++) {
		const struct plan_tensormap *t = &p->tensormaps[i];
		uint32_t r = t->rank <= PLAN_TENSORMAP_MAX_RANK ? t->rank : PLAN_TENSORMAP_MAX_RANK;
		json_t *j = json_object();
		json_object_set_new(j, "dtype", json_integer(t->dtype));
		json_object_set_new(j, "rank", json_integer(t->rank));
		json_object_set_new(j, "global", ref_json(t->global));
		json_object_set_new(j, "dims", u64s_json(t->dims, r));
		json_object_set_new(j, "strides", u64s_json(t->strides, r ? r - 1 : 0));
		json_object_set_new(j, "box", u32s_json(t->box, r));
		json_object_set_new(j, "elem_strides", u32s_json(t->elem_strides, r));
		json_object_set_new(j, "interleave", json_integer(t->interleave));
		json_object_set_new(j, "swizzle", json_integer(t->swizzle));
		json_object_set_new(j, "l2_promotion", json_integer(t->l2_promotion));
		json_object_set_new(j, "oob_fill", json_integer(t->oob_fill));
		json_array_append_new(a, j);
	}
	return a;
}

static json_t *gref_json(struct plan_gemm_ref r)
{
	return ref_json((struct plan_ref){.buf = r.buf, .offset = r.offset});
}

/* A cuBLAS GEMM step (plan_gemm.h; docs/plan-format.md). */
static void gemm_json(json_t *jo, const struct plan_gemm *g)
{
	const char *key = plan_gemm_api_key(g->api);
	json_object_set_new(jo, "op", json_string("gemm"));
	json_object_set_new(jo, "api", json_string(key ? key : "?"));
	json_object_set_new(jo, "transa", json_integer(g->transa));
	json_object_set_new(jo, "transb", json_integer(g->transb));
	json_object_set_new(jo, "m", json_integer(g->m));
	json_object_set_new(jo, "n", json_integer(g->n));
	json_object_set_new(jo, "k", json_integer(g->k));
	json_object_set_new(jo, "alpha", json_real(g->alpha));
	json_object_set_new(jo, "beta", json_real(g->beta));
	json_object_set_new(jo, "a", gref_json(g->a));
	json_object_set_new(jo, "atype", json_integer(g->atype));
	json_object_set_new(jo, "lda", json_integer(g->lda));
	json_object_set_new(jo, "stride_a", json_integer(g->stride_a));
	json_object_set_new(jo, "b", gref_json(g->b));
	json_object_set_new(jo, "btype", json_integer(g->btype));
	json_object_set_new(jo, "ldb", json_integer(g->ldb));
	json_object_set_new(jo, "stride_b", json_integer(g->stride_b));
	json_object_set_new(jo, "c", gref_json(g->c));
	json_object_set_new(jo, "ctype", json_integer(g->ctype));
	json_object_set_new(jo, "ldc", json_integer(g->ldc));
	json_object_set_new(jo, "stride_c", json_integer(g->stride_c));
	json_object_set_new(jo, "batch", json_integer(g->batch));
	json_object_set_new(jo, "compute", json_integer(g->compute));
	json_object_set_new(jo, "algo", json_integer(g->algo));
	json_object_set_new(jo, "math_mode", json_integer(g->math_mode));
}

static int has_gemm(const struct plan *p)
{
	for (int i = 0; i < p->n_ops; i++)
		if (p->ops[i].kind == PLAN_OP_GEMM)
			return 1;
	return 0;
}

char *plan_write(const struct plan *p)
{
	json_t *root = json_object();
	json_object_set_new(root, "format",
			    json_string(has_gemm(p) ? PLAN_FORMAT_LIB : PLAN_FORMAT));
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
			if (o->pdl) /* absent otherwise: plans without PDL are unchanged */
				json_object_set_new(jo, "pdl", json_integer(1));
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
					for (int r = 0; r < g->n_tmaps; r++)
						json_array_append_new(
							rl,
							json_pack("{s:i,s:i}", "at",
								  (int)g->tmaps[r].at, "tensormap",
								  (int)g->tmaps[r].tensormap));
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
		case PLAN_OP_GEMM: gemm_json(jo, &o->gemm); break;
		}
		json_array_append_new(ops, jo);
	}
	json_object_set_new(root, "ops", ops);
	if (p->n_tensormaps > 0) /* absent otherwise: plans without maps are unchanged */
		json_object_set_new(root, "tensormaps", tensormaps_json(p));
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
		if (json_object_get(jr, "tensormap")) {
			/* A tensor map (CUDA): 128 bytes, 64-byte aligned in the
			 * argument (the parameter's alignment). */
			if (get_int(jr, "at", 0, (int64_t)n - PLAN_TENSORMAP_BYTES, &at, where,
				    e) ||
			    get_int(jr, "tensormap", 0, PLAN_MAX_TENSORMAPS - 1, &b, where, e))
				return -1;
			if (at % 64)
				return ka_err_set(
					e, "plan: %s: tensor map at %lld is not 64-byte aligned",
					where, (long long)at);
			if (!g->tmaps)
				g->tmaps = xcalloc(nr, sizeof *g->tmaps);
			g->tmaps[g->n_tmaps].at = (uint32_t)at;
			g->tmaps[g->n_tmaps].tensormap = (int32_t)b;
			g->n_tmaps++;
			continue;
		}
		if (get_int(jr, "at", 0, (int64_t)n - 8, &at, where, e) ||
		    get_int(jr, "buf", 0, 64, &b, where, e) ||
		    get_int(jr, "offset", 0, INT64_MAX, &off, where, e))
			return -1;
		g->relocs[g->n_relocs].at = (uint32_t)at;
		g->relocs[g->n_relocs].ref.buf = (int32_t)b;
		g->relocs[g->n_relocs].ref.offset = (uint64_t)off;
		g->n_relocs++;
	}
	/* A tensor map's 128 bytes belong to it alone. */
	for (int t = 0; t < g->n_tmaps; t++) {
		uint32_t lo = g->tmaps[t].at, hi = lo + PLAN_TENSORMAP_BYTES;
		for (int r = 0; r < g->n_relocs; r++)
			if (g->relocs[r].at + 8 > lo && g->relocs[r].at < hi)
				return ka_err_set(
					e,
					"plan: %s: a pointer relocation overlaps tensor map "
					"bytes at %u",
					where, lo);
		for (int u = 0; u < t; u++)
			if (g->tmaps[u].at + PLAN_TENSORMAP_BYTES > lo && g->tmaps[u].at < hi)
				return ka_err_set(e, "plan: %s: two tensor maps overlap at %u",
						  where, lo);
	}
	return 0;
}

/* An array of exactly n integers in lo..hi. */
static int get_u64s(json_t *o, const char *key, uint32_t n, uint64_t lo, uint64_t hi, uint64_t *out,
		    const char *where, struct ka_err *e)
{
	json_t *a = json_object_get(o, key);
	if (!json_is_array(a) || json_array_size(a) != n)
		return ka_err_set(e, "plan: %s: '%s' must be an array of %u", where, key, n);
	for (uint32_t i = 0; i < n; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (uint64_t)json_integer_value(v) < lo || (uint64_t)json_integer_value(v) > hi)
			return ka_err_set(e, "plan: %s: '%s'[%u] out of range", where, key, i);
		out[i] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int read_tensormap(json_t *j, struct plan_tensormap *t, const char *where, struct ka_err *e)
{
	int64_t v;
	uint64_t u[PLAN_TENSORMAP_MAX_RANK];
	if (!json_is_object(j))
		return ka_err_set(e, "plan: %s: not an object", where);
	if (get_int(j, "dtype", 0, 15, &v, where, e))
		return -1;
	t->dtype = (uint32_t)v;
	if (get_int(j, "rank", 1, PLAN_TENSORMAP_MAX_RANK, &v, where, e))
		return -1;
	t->rank = (uint32_t)v;
	if (get_ref(j, "global", &t->global, where, e) ||
	    get_u64s(j, "dims", t->rank, 1, UINT64_C(1) << 32, t->dims, where, e) ||
	    get_u64s(j, "strides", t->rank - 1, 16, (UINT64_C(1) << 40) - 1, t->strides, where, e))
		return -1;
	if (get_u64s(j, "box", t->rank, 1, 256, u, where, e))
		return -1;
	for (uint32_t i = 0; i < t->rank; i++)
		t->box[i] = (uint32_t)u[i];
	if (get_u64s(j, "elem_strides", t->rank, 1, 8, u, where, e))
		return -1;
	for (uint32_t i = 0; i < t->rank; i++)
		t->elem_strides[i] = (uint32_t)u[i];
	if (get_int(j, "interleave", 0, 2, &v, where, e))
		return -1;
	t->interleave = (uint32_t)v;
	if (get_int(j, "swizzle", 0, 6, &v, where, e))
		return -1;
	t->swizzle = (uint32_t)v;
	if (get_int(j, "l2_promotion", 0, 3, &v, where, e))
		return -1;
	t->l2_promotion = (uint32_t)v;
	if (get_int(j, "oob_fill", 0, 1, &v, where, e))
		return -1;
	t->oob_fill = (uint32_t)v;
	char why[160];
	if (plan_tensormap_check(t, why, sizeof why))
		return ka_err_set(e, "plan: %s: %s", where, why);
	return 0;
}

/* The optional "tensormaps" array (CUDA only). */
static int read_tensormaps(json_t *root, struct plan *p, struct ka_err *e)
{
	json_t *a = json_object_get(root, "tensormaps");
	if (!a)
		return 0;
	if (!json_is_array(a))
		return ka_err_set(e, "plan: 'tensormaps' is not an array");
	size_t n = json_array_size(a);
	if (n && strcmp(p->target, "cuda"))
		return ka_err_set(e, "plan: tensormaps are CUDA only");
	if (n > PLAN_MAX_TENSORMAPS)
		return ka_err_set(e, "plan: %zu tensormaps, over the cap of %d", n,
				  PLAN_MAX_TENSORMAPS);
	for (size_t i = 0; i < n; i++) {
		char where[48];
		snprintf(where, sizeof where, "tensormaps[%zu]", i);
		if (read_tensormap(json_array_get(a, i), &p->tensormaps[i], where, e))
			return -1;
		p->n_tensormaps = (int)i + 1;
	}
	return 0;
}

static int get_gref(json_t *o, const char *key, struct plan_gemm_ref *r, const char *where,
		    struct ka_err *e)
{
	struct plan_ref x;
	if (get_ref(o, key, &x, where, e))
		return -1;
	r->buf = x.buf;
	r->offset = x.offset;
	return 0;
}

static int get_real(json_t *o, const char *key, double *out, const char *where, struct ka_err *e)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return ka_err_set(e, "plan: %s: '%s' missing or not a number", where, key);
	*out = json_number_value(v);
	return 0;
}

/* A cuBLAS GEMM step: the integers bounded to their C types here, the
 * meaning (enums, leading dimensions, extents) by plan_gemm_check in
 * plan_check_refs. */
static int read_gemm(json_t *jo, struct plan_gemm *g, const char *where, struct ka_err *e)
{
	const struct {
		const char *key;
		int64_t lo, hi;
		int32_t *i32;
		int64_t *i64;
	} f[] = {
		{"transa", 0, 2, &g->transa, NULL},
		{"transb", 0, 2, &g->transb, NULL},
		{"m", 0, PLAN_GEMM_MAX_DIM, NULL, &g->m},
		{"n", 0, PLAN_GEMM_MAX_DIM, NULL, &g->n},
		{"k", 0, PLAN_GEMM_MAX_DIM, NULL, &g->k},
		{"atype", 0, 255, &g->atype, NULL},
		{"btype", 0, 255, &g->btype, NULL},
		{"ctype", 0, 255, &g->ctype, NULL},
		{"lda", 0, PLAN_GEMM_MAX_DIM, NULL, &g->lda},
		{"ldb", 0, PLAN_GEMM_MAX_DIM, NULL, &g->ldb},
		{"ldc", 0, PLAN_GEMM_MAX_DIM, NULL, &g->ldc},
		{"stride_a", 0, INT64_MAX, NULL, &g->stride_a},
		{"stride_b", 0, INT64_MAX, NULL, &g->stride_b},
		{"stride_c", 0, INT64_MAX, NULL, &g->stride_c},
		{"batch", 0, PLAN_GEMM_MAX_DIM, NULL, &g->batch},
		{"compute", 0, 255, &g->compute, NULL},
		{"algo", -1, 255, &g->algo, NULL},
		{"math_mode", 0, 31, &g->math_mode, NULL},
	};
	g->api = plan_gemm_api_of(json_string_value(json_object_get(jo, "api")));
	if (g->api < 0)
		return ka_err_set(e, "plan: %s: 'api' is not a recorded cuBLAS GEMM", where);
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		int64_t v;
		if (get_int(jo, f[i].key, f[i].lo, f[i].hi, &v, where, e))
			return -1;
		if (f[i].i32)
			*f[i].i32 = (int32_t)v;
		else
			*f[i].i64 = v;
	}
	if (get_real(jo, "alpha", &g->alpha, where, e) ||
	    get_real(jo, "beta", &g->beta, where, e) || get_gref(jo, "a", &g->a, where, e) ||
	    get_gref(jo, "b", &g->b, where, e) || get_gref(jo, "c", &g->c, where, e))
		return -1;
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
		if (json_object_get(jo, "pdl")) {
			if (get_int(jo, "pdl", 0, 1, &v, where, e))
				return -1;
			o->pdl = (uint8_t)v;
		}
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
	if (!strcmp(op, "gemm")) {
		o->kind = PLAN_OP_GEMM;
		return read_gemm(jo, &o->gemm, where, e);
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
	if (!fmt || (strcmp(fmt, PLAN_FORMAT) && strcmp(fmt, PLAN_FORMAT_LIB))) {
		ka_err_set(e, "plan: format is not %s or %s", PLAN_FORMAT, PLAN_FORMAT_LIB);
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
	if (read_tensormaps(root, p, e))
		goto out;
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
		if (p->ops[i].kind == PLAN_OP_GEMM &&
		    (strcmp(p->target, "cuda") || strcmp(fmt, PLAN_FORMAT_LIB))) {
			ka_err_set(e, "plan: ops[%zu]: a gemm step needs target cuda and format %s",
				   i, PLAN_FORMAT_LIB);
			goto out;
		}
		if (p->ops[i].pdl && strcmp(p->target, "cuda")) {
			ka_err_set(e, "plan: ops[%zu]: 'pdl' is CUDA only", i);
			goto out;
		}
		if (p->ops[i].kind == PLAN_OP_LAUNCH && p->ops[i].kernel >= p->n_kernels) {
			ka_err_set(e, "plan: ops[%zu]: kernel %d does not exist", i,
				   p->ops[i].kernel);
			goto out;
		}
		for (int a = 0; a < p->ops[i].n_args; a++) {
			const struct plan_arg *g = &p->ops[i].args[a];
			if (g->n_relocs + g->n_tmaps > PLAN_MAX_RELOCS) {
				ka_err_set(e, "plan: ops[%zu]: over %d relocations in an argument",
					   i, PLAN_MAX_RELOCS);
				goto out;
			}
			for (int t = 0; t < g->n_tmaps; t++)
				if (g->tmaps[t].tensormap >= p->n_tensormaps) {
					ka_err_set(e,
						   "plan: ops[%zu]: tensor map %d does not exist",
						   i, g->tmaps[t].tensormap);
					goto out;
				}
		}
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		plan_free(p);
	return rc;
}

/* Bits of global memory per element (the packed types: their footprint,
 * gaps included). */
static uint32_t tmap_elem_bits(uint32_t dtype)
{
	static const uint8_t bits[16] = {8,  16, 32, 32, 64, 64, 16, 32,
					 64, 16, 32, 32, 32, 4,	 8,  8};
	return dtype < 16 ? bits[dtype] : 0;
}

#define TMAP_U4_ALIGN8B 13
#define TMAP_U4_ALIGN16B 14
#define TMAP_U6_ALIGN16B 15
#define TMAP_INTERLEAVE_32B 2

int plan_tensormap_check(const struct plan_tensormap *t, char *why, size_t cap)
{
#define TMAP_BAD(...)                                                                              \
	do {                                                                                       \
		snprintf(why, cap, __VA_ARGS__);                                                   \
		return -1;                                                                         \
	} while (0)
	if (t->dtype > 15)
		TMAP_BAD("data type %u is not a CUtensorMapDataType", t->dtype);
	if (t->rank < 1 || t->rank > PLAN_TENSORMAP_MAX_RANK)
		TMAP_BAD("rank %u is not 1..5", t->rank);
	if (t->interleave > 2 || t->swizzle > 6 || t->l2_promotion > 3 || t->oob_fill > 1)
		TMAP_BAD("interleave %u, swizzle %u, l2 promotion %u or oob fill %u out of range",
			 t->interleave, t->swizzle, t->l2_promotion, t->oob_fill);
	if (t->interleave && t->rank < 3)
		TMAP_BAD("an interleaved map needs rank 3..5, not %u", t->rank);
	int packed16 = t->dtype == TMAP_U4_ALIGN16B || t->dtype == TMAP_U6_ALIGN16B;
	uint64_t align = t->interleave == TMAP_INTERLEAVE_32B || packed16 ? 32 : 16;
	if (t->global.offset % align)
		TMAP_BAD("global address offset %llu is not %llu-byte aligned",
			 (unsigned long long)t->global.offset, (unsigned long long)align);
	for (uint32_t i = 0; i < t->rank; i++) {
		if (t->dims[i] < 1 || t->dims[i] > (UINT64_C(1) << 32))
			TMAP_BAD("globalDim[%u] = %llu is not 1..2^32", i,
				 (unsigned long long)t->dims[i]);
		if (t->box[i] < 1 || t->box[i] > 256)
			TMAP_BAD("boxDim[%u] = %u is not 1..256", i, t->box[i]);
		if (t->elem_strides[i] < 1 || t->elem_strides[i] > 8)
			TMAP_BAD("elementStrides[%u] = %u is not 1..8", i, t->elem_strides[i]);
	}
	for (uint32_t i = 0; i + 1 < t->rank; i++)
		if (t->strides[i] % align || t->strides[i] == 0 ||
		    t->strides[i] >= (UINT64_C(1) << 40))
			TMAP_BAD("globalStrides[%u] = %llu is not a multiple of %llu below 2^40", i,
				 (unsigned long long)t->strides[i], (unsigned long long)align);
	if (packed16 && t->dims[0] % 128)
		TMAP_BAD("globalDim[0] of a 16-byte-aligned packed type must be a multiple of 128");
	if (t->dtype == TMAP_U4_ALIGN8B && t->dims[0] % 2)
		TMAP_BAD("globalDim[0] of 16U4_ALIGN8B must be even");
	if (packed16 && t->box[0] != 128)
		TMAP_BAD("boxDim[0] of a 16-byte-aligned packed type must be 128");
	uint64_t inner = (uint64_t)t->box[0] * tmap_elem_bits(t->dtype) / 8;
	if (!t->interleave && inner % 16)
		TMAP_BAD("boxDim[0] x element size = %llu bytes is not a multiple of 16",
			 (unsigned long long)inner);
	if (!t->interleave && t->swizzle) {
		uint64_t span = t->swizzle == 1 ? 32 : t->swizzle == 2 ? 64 : 128;
		if (inner > span)
			TMAP_BAD("inner box of %llu bytes is over the swizzle span of %llu",
				 (unsigned long long)inner, (unsigned long long)span);
	}
	if (t->interleave == TMAP_INTERLEAVE_32B && t->swizzle != 1)
		TMAP_BAD("interleave 32B needs swizzle 32B");
	if (t->dtype == TMAP_U6_ALIGN16B &&
	    (t->interleave ||
	     !(t->swizzle == 0 || t->swizzle == 3 || t->swizzle == 4 || t->swizzle == 6)))
		TMAP_BAD("16U6_ALIGN16B with interleave %u / swizzle %u", t->interleave,
			 t->swizzle);
	if (t->dtype == TMAP_U4_ALIGN16B &&
	    !(t->swizzle == 0 || t->swizzle == 3 || t->swizzle == 4))
		TMAP_BAD("16U4_ALIGN16B with swizzle %u", t->swizzle);
	int is_float = t->dtype >= 6 && t->dtype <= 12;
	if (t->oob_fill && !is_float)
		TMAP_BAD("NaN out-of-bounds fill on a non-float data type %u", t->dtype);
	return 0;
#undef TMAP_BAD
}

uint64_t plan_tensormap_extent(const struct plan_tensormap *t)
{
	/* dims <= 2^32 and bits <= 64: the row fits; each (dim-1)*stride may not. */
	uint64_t end = (t->dims[0] * tmap_elem_bits(t->dtype) + 7) / 8;
	for (uint32_t i = 1; i < t->rank && i < PLAN_TENSORMAP_MAX_RANK; i++) {
		uint64_t d = t->dims[i] - 1, s = t->strides[i - 1];
		if (d && s > UINT64_MAX / d)
			return UINT64_MAX;
		if (d * s > UINT64_MAX - end)
			return UINT64_MAX;
		end += d * s;
	}
	return end;
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
	for (int i = 0; i < p->n_tensormaps; i++) {
		const struct plan_tensormap *t = &p->tensormaps[i];
		uint64_t extent = plan_tensormap_extent(t);
		if (extent == UINT64_MAX || !ref_inside(t->global, extent, nbuf, sizes))
			return ka_err_set(e,
					  "tensormaps[%d]: the map's global extent (%llu bytes at "
					  "buffer %d + %llu) is outside the buffer",
					  i, (unsigned long long)extent, t->global.buf,
					  (unsigned long long)t->global.offset);
	}
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
		case PLAN_OP_GEMM: {
			char why[256];
			if (plan_gemm_check(&o->gemm, nbuf, sizes, why, sizeof why))
				return ka_err_set(e, "ops[%d]: %s: %s", i,
						  plan_gemm_api_name(o->gemm.api), why);
			break;
		}
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
			free(o->args[a].tmaps);
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

int plan_pdl_replayed(const struct plan *p, int i)
{
	return i > 0 && i < p->n_ops && p->ops[i].kind == PLAN_OP_LAUNCH && p->ops[i].pdl &&
	       p->ops[i - 1].kind == PLAN_OP_LAUNCH;
}

char *plan_signature(const struct plan *p)
{
	struct util_buf s = {0};
	util_buf_add(&s, "", 0);
	for (int i = 0; i < p->n_ops; i++) {
		const struct plan_op *o = &p->ops[i];
		char item[PLAN_MAX_NAME + 160];
		if (o->kind == PLAN_OP_LAUNCH)
			snprintf(item, sizeof item, "%s<%llux%llux%llu,%llux%llux%llu>;",
				 p->kernels[o->kernel].name, (unsigned long long)o->grid[0],
				 (unsigned long long)o->grid[1], (unsigned long long)o->grid[2],
				 (unsigned long long)o->block[0], (unsigned long long)o->block[1],
				 (unsigned long long)o->block[2]);
		else if (o->kind == PLAN_OP_GEMM)
			snprintf(item, sizeof item, "%s<%lldx%lldx%lldx%lld>;",
				 plan_gemm_api_name(o->gemm.api), (long long)o->gemm.m,
				 (long long)o->gemm.n, (long long)o->gemm.k,
				 (long long)o->gemm.batch);
		else
			snprintf(item, sizeof item, "%s;",
				 o->kind == PLAN_OP_FILL   ? "fill"
				 : o->kind == PLAN_OP_COPY ? "copy"
							   : "symbol");
		util_buf_puts(&s, item);
	}
	return util_buf_take(&s);
}
