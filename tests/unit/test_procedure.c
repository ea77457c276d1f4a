/* test_procedure.c: the procedure engine (src/tracks/procedure.h) with a
 * stub host: the shipped procedures do what they say (one_shot one call;
 * best_of_k spends its budget and submits the best checked sample;
 * self_refine revises with the grader's evidence and stops when correct;
 * retrieval puts archive kernels in the prompt), the budget cannot be
 * overspent, ka.task shows no gold, check evidence is redacted, and edits
 * are applied per mode and rejected with a clear reason: a file the mode may
 * not change, no file block, and each sandbox escape (os.execute, io.open,
 * require, string.dump, an endless loop, a 10 GB table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "procedure.h"

/* The stub host: generate returns "```c\n<n>\n```" with the call number and
 * records the prompts; check says ok for code "2" and on. */
struct stub {
	int gens, checks;
	char *prompts[16];
	int fail_host;
};

static int stub_generate(void *ctx, int idx, const char *prompt, char **text, int64_t *tokens,
			 int *fatal, char *why, size_t cap)
{
	struct stub *s = ctx;
	if (s->fail_host) {
		*fatal = 1;
		snprintf(why, cap, "journal is gone");
		return -1;
	}
	if (s->gens < 16)
		s->prompts[s->gens] = xstrdup(prompt);
	s->gens++;
	*tokens = 10;
	*text = xasprintf("reply\n```c\n%d\n```\n", idx);
	return 0;
}

static int stub_check(void *ctx, int idx, const char *code, struct round_grade *g, char *why,
		      size_t cap)
{
	struct stub *s = ctx;
	s->checks++;
	int n = atoi(code);
	g->ok = n >= 2;
	snprintf(g->verdict, sizeof g->verdict, "%s", g->ok ? "ok" : "wrong_answer");
	snprintf(g->phase, sizeof g->phase, "correctness");
	g->score = g->ok ? 0.5 + 0.1 * n : 0;
	g->detail = xasprintf("y[3] = 1.2500 but the reference gives 1.2600 (attempt %d)", n);
	return 0;
}

static void stub_free(struct stub *s)
{
	for (int i = 0; i < 16 && i < s->gens; i++)
		free(s->prompts[i]);
}

static struct ka_task task = {.name = "gelu_x",
			      .tier = "L1",
			      .description = "exact gelu of a matrix",
			      .torch = "gelu(x)",
			      .ref_src = "double ref(void) { return 0; }"};

static const struct procedure_archive_entry archive[] = {
	{"softmax_rows", "softmax over rows", "SOFTMAX_CODE", 0.7},
	{"gelu_bias_scale", "exact gelu with scale and bias", "GELU_CODE", 0.9},
};

static int solve(const char *dir, struct stub *s, int budget, struct procedure_outcome *out)
{
	struct procedure p;
	struct ka_err e;
	char *path = xasprintf("%s/procedures/%s", util_data_root(), dir);
	int rc = procedure_load(path, &p, &e);
	free(path);
	if (rc)
		return -1;
	struct procedure_host h = {stub_generate, stub_check, s};
	struct procedure_env env = {
		.task = &task,
		.task_prompt = "TASK PROMPT",
		.target = "opencl",
		.archive = archive,
		.n_archive = 2,
		.allow = {budget, budget, 1000},
		.box = {.instructions = 10000000, .memory = 8u << 20, .wall_s = 5},
		.seed = 1};
	rc = procedure_solve(&p, &h, &env, out);
	procedure_free(&p);
	return rc;
}

static void test_one_shot(void)
{
	struct stub s = {0};
	struct procedure_outcome o;
	CHECK(solve("one_shot", &s, 4, &o) == 0);
	CHECK(o.status == LUABOX_OK);
	CHECK(s.gens == 1 && s.checks == 0);
	CHECK_STR(o.submitted, "0\n");
	CHECK(o.used.requests == 1 && o.used.tokens == 10);
	CHECK(strstr(s.prompts[0], "TASK PROMPT") && strstr(s.prompts[0], "(no strategies yet)"));
	CHECK(!strstr(s.prompts[0], "{{"));
	procedure_outcome_free(&o);
	stub_free(&s);
}

static void test_best_of_k(void)
{
	struct stub s = {0};
	struct procedure_outcome o;
	CHECK(solve("best_of_k", &s, 4, &o) == 0);
	CHECK(o.status == LUABOX_OK);
	CHECK(s.gens == 4 && s.checks == 4);
	CHECK_STR(o.submitted, "3\n"); /* the best score */
	procedure_outcome_free(&o);
	stub_free(&s);
}

static void test_self_refine(void)
{
	struct stub s = {0};
	struct procedure_outcome o;
	CHECK(solve("self_refine", &s, 5, &o) == 0);
	CHECK(o.status == LUABOX_OK);
	CHECK(s.gens == 3 && s.checks == 3); /* stops at the first ok (attempt 2) */
	CHECK_STR(o.submitted, "2\n");
	/* The second prompt carries the evidence, redacted. */
	CHECK(strstr(s.prompts[1], "wrong_answer") && strstr(s.prompts[1], "y[3] = # but"));
	CHECK(!strstr(s.prompts[1], "1.25"));
	procedure_outcome_free(&o);
	stub_free(&s);
}

static void test_retrieval(void)
{
	struct stub s = {0};
	struct procedure_outcome o;
	CHECK(solve("retrieval", &s, 2, &o) == 0);
	CHECK(o.status == LUABOX_OK);
	CHECK(s.gens == 2);
	/* The gelu kernel ranks first for a gelu task. */
	char *g = strstr(s.prompts[0], "GELU_CODE"), *x = strstr(s.prompts[0], "SOFTMAX_CODE");
	CHECK(g && x && g < x);
	procedure_outcome_free(&o);
	stub_free(&s);
}

/* Run src as procedure.lua with the stub host. */
static enum luabox_status run_src(const char *src, struct stub *s, char *why, size_t cap,
				  struct procedure_outcome *o)
{
	struct procedure p = {.lua = (char *)src,
			      .prompt = (char *)"{{task}}",
			      .strategies = (char *)"",
			      .archive = (char *)"[]"};
	struct procedure_host h = {stub_generate, stub_check, s};
	struct procedure_env env = {
		.task = &task,
		.task_prompt = "T",
		.target = "opencl",
		.allow = {2, 1, 1000},
		.box = {.instructions = 5000000, .memory = 8u << 20, .wall_s = 5}};
	procedure_solve(&p, &h, &env, o);
	snprintf(why, cap, "%s", o->why);
	return o->status;
}

static void test_budget_and_task(void)
{
	struct stub s = {0};
	struct procedure_outcome o;
	char why[512];
	/* Asking past the budget gets nil and a reason, never a request. */
	enum luabox_status st =
		run_src("function solve() for i = 1, 10 do local r, err = ka.generate('p') "
			"if not r then ka.log(err) ka.submit(tostring(i)) return end end end",
			&s, why, sizeof why, &o);
	CHECK(st == LUABOX_OK && s.gens == 2);
	CHECK_STR(o.submitted, "3");
	CHECK(strstr(o.log, "budget spent: no generation left"));
	procedure_outcome_free(&o);
	stub_free(&s);
	memset(&s, 0, sizeof s);
	st = run_src("function solve() local t = ka.task() local n = 0 for k in pairs(t) do "
		     "if k == 'gold' then error('gold') end n = n + 1 end "
		     "ka.submit(t.name .. ' ' .. t.target .. ' ' .. t.language .. ' ' .. n) end",
		     &s, why, sizeof why, &o);
	CHECK(st == LUABOX_OK);
	CHECK_STR(o.submitted, "gelu_x opencl c 8");
	procedure_outcome_free(&o);
	/* A host failure stops the solve and is reported as the host's. */
	s.fail_host = 1;
	struct procedure p = {.lua = (char *)"function solve() ka.generate('p') end",
			      .prompt = (char *)"",
			      .strategies = (char *)"",
			      .archive = (char *)"[]"};
	struct procedure_host h = {stub_generate, stub_check, &s};
	struct procedure_env env = {.task = &task, .target = "opencl", .allow = {2, 1, 100}};
	CHECK(procedure_solve(&p, &h, &env, &o) == -1);
	CHECK(o.fatal && strstr(o.why, "journal is gone"));
	procedure_outcome_free(&o);
}

static void test_escapes(void)
{
	static const struct {
		const char *src, *why;
		enum luabox_status st;
	} cases[] = {
		{"function solve() os.execute('touch /tmp/ka_escaped_unit') end", "global 'os'",
		 LUABOX_ERROR},
		{"function solve() io.open('/etc/passwd') end", "global 'io'", LUABOX_ERROR},
		{"function solve() require('socket') end", "global 'require'", LUABOX_ERROR},
		{"function solve() string.dump(solve) end", "field 'dump'", LUABOX_ERROR},
		{"function solve() while true do end end", "instruction limit",
		 LUABOX_INSTRUCTIONS},
		{"function solve() local t = {} for i = 1, 10e9 do t[i] = i end end",
		 "memory limit", LUABOX_MEMORY},
		{"function solve() pcall(function() while true do end end) ka.submit('x') end",
		 "instruction limit", LUABOX_INSTRUCTIONS},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct stub s = {0};
		struct procedure_outcome o;
		char why[512];
		enum luabox_status st = run_src(cases[i].src, &s, why, sizeof why, &o);
		if (st != cases[i].st || !strstr(why, cases[i].why))
			printf("# case %zu: status %d why '%s'\n", i, st, why);
		CHECK(st == cases[i].st);
		CHECK(strstr(why, cases[i].why) != NULL);
		CHECK(s.gens == 0);
		procedure_outcome_free(&o);
	}
	/* The same at the top level, caught by validation before any task. */
	struct procedure p = {.lua = (char *)"os.execute('id')",
			      .prompt = (char *)"",
			      .strategies = (char *)"",
			      .archive = (char *)"[]"};
	struct luabox_limits lim = {.instructions = 5000000, .memory = 8u << 20, .wall_s = 5};
	char why[512];
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == -1);
	CHECK(strstr(why, "procedure.lua:") && strstr(why, "global 'os'"));
	p.lua = (char *)"local t = {} while true do t[#t + 1] = ('x'):rep(1000) end";
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == -1);
	CHECK(strstr(why, "memory limit"));
	p.lua = (char *)"x = 1";
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == -1);
	CHECK(strstr(why, "no function solve"));
	p.lua = (char *)"function solve(";
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == -1);
	p.lua = (char *)"function solve() end";
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == 0);
	p.archive = (char *)"{}";
	CHECK(procedure_validate(&p, &lim, why, sizeof why) == -1);
	CHECK(strstr(why, "archive.json"));
}

static void test_edits(void)
{
	struct procedure old = {.lua = (char *)"function solve() end",
				.prompt = (char *)"P0",
				.strategies = (char *)"S0",
				.archive = (char *)"[]"};
	struct procedure n;
	char why[512];
	const char *r1 = "ok\n=== file: strategies.md ===\nS1\n=== end ===\ntrailing";
	CHECK(procedure_apply_edit(&old, r1, "strategies", &n, why, sizeof why) == 0);
	CHECK_STR(n.strategies, "S1\n");
	CHECK_STR(n.prompt, "P0");
	procedure_free(&n);
	CHECK(procedure_apply_edit(&old, r1, "prompt", &n, why, sizeof why) == -1);
	CHECK_STR(why, "mode 'prompt' may not change strategies.md");
	const char *r2 = "=== file: procedure.lua ===\nfunction solve() end\n=== end ===\n";
	CHECK(procedure_apply_edit(&old, r2, "strategies", &n, why, sizeof why) == -1);
	CHECK(procedure_apply_edit(&old, r2, "full", &n, why, sizeof why) == 0);
	procedure_free(&n);
	CHECK(procedure_apply_edit(&old, "no files here", "full", &n, why, sizeof why) == -1);
	CHECK(strstr(why, "no '=== file: NAME ===' block"));
	CHECK(procedure_apply_edit(&old, "=== file: archive.json ===\n[]\n=== end ===", "full", &n,
				   why, sizeof why) == -1);
	CHECK(strstr(why, "not a procedure file"));
	CHECK(procedure_apply_edit(&old, "=== file: prompt.md ===\nX", "full", &n, why,
				   sizeof why) == -1);
	CHECK(strstr(why, "no '=== end ===' line"));
	CHECK(procedure_mode_known("full") && !procedure_mode_known("all"));
}

static void test_text(void)
{
	char *r = procedure_redact("y[3] = 1.25e-3, gold -0.5, shape R=129 C=509, 3e5x, v2.0");
	CHECK_STR(r, "y[3] = #, gold -#, shape R=129 C=509, #x, v2.0");
	free(r);
	const char *k[] = {"a", "b"}, *v[] = {"1", "2"};
	char *s = procedure_subst("{{a}}-{{b}}-{{c}}-{{a", k, v, 2);
	CHECK_STR(s, "1-2-{{c}}-{{a");
	free(s);
	int idx[3];
	CHECK(procedure_archive_rank(archive, 2, "softmax", idx, 3) == 2);
	CHECK(idx[0] == 0 && idx[1] == 1);
	CHECK(procedure_archive_rank(archive, 2, "gelu scale", idx, 1) == 1);
	CHECK(idx[0] == 1);
}

int main(void)
{
	RUN(test_one_shot);
	RUN(test_best_of_k);
	RUN(test_self_refine);
	RUN(test_retrieval);
	RUN(test_budget_and_task);
	RUN(test_escapes);
	RUN(test_edits);
	RUN(test_text);
	TEST_EXIT();
}
