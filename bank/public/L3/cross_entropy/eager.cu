// cross_entropy, eager baseline: F.cross_entropy(x, t, reduction='none') as
// PyTorch 2.11 eager runs it (cross_entropy_loss = nll_loss(log_softmax(x))):
// two launches (bank/lib/norm.cuh):
//   logp = log_softmax(x, 1)   ka::softmax_fwd: ATen's cunn_SoftMaxForward
//        (block of 1024 threads a row, float4, three passes), a full [R, V]
//        fp32 tensor in scratch;
//   loss = -logp[r, t[r]]      ka::nll_rows: nll_loss_forward_no_reduce, one
//        thread a row.
// Expected time (bench R = 8192, V = 32000): the log_softmax reads 1049 MB
// and writes 1049 MB (twice log_softmax's bench), the gather is negligible;
// PyTorch takes 835.8 us on the H200, twice the 419.4 us of the log_softmax
// task.
// Trusted code: it runs natively in the runner, not through the recorder.
#include "ka_kernel.h"
#include "norm.cuh"

extern "C" int ka_launch(const struct ka_args *a, cudaStream_t stream)
{
	// Task order: params R, V; inputs x [R, V], t [R] (int64); output loss [R].
	long long R = a->params[0], V = a->params[1];
	float *logp = (float *)ka_workspace((size_t)(R * V) * sizeof(float));
	if (!logp || ka::softmax_fwd<true>((const float *)a->inputs[0].ptr, logp, R, V, stream))
		return -1;
	return ka::nll_rows(logp, (const int64_t *)a->inputs[1].ptr, (float *)a->outputs[0].ptr, R, V, stream);
}
