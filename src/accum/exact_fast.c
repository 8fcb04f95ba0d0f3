/* SPDX-License-Identifier: MIT */
/*
 * exact_fast.c - the fast paths of the GEMM error reference (error_gemm.c).
 *
 * The grid path: a dot product whose terms all lie on one narrow grid is
 * summed exactly in a 128-bit integer instead of the 4608-bit fpl_exact
 * (or, narrower still, in binary64: narrow_dot and split_dot below prove
 * when that is exact), and its readings (value, |y - e|, relative error,
 * |A||B| + |C|) are formed from that integer with fpl_exact's own
 * rounding routines, so every reported number is the one the long
 * accumulator gives, bit for bit.  The compensated path (dot2 and
 * fpl__exact_cert_dot below) serves the outputs off the grid: it gives
 * exact bounds on e and g, and error_gemm.c's cert_output keeps its
 * readings only where the bounds determine them.
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
#include <math.h>
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

/* A row's description, gathered entry by entry (grid_add) in any order,
 * then finished (grid_end). */
typedef struct grid_acc {
	int tmin, hmax, hmin, pmax, fin;
} grid_acc;

static inline void grid_begin(grid_acc *g)
{
	g->tmin = 1 << 20;
	g->hmax = -(1 << 20);
	g->hmin = 1 << 20;
	g->pmax = 0;
	g->fin = 1;
}

/* 0 when u is a NaN or an infinity (the row is then not finite). */
static inline int grid_add(grid_acc *g, uint64_t u)
{
	int t, h;

	if ((u & FPL__EXP_MASK) == FPL__EXP_MASK) {
		g->fin = 0;
		return 0;
	}
	if (!(u & ~FPL__SIGN_BIT))
		return 1;
	grid_of(u, &t, &h);
	g->tmin = t < g->tmin ? t : g->tmin;
	g->hmax = h > g->hmax ? h : g->hmax;
	g->hmin = h < g->hmin ? h : g->hmin;
	g->pmax = h - t > g->pmax ? h - t : g->pmax;
	return 1;
}

/* The row's description; 1 when it is eligible for the grid path. */
static int grid_end(const grid_acc *g, fpl__grid_row *row)
{
	int tmin = g->tmin, hmax = g->hmax;

	row->p = g->pmax;
	row->fin = g->fin;
	row->hmin = g->hmin;
	row->hmax = hmax;
	row->t = hmax < tmin ? 0 : tmin;	/* exact_gemm.c's qa */
	if (!g->fin || (hmax > tmin && hmax - tmin > 62)) {
		row->q = 0;
		row->w = -1;
		return 0;
	}
	if (hmax < tmin)	/* a zero row */
		tmin = hmax = 0;
	row->q = tmin;
	row->w = hmax - tmin;
	return 1;
}

/*
 * The same descriptions eight lanes at a time, without branches, so that
 * the compiler can vectorize them: lane l takes the entries x[k*stride +
 * l], k < n.  Per entry (bits u, a = u without its sign): t and h as in
 * grid_of, from the exponent field be and the significand m (the hidden
 * bit when be > 0).  The weight of m's lowest set bit comes from the
 * binary64 d = (2^52 + L) - 2^52, L = m & -m the bit itself: 2^52 + L
 * is formed exactly as the integer sum of L and 2^52's bits (for L <
 * 2^52 it fills the significand; L = 2^52 carries into the exponent
 * field, giving 2^53), the subtraction is exact, so d = L and d's
 * exponent field is 1023 + ctz(m).  Of a
 * normal x, h = be - 1022; of a subnormal one, the same conversion of m
 * itself (< 2^52) gives its leading bit's weight.  Zeros, infinities and
 * NaNs leave the lanes' minima and maxima alone (they are selected out),
 * the latter set *bad.  Every operation is exact (integers, and binary64
 * values that are integers below 2^54): the lanes are the grid_add of
 * their entries, in any order.
 */
typedef struct grid_lanes {
	int64_t tmin[8], hmax[8], hmin[8], pmax[8];
	uint64_t bad[8];
} grid_lanes;

static void lanes_begin(grid_lanes *g)
{
	int l;

	for (l = 0; l < 8; l++) {
		g->tmin[l] = g->hmin[l] = 1 << 20;
		g->hmax[l] = -(1 << 20);
		g->pmax[l] = 0;
		g->bad[l] = 0;
	}
}

/* The exponent field of the binary64 (2^52 + x) - 2^52 = x, for x an
 * integer, 0 <= x <= 2^52 (0 gives 0): 2^52 + x by adding x to 2^52's
 * bits. */
static inline int64_t ilog_field(uint64_t x)
{
	return (int64_t)(fpl__bits(fpl__from_bits(x + 0x4330000000000000ull) - 0x1p52) >> 52);
}

#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void lanes_add(grid_lanes *g, const double *x, size_t n, size_t stride)
{
	int64_t tmin[8], hmax[8], hmin[8], pmax[8];
	uint64_t bad[8];
	size_t k;
	int l;

	memcpy(bad, g->bad, sizeof bad);
	memcpy(tmin, g->tmin, sizeof tmin);
	memcpy(hmax, g->hmax, sizeof hmax);
	memcpy(hmin, g->hmin, sizeof hmin);
	memcpy(pmax, g->pmax, sizeof pmax);
	for (k = 0; k < n; k++)
		for (l = 0; l < 8; l++) {
			uint64_t u, a, be, fr, m;
			int64_t t, h, sub, nz;

			memcpy(&u, x + k * stride + (size_t)l, sizeof u);
			a = u & ~FPL__SIGN_BIT;
			be = a >> 52;
			fr = a & FPL__FRAC_MASK;
			bad[l] |= (uint64_t)(be == 0x7ff);
			nz = (int64_t)(a != 0 && be != 0x7ff);
			sub = (int64_t)(be == 0);
			m = fr | ((uint64_t)(1 - sub) << 52);
			t = (sub ? 1 : (int64_t)be) - 1075 + ilog_field(m & (0 - m)) - 1023;
			h = sub ? ilog_field(fr) - 2096 : (int64_t)be - 1022;
			tmin[l] = nz && t < tmin[l] ? t : tmin[l];
			hmax[l] = nz && h > hmax[l] ? h : hmax[l];
			hmin[l] = nz && h < hmin[l] ? h : hmin[l];
			pmax[l] = nz && h - t > pmax[l] ? h - t : pmax[l];
		}
	memcpy(g->tmin, tmin, sizeof tmin);
	memcpy(g->hmax, hmax, sizeof hmax);
	memcpy(g->hmin, hmin, sizeof hmin);
	memcpy(g->pmax, pmax, sizeof pmax);
	memcpy(g->bad, bad, sizeof bad);
}

/* Lane l of g as a grid_acc, or with all = 1 the eight lanes merged
 * into one (minima and maxima of the lanes' ones: exact in any order). */
static void lanes_get(const grid_lanes *g, int l, int all, grid_acc *a)
{
	int l0 = all ? 0 : l, l1 = all ? 8 : l + 1;

	grid_begin(a);
	for (l = l0; l < l1; l++) {
		a->fin = a->fin && !g->bad[l];
		a->tmin = g->tmin[l] < a->tmin ? (int)g->tmin[l] : a->tmin;
		a->hmax = g->hmax[l] > a->hmax ? (int)g->hmax[l] : a->hmax;
		a->hmin = g->hmin[l] < a->hmin ? (int)g->hmin[l] : a->hmin;
		a->pmax = g->pmax[l] > a->pmax ? (int)g->pmax[l] : a->pmax;
	}
}

int fpl__exact_grid_rows(int64_t *v, fpl__grid_row *row, const double *x, size_t rows,
			 size_t K)
{
	size_t i, k;
	int ok = 0;

	for (i = 0; i < rows; i++) {
		const double *r = x + i * K;
		grid_acc g;
		grid_lanes gl;

		/* eight lanes over the row's first K - K % 8 entries, merged,
		 * then the others (a row with a NaN or an infinity is not
		 * finite either way; its other fields are not used) */
		lanes_begin(&gl);
		lanes_add(&gl, r, K / 8, 8);
		lanes_get(&gl, 0, 1, &g);
		for (k = K / 8 * 8; k < K; k++)
			grid_add(&g, fpl__bits(r[k]));
		if (!grid_end(&g, row + i))
			continue;
		ok = 1;
		if (v)
			fpl__exact_grid_ints(v + i * K, row + i, r, K);
	}
	return ok;
}

void fpl__exact_grid_ints(int64_t *v, const fpl__grid_row *row, const double *x, size_t K)
{
	size_t k;
	int t;

	for (k = 0; k < K; k++) {
		uint64_t u = fpl__bits(x[k]), m;
		unsigned be = (unsigned)(u >> 52) & 0x7ff;
		int64_t X;

		if (!(u & ~FPL__SIGN_BIT)) {
			v[k] = 0;
			continue;
		}
		m = (u & FPL__FRAC_MASK) | ((uint64_t)(be != 0) << 52);
		t = (be ? (int)be : 1) - 1075 + __builtin_ctzll(m);
		m >>= __builtin_ctzll(m);
		X = (int64_t)(m << (t - row->q));	/* < 2^62 */
		v[k] = u >> 63 ? -X : X;
	}
}

void fpl__exact_grid_cols(fpl__grid_row *row, const fpl__exact_gemm *gk)
{
	size_t nr = (size_t)gk->nr, p, k, c, h;
	grid_acc g[64];
	grid_lanes gl;

	for (p = 0; p < gk->np; p++) {
		const double *d = gk->bp + p * nr * gk->K;
		size_t n = gk->N - p * nr < nr ? gk->N - p * nr : nr;
		if (nr % 8 == 0) {	/* eight columns of the panel at a time */
			for (h = 0; h < nr; h += 8) {
				lanes_begin(&gl);
				lanes_add(&gl, d + h, gk->K, nr);
				for (c = h; c < h + 8 && c < n; c++) {
					lanes_get(&gl, (int)(c - h), 0, &g[c]);
					grid_end(&g[c], row + p * nr + c);
				}
			}
			continue;
		}
		for (c = 0; c < n; c++)
			grid_begin(&g[c]);
		for (k = 0; k < gk->K; k++)
			for (c = 0; c < n; c++)
				grid_add(&g[c], fpl__bits(d[k * nr + c]));
		for (c = 0; c < n; c++)
			grid_end(&g[c], row + p * nr + c);
	}
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

typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));

/* 2^e, -1022 <= e <= 1023. */
static inline double pow2(int e)
{
	return fpl__from_bits((uint64_t)(e + 1023) << 52);
}

/* x 2^-s for x an integer multiple of 2^s below 2^124, s >= -1074 and s
 * <= 1022: exact (one or two multiplications by powers of two, the
 * intermediate at least 2^-51, normal), converted to an integer. */
static inline i128 unscale(double x, int s)
{
	if (-s > 1023)
		x = x * pow2(1023) * pow2(-s - 1023);
	else
		x *= pow2(-s);
	return __builtin_fabs(x) < 0x1p63 ? (i128)(int64_t)x : (i128)x;
}

/* Helpers as macros: vectors in function arguments would tie the ABI to
 * one ISA, and these are used inside the ISA clones. */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v))
#define ABS8(x) ((v8d)((v8i)(x) & ((v8i){ 0 } + INT64_MAX)))

/* The eight lanes' sum (in lane order). */
static double hsum8(const double *x)
{
	double t = 0;
	int l;

	for (l = 0; l < 8; l++)
		t += x[l];
	return t;
}

/*
 * The narrow case, wx + wy + bitlength(K) <= 53 and -1074 <= s <= 1024 -
 * 53: every product a_k b_k of the binary64 rows is a multiple of 2^s
 * below 2^(s + wx + wy) in magnitude, and every partial sum of up to K of
 * them (or of their magnitudes) a multiple of 2^s below 2^(s + 53) <=
 * 2^1024: a finite binary64 value (2^s is not below binary64's quantum
 * 2^-1074), so each multiplication and addition is exact, in any order
 * (here: 32 lanes, then the lanes).  The totals are integers times 2^s
 * below 2^53, converted exactly.
 */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
/* one clone per ISA, picked at load time (the sums are exact: every clone
 * gives the same bits) */
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void narrow_dot(const double *a, const double *b, size_t K, int s, i128 *E, i128 *G)
{
	v8d e[4] = { { 0 } }, g[4] = { { 0 } };
	double te, tg;
	size_t k;
	int u;

	/* four independent vectors of sums: the additions' latency, not
	 * their count, bounds one chain */
	for (k = 0; k + 32 <= K; k += 32)
		for (u = 0; u < 4; u++) {
			v8d p, q;
			LOAD8(p, a + k + 8 * u);
			if (b) {
				LOAD8(q, b + k + 8 * u);
				p *= q;
			}
			e[u] += p;
			g[u] += ABS8(p);
		}
	for (; k + 8 <= K; k += 8) {
		v8d p, q;
		LOAD8(p, a + k);
		if (b) {
			LOAD8(q, b + k);
			p *= q;
		}
		e[0] += p;
		g[0] += ABS8(p);
	}
	e[0] += e[1] + (e[2] + e[3]);
	g[0] += g[1] + (g[2] + g[3]);
	te = hsum8((const double *)&e[0]);
	tg = hsum8((const double *)&g[0]);
	for (; k < K; k++) {
		double p = b ? a[k] * b[k] : a[k];
		te += p;
		tg += __builtin_fabs(p);
	}
	*E = unscale(te, s);
	*G = unscale(tg, s);
}

/*
 * The split case (Rump, Ogita and Oishi's ExtractScalar, "Accurate
 * floating-point summation part I", SIAM J. Sci. Comput. 31(1), 2008,
 * Lemma 3.3, here in integer form).  Let W = wx + wy, L = bitlength(K),
 * m = 106 - L, and suppose px + py <= 53 (every product p = a_k b_k is
 * exact in binary64), W + 1 <= m, W + L - 1 <= m, -1074 <= s and s + m <=
 * 1022.  With sigma = 1.5 2^(s+m): |p| < 2^(s+W) <= 2^(s+m-1), so sigma
 * + p lies in [2^(s+m), 2^(s+m+1)), where binary64's spacing is
 * 2^(s+m-52): fl(sigma + p) = sigma + hi with hi = p rounded to a
 * multiple of 2^(s+m-52), and hi = fl(sigma + p) - sigma is exact (both
 * on that grid, the difference below 2^(s+m)).  lo = p - hi is a
 * multiple of 2^s with |lo| <= 2^(s+m-53), exactly representable, so
 * fl(p - hi) = lo.  Sums: every partial sum of hi's is a multiple of
 * 2^(s+m-52) below K 2^(s+W) <= 2^(s+m-52+53) (W + L <= m + 1), and of
 * lo's a multiple of 2^s below K 2^(s+m-53) <= 2^(s+53) (m + L <= 106):
 * both exact in binary64 in any order, and below 2^1024.  So E 2^s =
 * sum hi + sum lo exactly; the same for |p| (whose hi is |hi|).
 */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void split_dot(const double *a, const double *b, size_t K, int s, int m, i128 *E,
		      i128 *G)
{
	const double sg = 1.5 * pow2(s + m);	/* -1022 <= s + m <= 1022 */
	const v8d S = (v8d){ 0 } + sg;
	v8d eh[2] = { { 0 } }, el[2] = { { 0 } }, gh[2] = { { 0 } }, gl[2] = { { 0 } };
	double teh, tel, tgh, tgl;
	size_t k;
	int u;

	for (k = 0; k + 16 <= K; k += 16)
		for (u = 0; u < 2; u++) {
			v8d p, q, ap, h, ah;
			LOAD8(p, a + k + 8 * u);
			LOAD8(q, b + k + 8 * u);
			p *= q;
			ap = ABS8(p);
			h = (p + S) - S;
			ah = (ap + S) - S;
			eh[u] += h;
			el[u] += p - h;
			gh[u] += ah;
			gl[u] += ap - ah;
		}
	eh[0] += eh[1];
	el[0] += el[1];
	gh[0] += gh[1];
	gl[0] += gl[1];
	teh = hsum8((const double *)&eh[0]);
	tel = hsum8((const double *)&el[0]);
	tgh = hsum8((const double *)&gh[0]);
	tgl = hsum8((const double *)&gl[0]);
	for (; k < K; k++) {
		double p = a[k] * b[k], ap = __builtin_fabs(p);
		double h = (p + sg) - sg, ah = (ap + sg) - sg;
		teh += h;
		tel += p - h;
		tgh += ah;
		tgl += ap - ah;
	}
	*E = unscale(teh, s) + unscale(tel, s);
	*G = unscale(tgh, s) + unscale(tgl, s);
}

int fpl__exact_grid_dot(fpl__grid_sum *g, const int64_t *x, const fpl__grid_row *rx,
			const int64_t *y, const fpl__grid_row *ry, const double *a,
			const double *b, size_t K, double c, int slack)
{
	fpl_u128 E = 0, N = 0;	/* wrapping sums: no overflow is UB, even
				 * under a wrong certificate (the tests') */
	i128 C, e, m;
	int wx = rx->w, wy = ry ? ry->w : 0, W = wx + wy, L = bitlen(K), mm = 106 - L;
	size_t k;

	if (wx < 0 || wy < 0 || W + L > 124 + slack)
		return 0;
	g->s = rx->q + (ry ? ry->q : 0);
	if (!on_grid(c, g->s, 124, &C))
		return 0;
	if (W + L <= 53 + slack && g->s >= -1074 && g->s <= 1024 - 53) {
		narrow_dot(a, ry ? b : NULL, K, g->s, &e, &m);
		goto done;
	}
	if (ry && rx->p + ry->p <= 53 && W + 1 <= mm + slack && W + L - 1 <= mm + slack
	    && g->s >= -1074 && g->s + mm <= 1022) {
		split_dot(a, b, K, g->s, mm, &e, &m);
		goto done;
	}
	if (!x || (ry && !y))	/* the integer rows are needed, not given */
		return -1;
	if (ry)
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
	e = (i128)E;
	m = (i128)(E - 2 * N);	/* sum of |terms|: positives - negatives */
done:
	g->E = e + C;
	g->G = m + (C < 0 ? -C : C);
	return 1;
}

/*
 * The compensated path.  Products by TwoProduct: h = fl(a b), r = fma(a,
 * b, -h) = a b - h exactly when a b is zero or its exponent is at least
 * binary64's emin + 52 = -970 (Boldo and Muller, "Exact and approximated
 * error of the FMA", IEEE TC 60(2), 2011), ensured by requiring hmin_a +
 * hmin_b - 2 >= -960 (|a b| >= 2^(ha-1) 2^(hb-1)); and no overflow:
 * |a b| < 2^(hmax_a + hmax_b), K of them below 2^(hmax_a + hmax_b + L)
 * <= 2^1000, and every other quantity below is smaller.
 *
 * Eight lanes each run a three-level version of Ogita, Rump and Oishi's
 * Dot2 ("Accurate sum and dot product", SIAM J. Sci. Comput. 26(6),
 * 2005) with Knuth's TwoSum (x + y = s + t exactly, for any finite x, y
 * without overflow; an addition that underflows is exact): P + q' = P +
 * h, then S + q2 = S + q', S + r2 = S + r, all exact, and R += fl(q2 +
 * r2), A += fl(|q2| + |r2|).  So per lane, exactly, sum(a b) = P + S +
 * T with T the sum of the q2 + r2, which R approximates by recursive
 * summation: |R - T| <= gamma_n sum(|q2| + |r2|) (Higham, (4.4); each
 * term sees at most K + 1 roundings).  Over the lanes, with n = K + 16
 * (the lanes' sums add 8 roundings), n u <= 1/4 (K <= 2^48): gamma_n <=
 * 4/3 n u, and A', the binary64 sum of the lanes' A, is at least (1 -
 * gamma_n) sum(|q2| + |r2|), 1/(1 - gamma_n) <= 3/2: the error of the 24
 * numbers P_l, S_l, R_l as a value of e - c is at most 2 n u A'.  beta =
 * n 2^-51 A' is twice that, so its own roundings (a relative 2^-53 each)
 * cannot make it smaller; it is raised to 2^-1000 when the product
 * underflows and A' > 0, and is 0 when A' = 0 (every q2 and r2 is 0:
 * R = T = 0).  g the same on |a b| = |h| + sign(h) r.  q2 and r2 are a
 * rounding error of a rounding error: beta is near K^2 2^-157 sum |a b|.
 */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "fma", "default")))
#endif
static void dot3(const double *a, const double *b, size_t K, double *out)
{
	v8d P = { 0 }, S = { 0 }, R = { 0 }, A = { 0 };
	v8d GP = { 0 }, GS = { 0 }, GR = { 0 }, GA = { 0 };
	const v8i sgn = (v8i){ 0 } + INT64_MIN;
	size_t k;
	int l;

#define TWOSUM(s, x, err)                                                                  \
	do {                                                                               \
		v8d t_ = (s) + (x), z_ = t_ - (s);                                         \
		(err) = ((s) - (t_ - z_)) + ((x) - z_);                                    \
		(s) = t_;                                                                  \
	} while (0)
	for (k = 0; k + 8 <= K; k += 8) {
		v8d x, y, h, r, q, q2, r2, ah, ar;
		LOAD8(x, a + k);
		LOAD8(y, b + k);
		h = x * y;
		for (l = 0; l < 8; l++)
			r[l] = __builtin_fma(x[l], y[l], -h[l]);
		TWOSUM(P, h, q);
		TWOSUM(S, q, q2);
		TWOSUM(S, r, r2);
		R += q2 + r2;
		A += ABS8(q2) + ABS8(r2);
		ah = ABS8(h);
		ar = (v8d)((v8i)r ^ ((v8i)h & sgn));
		TWOSUM(GP, ah, q);
		TWOSUM(GS, q, q2);
		TWOSUM(GS, ar, r2);
		GR += q2 + r2;
		GA += ABS8(q2) + ABS8(r2);
	}
#undef TWOSUM
	for (l = 0; l < 8; l++) {
		out[l] = P[l];
		out[8 + l] = S[l];
		out[16 + l] = R[l];
		out[24 + l] = GP[l];
		out[32 + l] = GS[l];
		out[40 + l] = GR[l];
	}
	out[48] = hsum8((const double *)&A);
	out[49] = hsum8((const double *)&GA);
}

/* dot3's lane 0 over the tail k0 <= k < K (scalar: the same steps). */
static void dot3_tail(const double *a, const double *b, size_t k0, size_t K, double *out)
{
	size_t k;

#define TWOSUM1(s, x, err)                                                                 \
	do {                                                                               \
		double t_ = (s) + (x), z_ = t_ - (s);                                      \
		(err) = ((s) - (t_ - z_)) + ((x) - z_);                                    \
		(s) = t_;                                                                  \
	} while (0)
	for (k = k0; k < K; k++) {
		double h = a[k] * b[k], r = fma(a[k], b[k], -h), q, q2, r2, ah, ar;
		TWOSUM1(out[0], h, q);
		TWOSUM1(out[8], q, q2);
		TWOSUM1(out[8], r, r2);
		out[16] += q2 + r2;
		out[48] += fabs(q2) + fabs(r2);
		ah = fabs(h);
		ar = h < 0 ? -r : r;
		TWOSUM1(out[24], ah, q);
		TWOSUM1(out[32], q, q2);
		TWOSUM1(out[32], ar, r2);
		out[40] += q2 + r2;
		out[49] += fabs(q2) + fabs(r2);
	}
#undef TWOSUM1
}

/* n 2^-51 A' as in dot3's comment. */
static double bound(double n, double A)
{
	double b = n * 0x1p-51 * A;

	return A > 0 && b < 0x1p-1000 ? 0x1p-1000 : b;
}

int fpl__exact_cert_dot(fpl_exact *elo, fpl_exact *ehi, fpl_exact *glo, fpl_exact *ghi,
			const double *a, const fpl__grid_row *ra, const double *b,
			const fpl__grid_row *rb, size_t K, double c, double y, int slack)
{
	double v[50], n = (double)K + 16, be, bg, ea = c;
	int l;

	if (!ra->fin || !rb->fin || !isfinite(c) || K > ((size_t)1 << 48))
		return 0;
	if (ra->hmin <= ra->hmax && rb->hmin <= rb->hmax
	    && (ra->hmin + rb->hmin - 2 < -960 || ra->hmax + rb->hmax + bitlen(K) > 1000))
		return 0;
	dot3(a, b, K, v);
	dot3_tail(a, b, K / 8 * 8, K, v);	/* the tail joins the sums of lane 0:
						 * the same chain, one more term each */
	be = bound(n, v[48]);
	bg = bound(n, v[49]);
	if (slack > 0)
		be = bg = 0;	/* the tests' wrong certificate */
	/* a cheap look first (speed only, no part of the proof): the ends
	 * will not agree when beta is not far below |e| and |y - e| */
	for (l = 0; l < 16; l++)
		ea += v[l];
	if (!(fabs(ea) > 0x1p56 * be) || (isfinite(y) && !(fabs(y - ea) > 0x1p56 * be)))
		return 0;
	fpl_exact_init(elo);
	fpl_exact_init(glo);
	for (l = 0; l < 24; l++) {
		fpl_exact_add(elo, v[l]);
		fpl_exact_add(glo, v[24 + l]);
	}
	fpl_exact_add(elo, c);
	fpl_exact_add(glo, fabs(c));
	*ehi = *elo;
	*ghi = *glo;
	fpl_exact_add(elo, -be);
	fpl_exact_add(ehi, be);
	fpl_exact_add(glo, -bg);
	fpl_exact_add(ghi, bg);
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
