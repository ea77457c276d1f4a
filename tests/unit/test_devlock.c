/* test_devlock.c: the per-device reader-writer lock (src/devlock.h). Shared
 * holders overlap; an exclusive holder overlaps nobody; a waiting exclusive
 * holder is served before shared holders that come after it, and the shared
 * holders that waited for a writer enter together when it leaves, before
 * the next writer (phase-fair); a downgrade lets nobody take the lock
 * exclusive in between; graders that hold it shared and upgrade by release
 * and acquire never deadlock; one lock per key, freed with its last
 * reference. Memory turns: sessions that share a device's memory and free
 * theirs when another session takes the turn never run out again once in
 * the turn, and a turn does not wait for ever for a session that never
 * parks. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "devlock.h"
#include "ka_test.h"
#include "util.h"

static atomic_int g_inside, g_max_inside, g_excl_inside, g_violations;

struct job {
	struct devlock *d;
	int exclusive, rounds;
};

/* Take the lock rounds times, note how many are inside at once. */
static void *holder(void *arg)
{
	struct job *j = arg;
	for (int r = 0; r < j->rounds; r++) {
		devlock_acquire(j->d, j->exclusive);
		int n = atomic_fetch_add(&g_inside, 1) + 1;
		if (j->exclusive)
			atomic_fetch_add(&g_excl_inside, 1);
		if (atomic_load(&g_excl_inside) && n > 1)
			atomic_fetch_add(&g_violations, 1);
		int m = atomic_load(&g_max_inside);
		while (n > m && !atomic_compare_exchange_weak(&g_max_inside, &m, n))
			;
		usleep(2000);
		if (j->exclusive)
			atomic_fetch_sub(&g_excl_inside, 1);
		atomic_fetch_sub(&g_inside, 1);
		devlock_release(j->d);
	}
	return NULL;
}

static void test_shared_overlap_exclusive_alone(void)
{
	struct devlock *d = devlock_get("cuda::0");
	pthread_t th[6];
	struct job jobs[6];
	for (int i = 0; i < 6; i++) {
		jobs[i] = (struct job){d, i < 2, 20};
		pthread_create(&th[i], NULL, holder, &jobs[i]);
	}
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ_INT(atomic_load(&g_violations), 0);
	CHECK(atomic_load(&g_max_inside) >= 2); /* the 4 shared holders overlapped */
	devlock_put(d);
}

static atomic_int g_order[3], g_next;

static void *shared_then_note(void *arg)
{
	struct devlock *d = arg;
	devlock_acquire(d, 0);
	g_order[atomic_fetch_add(&g_next, 1)] = 'r';
	devlock_release(d);
	return NULL;
}

static void *excl_then_note(void *arg)
{
	struct devlock *d = arg;
	devlock_acquire(d, 1);
	g_order[atomic_fetch_add(&g_next, 1)] = 'w';
	devlock_release(d);
	return NULL;
}

/* A shared holder is inside; an exclusive waiter arrives, then another
 * shared one: the exclusive one goes first. */
static void test_writer_preferred(void)
{
	struct devlock *d = devlock_get("cuda::1");
	devlock_acquire(d, 0);
	pthread_t w, r;
	pthread_create(&w, NULL, excl_then_note, d);
	usleep(50000);
	pthread_create(&r, NULL, shared_then_note, d);
	usleep(50000);
	CHECK_EQ_INT(atomic_load(&g_next), 0); /* both wait behind the first holder */
	devlock_release(d);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	CHECK_EQ_INT(g_order[0], 'w');
	CHECK_EQ_INT(g_order[1], 'r');
	devlock_put(d);
}

/* A writer inside, a second writer waiting, then a shared holder: when the
 * first writer leaves, the shared one enters before the second writer
 * (phase-fair), which waits for it to leave. */
static atomic_int g_stage;

static void *shared_hold_note(void *arg)
{
	struct devlock *d = arg;
	devlock_acquire(d, 0);
	g_order[atomic_fetch_add(&g_next, 1)] = 'r';
	while (atomic_load(&g_stage) == 0) /* held until the test says */
		usleep(1000);
	devlock_release(d);
	return NULL;
}

/* Take d exclusive, then start first and (50 ms later) second, which wait
 * for it; th gets them. */
static void hold_with_waiters(struct devlock *d, void *(*first)(void *), void *(*second)(void *),
			      pthread_t th[2])
{
	atomic_store(&g_next, 0);
	atomic_store(&g_stage, 0);
	devlock_acquire(d, 1);
	pthread_create(&th[0], NULL, first, d);
	usleep(50000);
	pthread_create(&th[1], NULL, second, d);
	usleep(50000);
}

/* Let the shared holder go, and join both waiters. */
static void waiters_end(pthread_t th[2])
{
	atomic_store(&g_stage, 1);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
}

static void test_phase_fair(void)
{
	struct devlock *d = devlock_get("cuda::2");
	pthread_t th[2];
	hold_with_waiters(d, excl_then_note, shared_hold_note, th);
	CHECK_EQ_INT(atomic_load(&g_next), 0);
	devlock_release(d);
	usleep(100000);
	/* The shared holder is inside and holds on; the writer still waits. */
	CHECK_EQ_INT(atomic_load(&g_next), 1);
	CHECK_EQ_INT(g_order[0], 'r');
	waiters_end(th);
	CHECK_EQ_INT(g_order[1], 'w');
	devlock_put(d);
}

/* Downgrade: the exclusive holder becomes a shared one; a shared holder
 * that waited enters at once, a waiting writer only after both left. */
static void test_downgrade(void)
{
	struct devlock *d = devlock_get("cuda::3");
	pthread_t th[2];
	hold_with_waiters(d, shared_hold_note, excl_then_note, th);
	CHECK_EQ_INT(atomic_load(&g_next), 0);
	devlock_downgrade(d);
	usleep(100000);
	CHECK_EQ_INT(atomic_load(&g_next), 1); /* the reader is in, beside us */
	CHECK_EQ_INT(g_order[0], 'r');
	atomic_store(&g_stage, 1);
	usleep(100000);
	CHECK_EQ_INT(atomic_load(&g_next), 1); /* we still hold it shared */
	devlock_release(d);
	waiters_end(th);
	CHECK_EQ_INT(g_order[1], 'w');
	devlock_put(d);
}

/* What a grader does for a phased timed call (docs/grader.md, "Phased
 * timed calls"), in many threads at once: shared, release and exclusive,
 * downgrade, release; and plain shared calls beside them. No deadlock (the
 * test ends), and no exclusive section overlaps any other holder. */
static void *phased_caller(void *arg)
{
	struct job *j = arg;
	for (int r = 0; r < j->rounds; r++) {
		devlock_acquire(j->d, 0);
		atomic_fetch_add(&g_inside, 1);
		if (atomic_load(&g_excl_inside))
			atomic_fetch_add(&g_violations, 1);
		atomic_fetch_sub(&g_inside, 1);
		if (j->exclusive) {
			devlock_release(j->d);
			devlock_acquire(j->d, 1);
			int n = atomic_fetch_add(&g_inside, 1) + 1;
			atomic_fetch_add(&g_excl_inside, 1);
			if (n > 1)
				atomic_fetch_add(&g_violations, 1);
			usleep(200);
			atomic_fetch_sub(&g_excl_inside, 1);
			atomic_fetch_sub(&g_inside, 1);
			devlock_downgrade(j->d);
			atomic_fetch_add(&g_inside, 1);
			if (atomic_load(&g_excl_inside))
				atomic_fetch_add(&g_violations, 1);
			atomic_fetch_sub(&g_inside, 1);
		}
		devlock_release(j->d);
	}
	return NULL;
}

static void test_upgrade_no_deadlock(void)
{
	struct devlock *d = devlock_get("cuda::4");
	atomic_store(&g_violations, 0);
	pthread_t th[8];
	struct job jobs[8];
	for (int i = 0; i < 8; i++) {
		jobs[i] = (struct job){d, i < 6, 300};
		pthread_create(&th[i], NULL, phased_caller, &jobs[i]);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ_INT(atomic_load(&g_violations), 0);
	devlock_put(d);
}

static void test_one_lock_per_key(void)
{
	struct devlock *a = devlock_get("opencl:pocl:0");
	struct devlock *b = devlock_get("opencl:pocl:0");
	struct devlock *c = devlock_get("opencl:pocl:1");
	CHECK(a == b);
	CHECK(a != c);
	/* Different keys do not exclude each other. */
	devlock_acquire(a, 1);
	CHECK(devlock_acquire(c, 1) < 0.5);
	devlock_release(c);
	devlock_release(a);
	devlock_put(a);
	devlock_put(b);
	devlock_put(c);
	CHECK(devlock_acquire(NULL, 1) == 0);
	devlock_release(NULL);
	devlock_put(NULL);
}

/* A device of MEM_CAP units shared by MEM_SESSIONS sessions, each holding
 * what its last grade loaded (as a runner keeps its slots). */
#define MEM_CAP 10
#define MEM_SESSIONS 4
#define MEM_GRADES 40
static atomic_int g_resident, g_turn_fail, g_turns, g_grades, g_loads_in_turn;
static _Atomic(const void *) g_turn_holder;

struct mem_session {
	struct devlock *d;
	int held, need[MEM_GRADES];
};

/* Load need units: 0, or -1 (out of memory: nothing kept). */
static int mem_load(struct mem_session *m, int need)
{
	const void *h = atomic_load(&g_turn_holder);
	if (h && h != m) /* another session's turn: nobody else loads */
		atomic_fetch_add(&g_loads_in_turn, 1);
	atomic_fetch_sub(&g_resident, m->held);
	m->held = 0;
	if (atomic_fetch_add(&g_resident, need) + need > MEM_CAP) {
		atomic_fetch_sub(&g_resident, need);
		return -1;
	}
	m->held = need;
	usleep(1000);
	return 0;
}

static void mem_free(struct mem_session *m)
{
	atomic_fetch_sub(&g_resident, m->held);
	m->held = 0;
}

static void *mem_grader(void *arg)
{
	struct mem_session *m = arg;
	for (int g = 0; g < MEM_GRADES; g++) {
		if (devlock_turn_wanted(m->d, m)) {
			mem_free(m);
			devlock_park(m->d, m);
		}
		if (mem_load(m, m->need[g])) {
			mem_free(m);
			devlock_turn_take(m->d, m, 10);
			atomic_store(&g_turn_holder, m);
			atomic_fetch_add(&g_turns, 1);
			if (mem_load(m, m->need[g]))
				atomic_fetch_add(&g_turn_fail, 1);
			atomic_store(&g_turn_holder, NULL);
			devlock_turn_give(m->d, m);
		}
		atomic_fetch_add(&g_grades, 1);
	}
	mem_free(m);
	devlock_put(m->d);
	return NULL;
}

static void test_memory_turns(void)
{
	pthread_t th[MEM_SESSIONS];
	struct mem_session ms[MEM_SESSIONS];
	for (int i = 0; i < MEM_SESSIONS; i++) {
		ms[i] = (struct mem_session){.d = devlock_get("cuda::7")};
		for (int g = 0; g < MEM_GRADES; g++)
			ms[i].need[g] = 2 + (i * 3 + g * 5) % 7; /* 2 .. 8 of 10: some collide */
	}
	for (int i = 0; i < MEM_SESSIONS; i++)
		pthread_create(&th[i], NULL, mem_grader, &ms[i]);
	for (int i = 0; i < MEM_SESSIONS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ_INT(atomic_load(&g_grades), MEM_SESSIONS * MEM_GRADES);
	CHECK_EQ_INT(atomic_load(&g_loads_in_turn), 0);
	CHECK(atomic_load(&g_turns) > 0); /* the sizes do collide */
	CHECK_EQ_INT(atomic_load(&g_turn_fail), 0);
	CHECK_EQ_INT(atomic_load(&g_resident), 0);
}

/* A session that holds a reference and never grades: the turn waits
 * max_wait_s for it, then goes on; wanted is seen by it, not by the taker. */
static void test_turn_gives_up_waiting(void)
{
	struct devlock *a = devlock_get("cuda::8"), *idle = devlock_get("cuda::8");
	int me, other;
	CHECK_EQ_INT(devlock_turn_wanted(a, &me), 0);
	double w = devlock_turn_take(a, &me, 0.3);
	CHECK(w >= 0.25 && w < 5);
	CHECK_EQ_INT(devlock_turn_wanted(a, &me), 0);
	CHECK_EQ_INT(devlock_turn_wanted(a, &other), 1);
	devlock_turn_give(a, &me);
	CHECK_EQ_INT(devlock_turn_wanted(a, &other), 0);
	CHECK(devlock_park(a, &other) < 0.5); /* no turn: no wait */
	devlock_put(idle);
	/* Alone: the turn is taken at once. */
	CHECK(devlock_turn_take(a, &me, 30) < 0.5);
	devlock_turn_give(a, &me);
	devlock_put(a);
	CHECK(devlock_turn_take(NULL, &me, 1) == 0);
	CHECK_EQ_INT(devlock_turn_wanted(NULL, &me), 0);
}

struct turn_job {
	struct devlock *d;
	const void *who;
	atomic_int done;
};

static void *take_turn(void *arg)
{
	struct turn_job *j = arg;
	devlock_turn_take(j->d, j->who, 30);
	atomic_store(&j->done, 1);
	return NULL;
}

static void *park_job(void *arg)
{
	struct turn_job *j = arg;
	devlock_park(j->d, j->who);
	atomic_store(&j->done, 1);
	return NULL;
}

/* Wait up to s seconds for *flag. */
static int wait_flag(atomic_int *flag, double s)
{
	double t0 = util_now();
	while (!atomic_load(flag) && util_now() - t0 < s)
		usleep(2000);
	return atomic_load(flag);
}

/* The turn is taken only once the other session has parked, and the parked
 * session goes on only once the turn is given. */
static void test_turn_waits_for_park(void)
{
	struct devlock *a = devlock_get("cuda::9"), *b = devlock_get("cuda::9");
	int sa, sb;
	struct turn_job ta = {a, &sa, 0}, pb = {b, &sb, 0};
	pthread_t t1, t2;
	pthread_create(&t1, NULL, take_turn, &ta);
	CHECK_EQ_INT(wait_flag(&ta.done, 0.2), 0); /* b is grading: not yet */
	CHECK(wait_flag(&ta.done, 0.01) == 0 && devlock_turn_wanted(b, &sb));
	pthread_create(&t2, NULL, park_job, &pb);
	CHECK_EQ_INT(wait_flag(&ta.done, 5), 1); /* b parked: the turn is a's */
	CHECK_EQ_INT(wait_flag(&pb.done, 0.2), 0);
	devlock_turn_give(a, &sa);
	CHECK_EQ_INT(wait_flag(&pb.done, 5), 1);
	CHECK_EQ_INT(devlock_turn_wanted(b, &sb), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	devlock_put(b);
	devlock_put(a);
}

int main(void)
{
	RUN(test_shared_overlap_exclusive_alone);
	RUN(test_writer_preferred);
	RUN(test_phase_fair);
	RUN(test_downgrade);
	RUN(test_upgrade_no_deadlock);
	RUN(test_one_lock_per_key);
	RUN(test_memory_turns);
	RUN(test_turn_gives_up_waiting);
	RUN(test_turn_waits_for_park);
	TEST_EXIT();
}
