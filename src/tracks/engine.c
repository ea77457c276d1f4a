/* engine.c: an engine as a child process with a JSON manifest in and a JSON
 * result out, each call a journaled unit keyed by the hashes of its inputs
 * and outputs (see engine.h, docs/engines.md). */
#include "engine.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "round.h"

#define ENGINE_RESULT_CAP ((size_t)64 << 20)
#define ENGINE_FILE_CAP ((size_t)64 << 30)
#define ENGINE_LOG_CAP ((size_t)1 << 20)

int engine_find(const char *name, struct engine *en, struct ka_err *e)
{
	memset(en, 0, sizeof *en);
	snprintf(en->name, sizeof en->name, "%s", name);
	const char *py = getenv("KA_PYTHON");
	if (!py || !*py)
		py = "python3";
	size_t n = strlen(name);
	struct stat st;
	if (strchr(name, '/')) {
		if (stat(name, &st) || !S_ISREG(st.st_mode))
			return ka_err_set(e, "no engine '%s': not a file", name);
		if (n > 3 && !strcmp(name + n - 3, ".py")) {
			en->argv[0] = xstrdup(py);
			en->argv[1] = xstrdup(name);
		} else {
			en->argv[0] = xstrdup(name);
		}
		return 0;
	}
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
			return ka_err_set(e, "engine name '%s': use [a-z0-9_-] or a path", name);
	char *path = xasprintf("%s/engines/%s/engine.py", util_data_root(), name);
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		ka_err_set(e, "no engine '%s': %s not found", name, path);
		free(path);
		return -1;
	}
	en->argv[0] = xstrdup(py);
	en->argv[1] = path;
	return 0;
}

void engine_free(struct engine *en)
{
	for (int i = 0; i < ENGINE_ARGV_MAX; i++)
		free(en->argv[i]);
	memset(en, 0, sizeof *en);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fold path (file or folder, rel its name inside the hashed tree) into *h. */
static int hash_into(const char *path, const char *rel, uint64_t *h, int depth)
{
	struct stat st;
	if (depth > 16)
		return -1;
	if (stat(path, &st)) {
		*h = util_hash64("missing", 7, *h);
		return 0;
	}
	*h = util_hash64(rel, strlen(rel) + 1, *h);
	if (S_ISREG(st.st_mode)) {
		FILE *f = fopen(path, "rb");
		if (!f)
			return -1;
		char buf[1 << 16];
		size_t got;
		while ((got = fread(buf, 1, sizeof buf, f)) > 0)
			*h = util_hash64(buf, got, *h);
		int bad = ferror(f);
		fclose(f);
		return bad ? -1 : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	DIR *d = opendir(path);
	if (!d)
		return -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = xrealloc(names, cap * sizeof *names);
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *sub = xasprintf("%s/%s", path, names[i]);
		char *srel = xasprintf("%s/%s", rel, names[i]);
		if (!rc)
			rc = hash_into(sub, srel, h, depth + 1);
		free(sub);
		free(srel);
		free(names[i]);
	}
	free(names);
	return rc;
}

int engine_hash_path(const char *path, char hex[17])
{
	uint64_t h = 0x6b612d656e67ull;
	int rc = hash_into(path, ".", &h, 0);
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
	return rc;
}

/* Hash of the manifest text and every path in list (NULL-terminated). */
static int hash_set(const char *text, const char *const *list, char hex[17])
{
	uint64_t h = util_hash64(text ? text : "", text ? strlen(text) : 0, 0x6b612d696e);
	for (int i = 0; list && list[i]; i++) {
		char one[17];
		if (engine_hash_path(list[i], one))
			return -1;
		h = util_hash64(one, 16, h);
	}
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
	return 0;
}

static void safe_name(const char *key, char *out, size_t cap)
{
	size_t i = 0;
	for (; key[i] && i + 1 < cap; i++) {
		char c = key[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
		out[i] = ok ? c : '_';
	}
	out[i] = 0;
}

int engine_call(const struct engine *en, struct journal *j, const char *key, const char *workdir,
		json_t *manifest, const char *const *inputs, const char *const *outputs,
		json_t **result, int *ran, struct ka_err *e)
{
	*result = NULL;
	*ran = 0;
	int rc = -1;
	json_t *old = NULL, *res = NULL;
	char *mtext = NULL, *mpath = NULL, *rpath = NULL, *lpath = NULL, *rtext = NULL;
	char ih[17], oh[17], sn[ROUND_KEY_MAX];
	struct util_run_result rr;
	memset(&rr, 0, sizeof rr);
	json_object_set_new(manifest, "format", json_string(ENGINE_FORMAT));
	mtext = json_dumps(manifest, JSON_COMPACT | JSON_SORT_KEYS);
	if (!mtext || hash_set(mtext, inputs, ih)) {
		ka_err_set(e, "%s: cannot hash the call's inputs", key);
		goto out;
	}
	int g = round_unit_get(j, key, &old, e);
	if (g < 0)
		goto out;
	if (g == 0) {
		const char *jih = json_string_value(json_object_get(old, "inputs_hash"));
		const char *joh = json_string_value(json_object_get(old, "outputs_hash"));
		if (!jih || strcmp(jih, ih)) {
			ka_err_set(e, "%s: journaled with other inputs (%s, now %s)", key,
				   jih ? jih : "?", ih);
			goto out;
		}
		if (hash_set(NULL, outputs, oh) || !joh || strcmp(joh, oh)) {
			ka_err_set(e,
				   "%s: its outputs changed on disk since the call finished "
				   "(journaled %s, now %s); use --fresh",
				   key, joh ? joh : "?", oh);
			goto out;
		}
		*result = json_incref(json_object_get(old, "result"));
		rc = 0;
		goto out;
	}
	if (util_mkdirs(workdir, e))
		goto out;
	for (int i = 0; outputs && outputs[i]; i++)
		util_rmtree(outputs[i]);
	safe_name(key, sn, sizeof sn);
	mpath = xasprintf("%s/%s.manifest.json", workdir, sn);
	rpath = xasprintf("%s/%s.result.json", workdir, sn);
	lpath = xasprintf("%s/%s.log", workdir, sn);
	unlink(rpath);
	if (util_write_file(mpath, mtext, strlen(mtext), e))
		goto out;
	char *argv[ENGINE_ARGV_MAX + 3];
	int n = 0;
	for (; n < ENGINE_ARGV_MAX && en->argv[n]; n++)
		argv[n] = en->argv[n];
	argv[n++] = mpath;
	argv[n++] = rpath;
	argv[n] = NULL;
	struct util_run_opts ro = {0};
	ro.timeout_s = en->timeout_s;
	ro.out_cap = ENGINE_LOG_CAP;
	ro.merge_err = 1;
	if (util_run_child(argv, &ro, &rr, e))
		goto out;
	struct ka_err we;
	util_write_file(lpath, rr.out.s ? rr.out.s : "", rr.out.len, &we);
	size_t len;
	if (util_read_file(rpath, ENGINE_RESULT_CAP, &rtext, &len, &we)) {
		char sum[400];
		util_log_summary(rr.out.s ? rr.out.s : "", sum, sizeof sum);
		ka_err_set(e, "engine %s %s failed (exit %d%s) without a result: %s (log %s)",
			   en->name, json_string_value(json_object_get(manifest, "op")), rr.code,
			   rr.timed_out ? ", timed out" : "", sum, lpath);
		goto out;
	}
	json_error_t je;
	res = json_loads(rtext, 0, &je);
	if (!json_is_object(res)) {
		ka_err_set(e, "engine %s: result %s is not a JSON object", en->name, rpath);
		goto out;
	}
	const char *fmt = json_string_value(json_object_get(res, "format"));
	if (!fmt || strcmp(fmt, ENGINE_FORMAT)) {
		ka_err_set(e, "engine %s: result format '%s', want %s", en->name, fmt ? fmt : "",
			   ENGINE_FORMAT);
		goto out;
	}
	if (!json_is_true(json_object_get(res, "ok"))) {
		const char *why = json_string_value(json_object_get(res, "error"));
		ka_err_set(e, "engine %s: %s", en->name, why ? why : "failed (no error given)");
		goto out;
	}
	if (rr.code != 0) {
		ka_err_set(e, "engine %s exited %d after writing its result", en->name, rr.code);
		goto out;
	}
	if (hash_set(NULL, outputs, oh)) {
		ka_err_set(e, "%s: cannot hash the call's outputs", key);
		goto out;
	}
	json_t *unit =
		json_pack("{s:s,s:s,s:O}", "inputs_hash", ih, "outputs_hash", oh, "result", res);
	int pr = round_unit_put(j, key, unit, e);
	json_decref(unit);
	if (pr)
		goto out;
	*result = json_incref(res);
	*ran = 1;
	rc = 0;
out:
	util_run_result_free(&rr);
	json_decref(old);
	json_decref(res);
	free(mtext);
	free(mpath);
	free(rpath);
	free(lpath);
	free(rtext);
	return rc;
}
