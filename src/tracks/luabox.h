/* luabox.h: the embedded Lua 5.4 sandbox that runs model-written scripts
 * (the procedures of track 3, the harnesses of track 4; docs/procedures.md).
 *
 * A box is one lua_State with only the safe parts of the standard library:
 * base (without dofile, loadfile, collectgarbage, and with load limited to
 * text chunks in the box's own environment), string (without string.dump),
 * table, math (math.random seeded by the box), utf8 and coroutine; no io,
 * os, package, require or debug. print writes to the box's log. Three caps
 * hold whatever the script does: instructions (a count hook; once tripped,
 * every further instruction fails, so pcall cannot swallow it), memory (the
 * allocator refuses past the cap) and wall-clock time (checked in the hook).
 * The host adds its API as a table of C functions (luabox_register). It
 * knows nothing of models, tasks or the grader. */
#ifndef KA_LUABOX_H
#define KA_LUABOX_H

#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>
#include <stdint.h>

struct luabox_limits {
	uint64_t instructions; /* VM instructions over the box's life; 0: 200 million */
	size_t memory;	       /* bytes held by the Lua heap; 0: 64 MiB */
	double wall_s;	       /* seconds of one luabox_call; 0: 30 */
};

enum luabox_status {
	LUABOX_OK = 0,
	LUABOX_ERROR,	     /* the script raised an error (or did not parse) */
	LUABOX_INSTRUCTIONS, /* over the instruction cap */
	LUABOX_MEMORY,	     /* over the memory cap */
	LUABOX_TIMEOUT,	     /* over the wall-clock cap */
};

struct luabox;

/* A new box with the given limits (NULL: the defaults) and a log capped at
 * log_cap bytes (print and luabox_log append; past the cap the log says
 * "[log truncated]"). NULL if out of memory. */
struct luabox *luabox_new(const struct luabox_limits *lim, size_t log_cap);

/* Free the box; NULL does nothing. */
void luabox_free(struct luabox *b);

/* The box's Lua state, for the host to push its API and read results. The
 * host must not open libraries on it. */
lua_State *luabox_state(struct luabox *b);

/* Seed the box's math.random with seed (a fresh box, before any script). */
void luabox_seed_random(struct luabox *b, uint64_t seed);

/* Set global table `name` to the functions in fns (NULL-name ended), each
 * given `host` as its first upvalue (lua_upvalueindex(1), a light userdata). */
void luabox_register(struct luabox *b, const char *name, const luaL_Reg *fns, void *host);

/* Load `len` bytes of Lua source (text only; a binary chunk is refused) as
 * chunk `chunkname` and run it. Returns the status; on anything but
 * LUABOX_OK, why (cap bytes) says what happened in one line, e.g.
 * "procedure.lua:3: attempt to call a nil value (field 'execute')" or
 * "instruction limit (200000000) reached". */
enum luabox_status luabox_run(struct luabox *b, const char *src, size_t len, const char *chunkname,
			      char *why, size_t cap);

/* Call global function `fn` with nargs arguments already pushed by the
 * host, leaving nres results on the stack on LUABOX_OK (the host pops them).
 * Same limits and why as luabox_run. */
enum luabox_status luabox_call(struct luabox *b, const char *fn, int nargs, int nres, char *why,
			       size_t cap);

/* The static check of a script: src loaded as chunk name in a fresh box
 * with lim (its top level runs and meets the caps; no host API is there)
 * must define a global function fn. 0, or -1 with why ("name: <error>",
 * "name defines no function <sig>"). */
int luabox_check_script(const struct luabox_limits *lim, const char *src, const char *name,
			const char *fn, const char *sig, char *why, size_t cap);

/* Call the function the host pushed below its nargs arguments, with the
 * same limits and why as luabox_run (nres results left on LUABOX_OK). A
 * host runs its own C function this way when it allocates in the box (a
 * memory error outside a protected call would end the process). */
enum luabox_status luabox_pcall(struct luabox *b, int nargs, int nres, char *why, size_t cap);

/* The log so far (NUL-terminated, owned by the box) and the instructions
 * and peak memory used so far. */
const char *luabox_log(const struct luabox *b);
uint64_t luabox_instructions(const struct luabox *b);
size_t luabox_peak_memory(const struct luabox *b);

/* Append a line to the box's log (host messages, ka.log). */
void luabox_log_line(struct luabox *b, const char *line, size_t len);

/* ka.log(...) for a host's API table: tostring of each argument,
 * space-separated, as one line "[ka.log] ..." in the box's log. */
int luabox_lua_log(lua_State *L);

/* The status a host API function reports by raising an error: the host's C
 * function calls luabox_abort to stop the script for a reason of its own
 * (a budget spent); the run then returns LUABOX_ERROR with this text. Does
 * not return. */
int luabox_abort(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
