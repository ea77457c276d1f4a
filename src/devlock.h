/* devlock.h: one reader-writer lock per device, shared by every grade
 * session of this process that drives that device (docs/grader.md,
 * "Several graders on one device"). Calls that only check correctness take
 * it shared, so several candidates' correctness calls use the device at
 * once; timed calls (and the runner's start-up calibration) take it
 * exclusive, so nothing else of this process runs on the device while a
 * call is timed. Writers are preferred: a waiting timed call is not starved
 * by a stream of correctness calls. Other processes are not covered: run
 * one `ka` per device. */
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
 * waiting. d NULL: no lock, returns 0. */
double devlock_acquire(struct devlock *d, int exclusive);

/* Release what devlock_acquire took. d NULL: no-op. */
void devlock_release(struct devlock *d);

#endif
