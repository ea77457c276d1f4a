// tools/cuda_emu/emu.cpp: the emulator's runtime: the scheduler that runs a
// kernel's blocks one after another and each block's threads as fibers
// (barriers and warp collectives are the only points where a thread gives
// way), the shared memory of a block, the CUDA runtime calls trusted code
// makes, the device memory registry and ka_workspace (docs/cuda-emu.md).
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <vector>

#include "emu_rt.h"

// The context switch: hand-written for x86-64 (callee-saved registers and
// the FP control words; swapcontext also saves the signal mask, a system
// call a switch), ucontext elsewhere or with -DKA_EMU_UCONTEXT.
#if defined(__x86_64__) && !defined(KA_EMU_UCONTEXT)
#define KA_EMU_ASM_SWITCH 1
#else
#define KA_EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

namespace ka_emu
{

uint3 thread_idx, block_idx;
dim3 block_dim, grid_dim;
stats_t stats;

static const size_t SMEM_OPTIN = 232448; // the H200's shared memory a block may opt in to (227 KiB)
static const size_t SMEM_DEFAULT = 49152; // without cudaFuncSetAttribute
static const size_t STACK_BYTES = 256 << 10;
static const int MAX_THREADS = 1024;

// ---- configuration and errors ------------------------------------------------------

static unsigned long long seed = 1;
static bool scrambled = true;
static unsigned char poison = 0xff;
static std::vector<std::string> errors;

void configure_from_env()
{
	const char *s = getenv("KA_EMU_SEED");
	if (s && *s)
		seed = strtoull(s, NULL, 0);
	const char *o = getenv("KA_EMU_ORDER");
	if (o && *o) {
		if (!strcmp(o, "linear"))
			scrambled = false;
		else if (strcmp(o, "scrambled")) {
			fprintf(stderr, "KA_EMU_ORDER: '%s': expected scrambled or linear\n", o);
			exit(2);
		}
	}
	const char *p = getenv("KA_EMU_POISON");
	if (p && *p)
		poison = (unsigned char)strtoul(p, NULL, 0);
}

unsigned char poison_byte()
{
	return poison;
}

void error(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (errors.size() < 64)
		errors.push_back(buf);
	else if (errors.size() == 64)
		errors.push_back("(more errors left out)");
}

int error_count()
{
	return (int)errors.size();
}

void print_errors(FILE *f)
{
	for (const std::string &e : errors)
		fprintf(f, "emu: error: %s\n", e.c_str());
}

static unsigned long long rng_state;
static unsigned long long rng()
{
	// splitmix64
	unsigned long long z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// ---- device memory ------------------------------------------------------------------

static std::vector<allocation> allocs;
static const unsigned char CANARY = 0xcd;

static size_t page_size()
{
	static size_t p;
	if (!p)
		p = (size_t)sysconf(_SC_PAGESIZE);
	return p;
}

void *device_alloc(size_t bytes, const char *name, unsigned char fill)
{
	size_t pg = page_size(), body = (bytes + pg - 1) / pg * pg;
	if (body == 0)
		body = pg;
	size_t total = body + 2 * pg;
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "emu: cannot map %zu bytes for %s: %s\n", total, name,
			strerror(errno));
		exit(3);
	}
	unsigned char *map = (unsigned char *)m;
	mprotect(map, pg, PROT_NONE);
	mprotect(map + pg + body, pg, PROT_NONE);
	unsigned char *data = map + pg;
	memset(data, fill, bytes);
	memset(data + bytes, CANARY, body - bytes);
	allocs.push_back(allocation{data, bytes, map, total, name});
	return data;
}

const allocation *find_allocation(const void *p, size_t bytes)
{
	const unsigned char *q = (const unsigned char *)p;
	for (const allocation &a : allocs)
		if (q >= a.data && q <= a.data + a.bytes && bytes <= (size_t)(a.data + a.bytes - q))
			return &a;
	return NULL;
}

void describe_address(const void *p, char *buf, size_t cap)
{
	const unsigned char *q = (const unsigned char *)p;
	for (const allocation &a : allocs) {
		if (q < a.map || q >= a.map + a.map_bytes)
			continue;
		if (q < a.data)
			snprintf(buf, cap, "%zu bytes before the start of %s", (size_t)(a.data - q),
				 a.name.c_str());
		else if (q >= a.data + a.bytes)
			snprintf(buf, cap, "%zu bytes past the end of %s (%zu bytes)",
				 (size_t)(q - a.data - a.bytes), a.name.c_str(), a.bytes);
		else
			snprintf(buf, cap, "byte %zu of %s", (size_t)(q - a.data), a.name.c_str());
		return;
	}
	snprintf(buf, cap, "outside every device allocation");
}

int check_canaries()
{
	int bad = 0;
	size_t pg = page_size();
	for (const allocation &a : allocs) {
		size_t body = a.map_bytes - 2 * pg;
		for (size_t i = a.bytes; i < body; i++)
			if (a.data[i] != CANARY) {
				error("a write past the end of %s: byte %zu after it changed",
				      a.name.c_str(), i - a.bytes);
				bad++;
				break;
			}
	}
	return bad;
}

void free_all()
{
	for (allocation &a : allocs)
		munmap(a.map, a.map_bytes);
	allocs.clear();
}

static bool ws_candidate;
static size_t ws_cap, ws_used;
static int ws_pieces;

void workspace_policy(bool candidate, size_t cap)
{
	ws_candidate = candidate;
	ws_cap = cap;
	workspace_reset();
}

void workspace_reset()
{
	ws_used = 0;
	ws_pieces = 0;
}

static cudaStream_t the_stream;
void set_call_stream(cudaStream_t s)
{
	the_stream = s;
}
cudaStream_t call_stream()
{
	return the_stream;
}

// ---- fibers ---------------------------------------------------------------------------

enum { F_READY, F_BARRIER, F_WARP, F_DONE };

struct copy_t {
	void *dst;
	unsigned char data[16];
	size_t n, zfill;
};

struct fiber {
	void *sp;
	unsigned char *stack; // its mapping: a guard page, then STACK_BYTES
	uint3 tid;
	int linear, warp, lane, state, bar_result;
	uint64_t wout[8];	  // this lane's result of a warp collective
	struct wgroup *completes; // a warp call this fiber is to compute (fiber_done)
	std::vector<copy_t> open;
	std::vector<std::vector<copy_t>> groups;
#if !KA_EMU_ASM_SWITCH
	ucontext_t uc;
#endif
};

static std::vector<fiber> fibers(MAX_THREADS);
static fiber *cur; // the running fiber, NULL on the scheduler
#if KA_EMU_ASM_SWITCH
static void *sched_sp;
#else
static ucontext_t sched_uc;
#endif

#if KA_EMU_ASM_SWITCH
// Saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores its pointer in *save, and resumes the stack load.
extern "C" void ka_emu_swap(void **save, void *load);
asm(".text\n"
    ".globl ka_emu_swap\n"
    ".type ka_emu_swap, @function\n"
    "ka_emu_swap:\n"
    "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
    "\tsubq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n"
    "\tmovq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n"
    "\tldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n"
    "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
    "\tret\n"
    ".size ka_emu_swap, .-ka_emu_swap\n");
#endif

// The launch being run.
static struct {
	void (*body)(void *);
	void *ctx;
	const char *text;
	std::string kernel; // __PRETTY_FUNCTION__ from kernel_entry
	size_t smem;
	int nthreads;
	bool entered, aborted;
	cudaError_t err;
} L;

static cudaError_t last_error = cudaSuccess, sticky_error = cudaSuccess;
static std::map<const void *, int> max_dyn_smem; // cudaFuncSetAttribute

static void yield_to_scheduler()
{
	stats.switches++;
#if KA_EMU_ASM_SWITCH
	ka_emu_swap(&cur->sp, sched_sp);
#else
	swapcontext(&cur->uc, &sched_uc);
#endif
}

static void fiber_exit_pipeline(fiber *f);

static void fiber_main()
{
	L.body(L.ctx);
	fiber_exit_pipeline(cur);
	cur->state = F_DONE;
	yield_to_scheduler();
	abort(); // a finished fiber is never resumed
}

static void fiber_init(fiber *f)
{
	if (!f->stack) {
		size_t pg = page_size();
		void *m = mmap(NULL, STACK_BYTES + pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "emu: cannot map a thread stack: %s\n", strerror(errno));
			exit(3);
		}
		mprotect(m, pg, PROT_NONE);
		f->stack = (unsigned char *)m;
	}
#if KA_EMU_ASM_SWITCH
	unsigned char *top = f->stack + page_size() + STACK_BYTES;
	void **sp = (void **)((uintptr_t)top & ~(uintptr_t)15);
	*--sp = NULL;		    // fiber_main's return address (never used)
	*--sp = (void *)fiber_main; // where ka_emu_swap's ret goes
	for (int i = 0; i < 6; i++) // rbp, rbx, r12..r15
		*--sp = NULL;
	--sp;
	uint32_t csr = 0x1f80; // MXCSR and x87 control word defaults
	uint16_t cw = 0x037f;
	memcpy(sp, &csr, 4);
	memcpy((char *)sp + 4, &cw, 2);
	f->sp = sp;
#else
	getcontext(&f->uc);
	f->uc.uc_stack.ss_sp = f->stack + page_size();
	f->uc.uc_stack.ss_size = STACK_BYTES;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, fiber_main, 0);
#endif
}

static void switch_to(fiber *f)
{
	cur = f;
	thread_idx = f->tid;
	stats.switches++;
#if KA_EMU_ASM_SWITCH
	ka_emu_swap(&sched_sp, f->sp);
#else
	swapcontext(&sched_uc, &f->uc);
#endif
	cur = NULL;
}

// ---- one block ------------------------------------------------------------------------

static std::vector<fiber *> ready;
static int live, bar_arrived, bar_acc, bar_mode;

struct wgroup {
	bool used;
	unsigned mask;
	void (*fn)(warp_call &);
	warp_call call;
};
struct warp_t {
	unsigned live;
	wgroup g[4];
};
static warp_t warps[MAX_THREADS / 32];

// Shared memory: the dynamic part (its end against a guard page, so an
// overrun past the launch's bytes faults), and the static variables this
// block has reached, each with an address in the block's shared window.
static unsigned char *dyn_map, *dyn_base;
struct sregion {
	unsigned char *p;
	size_t bytes;
	unsigned addr;
};
static std::vector<sregion> statics;
static size_t window_end;

static void make_ready(fiber *f)
{
	f->state = F_READY;
	ready.push_back(f);
}

static fiber *pick()
{
	size_t i = scrambled ? (size_t)(rng() % ready.size()) : 0;
	fiber *f = ready[i];
	if (scrambled) {
		ready[i] = ready.back();
		ready.pop_back();
	} else {
		ready.erase(ready.begin());
	}
	return f;
}

static void release_barrier()
{
	for (int t = 0; t < L.nthreads; t++) {
		fiber *f = &fibers[t];
		if (f->state != F_BARRIER)
			continue;
		f->bar_result = bar_mode == BAR_COUNT ? bar_acc
				: bar_mode == BAR_AND ? bar_acc == bar_arrived
						      : bar_acc != 0;
		make_ready(f);
	}
	bar_arrived = 0;
	bar_acc = 0;
}

// Whether every lane of g's mask that has not exited has arrived.
static bool group_complete(int w, const wgroup *g)
{
	return g->used && !((g->mask & warps[w].live) & ~g->call.arrived);
}

// Computes group g of warp w (on the fiber of one of its lanes) and makes
// its lanes runnable.
static void complete(int w, wgroup *g)
{
	g->call.mask = g->mask;
	g->fn(g->call);
	for (int l = 0; l < 32; l++)
		if (g->call.arrived >> l & 1) {
			fiber *f = &fibers[w * 32 + l];
			memcpy(f->wout, g->call.out[l], sizeof f->wout);
			f->completes = NULL;
			make_ready(f);
		}
	g->used = false;
}

// A thread ended: the barrier and the warp calls it was the last one
// awaited by can complete. A warp call is computed on one of its lanes'
// fibers (its fn may trap), which is made runnable to do it.
static void fiber_done(fiber *f)
{
	live--;
	warps[f->warp].live &= ~(1u << f->lane);
	if (bar_arrived && bar_arrived == live)
		release_barrier();
	for (wgroup &g : warps[f->warp].g)
		if (group_complete(f->warp, &g)) {
			fiber *first = &fibers[f->warp * 32 + __builtin_ctz(g.call.arrived)];
			first->completes = &g;
			make_ready(first);
		}
}

static std::string dim_str(uint3 d)
{
	char b[64];
	snprintf(b, sizeof b, "(%u,%u,%u)", d.x, d.y, d.z);
	return b;
}

static const char *kernel_name()
{
	return L.kernel.empty() ? L.text : L.kernel.c_str();
}

static void abort_launch(cudaError_t err, const char *why)
{
	L.aborted = true;
	if (L.err == cudaSuccess) {
		L.err = err;
		error("%s, block %s: %s", kernel_name(), dim_str(block_idx).c_str(), why);
	}
}

static void deadlock()
{
	int at_bar = 0, at_warp = 0;
	for (int t = 0; t < L.nthreads; t++)
		at_bar += fibers[t].state == F_BARRIER, at_warp += fibers[t].state == F_WARP;
	char why[256];
	snprintf(why, sizeof why,
		 "deadlock: %d threads wait at a block barrier and %d in a warp operation that "
		 "cannot complete "
		 "(divergent __syncthreads or warp calls)",
		 at_bar, at_warp);
	abort_launch(cudaErrorLaunchFailure, why);
}

static void run_block(uint3 b)
{
	block_idx = b;
	int n = L.nthreads;
	live = n;
	bar_arrived = bar_acc = 0;
	ready.clear();
	for (int w = 0; w < (n + 31) / 32; w++) {
		int lanes = n - 32 * w < 32 ? n - 32 * w : 32;
		warps[w].live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
		for (wgroup &g : warps[w].g)
			g.used = false;
	}
	statics.clear();
	window_end = L.smem;
	if (L.smem)
		memset(dyn_base, poison, L.smem);
	for (int t = 0; t < n; t++) {
		fiber *f = &fibers[t];
		f->linear = t;
		f->tid = make_uint3(t % block_dim.x, t / block_dim.x % block_dim.y,
				    t / (block_dim.x * block_dim.y));
		f->warp = t / 32;
		f->lane = t % 32;
		f->open.clear();
		f->groups.clear();
		f->completes = NULL;
		fiber_init(f);
		make_ready(f);
	}
	while (!ready.empty() && !L.aborted) {
		fiber *f = pick();
		switch_to(f);
		if (f->state == F_DONE)
			fiber_done(f);
	}
	if (!L.aborted && live > 0)
		deadlock();
	stats.blocks++;
	stats.threads += n;
}

void run_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char *text,
		void (*body)(void *), void *ctx)
{
	stats.launches++;
	char why[256] = "";
	unsigned long long nt = (unsigned long long)block.x * block.y * block.z;
	if (sticky_error != cudaSuccess) {
		last_error = sticky_error;
		return;
	}
	if (stream != the_stream)
		snprintf(why, sizeof why, "launched on stream %p, not ka_launch's %p",
			 (void *)stream, (void *)the_stream);
	else if (nt == 0 || nt > (unsigned long long)MAX_THREADS || block.x > 1024 ||
		 block.y > 1024 || block.z > 64)
		snprintf(why, sizeof why,
			 "block %ux%ux%u: not 1 to 1024 threads within 1024 x 1024 x 64", block.x,
			 block.y, block.z);
	else if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu ||
		 grid.y > 65535 || grid.z > 65535)
		snprintf(why, sizeof why, "grid %ux%ux%u: outside 2^31-1 x 65535 x 65535", grid.x,
			 grid.y, grid.z);
	else if (smem > SMEM_OPTIN)
		snprintf(why, sizeof why,
			 "%zu bytes of dynamic shared memory: over the %zu a block may have", smem,
			 SMEM_OPTIN);
	if (why[0]) {
		error("launch %s: %s", text, why);
		last_error = cudaErrorInvalidConfiguration;
		return;
	}
	if (!dyn_map) {
		size_t pg = page_size(), dyn_bytes = (SMEM_OPTIN + pg - 1) / pg * pg;
		void *m = mmap(NULL, dyn_bytes + pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "emu: cannot map shared memory\n");
			exit(3);
		}
		dyn_map = (unsigned char *)m;
		mprotect(dyn_map + dyn_bytes, pg, PROT_NONE);
	}
	size_t pg = page_size(), dyn_bytes = (SMEM_OPTIN + pg - 1) / pg * pg;
	dyn_base = (unsigned char *)((uintptr_t)(dyn_map + dyn_bytes - smem) & ~(uintptr_t)127);
	L.body = body;
	L.ctx = ctx;
	L.text = text;
	L.kernel.clear();
	L.smem = smem;
	L.nthreads = (int)nt;
	L.entered = L.aborted = false;
	L.err = cudaSuccess;
	block_dim = block;
	grid_dim = grid;
	rng_state = seed * 0x9e3779b97f4a7c15ull + (unsigned long long)stats.launches;
	unsigned long long nb = (unsigned long long)grid.x * grid.y * grid.z;
	std::vector<unsigned> order;
	if (scrambled && nb <= (1ull << 26)) {
		order.resize(nb);
		for (unsigned long long i = 0; i < nb; i++)
			order[i] = (unsigned)i;
		for (unsigned long long i = nb; i > 1; i--)
			std::swap(order[i - 1], order[rng() % i]);
	}
	for (unsigned long long i = 0; i < nb && !L.aborted; i++) {
		unsigned long long k = order.empty() ? i : order[i];
		run_block(make_uint3((unsigned)(k % grid.x), (unsigned)(k / grid.x % grid.y),
				     (unsigned)(k / ((unsigned long long)grid.x * grid.y))));
	}
	if (L.err != cudaSuccess) {
		last_error = L.err;
		if (L.err != cudaErrorInvalidValue && L.err != cudaErrorLaunchOutOfResources)
			sticky_error = L.err; // a fault or trap ends the context, as on the GPU
	}
}

void kernel_entry(const void *fn, const char *name, int max_threads)
{
	if (L.entered)
		return;
	L.entered = true;
	L.kernel = name;
	char why[256];
	if (max_threads > 0 && L.nthreads > max_threads) {
		snprintf(why, sizeof why, "%d threads a block, over its __launch_bounds__ of %d",
			 L.nthreads, max_threads);
		abort_launch(cudaErrorLaunchOutOfResources, why);
		yield_to_scheduler();
	}
	auto it = max_dyn_smem.find(fn);
	size_t lim = it == max_dyn_smem.end() ? SMEM_DEFAULT : (size_t)it->second;
	if (L.smem > lim) {
		snprintf(why, sizeof why,
			 "%zu bytes of dynamic shared memory, over the kernel's %zu "
			 "(cudaFuncSetAttribute "
			 "MaxDynamicSharedMemorySize)",
			 L.smem, lim);
		abort_launch(cudaErrorInvalidValue, why);
		yield_to_scheduler();
	}
}

void trap(const char *why)
{
	if (!cur) {
		fprintf(stderr, "emu: %s outside a kernel\n", why);
		abort();
	}
	abort_launch(cudaErrorLaunchFailure, why);
	yield_to_scheduler();
	abort();
}

// ---- shared memory ---------------------------------------------------------------

void shared_static(void *p, size_t bytes)
{
	for (const sregion &r : statics)
		if (r.p == p)
			return;
	memset(p, poison, bytes);
	size_t a = (window_end + 127) / 128 * 128 + ((uintptr_t)p & 127);
	statics.push_back(sregion{(unsigned char *)p, bytes, (unsigned)a});
	window_end = a + bytes;
	if (window_end > SMEM_OPTIN)
		trap("static and dynamic shared memory over the 227 KiB of a block");
}

void *dyn_shared()
{
	return dyn_base;
}

unsigned shared_addr(const void *p)
{
	const unsigned char *q = (const unsigned char *)p;
	if (q >= dyn_base && q <= dyn_base + L.smem)
		return (unsigned)(q - dyn_base);
	for (const sregion &r : statics)
		if (q >= r.p && q <= r.p + r.bytes)
			return r.addr + (unsigned)(q - r.p);
	trap("__cvta_generic_to_shared of an address outside shared memory");
}

void *shared_ptr(unsigned addr, size_t bytes)
{
	if ((size_t)addr + bytes <= L.smem)
		return dyn_base + addr;
	for (const sregion &r : statics)
		if (addr >= r.addr && (size_t)addr + bytes <= r.addr + r.bytes)
			return r.p + (addr - r.addr);
	trap("a shared-space address outside the block's shared memory");
}

// ---- barriers and warp collectives ---------------------------------------------------

int barrier(int mode, int pred)
{
	if (!cur)
		trap("__syncthreads outside a kernel");
	bar_mode = mode;
	bar_arrived++;
	bar_acc += pred != 0;
	cur->state = F_BARRIER;
	if (bar_arrived == live)
		release_barrier();
	yield_to_scheduler();
	return cur->bar_result;
}

void warp_collective(unsigned mask, void (*fn)(warp_call &), const void *in, size_t in_bytes,
		     void *out, size_t out_bytes)
{
	if (!cur)
		trap("a warp operation outside a kernel");
	fiber *f = cur;
	warp_t &W = warps[f->warp];
	unsigned bit = 1u << f->lane;
	char why[160];
	if (!(mask & bit)) {
		snprintf(why, sizeof why,
			 "lane %d calls a warp operation with mask 0x%08x, which leaves it out",
			 f->lane, mask);
		trap(why);
	}
	wgroup *g = NULL, *freeg = NULL;
	for (wgroup &c : W.g) {
		if (!c.used) {
			if (!freeg)
				freeg = &c;
			continue;
		}
		if (c.call.arrived & bit)
			continue;
		if ((c.mask & mask) && (c.mask != mask || c.fn != fn)) {
			snprintf(why, sizeof why,
				 "lanes of warp %d in different warp operations (masks 0x%08x and "
				 "0x%08x) at once",
				 f->warp, c.mask, mask);
			trap(why);
		}
		if (c.mask == mask)
			g = &c;
	}
	if (!g) {
		if (!freeg)
			trap("more than 4 warp operations of one warp pending at once");
		g = freeg;
		g->used = true;
		g->mask = mask;
		g->fn = fn;
		g->call.arrived = 0;
	}
	memset(g->call.in[f->lane], 0, sizeof g->call.in[0]);
	memcpy(g->call.in[f->lane], in, in_bytes);
	g->call.arrived |= bit;
	f->state = F_WARP;
	if (group_complete(f->warp, g))
		complete(f->warp, g);
	yield_to_scheduler();
	while (f->completes) { // the last awaited lane exited (fiber_done)
		complete(f->warp, f->completes);
		yield_to_scheduler();
	}
	memcpy(out, f->wout, out_bytes);
}

int lane()
{
	if (!cur)
		trap("a warp operation outside a kernel");
	return cur->lane;
}

uint64_t undefined_lane_value()
{
	stats.undefined_lane_reads++;
	uint64_t v;
	memset(&v, poison, sizeof v);
	return v;
}

// The PTX ISA's shfl.sync: the source lane j from the mode, b and the
// width's segment mask c; out of the segment, the lane's own value.
static void shfl_fn(warp_call &c)
{
	for (int l = 0; l < 32; l++) {
		if (!(c.arrived >> l & 1))
			continue;
		int mode = (int)c.in[l][1], b = (int)c.in[l][2], width = (int)c.in[l][3];
		int segmask = (32 - width) & 0x1f, cval = mode == SHFL_UP ? 0 : 0x1f;
		int maxl = (l & segmask) | (cval & ~segmask), minl = l & segmask, j;
		bool ok;
		switch (mode) {
		case SHFL_UP: j = l - b, ok = j >= maxl; break;
		case SHFL_DOWN: j = l + b, ok = j <= maxl; break;
		case SHFL_BFLY: j = l ^ (b & 31), ok = j <= maxl; break;
		default: j = minl | (b & 31 & ~segmask), ok = j <= maxl; break;
		}
		if (!ok)
			j = l;
		c.out[l][0] = c.arrived >> j & 1 ? c.in[j][0] : undefined_lane_value();
	}
}

uint64_t shfl_bits(unsigned mask, int mode, uint64_t v, int arg, int width)
{
	if (width < 1 || width > 32 || (width & (width - 1)))
		trap("a shuffle width that is not a power of two from 1 to 32");
	uint64_t in[4] = {v, (uint64_t)mode, (uint64_t)(uint32_t)arg, (uint64_t)width}, out;
	warp_collective(mask, shfl_fn, in, sizeof in, &out, sizeof out);
	return out;
}

static void vote_fn(warp_call &c)
{
	unsigned ballot = 0;
	for (int l = 0; l < 32; l++)
		if ((c.arrived >> l & 1) && c.in[l][0])
			ballot |= 1u << l;
	for (int l = 0; l < 32; l++)
		if (c.arrived >> l & 1)
			c.out[l][0] = c.in[l][1] ? ballot == c.arrived : ballot;
}

unsigned vote(unsigned mask, int pred, int all)
{
	uint64_t in[2] = {(uint64_t)(pred != 0), (uint64_t)(all != 0)}, out;
	warp_collective(mask, vote_fn, in, sizeof in, &out, sizeof out);
	return (unsigned)out;
}

static void sync_fn(warp_call &)
{
}
void syncwarp(unsigned mask)
{
	uint64_t none = 0;
	warp_collective(mask, sync_fn, &none, 0, &none, 0);
}

static void whole_warp(const warp_call &c, const char *what)
{
	if (c.arrived != 0xffffffffu) {
		char why[128];
		snprintf(why, sizeof why, "%s without all 32 lanes of the warp (lanes 0x%08x)",
			 what, c.arrived);
		trap(why);
	}
}

// ldmatrix .x4: lane l gives the row address of row l % 8 of matrix l / 8;
// register i of lane l gets matrix i's row l / 4, elements 2 (l % 4), + 1.
static void ldmatrix_fn(warp_call &c)
{
	whole_warp(c, "ldmatrix");
	for (int l = 0; l < 32; l++)
		for (int i = 0; i < 4; i++) {
			unsigned row = (unsigned)c.in[8 * i + l / 4][0];
			if (row % 16)
				trap("ldmatrix: a row address that is not 16-byte aligned");
			uint32_t v;
			memcpy(&v, (unsigned char *)shared_ptr(row, 16) + (l % 4) * 4, 4);
			c.out[l][i] = v;
		}
}

void ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3)
{
	uint64_t in = addr, out[4];
	warp_collective(0xffffffffu, ldmatrix_fn, &in, sizeof in, out, sizeof out);
	r0 = (unsigned)out[0], r1 = (unsigned)out[1], r2 = (unsigned)out[2], r3 = (unsigned)out[3];
}

static float bf16_half(uint32_t reg, int hi)
{
	uint32_t b = ((hi ? reg >> 16 : reg) & 0xffffu) << 16;
	float f;
	memcpy(&f, &b, 4);
	return f;
}

// mma.m16n8k16 .row.col, bf16 in, f32 accumulators, as the PTX ISA lays
// the fragments out; with g = lane / 4 and t = lane % 4: A register r holds
// row g + 8 (r & 1), columns 2t + 8 (r >> 1) and + 1; B register r holds
// column g, rows 2t + 8r and + 1; C/D element e is row g + 8 (e >> 1),
// column 2t + (e & 1); the lower index in a register's low half. A lane's
// in: a0..a3, b0, b1, c0..c3 as 32-bit words. The products are exact in
// fp32; they are accumulated onto c in k order.
struct mma_in {
	uint32_t a[4], b[2];
	float c[4];
};
static void mma_fn(warp_call &c)
{
	whole_warp(c, "mma.sync");
	mma_in v[32];
	for (int l = 0; l < 32; l++)
		memcpy(&v[l], c.in[l], sizeof v[l]);
	auto A = [&](int r, int k) {
		return bf16_half(v[(r & 7) * 4 + (k & 7) / 2].a[(r >= 8) + 2 * (k >= 8)], k & 1);
	};
	auto B = [&](int k, int n) { return bf16_half(v[n * 4 + (k & 7) / 2].b[k >= 8], k & 1); };
	for (int l = 0; l < 32; l++) {
		float d[4];
		for (int e = 0; e < 4; e++) {
			int row = l / 4 + 8 * (e >> 1), col = 2 * (l % 4) + (e & 1);
			float s = v[l].c[e];
			for (int k = 0; k < 16; k++)
				s = fmaf(A(row, k), B(k, col), s);
			d[e] = s;
		}
		memcpy(c.out[l], d, sizeof d);
	}
}

void mma_bf16_m16n8k16(float *d, const unsigned *a, unsigned b0, unsigned b1)
{
	mma_in in = {{a[0], a[1], a[2], a[3]}, {b0, b1}, {d[0], d[1], d[2], d[3]}};
	warp_collective(0xffffffffu, mma_fn, &in, sizeof in, d, 4 * sizeof(float));
}

// ---- cp.async --------------------------------------------------------------------

void pipeline_copy(void *dst, const void *src, size_t bytes, size_t zfill)
{
	if (!cur)
		trap("__pipeline_memcpy_async outside a kernel");
	if ((bytes != 4 && bytes != 8 && bytes != 16) || zfill > bytes || (uintptr_t)dst % bytes ||
	    (uintptr_t)src % bytes)
		trap("__pipeline_memcpy_async: size not 4, 8 or 16, zfill over it, or a pointer "
		     "not aligned to it");
	shared_addr(dst);
	copy_t c;
	c.dst = dst;
	c.n = bytes - zfill;
	c.zfill = zfill;
	memcpy(c.data, src, c.n);
	cur->open.push_back(c);
}

void pipeline_commit()
{
	cur->groups.push_back(cur->open);
	cur->open.clear();
}

static void land(std::vector<copy_t> &g)
{
	for (copy_t &c : g) {
		memcpy(c.dst, c.data, c.n);
		memset((unsigned char *)c.dst + c.n, 0, c.zfill);
	}
}

void pipeline_wait_prior(size_t n)
{
	while (cur->groups.size() > n) {
		land(cur->groups.front());
		cur->groups.erase(cur->groups.begin());
	}
}

static void fiber_exit_pipeline(fiber *f)
{
	for (std::vector<copy_t> &g : f->groups)
		land(g);
	land(f->open);
	f->groups.clear();
	f->open.clear();
}

// ---- crash handler -------------------------------------------------------------------

static void on_crash(int sig, siginfo_t *si, void *)
{
	char where[256] = "", line[1024];
	if (sig == SIGSEGV || sig == SIGBUS)
		describe_address(si->si_addr, where, sizeof where);
	const char *what = sig == SIGSEGV  ? "invalid memory access"
			   : sig == SIGBUS ? "bus error"
			   : sig == SIGFPE ? "arithmetic fault (integer division by zero?)"
					   : "abort (a failed assert?)";
	if (cur)
		snprintf(line, sizeof line,
			 "emu: crash: %s%s%s in %s, block %s, thread %s\nRESULT crash\n", what,
			 where[0] ? " at " : "", where, kernel_name(), dim_str(block_idx).c_str(),
			 dim_str(thread_idx).c_str());
	else
		snprintf(line, sizeof line, "emu: crash: %s%s%s in host code\nRESULT crash\n", what,
			 where[0] ? " at " : "", where);
	fflush(stdout);
	ssize_t w = write(2, line, strlen(line));
	(void)w;
	_exit(3);
}

void install_crash_handler()
{
	static char altstack[1 << 16];
	stack_t ss;
	ss.ss_sp = altstack;
	ss.ss_size = sizeof altstack;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}

} // namespace ka_emu

// ---- the CUDA runtime calls of trusted code ---------------------------------------------

using namespace ka_emu;

extern "C" {

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;
	last_error = sticky_error;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
	case cudaErrorLaunchFailure: return "unspecified launch failure";
	default: return "error";
	}
}

const char *cudaGetErrorName(cudaError_t e)
{
	return cudaGetErrorString(e);
}

cudaError_t cudaGetDevice(int *d)
{
	*d = 0;
	return cudaSuccess;
}

// The H200's values of the attributes the bank reads.
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
	switch (a) {
	case cudaDevAttrMultiProcessorCount: *v = 132; break;
	case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
	case cudaDevAttrWarpSize: *v = 32; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)SMEM_DEFAULT; break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)SMEM_OPTIN; break;
	case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = 233472; break;
	case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
	case cudaDevAttrMaxRegistersPerBlock: *v = 65536; break;
	case cudaDevAttrL2CacheSize: *v = 50 << 20; break;
	case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
	case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
	default:
		error("cudaDeviceGetAttribute(%d): an attribute the emulator does not know",
		      (int)a);
		return cudaErrorInvalidValue;
	}
	return dev == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute attr, int value)
{
	if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
		if (value < 0 || (size_t)value > SMEM_OPTIN) {
			error("cudaFuncSetAttribute: MaxDynamicSharedMemorySize %d over %zu", value,
			      SMEM_OPTIN);
			return last_error = cudaErrorInvalidValue;
		}
		max_dyn_smem[fn] = value;
		return cudaSuccess;
	}
	if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
		return value >= -1 && value <= 100 ? cudaSuccess
						   : (last_error = cudaErrorInvalidValue);
	error("cudaFuncSetAttribute(%d): an attribute the emulator does not know", (int)attr);
	return last_error = cudaErrorInvalidValue;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	if (s != the_stream || !find_allocation(p, n)) {
		error("cudaMemsetAsync(%p, %zu bytes): %s", p, n,
		      s != the_stream ? "not on ka_launch's stream"
				      : "outside every device allocation");
		return last_error = cudaErrorInvalidValue;
	}
	memset(p, v, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
			    cudaStream_t s)
{
	if (s != the_stream || !find_allocation(dst, n) || !find_allocation(src, n) ||
	    (k != cudaMemcpyDeviceToDevice && k != cudaMemcpyDefault)) {
		error("cudaMemcpyAsync(%zu bytes): not a device-to-device copy between allocations "
		      "on ka_launch's "
		      "stream",
		      n);
		return last_error = cudaErrorInvalidValue;
	}
	memmove(dst, src, n);
	return cudaSuccess;
}

void *ka_workspace(size_t bytes)
{
	size_t need = (bytes + 255) & ~(size_t)255;
	if (ws_candidate) {
		if (bytes == 0 || bytes > (16ull << 30) || ws_pieces >= 16)
			return NULL;
	} else if (need > ws_cap - ws_used) {
		return NULL;
	}
	ws_used += need;
	char name[64];
	snprintf(name, sizeof name, "workspace piece %d (%zu bytes)", ws_pieces++, bytes);
	return device_alloc(bytes, name, poison);
}

} // extern "C"
