/* test_prompt.c: prompt rendering of a bank task, as `ka prompt` prints it:
 * the output holds the task's reference (ref.c), the ABI header
 * (include/ka_kernel.h) and the target's own instructions, and is the same
 * bytes on every run and from the library and the command alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ka_test.h"
#include "prompt.h"
#include "task.h"
#include "util.h"

#define T_HAS(hay, needle, what)                                                                   \
	do {                                                                                       \
		const char *th_ = (hay), *tn_ = (needle);                                          \
		if (!th_ || !tn_ || !strstr(th_, tn_)) {                                           \
			printf("FAIL %s: %s:%d: the prompt (%zu bytes) lacks %s (%.60s...)\n",     \
			       ka_test_name, __FILE__, __LINE__, th_ ? strlen(th_) : 0, what,      \
			       tn_ ? tn_ : "(null)");                                              \
			ka_test_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define TASK_DIR "bank/public/L1/gelu_bias_scale"

static char *render(const char *target)
{
	struct ka_err e;
	char *tmpl = NULL, *dir = xasprintf("%s/%s", util_data_root(), TASK_DIR);
	struct ka_task *t = task_load(dir, &e);
	char *text = NULL;
	if (t && !prompt_load_template(prompt_default_template(), &tmpl, &e))
		text = prompt_render(tmpl, t, target, &e);
	if (!text)
		printf("# render %s: %s\n", target, e.msg);
	free(tmpl);
	free(dir);
	task_free(t);
	return text;
}

static char *slurp(const char *rel)
{
	char *path = xasprintf("%s/%s", util_data_root(), rel), *text = NULL;
	struct ka_err e;
	if (util_read_file(path, 1 << 20, &text, NULL, &e))
		printf("# %s\n", e.msg);
	free(path);
	return text;
}

static void check_target(const char *target, const char *own, const char *other)
{
	char *p = render(target), *ref = slurp(TASK_DIR "/ref.c"),
	     *abi = slurp("include/ka_kernel.h");
	CHECK(p && ref && abi);
	/* ref.c and the header go in whole (the header minus its final newline
	 * at most) */
	T_HAS(p, ref[0] ? ref : NULL, "ref.c");
	size_t n = strlen(abi);
	if (n && abi[n - 1] == '\n')
		abi[n - 1] = 0;
	T_HAS(p, abi, "include/ka_kernel.h");
	T_HAS(p, own, "the target's instructions");
	if (strstr(p, other)) {
		printf("FAIL %s: the %s prompt holds the other target's text '%s'\n", ka_test_name,
		       target, other);
		ka_test_failed = 1;
	}
	/* stable: the same bytes again */
	char *q = render(target);
	CHECK(q && !strcmp(p, q));
	free(p);
	free(q);
	free(ref);
	free(abi);
}

static void test_prompt_cuda(void)
{
	check_target("cuda", "Reply with one fenced code block tagged ```cuda", "tagged ```c that");
}

static void test_prompt_opencl(void)
{
	check_target("opencl", "Reply with one fenced code block tagged ```c that", "```cuda");
}

/* `ka prompt` prints what the library renders, byte for byte. */
static void test_prompt_cli(void)
{
	const char *ka = getenv("KA");
	char *kpath = ka && *ka ? xstrdup(ka) : xasprintf("%s/build/ka", util_data_root());
	char *argv[] = {kpath, "prompt", TASK_DIR, "--target", "cuda", NULL};
	char *out = NULL;
	struct ka_err e;
	int st = util_run(argv, util_data_root(), 60, PROMPT_MAX * 2, &out, NULL, NULL, &e);
	char *p = render("cuda");
	if (st != 0)
		printf("# ka prompt: status %d: %.300s\n", st, out ? out : e.msg);
	CHECK(st == 0 && p);
	size_t lp = strlen(p), lo = strlen(out);
	/* the command may end the text with one newline of its own */
	CHECK(lo == lp || (lo == lp + 1 && out[lp] == '\n'));
	CHECK(!strncmp(out, p, lp));
	free(out);
	free(p);
	free(kpath);
}

int main(void)
{
	RUN(test_prompt_cuda);
	RUN(test_prompt_opencl);
	RUN(test_prompt_cli);
	TEST_EXIT();
}
