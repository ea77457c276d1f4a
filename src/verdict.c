/* verdict.c: the one table of verdict names (see verdict.h). Indexed by the
 * enum, so the names cannot drift from its order; every other listing of
 * verdicts (the scorecard's, the runner client's) derives from it. */
#include "verdict.h"

#include <string.h>

const char *const verdict_table[VERDICT_COUNT + 1] = {
	[VERDICT_OK] = "ok",
	[VERDICT_NO_CODE] = "no_code",
	[VERDICT_COMPILE_ERROR] = "compile_error",
	[VERDICT_FORBIDDEN] = "forbidden",
	[VERDICT_RECORD_ERROR] = "record_error",
	[VERDICT_LAUNCH_ERROR] = "launch_error",
	[VERDICT_RUNTIME_FAULT] = "runtime_fault",
	[VERDICT_TIMEOUT] = "timeout",
	[VERDICT_WRONG_ANSWER] = "wrong_answer",
	[VERDICT_NONFINITE] = "nonfinite",
	[VERDICT_UNWRITTEN_OUTPUT] = "unwritten_output",
	[VERDICT_INPUT_MODIFIED] = "input_modified",
	[VERDICT_OUT_OF_BOUNDS_WRITE] = "out_of_bounds_write",
	[VERDICT_IMPLAUSIBLE_TIME] = "implausible_time",
	[VERDICT_COUNT] = NULL,
};

const char *verdict_name(enum verdict v)
{
	return (unsigned)v < VERDICT_COUNT ? verdict_table[v] : "unknown";
}

int verdict_parse(const char *name)
{
	for (int i = 0; name && i < VERDICT_COUNT; i++)
		if (!strcmp(name, verdict_table[i]))
			return i;
	return -1;
}
