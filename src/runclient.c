/* runclient.c: start, talk to, time out, kill and restart a runner process
 * (see runclient.h). The runner is trusted code, but the kernels it runs are
 * not: a reply may never come (timeout: we kill it) or the process may die
 * (EOF: we reap it and name the signal). Either way the next request starts a
 * fresh runner and replays the loads it had, so a hostile kernel costs one
 * verdict and a restart, never the grader. */
#include "runclient.h"

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
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtype.h"
#include "proto.h"
#include "verdict.h"

#define LOG_TAIL 4096
#define HELLO_TIMEOUT_S 120.0
#define LATE_REPLY_READ_S 60.0 /* to read a reply that arrived in time */
#define CACHE_PREFIX "pocl-"   /* a runner session's private driver cache */
#define CACHE_STALE_S 3600.0   /* older, untouched: a killed ka's (docs/grader.md) */

struct saved_load {
	bool on;
	char *plan;
	struct run_tensors ts;
	char *module;
	char *native;
};

struct runclient {
	char target[16];
	char platform[256];
	bool has_platform;
	int device;
	char path[PATH_MAX];
	char cache[PATH_MAX]; /* the session's private driver cache, or "" */

	bool alive;
	pid_t pid;
	int died_of; /* the signal that ended the runner, ka not its sender; or 0 */
	int to_fd, from_fd, err_fd;
	pthread_t log_thread;
	bool echo_log;
	pthread_mutex_t log_mu;
	char log[LOG_TAIL];
	size_t log_len;

	json_t *dev_raw;
	struct device_info dev;
	struct saved_load slot[RUN_MAX_SLOTS];
	double load_timeout;
	int starts;
	/* A call sent and not yet answered (runclient_call_start); started:
	 * when runclient_call_start began (KA_CALL_TRACE). */
	bool pending, send_lost;
	double started, sent_at, deadline, call_timeout;
};

static void status_set(enum runclient_status *status, char *verdict, char *detail,
		       enum runclient_status stv, const char *v, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void status_set(enum runclient_status *status, char *verdict, char *detail,
		       enum runclient_status stv, const char *v, const char *fmt, ...)
{
	va_list ap;
	*status = stv;
	snprintf(verdict, 32, "%s", v);
	va_start(ap, fmt);
	vsnprintf(detail, RUN_DETAIL_MAX, fmt, ap);
	va_end(ap);
}

#define ST(st) &(st)->status, (st)->verdict, (st)->detail

/* The times of one request for KA_CALL_TRACE (runclient.h). */
struct trace_times {
	double start, ready, go, replayed, reply;
};

static void trace_write(const struct runclient *rc, const char *op, int timed, int phased,
			const struct trace_times *t)
{
	const char *path = getenv("KA_CALL_TRACE");
	if (!path || !*path)
		return;
	char line[320];
	int n = snprintf(line, sizeof line,
			 "{\"runner\":%d,\"op\":\"%s\",\"timed\":%d,\"phased\":%d,\"start\":%.6f,"
			 "\"ready\":%.6f,\"go\":%.6f,\"replayed\":%.6f,\"reply\":%.6f}\n",
			 (int)rc->pid, op, timed, phased, t->start, t->ready, t->go, t->replayed,
			 t->reply);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "ka: KA_CALL_TRACE %s: short write\n", path);
	close(fd);
}

/* ---- the runner's stderr: a thread keeps the tail ---- */

static void *log_main(void *arg)
{
	struct runclient *rc = arg;
	char buf[4096];
	for (;;) {
		ssize_t n = read(rc->err_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (rc->echo_log)
			fwrite(buf, 1, (size_t)n, stderr);
		pthread_mutex_lock(&rc->log_mu);
		size_t take = (size_t)n > LOG_TAIL ? LOG_TAIL : (size_t)n;
		const char *src = buf + (size_t)n - take;
		if (rc->log_len + take > LOG_TAIL) {
			size_t drop = rc->log_len + take - LOG_TAIL;
			memmove(rc->log, rc->log + drop, rc->log_len - drop);
			rc->log_len -= drop;
		}
		memcpy(rc->log + rc->log_len, src, take);
		rc->log_len += take;
		pthread_mutex_unlock(&rc->log_mu);
	}
	return NULL;
}

void runclient_log_tail(struct runclient *rc, char *buf, size_t cap)
{
	if (!cap)
		return;
	pthread_mutex_lock(&rc->log_mu);
	size_t n = rc->log_len < cap - 1 ? rc->log_len : cap - 1;
	memcpy(buf, rc->log + rc->log_len - n, n);
	buf[n] = 0;
	pthread_mutex_unlock(&rc->log_mu);
}

/* The last non-empty line of the log, for one-line messages. */
static void log_last_line(struct runclient *rc, char *out, size_t cap)
{
	char tail[LOG_TAIL + 1];
	runclient_log_tail(rc, tail, sizeof tail);
	size_t l = strlen(tail);
	while (l && (tail[l - 1] == '\n' || tail[l - 1] == '\r'))
		tail[--l] = 0;
	char *nl = strrchr(tail, '\n');
	const char *line = nl ? nl + 1 : tail;
	size_t n = strlen(line) < cap - 1 ? strlen(line) : cap - 1;
	memcpy(out, line, n);
	out[n] = 0;
}

/* ---- process life ---- */

static void describe_exit(int status, char *out, size_t cap)
{
	if (WIFSIGNALED(status))
		snprintf(out, cap, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(out, cap, "ended (status 0x%x)", status);
}

/* Wait for the runner to end (killing it after grace_s), close everything,
 * describe how it ended into why. */
static void reap(struct runclient *rc, double grace_s, char *why, size_t cap)
{
	if (!rc->alive)
		return;
	int status = 0;
	double until = util_now() + grace_s;
	pid_t r;
	while ((r = waitpid(rc->pid, &status, WNOHANG)) == 0 && util_now() < until)
		usleep(2000);
	rc->died_of = r == rc->pid && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (r == 0) {
		kill(rc->pid, SIGKILL);
		while (waitpid(rc->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (why)
		describe_exit(status, why, cap);
	close(rc->to_fd);
	close(rc->from_fd);
	/* The runner is gone, so its stderr reaches EOF and the thread ends. */
	pthread_join(rc->log_thread, NULL);
	close(rc->err_fd);
	rc->alive = false;
}

static void kill_runner(struct runclient *rc)
{
	if (rc->alive) {
		kill(rc->pid, SIGKILL);
		reap(rc, 5, NULL, 0);
		rc->died_of = 0; /* ka's own kill */
	}
}

/* The runner gets only the variables a driver needs, never ka's own
 * environment: on PoCL a candidate's kernel can read the runner's memory, and
 * ka's environment may hold model API keys. */
static const char *const ENV_KEEP[] = {
	"PATH=",	   "HOME=",    "TMPDIR=",    "LD_LIBRARY_PATH=",
	"XDG_CACHE_HOME=", "KA_HOME=", "KA_RUNNER_", "KA_COMPILE_MEM_MB=",
	"POCL_",	   "OCL_ICD_", "OPENCL_",    "CUDA_",
	"NVIDIA_",	   "__NV_",    NULL};

static int spawn(struct runclient *rc, struct ka_err *e)
{
	int to[2], from[2], er[2];
	if (pipe2(to, O_CLOEXEC))
		return ka_err_set(e, "runclient: pipe: %s", strerror(errno));
	if (pipe2(from, O_CLOEXEC)) {
		close(to[0]), close(to[1]);
		return ka_err_set(e, "runclient: pipe: %s", strerror(errno));
	}
	if (pipe2(er, O_CLOEXEC)) {
		close(to[0]), close(to[1]), close(from[0]), close(from[1]);
		return ka_err_set(e, "runclient: pipe: %s", strerror(errno));
	}
	char devbuf[16];
	snprintf(devbuf, sizeof devbuf, "%d", rc->device);
	char *argv[10];
	int ac = 0;
	argv[ac++] = rc->path;
	if (rc->has_platform) {
		argv[ac++] = "--platform";
		argv[ac++] = rc->platform;
	}
	if (rc->device >= 0) {
		argv[ac++] = "--device";
		argv[ac++] = devbuf;
	}
	if (rc->cache[0]) {
		argv[ac++] = "--private-cache";
		argv[ac++] = rc->cache;
	}
	argv[ac] = NULL;
	char **env = util_env_keep(ENV_KEEP);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		free(env);
		close(to[0]), close(to[1]), close(from[0]), close(from[1]);
		close(er[0]), close(er[1]);
		return ka_err_set(e, "runclient: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here: ka may have threads. A
		 * runner must not outlive ka (a kernel spinning forever would). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		util_child_detach_signals();
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0 || dup2(er[1], 2) < 0)
			_exit(127);
		close_range(3, ~0u, 0);
		execve(argv[0], argv, env);
		_exit(127);
	}
	free(env);
	close(to[0]);
	close(from[1]);
	close(er[1]);
	setpgid(pid, pid); /* as the child does: no window where a group signal reaches it */
	rc->pid = pid;
	rc->to_fd = to[1];
	rc->from_fd = from[0];
	rc->err_fd = er[0];
	/* Bigger pipes move large outputs in fewer wake-ups (best effort). */
	fcntl(rc->from_fd, F_SETPIPE_SZ, 1 << 20);
	rc->log_len = 0;
	if (pthread_create(&rc->log_thread, NULL, log_main, rc)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(rc->to_fd), close(rc->from_fd), close(rc->err_fd);
		return ka_err_set(e, "runclient: cannot start the log thread");
	}
	rc->alive = true;
	rc->starts++;
	return 0;
}

/* What a receive that failed means: -2 timeout (the runner is killed); -3
 * the runner died (how, and its last log line, in why). */
static int exchange_lost(struct runclient *rc, int r, char *why, size_t cap)
{
	if (r == -2) {
		kill_runner(rc);
		return -2;
	}
	/* EOF or a broken pipe: the runner is dying or dead. */
	reap(rc, 2.0, why, cap);
	char last[512];
	log_last_line(rc, last, sizeof last);
	if (last[0]) {
		size_t l = strlen(why);
		snprintf(why + l, cap - l, "; last log line: %s", last);
	}
	return -3;
}

/* Wait for the reply of what was sent, at most until deadline (0: none). 0:
 * *m filled; -2, -3 as exchange_lost. */
static int exchange_recv(struct runclient *rc, double deadline, struct proto_msg *m, char *why,
			 size_t cap)
{
	struct ka_err se;
	double left = 0;
	if (deadline > 0 && (left = deadline - util_now()) <= 0) {
		/* Past due because the caller read late (runclient_call_finish
		 * after other work): a reply that has begun to arrive came in
		 * time and is read in full; else only a moment is left. */
		struct pollfd pf = {.fd = rc->from_fd, .events = POLLIN};
		left = poll(&pf, 1, 0) == 1 ? LATE_REPLY_READ_S : 1e-3;
	}
	int r = proto_recv(rc->from_fd, left, m, &se);
	if (r)
		return exchange_lost(rc, r, why, cap);
	if (json_is_true(json_object_get(m->obj, "fatal")))
		reap(rc, 5.0, NULL, 0); /* it exits after a fatal reply */
	return 0;
}

/* Send req (consumed) and wait for the reply. 0: *m filled; -2: timeout (the
 * runner was killed); -3: the runner died (how, in why). */
static int exchange(struct runclient *rc, json_t *req, double timeout_s, struct proto_msg *m,
		    char *why, size_t cap)
{
	struct ka_err se;
	double deadline = timeout_s > 0 ? util_now() + timeout_s : 0;
	int r = proto_send(rc->to_fd, req, 0, NULL, NULL, &se);
	json_decref(req);
	if (r)
		return exchange_lost(rc, -1, why, cap);
	return exchange_recv(rc, deadline, m, why, cap);
}

/* ---- hello ---- */

static void jstr(const json_t *o, const char *k, char *out, size_t cap)
{
	const char *s = json_string_value(json_object_get(o, k));
	snprintf(out, cap, "%s", s ? s : "");
}

static int64_t jint(const json_t *o, const char *k)
{
	return (int64_t)json_integer_value(json_object_get(o, k));
}

void runclient_parse_device(const json_t *d, struct device_info *o)
{
	memset(o, 0, sizeof *o);
	jstr(d, "name", o->name, sizeof o->name);
	jstr(d, "vendor", o->vendor, sizeof o->vendor);
	jstr(d, "version", o->version, sizeof o->version);
	jstr(d, "driver", o->driver, sizeof o->driver);
	jstr(d, "platform", o->platform, sizeof o->platform);
	jstr(d, "opencl_c_version", o->opencl_c_version, sizeof o->opencl_c_version);
	jstr(d, "type", o->type, sizeof o->type);
	jstr(d, "extensions", o->extensions, sizeof o->extensions);
	o->compute_units = (int)jint(d, "compute_units");
	o->max_clock_mhz = (int)jint(d, "max_clock_mhz");
	o->address_bits = (int)jint(d, "address_bits");
	o->max_work_group = jint(d, "max_work_group");
	o->max_work_item_dims = (int)jint(d, "max_work_item_dims");
	json_t *mis = json_object_get(d, "max_work_item_sizes");
	for (int i = 0; i < 3; i++)
		o->max_work_item_sizes[i] =
			(int64_t)json_integer_value(json_array_get(mis, (size_t)i));
	o->local_mem_bytes = jint(d, "local_mem_bytes");
	o->global_mem_bytes = jint(d, "global_mem_bytes");
	o->max_mem_alloc = jint(d, "max_mem_alloc");
	o->cache_bytes = jint(d, "cache_bytes");
	o->cache_line_bytes = jint(d, "cache_line_bytes");
	o->base_addr_align = jint(d, "base_addr_align");
	o->fp64 = json_is_true(json_object_get(d, "fp64"));
	o->test_grade = json_is_true(json_object_get(d, "test_grade"));
	o->flush_bytes = jint(d, "flush_bytes");
	o->phased_calls = json_is_true(json_object_get(d, "phased_calls"));
	o->cupti = json_is_true(json_object_get(d, "cupti"));
	static const char *pv[7] = {"char", "short", "int", "long", "float", "double", "half"};
	json_t *p = json_object_get(d, "preferred_vector_widths");
	for (int i = 0; i < 7; i++)
		o->pref_vec[i] = (int)jint(p, pv[i]);
}

static int reply_error(const json_t *reply, const char *what, struct ka_err *e)
{
	const char *err = json_string_value(json_object_get(reply, "error"));
	/* The runner ran out of device memory (docs/runner-protocol.md): the
	 * tag leads, so that callers that wrap the message keep it. */
	int mem = json_is_true(json_object_get(reply, "device_memory"));
	return ka_err_set(e, "runner %s: %s%s", what, mem ? RUN_DEVICE_MEMORY_TAG " " : "",
			  err ? err : "malformed reply");
}

int runclient_device_memory(const struct ka_err *e)
{
	return e && strstr(e->msg, RUN_DEVICE_MEMORY_TAG) != NULL;
}

static int do_hello(struct runclient *rc, struct ka_err *e)
{
	struct proto_msg m;
	char why[256] = "";
	int r = exchange(rc, json_pack("{s:s}", "op", "hello"), HELLO_TIMEOUT_S, &m, why,
			 sizeof why);
	if (r == -2)
		return ka_err_set(e, "runner %s: no hello reply within %.0f s", rc->path,
				  HELLO_TIMEOUT_S);
	if (r == -3)
		return ka_err_set(e, "runner %s %s before its hello", rc->path, why);
	if (r)
		return -1;
	json_t *dev = json_object_get(m.obj, "device");
	if (!json_is_true(json_object_get(m.obj, "ok")) || !json_is_object(dev)) {
		r = reply_error(m.obj, "hello", e);
		proto_msg_free(&m);
		return r;
	}
	json_decref(rc->dev_raw);
	rc->dev_raw = json_incref(dev);
	runclient_parse_device(dev, &rc->dev);
	proto_msg_free(&m);
	return 0;
}

/* ---- load ---- */

static json_t *load_request(int slot, const struct saved_load *s)
{
	json_error_t je;
	json_t *plan = NULL;
	if (s->plan && !(plan = json_loads(s->plan, 0, &je)))
		return NULL;
	json_t *ts = json_array();
	for (int i = 0; i < s->ts.n; i++)
		json_array_append_new(ts,
				      json_pack("{s:I,s:i}", "bytes", (json_int_t)s->ts.bytes[i],
						"dtype", s->ts.dtypes[i]));
	json_t *req = json_pack("{s:s,s:i,s:o}", "op", "load", "slot", slot, "tensors", ts);
	if (plan)
		json_object_set_new(req, "plan", plan);
	if (s->module)
		json_object_set_new(req, "module", json_string(s->module));
	if (s->native)
		json_object_set_new(req, "native", json_string(s->native));
	return req;
}

/* Send one load; 0 with st, or -1 with e. */
static int send_load(struct runclient *rc, int slot, const struct saved_load *s,
		     struct run_status *st, struct ka_err *e)
{
	json_t *req = load_request(slot, s);
	if (!req)
		return ka_err_set(e, "runclient: the plan of slot %d is not JSON", slot);
	st->killed_outside = false;
	struct proto_msg m;
	char why[256] = "";
	int r = exchange(rc, req, rc->load_timeout, &m, why, sizeof why);
	if (r == -2) {
		status_set(ST(st), RUNCLIENT_TIMEOUT, verdict_name(VERDICT_TIMEOUT),
			   "no load reply within %.0f s (building the "
			   "program); the runner was killed",
			   rc->load_timeout);
		return 0;
	}
	if (r == -3) {
		/* The compiler crashed on this source. */
		status_set(ST(st), RUNCLIENT_VERDICT, verdict_name(VERDICT_COMPILE_ERROR),
			   "the runner %s while loading", why);
		st->killed_outside = rc->died_of == SIGKILL;
		return 0;
	}
	if (r)
		return -1;
	r = runclient_parse_load(m.obj, st, e);
	proto_msg_free(&m);
	return r;
}

int runclient_parse_load(const json_t *reply, struct run_status *st, struct ka_err *e)
{
	const char *v = json_string_value(json_object_get(reply, "verdict"));
	const char *d = json_string_value(json_object_get(reply, "detail"));
	int pv = verdict_parse(v);
	if (json_is_true(json_object_get(reply, "ok")))
		status_set(ST(st), RUNCLIENT_OK, "", "%s", "");
	else if (pv == VERDICT_COMPILE_ERROR || pv == VERDICT_LAUNCH_ERROR ||
		 pv == VERDICT_RUNTIME_FAULT)
		status_set(ST(st), RUNCLIENT_VERDICT, v, "%s", d ? d : "");
	else
		return reply_error(reply, "load", e);
	return 0;
}

static void saved_free(struct saved_load *s)
{
	free(s->plan);
	free(s->module);
	free(s->native);
	memset(s, 0, sizeof *s);
}

/* Start the runner if it is not running, and give it back its slots. */
static int ensure_alive(struct runclient *rc, struct ka_err *e)
{
	if (rc->alive)
		return 0;
	if (spawn(rc, e) || do_hello(rc, e)) {
		kill_runner(rc);
		return -1;
	}
	for (int s = 0; s < RUN_MAX_SLOTS; s++) {
		if (!rc->slot[s].on)
			continue;
		struct run_status *st = xmalloc(sizeof *st);
		int r = send_load(rc, s, &rc->slot[s], st, e);
		if (!r && st->status != RUNCLIENT_OK)
			r = ka_err_set(e,
				       "runclient: reloading slot %d after a restart: %s: %.200s",
				       s, st->verdict, st->detail);
		free(st);
		if (r) {
			saved_free(&rc->slot[s]);
			kill_runner(rc);
			return -1;
		}
	}
	return 0;
}

/* Remove workdir's private driver caches (CACHE_PREFIX) untouched for
 * CACHE_STALE_S: a ka killed before runclient_stop left them (a live
 * session touches its own at every load). */
static void cache_sweep(const char *workdir)
{
	DIR *d = opendir(workdir);
	if (!d)
		return;
	time_t now = time(NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, CACHE_PREFIX, strlen(CACHE_PREFIX)))
			continue;
		char *p = xasprintf("%s/%s", workdir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
		    difftime(now, st.st_mtime) > CACHE_STALE_S)
			util_rmtree(p);
		free(p);
	}
	closedir(d);
}

/* The OpenCL runner's private driver cache under workdir, swept of stale
 * ones first. 0, or -1 with e. */
static int cache_make(struct runclient *rc, const char *workdir, struct ka_err *e)
{
	if (!workdir || strcmp(rc->target, "opencl"))
		return 0;
	if (util_mkdirs(workdir, e))
		return -1;
	cache_sweep(workdir);
	char *real = realpath(workdir, NULL);
	snprintf(rc->cache, sizeof rc->cache, "%s/" CACHE_PREFIX "XXXXXX", real ? real : workdir);
	free(real);
	if (!mkdtemp(rc->cache)) {
		ka_err_set(e, "runclient: %s: %s", rc->cache, strerror(errno));
		rc->cache[0] = 0;
		return -1;
	}
	return 0;
}

struct runclient *runclient_start(const char *target, const char *platform, int device,
				  const char *workdir, struct ka_err *e)
{
	if (!target || (strcmp(target, "opencl") && strcmp(target, "cuda"))) {
		ka_err_set(e, "runclient: unknown target '%s'", target ? target : "(null)");
		return NULL;
	}
	signal(SIGPIPE, SIG_IGN);
	struct runclient *rc = xcalloc(1, sizeof *rc);
	snprintf(rc->target, sizeof rc->target, "%s", target);
	if (platform) {
		rc->has_platform = true;
		snprintf(rc->platform, sizeof rc->platform, "%s", platform);
	}
	rc->device = device;
	rc->load_timeout = 300;
	const char *ed = getenv("KA_RUNNER_LOG");
	rc->echo_log = ed && !strcmp(ed, "1");
	pthread_mutex_init(&rc->log_mu, NULL);
	/* Beside the running program, or one level up (test binaries live in
	 * $BUILD/tests, the runner in $BUILD). */
	snprintf(rc->path, sizeof rc->path, "%s/ka-run-%s", util_exe_dir(), target);
	if (access(rc->path, X_OK)) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", util_exe_dir());
		snprintf(rc->path, sizeof rc->path, "%s/ka-run-%s", dirname(dir), target);
	}
	if (access(rc->path, X_OK)) {
		ka_err_set(e,
			   "runclient: no runner program ka-run-%s beside %s (build it with make)",
			   target, util_exe_dir());
		pthread_mutex_destroy(&rc->log_mu);
		free(rc);
		return NULL;
	}
	if (cache_make(rc, workdir, e) || ensure_alive(rc, e)) {
		runclient_stop(rc);
		return NULL;
	}
	return rc;
}

int runclient_hello(struct runclient *rc, json_t **device, struct ka_err *e)
{
	if (ensure_alive(rc, e))
		return -1;
	*device = json_incref(rc->dev_raw);
	return 0;
}

const struct device_info *runclient_device(const struct runclient *rc)
{
	return &rc->dev;
}

int runclient_load(struct runclient *rc, int slot, const char *plan_json, int n_tensors,
		   const uint64_t *bytes, const int *dtypes, const char *module, const char *native,
		   struct run_status *st, struct ka_err *e)
{
	if (slot < 0 || slot >= RUN_MAX_SLOTS || n_tensors < 0 || n_tensors > RUN_MAX_TENSORS ||
	    (!plan_json && !native))
		return ka_err_set(e, "runclient_load: bad slot, tensor count or plan");
	if (rc->pending)
		return ka_err_set(e, "runclient_load: a call is outstanding");
	struct trace_times tt = {.start = util_now()};
	/* Replace: the old version of the slot must not be reloaded on a restart. */
	saved_free(&rc->slot[slot]);
	if (ensure_alive(rc, e))
		return -1;
	if (rc->cache[0])
		utimes(rc->cache, NULL); /* in use: not stale (cache_sweep) */
	struct saved_load s = {.on = true, .ts.n = n_tensors};
	s.plan = plan_json ? xstrdup(plan_json) : NULL;
	s.module = module ? xstrdup(module) : NULL;
	s.native = native ? xstrdup(native) : NULL;
	for (int i = 0; i < n_tensors; i++) {
		s.ts.bytes[i] = bytes[i];
		s.ts.dtypes[i] = dtypes[i];
	}
	int r = send_load(rc, slot, &s, st, e);
	tt.reply = util_now();
	trace_write(rc, "load", 0, 0, &tt);
	if (r || st->status != RUNCLIENT_OK) {
		saved_free(&s);
		return r;
	}
	rc->slot[slot] = s;
	return 0;
}

/* ---- call ---- */

/* One output's sampled indices as the protocol carries them: a plain list,
 * or {"runs": [[start, length], ...]} when the indices come in consecutive
 * runs (whole rows), which is far shorter for row-sized work items. */
static json_t *sample_json(const int64_t *idx, int64_t n)
{
	int64_t runs = n ? 1 : 0;
	for (int64_t k = 1; k < n; k++)
		runs += idx[k] != idx[k - 1] + 1;
	if (2 * runs >= n) {
		json_t *l = json_array();
		for (int64_t k = 0; k < n; k++)
			json_array_append_new(l, json_integer((json_int_t)idx[k]));
		return l;
	}
	json_t *r = json_array();
	for (int64_t k = 0; k < n;) {
		int64_t len = 1;
		while (k + len < n && idx[k + len] == idx[k] + len)
			len++;
		json_array_append_new(r, json_pack("[I,I]", (json_int_t)idx[k], (json_int_t)len));
		k += len;
	}
	return json_pack("{s:o}", "runs", r);
}

json_t *runclient_call_json(const struct run_call_req *q, struct ka_err *e)
{
	json_t *ins = json_array();
	for (int i = 0; i < q->n_inputs; i++) {
		const struct run_input *in = &q->in[i];
		json_t *j = json_pack("{s:o,s:i}", "key", proto_u64(in->key), "kind", in->kind);
		if (in->kind == 2) {
			json_object_set_new(j, "lo", json_integer((json_int_t)in->lo));
			json_object_set_new(j, "range", proto_u64(in->range));
		} else {
			json_t *a = json_real((double)in->a), *b = json_real((double)in->b);
			if (!a || !b) {
				json_decref(a), json_decref(b), json_decref(j), json_decref(ins);
				ka_err_set(e, "runclient: input %d has a non-finite parameter", i);
				return NULL;
			}
			json_object_set_new(j, "a", a);
			json_object_set_new(j, "b", b);
		}
		json_array_append_new(ins, j);
	}
	json_t *req = json_pack("{s:s,s:i,s:o,s:o,s:b,s:b,s:s}", "op", "call", "slot", q->slot,
				"inputs", ins, "poison", proto_u64(q->poison), "flush", q->flush,
				"time", q->time, "return", q->sample ? "sample" : "all");
	if (q->phased)
		json_object_set_new(req, "phased", json_true());
	if (q->sample) {
		json_t *smp = json_array();
		for (int o = 0; o < q->n_outputs; o++)
			json_array_append_new(smp, sample_json(q->sample_idx[o], q->n_sample[o]));
		json_object_set_new(req, "sample", smp);
	}
	return req;
}

static int get_hex_array(json_t *obj, const char *key, int n, uint64_t *out)
{
	json_t *a = json_object_get(obj, key);
	if (!json_is_array(a) || json_array_size(a) != (size_t)n)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, (size_t)i));
		char *end;
		if (!s || !*s || strlen(s) > 16)
			return -1;
		out[i] = strtoull(s, &end, 16);
		if (*end)
			return -1;
	}
	return 0;
}

static int get_int_array(json_t *obj, const char *key, int n, int64_t *out)
{
	json_t *a = json_object_get(obj, key);
	if (!json_is_array(a) || json_array_size(a) != (size_t)n)
		return -1;
	for (int i = 0; i < n; i++) {
		json_t *v = json_array_get(a, (size_t)i);
		if (!json_is_integer(v))
			return -1;
		out[i] = json_integer_value(v);
	}
	return 0;
}

int runclient_parse_call(const struct run_call_req *q, const struct run_tensors *s,
			 struct proto_msg *m, struct run_call_res *res, struct ka_err *e)
{
	json_t *o = m->obj;
	if (!json_is_true(json_object_get(o, "ok"))) {
		const char *v = json_string_value(json_object_get(o, "verdict"));
		const char *d = json_string_value(json_object_get(o, "detail"));
		int pv = verdict_parse(v);
		if (pv == VERDICT_RUNTIME_FAULT || pv == VERDICT_LAUNCH_ERROR) {
			status_set(ST(res), RUNCLIENT_VERDICT, v, "%s", d ? d : "");
			return 0;
		}
		return reply_error(o, "call", e);
	}
	if (q->n_inputs < 0 || s->n < q->n_inputs || s->n > RUN_MAX_TENSORS)
		return ka_err_set(e, "runner call: %d inputs do not fit the slot's %d tensors",
				  q->n_inputs, s->n);
	int n_out = s->n - q->n_inputs;
	int n_buf = (int)json_array_size(json_object_get(o, "canary_ok"));
	res->n_inputs = q->n_inputs;
	res->n_outputs = n_out;
	json_t *t = json_object_get(o, "time_ns");
	if (q->time && !json_is_number(t))
		return ka_err_set(e, "runner call: reply without time_ns");
	res->has_time = q->time;
	res->time_ns = q->time ? json_number_value(t) : 0;
	if (get_hex_array(o, "in_hash_before", q->n_inputs, res->in_hash_before) ||
	    get_hex_array(o, "in_hash_after", q->n_inputs, res->in_hash_after) ||
	    get_int_array(o, "in_modified_at", q->n_inputs, res->in_modified_at) ||
	    get_int_array(o, "unwritten", n_out, res->unwritten) ||
	    get_int_array(o, "first_unwritten", n_out, res->first_unwritten) ||
	    get_int_array(o, "nonfinite", n_out, res->nonfinite) || n_buf < s->n ||
	    n_buf > RUN_MAX_BUFFERS || m->n_blobs != n_out)
		return ka_err_set(e, "runner call: reply arrays do not match the slot's %d tensors",
				  s->n);
	res->n_buffers = n_buf;
	for (int i = 0; i < n_buf; i++)
		res->canary_ok[i] =
			json_is_true(json_array_get(json_object_get(o, "canary_ok"), (size_t)i));
	for (int k = 0; k < n_out; k++) {
		size_t es = dtype_size((enum ka_dtype)s->dtypes[q->n_inputs + k]);
		size_t want =
			q->sample ? (size_t)q->n_sample[k] * es : (size_t)s->bytes[q->n_inputs + k];
		if (m->blob_len[k] != want)
			return ka_err_set(
				e, "runner call: output %d came back with %zu bytes, not %zu", k,
				m->blob_len[k], want);
		res->out[k] = m->blob[k];
		res->out_len[k] = m->blob_len[k];
		m->blob[k] = NULL;
	}
	json_t *cu = json_object_get(o, "cupti"), *ck = json_object_get(o, "clocks");
	res->cupti = json_is_object(cu) ? json_incref(cu) : NULL;
	res->clocks = json_is_object(ck) ? json_incref(ck) : NULL;
	status_set(ST(res), RUNCLIENT_OK, "", "%s", "");
	return 0;
}

int runclient_call_start(struct runclient *rc, const struct run_call_req *req,
			 struct run_call_res *res, double timeout_s, struct ka_err *e)
{
	memset(res, 0, sizeof *res);
	rc->started = util_now();
	if (rc->pending)
		return ka_err_set(e, "runclient_call_start: a call is already outstanding");
	if (!req || req->slot < 0 || req->slot >= RUN_MAX_SLOTS || req->n_inputs < 0 ||
	    req->n_inputs > RUN_MAX_TENSORS)
		return ka_err_set(e, "runclient_call: bad slot or request");
	if (ensure_alive(rc, e))
		return -1;
	if (req->phased && !rc->dev.phased_calls)
		return ka_err_set(e, "runclient_call: the runner %s has no phased calls", rc->path);
	const struct saved_load *s = &rc->slot[req->slot];
	if (!s->on)
		return ka_err_set(e, "runclient_call: slot %d is not loaded", req->slot);
	if (req->n_inputs > s->ts.n || (req->sample && req->n_outputs != s->ts.n - req->n_inputs))
		return ka_err_set(e,
				  "runclient_call: %d inputs / %d sample lists do not fit slot "
				  "%d's %d tensors",
				  req->n_inputs, req->n_outputs, req->slot, s->ts.n);
	double t0 = util_now();
	json_t *q = runclient_call_json(req, e);
	if (!q)
		return -1;
	struct ka_err se;
	/* A runner that died since its last reply shows as a broken pipe here;
	 * runclient_call_finish reaps it and reports the death. */
	rc->send_lost = proto_send(rc->to_fd, q, 0, NULL, NULL, &se) != 0;
	json_decref(q);
	rc->pending = true;
	rc->sent_at = util_now();
	rc->deadline = timeout_s > 0 ? t0 + timeout_s : 0;
	rc->call_timeout = timeout_s;
	res->send_s = rc->sent_at - t0;
	return 0;
}

/* A phased call's frame ph has arrived (phase, the number of frames seen so
 * far, must be ph - 1): on_phase, and after "ready" the "go", from which the
 * watchdog starts again. 0; -3 as exchange_lost (the runner went away);
 * -4 with e: the frame is out of order (the runner was killed). */
static int phase_frame(struct runclient *rc, const struct run_call_req *req,
		       struct run_call_res *res, int *phase, const char *ph, struct trace_times *tt,
		       char *why, size_t cap, struct ka_err *e)
{
	int want = !strcmp(ph, "ready")	     ? RUN_PHASE_READY
		   : !strcmp(ph, "replayed") ? RUN_PHASE_REPLAYED
					     : -1;
	if (!req->phased || want != *phase + 1) {
		kill_runner(rc);
		ka_err_set(e, "runner call: frame '%.40s' out of order", ph);
		return -4;
	}
	*phase = want;
	double t0 = util_now();
	if (req->on_phase)
		req->on_phase(req->phase_arg, (enum run_phase)want);
	double t1 = util_now();
	res->phase_wait_s += t1 - t0;
	if (want == RUN_PHASE_REPLAYED) {
		tt->replayed = t0;
		return 0;
	}
	tt->ready = t0;
	tt->go = t1;
	struct ka_err se;
	json_t *go = json_pack("{s:s}", "op", "go");
	int r = proto_send(rc->to_fd, go, 0, NULL, NULL, &se);
	json_decref(go);
	if (r)
		return exchange_lost(rc, -1, why, cap);
	rc->deadline = rc->call_timeout > 0 ? util_now() + rc->call_timeout : 0;
	return 0;
}

/* Read the frames of the outstanding call up to its reply, into *m. 0;
 * -2, -3 as exchange_lost; -4 with e (phase_frame, or a phased call
 * answered ok without both frames). */
static int call_frames(struct runclient *rc, const struct run_call_req *req,
		       struct run_call_res *res, struct proto_msg *m, struct trace_times *tt,
		       char *why, size_t cap, struct ka_err *e)
{
	int phase = 0;
	for (;;) {
		int r = exchange_recv(rc, rc->deadline, m, why, cap);
		if (r)
			return r;
		const char *ph = json_string_value(json_object_get(m->obj, "phase"));
		if (!ph) {
			if (req->phased && phase != RUN_PHASE_REPLAYED &&
			    json_is_true(json_object_get(m->obj, "ok"))) {
				proto_msg_free(m);
				ka_err_set(e, "runner call: a phased call was answered without "
					      "'ready' and 'replayed'");
				return -4;
			}
			return 0;
		}
		char name[48];
		snprintf(name, sizeof name, "%s", ph);
		proto_msg_free(m);
		if ((r = phase_frame(rc, req, res, &phase, name, tt, why, cap, e)))
			return r;
	}
}

int runclient_call_finish(struct runclient *rc, const struct run_call_req *req,
			  struct run_call_res *res, struct ka_err *e)
{
	if (!rc->pending)
		return ka_err_set(e, "runclient_call_finish: no call is outstanding");
	rc->pending = false;
	struct proto_msg m;
	char why[768] = "";
	struct trace_times tt = {.start = rc->started};
	int r = rc->send_lost ? exchange_lost(rc, -1, why, sizeof why)
			      : call_frames(rc, req, res, &m, &tt, why, sizeof why, e);
	double t1 = util_now();
	tt.reply = t1;
	trace_write(rc, "call", req->time || req->flush, req->phased, &tt);
	res->wall_s = t1 - rc->sent_at + res->send_s;
	if (r == -4)
		return -1;
	if (r == -2) {
		status_set(ST(res), RUNCLIENT_TIMEOUT, verdict_name(VERDICT_TIMEOUT),
			   "no reply within %.1f s; the runner was killed", rc->call_timeout);
		return 0;
	}
	if (r == -3) {
		status_set(ST(res), RUNCLIENT_VERDICT, verdict_name(VERDICT_RUNTIME_FAULT),
			   "the runner %s during the call", why);
		res->killed_outside = rc->died_of == SIGKILL;
		return 0;
	}
	r = runclient_parse_call(req, &rc->slot[req->slot].ts, &m, res, e);
	proto_msg_free(&m);
	if (!r)
		r = runclient_check_cupti(rc->dev.cupti, res, e);
	res->parse_s = util_now() - t1;
	if (r)
		run_call_res_free(res);
	return r;
}

int runclient_check_cupti(bool dev_cupti, const struct run_call_res *res, struct ka_err *e)
{
	if (dev_cupti && res->status == RUNCLIENT_OK && !res->cupti)
		return ka_err_set(e, "runner call: a result without its CUPTI record (the runner "
				     "watches every call with CUPTI)");
	return 0;
}

int runclient_call(struct runclient *rc, const struct run_call_req *req, struct run_call_res *res,
		   double timeout_s, struct ka_err *e)
{
	if (runclient_call_start(rc, req, res, timeout_s, e))
		return -1;
	return runclient_call_finish(rc, req, res, e);
}

void run_call_res_free(struct run_call_res *res)
{
	if (!res)
		return;
	for (int k = 0; k < RUN_MAX_TENSORS; k++) {
		free(res->out[k]);
		res->out[k] = NULL;
		res->out_len[k] = 0;
	}
	json_decref(res->cupti);
	json_decref(res->clocks);
	res->cupti = res->clocks = NULL;
}

/* ---- check (the device check of every element) ---- */

json_t *runclient_check_json(const struct run_check_req *q)
{
	json_t *params = json_array();
	for (int i = 0; i < q->n_params; i++)
		json_array_append_new(params, json_integer((json_int_t)q->params[i]));
	json_t *req = json_pack("{s:s,s:i,s:s,s:I,s:o,s:f,s:f,s:i}", "op", "check", "slot", q->slot,
				"cubin", q->cubin, "items", (json_int_t)q->items, "params", params,
				"atol", q->atol, "rtol", q->rtol, "n_inputs", q->n_inputs);
	json_t *smp = json_array();
	for (int o = 0; o < q->n_outputs; o++)
		json_array_append_new(smp, sample_json(q->sample_idx[o], q->n_sample[o]));
	json_object_set_new(req, "sample", smp);
	return req;
}

/* A double sent as its 64-bit pattern (exact, NaN included). */
static int get_bits(const json_t *o, const char *k, double *out)
{
	uint64_t b;
	if (proto_get_u64(o, k, &b))
		return -1;
	memcpy(out, &b, sizeof *out);
	return 0;
}

/* One output's entry of a check reply into co. 0 or -1. */
static int parse_check_out(const json_t *jo, struct run_check_out *co)
{
	json_t *c = json_object_get(jo, "checked"), *b = json_object_get(jo, "bad"),
	       *nf = json_object_get(jo, "nonfinite"), *mx = json_object_get(jo, "max_abs_error"),
	       *first = json_object_get(jo, "first");
	if (!json_is_integer(c) || !json_is_integer(b) || !json_is_integer(nf) ||
	    !json_is_number(mx) || !json_is_array(first) ||
	    json_array_size(first) > RUN_CHECK_FIRST)
		return -1;
	co->checked = json_integer_value(c);
	co->bad = json_integer_value(b);
	co->nonfinite = json_integer_value(nf);
	co->max_abs_error = json_number_value(mx);
	if (co->checked < 0 || co->bad < 0 || co->bad > co->checked || co->nonfinite < 0 ||
	    co->nonfinite > co->bad || (int64_t)json_array_size(first) > co->bad)
		return -1;
	co->n_first = (int)json_array_size(first);
	for (int k = 0; k < co->n_first; k++) {
		json_t *f = json_array_get(first, (size_t)k), *ix = json_object_get(f, "index");
		if (!json_is_integer(ix) || json_integer_value(ix) < 0 ||
		    json_integer_value(ix) >= co->checked || get_bits(f, "got", &co->got[k]) ||
		    get_bits(f, "gold", &co->gold[k]))
			return -1;
		co->index[k] = json_integer_value(ix);
		co->finite[k] = json_is_true(json_object_get(f, "finite"));
		if (!co->finite[k])
			co->got[k] = 0;
	}
	return 0;
}

int runclient_parse_check(const struct run_check_req *q, struct proto_msg *m,
			  struct run_check_res *res, struct ka_err *e)
{
	json_t *o = m->obj;
	if (!json_is_true(json_object_get(o, "ok")))
		return reply_error(o, "check", e);
	json_t *outs = json_object_get(o, "outputs");
	if (!json_is_array(outs) || json_array_size(outs) != (size_t)q->n_outputs ||
	    q->n_outputs > RUN_MAX_TENSORS || m->n_blobs != q->n_outputs)
		return ka_err_set(e, "runner check: reply does not hold %d outputs", q->n_outputs);
	res->n_outputs = q->n_outputs;
	res->gold_ms = json_number_value(json_object_get(o, "gold_ms"));
	res->compare_ms = json_number_value(json_object_get(o, "compare_ms"));
	for (int k = 0; k < q->n_outputs; k++) {
		if (parse_check_out(json_array_get(outs, (size_t)k), &res->out[k]))
			return ka_err_set(e, "runner check: output %d: malformed counts", k);
		if (m->blob_len[k] != (size_t)q->n_sample[k] * sizeof(double))
			return ka_err_set(e, "runner check: output %d: %zu bytes of gold, not %lld",
					  k, m->blob_len[k], (long long)q->n_sample[k] * 8);
		res->gold[k] = xmalloc(m->blob_len[k] ? m->blob_len[k] : 1);
		memcpy(res->gold[k], m->blob[k], m->blob_len[k]);
		res->n_gold[k] = q->n_sample[k];
	}
	return 0;
}

int runclient_check(struct runclient *rc, const struct run_check_req *req,
		    struct run_check_res *res, double timeout_s, struct ka_err *e)
{
	memset(res, 0, sizeof *res);
	if (!req || req->slot < 0 || req->slot >= RUN_MAX_SLOTS || !req->cubin ||
	    req->n_outputs < 1 || req->n_outputs > RUN_MAX_TENSORS || req->n_params < 0 ||
	    req->n_params > 16)
		return ka_err_set(e, "runclient_check: bad request");
	struct trace_times tt = {.start = util_now()};
	if (ensure_alive(rc, e))
		return -1;
	struct proto_msg m;
	char why[768] = "";
	double t0 = util_now();
	int r = exchange(rc, runclient_check_json(req), timeout_s, &m, why, sizeof why);
	res->wall_s = util_now() - t0;
	tt.reply = t0 + res->wall_s;
	trace_write(rc, "check", 0, 0, &tt);
	if (r == -2)
		return ka_err_set(e, "runner check: no reply within %.0f s; the runner was killed",
				  timeout_s);
	if (r)
		return ka_err_set(e, "runner check: the runner %s", why);
	r = runclient_parse_check(req, &m, res, e);
	proto_msg_free(&m);
	if (r)
		run_check_res_free(res);
	return r;
}

void run_check_res_free(struct run_check_res *res)
{
	if (!res)
		return;
	for (int k = 0; k < RUN_MAX_TENSORS; k++) {
		free(res->gold[k]);
		res->gold[k] = NULL;
		res->n_gold[k] = 0;
	}
}

int runclient_restart(struct runclient *rc, struct ka_err *e)
{
	rc->pending = false;
	kill_runner(rc);
	return ensure_alive(rc, e);
}

void runclient_forget(struct runclient *rc)
{
	if (!rc)
		return;
	rc->pending = false;
	kill_runner(rc);
	for (int s = 0; s < RUN_MAX_SLOTS; s++)
		saved_free(&rc->slot[s]);
}

int runclient_restarts(const struct runclient *rc)
{
	return rc->starts > 0 ? rc->starts - 1 : 0;
}

int runclient_pid(const struct runclient *rc)
{
	return rc->alive ? (int)rc->pid : -1;
}

void runclient_set_load_timeout(struct runclient *rc, double seconds)
{
	if (seconds > 0)
		rc->load_timeout = seconds;
}

void runclient_stop(struct runclient *rc)
{
	if (!rc)
		return;
	if (rc->pending) /* nobody will read that reply */
		kill_runner(rc);
	if (rc->alive) {
		struct ka_err e;
		json_t *q = json_pack("{s:s}", "op", "quit");
		if (!proto_send(rc->to_fd, q, 0, NULL, NULL, &e)) {
			struct proto_msg m;
			if (!proto_recv(rc->from_fd, 2.0, &m, &e))
				proto_msg_free(&m);
		}
		json_decref(q);
		reap(rc, 2.0, NULL, 0);
	}
	for (int s = 0; s < RUN_MAX_SLOTS; s++)
		saved_free(&rc->slot[s]);
	if (rc->cache[0]) {
		kill_runner(rc); /* nothing writes the folder while it goes */
		util_rmtree(rc->cache);
	}
	json_decref(rc->dev_raw);
	pthread_mutex_destroy(&rc->log_mu);
	free(rc);
}
