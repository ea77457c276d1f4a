/* jsonf.h: the one set of JSON field readers for files ka reads strictly
 * (task.json, plans, scorecards, runner replies). Each reader checks one
 * field's type and range and, on a problem, fills the context's error with
 * "<file>: <field path>: <problem>" and returns -1. The path of a field is
 * its parent's path and its key joined with "." ("inputs[0].dist.hi"). It
 * allocates nothing except the copy made by jsonf_string. */
#ifndef KA_JSONF_H
#define KA_JSONF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Where messages go: file names the document ("<dir>/task.json", "plan"). */
struct jsonf {
	const char *file;
	struct ka_err *e;
	/* an unknown key inside a named object reads "<path>: unknown field
	 * '<key>'" (task.json) rather than "<path>.<key>: unknown field" */
	int unknown_names_key;
};

#define JSONF_PATHLEN 192

/* "an object", "a string", "an integer", "a number", "a boolean", "null". */
const char *jsonf_kind(const json_t *j);

/* Fill the error with "<file>: <path>: <problem>" (path "" reads
 * "<file>: <problem>"). Always returns -1. */
int jsonf_bad(const struct jsonf *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* path and key joined with "." into out (JSONF_PATHLEN bytes). */
void jsonf_join(char *out, const char *path, const char *key);

/* obj[key] into *out (NULL when absent). Absent and required: "missing". */
int jsonf_get(const struct jsonf *c, const json_t *obj, const char *path, const char *key,
	      int required, json_t **out);

/* j has the type: else "expected <what>, got <kind>". */
int jsonf_type(const struct jsonf *c, const char *path, const json_t *j, json_type type,
	       const char *what);

/* Every key of obj is in allowed[] (NULL-ended): else "unknown field"; every
 * key of required[] (NULL-ended, may be NULL) is present: else "missing field
 * '<key>'" (or "<key>: missing field" at the top, path ""). */
int jsonf_keys(const struct jsonf *c, const char *path, const json_t *obj,
	       const char *const *allowed, const char *const *required);

/* A string of at most cap bytes and no NUL, copied into *out (caller frees). */
int jsonf_string(const struct jsonf *c, const char *path, const json_t *j, size_t cap, char **out);

/* An integer in [lo, hi]: else "expected an integer, got <kind>" or "<v> is
 * out of range [lo, hi]". */
int jsonf_int(const struct jsonf *c, const char *path, const json_t *j, int64_t lo, int64_t hi,
	      int64_t *out);

/* A finite number (an integer is one too) in [lo, hi]: else "expected a
 * number, got <kind>", "not a finite number" or "<v> is outside [lo, hi]". */
int jsonf_number(const struct jsonf *c, const char *path, const json_t *j, double lo, double hi,
		 double *out);

/* A boolean: else "expected a boolean, got <kind>". */
int jsonf_bool(const struct jsonf *c, const char *path, const json_t *j, int *out);

/* An array of min..max items: else "expected an array, got <kind>" or
 * "expected an array of <n> items, got <m>" (n, or "min to max"). */
int jsonf_array(const struct jsonf *c, const char *path, const json_t *j, size_t min, size_t max,
		size_t *n);

#endif
