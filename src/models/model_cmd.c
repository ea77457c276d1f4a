/* model_cmd.c: the external-command backend, spec cmd:<shell command>. The
 * command runs under /bin/sh -c once per request with the prompt on stdin;
 * its stdout is the completion. It also gets KA_MODEL_TASK, KA_MODEL_SAMPLE,
 * KA_MODEL_SEED, KA_MODEL_TEMPERATURE, KA_MODEL_TOP_P, KA_MODEL_MAX_TOKENS and
 * KA_MODEL_SYSTEM_FILE (a file holding the system prompt) in its environment.
 * Exit 0 is a completion, exit 75 (EX_TEMPFAIL) asks for a retry, anything
 * else is a failure of that sample. The command is trusted as the user's own;
 * it is not sandboxed. Also model_shell, the subprocess runner that the
 * Bedrock credential_process uses. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model_backend.h"

#define CMD_EX_TEMPFAIL 75

/* A temporary file holding data, opened for reading at offset 0 (unlinked
 * already), or -1. */
static int temp_fd(const char *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path = xasprintf("%s/ka-model-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0) {
		unlink(path);
		size_t done = 0;
		while (done < len) {
			ssize_t w = write(fd, data + done, len - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				close(fd);
				fd = -1;
				break;
			}
			done += (size_t)w;
		}
		if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			fd = -1;
		}
	}
	free(path);
	return fd;
}

int model_shell(const char *command, const char *stdin_data, size_t stdin_len,
		char *const *extra_env, double timeout_s, size_t cap, char **out, size_t *out_len,
		char *errline, size_t errline_cap)
{
	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (errline_cap)
		errline[0] = 0;
	int in_fd = temp_fd(stdin_data ? stdin_data : "", stdin_data ? stdin_len : 0);
	if (in_fd < 0) {
		snprintf(errline, errline_cap, "cannot set up the command: %s", strerror(errno));
		return -1;
	}
	char *const argv[] = {"/bin/sh", "-c", (char *)command, NULL};
	struct util_run_opts o = {.env_add = extra_env,
				  .timeout_s = timeout_s,
				  .out_cap = cap,
				  .err_cap = errline_cap ? errline_cap - 1 : 0,
				  .stdin_fd = in_fd,
				  .kill_at_cap = 1};
	struct util_run_result r;
	struct ka_err e;
	int rc = util_run_child(argv, &o, &r, &e);
	close(in_fd);
	if (rc) {
		snprintf(errline, errline_cap, "%s", e.msg);
		return -1;
	}
	if (errline_cap) {
		/* the first line of stderr */
		snprintf(errline, errline_cap, "%s", r.err.s);
		char *nl = strchr(errline, '\n');
		if (nl)
			*nl = 0;
	}
	rc = r.out_truncated ? -2 : r.code;
	if (out_len)
		*out_len = r.out.len;
	*out = util_buf_take(&r.out);
	util_run_result_free(&r);
	return rc;
}

struct cmd {
	char *command;
};

static int cmd_open(struct model *m, const char *arg, struct ka_err *e)
{
	while (*arg == ' ')
		arg++;
	if (!*arg)
		return ka_err_set(e, "cmd: empty command (cmd:<shell command>)");
	struct cmd *c = xcalloc(1, sizeof *c);
	c->command = xstrdup(arg);
	m->impl = c;
	return 0;
}

static void cmd_answer(struct model *m, const struct model_request *r, int64_t seed,
		       struct model_reply *rep)
{
	struct cmd *c = m->impl;
	const char *sys = r->system ? r->system : "";
	int sys_fd = -1;
	char *sys_path = NULL;
	{
		const char *dir = getenv("TMPDIR");
		sys_path = xasprintf("%s/ka-model-system-XXXXXX", dir && *dir ? dir : "/tmp");
		sys_fd = mkostemp(sys_path, O_CLOEXEC);
		if (sys_fd < 0 || write(sys_fd, sys, strlen(sys)) != (ssize_t)strlen(sys)) {
			model_fail(rep, "cmd", "cannot write the system prompt file: %s",
				   strerror(errno));
			if (sys_fd >= 0) {
				close(sys_fd);
				unlink(sys_path);
			}
			free(sys_path);
			return;
		}
		close(sys_fd);
	}
	char *env[8];
	env[0] = xasprintf("KA_MODEL_TASK=%s", r->task ? r->task : "");
	env[1] = xasprintf("KA_MODEL_SAMPLE=%d", r->sample);
	env[2] = xasprintf("KA_MODEL_SEED=%lld", (long long)seed);
	env[3] = xasprintf("KA_MODEL_TEMPERATURE=%g", m->p.temperature);
	env[4] = xasprintf("KA_MODEL_TOP_P=%g", m->p.top_p);
	env[5] = xasprintf("KA_MODEL_MAX_TOKENS=%d", m->p.max_tokens);
	env[6] = xasprintf("KA_MODEL_SYSTEM_FILE=%s", sys_path);
	env[7] = NULL;
	const char *prompt = r->prompt ? r->prompt : "";
	for (int attempt = 1;; attempt++) {
		char *out = NULL, errline[200];
		size_t len = 0;
		double t0 = util_now();
		int rc = model_shell(c->command, prompt, strlen(prompt), env, m->p.timeout_s,
				     m->p.max_reply_bytes, &out, &len, errline, sizeof errline);
		rep->latency_s = util_now() - t0;
		rep->attempts = attempt;
		const char *nul = rc == 0 ? memchr(out, 0, len) : NULL;
		if (rc == 0 && !nul) {
			rep->ok = 1;
			rep->text = out;
			break;
		}
		if (nul || rc == -2) {
			/* The sample's outcome, recorded once: no code, and why. */
			rep->ok = 1;
			rep->text = nul ? out : xstrdup("");
			if (!nul)
				free(out);
			snprintf(rep->finish, sizeof rep->finish, "%s",
				 nul ? MODEL_FINISH_NUL : MODEL_FINISH_OVER_CAP);
			if (nul)
				snprintf(rep->error, sizeof rep->error,
					 "cmd: reply holds NUL bytes at offset %zu",
					 (size_t)(nul - out));
			else
				snprintf(rep->error, sizeof rep->error,
					 "cmd: reply over the cap of %zu bytes",
					 m->p.max_reply_bytes);
			break;
		}
		free(out);
		if (rc == 124)
			model_fail(rep, "cmd", "no output within %g s (killed)", m->p.timeout_s);
		else if (rc == -1)
			model_fail(rep, "cmd", "%s", errline);
		else
			model_fail(rep, "cmd", "'%s' exited with status %d%s%s", c->command, rc,
				   errline[0] ? ": " : "", errline);
		if (rc != CMD_EX_TEMPFAIL || attempt > m->p.max_retries)
			break;
		double d = m->p.retry_base_s * (double)(1 << (attempt < 10 ? attempt - 1 : 9));
		if (d > m->p.retry_max_s)
			d = m->p.retry_max_s;
		struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
		nanosleep(&ts, NULL);
	}
	unlink(sys_path);
	free(sys_path);
	for (int i = 0; env[i]; i++)
		free(env[i]);
}

static void cmd_close(struct model *m)
{
	struct cmd *c = m->impl;
	free(c->command);
	free(c);
}

const struct model_backend model_cmd_backend = {
	.name = "cmd",
	.http = 0,
	.cacheable = 1,
	.open = cmd_open,
	.answer = cmd_answer,
	.close = cmd_close,
};
