/* SPDX-License-Identifier: MIT */
/*
 * tgemmref.c - the GEMM error reference's grid path (src/accum/exact_fast.c)
 * against the exact long accumulator it replaces (issue 24, item 4).
 *
 * Every output's exact value, relative error, absolute error, |A||B| + |C|
 * entry and class must be the same bits whether the grid path is allowed
 * (mode 0) or not (mode -1: fpl_exact for every output, the reference
 * texact checks against MPFR).  The inputs: random narrow formats (the
 * binary64 path), wider ones (the int128 path), inputs built to defeat
 * the grid (x, -x pairs with tiny terms, exponents across bf16's, fp32's
 * and fp64's ranges, subnormals, K up to 10^6, NaN and infinities,
 * results off the grid), with results near the exact value, far from it,
 * zero or not finite.  The test also checks that the grid path did run
 * (a count of its outputs) and that a deliberately wrong certificate (the
 * width test widened by 40 bits; the compensated path's error bound
 * dropped) is caught: the mutant must differ from the long accumulator
 * somewhere.  A few values are checked against hand
 * computations, so that both paths cannot be wrong together there, and
 * the shared readings (rounding a window, the relative error's quotient)
 * against the engine's rounding and a plain 128-bit division.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"
#include "accum/exact_internal.h"

typedef struct run {
	double *exact, *rel, *abserr, *den;
	unsigned char *cls;
} run;

static int run_alloc(run *R, size_t n)
{
	R->exact = malloc(n * sizeof(double));
	R->rel = malloc(n * sizeof(double));
	R->abserr = malloc(n * sizeof(double));
	R->den = malloc(n * sizeof(double));
	R->cls = malloc(n);
	return R->exact && R->rel && R->abserr && R->den && R->cls;
}

static void run_free(run *R)
{
	free(R->exact);
	free(R->rel);
	free(R->abserr);
	free(R->den);
	free(R->cls);
}

/* Class bits as error_gemm.c writes them: 1 rel, 2 abs (and den). */
static void outputs(run *R, const double *r, size_t m, size_t n, size_t k, const double *a,
		    const double *bt, const double *c, int mode, uint64_t *ngrid)
{
	size_t i;

	for (i = 0; i < m * n; i++)	/* unwritten entries: -1 */
		R->rel[i] = R->abserr[i] = R->den[i] = -1.0;
	fpl__accum_errors_outputs(R->exact, R->rel, R->abserr, R->den, R->cls, r, n, m, n, k, a,
				  bt, c, n, mode, 2, NULL, ngrid);
}

static uint64_t g_outputs, g_grid;

/* Compare mode `mode` with the long accumulator; returns the mismatches
 * (reported as failures unless `quiet`). */
static uint64_t compare(const char *what, const double *r, size_t m, size_t n, size_t k,
			const double *a, const double *bt, const double *c, int mode, int quiet)
{
	run L, F;
	uint64_t bad = 0, ng = 0;
	size_t o;

	if (!run_alloc(&L, m * n) || !run_alloc(&F, m * n)) {
		h_fail("%s: out of memory", what);
		return 1;
	}
	outputs(&L, r, m, n, k, a, bt, c, -1, NULL);
	outputs(&F, r, m, n, k, a, bt, c, mode, &ng);
	for (o = 0; o < m * n; o++) {
		/* the entries its class says are read (error_gemm.c's summary) */
		int ok = h_same(L.exact[o], F.exact[o]) && L.cls[o] == F.cls[o]
			 && (!(L.cls[o] & 1) || h_same(L.rel[o], F.rel[o]))
			 && (!(L.cls[o] & 2)
			     || (h_same(L.abserr[o], F.abserr[o]) && h_same(L.den[o], F.den[o])));
		if (!ok) {
			bad++;
			if (!quiet)
				h_fail("%s: output %zu (K %zu): long exact %a rel %a abs %a den %a cls %d;"
				       " grid exact %a rel %a abs %a den %a cls %d (r %a)",
				       what, o, k, L.exact[o], L.rel[o], L.abserr[o], L.den[o], L.cls[o],
				       F.exact[o], F.rel[o], F.abserr[o], F.den[o], F.cls[o], r[o]);
		}
	}
	if (!quiet) {
		h_check(bad == 0);
		g_outputs += m * n;
		g_grid += ng;
	}
	run_free(&L);
	run_free(&F);
	return bad;
}

/* ------------------------------------------------------------ inputs */

/* A value of a format-like shape: `bits` significant bits, leading-bit
 * exponent in [elo, ehi], now and then zero. */
static double val(h_rng *r, int elo, int ehi, int bits)
{
	if (h_rng_below(r, 16) == 0)
		return 0.0;
	return h_rng_value(r, elo, ehi, bits, 0);
}

/* Results to compare: near the exact value (rounded to fp32 or bf16-ish
 * or moved by ulps), zero, the negation, off the grid, far, not finite. */
static void results(h_rng *r, double *y, const double *e, size_t n)
{
	size_t o;

	for (o = 0; o < n; o++) {
		double x = e[o];
		switch (h_rng_below(r, 12)) {
		case 0:
			y[o] = x;
			break;
		case 1:
		case 2:
			y[o] = (double)(float)x;
			break;
		case 3:	/* 8 significant bits */
			y[o] = isfinite(x) && x != 0 ? ldexp(nearbyint(ldexp(x, 7 - ilogb(x))), ilogb(x) - 7) : x;
			break;
		case 4:
			y[o] = nextafter(nextafter(x, INFINITY), INFINITY);
			break;
		case 5:
			y[o] = 0.0;
			break;
		case 6:
			y[o] = -x;
			break;
		case 7:	/* off any grid: a tiny odd tail */
			y[o] = x + 0x1.3p-1070;
			break;
		case 8:
			y[o] = h_rng_value(r, -30, 30, 53, 0);
			break;
		case 9:
			y[o] = h_rng_below(r, 2) ? NAN : -INFINITY;
			break;
		case 10:
			y[o] = x * (1 + 0x1p-20);
			break;
		default:
			y[o] = ldexp(x, 1);
			break;
		}
	}
}

/* One random GEMM: A's rows and Bt's rows from gen (elo, ehi, bits per
 * row), c with probability, results from the exact values. */
typedef struct shape {
	int elo, ehi, bits;
} shape;

static void gemm_case(const char *what, h_rng *r, size_t m, size_t n, size_t k, shape sa,
		      shape sb, int with_b, int with_c, int specials)
{
	double *a = malloc((m * k + 1) * sizeof *a), *bt = malloc((n * k + 1) * sizeof *bt);
	double *c = malloc(m * n * sizeof *c), *y = malloc(m * n * sizeof *y);
	size_t i, nn = with_b ? n : 1;
	run L;

	if (!a || !bt || !c || !y || !run_alloc(&L, m * n)) {
		h_fail("%s: out of memory", what);
		return;
	}
	for (i = 0; i < m * k; i++)
		a[i] = val(r, sa.elo, sa.ehi, sa.bits);
	for (i = 0; i < n * k; i++)
		bt[i] = val(r, sb.elo, sb.ehi, sb.bits);
	for (i = 0; i < m * n; i++)
		c[i] = h_rng_below(r, 2) ? val(r, sa.elo + sb.elo, sa.ehi + sb.ehi, 24) : 0.0;
	if (specials && m * k > 0)
		for (i = 0; i < 3; i++) {
			size_t p = (size_t)h_rng_below(r, m * k);
			a[p] = h_rng_below(r, 2) ? NAN : INFINITY;
			c[h_rng_below(r, m * n)] = -INFINITY;
		}
	/* the exact values first (the long path), then results around them */
	memset(y, 0, m * n * sizeof *y);
	outputs(&L, y, m, nn, k, a, with_b ? bt : NULL, with_c ? c : NULL, -1, NULL);
	results(r, y, L.exact, m * nn);
	compare(what, y, m, nn, k, a, with_b ? bt : NULL, with_c ? c : NULL, 0, 0);
	run_free(&L);
	free(a);
	free(bt);
	free(c);
	free(y);
}

/* Rows of x, -x pairs (huge cancellation) plus a few tiny terms. */
static void cancel_case(h_rng *r, size_t m, size_t n, size_t k, int spread)
{
	double *a = malloc(m * k * sizeof *a), *bt = malloc(n * k * sizeof *bt);
	double *y = malloc(m * n * sizeof *y);
	run L;
	size_t i, j, p;

	if (!a || !bt || !y || !run_alloc(&L, m * n)) {
		h_fail("cancel: out of memory");
		return;
	}
	for (i = 0; i < m; i++)
		for (p = 0; p + 1 < k; p += 2) {
			double x = h_rng_value(r, -spread, spread, 24, 0);
			a[i * k + p] = x;
			a[i * k + p + 1] = -x;
		}
	for (j = 0; j < n; j++)
		for (p = 0; p + 1 < k; p += 2) {
			double x = h_rng_value(r, -spread / 2, spread / 2, 8, 0);
			bt[j * k + p] = bt[j * k + p + 1] = x;
		}
	if (k % 2)
		for (i = 0; i < m; i++)
			a[i * k + k - 1] = h_rng_value(r, -spread - 40, -spread, 11, 0);
	if (k % 2)
		for (j = 0; j < n; j++)
			bt[j * k + k - 1] = h_rng_value(r, -4, 4, 11, 0);
	/* a tiny term inside some rows: x + tiny, -x */
	for (i = 0; i < m; i += 3)
		if (k >= 2)
			a[i * k] += ldexp(a[i * k], -20);
	memset(y, 0, m * n * sizeof *y);
	outputs(&L, y, m, n, k, a, bt, NULL, -1, NULL);
	results(r, y, L.exact, m * n);
	compare("cancellation", y, m, n, k, a, bt, NULL, 0, 0);
	run_free(&L);
	free(a);
	free(bt);
	free(y);
}

/* Hand-computed values: both paths must give them. */
static void hand(void)
{
	/* A = [1 2; 3 4] (e4m3-like), B = [0.5 -1; 0.25 8]: A.B = [1 15; 2.5 29];
	 * results r = [1 15.5; 2.5 -29]: abs errors 0, 0.5, 0, 58; rel 0,
	 * 1/30, 0, 2; |A||B| = [1 17; 2.5 35] */
	const double a[4] = { 1, 2, 3, 4 }, bt[4] = { 0.5, 0.25, -1, 8 };
	const double y[4] = { 1, 15.5, 2.5, -29 };
	const double ex[4] = { 1, 15, 2.5, 29 }, ab[4] = { 0, 0.5, 0, 58 };
	const double rl[4] = { 0, 1.0 / 30, 0, 2 }, dn[4] = { 1, 17, 2.5, 35 };
	/* a cancellation: 2^60 + 1 - 2^60 = 1, exact; the grid path's int128 */
	const double a2[3] = { 0x1p60, 1, -0x1p60 }, b2[3] = { 1, 1, 1 }, y2 = 0.75;
	uint64_t ng;
	int mode, o;

	for (mode = -1; mode <= 0; mode++) {
		run R;
		if (!run_alloc(&R, 4))
			return;
		ng = 0;
		outputs(&R, y, 2, 2, 2, a, bt, NULL, mode, &ng);
		for (o = 0; o < 4; o++)
			if (!h_check(h_same(R.exact[o], ex[o]) && h_same(R.abserr[o], ab[o])
				     && h_same(R.rel[o], rl[o]) && h_same(R.den[o], dn[o])))
				h_fail("hand 2x2 mode %d output %d: %a %a %a %a", mode, o, R.exact[o],
				       R.abserr[o], R.rel[o], R.den[o]);
		if (mode == 0 && !h_check(ng == 4))
			h_fail("hand 2x2: the grid path did %llu of 4", (unsigned long long)ng);
		ng = 0;
		outputs(&R, &y2, 1, 1, 3, a2, b2, NULL, mode, &ng);
		if (!h_check(h_same(R.exact[0], 1.0) && h_same(R.abserr[0], 0.25)
			     && h_same(R.rel[0], 0.25) && h_same(R.den[0], 0x1p61)))
			h_fail("hand cancellation mode %d: %a %a %a %a", mode, R.exact[0],
			       R.abserr[0], R.rel[0], R.den[0]);
		if (mode == 0 && !h_check(ng == 1))
			h_fail("hand cancellation: not on the grid path");
		run_free(&R);
	}
}

/*
 * The readings' arithmetic on its own: fpl__exact_nearest64 (a direct
 * rounding for normal results) against the engine's fpl_round_parts in
 * fp64 nearest-even, and fpl__exact_relerr_parts (64-bit divisions)
 * against the 128-bit quotient it replaced, written out here.
 */
static double relerr_ref(int64_t dx, uint64_t dhi, uint64_t dlo, int64_t ex, uint64_t ehi)
{
	unsigned __int128 N = ((unsigned __int128)dhi << 64) | dlo, Q, R, F;
	fpl_format f64 = h_format("fp64");
	fpl_state st;
	int dst;

	fpl_state_init(&st, 0);
	Q = N / ehi;
	R = N % ehi;
	F = (R << 64) / ehi;
	dst = (R << 64) % ehi != 0;
	ex += 64;
	if (Q >> 64) {
		dst |= (int)(F & 1);
		F = (F >> 1) | ((unsigned __int128)(Q & 1) << 63);
		Q >>= 1;
		dx += 1;
	}
	return fpl_round_parts(&f64, 0, dx - ex - 64, (uint64_t)Q, (uint64_t)F, dst, FPL_RND_NE,
			       &st);
}

static void readings(h_rng *r)
{
	fpl_format f64 = h_format("fp64");
	fpl_state st;
	long i;

	fpl_state_init(&st, 0);
	for (i = 0; i < 400000; i++) {
		uint64_t hi = h_rng_next(r) | (1ull << 63), lo = h_rng_next(r), eh;
		int64_t exp = (int64_t)h_rng_below(r, 2400) - 1250, ex;
		int neg = (int)(i & 1), sticky = (int)(h_rng_next(r) & 1);
		double w, g;

		switch (i % 4) {	/* ties and near ties */
		case 1:
			hi = (hi & ~0x7ffull) | 0x400;
			lo = 0;
			break;
		case 2:
			hi |= 0x3ff;
			lo = ~0ull;
			break;
		default:
			break;
		}
		w = fpl_round_parts(&f64, neg, exp, hi, lo, sticky, FPL_RND_NE, &st);
		g = fpl__exact_nearest64(neg, exp, hi, lo, sticky);
		if (!h_check(h_same(w, g)))
			h_fail("nearest64(%d, %lld, %016llx %016llx, %d): expected %a, got %a", neg,
			       (long long)exp, (unsigned long long)hi, (unsigned long long)lo, sticky,
			       w, g);
		eh = h_rng_next(r) | (1ull << 63);
		if (i % 8 == 3)
			eh = hi;	/* quotient near 1 */
		ex = (int64_t)h_rng_below(r, 200) - 100 + exp;
		w = relerr_ref(exp, hi, lo, ex, eh);
		g = fpl__exact_relerr_parts(exp, hi, lo, ex, eh);
		if (!h_check(h_same(w, g)))
			h_fail("relerr_parts(%lld, %016llx %016llx, %lld, %016llx): expected %a, "
			       "got %a", (long long)exp, (unsigned long long)hi, (unsigned long long)lo,
			       (long long)ex, (unsigned long long)eh, w, g);
	}
}

/*
 * The compensated path alone: binary64 rows too wide for any grid (53
 * significant bits, exponents over 60 binades), results a relative
 * 2^-30 off (the usual case: it must certify nearly all) and results
 * equal to the rounded exact value (|y - e| below an ulp of e: a hard
 * case, often left to the long accumulator, never wrong).  Then its
 * mutant: the error bound dropped (beta = 0) must be caught on rows with
 * cancellation and y = RN(e).
 */
static void cert_case(h_rng *r)
{
	const size_t m = 24, n = 24, k = 300;
	double *a = malloc(m * k * sizeof *a), *bt = malloc(n * k * sizeof *bt);
	double *y = malloc(m * n * sizeof *y);
	run L, F;
	uint64_t ng = 0, bad;
	size_t i, o;

	if (!a || !bt || !y || !run_alloc(&L, m * n) || !run_alloc(&F, m * n))
		return;
	for (i = 0; i < m * k; i++)
		a[i] = h_rng_value(r, -30, 30, 53, 0);
	for (i = 0; i < n * k; i++)
		bt[i] = h_rng_value(r, -30, 30, 53, 0);
	memset(y, 0, m * n * sizeof *y);
	outputs(&L, y, m, n, k, a, bt, NULL, -1, NULL);
	for (o = 0; o < m * n; o++)
		y[o] = L.exact[o] * (1 + 0x1p-30);
	outputs(&F, y, m, n, k, a, bt, NULL, 0, &ng);
	compare("compensated", y, m, n, k, a, bt, NULL, 0, 0);
	if (!h_check(ng >= m * n * 9 / 10))
		h_fail("compensated: certified %llu of %zu outputs", (unsigned long long)ng, m * n);
	for (o = 0; o < m * n; o++)
		y[o] = L.exact[o];
	compare("compensated, y = RN(e)", y, m, n, k, a, bt, NULL, 0, 0);
	/* cancellation: the second half of each row of A repeats the first
	 * negated, B's rows repeat; a tail of small terms is left.  Whether
	 * one data set makes the mutant certify a wrong output depends on the
	 * draws (the run's seed salts the stream): up to 8 fresh sets, each
	 * checked as it comes, and the mutant must be caught in one of them. */
	for (int attempt = 0; attempt < 8; attempt++) {
		if (attempt) {
			for (i = 0; i < m * k; i++)
				a[i] = h_rng_value(r, -30, 30, 53, 0);
			for (i = 0; i < n * k; i++)
				bt[i] = h_rng_value(r, -30, 30, 53, 0);
		}
		for (i = 0; i < m; i++)
			for (o = 0; o < k / 2 - 10; o++)
				a[i * k + k / 2 + o] = -a[i * k + o];
		for (i = 0; i < n; i++)
			for (o = 0; o < k / 2 - 10; o++)
				bt[i * k + k / 2 + o] = bt[i * k + o];
		for (i = 0; i < m; i++)
			for (o = k / 2 - 10; o < k / 2; o++)
				a[i * k + o] = ldexp(a[i * k + o], -60);
		memset(y, 0, m * n * sizeof *y);
		outputs(&L, y, m, n, k, a, bt, NULL, -1, NULL);
		for (o = 0; o < m * n; o++)
			y[o] = L.exact[o];
		compare("compensated, cancellation", y, m, n, k, a, bt, NULL, 0, 0);
		bad = compare("compensated mutant", y, m, n, k, a, bt, NULL, 40, 1);
		if (bad > 0)
			break;
	}
	if (!h_check(bad > 0))
		h_fail("compensated: a certificate without its error bound was not caught in 8 data sets");
	run_free(&L);
	run_free(&F);
	free(a);
	free(bt);
	free(y);
}

/* The mutant: the certificate widened by 40 bits must be caught on inputs
 * wider than the true test allows (62-bit rows, K = 1000: the int128
 * sums overflow; 30-bit rows: the binary64 sums round). */
static void mutant(h_rng *r)
{
	const size_t m = 8, n = 8, k = 1000;
	double *a = malloc(m * k * sizeof *a), *bt = malloc(n * k * sizeof *bt);
	double *y = calloc(m * n, sizeof *y);
	size_t i;
	uint64_t bad, bad0;
	int w;

	if (!a || !bt || !y)
		return;
	for (w = 30; w <= 62; w += 32) {
		for (i = 0; i < m * k; i++)
			a[i] = i % k == 0 ? ldexp(1, w - 1) : h_rng_value(r, w - 2, w - 2, 53, 0);
		for (i = 0; i < n * k; i++)
			bt[i] = i % k == 0 ? 1.0 : h_rng_value(r, w - 2, w - 2, 53, 0);
		for (i = 0; i < m * k; i++)	/* integers, from 1 up: width w */
			a[i] = i % k == 1 ? 1.0 : floor(fabs(a[i]));
		for (i = 0; i < n * k; i++)
			bt[i] = i % k == 1 ? 1.0 : floor(fabs(bt[i]));
		bad0 = compare("mutant (true certificate)", y, m, n, k, a, bt, NULL, 0, 1);
		bad = compare("mutant", y, m, n, k, a, bt, NULL, 40, 1);
		if (!h_check(bad0 == 0 && bad > 0))
			h_fail("width %d: a certificate widened by 40 bits was not caught "
			       "(%llu mismatches; true one %llu)", w, (unsigned long long)bad,
			       (unsigned long long)bad0);
	}
	free(a);
	free(bt);
	free(y);
}

int main(void)
{
	static const struct {
		const char *name;
		shape s;
	} shapes[] = {
		{ "e4m3fn", { -9, 8, 4 } },	{ "e5m2", { -16, 15, 3 } },
		{ "fp16", { -24, 15, 11 } },	{ "bf16 narrow", { -10, 5, 8 } },
		{ "bf16 wide", { -133, 127, 8 } }, { "fp32 narrow", { -20, 4, 24 } },
		{ "fp32 wide", { -149, 127, 24 } }, { "fp64", { -30, 30, 53 } },
		{ "fp64 subnormal", { -1074, -1020, 53 } }, { "e2m1", { -1, 2, 2 } },
		{ "near overflow", { 500, 515, 8 } },
	};
	const int ns = (int)(sizeof shapes / sizeof *shapes);
	int rounds = h_sanitized() ? 8 : 120, t, s;
	h_rng r;

	h_init("tgemmref");
	h_rng_init(&r, 24);
	hand();
	readings(&r);
	for (t = 0; t < rounds; t++)
		for (s = 0; s < ns; s++) {
			size_t k = (size_t)(t % 4 == 0 ? h_rng_below(&r, 4) : 1 + h_rng_below(&r, 80));
			shape sb = shapes[(s + (t % 3 == 2)) % ns].s;
			gemm_case(shapes[s].name, &r, 40, 40, k, shapes[s].s, t % 3 == 2 ? sb : shapes[s].s,
				  t % 5 != 4, t % 2, t % 7 == 3);
		}
	for (t = 0; t < (h_sanitized() ? 2 : 20); t++) {
		cancel_case(&r, 16, 16, 2 + (size_t)h_rng_below(&r, 200), 10);
		cancel_case(&r, 16, 16, 2 + (size_t)h_rng_below(&r, 200), 60);
	}
	/* K up to 10^6: a narrow, a medium (int128) and a wide row */
	gemm_case("K 10^6 e4m3fn", &r, 2, 2, 1000000, shapes[0].s, shapes[0].s, 1, 1, 0);
	gemm_case("K 10^6 bf16 narrow", &r, 2, 2, 1000000, shapes[3].s, shapes[3].s, 1, 1, 0);
	gemm_case("K 10^6 fp32 wide sum", &r, 2, 1, 1000000, shapes[6].s, shapes[6].s, 0, 1, 0);
	gemm_case("K 10^6 fp16 sum", &r, 3, 1, 1000000, shapes[2].s, shapes[2].s, 0, 1, 0);
	mutant(&r);
	/* its own stream: the same rows in every build (a sanitized one runs
	 * fewer rounds above, which would change them) */
	h_rng_init(&r, 25);
	cert_case(&r);
	h_note("%llu outputs compared bit for bit, %llu of them on the grid path",
	       (unsigned long long)g_outputs, (unsigned long long)g_grid);
	if (!h_check(g_grid > g_outputs / 3 && g_grid < g_outputs))
		h_fail("the grid path did %llu of %llu outputs: both paths must be exercised",
		       (unsigned long long)g_grid, (unsigned long long)g_outputs);
	return h_done();
}
