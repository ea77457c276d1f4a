/* harness.c: a training harness run in the Lua sandbox and its output
 * checked against the bounds (see harness.h, docs/harness.md). The output is
 * read with raw accesses only (lua_rawget, lua_next, lua_type before any
 * conversion), so no metamethod of the script runs while ka reads it. */
#include "harness.h"

#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "util.h"

#define JSON_DEPTH_MAX 16

void harness_bounds_default(struct harness_bounds *b, int max_examples)
{
	b->lr_min = 1e-6;
	b->lr_max = 1e-2;
	b->epochs_min = 1;
	b->epochs_max = 10;
	b->lora_r_min = 1;
	b->lora_r_max = 256;
	b->batch_min = 1;
	b->batch_max = 64;
	b->max_examples_max = max_examples;
	b->weight_max = 4;
}

static int int_in(const char *name, int v, int lo, int hi, char *why, size_t cap)
{
	if (v >= lo && v <= hi)
		return 0;
	snprintf(why, cap, "hyper.%s = %d is outside [%d, %d]", name, v, lo, hi);
	return -1;
}

int harness_hyper_check(const struct harness_hyper *h, const struct harness_bounds *b, char *why,
			size_t cap)
{
	if (!(h->lr >= b->lr_min && h->lr <= b->lr_max)) {
		snprintf(why, cap, "hyper.lr = %g is outside [%g, %g]", h->lr, b->lr_min,
			 b->lr_max);
		return -1;
	}
	return int_in("epochs", h->epochs, b->epochs_min, b->epochs_max, why,
		      cap) || int_in("lora_r", h->lora_r, b->lora_r_min, b->lora_r_max, why, cap) ||
			       int_in("batch", h->batch, b->batch_min, b->batch_max, why, cap) ||
			       int_in("max_examples", h->max_examples, 1, b->max_examples_max, why,
				      cap)
		       ? -1
		       : 0;
}

json_t *harness_bounds_json(const struct harness_bounds *b)
{
	return json_pack("{s:[f,f],s:[i,i],s:[i,i],s:[i,i],s:[i,i],s:[i,i]}", "lr", b->lr_min,
			 b->lr_max, "epochs", b->epochs_min, b->epochs_max, "lora_r", b->lora_r_min,
			 b->lora_r_max, "batch", b->batch_min, b->batch_max, "max_examples", 1,
			 b->max_examples_max, "weight", 1, b->weight_max);
}

json_t *harness_hyper_json(const struct harness_hyper *h)
{
	return json_pack("{s:f,s:i,s:i,s:i,s:i}", "lr", h->lr, "epochs", h->epochs, "lora_r",
			 h->lora_r, "batch", h->batch, "max_examples", h->max_examples);
}

void harness_hash(const char *lua, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)util_hash64(lua, strlen(lua), 0x68726e73));
}

/* s as printable ASCII in place: a reason quotes the script's own strings
 * (error messages, file names), which go into JSON and onto a terminal. */
static void printable(char *s)
{
	for (unsigned char *c = (unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			*c = '?';
}

/* ---- ctx as Lua tables ------------------------------------------------------- */

/* Push j as a Lua value: objects and arrays as tables (arrays 1-based),
 * null as nil. Deeper than JSON_DEPTH_MAX: nil. */
static void push_json(lua_State *L, const json_t *j, int depth)
{
	if (depth > JSON_DEPTH_MAX || !j || json_is_null(j)) {
		lua_pushnil(L);
		return;
	}
	switch (json_typeof(j)) {
	case JSON_STRING: lua_pushlstring(L, json_string_value(j), json_string_length(j)); return;
	case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(j)); return;
	case JSON_REAL: lua_pushnumber(L, json_real_value(j)); return;
	case JSON_TRUE: lua_pushboolean(L, 1); return;
	case JSON_FALSE: lua_pushboolean(L, 0); return;
	case JSON_ARRAY: {
		size_t n = json_array_size(j);
		lua_createtable(L, n > 1 << 20 ? 1 << 20 : (int)n, 0);
		for (size_t i = 0; i < n; i++) {
			push_json(L, json_array_get(j, i), depth + 1);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		return;
	}
	case JSON_OBJECT: {
		const char *k;
		json_t *v;
		lua_createtable(L, 0, (int)json_object_size(j));
		json_object_foreach((json_t *)j, k, v)
		{
			push_json(L, v, depth + 1);
			lua_setfield(L, -2, k);
		}
		return;
	}
	default: lua_pushnil(L); return;
	}
}

/* ---- the ka table -------------------------------------------------------------- */

struct run_ctx {
	struct luabox *box;
	const char *lang;
};

static struct run_ctx *ctx_of(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

static int ka_hash(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	char hex[17];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)util_hash64(s, len, 1));
	lua_pushstring(L, hex);
	return 1;
}

static int ka_extract(lua_State *L)
{
	struct run_ctx *c = ctx_of(L);
	char *code = extract_code(luaL_checkstring(L, 1), c->lang);
	if (code)
		lua_pushstring(L, code);
	else
		lua_pushnil(L);
	free(code);
	return 1;
}

static void setup_box(struct luabox *b, struct run_ctx *c, uint64_t seed)
{
	static const luaL_Reg fns[] = {
		{"log", luabox_lua_log}, {"hash", ka_hash}, {"extract", ka_extract}, {NULL, NULL}};
	luabox_register(b, "ka", fns, c);
	luabox_seed_random(b, seed);
}

/* ---- reading the output --------------------------------------------------------- */

static int reject(struct harness_result *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int reject(struct harness_result *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char msg[480];
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(out->why, sizeof out->why, "harness() output: %s", msg);
	out->status = LUABOX_ERROR;
	return -1;
}

static const char *type_of(lua_State *L, int idx)
{
	return lua_typename(L, lua_type(L, idx));
}

/* The integer at idx into *v when it is a number with an integral value. */
static int get_integer(lua_State *L, int idx, lua_Integer *v)
{
	if (lua_type(L, idx) != LUA_TNUMBER)
		return -1;
	if (lua_isinteger(L, idx)) {
		*v = lua_tointeger(L, idx);
		return 0;
	}
	double d = lua_tonumber(L, idx);
	if (!isfinite(d) || d != floor(d) || fabs(d) > 1e15)
		return -1;
	*v = (lua_Integer)d;
	return 0;
}

/* One field of hyper (key on -2, value on -1) into h. */
static int hyper_field(lua_State *L, struct harness_hyper *h, struct harness_result *out)
{
	if (lua_type(L, -2) != LUA_TSTRING)
		return reject(out, "hyper has a key that is not a string");
	const char *k = lua_tostring(L, -2);
	if (!strcmp(k, "lr")) {
		if (lua_type(L, -1) != LUA_TNUMBER)
			return reject(out, "hyper.lr is a %s, not a number", type_of(L, -1));
		h->lr = lua_tonumber(L, -1);
		return 0;
	}
	static const char *const ints[] = {"epochs", "lora_r", "batch", "max_examples", NULL};
	int *slot[] = {&h->epochs, &h->lora_r, &h->batch, &h->max_examples};
	for (int i = 0; ints[i]; i++) {
		if (strcmp(k, ints[i]))
			continue;
		lua_Integer v;
		if (get_integer(L, -1, &v))
			return reject(out, "hyper.%s is not a whole number", k);
		if (v < -1000000000 || v > 1000000000)
			return reject(out, "hyper.%s = %lld is out of range", k, (long long)v);
		*slot[i] = (int)v;
		return 0;
	}
	return reject(out,
		      "hyper.%.40s is not a hyperparameter (lr, epochs, lora_r, batch, "
		      "max_examples)",
		      k);
}

static int read_hyper(lua_State *L, int idx, const struct harness_input *in,
		      struct harness_result *out)
{
	out->hyper = in->defaults;
	out->hyper.as_given = 0;
	if (lua_type(L, idx) == LUA_TNIL)
		return 0;
	if (lua_type(L, idx) != LUA_TTABLE)
		return reject(out, "hyper is a %s, not a table", type_of(L, idx));
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (hyper_field(L, &out->hyper, out)) {
			lua_pop(L, 2);
			return -1;
		}
		lua_pop(L, 1);
	}
	char why[300];
	if (harness_hyper_check(&out->hyper, &in->bounds, why, sizeof why))
		return reject(out, "%s", why);
	return 0;
}

/* Count of fence lines (``` or ~~~ at a line's start) in s. */
static int fences(const char *s)
{
	int n = 0;
	for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + strspn(p, " \t");
		if (!strncmp(q, "```", 3) || !strncmp(q, "~~~", 3))
			n++;
	}
	return n;
}

/* A string field of the example table at idx: NULL when absent, else the
 * string (or a reject). */
static int example_str(lua_State *L, int idx, const char *key, int i, const char **s, size_t *len,
		       struct harness_result *out)
{
	*s = NULL;
	lua_pushstring(L, key);
	int t = lua_rawget(L, idx);
	if (t != LUA_TNIL && t != LUA_TSTRING) {
		lua_pop(L, 1);
		return reject(out, "examples[%d].%s is a %s, not a string", i, key,
			      lua_typename(L, t));
	}
	if (t == LUA_TSTRING)
		*s = lua_tolstring(L, -1, len);
	lua_pop(L, 1); /* the string stays alive: the example table holds it */
	return 0;
}

/* The completion the harness formatted for entry x: the kernel in it must
 * be the entry's, with at most one fenced block and HARNESS_EXTRA_MAX more
 * bytes. */
static int check_completion(const char *c, size_t len, const json_t *x, const char *lang, int i,
			    struct harness_result *out)
{
	const char *orig = json_string_value(json_object_get(x, "completion"));
	if (orig && !strcmp(orig, c))
		return 0;
	const char *code = json_string_value(json_object_get(x, "code"));
	size_t clen = code ? strlen(code) : 0;
	if (len > clen + HARNESS_EXTRA_MAX)
		return reject(out,
			      "examples[%d].completion has %zu bytes beyond its kernel (at "
			      "most %zu)",
			      i, len - clen, HARNESS_EXTRA_MAX);
	if (fences(c) > 2)
		return reject(out, "examples[%d].completion has more than one fenced block", i);
	char *got = extract_code(c, lang);
	int same = got && code && !strcmp(got, code);
	free(got);
	if (!same)
		return reject(out,
			      "examples[%d].completion: the kernel in it is not pool entry "
			      "%lld's verified kernel",
			      i, (long long)json_integer_value(json_object_get(x, "id")));
	return 0;
}

/* Check the key set of the example at idx: id, prompt, completion, weight. */
static int example_keys(lua_State *L, int idx, int i, struct harness_result *out)
{
	static const char *const ok[] = {"id", "prompt", "completion", "weight", NULL};
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int known = 0;
		if (lua_type(L, -2) == LUA_TSTRING)
			for (int k = 0; ok[k]; k++)
				known |= !strcmp(lua_tostring(L, -2), ok[k]);
		lua_pop(L, 1);
		if (!known) {
			lua_pop(L, 1);
			return reject(out,
				      "examples[%d] has a field other than id, prompt, "
				      "completion, weight",
				      i);
		}
	}
	return 0;
}

/* One integer field (id, weight) of the example at idx into *v (dflt when
 * absent, -1 for required). */
static int example_int(lua_State *L, int idx, const char *key, int i, lua_Integer lo,
		       lua_Integer hi, lua_Integer dflt, lua_Integer *v, struct harness_result *out)
{
	lua_pushstring(L, key);
	int t = lua_rawget(L, idx);
	*v = dflt;
	int rc = 0;
	if (t == LUA_TNIL && dflt < 0)
		rc = reject(out, "examples[%d] has no %s", i, key);
	else if (t != LUA_TNIL && (get_integer(L, -1, v) || *v < lo || *v > hi))
		rc = reject(out, "examples[%d].%s must be a whole number in [%lld, %lld]", i, key,
			    (long long)lo, (long long)hi);
	lua_pop(L, 1);
	return rc;
}

/* What the examples read so far add up to. */
struct tally {
	int total;    /* examples, weights counted */
	size_t bytes; /* of their prompts and completions, weights counted */
	json_t *seen; /* "task/hash" of each distinct kernel */
};

static size_t text_len(const char *s, const json_t *dflt)
{
	return s ? strlen(s) : json_string_length(dflt);
}

/* The example at idx (the i-th, 1-based) appended weight times to out. */
static int read_example(lua_State *L, int idx, int i, const struct harness_input *in,
			const json_t *pool, struct tally *ty, struct harness_result *out)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return reject(out, "examples[%d] is a %s, not a table", i, type_of(L, idx));
	lua_Integer id, w;
	if (example_keys(L, idx, i, out) ||
	    example_int(L, idx, "id", i, 1, (lua_Integer)json_array_size(pool), -1, &id, out) ||
	    example_int(L, idx, "weight", i, 1, in->bounds.weight_max, 1, &w, out))
		return -1;
	const json_t *x = json_array_get(pool, (size_t)id - 1);
	const char *p, *c;
	size_t plen = 0, clen = 0;
	if (example_str(L, idx, "prompt", i, &p, &plen, out) ||
	    example_str(L, idx, "completion", i, &c, &clen, out))
		return -1;
	if (p && plen > HARNESS_PROMPT_MAX)
		return reject(out, "examples[%d].prompt is over %zu bytes", i, HARNESS_PROMPT_MAX);
	if (c && check_completion(c, clen, x, in->lang, i, out))
		return -1;
	ty->total += (int)w;
	if (ty->total > out->hyper.max_examples)
		return reject(out, "more than hyper.max_examples = %d examples (weights count)",
			      out->hyper.max_examples);
	ty->bytes += (size_t)w * (text_len(p, json_object_get(x, "prompt")) +
				  text_len(c, json_object_get(x, "completion")));
	if (ty->bytes > HARNESS_SFT_MAX)
		return reject(out, "the examples hold more than %zu MiB of text (weights count)",
			      HARNESS_SFT_MAX >> 20);
	const char *task = json_string_value(json_object_get(x, "task"));
	char key[300];
	snprintf(key, sizeof key, "%s/%s", task ? task : "",
		 json_string_value(json_object_get(x, "hash")));
	json_t *one = json_pack("{s:I,s:s,s:s?,s:s?}", "id", (json_int_t)id, "task",
				task ? task : "", "prompt", p, "completion", c);
	if (!one)
		return reject(out, "examples[%d]: its prompt or completion is not UTF-8 text", i);
	if (!json_object_get(ty->seen, key)) {
		json_object_set_new(ty->seen, key, json_true());
		out->n_distinct++;
	}
	if (!p)
		json_object_set(one, "prompt", json_object_get(x, "prompt"));
	if (!c)
		json_object_set(one, "completion", json_object_get(x, "completion"));
	for (lua_Integer k = 0; k < w; k++)
		json_array_append(out->examples, one);
	json_decref(one);
	out->n_selected++;
	return 0;
}

static int read_examples(lua_State *L, int idx, const struct harness_input *in,
			 struct harness_result *out)
{
	if (lua_type(L, idx) == LUA_TNIL)
		return 0;
	if (lua_type(L, idx) != LUA_TTABLE)
		return reject(out, "examples is a %s, not a table", type_of(L, idx));
	lua_Unsigned n = lua_rawlen(L, idx);
	if (n > HARNESS_EXAMPLES_MAX)
		return reject(out, "examples has %llu entries (at most %d)", (unsigned long long)n,
			      HARNESS_EXAMPLES_MAX);
	const json_t *pool = json_object_get(in->ctx, "pool");
	struct tally ty = {0, 0, json_object()};
	int rc = 0;
	for (lua_Unsigned i = 1; i <= n && !rc; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i);
		rc = read_example(L, lua_gettop(L), (int)i, in, pool, &ty, out);
		lua_pop(L, 1);
	}
	json_decref(ty.seen);
	return rc;
}

/* The table harness() returned, at idx. */
static int read_output(lua_State *L, int idx, const struct harness_input *in,
		       struct harness_result *out)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return reject(out, "harness() returned a %s, not a table", type_of(L, idx));
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		int known =
			k && (!strcmp(k, "examples") || !strcmp(k, "hyper") || !strcmp(k, "order"));
		lua_pop(L, 1);
		if (!known) {
			lua_pop(L, 1);
			return reject(out, "a field other than examples, hyper, order");
		}
	}
	lua_pushstring(L, "hyper");
	lua_rawget(L, idx);
	int rc = read_hyper(L, lua_gettop(L), in, out);
	lua_pop(L, 1);
	if (rc)
		return -1;
	lua_pushstring(L, "order");
	int t = lua_rawget(L, idx);
	if (t == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "as_given"))
		out->hyper.as_given = 1;
	else if (t != LUA_TNIL && (t != LUA_TSTRING || strcmp(lua_tostring(L, -1), "shuffle")))
		rc = reject(out, "order must be \"shuffle\" or \"as_given\"");
	lua_pop(L, 1);
	if (rc)
		return -1;
	lua_pushstring(L, "examples");
	lua_rawget(L, idx);
	rc = read_examples(L, lua_gettop(L), in, out);
	lua_pop(L, 1);
	return rc;
}

/* ---- running ----------------------------------------------------------------------- */

struct call_args {
	const struct harness_input *in;
	struct harness_result *out;
	int rc;
};

/* Run in the box's protected call (luabox_pcall): the ctx tables, the
 * script's harness(ctx) and the reading of its output all allocate in the
 * box, so a cap tripped anywhere is the script's error, not ka's. */
static int call_harness(lua_State *L)
{
	struct call_args *a = lua_touserdata(L, 1);
	lua_settop(L, 0);
	lua_getglobal(L, "harness");
	if (!lua_isfunction(L, -1))
		return luaL_error(L, "harness.lua defines no function harness(ctx)");
	push_json(L, a->in->ctx, 0);
	lua_call(L, 1, 1);
	a->rc = read_output(L, 1, a->in, a->out);
	return 0;
}

int harness_run(const char *lua, const struct harness_input *in, struct harness_result *out)
{
	memset(out, 0, sizeof *out);
	out->examples = json_array();
	out->hyper = in->defaults;
	struct run_ctx c = {.lang = in->lang};
	size_t len = strlen(lua);
	if (len > HARNESS_FILE_MAX) {
		out->log = xstrdup("");
		out->status = LUABOX_ERROR;
		snprintf(out->why, sizeof out->why, "harness.lua is over %zu bytes",
			 HARNESS_FILE_MAX);
		return -1;
	}
	c.box = luabox_new(&in->box, HARNESS_LOG_MAX);
	if (!c.box) {
		out->log = xstrdup("");
		out->status = LUABOX_MEMORY;
		snprintf(out->why, sizeof out->why, "cannot create the Lua box");
		return -1;
	}
	setup_box(c.box, &c, in->seed);
	lua_State *L = luabox_state(c.box);
	struct call_args a = {.in = in, .out = out, .rc = -1};
	char why[480] = "";
	enum luabox_status st = luabox_run(c.box, lua, len, "=harness.lua", why, sizeof why);
	if (st == LUABOX_OK) {
		lua_pushcfunction(L, call_harness);
		lua_pushlightuserdata(L, &a);
		st = luabox_pcall(c.box, 1, 0, why, sizeof why);
	}
	if (st != LUABOX_OK) {
		out->status = st;
		snprintf(out->why, sizeof out->why, "%s", why);
		a.rc = -1;
	}
	out->log = xstrdup(luabox_log(c.box));
	out->instructions = luabox_instructions(c.box);
	luabox_free(c.box);
	if (a.rc) {
		json_array_clear(out->examples);
		out->n_selected = out->n_distinct = 0;
	}
	printable(out->why);
	return a.rc;
}

void harness_result_free(struct harness_result *r)
{
	json_decref(r->examples);
	free(r->log);
	r->examples = NULL;
	r->log = NULL;
}

int harness_validate(const char *lua, const struct luabox_limits *lim, char *why, size_t cap)
{
	if (strlen(lua) > HARNESS_FILE_MAX) {
		snprintf(why, cap, "harness.lua is over %zu bytes", HARNESS_FILE_MAX);
		return -1;
	}
	int rc = luabox_check_script(lim, lua, "harness.lua", "harness", "harness(ctx)", why, cap);
	if (rc)
		printable(why);
	return rc;
}

static int parse_edit(const char *reply, char **lua, char *why, size_t cap)
{
	static const char open_tag[] = "=== file: ", end_tag[] = "=== end ===";
	*lua = NULL;
	const char *p = strstr(reply, open_tag);
	if (!p) {
		snprintf(why, cap, "the reply holds no '=== file: harness.lua ===' block");
		return -1;
	}
	const char *name = p + strlen(open_tag);
	const char *name_end = strstr(name, " ===");
	const char *nl = strchr(name, '\n');
	if (!name_end || !nl || name_end > nl) {
		snprintf(why, cap, "a '=== file: NAME ===' line is not closed");
		return -1;
	}
	size_t nlen = (size_t)(name_end - name);
	if (nlen != strlen("harness.lua") || strncmp(name, "harness.lua", nlen)) {
		snprintf(why, cap, "the reply edits '%.*s', not harness.lua",
			 (int)(nlen > 64 ? 64 : nlen), name);
		return -1;
	}
	const char *body = nl + 1, *end = strstr(body, end_tag);
	if (!end) {
		snprintf(why, cap, "harness.lua has no '%s' line", end_tag);
		return -1;
	}
	size_t blen = (size_t)(end - body);
	if (blen > HARNESS_FILE_MAX) {
		snprintf(why, cap, "harness.lua is over %zu bytes", HARNESS_FILE_MAX);
		return -1;
	}
	*lua = xmalloc(blen + 1);
	memcpy(*lua, body, blen);
	(*lua)[blen] = 0;
	return 0;
}

int harness_parse_edit(const char *reply, char **lua, char *why, size_t cap)
{
	int rc = parse_edit(reply ? reply : "", lua, why, cap);
	if (rc)
		printable(why);
	return rc;
}
