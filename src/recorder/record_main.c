/* record_main.c: the recorder driver shared by every target (record.h).
 *
 *   ka-record-<target> --so PATH --request FILE|- [--timeout S]
 *
 * Reads the recording request, enters the sandbox (sandbox.h), checks the
 * candidate's imports (symcheck.h), loads it, calls its ka_launch through the
 * target's hooks and writes the result to its stdout (docs/plan-format.md,
 * "The recorder's output"):
 *   lines written before the candidate is loaded, which it cannot forge:
 *     "harness <message>"              the recorder could not work
 *     "verdict <name>\t<detail>"       the import check's verdict
 *     "stage loading"                  candidate code runs from here on
 *   then exactly one of
 *     "verdict <name>\t<detail>"       record_error, or forbidden (SIGSYS)
 *     "plan" and the plan's JSON       ka_launch returned
 * Stderr carries notes and whatever the candidate prints. The driver does not
 * judge the plan (launch_error, policy): the parent does (src/recclient.c). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "sanopts.h" /* make san: crashes stay signals, no leak check */
#include "sandbox.h"
#include "symcheck.h"

#define RECORD_MAX_SO (64u << 20)

/* Keeps libm among the recorder's libraries whatever the linker's
 * --as-needed policy: a candidate's math calls bind to the copy loaded here,
 * since nothing can be opened from disk inside the sandbox. */
double (*const record_libm_anchor)(double) = exp2;

static struct record_request g_req;
static char g_fail[2048];
static int g_failed;

static void vnote(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	dprintf(2, "ka-record: %s%s\n", prefix, line);
}

void record_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!g_failed) {
		vsnprintf(g_fail, sizeof g_fail, fmt, ap);
		g_failed = 1;
		dprintf(2, "ka-record: record_error: %s\n", g_fail);
	} else {
		vnote("record_error (later): ", fmt, ap);
	}
	va_end(ap);
}

int record_failed(void)
{
	return g_failed;
}

void record_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vnote("note: ", fmt, ap);
	va_end(ap);
}

const struct record_request *record_get_request(void)
{
	return &g_req;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void sanitize(char *dst, size_t cap, const char *src)
{
	size_t i = 0;
	for (; src && src[i] && i + 1 < cap; i++)
		dst[i] = (src[i] == '\n' || src[i] == '\t' || src[i] == '\r') ? ' ' : src[i];
	dst[i] = 0;
}

/* One result line "kind word[\tdetail]"; tabs and newlines inside become
 * spaces, the detail is capped at 4000 bytes. */
static void emit_line(const char *kind, const char *word, const char *detail)
{
	char w[1024], d[4001], line[5200];
	sanitize(w, sizeof w, word);
	sanitize(d, sizeof d, detail);
	int n = snprintf(line, sizeof line, "%s %s%s%s\n", kind, w, detail ? "\t" : "", d);
	if (n > 0)
		write_all(SANDBOX_RESULT_FD, line, strlen(line));
}

static int harness_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int harness_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dprintf(2, "ka-record: %s\n", msg);
	emit_line("harness", msg, NULL);
	return 2;
}

static _Noreturn void verdict_exit(const char *verdict, const char *detail)
{
	emit_line("verdict", verdict, detail);
	_exit(0);
}

static int parse_request(const char *text, size_t len, struct ka_err *e)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root)
		return ka_err_set(e, "request: not JSON (%s at line %d)", je.text, je.line);
	struct record_request *r = &g_req;
	const char *target = json_string_value(json_object_get(root, "target"));
	if (!target || strlen(target) >= sizeof r->target)
		return ka_err_set(e, "request: 'target' missing");
	snprintf(r->target, sizeof r->target, "%s", target);
	json_t *ts = json_object_get(root, "tensors");
	json_int_t n_in = json_integer_value(json_object_get(root, "n_inputs"));
	size_t nt = json_is_array(ts) ? json_array_size(ts) : 0;
	if (nt == 0 || nt > RECORD_MAX_TENSORS)
		return ka_err_set(e, "request: 'tensors' must hold 1..%d tensors",
				  RECORD_MAX_TENSORS);
	if (n_in < 0 || (size_t)n_in > nt)
		return ka_err_set(e, "request: 'n_inputs' out of range");
	r->n_inputs = (int)n_in;
	r->n_outputs = (int)(nt - (size_t)n_in);
	for (size_t i = 0; i < nt; i++) {
		json_t *t = json_array_get(ts, i);
		struct record_tensor_info *ti = &r->tensors[i];
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *shape = json_object_get(t, "shape");
		json_int_t ndim = json_integer_value(json_object_get(t, "ndim"));
		if (!name || strlen(name) >= sizeof ti->name || !json_is_array(shape) || ndim < 0 ||
		    ndim > KA_MAX_DIMS || json_array_size(shape) != (size_t)ndim)
			return ka_err_set(e, "request: tensors[%zu]: bad name, ndim or shape", i);
		snprintf(ti->name, sizeof ti->name, "%s", name);
		ti->ndim = (int32_t)ndim;
		for (int d = 0; d < ndim; d++)
			ti->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
		ti->dtype = (int32_t)json_integer_value(json_object_get(t, "dtype"));
		ti->numel = json_integer_value(json_object_get(t, "numel"));
		json_int_t bytes = json_integer_value(json_object_get(t, "bytes"));
		if (ti->dtype < 0 || ti->dtype > KA_UINT8 || ti->numel < 0 || bytes < 0)
			return ka_err_set(e, "request: tensors[%zu]: bad dtype, numel or bytes", i);
		ti->bytes = (uint64_t)bytes;
	}
	json_t *params = json_object_get(root, "params");
	json_t *names = json_object_get(params, "names");
	json_t *values = json_object_get(params, "values");
	size_t np = json_is_array(names) ? json_array_size(names) : 0;
	if (np > RECORD_MAX_PARAMS || (json_is_array(values) ? json_array_size(values) : 0) != np)
		return ka_err_set(e, "request: 'params' names and values must match (at most %d)",
				  RECORD_MAX_PARAMS);
	r->n_params = (int)np;
	for (size_t i = 0; i < np; i++) {
		const char *nm = json_string_value(json_array_get(names, i));
		json_t *v = json_array_get(values, i);
		if (!nm || strlen(nm) >= sizeof r->param_names[i] || !json_is_integer(v))
			return ka_err_set(e, "request: params[%zu] bad", i);
		snprintf(r->param_names[i], sizeof r->param_names[i], "%s", nm);
		r->params[i] = json_integer_value(v);
	}
	json_t *sc = json_object_get(root, "scalars");
	json_t *snames = json_object_get(sc, "names"), *svalues = json_object_get(sc, "values");
	size_t ns = json_is_array(snames) ? json_array_size(snames) : 0;
	if (ns > RECORD_MAX_PARAMS || (json_is_array(svalues) ? json_array_size(svalues) : 0) != ns)
		return ka_err_set(e, "request: 'scalars' names and values must match (at most %d)",
				  RECORD_MAX_PARAMS);
	r->n_scalars = (int)ns;
	for (size_t i = 0; i < ns; i++) {
		const char *nm = json_string_value(json_array_get(snames, i));
		json_t *v = json_array_get(svalues, i);
		if (!nm || strlen(nm) >= sizeof r->scalar_names[i] || !json_is_number(v))
			return ka_err_set(e, "request: scalars[%zu] bad", i);
		snprintf(r->scalar_names[i], sizeof r->scalar_names[i], "%s", nm);
		r->scalars[i] = json_number_value(v);
	}
	json_t *dev = json_object_get(root, "device");
	r->device = json_is_object(dev) ? dev : json_object();
	r->root = root; /* kept for the life of the process */
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ka-record-%s --so PATH --request FILE|- [--timeout S]\n"
		"       ka-record-%s --exports\n"
		"Runs a candidate's ka_launch in the sandbox against the recording %s API\n"
		"and writes the launch plan to stdout (docs/plan-format.md). PATH must be\n"
		"an absolute path, alone in its directory (the directory becomes the root).\n",
		record_target.name, record_target.name, record_target.name);
}

int main(int argc, char **argv)
{
	const char *so = NULL, *request = NULL;
	double timeout = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--exports")) {
			/* list the exported API; fail if one is not really exported */
			int missing = 0;
			for (const char *const *x = record_target.exports; x && *x; x++) {
				int found = dlsym(RTLD_DEFAULT, *x) != NULL;
				printf("%s%s\n", *x, found ? "" : " MISSING");
				missing |= !found;
			}
			return missing;
		} else if (!strcmp(argv[i], "--so") && i + 1 < argc) {
			so = argv[++i];
		} else if (!strcmp(argv[i], "--request") && i + 1 < argc) {
			request = argv[++i];
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout = atof(argv[++i]);
		} else {
			fprintf(stderr, "ka-record-%s: unknown or incomplete argument '%s'\n",
				record_target.name, argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!so || !request) {
		usage(stderr);
		return 2;
	}
	/* The result descriptor is the original stdout; fd 1 becomes a copy of
	 * stderr, so the candidate's printf lands in the log, not the plan. */
	if (dup2(1, SANDBOX_RESULT_FD) != SANDBOX_RESULT_FD || dup2(2, 1) != 1) {
		perror("ka-record: dup2");
		return 2;
	}
	struct ka_err e = {{0}};
	char *text = NULL;
	size_t len = 0;
	if (!strcmp(request, "-")) {
		size_t cap = 65536;
		text = xmalloc(cap + 1);
		for (;;) {
			ssize_t n = read(0, text + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += (size_t)n;
			if (len == cap) {
				if (cap >= RECORD_MAX_REQUEST)
					return harness_fail("request over %u bytes",
							    RECORD_MAX_REQUEST);
				cap *= 2;
				text = xrealloc(text, cap + 1);
			}
		}
		text[len] = 0;
	} else if (util_read_file(request, RECORD_MAX_REQUEST, &text, &len, &e)) {
		return harness_fail("%s", e.msg);
	}
	if (parse_request(text, len, &e))
		return harness_fail("%s", e.msg);
	free(text);
	if (strcmp(g_req.target, record_target.name))
		return harness_fail("request is for target '%s', this recorder records '%s'",
				    g_req.target, record_target.name);
	if (record_target.prepare(&g_req, &e))
		return harness_fail("%s", e.msg);

	/* Nothing but 1, 2 and the result descriptor stays open. */
	close(0);
	for (int fd = SANDBOX_RESULT_FD + 1; fd < 1024; fd++)
		close(fd);

	int cpu = (int)ceil(timeout > 0 ? timeout : 10);
	if (cpu > 10)
		cpu = 10;
	struct sandbox_report sb;
	if (sandbox_enter(so, cpu, &sb, &e))
		return harness_fail("%s", e.msg);
	dprintf(2, "ka-record: %s\n", sb.text);

	/* The import check, inside the sandbox but before any candidate code. */
	char *elf = NULL;
	size_t elf_len = 0;
	if (util_read_file(sb.so_path, RECORD_MAX_SO, &elf, &elf_len, &e))
		return harness_fail("%s", e.msg);
	char detail[1024];
	enum symcheck_verdict sv = symcheck_run((const unsigned char *)elf, elf_len, &record_target,
						detail, sizeof detail);
	free(elf);
	if (sv == SYMCHECK_FORBIDDEN)
		verdict_exit("forbidden", detail);
	if (sv == SYMCHECK_RECORD_ERROR)
		verdict_exit("record_error", detail);
	if (sv == SYMCHECK_BAD_ELF) {
		/* The object came from the candidate's source through our
		 * compiler: one the check cannot read was bent by that source
		 * (top-level asm can emit a second dynamic symbol table), so it is
		 * the candidate's verdict, never a harness failure that would stop
		 * a run and come back on every resume. */
		char why[1200];
		snprintf(why, sizeof why, "the host code's object cannot be checked: %s", detail);
		verdict_exit("record_error", why);
	}

	/* Build the arguments before loading, so that nothing of ours allocates
	 * between the candidate's constructors and its ka_launch. */
	static struct ka_tensor tensors[RECORD_MAX_TENSORS];
	static const char *pnames[RECORD_MAX_PARAMS];
	int nt = g_req.n_inputs + g_req.n_outputs;
	for (int i = 0; i < nt; i++) {
		const struct record_tensor_info *ti = &g_req.tensors[i];
		tensors[i].ptr = record_target.tensor_ptr(i);
		tensors[i].numel = ti->numel;
		tensors[i].dtype = ti->dtype;
		tensors[i].ndim = ti->ndim;
		memcpy(tensors[i].shape, ti->shape, sizeof ti->shape);
		tensors[i].name = ti->name;
	}
	static const char *snames[RECORD_MAX_PARAMS];
	for (int i = 0; i < g_req.n_params; i++)
		pnames[i] = g_req.param_names[i];
	for (int i = 0; i < g_req.n_scalars; i++)
		snames[i] = g_req.scalar_names[i];
	struct ka_args args = {
		.n_params = g_req.n_params,
		.param_names = pnames,
		.params = g_req.params,
		.n_inputs = g_req.n_inputs,
		.inputs = tensors,
		.n_outputs = g_req.n_outputs,
		.outputs = tensors + g_req.n_inputs,
		.n_scalars = g_req.n_scalars,
		.scalar_names = snames,
		.scalars = g_req.scalars,
	};

	emit_line("stage", "loading", NULL);
	sandbox_set_candidate_loaded();
	void *h = dlopen(sb.so_path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(detail, sizeof detail, "cannot load the host code: %s", dlerror());
		verdict_exit("record_error", detail);
	}
	void *entry = dlsym(h, "ka_launch");
	if (!entry)
		verdict_exit("record_error", "the host code defines no ka_launch");
	if (record_failed()) /* an API call from a constructor */
		verdict_exit("record_error", g_fail);
	int status = record_target.invoke(entry, &args);
	fflush(stdout);
	fflush(stderr);
	if (record_failed())
		verdict_exit("record_error", g_fail);
	struct plan plan;
	memset(&plan, 0, sizeof plan);
	if (record_target.finish(&plan, &e))
		verdict_exit("record_error", e.msg);
	snprintf(plan.target, sizeof plan.target, "%s", record_target.name);
	plan.status = status;
	char *json = plan_write(&plan);
	write_all(SANDBOX_RESULT_FD, "plan\n", 5);
	write_all(SANDBOX_RESULT_FD, json, strlen(json));
	write_all(SANDBOX_RESULT_FD, "\n", 1);
	/* _exit: the candidate's destructors do not run. */
	_exit(0);
}
