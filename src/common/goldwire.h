/* goldwire.h: what ka and ka-goldbox, the confined gold (docs/grader.md,
 * "Gold that is not bank code"), pass each other. ka writes one request to
 * the box's stdin: struct goldwire_req, then the items (int64_t each, unless
 * all is set), then the inputs (lazy: one struct ka_gen_src per input;
 * arrays: each input's bytes, back to back). The box answers on stdout:
 * GOLDWIRE_READY (8 bytes, written once it is confined and before it loads
 * the reference: a reply without it is a failure of the box, never of the
 * task), struct goldwire_head, n_values doubles (output 0's items in request
 * order, per_item values each, then output 1's, ...) and GOLDWIRE_END. Both
 * sides are built from the same tree on the same machine: native layout. */
#ifndef KA_GOLDWIRE_H
#define KA_GOLDWIRE_H

#include <stdint.h>

#define GOLDWIRE_MAGIC 0x31716572646c6f67ull /* "goldreq1" */
#define GOLDWIRE_READY 0x3179646165726267ull /* "gbready1" */
#define GOLDWIRE_HEAD 0x3164616568646c67ull  /* "gldhead1" */
#define GOLDWIRE_END 0x31646e65646c6f67ull   /* "goldend1" */
#define GOLDWIRE_MAX_PARAMS 8		     /* = KA_MAX_PARAMS (src/expr.h) */
#define GOLDWIRE_MAX_TENSORS 8		     /* = KA_MAX_TENSORS (src/task.h) */

struct goldwire_req {
	uint64_t magic; /* GOLDWIRE_MAGIC */
	int32_t lazy;	/* 1: inputs are generators (ka_gold_lazy); 0: arrays (ka_gold_items) */
	int32_t all;	/* 1: every item of the shape, no items sent */
	int32_t n_inputs, n_outputs;
	int64_t n_items;    /* items computed (item_count when all) */
	int64_t item_count; /* items of the shape: every item is below it */
	int64_t P[GOLDWIRE_MAX_PARAMS];
	uint64_t in_bytes[GOLDWIRE_MAX_TENSORS];    /* arrays: bytes of input k */
	int64_t out_numel[GOLDWIRE_MAX_TENSORS];    /* elements of output j */
	int64_t out_per_item[GOLDWIRE_MAX_TENSORS]; /* elements of output j per item */
};

struct goldwire_head {
	uint64_t magic;	  /* GOLDWIRE_HEAD */
	double compute_s; /* the reference's own wall seconds, as the box measured */
	int64_t n_values; /* doubles that follow */
};

#endif
