/* goldclient.c: start ka-goldbox for one gold computation and judge its
 * reply (see goldclient.h). */
#include "goldclient.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "goldwire.h"
#include "jail.h"

_Static_assert(GOLDWIRE_MAX_PARAMS == KA_MAX_PARAMS, "goldwire.h follows expr.h");
_Static_assert(GOLDWIRE_MAX_TENSORS == KA_MAX_TENSORS, "goldwire.h follows task.h");

static char box_path[PATH_MAX];

static void box_path_init(void)
{
	snprintf(box_path, sizeof box_path, "%s/ka-goldbox", util_exe_dir());
	if (access(box_path, X_OK) != 0) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", util_exe_dir());
		snprintf(box_path, sizeof box_path, "%s/ka-goldbox", dirname(dir));
	}
	if (access(box_path, X_OK) != 0)
		box_path[0] = 0;
}

const char *goldclient_program(struct ka_err *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, box_path_init);
	if (!box_path[0]) {
		ka_err_set(e,
			   "gold: no ka-goldbox beside %s (build it with make): it computes the "
			   "gold of tasks that are not trusted bank code",
			   util_exe_dir());
		return NULL;
	}
	return box_path;
}

/* The request in a memory file, positioned at its start: the fd, or -1 with
 * e (no memory for it: the grader's failure). */
static int request_file(const struct goldclient_call *c, struct ka_err *e)
{
	struct goldwire_req q;
	memset(&q, 0, sizeof q);
	q.magic = GOLDWIRE_MAGIC;
	q.lazy = c->lazy;
	q.all = c->items == NULL;
	q.n_inputs = c->n_inputs;
	q.n_outputs = c->n_outputs;
	q.n_items = c->n_items;
	q.item_count = c->item_count;
	memcpy(q.P, c->P, sizeof q.P);
	for (int k = 0; k < c->n_inputs; k++)
		q.in_bytes[k] = c->lazy ? 0 : c->in_bytes[k];
	for (int j = 0; j < c->n_outputs; j++) {
		q.out_numel[j] = c->out_numel[j];
		q.out_per_item[j] = c->out_per_item[j];
	}
	int fd = memfd_create("ka-gold-request", MFD_CLOEXEC);
	if (fd < 0) {
		ka_err_set(e, "gold: memfd_create: %s", strerror(errno));
		return -1;
	}
	int bad = util_write_fd(fd, &q, sizeof q) ||
		  (c->items && util_write_fd(fd, c->items, (size_t)c->n_items * sizeof *c->items));
	if (c->lazy)
		bad = bad || util_write_fd(fd, c->src, (size_t)c->n_inputs * sizeof *c->src);
	for (int k = 0; !c->lazy && !bad && k < c->n_inputs; k++)
		bad = util_write_fd(fd, c->inputs[k], c->in_bytes[k]);
	if (bad || lseek(fd, 0, SEEK_SET) != 0) {
		ka_err_set(e, "gold: writing the box's request: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The reply's values into the outputs: 0, or 1 with why. */
static int take_values(const struct goldclient_call *c, const char *buf, size_t len,
		       int64_t n_values, double *const *outputs, double *compute_s, double wall_s,
		       char *why, size_t cap)
{
	size_t want = 2 * sizeof(uint64_t) + sizeof(struct goldwire_head) +
		      (size_t)n_values * sizeof(double);
	struct goldwire_head h = {0, 0, 0};
	uint64_t end = 0;
	if (len == want) {
		memcpy(&h, buf + sizeof(uint64_t), sizeof h);
		memcpy(&end, buf + len - sizeof end, sizeof end);
	}
	if (len != want || h.magic != GOLDWIRE_HEAD || h.n_values != n_values ||
	    end != GOLDWIRE_END) {
		snprintf(why, cap, "returned a malformed reply (%zu bytes where %zu were due)", len,
			 want);
		return 1;
	}
	const char *v = buf + sizeof(uint64_t) + sizeof h;
	for (int j = 0; j < c->n_outputs; j++)
		for (int64_t i = 0; i < c->n_items; i++) {
			int64_t item = c->items ? c->items[i] : i, per = c->out_per_item[j];
			double *dst = outputs[j] + item * per;
			memcpy(dst, v, (size_t)per * sizeof *dst);
			v += (size_t)per * sizeof *dst;
			for (int64_t k = 0; k < per; k++)
				if (!isfinite(dst[k])) {
					snprintf(why, cap,
						 "is not finite (%g) at output %d, element %lld",
						 dst[k], j, (long long)(item * per + k));
					return 1;
				}
		}
	*compute_s = isfinite(h.compute_s) && h.compute_s > 0
			     ? (h.compute_s < wall_s ? h.compute_s : wall_s)
			     : 0;
	return 0;
}

int goldclient_run(struct goldclient_call *c, double *const *outputs, double *compute_s, char *why,
		   size_t cap, struct ka_err *e)
{
	*compute_s = 0;
	why[0] = 0;
	const char *box = goldclient_program(e);
	if (!box)
		return -1;
	int64_t n_values = 0;
	for (int j = 0; j < c->n_outputs; j++)
		n_values += c->n_items * c->out_per_item[j];
	size_t want = 2 * sizeof(uint64_t) + sizeof(struct goldwire_head) +
		      (size_t)n_values * sizeof(double);
	int fd = request_file(c, e);
	if (fd < 0)
		return -1;
	char cpu[32], omp[32];
	snprintf(cpu, sizeof cpu, "%.0f",
		 ceil(c->deadline_s * (c->threads > 0 ? c->threads : 1)) + 1);
	snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", c->threads > 0 ? c->threads : 1);
	char *argv[] = {(char *)box, (char *)c->so, cpu, NULL};
	/* None of ka's environment: the box runs a model's code. */
	static const char *const keep[] = {
		"LD_LIBRARY_PATH=", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};
	char **kept = util_env_keep(keep);
	size_t n_env = 0;
	while (kept[n_env])
		n_env++;
	char **env = xcalloc(n_env + 2, sizeof *env);
	memcpy(env, kept, n_env * sizeof *env);
	env[n_env] = omp;
	free(kept);
	struct util_run_opts ro = {.timeout_s = c->deadline_s,
				   .out_cap = want + 1,
				   .err_cap = 4096,
				   .stdin_fd = fd,
				   .kill_at_cap = 1,
				   .env = env};
	struct util_run_result rr;
	double t0 = util_now();
	int started = util_run_child(argv, &ro, &rr, e);
	double wall = util_now() - t0;
	close(fd);
	free(env);
	if (started)
		return -1;
	c->killed_outside = util_run_killed_outside(&rr);
	char sum[400], msg[200]; /* the box's message, cut: the evidence must keep the shape */
	util_log_summary(rr.err.s, sum, sizeof sum);
	jail_log_escape(sum, strlen(sum), msg, sizeof msg);
	uint64_t ready = 0;
	if (rr.out.len >= sizeof ready)
		memcpy(&ready, rr.out.s, sizeof ready);
	int rc = 1;
	if (ready != GOLDWIRE_READY) {
		rc = ka_err_set(
			e, "gold: ka-goldbox failed before it ran the reference (status %d): %s",
			rr.code, msg[0] ? msg : "no message");
	} else if (rr.out_truncated) {
		snprintf(why, cap,
			 "wrote more than its reply's %zu bytes on its stdout (killed): a "
			 "malformed reply",
			 want);
	} else if (rr.timed_out) {
		snprintf(why, cap, "ran over its deadline of %.1f s (killed)", c->deadline_s);
	} else if (WIFSIGNALED(rr.wait_status)) {
		int sig = WTERMSIG(rr.wait_status);
		snprintf(why, cap, "was killed by signal %d (%s)%s%s", sig, strsignal(sig),
			 msg[0] ? ": " : "", msg);
	} else if (rr.code == 4) {
		/* The box could not load what gold.c built: a damaged cache entry. */
		unlink(c->so);
		rc = ka_err_set(e,
				"gold: %s does not load in ka-goldbox (removed from the cache): %s",
				c->so, msg);
	} else if (rr.code != 0) {
		snprintf(why, cap, "failed in ka-goldbox (exit %d): %s", rr.code, msg);
	} else {
		rc = take_values(c, rr.out.s, rr.out.len, n_values, outputs, compute_s, wall, why,
				 cap);
	}
	util_run_result_free(&rr);
	return rc;
}
