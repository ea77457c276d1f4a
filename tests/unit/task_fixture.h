/* task_fixture.h: a task folder for a unit test, made from
 * tests/data/tasks_good/add_scale (z = 2x + y over N; x fp32, y fp16) with
 * the test's own ref.c, in a new temporary folder. */
#ifndef KA_TASK_FIXTURE_H
#define KA_TASK_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The folder (free it, util_rmtree it), or NULL when it cannot be made. */
static char *task_fixture_dir(const char *ref)
{
	char tmpl[] = "/tmp/ka-test-task-XXXXXX";
	struct ka_err e = {{0}};
	if (!mkdtemp(tmpl))
		return NULL;
	char *json = NULL, *jpath = xasprintf("%s/task.json", tmpl);
	char *rpath = xasprintf("%s/ref.c", tmpl);
	size_t len = 0;
	int ok = util_read_file("tests/data/tasks_good/add_scale/task.json", 1 << 20, &json, &len,
				&e) == 0 &&
		 util_write_file(jpath, json, len, &e) == 0 &&
		 util_write_file(rpath, ref, strlen(ref), &e) == 0;
	free(json);
	free(jpath);
	free(rpath);
	if (!ok) {
		util_rmtree(tmpl);
		return NULL;
	}
	return xstrdup(tmpl);
}

#endif
