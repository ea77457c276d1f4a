/* test_jail.c: the compiler jail (src/common/jail.h). A secret file outside
 * the work folder and a secret environment variable are planted; a jailed
 * shell and a jailed gcc (through the assembler's .incbin and through
 * #include of an absolute path) must see neither, while reading and writing
 * the work folder and running the toolchain still work. Also the memory
 * limit. Skips where the jail cannot be built (no namespaces, no Landlock). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "ka_test.h"
#include "util.h"

#define SECRET "ka-secret-7f3a9c1e"

static char g_secret_dir[64], g_work[64], g_secret_file[128];

/* Run argv jailed in g_work (extra read-only path: none); output (stdout and
 * stderr) into out. Returns the exit status, or -2 when the jail failed. */
static int run_jailed(char *const argv[], uint64_t mem, char *out, size_t cap)
{
	int p[2];
	if (pipe(p))
		return -3;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		struct jail_opts o;
		struct ka_err e = {0};
		if (jail_opts_for_tool(&o, argv[0], g_work, &e)) {
			printf("JAILFAIL %s\n", e.msg);
			_exit(99);
		}
		o.mem_bytes = mem;
		if (jail_enter(&o, &e)) {
			printf("JAILFAIL %s\n", e.msg);
			_exit(99);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while ((r = read(p[0], out + n, cap - 1 - n)) > 0 && n + 1 < cap)
		n += (size_t)r;
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = '.'; /* /proc/N/environ and binary output */
	out[n] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	if (strstr(out, "JAILFAIL"))
		return -2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int g_skip;

static void test_shell_sees_no_secret(void)
{
	char cmd[512], out[8192];
	snprintf(cmd, sizeof cmd,
		 "cat %s; echo env=$KA_TEST_SECRET; ls /; cat /proc/1/environ; "
		 "echo hello > %s/w.txt && cat %s/w.txt",
		 g_secret_file, g_work, g_work);
	char *argv[] = {"sh", "-c", cmd, NULL};
	int st = run_jailed(argv, 0, out, sizeof out);
	if (st == -2) {
		printf("SKIP test_jail: the jail cannot be built here: %s\n", out);
		g_skip = 1;
		return;
	}
	if (strstr(out, SECRET) || !strstr(out, "hello"))
		printf("# output: %s\n", out);
	CHECK(strstr(out, SECRET) == NULL);
	CHECK(strstr(out, "hello") != NULL); /* the work folder is writable */
	CHECK(strstr(out, "env=\n") != NULL);
}

static void test_gcc_incbin_and_include(void)
{
	if (g_skip)
		return;
	char path[256], out[16384];
	/* .incbin through top-level asm: the assembler reads the file. */
	snprintf(path, sizeof path, "%s/a.c", g_work);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "__asm__(\".section .rodata\\n.incbin \\\"%s\\\"\\n\");\nint x;\n",
		g_secret_file);
	fclose(f);
	char *argv[] = {"gcc", "-c", "a.c", "-o", "a.o", NULL};
	int st = run_jailed(argv, 0, out, sizeof out);
	CHECK(st != 0 && st != -2); /* the file is not there to read */
	CHECK(strstr(out, SECRET) == NULL);
	/* #include of an absolute path */
	snprintf(path, sizeof path, "%s/b.c", g_work);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "#include \"%s\"\n", g_secret_file);
	fclose(f);
	char *argv2[] = {"gcc", "-E", "b.c", NULL};
	st = run_jailed(argv2, 0, out, sizeof out);
	CHECK(st != 0 && st != -2);
	CHECK(strstr(out, SECRET) == NULL);
	/* an honest file still compiles, and the object is written */
	snprintf(path, sizeof path, "%s/c.c", g_work);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "#include <math.h>\ndouble g(double x) { return sqrt(x); }\n");
	fclose(f);
	char *argv3[] = {"gcc", "-O2", "-c", "c.c", "-o", "c.o", NULL};
	st = run_jailed(argv3, 0, out, sizeof out);
	if (st != 0)
		printf("# gcc: %s\n", out);
	CHECK(st == 0);
	snprintf(path, sizeof path, "%s/c.o", g_work);
	CHECK(access(path, R_OK) == 0);
}

static void test_memory_limit(void)
{
	if (g_skip)
		return;
	char out[4096];
	/* 1 GiB of zeros through a shell pipeline: the head process allocates it. */
	char *argv[] = {"sh", "-c",
			"head -c 1073741824 /dev/zero | tr -d x | wc -c >/dev/null; "
			"x=$(head -c 600000000 /dev/zero | tr '\\0' a); echo ${#x}",
			NULL};
	int st = run_jailed(argv, 256ull << 20, out, sizeof out);
	/* the shell cannot hold 600 MB under a 256 MiB address-space limit */
	CHECK(strstr(out, "600000000") == NULL);
	(void)st;
}

int main(void)
{
	snprintf(g_secret_dir, sizeof g_secret_dir, "/tmp/ka-jail-secret-XXXXXX");
	snprintf(g_work, sizeof g_work, "/tmp/ka-jail-work-XXXXXX");
	if (!mkdtemp(g_secret_dir) || !mkdtemp(g_work)) {
		printf("FAIL test_jail: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(g_secret_file, sizeof g_secret_file, "%s/secret.txt", g_secret_dir);
	FILE *f = fopen(g_secret_file, "w");
	fprintf(f, "%s\n", SECRET);
	fclose(f);
	setenv("KA_TEST_SECRET", SECRET, 1);
	RUN(test_shell_sees_no_secret);
	RUN(test_gcc_incbin_and_include);
	RUN(test_memory_limit);
	char rm[256];
	snprintf(rm, sizeof rm, "rm -rf %s %s", g_secret_dir, g_work);
	if (system(rm) != 0)
		printf("# could not remove the test folders\n");
	TEST_EXIT();
}
