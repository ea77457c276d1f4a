/* model_archive.c: the archive backend, spec archive:<bank-path>. It answers
 * each request with the bank's verified solution of the task for the
 * request's target: <bank>/<tier>/<task>/solutions/<target>.cu for CUDA,
 * <target>.c for OpenCL (the task folder is found by name up to two levels
 * under the bank path). For smoke runs with no model, network or
 * credentials. It does not check that the solution is correct. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_backend.h"

#define ARCHIVE_FILE_CAP ((size_t)4 << 20)

struct archive {
	char *bank;
};

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int archive_open(struct model *m, const char *arg, struct ka_err *e)
{
	struct archive *a = xcalloc(1, sizeof *a);
	m->impl = a;
	a->bank = xstrdup(arg);
	size_t n = strlen(a->bank);
	while (n > 1 && a->bank[n - 1] == '/')
		a->bank[--n] = 0;
	if (!is_dir(a->bank))
		return ka_err_set(e, "archive: bank path '%s' is not a folder", arg);
	return 0;
}

/* The folder of task under the bank: <bank>/<task>, <bank>/<x>/<task> or
 * <bank>/<x>/<y>/<task> (first match in name order), or NULL. Caller frees. */
static char *find_task(const char *bank, const char *task, int depth)
{
	char *direct = xasprintf("%s/%s", bank, task);
	if (is_dir(direct))
		return direct;
	free(direct);
	if (depth == 0)
		return NULL;
	struct dirent **list = NULL;
	int n = scandir(bank, &list, NULL, alphasort);
	char *found = NULL;
	for (int i = 0; i < n; i++) {
		const char *d = list[i]->d_name;
		if (!found && d[0] != '.') {
			char *sub = xasprintf("%s/%s", bank, d);
			if (is_dir(sub))
				found = find_task(sub, task, depth - 1);
			free(sub);
		}
		free(list[i]);
	}
	free(list);
	return found;
}

static void archive_answer(struct model *m, const struct model_request *r, int64_t seed,
			   struct model_reply *rep)
{
	struct archive *a = m->impl;
	const char *task = r->task ? r->task : "";
	if (!*task || strstr(task, "..")) {
		model_fail(rep, "archive", "bad task name '%s'", task);
		return;
	}
	char *dir = find_task(a->bank, task, 2);
	if (!dir) {
		model_fail(rep, "archive", "no task '%s' under %s", task, a->bank);
		return;
	}
	/* Candidates in order: the target's own file, then the other target. */
	const char *lang = r->lang ? r->lang : "cuda";
	const char *names[4] = {NULL};
	const char *fence = "c";
	if (!strcmp(lang, "cuda")) {
		names[0] = "cuda.cu";
		fence = "cuda";
	} else if (!strcmp(lang, "opencl")) {
		names[0] = "opencl.c";
		names[1] = "opencl.cl";
	} else {
		names[0] = "c.c";
		names[1] = "opencl.c";
	}
	char *src = NULL, *path = NULL;
	for (int i = 0; names[i] && !src; i++) {
		free(path);
		path = xasprintf("%s/solutions/%s", dir, names[i]);
		if (!is_file(path))
			continue;
		struct ka_err fe;
		if (util_read_file(path, ARCHIVE_FILE_CAP, &src, NULL, &fe) != 0) {
			model_fail(rep, "archive", "%s", fe.msg);
			free(path);
			free(dir);
			return;
		}
	}
	if (!src) {
		model_fail(rep, "archive", "task '%s' has no %s solution (%s/solutions/%s)", task,
			   lang, dir, names[0]);
		free(path);
		free(dir);
		return;
	}
	rep->ok = 1;
	size_t n = strlen(src);
	rep->text = xasprintf("```%s\n%s%s```\n", fence, src, n && src[n - 1] == '\n' ? "" : "\n");
	rep->code = src;
	snprintf(rep->finish, sizeof rep->finish, "archive");
	free(path);
	free(dir);
}

static void archive_close(struct model *m)
{
	struct archive *a = m->impl;
	free(a->bank);
	free(a);
}

const struct model_backend model_archive_backend = {
	.name = "archive",
	.http = 0,
	.cacheable = 0,
	.open = archive_open,
	.answer = archive_answer,
	.close = archive_close,
};
