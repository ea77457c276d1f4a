/* bank_tol.h: tolerance calibration (`ka bank calibrate-tolerance TASK`) and
 * its check in `ka bank validate`. The error of a variant is measured in
 * units of the task's rule abs(out - gold) <= atol + rtol * abs(gold): the
 * smallest rtol with which every checked element passes at the task's atol
 * (0 when all are within atol; infinite where gold is 0 and the error is over
 * atol, or the output is not finite). Variants, on every check shape (every
 * item) and the benchmark shape (a sample of items):
 *   correct: fp32_out (the reference as written, outputs stored in their
 *            dtype: what the device builds of ref.c compute), opencl_solution (the
 *            task's solutions/opencl.c through the grader on an OpenCL device,
 *            when there is one: an upper bound found by grading at rtol/10,
 *            rtol/100, ...);
 *   wrong:   bf16_inputs, fp16_inputs, tf32_inputs (the fp64 reference on
 *            inputs rounded to bf16, fp16, or a 10-bit mantissa; a variant that
 *            changes no input, or whose format is no finer than an output's
 *            (fp16 inputs for an fp16 output), is not applicable);
 *   info:    fp32_acc (every double of the reference computed in float, for
 *            tasks without fp64 outputs): shown, not counted, as a naive float
 *            accumulation is not what a careful kernel does; it tells the
 *            author how much the accumulation precision matters.
 * correct_max is the largest correct error, wrong_min the smallest wrong one.
 * The result is stored in the sidecar TASK/tolerance.json (schema
 * "ka-tolerance/1", docs/bank.md); validation requires rtol >= 10 x
 * correct_max and rtol <= wrong_min / 10 when the sidecar exists. */
#ifndef KA_BANK_TOL_H
#define KA_BANK_TOL_H

#include <jansson.h>
#include <stddef.h>

#include "task.h"
#include "util.h"

#define BANK_TOL_SCHEMA "ka-tolerance/1"
#define BANK_TOL_FILE "tolerance.json"
#define BANK_TOL_MAX_VARIANTS 8
#define BANK_TOL_ERR_CAP 1e30 /* errors above (and infinite ones) are stored as this */

/* CORRECT variants count in correct_max, WRONG ones in wrong_min; INFO ones
 * are measured and shown only. */
enum bank_tol_kind { BANK_TOL_CORRECT, BANK_TOL_WRONG, BANK_TOL_INFO };

struct bank_tol_variant {
	char name[24];
	enum bank_tol_kind kind;
	int measured;	 /* 0: skipped (note says why) */
	double err;	 /* max error in rtol units over every shape (<= cap) */
	int bound;	 /* 1: err is an upper bound (grader variants) */
	char worst[128]; /* where err was reached: "y[17] at R=7,C=1031" */
	char note[256];	 /* why skipped, or a remark */
};

struct bank_tol_result {
	int n;
	struct bank_tol_variant v[BANK_TOL_MAX_VARIANTS];
	double correct_max, wrong_min; /* over measured variants; wrong_min = cap if none */
	int n_shapes;
	double atol, rtol; /* the task's, which the errors are in units of */
};

struct bank_tol_opts {
	int bench_items;     /* random items sampled on the benchmark shape (plus edges) */
	int use_grader;	     /* run solutions/opencl.c through the grader when possible */
	size_t cap_bytes;    /* most bytes of one input tensor (bench shape) */
	const char *workdir; /* grader work folder */
};

/* Defaults: 2048 bench items, grader on, 4 GiB, workdir "out/.grade". */
void bank_tol_opts_default(struct bank_tol_opts *o);

/* The error of one value in rtol units (see above): 0 if abs(out - gold) <=
 * atol, else (abs(out - gold) - atol) / abs(gold), infinite if gold is 0
 * there or out is not finite (unless equal to gold). */
double bank_tol_err(double out, double gold, double atol);

/* x rounded to nearest even with a mantissa of mbits bits (23: unchanged;
 * 10: tf32, 7: bf16 precision); infinities and NaN unchanged. Exponent range
 * is fp32's. */
float bank_tol_round_mantissa(float x, int mbits);

/* Measure every variant of t. 0 with r filled, or -1 with e (gold does not
 * build, memory). Lines of progress go to stderr when verbose. */
int bank_tol_measure(const struct ka_task *t, const struct bank_tol_opts *o,
		     struct bank_tol_result *r, int verbose, struct ka_err *e);

/* Print r as a table (variant, kind, error, where) to f. */
void bank_tol_print(const struct ka_task *t, const struct bank_tol_result *r, FILE *f);

/* r as the sidecar's JSON (new reference). */
json_t *bank_tol_json(const struct ka_task *t, const struct bank_tol_result *r);

/* Write r to t->dir/tolerance.json. 0 or -1 with e. */
int bank_tol_write(const struct ka_task *t, const struct bank_tol_result *r, struct ka_err *e);

/* The validation check. 0: no sidecar, or the tolerance is at least 10x above
 * correct_max and 10x below wrong_min (msg says which); 1: it is not (msg
 * says what fails, with the figures); -1: the sidecar is unreadable, or was
 * measured at another atol (msg says so). msg gets one line (cap bytes). */
int bank_tol_check(const struct ka_task *t, char *msg, size_t cap);

#endif
