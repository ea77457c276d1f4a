/* sign.c: ed25519 signature blocks over scorecards (see sign.h). The signed
 * message is "ka-signature/1\n" followed by the canonical form of the block
 * without its "signature" member, so the per-field hashes and the hash of
 * the whole scorecard are all covered. Keys: PKCS#8 PEM private keys, raw
 * 32-byte public keys as hex. */
#include "sign.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIG_BYTES 64

char *sign_canonical(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_ENCODE_ANY |
				     JSON_REAL_PRECISION(17));
}

void sign_sha256_hex(const char *s, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	EVP_Digest(s, len, md, &n, EVP_sha256(), NULL);
	util_hex(md, 32, out);
}

static int hex_decode(const char *hex, unsigned char *out, size_t n)
{
	if (strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;
		for (int k = 0; k < 2; k++) {
			char c = hex[2 * i + k];
			unsigned d;
			if (c >= '0' && c <= '9')
				d = (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				d = (unsigned)(c - 'a' + 10);
			else
				return -1;
			v = v * 16 + d;
		}
		out[i] = (unsigned char)v;
	}
	return 0;
}

static int pub_hex_of(EVP_PKEY *k, char out[SIGN_PUB_HEX])
{
	unsigned char raw[32];
	size_t n = sizeof raw;
	if (EVP_PKEY_get_raw_public_key(k, raw, &n) != 1 || n != 32)
		return -1;
	util_hex(raw, 32, out);
	return 0;
}

int sign_keygen(const char *priv_path, const char *pub_path, const char *name,
		char pub_hex[SIGN_PUB_HEX], struct ka_err *e)
{
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	FILE *f = NULL;
	char hex[SIGN_PUB_HEX];
	int rc = -1, fd = -1;
	if (!ctx || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &k) != 1 ||
	    pub_hex_of(k, hex)) {
		ka_err_set(e, "cannot make an ed25519 key");
		goto out;
	}
	fd = open(priv_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		ka_err_set(e, "%s: %s", priv_path, strerror(errno));
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		ka_err_set(e, "%s: %s", priv_path, strerror(errno));
		close(fd);
		goto out;
	}
	if (PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1) {
		ka_err_set(e, "%s: cannot write the key", priv_path);
		goto out;
	}
	char *line = xasprintf("ed25519 %s%s%s\n", hex, name ? " " : "", name ? name : "");
	rc = util_write_file(pub_path, line, strlen(line), e);
	free(line);
	if (!rc && pub_hex)
		memcpy(pub_hex, hex, SIGN_PUB_HEX);
out:
	if (f && fclose(f) && !rc)
		rc = ka_err_set(e, "%s: %s", priv_path, strerror(errno));
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/* The message the signature covers: the block without "signature". */
static char *signed_message(const json_t *block)
{
	json_t *copy = json_deep_copy(block);
	json_object_del(copy, "signature");
	char *c = sign_canonical(copy);
	json_decref(copy);
	if (!c)
		return NULL;
	char *m = xasprintf("%s\n%s", SIGN_SCHEMA, c);
	free(c);
	return m;
}

/* {key: sha256 of its canonical value} for every top-level key of sc. */
static json_t *field_hashes(const json_t *sc)
{
	json_t *f = json_object();
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)sc, key, v)
	{
		char *c = sign_canonical(v);
		char h[65];
		sign_sha256_hex(c ? c : "", c ? strlen(c) : 0, h);
		free(c);
		json_object_set_new(f, key, json_string(h));
	}
	return f;
}

json_t *sign_make(const char *sc_text, const char *key_path, struct ka_err *e)
{
	json_t *sc = NULL, *block = NULL;
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *md = NULL;
	char *canon = NULL, *msg = NULL;
	FILE *f = NULL;
	json_error_t je;
	sc = json_loads(sc_text, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(sc)) {
		ka_err_set(e, "not a JSON object (%s)", sc ? "top level" : je.text);
		goto fail;
	}
	f = fopen(key_path, "r");
	if (!f) {
		ka_err_set(e, "%s: %s", key_path, strerror(errno));
		goto fail;
	}
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	char hex[SIGN_PUB_HEX];
	if (!k || EVP_PKEY_get_id(k) != EVP_PKEY_ED25519 || pub_hex_of(k, hex)) {
		ka_err_set(e, "%s: not an ed25519 private key (make one with ka keygen)", key_path);
		goto fail;
	}
	canon = sign_canonical(sc);
	char h[65];
	sign_sha256_hex(canon, strlen(canon), h);
	block = json_pack("{s:s,s:s,s:s,s:s,s:o}", "schema", SIGN_SCHEMA, "algorithm", "ed25519",
			  "public_key", hex, "sha256", h, "fields", field_hashes(sc));
	msg = signed_message(block);
	unsigned char sig[SIG_BYTES];
	size_t siglen = sizeof sig;
	md = EVP_MD_CTX_new();
	if (!msg || !md || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)msg, strlen(msg)) != 1) {
		ka_err_set(e, "%s: signing failed", key_path);
		goto fail;
	}
	char sighex[2 * SIG_BYTES + 1];
	util_hex(sig, siglen, sighex);
	json_object_set_new(block, "signature", json_string(sighex));
	goto out;
fail:
	json_decref(block);
	block = NULL;
out:
	if (f)
		fclose(f);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	json_decref(sc);
	free(canon);
	free(msg);
	return block;
}

int sign_keys_load(const char *path, struct sign_keys *k, struct ka_err *e)
{
	char *text = NULL;
	memset(k, 0, sizeof *k);
	if (util_read_file(path, SIGN_FILE_CAP, &text, NULL, e))
		return -1;
	int rc = 0, lineno = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		char alg[16], hex[80], name[64] = "";
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#' || *line == '\r')
			continue;
		unsigned char raw[32];
		int got = sscanf(line, "%15s %79s %63[^\r\n]", alg, hex, name);
		if (got < 2 || strcmp(alg, "ed25519") || hex_decode(hex, raw, 32)) {
			rc = ka_err_set(e, "%s: line %d: not \"ed25519 HEX [name]\"", path, lineno);
			break;
		}
		if (k->n == SIGN_MAX_KEYS) {
			rc = ka_err_set(e, "%s: more than %d keys", path, SIGN_MAX_KEYS);
			break;
		}
		snprintf(k->hex[k->n], SIGN_PUB_HEX, "%s", hex);
		snprintf(k->name[k->n], sizeof k->name[0], "%s", name);
		k->n++;
	}
	free(text);
	return rc;
}

int sign_keys_find(const struct sign_keys *k, const char *hex)
{
	for (int i = 0; k && i < k->n; i++)
		if (!strcmp(k->hex[i], hex))
			return i;
	return -1;
}

/* The signature of block valid for its public key. 0 or -1 with e. */
static int check_block_signature(const json_t *block, struct ka_err *e)
{
	const char *pub = json_string_value(json_object_get(block, "public_key"));
	const char *sig = json_string_value(json_object_get(block, "signature"));
	unsigned char raw[32], sigraw[SIG_BYTES];
	if (!pub || hex_decode(pub, raw, 32))
		return ka_err_set(e, "signature block: public_key is not 64 hex digits");
	if (!sig || hex_decode(sig, sigraw, SIG_BYTES))
		return ka_err_set(e, "signature block: signature is not 128 hex digits");
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *msg = signed_message(block);
	int ok = k && md && msg && EVP_DigestVerifyInit(md, NULL, NULL, NULL, k) == 1 &&
		 EVP_DigestVerify(md, sigraw, SIG_BYTES, (const unsigned char *)msg, strlen(msg)) ==
			 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	free(msg);
	return ok ? 0
		  : ka_err_set(e, "signature block: the signature does not match its contents "
				  "(the block was edited or made with another key)");
}

/* The first top-level field (sorted) whose hash differs from the block's. 0
 * when every field matches, -1 with e naming it. */
static int compare_fields(const json_t *sc, const json_t *signed_fields, struct ka_err *e)
{
	json_t *now = field_hashes(sc);
	json_t *all = json_deep_copy(now);
	json_object_update_missing(all, (json_t *)signed_fields);
	char *keys = sign_canonical(all); /* sorted key order, for a stable first */
	json_t *sorted = json_loads(keys, 0, NULL);
	int rc = 0;
	const char *key;
	json_t *v;
	(void)v;
	/* jansson keeps insertion order: walk the sorted dump's keys. */
	json_object_foreach(sorted, key, v)
	{
		const char *a = json_string_value(json_object_get(signed_fields, key));
		const char *b = json_string_value(json_object_get(now, key));
		if (a && b && !strcmp(a, b))
			continue;
		if (!a)
			rc = ka_err_set(e, "field '%s' was added after signing", key);
		else if (!b)
			rc = ka_err_set(e, "field '%s' was removed after signing", key);
		else
			rc = ka_err_set(e, "field '%s' changed after signing", key);
		break;
	}
	free(keys);
	json_decref(sorted);
	json_decref(all);
	json_decref(now);
	return rc;
}

int sign_verify(const char *sc_text, const char *sig_text, const struct sign_keys *trusted,
		char pub_hex[SIGN_PUB_HEX], struct ka_err *e)
{
	json_error_t je;
	json_t *sc = json_loads(sc_text, JSON_REJECT_DUPLICATES, &je);
	json_t *block = json_loads(sig_text, JSON_REJECT_DUPLICATES, NULL);
	char *canon = NULL;
	int rc = -1;
	if (!json_is_object(sc)) {
		ka_err_set(e, "scorecard: not a JSON object (%s)", sc ? "top level" : je.text);
		goto out;
	}
	if (!json_is_object(block) ||
	    strcmp(json_string_value(json_object_get(block, "schema")) ?: "", SIGN_SCHEMA) ||
	    strcmp(json_string_value(json_object_get(block, "algorithm")) ?: "", "ed25519") ||
	    !json_is_object(json_object_get(block, "fields")) ||
	    !json_is_string(json_object_get(block, "sha256"))) {
		ka_err_set(e, "signature block: not a %s ed25519 block", SIGN_SCHEMA);
		goto out;
	}
	if (check_block_signature(block, e) ||
	    compare_fields(sc, json_object_get(block, "fields"), e))
		goto out;
	canon = sign_canonical(sc);
	char h[65];
	sign_sha256_hex(canon, strlen(canon), h);
	if (strcmp(h, json_string_value(json_object_get(block, "sha256")))) {
		ka_err_set(e, "the scorecard changed after signing");
		goto out;
	}
	const char *pub = json_string_value(json_object_get(block, "public_key"));
	if (trusted && sign_keys_find(trusted, pub) < 0) {
		ka_err_set(e, "signed by a key that is not trusted: %s", pub);
		goto out;
	}
	if (pub_hex)
		snprintf(pub_hex, SIGN_PUB_HEX, "%s", pub);
	rc = 0;
out:
	free(canon);
	json_decref(sc);
	json_decref(block);
	return rc;
}

int sign_verify_file(const char *sc_path, const char *sig_path, const struct sign_keys *trusted,
		     char pub_hex[SIGN_PUB_HEX], struct ka_err *e)
{
	char *sc = NULL, *sig = NULL,
	     *sp = sig_path ? xstrdup(sig_path) : xasprintf("%s.sig", sc_path);
	int rc = -1;
	if (util_read_file(sc_path, SIGN_FILE_CAP * 64, &sc, NULL, e) ||
	    util_read_file(sp, SIGN_FILE_CAP, &sig, NULL, e))
		goto out;
	rc = sign_verify(sc, sig, trusted, pub_hex, e);
out:
	free(sc);
	free(sig);
	free(sp);
	return rc;
}
