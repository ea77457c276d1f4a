// tools/cuda_emu/include/cuda_pipeline.h: the host form of CUDA's
// <cuda_pipeline.h> primitives for the CPU emulation harness
// (docs/cuda-emu.md); the harness puts this folder first on the include
// path. CUDA's own header needs the device compiler. cp.async as the
// emulator runs it: a thread's copies are queued and land when
// __pipeline_wait_prior lets their commit group complete.
#ifndef KA_CUDA_EMU_PIPELINE_H
#define KA_CUDA_EMU_PIPELINE_H

#include <stddef.h>

static inline void __pipeline_memcpy_async(void *dst, const void *src, size_t size_and_align,
					   size_t zfill = 0)
{
	::ka_emu::pipeline_copy(dst, src, size_and_align, zfill);
}
static inline void __pipeline_commit()
{
	::ka_emu::pipeline_commit();
}
static inline void __pipeline_wait_prior(size_t n)
{
	::ka_emu::pipeline_wait_prior(n);
}

#endif
