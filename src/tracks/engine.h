/* engine.h: running a training/sampling engine as a child process
 * (docs/engines.md). ka writes a manifest (JSON, format "ka-engine/1") to a
 * file, runs the engine with the manifest path and a result path, and reads
 * the result JSON back. Each call is a journaled unit (round.h): its key,
 * the hash of its inputs (the manifest and the files it names as inputs) and
 * the hash of its outputs (the result and the files and folders it names as
 * outputs) are journaled when it finishes, so a run killed anywhere and
 * started again skips every call whose outputs are still on disk as they
 * were, and redoes only the call in flight at the kill. */
#ifndef KA_ENGINE_H
#define KA_ENGINE_H

#include <jansson.h>

#include "journal.h"
#include "util.h"

#define ENGINE_FORMAT "ka-engine/1"
#define ENGINE_ARGV_MAX 8

/* How to start an engine: argv prefix; the manifest and result paths are
 * appended. */
struct engine {
	char name[64];
	char *argv[ENGINE_ARGV_MAX]; /* owned, NULL-terminated */
	double timeout_s;	     /* per call, 0 = none */
};

/* Find engine name: a path to an executable or a .py file, else
 * <data root>/engines/<name>/engine.py run with $KA_PYTHON (default
 * python3). 0 with en filled, -1 with e ("no engine 'x': ... not found"). */
int engine_find(const char *name, struct engine *en, struct ka_err *e);

void engine_free(struct engine *en);

/* Hash of a file or a folder (names and contents, sorted, recursively) as
 * 16 hex digits into hex; a missing path hashes as "missing". 0 or -1. */
int engine_hash_path(const char *path, char hex[17]);

/* One engine call as journaled unit key. manifest holds "op" and the call's
 * fields; "format" is added here. inputs and outputs are NULL-terminated
 * lists of paths (files or folders) the call reads and writes. When the
 * journal holds the unit with the same input hash and its outputs hash as
 * journaled, the journaled result is returned (*ran = 0). Otherwise each
 * output is removed, the manifest written to workdir/<safe key>.manifest.json,
 * the engine run (stderr to workdir/<safe key>.log), its result read
 * (ok must be true, else -1 with the engine's error) and the unit journaled
 * (*ran = 1). A unit journaled with other inputs is refused (-1). 0 with
 * *result (new reference), -1 with e. */
int engine_call(const struct engine *en, struct journal *j, const char *key, const char *workdir,
		json_t *manifest, const char *const *inputs, const char *const *outputs,
		json_t **result, int *ran, struct ka_err *e);

#endif
