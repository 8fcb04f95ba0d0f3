/* SPDX-License-Identifier: MIT */
/*
 * reduce_ref.c - fpl_reduce_reference: the reductions of reduce.h on the
 * real numbers given, without MPFR, correctly rounded to binary64
 * (nearest-even) or within a stated bound.  u = 2^-53 below.
 *
 * sum      exact (fpl_exact), rounded once: correctly rounded.
 * mean     the exact sum V = v * 2^-2176 (v an integer of 72 limbs),
 *          |v| divided by n in long division: v = q*n + r; the value is
 *          (q + r/n) * 2^-2176, and q has more than 128 bits whenever
 *          V != 0 (V is a nonzero multiple of 2^-1074, so |v| >= 2^1102,
 *          q >= 2^1038), so q's leading 128 bits, with sticky for the
 *          bits below and for r != 0, round once (fpl_round_parts):
 *          correctly rounded.
 * var      exactly (n*sum x^2 - (sum x)^2) / (n*d), d = n or n-1: with P
 *          = p * 2^-2176 the exact sum of squares and V as above, the
 *          numerator is N * 2^-4352 with N = n*p*2^2176 - v^2, an integer
 *          of at most ~105 limbs computed exactly (schoolbook square,
 *          shift, subtract; N >= 0 since it is n^2 times a variance).
 *          N / n / d by two long divisions (floor(floor(N/n)/d) =
 *          floor(N/(n d))), remainders into sticky, rounded once:
 *          correctly rounded, overflow to +inf included (a nonzero N
 *          is a multiple of 2^2204, as p is of 2^28 and v of 2^1102, so
 *          the quotient has far more than 128 bits and the remainders lie
 *          below the window).  (No two-pass
 *          and no error bound needed: the cost is one 50x50-limb square.)
 * norm2    sqrt(P): P's leading 128 bits W (2^127 <= W < 2^128) and its
 *          exponent e, made even (W >>= 1, the lost bit into sticky);
 *          s = floor(sqrt(W)) by a binary64 estimate, one Newton step and
 *          exact integer correction; sqrt(P) = (s + f) 2^(e/2) with
 *          0 <= f < 1, f = 0 iff W = s^2 and no bit of P was lost.  s
 *          has 64 bits (s >= 2^63), so rounding to 53 bits sees s and
 *          "f > 0" only: correctly rounded.
 * softmax, logsumexp  in double-word arithmetic (Joldes, Muller, Popescu,
 *          "Tight and rigorous error bounds for basic building blocks of
 *          double-word arithmetic", ACM TOMS 2017: accurate dw+dw 3u^2,
 *          dw*dw 5u^2, dw*fp 2u^2, dw/fp 3u^2, dw/dw 15u^2, all with FMA).
 *   M = max x_k; d_k = x_k - M is exact as a double-word (2Sum); terms
 *   with d_k < -900 (e_k < 2^-1298) are dropped.
 *   exp(d): k = round(d/ln2), r = d - k ln2 with ln2 = L1+L2+L3 (L1 of 42
 *   bits, so k*L1 is exact; the rest of ln2 is below 2^-156), |r| <=
 *   0.35, absolute error of r below 2^-104; exp(r) = sum_{j<=24} r^j/j!
 *   by Horner (truncation below 2^-109; the 1/j! as dw quotients, error
 *   3j u^2 on c_j): an error of 8u^2 at Horner step i reaches the result
 *   times |r|^i e^|r|, so the total is below 8u^2 e^0.35 / (1 - 0.35) /
 *   e^-0.35 < 25u^2 relative; exp(d) = exp(r) 2^k within 2^-100 relative.
 *   S = sum e_k >= 1 (the maximum gives exp(0) = 1 exactly) and T = S - 1
 *   are taken from an exact accumulator of the e_k as double-words
 *   (relative 2^-105), so both are within 2^-100 relative of their exact
 *   values, the dropped terms aside (below n 2^-1298 < 2^-1238 in all).
 *   log(S) = j ln2 + log(m), m = S 2^-j in [sqrt(1/2), sqrt(2)); log(m) =
 *   2 s sum_{i<=20} z^i/(2i+1), s = (m-1)/(m+1), z = s^2 <= 0.0295
 *   (truncation below 2^-112; m - 1 exact, or T itself when j = 0, so no
 *   cancellation near S = 1): s within 18u^2, the series within 12u^2,
 *   the product 5u^2: log(m) within 35u^2; |j ln2| + |log m| <= 3 log S,
 *   so log S within 108u^2 < 2^-99 relative.
 *   softmax: y_k = e_k / S (dw/dw): within 25 + 25 + 15 + 1 < 2^-99
 *   relative, then rounded once.  logsumexp: M + log S formed exactly and
 *   rounded once; its error is that of log S, below 2^-99 log S: relative
 *   2^-99 when M >= 0 (log S <= the result), only absolute when M < 0
 *   and M + log S cancels.
 *   reduce.h promises 2^-90 (|v| for softmax, log S for logsumexp) plus
 *   2^-1200 absolute (the dropped terms), a margin of 9 bits.
 *
 * Specials: a NaN input gives NaN; sum and mean follow fpl_exact (one
 * kind of infinity gives it, both give NaN); var of an infinity is NaN;
 * norm2 of an infinity is +inf; logsumexp is +inf when some x_k = +inf,
 * -inf when all are -inf; softmax gives NaN at the +inf entries and +0
 * elsewhere when some x_k = +inf, NaN everywhere when all are -inf.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/reduce.h>

#include "accum/exact_internal.h"
#include "engine/internal.h"

/* ------------------------------------------------------------ big integers */

#define BIG 160			/* limbs: v^2 < 2^6600, n p 2^2176 < 2^6600 */
#define SCALE2 (2 * FPL_EXACT_LSB)

typedef struct big {
	uint64_t d[BIG];
	size_t n;		/* limbs in use (the top one may be 0) */
} big;

static void big_trim(big *a)
{
	while (a->n && !a->d[a->n - 1])
		a->n--;
}

/* |value| of e as an integer (the value is a * 2^FPL_EXACT_LSB). */
static void big_from_exact(big *a, const fpl_exact *e)
{
	fpl_exact t = *e;

	if (fpl_exact_sign(&t) < 0)
		fpl_exact_neg(&t);
	memset(a, 0, sizeof *a);
	memcpy(a->d, t.limb, sizeof t.limb);
	a->n = FPL_EXACT_LIMBS;
	big_trim(a);
}

/* a /= q in place; returns the remainder. */
static uint64_t big_div(big *a, uint64_t q)
{
	fpl_u128 r = 0;
	size_t i;

	for (i = a->n; i-- > 0;) {
		fpl_u128 cur = (r << 64) | a->d[i];
		a->d[i] = (uint64_t)(cur / q);
		r = cur % q;
	}
	big_trim(a);
	return (uint64_t)r;
}

/* r = a * a (r may not alias a). */
static void big_square(big *r, const big *a)
{
	size_t i, j;

	memset(r, 0, sizeof *r);
	for (i = 0; i < a->n; i++) {
		fpl_u128 carry = 0;
		for (j = 0; j < a->n; j++) {
			fpl_u128 t = (fpl_u128)a->d[i] * a->d[j] + r->d[i + j] + carry;
			r->d[i + j] = (uint64_t)t;
			carry = t >> 64;
		}
		r->d[i + a->n] = (uint64_t)carry;
	}
	r->n = 2 * a->n;
	big_trim(r);
}

/* a = a * q * 2^(64 s) */
static void big_mul_shift(big *a, uint64_t q, size_t s)
{
	fpl_u128 carry = 0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		fpl_u128 t = (fpl_u128)a->d[i] * q + carry;
		a->d[i] = (uint64_t)t;
		carry = t >> 64;
	}
	a->d[a->n++] = (uint64_t)carry;
	memmove(a->d + s, a->d, a->n * sizeof a->d[0]);
	memset(a->d, 0, s * sizeof a->d[0]);
	a->n += s;
	big_trim(a);
}

/* a -= b, for a >= b; returns 1 when b > a (a is then garbage). */
static int big_sub(big *a, const big *b)
{
	uint64_t borrow = 0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		uint64_t bi = i < b->n ? b->d[i] : 0;
		uint64_t t = a->d[i] - bi - borrow;
		borrow = (a->d[i] < bi) || (a->d[i] - bi < borrow);
		a->d[i] = t;
	}
	big_trim(a);
	return borrow || b->n > BIG;
}

/* Bits pos .. pos+63 of a (zeros outside). */
static uint64_t big_bits(const big *a, int64_t pos)
{
	size_t q;
	unsigned r;
	uint64_t lo, hi;

	if (pos <= -64)
		return 0;
	if (pos < 0)
		return big_bits(a, 0) << -pos;
	q = (size_t)pos / 64;
	r = (unsigned)(pos % 64);
	lo = q < a->n ? a->d[q] : 0;
	hi = q + 1 < a->n ? a->d[q + 1] : 0;
	return r ? (lo >> r) | (hi << (64 - r)) : lo;
}

/* Any bit of a below pos? */
static int big_sticky(const big *a, int64_t pos)
{
	size_t q, i;

	if (pos <= 0)
		return 0;
	q = (size_t)pos / 64;
	for (i = 0; i < q && i < a->n; i++)
		if (a->d[i])
			return 1;
	return q < a->n && (a->d[q] & ((1ull << (pos % 64)) - 1));
}

static double round64(int neg, int64_t exp, uint64_t hi, uint64_t lo, int sticky)
{
	fpl_format f;
	fpl_state s;
	unsigned fl = 0;

	fpl_format_ieee(&f, 11, 52);
	fpl_state_init(&s, 0);
	return fpl__round_parts_ix(&f, neg, exp, hi, lo, sticky, FPL_RND_NE, &s, 0, &fl);
}

/* (a + t) * 2^scale rounded to binary64, t in [0, 1), nonzero iff sticky. */
static double big_round(const big *a, int64_t scale, int neg, int sticky)
{
	int64_t top;

	if (!a->n)
		return round64(neg, scale, 0, 0, sticky);
	top = 64 * (int64_t)(a->n - 1) + 63 - __builtin_clzll(a->d[a->n - 1]);
	return round64(neg, scale + top - 127, big_bits(a, top - 63), big_bits(a, top - 127),
		       sticky || big_sticky(a, top - 127));
}

/* ------------------------------------------------------------ exact ones */

static double ref_mean(const fpl_exact *V, size_t n)
{
	big a;
	uint64_t r;

	if (V->nan || V->pinf || V->ninf)
		return fpl_exact_value(V);	/* NaN or the infinity */
	big_from_exact(&a, V);
	r = big_div(&a, n);
	return big_round(&a, FPL_EXACT_LSB, fpl_exact_sign(V) < 0, r != 0);
}

static double ref_var(const fpl_exact *V, const fpl_exact *P, size_t n, size_t d)
{
	static const size_t shift = -FPL_EXACT_LSB / 64;	/* 2176 = 34 * 64 */
	big v, v2, np;	/* 3 x 1280 bytes */
	uint64_t r1, r2;

	big_from_exact(&v, V);
	big_square(&v2, &v);
	big_from_exact(&np, P);
	big_mul_shift(&np, n, shift);
	if (big_sub(&np, &v2))
		return NAN;	/* impossible: N = n^2 var >= 0 */
	r1 = big_div(&np, n);
	r2 = big_div(&np, d);
	return big_round(&np, SCALE2, 0, r1 || r2);
}

/* floor(sqrt(w)), 2^126 <= w < 2^128. */
static uint64_t isqrt128(fpl_u128 w)
{
	double e = sqrt((double)w);
	fpl_u128 r = e >= 0x1p64 ? ~(uint64_t)0 : (uint64_t)e;

	r = (r + w / r) >> 1;
	if (r > ~(uint64_t)0)
		r = ~(uint64_t)0;
	while (r * r > w)
		r--;
	while (r < ~(uint64_t)0 && (r + 1) * (r + 1) <= w)
		r++;
	return (uint64_t)r;
}

static double ref_norm2(const fpl_exact *P)
{
	uint64_t hi, lo, s;
	int64_t e;
	int neg, sticky;
	fpl_u128 w;

	if (P->nan || P->pinf)
		return fpl_exact_value(P);	/* NaN or +inf */
	if (!fpl__exact_window(P, &neg, &e, &hi, &lo, &sticky))
		return 0.0;
	w = ((fpl_u128)hi << 64) | lo;
	if (e & 1) {
		sticky |= (int)(w & 1);
		w >>= 1;
		e++;
	}
	s = isqrt128(w);
	sticky |= (fpl_u128)s * s != w;
	return round64(0, e / 2 - 64, s, 0, sticky);
}

/* ------------------------------------------------------------ double-word */

typedef struct dw {
	double h, l;
} dw;

static dw fast2sum(double a, double b)
{
	dw r;
	r.h = a + b;
	r.l = b - (r.h - a);
	return r;
}

static dw two_sum(double a, double b)
{
	dw r;
	double a1, b1;
	r.h = a + b;
	a1 = r.h - b;
	b1 = r.h - a1;
	r.l = (a - a1) + (b - b1);
	return r;
}

static dw two_prod(double a, double b)
{
	dw r;
	r.h = a * b;
	r.l = fma(a, b, -r.h);
	return r;
}

/* AccurateDWPlusDW: 3u^2 */
static dw dw_add(dw x, dw y)
{
	dw s = two_sum(x.h, y.h), t = two_sum(x.l, y.l), v;
	v = fast2sum(s.h, s.l + t.h);
	return fast2sum(v.h, t.l + v.l);
}

/* DWTimesDW with FMA: 5u^2 */
static dw dw_mul(dw x, dw y)
{
	dw c = two_prod(x.h, y.h);
	double t = fma(x.l, y.h, fma(x.h, y.l, x.l * y.l));
	return fast2sum(c.h, c.l + t);
}

/* DWTimesFP with FMA: 2u^2 */
static dw dw_mul_d(dw x, double y)
{
	dw c = two_prod(x.h, y);
	return fast2sum(c.h, fma(x.l, y, c.l));
}

/* DWDivFP: 3u^2 */
static dw dw_div_d(dw x, double y)
{
	double th = x.h / y;
	dw p = two_prod(th, y);
	double d = ((x.h - p.h) - p.l) + x.l;
	return fast2sum(th, d / y);
}

/* DWDivDW: 15u^2 */
static dw dw_div(dw x, dw y)
{
	double th = x.h / y.h;
	dw r = dw_mul_d(y, th);
	double d = (x.h - r.h) + (x.l - r.l);
	return fast2sum(th, d / y.h);
}

static dw dw_of(double h)
{
	dw r = { h, 0.0 };
	return r;
}

#define L1 0x1.62e42fefa38p-1
#define L2 0x1.ef35793c7673p-45
#define L3 0x1.f97b57a079a19p-103
#define INV_LN2 0x1.71547652b82fep+0
#define SQRT2 0x1.6a09e667f3bcdp+0
#define EXP_N 24
#define LOG_N 20
#define DROP (-900.0)

typedef struct coef {
	dw e[EXP_N + 1];	/* 1/j! */
	dw l[LOG_N + 1];	/* 1/(2i+1) */
} coef;

static void coef_init(coef *c)
{
	int j;

	c->e[0] = dw_of(1.0);
	for (j = 1; j <= EXP_N; j++)
		c->e[j] = dw_div_d(c->e[j - 1], (double)j);
	for (j = 0; j <= LOG_N; j++)
		c->l[j] = dw_div_d(dw_of(1.0), (double)(2 * j + 1));
}

/* k ln2 as a double-word (|k| < 2^11). */
static dw k_ln2(double k)
{
	return dw_add(dw_add(dw_of(k * L1), two_prod(k, L2)), dw_of(k * L3));
}

/* The coefficient table, filled once. */
static coef cf;
static pthread_once_t cf_once = PTHREAD_ONCE_INIT;

static void cf_fill(void)
{
	coef_init(&cf);
}

static const coef *coefs(void)
{
	pthread_once(&cf_once, cf_fill);
	return &cf;
}

/* exp(d) = m 2^k, d a double-word in [-900, 0]. */
static dw dw_exp(dw d, int *k)
{
	const coef *c = coefs();
	double kd = nearbyint(d.h * INV_LN2);
	dw r = dw_add(d, k_ln2(-kd)), p = c->e[EXP_N];
	int j;

	for (j = EXP_N - 1; j >= 0; j--)
		p = dw_add(dw_mul(p, r), c->e[j]);
	*k = (int)kd;
	return p;
}

/* log(S), S = 1 + T >= 1 given as S and T, both double-words. */
static dw dw_log(dw S, dw T)
{
	const coef *c = coefs();
	int j = ilogb(S.h), i;
	dw m, num, den, s, z, p;

	m.h = ldexp(S.h, -j);
	m.l = ldexp(S.l, -j);
	if (m.h > SQRT2) {
		m.h *= 0.5;
		m.l *= 0.5;
		j++;
	}
	num = j == 0 ? T : two_sum(m.h - 1.0, m.l);
	den = dw_add(m, dw_of(1.0));
	s = dw_div(num, den);
	z = dw_mul(s, s);
	p = c->l[LOG_N];
	for (i = LOG_N - 1; i >= 0; i--)
		p = dw_add(dw_mul(p, z), c->l[i]);
	p = dw_mul(s, p);
	p.h *= 2;
	p.l *= 2;
	return j ? dw_add(k_ln2((double)j), p) : p;
}

/* e += m 2^k exactly (k >= -1300: both parts stay normal after scaling). */
static void add_scaled(fpl_exact *e, dw m, int k)
{
	fpl_exact_add_product(e, ldexp(m.h, k + 600), 0x1p-600);
	fpl_exact_add_product(e, ldexp(m.l, k + 600), 0x1p-600);
}

/* The exact accumulator's value as a double-word. */
static dw exact_dw(const fpl_exact *e)
{
	fpl_exact t = *e;
	dw r;

	r.h = fpl_exact_value(&t);
	fpl_exact_add(&t, -r.h);
	r.l = fpl_exact_value(&t);
	return r;
}

/* M, and the exps m_k 2^k_k (m NULL: dropped); S and T = S - 1. */
typedef struct expsum {
	double M;
	dw S, T;
} expsum;

static void exps(expsum *E, size_t n, const double *x, ptrdiff_t incx, dw *m, int *kk)
{
	fpl_exact acc;
	size_t k;

	fpl_exact_init(&acc);
	for (k = 0; k < n; k++) {
		double xk = x[(ptrdiff_t)k * incx], dh = xk - E->M;
		m[k].h = m[k].l = 0.0;
		kk[k] = 0;
		if (!(dh >= DROP))
			continue;
		m[k] = dw_exp(two_sum(xk, -E->M), &kk[k]);
		add_scaled(&acc, m[k], kk[k]);
	}
	E->S = exact_dw(&acc);
	fpl_exact_add(&acc, -1.0);
	E->T = exact_dw(&acc);
}

/* max, NaN when any is NaN. */
static double maxof(size_t n, const double *x, ptrdiff_t incx)
{
	double M = -INFINITY;
	size_t k;

	for (k = 0; k < n; k++) {
		double v = x[(ptrdiff_t)k * incx];
		if (isnan(v))
			return NAN;
		if (v > M)
			M = v;
	}
	return M;
}

static int ref_soft(double *out, fpl_reduce_op op, size_t n, const double *x, ptrdiff_t incx)
{
	expsum E;
	dw *m;
	int *kk;
	size_t k;

	E.M = maxof(n, x, incx);
	if (isnan(E.M) || isinf(E.M)) {
		for (k = 0; k < fpl_reduce_outputs(op, n); k++) {
			double v = x[(ptrdiff_t)k * incx];
			if (op == FPL_REDUCE_LOGSUMEXP)
				out[k] = E.M;
			else
				out[k] = E.M == INFINITY && v != INFINITY ? 0.0 : NAN;
		}
		return 0;
	}
	m = malloc(n * sizeof *m);
	kk = malloc(n * sizeof *kk);
	if (!m || !kk) {
		free(m);
		free(kk);
		return FPL_ENOMEM;
	}
	exps(&E, n, x, incx, m, kk);
	if (op == FPL_REDUCE_LOGSUMEXP) {
		fpl_exact r;
		dw L = dw_log(E.S, E.T);
		fpl_exact_init(&r);
		fpl_exact_add(&r, E.M);
		fpl_exact_add(&r, L.h);
		fpl_exact_add(&r, L.l);
		out[0] = fpl_exact_value(&r);
	} else {
		for (k = 0; k < n; k++) {
			fpl_exact r;
			fpl_exact_init(&r);
			if (m[k].h != 0)
				add_scaled(&r, dw_div(m[k], E.S), kk[k]);
			out[k] = fpl_exact_value(&r);
		}
	}
	free(m);
	free(kk);
	return 0;
}

int fpl_reduce_reference(double *out, fpl_reduce_op op, unsigned flags, size_t n,
			 const double *x, ptrdiff_t incx)
{
	fpl_exact V, P;
	size_t k, d;

	if (!out || (n && !x) || (unsigned)op >= FPL_REDUCE_COUNT || (flags & ~FPL_REDUCE_SAMPLE))
		return FPL_EINVAL;
	if (op == FPL_REDUCE_SOFTMAX || op == FPL_REDUCE_LOGSUMEXP) {
		if (!n) {
			if (op == FPL_REDUCE_LOGSUMEXP)
				out[0] = NAN;
			return 0;
		}
		return ref_soft(out, op, n, x, incx);
	}
	fpl_exact_init(&V);
	fpl_exact_init(&P);
	for (k = 0; k < n; k++) {
		double v = x[(ptrdiff_t)k * incx];
		fpl_exact_add(&V, v);
		fpl_exact_add_product(&P, v, v);
	}
	d = n - ((flags & FPL_REDUCE_SAMPLE) ? 1 : 0);
	switch (op) {
	case FPL_REDUCE_SUM:
		out[0] = fpl_exact_value(&V);
		break;
	case FPL_REDUCE_MEAN:
		out[0] = n ? ref_mean(&V, n) : NAN;
		break;
	case FPL_REDUCE_NORM2:
		out[0] = ref_norm2(&P);
		break;
	default:	/* var, var_welford */
		if (!n || !d || V.nan || V.pinf || V.ninf) {
			out[0] = NAN;
			break;
		}
		out[0] = ref_var(&V, &P, n, d);
		break;
	}
	return 0;
}
