/* luabox.c: the Lua sandbox (see luabox.h). The caps live in the box: the
 * allocator counts every byte of the heap, and a count hook counts
 * instructions and reads the clock. A tripped cap is sticky: the hook then
 * fires on every instruction and raises again, so a script that catches the
 * error with pcall is stopped at its next instruction outside the pcall. */
#include "luabox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LUABOX_HOOK_EVERY 1000

struct luabox {
	lua_State *L;
	struct luabox_limits lim;
	size_t mem, peak;
	uint64_t count;
	double deadline;
	enum luabox_status tripped; /* sticky: LUABOX_OK until a cap trips */
	char *log;
	size_t log_len, log_cap;
	int log_full;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *box_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct luabox *b = ud;
	if (!ptr)
		osize = 0;
	if (nsize == 0) {
		free(ptr);
		b->mem -= osize;
		return NULL;
	}
	if (nsize > osize && b->mem - osize + nsize > b->lim.memory) {
		if (b->tripped == LUABOX_OK)
			b->tripped = LUABOX_MEMORY;
		return NULL;
	}
	void *p = realloc(ptr, nsize);
	if (!p)
		return NULL;
	b->mem = b->mem - osize + nsize;
	if (b->mem > b->peak)
		b->peak = b->mem;
	return p;
}

static struct luabox *box_of(lua_State *L)
{
	void *ud = NULL;
	lua_getallocf(L, &ud);
	return ud;
}

static void box_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	struct luabox *b = box_of(L);
	b->count += b->tripped == LUABOX_OK ? LUABOX_HOOK_EVERY : 1;
	if (b->tripped == LUABOX_OK && b->count > b->lim.instructions)
		b->tripped = LUABOX_INSTRUCTIONS;
	if (b->tripped == LUABOX_OK && now_s() > b->deadline)
		b->tripped = LUABOX_TIMEOUT;
	if (b->tripped == LUABOX_INSTRUCTIONS || b->tripped == LUABOX_TIMEOUT) {
		lua_sethook(L, box_hook, LUA_MASKCOUNT, 1);
		luaL_error(L, "%s",
			   b->tripped == LUABOX_TIMEOUT ? "wall-clock limit reached"
							: "instruction limit reached");
	}
}

void luabox_log_line(struct luabox *b, const char *line, size_t len)
{
	if (b->log_full)
		return;
	static const char trunc[] = "[log truncated]\n";
	if (b->log_len + len + 1 + sizeof trunc > b->log_cap) {
		memcpy(b->log + b->log_len, trunc, sizeof trunc);
		b->log_len += sizeof trunc - 1;
		b->log_full = 1;
		return;
	}
	memcpy(b->log + b->log_len, line, len);
	b->log_len += len;
	b->log[b->log_len++] = '\n';
	b->log[b->log_len] = 0;
}

/* Push the arguments 1..n of the running C function as one string, each
 * through tostring, sep between them, after prefix. */
static const char *join_args(lua_State *L, const char *prefix, char sep, size_t *len)
{
	int n = lua_gettop(L); /* before the buffer takes a stack slot */
	luaL_Buffer lb;
	luaL_buffinit(L, &lb);
	luaL_addstring(&lb, prefix);
	for (int i = 1; i <= n; i++) {
		if (i > 1)
			luaL_addchar(&lb, sep);
		luaL_tolstring(L, i, NULL);
		luaL_addvalue(&lb);
	}
	luaL_pushresult(&lb);
	return lua_tolstring(L, -1, len);
}

/* print(...): tostring of each argument, tab-separated, into the log. */
static int box_print(lua_State *L)
{
	size_t len;
	const char *s = join_args(L, "", '\t', &len);
	luabox_log_line(box_of(L), s, len);
	return 0;
}

int luabox_lua_log(lua_State *L)
{
	size_t len;
	const char *s = join_args(L, "[ka.log] ", ' ', &len);
	luabox_log_line(box_of(L), s, len);
	return 0;
}

/* load(chunk [, chunkname [, mode [, env]]]): text only, in the caller's
 * given env or the box's globals; a function chunk reader is refused. */
static int box_load(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	const char *name = luaL_optstring(L, 2, "=(load)");
	int has_env = !lua_isnone(L, 4);
	if (luaL_loadbufferx(L, s, len, name, "t") != LUA_OK) {
		luaL_pushfail(L);
		lua_insert(L, -2);
		return 2;
	}
	if (has_env) {
		lua_pushvalue(L, 4);
		if (!lua_setupvalue(L, -2, 1))
			lua_pop(L, 1);
	}
	return 1;
}

static void open_safe_libs(lua_State *L)
{
	static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
					{LUA_TABLIBNAME, luaopen_table},
					{LUA_STRLIBNAME, luaopen_string},
					{LUA_MATHLIBNAME, luaopen_math},
					{LUA_UTF8LIBNAME, luaopen_utf8},
					{LUA_COLIBNAME, luaopen_coroutine},
					{NULL, NULL}};
	for (const luaL_Reg *l = libs; l->func; l++) {
		luaL_requiref(L, l->name, l->func, 1);
		lua_pop(L, 1);
	}
	static const char *const drop[] = {"dofile",  "loadfile", "collectgarbage",
					   "require", "module",	  NULL};
	for (int i = 0; drop[i]; i++) {
		lua_pushnil(L);
		lua_setglobal(L, drop[i]);
	}
	lua_getglobal(L, "string");
	lua_pushnil(L);
	lua_setfield(L, -2, "dump");
	lua_pop(L, 1);
	lua_pushcfunction(L, box_print);
	lua_setglobal(L, "print");
	lua_pushcfunction(L, box_load);
	lua_setglobal(L, "load");
	/* The package.loaded table that luaL_requiref filled is in the registry
	 * only; the script has no name for it. */
}

struct luabox *luabox_new(const struct luabox_limits *lim, size_t log_cap)
{
	struct luabox *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	if (lim)
		b->lim = *lim;
	if (!b->lim.instructions)
		b->lim.instructions = 200000000ull;
	if (!b->lim.memory)
		b->lim.memory = 64u << 20;
	if (!(b->lim.wall_s > 0))
		b->lim.wall_s = 30;
	b->log_cap = log_cap < 64 ? 64 : log_cap;
	b->log = calloc(1, b->log_cap);
	/* The standard library needs some heap before any script runs. */
	size_t want = b->lim.memory;
	b->lim.memory = want < (1u << 20) ? (1u << 20) : want;
	b->L = b->log ? lua_newstate(box_alloc, b) : NULL;
	if (!b->L) {
		free(b->log);
		free(b);
		return NULL;
	}
	b->deadline = now_s() + 3600;
	open_safe_libs(b->L);
	b->lim.memory = want > b->mem ? want : b->mem + (64u << 10);
	lua_sethook(b->L, box_hook, LUA_MASKCOUNT, LUABOX_HOOK_EVERY);
	return b;
}

void luabox_free(struct luabox *b)
{
	if (!b)
		return;
	if (b->L)
		lua_close(b->L);
	free(b->log);
	free(b);
}

lua_State *luabox_state(struct luabox *b)
{
	return b->L;
}

void luabox_seed_random(struct luabox *b, uint64_t seed)
{
	lua_getglobal(b->L, "math");
	lua_getfield(b->L, -1, "randomseed");
	lua_pushinteger(b->L, (lua_Integer)(seed & 0x7fffffffffffffffull));
	lua_call(b->L, 1, 0);
	lua_pop(b->L, 1);
}

void luabox_register(struct luabox *b, const char *name, const luaL_Reg *fns, void *host)
{
	lua_newtable(b->L);
	for (const luaL_Reg *f = fns; f->name; f++) {
		lua_pushlightuserdata(b->L, host);
		lua_pushcclosure(b->L, f->func, 1);
		lua_setfield(b->L, -2, f->name);
	}
	lua_setglobal(b->L, name);
}

/* The message handler of box_pcall: keeps the error message as it is. */
static int keep_message(lua_State *L)
{
	(void)L;
	return 1;
}

/* Run the function under the stack's top nargs arguments with the caps. */
static enum luabox_status box_pcall(struct luabox *b, int nargs, int nres, char *why, size_t cap)
{
	lua_State *L = b->L;
	if (b->tripped != LUABOX_OK) {
		lua_pop(L, nargs + 1);
		snprintf(why, cap, "the box is spent: an earlier limit was reached");
		return b->tripped;
	}
	b->deadline = now_s() + b->lim.wall_s;
	int base = lua_gettop(L) - nargs;
	lua_pushcfunction(L, keep_message);
	lua_insert(L, base);
	int rc = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	if (rc == LUA_OK && b->tripped == LUABOX_OK)
		return LUABOX_OK;
	enum luabox_status st = b->tripped != LUABOX_OK ? b->tripped
				: rc == LUA_ERRMEM	? LUABOX_MEMORY
							: LUABOX_ERROR;
	if (st == LUABOX_MEMORY)
		b->tripped = LUABOX_MEMORY;
	if (rc == LUA_OK)
		lua_pop(L, nres);
	const char *msg = rc != LUA_OK ? lua_tostring(L, -1) : NULL;
	switch (st) {
	case LUABOX_INSTRUCTIONS:
		snprintf(why, cap, "instruction limit (%llu) reached",
			 (unsigned long long)b->lim.instructions);
		break;
	case LUABOX_TIMEOUT:
		snprintf(why, cap, "wall-clock limit (%g s) reached", b->lim.wall_s);
		break;
	case LUABOX_MEMORY:
		snprintf(why, cap, "memory limit (%zu bytes) reached", b->lim.memory);
		break;
	default: snprintf(why, cap, "%s", msg ? msg : "error object is not a string"); break;
	}
	if (rc != LUA_OK)
		lua_pop(L, 1);
	/* One line: the first line of the message. */
	char *nl = strchr(why, '\n');
	if (nl)
		*nl = 0;
	return st;
}

enum luabox_status luabox_run(struct luabox *b, const char *src, size_t len, const char *chunkname,
			      char *why, size_t cap)
{
	if (luaL_loadbufferx(b->L, src, len, chunkname, "t") != LUA_OK) {
		snprintf(why, cap, "%s", lua_tostring(b->L, -1));
		lua_pop(b->L, 1);
		char *nl = strchr(why, '\n');
		if (nl)
			*nl = 0;
		return b->tripped == LUABOX_MEMORY ? LUABOX_MEMORY : LUABOX_ERROR;
	}
	return box_pcall(b, 0, 0, why, cap);
}

enum luabox_status luabox_call(struct luabox *b, const char *fn, int nargs, int nres, char *why,
			       size_t cap)
{
	lua_State *L = b->L;
	lua_getglobal(L, fn);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1 + nargs);
		snprintf(why, cap, "the script defines no function '%s'", fn);
		return LUABOX_ERROR;
	}
	lua_insert(L, -1 - nargs);
	return box_pcall(b, nargs, nres, why, cap);
}

int luabox_check_script(const struct luabox_limits *lim, const char *src, const char *name,
			const char *fn, const char *sig, char *why, size_t cap)
{
	struct luabox *b = luabox_new(lim, 4096);
	if (!b) {
		snprintf(why, cap, "cannot create the Lua box");
		return -1;
	}
	char chunk[80], w[400] = "";
	snprintf(chunk, sizeof chunk, "=%s", name);
	int rc = 0;
	if (luabox_run(b, src, strlen(src), chunk, w, sizeof w) != LUABOX_OK) {
		snprintf(why, cap, "%s: %s", name, w);
		rc = -1;
	} else {
		lua_getglobal(b->L, fn);
		if (!lua_isfunction(b->L, -1)) {
			snprintf(why, cap, "%s defines no function %s", name, sig);
			rc = -1;
		}
		lua_pop(b->L, 1);
	}
	luabox_free(b);
	return rc;
}

enum luabox_status luabox_pcall(struct luabox *b, int nargs, int nres, char *why, size_t cap)
{
	return box_pcall(b, nargs, nres, why, cap);
}

const char *luabox_log(const struct luabox *b)
{
	return b->log;
}

uint64_t luabox_instructions(const struct luabox *b)
{
	return b->count;
}

size_t luabox_peak_memory(const struct luabox *b)
{
	return b->peak;
}

int luabox_abort(lua_State *L, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return luaL_error(L, "%s", msg);
}
