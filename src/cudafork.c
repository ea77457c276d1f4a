/* cudafork.c: the fork servers of the split CUDA compile (see cudafork.h).
 * Per plan: a spool folder in the cache folder (fsrv-XXXXXX, flocked while
 * in use, removed at exit; a later process removes the ones nobody holds),
 * holding the sentinel source, the serving plan, the servers' logs and
 * sockets; and a thread that runs the serving ka-cudaphases in a jail and
 * waits for it. */
#include "cudafork.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "jail.h"

#define MAX_SERVED 4 /* plans with servers */
#define MAX_STARTS 3 /* starts per plan and process: then no more */
#define SENTINEL "__ka_fork_sentinel"
#define SPOOL_PREFIX "fsrv-"

struct servers {
	const struct cudaplan *plan;
	int compiles;	    /* compiles with the plan in this process */
	int state;	    /* 0 not running, 1 started (maybe not ready), -1 never again */
	int starts;	    /* times started */
	pid_t owner;	    /* the process that started them */
	char dir[PATH_MAX]; /* the spool */
	char nvcc[PATH_MAX], driver[PATH_MAX], shim[PATH_MAX + 32];
	int stop_fd;  /* the writing end of their stdin: a byte there stops them */
	int in_fd;    /* its reading end, their stdin */
	int lock_fd;  /* flock on the spool's lock file */
	int joinable; /* thread was started */
	pthread_t thread;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct servers tab[MAX_SERVED];
static int n_tab;
static char spools[MAX_SERVED * MAX_STARTS][PATH_MAX]; /* to remove at exit */
static int n_spools;

/* KA_CUDA_FORKSRV: 0 off, 1 auto, 2 on. Called with mu held. */
static int mode(void)
{
	static int told;
	const char *v = getenv("KA_CUDA_FORKSRV");
	if (!v || !*v || !strcmp(v, "auto"))
		return 1;
	if (!strcmp(v, "on"))
		return 2;
	if (!strcmp(v, "off"))
		return 0;
	if (!told++)
		fprintf(stderr, "ka: note: KA_CUDA_FORKSRV=%.40s is not auto, on or off: auto\n",
			v);
	return 1;
}

/* The slot of plan p, made on first use; NULL when the table is full. */
static struct servers *slot_of(const struct cudaplan *p)
{
	for (int i = 0; i < n_tab; i++)
		if (tab[i].plan == p)
			return &tab[i];
	if (n_tab == MAX_SERVED)
		return NULL;
	struct servers *sv = &tab[n_tab++];
	memset(sv, 0, sizeof *sv);
	sv->plan = p;
	sv->stop_fd = sv->in_fd = sv->lock_fd = -1;
	return sv;
}

/* Remove the spools under cache_dir that no process holds. */
static void remove_stale(const char *cache_dir)
{
	DIR *d = opendir(cache_dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		if (strncmp(de->d_name, SPOOL_PREFIX, strlen(SPOOL_PREFIX)))
			continue;
		char *dir = xasprintf("%s/%s", cache_dir, de->d_name);
		char *lock = xasprintf("%s/lock", dir);
		int fd = open(lock, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			util_rmtree(dir);
		if (fd >= 0)
			close(fd);
		free(lock);
		free(dir);
	}
	if (d)
		closedir(d);
}

/* Make a fresh spool under cache_dir for sv: locked, with the sentinel
 * source, the module id file and the serving plan. 0, or -1 with e. */
static int make_spool(struct servers *sv, const char *cache_dir, struct ka_err *e)
{
	char real[PATH_MAX];
	if (util_mkdirs(cache_dir, e) || !realpath(cache_dir, real))
		return ka_err_set(e, "%s: %s", cache_dir, strerror(errno));
	if (sv->starts == 1)
		remove_stale(real);
	if (snprintf(sv->dir, sizeof sv->dir, "%.*s/" SPOOL_PREFIX "XXXXXX", PATH_MAX - 64, real) >=
		    (int)sizeof sv->dir ||
	    !mkdtemp(sv->dir))
		return ka_err_set(e, "%s: %s", sv->dir, strerror(errno));
	if (n_spools < MAX_SERVED * MAX_STARTS)
		snprintf(spools[n_spools++], PATH_MAX, "%s", sv->dir);
	char *lock = xasprintf("%s/lock", sv->dir), *cu = xasprintf("%s/candidate.cu", sv->dir);
	char *keep = xasprintf("%s/keep", sv->dir), *logs = xasprintf("%s/logs", sv->dir);
	char *mid = xasprintf("%s/%s", sv->dir, sv->plan->module_id_file);
	char *pl = xasprintf("%s/serve.plan", sv->dir);
	const char *src = "static int " SENTINEL ";\n";
	char *text = NULL;
	sv->lock_fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	int rc = -1;
	if (sv->lock_fd < 0 || flock(sv->lock_fd, LOCK_EX) != 0) {
		ka_err_set(e, "%s: %s", lock, strerror(errno));
		goto out;
	}
	if (util_mkdirs(keep, e) || util_mkdirs(logs, e) ||
	    util_write_file(cu, src, strlen(src), e) ||
	    util_write_file(mid, "_ka_fork_12_candidate_cu_0", 26, e))
		goto out;
	text = cudaplan_serve_text(sv->plan, sv->dir, sv->shim, SENTINEL, jail_mem_limit(NULL), e);
	if (text && util_write_file(pl, text, strlen(text), e) == 0)
		rc = 0;
out:
	free(lock);
	free(cu);
	free(keep);
	free(logs);
	free(mid);
	free(pl);
	free(text);
	return rc;
}

/* The thread: run the serving ka-cudaphases in its jail until it ends. */
static void *serve_thread(void *arg)
{
	struct servers *sv = arg;
	struct jail_opts jo;
	struct ka_err e = {{0}};
	struct util_run_result rr = {0};
	int code = -1;
	if (jail_opts_compiler(&jo, sv->nvcc, sv->dir, 0, &e) == 0 &&
	    jail_add_ro(&jo, sv->driver, &e) == 0 && jail_add_ro(&jo, sv->shim, &e) == 0) {
		char *argv[] = {sv->driver, "serve.plan", NULL};
		struct util_run_opts ro = {
			.out_cap = 1 << 16, .merge_err = 1, .jail = &jo, .stdin_fd = sv->in_fd};
		if (util_run_child(argv, &ro, &rr, &e) == 0)
			code = rr.code;
		util_run_result_free(&rr);
	}
	pthread_mutex_lock(&mu);
	close(sv->in_fd);
	sv->in_fd = -1;
	/* 3: no PID namespace here (Landlock or no jail): servers cannot work */
	sv->state = code == 3 || code == 2 || sv->starts >= MAX_STARTS ? -1 : 0;
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* At exit (of the process that started them): stop every server (a byte
 * on their stdin), wait a little for them, and remove the spools. */
static void stop_all(void)
{
	pid_t me = getpid();
	for (int i = 0; i < n_tab; i++)
		if (tab[i].owner == me && tab[i].stop_fd >= 0) {
			/* a byte: other processes may hold copies of this end */
			if (write(tab[i].stop_fd, "q", 1) != 1)
				fprintf(stderr, "ka: note: cannot stop the CUDA fork servers\n");
			close(tab[i].stop_fd);
			tab[i].stop_fd = -1;
		}
	for (int i = 0; i < n_tab; i++) {
		if (tab[i].owner != me || !tab[i].joinable)
			continue;
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 3;
		pthread_timedjoin_np(tab[i].thread, NULL, &t);
		tab[i].joinable = 0;
	}
	for (int i = 0; i < n_spools; i++)
		util_rmtree(spools[i]);
	n_spools = 0;
}

/* A fork while another thread holds mu would leave the child (a worker of
 * cudac_compile_many, which compiles) a lock nobody releases: fork waits
 * for it. Nothing here forks with mu held. */
static void before_fork(void)
{
	pthread_mutex_lock(&mu);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&mu);
}

/* Start sv's servers (called with mu held); on failure they stay off. */
static void start(struct servers *sv, const char *nvcc, const char *driver, const char *cache_dir)
{
	static int at_exit;
	struct ka_err e = {{0}};
	int pfd[2] = {-1, -1};
	if (sv->joinable)
		pthread_join(sv->thread, NULL); /* it ended: state is 0 */
	sv->joinable = 0;
	if (sv->stop_fd >= 0)
		close(sv->stop_fd);
	if (sv->lock_fd >= 0)
		close(sv->lock_fd);
	sv->stop_fd = sv->lock_fd = -1;
	snprintf(sv->nvcc, sizeof sv->nvcc, "%s", nvcc);
	snprintf(sv->driver, sizeof sv->driver, "%s", driver);
	snprintf(sv->shim, sizeof sv->shim, "%.*s/ka-forkshim.so",
		 (int)(strrchr(driver, '/') ? strrchr(driver, '/') - driver : 1), driver);
	sv->state = -1;
	sv->starts++;
	if (access(sv->shim, R_OK) != 0 || make_spool(sv, cache_dir, &e) ||
	    pipe2(pfd, O_CLOEXEC) != 0) {
		if (e.msg[0])
			fprintf(stderr, "ka: note: no CUDA fork servers: %s\n", e.msg);
		return;
	}
	sv->in_fd = pfd[0];
	sv->stop_fd = pfd[1];
	sv->owner = getpid();
	if (pthread_create(&sv->thread, NULL, serve_thread, sv) != 0) {
		close(pfd[0]);
		close(pfd[1]);
		sv->in_fd = sv->stop_fd = -1;
		return;
	}
	sv->joinable = 1;
	sv->state = 1;
	if (!at_exit++) {
		atexit(stop_all);
		pthread_atfork(before_fork, after_fork, after_fork);
	}
}

int cudafork_dir(const struct cudaplan *p, const char *nvcc, const char *driver,
		 const char *cache_dir, char *dir, size_t cap)
{
	pthread_mutex_lock(&mu);
	struct servers *sv = slot_of(p);
	int m = mode(), have = 0;
	if (sv) {
		sv->compiles++;
		if (sv->state == 0 && m && sv->compiles >= (m == 2 ? 1 : 2))
			start(sv, nvcc, driver, cache_dir);
		have = sv->state == 1 && m;
		if (have)
			snprintf(dir, cap, "%s", sv->dir);
	}
	pthread_mutex_unlock(&mu);
	return have;
}

void cudafork_start(const struct cudaplan *p, const char *nvcc, const char *driver,
		    const char *cache_dir)
{
	pthread_mutex_lock(&mu);
	struct servers *sv = slot_of(p);
	if (sv && sv->state == 0 && mode())
		start(sv, nvcc, driver, cache_dir);
	pthread_mutex_unlock(&mu);
}
