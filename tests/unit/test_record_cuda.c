/* test_record_cuda.c: the CUDA record stage end to end, without a GPU: each
 * fixture in tests/data/cuda/ is compiled by cudac (nvcc, fixed flags,
 * checks) and, when that is ok, recorded by $BUILD/ka-record-cuda in its
 * sandbox from a request holding the H200 properties and the module's kernel
 * layouts. The verdict must be the fixture's `// expect:` line; ok plans are
 * checked for their launch signature, relocations and attributes. SKIPs
 * everything when nvcc or the recorder is missing. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudac.h"
#include "ka_test.h"
#include "plan.h"

static char root[PATH_MAX], build[PATH_MAX + 64], recorder[PATH_MAX + 128], work[PATH_MAX];

/* Expected plan facts for the ok fixtures (N = 1000 floats). */
static const struct {
	const char *file;
	const char *signature;
	int relocs; /* over all launch arguments */
	int status;
	uint32_t cluster0, smem, max_dyn;
	int tensormaps, tmap_relocs; /* plan.tensormaps and tensor map relocations */
	unsigned pdl;		     /* bit i: launch i of the plan has "pdl" */
} plans[] = {
	{"ok_elementwise.cu", "_Z10add_kernelPKfS0_Pfx<4x1x1,256x1x1>;", 3, 0, 0, 0, 0, 0, 0, 0},
	{"ok_two_kernels.cu",
	 "fill;_Z5scalePKfPfx<4x1x1,256x1x1>;copy;_Z6finish2io<4x1x1,256x1x1>;", 5, 0, 0, 0, 0, 0,
	 0, 0},
	{"ok_cluster.cu", "_Z11add_clusterPKfS0_Pfx<4x1x1,256x1x1>;", 3, 0, 2, 65536, 65536, 0, 0,
	 0},
	{"ok_queries.cu", "_Z11copy_kernelPKfPfx<4x1x1,256x1x1>;", 2, 0, 0, 0, 0, 0, 0, 0},
	{"device_cache.cu", "symbol;_Z10add_cachedPKfS0_Pfx<4x1x1,256x1x1>;", 3, 0, 0, 0, 0, 0, 0,
	 0},
	{"kernel_never_ends.cu", "_Z4spinPf<1x1x1,32x1x1>;", 1, 0, 0, 0, 0, 0, 0, 0},
	{"ok_tma.cu", "_Z7add_tma14CUtensorMap_stS_Pfx<5x1x1,128x1x1>;", 1, 0, 0, 0, 0, 2, 2, 0},
	{"ok_cublas.cu",
	 "cublasSgemm_v2<10x10x100x1>;cublasGemmStridedBatchedEx<5x10x100x2>;_Z5scalePfx<1x1x1,"
	 "256x1x1>;",
	 1, 0, 0, 0, 0, 0, 0, 0},
	{"ok_pdl.cu", "_Z5scalePKfPfx<4x1x1,256x1x1>;_Z6finishPKfS0_Pfx<4x1x1,256x1x1>;", 5, 0, 2,
	 0, 0, 0, 0, 3},
};

/* Fixtures whose record_error must name its cause. */
static const struct {
	const char *file, *detail;
} details[] = {
	{"tma_outside.cu", "cuTensorMapEncodeTiled: the map's global extent (4400 bytes from "
			   "buffer 0 + 0) runs past the end of the buffer (4000 bytes)"},
	{"tma_bad_box.cu", "cuTensorMapEncodeTiled: boxDim[0] = 300 is not 1..256"},
	{"tma_in_struct.cu", "argument 0 (256 bytes at parameter offset"},
	{"tma_modified.cu", "argument 0 (128 bytes at parameter offset 112) holds a tensor map"},
	{"cublas_bad_ldc.cu",
	 "cublasSgemm_v2: C: 4400 bytes from buffer 2 + 0 run past its end (4000 bytes)"},
	{"cublas_device_scalars.cu", "cublasSetPointerMode_v2: CUBLAS_POINTER_MODE_DEVICE cannot "
				     "be recorded"},
	{"cublas_default_stream.cu", "cublasSgemm_v2: on stream 0 (the legacy default stream)"},
	{"cublas_unsupported.cu", "cublasSetWorkspace_v2: not available to a candidate"},
	{"pdl_event.cu", "cudaLaunchKernelEx: launch attribute "
			 "cudaLaunchAttributeProgrammaticEvent (7) is not supported"},
	{"pdl_bad_value.cu",
	 "cudaLaunchKernelEx: cudaLaunchAttributeProgrammaticStreamSerialization "
	 "(6): value 2 is not 0 or 1"},
};

static const char *const fixtures[] = {
	"ok_elementwise.cu",
	"ok_two_kernels.cu",
	"ok_cluster.cu",
	"ok_queries.cu",
	"own_stream.cu",
	"default_stream.cu",
	"events.cu",
	"graph.cu",
	"device_sync.cu",
	"h2d_copy.cu",
	"cublas.cu",
	"fopen.cu",
	"system.cu",
	"include_abs.cu",
	"include_dotdot.cu",
	"host_segfault.cu",
	"host_loop.cu",
	"device_cache.cu",
	"kernel_never_ends.cu",
	"ok_tma.cu",
	"tma_outside.cu",
	"tma_bad_box.cu",
	"tma_in_struct.cu",
	"tma_modified.cu",
	"ok_cublas.cu",
	"cublas_bad_ldc.cu",
	"cublas_device_scalars.cu",
	"cublas_default_stream.cu",
	"cublas_unsupported.cu",
	"ok_pdl.cu",
	"pdl_event.cu",
	"pdl_bad_value.cu",
	NULL,
};

/* Fixtures compiled and recorded under a policy that lists cublas. */
static int cublas_fixture(const char *file)
{
	return !strncmp(file, "cublas_", 7) || !strcmp(file, "ok_cublas.cu");
}

static int have_tools(void)
{
	return cudac_nvcc_version(NULL) != NULL && access(recorder, X_OK) == 0;
}

static void expect_of(const char *src, char *out, size_t cap)
{
	const char *p = strstr(src, "// expect: ");
	out[0] = 0;
	if (p)
		sscanf(p + 11, "%63s", out);
	(void)cap;
}

/* Run the recorder on so; returns the verdict name and fills *plan_json
 * (caller frees) for "ok"/"launch_error". */
static const char *record(const char *so, const struct elf_kernels *ks, const char *name,
			  int cublas, char **plan_json, char *detail, size_t cap)
{
	*plan_json = NULL;
	detail[0] = 0;
	/* The object must be alone in its directory (it becomes the root). */
	char *dir = xasprintf("%s/%s.d", work, name);
	util_mkdirs(dir, NULL);
	char *copy = xasprintf("%s/candidate.so", dir);
	char *bytes = NULL;
	size_t len = 0;
	struct ka_err e;
	if (util_read_file(so, ELF_MAX_FILE, &bytes, &len, &e) ||
	    util_write_file(copy, bytes, len, &e)) {
		free(bytes);
		free(dir);
		free(copy);
		return "harness";
	}
	free(bytes);
	chmod(copy, 0755);
	char *devpath = xasprintf("%s/tests/data/cuda/h200_device.json", root);
	json_error_t je;
	json_t *dev = json_load_file(devpath, 0, &je);
	free(devpath);
	json_object_set_new(dev, "kernels", cudac_kernels_json(ks));
	json_t *t = json_pack("{s:s,s:i,s:[i],s:i,s:i,s:i}", "name", "x", "ndim", 1, "shape", 1000,
			      "dtype", 0, "numel", 1000, "bytes", 4000);
	json_t *req = json_pack_ex(&je, 0, "{s:s,s:i,s:[O,O,O],s:{s:[s],s:[i]},s:o}", "target",
				   "cuda", "n_inputs", 2, "tensors", t, t, t, "params", "names",
				   "N", "values", 1000, "device", dev);
	if (!req)
		printf("# request: %s\n", je.text);
	else if (cublas)
		json_object_set_new(req, "libraries", json_pack("[s]", "cublas"));
	json_decref(t);
	char *reqpath = xasprintf("%s/%s.request.json", work, name);
	json_dump_file(req, reqpath, 0);
	json_decref(req);
	char *argv[] = {recorder, "--so", copy, "--request", reqpath, "--timeout", "2", NULL};
	char *out = NULL;
	int st = util_run(argv, NULL, 8, 1 << 20, &out, NULL, NULL, &e);
	const char *verdict = "harness";
	char *line = out ? strstr(out, "verdict ") : NULL;
	char *planl = out ? strstr(out, "plan\n") : NULL;
	if (planl && (planl == out || planl[-1] == '\n')) {
		char *j = planl + 5, *end = strchr(j, '\n');
		if (end)
			*end = 0;
		*plan_json = xstrdup(j);
		verdict = "ok";
	} else if (line && (line == out || line[-1] == '\n')) {
		static char v[64];
		sscanf(line + 8, "%63[^\t\n]", v);
		verdict = v;
		char *tab = strchr(line, '\t');
		if (tab)
			snprintf(detail, cap, "%.*s", (int)strcspn(tab + 1, "\n"), tab + 1);
	} else if (st == 124 || st == 128 + 24 || st == 128 + 9) {
		verdict = "timeout";
	} else if (st == 128 + 11 || st == 128 + 7 || st == 128 + 6) {
		verdict = "runtime_fault";
	} else {
		snprintf(detail, cap, "exit %d: %.300s", st, out ? out : "");
	}
	free(out);
	free(reqpath);
	free(copy);
	free(dir);
	return verdict;
}

/* ok_cublas.cu's two GEMMs, field by field, and their JSON round trip. */
static void check_cublas_plan(const struct plan *p)
{
	CHECK(p->n_ops == 3 && p->ops[0].kind == PLAN_OP_GEMM && p->ops[1].kind == PLAN_OP_GEMM);
	if (p->n_ops != 3 || p->ops[1].kind != PLAN_OP_GEMM)
		return;
	const struct plan_gemm *g = &p->ops[0].gemm, *h = &p->ops[1].gemm;
	CHECK(g->api == PLAN_GEMM_SGEMM && g->transa == 1 && g->transb == 0);
	CHECK(g->m == 10 && g->n == 10 && g->k == 100 && g->batch == 1);
	CHECK(g->alpha == 1.0 && g->beta == 0.0 && g->math_mode == 0);
	CHECK(g->a.buf == 0 && g->b.buf == 1 && g->c.buf == 2 && g->c.offset == 0);
	CHECK(g->lda == 100 && g->ldb == 100 && g->ldc == 10);
	CHECK(h->api == PLAN_GEMM_STRIDED_EX && h->transa == 0 && h->alpha == 2.0);
	CHECK(h->m == 5 && h->n == 10 && h->k == 100 && h->batch == 2);
	CHECK(h->stride_a == 500 && h->stride_b == 0 && h->stride_c == 50);
	CHECK(h->c.buf == 2 && h->c.offset == 400 && h->ldc == 5);
	CHECK(h->compute == PLAN_COMPUTE_32F && h->algo == -1 && h->math_mode == 3);
	struct ka_err e;
	char *again = plan_write(p);
	CHECK(strstr(again, "\"ka-plan/2\"") != NULL);
	struct plan q;
	CHECK_EQ_INT(plan_read(again, strlen(again), &q, &e), 0);
	CHECK(q.n_ops == 3 && !memcmp(&q.ops[1].gemm, h, sizeof *h));
	plan_free(&q);
	free(again);
	/* The runner's check with w one float short: the Sgemm's B is outside. */
	uint64_t small[3] = {4000, 3996, 4000};
	CHECK_EQ_INT(plan_check_refs(p, 3, small, &e), -1);
	CHECK(strstr(e.msg, "ops[0]: cublasSgemm_v2: B:") != NULL);
}

/* Bit i of want: launch i of the plan asked for programmatic dependent
 * launch. The flags survive the plan's JSON round trip. */
static void check_pdl(const struct plan *p, unsigned want)
{
	unsigned got = 0;
	int li = 0;
	for (int o = 0; o < p->n_ops; o++)
		if (p->ops[o].kind == PLAN_OP_LAUNCH)
			got |= (unsigned)p->ops[o].pdl << li++;
	if (got != want)
		printf("# pdl flags %#x, want %#x\n", got, want);
	CHECK(got == want);
	char *again = plan_write(p);
	CHECK((strstr(again, "\"pdl\":1") != NULL) == (want != 0));
	struct plan q;
	struct ka_err e;
	CHECK_EQ_INT(plan_read(again, strlen(again), &q, &e), 0);
	for (int o = 0; o < p->n_ops && o < q.n_ops; o++)
		CHECK(q.ops[o].pdl == p->ops[o].pdl);
	plan_free(&q);
	free(again);
}

static void check_plan(const char *file, const char *json)
{
	struct plan p;
	struct ka_err e;
	CHECK_EQ_INT(plan_read(json, strlen(json), &p, &e), 0);
	int found = 0;
	for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
		if (strcmp(plans[i].file, file))
			continue;
		found = 1;
		char *sig = plan_signature(&p);
		if (strcmp(sig, plans[i].signature))
			printf("# %s: signature %s\n", file, sig);
		int same = !strcmp(sig, plans[i].signature);
		free(sig);
		CHECK(same);
		int relocs = 0, tmap_relocs = 0;
		for (int o = 0; o < p.n_ops; o++)
			for (int a = 0; a < p.ops[o].n_args; a++) {
				relocs += p.ops[o].args[a].n_relocs;
				tmap_relocs += p.ops[o].args[a].n_tmaps;
			}
		if (tmap_relocs != plans[i].tmap_relocs || p.n_tensormaps != plans[i].tensormaps)
			printf("# %s: tensor maps %d, their relocations %d\n", file, p.n_tensormaps,
			       tmap_relocs);
		CHECK_EQ_INT(tmap_relocs, plans[i].tmap_relocs);
		CHECK_EQ_INT(p.n_tensormaps, plans[i].tensormaps);
		if (relocs != plans[i].relocs || p.status != plans[i].status)
			printf("# %s: relocs %d status %d\n", file, relocs, p.status);
		CHECK_EQ_INT(relocs, plans[i].relocs);
		CHECK_EQ_INT(p.status, plans[i].status);
		if (!strcmp(file, "ok_cublas.cu"))
			check_cublas_plan(&p);
		check_pdl(&p, plans[i].pdl);
		const struct plan_op *last = &p.ops[p.n_ops - 1];
		CHECK(last->kind == PLAN_OP_LAUNCH);
		CHECK(last->cluster[0] == plans[i].cluster0);
		CHECK(last->smem == plans[i].smem);
		CHECK_EQ_INT(p.kernels[last->kernel].max_dynamic_smem, plans[i].max_dyn);
		uint64_t sizes[3] = {4000, 4000, 4000};
		CHECK_EQ_INT(plan_check_refs(&p, 3, sizes, &e), 0);
		if (!strcmp(file, "ok_tma.cu") && p.n_tensormaps == 2) {
			/* What ka_launch asked for: 10 rows of 100 floats of x, then y. */
			for (int t = 0; t < 2; t++) {
				const struct plan_tensormap *m = &p.tensormaps[t];
				CHECK(m->dtype == 7 && m->rank == 2);
				CHECK(m->global.buf == t && m->global.offset == 0);
				CHECK(m->dims[0] == 100 && m->dims[1] == 10 &&
				      m->strides[0] == 400);
				CHECK(m->box[0] == 100 && m->box[1] == 2);
				CHECK(m->elem_strides[0] == 1 && m->elem_strides[1] == 1);
				CHECK(m->interleave == 0 && m->swizzle == 0 &&
				      m->l2_promotion == 0 && m->oob_fill == 0);
			}
			/* The launch: mx (map 0) and my (map 1) as whole parameters. */
			const struct plan_op *o = &p.ops[p.n_ops - 1];
			CHECK(o->n_args == 4);
			CHECK(o->args[0].size == 128 && o->args[0].n_tmaps == 1 &&
			      o->args[0].tmaps[0].at == 0 && o->args[0].tmaps[0].tensormap == 0);
			CHECK(o->args[1].size == 128 && o->args[1].n_tmaps == 1 &&
			      o->args[1].tmaps[0].tensormap == 1);
			/* The plan's JSON form carries them through plan_write. */
			char *again = plan_write(&p);
			struct plan q;
			CHECK_EQ_INT(plan_read(again, strlen(again), &q, &e), 0);
			CHECK(q.n_tensormaps == 2 && q.ops[q.n_ops - 1].args[1].n_tmaps == 1);
			plan_free(&q);
			free(again);
			/* The runner's check with x one float short: map 0 is outside. */
			uint64_t small[3] = {3996, 4000, 4000};
			CHECK_EQ_INT(plan_check_refs(&p, 3, small, &e), -1);
			CHECK(strstr(e.msg, "tensormaps[0]") != NULL);
		}
	}
	plan_free(&p);
	CHECK(found);
}

static void one_fixture(const char *file)
{
	char *path = xasprintf("%s/tests/data/cuda/%s", root, file);
	char *src = NULL;
	size_t len = 0;
	struct ka_err e;
	int rd = util_read_file(path, CUDAC_MAX_SOURCE, &src, &len, &e);
	free(path);
	CHECK_EQ_INT(rd, 0);
	char expect[64];
	expect_of(src, expect, sizeof expect);
	char *cache = xasprintf("%s/cache", work), *inc = xasprintf("%s/include", root);
	static const char *const cublas[] = {"cublas", NULL};
	int libs = cublas_fixture(file);
	struct cudac_opts o = {.arch = "sm_90a",
			       .cache_dir = cache,
			       .include_dir = inc,
			       .libs = libs ? cublas : NULL};
	struct cudac_result r;
	int rc = cudac_compile(src, len, &o, &r, &e);
	free(src);
	free(cache);
	free(inc);
	if (rc)
		printf("# %s: %s\n", file, e.msg);
	CHECK_EQ_INT(rc, 0);
	const char *got = verdict_name(r.verdict);
	char detail[1024];
	snprintf(detail, sizeof detail, "%.1000s", r.detail);
	char *plan_json = NULL;
	if (r.verdict == VERDICT_OK)
		got = record(r.so_path, &r.kernels, file, libs, &plan_json, detail, sizeof detail);
	if (libs && r.verdict == VERDICT_OK && !strcmp(file, "ok_cublas.cu")) {
		/* The same object recorded without the policy: the recorder
		 * itself refuses every cuBLAS name. */
		char d2[1024], *pj2 = NULL;
		const char *v2 =
			record(r.so_path, &r.kernels, "ok_cublas_nopolicy", 0, &pj2, d2, sizeof d2);
		printf("# %s without the policy: %s (%s)\n", file, v2, d2);
		CHECK(!strcmp(v2, "record_error") && strstr(d2, "cublas") != NULL &&
		      strstr(d2, "not available to a candidate") != NULL);
		free(pj2);
	}
	printf("# %s: %s (%s)\n", file, got, detail);
	int same = !strcmp(got, expect);
	if (same && plan_json)
		check_plan(file, plan_json);
	for (size_t i = 0; i < sizeof details / sizeof details[0]; i++)
		if (!strcmp(details[i].file, file)) {
			if (!strstr(detail, details[i].detail))
				printf("# %s: detail should contain: %s\n", file,
				       details[i].detail);
			CHECK(strstr(detail, details[i].detail) != NULL);
		}
	free(plan_json);
	cudac_result_free(&r);
	CHECK(same);
}

static const char *current;
static void test_fixture(void)
{
	one_fixture(current);
}

int main(void)
{
	snprintf(root, sizeof root, "%s", util_data_root());
	const char *b = getenv("BUILD");
	if (b && b[0] == '/')
		snprintf(build, sizeof build, "%s", b);
	else
		snprintf(build, sizeof build, "%s/%s", root, b ? b : "build");
	snprintf(recorder, sizeof recorder, "%s/ka-record-cuda", build);
	if (!have_tools()) {
		printf("SKIP test_record_cuda: nvcc or %s missing\n", recorder);
		return 0;
	}
	snprintf(work, sizeof work, "/tmp/ka-test-record-cuda-XXXXXX");
	if (!mkdtemp(work)) {
		printf("FAIL test_record_cuda: mkdtemp\n");
		return 1;
	}
	for (int i = 0; fixtures[i]; i++) {
		char name[128];
		snprintf(name, sizeof name, "record_cuda_%s", fixtures[i]);
		current = fixtures[i];
		ka_test_name = name;
		ka_test_failed = 0;
		test_fixture();
		if (!ka_test_failed)
			printf("PASS %s\n", name);
		else
			ka_test_any_failed = 1;
	}
	util_rmtree(work);
	TEST_EXIT();
}
