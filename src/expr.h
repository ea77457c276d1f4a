/* expr.h: integer shape expressions over a task's named parameters, such as
 * "M*N", "(N+255)/256" or "B*H*S". Grammar (usual precedence, left assoc):
 *   expr := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)*
 *   unary := '-' unary | atom ; atom := INT | NAME | '(' expr ')'
 *   | 'min' '(' expr ',' expr ')' | 'max' '(' expr ',' expr ')'
 * '/' and '%' are integer floor-free C division on int64. Evaluation checks
 * overflow and division by zero. Parsing does not evaluate. */
#ifndef KA_EXPR_H
#define KA_EXPR_H

#include <stdint.h>
#include "util.h"

#define KA_MAX_PARAMS 8
#define KA_NAMELEN 32

struct expr;

/* Parse text against the parameter names (n names). Returns a new expression
 * the caller frees with expr_free, or NULL with e set ("unknown name 'Q'",
 * "unexpected ')' at 4", ...). */
struct expr *expr_parse(const char *text, const char names[][KA_NAMELEN], int n, struct ka_err *e);

/* Evaluate with vals[i] the value of names[i]. 0 and *out, or -1 with e set
 * ("division by zero", "overflow"). */
int expr_eval(const struct expr *x, const int64_t *vals, int64_t *out, struct ka_err *e);

/* The source text (owned by x). */
const char *expr_text(const struct expr *x);

void expr_free(struct expr *x);

#endif
