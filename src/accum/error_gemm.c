/* SPDX-License-Identifier: MIT */
/*
 * error_gemm.c - fpl_accum_errors_gemm: simulated results against the
 * exact values of the same GEMM, dot product or sums (accum_error.h).
 *
 * The invariant: the statistics do not depend on the thread count.  The
 * threads (each a contiguous range of rows) only fill per-output arrays:
 * the exact value, the relative and absolute errors, the exact entry of
 * |A||B| + |C| rounded to binary64, and a class; one pass in output order
 * then forms every count, maximum, sum and norm, so the floating-point
 * sums are evaluated in one fixed order.  The median is a selection over
 * the stored relative errors (a multiset: its order does not matter).
 * With one worker on the blocked path that pass runs band by band, as the
 * rows are done (esum, fold): the same order, with only the relative
 * errors stored whole (summarize_stream proves its norms equal).
 *
 * Exactness.  Each output's readings (its exact value, relative and
 * absolute errors and |A||B| + |C| entry, rounded as fpl_exact_value,
 * fpl_exact_relerr and fpl_exact_abserr round them) come from one of
 * four paths, which give the same bits (tests/tgemmref.c and
 * tests/texactfast.c check it):
 *   the blocked path (exact_gemm.c, GEMMs of 4 x 4 outputs or more, when
 *     a probe of 48 rows finds it worth it): E = AB and G = |A||B| in
 *     binary64 by a GEMM kernel, proven exact output by output when G <
 *     2^(g + 53) (gemm_output), the readings then one IEEE operation
 *     each on exact operands; the other outputs go on to the paths below
 *     (the grid path's integer rows are then formed for them alone, and
 *     only where its binary64 sums do not apply);
 *   the grid path (exact_fast.c): rows whose entries lie on a narrow
 *     grid are summed exactly in binary64 or a 128-bit integer, where a
 *     width test proves that nothing rounds or overflows, and read
 *     through fpl_exact's own rounding routines;
 *   the compensated path (exact_fast.c, dot products only): a
 *     triple-double dot product with a proven error bound gives exact
 *     ends lo <= e <= hi; when every reading is the same at both ends and
 *     monotone between them (cert_output), it is e's;
 *   the long path, where neither applies: the terms (the exact products
 *     a_ik b_kj, and c_ij) are split by sign into two fpl_exact sums of
 *     magnitudes, P and Q: the exact value is P - Q and the exact entry
 *     of |A||B| + |C| is P + Q, one exact addition per term for both.
 * The relative errors are fpl_exact_relerr's (faithful), the absolute
 * ones fpl_exact_abserr's (correctly rounded).  The outputs are visited
 * in tiles (rows_each, rows_blocked).  FPLAB_EXACT=long forces the long
 * path for every output, FPLAB_EXACT=nogemm leaves out the blocked one.
 * The Frobenius norms are sums of squares in binary64 of those binary64
 * entries, each norm scaled by the power of
 * two that brings its largest entry to [1, 2) (no square overflows, only
 * negligible ones underflow) and the ratio formed from the scaled norms:
 * it carries the rounding errors of the sums, a relative 2^-53 times the
 * output count at worst.
 *
 * Failed results.  A result that is NaN or infinite where the exact
 * value is finite gets relative error +inf (it joins the relative errors
 * as such), and makes max_abs and the normwise ratio +inf: the header's
 * one rule.  Outputs whose exact value is not finite are only counted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/accum_error.h>

#include "accum/accum_internal.h"
#include "accum/exact_internal.h"
#include "util/parallel.h"
#include "util/scratch.h"

enum {
	C_REL = FPL__EXACT_C_REL, C_ABS = FPL__EXACT_C_ABS, C_ZERO = FPL__EXACT_C_ZERO,
	C_NONFIN = FPL__EXACT_C_NONFIN, C_NAN = FPL__EXACT_C_NAN, C_INF = FPL__EXACT_C_INF
};

/* The class bits of the result y itself: C_NAN, C_INF or none. */
static unsigned result_class(double y)
{
	return isnan(y) ? C_NAN : isinf(y) ? C_INF : 0;
}

typedef struct ectx {
	size_t M, N, K;
	const double *A;		/* M x K, packed */
	const double *Bt;		/* N x K (B transposed), packed; NULL for sums
					 * and for the blocked path when B is given */
	const double *B;		/* or B: (k, j) at B[k*sbk + j*sbj] */
	ptrdiff_t sbk, sbj;
	const double *c;		/* C[i][j] = c[i*ldc + j], or NULL */
	size_t ldc;
	const double *r;
	size_t ldr;
	double *exact, *rel, *abserr, *den;	/* per output i*N + j (exact: or NULL) */
	unsigned char *cls;
	uint64_t *progress;		/* terms done, or NULL */
	/* the grid path (exact_fast.c): A's and Bt's rows as integers, their
	 * scales and widths (-1: not eligible); ia NULL: the long path only */
	const int64_t *ia, *ib;
	const fpl__grid_row *ra, *rb;
	int slack;			/* 0; > 0 only in the tests' mutant */
	uint64_t *ngrid;		/* outputs done by the grid path, or NULL */
	/* the blocked path (exact_gemm.c): B packed, or NULL */
	const fpl__exact_gemm *gk;
	const int *tb;			/* its columns' t (not finite: TB_NONFIN),
					 * for gk->rd; or NULL */
	uint64_t *nblock;		/* outputs done by it, or NULL */
	/* the streamed summary (summarize_stream), or NULL; abserr, den
	 * and cls then hold one band of rows: output o at o - ob */
	struct esum *sum;
	size_t ob;
} ectx;

/*
 * The streamed summary (fpl_accum_errors_gemm on one worker by the
 * blocked path): the rows are done in order, a band of up to 48 at a
 * time, so summarize's pass in output order can run band by band while
 * the band is in cache (fold), and abserr, den and cls need one band's
 * room (ab, dn, cls: 48 x N), not m x n; rel is kept whole for the
 * median.  The sums of squares are formed unscaled (summarize_stream
 * argues when they are the scaled ones times a power of two).
 */
typedef struct esum {
	double *ab, *dn;		/* the band's readings, 48 x N each */
	unsigned char *cls;
	double sum_rel, mr, ma, mg;	/* summarize's sum and maxima */
	uint64_t nz, nf, cmp, nn, ni;	/* and counts */
	size_t q;			/* rel's entries kept (compacted) */
	double ta, tg, tr;		/* sums of squares of abserr, den, rel */
	double la, lg, lr;		/* their least nonzero squares (+inf: none) */
} esum;

typedef struct eworker {
	const ectx *X;
	size_t i0, i1;
	double *E, *ap, *one;	/* the blocked path's buffers (run_rows) */
} eworker;

/*
 * The exact value e and the exact sum of magnitudes g of output (i, j)
 * from one pass over its terms: each term goes, as its magnitude, into P
 * (positive terms) or Q (negative ones), so e = P - Q and g = P + Q
 * cost one exact addition per term instead of two.  Special terms keep
 * their kind: a negative infinity is counted in Q as +inf and becomes
 * -inf when Q is negated; NaNs (inf*0 included) stay NaNs.  g is
 * returned only when e is finite (then P and Q have no special terms).
 */
static int exact_pair(const ectx *X, size_t i, size_t j, const double *b, fpl_exact *e,
		      fpl_exact *g)
{
	const double *a = X->A + i * X->K;
	fpl_exact q, *to[2];
	size_t k;

	fpl_exact_init(e);
	fpl_exact_init(&q);
	to[0] = e;
	to[1] = &q;
	/* the sign picks the accumulator by index: random signs would make
	 * a branch mispredict half the time */
	if (b)
		for (k = 0; k < X->K; k++) {
			uint64_t x = fpl__bits(a[k]), y = fpl__bits(b[k]);
			fpl_exact_add_product(to[(x ^ y) >> 63], fpl__from_bits(x & ~FPL__SIGN_BIT),
					      fpl__from_bits(y & ~FPL__SIGN_BIT));
		}
	else
		for (k = 0; k < X->K; k++) {
			uint64_t x = fpl__bits(a[k]);
			fpl_exact_add(to[x >> 63], fpl__from_bits(x & ~FPL__SIGN_BIT));
		}
	if (X->c) {
		uint64_t x = fpl__bits(X->c[i * X->ldc + j]);
		fpl_exact_add(to[x >> 63], fpl__from_bits(x & ~FPL__SIGN_BIT));
	}
	*g = *e;
	fpl_exact_add_exact(g, &q);
	fpl_exact_neg(&q);
	fpl_exact_add_exact(e, &q);
	return !e->nan && !e->pinf && !e->ninf;
}

/* one_output by the grid path: 1 when its certificate holds (then every
 * number is the long path's, bit for bit: exact_fast.c), else 0; -1
 * (nothing written) when it holds but needs the integer rows xa, xb and
 * they are not given (NULL). */
static int grid_output(const ectx *X, size_t i, size_t j, const double *bt, const int64_t *xa,
		       const int64_t *xb)
{
	size_t o = i * X->N + j;
	double y = X->r[i * X->ldr + j];
	fpl__grid_sum s;
	unsigned char cl = 0;
	int st;

	if (!X->ra)
		return 0;
	st = fpl__exact_grid_dot(&s, xa, X->ra + i, bt ? xb : NULL, bt ? X->rb + j : NULL,
				 X->A + i * X->K, bt, X->K, X->c ? X->c[i * X->ldc + j] : 0.0,
				 X->slack);
	if (st <= 0)
		return st;
	if (X->exact)
		X->exact[o] = fpl__grid_value(&s);
	if (isfinite(y)) {
		cl |= C_ABS;
		fpl__grid_errors(&s, y, &X->abserr[o - X->ob], &X->rel[o]);
		X->den[o - X->ob] = fpl__grid_den(&s);
		if (s.E != 0) {
			cl |= C_REL;
			if (y == 0)
				cl |= C_ZERO;
		}
	} else {
		cl |= C_NONFIN | C_REL;
		X->rel[o] = INFINITY;
	}
	X->cls[o - X->ob] = (unsigned char)(cl | result_class(y));
	return 1;
}

static int same(double x, double y)
{
	return fpl__bits(x) == fpl__bits(y);
}

/*
 * one_output by the compensated path (exact_fast.c) with its certificate:
 * e lies in [lo, hi] (exact bounds), and every reading is the same at
 * both ends and monotone on the interval, so it is e's.  The readings:
 * the value and den are nearest roundings (monotone); the class needs e
 * != 0: lo and hi of one sign; |y - e| is monotone when y is outside
 * (lo, hi): y - lo and y - hi of one nonzero sign; the relative error is
 * the rounded quotient of |y - e|'s window (monotone in |y - e|) by |e|'s
 * top 64 bits and exponent, which must be the same at both ends (the
 * truncation is monotone in |e|: then constant in between), so it is
 * monotone in e too.  Returns 1 when the certificate holds, else 0.
 */
static int cert_output(const ectx *X, size_t i, size_t j, const double *bt)
{
	size_t o = i * X->N + j;
	double y = X->r[i * X->ldr + j], v, rel, ab;
	fpl_exact lo, hi, glo, ghi, d;
	uint64_t h1, h2, l1, l2;
	int64_t x1, x2;
	int n1, n2, s1, s2, sg;
	unsigned char cl = 0;

	if (!X->ra || !bt
	    || !fpl__exact_cert_dot(&lo, &hi, &glo, &ghi, X->A + i * X->K, X->ra + i, bt,
				    X->rb + j, X->K,
				    X->c ? X->c[i * X->ldc + j] : 0.0, y, X->slack))
		return 0;
	v = fpl_exact_value(&lo);
	if (!same(v, fpl_exact_value(&hi)))
		return 0;
	if (isfinite(y)) {
		sg = fpl_exact_sign(&lo);
		if (sg == 0 || sg != fpl_exact_sign(&hi))
			return 0;
		d = lo;
		fpl_exact_add(&d, -y);
		sg = fpl_exact_sign(&d);
		d = hi;
		fpl_exact_add(&d, -y);
		if (sg == 0 || sg != fpl_exact_sign(&d))
			return 0;
		fpl__exact_window(&lo, &n1, &x1, &h1, &l1, &s1);
		fpl__exact_window(&hi, &n2, &x2, &h2, &l2, &s2);
		if (h1 != h2 || x1 != x2)
			return 0;
		ab = fpl_exact_abserr(&lo, y);
		rel = fpl_exact_relerr(&lo, y);
		if (!same(ab, fpl_exact_abserr(&hi, y)) || !same(rel, fpl_exact_relerr(&hi, y)))
			return 0;
		X->den[o - X->ob] = fpl_exact_value(&glo);
		if (!same(X->den[o - X->ob], fpl_exact_value(&ghi)))
			return 0;
		X->abserr[o - X->ob] = ab;
		X->rel[o] = rel;
		cl |= C_ABS | C_REL;
		if (y == 0)
			cl |= C_ZERO;
	} else {
		cl |= C_NONFIN | C_REL;
		X->rel[o] = INFINITY;
	}
	if (X->exact)
		X->exact[o] = v;
	X->cls[o - X->ob] = (unsigned char)(cl | result_class(y));
	return 1;
}

/* 2^e for -1022 <= e <= 1023. */
static double pow2(int e)
{
	return fpl__from_bits((uint64_t)(e + 1023) << 52);
}

/* a + b = *s exactly?  (Knuth's TwoSum: its error term is exact for
 * finite a, b when a + b does not overflow.) */
static int exact_sum(double a, double b, double *s)
{
	double t = a + b, z = t - a;

	*s = t;
	return isfinite(t) && (a - (t - z)) + (b - z) == 0;
}

/*
 * gemm_output: one_output by the blocked path (exact_gemm.c), from the
 * binary64 evaluations te of sum a_k b_k and tg of sum |a_k||b_k|, when
 * the certificate holds (else nothing is written: the other paths).  The certificate (see
 * exact_gemm.c): both rows finite, g = qa + qb in [-1074, 970] and tg <
 * 2^(g + 53): then te and tg are the exact sums.  With C's entry c, e =
 * te + c and den = tg + |c| are kept when TwoSum proves them exact.  The
 * readings are then those of the long accumulator bit for bit: the value
 * and den are binary64 numbers (their own nearest rounding; e is never
 * -0: every sum starts from +0 and an exact zero sum rounds to +0); for
 * a finite y, d = y - e is kept when TwoSum proves it exact, and then
 * fpl_exact_abserr is |d| and fpl_exact_relerr, formed from d's and e's
 * windows (exact here: 53-bit numbers in a 128-bit and a 64-bit window)
 * by a truncated quotient with sticky rounded once to nearest, is the
 * correctly rounded |d| / |e|: the IEEE division's result.
 */
struct lazy_ints;
static int lone_output(const ectx *X, size_t i, size_t j, struct lazy_ints *L);

/* gemm_output for the outputs (i, j0 + c), c < n, from te[c] and tg[c];
 * those whose certificate fails go to lone_output (with L), which adds
 * its grid and compensated ones to *ng.  Returns the count done here.
 * One row at a time, X's fields held in locals: the class stores (bytes)
 * would otherwise make the compiler reload them for every output.
 * Without C, a readings kernel (gk->rd, exact_internal.h) first does
 * the common outputs, 8 at a time, with the same operations; the loop
 * below then visits only those it left (their indices in left[]), and
 * decides them from scratch. */
#define TB_NONFIN (-(1 << 24))
#define RD_MAX 4096	/* the most outputs per call for gk->rd */

static uint64_t gemm_outputs(const ectx *X, size_t i, size_t j0, size_t n, const double *te,
			     const double *tg, struct lazy_ints *L, uint64_t *ng)
{
	size_t o0 = i * X->N + j0, c, k, cnt = n;
	const double *yr = X->r + i * X->ldr + j0, *cr = X->c ? X->c + i * X->ldc + j0 : NULL;
	const fpl__grid_row *rb = X->rb + j0;
	double *ex = X->exact ? X->exact + o0 : NULL, *rel = X->rel + o0;
	double *ab = X->abserr + (o0 - X->ob), *dn = X->den + (o0 - X->ob);
	unsigned char *cls = X->cls + (o0 - X->ob);
	int ta = X->ra[i].t, fa = X->ra[i].fin, slack = X->slack;
	uint64_t done = 0;
	uint32_t left[RD_MAX], *idx = NULL;

	if (X->gk->rd && X->tb && !cr && fa && n <= RD_MAX) {
		cnt = X->gk->rd(n, te, tg, yr, X->tb + j0, ta, slack, ex, rel, ab, dn, cls, left);
		done = n - cnt;
		idx = left;
	}
	for (k = 0; k < cnt; k++) {
		double y, e, den, d, cv;
		c = idx ? idx[k] : k;
		y = yr[c];
		e = te[c];
		den = tg[c];
		int g = ta + rb[c].t, lim = g + 53 + slack;
		unsigned char cl = 0;

		if (!fa || !rb[c].fin || g < -1074 || g > 970
		    || !(tg[c] < pow2(lim > 1023 ? 1023 : lim)))
			goto other;
		if (cr) {
			cv = cr[c];
			if (!exact_sum(te[c], cv, &e) || !exact_sum(tg[c], fabs(cv), &den))
				goto other;
			if (e == 0)
				e = 0.0;	/* +0, as fpl_exact_value gives it */
		}
		if (isfinite(y)) {
			if (!exact_sum(y, -e, &d))
				goto other;
			cl |= C_ABS;
			ab[c] = fabs(d);
			dn[c] = den;
			rel[c] = d == 0 ? 0.0
				 : e == 0 ? fpl__from_bits(FPL__EXP_MASK) : fabs(d) / fabs(e);
			if (e != 0) {
				cl |= C_REL;
				if (y == 0)
					cl |= C_ZERO;
			}
		} else {
			cl |= C_NONFIN | C_REL;
			rel[c] = INFINITY;
		}
		if (ex)
			ex[c] = e;
		cls[c] = (unsigned char)(cl | result_class(y));
		done++;
		continue;
other:
		*ng += (uint64_t)lone_output(X, i, j0 + c, L);
	}
	return done;
}

/* Output (i, j), bt B's column j (K entries; NULL for sums), xa and xb
 * the grid path's integer rows (NULL: no grid path); returns 1 when the
 * grid or the compensated path did it. */
static int one_output(const ectx *X, size_t i, size_t j, const double *bt, const int64_t *xa,
		      const int64_t *xb)
{
	size_t o = i * X->N + j;
	double y = X->r[i * X->ldr + j];
	fpl_exact e, g;
	unsigned char cl = 0;
	int efin;

	if (grid_output(X, i, j, bt, xa, xb) > 0 || cert_output(X, i, j, bt))
		return 1;
	efin = exact_pair(X, i, j, bt, &e, &g);
	if (X->exact)
		X->exact[o] = fpl_exact_value(&e);
	if (efin && isfinite(y)) {
		cl |= C_ABS;
		X->abserr[o - X->ob] = fpl_exact_abserr(&e, y);
		X->den[o - X->ob] = fpl_exact_value(&g);
		if (!fpl__exact_is_zero(&e)) {
			cl |= C_REL;
			X->rel[o] = fpl_exact_relerr(&e, y);
			if (y == 0)
				cl |= C_ZERO;
		}
	} else if (efin) {
		/* a failed result: error +inf (accum_error.h's one rule) */
		cl |= C_NONFIN | C_REL;
		X->rel[o] = INFINITY;
	}
	X->cls[o - X->ob] = (unsigned char)(cl | result_class(y));
	return 0;
}

/* Rows [i0, i1) output by output (one_output), in tiles: a block of up
 * to 16 rows of A against a block of Bt's rows of about 256 KiB, so that
 * each row of Bt is read from cache by the 16 rows (the grid path is
 * bound by those reads otherwise).  The order does not matter: every
 * output is computed on its own.  Progress counts each row's part of a
 * tile when it is done: n*(kk+1) per row in all, as before. */
static uint64_t rows_each(const ectx *X, size_t i0, size_t i1)
{
	size_t jb = X->K ? (size_t)32768 / X->K : X->N, ib, i, j, j0, j1;
	uint64_t ng = 0;

	if (jb < 1)
		jb = 1;
	for (ib = i0; ib < i1; ib += 16)
		for (j0 = 0; j0 < X->N; j0 = j1) {
			j1 = X->N - j0 > jb ? j0 + jb : X->N;
			for (i = ib; i < i1 && i < ib + 16; i++) {
				for (j = j0; j < j1; j++)
					ng += (uint64_t)one_output(X, i, j,
								   X->Bt ? X->Bt + j * X->K : NULL,
								   X->ia ? X->ia + i * X->K : NULL,
								   X->ib ? X->ib + j * X->K : NULL);
				if (X->progress)
					__atomic_fetch_add(X->progress, (uint64_t)(j1 - j0) * (X->K + 1),
							   __ATOMIC_RELAXED);
			}
		}
	return ng;
}

/* The grid path's integer rows for the blocked path's rare outputs (not
 * prepared for all rows then): formed on first use, a block's rows of A
 * and B's columns, per worker. */
struct lazy_ints {
	int64_t *xa, *xb;		/* 48 x K and N x K */
	unsigned char *da, *db;		/* formed yet? */
	size_t ib;			/* the block xa holds */
	double *bt;			/* B's columns (X->Bt NULL), N x K */
	unsigned char *dbt;
	double *one;			/* one column, K (when bt cannot be had) */
};
typedef struct lazy_ints lazy_ints;

static void lazy_release(lazy_ints *L)
{
	free(L->xa);
	free(L->xb);
	free(L->da);
	free(L->db);
	fpl__scratch_free(L->bt);
	free(L->dbt);
	free(L->one);
}

/* B's column j as a row of K entries: X->Bt's, or gathered from X->B
 * into L on first use (into L->one, every time, when memory is short). */
static const double *bt_col(const ectx *X, size_t j, lazy_ints *L)
{
	size_t k, K = X->K ? X->K : 1;

	if (X->Bt)
		return X->Bt + j * X->K;
	if (!L->bt && !L->dbt) {
		L->bt = fpl__scratch_alloc(X->N * K * sizeof *L->bt);	/* reused */
		L->dbt = calloc(X->N, 1);
		if (!L->bt || !L->dbt) {
			fpl__scratch_free(L->bt);
			L->bt = NULL;	/* dbt (or its failure) says: tried */
			if (!L->dbt)
				L->dbt = malloc(1);
		}
	}
	if (!L->bt) {
		for (k = 0; k < X->K; k++)
			L->one[k] = X->B[(ptrdiff_t)k * X->sbk + (ptrdiff_t)j * X->sbj];
		return L->one;
	}
	if (!L->dbt[j]) {
		if (X->gk) {	/* from B's panel: the same values, read at a
				 * stride of nr entries, not of a row of B */
			const fpl__exact_gemm *gk = X->gk;
			size_t nr = (size_t)gk->nr;
			const double *d = gk->bp + (j / nr) * nr * X->K + j % nr;
			for (k = 0; k < X->K; k++)
				L->bt[j * K + k] = d[k * nr];
		} else
			for (k = 0; k < X->K; k++)
				L->bt[j * K + k] = X->B[(ptrdiff_t)k * X->sbk + (ptrdiff_t)j * X->sbj];
		L->dbt[j] = 1;
	}
	return L->bt + j * K;
}

/* one_output with the integer rows from L (none when memory is short:
 * then the grid path is skipped, the others give the same bits). */
static int lone_output(const ectx *X, size_t i, size_t j, struct lazy_ints *L)
{
	size_t K = X->K ? X->K : 1;
	const double *bt = bt_col(X, j, L);
	int st;

	if (X->ia)
		return one_output(X, i, j, bt, X->ia + i * X->K, X->ib ? X->ib + j * X->K : NULL);
	/* the grid path's binary64 sums need no integer rows: most of
	 * these outputs end here, and the rows are formed only for the
	 * others (st = -1) */
	st = grid_output(X, i, j, bt, NULL, NULL);
	if (st > 0)
		return 1;
	if (st == 0 || X->ra[i].w < 0 || X->rb[j].w < 0)
		return one_output(X, i, j, bt, NULL, NULL);
	if (!L->xa) {
		L->xa = malloc(48 * K * sizeof *L->xa);
		L->xb = malloc(X->N * K * sizeof *L->xb);
		L->da = calloc(48, 1);
		L->db = calloc(X->N, 1);
		if (!L->xa || !L->xb || !L->da || !L->db) {
			free(L->xa);
			free(L->xb);
			free(L->da);
			free(L->db);
			L->xa = L->xb = NULL;
			L->da = L->db = NULL;
			return one_output(X, i, j, bt, NULL, NULL);
		}
		L->ib = i - i % 48;
	}
	if (i - L->ib >= 48) {	/* a new block (blocks of 48 from the range's start) */
		L->ib = i;
		memset(L->da, 0, 48);
	}
	/* the rows' descriptions are known (grid_prepare): the integers alone */
	if (!L->da[i - L->ib]) {
		fpl__exact_grid_ints(L->xa + (i - L->ib) * K, X->ra + i, X->A + i * X->K, X->K);
		L->da[i - L->ib] = 1;
	}
	if (!L->db[j]) {
		fpl__exact_grid_ints(L->xb + j * K, X->rb + j, bt, X->K);
		L->db[j] = 1;
	}
	return one_output(X, i, j, bt, L->xa + (i - L->ib) * K, L->xb + j * K);
}

/*
 * Rows [w->i0, w->i1) by the blocked path: blocks of up to 48 rows
 * against chunks of about 2048 columns, E and G of the whole chunk from
 * exact_gemm.c's kernel, then each output by gemm_output or, where its
 * certificate fails, one_output.  Returns -1 when memory is short
 * (nothing done).
 */
#define QC_COLS 2048	/* columns per chunk */

/* summarize's pass over the outputs o0 .. o0 + n - 1 of a band (at 0 ..
 * n - 1 in S's buffers), in output order: the same sum, maxima, counts
 * and compaction of rel, with the three chains of squares unscaled. */
static void fold(esum *S, double *rel, size_t o0, size_t n)
{
	const double *ab = S->ab, *dn = S->dn;
	const unsigned char *cls = S->cls;
	double sum_rel = S->sum_rel, mr = S->mr, ma = S->ma, mg = S->mg;
	double ta = S->ta, tg = S->tg, tr = S->tr, la = S->la, lg = S->lg, lr = S->lr, z;
	uint64_t nz = S->nz, nf = S->nf, cmp = S->cmp, nn = S->nn, ni = S->ni;
	size_t q = S->q, i;

	for (i = 0; i < n; i++) {
		unsigned char c = cls[i];
		if (c & C_REL) {
			double v = rel[o0 + i];
			sum_rel += v;
			if (v > mr)
				mr = v;
			rel[q] = v;	/* compact, in order: q <= o0 + i */
			q++;
			z = v * v;
			tr += z;
			lr = z != 0 && z < lr ? z : lr;
		}
		if (c & C_ABS) {
			double x = ab[i], y = dn[i];
			if (x > ma)
				ma = x;
			if (y > mg)
				mg = y;
			z = x * x;
			ta += z;
			la = z != 0 && z < la ? z : la;
			z = y * y;
			tg += z;
			lg = z != 0 && z < lg ? z : lg;
		}
		nz += (c & C_ZERO) != 0;
		nf += (c & C_NONFIN) != 0;
		cmp += (c & (C_ABS | C_NONFIN)) != 0;
		nn += (c & C_NAN) != 0;
		ni += (c & C_INF) != 0;
	}
	S->sum_rel = sum_rel;
	S->mr = mr;
	S->ma = ma;
	S->mg = mg;
	S->ta = ta;
	S->tg = tg;
	S->tr = tr;
	S->la = la;
	S->lg = lg;
	S->lr = lr;
	S->nz = nz;
	S->nf = nf;
	S->cmp = cmp;
	S->nn = nn;
	S->ni = ni;
	S->q = q;
}

static void rows_blocked(const eworker *w, uint64_t *ng, uint64_t *nb)
{
	const ectx *X = w->X;
	ectx Y;
	const fpl__exact_gemm *gk = X->gk;
	size_t nr = (size_t)gk->nr, qc = QC_COLS / nr ? QC_COLS / nr : 1;
	size_t rc = fpl__exact_gemm_rows(gk), i1 = w->i1;
	size_t ib, rows = 0, q0, q1, ld, r, j;
	double *E = w->E, *ap = w->ap;
	lazy_ints L;
	uint64_t fast;

	memset(&L, 0, sizeof L);
	L.one = w->one;
	if (X->sum) {	/* streamed (one worker): the band's buffers */
		Y = *X;
		Y.abserr = X->sum->ab;
		Y.den = X->sum->dn;
		Y.cls = X->sum->cls;
		X = &Y;
	}
	for (ib = w->i0; ib < i1; ib += rows) {
		rows = i1 - ib < 48 ? i1 - ib : 48;
		fast = 0;
		if (X == &Y)
			Y.ob = ib * X->N;
		if (L.da) {
			L.ib = ib;
			memset(L.da, 0, 48);
		}
		for (q0 = 0; q0 < gk->np; q0 = q1) {
			q1 = gk->np - q0 > qc ? q0 + qc : gk->np;
			ld = (q1 - q0) * nr;
			fpl__exact_gemm_block(gk, X->A + ib * X->K, rows, q0, q1, E, E + rc * ld, ap);
			j = q0 * nr;
			for (r = 0; r < rows; r++)
				fast += gemm_outputs(X, ib + r, j, X->N - j < ld ? X->N - j : ld,
						     E + r * ld, E + rc * ld + r * ld, &L, ng);
		}
		*nb += fast;
		if (X->sum)
			fold(X->sum, X->rel, ib * X->N, rows * X->N);
		if (X->progress)
			__atomic_fetch_add(X->progress, (uint64_t)rows * X->N * (X->K + 1),
					   __ATOMIC_RELAXED);
	}
	L.one = NULL;	/* w's */
	lazy_release(&L);
}

static void *ework(void *arg)
{
	eworker *w = arg;
	const ectx *X = w->X;
	uint64_t ng = 0, nb = 0;

	if (X->gk)
		rows_blocked(w, &ng, &nb);
	else
		ng = rows_each(X, w->i0, w->i1);
	if (X->ngrid)
		__atomic_fetch_add(X->ngrid, ng, __ATOMIC_RELAXED);
	if (X->nblock)
		__atomic_fetch_add(X->nblock, nb, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Is the blocked path worth its cost here?  Its certificate is checked on
 * a sample, up to 48 rows against up to 256 columns spread over B: yes
 * when at least half pass (speed only: every path gives the same bits).
 */
static int probe(const ectx *X)
{
	const fpl__exact_gemm *gk = X->gk;
	size_t nr = (size_t)gk->nr, rc = fpl__exact_gemm_rows(gk), rows = X->M < 48 ? X->M : 48;
	size_t qn = 256 / nr ? 256 / nr : 1, step, q, r, c, j, pass = 0, tried = 0;
	double *E, *ap;

	if (qn > gk->np)
		qn = gk->np;
	step = gk->np / qn;
	E = malloc(2 * rc * nr * sizeof *E);
	ap = fpl__scratch_alloc(fpl__exact_gemm_apack_len(gk) * sizeof *ap);
	for (q = 0; E && ap && q < qn; q++) {	/* one panel at a time, spread */
		fpl__exact_gemm_block(gk, X->A, rows, q * step, q * step + 1, E, E + rc * nr, ap);
		for (r = 0; r < rows; r++)
			for (c = 0, j = q * step * nr; c < nr && j < X->N; c++, j++) {
				int g = X->ra[r].t + X->rb[j].t;
				tried++;
				pass += X->ra[r].fin && X->rb[j].fin && g >= -1074 && g <= 970
					&& E[rc * nr + r * nr + c] < pow2(g + 53);
			}
	}
	free(E);
	fpl__scratch_free(ap);	/* run_rows takes it again */
	return 2 * pass >= tried && tried;
}

/* The workers run_rows starts for an M x N x K reference. */
static int workers(size_t M, size_t N, size_t K, int threads)
{
	return fpl__spawn_threads(threads, M, (double)M * (double)N * ((double)K + 1), 16384);
}

/* Rows split into `threads` contiguous ranges; a thread that cannot be
 * started has its range run here (the same results, later). */
static int run_rows(const ectx *X, int threads)
{
	eworker w[FPL_MAX_THREADS];
	int t, st = 0;

	threads = workers(X->M, X->N, X->K, threads);
	for (t = 0; t < threads; t++) {
		w[t].X = X;
		w[t].E = w[t].ap = w[t].one = NULL;
		fpl__spawn_share(X->M, threads, t, &w[t].i0, &w[t].i1);
		if (X->gk) {	/* the blocked path's buffers, per worker */
			size_t nr = (size_t)X->gk->nr, qc = QC_COLS / nr ? QC_COLS / nr : 1;
			w[t].E = fpl__scratch_alloc(2 * fpl__exact_gemm_rows(X->gk) * qc * nr
						    * sizeof *w[t].E);
			w[t].ap = fpl__scratch_alloc(fpl__exact_gemm_apack_len(X->gk) * sizeof *w[t].ap);
			w[t].one = malloc((X->K ? X->K : 1) * sizeof *w[t].one);
			if (!w[t].E || !w[t].ap || !w[t].one)
				st = -1;
		}
	}
	if (!st)
		fpl__spawn(ework, w, sizeof *w, threads);
	for (t = 0; t < threads; t++) {
		fpl__scratch_free(w[t].E);
		fpl__scratch_free(w[t].ap);
		free(w[t].one);
	}
	return st;
}

/* ------------------------------------------------------------ statistics */

/*
 * v[k] after a partial sort of v[0..n) (k < n, no NaN): Hoare partitions
 * around a median of three, keeping the side that holds k.  Afterwards
 * every v[i], i > k, is >= v[k] (and every v[i], i < k, is <= v[k]).
 */
static double select_kth(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, K = (ptrdiff_t)k;

	while (lo < hi) {
		double x = v[lo], y = v[lo + (hi - lo) / 2], z = v[hi], p, t;
		ptrdiff_t i = lo, j = hi;

		p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		while (i <= j) {
			while (v[i] < p)
				i++;
			while (v[j] > p)
				j--;
			if (i <= j) {
				t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				j--;
			}
		}
		/* now v[lo..j] <= p, v[i..hi] >= p, v[j+1..i-1] == p */
		if (K <= j)
			hi = j;
		else if (K >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/*
 * The k-th and k2-th smallest of v[0..n) (k <= k2 <= k + 1, k2 < n), into
 * *lo and *hi, when every v[i] is +0, positive or +inf (sign bit clear,
 * not NaN), by a radix selection on the bits, in place: for such values
 * the bits, as unsigned integers, are ordered as the values, so the
 * answers are the doubles of the k-th and k2-th smallest keys (order
 * statistics are values: the same as select_kth's).  Digits of 12 bits
 * from the top.  Each pass finds the buckets holding ranks k and k2; the
 * same one: its members are kept, moved to the front of v (v's order and
 * contents are lost; no branches, its members are in no pattern); two
 * (k2 = k + 1): rank k is the largest of the first bucket and rank k2
 * the least of the second (every member of a bucket is below every
 * member of the next), read in one more pass.  Returns 0, v untouched,
 * when a value is not of that kind or memory is short (the caller takes
 * select_kth), else 1.
 */
static int radix_pair(double *v, size_t n, size_t k, size_t k2, double *lo, double *hi)
{
	enum { DIG = 12, NB = 1 << DIG };
	size_t *cnt = calloc(NB, sizeof *cnt), m = n, i, q, b, b2, below, c;
	int shift = 64 - DIG;
	uint64_t bad = 0, u, d, mx, mn;

	if (!cnt)
		return 0;
	/* the first digit's counts while checking the values (the check
	 * fails for a sign bit or a NaN; counting is harmless meanwhile:
	 * every index is below NB) */
	for (i = 0; i < n; i++) {
		u = fpl__bits(v[i]);
		bad |= u > FPL__EXP_MASK;
		cnt[u >> shift]++;
	}
	if (bad) {
		free(cnt);
		return 0;
	}
	/* invariant: v[0..m) are the values that share the bits above
	 * shift + DIG with both answers, which are the k-th and k2-th
	 * smallest of them; cnt counts their digits at shift */
	for (;;) {
		for (b = 0, below = 0; below + cnt[b] <= k; b++)
			below += cnt[b];
		for (b2 = b, c = below; c + cnt[b2] <= k2; b2++)
			c += cnt[b2];
		if (b2 != b) {
			for (i = 0, mx = 0, mn = FPL__EXP_MASK; i < m; i++) {
				u = fpl__bits(v[i]);
				d = (u >> shift) & (NB - 1);
				mx = d == b && u > mx ? u : mx;
				mn = d == b2 && u < mn ? u : mn;
			}
			*lo = fpl__from_bits(mx);
			*hi = fpl__from_bits(mn);
			break;
		}
		k -= below;
		k2 -= below;
		for (i = 0, q = 0; i < m; i++) {	/* in place: q <= i */
			double x = v[i];
			v[q] = x;
			q += ((fpl__bits(x) >> shift) & (NB - 1)) == b;
		}
		m = q;
		if (m == 1 || shift == 0) {	/* one left, or all equal */
			*lo = *hi = v[0];
			break;
		}
		shift = shift > DIG ? shift - DIG : 0;
		memset(cnt, 0, NB * sizeof *cnt);
		for (i = 0; i < m; i++)
			cnt[(fpl__bits(v[i]) >> shift) & (NB - 1)]++;
	}
	free(cnt);
	return 1;
}

/* The median of v[0..n), n >= 1; v's order and contents are lost.  An
 * even count gives the mean of the two middle values (ranks n/2 - 1 and
 * n/2). */
static double median(double *v, size_t n)
{
	double a, b, s;
	size_t i;

	if (!radix_pair(v, n, (n - 1) / 2, n / 2, &a, &b)) {
		if (n % 2)
			return select_kth(v, n, n / 2);
		a = select_kth(v, n, n / 2 - 1);
		b = v[n / 2];
		for (i = n / 2 + 1; i < n; i++)
			if (v[i] < b)
				b = v[i];
	}
	if (n % 2)
		return a;
	s = a + b;
	return isinf(s) && !isinf(a) && !isinf(b) ? a / 2 + b / 2 : s / 2;
}

/* 2^e as a multiplier: ldexp(x, e) and x * 2^e are both x 2^e rounded
 * once to nearest (the same bits, subnormal results included) when 2^e
 * is a binary64, -1022 <= e <= 1023; the scales here have -1023 <= e <=
 * 1074 (ilogb of a finite positive value, negated), and e > 1023 (a
 * subnormal largest entry) keeps ldexp: sc = 0 says so. */
static double scale_of(int e)
{
	return e >= -1022 && e <= 1023 ? pow2(e) : 0.0;
}

/*
 * The norms, in one pass over the outputs:
 *   ||abserr over the outputs of class C_ABS||_F = *nd 2^*xd, and the
 *   same of den, *dd 2^*xg (*nd = 0: zero, inf: an entry is inf),
 *   scaled so that no square overflows; ma and mg are the largest of
 *   those entries (0 when none exceeds 0; NaNs never do), as summarize
 *   finds them;
 *   *rr = sqrt(sum of rel[0..q)^2 / q) (q >= 1; rel >= 0), the squares
 *   scaled by the power of two that brings the largest, mr (summarize's
 *   max_rel: the same scan, from 0 with >), to [1, 2): +inf when one is.
 * Each is a sum of squares in index order, a chain of its own; the three
 * chains are independent and interleaved so that their latencies
 * overlap (the bits are those of three separate loops: no sum is
 * reordered).  A norm that is 0 or inf runs its chain on the harmless
 * scale 2^0 and ignores it.
 */
__attribute__((noinline)) static void norms(const ectx *X, size_t n, size_t q, double ma,
					     double mg, double mr, double *nd, int *xd,
					     double *dd, int *xg, double *rr)
{
	const double *ab = X->abserr, *dn = X->den, *rl = X->rel;
	const unsigned char *cls = X->cls;
	int ua = ma != 0 && !isinf(ma), ug = mg != 0 && !isinf(mg), ur = mr != 0 && !isinf(mr);
	int ea = ua ? ilogb(ma) : 0, eg = ug ? ilogb(mg) : 0, er = ur ? ilogb(mr) : 0;
	double sa = scale_of(-ea), sg = scale_of(-eg), sr = scale_of(-er);
	double ta = 0, tg = 0, tr = 0, x;
	size_t o;

	if (sa != 0 && sg != 0 && sr != 0) {	/* the usual case: products */
		double y, z;
		for (o = 0; o < q; o++) {
			z = rl[o] * sr;
			tr += z * z;
			if (cls[o] & C_ABS) {
				x = ab[o] * sa;
				y = dn[o] * sg;
				ta += x * x;
				tg += y * y;
			}
		}
		for (; o < n; o++)
			if (cls[o] & C_ABS) {
				x = ab[o] * sa;
				y = dn[o] * sg;
				ta += x * x;
				tg += y * y;
			}
	} else
		for (o = 0; o < n; o++) {
			if (cls[o] & C_ABS) {
				x = sa != 0 ? ab[o] * sa : ldexp(ab[o], -ea);	/* one rounding */
				ta += x * x;
				x = sg != 0 ? dn[o] * sg : ldexp(dn[o], -eg);
				tg += x * x;
			}
			if (o < q) {
				x = sr != 0 ? rl[o] * sr : ldexp(rl[o], -er);
				tr += x * x;
			}
		}
	*xd = ea;
	*nd = ua ? sqrt(ta) : ma;
	*xg = eg;
	*dd = ug ? sqrt(tg) : mg;
	*rr = !ur ? mr : q ? ldexp(sqrt(tr / (double)q), er) : 0.0;
}

static void summarize(fpl_accum_errors *err, const ectx *X, size_t n)
{
	double sum_rel = 0, nd, dd, mx_den = 0, rr;
	double mr = err->max_rel, ma = err->max_abs, *rel = X->rel;
	const double *ab = X->abserr, *dn = X->den;
	const unsigned char *cls = X->cls;
	uint64_t nz = 0, nf = 0, cmp = 0, nn = 0, ni = 0;
	size_t o, q = 0;
	int xd, xg;

	/* the fields in locals: stores to rel[] could otherwise alias them */
	for (o = 0; o < n; o++) {
		unsigned char c = cls[o];
		if (c & C_REL) {
			double v = rel[o];
			sum_rel += v;
			if (v > mr)
				mr = v;
			rel[q] = v;	/* compact, in order */
			q++;
		}
		if ((c & C_ABS) && ab[o] > ma)
			ma = ab[o];
		if ((c & C_ABS) && dn[o] > mx_den)
			mx_den = dn[o];
		nz += (c & C_ZERO) != 0;
		nf += (c & C_NONFIN) != 0;
		cmp += (c & (C_ABS | C_NONFIN)) != 0;
		nn += (c & C_NAN) != 0;
		ni += (c & C_INF) != 0;
	}
	err->rel_n += q;
	err->max_rel = mr;
	err->max_abs = ma;
	err->became_zero += nz;
	err->nonfinite += nf;
	err->compared += cmp;
	err->nan += nn;
	err->inf += ni;
	/* the norms first: the median then spends rel */
	norms(X, n, q, err->max_abs, mx_den, err->max_rel, &nd, &xd, &dd, &xg, &rr);
	if (q) {
		err->mean_rel = sum_rel / (double)q;
		err->rms_rel = rr;
		err->median_rel = median(X->rel, q);
	}
	err->normwise = dd == 0 ? 0 : ldexp(nd / dd, xd - xg);
	if (err->nonfinite) {
		err->max_abs = INFINITY;
		err->normwise = INFINITY;
	}
}

/*
 * The streamed sums of squares.  norms forms t = sum of fl(fl(x 2^-e)^2)
 * over a norm's entries x in output order (each addition rounded), e =
 * ilogb of their largest; fold forms u = sum of fl(x^2), the same chain
 * unscaled.  Claim: with s = 2^-2e, if -500 <= e <= 500, u < 2^1022 and
 * every nonzero fl(x^2) = w has w >= 2^-1020 and w s >= 2^-1020, then t =
 * u s (a binary64: the product is exact).  Proof: x 2^-e < 2 (x <= the
 * largest < 2^(e+1)), so nothing overflows scaled; unscaled, every
 * partial sum is at most u (the additions of nonnegative terms are
 * monotone), so below 2^1022.  A nonzero x has x^2 >= w / (1 + 2^-52) >
 * 2^-1021 and x^2 s > 2^-1021 likewise: x 2^-e > 2^-511 is normal, hence
 * exact, and x^2 and x^2 s both lie in the normal range, where rounding
 * to nearest commutes with scaling by a power of two: fl((x 2^-e)^2) =
 * fl(x^2) s.  A zero x gives 0 in both.  Each partial sum, exact, is 0
 * or at least one nonzero term (>= 2^-1020, and >= 2^-1020 scaled) and
 * below 2^1022 (scaled: below 4 times the count): normal in both chains,
 * so by induction each scaled partial sum is the unscaled one times s.
 * Returns 0 when the conditions fail (then the caller recomputes).
 */
static int rescale(double u, double least, int e, double *t)
{
	double s;

	if (e < -500 || e > 500 || !(u < 0x1p1022))
		return 0;
	s = pow2(-2 * e);
	if (least != INFINITY && (least < 0x1p-1020 || least * s < 0x1p-1020))
		return 0;
	*t = u * s;
	return 1;
}

/* norms' chain for rel[0..q), scaled by 2^-er (rescale's failure). */
static double rel_chain(const double *rel, size_t q, int er)
{
	double sr = scale_of(-er), t = 0, x;
	size_t o;

	for (o = 0; o < q; o++) {
		x = sr != 0 ? rel[o] * sr : ldexp(rel[o], -er);
		t += x * x;
	}
	return t;
}

/*
 * summarize from S (fold's sums over every output, rel compacted to
 * rel[0..S->q)): the same fields, bit for bit, where rescale proves the
 * unscaled sums of squares of abserr and den to be norms' scaled ones
 * (rel's chain is formed again from rel when it does not); else -1,
 * nothing written.  rel's contents are lost (the median).
 */
static int summarize_stream(fpl_accum_errors *err, double *rel, const esum *S)
{
	double ta = 0, tg = 0, tr = 0, nd, dd;
	double ma = S->ma, mg = S->mg, mr = S->mr;
	int ua = ma != 0 && !isinf(ma), ug = mg != 0 && !isinf(mg), ur = mr != 0 && !isinf(mr);
	int ea = ua ? ilogb(ma) : 0, eg = ug ? ilogb(mg) : 0, er = ur ? ilogb(mr) : 0;
	size_t q = S->q;

	if ((ua && !rescale(S->ta, S->la, ea, &ta)) || (ug && !rescale(S->tg, S->lg, eg, &tg)))
		return -1;
	err->rel_n += q;
	err->max_rel = mr;
	err->max_abs = ma;
	err->became_zero += S->nz;
	err->nonfinite += S->nf;
	err->compared += S->cmp;
	err->nan += S->nn;
	err->inf += S->ni;
	nd = ua ? sqrt(ta) : ma;
	dd = ug ? sqrt(tg) : mg;
	if (q) {
		err->mean_rel = S->sum_rel / (double)q;
		if (ur && !rescale(S->tr, S->lr, er, &tr))
			tr = rel_chain(rel, q, er);
		err->rms_rel = !ur ? mr : ldexp(sqrt(tr / (double)q), er);
		err->median_rel = median(rel, q);
	}
	err->normwise = dd == 0 ? 0 : ldexp(nd / dd, ea - eg);
	if (err->nonfinite) {
		err->max_abs = INFINITY;
		err->normwise = INFINITY;
	}
	return 0;
}

/* ------------------------------------------------------------ driver */

/* dst (rows x K) = the matrix src[i*si + k*sk]. */
static void pack(double *dst, size_t rows, size_t K, const double *src, ptrdiff_t si,
		 ptrdiff_t sk)
{
	size_t i, k, i0, k0;

	if (sk == 1) {
		for (i = 0; i < rows; i++)
			memcpy(dst + i * K, src + (ptrdiff_t)i * si, K * sizeof *dst);
		return;
	}
	/* a transposition, in 32 x 32 tiles (the strided reads stay in cache) */
	for (i0 = 0; i0 < rows; i0 += 32)
		for (k0 = 0; k0 < K; k0 += 32)
			for (i = i0; i < rows && i < i0 + 32; i++)
				for (k = k0; k < K && k < k0 + 32; k++)
					dst[i * K + k] = src[(ptrdiff_t)i * si + (ptrdiff_t)k * sk];
}

int fpl_accum_errors_gemm(fpl_accum_errors *err, double *exact, const double *r,
			  size_t ldr, const fpl_accum_model *mod, size_t m, size_t n,
			  size_t kk, const double *a, size_t lda, int transa,
			  const double *b, size_t ldb, int transb, const double *c,
			  size_t ldc, int threads)
{
	return fpl_accum_errors_gemm_progress(err, exact, r, ldr, mod, m, n, kk, a, lda, transa,
					      b, ldb, transb, c, ldc, threads, NULL);
}

/* The grid form of A's and Bt's rows (exact_fast.c), into X; left NULL
 * (the long path for all) when no row qualifies or memory is short.
 * *mem receives the one allocation to free. */
static void grid_prepare(ectx *X, void **mem, int ints)
{
	size_t rows = X->M + (X->Bt || X->B ? X->N : 0), nv;
	fpl__grid_row *gr;
	int64_t *v;

	*mem = NULL;
	if (__builtin_mul_overflow(rows, X->K, &nv) || nv > ((size_t)1 << 56))
		return;
	if (!ints)
		nv = 0;
	v = malloc((nv ? nv : 1) * sizeof *v + rows * sizeof *gr);
	if (!v)
		return;
	gr = (fpl__grid_row *)(v + (nv ? nv : 1));
	fpl__exact_grid_rows(ints ? v : NULL, gr, X->A, X->M, X->K);	/* kept: the
						 * compensated path reads the rows too */
	X->ia = ints ? v : NULL;
	X->ra = gr;
	if (X->Bt) {
		fpl__exact_grid_rows(ints ? v + X->M * X->K : NULL, gr + X->M, X->Bt, X->N, X->K);
		X->ib = ints ? v + X->M * X->K : NULL;
		X->rb = gr + X->M;
	} else if (X->B) {	/* the blocked path: B's columns from its panels */
		fpl__exact_grid_cols(gr + X->M, X->gk);
		X->rb = gr + X->M;
	}
	*mem = v;
}

int fpl__accum_errors_outputs(double *exact, double *rel, double *abserr, double *den,
			      unsigned char *cls, const double *r, size_t ldr, size_t m,
			      size_t n, size_t kk, const double *pa, const double *pbt,
			      const double *c, size_t ldc, int mode, int threads,
			      uint64_t *progress, uint64_t *ngrid)
{
	return fpl__accum_errors_outputs_ex(exact, rel, abserr, den, cls, r, ldr, m, n, kk, pa,
					    pbt, NULL, 0, 0, c, ldc, mode, 1, threads, progress, ngrid,
					    NULL);
}

/* fpl__accum_errors_outputs_ex, streamed into S when S is not NULL
 * (then threads is 1 and abserr, den and cls are S's band buffers):
 * returns 1, having done nothing, when the blocked path is not taken. */
static int outputs_run(double *exact, double *rel, double *abserr, double *den,
		       unsigned char *cls, const double *r, size_t ldr, size_t m, size_t n,
		       size_t kk, const double *pa, const double *pbt, const double *b,
		       ptrdiff_t sbk, ptrdiff_t sbj, const double *c, size_t ldc, int mode,
		       int blocked, int threads, uint64_t *progress, uint64_t *ngrid,
		       uint64_t *nblock, esum *S)
{
	void *mem = NULL;
	double *own = NULL;
	int *tb = NULL;
	fpl__exact_gemm gk;
	ectx X;
	int st = 0;

	memset(&X, 0, sizeof X);
	X.M = m;
	X.N = n;
	X.K = kk;
	X.A = pa;
	X.Bt = pbt;
	X.c = c;
	X.ldc = ldc;
	X.r = r;
	X.ldr = ldr;
	X.exact = exact;
	X.rel = rel;
	X.abserr = abserr;
	X.den = den;
	X.cls = cls;
	X.progress = progress;
	X.slack = mode > 0 ? mode : 0;
	X.ngrid = ngrid;
	X.nblock = nblock;
	gk.bp = NULL;
	if (!pbt && b) {
		X.B = b;
		X.sbk = sbk;
		X.sbj = sbj;
	}
	/* the blocked path: a GEMM (not sums) of at least 4 x 4 outputs,
	 * where a probe finds it worth its cost */
	if (mode >= 0 && blocked && (pbt || X.B) && m >= 4 && n >= 4 && kk) {
		fpl__exact_gemm_pick(&gk);
		if (!(pbt ? fpl__exact_gemm_pack_b(&gk, pbt, 1, (ptrdiff_t)kk, n, kk)
			  : fpl__exact_gemm_pack_b(&gk, b, sbk, sbj, n, kk))) {
			X.gk = &gk;
			grid_prepare(&X, &mem, 0);
			if (!X.ra || !probe(&X)) {
				X.gk = NULL;
				free(mem);
				mem = NULL;
				X.ra = X.rb = NULL;
			} else if (gk.rd && (tb = malloc(n * sizeof *tb))) {
				size_t j;
				for (j = 0; j < n; j++)
					tb[j] = X.rb[j].fin ? X.rb[j].t : TB_NONFIN;
				X.tb = tb;
			}
		}
	}
	if (S && !X.gk) {
		st = 1;
		goto out;
	}
	X.sum = S;
	if (!X.gk && !X.Bt && X.B) {	/* the paths below read B's columns as rows */
		size_t nb, j, k;
		if (__builtin_mul_overflow(n, kk, &nb) || !(own = malloc((nb ? nb : 1) * sizeof *own))) {
			st = FPL_ENOMEM;
			goto out;
		}
		for (j = 0; j < n; j++)
			for (k = 0; k < kk; k++)
				own[j * kk + k] = b[(ptrdiff_t)k * sbk + (ptrdiff_t)j * sbj];
		X.Bt = own;
		X.B = NULL;
	}
	if (mode >= 0 && !X.gk)
		grid_prepare(&X, &mem, 1);
	if (run_rows(&X, threads))
		st = FPL_ENOMEM;
out:
	fpl__exact_gemm_release(&gk);
	free(mem);
	free(own);
	free(tb);
	return st;
}

int fpl__accum_errors_outputs_ex(double *exact, double *rel, double *abserr, double *den,
				 unsigned char *cls, const double *r, size_t ldr, size_t m,
				 size_t n, size_t kk, const double *pa, const double *pbt,
				 const double *b, ptrdiff_t sbk, ptrdiff_t sbj, const double *c,
				 size_t ldc, int mode, int blocked, int threads,
				 uint64_t *progress, uint64_t *ngrid, uint64_t *nblock)
{
	return outputs_run(exact, rel, abserr, den, cls, r, ldr, m, n, kk, pa, pbt, b, sbk, sbj, c,
			   ldc, mode, blocked, threads, progress, ngrid, nblock, NULL);
}

/*
 * The reference streamed (esum): one worker by the blocked path, rel
 * whole, abserr, den and cls one band at a time.  Returns 0 when done
 * (E's fields written), 1 when the blocked path is not taken (nothing
 * done), 2 when it ran but rescale could not prove the norms (progress
 * counted; the caller runs the reference again with the whole arrays),
 * or an error.
 */
static int errors_streamed(fpl_accum_errors *E, double *exact, const double *r, size_t ldr,
			   size_t m, size_t n, size_t kk, const double *pa, const double *b,
			   ptrdiff_t sbk, ptrdiff_t sbj, const double *c, size_t ldc,
			   uint64_t *progress)
{
	size_t nb;
	double *rel, *band;
	esum S;
	int st;

	if (__builtin_mul_overflow(n, (size_t)48 * (2 * sizeof *band + 1), &nb))
		return 1;
	rel = fpl__scratch_alloc(m * n * sizeof *rel);
	band = fpl__scratch_alloc(nb);
	if (!rel || !band) {
		st = FPL_ENOMEM;
		goto out;
	}
	memset(&S, 0, sizeof S);
	S.ab = band;
	S.dn = band + 48 * n;
	S.cls = (unsigned char *)(band + 96 * n);
	S.la = S.lg = S.lr = INFINITY;
	st = outputs_run(exact, rel, S.ab, S.dn, S.cls, r, ldr, m, n, kk, pa, NULL, b, sbk, sbj, c,
			 ldc, 0, 1, 1, progress, NULL, NULL, &S);
	if (st)
		goto out;
	st = summarize_stream(E, rel, &S) ? 2 : 0;
out:
	fpl__scratch_free(band);
	fpl__scratch_free(rel);
	return st;
}

int fpl_accum_errors_gemm_progress(fpl_accum_errors *err, double *exact, const double *r,
				   size_t ldr, const fpl_accum_model *mod, size_t m, size_t n,
				   size_t kk, const double *a, size_t lda, int transa,
				   const double *b, size_t ldb, int transb, const double *c,
				   size_t ldc, int threads, uint64_t *progress)
{
	size_t nA, nB, nC;
	double *pa = NULL, *buf = NULL;
	unsigned char *cls = NULL;
	ptrdiff_t sbk, sbj;
	fpl_accum_errors E;
	ectx X;
	int st = 0, mode;

	if (!err || !mod || fpl_accum_check(mod, NULL) || (!b && n != 1))
		return FPL_EINVAL;
	if (fpl__exact_gemm_env(&mode))
		return FPL_ENOTFOUND;
	if (m && n
	    && (!r || ldr < n || (c && ldc < n)
		|| (kk && (!a || (!transa && lda < kk) || (transa && lda < m)))
		|| (kk && b && ((!transb && ldb < n) || (transb && ldb < kk)))))
		return FPL_EINVAL;
	if (__builtin_mul_overflow(m, kk, &nA) || __builtin_mul_overflow(n, kk, &nB)
	    || __builtin_mul_overflow(m, n, &nC) || nA > ((size_t)1 << 56)
	    || nB > ((size_t)1 << 56) || nC > ((size_t)1 << 56))
		return FPL_ENOMEM;
	memset(&E, 0, sizeof E);
	E.outputs = nC;
	E.bound = fpl_accum_bound(mod, kk);
	if (!nC) {
		*err = E;
		return 0;
	}
	/* A as it is when its rows are already packed */
	pa = !transa && lda == kk ? NULL : malloc((nA ? nA : 1) * sizeof *pa);
	if (!pa && (transa || lda != kk)) {
		st = FPL_ENOMEM;
		goto out;
	}
	if (kk && pa)
		pack(pa, m, kk, a, transa ? 1 : (ptrdiff_t)lda, transa ? (ptrdiff_t)lda : 1);
	sbk = transb ? 1 : (ptrdiff_t)ldb;
	sbj = transb ? (ptrdiff_t)ldb : 1;
	/* one worker: streamed, a third of the memory (its page faults on a
	 * first call cost a fifth of the reference) and no pass over it */
	if (mode == 0 && b && workers(m, n, kk, threads) == 1) {
		st = errors_streamed(&E, exact, r, ldr, m, n, kk, pa ? pa : a, b, sbk, sbj, c, ldc,
				     progress);
		if (st == 0)
			*err = E;
		if (st <= 0)
			goto out;
		if (st == 2)
			progress = NULL;	/* counted by the first run */
	}
	/* from this thread's scratch cache, as the emulated GEMM's buffers:
	 * a repeated call pays no page faults for them (util/scratch.h) */
	buf = fpl__scratch_alloc(3 * nC * sizeof *buf);
	cls = fpl__scratch_alloc(nC);
	if (!buf || !cls) {
		st = FPL_ENOMEM;
		goto out;
	}
	st = fpl__accum_errors_outputs_ex(exact, buf, buf + nC, buf + 2 * nC, cls, r, ldr, m, n,
					  kk, pa ? pa : a, NULL, b, sbk, sbj, c, ldc,
					  mode < 0 ? -1 : 0, mode == 0, threads, progress, NULL,
					  NULL);
	if (st)
		goto out;
	memset(&X, 0, sizeof X);
	X.rel = buf;
	X.abserr = buf + nC;
	X.den = buf + 2 * nC;
	X.cls = cls;
	summarize(&E, &X, nC);
	*err = E;
out:
	free(pa);
	fpl__scratch_free(buf);
	fpl__scratch_free(cls);
	return st;
}
