/* gen.h: the parent's side of the input generator (include/ka_gen.h): tensor
 * keys derived from the secret run nonce, the float parameters each
 * distribution is reduced to, and filling host buffers (OpenMP-parallel).
 * The runner regenerates the same bytes on the device from the same key and
 * parameters; tests/unit/test_gen.c checks CPU and PoCL bit for bit. */
#ifndef KA_GEN_CPU_H
#define KA_GEN_CPU_H

#include <stdint.h>
#include "ka_gen.h"
#include "task.h"

/* What the generator needs for one tensor (mirrors ka_gen_kernel's args). */
struct gen_params {
	int kind;	/* KA_GEN_NORMAL, KA_GEN_UNIFORM, KA_GEN_INT */
	float a, b;	/* normal: mean, std; uniform: lo, w = hi - lo */
	int64_t lo;	/* int: lowest value */
	uint64_t range; /* int: hi - lo + 1 (>= 1) */
};

/* Reduce a task distribution to generator parameters (rounding a/b to float
 * once, here). 0 or -1 with e (e.g. an int range that overflows, or bounds
 * that are still expressions: see gen_params_at). */
int gen_params_of(const struct ka_dist *d, struct gen_params *out, struct ka_err *e);

/* The generator parameters of input k of t at shape sh: task_dist_at (an
 * int range given by expressions evaluated there), then gen_params_of. The
 * form every caller with a task uses. 0 or -1 with e. */
int gen_params_at(const struct ka_task *t, int k, const struct ka_shape *sh, struct gen_params *out,
		  struct ka_err *e);

/* Key of one tensor in one call: a pure function of the secret nonce, the
 * task, the shape, the tensor index and the call number. */
uint64_t gen_tensor_key(uint64_t nonce, uint64_t task_hash, const struct ka_shape *sh, int tensor,
			uint64_t call);

/* Fill n elements of dtype dt at dst (host memory, n * size bytes). */
void gen_fill(void *dst, enum ka_dtype dt, int64_t n, uint64_t key, const struct gen_params *p);

/* The generator of one tensor in include/ka_gen.h's form (struct
 * ka_gen_src), for code that draws single elements (the lazy gold). */
void gen_src_of(struct ka_gen_src *out, enum ka_dtype dt, uint64_t key, const struct gen_params *p);

/* ka_hash_bytes of include/ka_gen.h over len bytes, OpenMP-parallel: the
 * same value the runners compute (the sum is order-free). */
uint64_t gen_hash(const void *data, size_t len);

#endif
