/* test_recclient.c: the recorder end to end, through the parent's recclient_run:
 * each host-code fixture of tests/data/record is compiled with gcc into a
 * shared object, recorded by $BUILD/ka-record-opencl in its sandbox, and its
 * verdict (and, for ok ones, the plan) compared with a literal expectation.
 * Also the plan policy (recclient_check_plan) on hand-written plans, since a
 * plan is candidate output. Prints the recorder's overhead per candidate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ka_test.h"
#include "recclient.h"

static char g_recorder[512];
static char g_tmp[256];
static char *g_request;
static double g_wall_sum, g_wall_max;
static int g_wall_n;

static const char *device_json =
	"{\"name\":\"test cpu\",\"vendor\":\"test\",\"version\":\"OpenCL 3.0 PoCL\","
	"\"driver\":\"6.0\",\"type\":\"cpu\",\"compute_units\":2,\"max_work_group\":4096,"
	"\"max_work_item_sizes\":[4096,4096,4096],\"local_mem_bytes\":65536,"
	"\"global_mem_bytes\":4294967296,\"max_mem_alloc\":1073741824,\"cache_bytes\":1048576,"
	"\"fp64\":true,\"extensions\":\"cl_khr_fp64\",\"base_addr_align\":128}";

/* Compile a fixture and record it. 0 on success of the harness. */
static int record_fixture(const char *name, struct plan *p, struct recclient_result *r,
			  double timeout_s)
{
	char src[512], so[512], cmd[1400];
	snprintf(src, sizeof src, "tests/data/record/%s.c", name);
	snprintf(so, sizeof so, "%s/%s.so", g_tmp, name);
	snprintf(cmd, sizeof cmd, "gcc -O2 -fPIC -shared -Iinclude -o %s %s", so, src);
	if (system(cmd) != 0) {
		printf("# cannot compile %s\n", src);
		return -1;
	}
	struct ka_err e = {{0}};
	int rc = recclient_run(g_recorder, so, g_request, timeout_s, p, r, &e);
	if (rc)
		printf("# recclient_run(%s): %s\n", name, e.msg);
	else if (strcmp(r->verdict, "timeout")) {
		g_wall_sum += r->wall_s;
		g_wall_n++;
		if (r->wall_s > g_wall_max)
			g_wall_max = r->wall_s;
	}
	return rc;
}

struct verdict_case {
	const char *fixture;
	const char *verdict;
	const char *detail_has; /* substring of the detail */
};

static const struct verdict_case cases[] = {
	{"ok_one_kernel", "ok", ""},
	{"ok_two_kernels_workspace", "ok", ""},
	{"ok_static_cache", "ok", ""},
	{"ok_libm", "ok", ""},
	{"forbidden_fopen", "forbidden", "imports fclose, fopen, which are not"},
	{"forbidden_socket", "forbidden", "socket"},
	{"forbidden_fork", "forbidden", "fork"},
	{"forbidden_execve", "forbidden", "execve"},
	{"forbidden_asm_openat", "forbidden", "system call openat (opening a file for writing"},
	{"forbidden_asm_socket", "forbidden", "system call socket (network)"},
	{"forbidden_asm_fork", "forbidden", "system call fork (process creation)"},
	{"forbidden_asm_execve", "forbidden", "system call execve (exec)"},
	{"forbidden_asm_write_fd", "forbidden",
	 "system call write (writing to a descriptor other "
	 "than 1..3: fd 7)"},
	{"forbidden_asm_kill", "forbidden",
	 "system call kill (signal to another process: pid 999999)"},
	{"forbidden_constructor_socket", "forbidden", "system call socket (network)"},
	{"forbidden_include", "forbidden", "line 1: #include reads a file"},
	{"timeout_host_loop", "timeout",
	 "host code"}, /* wall clock or CPU limit, whichever fires first */
	{"fault_segv", "runtime_fault", "SIGSEGV"},
	{"record_error_read_buffer", "record_error", "clEnqueueReadBuffer: not available"},
	{"record_error_finish", "record_error", "clFinish: not available: synchronisation"},
	{"record_error_svm", "record_error", "clEnqueueSVMMemcpy: not available"},
	{"record_error_unknown_mem", "record_error", "clEnqueueFillBuffer: unknown cl_mem"},
	{"record_error_build_option", "record_error", "build option '-I/etc' is not allowed"},
	{"launch_error_status", "launch_error", "ka_launch returned 7"},
	{"launch_error_nothing", "launch_error", "no kernel launched"},
};

static const struct verdict_case *g_case;

static void test_fixture_verdict(void)
{
	struct plan p;
	struct recclient_result r;
	double timeout = !strcmp(g_case->verdict, "timeout") ? 1.0 : 10.0;
	CHECK(record_fixture(g_case->fixture, &p, &r, timeout) == 0);
	if (strcmp(r.verdict, g_case->verdict) || !strstr(r.detail, g_case->detail_has))
		printf("# %s: got %s: %s\n# log: %s\n", g_case->fixture, r.verdict, r.detail,
		       r.log);
	plan_free(&p);
	CHECK_STR(r.verdict, g_case->verdict);
	CHECK(strstr(r.detail, g_case->detail_has) != NULL);
	/* every recording ran with every protection this machine offers */
	CHECK(strstr(r.sandbox, "seccomp=on") != NULL || !strcmp(r.verdict, "forbidden"));
}

static void test_plan_one_kernel(void)
{
	struct plan p;
	struct recclient_result r;
	CHECK(record_fixture("ok_one_kernel", &p, &r, 10) == 0);
	CHECK_STR(r.verdict, "ok");
	CHECK(strstr(r.sandbox, "seccomp=on") && strstr(r.sandbox, "no_new_privs=on"));
	CHECK(p.n_programs == 1 && p.n_kernels == 1 && p.n_ops == 1 && p.n_workspaces == 0);
	CHECK_STR(p.options[0], "-cl-fast-relaxed-math");
	CHECK(strstr(p.sources[0], "__kernel void scale(") != NULL);
	CHECK_STR(p.kernels[0].name, "scale");
	const struct plan_op *o = &p.ops[0];
	CHECK(o->kind == PLAN_OP_LAUNCH && o->kernel == 0 && o->work_dim == 1);
	CHECK(o->grid[0] == 1024 && o->block[0] == 64); /* n = 1000 rounded up to 64 */
	CHECK(o->n_args == 3);
	CHECK(o->args[0].kind == PLAN_ARG_BUFFER && o->args[0].relocs[0].ref.buf == 0);
	CHECK(o->args[1].kind == PLAN_ARG_BUFFER && o->args[1].relocs[0].ref.buf == 1);
	CHECK(o->args[2].kind == PLAN_ARG_BYTES && o->args[2].size == 4);
	int32_t n;
	memcpy(&n, o->args[2].bytes, 4);
	CHECK(n == 1000);
	char *sig = plan_signature(&p);
	CHECK_STR(sig, "scale<1024x1x1,64x1x1>;");
	free(sig);
	plan_free(&p);
}

static void test_plan_two_kernels(void)
{
	struct plan p;
	struct recclient_result r;
	CHECK(record_fixture("ok_two_kernels_workspace", &p, &r, 10) == 0);
	CHECK_STR(r.verdict, "ok");
	CHECK(p.n_programs == 1 && p.n_kernels == 2 && p.n_workspaces == 1 && p.n_ops == 5);
	CHECK_STR(p.options[0], "-DUNUSED=1 -cl-mad-enable");
	CHECK_STR(p.kernels[0].name, "twice");
	CHECK_STR(p.kernels[1].name, "add_one");
	CHECK(p.workspace[0] == 1000 * 4); /* sized from the request's x: 1000 floats */
	/* fill the workspace (buffer 2: after x and y) with a 4-byte zero */
	CHECK(p.ops[0].kind == PLAN_OP_FILL && p.ops[0].dst.buf == 2 && p.ops[0].dst.offset == 0);
	CHECK(p.ops[0].size == 4000 && p.ops[0].pattern_size == 4);
	/* twice: 2-D, global cols x rows = 250 x 4, local 2 x 4 */
	const struct plan_op *t = &p.ops[1];
	CHECK(t->kind == PLAN_OP_LAUNCH && t->kernel == 0 && t->work_dim == 2);
	CHECK(t->grid[0] == 250 && t->grid[1] == 4 && t->block[0] == 2 && t->block[1] == 4);
	CHECK(t->n_args == 3 && t->args[1].kind == PLAN_ARG_BUFFER);
	CHECK(t->args[1].relocs[0].ref.buf == 2);
	/* copy workspace -> y */
	CHECK(p.ops[2].kind == PLAN_OP_COPY && p.ops[2].src.buf == 2 && p.ops[2].dst.buf == 1);
	CHECK(p.ops[2].size == 4000);
	/* add_one on the sub-buffer: y + 1920 bytes (2000 rounded down to the
	 * 128-byte alignment), 520 items; then on y itself, 480 items */
	const struct plan_op *a1 = &p.ops[3], *a2 = &p.ops[4];
	CHECK(a1->kernel == 1 && a1->args[0].kind == PLAN_ARG_BUFFER);
	CHECK(a1->args[0].relocs[0].ref.buf == 1 && a1->args[0].relocs[0].ref.offset == 1920);
	CHECK(a1->args[1].kind == PLAN_ARG_LOCAL && a1->args[1].size == 32);
	CHECK(a1->grid[0] == 520 && a1->block[0] == 8);
	CHECK(a2->grid[0] == 480 && a2->block[0] == 8);
	CHECK(a2->args[0].relocs[0].ref.buf == 1 && a2->args[0].relocs[0].ref.offset == 0);
	/* the runner's check accepts it against the real sizes */
	uint64_t sizes[2] = {4000, 4000};
	struct ka_err e;
	CHECK(plan_check_refs(&p, 2, sizes, &e) == 0);
	plan_free(&p);
}

static void test_harness_errors(void)
{
	struct plan p;
	struct recclient_result r;
	struct ka_err e = {{0}};
	/* a missing recorder is the harness's failure, not a verdict */
	CHECK(recclient_run("/nonexistent/ka-record-opencl", "/dev/null", g_request, 5, &p, &r,
			    &e) == -1);
	CHECK(strstr(e.msg, "/nonexistent/ka-record-opencl") != NULL);
	/* so is a request for another target */
	char so[512], cmd[1024];
	snprintf(so, sizeof so, "%s/h.so", g_tmp);
	snprintf(cmd, sizeof cmd,
		 "gcc -O2 -fPIC -shared -Iinclude -o %s tests/data/record/ok_one_kernel.c", so);
	CHECK(system(cmd) == 0);
	const char *cuda_req = "{\"target\":\"cuda\",\"n_inputs\":0,\"tensors\":[{\"name\":\"y\","
			       "\"dtype\":0,\"ndim\":1,\"shape\":[4],\"numel\":4,\"bytes\":16}],"
			       "\"params\":{\"names\":[],\"values\":[]},\"device\":{}}";
	CHECK(recclient_run(g_recorder, so, cuda_req, 5, &p, &r, &e) == -1);
	CHECK(strstr(e.msg, "this recorder records 'opencl'") != NULL);
	plan_free(&p);
}

struct policy_case {
	const char *source;
	const char *options;
	int ok;
	const char *detail_has;
};

static const struct policy_case policy[] = {
	{"__kernel void k(void) {}", "", 1, ""},
	{"__kernel void k(void) {}", "-DN=4 -D M=2 -UX -cl-fast-relaxed-math -w -Werror -g", 1, ""},
	{"__kernel void k(void) {}", "-I/etc", 0, "'-I/etc'"},
	{"__kernel void k(void) {}", "-include /etc/passwd", 0, "'-include'"},
	{"__kernel void k(void) {}", "-Xclang -load", 0, "'-Xclang'"},
	{"__kernel void k(void) {}", "-DX=\"a b\"", 0, "quote"},
	{"__kernel void k(void) {}", "-D -I/x", 0, "'-I/x'"},
	{"#include <stdio.h>\n__kernel void k(void) {}", "", 0, "line 1: #include"},
	{"int a;\n  #  include \"x\"\n", "", 0, "line 2: #include"},
	{"/* c */ # /* c */ include \"x\"\n", "", 0, "line 1: #include"},
	{"%:include \"x\"\n", "", 0, "#include"},
	{"#inc\\\nlude \"x\"\n", "", 0, "#include"},
	{"#import \"x\"\n", "", 0, "#import"},
	{"#embed \"x\"\n", "", 0, "#embed"},
	{"#include_next <x>\n", "", 0, "#include_next"},
	/* not directives: inside a comment, a string, or mid-line */
	{"// #include \"x\"\n/* #include \"y\" */\n__kernel void k(void) {}", "", 1, ""},
	{"constant char *s = \"#include x\";\nint a; #include\n", "", 1, ""},
	{"#define INC 1\n#if INC\n#endif\n", "", 1, ""},
	/* inline assembly, spelled, pasted, or from the options */
	{"void f(void) { __asm__(\"nop\"); }\n", "", 0, "line 1: inline assembly (__asm__)"},
	{"#define J(a, b) a##b\nvoid f(void) { J(__as, m__)(\"nop\"); }\n", "", 0, "token pasting"},
	{"#define J(a, b) a %:%: b\nvoid f(void) { J(__as, m__)(\"nop\"); }\n", "", 0,
	 "token pasting"},
	{"void f(void) { ZZ volatile(\"nop\"); }\n", "-DZZ=__asm__", 0,
	 "inline assembly (__asm__)"},
	{"void f(void) { ZZ(\"nop\"); }\n", "-D ZZ=__asm", 0, "inline assembly (__asm)"},
	{"void f(void) { J(__as, m__)(\"nop\"); }\n", "-DJ(a,b)=a##b", 0, "token pasting"},
	/* what compilers read differently: trigraphs, a backslash apart from
	 * its newline; C++ for OpenCL (raw strings) */
	{"#define J(a, b) a ?\?=?\?= b\nvoid f(void) { J(__as, m__)(\"nop\"); }\n", "", 0,
	 "line 1: trigraph ?\?="},
	{"void f(void) { __as?\?/\nm__(\"nop\"); }\n", "", 0, "trigraph ?\?/"},
	{"void f(void) { int c = '?\?''; __asm__(\"nop\"); }\n", "", 0, "trigraph ?\?'"},
	{"?\?=include \"x\"\n", "", 0, "trigraph ?\?="},
	{"int a;\n#inc\\  \nlude \"x\"\n", "", 0, "line 2: a backslash separated"},
	{"void f(void) { __as\\\t\r\nm__(\"nop\"); }\n", "", 0, "a backslash separated"},
	{"__kernel void k(void) {}", "-cl-std=CLC++", 0, "'-cl-std=CLC++'"},
	{"__kernel void k(void) {}", "-cl-std=CL2.0 -cl-std=cl1.2", 1, ""},
	{"int f(int a) { return a ? a : 1; } /* what?? */\n", "", 1, ""},
};

static void test_policy(void)
{
	for (size_t i = 0; i < sizeof policy / sizeof policy[0]; i++) {
		struct plan p;
		memset(&p, 0, sizeof p);
		p.n_programs = 1;
		p.sources[0] = (char *)policy[i].source;
		snprintf(p.options[0], sizeof p.options[0], "%s", policy[i].options);
		char detail[512] = "";
		int rc = recclient_check_plan(&p, detail, sizeof detail);
		if ((rc == 0) != policy[i].ok || !strstr(detail, policy[i].detail_has))
			printf("# policy case %zu: rc %d detail '%s'\n", i, rc, detail);
		CHECK((rc == 0) == policy[i].ok);
		CHECK(strstr(detail, policy[i].detail_has) != NULL);
	}
}

static void test_request_json(void)
{
	struct recclient_tensor t[2] = {
		{.name = "x", .dtype = 0, .ndim = 2, .shape = {4, 8}, .numel = 32, .bytes = 128},
		{.name = "y", .dtype = 0, .ndim = 1, .shape = {32}, .numel = 32, .bytes = 128},
	};
	const char *names[] = {"N"};
	int64_t values[] = {32};
	struct ka_err e;
	char *s =
		recclient_request_json("opencl", 1, 1, t, 1, names, values, "{\"name\":\"d\"}", &e);
	CHECK(s != NULL);
	CHECK_STR(s,
		  "{\"target\":\"opencl\",\"n_inputs\":1,\"tensors\":[{\"name\":\"x\",\"dtype\":0,"
		  "\"ndim\":2,\"shape\":[4,8],\"numel\":32,\"bytes\":128},{\"name\":\"y\","
		  "\"dtype\":0,\"ndim\":1,\"shape\":[32],\"numel\":32,\"bytes\":128}],"
		  "\"params\":{\"names\":[\"N\"],\"values\":[32]},\"device\":{\"name\":\"d\"}}");
	free(s);
	CHECK(recclient_request_json("opencl", 1, 1, t, 1, names, values, "[1]", &e) == NULL);
	CHECK(strstr(e.msg, "device") != NULL);
}

int main(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	snprintf(g_recorder, sizeof g_recorder, "%s/ka-record-opencl", build);
	if (access(g_recorder, X_OK) != 0 || system("gcc --version >/dev/null 2>&1") != 0) {
		printf("SKIP test_recclient: %s or gcc is missing\n", g_recorder);
		return 0;
	}
	snprintf(g_tmp, sizeof g_tmp, "/tmp/ka-test-record-XXXXXX");
	if (!mkdtemp(g_tmp))
		return 1;
	struct recclient_tensor t[2] = {
		{.name = "x",
		 .dtype = 0,
		 .ndim = 2,
		 .shape = {4, 250},
		 .numel = 1000,
		 .bytes = 4000},
		{.name = "y",
		 .dtype = 0,
		 .ndim = 2,
		 .shape = {4, 250},
		 .numel = 1000,
		 .bytes = 4000},
	};
	const char *names[] = {"N"};
	int64_t values[] = {1000};
	struct ka_err e;
	g_request = recclient_request_json("opencl", 1, 1, t, 1, names, values, device_json, &e);
	RUN(test_request_json);
	RUN(test_policy);
	RUN(test_harness_errors);
	RUN(test_plan_one_kernel);
	RUN(test_plan_two_kernels);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		g_case = &cases[i];
		ka_test_name = cases[i].fixture;
		ka_test_failed = 0;
		test_fixture_verdict();
		if (!ka_test_failed)
			printf("PASS record_%s\n", cases[i].fixture);
		else
			ka_test_any_failed = 1;
	}
	if (g_wall_n)
		printf("# recorder overhead: %d recordings, mean %.1f ms, max %.1f ms "
		       "(recclient_run "
		       "call to verdict, compile not included)\n",
		       g_wall_n, 1000 * g_wall_sum / g_wall_n, 1000 * g_wall_max);
	free(g_request);
	util_rmtree(g_tmp);
	TEST_EXIT();
}
