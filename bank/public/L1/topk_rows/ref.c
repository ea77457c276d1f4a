/* topk_rows reference: the K largest values of row r in descending order,
 * and their column indices; equal values by index, the lower first (a
 * stable descending sort, cut after K). One work item is one row (it owns
 * the row's K values and K indices). A sorted list of at most 8 entries:
 * each element is inserted below every entry that is not smaller, so among
 * equal values the earlier index stays ahead. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 R, ka_i64 C, ka_i64 K, KA_IN(float) x, KA_OUT(float) values,
	       KA_OUT(ka_i64) indices)
{
	double v[8];
	ka_i64 ix[8];
	ka_i64 n = 0; /* entries in the list, at most K */
	KA_IN(float) row = x + item * C;
	for (ka_i64 c = 0; c < C; c++) {
		double val = (double)row[c];
		if (n == K && !(val > v[K - 1]))
			continue;
		ka_i64 p = n < K ? n : K - 1; /* the slot freed at the end */
		for (; p > 0 && val > v[p - 1]; p--) {
			v[p] = v[p - 1];
			ix[p] = ix[p - 1];
		}
		v[p] = val;
		ix[p] = c;
		if (n < K)
			n++;
	}
	for (ka_i64 j = 0; j < K; j++) {
		values[item * K + j] = v[j];
		indices[item * K + j] = ix[j];
	}
}
