// tools/cuda_emu/emu_rt.h: the emulator's side that the driver (driver.cpp)
// and the cuBLAS emulation (blas.cpp) use, beside emu.h's device dialect:
// the device memory registry, the workspace policy, the stream of the call
// and the errors of the run (docs/cuda-emu.md).
#ifndef KA_CUDA_EMU_RT_H
#define KA_CUDA_EMU_RT_H

#include <stddef.h>
#include <stdint.h>
#include <string>

#include "emu.h"

namespace ka_emu
{

// Emulated device memory: each allocation starts on a page (as the runner's
// buffers, 4096 bytes past a canary region, do), the bytes after its end up
// to the next page hold canary bytes, and a PROT_NONE page lies on either
// side, so a read or write before the start or a page past the end faults
// and one into the tail is found by check_canaries.
struct allocation {
	unsigned char *data;
	size_t bytes;
	unsigned char *map;
	size_t map_bytes;
	std::string name;
};
// A new allocation of bytes (0 allowed) filled with fill; never NULL (exits
// when the host is out of memory).
void *device_alloc(size_t bytes, const char *name, unsigned char fill);
// The allocation holding [p, p + bytes), or NULL.
const allocation *find_allocation(const void *p, size_t bytes);
// Describes an address relative to the allocations ("12 bytes past the end
// of input x") into buf.
void describe_address(const void *p, char *buf, size_t cap);
// Allocations whose tail canaries changed: one error each; returns the count.
int check_canaries();
// Frees every allocation (between runs).
void free_all();

// ka_workspace as the runner gives it to a trusted baseline (one block of
// cap bytes, handed out in 256-byte-rounded pieces, NULL past the cap,
// reset for each call) or as the recorder gives it to a candidate
// (candidate: at most 16 pieces, each 1 to 16 GiB). Pieces are separate
// guarded allocations filled with the poison byte.
void workspace_policy(bool candidate, size_t cap);
void workspace_reset();

// The stream ka_launch was given: launches, cuBLAS handles and memsets must
// use it.
void set_call_stream(cudaStream_t s);
cudaStream_t call_stream();

// The run's configuration: KA_EMU_SEED (the scheduler's and block order's
// seed, default 1), KA_EMU_ORDER (scrambled, the default: threads picked at
// random among the runnable ones, blocks in a random order; or linear),
// KA_EMU_POISON (the byte that fills shared memory, outputs and workspace,
// default 0xff: NaN in every float type).
void configure_from_env();
unsigned char poison_byte();

// Errors of the run, in order (launch failures, traps, canaries, cuBLAS
// misuse): added with error(), printed by the driver.
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int error_count();
void print_errors(FILE *f);
// Counters printed with the result.
struct stats_t {
	long long launches, blocks, threads, switches, undefined_lane_reads, blas_calls;
};
extern stats_t stats;

// The crash handler (SIGSEGV, SIGBUS, SIGFPE, SIGABRT): one line naming the
// kernel, block and thread running and the faulting address, then exit 3.
void install_crash_handler();

} // namespace ka_emu

#endif
