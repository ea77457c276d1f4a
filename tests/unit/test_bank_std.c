/* test_bank_std.c: reading a standardized bank's manifest (src/bank_std.h):
 * a bank without one, a good one, and one problem each in format, band,
 * hash and figures, each reported as "FILE: field: problem"; the default
 * bands per scale; the scorecard's summary.standardized. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bank_std.h"
#include "ka_test.h"

static char dir[] = "/tmp/ka_test_bank_std_XXXXXX";

static json_t *good(void)
{
	return json_pack("{s:s,s:s,s:s,s:i,s:[f,f],s:s,s:s,s:i,s:{s:i},s:{s:f,s:f,s:n,s:s}}",
			 "format", BANK_STD_FORMAT, "scale", "mid", "anchor",
			 "openai:Qwen/Qwen2.5-Coder-7B@http://127.0.0.1:8000/v1", "k", 8, "band",
			 0.125, 0.625, "baseline", "eager", "hash", "0123456789abcdef", "n_tasks",
			 12, "source", "n_tasks", 40, "figures", "pass_rate", 0.4, "c", 0.3,
			 "compiled_x", "compiled_x_reason", "not timed (--no-timing)");
}

/* Write j as dir/standardized.json and read it back. */
static int roundtrip(json_t *j, struct bank_std_info *out, struct ka_err *e)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, BANK_STD_FILE) < 0)
		return -2;
	json_dump_file(j, p, 0);
	free(p);
	json_decref(j);
	return bank_std_read(dir, out, e);
}

static void expect_bad(json_t *j, const char *want)
{
	struct bank_std_info s;
	struct ka_err e;
	CHECK_EQ_INT(roundtrip(j, &s, &e), -1);
	if (!strstr(e.msg, want))
		printf("  got: %s\n  want: %s\n", e.msg, want);
	CHECK(strstr(e.msg, want) != NULL);
	CHECK(strstr(e.msg, "standardized.json") != NULL);
}

static void test_read(void)
{
	struct bank_std_info s;
	struct ka_err e;
	CHECK_EQ_INT(bank_std_read(dir, &s, &e), 1); /* not a standardized bank */
	CHECK_EQ_INT(roundtrip(good(), &s, &e), 0);
	CHECK_STR(s.scale, "mid");
	CHECK_STR(s.hash, "0123456789abcdef");
	CHECK_EQ_INT(s.k, 8);
	CHECK_EQ_INT(s.n_tasks, 12);
	CHECK_EQ_INT(s.n_source, 40);
	CHECK_NEAR(s.hi, 0.625, 1e-12);
	CHECK_NEAR(s.pass_rate, 0.4, 1e-12);
	CHECK(s.compiled_x <= 0);
	CHECK_STR(s.compiled_x_reason, "not timed (--no-timing)");

	json_t *j = good();
	json_object_set_new(j, "format", json_string("ka-std-bank/9"));
	expect_bad(j, "format: \"ka-std-bank/9\", this ka reads \"ka-std-bank/1\"");
	j = good();
	json_object_set_new(j, "band", json_pack("[f,f]", 0.5, 0.25));
	expect_bad(j, "band[1]");
	j = good();
	json_object_set_new(j, "hash", json_string("XYZ"));
	expect_bad(j, "hash: expected 16 lowercase hex digits");
	j = good();
	json_object_set_new(j, "scale", json_string("huge"));
	expect_bad(j, "scale: \"huge\" is not small, mid or large");
	j = good();
	json_object_del(json_object_get(j, "figures"), "compiled_x_reason");
	expect_bad(j, "figures.compiled_x_reason: missing");
	j = good();
	json_object_set_new(json_object_get(j, "figures"), "pass_rate", json_real(1.5));
	expect_bad(j, "figures.pass_rate");
	j = good();
	json_object_del(j, "k");
	expect_bad(j, "k");
}

static void test_band_and_summary(void)
{
	double lo, hi;
	CHECK_EQ_INT(bank_std_default_band("small", &lo, &hi), 0);
	CHECK_NEAR(lo, 0.125, 0);
	CHECK_NEAR(hi, 0.75, 0);
	CHECK_EQ_INT(bank_std_default_band("large", &lo, &hi), 0);
	CHECK_NEAR(hi, 0.5, 0);
	CHECK_EQ_INT(bank_std_default_band("xl", &lo, &hi), -1);
	struct bank_std_info s;
	struct ka_err e;
	CHECK_EQ_INT(roundtrip(good(), &s, &e), 0);
	json_t *j = bank_std_summary_json(&s);
	CHECK_STR(json_string_value(json_object_get(j, "scale")), "mid");
	CHECK_EQ_INT((int)json_integer_value(json_object_get(j, "n_source_tasks")), 40);
	CHECK(json_is_null(json_object_get(j, "compiled_x")));
	CHECK_STR(json_string_value(json_object_get(j, "compiled_x_reason")),
		  "not timed (--no-timing)");
	json_decref(j);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("FAIL test_bank_std: mkdtemp\n");
		return 1;
	}
	RUN(test_read);
	RUN(test_band_and_summary);
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, BANK_STD_FILE) >= 0)
		unlink(p);
	free(p);
	rmdir(dir);
	TEST_EXIT();
}
