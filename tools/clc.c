/* clc.c: ka-clc, a small trusted OpenCL helper for bank validation and tests.
 *
 *   ka-clc build FILE [--options OPTS] [--platform SUBSTR]
 *       Build the OpenCL C source in FILE on the first OpenCL platform (or the
 *       first whose name contains SUBSTR) and print the build log.
 *   ka-clc gen --dtype D --kind K --a A --b B --lo L --range R --key HEX --n N
 *       [--platform SUBSTR]
 *       Run ka_gen_kernel of include/ka_gen.h (built with -DKA_GEN_KERNELS,
 *       plus -DKA_GEN_FP64 when the device has fp64) for N elements and write
 *       the raw little-endian bytes to stdout. D: fp32 fp16 bf16 fp64 int32
 *       int64; K: normal uniform int; A, B: floats (C99 hex floats such as
 *       0x1.8p+0 are exact); L: int64; R: uint64 >= 1; HEX: the 64-bit key.
 *
 * Exit codes: 0 ok; 1 the source does not build; 2 bad usage or an OpenCL
 * error; 3 no OpenCL platform or device. It only ever runs trusted source
 * (bank references and the generator), never candidate code. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
/* Under `make san`: PoCL and its LLVM keep what they allocate to compile a
 * kernel until the process ends. Those leaks are theirs, not ka's; any other
 * leak is still reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpocl.so\nleak:libLLVM\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0"; /* keep stderr (the build log) clean */
}
#endif

#define CLC_SRC_CAP (4u << 20)
#define CLC_MAX_N (INT64_C(1) << 28)

static int usage_to(FILE *f)
{
	fputs("usage: ka-clc build FILE [--options OPTS] [--platform SUBSTR]\n"
	      "       ka-clc gen --dtype D --kind K --a A --b B --lo L --range R --key HEX --n N\n"
	      "                  [--platform SUBSTR]\n"
	      "exit codes: 0 ok, 1 build failed, 2 bad usage or OpenCL error, 3 no OpenCL "
	      "platform\n",
	      f);
	return 2;
}

static int usage(void)
{
	return usage_to(stderr);
}

static const char *opt_value(int argc, char **argv, const char *name)
{
	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return NULL;
}

/* Every argument after the action must be a known --flag followed by a value
 * (build also takes one FILE). */
static int check_args(int argc, char **argv, const char *const *known, int files)
{
	int seen_files = 0;
	for (int i = 2; i < argc; i++) {
		int ok = 0;
		for (const char *const *k = known; *k; k++)
			ok |= !strcmp(argv[i], *k);
		if (ok) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ka-clc: option '%s' needs a value\n", argv[i]);
				return -1;
			}
			i++;
		} else if (argv[i][0] != '-' && seen_files < files) {
			seen_files++;
		} else {
			fprintf(stderr, "ka-clc: unexpected argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (seen_files < files) {
		fprintf(stderr, "ka-clc: missing FILE\n");
		return -1;
	}
	return 0;
}

/* Pick a platform and its first device. 0, or 3 with a message. */
static int clc_device(const char *want, cl_device_id *dev)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
		fprintf(stderr, "ka-clc: no OpenCL platform\n");
		return 3;
	}
	for (cl_uint i = 0; i < np && i < 16; i++) {
		char name[256] = "";
		clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
		if (want && !strstr(name, want))
			continue;
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, dev, &nd) == CL_SUCCESS &&
		    nd > 0)
			return 0;
	}
	fprintf(stderr, "ka-clc: no OpenCL device%s%s\n", want ? " on a platform matching " : "",
		want ? want : "");
	return 3;
}

/* Build src; prints the log to out. Returns the program or NULL. */
static cl_program clc_build(cl_context ctx, cl_device_id dev, const char *src, const char *opts,
			    FILE *out)
{
	cl_int err;
	size_t len = strlen(src);
	cl_program prog = clCreateProgramWithSource(ctx, 1, &src, &len, &err);
	if (!prog) {
		fprintf(out, "clCreateProgramWithSource failed (%d)\n", err);
		return NULL;
	}
	err = clBuildProgram(prog, 1, &dev, opts ? opts : "", NULL, NULL);
	size_t log_len = 0;
	clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_len);
	if (log_len > 1) {
		if (log_len > (1u << 20))
			log_len = 1u << 20;
		char *log = xmalloc(log_len + 1);
		if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, log_len, log, NULL) ==
		    CL_SUCCESS) {
			log[log_len] = 0;
			fputs(log, out);
			if (log[strlen(log) ? strlen(log) - 1 : 0] != '\n')
				fputc('\n', out);
		}
		free(log);
	}
	if (err != CL_SUCCESS) {
		fprintf(out, "build failed (%d)\n", err);
		clReleaseProgram(prog);
		return NULL;
	}
	return prog;
}

static int cmd_build(int argc, char **argv)
{
	static const char *const known[] = {"--options", "--platform", NULL};
	if (check_args(argc, argv, known, 1))
		return usage();
	const char *file = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--options") || !strcmp(argv[i], "--platform"))
			i++;
		else
			file = argv[i];
	}
	char *src;
	struct ka_err e;
	if (util_read_file(file, CLC_SRC_CAP, &src, NULL, &e)) {
		fprintf(stderr, "ka-clc: %s\n", e.msg);
		return 2;
	}
	cl_device_id dev;
	int rc = clc_device(opt_value(argc, argv, "--platform"), &dev);
	if (rc) {
		free(src);
		return rc;
	}
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (!ctx) {
		fprintf(stderr, "ka-clc: clCreateContext failed (%d)\n", err);
		free(src);
		return 2;
	}
	cl_program prog = clc_build(ctx, dev, src, opt_value(argc, argv, "--options"), stdout);
	rc = prog ? 0 : 1;
	if (prog)
		clReleaseProgram(prog);
	clReleaseContext(ctx);
	free(src);
	return rc;
}

static int parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
	if (!s || !*s || *s == '-')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_float(const char *s, float *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	float v = strtof(s, &end);
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int cmd_gen(int argc, char **argv)
{
	static const char *const known[] = {"--dtype", "--kind", "--a", "--b",	      "--lo",
					    "--range", "--key",	 "--n", "--platform", NULL};
	static const char *const dtypes[] = {"fp32",  "fp16", "bf16", "fp64", "int32",
					     "int64", "bool", "int8", "uint8"};
	static const size_t sizes[] = {4, 2, 2, 8, 4, 8, 1, 1, 1};
	static const char *const kinds[] = {"normal", "uniform", "int"};
	if (check_args(argc, argv, known, 0))
		return usage();
	const char *ds = opt_value(argc, argv, "--dtype"), *ks = opt_value(argc, argv, "--kind");
	int dtype = -1, kind = -1;
	for (int i = 0; ds && i < 9; i++)
		if (!strcmp(ds, dtypes[i]))
			dtype = i;
	for (int i = 0; ks && i < 3; i++)
		if (!strcmp(ks, kinds[i]))
			kind = i;
	float a = 0, b = 0;
	int64_t lo = 0, n = 0;
	uint64_t range = 1, key = 0;
	const char *v;
	if (dtype < 0 || kind < 0 || ((v = opt_value(argc, argv, "--a")) && parse_float(v, &a)) ||
	    ((v = opt_value(argc, argv, "--b")) && parse_float(v, &b)) ||
	    ((v = opt_value(argc, argv, "--lo")) && parse_i64(v, &lo)) ||
	    ((v = opt_value(argc, argv, "--range")) && parse_u64(v, 0, &range)) ||
	    (kind == 2 && range == 0) || parse_u64(opt_value(argc, argv, "--key"), 16, &key) ||
	    parse_i64(opt_value(argc, argv, "--n"), &n) || n < 0 || n > CLC_MAX_N) {
		fprintf(stderr, "ka-clc gen: bad or missing --dtype, --kind, --a, --b, --lo, "
				"--range, --key or --n\n");
		return usage();
	}
	char *path = xasprintf("%s/include/ka_gen.h", util_data_root());
	char *src;
	struct ka_err e;
	int rc = util_read_file(path, CLC_SRC_CAP, &src, NULL, &e);
	free(path);
	if (rc) {
		fprintf(stderr, "ka-clc: %s\n", e.msg);
		return 2;
	}
	cl_device_id dev;
	if ((rc = clc_device(opt_value(argc, argv, "--platform"), &dev))) {
		free(src);
		return rc;
	}
	cl_device_fp_config fp64 = 0;
	clGetDeviceInfo(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
	if (dtype == 3 && !fp64) {
		fprintf(stderr, "ka-clc: the device has no fp64\n");
		free(src);
		return 2;
	}
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = ctx ? clCreateCommandQueue(ctx, dev, 0, &err) : NULL;
	cl_program prog = NULL;
	cl_kernel k = NULL;
	cl_mem buf = NULL;
	size_t bytes = (size_t)n * sizes[dtype];
	char *host = xmalloc(bytes ? bytes : 1);
	rc = 2;
	if (!q) {
		fprintf(stderr, "ka-clc: cannot create an OpenCL context/queue (%d)\n", err);
		goto done;
	}
	prog = clc_build(ctx, dev, src,
			 fp64 ? "-DKA_GEN_KERNELS -DKA_GEN_FP64" : "-DKA_GEN_KERNELS", stderr);
	if (!prog) {
		rc = 1;
		goto done;
	}
	k = clCreateKernel(prog, "ka_gen_kernel", &err);
	buf = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes ? bytes : 1, NULL, &err);
	if (!k || !buf) {
		fprintf(stderr, "ka-clc: kernel or buffer creation failed (%d)\n", err);
		goto done;
	}
	cl_ulong cn = (cl_ulong)n, ckey = key, crange = range;
	cl_int cdt = dtype, ckind = kind;
	cl_float ca = a, cb = b;
	cl_long clo = lo;
	err = clSetKernelArg(k, 0, sizeof buf, &buf);
	err |= clSetKernelArg(k, 1, sizeof cn, &cn);
	err |= clSetKernelArg(k, 2, sizeof ckey, &ckey);
	err |= clSetKernelArg(k, 3, sizeof cdt, &cdt);
	err |= clSetKernelArg(k, 4, sizeof ckind, &ckind);
	err |= clSetKernelArg(k, 5, sizeof ca, &ca);
	err |= clSetKernelArg(k, 6, sizeof cb, &cb);
	err |= clSetKernelArg(k, 7, sizeof clo, &clo);
	err |= clSetKernelArg(k, 8, sizeof crange, &crange);
	if (err != CL_SUCCESS) {
		fprintf(stderr, "ka-clc: clSetKernelArg failed\n");
		goto done;
	}
	if (n > 0) {
		size_t global = (size_t)n;
		err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
		if (err == CL_SUCCESS)
			err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
		if (err != CL_SUCCESS) {
			fprintf(stderr, "ka-clc: kernel run failed (%d)\n", err);
			goto done;
		}
	}
	if (fwrite(host, 1, bytes, stdout) != bytes || fflush(stdout) != 0) {
		fprintf(stderr, "ka-clc: write failed\n");
		goto done;
	}
	rc = 0;
done:
	if (buf)
		clReleaseMemObject(buf);
	if (k)
		clReleaseKernel(k);
	if (prog)
		clReleaseProgram(prog);
	if (q)
		clReleaseCommandQueue(q);
	if (ctx)
		clReleaseContext(ctx);
	free(host);
	free(src);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_to(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "build"))
		return cmd_build(argc, argv);
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc, argv);
	fprintf(stderr, "ka-clc: unknown action '%s'\n", argv[1]);
	return usage();
}
