/* sign.h: signed scorecards (docs/scaleout.md). An ed25519 key pair signs a
 * detached signature block, SCORECARD.sig, beside a scorecard; the scorecard
 * itself is not changed, so `ka scorecard check` and the board read it as
 * before. The block holds the SHA-256 of a canonical serialisation of the
 * whole scorecard and of each of its top-level fields, and the signature
 * covers the block: a scorecard edited after signing is rejected with the
 * name of the field that changed. Crypto is OpenSSL's EVP (ka links it);
 * nothing here reads a scorecard's meaning, only its JSON. */
#ifndef KA_SIGN_H
#define KA_SIGN_H

#include <jansson.h>
#include <stddef.h>

#include "util.h"

#define SIGN_SCHEMA "ka-signature/1"
#define SIGN_PUB_HEX 65	  /* 32-byte ed25519 public key as hex, and a NUL */
#define SIGN_MAX_KEYS 256 /* public keys read from one trusted list */
#define SIGN_FILE_CAP ((size_t)1 << 20)

/* The canonical serialisation of v: compact, keys sorted, ASCII only (jansson,
 * reals at 17 significant digits). Caller frees; NULL if v cannot be
 * encoded. */
char *sign_canonical(const json_t *v);

/* SHA-256 of s as 64 lowercase hex digits and a NUL in out. */
void sign_sha256_hex(const char *s, size_t len, char out[65]);

/* Make a new key pair: the private key as PKCS#8 PEM at priv_path (mode 0600,
 * refused if it exists), the public key as one line "ed25519 HEX NAME" at
 * pub_path (name may be NULL). pub_hex (may be NULL) gets the public key.
 * 0, or -1 with e. */
int sign_keygen(const char *priv_path, const char *pub_path, const char *name,
		char pub_hex[SIGN_PUB_HEX], struct ka_err *e);

/* The signature block of the scorecard text sc_text (any JSON object), made
 * with the private key at key_path: a new JSON object (schema, algorithm,
 * public_key, sha256, fields {top-level key: sha256}, signature). NULL with
 * e when the key cannot be read or the text is not a JSON object. */
json_t *sign_make(const char *sc_text, const char *key_path, struct ka_err *e);

/* A list of trusted public keys, read from a file of lines "ed25519 HEX
 * [name]" (blank lines and lines starting with '#' skipped). */
struct sign_keys {
	int n;
	char hex[SIGN_MAX_KEYS][SIGN_PUB_HEX];
	char name[SIGN_MAX_KEYS][64];
};

/* Read path into k. 0, or -1 with e ("PATH:LINE: ..."). */
int sign_keys_load(const char *path, struct sign_keys *k, struct ka_err *e);

/* Index of hex in k, or -1. */
int sign_keys_find(const struct sign_keys *k, const char *hex);

/* Check the block (JSON text) against the scorecard text: the block is well
 * formed and its signature valid for its public key; every top-level field
 * of the scorecard has the hash the block holds (e says "field 'F' changed
 * after signing", "... was added after signing" or "... was removed after
 * signing", the first in sorted order); the whole canonical form matches.
 * With trusted (may be NULL), the key must also be in it ("signed by a key
 * that is not trusted: HEX"). 0 (pub_hex, may be NULL, gets the signer's
 * key) or -1 with e. */
int sign_verify(const char *sc_text, const char *sig_text, const struct sign_keys *trusted,
		char pub_hex[SIGN_PUB_HEX], struct ka_err *e);

/* sign_verify on files: the scorecard at sc_path and its block at sig_path
 * (NULL: sc_path + ".sig"). */
int sign_verify_file(const char *sc_path, const char *sig_path, const struct sign_keys *trusted,
		     char pub_hex[SIGN_PUB_HEX], struct ka_err *e);

#endif
