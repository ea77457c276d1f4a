/* fork_cost.c: what a parent's touched memory costs each fork + exec of a
 * child (docs/PERF.md, "The gold ahead, the early stub and the host
 * assembler"): the kernel copies the page tables of every private mapping
 * the child inherits, and MADV_DONTFORK (util_alloc_unforked) keeps a
 * mapping out of the child.
 *
 *   cc -O2 -o /tmp/fork_cost tools/diag/fork_cost.c && /tmp/fork_cost 0 256 1024
 *
 * For each size in MiB: the mean milliseconds of 20 fork + exec of
 * /bin/true with that much memory touched, inherited and then not. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Mean ms of n fork + exec + wait. */
static double spawn_ms(int n)
{
	double t0 = now();
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return -1;
	}
	return (now() - t0) * 1e3 / n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fork_cost MIB [MIB ...]\n");
		return 2;
	}
	printf("%8s %14s %16s\n", "MiB", "inherited ms", "DONTFORK ms");
	for (int a = 1; a < argc; a++) {
		size_t len = (size_t)atol(argv[a]) << 20;
		double ms[2] = {0, 0};
		for (int dontfork = 0; dontfork < 2; dontfork++) {
			void *p = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				      : NULL;
			if (p == MAP_FAILED) {
				perror("mmap");
				return 1;
			}
			if (p && dontfork)
				madvise(p, len, MADV_DONTFORK);
			if (p)
				memset(p, 1, len);
			ms[dontfork] = spawn_ms(20);
			if (p)
				munmap(p, len);
		}
		printf("%8s %14.2f %16.2f\n", argv[a], ms[0], ms[1]);
	}
	return 0;
}
