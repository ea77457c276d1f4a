/* npy.c: .npy v1.0 writer and a small reader (see npy.h). Assumes a
 * little-endian host, like the rest of KernelAscent (x86-64, aarch64). */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPY_HEADER_CAP 4096

static const char *const npy_descrs[] = {
	[KA_DTYPE_FP32] = "<f4", [KA_DTYPE_FP16] = "<f2",  [KA_DTYPE_BF16] = "<u2",
	[KA_DTYPE_FP64] = "<f8", [KA_DTYPE_INT32] = "<i4", [KA_DTYPE_INT64] = "<i8",
	[KA_DTYPE_BOOL] = "|b1", [KA_DTYPE_INT8] = "|i1",  [KA_DTYPE_UINT8] = "|u1",
};

const char *npy_descr(enum ka_dtype dt)
{
	return (unsigned)dt < KA_DTYPE_COUNT ? npy_descrs[dt] : "?";
}

int npy_write(const char *path, enum ka_dtype dt, int ndim, const int64_t *dims, const void *data,
	      struct ka_err *e)
{
	if (ndim < 0 || ndim > KA_MAX_DIMS || (unsigned)dt >= KA_DTYPE_COUNT)
		return ka_err_set(e, "%s: bad array description", path);
	char hdr[512];
	int64_t numel = 1;
	int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (",
			 npy_descr(dt));
	for (int d = 0; d < ndim; d++) {
		if (dims[d] < 0 || __builtin_mul_overflow(numel, dims[d], &numel))
			return ka_err_set(e, "%s: bad dimension", path);
		n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld%s", (long long)dims[d],
			      ndim == 1 ? "," : (d + 1 < ndim ? ", " : ""));
	}
	n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
	/* Pad with spaces so magic + version + length + header ends on a
	 * 64-byte boundary, the last byte being '\n'. */
	size_t total = 10 + (size_t)n + 1;
	size_t pad = (64 - total % 64) % 64;
	memset(hdr + n, ' ', pad);
	hdr[n + (int)pad] = '\n';
	size_t hlen = (size_t)n + pad + 1;
	unsigned char pre[10] = {0x93,
				 'N',
				 'U',
				 'M',
				 'P',
				 'Y',
				 1,
				 0,
				 (unsigned char)(hlen & 0xff),
				 (unsigned char)(hlen >> 8)};
	size_t bytes = (size_t)numel * dtype_size(dt);

	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		ka_err_set(e, "%s: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, hlen, f) == hlen &&
		 (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		ka_err_set(e, "%s: %s", path, errno ? strerror(errno) : "write failed");
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

/* Find 'key': in the header dict and return a pointer just after the colon. */
static const char *hdr_field(const char *h, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof pat, "'%s':", key);
	const char *p = strstr(h, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return p;
}

int npy_read(const char *path, size_t cap, struct npy_array *a, struct ka_err *e)
{
	memset(a, 0, sizeof *a);
	FILE *f = fopen(path, "rb");
	if (!f)
		return ka_err_set(e, "%s: %s", path, strerror(errno));
	unsigned char pre[12];
	char *hdr = NULL;
	int rc = -1;
	if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
		ka_err_set(e, "%s: not a .npy file", path);
		goto done;
	}
	size_t hlen;
	if (pre[6] == 1) {
		if (fread(pre + 8, 1, 2, f) != 2)
			goto short_read;
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (fread(pre + 8, 1, 4, f) != 4)
			goto short_read;
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		       (size_t)pre[11] << 24;
	} else {
		ka_err_set(e, "%s: unsupported .npy version %d", path, pre[6]);
		goto done;
	}
	if (hlen > NPY_HEADER_CAP) {
		ka_err_set(e, "%s: header over %d bytes", path, NPY_HEADER_CAP);
		goto done;
	}
	hdr = xmalloc(hlen + 1);
	if (fread(hdr, 1, hlen, f) != hlen)
		goto short_read;
	hdr[hlen] = 0;
	const char *d = hdr_field(hdr, "descr");
	int found = 0;
	for (int i = 0; d && i < KA_DTYPE_COUNT; i++) {
		if (d[0] == '\'' && !strncmp(d + 1, npy_descrs[i], 3) && d[4] == '\'') {
			a->dtype = (enum ka_dtype)i;
			found = 1;
		}
	}
	if (!found) {
		ka_err_set(e, "%s: unsupported dtype", path);
		goto done;
	}
	const char *fo = hdr_field(hdr, "fortran_order");
	if (!fo || strncmp(fo, "False", 5) != 0) {
		ka_err_set(e, "%s: only C order is supported", path);
		goto done;
	}
	const char *s = hdr_field(hdr, "shape");
	if (!s || *s != '(') {
		ka_err_set(e, "%s: no shape", path);
		goto done;
	}
	s++;
	a->numel = 1;
	while (*s && *s != ')') {
		while (*s == ' ' || *s == ',')
			s++;
		if (*s == ')')
			break;
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (end == s || errno || v < 0 || a->ndim >= KA_MAX_DIMS ||
		    __builtin_mul_overflow(a->numel, (int64_t)v, &a->numel)) {
			ka_err_set(e, "%s: bad shape", path);
			goto done;
		}
		a->dims[a->ndim++] = v;
		s = end;
	}
	size_t bytes;
	if (__builtin_mul_overflow((size_t)a->numel, dtype_size(a->dtype), &bytes) || bytes > cap) {
		ka_err_set(e, "%s: data over the cap of %zu bytes", path, cap);
		goto done;
	}
	a->data = xmalloc(bytes);
	if (bytes && fread(a->data, 1, bytes, f) != bytes)
		goto short_read;
	rc = 0;
	goto done;
short_read:
	ka_err_set(e, "%s: file is truncated", path);
done:
	fclose(f);
	free(hdr);
	if (rc)
		npy_array_free(a);
	return rc;
}

void npy_array_free(struct npy_array *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof *a);
}
