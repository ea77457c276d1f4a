/* cmd_gold.c: `ka gold --task DIR [--shape S] [--seed N] -o OUTDIR [--inputs]`
 * writes a task's gold outputs (float64) as OUTDIR/<output>.npy, and with
 * --inputs the generated inputs in their dtype as OUTDIR/<input>.npy. The
 * inputs are those of nonce = seed: input k has key
 * gen_tensor_key(seed, task_hash, shape, k, 0). Bad input (task, shape) is
 * one line and exit 2 with nothing written. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "cli.h"
#include "gold.h"
#include "npy.h"
#include "task.h"
#include "util.h"

#define GOLD_CMD_CAP_BYTES ((size_t)8 << 30) /* per tensor */

static const char gold_usage[] =
	"usage: ka gold --task DIR [--shape \"N=1031\"] [--seed S] -o OUTDIR [--inputs]\n"
	"\n"
	"Compute a task's gold outputs on the CPU (its ref.c compiled as C, fp64)\n"
	"and write OUTDIR/<output>.npy (float64, the output's shape).\n"
	"\n"
	"  --task DIR     the task folder (task.json + ref.c)\n"
	"  --shape S      parameter values, all of them: \"M=128,N=1031\"\n"
	"                 (default: the task's first check shape)\n"
	"  --seed S       input seed, an unsigned 64-bit integer (default 1)\n"
	"  -o OUTDIR      output folder (created if missing)\n"
	"  --inputs       also write the generated inputs, OUTDIR/<input>.npy, in\n"
	"                 their dtype (bf16 as '<u2' raw bits)\n"
	"\n"
	"exit codes: 0 ok; 1 could not write; 2 bad usage or bad input (task,\n"
	"shape, a reference that does not compile).\n";

/* Write one tensor, at shape sh, as OUTDIR/<name>.npy and print its path;
 * 0 or -1 with e. */
static int write_tensor(const char *outdir, const struct ka_tensor_spec *s,
			const struct ka_shape *sh, enum ka_dtype dt, const void *data,
			struct ka_err *e)
{
	int64_t dims[KA_MAX_DIMS];
	for (int d = 0; d < s->ndim; d++)
		expr_eval(s->shape[d], sh->v, &dims[d], NULL);
	char *path = xasprintf("%s/%s.npy", outdir, s->name);
	int w = npy_write(path, dt, s->ndim, dims, data, e);
	if (w == 0)
		printf("%s\n", path);
	free(path);
	return w;
}

int cmd_gold(int argc, char **argv)
{
	static const struct option opts[] = {{"task", required_argument, NULL, 't'},
					     {"shape", required_argument, NULL, 's'},
					     {"seed", required_argument, NULL, 'S'},
					     {"out", required_argument, NULL, 'o'},
					     {"inputs", no_argument, NULL, 'i'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	if (cli_wants_help(argc, argv)) {
		fputs(gold_usage, stdout);
		return KA_EXIT_OK;
	}
	const char *task_dir = NULL, *shape_text = NULL, *outdir = NULL, *seed_text = NULL;
	int with_inputs = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:s:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': task_dir = optarg; break;
		case 's': shape_text = optarg; break;
		case 'S': seed_text = optarg; break;
		case 'o': outdir = optarg; break;
		case 'i': with_inputs = 1; break;
		default: return cli_bad_option("gold", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("gold", "unexpected argument '%s'", argv[optind]);
	if (!task_dir)
		return cli_usage_error("gold", "missing --task DIR");
	if (!outdir)
		return cli_usage_error("gold", "missing -o OUTDIR");
	uint64_t seed = 1;
	if (seed_text && cli_opt_u64("gold", "--seed", seed_text, &seed))
		return KA_EXIT_USAGE;

	if (cli_check_outdir("gold", "-o", outdir))
		return KA_EXIT_USAGE;

	struct ka_err e;
	struct ka_task *t = task_load(task_dir, &e);
	if (!t)
		return cli_bad_input("gold", "%s", e.msg);
	bank_trust(t); /* the operator named it */
	int rc = KA_EXIT_USAGE;
	struct gold *g = NULL;
	void *in[KA_MAX_TENSORS] = {0};
	double *out[KA_MAX_TENSORS] = {0};
	struct ka_shape sh = t->checks[0];
	if (shape_text && task_shape_parse(t, shape_text, &sh, &e)) {
		rc = cli_bad_input("gold", "--shape: %s", e.msg);
		goto done;
	}
	if (task_check_shape(t, &sh, 0, &e)) {
		char s[256];
		task_shape_str(t, &sh, s, sizeof s);
		rc = cli_bad_input("gold", "%s/task.json: %s at --shape %s", t->dir, e.msg, s);
		goto done;
	}
	if (!(g = gold_open(t, &e))) {
		rc = cli_bad_input("gold", "%s", e.msg);
		goto done;
	}
	if (gold_inputs_new(t, &sh, seed, 0, GOLD_CMD_CAP_BYTES, in, &e) ||
	    gold_outputs_new(t, &sh, GOLD_CMD_CAP_BYTES, out, &e)) {
		rc = cli_bad_input("gold", "%s", e.msg);
		goto done;
	}
	if (gold_compute(g, &sh, in, out, NULL, 0, &e)) {
		rc = cli_fail("gold", "%s", e.msg);
		goto done;
	}
	if (util_mkdirs(outdir, &e)) {
		rc = cli_fail("gold", "%s", e.msg);
		goto done;
	}
	for (int j = 0; j < t->n_outputs; j++)
		if (write_tensor(outdir, &t->outputs[j], &sh, KA_DTYPE_FP64, out[j], &e)) {
			rc = cli_fail("gold", "%s", e.msg);
			goto done;
		}
	for (int k = 0; with_inputs && k < t->n_inputs; k++)
		if (write_tensor(outdir, &t->inputs[k], &sh, t->inputs[k].dtype, in[k], &e)) {
			rc = cli_fail("gold", "%s", e.msg);
			goto done;
		}
	rc = KA_EXIT_OK;
done:
	gold_buffers_free(in, t->n_inputs);
	gold_buffers_free((void **)out, t->n_outputs);
	gold_close(g);
	task_free(t);
	return rc;
}
