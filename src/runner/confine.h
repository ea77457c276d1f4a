/* confine.h: confinement of a runner process whose device runs candidate
 * code as native code in the runner's own address space (PoCL: an OpenCL C
 * kernel, inline asm included, is compiled to the CPU and can make any system
 * call). Called once the runner has opened what it needs (the platform, the
 * protocol's descriptors): from then on the process
 *
 *  - has no core dumps, a file-size limit and a generous address-space limit
 *    (KA_RUNNER_MEM_MB MiB, default 64 GiB: PoCL reserves much more than it
 *    touches), lowered while it builds candidate source (confine_build_*);
 *  - keeps only the driver variables of its environment (the parent already
 *    starts it with those only: src/runclient.c);
 *  - sees, through Landlock, only the system's libraries and configuration
 *    (/usr and the merged-/usr links, /etc), /sys/devices/system/cpu,
 *    /proc/self, /dev/null, /dev/zero, /dev/urandom and the driver's cache
 *    folder (read-write): not the user's files, not another process's /proc;
 *  - runs under a seccomp filter that refuses (EPERM) signals to any other
 *    process, ptrace, process_vm_readv/writev, execve and execveat, socket
 *    (no network), and the namespace, mount, module, bpf and keyring calls.
 *
 * Linux x86-64 only. Trusted code; it knows nothing of OpenCL. */
#ifndef KA_CONFINE_H
#define KA_CONFINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/util.h"

/* What confine_enter achieved (for the log and hello). */
struct confine_report {
	bool seccomp;  /* the filter is in force (always, when 0 is returned) */
	bool landlock; /* the file-system view is in force */
	char text[256];
};

/* Drop every environment variable that is not a driver's (the list of
 * src/runclient.c). Call first thing in main. */
void confine_clean_env(void);

/* Confine this process as above. The seccomp filter is mandatory (-1 with e
 * when it cannot be installed); Landlock is used where the kernel has it
 * (r->landlock says which). */
int confine_enter(struct confine_report *r, struct ka_err *e);

/* Around a build of candidate source inside this process (PoCL compiles
 * OpenCL C in-process, so a macro bomb in a kernel grows the runner): the
 * soft address-space limit lowered to what is mapped now plus the compile
 * memory cap of every other compiler (common/jail.h's jail_mem_limit:
 * KA_COMPILE_MEM_MB, default 8 GiB), within the hard limit; a build over it
 * fails to allocate (LLVM then aborts: the runner dies during the load,
 * which the parent reports as the candidate's compile_error).
 * confine_build_end restores the limit saved in *saved. No-op under
 * AddressSanitizer, which runs without an address-space cap. */
struct confine_build {
	unsigned long long soft; /* the soft limit to restore */
	bool set;		 /* a limit was lowered */
};
void confine_build_begin(struct confine_build *saved);
void confine_build_end(const struct confine_build *saved);

/* After a build of candidate source failed: 0, or -1 with e (a failure of
 * the grader, never the candidate's compile_error) when the driver's cache
 * folder, where PoCL writes every program it builds, has less free space
 * than a compile needs (jail_check_space's floor), so the build may have
 * failed for want of it. 0 when the folder does not exist. */
int confine_cache_space(struct ka_err *e);

/* The runner's private driver cache, from ka (--private-cache DIR: a folder
 * of this runner session alone, which ka removes when the session ends):
 * PoCL's cache folder from now on (POCL_CACHE_DIR is set here, so call it
 * before the platform is opened), which confine_cache_trim may empty. */
void confine_cache_private(const char *dir);

/* The bytes the private cache folder holds (0 without one). */
uint64_t confine_cache_bytes(void);

/* After a build of candidate source: when the cache folder is the private
 * one and holds more than cap bytes (0: any; CONFINE_CACHE_CAP: the total
 * cap, 1 GiB or KA_RUNNER_CACHE_MB MiB), empty it; the programs built stay
 * loaded, and PoCL writes again what a later build or launch needs. One line
 * on stderr says so. Returns 1 when it emptied the folder, else 0. */
#define CONFINE_CACHE_CAP UINT64_MAX
int confine_cache_trim(uint64_t cap);

/* The test-only probe of `ka-run-<target> --self-test-confinement`: after
 * confine_enter, try what a hostile kernel would: open secret_path (when not
 * NULL), read /proc/<parent>/environ, find secret_env in the environment,
 * kill(parent, 0), ptrace-attach the parent, process_vm_readv, socket(),
 * execve(/bin/true). Prints one line per attempt, "refused X" or
 * "ALLOWED X", on stdout (fd 1). Returns the number allowed. */
int confine_self_test(const char *secret_path, const char *secret_env);

#endif
