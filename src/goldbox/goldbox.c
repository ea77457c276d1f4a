/* goldbox.c: ka-goldbox, the confined gold of a task whose reference is not
 * trusted bank code (a frontier proposal's ref.c, written by a model:
 * docs/grader.md, "Gold that is not bank code"). ka starts one box per gold
 * computation (src/gold.c), with an environment of its own, in its own
 * process group, under a deadline, dying with ka. The box reads the request
 * (src/common/goldwire.h) on stdin, lays every buffer against an
 * inaccessible page, caps its CPU time, memory, files and core dumps,
 * confines itself (Landlock to the system's libraries and the compiled
 * reference, read-only; the seccomp filter of src/common/lockdown.h), says
 * ready, and only then loads the reference, computes and writes the values
 * of the requested items on stdout. It holds nothing of ka's: it is a fresh
 * program, started with none of ka's environment.
 *
 *   ka-goldbox SO CPU_S   (SO: the compiled reference; CPU_S: its CPU seconds)
 *
 * Exit 0 with the reply written; 2 for a bad command line or request, 3 when
 * the box cannot confine itself (both before the ready mark: failures of
 * the grader); 4 when the reference does not load, 5 when it wrote before
 * the start of an output (after the mark: failures of the task). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "goldwire.h"
#include "ka_gen.h"
#include "lockdown.h"
#include "sanopts.h" /* make san: crashes stay signals, no leak check */
#include "util.h"

#define GOLDBOX_MEM_HEADROOM (4ull << 30) /* address space beyond the buffers */
#define GOLDBOX_MAX_BYTES (1ull << 40)	  /* no request is larger */
#define SLACK_BYTE 0xa5			  /* fills the room before each output */

typedef void (*items_fn)(const int64_t *P, void *const *in, double *const *out,
			 const int64_t *items, int64_t n);
typedef void (*lazy_fn)(const int64_t *P, const struct ka_gen_src *in, double *const *out,
			const int64_t *items, int64_t n);

static __attribute__((noreturn)) void die(int code, const char *what, const char *why)
{
	fprintf(stderr, "goldbox: %s%s%s\n", what, why ? ": " : "", why ? why : "");
	exit(code);
}

static int read_all(void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(0, c, n > (1u << 30) ? (1u << 30) : n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* n bytes whose end meets an inaccessible page (a read or write past the end
 * faults), with one before the mapping too; *slack gets the bytes between
 * the first page and the start. NULL when the memory is not there. */
static void *guarded(size_t n, size_t *slack)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = n ? (n + pg - 1) / pg * pg : pg;
	char *m = mmap(NULL, body + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + pg, body, PROT_READ | PROT_WRITE))
		return NULL;
	*slack = body - n;
	return m + pg + *slack;
}

/* The request's sizes, bounded; 0 or -1 with why. */
static int check_request(const struct goldwire_req *q, const char **why)
{
	*why = NULL;
	if (q->magic != GOLDWIRE_MAGIC)
		*why = "not a gold request";
	else if ((q->lazy != 0 && q->lazy != 1) || (q->all != 0 && q->all != 1))
		*why = "bad mode";
	else if (q->n_inputs < 0 || q->n_inputs > GOLDWIRE_MAX_TENSORS || q->n_outputs < 1 ||
		 q->n_outputs > GOLDWIRE_MAX_TENSORS)
		*why = "bad tensor count";
	else if (q->item_count < 0 || q->n_items < 0 || q->n_items > q->item_count ||
		 (q->all && q->n_items != q->item_count))
		*why = "bad item count";
	for (int k = 0; !*why && k < q->n_inputs; k++)
		if (q->in_bytes[k] > GOLDBOX_MAX_BYTES)
			*why = "input too large";
	for (int j = 0; !*why && j < q->n_outputs; j++) {
		__int128 need = (__int128)q->item_count * q->out_per_item[j];
		if (q->out_per_item[j] < 0 || q->out_numel[j] < 0 || need > q->out_numel[j] ||
		    (__int128)q->out_numel[j] * 8 > (__int128)GOLDBOX_MAX_BYTES)
			*why = "bad output size";
	}
	return *why ? -1 : 0;
}

/* The limits, then Landlock and seccomp (lockdown.h). 0 or -1 with why.
 * The CPU limit's hard one a second above: an overrun dies of SIGXCPU, so
 * that a SIGKILL is someone else's (goldclient.h killed_outside) unless the
 * reference blocked SIGXCPU and spun on. */
static int confine(const char *so, long cpu_s, const char **why)
{
	struct rlimit zero = {0, 0}, cpu = {(rlim_t)cpu_s, (rlim_t)cpu_s + 1}, files = {64, 64};
	if (setrlimit(RLIMIT_CORE, &zero) || setrlimit(RLIMIT_FSIZE, &zero) ||
	    setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_NOFILE, &files)) {
		*why = "setrlimit";
		return -1;
	}
#ifndef __SANITIZE_ADDRESS__ /* ASan maps its shadow as it goes: no cap under make san */
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	int got = f && fscanf(f, "%llu", &pages) == 1;
	if (f)
		fclose(f);
	if (!got) {
		*why = "/proc/self/statm";
		return -1;
	}
	rlim_t as =
		(rlim_t)(pages * (unsigned long long)sysconf(_SC_PAGESIZE) + GOLDBOX_MEM_HEADROOM);
	struct rlimit asl = {as, as};
	if (setrlimit(RLIMIT_AS, &asl)) {
		*why = "setrlimit(RLIMIT_AS)";
		return -1;
	}
#endif
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		*why = "prctl";
		return -1;
	}
	const char *const ro[] = {"/usr",
				  "/lib",
				  "/lib64",
				  "/lib32",
				  "/etc/ld.so.cache",
				  "/sys/devices/system/cpu",
				  "/proc/self",
				  "/proc/thread-self",
				  so,
				  NULL};
	static const char *const dev[] = {"/dev/null", NULL};
	lockdown_landlock(ro, NULL, dev); /* where the kernel has it */
	if (lockdown_seccomp()) {
		*why = "seccomp";
		return -1;
	}
	return 0;
}

/* The requested items' values on stdout, staged through a buffer. */
static int reply(const struct goldwire_req *q, const int64_t *items, double *const *out,
		 double compute_s)
{
	int64_t n_values = 0;
	for (int j = 0; j < q->n_outputs; j++)
		n_values += q->n_items * q->out_per_item[j];
	struct goldwire_head h = {GOLDWIRE_HEAD, compute_s, n_values};
	if (util_write_fd(1, &h, sizeof h))
		return -1;
	enum { STAGE = 1 << 17 };
	static double stage[STAGE];
	size_t used = 0;
	for (int j = 0; j < q->n_outputs; j++)
		for (int64_t i = 0; i < q->n_items; i++) {
			int64_t item = items ? items[i] : i, per = q->out_per_item[j];
			const double *v = out[j] + item * per;
			for (int64_t e = 0; e < per; e++) {
				stage[used++] = v[e];
				if (used == STAGE) {
					if (util_write_fd(1, stage, used * sizeof *stage))
						return -1;
					used = 0;
				}
			}
		}
	uint64_t end = GOLDWIRE_END;
	if ((used && util_write_fd(1, stage, used * sizeof *stage)) ||
	    util_write_fd(1, &end, sizeof end))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atol(argv[2]) < 1)
		die(2, "usage: ka-goldbox SO CPU_S (started by ka; request on stdin)", NULL);
	const char *so = argv[1], *why;
	long cpu_s = atol(argv[2]);
	/* Only stdin, stdout and stderr: a descriptor ka left open is no way
	 * around the file-system view. */
	if (close_range(3, ~0u, 0))
		die(3, "close_range", strerror(errno));
	struct goldwire_req q;
	if (read_all(&q, sizeof q))
		die(2, "request", "short");
	if (check_request(&q, &why))
		die(2, "request", why);
	int64_t *items = NULL;
	if (!q.all) {
		size_t slack;
		items = guarded((size_t)q.n_items * sizeof *items, &slack);
		if (!items || read_all(items, (size_t)q.n_items * sizeof *items))
			die(2, "request", "items");
		for (int64_t i = 0; i < q.n_items; i++)
			if (items[i] < 0 || items[i] >= q.item_count)
				die(2, "request", "item out of range");
	}
	struct ka_gen_src src[GOLDWIRE_MAX_TENSORS];
	void *in[GOLDWIRE_MAX_TENSORS] = {0};
	if (q.lazy && q.n_inputs && read_all(src, (size_t)q.n_inputs * sizeof src[0]))
		die(2, "request", "generators");
	for (int k = 0; !q.lazy && k < q.n_inputs; k++) {
		size_t slack;
		in[k] = guarded((size_t)q.in_bytes[k], &slack);
		if (!in[k] || read_all(in[k], (size_t)q.in_bytes[k]))
			die(2, "request", "inputs");
	}
	double *out[GOLDWIRE_MAX_TENSORS] = {0};
	size_t slack[GOLDWIRE_MAX_TENSORS] = {0};
	for (int j = 0; j < q.n_outputs; j++) {
		out[j] = guarded((size_t)q.out_numel[j] * sizeof(double), &slack[j]);
		if (!out[j])
			die(2, "request", "no memory for the outputs");
		memset((char *)out[j] - slack[j], SLACK_BYTE, slack[j]);
	}
	if (confine(so, cpu_s, &why))
		die(3, "cannot confine the gold", why);
	uint64_t ready = GOLDWIRE_READY;
	if (util_write_fd(1, &ready, sizeof ready))
		die(3, "reply", "closed");
	/* From here on the task's own code runs: whatever fails is its failure. */
	void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	void *sym = dl ? dlsym(dl, q.lazy ? "ka_gold_lazy" : "ka_gold_items") : NULL;
	if (!sym)
		die(4, "the reference does not load", dlerror());
	struct timespec t0, t1;
	/* One item is a cost measurement (gold.c): timed warm, as in ka, where
	 * the process has run the reference before. */
	for (int run = q.n_items == 1 ? 0 : 1; run < 2; run++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (q.lazy) {
			lazy_fn fn;
			memcpy(&fn, &sym, sizeof fn);
			fn(q.P, src, out, items, q.n_items);
		} else {
			items_fn fn;
			memcpy(&fn, &sym, sizeof fn);
			fn(q.P, in, out, items, q.n_items);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
	}
	for (int j = 0; j < q.n_outputs; j++)
		for (size_t b = 0; b < slack[j]; b++)
			if (((unsigned char *)out[j] - slack[j])[b] != SLACK_BYTE)
				die(5, "the reference wrote before the start of an output", NULL);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (reply(&q, items, out, s))
		die(5, "reply", "closed");
	return 0;
}
