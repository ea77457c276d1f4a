/* test_harness.c: the training harness of track 4 (src/tracks/harness.h) on
 * a made-up pool: the shipped default takes every entry up to the data
 * budget; the fake researcher's dedup edit (tests/data/harness/1_dedup.lua)
 * keeps one example per distinct kernel; every way out of the sandbox (io,
 * os, require, string.dump, a binary chunk, an endless loop, a huge table)
 * and every output out of bounds (each hyperparameter, weights, ids, the
 * count, a completion carrying another kernel or smuggling a second block,
 * text that is not UTF-8, unknown fields) is rejected with its one-line
 * reason; formatted completions that carry the entry's kernel and a
 * curriculum order are accepted; edits are parsed from the reply's file
 * block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ka_test.h"
#include "util.h"

#define KERNEL_A "__kernel void a(__global float *x) { x[0] = 1; }\n"
#define KERNEL_B "__kernel void b(__global float *x) { x[0] = 2; }\n"

/* A pool of six entries: task t1 has kernel A three times, task t2 kernel B
 * twice and kernel A once. */
static json_t *make_ctx(void)
{
	json_t *pool = json_array();
	const char *tasks[] = {"t1", "t1", "t1", "t2", "t2", "t2"};
	const char *codes[] = {KERNEL_A, KERNEL_A, KERNEL_A, KERNEL_B, KERNEL_B, KERNEL_A};
	for (int i = 0; i < 6; i++) {
		char h[17], *comp = xasprintf("Here it is.\n```opencl\n%s```\n", codes[i]);
		snprintf(h, sizeof h, "%016llx",
			 (unsigned long long)util_hash64(codes[i], strlen(codes[i]), 1));
		json_array_append_new(pool, json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:f}", "id", i + 1,
						      "task", tasks[i], "code", codes[i], "hash", h,
						      "prompt", "task: x\n", "completion", comp,
						      "score", 0.5 + 0.01 * i));
		free(comp);
	}
	struct harness_hyper d = {1e-4, 2, 16, 8, 5, 0};
	return json_pack("{s:i,s:o,s:o}", "round", 1, "pool", pool, "defaults",
			 harness_hyper_json(&d));
}

static int run(const char *lua, struct harness_result *out)
{
	json_t *ctx = make_ctx();
	struct harness_input in = {
		.ctx = ctx,
		.defaults = {1e-4, 2, 16, 8, 5, 0},
		.lang = "opencl",
		.box = {.instructions = 5000000, .memory = 16u << 20, .wall_s = 5},
		.seed = 1};
	harness_bounds_default(&in.bounds, 5);
	int rc = harness_run(lua, &in, out);
	json_decref(ctx);
	return rc;
}

static char *read_file(const char *rel)
{
	char *path = xasprintf("%s/%s", util_data_root(), rel), *s = NULL;
	size_t len;
	struct ka_err e;
	if (util_read_file(path, 1 << 20, &s, &len, &e))
		s = NULL;
	free(path);
	return s;
}

static void test_default_harness(void)
{
	char *lua = read_file("harnesses/default.lua");
	CHECK(lua);
	char why[300];
	CHECK(harness_validate(lua, NULL, why, sizeof why) == 0);
	struct harness_result r;
	CHECK(run(lua, &r) == 0);
	/* every entry, in pool order, until the data budget (5) */
	CHECK_EQ_INT(json_array_size(r.examples), 5);
	CHECK_EQ_INT(r.n_selected, 5);
	CHECK_EQ_INT(r.n_distinct, 2);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(r.examples, 4), "id")), 5);
	CHECK(strstr(
		json_string_value(json_object_get(json_array_get(r.examples, 0), "completion")),
		"Here it is."));
	CHECK_NEAR(r.hyper.lr, 1e-4, 1e-12);
	CHECK_EQ_INT(r.hyper.as_given, 0);
	CHECK(strstr(r.log, "[ka.log] round 1: 5 of 6 pool entries"));
	harness_result_free(&r);
	free(lua);
}

static void test_dedup_edit(void)
{
	char *lua = read_file("tests/data/harness/1_dedup.lua");
	CHECK(lua);
	struct harness_result r;
	CHECK(run(lua, &r) == 0);
	/* three distinct (task, kernel) pairs: t1/A, t2/B, t2/A */
	CHECK_EQ_INT(json_array_size(r.examples), 3);
	CHECK_EQ_INT(r.n_distinct, 3);
	harness_result_free(&r);
	free(lua);
}

/* lua must be rejected with a reason containing want. */
static int rejected_with(const char *lua, const char *want)
{
	struct harness_result r;
	int rc = run(lua, &r);
	int ok = rc == -1 && strstr(r.why, want) && json_array_size(r.examples) == 0 &&
		 !strchr(r.why, '\n');
	if (!ok)
		printf("  harness: %s\n  got rc %d, why '%s'; want '%s'\n", lua, rc, r.why, want);
	harness_result_free(&r);
	return ok;
}

static void test_escapes_rejected(void)
{
	CHECK(rejected_with("function harness(c) io.open('/etc/passwd') end",
			    "attempt to index a nil value (global 'io')"));
	CHECK(rejected_with("function harness(c) os.execute('touch /tmp/x') end",
			    "attempt to index a nil value (global 'os')"));
	CHECK(rejected_with("function harness(c) require('socket') end",
			    "attempt to call a nil value (global 'require')"));
	CHECK(rejected_with("function harness(c) return string.dump(harness) end",
			    "attempt to call a nil value (field 'dump')"));
	CHECK(rejected_with("function harness(c) local f = load('\\27Lua') return f() end",
			    "attempt to call a nil value (local 'f')"));
	CHECK(rejected_with("function harness(c) while true do end end",
			    "instruction limit (5000000) reached"));
	CHECK(rejected_with("function harness(c) local t = {} for i = 1, 1e9 do t[i] = i end "
			    "end",
			    "limit"));
	CHECK(rejected_with("function harness(c) pcall(function() while true do end end) "
			    "return {} end",
			    "instruction limit"));
	CHECK(rejected_with("x = (", "harness.lua:1:"));
	CHECK(rejected_with("y = 1", "no function harness(ctx)"));
	CHECK(rejected_with("function harness(c) error('mine') end", "harness.lua:1: mine"));
	/* the reason is printable ASCII whatever the script's message holds */
	CHECK(rejected_with("function harness(c) error('a\\255\\nb') end", "harness.lua:1: a?"));
}

static void test_bounds_rejected(void)
{
	CHECK(rejected_with("function harness(c) return {hyper = {lr = 0.5}} end",
			    "harness() output: hyper.lr = 0.5 is outside [1e-06, 0.01]"));
	CHECK(rejected_with("function harness(c) return {hyper = {epochs = 0}} end",
			    "hyper.epochs = 0 is outside [1, 10]"));
	CHECK(rejected_with("function harness(c) return {hyper = {lora_r = 1024}} end",
			    "hyper.lora_r = 1024 is outside [1, 256]"));
	CHECK(rejected_with("function harness(c) return {hyper = {batch = 65}} end",
			    "hyper.batch = 65 is outside [1, 64]"));
	CHECK(rejected_with("function harness(c) return {hyper = {max_examples = 6}} end",
			    "hyper.max_examples = 6 is outside [1, 5]"));
	CHECK(rejected_with("function harness(c) return {hyper = {epochs = 2.5}} end",
			    "hyper.epochs is not a whole number"));
	CHECK(rejected_with("function harness(c) return {hyper = {momentum = 0.9}} end",
			    "hyper.momentum is not a hyperparameter"));
	CHECK(rejected_with("function harness(c) return {hyper = {lr = 'fast'}} end",
			    "hyper.lr is a string, not a number"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, weight = 3}, "
			    "{id = 2, weight = 3}}} end",
			    "more than hyper.max_examples = 5 examples"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, weight = 5}}} end",
			    "examples[1].weight must be a whole number in [1, 4]"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 7}}} end",
			    "examples[1].id must be a whole number in [1, 6]"));
	CHECK(rejected_with("function harness(c) return {examples = {{}}} end",
			    "examples[1] has no id"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, code = 'x'}}} end",
			    "examples[1] has a field other than id"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, prompt = '\\255'}}} "
			    "end",
			    "examples[1]: its prompt or completion is not UTF-8 text"));
	CHECK(rejected_with("function harness(c) return {examples = {5}} end",
			    "examples[1] is a number, not a table"));
	CHECK(rejected_with("function harness(c) return {order = 'random'} end",
			    "order must be \"shuffle\" or \"as_given\""));
	CHECK(rejected_with("function harness(c) return {notes = 'x'} end",
			    "a field other than examples, hyper, order"));
	CHECK(rejected_with("function harness(c) return 42 end",
			    "harness() returned a number, not a table"));
}

static void test_completions(void)
{
	/* another kernel than the entry's verified one */
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, completion = "
			    "'```opencl\\n' .. c.pool[4].code .. '```\\n'}}} end",
			    "examples[1].completion: the kernel in it is not pool entry 1's"));
	/* a second fenced block (another language) smuggled beside the kernel */
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, completion = "
			    "'```python\\nprint(1)\\n```\\n```opencl\\n' .. c.pool[1].code .. "
			    "'```\\n'}}} end",
			    "more than one fenced block"));
	CHECK(rejected_with("function harness(c) return {examples = {{id = 1, completion = "
			    "string.rep('x', 2000) .. '\\n```opencl\\n' .. c.pool[1].code .. "
			    "'```\\n'}}} end",
			    "bytes beyond its kernel (at most 1024)"));
	/* reformatted with the same kernel, a new prompt, a weight and a curriculum */
	struct harness_result r;
	CHECK(run("function harness(c) return {order = 'as_given', hyper = {lr = 1e-3}, "
		  "examples = {{id = 2, weight = 2, prompt = 'P: ' .. c.pool[2].task, "
		  "completion = 'Kernel:\\n```opencl\\n' .. c.pool[2].code .. '```'}}} end",
		  &r) == 0);
	CHECK_EQ_INT(json_array_size(r.examples), 2);
	CHECK_EQ_INT(r.n_selected, 1);
	CHECK_EQ_INT(r.hyper.as_given, 1);
	CHECK_NEAR(r.hyper.lr, 1e-3, 1e-12);
	CHECK_EQ_INT(r.hyper.epochs, 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.examples, 1), "prompt")),
		  "P: t1");
	CHECK(!strncmp(
		json_string_value(json_object_get(json_array_get(r.examples, 0), "completion")),
		"Kernel:", 7));
	harness_result_free(&r);
	/* a metatable on the output is not consulted (raw reads only) */
	CHECK(run("function harness(c) return setmetatable({}, {__index = function() "
		  "error('ran') end}) end",
		  &r) == 0);
	CHECK_EQ_INT(json_array_size(r.examples), 0);
	harness_result_free(&r);
}

static void test_parse_edit(void)
{
	char *lua = NULL, why[300];
	CHECK(harness_parse_edit("I changed it.\n=== file: harness.lua ===\nfunction "
				 "harness(c) end\n=== end ===\n",
				 &lua, why, sizeof why) == 0);
	CHECK_STR(lua, "function harness(c) end\n");
	free(lua);
	CHECK(harness_parse_edit("no block", &lua, why, sizeof why) == -1);
	CHECK(strstr(why, "no '=== file: harness.lua ===' block"));
	CHECK(harness_parse_edit("=== file: prompt.md ===\nx\n=== end ===\n", &lua, why,
				 sizeof why) == -1);
	CHECK(strstr(why, "edits 'prompt.md', not harness.lua"));
	CHECK(harness_parse_edit("=== file: harness.lua ===\nx\n", &lua, why, sizeof why) == -1);
	CHECK(strstr(why, "no '=== end ===' line"));
	CHECK(!lua);
}

static void test_hyper_check(void)
{
	struct harness_bounds b;
	harness_bounds_default(&b, 256);
	struct harness_hyper h = {1e-4, 2, 16, 8, 256, 0};
	char why[200];
	CHECK(harness_hyper_check(&h, &b, why, sizeof why) == 0);
	h.max_examples = 257;
	CHECK(harness_hyper_check(&h, &b, why, sizeof why) == -1);
	CHECK_STR(why, "hyper.max_examples = 257 is outside [1, 256]");
	h.max_examples = 1;
	h.lr = 0;
	CHECK(harness_hyper_check(&h, &b, why, sizeof why) == -1);
}

int main(void)
{
	RUN(test_default_harness);
	RUN(test_dedup_edit);
	RUN(test_escapes_rejected);
	RUN(test_bounds_rejected);
	RUN(test_completions);
	RUN(test_parse_edit);
	RUN(test_hyper_check);
	TEST_EXIT();
}
