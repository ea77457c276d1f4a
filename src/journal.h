/* journal.h: the run journal, one SQLite database per output folder
 * (out/journal.sqlite, WAL mode). A track writes every step of a run into it
 * as it happens, one committed transaction per step: the run's identity
 * (arguments, bank hash), each start of the process, each request sent, each
 * reply (text, tokens, cost, latency, error) with the source extracted from
 * it, and each grade (verdict, detail, the grader's result JSON). A run that
 * is killed at any moment and started again reads the journal to continue:
 * graded samples are never graded again, replies are never requested again.
 * The schema is documented in docs/capability.md.
 *
 * All functions are thread-safe: one connection, guarded by a mutex inside
 * struct journal. This module knows nothing about models or the grader; it
 * stores what it is given. The grader's secret nonce never reaches it. */
#ifndef KA_JOURNAL_H
#define KA_JOURNAL_H

#include <stdint.h>

#include "util.h"

#define JOURNAL_SCHEMA "ka-journal/1"
#define JOURNAL_MAX_TEXT ((size_t)16 << 20) /* cap on any one stored text */

struct journal;

/* Open (creating if missing) the journal at path, in WAL mode with
 * synchronous=NORMAL (a committed step survives the process being killed).
 * A file with another schema is refused. Returns a journal (journal_close)
 * or NULL with e set ("<path>: <cause>"). */
struct journal *journal_open(const char *path, struct ka_err *e);

/* Checkpoint and close. NULL is a no-op. */
void journal_close(struct journal *j);

/* The run's identity. args_key is a canonical string of every argument that
 * decides the results (two runs with the same key are the same run);
 * args_json is a human-readable copy; bank_hash names the bank's content.
 * journal_run_get: 0 and new strings in *args_key / *args_json (caller frees;
 * either pointer may be NULL) when the run is recorded, 1 when the journal is
 * new, -1 with e on error. journal_run_set records it (only once: -1 if a
 * run is already recorded). */
int journal_run_get(struct journal *j, char **args_key, char **args_json, struct ka_err *e);
int journal_run_set(struct journal *j, const char *args_key, const char *args_json,
		    const char *bank_hash, struct ka_err *e);

/* Record one start of the process (pid, time, the devices it graded on as
 * JSON text). *start_id receives its id (1, 2, ...). 0 or -1 with e. */
int journal_start(struct journal *j, const char *devices_json, int *start_id, struct ka_err *e);

/* Number of starts recorded (0 for a new journal), or -1. */
int journal_count_starts(struct journal *j);

/* Note that the request for (task, sample) is about to be sent: inserts its
 * row or, for a resend, increments its send count. 0 or -1 with e. */
int journal_request(struct journal *j, const char *task, int sample, const char *prompt_hash,
		    int64_t seed, struct ka_err *e);

/* One reply, as stored. Strings are borrowed when passed to journal_put_reply
 * and owned (journal_reply_free) when filled by journal_get_reply. */
struct journal_reply {
	int ok;	      /* 1: a completion arrived */
	char *text;   /* completion (NULL when !ok) */
	char *code;   /* extracted source, NULL = none (no_code) */
	char *lang;   /* language asked for ("cuda", "opencl") */
	char *finish; /* stop reason, may be "" */
	char *error;  /* when !ok */
	int64_t seed;
	int64_t in_tokens, out_tokens;
	double cost_usd, latency_s;
	int cached, http_status, attempts;
};

/* Store the reply of (task, sample) and its extracted source in one
 * transaction, replacing an earlier failed reply. Refused (-1) when the
 * sample already has a successful reply: a paid completion is never
 * overwritten. */
int journal_put_reply(struct journal *j, const char *task, int sample,
		      const struct journal_reply *r, struct ka_err *e);

/* Read the reply of (task, sample): 0 with out filled, 1 if there is none,
 * -1 with e. */
int journal_get_reply(struct journal *j, const char *task, int sample, struct journal_reply *out,
		      struct ka_err *e);

void journal_reply_free(struct journal_reply *r);

/* Where a sample stands. */
enum journal_state {
	JOURNAL_STATE_NEW,     /* nothing received (maybe sent, then killed) */
	JOURNAL_STATE_FAILED,  /* the request failed: send it again */
	JOURNAL_STATE_REPLIED, /* a completion is stored, not graded yet */
	JOURNAL_STATE_GRADED,  /* done */
};

/* State of (task, sample) into *out. 0 or -1 with e. */
int journal_state(struct journal *j, const char *task, int sample, enum journal_state *out,
		  struct ka_err *e);

/* How many times the request of (task, sample) was noted as sent (0 if
 * never), or -1. */
int journal_send_count(struct journal *j, const char *task, int sample);

/* Store the grade of (task, sample): verdict name, one-paragraph detail, the
 * grader's result JSON text, which start and which grade session did it.
 * Refused (-1, e says "already graded") when the sample has a grade: a
 * sample is graded exactly once. */
int journal_put_grade(struct journal *j, const char *task, int sample, const char *verdict,
		      const char *detail, const char *result_json, int start_id, int session,
		      struct ka_err *e);

/* Read the grade of (task, sample): 0 with new strings *verdict, *detail and
 * *result_json (caller frees; any pointer may be NULL), 1 if not graded, -1. */
int journal_get_grade(struct journal *j, const char *task, int sample, char **verdict,
		      char **detail, char **result_json, struct ka_err *e);

/* Counts over the whole journal: graded samples, of which verdict "ok";
 * stored successful replies and their token and cost sums. -1 on error. */
struct journal_totals {
	int64_t graded, ok, replies, failed_replies;
	int64_t in_tokens, out_tokens;
	double cost_usd;
};
int journal_totals(struct journal *j, struct journal_totals *out, struct ka_err *e);

/* Free space the journal's folder must keep before a request is sent (a
 * reply of up to the model's cap, 4 MiB, for each request of a batch):
 * JOURNAL_SPACE_FLOOR_MB, or $KA_SPACE_FLOOR_MB when set. */
#define JOURNAL_SPACE_FLOOR_MB 64
uint64_t journal_space_floor(void);

/* Whether the journal can take a write: its folder's filesystem has at least
 * journal_space_floor() bytes free and one small write (meta key
 * "writable") commits. 0, or -1 with e ("out of space: DIR has N MiB free,
 * under the floor of M MiB ..." or the write's error). */
int journal_check_writable(struct journal *j, struct ka_err *e);

#endif
