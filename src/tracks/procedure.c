/* procedure.c: the procedure engine (see procedure.h). Each solve gets a
 * fresh luabox with the `ka` table registered; procedure.lua is run to
 * define solve(), math.random is seeded from the environment, and solve()
 * is called once. Budgets are counted here, before the host is asked, so a
 * procedure can never spend more than its allowance. */
#include "procedure.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "prompt.h"

static const char *const file_names[] = {"procedure.lua", "prompt.md", "strategies.md",
					 "archive.json"};

static char **file_slot(struct procedure *p, int i)
{
	char **slots[] = {&p->lua, &p->prompt, &p->strategies, &p->archive};
	return slots[i];
}

static const char *file_get(const struct procedure *p, int i)
{
	const char *v[] = {p->lua, p->prompt, p->strategies, p->archive};
	return v[i];
}

int procedure_load(const char *dir, struct procedure *p, struct ka_err *e)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < 4; i++) {
		char *path = xasprintf("%s/%s", dir, file_names[i]);
		size_t len;
		int rc = util_read_file(path, PROCEDURE_FILE_MAX, file_slot(p, i), &len, e);
		free(path);
		if (rc && i == 3) {
			*file_slot(p, i) = xasprintf("[]\n");
			continue;
		}
		if (rc) {
			procedure_free(p);
			return -1;
		}
	}
	return 0;
}

int procedure_save(const struct procedure *p, const char *dir, struct ka_err *e)
{
	if (util_mkdirs(dir, e))
		return -1;
	for (int i = 0; i < 4; i++) {
		char *path = xasprintf("%s/%s", dir, file_names[i]);
		const char *s = file_get(p, i);
		int rc = util_write_file(path, s, strlen(s), e);
		free(path);
		if (rc)
			return -1;
	}
	return 0;
}

void procedure_copy(struct procedure *dst, const struct procedure *src)
{
	for (int i = 0; i < 4; i++)
		*file_slot(dst, i) = xasprintf("%s", file_get(src, i));
}

void procedure_free(struct procedure *p)
{
	for (int i = 0; i < 4; i++) {
		free(*file_slot(p, i));
		*file_slot(p, i) = NULL;
	}
}

void procedure_hash(const struct procedure *p, char out[17])
{
	uint64_t h = 0;
	for (int i = 0; i < 4; i++) {
		const char *s = file_get(p, i);
		h = util_hash64(s, strlen(s) + 1, h);
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- text helpers ---------------------------------------------------------- */

char *procedure_subst(const char *tmpl, const char *const *keys, const char *const *vals, int n)
{
	struct util_buf b = {0};
	const char *p = tmpl;
	while (*p) {
		const char *open = strstr(p, "{{");
		if (!open) {
			util_buf_puts(&b, p);
			break;
		}
		util_buf_add(&b, p, (size_t)(open - p));
		const char *close = strstr(open + 2, "}}");
		int hit = -1;
		if (close)
			for (int i = 0; i < n && hit < 0; i++)
				if ((size_t)(close - open - 2) == strlen(keys[i]) &&
				    !strncmp(open + 2, keys[i], strlen(keys[i])))
					hit = i;
		if (hit >= 0) {
			util_buf_puts(&b, vals[hit] ? vals[hit] : "");
			p = close + 2;
		} else {
			util_buf_add(&b, open, 2);
			p = open + 2;
		}
	}
	return util_buf_take(&b);
}

char *procedure_redact(const char *s)
{
	struct util_buf b = {0};
	const char *p = s;
	while (*p) {
		int starts = isdigit((unsigned char)*p) &&
			     (p == s || (!isalnum((unsigned char)p[-1]) && p[-1] != '_'));
		if (starts) {
			const char *q = p;
			while (isdigit((unsigned char)*q))
				q++;
			int frac = 0;
			if (*q == '.' && isdigit((unsigned char)q[1])) {
				frac = 1;
				q++;
				while (isdigit((unsigned char)*q))
					q++;
			}
			if ((*q == 'e' || *q == 'E') &&
			    (isdigit((unsigned char)q[1]) ||
			     ((q[1] == '-' || q[1] == '+') && isdigit((unsigned char)q[2])))) {
				frac = 1;
				q += 2;
				while (isdigit((unsigned char)*q))
					q++;
			}
			if (frac)
				util_buf_putc(&b, '#');
			else
				util_buf_add(&b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		util_buf_putc(&b, *p++);
	}
	return util_buf_take(&b);
}

/* Lower-case words of s (letters and digits, split on anything else) that
 * also appear in q, counted. */
static int overlap(const char *q, const char *s)
{
	int n = 0;
	const char *p = q;
	while (*p) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		const char *w = p;
		while (*p && isalnum((unsigned char)*p))
			p++;
		size_t len = (size_t)(p - w);
		if (len < 2)
			continue;
		for (const char *t = s; *t;) {
			while (*t && !isalnum((unsigned char)*t))
				t++;
			const char *u = t;
			while (*t && isalnum((unsigned char)*t))
				t++;
			if ((size_t)(t - u) == len && !strncasecmp(u, w, len)) {
				n++;
				break;
			}
		}
	}
	return n;
}

int procedure_archive_rank(const struct procedure_archive_entry *a, int n_a, const char *query,
			   int *idx, int n)
{
	int got = 0;
	int *used = xcalloc((size_t)(n_a ? n_a : 1), sizeof *used);
	int *sc = xcalloc((size_t)(n_a ? n_a : 1), sizeof *sc);
	for (int i = 0; i < n_a; i++) {
		char *words =
			xasprintf("%s %s", a[i].task, a[i].description ? a[i].description : "");
		for (char *c = words; *c; c++)
			if (*c == '_')
				*c = ' ';
		sc[i] = overlap(query ? query : "", words);
		free(words);
	}
	while (got < n && got < n_a) {
		int best = -1;
		for (int i = 0; i < n_a; i++)
			if (!used[i] &&
			    (best < 0 || sc[i] > sc[best] ||
			     (sc[i] == sc[best] && strcmp(a[i].task, a[best].task) < 0)))
				best = i;
		used[best] = 1;
		idx[got++] = best;
	}
	free(used);
	free(sc);
	return got;
}

/* ---- the ka API ---------------------------------------------------------- */

struct solve_ctx {
	const struct procedure *p;
	const struct procedure_host *h;
	const struct procedure_env *env;
	struct procedure_outcome *out;
	struct luabox *box;
	int n_gen, n_check;
};

static struct solve_ctx *ctx_of(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

static void set_str(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v ? v : "");
	lua_setfield(L, -2, k);
}

static int ka_task(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	const struct ka_task *t = c->env->task;
	lua_createtable(L, 0, 8);
	set_str(L, "name", t->name);
	set_str(L, "tier", t->tier);
	set_str(L, "description", t->description);
	set_str(L, "torch", t->torch);
	set_str(L, "reference", t->ref_src);
	set_str(L, "target", c->env->target);
	set_str(L, "language", prompt_fence_lang(c->env->target));
	set_str(L, "prompt", c->env->task_prompt);
	return 1;
}

static int budget_left(lua_State *L, const char *why)
{
	lua_pushnil(L);
	lua_pushstring(L, why);
	return 2;
}

static int ka_generate(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	size_t plen;
	const char *prompt = luaL_checklstring(L, 1, &plen);
	struct round_budget *u = &c->out->used;
	const struct round_budget *a = &c->env->allow;
	if (plen > PROCEDURE_TEXT_MAX)
		return budget_left(L, "prompt over 1 MiB: not sent");
	if (u->requests >= a->requests)
		return budget_left(L, "budget spent: no generation left");
	if (u->tokens >= a->tokens)
		return budget_left(L, "budget spent: no tokens left");
	char *text = NULL;
	int64_t tokens = 0;
	int fatal = 0;
	char why[512] = "";
	int rc = c->h->generate(c->h->ctx, c->n_gen++, prompt, &text, &tokens, &fatal, why,
				sizeof why);
	u->requests++;
	u->tokens += tokens;
	if (fatal) {
		c->out->fatal = 1;
		snprintf(c->out->why, sizeof c->out->why, "%s", why);
		free(text);
		return luabox_abort(L, "host failure: %s", why);
	}
	if (rc) {
		free(text);
		return budget_left(L, why);
	}
	lua_pushstring(L, text ? text : "");
	free(text);
	return 1;
}

static int ka_extract(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	const char *reply = luaL_checkstring(L, 1);
	char *code = extract_code(reply, prompt_extract_lang(c->env->target));
	if (!code)
		lua_pushnil(L);
	else
		lua_pushstring(L, code);
	free(code);
	return 1;
}

static int ka_check(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	size_t clen;
	const char *code = luaL_checklstring(L, 1, &clen);
	struct round_budget *u = &c->out->used;
	if (clen > PROCEDURE_TEXT_MAX)
		return budget_left(L, "code over 1 MiB: not checked");
	if (u->checks >= c->env->allow.checks)
		return budget_left(L, "budget spent: no check left");
	struct round_grade g;
	memset(&g, 0, sizeof g);
	char why[512] = "";
	u->checks++;
	if (c->h->check(c->h->ctx, c->n_check++, code, &g, why, sizeof why)) {
		round_grade_free(&g);
		c->out->fatal = 1;
		snprintf(c->out->why, sizeof c->out->why, "%s", why);
		return luabox_abort(L, "host failure: %s", why);
	}
	char *detail = procedure_redact(g.detail ? g.detail : "");
	lua_createtable(L, 0, 5);
	set_str(L, "verdict", g.verdict);
	lua_pushboolean(L, g.ok);
	lua_setfield(L, -2, "ok");
	lua_pushnumber(L, g.score);
	lua_setfield(L, -2, "score");
	set_str(L, "phase", g.phase);
	set_str(L, "detail", detail);
	free(detail);
	round_grade_free(&g);
	return 1;
}

static int ka_submit(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	size_t clen;
	const char *code = luaL_checklstring(L, 1, &clen);
	if (clen > PROCEDURE_TEXT_MAX)
		return luaL_error(L, "ka.submit: code over 1 MiB");
	free(c->out->submitted);
	c->out->submitted = xasprintf("%s", code);
	lua_pushboolean(L, 1);
	return 1;
}

static int ka_prompt(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	enum { MAXK = 32 };
	const char *keys[MAXK], *vals[MAXK];
	int n = 0;
	keys[n] = "task";
	vals[n++] = c->env->task_prompt;
	keys[n] = "strategies";
	vals[n++] = c->p->strategies;
	if (lua_istable(L, 1)) {
		lua_pushnil(L);
		while (lua_next(L, 1) && n < MAXK) {
			if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
				keys[n] = lua_tostring(L, -2);
				vals[n++] = lua_tostring(L, -1);
			}
			lua_pop(L, 1);
		}
	}
	/* The caller's keys come last, so task and strategies cannot be
	 * replaced: the first match wins in procedure_subst. */
	char *s = procedure_subst(c->p->prompt, keys, vals, n);
	lua_pushstring(L, s);
	free(s);
	return 1;
}

static int ka_budget(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	const struct round_budget *a = &c->env->allow, *u = &c->out->used;
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, a->requests - u->requests);
	lua_setfield(L, -2, "requests");
	lua_pushinteger(L, a->checks - u->checks);
	lua_setfield(L, -2, "checks");
	lua_pushinteger(L, a->tokens - u->tokens);
	lua_setfield(L, -2, "tokens");
	return 1;
}

static int ka_archive_search(lua_State *L)
{
	struct solve_ctx *c = ctx_of(L);
	const char *q = luaL_optstring(L, 1, "");
	lua_Integer want = luaL_optinteger(L, 2, 3);
	if (want < 0)
		want = 0;
	if (want > 16)
		want = 16;
	int idx[16];
	int n = procedure_archive_rank(c->env->archive, c->env->n_archive, q, idx, (int)want);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		const struct procedure_archive_entry *a = &c->env->archive[idx[i]];
		lua_createtable(L, 0, 4);
		set_str(L, "task", a->task);
		set_str(L, "description", a->description);
		set_str(L, "code", a->code);
		lua_pushnumber(L, a->score);
		lua_setfield(L, -2, "score");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static void register_api(struct luabox *b, struct solve_ctx *c)
{
	static const luaL_Reg fns[] = {
		{"task", ka_task},     {"generate", ka_generate}, {"extract", ka_extract},
		{"check", ka_check},   {"submit", ka_submit},	  {"log", luabox_lua_log},
		{"prompt", ka_prompt}, {"budget", ka_budget},	  {NULL, NULL},
	};
	luabox_register(b, "ka", fns, c);
	lua_State *L = luabox_state(b);
	lua_getglobal(L, "ka");
	lua_createtable(L, 0, 1);
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, ka_archive_search, 1);
	lua_setfield(L, -2, "search");
	lua_setfield(L, -2, "archive");
	lua_createtable(L, 0, 2);
	set_str(L, "prompt", c->p->prompt);
	set_str(L, "strategies", c->p->strategies);
	lua_setfield(L, -2, "files");
	lua_pop(L, 1);
}

int procedure_solve(const struct procedure *p, const struct procedure_host *h,
		    const struct procedure_env *env, struct procedure_outcome *out)
{
	memset(out, 0, sizeof *out);
	struct solve_ctx c = {.p = p, .h = h, .env = env, .out = out};
	c.box = luabox_new(&env->box, PROCEDURE_LOG_MAX);
	if (!c.box) {
		out->status = LUABOX_MEMORY;
		snprintf(out->why, sizeof out->why, "cannot create the Lua box");
		out->log = xasprintf("%s", "");
		return 0;
	}
	register_api(c.box, &c);
	luabox_seed_random(c.box, env->seed);
	char why[512] = "";
	out->status = luabox_run(c.box, p->lua, strlen(p->lua), "=procedure.lua", why, sizeof why);
	if (out->status == LUABOX_OK) {
		lua_State *L = luabox_state(c.box);
		lua_getglobal(L, "solve");
		int is_fn = lua_isfunction(L, -1);
		lua_pop(L, 1);
		if (!is_fn) {
			out->status = LUABOX_ERROR;
			snprintf(why, sizeof why, "procedure.lua defines no function solve()");
		} else {
			out->status = luabox_call(c.box, "solve", 0, 0, why, sizeof why);
		}
	}
	if (out->status != LUABOX_OK && !out->fatal)
		snprintf(out->why, sizeof out->why, "%s", why);
	out->log = xasprintf("%s", luabox_log(c.box));
	out->instructions = luabox_instructions(c.box);
	luabox_free(c.box);
	return out->fatal ? -1 : 0;
}

void procedure_outcome_free(struct procedure_outcome *o)
{
	free(o->submitted);
	free(o->log);
	o->submitted = o->log = NULL;
}

/* ---- validation and edits ---------------------------------------------------- */

int procedure_validate(const struct procedure *p, const struct luabox_limits *lim, char *why,
		       size_t cap)
{
	for (int i = 0; i < 4; i++) {
		const char *s = file_get(p, i);
		if (!s) {
			snprintf(why, cap, "%s is missing", file_names[i]);
			return -1;
		}
		if (strlen(s) > PROCEDURE_FILE_MAX) {
			snprintf(why, cap, "%s is over %zu bytes", file_names[i],
				 PROCEDURE_FILE_MAX);
			return -1;
		}
	}
	json_error_t je;
	json_t *ar = json_loads(p->archive, 0, &je);
	int is_arr = json_is_array(ar);
	json_decref(ar);
	if (!is_arr) {
		snprintf(why, cap, "archive.json is not a JSON array");
		return -1;
	}
	/* Loading runs the top level: whatever the script does there meets
	 * the box's caps now, before any task. The ka table is not there. */
	return luabox_check_script(lim, p->lua, "procedure.lua", "solve", "solve()", why, cap);
}

int procedure_mode_known(const char *mode)
{
	return !strcmp(mode, "prompt") || !strcmp(mode, "strategies") || !strcmp(mode, "full");
}

/* Index of file name in file_names for mode, -2 unknown, -1 not allowed. */
static int editable(const char *name, size_t len, const char *mode)
{
	int allowed = !strcmp(mode, "prompt") ? 1 : !strcmp(mode, "strategies") ? 2 : 3;
	static const int order[] = {1, 2, 0}; /* prompt.md, strategies.md, procedure.lua */
	for (int k = 0; k < 3; k++) {
		const char *f = file_names[order[k]];
		if (strlen(f) == len && !strncmp(name, f, len))
			return k < allowed ? order[k] : -1;
	}
	return -2;
}

int procedure_apply_edit(const struct procedure *old, const char *reply, const char *mode,
			 struct procedure *out, char *why, size_t cap)
{
	static const char open_tag[] = "=== file: ", end_tag[] = "=== end ===";
	memset(out, 0, sizeof *out);
	procedure_copy(out, old);
	int n = 0;
	const char *p = reply;
	while ((p = strstr(p, open_tag))) {
		const char *name = p + strlen(open_tag);
		const char *name_end = strstr(name, " ===");
		const char *nl = strchr(name, '\n');
		if (!name_end || !nl || name_end > nl) {
			snprintf(why, cap, "a '=== file: NAME ===' line is not closed");
			goto bad;
		}
		size_t len = (size_t)(name_end - name);
		int slot = editable(name, len, mode);
		if (slot == -2) {
			snprintf(why, cap, "the reply edits '%.*s', which is not a procedure file",
				 (int)(len > 64 ? 64 : len), name);
			goto bad;
		}
		if (slot == -1) {
			snprintf(why, cap, "mode '%s' may not change %.*s", mode, (int)len, name);
			goto bad;
		}
		const char *body = nl + 1;
		const char *end = strstr(body, end_tag);
		if (!end) {
			snprintf(why, cap, "file %.*s has no '%s' line", (int)len, name, end_tag);
			goto bad;
		}
		size_t blen = (size_t)(end - body);
		if (blen > PROCEDURE_FILE_MAX) {
			snprintf(why, cap, "%.*s is over %zu bytes", (int)len, name,
				 PROCEDURE_FILE_MAX);
			goto bad;
		}
		char **dst = file_slot(out, slot);
		free(*dst);
		*dst = xmalloc(blen + 1);
		memcpy(*dst, body, blen);
		(*dst)[blen] = 0;
		n++;
		p = end + strlen(end_tag);
	}
	if (n == 0) {
		snprintf(why, cap, "the reply holds no '=== file: NAME ===' block");
		goto bad;
	}
	return 0;
bad:
	procedure_free(out);
	return -1;
}
