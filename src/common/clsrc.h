/* clsrc.h: an OpenCL C program source as the compiler's preprocessor reads
 * it, for the checks that refuse what would read a file of the runner's host
 * or run native code in it (PoCL runs kernels in the runner's process). Used
 * by the parent on every candidate plan (src/recclient.c: forbidden) and, for
 * the splice, by the OpenCL runner before it builds any program
 * (compile_error), so both read a source the same way. */
#ifndef KA_CLSRC_H
#define KA_CLSRC_H

#include <stddef.h>

/* Translation phases 1 and 2 of src: every backslash-newline (or
 * backslash-CR-LF) pair removed. Refused, as NULL with why set, where
 * compilers read the source differently, so that no scan can be made to
 * see other text than the compiler does: a trigraph (??= ??/ ??' ??( ??)
 * ??! ??< ??> ??-; PoCL's clang replaces them in OpenCL C, so ??/ splices
 * lines, ??=??= pastes tokens and '??'' ends a character literal early) and
 * a backslash separated from its newline by white space (clang splices it,
 * the standard does not). Caller frees. */
char *clsrc_splice(const char *src, char *why, size_t cap);

/* Inline assembly in a spliced source (clsrc_splice) built with options:
 * the spellings asm, __asm, __asm__ as identifiers anywhere in the source
 * or the options (-D ZZ=__asm__), comments and string literals aside (any
 * #if branch, macro bodies); or, when the source or the options paste
 * tokens (## or %:%:, -D 'J(a,b)=a##b'), any of them that can be
 * concatenated from the identifiers of both. 0, or the source line (1 for
 * the options or pasting) with which[] naming it. */
int clsrc_inline_asm(const char *spliced, const char *options, char *which, size_t cap);

#endif
