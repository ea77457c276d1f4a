/* test_plan.c: the launch plan's JSON form (plan.h), for what the CUDA
 * tensor maps and programmatic dependent launch added: plan_write/plan_read
 * round trips with and without "tensormaps", a launch's optional "pdl" flag
 * and plan_pdl_replayed, a table of bad plans plan_read must refuse with the
 * field named, the cuTensorMapEncodeTiled rules of plan_tensormap_check, the
 * global extent of plan_tensormap_extent, and plan_check_refs on maps at and
 * past the end of their buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "plan.h"

/* A CUDA plan: one kernel, one launch whose first argument is tensor map 0
 * (128 bytes) and second a pointer to buffer 1; map 0 is x (buffer 0) as 10
 * rows of 100 floats. TMAPS and RELOCS are spliced in. */
#define PLAN_HEAD                                                                                  \
	"{\"format\":\"ka-plan/1\",\"target\":\"%s\",\"status\":0,\"programs\":[],"                \
	"\"kernels\":[{\"name\":\"k\",\"program\":-1,\"max_dynamic_smem\":0,\"carveout\":-1}],"    \
	"\"workspaces\":[],\"ops\":[{\"op\":\"launch\",\"kernel\":0,\"work_dim\":3,"               \
	"\"grid\":[1,1,1],\"block\":[32,1,1],\"goffset\":[0,0,0],\"cluster\":[0,0,0],\"smem\":0,"  \
	"\"args\":[{\"kind\":\"bytes\",\"hex\":\"%s\",\"relocs\":[%s]},"                           \
	"{\"kind\":\"bytes\",\"hex\":\"0000000000000000\",\"relocs\":[{\"at\":0,\"buf\":1,"        \
	"\"offset\":0}]}]}]%s}"

#define MAP0                                                                                       \
	"{\"dtype\":7,\"rank\":2,\"global\":{\"buf\":0,\"offset\":0},\"dims\":[100,10],"           \
	"\"strides\":[400],\"box\":[100,2],\"elem_strides\":[1,1],\"interleave\":0,\"swizzle\":0," \
	"\"l2_promotion\":0,\"oob_fill\":0}"

static char zeros128[257], zeros256[513];

static char *mk(const char *target, const char *hex, const char *relocs, const char *maps)
{
	size_t cap = 8192;
	char *s = malloc(cap);
	snprintf(s, cap, PLAN_HEAD, target, hex, relocs, maps);
	return s;
}

static void test_round_trip(void)
{
	char *j = mk("cuda", zeros128, "{\"at\":0,\"tensormap\":0}", ",\"tensormaps\":[" MAP0 "]");
	struct plan p, q;
	struct ka_err e;
	int rc = plan_read(j, strlen(j), &p, &e);
	if (rc)
		printf("# %s\n", e.msg);
	CHECK(rc == 0);
	CHECK(p.n_tensormaps == 1);
	const struct plan_tensormap *m = &p.tensormaps[0];
	CHECK(m->dtype == 7 && m->rank == 2 && m->global.buf == 0 && m->global.offset == 0);
	CHECK(m->dims[0] == 100 && m->dims[1] == 10 && m->strides[0] == 400);
	CHECK(m->box[0] == 100 && m->box[1] == 2 && m->elem_strides[1] == 1);
	CHECK(p.ops[0].args[0].n_tmaps == 1 && p.ops[0].args[0].n_relocs == 0);
	CHECK(p.ops[0].args[0].tmaps[0].at == 0 && p.ops[0].args[0].tmaps[0].tensormap == 0);
	CHECK(p.ops[0].args[1].n_relocs == 1 && p.ops[0].args[1].n_tmaps == 0);
	char *w = plan_write(&p);
	CHECK(strstr(w, "\"tensormaps\":[{") != NULL);
	CHECK(strstr(w, "{\"at\":0,\"tensormap\":0}") != NULL);
	CHECK(plan_read(w, strlen(w), &q, &e) == 0);
	char *w2 = plan_write(&q);
	CHECK_STR(w, w2); /* write(read(write(p))) == write(p) */
	CHECK(memcmp(&p.tensormaps[0], &q.tensormaps[0], sizeof p.tensormaps[0]) == 0);
	free(w);
	free(w2);
	plan_free(&p);
	plan_free(&q);
	free(j);
}

/* A plan without maps is written exactly as before: no "tensormaps" key. */
static void test_no_maps_unchanged(void)
{
	char *j = mk("cuda", zeros128, "", "");
	struct plan p;
	struct ka_err e;
	CHECK(plan_read(j, strlen(j), &p, &e) == 0);
	CHECK(p.n_tensormaps == 0);
	CHECK(p.ops[0].args[0].n_tmaps == 0 && p.ops[0].args[0].tmaps == NULL);
	char *w = plan_write(&p);
	CHECK(strstr(w, "tensormap") == NULL);
	free(w);
	plan_free(&p);
	free(j);
	/* An empty array is accepted and dropped. */
	j = mk("cuda", zeros128, "", ",\"tensormaps\":[]");
	CHECK(plan_read(j, strlen(j), &p, &e) == 0);
	CHECK(p.n_tensormaps == 0);
	plan_free(&p);
	free(j);
}

/* The launch op of mk()'s plan with `extra` spliced in after "smem". */
static char *mk_launch(const char *target, const char *extra)
{
	char *j = mk(target, zeros128, "", "");
	const char *at = strstr(j, "\"smem\":0,");
	size_t cut = (size_t)(at - j) + strlen("\"smem\":0,");
	char *out = xasprintf("%.*s%s%s", (int)cut, j, extra, j + cut);
	free(j);
	return out;
}

/* "pdl" on a CUDA launch (programmatic dependent launch): optional, 0 or 1,
 * written only when 1, so plans without it are unchanged; anything else,
 * or the key on an OpenCL plan, is refused with the field named. */
static void test_pdl(void)
{
	struct plan p, q;
	struct ka_err e;
	char *j = mk_launch("cuda", "\"pdl\":1,");
	CHECK_EQ_INT(plan_read(j, strlen(j), &p, &e), 0);
	CHECK(p.ops[0].pdl == 1);
	char *w = plan_write(&p);
	CHECK(strstr(w, "\"pdl\":1") != NULL);
	CHECK_EQ_INT(plan_read(w, strlen(w), &q, &e), 0);
	CHECK(q.ops[0].pdl == 1);
	char *w2 = plan_write(&q);
	CHECK_STR(w, w2);
	free(w2);
	free(w);
	plan_free(&q);
	plan_free(&p);
	free(j);
	static const char *const absent[] = {"", "\"pdl\":0,"};
	for (int i = 0; i < 2; i++) {
		j = mk_launch("cuda", absent[i]);
		CHECK_EQ_INT(plan_read(j, strlen(j), &p, &e), 0);
		CHECK(p.ops[0].pdl == 0);
		w = plan_write(&p);
		CHECK(strstr(w, "pdl") == NULL);
		free(w);
		plan_free(&p);
		free(j);
	}
	static const struct {
		const char *target, *extra, *err;
	} refused[] = {
		{"cuda", "\"pdl\":2,", "ops[0]: 'pdl' = 2 is out of range"},
		{"cuda", "\"pdl\":-1,", "ops[0]: 'pdl' = -1 is out of range"},
		{"cuda", "\"pdl\":true,", "ops[0]: 'pdl' missing or not an integer"},
		{"cuda", "\"pdl\":\"1\",", "ops[0]: 'pdl' missing or not an integer"},
		{"opencl", "\"pdl\":1,", "ops[0]: 'pdl' is CUDA only"},
	};
	/* What the runner replays with the attribute: only a launch right
	 * after another launch (never the first op, nor after a fill). */
	struct plan r = {0};
	snprintf(r.target, sizeof r.target, "cuda");
	const enum plan_op_kind kinds[] = {PLAN_OP_LAUNCH, PLAN_OP_LAUNCH, PLAN_OP_FILL,
					   PLAN_OP_LAUNCH, PLAN_OP_LAUNCH, PLAN_OP_LAUNCH};
	const uint8_t flags[] = {1, 1, 0, 1, 0, 1};
	const int want[] = {0, 1, 0, 0, 0, 1};
	for (int i = 0; i < 6; i++) {
		struct plan_op *o = plan_add_op(&r);
		o->kind = kinds[i];
		o->pdl = flags[i];
	}
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(plan_pdl_replayed(&r, i), want[i]);
	CHECK_EQ_INT(plan_pdl_replayed(&r, 6), 0);
	plan_free(&r);
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		j = mk_launch(refused[i].target, refused[i].extra);
		int rc = plan_read(j, strlen(j), &p, &e);
		if (rc == 0 || !strstr(e.msg, refused[i].err))
			printf("# pdl case %zu: rc %d, %s\n", i, rc, rc ? e.msg : "accepted");
		CHECK(rc == -1 && strstr(e.msg, refused[i].err) != NULL);
		if (rc == 0)
			plan_free(&p);
		free(j);
	}
}

static const struct {
	const char *name, *target, *hex, *relocs, *maps, *err; /* err: in the message */
} bad[] = {
	{"index past the maps", "cuda", NULL, "{\"at\":0,\"tensormap\":1}",
	 ",\"tensormaps\":[" MAP0 "]", "tensor map 1 does not exist"},
	{"relocation without maps", "cuda", NULL, "{\"at\":0,\"tensormap\":0}", "",
	 "tensor map 0 does not exist"},
	{"index over the cap", "cuda", NULL, "{\"at\":0,\"tensormap\":32}", "", "'tensormap'"},
	{"map past the argument", "cuda", NULL, "{\"at\":64,\"tensormap\":0}",
	 ",\"tensormaps\":[" MAP0 "]", "'at'"},
	{"misaligned map", "cuda", "256", "{\"at\":8,\"tensormap\":0}",
	 ",\"tensormaps\":[" MAP0 "]", "not 64-byte aligned"},
	{"pointer inside a map", "cuda", NULL,
	 "{\"at\":0,\"tensormap\":0},{\"at\":8,\"buf\":0,\"offset\":0}",
	 ",\"tensormaps\":[" MAP0 "]", "overlaps tensor map"},
	{"two maps overlap", "cuda", "256",
	 "{\"at\":0,\"tensormap\":0},{\"at\":64,\"tensormap\":0}", ",\"tensormaps\":[" MAP0 "]",
	 "two tensor maps overlap"},
	{"opencl", "opencl", NULL, "", ",\"tensormaps\":[" MAP0 "]", "CUDA only"},
	{"not an array", "cuda", NULL, "", ",\"tensormaps\":{}", "not an array"},
	{"rank 0", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":0,\"global\":{\"buf\":0,\"offset\":0},\"dims\":[],"
	 "\"strides\":[],\"box\":[],\"elem_strides\":[],\"interleave\":0,\"swizzle\":0,"
	 "\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'rank'"},
	{"rank 6", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":6,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[1,1,1,1,1,1],\"strides\":[16,16,16,16,16],\"box\":[4,1,1,1,1,1],"
	 "\"elem_strides\":[1,1,1,1,1,1],\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,"
	 "\"oob_fill\":0}]",
	 "'rank'"},
	{"dims count", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":2,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[100],\"strides\":[400],\"box\":[100,2],\"elem_strides\":[1,1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'dims' must be an array of 2"},
	{"dim over 2^32", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":1,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[4294967297],\"strides\":[],\"box\":[4],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'dims'[0] out of range"},
	{"stride not 16", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":2,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[100,10],\"strides\":[404],\"box\":[100,2],\"elem_strides\":[1,1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "globalStrides[0] = 404"},
	{"stride 2^40", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":2,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[100,10],\"strides\":[1099511627776],\"box\":[100,2],\"elem_strides\":[1,1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'strides'[0] out of range"},
	{"box 257", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":0,\"rank\":1,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[1000],\"strides\":[],\"box\":[257],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'box'[0] out of range"},
	{"elem stride 9", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":1,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[1000],\"strides\":[],\"box\":[4],\"elem_strides\":[9],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'elem_strides'[0] out of range"},
	{"offset 8", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":1,\"global\":{\"buf\":0,\"offset\":8},"
	 "\"dims\":[100],\"strides\":[],\"box\":[4],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "not 16-byte aligned"},
	{"swizzle 7", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":1,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[100],\"strides\":[],\"box\":[4],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":7,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'swizzle'"},
	{"dtype 16", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":16,\"rank\":1,\"global\":{\"buf\":0,\"offset\":0},"
	 "\"dims\":[100],\"strides\":[],\"box\":[4],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'dtype'"},
	{"buffer 65", "cuda", NULL, "",
	 ",\"tensormaps\":[{\"dtype\":7,\"rank\":1,\"global\":{\"buf\":65,\"offset\":0},"
	 "\"dims\":[100],\"strides\":[],\"box\":[4],\"elem_strides\":[1],"
	 "\"interleave\":0,\"swizzle\":0,\"l2_promotion\":0,\"oob_fill\":0}]",
	 "'buf'"},
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *hex = !bad[i].hex		       ? zeros128
				  : !strcmp(bad[i].hex, "256") ? zeros256
							       : "";
		char *j = mk(bad[i].target, hex, bad[i].relocs, bad[i].maps);
		struct plan p;
		struct ka_err e = {{0}};
		int rc = plan_read(j, strlen(j), &p, &e);
		int named = rc == -1 && strstr(e.msg, bad[i].err) != NULL;
		if (!named)
			printf("# %s: rc %d: %s\n", bad[i].name, rc, e.msg);
		CHECK(named);
		if (rc == 0)
			plan_free(&p);
		free(j);
	}
	/* 33 maps: over the cap. */
	size_t cap = 64 * 1024;
	char *maps = malloc(cap);
	size_t len = (size_t)snprintf(maps, cap, ",\"tensormaps\":[");
	for (int i = 0; i < PLAN_MAX_TENSORMAPS + 1; i++)
		len += (size_t)snprintf(maps + len, cap - len, "%s" MAP0, i ? "," : "");
	snprintf(maps + len, cap - len, "]");
	size_t jcap = cap + 4096;
	char *j = malloc(jcap);
	snprintf(j, jcap, PLAN_HEAD, "cuda", zeros128, "", maps);
	struct plan p;
	struct ka_err e;
	CHECK(plan_read(j, strlen(j), &p, &e) == -1);
	CHECK(strstr(e.msg, "33 tensormaps, over the cap") != NULL);
	free(j);
	free(maps);
}

static struct plan_tensormap map_of(uint32_t dtype, uint32_t rank, uint64_t off)
{
	struct plan_tensormap t;
	memset(&t, 0, sizeof t);
	t.dtype = dtype;
	t.rank = rank;
	t.global.offset = off;
	for (uint32_t i = 0; i < rank; i++) {
		t.dims[i] = 8;
		t.box[i] = 8;
		t.elem_strides[i] = 1;
	}
	uint64_t s = 8 * 4;
	for (uint32_t i = 0; i + 1 < rank; i++, s *= 8)
		t.strides[i] = s;
	return t;
}

/* The driver's rules, one broken at a time from a valid fp32 map. */
static void test_check_rules(void)
{
	char why[160];
	struct plan_tensormap t = map_of(7, 3, 0);
	CHECK(plan_tensormap_check(&t, why, sizeof why) == 0);
	static const struct {
		const char *what, *why;
		int field, value;
	} rules[] = {
		{"box inner 4 bytes", "is not a multiple of 16", 0, 1},
		{"swizzle 32B with a 64-byte inner box", "over the swizzle span", 1, 16},
		{"interleave on rank 2", "needs rank 3..5", 2, 0},
		{"interleave 32B without swizzle 32B", "interleave 32B needs swizzle 32B", 3, 0},
		{"NaN fill on uint8", "NaN out-of-bounds fill", 4, 0},
		{"offset 16 with interleave 32B", "not 32-byte aligned", 5, 0},
		{"packed 16U4_ALIGN16B dims", "multiple of 128", 6, 0},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		t = map_of(7, 3, 0);
		switch (rules[i].field) {
		case 0: t.box[0] = (uint32_t)rules[i].value; break;
		case 1:
			t.swizzle = 1;
			t.box[0] = (uint32_t)rules[i].value;
			break;
		case 2:
			t = map_of(7, 2, 0);
			t.interleave = 1;
			break;
		case 3:
			t.interleave = 2;
			t.swizzle = 0;
			break;
		case 4:
			t = map_of(0, 3, 0);
			t.box[0] = 16;
			t.oob_fill = 1;
			break;
		case 5:
			t.interleave = 2;
			t.swizzle = 1;
			t.global.offset = 16;
			break;
		case 6: t = map_of(14, 1, 0); break;
		}
		int rc = plan_tensormap_check(&t, why, sizeof why);
		if (rc != -1 || !strstr(why, rules[i].why))
			printf("# %s: rc %d: %s\n", rules[i].what, rc, rc ? why : "");
		CHECK(rc == -1 && strstr(why, rules[i].why) != NULL);
	}
	/* Valid corner cases: NaN fill on fp32, swizzle 128B with a 128-byte box,
	 * interleave 32B + swizzle 32B at a 32-byte offset. */
	t = map_of(7, 3, 0);
	t.oob_fill = 1;
	CHECK(plan_tensormap_check(&t, why, sizeof why) == 0);
	t = map_of(7, 3, 0);
	t.swizzle = 3;
	t.box[0] = 32;
	CHECK(plan_tensormap_check(&t, why, sizeof why) == 0);
	t = map_of(7, 3, 32);
	t.interleave = 2;
	t.swizzle = 1;
	CHECK(plan_tensormap_check(&t, why, sizeof why) == 0);
}

static void test_extent(void)
{
	static const struct {
		uint32_t dtype, rank;
		uint64_t dims[5], strides[4], want;
	} rows[] = {
		{7, 1, {1000}, {0}, 4000},		       /* fp32 row */
		{0, 1, {13}, {0}, 13},			       /* uint8 */
		{13, 1, {6}, {0}, 3},			       /* 16U4_ALIGN8B: half a byte each */
		{7, 2, {100, 10}, {400}, 4000},		       /* 10 rows of 100 */
		{7, 2, {100, 10}, {416}, 9 * 416 + 400},       /* padded rows */
		{9, 3, {8, 4, 2}, {16, 64}, 64 + 3 * 16 + 16}, /* bf16 */
		{4,
		 2,
		 {UINT64_C(1) << 32, UINT64_C(1) << 32},
		 {(UINT64_C(1) << 40) - 16},
		 UINT64_MAX}, /* overflow */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct plan_tensormap t;
		memset(&t, 0, sizeof t);
		t.dtype = rows[i].dtype;
		t.rank = rows[i].rank;
		memcpy(t.dims, rows[i].dims, sizeof t.dims);
		memcpy(t.strides, rows[i].strides, sizeof t.strides);
		uint64_t got = plan_tensormap_extent(&t);
		if (got != rows[i].want)
			printf("# row %zu: %llu\n", i, (unsigned long long)got);
		CHECK(got == rows[i].want);
	}
}

/* plan_check_refs: a map filling its buffer exactly is fine; one byte less of
 * buffer, an offset, or a missing buffer is not. */
static void test_check_refs(void)
{
	char *j = mk("cuda", zeros128, "{\"at\":0,\"tensormap\":0}", ",\"tensormaps\":[" MAP0 "]");
	struct plan p;
	struct ka_err e;
	CHECK(plan_read(j, strlen(j), &p, &e) == 0);
	uint64_t fit[2] = {4000, 16}, short_[2] = {3999, 16};
	CHECK(plan_check_refs(&p, 2, fit, &e) == 0);
	CHECK(plan_check_refs(&p, 2, short_, &e) == -1);
	CHECK(strstr(e.msg, "tensormaps[0]") && strstr(e.msg, "outside the buffer"));
	p.tensormaps[0].global.offset = 16;
	CHECK(plan_check_refs(&p, 2, fit, &e) == -1);
	uint64_t big[2] = {4016, 16};
	CHECK(plan_check_refs(&p, 2, big, &e) == 0);
	p.tensormaps[0].global.buf = 2; /* no such buffer */
	CHECK(plan_check_refs(&p, 2, big, &e) == -1);
	plan_free(&p);
	free(j);
}

/* ---- cuBLAS GEMM steps (plan_gemm.h) ---- */

/* A valid Sgemm: C (buffer 2, m x n = 64 x 32) = A (buffer 0, 64 x 16) x B
 * (buffer 1, 16 x 32), all fp32, packed. */
static struct plan_gemm gemm0(void)
{
	struct plan_gemm g;
	memset(&g, 0, sizeof g);
	g.api = PLAN_GEMM_SGEMM;
	g.m = 64;
	g.n = 32;
	g.k = 16;
	g.alpha = 1;
	g.a.buf = 0;
	g.b.buf = 1;
	g.c.buf = 2;
	g.lda = 64;
	g.ldb = 16;
	g.ldc = 64;
	g.batch = 1;
	g.compute = PLAN_COMPUTE_32F;
	g.algo = -1;
	return g;
}

static const uint64_t gemm_sizes[3] = {64 * 16 * 4, 16 * 32 * 4, 64 * 32 * 4};

static void test_gemm_extent(void)
{
	CHECK(plan_gemm_extent(0, 5, 5, 0, 1, 4) == 0);
	CHECK(plan_gemm_extent(5, 0, 5, 0, 1, 4) == 0);
	CHECK(plan_gemm_extent(5, 5, 5, 0, 0, 4) == 0);
	CHECK(plan_gemm_extent(64, 16, 64, 0, 1, 4) == 64 * 16 * 4);
	/* ld larger than rows: the last column starts at (cols-1) ld. */
	CHECK(plan_gemm_extent(10, 3, 100, 0, 1, 2) == (2 * 100 + 10) * 2);
	/* batches: (batch-1) stride more; stride 0 (broadcast) adds nothing. */
	CHECK(plan_gemm_extent(10, 3, 10, 50, 4, 4) == (3 * 50 + 2 * 10 + 10) * 4);
	CHECK(plan_gemm_extent(10, 3, 10, 0, 4, 4) == 30 * 4);
	/* Overflow anywhere is UINT64_MAX, never a wrapped small number. */
	CHECK(plan_gemm_extent(1, 2, UINT64_MAX / 2, 0, 1, 4) == UINT64_MAX);
	CHECK(plan_gemm_extent(1, 1, 1, UINT64_MAX / 3, 5, 1) == UINT64_MAX);
	CHECK(plan_gemm_extent(2147483647, 2147483647, 2147483647, 0, 1, 1) ==
	      2147483646ull * 2147483647ull + 2147483647ull);
	CHECK(plan_gemm_extent(2147483647, 2147483647, 2147483647, 0, 1, 8) == UINT64_MAX);
	CHECK(plan_gemm_extent(2147483647, 2147483647, 2147483647, INT64_MAX, 2147483647, 8) ==
	      UINT64_MAX);
}

/* g (gemm0) with fields changed by STMT must fail, naming WANT. */
#define GEMM_BAD(STMT, WANT)                                                                       \
	do {                                                                                       \
		g = gemm0();                                                                       \
		why[0] = 0;                                                                        \
		STMT;                                                                              \
		int rc = plan_gemm_check(&g, 3, gemm_sizes, why, sizeof why);                      \
		if (rc != -1 || !strstr(why, WANT))                                                \
			printf("# %s: rc %d, '%s'\n", #STMT, rc, why);                             \
		CHECK(rc == -1 && strstr(why, WANT) != NULL);                                      \
	} while (0)

static void test_gemm_check(void)
{
	char why[256];
	struct plan_gemm g = gemm0();
	CHECK_EQ_INT(plan_gemm_check(&g, 3, gemm_sizes, why, sizeof why), 0);
	g.transa = 1; /* A stored k x m: lda >= 16, 64 columns of 16 */
	g.lda = 16;
	CHECK_EQ_INT(plan_gemm_check(&g, 3, gemm_sizes, why, sizeof why), 0);
	g = gemm0(); /* m = 0: nothing touched, still a valid call */
	g.m = 0;
	g.ldc = 1;
	g.lda = 1;
	CHECK_EQ_INT(plan_gemm_check(&g, 3, gemm_sizes, why, sizeof why), 0);
	g = gemm0(); /* bf16 in, fp32 out, through GemmEx */
	g.api = PLAN_GEMM_EX;
	g.atype = g.btype = PLAN_DT_R_16BF;
	CHECK_EQ_INT(plan_gemm_check(&g, 3, gemm_sizes, why, sizeof why), 0);
	/* Leading dimensions, dimensions, extents: */
	GEMM_BAD(g.lda = 63, "lda = 63 is less than max(1, m = 64)");
	GEMM_BAD((g.transb = 1, g.ldb = 16), "ldb = 16 is less than max(1, n = 32)");
	GEMM_BAD(g.ldc = 0, "ldc = 0 is less than max(1, m = 64)");
	GEMM_BAD((g.m = 65, g.lda = 65, g.ldc = 65), "A: 4160 bytes from buffer 0 + 0 run past");
	GEMM_BAD(g.n = 33, "B: 2112 bytes from buffer 1 + 0 run past its end (2048 bytes)");
	GEMM_BAD(g.ldc = 65, "C: 8316 bytes from buffer 2 + 0 run past its end (8192 bytes)");
	GEMM_BAD(g.c.offset = 4, "C: 8192 bytes from buffer 2 + 4 run past its end");
	GEMM_BAD(g.c.offset = 2, "C: offset 2 in buffer 2 is not a multiple of the element size 4");
	GEMM_BAD(g.c.offset = UINT64_MAX - 3, "run past its end");
	GEMM_BAD(g.a.buf = 3, "A: buffer 3 does not exist");
	GEMM_BAD(g.b.buf = -1, "B: buffer -1 does not exist");
	GEMM_BAD(g.k = -1, "k = -1 is not 0..2^31-1");
	GEMM_BAD(g.m = 1ll << 31, "m = 2147483648 is not 0..2^31-1");
	GEMM_BAD(g.lda = 2147483647, "A: 128849019076 bytes from buffer 0 + 0 run past");
	GEMM_BAD((g.api = PLAN_GEMM_SGEMM_STRIDED, g.batch = 2147483647, g.stride_c = INT64_MAX),
		 "C: the extent overflows 64 bits");
	/* Batches and strides: */
	GEMM_BAD(g.batch = 2, "a non-batched call has batchCount 1 and strides 0");
	GEMM_BAD((g.api = PLAN_GEMM_SGEMM_STRIDED, g.batch = 2, g.stride_c = 64 * 32),
		 "C: 16384 bytes from buffer 2 + 0 run past its end (8192 bytes)");
	GEMM_BAD((g.api = PLAN_GEMM_SGEMM_STRIDED, g.batch = 2, g.stride_a = -1),
		 "negative strides");
	GEMM_BAD((g.api = PLAN_GEMM_STRIDED_EX, g.batch = -1), "batchCount = -1");
	/* Types, compute types, enums, scalars: */
	GEMM_BAD(g.atype = PLAN_DT_R_16F, "the types must be CUDA_R_32F");
	GEMM_BAD((g.api = PLAN_GEMM_EX, g.compute = 72), "computeType 72 is not supported");
	GEMM_BAD((g.api = PLAN_GEMM_EX, g.compute = PLAN_COMPUTE_32F_FAST_TF32,
		  g.atype = g.btype = PLAN_DT_R_16F),
		 "not a supported combination");
	GEMM_BAD((g.api = PLAN_GEMM_EX, g.atype = PLAN_DT_R_16F, g.btype = PLAN_DT_R_16BF),
		 "not a supported combination");
	GEMM_BAD((g.api = PLAN_GEMM_EX, g.atype = 3, g.btype = 3), "Atype 3");
	GEMM_BAD((g.api = PLAN_GEMM_EX, g.algo = 50), "algo 50 is not a cublasGemmAlgo_t");
	GEMM_BAD(g.transa = 3, "transa 3");
	GEMM_BAD(g.math_mode = 4, "math mode 4");
	GEMM_BAD(g.math_mode = 64, "math mode 64");
	GEMM_BAD(g.api = 9, "api 9");
	GEMM_BAD(g.beta = 1.0 / 0.0, "alpha and beta must be finite");
}

/* A plan with a gemm step: ka-plan/2, the runner's plan_check_refs, and
 * plan_read's structural refusals. */
#define GEMM_PLAN                                                                                  \
	"{\"format\":\"%s\",\"target\":\"%s\",\"status\":0,\"programs\":[],\"kernels\":[],"        \
	"\"workspaces\":[],\"ops\":[{\"op\":\"gemm\",\"api\":\"%s\",\"transa\":0,\"transb\":0,"    \
	"\"m\":64,\"n\":32,\"k\":16,\"alpha\":1.5,\"beta\":0,\"a\":{\"buf\":0,\"offset\":0},"      \
	"\"atype\":0,\"lda\":%d,\"stride_a\":0,\"b\":{\"buf\":1,\"offset\":0},\"btype\":0,"        \
	"\"ldb\":16,\"stride_b\":0,\"c\":{\"buf\":2,\"offset\":0},\"ctype\":0,\"ldc\":64,"         \
	"\"stride_c\":0,\"batch\":1,\"compute\":68,\"algo\":-1,\"math_mode\":0}]}"

static void test_gemm_plan(void)
{
	char text[2048];
	struct plan p;
	struct ka_err e;
	snprintf(text, sizeof text, GEMM_PLAN, "ka-plan/2", "cuda", "sgemm", 64);
	CHECK_EQ_INT(plan_read(text, strlen(text), &p, &e), 0);
	CHECK(p.n_ops == 1 && p.ops[0].kind == PLAN_OP_GEMM && p.ops[0].gemm.alpha == 1.5);
	CHECK_EQ_INT(plan_check_refs(&p, 3, gemm_sizes, &e), 0);
	uint64_t small[3] = {gemm_sizes[0], gemm_sizes[1], gemm_sizes[2] - 4};
	CHECK_EQ_INT(plan_check_refs(&p, 3, small, &e), -1);
	CHECK(strstr(e.msg, "ops[0]: cublasSgemm_v2: C: 8192 bytes") != NULL);
	char *sig = plan_signature(&p);
	CHECK_STR(sig, "cublasSgemm_v2<64x32x16x1>;");
	free(sig);
	char *again = plan_write(&p);
	struct plan q;
	CHECK_EQ_INT(plan_read(again, strlen(again), &q, &e), 0);
	CHECK(!memcmp(&q.ops[0].gemm, &p.ops[0].gemm, sizeof q.ops[0].gemm));
	CHECK(strstr(again, "\"format\":\"ka-plan/2\"") != NULL);
	plan_free(&q);
	free(again);
	plan_free(&p);
	/* A hand-written plan with lda too small reads (structure) but fails the
	 * runner's check (meaning). */
	snprintf(text, sizeof text, GEMM_PLAN, "ka-plan/2", "cuda", "sgemm", 8);
	CHECK_EQ_INT(plan_read(text, strlen(text), &p, &e), 0);
	CHECK_EQ_INT(plan_check_refs(&p, 3, gemm_sizes, &e), -1);
	CHECK(strstr(e.msg, "lda = 8 is less than max(1, m = 64)") != NULL);
	plan_free(&p);
	const struct {
		const char *fmt, *target, *api;
		int lda;
		const char *want;
	} bads[] = {
		{"ka-plan/1", "cuda", "sgemm", 64, "needs target cuda and format ka-plan/2"},
		{"ka-plan/2", "opencl", "sgemm", 64, "needs target cuda"},
		{"ka-plan/2", "cuda", "dgemm", 64, "'api' is not a recorded cuBLAS GEMM"},
		{"ka-plan/2", "cuda", "sgemm", -1, "'lda' = -1 is out of range"},
		{"ka-plan/3", "cuda", "sgemm", 64, "format is not"},
	};
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		snprintf(text, sizeof text, GEMM_PLAN, bads[i].fmt, bads[i].target, bads[i].api,
			 bads[i].lda);
		int rc = plan_read(text, strlen(text), &p, &e);
		if (rc != -1 || !strstr(e.msg, bads[i].want))
			printf("# bad gemm plan %zu: rc %d, %s\n", i, rc, rc ? e.msg : "");
		CHECK(rc == -1 && strstr(e.msg, bads[i].want) != NULL);
		if (!rc)
			plan_free(&p);
	}
}

int main(void)
{
	memset(zeros128, '0', 256);
	memset(zeros256, '0', 512);
	RUN(test_round_trip);
	RUN(test_no_maps_unchanged);
	RUN(test_pdl);
	RUN(test_bad);
	RUN(test_check_rules);
	RUN(test_extent);
	RUN(test_check_refs);
	RUN(test_gemm_extent);
	RUN(test_gemm_check);
	RUN(test_gemm_plan);
	TEST_EXIT();
}
