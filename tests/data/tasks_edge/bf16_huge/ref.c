/* y = x * 2^125 in bf16: exact (a power of two moves the exponent only).
 * One work item is one element. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(ka_bf16) x, KA_OUT(ka_bf16) y)
{
	(void)N;
	double v = KA_LD_BF16(x, item);
	KA_ST_BF16(y, item, v * 42535295865117307932921825928971026432.0);
}
