/* cmd_scorecard.c: `ka scorecard check FILE...`: validate scorecards against
 * "ka-scorecard/1" and recompute what they derive (see scorecard.h). Prints
 * one line per file; does not modify anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scorecard.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ka scorecard check FILE...\n"
		"       ka scorecard recompute IN -o OUT\n\n"
		"Validates each scorecard.json against schema %s or %s\n"
		"(docs/scorecard.md):\n"
		"structure, types, enums, ranges and counts, then recomputes every\n"
		"sample score, the aggregates and the RSI summary from the per-sample\n"
		"and per-round results. Prints one line per file:\n"
		"  FILE: ok (schema S, track T, N tasks, M samples)\n"
		"  FILE: field.path: problem            (the first problem found)\n\n"
		"recompute (a tool for track authors and fixtures) rewrites every sample's\n"
		"score and the aggregates of IN from its per-sample results, checks the\n"
		"result and writes it to OUT.\n\n"
		"exit codes: 0 every file is valid, 2 bad usage or a bad scorecard.\n",
		SCORECARD_SCHEMA, SCORECARD_SCHEMA_2);
}

/* ka scorecard recompute IN -o OUT */
static int recompute(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[3], "-o"))
		return cli_usage_error("scorecard", "recompute needs IN -o OUT");
	struct ka_err e;
	json_t *sc = scorecard_load(argv[2], &e);
	if (!sc) {
		printf("%s\n", e.msg);
		return KA_EXIT_USAGE;
	}
	json_t *tasks = json_object_get(sc, "tasks");
	if (json_is_array(tasks)) {
		/* Scores first (from the verdict and eager speedup of each sample),
		 * then the aggregates: both through the same code as the check. */
		size_t i, j;
		json_t *t, *s;
		json_array_foreach(tasks, i, t)
		{
			json_array_foreach(json_object_get(t, "samples"), j, s)
			{
				struct metrics_sample ms = {0};
				const char *vd = json_string_value(json_object_get(s, "verdict"));
				json_t *sp = json_object_get(s, "speedup_eager");
				ms.ok = vd && !strcmp(vd, "ok");
				if (json_is_object(sp)) {
					ms.eager.present = 1;
					ms.eager.median =
						json_number_value(json_object_get(sp, "median"));
					ms.eager.lo = json_number_value(json_object_get(sp, "lo"));
				}
				json_object_set_new(s, "score",
						    json_real(metrics_sample_score(&ms)));
			}
		}
		/* The metrics bridge tolerates any shape; validation follows. */
		struct scorecard_metrics m;
		scorecard_metrics_from_json(sc, &m);
		json_object_set_new(sc, "aggregates",
				    scorecard_aggregates_json(
					    m.tasks, m.n_tasks,
					    (int)json_integer_value(json_object_get(sc, "k"))));
		scorecard_metrics_free(&m);
	}
	if (scorecard_validate(sc, argv[2], &e) || scorecard_recompute(sc, argv[2], &e)) {
		printf("%s\n", e.msg);
		json_decref(sc);
		return KA_EXIT_USAGE;
	}
	char *text = json_dumps(sc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(sc);
	int rc = util_write_file(argv[4], text, strlen(text), &e);
	free(text);
	if (rc)
		return cli_fail("scorecard", "%s", e.msg);
	printf("%s: written\n", argv[4]);
	return KA_EXIT_OK;
}

int cmd_scorecard(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	if (argc < 2)
		return cli_usage_error("scorecard", "missing action (check)");
	if (!strcmp(argv[1], "recompute"))
		return recompute(argc, argv);
	if (strcmp(argv[1], "check"))
		return cli_usage_error("scorecard", "unknown action '%s'", argv[1]);
	if (argc < 3)
		return cli_usage_error("scorecard", "check: missing FILE");
	int rc = KA_EXIT_OK;
	for (int i = 2; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("scorecard", "unknown option '%s'", argv[i]);
	}
	for (int i = 2; i < argc; i++) {
		struct ka_err e;
		json_t *sc = scorecard_check_file(argv[i], &e);
		if (!sc) {
			printf("%s\n", e.msg);
			rc = KA_EXIT_USAGE;
			continue;
		}
		int nt, ns;
		scorecard_counts(sc, &nt, &ns);
		printf("%s: ok (schema %s, track %s, %d tasks, %d samples)\n", argv[i],
		       scorecard_schema_of(sc), json_string_value(json_object_get(sc, "track")), nt,
		       ns);
		json_decref(sc);
	}
	return rc;
}
