/* SPDX-License-Identifier: MIT */
/*
 * fused.c - one group of the fused order: S and F terms added as one
 * multi-term sum and rounded once into the accumulator (accum.h).
 *
 * Exact sum: the terms go into an fpl_exact (exact for every binary64
 * product) and fpl__exact_round_ix rounds the real sum once.
 * Aligned sum (W bits): a term is x*y with 53-bit significands, so its
 * exact magnitude is an integer P < 2^106 times 2^e.  With E the largest
 * leading exponent and q = E - W + 1, the aligned term is P*2^(e-q)
 * rounded to an integer (tz or ne): exact when e >= q (then P*2^(e-q) <
 * 2^W <= 2^64, since the term's leading exponent is at most E), a right
 * shift otherwise.  Each aligned magnitude is at most 2^W, so F+1 of them
 * (F < 2^40 by the parser's limit) sum in a signed 128-bit integer
 * without overflow: |sum| < 2^(64+41).  The sum times 2^q is handed to
 * fpl__round_parts_ix, the one rounding.
 *
 * expsum: E is the largest alignment exponent of a matrix unit instead:
 * ea+eb+1 for a product (the inputs' exponents, a subnormal one clamped
 * at its format's emin, so the top bit of the significand product field
 * [1, 4)) and eS+1 for S (clamped at acc's emin).  Every nonzero term's
 * leading exponent is at most its alignment exponent (|a b| < 2^(ea+eb+2),
 * |S| < 2^(eS+1)), so the bound P*2^(e-q) < 2^W still holds and the sum
 * above is still exact; only q moves.  NVIDIA's H100 fits it bit for bit
 * (fplab-models(7)): it reads the exponent fields, not the product's
 * normalised exponent, to align.
 */
#include <math.h>

#include "accum/accum_internal.h"
#include "accum/exact_internal.h"

/* Term t (0 = S, else ops[2t-1] * ops[2t]) as P * 2^e, sign; 0 if zero. */
static int term_parts(const double *ops, size_t t, fpl_u128 *P, int *e, int *sign)
{
	int s1, s2, e1, e2;
	uint64_t m1, m2;

	if (t == 0) {
		if (ops[0] == 0)
			return 0;
		fpl__split(ops[0], sign, &e1, &m1);
		*P = m1;
		*e = e1 - 52;
		return 1;
	}
	if (ops[2 * t - 1] == 0 || ops[2 * t] == 0)
		return 0;
	fpl__split(ops[2 * t - 1], &s1, &e1, &m1);
	fpl__split(ops[2 * t], &s2, &e2, &m2);
	*P = (fpl_u128)m1 * m2;
	*e = e1 + e2 - 104;
	*sign = s1 ^ s2;
	return 1;
}

static int zero_sign(const double *ops, size_t t)
{
	if (t == 0)
		return fpl__signbit(ops[0]);
	return fpl__signbit(ops[2 * t - 1]) ^ fpl__signbit(ops[2 * t]);
}

/* P * 2^(e - q) rounded to an integer in mode tz or ne. */
static fpl_u128 align(fpl_u128 P, int e, int q, fpl_rnd r)
{
	int sh = q - e;
	fpl_u128 n, rest, half;

	if (sh <= 0)
		return P << -sh;
	if (sh >= 128)
		return 0;	/* P < 2^106 <= half an ulp: 0 in tz and ne */
	n = P >> sh;
	rest = P & (((fpl_u128)1 << sh) - 1);
	half = (fpl_u128)1 << (sh - 1);
	if (r == FPL_RND_NE && (rest > half || (rest == half && (n & 1))))
		n++;
	return n;
}

/* Term t's alignment exponent under expsum (t nonzero). */
static int expsum_ref(const fpl_accum_model *m, const double *ops, size_t t)
{
	int ea, eb;

	if (t == 0) {
		ea = ilogb(ops[0]);
		return (ea < m->acc.emin ? m->acc.emin : ea) + 1;
	}
	ea = ilogb(ops[2 * t - 1]);
	eb = ilogb(ops[2 * t]);
	return (ea < m->a.emin ? m->a.emin : ea) + (eb < m->b.emin ? m->b.emin : eb) + 1;
}

static double aligned(const fpl_accum_model *m, const double *ops, size_t nt,
		      const fpl_state *st, uint64_t idx, unsigned *fl, int *zero)
{
	fpl_u128 P, mag;
	__int128 sum = 0;
	int e, sign, E = 0, any = 0, q;
	size_t t;

	for (t = 0; t <= nt; t++)
		if (term_parts(ops, t, &P, &e, &sign)) {
			int lead = m->fused_ref == FPL_FUSED_EXPSUM ? expsum_ref(m, ops, t)
								    : e + 127 - fpl__clz128(P);
			if (!any || lead > E)
				E = lead;
			any = 1;
		}
	q = E - m->fused_w + 1;
	for (t = 0; any && t <= nt; t++)
		if (term_parts(ops, t, &P, &e, &sign)) {
			fpl_u128 n = align(P, e, q, m->fused_rnd);
			sum += sign ? -(__int128)n : (__int128)n;
		}
	*zero = sum == 0;
	if (*zero)
		return 0;
	mag = sum < 0 ? (fpl_u128)(-sum) : (fpl_u128)sum;
	return fpl__round_parts_ix(&m->acc, sum < 0, q, (uint64_t)(mag >> 64), (uint64_t)mag, 0,
				   m->acc_rnd, st, idx, fl);
}

double fpl__acc_fused_group(const fpl_accum_model *m, double *ops, size_t nt,
			    const fpl_state *st, uint64_t idx, unsigned *fl)
{
	const fpl_format *f = &m->acc;
	size_t n = 2 * nt + 1, i, t;
	int nan = 0, pinf = 0, ninf = 0, invalid = 0, nneg = 0, npos = 0, nz = 0, zero, zs;
	double r;

	for (i = 0; i < n; i++) {
		ops[i] = fpl__daz(f, ops[i]);
		nan |= fpl__isnan(ops[i]);
	}
	if (nan) {	/* the first NaN, quieted; invalid for any signaling one */
		size_t first = n;
		for (i = 0; i < n; i++) {
			if (fpl__issnan(ops[i]))
				*fl |= FPL_FLAG_INVALID;
			if (first == n && fpl__isnan(ops[i]))
				first = i;
		}
		return fpl__finish(f, fpl__nan_pick(f, &ops[first], 1, fl), st, idx);
	}
	for (t = 0; t <= nt; t++) {
		double x = t ? ops[2 * t - 1] : ops[0], y = t ? ops[2 * t] : 1.0;
		int s = fpl__signbit(x) ^ fpl__signbit(y);
		if (fpl__isinf(x) || fpl__isinf(y)) {
			if (x == 0 || y == 0)
				invalid = 1;
			else if (s)
				ninf = 1;
			else
				pinf = 1;
		}
		if (!(x == 0 || y == 0))
			nz++;
		else if (zero_sign(ops, t))
			nneg++;
		else
			npos++;
	}
	if (invalid || (pinf && ninf))
		return fpl__finish(f, fpl__nan_invalid(f, fl), st, idx);
	if (pinf || ninf)
		return fpl__finish(f, fpl__inf(f, ninf, fl), st, idx);
	if (m->fused_w) {
		r = aligned(m, ops, nt, st, idx, fl, &zero);
	} else {
		fpl_exact e;
		fpl_exact_init(&e);
		fpl_exact_add(&e, ops[0]);
		for (t = 1; t <= nt; t++)
			fpl_exact_add_product(&e, ops[2 * t - 1], ops[2 * t]);
		zero = fpl__exact_is_zero(&e);
		r = zero ? 0 : fpl__exact_round_ix(&e, f, m->acc_rnd, st, idx, fl);
	}
	if (zero) {	/* the sum rule for an exact zero, over all the terms */
		zs = nz || (nneg && npos) ? m->acc_rnd == FPL_RND_TN : nneg > 0;
		r = fpl__round_ix(f, fpl__signed_zero(zs), m->acc_rnd, st, idx, fl);
	}
	return r;
}
