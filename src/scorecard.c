/* scorecard.c: load, validate and recompute "ka-scorecard/1" and "/2" scorecards, and
 * the JSON writers the tracks share with the checks (see scorecard.h and
 * docs/scorecard.md, which list every rule implemented here). Validation
 * walks the document once, in document order, and stops at the first
 * problem. It does not grade, score or render anything. */
#include "scorecard.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATHLEN 160
#define MAX_DETAIL 4096
#define MAX_NAME 256
#define MAX_TASKS 100000
#define MAX_ROUNDS 1000

static const char *const track_names[] = {
	"capability", "weight_rsi", "procedure_rsi", "harness_rsi", "frontier", "controls", NULL};
const char *const scorecard_verdicts[] = {"no_code",
					  "compile_error",
					  "forbidden",
					  "record_error",
					  "launch_error",
					  "runtime_fault",
					  "timeout",
					  "wrong_answer",
					  "nonfinite",
					  "unwritten_output",
					  "input_modified",
					  "out_of_bounds_write",
					  "implausible_time",
					  "ok",
					  NULL};
static const char *const kinds[] = {"open", "closed", NULL};
static const char *const splits[] = {"public", "heldout", NULL};
static const char *const targets[] = {"cuda", "opencl", NULL};
static const char *const tiers[] = {"L1", "L2", "L3", NULL};
static const char *const bank_tiers[] = {"small", "mid", "large", NULL};
static const char *const baselines[] = {"eager", "compiled", NULL};
static const char *const arms[] = {"self",   "fresh_frozen", "round0", "improved",
				   "frozen", "ckpt_frozen",  NULL};
#define ARM_CKPT 5 /* weight RSI, schema /2: the recursion-interruption control */
static const char *const rsi_verdicts[] = {"positive", "no signal", "negative", NULL};

const char *scorecard_track_name(enum scorecard_track t)
{
	return (unsigned)t < SCORECARD_TRACK_COUNT ? track_names[t] : "?";
}

int scorecard_track_parse(const char *s, enum scorecard_track *out)
{
	for (int i = 0; track_names[i]; i++)
		if (s && !strcmp(s, track_names[i])) {
			*out = (enum scorecard_track)i;
			return 0;
		}
	return -1;
}

/* ---- validation context ---------------------------------------------- */

struct vctx {
	const char *file;
	struct ka_err *e;
	int version; /* 1 or 2 (SCORECARD_SCHEMA, SCORECARD_SCHEMA_2) */
};

static int bad(struct vctx *v, const char *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "FILE: at.key: problem" (at or key may be empty). */
static int bad(struct vctx *v, const char *at, const char *key, const char *fmt, ...)
{
	char msg[KA_ERRLEN / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ka_err_set(v->e, "%s: %s%s%s: %s", v->file, at, (*at && *key) ? "." : "", key, msg);
}

/* Field paths are bounded: a longer one is cut (messages stay one line). */
static void path_fmt(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_fmt(char *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, PATHLEN, fmt, ap);
	va_end(ap);
}

static void join(char *out, const char *at, const char *key)
{
	path_fmt(out, "%s%s%s", at, *at ? "." : "", key);
}

static const char *type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

/* Fetch obj[key]; *out = NULL when absent. Missing + required is a problem. */
static int get(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
	       json_t **out)
{
	*out = json_object_get(obj, key);
	if (!*out && required)
		return bad(v, at, key, "missing");
	return 0;
}

static int want_type(struct vctx *v, const char *at, const char *key, const json_t *j, json_type t,
		     const char *tname)
{
	if (json_typeof(j) != t)
		return bad(v, at, key, "expected %s, got %s", tname, type_name(j));
	return 0;
}

static int get_obj(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
		   json_t **out)
{
	if (get(v, obj, at, key, required, out))
		return -1;
	if (*out && want_type(v, at, key, *out, JSON_OBJECT, "an object"))
		return -1;
	return 0;
}

static int get_arr(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
		   json_t **out)
{
	if (get(v, obj, at, key, required, out))
		return -1;
	if (*out && want_type(v, at, key, *out, JSON_ARRAY, "an array"))
		return -1;
	return 0;
}

static int get_str(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
		   size_t maxlen, const char **out)
{
	json_t *j;
	*out = NULL;
	if (get(v, obj, at, key, required, &j))
		return -1;
	if (!j)
		return 0;
	if (want_type(v, at, key, j, JSON_STRING, "a string"))
		return -1;
	size_t n = json_string_length(j);
	if (n == 0)
		return bad(v, at, key, "empty string");
	if (n > maxlen)
		return bad(v, at, key, "longer than %zu bytes", maxlen);
	if (strlen(json_string_value(j)) != n)
		return bad(v, at, key, "contains a NUL byte");
	*out = json_string_value(j);
	return 0;
}

static int get_enum(struct vctx *v, const json_t *obj, const char *at, const char *key,
		    int required, const char *const *vals, int *idx)
{
	const char *s;
	*idx = -1;
	if (get_str(v, obj, at, key, required, MAX_NAME, &s))
		return -1;
	if (!s)
		return 0;
	for (int i = 0; vals[i]; i++)
		if (!strcmp(s, vals[i])) {
			*idx = i;
			return 0;
		}
	char list[256] = "";
	for (int i = 0; vals[i]; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "",
			 vals[i]);
	return bad(v, at, key, "\"%.60s\" is not one of %s", s, list);
}

static int get_int(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
		   json_int_t lo, json_int_t hi, json_int_t *out)
{
	json_t *j;
	if (get(v, obj, at, key, required, &j))
		return -1;
	if (!j)
		return 0;
	if (want_type(v, at, key, j, JSON_INTEGER, "an integer"))
		return -1;
	json_int_t x = json_integer_value(j);
	if (x < lo || x > hi)
		return bad(v, at, key,
			   "%" JSON_INTEGER_FORMAT " is outside [%" JSON_INTEGER_FORMAT
			   ", %" JSON_INTEGER_FORMAT "]",
			   x, lo, hi);
	if (out)
		*out = x;
	return 0;
}

/* A number (integer or real) in [lo, hi]; nullable allows JSON null (*isnull). */
static int get_num(struct vctx *v, const json_t *obj, const char *at, const char *key, int required,
		   int nullable, double lo, double hi, double *out)
{
	json_t *j;
	if (get(v, obj, at, key, required, &j))
		return -1;
	if (!j)
		return 0;
	if (json_is_null(j) && nullable) {
		if (out)
			*out = NAN;
		return 0;
	}
	if (!json_is_number(j))
		return bad(v, at, key, "expected a number%s, got %s", nullable ? " or null" : "",
			   type_name(j));
	double x = json_number_value(j);
	if (!isfinite(x) || x < lo || x > hi)
		return bad(v, at, key, "%g is outside [%g, %g]", x, lo, hi);
	if (out)
		*out = x;
	return 0;
}

static int get_bool(struct vctx *v, const json_t *obj, const char *at, const char *key,
		    int required)
{
	json_t *j;
	if (get(v, obj, at, key, required, &j))
		return -1;
	if (j && !json_is_boolean(j))
		return bad(v, at, key, "expected a boolean, got %s", type_name(j));
	return 0;
}

/* Reject keys outside allowed (NULL-ended). */
static int only_keys(struct vctx *v, const json_t *obj, const char *at, const char *const *allowed)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)obj, key, val)
	{
		int ok = 0;
		for (int i = 0; allowed[i] && !ok; i++)
			ok = !strcmp(key, allowed[i]);
		if (!ok) {
			char k[64];
			path_fmt(k, "%.60s", key);
			return bad(v, at, k, "unknown field");
		}
	}
	return 0;
}

/* {value, lo, hi} with lo <= value <= hi inside [lo_lim, hi_lim], or null
 * when nullable. */
static int get_figure(struct vctx *v, const json_t *obj, const char *at, const char *key,
		      int required, int nullable, double lo_lim, double hi_lim)
{
	json_t *j;
	char p[PATHLEN];
	if (get(v, obj, at, key, required, &j))
		return -1;
	if (!j)
		return 0;
	if (json_is_null(j)) {
		if (nullable)
			return 0;
		return bad(v, at, key, "expected {value, lo, hi}, got null");
	}
	if (!json_is_object(j))
		return bad(v, at, key, "expected {value, lo, hi}, got %s", type_name(j));
	join(p, at, key);
	static const char *const fk[] = {"value", "lo", "hi", NULL};
	double x, lo, hi;
	if (only_keys(v, j, p, fk) || get_num(v, j, p, "value", 1, 0, lo_lim, hi_lim, &x) ||
	    get_num(v, j, p, "lo", 1, 0, lo_lim, hi_lim, &lo) ||
	    get_num(v, j, p, "hi", 1, 0, lo_lim, hi_lim, &hi))
		return -1;
	double slack = 1e-12 * (1 + fabs(x));
	if (lo > x + slack || x > hi + slack)
		return bad(v, p, "", "needs lo <= value <= hi, got %g, %g, %g", lo, x, hi);
	return 0;
}

/* A speedup or time: {median, lo, hi}, all > 0, lo <= median <= hi; or null. */
static int get_speedup(struct vctx *v, const json_t *obj, const char *at, const char *key)
{
	json_t *j;
	char p[PATHLEN];
	if (get(v, obj, at, key, 1, &j))
		return -1;
	if (json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return bad(v, at, key, "expected {median, lo, hi} or null, got %s", type_name(j));
	join(p, at, key);
	static const char *const sk[] = {"median", "lo", "hi", NULL};
	double m, lo, hi;
	if (only_keys(v, j, p, sk) || get_num(v, j, p, "median", 1, 0, 1e-300, 1e300, &m) ||
	    get_num(v, j, p, "lo", 1, 0, 1e-300, 1e300, &lo) ||
	    get_num(v, j, p, "hi", 1, 0, 1e-300, 1e300, &hi))
		return -1;
	double slack = 1e-12 * m;
	if (lo > m + slack || m > hi + slack)
		return bad(v, p, "", "needs lo <= median <= hi, got %g, %g, %g", lo, m, hi);
	return 0;
}

/* ---- top-level parts --------------------------------------------------- */

static int check_created(struct vctx *v, const json_t *sc)
{
	const char *s;
	if (get_str(v, sc, "", "created", 1, 40, &s))
		return -1;
	/* YYYY-MM-DDTHH:MM:SS[.fraction]Z */
	const char *pat = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;
	for (; pat[i]; i++) {
		if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[i])
			return bad(v, "", "created",
				   "\"%.40s\" is not ISO 8601 UTC "
				   "(YYYY-MM-DDTHH:MM:SSZ)",
				   s);
	}
	if (s[i] == '.') {
		i++;
		if (s[i] < '0' || s[i] > '9')
			return bad(v, "", "created", "\"%.40s\" has an empty fraction", s);
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (s[i] != 'Z' || s[i + 1])
		return bad(v, "", "created", "\"%.40s\" does not end in Z (UTC)", s);
	return 0;
}

static int check_model(struct vctx *v, const json_t *sc, const char *key, int required)
{
	json_t *m;
	const char *s;
	int idx;
	if (get_obj(v, sc, "", key, required, &m))
		return -1;
	if (!m)
		return 0;
	static const char *const mk[] = {"spec", "backend", "name", "kind", "family", NULL};
	if (only_keys(v, m, key, mk) || get_str(v, m, key, "spec", 1, 1024, &s) ||
	    get_str(v, m, key, "backend", 1, 64, &s) ||
	    get_str(v, m, key, "name", 1, MAX_NAME, &s) ||
	    get_enum(v, m, key, "kind", 1, kinds, &idx) ||
	    get_str(v, m, key, "family", 0, MAX_NAME, &s))
		return -1;
	return 0;
}

static int check_bank(struct vctx *v, const json_t *sc, json_int_t *n_tasks)
{
	json_t *b;
	const char *s;
	int idx;
	if (get_obj(v, sc, "", "bank", 1, &b))
		return -1;
	static const char *const bk[] = {"name", "path", "hash", "split", "n_tasks", NULL};
	if (only_keys(v, b, "bank", bk) || get_str(v, b, "bank", "name", 1, MAX_NAME, &s) ||
	    get_str(v, b, "bank", "path", 1, 1024, &s) || get_str(v, b, "bank", "hash", 1, 128, &s))
		return -1;
	size_t n = strlen(s);
	if (n < 16 || strspn(s, "0123456789abcdef") != n)
		return bad(v, "bank", "hash", "expected 16 to 128 lowercase hex digits");
	if (get_enum(v, b, "bank", "split", 1, splits, &idx) ||
	    get_int(v, b, "bank", "n_tasks", 1, 0, MAX_TASKS, n_tasks))
		return -1;
	return 0;
}

static int check_device(struct vctx *v, const json_t *sc)
{
	json_t *d, *c, *x;
	const char *s;
	if (get_obj(v, sc, "", "device", 1, &d))
		return -1;
	static const char *const dk[] = {"name",   "driver", "runtime", "test_grade",
					 "clocks", "extra",  NULL};
	static const char *const ck[] = {"sm_mhz_min", "sm_mhz_max", "mem_mhz", NULL};
	if (only_keys(v, d, "device", dk) || get_str(v, d, "device", "name", 1, MAX_NAME, &s) ||
	    get_str(v, d, "device", "driver", 1, MAX_NAME, &s) ||
	    get_str(v, d, "device", "runtime", 1, MAX_NAME, &s) ||
	    get_bool(v, d, "device", "test_grade", 1) || get_obj(v, d, "device", "clocks", 1, &c) ||
	    only_keys(v, c, "device.clocks", ck))
		return -1;
	double lo = NAN, hi = NAN;
	if (get_num(v, c, "device.clocks", "sm_mhz_min", 1, 1, 0, 1e6, &lo) ||
	    get_num(v, c, "device.clocks", "sm_mhz_max", 1, 1, 0, 1e6, &hi) ||
	    get_num(v, c, "device.clocks", "mem_mhz", 1, 1, 0, 1e7, NULL))
		return -1;
	if (!isnan(lo) && !isnan(hi) && lo > hi)
		return bad(v, "device.clocks", "sm_mhz_min", "%g is above sm_mhz_max %g", lo, hi);
	if (get_obj(v, d, "device", "extra", 0, &x))
		return -1;
	return 0;
}

static int check_protocol(struct vctx *v, const json_t *sc)
{
	json_t *p;
	json_int_t mn = 0, mx = 0;
	if (get_obj(v, sc, "", "protocol", 1, &p) ||
	    get_int(v, p, "protocol", "min_samples", 1, 1, 1000000, &mn) ||
	    get_int(v, p, "protocol", "max_samples", 1, 1, 1000000, &mx))
		return -1;
	if (mx < mn)
		return bad(v, "protocol", "max_samples",
			   "%" JSON_INTEGER_FORMAT " is below min_samples %" JSON_INTEGER_FORMAT,
			   mx, mn);
	if (get_num(v, p, "protocol", "max_seconds", 1, 0, 1e-9, 1e9, NULL) ||
	    get_num(v, p, "protocol", "ci_target", 1, 0, 1e-9, 1e9, NULL) ||
	    get_int(v, p, "protocol", "flush_bytes", 1, 0, (json_int_t)1 << 40, NULL) ||
	    get_int(v, p, "protocol", "warmup", 1, 0, 1000000, NULL))
		return -1;
	return 0;
}

static int check_source_path(struct vctx *v, const json_t *s, const char *at)
{
	const char *p;
	if (get_str(v, s, at, "source_path", 0, 512, &p))
		return -1;
	if (!p)
		return 0;
	if (p[0] == '/')
		return bad(v, at, "source_path", "must be relative");
	/* No ".." component, no backslash, printable ASCII only. */
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e || *c == '\\')
			return bad(v, at, "source_path", "has a character outside printable ASCII");
	for (const char *c = p; c; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
			return bad(v, at, "source_path", "has a '..' component");
	}
	return 0;
}

static int check_sample(struct vctx *v, const json_t *s, const char *at, json_int_t k,
			unsigned char *seen)
{
	static const char *const sk[] = {
		"sample",  "verdict", "detail",	  "score",     "speedup_eager", "speedup_compiled",
		"time_us", "tokens",  "cost_usd", "latency_s", "source_path",	NULL};
	json_int_t id;
	int verdict;
	const char *detail;
	json_t *tok;
	char p[PATHLEN];
	if (!json_is_object(s))
		return bad(v, at, "", "expected an object, got %s", type_name(s));
	if (only_keys(v, s, at, sk) || get_int(v, s, at, "sample", 1, 0, k - 1, &id))
		return -1;
	if (seen[id])
		return bad(v, at, "sample", "%" JSON_INTEGER_FORMAT " appears twice in this task",
			   id);
	seen[id] = 1;
	if (get_enum(v, s, at, "verdict", 1, scorecard_verdicts, &verdict))
		return -1;
	json_t *dj = json_object_get(s, "detail");
	if (!dj)
		return bad(v, at, "detail", "missing");
	if (!json_is_string(dj))
		return bad(v, at, "detail", "expected a string, got %s", type_name(dj));
	detail = json_string_value(dj);
	if (json_string_length(dj) > MAX_DETAIL)
		return bad(v, at, "detail", "longer than %d bytes", MAX_DETAIL);
	(void)detail;
	if (get_num(v, s, at, "score", 1, 0, 0, 1, NULL) ||
	    get_speedup(v, s, at, "speedup_eager") || get_speedup(v, s, at, "speedup_compiled") ||
	    get_speedup(v, s, at, "time_us"))
		return -1;
	int ok = scorecard_verdicts[verdict] && !strcmp(scorecard_verdicts[verdict], "ok");
	if (!ok) {
		static const char *const timed[] = {"speedup_eager", "speedup_compiled", "time_us"};
		for (int i = 0; i < 3; i++)
			if (!json_is_null(json_object_get(s, timed[i])))
				return bad(v, at, timed[i],
					   "must be null when the verdict is \"%s\"",
					   scorecard_verdicts[verdict]);
	}
	if (get_obj(v, s, at, "tokens", 1, &tok))
		return -1;
	join(p, at, "tokens");
	static const char *const tk[] = {"in", "out", NULL};
	if (only_keys(v, tok, p, tk) || get_int(v, tok, p, "in", 1, 0, (json_int_t)1 << 40, NULL) ||
	    get_int(v, tok, p, "out", 1, 0, (json_int_t)1 << 40, NULL) ||
	    get_num(v, s, at, "cost_usd", 1, 0, 0, 1e9, NULL) ||
	    get_num(v, s, at, "latency_s", 1, 0, 0, 1e9, NULL) || check_source_path(v, s, at))
		return -1;
	return 0;
}

/* Tasks: returns per-tier task counts and the total sample count. */
static int check_tasks(struct vctx *v, const json_t *tasks, json_int_t k, json_int_t bank_n,
		       int tier_tasks[3], int tier_samples[3])
{
	size_t n = json_array_size(tasks);
	if ((json_int_t)n > bank_n)
		return bad(v, "", "tasks", "%zu tasks but the bank has %" JSON_INTEGER_FORMAT, n,
			   bank_n);
	unsigned char *seen = xcalloc((size_t)k, 1);
	json_t *names = json_object(); /* name -> index: one lookup per task */
	static const char *const tk[] = {"name", "tier", "samples", NULL};
	char at[PATHLEN], sat[PATHLEN];
	int rc = -1;
	for (size_t i = 0; i < n; i++) {
		json_t *t = json_array_get(tasks, i), *samples;
		const char *name;
		int tier;
		path_fmt(at, "tasks[%zu]", i);
		if (!json_is_object(t)) {
			bad(v, at, "", "expected an object, got %s", type_name(t));
			goto out;
		}
		if (only_keys(v, t, at, tk) || get_str(v, t, at, "name", 1, 128, &name) ||
		    get_enum(v, t, at, "tier", 1, tiers, &tier) ||
		    get_arr(v, t, at, "samples", 1, &samples))
			goto out;
		json_t *prev = json_object_get(names, name);
		if (prev) {
			bad(v, at, "name", "\"%.60s\" appears twice (also tasks[%zu])", name,
			    (size_t)json_integer_value(prev));
			goto out;
		}
		json_object_set_new(names, name, json_integer((json_int_t)i));
		size_t ns = json_array_size(samples);
		if (ns < 1 || (json_int_t)ns > k) {
			bad(v, at, "samples",
			    "has %zu samples, expected 1 to k = %" JSON_INTEGER_FORMAT, ns, k);
			goto out;
		}
		memset(seen, 0, (size_t)k);
		for (size_t j = 0; j < ns; j++) {
			path_fmt(sat, "%s.samples[%zu]", at, j);
			if (check_sample(v, json_array_get(samples, j), sat, k, seen))
				goto out;
		}
		tier_tasks[tier]++;
		tier_samples[tier] += (int)ns;
	}
	rc = 0;
out:
	free(seen);
	json_decref(names);
	return rc;
}

static const char *const agg_figs_rate[] = {"correct",	 "fast",   "fast_compiled",
					    "pass_at_k", "mean_c", NULL};
static const char *const agg_keys[] = {"n_tasks",	  "n_samples",
				       "correct",	  "fast",
				       "fast_compiled",	  "fast_p",
				       "fast_p_compiled", "pass_at_k",
				       "geomean_speedup", "geomean_speedup_compiled",
				       "mean_c",	  NULL};

static int check_agg(struct vctx *v, const json_t *a, const char *at, int n_tasks, int n_samples)
{
	json_int_t nt, ns;
	if (!json_is_object(a))
		return bad(v, at, "", "expected an object, got %s", type_name(a));
	if (only_keys(v, a, at, agg_keys) || get_int(v, a, at, "n_tasks", 1, 0, MAX_TASKS, &nt) ||
	    get_int(v, a, at, "n_samples", 1, 0, (json_int_t)1 << 40, &ns))
		return -1;
	if (nt != n_tasks)
		return bad(v, at, "n_tasks", "%" JSON_INTEGER_FORMAT " but tasks hold %d", nt,
			   n_tasks);
	if (ns != n_samples)
		return bad(v, at, "n_samples", "%" JSON_INTEGER_FORMAT " but tasks hold %d", ns,
			   n_samples);
	for (int i = 0; agg_figs_rate[i]; i++)
		if (get_figure(v, a, at, agg_figs_rate[i], 1, 1, 0, 1))
			return -1;
	if (get_figure(v, a, at, "geomean_speedup", 1, 1, 1e-300, 1e300) ||
	    get_figure(v, a, at, "geomean_speedup_compiled", 1, 1, 1e-300, 1e300))
		return -1;
	static const char *const fp[] = {"fast_p", "fast_p_compiled"};
	for (int f = 0; f < 2; f++) {
		json_t *o;
		char p[PATHLEN];
		if (get_obj(v, a, at, fp[f], 1, &o))
			return -1;
		static const char *const pk[] = {"1", "1.5", "2", NULL};
		join(p, at, fp[f]);
		if (only_keys(v, o, p, pk))
			return -1;
		for (int i = 0; i < METRICS_N_P; i++)
			if (get_figure(v, o, p, metrics_p_names[i], 1, 1, 0, 1))
				return -1;
	}
	return 0;
}

static int check_aggregates(struct vctx *v, const json_t *sc, const int tier_tasks[3],
			    const int tier_samples[3])
{
	json_t *ag;
	if (get_obj(v, sc, "", "aggregates", 1, &ag))
		return -1;
	static const char *const ak[] = {"L1", "L2", "L3", "overall", NULL};
	if (only_keys(v, ag, "aggregates", ak))
		return -1;
	int tt = 0, ts = 0;
	char p[PATHLEN];
	for (int t = 0; t < 3; t++) {
		json_t *a = json_object_get(ag, tiers[t]);
		join(p, "aggregates", tiers[t]);
		if (!a && tier_tasks[t])
			return bad(v, "aggregates", tiers[t], "missing, but %d tasks are %s",
				   tier_tasks[t], tiers[t]);
		if (a && !tier_tasks[t])
			return bad(v, "aggregates", tiers[t], "present, but no task is %s",
				   tiers[t]);
		if (a && check_agg(v, a, p, tier_tasks[t], tier_samples[t]))
			return -1;
		tt += tier_tasks[t];
		ts += tier_samples[t];
	}
	json_t *o;
	if (get(v, ag, "aggregates", "overall", 1, &o))
		return -1;
	return check_agg(v, o, "aggregates.overall", tt, ts);
}

/* ---- RSI parts ---------------------------------------------------------- */

/* Arms each track's rounds may use (ckpt_frozen from schema /2 on). */
static int arm_allowed(enum scorecard_track t, int arm, int version)
{
	switch (t) {
	case SCORECARD_TRACK_WEIGHT_RSI: /* self, fresh_frozen, round0 (, ckpt_frozen) */
		return arm <= 2 || (arm == ARM_CKPT && version >= 2);
	case SCORECARD_TRACK_PROCEDURE_RSI: return arm == 0 || arm == 4; /* self, frozen */
	case SCORECARD_TRACK_HARNESS_RSI: return arm == 3 || arm == 4;	 /* improved, frozen */
	case SCORECARD_TRACK_FRONTIER: return arm == 0;
	default: return 0;
	}
}

/* A frontier row's optional timing: wall_s, evaluate_s and validation
 * {s, steps {<step>: {n, failed, s}}} (docs/frontier.md, "The scorecard"). */
static int check_frontier_times(struct vctx *v, const json_t *row, const char *at)
{
	json_t *val, *steps, *st;
	const char *name;
	char sat[PATHLEN], nat[PATHLEN];
	static const char *const vk[] = {"s", "steps", NULL}, *const sk[] = {"n", "failed", "s",
									     NULL};
	if (get_num(v, row, at, "wall_s", 0, 0, 0, 1e9, NULL) ||
	    get_num(v, row, at, "evaluate_s", 0, 0, 0, 1e9, NULL) ||
	    get_obj(v, row, at, "validation", 0, &val))
		return -1;
	if (!val)
		return 0;
	snprintf(sat, sizeof sat, "%.120s.validation", at);
	if (only_keys(v, val, sat, vk) || get_num(v, val, sat, "s", 1, 0, 0, 1e9, NULL) ||
	    get_obj(v, val, sat, "steps", 1, &steps))
		return -1;
	json_object_foreach(steps, name, st)
	{
		json_int_t n, failed;
		snprintf(nat, sizeof nat, "%.100s.steps.%.40s", sat, name);
		if (!json_is_object(st))
			return bad(v, nat, "", "expected an object, got %s", type_name(st));
		if (only_keys(v, st, nat, sk) || get_int(v, st, nat, "n", 1, 0, 1000000000, &n) ||
		    get_int(v, st, nat, "failed", 1, 0, 1000000000, &failed) ||
		    get_num(v, st, nat, "s", 1, 0, 0, 1e9, NULL))
			return -1;
		if (failed > n)
			return bad(v, nat, "failed",
				   "%" JSON_INTEGER_FORMAT " failures of %" JSON_INTEGER_FORMAT
				   " runs",
				   failed, n);
	}
	return 0;
}

static int check_rounds(struct vctx *v, const json_t *sc, enum scorecard_track t)
{
	json_t *r;
	if (get_arr(v, sc, "", "rounds", 1, &r))
		return -1;
	size_t n = json_array_size(r);
	if (n == 0)
		return bad(v, "", "rounds", "empty");
	if (n > MAX_ROUNDS * 5)
		return bad(v, "", "rounds", "more than %d rows", MAX_ROUNDS * 5);
	char at[PATHLEN];
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(r, i);
		json_int_t rn;
		int arm;
		path_fmt(at, "rounds[%zu]", i);
		if (!json_is_object(row))
			return bad(v, at, "", "expected an object, got %s", type_name(row));
		if (get_int(v, row, at, "round", 1, 0, MAX_ROUNDS, &rn) ||
		    get_enum(v, row, at, "arm", 1, arms, &arm))
			return -1;
		if (!arm_allowed(t, arm, v->version))
			return bad(v, at, "arm", "\"%s\" is not an arm of the %s track%s",
				   arms[arm], track_names[t],
				   arm == ARM_CKPT ? " in schema ka-scorecard/1" : "");
		int need_q = t == SCORECARD_TRACK_PROCEDURE_RSI;
		if (get_figure(v, row, at, "c", !need_q, 0, 0, 1) ||
		    get_figure(v, row, at, "q", need_q, 0, 0, 1) ||
		    get_figure(v, row, at, "correct", 0, 1, 0, 1) ||
		    get_figure(v, row, at, "compiled_x", 0, 1, 1e-300, 1e300) ||
		    get_num(v, row, at, "diversity", 0, 1, 0, 1, NULL) ||
		    get_num(v, row, at, "retention", 0, 1, 0, 1, NULL) ||
		    get_num(v, row, at, "compression", 0, 1, 0, 2, NULL) ||
		    get_int(v, row, at, "frontier_size", 0, 0, 100000000, NULL))
			return -1;
		if (t == SCORECARD_TRACK_FRONTIER && check_frontier_times(v, row, at))
			return -1;
		for (size_t j = 0; j < i; j++) {
			json_t *o = json_array_get(r, j);
			if (json_integer_value(json_object_get(o, "round")) == rn &&
			    !strcmp(json_string_value(json_object_get(o, "arm")), arms[arm]))
				return bad(v, at, "",
					   "round %" JSON_INTEGER_FORMAT
					   " of arm \"%s\" appears twice (also rounds[%zu])",
					   rn, arms[arm], j);
		}
	}
	return 0;
}

/* summary.standardized (schema /2): the standardized bank the run used and
 * its anchor's figures (docs/bank.md, "Standardized banks"). */
static int check_standardized(struct vctx *v, const json_t *s)
{
	json_t *o, *band;
	int idx;
	const char *str;
	const char *at = "summary.standardized";
	static const char *const keys[] = {
		"format",    "scale",	"anchor",	  "k",
		"band",	     "n_tasks", "n_source_tasks", "baseline",
		"pass_rate", "c",	"compiled_x",	  "compiled_x_reason",
		NULL};
	if (get_obj(v, s, "summary", "standardized", 0, &o))
		return -1;
	if (!o)
		return 0;
	if (only_keys(v, o, at, keys) || get_str(v, o, at, "format", 1, 64, &str) ||
	    get_enum(v, o, at, "scale", 1, bank_tiers, &idx) ||
	    get_str(v, o, at, "anchor", 1, 1024, &str) ||
	    get_int(v, o, at, "k", 1, 1, 1000, NULL) ||
	    get_int(v, o, at, "n_tasks", 1, 0, MAX_TASKS, NULL) ||
	    get_int(v, o, at, "n_source_tasks", 1, 0, MAX_TASKS, NULL) ||
	    get_enum(v, o, at, "baseline", 1, baselines, &idx) ||
	    get_num(v, o, at, "pass_rate", 1, 1, 0, 1, NULL) ||
	    get_num(v, o, at, "c", 1, 1, 0, 1, NULL) ||
	    get_num(v, o, at, "compiled_x", 1, 1, 1e-300, 1e300, NULL) ||
	    get_str(v, o, at, "compiled_x_reason", 0, MAX_NAME, &str) ||
	    get_arr(v, o, at, "band", 1, &band))
		return -1;
	json_t *lo = json_array_get(band, 0), *hi = json_array_get(band, 1);
	if (json_array_size(band) != 2 || !json_is_number(lo) || !json_is_number(hi) ||
	    json_number_value(lo) < 0 || json_number_value(lo) > json_number_value(hi) ||
	    json_number_value(hi) > 1)
		return bad(v, at, "band", "expected [lo, hi] with 0 <= lo <= hi <= 1");
	const char *tier = json_string_value(json_object_get(s, "bank_tier"));
	if (tier && strcmp(tier, json_string_value(json_object_get(o, "scale"))))
		return bad(v, "summary", "bank_tier", "\"%s\" but standardized.scale is \"%s\"",
			   tier, json_string_value(json_object_get(o, "scale")));
	return 0;
}

/* The weight-RSI summary fields of schema /2: interrupt_after with
 * self_minus_ckpt (both or neither), compiled_x_reason (exactly when
 * compiled_x is null), standardized. */
static int check_wrsi_v2(struct vctx *v, const json_t *s)
{
	const char *at = "summary", *str;
	json_int_t ia = 0;
	if (get_int(v, s, at, "interrupt_after", 0, 1, MAX_ROUNDS, &ia) ||
	    get_figure(v, s, at, "self_minus_ckpt", 0, 0, -1, 1) ||
	    get_str(v, s, at, "compiled_x_reason", 0, MAX_NAME, &str) || check_standardized(v, s))
		return -1;
	if (v->version < 2) {
		static const char *const v2[] = {"interrupt_after", "self_minus_ckpt",
						 "compiled_x_reason", "standardized", NULL};
		for (int i = 0; v2[i]; i++)
			if (json_object_get(s, v2[i]))
				return bad(v, at, v2[i], "not part of schema %s (it is of %s)",
					   SCORECARD_SCHEMA, SCORECARD_SCHEMA_2);
		return 0;
	}
	if (!ia != !json_object_get(s, "self_minus_ckpt"))
		return bad(v, at, ia ? "self_minus_ckpt" : "interrupt_after", "missing (%s is set)",
			   ia ? "interrupt_after" : "self_minus_ckpt");
	if (ia && ia >= json_integer_value(json_object_get(s, "rounds")))
		return bad(v, at, "interrupt_after",
			   "%" JSON_INTEGER_FORMAT " is not before the last round", ia);
	if (json_is_null(json_object_get(s, "compiled_x")) != !!str)
		return bad(v, at, "compiled_x_reason",
			   str ? "present but compiled_x is not null"
			       : "missing (compiled_x is null: say why)");
	return 0;
}

static int check_summary(struct vctx *v, const json_t *sc, enum scorecard_track t)
{
	json_t *s;
	const char *str;
	int idx;
	const char *at = "summary";
	if (get_obj(v, sc, "", "summary", 1, &s))
		return -1;
	if (t == SCORECARD_TRACK_CONTROLS) {
		if (get_int(v, s, at, "budget", 1, 1, 1000000, NULL) ||
		    get_figure(v, s, at, "weight_rsi_c", 1, 1, 0, 1) ||
		    get_figure(v, s, at, "best_of_k", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "self_refine", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "retrieval", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "recursion_gain", 1, 1, -1, 1))
			return -1;
		/* Without a weight-RSI scorecard of the model there is no
		 * recursion gain: both null, or neither. */
		if (json_is_null(json_object_get(s, "weight_rsi_c")) !=
		    json_is_null(json_object_get(s, "recursion_gain")))
			return bad(v, at, "recursion_gain",
				   "must be null exactly when weight_rsi_c is");
		return 0;
	}
	if (get_int(v, s, at, "rounds", 1, 1, MAX_ROUNDS, NULL))
		return -1;
	switch (t) {
	case SCORECARD_TRACK_WEIGHT_RSI:
		if (get_figure(v, s, at, "c0", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "c_final", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "correct", 1, 1, 0, 1) ||
		    get_figure(v, s, at, "compiled_x", 1, 1, 1e-300, 1e300) ||
		    get_figure(v, s, at, "delta_vs_frozen", 1, 0, -1, 1) ||
		    get_figure(v, s, at, "self_minus_fresh", 1, 0, -1, 1) ||
		    get_figure(v, s, at, "self_minus_round0", 1, 0, -1, 1) ||
		    get_enum(v, s, at, "bank_tier", 0, bank_tiers, &idx) ||
		    get_enum(v, s, at, "baseline", 0, baselines, &idx) ||
		    get_str(v, s, at, "anchor", 0, MAX_NAME, &str) || check_wrsi_v2(v, s))
			return -1;
		break;
	case SCORECARD_TRACK_PROCEDURE_RSI:
		if (get_str(v, s, at, "mode", 1, 64, &str) ||
		    get_figure(v, s, at, "q0", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "q_final", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "q_gain_vs_frozen", 1, 0, -1, 1))
			return -1;
		break;
	case SCORECARD_TRACK_HARNESS_RSI:
		if (get_figure(v, s, at, "c0", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "c_improved", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "c_frozen", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "improved_vs_frozen", 1, 0, -1, 1))
			return -1;
		break;
	case SCORECARD_TRACK_FRONTIER:
		if (get_figure(v, s, at, "c0", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "c_final", 1, 0, 0, 1) ||
		    get_figure(v, s, at, "c_change", 1, 0, -1, 1) ||
		    get_int(v, s, at, "frontier_size0", 1, 0, 100000000, NULL) ||
		    get_int(v, s, at, "frontier_final", 1, 0, 100000000, NULL))
			return -1;
		break;
	default: break;
	}
	return get_enum(v, s, at, "verdict", 1, rsi_verdicts, &idx);
}

static const char *const top_keys[] = {
	"schema",   "track", "created",	   "ka_version", "model",   "trainee",
	"proposer", "bank",  "k",	   "seed",	 "target",  "device",
	"protocol", "tasks", "aggregates", "rounds",	 "summary", NULL};

int scorecard_validate(const json_t *sc, const char *file, struct ka_err *e)
{
	struct vctx v = {file, e, 1};
	const char *s;
	int idx;
	json_int_t k = 0, bank_n = 0;
	json_t *schema = json_object_get(sc, "schema");
	if (!schema)
		return bad(&v, "", "schema", "missing (expected \"%s\" or \"%s\")",
			   SCORECARD_SCHEMA, SCORECARD_SCHEMA_2);
	v.version = !json_is_string(schema)				     ? 0
		    : !strcmp(json_string_value(schema), SCORECARD_SCHEMA)   ? 1
		    : !strcmp(json_string_value(schema), SCORECARD_SCHEMA_2) ? 2
									     : 0;
	if (!v.version)
		return bad(&v, "", "schema", "expected \"%s\" or \"%s\", got %s%.60s%s",
			   SCORECARD_SCHEMA, SCORECARD_SCHEMA_2, json_is_string(schema) ? "\"" : "",
			   json_is_string(schema) ? json_string_value(schema) : type_name(schema),
			   json_is_string(schema) ? "\"" : "");
	if (only_keys(&v, sc, "", top_keys) || get_enum(&v, sc, "", "track", 1, track_names, &idx))
		return -1;
	enum scorecard_track t = (enum scorecard_track)idx;
	if (check_created(&v, sc) || get_str(&v, sc, "", "ka_version", 1, 64, &s) ||
	    check_model(&v, sc, "model", 1) ||
	    check_model(&v, sc, "trainee", t == SCORECARD_TRACK_HARNESS_RSI) ||
	    check_model(&v, sc, "proposer", 0) || check_bank(&v, sc, &bank_n) ||
	    get_int(&v, sc, "", "k", 1, 1, 1000, &k) ||
	    get_int(&v, sc, "", "seed", 1, 0, INT64_MAX, NULL) ||
	    get_enum(&v, sc, "", "target", 1, targets, &idx) || check_device(&v, sc) ||
	    check_protocol(&v, sc))
		return -1;
	json_t *tasks;
	int need_tasks = t == SCORECARD_TRACK_CAPABILITY;
	if (get_arr(&v, sc, "", "tasks", need_tasks, &tasks))
		return -1;
	if (!tasks && json_object_get(sc, "aggregates"))
		return bad(&v, "", "aggregates", "present without tasks");
	if (tasks) {
		int tier_tasks[3] = {0}, tier_samples[3] = {0};
		if (check_tasks(&v, tasks, k, bank_n, tier_tasks, tier_samples) ||
		    check_aggregates(&v, sc, tier_tasks, tier_samples))
			return -1;
	}
	int rsi = t == SCORECARD_TRACK_WEIGHT_RSI || t == SCORECARD_TRACK_PROCEDURE_RSI ||
		  t == SCORECARD_TRACK_HARNESS_RSI || t == SCORECARD_TRACK_FRONTIER;
	if (rsi && check_rounds(&v, sc, t))
		return -1;
	if (!rsi && json_object_get(sc, "rounds"))
		return bad(&v, "", "rounds", "not part of a %s scorecard", track_names[t]);
	if (t != SCORECARD_TRACK_CAPABILITY && check_summary(&v, sc, t))
		return -1;
	if (t == SCORECARD_TRACK_CAPABILITY && json_object_get(sc, "summary"))
		return bad(&v, "", "summary", "not part of a capability scorecard");
	return 0;
}

/* ---- loading ------------------------------------------------------------ */

json_t *scorecard_load(const char *path, struct ka_err *e)
{
	char *buf;
	size_t len;
	struct ka_err fe;
	if (util_read_file(path, SCORECARD_MAX_BYTES, &buf, &len, &fe)) {
		ka_err_set(e, "%s", fe.msg);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!j) {
		ka_err_set(e, "%s: not JSON: line %d, column %d: %s", path, je.line, je.column,
			   je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		ka_err_set(e, "%s: expected a JSON object at the top, got %s", path, type_name(j));
		json_decref(j);
		return NULL;
	}
	return j;
}

json_t *scorecard_check_file(const char *path, struct ka_err *e)
{
	json_t *j = scorecard_load(path, e);
	if (!j)
		return NULL;
	if (scorecard_validate(j, path, e) || scorecard_recompute(j, path, e)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

void scorecard_counts(const json_t *sc, int *n_tasks, int *n_samples)
{
	json_t *tasks = json_object_get(sc, "tasks");
	*n_tasks = (int)json_array_size(tasks);
	*n_samples = 0;
	for (size_t i = 0; i < json_array_size(tasks); i++)
		*n_samples +=
			(int)json_array_size(json_object_get(json_array_get(tasks, i), "samples"));
}

/* ---- metrics bridge ------------------------------------------------------ */

void scorecard_speedup_get(const json_t *j, struct metrics_speedup *out)
{
	memset(out, 0, sizeof *out);
	if (!json_is_object(j))
		return;
	out->present = 1;
	out->median = json_number_value(json_object_get(j, "median"));
	out->lo = json_number_value(json_object_get(j, "lo"));
	out->hi = json_number_value(json_object_get(j, "hi"));
}

void scorecard_metrics_from_json(const json_t *sc, struct scorecard_metrics *m)
{
	int nt, ns;
	scorecard_counts(sc, &nt, &ns);
	json_t *tasks = json_object_get(sc, "tasks");
	m->n_tasks = nt;
	m->tasks = xcalloc((size_t)(nt ? nt : 1), sizeof *m->tasks);
	m->samples = xcalloc((size_t)(ns ? ns : 1), sizeof *m->samples);
	int k = 0;
	for (int i = 0; i < nt; i++) {
		json_t *t = json_array_get(tasks, (size_t)i);
		json_t *samples = json_object_get(t, "samples");
		m->tasks[i].name = json_string_value(json_object_get(t, "name"));
		m->tasks[i].tier = json_string_value(json_object_get(t, "tier"));
		m->tasks[i].samples = &m->samples[k];
		m->tasks[i].n_samples = (int)json_array_size(samples);
		for (size_t j = 0; j < json_array_size(samples); j++, k++) {
			json_t *s = json_array_get(samples, j);
			const char *vd = json_string_value(json_object_get(s, "verdict"));
			m->samples[k].ok = vd && !strcmp(vd, "ok");
			scorecard_speedup_get(json_object_get(s, "speedup_eager"),
					      &m->samples[k].eager);
			scorecard_speedup_get(json_object_get(s, "speedup_compiled"),
					      &m->samples[k].compiled);
		}
	}
}

void scorecard_metrics_free(struct scorecard_metrics *m)
{
	if (!m)
		return;
	free(m->tasks);
	free(m->samples);
	m->tasks = NULL;
	m->samples = NULL;
	m->n_tasks = 0;
}

/* ---- writers ----------------------------------------------------------- */

json_t *scorecard_figure_json(const struct metrics_figure *f)
{
	if (!f->defined)
		return json_null();
	return json_pack("{s:f, s:f, s:f}", "value", f->value, "lo", f->lo, "hi", f->hi);
}

json_t *scorecard_speedup_json(const struct metrics_speedup *s)
{
	if (!s->present)
		return json_null();
	return json_pack("{s:f, s:f, s:f}", "median", s->median, "lo", s->lo, "hi", s->hi);
}

json_t *scorecard_agg_json(const struct metrics_agg *a)
{
	json_t *o = json_object();
	json_object_set_new(o, "n_tasks", json_integer(a->n_tasks));
	json_object_set_new(o, "n_samples", json_integer(a->n_samples));
	json_object_set_new(o, "correct", scorecard_figure_json(&a->correct));
	json_object_set_new(o, "fast", scorecard_figure_json(&a->fast));
	json_object_set_new(o, "fast_compiled", scorecard_figure_json(&a->fast_compiled));
	json_t *fp = json_object(), *fpc = json_object();
	for (int i = 0; i < METRICS_N_P; i++) {
		json_object_set_new(fp, metrics_p_names[i], scorecard_figure_json(&a->fast_p[i]));
		json_object_set_new(fpc, metrics_p_names[i],
				    scorecard_figure_json(&a->fast_p_compiled[i]));
	}
	json_object_set_new(o, "fast_p", fp);
	json_object_set_new(o, "fast_p_compiled", fpc);
	json_object_set_new(o, "pass_at_k", scorecard_figure_json(&a->pass_at_k));
	json_object_set_new(o, "geomean_speedup", scorecard_figure_json(&a->geomean_speedup));
	json_object_set_new(o, "geomean_speedup_compiled",
			    scorecard_figure_json(&a->geomean_speedup_compiled));
	json_object_set_new(o, "mean_c", scorecard_figure_json(&a->mean_c));
	return o;
}

json_t *scorecard_aggregates_json(const struct metrics_task *tasks, int n, int k)
{
	json_t *o = json_object();
	struct metrics_agg a;
	for (int t = 0; t < 3; t++) {
		metrics_aggregate(tasks, n, tiers[t], k, &a);
		if (a.n_tasks)
			json_object_set_new(o, tiers[t], scorecard_agg_json(&a));
	}
	metrics_aggregate(tasks, n, NULL, k, &a);
	json_object_set_new(o, "overall", scorecard_agg_json(&a));
	return o;
}

void scorecard_figure_get(const json_t *fig, struct metrics_figure *out)
{
	memset(out, 0, sizeof *out);
	if (!json_is_object(fig))
		return;
	out->defined = 1;
	out->value = json_number_value(json_object_get(fig, "value"));
	out->lo = json_number_value(json_object_get(fig, "lo"));
	out->hi = json_number_value(json_object_get(fig, "hi"));
}

/* ---- recompute ------------------------------------------------------------ */

static int near(double a, double b)
{
	return fabs(a - b) <= SCORECARD_TOL * (1 + fabs(b));
}

/* Compare a stored figure with a recomputed one; parts: 1 = value only,
 * 3 = value, lo and hi. */
static int cmp_figure(struct vctx *v, const json_t *stored, const char *at, const char *key,
		      const struct metrics_figure *want, int parts, const char *source)
{
	struct metrics_figure got;
	scorecard_figure_get(json_object_get(stored, key), &got);
	if (got.defined != want->defined)
		return bad(v, at, key, "is %s but %s give %s", got.defined ? "a figure" : "null",
			   source, want->defined ? "a figure" : "null");
	if (!got.defined)
		return 0;
	char p[PATHLEN];
	join(p, at, key);
	if (!near(got.value, want->value))
		return bad(v, p, "value", "%.17g but %s give %.17g", got.value, source,
			   want->value);
	if (parts == 3 && !near(got.lo, want->lo))
		return bad(v, p, "lo", "%.17g but %s give %.17g", got.lo, source, want->lo);
	if (parts == 3 && !near(got.hi, want->hi))
		return bad(v, p, "hi", "%.17g but %s give %.17g", got.hi, source, want->hi);
	return 0;
}

static int cmp_agg(struct vctx *v, const json_t *a, const char *at, const struct metrics_agg *w)
{
	const char *src = "the samples";
	if (cmp_figure(v, a, at, "correct", &w->correct, 3, src) ||
	    cmp_figure(v, a, at, "fast", &w->fast, 3, src) ||
	    cmp_figure(v, a, at, "fast_compiled", &w->fast_compiled, 3, src))
		return -1;
	char p[PATHLEN], pc[PATHLEN];
	join(p, at, "fast_p");
	join(pc, at, "fast_p_compiled");
	for (int i = 0; i < METRICS_N_P; i++)
		if (cmp_figure(v, json_object_get(a, "fast_p"), p, metrics_p_names[i],
			       &w->fast_p[i], 3, src) ||
		    cmp_figure(v, json_object_get(a, "fast_p_compiled"), pc, metrics_p_names[i],
			       &w->fast_p_compiled[i], 3, src))
			return -1;
	return cmp_figure(v, a, at, "pass_at_k", &w->pass_at_k, 3, src) ||
			       cmp_figure(v, a, at, "geomean_speedup", &w->geomean_speedup, 3,
					  src) ||
			       cmp_figure(v, a, at, "geomean_speedup_compiled",
					  &w->geomean_speedup_compiled, 3, src) ||
			       cmp_figure(v, a, at, "mean_c", &w->mean_c, 3, src)
		       ? -1
		       : 0;
}

static int recompute_tasks(struct vctx *v, const json_t *sc)
{
	struct scorecard_metrics m;
	scorecard_metrics_from_json(sc, &m);
	json_t *tasks = json_object_get(sc, "tasks");
	int rc = -1;
	char at[PATHLEN];
	for (int i = 0; i < m.n_tasks; i++) {
		json_t *samples = json_object_get(json_array_get(tasks, (size_t)i), "samples");
		for (int j = 0; j < m.tasks[i].n_samples; j++) {
			double got = json_number_value(
				json_object_get(json_array_get(samples, (size_t)j), "score"));
			double want = metrics_sample_score(&m.tasks[i].samples[j]);
			path_fmt(at, "tasks[%d].samples[%d]", i, j);
			if (!near(got, want)) {
				bad(v, at, "score",
				    "%.17g but the verdict and speedup_eager give %.17g", got,
				    want);
				goto out;
			}
		}
	}
	json_t *ag = json_object_get(sc, "aggregates");
	int k = (int)json_integer_value(json_object_get(sc, "k"));
	struct metrics_agg a;
	for (int t = 0; t < 4; t++) {
		const char *key = t < 3 ? tiers[t] : "overall";
		json_t *stored = json_object_get(ag, key);
		if (!stored)
			continue;
		metrics_aggregate(m.tasks, m.n_tasks, t < 3 ? tiers[t] : NULL, k, &a);
		join(at, "aggregates", key);
		if (cmp_agg(v, stored, at, &a))
			goto out;
	}
	rc = 0;
out:
	scorecard_metrics_free(&m);
	return rc;
}

/* The row of rounds with this round number and arm (NULL if none). */
static json_t *round_row(const json_t *rounds, json_int_t rn, const char *arm)
{
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		json_t *r = json_array_get(rounds, i);
		if (json_integer_value(json_object_get(r, "round")) == rn &&
		    !strcmp(json_string_value(json_object_get(r, "arm")), arm))
			return r;
	}
	return NULL;
}

static int need_row(struct vctx *v, const json_t *rounds, json_int_t rn, const char *arm,
		    json_t **out)
{
	*out = round_row(rounds, rn, arm);
	if (!*out)
		return bad(v, "", "rounds",
			   "no row for round %" JSON_INTEGER_FORMAT " of arm \"%s\"", rn, arm);
	return 0;
}

/* summary[key] must equal row[field] (value, lo and hi). */
static int same_as_row(struct vctx *v, const json_t *sum, const char *key, const json_t *row,
		       const char *field, const char *source)
{
	struct metrics_figure want;
	scorecard_figure_get(json_object_get(row, field), &want);
	return cmp_figure(v, sum, "summary", key, &want, 3, source);
}

/* summary[key].value must equal a - b of two row figures. */
static int diff_of_rows(struct vctx *v, const json_t *sum, const char *key, const json_t *ra,
			const json_t *rb, const char *field, const char *source)
{
	struct metrics_figure a, b, want = {1, 0, 0, 0};
	scorecard_figure_get(json_object_get(ra, field), &a);
	scorecard_figure_get(json_object_get(rb, field), &b);
	want.value = a.value - b.value;
	return cmp_figure(v, sum, "summary", key, &want, 1, source);
}

static int check_verdict(struct vctx *v, const json_t *sum, const char *key, int beats)
{
	struct metrics_figure d;
	scorecard_figure_get(json_object_get(sum, key), &d);
	enum metrics_verdict want = metrics_rsi_verdict(&d, beats);
	const char *got = json_string_value(json_object_get(sum, "verdict"));
	if (strcmp(got, metrics_verdict_name(want)))
		return bad(v, "summary", "verdict", "\"%s\" but %s [%g, %g]%s gives \"%s\"", got,
			   key, d.lo, d.hi, beats ? "" : " (without beating the baseline)",
			   metrics_verdict_name(want));
	return 0;
}

static double fig_value(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(json_object_get(obj, key), "value"));
}

/* The weight-RSI summary against its rows (last: the last round). */
static int recompute_wrsi(struct vctx *v, const json_t *sum, const json_t *rounds, json_int_t last)
{
	json_t *r0, *rf, *rx, *ry;
	if (need_row(v, rounds, 0, "self", &r0) || need_row(v, rounds, last, "self", &rf) ||
	    need_row(v, rounds, last, "fresh_frozen", &rx) ||
	    need_row(v, rounds, last, "round0", &ry) ||
	    same_as_row(v, sum, "c0", r0, "c", "rounds (round 0, self)") ||
	    same_as_row(v, sum, "c_final", rf, "c", "rounds (last round, self)") ||
	    diff_of_rows(v, sum, "self_minus_fresh", rf, rx, "c",
			 "rounds (last round, self - fresh_frozen)") ||
	    diff_of_rows(v, sum, "self_minus_round0", rf, ry, "c",
			 "rounds (last round, self - round0)"))
		return -1;
	if (json_object_get(rf, "correct") &&
	    same_as_row(v, sum, "correct", rf, "correct", "rounds (last round, self)"))
		return -1;
	if (json_object_get(rf, "compiled_x") &&
	    same_as_row(v, sum, "compiled_x", rf, "compiled_x", "rounds (last round, self)"))
		return -1;
	if (json_object_get(sum, "self_minus_ckpt") &&
	    (need_row(v, rounds, last, "ckpt_frozen", &rx) ||
	     diff_of_rows(v, sum, "self_minus_ckpt", rf, rx, "c",
			  "rounds (last round, self - ckpt_frozen)")))
		return -1;
	return check_verdict(v, sum, "self_minus_fresh", fig_value(sum, "self_minus_round0") > 0);
}

static int recompute_rsi(struct vctx *v, const json_t *sc, enum scorecard_track t)
{
	json_t *sum = json_object_get(sc, "summary");
	if (t == SCORECARD_TRACK_CONTROLS) {
		double best = fig_value(sum, "best_of_k");
		if (fig_value(sum, "self_refine") > best)
			best = fig_value(sum, "self_refine");
		if (fig_value(sum, "retrieval") > best)
			best = fig_value(sum, "retrieval");
		if (json_is_null(json_object_get(sum, "weight_rsi_c")))
			return 0;
		struct metrics_figure want = {1, fig_value(sum, "weight_rsi_c") - best, 0, 0};
		return cmp_figure(v, sum, "summary", "recursion_gain", &want, 1,
				  "weight_rsi_c minus the best control");
	}
	json_t *rounds = json_object_get(sc, "rounds");
	json_int_t last = 0;
	for (size_t i = 0; i < json_array_size(rounds); i++) {
		json_int_t rn =
			json_integer_value(json_object_get(json_array_get(rounds, i), "round"));
		if (rn > last)
			last = rn;
	}
	json_int_t claimed = json_integer_value(json_object_get(sum, "rounds"));
	if (claimed != last)
		return bad(v, "summary", "rounds",
			   "%" JSON_INTEGER_FORMAT
			   " but the last round in rounds is %" JSON_INTEGER_FORMAT,
			   claimed, last);
	json_t *r0, *rf, *rx;
	switch (t) {
	case SCORECARD_TRACK_WEIGHT_RSI: return recompute_wrsi(v, sum, rounds, last);
	case SCORECARD_TRACK_PROCEDURE_RSI:
		if (need_row(v, rounds, 0, "self", &r0) || need_row(v, rounds, last, "self", &rf) ||
		    need_row(v, rounds, last, "frozen", &rx) ||
		    same_as_row(v, sum, "q0", r0, "q", "rounds (round 0, self)") ||
		    same_as_row(v, sum, "q_final", rf, "q", "rounds (last round, self)") ||
		    diff_of_rows(v, sum, "q_gain_vs_frozen", rf, rx, "q",
				 "rounds (last round, self - frozen)"))
			return -1;
		return check_verdict(v, sum, "q_gain_vs_frozen",
				     fig_value(sum, "q_final") > fig_value(sum, "q0"));
	case SCORECARD_TRACK_HARNESS_RSI:
		if (need_row(v, rounds, 0, "improved", &r0) ||
		    need_row(v, rounds, last, "improved", &rf) ||
		    need_row(v, rounds, last, "frozen", &rx) ||
		    same_as_row(v, sum, "c0", r0, "c", "rounds (round 0, improved)") ||
		    same_as_row(v, sum, "c_improved", rf, "c", "rounds (last round, improved)") ||
		    same_as_row(v, sum, "c_frozen", rx, "c", "rounds (last round, frozen)") ||
		    diff_of_rows(v, sum, "improved_vs_frozen", rf, rx, "c",
				 "rounds (last round, improved - frozen)"))
			return -1;
		return check_verdict(v, sum, "improved_vs_frozen",
				     fig_value(sum, "c_improved") > fig_value(sum, "c0"));
	case SCORECARD_TRACK_FRONTIER:
		if (need_row(v, rounds, 0, "self", &r0) || need_row(v, rounds, last, "self", &rf) ||
		    same_as_row(v, sum, "c0", r0, "c", "rounds (round 0, self)") ||
		    same_as_row(v, sum, "c_final", rf, "c", "rounds (last round, self)") ||
		    diff_of_rows(v, sum, "c_change", rf, r0, "c",
				 "rounds (last round - round 0, self)"))
			return -1;
		return check_verdict(v, sum, "c_change", 1);
	default: return 0;
	}
}

const char *scorecard_schema_of(const json_t *sc)
{
	const char *s = json_string_value(json_object_get(sc, "schema"));
	return s && !strcmp(s, SCORECARD_SCHEMA_2) ? SCORECARD_SCHEMA_2 : SCORECARD_SCHEMA;
}

int scorecard_recompute(const json_t *sc, const char *file, struct ka_err *e)
{
	struct vctx v = {file, e, strcmp(scorecard_schema_of(sc), SCORECARD_SCHEMA_2) ? 1 : 2};
	enum scorecard_track t;
	if (scorecard_track_parse(json_string_value(json_object_get(sc, "track")), &t))
		return bad(&v, "", "track", "unknown (validate first)");
	if (json_object_get(sc, "tasks") && recompute_tasks(&v, sc))
		return -1;
	if (t != SCORECARD_TRACK_CAPABILITY && recompute_rsi(&v, sc, t))
		return -1;
	return 0;
}
