/* frontier.c: validation of a proposed frontier task (frontier.h): the
 * proposer's fenced blocks, a token-level dialect checker for ref.c, the
 * gold run in a confined child process, the roofline runtime of the
 * benchmark shape, and novelty through bank_dup.h's normalisation. */
#include "frontier.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"
#include "bank_dup.h"
#include "gold.h"
#include "jail.h"
#include "lockdown.h"

/* ---- the reply ---- */

/* The body of the last fenced block tagged with one of tags ("|"-less list,
 * NULL-ended), or NULL. */
static char *last_block(const char *reply, const char *const *tags, int *too_big)
{
	const char *p = reply, *best = NULL, *best_end = NULL;
	while ((p = strstr(p, "```"))) {
		const char *tag = p + 3, *nl = strchr(tag, '\n');
		if (!nl)
			break;
		const char *body = nl + 1, *end = strstr(body, "\n```");
		const char *stop = end ? end + 1 : body + strlen(body);
		size_t tl = (size_t)(nl - tag);
		while (tl && isspace((unsigned char)tag[tl - 1]))
			tl--;
		for (int i = 0; tags[i]; i++)
			if (strlen(tags[i]) == tl && !strncmp(tag, tags[i], tl)) {
				best = body;
				best_end = stop;
			}
		if (!end)
			break;
		p = end + 4;
	}
	if (!best)
		return NULL;
	size_t n = (size_t)(best_end - best);
	if (n > FRONTIER_BLOCK_MAX) {
		*too_big = 1;
		return NULL;
	}
	char *s = xmalloc(n + 1);
	memcpy(s, best, n);
	s[n] = 0;
	return s;
}

int frontier_parse(const char *reply, struct frontier_proposal *p, char *why, size_t cap)
{
	static const char *const js[] = {"json", NULL}, *const c[] = {"c", NULL},
				 *const bl[] = {"cuda", "cu", "opencl", "cl", NULL},
				 *const blc[] = {"cuda", "cu", NULL},
				 *const blo[] = {"opencl", "cl", NULL};
	memset(p, 0, sizeof *p);
	int big = 0;
	p->task_json = last_block(reply, js, &big);
	p->ref_c = last_block(reply, c, &big);
	p->baseline = last_block(reply, bl, &big);
	p->baseline_cuda = last_block(reply, blc, &big);
	p->baseline_opencl = last_block(reply, blo, &big);
	if (big) {
		snprintf(why, cap, "a fenced block is over %u bytes", FRONTIER_BLOCK_MAX);
		return -1;
	}
	if (!p->task_json || !p->ref_c) {
		snprintf(why, cap, "the reply has no %s block",
			 !p->task_json ? "```json (task.json)" : "```c (ref.c)");
		return -1;
	}
	return 0;
}

void frontier_proposal_free(struct frontier_proposal *p)
{
	free(p->task_json);
	free(p->ref_c);
	free(p->baseline);
	free(p->baseline_cuda);
	free(p->baseline_opencl);
	memset(p, 0, sizeof *p);
}

/* ---- the dialect ---- */

#define TOK_MAX 65536
struct tok {
	char s[64];
	int line;
};

/* Split src into tokens (identifiers, numbers, punctuators of one or two
 * characters, strings as one token), comments dropped, preprocessor lines
 * checked here. 0, or 1 with why. */
static int tokenize(const char *src, struct tok *t, int *n, char *why, size_t cap)
{
	int line = 1, bol = 1;
	*n = 0;
	for (const char *p = src; *p;) {
		if (*p == '\n') {
			line++;
			bol = 1;
			p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		/* What the compiler reads as other characters than the checker
		 * would: a backslash (a line splice: "ex\\<newline>tern"), a
		 * trigraph (??= is '#' in -std=c17) or a digraph (%: is '#', <% and
		 * %> are braces, <: and :> brackets). */
		if (*p == '\\' ||
		    (p[0] == '?' && p[1] == '?' && p[2] && strchr("=/'()!<>-", p[2])) ||
		    (p[0] == '%' && (p[1] == ':' || p[1] == '>')) ||
		    (p[0] == '<' && (p[1] == '%' || p[1] == ':')) || (p[0] == ':' && p[1] == '>')) {
			snprintf(why, cap, "line %d: '%.*s' (a line splice, trigraph or digraph)",
				 line,
				 *p == '\\'    ? 1
				 : p[0] == '?' ? 3
					       : 2,
				 p);
			return 1;
		}
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			if (!e) {
				snprintf(why, cap, "line %d: unterminated comment", line);
				return 1;
			}
			for (; p < e; p++)
				line += *p == '\n';
			p = e + 2;
			continue;
		}
		if (*p == '#') {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char buf[128];
			size_t k = 0;
			for (size_t i = 0; i < len && k + 1 < sizeof buf; i++)
				if (!isspace((unsigned char)p[i]))
					buf[k++] = p[i];
			buf[k] = 0;
			if (!bol || strcmp(buf, "#include\"ka_ref.h\"")) {
				snprintf(why, cap,
					 "line %d: preprocessor line other than #include "
					 "\"ka_ref.h\"",
					 line);
				return 1;
			}
			p += len;
			continue;
		}
		bol = 0;
		if (*n >= TOK_MAX) {
			snprintf(why, cap, "over %d tokens", TOK_MAX);
			return 1;
		}
		struct tok *k = &t[(*n)++];
		k->line = line;
		size_t len = 1;
		if (isalpha((unsigned char)*p) || *p == '_') {
			while (isalnum((unsigned char)p[len]) || p[len] == '_')
				len++;
		} else if (isdigit((unsigned char)*p) ||
			   (*p == '.' && isdigit((unsigned char)p[1]))) {
			while (isalnum((unsigned char)p[len]) || p[len] == '.' ||
			       ((p[len] == '+' || p[len] == '-') &&
				(p[len - 1] == 'e' || p[len - 1] == 'E')))
				len++;
		} else if (*p == '"' || *p == '\'') {
			snprintf(why, cap, "line %d: string or character literal", line);
			return 1;
		} else {
			static const char *const two[] = {
				"->", "++", "--", "<=", ">=", "==", "!=", "&&", "||", "+=",
				"-=", "*=", "/=", "%=", "<<", ">>", "&=", "|=", "^=", NULL};
			for (int i = 0; two[i]; i++)
				if (!strncmp(p, two[i], 2))
					len = 2;
		}
		if (len >= sizeof k->s) {
			snprintf(why, cap, "line %d: token over %zu characters", line,
				 sizeof k->s - 1);
			return 1;
		}
		memcpy(k->s, p, len);
		k->s[len] = 0;
		p += len;
	}
	return 0;
}

static int in_list(const char *s, const char *const *l)
{
	for (int i = 0; l[i]; i++)
		if (!strcmp(s, l[i]))
			return 1;
	return 0;
}

static const char *const forbidden[] = {
	"while",	 "do",	     "goto",	  "asm",     "__asm",  "__asm__",
	"__attribute__", "extern",   "static",	  "typedef", "struct", "union",
	"_Pragma",	 "volatile", "register",  "switch",  "setjmp", "longjmp",
	"_Thread_local", "__thread", "KA_GLOBAL", NULL};

static const char *const callable[] = {
	"acos",	     "asin",	  "atan",      "cos",	     "sin",	   "tan",    "acosh",
	"asinh",     "atanh",	  "cosh",      "sinh",	     "tanh",	   "exp",    "exp2",
	"expm1",     "log",	  "log10",     "log1p",	     "log2",	   "logb",   "cbrt",
	"fabs",	     "sqrt",	  "erf",       "erfc",	     "lgamma",	   "tgamma", "ceil",
	"floor",     "nearbyint", "rint",      "round",	     "trunc",	   "atan2",  "pow",
	"hypot",     "fmod",	  "remainder", "copysign",   "nextafter",  "fdim",   "fmax",
	"fmin",	     "fma",	  "ldexp",     "scalbn",     "abs",	   "expf",   "logf",
	"sqrtf",     "tanhf",	  "fabsf",     "erff",	     "fmaxf",	   "fminf",  "KA_LD_F16",
	"KA_ST_F16", "KA_IN",	  "KA_OUT",    "KA_LD_BF16", "KA_ST_BF16", "sizeof", NULL};

static const char *const type_words[] = {
	"float",  "double", "int",     "long",	  "short", "char",  "void",   "unsigned",
	"signed", "ka_i64", "ka_half", "ka_bf16", "const", "_Bool", "size_t", NULL};

static int is_ident(const char *s)
{
	return isalpha((unsigned char)s[0]) || s[0] == '_';
}

/* Index of the token closing the bracket opened at i (or n). */
static int match(const struct tok *t, int n, int i)
{
	char o = t[i].s[0], c = o == '(' ? ')' : o == '[' ? ']' : '}';
	int d = 0;
	for (int j = i; j < n; j++) {
		if (t[j].s[0] == o && !t[j].s[1])
			d++;
		else if (t[j].s[0] == c && !t[j].s[1] && --d == 0)
			return j;
	}
	return n;
}

/* A for header t[a..b) ("(" init ; cond ; step ")" exclusive of parens):
 * the condition must compare some variable that the step changes. */
static int for_bounded(const struct tok *t, int a, int b, char *why, size_t cap)
{
	int s1 = -1, s2 = -1;
	for (int i = a, d = 0; i < b; i++) {
		if (!strcmp(t[i].s, "("))
			d++;
		else if (!strcmp(t[i].s, ")"))
			d--;
		else if (!d && !strcmp(t[i].s, ";")) {
			if (s1 < 0)
				s1 = i;
			else if (s2 < 0)
				s2 = i;
		}
	}
	if (s1 < 0 || s2 < 0 || s2 == s1 + 1 || s2 + 1 >= b) {
		snprintf(why, cap, "line %d: a for loop without a condition or a step", t[a].line);
		return 1;
	}
	for (int i = s1 + 1; i < s2; i++) {
		if (!is_ident(t[i].s))
			continue;
		int cmp = (i + 1 < s2 &&
			   in_list(t[i + 1].s,
				   (const char *const[]){"<", "<=", ">", ">=", "!=", NULL})) ||
			  (i > s1 + 1 &&
			   in_list(t[i - 1].s,
				   (const char *const[]){"<", "<=", ">", ">=", "!=", NULL}));
		if (!cmp)
			continue;
		for (int j = s2 + 1; j < b; j++)
			if (!strcmp(t[j].s, t[i].s) &&
			    ((j + 1 < b &&
			      in_list(t[j + 1].s,
				      (const char *const[]){"++", "--", "+=", "-=", "*=", NULL})) ||
			     (j > s2 + 1 &&
			      in_list(t[j - 1].s, (const char *const[]){"++", "--", NULL}))))
				return 0;
	}
	snprintf(why, cap,
		 "line %d: a for loop whose condition does not compare a variable its step "
		 "changes (no bound the checker can see)",
		 t[a].line);
	return 1;
}

/* The signature t[0..body) is exactly KA_FN void ref ( P, ... ) with each
 * parameter ka_i64 NAME, double NAME, KA_IN(T) NAME or KA_OUT(T) NAME, T
 * an element type: nothing else may stand before the body (a declaration
 * there, "char **environ;", would reach ka's memory). 0, or 1 with why. */
static int signature_ok(const struct tok *t, int body, char *why, size_t cap)
{
	static const char *const elem[] = {"float",   "double",	 "int",	  "ka_i64", "ka_half",
					   "ka_bf16", "ka_bool", "ka_i8", "ka_u8",  NULL};
	int i = 4;
	int ok = body >= 6 && !strcmp(t[0].s, "KA_FN") && !strcmp(t[1].s, "void") &&
		 !strcmp(t[2].s, "ref") && !strcmp(t[3].s, "(") && !strcmp(t[body - 1].s, ")");
	while (ok && i < body - 1) {
		if (!strcmp(t[i].s, "ka_i64") || !strcmp(t[i].s, "double")) {
			i++;
		} else if ((!strcmp(t[i].s, "KA_IN") || !strcmp(t[i].s, "KA_OUT")) &&
			   i + 3 < body && !strcmp(t[i + 1].s, "(") && in_list(t[i + 2].s, elem) &&
			   !strcmp(t[i + 3].s, ")")) {
			i += 4;
		} else {
			break;
		}
		ok = i < body - 1 && is_ident(t[i].s) && !in_list(t[i].s, type_words) &&
		     !in_list(t[i].s, forbidden);
		i++;
		if (ok && i < body - 1)
			ok = !strcmp(t[i++].s, ",") && i < body - 1;
	}
	if (ok && i == body - 1)
		return 0;
	snprintf(why, cap,
		 "line %d: the signature must be KA_FN void ref(...) with parameters ka_i64, "
		 "double, KA_IN(T) or KA_OUT(T), and nothing before it",
		 i < body ? t[i].line : t[0].line);
	return 1;
}

int frontier_dialect_check(const char *src, char *why, size_t cap)
{
	struct tok *t = xmalloc(sizeof *t * TOK_MAX);
	int n = 0, rc = 1;
	if (tokenize(src, t, &n, why, cap))
		goto out;
	/* The signature: tokens before the first "{". */
	int body = 0;
	while (body < n && strcmp(t[body].s, "{"))
		body++;
	if (body == n) {
		snprintf(why, cap, "no function body");
		goto out;
	}
	if (signature_ok(t, body, why, cap))
		goto out;
	int fn_end = match(t, n, body);
	if (fn_end + 1 < n) {
		snprintf(why, cap, "line %d: '%s' after the function (one function only)",
			 t[fn_end + 1].line, t[fn_end + 1].s);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *s = t[i].s, *prev = i ? t[i - 1].s : "";
		if (in_list(s, forbidden) || !strncmp(s, "__builtin", 9)) {
			snprintf(why, cap, "line %d: '%s' is not in the reference dialect",
				 t[i].line, s);
			goto out;
		}
		if (!strcmp(s, "->")) {
			snprintf(why, cap, "line %d: '->' (no pointers but the tensors)",
				 t[i].line);
			goto out;
		}
		if (i > body && !strcmp(s, "*") &&
		    (in_list(prev, type_words) || !strcmp(prev, "*"))) {
			snprintf(why, cap,
				 "line %d: a pointer type after '%s' (no pointers but the "
				 "tensors)",
				 t[i].line, prev);
			goto out;
		}
		if (i > body && !strcmp(s, "&") &&
		    (i == 0 || in_list(prev, (const char *const[]){"(", ",", "=", "return", "+",
								   "-", "*", "/", "?", ":", "[",
								   "{", ";", "&", "!", NULL}))) {
			snprintf(why, cap, "line %d: address-of '&' (no pointers but the tensors)",
				 t[i].line);
			goto out;
		}
		if (i > body && is_ident(s) && i + 1 < n && !strcmp(t[i + 1].s, "(") &&
		    !in_list(s, callable) &&
		    !in_list(s, (const char *const[]){"for", "if", "return", NULL}) &&
		    !in_list(s, type_words)) {
			snprintf(why, cap,
				 "line %d: call of '%s' (only the math functions of the dialect "
				 "may be called)",
				 t[i].line, s);
			goto out;
		}
		if (!strcmp(s, "for")) {
			if (i + 1 >= n || strcmp(t[i + 1].s, "(")) {
				snprintf(why, cap, "line %d: for without '('", t[i].line);
				goto out;
			}
			int e = match(t, n, i + 1);
			if (e >= n || for_bounded(t, i + 2, e, why, cap))
				goto out;
		}
	}
	rc = 0;
out:
	free(t);
	return rc;
}

/* ---- the confined gold ---- */

static void soft_limit(int res, rlim_t v)
{
	struct rlimit l;
	if (getrlimit(res, &l))
		return;
	if (l.rlim_max == RLIM_INFINITY || v < l.rlim_max)
		l.rlim_cur = v;
	setrlimit(res, &l);
}

#define CC_TIMEOUT_S 180.0
#define COMPILE_CAP_S 600.0 /* the child's whole compile phase */
#define READY_MARK "\001ready\n"

/* Compile t's reference as OpenCL C with ka-clc, jailed like bank.c does
 * (PoCL reads the CPU topology from /sys). 0 ok, 3 no platform (skipped),
 * else the status with sum set. */
static int compile_opencl(const struct ka_task *t, const char *clc, char *sum, size_t cap)
{
	char tmpl[] = "/tmp/ka-frontier-XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir) {
		snprintf(sum, cap, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	char *src = bank_opencl_ref_source(t), *file = xasprintf("%s/ref.cl", dir);
	char inc[4096];
	snprintf(inc, sizeof inc, "%s/include", util_data_root());
	static const char *const ocl[] = {"/etc/OpenCL", "/sys/devices/system/cpu",
					  "/sys/devices/system/node", NULL};
	struct jail_opts jo;
	jail_opts_base(&jo, dir);
	jo.cpu_s = (int)CC_TIMEOUT_S + 1;
	struct ka_err e;
	int st = -1;
	int bad = !src || util_write_file(file, src, strlen(src), &e) ||
		  jail_add_ro(&jo, clc, &e) ||
		  (access(inc, R_OK) == 0 && jail_add_ro(&jo, inc, &e));
	for (int i = 0; !bad && ocl[i]; i++)
		bad = access(ocl[i], R_OK) == 0 && jail_add_ro(&jo, ocl[i], &e);
	char *argv[] = {(char *)clc, "build", file, NULL};
	struct util_run_result rr;
	struct util_run_opts ro = {
		.timeout_s = CC_TIMEOUT_S, .out_cap = 64u << 10, .merge_err = 1, .jail = &jo};
	if (bad) {
		snprintf(sum, cap, "%.300s", src ? e.msg : "cannot read ka_gen.h/ka_ref.h");
	} else if (util_run_child(argv, &ro, &rr, &e)) {
		snprintf(sum, cap, "%.300s", e.msg);
	} else {
		st = rr.code;
		char raw[400];
		util_log_summary(rr.out.s, raw, sizeof raw);
		jail_log_escape(raw, strlen(raw), sum, cap);
		util_run_result_free(&rr);
	}
	util_rmtree(dir);
	free(src);
	free(file);
	return st;
}

/* The gold child's confinement, once every compiler has run and before the
 * proposed reference's code runs (bank_tools.before_gold): a Landlock view of
 * the system's libraries only (no home folder, no API keys, no bank, no
 * held-out split; the gold and its inputs are in memory already and the
 * result goes out on a pipe that is open already), and the seccomp filter
 * of src/common/lockdown.h (no other process, no network, no program). The
 * dialect checker is the first wall; this one holds if it is bypassed.
 * Landlock is used where the kernel has it (the line says when not);
 * seccomp is mandatory. */
static int gold_landlock_on = 0;
int frontier_gold_lockdown(char *why, size_t cap)
{
	static const char *const ro[] = {"/usr",
					 "/lib",
					 "/lib64",
					 "/lib32",
					 "/sys/devices/system/cpu",
					 "/proc/self",
					 "/proc/thread-self",
					 NULL};
	static const char *const dev[] = {"/dev/null", NULL};
	gold_landlock_on = lockdown_landlock(ro, NULL, dev) == 0;
	if (lockdown_seccomp()) {
		snprintf(why, cap, "seccomp: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Remove the first occurrence of needle from s. */
static void drop(char *s, const char *needle)
{
	char *m = strstr(s, needle);
	if (m)
		memmove(m, m + strlen(needle), strlen(m + strlen(needle)) + 1);
}

/* The child: limits; compile phase (C through gold_open, which fills the
 * gold cache, then OpenCL C), the ready mark on fd, then bank_validate,
 * whose C build is then a cache hit and which runs the gold. Its line goes
 * to fd; the exit status is the verdict. */
static void child_run(const char *dir, const char *clc, const char *nvcc, double wall_s, int fd)
{
	/* This child is the gold's confinement: the gold runs here, not in a
	 * ka-goldbox (which the lockdown could not start). */
	gold_run_here();
	util_child_detach_signals();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Soft limits only: the jailed compilers set their own (hard) limits,
	 * which a lower hard limit here would refuse; the reference may call
	 * nothing (dialect), so it cannot raise them. */
#ifndef __SANITIZE_ADDRESS__ /* ASan's allocator maps as it goes: no cap under make san */
	soft_limit(RLIMIT_AS, 4ull << 30);
#endif
	soft_limit(RLIMIT_FSIZE, 1ull << 30);
	soft_limit(RLIMIT_CPU, (rlim_t)(COMPILE_CAP_S + wall_s * 4 + 1));
	struct rlimit core = {0, 0};
	setrlimit(RLIMIT_CORE, &core);
	char line[2048] = "";
	struct ka_err e;
	struct ka_task *t = task_load(dir, &e);
	if (!t) {
		snprintf(line, sizeof line, "%s", e.msg);
		if (write(fd, line, strlen(line)) < 0)
			_exit(4);
		_exit(BANK_VERDICT_BAD);
	}
	struct gold *g = gold_open(t, &e); /* compiles; runs none of ref.c */
	if (!g) {
		snprintf(line, sizeof line, "%s", e.msg);
		if (write(fd, line, strlen(line)) < 0)
			_exit(4);
		_exit(BANK_VERDICT_BAD);
	}
	gold_close(g);
	const char *ocl_note = "", *cuda_note = "";
	if (clc && clc[0]) {
		char sum[400];
		int st = compile_opencl(t, clc, sum, sizeof sum);
		if (st == 3) {
			ocl_note = " (OpenCL skipped: no platform)";
		} else if (st == 126 || st == 127) {
			/* ka-clc itself cannot start (a GPU machine without an
			 * OpenCL loader): no verdict on the reference. */
			ocl_note = " (OpenCL skipped: ka-clc cannot start here)";
		} else if (st) {
			snprintf(line, sizeof line, "%s/ref.c: does not compile as OpenCL C: %s",
				 dir, sum);
			if (write(fd, line, strlen(line)) < 0)
				_exit(4);
			_exit(BANK_VERDICT_BAD);
		} else {
			ocl_note = "; OpenCL C";
		}
	}
	if (nvcc && nvcc[0]) {
		if (bank_cuda_ref_check(t, nvcc, line, sizeof line)) {
			if (write(fd, line, strlen(line)) < 0)
				_exit(4);
			_exit(BANK_VERDICT_BAD);
		}
		cuda_note = "; CUDA sm_90a";
	}
	task_free(t);
	if (write(fd, READY_MARK, strlen(READY_MARK)) < 0)
		_exit(4);
	/* The parent may have used OpenMP in other threads, whose pool does not
	 * exist in this forked child: run the gold's parallel loops on one
	 * thread. */
	omp_set_num_threads(1);
	/* Both device compiles are done: bank_validate runs the gold only,
	 * confined first (frontier_gold_lockdown). */
	struct bank_tools tools = {.clc = "", .nvcc = "", .before_gold = frontier_gold_lockdown};
	enum bank_verdict v = bank_validate(dir, &tools, line, sizeof line);
	const char *ll_note =
		gold_landlock_on ? "" : " (gold without Landlock: the kernel has none)";
	/* bank_validate skipped the device compiles this child did. */
	drop(line, "; OpenCL skipped (no ka-clc)");
	drop(line, "; CUDA skipped (no nvcc)");
	size_t len = strlen(line);
	if (v == BANK_VERDICT_OK &&
	    len + strlen(ocl_note) + strlen(cuda_note) + strlen(ll_note) + 1 < sizeof line) {
		strcat(line, ocl_note);
		strcat(line, cuda_note);
		strcat(line, ll_note);
	}
	if (write(fd, line, strlen(line)) < 0)
		_exit(4);
	_exit((int)v);
}

int frontier_gold_confined(const char *dir, const char *clc, const char *nvcc, double wall_s,
			   char *line, size_t cap, double *compile_s, double *gold_s)
{
	int pfd[2];
	line[0] = 0;
	*compile_s = *gold_s = 0;
	fflush(NULL);
	if (pipe(pfd)) {
		snprintf(line, cap, "pipe: %s", strerror(errno));
		return 3;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		snprintf(line, cap, "fork: %s", strerror(errno));
		return 3;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(dir, clc, nvcc, wall_s, pfd[1]);
	}
	close(pfd[1]);
	setpgid(pid, pid);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct timespec start = t0;
	int status = 0, killed = 0, ready = 0;
	char buf[4096];
	size_t used = 0;
	for (;;) {
		struct pollfd pf = {pfd[0], POLLIN, 0};
		if (poll(&pf, 1, 20) > 0 && used + 1 < sizeof buf) {
			ssize_t r = read(pfd[0], buf + used, sizeof buf - 1 - used);
			if (r > 0)
				used += (size_t)r;
			buf[used] = 0;
			char *m = strstr(buf, READY_MARK);
			if (m && !ready) {
				ready = 1;
				clock_gettime(CLOCK_MONOTONIC, &t0);
				*compile_s = elapsed(&start, &t0);
				size_t ml = strlen(READY_MARK);
				memmove(m, m + ml, used - (size_t)(m - buf) - ml + 1);
				used -= ml;
			}
		}
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		double el = elapsed(&t0, &now);
		if (el > (ready ? wall_s : COMPILE_CAP_S) && !killed) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = ready ? 1 : 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ready)
		*gold_s = elapsed(&t0, &now);
	else
		*compile_s = elapsed(&start, &now);
	ssize_t r;
	while (used + 1 < sizeof buf && (r = read(pfd[0], buf + used, sizeof buf - 1 - used)) > 0)
		used += (size_t)r;
	buf[used] = 0;
	close(pfd[0]);
	snprintf(line, cap, "%s", buf);
	if (killed) {
		snprintf(line, cap, "the %s ran over %.0f s (killed)",
			 killed == 1 ? "gold" : "compile phase",
			 killed == 1 ? wall_s : COMPILE_CAP_S);
		return 3;
	}
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 2) {
		if (WIFSIGNALED(status))
			snprintf(line, cap, "the gold was killed by signal %d", WTERMSIG(status));
		else if (!line[0])
			snprintf(line, cap, "the validator failed");
		return 3;
	}
	return WEXITSTATUS(status);
}

double frontier_roofline_s(const struct ka_task *t, double bw, double flops)
{
	int64_t b = 0, f = 0;
	struct ka_err e;
	if (expr_eval(t->min_bytes, t->bench.v, &b, &e) ||
	    expr_eval(t->min_flops, t->bench.v, &f, &e))
		return -1;
	double tb = (double)b / bw, tf = (double)f / flops;
	return tb > tf ? tb : tf;
}

/* ---- novelty ---- */

static char *norm_torch(const struct ka_task *t)
{
	const char *names[KA_MAX_PARAMS + 2 * KA_MAX_TENSORS];
	int n = 0;
	for (int i = 0; i < t->n_params; i++)
		names[n++] = t->params[i];
	for (int i = 0; i < t->n_inputs; i++)
		names[n++] = t->inputs[i].name;
	for (int i = 0; i < t->n_outputs; i++)
		names[n++] = t->outputs[i].name;
	return bank_dup_norm_torch(t->torch, names, n);
}

int frontier_novel(const struct ka_task *t, struct ka_task *const *others, int n, const char *label,
		   char *why, size_t cap)
{
	char *rc = bank_dup_norm_c(t->ref_src), *rt = norm_torch(t);
	int clash = 0;
	for (int i = 0; i < n && !clash; i++) {
		const struct ka_task *o = others[i];
		if (!strcmp(o->name, t->name)) {
			snprintf(why, cap, "same name as the %s task '%s'", label, o->name);
			clash = 1;
			break;
		}
		char *oc = bank_dup_norm_c(o->ref_src), *ot = norm_torch(o);
		if (!strcmp(oc, rc)) {
			snprintf(why, cap, "same normalised ref.c as the %s task '%s'", label,
				 o->name);
			clash = 1;
		} else if (!strcmp(ot, rt)) {
			snprintf(why, cap, "same normalised torch expression as the %s task '%s'",
				 label, o->name);
			clash = 1;
		}
		free(oc);
		free(ot);
	}
	free(rc);
	free(rt);
	return clash;
}
