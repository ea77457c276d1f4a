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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
}

const char *util_data_root(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, data_root_init);
	return data_root;
}

int util_run(char *const argv[], const char *cwd, double timeout_s, size_t cap, char **out,
	     size_t *out_len, int *truncated, struct ka_err *e)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return ka_err_set(e, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return ka_err_set(e, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		if (cwd && chdir(cwd) != 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	size_t size = 0, alloc = 4096;
	char *buf = xmalloc(alloc);
	int trunc = 0, timed_out = 0;
	double deadline = timeout_s > 0 ? util_now() + timeout_s : 0;
	for (;;) {
		int wait_ms = -1;
		if (deadline > 0) {
			double left = deadline - util_now();
			if (left <= 0) {
				timed_out = 1;
				kill(-pid, SIGKILL);
				break;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		int r = poll(&p, 1, wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		char chunk[65536];
		ssize_t n = read(pfd[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t keep = (size_t)n;
		if (size + keep > cap) {
			keep = cap > size ? cap - size : 0;
			trunc = 1;
		}
		if (size + keep + 1 > alloc) {
			while (size + keep + 1 > alloc)
				alloc *= 2;
			buf = xrealloc(buf, alloc);
		}
		memcpy(buf + size, chunk, keep);
		size += keep;
	}
	close(pfd[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL); /* anything the child left behind */
	buf[size] = 0;
	*out = buf;
	if (out_len)
		*out_len = size;
	if (truncated)
		*truncated = trunc;
	if (timed_out)
		return 124;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
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

void util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		b->s = xrealloc(b->s, cap);
		b->cap = cap;
	}
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void util_buf_printf(struct util_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	util_buf_vprintf(b, fmt, ap);
	va_end(ap);
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
