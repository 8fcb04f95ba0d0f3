/* SPDX-License-Identifier: MIT */
/*
 * texactfast.c - the GEMM error reference's blocked path (src/accum/
 * exact_gemm.c: binary64 GEMM kernels and a per-output certificate)
 * against the exact long accumulator (issue 24, item 4).
 *
 * For every input, each output's exact value, relative error, absolute
 * error, |A||B| + |C| entry and class must be the same bits with every
 * fast path allowed (the blocked path first) as with the long accumulator
 * for every output (mode -1, the reference texact checks against MPFR),
 * with each kernel set this CPU runs (ref: the portable kernel, avx2,
 * avx512).  The inputs are built to defeat the certificate: narrow
 * formats (fp8-, fp4-, fp16-like values, where it holds), bf16-like rows
 * with exponents spread over 2^+-40 and over binary64's range, x and -x
 * pairs with tiny terms (huge cancellation), sums that need exactly 53
 * and 54 bits (the certificate's edge: 2^53 + 1 on the grid 1),
 * subnormal products, zero rows and columns, NaN and infinities, C's
 * entries on and off the grid, results near, far, zero, not finite,
 * K up to 10^6.  The test checks that the blocked path did most of the
 * narrow outputs, that a widened certificate (the mutant) is caught, a
 * few exact values against integer sums computed here, and the public
 * reports of fpl_accum_errors_gemm with FPLAB_EXACT unset against
 * FPLAB_EXACT=long, field by field.
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
	R->cls = malloc(n ? n : 1);
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

/* strided: B handed over as B itself (entry (k, j) at bt[j*k + k]), not
 * as its transpose: the path that gathers B's columns itself. */
static void outputs_as(run *R, const double *r, size_t m, size_t n, size_t k, const double *a,
		       const double *bt, const double *c, int mode, uint64_t *nb, int strided)
{
	size_t i;

	for (i = 0; i < m * n; i++)
		R->rel[i] = R->abserr[i] = R->den[i] = -1.0;
	if (strided)
		h_check(!fpl__accum_errors_outputs_ex(R->exact, R->rel, R->abserr, R->den, R->cls, r, n,
						      m, n, k, a, NULL, bt, 1, (ptrdiff_t)k, c, n,
						      mode, mode >= 0, 2, NULL, NULL, nb));
	else
		h_check(!fpl__accum_errors_outputs_ex(R->exact, R->rel, R->abserr, R->den, R->cls, r, n,
						      m, n, k, a, bt, NULL, 0, 0, c, n, mode,
						      mode >= 0, 2, NULL, NULL, nb));
}

static void outputs(run *R, const double *r, size_t m, size_t n, size_t k, const double *a,
		    const double *bt, const double *c, int mode, uint64_t *nb)
{
	outputs_as(R, r, m, n, k, a, bt, c, mode, nb, 0);
}

static uint64_t g_outputs, g_block;
static const char *g_sets[3];
static int g_nsets;

/* Output o of L and F the same (the entries its class says are read)? */
static int same_output(const run *L, const run *F, size_t o)
{
	return h_same(L->exact[o], F->exact[o]) && L->cls[o] == F->cls[o]
	       && (!(L->cls[o] & 1) || h_same(L->rel[o], F->rel[o]))
	       && (!(L->cls[o] & 2)
		   || (h_same(L->abserr[o], F->abserr[o]) && h_same(L->den[o], F->den[o])));
}

/* The fast paths (each kernel set) against the long accumulator; slack >
 * 0: the mutant, returns its mismatches (no failure reported). */
static uint64_t compare(const char *what, const double *r, size_t m, size_t n, size_t k,
			const double *a, const double *bt, const double *c, int slack)
{
	run L, F;
	uint64_t bad = 0, nb;
	size_t o;
	int s;

	if (!run_alloc(&L, m * n) || !run_alloc(&F, m * n)) {
		h_fail("%s: out of memory", what);
		return 1;
	}
	outputs(&L, r, m, n, k, a, bt, c, -1, NULL);
	for (s = 0; s < (slack ? 1 : g_nsets); s++) {
		fpl_kernels_select(g_sets[s]);
		nb = 0;
		/* every other kernel set with B as itself */
		outputs_as(&F, r, m, n, k, a, bt, c, slack, &nb, s % 2);
		for (o = 0; o < m * n; o++)
			if (!same_output(&L, &F, o)) {
				bad++;
				if (!slack && bad <= 5)
					h_fail("%s (%s): output %zu (K %zu): long exact %a rel %a abs %a den %a"
					       " cls %d; fast exact %a rel %a abs %a den %a cls %d (r %a)",
					       what, g_sets[s], o, k, L.exact[o], L.rel[o], L.abserr[o],
					       L.den[o], L.cls[o], F.exact[o], F.rel[o], F.abserr[o],
					       F.den[o], F.cls[o], r[o]);
			}
		if (!slack)
			g_block += nb;
	}
	if (!slack)
		g_outputs += m * n;
	fpl_kernels_select(g_sets[g_nsets - 1]);
	if (!slack)
		h_check(bad == 0);
	run_free(&L);
	run_free(&F);
	return bad;
}

/* ------------------------------------------------------------ inputs */

static double val(h_rng *r, int elo, int ehi, int bits)
{
	if (h_rng_below(r, 16) == 0)
		return 0.0;
	return h_rng_value(r, elo, ehi, bits, 0);
}

/* Results: near the exact value, zero, negated, off the grid, far, not
 * finite. */
static void results(h_rng *r, double *y, const double *e, size_t n)
{
	size_t o;

	for (o = 0; o < n; o++) {
		double x = e[o];
		switch (h_rng_below(r, 10)) {
		case 0:
			y[o] = x;
			break;
		case 1:
		case 2:
			y[o] = (double)(float)x;
			break;
		case 3:	/* 11 significant bits, as an fp16 accumulator */
			y[o] = isfinite(x) && x != 0 ? ldexp(nearbyint(ldexp(x, 10 - ilogb(x))), ilogb(x) - 10) : x;
			break;
		case 4:
			y[o] = nextafter(x, INFINITY);
			break;
		case 5:
			y[o] = h_rng_below(r, 2) ? 0.0 : -0.0;
			break;
		case 6:	/* off any grid */
			y[o] = x + 0x1.3p-1070;
			break;
		case 7:
			y[o] = h_rng_value(r, -30, 30, 53, 0);
			break;
		case 8:
			y[o] = h_rng_below(r, 3) == 0 ? NAN : h_rng_below(r, 2) ? INFINITY : 0x1p1023;
			break;
		default:
			y[o] = x * (1 + 0x1p-20);
			break;
		}
	}
}

/* The exact values (the long path), then results from them. */
static void make_results(h_rng *r, double *y, size_t m, size_t n, size_t k, const double *a,
			 const double *bt, const double *c)
{
	run L;
	size_t o;

	for (o = 0; o < m * n; o++)
		y[o] = 0;
	if (!run_alloc(&L, m * n))
		return;
	outputs(&L, y, m, n, k, a, bt, c, -1, NULL);
	results(r, y, L.exact, m * n);
	run_free(&L);
}

typedef struct shape {
	int elo, ehi, bits;
} shape;

/* kinds of rows built to defeat the certificate */
enum { ROW_PLAIN, ROW_CANCEL, ROW_SPREAD, ROW_SPECIAL, ROW_ZERO, ROW_SUB };

static void fill_row(h_rng *r, double *x, size_t k, shape s, int kind)
{
	size_t q;

	for (q = 0; q < k; q++)
		x[q] = val(r, s.elo, s.ehi, s.bits);
	switch (kind) {
	case ROW_CANCEL:	/* x, -x pairs over tiny terms */
		for (q = 0; q + 1 < k; q += 2)
			if (h_rng_below(r, 2))
				x[q + 1] = -x[q];
		if (k)
			x[k - 1] = ldexp(x[k - 1], -(int)h_rng_below(r, 30));
		break;
	case ROW_SPREAD:	/* one entry far below or above */
		if (k)
			x[h_rng_below(r, k)] = h_rng_value(r, -200, 200, s.bits, 0);
		break;
	case ROW_SPECIAL:
		if (k)
			x[h_rng_below(r, k)] = h_rng_below(r, 3) == 0 ? NAN
					       : h_rng_below(r, 2) ? INFINITY : -INFINITY;
		break;
	case ROW_ZERO:
		for (q = 0; q < k; q++)
			x[q] = h_rng_below(r, 2) ? 0.0 : -0.0;
		break;
	case ROW_SUB:	/* products near and below binary64's quantum */
		for (q = 0; q < k; q++)
			x[q] = val(r, -560, -500, s.bits);
		break;
	default:
		break;
	}
}

static int row_kind(h_rng *r)
{
	unsigned u = (unsigned)h_rng_below(r, 40);

	return u < 30 ? ROW_PLAIN : (int)(u - 30) % 6;
}

static void gemm_case(const char *what, h_rng *r, size_t m, size_t n, size_t k, shape sa,
		      shape sb, int with_c)
{
	double *a = malloc((m * k + 1) * sizeof *a), *bt = malloc((n * k + 1) * sizeof *bt);
	double *c = malloc(m * n * sizeof *c), *y = malloc(m * n * sizeof *y);
	size_t i;

	if (!a || !bt || !c || !y) {
		h_fail("%s: out of memory", what);
		goto out;
	}
	for (i = 0; i < m; i++)
		fill_row(r, a + i * k, k, sa, row_kind(r));
	for (i = 0; i < n; i++)
		fill_row(r, bt + i * k, k, sb, row_kind(r));
	for (i = 0; i < m * n; i++)	/* on the grid, off it, special */
		c[i] = h_rng_below(r, 4) ? val(r, sa.elo + sb.elo, sa.ehi + sb.ehi, sa.bits)
		       : h_rng_below(r, 8) ? h_rng_value(r, -80, 80, 53, 0)
					   : (h_rng_below(r, 2) ? INFINITY : NAN);
	make_results(r, y, m, n, k, a, bt, with_c ? c : NULL);
	compare(what, y, m, n, k, a, bt, with_c ? c : NULL, 0);
out:
	free(a);
	free(bt);
	free(c);
	free(y);
}

/*
 * The readings kernel's batches (gk->rd, without C): every width 4..44
 * (every tail of 8 and of a panel), and rows and columns whose outputs
 * fail the certificate in clusters: a whole row of A (one entry far
 * off), every third column of B, next to outputs that pass.
 */
static void batch_cases(h_rng *r)
{
	static const shape s = { -9, 8, 4 };
	size_t m, n, k, i;
	uint64_t b0 = g_block, o0 = g_outputs;

	for (n = 4; n <= 44; n++) {
		double *a, *bt, *y;
		m = 4 + h_rng_below(r, 9);
		k = 1 + h_rng_below(r, 40);
		a = malloc(m * k * sizeof *a);
		bt = malloc(n * k * sizeof *bt);
		y = malloc(m * n * sizeof *y);
		if (!a || !bt || !y) {
			h_fail("batches: out of memory");
			free(a);
			free(bt);
			free(y);
			return;
		}
		for (i = 0; i < m; i++)
			fill_row(r, a + i * k, k, s, i % 6 == 1 ? ROW_SPREAD : ROW_PLAIN);
		for (i = 0; i < n; i++)
			fill_row(r, bt + i * k, k, s,
				 i % 4 == 2 ? ROW_SPREAD : i % 13 == 5 ? ROW_SPECIAL : ROW_PLAIN);
		make_results(r, y, m, n, k, a, bt, NULL);
		compare("batches", y, m, n, k, a, bt, NULL, 0);
		free(a);
		free(bt);
		free(y);
	}
	/* both kinds met: outputs on the blocked path, and others */
	if (!h_check(g_block > b0 && g_block - b0 < (g_outputs - o0) * (uint64_t)g_nsets))
		h_fail("batches: %llu of %llu output runs on the blocked path",
		       (unsigned long long)(g_block - b0),
		       (unsigned long long)((g_outputs - o0) * (uint64_t)g_nsets));
	else
		h_note("batches: %llu of %llu output runs on the blocked path",
		       (unsigned long long)(g_block - b0),
		       (unsigned long long)((g_outputs - o0) * (uint64_t)g_nsets));
}

/* ------------------------------------------------------------ the edge */

/*
 * Sums at the certificate's edge, with integers as expected values
 * (computed here, not by the code under test): A's row i is (1, ..., 1,
 * 2^e_i) and B's columns are ones and one entry 1, so that the exact
 * value is K - 1 + 2^e_i, exactly 2^53 + 1 for e_i = 53 (54 bits on the
 * grid 1: the binary64 sum rounds and G = 2^53 + K - 1 >= 2^53, the
 * certificate must fail) or below 2^53 (it must hold).
 */
static void edge_case(void)
{
	enum { M = 8, N = 8, K = 2 };
	double a[M * K], bt[N * K], y[M * N];
	run F;
	size_t i, j;
	uint64_t nb = 0;

	for (i = 0; i < M; i++) {
		a[i * K] = 1.0;
		a[i * K + 1] = ldexp(1.0, 46 + (int)i);	/* 2^46 .. 2^53 */
	}
	for (j = 0; j < N; j++)
		bt[j * K] = bt[j * K + 1] = 1.0;
	for (i = 0; i < M * N; i++)
		y[i] = 0.0;
	if (!run_alloc(&F, M * N))
		return;
	outputs(&F, y, M, N, K, a, bt, NULL, 0, &nb);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			uint64_t e = ((uint64_t)1 << (46 + i)) + 1;	/* the exact sum */
			double want = (double)e;	/* rounded once (2^53 + 1 -> 2^53) */
			if (!h_check(h_same(F.exact[i * N + j], want)))
				h_fail("edge: output (%zu, %zu): %a, expected %a", i, j,
				       F.exact[i * N + j], want);
			/* den = G = the same sum here; abserr = |0 - e| */
			h_check(h_same(F.den[i * N + j], want) && h_same(F.abserr[i * N + j], want));
		}
	/* rows 0..6 pass (G <= 2^52 + 1 < 2^53), row 7 (2^53 + 1) does not */
	if (!h_check(nb == (M - 1) * N))
		h_fail("edge: %llu outputs on the blocked path, expected %d", (unsigned long long)nb,
		       (M - 1) * N);
	run_free(&F);
}

/* ------------------------------------------------------------ reports */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The median of the relative errors, from the per-output readings of the
 * long path, sorted here (the report's selection is not used). */
static double median_by_sort(const double *y, size_t dim, const double *al, const double *bl,
			     const double *cc)
{
	double *bt = malloc(dim * dim * sizeof *bt), *v = malloc(dim * dim * sizeof *v), s, a, b;
	size_t i, j, q = 0;
	run L;

	if (!bt || !v || !run_alloc(&L, dim * dim)) {
		free(bt);
		free(v);
		return NAN;
	}
	for (i = 0; i < dim; i++)
		for (j = 0; j < dim; j++)
			bt[j * dim + i] = bl[i * dim + j];
	outputs(&L, y, dim, dim, dim, al, bt, cc, -1, NULL);
	for (i = 0; i < dim * dim; i++)
		if (L.cls[i] & 1)
			v[q++] = L.rel[i];
	qsort(v, q, sizeof *v, cmp_double);
	a = v[(q - 1) / 2];
	b = v[q / 2];
	s = q % 2 ? a : (a + b) / 2;
	run_free(&L);
	free(bt);
	free(v);
	return s;
}

static int same_report(const fpl_accum_errors *x, const fpl_accum_errors *y)
{
	return x->outputs == y->outputs && x->compared == y->compared && x->rel_n == y->rel_n
	       && x->nonfinite == y->nonfinite && x->became_zero == y->became_zero
	       && x->nan == y->nan && x->inf == y->inf && h_same(x->max_rel, y->max_rel)
	       && h_same(x->mean_rel, y->mean_rel) && h_same(x->median_rel, y->median_rel)
	       && h_same(x->rms_rel, y->rms_rel) && h_same(x->max_abs, y->max_abs)
	       && h_same(x->normwise, y->normwise) && h_same(x->bound, y->bound);
}

/* fpl_accum_errors_gemm, FPLAB_EXACT unset against FPLAB_EXACT=long, on
 * an emulated GEMM's results (e4m3fn and bf16 inputs). */
static void report_case(const char *in, const char *acc, size_t dim)
{
	double *a = malloc(dim * dim * sizeof *a), *b = malloc(dim * dim * sizeof *b);
	double *al = malloc(dim * dim * sizeof *al), *bl = malloc(dim * dim * sizeof *bl);
	double *cc = malloc(dim * dim * sizeof *cc), *y = malloc(dim * dim * sizeof *y);
	fpl_accum_model m;
	fpl_accum_errors ef, el;
	fpl_state st;
	h_rng r;
	size_t i;

	h_rng_init(&r, 77);
	if (!a || !b || !al || !bl || !cc || !y) {
		h_fail("report: out of memory");
		goto out;
	}
	for (i = 0; i < dim * dim; i++) {
		a[i] = h_rng_value(&r, -6, 3, 53, 0);
		b[i] = h_rng_value(&r, -6, 3, 53, 0);
		cc[i] = h_rng_value(&r, -4, 4, 53, 0);
	}
	fpl_accum_init(&m);
	if (!h_check(!fpl_accum_parse_spec(in, &m.a, &m.a_rnd, NULL)
		     && !fpl_accum_parse_spec(acc, &m.acc, &m.acc_rnd, NULL)))
		goto out;
	m.b = m.a;
	fpl_state_init(&st, 5);
	if (!h_check(!fpl_accum_gemm_loads(al, bl, NULL, &m, dim, dim, dim, a, dim, 0, b, dim, 0,
					   NULL, 0, &st)))
		goto out;
	m.a_load = m.b_load = FPL_LOAD_GIVEN;
	if (!h_check(!fpl_accum_gemm(y, dim, &m, 0, dim, dim, dim, al, dim, 0, bl, dim, 0, NULL,
				     &st)))
		goto out;
	for (i = 0; i < dim * dim; i += 7)	/* C: a few entries (the rest 0) */
		cc[i] = i % 2 ? 0.0 : (double)(float)cc[i];
	for (i = 0; i < dim * dim; i++)
		if (i % 7)
			cc[i] = 0.0;
	unsetenv("FPLAB_EXACT");
	h_check(!fpl_accum_errors_gemm(&ef, NULL, y, dim, &m, dim, dim, dim, al, dim, 0, bl, dim,
				       0, cc, dim, 2));
	setenv("FPLAB_EXACT", "long", 1);
	h_check(!fpl_accum_errors_gemm(&el, NULL, y, dim, &m, dim, dim, dim, al, dim, 0, bl, dim,
				       0, cc, dim, 2));
	setenv("FPLAB_EXACT", "bogus", 1);
	h_check(fpl_accum_errors_gemm(&ef, NULL, y, dim, &m, dim, dim, dim, al, dim, 0, bl, dim,
				      0, cc, dim, 2) != 0);
	unsetenv("FPLAB_EXACT");
	if (!h_check(same_report(&ef, &el)))
		h_fail("report %s/%s: max_rel %a/%a median %a/%a mean %a/%a normwise %a/%a", in, acc,
		       ef.max_rel, el.max_rel, ef.median_rel, el.median_rel, ef.mean_rel,
		       el.mean_rel, ef.normwise, el.normwise);
	{
		double med = median_by_sort(y, dim, al, bl, cc);
		if (!h_check(h_same(ef.median_rel, med)))
			h_fail("report %s/%s: median %a, sorted %a", in, acc, ef.median_rel, med);
	}
	g_outputs += dim * dim;
out:
	free(a);
	free(b);
	free(al);
	free(bl);
	free(cc);
	free(y);
}

/* ------------------------------------------------ grid descriptions */

/* A row's description as the header of exact_fast.c defines it, computed
 * here from frexp (x = m 2^e, 1/2 <= m < 1, subnormals included): the
 * lowest set bit of x weighs e - 53 + ctz(m 2^53), and h = e. */
typedef struct desc {
	int fin, zero, tmin, hmax, hmin, pmax;
} desc;

static desc ref_desc(const double *x, size_t K, size_t stride)
{
	desc d = { 1, 1, 0, 0, 0, 0 };
	size_t k;

	for (k = 0; k < K; k++) {
		double v = x[k * stride], m;
		uint64_t M;
		int e, t;

		if (isnan(v) || isinf(v)) {
			d.fin = 0;
			continue;
		}
		if (v == 0)
			continue;
		m = frexp(fabs(v), &e);
		M = (uint64_t)ldexp(m, 53);
		t = e - 53 + __builtin_ctzll(M);
		if (d.zero) {
			d.tmin = t;
			d.hmax = d.hmin = e;
			d.pmax = e - t;
			d.zero = 0;
			continue;
		}
		d.tmin = t < d.tmin ? t : d.tmin;
		d.hmax = e > d.hmax ? e : d.hmax;
		d.hmin = e < d.hmin ? e : d.hmin;
		d.pmax = e - t > d.pmax ? e - t : d.pmax;
	}
	return d;
}

/* 1 when row matches d (the fields that fpl__grid_row defines for it). */
static int same_desc(const fpl__grid_row *row, const desc *d)
{
	int w = d->zero ? 0 : d->hmax - d->tmin > 62 ? -1 : d->hmax - d->tmin;

	if (!d->fin)
		return !row->fin && row->w == -1;
	if (!row->fin || row->w != w || row->q != (w < 0 || d->zero ? 0 : d->tmin))
		return 0;
	if (d->zero)
		return row->hmin > row->hmax && row->t == 0 && row->p == 0;
	return row->hmin == d->hmin && row->hmax == d->hmax && row->t == d->tmin
	       && row->p == d->pmax;
}

/* An entry: a random value of a random shape, or one from a table of
 * edges (zeros, subnormals, binade ends, huge, and, when specials is
 * set, infinities and NaNs). */
static double desc_value(h_rng *r, int specials)
{
	static const uint64_t edge[] = {
		0x0000000000000000ull, 0x8000000000000000ull,	/* +-0 */
		0x0000000000000001ull, 0x8000000000000003ull,	/* tiny subnormals */
		0x000fffffffffffffull, 0x0008000000000000ull,	/* large subnormals */
		0x0010000000000000ull, 0x0010000000000001ull,	/* least normals */
		0x3ff0000000000000ull, 0xbff0000000000001ull,	/* 1, -(1 + 2^-52) */
		0x4330000000000000ull, 0x433fffffffffffffull,	/* 2^52, 2^53 - 1 */
		0x7fe0000000000000ull, 0xffefffffffffffffull,	/* 2^1023, -max */
		0x7ff0000000000000ull, 0xfff0000000000000ull,	/* +-inf */
		0x7ff8000000000000ull, 0x7ff0000000000001ull,	/* NaNs */
	};
	static const int shp[][3] = { { -9, 8, 4 }, { -40, 40, 8 }, { -1000, 1000, 53 },
				      { -1074, -1023, 20 }, { 900, 1023, 53 } };
	uint64_t u = h_rng_below(r, 8);

	if (u == 0) {
		u = edge[h_rng_below(r, specials ? 18 : 14)];
		return h_from_bits(u);
	}
	u = h_rng_below(r, 5);
	return h_rng_value(r, shp[u][0], shp[u][1], shp[u][2], 0);
}

/*
 * fpl__exact_grid_rows (descriptions and integers) and
 * fpl__exact_grid_cols (from B's panels, each kernel set's panel width)
 * against ref_desc, on rows of every length 1..300 (the eight-lane
 * kernel and its tail) made of one shape, of edges, or all zero.
 * Returns the entries checked.
 */
static uint64_t grid_desc_case(h_rng *r)
{
	size_t R = 1 + h_rng_below(r, 40), K = 1 + h_rng_below(r, 300), i, k;
	double *x = malloc(R * K * sizeof *x);
	int64_t *v = malloc(R * K * sizeof *v);
	fpl__grid_row *row = malloc(R * sizeof *row), *col = malloc(R * sizeof *col);
	int s, specials = (int)h_rng_below(r, 2);
	uint64_t n = 0;

	if (!h_check(x && v && row && col))
		goto out;
	for (i = 0; i < R; i++) {
		int kind = (int)h_rng_below(r, 6);
		int e = (int)h_rng_below(r, 2000) - 1000;
		for (k = 0; k < K; k++)
			x[i * K + k] = kind == 0 ? 0.0
				       : kind == 1 ? ldexp(1.0 + (double)h_rng_below(r, 256), e - 8)
				       : desc_value(r, specials && kind == 2);
	}
	fpl__exact_grid_rows(v, row, x, R, K);
	for (i = 0; i < R; i++) {
		desc d = ref_desc(x + i * K, K, 1);
		if (!h_check(same_desc(row + i, &d))) {
			h_fail("grid row %zu of %zu (K %zu): q %d w %d p %d fin %d h %d..%d t %d", i,
			       R, K, row[i].q, row[i].w, row[i].p, row[i].fin, row[i].hmin,
			       row[i].hmax, row[i].t);
			break;
		}
		for (k = 0; row[i].w >= 0 && k < K; k++)
			if (!h_check(ldexp((double)v[i * K + k], row[i].q) == x[i * K + k])) {
				h_fail("grid row %zu entry %zu: integer %lld", i, k,
				       (long long)v[i * K + k]);
				break;
			}
		n += K;
	}
	/* the same rows as B's columns, packed by each kernel set */
	for (s = 0; s < g_nsets; s++) {
		fpl__exact_gemm gk;

		fpl_kernels_select(g_sets[s]);
		fpl__exact_gemm_pick(&gk);
		if (!h_check(!fpl__exact_gemm_pack_b(&gk, x, 1, (ptrdiff_t)K, R, K)))
			break;
		fpl__exact_grid_cols(col, &gk);
		for (i = 0; i < R; i++) {
			desc d = ref_desc(x + i * K, K, 1);
			if (!h_check(same_desc(col + i, &d))) {
				h_fail("grid column %zu of %zu (K %zu, %s)", i, R, K, g_sets[s]);
				break;
			}
		}
		fpl__exact_gemm_release(&gk);
		n += R * K;
	}
	fpl_kernels_select(g_sets[g_nsets - 1]);
out:
	free(x);
	free(v);
	free(row);
	free(col);
	return n;
}

int main(void)
{
	static const shape narrow[] = {
		{ -9, 8, 4 },	/* e4m3-like */
		{ -16, 15, 3 },	/* e5m2-like */
		{ -2, 2, 2 },	/* e2m1-like */
		{ -24, 15, 11 },	/* fp16-like */
	};
	static const shape wide[] = {
		{ -40, 40, 8 },	/* bf16 over a wide range */
		{ -126, 127, 8 },	/* bf16's whole range */
		{ -20, 20, 24 },	/* fp32-like */
		{ -1000, 1000, 53 },	/* binary64 */
	};
	h_rng r;
	size_t t, reps = h_scale(2, 8);
	const fpl_cpu_features *cpu;
	int s;

	h_init("texactfast");
	h_rng_init(&r, h_seed());
	cpu = fpl_cpu();
	g_sets[g_nsets++] = "ref";
	if (cpu->avx2 && cpu->fma && !fpl_kernels_select("avx2"))
		g_sets[g_nsets++] = "avx2";
	if (cpu->avx512f && !fpl_kernels_select("avx512"))
		g_sets[g_nsets++] = "avx512";
	fpl_kernels_select(g_sets[g_nsets - 1]);

	edge_case();
	{
		uint64_t nd = 0;

		while (nd < 3000000)
			nd += grid_desc_case(&r);
		h_note("%llu entries' grid descriptions checked", (unsigned long long)nd);
	}
	for (t = 0; t < reps; t++) {
		for (s = 0; s < 4; s++) {
			size_t k = 1 + h_rng_below(&r, s == 3 ? 200 : 600);
			gemm_case("narrow", &r, 40 + h_rng_below(&r, 30), 36 + h_rng_below(&r, 40), k,
				  narrow[s], narrow[(s + 1) % 4], (int)(t & 1));
		}
		for (s = 0; s < 4; s++) {
			size_t k = 1 + h_rng_below(&r, 300);
			gemm_case("wide", &r, 30 + h_rng_below(&r, 30), 20 + h_rng_below(&r, 40), k,
				  wide[s], wide[s], (int)(t & 1));
		}
		/* mixed: a narrow row against a wide column */
		gemm_case("mixed", &r, 50, 50, 1 + h_rng_below(&r, 100), narrow[0], wide[0], 1);
	}
	batch_cases(&r);
	/* many outputs at small K (the bulk), then K = 10^5 and 10^6 */
	for (t = 0; t < 16; t++)
		gemm_case("bulk", &r, 256, 256, 1 + h_rng_below(&r, 24),
			  t < 12 ? narrow[t % 4] : wide[t % 2], t < 12 ? narrow[(t + 1) % 4] : wide[0],
			  (int)(t & 1));
	gemm_case("K 1e5", &r, 6, 17, 100000, narrow[0], narrow[0], 1);
	gemm_case("K 1e6", &r, 4, 4, 1000000, narrow[2], narrow[2], 0);

	/* the mutant: the certificate widened must be caught somewhere */
	{
		double a[16 * 2], bt[16 * 2], y[16 * 16];
		size_t i;
		uint64_t bad;

		for (i = 0; i < 16; i++) {
			a[2 * i] = bt[2 * i] = 1.0;
			a[2 * i + 1] = bt[2 * i + 1] = ldexp(1.0, 27 + (int)(i % 4));
		}
		for (i = 0; i < 16 * 16; i++)	/* the binary64 sum: the product */
			y[i] = a[2 * (i / 16) + 1] * bt[2 * (i % 16) + 1];
		bad = compare("mutant", y, 16, 16, 2, a, bt, NULL, 40);
		if (!h_check(bad > 0))
			h_fail("the widened certificate was not caught");
	}
	report_case("e4m3fn", "fp16", 96);
	report_case("bf16", "fp32", 96);
	report_case("bf16", "fp16", 64);
	report_case("e4m3fn", "fp16", 63);	/* an odd count */

	h_note("%llu outputs compared bit for bit, each with %d kernel set(s) (%s%s%s), %llu"
	       " output runs on the blocked path", (unsigned long long)g_outputs, g_nsets,
	       g_sets[0], g_nsets > 1 ? " avx2" : "", g_nsets > 2 ? " avx512" : "",
	       (unsigned long long)g_block);
	h_check(g_outputs >= 1000000);
	h_check(g_block >= g_outputs / 2 * (uint64_t)g_nsets / 2);
	return h_done();
}
