/* jsonf.c: the JSON field readers (see jsonf.h). */
#include "jsonf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *jsonf_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

int jsonf_bad(const struct jsonf *c, const char *path, const char *fmt, ...)
{
	char msg[KA_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!path || !path[0])
		return ka_err_set(c->e, "%s: %s", c->file, msg);
	return ka_err_set(c->e, "%s: %s: %s", c->file, path, msg);
}

void jsonf_join(char *out, const char *path, const char *key)
{
	snprintf(out, JSONF_PATHLEN, "%s%s%s", path, path[0] && key[0] ? "." : "", key);
}

int jsonf_get(const struct jsonf *c, const json_t *obj, const char *path, const char *key,
	      int required, json_t **out)
{
	*out = json_object_get(obj, key);
	if (!*out && required) {
		char p[JSONF_PATHLEN];
		jsonf_join(p, path, key);
		return jsonf_bad(c, p, "missing");
	}
	return 0;
}

/* "expected <what>, got <kind of j>". Returns -1. */
static int expected(const struct jsonf *c, const char *path, const json_t *j, const char *what)
{
	return jsonf_bad(c, path, "expected %s, got %s", what, j ? jsonf_kind(j) : "nothing");
}

int jsonf_type(const struct jsonf *c, const char *path, const json_t *j, json_type type,
	       const char *what)
{
	if (j && json_typeof(j) == type)
		return 0;
	return expected(c, path, j, what);
}

int jsonf_keys(const struct jsonf *c, const char *path, const json_t *obj,
	       const char *const *allowed, const char *const *required)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		int ok = 0;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(*a, key);
		if (ok)
			continue;
		if (path[0] && c->unknown_names_key)
			return jsonf_bad(c, path, "unknown field '%.64s'", key);
		char p[JSONF_PATHLEN];
		snprintf(p, sizeof p, "%s%s%.64s", path, path[0] ? "." : "", key);
		return jsonf_bad(c, p, "unknown field");
	}
	for (const char *const *r = required; r && *r; r++) {
		if (json_object_get(obj, *r))
			continue;
		if (path[0])
			return jsonf_bad(c, path, "missing field '%s'", *r);
		return jsonf_bad(c, *r, "missing field");
	}
	return 0;
}

int jsonf_string(const struct jsonf *c, const char *path, const json_t *j, size_t cap, char **out)
{
	if (jsonf_type(c, path, j, JSON_STRING, "a string"))
		return -1;
	size_t len = json_string_length(j);
	const char *s = json_string_value(j);
	if (len > cap)
		return jsonf_bad(c, path, "string is %zu bytes, over the cap of %zu", len, cap);
	if (strlen(s) != len)
		return jsonf_bad(c, path, "string contains a NUL character");
	*out = xstrdup(s);
	return 0;
}

int jsonf_int(const struct jsonf *c, const char *path, const json_t *j, int64_t lo, int64_t hi,
	      int64_t *out)
{
	if (jsonf_type(c, path, j, JSON_INTEGER, "an integer"))
		return -1;
	json_int_t x = json_integer_value(j);
	if (x < lo || x > hi)
		return jsonf_bad(c, path, "%lld is out of range [%lld, %lld]", (long long)x,
				 (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

int jsonf_number(const struct jsonf *c, const char *path, const json_t *j, double lo, double hi,
		 double *out)
{
	if (!j || !json_is_number(j))
		return expected(c, path, j, "a number");
	double x = json_number_value(j);
	if (!isfinite(x))
		return jsonf_bad(c, path, "not a finite number");
	if (x < lo || x > hi)
		return jsonf_bad(c, path, "%g is outside [%g, %g]", x, lo, hi);
	*out = x;
	return 0;
}

int jsonf_bool(const struct jsonf *c, const char *path, const json_t *j, int *out)
{
	if (!j || !json_is_boolean(j))
		return expected(c, path, j, "a boolean");
	*out = json_is_true(j);
	return 0;
}

int jsonf_array(const struct jsonf *c, const char *path, const json_t *j, size_t min, size_t max,
		size_t *n)
{
	if (jsonf_type(c, path, j, JSON_ARRAY, "an array"))
		return -1;
	size_t got = json_array_size(j);
	if (got < min || got > max) {
		if (min == max)
			return jsonf_bad(c, path, "expected an array of %zu items, got %zu", min,
					 got);
		return jsonf_bad(c, path, "expected an array of %zu to %zu items, got %zu", min,
				 max, got);
	}
	*n = got;
	return 0;
}
