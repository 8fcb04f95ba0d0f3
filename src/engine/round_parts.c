/* SPDX-License-Identifier: MIT */
/*
 * round_parts.c - an exact value wider than binary64, (hi:lo + t) 2^exp,
 * rounded once into a format (a decimal read by MPFR, say).
 *
 * The value is normalized into the engine's unpacked form (internal.h) and
 * handed to fpl__round_unp(), the one rounding routine; nothing here
 * rounds.  The only work is keeping the exponent in int range without
 * changing the result: once the leading exponent E is beyond FAR, every
 * format sees the same thing.  Above, the quantum 2^(E-m) is so large that
 * the rounded magnitude (and the truncated one) overflows binary64, hence
 * every max, in every mode.  Below, the quantum of the smallest subnormal
 * is at least 2^-1074 (fpl_format_finish keeps emin >= -1022 and m <= 52),
 * so the whole 128-bit significand lies more than 128 bits below it:
 * round_at() sees no kept bit, no round bit and a nonzero rest, and every
 * R <= 32 random-rounding bit is 0, whatever E is.
 */
#include "engine/internal.h"

#define FAR (1 << 20)	/* |E| clamp: far beyond 1024 + 128 and 1074 + 256 */

/* fpl_round_parts with an explicit draw index, flags through *fl, st read-only. */
double fpl__round_parts_ix(const fpl_format *f, int negative, int64_t exp, uint64_t hi,
			   uint64_t lo, int sticky, fpl_rnd rnd, const fpl_state *st, uint64_t idx,
			   unsigned *fl)
{
	fpl_u128 n = ((fpl_u128)hi << 64) | lo;
	fpl_unp u;
	double r;

	u.sign = negative != 0;
	u.sticky = sticky != 0;
	if (n == 0 && !u.sticky) {
		r = fpl__zero(f, u.sign, fl);
	} else {
		if (n == 0) {
			/* only "a little more" than zero: a deep underflow */
			u.sig = (fpl_u128)1 << 127;
			u.exp = -FAR;
		} else {
			int lz = fpl__clz128(n);

			/* |x| = (n << lz) * 2^(exp - lz): leading exponent exp + 127 - lz */
			u.sig = n << lz;
			if (exp > FAR)
				u.exp = FAR;
			else if (exp < -FAR)
				u.exp = -FAR;
			else
				u.exp = (int)exp + 127 - lz;
		}
		r = fpl__round_unp(f, &u, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_round_parts(const fpl_format *f, int negative, int64_t exp, uint64_t hi,
		       uint64_t lo, int sticky, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__round_parts_ix(f, negative, exp, hi, lo, sticky, rnd, st, st->counter++,
				       &fl);

	fpl__commit(st, fl);
	return r;
}
