/* cmd_submit.c: `ka submit check SCORECARD`: check a scorecard for a
 * leaderboard submission and print what maintainers need to re-run it on
 * the held-out split. The flow (docs/board.md): a user runs ka on the public
 * split and opens a model submission issue with the scorecard; maintainers
 * re-run on held-out and add the row. This command never sends anything. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank.h"
#include "cli.h"
#include "scorecard.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ka submit check SCORECARD [--bank PATH] [--maintainer]\n\n"
		   "Checks a scorecard for a leaderboard submission:\n"
		   "  schema      the scorecard passes `ka scorecard check` (structure, and every\n"
		   "              score and aggregate recomputed from the per-sample results)\n"
		   "  split       a submission is scored on the public split; a held-out\n"
		   "              scorecard from a submitter is flagged (--maintainer: expected)\n"
		   "  bank        bank.hash equals the content hash of the public bank at PATH\n"
		   "              (default: the checkout's bank/public)\n"
		   "then prints what maintainers need: model spec, track, k, seed, target,\n"
		   "device, bank hash and the command that re-runs it on the held-out split.\n\n"
		   "exit codes: 0 ready to submit (warnings allowed), 1 the bank hash does not\n"
		   "match, 2 bad usage or a bad scorecard.\n");
}

/* s as one shell word in single quotes. */
static void print_quoted(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

static const char *jstr(const json_t *o, const char *a, const char *b)
{
	const json_t *j = json_object_get(o, a);
	if (b)
		j = json_object_get(j, b);
	const char *s = json_string_value(j);
	return s ? s : "";
}

static long long jint(const json_t *o, const char *a, const char *b)
{
	const json_t *j = json_object_get(o, a);
	if (b)
		j = json_object_get(j, b);
	return (long long)json_integer_value(j);
}

int cmd_submit(int argc, char **argv)
{
	static const struct option opts[] = {{"bank", required_argument, 0, 'b'},
					     {"maintainer", no_argument, 0, 'm'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return KA_EXIT_OK;
	}
	if (argc < 2)
		return cli_usage_error("submit", "missing action (check)");
	if (strcmp(argv[1], "check"))
		return cli_usage_error("submit", "unknown action '%s'", argv[1]);
	const char *bank = NULL;
	int maintainer = 0, c;
	optind = 1;
	opterr = 0;
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, ":b:mh", opts, NULL)) != -1) {
		switch (c) {
		case 'b': bank = optarg; break;
		case 'm': maintainer = 1; break;
		default: return cli_bad_option("submit", c, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("submit", "check needs exactly one SCORECARD");
	const char *file = argv[optind];
	if (bank && cli_check_input("submit", bank, 1))
		return KA_EXIT_USAGE; /* a bank named by the user must be there */
	if (!bank)
		bank = bank_default_path();

	struct ka_err e;
	json_t *sc = scorecard_check_file(file, &e);
	if (!sc) {
		printf("%s\n", e.msg);
		return KA_EXIT_USAGE;
	}
	int nt, ns, rc = KA_EXIT_OK;
	scorecard_counts(sc, &nt, &ns);
	printf("%s: ok (schema %s, track %s, %d tasks, %d samples, aggregates recomputed)\n", file,
	       scorecard_schema_of(sc), jstr(sc, "track", NULL), nt, ns);

	const char *split = jstr(sc, "bank", "split");
	int heldout = !strcmp(split, "heldout");
	if (heldout && !maintainer)
		printf("warning: split is heldout: only maintainers score the held-out split, "
		       "which "
		       "is never released; a held-out scorecard from a submitter is suspicious\n");
	else
		printf("split: %s%s\n", split,
		       heldout ? " (maintainer run)" : " (maintainers re-run it on held-out)");

	const char *claimed = jstr(sc, "bank", "hash");
	char have[17];
	int bank_n = 0;
	struct ka_err be;
	if (heldout) {
		printf("bank hash: %s (held-out bank: not compared with the public bank)\n",
		       claimed);
	} else if (bank_content_hash_hex(bank, have, &bank_n, &be)) {
		printf("bank hash: %s (not verified: %s; maintainers compare it by hand)\n",
		       claimed, be.msg);
	} else if (strcmp(have, claimed)) {
		printf("bank hash: %s does not match the public bank at %s (%d tasks, hash %s): "
		       "the "
		       "run used another or a modified bank\n",
		       claimed, bank, bank_n, have);
		rc = KA_EXIT_FAIL;
	} else {
		printf("bank hash: %s matches the public bank at %s (%d tasks)\n", claimed, bank,
		       bank_n);
	}

	printf("\nfor maintainers:\n");
	printf("  model:   %s (%s, %s%s%s)\n", jstr(sc, "model", "spec"), jstr(sc, "model", "name"),
	       jstr(sc, "model", "kind"), *jstr(sc, "model", "family") ? ", " : "",
	       jstr(sc, "model", "family"));
	if (json_object_get(sc, "trainee"))
		printf("  trainee: %s (%s)\n", jstr(sc, "trainee", "spec"),
		       jstr(sc, "trainee", "name"));
	printf("  track:   %s\n", jstr(sc, "track", NULL));
	printf("  k:       %lld\n", jint(sc, "k", NULL));
	printf("  seed:    %lld\n", jint(sc, "seed", NULL));
	printf("  target:  %s\n", jstr(sc, "target", NULL));
	printf("  device:  %s (driver %s, %s%s)\n", jstr(sc, "device", "name"),
	       jstr(sc, "device", "driver"), jstr(sc, "device", "runtime"),
	       json_is_true(json_object_get(json_object_get(sc, "device"), "test_grade"))
		       ? ", test grade"
		       : "");
	printf("  bank:    %s (%s split, %lld tasks, hash %s)\n", jstr(sc, "bank", "name"), split,
	       jint(sc, "bank", "n_tasks"), claimed);
	printf("  ka:      %s, created %s\n", jstr(sc, "ka_version", NULL),
	       jstr(sc, "created", NULL));
	printf("  re-run:  ka --track %s --api-model ", jstr(sc, "track", NULL));
	print_quoted(jstr(sc, "model", "spec"));
	printf(" --k %lld --bank <HELDOUT> --target %s\n", jint(sc, "k", NULL),
	       jstr(sc, "target", NULL));
	json_decref(sc);
	return rc;
}
