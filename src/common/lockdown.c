/* lockdown.c: seccomp and Landlock for code run natively but not trusted.
 * See lockdown.h. */
#include "lockdown.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __x86_64__
#error "lockdown's seccomp filter is written for x86_64"
#endif

/* ---- Landlock ---- */

static int ll_allow(int rs, const char *path, uint64_t access)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0; /* a missing path allows nothing */
	struct stat st;
	struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		pb.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
				     LANDLOCK_ACCESS_FS_WRITE_FILE;
	int rc = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	return rc;
}

int lockdown_landlock(const char *const *ro, const char *const *rw, const char *const *dev)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return -1;
	struct landlock_ruleset_attr ra = {0};
	ra.handled_access_fs = ((uint64_t)LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */
	int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0)
		return -1;
	const uint64_t rdx = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
			     LANDLOCK_ACCESS_FS_READ_DIR;
	int rc = 0;
	for (int i = 0; rc == 0 && rw && rw[i]; i++)
		rc = ll_allow(rs, rw[i], ra.handled_access_fs);
	for (int i = 0; rc == 0 && ro && ro[i]; i++)
		rc = ll_allow(rs, ro[i], rdx);
	for (int i = 0; rc == 0 && dev && dev[i]; i++)
		rc = ll_allow(rs, dev[i],
			      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE);
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		rc = -1;
	if (rc == 0 && syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		rc = -1;
	close(rs);
	return rc;
}

/* ---- seccomp ---- */

#define EMIT(c, k, t, f)                                                                           \
	do {                                                                                       \
		if (n < cap)                                                                       \
			p[n] = (struct sock_filter){(uint16_t)(c), (uint8_t)(t), (uint8_t)(f),     \
						    (uint32_t)(k)};                                \
		n++;                                                                               \
	} while (0)

int lockdown_seccomp(void)
{
	enum { cap = 128 };
	struct sock_filter p[cap];
	int n = 0;
	const uint32_t deny = SECCOMP_RET_ERRNO | EPERM, allow = SECCOMP_RET_ALLOW;
	const uint32_t me = (uint32_t)getpid();
	static const int denied[] = {SYS_ptrace,
				     SYS_process_vm_readv,
				     SYS_process_vm_writev,
				     SYS_execve,
				     SYS_execveat,
				     SYS_socket,
				     SYS_tkill,
				     SYS_pidfd_open,
				     SYS_pidfd_send_signal,
				     SYS_pidfd_getfd,
				     SYS_mount,
				     SYS_umount2,
				     SYS_unshare,
				     SYS_setns,
				     SYS_pivot_root,
				     SYS_chroot,
				     SYS_bpf,
				     SYS_keyctl,
				     SYS_add_key,
				     SYS_request_key,
				     SYS_init_module,
				     SYS_finit_module,
				     SYS_delete_module,
				     SYS_kexec_load,
				     SYS_perf_event_open,
				     SYS_kcmp,
				     SYS_open_by_handle_at};
	/* Signals only to this process: arg 0 (a pid_t: its low word). */
	static const int own_pid_only[] = {SYS_kill, SYS_tgkill, SYS_rt_sigqueueinfo,
					   SYS_rt_tgsigqueueinfo};
	EMIT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	EMIT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
	EMIT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	/* x32 system calls (bit 30) are refused whole. */
	EMIT(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	EMIT(BPF_RET | BPF_K, deny, 0, 0);
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		EMIT(BPF_JMP | BPF_JEQ | BPF_K, denied[i], 0, 1);
		EMIT(BPF_RET | BPF_K, deny, 0, 0);
	}
	for (size_t i = 0; i < sizeof own_pid_only / sizeof own_pid_only[0]; i++) {
		EMIT(BPF_JMP | BPF_JEQ | BPF_K, own_pid_only[i], 0, 4);
		EMIT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args), 0, 0);
		EMIT(BPF_JMP | BPF_JEQ | BPF_K, me, 0, 1);
		EMIT(BPF_RET | BPF_K, allow, 0, 0);
		EMIT(BPF_RET | BPF_K, deny, 0, 0);
	}
	EMIT(BPF_RET | BPF_K, allow, 0, 0);
	if (n > cap)
		return -1;
	struct sock_fprog fp = {.len = (unsigned short)n, .filter = p};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
}
