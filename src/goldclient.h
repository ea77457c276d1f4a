/* goldclient.h: the parent's side of ka-goldbox, the confined gold of a task
 * whose reference is not trusted bank code (docs/grader.md, "Gold that is
 * not bank code"; the box is src/goldbox/goldbox.c, the wire
 * src/common/goldwire.h). One call starts one box: the request goes in a
 * memory file on its stdin, the box runs with an environment of its own (the
 * loader's path, the sanitizers' options and OMP_NUM_THREADS only), in its
 * own process group, dying with ka, under the call's deadline and a CPU
 * limit to match, and its reply is read with a cap of exactly the expected
 * size and checked: the ready mark, the framing, the count, every value
 * finite. gold.c decides what to compute and the deadline; this module runs
 * and judges. */
#ifndef KA_GOLDCLIENT_H
#define KA_GOLDCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "ka_gen.h"
#include "task.h"
#include "util.h"

/* One computation. items NULL: every item (n_items = item_count). */
struct goldclient_call {
	const char *so;	  /* the compiled reference (gold.c's cache) */
	int lazy;	  /* 1: src (ka_gold_lazy); 0: inputs (ka_gold_items) */
	const int64_t *P; /* the shape's parameters, KA_MAX_PARAMS of them */
	int n_inputs, n_outputs;
	const void *const *inputs;    /* arrays: input k, in_bytes[k] bytes */
	const struct ka_gen_src *src; /* lazy: input k's generator */
	size_t in_bytes[KA_MAX_TENSORS];
	int64_t out_numel[KA_MAX_TENSORS], out_per_item[KA_MAX_TENSORS];
	const int64_t *items;
	int64_t n_items, item_count;
	double deadline_s;  /* wall seconds for the whole call */
	int threads;	    /* the box's OpenMP threads */
	int killed_outside; /* out: the box died of a SIGKILL that ka did not send
			     * (util_run_killed_outside), which the task's code
			     * may or may not have caused */
};

/* The box program: <exe dir>/ka-goldbox, or one directory up (test
 * binaries live in $BUILD/tests). NULL with e when it is not there. */
const char *goldclient_program(struct ka_err *e);

/* Run c in a box. 0: outputs[j] holds every requested item's values (item
 * i's at [i * per_item, (i+1) * per_item), the rest untouched) and
 * *compute_s the reference's own seconds (as the box measured them, never
 * more than the call's wall time). 1: the task's gold failed after the box
 * was confined and ready (over the deadline, killed by a signal, exited with
 * a failure, a reply of the wrong size or framing, a value that is not
 * finite): why (cap bytes) says which, in words fit to follow "the gold of
 * task X", with the box's own message escaped. -1 with e: a failure of the
 * grader (no box program, no memory file, a box that failed before it was
 * ready, a compiled reference that does not load, which is then removed
 * from the cache so that the next grade builds it again). c->killed_outside
 * is set either way. */
int goldclient_run(struct goldclient_call *c, double *const *outputs, double *compute_s, char *why,
		   size_t cap, struct ka_err *e);

#endif
