/* runner.h: the target-independent half of a trusted runner (ka-run-opencl,
 * ka-run-cuda). runner_serve reads requests from the parent (framing in
 * proto.h, messages in docs/runner-protocol.md), parses and bounds them,
 * keeps the per-slot plan and tensor sizes, and hands typed requests to one
 * engine (struct runner_engine) that owns the device. It replies exactly once
 * per request. It never runs candidate host code and never sees a secret: the
 * generator keys arrive with each call.
 *
 * Not here: anything device specific (building, allocation, replay, timing).
 * Those live in run_<target>.c behind struct runner_engine. */
#ifndef KA_RUNNER_H
#define KA_RUNNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "../common/plan.h"
#include "../common/util.h"

#define RUNNER_MAX_SLOTS 16
#define RUNNER_MAX_TENSORS 64 /* inputs + outputs (plan_check_refs' cap) */
#define RUNNER_MAX_BUFFERS (RUNNER_MAX_TENSORS + PLAN_MAX_WORKSPACES)
#define RUNNER_MAX_TENSOR_BYTES (16ull << 30) /* also PROTO_MAX_BLOB */
#define RUNNER_MAX_SAMPLE (1 << 20)	      /* sampled indices per call, all outputs */
#define RUNNER_MAX_LOG (16 << 10)	      /* compile_error detail */
#define RUNNER_CANARY_BYTES 4096
#define RUNNER_CANARY_BYTE 0xC5

/* What the loop keeps for a loaded slot; engines read it in load and call. */
struct runner_slot {
	bool loaded;
	struct plan plan; /* owned; refs already checked */
	int n_tensors;	  /* inputs then outputs */
	uint64_t bytes[RUNNER_MAX_TENSORS];
	int dtype[RUNNER_MAX_TENSORS]; /* enum ka_dtype (task.h; the codes of include/ka_kernel.h)
					*/
	char module[1024];	       /* CUDA: path of the candidate object, or "" */
	char native[1024];	       /* a trusted native baseline library, or "";
					* with one the plan may be empty */
	int n_params;		       /* the plan's "params": the shape's parameter */
	int64_t params[16];	       /* values (native baselines receive them) */
	int n_inputs;		       /* the plan's "n_inputs", or -1 when absent */
	int check_inputs;	       /* the inputs of the slot's last call when it left
					* every input as generated, canaries intact:
					* a device check may read them; else -1 */
};

/* One input's generator parameters (include/ka_gen.h). */
struct runner_input {
	uint64_t key;
	int kind; /* KA_GEN_NORMAL, KA_GEN_UNIFORM, KA_GEN_INT */
	float a, b;
	int64_t lo;
	uint64_t range; /* >= 1 when kind is KA_GEN_INT */
};

/* A parsed call request. n_inputs + n_outputs == the slot's n_tensors. */
struct runner_call {
	int n_inputs, n_outputs;
	struct runner_input in[RUNNER_MAX_TENSORS];
	uint64_t poison;			 /* per-call poison seed */
	bool flush, time, sample;		 /* sample: return only sample_idx elements */
	int64_t n_sample[RUNNER_MAX_TENSORS];	 /* per output */
	int64_t *sample_idx[RUNNER_MAX_TENSORS]; /* per output, owned by the loop,
						  * each index < the output's numel */
	/* A phased call (runner protocol 3): the loop's pipe ends, for the
	 * phase frames (runner_call_ready, runner_call_replayed), and which of
	 * them were sent. */
	bool phased;
	int in_fd, out_fd;
	bool ready_sent, replayed_sent;
};

/* What an engine fills for a successful call. The loop frees blob[]. */
struct runner_result {
	bool has_time;
	double time_ns;
	uint64_t in_hash_before[RUNNER_MAX_TENSORS], in_hash_after[RUNNER_MAX_TENSORS];
	/* Per input: the first byte offset (rounded down to 8) at which the input
	 * after the call differs from a fresh regeneration made after the
	 * candidate's work finished, or -1. Exact, so a candidate cannot restore a
	 * hash without restoring every byte (docs/grader.md, "Input checks"). */
	int64_t in_modified_at[RUNNER_MAX_TENSORS];
	int n_buffers; /* tensors then workspaces */
	bool canary_ok[RUNNER_MAX_BUFFERS];
	int64_t unwritten[RUNNER_MAX_TENSORS], first_unwritten[RUNNER_MAX_TENSORS];
	int64_t nonfinite[RUNNER_MAX_TENSORS];
	uint8_t *blob[RUNNER_MAX_TENSORS]; /* per output; malloc'd */
	size_t blob_len[RUNNER_MAX_TENSORS];
	json_t *extra; /* optional: fields merged into the reply
			* (CUDA: "cupti", "clocks"); the loop frees it */
};

/* A parsed "check" request (runner protocol 2): the slot's outputs against
 * the fp64 gold computed on the device by a trusted module. */
#define RUNNER_CHECK_FIRST 10
struct runner_check {
	char cubin[1024]; /* the gold module (kernel ka_gold) */
	int64_t items;
	int n_params;
	int64_t params[16];
	double atol, rtol;
	int n_inputs, n_outputs;
	int64_t n_sample[RUNNER_MAX_TENSORS];	 /* per output: device gold to send back */
	int64_t *sample_idx[RUNNER_MAX_TENSORS]; /* owned by the loop */
};

/* One output's outcome: counts, and the lowest-index mismatches with the
 * element's value and gold as doubles. */
struct runner_check_out {
	int64_t checked, bad, nonfinite;
	double max_abs_error;
	int n_first;
	int64_t index[RUNNER_CHECK_FIRST];
	double got[RUNNER_CHECK_FIRST], gold[RUNNER_CHECK_FIRST];
	bool finite[RUNNER_CHECK_FIRST];
};

struct runner_check_result {
	struct runner_check_out out[RUNNER_MAX_TENSORS];
	double gold_ms, compare_ms;
	double *gold_at[RUNNER_MAX_TENSORS]; /* malloc'd, n_sample[j] each; the loop frees */
};

/* A candidate-caused failure: verdict is "compile_error", "launch_error" or
 * "runtime_fault"; detail is malloc'd (the loop frees it). fatal: the device
 * state may be broken; the runner replies, then exits so that the parent
 * starts a fresh one. */
struct runner_verdict {
	const char *verdict;
	char *detail;
	bool fatal;
};

/* Engine functions return 0 (done), 1 (v filled: the candidate's fault) or -1
 * (e filled: the runner could not do it, a harness problem). */
struct runner_engine {
	const char *target; /* "opencl" or "cuda": a plan's target must match */
	void *ctx;
	/* The engine's call reports its phases (runner_call_ready and
	 * runner_call_replayed): the hello then says "phased_calls": true. */
	bool phased;
	/* Fill the reply's "device" object (docs/runner-protocol.md, hello). */
	int (*hello)(void *ctx, json_t *device, struct ka_err *e);
	/* Build and validate slot s (already parsed, refs checked) and allocate
	 * its buffers. A previous load of the slot was unloaded before. */
	int (*load)(void *ctx, int slot, const struct runner_slot *s, struct runner_verdict *v,
		    struct ka_err *e);
	/* Run one call on a loaded slot; fill res (blobs malloc'd). c is not
	 * const for the phase frames of a phased call (runner_call_ready). */
	int (*call)(void *ctx, int slot, const struct runner_slot *s, struct runner_call *c,
		    struct runner_result *res, struct runner_verdict *v, struct ka_err *e);
	/* Optional (NULL: the runner has no device check): check slot's
	 * outputs as its last call left them (s->check_inputs >= 0) against
	 * the gold module's fp64 gold, every element. Its failures are the
	 * runner's (-1 with e), never a verdict. */
	int (*check)(void *ctx, int slot, const struct runner_slot *s, const struct runner_check *c,
		     struct runner_check_result *res, struct ka_err *e);
	/* Release everything of a slot (safe on a slot never loaded). */
	void (*unload)(void *ctx, int slot);
	/* Release everything (at exit). */
	void (*destroy)(void *ctx);
};

/* Bytes of one element of tensor t of slot s (its dtype's size, from
 * src/common/dtype.h; load accepts no dtype outside that table). For a
 * workspace (t >= s->n_tensors), which has no dtype, 4: workspaces are
 * poisoned as 32-bit words. */
int runner_elem_bytes(const struct runner_slot *s, int t);

/* Elements of tensor t (t < s->n_tensors): its bytes over its element size. */
int64_t runner_numel(const struct runner_slot *s, int t);

/* The values that mark an output element as not written by the candidate:
 * NaN patterns (with about 7 to 44 random bits drawn from the call's seed,
 * which a kernel never sees), one per element size; bytes of a
 * buffer's tail that is not a whole element get p1. Every runner poisons
 * outputs and workspaces with these, and counts what is left of them. */
struct runner_poison {
	uint8_t p1;
	uint16_t p2;
	uint32_t p4;
	uint64_t p8;
};

/* The poison of one call, from its "poison" seed. */
struct runner_poison runner_poison_of(uint64_t seed);

/* The poison value for element size es (2, 4 or 8; 1 gives p1), as a
 * 64-bit number, and a pointer to its bytes (host order, es bytes long;
 * valid while pz is). */
uint64_t runner_poison_value(const struct runner_poison *pz, int es);
const void *runner_poison_bytes(const struct runner_poison *pz, int es);

/* Fill v with a candidate-caused failure: verdict kind (a static string:
 * "compile_error", "launch_error" or "runtime_fault") and a detail formatted
 * from fmt (malloc'd; the request loop frees it). Returns 1, what engine
 * functions return for a verdict, so that `return runner_verdict_set(...)`
 * reads as the outcome. */
int runner_verdict_set(struct runner_verdict *v, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The phase frames of a phased call (docs/runner-protocol.md, "Phased
 * calls"), which let the parent hold the device alone only for the flush
 * and the replay. An engine calls runner_call_ready when everything before
 * the cache flush is done and has finished on the device (inputs generated
 * and hashed, outputs poisoned, canaries written, the queue drained: the
 * runner leaves the device idle), then flushes and replays; and
 * runner_call_replayed as soon as the replay has finished on the device,
 * before it reads anything back. For a call without "phased" both return
 * 0 at once. runner_call_ready sends {"phase":"ready"} and waits, with no
 * limit (the parent may be waiting for the device), for {"op":"go"}: 0, or
 * -1 with e when something else comes (the call ends with that error) or
 * the parent went away. runner_call_replayed sends {"phase":"replayed"}: 0,
 * or -1 with e (the parent went away). The loop refuses (an error reply) a
 * phased call that an engine answered without both. */
int runner_call_ready(struct runner_call *c, struct ka_err *e);
int runner_call_replayed(struct runner_call *c, struct ka_err *e);

/* An engine says that the request under way failed for want of device
 * memory (an allocation the driver refused: CUDA_ERROR_OUT_OF_MEMORY, a
 * trusted baseline's cudaErrorMemoryAllocation, OpenCL's
 * CL_MEM_OBJECT_ALLOCATION_FAILURE): the error reply then carries
 * "device_memory": true, which tells the parent that another grader's
 * memory may be the cause (docs/runner-protocol.md). Reset at each request. */
void runner_note_device_memory(void);

/* Serve requests from in_fd, reply on out_fd, until "quit" or EOF on in_fd.
 * Returns the process exit status: 0 after quit/EOF, 3 after a fatal verdict
 * (the reply was sent first), 1 if the parent's pipe broke. */
int runner_serve(struct runner_engine *eng, int in_fd, int out_fd);

/* Move the protocol off fds 0 and 1 before the engine starts: the returned
 * fds carry the protocol, fd 1 becomes a copy of fd 2 (so that kernel printf,
 * which PoCL writes to stdout, lands in the log and cannot forge a reply) and
 * fd 0 reads /dev/null. 0, or -1 with e. */
int runner_take_stdio(int *in_fd, int *out_fd, struct ka_err *e);

#endif
