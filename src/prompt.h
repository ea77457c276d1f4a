/* prompt.h: the solver prompt, what a model is sent for one task and one
 * target. The text comes from a template file (prompts/solver.md by default;
 * the procedure-RSI track edits a copy of it) in which {{name}} placeholders
 * are replaced by facts of the task, and {{#cuda}}...{{/cuda}} or
 * {{#opencl}}...{{/opencl}} sections are kept only for that target.
 *
 * Placeholders (an unknown name is an error, so an edited template cannot
 * silently lose a fact):
 *   task.name task.tier task.description task.torch
 *   target (cuda|opencl) target_name (CUDA|OpenCL) lang (fence tag: cuda|c)
 *   ref_c (ref.c, whole) ref_h (include/ka_ref.h, whole)
 *   abi (include/ka_kernel.h, whole) signature (ka_launch for the target)
 *   params tensors (parameters, inputs, outputs with dtypes and shapes)
 *   items (the work-item grid) shapes (check shapes and the benchmark shape,
 *   with every tensor's dimensions) tolerance libraries output_format
 *
 * This module builds text only; it does not send it anywhere. */
#ifndef KA_PROMPT_H
#define KA_PROMPT_H

#include "task.h"
#include "util.h"

#define PROMPT_TEMPLATE_MAX ((size_t)256 << 10)
#define PROMPT_MAX ((size_t)1 << 20)

/* <util_data_root()>/prompts/solver.md (static string). */
const char *prompt_default_template(void);

/* Read a template file (at most PROMPT_TEMPLATE_MAX bytes) into a new
 * string (caller frees). 0 or -1 with e. */
int prompt_load_template(const char *path, char **out, struct ka_err *e);

/* Render tmpl for task t on target ("cuda" or "opencl"). Returns a new string
 * (caller frees), or NULL with e set: unknown placeholder or section (names
 * it and its line), unterminated {{ or section, missing header file, result
 * over PROMPT_MAX. */
char *prompt_render(const char *tmpl, const struct ka_task *t, const char *target,
		    struct ka_err *e);

/* The language tag the prompt asks the code block to carry ("cuda" or "c"),
 * and the language extract_code is asked for ("cuda" or "opencl"). NULL for
 * an unknown target. */
const char *prompt_fence_lang(const char *target);
const char *prompt_extract_lang(const char *target);

/* File extension of a candidate source for target (".cu" or ".c"). */
const char *prompt_source_ext(const char *target);

#endif
