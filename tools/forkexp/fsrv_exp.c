/* fsrv_exp.c: the experiment's fork-server shim (docs/compile.md, section
 * 7; not part of ka: the real one is tools/forkshim.c). LD_PRELOADed into
 * cicc or cudafe++, which read their preprocessed input with fopen + getc.
 * The shim counts the bytes read from the file named FSRV_INPUT; when the
 * tool is about to read byte FSRV_N, it prints its VmPeak, VmHWM and thread
 * count on stderr and becomes a server: for each line (a work folder) read
 * from the fifo FSRV_CTL it forks a child that enters that folder, puts the
 * folder's own FSRV_INPUT (positioned at byte FSRV_N) under the tool's
 * input descriptor, sends its output to fork.log and goes on parsing; the
 * server waits for the child and writes "DIR status S ms M cpu_ms C rss_kb
 * R" to the fifo FSRV_ACK. "quit" ends it.
 *
 *   gcc -O2 -shared -fPIC -o fsrv_exp.so fsrv_exp.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static FILE *in;
static long pos, N = -1;
static int served;
static FILE *(*r_fopen)(const char *, const char *);
static int (*r_getc)(FILE *), (*r_IO_getc)(FILE *), (*r_ungetc)(int, FILE *);

static void init(void)
{
	r_fopen = dlsym(RTLD_NEXT, "fopen");
	r_getc = dlsym(RTLD_NEXT, "getc");
	r_IO_getc = dlsym(RTLD_NEXT, "_IO_getc");
	r_ungetc = dlsym(RTLD_NEXT, "ungetc");
	const char *n = getenv("FSRV_N");
	N = n ? atol(n) : -1;
}

FILE *fopen(const char *p, const char *m)
{
	if (!r_fopen)
		init();
	FILE *f = r_fopen(p, m);
	const char *want = getenv("FSRV_INPUT");
	if (f && want && !strcmp(p, want) && !in) {
		in = f;
		pos = 0;
	}
	return f;
}

FILE *fopen64(const char *p, const char *m)
{
	return fopen(p, m);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void print_status(void)
{
	char b[8192];
	FILE *st = r_fopen("/proc/self/status", "r");
	size_t n = st ? fread(b, 1, sizeof b - 1, st) : 0;
	b[n] = 0;
	if (st)
		fclose(st);
	const char *keys[] = {"VmPeak", "VmHWM", "Threads", NULL};
	for (int i = 0; keys[i]; i++) {
		char *v = strstr(b, keys[i]);
		if (v)
			fprintf(stderr, "%.*s\n", (int)strcspn(v, "\n"), v);
	}
	fflush(stderr);
}

/* Returns only in a child, which then reads the candidate's bytes. */
static void serve(FILE *f)
{
	served = 1;
	print_status();
	FILE *ctl = r_fopen(getenv("FSRV_CTL"), "r");
	FILE *ack = r_fopen(getenv("FSRV_ACK"), "w");
	char line[4096];
	while (ctl && ack && fgets(line, sizeof line, ctl)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "quit"))
			break;
		double t0 = now();
		pid_t pid = fork();
		if (pid == 0) {
			if (chdir(line) != 0)
				_exit(120);
			int fd = open(getenv("FSRV_INPUT"), O_RDONLY);
			int lg = open("fork.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || lg < 0 || lseek(fd, N, SEEK_SET) != N ||
			    dup2(fd, fileno(f)) < 0)
				_exit(121);
			close(fd);
			dup2(lg, 1);
			dup2(lg, 2);
			close(lg);
			fclose(ctl);
			fclose(ack);
			return;
		}
		int st = 0;
		struct rusage ru;
		wait4(pid, &st, 0, &ru);
		double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
			     ru.ru_stime.tv_usec * 1e-6;
		fprintf(ack, "%s status %d ms %.1f cpu_ms %.1f rss_kb %ld\n", line, st,
			(now() - t0) * 1000, cpu * 1000, ru.ru_maxrss);
		fflush(ack);
	}
	_exit(0);
}

static void hook(FILE *f)
{
	if (f == in && !served && pos == N)
		serve(f);
}

int getc(FILE *f)
{
	if (!r_getc)
		init();
	hook(f);
	int c = r_getc(f);
	if (f == in && c != EOF)
		pos++;
	return c;
}

int _IO_getc(FILE *f)
{
	if (!r_IO_getc)
		init();
	hook(f);
	int c = r_IO_getc(f);
	if (f == in && c != EOF)
		pos++;
	return c;
}

int ungetc(int c, FILE *f)
{
	if (!r_ungetc)
		init();
	int r = r_ungetc(c, f);
	if (f == in && r != EOF)
		pos--;
	return r;
}
