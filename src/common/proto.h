/* proto.h: framing of the parent <-> runner conversation over a pipe pair.
 * A message is a 4-byte little-endian length, that many bytes of JSON (an
 * object), then the binary blobs whose byte lengths the object lists in its
 * "blobs" array, back to back. The messages themselves are documented in
 * docs/runner-protocol.md. Reads are bounded (PROTO_MAX_JSON, PROTO_MAX_BLOB)
 * so a dying or hostile peer cannot make the reader allocate without limit. */
#ifndef KA_PROTO_H
#define KA_PROTO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define PROTO_MAX_JSON (16u << 20)
#define PROTO_MAX_BLOBS 64
#define PROTO_MAX_BLOB (16ull << 30)

struct proto_msg {
	json_t *obj; /* owned reference */
	int n_blobs;
	uint8_t *blob[PROTO_MAX_BLOBS]; /* owned */
	size_t blob_len[PROTO_MAX_BLOBS];
};

/* Send obj (its "blobs" field is set here from lens) and n blobs on fd.
 * 0 or -1 with e (peer gone). */
int proto_send(int fd, json_t *obj, int n, const void *const *blobs, const size_t *lens,
	       struct ka_err *e);

/* Receive one message. timeout_s <= 0 waits forever. Returns 0, -1 with e on
 * EOF/garbage, or -2 on timeout. Free with proto_msg_free. */
int proto_recv(int fd, double timeout_s, struct proto_msg *m, struct ka_err *e);

void proto_msg_free(struct proto_msg *m);

/* Helpers to move 64-bit integers through JSON exactly (as hex strings). */
json_t *proto_u64(uint64_t v);
int proto_get_u64(const json_t *obj, const char *key, uint64_t *out);

#endif
