/* jail.h: confinement of a compiler (gcc, g++, nvcc) run on model-written
 * source (docs/grader.md, "Files of the grading host"). A compiler is trusted
 * code, its input is not: preprocessor includes and assembler directives
 * (.incbin, .include) can read any file the compiler can, and a template or
 * macro bomb can take all memory. jail_enter, called in a forked child just
 * before exec, makes the child see only the toolchain, the allowed header
 * folders and its own work folder:
 *
 *  - its own process group, and SIGKILL when its parent (ka) dies;
 *  - new user (when not already root), mount, PID, network, IPC and UTS
 *    namespaces; a root file system that is a tmpfs holding read-only binds of
 *    the listed paths, a read-write bind of the work folder, /dev/null,
 *    /dev/zero, /dev/urandom, a fresh /proc of its own PID namespace and an
 *    empty /tmp; nothing else of the host exists inside;
 *  - where namespaces are not available: a Landlock ruleset that allows
 *    reading only the listed paths and writing only the work folder;
 *  - an environment of PATH, HOME, TMPDIR (the work folder) and LANG only;
 *  - rlimits on address space, CPU time, file size and core dumps;
 *    PR_SET_NO_NEW_PRIVS.
 *
 * If neither namespaces nor Landlock can be had, jail_enter fails (the
 * caller reports a harness failure, never a candidate's verdict), unless
 * KA_COMPILE_JAIL=off is set in ka's environment, which a user chooses on a
 * machine that holds nothing worth reading. It knows nothing of tasks or
 * targets. Linux only. */
#ifndef KA_JAIL_H
#define KA_JAIL_H

#include <stdint.h>

#include "util.h"

#define JAIL_MAX_PATHS 24

struct jail_opts {
	const char *work_dir;		      /* read-write; the child's cwd and TMPDIR */
	const char *ro_paths[JAIL_MAX_PATHS]; /* read-only, same path inside; NULL-ended */
	uint64_t mem_bytes;		      /* RLIMIT_AS; 0: JAIL_DEFAULT_MEM */
	int cpu_s;			      /* RLIMIT_CPU; 0: none */
	uint64_t file_bytes;		      /* RLIMIT_FSIZE; 0: JAIL_DEFAULT_FSIZE */
	char *const *env_add; /* "NAME=value" set after the clean environment; NULL-ended */
};

#define JAIL_DEFAULT_MEM (8ull << 30)
#define JAIL_PATH "/usr/local/bin:/usr/bin:/bin" /* PATH inside the jail */
#define JAIL_DEFAULT_FSIZE (512ull << 20)

/* Fill o with the read-only paths every compiler needs (/usr and the
 * merged-/usr links, /etc/alternatives, /etc/ld.so.cache) plus the root of the
 * toolchain that holds `tool` (a program name found on PATH, or a path; for
 * /usr/local/cuda-13.0/bin/nvcc that is /usr/local/cuda-13.0 and the
 * /usr/local/cuda link), and work_dir. Limits stay 0 (defaults). 0, or -1
 * with e set when the tool cannot be found. */
int jail_opts_for_tool(struct jail_opts *o, const char *tool, const char *work_dir,
		       struct ka_err *e);

/* Fill o with only the read-only paths every program needs (as above, without
 * a toolchain root) and work_dir: for a program that is one file, added with
 * jail_add_ro. Never fails. */
void jail_opts_base(struct jail_opts *o, const char *work_dir);

/* Options for a compiler run on model-written source: jail_opts_for_tool,
 * plus the repository's include/ (util_data_root()/include) read-only, and
 * the CPU limit cpu_s (the caller's wall-clock limit, rounded up). The memory
 * limit is the default (jail_enter: KA_COMPILE_MEM_MB or JAIL_DEFAULT_MEM).
 * 0, or -1 with e set. */
int jail_opts_compiler(struct jail_opts *o, const char *tool, const char *work_dir, double cpu_s,
		       struct ka_err *e);

/* Add one more read-only path (a folder or a file; it must exist). 0, or -1
 * with e set (no room, or the path does not exist). */
int jail_add_ro(struct jail_opts *o, const char *path, struct ka_err *e);

/* In a forked child, before exec: confine the process as described above.
 * It may fork once (a PID namespace needs a new process as its init): the
 * process that returns 0 is the confined one; the other waits for it and
 * exits with its status, so the caller sees one child. On failure returns
 * -1 with e set; the caller must then _exit without running the compiler.
 * The child's environment is replaced (execvp then searches the new PATH).
 * A mem_bytes of 0 means KA_COMPILE_MEM_MB (in ka's environment) MiB, else
 * JAIL_DEFAULT_MEM. */
int jail_enter(const struct jail_opts *o, struct ka_err *e);

/* The RLIMIT_AS jail_enter gives the confined process: o->mem_bytes, else
 * KA_COMPILE_MEM_MB (in ka's environment) MiB, else JAIL_DEFAULT_MEM. o may
 * be NULL. */
uint64_t jail_mem_limit(const struct jail_opts *o);

/* Scan an assembler input file (a compiler's .s, kept with -save-temps) for
 * directives that read other files or build directives the scan would not
 * see: .incbin, .include, .import, and the macro facilities (.macro, .irp,
 * .irpc, .altmacro, .purgem) through which `.inc\()bin` could be
 * assembled. Case-insensitive; statements split at newlines and ';';
 * comments and strings skipped. 0 when clean; 1 with why (cap bytes) naming
 * the directive and the line; -1 with why when the file cannot be read. */
int jail_check_asm_file(const char *path, char *why, size_t cap);

/* jail_check_asm_file on every "*.s" file directly in dir (where -save-temps
 * left the compiler's assembler input). 0 clean, 1 refused (why), -1 with why
 * when none is there or one cannot be read. */
int jail_check_asm_dir(const char *dir, char *why, size_t cap);

/* A quick refusal before compiling a C, C++ or CUDA source (n bytes): the
 * file-reading directives written literally in it, outside comments:
 * `.incbin` and `.include "` (in asm strings), `#embed`, `__has_embed`, and
 * `dependency` in a source that has a #pragma or _Pragma (#pragma GCC
 * dependency reads a file). Forms the preprocessor or the compiler builds
 * (concatenated strings, \x2e escapes, macros) are caught afterwards by
 * jail_check_asm_file on the assembler input. 1 with why, or 0. */
int jail_check_source_text(const char *text, size_t n, char *why, size_t cap);

/* Bytes that must stay free on the work folder's file system after a failed
 * compile for the failure to be the candidate's (see jail_check_space). */
#define JAIL_MIN_FREE (64ull << 20)

/* After a compiler failed (and its work folder was cleaned): 0 when the file
 * system holding dir has at least JAIL_MIN_FREE bytes available, else -1 with
 * e saying that the disk is full: the failure may be the harness's, so the
 * caller must report it as an error, never store it as a verdict. */
int jail_check_space(const char *dir, struct ka_err *e);

/* Copy a compiler log (n bytes) into out (cap bytes, NUL-terminated) with
 * every byte that is not printable ASCII, newline or tab written as \xNN, so
 * that a log cannot carry terminal escapes, NULs or bytes that are not text.
 * Cut (with "[log truncated]") where out is full. Returns the length. */
size_t jail_log_escape(const char *log, size_t n, char *out, size_t cap);

#endif
