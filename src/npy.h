/* npy.h: reading and writing NumPy .npy files, format version 1.0, in C
 * order and little-endian (the field's common exchange format for tensors).
 * Dtypes map as: fp32 '<f4', fp64 '<f8', fp16 '<f2', int32 '<i4',
 * int64 '<i8'; bf16 has no NumPy dtype and is written as its raw bits, '<u2'
 * (reading '<u2' gives bf16 back). The reader accepts what the writer
 * produces plus version 2.0/3.0 headers; it is meant for tests and tools,
 * not as a general .npy parser (no Fortran order, no object or structured
 * dtypes). This module does not know about tasks beyond enum ka_dtype. */
#ifndef KA_NPY_H
#define KA_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "util.h"

/* An array read from a file: data holds numel * dtype_size(dtype)
 * bytes. Owned by the struct; free with npy_array_free. */
struct npy_array {
	enum ka_dtype dtype;
	int ndim;
	int64_t dims[KA_MAX_DIMS];
	int64_t numel;
	void *data;
};

/* The .npy descr of a dtype ("<f4", ... "<u2" for bf16). */
const char *npy_descr(enum ka_dtype dt);

/* Write data (numel = product of dims; ndim 0..KA_MAX_DIMS, 0 = scalar) to
 * path, through a temporary file and a rename, so a failed write leaves no
 * partial file. The caller keeps data. 0 or -1 with e ("path: problem"). */
int npy_write(const char *path, enum ka_dtype dt, int ndim, const int64_t *dims, const void *data,
	      struct ka_err *e);

/* Read path (at most cap bytes of data) into a. 0, or -1 with e and a left
 * empty. */
int npy_read(const char *path, size_t cap, struct npy_array *a, struct ka_err *e);

/* Free a's data and clear it; a zeroed or already freed array is fine. */
void npy_array_free(struct npy_array *a);

#endif
