/* SPDX-License-Identifier: MIT */
/*
 * fma.c - a*b + c with a single rounding.
 *
 * The exact product P = ma*mb (at most 106 bits) and the addend C (53
 * bits) are placed in a 256-bit window whose bit 253 holds the leading
 * bit of the operand with the larger leading exponent.  Its whole
 * significand then lies at bits 253..148 or higher, so it is exact.  The
 * other operand is shifted into place; bits it loses below bit 0 are
 * jammed into bit 0, which can only happen when it is more than 148 bits
 * below the first one, so there is no cancellation beyond one bit and the
 * jam stays far below the 128 bits kept.  Subtraction takes the larger
 * magnitude first.  The top 128 bits of the normalized sum are sig; any
 * bit below them sets sticky.  No step rounds, so the one rounding is
 * fpl__round_unp's.
 */
#include "engine/internal.h"

typedef struct u256 {
	fpl_u128 hi, lo;
} u256;

static u256 shl256(u256 x, int s)
{
	u256 r;
	if (s == 0)
		return x;
	if (s >= 128) {
		r.hi = x.lo << (s - 128);
		r.lo = 0;
	} else {
		r.hi = (x.hi << s) | (x.lo >> (128 - s));
		r.lo = x.lo << s;
	}
	return r;
}

/* x >> s with every lost bit ORed into bit 0. */
static u256 shr256_jam(u256 x, int s)
{
	u256 r;
	int lost;
	if (s == 0)
		return x;
	if (s >= 256) {
		r.hi = 0;
		r.lo = (x.hi | x.lo) != 0;
		return r;
	}
	if (s >= 128) {
		int t = s - 128;
		lost = x.lo != 0 || (t && (x.hi & (((fpl_u128)1 << t) - 1)) != 0);
		r.lo = t ? x.hi >> t : x.hi;
		r.hi = 0;
	} else {
		lost = (x.lo & (((fpl_u128)1 << s) - 1)) != 0;
		r.lo = (x.lo >> s) | (x.hi << (128 - s));
		r.hi = x.hi >> s;
	}
	if (lost)
		r.lo |= 1;
	return r;
}

static int cmp256(u256 a, u256 b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	if (a.lo != b.lo)
		return a.lo < b.lo ? -1 : 1;
	return 0;
}

static u256 add256(u256 a, u256 b)
{
	u256 r;
	r.lo = a.lo + b.lo;
	r.hi = a.hi + b.hi + (r.lo < a.lo);
	return r;
}

static u256 sub256(u256 a, u256 b)
{
	u256 r;
	r.lo = a.lo - b.lo;
	r.hi = a.hi - b.hi - (a.lo < b.lo);
	return r;
}

static int clz256(u256 x)
{
	return x.hi ? fpl__clz128(x.hi) : 128 + fpl__clz128(x.lo);
}

/* Place integer v (leading bit at bit `len-1`) with value v*2^e into the
 * window whose bit 0 has weight 2^w0. */
static u256 place(fpl_u128 v, int e, int w0)
{
	u256 x = { 0, v };
	long s = (long)e - w0;
	if (s >= 0)
		return shl256(x, (int)s);
	return shr256_jam(x, s < -256 ? 256 : (int)-s);
}

static double fma_finite(const fpl_format *f, double a, double b, double c, fpl_rnd rnd,
			 const fpl_state *st, uint64_t idx, unsigned *fl)
{
	int sa, sb, sc, ea, eb, ec, sp, lp, lc, w0, lz;
	uint64_t ma, mb, mc;
	fpl_u128 P;
	u256 X, Y, S;
	fpl_unp u;

	fpl__split(a, &sa, &ea, &ma);
	fpl__split(b, &sb, &eb, &mb);
	fpl__split(c, &sc, &ec, &mc);
	sp = sa ^ sb;
	P = (fpl_u128)ma * mb;				/* value P * 2^(ea+eb-104) */
	lp = ea + eb - 104 + (127 - fpl__clz128(P));	/* leading exponents */
	lc = ec;
	w0 = (lp > lc ? lp : lc) - 253;
	X = place(P, ea + eb - 104, w0);
	Y = place(mc, ec - 52, w0);
	if (sp == sc) {
		S = add256(X, Y);
		u.sign = sp;
	} else {
		int cmp = cmp256(X, Y);
		if (cmp == 0)	/* exact cancellation: +0, -0 in tn */
			return fpl__zero(f, rnd == FPL_RND_TN, fl);
		S = cmp > 0 ? sub256(X, Y) : sub256(Y, X);
		u.sign = cmp > 0 ? sp : sc;
	}
	lz = clz256(S);
	S = shl256(S, lz);
	u.exp = w0 + 255 - lz;
	u.sig = S.hi;
	u.sticky = S.lo != 0;
	return fpl__round_unp(f, &u, rnd, st, idx, fl);
}

double fpl__fma_ix(const fpl_format *f, double a, double b, double c, fpl_rnd rnd,
		   const fpl_state *st, uint64_t idx, unsigned *fl)
{
	int sp;
	double r;

	a = fpl__daz(f, a);
	b = fpl__daz(f, b);
	c = fpl__daz(f, c);
	sp = fpl__signbit(a) ^ fpl__signbit(b);
	if (fpl__isnan(a) || fpl__isnan(b) || fpl__isnan(c)) {
		double ops[3] = { a, b, c };
		r = fpl__nan_pick(f, ops, 3, fl);
	} else if (fpl__isinf(a) || fpl__isinf(b)) {
		if (a == 0 || b == 0)
			r = fpl__nan_invalid(f, fl);
		else if (fpl__isinf(c) && fpl__signbit(c) != sp)
			r = fpl__nan_invalid(f, fl);
		else
			r = fpl__inf(f, sp, fl);
	} else if (fpl__isinf(c)) {
		r = fpl__inf(f, fpl__signbit(c), fl);
	} else if (a == 0 || b == 0) {
		if (c != 0)
			return fpl__round_ix(f, c, rnd, st, idx, fl);
		/* (+-0) + (+-0): the sum rule with the product's sign */
		if (sp == fpl__signbit(c))
			r = fpl__zero(f, sp, fl);
		else
			r = fpl__zero(f, rnd == FPL_RND_TN, fl);
	} else if (c == 0) {
		return fpl__mul_ix(f, a, b, rnd, st, idx, fl);
	} else {
		r = fma_finite(f, a, b, c, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_fma(const fpl_format *f, double a, double b, double c, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__fma_ix(f, a, b, c, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}
