/* sigv4.h: AWS Signature Version 4 over OpenSSL, for the Bedrock backend.
 * It builds the canonical request, the string to sign and the Authorization
 * header value for one HTTP request. It does not send anything, read
 * credentials or know about Bedrock: see model_bedrock.c. Paths are treated as
 * for every service but S3: normalised, then URI-encoded once more than they
 * are sent on the wire (so a model ID "a:0" sent as "a%3A0" signs as
 * "a%253A0"). */
#ifndef KA_SIGV4_H
#define KA_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "util.h"

struct sigv4_header {
	const char *name, *value;
};

/* One request to sign. Every header given is signed; it must include host and
 * x-amz-date (and x-amz-security-token when signing with a session token). */
struct sigv4_input {
	const char *method; /* "POST" */
	const char *path;   /* as sent on the wire, e.g. "/model/a%3A0/converse" */
	const char *query;  /* as sent, without '?'; NULL or "" for none */
	const struct sigv4_header *headers;
	int n_headers;
	const void *body;
	size_t body_len;
	const char *region, *service;
	const char *amz_date; /* "20150830T123600Z" */
	const char *access_key, *secret_key;
};

/* What sigv4_sign produces. canonical_request and string_to_sign are
 * allocated (sigv4_output_free); the rest are inline. */
struct sigv4_output {
	char *canonical_request;
	char *string_to_sign;
	char signed_headers[512];
	char signature[65];
	char authorization[1024];
};

/* Sign in; fills out. Returns 0, or -1 with e set (a missing field, a header
 * list over the caps). On success free out with sigv4_output_free. */
int sigv4_sign(const struct sigv4_input *in, struct sigv4_output *out, struct ka_err *e);

/* Free the allocated parts of out (safe on a zeroed or freed output). */
void sigv4_output_free(struct sigv4_output *out);

/* "YYYYMMDDTHHMMSSZ" for the UTC time t into out (17 bytes). */
void sigv4_amz_date(time_t t, char out[17]);

/* Lowercase hex SHA-256 of len bytes into out (65 bytes). */
void sigv4_sha256_hex(const void *data, size_t len, char out[65]);

/* URI-encode s as SigV4 wants: unreserved characters (A-Z a-z 0-9 - . _ ~)
 * kept, '/' kept when keep_slash, every other byte as %XX (upper case).
 * Returns a new string the caller frees. */
char *sigv4_uri_encode(const char *s, int keep_slash);

/* The canonical URI of a path as sent: dot segments and repeated slashes
 * removed, then URI-encoded (keeping '/'). New string; caller frees. */
char *sigv4_canonical_path(const char *path);

/* The canonical query string of a query as sent (without '?'): each name and
 * value decoded, re-encoded, sorted by name then value. New string; caller
 * frees. */
char *sigv4_canonical_query(const char *query);

#endif
