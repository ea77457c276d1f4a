/* libc_allow.c: the libc/libm allow-list table (see libc_allow.h). Anything
 * not on it that a candidate imports (fopen, socket, fork, system, dlopen,
 * getenv, pthread_create, syscall, time, ...) is forbidden. */
#include "libc_allow.h"

#include <string.h>

/* grouped by kind, several names to a line */
/* clang-format off */
static const char *const libc_allowed[] = {
	/* memory and strings */
	"memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp",
	"strcpy", "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr", "strspn",
	"strcspn", "strdup", "strndup", "stpcpy",
	/* the same, as _FORTIFY_SOURCE emits them */
	"__memcpy_chk", "__memmove_chk", "__memset_chk", "__strcpy_chk", "__strncpy_chk",
	"__strcat_chk", "__strncat_chk", "__stpcpy_chk", "__snprintf_chk", "__sprintf_chk",
	"__vsnprintf_chk", "__vsprintf_chk", "__printf_chk", "__fprintf_chk", "__vfprintf_chk",
	"__vprintf_chk",
	/* formatting; stdout and stderr go to the recorder's log */
	"snprintf", "sprintf", "vsnprintf", "vsprintf", "printf", "fprintf", "vprintf", "vfprintf",
	"puts", "putchar", "fputs", "fputc", "putc", "fwrite", "fflush", "stdout", "stderr",
	/* small host-side metadata */
	"malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
	/* numbers */
	"strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "atoi", "atol", "atoll",
	"atof", "abs", "labs", "llabs", "div", "ldiv", "lldiv", "qsort", "bsearch",
	"__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc", "tolower", "toupper",
	"isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isxdigit",
	/* runtime support the compiler emits */
	"abort", "__assert_fail", "__stack_chk_fail", "__errno_location", "__cxa_finalize",
	"__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable",
	/* libm */
	"sqrt", "sqrtf", "cbrt", "cbrtf", "exp", "expf", "exp2", "exp2f", "expm1", "expm1f", "log",
	"logf", "log2", "log2f", "log10", "log10f", "log1p", "log1pf", "pow", "powf", "fabs",
	"fabsf", "floor", "floorf", "ceil", "ceilf", "round", "roundf", "lround", "lroundf",
	"llround", "llroundf", "trunc", "truncf", "rint", "rintf", "lrint", "lrintf", "nearbyint",
	"nearbyintf", "fmod", "fmodf", "remainder", "remainderf", "fmin", "fminf", "fmax", "fmaxf",
	"fma", "fmaf", "fdim", "fdimf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "asin", "asinf",
	"acos", "acosf", "atan", "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf",
	"tanh", "tanhf", "asinh", "acosh", "atanh", "erf", "erff", "erfc", "erfcf", "tgamma",
	"tgammaf", "lgamma", "lgammaf", "hypot", "hypotf", "ldexp", "ldexpf", "frexp", "frexpf",
	"modf", "modff", "copysign", "copysignf", "ilogb", "ilogbf", "scalbn", "scalbnf",
	"nextafter", "nextafterf", "sincos", "sincosf",
};
/* clang-format on */

int libc_allow_has(const char *name)
{
	for (size_t i = 0; i < sizeof libc_allowed / sizeof libc_allowed[0]; i++)
		if (!strcmp(libc_allowed[i], name))
			return 1;
	return 0;
}
