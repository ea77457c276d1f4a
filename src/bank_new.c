/* bank_new.c: task skeletons and the placeholder check (see bank_new.h).
 * The templates are text with @NAME@ and @TIER@ replaced; everything the
 * author has to write says KA_TODO, so a skeleton left as it is cannot pass
 * validation, and once every mark is replaced it is an ordinary task. */
#include "bank_new.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NEW_FILE_CAP (1u << 20)

static const char tmpl_task[] =
	"{\n"
	"  \"name\": \"@NAME@\",\n"
	"  \"tier\": \"@TIER@\",\n"
	"  \"description\": \"KA_TODO: what the task computes, in words, with the formula and the "
	"layout of every tensor (shown to models). The skeleton is a copy y = x.\",\n"
	"  \"torch\": \"x.clone()  # KA_TODO: the equivalent PyTorch expression\",\n"
	"  \"params\": [\"N\"],\n"
	"  \"inputs\": [\n"
	"    {\"name\": \"x\", \"dtype\": \"fp32\", \"shape\": [\"N\"], \"dist\": {\"kind\": "
	"\"normal\", \"mean\": 0, \"std\": 1}}\n"
	"  ],\n"
	"  \"outputs\": [\n"
	"    {\"name\": \"y\", \"dtype\": \"fp32\", \"shape\": [\"N\"], \"per_item\": 1}\n"
	"  ],\n"
	"  \"items\": [\"N\"],\n"
	"  \"bench\": {\"N\": 16777216},\n"
	"  \"checks\": [{\"N\": 1}, {\"N\": 1031}, {\"N\": 65537}],\n"
	"  \"tolerance\": {\"atol\": 1e-6, \"rtol\": 1e-5},\n"
	"  \"libraries\": [],\n"
	"  \"min_bytes\": \"8 * N\",\n"
	"  \"min_flops\": \"0\"\n"
	"}\n";

static const char tmpl_ref[] =
	"/* @NAME@ reference: KA_TODO say what one work item computes.\n"
	" * Dialect: include/ka_ref.h (double accumulation, no library calls but the C99\n"
	" * math functions). Arguments: item, the params in task.json order, then the\n"
	" * inputs, then the outputs. The skeleton copies x to y, one element per item. */\n"
	"#include \"ka_ref.h\"\n"
	"\n"
	"KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(float) x, KA_OUT(float) y)\n"
	"{\n"
	"\t(void)N;\n"
	"\ty[item] = (double)x[item]; /* KA_TODO: the task's formula */\n"
	"}\n";

static const char tmpl_eager[] =
	"// @NAME@, eager baseline: KA_TODO the torch expression, as PyTorch eager runs it:\n"
	"// one launch per op from bank/lib/eager.cuh, every intermediate a full tensor in\n"
	"// memory (ka_workspace). Trusted code: it runs natively in the runner.\n"
	"#include \"eager.cuh\"\n"
	"#include \"ka_kernel.h\"\n"
	"\n"
	"struct copy_f { // KA_TODO: one functor per PyTorch op\n"
	"\t__device__ float operator()(float v) const { return v; }\n"
	"};\n"
	"\n"
	"extern \"C\" int ka_launch(const struct ka_args *a, cudaStream_t stream)\n"
	"{\n"
	"\t// Task order: params N; input x [N] fp32; output y [N] fp32.\n"
	"\tlong long n = a->params[0];\n"
	"\treturn ka::unary((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, n, "
	"copy_f(), stream);\n"
	"}\n";

static const char tmpl_compiled[] =
	"// @NAME@, compiled baseline: KA_TODO the torch expression, as torch.compile\n"
	"// produces it: the chain fused into kernels of bank/lib/compiled.cuh.\n"
	"// Trusted code: it runs natively in the runner.\n"
	"#include \"compiled.cuh\"\n"
	"#include \"ka_kernel.h\"\n"
	"\n"
	"struct chain_f { // KA_TODO: the fused chain\n"
	"\t__device__ float operator()(float v, long long) const { return v; }\n"
	"};\n"
	"\n"
	"extern \"C\" int ka_launch(const struct ka_args *a, cudaStream_t stream)\n"
	"{\n"
	"\t// Task order: params N; input x [N] fp32; output y [N] fp32.\n"
	"\tlong long n = a->params[0];\n"
	"\treturn ka::pointwise((const float *)a->inputs[0].ptr, (float *)a->outputs[0].ptr, n, "
	"chain_f(), stream);\n"
	"}\n";

static const char tmpl_sol_cuda[] =
	"// @NAME@, CUDA solution: KA_TODO a verified kernel that beats eager.cu on the\n"
	"// benchmark shape. The stub launches nothing and fails.\n"
	"#include <cuda_runtime.h>\n"
	"#include \"ka_kernel.h\"\n"
	"\n"
	"extern \"C\" int ka_launch(const struct ka_args *a, cudaStream_t stream)\n"
	"{\n"
	"\t(void)a;\n"
	"\t(void)stream;\n"
	"\treturn -1; // KA_TODO\n"
	"}\n";

static const char tmpl_sol_opencl[] =
	"/* @NAME@, OpenCL solution: KA_TODO a verified kernel (it runs on PoCL in CI).\n"
	" * The stub launches nothing and fails. */\n"
	"#define CL_TARGET_OPENCL_VERSION 300\n"
	"#include <CL/cl.h>\n"
	"#include \"ka_kernel.h\"\n"
	"\n"
	"int ka_launch(const struct ka_args *a, cl_context ctx, cl_device_id dev, cl_command_queue "
	"queue)\n"
	"{\n"
	"\t(void)a;\n"
	"\t(void)ctx;\n"
	"\t(void)dev;\n"
	"\t(void)queue;\n"
	"\treturn -1; /* KA_TODO */\n"
	"}\n";

static const struct {
	const char *path, *text;
} new_files[] = {
	{"task.json", tmpl_task},
	{"ref.c", tmpl_ref},
	{"eager.cu", tmpl_eager},
	{"compiled.cu", tmpl_compiled},
	{"solutions/cuda.cu", tmpl_sol_cuda},
	{"solutions/opencl.c", tmpl_sol_opencl},
};

static char *new_fill(const char *tmpl, const char *name, const char *tier)
{
	struct util_buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "@NAME@", 6)) {
			util_buf_puts(&b, name);
			p += 6;
		} else if (!strncmp(p, "@TIER@", 6)) {
			util_buf_puts(&b, tier);
			p += 6;
		} else {
			util_buf_putc(&b, *p++);
		}
	}
	return util_buf_take(&b);
}

int bank_new_write(const char *bank_dir, const char *name, const char *tier, char **dir,
		   struct ka_err *e)
{
	size_t n = strlen(name);
	if (n < 1 || n > 31 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n)
		return ka_err_set(e, "task name '%.64s': expected 1 to 31 of [a-z0-9_]", name);
	if (strcmp(tier, "L1") && strcmp(tier, "L2") && strcmp(tier, "L3"))
		return ka_err_set(e, "tier '%.16s': expected L1, L2 or L3", tier);
	char *d = xasprintf("%s/%s/%s", bank_dir, tier, name);
	struct stat st;
	if (stat(d, &st) == 0) {
		ka_err_set(e, "%s: already exists", d);
		free(d);
		return -1;
	}
	char *sol = xasprintf("%s/solutions", d);
	int rc = util_mkdirs(sol, e);
	free(sol);
	for (size_t i = 0; rc == 0 && i < sizeof new_files / sizeof new_files[0]; i++) {
		char *path = xasprintf("%s/%s", d, new_files[i].path);
		char *text = new_fill(new_files[i].text, name, tier);
		rc = util_write_file(path, text, strlen(text), e);
		free(text);
		free(path);
	}
	if (rc) {
		free(d);
		return -1;
	}
	*dir = d;
	return 0;
}

int bank_new_placeholders(const char *dir, char *out, size_t cap)
{
	int count = 0;
	size_t used = 0;
	if (cap)
		out[0] = 0;
	for (size_t i = 0; i < sizeof new_files / sizeof new_files[0]; i++) {
		char *path = xasprintf("%s/%s", dir, new_files[i].path), *text = NULL;
		size_t len = 0;
		if (util_read_file(path, NEW_FILE_CAP, &text, &len, NULL) == 0 &&
		    strstr(text, BANK_NEW_MARK)) {
			if (used < cap) {
				int w = snprintf(out + used, cap - used, "%s%s", count ? ", " : "",
						 new_files[i].path);
				used += w > 0 ? (size_t)w : 0;
			}
			count++;
		}
		free(text);
		free(path);
	}
	return count;
}
