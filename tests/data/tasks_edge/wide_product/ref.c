/* p[n] = a[n] * b[n] in int64. One work item is one element. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, KA_IN(int) a, KA_IN(int) b, KA_OUT(ka_i64) p)
{
	(void)N;
	p[item] = (ka_i64)a[item] * (ka_i64)b[item];
}
