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
 *   arg A         the next argument (argv[0] first: a path or a name on PATH)
 *
 * Once a step fails, no step after it (in plan order) starts and the running
 * ones after it are killed; the steps before it still run, so the first
 * failing step in plan order is exactly the one a sequential run would stop
 * at. On stdout, one line per step:
 *   step K code C ms M rss KB pch P runs R cpu MS
 * (C: exit status, 128 + signal, or -1 when it did not run; M: wall
 * milliseconds; KB: peak resident memory; P: 1 when the precompiled prefix
 * was used; R: runs; MS: user + system CPU milliseconds). Exit status: 0
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define MAX_STEPS 32
#define MAX_ARGS 512
#define MAX_SENV 8
#define MAX_ENV 64
#define MAX_DEPS 8

enum state { ST_WAIT, ST_RUN, ST_DONE, ST_SKIP };

struct step {
	char *name, *log, *pch_prefix, *pch_input;
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
	long rss_kb;	  /* peak resident memory of its last run */
	double cpu;	  /* user + system seconds of its runs */
	int runs, pch;	  /* times started; precompiled prefix used */
	int rerun, alone; /* waits for a run alone; runs alone now */
};

struct plan {
	int jobs;
	int limit; /* seconds; 0: none */
	uint64_t mem;
	char *env[MAX_ENV];
	int n_env;
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
	if (!strcmp(key, "step")) {
		if (p->n >= MAX_STEPS)
			return ka_err_set(e, "more than %d steps", MAX_STEPS);
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
	for (int i = 0; i < p->n; i++)
		if (p->s[i].argc == 0 || !p->s[i].log ||
		    (!p->s[i].pch_prefix != !p->s[i].pch_input))
			return ka_err_set(e, "step %d (%s): no arg, no log or half a pch", i,
					  p->s[i].name);
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

/* ---- running ---- */

static double now_s(void)
{
	return util_now();
}

/* In the forked child: output to the log, own process group, memory cap,
 * the step's environment, then exec. Never returns. */
static void child_exec(const struct step *s)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	for (int i = 0; i < s->n_senv; i++)
		putenv(s->senv[i]);
	struct rlimit rl = {(rlim_t)s->cap, (rlim_t)s->cap};
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		_exit(127);
	execvp(s->argv[0], s->argv);
	dprintf(2, "ka-cudaphases: cannot run %s: %s\n", s->argv[0], strerror(errno));
	_exit(127);
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
	s->cap = cap;
	s->t0 = now_s();
	s->runs++;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return ka_err_set(e, "fork: %s", strerror(errno));
	if (pid == 0)
		child_exec(s);
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
		if (t->st == ST_SKIP || (t->st == ST_DONE && t->code != 0 && !t->rerun))
			return -1;
		if (t->st != ST_DONE || t->rerun)
			return 0;
	}
	return 1;
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
		if (p->s[k].st != ST_WAIT)
			continue;
		int r = ready(p, k);
		if (r < 0)
			p->s[k].st = ST_SKIP;
		if (r <= 0)
			continue;
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
		pid_t pid = wait4(-1, &st, 0, &ru);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			return ka_err_set(e, "wait: %s", strerror(errno));
		}
		int k = reap(p, pid, st, &ru);
		if (k < 0)
			continue;
		running--;
		struct step *s = &p->s[k];
		if (s->code == 0 || k > first_fail)
			continue;
		if (memory_could_explain(p, s)) {
			s->rerun = 1;
			continue;
		}
		first_fail = k;
		kill_after(p, first_fail);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ka_err e;
	char *text = NULL;
	size_t len = 0;
	struct plan *p = calloc(1, sizeof *p);
	if (argc != 2 || !p) {
		fprintf(stderr, "usage: ka-cudaphases PLAN\n");
		return 2;
	}
	if (util_read_file(argv[1], 1u << 20, &text, &len, &e) || plan_parse(text, p, &e)) {
		fprintf(stderr, "ka-cudaphases: %s: %s\n", argv[1], e.msg);
		return 2;
	}
	for (int i = 0; i < p->n_env; i++)
		putenv(p->env[i]);
	for (int k = 0; k < p->n; k++)
		p->s[k].code = -1;
	/* The deadline: the steps run in process groups of their own, which a
	 * kill of this program's group would not reach. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART: wait4 returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	if (p->limit > 0)
		alarm((unsigned)p->limit);
	int timed_out = 0;
	if (run(p, &timed_out, &e)) {
		fprintf(stderr, "ka-cudaphases: %s\n", e.msg);
		return 2;
	}
	int ok = 1;
	for (int k = 0; k < p->n; k++) {
		const struct step *s = &p->s[k];
		printf("step %d code %d ms %.0f rss %ld pch %d runs %d cpu %.0f\n", k, s->code,
		       s->secs * 1000, s->rss_kb, s->pch, s->runs, s->cpu * 1000);
		ok &= s->code == 0;
	}
	free(text);
	free(p);
	return timed_out ? 124 : ok ? 0 : 1;
}
