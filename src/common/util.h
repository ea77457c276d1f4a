/* util.h: small helpers shared by every KernelAscent program (ka, the
 * recorders, the runners): error messages, checked allocation, bounded file
 * I/O, hashing and clocks. Nothing here knows about tasks or targets. */
#ifndef KA_UTIL_H
#define KA_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define KA_ERRLEN 512

/* Exit codes of every ka command (documented in README.md). */
enum ka_exit { KA_EXIT_OK = 0, KA_EXIT_FAIL = 1, KA_EXIT_USAGE = 2 };

/* A one-line error message filled by fallible functions. */
struct ka_err {
	char msg[KA_ERRLEN];
};

/* Format a message into e (if e is not NULL). Always returns -1 so callers can
 * write `return ka_err_set(e, ...)`. */
int ka_err_set(struct ka_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that aborts the process on exhaustion: only for sizes the program
 * itself chose or has already bounded. Free with free(). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file of at most cap bytes into a NUL-terminated buffer the
 * caller frees. Returns 0, or -1 with e set (missing, unreadable, too big). */
int util_read_file(const char *path, size_t cap, char **out, size_t *len, struct ka_err *e);

/* Write len bytes to path atomically (temporary file + rename). 0 or -1. */
int util_write_file(const char *path, const void *data, size_t len, struct ka_err *e);

/* mkdir -p. 0 or -1 with e set. */
int util_mkdirs(const char *path, struct ka_err *e);

/* Remove a directory tree (best effort, no error). */
void util_rmtree(const char *path);

/* 64-bit hash of bytes (FNV-1a folded through a splitmix finaliser). Not
 * cryptographic: for cache keys and equality checks of trusted data. */
uint64_t util_hash64(const void *data, size_t len, uint64_t seed);

/* splitmix64 finaliser: the integer mix used by seeds and the input generator. */
uint64_t util_mix64(uint64_t x);

/* Monotonic clock in seconds. */
double util_now(void);

/* 64 random bits from the operating system (getrandom). */
uint64_t util_random64(void);

/* Directory holding the running executable (for sibling programs such as
 * ka-record-opencl). Returns a static string. */
const char *util_exe_dir(void);

/* Repository data root: $KA_HOME if set, else the parent of util_exe_dir()
 * (build/ka -> the checkout). Returns a static string. */
const char *util_data_root(void);

/* Run argv (argv[0] is a path) with stdout+stderr captured into a buffer of at
 * most cap bytes (the rest is dropped and *truncated set), a wall-clock limit
 * in seconds (0 = none) and optional working directory. Returns the exit
 * status (0..255), 128+signal if killed, or -1 with e set if it could not
 * start. On timeout returns 124. *out is NUL-terminated; caller frees. */
int util_run(char *const argv[], const char *cwd, double timeout_s, size_t cap, char **out,
	     size_t *out_len, int *truncated, struct ka_err *e);

/* Hex encoding of len bytes into out (2*len+1 chars). */
void util_hex(const void *data, size_t len, char *out);

/* The first error lines of a compiler log on one line, for a one-line
 * message: up to 3 lines holding "error:" (else the first 3 non-empty lines)
 * joined by " | ", tabs and CRs as spaces, cut to cap bytes with a NUL. */
void util_log_summary(const char *log, char *out, size_t cap);

/* A growing text buffer (allocation failures abort, see xrealloc). Start it
 * zeroed; after the first append s is NUL-terminated. The owner frees s. */
struct util_buf {
	char *s;
	size_t len, cap;
};

/* Append printf-formatted text to b (an encoding error appends nothing). */
void util_buf_printf(struct util_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap);

#endif
