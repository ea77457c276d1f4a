/* runner.c: the request loop shared by every runner (see runner.h). It
 * parses and bounds each request, keeps the per-slot plans, dispatches to the
 * engine and writes exactly one reply per request. Everything it reads came
 * from the parent (trusted) except the plan, which came from the recorder
 * (untrusted candidate host code): plan_read and plan_check_refs bound it
 * before an engine sees it. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ka_gen.h"
#include "../common/dtype.h"
#include "../common/proto.h"

int runner_elem_bytes(const struct runner_slot *s, int t)
{
	if (t >= s->n_tensors)
		return 4;
	return (int)dtype_size((enum ka_dtype)s->dtype[t]);
}

int64_t runner_numel(const struct runner_slot *s, int t)
{
	int es = runner_elem_bytes(s, t);
	return es ? (int64_t)(s->bytes[t] / (uint64_t)es) : 0;
}

struct runner_poison runner_poison_of(uint64_t seed)
{
	uint64_t m = util_mix64(seed);
	struct runner_poison p = {
		/* one-byte dtypes: 0x80 and 7 random bits, never a valid bool */
		.p1 = (uint8_t)(0x80u | ((m >> 56) & 0x7Fu)),
		/* a NaN as fp16 and as bf16 both: sign and exponent all ones
		 * in either layout (0x7F80), a nonzero payload (1..127); the
		 * fp16-only NaN 0x7E00 is a finite bf16 near 2^125 */
		.p2 = (uint16_t)(((m >> 40) & 1u ? 0xFF80u : 0x7F80u) | (1u + (m >> 8) % 127u)),
		.p4 = 0x7FA00000u | (uint32_t)(m & 0x1FFFFFu),
		.p8 = 0x7FF4000000000000ull | (m & 0xFFFFFFFFFFFull),
	};
	return p;
}

uint64_t runner_poison_value(const struct runner_poison *pz, int es)
{
	switch (es) {
	case 1: return pz->p1;
	case 2: return pz->p2;
	case 4: return pz->p4;
	default: return pz->p8;
	}
}

const void *runner_poison_bytes(const struct runner_poison *pz, int es)
{
	switch (es) {
	case 1: return &pz->p1;
	case 2: return &pz->p2;
	case 4: return &pz->p4;
	default: return &pz->p8;
	}
}

int runner_verdict_set(struct runner_verdict *v, const char *kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	v->verdict = kind;
	v->detail = s ? s : xstrdup(kind);
	return 1;
}

int runner_take_stdio(int *in_fd, int *out_fd, struct ka_err *e)
{
	int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
	int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (in < 0 || out < 0)
		return ka_err_set(e, "runner: cannot duplicate stdin/stdout: %s", strerror(errno));
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
		return ka_err_set(e, "runner: cannot redirect stdin/stdout: %s", strerror(errno));
	close(null);
	*in_fd = in;
	*out_fd = out;
	return 0;
}

/* ---- replies ---- */

static int reply_ok(int fd, json_t *obj, int n, const void *const *blobs, const size_t *lens)
{
	struct ka_err e;
	json_object_set_new(obj, "ok", json_true());
	int rc = proto_send(fd, obj, n, blobs, lens, &e);
	json_decref(obj);
	return rc;
}

/* Set by runner_note_device_memory during the request under way. */
static int g_device_memory;

void runner_note_device_memory(void)
{
	g_device_memory = 1;
}

static int reply_error(int fd, const char *msg)
{
	struct ka_err e;
	json_t *obj = json_pack("{s:b,s:s}", "ok", 0, "error", msg);
	if (g_device_memory)
		json_object_set_new(obj, "device_memory", json_true());
	int rc = proto_send(fd, obj, 0, NULL, NULL, &e);
	json_decref(obj);
	return rc;
}

static int reply_verdict(int fd, const struct runner_verdict *v)
{
	struct ka_err e;
	json_t *obj = json_pack("{s:b,s:s,s:s}", "ok", 0, "verdict", v->verdict, "detail",
				v->detail ? v->detail : "");
	if (v->fatal)
		json_object_set_new(obj, "fatal", json_true());
	int rc = proto_send(fd, obj, 0, NULL, NULL, &e);
	json_decref(obj);
	return rc;
}

/* ---- request parsing ---- */

static int get_slot(json_t *req, int *slot, struct ka_err *e)
{
	json_t *s = json_object_get(req, "slot");
	if (!json_is_integer(s) || json_integer_value(s) < 0 ||
	    json_integer_value(s) >= RUNNER_MAX_SLOTS)
		return ka_err_set(e, "request: 'slot' missing or not in 0..%d",
				  RUNNER_MAX_SLOTS - 1);
	*slot = (int)json_integer_value(s);
	return 0;
}

static int parse_tensors(json_t *req, struct runner_slot *s, struct ka_err *e)
{
	json_t *ts = json_object_get(req, "tensors");
	if (!json_is_array(ts) || json_array_size(ts) > RUNNER_MAX_TENSORS)
		return ka_err_set(e, "load: 'tensors' missing or over %d", RUNNER_MAX_TENSORS);
	s->n_tensors = (int)json_array_size(ts);
	for (int i = 0; i < s->n_tensors; i++) {
		json_t *t = json_array_get(ts, (size_t)i);
		json_t *b = json_object_get(t, "bytes"), *d = json_object_get(t, "dtype");
		if (!json_is_integer(b) || json_integer_value(b) < 0 ||
		    (uint64_t)json_integer_value(b) > RUNNER_MAX_TENSOR_BYTES)
			return ka_err_set(e, "load: tensors[%d].bytes missing or out of range", i);
		if (!json_is_integer(d) || !dtype_size((enum ka_dtype)json_integer_value(d)))
			return ka_err_set(e, "load: tensors[%d].dtype missing or unknown", i);
		s->bytes[i] = (uint64_t)json_integer_value(b);
		s->dtype[i] = (int)json_integer_value(d);
	}
	const char *mod = json_string_value(json_object_get(req, "module"));
	if (!mod)
		mod = json_string_value(json_object_get(req, "cubin"));
	if (mod && strlen(mod) >= sizeof s->module)
		return ka_err_set(e, "load: 'module' path too long");
	snprintf(s->module, sizeof s->module, "%s", mod ? mod : "");
	const char *nat = json_string_value(json_object_get(req, "native"));
	if (nat && strlen(nat) >= sizeof s->native)
		return ka_err_set(e, "load: 'native' path too long");
	snprintf(s->native, sizeof s->native, "%s", nat ? nat : "");
	return 0;
}

static int parse_input(json_t *j, struct runner_input *in, int i, struct ka_err *e)
{
	json_t *kind = json_object_get(j, "kind");
	if (!json_is_object(j) || proto_get_u64(j, "key", &in->key) || !json_is_integer(kind) ||
	    json_integer_value(kind) < KA_GEN_NORMAL || json_integer_value(kind) > KA_GEN_INT)
		return ka_err_set(e, "call: inputs[%d]: 'key' or 'kind' missing or bad", i);
	in->kind = (int)json_integer_value(kind);
	if (in->kind == KA_GEN_INT) {
		json_t *lo = json_object_get(j, "lo");
		if (!json_is_integer(lo) || proto_get_u64(j, "range", &in->range) || in->range == 0)
			return ka_err_set(e, "call: inputs[%d]: 'lo' or 'range' missing or bad", i);
		in->lo = json_integer_value(lo);
	} else {
		json_t *a = json_object_get(j, "a"), *b = json_object_get(j, "b");
		if (!json_is_number(a) || !json_is_number(b))
			return ka_err_set(e, "call: inputs[%d]: 'a' or 'b' missing", i);
		in->a = (float)json_number_value(a);
		in->b = (float)json_number_value(b);
	}
	return 0;
}

static void call_free(struct runner_call *c)
{
	for (int i = 0; i < RUNNER_MAX_TENSORS; i++)
		free(c->sample_idx[i]);
}

/* Output o's sample given as {"runs": [[start, length], ...]}: expanded into
 * idx[o] (n[o] indices), every index below numel, the running total (across
 * outputs) capped by RUNNER_MAX_SAMPLE. */
static int parse_runs(json_t *runs, int64_t numel, int o, int64_t *total, int64_t *n_out,
		      int64_t **idx, struct ka_err *e)
{
	if (!json_is_array(runs))
		return ka_err_set(e, "call: sample[%d].runs is not a list", o);
	int64_t n = 0;
	for (size_t k = 0; k < json_array_size(runs); k++) {
		json_t *r = json_array_get(runs, k);
		json_t *a = json_array_get(r, 0), *b = json_array_get(r, 1);
		if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(a) < 0 ||
		    json_integer_value(b) < 1 || json_integer_value(a) >= numel ||
		    json_integer_value(b) > numel - json_integer_value(a))
			return ka_err_set(e,
					  "call: sample[%d].runs[%zu] is not a run inside %lld "
					  "elements",
					  o, k, (long long)numel);
		n += json_integer_value(b);
		if (*total + n > RUNNER_MAX_SAMPLE)
			return ka_err_set(e, "call: over %d sampled indices in all",
					  RUNNER_MAX_SAMPLE);
	}
	*total += n;
	n_out[o] = n;
	idx[o] = xmalloc((size_t)(n ? n : 1) * sizeof(int64_t));
	int64_t q = 0;
	for (size_t k = 0; k < json_array_size(runs); k++) {
		json_t *r = json_array_get(runs, k);
		int64_t a = json_integer_value(json_array_get(r, 0)),
			b = json_integer_value(json_array_get(r, 1));
		for (int64_t i = 0; i < b; i++)
			idx[o][q++] = a + i;
	}
	return 0;
}

/* The "sample" field: one index list (or runs) per output of slot s, whose
 * first n_inputs tensors are inputs, into n_out[] and idx[] (malloc'd). */
static int parse_sample(json_t *smp, const struct runner_slot *s, int n_inputs, int n_outputs,
			int64_t *n_out, int64_t **idx, struct ka_err *e)
{
	if (!json_is_array(smp) || json_array_size(smp) != (size_t)n_outputs)
		return ka_err_set(e, "call: 'sample' must hold one index list per output (%d)",
				  n_outputs);
	int64_t total = 0;
	for (int o = 0; o < n_outputs; o++) {
		json_t *l = json_array_get(smp, (size_t)o);
		int64_t numel = runner_numel(s, n_inputs + o);
		if (json_is_object(l)) {
			if (parse_runs(json_object_get(l, "runs"), numel, o, &total, n_out, idx, e))
				return -1;
			continue;
		}
		size_t n = json_is_array(l) ? json_array_size(l) : 0;
		total += (int64_t)n;
		if (!json_is_array(l) || total > RUNNER_MAX_SAMPLE)
			return ka_err_set(e,
					  "call: sample[%d] not a list or over %d indices in all",
					  o, RUNNER_MAX_SAMPLE);
		n_out[o] = (int64_t)n;
		idx[o] = xmalloc((n ? n : 1) * sizeof(int64_t));
		for (size_t k = 0; k < n; k++) {
			json_t *v = json_array_get(l, k);
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) >= numel)
				return ka_err_set(
					e, "call: sample[%d][%zu] is not an index below %lld", o, k,
					(long long)numel);
			idx[o][k] = json_integer_value(v);
		}
	}
	return 0;
}

static int parse_call(json_t *req, const struct runner_slot *s, struct runner_call *c,
		      struct ka_err *e)
{
	json_t *ins = json_object_get(req, "inputs");
	if (!json_is_array(ins) || json_array_size(ins) > (size_t)s->n_tensors)
		return ka_err_set(e, "call: 'inputs' missing or more than the slot's %d tensors",
				  s->n_tensors);
	c->n_inputs = (int)json_array_size(ins);
	c->n_outputs = s->n_tensors - c->n_inputs;
	for (int i = 0; i < c->n_inputs; i++)
		if (parse_input(json_array_get(ins, (size_t)i), &c->in[i], i, e))
			return -1;
	if (proto_get_u64(req, "poison", &c->poison))
		return ka_err_set(e, "call: 'poison' missing or not hex");
	c->flush = json_is_true(json_object_get(req, "flush"));
	c->time = json_is_true(json_object_get(req, "time"));
	c->phased = json_is_true(json_object_get(req, "phased"));
	const char *ret = json_string_value(json_object_get(req, "return"));
	if (!ret || (strcmp(ret, "all") && strcmp(ret, "sample")))
		return ka_err_set(e, "call: 'return' must be \"all\" or \"sample\"");
	c->sample = !strcmp(ret, "sample");
	if (!c->sample)
		return 0;
	return parse_sample(json_object_get(req, "sample"), s, c->n_inputs, c->n_outputs,
			    c->n_sample, c->sample_idx, e);
}

/* ---- the phase frames of a phased call ---- */

static int send_phase(struct runner_call *c, const char *phase, struct ka_err *e)
{
	json_t *obj = json_pack("{s:s}", "phase", phase);
	int rc = proto_send(c->out_fd, obj, 0, NULL, NULL, e);
	json_decref(obj);
	return rc;
}

int runner_call_ready(struct runner_call *c, struct ka_err *e)
{
	if (!c->phased)
		return 0;
	if (c->ready_sent)
		return ka_err_set(e, "call: 'ready' sent twice");
	if (send_phase(c, "ready", e))
		return -1;
	c->ready_sent = true;
	struct proto_msg m;
	if (proto_recv(c->in_fd, 0, &m, e))
		return -1;
	const char *op = json_string_value(json_object_get(m.obj, "op"));
	int rc =
		op && !strcmp(op, "go")
			? 0
			: ka_err_set(e, "call: expected {\"op\":\"go\"} after 'ready', got '%.40s'",
				     op ? op : "(no op)");
	proto_msg_free(&m);
	return rc;
}

int runner_call_replayed(struct runner_call *c, struct ka_err *e)
{
	if (!c->phased)
		return 0;
	if (!c->ready_sent || c->replayed_sent)
		return ka_err_set(e, "call: 'replayed' out of order");
	c->replayed_sent = true;
	return send_phase(c, "replayed", e);
}

/* ---- handlers: each returns 0 to go on, 1 to exit with 3 (fatal), -1 on a
 * broken pipe ---- */

static int reply_engine(int fd, int rc, struct runner_verdict *v, const struct ka_err *e)
{
	int sent;
	if (rc > 0) {
		sent = reply_verdict(fd, v);
		free(v->detail);
		if (sent)
			return -1;
		return v->fatal ? 1 : 0;
	}
	return reply_error(fd, e->msg) ? -1 : 0;
}

static int handle_load(struct runner_engine *eng, struct runner_slot *slots, json_t *req, int fd)
{
	struct ka_err e = {{0}};
	struct runner_verdict v = {0};
	int slot;
	if (get_slot(req, &slot, &e))
		return reply_error(fd, e.msg) ? -1 : 0;
	struct runner_slot *s = &slots[slot];
	if (s->loaded) {
		eng->unload(eng->ctx, slot);
		plan_free(&s->plan);
		s->loaded = false;
	}
	memset(s, 0, sizeof *s);
	s->check_inputs = -1;
	if (parse_tensors(req, s, &e))
		return reply_error(fd, e.msg) ? -1 : 0;
	json_t *jp = json_object_get(req, "plan");
	int rc = 0;
	json_t *ni = json_object_get(jp, "n_inputs");
	s->n_inputs = json_is_integer(ni) ? (int)json_integer_value(ni) : -1;
	json_t *pv = json_object_get(jp, "params");
	if (json_is_array(pv) && json_array_size(pv) <= 16) {
		s->n_params = (int)json_array_size(pv);
		for (int i = 0; i < s->n_params; i++)
			s->params[i] = json_integer_value(json_array_get(pv, (size_t)i));
	}
	if (json_is_object(jp)) {
		char *text = json_dumps(jp, JSON_COMPACT);
		rc = text ? plan_read(text, strlen(text), &s->plan, &e) : -1;
		free(text);
	} else if (s->native[0]) {
		/* A trusted native baseline: the engine runs the library. */
		snprintf(s->plan.target, sizeof s->plan.target, "%s", eng->target);
	} else {
		return reply_error(fd, "load: 'plan' missing or not an object") ? -1 : 0;
	}
	/* A plan that does not parse or points outside its buffers is the
	 * candidate's launch_error, not a harness problem. */
	if (!rc && strcmp(s->plan.target, eng->target))
		rc = ka_err_set(&e, "plan: target is '%s', this runner replays '%s'",
				s->plan.target, eng->target);
	if (!rc)
		rc = plan_check_refs(&s->plan, s->n_tensors, s->bytes, &e);
	if (rc) {
		plan_free(&s->plan);
		v.verdict = "launch_error";
		v.detail = xstrdup(e.msg);
		return reply_engine(fd, 1, &v, &e);
	}
	rc = eng->load(eng->ctx, slot, s, &v, &e);
	if (rc) {
		eng->unload(eng->ctx, slot);
		plan_free(&s->plan);
		return reply_engine(fd, rc, &v, &e);
	}
	s->loaded = true;
	return reply_ok(fd, json_object(), 0, NULL, NULL) ? -1 : 0;
}

static json_t *hex_array(const uint64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, proto_u64(v[i]));
	return a;
}

static json_t *int_array(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

/* Whether a call left every input as generated and every canary whole: a
 * device check may then compute gold from the slot's inputs as they are. */
static bool call_left_intact(const struct runner_call *c, const struct runner_result *res)
{
	for (int k = 0; k < c->n_inputs; k++)
		if (res->in_modified_at[k] >= 0)
			return false;
	for (int b = 0; b < res->n_buffers; b++)
		if (!res->canary_ok[b])
			return false;
	return true;
}

static int parse_check(json_t *req, const struct runner_slot *s, struct runner_check *c,
		       struct ka_err *e)
{
	const char *cubin = json_string_value(json_object_get(req, "cubin"));
	json_t *items = json_object_get(req, "items"), *params = json_object_get(req, "params");
	json_t *at = json_object_get(req, "atol"), *rt = json_object_get(req, "rtol");
	json_t *ni = json_object_get(req, "n_inputs");
	if (!cubin || !*cubin || strlen(cubin) >= sizeof c->cubin)
		return ka_err_set(e, "check: 'cubin' missing or too long");
	snprintf(c->cubin, sizeof c->cubin, "%s", cubin);
	if (!json_is_integer(items) || json_integer_value(items) < 1 || !json_is_array(params) ||
	    json_array_size(params) > 16 || !json_is_number(at) || !json_is_number(rt) ||
	    !json_is_integer(ni))
		return ka_err_set(e, "check: 'items', 'params', 'atol', 'rtol' or 'n_inputs' "
				     "missing or bad");
	c->items = json_integer_value(items);
	c->n_params = (int)json_array_size(params);
	for (int i = 0; i < c->n_params; i++) {
		json_t *v = json_array_get(params, (size_t)i);
		if (!json_is_integer(v))
			return ka_err_set(e, "check: params[%d] is not an integer", i);
		c->params[i] = json_integer_value(v);
	}
	c->atol = json_number_value(at);
	c->rtol = json_number_value(rt);
	c->n_inputs = (int)json_integer_value(ni);
	if (c->n_inputs != s->check_inputs)
		return ka_err_set(e, "check: the slot's last call did not leave %d intact inputs",
				  c->n_inputs);
	c->n_outputs = s->n_tensors - c->n_inputs;
	return parse_sample(json_object_get(req, "sample"), s, c->n_inputs, c->n_outputs,
			    c->n_sample, c->sample_idx, e);
}

/* The reply to a check: per output its counts and first mismatches (values
 * as 64-bit patterns, exact), the device gold at the sampled elements as
 * blobs. */
static int reply_check(int fd, const struct runner_check *c, struct runner_check_result *res)
{
	json_t *outs = json_array();
	const void *blobs[RUNNER_MAX_TENSORS];
	size_t lens[RUNNER_MAX_TENSORS];
	for (int o = 0; o < c->n_outputs; o++) {
		const struct runner_check_out *co = &res->out[o];
		json_t *first = json_array();
		for (int k = 0; k < co->n_first; k++) {
			uint64_t g, v;
			memcpy(&g, &co->gold[k], 8);
			memcpy(&v, &co->got[k], 8);
			json_array_append_new(first, json_pack("{s:I,s:o,s:o,s:b}", "index",
							       (json_int_t)co->index[k], "got",
							       proto_u64(v), "gold", proto_u64(g),
							       "finite", co->finite[k]));
		}
		json_array_append_new(
			outs, json_pack("{s:I,s:I,s:I,s:f,s:o}", "checked", (json_int_t)co->checked,
					"bad", (json_int_t)co->bad, "nonfinite",
					(json_int_t)co->nonfinite, "max_abs_error",
					isfinite(co->max_abs_error) ? co->max_abs_error : 0.0,
					"first", first));
		blobs[o] = res->gold_at[o] ? (const void *)res->gold_at[o] : (const void *)"";
		lens[o] = (size_t)c->n_sample[o] * sizeof(double);
	}
	json_t *obj = json_pack("{s:o,s:f,s:f}", "outputs", outs, "gold_ms", res->gold_ms,
				"compare_ms", res->compare_ms);
	return reply_ok(fd, obj, c->n_outputs, blobs, lens);
}

static int handle_check(struct runner_engine *eng, struct runner_slot *slots, json_t *req, int fd)
{
	struct ka_err e = {{0}};
	int slot;
	if (get_slot(req, &slot, &e))
		return reply_error(fd, e.msg) ? -1 : 0;
	const struct runner_slot *s = &slots[slot];
	if (!eng->check)
		return reply_error(fd, "check: this runner has no device check") ? -1 : 0;
	if (!s->loaded)
		return reply_error(fd, "check: slot is not loaded") ? -1 : 0;
	struct runner_check *c = xcalloc(1, sizeof *c);
	struct runner_check_result *res = xcalloc(1, sizeof *res);
	int ret;
	if (parse_check(req, s, c, &e) || eng->check(eng->ctx, slot, s, c, res, &e))
		ret = reply_error(fd, e.msg) ? -1 : 0;
	else
		ret = reply_check(fd, c, res) ? -1 : 0;
	for (int o = 0; o < RUNNER_MAX_TENSORS; o++) {
		free(res->gold_at[o]);
		free(c->sample_idx[o]);
	}
	free(c);
	free(res);
	return ret;
}

static int handle_call(struct runner_engine *eng, struct runner_slot *slots, json_t *req, int in_fd,
		       int fd)
{
	struct ka_err e = {{0}};
	struct runner_verdict v = {0};
	int slot;
	if (get_slot(req, &slot, &e))
		return reply_error(fd, e.msg) ? -1 : 0;
	struct runner_slot *s = &slots[slot];
	if (!s->loaded)
		return reply_error(fd, "call: slot is not loaded") ? -1 : 0;
	struct runner_call *c = xcalloc(1, sizeof *c);
	struct runner_result *res = xcalloc(1, sizeof *res);
	int ret;
	s->check_inputs = -1;
	if (parse_call(req, s, c, &e)) {
		ret = reply_error(fd, e.msg) ? -1 : 0;
		goto out;
	}
	if (c->phased && !eng->phased) {
		ret = reply_error(fd, "call: this runner has no phased calls") ? -1 : 0;
		goto out;
	}
	c->in_fd = in_fd;
	c->out_fd = fd;
	int rc = eng->call(eng->ctx, slot, s, c, res, &v, &e);
	/* A phased call's reply must follow both frames (the parent holds the
	 * device alone only between them). */
	if (!rc && c->phased && !c->replayed_sent)
		rc = ka_err_set(&e, "call: the engine replied without reporting its phases");
	if (!rc)
		s->check_inputs = call_left_intact(c, res) ? c->n_inputs : -1;
	if (rc) {
		ret = reply_engine(fd, rc, &v, &e);
		goto out;
	}
	json_t *obj = json_object();
	if (res->has_time)
		json_object_set_new(obj, "time_ns", json_real(res->time_ns));
	json_object_set_new(obj, "in_hash_before", hex_array(res->in_hash_before, c->n_inputs));
	json_object_set_new(obj, "in_hash_after", hex_array(res->in_hash_after, c->n_inputs));
	json_t *mod = json_array();
	for (int k = 0; k < c->n_inputs; k++)
		json_array_append_new(mod, json_integer(res->in_modified_at[k]));
	json_object_set_new(obj, "in_modified_at", mod);
	json_t *can = json_array();
	for (int i = 0; i < res->n_buffers; i++)
		json_array_append_new(can, json_boolean(res->canary_ok[i]));
	json_object_set_new(obj, "canary_ok", can);
	json_object_set_new(obj, "unwritten", int_array(res->unwritten, c->n_outputs));
	json_object_set_new(obj, "first_unwritten", int_array(res->first_unwritten, c->n_outputs));
	json_object_set_new(obj, "nonfinite", int_array(res->nonfinite, c->n_outputs));
	if (res->extra)
		json_object_update(obj, res->extra);
	const void *blobs[RUNNER_MAX_TENSORS];
	for (int o = 0; o < c->n_outputs; o++)
		blobs[o] = res->blob[o] ? (const void *)res->blob[o] : (const void *)"";
	ret = reply_ok(fd, obj, c->n_outputs, blobs, res->blob_len) ? -1 : 0;
out:
	for (int o = 0; o < RUNNER_MAX_TENSORS; o++)
		free(res->blob[o]);
	json_decref(res->extra);
	call_free(c);
	free(c);
	free(res);
	return ret;
}

int runner_serve(struct runner_engine *eng, int in_fd, int out_fd)
{
	/* A parent that went away must end the runner, not kill it with a
	 * signal halfway through a reply. */
	signal(SIGPIPE, SIG_IGN);
	struct runner_slot *slots = xcalloc(RUNNER_MAX_SLOTS, sizeof *slots);
	int status = 0;
	for (;;) {
		struct proto_msg m;
		struct ka_err e = {{0}};
		g_device_memory = 0;
		int r = proto_recv(in_fd, 0, &m, &e);
		if (r) {
			/* EOF: the parent closed our stdin; garbage: nothing
			 * sensible can be answered on a desynchronised pipe. */
			if (strstr(e.msg, "closed") == NULL)
				fprintf(stderr, "ka-run: %s\n", e.msg);
			break;
		}
		const char *op = json_string_value(json_object_get(m.obj, "op"));
		int h = 0;
		if (!op) {
			h = reply_error(out_fd, "request without 'op'") ? -1 : 0;
		} else if (!strcmp(op, "hello")) {
			json_t *dev = json_object();
			if (eng->hello(eng->ctx, dev, &e)) {
				json_decref(dev);
				h = reply_error(out_fd, e.msg) ? -1 : 0;
			} else {
				/* Protocol 2: the device check (op "check"); 3:
				 * phased calls. */
				json_object_set_new(dev, "runner_protocol", json_integer(3));
				json_object_set_new(dev, "device_check",
						    json_boolean(eng->check != NULL));
				json_object_set_new(dev, "phased_calls", json_boolean(eng->phased));
				json_t *obj = json_object();
				json_object_set_new(obj, "target", json_string(eng->target));
				json_object_set_new(obj, "device", dev);
				h = reply_ok(out_fd, obj, 0, NULL, NULL) ? -1 : 0;
			}
		} else if (!strcmp(op, "load")) {
			h = handle_load(eng, slots, m.obj, out_fd);
		} else if (!strcmp(op, "call")) {
			h = handle_call(eng, slots, m.obj, in_fd, out_fd);
		} else if (!strcmp(op, "check")) {
			h = handle_check(eng, slots, m.obj, out_fd);
		} else if (!strcmp(op, "quit")) {
			reply_ok(out_fd, json_object(), 0, NULL, NULL);
			proto_msg_free(&m);
			break;
		} else {
			char msg[128];
			snprintf(msg, sizeof msg, "unknown op '%.40s'", op);
			h = reply_error(out_fd, msg) ? -1 : 0;
		}
		proto_msg_free(&m);
		if (h) {
			status = h > 0 ? 3 : 1;
			break;
		}
	}
	/* After a fatal fault the device may hang on release: just exit. */
	if (status == 3)
		return status;
	for (int i = 0; i < RUNNER_MAX_SLOTS; i++) {
		if (slots[i].loaded)
			eng->unload(eng->ctx, i);
		plan_free(&slots[i].plan);
	}
	free(slots);
	eng->destroy(eng->ctx);
	return status;
}
