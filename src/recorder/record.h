/* record.h: the recorder driver's interface to a target's recording API.
 *
 * A recorder program (ka-record-opencl, ka-record-cuda) is the shared driver
 * (record_main.c: request, sandbox, symbol check, load, call, plan) linked with
 * ONE recording API file (record_opencl.c or record_cuda.c) that defines
 * `record_target`, a table of hooks, and exports the target's API functions
 * (listed in record_<target>.dynlist, the only symbols the recorder exports,
 * so the candidate's shared object binds to them and sees nothing else).
 *
 * Order of hook calls, all in the recorder process:
 *   prepare(request)          before the sandbox (may allocate, parse)
 *   classify(symbol)          after the sandbox, for each undefined symbol of
 *                             the candidate (before it is loaded)
 *   tensor_ptr(i)             for each tensor, to build struct ka_args
 *   invoke(entry, args)       calls the candidate's ka_launch; meanwhile the
 *                             exported API functions record into the plan
 *   finish(plan)              moves the recording into the plan
 * The driver writes the plan; a target never writes to any file descriptor
 * except through record_note (stderr). Nothing here knows the names of either
 * target's API: they live in the target's file only. */
#ifndef KA_RECORDER_RECORD_H
#define KA_RECORDER_RECORD_H

#include <jansson.h>
#include <stdint.h>

#include "ka_kernel.h"
#include "../common/plan.h"
#include "../common/util.h"

#define RECORD_MAX_TENSORS 48 /* + PLAN_MAX_WORKSPACES fits the plan's 64 buffers */
#define RECORD_MAX_PARAMS 64
#define RECORD_MAX_REQUEST (1u << 20)

/* One tensor of the request (docs/plan-format.md, "The recording request"). */
struct record_tensor_info {
	char name[64];
	int32_t dtype; /* enum ka_abi_dtype */
	int32_t ndim;
	int64_t shape[KA_MAX_DIMS];
	int64_t numel;
	uint64_t bytes;
};

/* The parsed request. Buffers 0..n_inputs-1 are the inputs, then the outputs;
 * the plan numbers workspaces after them. */
struct record_request {
	char target[16];
	int n_inputs, n_outputs;
	struct record_tensor_info tensors[RECORD_MAX_TENSORS];
	int n_params;
	char param_names[RECORD_MAX_PARAMS][64];
	int64_t params[RECORD_MAX_PARAMS];
	int n_scalars; /* the task's float scalars ("scalars" of the request) */
	char scalar_names[RECORD_MAX_PARAMS][64];
	double scalars[RECORD_MAX_PARAMS];
	json_t *device; /* the "device" object (borrowed; may be an empty object) */
	json_t *root;	/* the whole request, for fields a target adds (borrowed) */
};

/* How the driver treats an undefined symbol of the candidate. */
enum record_sym {
	RECORD_SYM_PROVIDED,	/* the target exports it */
	RECORD_SYM_UNSUPPORTED, /* the target's API, but not available: record_error */
	RECORD_SYM_OTHER,	/* not the target's: the driver's libc/libm allow-list decides */
};

struct record_target {
	const char *name; /* "opencl", "cuda": must equal the request's target */
	/* The API functions the target exports (NULL-terminated). The default
	 * classify rule and `ka-record-<target> --exports` use it. */
	const char *const *exports;
	/* Parse what the target needs from the request (device properties).
	 * 0, or -1 with e set (a harness error: the request is bad). */
	int (*prepare)(const struct record_request *req, struct ka_err *e);
	enum record_sym (*classify)(const char *symbol);
	/* Sonames besides libc.so.6 and libm.so.6 the candidate may need (the
	 * recorder must be linked with them, so nothing is opened to load them);
	 * NULL-terminated, or NULL. */
	const char *const *libraries;
	/* The value of ka_tensor.ptr for tensor i (inputs then outputs). */
	void *(*tensor_ptr)(int i);
	/* Call the candidate's entry point (its ka_launch) and return its value. */
	int (*invoke)(void *entry, const struct ka_args *a);
	/* Fill plan (zeroed by the driver; the driver sets target and status
	 * afterwards) with programs, kernels, workspaces and ops. 0 or -1. */
	int (*finish)(struct plan *p, struct ka_err *e);
};

/* Defined by the target's recording API file. */
extern const struct record_target record_target;

/* Services of the driver for the recording API. */

/* Record a record_error: the candidate misused the API or called one that is
 * not available. The first one wins and becomes the verdict's detail; later
 * ones are only noted. printf-style, one line, e.g.
 * "clEnqueueReadBuffer: not available (host transfers are not allowed)". */
void record_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 1 once record_fail was called. */
int record_failed(void);

/* A note for the log (stderr, capped by the parent), e.g. an unknown device
 * query answered with an error. */
void record_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The parsed request (valid after prepare). */
const struct record_request *record_get_request(void);

#endif
