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

/* A large buffer of n zeroed bytes that no child process inherits
 * (MADV_DONTFORK): a fork copies the page tables of everything the parent
 * touched (fork + exec: 14.5 ms with 256 MiB, 0.9 ms with it not inherited,
 * tools/diag/fork_cost.c on this project's 2-core machine), and the
 * grader's children exec at once. Aborts on exhaustion like xmalloc; free
 * with util_free_unforked (NULL is a no-op). Never touch it in a child. */
void *util_alloc_unforked(size_t n);
void util_free_unforked(void *p);

/* Read a whole file of at most cap bytes into a NUL-terminated buffer the
 * caller frees. Returns 0, or -1 with e set (missing, unreadable, too big). */
int util_read_file(const char *path, size_t cap, char **out, size_t *len, struct ka_err *e);

/* Write len bytes to path atomically (temporary file + rename). 0 or -1. */
int util_write_file(const char *path, const void *data, size_t len, struct ka_err *e);

/* mkdir -p. 0 or -1 with e set. */
int util_mkdirs(const char *path, struct ka_err *e);

/* Remove a directory tree (best effort, no error). */
void util_rmtree(const char *path);

/* Write all n bytes of p to fd, retrying short writes and EINTR (at most
 * 1 GiB a write). 0, or -1 with errno set. */
int util_write_fd(int fd, const void *p, size_t n);

/* Bytes the files under path take on disk (their blocks; symbolic links are
 * not followed); 0 when path does not exist. */
uint64_t util_tree_bytes(const char *path);

/* 64-bit hash of bytes (FNV-1a folded through a splitmix finaliser). Not
 * cryptographic: for cache keys and equality checks of trusted data. */
uint64_t util_hash64(const void *data, size_t len, uint64_t seed);

/* splitmix64 finaliser: the integer mix used by seeds and the input generator. */
uint64_t util_mix64(uint64_t x);

/* Monotonic clock in seconds. */
double util_now(void);

/* Lower the calling thread's CPU priority by inc (Linux: nice is per thread;
 * processes the thread starts inherit it): for background work (compiling
 * ahead) that must not take the CPU from grading. Failure is ignored: it
 * only costs speed. */
void util_background_priority(int inc);

/* In a child between fork and exec (async-signal-safe): its own process
 * group, and SIGINT, SIGTERM, SIGHUP and SIGQUIT ignored and blocked (both
 * inherited across exec). A stop meant for a run (Ctrl-C in a terminal
 * reaches the whole foreground group; Slurm signals every process of a job)
 * then reaches ka alone, which finishes the steps under way and stops; its
 * helpers (compilers, recorder, runner) never die of it mid-grade, which
 * would read as the candidate's failure. They still die with ka
 * (PR_SET_PDEATHSIG) and by ka's SIGKILL on a timeout. */
void util_child_detach_signals(void);

/* 1 when an exit code as util_run gives it (128 + the signal) is a death by
 * SIGKILL or by one of the stop signals above: something outside the
 * program ended it (the OOM killer, a job's end), not its input. */
int util_code_outside_death(int code);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ" (ISO 8601, the form
 * scorecards and manifests carry) in buf (cap >= 21 bytes). */
void util_iso_now(char *buf, size_t cap);

/* 64 random bits from the operating system (getrandom). */
uint64_t util_random64(void);

/* Directory holding the running executable (for sibling programs such as
 * ka-record-opencl). Returns a static string. */
const char *util_exe_dir(void);

/* Repository data root: $KA_HOME if set, else the parent of util_exe_dir()
 * (build/ka -> the checkout). Returns a static string. */
const char *util_data_root(void);

/* The one growing buffer: text or bytes, with a cap on what it holds (as
 * curl's dynbuf). Going over the cap is a result the caller handles: the
 * append keeps what fits, sets over, and returns -1, and every later append
 * returns -1 too. Allocation failures abort (see xrealloc). A zeroed buffer
 * is ready to use with UTIL_BUF_DEFAULT_CAP; util_buf_init_cap sets another
 * cap (0 included). After the first append, s is NUL-terminated. The owner
 * frees s (util_buf_free) or takes it (util_buf_take). */
struct util_buf {
	char *s;
	size_t len, cap; /* bytes held; bytes allocated */
	size_t max;	 /* most bytes held (when max_set) */
	int max_set, over;
};

/* The cap of a zeroed buffer or util_buf_init (256 MiB): for text ka builds
 * from its own data; outside data gets its own cap. */
#define UTIL_BUF_DEFAULT_CAP ((size_t)256 << 20)

/* An empty buffer with the default cap. */
void util_buf_init(struct util_buf *b);
/* An empty buffer that holds at most max bytes (plus the NUL). */
void util_buf_init_cap(struct util_buf *b, size_t max);

/* Append n bytes (0, or -1 when they did not all fit: see above). */
int util_buf_add(struct util_buf *b, const void *p, size_t n);
int util_buf_puts(struct util_buf *b, const char *s);
int util_buf_putc(struct util_buf *b, char c);
/* Append printf-formatted text: 0, or -1 when it went over the cap (the
 * part that fits is kept) or on an encoding error (nothing appended). */
int util_buf_printf(struct util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int util_buf_vprintf(struct util_buf *b, const char *fmt, va_list ap);

/* The text, NUL-terminated ("" when nothing was appended), now the
 * caller's to free; b is left empty with the same cap. */
char *util_buf_take(struct util_buf *b);
/* Free the text; b is left empty with the same cap. NULL is fine. */
void util_buf_free(struct util_buf *b);

struct jail_opts; /* common/jail.h */

/* Options of util_run_child. Start from {0}: no working directory change,
 * no extra environment, no time limit, nothing captured (caps 0), stderr
 * captured apart from stdout, stdin from /dev/null, no jail. */
struct util_run_opts {
	const char *cwd;	      /* working directory of the child; NULL: ours */
	char *const *env_add;	      /* "NAME=VALUE" entries added to our environment */
	char *const *env;	      /* non-NULL: the child's whole environment instead of
				       * ours (env_add unused); for a program that runs
				       * model code, whose memory must not hold ours */
	double timeout_s;	      /* wall-clock limit in seconds; 0: none */
	size_t out_cap, err_cap;      /* bytes of stdout / stderr kept (the rest dropped) */
	int merge_err;		      /* stderr goes into the stdout capture (err unused) */
	int stdin_fd;		      /* > 0: the child's stdin; otherwise /dev/null */
	int kill_at_cap;	      /* stop the child as soon as stdout goes over out_cap */
	const struct jail_opts *jail; /* non-NULL: the child calls jail_enter before exec
				       * (a compiler on model-written source); its
				       * environment is then the jail's plus env_add */
};

/* What util_run_child saw. out and err are NUL-terminated once the call
 * returns 0; util_run_result_free frees them. */
struct util_run_result {
	struct util_buf out, err;
	int wait_status;		  /* raw waitpid status */
	int code;			  /* exit status, 128+signal, or 124 on timeout */
	int timed_out;			  /* the wall-clock limit killed it */
	int out_truncated, err_truncated; /* a capture went over its cap */
	int killed_by_ka;		  /* util_run_child's own SIGKILL ended it
					   * (the timeout, kill_at_cap) */
};

/* 1 when r's child died of a SIGKILL that util_run_child did not send:
 * the OOM killer, a person, a job's end, or the child itself (RLIMIT_CPU's
 * hard limit, kill(2)); never its timeout or its output cap. */
int util_run_killed_outside(const struct util_run_result *r);

/* A NULL-ended array of the entries of our environment that start with one
 * of the NULL-ended prefixes (pointers into environ, the array the caller's
 * to free): the whole environment of a child that must not see the rest. */
char **util_env_keep(const char *const *prefixes);

/* The first executable `name` on PATH (as execvp would find it) into out
 * (cap bytes): 0, or -1 when there is none. */
int util_which(const char *name, char *out, size_t cap);

/* The one child-process runner. Runs argv (argv[0] a path or a name looked
 * up in PATH) in its own process group, with PR_SET_PDEATHSIG so the child
 * dies with this thread's process; reads stdout and stderr until both close
 * and the child has exited, keeping at most the caps; on timeout kills the
 * whole group (grandchildren too) and sets timed_out; whatever the group
 * left running when the child exits is killed as well. With o->jail the
 * child is confined (common/jail.h) before exec; when the jail cannot be
 * built, or a jailed program cannot be executed, that is the harness's
 * failure: -1 with e naming it, never an exit status. Returns 0 with *r
 * filled (free with util_run_result_free), or -1 with e set when the child
 * could not be started (r then holds nothing to free). */
int util_run_child(char *const argv[], const struct util_run_opts *o, struct util_run_result *r,
		   struct ka_err *e);

/* Free the captures of r; a zeroed r is fine. */
void util_run_result_free(struct util_run_result *r);

/* util_run_child with stdout+stderr merged into one capture of cap bytes,
 * a wall-clock limit in seconds (0 = none) and an optional working
 * directory. Returns the exit status (0..255), 128+signal if killed, 124 on
 * timeout, or -1 with e set if it could not start. *out is NUL-terminated;
 * caller frees. */
int util_run(char *const argv[], const char *cwd, double timeout_s, size_t cap, char **out,
	     size_t *out_len, int *truncated, struct ka_err *e);

/* Hex encoding of len bytes into out (2*len+1 chars). */
void util_hex(const void *data, size_t len, char *out);

/* The first error lines of a compiler log on one line, for a one-line
 * message: up to 3 lines holding "error:" (else the first 3 non-empty lines)
 * joined by " | ", tabs and CRs as spaces, cut to cap bytes with a NUL. */
void util_log_summary(const char *log, char *out, size_t cap);

#endif
