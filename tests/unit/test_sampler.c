/* test_sampler.c: the pure parts of the tracks' sample pipeline (sampler.h,
 * rundir.h): UTF-8 cleaning of grader details, cleaning of speedup figures,
 * --gpus lists, kernel paths, the message naming the first differing run
 * argument; and, on a real journal in a temporary folder with no grader and
 * no model, what sampler_plan finds left to do and what sampler_collect
 * reads back (scorecard tasks, results.jsonl, metrics, kernel files). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ka_test.h"
#include "rundir.h"
#include "sampler.h"
#include "task.h"
#include "util.h"

/* Checks that print both values when they fail. */
#define T_EQ_INT(a, b)                                                                             \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			printf("FAIL %s: %s:%d: %s == %lld, want %lld\n", ka_test_name, __FILE__,  \
			       __LINE__, #a, a_, b_);                                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                                \
			printf("FAIL %s: %s:%d: %s == \"%s\", want \"%s\"\n", ka_test_name,        \
			       __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");    \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define T_EQ_DBL(a, b)                                                                             \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(a_ == b_)) {                                                                 \
			printf("FAIL %s: %s:%d: %s == %.17g, want %.17g\n", ka_test_name,          \
			       __FILE__, __LINE__, #a, a_, b_);                                    \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static char tmpdir[256];

static void test_clean_utf8(void)
{
	static const struct {
		const char *in;
		size_t cap;
		const char *want;
	} cases[] = {
		{"plain", 100, "plain"},
		{"a\xff"
		 "b",
		 100, "a?b"},					 /* a stray byte */
		{"\xc3\xa9t\xc3\xa9", 100, "\xc3\xa9t\xc3\xa9"}, /* é t é kept */
		{"\xc3\xa9t\xc3\xa9", 4, "\xc3\xa9t"},		 /* not cut inside é */
		{"\xe2\x82", 100, "??"},			 /* truncated sequence */
		{"abcdef", 3, "abc"},
		{"", 10, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = sampler_clean_utf8(cases[i].in, cases[i].cap);
		char copy[64];
		snprintf(copy, sizeof copy, "%s", got);
		free(got);
		T_EQ_STR(copy, cases[i].want);
	}
}

static void test_speedup_clean(void)
{
	static const struct {
		struct grade_figure f;
		int present;
		double median, lo, hi;
	} cases[] = {
		{{.valid = 1, .median = 2, .lo = 1.5, .hi = 3}, 1, 2, 1.5, 3},
		{{.valid = 0, .median = 2, .lo = 1.5, .hi = 3}, 0, 0, 0, 0},
		{{.valid = 1, .median = 0, .lo = 0, .hi = 0}, 0, 0, 0, 0},
		{{.valid = 1, .median = NAN, .lo = 1, .hi = 2}, 0, 0, 0, 0},
		{{.valid = 1, .median = 2, .lo = 2.5, .hi = 1}, 1, 2, 2, 2},	   /* wrong sides */
		{{.valid = 1, .median = 2, .lo = -1, .hi = INFINITY}, 1, 2, 2, 2}, /* not fit */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct metrics_speedup s;
		sampler_speedup_clean(&cases[i].f, &s);
		T_EQ_INT(s.present, cases[i].present);
		T_EQ_DBL(s.median, cases[i].median);
		T_EQ_DBL(s.lo, cases[i].lo);
		T_EQ_DBL(s.hi, cases[i].hi);
	}
}

static void test_parse_gpus(void)
{
	int g[SAMPLER_MAX_SESSIONS], n = 0;
	struct ka_err e;
	T_EQ_INT(sampler_parse_gpus("0,2,3", g, &n, &e), 0);
	T_EQ_INT(n, 3);
	T_EQ_INT(g[1], 2);
	T_EQ_INT(sampler_parse_gpus("1,1", g, &n, &e), -1);
	T_EQ_STR(e.msg, "--gpus: GPU 1 is listed twice");
	T_EQ_INT(sampler_parse_gpus("", g, &n, &e), -1);
	T_EQ_STR(e.msg, "--gpus: empty list");
	T_EQ_INT(sampler_parse_gpus("0,x", g, &n, &e), -1);
	T_EQ_STR(e.msg, "--gpus: '0,x' is not a list of GPU indices like 0,1,3");
	T_EQ_INT(sampler_parse_gpus("1024", g, &n, &e), -1);
	char many[512] = "";
	for (int i = 0; i <= SAMPLER_MAX_SESSIONS; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i ? "," : "", i);
	T_EQ_INT(sampler_parse_gpus(many, g, &n, &e), -1);
	T_EQ_STR(e.msg, "--gpus: more than 64 GPUs");
}

static void test_kernel_path(void)
{
	struct sampler_opts o = {.target = "opencl"};
	char *p = sampler_kernel_path(&o, "relu", 3);
	char got[64];
	snprintf(got, sizeof got, "%s", p);
	free(p);
	T_EQ_STR(got, "kernels/relu/3.c");
	o.target = "cuda";
	p = sampler_kernel_path(&o, "relu", 0);
	snprintf(got, sizeof got, "%s", p);
	free(p);
	T_EQ_STR(got, "kernels/relu/0.cu");
}

static void test_args_diff(void)
{
	char msg[200];
	rundir_args_diff("{\"k\":4,\"model\":\"m\"}", "{\"k\":3,\"model\":\"m\"}", msg, sizeof msg);
	T_EQ_STR(msg, "k is 4 there, 3 here");
	rundir_args_diff("{\"tier\":\"L1\"}", "{}", msg, sizeof msg);
	T_EQ_STR(msg, "tier is \"L1\" there, (none) here");
	rundir_args_diff("not json", "{}", msg, sizeof msg);
	T_EQ_STR(msg, "the arguments differ");
}

/* A journal where sample 0 is graded ok (its speedup's lo above the median,
 * to be cleaned), sample 1 replied but not graded, sample 2 never sent. */
static int fill_journal(struct journal *j, struct ka_err *e)
{
	struct journal_reply r = {.ok = 1,
				  .text = (char *)"```c\nint x;\n```",
				  .code = (char *)"int x;\n",
				  .lang = (char *)"c",
				  .finish = (char *)"stop",
				  .in_tokens = 10,
				  .out_tokens = 20,
				  .cost_usd = 0.5,
				  .latency_s = 1.25};
	const char *res = "{\"verdict\":\"ok\",\"speedup_eager\":{\"median\":2.0,\"lo\":2.5,"
			  "\"hi\":3.0},\"speedup_compiled\":null}";
	if (journal_run_set(j, "key", "{}", "hash", e) ||
	    journal_put_reply(j, "gelu_bias_scale", 0, &r, e) ||
	    journal_put_grade(j, "gelu_bias_scale", 0, "ok", "fine \xff", res, 1, 0, e) ||
	    journal_put_reply(j, "gelu_bias_scale", 1, &r, e))
		return -1;
	return 0;
}

/* A failed grade is not journaled once a stop signal has come; an ok one
 * is. In a child: the stop flag would end the other tests' runs. */
static void test_grade_stands(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		rundir_signals_install();
		int before = rundir_grade_stands(0) * 4 + rundir_grade_stands(1) * 2;
		raise(SIGTERM);
		int after = rundir_grade_stands(0) * 8 + rundir_grade_stands(1) * 16;
		_exit(before + after + (rundir_exit_code(0) == 143) * 32);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	/* before: both stand (4 + 2); after: only ok (16); exit 143 (32) */
	CHECK_EQ_INT(WEXITSTATUS(st), 4 + 2 + 16 + 32);
}

static void test_plan_and_collect(void)
{
	struct ka_err e;
	char *jp = xasprintf("%s/journal.sqlite", tmpdir);
	struct journal *j = journal_open(jp, &e);
	free(jp);
	CHECK(j);
	CHECK(fill_journal(j, &e) == 0);
	struct ka_task *t = task_load("bank/public/L1/gelu_bias_scale", &e);
	CHECK(t);
	struct sampler_task st = {.t = t, .prompt = "p", .prompt_hash = "0000000000000000"};
	struct sampler_opts o = {.label = "test", .out = tmpdir, .target = "opencl", .k = 3};
	struct sampler *s = sampler_new(&o, &st, 1, j);
	struct sampler_plan p;
	int rc = sampler_plan(s, &p, &e);
	sampler_free(s);
	T_EQ_INT(rc, 0);
	T_EQ_INT(p.total, 3);
	T_EQ_INT(p.graded, 1);
	T_EQ_INT(p.regrade, 1);
	T_EQ_INT(p.requests, 1);

	struct sampler_outputs out;
	rc = sampler_collect(j, &st, 1, &o, &out, &e);
	char *tasks = json_dumps(out.tasks, JSON_COMPACT);
	char line[2048];
	snprintf(line, sizeof line, "%s", out.jsonl.s ? out.jsonl.s : "");
	int n_samples = out.n_samples, n_ok = out.n_ok, mt = out.m.n_tasks;
	int m_ok = mt ? out.m.samples[0].ok : -1;
	double m_lo = mt ? out.m.samples[0].eager.lo : -1;
	sampler_outputs_free(&out);
	journal_close(j);
	task_free(t);
	char want[1024];
	snprintf(want, sizeof want,
		 "[{\"name\":\"gelu_bias_scale\",\"tier\":\"L1\",\"samples\":[{\"sample\":0,"
		 "\"verdict\":\"ok\",\"detail\":\"fine ?\",\"score\":0.75,\"speedup_eager\":{"
		 "\"median\":2.0,\"lo\":2.0,\"hi\":3.0},\"speedup_compiled\":null,\"time_us\":null,"
		 "\"tokens\":{\"in\":10,\"out\":20},\"cost_usd\":0.5,\"latency_s\":1.25,"
		 "\"source_path\":\"kernels/gelu_bias_scale/0.c\"}]}]");
	T_EQ_INT(rc, 0);
	T_EQ_STR(tasks, want);
	free(tasks);
	T_EQ_INT(n_samples, 1);
	T_EQ_INT(n_ok, 1);
	T_EQ_INT(mt, 1);
	T_EQ_INT(m_ok, 1);
	T_EQ_DBL(m_lo, 2.0);
	/* One results line: the sample plus task, tier and the grader's result. */
	CHECK(strchr(line, '\n') == line + strlen(line) - 1);
	CHECK(strstr(line, "\"task\":\"gelu_bias_scale\",\"tier\":\"L1\",\"grade\":{\"verdict\":"));
	/* The kernel file is written again from the journal. */
	char *kp = xasprintf("%s/kernels/gelu_bias_scale/0.c", tmpdir);
	char *code = NULL;
	size_t len;
	int rd = util_read_file(kp, 1024, &code, &len, &e);
	free(kp);
	T_EQ_INT(rd, 0);
	T_EQ_STR(code, "int x;\n");
	free(code);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ka-test-sampler-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL test_sampler: mkdtemp\n");
		return 1;
	}
	RUN(test_clean_utf8);
	RUN(test_speedup_clean);
	RUN(test_parse_gpus);
	RUN(test_kernel_path);
	RUN(test_args_diff);
	RUN(test_grade_stands);
	RUN(test_plan_and_collect);
	util_rmtree(tmpdir);
	TEST_EXIT();
}
