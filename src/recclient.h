/* recclient.h: the parent's side of recording (docs/sandbox.md).
 *
 * recclient_run gives a candidate's compiled host code to a recorder program
 * (ka-record-opencl, ka-record-cuda) in a fresh private directory, with a
 * wall-clock watchdog that kills the recorder's whole process group, reads
 * the recorder's bounded output and turns it into a launch plan or a verdict
 * with evidence. It also applies the plan policy that must hold whoever wrote
 * the plan (recclient_check_plan), since the recorder's output is candidate
 * output. It never loads or runs candidate code itself and does not validate
 * the plan against the real device code: the runner does (plan_check_refs and
 * the module). */
#ifndef KA_RECCLIENT_H
#define KA_RECCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "ka_kernel.h"
#include "plan.h"
#include "util.h"

#define RECCLIENT_DETAIL_MAX 4096
#define RECCLIENT_MAX_OUTPUT (8u << 20) /* recorder stdout: the plan */
#define RECCLIENT_MAX_LOG (64u << 10)	/* recorder stderr kept while running */
#define RECCLIENT_EXCERPT 200		/* bytes of a recorded verdict's text kept */

/* Verdict strings used in record_result.verdict. */
#define RECCLIENT_OK "ok"
#define RECCLIENT_RECORD_ERROR "record_error"
#define RECCLIENT_FORBIDDEN "forbidden"
#define RECCLIENT_TIMEOUT "timeout"
#define RECCLIENT_RUNTIME_FAULT "runtime_fault"
#define RECCLIENT_LAUNCH_ERROR "launch_error"

struct recclient_result {
	char verdict[24];		   /* one of the RECCLIENT_* strings above */
	char detail[RECCLIENT_DETAIL_MAX]; /* one line of evidence; "" when ok. Text
					    * the recording process wrote after
					    * loading the candidate is candidate-
					    * controlled: it is kept only as
					    * recorder: "<excerpt>", at most
					    * RECCLIENT_EXCERPT bytes, escaped */
	char sandbox[512];		   /* "sandbox: userns=on ... seccomp=on": the
					    * protections that were active, or "" */
	char log[RECCLIENT_DETAIL_MAX];	   /* the last bytes of the recorder's stderr
					    * (notes, the candidate's own printing) */
	double wall_s;			   /* recclient_run call to result */
	int killed_outside;		   /* the recorder died of a SIGKILL that ka
					    * did not send (util_run_killed_outside):
					    * the verdict or the error rests on it,
					    * and it may not be the candidate's doing */
};

/* One tensor of a recording request (inputs first, then outputs). */
struct recclient_tensor {
	const char *name;
	int32_t dtype; /* enum ka_abi_dtype */
	int32_t ndim;
	int64_t shape[KA_MAX_DIMS];
	int64_t numel;
	uint64_t bytes;
};

/* Build the recorder's request JSON (docs/plan-format.md, "The recording
 * request"). device_json is the "device" object of the runner's hello reply,
 * as JSON text (NULL: an empty object, every property defaulted). Returns a
 * string the caller frees, or NULL with e set (bad device_json, over a cap). */
char *recclient_request_json(const char *target, int n_inputs, int n_outputs,
			     const struct recclient_tensor *tensors, int n_params,
			     const char *const *param_names, const int64_t *param_values,
			     const char *device_json, struct ka_err *e);

/* Record one candidate. recorder_bin: path of ka-record-<target>; so_path: the
 * candidate's host code, compiled into a shared object (copied, not
 * modified); request_json: from recclient_request_json; timeout_s: the
 * watchdog's wall-clock limit (the recorder's CPU limit follows it, at most
 * 10 s).
 * Returns 0 with r filled whatever the candidate did; *plan (zeroed first) is
 * filled when the verdict is ok, and also for launch_error when a plan was
 * read; the caller frees it with plan_free in every case. Returns -1 with e
 * set only when the harness itself failed (recorder missing, no temporary
 * directory, the recorder reporting a harness error before loading the
 * candidate). */
int recclient_run(const char *recorder_bin, const char *so_path, const char *request_json,
		  double timeout_s, struct plan *plan, struct recclient_result *r,
		  struct ka_err *e);

/* The policy every plan must meet, whoever wrote it: build options on the
 * whitelist (src/common/clopts.h); every program source read as the
 * compiler reads it (src/common/clsrc.h: no trigraph, no backslash apart
 * from its newline); no #include / #import / #embed directive (the
 * runner's compiler must not read its files) and no inline assembly in the
 * source or the options, spelled or pasted. 0, or -1 with detail (cap
 * bytes) naming the program and line. */
int recclient_check_plan(const struct plan *p, char *detail, size_t cap);

#endif
