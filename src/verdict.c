/* verdict.c: verdict names (see verdict.h). */
#include "verdict.h"

#include <string.h>

static const char *const names[VERDICT_COUNT] = {
	"ok",
	"no_code",
	"compile_error",
	"forbidden",
	"record_error",
	"launch_error",
	"runtime_fault",
	"timeout",
	"wrong_answer",
	"nonfinite",
	"unwritten_output",
	"input_modified",
	"out_of_bounds_write",
	"implausible_time",
};

const char *verdict_name(enum verdict v)
{
	return (unsigned)v < VERDICT_COUNT ? names[v] : "unknown";
}

int verdict_parse(const char *name)
{
	for (int i = 0; name && i < VERDICT_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}
