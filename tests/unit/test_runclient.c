/* test_runclient.c: runclient's message handling without a runner process
 * (runclient.h's pure part): reading call replies (good, verdicts, error
 * replies, truncated, oversize, wrong types), load replies, the hello's
 * device object, and the call request (sample index lists and runs). Each
 * case has a literal expected result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "ka_test.h"
#include "proto.h"
#include "runclient.h"

/* Checks that print both values (named T_ to stay clear of ka_test.h). */
#define T_EQ_INT(a, b)                                                                             \
	do {                                                                                       \
		long long ta_ = (long long)(a), tb_ = (long long)(b);                              \
		if (ta_ != tb_) {                                                                  \
			printf("FAIL %s: %s:%d: %s == %lld, expected %s == %lld\n", ka_test_name,  \
			       __FILE__, __LINE__, #a, ta_, #b, tb_);                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define T_NEAR(a, b, tol)                                                                          \
	do {                                                                                       \
		double ta_ = (a), tb_ = (b);                                                       \
		if (!(fabs(ta_ - tb_) <= (tol))) {                                                 \
			printf("FAIL %s: %s:%d: %s == %.17g, expected %.17g (within %g)\n",        \
			       ka_test_name, __FILE__, __LINE__, #a, ta_, tb_, (double)(tol));     \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *ta_ = (a), *tb_ = (b);                                                 \
		if (!ta_ || !tb_ || strcmp(ta_, tb_)) {                                            \
			printf("FAIL %s: %s:%d: %s == \"%s\", expected \"%s\"\n", ka_test_name,    \
			       __FILE__, __LINE__, #a, ta_ ? ta_ : "(null)",                       \
			       tb_ ? tb_ : "(null)");                                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

/* The slot of every call case: two fp32 inputs of 4 elements, one fp16
 * output of 4 elements. */
static const struct run_tensors slot = {
	3, {16, 16, 8}, {KA_DTYPE_FP32, KA_DTYPE_FP32, KA_DTYPE_FP16}};

static const char *good_reply = "{\"ok\":true,\"time_ns\":1234.5,\"in_hash_before\":[\"1\",\"ff\"],"
				"\"in_hash_after\":[\"1\",\"fe\"],\"in_modified_at\":[-1,8],"
				"\"unwritten\":[2],\"first_unwritten\":[3],"
				"\"nonfinite\":[0],\"canary_ok\":[true,true,false]}";

/* A received message: obj from json, blobs of the given byte counts
 * (bytes 0, 1, 2, ...). */
static void msg_of(struct proto_msg *m, const char *json, int n_blobs, const size_t *lens)
{
	memset(m, 0, sizeof *m);
	m->obj = json_loads(json, 0, NULL);
	m->n_blobs = n_blobs;
	for (int k = 0; k < n_blobs; k++) {
		m->blob[k] = malloc(lens[k] ? lens[k] : 1);
		for (size_t i = 0; i < lens[k]; i++)
			m->blob[k][i] = (uint8_t)i;
		m->blob_len[k] = lens[k];
	}
}

static struct run_call_req call_req(int timed, int sample, int64_t n_sample)
{
	struct run_call_req q;
	memset(&q, 0, sizeof q);
	q.slot = 0;
	q.n_inputs = 2;
	q.n_outputs = 1;
	q.time = q.flush = timed;
	q.sample = sample;
	q.n_sample[0] = n_sample;
	return q;
}

static void test_call_good(void)
{
	struct proto_msg m;
	size_t len = 8;
	msg_of(&m, good_reply, 1, &len);
	struct run_call_req q = call_req(1, 0, 0);
	static struct run_call_res res;
	memset(&res, 0, sizeof res);
	struct ka_err e = {{0}};
	int r = runclient_parse_call(&q, &slot, &m, &res, &e);
	int moved = m.blob[0] == NULL;
	proto_msg_free(&m);
	struct run_call_res c = res; /* the checks return early: free first */
	uint8_t out3 = res.out[0] ? res.out[0][3] : 0xee;
	run_call_res_free(&res);
	T_EQ_STR(e.msg, "");
	T_EQ_INT(r, 0);
	T_EQ_INT(c.status, RUNCLIENT_OK);
	T_EQ_STR(c.verdict, "");
	T_EQ_INT(c.has_time, 1);
	T_NEAR(c.time_ns, 1234.5, 0);
	T_EQ_INT(c.n_inputs, 2);
	T_EQ_INT(c.n_outputs, 1);
	T_EQ_INT(c.in_hash_before[1], 0xff);
	T_EQ_INT(c.in_hash_after[1], 0xfe);
	T_EQ_INT(c.unwritten[0], 2);
	T_EQ_INT(c.first_unwritten[0], 3);
	T_EQ_INT(c.n_buffers, 3);
	T_EQ_INT(c.canary_ok[1], 1);
	T_EQ_INT(c.canary_ok[2], 0);
	T_EQ_INT(c.out_len[0], 8);
	T_EQ_INT(out3, 3);
	T_EQ_INT(moved, 1);
}

/* A runner with CUPTI must send each OK call's record; a verdict reply, or
 * a runner without CUPTI, need not. */
static void test_check_cupti(void)
{
	struct run_call_res res;
	memset(&res, 0, sizeof res);
	res.status = RUNCLIENT_OK;
	struct ka_err e = {{0}};
	T_EQ_INT(runclient_check_cupti(true, &res, &e), -1);
	CHECK(strstr(e.msg, "without its CUPTI record") != NULL);
	T_EQ_INT(runclient_check_cupti(false, &res, &e), 0);
	res.cupti = json_object();
	T_EQ_INT(runclient_check_cupti(true, &res, &e), 0);
	json_decref(res.cupti);
	res.cupti = NULL;
	res.status = RUNCLIENT_VERDICT;
	T_EQ_INT(runclient_check_cupti(true, &res, &e), 0);
}

static void test_call_sampled_untimed(void)
{
	/* Untimed: no time_ns needed. Sampled: 3 fp16 elements = 6 bytes. */
	const char *j = "{\"ok\":true,\"in_hash_before\":[\"0\",\"0\"],\"in_hash_after\":[\"0\","
			"\"0\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[-"
			"1],\"nonfinite\":[1],"
			"\"canary_ok\":[true,true,true,true]}";
	struct proto_msg m;
	size_t len = 6;
	msg_of(&m, j, 1, &len);
	struct run_call_req q = call_req(0, 1, 3);
	static struct run_call_res res;
	memset(&res, 0, sizeof res);
	struct ka_err e = {{0}};
	int r = runclient_parse_call(&q, &slot, &m, &res, &e);
	proto_msg_free(&m);
	int has_time = res.has_time, n_buf = res.n_buffers;
	size_t out_len = res.out_len[0];
	int64_t nonfinite = res.nonfinite[0];
	run_call_res_free(&res);
	T_EQ_STR(e.msg, "");
	T_EQ_INT(r, 0);
	T_EQ_INT(has_time, 0);
	T_EQ_INT(n_buf, 4); /* a workspace after the tensors */
	T_EQ_INT(out_len, 6);
	T_EQ_INT(nonfinite, 1);
}

static void test_call_verdicts(void)
{
	static char long_detail[RUN_DETAIL_MAX + 2000];
	memset(long_detail, 'x', sizeof long_detail - 1);
	long_detail[sizeof long_detail - 1] = 0;
	static char long_json[sizeof long_detail + 100];
	snprintf(long_json, sizeof long_json,
		 "{\"ok\":false,\"verdict\":\"runtime_fault\",\"detail\":\"%s\"}", long_detail);
	static const struct {
		const char *json;
		const char *verdict;
		size_t detail_len;
	} cases[] = {
		{"{\"ok\":false,\"verdict\":\"runtime_fault\",\"detail\":\"boom\"}",
		 "runtime_fault", 4},
		{"{\"ok\":false,\"verdict\":\"launch_error\"}", "launch_error", 0},
		{NULL, "runtime_fault", RUN_DETAIL_MAX - 1}, /* oversize detail: capped */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct proto_msg m;
		msg_of(&m, cases[i].json ? cases[i].json : long_json, 0, NULL);
		struct run_call_req q = call_req(1, 0, 0);
		static struct run_call_res res;
		memset(&res, 0, sizeof res);
		struct ka_err e = {{0}};
		int r = runclient_parse_call(&q, &slot, &m, &res, &e);
		proto_msg_free(&m);
		run_call_res_free(&res);
		T_EQ_INT(r, 0);
		T_EQ_INT(res.status, RUNCLIENT_VERDICT);
		T_EQ_STR(res.verdict, cases[i].verdict);
		T_EQ_INT(strlen(res.detail), cases[i].detail_len);
	}
}

/* Replies that are the runner's (or the harness's) fault: -1 with e. */
static void test_call_rejected(void)
{
	static const char *const arrays =
		"runner call: reply arrays do not match the slot's 3 tensors";
	static char many_canaries[1024];
	size_t l = (size_t)snprintf(
		many_canaries, sizeof many_canaries,
		"{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],"
		"\"in_hash_after\":[\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],"
		"\"first_unwritten\":[0],\"nonfinite\":[0],\"canary_ok\":[true");
	for (int i = 1; i < RUN_MAX_BUFFERS + 1; i++)
		l += (size_t)snprintf(many_canaries + l, sizeof many_canaries - l, ",true");
	snprintf(many_canaries + l, sizeof many_canaries - l, "]}");
	static const struct {
		const char *name;
		const char *json; /* NULL: good_reply */
		int n_blobs;
		size_t len;
		const char *err;
	} cases[] = {
		/* error replies and unknown verdicts */
		{"error reply", "{\"ok\":false,\"error\":\"slot 0 is empty\"}", 0, 0,
		 "runner call: slot 0 is empty"},
		{"compile_error is no call verdict", "{\"ok\":false,\"verdict\":\"compile_error\"}",
		 0, 0, "runner call: malformed reply"},
		{"verdict of the wrong type", "{\"ok\":false,\"verdict\":42}", 0, 0,
		 "runner call: malformed reply"},
		{"ok missing", "{}", 0, 0, "runner call: malformed reply"},
		{"ok of the wrong type", "{\"ok\":1}", 0, 0, "runner call: malformed reply"},
		/* truncated */
		{"no output blob", NULL, 0, 0, arrays},
		{"short output blob", NULL, 1, 6,
		 "runner call: output 0 came back with 6 bytes, not 8"},
		{"short hash list",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\"],\"in_hash_after\":[\"1\","
		 "\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[0],"
		 "\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"fewer canaries than tensors",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[0]"
		 ",\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true]}",
		 1, 8, arrays},
		{"missing nonfinite",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[0]"
		 ","
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"missing in_modified_at",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"unwritten\":[0],\"first_unwritten\":[0],\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		/* oversize */
		{"long output blob", NULL, 1, 10,
		 "runner call: output 0 came back with 10 bytes, not 8"},
		{"extra blob", NULL, 2, 8, arrays},
		{"too many canaries", many_canaries, 1, 8, arrays},
		{"hash over 16 hex digits",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"10000000000000000\"],"
		 "\"in_hash_after\":[\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],"
		 "\"first_unwritten\":[0],"
		 "\"nonfinite\":[0],\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		/* wrong types */
		{"time_ns a string",
		 "{\"ok\":true,\"time_ns\":\"1\",\"in_hash_before\":[\"1\",\"2\"],"
		 "\"in_hash_after\":[\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],"
		 "\"first_unwritten\":[0],"
		 "\"nonfinite\":[0],\"canary_ok\":[true,true,true]}",
		 1, 8, "runner call: reply without time_ns"},
		{"hash a number",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[1,2],\"in_hash_after\":[\"1\","
		 "\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[0],"
		 "\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"hash not hex",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"xyz\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":["
		 "0],\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"empty hash",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0],\"first_unwritten\":[0]"
		 ",\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"count a real",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":[0.5],\"first_unwritten\":["
		 "0],\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
		{"list an object",
		 "{\"ok\":true,\"time_ns\":1,\"in_hash_before\":[\"1\",\"2\"],\"in_hash_after\":["
		 "\"1\",\"2\"],\"in_modified_at\":[-1,-1],\"unwritten\":{\"0\":0},\"first_"
		 "unwritten\":[0],\"nonfinite\":[0],"
		 "\"canary_ok\":[true,true,true]}",
		 1, 8, arrays},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct proto_msg m;
		size_t lens[2] = {cases[i].len, cases[i].len};
		msg_of(&m, cases[i].json ? cases[i].json : good_reply, cases[i].n_blobs, lens);
		struct run_call_req q = call_req(1, 0, 0);
		static struct run_call_res res;
		memset(&res, 0, sizeof res);
		struct ka_err e = {{0}};
		int r = runclient_parse_call(&q, &slot, &m, &res, &e);
		proto_msg_free(&m);
		run_call_res_free(&res);
		if (r != -1 || strcmp(e.msg, cases[i].err))
			printf("# case: %s\n", cases[i].name);
		T_EQ_INT(r, -1);
		T_EQ_STR(e.msg, cases[i].err);
	}
}

static void test_call_slot_mismatch(void)
{
	/* A request with more inputs than the slot holds is refused before
	 * anything is read. */
	struct proto_msg m;
	size_t len = 8;
	msg_of(&m, good_reply, 1, &len);
	struct run_call_req q = call_req(1, 0, 0);
	q.n_inputs = 4;
	static struct run_call_res res;
	memset(&res, 0, sizeof res);
	struct ka_err e = {{0}};
	int r = runclient_parse_call(&q, &slot, &m, &res, &e);
	proto_msg_free(&m);
	run_call_res_free(&res);
	T_EQ_INT(r, -1);
	T_EQ_STR(e.msg, "runner call: 4 inputs do not fit the slot's 3 tensors");
}

static void test_load_reply(void)
{
	static const struct {
		const char *json;
		int rc;
		int status;
		const char *verdict, *detail, *err;
	} cases[] = {
		{"{\"ok\":true}", 0, RUNCLIENT_OK, "", "", ""},
		{"{\"ok\":false,\"verdict\":\"compile_error\",\"detail\":\"log\"}", 0,
		 RUNCLIENT_VERDICT, "compile_error", "log", ""},
		{"{\"ok\":false,\"verdict\":\"launch_error\",\"detail\":\"no kernel k\"}", 0,
		 RUNCLIENT_VERDICT, "launch_error", "no kernel k", ""},
		{"{\"ok\":false,\"verdict\":\"runtime_fault\"}", 0, RUNCLIENT_VERDICT,
		 "runtime_fault", "", ""},
		{"{\"ok\":false,\"verdict\":\"timeout\"}", -1, 0, NULL, NULL,
		 "runner load: malformed reply"},
		{"{\"ok\":false,\"verdict\":[\"compile_error\"]}", -1, 0, NULL, NULL,
		 "runner load: malformed reply"},
		{"{\"ok\":false,\"error\":\"bad plan\"}", -1, 0, NULL, NULL,
		 "runner load: bad plan"},
		{"{\"ok\":\"true\"}", -1, 0, NULL, NULL, "runner load: malformed reply"},
		/* The runner ran out of device memory: the tag leads. */
		{"{\"ok\":false,\"error\":\"cuMemAlloc of 9 bytes: CUDA_ERROR_OUT_OF_MEMORY\","
		 "\"device_memory\":true}",
		 -1, 0, NULL, NULL,
		 "runner load: " RUN_DEVICE_MEMORY_TAG
		 " cuMemAlloc of 9 bytes: CUDA_ERROR_OUT_OF_MEMORY"},
		{"{\"ok\":false,\"error\":\"x\",\"device_memory\":\"yes\"}", -1, 0, NULL, NULL,
		 "runner load: x"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *j = json_loads(cases[i].json, 0, NULL);
		static struct run_status st;
		memset(&st, 0, sizeof st);
		struct ka_err e = {{0}};
		int r = runclient_parse_load(j, &st, &e);
		json_decref(j);
		T_EQ_INT(r, cases[i].rc);
		T_EQ_STR(e.msg, cases[i].err);
		T_EQ_INT(runclient_device_memory(&e),
			 strstr(cases[i].json, "\"device_memory\":true") != NULL);
		if (r == 0) {
			T_EQ_INT(st.status, cases[i].status);
			T_EQ_STR(st.verdict, cases[i].verdict);
			T_EQ_STR(st.detail, cases[i].detail);
		}
	}
}

static void test_device(void)
{
	char name[400];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	json_t *d = json_pack("{s:s,s:s,s:i,s:s,s:[i],s:b,s:s,s:{s:i,s:i},s:I}", "name", name,
			      "type", "gpu", "compute_units", 132, "max_clock_mhz", "1980",
			      "max_work_item_sizes", 1024, "fp64", 1, "test_grade", "yes",
			      "preferred_vector_widths", "float", 4, "half", 8, "global_mem_bytes",
			      (json_int_t)150000000000);
	static struct device_info o;
	memset(&o, 0x55, sizeof o);
	runclient_parse_device(d, &o);
	json_decref(d);
	T_EQ_INT(strlen(o.name), sizeof o.name - 1); /* truncated */
	T_EQ_STR(o.type, "gpu");
	T_EQ_STR(o.vendor, ""); /* missing */
	T_EQ_INT(o.compute_units, 132);
	T_EQ_INT(o.max_clock_mhz, 0); /* a string, not an integer */
	T_EQ_INT(o.max_work_item_sizes[0], 1024);
	T_EQ_INT(o.max_work_item_sizes[1], 0); /* short list */
	T_EQ_INT(o.fp64, 1);
	T_EQ_INT(o.test_grade, 0); /* "yes" is not true */
	T_EQ_INT(o.pref_vec[4], 4);
	T_EQ_INT(o.pref_vec[6], 8);
	T_EQ_INT(o.pref_vec[0], 0);
	T_EQ_INT(o.global_mem_bytes, 150000000000);
	T_EQ_INT(o.phased_calls, 0); /* missing: a protocol 2 runner */
	T_EQ_INT(o.cupti, 0);	     /* missing: OpenCL */
	d = json_pack("{s:b,s:b}", "phased_calls", 1, "cupti", 1);
	runclient_parse_device(d, &o);
	json_decref(d);
	T_EQ_INT(o.phased_calls, 1);
	T_EQ_INT(o.cupti, 1);
}

/* The call request's JSON, compact, into buf. */
static void call_text(const struct run_call_req *q, char *buf, size_t cap, struct ka_err *e)
{
	json_t *j = runclient_call_json(q, e);
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	snprintf(buf, cap, "%s", s ? s : "(null)");
	free(s);
	json_decref(j);
}

static void test_call_request(void)
{
	static const int64_t runs_idx[8] = {0, 1, 2, 3, 10, 11, 12, 13};
	static const int64_t list_idx[3] = {1, 5, 9};
	struct run_call_req q;
	memset(&q, 0, sizeof q);
	q.slot = 2;
	q.n_inputs = 2;
	q.n_outputs = 2;
	q.in[0] = (struct run_input){.key = 0xabc, .kind = 0, .a = 0.5f, .b = 2.0f};
	q.in[1] = (struct run_input){.key = 1, .kind = 2, .lo = -3, .range = 7};
	q.poison = 0x10;
	q.time = 1;
	q.sample = 1;
	q.sample_idx[0] = runs_idx;
	q.n_sample[0] = 8;
	q.sample_idx[1] = list_idx;
	q.n_sample[1] = 3;
	char buf[1024];
	struct ka_err e = {{0}};
	call_text(&q, buf, sizeof buf, &e);
	T_EQ_STR(buf, "{\"flush\":false,\"inputs\":[{\"a\":0.5,\"b\":2.0,\"key\":"
		      "\"0000000000000abc\",\"kind\":0},"
		      "{\"key\":\"0000000000000001\",\"kind\":2,\"lo\":-3,\"range\":"
		      "\"0000000000000007\"}],\"op\":\"call\","
		      "\"poison\":\"0000000000000010\",\"return\":\"sample\",\"sample\":[{\"runs\":"
		      "[[0,4],[10,4]]},"
		      "[1,5,9]],\"slot\":2,\"time\":true}");

	q.sample = 0;
	q.n_inputs = 0;
	call_text(&q, buf, sizeof buf, &e);
	T_EQ_STR(buf,
		 "{\"flush\":false,\"inputs\":[],\"op\":\"call\",\"poison\":\"0000000000000010\","
		 "\"return\":\"all\",\"slot\":2,\"time\":true}");

	q.phased = 1; /* runner protocol 3 */
	call_text(&q, buf, sizeof buf, &e);
	T_EQ_STR(buf, "{\"flush\":false,\"inputs\":[],\"op\":\"call\",\"phased\":true,\"poison\":"
		      "\"0000000000000010\",\"return\":\"all\",\"slot\":2,\"time\":true}");
	q.phased = 0;

	q.n_inputs = 1;
	q.in[0].b = INFINITY;
	call_text(&q, buf, sizeof buf, &e);
	T_EQ_STR(buf, "(null)");
	T_EQ_STR(e.msg, "runclient: input 0 has a non-finite parameter");
}

int main(void)
{
	RUN(test_call_good);
	RUN(test_check_cupti);
	RUN(test_call_sampled_untimed);
	RUN(test_call_verdicts);
	RUN(test_call_rejected);
	RUN(test_call_slot_mismatch);
	RUN(test_load_reply);
	RUN(test_device);
	RUN(test_call_request);
	TEST_EXIT();
}
