/* cmd_bank.c: `ka bank list|show|validate [--bank PATH] [TASK...]`, the
 * command-line face of bank.h. Exit codes: 0 ok; 1 a task failed validation
 * (degenerate data); 2 bad usage, an unreadable bank, or a task that does not
 * load or whose reference does not compile. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "cli.h"
#include "task.h"
#include "util.h"

static const char bank_usage[] =
	"usage: ka bank list|show|validate [--bank PATH] [TASK...]\n"
	"\n"
	"  list      one line per task: tier, name, parameters, benchmark shape, folder\n"
	"  show      every field of a task and its reference (ref.c)\n"
	"  validate  load each task, compile its reference as C, OpenCL C (ka-clc on\n"
	"            PoCL) and CUDA (nvcc -arch=sm_90a), compute gold on every check\n"
	"            shape and reject degenerate tasks (non-finite, all-zero or\n"
	"            constant outputs, an input that changes no output)\n"
	"\n"
	"  --bank PATH   the bank folder (default: <root>/bank/public); tasks are\n"
	"                folders holding task.json, one or two levels below it\n"
	"  TASK          a task folder, a bank folder, or a task's folder name in the\n"
	"                bank; none means every task of the bank\n"
	"  --no-opencl   skip the OpenCL C compile;  --no-cuda  skip the CUDA compile\n"
	"\n"
	"exit codes: 0 ok; 1 a task failed validation; 2 bad usage, unreadable bank,\n"
	"or a task that does not load or whose reference does not compile.\n";

static void print_list(const struct ka_task *t)
{
	char bench[256], params[KA_MAX_PARAMS * (KA_NAMELEN + 1) + 1] = "";
	task_shape_str(t, &t->bench, bench, sizeof bench);
	for (int p = 0; p < t->n_params; p++) {
		if (p)
			strcat(params, ",");
		strcat(params, t->params[p]);
	}
	printf("%-3s %-24s params %-12s bench %-28s %s\n", t->tier, t->name, params, bench, t->dir);
}

static void print_tensor(const struct ka_tensor_spec *s, int is_input)
{
	printf("  %-10s %-5s [", s->name, dtype_name(s->dtype));
	for (int d = 0; d < s->ndim; d++)
		printf("%s%s", d ? ", " : "", expr_text(s->shape[d]));
	printf("]");
	if (is_input) {
		switch (s->dist.kind) {
		case KA_DIST_NORMAL:
			printf("  normal(mean %g, std %g)", s->dist.a, s->dist.b);
			break;
		case KA_DIST_UNIFORM: printf("  uniform[%g, %g)", s->dist.a, s->dist.b); break;
		case KA_DIST_INT: printf("  int[%.0f, %.0f]", s->dist.a, s->dist.b); break;
		}
	} else {
		printf("  per item %s", expr_text(s->per_item));
	}
	printf("\n");
}

static void print_show(const struct ka_task *t)
{
	char buf[256];
	printf("task:        %s (%s)\nfolder:      %s\ndescription: %s\ntorch:       %s\n", t->name,
	       t->tier, t->dir, t->description, t->torch);
	printf("params:     ");
	for (int p = 0; p < t->n_params; p++)
		printf(" %s", t->params[p]);
	printf("\ninputs:\n");
	for (int k = 0; k < t->n_inputs; k++)
		print_tensor(&t->inputs[k], 1);
	printf("outputs:\n");
	for (int j = 0; j < t->n_outputs; j++)
		print_tensor(&t->outputs[j], 0);
	printf("items:       [");
	for (int d = 0; d < t->n_item_dims; d++)
		printf("%s%s", d ? ", " : "", expr_text(t->items[d]));
	task_shape_str(t, &t->bench, buf, sizeof buf);
	printf("]\nbench:       %s\nchecks:     ", buf);
	for (int c = 0; c < t->n_checks; c++) {
		task_shape_str(t, &t->checks[c], buf, sizeof buf);
		printf(" %s%s", buf, c + 1 < t->n_checks ? ";" : "");
	}
	printf("\ntolerance:   atol %g, rtol %g\nlibraries:  ", t->atol, t->rtol);
	if (!t->n_libs)
		printf(" (none)");
	for (int l = 0; l < t->n_libs; l++)
		printf(" %s", t->libs[l]);
	printf("\nmin_bytes:   %s\nmin_flops:   %s\nhash:        %016llx\n",
	       expr_text(t->min_bytes), expr_text(t->min_flops), (unsigned long long)task_hash(t));
	printf("---- ref.c ----\n%s", t->ref_src);
	size_t n = strlen(t->ref_src);
	if (n && t->ref_src[n - 1] != '\n')
		printf("\n");
}

int cmd_bank(int argc, char **argv)
{
	static const struct option opts[] = {{"bank", required_argument, NULL, 'b'},
					     {"no-opencl", no_argument, NULL, 'O'},
					     {"no-cuda", no_argument, NULL, 'C'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	if (cli_wants_help(argc, argv)) {
		fputs(bank_usage, stdout);
		return KA_EXIT_OK;
	}
	const char *bank = NULL;
	int no_opencl = 0, no_cuda = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': bank = optarg; break;
		case 'O': no_opencl = 1; break;
		case 'C': no_cuda = 1; break;
		default: return cli_bad_option("bank", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("bank", "missing action (list, show or validate)");
	const char *action = argv[optind++];
	if (strcmp(action, "list") && strcmp(action, "show") && strcmp(action, "validate"))
		return cli_usage_error("bank", "unknown action '%s' (list, show or validate)",
				       action);
	if (!bank)
		bank = bank_default_path();

	struct bank_list tasks = {0};
	struct ka_err e;
	if (bank_resolve(bank, argc - optind, argv + optind, &tasks, &e)) {
		bank_list_free(&tasks);
		return cli_bad_input("bank", "%s", e.msg);
	}
	int rc = KA_EXIT_OK;
	if (!strcmp(action, "validate")) {
		struct bank_tools tools;
		bank_tools_find(&tools);
		if (no_opencl)
			tools.clc[0] = 0;
		if (no_cuda)
			tools.nvcc[0] = 0;
		int n_ok = 0, n_bad = 0, n_degen = 0;
		for (int i = 0; i < tasks.n; i++) {
			char line[2048];
			enum bank_verdict v =
				bank_validate(tasks.dirs[i], &tools, line, sizeof line);
			printf("%s %s\n",
			       v == BANK_VERDICT_OK    ? "ok  "
			       : v == BANK_VERDICT_BAD ? "bad "
						       : "FAIL",
			       line);
			fflush(stdout);
			n_ok += v == BANK_VERDICT_OK;
			n_bad += v == BANK_VERDICT_BAD;
			n_degen += v == BANK_VERDICT_DEGENERATE;
		}
		printf("validated %d task%s: %d passed, %d failed (%d bad input, %d degenerate)\n",
		       tasks.n, tasks.n == 1 ? "" : "s", n_ok, n_bad + n_degen, n_bad, n_degen);
		rc = n_bad ? KA_EXIT_USAGE : n_degen ? KA_EXIT_FAIL : KA_EXIT_OK;
	} else {
		for (int i = 0; i < tasks.n; i++) {
			struct ka_task *t = task_load(tasks.dirs[i], &e);
			if (!t) {
				rc = cli_bad_input("bank", "%s", e.msg);
				continue;
			}
			if (!strcmp(action, "list"))
				print_list(t);
			else
				print_show(t);
			task_free(t);
		}
	}
	bank_list_free(&tasks);
	return rc;
}
