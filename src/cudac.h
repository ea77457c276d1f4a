/* cudac.h: the parent's side of compiling a CUDA candidate (issue 4 item 1).
 * One .cu file becomes a shared object for the recorder: its #include lines
 * are checked, nvcc runs with fixed flags in a private directory that holds
 * only the source and ka_kernel.h, under a wall-clock limit; then the object's
 * undefined dynamic symbols are checked against what the recorder provides
 * plus a short C/C++ runtime allow-list, and each kernel's parameter layout is
 * read from the cubin inside the object's `.nv_fatbin` (elfread.h). Results are
 * cached by a key over everything that affects the output. Never runs the
 * candidate's code; never opens a GPU.
 *
 * The symbol lists below are shared with the recorder (record_cuda.c), so
 * the parent's check and the recorder's classification cannot drift apart. */
#ifndef KA_CUDAC_H
#define KA_CUDAC_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "elfread.h"
#include "util.h"
#include "verdict.h"

#define CUDAC_MAX_SOURCE (1u << 20) /* bytes of a candidate .cu */
#define CUDAC_MAX_LOG 16384	    /* bytes of compiler log kept */
#define CUDAC_TIMEOUT_S 120.0	    /* default wall-clock limit of one nvcc run */

/* The recording CUDA runtime's exported API (the candidate may import these
 * and the recorder implements them). X(name) for each. */
#define CUDAC_RECORDER_EXPORTS(X)                                                                  \
	X(__cudaRegisterFatBinary)                                                                 \
	X(__cudaRegisterFatBinaryEnd)                                                              \
	X(__cudaUnregisterFatBinary)                                                               \
	X(__cudaRegisterFunction)                                                                  \
	X(__cudaRegisterVar)                                                                       \
	X(__cudaPushCallConfiguration)                                                             \
	X(__cudaPopCallConfiguration)                                                              \
	X(__cudaGetKernel)                                                                         \
	X(__cudaLaunchKernel)                                                                      \
	X(cudaLaunchKernel)                                                                        \
	X(cudaLaunchKernelExC)                                                                     \
	X(cudaFuncSetAttribute)                                                                    \
	X(cudaFuncGetAttributes)                                                                   \
	X(cudaGetDevice)                                                                           \
	X(cudaGetDeviceCount)                                                                      \
	X(cudaSetDevice)                                                                           \
	X(cudaGetDeviceProperties)                                                                 \
	X(cudaDeviceGetAttribute)                                                                  \
	X(cudaOccupancyMaxActiveBlocksPerMultiprocessor)                                           \
	X(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)                                  \
	X(cudaMemsetAsync)                                                                         \
	X(cudaMemcpyAsync)                                                                         \
	X(cudaMemcpyToSymbolAsync)                                                                 \
	X(cudaGetLastError)                                                                        \
	X(cudaPeekAtLastError)                                                                     \
	X(cudaGetErrorString)                                                                      \
	X(cudaGetErrorName)                                                                        \
	X(cudaDriverGetVersion)                                                                    \
	X(cudaRuntimeGetVersion)                                                                   \
	X(cuTensorMapEncodeTiled)                                                                  \
	X(ka_workspace)

/* C++ runtime symbols nvcc's host code and ordinary C++ need; the recorder
 * is linked with libstdc++, which provides them. */
#define CUDAC_CXX_RUNTIME(X)                                                                       \
	X(__cxa_guard_acquire)                                                                     \
	X(__cxa_guard_release)                                                                     \
	X(__cxa_guard_abort)                                                                       \
	X(__cxa_atexit)                                                                            \
	X(__cxa_pure_virtual)                                                                      \
	X(__gxx_personality_v0)                                                                    \
	X(_Unwind_Resume)                                                                          \
	X(_Znwm)                                                                                   \
	X(_Znam)                                                                                   \
	X(_ZdlPv)                                                                                  \
	X(_ZdlPvm)                                                                                 \
	X(_ZdaPv)                                                                                  \
	X(_ZdaPvm)                                                                                 \
	X(_ZSt17__throw_bad_allocv)                                                                \
	X(_ZSt28__throw_bad_array_new_lengthv)                                                     \
	X(_ZSt20__throw_length_errorPKc)                                                           \
	X(_ZSt24__throw_out_of_range_fmtPKcz)                                                      \
	X(_ZSt19__throw_logic_errorPKc)                                                            \
	X(_ZSt9terminatev)

/* Sonames the candidate's object may need besides libc/libm (nvcc links the
 * host code with g++); the recorder is linked with them. */
#define CUDAC_LIBRARIES                                                                            \
	{                                                                                          \
		"libstdc++.so.6", "libgcc_s.so.1", NULL                                            \
	}

/* What a symbol name is to the CUDA target. */
enum cudac_sym {
	CUDAC_SYM_PROVIDED,   /* the recorder exports it, or the C++ runtime */
	CUDAC_SYM_CUDA,	      /* CUDA runtime/driver API the recorder refuses: record_error */
	CUDAC_SYM_LIBRARY,    /* cuBLAS/cuBLASLt/cuDNN: allowed only by the task's policy */
	CUDAC_SYM_OTHER_CUDA, /* another CUDA library (cuFFT, cuRAND, NCCL, ...): forbidden */
	CUDAC_SYM_OTHER,      /* not CUDA: the libc/libm allow-list (libc_allow.h) decides */
};

static inline int cudac_in_list_(const char *name, const char *const *list)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

/* Which library a CUDAC_SYM_LIBRARY symbol belongs to: "cublas", "cublasLt"
 * or "cudnn" (static strings), or NULL. */
static inline const char *cudac_sym_library(const char *name)
{
	if (!strncmp(name, "cublasLt", 8))
		return "cublasLt";
	if (!strncmp(name, "cublas", 6))
		return "cublas";
	if (!strncmp(name, "cudnn", 5))
		return "cudnn";
	return NULL;
}

#define CUDAC_STR_(n) #n,
/* Classify a symbol name by the lists above and the CUDA naming rules
 * (cuda*, __cuda*, cu[A-Z]* are the runtime and driver APIs). Inline so the
 * parent and the recorder share one definition. */
static inline enum cudac_sym cudac_sym_classify(const char *name)
{
	static const char *const exports[] = {CUDAC_RECORDER_EXPORTS(CUDAC_STR_) NULL};
	static const char *const cxx[] = {CUDAC_CXX_RUNTIME(CUDAC_STR_) NULL};
	static const char *const other_libs[] = {
		"cufft", "curand",    "cusparse", "cusolver", "nccl",	"nvrtc", "cupti",
		"nvml",	 "nvJitLink", "nvjpeg",	  "npp",      "cuFile", "nvtx",	 NULL};
	if (cudac_in_list_(name, exports) || cudac_in_list_(name, cxx))
		return CUDAC_SYM_PROVIDED;
	if (cudac_sym_library(name))
		return CUDAC_SYM_LIBRARY;
	for (int i = 0; other_libs[i]; i++)
		if (!strncmp(name, other_libs[i], strlen(other_libs[i])))
			return CUDAC_SYM_OTHER_CUDA;
	if (!strncmp(name, "cuda", 4) || !strncmp(name, "__cuda", 6) ||
	    (name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z'))
		return CUDAC_SYM_CUDA;
	return CUDAC_SYM_OTHER;
}

/* Options of one compilation. */
struct cudac_opts {
	const char *arch;	 /* "sm_90a": -arch=<arch>; must match sm_[0-9]+[af]? */
	const char *cache_dir;	 /* where compiled objects are kept (created) */
	const char *const *libs; /* NULL-terminated allowed libraries ("cublas",
				  * "cublasLt", "cudnn"), or NULL for none */
	double timeout_s;	 /* 0 = CUDAC_TIMEOUT_S */
	const char *nvcc;	 /* NULL = $CUDA_HOME/bin/nvcc, nvcc on PATH,
				  * /usr/local/cuda/bin/nvcc */
	const char *include_dir; /* NULL = <data root>/include (holds ka_kernel.h) */
};

/* The outcome of one compilation. */
struct cudac_result {
	enum verdict verdict; /* VERDICT_OK, VERDICT_COMPILE_ERROR or VERDICT_FORBIDDEN */
	char detail[CUDAC_MAX_LOG + 512]; /* compile log (capped), or what is forbidden */
	char *so_path;			  /* owned; the compiled object (set when OK) */
	int cached;			  /* 1 if the object came from the cache */
	double seconds;			  /* wall time of nvcc (0 when cached) */
	struct elf_kernels kernels;	  /* kernels and parameter layouts (when OK) */
};

/* Compile src (len bytes of .cu text) with o. Returns 0 with r->verdict set
 * (the candidate's fault is a verdict, never an error), or -1 with e when the
 * grader itself cannot compile (no nvcc, unwritable cache, bad arch string).
 * Free r with cudac_result_free. */
int cudac_compile(const char *src, size_t len, const struct cudac_opts *o, struct cudac_result *r,
		  struct ka_err *e);

/* Compile n sources in parallel with up to jobs processes (0 = number of
 * online CPUs). r[i] and rc[i] are what cudac_compile gives for srcs[i]; e[i]
 * holds the harness error when rc[i] is -1. Returns 0 if every rc[i] is 0,
 * else -1. Candidates with the same source share one nvcc run through the
 * cache. */
int cudac_compile_many(int n, const char *const *srcs, const size_t *lens,
		       const struct cudac_opts *o, int jobs, struct cudac_result *r, int *rc,
		       struct ka_err *e);

void cudac_result_free(struct cudac_result *r);

/* The request fragment the recorder needs for this module (docs/cuda-target.md):
 * [{"name":..., "params":[{"offset":o,"size":s},...], "param_bytes":...,
 * "num_regs":..., "static_smem":..., "local_bytes":..., "const_bytes":...,
 * "max_threads":...}, ...]. New reference; caller decrefs. */
json_t *cudac_kernels_json(const struct elf_kernels *ks);

/* The nvcc version line ("release 13.0, V13.0.88") or NULL if nvcc cannot be
 * run; static storage, computed once. */
const char *cudac_nvcc_version(const char *nvcc);

/* Check the #include lines of src: absolute paths, "..", macro includes and
 * headers outside the allowed set (toolkit headers, C/C++ standard headers,
 * ka_kernel.h, and the headers of the libraries in libs) are refused. 0, or -1
 * with why (cap bytes) naming the include and its line. */
int cudac_check_includes(const char *src, size_t len, const char *const *libs, char *why,
			 size_t cap);

#endif
