/* cmd_grade.c: `ka grade`: grade one candidate file against one task and
 * print a short summary (and the full result as JSON with --json). Exit 0
 * whatever the candidate did; 1 or 2 only when the grader cannot work. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "grade.h"
#include "task.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("usage: ka grade --task DIR --kernel FILE [--target opencl|cuda] [options]\n\n"
	      "Grades one candidate kernel: compile, record its launches in the sandbox,\n"
	      "replay them in the trusted runner on fresh inputs for every check shape and\n"
	      "the benchmark shape, compare with the fp64 gold, then time it against the\n"
	      "task's baselines. Prints a summary; exit 0 whatever the candidate did.\n\n"
	      "options:\n"
	      "  --task DIR          task folder (task.json, ref.c)\n"
	      "  --kernel FILE       candidate source (.c for opencl, .cu for cuda); repeat it\n"
	      "                      to grade several in one session (one warm runner)\n"
	      "  --jobs N            compile several candidates ahead with N processes\n"
	      "                      (default: one per core; CUDA); 0: compile each one\n"
	      "                      when its turn comes\n"
	      "  --target T          opencl (default) or cuda\n"
	      "  --json FILE         write the result (schema ka-grade/1, docs/grade-result.md);\n"
	      "                      one JSON object per line when grading several\n"
	      "  --bench-shape S     benchmark shape, e.g. \"N=1048576\" (default: the task's;\n"
	      "                      on test-grade CPU devices the largest check shape)\n"
	      "  --no-timing         correctness only\n"
	      "  --max-seconds S     cap of the timing phase (default 60)\n"
	      "  --min-samples N     samples per side before stopping (default 20)\n"
	      "  --max-samples N     sample cap per side (default 500)\n"
	      "  --platform SUBSTR   OpenCL platform to use (default: the first that works)\n"
	      "  --device N          device index (default 0)\n"
	      "  --workdir DIR       where compiled candidates are kept (default out/.grade)\n"
	      "  --record-only FILE  no device: compile and record only, answering the\n"
	      "                      candidate's device queries from FILE (a runner's hello\n"
	      "                      device object, e.g. tests/data/cuda/h200_device.json)\n",
	      f);
}

/* The human summary of one result (file names it when grading several;
 * offline: --record-only, where the device is a description and nothing ran). */
static void print_summary(const struct grade_session *s, const struct ka_task *t,
			  const char *target, const char *file, int offline,
			  const struct grade_result *r)
{
	const char *dev = json_string_value(json_object_get(grade_session_device(s), "name"));
	const char *mark = offline	   ? " [record stage only: nothing ran on it]"
			   : r->test_grade ? " [test-grade: CPU device, not a GPU figure]"
					   : "";
	if (file)
		printf("kernel    %s\n", file);
	printf("task      %s (%s)\ntarget    %s on %s%s\nverdict   %s", t->name, t->tier, target,
	       dev ? dev : "?", mark, verdict_name(r->verdict));
	if (r->verdict != VERDICT_OK)
		printf(" (%s%s%s)\ndetail    %.1500s\n", r->phase, r->shape[0] ? " at " : "",
		       r->shape, r->detail);
	else
		putchar('\n');
	if (r->time_us.valid) {
		printf("bench     %s\n", r->bench_shape);
		printf("time      %.2f us [%.2f, %.2f] (n=%d)\n", r->time_us.median, r->time_us.lo,
		       r->time_us.hi, r->time_us.n);
		if (r->eager_us.valid)
			printf("eager     %.2f us [%.2f, %.2f]  speedup %.3fx [%.3f, %.3f]\n",
			       r->eager_us.median, r->eager_us.lo, r->eager_us.hi,
			       r->speedup_eager.median, r->speedup_eager.lo, r->speedup_eager.hi);
		if (r->compiled_us.valid)
			printf("compiled  %.2f us [%.2f, %.2f]  speedup %.3fx [%.3f, %.3f]\n",
			       r->compiled_us.median, r->compiled_us.lo, r->compiled_us.hi,
			       r->speedup_compiled.median, r->speedup_compiled.lo,
			       r->speedup_compiled.hi);
	}
	printf("seconds   compile %.2f, record %.2f (recorder %.2f, runner load %.2f), correctness "
	       "%.2f, timing %.2f, total %.2f\n",
	       r->compile_s, r->record_s, r->record_s - r->load_s, r->load_s, r->correct_s,
	       r->timing_s, r->total_s);
}

int cmd_grade(int argc, char **argv)
{
	static const struct option opts[] = {
		{"task", required_argument, 0, 't'},
		{"kernel", required_argument, 0, 'k'},
		{"target", required_argument, 0, 'T'},
		{"json", required_argument, 0, 'j'},
		{"bench-shape", required_argument, 0, 'b'},
		{"no-timing", no_argument, 0, 'n'},
		{"max-seconds", required_argument, 0, 's'},
		{"min-samples", required_argument, 0, 'm'},
		{"max-samples", required_argument, 0, 'M'},
		{"platform", required_argument, 0, 'p'},
		{"device", required_argument, 0, 'd'},
		{"workdir", required_argument, 0, 'w'},
		{"record-only", required_argument, 0, 'R'},
		{"jobs", required_argument, 0, 'J'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	const char *task_dir = NULL, *target = "opencl", *json_path = NULL;
	const char *kernels[256];
	int n_kernels = 0;
	int64_t jobs = -1;   /* -1: one per core */
	pid_t rest_pid = -1; /* the child compiling ahead, if any */
	const char *bench = NULL, *platform = NULL, *workdir = "out/.grade", *offline = NULL;
	int64_t device = 0, v;
	struct grade_protocol proto;
	grade_protocol_default(&proto);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't': task_dir = optarg; break;
		case 'k':
			if (n_kernels == 256)
				return cli_usage_error("grade", "at most 256 --kernel files");
			kernels[n_kernels++] = optarg;
			break;
		case 'J':
			if (cli_parse_i64(optarg, 0, 1024, &jobs))
				return cli_usage_error("grade", "--jobs: '%s' is not in 0..1024",
						       optarg);
			break;
		case 'T': target = optarg; break;
		case 'j': json_path = optarg; break;
		case 'b': bench = optarg; break;
		case 'n': proto.timing = 0; break;
		case 'p': platform = optarg; break;
		case 'w': workdir = optarg; break;
		case 'R': offline = optarg; break;
		case 'd':
			if (cli_parse_i64(optarg, 0, 64, &device))
				return cli_usage_error(
					"grade", "--device: '%s' is not a device index", optarg);
			break;
		case 's':
			if (cli_parse_double(optarg, &proto.max_seconds) ||
			    proto.max_seconds <= 0 || proto.max_seconds > 3600)
				return cli_usage_error(
					"grade", "--max-seconds: '%s' is not in (0, 3600]", optarg);
			break;
		case 'm':
			if (cli_parse_i64(optarg, 1, 500, &v))
				return cli_usage_error(
					"grade", "--min-samples: '%s' is not in 1..500", optarg);
			proto.min_samples = (int)v;
			break;
		case 'M':
			if (cli_parse_i64(optarg, 1, 100000, &v))
				return cli_usage_error(
					"grade", "--max-samples: '%s' is not in 1..100000", optarg);
			proto.max_samples = (int)v;
			break;
		case 'h': usage(stdout); return KA_EXIT_OK;
		default: return cli_bad_option("grade", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("grade", "unexpected argument '%s'", argv[optind]);
	if (!task_dir)
		return cli_usage_error("grade", "--task is required");
	if (!n_kernels)
		return cli_usage_error("grade", "--kernel is required");
	if (strcmp(target, "opencl") && strcmp(target, "cuda"))
		return cli_usage_error("grade", "--target must be opencl or cuda, not '%s'",
				       target);
	if (proto.min_samples > proto.max_samples)
		return cli_usage_error("grade", "--min-samples is above --max-samples");
	struct ka_err e;
	struct ka_task *t = task_load(task_dir, &e);
	if (!t) {
		fprintf(stderr, "ka grade: %s\n", e.msg);
		return KA_EXIT_USAGE;
	}
	char **srcs = xcalloc((size_t)n_kernels, sizeof *srcs);
	size_t *lens = xcalloc((size_t)n_kernels, sizeof *lens);
	int rc = KA_EXIT_FAIL;
	struct grade_session *s = NULL;
	for (int i = 0; i < n_kernels; i++)
		if (util_read_file(kernels[i], 1 << 20, &srcs[i], &lens[i], &e)) {
			fprintf(stderr, "ka grade: %s\n", e.msg);
			rc = KA_EXIT_USAGE;
			goto out;
		}
	if (offline) {
		json_error_t je;
		json_t *dev = json_load_file(offline, 0, &je);
		if (!dev || !json_is_object(dev)) {
			fprintf(stderr, "ka grade: %s: not a JSON object (%s)\n", offline, je.text);
			json_decref(dev);
			rc = KA_EXIT_USAGE;
			goto out;
		}
		s = grade_session_open_offline(target, dev, &proto, workdir, &e);
		json_decref(dev);
	} else {
		s = grade_session_open(target, platform, (int)device, &proto, workdir, &e);
	}
	if (!s) {
		fprintf(stderr, "ka grade: cannot start the %s grader: %s\n", target, e.msg);
		goto out;
	}
	double t0 = util_now();
	/* Ahead-of-time compilation: the first `jobs` candidates before
	 * grading starts, the rest in a child process while the first ones
	 * grade (compiles land in the work folder's cache; a candidate's own
	 * compile step then finds its result there). */
	int ahead = n_kernels, rest_at = n_kernels;
	if (n_kernels > 1 && jobs != 0 && grade_compiles_ahead(s)) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		int width = jobs > 0 ? (int)jobs : cores > 0 ? (int)cores : 1;
		if (n_kernels > width)
			ahead = width;
		if (grade_precompile(s, t, ahead, (const char *const *)srcs, lens, width, &e)) {
			fprintf(stderr, "ka grade: %s\n", e.msg);
			goto out;
		}
		if (ahead < n_kernels) {
			fflush(NULL);
			rest_pid = fork();
			if (rest_pid == 0) {
				struct ka_err ce;
				_exit(grade_precompile(s, t, n_kernels - ahead,
						       (const char *const *)srcs + ahead,
						       lens + ahead, width, &ce)
					      ? 1
					      : 0);
			}
			rest_at = ahead;
		}
	}
	FILE *jf = NULL;
	if (json_path && n_kernels > 1 && !(jf = fopen(json_path, "w"))) {
		fprintf(stderr, "ka grade: %s: cannot write\n", json_path);
		goto out;
	}
	rc = KA_EXIT_OK;
	for (int i = 0; i < n_kernels && rc == KA_EXIT_OK; i++) {
		struct grade_result r;
		if (i == rest_at && rest_pid > 0) {
			/* A failed ahead-of-time compile is not fatal: each
			 * candidate's own compile step reports its verdict. */
			while (waitpid(rest_pid, NULL, 0) < 0 && errno == EINTR)
				;
			rest_pid = -1;
		}
		if (grade_candidate(s, t, srcs[i], lens[i], bench, &r, &e)) {
			fprintf(stderr, "ka grade: grader failure: %s\n", e.msg);
			grade_result_free(&r);
			rc = KA_EXIT_FAIL;
			break;
		}
		print_summary(s, t, target, n_kernels > 1 ? kernels[i] : NULL, offline != NULL, &r);
		if (json_path) {
			json_t *j = grade_result_json(s, t, &r);
			json_object_set_new(j, "kernel", json_string(kernels[i]));
			char *text = json_dumps(j, n_kernels > 1 ? JSON_COMPACT : JSON_INDENT(2));
			json_decref(j);
			if (jf) {
				fprintf(jf, "%s\n", text);
				fflush(jf);
			} else if (util_write_file(json_path, text, strlen(text), &e)) {
				fprintf(stderr, "ka grade: %s\n", e.msg);
				rc = KA_EXIT_FAIL;
			}
			free(text);
		}
		grade_result_free(&r);
	}
	if (jf)
		fclose(jf);
	if (n_kernels > 1 && rc == KA_EXIT_OK) {
		double w = util_now() - t0;
		printf("graded    %d candidates in %.2f s: %.2f per second\n", n_kernels, w,
		       n_kernels / w);
	}
out:
	if (rest_pid > 0)
		while (waitpid(rest_pid, NULL, 0) < 0 && errno == EINTR)
			;
	grade_session_close(s);
	for (int i = 0; i < n_kernels; i++)
		free(srcs[i]);
	free(srcs);
	free(lens);
	task_free(t);
	return rc;
}
