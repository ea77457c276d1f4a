/* symcheck.h: the static check of a candidate's shared object before it is
 * loaded: every undefined dynamic symbol must be the target's API (which the
 * recorder exports) or on the explicit libc/libm allow-list (libc_allow.h)
 * (docs/sandbox.md lists it), and the object may need no library but libc and
 * libm. It reads the ELF file itself, bounds-checking every offset; it runs
 * inside the sandbox, so a parser bug meets the same walls as the candidate.
 * It does not load or run the object. */
#ifndef KA_SYMCHECK_H
#define KA_SYMCHECK_H

#include <stddef.h>

#include "record.h"

/* Outcome of symcheck_run. */
enum symcheck_verdict {
	SYMCHECK_OK,
	SYMCHECK_FORBIDDEN,    /* a symbol outside the allow-list, or a library */
	SYMCHECK_RECORD_ERROR, /* the target's API, but a function it does not provide */
	SYMCHECK_BAD_ELF,      /* not a 64-bit x86-64 ELF shared object we can read */
};

/* Check the ELF image (len bytes) against target t (its classify hook and its
 * extra libraries). On anything but SYMCHECK_OK, detail (cap bytes) names the
 * first offending symbol or library. */
enum symcheck_verdict symcheck_run(const unsigned char *elf, size_t len,
				   const struct record_target *t, char *detail, size_t cap);

#endif
