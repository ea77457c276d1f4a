/* ka_kernel.h: the ABI a KernelAscent candidate kernel is written against.
 * This file is shown to the model in its prompt; it is the single place that
 * describes what a candidate receives and must do.
 *
 * A candidate is ONE source file containing device kernels and a host entry
 * point `ka_launch`. ka_launch is called once per graded call with the task's
 * tensors, integer parameters and float scalars; it must enqueue the kernels that compute
 * every output element and return 0. It must not allocate host memory for
 * data, synchronise, create streams/queues/events, read files, or keep state
 * between calls: the grader calls it in a sandbox that records what it
 * enqueues and replays that record on fresh inputs. Each call's inputs are
 * fresh, so a result remembered from an earlier call is wrong.
 *
 * Tensors are dense, row-major, contiguous, of the dtype the task states.
 * Inputs must not be modified. Outputs hold garbage on entry; every element
 * must be written.
 *
 * CUDA target (one .cu file, compiled by nvcc -O3 for the GPU's architecture,
 * sm_90a on Hopper):
 *     extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream);
 *   - ka_tensor.ptr is a device pointer.
 *   - launch with <<<grid, block, smem, stream>>>, cudaLaunchKernel or
 *     cudaLaunchKernelEx (attributes: cluster dimensions, and programmatic
 *     stream serialization between two of your kernels, with
 *     cudaGridDependencySynchronize() in the dependent) on `stream` only;
 *     cudaFuncSetAttribute, cudaMemsetAsync, device-to-device cudaMemcpyAsync,
 *     cudaMemcpyToSymbolAsync, device/occupancy queries and
 *     cuTensorMapEncodeTiled are available;
 *   - scratch device memory: void *ka_workspace(size_t bytes) (below), valid
 *     for this call only, contents undefined;
 *   - no cuBLAS/cuDNN unless the task's policy allows it.
 *
 * OpenCL target (one .c file; kernels as an OpenCL C source string):
 *     int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev,
 *                   cl_command_queue queue);
 *   - ka_tensor.ptr is a cl_mem (cast it: (cl_mem)a->inputs[0].ptr).
 *   - available: clCreateProgramWithSource, clBuildProgram,
 *     clGetProgramBuildInfo, clCreateKernel, clSetKernelArg,
 *     clEnqueueNDRangeKernel, clCreateBuffer (device scratch, no host
 *     pointer), clCreateSubBuffer, clEnqueueFillBuffer, clEnqueueCopyBuffer,
 *     clGetDeviceInfo, clGetKernelWorkGroupInfo, clRelease* and clRetain*; enqueue
 *     on `queue` only.
 *
 * Return 0 on success; any other value is reported as launch_error. */
#ifndef KA_KERNEL_H
#define KA_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define KA_ABI_VERSION 2
#define KA_MAX_DIMS 6

/* dtype codes */
enum ka_abi_dtype {
	KA_FP32 = 0, KA_FP16 = 1, KA_BF16 = 2, KA_FP64 = 3, KA_INT32 = 4, KA_INT64 = 5,
	KA_BOOL = 6,	/* one byte, 0 or 1 */
	KA_INT8 = 7, KA_UINT8 = 8
};

struct ka_tensor {
	void *ptr;		/* CUDA: device pointer; OpenCL: cl_mem */
	int64_t numel;		/* number of elements */
	int32_t dtype;		/* enum ka_abi_dtype */
	int32_t ndim;
	int64_t shape[KA_MAX_DIMS];
	const char *name;	/* as in the task ("x", "weight", ...) */
};

struct ka_args {
	int32_t n_params;
	const char *const *param_names; /* e.g. {"M", "N", "K"} */
	const int64_t *params;		/* their values for this call */
	int32_t n_inputs;
	const struct ka_tensor *inputs;	/* in the task's order */
	int32_t n_outputs;
	const struct ka_tensor *outputs;
	/* Since ABI version 2: the task's float scalars (e.g. eps), in the
	 * task's order; n_scalars is 0 when it has none. */
	int32_t n_scalars;
	const char *const *scalar_names; /* e.g. {"eps"} */
	const double *scalars;		 /* their values */
};

#ifdef __cplusplus
extern "C" {
#endif

/* Device scratch memory of `bytes` bytes for this call (CUDA target), or NULL
 * if the request is over the grader's cap. OpenCL candidates use
 * clCreateBuffer instead. */
void *ka_workspace(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
