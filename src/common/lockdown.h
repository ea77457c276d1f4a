/* lockdown.h: the two kernel mechanisms that confine a process which is about
 * to run code it does not trust natively: a seccomp filter refusing the
 * system calls that reach other processes, the network, new programs or the
 * kernel's configuration, and a Landlock view of the file system. Used by the
 * PoCL runner (src/runner/confine.c), where candidate kernels run in-process,
 * and by the frontier's gold child (src/tracks/frontier.c), where a proposed
 * reference runs. Linux x86-64 only. */
#ifndef KA_LOCKDOWN_H
#define KA_LOCKDOWN_H

/* Install a seccomp filter (after no_new_privs) that refuses with EPERM:
 * ptrace, process_vm_readv/writev, execve and execveat, socket, the pidfd
 * calls, tkill, mount and namespace calls, chroot, bpf, the keyring, module
 * loading, kexec, perf_event_open, kcmp and open_by_handle_at, every x32
 * call; and kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo aimed at any
 * process but this one. A foreign architecture kills the process. 0, or -1
 * with errno. */
int lockdown_seccomp(void);

/* Restrict this process's file access through Landlock (ABI 1) to: reading
 * and executing under each path of ro, everything under each path of rw,
 * reading and writing each file of dev (NULL-terminated lists; a missing
 * path allows nothing). Files already open stay usable. 0 in force, -1 when
 * the kernel has no Landlock or a step failed (nothing restricted then, or
 * the ruleset is incomplete and was not applied). */
int lockdown_landlock(const char *const *ro, const char *const *rw, const char *const *dev);

#endif
