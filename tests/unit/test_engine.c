/* test_engine.c: the engine contract's host side (src/tracks/engine.h):
 * finding an engine, hashing outputs, and engine_call against a fake engine
 * (a small Python script): a finished call is journaled and not run again,
 * a changed output or other inputs are refused, an engine's error and an
 * engine that dies without a result are reported with their reason. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "ka_test.h"

static char dir[] = "/tmp/ka_test_engine_XXXXXX";

static const char fake_py[] =
	"import json, os, sys\n"
	"m = json.load(open(sys.argv[1]))\n"
	"cnt = os.path.join(os.path.dirname(sys.argv[0]), 'runs')\n"
	"n = int(open(cnt).read()) + 1 if os.path.exists(cnt) else 1\n"
	"open(cnt, 'w').write(str(n))\n"
	"if m['op'] == 'crash':\n"
	"    print('boom: the fake engine crashed'); sys.exit(3)\n"
	"res = {'format': m['format'], 'ok': m['op'] != 'fail', 'op': m['op'], 'run': n}\n"
	"if m['op'] == 'fail':\n"
	"    res['error'] = 'cannot load model \\'nope\\': not found'\n"
	"else:\n"
	"    os.makedirs(m['out'], exist_ok=True)\n"
	"    open(os.path.join(m['out'], 'w.bin'), 'w').write(m['text'])\n"
	"json.dump(res, open(sys.argv[2], 'w'))\n";

static void test_find(void)
{
	struct engine en;
	struct ka_err e;
	CHECK(engine_find("no_such_engine", &en, &e) == -1);
	CHECK(strstr(e.msg, "no engine 'no_such_engine'") != NULL);
	CHECK(engine_find("bad name!", &en, &e) == -1);
	CHECK(engine_find("/nonexistent/engine.py", &en, &e) == -1);
	engine_free(&en);
}

static void test_hash(void)
{
	char a[17], b[17], c[17];
	char *p = NULL, *f = NULL;
	struct ka_err e;
	if (asprintf(&p, "%s/h", dir) < 0 || asprintf(&f, "%s/h/x", dir) < 0)
		return;
	CHECK(util_mkdirs(p, &e) == 0);
	CHECK(util_write_file(f, "one", 3, &e) == 0);
	CHECK(engine_hash_path(p, a) == 0);
	CHECK(engine_hash_path(p, b) == 0);
	CHECK_STR(a, b);
	CHECK(util_write_file(f, "two", 3, &e) == 0);
	CHECK(engine_hash_path(p, c) == 0);
	CHECK(strcmp(a, c) != 0);
	free(p);
	free(f);
}

static int call(struct engine *en, struct journal *j, const char *key, const char *op,
		const char *text, const char *out, json_t **res, int *ran, struct ka_err *e)
{
	char *work = NULL;
	if (asprintf(&work, "%s/work", dir) < 0)
		return -1;
	json_t *m = json_pack("{s:s,s:s,s:s}", "op", op, "text", text, "out", out);
	const char *outs[] = {out, NULL};
	int rc = engine_call(en, j, key, work, m, NULL, outs, res, ran, e);
	json_decref(m);
	free(work);
	return rc;
}

static void test_call(void)
{
	struct ka_err e;
	char *py = NULL, *jp = NULL, *out = NULL, *w = NULL;
	if (asprintf(&py, "%s/fake.py", dir) < 0 || asprintf(&jp, "%s/journal.sqlite", dir) < 0 ||
	    asprintf(&out, "%s/model", dir) < 0 || asprintf(&w, "%s/model/w.bin", dir) < 0)
		return;
	CHECK(util_write_file(py, fake_py, strlen(fake_py), &e) == 0);
	struct engine en;
	CHECK(engine_find(py, &en, &e) == 0);
	en.timeout_s = 60;
	struct journal *j = journal_open(jp, &e);
	CHECK(j != NULL);
	json_t *res = NULL;
	int ran = -1;
	CHECK(call(&en, j, "r1/self/train", "train", "abc", out, &res, &ran, &e) == 0);
	CHECK_EQ_INT(ran, 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(res, "run")), 1);
	json_decref(res);
	/* the same call again: journaled, not run */
	CHECK(call(&en, j, "r1/self/train", "train", "abc", out, &res, &ran, &e) == 0);
	CHECK_EQ_INT(ran, 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(res, "run")), 1);
	json_decref(res);
	/* other inputs under the same key: refused */
	CHECK(call(&en, j, "r1/self/train", "train", "xyz", out, &res, &ran, &e) == -1);
	CHECK(strstr(e.msg, "other inputs") != NULL);
	/* the output changed on disk: refused */
	CHECK(util_write_file(w, "tampered", 8, &e) == 0);
	CHECK(call(&en, j, "r1/self/train", "train", "abc", out, &res, &ran, &e) == -1);
	CHECK(strstr(e.msg, "outputs changed") != NULL);
	/* the engine's own error, as one line */
	CHECK(call(&en, j, "r1/self/sample", "fail", "", out, &res, &ran, &e) == -1);
	CHECK(strstr(e.msg, "cannot load model 'nope'") != NULL);
	/* no result: the exit status and the log's gist */
	CHECK(call(&en, j, "r2/self/sample", "crash", "", out, &res, &ran, &e) == -1);
	CHECK(strstr(e.msg, "exit 3") != NULL);
	CHECK(strstr(e.msg, "boom") != NULL);
	/* failed calls were not journaled: they run again */
	CHECK(call(&en, j, "r2/self/sample", "train", "ok", out, &res, &ran, &e) == 0);
	CHECK_EQ_INT(ran, 1);
	json_decref(res);
	journal_close(j);
	engine_free(&en);
	free(py);
	free(jp);
	free(out);
	free(w);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(test_find);
	RUN(test_hash);
	RUN(test_call);
	util_rmtree(dir);
	TEST_EXIT();
}
