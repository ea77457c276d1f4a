/* test_devlock.c: the per-device reader-writer lock (src/devlock.h). Shared
 * holders overlap; an exclusive holder overlaps nobody; a waiting exclusive
 * holder is served before shared holders that come after it; one lock per
 * key, freed with its last reference. */
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

int main(void)
{
	RUN(test_shared_overlap_exclusive_alone);
	RUN(test_writer_preferred);
	RUN(test_one_lock_per_key);
	TEST_EXIT();
}
