/* plan.h: the launch plan, the only thing that crosses from the recorder
 * (untrusted candidate host code) to the runner (trusted replay). It is data:
 * device code to load, kernels by name, buffers by index, and a list of
 * operations. The JSON form is documented in docs/plan-format.md; plan_read
 * enforces every cap below, so a hostile recorder can only produce a plan the
 * runner then validates against the real module (plan_validate). */
#ifndef KA_PLAN_H
#define KA_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "plan_gemm.h"
#include "util.h"

#define PLAN_MAX_PROGRAMS 8
#define PLAN_MAX_SOURCE (1u << 20) /* bytes of OpenCL C per program */
#define PLAN_MAX_OPTIONS 512
#define PLAN_MAX_KERNELS 64
#define PLAN_MAX_NAME 256
#define PLAN_MAX_OPS 4096
#define PLAN_MAX_ARGS 64
#define PLAN_MAX_ARG_BYTES 4096 /* CUDA parameter space */
#define PLAN_MAX_RELOCS 64
#define PLAN_MAX_WORKSPACES 16
#define PLAN_MAX_WORKSPACE_BYTES                                                                   \
	(16ull << 30) /* swa_causal_f16_d64's eager baseline needs 8.6 GB */
#define PLAN_MAX_SYMBOL_BYTES 65536
#define PLAN_MAX_TENSORMAPS 32	 /* CUDA TMA descriptors per plan */
#define PLAN_TENSORMAP_BYTES 128 /* sizeof(CUtensorMap) */
#define PLAN_TENSORMAP_MAX_RANK 5

/* Buffers are numbered: inputs 0..n_in-1, outputs n_in..n_in+n_out-1, then
 * workspaces. A reference is (buffer, byte offset). */
struct plan_ref {
	int32_t buf;
	uint64_t offset;
};

enum plan_arg_kind {
	PLAN_ARG_BYTES,	 /* raw bytes, with pointer relocations (CUDA) */
	PLAN_ARG_BUFFER, /* OpenCL cl_mem argument: the ref in relocs[0] */
	PLAN_ARG_LOCAL,	 /* OpenCL __local of `size` bytes */
};

/* A pointer inside an argument: bytes [at, at+8) become the device address of
 * ref. */
struct plan_reloc {
	uint32_t at;
	struct plan_ref ref;
};

/* A CUDA tensor map inside an argument: bytes [at, at+128) become the
 * runner's own encoding of plan.tensormaps[tensormap] (a __grid_constant__
 * const CUtensorMap parameter). Kept apart from plan_reloc so that code which
 * knows only pointer relocations reads the same plan as before. */
struct plan_tmap_reloc {
	uint32_t at;
	int32_t tensormap;
};

struct plan_arg {
	enum plan_arg_kind kind;
	uint32_t size;
	uint8_t *bytes; /* size bytes (BYTES); owned */
	int n_relocs;
	struct plan_reloc *relocs; /* owned */
	int n_tmaps; /* CUDA only; pointer + tensor map relocations <= PLAN_MAX_RELOCS */
	struct plan_tmap_reloc *tmaps; /* owned; NULL when n_tmaps is 0 */
};

enum plan_op_kind {
	PLAN_OP_LAUNCH,
	PLAN_OP_FILL,	/* memset / clEnqueueFillBuffer */
	PLAN_OP_COPY,	/* device-to-device copy */
	PLAN_OP_SYMBOL, /* CUDA cudaMemcpyToSymbolAsync: bytes -> symbol */
	PLAN_OP_GEMM,	/* CUDA: a cuBLAS GEMM the runner replays (plan_gemm.h) */
};

struct plan_op {
	enum plan_op_kind kind;
	/* LAUNCH */
	int32_t kernel;
	uint32_t work_dim;   /* OpenCL: 1..3 */
	uint64_t grid[3];    /* CUDA: blocks; OpenCL: global size */
	uint64_t block[3];   /* CUDA: threads; OpenCL: local size (0 = NULL) */
	uint64_t goffset[3]; /* OpenCL global offset */
	uint32_t cluster[3]; /* CUDA cluster dims (0 = none) */
	uint32_t smem;	     /* CUDA dynamic shared memory */
	uint8_t pdl;	     /* CUDA: 1 = programmatic stream serialization allowed (PDL) */
	int n_args;
	struct plan_arg *args; /* owned */
	/* FILL / COPY / SYMBOL */
	struct plan_ref dst, src;
	uint64_t size;
	uint8_t pattern[128]; /* FILL: pattern of pattern_size bytes */
	uint32_t pattern_size;
	char symbol[PLAN_MAX_NAME]; /* SYMBOL: device symbol name */
	uint8_t *data;		    /* SYMBOL: size bytes; owned */
	struct plan_gemm gemm;	    /* GEMM: the call, checked by plan_gemm_check */
};

/* A per-kernel attribute set before launch (CUDA cudaFuncSetAttribute). */
struct plan_kernel {
	char name[PLAN_MAX_NAME];  /* OpenCL kernel name or CUDA mangled name */
	int32_t program;	   /* OpenCL: index into programs */
	uint32_t max_dynamic_smem; /* CUDA attribute, 0 = default */
	int32_t carveout;	   /* CUDA preferred shared carveout, -1 = default */
};

/* What the candidate asked cuTensorMapEncodeTiled for (CUDA), with the global
 * address as a buffer reference. Enum fields hold the driver's CUtensorMap*
 * enum values. Only the first `rank` entries of each array are meaningful
 * (strides: rank-1), the rest are 0. */
struct plan_tensormap {
	uint32_t dtype; /* CUtensorMapDataType, 0..15 */
	uint32_t rank;	/* 1..5 */
	struct plan_ref global;
	uint64_t dims[PLAN_TENSORMAP_MAX_RANK];		/* elements, 1..2^32 */
	uint64_t strides[PLAN_TENSORMAP_MAX_RANK - 1];	/* bytes, multiple of 16, < 2^40 */
	uint32_t box[PLAN_TENSORMAP_MAX_RANK];		/* 1..256 */
	uint32_t elem_strides[PLAN_TENSORMAP_MAX_RANK]; /* 1..8 */
	uint32_t interleave, swizzle, l2_promotion, oob_fill;
};

struct plan {
	char target[16];		  /* "opencl" or "cuda" */
	int n_programs;			  /* OpenCL program sources */
	char *sources[PLAN_MAX_PROGRAMS]; /* owned */
	char options[PLAN_MAX_PROGRAMS][PLAN_MAX_OPTIONS];
	int n_kernels;
	struct plan_kernel kernels[PLAN_MAX_KERNELS];
	int n_workspaces;
	uint64_t workspace[PLAN_MAX_WORKSPACES]; /* sizes in bytes */
	int n_ops;
	struct plan_op *ops; /* owned */
	int status;	     /* ka_launch's return value */
	int n_tensormaps;    /* CUDA TMA descriptors, referenced by plan_tmap_reloc */
	struct plan_tensormap tensormaps[PLAN_MAX_TENSORMAPS];
};

/* Serialise to JSON text (caller frees). */
char *plan_write(const struct plan *p);

/* Parse JSON text of at most len bytes. Enforces every PLAN_MAX_* cap and the
 * structural rules (known kinds, indices >= 0, sizes bounded). 0 and *p filled
 * (free with plan_free), or -1 with e naming the field. Does not know the
 * tensors: plan_check_refs does. */
int plan_read(const char *json, size_t len, struct plan *p, struct ka_err *e);

/* Check every buffer reference, fill, copy and relocation against the actual
 * buffer sizes (n_tensors tensor sizes, then the plan's workspaces): every
 * access must lie inside its buffer, including the whole global extent of
 * each tensor map (plan_tensormap_extent) and every operand of each cuBLAS
 * GEMM (plan_gemm_check). 0 or -1 with e naming the op or the map. */
int plan_check_refs(const struct plan *p, int n_tensors, const uint64_t *tensor_bytes,
		    struct ka_err *e);

/* The documented cuTensorMapEncodeTiled rules that need no device (CUDA
 * 13.0's cuda.h): dtype/enum ranges, rank 1..5 (3..5 when interleaved), dims
 * 1..2^32, strides multiples of 16 (32 when interleaved 32B or a packed
 * 16-byte-aligned type) below 2^40, box 1..256 with the inner box a multiple
 * of 16 bytes (no interleave) and within the swizzle span, element strides
 * 1..8, global offset aligned to 16 (32) bytes, NaN fill for float types only.
 * 0, or -1 with why (a short phrase, cap bytes) filled. The buffer the map
 * lies in is plan_check_refs's business. */
int plan_tensormap_check(const struct plan_tensormap *t, char *why, size_t cap);

/* Bytes from the map's global address to one past the last byte its global
 * extent touches ((dims[0] elements of the row) + sum (dims[i]-1)*strides[i-1]);
 * UINT64_MAX on overflow. Requires plan_tensormap_check to have passed. */
uint64_t plan_tensormap_extent(const struct plan_tensormap *t);

/* Free everything the plan owns (not p itself); plan_free on a zeroed plan is
 * a no-op. */
void plan_free(struct plan *p);

/* Append a zeroed op and return it (grows p->ops). */
struct plan_op *plan_add_op(struct plan *p);

/* Whether op i is replayed with programmatic dependent launch: a launch
 * whose "pdl" is set, right after another launch of the plan. On the plan's
 * first op, or after a fill, copy, symbol or gemm step, the runner drops the
 * attribute: a programmatic edge in the replay's graph then only ever joins
 * two of the candidate's own kernels, and nothing of the candidate may start
 * before the timed window's first event (docs/cuda-target.md, section 7). */
int plan_pdl_replayed(const struct plan *p, int i);

/* A short signature of the launches (kernel names and grid/block sizes), used
 * to check that the timed calls launch what the correctness calls launched.
 * Caller frees. */
char *plan_signature(const struct plan *p);

#endif
