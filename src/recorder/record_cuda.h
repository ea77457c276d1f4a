/* record_cuda.h: what the recording CUDA runtime (record_cuda.c) lends the
 * recording cuBLAS (record_cublas.c): the fake device addresses, the given
 * stream, the buffer sizes and the plan being recorded. Both files are linked
 * into ka-record-cuda only. */
#ifndef KA_RECORDER_RECORD_CUDA_H
#define KA_RECORDER_RECORD_CUDA_H

#include <stdint.h>

#include "../common/plan.h"

/* Resolve a fake device address: 1 with *buf and *off when it lies in a
 * buffer (one past the end included); 0 when it is not a fake address at all
 * (host memory); -1 when it is in a buffer's window but outside the buffer. */
int rcuda_resolve(const void *p, int *buf, uint64_t *off);

/* 1 if stream is the one ka_launch was given; else 0 after record_fail
 * naming api. */
int rcuda_stream_ok(void *stream, const char *api);

/* The number of buffers so far (tensors, then workspaces) and their sizes in
 * bytes (*sizes points at the recorder's own table). */
int rcuda_buffers(const uint64_t **sizes);

/* Append an op to the plan being recorded, or NULL after record_fail naming
 * api when the plan is full. */
struct plan_op *rcuda_add_op(const char *api);

/* 1 if the request's "libraries" list names lib ("cublas", "cublasLt",
 * "cudnn"): the task's policy allows the candidate to call it. */
int rcuda_library_allowed(const char *lib);

#endif
