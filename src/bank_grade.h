/* bank_grade.h: `ka bank validate --grade`: every task's solution graded on
 * the device with the full protocol (which runs the task's eager.cu and
 * compiled.cu interleaved with it and checks each baseline against the gold),
 * one grade result a task as a JSON line, and the calibration table: per
 * task the verdict, the solution's and the baselines' times, the speedups
 * with their CIs and, from the bank's calibration of this GPU
 * (bank/calibration/<gpu>.json, tools/calibrate.py), eager.cu / PyTorch eager
 * and compiled.cu / torch.compile; then the tasks with a ratio out of
 * [BANK_BAND_LO, BANK_BAND_HI] (docs/bank.md, "Baselines graded"). */
#ifndef KA_BANK_GRADE_H
#define KA_BANK_GRADE_H

#include "bank.h"
#include "grade.h"

#define BANK_BAND_LO 0.8
#define BANK_BAND_HI 1.25

struct bank_grade_opts {
	const char *target;  /* "cuda" (solutions/cuda.cu) or "opencl" (solutions/opencl.c) */
	const char *bank;    /* the bank folder; calibration/ is beside or inside it */
	const char *json;    /* the JSON lines file, or NULL */
	const char *workdir; /* the grader's work folder */
	struct grade_protocol proto;
};

/* Grade the solution of every task of tasks (each already validated),
 * printing the table on stdout as each row is ready and writing o->json.
 * KA_EXIT_OK when every solution graded ok (its baselines checked against
 * gold), KA_EXIT_FAIL when one did not, had none, or the grader failed on
 * it (the row says why); KA_EXIT_USAGE when the grader cannot start or the
 * JSON file cannot be written (one line on stderr). */
int bank_grade_run(const struct bank_grade_opts *o, const struct bank_list *tasks);

#endif
