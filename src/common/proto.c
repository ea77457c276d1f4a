/* proto.c: message framing between ka and a runner (see proto.h). */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Read exactly len bytes; deadline 0 = none. 0, -1 (EOF/error), -2 timeout. */
static int read_all(int fd, void *data, size_t len, double deadline)
{
	char *p = data;
	while (len) {
		if (deadline > 0) {
			double left = deadline - util_now();
			if (left <= 0)
				return -2;
			struct pollfd pf = {.fd = fd, .events = POLLIN};
			int r = poll(&pf, 1, (int)(left * 1000) + 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				return -2;
		}
		ssize_t n = read(fd, p, len > (1u << 30) ? (1u << 30) : len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int proto_send(int fd, json_t *obj, int n, const void *const *blobs, const size_t *lens,
	       struct ka_err *e)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_integer((json_int_t)lens[i]));
	json_object_set_new(obj, "blobs", arr);
	char *text = json_dumps(obj, JSON_COMPACT);
	if (!text)
		return ka_err_set(e, "proto: cannot serialise message");
	size_t tl = strlen(text);
	unsigned char hdr[4] = {(unsigned char)tl, (unsigned char)(tl >> 8),
				(unsigned char)(tl >> 16), (unsigned char)(tl >> 24)};
	int rc = write_all(fd, hdr, 4) || write_all(fd, text, tl);
	free(text);
	for (int i = 0; !rc && i < n; i++)
		rc = write_all(fd, blobs[i], lens[i]);
	if (rc)
		return ka_err_set(e, "proto: peer closed the pipe");
	return 0;
}

int proto_recv(int fd, double timeout_s, struct proto_msg *m, struct ka_err *e)
{
	memset(m, 0, sizeof *m);
	double deadline = timeout_s > 0 ? util_now() + timeout_s : 0;
	unsigned char hdr[4];
	int r = read_all(fd, hdr, 4, deadline);
	if (r == -2)
		return -2;
	if (r)
		return ka_err_set(e, "proto: peer closed the pipe");
	size_t tl = hdr[0] | (size_t)hdr[1] << 8 | (size_t)hdr[2] << 16 | (size_t)hdr[3] << 24;
	if (tl == 0 || tl > PROTO_MAX_JSON)
		return ka_err_set(e, "proto: message of %zu bytes is out of bounds", tl);
	char *text = xmalloc(tl + 1);
	r = read_all(fd, text, tl, deadline);
	if (r) {
		free(text);
		return r == -2 ? -2 : ka_err_set(e, "proto: truncated message");
	}
	text[tl] = 0;
	json_error_t je;
	m->obj = json_loadb(text, tl, 0, &je);
	free(text);
	if (!m->obj || !json_is_object(m->obj)) {
		proto_msg_free(m);
		return ka_err_set(e, "proto: message is not a JSON object");
	}
	json_t *blobs = json_object_get(m->obj, "blobs");
	size_t nb = json_is_array(blobs) ? json_array_size(blobs) : 0;
	if (nb > PROTO_MAX_BLOBS) {
		proto_msg_free(m);
		return ka_err_set(e, "proto: %zu blobs, over the cap", nb);
	}
	for (size_t i = 0; i < nb; i++) {
		json_int_t l = json_integer_value(json_array_get(blobs, i));
		if (l < 0 || (uint64_t)l > PROTO_MAX_BLOB) {
			proto_msg_free(m);
			return ka_err_set(e, "proto: blob %zu has a bad length", i);
		}
		m->blob[i] = xmalloc((size_t)l + 1);
		m->blob_len[i] = (size_t)l;
		m->n_blobs = (int)i + 1;
		r = read_all(fd, m->blob[i], (size_t)l, deadline);
		if (r) {
			proto_msg_free(m);
			return r == -2 ? -2 : ka_err_set(e, "proto: truncated blob");
		}
	}
	return 0;
}

void proto_msg_free(struct proto_msg *m)
{
	if (!m)
		return;
	json_decref(m->obj);
	for (int i = 0; i < m->n_blobs; i++)
		free(m->blob[i]);
	memset(m, 0, sizeof *m);
}

json_t *proto_u64(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%016" PRIx64, v);
	return json_string(buf);
}

int proto_get_u64(const json_t *obj, const char *key, uint64_t *out)
{
	const char *s = json_string_value(json_object_get(obj, key));
	if (!s || !*s || strlen(s) > 16)
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}
