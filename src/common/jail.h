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
};

#define JAIL_DEFAULT_MEM (8ull << 30)
#define JAIL_DEFAULT_FSIZE (512ull << 20)

/* Fill o with the read-only paths every compiler needs (/usr and the
 * merged-/usr links, /etc/alternatives, /etc/ld.so.cache) plus the root of the
 * toolchain that holds `tool` (a program name found on PATH, or a path; for
 * /usr/local/cuda-13.0/bin/nvcc that is /usr/local/cuda-13.0 and the
 * /usr/local/cuda link), and work_dir. Limits stay 0 (defaults). 0, or -1
 * with e set when the tool cannot be found. */
int jail_opts_for_tool(struct jail_opts *o, const char *tool, const char *work_dir,
		       struct ka_err *e);

/* Add one more read-only path (a folder or a file; it must exist). 0, or -1
 * with e set (no room, or the path does not exist). */
int jail_add_ro(struct jail_opts *o, const char *path, struct ka_err *e);

/* In a forked child, before exec: confine the process as described above.
 * It may fork once (a PID namespace needs a new process as its init): the
 * process that returns 0 is the confined one; the other waits for it and
 * exits with its status, so the caller sees one child. On failure returns
 * -1 with e set; the caller must then _exit without running the compiler.
 * The child's environment is replaced (execvp then searches the new PATH). */
int jail_enter(const struct jail_opts *o, struct ka_err *e);

#endif
