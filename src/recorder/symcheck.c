/* symcheck.c: which functions a candidate's shared object imports, judged
 * before it is loaded (symcheck.h). The allow-list is the one table in
 * src/common/libc_allow.c, shared with the parent's CUDA check; it is documented in
 * docs/sandbox.md. Anything not on it that the candidate
 * imports (fopen, socket, fork, system, dlopen, getenv, pthread_create,
 * syscall, time, ...) is forbidden. The list only makes the verdict early and
 * clear: a candidate that finds a libc function some other way still meets the
 * seccomp filter. */
#include "symcheck.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "../common/libc_allow.h"

/* Libraries the object may need: the recorder has them loaded already, so
 * the dynamic loader opens no file for them inside the sandbox. */
static const char *const libs_allowed[] = {"libc.so.6", "libm.so.6"};

static int lib_allowed(const struct record_target *t, const char *name)
{
	for (size_t i = 0; i < sizeof libs_allowed / sizeof libs_allowed[0]; i++)
		if (!strcmp(libs_allowed[i], name))
			return 1;
	for (const char *const *l = t->libraries; l && *l; l++)
		if (!strcmp(*l, name))
			return 1;
	return 0;
}

/* A NUL-terminated string at off inside the section [base, base+size), or
 * NULL. */
static const char *str_at(const unsigned char *elf, size_t len, const Elf64_Shdr *sec, uint64_t off)
{
	if (sec->sh_offset > len || sec->sh_size > len - sec->sh_offset || off >= sec->sh_size)
		return NULL;
	const char *s = (const char *)elf + sec->sh_offset + off;
	if (!memchr(s, 0, sec->sh_size - off))
		return NULL;
	return s;
}

static const Elf64_Shdr *section(const unsigned char *elf, size_t len, const Elf64_Ehdr *eh,
				 uint32_t i)
{
	if (i >= eh->e_shnum)
		return NULL;
	return (const Elf64_Shdr *)(elf + eh->e_shoff + (size_t)i * sizeof(Elf64_Shdr));
}

enum symcheck_verdict symcheck_run(const unsigned char *elf, size_t len,
				   const struct record_target *t, char *detail, size_t cap)
{
	detail[0] = 0;
	if (len < sizeof(Elf64_Ehdr) || memcmp(elf, ELFMAG, SELFMAG)) {
		snprintf(detail, cap, "not an ELF file");
		return SYMCHECK_BAD_ELF;
	}
	Elf64_Ehdr eh;
	memcpy(&eh, elf, sizeof eh);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_type != ET_DYN || eh.e_machine != EM_X86_64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > len - eh.e_shoff ||
	    ((uintptr_t)elf + eh.e_shoff) % 8) {
		snprintf(detail, cap, "not a 64-bit x86-64 ELF shared object");
		return SYMCHECK_BAD_ELF;
	}
	char unsupported[256] = "", forbidden[512] = "";
	int n_dynsym = 0, n_forbidden = 0;
	for (uint32_t i = 0; i < eh.e_shnum; i++) {
		const Elf64_Shdr *sh = section(elf, len, &eh, i);
		if (sh->sh_type != SHT_DYNSYM && sh->sh_type != SHT_DYNAMIC)
			continue;
		const Elf64_Shdr *strs = section(elf, len, &eh, sh->sh_link);
		if (!strs || sh->sh_offset > len || sh->sh_size > len - sh->sh_offset ||
		    sh->sh_offset % 8) {
			snprintf(detail, cap, "section %u is out of bounds", i);
			return SYMCHECK_BAD_ELF;
		}
		if (sh->sh_type == SHT_DYNAMIC) {
			size_t n = sh->sh_size / sizeof(Elf64_Dyn);
			const Elf64_Dyn *d = (const Elf64_Dyn *)(elf + sh->sh_offset);
			for (size_t k = 0; k < n && d[k].d_tag != DT_NULL; k++) {
				if (d[k].d_tag != DT_NEEDED)
					continue;
				const char *lib = str_at(elf, len, strs, d[k].d_un.d_val);
				if (!lib || !lib_allowed(t, lib)) {
					snprintf(detail, cap,
						 "needs the library %.200s (only libc and libm are "
						 "available to host code)",
						 lib ? lib : "(unreadable)");
					return SYMCHECK_FORBIDDEN;
				}
			}
			continue;
		}
		n_dynsym++;
		size_t n = sh->sh_size / sizeof(Elf64_Sym);
		const Elf64_Sym *syms = (const Elf64_Sym *)(elf + sh->sh_offset);
		for (size_t k = 1; k < n; k++) {
			if (syms[k].st_shndx != SHN_UNDEF || syms[k].st_name == 0)
				continue;
			const char *name = str_at(elf, len, strs, syms[k].st_name);
			if (!name) {
				snprintf(detail, cap, "symbol %zu has no readable name", k);
				return SYMCHECK_BAD_ELF;
			}
			enum record_sym c = t->classify(name);
			if (c == RECORD_SYM_PROVIDED)
				continue;
			if (c == RECORD_SYM_UNSUPPORTED) {
				if (!unsupported[0])
					snprintf(unsupported, sizeof unsupported, "%.200s", name);
				continue;
			}
			if (!libc_allow_has(name)) {
				/* name every one (up to the buffer), so the verdict
				 * shows the offending calls together */
				size_t fl = strlen(forbidden);
				if (fl + strlen(name) + 3 < sizeof forbidden)
					snprintf(forbidden + fl, sizeof forbidden - fl, "%s%s",
						 fl ? ", " : "", name);
				n_forbidden++;
			}
		}
	}
	if (n_forbidden) {
		snprintf(detail, cap,
			 "host code imports %s, which %s not on the sandbox's allow-list",
			 forbidden, n_forbidden > 1 ? "are" : "is");
		return SYMCHECK_FORBIDDEN;
	}
	if (n_dynsym == 0) {
		snprintf(detail, cap, "no dynamic symbol table");
		return SYMCHECK_BAD_ELF;
	}
	if (unsupported[0]) {
		snprintf(detail, cap, "%s: not available to a candidate (see include/ka_kernel.h)",
			 unsupported);
		return SYMCHECK_RECORD_ERROR;
	}
	return SYMCHECK_OK;
}
