/* jail.c: confinement of a compiler run on model-written source (see
 * jail.h). The mount view is built in a private mount namespace: a tmpfs
 * over /tmp holds the new root, every allowed path is bind-mounted into it
 * from a descriptor opened before the tmpfs covered anything, and the
 * process changes root to it. Landlock is the fallback where namespaces
 * cannot be created (an unprivileged user on a kernel that restricts user
 * namespaces). */
#include "jail.h"

#include "lockdown.h"

#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define JAIL_ROOT "/tmp/r"

static const char *const jail_base_paths[] = {"/usr",
					      "/bin",
					      "/sbin",
					      "/lib",
					      "/lib32",
					      "/lib64",
					      "/libx32",
					      "/etc/alternatives",
					      "/etc/ld.so.cache",
					      "/etc/ld.so.conf",
					      "/etc/ld.so.conf.d",
					      NULL};
static const char *const jail_dev_files[] = {"/dev/null", "/dev/zero", "/dev/urandom",
					     "/dev/random", NULL};

int jail_add_ro(struct jail_opts *o, const char *path, struct ka_err *e)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		ka_err_set(e, "jail: %s: %s", path, strerror(errno));
		return -1;
	}
	int n = 0;
	while (n < JAIL_MAX_PATHS && o->ro_paths[n]) {
		if (!strcmp(o->ro_paths[n], path))
			return 0;
		n++;
	}
	if (n >= JAIL_MAX_PATHS - 1) {
		ka_err_set(e, "jail: more than %d read-only paths", JAIL_MAX_PATHS - 1);
		return -1;
	}
	o->ro_paths[n] = path;
	o->ro_paths[n + 1] = NULL;
	return 0;
}

/* The toolchain root of an executable: /a/b/bin/tool -> /a/b, after
 * resolving links (kept in a static slot per call site; at most 4 live). */
static const char *tool_root(const char *tool)
{
	static __thread char slots[4][PATH_MAX]; /* per thread: compile threads */
	static __thread int next;
	char found[PATH_MAX];
	if (strchr(tool, '/')) {
		snprintf(found, sizeof found, "%s", tool);
	} else {
		const char *path = getenv("PATH");
		found[0] = 0;
		for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
			const char *c = strchr(p, ':');
			size_t n = c ? (size_t)(c - p) : strlen(p);
			snprintf(found, sizeof found, "%.*s/%s", (int)n, p, tool);
			if (n && access(found, X_OK) == 0)
				break;
			found[0] = 0;
			p += n + (c ? 1 : 0);
		}
		if (!found[0])
			return NULL;
	}
	char *real = realpath(found, NULL);
	if (!real)
		return NULL;
	char *slash = strrchr(real, '/');
	if (slash && slash != real)
		*slash = 0; /* .../bin */
	slash = strrchr(real, '/');
	if (slash && slash != real)
		*slash = 0; /* the root */
	char *slot = slots[next++ & 3];
	snprintf(slot, PATH_MAX, "%s", real);
	free(real);
	return slot;
}

int jail_opts_for_tool(struct jail_opts *o, const char *tool, const char *work_dir,
		       struct ka_err *e)
{
	memset(o, 0, sizeof *o);
	o->work_dir = work_dir;
	for (int i = 0; jail_base_paths[i]; i++) {
		struct stat st;
		if (lstat(jail_base_paths[i], &st) == 0 && jail_add_ro(o, jail_base_paths[i], e))
			return -1;
	}
	const char *root = tool_root(tool);
	if (!root) {
		ka_err_set(e, "jail: cannot find the program '%s'", tool);
		return -1;
	}
	if (strcmp(root, "/usr") && strcmp(root, "/") && jail_add_ro(o, root, e))
		return -1;
	/* The link a toolchain is often named by (/usr/local/cuda -> cuda-13.0). */
	if (strchr(tool, '/')) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", tool);
		char *s = strrchr(dir, '/');
		if (s && s != dir) {
			*s = 0;
			s = strrchr(dir, '/');
			if (s && s != dir) {
				*s = 0;
				struct stat st;
				if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
					static __thread char link_slot[PATH_MAX];
					snprintf(link_slot, sizeof link_slot, "%s", dir);
					if (jail_add_ro(o, link_slot, e))
						return -1;
				}
			}
		}
	}
	return 0;
}

/* ---- inside the child ---------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* mkdir -p of an absolute path (inside the new root being built). */
static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Bind the object open as fd (an O_PATH descriptor of host path `path`) at
 * the same path under the new root; read-only unless rw. A symbolic link is
 * recreated as a link instead. */
static int bind_into_root(int fd, const char *path, int rw, struct ka_err *e)
{
	char target[PATH_MAX], src[64];
	snprintf(target, sizeof target, JAIL_ROOT "%s", path);
	struct stat st;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0)
		goto fail;
	if (S_ISLNK(st.st_mode)) {
		char to[PATH_MAX];
		ssize_t n = readlinkat(fd, "", to, sizeof to - 1);
		if (n < 0)
			goto fail;
		to[n] = 0;
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", target);
		*strrchr(parent, '/') = 0;
		if (mkdirs(parent) || (symlink(to, target) != 0 && errno != EEXIST))
			goto fail;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdirs(target))
			goto fail;
	} else {
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", target);
		*strrchr(parent, '/') = 0;
		int t = -1;
		if (mkdirs(parent) || (t = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) < 0)
			goto fail;
		close(t);
	}
	snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) != 0)
		goto fail;
	/* Remount read-only, keeping the flags the host mount has: in a user
	 * namespace they are locked, and dropping one is refused. Device files
	 * keep working (no nodev added for them). */
	struct statvfs vf;
	if (statvfs(target, &vf) != 0)
		goto fail;
	unsigned long fl = MS_REMOUNT | MS_BIND | MS_NOSUID | (rw ? 0 : MS_RDONLY);
	if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || (vf.f_flag & ST_NODEV))
		fl |= MS_NODEV;
	if (vf.f_flag & ST_NOEXEC)
		fl |= MS_NOEXEC;
	if (vf.f_flag & ST_RDONLY)
		fl |= MS_RDONLY;
	if (vf.f_flag & ST_NOATIME)
		fl |= MS_NOATIME;
	if (vf.f_flag & ST_NODIRATIME)
		fl |= MS_NODIRATIME;
	if (vf.f_flag & ST_RELATIME)
		fl |= MS_RELATIME;
	if (mount(NULL, target, NULL, fl, NULL) != 0)
		goto fail;
	return 0;
fail:
	ka_err_set(e, "jail: %s: %s", path, strerror(errno));
	return -1;
}

/* Open everything to bind before /tmp is covered (a path may lie under it). */
static int open_paths(const struct jail_opts *o, int *fds, const char **paths, int *n,
		      struct ka_err *e)
{
	/* A relative path, or one through "..", is bound at its canonical
	 * place (the new root has no cwd to be relative to); an absolute path
	 * is kept as it is, so a link such as /bin -> usr/bin stays a link. */
	static char canon[JAIL_MAX_PATHS][PATH_MAX];
	*n = 0;
	for (int i = 0; i < JAIL_MAX_PATHS && o->ro_paths[i]; i++) {
		const char *p = o->ro_paths[i];
		if ((p[0] != '/' || strstr(p, "/..") || strstr(p, "/./")) && realpath(p, canon[i]))
			p = canon[i];
		paths[(*n)++] = p;
	}
	for (int i = 0; jail_dev_files[i]; i++)
		if (access(jail_dev_files[i], F_OK) == 0)
			paths[(*n)++] = jail_dev_files[i];
	paths[(*n)++] = o->work_dir; /* last: read-write */
	for (int i = 0; i < *n; i++) {
		fds[i] = open(paths[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fds[i] < 0) {
			ka_err_set(e, "jail: %s: %s", paths[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int build_root(const struct jail_opts *o, struct ka_err *e)
{
	int fds[JAIL_MAX_PATHS + 8];
	const char *paths[JAIL_MAX_PATHS + 8];
	int n = 0;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		ka_err_set(e, "jail: making mounts private: %s", strerror(errno));
		return -1;
	}
	if (open_paths(o, fds, paths, &n, e))
		return -1;
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") != 0 ||
	    mkdir(JAIL_ROOT, 0755) != 0 ||
	    mount("tmpfs", JAIL_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0755") != 0) {
		ka_err_set(e, "jail: tmpfs root: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (bind_into_root(fds[i], paths[i], i == n - 1, e))
			return -1;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	if ((mkdir(JAIL_ROOT "/tmp", 01777) != 0 && errno != EEXIST) ||
	    (mkdir(JAIL_ROOT "/proc", 0555) != 0 && errno != EEXIST)) {
		ka_err_set(e, "jail: %s", strerror(errno));
		return -1;
	}
	/* A /proc of the new PID namespace: it shows only the compiler's own
	 * processes (nvcc and gcc read /proc/self). Not fatal where the kernel
	 * refuses it. */
	mount("proc", JAIL_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (chdir(JAIL_ROOT) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
	    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
		/* pivot_root needs the root to be a mount point of its own mount
		 * namespace; where it is refused, chroot gives the same view. */
		if (chdir(JAIL_ROOT) != 0 || chroot(".") != 0 || chdir("/") != 0) {
			ka_err_set(e, "jail: changing root: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int enter_namespaces(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	/* A user namespace drops the capabilities of the host's root too. */
	if (unshare(flags | CLONE_NEWUSER) == 0) {
		char map[64];
		snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
		write_file("/proc/self/setgroups", "deny");
		if (write_file("/proc/self/uid_map", map))
			return -1;
		snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
		return write_file("/proc/self/gid_map", map);
	}
	if (geteuid() != 0)
		return -1;
	return unshare(flags);
}

/* Landlock: read (and execute) the read-only paths, read and write the work
 * folder and the device files, nothing else (lockdown.h). 0 when the ruleset
 * is in force. */
static int landlock_paths(const struct jail_opts *o)
{
	const char *ro[JAIL_MAX_PATHS + 1];
	int n = 0;
	for (; n < JAIL_MAX_PATHS && o->ro_paths[n]; n++)
		ro[n] = o->ro_paths[n];
	ro[n] = NULL;
	const char *const rw[] = {o->work_dir, NULL};
	return lockdown_landlock(ro, rw, jail_dev_files);
}

static int set_limit(int res, uint64_t v)
{
	struct rlimit rl = {(rlim_t)v, (rlim_t)v};
	return setrlimit(res, &rl);
}

static void set_env(const char *work_dir)
{
	clearenv();
	setenv("PATH", JAIL_PATH, 1);
	setenv("HOME", work_dir, 1);
	setenv("TMPDIR", work_dir, 1);
	setenv("LANG", "C", 1);
}

/* The process between ka and the PID namespace's init: wait for it and exit
 * with its status (a signal death becomes 128 + signal, as a shell reports). */
static void relay_exit(pid_t child)
{
	int st = 0;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0));
}

uint64_t jail_mem_limit(const struct jail_opts *o)
{
	const char *mb = getenv("KA_COMPILE_MEM_MB");
	if (o && o->mem_bytes)
		return o->mem_bytes;
	if (mb && atoll(mb) > 0)
		return (uint64_t)atoll(mb) << 20;
	return JAIL_DEFAULT_MEM;
}

int jail_enter(const struct jail_opts *o, struct ka_err *e)
{
	pid_t ka = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != ka) {
		ka_err_set(e, "jail: parent gone");
		return -1;
	}
	setpgid(0, 0);
	const char *mode = getenv("KA_COMPILE_JAIL");
	int off = mode && !strcmp(mode, "off");
	char work[PATH_MAX];
	if (!realpath(o->work_dir, work)) {
		ka_err_set(e, "jail: %s: %s", o->work_dir, strerror(errno));
		return -1;
	}
	struct jail_opts ro = *o;
	ro.work_dir = work;
	if (!off) {
		if (enter_namespaces() == 0) {
			pid_t inner = fork();
			if (inner < 0) {
				ka_err_set(e, "jail: fork: %s", strerror(errno));
				return -1;
			}
			if (inner > 0)
				relay_exit(inner);
			/* PID 1 of the namespace: dies with its parent like any child. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (build_root(&ro, e))
				return -1;
		} else if (landlock_paths(&ro) != 0) {
			ka_err_set(e,
				   "jail: neither namespaces nor Landlock are available to confine "
				   "the compiler (set KA_COMPILE_JAIL=off to compile unconfined)");
			return -1;
		}
	}
	if (chdir(work) != 0) {
		ka_err_set(e, "jail: %s: %s", work, strerror(errno));
		return -1;
	}
	uint64_t mem = jail_mem_limit(o);
	/* The environment first: nothing may allocate once the address space
	 * is capped (a sanitizer's allocator would need new mappings). */
	set_env(work);
	for (char *const *a = o->env_add; a && *a; a++)
		putenv(*a);
	if (set_limit(RLIMIT_AS, mem) ||
	    set_limit(RLIMIT_FSIZE, o->file_bytes ? o->file_bytes : JAIL_DEFAULT_FSIZE) ||
	    set_limit(RLIMIT_CORE, 0) ||
	    (o->cpu_s > 0 && set_limit(RLIMIT_CPU, (uint64_t)o->cpu_s)) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		ka_err_set(e, "jail: limits: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- options ------------------------------------------------------------- */

void jail_opts_base(struct jail_opts *o, const char *work_dir)
{
	memset(o, 0, sizeof *o);
	o->work_dir = work_dir;
	for (int i = 0; jail_base_paths[i]; i++) {
		struct stat st;
		if (lstat(jail_base_paths[i], &st) == 0)
			jail_add_ro(o, jail_base_paths[i], NULL);
	}
}

int jail_opts_compiler(struct jail_opts *o, const char *tool, const char *work_dir, double cpu_s,
		       struct ka_err *e)
{
	/* one slot per thread: compile threads build options concurrently */
	static __thread char inc[PATH_MAX];
	if (jail_opts_for_tool(o, tool, work_dir, e))
		return -1;
	snprintf(inc, sizeof inc, "%s/include", util_data_root());
	if (access(inc, R_OK) == 0 && jail_add_ro(o, inc, e))
		return -1;
	o->cpu_s = cpu_s > 0 ? (int)cpu_s + 1 : 0;
	return 0;
}

/* ---- assembler and source scans ------------------------------------------ */

/* Directives refused in assembler input (lower case, without the dot). */
static const char *const asm_bad[] = {"incbin", "include",  "import", "macro", "irp",
				      "irpc",	"altmacro", "purgem", NULL};

/* Scan one statement-carrying line of assembler (NUL-terminated, may be
 * modified); 1 with *bad set when it holds a refused directive. The state
 * `in_comment` carries a C comment across lines. */
static int asm_line_bad(char *l, int *in_comment, const char **bad)
{
	int at_stmt = 1;
	for (char *p = l; *p;) {
		if (*in_comment) {
			char *end = strstr(p, "*/");
			if (!end)
				return 0;
			*in_comment = 0;
			p = end + 2;
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			*in_comment = 1;
			p += 2;
			continue;
		}
		if (*p == '#' || (p[0] == '/' && p[1] == '/'))
			return 0; /* x86 line comment */
		if (*p == ';') {
			at_stmt = 1;
			p++;
			continue;
		}
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
			p++;
			continue;
		}
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			p += *p == '"';
			at_stmt = 0;
			continue;
		}
		/* a name: a label (name:), a directive (.name) or an instruction */
		char *s = p;
		while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '$' ||
			      *p == '\\' || *p == '@'))
			p++;
		if (p == s) {
			p++;
			at_stmt = 0;
			continue;
		}
		if (*p == ':' && at_stmt) {
			p++; /* label: the statement goes on */
			continue;
		}
		if (at_stmt && *s == '.') {
			char name[32];
			size_t n = (size_t)(p - s - 1);
			if (n < sizeof name) {
				for (size_t i = 0; i < n; i++)
					name[i] = (char)tolower((unsigned char)s[1 + i]);
				name[n] = 0;
				for (int i = 0; asm_bad[i]; i++)
					if (!strcmp(name, asm_bad[i])) {
						*bad = asm_bad[i];
						return 1;
					}
			}
		}
		at_stmt = 0;
	}
	return 0;
}

int jail_check_asm_file(const char *path, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, cap, "the assembler input %s cannot be read: %s", path,
			 strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t lcap = 0;
	ssize_t n;
	int lineno = 0, in_comment = 0, rc = 0;
	while ((n = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		if (memchr(line, 0, (size_t)n)) { /* a NUL: not text the compiler wrote */
			for (ssize_t i = 0; i < n; i++)
				if (!line[i])
					line[i] = ' ';
		}
		const char *bad = NULL;
		if (asm_line_bad(line, &in_comment, &bad)) {
			snprintf(why, cap,
				 "the assembler input has a .%s directive (line %d of the "
				 "compiler's output): assembler directives that read files or "
				 "build directives are not allowed",
				 bad, lineno);
			rc = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/* Case-insensitive search of needle (lower case) in h (n bytes). */
static const char *find_ci(const char *h, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++) {
		size_t k = 0;
		while (k < m && tolower((unsigned char)h[i + k]) == needle[k])
			k++;
		if (k == m)
			return h + i;
	}
	return NULL;
}

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* 1 if the identifier word (len bytes) occurs as a whole identifier in t. */
static const char *find_word(const char *t, size_t n, const char *word)
{
	size_t m = strlen(word);
	for (const char *p = t; p + m <= t + n; p++) {
		p = memmem(p, (size_t)(t + n - p), word, m);
		if (!p)
			return NULL;
		if ((p == t || !is_ident((unsigned char)p[-1])) &&
		    (p + m == t + n || !is_ident((unsigned char)p[m])))
			return p;
	}
	return NULL;
}

/* The source with comments replaced by a space and backslash-newlines
 * removed (strings kept: asm text lives in them). Caller frees. */
static char *strip_comments(const char *src, size_t n, size_t *out_n)
{
	char *t = xmalloc(n + 1);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (src[i] == '\\' && i + 1 < n && src[i + 1] == '\n') {
			i += 2;
			continue;
		}
		if (src[i] == '\\' && i + 2 < n && src[i + 1] == '\r' && src[i + 2] == '\n') {
			i += 3;
			continue;
		}
		if (src[i] == '"' || src[i] == '\'') {
			char q = src[i];
			t[o++] = src[i++];
			while (i < n && src[i] != q && src[i] != '\n') {
				if (src[i] == '\\' && i + 1 < n)
					t[o++] = src[i++];
				t[o++] = src[i++];
			}
			if (i < n && src[i] == q)
				t[o++] = src[i++];
			continue;
		}
		if (src[i] == '/' && i + 1 < n && src[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(src[i] == '*' && src[i + 1] == '/'); i++)
				;
			i = i + 1 < n ? i + 2 : n;
			t[o++] = ' ';
			continue;
		}
		if (src[i] == '/' && i + 1 < n && src[i + 1] == '/') {
			while (i < n && src[i] != '\n')
				i++;
			continue;
		}
		t[o++] = src[i++];
	}
	t[o] = 0;
	*out_n = o;
	return t;
}

static int line_of(const char *t, const char *at)
{
	int line = 1;
	for (const char *p = t; p < at; p++)
		line += *p == '\n';
	return line;
}

int jail_check_source_text(const char *text, size_t n, char *why, size_t cap)
{
	size_t tn = 0;
	char *t = strip_comments(text, n, &tn);
	const char *at = NULL, *what = NULL;
	if ((at = find_ci(t, tn, ".incbin")))
		what = "the assembler directive .incbin (reads a file)";
	else if ((at = find_ci(t, tn, ".include")) &&
		 (at[8] == ' ' || at[8] == '\t' || at[8] == '"' || at[8] == '\\'))
		what = "the assembler directive .include (reads a file)";
	else if ((at = find_word(t, tn, "__has_embed")))
		what = "__has_embed (probes a file)";
	else if ((at = find_word(t, tn, "dependency")) &&
		 (find_word(t, tn, "pragma") || find_word(t, tn, "_Pragma")))
		what = "#pragma GCC dependency (reads a file)";
	else
		at = NULL;
	if (!at) {
		/* #embed: '#' (or %:) first on a line, then embed */
		for (const char *p = t; p < t + tn && !at; p++) {
			if (!(*p == '#' || (p[0] == '%' && p[1] == ':')))
				continue;
			const char *b = p;
			while (b > t && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (b > t && b[-1] != '\n')
				continue;
			const char *q = p + (*p == '#' ? 1 : 2);
			while (*q == ' ' || *q == '\t')
				q++;
			if (!strncmp(q, "embed", 5) && !is_ident((unsigned char)q[5])) {
				at = p;
				what = "#embed (reads a file)";
			}
		}
	}
	int rc = 0;
	if (at) {
		snprintf(why, cap, "line %d: %s is not allowed", line_of(t, at), what);
		rc = 1;
	}
	free(t);
	return rc;
}

size_t jail_log_escape(const char *log, size_t n, char *out, size_t cap)
{
	static const char cut[] = "\n[log truncated]";
	size_t o = 0;
	if (cap == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)log[i];
		char esc[8];
		size_t k;
		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
			esc[0] = (char)c;
			k = 1;
		} else {
			snprintf(esc, sizeof esc, "\\x%02x", c);
			k = 4;
		}
		if (o + k + sizeof cut > cap) {
			memcpy(out + o, cut,
			       sizeof cut - 1 < cap - 1 - o ? sizeof cut - 1 : cap - 1 - o);
			o += sizeof cut - 1 < cap - 1 - o ? sizeof cut - 1 : cap - 1 - o;
			break;
		}
		memcpy(out + o, esc, k);
		o += k;
	}
	out[o] = 0;
	return o;
}

int jail_check_space(const char *dir, struct ka_err *e)
{
	struct statvfs vf;
	if (statvfs(dir, &vf) != 0)
		return ka_err_set(e, "%s: %s", dir, strerror(errno));
	uint64_t avail = (uint64_t)vf.f_bavail * vf.f_frsize;
	if (avail < JAIL_MIN_FREE)
		return ka_err_set(e,
				  "%s: only %llu KiB free: the compiler may have failed for want "
				  "of space (not stored as a verdict; free some and run again)",
				  dir, (unsigned long long)(avail >> 10));
	return 0;
}

int jail_check_asm_dir(const char *dir, char *why, size_t cap)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(why, cap, "%s: %s", dir, strerror(errno));
		return -1;
	}
	int found = 0, rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 3 || strcmp(de->d_name + n - 2, ".s"))
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		found = 1;
		rc = jail_check_asm_file(path, why, cap);
	}
	closedir(d);
	if (!found && rc == 0) {
		snprintf(why, cap, "%s: the compiler kept no assembler input", dir);
		return -1;
	}
	return rc;
}
