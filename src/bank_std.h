/* bank_std.h: difficulty-standardized banks (docs/bank.md, "Standardized
 * banks"). `ka bank standardize` samples a frozen anchor model k times on
 * every task of a bank through the capability track (the normal sampler and
 * grader, journaled and resumable), keeps the tasks whose anchor pass rate
 * lies in a band (hard but learnable), and writes them as a new bank folder
 * with OUT/standardized.json: the anchor, the band, and the anchor's figures
 * per task and over the kept tasks. The weight-RSI track reads that file
 * when its bank is standardized and carries it into the scorecard, which is
 * what the standardized board shows. */
#ifndef KA_BANK_STD_H
#define KA_BANK_STD_H

#include <jansson.h>

#include "grade.h"
#include "util.h"

#define BANK_STD_FORMAT "ka-std-bank/1"
#define BANK_STD_FILE "standardized.json"

/* Settings of `ka bank standardize`; strings are borrowed. */
struct bank_std_opts {
	const char *bank;   /* source bank folder, required */
	const char *out;    /* the standardized bank folder to write, required */
	const char *anchor; /* model spec of the anchor (docs/models.md), required */
	const char *scale;  /* small, mid, large */
	const char *work;   /* the anchor's capability run, default OUT.anchor */
	const char *tier, *target, *platform, *prompt;
	int k;		 /* samples per task, default BANK_STD_K */
	int band_set;	 /* band given (else the scale's default) */
	double lo, hi;	 /* pass-rate band, inclusive */
	int concurrency; /* model requests in flight */
	double temperature;
	int max_tokens;
	int64_t seed;
	int fresh, quiet;
	struct grade_protocol proto;
};

#define BANK_STD_K 8

/* Defaults: k, the scale small, no band (the scale's), the capability
 * track's sampling and grading settings. */
void bank_std_opts_default(struct bank_std_opts *o);

/* The default pass-rate band of scale ("small", "mid", "large") in lo, hi.
 * 0, or -1 for an unknown scale. */
int bank_std_default_band(const char *scale, double *lo, double *hi);

/* Run `ka bank standardize`: the anchor's capability run in o->work (the
 * same command continues a killed run), then OUT written whole (a folder
 * holding a previous standardized.json is replaced; any other existing OUT
 * is refused). Prints a summary on stdout. Returns an exit code: 0 done,
 * 1 the anchor run did not finish or OUT could not be written, 2 bad usage
 * or input. */
int bank_std_run(const struct bank_std_opts *o);

/* What the weight-RSI track needs of a standardized bank. */
struct bank_std_info {
	char scale[8];
	char anchor[1025];
	char baseline[16]; /* what the anchor's C was scored against */
	char hash[17];	   /* content hash of the standardized bank (bank.h) */
	int k, n_tasks, n_source;
	double lo, hi;
	double pass_rate, c; /* anchor means over the kept tasks; c < 0: none */
	double compiled_x;   /* anchor geomean speedup vs compiled; <= 0: none */
	char compiled_x_reason[256];
};

/* Read bank_dir/standardized.json. 0 with out filled, 1 when bank_dir has
 * none (not a standardized bank), -1 with e naming the file and the field
 * (unreadable, not JSON, another format, a field missing or out of range). */
int bank_std_read(const char *bank_dir, struct bank_std_info *out, struct ka_err *e);

/* The scorecard's summary.standardized for s (new reference; schema
 * ka-scorecard/2, docs/scorecard.md). */
json_t *bank_std_summary_json(const struct bank_std_info *s);

#endif
