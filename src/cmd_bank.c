/* cmd_bank.c: `ka bank ACTION [--bank PATH] ...`, the command-line face of
 * bank.h and the bank tools: list, show, validate, split (bank_split.h),
 * check-disjoint (bank_dup.h), export (bank_export.h), new (bank_new.h),
 * calibrate-tolerance (bank_tol.h) and standardize (cmd_bank_std.c).
 * Exit codes: 0 ok; 1 a task failed validation (degenerate data, a
 * tolerance outside its calibration), banks that are not disjoint; 2 bad
 * usage, an unreadable bank, or a task that does not load or whose
 * reference does not compile. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "bank_dup.h"
#include "bank_export.h"
#include "bank_grade.h"
#include "bank_new.h"
#include "bank_split.h"
#include "bank_tol.h"
#include "cli.h"
#include "task.h"
#include "util.h"

static const char bank_usage[] =
	"usage: ka bank list|show|validate [--bank PATH] [--split S] [--grade] [TASK...]\n"
	"       ka bank split [--bank PATH] [--train-frac F] [--seed S]\n"
	"       ka bank check-disjoint BANK_A BANK_B\n"
	"       ka bank export --format jsonl [--bank PATH] -o OUT\n"
	"       ka bank new NAME --tier L1|L2|L3 [--bank PATH]\n"
	"       ka bank calibrate-tolerance [--bank PATH] [--write] [--no-grader] TASK...\n"
	"       ka bank standardize --anchor MODEL --scale small|mid|large BANK OUT\n"
	"\n"
	"  list      one line per task: tier, name, parameters, benchmark shape, folder\n"
	"  show      every field of a task and its reference (ref.c)\n"
	"  validate  load each task, compile its reference as C, OpenCL C (ka-clc on\n"
	"            PoCL) and CUDA (nvcc -arch=sm_90a), compute gold on every check\n"
	"            shape and reject degenerate tasks (non-finite, all-zero or\n"
	"            constant outputs, an input that changes no output); refuse\n"
	"            skeleton placeholders (KA_TODO) and, where TASK/tolerance.json\n"
	"            exists, a tolerance not 10x above its correct_max and 10x below\n"
	"            its wrong_min\n"
	"  split     assign every task to train or dev (per tier, by a hash of the\n"
	"            name and the seed) and record it in PATH/splits.json; tasks\n"
	"            already recorded keep their split (defaults 0.8, seed 1)\n"
	"  check-disjoint  exit 1 listing task pairs of two banks that share a name,\n"
	"            a normalised ref.c or a normalised torch expression\n"
	"  export    OUT/tasks.jsonl (one record per task) and OUT/README.md (card)\n"
	"  new       write a task skeleton under PATH/<tier>/NAME to fill in\n"
	"  calibrate-tolerance  measure the errors of correct and wrong variants\n"
	"            in units of the task's rtol; --write stores TASK/tolerance.json\n"
	"  standardize  keep the tasks a frozen anchor model solves at a pass rate in\n"
	"            a band, as a new bank OUT (ka bank standardize --help)\n"
	"\n"
	"  --bank PATH   the bank folder (default: <root>/bank/public); tasks are\n"
	"                folders holding task.json, one or two levels below it\n"
	"  TASK          a task folder, a bank folder, or a task's folder name in the\n"
	"                bank; none means every task of the bank\n"
	"  --split S     only the tasks of split S (train, dev or all) of splits.json\n"
	"  --no-opencl   skip the OpenCL C compile;  --no-cuda  skip the CUDA compile\n"
	"  --no-grader   calibrate without running solutions/opencl.c in the grader\n"
	"  --grade       validate, then grade every task's solution with the full\n"
	"                protocol on the device (its eager.cu and compiled.cu run\n"
	"                beside it and are checked against gold) and print the\n"
	"                calibration table: times, speedups, eager.cu / PyTorch eager\n"
	"                and compiled.cu / torch.compile from the bank's calibration\n"
	"                of this GPU; exit 1 unless every solution is ok\n"
	"  --target T    with --grade: cuda (solutions/cuda.cu, the default) or opencl\n"
	"  --json FILE   with --grade: one grade result a task, JSON lines\n"
	"  --workdir DIR, --max-seconds S, --min-samples N, --max-samples N: as ka grade\n"
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

/* An int bound: its expression, or the number. */
static void print_bound(const struct expr *x, double v)
{
	if (x)
		printf("%s", expr_text(x));
	else
		printf("%.0f", v);
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
		case KA_DIST_INT:
			printf("  int[");
			print_bound(s->lo_x, s->dist.a);
			printf(", ");
			print_bound(s->hi_x, s->dist.b);
			printf("]");
			break;
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
	if (!t->n_params)
		printf(" (none: every shape is fixed)");
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
	printf("]\nbench:       %s\nchecks:     ", task_shape_label(buf));
	for (int c = 0; c < t->n_checks; c++) {
		task_shape_str(t, &t->checks[c], buf, sizeof buf);
		printf(" %s%s", task_shape_label(buf), c + 1 < t->n_checks ? ";" : "");
	}
	printf("\ntolerance:   atol %g, rtol %g\nlibraries:  ", t->atol, t->rtol);
	if (!t->n_libs)
		printf(" (none)");
	for (int l = 0; l < t->n_libs; l++)
		printf(" %s", t->libs[l]);
	printf("\nmin_bytes:   %s\nmin_flops:   %s\n", expr_text(t->min_bytes),
	       expr_text(t->min_flops));
	/* The optional fields, when the task has them: they change its meaning. */
	if (t->n_scalars)
		printf("scalars:    ");
	for (int i = 0; i < t->n_scalars; i++)
		printf(" %s = %.17g%s", t->scalar_names[i], t->scalars[i],
		       i + 1 < t->n_scalars ? ";" : "\n");
	if (t->n_constraints)
		printf("constraints:");
	for (int i = 0; i < t->n_constraints; i++)
		printf(" %s%s", expr_text(t->constraints[i]),
		       i + 1 < t->n_constraints ? ";" : "\n");
	if (t->baseline_ws)
		printf("baseline_workspace: %s\n", expr_text(t->baseline_ws));
	printf("hash:        %016llx\n", (unsigned long long)task_hash(t));
	printf("---- ref.c ----\n%s", t->ref_src);
	size_t n = strlen(t->ref_src);
	if (n && t->ref_src[n - 1] != '\n')
		printf("\n");
}

/* Options of every action (each action checks that it got only its own). */
struct bank_args {
	const char *bank, *split, *format, *out, *tier;
	int no_opencl, no_cuda, write, no_grader, have_seed, have_frac;
	int grade; /* validate --grade: bank_grade_run once every task passed */
	struct bank_grade_opts g;
	uint64_t seed;
	double train_frac;
};

static int do_split(const struct bank_args *a)
{
	struct bank_split s = {0};
	struct ka_err e;
	int n_new = 0, n_gone = 0;
	if (bank_split_update(a->bank, a->seed, a->have_seed, a->train_frac, a->have_frac, &s,
			      &n_new, &n_gone, &e))
		return cli_bad_input("bank", "%s", e.msg);
	int counts[2] = {0, 0};
	for (int i = 0; i < s.n; i++) {
		printf("%-3s %-32s %s\n", s.tasks[i].tier, s.tasks[i].name,
		       bank_split_name(s.tasks[i].split));
		counts[s.tasks[i].split == BANK_SPLIT_DEV]++;
	}
	printf("split %d task%s (seed %llu, train fraction %g): %d train, %d dev; %d new, %d "
	       "removed; %s/%s\n",
	       s.n, s.n == 1 ? "" : "s", (unsigned long long)s.seed, s.train_frac, counts[0],
	       counts[1], n_new, n_gone, a->bank, BANK_SPLIT_FILE);
	bank_split_free(&s);
	return KA_EXIT_OK;
}

static int do_disjoint(int argc, char **argv)
{
	if (argc != 2)
		return cli_usage_error("bank", "check-disjoint needs two banks, got %d", argc);
	struct util_buf rep = {0};
	struct ka_err e;
	int n = 0, na = 0, nb = 0;
	if (bank_dup_check(argv[0], argv[1], &rep, &n, &na, &nb, &e)) {
		util_buf_free(&rep);
		return cli_bad_input("bank", "%s", e.msg);
	}
	if (rep.s)
		fputs(rep.s, stdout);
	util_buf_free(&rep);
	printf("%s: %d x %d tasks, %d clash%s\n", n ? "not disjoint" : "disjoint", na, nb, n,
	       n == 1 ? "" : "es");
	return n ? KA_EXIT_FAIL : KA_EXIT_OK;
}

static int do_export(const struct bank_args *a)
{
	if (!a->format || strcmp(a->format, "jsonl"))
		return cli_usage_error("bank", "export needs --format jsonl");
	if (!a->out)
		return cli_usage_error("bank", "export needs -o OUT");
	int rc = cli_check_outdir("bank", "-o", a->out);
	if (rc)
		return rc;
	struct ka_err e;
	int n = 0;
	if (bank_export_jsonl(a->bank, a->out, &n, &e))
		return cli_bad_input("bank", "%s", e.msg);
	printf("exported %d task%s to %s/tasks.jsonl (card: %s/README.md)\n", n, n == 1 ? "" : "s",
	       a->out, a->out);
	return KA_EXIT_OK;
}

static int do_new(const struct bank_args *a, int argc, char **argv)
{
	if (argc != 1)
		return cli_usage_error("bank", "new needs one task name");
	if (!a->tier)
		return cli_usage_error("bank", "new needs --tier L1, L2 or L3");
	char *dir = NULL;
	struct ka_err e;
	if (bank_new_write(a->bank, argv[0], a->tier, &dir, &e))
		return cli_bad_input("bank", "%s", e.msg);
	printf("wrote the skeleton of %s in %s. Fill in every KA_TODO:\n"
	       "  task.json           description, torch, params, inputs, outputs, items, bench\n"
	       "                      and checks (one odd size), tolerance, min_bytes, min_flops\n"
	       "  ref.c               the reference (one work item, double accumulation)\n"
	       "  eager.cu            one bank/lib/eager.cuh launch per PyTorch op\n"
	       "  compiled.cu         the fused kernels of bank/lib/compiled.cuh\n"
	       "  solutions/cuda.cu   a verified CUDA solution\n"
	       "  solutions/opencl.c  a verified OpenCL solution\n"
	       "then: ka bank calibrate-tolerance %s --write; ka bank validate %s; ka bank split\n",
	       argv[0], dir, dir, dir);
	free(dir);
	return KA_EXIT_OK;
}

static int do_calibrate(const struct bank_args *a, const struct bank_list *tasks)
{
	struct bank_tol_opts o;
	bank_tol_opts_default(&o);
	o.use_grader = !a->no_grader;
	int rc = KA_EXIT_OK;
	for (int i = 0; i < tasks->n; i++) {
		struct ka_err e;
		struct ka_task *t = task_load(tasks->dirs[i], &e);
		if (!t) {
			rc = cli_bad_input("bank", "%s", e.msg);
			continue;
		}
		bank_trust(t); /* the operator's bank, unless a model wrote the task */
		struct bank_tol_result r;
		if (bank_tol_measure(t, &o, &r, 0, &e)) {
			rc = cli_bad_input("bank", "%s", e.msg);
		} else {
			bank_tol_print(t, &r, stdout);
			if (a->write) {
				if (bank_tol_write(t, &r, &e))
					rc = cli_fail("bank", "%s", e.msg);
				else
					printf("wrote %s/%s\n", t->dir, BANK_TOL_FILE);
			}
		}
		task_free(t);
	}
	return rc;
}

/* One task of validate: placeholders, then bank_validate, then the
 * calibrated tolerance. */
static enum bank_verdict validate_one(const char *dir, const struct bank_tools *tools, char *line,
				      size_t cap)
{
	char files[512];
	if (bank_new_placeholders(dir, files, sizeof files)) {
		snprintf(line, cap,
			 "%s: placeholders (KA_TODO) left in %s: fill in the skeleton "
			 "(docs/bank.md)",
			 dir, files);
		return BANK_VERDICT_BAD;
	}
	enum bank_verdict v = bank_validate(dir, tools, line, cap);
	if (v != BANK_VERDICT_OK)
		return v;
	struct ka_err e;
	struct ka_task *t = task_load(dir, &e);
	if (!t)
		return v;
	char msg[768];
	int c = bank_tol_check(t, msg, sizeof msg);
	task_free(t);
	size_t n = strlen(line);
	if (c == 0) {
		snprintf(line + n, cap - n, "; %s", msg);
		return BANK_VERDICT_OK;
	}
	snprintf(line + n, cap - n, "; %s", msg);
	return c > 0 ? BANK_VERDICT_DEGENERATE : BANK_VERDICT_BAD;
}

static int do_validate(const struct bank_args *a, const struct bank_list *tasks)
{
	struct bank_tools tools;
	bank_tools_find(&tools);
	if (a->no_opencl)
		tools.clc[0] = 0;
	if (a->no_cuda)
		tools.nvcc[0] = 0;
	int n_ok = 0, n_bad = 0, n_degen = 0;
	for (int i = 0; i < tasks->n; i++) {
		char line[3072];
		enum bank_verdict v = validate_one(tasks->dirs[i], &tools, line, sizeof line);
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
	       tasks->n, tasks->n == 1 ? "" : "s", n_ok, n_bad + n_degen, n_bad, n_degen);
	int rc = n_bad ? KA_EXIT_USAGE : n_degen ? KA_EXIT_FAIL : KA_EXIT_OK;
	if (!a->grade || rc)
		return rc;
	return bank_grade_run(&a->g, tasks);
}

#define BANK_TOOLS "split, check-disjoint, export, new, calibrate-tolerance, standardize"

static const char *const bank_actions[] = {
	"list",		  "show",   "validate", "split",
	"check-disjoint", "export", "new",	"calibrate-tolerance",
	"standardize",	  NULL};

int cmd_bank(int argc, char **argv)
{
	static const struct option opts[] = {{"bank", required_argument, NULL, 'b'},
					     {"no-opencl", no_argument, NULL, 'O'},
					     {"no-cuda", no_argument, NULL, 'C'},
					     {"split", required_argument, NULL, 'S'},
					     {"train-frac", required_argument, NULL, 'F'},
					     {"seed", required_argument, NULL, 's'},
					     {"format", required_argument, NULL, 'f'},
					     {"tier", required_argument, NULL, 't'},
					     {"write", no_argument, NULL, 'W'},
					     {"no-grader", no_argument, NULL, 'G'},
					     {"grade", no_argument, NULL, 'g'},
					     {"target", required_argument, NULL, 'T'},
					     {"json", required_argument, NULL, 'j'},
					     {"workdir", required_argument, NULL, 'w'},
					     {"help", no_argument, NULL, 'h'},
					     CLI_PROTOCOL_OPTIONS,
					     {NULL, 0, NULL, 0}};
	if (argc > 1 && !strcmp(argv[1], "standardize"))
		return cmd_bank_standardize(argc - 1, argv + 1);
	if (cli_wants_help(argc, argv)) {
		fputs(bank_usage, stdout);
		return KA_EXIT_OK;
	}
	struct bank_args a = {.seed = BANK_SPLIT_DEFAULT_SEED,
			      .train_frac = BANK_SPLIT_DEFAULT_FRAC,
			      .g = {.target = "cuda", .workdir = "out/.grade"}};
	grade_protocol_default(&a.g.proto);
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': a.bank = optarg; break;
		case 'O': a.no_opencl = 1; break;
		case 'C': a.no_cuda = 1; break;
		case 'S': a.split = optarg; break;
		case 'f': a.format = optarg; break;
		case 'o': a.out = optarg; break;
		case 't': a.tier = optarg; break;
		case 'W': a.write = 1; break;
		case 'G': a.no_grader = 1; break;
		case 'g': a.grade = 1; break;
		case 'T': a.g.target = optarg; break;
		case 'j': a.g.json = optarg; break;
		case 'w':
			a.g.workdir = optarg;
			break;
		CLI_PROTOCOL_CASES:
			if ((rc = cli_protocol_option("bank", c, optarg, &a.g.proto)))
				return rc;
			break;
		case 'F':
			if ((rc = cli_opt_double("bank", "--train-frac", optarg, 0, 1, 1,
						 &a.train_frac)))
				return rc;
			if (a.train_frac >= 1)
				return cli_usage_error(
					"bank", "--train-frac: '%s' is not in (0, 1)", optarg);
			a.have_frac = 1;
			break;
		case 's': {
			int64_t v;
			if ((rc = cli_opt_int("bank", "--seed", optarg, 0,
					      (int64_t)BANK_SPLIT_MAX_SEED, &v)))
				return rc;
			a.seed = (uint64_t)v;
			a.have_seed = 1;
			break;
		}
		default: return cli_bad_option("bank", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("bank", "missing action (list, show or validate); tools: %s",
				       BANK_TOOLS);
	const char *action = argv[optind++];
	int known = 0;
	for (int i = 0; bank_actions[i]; i++)
		known |= !strcmp(action, bank_actions[i]);
	if (!known)
		return cli_usage_error("bank",
				       "unknown action '%s' (list, show or validate); tools: %s",
				       action, BANK_TOOLS);
	if (!a.bank)
		a.bank = bank_default_path();
	a.g.bank = a.bank;
	if ((rc = cli_protocol_check("bank", &a.g.proto)))
		return rc;
	if (strcmp(a.g.target, "cuda") && strcmp(a.g.target, "opencl"))
		return cli_usage_error("bank", "--target must be cuda or opencl, not '%s'",
				       a.g.target);
	if (!a.grade && (a.g.json || strcmp(a.g.target, "cuda")))
		return cli_usage_error("bank", "--target and --json go with --grade");
	if (a.grade && strcmp(action, "validate"))
		return cli_usage_error("bank", "--grade goes with validate, not %s", action);
	int nargs = argc - optind;
	char **args = argv + optind;
	if (!strcmp(action, "split")) {
		if (nargs)
			return cli_usage_error("bank", "split takes no task arguments");
		return do_split(&a);
	}
	if (!strcmp(action, "check-disjoint"))
		return do_disjoint(nargs, args);
	if (!strcmp(action, "export")) {
		if (nargs)
			return cli_usage_error("bank", "export takes no task arguments");
		return do_export(&a);
	}
	if (!strcmp(action, "new"))
		return do_new(&a, nargs, args);
	if (!strcmp(action, "standardize"))
		return cli_usage_error("bank",
				       "standardize takes its own options after it (ka bank "
				       "standardize --help)");

	struct bank_list tasks = {0};
	struct ka_err e;
	if (!strcmp(action, "calibrate-tolerance") && nargs == 0)
		return cli_usage_error("bank", "calibrate-tolerance needs a task");
	if (bank_resolve(a.bank, nargs, args, &tasks, &e) ||
	    (a.split && bank_split_filter(a.bank, a.split, &tasks, &e))) {
		bank_list_free(&tasks);
		return cli_bad_input("bank", "%s", e.msg);
	}
	rc = KA_EXIT_OK;
	if (!strcmp(action, "validate")) {
		rc = do_validate(&a, &tasks);
	} else if (!strcmp(action, "calibrate-tolerance")) {
		rc = do_calibrate(&a, &tasks);
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
