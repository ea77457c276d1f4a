/* util.c: see util.h. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail.h"

int ka_err_set(struct ka_err *e, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static void oom(void)
{
	fputs("ka: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

/* The mapping starts with one page that holds its length. */
#define UNFORKED_HEAD 4096

void *util_alloc_unforked(size_t n)
{
	size_t len = UNFORKED_HEAD + (n ? n : 1);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		oom();
	madvise(m, len, MADV_DONTFORK); /* best effort: else just inherited */
	*(size_t *)m = len;
	return (char *)m + UNFORKED_HEAD;
}

void util_free_unforked(void *p)
{
	if (!p)
		return;
	void *m = (char *)p - UNFORKED_HEAD;
	munmap(m, *(size_t *)m);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		oom();
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return s;
}

int util_read_file(const char *path, size_t cap, char **out, size_t *len, struct ka_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ka_err_set(e, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ka_err_set(e, "%s: not a regular file", path);
	}
	if ((size_t)st.st_size > cap) {
		close(fd);
		return ka_err_set(e, "%s: file is %lld bytes, over the cap of %zu", path,
				  (long long)st.st_size, cap);
	}
	size_t n = (size_t)st.st_size, got = 0;
	char *buf = xmalloc(n + 1);
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

int util_write_file(const char *path, const void *data, size_t len, struct ka_err *e)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ka_err_set(e, "%s: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	const char *p = data;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ka_err_set(e, "%s: %s", path, strerror(errno));
			close(fd);
			unlink(tmp);
			free(tmp);
			return -1;
		}
		done += (size_t)w;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		ka_err_set(e, "%s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int util_mkdirs(const char *path, struct ka_err *e)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return ka_err_set(e, "%s: path too long", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return ka_err_set(e, "%s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return ka_err_set(e, "%s: %s", buf, strerror(errno));
	return 0;
}

void util_rmtree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, de->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			util_rmtree(sub);
		else
			unlink(sub);
		free(sub);
	}
	closedir(d);
	rmdir(path);
}

int util_write_fd(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

uint64_t util_tree_bytes(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	uint64_t n = (uint64_t)st.st_blocks * 512;
	DIR *d = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, de->d_name);
		n += util_tree_bytes(sub);
		free(sub);
	}
	if (d)
		closedir(d);
	return n;
}

uint64_t util_mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

uint64_t util_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ util_mix64(seed);
	size_t i = 0;
	/* 8 bytes at a time for speed on large buffers, then the tail. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return util_mix64(h ^ len);
}

double util_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void util_background_priority(int inc)
{
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), inc);
}

/* The stop signals a run's helpers never see (util_child_detach_signals). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int util_code_outside_death(int code)
{
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
		if (code == 128 + stop_signals[i])
			return 1;
	return code == 128 + SIGKILL;
}

void util_child_detach_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigset_t block;
	sigemptyset(&block);
	setpgid(0, 0);
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) {
		sigaction(stop_signals[i], &sa, NULL);
		sigaddset(&block, stop_signals[i]);
	}
	/* Blocked as well: a library that installs its own handlers after
	 * exec (LLVM's, in PoCL and in compilers) would otherwise get them. */
	sigprocmask(SIG_BLOCK, &block, NULL);
}

void util_iso_now(char *buf, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

uint64_t util_random64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
		/* getrandom cannot fail for 8 bytes once the pool is ready; fall
		 * back to time and pid rather than return a constant. */
		v = util_mix64((uint64_t)util_now() * 1000000007ULL ^ (uint64_t)getpid());
	}
	return v;
}

/* Both computed once (pthread_once: compile threads may ask first). */
static char exe_dir[PATH_MAX], data_root[PATH_MAX];

static void exe_dir_init(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0) {
		strcpy(exe_dir, ".");
	} else {
		buf[n] = 0;
		snprintf(exe_dir, sizeof exe_dir, "%s", dirname(buf));
	}
}

const char *util_exe_dir(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, exe_dir_init);
	return exe_dir;
}

static void data_root_init(void)
{
	const char *env = getenv("KA_HOME");
	if (env && *env) {
		snprintf(data_root, sizeof data_root, "%s", env);
	} else {
		char buf[PATH_MAX];
		snprintf(buf, sizeof buf, "%s", util_exe_dir());
		snprintf(data_root, sizeof data_root, "%s", dirname(buf));
	}
	/* Absolute: compilers run jailed in their own work folder, where a
	 * relative -I would point nowhere. */
	char real[PATH_MAX];
	if (realpath(data_root, real))
		snprintf(data_root, sizeof data_root, "%s", real);
}

const char *util_data_root(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, data_root_init);
	return data_root;
}

/* One output stream of a child: its pipe and its capped capture. */
struct run_stream {
	int fd; /* -1 once closed */
	struct util_buf *b;
};

/* Read what is there into the capture; at end of file close the pipe. */
static void run_stream_read(struct run_stream *st)
{
	char chunk[65536];
	ssize_t n = read(st->fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(st->fd);
		st->fd = -1;
		return;
	}
	util_buf_add(st->b, chunk, (size_t)n); /* over the cap: b->over says so */
}

/* The environment of the child: ours plus env_add, built before fork (the
 * child may only make async-signal-safe calls: other threads may hold
 * malloc's lock). NULL when nothing is added. */
static char **run_env(char *const *env_add)
{
	extern char **environ;
	if (!env_add || !env_add[0])
		return NULL;
	size_t nenv = 0, nadd = 0;
	while (environ[nenv])
		nenv++;
	while (env_add[nadd])
		nadd++;
	char **envp = xcalloc(nenv + nadd + 1, sizeof *envp);
	memcpy(envp, environ, nenv * sizeof *envp);
	memcpy(envp + nenv, env_add, nadd * sizeof *envp);
	return envp;
}

char **util_env_keep(const char *const *prefixes)
{
	extern char **environ;
	size_t n = 0, k = 0;
	for (char **v = environ; v && *v; v++)
		n++;
	char **env = xcalloc(n + 1, sizeof *env);
	for (char **v = environ; v && *v; v++)
		for (int i = 0; prefixes[i]; i++)
			if (!strncmp(*v, prefixes[i], strlen(prefixes[i]))) {
				env[k++] = *v;
				break;
			}
	env[k] = NULL;
	return env;
}

/* In the child, between fork and exec: async-signal-safe calls only, except
 * for the jail (glibc makes malloc usable in a forked child). A jail failure
 * or an exec failure of a jailed program is written to jail_fd, which the
 * parent reads as its own error. */
static void run_child_exec(char *const argv[], const struct util_run_opts *o, char **envp,
			   pid_t parent, int out_fd, int err_fd, int jail_fd)
{
	/* die with ka (a compiler must not outlive it); the parent may have
	 * died before prctl took effect */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	util_child_detach_signals();
	int in = o->stdin_fd > 0 ? o->stdin_fd : open("/dev/null", O_RDONLY);
	if (in >= 0)
		dup2(in, 0);
	dup2(out_fd, 1);
	dup2(err_fd, 2);
	if (o->cwd && chdir(o->cwd) != 0) {
		dprintf(o->jail ? jail_fd : 2, "cannot enter %s: %s\n", o->cwd, strerror(errno));
		_exit(127);
	}
	if (o->jail) {
		struct ka_err je = {{0}};
		struct jail_opts jo = *o->jail;
		jo.env_add = o->env_add;
		if (jail_enter(&jo, &je)) {
			dprintf(jail_fd, "%s", je.msg);
			_exit(127);
		}
		execvp(argv[0], argv);
		dprintf(jail_fd, "jail: cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	if (o->env)
		execvpe(argv[0], argv, o->env);
	else if (envp)
		execvpe(argv[0], argv, envp);
	else
		execvp(argv[0], argv);
	dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Wait at most ms (-1: no limit) for the child pid to exit, its streams
 * closed already: on a pidfd (*pidfd -2: not opened yet; -1: none to be
 * had, as under lockdown's filter), else a 2 ms nap. Polling with naps
 * cost every recorder run and compile up to 2 ms after the child's exit. */
static void run_wait_exit(pid_t pid, int *pidfd, int ms)
{
	if (*pidfd == -2)
		*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (*pidfd >= 0) {
		struct pollfd pf = {.fd = *pidfd, .events = POLLIN};
		poll(&pf, 1, ms);
		return;
	}
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
}

/* Read both streams until they close and the child has exited, under the
 * deadline (0: none). Returns 1 when the child was reaped into *status. */
static int run_wait_streams(pid_t pid, struct run_stream *st, const struct util_run_opts *o,
			    double deadline, int *status, int *timed_out, int *pidfd)
{
	for (;;) {
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - util_now();
			if (left <= 0) {
				*timed_out = 1;
				return 0;
			}
			ms = (int)(left * 1000) + 1;
		}
		struct pollfd pf[2];
		struct run_stream *which[2];
		nfds_t n = 0;
		for (int i = 0; i < 2; i++) {
			if (st[i].fd < 0)
				continue;
			pf[n] = (struct pollfd){.fd = st[i].fd, .events = POLLIN};
			which[n++] = &st[i];
		}
		if (n == 0) {
			/* both streams closed: the child is exiting, or it
			 * closed them and keeps running */
			if (waitpid(pid, status, WNOHANG) == pid)
				return 1;
			run_wait_exit(pid, pidfd, ms);
			continue;
		}
		int r = poll(pf, n, ms);
		if (r < 0 && errno != EINTR)
			return 0;
		for (nfds_t i = 0; r > 0 && i < n; i++)
			if (pf[i].revents)
				run_stream_read(which[i]);
		if (o->kill_at_cap && st[0].b->over)
			return 0;
	}
}

/* run_wait_streams with the pidfd it may open closed after. */
static int run_wait(pid_t pid, struct run_stream *st, const struct util_run_opts *o,
		    double deadline, int *status, int *timed_out)
{
	int pidfd = -2;
	int r = run_wait_streams(pid, st, o, deadline, status, timed_out, &pidfd);
	if (pidfd >= 0)
		close(pidfd);
	return r;
}

int util_which(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	for (const char *p = path && *path ? path : "/usr/bin:/bin"; *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n && snprintf(out, cap, "%.*s/%s", (int)n, p, name) < (int)cap &&
		    access(out, X_OK) == 0)
			return 0;
		p += n + (c ? 1 : 0);
	}
	return -1;
}

int util_run_child(char *const argv[], const struct util_run_opts *o, struct util_run_result *r,
		   struct ka_err *e)
{
	memset(r, 0, sizeof *r);
	util_buf_init_cap(&r->out, o->out_cap);
	util_buf_init_cap(&r->err, o->merge_err ? 0 : o->err_cap);
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, pj[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) != 0 || (!o->merge_err && pipe2(pe, O_CLOEXEC) != 0) ||
	    (o->jail && pipe2(pj, O_CLOEXEC | O_NONBLOCK) != 0)) {
		ka_err_set(e, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* A jailed child searches the jail's PATH, which may not hold the
	 * program: find it on ours now (the jail binds its toolchain). */
	char found[PATH_MAX];
	char *const *av = argv;
	char **jargv = NULL;
	if (o->jail && !strchr(argv[0], '/') && util_which(argv[0], found, sizeof found) == 0) {
		size_t n = 0;
		while (argv[n])
			n++;
		jargv = xmalloc((n + 1) * sizeof *jargv);
		memcpy(jargv, argv, (n + 1) * sizeof *jargv);
		jargv[0] = found;
		av = jargv;
	}
	char **envp = o->env ? NULL : run_env(o->env_add);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		ka_err_set(e, "fork: %s", strerror(errno));
		free(envp);
		goto fail;
	}
	if (pid == 0)
		run_child_exec(av, o, envp, parent, po[1], o->merge_err ? po[1] : pe[1], pj[1]);
	setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
	free(envp);
	free(jargv);
	close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	if (pj[1] >= 0)
		close(pj[1]);
	pj[1] = -1;
	struct run_stream st[2] = {{po[0], &r->out}, {pe[0], &r->err}};
	double deadline = o->timeout_s > 0 ? util_now() + o->timeout_s : 0;
	int status = 0;
	int exited = run_wait(pid, st, o, deadline, &status, &r->timed_out);
	if (!exited) {
		r->killed_by_ka = 1;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	kill(-pid, SIGKILL); /* anything the child left behind in its group */
	/* whatever is still buffered in the pipes */
	for (int got = 1; got;) {
		got = 0;
		for (int i = 0; i < 2; i++) {
			struct pollfd pf = {.fd = st[i].fd, .events = POLLIN};
			if (st[i].fd >= 0 && poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN)) {
				run_stream_read(&st[i]);
				got = 1;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (st[i].fd >= 0)
			close(st[i].fd);
	util_buf_add(&r->out, "", 0); /* NUL-terminated even when empty */
	util_buf_add(&r->err, "", 0);
	r->wait_status = status;
	r->out_truncated = r->out.over;
	r->err_truncated = r->err.over;
	r->code = r->timed_out		? 124
		  : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					: WEXITSTATUS(status);
	if (pj[0] >= 0) {
		/* the child is reaped: whatever the jail reported is there */
		char msg[KA_ERRLEN];
		ssize_t n = read(pj[0], msg, sizeof msg - 1);
		close(pj[0]);
		pj[0] = -1;
		if (n > 0) {
			msg[n] = 0;
			ka_err_set(e, "%s: %s", argv[0], msg);
			util_run_result_free(r);
			return -1;
		}
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
		if (pj[i] >= 0)
			close(pj[i]);
	}
	util_run_result_free(r);
	return -1;
}

int util_run_killed_outside(const struct util_run_result *r)
{
	return !r->killed_by_ka && WIFSIGNALED(r->wait_status) &&
	       WTERMSIG(r->wait_status) == SIGKILL;
}

void util_run_result_free(struct util_run_result *r)
{
	if (!r)
		return;
	util_buf_free(&r->out);
	util_buf_free(&r->err);
}

int util_run(char *const argv[], const char *cwd, double timeout_s, size_t cap, char **out,
	     size_t *out_len, int *truncated, struct ka_err *e)
{
	struct util_run_opts o = {
		.cwd = cwd, .timeout_s = timeout_s, .out_cap = cap, .merge_err = 1};
	struct util_run_result r;
	if (util_run_child(argv, &o, &r, e))
		return -1;
	if (out_len)
		*out_len = r.out.len;
	if (truncated)
		*truncated = r.out_truncated;
	*out = util_buf_take(&r.out);
	util_run_result_free(&r);
	return r.code;
}

void util_hex(const void *data, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = 0;
}

void util_buf_init(struct util_buf *b)
{
	memset(b, 0, sizeof *b);
}

void util_buf_init_cap(struct util_buf *b, size_t max)
{
	memset(b, 0, sizeof *b);
	b->max = max;
	b->max_set = 1;
}

static size_t buf_max(const struct util_buf *b)
{
	return b->max_set ? b->max : UTIL_BUF_DEFAULT_CAP;
}

int util_buf_add(struct util_buf *b, const void *p, size_t n)
{
	size_t max = buf_max(b), keep = n;
	if (b->over)
		keep = 0;
	else if (keep > max - b->len) {
		keep = max - b->len;
		b->over = 1;
	}
	/* room for keep bytes and the NUL, doubling but never past max + 1 */
	if (!b->s || b->len + keep + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + keep + 1)
			cap *= 2;
		if (cap > max + 1)
			cap = max + 1 > b->len + keep + 1 ? max + 1 : b->len + keep + 1;
		b->s = xrealloc(b->s, cap);
		b->cap = cap;
	}
	if (keep)
		memcpy(b->s + b->len, p, keep);
	b->len += keep;
	b->s[b->len] = 0;
	return b->over ? -1 : 0;
}

int util_buf_puts(struct util_buf *b, const char *s)
{
	return util_buf_add(b, s, strlen(s));
}

int util_buf_putc(struct util_buf *b, char c)
{
	return util_buf_add(b, &c, 1);
}

int util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap)
{
	char small[1024];
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof small)
		return util_buf_add(b, small, (size_t)n);
	char *big = xmalloc((size_t)n + 1);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	int rc = util_buf_add(b, big, (size_t)n);
	free(big);
	return rc;
}

int util_buf_printf(struct util_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = util_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *util_buf_take(struct util_buf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	b->over = 0;
	return s;
}

void util_buf_free(struct util_buf *b)
{
	if (!b)
		return;
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->over = 0;
}

void util_log_summary(const char *log, char *out, size_t cap)
{
	size_t used = 0;
	int lines = 0;
	out[0] = 0;
	for (int pass = 0; pass < 2 && lines == 0; pass++) {
		const char *p = log;
		while (*p && lines < 3) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			int want = len > 0 && (pass == 1 || memmem(p, len, "error:", 6));
			if (want && used + 4 < cap) {
				int w = snprintf(out + used, cap - used, "%s%.*s",
						 lines ? " | " : "", (int)len, p);
				used = w > 0 && used + (size_t)w < cap ? used + (size_t)w : cap - 1;
				lines++;
			}
			p = nl ? nl + 1 : p + len;
		}
	}
	for (char *q = out; *q; q++)
		if (*q == '\t' || *q == '\r')
			*q = ' ';
}
