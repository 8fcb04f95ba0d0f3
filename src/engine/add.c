/* SPDX-License-Identifier: MIT */
/*
 * add.c - a + b and a - b, rounded once.
 *
 * The exact sum of two binary64 values is formed in 128 bits: the larger
 * magnitude's 53-bit significand sits at bits 126..74 (one bit of headroom
 * for the carry), the smaller one is shifted right by the exponent
 * difference d.  Only when d > 74 do bits fall off the bottom; they are
 * jammed into bit 0.  Then cancellation is at most one bit (the smaller
 * operand is below half an ulp of the larger), so the jam ends at bit 0 or
 * 1 after normalization, far below bit 43, the lowest bit rounding reads
 * (internal.h): the result is the exact sum as far as rounding can tell.
 */
#include "engine/internal.h"

/* Sign of an exact zero sum: x + x keeps the sign of x, otherwise +0,
 * or -0 when rounding toward -inf. */
static int zero_sum_sign(int sa, int sb, fpl_rnd rnd)
{
	if (sa == sb)
		return sa;
	return rnd == FPL_RND_TN;
}

double fpl__add_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl)
{
	int sa, sb, ea, eb, lz;
	uint64_t ma, mb;
	fpl_u128 A, B, S;
	fpl_unp u;
	double r;

	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	if (fpl__isnan(a) || fpl__isnan(b)) {
		double ops[2] = { a, b };
		r = fpl__nan_pick(f, ops, 2, fl);
	} else if (fpl__isinf(a) || fpl__isinf(b)) {
		if (fpl__isinf(a) && fpl__isinf(b) && fpl__signbit(a) != fpl__signbit(b))
			r = fpl__nan_invalid(f, fl);
		else
			r = fpl__inf(f, fpl__signbit(fpl__isinf(a) ? a : b), fl);
	} else if (a == 0 && b == 0) {
		r = fpl__zero(f, zero_sum_sign(fpl__signbit(a), fpl__signbit(b), rnd), fl);
	} else if (a == 0 || b == 0) {
		return fpl__round_ix(f, a == 0 ? b : a, rnd, st, idx, fl);
	} else {
		fpl__split(a, &sa, &ea, &ma);
		fpl__split(b, &sb, &eb, &mb);
		if (eb > ea || (eb == ea && mb > ma)) {	/* |a| >= |b| from here on */
			int ts = sa, te = ea;
			uint64_t tm = ma;
			sa = sb, ea = eb, ma = mb;
			sb = ts, eb = te, mb = tm;
		}
		A = (fpl_u128)ma << 74;
		B = (fpl_u128)mb << 74;
		if (ea - eb >= 127) {
			B = 1;
		} else if (ea > eb) {
			int d = ea - eb;
			int lost = (B & (((fpl_u128)1 << d) - 1)) != 0;
			B >>= d;
			if (lost)
				B |= 1;
		}
		S = sa == sb ? A + B : A - B;
		if (S == 0)
			return fpl__finish(f, fpl__zero(f, zero_sum_sign(sa, sb, rnd), fl), st, idx);
		lz = fpl__clz128(S);
		u.sign = sa;
		u.exp = ea + 1 - lz;
		u.sig = S << lz;
		u.sticky = 0;
		r = fpl__round_unp(f, &u, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_add(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__add_ix(f, a, b, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}

double fpl_sub(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	return fpl_add(f, a, fpl__neg_num(b), rnd, st);
}
