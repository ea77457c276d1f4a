/* libc_allow.h: the one libc/libm allow-list for candidate host code: the
 * functions (and data) a kernel launcher's shared object may import besides
 * its target's API. The parent (cudac.c, before a CUDA candidate is recorded)
 * and the recorder (recorder/symcheck.c, inside the sandbox) both judge
 * imports by this table, so the two checks cannot drift apart. docs/sandbox.md
 * lists it. It only makes the verdict early and clear: a candidate that
 * reaches another libc function some other way still meets the seccomp filter.
 * Pure lookup; no state. */
#ifndef KA_LIBC_ALLOW_H
#define KA_LIBC_ALLOW_H

/* 1 if name (a dynamic symbol name) is on the allow-list, else 0. */
int libc_allow_has(const char *name);

#endif
