/* cmd_grade.c: `ka grade`: grade one candidate file against one task and
 * print a short summary (and the full result as JSON with --json). Exit 0
 * whatever the candidate did; 1 or 2 only when the grader cannot work. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bank.h"
#include "cli.h"
#include "gold.h"
#include "grade.h"
#include "target.h"
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
	      "                      (CUDA; default: half the cores until each grader has\n"
	      "                      its first candidate, then all); 0: compile each one\n"
	      "                      when its turn comes\n"
	      "  --graders N         grade N candidates at once, each with its own runner on\n"
	      "                      the device: checking calls share the device, timed\n"
	      "                      calls have it to themselves (default: CUDA up to 4,\n"
	      "                      one per 4 cores; OpenCL 1, since PoCL's kernels and\n"
	      "                      the checking share the CPU)\n"
	      "  --profile           after grading, where the time went, per phase\n"
	      "  --pipeline MODE     on: the parent checks call k while the runner runs\n"
	      "                      call k+1; off: one call at a time; auto (default):\n"
	      "                      on, except for timed calls on a CPU device\n"
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
		printf("bench     %s\n", task_shape_label(r->bench_shape));
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

#define CMD "grade"
#define GRADE_MAX_KERNELS 256

/* The command line of one `ka grade`. */
struct grade_args {
	const char *task_dir, *target, *json_path, *bench, *platform, *workdir;
	const char *offline; /* --record-only FILE, or NULL */
	const char *kernels[GRADE_MAX_KERNELS];
	int n_kernels;
	int64_t jobs;	 /* -1: half the cores, then all (pool_compile_ahead) */
	int64_t graders; /* 0: by target */
	int profile;
	int64_t device;
	int help; /* --help was given and answered */
	struct grade_protocol proto;
};

/* Step 1: the options into a. 0 (a->help set when --help was answered) or
 * the exit code of a usage error, already reported. */
static int grade_parse(int argc, char **argv, struct grade_args *a)
{
	static const struct option opts[] = {
		{"task", required_argument, 0, 't'},
		{"kernel", required_argument, 0, 'k'},
		{"target", required_argument, 0, 'T'},
		{"json", required_argument, 0, 'j'},
		{"bench-shape", required_argument, 0, 'b'},
		{"platform", required_argument, 0, 'p'},
		{"device", required_argument, 0, 'd'},
		{"workdir", required_argument, 0, 'w'},
		{"record-only", required_argument, 0, 'R'},
		{"jobs", required_argument, 0, 'J'},
		{"graders", required_argument, 0, 'G'},
		{"profile", no_argument, 0, 'P'},
		{"pipeline", required_argument, 0, 'L'},
		{"help", no_argument, 0, 'h'},
		CLI_PROTOCOL_OPTIONS,
		{0, 0, 0, 0},
	};
	*a = (struct grade_args){.target = "opencl", .workdir = "out/.grade", .jobs = -1};
	grade_protocol_default(&a->proto);
	optind = 1;
	opterr = 0;
	int c, rc = 0;
	while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't': a->task_dir = optarg; break;
		case 'k':
			if (a->n_kernels == GRADE_MAX_KERNELS)
				return cli_usage_error(CMD, "at most %d --kernel files",
						       GRADE_MAX_KERNELS);
			a->kernels[a->n_kernels++] = optarg;
			break;
		case 'J': rc = cli_opt_int(CMD, "--jobs", optarg, 0, 1024, &a->jobs); break;
		case 'G': rc = cli_opt_int(CMD, "--graders", optarg, 1, 32, &a->graders); break;
		case 'P': a->profile = 1; break;
		case 'L':
			if (grade_pipeline_parse(optarg, &a->proto.pipeline))
				rc = cli_usage_error(CMD,
						     "--pipeline must be on, off or auto, not '%s'",
						     optarg);
			break;
		case 'T': a->target = optarg; break;
		case 'j': a->json_path = optarg; break;
		case 'b': a->bench = optarg; break;
		case 'p': a->platform = optarg; break;
		case 'w': a->workdir = optarg; break;
		case 'R': a->offline = optarg; break;
		case 'd':
			rc = cli_opt_int(CMD, "--device", optarg, 0, 64, &a->device);
			break;
		CLI_PROTOCOL_CASES:
			rc = cli_protocol_option(CMD, c, optarg, &a->proto);
			break;
		case 'h':
			usage(stdout);
			a->help = 1;
			return 0;
		default: return cli_bad_option(CMD, c, argv);
		}
	}
	if (rc)
		return rc;
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (!a->task_dir)
		return cli_usage_error(CMD, "--task is required");
	if (!a->n_kernels)
		return cli_usage_error(CMD, "--kernel is required");
	if (strcmp(a->target, "opencl") && strcmp(a->target, "cuda"))
		return cli_usage_error(CMD, "--target must be opencl or cuda, not '%s'", a->target);
	return cli_protocol_check(CMD, &a->proto);
}

/* Step 2: the grader, on the device or (--record-only) on its description.
 * 0 with *s, or the exit code with the error reported. */
static int grade_open(const struct grade_args *a, struct grade_session **s)
{
	struct ka_err e;
	if (a->offline) {
		json_error_t je;
		json_t *dev = json_load_file(a->offline, 0, &je);
		if (!dev || !json_is_object(dev)) {
			json_decref(dev);
			return cli_bad_input(CMD, "%s: not a JSON object (%s)", a->offline,
					     je.text);
		}
		*s = grade_session_open_offline(a->target, dev, &a->proto, a->workdir, &e);
		json_decref(dev);
	} else {
		*s = grade_session_open(a->target, a->platform, (int)a->device, &a->proto,
					a->workdir, &e);
	}
	if (!*s)
		return cli_fail(CMD, "cannot start the %s grader: %s", a->target, e.msg);
	return 0;
}

/* Step 3: report one result: the summary on stdout and, with --json, the
 * result as JSON (one line in jf when grading several, else the whole file).
 * 0 or KA_EXIT_FAIL, reported. */
static int grade_report(struct grade_session *s, const struct ka_task *t,
			const struct grade_args *a, int i, FILE *jf, const struct grade_result *r)
{
	int several = a->n_kernels > 1;
	print_summary(s, t, a->target, several ? a->kernels[i] : NULL, a->offline != NULL, r);
	if (!a->json_path)
		return 0;
	json_t *j = grade_result_json(s, t, r);
	json_object_set_new(j, "kernel", json_string(a->kernels[i]));
	char *text = json_dumps(j, several ? JSON_COMPACT : JSON_INDENT(2));
	json_decref(j);
	int rc = 0;
	struct ka_err e;
	if (jf) {
		fprintf(jf, "%s\n", text);
		fflush(jf);
	} else if (util_write_file(a->json_path, text, strlen(text), &e)) {
		rc = cli_fail(CMD, "%s", e.msg);
	}
	free(text);
	return rc;
}

static void wait_child(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The graders of one `ka grade`: n sessions on the device, one thread each,
 * taking the next candidate off a shared counter; reports are written one
 * at a time as grades finish. */
struct grade_pool {
	const struct grade_args *a;
	const struct ka_task *t;
	char **srcs;
	const size_t *lens;
	struct grade_session *sess[32];
	int n_sess;
	int precompiled; /* pool_compile_ahead compiles the candidates */
	FILE *jf;
	pid_t ahead_pid; /* the child compiling ahead, or -1 */
	int ahead_fd;	 /* its reports (one int per compiled candidate), or -1 */
	pthread_t ahead_reader;
	int ahead_reading;
	pthread_mutex_t mu; /* everything below, stdout and jf */
	pthread_cond_t compiled_cv;
	unsigned char *compiled; /* compiled[i]: candidate i's compile ended */
	int ahead_over;		 /* the child ended: nothing more to wait for */
	int next, rc;
	struct grade_result sum; /* per-phase seconds summed (--profile) */
	int n_graded;
};

/* Add r's phase times into p->sum (under p->mu). */
static void pool_add(struct grade_pool *p, const struct grade_result *r)
{
	struct grade_result *s = &p->sum;
	s->compile_s += r->compile_s;
	s->record_s += r->record_s;
	s->load_s += r->load_s;
	s->correct_s += r->correct_s;
	s->timing_s += r->timing_s;
	s->total_s += r->total_s;
	s->runner_s += r->runner_s;
	s->verify_s += r->verify_s;
	s->device_wait_s += r->device_wait_s;
	s->setup_s += r->setup_s;
	s->ahead_s += r->ahead_s;
	s->protocol_s += r->protocol_s;
	s->stats_s += r->stats_s;
	s->other_s += r->other_s;
	p->n_graded++;
}

/* One grader's loop over the candidates. */
static void *pool_worker(void *arg)
{
	struct grade_pool *p = ((void **)arg)[0];
	struct grade_session *s = ((void **)arg)[1];
	grade_thread_share(p->n_sess);
	for (;;) {
		pthread_mutex_lock(&p->mu);
		int i = p->rc == KA_EXIT_OK && p->next < p->a->n_kernels ? p->next++ : -1;
		/* Wait for this candidate's compile ahead, not for the others'. A
		 * failed one is not fatal: the candidate's own compile step
		 * reports its verdict. */
		while (i >= 0 && !p->compiled[i] && !p->ahead_over)
			pthread_cond_wait(&p->compiled_cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (i < 0) {
			grade_session_idle(s); /* its memory to the graders still at work */
			return NULL;
		}
		struct grade_result r;
		struct ka_err e;
		int failed = grade_candidate(s, p->t, p->srcs[i], p->lens[i], p->a->bench, &r, &e);
		pthread_mutex_lock(&p->mu);
		if (failed == -2) { /* the task's own failure: bad input, one line */
			if (p->rc == KA_EXIT_OK)
				p->rc = cli_bad_input(CMD, "%s", e.msg);
		} else if (failed) {
			if (p->rc == KA_EXIT_OK)
				p->rc = cli_fail(CMD, "grader failure: %s", e.msg);
		} else if (p->rc == KA_EXIT_OK) {
			p->rc = grade_report(s, p->t, p->a, i, p->jf, &r);
			pool_add(p, &r);
		}
		pthread_mutex_unlock(&p->mu);
		grade_result_free(&r);
	}
}

/* In the compile-ahead child: tell the parent that candidate i compiled. */
static void ahead_report(int i, void *arg)
{
	int fd = *(int *)arg;
	int32_t v = i;
	while (write(fd, &v, sizeof v) < 0 && errno == EINTR)
		;
}

/* The parent's reader of the compile-ahead child's reports: marks each
 * candidate compiled and wakes the graders; at the end of the reports (the
 * child ended), lets every grader go on. */
static void *ahead_read(void *arg)
{
	struct grade_pool *p = arg;
	int32_t v;
	for (;;) {
		ssize_t got = read(p->ahead_fd, &v, sizeof v);
		if (got < 0 && errno == EINTR)
			continue;
		pthread_mutex_lock(&p->mu);
		if (got == (ssize_t)sizeof v && v >= 0 && v < p->a->n_kernels)
			p->compiled[v] = 1;
		else if (got != (ssize_t)sizeof v)
			p->ahead_over = 1;
		pthread_cond_broadcast(&p->compiled_cv);
		int over = p->ahead_over;
		pthread_mutex_unlock(&p->mu);
		if (over)
			return NULL;
	}
}

/* How many graders: --graders, else by target and cores (see usage). */
static int pool_width(const struct grade_args *a)
{
	if (a->offline)
		return 1;
	int n = (int)a->graders;
	if (!n)
		n = strcmp(a->target, "cuda") ? 1 : grade_graders_default(1);
	return n > a->n_kernels ? a->n_kernels : n;
}

/* Ahead-of-time compilation: a child process compiles every candidate, in
 * order, into the work folder's cache, and reports each as it ends; a
 * grader waits only for its own candidate's compile, which it then finds
 * cached. The child runs at nice 10, below the graders: on the H200 host a
 * background split compile (several phases at once per candidate) took the
 * CPU from the graders' runners and gold (2.50 graded per second against
 * 3.07 with nvcc); while the graders wait, it has the CPU anyway. Its width
 * is --jobs, or by default half the cores until every grader's first
 * candidate has compiled, then all of them. Half at first: with one compile
 * per core from the start each of the first compiles took longer, so the
 * graders started later. All of them after: the compiles then keep ahead
 * of the graders. The H100 host's 16 cores, 32 fresh L1 candidates, 4
 * graders, in turn on one machine: 5.66 and 5.84 per second this way,
 * 5.10 and 5.47 with 8 jobs throughout, 4.69 and 5.24 with 16 (L3
 * softmax_rows: 3.4 to 3.9 all three; docs/PERF.md). Without it (one
 * candidate, --jobs 0, a target that compiles quickly, no pipe) each
 * grader compiles its own candidate. */
static void pool_compile_ahead(struct grade_pool *p)
{
	const struct grade_args *a = p->a;
	int n = a->n_kernels, fds[2];
	if (n < 2 || a->jobs == 0 || !grade_compiles_ahead(p->sess[0]) || pipe2(fds, O_CLOEXEC)) {
		p->ahead_over = 1;
		return;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		cores = 1;
	struct target_width width = {.jobs = (int)a->jobs};
	if (a->jobs < 0)
		width = (struct target_width){.jobs = (int)cores,
					      .first_jobs = cores > 1 ? (int)(cores / 2) : 1,
					      .first_n = pool_width(a)};
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		util_background_priority(10); /* the compiles inherit it */
		struct ka_err ce;
		_exit(grade_precompile(p->sess[0], p->t, n, (const char *const *)p->srcs, p->lens,
				       &width, ahead_report, &fds[1], &ce)
			      ? 1
			      : 0);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		p->ahead_over = 1;
		return;
	}
	p->ahead_pid = pid;
	p->ahead_fd = fds[0];
	p->precompiled = 1;
	if (pthread_create(&p->ahead_reader, NULL, ahead_read, p) == 0) {
		p->ahead_reading = 1;
	} else { /* no reader: wait for the whole batch, as one report */
		wait_child(pid);
		p->ahead_pid = -1;
		p->ahead_over = 1;
	}
}

/* Stop waiting on the compile-ahead child (it has ended, or is waited for
 * here) and release what pool_compile_ahead made. */
static void pool_compile_ahead_end(struct grade_pool *p)
{
	if (p->ahead_pid > 0)
		wait_child(p->ahead_pid);
	p->ahead_pid = -1;
	if (p->ahead_reading)
		pthread_join(p->ahead_reader, NULL);
	p->ahead_reading = 0;
	if (p->ahead_fd >= 0)
		close(p->ahead_fd);
	p->ahead_fd = -1;
}

/* Grade every candidate with p->n_sess graders. Sets p->rc. */
static void pool_run(struct grade_pool *p)
{
	pthread_t th[32];
	void *args[32][2];
	int started = 0;
	for (int k = 0; p->precompiled && k < p->n_sess; k++)
		grade_session_precompiled(p->sess[k]);
	for (int k = 0; k < p->n_sess; k++) {
		args[k][0] = p;
		args[k][1] = p->sess[k];
		if (k == p->n_sess - 1 || pthread_create(&th[k], NULL, pool_worker, args[k])) {
			pool_worker(args[k]); /* the last (or one that could not start) here */
			break;
		}
		started++;
	}
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
}

/* --profile: where the time of the whole run went, summed over candidates. */
static void print_profile(const struct grade_pool *p, double wall)
{
	const struct grade_result *s = &p->sum;
	int n = p->n_graded > 0 ? p->n_graded : 1;
	printf("profile   %d candidates, %d grader(s), %.2f s wall\n", p->n_graded, p->n_sess,
	       wall);
	printf("  %-34s %9s %12s\n", "phase (summed over candidates)", "seconds", "per cand.");
#define ROW(name, v) printf("  %-34s %9.2f %12.4f\n", name, (v), (v) / n)
	ROW("compile (nvcc, or the cache)", s->compile_s);
	ROW("record (recorder + runner load)", s->record_s);
	ROW("  of which runner load", s->load_s);
	ROW("correctness", s->correct_s);
	ROW("timing", s->timing_s);
	printf("  %s\n", "the parent's time, phase by phase (they add up to total):");
	ROW("  compile + record (above)", s->compile_s + s->record_s);
	ROW("  setup: gold opened, baselines", s->setup_s);
	ROW("  requests built, replies parsed", s->protocol_s);
	ROW("  device: waiting for the runner", s->runner_s);
	ROW("  parent: checks, gold, comparison", s->verify_s);
	ROW("  statistics: stop rule, CIs", s->stats_s);
	ROW("  waiting for another grader", s->device_wait_s);
	ROW("  other (none of the above)", s->other_s);
	ROW("total", s->total_s);
	ROW("gold ahead (beside the compile)", s->ahead_s);
#undef ROW
	printf("  parallelism: %.2f grades in flight on average\n",
	       wall > 0 ? s->total_s / wall : 0);
}

/* Open the graders after the first (p->sess[0]). 0, or the exit code. */
static int pool_open(struct grade_pool *p, int width)
{
	for (int k = 1; k < width; k++) {
		struct ka_err e;
		p->sess[k] = grade_session_open(p->a->target, p->a->platform, (int)p->a->device,
						&p->a->proto, p->a->workdir, &e);
		if (!p->sess[k])
			return cli_fail(CMD, "cannot start grader %d of %d: %s", k + 1, width,
					e.msg);
		p->n_sess++;
	}
	return 0;
}

int cmd_grade(int argc, char **argv)
{
	struct grade_args a;
	int rc = grade_parse(argc, argv, &a);
	if (rc || a.help)
		return rc;
	struct ka_err e;
	struct ka_task *t = task_load(a.task_dir, &e);
	if (!t)
		return cli_bad_input(CMD, "%s", e.msg);
	bank_trust(t); /* the operator named it: bank code, unless a model wrote it */
	/* Bank errors are the user's input, found before anything runs: a
	 * reference that does not build as gold, a benchmark shape that its
	 * items do not cover (the per-item check every check shape passed). */
	struct ka_shape bsh;
	if (a.bench &&
	    (task_shape_parse(t, a.bench, &bsh, &e) || task_check_shape(t, &bsh, 0, &e))) {
		task_free(t);
		return cli_bad_input(CMD, "--bench-shape %s: %s", a.bench, e.msg);
	}
	struct gold *g = gold_open(t, &e);
	if (!g) {
		task_free(t);
		return cli_bad_input(CMD, "%s", e.msg);
	}
	gold_close(g);
	int n = a.n_kernels;
	struct grade_pool p = {.a = &a, .t = t, .ahead_pid = -1, .ahead_fd = -1};
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.compiled_cv, NULL);
	p.compiled = xcalloc((size_t)(n ? n : 1), 1);
	char **srcs = xcalloc((size_t)n, sizeof *srcs);
	size_t *lens = xcalloc((size_t)n, sizeof *lens);
	p.srcs = srcs;
	p.lens = lens;
	for (int i = 0; i < n; i++)
		if (util_read_file(a.kernels[i], 1 << 20, &srcs[i], &lens[i], &e)) {
			rc = cli_bad_input(CMD, "%s", e.msg);
			goto out;
		}
	if ((rc = grade_open(&a, &p.sess[0])))
		goto out;
	p.n_sess = 1;
	double t0 = util_now();
	pool_compile_ahead(&p);
	if ((rc = pool_open(&p, pool_width(&a))))
		goto out;
	if (a.json_path && n > 1 && !(p.jf = fopen(a.json_path, "we"))) {
		rc = cli_fail(CMD, "%s: cannot write", a.json_path);
		goto out;
	}
	pool_run(&p);
	rc = p.rc;
	double w = util_now() - t0;
	if (n > 1 && rc == KA_EXIT_OK)
		printf("graded    %d candidates in %.2f s: %.2f per second (%d grader(s))\n", n, w,
		       n / w, p.n_sess);
	if (a.profile)
		print_profile(&p, w);
out:
	if (p.jf)
		fclose(p.jf);
	pool_compile_ahead_end(&p);
	for (int k = 0; k < p.n_sess; k++)
		grade_session_close(p.sess[k]);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.compiled_cv);
	free(p.compiled);
	for (int i = 0; i < n; i++)
		free(srcs[i]);
	free(srcs);
	free(lens);
	task_free(t);
	return rc;
}
