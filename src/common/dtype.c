/* dtype.c: the dtype table (see dtype.h). The codes are the ABI's
 * (include/ka_kernel.h, shown to models verbatim, so it is not edited to
 * include this table): the asserts below keep the two in step. */
#include "dtype.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ka_kernel.h"

#define SAME_CODE(ours, abi) _Static_assert((int)(ours) == (int)(abi), #ours " != " #abi)
SAME_CODE(KA_DTYPE_FP32, KA_FP32);
SAME_CODE(KA_DTYPE_FP16, KA_FP16);
SAME_CODE(KA_DTYPE_BF16, KA_BF16);
SAME_CODE(KA_DTYPE_FP64, KA_FP64);
SAME_CODE(KA_DTYPE_INT32, KA_INT32);
SAME_CODE(KA_DTYPE_INT64, KA_INT64);
SAME_CODE(KA_DTYPE_BOOL, KA_BOOL);
SAME_CODE(KA_DTYPE_INT8, KA_INT8);
SAME_CODE(KA_DTYPE_UINT8, KA_UINT8);
_Static_assert((int)KA_DTYPE_COUNT == (int)KA_UINT8 + 1,
	       "a dtype missing from the ABI or from the table");

static const struct {
	const char *name, *ctype;
	size_t size;
	int is_int;
	double lo, hi; /* integer dtypes: the value range */
} dtypes[KA_DTYPE_COUNT] = {
	[KA_DTYPE_FP32] = {"fp32", "float", 4, 0},
	[KA_DTYPE_FP16] = {"fp16", "ka_half", 2, 0},
	[KA_DTYPE_BF16] = {"bf16", "ka_bf16", 2, 0},
	[KA_DTYPE_FP64] = {"fp64", "double", 8, 0},
	[KA_DTYPE_INT32] = {"int32", "int", 4, 1, -2147483648.0, 2147483647.0},
	[KA_DTYPE_INT64] = {"int64", "ka_i64", 8, 1, -9223372036854775808.0, 9223372036854775807.0},
	[KA_DTYPE_BOOL] = {"bool", "ka_bool", 1, 1, 0, 1},
	[KA_DTYPE_INT8] = {"int8", "ka_i8", 1, 1, -128, 127},
	[KA_DTYPE_UINT8] = {"uint8", "ka_u8", 1, 1, 0, 255},
};

size_t dtype_size(enum ka_dtype d)
{
	return (unsigned)d < KA_DTYPE_COUNT ? dtypes[d].size : 0;
}

const char *dtype_name(enum ka_dtype d)
{
	return (unsigned)d < KA_DTYPE_COUNT ? dtypes[d].name : "?";
}

const char *dtype_ctype(enum ka_dtype d)
{
	return (unsigned)d < KA_DTYPE_COUNT ? dtypes[d].ctype : "?";
}

int dtype_parse(const char *name, enum ka_dtype *out)
{
	for (int i = 0; i < KA_DTYPE_COUNT; i++) {
		if (!strcmp(name, dtypes[i].name)) {
			*out = (enum ka_dtype)i;
			return 0;
		}
	}
	return -1;
}

int dtype_is_int(enum ka_dtype d)
{
	return (unsigned)d < KA_DTYPE_COUNT && dtypes[d].is_int;
}

size_t dtype_code_size(int code)
{
	return code >= 0 && code < KA_DTYPE_COUNT ? dtypes[code].size : 0;
}

void dtype_int_range(enum ka_dtype d, double *lo, double *hi)
{
	*lo = 0;
	*hi = -1;
	if ((unsigned)d < KA_DTYPE_COUNT && dtypes[d].is_int) {
		*lo = dtypes[d].lo;
		*hi = dtypes[d].hi;
	}
}

int dtype_int_gold_check(enum ka_dtype d, double v, char *why, size_t cap)
{
	double lo, hi;
	if (!dtype_is_int(d))
		return 0;
	dtype_int_range(d, &lo, &hi);
	if (!(v >= lo && v <= hi))
		return snprintf(why, cap, "%.17g is outside %s's range [%.0f, %.0f]", v,
				dtype_name(d), lo, hi),
		       -1;
	if (v > 9007199254740992.0 || v < -9007199254740992.0)
		return snprintf(why, cap,
				"%.17g is beyond +-2^53, where the fp64 gold of an integer output "
				"is not exact",
				v),
		       -1;
	if ((double)(int64_t)v != v)
		return snprintf(why, cap, "%.17g is not an integer", v), -1;
	return 0;
}
