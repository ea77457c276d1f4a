/* cudasym.h: what a dynamic symbol of a compiled CUDA candidate is to the
 * CUDA target: the recording runtime's exports, the C++ runtime, the vendor
 * libraries a task may allow, and every other CUDA API. Shared by the parent's
 * compile check (cudac.c) and the recorder (record_cuda.c), so the two cannot
 * drift apart. Pure functions of a name; no I/O. */
#ifndef KA_CUDASYM_H
#define KA_CUDASYM_H

#include <string.h>

/* The recording CUDA runtime's exported API (the candidate may import these
 * and the recorder implements them). X(name) for each. */
#define CUDASYM_RECORDER_EXPORTS(X)                                                                \
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

/* The cuBLAS entry points the recording runtime implements (record_cublas.c,
 * docs/cuda-target.md "cuBLAS"). They stay CUDASYM_LIBRARY names: a
 * candidate may import them only when the task's policy lists cublas, and the
 * recorder provides them only when its request says so. */
#define CUDASYM_CUBLAS_EXPORTS(X)                                                                  \
	X(cublasCreate_v2)                                                                         \
	X(cublasDestroy_v2)                                                                        \
	X(cublasSetStream_v2)                                                                      \
	X(cublasGetStream_v2)                                                                      \
	X(cublasSetMathMode)                                                                       \
	X(cublasGetMathMode)                                                                       \
	X(cublasSetPointerMode_v2)                                                                 \
	X(cublasGetPointerMode_v2)                                                                 \
	X(cublasGetStatusName)                                                                     \
	X(cublasGetStatusString)                                                                   \
	X(cublasSgemm_v2)                                                                          \
	X(cublasSgemmStridedBatched)                                                               \
	X(cublasGemmEx)                                                                            \
	X(cublasGemmStridedBatchedEx)

/* C++ runtime symbols nvcc's host code and ordinary C++ need; the recorder
 * is linked with libstdc++, which provides them. */
#define CUDASYM_CXX_RUNTIME(X)                                                                     \
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
#define CUDASYM_LIBRARIES                                                                          \
	{                                                                                          \
		"libstdc++.so.6", "libgcc_s.so.1", NULL                                            \
	}

/* What a symbol name is to the CUDA target. */
enum cudasym {
	CUDASYM_PROVIDED,   /* the recorder exports it, or the C++ runtime */
	CUDASYM_CUDA,	    /* CUDA runtime/driver API the recorder refuses: record_error */
	CUDASYM_LIBRARY,    /* cuBLAS/cuBLASLt/cuDNN: allowed only by the task's policy */
	CUDASYM_OTHER_CUDA, /* another CUDA library (cuFFT, cuRAND, NCCL, ...): forbidden */
	CUDASYM_OTHER,	    /* not CUDA: the libc/libm allow-list (libc_allow.h) decides */
};

/* 1 if name is one of the NULL-terminated list (NULL list: 0). */
static inline int cudasym_in_list(const char *name, const char *const *list)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

/* Which library a CUDASYM_LIBRARY symbol belongs to: "cublas", "cublasLt"
 * or "cudnn" (static strings), or NULL. */
static inline const char *cudasym_library(const char *name)
{
	if (!strncmp(name, "cublasLt", 8))
		return "cublasLt";
	if (!strncmp(name, "cublas", 6))
		return "cublas";
	if (!strncmp(name, "cudnn", 5))
		return "cudnn";
	return NULL;
}

#define CUDASYM_STR_(n) #n,
/* Classify a symbol name by the lists above and the CUDA naming rules
 * (cuda*, __cuda*, cu[A-Z]* are the runtime and driver APIs). Inline so the
 * parent and the recorder share one definition. */
static inline enum cudasym cudasym_classify(const char *name)
{
	static const char *const exports[] = {CUDASYM_RECORDER_EXPORTS(CUDASYM_STR_) NULL};
	static const char *const cxx[] = {CUDASYM_CXX_RUNTIME(CUDASYM_STR_) NULL};
	static const char *const other_libs[] = {
		"cufft", "curand",    "cusparse", "cusolver", "nccl",	"nvrtc", "cupti",
		"nvml",	 "nvJitLink", "nvjpeg",	  "npp",      "cuFile", "nvtx",	 NULL};
	if (cudasym_in_list(name, exports) || cudasym_in_list(name, cxx))
		return CUDASYM_PROVIDED;
	if (cudasym_library(name))
		return CUDASYM_LIBRARY;
	for (int i = 0; other_libs[i]; i++)
		if (!strncmp(name, other_libs[i], strlen(other_libs[i])))
			return CUDASYM_OTHER_CUDA;
	if (!strncmp(name, "cuda", 4) || !strncmp(name, "__cuda", 6) ||
	    (name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z'))
		return CUDASYM_CUDA;
	return CUDASYM_OTHER;
}

#endif
