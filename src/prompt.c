/* prompt.c: rendering of the solver prompt template (see prompt.h). A
 * util_buf capped at PROMPT_MAX, one pass over the template; each placeholder's text is
 * built from the task when it is met. */
#include "prompt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *prompt_default_template(void)
{
	static char path[4096];
	if (!path[0])
		snprintf(path, sizeof path, "%s/prompts/solver.md", util_data_root());
	return path;
}

int prompt_load_template(const char *path, char **out, struct ka_err *e)
{
	size_t len;
	if (util_read_file(path, PROMPT_TEMPLATE_MAX, out, &len, e))
		return -1;
	size_t i = 0;
	while (i < len &&
	       ((*out)[i] == ' ' || (*out)[i] == '\n' || (*out)[i] == '\t' || (*out)[i] == '\r'))
		i++;
	if (i == len) {
		free(*out);
		*out = NULL;
		return ka_err_set(e, "%s: the template is empty", path);
	}
	return 0;
}

const char *prompt_fence_lang(const char *target)
{
	if (!target)
		return NULL;
	return !strcmp(target, "cuda") ? "cuda" : !strcmp(target, "opencl") ? "c" : NULL;
}

const char *prompt_extract_lang(const char *target)
{
	if (!target)
		return NULL;
	return !strcmp(target, "cuda") ? "cuda" : !strcmp(target, "opencl") ? "opencl" : NULL;
}

const char *prompt_source_ext(const char *target)
{
	return target && !strcmp(target, "cuda") ? ".cu" : ".c";
}

/* Append a file under the data root, without its trailing newlines. */
static int add_file(struct util_buf *b, const char *rel, struct ka_err *e)
{
	char *path = xasprintf("%s/%s", util_data_root(), rel);
	char *text;
	size_t len;
	int rc = util_read_file(path, PROMPT_TEMPLATE_MAX, &text, &len, e);
	free(path);
	if (rc)
		return -1;
	while (len && text[len - 1] == '\n')
		len--;
	util_buf_add(b, text, len);
	free(text);
	return 0;
}

static void add_trimmed(struct util_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	util_buf_add(b, s ? s : "", n);
}

static const struct ka_tensor_spec *tensor_at(const struct ka_task *t, int i)
{
	return i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
}

/* "[R, C]" from the shape expressions. */
static void add_shape_exprs(struct util_buf *b, const struct ka_tensor_spec *ts)
{
	util_buf_puts(b, "[");
	for (int d = 0; d < ts->ndim; d++)
		util_buf_printf(b, "%s%s", d ? ", " : "", expr_text(ts->shape[d]));
	util_buf_puts(b, "]");
}

/* "[7, 1031]" evaluated at sh ("[?]" if a dimension does not evaluate,
 * which task_load rules out for listed shapes). */
static void add_shape_values(struct util_buf *b, const struct ka_tensor_spec *ts,
			     const struct ka_shape *sh)
{
	util_buf_puts(b, "[");
	for (int d = 0; d < ts->ndim; d++) {
		int64_t v;
		struct ka_err e;
		if (expr_eval(ts->shape[d], sh->v, &v, &e))
			util_buf_printf(b, "%s?", d ? ", " : "");
		else
			util_buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
	}
	util_buf_puts(b, "]");
}

static void add_params(struct util_buf *b, const struct ka_task *t)
{
	for (int i = 0; i < t->n_params; i++)
		util_buf_printf(b, "%s%s", i ? ", " : "", t->params[i]);
}

static void add_tensors(struct util_buf *b, const struct ka_task *t)
{
	if (t->n_params) {
		util_buf_puts(b, "Parameters (int64, `a->params[i]`, in this order): ");
		add_params(b, t);
	} else {
		util_buf_puts(b, "Parameters: none (every shape is fixed)");
	}
	if (t->n_scalars) {
		util_buf_puts(b, "\n\nScalars (double, `a->scalars[i]`, in this order): ");
		for (int i = 0; i < t->n_scalars; i++)
			util_buf_printf(b, "%s%s = %.17g", i ? ", " : "", t->scalar_names[i],
					t->scalars[i]);
	}
	if (t->n_constraints) {
		util_buf_puts(b, "\n\nAt every shape these are 0: ");
		for (int i = 0; i < t->n_constraints; i++)
			util_buf_printf(b, "%s`%s`", i ? ", " : "", expr_text(t->constraints[i]));
	}
	util_buf_puts(b, "\n\nInputs (`a->inputs[i]`, read-only):\n");
	for (int i = 0; i < t->n_inputs; i++) {
		const struct ka_tensor_spec *s = &t->inputs[i];
		util_buf_printf(b, "- %d. `%s`: %s ", i, s->name, dtype_name(s->dtype));
		add_shape_exprs(b, s);
		/* An integer range is a precondition a kernel may rely on (an
		 * index input: never outside [lo, hi]). */
		if (s->dist.kind == KA_DIST_INT) {
			char lo[32], hi[32];
			snprintf(lo, sizeof lo, "%.0f", s->dist.a);
			snprintf(hi, sizeof hi, "%.0f", s->dist.b);
			util_buf_printf(b, ", integers in [%s, %s]",
					s->lo_x ? expr_text(s->lo_x) : lo,
					s->hi_x ? expr_text(s->hi_x) : hi);
		}
		util_buf_puts(b, "\n");
	}
	util_buf_puts(b, "\nOutputs (`a->outputs[i]`, every element must be written):\n");
	for (int i = 0; i < t->n_outputs; i++) {
		util_buf_printf(b, "- %d. `%s`: %s ", i, t->outputs[i].name,
				dtype_name(t->outputs[i].dtype));
		add_shape_exprs(b, &t->outputs[i]);
		util_buf_puts(b, "\n");
	}
	util_buf_puts(b, "\nAll tensors are dense, row-major and contiguous.");
}

static void add_items(struct util_buf *b, const struct ka_task *t)
{
	util_buf_puts(b, "[");
	for (int d = 0; d < t->n_item_dims; d++)
		util_buf_printf(b, "%s%s", d ? ", " : "", expr_text(t->items[d]));
	util_buf_puts(b, "]");
}

static void add_one_shape(struct util_buf *b, const struct ka_task *t, const struct ka_shape *sh)
{
	char name[256];
	task_shape_str(t, sh, name, sizeof name);
	util_buf_printf(b, "- %s%s", name, name[0] ? ": " : ""); /* a fixed shape has no name */
	for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
		const struct ka_tensor_spec *ts = tensor_at(t, i);
		util_buf_printf(b, "%s%s ", i == t->n_inputs ? " -> " : i ? ", " : "", ts->name);
		add_shape_values(b, ts, sh);
	}
	util_buf_puts(b, "\n");
}

static void add_shapes(struct util_buf *b, const struct ka_task *t)
{
	util_buf_puts(b, "Correctness is checked on each of these shapes, every output element "
			 "compared, with fresh random inputs on every call:\n\n");
	for (int i = 0; i < t->n_checks; i++)
		add_one_shape(b, t, &t->checks[i]);
	util_buf_puts(b, "\nBenchmark shape (timed against the baselines; its outputs are checked "
			 "too):\n\n");
	add_one_shape(b, t, &t->bench);
	util_buf_puts(b, "\nYour kernel must handle any shape, not only these: sizes need not be "
			 "multiples of anything.");
}

static void add_tolerance(struct util_buf *b, const struct ka_task *t)
{
	util_buf_printf(
		b,
		"An output element passes when |out - gold| <= atol + rtol * |gold| with atol = "
		"%g and rtol = %g, where gold is the reference computed in fp64. NaN or Inf "
		"where gold is finite fails; an output element left unwritten fails; modifying "
		"an input fails.",
		t->atol, t->rtol);
}

static void add_libraries(struct util_buf *b, const struct ka_task *t, int cuda)
{
	if (t->n_libs == 0) {
		util_buf_puts(
			b, cuda ? "None. Write every kernel yourself: no cuBLAS, cuDNN, CUTLASS, "
				  "Thrust or other libraries (CUDA runtime API and device "
				  "intrinsics only)."
				: "None. OpenCL C kernels and the OpenCL host API only.");
		return;
	}
	util_buf_puts(b, "Allowed: ");
	for (int i = 0; i < t->n_libs; i++)
		util_buf_printf(b, "%s%s", i ? ", " : "", t->libs[i]);
	util_buf_puts(b, ". Nothing else.");
}

static const char *signature(int cuda)
{
	return cuda ? "#include \"ka_kernel.h\"\n\nextern \"C\" int ka_launch(const struct ka_args "
		      "*a, cudaStream_t stream);"
		    : "#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl.h>\n#include "
		      "\"ka_kernel.h\"\n\nint ka_launch(const struct ka_args *a, cl_context ctx, "
		      "cl_device_id dev, cl_command_queue queue);";
}

static void add_output_format(struct util_buf *b, int cuda)
{
	if (cuda)
		util_buf_puts(
			b,
			"Reply with one fenced code block tagged ```cuda that holds the complete "
			".cu file: your kernels and the `extern \"C\" int ka_launch(...)` entry "
			"point above, which launches them on `stream` and returns 0. The file must "
			"compile on its own with nvcc (it may include \"ka_kernel.h\", CUDA "
			"headers "
			"and standard headers). No main function, no cudaMalloc (use ka_workspace "
			"for scratch), no synchronisation, no state kept between calls. Keep any "
			"explanation short and outside the block; if your reply has several "
			"```cuda "
			"blocks, the last one is graded.");
	else
		util_buf_puts(
			b,
			"Reply with one fenced code block tagged ```c that holds the complete .c "
			"file: the OpenCL C kernel source as a string constant, and the `int "
			"ka_launch(...)` entry point above, which builds the program for `dev`, "
			"sets the kernel arguments and enqueues on `queue`, returning 0. The file "
			"must compile on its own as C (it may include <CL/cl.h>, \"ka_kernel.h\" "
			"and "
			"standard headers). No main function, no clFinish, no new queues, no host "
			"buffers, no state kept between calls. Keep any explanation short and "
			"outside the block; if your reply has several ```c blocks, the last one is "
			"graded.");
}

/* Append the value of placeholder name. 0, 1 if the name is unknown, -1 with
 * e when a file cannot be read. */
static int add_value(struct util_buf *b, const char *name, const struct ka_task *t, int cuda,
		     struct ka_err *e)
{
	if (!strcmp(name, "task.name"))
		util_buf_puts(b, t->name);
	else if (!strcmp(name, "task.tier"))
		util_buf_puts(b, t->tier);
	else if (!strcmp(name, "task.description"))
		add_trimmed(b, t->description);
	else if (!strcmp(name, "task.torch"))
		add_trimmed(b, t->torch);
	else if (!strcmp(name, "target"))
		util_buf_puts(b, cuda ? "cuda" : "opencl");
	else if (!strcmp(name, "target_name"))
		util_buf_puts(b, cuda ? "CUDA" : "OpenCL");
	else if (!strcmp(name, "lang"))
		util_buf_puts(b, cuda ? "cuda" : "c");
	else if (!strcmp(name, "ref_c"))
		add_trimmed(b, t->ref_src);
	else if (!strcmp(name, "ref_h"))
		return add_file(b, "include/ka_ref.h", e);
	else if (!strcmp(name, "abi"))
		return add_file(b, "include/ka_kernel.h", e);
	else if (!strcmp(name, "signature"))
		util_buf_puts(b, signature(cuda));
	else if (!strcmp(name, "params"))
		add_params(b, t);
	else if (!strcmp(name, "tensors"))
		add_tensors(b, t);
	else if (!strcmp(name, "items"))
		add_items(b, t);
	else if (!strcmp(name, "shapes"))
		add_shapes(b, t);
	else if (!strcmp(name, "tolerance"))
		add_tolerance(b, t);
	else if (!strcmp(name, "libraries"))
		add_libraries(b, t, cuda);
	else if (!strcmp(name, "output_format"))
		add_output_format(b, cuda);
	else
		return 1;
	return 0;
}

static int line_of(const char *start, const char *p)
{
	int n = 1;
	for (; start < p; start++)
		n += *start == '\n';
	return n;
}

char *prompt_render(const char *tmpl, const struct ka_task *t, const char *target, struct ka_err *e)
{
	if (!prompt_fence_lang(target)) {
		ka_err_set(e, "unknown target '%s' (cuda or opencl)", target ? target : "");
		return NULL;
	}
	int cuda = !strcmp(target, "cuda");
	struct util_buf b;
	util_buf_init_cap(&b, PROMPT_MAX - 1);
	util_buf_add(&b, "", 0);
	const char *p = tmpl;
	const char *section = NULL; /* open section name ("cuda"/"opencl") */
	const char *section_at = NULL;
	int skipping = 0;
	while (*p) {
		const char *open = strstr(p, "{{");
		if (!open) {
			if (!skipping)
				util_buf_puts(&b, p);
			break;
		}
		if (!skipping)
			util_buf_add(&b, p, (size_t)(open - p));
		const char *close = strstr(open + 2, "}}");
		const char *nl = strchr(open + 2, '\n');
		if (!close || (nl && nl < close)) {
			ka_err_set(e, "template line %d: '{{' without '}}' on the same line",
				   line_of(tmpl, open));
			goto fail;
		}
		char name[64];
		const char *s = open + 2, *end = close;
		while (s < end && *s == ' ')
			s++;
		while (end > s && end[-1] == ' ')
			end--;
		if ((size_t)(end - s) >= sizeof name) {
			ka_err_set(e, "template line %d: placeholder name too long",
				   line_of(tmpl, open));
			goto fail;
		}
		memcpy(name, s, (size_t)(end - s));
		name[end - s] = 0;
		if (name[0] == '#' || name[0] == '/') {
			const char *sec = name + 1;
			if (strcmp(sec, "cuda") && strcmp(sec, "opencl")) {
				ka_err_set(
					e,
					"template line %d: unknown section '%s' (cuda or opencl)",
					line_of(tmpl, open), sec);
				goto fail;
			}
			if (name[0] == '#') {
				if (section) {
					ka_err_set(e,
						   "template line %d: section '%s' inside section "
						   "'%s'",
						   line_of(tmpl, open), sec, section);
					goto fail;
				}
				section = !strcmp(sec, "cuda") ? "cuda" : "opencl";
				section_at = open;
				skipping = strcmp(section, target) != 0;
			} else {
				if (!section || strcmp(section, sec)) {
					ka_err_set(e,
						   "template line %d: '{{/%s}}' closes no open "
						   "section",
						   line_of(tmpl, open), sec);
					goto fail;
				}
				section = NULL;
				skipping = 0;
			}
			p = close + 2;
			/* A section tag alone on its line leaves no empty line behind. */
			if ((open == tmpl || open[-1] == '\n') && *p == '\n')
				p++;
			continue;
		}
		if (!skipping) {
			int rc = add_value(&b, name, t, cuda, e);
			if (rc < 0)
				goto fail;
			if (rc > 0) {
				ka_err_set(e, "template line %d: unknown placeholder '{{%s}}'",
					   line_of(tmpl, open), name);
				goto fail;
			}
		}
		p = close + 2;
	}
	if (section) {
		ka_err_set(e, "template line %d: section '%s' is never closed",
			   line_of(tmpl, section_at), section);
		goto fail;
	}
	if (b.over) {
		ka_err_set(e, "prompt for %s is over %zu bytes", t->name, PROMPT_MAX);
		goto fail;
	}
	return util_buf_take(&b);
fail:
	util_buf_free(&b);
	return NULL;
}
