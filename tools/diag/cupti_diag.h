/* cupti_diag.h: what the CUPTI diagnostics (cupti_names.cu, cupti_nodes.cu)
 * share: an error check that exits, CUPTI's buffer request, a context with a
 * stream and a 4-byte device word, the record callback, and PTX text of
 * small kernels. Each program defines diag_keep: what it keeps of a kernel
 * record, called under diag_mu. */
#ifndef KA_CUPTI_DIAG_H
#define KA_CUPTI_DIAG_H
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		int r_ = (int)(x);                                                                 \
		if (r_) {                                                                          \
			fprintf(stderr, "%s: error %d at line %d\n", #x, r_, __LINE__);            \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* CUPTI's buffer request: 1 MiB, freed by the program's completion callback. */
static void CUPTIAPI diag_request(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static pthread_mutex_t diag_mu = PTHREAD_MUTEX_INITIALIZER;
static void diag_keep(const CUpti_ActivityKernel9 *k);

/* CUPTI's buffer completion: diag_keep for each kernel record, under diag_mu. */
static void CUPTIAPI diag_complete(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&diag_mu);
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			diag_keep((const CUpti_ActivityKernel9 *)rec);
	pthread_mutex_unlock(&diag_mu);
	free(buf);
}

/* A context on device 0, a non-blocking stream *st and a device word *p;
 * kernel records on (diag_keep). Exits where CUPTI is missing. */
static void diag_open(CUstream *st, CUdeviceptr *p)
{
	CUdevice dev;
	CUcontext ctx;
	CUctxCreateParams cp;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	memset(&cp, 0, sizeof cp);
	CHECK(cuCtxCreate(&ctx, &cp, 0, dev));
	CHECK(cuptiActivityRegisterCallbacks(diag_request, diag_complete));
	CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CHECK(cuStreamCreate(st, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(p, 4));
}

/* The PTX module header into out (cap bytes); its length. */
static int ptx_header(char *out, size_t cap)
{
	return snprintf(out, cap, ".version 8.0\n.target sm_90\n.address_size 64\n");
}

/* Appends at out (cap bytes left) one kernel named name that adds i, i+1,
 * ..., i+reps-1 to the word at its one pointer argument; its length. */
static int ptx_entry(char *out, size_t cap, const char *name, int i, int reps)
{
	int l = snprintf(out, cap,
			 ".visible .entry %s(.param .u64 p)\n{\n.reg .u64 %%a;\n.reg .u32 %%v;\n"
			 "ld.param.u64 %%a, [p];\ncvta.to.global.u64 %%a, %%a;\n"
			 "ld.global.u32 %%v, [%%a];\n",
			 name);
	for (int r = 0; r < reps; r++)
		l += snprintf(out + l, cap - (size_t)l, "add.u32 %%v, %%v, %d;\n", i + r);
	return l + snprintf(out + l, cap - (size_t)l, "st.global.u32 [%%a], %%v;\nret;\n}\n");
}
#endif
