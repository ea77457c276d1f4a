/* sandbox.c: confinement of the recorder before it loads candidate host code
 * (sandbox.h, docs/sandbox.md). Everything here runs before any candidate byte
 * executes; the filter stays for the life of the process. It does not read
 * the request, load the candidate or write the plan: record_main.c does. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "the recorder's seccomp filter is written for x86_64"
#endif

/* ---- the seccomp rule table: one row per system call the filter names ---- */

enum rule_kind {
	RULE_DENY,	 /* always: SIGSYS, reported */
	RULE_ERRNO,	 /* always: fails with errno `arg`, silently (libc probes it) */
	RULE_WRITE_FD,	 /* arg0 (fd) > SANDBOX_RESULT_FD: reported */
	RULE_OPEN_FLAGS, /* args[arg] has a write/create flag: reported */
	RULE_SELF_PID,	 /* arg0 is not this process: reported */
	RULE_ARG0_EQ,	 /* arg0 == arg: reported */
};

struct rule {
	int nr;
	const char *name;
	enum rule_kind kind;
	uint32_t arg;
	const char *why;
};

#define OPEN_WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)
/* System calls numbered above this (added after the table was written) are
 * denied: the filter cannot judge what it does not know. */
#define SANDBOX_MAX_KNOWN_NR 462

/* a table of rules, several to a line */
/* clang-format off */
#define D(n, why) {SYS_##n, #n, RULE_DENY, 0, why}
static const struct rule rules[] = {
	/* processes and other processes' memory */
	D(fork, "process creation"), D(vfork, "process creation"),
	D(clone, "process or thread creation"), {435, "clone3", RULE_DENY, 0, "process creation"},
	D(execve, "exec"), D(execveat, "exec"), D(ptrace, "ptrace"),
	D(process_vm_readv, "another process's memory"),
	D(process_vm_writev, "another process's memory"), D(kcmp, "process inspection"),
	{434, "pidfd_open", RULE_DENY, 0, "other processes"},
	{438, "pidfd_getfd", RULE_DENY, 0, "other processes"},
	{424, "pidfd_send_signal", RULE_DENY, 0, "signals to other processes"},
	{440, "process_madvise", RULE_DENY, 0, "other processes"},
	{448, "process_mrelease", RULE_DENY, 0, "other processes"},
	{SYS_kill, "kill", RULE_SELF_PID, 0, "signal to another process"},
	{SYS_tkill, "tkill", RULE_SELF_PID, 0, "signal to another thread"},
	{SYS_tgkill, "tgkill", RULE_SELF_PID, 0, "signal to another process"},
	{SYS_rt_sigaction, "rt_sigaction", RULE_ARG0_EQ, SIGSYS, "replacing the SIGSYS handler"},
	{SYS_prctl, "prctl", RULE_ARG0_EQ, PR_SET_DUMPABLE, "PR_SET_DUMPABLE"},
	D(unshare, "namespaces"), D(setns, "namespaces"),
	/* network */
	D(socket, "network"), D(socketpair, "sockets"), D(connect, "network"),
	D(bind, "network"), D(listen, "network"), D(accept, "network"), D(accept4, "network"),
	D(sendto, "network"), D(recvfrom, "network"), D(sendmsg, "network"),
	D(recvmsg, "network"), D(sendmmsg, "network"), D(recvmmsg, "network"),
	/* files: opening for writing, changing the file system */
	{SYS_open, "open", RULE_OPEN_FLAGS, 1, "opening a file for writing"},
	{SYS_openat, "openat", RULE_OPEN_FLAGS, 2, "opening a file for writing"},
	{437, "openat2", RULE_DENY, 0, "openat2"}, D(creat, "creating a file"),
	D(open_by_handle_at, "files by handle"), D(name_to_handle_at, "files by handle"),
	D(unlink, "removing a file"), D(unlinkat, "removing a file"), D(rename, "renaming a file"),
	D(renameat, "renaming a file"), D(renameat2, "renaming a file"),
	D(mkdir, "creating a directory"), D(mkdirat, "creating a directory"),
	D(rmdir, "removing a directory"), D(link, "creating a link"),
	D(linkat, "creating a link"), D(symlink, "creating a link"),
	D(symlinkat, "creating a link"), D(chmod, "changing file modes"),
	D(fchmod, "changing file modes"), D(fchmodat, "changing file modes"),
	{452, "fchmodat2", RULE_DENY, 0, "changing file modes"}, D(chown, "changing owners"),
	D(fchown, "changing owners"), D(lchown, "changing owners"),
	D(fchownat, "changing owners"), D(truncate, "truncating a file"),
	D(ftruncate, "truncating a file"), D(fallocate, "allocating file space"),
	D(mknod, "creating a device node"), D(mknodat, "creating a device node"),
	D(utime, "file times"), D(utimes, "file times"), D(utimensat, "file times"),
	D(futimesat, "file times"), D(setxattr, "extended attributes"),
	D(lsetxattr, "extended attributes"), D(fsetxattr, "extended attributes"),
	D(removexattr, "extended attributes"), D(lremovexattr, "extended attributes"),
	D(fremovexattr, "extended attributes"),
	/* writing anywhere but stdout/stderr/the result descriptor */
	{SYS_write, "write", RULE_WRITE_FD, 0, "writing to a descriptor other than 1..3"},
	{SYS_pwrite64, "pwrite64", RULE_WRITE_FD, 0, "writing to a descriptor other than 1..3"},
	{SYS_writev, "writev", RULE_WRITE_FD, 0, "writing to a descriptor other than 1..3"},
	{SYS_pwritev, "pwritev", RULE_WRITE_FD, 0, "writing to a descriptor other than 1..3"},
	{SYS_pwritev2, "pwritev2", RULE_WRITE_FD, 0, "writing to a descriptor other than 1..3"},
	D(sendfile, "copying between descriptors"), D(splice, "copying between descriptors"),
	D(tee, "copying between descriptors"), D(vmsplice, "copying between descriptors"),
	D(copy_file_range, "copying between descriptors"),
	/* mounts and roots */
	D(mount, "mounting"), D(umount2, "mounting"), D(pivot_root, "changing the root"),
	D(chroot, "changing the root"), {430, "fsopen", RULE_DENY, 0, "mounting"},
	{431, "fsconfig", RULE_DENY, 0, "mounting"}, {432, "fsmount", RULE_DENY, 0, "mounting"},
	{433, "fspick", RULE_DENY, 0, "mounting"}, {429, "move_mount", RULE_DENY, 0, "mounting"},
	{428, "open_tree", RULE_DENY, 0, "mounting"}, {442, "mount_setattr", RULE_DENY, 0, "mounting"},
	/* kernel interfaces a launcher never needs */
	D(bpf, "bpf"), D(perf_event_open, "performance counters"),
	{425, "io_uring_setup", RULE_DENY, 0, "io_uring"},
	{426, "io_uring_enter", RULE_DENY, 0, "io_uring"},
	{427, "io_uring_register", RULE_DENY, 0, "io_uring"},
	D(memfd_create, "anonymous files"), {447, "memfd_secret", RULE_DENY, 0, "anonymous files"},
	D(userfaultfd, "userfaultfd"), D(personality, "personality"), D(keyctl, "key ring"),
	D(add_key, "key ring"), D(request_key, "key ring"), D(reboot, "reboot"),
	D(kexec_load, "kexec"), D(kexec_file_load, "kexec"), D(init_module, "kernel modules"),
	D(finit_module, "kernel modules"), D(delete_module, "kernel modules"),
	D(swapon, "swap"), D(swapoff, "swap"), D(acct, "accounting"),
	D(settimeofday, "setting the clock"), D(clock_settime, "setting the clock"),
	D(clock_adjtime, "setting the clock"), D(adjtimex, "setting the clock"),
	D(sethostname, "host name"), D(setdomainname, "host name"), D(iopl, "I/O ports"),
	D(ioperm, "I/O ports"), D(quotactl, "quotas"), D(syslog, "kernel log"),
	D(vhangup, "terminals"), D(uselib, "uselib"), D(fanotify_init, "fanotify"),
	D(modify_ldt, "modify_ldt"), D(lookup_dcookie, "lookup_dcookie"),
	D(move_pages, "other processes' pages"), D(migrate_pages, "other processes' pages"),
	/* System V and POSIX IPC: channels to other processes */
	D(shmget, "shared memory"), D(shmat, "shared memory"), D(shmctl, "shared memory"),
	D(semget, "semaphores"), D(semop, "semaphores"), D(semctl, "semaphores"),
	D(semtimedop, "semaphores"), D(msgget, "message queues"), D(msgsnd, "message queues"),
	D(msgrcv, "message queues"), D(msgctl, "message queues"), D(mq_open, "message queues"),
	D(mq_unlink, "message queues"), D(mq_timedsend, "message queues"),
	D(mq_timedreceive, "message queues"), D(mq_notify, "message queues"),
	D(mq_getsetattr, "message queues"),
	/* identities and capabilities */
	D(setuid, "changing identity"), D(setgid, "changing identity"),
	D(setreuid, "changing identity"), D(setregid, "changing identity"),
	D(setresuid, "changing identity"), D(setresgid, "changing identity"),
	D(setfsuid, "changing identity"), D(setfsgid, "changing identity"),
	D(setgroups, "changing identity"), D(capset, "capabilities"),
	/* a terminal ioctl (TIOCSTI) could type into the parent's terminal; libc
	 * asks isatty() through ioctl, so it fails quietly instead */
	{SYS_ioctl, "ioctl", RULE_ERRNO, ENOTTY, "ioctl"},
};
/* clang-format on */
#undef D

#define N_RULES ((int)(sizeof rules / sizeof rules[0]))
#define DATA_X32 0xFFFFu
#define DATA_NEW 0xFFFEu

const char *sandbox_syscall_name(long nr)
{
	for (int i = 0; i < N_RULES; i++)
		if (rules[i].nr == nr)
			return rules[i].name;
	return NULL;
}

/* ---- the SIGSYS handler: async-signal-safe string building only ---- */

static volatile sig_atomic_t candidate_loaded;

void sandbox_set_candidate_loaded(void)
{
	candidate_loaded = 1;
}

struct sbuf {
	char b[512];
	size_t n;
};

static void sb_str(struct sbuf *s, const char *t)
{
	while (*t && s->n < sizeof s->b - 2)
		s->b[s->n++] = *t++;
}

static void sb_num(struct sbuf *s, unsigned long long v, int hex)
{
	char tmp[24];
	int k = 0;
	unsigned base = hex ? 16 : 10;
	do {
		tmp[k++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && k < (int)sizeof tmp);
	if (hex)
		sb_str(s, "0x");
	while (k > 0 && s->n < sizeof s->b - 2)
		s->b[s->n++] = tmp[--k];
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	unsigned data = (unsigned)si->si_errno & SECCOMP_RET_DATA;
	long long a0 = uc->uc_mcontext.gregs[REG_RDI];
	long long a1 = uc->uc_mcontext.gregs[REG_RSI];
	long long a2 = uc->uc_mcontext.gregs[REG_RDX];
	struct sbuf s = {.n = 0};
	sb_str(&s, candidate_loaded ? "verdict forbidden\t"
				    : "harness the recorder itself hit its filter: ");
	sb_str(&s, "system call ");
	if (data < (unsigned)N_RULES) {
		const struct rule *r = &rules[data];
		sb_str(&s, r->name);
		sb_str(&s, " (");
		sb_str(&s, r->why);
		if (r->kind == RULE_WRITE_FD) {
			sb_str(&s, ": fd ");
			sb_num(&s, (unsigned long long)a0, 0);
		} else if (r->kind == RULE_OPEN_FLAGS) {
			sb_str(&s, ": flags ");
			sb_num(&s, (unsigned long long)(r->arg == 1 ? a1 : a2), 1);
		} else if (r->kind == RULE_SELF_PID) {
			sb_str(&s, ": pid ");
			sb_num(&s, (unsigned long long)(unsigned)a0, 0);
		}
		sb_str(&s, ")");
	} else {
		sb_num(&s, (unsigned long long)si->si_syscall, 0);
		sb_str(&s, data == DATA_X32 ? " (x32 ABI)" : " (not known to the filter)");
	}
	sb_str(&s, " denied by the sandbox\n");
	ssize_t w = write(SANDBOX_RESULT_FD, s.b, s.n);
	(void)w;
	_exit(SANDBOX_EXIT_FORBIDDEN);
}

/* ---- the BPF program ---- */

struct bpf_prog {
	struct sock_filter f[1024];
	int n;
};

static void emit(struct bpf_prog *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (p->n < (int)(sizeof p->f / sizeof p->f[0]))
		p->f[p->n] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
	p->n++;
}

#define ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define RET(x) emit(p, BPF_RET | BPF_K, (x), 0, 0)

static int build_filter(struct bpf_prog *p, pid_t pid)
{
	p->n = 0;
	emit(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	RET(SECCOMP_RET_KILL_PROCESS);
	emit(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	emit(p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	RET(SECCOMP_RET_TRAP | DATA_X32);
	emit(p, BPF_JMP | BPF_JGT | BPF_K, SANDBOX_MAX_KNOWN_NR, 0, 1);
	RET(SECCOMP_RET_TRAP | DATA_NEW);
	for (int i = 0; i < N_RULES; i++) {
		const struct rule *r = &rules[i];
		uint32_t trap = SECCOMP_RET_TRAP | (uint32_t)i;
		switch (r->kind) {
		case RULE_DENY:
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1);
			RET(trap);
			break;
		case RULE_ERRNO:
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1);
			RET(SECCOMP_RET_ERRNO | (r->arg & SECCOMP_RET_DATA));
			break;
		case RULE_WRITE_FD:
			/* nr matches: load fd; fd > 3 -> trap, else allow */
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
			emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0), 0, 0);
			emit(p, BPF_JMP | BPF_JGT | BPF_K, SANDBOX_RESULT_FD, 0, 1);
			RET(trap);
			RET(SECCOMP_RET_ALLOW);
			break;
		case RULE_OPEN_FLAGS:
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
			emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->arg), 0, 0);
			emit(p, BPF_JMP | BPF_JSET | BPF_K, OPEN_WRITE_FLAGS, 0, 1);
			RET(trap);
			RET(SECCOMP_RET_ALLOW);
			break;
		case RULE_SELF_PID:
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
			emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0), 0, 0);
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)pid, 1, 0);
			RET(trap);
			RET(SECCOMP_RET_ALLOW);
			break;
		case RULE_ARG0_EQ:
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
			emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0), 0, 0);
			emit(p, BPF_JMP | BPF_JEQ | BPF_K, r->arg, 0, 1);
			RET(trap);
			RET(SECCOMP_RET_ALLOW);
			break;
		}
	}
	RET(SECCOMP_RET_ALLOW);
	return p->n <= (int)(sizeof p->f / sizeof p->f[0]) ? 0 : -1;
}

/* ---- Landlock: read the candidate file, nothing else ---- */

static int landlock_file_only(const char *path)
{
#ifdef LANDLOCK_ACCESS_FS_READ_FILE
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return -1;
	struct landlock_ruleset_attr ra = {0};
	ra.handled_access_fs = ((uint64_t)LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */
	if (abi >= 2)
		ra.handled_access_fs |= (uint64_t)1 << 13; /* REFER */
	if (abi >= 3)
		ra.handled_access_fs |= (uint64_t)1 << 14; /* TRUNCATE */
	int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0)
		return -1;
	int rc = -1;
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		struct landlock_path_beneath_attr pb = {
			.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE,
			.parent_fd = fd,
		};
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == 0 &&
		    syscall(SYS_landlock_restrict_self, rs, 0) == 0)
			rc = 0;
		close(fd);
	}
	close(rs);
	return rc;
#else
	(void)path;
	return -1;
#endif
}

/* ---- entering ---- */

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int dir_holds_only(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int ok = 1, seen = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, base))
			seen = 1;
		else
			ok = 0;
	}
	closedir(d);
	return ok && seen;
}

static int set_limit(int res, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
	return setrlimit(res, &rl);
}

int sandbox_enter(const char *so_path, int cpu_s, struct sandbox_report *r, struct ka_err *e)
{
	memset(r, 0, sizeof *r);
	char dir[4096], base[256], tmp[4096];
	if (!so_path || so_path[0] != '/' || strlen(so_path) >= sizeof tmp)
		return ka_err_set(e, "sandbox: --so must be an absolute path");
	snprintf(tmp, sizeof tmp, "%s", so_path);
	snprintf(dir, sizeof dir, "%s", dirname(tmp));
	snprintf(tmp, sizeof tmp, "%s", so_path);
	snprintf(base, sizeof base, "%s", basename(tmp));
	if (!dir_holds_only(dir, base))
		return ka_err_set(
			e, "sandbox: %s must be alone in its directory (it becomes the root)",
			so_path);
	uid_t uid = geteuid();
	gid_t gid = getegid();
	pid_t pid = getpid();

	/* 1. own process group, so the watchdog's kill(-pgid) gets everything */
	r->pgroup = setpgid(0, 0) == 0 || getpgrp() == pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);

	/* 2. namespaces: user (so that an unprivileged recorder may chroot),
	 * network (no interfaces), mount */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) == 0) {
		r->userns = r->netns = r->mountns = 1;
		char map[64];
		write_proc("/proc/self/setgroups", "deny");
		snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
		int m1 = write_proc("/proc/self/uid_map", map);
		snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
		int m2 = write_proc("/proc/self/gid_map", map);
		if (m1 || m2)
			r->userns = 0; /* unmapped: chroot below will tell */
	} else {
		if (unshare(CLONE_NEWNET) == 0)
			r->netns = 1;
		if (unshare(CLONE_NEWNS) == 0)
			r->mountns = 1;
	}

	/* 3. chroot into the directory holding only the candidate */
	if (chroot(dir) == 0 && chdir("/") == 0) {
		r->chroot = 1;
		snprintf(r->so_path, sizeof r->so_path, "/%s", base);
	} else {
		if (chdir(dir) != 0)
			return ka_err_set(e, "sandbox: chdir %s: %s", dir, strerror(errno));
		snprintf(r->so_path, sizeof r->so_path, "%s", so_path);
	}

	/* 4. no environment */
	clearenv();

	/* 5. identities: as real root without a user namespace become nobody;
	 * in every case end with no capability at all */
	int nobody = 0;
	if (!r->userns && uid == 0)
		nobody = setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	int nocaps = syscall(SYS_capset, &h, d) == 0;
	r->drop_ids = nobody || nocaps;
	const char *ids = nobody && nocaps ? "nobody,no_caps"
			  : nobody	   ? "nobody"
			  : nocaps	   ? "no_caps"
					   : "off";

	/* 6. rlimits */
	int cpu = cpu_s > 0 ? cpu_s : 10;
	int bad = 0;
	bad |= set_limit(RLIMIT_CPU, (rlim_t)cpu, (rlim_t)cpu + 1);
#if !defined(__SANITIZE_ADDRESS__)
	bad |= set_limit(RLIMIT_AS, (rlim_t)4 << 30, (rlim_t)4 << 30);
#endif
	bad |= set_limit(RLIMIT_NOFILE, 16, 16);
	bad |= set_limit(RLIMIT_NPROC, 1, 1);
	/* No file may grow. When the invoker made stdout or stderr a regular
	 * file (a shell redirection), allow that much output instead of
	 * killing the recorder with SIGXFSZ on its first line. */
	rlim_t fsize = 0;
	for (int fd = 1; fd <= SANDBOX_RESULT_FD; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			fsize = (rlim_t)16 << 20;
	}
	bad |= set_limit(RLIMIT_FSIZE, fsize, fsize);
	bad |= set_limit(RLIMIT_CORE, 0, 0);
	bad |= set_limit(RLIMIT_MEMLOCK, 0, 0);
	bad |= set_limit(RLIMIT_MSGQUEUE, 0, 0);
	if (bad)
		return ka_err_set(e, "sandbox: setrlimit: %s", strerror(errno));
	r->rlimits = 1;

	/* 7. no privilege gain through exec (also required for an unprivileged
	 * seccomp filter and Landlock); no core dumps, no ptrace by peers */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return ka_err_set(e, "sandbox: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	r->no_new_privs = 1;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return ka_err_set(e, "sandbox: PR_SET_DUMPABLE: %s", strerror(errno));
	r->nondumpable = 1;

	/* 8. files: the candidate, read-only, nothing else */
	r->landlock = landlock_file_only(r->so_path) == 0;

	/* 9. seccomp, with the handler that reports a denied call */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return ka_err_set(e, "sandbox: sigaction(SIGSYS): %s", strerror(errno));
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGSYS);
	sigprocmask(SIG_UNBLOCK, &ss, NULL);
	static struct bpf_prog prog;
	if (build_filter(&prog, pid))
		return ka_err_set(e, "sandbox: seccomp filter too long");
	struct sock_fprog fp = {.len = (unsigned short)prog.n, .filter = prog.f};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0)
		return ka_err_set(e, "sandbox: seccomp: %s", strerror(errno));
	r->seccomp = 1;

	snprintf(r->text, sizeof r->text,
		 "sandbox: pgroup=%s userns=%s netns=%s mountns=%s chroot=%s ids=%s rlimits=%s "
		 "no_new_privs=%s nondumpable=%s landlock=%s seccomp=%s",
		 r->pgroup ? "on" : "off", r->userns ? "on" : "off", r->netns ? "on" : "off",
		 r->mountns ? "on" : "off", r->chroot ? "on" : "off", ids,
		 r->rlimits ? "on" : "off", r->no_new_privs ? "on" : "off",
		 r->nondumpable ? "on" : "off", r->landlock ? "on" : "off",
		 r->seccomp ? "on" : "off");
	return 0;
}
