/* devlock.c: per-device reader-writer locks (see devlock.h). A short list of
 * named locks under one mutex; each is a writer-preferring pthread rwlock. */
#include "devlock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct devlock {
	char *key;
	int refs;
	pthread_rwlock_t rw;
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
		pthread_rwlockattr_t at;
		pthread_rwlockattr_init(&at);
		pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&d->rw, &at);
		pthread_rwlockattr_destroy(&at);
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
		pthread_rwlock_destroy(&d->rw);
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

double devlock_acquire(struct devlock *d, int exclusive)
{
	if (!d)
		return 0;
	double t0 = util_now();
	if (exclusive)
		pthread_rwlock_wrlock(&d->rw);
	else
		pthread_rwlock_rdlock(&d->rw);
	return util_now() - t0;
}

void devlock_release(struct devlock *d)
{
	if (d)
		pthread_rwlock_unlock(&d->rw);
}
