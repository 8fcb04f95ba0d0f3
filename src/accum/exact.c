/* SPDX-License-Identifier: MIT */
/*
 * exact.c - the exact accumulator (fplab/exact.h): sums of binary64 values
 * and of exact products of two, held as one fixed-point integer.
 *
 * Representation.  The finite part of the value is the 4608-bit two's
 * complement integer limb[71..0] times 2^LSB, LSB = FPL_EXACT_LSB = -2176
 * = -34 * 64, so bit 0 of limb 34 weighs 2^0.
 *
 * Range argument.  A finite binary64 is x = s * 2^q with an integer
 * 0 <= s < 2^53 and -1074 <= q <= 971 (q = max(biased exponent, 1) - 1075).
 * A product of two is s_a s_b * 2^(q_a + q_b) with s_a s_b < 2^106 and
 * -2148 <= q_a + q_b <= 1942.  Every term is therefore an integer
 * multiple of 2^-2148, a multiple of 2^LSB (LSB <= -2148, rounded down to
 * a limb boundary), and below 2^(1942 + 106) = 2^2048 in magnitude: its
 * bits lie at positions 28 .. 4223 of the integer.  A sum of N <= 2^60
 * terms is below 2^(2048 + 60) = 2^2108, i.e. below bit 2108 + 2176 = 4284,
 * and the two's complement integer of 72 limbs holds every magnitude
 * below 2^4607: no sum of up to 2^60 terms overflows (the margin allows
 * some 2^380 terms; partial sums added with fpl_exact_add_exact count
 * with their terms).  Hence every operation here is exact.
 *
 * Adding one term.  The term's significand (53 or 106 bits) shifted by
 * pos mod 64 (< 64) spans at most 106 + 63 = 169 bits, so it touches the
 * three limbs k, k+1, k+2 from k = pos / 64 (k <= 4118 / 64 = 64 for a
 * product, 3147 / 64 = 49 for a binary64: k + 2 <= 66 < 72).  A carry (or
 * borrow, for a negative term) out of limb k+2 ripples only while the
 * limbs it meets are all ones (all zeros): amortized O(1) except when the
 * sum changes sign, where up to ~70 limbs flip.  Nothing scans the limbs
 * per term; reading the value (window, sign, rounding) scans them all.
 *
 * Reading.  Rounding needs at most 53 + 32 + 1 bits below the leading bit
 * and whether anything nonzero follows (ops.h, fpl_round_parts): a
 * 128-bit window from the leading bit of |value|, truncated, with sticky
 * = any lower bit set, is handed to the engine's fpl__round_parts_ix, the
 * one rounding routine.  fpl_exact_value is that rounding into fp64 in
 * nearest-even.  The NaN value is binary64's default NaN (x86: sign set,
 * quiet bit only), rounded by fpl_exact_round as fpl_round rounds it.
 */
#include <pthread.h>
#include <string.h>

#include "engine/internal.h"
#include "accum/exact_internal.h"

#define NL FPL_EXACT_LIMBS
#define DEFAULT_NAN 0xfff8000000000000ull

void fpl_exact_init(fpl_exact *e)
{
	memset(e, 0, sizeof *e);
}

/*
 * limb[] += m * 2^pos (neg = 0) or -= (neg = 1), m < 2^106, pos <= 4118.
 * The three words w = w2:w1:w0 are m << (pos mod 64).  Branch-free on the
 * sign: with mask = -neg, the term is w XOR mask plus neg in the three
 * limbs (the 192-bit two's complement ~w + 1; it does not wrap since w is
 * not 0) and mask sign-extended above them.  Adding that extension plus
 * the carry c out of limb k+2 changes the limbs above only when c != neg:
 * +1 rippling through all-ones limbs (c = 1, neg = 0), or -1 rippling
 * through zero limbs (c = 0, neg = 1); that is rare.
 */
static inline void add_at(fpl_exact *e, fpl_u128 m, unsigned pos, int neg)
{
	unsigned k = pos >> 6, s = pos & 63, i;
	uint64_t mask = 0 - (uint64_t)neg, *L = e->limb;
	fpl_u128 a = (fpl_u128)(uint64_t)m << s, b = (fpl_u128)(uint64_t)(m >> 64) << s, t;
	uint64_t w0 = (uint64_t)a, w1 = (uint64_t)(a >> 64) | (uint64_t)b, w2 = (uint64_t)(b >> 64);

	t = (fpl_u128)L[k] + (fpl_u128)(w0 ^ mask) + (fpl_u128)(uint64_t)neg;
	L[k] = (uint64_t)t;
	t = (fpl_u128)L[k + 1] + (w1 ^ mask) + (uint64_t)(t >> 64);
	L[k + 1] = (uint64_t)t;
	t = (fpl_u128)L[k + 2] + (w2 ^ mask) + (uint64_t)(t >> 64);
	L[k + 2] = (uint64_t)t;
	if (__builtin_expect((int)(t >> 64) != neg, 0)) {
		if (!neg)
			for (i = k + 3; i < NL && ++L[i] == 0; i++)
				;
		else
			for (i = k + 3; i < NL && L[i]-- == 0; i++)
				;
	}
}

/* An infinite term of sign `sign`, or a NaN term. */
static void add_special(fpl_exact *e, int nan, int sign)
{
	if (nan)
		e->nan++;
	else if (sign)
		e->ninf++;
	else
		e->pinf++;
}

/* max(biased exponent, 1): x = significand * 2^(that - 1075). */
static inline unsigned bexp(uint64_t u)
{
	unsigned be = (unsigned)(u >> 52) & 0x7ff;
	return be ? be : 1;
}

static inline uint64_t bsig(uint64_t u)
{
	return (u & FPL__FRAC_MASK) | ((uint64_t)((u & FPL__EXP_MASK) != 0) << 52);
}

void fpl_exact_add(fpl_exact *e, double x)
{
	uint64_t u = fpl__bits(x), s;

	if ((u & FPL__EXP_MASK) == FPL__EXP_MASK) {
		add_special(e, (u & FPL__FRAC_MASK) != 0, (int)(u >> 63));
		return;
	}
	s = bsig(u);
	if (s)	/* position q - LSB = bexp - 1075 + 2176 */
		add_at(e, s, bexp(u) + 1101, (int)(u >> 63));
}

/* inf * x, nan * x: IEEE's product of the specials (inf * 0 is invalid). */
static void add_special_product(fpl_exact *e, uint64_t ua, uint64_t ub)
{
	uint64_t ma = ua & ~FPL__SIGN_BIT, mb = ub & ~FPL__SIGN_BIT;

	if (ma > FPL__EXP_MASK || mb > FPL__EXP_MASK || ma == 0 || mb == 0)
		add_special(e, 1, 0);
	else
		add_special(e, 0, (int)((ua ^ ub) >> 63));
}

static inline void add_product_bits(fpl_exact *e, uint64_t ua, uint64_t ub)
{
	fpl_u128 m;

	if ((ua & FPL__EXP_MASK) == FPL__EXP_MASK || (ub & FPL__EXP_MASK) == FPL__EXP_MASK) {
		add_special_product(e, ua, ub);
		return;
	}
	m = (fpl_u128)bsig(ua) * bsig(ub);
	if (m)	/* position q_a + q_b - LSB = bexp_a + bexp_b - 2150 + 2176 */
		add_at(e, m, bexp(ua) + bexp(ub) + 26, (int)((ua ^ ub) >> 63));
}

void fpl_exact_add_product(fpl_exact *e, double a, double b)
{
	add_product_bits(e, fpl__bits(a), fpl__bits(b));
}

void fpl__exact_add_dot(fpl_exact *e, const double *a, const double *b, size_t n,
			size_t stride)
{
	size_t i;

	for (i = 0; i < n; i++)
		add_product_bits(e, fpl__bits(a[i]), fpl__bits(b[i * stride]));
}

void fpl__exact_add_dot_f32(fpl_exact *e, const float *a, const float *b, size_t n,
			    size_t stride)
{
	size_t i;

	for (i = 0; i < n; i++)
		add_product_bits(e, fpl__bits((double)a[i]), fpl__bits((double)b[i * stride]));
}

void fpl_exact_add_exact(fpl_exact *e, const fpl_exact *x)
{
	fpl_u128 t = 0;
	int i;

	for (i = 0; i < NL; i++) {
		t = (fpl_u128)e->limb[i] + x->limb[i] + (uint64_t)(t >> 64);
		e->limb[i] = (uint64_t)t;
	}
	e->nan += x->nan;
	e->pinf += x->pinf;
	e->ninf += x->ninf;
}

/* Two's complement negation of the limbs: ~v + 1. */
static void negate_limbs(uint64_t *dst, const uint64_t *src)
{
	uint64_t c = 1;
	int i;

	for (i = 0; i < NL; i++) {
		dst[i] = ~src[i] + c;
		c = c && dst[i] == 0;
	}
}

void fpl_exact_neg(fpl_exact *e)
{
	uint64_t t = e->pinf;

	negate_limbs(e->limb, e->limb);
	e->pinf = e->ninf;
	e->ninf = t;
}

static int is_negative(const fpl_exact *e)
{
	return (int)(e->limb[NL - 1] >> 63);
}

int fpl__exact_is_zero(const fpl_exact *e)
{
	int i;

	if (e->nan || e->pinf || e->ninf)
		return 0;
	for (i = 0; i < NL; i++)
		if (e->limb[i])
			return 0;
	return 1;
}

int fpl_exact_sign(const fpl_exact *e)
{
	int i;

	if (e->nan || (e->pinf && e->ninf))
		return 2;
	if (e->pinf || e->ninf)
		return e->pinf ? 1 : -1;
	if (is_negative(e))
		return -1;
	for (i = 0; i < NL; i++)
		if (e->limb[i])
			return 1;
	return 0;
}

/* The special value, when there is one: 1 and *x set, else 0. */
static int special_value(const fpl_exact *e, double *x)
{
	if (e->nan || (e->pinf && e->ninf))
		*x = fpl__from_bits(DEFAULT_NAN);
	else if (e->pinf || e->ninf)
		*x = fpl__from_bits(FPL__EXP_MASK | (e->ninf ? FPL__SIGN_BIT : 0));
	else
		return 0;
	return 1;
}

/*
 * The 128 bits of mag[] from bit P (the leading one) down, P >= 127:
 * bits low = P - 127 .. P, read from limbs q, q+1, q+2 (q = low / 64);
 * limb q+2 is only read when low is not a multiple of 64, hence low <
 * 64 * 70 and q + 2 <= 71.
 */
static void window_at(const uint64_t *mag, int P, uint64_t *hi, uint64_t *lo, int *sticky)
{
	int low = P - 127, q = low >> 6, r = low & 63, i;
	uint64_t l0 = mag[q], l1 = mag[q + 1];

	if (r == 0) {
		*lo = l0;
		*hi = l1;
	} else {
		uint64_t l2 = q + 2 < NL ? mag[q + 2] : 0;
		*lo = (l0 >> r) | (l1 << (64 - r));
		*hi = (l1 >> r) | (l2 << (64 - r));
	}
	*sticky = r && (l0 & ((1ull << r) - 1)) != 0;
	for (i = 0; i < q && !*sticky; i++)
		*sticky = mag[i] != 0;
}

int fpl__exact_window(const fpl_exact *e, int *negative, int64_t *exp, uint64_t *hi,
		      uint64_t *lo, int *sticky)
{
	uint64_t neg[NL];
	const uint64_t *mag = e->limb;
	int t, P;

	*negative = is_negative(e);
	if (*negative) {
		negate_limbs(neg, e->limb);
		mag = neg;
	}
	for (t = NL - 1; t >= 0 && !mag[t]; t--)
		;
	*hi = *lo = 0;
	*sticky = 0;
	*exp = FPL_EXACT_LSB;
	if (t < 0)
		return 0;
	P = 64 * t + 63 - __builtin_clzll(mag[t]);
	if (P >= 127) {
		window_at(mag, P, hi, lo, sticky);
		*exp = (int64_t)(P - 127) + FPL_EXACT_LSB;
	} else {	/* the whole value fits: shift it up to bit 127 */
		fpl_u128 v = (((fpl_u128)mag[1] << 64) | mag[0]) << (127 - P);
		*hi = (uint64_t)(v >> 64);
		*lo = (uint64_t)v;
		*exp = FPL_EXACT_LSB - (127 - P);
	}
	return 1;
}

double fpl__exact_round_ix(const fpl_exact *e, const fpl_format *f, fpl_rnd rnd,
			   const fpl_state *st, uint64_t idx, unsigned *fl)
{
	uint64_t hi, lo;
	int64_t exp;
	int neg, sticky;
	double x;

	if (special_value(e, &x))
		return fpl__round_ix(f, x, rnd, st, idx, fl);
	fpl__exact_window(e, &neg, &exp, &hi, &lo, &sticky);
	return fpl__round_parts_ix(f, neg, exp, hi, lo, sticky, rnd, st, idx, fl);
}

double fpl_exact_round(const fpl_exact *e, const fpl_format *f, fpl_rnd rnd, fpl_state *st)
{
	unsigned fl = 0;
	double r = fpl__exact_round_ix(e, f, rnd, st, st->counter++, &fl);

	fpl__commit(st, fl);
	return r;
}

/* ------------------------------------------------ binary64 readings */

static fpl_format fp64_format;
static fpl_state fp64_state;	/* read only once set (_ix rounding) */

static void fp64_init(void)
{
	fpl_format_lookup(&fp64_format, "fp64");
	fpl_state_init(&fp64_state, 0);
}

/*
 * (hi:lo + t) 2^exp (sticky: 0 < t < 1 ulp of the window) to nearest-even
 * binary64, once.  A normal result is rounded here directly: the leading
 * bit (bit 63 of hi) weighs 2^(exp + 127); with that in [-1022, 1022] the
 * 53 bits from it are hi >> 11, the half bit is bit 10 of hi and the
 * rest (bits 9..0, lo, sticky) decide ties; a carry out of 53 bits
 * moves the exponent up by one, at most to 1023: a finite normal value,
 * the one correctly rounded result, so the engine's rounding gives the
 * same bits.  Zero, subnormal and overflowing results go to the engine.
 */
double fpl__exact_nearest64(int neg, int64_t exp, uint64_t hi, uint64_t lo, int sticky)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned fl = 0;

	if ((hi >> 63) && exp + 127 >= -1022 && exp + 127 <= 1022) {
		uint64_t m = hi >> 11, half = (hi >> 10) & 1;
		uint64_t rest = (hi & 0x3ff) | lo | (uint64_t)sticky;
		int64_t e = exp + 127;

		m += half & (rest != 0 || (m & 1));
		if (m >> 53) {
			m >>= 1;
			e++;
		}
		return fpl__from_bits(((uint64_t)neg << 63) | ((uint64_t)(e + 1023) << 52)
				      | (m & FPL__FRAC_MASK));
	}
	pthread_once(&once, fp64_init);
	return fpl__round_parts_ix(&fp64_format, neg, exp, hi, lo, sticky, FPL_RND_NE, &fp64_state,
				   0, &fl);
}

double fpl_exact_value(const fpl_exact *e)
{
	uint64_t hi, lo;
	int64_t exp;
	int neg, sticky;
	double x;

	if (special_value(e, &x))
		return x;
	fpl__exact_window(e, &neg, &exp, &hi, &lo, &sticky);
	return fpl__exact_nearest64(neg, exp, hi, lo, sticky);
}

/*
 * The special cases shared by abserr and relerr: 1 and *r set when e or y
 * is NaN or infinite.
 */
static int err_special(const fpl_exact *e, double y, double *r)
{
	double v;
	int ve = special_value(e, &v);

	if (fpl__isnan(y) || (ve && fpl__isnan(v))) {
		*r = fpl__from_bits(DEFAULT_NAN & ~FPL__SIGN_BIT);
		return 1;
	}
	if (!ve && !fpl__isinf(y))
		return 0;
	*r = ve && fpl__bits(v) == fpl__bits(y) ? 0.0 : fpl__from_bits(FPL__EXP_MASK);
	return 1;
}

/* *d = |y - e| for a finite e and y (exact: one more term). */
static void abs_diff(const fpl_exact *e, double y, fpl_exact *d)
{
	*d = *e;
	fpl_exact_neg(d);
	fpl_exact_add(d, y);
	if (is_negative(d))
		fpl_exact_neg(d);
}

double fpl_exact_abserr(const fpl_exact *e, double y)
{
	fpl_exact d;
	double r;

	if (err_special(e, y, &r))
		return r;
	abs_diff(e, y, &d);
	return fpl_exact_value(&d);
}

/*
 * |d| / |e| from the two windows: |d| in [N, N+1) 2^xd with N the 128-bit
 * window, |e| in [M, M+1) 2^xe with M its top 64 bits (2^63 <= M).  So
 * the ratio lies within a factor (1 +- 2^-63) of N/M 2^(xd-xe), and N/M is
 * computed as a 128-bit truncated quotient with sticky, then rounded once
 * to nearest: an error below 0.5 ulp + 2^-63 relative < 0.51 ulp, hence
 * faithful (one of the two binary64 values around the true ratio).
 */
double fpl_exact_relerr(const fpl_exact *e, double y)
{
	uint64_t dhi, dlo, ehi, elo;
	int64_t dx, ex;
	int neg, dst, est;
	fpl_exact d;
	double r;

	if (err_special(e, y, &r))
		return r;
	abs_diff(e, y, &d);
	if (!fpl__exact_window(&d, &neg, &dx, &dhi, &dlo, &dst))
		return 0.0;
	if (!fpl__exact_window(e, &neg, &ex, &ehi, &elo, &est))
		return fpl__from_bits(FPL__EXP_MASK);	/* e = 0, y != 0 */
	return fpl__exact_relerr_parts(dx, dhi, dlo, ex, ehi);
}

/* (hi:lo) / d and the remainder, for hi < d (the quotient fits 64 bits). */
static inline uint64_t div128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem)
{
#if defined(__x86_64__)
	uint64_t q;

	__asm__("divq %4" : "=a"(q), "=d"(*rem) : "a"(lo), "d"(hi), "rm"(d) : "cc");
	return q;
#else
	fpl_u128 n = ((fpl_u128)hi << 64) | lo;

	*rem = (uint64_t)(n % d);
	return (uint64_t)(n / d);
#endif
}

double fpl__exact_relerr_parts(int64_t dx, uint64_t dhi, uint64_t dlo, int64_t ex, uint64_t ehi)
{
	uint64_t M = ehi, qh, ql, f, r;
	fpl_u128 Q, F;
	int dst;

	/* Q = N / M (2^63 <= Q < 2^65), R = N % M, F = (R 2^64) / M, in
	 * 64-bit divisions: N = dhi:dlo, dhi < 2M (M >= 2^63), so the high
	 * quotient word qh = dhi / M is 0 or 1 */
	qh = dhi >= M;
	ql = div128(dhi - (qh ? M : 0), dlo, M, &r);
	f = div128(r, 0, M, &r);	/* the next 64 bits: r < M */
	dst = r != 0;
	Q = ((fpl_u128)qh << 64) | ql;
	F = f;
	ex += 64;		/* |e| in [M, M+1) 2^ex */
	if (Q >> 64) {		/* 65 bits: keep 128 of Q:F */
		dst |= (int)(F & 1);
		F = (F >> 1) | ((fpl_u128)(Q & 1) << 63);
		Q >>= 1;
		dx += 1;
	}
	return fpl__exact_nearest64(0, dx - ex - 64, (uint64_t)Q, (uint64_t)F, dst);
}

void fpl__exact_add_u128(fpl_exact *e, fpl_u128 mag, int neg, int64_t exp)
{
	unsigned pos = (unsigned)(exp - FPL_EXACT_LSB);

	if ((uint64_t)mag)
		add_at(e, (uint64_t)mag, pos, neg);
	if (mag >> 64)
		add_at(e, mag >> 64, pos + 64, neg);
}
