/* test_runner.c: the OpenCL runner end to end through runclient, on the real
 * OpenCL platform (PoCL in CI): hello, load, call, every runner-side check
 * (unwritten, canaries, input hashes, sampling, timing), the load verdicts
 * and the timeout / death restart path. Inputs are checked against the CPU
 * generator bit for bit. SKIPs when there is no OpenCL platform or runner. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ka_gen.h"
#include "ka_test.h"
#include "runclient.h"
#include "task.h"

#define N 1031

static struct runclient *rc;

static const char *SRC_AFFINE =
	"__kernel void affine(__global const float *x, __global float *y, uint n) {\n"
	"  size_t i = get_global_id(0);\n"
	"  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
	"}\n";

/* A one-launch plan: kernel kname of src over `grid` work items (local size
 * `local`, 0 = none) with args x (buffer 0 + xoff), y (buffer 1) and, when
 * with_n, the uint n. */
static char *plan_ex(const char *src, const char *opts, const char *kname, uint64_t grid,
		     uint64_t local, int with_n, uint64_t xoff, const char *x_kind)
{
	json_t *args = json_array();
	if (!strcmp(x_kind, "buffer"))
		json_array_append_new(args, json_pack("{s:s,s:i,s:I}", "kind", "buffer", "buf", 0,
						      "offset", (json_int_t)xoff));
	else
		json_array_append_new(
			args, json_pack("{s:s,s:s}", "kind", "bytes", "hex", "0000000000000000"));
	json_array_append_new(args,
			      json_pack("{s:s,s:i,s:i}", "kind", "buffer", "buf", 1, "offset", 0));
	if (with_n) {
		uint32_t n = N;
		char hex[9];
		util_hex(&n, 4, hex);
		json_array_append_new(args, json_pack("{s:s,s:s}", "kind", "bytes", "hex", hex));
	}
	json_t *op = json_pack("{s:s,s:i,s:i,s:[I,i,i],s:[I,i,i],s:[i,i,i],s:[i,i,i],s:i,s:o}",
			       "op", "launch", "kernel", 0, "work_dim", 1, "grid", (json_int_t)grid,
			       1, 1, "block", (json_int_t)local, local ? 1 : 0, local ? 1 : 0,
			       "goffset", 0, 0, 0, "cluster", 0, 0, 0, "smem", 0, "args", args);
	json_t *p = json_pack("{s:s,s:s,s:i,s:[{s:s,s:s}],s:[{s:s,s:i,s:i,s:i}],s:[],s:[o]}",
			      "format", "ka-plan/1", "target", "opencl", "status", 0, "programs",
			      "source", src, "options", opts, "kernels", "name", kname, "program",
			      0, "max_dynamic_smem", 0, "carveout", -1, "workspaces", "ops", op);
	char *s = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return s;
}

static char *plan_of(const char *src, const char *kname)
{
	return plan_ex(src, "", kname, N, 0, 1, 0, "buffer");
}

static const uint64_t BYTES[2] = {N * 4, N * 4};
static const int DTYPES[2] = {KA_DTYPE_FP32, KA_DTYPE_FP32};

/* Load plan into slot; returns the status (RUNCLIENT_*), -1 on harness error. */
static int load(int slot, char *plan, struct run_status *st)
{
	struct ka_err e = {{0}};
	int r = runclient_load(rc, slot, plan, 2, BYTES, DTYPES, NULL, NULL, st, &e);
	free(plan);
	if (r) {
		printf("# load: %s\n", e.msg);
		return -1;
	}
	return (int)st->status;
}

static void req_init(struct run_call_req *q, int slot, uint64_t key)
{
	memset(q, 0, sizeof *q);
	q->slot = slot;
	q->n_inputs = 1;
	q->n_outputs = 1;
	q->in[0].key = key;
	q->in[0].kind = KA_GEN_NORMAL;
	q->in[0].a = 0.0f;
	q->in[0].b = 1.0f;
	q->poison = 0xfeedULL ^ key;
}

static int call(const struct run_call_req *q, struct run_call_res *res, double timeout)
{
	struct ka_err e = {{0}};
	int r = runclient_call(rc, q, res, timeout, &e);
	if (r)
		printf("# call: %s\n", e.msg);
	return r;
}

static void cpu_x(uint64_t key, float *x)
{
	for (int i = 0; i < N; i++)
		x[i] = ka_gen_float(key, (uint64_t)i, KA_GEN_NORMAL, 0.0f, 1.0f);
}

static void test_hello(void)
{
	json_t *d = NULL;
	struct ka_err e;
	CHECK_EQ_INT(runclient_hello(rc, &d, &e), 0);
	CHECK(json_string_length(json_object_get(d, "name")) > 0);
	json_decref(d);
	const struct device_info *di = runclient_device(rc);
	printf("# device: %s (%s), %s, test_grade %d\n", di->name, di->platform, di->type,
	       di->test_grade);
	CHECK(di->compute_units > 0);
	CHECK(di->max_work_group > 0);
	CHECK(di->base_addr_align >= 8);
	CHECK(di->global_mem_bytes > 0);
	CHECK(di->flush_bytes >= (32 << 20) || di->flush_bytes == di->max_mem_alloc);
	if (!strcmp(di->type, "cpu"))
		CHECK(di->test_grade);
}

static void test_affine_exact(void)
{
	struct run_status st;
	CHECK_EQ_INT(load(0, plan_of(SRC_AFFINE, "affine"), &st), RUNCLIENT_OK);
	uint64_t keys[2] = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
	for (int c = 0; c < 2; c++) {
		struct run_call_req q;
		struct run_call_res res;
		req_init(&q, 0, keys[c]);
		CHECK_EQ_INT(call(&q, &res, 30), 0);
		CHECK_EQ_INT(res.status, RUNCLIENT_OK);
		float x[N], y[N];
		cpu_x(keys[c], x);
		for (int i = 0; i < N; i++)
			y[i] = 2.0f * x[i] + 1.0f;
		CHECK_EQ_UINT(res.in_hash_before[0], ka_hash_bytes(x, sizeof x));
		CHECK_EQ_UINT(res.in_hash_after[0], res.in_hash_before[0]);
		CHECK_EQ_INT(res.out_len[0], sizeof y);
		CHECK_EQ_INT(memcmp(res.out[0], y, sizeof y), 0);
		CHECK(res.unwritten[0] == 0 && res.first_unwritten[0] == -1);
		CHECK_EQ_INT(res.nonfinite[0], 0);
		CHECK(res.n_buffers == 2 && res.canary_ok[0] && res.canary_ok[1]);
		CHECK(!res.has_time);
		run_call_res_free(&res);
	}
}

static void test_timing(void)
{
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 0, 77);
	q.time = 1;
	q.flush = 1;
	CHECK_EQ_INT(call(&q, &res, 30), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_OK);
	CHECK(res.has_time && res.time_ns > 0);
	CHECK(res.wall_s * 1e9 >= res.time_ns);
	printf("# affine over %d floats: %.0f ns (wall %.3f ms with a %.0f MiB flush)\n", N,
	       res.time_ns, res.wall_s * 1e3, runclient_device(rc)->flush_bytes / 1048576.0);
	run_call_res_free(&res);
	/* The per-call overhead of the protocol (no flush), for docs/PERF.md;
	 * then the same phased (runner protocol 3: two more frames and a go). */
	for (int phased = 0; phased < 2; phased++) {
		double wall = 0;
		for (int c = 0; c < 20; c++) {
			req_init(&q, 0, 78 + 20 * phased + c);
			q.time = 1;
			q.phased = phased;
			CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
			CHECK(res.time_ns > 0);
			wall += res.wall_s;
			run_call_res_free(&res);
		}
		printf("# mean wall per %scall without flush: %.3f ms\n", phased ? "phased " : "",
		       wall / 20 * 1e3);
	}
}

static void test_sample(void)
{
	static const int64_t idx[5] = {0, 7, 1030, 500, 7};
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 0, 99);
	q.sample = 1;
	q.sample_idx[0] = idx;
	q.n_sample[0] = 5;
	CHECK_EQ_INT(call(&q, &res, 30), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_OK);
	CHECK_EQ_INT(res.out_len[0], 5 * 4);
	float x[N];
	cpu_x(99, x);
	for (int k = 0; k < 5; k++) {
		float want = 2.0f * x[idx[k]] + 1.0f, got;
		memcpy(&got, res.out[0] + 4 * k, 4);
		CHECK_EQ_INT(memcmp(&got, &want, 4), 0);
	}
	run_call_res_free(&res);
}

/* Indices in consecutive runs travel as runs; the elements come back in order. */
static void test_sample_runs(void)
{
	int64_t idx[300];
	for (int k = 0; k < 100; k++) {
		idx[k] = k;		    /* the first row of a notional 100-wide output */
		idx[100 + k] = 900 + k;	    /* a middle row */
		idx[200 + k] = N - 100 + k; /* the last */
	}
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 0, 77);
	q.sample = 1;
	q.sample_idx[0] = idx;
	q.n_sample[0] = 300;
	CHECK_EQ_INT(call(&q, &res, 30), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_OK);
	CHECK_EQ_INT(res.out_len[0], 300 * 4);
	float x[N];
	cpu_x(77, x);
	for (int k = 0; k < 300; k++) {
		float want = 2.0f * x[idx[k]] + 1.0f, got;
		memcpy(&got, res.out[0] + 4 * k, 4);
		CHECK_EQ_INT(memcmp(&got, &want, 4), 0);
	}
	run_call_res_free(&res);
}

/* Table: a kernel, what the runner must report. */
struct misbehaviour {
	const char *name;
	const char *src;
	int64_t unwritten, first_unwritten;
	int canary_x, canary_y; /* expected canary_ok of buffers 0 and 1 */
	int input_changed;
};

static const struct misbehaviour MIS[] = {
	{"writes_half",
	 "__kernel void k(__global const float *x, __global float *y, uint n) {\n"
	 "  size_t i = get_global_id(0); if (i < n / 2) y[i] = x[i]; }\n",
	 N - N / 2, N / 2, 1, 1, 0},
	{"writes_past_end",
	 "__kernel void k(__global const float *x, __global float *y, uint n) {\n"
	 "  size_t i = get_global_id(0); if (i < n) y[i] = x[i]; if (i < 4) y[n + i] = 0.0f; }\n",
	 0, -1, 1, 0, 0},
	{"writes_before_start",
	 "__kernel void k(__global const float *x, __global float *y, uint n) {\n"
	 "  size_t i = get_global_id(0); if (i < n) y[i] = x[i]; if (i == 0) y[-1] = 0.0f; }\n",
	 0, -1, 1, 0, 0},
	{"writes_input",
	 "__kernel void k(__global float *x, __global float *y, uint n) {\n"
	 "  size_t i = get_global_id(0); if (i < n) { y[i] = x[i]; x[i] = 0.5f; } }\n",
	 0, -1, 1, 1, 1},
	{"nonfinite",
	 "__kernel void k(__global const float *x, __global float *y, uint n) {\n"
	 "  size_t i = get_global_id(0); if (i < n) y[i] = i < 3 ? x[i] / 0.0f : x[i]; }\n",
	 0, -1, 1, 1, 0},
};

static void test_misbehaviours(void)
{
	for (size_t t = 0; t < sizeof MIS / sizeof MIS[0]; t++) {
		const struct misbehaviour *m = &MIS[t];
		struct run_status st;
		printf("# %s\n", m->name);
		CHECK_EQ_INT(load(2, plan_of(m->src, "k"), &st), RUNCLIENT_OK);
		struct run_call_req q;
		struct run_call_res res;
		req_init(&q, 2, 1000 + t);
		CHECK_EQ_INT(call(&q, &res, 30), 0);
		CHECK_EQ_INT(res.status, RUNCLIENT_OK);
		CHECK(res.unwritten[0] == m->unwritten);
		CHECK(res.first_unwritten[0] == m->first_unwritten);
		CHECK(res.canary_ok[0] == m->canary_x);
		CHECK(res.canary_ok[1] == m->canary_y);
		CHECK((res.in_hash_after[0] != res.in_hash_before[0]) == m->input_changed);
		if (!strcmp(m->name, "nonfinite"))
			CHECK_EQ_INT(res.nonfinite[0], 3);
		else
			CHECK_EQ_INT(res.nonfinite[0], 0);
		run_call_res_free(&res);
	}
}

/* Table: a plan that must not load, the verdict and a piece of the detail. */
static void test_load_verdicts(void)
{
	static const char *SRC_SYNTAX = "__kernel void k(__global float *y) { y[0] = ; }\n";
	static const char *SRC_INCLUDE =
		"#include \"/etc/passwd\"\n__kernel void k(__global float *y) {}\n";
	static const char *SRC_SPLICED =
		"#inc\\\nlude </etc/hostname>\n__kernel void k(__global float *y) {}\n";
	static const char *SRC_TRIGRAPH =
		"#inc?\?/\nlude </etc/hostname>\n__kernel void k(__global float *y) {}\n";
	static const char *SRC_WS_SPLICE =
		"#inc\\ \nlude </etc/hostname>\n__kernel void k(__global float *y) {}\n";
	static const char *SRC_COMMENT =
		"// we include nothing\n" /* a comment may say it */
		"__kernel void k(__global const float *x, __global float *y, uint n) {\n"
		"  size_t i = get_global_id(0); if (i < n) y[i] = x[i]; }\n";
	/* An offset at the device's alignment is fine (the kernel reads 16
	 * elements past it, all inside x when the alignment is at most 4 KiB). */
	uint64_t al = (uint64_t)runclient_device(rc)->base_addr_align;
	CHECK(al > 0 && al <= 4096);
	struct {
		const char *name;
		char *plan;
		const char *verdict; /* NULL: loads fine */
		const char *detail;
	} cases[] = {
		{"syntax_error", plan_ex(SRC_SYNTAX, "", "k", 1, 0, 0, 0, "buffer"),
		 "compile_error", "error"},
		{"missing_kernel", plan_of(SRC_AFFINE, "nope"), "compile_error",
		 "no kernel named nope"},
		{"include", plan_of(SRC_INCLUDE, "k"), "compile_error", "'include'"},
		{"spliced_include", plan_of(SRC_SPLICED, "k"), "compile_error", "'include'"},
		{"trigraph_include", plan_of(SRC_TRIGRAPH, "k"), "compile_error", "trigraph ?\?/"},
		{"ws_spliced_include", plan_of(SRC_WS_SPLICE, "k"), "compile_error",
		 "a backslash separated"},
		{"comment_ok", plan_of(SRC_COMMENT, "k"), NULL, NULL},
		{"bad_option", plan_ex(SRC_AFFINE, "-I/etc", "affine", N, 0, 1, 0, "buffer"),
		 "compile_error", "-I/etc"},
		{"macro_option_ok",
		 plan_ex(SRC_AFFINE, "-DFOO=1 -cl-mad-enable", "affine", N, 0, 1, 0, "buffer"),
		 NULL, NULL},
		{"wrong_arg_count", plan_ex(SRC_AFFINE, "", "affine", N, 0, 0, 0, "buffer"),
		 "launch_error", "takes 3 arguments"},
		{"bytes_for_buffer", plan_ex(SRC_AFFINE, "", "affine", N, 0, 1, 0, "bytes"),
		 "launch_error", "must be a buffer"},
		{"unaligned_offset", plan_ex(SRC_AFFINE, "", "affine", N, 0, 1, 4, "buffer"),
		 "launch_error", "alignment"},
		{"aligned_offset_ok", plan_ex(SRC_AFFINE, "", "affine", 16, 0, 1, al, "buffer"),
		 NULL, NULL},
		{"offset_outside", plan_ex(SRC_AFFINE, "", "affine", N, 0, 1, 4 * N + 4, "buffer"),
		 "launch_error", "outside"},
		{"global_not_multiple", plan_ex(SRC_AFFINE, "", "affine", N, 64, 1, 0, "buffer"),
		 "launch_error", "not a multiple"},
		{"local_too_big",
		 plan_ex(SRC_AFFINE, "", "affine", 1 << 20, 1 << 16, 1, 0, "buffer"),
		 "launch_error", "local size"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct run_status st;
		printf("# %s\n", cases[i].name);
		int s = load(3, cases[i].plan, &st);
		if (!cases[i].verdict) {
			if (s != RUNCLIENT_OK)
				printf("# %s: %s\n", st.verdict, st.detail);
			CHECK_EQ_INT(s, RUNCLIENT_OK);
			continue;
		}
		CHECK_EQ_INT(s, RUNCLIENT_VERDICT);
		CHECK_STR(st.verdict, cases[i].verdict);
		if (!strstr(st.detail, cases[i].detail))
			printf("# detail: %.300s\n", st.detail);
		CHECK(strstr(st.detail, cases[i].detail) != NULL);
	}
	/* The failed loads left slot 3 empty. */
	struct run_call_req q;
	struct run_call_res res;
	struct ka_err e;
	req_init(&q, 3, 1);
	CHECK_EQ_INT(runclient_call(rc, &q, &res, 10, &e), -1);
	run_call_res_free(&res);
}

/* Inputs of every dtype and distribution come out of the device generator
 * bit-identical to the CPU generator (the parent relies on this). */
static void test_generator_dtypes(void)
{
	static const char *SRC_COPY =
		"__kernel void k(__global const uint *x, __global uint *y, uint n) {\n"
		"  size_t i = get_global_id(0); if (i < n) y[i] = x[i]; }\n";
	struct {
		int dtype, kind;
		float a, b;
		int64_t lo;
		uint64_t range;
	} cases[] = {
		{KA_DTYPE_FP32, KA_GEN_UNIFORM, -2.0f, 4.0f, 0, 0},
		{KA_DTYPE_FP32, KA_GEN_NORMAL, 1.5f, 0.25f, 0, 0},
		{KA_DTYPE_INT32, KA_GEN_INT, 0, 0, -5, 11},
		{KA_DTYPE_FP16, KA_GEN_NORMAL, 0.0f, 3.0f, 0, 0},
		{KA_DTYPE_BF16, KA_GEN_UNIFORM, 0.0f, 1.0f, 0, 0},
		{KA_DTYPE_INT64, KA_GEN_INT, 0, 0, -1000000, 3000000},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int es = cases[c].dtype == KA_DTYPE_INT64				      ? 8
			 : cases[c].dtype >= KA_DTYPE_FP16 && cases[c].dtype <= KA_DTYPE_BF16 ? 2
											      : 4;
		uint64_t bytes[2] = {(uint64_t)N * (uint64_t)es, (uint64_t)N * (uint64_t)es};
		int dts[2] = {cases[c].dtype, cases[c].dtype};
		struct run_status st;
		struct ka_err e;
		char *plan = plan_ex(SRC_COPY, "", "k", N, 0, 1, 0, "buffer");
		int r = runclient_load(rc, 4, plan, 2, bytes, dts, NULL, NULL, &st, &e);
		free(plan);
		CHECK(r == 0 && st.status == RUNCLIENT_OK);
		struct run_call_req q;
		struct run_call_res res;
		req_init(&q, 4, 0xabc0 + c);
		q.in[0].kind = cases[c].kind;
		q.in[0].a = cases[c].a;
		q.in[0].b = cases[c].b;
		q.in[0].lo = cases[c].lo;
		q.in[0].range = cases[c].range;
		CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
		uint8_t host[N * 8];
		for (int i = 0; i < N; i++) {
			uint64_t key = q.in[0].key;
			if (cases[c].kind == KA_GEN_INT) {
				int64_t v =
					ka_gen_int(key, (uint64_t)i, cases[c].lo, cases[c].range);
				if (es == 8)
					memcpy(host + 8 * i, &v, 8);
				else {
					int32_t w = (int32_t)v;
					memcpy(host + 4 * i, &w, 4);
				}
				continue;
			}
			float f = ka_gen_float(key, (uint64_t)i, cases[c].kind, cases[c].a,
					       cases[c].b);
			if (cases[c].dtype == KA_DTYPE_FP32) {
				memcpy(host + 4 * i, &f, 4);
			} else {
				unsigned short h = cases[c].dtype == KA_DTYPE_FP16
							   ? ka_f32_to_f16(f)
							   : ka_f32_to_bf16(f);
				memcpy(host + 2 * i, &h, 2);
			}
		}
		CHECK_EQ_UINT(res.in_hash_before[0], ka_hash_bytes(host, (size_t)N * (size_t)es));
		run_call_res_free(&res);
	}
}

/* Slots are independent: interleaved calls of two plans. */
static void test_slots_interleaved(void)
{
	struct run_status st;
	CHECK_EQ_INT(load(1, plan_of(MIS[0].src, "k"), &st), RUNCLIENT_OK);
	for (int c = 0; c < 4; c++) {
		struct run_call_req q;
		struct run_call_res res;
		req_init(&q, c % 2, 500 + c);
		CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
		CHECK_EQ_INT(res.unwritten[0], (c % 2 ? N - N / 2 : 0));
		run_call_res_free(&res);
	}
}

/* A kernel that never ends. */
static const char *SRC_HANG =
	"__kernel void k(__global const float *x, __global float *y, uint n) {\n"
	"  volatile __global const float *p = x;\n"
	"  while (p[0] != 12345.0f) { }\n"
	"  y[get_global_id(0)] = 0.0f; }\n";

/* A kernel that never ends: timeout, the runner is killed, and the next call
 * on another slot works on a fresh runner that got its slots back. */
static void test_timeout_restart(void)
{
	struct run_status st;
	CHECK_EQ_INT(load(5, plan_of(SRC_HANG, "k"), &st), RUNCLIENT_OK);
	int before = runclient_restarts(rc);
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 5, 4242);
	double t0 = util_now();
	CHECK_EQ_INT(call(&q, &res, 2.0), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_TIMEOUT);
	CHECK_STR(res.verdict, "timeout");
	CHECK(util_now() - t0 < 10);
	run_call_res_free(&res);
	req_init(&q, 0, 4243);
	CHECK_EQ_INT(call(&q, &res, 30), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_OK);
	CHECK_EQ_INT(runclient_restarts(rc), before + 1);
	float x[N];
	cpu_x(4243, x);
	float y0 = 2.0f * x[0] + 1.0f;
	CHECK_EQ_INT(memcmp(res.out[0], &y0, 4), 0);
	run_call_res_free(&res);
}

/* A kernel that crashes the runner process (PoCL runs kernels on its
 * threads): runtime_fault naming the signal, then a fresh runner. */
static void test_death_restart(void)
{
	static const char *SRC_CRASH =
		"__kernel void k(__global const float *x, __global float *y, uint n) {\n"
		"  __global int *p = (__global int *)(ulong)(16 + n * 0);\n"
		"  if (get_global_id(0) == 0) *p = 1;\n"
		"  if (get_global_id(0) < n) y[get_global_id(0)] = 0.0f; }\n";
	struct run_status st;
	CHECK_EQ_INT(load(6, plan_of(SRC_CRASH, "k"), &st), RUNCLIENT_OK);
	int before = runclient_restarts(rc);
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 6, 1);
	CHECK_EQ_INT(call(&q, &res, 20), 0);
	printf("# crash: %s: %s\n", res.verdict, res.detail);
	CHECK_EQ_INT(res.status, RUNCLIENT_VERDICT);
	CHECK_STR(res.verdict, "runtime_fault");
	/* "was killed by signal 11"; under a sanitizer "exited with status 1". */
	CHECK(strstr(res.detail, "signal") != NULL || strstr(res.detail, "exited") != NULL);
	run_call_res_free(&res);
	req_init(&q, 0, 2);
	CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
	CHECK_EQ_INT(runclient_restarts(rc), before + 1);
	run_call_res_free(&res);
}

/* Phased timed calls (runner protocol 3): what the hook saw, in order. */
struct phase_log {
	int n;
	enum run_phase seen[4];
	double sleep_ready_s; /* the hook waits this long at "ready" (a lock wait) */
	int kill_at_ready;    /* or kills the runner there */
};

static void phase_hook(void *arg, enum run_phase ph)
{
	struct phase_log *l = arg;
	if (l->n < 4)
		l->seen[l->n] = ph;
	l->n++;
	if (ph == RUN_PHASE_READY && l->kill_at_ready)
		kill(runclient_pid(rc), SIGKILL);
	if (ph == RUN_PHASE_READY && l->sleep_ready_s > 0)
		usleep((useconds_t)(l->sleep_ready_s * 1e6));
}

static void phased_init(struct run_call_req *q, int slot, uint64_t key, struct phase_log *l)
{
	req_init(q, slot, key);
	q->time = q->flush = 1;
	q->phased = 1;
	q->on_phase = phase_hook;
	q->phase_arg = l;
}

/* The next call (slot 0) works, on a runner started once more than before. */
static void check_restarted(int before, uint64_t key)
{
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 0, key);
	CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
	CHECK_EQ_INT(runclient_restarts(rc), before + 1);
	run_call_res_free(&res);
}

/* A phased call gives what a whole one does, after "ready" then
 * "replayed"; the caller's wait at "ready" (1.5 s, over the call's 1 s
 * timeout) is not the runner's time: no timeout. */
static void test_phased_call(void)
{
	CHECK(runclient_device(rc)->phased_calls);
	struct phase_log l = {.sleep_ready_s = 1.5};
	struct run_call_req q;
	struct run_call_res res;
	phased_init(&q, 0, 91, &l);
	CHECK_EQ_INT(call(&q, &res, 1.0), 0);
	CHECK_EQ_INT(res.status, RUNCLIENT_OK);
	CHECK_EQ_INT(l.n, 2);
	CHECK_EQ_INT(l.seen[0], RUN_PHASE_READY);
	CHECK_EQ_INT(l.seen[1], RUN_PHASE_REPLAYED);
	CHECK(res.phase_wait_s >= 1.5 && res.wall_s >= res.phase_wait_s);
	CHECK(res.has_time && res.time_ns > 0);
	CHECK_EQ_INT(res.unwritten[0], 0);
	CHECK(res.canary_ok[0] && res.canary_ok[1]);
	float x[N], y0;
	cpu_x(91, x);
	y0 = 2.0f * x[N - 1] + 1.0f;
	CHECK_EQ_INT(memcmp((float *)res.out[0] + N - 1, &y0, 4), 0);
	CHECK_EQ_UINT(res.in_hash_before[0], ka_hash_bytes(x, sizeof x));
	run_call_res_free(&res);
}

/* The runner dies while it waits for "go": runtime_fault (the death named),
 * no "replayed", and the next call works on a fresh runner. */
static void test_phased_dies_after_ready(void)
{
	int before = runclient_restarts(rc);
	struct phase_log l = {.kill_at_ready = 1};
	struct run_call_req q;
	struct run_call_res res;
	phased_init(&q, 0, 92, &l);
	CHECK_EQ_INT(call(&q, &res, 20), 0);
	printf("# died after ready: %s: %s\n", res.verdict, res.detail);
	CHECK_EQ_INT(res.status, RUNCLIENT_VERDICT);
	CHECK_STR(res.verdict, "runtime_fault");
	CHECK(strstr(res.detail, "signal 9") != NULL);
	CHECK_EQ_INT(l.n, 1);
	run_call_res_free(&res);
	check_restarted(before, 93);
}

/* A replay that never ends never sends "replayed": timeout, counted from
 * "go" (the hook's 1.2 s at "ready" is on top of the 1 s), the runner
 * killed and restarted for the next call. */
static void test_phased_never_replayed(void)
{
	struct run_status st;
	CHECK_EQ_INT(load(8, plan_of(SRC_HANG, "k"), &st), RUNCLIENT_OK);
	int before = runclient_restarts(rc);
	struct phase_log l = {.sleep_ready_s = 1.2};
	struct run_call_req q;
	struct run_call_res res;
	phased_init(&q, 8, 94, &l);
	double t0 = util_now();
	CHECK_EQ_INT(call(&q, &res, 1.0), 0);
	double took = util_now() - t0;
	CHECK_EQ_INT(res.status, RUNCLIENT_TIMEOUT);
	CHECK_STR(res.verdict, "timeout");
	CHECK_EQ_INT(l.n, 1);
	CHECK_EQ_INT(l.seen[0], RUN_PHASE_READY);
	CHECK(took >= 2.2 && took < 10);
	run_call_res_free(&res);
	check_restarted(before, 95);
}

/* The runner does not inherit ka's environment (it may hold API keys, and
 * on PoCL a kernel can read the runner's memory). */
static void test_runner_env(void)
{
	setenv("KA_TEST_SECRET_KEY", "sk-do-not-leak", 1);
	struct ka_err e;
	CHECK_EQ_INT(runclient_restart(rc, &e), 0);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", runclient_pid(rc));
	static char env[1 << 16];
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	size_t len = fread(env, 1, sizeof env - 1, f);
	fclose(f);
	env[len] = 0;
	int has_secret = 0, has_path = 0;
	for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
		has_secret |= !strncmp(env + i, "KA_TEST_SECRET_KEY=", 19);
		has_path |= !strncmp(env + i, "PATH=", 5);
	}
	unsetenv("KA_TEST_SECRET_KEY");
	CHECK(!has_secret);
	CHECK(has_path);
	/* The restart gave the runner its slots back. */
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 0, 31);
	CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
	run_call_res_free(&res);
}

/* Kernel printf goes to the runner's log, not into the protocol stream. */
static void test_kernel_printf(void)
{
	static const char *SRC_PRINTF =
		"__kernel void k(__global const float *x, __global float *y, uint n) {\n"
		"  size_t i = get_global_id(0);\n"
		"  if (i < 8) printf(\"{\\\"ok\\\":true} forged reply %d\\n\", (int)i);\n"
		"  if (i < n) y[i] = x[i]; }\n";
	struct run_status st;
	CHECK_EQ_INT(load(7, plan_of(SRC_PRINTF, "k"), &st), RUNCLIENT_OK);
	struct run_call_req q;
	struct run_call_res res;
	req_init(&q, 7, 8);
	CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
	CHECK_EQ_INT(res.unwritten[0], 0);
	run_call_res_free(&res);
	usleep(100000);
	char tail[4096];
	runclient_log_tail(rc, tail, sizeof tail);
	CHECK(strstr(tail, "forged reply") != NULL);
	/* The conversation is still in step. */
	req_init(&q, 0, 9);
	CHECK(call(&q, &res, 30) == 0 && res.status == RUNCLIENT_OK);
	run_call_res_free(&res);
}

int main(void)
{
	const char *build = getenv("BUILD");
	char path[512];
	snprintf(path, sizeof path, "%s/ka-run-opencl", build && *build ? build : "build");
	if (access(path, X_OK)) {
		printf("SKIP test_runner: %s not built (no OpenCL headers/library?)\n", path);
		return 0;
	}
	struct ka_err e = {{0}};
	rc = runclient_start("opencl", NULL, -1, NULL, &e);
	if (!rc) {
		if (strstr(e.msg, "no OpenCL platform")) {
			printf("SKIP test_runner: %s\n", e.msg);
			return 0;
		}
		printf("FAIL runclient_start: %s\n", e.msg);
		return 1;
	}
	RUN(test_hello);
	RUN(test_affine_exact);
	RUN(test_timing);
	RUN(test_sample);
	RUN(test_sample_runs);
	RUN(test_misbehaviours);
	RUN(test_load_verdicts);
	RUN(test_generator_dtypes);
	RUN(test_slots_interleaved);
	RUN(test_timeout_restart);
	RUN(test_death_restart);
	RUN(test_phased_call);
	RUN(test_phased_dies_after_ready);
	RUN(test_phased_never_replayed);
	RUN(test_runner_env);
	RUN(test_kernel_printf);
	runclient_stop(rc);
	TEST_EXIT();
}
