/* decode_f16_d128 reference: single-query decode attention over a long KV cache, fp16, head dim 128.
 * One work item is one query row (b, h, i): it owns the HD outputs o[b, h, i, :].
 * Two passes over the visible keys in double: the max score, then
 * p_j = exp(s_j - max), l = sum p_j and o = sum p_j v_j / l. */
#include "ka_ref.h"

#define HD 128
#define CAUSAL 0
#define WINDOW 0
#define ROPE 0
#define LD(p, i) KA_LD_F16(p, i)

KA_FN void ref(ka_i64 item, ka_i64 B, ka_i64 H, ka_i64 L, KA_IN(ka_half) q, KA_IN(ka_half) k, KA_IN(ka_half) v,
	       KA_OUT(ka_half) o)
{
	ka_i64 Hq = H, Hkv = H, Sq = 1, Skv = L;
	ka_i64 i = item % Sq, bh = item / Sq, b = bh / Hq, h = bh % Hq;
	ka_i64 kv0 = (b * Hkv + h / (Hq / Hkv)) * Skv * HD;
	double qd[HD], od[HD];
	double scale = 1.0 / sqrt((double)HD);
	for (int d = 0; d < HD; d++) {
		double x = LD(q, item * HD + d);
#if ROPE
		double r = d < HD / 2 ? -LD(q, item * HD + d + HD / 2) : LD(q, item * HD + d - HD / 2);
		x = x * LD(cs, i * HD + d) + r * LD(sn, i * HD + d);
#endif
		qd[d] = x;
		od[d] = 0.0;
	}
	/* visible keys [lo, hi) */
	ka_i64 hi = CAUSAL ? i + (Skv - Sq) + 1 : Skv;
	ka_i64 lo = WINDOW > 0 && hi > WINDOW ? hi - WINDOW : 0;
	double mx = 0.0;
	for (int pass = 0; pass < 2; pass++) {
		double l = 0.0;
		for (ka_i64 j = lo; j < hi; j++) {
			double s = 0.0;
			for (int d = 0; d < HD; d++) {
				double kx = LD(k, kv0 + j * HD + d);
#if ROPE
				double r = d < HD / 2 ? -LD(k, kv0 + j * HD + d + HD / 2)
						      : LD(k, kv0 + j * HD + d - HD / 2);
				kx = kx * LD(cs, j * HD + d) + r * LD(sn, j * HD + d);
#endif
				s += qd[d] * kx;
			}
			s *= scale;
			if (pass == 0) {
				if (j == lo || s > mx)
					mx = s;
			} else {
				double p = exp(s - mx);
				l += p;
				for (int d = 0; d < HD; d++)
					od[d] += p * LD(v, kv0 + j * HD + d);
			}
		}
		if (pass == 1)
			for (int d = 0; d < HD; d++)
				KA_ST_F16(o, item * HD + d, od[d] / l);
	}
}
