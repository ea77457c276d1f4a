/* test_devgold.c: the device gold's parent side (devgold.h) and what can run
 * without a GPU: the generated gold source (double outputs, KA_GOLD before
 * the headers, the kernel's signature), its nvcc build into a cached cubin
 * (where nvcc exists; every bank task with KA_TEST_DEVGOLD_ALL=1), the
 * decision table (cpu-full / device-full / sampled), the cost estimate, the
 * runner's counts turned into the same tally (and so the same verdict and
 * evidence) as the CPU comparison of every element, the gold-against-gold
 * cross-check, the check request and reply (runclient), the task's trust
 * flag, and the OpenCL runner's refusal of the check op. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bank.h"
#include "cmp.h"
#include "devgold.h"
#include "grade.h"
#include "ka_test.h"
#include "proto.h"
#include "runclient.h"
#include "task.h"

#define GELU "bank/public/L1/gelu_bias_scale"

static void test_source(void)
{
	struct ka_err e;
	struct ka_task *t = task_load(GELU, &e);
	CHECK(t != NULL);
	CHECK_EQ_INT(t->trusted, 0); /* task_load's default: not trusted */
	char *src = bank_cuda_gold_source(t);
	char *plain = bank_cuda_ref_source(t);
	task_free(t);
	CHECK(src && plain);
	const char *def = strstr(src, "#define KA_GOLD 1\n");
	const char *hdr = strstr(src, "#line 1 \"ka_ref.h\"");
	int ok = def && hdr && def < hdr &&
		 strstr(src, "extern \"C\" __global__ void ka_gold(long long n, long long p_R, "
			     "long long p_C, const float *__restrict__ in_x, const float "
			     "*__restrict__ in_scale, const float *__restrict__ in_bias, double "
			     "*__restrict__ out_y)") &&
		 strstr(src, "ref(i, p_R, p_C, in_x, in_scale, in_bias, out_y);") &&
		 !strstr(plain, "#define KA_GOLD") && strstr(plain, "float *__restrict__ out_y)") &&
		 strstr(plain, "ka_ref_kernel(");
	free(src);
	free(plain);
	CHECK(ok);
}

/* A fresh work folder under /tmp (rmtree'd by the caller). */
static char *work_dir(void)
{
	char tmpl[] = "/tmp/ka-test-devgold-XXXXXX";
	char *d = mkdtemp(tmpl);
	return d ? strdup(d) : NULL;
}

static int have_nvcc(void)
{
	return system("command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]") == 0;
}

/* nvcc builds the module once; the second build is the cache's. */
static void test_build(void)
{
	if (!have_nvcc()) {
		printf("SKIP test_build: no nvcc\n");
		return;
	}
	if (!getenv("NVCC") && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		setenv("NVCC", "/usr/local/cuda/bin/nvcc", 1);
	struct ka_err e = {{0}};
	struct ka_task *t = task_load(GELU, &e);
	char *w = work_dir();
	CHECK(t && w);
	char *a = devgold_build(t, "sm_90a", w, &e);
	double t0 = util_now();
	char *b = a ? devgold_build(t, "sm_90a", w, &e) : NULL;
	double cached_s = util_now() - t0;
	int exists = a && access(a, R_OK) == 0;
	int same = a && b && !strcmp(a, b);
	int cubin = a && strstr(a, "/devgold/gelu_bias_scale-") && strstr(a, ".cubin");
	if (!a)
		printf("# %s\n", e.msg);
	free(a);
	free(b);
	task_free(t);
	util_rmtree(w);
	free(w);
	CHECK(exists && same && cubin);
	CHECK(cached_s < 0.5);
}

/* KA_TEST_DEVGOLD_ALL=1: every task of bank/public builds as device gold. */
static void test_build_all(void)
{
	if (!getenv("KA_TEST_DEVGOLD_ALL") || !have_nvcc()) {
		printf("SKIP test_build_all: set KA_TEST_DEVGOLD_ALL=1 (and have nvcc)\n");
		return;
	}
	struct bank_list l = {0};
	struct ka_err e = {{0}};
	CHECK(bank_scan("bank/public", &l, &e) == 0);
	char *w = work_dir();
	int bad = 0;
	for (int i = 0; i < l.n; i++) {
		struct ka_task *t = task_load(l.dirs[i], &e);
		char *c = t ? devgold_build(t, "sm_90a", w, &e) : NULL;
		if (!c) {
			printf("# %s: %s\n", l.dirs[i], e.msg);
			bad++;
		}
		free(c);
		task_free(t);
	}
	util_rmtree(w);
	free(w);
	bank_list_free(&l);
	CHECK_EQ_INT(bad, 0);
}

static void test_choose(void)
{
	/* cpu_full, timed, trusted, device_ok, device_s -> check */
	static const struct {
		struct devgold_when w;
		enum devgold_check want;
	} rows[] = {
		{{1, 0, 1, 1, 0.1}, DEVGOLD_CPU_FULL},
		{{1, 1, 1, 1, 0.1}, DEVGOLD_CPU_FULL},
		{{1, 0, 0, 0, 99}, DEVGOLD_CPU_FULL},
		{{0, 0, 1, 1, 0.1}, DEVGOLD_DEVICE_FULL},
		{{0, 0, 1, 1, DEVGOLD_BUDGET_S}, DEVGOLD_DEVICE_FULL},
		{{0, 0, 1, 1, DEVGOLD_BUDGET_S * 1.01}, DEVGOLD_SAMPLED},
		{{0, 1, 1, 1, 0.1}, DEVGOLD_SAMPLED}, /* timed: unchanged */
		{{0, 0, 0, 1, 0.1}, DEVGOLD_SAMPLED}, /* not trusted (a frontier proposal) */
		{{0, 0, 1, 0, 0.1}, DEVGOLD_SAMPLED}, /* OpenCL, or an old runner */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		CHECK_EQ_INT(devgold_choose(&rows[i].w), rows[i].want);
	CHECK_EQ_STR(devgold_check_name(DEVGOLD_CPU_FULL), "cpu-full");
	CHECK_EQ_STR(devgold_check_name(DEVGOLD_DEVICE_FULL), "device-full");
	CHECK_EQ_STR(devgold_check_name(DEVGOLD_SAMPLED), "sampled");
}

static void test_cost(void)
{
	/* L1 elementwise at 16 Mi items of 100 ns: the whole on 500 cores */
	CHECK_NEAR(devgold_cost_s(1e-7, 1 << 24), 1e-7 * (1 << 24) / 500, 1e-12);
	/* 4096 heavy items (a GEMM row each, 30 ms): one item on one slow thread */
	CHECK_NEAR(devgold_cost_s(0.03, 4096), 0.03 * 20 + 0.0, 0.03 * 4096 / 500);
	CHECK(devgold_cost_s(0.03, 4096) >= 0.6);
	CHECK(devgold_cost_s(1.0, 10) > DEVGOLD_BUDGET_S); /* a second per item: sampled */
}

/* What the runner computes for one output (devcheck.cu, on the host): the
 * counts with cmp.h's rule, the first RUN_CHECK_FIRST mismatches. */
static void runner_side(const float *got, const double *gold, int64_t n, double atol, double rtol,
			struct run_check_out *co)
{
	memset(co, 0, sizeof *co);
	co->checked = n;
	for (int64_t i = 0; i < n; i++) {
		double v = got[i];
		int how = ka_cmp_elem(v, gold[i], atol, rtol);
		if (how == KA_CMP_OK)
			continue;
		co->bad++;
		if (how == KA_CMP_NONFINITE)
			co->nonfinite++;
		else if (fabs(v - gold[i]) > co->max_abs_error)
			co->max_abs_error = fabs(v - gold[i]);
		if (co->n_first < RUN_CHECK_FIRST) {
			int k = co->n_first++;
			co->index[k] = i;
			co->finite[k] = isfinite(v);
			co->got[k] = co->finite[k] ? v : 0;
			co->gold[k] = gold[i];
		}
	}
}

/* The tally from the runner's counts equals the CPU comparison of every
 * element: counts, largest error, the first ten mismatches over two
 * outputs (output order, then index order), and so the verdict and its
 * detail. */
static void test_tally_matches_cpu(void)
{
	enum { N = 1000 };
	static float got[2][N];
	static double gold[2][N];
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < N; i++) {
			gold[j][i] = sin(i * 0.37 + j);
			got[j][i] = (float)gold[j][i];
		}
	got[0][17] += 0.5f;
	got[0][999] = NAN;
	got[1][3] = INFINITY;
	for (int i = 100; i < 120; i++)
		got[1][i] += 0.25f;
	double atol = 1e-6, rtol = 1e-5;
	struct grade_tally cpu, dev;
	grade_tally_init(&cpu);
	grade_tally_init(&dev);
	struct run_check_res r;
	memset(&r, 0, sizeof r);
	r.n_outputs = 2;
	const char *names[2] = {"y", "z"};
	for (int j = 0; j < 2; j++) {
		grade_compare_output(names[j], KA_DTYPE_FP32, (const uint8_t *)got[j], N, NULL,
				     gold[j], atol, rtol, &cpu);
		runner_side(got[j], gold[j], N, atol, rtol, &r.out[j]);
	}
	devgold_tally(&r, names, &dev);
	char a[1024], b[1024];
	enum verdict va = grade_tally_describe(&cpu, atol, rtol, 0, a, sizeof a);
	enum verdict vb = grade_tally_describe(&dev, atol, rtol, 0, b, sizeof b);
	char *ja = json_dumps(cpu.mismatches, JSON_COMPACT | JSON_SORT_KEYS);
	char *jb = json_dumps(dev.mismatches, JSON_COMPACT | JSON_SORT_KEYS);
	int same = !strcmp(ja, jb) && cpu.n_bad == dev.n_bad &&
		   cpu.n_nonfinite == dev.n_nonfinite && cpu.max_err == dev.max_err && va == vb &&
		   !strcmp(a, b);
	long long nb = (long long)dev.n_bad, nn = (long long)dev.n_nonfinite;
	size_t nm = json_array_size(dev.mismatches);
	free(ja);
	free(jb);
	grade_tally_free(&cpu);
	grade_tally_free(&dev);
	CHECK(same);
	CHECK_EQ_INT(nb, 23);
	CHECK_EQ_INT(nn, 2);
	CHECK_EQ_INT(nm, GRADE_MAX_MISMATCH);
	CHECK_EQ_INT(va, VERDICT_NONFINITE);
}

/* One wrong element of 16 Mi: wrong_answer with that index as evidence. */
static void test_one_wrong(void)
{
	struct run_check_res r;
	memset(&r, 0, sizeof r);
	r.n_outputs = 1;
	r.out[0] = (struct run_check_out){.checked = 1 << 24,
					  .bad = 1,
					  .max_abs_error = 1.0,
					  .n_first = 1,
					  .index = {12345678},
					  .got = {1.5},
					  .gold = {0.5},
					  .finite = {1}};
	const char *names[1] = {"y"};
	struct grade_tally tl;
	grade_tally_init(&tl);
	devgold_tally(&r, names, &tl);
	char d[512];
	enum verdict v = grade_tally_describe(&tl, 1e-6, 1e-5, 0, d, sizeof d);
	json_t *m = json_array_get(tl.mismatches, 0);
	long long at = (long long)json_integer_value(json_object_get(m, "index"));
	grade_tally_free(&tl);
	CHECK_EQ_INT(v, VERDICT_WRONG_ANSWER);
	CHECK_EQ_INT(at, 12345678);
	CHECK(strstr(d, "1 of the checked elements are outside atol 1e-06 + rtol 1e-05 (0 "
			"non-finite); y[12345678] got 1.5 want 0.5;") != NULL);
}

/* devgold_outcome: the golds' disagreement is the grader's failure naming
 * the task, element and values; a wrong element the candidate's
 * wrong_answer with the device-full evidence; all right, nothing. */
static void test_outcome(void)
{
	struct ka_err e = {{0}};
	struct ka_task *t = task_load(GELU, &e);
	CHECK(t != NULL);
	static double cpu[64];
	double *cpus[1] = {cpu};
	int64_t idx[2] = {3, 40};
	const int64_t *elems[1] = {idx};
	int dtypes[1] = {KA_DTYPE_FP32};
	cpu[3] = 0.25;
	cpu[40] = -1.5;
	double dev_same[2] = {0.25, -1.5}, dev_off[2] = {0.25, -1.5 + 1e-6};
	struct run_check_res r;
	memset(&r, 0, sizeof r);
	r.n_outputs = 1;
	r.out[0].checked = 64;
	r.gold[0] = dev_same;
	r.n_gold[0] = 2;
	enum verdict v = VERDICT_OK;
	char d[1024] = "";
	json_t *ev = NULL;
	int ok = devgold_outcome(t, "R=8,C=8", dtypes, &r, elems, cpus, &v, d, sizeof d, &ev, &e);
	r.out[0] = (struct run_check_out){.checked = 64,
					  .bad = 1,
					  .max_abs_error = 2,
					  .n_first = 1,
					  .index = {17},
					  .got = {3.0},
					  .gold = {1.0},
					  .finite = {1}};
	int wrong =
		devgold_outcome(t, "R=8,C=8", dtypes, &r, elems, cpus, &v, d, sizeof d, &ev, &e);
	char *evs = ev ? json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(ev);
	r.gold[0] = dev_off;
	int grader =
		devgold_outcome(t, "R=8,C=8", dtypes, &r, elems, cpus, &v, d, sizeof d, &ev, &e);
	task_free(t);
	CHECK_EQ_INT(ok, 0);
	CHECK_EQ_INT(wrong, 1);
	CHECK_EQ_STR(evs, "{\"check\":\"device-full\",\"count\":1,\"max_abs_error\":2.0,"
			  "\"mismatches\":[{\"expected\":1.0,\"got\":3.0,\"index\":17,"
			  "\"output\":\"y\"}],\"nonfinite\":0}");
	free(evs);
	CHECK_EQ_INT(grader, -1);
	CHECK(strstr(e.msg, "gelu_bias_scale: the device gold and the CPU gold differ at y[40] at "
			    "R=8,C=8: -1.4999990000000001 against -1.5 (a grader problem") != NULL);
}

static void test_cross_check(void)
{
	double cpu[8] = {1.0, -2.0, 1e9, 0.0, NAN, INFINITY, 3.0, 7.0};
	int64_t idx[4] = {0, 1, 2, 3};
	double same[4] = {1.0, -2.0, 1e9, 0.0};
	double ulp[4] = {nextafter(1.0, 2.0), -2.0, nextafter(1e9, 0.0), 0.0};
	double far[4] = {1.0, -2.0, 1e9, 1e-8}; /* a thousandth of atol 1e-6 is 1e-9 */
	int64_t at = -1;
	CHECK_EQ_INT(devgold_cross_check(same, idx, 4, cpu, 1e-6, 1e-5, &at), 0);
	CHECK_EQ_INT(devgold_cross_check(ulp, idx, 4, cpu, 1e-6, 1e-5, &at), 0);
	CHECK_EQ_INT(devgold_cross_check(far, idx, 4, cpu, 1e-6, 1e-5, &at), 1);
	CHECK_EQ_INT(at, 3);
	/* integer outputs (atol = rtol = 0): 1e-12 relative, so 8 against 7
	 * disagrees, an ulp does not */
	int64_t i7[1] = {7};
	double d7[1] = {8.0}, e7[1] = {nextafter(7.0, 8.0)};
	CHECK_EQ_INT(devgold_cross_check(d7, i7, 1, cpu, 0, 0, &at), 1);
	CHECK_EQ_INT(devgold_cross_check(e7, i7, 1, cpu, 0, 0, &at), 0);
	/* non-finite golds agree only when equal */
	int64_t inf_at[2] = {4, 5};
	double nn[2] = {NAN, INFINITY}, fin[2] = {NAN, 1e308};
	CHECK_EQ_INT(devgold_cross_check(nn, inf_at, 2, cpu, 1e-6, 1e-5, &at), 0);
	CHECK_EQ_INT(devgold_cross_check(fin, inf_at, 2, cpu, 1e-6, 1e-5, &at), 1);
	CHECK_EQ_INT(at, 5);
}

static void test_request_json(void)
{
	int64_t s0[3] = {0, 1, 2}, s1[2] = {5, 9};
	struct run_check_req q = {.slot = 3,
				  .cubin = "/c/g.cubin",
				  .items = 1 << 24,
				  .n_params = 2,
				  .params = {4096, 4096},
				  .atol = 1e-6,
				  .rtol = 1e-5,
				  .n_inputs = 3,
				  .n_outputs = 2,
				  .sample_idx = {s0, s1},
				  .n_sample = {3, 2}};
	json_t *j = runclient_check_json(&q);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	CHECK_EQ_STR(s, "{\"atol\":9.9999999999999995e-7,\"cubin\":\"/c/g.cubin\",\"items\":"
			"16777216,\"n_inputs\":3,\"op\":\"check\",\"params\":[4096,4096],\"rtol\":"
			"1.0000000000000001e-5,\"sample\":[{\"runs\":[[0,3]]},[5,9]],\"slot\":3}");
	free(s);
}

static void msg_of(struct proto_msg *m, const char *json, int n, const size_t *lens)
{
	memset(m, 0, sizeof *m);
	m->obj = json_loads(json, 0, NULL);
	m->n_blobs = n;
	for (int k = 0; k < n; k++) {
		m->blob[k] = calloc(1, lens[k] ? lens[k] : 1);
		m->blob_len[k] = lens[k];
	}
}

static void test_parse_reply(void)
{
	struct run_check_req q = {.slot = 0, .n_outputs = 1, .n_sample = {2}};
	/* 1.5 = 3ff8000000000000, 0.5 = 3fe0000000000000 */
	const char *good =
		"{\"ok\":true,\"gold_ms\":12.5,\"compare_ms\":1,\"outputs\":[{"
		"\"checked\":16777216,\"bad\":2,\"nonfinite\":1,\"max_abs_error\":1.0,"
		"\"first\":[{\"index\":12345678,\"got\":\"3ff8000000000000\",\"gold\":"
		"\"3fe0000000000000\",\"finite\":true},{\"index\":12345679,\"got\":"
		"\"7ff8000000000000\",\"gold\":\"3fe0000000000000\",\"finite\":false}]}]}";
	size_t len = 16;
	struct proto_msg m;
	msg_of(&m, good, 1, &len);
	struct run_check_res r;
	memset(&r, 0, sizeof r);
	struct ka_err e = {{0}};
	int rc = runclient_parse_check(&q, &m, &r, &e);
	proto_msg_free(&m);
	struct run_check_out o = r.out[0];
	int64_t ng = r.n_gold[0];
	double gms = r.gold_ms;
	run_check_res_free(&r);
	CHECK_EQ_STR(e.msg, "");
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(o.checked, 1 << 24);
	CHECK_EQ_INT(o.bad, 2);
	CHECK_EQ_INT(o.n_first, 2);
	CHECK_EQ_INT(o.index[0], 12345678);
	CHECK_NEAR(o.got[0], 1.5, 0);
	CHECK_NEAR(o.gold[0], 0.5, 0);
	CHECK_NEAR(o.got[1], 0, 0); /* not finite: 0, as the CPU comparison reports it */
	CHECK_EQ_INT(o.finite[1], 0);
	CHECK_EQ_INT(ng, 2);
	CHECK_NEAR(gms, 12.5, 0);
	/* bad replies: an error, a count over the checked, a blob of the wrong size */
	static const char *const bad[] = {
		"{\"ok\":false,\"error\":\"check: the slot's last call did not leave 3 intact "
		"inputs\"}",
		"{\"ok\":true,\"outputs\":[{\"checked\":4,\"bad\":5,\"nonfinite\":0,"
		"\"max_abs_error\":0,\"first\":[]}]}",
		"{\"ok\":true,\"outputs\":[{\"checked\":4,\"bad\":1,\"nonfinite\":0,"
		"\"max_abs_error\":0,\"first\":[{\"index\":4,\"got\":\"0\",\"gold\":\"0\"}]}]}",
		"{\"ok\":true,\"outputs\":[]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		msg_of(&m, bad[i], i == 3 ? 0 : 1, &len);
		memset(&r, 0, sizeof r);
		rc = runclient_parse_check(&q, &m, &r, &e);
		proto_msg_free(&m);
		run_check_res_free(&r);
		CHECK_EQ_INT(rc, -1);
	}
	CHECK(strstr(e.msg, "does not hold 1 outputs") != NULL);
	size_t wrong = 8;
	msg_of(&m, good, 1, &wrong);
	memset(&r, 0, sizeof r);
	rc = runclient_parse_check(&q, &m, &r, &e);
	proto_msg_free(&m);
	run_check_res_free(&r);
	CHECK_EQ_INT(rc, -1);
}

/* The OpenCL runner (PoCL) has no device check: its hello says so, and a
 * check request is refused (the grader never sends one there). */
static void test_opencl_refuses(void)
{
	struct ka_err e = {{0}};
	struct runclient *rc = runclient_start("opencl", NULL, 0, NULL, &e);
	if (!rc) {
		printf("SKIP test_opencl_refuses: %s\n", e.msg);
		return;
	}
	json_t *dev = NULL;
	int hello = runclient_hello(rc, &dev, &e);
	int proto = (int)json_integer_value(json_object_get(dev, "runner_protocol"));
	int flag = json_is_false(json_object_get(dev, "device_check"));
	json_decref(dev);
	int64_t s0[1] = {0};
	struct run_check_req q = {.slot = 0,
				  .cubin = "/nonexistent.cubin",
				  .items = 4,
				  .n_inputs = 1,
				  .n_outputs = 1,
				  .sample_idx = {s0},
				  .n_sample = {1}};
	struct run_check_res r;
	struct ka_err ce = {{0}};
	int x = runclient_check(rc, &q, &r, 30, &ce);
	run_check_res_free(&r);
	runclient_stop(rc);
	CHECK_EQ_INT(hello, 0);
	CHECK_EQ_INT(proto, 3); /* 2: the device check; 3: phased calls */
	CHECK(flag);
	CHECK_EQ_INT(x, -1);
	CHECK(strstr(ce.msg, "this runner has no device check") != NULL);
}

int main(void)
{
	RUN(test_source);
	RUN(test_build);
	RUN(test_build_all);
	RUN(test_choose);
	RUN(test_cost);
	RUN(test_tally_matches_cpu);
	RUN(test_one_wrong);
	RUN(test_cross_check);
	RUN(test_outcome);
	RUN(test_request_json);
	RUN(test_parse_reply);
	RUN(test_opencl_refuses);
	TEST_EXIT();
}
