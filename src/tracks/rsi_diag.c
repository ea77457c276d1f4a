/* rsi_diag.c: the per-round figures of weight RSI beyond C (rsi_diag.h). */
#include "rsi_diag.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "extract.h"
#include "util.h"

/* ---- diversity ---------------------------------------------------------------- */

static int word_byte(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '.';
}

/* Token hashes of s appended to *h (n used, cap allocated). */
static void tokens_of(const char *s, uint64_t **h, size_t *n, size_t *cap)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if (isspace(*p)) {
			p++;
			continue;
		}
		size_t len = 1;
		if (word_byte(*p))
			while (p[len] && word_byte(p[len]))
				len++;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 1024;
			*h = xrealloc(*h, *cap * sizeof **h);
		}
		(*h)[(*n)++] = util_hash64(p, len, 3);
		p += len;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Distinct token n-grams over all token n-grams of the kernels; -1 none. */
static double distinct_ngrams(const char *const *kernels, int n)
{
	uint64_t *grams = NULL, *tok = NULL;
	size_t ng = 0, gcap = 0, tcap = 0;
	for (int i = 0; i < n; i++) {
		if (!kernels[i])
			continue;
		size_t nt = 0;
		tokens_of(kernels[i], &tok, &nt, &tcap);
		for (size_t t = 0; t + RSI_DIAG_NGRAM <= nt; t++) {
			if (ng == gcap) {
				gcap = gcap ? gcap * 2 : 1024;
				grams = xrealloc(grams, gcap * sizeof *grams);
			}
			grams[ng++] = util_hash64(&tok[t], RSI_DIAG_NGRAM * sizeof *tok, 5);
		}
	}
	free(tok);
	if (!ng) {
		free(grams);
		return -1;
	}
	qsort(grams, ng, sizeof *grams, cmp_u64);
	size_t d = 0;
	for (size_t a = 0; a < ng; a++)
		d += !a || grams[a] != grams[a - 1];
	free(grams);
	return (double)d / (double)ng;
}

/* zlib bytes over raw bytes of the kernels joined by newlines; -1 short. */
static double compression_ratio(const char *const *kernels, int n)
{
	struct util_buf b;
	memset(&b, 0, sizeof b);
	for (int i = 0; i < n; i++)
		if (kernels[i]) {
			util_buf_puts(&b, kernels[i]);
			util_buf_putc(&b, '\n');
		}
	double r = -1;
	if (b.len >= RSI_DIAG_MIN_BYTES) {
		uLongf zlen = compressBound((uLong)b.len);
		unsigned char *z = xmalloc(zlen);
		if (compress2(z, &zlen, (const Bytef *)b.s, (uLong)b.len, 9) == Z_OK)
			r = (double)zlen / (double)b.len;
		free(z);
	}
	util_buf_free(&b);
	return r;
}

void rsi_diag_kernels(const char *const *kernels, int n, struct rsi_data_diag *out)
{
	out->n_kernels = 0;
	for (int i = 0; i < n; i++)
		out->n_kernels += kernels[i] != NULL;
	out->distinct = distinct_ngrams(kernels, n);
	out->compression = compression_ratio(kernels, n);
}

void rsi_diag_examples(const json_t *ex, const char *lang, struct rsi_data_diag *out)
{
	size_t n = json_array_size(ex);
	char **k = xcalloc(n + 1, sizeof *k);
	for (size_t i = 0; i < n; i++) {
		const char *c =
			json_string_value(json_object_get(json_array_get(ex, i), "completion"));
		if (!c)
			continue;
		k[i] = extract_code(c, lang);
		if (!k[i])
			k[i] = xstrdup(c);
	}
	rsi_diag_kernels((const char *const *)k, (int)n, out);
	for (size_t i = 0; i < n; i++)
		free(k[i]);
	free(k);
}

double rsi_diag_retention(const int *base, const int *now, int n)
{
	int n0 = 0, kept = 0;
	for (int i = 0; i < n; i++)
		if (base[i]) {
			n0++;
			kept += now[i] != 0;
		}
	return n0 ? (double)kept / n0 : -1;
}

/* ---- speed against the compiled baseline ----------------------------------------- */

void rsi_samples_init(struct rsi_samples *x, int n_tasks, int k)
{
	x->n_tasks = n_tasks;
	x->k = k;
	x->s = xcalloc((size_t)n_tasks * (size_t)k + 1, sizeof *x->s);
	x->n = xcalloc((size_t)n_tasks + 1, sizeof *x->n);
}

void rsi_samples_add(struct rsi_samples *x, int task, const struct metrics_sample *s)
{
	if (task < 0 || task >= x->n_tasks || x->n[task] >= x->k)
		return;
	x->s[(size_t)task * (size_t)x->k + (size_t)x->n[task]++] = *s;
}

void rsi_samples_free(struct rsi_samples *x)
{
	free(x->s);
	free(x->n);
	memset(x, 0, sizeof *x);
}

void rsi_samples_compiled_x(const struct rsi_samples *x, struct metrics_figure *out)
{
	struct metrics_task *t = xcalloc((size_t)x->n_tasks + 1, sizeof *t);
	for (int i = 0; i < x->n_tasks; i++) {
		t[i].name = "";
		t[i].tier = "L1";
		t[i].samples = &x->s[(size_t)i * (size_t)x->k];
		t[i].n_samples = x->n[i];
	}
	struct metrics_agg agg;
	metrics_aggregate(t, x->n_tasks, NULL, x->k, &agg);
	*out = agg.geomean_speedup_compiled;
	free(t);
}

const char *rsi_compiled_x_reason(int timing, const char *target)
{
	if (!timing)
		return "not timed (--no-timing)";
	if (strcmp(target, "cuda"))
		return "the target has no compiled baseline (only CUDA has one)";
	return "no correct held-out kernel was timed against the compiled baseline";
}
