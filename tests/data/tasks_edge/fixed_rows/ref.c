/* y[r] = sum of row r of a 3 x 5 matrix. One work item is one row. */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, KA_IN(float) x, KA_OUT(float) y)
{
	double s = 0.0;
	for (int c = 0; c < 5; c++)
		s += (double)x[item * 5 + c];
	y[item] = s;
}
