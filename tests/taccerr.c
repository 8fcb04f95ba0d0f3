/* SPDX-License-Identifier: MIT */
/*
 * tests/taccerr.c - error reports of accumulation models
 * (fplab/accum_error.h): the loads, the bound, the exact comparison.
 *
 * Expected values never come from the code under test:
 *  1. fpl_accum_gemm_loads: every loaded element equals the public
 *     fpl_round on a state whose counter is the draw accum.h's schedule
 *     gives it; and fpl_accum_gemm on the raw inputs equals
 *     fpl_accum_gemm on the loaded ones with loads "given", from the same
 *     counter (random formats, stochastic load and accumulation modes,
 *     every order, transposes, padding, K = 0, sums); st stays untouched;
 *     a given input outside its format fails as fpl_accum_gemm fails.
 *  2. fpl_accum_unit_roundoff / fpl_accum_bound against values worked
 *     out by hand from the formulas in the header's comment.
 *  3. fpl_accum_errors_gemm against MPFR: exact sums at 4400 bits (every
 *     sum of binary64 products is exact there, see tests/texact.c), the
 *     ratios at 300 bits, on random small GEMMs and sums with
 *     cancellation, overflowing exact values, inf and NaN terms and
 *     results, K = 0 and C; exact values bit for bit, counts exactly,
 *     relative errors within their faithful interval, the norm to 1e-13.
 *  4. Facts by hand: 4096 ones in fp16 give 2048 (exact 4096, rel 0.5,
 *     abs 2048); a small-integer GEMM in fp64 has zero error; the median
 *     of an odd and an even count; the thread count changes no bit; on
 *     random data in ne (and tz, sp) the normwise error is <= the bound
 *     for every order and fp16, bf16, e4m3fn and fp32 accumulators.
 *  5. Speed, printed: the errors of a 256x256x256 GEMM on one thread.
 */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fplab/accum.h>
#include <fplab/accum_error.h>

#include "harness.h"

#define PREC 4400

static const fpl_rnd all_modes[9] = {
	FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN, FPL_RND_TZ, FPL_RND_OD,
	FPL_RND_SP, FPL_RND_SE
};

static const char *const fmt_names[] = { "fp16", "bf16", "e4m3fn", "e5m2", "fp32", "fp64" };
#define NFMT 6

static const char *const orders[] = {
	"sequential", "pairwise", "pairwise:3", "blocked:2", "blocked:3:bf16", "kahan",
	"neumaier", "fused:2", "fused:3:8", "fused:4:12:ne", "pairs", "evenodd:4"
};
#define NORD 12

static void fmt(fpl_format *f, const char *name)
{
	if (!h_check(fpl_format_lookup(f, name) == 0))
		h_fail("format %s not found", name);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ 1. loads */

static void random_model(h_rng *r, fpl_accum_model *m)
{
	fpl_accum_init(m);
	fmt(&m->a, fmt_names[h_rng_below(r, NFMT)]);
	m->b = m->a;
	if (h_rng_below(r, 2))
		fmt(&m->b, fmt_names[h_rng_below(r, NFMT)]);
	fmt(&m->acc, fmt_names[h_rng_below(r, NFMT)]);
	/* loads stochastic most of the time */
	m->a_rnd = h_rng_below(r, 3) ? (h_rng_below(r, 2) ? FPL_RND_SP : FPL_RND_SE)
				     : all_modes[h_rng_below(r, 9)];
	m->b_rnd = h_rng_below(r, 3) ? FPL_RND_SP : all_modes[h_rng_below(r, 9)];
	m->acc_rnd = all_modes[h_rng_below(r, 9)];
	m->prod_exact = (int)h_rng_below(r, 2);
	fmt(&m->prod, fmt_names[h_rng_below(r, NFMT)]);
	m->prod_rnd = all_modes[h_rng_below(r, 9)];
	if (fpl_accum_parse_order(m, orders[h_rng_below(r, NORD)]))
		h_fail("parse_order");
	m->out_set = (int)h_rng_below(r, 3) == 0;
	fmt(&m->out, fmt_names[h_rng_below(r, NFMT)]);
	m->out_rnd = all_modes[h_rng_below(r, 9)];
	if (h_rng_below(r, 4) == 0)
		m->acc.subnormal = FPL_SUB_FTZ;
}

static double rnd_input(h_rng *r)
{
	switch (h_rng_below(r, 8)) {
	case 0: return (double)((int)h_rng_below(r, 17) - 8);
	case 1: return h_rng_value(r, -30, 30, 53, 1);
	default: return h_rng_value(r, -6, 6, 53, 0);
	}
}

/* The loaded element by the public scalar rounding at draw idx. */
static double ref_load(const fpl_format *f, double x, fpl_rnd rnd, const fpl_state *st,
		       uint64_t idx)
{
	fpl_state s = *st;

	s.counter = idx;
	return fpl_round(f, x, rnd, &s);
}

static void check_loads_one(h_rng *r, int sum)
{
	fpl_accum_model m, g;
	fpl_state st, st0, s1, s2;
	size_t M = sum ? 1 : h_rng_below(r, 6), N = sum ? 1 : h_rng_below(r, 6);
	size_t K = h_rng_below(r, 4) ? h_rng_below(r, 7) : h_rng_below(r, 40);
	int ta = sum ? 0 : (int)h_rng_below(r, 2), tb = (int)h_rng_below(r, 2);
	int beta = (int)h_rng_below(r, 2), rc1, rc2, rc;
	size_t pa = h_rng_below(r, 3), pb = h_rng_below(r, 3), pc = h_rng_below(r, 3);
	size_t lda = (ta ? M : K) + pa, ldb = (tb ? K : N) + pb, ldc = N + pc;
	size_t i, j, k, ra = ta ? K : M, rb = tb ? N : K;
	double *A = calloc(ra * lda + 1, sizeof *A), *B = calloc(rb * ldb + 1, sizeof *B);
	double *C = calloc(M * ldc + 1, sizeof *C), *R1 = calloc(M * ldc + 1, sizeof *R1);
	double *al = calloc(M * K + 1, sizeof *al), *bl = calloc(K * N + 1, sizeof *bl);
	double *cl = calloc(M * N + 1, sizeof *cl), *R2 = calloc(M * N + 1, sizeof *R2);
	uint64_t c0, nA = M * K, nB = sum ? 0 : K * N;
	char buf[256];

	if (!A || !B || !C || !R1 || !al || !bl || !cl || !R2) {
		h_fail("out of memory");
		goto out;
	}
	random_model(r, &m);
	if (sum)
		lda = K;
	for (i = 0; i < ra * lda; i++)
		A[i] = rnd_input(r);
	for (i = 0; i < rb * ldb; i++)
		B[i] = rnd_input(r);
	for (i = 0; i < M * ldc; i++)
		C[i] = R1[i] = rnd_input(r);
	fpl_state_init(&st, h_rng_next(r));
	st.counter = h_rng_next(r) >> 20;
	st.sr_bits = 1 + (int)h_rng_below(r, 32);
	st0 = st;
	rc = fpl_accum_gemm_loads(al, bl, beta ? cl : NULL, &m, M, N, K, A, lda, ta,
				  sum ? NULL : B, ldb, tb, beta ? C : NULL, ldc, &st);
	if (!h_check(rc == 0 && !memcmp(&st, &st0, sizeof st))) {
		h_fail("loads: status %d or state changed (%s)", rc,
		       fpl_accum_describe(&m, buf, sizeof buf) ? "?" : buf);
		goto out;
	}
	c0 = st.counter;
	/* every element against fpl_round at its scheduled draw (an empty
	 * output, M or N 0, loads nothing, as fpl_accum_gemm) */
	for (i = 0; i < M && N; i++)
		for (k = 0; k < K; k++) {
			double x = A[ta ? k * lda + i : i * lda + k];
			double e = ref_load(&m.a, x, m.a_rnd, &st, c0 + i * K + k);
			if (!h_check(h_same(e, al[i * K + k])))
				h_fail("loads: A(%zu,%zu) %a: expected %a got %a", i, k, x, e,
				       al[i * K + k]);
		}
	for (k = 0; k < K && !sum && M; k++)
		for (j = 0; j < N; j++) {
			double x = B[tb ? j * ldb + k : k * ldb + j];
			double e = ref_load(&m.b, x, m.b_rnd, &st, c0 + nA + k * N + j);
			if (!h_check(h_same(e, bl[k * N + j])))
				h_fail("loads: B(%zu,%zu) %a: expected %a got %a", k, j, x, e,
				       bl[k * N + j]);
		}
	for (i = 0; i < M && beta; i++)
		for (j = 0; j < N; j++) {
			const fpl_format *f = m.order == FPL_ORDER_BLOCKED ? &m.promo : &m.acc;
			double e = ref_load(f, C[i * ldc + j], m.acc_rnd, &st,
					    c0 + nA + nB + i * N + j);
			if (!h_check(h_same(e, cl[i * N + j])))
				h_fail("loads: C(%zu,%zu) %a: expected %a got %a", i, j,
				       C[i * ldc + j], e, cl[i * N + j]);
		}
	/* the raw computation equals the computation on the loaded inputs */
	g = m;
	g.a_load = g.b_load = FPL_LOAD_GIVEN;
	s1 = st;
	s2 = st;
	if (sum) {
		if (!beta)
			cl[0] = 0;
		rc1 = fpl_accum_sum(R1, &m, K, A, 1, beta ? C : NULL, NULL, &s1);
		rc2 = fpl_accum_sum(R2, &g, K, al, 1, beta ? cl : NULL, NULL, &s2);
	} else {
		for (i = 0; i < M * N; i++)
			R2[i] = cl[i];
		rc1 = fpl_accum_gemm(R1, ldc, &m, beta, M, N, K, A, lda, ta, B, ldb, tb, NULL,
				     &s1);
		rc2 = fpl_accum_gemm(R2, N ? N : 1, &g, beta, M, N, K, al, K ? K : 1, 0, bl,
				     N ? N : 1, 0, NULL, &s2);
	}
	if (!h_check(rc1 == 0 && rc2 == 0 && s1.counter == s2.counter)) {
		h_fail("loads: gemm status %d / %d, counters %llu / %llu", rc1, rc2,
		       (unsigned long long)s1.counter, (unsigned long long)s2.counter);
		goto out;
	}
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++)
			if (!h_check(h_same(R1[i * ldc + j], R2[i * N + j])))
				h_fail("loads: %s M%zu N%zu K%zu ta%d tb%d beta%d (%zu,%zu): "
				       "raw %a, loaded %a",
				       fpl_accum_describe(&m, buf, sizeof buf) ? "?" : buf, M, N,
				       K, ta, tb, beta, i, j, R1[i * ldc + j], R2[i * N + j]);
out:
	free(A);
	free(B);
	free(C);
	free(R1);
	free(R2);
	free(al);
	free(bl);
	free(cl);
}

static void test_loads(h_rng *r)
{
	uint64_t n = h_scale(h_sanitized() ? 1500 : 20000, 200000), t;
	fpl_accum_model m;
	fpl_state st;
	double a[2] = { 1, 0.1 }, b[2] = { 1, 1 }, al[2], bl[2];

	for (t = 0; t < n; t++)
		check_loads_one(r, h_rng_below(r, 5) == 0);
	/* a given input outside its format: both fail the same way */
	fpl_accum_init(&m);
	fmt(&m.a, "fp16");
	m.a_load = FPL_LOAD_GIVEN;
	fpl_state_init(&st, 1);
	h_check(fpl_accum_gemm_loads(al, bl, NULL, &m, 1, 1, 2, a, 2, 0, b, 1, 0, NULL, 1, &st)
		== FPL_ERANGE);
	h_check(fpl_accum_gemm(al, 1, &m, 0, 1, 1, 2, a, 2, 0, b, 1, 0, NULL, &st)
		== FPL_ERANGE);
	a[1] = 0.5;
	h_check(fpl_accum_gemm_loads(al, bl, NULL, &m, 1, 1, 2, a, 2, 0, b, 1, 0, NULL, 1, &st)
		== 0 && al[1] == 0.5 && bl[0] == 1);
	h_check(fpl_accum_gemm_loads(al, bl, NULL, NULL, 1, 1, 2, a, 2, 0, b, 1, 0, NULL, 1,
				     &st) == FPL_EINVAL);
	h_check(fpl_accum_gemm_loads(al, bl, NULL, &m, 1, 2, 2, a, 2, 0, NULL, 1, 0, NULL, 1,
				     &st) == FPL_EINVAL);
	h_note("loads: %llu random operations", (unsigned long long)n);
}

/* ------------------------------------------------------------ 2. bound */

static void expect_bound(const char *order, const char *acc, fpl_rnd rnd, int prod_rounded,
			 const char *out, size_t K, double u, double kp)
{
	fpl_accum_model m;
	double b, e = kp * u >= 1 ? INFINITY : kp * u / (1 - kp * u), gu;

	fpl_accum_init(&m);
	fpl_accum_parse_order(&m, order);
	fmt(&m.acc, acc);
	m.acc_rnd = rnd;
	if (prod_rounded) {
		m.prod_exact = 0;
		fmt(&m.prod, "bf16");
		m.prod_rnd = FPL_RND_NE;
	}
	if (out) {
		m.out_set = 1;
		fmt(&m.out, out);
		m.out_rnd = FPL_RND_NE;
	}
	gu = fpl_accum_unit_roundoff(&m);
	b = fpl_accum_bound(&m, K);
	if (kp == 0)
		e = 0;
	if (!h_check(gu == u && b == e))
		h_fail("bound: %s acc %s K %zu: u %a (expected %a), bound %a (expected %a)", order,
		       acc, K, gu, u, b, e);
}

static void test_bound(void)
{
	double u24 = ldexp(1, -24), u11 = ldexp(1, -11), u8 = ldexp(1, -8);

	/* sequential: K roundings */
	expect_bound("sequential", "fp32", FPL_RND_NE, 0, NULL, 100, u24, 100);
	expect_bound("sequential", "fp32", FPL_RND_TZ, 0, NULL, 100, 2 * u24, 100);
	expect_bound("sequential", "fp32", FPL_RND_SP, 0, NULL, 100, 2 * u24, 100);
	expect_bound("sequential", "fp16", FPL_RND_NE, 0, NULL, 4096, u11, 4096);	/* inf */
	expect_bound("sequential", "fp32", FPL_RND_NE, 0, NULL, 0, u24, 0);
	expect_bound("sequential", "fp32", FPL_RND_NE, 0, "fp16", 0, u11, 1);
	/* rounded bf16 products and an fp16 output: u is the largest */
	expect_bound("sequential", "fp32", FPL_RND_NE, 1, NULL, 10, u8, 11);
	expect_bound("sequential", "fp32", FPL_RND_NE, 0, "fp16", 10, u11, 11);
	/* pairwise:L: min(L,K) + ceil(log2 ceil(K/L)) + 1 */
	expect_bound("pairwise", "fp32", FPL_RND_NE, 0, NULL, 1024, u24, 1 + 10 + 1);
	expect_bound("pairwise", "fp32", FPL_RND_NE, 0, NULL, 1000, u24, 1 + 10 + 1);
	expect_bound("pairwise:128", "fp32", FPL_RND_NE, 0, NULL, 1000, u24, 128 + 3 + 1);
	expect_bound("pairwise:128", "fp32", FPL_RND_NE, 0, NULL, 100, u24, 100 + 0 + 1);
	expect_bound("pairwise", "fp32", FPL_RND_NE, 0, NULL, 1, u24, 2);
	/* blocked:B: min(B,K) + ceil(K/B), u over acc and promo */
	expect_bound("blocked:128", "fp16", FPL_RND_NE, 0, NULL, 4096, u11, 128 + 32);
	expect_bound("blocked:128", "fp32", FPL_RND_NE, 0, NULL, 4096, u24, 128 + 32);
	expect_bound("blocked:128:bf16", "fp32", FPL_RND_NE, 0, NULL, 4096, u8, 128 + 32);
	expect_bound("blocked:128", "fp32", FPL_RND_NE, 0, NULL, 100, u24, 100 + 1);
	/* fused:F: ceil(K/F); with W twice that and u >= (F+1) 2^(1-W) */
	expect_bound("fused:32", "fp32", FPL_RND_NE, 0, NULL, 256, u24, 8);
	expect_bound("fused:32", "fp32", FPL_RND_NE, 0, NULL, 257, u24, 9);
	expect_bound("fused:3:30", "fp32", FPL_RND_NE, 0, NULL, 9, u24, 6);	/* 4*2^-29 < u */
	expect_bound("fused:7:20", "fp32", FPL_RND_NE, 0, NULL, 14, 8 * ldexp(1, -19), 4);
	expect_bound("fused:7:20:ne", "fp32", FPL_RND_NE, 0, NULL, 14, 8 * ldexp(1, -20), 4);
	/* kahan, neumaier: K + 1 */
	expect_bound("kahan", "fp16", FPL_RND_NE, 0, NULL, 10, u11, 11);
	expect_bound("neumaier", "bf16", FPL_RND_NE, 0, NULL, 10, u8, 11);
	/* pairs: K; evenodd:B: ceil(min(B,K)/2) + 1 + ceil(K/B) */
	expect_bound("pairs", "fp32", FPL_RND_NE, 0, NULL, 7, u24, 7);
	expect_bound("evenodd", "fp32", FPL_RND_NE, 0, NULL, 2, u24, 1 + 1 + 1);
	expect_bound("evenodd", "fp32", FPL_RND_NE, 0, NULL, 64, u24, 16 + 1 + 2);
	expect_bound("evenodd:5", "fp32", FPL_RND_NE, 1, NULL, 11, u8, 3 + 1 + 3 + 1);
	/* e4m3fn: p = 4 */
	expect_bound("sequential", "e4m3fn", FPL_RND_NE, 0, NULL, 4, ldexp(1, -4), 4);
	expect_bound("sequential", "e4m3fn", FPL_RND_NE, 0, NULL, 16, ldexp(1, -4), 16);
	h_check(isnan(fpl_accum_bound(NULL, 3)) && isnan(fpl_accum_unit_roundoff(NULL)));
}

/*
 * K' counted: each order of fplab-models(7) (and accum.h) run on depths
 * instead of values, beta = 1 (C at depth 0): a term enters at depth 0
 * (1 when products are rounded), every rounding step gives its result
 * the largest depth of its operands plus one, the +0 pad of pairs is
 * exact (no step), and the result is the deepest value's depth (+1 for
 * an output rounding).  Written from the orders' definitions, not from
 * bound.c's formulas; fpl_accum_bound(mod, K) must be gamma of it.
 */
static size_t dmax(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* A chain over terms [k0, k1) (every `step`-th) from +0 (depth 0). */
static size_t d_chain(size_t k0, size_t k1, size_t step, size_t t)
{
	size_t s = 0, k;

	for (k = k0; k < k1; k += step)
		s = dmax(s, t) + 1;
	return s;
}

/* pairwise: leaves [l0, l1) of L terms out of K. */
static size_t d_tree(size_t l0, size_t l1, size_t L, size_t K, size_t t)
{
	size_t mid;

	if (l1 - l0 == 1)
		return d_chain(l0 * L, l1 * L < K ? l1 * L : K, 1, t);
	mid = l0 + (l1 - l0 + 1) / 2;
	return dmax(d_tree(l0, mid, L, K, t), d_tree(mid, l1, L, K, t)) + 1;
}

/* pairs over terms [k0, k1): per pair the odd element (or the pad),
 * then the even one, onto s. */
static size_t d_pairs(size_t s, size_t k0, size_t k1, size_t t)
{
	size_t k;

	for (k = k0; k < k1; k += 2) {
		if (k + 1 < k1)
			s = dmax(s, t) + 1;
		s = dmax(s, t) + 1;
	}
	return s;
}

static size_t depth(const fpl_accum_model *m, size_t K)
{
	size_t t = m->prod_exact ? 0 : 1, s = 0, k0, B = m->block;

	if (K == 0)
		return m->out_set;
	switch (m->order) {
	case FPL_ORDER_SEQUENTIAL:
		s = d_chain(0, K, 1, t);	/* from C: the same count */
		break;
	case FPL_ORDER_PAIRWISE:
		s = d_tree(0, (K + m->leaf - 1) / m->leaf, m->leaf, K, t) + 1;	/* C + T */
		break;
	case FPL_ORDER_BLOCKED:
		for (k0 = 0; k0 < K; k0 += B)
			s = dmax(s, d_chain(k0, K - k0 < B ? K : k0 + B, 1, t)) + 1;
		break;
	case FPL_ORDER_FUSED:		/* one rounding, and W's alignment, per group */
		for (k0 = 0; k0 < K; k0 += B)
			s = dmax(s, t) + (m->fused_w ? 2 : 1);
		break;
	case FPL_ORDER_PAIRS:
		if (!m->pair_block) {
			s = d_pairs(0, 0, K, t);
			break;
		}
		for (k0 = 0; k0 < K; k0 += m->pair_block)	/* C + block 0, ... */
			s = dmax(s, d_pairs(0, k0, K - k0 < m->pair_block ? K
					    : k0 + m->pair_block, t)) + 1;
		break;
	case FPL_ORDER_EVENODD:
		for (k0 = 0; k0 < K; k0 += B) {
			size_t k1 = K - k0 < B ? K : k0 + B;
			size_t u = dmax(d_chain(k0, k1, 2, t), d_chain(k0 + 1, k1, 2, t)) + 1;
			s = dmax(s, u) + 1;
		}
		break;
	default:	/* kahan, neumaier: K + 1 by definition (fplab-models(7)) */
		s = K + 1 + t;
		break;
	}
	return s + (size_t)m->out_set;
}

static void test_bound_counted(void)
{
	static const char *const kord[] = {
		"sequential", "pairwise", "pairwise:3", "pairwise:128", "blocked:1", "blocked:16",
		"blocked:7", "fused:1", "fused:8", "fused:5:20", "pairs", "pairs:2", "pairs:8",
		"pairs:512", "evenodd", "evenodd:1", "evenodd:5", "kahan", "neumaier"
	};
	size_t o, K, v, n = 0;

	for (o = 0; o < sizeof kord / sizeof *kord; o++)
		for (v = 0; v < 4; v++)
			for (K = 0; K <= 1100; K += K < 80 ? 1 : 37) {
				fpl_accum_model m;
				double u, d, e, b;

				fpl_accum_init(&m);
				if (!h_check(fpl_accum_parse_order(&m, kord[o]) == 0))
					h_fail("order %s", kord[o]);
				m.prod_exact = !(v & 1);
				m.out_set = (v & 2) != 0;
				u = fpl_accum_unit_roundoff(&m);
				d = (double)depth(&m, K);
				e = d == 0 ? 0 : d * u / (1 - d * u);
				b = fpl_accum_bound(&m, K);
				n++;
				if (!h_check(b == e))
					h_fail("bound: %s K %zu products %s output %s: %a, expected "
					       "gamma_%g = %a", kord[o], K, v & 1 ? "rounded" : "exact",
					       v & 2 ? "rounded" : "none", b, d, e);
			}
	/* fplab-models(7)'s figures at K = 1000, exact products, no output */
	{
		static const struct { const char *order; double kp; } f[] = {
			{ "pairwise", 12 }, { "blocked:16", 79 }, { "kahan", 1001 },
			{ "pairs:8", 8 + 125 }, { "evenodd", 16 + 1 + 32 }, { "fused:8:20", 250 },
			{ "sequential", 1000 }, { "pairs", 1000 }, { "pairwise:128", 128 + 3 + 1 },
			{ "pairs:512", 512 + 2 }, { "fused:8", 125 }, { "neumaier", 1001 }
		};
		for (o = 0; o < sizeof f / sizeof *f; o++) {
			fpl_accum_model m;
			double u, b;

			fpl_accum_init(&m);
			fpl_accum_parse_order(&m, f[o].order);
			u = fpl_accum_unit_roundoff(&m);
			b = fpl_accum_bound(&m, 1000);
			if (!h_check(b == f[o].kp * u / (1 - f[o].kp * u)))
				h_fail("bound: %s at K = 1000: gamma_%g expected", f[o].order, f[o].kp);
		}
	}
	h_note("bound: K' counted on %zu models and lengths", n);
}

/* ------------------------------------------------------------ 3. MPFR */

/* The reference of one output: kind 0 finite (s exact, g = sum of |terms|
 * exact), 1 +inf, 2 -inf, 3 NaN. */
typedef struct refout {
	int kind;
	mpfr_t s, g;
} refout;

static mpfr_t t_a, t_b, t_p, t_d, t_q, t_lo, t_hi;

static void ref_term(refout *o, uint64_t *cnt, double a, double b, int prod)
{
	int ta, tg;

	if (prod && (isnan(a) || isnan(b) || (isinf(a) && b == 0) || (isinf(b) && a == 0))) {
		cnt[0]++;
		return;
	}
	if (!prod && isnan(a)) {
		cnt[0]++;
		return;
	}
	if (isinf(a) || (prod && isinf(b))) {
		cnt[(!!signbit(a) != (prod && !!signbit(b))) ? 2 : 1]++;
		return;
	}
	mpfr_set_d(t_a, a, MPFR_RNDN);
	mpfr_set_d(t_b, prod ? b : 1.0, MPFR_RNDN);
	mpfr_mul(t_p, t_a, t_b, MPFR_RNDN);	/* 128 bits: exact */
	ta = mpfr_add(o->s, o->s, t_p, MPFR_RNDN);
	tg = mpfr_add(o->g, o->g, t_p, MPFR_RNDN);
	if (mpfr_sgn(t_p) < 0) {
		tg |= mpfr_sub(o->g, o->g, t_p, MPFR_RNDN);
		tg |= mpfr_sub(o->g, o->g, t_p, MPFR_RNDN);
	}
	if (!h_check(ta == 0 && tg == 0))
		h_fail("mpfr: inexact reference sum");
}

typedef struct gcase {
	size_t M, N, K;
	int transa, transb, sum;
	size_t lda, ldb, ldc, ldr;
	double *a, *b, *c, *r;
} gcase;

static double A_of(const gcase *G, size_t i, size_t k)
{
	return G->a[G->transa ? k * G->lda + i : i * G->lda + k];
}

static double B_of(const gcase *G, size_t k, size_t j)
{
	return G->b[G->transb ? j * G->ldb + k : k * G->ldb + j];
}

static void ref_compute(const gcase *G, size_t i, size_t j, refout *o)
{
	uint64_t cnt[3] = { 0, 0, 0 };	/* nan, +inf, -inf */
	size_t k;

	mpfr_set_zero(o->s, 1);
	mpfr_set_zero(o->g, 1);
	for (k = 0; k < G->K; k++)
		ref_term(o, cnt, A_of(G, i, k), G->sum ? 1 : B_of(G, k, j), !G->sum);
	if (G->c)
		ref_term(o, cnt, G->c[i * G->ldc + j], 1, 0);
	o->kind = cnt[0] || (cnt[1] && cnt[2]) ? 3 : cnt[1] ? 1 : cnt[2] ? 2 : 0;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* (a + b) / 2 for finite a, b whose sum may overflow (two relative errors
 * near DBL_MAX): then a/2 + b/2, exact at that size. */
static double mid(double a, double b)
{
	double s = a + b;
	return isinf(s) && isfinite(a) && isfinite(b) ? a / 2 + b / 2 : s / 2;
}

/* Check fpl_accum_errors_gemm on one case against MPFR. */
static void check_case(const gcase *G, int threads, const char *what)
{
	size_t n = G->M * G->N, i, j, q = 0;
	double *exact = malloc((n + 1) * sizeof *exact), *lo = malloc((n + 1) * sizeof *lo);
	double *hi = malloc((n + 1) * sizeof *hi), v, e_maxabs = 0, e_sumlo = 0, e_sumhi = 0;
	double e_maxlo = 0, e_maxhi = 0, mlo, mhi, nw, e_sqlo = 0, e_sqhi = 0;
	uint64_t e_zero = 0, e_nonfin = 0, e_nan = 0, e_inf = 0, e_cmp = 0;
	fpl_accum_errors err;
	fpl_accum_model mod;
	refout o;
	mpfr_t nd, dd;
	int rc;

	if (!exact || !lo || !hi) {
		h_fail("out of memory");
		goto out;
	}
	fpl_accum_init(&mod);
	rc = fpl_accum_errors_gemm(&err, exact, G->r, G->ldr, &mod, G->M, G->N, G->K, G->a,
				   G->lda, G->transa, G->sum ? NULL : G->b, G->ldb, G->transb,
				   G->c, G->ldc, threads);
	if (!h_check(rc == 0)) {
		h_fail("%s: status %d", what, rc);
		goto out;
	}
	mpfr_inits2(PREC, o.s, o.g, nd, dd, (mpfr_ptr)0);
	mpfr_set_zero(nd, 1);
	mpfr_set_zero(dd, 1);
	for (i = 0; i < G->M; i++)
		for (j = 0; j < G->N; j++) {
			double y = G->r[i * G->ldr + j], ev;
			size_t idx = i * G->N + j;

			ref_compute(G, i, j, &o);
			ev = o.kind == 0 ? mpfr_get_d(o.s, MPFR_RNDN)
			     : o.kind == 3 ? NAN : o.kind == 1 ? INFINITY : -INFINITY;
			if (!h_check(o.kind == 3 ? isnan(exact[idx]) : h_same(ev, exact[idx])))
				h_fail("%s (%zu,%zu): exact expected %a got %a", what, i, j, ev,
				       exact[idx]);
			e_nan += isnan(y) != 0;
			e_inf += isinf(y) != 0;
			if (o.kind != 0)
				continue;
			e_cmp++;
			if (!isfinite(y)) {
				/* the documented rule: a failed result has error +inf */
				e_nonfin++;
				lo[q] = hi[q] = INFINITY;
				e_maxlo = e_maxhi = INFINITY;
				e_sumlo = e_sumhi = e_sqlo = e_sqhi = INFINITY;
				q++;
				continue;
			}
			/* |y - s| exactly, then its square into the norm */
			mpfr_set_d(t_d, y, MPFR_RNDN);
			mpfr_sub(t_d, t_d, o.s, MPFR_RNDN);	/* PREC bits: exact */
			mpfr_abs(t_d, t_d, MPFR_RNDN);
			v = mpfr_get_d(t_d, MPFR_RNDN);
			if (v > e_maxabs)
				e_maxabs = v;
			/* the norms as documented: of the entries rounded to binary64 */
			mpfr_set_d(t_q, v, MPFR_RNDN);
			mpfr_sqr(t_q, t_q, MPFR_RNDN);
			mpfr_add(nd, nd, t_q, MPFR_RNDN);
			mpfr_set_d(t_q, mpfr_get_d(o.g, MPFR_RNDN), MPFR_RNDN);
			mpfr_sqr(t_q, t_q, MPFR_RNDN);
			mpfr_add(dd, dd, t_q, MPFR_RNDN);
			if (mpfr_zero_p(o.s))
				continue;
			if (y == 0)
				e_zero++;
			mpfr_abs(t_q, o.s, MPFR_RNDN);
			mpfr_div(t_lo, t_d, t_q, MPFR_RNDD);
			mpfr_div(t_hi, t_d, t_q, MPFR_RNDU);
			lo[q] = mpfr_get_d(t_lo, MPFR_RNDD);
			hi[q] = mpfr_get_d(t_hi, MPFR_RNDU);
			e_maxlo = fmax(e_maxlo, lo[q]);
			e_maxhi = fmax(e_maxhi, hi[q]);
			e_sumlo += lo[q];
			e_sumhi += hi[q];
			e_sqlo += lo[q] * lo[q];
			e_sqhi += hi[q] * hi[q];
			q++;
		}
	if (!h_check(err.outputs == n && err.rel_n == q && err.became_zero == e_zero
		     && err.nonfinite == e_nonfin && err.nan == e_nan && err.inf == e_inf
		     && err.compared == e_cmp))
		h_fail("%s: counts outputs %llu rel_n %llu (exp %zu) zero %llu (exp %llu) "
		       "nonfinite %llu (exp %llu)", what, (unsigned long long)err.outputs,
		       (unsigned long long)err.rel_n, q, (unsigned long long)err.became_zero,
		       (unsigned long long)e_zero, (unsigned long long)err.nonfinite,
		       (unsigned long long)e_nonfin);
	if (e_nonfin)
		e_maxabs = INFINITY;
	if (!h_check(h_same(err.max_abs, e_maxabs)))
		h_fail("%s: max_abs expected %a got %a", what, e_maxabs, err.max_abs);
	if (!h_check(q ? err.max_rel >= e_maxlo && err.max_rel <= e_maxhi : err.max_rel == 0))
		h_fail("%s: max_rel %a outside [%a, %a]", what, err.max_rel, e_maxlo, e_maxhi);
	/* the median: the same order statistics of the lower and upper ends */
	if (q) {
		qsort(lo, q, sizeof *lo, cmp_d);
		qsort(hi, q, sizeof *hi, cmp_d);
		mlo = q % 2 ? lo[q / 2] : mid(lo[q / 2 - 1], lo[q / 2]);
		mhi = q % 2 ? hi[q / 2] : mid(hi[q / 2 - 1], hi[q / 2]);
		if (isfinite(mlo))
			mlo -= ldexp(fabs(mlo), -52);
		if (isfinite(mhi))
			mhi += ldexp(fabs(mhi), -52);
		if (!h_check(err.median_rel >= mlo && err.median_rel <= mhi))
			h_fail("%s: median_rel %a outside [%a, %a]", what, err.median_rel, mlo,
			       mhi);
		mlo = e_sumlo / (double)q * (1 - 1e-13);
		mhi = e_sumhi / (double)q * (1 + 1e-13);
		if (!h_check(err.mean_rel >= mlo && err.mean_rel <= mhi))
			h_fail("%s: mean_rel %a outside [%a, %a]", what, err.mean_rel, mlo, mhi);
		/* the squares of relative errors this small or large may
		 * under/overflow here: check the RMS only where they do not */
		mlo = sqrt(e_sqlo / (double)q) * (1 - 1e-13);
		mhi = sqrt(e_sqhi / (double)q) * (1 + 1e-13);
		if (!h_check(!(e_sqhi < 0x1p1000 && e_sqlo > 0x1p-900)
			     || (err.rms_rel >= mlo && err.rms_rel <= mhi)))
			h_fail("%s: rms_rel %a outside [%a, %a]", what, err.rms_rel, mlo, mhi);
		if (!h_check(!e_nonfin || isinf(err.rms_rel)))
			h_fail("%s: rms_rel %a with an infinite error", what, err.rms_rel);
	} else if (!h_check(err.median_rel == 0 && err.mean_rel == 0 && err.rms_rel == 0)) {
		h_fail("%s: median/mean of nothing not 0", what);
	}
	/* the normwise ratio */
	if (e_nonfin) {
		nw = INFINITY;
	} else if (mpfr_zero_p(dd)) {
		nw = 0;
	} else {
		mpfr_sqrt(nd, nd, MPFR_RNDN);
		mpfr_sqrt(dd, dd, MPFR_RNDN);
		mpfr_div(nd, nd, dd, MPFR_RNDN);
		nw = mpfr_get_d(nd, MPFR_RNDN);
	}
	if (!h_check(fabs(err.normwise - nw) <= 1e-13 * nw
		     || (isinf(nw) && isinf(err.normwise)) || (isnan(nw) && isnan(err.normwise))))
		h_fail("%s: normwise expected %a got %a", what, nw, err.normwise);
	mpfr_clears(o.s, o.g, nd, dd, (mpfr_ptr)0);
out:
	free(exact);
	free(lo);
	free(hi);
}

/* A result for an output whose exact value rounds to e. */
static double some_result(h_rng *r, double e)
{
	switch (h_rng_below(r, 12)) {
	case 0: return e;
	case 1: return nextafter(e, INFINITY);
	case 2: return nextafter(e, -INFINITY);
	case 3: return 0.0;
	case 4: return -0.0;
	case 5: return INFINITY;
	case 6: return NAN;
	case 7: return isfinite(e) ? e * (1 + ldexp((double)h_rng_below(r, 1000), -20)) : 1.0;
	case 8: return (float)e;
	case 9: return DBL_MAX;
	default: return h_rng_value(r, -20, 20, 53, 0);
	}
}

static void random_case(h_rng *r, int threads)
{
	gcase G;
	size_t i, j, k, ra, rb;
	double *ex = NULL;
	int style = (int)h_rng_below(r, 5), hasc = (int)h_rng_below(r, 2);
	fpl_accum_errors err;
	fpl_accum_model mod;

	memset(&G, 0, sizeof G);
	G.sum = h_rng_below(r, 6) == 0;
	G.M = 1 + h_rng_below(r, 5);
	G.N = G.sum ? 1 : 1 + h_rng_below(r, 5);
	G.K = h_rng_below(r, 6) == 0 ? 0 : 1 + h_rng_below(r, 12);
	G.transa = (int)h_rng_below(r, 2);
	G.transb = (int)h_rng_below(r, 2);
	G.lda = (G.transa ? G.M : G.K) + h_rng_below(r, 2);
	G.ldb = (G.transb ? G.K : G.N) + h_rng_below(r, 2);
	G.ldc = G.N + h_rng_below(r, 2);
	G.ldr = G.N + h_rng_below(r, 2);
	ra = G.transa ? G.K : G.M;
	rb = G.transb ? G.N : G.K;
	G.a = calloc(ra * G.lda + 1, sizeof(double));
	G.b = calloc(rb * G.ldb + 1, sizeof(double));
	G.c = hasc ? calloc(G.M * G.ldc + 1, sizeof(double)) : NULL;
	G.r = calloc(G.M * G.ldr + 1, sizeof(double));
	ex = calloc(G.M * G.N + 1, sizeof *ex);
	if (!G.a || !G.b || (hasc && !G.c) || !G.r || !ex) {
		h_fail("out of memory");
		goto out;
	}
	for (i = 0; i < ra * G.lda; i++)
		G.a[i] = style == 1 ? h_rng_value(r, 500, 1023, 53, 0)	/* overflow */
			 : style == 2 ? h_rng_value(r, -1074, 1023, 53, 1)
			 : h_rng_value(r, -20, 20, (int)(1 + h_rng_below(r, 53)),
				       h_rng_below(r, 8) == 0);
	for (i = 0; i < rb * G.ldb; i++)
		G.b[i] = style == 1 ? h_rng_value(r, 500, 1023, 53, 0)
			 : style == 2 ? h_rng_value(r, -1074, 1023, 53, 1)
			 : h_rng_value(r, -20, 20, (int)(1 + h_rng_below(r, 53)), 0);
	if (style == 3 && G.K >= 2 && !G.sum)	/* cancellation: term 1 = -term 0 */
		for (i = 0; i < G.M; i++) {
			double *a0 = &G.a[G.transa ? i : i * G.lda];
			double *a1 = &G.a[G.transa ? G.lda + i : i * G.lda + 1];
			*a1 = -*a0;
			for (j = 0; j < G.N; j++)
				G.b[G.transb ? j * G.ldb + 1 : G.ldb + j] =
					G.b[G.transb ? j * G.ldb : j];
		}
	/* first pass: results near the exact values, C cancelling them */
	fpl_accum_init(&mod);
	if (hasc)
		for (i = 0; i < G.M * G.ldc; i++)
			G.c[i] = h_rng_value(r, -20, 20, 53, h_rng_below(r, 10) == 0);
	for (i = 0; i < G.M * G.ldr; i++)
		G.r[i] = 0;
	if (fpl_accum_errors_gemm(&err, ex, G.r, G.ldr, &mod, G.M, G.N, G.K, G.a, G.lda,
				  G.transa, G.sum ? NULL : G.b, G.ldb, G.transb, G.c, G.ldc, 1))
		h_fail("first pass failed");
	if (hasc && style == 4)		/* C = -(A.B + C) rounded: huge cancellation */
		for (i = 0; i < G.M; i++)
			for (j = 0; j < G.N; j++)
				if (isfinite(ex[i * G.N + j]))
					G.c[i * G.ldc + j] -= ex[i * G.N + j];
	for (i = 0; i < G.M; i++)
		for (j = 0; j < G.N; j++) {
			k = i * G.ldr + j;
			G.r[k] = some_result(r, style == 4 ? 0 : ex[i * G.N + j]);
		}
	check_case(&G, threads, "random");
out:
	free(G.a);
	free(G.b);
	free(G.c);
	free(G.r);
	free(ex);
}

static void test_mpfr(h_rng *r)
{
	uint64_t n = h_scale(h_sanitized() ? 1500 : 20000, 200000), t;

	mpfr_inits2(53, t_a, t_b, (mpfr_ptr)0);
	mpfr_init2(t_p, 128);
	mpfr_inits2(PREC, t_d, t_q, (mpfr_ptr)0);
	mpfr_inits2(300, t_lo, t_hi, (mpfr_ptr)0);
	for (t = 0; t < n; t++)
		random_case(r, 1 + (int)h_rng_below(r, 3));
	h_note("mpfr: %llu random cases", (unsigned long long)n);
}

/* ------------------------------------------------------------ 4. facts */

static void test_ones(void)
{
	enum { K = 4096 };
	double *x = malloc(K * sizeof *x), res, ex;
	fpl_accum_model m;
	fpl_accum_errors err;
	fpl_state st;
	size_t i;

	if (!x)
		return;
	for (i = 0; i < K; i++)
		x[i] = 1;
	fpl_accum_init(&m);
	fmt(&m.acc, "fp16");
	fpl_state_init(&st, 7);
	/* 2048 + 1 is a tie in fp16 (ulp 2 from 2048) and goes to even 2048 */
	h_check(fpl_accum_sum(&res, &m, K, x, 1, NULL, NULL, &st) == 0 && res == 2048);
	h_check(fpl_accum_errors_gemm(&err, &ex, &res, 1, &m, 1, 1, K, x, K, 0, NULL, 0, 0,
				      NULL, 0, 2) == 0);
	if (!h_check(ex == 4096 && err.max_rel == 0.5 && err.median_rel == 0.5
		     && err.mean_rel == 0.5 && err.max_abs == 2048 && err.normwise == 0.5
		     && err.rel_n == 1 && err.outputs == 1 && err.became_zero == 0
		     && err.nonfinite == 0 && isinf(err.bound)))
		h_fail("ones: exact %a rel %a med %a abs %a normwise %a bound %a", ex,
		       err.max_rel, err.median_rel, err.max_abs, err.normwise, err.bound);
	/* the same as a dot product with a column of ones */
	h_check(fpl_accum_errors_gemm(&err, &ex, &res, 1, &m, 1, 1, K, x, K, 0, x, 1, 0, NULL,
				      0, 1) == 0 && ex == 4096 && err.max_rel == 0.5);
	free(x);
}

static void test_int_gemm(h_rng *r)
{
	enum { M = 19, N = 23, K = 31 };
	double A[M * K], B[K * N], C[M * N], R[M * N], E[M * N];
	fpl_accum_model m;
	fpl_accum_errors err;
	fpl_state st;
	size_t i;
	int beta;

	for (i = 0; i < M * K; i++)
		A[i] = (double)((int)h_rng_below(r, 33) - 16);
	for (i = 0; i < K * N; i++)
		B[i] = (double)((int)h_rng_below(r, 33) - 16);
	fpl_accum_init(&m);
	fmt(&m.a, "fp64");
	m.b = m.acc = m.a;
	fpl_state_init(&st, 3);
	for (beta = 0; beta < 2; beta++) {
		for (i = 0; i < M * N; i++)
			R[i] = C[i] = (double)((int)h_rng_below(r, 2001) - 1000);
		if (!h_check(fpl_accum_gemm(R, N, &m, beta, M, N, K, A, K, 0, B, N, 0, NULL, &st)
			     == 0))
			continue;
		h_check(fpl_accum_errors_gemm(&err, E, R, N, &m, M, N, K, A, K, 0, B, N, 0,
					      beta ? C : NULL, N, 2) == 0);
		if (!h_check(err.max_rel == 0 && err.normwise == 0 && err.max_abs == 0
			     && err.median_rel == 0 && !memcmp(R, E, sizeof R)))
			h_fail("int gemm beta %d: max_rel %a normwise %a", beta, err.max_rel,
			       err.normwise);
	}
}

/* The median by hand: 1x1 exact values 1 (a = b = 1), results 1 + d. */
/*
 * Failed results (accum_error.h's one rule), by hand: outputs 1*1 (+ C).
 * exact 1, r NaN: nan 1, rel +inf in max, median, mean and rms, max_abs
 * and normwise +inf.  exact 1, r = +inf next to an exact 1, r = 1: inf 1,
 * rel {+inf, 0}: median (inf + 0)/2 = inf.  A NaN input (exact NaN), r
 * NaN: nan 1, nothing compared (rel_n 0, errors 0).  An exact 0 (C = -1
 * cancels 1*1) with r = +inf: error +inf as well.
 */
static void test_failed(void)
{
	double one[2] = { 1, 1 }, ex[2], rn[1] = { NAN }, ri[2] = { INFINITY, 1 };
	double nanin[1] = { NAN }, c[1] = { -1 };
	fpl_accum_model m;
	fpl_accum_errors err;

	fpl_accum_init(&m);
	h_check(fpl_accum_errors_gemm(&err, ex, rn, 1, &m, 1, 1, 1, one, 1, 0, one, 1, 0, NULL,
				      0, 1) == 0);
	if (!h_check(err.nan == 1 && err.inf == 0 && err.nonfinite == 1 && err.rel_n == 1
		     && isinf(err.max_rel) && isinf(err.median_rel) && isinf(err.mean_rel)
		     && isinf(err.rms_rel) && isinf(err.max_abs) && isinf(err.normwise)
		     && ex[0] == 1))
		h_fail("nan result: nan %llu max %a mean %a rms %a normwise %a",
		       (unsigned long long)err.nan, err.max_rel, err.mean_rel, err.rms_rel,
		       err.normwise);
	h_check(fpl_accum_errors_gemm(&err, ex, ri, 2, &m, 1, 2, 1, one, 1, 0, one, 2, 0, NULL,
				      0, 1) == 0);
	if (!h_check(err.inf == 1 && err.nan == 0 && err.rel_n == 2 && isinf(err.max_rel)
		     && isinf(err.median_rel) && isinf(err.mean_rel)))
		h_fail("inf result: inf %llu rel_n %llu median %a", (unsigned long long)err.inf,
		       (unsigned long long)err.rel_n, err.median_rel);
	h_check(fpl_accum_errors_gemm(&err, ex, rn, 1, &m, 1, 1, 1, nanin, 1, 0, one, 1, 0,
				      NULL, 0, 1) == 0);
	if (!h_check(err.nan == 1 && err.nonfinite == 0 && err.rel_n == 0 && err.max_rel == 0
		     && err.compared == 0
		     && err.mean_rel == 0 && err.rms_rel == 0 && err.normwise == 0
		     && isnan(ex[0])))
		h_fail("nan input: nan %llu rel_n %llu max %a", (unsigned long long)err.nan,
		       (unsigned long long)err.rel_n, err.max_rel);
	h_check(fpl_accum_errors_gemm(&err, ex, ri, 1, &m, 1, 1, 1, one, 1, 0, one, 1, 0, c, 1,
				      1) == 0);
	if (!h_check(err.inf == 1 && err.rel_n == 1 && isinf(err.max_rel) && ex[0] == 0))
		h_fail("inf over an exact 0: rel_n %llu max %a", (unsigned long long)err.rel_n,
		       err.max_rel);
}

static void test_median(void)
{
	double a[2] = { 1, 1 }, b[6] = { 1, 1, 1, 1, 1, 1 }, ex[6];
	double r5[5] = { 1.5, 1.25, 1.125, 2, 1 };	/* rel 0.5 .25 .125 1 0 */
	double r4[4] = { 1.5, 1.25, 1.125, 2 };		/* rel 0.5 .25 .125 1 */
	double r6[6] = { 1, 1, 1, 1, 1, 1 };
	fpl_accum_model m;
	fpl_accum_errors err;

	fpl_accum_init(&m);
	h_check(fpl_accum_errors_gemm(&err, ex, r5, 5, &m, 1, 5, 1, a, 1, 0, b, 5, 0, NULL, 0, 1)
		== 0);
	/* rms: squares .25 + .0625 + .015625 + 1 + 0 = 1.328125, over 5 */
	if (!h_check(err.median_rel == 0.25 && err.max_rel == 1 && err.mean_rel == 1.875 / 5
		     && err.max_abs == 1 && err.rel_n == 5
		     && fabs(err.rms_rel - sqrt(1.328125 / 5)) <= 0x1p-52))
		h_fail("median odd: %a max %a mean %a", err.median_rel, err.max_rel, err.mean_rel);
	h_check(fpl_accum_errors_gemm(&err, ex, r4, 4, &m, 1, 4, 1, a, 1, 0, b, 4, 0, NULL, 0, 1)
		== 0);
	/* even count: the mean of 0.25 and 0.5 */
	if (!h_check(err.median_rel == 0.375 && err.mean_rel == 1.875 / 4))
		h_fail("median even: %a", err.median_rel);
	/* a 2x3 layout with ldr 3, transposes: 0s and one 3/1 - 1 = 2 ... */
	r6[4] = 3;
	h_check(fpl_accum_errors_gemm(&err, ex, r6, 3, &m, 2, 3, 1, a, 1, 0, b, 3, 0, NULL, 0, 1)
		== 0 && err.median_rel == 0 && err.max_rel == 2 && err.max_abs == 2);
	/* no relative errors at all: exact zeros; C cancels A.B */
	{
		double c[1] = { -1 }, r1[1] = { 0.5 };
		h_check(fpl_accum_errors_gemm(&err, ex, r1, 1, &m, 1, 1, 1, a, 1, 0, b, 1, 0, c,
					      1, 1) == 0 && err.rel_n == 0 && err.max_rel == 0
			&& err.median_rel == 0 && err.max_abs == 0.5 && ex[0] == 0
			&& err.normwise == 0.25);
	}
	/* empty and invalid */
	h_check(fpl_accum_errors_gemm(&err, ex, r6, 1, &m, 0, 1, 1, a, 1, 0, b, 1, 0, NULL, 0, 1)
		== 0 && err.outputs == 0);
	h_check(fpl_accum_errors_gemm(&err, ex, r6, 1, &m, 1, 2, 1, a, 1, 0, NULL, 1, 0, NULL, 0,
				      1) == FPL_EINVAL);
	h_check(fpl_accum_errors_gemm(NULL, ex, r6, 1, &m, 1, 1, 1, a, 1, 0, b, 1, 0, NULL, 0, 1)
		== FPL_EINVAL);
}

/* Uniform in [0.5, 1.5), 20 bits. */
static double unit(h_rng *r)
{
	return 0.5 + ldexp((double)h_rng_below(r, 1 << 20), -20);
}

/* normwise <= bound under the model, on its own loaded inputs. */
static void bound_case(h_rng *r, const char *acc, const char *in, const char *order,
		       fpl_rnd rnd, int prod_rounded, size_t M, size_t N, size_t K, double emag)
{
	fpl_accum_model m;
	fpl_accum_errors err;
	fpl_state st;
	double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
	double *C = malloc(M * N * sizeof *C), *al = malloc(M * K * sizeof *al);
	double *bl = malloc(K * N * sizeof *bl), *R = malloc(M * N * sizeof *R);
	size_t i;
	char buf[256];

	if (!A || !B || !C || !al || !bl || !R) {
		h_fail("out of memory");
		goto out;
	}
	fpl_accum_init(&m);
	fmt(&m.a, in);
	m.b = m.a;
	fmt(&m.acc, acc);
	m.acc_rnd = rnd;
	if (fpl_accum_parse_order(&m, order))
		h_fail("order %s", order);
	if (prod_rounded) {
		m.prod_exact = 0;
		m.prod = m.acc;
		m.prod_rnd = rnd;
	}
	for (i = 0; i < M * K; i++)
		A[i] = (h_rng_below(r, 2) ? -1 : 1) * emag * unit(r);
	for (i = 0; i < K * N; i++)
		B[i] = (h_rng_below(r, 4) ? 1 : -1) * unit(r);
	fpl_state_init(&st, h_rng_next(r));
	if (fpl_accum_gemm_loads(al, bl, NULL, &m, M, N, K, A, K, 0, B, N, 0, NULL, N, &st)
	    || fpl_accum_gemm(R, N, &m, 0, M, N, K, A, K, 0, B, N, 0, NULL, &st)
	    || fpl_accum_errors_gemm(&err, NULL, R, N, &m, M, N, K, al, K, 0, bl, N, 0, NULL, 0,
				     2)) {
		h_fail("bound case failed");
		goto out;
	}
	if (!h_check(err.normwise <= err.bound && err.nonfinite == 0))
		h_fail("bound: %s M%zu N%zu K%zu: normwise %g > bound %g (nonfinite %llu)",
		       fpl_accum_describe(&m, buf, sizeof buf) ? "?" : buf, M, N, K,
		       err.normwise, err.bound, (unsigned long long)err.nonfinite);
out:
	free(A);
	free(B);
	free(C);
	free(al);
	free(bl);
	free(R);
}

static void bound_set(h_rng *r, const char *ord, fpl_rnd rnd, int pr)
{
	bound_case(r, "fp32", "bf16", ord, rnd, pr, 9, 7, 500, 1);
	bound_case(r, "fp16", "fp16", ord, rnd, pr, 8, 6, 200, 1);
	bound_case(r, "bf16", "bf16", ord, rnd, pr, 8, 6, 60, 1);
	bound_case(r, "e4m3fn", "e4m3fn", ord, rnd, pr, 6, 5, 6, 1);
	bound_case(r, "e4m3fn", "e4m3fn", ord, rnd, pr, 6, 5, 12, 0.25);
}

static void test_bound_holds(h_rng *r)
{
	static const char *const ords[] = {
		"sequential", "pairwise", "pairwise:8", "blocked:16", "blocked:4:fp16", "kahan",
		"neumaier", "fused:8", "fused:4:10", "fused:4:14:ne", "pairs", "evenodd:8"
	};
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TZ, FPL_RND_SP };
	size_t o, q, rep;
	int pr;

	for (o = 0; o < sizeof ords / sizeof *ords; o++)
		for (q = 0; q < 3; q++)
			for (pr = 0; pr < 2; pr++)
				for (rep = 0; rep < 3; rep++) {
					bound_set(r, ords[o], modes[q], pr);
				}
}

/* Thread counts change no bit of the report. */
static void test_threads(h_rng *r)
{
	enum { M = 37, N = 29, K = 41 };
	double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
	double *R = malloc(M * N * sizeof *R), *E1 = malloc(M * N * sizeof *E1);
	double *E2 = malloc(M * N * sizeof *E2);
	fpl_accum_model m;
	fpl_accum_errors e1, e2;
	size_t i;
	int t;

	if (!A || !B || !R || !E1 || !E2)
		goto out;
	for (i = 0; i < M * K; i++)
		A[i] = h_rng_value(r, -10, 10, 24, 0);
	for (i = 0; i < K * N; i++)
		B[i] = h_rng_value(r, -10, 10, 24, 0);
	for (i = 0; i < M * N; i++)
		R[i] = h_rng_value(r, -10, 10, 53, h_rng_below(r, 30) == 0);
	fpl_accum_init(&m);
	h_check(fpl_accum_errors_gemm(&e1, E1, R, N, &m, M, N, K, A, K, 0, B, N, 0, NULL, 0, 1)
		== 0);
	for (t = 2; t <= 9; t += 7) {
		h_check(fpl_accum_errors_gemm(&e2, E2, R, N, &m, M, N, K, A, K, 0, B, N, 0, NULL, 0,
					      t) == 0);
		if (!h_check(!memcmp(&e1, &e2, sizeof e1) && !memcmp(E1, E2, M * N * sizeof *E1)))
			h_fail("threads %d change the report", t);
	}
out:
	free(A);
	free(B);
	free(R);
	free(E1);
	free(E2);
}

/* ------------------------------------------------------------ 5. speed */

static void speed(h_rng *r)
{
	enum { N = 256 };
	double *A = malloc(N * N * sizeof *A), *B = malloc(N * N * sizeof *B);
	double *R = malloc(N * N * sizeof *R), t0, t1;
	double *A2 = malloc(N * N * sizeof *A2), *B2 = malloc(N * N * sizeof *B2);
	fpl_accum_model m;
	fpl_accum_errors err;
	fpl_state st;
	size_t i;

	if (!A || !B || !R || !A2 || !B2)
		goto out;
	for (i = 0; i < (size_t)N * N; i++) {
		A[i] = h_rng_value(r, -4, 4, 53, 0);
		B[i] = h_rng_value(r, -4, 4, 53, 0);
	}
	fpl_accum_init(&m);
	fmt(&m.a, "bf16");
	m.b = m.a;
	fmt(&m.acc, "fp16");
	fpl_state_init(&st, 1);
	h_check(fpl_accum_gemm(R, N, &m, 0, N, N, N, A, N, 0, B, N, 0, NULL, &st) == 0);
	fpl_state_init(&st, 1);
	h_check(fpl_accum_gemm_loads(A2, B2, NULL, &m, N, N, N, A, N, 0, B, N, 0, NULL, N, &st)
		== 0);
	t0 = seconds();
	h_check(fpl_accum_errors_gemm(&err, NULL, R, N, &m, N, N, N, A2, N, 0, B2, N, 0, NULL, 0,
				      1) == 0);
	t1 = seconds();
	h_note("speed: errors of a 256x256x256 GEMM (bf16 in, fp16 acc) on 1 thread: %.3f s; "
	       "max_rel %.3g median %.3g normwise %.3g bound %.3g", t1 - t0, err.max_rel,
	       err.median_rel, err.normwise, err.bound);
	h_check(err.normwise <= err.bound);
out:
	free(A);
	free(B);
	free(A2);
	free(B2);
	free(R);
}

int main(void)
{
	h_rng r;

	h_init("taccerr");
	h_rng_init(&r, 0x61636365);
	test_bound();
	test_bound_counted();
	test_ones();
	test_median();
	test_failed();
	test_int_gemm(&r);
	test_threads(&r);
	test_loads(&r);
	test_mpfr(&r);
	test_bound_holds(&r);
	speed(&r);
	mpfr_clears(t_a, t_b, t_p, t_d, t_q, t_lo, t_hi, (mpfr_ptr)0);
	mpfr_free_cache();
	return h_done();
}
