/* cmd_slurm.c: `ka slurm` writes the plan of a sharded capability run
 * (shard.h) and submits it as one Slurm job array, one array task a shard,
 * plus a merge job that runs once every shard succeeded; `ka shard PLAN I`
 * is what array task I runs: the capability track over shard I's tasks, in
 * OUT/shard-I, with its own journal. Run again with the same arguments, ka
 * slurm submits only the shards that have not finished, and each continues
 * from its journal. Grades nothing itself; talks to Slurm only via sbatch. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "shard.h"
#include "util.h"

#define CMD "slurm"
#define SBATCH_OUT_CAP 65536

static void usage(FILE *f)
{
	fputs("usage: ka slurm --track capability --shards N --out OUT [--gpus-per-shard G]\n"
	      "                [--partition P] [--time T] [--no-submit] [--no-merge]\n"
	      "                TRACK OPTIONS...\n\n"
	      "Splits the tasks of a capability run (tier-filtered, in bank order) round-robin\n"
	      "into N shards and submits one `sbatch --array` job: array task i runs\n"
	      "`ka shard OUT/slurm.json i`, the capability track over shard i's tasks (k\n"
	      "samples each) in OUT/shard-i with its own journal. A merge job submitted\n"
	      "with afterok runs `ka merge OUT`: OUT/scorecard.json, the same as one machine\n"
	      "running the same work (timings aside). Run the same command again to submit\n"
	      "only the shards that have not finished (each continues from its journal).\n"
	      "TRACK OPTIONS are those of ka --track capability (--api-model, --tier, --k,\n"
	      "--bank, --target, ...), except --out and --fresh.\n\n"
	      "options:\n"
	      "  --shards N          array tasks (1..1024, at most the number of tasks)\n"
	      "  --out OUT           the run's folder (required; OUT/shard-i per shard)\n"
	      "  --gpus-per-shard G  GPUs each array task asks for (--gres=gpu:G; default 0)\n"
	      "  --partition P       Slurm partition of the array and the merge job\n"
	      "  --time T            time limit of each array task (sbatch --time)\n"
	      "  --no-submit         write OUT/slurm.sbatch and OUT/merge.sbatch only\n"
	      "  --no-merge          do not submit the merge job\n"
	      "  SBATCH (environment) the sbatch program (default: sbatch on PATH)\n\n"
	      "exit codes: 0 submitted (or written), 1 sbatch failed, 2 bad usage or input.\n",
	      f);
}

struct slurm_opts {
	const char *track, *out, *partition, *time;
	int shards, gpus, submit, merge;
	json_t *args; /* track options passed through */
	const char *bank, *tier;
};

/* "easy" -> "L1", ...; NULL for all; *bad when unknown. */
static const char *tier_of(const char *s, int *bad)
{
	static const char *const names[][2] = {{"L1", "L1"},	 {"easy", "L1"}, {"L2", "L2"},
					       {"medium", "L2"}, {"L3", "L3"},	 {"hard", "L3"}};
	*bad = 0;
	if (!strcasecmp(s, "all"))
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i][0]))
			return names[i][1];
	*bad = 1;
	return NULL;
}

/* The value of track option name at argv[*i] ("--name V" or "--name=V"),
 * advancing *i past V; NULL when argv[*i] is not that option. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* Parse argv into o: our options are taken, the rest kept in o->args. */
static int parse(int argc, char **argv, struct slurm_opts *o)
{
	const char *v;
	int64_t n;
	o->args = json_array();
	o->submit = o->merge = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int bad;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -1;
		} else if ((v = opt_value(argc, argv, &i, "--track"))) {
			o->track = v;
		} else if ((v = opt_value(argc, argv, &i, "--shards"))) {
			if (cli_opt_int(CMD, "--shards", v, 1, SHARD_MAX, &n))
				return KA_EXIT_USAGE;
			o->shards = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--gpus-per-shard"))) {
			if (cli_opt_int(CMD, "--gpus-per-shard", v, 0, 64, &n))
				return KA_EXIT_USAGE;
			o->gpus = (int)n;
		} else if ((v = opt_value(argc, argv, &i, "--partition"))) {
			o->partition = v;
		} else if ((v = opt_value(argc, argv, &i, "--time"))) {
			o->time = v;
		} else if ((v = opt_value(argc, argv, &i, "--out"))) {
			o->out = v;
		} else if (!strcmp(a, "--no-submit")) {
			o->submit = 0;
		} else if (!strcmp(a, "--no-merge")) {
			o->merge = 0;
		} else if (!strcmp(a, "--fresh")) {
			return cli_usage_error(CMD, "--fresh would restart preempted shards; use "
						    "another --out");
		} else {
			int at = i;
			if ((v = opt_value(argc, argv, &i, "--bank")))
				o->bank = v;
			else if ((v = opt_value(argc, argv, &i, "--tier"))) {
				o->tier = tier_of(v, &bad);
				if (bad)
					return cli_usage_error(CMD, "--tier: unknown tier '%s'", v);
			}
			for (int k = at; k <= i; k++)
				json_array_append_new(o->args, json_string(argv[k]));
		}
	}
	if (!o->track)
		return cli_usage_error(CMD, "--track is required (capability)");
	if (strcmp(o->track, "capability"))
		return cli_bad_input(CMD,
				     "only the capability track can be sharded in this "
				     "version, not '%s'",
				     o->track);
	if (!o->shards)
		return cli_usage_error(CMD, "--shards N is required");
	if (!o->out || !*o->out)
		return cli_usage_error(CMD, "--out OUT is required");
	return 0;
}

/* Shell single-quoting of s, appended to b. */
static void sh_quote(struct util_buf *b, const char *s)
{
	util_buf_putc(b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			util_buf_puts(b, "'\\''");
		else
			util_buf_putc(b, *s);
	util_buf_putc(b, '\'');
}

/* The plan of the run (new reference): the shards' tasks, and links
 * OUT/shard-i/bank/<path in bank> to each task folder. 0 or -1 with e. */
static int make_plan(const struct slurm_opts *o, const char *out_abs, const char *cwd,
		     json_t **plan, struct ka_err *e)
{
	const char *bank = o->bank ? o->bank : bank_default_path();
	char *bank_real = realpath(bank, NULL);
	struct bank_list tasks = {0};
	int rc = -1;
	*plan = NULL;
	if (!bank_real)
		return ka_err_set(e, "bank '%s': %s", bank, strerror(errno));
	if (shard_list_tasks(bank_real, o->tier, &tasks, e))
		goto out;
	if (tasks.n < o->shards) {
		ka_err_set(e, "--shards %d: the run has %d task%s (a shard is whole tasks)",
			   o->shards, tasks.n, tasks.n == 1 ? "" : "s");
		goto out;
	}
	json_t *shards = json_array();
	for (int s = 0; s < o->shards; s++)
		json_array_append_new(shards, json_pack("{s:s,s:[]}", "dir", "", "tasks"));
	size_t blen = strlen(bank_real);
	for (int i = 0; i < tasks.n; i++) {
		const char *rel = tasks.dirs[i] + blen;
		while (*rel == '/')
			rel++;
		json_array_append_new(
			json_object_get(json_array_get(shards, (size_t)(i % o->shards)), "tasks"),
			json_string(*rel ? rel : "."));
	}
	for (int s = 0; s < o->shards; s++) {
		char d[32];
		snprintf(d, sizeof d, "shard-%d", s);
		json_object_set_new(json_array_get(shards, (size_t)s), "dir", json_string(d));
	}
	*plan = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o*,s:O,s:o}", "schema", SHARD_SCHEMA, "track",
			  o->track, "out", out_abs, "cwd", cwd, "bank", bank_real, "tier",
			  o->tier ? json_string(o->tier) : json_null(), "args", o->args, "shards",
			  shards);
	rc = 0;
out:
	free(bank_real);
	bank_list_free(&tasks);
	return rc;
}

/* OUT/shard-i/bank with a link per task of the shard. 0 or -1 with e. */
static int make_links(const json_t *plan, struct ka_err *e)
{
	const char *bank = json_string_value(json_object_get(plan, "bank"));
	const json_t *shards = json_object_get(plan, "shards");
	for (size_t s = 0; s < json_array_size(shards); s++) {
		char *dir = shard_dir(plan, (int)s);
		const json_t *ts = json_object_get(json_array_get(shards, s), "tasks");
		int rc = 0;
		for (size_t t = 0; !rc && t < json_array_size(ts); t++) {
			const char *rel = json_string_value(json_array_get(ts, t));
			char *link = xasprintf("%s/bank/%s", dir, rel);
			char *target = xasprintf("%s/%s", bank, rel);
			char *parent = xstrdup(link);
			*strrchr(parent, '/') = 0;
			struct stat st;
			if (util_mkdirs(parent, e))
				rc = -1;
			else if (lstat(link, &st) && symlink(target, link))
				rc = ka_err_set(e, "%s: %s", link, strerror(errno));
			free(link);
			free(target);
			free(parent);
		}
		free(dir);
		if (rc)
			return -1;
	}
	return 0;
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* OUT/slurm.sbatch (the array) and OUT/merge.sbatch. 0 or -1 with e. */
static int write_scripts(const struct slurm_opts *o, const json_t *plan, struct ka_err *e)
{
	const char *out = json_string_value(json_object_get(plan, "out"));
	const char *cwd = json_string_value(json_object_get(plan, "cwd"));
	char *ka = xasprintf("%s/ka", util_exe_dir());
	struct util_buf a, m;
	util_buf_init(&a);
	util_buf_init(&m);
	util_buf_printf(
		&a,
		"#!/bin/bash\n# written by ka slurm: one array task a shard of %s/slurm.json\n"
		"#SBATCH --job-name=ka-%s\n#SBATCH --array=0-%zu\n"
		"#SBATCH --output=%s/shard-%%a/slurm-%%A_%%a.log\n#SBATCH --open-mode=append\n"
		"#SBATCH --chdir=%s\n#SBATCH --requeue\n#SBATCH --ntasks=1\n",
		out, o->track, json_array_size(json_object_get(plan, "shards")) - 1, out, cwd);
	util_buf_printf(&m,
			"#!/bin/bash\n# written by ka slurm: merge the shards of %s/slurm.json\n"
			"#SBATCH --job-name=ka-merge\n#SBATCH --output=%s/merge-%%j.log\n"
			"#SBATCH --chdir=%s\n#SBATCH --ntasks=1\n",
			out, out, cwd);
	if (o->partition) {
		util_buf_printf(&a, "#SBATCH --partition=%s\n", o->partition);
		util_buf_printf(&m, "#SBATCH --partition=%s\n", o->partition);
	}
	if (o->gpus)
		util_buf_printf(&a, "#SBATCH --gres=gpu:%d\n", o->gpus);
	if (o->time)
		util_buf_printf(&a, "#SBATCH --time=%s\n", o->time);
	util_buf_puts(&a, "exec ");
	sh_quote(&a, ka);
	util_buf_puts(&a, " shard ");
	util_buf_puts(&m, "exec ");
	sh_quote(&m, ka);
	util_buf_puts(&m, " merge ");
	char *plan_path = xasprintf("%s/slurm.json", out);
	sh_quote(&a, plan_path);
	sh_quote(&m, out);
	util_buf_puts(&a, " \"$SLURM_ARRAY_TASK_ID\"\n");
	util_buf_puts(&m, "\n");
	char *ap = xasprintf("%s/slurm.sbatch", out), *mp = xasprintf("%s/merge.sbatch", out);
	int rc = util_write_file(ap, a.s, a.len, e) || util_write_file(mp, m.s, m.len, e) ? -1 : 0;
	if (!rc && (chmod(ap, 0755) || chmod(mp, 0755)))
		rc = ka_err_set(e, "%s: %s", ap, strerror(errno));
	free(ap);
	free(mp);
	free(plan_path);
	free(ka);
	util_buf_free(&a);
	util_buf_free(&m);
	return rc;
}

/* Run sbatch --parsable with extra arguments and the script; the job id
 * into id. 0 or -1 with e (sbatch's own words). */
static int sbatch(const char *const *extra, int n_extra, const char *script, char *id, size_t cap,
		  struct ka_err *e)
{
	const char *prog = getenv("SBATCH") && *getenv("SBATCH") ? getenv("SBATCH") : "sbatch";
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)prog;
	argv[n++] = (char *)"--parsable";
	for (int i = 0; i < n_extra && n < 14; i++)
		argv[n++] = (char *)extra[i];
	argv[n++] = (char *)script;
	argv[n] = NULL;
	char *out = NULL;
	int rc = util_run(argv, NULL, 120, SBATCH_OUT_CAP, &out, NULL, NULL, e);
	if (rc < 0)
		return ka_err_set(e, "cannot run %s: %s", prog, e->msg);
	char *nl = out ? strchr(out, '\n') : NULL;
	if (nl)
		*nl = 0;
	if (rc != 0 || !out || !*out) {
		ka_err_set(e, "%s exited %d: %.300s", prog, rc, out ? out : "");
		free(out);
		return -1;
	}
	char *semi = strchr(out, ';'); /* "id;cluster" */
	if (semi)
		*semi = 0;
	snprintf(id, cap, "%s", out);
	free(out);
	return 0;
}

/* "1,3" for the shards without OUT/shard-i/DONE, into b; their count. */
static int pending_shards(const json_t *plan, struct util_buf *b)
{
	int n = 0;
	size_t ns = json_array_size(json_object_get(plan, "shards"));
	for (size_t s = 0; s < ns; s++) {
		char *dir = shard_dir(plan, (int)s), *done = xasprintf("%s/DONE", dir);
		if (!file_exists(done))
			util_buf_printf(b, "%s%zu", n++ ? "," : "", s);
		free(done);
		free(dir);
	}
	return n;
}

/* The plan on disk must be this one (same shards, options, bank): a run
 * started again is the same run. 0 (written when new) or an exit code. */
static int settle_plan(const json_t *plan, const char *out, struct ka_err *e)
{
	char *path = xasprintf("%s/slurm.json", out);
	char *text = json_dumps(plan, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc = 0;
	if (file_exists(path)) {
		json_t *old = json_load_file(path, 0, NULL);
		if (!old || !json_equal(old, (json_t *)plan)) {
			ka_err_set(e, "%s holds another sharded run; use another --out", path);
			rc = KA_EXIT_USAGE;
		}
		json_decref(old);
	} else if (util_mkdirs(out, e) || util_write_file(path, text, strlen(text), e)) {
		rc = KA_EXIT_FAIL;
	}
	free(text);
	free(path);
	return rc;
}

int cmd_slurm(int argc, char **argv)
{
	struct slurm_opts o = {0};
	json_t *plan = NULL;
	struct ka_err e;
	struct util_buf pending;
	util_buf_init(&pending);
	char cwd[PATH_MAX], *out_abs = NULL;
	int rc = parse(argc, argv, &o);
	if (rc)
		goto out;
	rc = KA_EXIT_USAGE;
	if (cli_check_outdir(CMD, "--out", o.out))
		goto out;
	if (!getcwd(cwd, sizeof cwd)) {
		rc = cli_fail(CMD, "getcwd: %s", strerror(errno));
		goto out;
	}
	out_abs = o.out[0] == '/' ? xstrdup(o.out) : xasprintf("%s/%s", cwd, o.out);
	if (make_plan(&o, out_abs, cwd, &plan, &e)) {
		rc = cli_bad_input(CMD, "%s", e.msg);
		goto out;
	}
	if ((rc = settle_plan(plan, out_abs, &e))) {
		rc == KA_EXIT_USAGE ? cli_bad_input(CMD, "%s", e.msg) : cli_fail(CMD, "%s", e.msg);
		goto out;
	}
	if (make_links(plan, &e) || write_scripts(&o, plan, &e)) {
		rc = cli_fail(CMD, "%s", e.msg);
		goto out;
	}
	int n_pending = pending_shards(plan, &pending);
	printf("%s/slurm.sbatch: %zu shards, %d to run%s%s\n", out_abs,
	       json_array_size(json_object_get(plan, "shards")), n_pending, n_pending ? ": " : "",
	       n_pending ? pending.s : "");
	if (!o.submit || !n_pending) {
		rc = KA_EXIT_OK;
		goto out;
	}
	char *array = xasprintf("--array=%s", pending.s);
	char *script = xasprintf("%s/slurm.sbatch", out_abs);
	char job[64], mjob[64];
	const char *extra[] = {array};
	if (sbatch(extra, 1, script, job, sizeof job, &e)) {
		rc = cli_fail(CMD, "%s", e.msg);
	} else {
		printf("submitted array job %s\n", job);
		rc = KA_EXIT_OK;
		if (o.merge) {
			char *dep = xasprintf("--dependency=afterok:%s", job);
			char *mscript = xasprintf("%s/merge.sbatch", out_abs);
			const char *mextra[] = {dep};
			if (sbatch(mextra, 1, mscript, mjob, sizeof mjob, &e))
				rc = cli_fail(CMD, "the merge job: %s", e.msg);
			else
				printf("submitted merge job %s (ka merge %s when every shard is "
				       "done)\n",
				       mjob, out_abs);
			free(dep);
			free(mscript);
		}
	}
	free(array);
	free(script);
out:
	util_buf_free(&pending);
	json_decref(o.args);
	json_decref(plan);
	free(out_abs);
	return rc < 0 ? KA_EXIT_OK : rc;
}

/* ---- ka shard PLAN I: one array task ------------------------------------------ */

int cmd_shard(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		puts("usage: ka shard OUT/slurm.json I\n\n"
		     "Array task I of a ka slurm run: the capability track over shard I's tasks\n"
		     "in OUT/shard-I (its own journal: started again, it continues), then\n"
		     "OUT/shard-I/DONE when every sample is graded. ka slurm writes the plan.\n\n"
		     "exit codes: those of ka --track.");
		return KA_EXIT_OK;
	}
	if (argc != 3)
		return cli_usage_error("shard", "PLAN and I are needed");
	int64_t idx;
	if (cli_opt_int("shard", "I", argv[2], 0, SHARD_MAX - 1, &idx))
		return KA_EXIT_USAGE;
	char *out = xstrdup(argv[1]);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(out, ".");
	json_t *plan = NULL;
	struct ka_err e;
	int rc = KA_EXIT_USAGE;
	char **av = NULL;
	char *dir = NULL, *bank = NULL, *ka = NULL;
	if (shard_plan_load(out, &plan, &e)) {
		cli_bad_input("shard", "%s", e.msg);
		goto out;
	}
	if ((size_t)idx >= json_array_size(json_object_get(plan, "shards"))) {
		cli_bad_input("shard", "%s: no shard %lld", argv[1], (long long)idx);
		goto out;
	}
	dir = shard_dir(plan, (int)idx);
	bank = xasprintf("%s/bank", dir);
	ka = xasprintf("%s/ka", util_exe_dir());
	const json_t *args = json_object_get(plan, "args");
	size_t na = json_array_size(args), n = 0;
	av = xcalloc(na + 10, sizeof *av);
	av[n++] = ka;
	av[n++] = (char *)"--track";
	av[n++] = (char *)json_string_value(json_object_get(plan, "track"));
	for (size_t i = 0; i < na; i++) {
		const char *a = json_string_value(json_array_get(args, i));
		/* the shard's bank replaces the run's */
		if (!strcmp(a, "--bank")) {
			i++;
			continue;
		}
		if (!strncmp(a, "--bank=", 7))
			continue;
		av[n++] = (char *)a;
	}
	av[n++] = (char *)"--bank";
	av[n++] = bank;
	av[n++] = (char *)"--out";
	av[n++] = dir;
	av[n] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		rc = cli_fail("shard", "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		execv(ka, av);
		fprintf(stderr, "ka shard: %s: %s\n", ka, strerror(errno));
		_exit(KA_EXIT_FAIL);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : KA_EXIT_FAIL;
	if (rc == KA_EXIT_OK) {
		char *done = xasprintf("%s/DONE", dir);
		if (util_write_file(done, "done\n", 5, &e))
			rc = cli_fail("shard", "%s", e.msg);
		free(done);
	}
out:
	free(av);
	free(dir);
	free(bank);
	free(ka);
	free(out);
	json_decref(plan);
	return rc;
}
