/* sigv4.c: AWS Signature Version 4 (see sigv4.h). SHA-256 and HMAC come from
 * OpenSSL's libcrypto; everything else (canonical forms) is here so that the
 * signer can be checked against AWS's published test suite. */
#include "sigv4.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIGV4_MAX_HEADERS 32
#define SIGV4_MAX_PARAMS 256

void sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	util_hex(md, n, out);
}

static void hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int n = 32;
	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &n);
}

void sigv4_amz_date(time_t t, char out[17])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

static int unreserved(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static void encode_into(struct util_buf *b, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (unreserved(c) || (keep_slash && c == '/')) {
			util_buf_putc(b, (char)c);
		} else {
			char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
			util_buf_add(b, esc, 3);
		}
	}
}

char *sigv4_uri_encode(const char *s, int keep_slash)
{
	struct util_buf b = {0};
	encode_into(&b, s, strlen(s), keep_slash);
	return util_buf_take(&b);
}

char *sigv4_canonical_path(const char *path)
{
	if (!path || !*path)
		return xstrdup("/");
	/* Split into segments, dropping empty and "." ones and resolving "..",
	 * as the suite's normalize-path cases require for non-S3 services. */
	size_t n = strlen(path);
	const char **seg = xcalloc(n + 1, sizeof *seg);
	size_t *seglen = xcalloc(n + 1, sizeof *seglen);
	int nseg = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && path[i] == '/')
			i++;
		size_t j = i;
		while (j < n && path[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && path[i] == '.')) {
			/* skip */
		} else if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
			if (nseg > 0)
				nseg--;
		} else {
			seg[nseg] = path + i;
			seglen[nseg] = len;
			nseg++;
		}
		i = j;
	}
	/* A trailing slash survives (unless the whole path reduced to "/"). */
	int trailing = path[n - 1] == '/' || (n >= 2 && path[n - 1] == '.' && path[n - 2] == '/') ||
		       (n >= 3 && !strcmp(path + n - 3, "/.."));
	struct util_buf b = {0};
	for (int k = 0; k < nseg; k++) {
		util_buf_putc(&b, '/');
		encode_into(&b, seg[k], seglen[k], 0);
	}
	if (nseg == 0 || trailing)
		util_buf_putc(&b, '/');
	free(seg);
	free(seglen);
	return util_buf_take(&b);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Percent-decode n bytes of s into a new string. */
static char *pct_decode(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n) {
			int hi = hexval((unsigned char)s[i + 1]);
			int lo = hexval((unsigned char)s[i + 2]);
			if (hi >= 0 && lo >= 0) {
				d[k++] = (char)(hi * 16 + lo);
				i += 2;
				continue;
			}
		}
		d[k++] = s[i];
	}
	d[k] = 0;
	return d;
}

struct qparam {
	char *key, *val; /* encoded */
};

static int qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : strcmp(x->val, y->val);
}

char *sigv4_canonical_query(const char *query)
{
	if (!query || !*query)
		return xstrdup("");
	struct qparam *ps = xcalloc(SIGV4_MAX_PARAMS, sizeof *ps);
	int np = 0;
	const char *p = query;
	while (*p && np < SIGV4_MAX_PARAMS) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		if (len > 0) {
			const char *eq = memchr(p, '=', len);
			size_t klen = eq ? (size_t)(eq - p) : len;
			char *k = pct_decode(p, klen);
			char *v = eq ? pct_decode(eq + 1, len - klen - 1) : xstrdup("");
			ps[np].key = sigv4_uri_encode(k, 0);
			ps[np].val = sigv4_uri_encode(v, 0);
			free(k);
			free(v);
			np++;
		}
		if (!amp)
			break;
		p = amp + 1;
	}
	qsort(ps, (size_t)np, sizeof *ps, qparam_cmp);
	struct util_buf b = {0};
	for (int i = 0; i < np; i++) {
		if (i)
			util_buf_putc(&b, '&');
		util_buf_puts(&b, ps[i].key);
		util_buf_putc(&b, '=');
		util_buf_puts(&b, ps[i].val);
		free(ps[i].key);
		free(ps[i].val);
	}
	free(ps);
	return util_buf_take(&b);
}

struct chdr {
	char name[128];
	struct util_buf value;
	int order;
};

static int chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* Trim value and collapse runs of spaces to one, appending to b. */
static void put_trimmed(struct util_buf *b, const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	int space = 0;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c == ' ' || c == '\t') {
			space = 1;
			continue;
		}
		if (space)
			util_buf_putc(b, ' ');
		space = 0;
		util_buf_putc(b, c);
	}
}

int sigv4_sign(const struct sigv4_input *in, struct sigv4_output *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	if (!in->method || !in->region || !in->service || !in->amz_date || !in->access_key ||
	    !in->secret_key)
		return ka_err_set(e, "sigv4: method, region, service, date and keys are required");
	if (strlen(in->amz_date) != 16)
		return ka_err_set(e, "sigv4: date '%s' is not YYYYMMDDTHHMMSSZ", in->amz_date);
	if (in->n_headers > SIGV4_MAX_HEADERS)
		return ka_err_set(e, "sigv4: %d headers, over the cap of %d", in->n_headers,
				  SIGV4_MAX_HEADERS);

	/* Canonical headers: lowercase names, merged duplicates (in order of
	 * appearance), sorted by name. */
	struct chdr hs[SIGV4_MAX_HEADERS];
	memset(hs, 0, sizeof hs);
	int nh = 0;
	for (int i = 0; i < in->n_headers; i++) {
		const char *name = in->headers[i].name;
		if (strlen(name) >= sizeof hs[0].name) {
			for (int k = 0; k < nh; k++)
				free(hs[k].value.s);
			return ka_err_set(e, "sigv4: header name '%.40s...' too long", name);
		}
		char low[128];
		size_t k = 0;
		for (; name[k]; k++)
			low[k] = (char)tolower((unsigned char)name[k]);
		low[k] = 0;
		int at = -1;
		for (int j = 0; j < nh; j++)
			if (!strcmp(hs[j].name, low))
				at = j;
		if (at < 0) {
			at = nh++;
			strcpy(hs[at].name, low);
			hs[at].order = at;
		} else {
			util_buf_putc(&hs[at].value, ',');
		}
		put_trimmed(&hs[at].value, in->headers[i].value ? in->headers[i].value : "");
	}
	qsort(hs, (size_t)nh, sizeof hs[0], chdr_cmp);

	char payload_hash[65];
	sigv4_sha256_hex(in->body ? in->body : "", in->body ? in->body_len : 0, payload_hash);

	struct util_buf cr = {0}, sh = {0};
	util_buf_puts(&cr, in->method);
	util_buf_putc(&cr, '\n');
	char *cpath = sigv4_canonical_path(in->path);
	char *cquery = sigv4_canonical_query(in->query);
	util_buf_puts(&cr, cpath);
	util_buf_putc(&cr, '\n');
	util_buf_puts(&cr, cquery);
	util_buf_putc(&cr, '\n');
	free(cpath);
	free(cquery);
	for (int i = 0; i < nh; i++) {
		util_buf_puts(&cr, hs[i].name);
		util_buf_putc(&cr, ':');
		if (hs[i].value.s)
			util_buf_puts(&cr, hs[i].value.s);
		util_buf_putc(&cr, '\n');
		if (i)
			util_buf_putc(&sh, ';');
		util_buf_puts(&sh, hs[i].name);
		free(hs[i].value.s);
	}
	util_buf_putc(&cr, '\n');
	char *signed_headers = util_buf_take(&sh);
	util_buf_puts(&cr, signed_headers);
	util_buf_putc(&cr, '\n');
	util_buf_puts(&cr, payload_hash);
	out->canonical_request = util_buf_take(&cr);

	char date8[9];
	memcpy(date8, in->amz_date, 8);
	date8[8] = 0;
	char scope[256];
	snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", date8, in->region, in->service);
	char cr_hash[65];
	sigv4_sha256_hex(out->canonical_request, strlen(out->canonical_request), cr_hash);
	out->string_to_sign =
		xasprintf("AWS4-HMAC-SHA256\n%s\n%s\n%s", in->amz_date, scope, cr_hash);

	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
	char *ksecret = xasprintf("AWS4%s", in->secret_key);
	hmac256(ksecret, strlen(ksecret), date8, k1);
	OPENSSL_cleanse(ksecret, strlen(ksecret));
	free(ksecret);
	hmac256(k1, 32, in->region, k2);
	hmac256(k2, 32, in->service, k3);
	hmac256(k3, 32, "aws4_request", k4);
	hmac256(k4, 32, out->string_to_sign, sig);
	util_hex(sig, 32, out->signature);
	OPENSSL_cleanse(k4, sizeof k4);

	snprintf(out->signed_headers, sizeof out->signed_headers, "%s", signed_headers);
	int w = snprintf(out->authorization, sizeof out->authorization,
			 "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
			 in->access_key, scope, signed_headers, out->signature);
	free(signed_headers);
	if (w < 0 || (size_t)w >= sizeof out->authorization) {
		sigv4_output_free(out);
		return ka_err_set(e, "sigv4: Authorization header over %zu bytes",
				  sizeof out->authorization);
	}
	return 0;
}

void sigv4_output_free(struct sigv4_output *out)
{
	if (!out)
		return;
	free(out->canonical_request);
	free(out->string_to_sign);
	out->canonical_request = out->string_to_sign = NULL;
}
