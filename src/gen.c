/* gen.c: the parent's side of the input generator (see gen.h and
 * docs/inputs.md). The values themselves come from include/ka_gen.h, the
 * same code the devices run; this file only derives keys, reduces a task
 * distribution to the generator's float/integer parameters and fills host
 * buffers in parallel. */
#include "gen.h"

#include <math.h>
#include <string.h>

#include "ka_gen.h"

int gen_params_of(const struct ka_dist *d, struct gen_params *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	if (d->kind == KA_DIST_INT && (isnan(d->a) || isnan(d->b))) /* see task.h lo_x */
		return ka_err_set(e, "int: the range depends on the shape (use gen_params_at)");
	switch (d->kind) {
	case KA_DIST_NORMAL:
		if (!isfinite(d->a) || !isfinite(d->b) || d->b < 0)
			return ka_err_set(e, "normal: mean and std must be finite, std >= 0");
		out->kind = KA_GEN_NORMAL;
		out->a = (float)d->a;
		out->b = (float)d->b;
		break;
	case KA_DIST_UNIFORM: {
		if (!isfinite(d->a) || !isfinite(d->b) || !(d->a < d->b))
			return ka_err_set(e, "uniform: lo and hi must be finite, lo < hi");
		out->kind = KA_GEN_UNIFORM;
		float lo = (float)d->a, hi = (float)d->b;
		out->a = lo;
		out->b = hi - lo;
		if (!isfinite(out->a) || !isfinite(out->b))
			return ka_err_set(e, "uniform: range overflows float");
		break;
	}
	case KA_DIST_INT: {
		/* Doubles in [-2^63, 2^63) convert to int64 without undefined behaviour. */
		if (!(d->a >= -9223372036854775808.0 && d->a < 9223372036854775808.0) ||
		    !(d->b >= -9223372036854775808.0 && d->b < 9223372036854775808.0) ||
		    d->a != floor(d->a) || d->b != floor(d->b))
			return ka_err_set(e, "int: lo and hi must be integers in int64 range");
		int64_t lo = (int64_t)d->a, hi = (int64_t)d->b;
		if (lo > hi)
			return ka_err_set(e, "int: needs lo <= hi");
		uint64_t span = (uint64_t)hi - (uint64_t)lo; /* exact: hi >= lo */
		if (span == UINT64_MAX)
			return ka_err_set(e, "int: range hi - lo + 1 overflows 64 bits");
		out->kind = KA_GEN_INT;
		out->lo = lo;
		out->range = span + 1;
		break;
	}
	default: return ka_err_set(e, "unknown distribution kind %d", (int)d->kind);
	}
	return 0;
}

int gen_params_at(const struct ka_task *t, int k, const struct ka_shape *sh, struct gen_params *out,
		  struct ka_err *e)
{
	struct ka_dist d;
	if (task_dist_at(t, k, sh, &d, e))
		return -1;
	return gen_params_of(&d, out, e);
}

uint64_t gen_tensor_key(uint64_t nonce, uint64_t task_hash, const struct ka_shape *sh, int tensor,
			uint64_t call)
{
	uint64_t h = util_mix64(nonce ^ 0x6b612d67656e2d31ULL); /* "ka-gen-1" */
	h = util_mix64(h ^ task_hash);
	for (int i = 0; i < KA_MAX_PARAMS; i++)
		h = util_mix64(h ^ (uint64_t)sh->v[i]);
	h = util_mix64(h ^ (uint64_t)(int64_t)tensor);
	return util_mix64(h ^ call);
}

void gen_fill(void *dst, enum ka_dtype dt, int64_t n, uint64_t key, const struct gen_params *p)
{
	struct ka_gen_src src;
	gen_src_of(&src, dt, key, p);
	const size_t es = dtype_size(dt);
	unsigned char *out = dst;
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < n; i++) {
		uint64_t bits = ka_gen_elem(&src, (uint64_t)i);
		memcpy(out + (size_t)i * es, &bits, es); /* little endian: the low bytes */
	}
}

void gen_src_of(struct ka_gen_src *out, enum ka_dtype dt, uint64_t key, const struct gen_params *p)
{
	memset(out, 0, sizeof *out);
	out->key = key;
	out->dtype = (int)dt;
	out->kind = p->kind;
	out->a = p->a;
	out->b = p->b;
	out->lo = p->lo;
	out->range = p->range ? p->range : 1;
}

uint64_t gen_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t sum = 0;
	int64_t n = (int64_t)(len / 8);
#pragma omp parallel for reduction(+ : sum) schedule(static) if (n > (1 << 16))
	for (int64_t i = 0; i < n; i++) {
		uint64_t w;
		memcpy(&w, p + 8 * i, 8);
		sum += ka_hash_word(w, (uint64_t)i);
	}
	if (len % 8) {
		uint64_t w = 0;
		memcpy(&w, p + 8 * (size_t)n, len % 8);
		sum += ka_hash_word(w, (uint64_t)n);
	}
	return ka_hash_final(sum, len);
}
