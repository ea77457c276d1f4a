// expect: runtime_fault
// Host code: ka's environment strings, left at the top of the recorder's
// stack by exec (clearenv drops only the pointers), found by scanning up from
// a local and written back as a verdict line on the result descriptor (fd 3,
// a raw write: no import), whose text becomes the record_error's excerpt.
#include <cuda_runtime.h>
#include <string.h>
#include "ka_kernel.h"

__global__ void k(float *y, long long n)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 0;
}

static long raw_write(int fd, const void *b, unsigned long n)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(1L), "D"((long)fd), "S"(b), "d"(n) : "rcx", "r11", "memory");
	return r;
}

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t s)
{
	volatile char here = 0;
	const char *p = (const char *)&here, *hit = 0;
	for (long i = 0; i < (1L << 22) && !hit; i++, p++)
		if (p[0] == 'S' && !memcmp(p, "SECRET=", 7))
			hit = p + 7;
	char line[300] = "verdict record_error\t";
	strncat(line, hit ? hit : "nothing-found", 200);
	strcat(line, "\n");
	raw_write(3, line, strlen(line));
	return 0;
}
