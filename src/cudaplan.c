/* cudaplan.c: nvcc's dryrun as a plan of steps (see cudaplan.h). */
#include "cudaplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shim's variable naming the stub a forked cicc marks written
 * (tools/forkshim.h, FORKSHIM_ENV_STUB; the shim is not part of ka). */
#define STUB_ENV "KA_FORK_STUB"

#define MAX_WORDS 400

/* ---- words of one dryrun line ---- */

static const char *env_get(const struct cudaplan *p, const char *name, size_t n)
{
	for (int i = 0; i < p->n_env; i++)
		if (!strncmp(p->env[i], name, n) && p->env[i][n] == '=')
			return p->env[i] + n + 1;
	return NULL;
}

/* Append $NAME or ${NAME} at *s (just past the '$') to b; -1 with e when
 * the variable is not one nvcc set. */
static int expand_var(const struct cudaplan *p, const char **s, struct util_buf *b,
		      struct ka_err *e)
{
	const char *q = *s;
	int brace = *q == '{';
	q += brace;
	size_t n = 0;
	while (q[n] == '_' || (q[n] >= 'A' && q[n] <= 'Z') || (q[n] >= 'a' && q[n] <= 'z') ||
	       (n && q[n] >= '0' && q[n] <= '9'))
		n++;
	const char *v = n ? env_get(p, q, n) : NULL;
	if (!v || (brace && q[n] != '}'))
		return ka_err_set(e, "nvcc's dryrun uses an unknown variable at '$%.20s'", *s);
	util_buf_puts(b, v);
	*s = q + n + brace;
	return 0;
}

/* Split one command into words: blanks separate, "..." groups (the quotes
 * go), $NAME expands. Returns the word count, or -1 with e. */
static int split_words(const struct cudaplan *p, const char *s, char **w, int cap, struct ka_err *e)
{
	int n = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (n == cap) {
			while (n > 0)
				free(w[--n]);
			return ka_err_set(e, "a dryrun command has over %d words", cap);
		}
		struct util_buf b;
		util_buf_init(&b);
		util_buf_puts(&b, "");
		int quoted = 0;
		for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
			if (*s == '"') {
				quoted = !quoted;
			} else if (*s == '$') {
				s++;
				if (expand_var(p, &s, &b, e))
					goto fail;
				s--;
			} else if (*s == '\\' || *s == '\'' || *s == '`') {
				ka_err_set(e, "dryrun quoting not understood: %.40s", s);
				goto fail;
			} else {
				util_buf_putc(&b, *s);
			}
		}
		w[n++] = util_buf_take(&b);
		continue;
	fail:
		util_buf_free(&b);
		while (n > 0)
			free(w[--n]);
		return -1;
	}
	return n;
}

/* ---- phases ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int has_word(char *const *w, int n, const char *word)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(w[i], word))
			return 1;
	return 0;
}

/* The word after `opt`, or NULL. */
static const char *after(char *const *w, int n, const char *opt)
{
	for (int i = 0; i + 1 < n; i++)
		if (!strcmp(w[i], opt))
			return w[i + 1];
	return NULL;
}

/* The value of a `--opt=value` word, or NULL. */
static const char *value_of(char *const *w, int n, const char *prefix)
{
	size_t l = strlen(prefix);
	for (int i = 0; i < n; i++)
		if (!strncmp(w[i], prefix, l))
			return w[i] + l;
	return NULL;
}

static int host_compiler(const char *prog)
{
	const char *b = base_name(prog);
	return !strcmp(b, "gcc") || !strcmp(b, "g++") || !strcmp(b, "cc") || !strcmp(b, "c++") ||
	       !strncmp(b, "gcc-", 4) || !strncmp(b, "g++-", 4);
}

/* The kind of a command, or -1. */
static int kind_of(char *const *w, int n)
{
	const char *b = base_name(w[0]);
	if (host_compiler(w[0]))
		return has_word(w, n, "-E")   ? CUDAPHASE_CPP
		       : has_word(w, n, "-c") ? CUDAPHASE_HOSTCC
					      : CUDAPHASE_LINK;
	if (!strcmp(b, "cudafe++"))
		return CUDAPHASE_CUDAFE;
	if (!strcmp(b, "cicc"))
		return CUDAPHASE_CICC;
	if (!strcmp(b, "ptxas"))
		return CUDAPHASE_PTXAS;
	if (!strcmp(b, "fatbinary"))
		return CUDAPHASE_FATBIN;
	return -1;
}

static const char *const kind_names[] = {"cpp", "cudafe++", "cicc", "ptxas",  "fatbinary",
					 "as",	"host cc",  "link", "host as"};

static void add_word(struct cudaphase *ph, const char *word)
{
	ph->argv = xrealloc(ph->argv, (size_t)(ph->argc + 2) * sizeof *ph->argv);
	ph->argv[ph->argc++] = xstrdup(word);
	ph->argv[ph->argc] = NULL;
}

/* Drop the word at i. */
static void drop_word(struct cudaphase *ph, int i)
{
	free(ph->argv[i]);
	memmove(ph->argv + i, ph->argv + i + 1, (size_t)(ph->argc - i) * sizeof *ph->argv);
	ph->argc--;
}

static void insert_word(struct cudaphase *ph, int at, const char *word)
{
	add_word(ph, word);
	char *w = ph->argv[ph->argc - 1];
	memmove(ph->argv + at + 1, ph->argv + at, (size_t)(ph->argc - 1 - at) * sizeof *ph->argv);
	ph->argv[at] = w;
}

/* The step's name: its kind and what tells its instances apart. */
static void name_step(struct cudaphase *ph)
{
	const char *what = ph->kind == CUDAPHASE_CICC	 ? after(ph->argv, ph->argc, "-arch")
			   : ph->kind == CUDAPHASE_PTXAS ? value_of(ph->argv, ph->argc, "-arch=")
			   : ph->kind == CUDAPHASE_CPP	 ? after(ph->argv, ph->argc, "-o")
							 : NULL;
	snprintf(ph->name, sizeof ph->name, "%s%s%.30s", kind_names[ph->kind], what ? " " : "",
		 what ? base_name(what) : "");
}

/* ---- the changes for running in parallel ---- */

/* Apply the changes of cudaplan.h to step i (its kind set); 0, or -1 with e. */
static int adapt(struct cudaplan *p, int i, struct ka_err *e)
{
	struct cudaphase *ph = &p->ph[i];
	char **w = ph->argv;
	switch (ph->kind) {
	case CUDAPHASE_CPP: {
		char dep[32];
		snprintf(dep, sizeof dep, "deps-%d.d", i);
		add_word(ph, "-MD");
		add_word(ph, "-MF");
		add_word(ph, dep);
		return 0;
	}
	case CUDAPHASE_CUDAFE:
	case CUDAPHASE_CICC: {
		/* nvcc's dryrun names the source as given, its run by its
		 * absolute path: give the phases what the run would */
		for (int k = 0; k + 1 < ph->argc; k++)
			if (!strcmp(w[k], "--orig_src_path_name") && w[k + 1][0] != '/') {
				char *abs = xasprintf("%s/%s", p->src_dir, w[k + 1]);
				free(w[k + 1]);
				w[k + 1] = abs;
			}
		const char *mid = after(w, ph->argc, "--module_id_file_name");
		if (!mid)
			return ka_err_set(e, "%s has no --module_id_file_name", ph->name);
		if (!p->module_id_file)
			p->module_id_file = xstrdup(mid);
		else if (strcmp(p->module_id_file, mid))
			return ka_err_set(e, "two module id files: %s, %s", p->module_id_file, mid);
		for (int k = 0; k < ph->argc; k++)
			if (!strcmp(ph->argv[k], "--gen_module_id_file"))
				drop_word(ph, k--);
		if (ph->kind == CUDAPHASE_CUDAFE)
			ph->senv = "GLIBC_TUNABLES=glibc.malloc.hugetlb=1";
		return 0;
	}
	case CUDAPHASE_FATBIN:
		for (int k = 0; k < ph->argc; k++) {
			if (!strncmp(w[k], "--create=", 9) && !p->fatbin)
				p->fatbin = xstrdup(w[k] + 9);
			if (!strncmp(w[k], "--embedded-fatbin=", 18) && !p->fatbin_c) {
				p->fatbin_c = xstrdup(w[k] + 18);
				drop_word(ph, k--);
			}
		}
		return p->fatbin && p->fatbin_c
			       ? 0
			       : ka_err_set(e, "fatbinary without --create or --embedded-fatbin");
	default: return 0;
	}
}

/* The files step i writes, into out (cap entries); the count. */
static int outputs(const struct cudaphase *ph, const char **out, int cap)
{
	static const char *const opts[] = {"-o", "--gen_c_file_name", "--stub_file_name",
					   "--gen_device_file_name", NULL};
	int n = 0;
	for (int k = 0; opts[k] && n < cap; k++) {
		const char *v = after(ph->argv, ph->argc, opts[k]);
		if (v)
			out[n++] = v;
	}
	const char *c = value_of(ph->argv, ph->argc, "--create=");
	if (c && n < cap)
		out[n++] = c;
	return n;
}

static int add_dep(struct cudaphase *ph, int i, struct ka_err *e)
{
	for (int d = 0; d < ph->n_deps; d++)
		if (ph->deps[d] == i)
			return 0;
	if (ph->n_deps == CUDAPLAN_MAX_DEPS)
		return ka_err_set(e, "%s: too many dependencies", ph->name);
	ph->deps[ph->n_deps++] = i;
	return 0;
}

/* Whether word w reads file f: w is f, or an --image3 naming file=f. */
static int reads(const char *w, const char *f)
{
	if (!strcmp(w, f))
		return 1;
	const char *file = strncmp(w, "--image3=", 9) ? NULL : strstr(w, "file=");
	return file && !strcmp(file + 5, f);
}

/* Step j depends on each earlier step that writes a file one of its words
 * reads; 0, or -1 with e. */
static int file_deps(struct cudaplan *p, int j, struct ka_err *e)
{
	struct cudaphase *ph = &p->ph[j];
	for (int i = 0; i < j; i++) {
		const char *outs[8];
		int no = outputs(&p->ph[i], outs, 8);
		for (int k = 1; k < ph->argc; k++) {
			if (k > 0 && !strcmp(ph->argv[k - 1], "-o"))
				continue; /* a file it writes */
			for (int o = 0; o < no; o++)
				if (reads(ph->argv[k], outs[o]) && add_dep(ph, i, e))
					return -1;
		}
	}
	return 0;
}

/* The host compile: its input is cudafe++'s output, and it #includes the
 * stub that the cicc of the same name wrote; the link reads its object and
 * fatbin.o. 0, or -1 with e. */
static int host_deps(struct cudaplan *p, struct ka_err *e)
{
	int fe = cudaplan_find(p, CUDAPHASE_CUDAFE), cc = cudaplan_find(p, CUDAPHASE_HOSTCC);
	int as = cudaplan_find(p, CUDAPHASE_AS), fb = cudaplan_find(p, CUDAPHASE_FATBIN);
	const char *gen = after(p->ph[fe].argv, p->ph[fe].argc, "--gen_c_file_name");
	const char *stub = after(p->ph[fe].argv, p->ph[fe].argc, "--stub_file_name");
	struct cudaphase *h = &p->ph[cc];
	for (int k = 1; gen && k < h->argc; k++)
		if (!strcmp(h->argv[k], gen))
			h->input = h->argv[k];
	int stub_step = -1;
	for (int i = 0; stub && i < p->n; i++) {
		const char *s = after(p->ph[i].argv, p->ph[i].argc, "--stub_file_name");
		if (p->ph[i].kind == CUDAPHASE_CICC && s && !strcmp(base_name(s), base_name(stub)))
			stub_step = i;
	}
	if (!h->input || stub_step < 0 || stub_step > cc)
		return ka_err_set(e, "the host compile's input or stub is not found");
	if (add_dep(h, stub_step, e) || add_dep(&p->ph[as], fb, e))
		return -1;
	p->stub_step = stub_step;
	p->stub = after(p->ph[stub_step].argv, p->ph[stub_step].argc, "--stub_file_name");
	return 0;
}

/* Insert the as step after fatbinary and fatbin.o into the link. */
static int add_fatbin_object(struct cudaplan *p, struct ka_err *e)
{
	int fb = cudaplan_find(p, CUDAPHASE_FATBIN), cc = cudaplan_find(p, CUDAPHASE_HOSTCC);
	int ln = cudaplan_find(p, CUDAPHASE_LINK);
	if (p->n == CUDAPLAN_MAX)
		return ka_err_set(e, "too many steps");
	memmove(&p->ph[fb + 2], &p->ph[fb + 1], (size_t)(p->n - fb - 1) * sizeof p->ph[0]);
	p->n++;
	struct cudaphase *as = &p->ph[fb + 1];
	memset(as, 0, sizeof *as);
	as->kind = CUDAPHASE_AS;
	static const char *const argv[] = {"as", "--64", "-o", CUDAPLAN_FATBIN_O, CUDAPLAN_FATBIN_S,
					   NULL};
	for (int k = 0; argv[k]; k++)
		add_word(as, argv[k]);
	name_step(as);
	cc += cc > fb;
	ln += ln > fb;
	const char *obj = after(p->ph[cc].argv, p->ph[cc].argc, "-o");
	struct cudaphase *l = &p->ph[ln];
	for (int k = 1; obj && k < l->argc; k++)
		if (!strcmp(l->argv[k], obj)) {
			insert_word(l, k + 1, CUDAPLAN_FATBIN_O);
			return 0;
		}
	return ka_err_set(e, "the link does not name the host object");
}

/* The host compile as two steps: `-c -save-temps -o X.o` made the driver
 * run the preprocessor (its output unused), the compiler (X.s, which the
 * assembler scan reads) and `as --64 -o X.o X.s`; now the compile is `-S
 * -o X.s` and the new step `host as` runs that same assembler command.
 * The .s is the same file (the compiler reads cudafe++'s output directly
 * instead of its own preprocessed copy: test_cudasplit checks the bytes
 * and the logs). Only for the command ka's flags make: -m64, no assembler
 * options; anything else keeps the one step. 0, or -1 with e. */
static int split_host_asm(struct cudaplan *p, struct ka_err *e)
{
	int cc = cudaplan_find(p, CUDAPHASE_HOSTCC), ln = cudaplan_find(p, CUDAPHASE_LINK);
	struct cudaphase *h = &p->ph[cc];
	const char *obj = after(h->argv, h->argc, "-o");
	size_t ol = obj ? strlen(obj) : 0;
	if (!obj || ol < 3 || strcmp(obj + ol - 2, ".o") || !has_word(h->argv, h->argc, "-c") ||
	    !has_word(h->argv, h->argc, "-save-temps") || !has_word(h->argv, h->argc, "-m64") ||
	    has_word(h->argv, h->argc, "-S") || has_word(h->argv, h->argc, "-pipe"))
		return 0;
	for (int k = 1; k < h->argc; k++)
		if (!strncmp(h->argv[k], "-Wa,", 4) || !strcmp(h->argv[k], "-Xassembler") ||
		    !strncmp(h->argv[k], "-save-temps=", 12))
			return 0;
	if (p->n == CUDAPLAN_MAX)
		return ka_err_set(e, "too many steps");
	char *o = xstrdup(obj), *sfile = xasprintf("%.*s.s", (int)(ol - 2), obj);
	for (int k = h->argc - 1; k >= 1; k--) {
		if (!strcmp(h->argv[k], "-save-temps")) {
			drop_word(h, k);
		} else if (!strcmp(h->argv[k], "-c")) {
			free(h->argv[k]);
			h->argv[k] = xstrdup("-S");
		} else if (!strcmp(h->argv[k - 1], "-o") && !strcmp(h->argv[k], o)) {
			free(h->argv[k]);
			h->argv[k] = xstrdup(sfile);
		}
	}
	/* the new step at cc + 1: later indices move up by one */
	memmove(&p->ph[cc + 2], &p->ph[cc + 1], (size_t)(p->n - cc - 1) * sizeof p->ph[0]);
	p->n++;
	ln += ln > cc;
	for (int i = 0; i < p->n; i++)
		for (int d = 0; i != cc + 1 && d < p->ph[i].n_deps; d++)
			p->ph[i].deps[d] += p->ph[i].deps[d] > cc;
	struct cudaphase *as = &p->ph[cc + 1];
	memset(as, 0, sizeof *as);
	as->kind = CUDAPHASE_HOSTAS;
	const char *argv[] = {"as", "--64", "-o", o, sfile, NULL};
	for (int k = 0; argv[k]; k++)
		add_word(as, argv[k]);
	name_step(as);
	as->deps[as->n_deps++] = cc;
	for (int d = 0; d < p->ph[ln].n_deps; d++)
		if (p->ph[ln].deps[d] == cc)
			p->ph[ln].deps[d] = cc + 1;
	free(o);
	free(sfile);
	return 0;
}

/* ---- the plan ---- */

int cudaplan_find(const struct cudaplan *p, enum cudaphase_kind k)
{
	for (int i = 0; i < p->n; i++)
		if (p->ph[i].kind == k)
			return i;
	return -1;
}

void cudaplan_fuse_ld(struct cudaplan *p, const char *name)
{
	int i = cudaplan_find(p, CUDAPHASE_LINK);
	if (i < 0)
		return;
	char word[64];
	snprintf(word, sizeof word, "-fuse-ld=%s", name);
	insert_word(&p->ph[i], 1, word);
}

static int count(const struct cudaplan *p, enum cudaphase_kind k)
{
	int n = 0;
	for (int i = 0; i < p->n; i++)
		n += p->ph[i].kind == k;
	return n;
}

/* One "#$ " line: a variable (NAME=VALUE) or a command. 0, or -1 with e. */
static int parse_line(struct cudaplan *p, const char *l, struct ka_err *e)
{
	size_t nl = strspn(l, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
	if (nl && l[nl] == '=') {
		if (p->n_env == CUDAPLAN_MAX_ENV)
			return ka_err_set(e, "nvcc sets over %d variables", CUDAPLAN_MAX_ENV);
		size_t vl = strlen(l);
		while (vl > nl + 1 && l[vl - 1] == ' ')
			vl--;
		p->env[p->n_env++] = xasprintf("%.*s", (int)vl, l);
		return 0;
	}
	if (!strncmp(l, "--", 2))
		return 0; /* "-- Filter Dependencies -- > deps.d": ours come from cpp */
	char *w[MAX_WORDS];
	int n = split_words(p, l, w, MAX_WORDS, e);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	int kind = kind_of(w, n);
	int rc = 0;
	if (kind < 0)
		rc = ka_err_set(e, "nvcc runs %s, which the split compile does not know", w[0]);
	else if (p->n >= CUDAPLAN_MAX - 1)
		rc = ka_err_set(e, "nvcc runs over %d phases", CUDAPLAN_MAX - 1);
	if (rc == 0) {
		struct cudaphase *ph = &p->ph[p->n++];
		ph->kind = kind;
		for (int i = 0; i < n; i++)
			add_word(ph, w[i]);
		name_step(ph);
	}
	for (int i = 0; i < n; i++)
		free(w[i]);
	return rc;
}

/* Every phase has the inputs it needs from earlier steps. */
static int check_deps_found(const struct cudaplan *p, struct ka_err *e)
{
	for (int i = 0; i < p->n; i++) {
		const struct cudaphase *ph = &p->ph[i];
		int need = ph->kind == CUDAPHASE_CPP	  ? 0
			   : ph->kind == CUDAPHASE_HOSTCC ? 2
			   : ph->kind == CUDAPHASE_LINK	  ? 2
							  : 1;
		if (ph->n_deps < need)
			return ka_err_set(e, "%s: its input comes from no earlier phase", ph->name);
	}
	return 0;
}

int cudaplan_parse(const char *dryrun, const char *src_dir, struct cudaplan *p, struct ka_err *e)
{
	memset(p, 0, sizeof *p);
	p->src_dir = xstrdup(src_dir);
	char *text = xstrdup(dryrun), *save = NULL;
	int rc = 0;
	for (char *l = strtok_r(text, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save))
		if (!strncmp(l, "#$ ", 3))
			rc = parse_line(p, l + 3, e);
	free(text);
	if (rc)
		return -1;
	if (count(p, CUDAPHASE_CPP) < 2 || count(p, CUDAPHASE_CUDAFE) != 1 ||
	    count(p, CUDAPHASE_CICC) < 1 || count(p, CUDAPHASE_PTXAS) < 1 ||
	    count(p, CUDAPHASE_FATBIN) != 1 || count(p, CUDAPHASE_HOSTCC) != 1 ||
	    count(p, CUDAPHASE_LINK) != 1)
		return ka_err_set(e, "nvcc's phases are not the expected set (%d phases)", p->n);
	for (int i = 0; i < p->n; i++)
		if (adapt(p, i, e))
			return -1;
	if (add_fatbin_object(p, e))
		return -1;
	for (int j = 0; j < p->n; j++)
		if (file_deps(p, j, e))
			return -1;
	return host_deps(p, e) || check_deps_found(p, e) || split_host_asm(p, e) ? -1 : 0;
}

void cudaplan_free(struct cudaplan *p)
{
	for (int i = 0; i < p->n; i++) {
		for (int k = 0; k < p->ph[i].argc; k++)
			free(p->ph[i].argv[k]);
		free(p->ph[i].argv);
	}
	for (int i = 0; i < p->n_env; i++)
		free(p->env[i]);
	free(p->module_id_file);
	free(p->fatbin);
	free(p->fatbin_c);
	free(p->src_dir);
	memset(p, 0, sizeof *p);
}

/* Append "key value\n", the value with src_dir/ replaced by work/. */
static void put(struct util_buf *b, const char *key, const char *v, const struct cudaplan *p,
		const char *work)
{
	size_t dl = strlen(p->src_dir);
	util_buf_printf(b, "%s ", key);
	for (const char *s = v; *s;) {
		if (!strncmp(s, p->src_dir, dl) && s[dl] == '/') {
			util_buf_puts(b, work);
			s += dl;
		} else {
			util_buf_putc(b, *s++);
		}
	}
	util_buf_putc(b, '\n');
}

/* Mark in keep[] step t and every step it depends on, directly or not. */
static void closure(const struct cudaplan *p, int t, int *keep)
{
	if (keep[t])
		return;
	keep[t] = 1;
	for (int d = 0; d < p->ph[t].n_deps; d++)
		closure(p, p->ph[t].deps[d], keep);
}

/* ---- the fork servers ---- */

/* The file a cicc or cudafe++ step parses (its one argument ending in
 * ".ii"), or NULL: another kind of step, no such argument, or a step asked
 * for debug or line information, whose output names the working folder,
 * which a forked child takes from its server (docs/compile.md, section 7). */
static const char *fork_input(const struct cudaphase *ph)
{
	if (ph->kind != CUDAPHASE_CICC && ph->kind != CUDAPHASE_CUDAFE)
		return NULL;
	const char *in = NULL;
	for (int k = 1; k < ph->argc; k++) {
		const char *w = ph->argv[k];
		size_t l = strlen(w);
		if (!strcmp(w, "-g") || !strcmp(w, "-G") || strstr(w, "line-info") ||
		    strstr(w, "lineinfo") || strstr(w, "debug"))
			return NULL;
		if (l > 3 && !strcmp(w + l - 3, ".ii") && strcmp(ph->argv[k - 1], "-o")) {
			if (in)
				return NULL;
			in = w;
		}
	}
	return in;
}

/* The socket name of step i's fork server: "f" and a hash of what makes a
 * process of that step: nvcc's variables, the step's own, its arguments
 * (src_dir/ left out: the folder is the one thing a forked child changes). */
static void fork_name(const struct cudaplan *p, int i, char *out, size_t cap)
{
	const struct cudaphase *ph = &p->ph[i];
	size_t dl = strlen(p->src_dir);
	uint64_t h = 0xf0f5;
	for (int k = 0; k < p->n_env; k++)
		h = util_hash64(p->env[k], strlen(p->env[k]) + 1, h);
	if (ph->senv)
		h = util_hash64(ph->senv, strlen(ph->senv) + 1, h);
	if (p->stub && i == p->stub_step) /* its server makes the stub's .ready (step_text) */
		h = util_hash64(STUB_ENV, sizeof STUB_ENV, h);
	for (int k = 0; k < ph->argc; k++) {
		const char *w = ph->argv[k];
		if (!strncmp(w, p->src_dir, dl) && w[dl] == '/')
			w += dl;
		h = util_hash64(w, strlen(w) + 1, h);
	}
	snprintf(out, cap, "f%016llx", (unsigned long long)h);
}

/* How plan_text writes the steps. */
struct text_opts {
	const char *work;	/* the folder it runs in */
	const char *pch_prefix; /* or NULL */
	const char *fork_dir;	/* the fork servers' folder, or NULL */
	int serve;		/* a serving plan: every forkable step serves */
};

/* The lines of step i (keep[]/index[] as in plan_text). */
static void step_text(const struct cudaplan *p, int i, const int *index, const struct text_opts *o,
		      struct util_buf *b)
{
	const struct cudaphase *ph = &p->ph[i];
	const char *in = fork_input(ph);
	char name[24];
	util_buf_printf(b, "step %s\nlog logs/%d.log\n", ph->name, index[i]);
	for (int d = 0; d < ph->n_deps; d++)
		util_buf_printf(b, "dep %d\n", index[ph->deps[d]]);
	if (ph->senv)
		util_buf_printf(b, "senv %s\n", ph->senv);
	if (ph->kind == CUDAPHASE_HOSTCC && o->pch_prefix) {
		util_buf_printf(b, "pchprefix %s\n", o->pch_prefix);
		put(b, "pchinput", ph->input, p, o->work);
	}
	/* The early stub: a forked cicc marks its stub written (the shim), and
	 * the host compile may start then (ka-cudaphases confirms it). */
	if (p->stub && (o->fork_dir || o->serve)) {
		if (i == p->stub_step) {
			char *env = xasprintf("%s=%s", STUB_ENV, p->stub);
			put(b, "senv", env, p, o->work);
			free(env);
		} else if (ph->kind == CUDAPHASE_HOSTCC && o->fork_dir) {
			util_buf_printf(b, "early %d\n", index[p->stub_step]);
			put(b, "earlyfile", p->stub, p, o->work);
		}
	}
	if (in && (o->fork_dir || o->serve)) {
		fork_name(p, i, name, sizeof name);
		if (o->serve)
			util_buf_printf(b, "serve %s\n", name);
		else
			util_buf_printf(b, "forkdir %s\nforksock %s\n", o->fork_dir, name);
		put(b, "forkinput", in, p, o->work);
	}
	for (int k = 0; k < ph->argc; k++)
		put(b, "arg", ph->argv[k], p, o->work);
}

/* The plan text of the steps marked in keep[] (see cudaplan_text). */
static char *plan_text(const struct cudaplan *p, const int *keep, const struct text_opts *o,
		       struct util_buf *b)
{
	int index[CUDAPLAN_MAX], n = 0;
	for (int i = 0; i < p->n_env; i++)
		put(b, "env", p->env[i], p, o->work);
	for (int i = 0; i < p->n; i++)
		if (keep[i]) {
			index[i] = n++;
			step_text(p, i, index, o, b);
		}
	return util_buf_take(b);
}

static int has_newline(const char *a, const char *b, const char *c, struct ka_err *e)
{
	if (strchr(a, '\n') || (b && strchr(b, '\n')) || (c && strchr(c, '\n')))
		return ka_err_set(e, "a path holds a newline");
	return 0;
}

char *cudaplan_text(const struct cudaplan *p, const char *work, const char *pch_prefix,
		    const char *fork_dir, int jobs, uint64_t mem, int limit_s, int target,
		    struct ka_err *e)
{
	if (has_newline(work, pch_prefix, fork_dir, e))
		return NULL;
	int keep[CUDAPLAN_MAX] = {0};
	for (int i = 0; i < p->n; i++)
		keep[i] = target < 0;
	if (target >= 0)
		closure(p, target, keep);
	struct util_buf b;
	util_buf_init(&b);
	util_buf_printf(&b, "jobs %d\nmem %llu\nlimit %d\n", jobs, (unsigned long long)mem,
			limit_s > 0 ? limit_s : 1);
	struct text_opts o = {.work = work, .pch_prefix = pch_prefix, .fork_dir = fork_dir};
	return plan_text(p, keep, &o, &b);
}

char *cudaplan_serve_text(const struct cudaplan *p, const char *work, const char *shim,
			  const char *sentinel, uint64_t mem, struct ka_err *e)
{
	if (has_newline(work, shim, sentinel, e))
		return NULL;
	int keep[CUDAPLAN_MAX] = {0}, n = 0;
	for (int i = 0; i < p->n; i++)
		if (fork_input(&p->ph[i])) {
			closure(p, i, keep);
			n++;
		}
	if (n == 0 || n > 8) {
		ka_err_set(e, "%d steps a fork server could run", n);
		return NULL;
	}
	struct util_buf b;
	util_buf_init(&b);
	util_buf_printf(&b, "jobs %d\nmem %llu\nshim %s\nsentinel %s\n", n, (unsigned long long)mem,
			shim, sentinel);
	struct text_opts o = {.work = work, .serve = 1};
	return plan_text(p, keep, &o, &b);
}

char *cudaplan_pch_text(const struct cudaplan *p, const char *work, const char *header,
			const char *gch, uint64_t mem, struct ka_err *e)
{
	int cc = cudaplan_find(p, CUDAPHASE_HOSTCC);
	if (cc < 0 || strchr(work, '\n') || strchr(header, '\n') || strchr(gch, '\n')) {
		ka_err_set(e, "no host compile, or a path holds a newline");
		return NULL;
	}
	const struct cudaphase *ph = &p->ph[cc];
	struct util_buf b;
	util_buf_init(&b);
	util_buf_printf(&b, "jobs 1\nmem %llu\n", (unsigned long long)mem);
	for (int i = 0; i < p->n_env; i++)
		put(&b, "env", p->env[i], p, work);
	util_buf_printf(&b, "step precompile\nlog logs/0.log\n");
	for (int k = 0; k < ph->argc; k++) {
		const char *a = ph->argv[k];
		if (!strcmp(a, "-c") || !strcmp(a, "-S") || !strcmp(a, "-save-temps"))
			continue;
		if (k > 0 && !strcmp(ph->argv[k - 1], "-o"))
			a = gch;
		else if (a == ph->input)
			a = header;
		else if (k > 0 && !strcmp(ph->argv[k - 1], "-x"))
			a = "c++-header";
		put(&b, "arg", a, p, work);
	}
	return util_buf_take(&b);
}
