/* group_norm reference: 32 groups; one work item is one (sample, group), which
 * owns its CG * HW contiguous outputs. Two passes in double (mean, then the
 * biased variance). The group count and eps are baked in (eps wants a float
 * scalar parameter; the 32 appears in the torch expression too). */
#include "ka_ref.h"

KA_FN void ref(ka_i64 item, ka_i64 N, ka_i64 CG, ka_i64 HW, KA_IN(float) x, KA_IN(float) w,
	       KA_IN(float) b, KA_OUT(float) y)
{
	ka_i64 L = CG * HW, o = item * L, g = item % 32;
	double mean = 0.0, var = 0.0;
	for (ka_i64 i = 0; i < L; i++)
		mean += (double)x[o + i];
	mean /= (double)L;
	for (ka_i64 i = 0; i < L; i++)
		var += ((double)x[o + i] - mean) * ((double)x[o + i] - mean);
	var /= (double)L;
	double rstd = 1.0 / sqrt(var + 1e-5);
	for (ka_i64 i = 0; i < L; i++) {
		ka_i64 c = g * CG + i / HW;
		y[o + i] = ((double)x[o + i] - mean) * rstd * (double)w[c] + (double)b[c];
	}
}
