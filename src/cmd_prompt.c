/* cmd_prompt.c: `ka prompt TASK --target cuda|opencl`: print exactly the
 * prompt a model is sent for one task (the capability track sends it as the
 * only user message, with no system message). It does not contact a model. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "cli.h"
#include "prompt.h"
#include "task.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("usage: ka prompt TASK [--target cuda|opencl] [--bank PATH] [--template FILE]\n\n"
	      "Prints exactly what a model is sent for TASK (a task name in the bank, or a\n"
	      "task folder): the solver prompt template rendered with the task's\n"
	      "description, reference, shapes, tolerance, the ABI header and the output\n"
	      "format of the target.\n\n"
	      "options:\n"
	      "  --target T       cuda (default) or opencl\n"
	      "  --bank PATH      bank to find TASK in (default: bank/public)\n"
	      "  --template FILE  prompt template (default: prompts/solver.md)\n",
	      f);
}

int cmd_prompt(int argc, char **argv)
{
	static const struct option opts[] = {
		{"target", required_argument, 0, 'T'},
		{"bank", required_argument, 0, 'b'},
		{"template", required_argument, 0, 'p'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	const char *target = "cuda", *bank = NULL, *tmpl_path = NULL;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'T': target = optarg; break;
		case 'b': bank = optarg; break;
		case 'p': tmpl_path = optarg; break;
		case 'h': usage(stdout); return KA_EXIT_OK;
		default: return cli_bad_option("prompt", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("prompt", "a task name or folder is required");
	if (optind + 1 < argc)
		return cli_usage_error("prompt", "one task at a time ('%s' is extra)",
				       argv[optind + 1]);
	if (!prompt_fence_lang(target))
		return cli_usage_error("prompt", "--target must be cuda or opencl, not '%s'",
				       target);
	struct ka_err e;
	struct bank_list list = {0};
	if (bank_resolve(bank ? bank : bank_default_path(), 1, argv + optind, &list, &e)) {
		bank_list_free(&list);
		return cli_bad_input("prompt", "%s", e.msg);
	}
	if (list.n != 1) {
		bank_list_free(&list);
		return cli_usage_error("prompt", "'%s' names %d tasks; give one task", argv[optind],
				       list.n);
	}
	int rc = KA_EXIT_USAGE;
	char *tmpl = NULL, *text = NULL;
	struct ka_task *t = task_load(list.dirs[0], &e);
	if (!t) {
		rc = cli_bad_input("prompt", "%s", e.msg);
		goto out;
	}
	if (prompt_load_template(tmpl_path ? tmpl_path : prompt_default_template(), &tmpl, &e)) {
		rc = cli_bad_input("prompt", "%s", e.msg);
		goto out;
	}
	text = prompt_render(tmpl, t, target, &e);
	if (!text) {
		rc = cli_bad_input("prompt", "%s: %s",
				   tmpl_path ? tmpl_path : prompt_default_template(), e.msg);
		goto out;
	}
	fputs(text, stdout);
	rc = fflush(stdout) ? KA_EXIT_FAIL : KA_EXIT_OK;
out:
	free(text);
	free(tmpl);
	task_free(t);
	bank_list_free(&list);
	return rc;
}
