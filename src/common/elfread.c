/* elfread.c: bounded ELF64 parsing for compiled CUDA candidates (see elfread.h).
 * Layouts used: the System V gABI (ELF64 header, section headers, symbols,
 * dynamic entries), the CUDA fat-binary container (a 16-byte header with
 * magic 0xBA55ED50 followed by entries: kind 1 PTX, kind 2 cubin) and the
 * cubin's `.nv.info` attribute records (format byte, attribute byte, then a
 * 2-byte value, or for format 4 a 2-byte length and that many bytes). The
 * last two are NVIDIA's undocumented formats, checked against nvcc 13.0
 * output; anything unexpected is an error, so a change shows up as a failed
 * compile check, not as a wrong layout. */
#include "elfread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EM_X86_64_ 62
#define EM_CUDA_ 190
#define SHT_SYMTAB_ 2
#define SHT_STRTAB_ 3
#define SHT_DYNAMIC_ 6
#define SHT_NOBITS_ 8
#define SHT_DYNSYM_ 11
#define DT_NULL_ 0
#define DT_STRTAB_ 5
#define DT_SYMTAB_ 6

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_ELF 2
/* Entry flags seen with compressed payloads (LZ4 in older toolkits, zstd in
 * CUDA 12.8+); we never decompress. */
#define FATBIN_FLAG_COMPRESSED 0x2000u
#define FATBIN_FLAG_COMPRESSED2 0x8000u

/* .nv.info attributes used here */
#define EIFMT_SVAL 4
#define EIATTR_MAX_THREADS 0x05
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_REGCOUNT 0x2f

struct elf_img {
	const uint8_t *d;
	size_t n;
	uint64_t shoff;
	uint16_t shnum, shstrndx, machine, type;
};

struct elf_shdr {
	uint32_t name, type;
	uint64_t flags, addr, off, size;
	uint32_t link, info;
	uint64_t entsize;
};

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* [off, off+len) inside a buffer of n bytes, without overflow. */
static int in_range(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

static int img_open(struct elf_img *im, const uint8_t *d, size_t n, const char *what,
		    struct ka_err *e)
{
	memset(im, 0, sizeof *im);
	if (n < 64 || memcmp(d, "\177ELF", 4))
		return ka_err_set(e, "%s: not an ELF file", what);
	if (d[4] != 2 || d[5] != 1)
		return ka_err_set(e, "%s: not ELF64 little-endian", what);
	im->d = d;
	im->n = n;
	im->type = rd16(d + 16);
	im->machine = rd16(d + 18);
	im->shoff = rd64(d + 40);
	uint16_t shentsize = rd16(d + 58);
	im->shnum = rd16(d + 60);
	im->shstrndx = rd16(d + 62);
	if (shentsize != 64 || im->shnum == 0 || im->shstrndx >= im->shnum)
		return ka_err_set(e, "%s: bad section header table", what);
	if (!in_range(im->shoff, (uint64_t)im->shnum * 64, n))
		return ka_err_set(e, "%s: section header table outside the file", what);
	return 0;
}

/* Section header i; its file bytes (unless NOBITS) are checked to lie inside
 * the image. */
static int img_shdr(const struct elf_img *im, unsigned i, struct elf_shdr *s, const char *what,
		    struct ka_err *e)
{
	if (i >= im->shnum)
		return ka_err_set(e, "%s: section index %u out of range", what, i);
	const uint8_t *p = im->d + im->shoff + (uint64_t)i * 64;
	s->name = rd32(p);
	s->type = rd32(p + 4);
	s->flags = rd64(p + 8);
	s->addr = rd64(p + 16);
	s->off = rd64(p + 24);
	s->size = rd64(p + 32);
	s->link = rd32(p + 40);
	s->info = rd32(p + 44);
	s->entsize = rd64(p + 56);
	if (s->type != SHT_NOBITS_ && !in_range(s->off, s->size, im->n))
		return ka_err_set(e, "%s: section %u lies outside the file", what, i);
	return 0;
}

/* NUL-terminated string at off of a string table of len bytes, or NULL. */
static const char *tab_str(const uint8_t *tab, uint64_t len, uint64_t off)
{
	if (off >= len)
		return NULL;
	const void *z = memchr(tab + off, 0, (size_t)(len - off));
	return z ? (const char *)tab + off : NULL;
}

static const char *sec_name(const struct elf_img *im, const struct elf_shdr *s)
{
	struct elf_shdr st;
	if (img_shdr(im, im->shstrndx, &st, "", NULL) || st.type == SHT_NOBITS_)
		return NULL;
	return tab_str(im->d + st.off, st.size, s->name);
}

/* Index of the section called name, or -1. */
static int find_section(const struct elf_img *im, const char *name, struct elf_shdr *out,
			const char *what, struct ka_err *e)
{
	for (unsigned i = 1; i < im->shnum; i++) {
		struct elf_shdr s;
		if (img_shdr(im, i, &s, what, e))
			return -2;
		const char *n = sec_name(im, &s);
		if (n && !strcmp(n, name)) {
			*out = s;
			return (int)i;
		}
	}
	return -1;
}

void elf_symlist_free(struct elf_symlist *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		free(l->s[i].name);
	free(l->s);
	memset(l, 0, sizeof *l);
}

int elf_dynsyms_mem(const uint8_t *data, size_t len, struct elf_symlist *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	const char *what = "shared object";
	struct elf_img im;
	if (img_open(&im, data, len, what, e))
		return -1;
	if (im.machine != EM_X86_64_)
		return ka_err_set(e, "%s: not x86-64", what);
	struct elf_shdr dynsym = {0}, dynstr = {0}, dyn = {0};
	int have_sym = 0, have_dyn = 0;
	for (unsigned i = 1; i < im.shnum; i++) {
		struct elf_shdr s;
		if (img_shdr(&im, i, &s, what, e))
			return -1;
		if (s.type == SHT_DYNSYM_) {
			if (have_sym++)
				return ka_err_set(e, "%s: more than one .dynsym", what);
			dynsym = s;
		} else if (s.type == SHT_DYNAMIC_) {
			if (have_dyn++)
				return ka_err_set(e, "%s: more than one .dynamic", what);
			dyn = s;
		}
	}
	if (!have_sym || !have_dyn)
		return ka_err_set(e, "%s: no dynamic symbol table", what);
	if (dynsym.entsize != 24 || dynsym.size % 24)
		return ka_err_set(e, "%s: bad .dynsym entry size", what);
	if (img_shdr(&im, dynsym.link, &dynstr, what, e))
		return -1;
	if (dynstr.type != SHT_STRTAB_)
		return ka_err_set(e, "%s: .dynsym does not link to a string table", what);
	/* The loader finds its tables through the dynamic segment, not the
	 * section headers: both must name the same tables. */
	uint64_t dt_symtab = 0, dt_strtab = 0;
	int seen_sym = 0, seen_str = 0;
	for (uint64_t off = 0; off + 16 <= dyn.size; off += 16) {
		const uint8_t *p = im.d + dyn.off + off;
		int64_t tag = (int64_t)rd64(p);
		if (tag == DT_NULL_)
			break;
		if (tag == DT_SYMTAB_) {
			dt_symtab = rd64(p + 8);
			seen_sym++;
		} else if (tag == DT_STRTAB_) {
			dt_strtab = rd64(p + 8);
			seen_str++;
		}
	}
	if (seen_sym != 1 || seen_str != 1 || dt_symtab != dynsym.addr || dt_strtab != dynstr.addr)
		return ka_err_set(e,
				  "%s: the dynamic segment and the section headers disagree "
				  "on the symbol tables",
				  what);
	uint64_t nsym = dynsym.size / 24;
	if (nsym > ELF_MAX_SYMS)
		return ka_err_set(e, "%s: %llu dynamic symbols, over the cap of %d", what,
				  (unsigned long long)nsym, ELF_MAX_SYMS);
	out->s = xcalloc(nsym ? nsym : 1, sizeof *out->s);
	for (uint64_t i = 1; i < nsym; i++) {
		const uint8_t *p = im.d + dynsym.off + i * 24;
		uint32_t name = rd32(p);
		uint8_t info = p[4];
		uint16_t shndx = rd16(p + 6);
		const char *s = tab_str(im.d + dynstr.off, dynstr.size, name);
		if (!s) {
			elf_symlist_free(out);
			return ka_err_set(e, "%s: dynamic symbol %llu has a bad name", what,
					  (unsigned long long)i);
		}
		if (!*s)
			continue;
		struct elf_sym *y = &out->s[out->n++];
		y->name = xstrdup(s);
		y->defined = shndx != 0;
		y->weak = (info >> 4) == 2;
		y->func = (info & 15) == 2 || (info & 15) == 10;
	}
	return 0;
}

int elf_dynsyms(const char *path, struct elf_symlist *out, struct ka_err *e)
{
	char *buf = NULL;
	size_t len = 0;
	memset(out, 0, sizeof *out);
	if (util_read_file(path, ELF_MAX_FILE, &buf, &len, e))
		return -1;
	struct ka_err e2;
	int rc = elf_dynsyms_mem((const uint8_t *)buf, len, out, &e2);
	if (rc)
		ka_err_set(e, "%s: %s", path, e2.msg);
	free(buf);
	return rc;
}

int elf_section_mem(const uint8_t *img, size_t img_len, const char *name, uint8_t **data,
		    size_t *len, struct ka_err *e)
{
	struct elf_img im;
	struct elf_shdr s;
	*data = NULL;
	*len = 0;
	if (img_open(&im, img, img_len, "ELF file", e))
		return -1;
	int i = find_section(&im, name, &s, "ELF file", e);
	if (i == -2)
		return -1;
	if (i < 0)
		return ka_err_set(e, "no section %s", name);
	if (s.type == SHT_NOBITS_)
		return ka_err_set(e, "section %s has no bytes in the file", name);
	*data = xmalloc(s.size ? s.size : 1);
	memcpy(*data, im.d + s.off, s.size);
	*len = s.size;
	return 0;
}

int elf_section(const char *path, const char *name, uint8_t **data, size_t *len, struct ka_err *e)
{
	char *buf = NULL;
	size_t n = 0;
	*data = NULL;
	*len = 0;
	if (util_read_file(path, ELF_MAX_FILE, &buf, &n, e))
		return -1;
	struct ka_err e2;
	int rc = elf_section_mem((const uint8_t *)buf, n, name, data, len, &e2);
	if (rc)
		ka_err_set(e, "%s: %s", path, e2.msg);
	free(buf);
	return rc;
}

/* ---- relocatable objects ---- */

#define ET_REL_ 1

/* Section types a compiler and assembler write into an x86-64 object. */
static int object_type_ok(uint32_t t)
{
	switch (t) {
	case 0:	 /* SHT_NULL */
	case 1:	 /* SHT_PROGBITS */
	case 2:	 /* SHT_SYMTAB */
	case 3:	 /* SHT_STRTAB */
	case 4:	 /* SHT_RELA */
	case 7:	 /* SHT_NOTE */
	case 8:	 /* SHT_NOBITS */
	case 9:	 /* SHT_REL */
	case 14: /* SHT_INIT_ARRAY */
	case 15: /* SHT_FINI_ARRAY */
	case 16: /* SHT_PREINIT_ARRAY */
	case 17: /* SHT_GROUP */
	case 18: /* SHT_SYMTAB_SHNDX */
	case 0x70000001: /* SHT_X86_64_UNWIND */ return 1;
	}
	return 0;
}

/* Names of what a linker makes for a shared object (an input section so
 * named would be merged into, or clash with, the linker's own, each linker
 * its own way). */
static const char *const linker_names[] = {
	".dynamic",	".dynsym",	  ".dynstr",	    ".hash",	     ".gnu.hash",
	".gnu.version", ".gnu.version_d", ".gnu.version_r", ".interp",	     ".got",
	".got.plt",	".plt",		  ".plt.got",	    ".plt.sec",	     ".rela.dyn",
	".rela.plt",	".rel.dyn",	  ".rel.plt",	    ".eh_frame_hdr", ".note.gnu.build-id",
	NULL,
};

int elf_check_object_mem(const uint8_t *data, size_t len, struct ka_err *e)
{
	struct elf_img im;
	if (img_open(&im, data, len, "object", e))
		return -1;
	if (im.type != ET_REL_ || im.machine != EM_X86_64_)
		return ka_err_set(e, "not an x86-64 relocatable object (type %u, machine %u)",
				  im.type, im.machine);
	for (unsigned i = 1; i < im.shnum; i++) {
		struct elf_shdr s;
		if (img_shdr(&im, i, &s, "object", e))
			return -1;
		const char *n = sec_name(&im, &s);
		if (!n)
			return ka_err_set(e, "section %u has no readable name", i);
		if (!object_type_ok(s.type))
			return ka_err_set(e,
					  "section %u (%.64s) is of type %#x, which only a linker "
					  "makes or no compiler writes",
					  i, n, s.type);
		for (int k = 0; linker_names[k]; k++)
			if (!strcmp(n, linker_names[k]))
				return ka_err_set(e, "section %u is named %s, a linker's own", i,
						  n);
	}
	return 0;
}

int elf_check_object(const char *path, struct ka_err *e)
{
	char *buf = NULL;
	size_t len = 0;
	if (util_read_file(path, ELF_MAX_FILE, &buf, &len, e))
		return -1;
	int rc = elf_check_object_mem((const uint8_t *)buf, len, e);
	free(buf);
	return rc;
}

/* ---- cubins ---- */

void elf_kernels_free(struct elf_kernels *ks)
{
	if (!ks)
		return;
	free(ks->k);
	memset(ks, 0, sizeof *ks);
}

const struct elf_kernel *elf_kernels_find(const struct elf_kernels *ks, const char *name)
{
	for (int i = 0; ks && i < ks->n; i++)
		if (!strcmp(ks->k[i].name, name))
			return &ks->k[i];
	return NULL;
}

static struct elf_kernel *kernel_get(struct elf_kernels *ks, const char *name, struct ka_err *e)
{
	for (int i = 0; i < ks->n; i++)
		if (!strcmp(ks->k[i].name, name))
			return &ks->k[i];
	if (ks->n >= ELF_MAX_KERNELS) {
		ka_err_set(e, "cubin: more than %d kernels", ELF_MAX_KERNELS);
		return NULL;
	}
	if (strlen(name) >= ELF_MAX_NAME) {
		ka_err_set(e, "cubin: kernel name over %d bytes", ELF_MAX_NAME);
		return NULL;
	}
	ks->k = xrealloc(ks->k, (size_t)(ks->n + 1) * sizeof *ks->k);
	struct elf_kernel *k = &ks->k[ks->n++];
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "%s", name);
	k->n_params = -1; /* filled from the attributes; -1 = no ordinal seen yet */
	return k;
}

/* Walk the attribute records of one .nv.info section; fn gets each one. */
typedef int (*attr_fn)(void *ctx, uint8_t fmt, uint8_t attr, const uint8_t *val, uint32_t len,
		       struct ka_err *e);

static int walk_info(const uint8_t *d, uint64_t n, attr_fn fn, void *ctx, struct ka_err *e)
{
	uint64_t p = 0;
	while (p < n) {
		if (n - p < 4)
			return ka_err_set(e, "cubin: truncated .nv.info record");
		uint8_t fmt = d[p], attr = d[p + 1];
		const uint8_t *val = d + p + 2;
		uint32_t vlen = 2;
		if (fmt == EIFMT_SVAL) {
			vlen = rd16(d + p + 2);
			val = d + p + 4;
			if (vlen > n - p - 4)
				return ka_err_set(e, "cubin: .nv.info record overruns its section");
			p += 4 + vlen;
		} else if (fmt >= 1 && fmt <= 3) {
			p += 4;
		} else {
			return ka_err_set(e, "cubin: unknown .nv.info record format %u", fmt);
		}
		if (fn(ctx, fmt, attr, val, vlen, e))
			return -1;
	}
	return 0;
}

struct kinfo_ctx {
	struct elf_kernel *k;
	uint8_t seen[ELF_MAX_PARAMS];
};

static int kinfo_attr(void *vctx, uint8_t fmt, uint8_t attr, const uint8_t *val, uint32_t len,
		      struct ka_err *e)
{
	struct kinfo_ctx *c = vctx;
	struct elf_kernel *k = c->k;
	if (attr == EIATTR_KPARAM_INFO) {
		if (fmt != EIFMT_SVAL || len < 12)
			return ka_err_set(e, "cubin: %s: short parameter record", k->name);
		uint32_t ordinal = rd16(val + 4), offset = rd16(val + 6);
		uint32_t size = (rd32(val + 8) >> 18) & 0x3fff;
		if (ordinal >= ELF_MAX_PARAMS)
			return ka_err_set(e, "cubin: %s: more than %d parameters", k->name,
					  ELF_MAX_PARAMS);
		if (c->seen[ordinal]++)
			return ka_err_set(e, "cubin: %s: parameter %u listed twice", k->name,
					  ordinal);
		k->params[ordinal].offset = offset;
		k->params[ordinal].size = size;
		if ((int)ordinal + 1 > k->n_params)
			k->n_params = (int)ordinal + 1;
	} else if (attr == EIATTR_CBANK_PARAM_SIZE) {
		k->param_bytes = rd16(val);
	} else if (attr == EIATTR_MAX_THREADS && fmt == EIFMT_SVAL && len >= 12) {
		uint64_t t = (uint64_t)rd32(val) * rd32(val + 4) * rd32(val + 8);
		k->max_threads = t > 1024 ? 1024 : (int)t;
	}
	return 0;
}

struct ginfo_ctx {
	struct elf_kernels *ks;
	const struct elf_img *im;
	struct elf_shdr symtab, strtab;
	int have_symtab;
};

static const char *sym_name(const struct ginfo_ctx *c, uint32_t idx)
{
	if (!c->have_symtab || (uint64_t)idx >= c->symtab.size / 24)
		return NULL;
	const uint8_t *p = c->im->d + c->symtab.off + (uint64_t)idx * 24;
	return tab_str(c->im->d + c->strtab.off, c->strtab.size, rd32(p));
}

static int ginfo_attr(void *vctx, uint8_t fmt, uint8_t attr, const uint8_t *val, uint32_t len,
		      struct ka_err *e)
{
	struct ginfo_ctx *c = vctx;
	if ((attr != EIATTR_REGCOUNT && attr != EIATTR_FRAME_SIZE) || fmt != EIFMT_SVAL || len < 8)
		return 0;
	const char *name = sym_name(c, rd32(val));
	if (!name)
		return 0;
	struct elf_kernel *k = NULL;
	for (int i = 0; i < c->ks->n; i++)
		if (!strcmp(c->ks->k[i].name, name))
			k = &c->ks->k[i];
	if (!k) /* a device function's record */
		return 0;
	if (attr == EIATTR_REGCOUNT)
		k->num_regs = (int)rd32(val + 4);
	else
		k->local_bytes = rd32(val + 4);
	return 0;
}

int elf_cubin_kernels(const uint8_t *cubin, size_t len, struct elf_kernels *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	struct elf_img im;
	if (img_open(&im, cubin, len, "cubin", e))
		return -1;
	if (im.machine != EM_CUDA_)
		return ka_err_set(e, "cubin: machine is not CUDA");
	out->arch = (rd32(cubin + 48) >> 8) & 0xff; /* e_flags: SM in bits 8..15 */
	struct ginfo_ctx g = {.ks = out, .im = &im};
	/* Pass 1: kernels and their parameters. */
	for (unsigned i = 1; i < im.shnum; i++) {
		struct elf_shdr s;
		if (img_shdr(&im, i, &s, "cubin", e))
			goto fail;
		const char *n = sec_name(&im, &s);
		if (!n)
			continue;
		if (s.type == SHT_SYMTAB_ && !g.have_symtab) {
			if (s.entsize != 24 || img_shdr(&im, s.link, &g.strtab, "cubin", e) ||
			    g.strtab.type != SHT_STRTAB_) {
				ka_err_set(e, "cubin: bad symbol table");
				goto fail;
			}
			g.symtab = s;
			g.have_symtab = 1;
		}
		if (strncmp(n, ".nv.info.", 9) || !n[9])
			continue;
		struct kinfo_ctx *kc = xcalloc(1, sizeof *kc);
		kc->k = kernel_get(out, n + 9, e);
		int bad = !kc->k || walk_info(im.d + s.off, s.size, kinfo_attr, kc, e);
		if (!bad) {
			if (kc->k->n_params < 0)
				kc->k->n_params = 0;
			for (int p = 0; p < kc->k->n_params && !bad; p++)
				if (!kc->seen[p]) {
					ka_err_set(e, "cubin: %s: parameter %d has no record",
						   kc->k->name, p);
					bad = 1;
				}
		}
		free(kc);
		if (bad)
			goto fail;
	}
	/* Pass 2: per-kernel sizes and the module-wide attributes. */
	for (unsigned i = 1; i < im.shnum; i++) {
		struct elf_shdr s;
		if (img_shdr(&im, i, &s, "cubin", e))
			goto fail;
		const char *n = sec_name(&im, &s);
		if (!n)
			continue;
		if (!strcmp(n, ".nv.info")) {
			if (walk_info(im.d + s.off, s.size, ginfo_attr, &g, e))
				goto fail;
			continue;
		}
		uint32_t *field = NULL;
		const char *kname = NULL;
		if (!strncmp(n, ".nv.shared.", 11)) {
			kname = n + 11;
		} else if (!strncmp(n, ".nv.constant0.", 14)) {
			kname = n + 14;
		}
		if (!kname)
			continue;
		for (int k = 0; k < out->n; k++)
			if (!strcmp(out->k[k].name, kname))
				field = n[4] == 's' ? &out->k[k].static_smem
						    : &out->k[k].const_bytes;
		if (field)
			*field = s.size > UINT32_MAX ? UINT32_MAX : (uint32_t)s.size;
	}
	for (int k = 0; k < out->n; k++) {
		const struct elf_kernel *kk = &out->k[k];
		for (int p = 0; p < kk->n_params; p++)
			if ((uint64_t)kk->params[p].offset + kk->params[p].size > 65536) {
				ka_err_set(e, "cubin: %s: parameter %d outside the parameter space",
					   kk->name, p);
				goto fail;
			}
	}
	return 0;
fail:
	elf_kernels_free(out);
	return -1;
}

int elf_fatbin_cubin(const uint8_t *fb, size_t len, size_t *at, size_t *size, struct ka_err *e)
{
	uint64_t off = 0;
	int compressed = 0;
	/* The section may hold several fat binaries back to back (one per
	 * translation unit), each aligned to 8 bytes. */
	while (off + 16 <= len) {
		if (rd32(fb + off) != FATBIN_MAGIC)
			return ka_err_set(e, "fatbin: bad magic at offset %llu",
					  (unsigned long long)off);
		uint16_t hsize = rd16(fb + off + 6);
		uint64_t fsize = rd64(fb + off + 8);
		if (hsize < 16 || !in_range(off + hsize, fsize, len))
			return ka_err_set(e, "fatbin: header at %llu overruns the section",
					  (unsigned long long)off);
		uint64_t p = off + hsize, end = off + hsize + fsize;
		while (p < end) {
			if (end - p < 64)
				return ka_err_set(e, "fatbin: truncated entry header");
			uint16_t kind = rd16(fb + p);
			uint32_t ehs = rd32(fb + p + 4);
			uint64_t psize = rd64(fb + p + 8);
			uint64_t flags = rd64(fb + p + 40);
			if (ehs < 64 || ehs > end - p || psize > end - p - ehs)
				return ka_err_set(e, "fatbin: entry at %llu overruns its binary",
						  (unsigned long long)p);
			if (kind == FATBIN_KIND_ELF) {
				if (!(flags & (FATBIN_FLAG_COMPRESSED | FATBIN_FLAG_COMPRESSED2))) {
					*at = (size_t)(p + ehs);
					*size = (size_t)psize;
					return 0;
				}
				compressed = 1;
			}
			p += ehs + psize;
		}
		off = (end + 7) & ~(uint64_t)7;
	}
	if (compressed)
		return ka_err_set(e, "fatbin: the cubin is compressed (not supported: compile "
				     "without fat-binary compression)");
	return ka_err_set(e, "fatbin: no cubin entry");
}

int elf_fatbin_kernels(const uint8_t *fb, size_t len, struct elf_kernels *out, struct ka_err *e)
{
	memset(out, 0, sizeof *out);
	size_t at = 0, size = 0;
	if (elf_fatbin_cubin(fb, len, &at, &size, e))
		return -1;
	return elf_cubin_kernels(fb + at, size, out, e);
}
