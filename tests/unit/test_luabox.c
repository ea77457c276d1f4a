/* test_luabox.c: the Lua sandbox of procedures and harnesses
 * (src/tracks/luabox.h). Each escape a model-written script might try gets
 * its outcome: no io/os/require/debug/string.dump/binary chunks, an endless
 * loop (also one wrapped in pcall), a 10 GB table and string, a hot loop
 * under the wall clock. And what a script may do works: the host API, print
 * into the capped log, text load into a given environment. */
#include <stdio.h>
#include <string.h>

#include "ka_test.h"
#include "luabox.h"

#define EXPECT_STATUS(src, want_status, want_why)                                                  \
	do {                                                                                       \
		struct luabox *b_ = luabox_new(&lim, 4096);                                        \
		CHECK(b_ != NULL);                                                                 \
		char why_[256] = "";                                                               \
		enum luabox_status st_ =                                                           \
			luabox_run(b_, src, strlen(src), "=t", why_, sizeof why_);                 \
		if (st_ != (want_status) || !strstr(why_, want_why))                               \
			printf("# %s -> status %d (want %d), why '%s' (want '%s')\n", #src, st_,   \
			       want_status, why_, want_why);                                       \
		luabox_free(b_);                                                                   \
		CHECK(st_ == (want_status));                                                       \
		CHECK(strstr(why_, want_why) != NULL);                                             \
	} while (0)

static const struct luabox_limits lim = {.instructions = 5000000, .memory = 8u << 20, .wall_s = 5};

static void test_escapes_refused(void)
{
	EXPECT_STATUS("os.execute('id')", LUABOX_ERROR, "global 'os'");
	EXPECT_STATUS("io.open('/etc/passwd')", LUABOX_ERROR, "global 'io'");
	EXPECT_STATUS("require('os')", LUABOX_ERROR, "global 'require'");
	EXPECT_STATUS("debug.getinfo(1)", LUABOX_ERROR, "global 'debug'");
	EXPECT_STATUS("dofile('/etc/passwd')", LUABOX_ERROR, "global 'dofile'");
	EXPECT_STATUS("loadfile('/etc/passwd')", LUABOX_ERROR, "global 'loadfile'");
	EXPECT_STATUS("package.loadlib('libc.so.6', 'system')", LUABOX_ERROR, "global 'package'");
	EXPECT_STATUS("string.dump(print)", LUABOX_ERROR, "field 'dump'");
	EXPECT_STATUS("local s = ('').dump", LUABOX_OK, "");
	EXPECT_STATUS("assert(load('\\27Lua'))", LUABOX_ERROR, "attempt to load a binary chunk");
	EXPECT_STATUS("collectgarbage('stop')", LUABOX_ERROR, "global 'collectgarbage'");
}

static void test_limits_hold(void)
{
	EXPECT_STATUS("while true do end", LUABOX_INSTRUCTIONS, "instruction limit (5000000)");
	EXPECT_STATUS("while true do pcall(function() while true do end end) end",
		      LUABOX_INSTRUCTIONS, "instruction limit");
	EXPECT_STATUS("local t = {} for i = 1, 1e10 do t[i] = i end", LUABOX_MEMORY,
		      "memory limit");
	EXPECT_STATUS("local s = string.rep('x', 1024 * 1024 * 1024)", LUABOX_MEMORY,
		      "memory limit");
	EXPECT_STATUS("local ok = pcall(string.rep, 'x', 1e10) local t = {} "
		      "for i = 1, 1e9 do t[i] = i end",
		      LUABOX_MEMORY, "memory limit");
	EXPECT_STATUS("error('my reason')", LUABOX_ERROR, "my reason");
	EXPECT_STATUS("x = = 1", LUABOX_ERROR, "unexpected symbol");
	/* the wall clock: a box with a huge instruction budget and a short clock */
	struct luabox_limits wl = {.instructions = 1ull << 50, .memory = 8u << 20, .wall_s = 0.2};
	struct luabox *b = luabox_new(&wl, 1024);
	char why[256];
	CHECK(luabox_run(b, "while true do end", 17, "=t", why, sizeof why) == LUABOX_TIMEOUT);
	CHECK(strstr(why, "wall-clock limit") != NULL);
	/* a spent box stays spent */
	CHECK(luabox_run(b, "x = 1", 5, "=t", why, sizeof why) == LUABOX_TIMEOUT);
	luabox_free(b);
}

static int host_add(lua_State *L)
{
	int *calls = lua_touserdata(L, lua_upvalueindex(1));
	(*calls)++;
	lua_pushinteger(L, luaL_checkinteger(L, 1) + luaL_checkinteger(L, 2));
	return 1;
}

static int host_spent(lua_State *L)
{
	return luabox_abort(L, "generation budget spent (%d of %d)", 5, 5);
}

static void test_host_api_and_log(void)
{
	struct luabox *b = luabox_new(&lim, 128);
	int calls = 0;
	static const luaL_Reg fns[] = {{"add", host_add}, {"spent", host_spent}, {NULL, NULL}};
	luabox_register(b, "ka", fns, &calls);
	char why[256] = "";
	const char *src = "print('sum', ka.add(2, 3)) function solve(n) return ka.add(n, 1) end "
			  "local f = load('return y + 1', 'c', 't', {y = 41}) print(f())";
	CHECK(luabox_run(b, src, strlen(src), "=proc", why, sizeof why) == LUABOX_OK);
	CHECK(calls == 1);
	if (strcmp(luabox_log(b), "sum\t5\n42\n"))
		printf("# log: [%s]\n", luabox_log(b));
	CHECK(strcmp(luabox_log(b), "sum\t5\n42\n") == 0);
	lua_pushinteger(luabox_state(b), 9);
	CHECK(luabox_call(b, "solve", 1, 1, why, sizeof why) == LUABOX_OK);
	CHECK(lua_tointeger(luabox_state(b), -1) == 10);
	lua_pop(luabox_state(b), 1);
	CHECK(luabox_call(b, "nope", 0, 0, why, sizeof why) == LUABOX_ERROR);
	CHECK(strstr(why, "no function 'nope'") != NULL);
	const char *s2 = "ka.spent()";
	CHECK(luabox_run(b, s2, strlen(s2), "=proc", why, sizeof why) == LUABOX_ERROR);
	CHECK(strstr(why, "generation budget spent (5 of 5)") != NULL);
	/* the log is capped */
	const char *s3 = "for i = 1, 1000 do print('line', i) end";
	CHECK(luabox_run(b, s3, strlen(s3), "=proc", why, sizeof why) == LUABOX_OK);
	CHECK(strlen(luabox_log(b)) < 128);
	CHECK(strstr(luabox_log(b), "[log truncated]") != NULL);
	CHECK(luabox_instructions(b) > 0 && luabox_peak_memory(b) > 0);
	luabox_free(b);
}

int main(void)
{
	RUN(test_escapes_refused);
	RUN(test_limits_hold);
	RUN(test_host_api_and_log);
	TEST_EXIT();
}
