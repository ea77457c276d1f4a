/* dtype.c: the dtype table (see dtype.h). */
#include "dtype.h"

#include <string.h>

static const struct {
	const char *name, *ctype;
	size_t size;
	int is_int;
} dtypes[KA_DTYPE_COUNT] = {
	[KA_DTYPE_FP32] = {"fp32", "float", 4, 0},   [KA_DTYPE_FP16] = {"fp16", "ka_half", 2, 0},
	[KA_DTYPE_BF16] = {"bf16", "ka_bf16", 2, 0}, [KA_DTYPE_FP64] = {"fp64", "double", 8, 0},
	[KA_DTYPE_INT32] = {"int32", "int", 4, 1},   [KA_DTYPE_INT64] = {"int64", "ka_i64", 8, 1},
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
