/* task.h: one bank task, parsed from its folder (task.json, ref.c and the
 * optional baselines and solutions). The format is documented in
 * docs/task-format.md; task_load rejects anything else with one line naming
 * the file and the field. This module does not compute anything: see gold.h. */
#ifndef KA_TASK_H
#define KA_TASK_H

#include <stdint.h>
#include "expr.h"
#include "dtype.h"
#include "util.h"

#define KA_MAX_TENSORS 8
#define KA_MAX_DIMS 6
#define KA_MAX_SHAPES 16
#define KA_MAX_LIBS 8
#define KA_MAX_SCALARS 8
#define KA_MAX_CONSTRAINTS 8

enum ka_dist_kind { KA_DIST_NORMAL, KA_DIST_UNIFORM, KA_DIST_INT };

/* How an input's values are drawn (see docs/inputs.md). normal: a = mean,
 * b = std; uniform: [a, b); int: integers in [a, b]. */
struct ka_dist {
	enum ka_dist_kind kind;
	double a, b;
};

struct ka_tensor_spec {
	char name[KA_NAMELEN];
	enum ka_dtype dtype;
	int ndim;
	struct expr *shape[KA_MAX_DIMS];
	struct ka_dist dist;   /* inputs only */
	struct expr *lo_x;     /* inputs, int dist: a bound given as an expression over */
	struct expr *hi_x;     /* the parameters ("hi": "V - 1"), or NULL; where set, dist.a
				  (dist.b) is NaN and task_dist_at gives the value at a shape */
	struct expr *per_item; /* outputs only: elements each work item owns,
				  contiguous: item i owns [i*p, (i+1)*p) */
};

/* Values of the task's parameters, in declaration order. */
struct ka_shape {
	int64_t v[KA_MAX_PARAMS];
};

struct ka_task {
	char *dir; /* folder of the task */
	char *name, *tier, *description, *torch;
	char *baseline_torch; /* the PyTorch form the baselines mirror and
			       * tools/calibrate.py times, or NULL: torch
			       * (task.json baseline_torch) */
	int n_params;
	char params[KA_MAX_PARAMS][KA_NAMELEN];
	int n_inputs, n_outputs;
	struct ka_tensor_spec inputs[KA_MAX_TENSORS], outputs[KA_MAX_TENSORS];
	int n_item_dims; /* work items form a row-major grid */
	struct expr *items[KA_MAX_DIMS];
	struct ka_shape bench;
	int n_checks;
	struct ka_shape checks[KA_MAX_SHAPES];
	double atol, rtol;
	int n_libs; /* allowed-library policy: e.g. "cublas" */
	char libs[KA_MAX_LIBS][KA_NAMELEN];
	struct expr *min_bytes, *min_flops; /* roofline floor inputs */
	struct expr *baseline_ws;	    /* bytes of scratch the baselines need beyond the
					     * default, or NULL (task.json baseline_workspace) */
	int n_scalars; /* float scalars: ref gets them as double after the params */
	char scalar_names[KA_MAX_SCALARS][KA_NAMELEN];
	double scalars[KA_MAX_SCALARS];
	int n_constraints; /* expressions that must be 0 at every shape */
	struct expr *constraints[KA_MAX_CONSTRAINTS];
	char *ref_src; /* contents of ref.c */
	int trusted;   /* 1: from a bank the operator gave (ka grade --task, the
			* tracks' --bank), whose ref.c is reviewed bank code;
			* task_load leaves it 0 (a frontier proposal stays 0).
			* Only a trusted task's reference is compiled for the
			* device and run there as gold (devgold.h). */
};

/* Load dir/task.json and dir/ref.c. Returns a new task (task_free) or NULL
 * with e set to "<file>: <field>: <problem>". Expressions are parsed and every
 * shape listed in the task is evaluated, so a task that loads has valid,
 * non-overflowing sizes on its own shapes. */
struct ka_task *task_load(const char *dir, struct ka_err *e);

void task_free(struct ka_task *t);

/* Element count of a tensor and work-item count at a shape: 0 or -1 with e. */
int task_numel(const struct ka_task *t, const struct ka_tensor_spec *s, const struct ka_shape *sh,
	       int64_t *out, struct ka_err *e);
int task_item_count(const struct ka_task *t, const struct ka_shape *sh, int64_t *out,
		    struct ka_err *e);
/* Sizes of each item dimension at a shape (n_item_dims values). */
int task_item_dims(const struct ka_task *t, const struct ka_shape *sh, int64_t *dims,
		   struct ka_err *e);

/* Check that every size of the task evaluates at shape sh: all parameters
 * >= 1, every constraint evaluates to 0, every tensor dimension >= 0 without overflow (also in
 * bytes), at least one work item, each output exactly covered by items x per_item, min_bytes and
 * min_flops >= 0; and, if numel_cap > 0, no tensor over numel_cap elements. task_load runs it on
 * every listed shape; run it before allocating for any other shape. 0 or -1 with e ("field:
 * problem"). Expression bounds of int distributions are checked too (task_dist_at). */
int task_check_shape(const struct ka_task *t, const struct ka_shape *sh, int64_t numel_cap,
		     struct ka_err *e);

/* The distribution of input k at shape sh, its expression bounds evaluated
 * and checked as task_load checks constant ones: lo <= hi,
 * both within +-2^53 and inside the input dtype's range. A copy of the
 * spec's own dist when it has no expression bound. 0, or -1 with e
 * ("inputs[k].dist.hi: ..." / "inputs[k].dist: needs lo <= hi ..."). */
int task_dist_at(const struct ka_task *t, int k, const struct ka_shape *sh, struct ka_dist *out,
		 struct ka_err *e);

/* "M=128,N=1031" into buf ("" for the one shape of a task with no params). */
void task_shape_str(const struct ka_task *t, const struct ka_shape *sh, char *buf, size_t cap);

/* A shape's name (task_shape_str's) as text shows it to a reader: name
 * itself, or "(the fixed shape)" for the empty name of a task with no
 * params. Keys and JSON keep the name as it is. */
const char *task_shape_label(const char *name);

/* Parse "M=128,N=1031" (all parameters required). 0 or -1 with e. */
int task_shape_parse(const struct ka_task *t, const char *text, struct ka_shape *sh,
		     struct ka_err *e);

/* 64-bit identity of the task's content (task.json + ref.c bytes). */
uint64_t task_hash(const struct ka_task *t);

#define TASK_MAX_BASELINE_WS (64ll << 30) /* bytes: baseline_workspace's cap */

/* The extra scratch (bytes) the task's baselines need at shape sh: its
 * baseline_workspace expression, or 0 when the task has none. 0, or -1 with
 * e when it does not evaluate or is outside 0..TASK_MAX_BASELINE_WS. */
int task_baseline_workspace(const struct ka_task *t, const struct ka_shape *sh, int64_t *bytes,
			    struct ka_err *e);

#endif
