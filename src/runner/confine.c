/* confine.c: rlimits, environment, Landlock and seccomp for a runner whose
 * device runs candidate code in-process (PoCL). See confine.h. */
#include "confine.h"

#include "../common/jail.h"
#include "../common/lockdown.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef __x86_64__
#error "the runner's seccomp filter is written for x86_64"
#endif

/* As src/runclient.c's ENV_KEEP: what a driver may need. */
static const char *const env_keep[] = {
	"PATH=",    "HOME=",	  "TMPDIR=", "LD_LIBRARY_PATH=",   "XDG_CACHE_HOME=",
	"KA_HOME=", "KA_RUNNER_", "POCL_",   "OCL_ICD_",	   "OPENCL_",
	"CUDA_",    "NVIDIA_",	  "__NV_",   "KA_COMPILE_MEM_MB=", NULL};

void confine_clean_env(void)
{
	extern char **environ;
	size_t k = 0;
	for (size_t i = 0; environ && environ[i]; i++) {
		int keep = 0;
		for (int j = 0; env_keep[j] && !keep; j++)
			keep = !strncmp(environ[i], env_keep[j], strlen(env_keep[j]));
		if (keep)
			environ[k++] = environ[i];
	}
	if (environ)
		environ[k] = NULL;
}

/* ---- Landlock ---- */

static char private_cache[1024]; /* confine_cache_private's folder, or "" */

void confine_cache_private(const char *dir)
{
	snprintf(private_cache, sizeof private_cache, "%s", dir);
	setenv("POCL_CACHE_DIR", dir, 1);
}

uint64_t confine_cache_bytes(void)
{
	return private_cache[0] ? util_tree_bytes(private_cache) : 0;
}

int confine_cache_trim(uint64_t cap)
{
	if (cap == CONFINE_CACHE_CAP) {
		const char *mb = getenv("KA_RUNNER_CACHE_MB");
		cap = mb && atoll(mb) > 0 ? (uint64_t)atoll(mb) << 20 : 1ull << 30;
	}
	uint64_t held = confine_cache_bytes();
	if (!private_cache[0] || (cap && held <= cap))
		return 0;
	if (cap)
		fprintf(stderr,
			"runner: private cache %s emptied: %llu KiB, over the cap of %llu KiB\n",
			private_cache, (unsigned long long)(held >> 10),
			(unsigned long long)(cap >> 10));
	else
		fprintf(stderr, "runner: private cache %s emptied: %llu KiB, a refused program's\n",
			private_cache, (unsigned long long)(held >> 10));
	/* Landlock lets this process change what is under the folder, not
	 * remove the folder itself: it is emptied, then made again where
	 * there is no Landlock. */
	util_rmtree(private_cache);
	mkdir(private_cache, 0700);
	return 1;
}

/* The driver's cache folder (PoCL: POCL_CACHE_DIR, else
 * $XDG_CACHE_HOME/pocl, else $HOME/.cache/pocl), into buf. */
static void cache_dir(char *buf, size_t cap)
{
	const char *d = getenv("POCL_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *h = getenv("HOME");
	if (d && *d)
		snprintf(buf, cap, "%s", d);
	else if (x && *x)
		snprintf(buf, cap, "%s/pocl", x);
	else
		snprintf(buf, cap, "%s/.cache/pocl", h && *h ? h : "/nonexistent");
}

static int landlock(void)
{
	static const char *const ro_paths[] = {"/usr",	     "/lib",
					       "/lib64",     "/lib32",
					       "/bin",	     "/sbin",
					       "/etc",	     "/sys/devices/system/cpu",
					       "/proc/self", "/proc/thread-self",
					       NULL};
	static const char *const dev_files[] = {"/dev/null", "/dev/zero", "/dev/urandom", NULL};
	char cache[1024];
	cache_dir(cache, sizeof cache);
	const char *const rw[] = {cache, NULL};
	return lockdown_landlock(ro_paths, rw, dev_files);
}

int confine_enter(struct confine_report *r, struct ka_err *e)
{
	memset(r, 0, sizeof *r);
	uint64_t mem = 64ull << 30;
	const char *mm = getenv("KA_RUNNER_MEM_MB");
	if (mm && atoll(mm) > 0)
		mem = (uint64_t)atoll(mm) << 20;
	struct rlimit core = {0, 0}, fsz = {1ull << 30, 1ull << 30}, as = {mem, mem};
	/* Under AddressSanitizer the shadow memory alone is far more address
	 * space than any cap, and its allocator maps more as it goes: the
	 * sanitizer build (make san) runs without the address-space cap. */
#ifdef __SANITIZE_ADDRESS__
	int cap_as = 0;
#else
	int cap_as = 1;
#endif
	if (setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_FSIZE, &fsz) ||
	    (cap_as && setrlimit(RLIMIT_AS, &as)))
		return ka_err_set(e, "confine: setrlimit: %s", strerror(errno));
	confine_clean_env();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return ka_err_set(e, "confine: no_new_privs: %s", strerror(errno));
	r->landlock = landlock() == 0;
	if (lockdown_seccomp() != 0)
		return ka_err_set(e, "confine: seccomp: %s", strerror(errno));
	r->seccomp = true;
	snprintf(r->text, sizeof r->text,
		 "confined: seccomp on, landlock %s, address space %llu MiB",
		 r->landlock ? "on" : "UNAVAILABLE (files of the host stay readable)",
		 (unsigned long long)(mem >> 20));
	return 0;
}

void confine_build_begin(struct confine_build *saved)
{
	memset(saved, 0, sizeof *saved);
#ifndef __SANITIZE_ADDRESS__
	struct rlimit cur;
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	int n = f ? fscanf(f, "%llu", &pages) : 0;
	if (f)
		fclose(f);
	if (n != 1 || getrlimit(RLIMIT_AS, &cur) != 0)
		return;
	unsigned long long mapped = pages * (unsigned long long)sysconf(_SC_PAGESIZE);
	unsigned long long want = mapped + jail_mem_limit(NULL);
	if (cur.rlim_max != RLIM_INFINITY && want > cur.rlim_max)
		want = cur.rlim_max;
	struct rlimit lim = {(rlim_t)want, cur.rlim_max};
	if (setrlimit(RLIMIT_AS, &lim) == 0) {
		saved->soft = cur.rlim_cur;
		saved->set = true;
	}
#endif
}

void confine_build_end(const struct confine_build *saved)
{
	struct rlimit cur;
	if (!saved->set || getrlimit(RLIMIT_AS, &cur) != 0)
		return;
	cur.rlim_cur = (rlim_t)saved->soft;
	setrlimit(RLIMIT_AS, &cur);
}

int confine_cache_space(struct ka_err *e)
{
	char cache[1024];
	cache_dir(cache, sizeof cache);
	struct stat st;
	if (stat(cache, &st) != 0)
		return 0;
	struct ka_err je;
	if (jail_check_space(cache, &je) == 0)
		return 0;
	return ka_err_set(e, "the OpenCL driver's cache folder %s", je.msg);
}

static int report(const char *what, int allowed)
{
	printf("%s %s\n", allowed ? "ALLOWED" : "refused", what);
	fflush(stdout);
	return allowed;
}

int confine_self_test(const char *secret_path, const char *secret_env)
{
	int bad = 0;
	pid_t pp = getppid();
	if (secret_path) {
		int fd = open(secret_path, O_RDONLY);
		bad += report("open(secret file)", fd >= 0);
		if (fd >= 0)
			close(fd);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pp);
	int fd = open(path, O_RDONLY);
	bad += report("open(/proc/<parent>/environ)", fd >= 0);
	if (fd >= 0)
		close(fd);
	if (secret_env)
		bad += report("getenv(secret)", getenv(secret_env) != NULL);
	bad += report("kill(parent, 0)", kill(pp, 0) == 0);
	bad += report("ptrace(attach parent)", ptrace(PTRACE_ATTACH, pp, 0, 0) == 0);
	char buf[8];
	struct iovec l = {buf, sizeof buf}, rm = {(void *)&buf, sizeof buf};
	bad += report("process_vm_readv(parent)", process_vm_readv(pp, &l, 1, &rm, 1, 0) >= 0);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	bad += report("socket(AF_INET)", s >= 0);
	if (s >= 0)
		close(s);
	char *const argv[] = {"/bin/true", NULL}, *const envp[] = {NULL};
	bad += report("execve(/bin/true)", execve("/bin/true", argv, envp) == 0);
	/* Signals to itself stay allowed (abort, PoCL's own threads). */
	int self = kill(getpid(), 0) == 0;
	printf("%s kill(self, 0)\n", self ? "allowed" : "REFUSED");
	bad += !self;
	return bad;
}
