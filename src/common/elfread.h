/* elfread.h: read what the grader needs from a compiled CUDA candidate without
 * running any of it: the dynamic symbols of an x86-64 shared object (which
 * library calls its host code makes), the bytes of a named section (the
 * `.nv_fatbin` that the runner loads), and, inside the fat binary, each
 * kernel's parameter layout and resource use from its cubin's `.nv.info`
 * attributes. Pure, bounded parsing of ELF64 little-endian files: every
 * offset and size is checked against the input, a malformed input is an
 * error, never a crash. Does not load, relocate or execute anything, and does
 * not decompress compressed fat-binary entries (reported as an error).
 * Named elfread.h so that it does not shadow the system <elf.h> under -Isrc;
 * its functions keep the elf_ prefix. */
#ifndef KA_ELFREAD_H
#define KA_ELFREAD_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define ELF_MAX_FILE (256u << 20) /* bytes of a shared object we read */
#define ELF_MAX_SYMS 65536	  /* dynamic symbols we list */
#define ELF_MAX_KERNELS 256	  /* kernels of one cubin */
#define ELF_MAX_PARAMS 512	  /* parameters of one kernel */
#define ELF_MAX_NAME 1024	  /* bytes of a (mangled) kernel name */

/* One dynamic symbol. */
struct elf_sym {
	char *name;  /* owned */
	int defined; /* 0: undefined (the object needs it from elsewhere) */
	int weak;    /* STB_WEAK */
	int func;    /* STT_FUNC (or STT_GNU_IFUNC) */
};

struct elf_symlist {
	int n;
	struct elf_sym *s; /* owned */
};

/* The dynamic symbols (.dynsym with its .dynstr) of the x86-64 shared
 * object or executable at path (at most ELF_MAX_FILE bytes). The section
 * table must agree with the dynamic segment (DT_SYMTAB, DT_STRTAB), so the
 * list is the one the dynamic loader will resolve. 0 and *out filled (free
 * with elf_symlist_free), or -1 with e naming the file and the problem. */
int elf_dynsyms(const char *path, struct elf_symlist *out, struct ka_err *e);

/* The same over len bytes in memory (what tests use to corrupt inputs). */
int elf_dynsyms_mem(const uint8_t *data, size_t len, struct elf_symlist *out, struct ka_err *e);

/* Free the names and the array; zeroes *l. NULL is fine. */
void elf_symlist_free(struct elf_symlist *l);

/* A copy of the bytes of the section called name (e.g. ".nv_fatbin") of the
 * ELF64 file at path. 0 with *data (caller frees) and *len, or -1 with e
 * (unreadable, malformed, no such section, or a section without file bytes). */
int elf_section(const char *path, const char *name, uint8_t **data, size_t *len, struct ka_err *e);
int elf_section_mem(const uint8_t *img, size_t img_len, const char *name, uint8_t **data,
		    size_t *len, struct ka_err *e);

/* Whether the x86-64 relocatable object at path (a candidate's host object,
 * before any link) holds only what a compiler emits, so that what the link
 * makes of it cannot depend on the linker: every section of a type a
 * compiler writes (code and data, symbol and string tables, relocations,
 * notes, groups, init/fini arrays, unwind tables), none of a type only a
 * linker makes (dynamic symbols, dynamic table, hash tables, symbol
 * versions, or any other), and none named as a linker's own output
 * (.dynsym, .dynamic, .got, .plt, .interp, ...). 0, or -1 with e naming the
 * first section that fails or why the file cannot be read. */
int elf_check_object(const char *path, struct ka_err *e);
int elf_check_object_mem(const uint8_t *data, size_t len, struct ka_err *e);

/* One kernel parameter: bytes [offset, offset+size) of the parameter space. */
struct elf_param {
	uint32_t offset;
	uint32_t size;
};

/* What a cubin says about one kernel (`.nv.info.<name>` and friends). */
struct elf_kernel {
	char name[ELF_MAX_NAME]; /* mangled device name */
	int n_params;
	struct elf_param params[ELF_MAX_PARAMS]; /* by ordinal */
	uint32_t param_bytes; /* whole parameter space (EIATTR_CBANK_PARAM_SIZE) */
	int num_regs;	      /* EIATTR_REGCOUNT, 0 if absent */
	uint32_t static_smem; /* size of .nv.shared.<name> */
	uint32_t local_bytes; /* EIATTR_FRAME_SIZE */
	uint32_t const_bytes; /* size of .nv.constant0.<name> */
	int max_threads;      /* __launch_bounds__ product, 0 if none */
};

struct elf_kernels {
	uint32_t arch; /* SM of the cubin used, e.g. 90 */
	int n;
	struct elf_kernel *k; /* owned */
};

/* Walk a fat binary (the `.nv_fatbin` section: one or more fat-binary
 * headers, each with PTX and cubin entries), take its first cubin entry and
 * list that cubin's kernels. -1 with e if there is no cubin, the cubin entry
 * is compressed, or anything is malformed. Free with elf_kernels_free. */
int elf_fatbin_kernels(const uint8_t *fatbin, size_t len, struct elf_kernels *out,
		       struct ka_err *e);

/* Where the first uncompressed cubin entry of a fat binary is: its offset
 * in fatbin and its size. 0, or -1 with e as elf_fatbin_kernels. */
int elf_fatbin_cubin(const uint8_t *fatbin, size_t len, size_t *at, size_t *size, struct ka_err *e);

/* The same for a bare cubin (an ELF with machine EM_CUDA). */
int elf_cubin_kernels(const uint8_t *cubin, size_t len, struct elf_kernels *out, struct ka_err *e);

/* The kernel called name in ks, or NULL. */
const struct elf_kernel *elf_kernels_find(const struct elf_kernels *ks, const char *name);

void elf_kernels_free(struct elf_kernels *ks);

#endif
