/* SPDX-License-Identifier: MIT */
/*
 * sqrt.c - sqrt(a), rounded once.
 *
 * a = N * 2^k with k even and N an integer of 53 or 54 bits.  Scaled to
 * N1 = N * 4^s1 in [2^124, 2^126), N1 has an integer square root r of 63
 * bits, found from a binary64 estimate by two Newton steps and a final
 * +-1 correction.  The restoring (digit-by-digit) method then appends 60
 * more root bits: the radicand's further digits are all zero, so each step
 * shifts the remainder by two and tries the digit 1.  The remainder stays
 * below 2r+1 < 2^125, so 128-bit arithmetic never overflows.  The result
 * has 123 exact bits (rounding reads 85 at most) and the final remainder
 * is the sticky bit.
 */
#include <math.h>

#include "engine/internal.h"

/* floor(sqrt(n)) for 2^124 <= n < 2^126. */
static uint64_t isqrt126(fpl_u128 n)
{
	uint64_t r = (uint64_t)sqrt((double)n);
	int i;

	for (i = 0; i < 2; i++)
		r = (uint64_t)(((fpl_u128)r + n / r) >> 1);
	while ((fpl_u128)r * r > n)
		r--;
	while ((fpl_u128)(r + 1) * (r + 1) <= n)
		r++;
	return r;
}

double fpl__sqrt_ix(const fpl_format *f, double a, fpl_rnd rnd, const fpl_state *st,
		    uint64_t idx, unsigned *fl)
{
	int sa, ea, k, s1, bits, i, lz;
	uint64_t ma;
	fpl_u128 n1, root, rem;
	fpl_unp u;
	double r;

	a = fpl__daz(f, a);
	if (fpl__isnan(a)) {
		r = fpl__nan_pick(f, &a, 1, fl);
	} else if (a == 0) {
		r = fpl__zero(f, fpl__signbit(a), fl);
	} else if (fpl__signbit(a)) {
		r = fpl__nan_invalid(f, fl);
	} else if (fpl__isinf(a)) {
		r = fpl__inf(f, 0, fl);
	} else {
		fpl__split(a, &sa, &ea, &ma);	/* a = ma * 2^(ea-52) */
		k = ea - 52;
		if (k & 1) {
			ma <<= 1;
			k--;
		}
		bits = 64 - __builtin_clzll(ma);	/* 53 or 54 */
		s1 = (126 - bits) / 2;			/* N1 = ma*4^s1 in [2^124, 2^126) */
		n1 = (fpl_u128)ma << (2 * s1);
		root = isqrt126(n1);
		rem = n1 - root * root;
		for (i = 0; i < 60; i++) {
			fpl_u128 t = (root << 2) | 1;
			rem <<= 2;
			if (rem >= t) {
				rem -= t;
				root = (root << 1) | 1;
			} else {
				root <<= 1;
			}
		}
		/* sqrt(a) = sqrt(n1) * 2^(k/2 - s1) and root = floor(sqrt(n1) * 2^60) */
		lz = fpl__clz128(root);
		u.sign = 0;
		u.exp = (127 - lz) - 60 - s1 + k / 2;
		u.sig = root << lz;
		u.sticky = rem != 0;
		r = fpl__round_unp(f, &u, rnd, st, idx, fl);
	}
	return fpl__finish(f, r, st, idx);
}

double fpl_sqrt(const fpl_format *f, double a, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__sqrt_ix(f, a, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}
