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

#endif
