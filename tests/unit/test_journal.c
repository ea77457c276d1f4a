/* test_journal.c: the run journal on real SQLite files in a temporary folder:
 * run identity, the state machine of one sample (new, failed, replied,
 * graded), the refusals that keep a sample from being paid for or graded
 * twice, persistence across close and across a process killed with SIGKILL,
 * concurrent writers, and a foreign schema. */
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal.h"
#include "ka_test.h"
#include "util.h"

static char tmpdir[256];

static char *path_of(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static void test_run_identity(void)
{
	struct ka_err e;
	char *p = path_of("run.sqlite");
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	char *key = (char *)"x", *json = (char *)"x";
	CHECK(journal_run_get(j, &key, &json, &e) == 1);
	CHECK(key == NULL && json == NULL);
	CHECK(journal_count_starts(j) == 0);
	CHECK(journal_run_set(j, "k1", "{\"a\":1}", "abcd", &e) == 0);
	CHECK(journal_run_set(j, "k2", "{}", "abcd", &e) == -1); /* only once */
	int sid = 0;
	CHECK(journal_start(j, "[]", &sid, &e) == 0 && sid == 1);
	journal_close(j);
	j = journal_open(p, &e);
	CHECK(j);
	CHECK(journal_run_get(j, &key, &json, &e) == 0);
	CHECK_STR(key, "k1");
	CHECK_STR(json, "{\"a\":1}");
	free(key);
	free(json);
	CHECK(journal_start(j, "[{\"name\":\"dev\"}]", &sid, &e) == 0 && sid == 2);
	CHECK(journal_count_starts(j) == 2);
	journal_close(j);
	free(p);
}

static void test_sample_states(void)
{
	struct ka_err e;
	char *p = path_of("states.sqlite");
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	enum journal_state s;
	CHECK(journal_state(j, "t1", 0, &s, &e) == 0 && s == JOURNAL_STATE_NEW);
	CHECK(journal_send_count(j, "t1", 0) == 0);
	CHECK(journal_request(j, "t1", 0, "h", 7, &e) == 0);
	CHECK(journal_request(j, "t1", 0, "h", 7, &e) == 0);
	CHECK(journal_send_count(j, "t1", 0) == 2);
	CHECK(journal_state(j, "t1", 0, &s, &e) == 0 && s == JOURNAL_STATE_NEW);

	struct journal_reply fail = {.ok = 0, .error = (char *)"openai: HTTP 500", .seed = 7};
	CHECK(journal_put_reply(j, "t1", 0, &fail, &e) == 0);
	CHECK(journal_state(j, "t1", 0, &s, &e) == 0 && s == JOURNAL_STATE_FAILED);

	struct journal_reply ok = {.ok = 1,
				   .text = (char *)"here:\n```c\nint x;\n```\n",
				   .code = (char *)"int x;\n",
				   .lang = (char *)"opencl",
				   .finish = (char *)"stop",
				   .seed = 7,
				   .in_tokens = 100,
				   .out_tokens = 20,
				   .cost_usd = 0.25,
				   .latency_s = 1.5,
				   .http_status = 200,
				   .attempts = 2};
	CHECK(journal_put_reply(j, "t1", 0, &ok, &e) == 0); /* replaces the failure */
	CHECK(journal_state(j, "t1", 0, &s, &e) == 0 && s == JOURNAL_STATE_REPLIED);
	CHECK(journal_put_reply(j, "t1", 0, &ok, &e) == -1); /* never overwrite a paid reply */
	CHECK(strstr(e.msg, "already has a reply"));

	/* A reply without code keeps code NULL. */
	struct journal_reply nocode = {.ok = 1, .text = (char *)"no idea", .lang = (char *)"cuda"};
	CHECK(journal_put_reply(j, "t1", 1, &nocode, &e) == 0);

	struct journal_reply got;
	CHECK(journal_get_reply(j, "t1", 0, &got, &e) == 0);
	CHECK(got.ok == 1);
	CHECK_STR(got.code, "int x;\n");
	CHECK_STR(got.lang, "opencl");
	CHECK_STR(got.finish, "stop");
	CHECK_STR(got.error, "");
	CHECK(got.seed == 7 && got.in_tokens == 100 && got.out_tokens == 20);
	CHECK(got.cost_usd == 0.25 && got.latency_s == 1.5 && got.attempts == 2);
	journal_reply_free(&got);
	CHECK(journal_get_reply(j, "t1", 1, &got, &e) == 0);
	CHECK(got.ok == 1 && got.code == NULL);
	CHECK_STR(got.text, "no idea");
	journal_reply_free(&got);
	CHECK(journal_get_reply(j, "t1", 2, &got, &e) == 1);

	CHECK(journal_put_grade(j, "t1", 0, "ok", "", "{\"verdict\":\"ok\"}", 1, 0, &e) == 0);
	CHECK(journal_state(j, "t1", 0, &s, &e) == 0 && s == JOURNAL_STATE_GRADED);
	CHECK(journal_put_grade(j, "t1", 0, "wrong_answer", "x", "{}", 2, 0, &e) == -1);
	CHECK(strstr(e.msg, "already graded"));
	char *v = NULL, *res = NULL, *det = NULL;
	CHECK(journal_get_grade(j, "t1", 0, &v, &det, &res, &e) == 0);
	CHECK_STR(v, "ok");
	CHECK_STR(det, "");
	CHECK_STR(res, "{\"verdict\":\"ok\"}");
	free(v);
	free(det);
	free(res);
	CHECK(journal_get_grade(j, "t1", 1, &v, &det, &res, &e) == 1);
	CHECK(v == NULL && det == NULL && res == NULL);
	CHECK(journal_put_grade(j, "t1", 1, "no_code", "no block", "{}", 1, 0, &e) == 0);
	CHECK(journal_get_grade(j, "t1", 1, NULL, &det, NULL, &e) == 0);
	CHECK_STR(det, "no block");
	free(det);

	struct journal_totals tot;
	CHECK(journal_totals(j, &tot, &e) == 0);
	CHECK(tot.graded == 2 && tot.ok == 1 && tot.replies == 2 && tot.failed_replies == 0);
	CHECK(tot.in_tokens == 100 && tot.out_tokens == 20 && tot.cost_usd == 0.25);
	journal_close(j);

	/* Everything survives a reopen. */
	j = journal_open(p, &e);
	CHECK(j);
	CHECK(journal_state(j, "t1", 1, &s, &e) == 0 && s == JOURNAL_STATE_GRADED);
	CHECK(journal_send_count(j, "t1", 0) == 2);
	journal_close(j);
	free(p);
}

/* A child writes a reply, then kills itself with SIGKILL without closing the
 * journal: the committed reply must be there, in WAL mode, for the parent. */
static void test_survives_sigkill(void)
{
	struct ka_err e;
	char *p = path_of("killed.sqlite");
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct journal *j = journal_open(p, &e);
		if (!j)
			_exit(3);
		struct journal_reply r = {.ok = 1, .text = (char *)"t", .code = (char *)"c\n"};
		if (journal_put_reply(j, "k", 4, &r, &e) ||
		    journal_put_grade(j, "k", 3, "timeout", "", "{}", 1, 0, &e))
			_exit(4);
		raise(SIGKILL);
		_exit(5);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	enum journal_state s;
	CHECK(journal_state(j, "k", 4, &s, &e) == 0 && s == JOURNAL_STATE_REPLIED);
	CHECK(journal_state(j, "k", 3, &s, &e) == 0 && s == JOURNAL_STATE_GRADED);
	CHECK(journal_state(j, "k", 2, &s, &e) == 0 && s == JOURNAL_STATE_NEW);
	journal_close(j);
	free(p);
}

struct writer {
	struct journal *j;
	int id;
	int failures;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct ka_err e;
	for (int i = 0; i < 50; i++) {
		char task[32];
		snprintf(task, sizeof task, "w%d", w->id);
		struct journal_reply r = {
			.ok = 1, .text = (char *)"x", .code = (char *)"y\n", .in_tokens = 1};
		if (journal_put_reply(w->j, task, i, &r, &e) ||
		    journal_put_grade(w->j, task, i, "ok", "", "{}", 1, w->id, &e))
			w->failures++;
	}
	return NULL;
}

static void test_concurrent_writers(void)
{
	struct ka_err e;
	char *p = path_of("threads.sqlite");
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	pthread_t th[4];
	struct writer w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct writer){.j = j, .id = i};
		CHECK(pthread_create(&th[i], NULL, writer_main, &w[i]) == 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		CHECK(w[i].failures == 0);
	struct journal_totals tot;
	CHECK(journal_totals(j, &tot, &e) == 0);
	CHECK(tot.graded == 200 && tot.ok == 200 && tot.replies == 200 && tot.in_tokens == 200);
	journal_close(j);
	free(p);
}

static void test_foreign_schema(void)
{
	struct ka_err e;
	char *p = path_of("foreign.sqlite");
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	journal_close(j);
	sqlite3 *db;
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE meta SET value = 'ka-journal/99' WHERE key = 'schema';",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(journal_open(p, &e) == NULL);
	CHECK(strstr(e.msg, "ka-journal/99"));
	/* Not a database at all. */
	char *q = path_of("garbage.sqlite");
	CHECK(util_write_file(q, "this is not sqlite, not at all........", 38, &e) == 0);
	CHECK(journal_open(q, &e) == NULL);
	CHECK(strstr(e.msg, "garbage.sqlite"));
	free(q);
	free(p);
}

/* The check before a request is sent: the free space floor (from
 * KA_SPACE_FLOOR_MB) and one real write. */
static void test_check_writable(void)
{
	struct ka_err e;
	char *p = path_of("writable.sqlite");
	struct journal *j = journal_open(p, &e);
	CHECK(j);
	setenv("KA_SPACE_FLOOR_MB", "0", 1);
	CHECK(journal_space_floor() == 0);
	CHECK(journal_check_writable(j, &e) == 0);
	setenv("KA_SPACE_FLOOR_MB", "1000000000", 1);
	CHECK(journal_check_writable(j, &e) == -1);
	CHECK(strstr(e.msg, "out of space: ") &&
	      strstr(e.msg, "under the floor of 1000000000 MiB"));
	setenv("KA_SPACE_FLOOR_MB", "junk", 1);
	CHECK(journal_space_floor() == (uint64_t)JOURNAL_SPACE_FLOOR_MB << 20);
	unsetenv("KA_SPACE_FLOOR_MB");
	journal_close(j);
	free(p);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ka-test-journal-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL test_journal: mkdtemp\n");
		return 1;
	}
	RUN(test_run_identity);
	RUN(test_sample_states);
	RUN(test_survives_sigkill);
	RUN(test_concurrent_writers);
	RUN(test_foreign_schema);
	RUN(test_check_writable);
	util_rmtree(tmpdir);
	TEST_EXIT();
}
