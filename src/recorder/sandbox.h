/* sandbox.h: the recorder's confinement of candidate host code (docs/sandbox.md).
 *
 * sandbox_enter puts the calling process, in this order, into: its own
 * process group; new user, network and mount namespaces; a chroot holding only
 * the candidate's shared object; an empty environment; rlimits; no capability
 * (or, as real root without a user namespace, uid/gid 65534);
 * PR_SET_NO_NEW_PRIVS and non-dumpable; a Landlock ruleset that allows reading
 * the candidate file only; and a seccomp filter that denies process creation,
 * exec, sockets, ptrace, file changes, writes to descriptors other than 1..3
 * and the like. A denied call raises SIGSYS; the handler installed here writes
 * one line naming the call to the result descriptor and exits with
 * SANDBOX_EXIT_FORBIDDEN. It does not load the candidate and does not know
 * about OpenCL or CUDA. x86_64 only. */
#ifndef KA_SANDBOX_H
#define KA_SANDBOX_H

#include "../common/util.h"

/* The recorder's result descriptor (its stdout moved here; fd 1 becomes a
 * copy of stderr so that the candidate's printf lands in the log). */
#define SANDBOX_RESULT_FD 3
/* Exit status after the SIGSYS handler reported a denied call. */
#define SANDBOX_EXIT_FORBIDDEN 97

struct sandbox_report {
	int pgroup, userns, netns, mountns, chroot, drop_ids, rlimits, no_new_privs, nondumpable,
		landlock, seccomp;
	char so_path[4096]; /* where the candidate is, seen from inside */
	char text[512];	    /* "sandbox: userns=on netns=on ..." for the log */
};

/* Enter the sandbox. so_path is the candidate's shared object; its directory
 * becomes the root and must contain nothing else. cpu_s is the RLIMIT_CPU soft
 * limit in seconds. The protections that need privileges or kernel features
 * (namespaces, chroot, Landlock) fall back with their flag left 0; the rest
 * (rlimits, no_new_privs, seccomp) must succeed. 0 and r filled, or -1 with e
 * set (the process is then in an unknown state: exit). */
int sandbox_enter(const char *so_path, int cpu_s, struct sandbox_report *r, struct ka_err *e);

/* Tell the SIGSYS handler that candidate code is now loaded (changes the
 * wording of its report from a harness failure to a verdict). */
void sandbox_set_candidate_loaded(void);

/* Name of a system call number, or NULL if the filter does not name it. */
const char *sandbox_syscall_name(long nr);

#endif
