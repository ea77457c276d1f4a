/* test_task.c: task.json loading. The good fixtures load with the expected
 * fields; each bad fixture in tests/data/tasks_bad gives its documented
 * one-line error; more field errors come from small inline variants of a
 * valid task (baseline_torch among them); shapes parse and print; the task
 * hash follows the content. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "gold.h"
#include "ka_test.h"
#include "task.h"
#include "util.h"

static void test_task_good_fixture(void)
{
	struct ka_err e = {{0}};
	struct ka_task *t = task_load("tests/data/tasks_good/row_dot/", &e);
	if (!t)
		printf("# %s\n", e.msg);
	CHECK(t != NULL);
	CHECK_STR(t->dir, "tests/data/tasks_good/row_dot");
	CHECK_STR(t->name, "row_dot");
	CHECK_STR(t->tier, "L2");
	CHECK(t->n_params == 3);
	CHECK_STR(t->params[2], "K");
	CHECK(t->n_inputs == 2 && t->n_outputs == 1);
	CHECK(t->inputs[0].dtype == KA_DTYPE_BF16);
	CHECK(t->inputs[0].dist.kind == KA_DIST_NORMAL);
	CHECK(t->inputs[0].dist.a == 0.5 && t->inputs[0].dist.b == 2.0);
	CHECK(t->inputs[1].dtype == KA_DTYPE_INT32);
	CHECK(t->inputs[1].dist.kind == KA_DIST_INT);
	CHECK(t->inputs[1].dist.a == -3 && t->inputs[1].dist.b == 3);
	CHECK(t->outputs[0].ndim == 3);
	CHECK_STR(expr_text(t->outputs[0].shape[2]), "2");
	CHECK_STR(expr_text(t->outputs[0].per_item), "2");
	CHECK(t->n_item_dims == 2);
	CHECK(t->bench.v[0] == 16 && t->bench.v[1] == 1024 && t->bench.v[2] == 4096);
	CHECK(t->n_checks == 2 && t->checks[0].v[1] == 37);
	CHECK(t->atol == 1e-9 && t->rtol == 1e-9);
	CHECK(t->n_libs == 1);
	CHECK_STR(t->libs[0], "cublas");
	CHECK(strstr(t->ref_src, "KA_LD_BF16") != NULL);

	int64_t n = 0, dims[KA_MAX_DIMS];
	CHECK(task_numel(t, &t->inputs[0], &t->checks[0], &n, &e) == 0 && n == 3 * 37 * 45);
	CHECK(task_item_count(t, &t->checks[0], &n, &e) == 0 && n == 111);
	CHECK(task_item_dims(t, &t->checks[0], dims, &e) == 0 && dims[0] == 3 && dims[1] == 37);

	char buf[128];
	task_shape_str(t, &t->checks[0], buf, sizeof buf);
	CHECK_STR(buf, "B=3,M=37,K=45");

	/* The hash is stable across loads and differs between tasks. */
	struct ka_task *t2 = task_load("tests/data/tasks_good/row_dot", &e);
	struct ka_task *t3 = task_load("tests/data/tasks_good/add_scale", &e);
	CHECK(t2 && t3);
	CHECK(task_hash(t) == task_hash(t2));
	CHECK(task_hash(t) != task_hash(t3));
	free(t2->ref_src);
	t2->ref_src = xstrdup("/* changed */");
	CHECK(task_hash(t) != task_hash(t2));
	task_free(t);
	task_free(t2);
	task_free(t3);
	task_free(NULL);
}

/* Each bad fixture and its documented error (also in its 'expected' file). */
static void test_task_bad_fixtures(void)
{
	static const struct {
		const char *dir, *msg;
	} cases[] = {
		{"tests/data/tasks_bad/malformed_json",
		 "tests/data/tasks_bad/malformed_json/task.json: line 4, column 15: invalid JSON: "
		 "'}' "
		 "expected near '\"description\"'"},
		{"tests/data/tasks_bad/unknown_field",
		 "tests/data/tasks_bad/unknown_field/task.json: inputs[1]: unknown field 'scale'"},
		{"tests/data/tasks_bad/wrong_type", "tests/data/tasks_bad/wrong_type/task.json: "
						    "params: expected an array, got a string"},
		{"tests/data/tasks_bad/unknown_dtype",
		 "tests/data/tasks_bad/unknown_dtype/task.json: inputs[1].dtype: unknown dtype "
		 "'fp8'"},
		{"tests/data/tasks_bad/bad_expr", "tests/data/tasks_bad/bad_expr/task.json: "
						  "min_bytes: cannot parse '10*(N+': expected "
						  "an operand at end"},
		{"tests/data/tasks_bad/div_zero", "tests/data/tasks_bad/div_zero/task.json: "
						  "inputs[0].shape[0]: 'N/(N-1)*N': division "
						  "by zero at checks[1] (N=1)"},
		{"tests/data/tasks_bad/overflow",
		 "tests/data/tasks_bad/overflow/task.json: outputs[0].shape[0]: 'N*N*N*N/(N*N*N)': "
		 "overflow at bench (N=1000000)"},
		{"tests/data/tasks_bad/missing_ref",
		 "tests/data/tasks_bad/missing_ref/ref.c: No such file or directory"},
		{"tests/data/tasks_bad/no_odd_check",
		 "tests/data/tasks_bad/no_odd_check/task.json: checks: no check shape has an odd "
		 "size (a parameter value or a tensor dimension that is not a multiple of 8)"},
		{"tests/data/tasks_bad/int_range_expr",
		 "tests/data/tasks_bad/int_range_expr/task.json: inputs[0].dist: range does not "
		 "fit "
		 "int8 (lo 0, hi 999) at bench (N=4096,V=1000,D=64)"},
		{"tests/data/tasks_bad/no_such_task",
		 "tests/data/tasks_bad/no_such_task/task.json: No such file or directory"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ka_err e = {{0}};
		struct ka_task *t = task_load(cases[i].dir, &e);
		CHECK(t == NULL);
		CHECK_STR(e.msg, cases[i].msg);
	}
}

/* A reference that does not compile: the task loads, gold_open fails. */
static void test_task_ref_compile_error(void)
{
	struct ka_err e = {{0}};
	struct ka_task *t = task_load("tests/data/tasks_bad/ref_compile_error", &e);
	CHECK(t != NULL);
	struct gold *g = gold_open(t, &e);
	CHECK(g == NULL);
	CHECK_STR(e.msg, "tests/data/tasks_bad/ref_compile_error/ref.c: does not compile as C: "
			 "tests/data/tasks_bad/ref_compile_error/ref.c:7:20: error: "
			 "'undeclared_thing' undeclared (first use in this "
			 "function)");
	task_free(t);
}

/* A valid task.json with one substitution: "@X@" markers are replaced. */
static const char base_json[] =
	"{\"name\": @NAME@, \"tier\": \"L1\", \"description\": \"d\", \"torch\": \"x\",\n"
	" \"params\": @PARAMS@,\n"
	" \"inputs\": [{\"name\": \"x\", \"dtype\": @DTYPE@, \"shape\": [@SHAPE@],\n"
	"   \"dist\": @DIST@}],\n"
	" \"outputs\": [{\"name\": @ONAME@, \"dtype\": \"fp32\", \"shape\": [\"N\"], \"per_item\": "
	"@PER@}],\n"
	" \"items\": [\"N\"], \"bench\": @BENCH@, \"checks\": [{\"N\": 1031}, {\"N\": 64}],\n"
	" \"tolerance\": @TOL@, \"libraries\": @LIBS@,\n"
	" \"min_bytes\": @MINB@, \"min_flops\": 0@EXTRA@}\n";

static const char *const defaults[][2] = {
	{"@NAME@", "\"t\""},
	{"@PARAMS@", "[\"N\"]"},
	{"@DTYPE@", "\"fp32\""},
	{"@SHAPE@", "\"N\""},
	{"@DIST@", "{\"kind\": \"normal\", \"mean\": 0, \"std\": 1}"},
	{"@ONAME@", "\"y\""},
	{"@PER@", "1"},
	{"@BENCH@", "{\"N\": 4096}"},
	{"@TOL@", "{\"atol\": 0.001, \"rtol\": 0.001}"},
	{"@LIBS@", "[]"},
	{"@MINB@", "\"8*N\""},
	{"@EXTRA@", ""},
};

static char *subst(const char *marker, const char *value)
{
	char *s = xstrdup(base_json);
	for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) {
		const char *m = defaults[i][0];
		const char *v = !strcmp(m, marker) ? value : defaults[i][1];
		char *p = strstr(s, m);
		char *n = xasprintf("%.*s%s%s", (int)(p - s), s, v, p + strlen(m));
		free(s);
		s = n;
	}
	return s;
}

static void test_task_field_errors(void)
{
	static const struct {
		const char *marker, *value, *msg;
	} cases[] = {
		{"@NAME@", "\"Bad-Name\"",
		 "name: 'Bad-Name' must be 1 to 31 characters of [a-z0-9_]"},
		{"@NAME@", "7", "name: expected a string, got an integer"},
		{"@PARAMS@", "[\"N\", \"N\"]", "params[1]: duplicate parameter 'N'"},
		{"@PARAMS@", "[\"min\"]", "params[0]: 'min' is reserved"},
		{"@PARAMS@", "[\"9x\"]",
		 "params[0]: '9x' is not an identifier of at most 31 characters"},
		{"@DTYPE@", "\"int32\"", "inputs[0].dist.kind: an int32 input needs kind 'int'"},
		{"@SHAPE@", "\"N\", -3", "inputs[0].shape[1]: negative integer -3"},
		{"@SHAPE@", "\"N\", 1.5",
		 "inputs[0].shape[1]: expected an expression (string or integer), got a number"},
		{"@SHAPE@", "\"N-2000\"",
		 "inputs[0].shape[0]: 'N-2000': negative size -969 at checks[0] (N=1031)"},
		{"@SHAPE@", "\"N*N*N*N*N*N\"",
		 "inputs[0].shape[0]: 'N*N*N*N*N*N': overflow at bench (N=4096)"},
		{"@SHAPE@", "\"N*N*N\", \"N*N*N\"",
		 "inputs[0].shape: element count overflows int64 at bench (N=4096)"},
		{"@SHAPE@", "\"N*N*N*N\", 8192",
		 "inputs[0].shape: size in bytes overflows int64 at bench (N=4096)"},
		{"@SHAPE@", "\"N*N*N\"",
		 "inputs[0].shape: 1095912791 elements, over the cap of 134217728 at checks[0] "
		 "(N=1031)"},
		{"@SHAPE@", "\"M\"", "inputs[0].shape[0]: cannot parse 'M': unknown name 'M' at 0"},
		{"@DIST@", "{\"kind\": \"gauss\"}",
		 "inputs[0].dist.kind: unknown distribution 'gauss' (normal, uniform or int)"},
		{"@DIST@", "{\"kind\": \"normal\", \"mean\": 0}",
		 "inputs[0].dist: missing field 'std'"},
		{"@DIST@", "{\"kind\": \"normal\", \"mean\": 0, \"std\": 1, \"lo\": 0}",
		 "inputs[0].dist: unknown field 'lo'"},
		{"@DIST@", "{\"kind\": \"normal\", \"mean\": 0, \"std\": -1}",
		 "inputs[0].dist.std: std must not be negative"},
		{"@DIST@", "{\"kind\": \"uniform\", \"lo\": 2, \"hi\": 1}",
		 "inputs[0].dist: needs lo < hi"},
		{"@DIST@", "{\"kind\": \"int\", \"lo\": 0, \"hi\": 2.5}",
		 "inputs[0].dist.hi: expected an integer or an expression string"},
		/* int bounds as expressions over the parameters, checked at every shape */
		{"@DIST@", "{\"kind\": \"int\", \"lo\": 0, \"hi\": \"N - 2000\"}",
		 "inputs[0].dist: needs lo <= hi (lo 0, hi -969) at checks[0] (N=1031)"},
		{"@DIST@", "{\"kind\": \"int\", \"lo\": \"Q\", \"hi\": 3}",
		 "inputs[0].dist.lo: cannot parse 'Q': unknown name 'Q' at 0"},
		{"@DIST@", "{\"kind\": \"int\", \"lo\": 0, \"hi\": \"N/(N-N)\"}",
		 "inputs[0].dist.hi: 'N/(N-N)': division by zero at bench (N=4096)"},
		{"@DIST@", "{\"kind\": \"int\", \"lo\": \"-N*N*N*N*N\", \"hi\": 0}",
		 "inputs[0].dist: lo and hi must be within +-2^53 (lo -1152921504606846976, hi 0) "
		 "at "
		 "bench (N=4096)"},
		{"@DIST@", "{\"kind\": \"uniform\", \"lo\": 0, \"hi\": \"N\"}",
		 "inputs[0].dist.hi: expected a number, got a string"},
		{"@DIST@", "{\"kind\": \"normal\", \"mean\": \"0\", \"std\": 1}",
		 "inputs[0].dist.mean: expected a number, got a string"},
		{"@ONAME@", "\"x\"", "outputs[0]: duplicate tensor name 'x'"},
		{"@ONAME@", "\"N\"", "outputs[0]: name 'N' is also a parameter"},
		{"@PER@", "2",
		 "outputs[0].per_item: 4096 items x 2 elements each does not cover the 4096 "
		 "elements of 'y' at bench (N=4096)"},
		{"@BENCH@", "{\"N\": 0}", "bench.N: 0 is out of range [1, 2^40]"},
		{"@BENCH@", "{}", "bench: missing parameter 'N'"},
		{"@BENCH@", "{\"N\": 8, \"Q\": 1}", "bench: unknown parameter 'Q'"},
		{"@TOL@", "{\"atol\": 0.1}", "tolerance: missing field 'rtol'"},
		{"@TOL@", "{\"atol\": -0.1, \"rtol\": 0}", "tolerance.atol: must not be negative"},
		{"@LIBS@", "[\"mkl\"]",
		 "libraries[0]: unknown library 'mkl' (cublas, cublaslt, cudnn)"},
		{"@LIBS@", "\"cublas\"", "libraries: expected an array, got a string"},
		{"@MINB@", "\"N/(N-N)\"",
		 "min_bytes: 'N/(N-N)': division by zero at bench (N=4096)"},
		{"@EXTRA@", ", \"flops\": 3", "flops: unknown field"},
		{"@DTYPE@", "\"bool\"", "inputs[0].dist.kind: a bool input needs kind 'int'"},
		{"@DTYPE@", "\"int8\"", "inputs[0].dist.kind: an int8 input needs kind 'int'"},
		{"@EXTRA@", ", \"scalars\": [{\"name\": \"N\", \"value\": 1}]",
		 "scalars[0].name: name 'N' is also a parameter"},
		{"@EXTRA@", ", \"scalars\": [{\"name\": \"s\", \"value\": \"1\"}]",
		 "scalars[0].value: expected a number, got a string"},
		{"@EXTRA@", ", \"scalars\": [{\"name\": \"s\"}]",
		 "scalars[0]: missing field 'value'"},
		{"@EXTRA@",
		 ", \"scalars\": [{\"name\": \"s\", \"value\": 1}, {\"name\": \"s\", \"value\": "
		 "2}]",
		 "scalars[1].name: duplicate scalar 's'"},
		{"@EXTRA@", ", \"scalars\": {\"s\": 1}",
		 "scalars: expected an array, got an object"},
		{"@EXTRA@", ", \"scalars\": [{\"name\": \"x\", \"value\": 1}]",
		 "inputs[0]: name 'x' is also a scalar"},
		{"@EXTRA@", ", \"constraints\": [\"N % 2\"]",
		 "constraints[0]: 'N % 2' is 1, must be 0 at checks[0] (N=1031)"},
		{"@EXTRA@", ", \"constraints\": [\"0\", \"N / (N - 64) * 0\"]",
		 "constraints[1]: 'N / (N - 64) * 0': division by zero at checks[1] (N=64)"},
		{"@EXTRA@", ", \"baseline_workspace\": \"N - 2000\"",
		 "baseline_workspace: 'N - 2000': -969 bytes, expected 0 to 68719476736 at "
		 "checks[0] "
		 "(N=1031)"},
		{"@EXTRA@", ", \"baseline_workspace\": \"N * N * N * N\"",
		 "baseline_workspace: 'N * N * N * N': 281474976710656 bytes, expected 0 to "
		 "68719476736 at bench (N=4096)"},
		{"@EXTRA@", ", \"baseline_workspace\": 1.5",
		 "baseline_workspace: expected an expression (string or integer), got a number"},
		{"@EXTRA@", ", \"baseline_torch\": 2",
		 "baseline_torch: expected a string, got an integer"},
		{"@EXTRA@", ", \"baseline_torch\": \" \\n\"", "baseline_torch: must not be blank"},
		{"@EXTRA@", ", \"baseline_torch\": \"x\"",
		 "baseline_torch: is the same as torch (leave it out: the baselines then mirror "
		 "torch)"},
		{"@EXTRA@", ", \"constraints\": [3]",
		 "constraints[0]: expected a string, got an integer"},
		{"@EXTRA@", ", \"constraints\": [\"K\"]",
		 "constraints[0]: cannot parse 'K': unknown name 'K' at 0"},
		{"@EXTRA@", ", \"name\": \"u\"",
		 "line 8, column 43: invalid JSON: duplicate object key near '\"name\"'"},
	};
	char tmpl[] = "/tmp/ka-test-task-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	char *jpath = xasprintf("%s/task.json", dir), *rpath = xasprintf("%s/ref.c", dir);
	CHECK(util_write_file(rpath, "/* ref */\n", 10, NULL) == 0);
	struct ka_err e = {{0}};
	/* The base itself loads. */
	char *good = subst("", "");
	CHECK(util_write_file(jpath, good, strlen(good), NULL) == 0);
	free(good);
	struct ka_task *t = task_load(dir, &e);
	if (!t)
		printf("# base: %s\n", e.msg);
	CHECK(t != NULL);
	/* baseline_torch, where given, is kept and enters the hash; absent, NULL. */
	char *bt = subst("@EXTRA@", ", \"baseline_torch\": \"x * 1.0\"");
	CHECK(util_write_file(jpath, bt, strlen(bt), NULL) == 0);
	free(bt);
	struct ka_task *t2 = task_load(dir, &e);
	CHECK(t && t2 && t->baseline_torch == NULL && !strcmp(t2->baseline_torch, "x * 1.0") &&
	      task_hash(t) != task_hash(t2));
	task_free(t);
	task_free(t2);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *json = subst(cases[i].marker, cases[i].value);
		util_write_file(jpath, json, strlen(json), NULL);
		free(json);
		t = task_load(dir, &e);
		char *want = xasprintf("%s: %s", jpath, cases[i].msg);
		int ok = t == NULL && !strcmp(e.msg, want);
		if (!ok)
			printf("# case %zu: got \"%s\"\n#          want \"%s\"\n", i,
			       t ? "(loaded)" : e.msg, want);
		free(want);
		task_free(t);
		CHECK(ok);
	}
	util_rmtree(dir);
	free(jpath);
	free(rpath);
}

static void test_task_shape_parse(void)
{
	static const struct {
		const char *text, *err; /* err NULL: ok, printed back as text */
	} cases[] = {
		{"B=3,M=37,K=45", NULL},
		{"K=45,B=3,M=37", NULL},
		{"B=3,M=37", "shape 'B=3,M=37': missing parameter 'K'"},
		{"B=3,M=37,K=45,Q=1", "shape 'B=3,M=37,K=45,Q=1': unknown parameter 'Q'"},
		{"B=3,B=4,M=1,K=1", "shape 'B=3,B=4,M=1,K=1': parameter 'B' given twice"},
		{"B=3,M=x,K=1", "shape 'B=3,M=x,K=1': bad value 'x' for 'M'"},
		{"B=0,M=1,K=1", "shape 'B=0,M=1,K=1': B=0 is out of range [1, 2^40]"},
		{"B=3,M=1,K=1,", "shape 'B=3,M=1,K=1,': trailing ','"},
		{"B3", "shape 'B3': expected NAME=VALUE at 'B3'"},
		{"B=,M=1,K=1", "shape 'B=,M=1,K=1': bad value for 'B'"},
	};
	struct ka_err e = {{0}};
	struct ka_task *t = task_load("tests/data/tasks_good/row_dot", &e);
	CHECK(t != NULL);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ka_shape sh;
		int rc = task_shape_parse(t, cases[i].text, &sh, &e);
		if (cases[i].err) {
			if (rc == 0 || strcmp(e.msg, cases[i].err))
				printf("# %s: %s\n", cases[i].text, rc ? e.msg : "(ok)");
			CHECK(rc == -1);
			CHECK_STR(e.msg, cases[i].err);
		} else {
			CHECK(rc == 0);
			CHECK(sh.v[0] == 3 && sh.v[1] == 37 && sh.v[2] == 45 && sh.v[3] == 0);
		}
	}
	/* task_check_shape on a shape that breaks per_item coverage is impossible
	 * here; a huge shape overflows in bytes. */
	struct ka_shape big = {{1 << 22, 1 << 22, 1 << 22}};
	CHECK(task_check_shape(t, &big, 0, &e) == -1);
	CHECK_STR(e.msg, "inputs[0].shape: element count overflows int64");
	task_free(t);
}

static void test_task_dtypes(void)
{
	static const struct {
		enum ka_dtype d;
		const char *name, *ctype;
		size_t size;
	} cases[] = {
		{KA_DTYPE_FP32, "fp32", "float", 4},   {KA_DTYPE_FP16, "fp16", "ka_half", 2},
		{KA_DTYPE_BF16, "bf16", "ka_bf16", 2}, {KA_DTYPE_FP64, "fp64", "double", 8},
		{KA_DTYPE_INT32, "int32", "int", 4},   {KA_DTYPE_INT64, "int64", "ka_i64", 8},
		{KA_DTYPE_BOOL, "bool", "ka_bool", 1}, {KA_DTYPE_INT8, "int8", "ka_i8", 1},
		{KA_DTYPE_UINT8, "uint8", "ka_u8", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		CHECK_STR(dtype_name(cases[i].d), cases[i].name);
		CHECK_STR(dtype_ctype(cases[i].d), cases[i].ctype);
		CHECK(dtype_size(cases[i].d) == cases[i].size);
	}
}

/* Scalars, constraints and the one-byte dtypes: a task using all of them
 * loads, the constraint is checked at other shapes, and the gold passes the
 * scalars to ref as doubles after the parameters. */
static const char scal_json[] =
	"{\"name\": \"s\", \"tier\": \"L1\", \"description\": \"d\", \"torch\": \"x\",\n"
	" \"params\": [\"N\", \"G\"],\n"
	" \"scalars\": [{\"name\": \"alpha\", \"value\": 0.1}, {\"name\": \"beta\", \"value\": "
	"-3}],\n"
	" \"constraints\": [\"N % G\", \"max(G - 8, 0)\"],\n"
	" \"inputs\": [{\"name\": \"x\", \"dtype\": \"fp32\", \"shape\": [\"N\"],\n"
	"   \"dist\": {\"kind\": \"normal\", \"mean\": 0, \"std\": 1}},\n"
	"  {\"name\": \"m\", \"dtype\": \"bool\", \"shape\": [\"N\"], \"dist\": {\"kind\": "
	"\"int\", \"lo\": 0, \"hi\": 1}},\n"
	"  {\"name\": \"q\", \"dtype\": \"int8\", \"shape\": [\"N\"], \"dist\": {\"kind\": "
	"\"int\", \"lo\": -128, \"hi\": 127}},\n"
	"  {\"name\": \"u\", \"dtype\": \"uint8\", \"shape\": [\"N\"], \"dist\": {\"kind\": "
	"\"int\", \"lo\": 0, \"hi\": 255}}],\n"
	" \"outputs\": [{\"name\": \"y\", \"dtype\": \"fp64\", \"shape\": [\"N\"], \"per_item\": "
	"1},\n"
	"  {\"name\": \"k\", \"dtype\": \"int8\", \"shape\": [\"N\"], \"per_item\": 1}],\n"
	" \"items\": [\"N\"], \"bench\": {\"N\": 4096, \"G\": 8}, \"checks\": [{\"N\": 1029, "
	"\"G\": 7}, {\"N\": 64, \"G\": 2}],\n"
	" \"tolerance\": {\"atol\": 0, \"rtol\": 0}, \"min_bytes\": \"8*N\", \"min_flops\": 0}\n";
static const char scal_ref[] =
	"#include \"ka_ref.h\"\n"
	"KA_FN void ref(ka_i64 i, ka_i64 N, ka_i64 G, double alpha, double beta, KA_IN(float) x,\n"
	"               KA_IN(ka_bool) m, KA_IN(ka_i8) q, KA_IN(ka_u8) u, KA_OUT(double) y,\n"
	"               KA_OUT(ka_i8) k)\n"
	"{\n"
	"\t(void)N; (void)G;\n"
	"\ty[i] = m[i] ? alpha * (double)x[i] + (double)q[i] : beta + (double)u[i];\n"
	"\tk[i] = (ka_i8)(q[i] / 2);\n"
	"}\n";

static void test_task_scalars_constraints(void)
{
	char tmpl[] = "/tmp/ka-test-scal-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	char *jpath = xasprintf("%s/task.json", dir), *rpath = xasprintf("%s/ref.c", dir);
	CHECK(util_write_file(jpath, scal_json, strlen(scal_json), NULL) == 0);
	CHECK(util_write_file(rpath, scal_ref, strlen(scal_ref), NULL) == 0);
	struct ka_err e = {{0}};
	struct ka_task *t = task_load(dir, &e);
	if (!t)
		printf("# %s\n", e.msg);
	CHECK(t != NULL);
	CHECK(t->n_scalars == 2 && t->scalars[0] == 0.1 && t->scalars[1] == -3.0);
	CHECK_STR(t->scalar_names[1], "beta");
	CHECK(t->n_constraints == 2);
	CHECK(t->inputs[1].dtype == KA_DTYPE_BOOL && t->inputs[2].dtype == KA_DTYPE_INT8 &&
	      t->inputs[3].dtype == KA_DTYPE_UINT8 && t->outputs[1].dtype == KA_DTYPE_INT8);
	struct ka_shape sh;
	CHECK(task_shape_parse(t, "N=100,G=3", &sh, &e) == 0);
	CHECK(task_check_shape(t, &sh, 0, &e) == -1);
	CHECK_STR(e.msg, "constraints[0]: 'N % G' is 1, must be 0");
	CHECK(task_shape_parse(t, "N=90,G=9", &sh, &e) == 0);
	CHECK(task_check_shape(t, &sh, 0, &e) == -1);
	CHECK_STR(e.msg, "constraints[1]: 'max(G - 8, 0)' is 1, must be 0");
	/* The gold sees the scalars, and the byte inputs as their values. */
	struct gold *g = gold_open(t, &e);
	if (!g)
		printf("# gold: %s\n", e.msg);
	CHECK(g != NULL);
	void *in[KA_MAX_TENSORS] = {0};
	double *out[KA_MAX_TENSORS] = {0};
	sh = t->checks[0];
	CHECK(gold_inputs_new(t, &sh, 5, 0, 0, in, &e) == 0);
	CHECK(gold_outputs_new(t, &sh, 0, out, &e) == 0);
	CHECK(g && gold_compute(g, &sh, in, out, NULL, 0, &e) == 0);
	int ok = 1, masked = 0;
	for (int i = 0; i < 1029 && g; i++) {
		const unsigned char *m = in[1], *u = in[3];
		const signed char *q = in[2];
		double want = m[i] ? 0.1 * (double)((float *)in[0])[i] + q[i] : -3.0 + u[i];
		ok &= out[0][i] == want && out[1][i] == (double)(q[i] / 2) && m[i] <= 1;
		masked += m[i];
	}
	CHECK(ok);
	CHECK(masked > 400 && masked < 629);
	gold_buffers_free(in, t->n_inputs);
	gold_buffers_free((void **)out, t->n_outputs);
	gold_close(g);
	/* A different scalar value is a different task (identity and inputs). */
	uint64_t h = task_hash(t);
	task_free(t);
	char *j2 = xstrdup(scal_json);
	memcpy(strstr(j2, "0.1"), "0.2", 3);
	CHECK(util_write_file(jpath, j2, strlen(j2), NULL) == 0);
	free(j2);
	t = task_load(dir, &e);
	CHECK(t != NULL && task_hash(t) != h);
	task_free(t);
	util_rmtree(dir);
	free(jpath);
	free(rpath);
}

/* An int range given by expressions ("hi": "V - 1"): resolved per shape by
 * task_dist_at and gen_params_at, refused unresolved by gen_params_of,
 * checked by task_check_shape at any shape, part of the task hash; the
 * generated values stay in range at every shape. */
static void test_task_index_range(void)
{
	struct ka_err e = {{0}};
	struct ka_task *t = task_load("tests/data/tasks_index/gather_rows", &e);
	if (!t)
		printf("# %s\n", e.msg);
	CHECK(t != NULL);
	if (!t)
		return;
	const struct ka_dist *d0 = &t->inputs[0].dist;
	CHECK(d0->kind == KA_DIST_INT && t->inputs[0].lo_x == NULL && t->inputs[0].hi_x != NULL);
	CHECK_STR(expr_text(t->inputs[0].hi_x), "V - 1");
	CHECK(t->inputs[1].lo_x == NULL && t->inputs[1].hi_x == NULL);
	struct ka_dist d;
	struct gen_params gp;
	CHECK(task_dist_at(t, 0, &t->checks[0], &d, &e) == 0);
	CHECK(d.a == 0 && d.b == 2);
	CHECK(gen_params_at(t, 0, &t->bench, &gp, &e) == 0);
	CHECK(gp.kind == KA_GEN_INT && gp.lo == 0 && gp.range == 1000);
	CHECK(gen_params_at(t, 0, &t->checks[1], &gp, &e) == 0 && gp.range == 1);
	CHECK(gen_params_of(d0, &gp, &e) == -1);
	CHECK_STR(e.msg, "int: the range depends on the shape (use gen_params_at)");
	CHECK(task_dist_at(t, 2, &t->bench, &d, &e) == -1);
	/* Any other shape is checked too (--bench-shape, ka gold --shape). */
	struct ka_shape sh;
	CHECK(task_shape_parse(t, "N=5,V=1,D=3", &sh, &e) == 0);
	CHECK(task_check_shape(t, &sh, 0, &e) == 0);
	/* The generated indices are in [0, V) at each shape (all of it where N >= 10 V). */
	for (int i = 0; i < t->n_checks; i++) {
		void *in[KA_MAX_TENSORS];
		const struct ka_shape *c = &t->checks[i];
		int64_t n = c->v[0], v = c->v[1], lo = INT64_MAX, hi = INT64_MIN;
		CHECK(gold_inputs_new(t, c, 7, 0, 0, in, &e) == 0);
		for (int64_t k = 0; k < n; k++) {
			int64_t x = ((const int64_t *)in[0])[k];
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		CHECK(lo >= 0 && hi <= v - 1);
		CHECK(n < 10 * v || (lo == 0 && hi == v - 1)); /* the whole range is drawn */
		gold_buffers_free(in, t->n_inputs);
	}
	/* The bound's text is part of the identity. */
	char *json = NULL, *dir = NULL;
	size_t len = 0;
	char tmpl[] = "/tmp/ka-test-index-XXXXXX";
	dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	CHECK(util_read_file("tests/data/tasks_index/gather_rows/task.json", 1 << 20, &json, &len,
			     &e) == 0);
	char *p = strstr(json, "\"V - 1\"");
	CHECK(p != NULL);
	p[5] = '2'; /* "V - 2" */
	char *jpath = xasprintf("%s/task.json", dir), *rpath = xasprintf("%s/ref.c", dir);
	CHECK(util_write_file(jpath, json, len, NULL) == 0);
	CHECK(util_write_file(rpath, t->ref_src, strlen(t->ref_src), NULL) == 0);
	struct ka_task *t2 = task_load(dir, &e);
	/* V - 2 is -1 at the check shape V = 1: refused, naming the shape. */
	CHECK(t2 == NULL);
	CHECK(strstr(e.msg,
		     "inputs[0].dist: needs lo <= hi (lo 0, hi -1) at checks[1] (N=200,V=1,D=8)") !=
	      NULL);
	p[5] = '1';
	p[3] = '+'; /* "V + 1": loads, another hash */
	CHECK(util_write_file(jpath, json, len, NULL) == 0);
	t2 = task_load(dir, &e);
	CHECK(t2 != NULL && task_hash(t2) != task_hash(t));
	task_free(t2);
	util_rmtree(dir);
	free(jpath);
	free(rpath);
	free(json);
	task_free(t);
}

int main(void)
{
	RUN(test_task_scalars_constraints);
	RUN(test_task_good_fixture);
	RUN(test_task_bad_fixtures);
	RUN(test_task_ref_compile_error);
	RUN(test_task_field_errors);
	RUN(test_task_shape_parse);
	RUN(test_task_dtypes);
	RUN(test_task_index_range);
	TEST_EXIT();
}
