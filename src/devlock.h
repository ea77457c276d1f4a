/* devlock.h: one reader-writer lock per device, shared by every grade
 * session of this process that drives that device (docs/grader.md,
 * "Several graders on one device"). Calls that only check correctness take
 * it shared, so several candidates' correctness calls use the device at
 * once; the flush and replay of a timed call (and the runner's start-up
 * calibration) take it exclusive, so nothing else of this process runs on
 * the device meanwhile. The lock is phase-fair: a shared holder that
 * arrives while a writer holds or waits waits for that writer to leave, and
 * every shared holder waiting then enters together, before the next writer
 * (which waits for them to leave); writers go in arrival order. So a timed
 * call is never starved by a stream of checks, and the checks (and the
 * other timed calls' preparation and read back) that queued behind one
 * writer run together after it. Other processes are not covered: run one
 * `ka` per device. */
#ifndef KA_DEVLOCK_H
#define KA_DEVLOCK_H

struct devlock;

/* The lock of the device named key (e.g. "cuda::0"), made on first use;
 * every devlock_get is paired with a devlock_put. Never NULL. Thread-safe. */
struct devlock *devlock_get(const char *key);

/* Drop one reference; the last frees the lock. NULL is a no-op. */
void devlock_put(struct devlock *d);

/* How many sessions hold a reference to d now (devlock_get less
 * devlock_put); 0 for NULL. Thread-safe. */
int devlock_users(struct devlock *d);

/* Take d shared (exclusive 0) or exclusive (1); returns the seconds spent
 * waiting. The caller must hold nothing of d (to change shared into
 * exclusive, release first: two shared holders that both upgraded in place
 * would wait for each other). d NULL: no lock, returns 0. */
double devlock_acquire(struct devlock *d, int exclusive);

/* Turn the caller's exclusive hold into a shared one, letting nobody else
 * take it exclusive in between; the shared holders waiting for this writer
 * enter with it. Never waits. d NULL: no-op. */
void devlock_downgrade(struct devlock *d);

/* Release what the caller holds (shared or exclusive). d NULL: no-op. */
void devlock_release(struct devlock *d);

/* Memory turns (docs/grader.md, "Device memory"). The sessions on a device
 * share its memory without accounting: each runner keeps what its last grade
 * loaded. A grade that ran out of device memory takes the device's memory
 * turn and grades again once the others have freed theirs; meanwhile no
 * other session starts a grade. who names the session (any unique pointer).
 *
 * devlock_turn_take: the caller has freed its device memory; wait (counted
 * as parked) until no other session holds the turn, take it,
 * then wait until every other session of d has parked (devlock_park), gone
 * idle (devlock_idle) or let go of d (devlock_put), or max_wait_s passed (a session that is not
 * grading, e.g. waiting for work, holds its memory until its next grade).
 * Returns the seconds waited. The caller must hold nothing of d's lock.
 * devlock_turn_give: end the turn; the parked sessions go on.
 * devlock_turn_wanted: whether a session other than who holds the turn or
 * waits for it: then who must free its device memory (its runner) and call
 * devlock_park before its grade touches the device.
 * devlock_park: wait, counted as parked, until no session other than who
 * holds or waits for the turn; returns the seconds waited.
 * d NULL: take and park return 0 at once, wanted returns 0. */
double devlock_turn_take(struct devlock *d, const void *who, double max_wait_s);
/* devlock_idle(d, +1): a session that has freed its device memory and will
 * not grade for a while (its work is done) counts as parked without
 * waiting; devlock_idle(d, -1) before it grades again. d NULL: no-op. */
void devlock_idle(struct devlock *d, int delta);
void devlock_turn_give(struct devlock *d, const void *who);
int devlock_turn_wanted(struct devlock *d, const void *who);
double devlock_park(struct devlock *d, const void *who);

#endif
