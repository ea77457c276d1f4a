/* verdict.h: what can happen to a candidate. Every failure of a candidate is
 * one of these, with evidence; none of them is an error of ka. The order is
 * the order of the grading pipeline (an earlier stage's verdict wins). */
#ifndef KA_VERDICT_H
#define KA_VERDICT_H

enum verdict {
	VERDICT_OK,
	VERDICT_NO_CODE,	     /* the reply held no kernel source */
	VERDICT_COMPILE_ERROR,	     /* the compiler rejected it (log kept) */
	VERDICT_FORBIDDEN,	     /* policy: include, symbol, syscall */
	VERDICT_RECORD_ERROR,	     /* host code called an unsupported API */
	VERDICT_LAUNCH_ERROR,	     /* launch invalid, nothing launched, nonzero return */
	VERDICT_RUNTIME_FAULT,	     /* crash in host code or on the device */
	VERDICT_TIMEOUT,	     /* host code or a kernel did not finish */
	VERDICT_WRONG_ANSWER,	     /* outside tolerance (first mismatches kept) */
	VERDICT_NONFINITE,	     /* NaN/Inf where gold is finite */
	VERDICT_UNWRITTEN_OUTPUT,    /* output elements left as the poison */
	VERDICT_INPUT_MODIFIED,	     /* an input's bytes changed */
	VERDICT_OUT_OF_BOUNDS_WRITE, /* a canary around a buffer changed */
	VERDICT_IMPLAUSIBLE_TIME,    /* timing cross-checks failed */
	VERDICT_COUNT
};

/* The names in enum order ("ok", "no_code", ...: the scorecard's spelling),
 * NULL after the last: the only list of them. */
extern const char *const verdict_table[VERDICT_COUNT + 1];

/* The name of v ("unknown" when v is out of range). */
const char *verdict_name(enum verdict v);

/* Parse a verdict name; -1 if unknown. */
int verdict_parse(const char *name);

#endif
