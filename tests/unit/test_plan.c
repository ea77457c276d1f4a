/* test_plan.c: the launch plan's JSON form (plan.h), for what the CUDA
 * tensor maps added: plan_write/plan_read round trips with and without
 * "tensormaps", a table of bad plans plan_read must refuse with the field
 * named, the cuTensorMapEncodeTiled rules of plan_tensormap_check, the global
 * extent of plan_tensormap_extent, and plan_check_refs on maps at and past
 * the end of their buffer. */
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

int main(void)
{
	memset(zeros128, '0', 256);
	memset(zeros256, '0', 512);
	RUN(test_round_trip);
	RUN(test_no_maps_unchanged);
	RUN(test_bad);
	RUN(test_check_rules);
	RUN(test_extent);
	RUN(test_check_refs);
	TEST_EXIT();
}
