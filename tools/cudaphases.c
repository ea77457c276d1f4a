/* cudaphases.c: ka-cudaphases, the step runner of the split CUDA compile
 * (docs/compile.md). The parent (src/cudasplit.c) turns nvcc's own phase
 * list (`nvcc --dryrun`) into a plan of steps with dependencies and starts
 * this program inside the compile jail (src/common/jail.c), so that every
 * phase runs under the jail's rules; this program runs the steps, each as
 * soon as the steps it depends on have succeeded, at most `jobs` at a time.
 *
 *   ka-cudaphases PLAN
 *
 * PLAN is a text file, one "key value" per line (the value is the rest of
 * the line; no value holds a newline):
 *
 *   jobs N        steps run at once (1..8)
 *   limit S       the wall-clock limit in seconds: then every running step
 *                 is killed (with its process group), and the exit status
 *                 is 124
 *   mem BYTES     the memory budget: each step runs under RLIMIT_AS =
 *                 BYTES / jobs, so the steps running together stay within
 *                 it; a step that fails in a way memory could explain (a
 *                 signal, peak memory over a quarter of its share, or an
 *                 out-of-memory message) runs again alone with all of it,
 *                 so a verdict never depends on the split
 *   env NAME=V    environment of every step
 *   step NAME     starts a step; then, for that step:
 *   dep K         it runs after step K (an earlier step) succeeded
 *   senv NAME=V   environment of this step only
 *   log PATH      its stdout and stderr (created, truncated)
 *   pchprefix P   with pchinput F: before the step runs, when file F starts
 *   pchinput F    with the bytes of file P followed by a line marker ("# "),
 *                 F is rewritten as `#include "P"` and the rest, so that the
 *                 compiler reads P from its precompiled P.gch
 *   forkdir D     with forksock and forkinput: the step may be run by the
 *   forksock S    fork server listening on socket S in folder D (a cicc or
 *   forkinput F   cudafe++ that has parsed the prefix every candidate's
 *                 input F starts with: tools/forkshim.c); when there is no
 *                 such server, it refuses, or the forked run fails, the step
 *                 runs as usual (a failure is always a plain run's)
 *   early K       with earlyfile F: the step may start before step K (one
 *   earlyfile F   of its deps, a cicc that writes F, the host code's stub)
 *                 has ended, as soon as F.ready exists (the fork shim makes
 *                 it once the tool has written all of F: tools/forkshim.c);
 *                 F's bytes at that start are kept, and when step K ends the
 *                 early run stands only if K succeeded and F still holds
 *                 exactly those bytes (then the tool wrote nothing more and
 *                 the step read what a start after K would have read); else
 *                 it is killed or its result dropped, and it runs again as
 *                 usual. Its steps after wait for that confirmation, and so
 *                 does its failure: a verdict never rests on an early run
 *                 that K's end did not confirm
 *   arg A         the next argument (argv[0] first: a path or a name on PATH)
 *
 * A serving plan (docs/compile.md, section 7) starts the fork servers: it
 * runs the phases on a sentinel source, and each step marked `serve S` (with
 * forkinput F) is started as a server: F is first cut where the sentinel's
 * text begins (at the line marker before the first occurrence of the
 * `sentinel` string), then the tool runs on it with the shim preloaded and
 * listens on socket S in its folder. Servers run with the whole memory
 * budget (each forked child takes its request's cap), and one server's end
 * stops no other. Global keys of a serving plan:
 *   shim PATH     ka-forkshim.so
 *   sentinel T    the text that starts the candidate's part of the input
 * A serving plan runs only as the init of a PID namespace (the compile
 * jail's namespaces: only there can a forked child reach a candidate's
 * folder through a descriptor; under Landlock it could not), else it exits
 * with 3. It runs until a byte or the end of file arrives on its stdin (ka
 * stops it): then it kills the servers and exits.
 *
 * Once a step fails, no step after it (in plan order) starts and the running
 * ones after it are killed; the steps before it still run, so the first
 * failing step in plan order is exactly the one a sequential run would stop
 * at. On stdout, one line per step:
 *   step K code C ms M rss KB pch P runs R cpu MS fork F at A early E
 * (C: exit status, 128 + signal, or -1 when it did not run; M: wall
 * milliseconds; KB: peak resident memory; P: 1 when the precompiled prefix
 * was used; R: runs; MS: user + system CPU milliseconds, the forked child's
 * included; F: 1 when a fork server ran it; A: its first start, milliseconds
 * after this program's; E: 1 when its result stands on an early start).
 * Exit status: 0
 * when every step succeeded, 1 when one failed, 124 past the limit, 2 for a
 * bad plan or a failure of this program. Trusted code: it runs only the
 * programs the plan names. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forkshim.h"
#include "util.h"

#define MAX_STEPS 32
#define MAX_ARGS 512
#define MAX_SENV 8
#define MAX_ENV 64
#define MAX_DEPS 8

enum state { ST_WAIT, ST_RUN, ST_DONE, ST_SKIP };

struct step {
	char *name, *log, *pch_prefix, *pch_input;
	char *fork_dir, *fork_sock, *fork_input, *serve;
	char *argv[MAX_ARGS + 1];
	int argc;
	char *senv[MAX_SENV];
	int n_senv;
	int deps[MAX_DEPS];
	int n_deps;
	enum state st;
	pid_t pid;
	int code;	  /* exit status, 128 + signal, -1 not run */
	uint64_t cap;	  /* RLIMIT_AS of its current run */
	double t0, secs;  /* start, total seconds of its runs */
	double first;	  /* its first start, seconds after the driver's */
	long rss_kb;	  /* peak resident memory of its last run */
	double cpu;	  /* user + system seconds of its runs */
	int runs, pch;	  /* times started; precompiled prefix used */
	int forked;	  /* a fork server ran it */
	int rerun, alone; /* waits for a run alone; runs alone now */
	/* early start (the plan's early/earlyfile) */
	int early_dep;	  /* the dep it may start before, or -1 */
	char *early_file; /* the file whose ".ready" allows it */
	char *snap;	  /* early_file's bytes at the early start */
	size_t snap_len;
	struct stat snap_st; /* and its inode, size and time then */
	int early_tried;     /* started early once (never twice) */
	int spec;	     /* the current run started early, not confirmed yet */
	int held;	     /* that run ended: its outcome waits for the confirmation */
	int early;	     /* the result stands on a confirmed early start */
};

struct plan {
	int jobs;
	int limit; /* seconds; 0: none */
	uint64_t mem;
	char *env[MAX_ENV];
	int n_env;
	char *shim, *sentinel; /* a serving plan's */
	int serving;	       /* it has serve steps */
	pid_t watcher;	       /* serving: the child that waits for stdin's end */
	struct step s[MAX_STEPS];
	int n;
};

/* ---- reading the plan ---- */

static int plan_line(struct plan *p, const char *key, char *val, struct ka_err *e)
{
	struct step *cur = p->n ? &p->s[p->n - 1] : NULL;
	if (!strcmp(key, "jobs")) {
		p->jobs = atoi(val);
		return p->jobs >= 1 && p->jobs <= 8 ? 0 : ka_err_set(e, "jobs: %s", val);
	}
	if (!strcmp(key, "limit")) {
		p->limit = atoi(val);
		return p->limit >= 1 ? 0 : ka_err_set(e, "limit: %s", val);
	}
	if (!strcmp(key, "mem")) {
		p->mem = strtoull(val, NULL, 10);
		return p->mem >= (16u << 20) ? 0 : ka_err_set(e, "mem: %s", val);
	}
	if (!strcmp(key, "env"))
		return p->n_env < MAX_ENV && strchr(val, '=') ? (p->env[p->n_env++] = val, 0)
							      : ka_err_set(e, "env: %s", val);
	if (!strcmp(key, "shim") || !strcmp(key, "sentinel")) {
		*(key[1] == 'h' ? &p->shim : &p->sentinel) = val;
		return 0;
	}
	if (!strcmp(key, "step")) {
		if (p->n >= MAX_STEPS)
			return ka_err_set(e, "more than %d steps", MAX_STEPS);
		p->s[p->n].early_dep = -1;
		p->s[p->n++].name = val;
		return 0;
	}
	if (!cur)
		return ka_err_set(e, "'%s' before the first step", key);
	if (!strcmp(key, "dep")) {
		int k = atoi(val);
		if (k < 0 || k >= p->n - 1 || cur->n_deps >= MAX_DEPS)
			return ka_err_set(e, "step %d: dep %s", p->n - 1, val);
		cur->deps[cur->n_deps++] = k;
		return 0;
	}
	if (!strcmp(key, "early")) {
		int k = atoi(val);
		if (k < 0 || k >= p->n - 1)
			return ka_err_set(e, "step %d: early %s", p->n - 1, val);
		cur->early_dep = k;
		return 0;
	}
	if (!strcmp(key, "senv"))
		return cur->n_senv < MAX_SENV && strchr(val, '=')
			       ? (cur->senv[cur->n_senv++] = val, 0)
			       : ka_err_set(e, "senv: %s", val);
	if (!strcmp(key, "arg"))
		return cur->argc < MAX_ARGS ? (cur->argv[cur->argc++] = val, 0)
					    : ka_err_set(e, "step %d: too many args", p->n - 1);
	char **slot = !strcmp(key, "log")	  ? &cur->log
		      : !strcmp(key, "pchprefix") ? &cur->pch_prefix
		      : !strcmp(key, "pchinput")  ? &cur->pch_input
		      : !strcmp(key, "forkdir")	  ? &cur->fork_dir
		      : !strcmp(key, "forksock")  ? &cur->fork_sock
		      : !strcmp(key, "forkinput") ? &cur->fork_input
		      : !strcmp(key, "serve")	  ? &cur->serve
		      : !strcmp(key, "earlyfile") ? &cur->early_file
						  : NULL;
	if (!slot)
		return ka_err_set(e, "unknown key '%s'", key);
	*slot = val;
	return 0;
}

/* Parse text (kept: the plan points into it). 0, or -1 with e. */
static int plan_parse(char *text, struct plan *p, struct ka_err *e)
{
	memset(p, 0, sizeof *p);
	p->jobs = 1;
	p->mem = 8ull << 30;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(l, ' ');
		if (!sp)
			return ka_err_set(e, "line without a value: %.60s", l);
		*sp = 0;
		if (plan_line(p, l, sp + 1, e))
			return -1;
	}
	for (int i = 0; i < p->n; i++) {
		const struct step *s = &p->s[i];
		if (s->argc == 0 || !s->log || (!s->pch_prefix != !s->pch_input))
			return ka_err_set(e, "step %d (%s): no arg, no log or half a pch", i,
					  s->name);
		if ((!s->fork_dir != !s->fork_sock) ||
		    ((s->fork_sock || s->serve) != !!s->fork_input))
			return ka_err_set(e, "step %d (%s): half a fork server", i, s->name);
		p->serving |= s->serve != NULL;
		int dep = 0;
		for (int d = 0; d < s->n_deps; d++)
			dep |= s->deps[d] == s->early_dep;
		if ((s->early_dep >= 0) != (s->early_file != NULL) || (s->early_dep >= 0 && !dep))
			return ka_err_set(e,
					  "step %d (%s): early needs earlyfile and one of its deps",
					  i, s->name);
	}
	if (p->serving && (!p->shim || !p->sentinel))
		return ka_err_set(e, "a serving plan without shim or sentinel");
	return p->n ? 0 : ka_err_set(e, "no step");
}

/* ---- the precompiled prefix ---- */

/* When input starts with prefix and a line marker follows, rewrite it as an
 * #include of prefix plus the rest. 1 when rewritten, 0 when not (the file
 * is left as it is), -1 with e when a file cannot be read or written. */
static int pch_rewrite(const char *prefix, const char *input, struct ka_err *e)
{
	char *pre = NULL, *in = NULL;
	size_t pl = 0, il = 0;
	int rc = -1;
	if (util_read_file(prefix, 64u << 20, &pre, &pl, e) ||
	    util_read_file(input, 512u << 20, &in, &il, e))
		goto out;
	rc = 0;
	if (pl == 0 || il < pl + 2 || memcmp(pre, in, pl) || in[pl] != '#' || in[pl + 1] != ' ')
		goto out;
	FILE *f = fopen(input, "wb");
	if (!f) {
		rc = ka_err_set(e, "%s: %s", input, strerror(errno));
		goto out;
	}
	int bad = fprintf(f, "#include \"%s\"\n", prefix) < 0 ||
		  fwrite(in + pl, 1, il - pl, f) != il - pl;
	bad |= fclose(f) != 0;
	rc = bad ? ka_err_set(e, "%s: cannot rewrite", input) : 1;
out:
	free(pre);
	free(in);
	return rc;
}

/* ---- the fork server ---- */

/* Cut file path where the candidate's part begins: before the line marker
 * ("# ") that precedes the first occurrence of sentinel. 0, or -1 with e. */
static int serve_cut(const char *path, const char *sentinel, struct ka_err *e)
{
	char *t = NULL;
	size_t n = 0;
	if (util_read_file(path, 512u << 20, &t, &n, e))
		return -1;
	const char *at = strstr(t, sentinel);
	const char *l = at;
	while (l && l > t && !(l[-1] == '\n' && l[0] == '#' && l[1] == ' '))
		l--;
	int rc = l && l > t ? util_write_file(path, t, (size_t)(l - t), e)
			    : ka_err_set(e, "%s: no line marker before '%s'", path, sentinel);
	free(t);
	return rc;
}

/* The request for step s, with the limits this process runs under and
 * the identity of the program it would run. 0, or -1 when that program is
 * not found. */
static int fork_request(const struct step *s, struct forkshim_req *rq)
{
	char found[4096];
	const char *prog = s->argv[0];
	if (!strchr(prog, '/')) {
		if (util_which(prog, found, sizeof found))
			return -1;
		prog = found;
	}
	struct stat st;
	struct rlimit cpu, fsize;
	if (stat(prog, &st) != 0 || getrlimit(RLIMIT_CPU, &cpu) || getrlimit(RLIMIT_FSIZE, &fsize))
		return -1;
	*rq = (struct forkshim_req){.magic = FORKSHIM_MAGIC,
				    .version = FORKSHIM_VERSION,
				    .as_cap = s->cap,
				    .cpu_cur = cpu.rlim_cur,
				    .cpu_max = cpu.rlim_max,
				    .fsize_cur = fsize.rlim_cur,
				    .fsize_max = fsize.rlim_max,
				    .exe_dev = st.st_dev,
				    .exe_ino = st.st_ino,
				    .exe_size = (uint64_t)st.st_size,
				    .exe_mtime_s = st.st_mtim.tv_sec,
				    .exe_mtime_ns = st.st_mtim.tv_nsec};
	return 0;
}

/* Connect to socket name in folder dir (entered and left again, so that a
 * long folder name fits: sockaddr_un holds 108 bytes); the socket, or -1. */
static int fork_connect(const char *dir, const char *name, int cwd)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(name) >= sizeof a.sun_path)
		return -1;
	memcpy(a.sun_path, name, strlen(name) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* A server whose backlog is full makes connect wait: at most 2 s. */
	struct timeval tv = {2, 0};
	int ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0 &&
		 chdir(dir) == 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fchdir(cwd) != 0)
		_exit(127);
	if (!ok && fd >= 0)
		close(fd);
	return ok ? fd : -1;
}

/* Send rq with the working folder, the input and the log (fd 1). */
static int send_request(int conn, struct forkshim_req *rq, int dir, int input)
{
	int fds[3] = {dir, input, 1};
	char cbuf[CMSG_SPACE(sizeof fds)];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {rq, sizeof *rq};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof cbuf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(c), fds, sizeof fds);
	return sendmsg(conn, &m, MSG_NOSIGNAL) == (ssize_t)sizeof *rq ? 0 : -1;
}

/* The longest wait for a fork server's answer (main sets it from the plan's
 * limit): a forked run that takes longer is killed and the step runs as
 * usual, so that a stuck server child never costs the whole limit. */
static int fork_wait_s = 30;

/* In the step's child, before exec: let the fork server run step s. Exits
 * 0 when a forked child ran it successfully (its CPU time and peak memory
 * are written to LOG.fork for the parent); returns when the step must run
 * here: no server, a refusal, or a forked run that failed. Then the log is
 * emptied and the step runs from the start, so that a failure is always a
 * plain run's (its log, its status, its memory). */
static void try_fork_server(const struct step *s)
{
	struct forkshim_req rq;
	struct forkshim_rep rep;
	if (fork_request(s, &rq))
		return;
	int dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int input = open(s->fork_input, O_RDONLY | O_CLOEXEC);
	int conn = dir >= 0 && input >= 0 ? fork_connect(s->fork_dir, s->fork_sock, dir) : -1;
	int sent = conn >= 0 && send_request(conn, &rq, dir, input) == 0;
	struct timeval tv = {fork_wait_s, 0};
	errno = 0;
	int got = sent && setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
		  recv(conn, &rep, sizeof rep, MSG_WAITALL) == (ssize_t)sizeof rep &&
		  rep.magic == FORKSHIM_MAGIC;
	if (sent && !got && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/* No answer in time (a stuck child): the server kills the child
		 * when this end shuts, then closes the connection. */
		shutdown(conn, SHUT_WR);
		tv.tv_sec = 2;
		setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		while (recv(conn, &rep, sizeof rep, 0) > 0)
			;
	}
	if (got && rep.kind == FORKSHIM_DONE && WIFEXITED(rep.status) &&
	    WEXITSTATUS(rep.status) == 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s.fork", s->log);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%llu %llu\n", (unsigned long long)rep.cpu_us,
				(unsigned long long)rep.rss_kb);
			fclose(f);
		}
		_exit(0);
	}
	if (sent && (ftruncate(1, 0) != 0 || lseek(1, 0, SEEK_SET) != 0))
		_exit(127);
	for (int i = 0, fd[3] = {dir, input, conn}; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* After step s ended: what its fork server's child used (LOG.fork). */
static void read_fork_usage(struct step *s)
{
	char path[4096];
	snprintf(path, sizeof path, "%s.fork", s->log);
	FILE *f = fopen(path, "r");
	unsigned long long cpu_us = 0, rss_kb = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu %llu", &cpu_us, &rss_kb) == 2) {
		s->forked = 1;
		s->cpu += (double)cpu_us * 1e-6;
		if ((long)rss_kb > s->rss_kb)
			s->rss_kb = (long)rss_kb;
	}
	fclose(f);
	unlink(path);
}

/* A serving plan: the child that exits when anything arrives on stdin, or
 * its end (ka writes a byte there to stop the servers: copies of the
 * writing end may live on in other processes, so the end may never come). */
static pid_t start_watcher(void)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char b;
		while (read(0, &b, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	return pid;
}

/* ---- running ---- */

static double now_s(void)
{
	return util_now();
}

static double driver_t0; /* when main started: the steps' "at" */

/* In the forked child: output to the log, no other descriptor, own process
 * group, memory cap, the step's environment (for a server: the shim
 * preloaded), its fork server when it has one, then exec. Never returns. */
static void child_exec(const struct step *s, const char *shim)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	/* nothing else of ka's reaches the tools (and a fork server sees only
	 * the files the tool itself opened) */
	close_range(3, ~0u, 0);
	for (int i = 0; i < s->n_senv; i++)
		putenv(s->senv[i]);
	if (s->serve &&
	    (setenv("LD_PRELOAD", shim, 1) || setenv(FORKSHIM_ENV_INPUT, s->fork_input, 1) ||
	     setenv(FORKSHIM_ENV_SOCK, s->serve, 1)))
		_exit(127);
	struct rlimit rl = {(rlim_t)s->cap, (rlim_t)s->cap};
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		_exit(127);
	if (s->fork_sock)
		try_fork_server(s);
	execvp(s->argv[0], s->argv);
	dprintf(2, "ka-cudaphases: cannot run %s: %s\n", s->argv[0], strerror(errno));
	_exit(127);
}

/* The mark that lets step s start early (the shim's FILE.ready), in buf. */
static const char *ready_path(const struct step *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s", s->early_file, FORKSHIM_READY_SUFFIX);
	return buf;
}

/* Start step k with memory cap; 0, or -1 with e. */
static int start(struct plan *p, int k, uint64_t cap, struct ka_err *e)
{
	struct step *s = &p->s[k];
	if (s->pch_input && !s->runs) {
		int r = pch_rewrite(s->pch_prefix, s->pch_input, e);
		if (r < 0)
			return -1;
		s->pch = r;
	}
	if (s->serve && !s->runs && serve_cut(s->fork_input, p->sentinel, e))
		return -1;
	if (s->serve)
		cap = p->mem;
	/* A mark is this run's: any older one (a folder run again) goes. */
	for (int j = 0; j < p->n; j++)
		if (p->s[j].early_dep == k) {
			char ready[4096];
			unlink(ready_path(&p->s[j], ready, sizeof ready));
		}
	s->cap = cap;
	s->t0 = now_s();
	if (!s->runs)
		s->first = s->t0 - driver_t0;
	s->runs++;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return ka_err_set(e, "fork: %s", strerror(errno));
	if (pid == 0)
		child_exec(s, p->shim);
	setpgid(pid, pid);
	s->pid = pid;
	s->st = ST_RUN;
	return 0;
}

/* 1 when the failed step's log says it ran out of memory. */
static int log_says_oom(const char *log)
{
	static const char *const pats[] = {"out of memory",   "memory exhausted", "bad_alloc",
					   "cannot allocate", "allocation fail",  NULL};
	char *t = NULL;
	size_t n = 0;
	if (util_read_file(log, 1u << 20, &t, &n, NULL))
		return 0;
	int hit = 0;
	for (int i = 0; pats[i] && !hit; i++)
		hit = strcasestr(t, pats[i]) != NULL;
	free(t);
	return hit;
}

/* Whether failed step s could have failed for want of memory that a
 * sequential run would have given it. */
static int memory_could_explain(const struct plan *p, const struct step *s)
{
	if (s->alone || s->cap >= p->mem)
		return 0;
	return s->code > 128 || (uint64_t)s->rss_kb * 1024 >= s->cap / 4 || log_says_oom(s->log);
}

/* Kill every running step after first_fail (-1: all), whole groups. */
static void kill_after(struct plan *p, int first_fail)
{
	for (int i = first_fail + 1; i < p->n; i++)
		if (p->s[i].st == ST_RUN)
			kill(-p->s[i].pid, SIGKILL);
}

/* Record the end of the child pid; returns the step index or -1. */
static int reap(struct plan *p, pid_t pid, int st, const struct rusage *ru)
{
	for (int k = 0; k < p->n; k++) {
		struct step *s = &p->s[k];
		if (s->st != ST_RUN || s->pid != pid)
			continue;
		s->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		s->secs += now_s() - s->t0;
		s->rss_kb = ru->ru_maxrss;
		s->cpu += (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 +
			  (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
		if (s->fork_sock)
			read_fork_usage(s);
		s->st = ST_DONE;
		return k;
	}
	return -1;
}

/* 1 when step k may start now, 0 when it must wait, -1 when it never will
 * (a dependency failed or was skipped). */
static int ready(const struct plan *p, int k)
{
	const struct step *s = &p->s[k];
	for (int d = 0; d < s->n_deps; d++) {
		const struct step *t = &p->s[s->deps[d]];
		if (t->spec) /* an early run, not confirmed yet */
			return 0;
		if (t->st == ST_SKIP || (t->st == ST_DONE && t->code != 0 && !t->rerun))
			return -1;
		if (t->st != ST_DONE || t->rerun)
			return 0;
	}
	return 1;
}

/* ---- early starts (the plan's early/earlyfile) ---- */

/* 1 when waiting step k may start early now: every dep is done but its
 * early dep, which runs, and that one's file is ready. */
static int early_ready(const struct plan *p, int k)
{
	const struct step *s = &p->s[k];
	if (s->early_dep < 0 || s->early_tried || s->runs)
		return 0;
	const struct step *e = &p->s[s->early_dep];
	if (e->st != ST_RUN || e->rerun || e->alone)
		return 0;
	for (int d = 0; d < s->n_deps; d++) {
		const struct step *t = &p->s[s->deps[d]];
		if (s->deps[d] != s->early_dep &&
		    (t->spec || t->st != ST_DONE || t->code != 0 || t->rerun))
			return 0;
	}
	char ready[4096];
	return access(ready_path(s, ready, sizeof ready), F_OK) == 0;
}

/* 1 while some step could still start early: run() then polls. */
static int early_pending(const struct plan *p, int first_fail)
{
	for (int k = 0; k < p->n && k < first_fail; k++) {
		const struct step *s = &p->s[k];
		if (s->st == ST_WAIT && s->early_dep >= 0 && !s->early_tried && !s->runs &&
		    p->s[s->early_dep].st == ST_RUN)
			return 1;
	}
	return 0;
}

/* Drop step k's early run: killed and reaped when it runs, back to
 * waiting, as if it had never started. */
static void early_drop(struct plan *p, int k, int *running)
{
	struct step *s = &p->s[k];
	if (s->st == ST_RUN) {
		kill(-s->pid, SIGKILL);
		int st;
		while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
			;
		s->secs += now_s() - s->t0;
		(*running)--;
	}
	s->st = ST_WAIT;
	s->code = -1;
	s->spec = s->held = 0;
}

/* 1 when file path is unchanged since step s's early start: the same
 * inode, size and modification time, and exactly the same bytes (nothing
 * wrote it since: not even a rewrite with the same bytes). */
static int unchanged(const char *path, const struct step *s)
{
	struct stat st;
	char *t = NULL;
	size_t len = 0;
	if (stat(path, &st) != 0 || st.st_ino != s->snap_st.st_ino ||
	    st.st_dev != s->snap_st.st_dev || st.st_size != s->snap_st.st_size ||
	    st.st_mtim.tv_sec != s->snap_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != s->snap_st.st_mtim.tv_nsec ||
	    util_read_file(path, 64u << 20, &t, &len, NULL))
		return 0;
	int same = len == s->snap_len && (len == 0 || !memcmp(t, s->snap, len));
	free(t);
	return same;
}

static void after_end(struct plan *p, int k, int *first_fail);

/* Step k ended: every early run that waited on it stands (k succeeded and
 * the file is the bytes it started on) or is dropped. */
static void early_settle(struct plan *p, int k, int *first_fail, int *running)
{
	for (int j = 0; j < p->n; j++) {
		struct step *s = &p->s[j];
		if (!s->spec || s->early_dep != k)
			continue;
		int stands = p->s[k].code == 0 && unchanged(s->early_file, s);
		free(s->snap);
		s->snap = NULL;
		if (!stands) {
			early_drop(p, j, running);
			continue;
		}
		s->spec = 0;
		s->early = 1;
		if (s->held) {
			s->held = 0;
			after_end(p, j, first_fail);
		}
	}
}

/* Start what can start; returns the number running, or -1 with e. */
static int launch(struct plan *p, int first_fail, int *running, struct ka_err *e)
{
	int pending_rerun = -1;
	for (int k = 0; k < p->n && pending_rerun < 0; k++)
		if (p->s[k].rerun)
			pending_rerun = k;
	if (pending_rerun >= 0) {
		if (*running == 0) {
			struct step *s = &p->s[pending_rerun];
			s->rerun = 0;
			s->alone = 1;
			if (start(p, pending_rerun, p->mem, e))
				return -1;
			(*running)++;
		}
		return *running;
	}
	for (int k = 0; k < p->n && *running < p->jobs && k < first_fail; k++) {
		struct step *s = &p->s[k];
		if (s->st != ST_WAIT)
			continue;
		int r = ready(p, k);
		if (r < 0)
			s->st = ST_SKIP;
		if (r < 0 || (r == 0 && !early_ready(p, k)))
			continue;
		if (r == 0) { /* early: on the file's bytes as they are now */
			s->early_tried = 1;
			if (stat(s->early_file, &s->snap_st) != 0 ||
			    util_read_file(s->early_file, 64u << 20, &s->snap, &s->snap_len, NULL))
				continue; /* then it starts as usual */
			s->spec = 1;
		}
		if (start(p, k, p->mem / (uint64_t)p->jobs, e))
			return -1;
		(*running)++;
	}
	return *running;
}

/* Run the plan to its end; 0, or -1 with e (this program's failure). */
static volatile sig_atomic_t expired;

static void on_alarm(int sig)
{
	(void)sig;
	expired = 1;
}

/* The deadline passed: kill every running step (its whole process group)
 * and reap them all, so that nothing of this compile outlives it. */
static void kill_all(struct plan *p, int *running)
{
	/* First, for the report: where each running step waits ("stuck K
	 * STATE WCHAN", from /proc where the jail has it). */
	for (int k = 0; k < p->n; k++) {
		if (p->s[k].st != ST_RUN)
			continue;
		char path[64], wchan[64] = "?", stat[512] = "";
		snprintf(path, sizeof path, "/proc/%d/wchan", (int)p->s[k].pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(wchan, sizeof wchan, f))
				snprintf(wchan, sizeof wchan, "?");
			fclose(f);
		}
		wchan[strcspn(wchan, " \n")] = 0;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)p->s[k].pid);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(stat, sizeof stat, f))
				stat[0] = 0;
			fclose(f);
		}
		const char *paren = strrchr(stat, ')'); /* "pid (comm) S ..." */
		printf("stuck %d %c %s\n", k, paren && paren[1] == ' ' && paren[2] ? paren[2] : '?',
		       wchan[0] ? wchan : "?");
	}
	kill_after(p, -1);
	while (*running > 0) {
		int st = 0;
		struct rusage ru;
		pid_t pid = wait4(-1, &st, 0, &ru);
		if (pid < 0 && errno != EINTR)
			break;
		if (pid > 0 && reap(p, pid, st, &ru) >= 0)
			(*running)--;
	}
}

/* What the end of step k means for the rest: a failure (in plan order
 * before any other) stops every step after it, unless memory could explain
 * it (then it runs again alone). */
static void after_end(struct plan *p, int k, int *first_fail)
{
	struct step *s = &p->s[k];
	if (s->code == 0 || k > *first_fail || s->serve)
		return;
	if (memory_could_explain(p, s)) {
		s->rerun = 1;
		return;
	}
	*first_fail = k;
	kill_after(p, k);
}

/* Run the plan to its end (or to the deadline: *timed_out); 0, or -1 with e
 * (this program's failure). */
static int run(struct plan *p, int *timed_out, struct ka_err *e)
{
	int running = 0, first_fail = p->n;
	for (;;) {
		if (expired) {
			kill_all(p, &running);
			*timed_out = 1;
			return 0;
		}
		if (launch(p, first_fail, &running, e) < 0)
			return -1;
		if (running == 0)
			break;
		int st = 0;
		struct rusage ru;
		/* while a step waits for a file to start early, look every 0.5 ms */
		int poll = early_pending(p, first_fail);
		pid_t pid = wait4(-1, &st, poll ? WNOHANG : 0, &ru);
		if (pid == 0) {
			nanosleep(&(struct timespec){0, 500000}, NULL);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			return ka_err_set(e, "wait: %s", strerror(errno));
		}
		if (pid == p->watcher) {
			p->watcher = 0;
			first_fail = -1; /* ka stops the servers: nothing more starts */
			kill_after(p, -1);
			continue;
		}
		int k = reap(p, pid, st, &ru);
		if (k < 0)
			continue;
		running--;
		if (p->s[k].spec) { /* an early run's outcome waits for its dep */
			p->s[k].held = 1;
			continue;
		}
		early_settle(p, k, &first_fail, &running);
		after_end(p, k, &first_fail);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ka_err e;
	char *text = NULL;
	size_t len = 0;
	driver_t0 = now_s();
	struct plan *p = calloc(1, sizeof *p);
	if (argc != 2 || !p) {
		fprintf(stderr, "usage: ka-cudaphases PLAN\n");
		return 2;
	}
	if (util_read_file(argv[1], 1u << 20, &text, &len, &e) || plan_parse(text, p, &e)) {
		fprintf(stderr, "ka-cudaphases: %s: %s\n", argv[1], e.msg);
		return 2;
	}
	if (p->serving && getpid() != 1) {
		fprintf(stderr, "ka-cudaphases: no fork server outside a PID namespace's init\n");
		return 3;
	}
	for (int i = 0; i < p->n_env; i++)
		putenv(p->env[i]);
	for (int k = 0; k < p->n; k++)
		p->s[k].code = -1;
	if (p->serving)
		p->watcher = start_watcher();
	/* The deadline: the steps run in process groups of their own, which a
	 * kill of this program's group would not reach. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART: wait4 returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	if (p->limit > 0) {
		alarm((unsigned)p->limit);
		fork_wait_s = p->limit / 4 < 5 ? 5 : p->limit / 4 > 30 ? 30 : p->limit / 4;
	}
	int timed_out = 0;
	if (run(p, &timed_out, &e)) {
		fprintf(stderr, "ka-cudaphases: %s\n", e.msg);
		return 2;
	}
	int ok = 1;
	for (int k = 0; k < p->n; k++) {
		const struct step *s = &p->s[k];
		printf("step %d code %d ms %.0f rss %ld pch %d runs %d cpu %.0f fork %d "
		       "at %.0f early %d\n",
		       k, s->code, s->secs * 1000, s->rss_kb, s->pch, s->runs, s->cpu * 1000,
		       s->forked, s->first * 1000, s->early);
		ok &= s->code == 0;
	}
	free(text);
	free(p);
	return timed_out ? 124 : ok ? 0 : 1;
}
