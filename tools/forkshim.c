/* forkshim.c: ka-forkshim.so, the fork server of the split CUDA compile
 * (docs/compile.md, section 7). ka-cudaphases preloads it into cicc or
 * cudafe++ (LD_PRELOAD) and runs that tool on a file holding only the
 * preprocessed prefix every candidate shares (the force-included
 * cuda_runtime.h). Both tools read their input with fopen and getc, one
 * byte at a time; the shim counts the bytes read from the file named by
 * KA_FORK_INPUT, and when the tool asks for the byte after the prefix (the
 * end of that file) it does not return: the process, which has parsed the
 * headers, becomes a server on the Unix socket KA_FORK_SOCK. For each
 * request (forkshim.h) whose input starts with the same prefix it forks a
 * child which takes the request's working folder, log and limits, puts the
 * candidate's input (positioned after the prefix) under the tool's input
 * descriptor and returns from getc: the child goes on exactly as a fresh run
 * of the tool on the candidate's input would from that byte, and writes its
 * outputs into the candidate's folder.
 *
 * The server refuses to start (the tool then just finishes its run on the
 * prefix file) when anything about the process would make a child differ
 * from a fresh run: the tool read the input by another function (fread,
 * fseek, read, mmap, ...), stdio holds bytes it has not handed out, another
 * thread exists, a file other than stdin, stdout, stderr and the input is
 * open, or the tool has written anything to stdout or stderr. It refuses a
 * request whose program file is not the one it runs (a toolkit update),
 * whose input differs in the prefix, or whose memory cap is below the
 * server's own peak address space (a fresh run under that cap could have
 * failed in the headers). It notes each request on its stderr (the serving
 * step's log): "served", or "refused: " and why. Without KA_FORK_INPUT the
 * shim changes nothing.
 *
 * The early stub (forkshim.h, KA_FORK_STUB): when the tool removes its
 * front end's temporary file (cicc's "*.lgenfe.bc", after it wrote the
 * host stub and before NVVM), the shim flushes the stub's stream and
 * creates the stub's ".ready" file. That only lets ka-cudaphases start the
 * host compile sooner: it keeps the stub's bytes of that moment and the
 * early run stands only if cicc ends well with exactly those bytes.
 *
 * Trusted code; it never sees the candidate's bytes but to compare the
 * prefix. Built without sanitizers (it lives inside NVIDIA's binaries). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkshim.h"
#include "lockdown.h"

#define MAX_CHILDREN 16
#define IO_IN_BACKUP 0x100 /* glibc's _IO_IN_BACKUP: ungetc's pushback in use */

/* ---- the real functions ---- */

static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static int (*real_getc)(FILE *);
static int (*real_io_getc)(FILE *);
static int (*real_fgetc)(FILE *);
static int (*real_ungetc)(int, FILE *);

int _IO_getc(FILE *f); /* glibc's old name of getc, which cicc still calls */

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* ---- what the tool did with its input ---- */

static FILE *in;	 /* the input stream, once opened */
static long pos;	 /* bytes the tool has taken from it */
static long end;	 /* its size when opened: the prefix's length */
static int unsafe;	 /* read some other way: never serve */
static int served;	 /* the server started (or refused to): hook done */
static const char *sock; /* KA_FORK_SOCK */

static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dprintf(2, "ka-forkshim: ");
	vdprintf(2, fmt, ap);
	dprintf(2, "\n");
	va_end(ap);
}

static FILE *stub;	/* KA_FORK_STUB's stream, once opened */
static int stub_marked; /* its .ready is made */

static FILE *watch(FILE *f, const char *path)
{
	const char *want = getenv(FORKSHIM_ENV_INPUT);
	const char *stub_name = getenv(FORKSHIM_ENV_STUB);
	if (f && !stub && stub_name && !strcmp(path, stub_name))
		stub = f;
	struct stat st;
	if (f && !in && want && !strcmp(path, want) && fstat(fileno(f), &st) == 0 &&
	    st.st_size > 0) {
		in = f;
		pos = 0;
		end = (long)st.st_size;
		sock = getenv(FORKSHIM_ENV_SOCK);
	}
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	if (!real_fopen)
		real_fopen = next("fopen");
	return watch(real_fopen(path, mode), path);
}

FILE *fopen64(const char *path, const char *mode)
{
	if (!real_fopen64)
		real_fopen64 = next("fopen64");
	return watch(real_fopen64(path, mode), path);
}

/* ---- the early stub ---- */

/* The tool removes path: after cicc's front end, its ".lgenfe.bc". */
static void removing(const char *path)
{
	const char *suffix = ".lgenfe.bc";
	size_t n = strlen(path), sl = strlen(suffix);
	if (!stub || stub_marked || n < sl || strcmp(path + n - sl, suffix))
		return;
	stub_marked = 1;
	if (fflush(stub) != 0)
		return;
	char ready[4096];
	snprintf(ready, sizeof ready, "%s%s", getenv(FORKSHIM_ENV_STUB), FORKSHIM_READY_SUFFIX);
	int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

int remove(const char *path)
{
	static int (*real)(const char *);
	if (!real)
		real = next("remove");
	removing(path);
	return real(path);
}

int unlink(const char *path)
{
	static int (*real)(const char *);
	if (!real)
		real = next("unlink");
	removing(path);
	return real(path);
}

/* Any other way of reading or moving in the input before the server
 * started: the byte count no longer says where the tool is. */
static void other_read(const FILE *f, int fd)
{
	if (in && !served && (f == in || (fd >= 0 && fd == fileno(in))))
		unsafe = 1;
}

size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
	static size_t (*real)(void *, size_t, size_t, FILE *);
	if (!real)
		real = next("fread");
	other_read(f, -1);
	return real(buf, size, n, f);
}

char *fgets(char *s, int n, FILE *f)
{
	static char *(*real)(char *, int, FILE *);
	if (!real)
		real = next("fgets");
	other_read(f, -1);
	return real(s, n, f);
}

ssize_t getdelim(char **line, size_t *n, int delim, FILE *f)
{
	static ssize_t (*real)(char **, size_t *, int, FILE *);
	if (!real)
		real = next("getdelim");
	other_read(f, -1);
	return real(line, n, delim, f);
}

ssize_t getline(char **line, size_t *n, FILE *f)
{
	return getdelim(line, n, '\n', f);
}

int fseek(FILE *f, long off, int whence)
{
	static int (*real)(FILE *, long, int);
	if (!real)
		real = next("fseek");
	other_read(f, -1);
	return real(f, off, whence);
}

int fseeko(FILE *f, off_t off, int whence)
{
	static int (*real)(FILE *, off_t, int);
	if (!real)
		real = next("fseeko");
	other_read(f, -1);
	return real(f, off, whence);
}

void rewind(FILE *f)
{
	static void (*real)(FILE *);
	if (!real)
		real = next("rewind");
	other_read(f, -1);
	real(f);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	if (!real)
		real = next("read");
	other_read(NULL, fd);
	return real(fd, buf, n);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		real = next("mmap");
	other_read(NULL, fd);
	return real(addr, len, prot, flags, fd, off);
}

/* ---- the checks at the end of the prefix ---- */

/* The value of "key:" in /proc/self/status, in its unit (kB for sizes);
 * -1 when it cannot be read. */
static long proc_status(const char *key)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	size_t kl = strlen(key);
	for (const char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ':')
			return strtol(l + kl + 1, NULL, 10);
	return -1;
}

/* -1 when the only open descriptors are 0, 1, 2 and the input's, else
 * one that is not (-2: /proc cannot be read). */
static int other_open_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -2;
	int other = -1;
	for (struct dirent *de; other == -1 && (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		if (fd > 2 && fd != fileno(in) && fd != dirfd(d))
			other = fd;
	}
	closedir(d);
	return other;
}

/* 1 when descriptor fd is an empty regular file (the step's log). */
static int empty_log(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* NULL when the process may serve, else why not. */
static const char *why_not_serve(void)
{
	struct stat st;
	if (unsafe)
		return "the tool read its input other than by getc";
	if (fstat(fileno(in), &st) != 0 || st.st_size != pos || ftell(in) != pos)
		return "the input position is not the end of the prefix file";
	if (in->_IO_read_ptr != in->_IO_read_end || (in->_flags & IO_IN_BACKUP) || feof(in) ||
	    ferror(in))
		return "stdio holds bytes of the input, or saw its end";
	if (proc_status("Threads") != 1)
		return "not the only thread (or no /proc)";
	int fd = other_open_fd();
	if (fd != -1) {
		static char why[4200];
		char link[32], target[4096] = "?";
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		target[n > 0 ? n : 1] = 0;
		snprintf(why, sizeof why, "descriptor %d (%s) is open besides the input", fd,
			 target);
		return why;
	}
	fflush(stdout);
	fflush(stderr);
	if (!empty_log(1) || !empty_log(2))
		return "the tool wrote output while reading the prefix";
	return NULL;
}

/* ---- the server ---- */

struct server {
	int lfd, sfd;	   /* listening socket, SIGCHLD signalfd */
	sigset_t old_mask; /* the tool's signal mask */
	char *prefix;	   /* the prefix bytes */
	char *scratch;	   /* a request's first bytes */
	long n;		   /* prefix length */
	uint64_t peak;	   /* peak address space, bytes */
	struct stat exe;   /* the program file */
	pid_t pid[MAX_CHILDREN];
	int conn[MAX_CHILDREN]; /* -1: the client left */
};

/* One request's descriptors. */
struct req_fds {
	int dir, input, log;
};

static void reply(int conn, int kind, int why, int status, const struct rusage *ru)
{
	struct forkshim_rep r = {.magic = FORKSHIM_MAGIC, .kind = kind, .why = why};
	if (ru) {
		r.status = status;
		r.cpu_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 +
			   (uint64_t)ru->ru_utime.tv_usec +
			   (uint64_t)ru->ru_stime.tv_sec * 1000000 + (uint64_t)ru->ru_stime.tv_usec;
		r.rss_kb = (uint64_t)ru->ru_maxrss;
	}
	if (send(conn, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r)
		note("reply: %s", strerror(errno));
}

/* Read a request and its three descriptors from conn; 0, or -1. */
static int read_request(int conn, struct forkshim_req *rq, struct req_fds *fds)
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {rq, sizeof *rq};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof cbuf};
	struct timeval tv = {2, 0};
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t got = recvmsg(conn, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	int fd[3] = {-1, -1, -1};
	memcpy(fd, CMSG_DATA(c), (nfd < 3 ? nfd : 3) * sizeof(int));
	fds->dir = fd[0];
	fds->input = fd[1];
	fds->log = fd[2];
	if (got != (ssize_t)sizeof *rq || nfd != 3 || rq->magic != FORKSHIM_MAGIC ||
	    rq->version != FORKSHIM_VERSION)
		return -1;
	return 0;
}

static void close_fds(const struct req_fds *f)
{
	if (f->dir >= 0)
		close(f->dir);
	if (f->input >= 0)
		close(f->input);
	if (f->log >= 0)
		close(f->log);
}

/* 0 when the request may be served, else its enum forkshim_why. */
static int check_request(const struct server *s, const struct forkshim_req *rq,
			 const struct req_fds *f)
{
	if (rq->exe_dev != (uint64_t)s->exe.st_dev || rq->exe_ino != (uint64_t)s->exe.st_ino ||
	    rq->exe_size != (uint64_t)s->exe.st_size ||
	    rq->exe_mtime_s != (int64_t)s->exe.st_mtim.tv_sec ||
	    rq->exe_mtime_ns != (int64_t)s->exe.st_mtim.tv_nsec)
		return FORKSHIM_OTHER_PROGRAM;
	if (rq->as_cap < s->peak)
		return FORKSHIM_MEMORY;
	for (long done = 0; done < s->n;) {
		ssize_t r = pread(f->input, s->scratch + done, (size_t)(s->n - done), done);
		if (r <= 0)
			return FORKSHIM_PREFIX;
		done += r;
	}
	return memcmp(s->scratch, s->prefix, (size_t)s->n) ? FORKSHIM_PREFIX : 0;
}

/* Set limit res to the request's values, or to this process's hard limit
 * where a value is above it (it cannot be raised: the child may then fail
 * where the plain step would not, and the client runs the step itself). */
static int set_limit(int res, uint64_t cur, uint64_t max)
{
	struct rlimit now;
	if (getrlimit(res, &now) != 0)
		return -1;
	if (max > (uint64_t)now.rlim_max)
		max = now.rlim_max;
	struct rlimit rl = {(rlim_t)(cur < max ? cur : max), (rlim_t)max};
	return setrlimit(res, &rl);
}

/* In the child: leave the server, take the request's folder, log, limits
 * and input. Returns when the tool may go on; exits on any failure (the
 * client then runs the step itself). */
static void become_child(struct server *s, const struct forkshim_req *rq, const struct req_fds *f,
			 int conn)
{
	close(s->lfd);
	close(s->sfd);
	close(conn);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (s->pid[i] > 0 && s->conn[i] >= 0)
			close(s->conn[i]);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	if (set_limit(RLIMIT_AS, rq->as_cap, rq->as_cap) ||
	    set_limit(RLIMIT_CPU, rq->cpu_cur, rq->cpu_max) ||
	    set_limit(RLIMIT_FSIZE, rq->fsize_cur, rq->fsize_max) || fchdir(f->dir) != 0 ||
	    lseek(f->input, s->n, SEEK_SET) != s->n || dup2(f->input, fileno(in)) < 0 ||
	    dup2(f->log, 1) < 0 || dup2(f->log, 2) < 0)
		_exit(127);
	close_fds(f);
	free(s->prefix);
	free(s->scratch);
	/* The child writes only into its candidate's folder (read-only: the
	 * rest of the server's jail, its spool included) and reaches no other
	 * process (no ptrace, no signals to others, no sockets, no exec):
	 * children of one server never touch each other or the server. Without
	 * Landlock in the kernel the jail's namespaces still hold. */
	static const char *const ro[] = {"/", NULL}, *const rw[] = {".", NULL};
	static const char *const dev[] = {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
					  NULL};
	lockdown_landlock(ro, rw, dev);
	if (lockdown_seccomp() != 0)
		_exit(127);
}

static const char *why_name(int why)
{
	static const char *const names[] = {
		"",	      "bad request", "other program", "prefix differs",
		"memory cap", "busy",	     "fork failed"};
	return why > 0 && why <= FORKSHIM_FORK ? names[why] : "?";
}

/* A free child slot, or -1. */
static int free_slot(const struct server *s)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (s->pid[i] <= 0)
			return i;
	return -1;
}

/* Accept one connection and serve its request. Returns 1 in a child (which
 * must go back to the tool), else 0. */
static int accept_one(struct server *s)
{
	int conn = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return 0;
	struct forkshim_req rq = {0};
	struct req_fds f = {-1, -1, -1};
	int why = read_request(conn, &rq, &f) ? FORKSHIM_BAD_REQUEST : check_request(s, &rq, &f);
	int slot = why ? -1 : free_slot(s);
	if (!why && slot < 0)
		why = FORKSHIM_BUSY;
	pid_t pid = why ? -1 : fork();
	if (pid == 0) {
		become_child(s, &rq, &f, conn);
		return 1;
	}
	close_fds(&f);
	if (pid < 0) {
		why = why ? why : FORKSHIM_FORK;
		note("refused: %s", why_name(why));
		reply(conn, FORKSHIM_REFUSED, why, 0, NULL);
		close(conn);
		return 0;
	}
	note("served");
	s->pid[slot] = pid;
	s->conn[slot] = conn;
	return 0;
}

/* Reap ended children and answer their clients. */
static void reap(struct server *s)
{
	struct signalfd_siginfo si;
	while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	int st;
	struct rusage ru;
	pid_t pid;
	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0)
		for (int i = 0; i < MAX_CHILDREN; i++) {
			if (s->pid[i] != pid)
				continue;
			if (s->conn[i] >= 0) {
				reply(s->conn[i], FORKSHIM_DONE, 0, st, &ru);
				close(s->conn[i]);
			}
			s->pid[i] = 0;
		}
}

/* A client left (or wrote out of turn) while its child runs: kill it. */
static void client_gone(struct server *s, int i)
{
	kill(-s->pid[i], SIGKILL);
	kill(s->pid[i], SIGKILL);
	close(s->conn[i]);
	s->conn[i] = -1;
}

/* Serve until the process is killed; returns only in a child. */
static void serve_loop(struct server *s)
{
	for (;;) {
		struct pollfd pf[2 + MAX_CHILDREN];
		int who[2 + MAX_CHILDREN], n = 0;
		pf[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
		who[n++] = -1;
		pf[n] = (struct pollfd){.fd = s->sfd, .events = POLLIN};
		who[n++] = -2;
		for (int i = 0; i < MAX_CHILDREN; i++)
			if (s->pid[i] > 0 && s->conn[i] >= 0) {
				pf[n] = (struct pollfd){.fd = s->conn[i], .events = POLLIN};
				who[n++] = i;
			}
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			note("poll: %s", strerror(errno));
			_exit(3);
		}
		if (pf[1].revents)
			reap(s);
		for (int k = 2; k < n; k++)
			if (pf[k].revents && s->pid[who[k]] > 0 && s->conn[who[k]] >= 0)
				client_gone(s, who[k]);
		if (pf[0].revents && accept_one(s))
			return;
	}
}

/* Listen on name in the working folder: bound under a temporary name and
 * renamed, so that a client never finds a socket nobody listens on. */
static int listen_on(const char *name)
{
	char tmp[108];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (snprintf(tmp, sizeof tmp, "%s.new", name) >= (int)sizeof a.sun_path)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memcpy(a.sun_path, tmp, strlen(tmp) + 1);
	unlink(tmp);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
	    rename(tmp, name) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Set up the server; 0, or -1 with the reason noted. */
static int server_init(struct server *s)
{
	memset(s, 0, sizeof *s);
	s->n = pos;
	long peak_kb = proc_status("VmPeak");
	s->prefix = malloc((size_t)s->n);
	s->scratch = malloc((size_t)s->n);
	if (peak_kb <= 0 || !s->prefix || !s->scratch || stat("/proc/self/exe", &s->exe) != 0) {
		note("no memory, or no /proc/self");
		return -1;
	}
	s->peak = (uint64_t)peak_kb * 1024;
	for (long done = 0; done < s->n;) {
		ssize_t r = pread(fileno(in), s->prefix + done, (size_t)(s->n - done), done);
		if (r <= 0) {
			note("cannot read the prefix back");
			return -1;
		}
		done += r;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &s->old_mask);
	s->sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	s->lfd = sock ? listen_on(sock) : -1;
	if (s->sfd < 0 || s->lfd < 0) {
		note("cannot listen on %s: %s", sock ? sock : "(no KA_FORK_SOCK)", strerror(errno));
		return -1;
	}
	return 0;
}

/* Called before every byte the tool takes from a stream. */
static void at_byte(FILE *f)
{
	if (f != in || served || pos < end)
		return;
	served = 1;
	const char *why = why_not_serve();
	if (why) {
		note("no fork server: %s", why);
		return;
	}
	static struct server s;
	if (server_init(&s) != 0)
		return;
	serve_loop(&s);
	/* a child: the tool goes on with the candidate's bytes */
}

/* Count a byte taken (c not EOF). */
static int took(FILE *f, int c)
{
	if (f == in && c != EOF && !served)
		pos++;
	return c;
}

int getc(FILE *f)
{
	if (!real_getc)
		real_getc = next("getc");
	at_byte(f);
	return took(f, real_getc(f));
}

int _IO_getc(FILE *f)
{
	if (!real_io_getc)
		real_io_getc = next("_IO_getc");
	at_byte(f);
	return took(f, real_io_getc(f));
}

int fgetc(FILE *f)
{
	if (!real_fgetc)
		real_fgetc = next("fgetc");
	at_byte(f);
	return took(f, real_fgetc(f));
}

int ungetc(int c, FILE *f)
{
	if (!real_ungetc)
		real_ungetc = next("ungetc");
	int r = real_ungetc(c, f);
	if (f == in && r != EOF && !served)
		pos--;
	return r;
}
