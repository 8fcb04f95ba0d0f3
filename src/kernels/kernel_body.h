/* SPDX-License-Identifier: MIT */
/*
 * kernels/kernel_body.h - the block kernels, written once in portable C
 * and compiled once per kernel set (round_ref.c for baseline x86-64,
 * x86/round_avx512.c with AVX-512 flags, where the loops vectorize).
 * The including file defines KERNEL_SET (the table's name) and, if it
 * has a hardware fma, KERNEL_HAVE_FMA.
 *
 * Rounding.  For 2^emin <= |x| the quantum of |x| in
 * the target is 2^(E-m), i.e. the low s = 52-m bits of the binary64
 * encoding.  With a = the magnitude bits, adding an increment to a and
 * clearing the low s bits rounds, and a carry out of the fraction moves
 * into the exponent field, which is exactly the next binade: the binary64
 * encoding is monotonic.  ne adds half-1 plus the kept lsb, na half,
 * nz half-1, upward modes s ones; od sets the kept lsb when inexact; sp
 * adds one quantum iff T + r >= 2^R.  The subnormal range works the same
 * way with a longer shift (kb_round_lane).  Results above max, inf, NaN,
 * and tiny values of the other subnormal flavours are marked for the
 * scalar engine.
 *
 * Exact-to-odd intermediates.  With the binary64 result h = RN(exact) and
 * the sign of exact - h from an error-free transformation (TwoSum for
 * add; TwoProduct, by fma or Dekker's split, for mul and for the residuals
 * of div and sqrt), RO(exact) is h when exact, else |h| stepped toward
 * |exact| if needed and then given an odd last bit.  Rounding RO_53(x)
 * into a format with p <= 51 bits, in any deterministic mode, equals
 * rounding x itself (Boldo-Melquiond: round-to-odd at p+2 bits is
 * innocuous), and its bits below the target lsb are those of x for the
 * 52 - p bits sp reads when p + R <= 52.  The transformations are exact
 * when the operands lie in [2^-450, 2^450] (no underflow of an error term,
 * no overflow), which the caller's window enforces.
 */
#include <string.h>

#include "kernels/kernels_internal.h"

/* Bit casts through a union: C11 defines them, and unlike memcpy they
 * do not stop gcc 12 from vectorizing the loops. */
typedef union kb_pun {
	double d;
	uint64_t u;
} kb_pun;

static inline uint64_t kb_bits(double x)
{
	kb_pun p;
	p.d = x;
	return p.u;
}

static inline double kb_dbl(uint64_t u)
{
	kb_pun p;
	p.u = u;
	return p.d;
}

/* Element access to double arrays as bits. */
typedef uint64_t __attribute__((may_alias)) kb_u64a;

#define KB_SIGN 0x8000000000000000ull
#define KB_ALWAYS_INLINE static inline __attribute__((always_inline))

/* The mode's choice for one lane, in encoding units: a = |x| bits, q the
 * quantum (a power of two; mask = q - 1 the discarded bits), kl the lsb
 * of the kept integer, T the R bits of the discarded part (sp only).
 * Increments are q & -bit: no shift or multiply by a per-lane amount. */
KB_ALWAYS_INLINE uint64_t kb_pick(const fpl_kparams *p, fpl_rnd rnd, uint64_t a, uint64_t sgn,
				  uint64_t q, uint64_t kl, uint64_t T, uint64_t idx)
{
	const uint64_t mask = q - 1, half = q >> 1, rest = a & mask, tr = a & ~mask;

	switch (rnd) {
	case FPL_RND_NE:
		return (a + (half - 1) + kl) & ~mask;
	case FPL_RND_NA:
		return (a + half) & ~mask;
	case FPL_RND_NZ:
		return (a + (half - 1)) & ~mask;
	case FPL_RND_TP:
		return sgn ? tr : (a + mask) & ~mask;
	case FPL_RND_TN:
		return sgn ? (a + mask) & ~mask : tr;
	case FPL_RND_OD:
		return tr + (q & (0 - ((uint64_t)(rest != 0) & (kl ^ 1))));
	case FPL_RND_SP: {
		const uint64_t R = p->sr_bits;
		uint64_t rr = fpl__draw(p->key, idx) >> (64 - R);
		return tr + (q & (0 - ((T + rr) >> R)));
	}
	case FPL_RND_SE:
		return tr + (q & (0 - ((uint64_t)(rest != 0) & (fpl__draw(p->key, idx) >> 63))));
	default:	/* tz */
		return tr;
	}
}

/* One lane in the normal range only: the shift is the constant s and
 * every tiny lane is marked (bit 1) for the gradual-underflow variant or
 * the scalar engine. */
KB_ALWAYS_INLINE uint64_t kb_round_lane(const fpl_kparams *p, fpl_rnd rnd, uint64_t u,
					uint64_t idx, uint64_t *spc, uint64_t *inexact,
					uint64_t *tiny)
{
	const uint64_t s = p->s, R = p->sr_bits, q = 1ull << s;
	uint64_t sgn = u & KB_SIGN, a = u ^ sgn, rest = a & (q - 1), r, T = 0;
	uint64_t normal = (uint64_t)((a >> 52) != 0);
	uint64_t kl = (((a & 0x000fffffffffffffull) | (normal << 52)) >> s) & 1;

	if (rnd == FPL_RND_SP)
		T = s >= R ? rest >> (s - R) : rest << (R - s);
	r = kb_pick(p, rnd, a, sgn, q, kl, T, idx);
	*tiny = (uint64_t)(a < p->min_bits) & (uint64_t)(a != 0);
	/* bit 0: scalar engine; bit 1: tiny, for the gradual-underflow variant */
	*spc = (*tiny << 1) | (uint64_t)(r > p->max_bits) | (p->zero_special & (uint64_t)(r == 0));
	*inexact = rest != 0;
	return r | sgn;
}

/* One lane of rounding; mode is a constant after inlining.  In the
 * subnormal range (gradual underflow only) the quantum is 2^(emin-m), d
 * binades coarser than in the normal range, so the shift grows by d; the
 * binary64 encoding of |x| still has the quantum as a whole number of its
 * ulps as long as the shift is at most 52, and the carry argument holds.
 * Tininess after rounding: a result below 2^emin at the coarse quantum
 * means the result at precision p is below it too (each mode is monotone
 * in the discarded fraction, which is smaller at the finer quantum, for
 * the same draw), so only tiny lanes that reach 2^emin are left to the
 * scalar engine. */
KB_ALWAYS_INLINE uint64_t kb_round_lane_sub(const fpl_kparams *p, fpl_rnd rnd, uint64_t u,
					    uint64_t idx, uint64_t *spc, uint64_t *inexact,
					    uint64_t *tinyp)
{
	uint64_t sgn = u & KB_SIGN, a = u ^ sgn;
	uint64_t be = a >> 52, normal = (uint64_t)(be != 0);
	uint64_t be1 = be + (normal ^ 1);	/* binary64 subnormals: exponent -1022 */
	uint64_t extra = be1 < p->emin_b ? p->emin_b - be1 : 0;
	uint64_t tiny = (uint64_t)(a < p->min_bits) & (uint64_t)(a != 0);
	uint64_t sh = p->s + extra, s = sh > 52 ? 52 : sh;
	/* 2^s by the exponent field of a double: gcc 12 does not vectorize
	 * 64-bit shifts by per-lane counts, but it does vectorize this. */
	uint64_t q = (uint64_t)kb_dbl((1023 + s) << 52);
	uint64_t rest = a & (q - 1), r, T = 0;
	/* lsb of the kept integer: bit s of the significand with its implicit bit */
	uint64_t kl = (uint64_t)((((a & 0x000fffffffffffffull) | (normal << 52)) & q) != 0);

	if (rnd == FPL_RND_SP)	/* T = floor(rest 2^R / 2^s): exact scaling, truncated */
		T = (uint64_t)((double)rest * kb_dbl((1023 + p->sr_bits - s) << 52));
	r = kb_pick(p, rnd, a, sgn, q, kl, T, idx);
	/* Deep lanes: |x| below the smallest quantum q = 2^(emin-m) (shift over
	 * 52).  The result is 0 or q: |x| >= q/2 exactly when the shift is 53,
	 * with equality when the fraction is 0; sp compares |x|/q, scaled by a
	 * power of two (exact), in R bits. */
	uint64_t deep = (uint64_t)(sh > 52) & (uint64_t)(a != 0), away;
	{
		uint64_t halfup = (uint64_t)(sh == 53), above = halfup & (uint64_t)((a & 0x000fffffffffffffull) != 0);
		switch (rnd) {
		case FPL_RND_NE:
		case FPL_RND_NZ:
			away = above;
			break;
		case FPL_RND_NA:
			away = halfup;
			break;
		case FPL_RND_TP:
			away = (uint64_t)(sgn == 0);
			break;
		case FPL_RND_TN:
			away = (uint64_t)(sgn != 0);
			break;
		case FPL_RND_OD:
			away = 1;
			break;
		case FPL_RND_SP: {
			const uint64_t R = p->sr_bits;
			/* only deep lanes are scaled: |x|/q < 1 keeps Td < 2^R */
			uint64_t Td = (uint64_t)(kb_dbl(a & (0 - deep)) * p->deep_scale);
			away = (Td + (fpl__draw(p->key, idx) >> (64 - R))) >> R;
			break;
		}
		case FPL_RND_SE:
			away = fpl__draw(p->key, idx) >> 63;
			break;
		default:
			away = 0;
			break;
		}
		r = (r & (deep - 1)) | (p->qsub_bits & (0 - (deep & away)));
		rest |= deep;
	}
	{
		uint64_t reach = (uint64_t)(r >= p->min_bits);
		uint64_t over = (uint64_t)(r > p->max_bits), zero = (uint64_t)(r == 0);
		*spc = (tiny & ((p->sub_fast ^ 1) | (deep & ((p->deep_ok ^ 1) | (normal ^ 1)))
				| ((p->tiny_before ^ 1) & reach)))
		       | over | (p->zero_special & zero);
	}
	*inexact = rest != 0;
	*tinyp = tiny;
	return r | sgn;
}

KB_ALWAYS_INLINE void kb_round_mode(const fpl_kparams *p, fpl_rnd rnd, int sub,
				    double *restrict y, const double *restrict x, size_t n,
				    uint64_t *restrict spc, int spc_in, uint64_t idx0,
				    fpl_kcounts *out)
{
	const fpl_kparams P = *p;	/* a local copy cannot alias y: loads hoist */
	size_t j;
	uint64_t inexact = 0, special = 0, tiny = 0, under = 0;

	for (j = 0; j < n; j++) {
		uint64_t sp, ix, tn, s2, ok, r;
		uint64_t u = ((const kb_u64a *)x)[j];
		if (sub)
			r = kb_round_lane_sub(&P, rnd, u, idx0 + j, &sp, &ix, &tn);
		else
			r = kb_round_lane(&P, rnd, u, idx0 + j, &sp, &ix, &tn);
		s2 = (spc_in ? spc[j] & 1 : 0) | sp;
		ok = ((s2 | (0 - s2)) >> 63) ^ 1;	/* s2 == 0, kept in 64-bit lanes */
		((kb_u64a *)y)[j] = r;
		spc[j] = s2;
		special += ok ^ 1;
		tiny += tn;
		inexact += ix & ok;
		under += tn & ix & ok;
	}
	out->special = (size_t)special;
	out->tiny = (size_t)tiny;
	out->inexact = (size_t)inexact;
	out->underflow = (size_t)under;	/* 0 unless sub: tiny lanes are marked */
	out->overflow = out->saturated = 0;	/* overflows are marked */
}

#define KB_CASE(M) \
	case M: \
		if (sub) \
			kb_round_mode(p, M, 1, y, x, n, spc, spc_in, idx0, out); \
		else if (spc_in) \
			kb_round_mode(p, M, 0, y, x, n, spc, 1, idx0, out); \
		else \
			kb_round_mode(p, M, 0, y, x, n, spc, 0, idx0, out); \
		return

static void kb_round(const fpl_kparams *p, double *y, const double *x, size_t n,
		     uint64_t *spc, int spc_in, int sub, uint64_t idx0, fpl_kcounts *out)
{
	switch (p->rnd) {
	KB_CASE(FPL_RND_NE);
	KB_CASE(FPL_RND_NA);
	KB_CASE(FPL_RND_NZ);
	KB_CASE(FPL_RND_TP);
	KB_CASE(FPL_RND_TN);
	KB_CASE(FPL_RND_TZ);
	KB_CASE(FPL_RND_OD);
	KB_CASE(FPL_RND_SP);
	KB_CASE(FPL_RND_SE);
	default:
		memset(out, 0, sizeof *out);
		return;
	}
}

/* ---- exact-to-odd intermediates ------------------------------------ */

/* Is x outside the operand window (zero is inside)? */
KB_ALWAYS_INLINE int kb_out(const fpl_kparams *p, double x)
{
	uint64_t a = kb_bits(x) & ~KB_SIGN;
	return a != 0 && (a < p->lo_bits || a > p->hi_bits);
}

/* RO(exact) from h = RN(exact) and the sign of exact - h, given as a
 * double e (only its sign and zeroness matter). */
KB_ALWAYS_INLINE double kb_odd(double h, double e)
{
	uint64_t u = kb_bits(h), sgn = u & KB_SIGN, a = u ^ sgn;
	uint64_t below = (uint64_t)(e != 0 && ((kb_bits(e) & KB_SIGN) != sgn));
	a -= below;
	a |= (uint64_t)(e != 0);
	return kb_dbl(a | sgn);
}

/* TwoProduct error: a*b - RN(a*b), exact in the window. */
KB_ALWAYS_INLINE double kb_mul_err(double a, double b, double p)
{
#ifdef KERNEL_HAVE_FMA
	return __builtin_fma(a, b, -p);
#else
	/* Dekker: split each factor into 26-bit halves, exact partial products. */
	const double c = 134217729.0;	/* 2^27 + 1 */
	double ta = c * a, ah = ta - (ta - a), al = a - ah;
	double tb = c * b, bh = tb - (tb - b), bl = b - bh;
	return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

static void kb_odd_add(const fpl_kparams *pp, double *t, const double *a, const double *b,
		       const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	(void)c;
	for (j = 0; j < n; j++) {
		double x = a[j], y = b[j], s = x + y, bb = s - x;
		double e = (x - (s - bb)) + (y - bb);
		t[j] = kb_odd(s, e);
		spc[j] = (uint64_t)(kb_out(p, x) | kb_out(p, y) | (s == 0));
	}
}

static void kb_odd_sub(const fpl_kparams *pp, double *t, const double *a, const double *b,
		       const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	(void)c;
	for (j = 0; j < n; j++) {
		double x = a[j], y = -b[j], s = x + y, bb = s - x;
		double e = (x - (s - bb)) + (y - bb);
		t[j] = kb_odd(s, e);
		spc[j] = (uint64_t)(kb_out(p, x) | kb_out(p, y) | (s == 0));
	}
}

static void kb_odd_mul(const fpl_kparams *pp, double *t, const double *a, const double *b,
		       const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	(void)c;
	for (j = 0; j < n; j++) {
		double x = a[j], y = b[j], h = x * y;
		t[j] = kb_odd(h, kb_mul_err(x, y, h));
		spc[j] = (uint64_t)(kb_out(p, x) | kb_out(p, y));
	}
}

static void kb_odd_div(const fpl_kparams *pp, double *t, const double *a, const double *b,
		       const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	(void)c;
	for (j = 0; j < n; j++) {
		double x = a[j], y = b[j], q = x / y, ph = q * y;
		/* exact - q has the sign of (x - q*y) / y */
		double r = (x - ph) - kb_mul_err(q, y, ph);
		t[j] = kb_odd(q, y < 0 ? -r : r);
		spc[j] = (uint64_t)(kb_out(p, x) | kb_out(p, y) | (y == 0));
	}
}

static void kb_odd_sqrt(const fpl_kparams *pp, double *t, const double *a, const double *b,
			const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	(void)b;
	(void)c;
	for (j = 0; j < n; j++) {
		double x = a[j], s = __builtin_sqrt(x < 0 ? 0 : x), ph = s * s;
		double r = (x - ph) - kb_mul_err(s, s, ph);
		t[j] = kb_odd(s, r);
		spc[j] = (uint64_t)(kb_out(p, x) | (x < 0));
	}
}

static void kb_odd_fma(const fpl_kparams *pp, double *t, const double *a, const double *b,
		       const double *c, size_t n, uint64_t *spc)
{
	const fpl_kparams P = *pp, *p = &P;	/* local: no aliasing with t, spc */
	size_t j;
	for (j = 0; j < n; j++) {
		double x = a[j], y = b[j], z = c[j], h = x * y;
		double pe = kb_mul_err(x, y, h);	/* must be 0: product exact */
		double s = h + z, bb = s - h, e = (h - (s - bb)) + (z - bb);
		t[j] = kb_odd(s, e);
		spc[j] = (uint64_t)(kb_out(p, x) | kb_out(p, y) | kb_out(p, z) | (pe != 0)
				   | (s == 0));
	}
}

#ifndef KERNEL_STORE_STREAM
static void kb_store(double *dst, const double *src, size_t n)
{
	memcpy(dst, src, n * sizeof *src);
}
#define KERNEL_STORE_STREAM kb_store
#endif

#ifndef KERNEL_ROUND_DIRECT
#define KERNEL_ROUND_DIRECT NULL
#endif

const fpl_kernels KERNEL_SET = {
	KERNEL_NAME,
	kb_round,
	{ kb_odd_add, kb_odd_sub, kb_odd_mul, kb_odd_div, kb_odd_sqrt, kb_odd_fma },
	KERNEL_STORE_STREAM,
	KERNEL_ROUND_DIRECT,
};
