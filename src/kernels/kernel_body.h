/* SPDX-License-Identifier: MIT */
/*
 * kernels/kernel_body.h - the block kernels, written once in portable C
 * and compiled once per kernel set (round_ref.c for baseline x86-64,
 * x86/round_avx512.c with AVX-512 flags, where the loops vectorize).
 * The including file defines KERNEL_SET (the table's name) and, if it
 * has a hardware fma, KERNEL_HAVE_FMA.
 *
 * Rounding in the normal range.  For 2^emin <= |x| the quantum of |x| in
 * the target is 2^(E-m), i.e. the low s = 52-m bits of the binary64
 * encoding.  With a = the magnitude bits, adding an increment to a and
 * clearing the low s bits rounds, and a carry out of the fraction moves
 * into the exponent field, which is exactly the next binade: the binary64
 * encoding is monotonic.  ne adds half-1 plus the kept lsb, na half,
 * nz half-1, upward modes s ones; od sets the kept lsb when inexact; sp
 * adds one quantum iff T + r >= 2^R.  Tiny inputs, results above max,
 * inf and NaN are marked for the scalar engine.
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

/* One lane of rounding in the normal range; mode is a constant after
 * inlining.  *spc set for lanes the scalar path must redo. */
KB_ALWAYS_INLINE uint64_t kb_round_lane(const fpl_kparams *p, fpl_rnd rnd, uint64_t u,
					uint64_t idx, int *spc, int *inexact)
{
	const int s = p->s;
	const uint64_t mask = (1ull << s) - 1, half = 1ull << (s - 1);
	uint64_t sgn = u & KB_SIGN, a = u ^ sgn, rest = a & mask, tr = a & ~mask, r;

	switch (rnd) {
	case FPL_RND_NE:
		r = (a + (half - 1) + ((a >> s) & 1)) & ~mask;
		break;
	case FPL_RND_NA:
		r = (a + half) & ~mask;
		break;
	case FPL_RND_NZ:
		r = (a + (half - 1)) & ~mask;
		break;
	case FPL_RND_TP:
		r = sgn ? tr : (a + mask) & ~mask;
		break;
	case FPL_RND_TN:
		r = sgn ? (a + mask) & ~mask : tr;
		break;
	case FPL_RND_OD:
		r = tr | ((uint64_t)(rest != 0) << s);
		break;
	case FPL_RND_SP: {
		const int R = p->sr_bits;
		uint64_t T = s >= R ? rest >> (s - R) : rest << (R - s);
		uint64_t rr = fpl__draw(p->key, idx) >> (64 - R);
		r = tr + (((T + rr) >> R) << s);
		break;
	}
	case FPL_RND_SE: {
		uint64_t d = fpl__draw(p->key, idx) >> 63;
		r = tr + (((uint64_t)(rest != 0) & d) << s);
		break;
	}
	default:	/* tz */
		r = tr;
		break;
	}
	*spc = ((a != 0 || p->zero_special) && a < p->min_bits) || r > p->max_bits;
	*inexact = rest != 0;
	return r | sgn;
}

KB_ALWAYS_INLINE size_t kb_round_mode(const fpl_kparams *p, fpl_rnd rnd, double *restrict y,
				      const double *restrict x, size_t n, uint64_t *restrict spc,
				      int spc_in, uint64_t idx0, size_t *nspc)
{
	const fpl_kparams P = *p;	/* a local copy cannot alias y: loads hoist */
	size_t j;
	uint64_t inexact = 0, special = 0;

	for (j = 0; j < n; j++) {
		int sp, ix;
		uint64_t r = kb_round_lane(&P, rnd, ((const kb_u64a *)x)[j], idx0 + j, &sp, &ix);
		uint64_t s2 = (spc_in ? spc[j] : 0) | (uint64_t)sp;
		((kb_u64a *)y)[j] = r;
		spc[j] = s2;
		special += s2;
		inexact += (uint64_t)ix & (s2 ^ 1);
	}
	*nspc = (size_t)special;
	return (size_t)inexact;
}

#define KB_CASE(M) \
	case M: \
		return spc_in ? kb_round_mode(p, M, y, x, n, spc, 1, idx0, nspc) \
			      : kb_round_mode(p, M, y, x, n, spc, 0, idx0, nspc)

static size_t kb_round(const fpl_kparams *p, double *y, const double *x, size_t n,
		       uint64_t *spc, int spc_in, uint64_t idx0, size_t *nspc)
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
		*nspc = 0;
		return 0;
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

const fpl_kernels KERNEL_SET = {
	KERNEL_NAME,
	kb_round,
	{ kb_odd_add, kb_odd_sub, kb_odd_mul, kb_odd_div, kb_odd_sqrt, kb_odd_fma },
	KERNEL_STORE_STREAM,
};
