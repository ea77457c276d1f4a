/* test_util.c: util_buf, the one growing buffer (appends in a row, an empty
 * append, growth far past the first allocation, the exact bytes, and its cap:
 * at the cap, over it, a zero cap); util_run_child, the one child runner
 * (exit status, a timeout that kills the group and a grandchild that
 * outlives its parent, an output cap that truncates and says so, stderr apart
 * from stdout, extra environment); the JSON field readers (jsonf); and
 * util_log_summary, the one-line compiler log summary of bank and gold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <unistd.h>

#include "jsonf.h"
#include "ka_test.h"
#include "util.h"

/* Checks that print both values. */
#define T_EQ(a, b)                                                                                 \
	do {                                                                                       \
		long long ta_ = (long long)(a), tb_ = (long long)(b);                              \
		if (ta_ != tb_) {                                                                  \
			printf("FAIL %s: %s:%d: %s == %s: %lld != %lld\n", ka_test_name, __FILE__, \
			       __LINE__, #a, #b, ta_, tb_);                                        \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define T_HAS(hay, needle)                                                                         \
	do {                                                                                       \
		const char *th_ = (hay), *tn_ = (needle);                                          \
		if (!th_ || !strstr(th_, tn_)) {                                                   \
			printf("FAIL %s: %s:%d: \"%s\" does not contain \"%s\"\n", ka_test_name,   \
			       __FILE__, __LINE__, th_ ? th_ : "(null)", tn_);                     \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static void test_buf_appends(void)
{
	struct util_buf b = {0};
	util_buf_printf(&b, "%s", "");
	CHECK(b.len == 0 && b.s && b.s[0] == 0);
	util_buf_printf(&b, "x=%d", 42);
	util_buf_printf(&b, ", %s", "y");
	util_buf_printf(&b, "%c", '!');
	CHECK_STR(b.s, "x=42, y!");
	CHECK(b.len == 8);
	free(b.s);
}

static void test_buf_grows(void)
{
	struct util_buf b = {0};
	for (int i = 0; i < 1000; i++)
		util_buf_printf(&b, "%04d;", i);
	CHECK(b.len == 5000);
	CHECK(strlen(b.s) == 5000);
	CHECK(!strncmp(b.s, "0000;0001;", 10));
	CHECK_STR(b.s + 4990, "0998;0999;");
	CHECK(b.cap > b.len);
	/* one append larger than everything before it */
	char big[3000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	util_buf_printf(&b, "%s", big);
	CHECK(b.len == 5000 + 2999 && b.s[b.len] == 0 && b.s[b.len - 1] == 'a');
	free(b.s);
}

static const struct {
	const char *log;
	size_t cap;
	const char *want;
} summaries[] = {
	{"a.c:1: warning: w\na.c:2: error: y\nnote\na.c:3: error: z\n", 256,
	 "a.c:2: error: y | a.c:3: error: z"},
	{"no errors here\n\nsecond\nthird\nfourth\n", 256, "no errors here | second | third"},
	{"e1 error:\ne2 error:\ne3 error:\ne4 error:\n", 256, "e1 error: | e2 error: | e3 error:"},
	{"x\terror: tab\r\n", 256, "x error: tab "},
	{"error: abcdefghij\n", 8, "error: "},
	{"", 256, ""},
};

static void test_log_summary(void)
{
	for (size_t i = 0; i < sizeof summaries / sizeof summaries[0]; i++) {
		char out[256];
		util_log_summary(summaries[i].log, out, summaries[i].cap);
		CHECK_STR(out, summaries[i].want);
	}
}

static void test_buf_cap(void)
{
	struct util_buf b;
	util_buf_init_cap(&b, 5);
	T_EQ(util_buf_add(&b, "abc", 3), 0);
	T_EQ(util_buf_puts(&b, "de"), 0); /* exactly at the cap */
	CHECK_STR(b.s, "abcde");
	T_EQ(b.over, 0);
	T_EQ(util_buf_add(&b, "", 0), 0); /* nothing more is still fine */
	T_EQ(util_buf_putc(&b, 'f'), -1); /* one over */
	T_EQ(b.over, 1);
	T_EQ(b.len, 5);
	CHECK_STR(b.s, "abcde");
	T_EQ(util_buf_add(&b, "", 0), -1); /* over stays over */
	char *s = util_buf_take(&b);
	CHECK_STR(s, "abcde");
	free(s);
	T_EQ(b.len, 0);
	T_EQ(b.over, 0);
	T_EQ(b.max, 5); /* take keeps the cap */

	/* an append that does not fit keeps the part that does */
	util_buf_init_cap(&b, 4);
	T_EQ(util_buf_printf(&b, "%d", 123456), -1);
	CHECK_STR(b.s, "1234");
	util_buf_free(&b);

	/* a zero cap: holds nothing, but s is still a string */
	util_buf_init_cap(&b, 0);
	T_EQ(util_buf_add(&b, "", 0), 0);
	CHECK_STR(b.s, "");
	T_EQ(util_buf_putc(&b, 'x'), -1);
	T_EQ(b.len, 0);
	CHECK_STR(b.s, "");
	util_buf_free(&b);

	/* a zeroed buffer has the default cap */
	struct util_buf z = {0};
	T_EQ(util_buf_puts(&z, "ok"), 0);
	util_buf_init(&b);
	T_EQ(b.max_set, 0);
	util_buf_free(&z);
	util_buf_free(NULL);
}

/* 1 while pid runs (a zombie waiting for its reaper counts as dead). */
static int pid_alive(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *close_paren = strrchr(buf, ')');
	return !(close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z');
}

static void test_run_status(void)
{
	struct ka_err e;
	char *out = NULL;
	size_t len = 0;
	int trunc = -1;
	char *a1[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	T_EQ(util_run(a1, NULL, 10, 1024, &out, &len, &trunc, &e), 3);
	CHECK_STR(out, "out\nerr\n");
	T_EQ(len, 8);
	T_EQ(trunc, 0);
	free(out);
	char *a2[] = {"/bin/sh", "-c", "kill -USR1 $$", NULL};
	T_EQ(util_run(a2, NULL, 10, 1024, &out, NULL, NULL, &e), 128 + SIGUSR1);
	free(out);
	/* a stop signal meant for the run does not reach a helper
	 * (util_child_detach_signals): its own group, the four ignored */
	char *stops[] = {"/bin/sh", "-c",
			 "kill -TERM $$; kill -INT $$; kill -HUP $$; kill -QUIT $$; "
			 "[ \"$(cut -d' ' -f5 /proc/$$/stat)\" = $$ ] && exit 5; exit 6",
			 NULL};
	T_EQ(util_run(stops, NULL, 10, 1024, &out, NULL, NULL, &e), 5);
	free(out);
	char *a3[] = {"/nonexistent/prog", NULL};
	T_EQ(util_run(a3, NULL, 10, 1024, &out, NULL, NULL, &e), 127);
	T_HAS(out, "cannot run /nonexistent/prog");
	free(out);
	/* stderr apart, a working directory, extra environment */
	char *a4[] = {"/bin/sh", "-c", "pwd; echo \"$KA_T_X\" >&2", NULL};
	char *env[] = {"KA_T_X=hello", NULL};
	struct util_run_opts o = {
		.cwd = "/tmp", .env_add = env, .timeout_s = 10, .out_cap = 100, .err_cap = 100};
	struct util_run_result r;
	T_EQ(util_run_child(a4, &o, &r, &e), 0);
	T_EQ(r.code, 0);
	CHECK_STR(r.out.s, "/tmp\n");
	CHECK_STR(r.err.s, "hello\n");
	util_run_result_free(&r);
	/* a whole environment instead of ours: nothing of ours reaches the
	 * child, not even in the memory /proc/self/environ shows */
	setenv("KA_T_SECRET", "leaked", 1);
	static const char *const keep[] = {"KA_T_KEEP=", "PATH=", NULL};
	setenv("KA_T_KEEP", "kept", 1);
	char **only = util_env_keep(keep);
	T_EQ(only[0] != NULL && only[1] != NULL && only[2] == NULL, 1);
	char *a5[] = {"/bin/sh", "-c", "grep -a -o 'KA_T_[A-Z]*=[a-z]*' /proc/self/environ", NULL};
	struct util_run_opts o5 = {.env = only, .timeout_s = 10, .out_cap = 200, .merge_err = 1};
	T_EQ(util_run_child(a5, &o5, &r, &e), 0);
	CHECK_STR(r.out.s, "KA_T_KEEP=kept\n");
	util_run_result_free(&r);
	free(only);
	unsetenv("KA_T_SECRET");
	unsetenv("KA_T_KEEP");
}

static void test_run_cap(void)
{
	struct ka_err e;
	char *out = NULL;
	size_t len = 0;
	int trunc = 0;
	/* 100000 bytes into a cap of 1000: the first 1000 kept, the rest read
	 * and dropped (the child is not blocked on a full pipe) */
	char *a[] = {"/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exit 0", NULL};
	T_EQ(util_run(a, NULL, 20, 1000, &out, &len, &trunc, &e), 0);
	T_EQ(len, 1000);
	T_EQ(trunc, 1);
	T_EQ(strlen(out), 1000);
	free(out);
	/* kill_at_cap stops the child at once */
	char *b[] = {"/bin/sh", "-c", "while :; do echo yyyyyyyy; done", NULL};
	struct util_run_opts o = {.timeout_s = 20, .out_cap = 4096, .kill_at_cap = 1};
	struct util_run_result r;
	double t0 = util_now();
	T_EQ(util_run_child(b, &o, &r, &e), 0);
	T_EQ(r.out_truncated, 1);
	T_EQ(r.out.len, 4096);
	T_EQ(r.timed_out, 0);
	CHECK(util_now() - t0 < 10);
	/* SIGKILLed, but by util_run_child: not from outside */
	T_EQ(r.code, 128 + SIGKILL);
	T_EQ(r.killed_by_ka, 1);
	T_EQ(util_run_killed_outside(&r), 0);
	util_run_result_free(&r);
	/* a SIGKILL util_run_child did not send (here the child's own, as the
	 * OOM killer's would read): from outside */
	char *self[] = {"/bin/sh", "-c", "kill -KILL $$", NULL};
	T_EQ(util_run_child(self, &o, &r, &e), 0);
	T_EQ(r.code, 128 + SIGKILL);
	T_EQ(r.killed_by_ka, 0);
	T_EQ(util_run_killed_outside(&r), 1);
	util_run_result_free(&r);
	/* another signal is not a SIGKILL from outside */
	char *segv[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
	T_EQ(util_run_child(segv, &o, &r, &e), 0);
	T_EQ(r.code, 128 + SIGSEGV);
	T_EQ(util_run_killed_outside(&r), 0);
	util_run_result_free(&r);
}

static void test_run_timeout_group(void)
{
	struct ka_err e;
	char pidfile[] = "/tmp/ka-test-run-XXXXXX";
	int fd = mkstemp(pidfile);
	CHECK(fd >= 0);
	close(fd);
	/* the child starts a grandchild that outlives it (holding no pipe),
	 * writes its pid, then sleeps past the limit */
	char *cmd =
		xasprintf("sleep 30 </dev/null >/dev/null 2>&1 & echo $! > %s; sleep 30", pidfile);
	char *a[] = {"/bin/sh", "-c", cmd, NULL};
	struct util_run_opts o = {.timeout_s = 0.5, .out_cap = 100, .merge_err = 1};
	struct util_run_result r;
	double t0 = util_now();
	int rc = util_run_child(a, &o, &r, &e);
	double took = util_now() - t0;
	free(cmd);
	T_EQ(rc, 0);
	T_EQ(r.timed_out, 1);
	T_EQ(r.code, 124);
	T_EQ(util_run_killed_outside(&r), 0); /* the timeout's SIGKILL is ka's */
	CHECK(took < 5);
	util_run_result_free(&r);
	char *text = NULL;
	CHECK(util_read_file(pidfile, 64, &text, NULL, &e) == 0);
	unlink(pidfile);
	pid_t g = (pid_t)atol(text);
	free(text);
	CHECK(g > 0);
	for (int i = 0; i < 100 && pid_alive(g); i++)
		usleep(10000); /* SIGKILL is delivered, then init reaps it */
	T_EQ(pid_alive(g), 0);

	/* a grandchild holding the pipe open after the child exits: read until
	 * the deadline, then killed with the group */
	char *b[] = {"/bin/sh", "-c", "(sleep 30; echo late) & echo early; exit 0", NULL};
	o.timeout_s = 0.5;
	T_EQ(util_run_child(b, &o, &r, &e), 0);
	T_EQ(r.timed_out, 1);
	CHECK_STR(r.out.s, "early\n");
	util_run_result_free(&r);

	/* a child that closes its streams and goes on (the wait for its exit,
	 * on a pidfd): its status when it ends, the deadline when it does not */
	char *c[] = {"/bin/sh", "-c", "exec >&- 2>&-; sleep 0.2; exit 4", NULL};
	o.timeout_s = 10;
	t0 = util_now();
	T_EQ(util_run_child(c, &o, &r, &e), 0);
	T_EQ(r.timed_out, 0);
	T_EQ(r.code, 4);
	CHECK(util_now() - t0 >= 0.2);
	util_run_result_free(&r);
	char *d[] = {"/bin/sh", "-c", "exec >&- 2>&-; sleep 30", NULL};
	o.timeout_s = 0.5;
	t0 = util_now();
	T_EQ(util_run_child(d, &o, &r, &e), 0);
	T_EQ(r.timed_out, 1);
	CHECK(util_now() - t0 < 5);
	util_run_result_free(&r);
}

/* One row: a JSON document, the reader, and the message expected ("" for
 * success). */
enum jf_reader { JF_STR, JF_INT, JF_NUM, JF_BOOL, JF_ARR, JF_KEYS, JF_KEYS_TOP };
static const struct {
	const char *json;
	enum jf_reader r;
	const char *msg;
} jf_cases[] = {
	{"{\"v\": \"abc\"}", JF_STR, ""},
	{"{\"v\": \"abcdefghijk\"}", JF_STR, "f.json: a.v: string is 11 bytes, over the cap of 8"},
	{"{\"v\": 3}", JF_STR, "f.json: a.v: expected a string, got an integer"},
	{"{\"v\": \"a\\u0000b\"}", JF_STR, "f.json: a.v: string contains a NUL character"},
	{"{\"v\": 7}", JF_INT, ""},
	{"{\"v\": 11}", JF_INT, "f.json: a.v: 11 is out of range [1, 10]"},
	{"{\"v\": 0}", JF_INT, "f.json: a.v: 0 is out of range [1, 10]"},
	{"{\"v\": 1.5}", JF_INT, "f.json: a.v: expected an integer, got a number"},
	{"{\"v\": null}", JF_INT, "f.json: a.v: expected an integer, got null"},
	{"{\"v\": 2.5}", JF_NUM, ""},
	{"{\"v\": 2}", JF_NUM, ""},
	{"{\"v\": 20.5}", JF_NUM, "f.json: a.v: 20.5 is outside [0, 10]"},
	{"{\"v\": \"1\"}", JF_NUM, "f.json: a.v: expected a number, got a string"},
	{"{\"v\": true}", JF_BOOL, ""},
	{"{\"v\": 1}", JF_BOOL, "f.json: a.v: expected a boolean, got an integer"},
	{"{\"v\": [1, 2]}", JF_ARR, ""},
	{"{\"v\": []}", JF_ARR, "f.json: a.v: expected an array of 1 to 3 items, got 0"},
	{"{\"v\": [1, 2, 3, 4]}", JF_ARR, "f.json: a.v: expected an array of 1 to 3 items, got 4"},
	{"{\"v\": {}}", JF_ARR, "f.json: a.v: expected an array, got an object"},
	{"{\"v\": 1, \"w\": 2}", JF_KEYS, ""},
	{"{\"v\": 1, \"x\": 2}", JF_KEYS, "f.json: a: unknown field 'x'"},
	{"{\"w\": 2}", JF_KEYS, "f.json: a: missing field 'v'"},
	{"{\"v\": 1, \"x\": 2}", JF_KEYS_TOP, "f.json: x: unknown field"},
	{"{\"w\": 2}", JF_KEYS_TOP, "f.json: v: missing field"},
};

static void test_jsonf(void)
{
	static const char *const allowed[] = {"v", "w", NULL}, *const required[] = {"v", NULL};
	for (size_t i = 0; i < sizeof jf_cases / sizeof jf_cases[0]; i++) {
		struct ka_err e = {{0}};
		struct jsonf c = {.file = "f.json", .e = &e, .unknown_names_key = 1};
		json_t *root = json_loads(jf_cases[i].json, JSON_ALLOW_NUL, NULL);
		CHECK(root);
		json_t *v = json_object_get(root, "v");
		char *s = NULL;
		int64_t n;
		double d;
		int b;
		size_t len;
		int rc = 0;
		switch (jf_cases[i].r) {
		case JF_STR: rc = jsonf_string(&c, "a.v", v, 8, &s); break;
		case JF_INT: rc = jsonf_int(&c, "a.v", v, 1, 10, &n); break;
		case JF_NUM: rc = jsonf_number(&c, "a.v", v, 0, 10, &d); break;
		case JF_BOOL: rc = jsonf_bool(&c, "a.v", v, &b); break;
		case JF_ARR: rc = jsonf_array(&c, "a.v", v, 1, 3, &len); break;
		case JF_KEYS: rc = jsonf_keys(&c, "a", root, allowed, required); break;
		case JF_KEYS_TOP: rc = jsonf_keys(&c, "", root, allowed, required); break;
		}
		free(s);
		json_decref(root);
		if (!jf_cases[i].msg[0]) {
			if (rc)
				printf("# case %zu: %s\n", i, e.msg);
			T_EQ(rc, 0);
		} else {
			T_EQ(rc, -1);
			CHECK_STR(e.msg, jf_cases[i].msg);
		}
	}
	/* a field path is joined with '.', except at the top */
	char p[JSONF_PATHLEN];
	jsonf_join(p, "inputs[0]", "dist");
	CHECK_STR(p, "inputs[0].dist");
	jsonf_join(p, "", "dist");
	CHECK_STR(p, "dist");
}

int main(void)
{
	RUN(test_buf_appends);
	RUN(test_buf_grows);
	RUN(test_buf_cap);
	RUN(test_run_status);
	RUN(test_run_cap);
	RUN(test_run_timeout_group);
	RUN(test_jsonf);
	RUN(test_log_summary);
	TEST_EXIT();
}
