/* SPDX-License-Identifier: MIT */
/*
 * mul.c - a * b, rounded once.  The product of two 53-bit significands
 * has at most 106 bits and is exact in 128: no sticky bit is ever needed.
 */
#include "engine/internal.h"

double fpl__mul_ix(const fpl_format *f, double a, double b, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl)
{
	int sa, sb, ea, eb, lz, sign;
	uint64_t ma, mb;
	fpl_u128 P;
	fpl_unp u;
	double r;

	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	sign = fpl__signbit(a) ^ fpl__signbit(b);
	if (fpl__isnan(a) || fpl__isnan(b)) {
		double ops[2] = { a, b };
		r = fpl__nan_pick(f, ops, 2, fl);
	} else if (fpl__isinf(a) || fpl__isinf(b)) {
		if (a == 0 || b == 0)
			r = fpl__nan_invalid(f, fl);
		else
			r = fpl__inf(f, sign, fl);
	} else if (a == 0 || b == 0) {
		r = fpl__zero(f, sign, fl);
	} else {
		fpl__split(a, &sa, &ea, &ma);
		fpl__split(b, &sb, &eb, &mb);
		P = (fpl_u128)ma * mb;		/* |ab| = P * 2^(ea+eb-104) */
		lz = fpl__clz128(P);
		u.sign = sign;
		u.exp = ea + eb + 23 - lz;	/* leading bit of P is at 127-lz */
		u.sig = P << lz;
		u.sticky = 0;
		r = fpl__round_unp(f, &u, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_mul(const fpl_format *f, double a, double b, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__mul_ix(f, a, b, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}
