/* procrun.h: what the procedure track and the controls track share: the
 * train and held-out tasks with their solver prompts, the model, one grade
 * session, the output folder and its journal, and procrun_unit, which runs
 * one procedure on one task as a journaled unit (round.h): its model calls
 * replayed from the journal when it is run again, its submission graded
 * once, its outcome journaled. Internal to src/tracks. */
#ifndef KA_PROCRUN_H
#define KA_PROCRUN_H

#include <jansson.h>
#include <stdio.h>

#include "grade.h"
#include "model.h"
#include "procedure.h"
#include "round.h"
#include "rundir.h"
#include "track.h"

struct procrun_split {
	struct ka_task **t;
	char **prompts; /* the standard solver prompt of each task */
	int n;
};

struct procrun {
	const struct procedure_opts *o;
	const char *label; /* "procedure" / "controls" */
	const char *target;
	char *bank_real;    /* --bank, or --train when two banks */
	char *heldout_real; /* --heldout, NULL with one bank */
	char bank_hash[17]; /* of both banks when two */
	int bank_n;
	struct procrun_split train, heldout;
	struct model *m;
	struct grade_session *gs;
	struct rundir d;
	int start_id;
	struct round_budget per_solve; /* the allowance of one solve */
	int sent;		       /* model requests sent by this process */
};

/* "ka --track LABEL: ..." on stderr. */
void procrun_fail(const struct procrun *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Step 1 (before OUT is touched): target, tasks and split (disjoint), the
 * model. 0 or -1 (reported). */
int procrun_prepare(struct procrun *r, const struct procedure_opts *o, const char *label);

/* The identity of the run as JSON (new reference): every argument that
 * decides results; the track adds its own keys before procrun_open. */
json_t *procrun_identity(const struct procrun *r);

/* Step 2: the output folder for identity args, the journal start, the grade
 * session. Returns an exit code (0 ok), reported. */
int procrun_open(struct procrun *r, json_t *args);

void procrun_free(struct procrun *r);

/* Run p on task i of split s as unit key (sample numbers offset by salt),
 * with archive a (n_a entries). A finished unit's journaled outcome is
 * returned as it is; else the procedure runs (journaled replies replayed),
 * its submission graded when grade is set, and the outcome journaled:
 * {"task", "status", "why", "submitted", "verdict", "ok", "score", "phase",
 *  "detail", "requests", "checks", "tokens", "code"}. The box's log goes to
 * OUT/logs/. 0 with *out (new reference), -1 with e (journal, grader). */
int procrun_unit(struct procrun *r, const char *key, int salt, const struct procedure *p,
		 const struct procrun_split *s, int i, const struct procedure_archive_entry *a,
		 int n_a, int grade, json_t **out, struct ka_err *e);

/* The scorecard's top-level fields every procedure-track scorecard has:
 * schema, track, created, ka_version, model, bank, k (1), seed, target,
 * device, protocol (new reference). */
json_t *procrun_scorecard_base(const struct procrun *r, const char *track);

/* Write sc to OUT/scorecard.json. 0 or -1 (reported). */
int procrun_write_scorecard(const struct procrun *r, const json_t *sc, char **path);

/* A unit outcome's budget use. */
void procrun_used(const json_t *outcome, struct round_budget *b);

/* "name" of the model (the part of the spec a board shows). */
const char *procrun_model_name(const char *spec, char *buf, size_t cap);

#endif
