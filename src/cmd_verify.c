/* cmd_verify.c: `ka verify SCORECARD --bank HELDOUT`, the maintainer's
 * re-run of a submission on the held-out split. The submission's model spec
 * and settings (k, seed, target, tier, timing protocol) are read from its
 * scorecard and the capability track is run with them on HELDOUT
 * (--split heldout), then the row the capability board would add is printed
 * beside the submitted public figures. Settings a scorecard does not carry
 * (temperature, max tokens, prompt) take the track's defaults, and this is
 * said. Runs the track in this process (track.h); grades nothing itself. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"
#include "scorecard.h"
#include "track.h"
#include "util.h"

#define CMD "verify"

static void usage(FILE *f)
{
	fputs("usage: ka verify SCORECARD --bank HELDOUT [--out DIR] [--gpus LIST]\n"
	      "                 [--platform SUBSTR] [--fresh] [--quiet]\n\n"
	      "Re-runs a capability submission on the held-out split: the scorecard's model\n"
	      "spec, k, seed, target, tier and timing protocol, on the bank HELDOUT, into\n"
	      "DIR (default verify-out; a run started again continues from its journal).\n"
	      "Then prints the row the board would add (the held-out scorecard,\n"
	      "DIR/scorecard.json) beside the submitted public figures. Temperature, max\n"
	      "tokens and prompt are not in a scorecard: the track's defaults are used.\n\n"
	      "exit codes: 0 re-run done, 1 the re-run failed or is incomplete, 2 bad usage\n"
	      "or input.\n",
	      f);
}

/* The submission's settings from its scorecard into o. 0, or -1 with e. */
static int settings_from(const json_t *sc, struct capability_opts *o, struct ka_err *e)
{
	const json_t *model = json_object_get(sc, "model");
	if (strcmp(json_string_value(json_object_get(sc, "track")) ?: "", "capability"))
		return ka_err_set(e, "track: only capability scorecards can be re-run");
	o->model = json_string_value(json_object_get(model, "spec"));
	o->model_kind = json_string_value(json_object_get(model, "kind"));
	o->k = (int)json_integer_value(json_object_get(sc, "k"));
	o->seed = json_integer_value(json_object_get(sc, "seed"));
	o->target = json_string_value(json_object_get(sc, "target"));
	const json_t *p = json_object_get(sc, "protocol");
	const json_t *v;
	if (json_is_integer(v = json_object_get(p, "min_samples")))
		o->proto.min_samples = (int)json_integer_value(v);
	if (json_is_integer(v = json_object_get(p, "max_samples")))
		o->proto.max_samples = (int)json_integer_value(v);
	if (json_is_number(v = json_object_get(p, "max_seconds")))
		o->proto.max_seconds = json_number_value(v);
	if (json_is_number(v = json_object_get(p, "ci_target")))
		o->proto.ci_target = json_number_value(v);
	/* The tier: the one all submitted tasks share, else all. Timing: off
	 * when no ok sample was timed (a --no-timing run). */
	const json_t *tasks = json_object_get(sc, "tasks");
	const char *tier = NULL;
	int one_tier = 1, ok = 0, timed = 0;
	size_t i, s;
	const json_t *t, *smp;
	json_array_foreach(tasks, i, t)
	{
		const char *tt = json_string_value(json_object_get(t, "tier"));
		if (tier && tt && strcmp(tier, tt))
			one_tier = 0;
		tier = tier ? tier : tt;
		json_array_foreach(json_object_get(t, "samples"), s, smp)
		{
			if (strcmp(json_string_value(json_object_get(smp, "verdict")) ?: "", "ok"))
				continue;
			ok++;
			timed += !json_is_null(json_object_get(smp, "speedup_eager"));
		}
	}
	o->tier = one_tier ? tier : NULL;
	if (ok && !timed)
		o->proto.timing = 0;
	if (!o->model || !o->target || o->k < 1)
		return ka_err_set(e, "model.spec, target or k missing");
	return 0;
}

/* One line of the side by side table: an aggregate figure of both. */
static void row_fig(const char *label, const json_t *a, const json_t *b, const char *key)
{
	char sa[64] = "n/a", sb[64] = "n/a";
	struct metrics_figure f;
	scorecard_figure_get(json_object_get(a, key), &f);
	if (f.defined)
		snprintf(sa, sizeof sa, "%.3f [%.3f, %.3f]", f.value, f.lo, f.hi);
	scorecard_figure_get(json_object_get(b, key), &f);
	if (f.defined)
		snprintf(sb, sizeof sb, "%.3f [%.3f, %.3f]", f.value, f.lo, f.hi);
	printf("  %-18s %-26s %s\n", label, sa, sb);
}

static void row_text(const char *label, const char *a, const char *b)
{
	printf("  %-18s %-26.26s %s\n", label, a ? a : "-", b ? b : "-");
}

/* The capability board's row of the held-out run beside the submission's. */
static void print_side_by_side(const json_t *pub, const json_t *held)
{
	const json_t *ap = json_object_get(json_object_get(pub, "aggregates"), "overall");
	const json_t *ah = json_object_get(json_object_get(held, "aggregates"), "overall");
	const json_t *bp = json_object_get(pub, "bank"), *bh = json_object_get(held, "bank");
	char cp[64], ch[64];
	printf("  %-18s %-26s %s\n", "", "submitted", "held-out re-run (the board's row)");
	row_text("model", json_string_value(json_object_get(json_object_get(pub, "model"), "name")),
		 json_string_value(json_object_get(json_object_get(held, "model"), "name")));
	row_text("kind", json_string_value(json_object_get(json_object_get(pub, "model"), "kind")),
		 json_string_value(json_object_get(json_object_get(held, "model"), "kind")));
	snprintf(cp, sizeof cp, "%s %s", json_string_value(json_object_get(bp, "split")) ?: "?",
		 json_string_value(json_object_get(bp, "hash")) ?: "?");
	snprintf(ch, sizeof ch, "%s %s", json_string_value(json_object_get(bh, "split")) ?: "?",
		 json_string_value(json_object_get(bh, "hash")) ?: "?");
	row_text("bank", cp, ch);
	int tp, sp, th, sh;
	scorecard_counts(pub, &tp, &sp);
	scorecard_counts(held, &th, &sh);
	snprintf(cp, sizeof cp, "%d / %d", tp, sp);
	snprintf(ch, sizeof ch, "%d / %d", th, sh);
	row_text("tasks / samples", cp, ch);
	row_fig("correct", ap, ah, "correct");
	row_fig("fast", ap, ah, "fast");
	row_fig("mean C", ap, ah, "mean_c");
	row_fig("fast vs compiled", ap, ah, "fast_compiled");
	row_fig("pass@k", ap, ah, "pass_at_k");
	row_fig("speedup (geomean)", ap, ah, "geomean_speedup");
	const json_t *dp = json_object_get(pub, "device"), *dh = json_object_get(held, "device");
	snprintf(cp, sizeof cp, "%s%s", json_string_value(json_object_get(dp, "name")) ?: "?",
		 json_is_true(json_object_get(dp, "test_grade")) ? " [test-grade]" : "");
	snprintf(ch, sizeof ch, "%s%s", json_string_value(json_object_get(dh, "name")) ?: "?",
		 json_is_true(json_object_get(dh, "test_grade")) ? " [test-grade]" : "");
	row_text("device", cp, ch);
}

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{"bank", required_argument, 0, 'b'}, {"out", required_argument, 0, 'o'},
		{"gpus", required_argument, 0, 'g'}, {"platform", required_argument, 0, 'P'},
		{"fresh", no_argument, 0, 'F'},	     {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},	     {0, 0, 0, 0},
	};
	struct capability_opts o;
	capability_opts_default(&o);
	o.out = "verify-out";
	o.split = "heldout";
	const char *bank = NULL;
	int c, quiet = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return KA_EXIT_OK;
		case 'b': bank = optarg; break;
		case 'o': o.out = optarg; break;
		case 'g': o.gpus = optarg; break;
		case 'P': o.platform = optarg; break;
		case 'F': o.fresh = 1; break;
		case 'q': quiet = 1; break;
		default: return cli_bad_option(CMD, c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(CMD, "one SCORECARD is needed");
	if (!bank)
		return cli_usage_error(CMD, "--bank HELDOUT is needed");
	if (cli_check_input(CMD, argv[optind], 0) || cli_check_input(CMD, bank, 1) ||
	    cli_check_outdir(CMD, "--out", o.out))
		return KA_EXIT_USAGE;
	struct ka_err e;
	json_t *pub = scorecard_check_file(argv[optind], &e), *held = NULL;
	int rc = KA_EXIT_USAGE;
	if (!pub) {
		cli_bad_input(CMD, "%s", e.msg);
		goto out;
	}
	if (settings_from(pub, &o, &e)) {
		cli_bad_input(CMD, "%s: %s", argv[optind], e.msg);
		goto out;
	}
	o.bank = bank;
	o.quiet = 1;
	fprintf(stderr,
		"ka verify: re-running %s on %s (held-out): k %d, seed %lld, target %s, tier %s; "
		"temperature, max tokens and prompt: the track's defaults\n",
		o.model, bank, o.k, (long long)o.seed, o.target, o.tier ? o.tier : "all");
	rc = track_capability_run(&o);
	if (rc != KA_EXIT_OK)
		goto out;
	char *path = xasprintf("%s/scorecard.json", o.out);
	held = scorecard_check_file(path, &e);
	free(path);
	if (!held) {
		rc = cli_fail(CMD, "%s", e.msg);
		goto out;
	}
	if (!quiet)
		print_side_by_side(pub, held);
out:
	json_decref(pub);
	json_decref(held);
	return rc;
}
