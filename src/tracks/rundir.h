/* rundir.h: a track's output folder, shared by every track: created and
 * locked for one process, emptied with --fresh, and holding the run journal
 * whose recorded arguments must match this run's (so a run started again with
 * the same arguments continues, and other arguments are refused). */
#ifndef KA_RUNDIR_H
#define KA_RUNDIR_H

#include <stddef.h>

#include "journal.h"
#include "util.h"

/* A track's output folder, locked for this process. */
struct rundir {
	int lock_fd;
	struct journal *j;
	int resumed; /* the journal held this run already */
};

/* Create out, lock it (another ka on it is refused), with fresh remove an
 * earlier run's files, open out/journal.sqlite and check that it holds the
 * run args_key names or nothing (then record it). Returns 0, or an exit code
 * with e set: KA_EXIT_USAGE when the folder is taken, holds another run
 * ("OUT holds a different run (k is 4 there, 3 here); use --fresh ...") or
 * its journal cannot be opened; KA_EXIT_FAIL when the journal fails. d is
 * always fit for rundir_close. */
int rundir_open(struct rundir *d, const char *out, int fresh, const char *args_key,
		const char *args_pretty, const char *bank_hash, struct ka_err *e);

/* Close the journal and release the lock. */
void rundir_close(struct rundir *d);

/* The first key whose value differs between two JSON objects, with both
 * values ("k is 4 there, 3 here"), into msg; "the arguments differ" when
 * none can be named. */
void rundir_args_diff(const char *old_json, const char *new_json, char *msg, size_t cap);

/* Handle SIGINT, SIGTERM and SIGHUP alike: the first sets a flag the
 * pipeline reads (no new request, no new grade; what is under way finishes
 * and is journaled), a second ends the process at once. Call once, at start.
 * ka's helpers ignore these signals (util_child_detach_signals), so a stop
 * sent to the whole group or job reaches ka alone. */
void rundir_signals_install(void);

/* The stop signal received (SIGINT, SIGTERM, SIGHUP), or 0. */
int rundir_stop_signal(void);

/* Whether a grade that just ended (ok: its verdict was ok) is journaled: 1,
 * except for a failed grade once a stop signal has arrived. A helper that a
 * stop killed anyway (one that restored the signal, or a stop that came as
 * SIGKILL to some processes first) reads as the candidate's fault; such a
 * grade is dropped and runs again when the run resumes. */
int rundir_grade_stands(int ok);

/* rc, or 128 + the stop signal when one was received (130 for SIGINT, 143
 * for SIGTERM). */
int rundir_exit_code(int rc);

/* Stale temporary files of killed runs, removed at start: partial files
 * (*.part*) under out/.grade older than now (out is locked by this run),
 * and in the shared places ($TMPDIR's ka-rec-*, ka-model-*, ka-bank-*,
 * ka-tol-*; the gold cache's build-*) those older than RUNDIR_STALE_S, more
 * than any compile, record or model call can live. Returns how many. */
#define RUNDIR_STALE_S 3600.0
int rundir_clean_stale(const char *out);

#endif
