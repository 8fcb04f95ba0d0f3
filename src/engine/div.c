/* SPDX-License-Identifier: MIT */
/*
 * div.c - a / b, rounded once.
 *
 * With 53-bit significands scaled so that mb <= ma < 2 mb, two long
 * divisions by mb give the quotient ma/mb to 129 bits: q1 = floor(ma 2^64
 * / mb) in [2^64, 2^65) and q2 = the next 64 bits from the remainder.
 * The top 128 bits form sig; the last bit and the final remainder decide
 * the sticky bit, so sig and sticky describe the exact quotient.
 */
#include "engine/internal.h"

double fpl__div_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl)
{
	int sa, sb, ea, eb, sign;
	uint64_t ma, mb;
	fpl_u128 n, q1, r1, q2, r2;
	fpl_unp u;
	double r;

	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	sign = fpl__signbit(a) ^ fpl__signbit(b);
	if (fpl__isnan(a) || fpl__isnan(b)) {
		double ops[2] = { a, b };
		r = fpl__nan_pick(f, ops, 2, fl);
	} else if (fpl__isinf(a)) {
		r = fpl__isinf(b) ? fpl__nan_invalid(f, fl) : fpl__inf(f, sign, fl);
	} else if (fpl__isinf(b)) {
		r = fpl__zero(f, sign, fl);
	} else if (b == 0) {
		if (a == 0) {
			r = fpl__nan_invalid(f, fl);
		} else {
			*fl |= FPL_FLAG_DIVBYZERO;
			r = fpl__inf(f, sign, fl);
		}
	} else if (a == 0) {
		r = fpl__zero(f, sign, fl);
	} else {
		fpl__split(a, &sa, &ea, &ma);
		fpl__split(b, &sb, &eb, &mb);
		if (ma < mb) {
			ma <<= 1;
			ea--;
		}
		n = (fpl_u128)ma << 64;
		q1 = n / mb;
		r1 = n % mb;
		n = r1 << 64;
		q2 = n / mb;
		r2 = n % mb;
		u.sign = sign;
		u.exp = ea - eb;
		u.sig = (q1 << 63) | (q2 >> 1);
		u.sticky = (q2 & 1) || r2 != 0;
		r = fpl__round_unp(f, &u, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_div(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__div_ix(f, a, b, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}
