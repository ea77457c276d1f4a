/* journal.c: the SQLite run journal (see journal.h; schema in
 * docs/capability.md). One connection, opened in serialized mode, and a mutex
 * of our own so that a multi-statement step is one transaction that no other
 * thread interleaves with. Every write is committed before the function
 * returns. */
#include "journal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/statvfs.h>
#include <unistd.h>

struct journal {
	sqlite3 *db;
	char *path;
	pthread_mutex_t mu;
};

static const char *const schema_sql =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS run("
	"  id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  args_key TEXT NOT NULL, args_json TEXT NOT NULL, bank_hash TEXT NOT NULL,"
	"  created REAL NOT NULL);"
	"CREATE TABLE IF NOT EXISTS starts("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL, started REAL NOT NULL,"
	"  devices TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS requests("
	"  task TEXT NOT NULL, sample INTEGER NOT NULL, prompt_hash TEXT NOT NULL,"
	"  seed INTEGER NOT NULL, sends INTEGER NOT NULL, first_sent REAL NOT NULL,"
	"  last_sent REAL NOT NULL, PRIMARY KEY (task, sample));"
	"CREATE TABLE IF NOT EXISTS replies("
	"  task TEXT NOT NULL, sample INTEGER NOT NULL, ok INTEGER NOT NULL, text TEXT,"
	"  finish TEXT NOT NULL, error TEXT NOT NULL, seed INTEGER NOT NULL,"
	"  in_tokens INTEGER NOT NULL, out_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,"
	"  latency_s REAL NOT NULL, cached INTEGER NOT NULL, http_status INTEGER NOT NULL,"
	"  attempts INTEGER NOT NULL, received REAL NOT NULL, PRIMARY KEY (task, sample));"
	"CREATE TABLE IF NOT EXISTS sources("
	"  task TEXT NOT NULL, sample INTEGER NOT NULL, lang TEXT NOT NULL, code TEXT,"
	"  PRIMARY KEY (task, sample));"
	"CREATE TABLE IF NOT EXISTS grades("
	"  task TEXT NOT NULL, sample INTEGER NOT NULL, verdict TEXT NOT NULL,"
	"  detail TEXT NOT NULL, result TEXT NOT NULL, start_id INTEGER NOT NULL,"
	"  session INTEGER NOT NULL, graded REAL NOT NULL, PRIMARY KEY (task, sample));";

static double wall_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec * 1e-6;
}

static int db_err(struct journal *j, struct ka_err *e, const char *what)
{
	return ka_err_set(e, "%s: %s: %s", j->path, what, sqlite3_errmsg(j->db));
}

static int exec(struct journal *j, const char *sql, struct ka_err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(j->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		ka_err_set(e, "%s: %s", j->path, msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *prep(struct journal *j, const char *sql, struct ka_err *e)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(j->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_err(j, e, "prepare");
		return NULL;
	}
	return st;
}

/* Bind a possibly NULL text, capped at JOURNAL_MAX_TEXT bytes. */
static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (!s) {
		sqlite3_bind_null(st, i);
		return;
	}
	size_t n = strlen(s);
	if (n > JOURNAL_MAX_TEXT)
		n = JOURNAL_MAX_TEXT;
	sqlite3_bind_text(st, i, s, (int)n, SQLITE_TRANSIENT);
}

/* Step a write statement to completion and finalize it; on failure fill e
 * with "PATH: what: sqlite message". 0 or -1. */
static int run_write(struct journal *j, sqlite3_stmt *st, const char *what, struct ka_err *e)
{
	int ret = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(j, e, what);
	sqlite3_finalize(st);
	return ret;
}

/* Step a query of at most one row: 0 with a row (the caller reads it, then
 * finalizes), 1 with none, -1 on error with e "PATH: what: sqlite message". */
static int step_row(struct journal *j, sqlite3_stmt *st, const char *what, struct ka_err *e)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return 1;
	return db_err(j, e, what);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

struct journal *journal_open(const char *path, struct ka_err *e)
{
	struct journal *j = xcalloc(1, sizeof *j);
	j->path = xstrdup(path);
	pthread_mutex_init(&j->mu, NULL);
	if (sqlite3_open_v2(path, &j->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		ka_err_set(e, "%s: cannot open: %s", path,
			   j->db ? sqlite3_errmsg(j->db) : "out of memory");
		journal_close(j);
		return NULL;
	}
	sqlite3_busy_timeout(j->db, 10000);
	if (exec(j, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", e) ||
	    exec(j, "BEGIN IMMEDIATE;", e))
		goto fail;
	if (exec(j, schema_sql, e)) {
		exec(j, "ROLLBACK;", NULL);
		goto fail;
	}
	/* The schema tag: written by the creator, checked by everyone after. */
	sqlite3_stmt *st = prep(j, "SELECT value FROM meta WHERE key = 'schema';", e);
	if (!st) {
		exec(j, "ROLLBACK;", NULL);
		goto fail;
	}
	int rc = sqlite3_step(st);
	char *have = rc == SQLITE_ROW ? col_text(st, 0) : NULL;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_err(j, e, "read schema");
		exec(j, "ROLLBACK;", NULL);
		goto fail;
	}
	if (have && strcmp(have, JOURNAL_SCHEMA)) {
		ka_err_set(e, "%s: journal schema '%s', this ka reads '%s'", path, have,
			   JOURNAL_SCHEMA);
		free(have);
		exec(j, "ROLLBACK;", NULL);
		goto fail;
	}
	free(have);
	if (exec(j,
		 "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', '" JOURNAL_SCHEMA "');",
		 e) ||
	    exec(j, "COMMIT;", e)) {
		exec(j, "ROLLBACK;", NULL);
		goto fail;
	}
	return j;
fail:
	journal_close(j);
	return NULL;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	if (j->db) {
		sqlite3_wal_checkpoint_v2(j->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		sqlite3_close(j->db);
	}
	pthread_mutex_destroy(&j->mu);
	free(j->path);
	free(j);
}

int journal_run_get(struct journal *j, char **args_key, char **args_json, struct ka_err *e)
{
	if (args_key)
		*args_key = NULL;
	if (args_json)
		*args_json = NULL;
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st = prep(j, "SELECT args_key, args_json FROM run WHERE id = 1;", e);
	if (!st)
		goto out;
	ret = step_row(j, st, "read run", e);
	if (!ret) {
		if (args_key)
			*args_key = col_text(st, 0);
		if (args_json)
			*args_json = col_text(st, 1);
	}
	sqlite3_finalize(st);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_run_set(struct journal *j, const char *args_key, const char *args_json,
		    const char *bank_hash, struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st = prep(j,
				"INSERT INTO run(id, args_key, args_json, bank_hash, created) "
				"VALUES (1, ?, ?, ?, ?);",
				e);
	if (!st)
		goto out;
	bind_text(st, 1, args_key);
	bind_text(st, 2, args_json);
	bind_text(st, 3, bank_hash);
	sqlite3_bind_double(st, 4, wall_now());
	ret = run_write(j, st, "record run", e);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_start(struct journal *j, const char *devices_json, int *start_id, struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st =
		prep(j, "INSERT INTO starts(pid, started, devices) VALUES (?, ?, ?);", e);
	if (!st)
		goto out;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)getpid());
	sqlite3_bind_double(st, 2, wall_now());
	bind_text(st, 3, devices_json ? devices_json : "[]");
	ret = run_write(j, st, "record start", e);
	if (!ret)
		*start_id = (int)sqlite3_last_insert_rowid(j->db);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

/* One integer from a query with up to two bound keys; -1 on error. */
static int64_t query_int(struct journal *j, const char *sql, const char *task, int sample)
{
	pthread_mutex_lock(&j->mu);
	int64_t v = -1;
	sqlite3_stmt *st = prep(j, sql, NULL);
	if (st) {
		if (task) {
			bind_text(st, 1, task);
			sqlite3_bind_int(st, 2, sample);
		}
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		else if (rc == SQLITE_DONE)
			v = 0;
		sqlite3_finalize(st);
	}
	pthread_mutex_unlock(&j->mu);
	return v;
}

int journal_count_starts(struct journal *j)
{
	return (int)query_int(j, "SELECT COUNT(*) FROM starts;", NULL, 0);
}

int journal_send_count(struct journal *j, const char *task, int sample)
{
	return (int)query_int(j, "SELECT sends FROM requests WHERE task = ? AND sample = ?;", task,
			      sample);
}

int journal_request(struct journal *j, const char *task, int sample, const char *prompt_hash,
		    int64_t seed, struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st =
		prep(j,
		     "INSERT INTO requests(task, sample, prompt_hash, seed, sends, first_sent, "
		     "last_sent) "
		     "VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5) ON CONFLICT(task, sample) DO UPDATE SET "
		     "sends = sends + 1, last_sent = ?5, prompt_hash = ?3, seed = ?4;",
		     e);
	if (!st)
		goto out;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	bind_text(st, 3, prompt_hash);
	sqlite3_bind_int64(st, 4, seed);
	sqlite3_bind_double(st, 5, wall_now());
	ret = run_write(j, st, "record request", e);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_put_reply(struct journal *j, const char *task, int sample,
		      const struct journal_reply *r, struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	if (exec(j, "BEGIN IMMEDIATE;", e))
		goto out;
	sqlite3_stmt *st = prep(j, "SELECT ok FROM replies WHERE task = ? AND sample = ?;", e);
	if (!st)
		goto rollback;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	int rc = sqlite3_step(st);
	int had_ok = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_err(j, e, "read reply");
		goto rollback;
	}
	if (had_ok) {
		ka_err_set(e, "%s: %s sample %d already has a reply", j->path, task, sample);
		goto rollback;
	}
	st = prep(j,
		  "INSERT OR REPLACE INTO replies(task, sample, ok, text, finish, error, seed,"
		  " in_tokens, out_tokens, cost_usd, latency_s, cached, http_status, attempts,"
		  " received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);",
		  e);
	if (!st)
		goto rollback;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	sqlite3_bind_int(st, 3, r->ok ? 1 : 0);
	bind_text(st, 4, r->ok ? r->text : NULL);
	bind_text(st, 5, r->finish ? r->finish : "");
	bind_text(st, 6, r->error ? r->error : "");
	sqlite3_bind_int64(st, 7, r->seed);
	sqlite3_bind_int64(st, 8, r->in_tokens);
	sqlite3_bind_int64(st, 9, r->out_tokens);
	sqlite3_bind_double(st, 10, r->cost_usd);
	sqlite3_bind_double(st, 11, r->latency_s);
	sqlite3_bind_int(st, 12, r->cached);
	sqlite3_bind_int(st, 13, r->http_status);
	sqlite3_bind_int(st, 14, r->attempts);
	sqlite3_bind_double(st, 15, wall_now());
	if (run_write(j, st, "store reply", e))
		goto rollback;
	if (r->ok) {
		st = prep(j,
			  "INSERT OR REPLACE INTO sources(task, sample, lang, code) "
			  "VALUES (?, ?, ?, ?);",
			  e);
		if (!st)
			goto rollback;
		bind_text(st, 1, task);
		sqlite3_bind_int(st, 2, sample);
		bind_text(st, 3, r->lang ? r->lang : "");
		bind_text(st, 4, r->code);
		if (run_write(j, st, "store source", e))
			goto rollback;
	}
	if (exec(j, "COMMIT;", e))
		goto rollback;
	ret = 0;
	goto out;
rollback: /* every statement is finalized where it ran */
	exec(j, "ROLLBACK;", NULL);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_get_reply(struct journal *j, const char *task, int sample, struct journal_reply *out,
		      struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st = prep(
		j,
		"SELECT r.ok, r.text, s.code, s.lang, r.finish, r.error, r.seed, r.in_tokens,"
		" r.out_tokens, r.cost_usd, r.latency_s, r.cached, r.http_status, r.attempts "
		"FROM replies r LEFT JOIN sources s ON s.task = r.task AND s.sample = r.sample "
		"WHERE r.task = ? AND r.sample = ?;",
		e);
	if (!st)
		goto out;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	ret = step_row(j, st, "read reply", e);
	if (!ret) {
		out->ok = sqlite3_column_int(st, 0);
		out->text = col_text(st, 1);
		out->code = col_text(st, 2);
		out->lang = col_text(st, 3);
		out->finish = col_text(st, 4);
		out->error = col_text(st, 5);
		out->seed = sqlite3_column_int64(st, 6);
		out->in_tokens = sqlite3_column_int64(st, 7);
		out->out_tokens = sqlite3_column_int64(st, 8);
		out->cost_usd = sqlite3_column_double(st, 9);
		out->latency_s = sqlite3_column_double(st, 10);
		out->cached = sqlite3_column_int(st, 11);
		out->http_status = sqlite3_column_int(st, 12);
		out->attempts = sqlite3_column_int(st, 13);
	}
	sqlite3_finalize(st);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

void journal_reply_free(struct journal_reply *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->code);
	free(r->lang);
	free(r->finish);
	free(r->error);
	memset(r, 0, sizeof *r);
}

int journal_state(struct journal *j, const char *task, int sample, enum journal_state *out,
		  struct ka_err *e)
{
	int64_t v =
		query_int(j,
			  "SELECT CASE WHEN EXISTS (SELECT 1 FROM grades WHERE task = ?1 AND "
			  "sample = ?2) THEN 3 ELSE COALESCE((SELECT CASE WHEN ok THEN 2 ELSE 1 "
			  "END FROM replies WHERE task = ?1 AND sample = ?2), 0) END;",
			  task, sample);
	if (v < 0)
		return ka_err_set(e, "%s: cannot read the state of %s sample %d", j->path, task,
				  sample);
	*out = v == 3	? JOURNAL_STATE_GRADED
	       : v == 2 ? JOURNAL_STATE_REPLIED
	       : v == 1 ? JOURNAL_STATE_FAILED
			: JOURNAL_STATE_NEW;
	return 0;
}

int journal_put_grade(struct journal *j, const char *task, int sample, const char *verdict,
		      const char *detail, const char *result_json, int start_id, int session,
		      struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	/* The primary key refuses a second grade of the same sample. */
	sqlite3_stmt *st =
		prep(j,
		     "INSERT INTO grades(task, sample, verdict, detail, result, start_id,"
		     " session, graded) VALUES (?, ?, ?, ?, ?, ?, ?, ?);",
		     e);
	if (!st)
		goto out;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	bind_text(st, 3, verdict);
	bind_text(st, 4, detail ? detail : "");
	bind_text(st, 5, result_json ? result_json : "{}");
	sqlite3_bind_int(st, 6, start_id);
	sqlite3_bind_int(st, 7, session);
	sqlite3_bind_double(st, 8, wall_now());
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		ret = 0;
	else if (sqlite3_extended_errcode(j->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
		ka_err_set(e, "%s: %s sample %d is already graded", j->path, task, sample);
	else
		db_err(j, e, "store grade");
	sqlite3_finalize(st);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_get_grade(struct journal *j, const char *task, int sample, char **verdict,
		      char **detail, char **result_json, struct ka_err *e)
{
	if (verdict)
		*verdict = NULL;
	if (detail)
		*detail = NULL;
	if (result_json)
		*result_json = NULL;
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st = prep(
		j, "SELECT verdict, result, detail FROM grades WHERE task = ? AND sample = ?;", e);
	if (!st)
		goto out;
	bind_text(st, 1, task);
	sqlite3_bind_int(st, 2, sample);
	ret = step_row(j, st, "read grade", e);
	if (!ret) {
		if (verdict)
			*verdict = col_text(st, 0);
		if (result_json)
			*result_json = col_text(st, 1);
		if (detail)
			*detail = col_text(st, 2);
	}
	sqlite3_finalize(st);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

int journal_totals(struct journal *j, struct journal_totals *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&j->mu);
	int ret = -1;
	sqlite3_stmt *st = prep(
		j,
		"SELECT (SELECT COUNT(*) FROM grades), (SELECT COUNT(*) FROM grades WHERE verdict ="
		" 'ok'), (SELECT COUNT(*) FROM replies WHERE ok), (SELECT COUNT(*) FROM replies "
		"WHERE"
		" NOT ok), (SELECT COALESCE(SUM(in_tokens), 0) FROM replies WHERE ok),"
		" (SELECT COALESCE(SUM(out_tokens), 0) FROM replies WHERE ok),"
		" (SELECT COALESCE(SUM(cost_usd), 0) FROM replies WHERE ok);",
		e);
	if (!st)
		goto out;
	if (sqlite3_step(st) == SQLITE_ROW) {
		out->graded = sqlite3_column_int64(st, 0);
		out->ok = sqlite3_column_int64(st, 1);
		out->replies = sqlite3_column_int64(st, 2);
		out->failed_replies = sqlite3_column_int64(st, 3);
		out->in_tokens = sqlite3_column_int64(st, 4);
		out->out_tokens = sqlite3_column_int64(st, 5);
		out->cost_usd = sqlite3_column_double(st, 6);
		ret = 0;
	} else {
		db_err(j, e, "totals");
	}
	sqlite3_finalize(st);
out:
	pthread_mutex_unlock(&j->mu);
	return ret;
}

uint64_t journal_space_floor(void)
{
	const char *v = getenv("KA_SPACE_FLOOR_MB");
	char *end = NULL;
	long long mb = v && *v ? strtoll(v, &end, 10) : -1;
	if (mb < 0 || (end && *end))
		mb = JOURNAL_SPACE_FLOOR_MB;
	return (uint64_t)mb << 20;
}

int journal_check_writable(struct journal *j, struct ka_err *e)
{
	char *dir = xstrdup(j->path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, strlen(dir) + 1, ".");
	struct statvfs sv;
	int rc = 0;
	uint64_t floor = journal_space_floor();
	if (statvfs(dir, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < floor)
		rc = ka_err_set(
			e,
			"out of space: %.300s has %llu MiB free, under the floor of %llu MiB "
			"(free some space and run the same command again)",
			dir, (unsigned long long)((uint64_t)sv.f_bavail * sv.f_frsize >> 20),
			(unsigned long long)(floor >> 20));
	free(dir);
	if (rc)
		return rc;
	/* A real write: a journal that cannot take one (read-only, full,
	 * damaged) refuses here, before a request is paid for. */
	pthread_mutex_lock(&j->mu);
	sqlite3_stmt *st =
		prep(j, "INSERT OR REPLACE INTO meta(key, value) VALUES('writable', ?)", e);
	if (!st)
		rc = -1;
	else {
		char now[32];
		snprintf(now, sizeof now, "%.3f", wall_now());
		bind_text(st, 1, now);
		rc = run_write(j, st, "write check", e);
	}
	pthread_mutex_unlock(&j->mu);
	return rc;
}

/* ---- merging shards (ka merge) ------------------------------------------------ */

#include "journal_merge.h"

int journal_merge_from(struct journal *j, const char *other_path, struct ka_err *e)
{
	pthread_mutex_lock(&j->mu);
	int rc = -1, attached = 0, in_tx = 0;
	sqlite3_stmt *st = prep(j, "ATTACH DATABASE ?1 AS shard", e);
	if (!st)
		goto out;
	sqlite3_bind_text(st, 1, other_path, -1, SQLITE_TRANSIENT);
	if (run_write(j, st, "attach", e))
		goto out;
	attached = 1;
	if (exec(j, "BEGIN IMMEDIATE;", e))
		goto out;
	in_tx = 1;
	/* Start ids of the shard follow those already merged; grades keep
	 * pointing at the start that made them. A (task, sample) already present
	 * fails the INSERT: a sample belongs to one shard. */
	static const char *const sql =
		"CREATE TEMP TABLE IF NOT EXISTS merge_base(base INTEGER);"
		"DELETE FROM merge_base;"
		"INSERT INTO merge_base SELECT COALESCE(MAX(id), 0) FROM main.starts;"
		"INSERT INTO main.starts(id, pid, started, devices)"
		"  SELECT id + (SELECT base FROM merge_base), pid, started, devices"
		"  FROM shard.starts;"
		"INSERT INTO main.requests SELECT * FROM shard.requests;"
		"INSERT INTO main.replies SELECT * FROM shard.replies;"
		"INSERT INTO main.sources SELECT * FROM shard.sources;"
		"INSERT INTO main.grades(task, sample, verdict, detail, result, start_id, session,"
		"  graded) SELECT task, sample, verdict, detail, result,"
		"  start_id + (SELECT base FROM merge_base), session, graded FROM shard.grades;";
	if (exec(j, sql, e))
		goto out;
	if (exec(j, "COMMIT;", e))
		goto out;
	in_tx = 0;
	rc = 0;
out:
	if (in_tx) {
		struct ka_err ignore;
		exec(j, "ROLLBACK;", &ignore);
	}
	if (attached) {
		struct ka_err ignore;
		exec(j, "DETACH DATABASE shard;", &ignore);
	}
	pthread_mutex_unlock(&j->mu);
	return rc;
}
