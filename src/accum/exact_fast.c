/* SPDX-License-Identifier: MIT */
/*
 * exact_fast.c - the fixed-point fast path of the GEMM error reference
 * (error_gemm.c): a dot product whose terms all lie on one narrow grid is
 * summed exactly in a 128-bit integer instead of the 4608-bit fpl_exact,
 * and its readings (value, |y - e|, relative error, |A||B| + |C|) are
 * formed from that integer with fpl_exact's own rounding routines, so
 * every reported number is the one the long accumulator gives, bit for
 * bit.
 *
 * The grid.  A finite nonzero binary64 x is (-1)^s m 2^t with m odd
 * (t = its lowest set bit's weight) and |x| < 2^h (h = one above its
 * leading bit's weight).  For a row (of A, or of B transposed) whose
 * entries are all finite, let q = min t over its nonzero entries and w =
 * max h - q (q = w = 0 for a zero row).  Every entry is then X 2^q with
 * an integer |X| < 2^w: X is m shifted left by t - q >= 0, and |X| 2^q
 * = |x| < 2^(max h).  Rows with w <= 62 are stored as int64 X (exact).
 *
 * The certificate.  For output (i, j) with rows X (scale qa, width wa)
 * and Y (qb, wb), every product is X_k Y_k 2^s, s = qa + qb, with
 * |X_k Y_k| < 2^(wa + wb) <= 2^124, exact in a 128-bit signed product of
 * two int64.  With L = bit length of K (K <= 2^L), when wa + wb + L <=
 * 124 the sum E of the K integer products obeys |E| <= K 2^(wa+wb) <=
 * 2^124, and so does each partial sum: no int128 operation overflows,
 * and E 2^s is the exact value of the dot product.  The same holds for
 * G = sum |X_k Y_k| (|A||B|'s entry).  A sum (no B) is the case Y_k = 1,
 * wb = 0, s = qa.  C's entry c joins only when it lies on the grid: c = 0,
 * or finite with t_c >= s and h_c <= s + 124; then |C| < 2^124 and |E|,
 * G < 2^125.  Otherwise (a row not eligible, the width test failing, c
 * off the grid) the caller takes the long accumulator: the test is a
 * sufficient condition, never an approximation.
 *
 * The readings are those of fpl_exact (exact.c).  fpl__exact_window of a
 * value V 2^s, 0 < V < 2^127, is hi:lo = V shifted left so that its
 * leading bit (bit P) sits at bit 127, exp = s + P - 127, sticky 0: the
 * fixed-point integer of fpl_exact holds V 2^(s - LSB), whose bits below
 * the window are zero, and both of window's cases (P + s - LSB >= 127 or
 * not) give those numbers.  So the value and den are fpl__exact_nearest64
 * of these windows, as fpl_exact_value computes them.  For the result y
 * (finite), when y lies on the same grid (y = 0, or t_y >= s and h_y <=
 * s + 125), d = y - e = (Y - E) 2^s exactly with |Y - E| < 2^126, and
 * fpl_exact_abserr and fpl_exact_relerr are the rounding of d's window
 * and fpl__exact_relerr_parts of d's and e's windows, exactly what the
 * long accumulator hands the same routines.  Off the grid (a result with
 * finer bits, or far larger) e is rebuilt as an fpl_exact (two exact
 * additions) and the long readings are called.
 */
#include <string.h>

#include "engine/internal.h"
#include "accum/exact_internal.h"

typedef __int128 i128;

/* The lowest set bit's weight t and one above the leading bit's weight
 * h of a finite nonzero binary64 with bits u. */
static inline void grid_of(uint64_t u, int *t, int *h)
{
	unsigned be = (unsigned)(u >> 52) & 0x7ff;
	uint64_t m = (u & FPL__FRAC_MASK) | ((uint64_t)(be != 0) << 52);
	int q = (be ? (int)be : 1) - 1075;

	*t = q + __builtin_ctzll(m);
	*h = q + 64 - __builtin_clzll(m);
}

int fpl__exact_grid_rows(int64_t *v, int *q, int *w, const double *x, size_t rows, size_t K)
{
	size_t i, k;
	int ok = 0;

	for (i = 0; i < rows; i++) {
		const double *r = x + i * K;
		int tmin = 1 << 20, hmax = -(1 << 20), t, h, fin = 1;

		for (k = 0; k < K; k++) {
			uint64_t u = fpl__bits(r[k]);
			if ((u & FPL__EXP_MASK) == FPL__EXP_MASK) {
				fin = 0;
				break;
			}
			if (!(u & ~FPL__SIGN_BIT))
				continue;
			grid_of(u, &t, &h);
			tmin = t < tmin ? t : tmin;
			hmax = h > hmax ? h : hmax;
		}
		if (!fin || (hmax > tmin && hmax - tmin > 62)) {
			q[i] = 0;
			w[i] = -1;
			continue;
		}
		if (hmax < tmin)	/* a zero row */
			tmin = hmax = 0;
		q[i] = tmin;
		w[i] = hmax - tmin;
		ok = 1;
		for (k = 0; k < K; k++) {
			uint64_t u = fpl__bits(r[k]), m;
			unsigned be = (unsigned)(u >> 52) & 0x7ff;
			int64_t X;

			if (!(u & ~FPL__SIGN_BIT)) {
				v[i * K + k] = 0;
				continue;
			}
			m = (u & FPL__FRAC_MASK) | ((uint64_t)(be != 0) << 52);
			t = (be ? (int)be : 1) - 1075 + __builtin_ctzll(m);
			m >>= __builtin_ctzll(m);
			X = (int64_t)(m << (t - tmin));	/* < 2^62 */
			v[i * K + k] = u >> 63 ? -X : X;
		}
	}
	return ok;
}

/* Bit length of K: K <= 2^L. */
static int bitlen(size_t K)
{
	return K ? 64 - __builtin_clzll((unsigned long long)K) : 0;
}

/* y on the grid 2^s with |y| < 2^(s + hmax): its integer in *Y, 1; else 0. */
static int on_grid(double y, int s, int hmax, i128 *Y)
{
	uint64_t u = fpl__bits(y), m;
	unsigned be;
	int t, h;

	if (!(u & ~FPL__SIGN_BIT)) {
		*Y = 0;
		return 1;
	}
	if ((u & FPL__EXP_MASK) == FPL__EXP_MASK)
		return 0;
	grid_of(u, &t, &h);
	if (t < s || h > s + hmax)
		return 0;
	be = (unsigned)(u >> 52) & 0x7ff;
	m = (u & FPL__FRAC_MASK) | ((uint64_t)(be != 0) << 52);
	m >>= __builtin_ctzll(m);
	*Y = (i128)((fpl_u128)m << (t - s));
	if (u >> 63)
		*Y = -*Y;
	return 1;
}

/*
 * The narrow case, wx + wy + bitlength(K) <= 53 and -1074 <= s <= 1024 -
 * 53: every product a_k b_k of the binary64 rows is a multiple of 2^s
 * below 2^(s + wx + wy) in magnitude, and every partial sum of up to K of
 * them (or of their magnitudes) a multiple of 2^s below 2^(s + 53) <=
 * 2^1024: a finite binary64 value (2^s is not below binary64's quantum
 * 2^-1074), so each multiplication and addition is exact, in any order.
 * Eight independent sums let the compiler vectorize; the totals are
 * integers times 2^s below 2^53, converted exactly.
 */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
/* one clone per ISA, picked at load time (the sums are exact: every clone
 * gives the same bits) */
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void narrow_dot(const double *a, const double *b, size_t K, int s, i128 *E, i128 *G)
{
	double e[8] = { 0 }, g[8] = { 0 }, te = 0, tg = 0;
	size_t k, l;

	for (k = 0; k + 8 <= K; k += 8)
		for (l = 0; l < 8; l++) {
			double p = b ? a[k + l] * b[k + l] : a[k + l];
			e[l] += p;
			g[l] += __builtin_fabs(p);
		}
	for (; k < K; k++) {
		double p = b ? a[k] * b[k] : a[k];
		e[0] += p;
		g[0] += __builtin_fabs(p);
	}
	for (l = 0; l < 8; l++) {
		te += e[l];
		tg += g[l];
	}
	*E = (i128)(int64_t)__builtin_ldexp(te, -s);
	*G = (i128)(int64_t)__builtin_ldexp(tg, -s);
}

int fpl__exact_grid_dot(fpl__grid_sum *g, const int64_t *x, int qx, int wx, const int64_t *y,
			int qy, int wy, const double *a, const double *b, size_t K, double c,
			int slack)
{
	fpl_u128 E = 0, N = 0;	/* wrapping sums: no overflow is UB, even
				 * under a wrong certificate (the tests') */
	i128 C;
	size_t k;

	if (wx < 0 || (y && wy < 0))
		return 0;
	if (!y)
		qy = wy = 0;
	if (wx + wy + bitlen(K) > 124 + slack)
		return 0;
	g->s = qx + qy;
	if (!on_grid(c, g->s, 124, &C))
		return 0;
	if (wx + wy + bitlen(K) <= 53 + slack && g->s >= -1074 && g->s <= 1024 - 53) {
		i128 e, m;

		narrow_dot(a, y ? b : NULL, K, g->s, &e, &m);
		g->E = e + C;
		g->G = m + (C < 0 ? -C : C);
		return 1;
	}
	if (y)
		for (k = 0; k < K; k++) {
			i128 p = (i128)x[k] * y[k];
			/* the negative products, branch-free: signs are random */
			i128 neg = -(i128)(uint64_t)(((uint64_t)(x[k] ^ y[k])) >> 63);
			E += (fpl_u128)p;
			N += (fpl_u128)(p & neg);
		}
	else
		for (k = 0; k < K; k++) {
			E += (fpl_u128)(i128)x[k];
			N += (fpl_u128)(i128)(x[k] < 0 ? x[k] : 0);
		}
	E += (fpl_u128)C;
	N += (fpl_u128)(C < 0 ? C : 0);
	g->E = (i128)E;
	g->G = (i128)(E - 2 * N);	/* sum of |terms|: positives - negatives */
	return 1;
}

/* The window of |V| 2^s (V != 0, |V| < 2^127): see the header comment. */
static void window(fpl_u128 V, int s, int64_t *exp, uint64_t *hi, uint64_t *lo)
{
	int P = 127 - fpl__clz128(V);

	V <<= 127 - P;
	*hi = (uint64_t)(V >> 64);
	*lo = (uint64_t)V;
	*exp = (int64_t)s + P - 127;
}

/* fpl_exact_value of V 2^s. */
static double value(i128 V, int s)
{
	uint64_t hi, lo;
	int64_t exp;

	if (V == 0)
		return fpl__exact_nearest64(0, FPL_EXACT_LSB, 0, 0, 0);
	window(V < 0 ? (fpl_u128)-V : (fpl_u128)V, s, &exp, &hi, &lo);
	return fpl__exact_nearest64(V < 0, exp, hi, lo, 0);
}

double fpl__grid_value(const fpl__grid_sum *g)
{
	return value(g->E, g->s);
}

double fpl__grid_den(const fpl__grid_sum *g)
{
	return value(g->G, g->s);
}

void fpl__grid_to_exact(const fpl__grid_sum *g, fpl_exact *e)
{
	fpl_exact_init(e);
	fpl__exact_add_u128(e, g->E < 0 ? (fpl_u128)-g->E : (fpl_u128)g->E, g->E < 0, g->s);
}

void fpl__grid_errors(const fpl__grid_sum *g, double y, double *abserr, double *rel)
{
	uint64_t dhi, dlo, ehi, elo;
	int64_t dx, ex;
	i128 Y, D;

	if (!on_grid(y, g->s, 125, &Y)) {
		fpl_exact e;

		fpl__grid_to_exact(g, &e);
		*abserr = fpl_exact_abserr(&e, y);
		*rel = fpl_exact_relerr(&e, y);
		return;
	}
	D = Y - g->E;
	*abserr = value(D < 0 ? -D : D, g->s);
	if (D == 0) {
		*rel = 0.0;
		return;
	}
	if (g->E == 0) {
		*rel = fpl__from_bits(FPL__EXP_MASK);
		return;
	}
	window(D < 0 ? (fpl_u128)-D : (fpl_u128)D, g->s, &dx, &dhi, &dlo);
	window(g->E < 0 ? (fpl_u128)-g->E : (fpl_u128)g->E, g->s, &ex, &ehi, &elo);
	*rel = fpl__exact_relerr_parts(dx, dhi, dlo, ex, ehi);
}
