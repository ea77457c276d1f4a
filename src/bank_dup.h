/* bank_dup.h: near-duplicate detection between two banks (`ka bank
 * check-disjoint A B`). Two tasks clash when they share a name, when their
 * references are the same after normalisation (comments and whitespace gone,
 * every identifier that is not a C keyword, a math function of the reference
 * dialect or a KA_/ka_ name replaced by its position of first use), or when
 * their torch expressions are the same after normalisation (whitespace gone,
 * torch.nn.functional. spelled F., the task's parameter and tensor names
 * replaced by position of first use). It compiles and runs nothing. */
#ifndef KA_BANK_DUP_H
#define KA_BANK_DUP_H

#include "util.h"

#define BANK_DUP_SRC_CAP (1u << 20) /* normalised text longer than this is cut */

/* Normalised form of a reference's C source: tokens separated by one space,
 * renamed identifiers written $0, $1, ... in order of first use. Returns a
 * new string (free). Example: "int a = b; // x\n a += 1;" gives
 * "int $0 = $1 ; $0 + = 1 ;". */
char *bank_dup_norm_c(const char *src);

/* Normalised form of a torch expression: tokens separated by one space,
 * torch.nn.functional. and nn.functional. as F., and each of names[0..n-1]
 * (the task's parameters and tensors) as $k in order of first use. Returns a
 * new string (free). Example: with names x, w: "torch.nn.functional.relu(w @
 * x)" gives "F . relu ( $0 @ $1 )". */
char *bank_dup_norm_torch(const char *expr, const char *const *names, int n);

/* Compare every task of bank a with every task of bank b. Each clash is one
 * line appended to report: "same name: <dir a> <dir b>", "same normalised
 * ref.c: ...", "same normalised torch expression: ...". *n_clash gets the
 * number of lines; *n_a, *n_b the task counts. 0, or -1 with e (a bank that
 * cannot be read, a task that does not load). */
int bank_dup_check(const char *a, const char *b, struct util_buf *report, int *n_clash, int *n_a,
		   int *n_b, struct ka_err *e);

#endif
