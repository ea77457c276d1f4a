/* rundir.c: a track's output folder (see rundir.h): the lock file, the
 * removal of an earlier run for --fresh, and the journal with the run's
 * identity. */
#include "rundir.h"

#include "gold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int lock_out(const char *out, int *fd, struct ka_err *e)
{
	char *path = xasprintf("%s/.lock", out);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(path);
	if (*fd < 0)
		return ka_err_set(e, "%s/.lock: %s", out, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		close(*fd);
		*fd = -1;
		return ka_err_set(e, "another ka is running with --out %s", out);
	}
	return 0;
}

static void remove_run(const char *out)
{
	static const char *const files[] = {"journal.sqlite",	  "journal.sqlite-wal",
					    "journal.sqlite-shm", "scorecard.json",
					    "results.jsonl",	  NULL};
	static const char *const dirs[] = {"kernels", "cache", ".grade", NULL};
	for (int i = 0; files[i]; i++) {
		char *p = xasprintf("%s/%s", out, files[i]);
		unlink(p);
		free(p);
	}
	for (int i = 0; dirs[i]; i++) {
		char *p = xasprintf("%s/%s", out, dirs[i]);
		util_rmtree(p);
		free(p);
	}
}

void rundir_args_diff(const char *old_json, const char *new_json, char *msg, size_t cap)
{
	json_t *a = json_loads(old_json, 0, NULL), *b = json_loads(new_json, 0, NULL);
	snprintf(msg, cap, "the arguments differ");
	const char *key;
	json_t *va;
	if (a && b) {
		json_object_foreach(a, key, va)
		{
			json_t *vb = json_object_get(b, key);
			if (vb && json_equal(va, vb))
				continue;
			char *sa = json_dumps(va, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
			char *sb =
				vb ? json_dumps(vb, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS)
				   : xstrdup("(none)");
			snprintf(msg, cap, "%s is %.120s there, %.120s here", key, sa ? sa : "?",
				 sb ? sb : "?");
			free(sa);
			free(sb);
			break;
		}
	}
	json_decref(a);
	json_decref(b);
}

int rundir_open(struct rundir *d, const char *out, int fresh, const char *args_key,
		const char *args_pretty, const char *bank_hash, struct ka_err *e)
{
	memset(d, 0, sizeof *d);
	d->lock_fd = -1;
	char *old_key = NULL, *jpath = NULL;
	int rc = KA_EXIT_USAGE;
	if (util_mkdirs(out, e) || lock_out(out, &d->lock_fd, e))
		goto out;
	if (fresh)
		remove_run(out);
	rundir_clean_stale(out);
	jpath = xasprintf("%s/journal.sqlite", out);
	struct ka_err je;
	d->j = journal_open(jpath, &je);
	if (!d->j) {
		ka_err_set(e, "%s (use --fresh to start over)", je.msg);
		goto out;
	}
	int have = journal_run_get(d->j, &old_key, NULL, e);
	if (have < 0) {
		rc = KA_EXIT_FAIL;
		goto out;
	}
	if (have == 0 && strcmp(old_key, args_key)) {
		char why[400];
		rundir_args_diff(old_key, args_key, why, sizeof why);
		ka_err_set(e,
			   "%s holds a different run (%s); use --fresh to discard it, or another "
			   "--out",
			   out, why);
		goto out;
	}
	if (have == 1 && journal_run_set(d->j, args_key, args_pretty, bank_hash, e)) {
		rc = KA_EXIT_FAIL;
		goto out;
	}
	d->resumed = have == 0;
	rc = 0;
out:
	free(jpath);
	free(old_key);
	return rc;
}

void rundir_close(struct rundir *d)
{
	journal_close(d->j);
	d->j = NULL;
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	d->lock_fd = -1;
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
	static const char msg[] = "\nka: stopping after the steps under way (again to quit now)\n";
	ssize_t w = write(2, msg, sizeof msg - 1);
	(void)w;
}

void rundir_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* The first signal asks for a clean stop; the handler then gives way
	 * to the default, so a second one ends the process at once (the
	 * journal stays consistent: every step is one transaction). */
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int rundir_stop_signal(void)
{
	return (int)stop_signal;
}

int rundir_grade_stands(int ok)
{
	return ok || !rundir_stop_signal();
}

int rundir_exit_code(int rc)
{
	int sig = rundir_stop_signal();
	return sig ? 128 + sig : rc;
}

/* Remove, under dir (depth levels down), files and folders whose name
 * matches one of the patterns (prefix "ka-rec-", or a substring ".part")
 * and whose mtime is before cutoff. */
static int clean_tree(const char *dir, int depth, const char *const *prefixes, int part,
		      time_t cutoff)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int match = part && strstr(de->d_name, ".part") != NULL;
		for (int i = 0; prefixes[i] && !match; i++)
			match = !strncmp(de->d_name, prefixes[i], strlen(prefixes[i]));
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0) {
			if (match && st.st_mtime < cutoff) {
				if (S_ISDIR(st.st_mode))
					util_rmtree(p);
				else
					unlink(p);
				n++;
			} else if (S_ISDIR(st.st_mode) && depth > 0) {
				n += clean_tree(p, depth - 1, prefixes, part, cutoff);
			}
		}
		free(p);
	}
	closedir(d);
	return n;
}

int rundir_clean_stale(const char *out)
{
	time_t now = time(NULL);
	static const char *const ours[] = {"tmp-", "build-", "ka-rec-", "pocl-", NULL};
	static const char *const tmp_prefixes[] = {"ka-rec-", "ka-model-", "ka-bank-", "ka-tol-",
						   NULL};
	/* out/.grade is this run's (out is locked): any partial file there
	 * older than this start is a killed run's. */
	char *grade = xasprintf("%s/.grade", out);
	int n = clean_tree(grade, 3, ours, 1, now);
	free(grade);
	/* Shared places (the system's temporary folder, the gold cache): only
	 * what is older than any live step could be. */
	const char *tmp = getenv("TMPDIR");
	n += clean_tree(tmp && *tmp ? tmp : "/tmp", 0, tmp_prefixes, 0,
			now - (time_t)RUNDIR_STALE_S);
	n += gold_clean_stale(RUNDIR_STALE_S);
	return n;
}
