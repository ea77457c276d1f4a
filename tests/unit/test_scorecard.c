/* test_scorecard.c: scorecard.h on in-memory scorecards: a table of single
 * mutations of a good fixture, each with the exact first problem reported;
 * the writers (aggregates rebuilt from samples equal the stored ones). */
#include <stdlib.h>

#include "ka_test.h"
#include "scorecard.h"

static json_t *fixture(const char *name)
{
	const char *home = getenv("KA_HOME");
	char path[1024];
	snprintf(path, sizeof path, "%s%stests/data/scorecards/good/%s", home ? home : "",
		 home ? "/" : "", name);
	struct ka_err e;
	json_t *j = scorecard_load(path, &e);
	if (!j)
		printf("# %s\n", e.msg);
	return j;
}

/* validate, then recompute; "ok" or the message. */
static const char *check(json_t *sc, struct ka_err *e)
{
	if (scorecard_validate(sc, "t.json", e) || scorecard_recompute(sc, "t.json", e))
		return e->msg;
	return "ok";
}

static json_t *at(json_t *sc, const char *a, const char *b)
{
	json_t *j = json_object_get(sc, a);
	return b ? json_object_get(j, b) : j;
}

static json_t *sample(json_t *sc, size_t t, size_t s)
{
	return json_array_get(
		json_object_get(json_array_get(json_object_get(sc, "tasks"), t), "samples"), s);
}

/* Index of the first sample of the fixture with verdict ok / not ok. */
static json_t *find_sample(json_t *sc, int want_ok)
{
	for (size_t t = 0; t < 9; t++)
		for (size_t s = 0; s < 5; s++) {
			json_t *x = sample(sc, t, s);
			const char *v = json_string_value(json_object_get(x, "verdict"));
			if (v && (!strcmp(v, "ok")) == want_ok)
				return x;
		}
	return NULL;
}

static void test_good_fixtures(void)
{
	static const char *const names[] = {"cap_fable.json",	  "cap_qwen7b.json",
					    "cap_hostile.json",	  "wrsi_qwen7b.json",
					    "wrsi_llama8b.json",  "std_small.json",
					    "harness_fable.json", "controls_qwen7b.json",
					    "proc_fable.json",	  "frontier_qwen7b.json"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		json_t *sc = fixture(names[i]);
		struct ka_err e;
		CHECK(sc);
		CHECK_STR(check(sc, &e), "ok");
		json_decref(sc);
	}
}

enum mut {
	MUT_DEL_CREATED,
	MUT_CREATED_SPACE,
	MUT_KIND,
	MUT_CLOCKS,
	MUT_SAMPLE_ID,
	MUT_SAMPLE_DUP,
	MUT_SPEEDUP_ORDER,
	MUT_FAILED_WITH_SPEEDUP,
	MUT_SOURCE_DOTDOT,
	MUT_SOURCE_ABS,
	MUT_UNKNOWN,
	MUT_DEL_L3,
	MUT_TRACK,
	MUT_HASH,
	MUT_SEED,
	MUT_PROTOCOL,
	MUT_FIG_ORDER,
	MUT_TOKENS,
	MUT_TASK_DUP,
	MUT_NAN_SCORE,
	MUT_CI_HI
};

static void mutate(json_t *sc, enum mut m)
{
	switch (m) {
	case MUT_DEL_CREATED: json_object_del(sc, "created"); break;
	case MUT_CREATED_SPACE:
		json_object_set_new(sc, "created", json_string("2026-11-28 09:15:00"));
		break;
	case MUT_KIND:
		json_object_set_new(at(sc, "model", NULL), "kind", json_string("semi"));
		break;
	case MUT_CLOCKS:
		json_object_set_new(at(sc, "device", "clocks"), "sm_mhz_min", json_integer(2500));
		break;
	case MUT_SAMPLE_ID: json_object_set_new(sample(sc, 0, 0), "sample", json_integer(7)); break;
	case MUT_SAMPLE_DUP:
		json_object_set_new(sample(sc, 0, 1), "sample", json_integer(0));
		break;
	case MUT_SPEEDUP_ORDER: {
		json_t *sp = json_object_get(find_sample(sc, 1), "speedup_eager");
		json_object_set_new(sp, "lo", json_real(100.0));
		break;
	}
	case MUT_FAILED_WITH_SPEEDUP:
		json_object_set_new(
			find_sample(sc, 0), "time_us",
			json_pack("{s:f,s:f,s:f}", "median", 2.0, "lo", 1.0, "hi", 3.0));
		break;
	case MUT_SOURCE_DOTDOT:
		json_object_set_new(sample(sc, 0, 0), "source_path",
				    json_string("src/../../etc/passwd"));
		break;
	case MUT_SOURCE_ABS:
		json_object_set_new(sample(sc, 0, 0), "source_path", json_string("/etc/passwd"));
		break;
	case MUT_UNKNOWN: json_object_set_new(sc, "nonce", json_integer(1)); break;
	case MUT_DEL_L3: json_object_del(at(sc, "aggregates", NULL), "L3"); break;
	case MUT_TRACK: json_object_set_new(sc, "track", json_string("rsi")); break;
	case MUT_HASH: json_object_set_new(at(sc, "bank", NULL), "hash", json_string("XYZ")); break;
	case MUT_SEED: json_object_set_new(sc, "seed", json_integer(-1)); break;
	case MUT_PROTOCOL:
		json_object_set_new(at(sc, "protocol", NULL), "max_samples", json_integer(3));
		break;
	case MUT_FIG_ORDER:
		json_object_set_new(at(at(sc, "aggregates", "overall"), "correct", NULL), "lo",
				    json_real(0.99));
		break;
	case MUT_TOKENS:
		json_object_set_new(json_object_get(sample(sc, 2, 3), "tokens"), "out",
				    json_string("many"));
		break;
	case MUT_TASK_DUP:
		json_object_set_new(json_array_get(json_object_get(sc, "tasks"), 1), "name",
				    json_string("scale_bias_gelu"));
		break;
	case MUT_NAN_SCORE: json_object_set_new(sample(sc, 0, 2), "score", json_real(1.5)); break;
	case MUT_CI_HI: {
		json_t *f = json_object_get(at(sc, "aggregates", "overall"), "mean_c");
		json_object_set_new(f, "hi",
				    json_real(json_number_value(json_object_get(f, "hi")) + 0.001));
		break;
	}
	}
}

static void test_mutations(void)
{
	static const struct {
		enum mut m;
		const char *want;
	} t[] = {
		{MUT_DEL_CREATED, "t.json: created: missing"},
		{MUT_CREATED_SPACE, "t.json: created: \"2026-11-28 09:15:00\" is not ISO 8601 UTC "
				    "(YYYY-MM-DDTHH:MM:SSZ)"},
		{MUT_KIND, "t.json: model.kind: \"semi\" is not one of \"open\", \"closed\""},
		{MUT_CLOCKS, "t.json: device.clocks.sm_mhz_min: 2500 is above sm_mhz_max 1980"},
		{MUT_SAMPLE_ID, "t.json: tasks[0].samples[0].sample: 7 is outside [0, 4]"},
		{MUT_SAMPLE_DUP,
		 "t.json: tasks[0].samples[1].sample: 0 appears twice in this task"},
		{MUT_SOURCE_DOTDOT,
		 "t.json: tasks[0].samples[0].source_path: has a '..' component"},
		{MUT_SOURCE_ABS, "t.json: tasks[0].samples[0].source_path: must be relative"},
		{MUT_UNKNOWN, "t.json: nonce: unknown field"},
		{MUT_DEL_L3, "t.json: aggregates.L3: missing, but 3 tasks are L3"},
		{MUT_TRACK, "t.json: track: \"rsi\" is not one of \"capability\", \"weight_rsi\", "
			    "\"procedure_rsi\", \"harness_rsi\", \"frontier\", \"controls\""},
		{MUT_HASH, "t.json: bank.hash: expected 16 to 128 lowercase hex digits"},
		{MUT_SEED, "t.json: seed: -1 is outside [0, 9223372036854775807]"},
		{MUT_PROTOCOL, "t.json: protocol.max_samples: 3 is below min_samples 10"},
		{MUT_TOKENS,
		 "t.json: tasks[2].samples[3].tokens.out: expected an integer, got a string"},
		{MUT_TASK_DUP,
		 "t.json: tasks[1].name: \"scale_bias_gelu\" appears twice (also tasks[0])"},
		{MUT_NAN_SCORE, "t.json: tasks[0].samples[2].score: 1.5 is outside [0, 1]"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		json_t *sc = fixture("cap_qwen7b.json");
		struct ka_err e;
		CHECK(sc);
		mutate(sc, t[i].m);
		CHECK_STR(check(sc, &e), t[i].want);
		json_decref(sc);
	}
}

/* Mutations whose message depends on fixture numbers: check the prefix. */
static void test_mutation_prefixes(void)
{
	static const struct {
		enum mut m;
		const char *prefix;
	} t[] = {
		{MUT_SPEEDUP_ORDER, "needs lo <= median <= hi"},
		{MUT_FAILED_WITH_SPEEDUP, "time_us: must be null when the verdict is"},
		{MUT_FIG_ORDER, "t.json: aggregates.overall.correct: needs lo <= value <= hi"},
		{MUT_CI_HI, "t.json: aggregates.overall.mean_c.hi: "},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		json_t *sc = fixture("cap_qwen7b.json");
		struct ka_err e;
		mutate(sc, t[i].m);
		const char *msg = check(sc, &e);
		CHECK(strstr(msg, t[i].prefix) != NULL);
		json_decref(sc);
	}
}

static void test_rsi_rules(void)
{
	struct ka_err e;
	json_t *sc = fixture("wrsi_qwen7b.json");
	json_object_set_new(at(sc, "summary", NULL), "rounds", json_integer(4));
	CHECK_STR(check(sc, &e), "t.json: summary.rounds: 4 but the last round in rounds is 5");
	json_decref(sc);

	sc = fixture("wrsi_qwen7b.json");
	json_t *rows = json_object_get(sc, "rounds");
	json_object_set_new(json_array_get(rows, 0), "arm", json_string("improved"));
	CHECK_STR(check(sc, &e),
		  "t.json: rounds[0].arm: \"improved\" is not an arm of the weight_rsi track");
	json_decref(sc);

	sc = fixture("controls_qwen7b.json");
	json_object_set_new(at(sc, "summary", "recursion_gain"), "value", json_real(0.05));
	CHECK(strstr(check(sc, &e), "t.json: summary.recursion_gain.value: 0.050000000000000003 "
				    "but weight_rsi_c minus the best control give") != NULL);
	json_decref(sc);

	sc = fixture("harness_fable.json");
	json_object_del(sc, "trainee");
	CHECK_STR(check(sc, &e), "t.json: trainee: missing");
	json_decref(sc);

	sc = fixture("cap_qwen7b.json");
	json_object_set_new(sc, "rounds", json_array());
	CHECK_STR(check(sc, &e), "t.json: rounds: not part of a capability scorecard");
	json_decref(sc);
}

/* Schema ka-scorecard/2: the weight-RSI diagnostics' rules. */
static void test_v2_rules(void)
{
	struct ka_err e;
	json_t *sc = fixture("wrsi_llama8b.json");
	CHECK_STR(json_string_value(json_object_get(sc, "schema")), SCORECARD_SCHEMA_2);
	CHECK_STR(scorecard_schema_of(sc), SCORECARD_SCHEMA_2);
	json_object_del(at(sc, "summary", NULL), "self_minus_ckpt");
	CHECK_STR(check(sc, &e),
		  "t.json: summary.self_minus_ckpt: missing (interrupt_after is set)");
	json_decref(sc);

	sc = fixture("wrsi_llama8b.json");
	json_object_set_new(at(sc, "summary", NULL), "interrupt_after", json_integer(12));
	CHECK_STR(check(sc, &e),
		  "t.json: summary.interrupt_after: 12 is not before the last round");
	json_decref(sc);

	sc = fixture("wrsi_llama8b.json");
	json_object_set_new(at(sc, "summary", NULL), "compiled_x", json_null());
	CHECK_STR(check(sc, &e),
		  "t.json: summary.compiled_x_reason: missing (compiled_x is null: say why)");
	json_object_set_new(at(sc, "summary", NULL), "compiled_x_reason", json_string("not timed"));
	json_object_set_new(json_array_get(json_object_get(sc, "rounds"),
					   json_array_size(json_object_get(sc, "rounds")) - 4),
			    "compiled_x", json_null());
	CHECK_STR(check(sc, &e), "ok"); /* self@R without compiled_x: null with a reason */
	json_decref(sc);

	sc = fixture("wrsi_llama8b.json");
	json_object_set_new(json_array_get(json_object_get(sc, "rounds"), 1), "compression",
			    json_real(2.5));
	CHECK_STR(check(sc, &e), "t.json: rounds[1].compression: 2.5 is outside [0, 2]");
	json_decref(sc);

	sc = fixture("std_mid.json");
	json_object_set_new(at(sc, "summary", NULL), "bank_tier", json_string("large"));
	CHECK_STR(check(sc, &e),
		  "t.json: summary.bank_tier: \"large\" but standardized.scale is \"mid\"");
	json_decref(sc);

	sc = fixture("std_mid.json");
	json_object_set_new(at(sc, "summary", "standardized"), "band",
			    json_pack("[f,f]", 0.6, 0.2));
	CHECK_STR(check(sc, &e), "t.json: summary.standardized.band: expected [lo, hi] with 0 <= "
				 "lo <= hi <= 1");
	json_decref(sc);

	/* the /2 summary fields are not part of /1 */
	sc = fixture("wrsi_qwen7b.json");
	json_object_set_new(at(sc, "summary", NULL), "compiled_x_reason", json_string("x"));
	CHECK_STR(check(sc, &e), "t.json: summary.compiled_x_reason: not part of schema "
				 "ka-scorecard/1 (it is of ka-scorecard/2)");
	json_decref(sc);
}

static void test_writers(void)
{
	json_t *sc = fixture("cap_fable.json");
	struct scorecard_metrics m;
	scorecard_metrics_from_json(sc, &m);
	CHECK(m.n_tasks == 9);
	json_t *ag = scorecard_aggregates_json(m.tasks, m.n_tasks, 5);
	CHECK(json_equal(ag, json_object_get(sc, "aggregates")));
	json_decref(ag);
	scorecard_metrics_free(&m);
	json_decref(sc);

	struct metrics_figure undef = {0, 0, 0, 0}, f = {1, 0.5, 0.25, 0.75};
	json_t *j = scorecard_figure_json(&undef);
	CHECK(json_is_null(j));
	json_decref(j);
	j = scorecard_figure_json(&f);
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	CHECK_STR(s, "{\"value\":0.5,\"lo\":0.25,\"hi\":0.75}");
	free(s);
	json_decref(j);
}

static void test_load_errors(void)
{
	struct ka_err e;
	CHECK(scorecard_load("/nonexistent/scorecard.json", &e) == NULL);
	CHECK(strstr(e.msg, "/nonexistent/scorecard.json") != NULL);
}

/* A frontier row's timing (docs/frontier.md): accepted when well formed,
 * refused with the field named otherwise. */
static void test_frontier_times(void)
{
	struct ka_err e;
	json_t *sc = fixture("frontier_qwen7b.json");
	CHECK(sc);
	json_t *row = json_array_get(json_object_get(sc, "rounds"), 0);
	json_object_set_new(row, "wall_s", json_real(12.5));
	json_object_set_new(row, "evaluate_s", json_real(1.5));
	json_object_set_new(row, "validation",
			    json_pack("{s:f,s:{s:{s:i,s:i,s:f}}}", "s", 11.0, "steps", "gold", "n",
				      3, "failed", 1, "s", 8.2));
	CHECK_STR(check(sc, &e), "ok");
	json_t *g = json_object_get(json_object_get(json_object_get(row, "validation"), "steps"),
				    "gold");
	json_object_set_new(g, "failed", json_integer(4));
	CHECK_STR(check(sc, &e), "t.json: rounds[0].validation.steps.gold.failed: 4 failures of 3 "
				 "runs");
	json_object_set_new(g, "failed", json_integer(1));
	json_object_set_new(row, "wall_s", json_real(-1));
	CHECK_STR(check(sc, &e), "t.json: rounds[0].wall_s: -1 is outside [0, 1e+09]");
	json_decref(sc);
}

int main(void)
{
	RUN(test_good_fixtures);
	RUN(test_mutations);
	RUN(test_mutation_prefixes);
	RUN(test_rsi_rules);
	RUN(test_v2_rules);
	RUN(test_writers);
	RUN(test_load_errors);
	RUN(test_frontier_times);
	TEST_EXIT();
}
