/* recclient.c: run a recorder on a candidate and judge what comes back
 * (recclient.h). The recorder's output is read as candidate output: only the
 * lines it wrote before "stage loading" (before the candidate was loaded) are
 * believed as harness messages; everything after is bounded, parsed and
 * checked. It never loads candidate code. */
#include "recclient.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clopts.h"
#include "clsrc.h"
#include "target.h"

#define RECCLIENT_MAX_SO TARGET_MAX_OBJECT
#define SANDBOX_EXIT_FORBIDDEN 97 /* src/recorder/sandbox.h */

/* ---- the request ---- */

char *recclient_request_json(const char *target, int n_inputs, int n_outputs,
			     const struct recclient_tensor *tensors, int n_params,
			     const char *const *param_names, const int64_t *param_values,
			     const char *device_json, struct ka_err *e)
{
	if (n_inputs < 0 || n_outputs < 0 || n_inputs + n_outputs > 48 || n_params < 0 ||
	    n_params > 64) {
		ka_err_set(e, "record request: too many tensors or parameters");
		return NULL;
	}
	json_t *dev;
	if (device_json) {
		json_error_t je;
		dev = json_loads(device_json, 0, &je);
		if (!json_is_object(dev)) {
			json_decref(dev);
			ka_err_set(e, "record request: device is not a JSON object (%s)", je.text);
			return NULL;
		}
	} else {
		dev = json_object();
	}
	json_t *ts = json_array();
	for (int i = 0; i < n_inputs + n_outputs; i++) {
		const struct recclient_tensor *t = &tensors[i];
		if (t->ndim < 0 || t->ndim > KA_MAX_DIMS || !t->name) {
			json_decref(ts);
			json_decref(dev);
			ka_err_set(e, "record request: tensor %d: bad ndim or name", i);
			return NULL;
		}
		json_t *shape = json_array();
		for (int d = 0; d < t->ndim; d++)
			json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
		json_array_append_new(ts, json_pack("{s:s,s:i,s:i,s:o,s:I,s:I}", "name", t->name,
						    "dtype", (int)t->dtype, "ndim", (int)t->ndim,
						    "shape", shape, "numel", (json_int_t)t->numel,
						    "bytes", (json_int_t)t->bytes));
	}
	json_t *names = json_array(), *values = json_array();
	for (int i = 0; i < n_params; i++) {
		json_array_append_new(names, json_string(param_names[i]));
		json_array_append_new(values, json_integer((json_int_t)param_values[i]));
	}
	json_t *root =
		json_pack("{s:s,s:i,s:o,s:{s:o,s:o},s:o}", "target", target, "n_inputs", n_inputs,
			  "tensors", ts, "params", "names", names, "values", values, "device", dev);
	if (!root) {
		ka_err_set(e, "record request: cannot build the JSON (a name is not UTF-8?)");
		return NULL;
	}
	char *s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

/* ---- plan policy ---- */

/* Line number of the first directive that reads a file in t (spliced:
 * clsrc_splice), or 0. Comments count as white space and string literals
 * are skipped, as the preprocessor does, so neither a comment between '#'
 * and 'include' nor a '%:' digraph hides one. */
static int first_file_directive(const char *t, char *which, size_t cap)
{
	int line = 1, at_start = 1, found = 0;
	size_t i = 0;
	while (t[i] && !found) {
		char c = t[i];
		if (c == '\n') {
			at_start = 1;
			line++;
			i++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
		} else if (c == '/' && t[i + 1] == '*') {
			for (i += 2; t[i] && !(t[i] == '*' && t[i + 1] == '/'); i++)
				line += t[i] == '\n';
			i += t[i] ? 2 : 0;
		} else if (c == '/' && t[i + 1] == '/') {
			while (t[i] && t[i] != '\n')
				i++;
		} else if (at_start && (c == '#' || (c == '%' && t[i + 1] == ':'))) {
			i += c == '#' ? 1 : 2;
			for (;;) {
				while (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' ||
				       t[i] == '\f' || t[i] == '\v')
					i++;
				if (t[i] == '/' && t[i + 1] == '*') {
					for (i += 2; t[i] && !(t[i] == '*' && t[i + 1] == '/'); i++)
						line += t[i] == '\n';
					i += t[i] ? 2 : 0;
					continue;
				}
				break;
			}
			size_t s = i;
			while ((t[i] >= 'a' && t[i] <= 'z') || t[i] == '_')
				i++;
			size_t len = i - s;
			static const char *const bad[] = {"include", "include_next", "import",
							  "embed"};
			for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
				if (len == strlen(bad[k]) && !strncmp(t + s, bad[k], len)) {
					snprintf(which, cap, "#%s", bad[k]);
					found = line;
				}
			at_start = 0;
		} else if (c == '"' || c == '\'') {
			for (i++; t[i] && t[i] != c && t[i] != '\n'; i++)
				if (t[i] == '\\' && t[i + 1])
					i++;
			i += t[i] == c;
			at_start = 0;
		} else {
			at_start = 0;
			i++;
		}
	}
	return found;
}

int recclient_check_plan(const struct plan *p, char *detail, size_t cap)
{
	for (int i = 0; i < p->n_programs; i++) {
		char bad[256];
		if (!clopts_allowed(p->options[i], bad, sizeof bad)) {
			snprintf(
				detail, cap,
				"program %d: build option '%s' is not allowed (only -D, -U, -cl-*, "
				"-w, -Werror, -g)",
				i, bad);
			return -1;
		}
		if (!p->sources[i])
			continue;
		char why[128];
		char *t = clsrc_splice(p->sources[i], why, sizeof why);
		if (!t) {
			snprintf(detail, cap,
				 "program %d, %s: not allowed in OpenCL C (compilers read it "
				 "differently, so no check could see what the compiler does)",
				 i, why);
			return -1;
		}
		char which[32];
		int line = first_file_directive(t, which, sizeof which);
		char what[96];
		int aline = line ? 0 : clsrc_inline_asm(t, p->options[i], what, sizeof what);
		free(t);
		if (line) {
			snprintf(detail, cap,
				 "program %d, line %d: %s reads a file on the grader's machine; "
				 "kernels must be self-contained",
				 i, line, which);
			return -1;
		}
		if (aline) {
			snprintf(detail, cap,
				 "program %d, line %d: %s is not allowed in OpenCL C (it would run "
				 "as native code in the runner)",
				 i, aline, what);
			return -1;
		}
	}
	return 0;
}

/* ---- running the recorder ---- */

static void set_verdict(struct recclient_result *r, const char *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_verdict(struct recclient_result *r, const char *v, const char *fmt, ...)
{
	snprintf(r->verdict, sizeof r->verdict, "%s", v);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof r->detail, fmt, ap);
	va_end(ap);
}

static int copy_candidate(const char *so_path, const char *dst, struct ka_err *e)
{
	char *data = NULL;
	size_t len = 0;
	if (util_read_file(so_path, RECCLIENT_MAX_SO, &data, &len, e))
		return -1;
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		free(data);
		return ka_err_set(e, "record: %s: %s", dst, strerror(errno));
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(data);
	if (close(fd) != 0 || off != len)
		return ka_err_set(e, "record: cannot write %s", dst);
	return 0;
}

static const char *sig_name(int sig, char *buf, size_t cap)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, cap, "SIG%s", abbrev);
	else
		snprintf(buf, cap, "signal %d", sig);
	return buf;
}

/* The next line of s (NUL-terminated) into line, advancing *pos. */
static int next_line(const char *s, size_t len, size_t *pos, const char **line, size_t *n)
{
	if (*pos >= len)
		return 0;
	const char *start = s + *pos;
	const char *nl = memchr(start, '\n', len - *pos);
	*line = start;
	*n = nl ? (size_t)(nl - start) : len - *pos;
	*pos += *n + (nl ? 1 : 0);
	return 1;
}

/* "verdict NAME\tDETAIL": 1 if a line is that, with name and detail copied. */
static int parse_verdict_line(const char *l, size_t n, char *name, size_t ncap, char *detail,
			      size_t dcap)
{
	if (n < 8 || strncmp(l, "verdict ", 8))
		return 0;
	const char *v = l + 8;
	const char *tab = memchr(v, '\t', n - 8);
	size_t vl = tab ? (size_t)(tab - v) : n - 8;
	snprintf(name, ncap, "%.*s", (int)(vl < ncap - 1 ? vl : ncap - 1), v);
	if (tab) {
		size_t dl = n - (size_t)(tab + 1 - l);
		snprintf(detail, dcap, "%.*s", (int)(dl < dcap - 1 ? dl : dcap - 1), tab + 1);
	} else {
		detail[0] = 0;
	}
	return 1;
}

/* Candidate-controlled text (n bytes) as a bounded, escaped excerpt in
 * quotes: recorder: "...". Printable ASCII stays, '"' and '\\' are escaped,
 * every other byte is \xNN; at most RECCLIENT_EXCERPT bytes of t are used. */
static void set_excerpt(struct recclient_result *r, const char *verdict, const char *t, size_t n)
{
	char out[RECCLIENT_EXCERPT * 4 + 64];
	size_t o = 0;
	size_t use = n < RECCLIENT_EXCERPT ? n : RECCLIENT_EXCERPT;
	o += (size_t)snprintf(out, sizeof out, "recorder: \"");
	for (size_t i = 0; i < use; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, sizeof out - o, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
	}
	snprintf(out + o, sizeof out - o, "\"%s", n > use ? " [cut]" : "");
	set_verdict(r, verdict, "%s", out);
}

static void keep_log(struct recclient_result *r, const struct util_buf *err)
{
	const char *s = err->s;
	size_t n = err->len;
	const char *sb = strstr(s, "ka-record: sandbox: ");
	if (sb) {
		sb += strlen("ka-record: ");
		size_t l = strcspn(sb, "\n");
		snprintf(r->sandbox, sizeof r->sandbox, "%.*s", (int)l, sb);
	}
	size_t from = n > sizeof r->log - 1 ? n - (sizeof r->log - 1) : 0;
	snprintf(r->log, sizeof r->log, "%s", s + from);
}

static void judge(const struct util_buf *out, int truncated, int status, int timed_out,
		  double timeout_s, const char *target, struct plan *plan,
		  struct recclient_result *r)
{
	char sig[32];
	if (timed_out) {
		set_verdict(r, RECCLIENT_TIMEOUT, "host code ran for more than %.1f s (wall clock)",
			    timeout_s);
		return;
	}
	if (WIFSIGNALED(status)) {
		int s = WTERMSIG(status);
		if (s == SIGSYS)
			set_verdict(r, RECCLIENT_FORBIDDEN,
				    "killed by SIGSYS: a system call denied by the sandbox (its "
				    "report was suppressed)");
		else if (s == SIGXCPU)
			set_verdict(r, RECCLIENT_TIMEOUT, "host code exceeded its CPU time limit");
		else if (s == SIGXFSZ)
			set_verdict(r, RECCLIENT_FORBIDDEN, "host code tried to grow a file");
		else
			set_verdict(r, RECCLIENT_RUNTIME_FAULT, "host code crashed: %s (%s)",
				    sig_name(s, sig, sizeof sig), strsignal(s));
		return;
	}
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	/* After "stage loading": the first result line. */
	const char *s = out->s;
	size_t pos = 0, n;
	const char *line;
	while (next_line(s, out->len, &pos, &line, &n))
		if (n == 13 && !strncmp(line, "stage loading", 13))
			break;
	char name[32], detail[RECCLIENT_DETAIL_MAX];
	if (!next_line(s, out->len, &pos, &line, &n)) {
		if (code == SANDBOX_EXIT_FORBIDDEN)
			set_verdict(r, RECCLIENT_FORBIDDEN, "a system call denied by the sandbox");
		else
			set_verdict(r, RECCLIENT_RUNTIME_FAULT,
				    "host code exited with status %d instead of returning from "
				    "ka_launch",
				    code);
		return;
	}
	if (parse_verdict_line(line, n, name, sizeof name, detail, sizeof detail)) {
		if (strcmp(name, RECCLIENT_RECORD_ERROR) && strcmp(name, RECCLIENT_FORBIDDEN))
			set_excerpt(r, RECCLIENT_RECORD_ERROR, "malformed verdict", 17);
		else
			set_excerpt(r, name, detail, strlen(detail));
		return;
	}
	if (n != 4 || strncmp(line, "plan", 4)) {
		set_verdict(r, RECCLIENT_RECORD_ERROR, "the recorder's output is malformed");
		return;
	}
	if (truncated) {
		set_verdict(r, RECCLIENT_RECORD_ERROR, "the launch plan is over %u bytes",
			    RECCLIENT_MAX_OUTPUT);
		return;
	}
	struct ka_err pe = {{0}};
	if (plan_read(s + pos, out->len - pos, plan, &pe)) {
		char m[KA_ERRLEN + 64];
		snprintf(m, sizeof m, "the launch plan is malformed: %s", pe.msg);
		set_excerpt(r, RECCLIENT_RECORD_ERROR, m, strlen(m));
		return;
	}
	if (strcmp(plan->target, target)) {
		char m[128];
		snprintf(m, sizeof m, "the plan is for target '%.16s', not '%s'", plan->target,
			 target);
		set_excerpt(r, RECCLIENT_RECORD_ERROR, m, strlen(m));
		plan_free(plan);
		return;
	}
	if (recclient_check_plan(plan, detail, sizeof detail)) {
		plan_free(plan);
		set_verdict(r, RECCLIENT_FORBIDDEN, "%s", detail);
		return;
	}
	if (plan->status != 0) {
		set_verdict(r, RECCLIENT_LAUNCH_ERROR, "ka_launch returned %d", plan->status);
		return;
	}
	int launches = 0;
	for (int i = 0; i < plan->n_ops; i++)
		launches += plan->ops[i].kind == PLAN_OP_LAUNCH;
	if (!launches) {
		set_verdict(r, RECCLIENT_LAUNCH_ERROR,
			    "no kernel launched: ka_launch returned 0 "
			    "without enqueueing a kernel");
		return;
	}
	set_verdict(r, RECCLIENT_OK, "%s", "");
}

int recclient_run(const char *recorder_bin, const char *so_path, const char *request_json,
		  double timeout_s, struct plan *plan, struct recclient_result *r, struct ka_err *e)
{
	double t0 = util_now();
	memset(plan, 0, sizeof *plan);
	memset(r, 0, sizeof *r);
	if (access(recorder_bin, X_OK) != 0)
		return ka_err_set(e, "record: recorder %s: %s", recorder_bin, strerror(errno));
	char target[16] = "";
	{
		json_error_t je;
		json_t *req = json_loads(request_json, 0, &je);
		const char *t = json_string_value(json_object_get(req, "target"));
		if (!t || strlen(t) >= sizeof target) {
			json_decref(req);
			return ka_err_set(e, "record: the request has no target");
		}
		snprintf(target, sizeof target, "%s", t);
		json_decref(req);
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096], root[4200], so[4300], req[4300];
	snprintf(dir, sizeof dir, "%s/ka-rec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return ka_err_set(e, "record: mkdtemp %s: %s", dir, strerror(errno));
	snprintf(root, sizeof root, "%s/root", dir);
	snprintf(so, sizeof so, "%s/candidate.so", root);
	snprintf(req, sizeof req, "%s/request.json", dir);
	int rc = -1;
	struct util_run_result run = {0};
	/* the root must be searchable, the object readable, by uid 65534 (the
	 * sandbox's identity when it is real root without a user namespace) */
	if (mkdir(root, 0711) != 0 || chmod(root, 0711) != 0) {
		ka_err_set(e, "record: mkdir %s: %s", root, strerror(errno));
		goto out;
	}
	struct stat sst;
	if (stat(so_path, &sst) == 0 && (uint64_t)sst.st_size > RECCLIENT_MAX_SO) {
		/* the candidate's source made it so (a large initialised array):
		 * its verdict, not the harness's failure */
		set_verdict(r, RECCLIENT_RECORD_ERROR,
			    "the host code's object is %lld bytes, over the cap of %u MiB",
			    (long long)sst.st_size, RECCLIENT_MAX_SO >> 20);
		rc = 0;
		goto out;
	}
	if (copy_candidate(so_path, so, e) ||
	    util_write_file(req, request_json, strlen(request_json), e))
		goto out;
	char tbuf[32];
	snprintf(tbuf, sizeof tbuf, "%.3f", timeout_s);
	char *argv[] = {(char *)recorder_bin, "--so", so,  "--request", req,
			"--timeout",	      tbuf,   NULL};
	/* The recorder runs model code: exec'd with none of ka's environment,
	 * whose strings would otherwise lie at the top of its stack (clearenv
	 * in the sandbox drops only the pointers) for the host code to read.
	 * Only the loader's path (the recorder's own libraries) and the
	 * sanitizers' options go with it. */
	static const char *const keep[] = {
		"LD_LIBRARY_PATH=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};
	char **env = util_env_keep(keep);
	struct util_run_opts ro = {.timeout_s = timeout_s > 0 ? timeout_s : 10,
				   .out_cap = RECCLIENT_MAX_OUTPUT,
				   .err_cap = RECCLIENT_MAX_LOG,
				   .env = env};
	struct ka_err re;
	int started = util_run_child(argv, &ro, &run, &re);
	free(env);
	if (started) {
		ka_err_set(e, "record: %s", re.msg);
		goto out;
	}
	const struct util_buf *out = &run.out;
	int status = run.wait_status, timed_out = run.timed_out;
	r->killed_outside = util_run_killed_outside(&run);
	keep_log(r, &run.err);
	/* Lines before "stage loading" come from the recorder alone. */
	size_t pos = 0, n;
	const char *line;
	char name[32], detail[RECCLIENT_DETAIL_MAX];
	int loaded = 0, decided = 0;
	while (!loaded && !decided && next_line(out->s, out->len, &pos, &line, &n)) {
		if (n == 13 && !strncmp(line, "stage loading", 13)) {
			loaded = 1;
		} else if (n >= 8 && !strncmp(line, "harness ", 8)) {
			ka_err_set(e, "%s: %.*s", recorder_bin, (int)(n - 8 < 400 ? n - 8 : 400),
				   line + 8);
			goto out;
		} else if (parse_verdict_line(line, n, name, sizeof name, detail, sizeof detail)) {
			set_verdict(r, name, "%s", detail);
			decided = 1;
		}
	}
	if (!loaded && !decided) {
		if (timed_out || WIFSIGNALED(status) || WEXITSTATUS(status) != 0) {
			char sig[32];
			ka_err_set(e, "%s failed before loading the candidate (%s)", recorder_bin,
				   timed_out ? "timeout"
				   : WIFSIGNALED(status)
					   ? sig_name(WTERMSIG(status), sig, sizeof sig)
					   : "non-zero exit");
			goto out;
		}
		ka_err_set(e, "%s wrote no result", recorder_bin);
		goto out;
	}
	if (!decided)
		judge(out, run.out_truncated, status, timed_out, timeout_s, target, plan, r);
	rc = 0;
out:
	util_run_result_free(&run);
	util_rmtree(dir);
	r->wall_s = util_now() - t0;
	return rc;
}
