/* devlock.c: per-device phase-fair reader-writer locks (see devlock.h). A
 * short list of named locks under one mutex; each lock is a mutex, a
 * condition variable and counters:
 *
 *   readers   shared holders inside;
 *   writer    an exclusive holder is inside;
 *   rwait     shared holders waiting for the next writer to leave (they are
 *             admitted all at once: readers += rwait, and gen changes);
 *   ticket/serving  writers in arrival order.
 *
 * A writer enters when no writer is inside, no reader is inside and its
 * ticket is served; a reader enters at once when no writer is inside or
 * waiting, else at the next writer's exit. Nobody waits while holding.
 *
 * Memory turns (devlock_turn_take): turn is the session holding the turn or
 * NULL, turn_wait how many sessions wait to take it, parked how many
 * sessions wait in devlock_park (or to take the turn), idle how many have
 * freed their memory and stopped grading (devlock_idle). */
#include "devlock.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

struct devlock {
	char *key;
	int refs;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int readers, writer, rwait, wwait;
	uint64_t gen;		  /* changes when a writer leaves (admitting the readers) */
	uint64_t ticket, serving; /* writers: next ticket to give, next to enter */
	const void *turn;	  /* the session holding the memory turn, or NULL */
	int turn_wait, parked, idle;
	struct devlock *next;
};

static pthread_mutex_t devlock_mu = PTHREAD_MUTEX_INITIALIZER;
static struct devlock *devlock_list;

struct devlock *devlock_get(const char *key)
{
	pthread_mutex_lock(&devlock_mu);
	struct devlock *d = devlock_list;
	while (d && strcmp(d->key, key))
		d = d->next;
	if (!d) {
		d = xcalloc(1, sizeof *d);
		d->key = xstrdup(key);
		pthread_mutex_init(&d->mu, NULL);
		pthread_cond_init(&d->cv, NULL);
		d->next = devlock_list;
		devlock_list = d;
	}
	d->refs++;
	pthread_mutex_unlock(&devlock_mu);
	return d;
}

void devlock_put(struct devlock *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&devlock_mu);
	if (--d->refs == 0) {
		struct devlock **p = &devlock_list;
		while (*p != d)
			p = &(*p)->next;
		*p = d->next;
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
		free(d->key);
		free(d);
	}
	pthread_mutex_unlock(&devlock_mu);
}

int devlock_users(struct devlock *d)
{
	if (!d)
		return 0;
	pthread_mutex_lock(&devlock_mu);
	int n = d->refs;
	pthread_mutex_unlock(&devlock_mu);
	return n;
}

/* The writer inside leaves (d->mu held): the readers that waited for it
 * enter together. */
static void writer_leaves(struct devlock *d)
{
	d->writer = 0;
	d->readers += d->rwait;
	d->rwait = 0;
	d->gen++;
	pthread_cond_broadcast(&d->cv);
}

double devlock_acquire(struct devlock *d, int exclusive)
{
	if (!d)
		return 0;
	double t0 = util_now();
	pthread_mutex_lock(&d->mu);
	if (exclusive) {
		uint64_t mine = d->ticket++;
		d->wwait++;
		while (d->writer || d->readers || d->serving != mine)
			pthread_cond_wait(&d->cv, &d->mu);
		d->wwait--;
		d->serving++;
		d->writer = 1;
	} else if (!d->writer && !d->wwait) {
		d->readers++;
	} else {
		/* Behind the writer inside or waiting: admitted when it leaves
		 * (writer_leaves counts this reader in). */
		uint64_t g = d->gen;
		d->rwait++;
		while (d->gen == g)
			pthread_cond_wait(&d->cv, &d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return util_now() - t0;
}

void devlock_downgrade(struct devlock *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	writer_leaves(d);
	d->readers++;
	pthread_mutex_unlock(&d->mu);
}

void devlock_release(struct devlock *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	if (d->writer) {
		writer_leaves(d);
	} else if (--d->readers == 0) {
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
}

/* Whether a session other than who holds or waits for the turn (d->mu held). */
static int turn_other(const struct devlock *d, const void *who)
{
	return (d->turn && d->turn != who) || (!d->turn && d->turn_wait > 0);
}

double devlock_turn_take(struct devlock *d, const void *who, double max_wait_s)
{
	if (!d)
		return 0;
	double t0 = util_now();
	pthread_mutex_lock(&d->mu);
	/* Waiting for another's turn counts as parked: the caller has freed
	 * its device memory before (devlock.h). */
	d->turn_wait++;
	d->parked++;
	pthread_cond_broadcast(&d->cv);
	while (d->turn)
		pthread_cond_wait(&d->cv, &d->mu);
	d->parked--;
	d->turn_wait--;
	d->turn = who;
	pthread_cond_broadcast(&d->cv);
	/* The others park at their next grade's start; a session that lets
	 * go of d (devlock_put) leaves the count. Woken at least every 100 ms
	 * to see refs change (devlock_put does not signal d->cv). */
	for (;;) {
		int others = devlock_users(d) - 1;
		if (d->parked + d->idle >= others || util_now() - t0 >= max_wait_s)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->cv, &d->mu, &ts);
	}
	pthread_mutex_unlock(&d->mu);
	return util_now() - t0;
}

void devlock_idle(struct devlock *d, int delta)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->idle += delta;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

void devlock_turn_give(struct devlock *d, const void *who)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	if (d->turn == who)
		d->turn = NULL;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

int devlock_turn_wanted(struct devlock *d, const void *who)
{
	if (!d)
		return 0;
	pthread_mutex_lock(&d->mu);
	int w = turn_other(d, who);
	pthread_mutex_unlock(&d->mu);
	return w;
}

double devlock_park(struct devlock *d, const void *who)
{
	if (!d)
		return 0;
	double t0 = util_now();
	pthread_mutex_lock(&d->mu);
	d->parked++;
	pthread_cond_broadcast(&d->cv);
	while (turn_other(d, who))
		pthread_cond_wait(&d->cv, &d->mu);
	d->parked--;
	pthread_mutex_unlock(&d->mu);
	return util_now() - t0;
}
