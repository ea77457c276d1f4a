/* bank_new.h: task skeletons (`ka bank new NAME --tier L1`) and the check
 * that a task has no placeholder left. A skeleton is a complete, loadable
 * task (an elementwise copy y = x over one parameter N) whose every part the
 * author must replace is marked with the placeholder BANK_NEW_MARK; `ka bank
 * validate` refuses a task while any of its files holds the mark. */
#ifndef KA_BANK_NEW_H
#define KA_BANK_NEW_H

#include <stddef.h>

#include "util.h"

#define BANK_NEW_MARK "KA_TODO"

/* Write the skeleton of task name (1 to 31 of [a-z0-9_]) of tier ("L1",
 * "L2", "L3") under bank_dir/<tier>/<name>: task.json, ref.c, eager.cu,
 * compiled.cu, solutions/cuda.cu, solutions/opencl.c. The folder must not
 * exist. *dir gets the task folder (free). 0, or -1 with e (bad name or
 * tier, the folder exists, a write failed). */
int bank_new_write(const char *bank_dir, const char *name, const char *tier, char **dir,
		   struct ka_err *e);

/* The files of the task in dir that still hold BANK_NEW_MARK, as a list
 * "task.json, ref.c, solutions/cuda.cu" in out (cap bytes; "" when none).
 * Unreadable or missing files are not listed (validation reports those).
 * Returns how many files hold it. */
int bank_new_placeholders(const char *dir, char *out, size_t cap);

#endif
