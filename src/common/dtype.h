/* dtype.h: the one table of tensor element types, shared by the parent, the
 * recorder and the runners. A dtype's code is its place in enum ka_dtype;
 * the name is what task.json spells, the C type is what a reference or a
 * kernel uses (include/ka_ref.h, include/ka_kernel.h). It knows nothing of
 * tasks or devices. The codes equal include/ka_kernel.h's enum ka_abi_dtype
 * (checked at compile time in dtype.c). */
#ifndef KA_DTYPE_H
#define KA_DTYPE_H

#include <stddef.h>

enum ka_dtype {
	KA_DTYPE_FP32,
	KA_DTYPE_FP16,
	KA_DTYPE_BF16,
	KA_DTYPE_FP64,
	KA_DTYPE_INT32,
	KA_DTYPE_INT64,
	KA_DTYPE_BOOL,
	KA_DTYPE_INT8,
	KA_DTYPE_UINT8,
	KA_DTYPE_COUNT
};

/* Bytes of one element; 0 for a code outside the table. */
size_t dtype_size(enum ka_dtype d);
/* Bytes of one element of an ABI dtype code (struct ka_tensor.dtype, a
 * request's or a plan's integer); 0 for a code outside the table. */
size_t dtype_code_size(int code);
/* The task.json name ("fp32"); "?" for a code outside the table. Static. */
const char *dtype_name(enum ka_dtype d);
/* The C type a reference or kernel uses ("float", "ka_half"); "?" outside. */
const char *dtype_ctype(enum ka_dtype d);
/* Parse a task.json name into *out. Returns 0, or -1 for an unknown name. */
int dtype_parse(const char *name, enum ka_dtype *out);
/* 1 for an integer dtype (int32, int64, bool, int8, uint8), else 0. */
int dtype_is_int(enum ka_dtype d);
/* The least and largest value of an integer dtype (bool: 0 and 1); for a
 * float dtype, 0 and -1 (no range). */
void dtype_int_range(enum ka_dtype d, double *lo, double *hi);
/* Whether v, the fp64 gold of an element of an output of integer dtype d,
 * stands for one value of d exactly: an integer, inside d's range, and at
 * most 2^53 in magnitude (beyond it fp64 holds only some integers, so an
 * int64 result that differs in its low bits would compare equal). 0, or -1
 * with the reason in why (cap bytes). Float dtypes: always 0. */
int dtype_int_gold_check(enum ka_dtype d, double v, char *why, size_t cap);

#endif
