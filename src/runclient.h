/* runclient.h: the parent's side of a runner (ka-run-opencl, ka-run-cuda).
 * A runclient starts the runner program found beside the ka binary, talks
 * to it over a pipe pair (docs/runner-protocol.md, framing in proto.h) and
 * turns its replies into C structs. It owns the runner's life: a call that
 * runs past its timeout kills the runner; a runner that died (or said its
 * device state is broken) is restarted on the next request and every slot it
 * had loaded is loaded again, so callers see only a verdict for the call that
 * failed.
 *
 * Not here: seeds, gold, comparison and verdicts beyond what the runner
 * reports (grade.c decides). The runner's stderr is kept as a bounded tail
 * for error messages (and echoed to our stderr when KA_RUNNER_LOG=1). The
 * runner gets a minimal environment (PATH, HOME, driver variables), never
 * ka's secrets. One runclient is used by one thread at a time; the runner is
 * killed when the thread that started it exits (PR_SET_PDEATHSIG). */
#ifndef KA_RUNCLIENT_H
#define KA_RUNCLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "util.h"

#define RUN_MAX_SLOTS 16
#define RUN_MAX_TENSORS 64
#define RUN_MAX_BUFFERS (RUN_MAX_TENSORS + 16)
#define RUN_DETAIL_MAX (17 << 10) /* a 16 KiB build log and its header */

/* What became of a load or call. */
enum runclient_status {
	RUNCLIENT_OK = 0,
	RUNCLIENT_VERDICT, /* the candidate's fault: verdict names it */
	RUNCLIENT_TIMEOUT, /* no reply in time: the runner was killed */
};

/* verdict uses verdict.h's spelling: "compile_error" (build failed, missing
 * kernel, disallowed option, or the compiler crashed the runner),
 * "launch_error" (the plan does not match the real kernels), "runtime_fault"
 * (an enqueue or the completion failed, or the runner died during a call),
 * "timeout"; "" when OK. */
struct run_status {
	enum runclient_status status;
	char verdict[32];
	char detail[RUN_DETAIL_MAX];
	/* The verdict comes from the runner's death by a SIGKILL that ka did
	 * not send (the OOM killer, a person): no evidence about the
	 * candidate, who cannot send it (grade_candidate grades once more). */
	bool killed_outside;
};

/* The device as the runner's hello describes it (docs/runner-protocol.md). */
struct device_info {
	char name[256], vendor[256], version[256], driver[256], platform[256];
	char opencl_c_version[256];
	char type[16]; /* "gpu", "cpu" or "accelerator" */
	int compute_units, max_clock_mhz, address_bits;
	int64_t max_work_group;
	int max_work_item_dims;
	int64_t max_work_item_sizes[3];
	int64_t local_mem_bytes, global_mem_bytes, max_mem_alloc;
	int64_t cache_bytes, cache_line_bytes;
	int64_t base_addr_align; /* bytes */
	bool fp64;
	char extensions[8192]; /* truncated if longer */
	int pref_vec[7];       /* preferred widths: char short int long float double half */
	bool test_grade;       /* PoCL / any CPU device: results are test-grade */
	int64_t flush_bytes;
	bool phased_calls; /* runner protocol 3: calls may be phased (run_call_req) */
	bool cupti;	   /* CUDA: CUPTI watches every call (each reply has "cupti") */
};

/* One input's generator parameters (include/ka_gen.h). */
struct run_input {
	uint64_t key;
	int kind;   /* KA_GEN_NORMAL, KA_GEN_UNIFORM, KA_GEN_INT */
	float a, b; /* NORMAL: mean, std; UNIFORM: lo, w */
	int64_t lo; /* INT: [lo, lo + range - 1], range >= 1 */
	uint64_t range;
};

/* The frames of a phased call, in order (docs/runner-protocol.md). */
enum run_phase {
	RUN_PHASE_READY = 1, /* prepared: inputs, poison, canaries done, device idle */
	RUN_PHASE_REPLAYED,  /* flushed and replayed: the replay finished */
};

struct run_call_req {
	int slot;
	int n_inputs;  /* the slot's tensors after these are outputs */
	int n_outputs; /* needed with sample: one index list each */
	struct run_input in[RUN_MAX_TENSORS];
	uint64_t poison; /* per-call poison seed */
	int flush, time;
	int sample;				    /* 0: every output comes back whole */
	const int64_t *sample_idx[RUN_MAX_TENSORS]; /* borrowed */
	int64_t n_sample[RUN_MAX_TENSORS];
	/* Phased (only where the hello says "phased_calls"): the runner stops
	 * after preparing, and runclient_call_finish calls on_phase (if set)
	 * with RUN_PHASE_READY before it sends "go", then with
	 * RUN_PHASE_REPLAYED when the replay has finished, so the caller holds
	 * the device alone only between the two (grade.c: the device lock).
	 * on_phase runs on the caller's thread; the time spent in it is not
	 * counted against the call's timeout. */
	int phased;
	void (*on_phase)(void *arg, enum run_phase phase);
	void *phase_arg;
};

struct run_call_res {
	enum runclient_status status; /* the fields after detail are filled only
				       * when OK */
	char verdict[32];
	char detail[RUN_DETAIL_MAX];
	bool killed_outside; /* as in struct run_status */
	int has_time;
	double time_ns; /* START of the first op to END of the last */
	int n_inputs;
	uint64_t in_hash_before[RUN_MAX_TENSORS], in_hash_after[RUN_MAX_TENSORS];
	int64_t in_modified_at[RUN_MAX_TENSORS]; /* first differing byte vs a fresh
						  * regeneration after the call, or -1 */
	int n_buffers;				 /* inputs, outputs, then workspaces */
	bool canary_ok[RUN_MAX_BUFFERS];
	int n_outputs;
	int64_t unwritten[RUN_MAX_TENSORS], first_unwritten[RUN_MAX_TENSORS];
	int64_t nonfinite[RUN_MAX_TENSORS];
	uint8_t *out[RUN_MAX_TENSORS]; /* owned: all bytes, or the sampled elements
					* in sample order */
	size_t out_len[RUN_MAX_TENSORS];
	double wall_s;	/* the parent's wall clock for the request, from the
			 * start of its serialisation to the end of reading
			 * its reply (split in two halves, the reply may have
			 * waited before runclient_call_finish read it: an
			 * upper bound of the runner's time either way) */
	double send_s;	/* of wall_s: building and writing the request */
	double parse_s; /* after wall_s: reading the reply into res */
	json_t *cupti;	/* CUDA: the runner's CUPTI record of the call
			 * (owned; NULL elsewhere) */
	json_t *clocks; /* CUDA timed calls: NVML clocks (owned or NULL) */
	/* Of wall_s: the time spent in req->on_phase (a phased call). */
	double phase_wait_s;
};

/* The tensors a slot holds, inputs then outputs, as it was loaded. */
struct run_tensors {
	int n;
	uint64_t bytes[RUN_MAX_TENSORS];
	int dtypes[RUN_MAX_TENSORS]; /* ka_kernel.h dtype codes */
};

struct runclient;
struct proto_msg;

/* Start the runner for target ("opencl" or "cuda"): <exe dir>/ka-run-<target>
 * (or one directory up, where test binaries live), with --platform when
 * platform is not NULL and --device when device >= 0. Says hello and keeps
 * the device description. Ignores SIGPIPE for the whole process (a dead
 * runner must not kill ka). With workdir (not NULL) and the OpenCL target,
 * the runner's driver cache (PoCL's POCL_CACHE_DIR) is a private folder of
 * this session, workdir/pocl-XXXXXX (--private-cache: the runner bounds it),
 * touched at every load and removed by runclient_stop; folders of that name
 * untouched for an hour (a killed ka's) are removed first. NULL with e when
 * the program is missing, the folder cannot be made, or the runner cannot
 * open a device (e carries the runner's reason). Free with runclient_stop. */
struct runclient *runclient_start(const char *target, const char *platform, int device,
				  const char *workdir, struct ka_err *e);

/* The device description from hello: *device receives a new reference to
 * the hello's "device" object (caller decrefs). 0, or -1 with e. */
int runclient_hello(struct runclient *rc, json_t **device, struct ka_err *e);

/* The same description as a struct (valid until runclient_stop). */
const struct device_info *runclient_device(const struct runclient *rc);

/* Load slot (0..15) with a plan (JSON text, docs/plan-format.md) and the task's
 * tensors (inputs then outputs: byte sizes and ka_kernel.h dtype codes).
 * module: CUDA object to load device code from, NULL for OpenCL. native: a
 * trusted native baseline library (CUDA), usually NULL; with one, plan_json
 * may be NULL. Returns 0 with st filled (status OK, VERDICT or TIMEOUT), or -1
 * with e when the runner could not do it (a harness problem). The request is
 * kept so that a restarted runner gets the slot again; a load that fails
 * leaves the slot empty. Loads wait at most the load timeout
 * (runclient_set_load_timeout, 300 s by default). */
int runclient_load(struct runclient *rc, int slot, const char *plan_json, int n_tensors,
		   const uint64_t *bytes, const int *dtypes, const char *module, const char *native,
		   struct run_status *st, struct ka_err *e);

/* Run one call on the loaded slot req->slot and wait at most timeout_s (<= 0:
 * forever). Returns 0 with res filled (res->status: OK; TIMEOUT, the runner
 * was killed; VERDICT "runtime_fault" for a failed enqueue or completion, or
 * a runner death, whose signal the detail names), or -1 with e (harness
 * problem). After TIMEOUT or a death the next request starts a new runner and
 * reloads every slot. Free res with run_call_res_free (also after -1). */
int runclient_call(struct runclient *rc, const struct run_call_req *req, struct run_call_res *res,
		   double timeout_s, struct ka_err *e);

/* runclient_call in two halves, so that the caller works while the runner
 * runs the call (docs/grader.md, "Call-level overlap"): start sends the
 * request and returns at once (0, or -1 with e before anything was sent);
 * finish waits for the reply, at most until timeout_s after the start, and
 * returns what runclient_call would. A phased call's watchdog runs twice:
 * from the start to "ready", and from "go" to the reply, timeout_s each
 * (the caller's wait in on_phase is outside both). A frame out of order, or
 * a phased call answered ok without both frames, is -1 with e (the runner
 * is killed where the conversation may be out of step). req must stay valid (and unchanged)
 * until finish. One call at most is outstanding: no other request
 * (load, hello, call) may be made between the two. A runner that died
 * before the start shows at finish, as a death during the call. */
int runclient_call_start(struct runclient *rc, const struct run_call_req *req,
			 struct run_call_res *res, double timeout_s, struct ka_err *e);
int runclient_call_finish(struct runclient *rc, const struct run_call_req *req,
			  struct run_call_res *res, struct ka_err *e);

/* KA_CALL_TRACE=FILE: every load, call and check appends one JSON line to
 * FILE (O_APPEND, one write each): {"runner": pid, "op", "timed",
 * "phased", and the parent's monotonic clock (seconds) at "start" (before
 * anything of the request), "ready", "go", "replayed" (0 where the call had
 * none) and "reply" (its reply read)}. Whatever the runner did on the
 * device for it lies within [start, ready] and [go, reply] (phased) or
 * [start, reply]; its replay within [go, replayed]. For tests and
 * diagnostics (tests/e2e/grade_graders.sh checks that no timed section
 * overlaps another runner's work). */

/* Free the output buffers of res and zero them (the struct itself is the
 * caller's). NULL is fine. */
void run_call_res_free(struct run_call_res *res);

/* ---- The device check (runner protocol 2, CUDA): every element of a
 * slot's outputs, as its last call left them, against the task's fp64 gold
 * computed on the device by a trusted module (src/devgold.c). ---- */

#define RUN_CHECK_FIRST 10 /* mismatches reported per output, lowest indices first */

struct run_check_req {
	int slot;
	const char *cubin; /* the gold module: kernel ka_gold (bank.h bank_cuda_gold_source) */
	int64_t items;	   /* work items at the shape */
	int n_params;
	int64_t params[16]; /* the shape's parameter values, in task order */
	double atol, rtol;  /* the task's tolerance (integer outputs: exact, runner-side) */
	int n_inputs, n_outputs;
	const int64_t *sample_idx[RUN_MAX_TENSORS]; /* borrowed: the device gold at these
						     * elements comes back (the
						     * cross-check); n 0: none */
	int64_t n_sample[RUN_MAX_TENSORS];
};

/* One output's check. got and gold are the element's value and gold as
 * doubles (got is 0 where the element is not finite, as the parent's own
 * comparison reports it). */
struct run_check_out {
	int64_t checked, bad, nonfinite;
	double max_abs_error; /* largest finite error among the bad */
	int n_first;
	int64_t index[RUN_CHECK_FIRST];
	double got[RUN_CHECK_FIRST], gold[RUN_CHECK_FIRST];
	int finite[RUN_CHECK_FIRST];
};

struct run_check_res {
	int n_outputs;
	struct run_check_out out[RUN_MAX_TENSORS];
	double gold_ms, compare_ms;    /* the device's time for each part */
	double *gold[RUN_MAX_TENSORS]; /* owned: the device gold at the requested
					* elements, in request order */
	int64_t n_gold[RUN_MAX_TENSORS];
	double wall_s;
};

/* Check slot req->slot's outputs on the device and wait at most timeout_s.
 * Everything that goes wrong is the grader's (the module and the compare are
 * trusted code, the candidate's kernels have finished): a timeout, a runner
 * death or an error reply is -1 with e. 0 with res filled. Free res with
 * run_check_res_free (also after -1). */
int runclient_check(struct runclient *rc, const struct run_check_req *req,
		    struct run_check_res *res, double timeout_s, struct ka_err *e);

/* The "check" request for req (docs/runner-protocol.md). New reference. */
json_t *runclient_check_json(const struct run_check_req *req);

/* Read the runner's reply m to the check req. 0 with res filled (m's blobs
 * copied into res->gold), or -1 with e: an error reply, arrays that do not
 * hold one entry per output, a count out of range, a blob whose length is
 * not its sample's. res must start zeroed. */
int runclient_parse_check(const struct run_check_req *req, struct proto_msg *m,
			  struct run_check_res *res, struct ka_err *e);

/* Free res's gold arrays and zero them. NULL is fine. */
void run_check_res_free(struct run_check_res *res);

/* An error reply of the runner that says it ran out of device memory
 * ("device_memory": true, docs/runner-protocol.md) makes a message that
 * holds this tag; runclient_device_memory says whether e does. */
#define RUN_DEVICE_MEMORY_TAG "[out of device memory]"
int runclient_device_memory(const struct ka_err *e);

/* Kill the runner and forget every loaded slot, so that none of the device
 * memory it held stays taken; the next request starts a fresh runner with
 * nothing loaded. NULL is a no-op. */
void runclient_forget(struct runclient *rc);

/* Kill the runner now and start a new one, reloading every loaded slot.
 * 0, or -1 with e. */
int runclient_restart(struct runclient *rc, struct ka_err *e);

/* How many times the runner was (re)started after the first start. */
int runclient_restarts(const struct runclient *rc);

/* The runner's process id, or -1 when none is running (diagnostics, tests). */
int runclient_pid(const struct runclient *rc);

/* Set the timeout for loads (seconds, > 0). */
void runclient_set_load_timeout(struct runclient *rc, double seconds);

/* The last bytes of the runner's stderr (at most 4 KiB), NUL-terminated, into
 * buf of cap bytes. */
void runclient_log_tail(struct runclient *rc, char *buf, size_t cap);

/* ---- Message handling, pure (no runner process): exposed for
 * tests/unit/test_runclient.c; runclient_call and the loads use them. ---- */

/* The "call" request for req (docs/runner-protocol.md): generator
 * parameters, poison, flush/time flags and, with req->sample, one index list
 * per output (a plain list, or {"runs": [[start, length], ...]} when that is
 * shorter). New reference, or NULL with e when a generator parameter is not
 * finite. */
json_t *runclient_call_json(const struct run_call_req *req, struct ka_err *e);

/* Read the runner's reply m to the call req on a slot holding ts. Returns 0
 * with res filled: status OK (the arrays, canaries and outputs; m's blobs
 * move into res->out), or VERDICT for a "runtime_fault" or "launch_error"
 * reply (detail kept, truncated to RUN_DETAIL_MAX). Returns -1 with e for any
 * other reply: an error reply, a missing time_ns on a timed call, arrays of
 * the wrong length or element type, too many canaries, or an output whose
 * byte count is not what the slot and the sample call for. res must start
 * zeroed; free it with run_call_res_free either way. */
/* For a call's parsed result res from a runner whose device says dev_cupti:
 * 0, or -1 with e when res is OK but has no CUPTI record (the device-side
 * checks would be skipped: a fault of the runner, never of the candidate).
 * runclient_call_finish applies it. */
int runclient_check_cupti(bool dev_cupti, const struct run_call_res *res, struct ka_err *e);

int runclient_parse_call(const struct run_call_req *req, const struct run_tensors *ts,
			 struct proto_msg *m, struct run_call_res *res, struct ka_err *e);

/* Read the runner's reply to a load: 0 with st OK, or VERDICT for a
 * "compile_error", "launch_error" or "runtime_fault" reply; -1 with e for
 * anything else (the reply's "error" text, or "malformed reply"). */
int runclient_parse_load(const json_t *reply, struct run_status *st, struct ka_err *e);

/* Fill o from a hello's "device" object; missing or mistyped fields are
 * left 0 or "" (strings truncated to their fields). */
void runclient_parse_device(const json_t *d, struct device_info *o);

/* Ask the runner to quit (killing it if it does not within 2 s), reap it and
 * free rc. NULL is fine. */
void runclient_stop(struct runclient *rc);

#endif
