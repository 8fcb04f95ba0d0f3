/* SPDX-License-Identifier: MIT */
/*
 * tests/tblockgemm.c - GEMM on block-scaled operands (fplab/accum.h,
 * Block formats, and the `block` order).
 *
 * Expected values never come from the code under test:
 *  - the operands are quantized by fpl_block_quantize (tested on its own
 *    by tests/tblock.c against the specifications) with the blocking
 *    written here (A along its last axis, B along axis 0) and the draws
 *    accum.h's schedule gives (A at c0, B at c0 + M*K); the codes are
 *    decoded here (fpl_decode; MXINT8 by hand: int8 * 2^-6);
 *  - the block order is computed by straight-line code over the scalar
 *    engine (fpl_round, fpl_add, fpl_mul, the counter set to each
 *    rounding's draw): per block, the sum of the element products in
 *    binary64, exact for the element formats used here (below), rounded
 *    once into the inner format; times the two scales (exact: at most
 *    24 + 4 + 4 significant bits, far inside binary64's range); added
 *    into the accumulator by one fpl_add; the tensor scales by one
 *    fpl_mul.  Bits, per-output flags and the counter's advance compared;
 *  - any other order on block operands gives the bits and per-output
 *    flags of the same order on binary64 inputs that hold the dequantized
 *    values e * X * s, formed here (exact products);
 *  - the block order's binary64 shortcut for a block's sum gives the bits,
 *    flags and counts of its reference (FPLAB_ACCUM=ref);
 *  - bad models: fpl_accum_check and the drivers refuse them.
 *
 * Exactness of the binary64 block sums: the element formats here are
 * e4m3fn (values multiples of 2^-9 below 2^9: products multiples of
 * 2^-18 below 2^18, 32 of them below 2^23: at most 41 bits), e2m1
 * (multiples of 2^-1 up to 6: products of 2^-2 up to 36), e2m3, e3m2 and
 * MXINT8's int8 * 2^-6 (products k k' 2^-12 with |k k'| <= 2^14); every
 * partial sum is an integer multiple of the products' quantum below
 * 2^53 of it, so binary64 adds them exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/accum.h>
#include <fplab/accum_error.h>
#include <fplab/block.h>
#include <fplab/codec.h>
#include <fplab/ops.h>

#include "harness.h"

#define MAXN 4096

/* An operand quantized here: element values, scales, tensor scale. */
typedef struct qop {
	double e[MAXN];		/* element values, the operand's layout */
	double x[MAXN];		/* scale values, the block grid row-major */
	double ts;		/* tensor scale (1 without ts) */
} qop;

static double elem_value(const fpl_block_format *b, uint64_t c)
{
	if (b->elem_int) {
		int k = (int)(c & 0xff);
		return ldexp(k >= 128 ? k - 256 : k, -6);
	}
	return fpl_decode(&b->elem, c);
}

/* Quantize v (rows x cols) under b blocked along `axis`, draws from c0. */
static void quant(const fpl_block_format *b0, int axis, const double *v, size_t rows,
		  size_t cols, fpl_rnd rnd, uint64_t seed, uint64_t c0, qop *q)
{
	static uint64_t codes[MAXN], sc[MAXN];
	fpl_block_format b = *b0;
	const size_t dims[2] = { rows, cols };
	size_t nb, i;
	fpl_state st;

	b.axis = axis;
	h_check(fpl_block_check(&b, NULL, 0) == 0);
	fpl_block_layout(&b, dims, 2, &nb, NULL, NULL);
	fpl_state_init(&st, seed);
	st.counter = c0;
	q->ts = 1.0;
	h_check(fpl_block_quantize(&b, codes, sc, &q->ts, v, dims, 2, rnd, &st, NULL) == 0);
	for (i = 0; i < rows * cols; i++)
		q->e[i] = elem_value(&b, codes[i]);
	for (i = 0; i < nb; i++)
		q->x[i] = fpl_decode(&b.scale, sc[i]);
}

static fpl_block_format blk(const char *spec)
{
	fpl_block_format b;
	char err[160];

	if (fpl_block_parse(&b, spec, err, sizeof err))
		h_fail("parse %s: %s", spec, err);
	return b;
}

/* Random inputs: normal-ish values over a few binades, a zero now and
 * then, and one special (NaN) when asked. */
static void fill(h_rng *r, double *v, size_t n, int nan_at)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t u = h_rng_next(r);
		double m = (double)(u >> 11) * 0x1p-53 + 0.5;
		int e = (int)((u >> 3) % 12) - 6;
		v[i] = (u & 1 ? -m : m) * ldexp(1.0, e);
		if ((u & 0x70) == 0)
			v[i] = 0.0;
	}
	if (nan_at >= 0 && (size_t)nan_at < n)
		v[nan_at] = NAN;
}

/* -------------------------------------------------- the block order */

struct case_ {
	const char *fmt;
	const char *inner;	/* order spelling */
	const char *acc;
	fpl_rnd acc_rnd, in_rnd;
	size_t M, N, K;
	int beta, nan_at;
};

static int same_out(double x, double y)
{
	return (isnan(x) && isnan(y)) || h_same(x, y);
}

static void block_case(const struct case_ *c, h_rng *rng)
{
	static double A[MAXN], B[MAXN], C[MAXN], got[MAXN];
	static qop qa, qb;
	static unsigned fl[MAXN];
	const fpl_block_format b = blk(c->fmt);
	const size_t M = c->M, N = c->N, K = c->K, Bk = (size_t)b.size, nb = (K + Bk - 1) / Bk;
	const uint64_t c0 = 1000, seed = 7, L = M * K + K * N + M * N;
	fpl_accum_model m;
	fpl_format acc, inner;
	fpl_rnd ir = FPL_RND_NE;
	fpl_state st, rs;
	size_t i, j, t, k;
	char desc[256];

	fill(rng, A, M * K, c->nan_at);
	fill(rng, B, K * N, -1);
	fill(rng, C, M * N, -1);
	fpl_accum_init(&m);
	h_check(fpl_accum_set_block(&m, 0, &b) == 0);
	h_check(fpl_accum_set_block(&m, 1, &b) == 0);
	m.a_rnd = m.b_rnd = c->in_rnd;
	h_check(fpl_accum_parse_spec(c->acc, &m.acc, &m.acc_rnd, NULL) == 0);
	m.acc_rnd = c->acc_rnd;
	if (fpl_accum_parse_order(&m, c->inner))
		h_fail("order %s", c->inner);
	acc = m.acc;
	inner = m.promo;
	ir = m.promo_rnd;
	fpl_state_init(&st, seed);
	st.counter = c0;
	st.threads = 2;
	memcpy(got, C, sizeof C);
	if (fpl_accum_gemm(got, N, &m, c->beta, M, N, K, A, K, 0, B, N, 0, fl, &st)) {
		h_fail("%s %s: gemm failed", c->fmt, c->inner);
		return;
	}
	fpl_accum_describe(&m, desc, sizeof desc);
	/* the schedule: 2 nb + 2 steps per output: P_j, S + P_j X_A X_B, the
	 * tensor scales, the output rounding (reserved, unused here) */
	if (!h_check(st.counter == c0 + L + (2 * nb + 2) * M * N))
		h_fail("%s: counter advanced by %llu", desc,
		       (unsigned long long)(st.counter - c0));
	quant(&b, -1, A, M, K, c->in_rnd, seed, c0, &qa);
	quant(&b, 0, B, K, N, c->in_rnd, seed, c0 + M * K, &qb);
	fpl_state_init(&rs, seed);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			const uint64_t o = i * N + j, base = c0 + L;
			double s = 0.0;

			if (c->beta) {	/* C loaded into acc, draw c0 + MK + KN + o */
				rs.counter = c0 + M * K + K * N + o;
				s = fpl_round(&acc, C[o], c->acc_rnd, &rs);
			}
			fpl_state_clear_flags(&rs);
			for (t = 0; t < nb; t++) {
				const size_t k0 = t * Bk, k1 = k0 + Bk < K ? k0 + Bk : K;
				double sum = 0.0, p;
				for (k = k0; k < k1; k++)
					sum += qa.e[i * K + k] * qb.e[k * N + j];
				rs.counter = base + t * M * N + o;
				p = fpl_round(&inner, sum, ir, &rs);
				rs.counter = base + (nb + t) * M * N + o;
				s = fpl_add(&acc, s, p * qa.x[i * nb + t] * qb.x[t * N + j], c->acc_rnd,
					    &rs);
			}
			if (b.tensor_scale) {
				rs.counter = base + 2 * nb * M * N + o;
				s = fpl_mul(&acc, s, qa.ts * qb.ts, c->acc_rnd, &rs);
			}
			if (!h_check(same_out(s, got[o])))
				h_fail("%s M%zu N%zu K%zu beta %d: output (%zu,%zu) = %a, expected %a",
				       desc, M, N, K, c->beta, i, j, got[o], s);
			if (!h_check(fl[o] == rs.flags)) {
				char f1[64], f2[64];
				h_fail("%s: output (%zu,%zu) flags %s, expected %s", desc, i, j,
				       h_flags(fl[o], f1, sizeof f1), h_flags(rs.flags, f2, sizeof f2));
			}
		}
}

static void test_block_order(void)
{
	static const struct case_ cases[] = {
		{ "mxfp8", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 3, 5, 64, 0, -1 },
		{ "mxfp8", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 4, 3, 70, 1, -1 },	/* short block */
		{ "mxfp8:rceil", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 2, 2, 33, 0, -1 },
		{ "mxfp4", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 5, 4, 96, 0, -1 },
		{ "mxfp4", "block:fp16:tz", "bf16", FPL_RND_TZ, FPL_RND_NE, 3, 3, 50, 1, -1 },
		{ "mxfp6-e2m3", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 2, 3, 64, 0, -1 },
		{ "mxfp6-e3m2", "block:bf16", "fp16", FPL_RND_NE, FPL_RND_NE, 2, 3, 40, 0, -1 },
		{ "mxint8", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 3, 2, 64, 0, -1 },
		{ "nvfp4", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 3, 4, 48, 0, -1 },
		{ "nvfp4", "block:fp32:tz", "fp32", FPL_RND_NE, FPL_RND_NE, 2, 3, 20, 1, -1 },
		{ "mxfp8", "block", "fp32", FPL_RND_SP, FPL_RND_SP, 3, 3, 64, 0, -1 },	/* draws */
		{ "mxfp4", "block:fp16:sp", "fp16", FPL_RND_SP, FPL_RND_NE, 3, 2, 64, 1, -1 },
		{ "mxfp8", "block", "fp32", FPL_RND_NE, FPL_RND_NE, 2, 3, 64, 0, 37 },	/* NaN block */
		{ "mxfp8:16", "block", "fp16", FPL_RND_NE, FPL_RND_NE, 3, 3, 40, 0, -1 },
	};
	h_rng r;
	size_t i;

	h_rng_init(&r, 1);
	for (i = 0; i < sizeof cases / sizeof *cases; i++)
		block_case(&cases[i], &r);
}

/* ---------------------------- other orders on the dequantized values */

static void dequant_case(const char *fmt, const char *order, const char *acc, fpl_rnd rnd,
			 h_rng *rng)
{
	static double A[MAXN], B[MAXN], Ad[MAXN], Bd[MAXN], r1[MAXN], r2[MAXN];
	static qop qa, qb;
	static unsigned f1[MAXN], f2[MAXN];
	const fpl_block_format b = blk(fmt);
	const size_t M = 3, N = 4, K = 75, Bk = (size_t)b.size, nb = (K + Bk - 1) / Bk;
	const uint64_t seed = 3;
	fpl_accum_model mb, mp;
	fpl_state s1, s2;
	size_t i, k, j;

	fill(rng, A, M * K, -1);
	fill(rng, B, K * N, -1);
	fpl_accum_init(&mb);
	h_check(fpl_accum_set_block(&mb, 0, &b) == 0);
	h_check(fpl_accum_set_block(&mb, 1, &b) == 0);
	h_check(fpl_accum_parse_spec(acc, &mb.acc, &mb.acc_rnd, NULL) == 0);
	mb.acc_rnd = rnd;
	h_check(fpl_accum_parse_order(&mb, order) == 0);
	mp = mb;	/* the same model on binary64 inputs */
	h_check(fpl_accum_set_block(&mp, 0, NULL) == 0);
	h_check(fpl_accum_set_block(&mp, 1, NULL) == 0);
	h_check(fpl_accum_parse_spec("fp64", &mp.a, &mp.a_rnd, NULL) == 0);
	mp.b = mp.a;
	quant(&b, -1, A, M, K, FPL_RND_NE, seed, 0, &qa);
	quant(&b, 0, B, K, N, FPL_RND_NE, seed, M * K, &qb);
	for (i = 0; i < M; i++)
		for (k = 0; k < K; k++)
			Ad[i * K + k] = qa.e[i * K + k] * qa.x[i * nb + k / Bk] * qa.ts;
	for (k = 0; k < K; k++)
		for (j = 0; j < N; j++)
			Bd[k * N + j] = qb.e[k * N + j] * qb.x[(k / Bk) * N + j] * qb.ts;
	fpl_state_init(&s1, seed);
	fpl_state_init(&s2, seed);
	s1.threads = 2;
	if (fpl_accum_gemm(r1, N, &mb, 0, M, N, K, A, K, 0, B, N, 0, f1, &s1)
	    || fpl_accum_gemm(r2, N, &mp, 0, M, N, K, Ad, K, 0, Bd, N, 0, f2, &s2)) {
		h_fail("%s %s: gemm failed", fmt, order);
		return;
	}
	h_check(s1.counter == s2.counter);
	for (i = 0; i < M * N; i++)
		if (!h_check(h_same(r1[i], r2[i]) && f1[i] == f2[i]))
			h_fail("%s --order %s --acc %s:%s: output %zu %a (flags %x), on the "
			       "dequantized values %a (flags %x)", fmt, order, acc, fpl_rnd_name(rnd),
			       i, r1[i], f1[i], r2[i], f2[i]);
}

static void test_dequantized(void)
{
	static const char *const fmts[] = { "mxfp8", "mxfp4", "nvfp4", "mxint8", "mxfp8-e5m2" };
	static const char *const orders[] = { "sequential", "pairwise:4", "blocked:16", "kahan",
					      "neumaier", "fused:8", "fused:16:24:tz", "evenodd",
					      "pairs:8" };
	static const char *const accs[] = { "fp32", "bf16", "fp16" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TZ, FPL_RND_SP };
	h_rng r;
	size_t f, o, a;

	h_rng_init(&r, 2);
	for (f = 0; f < sizeof fmts / sizeof *fmts; f++)
		for (o = 0; o < sizeof orders / sizeof *orders; o++)
			for (a = 0; a < 3; a++)
				dequant_case(fmts[f], orders[o], accs[a], modes[(f + o + a) % 3], &r);
}

/* ------------------------------ the binary64 block sums = the groups */

/* The block order's shortcut (a block's sum in binary64 where exact)
 * against its reference (FPLAB_ACCUM=ref: every block a fused group):
 * bits, per-output flags and counts, over modes and formats, zeros and
 * NaN blocks included. */
static void test_shortcut(void)
{
	static const char *const fmts[] = { "mxfp8", "mxfp4", "mxint8", "nvfp4", "mxfp6-e3m2",
					    "mxfp8-e5m2" };
	static const char *const inner[] = { "block", "block:fp16:tz", "block:bf16:tn",
					     "block:fp32:sp", "block:e4m3fn:ne" };
	static double A[MAXN], B[MAXN], r1[MAXN], r2[MAXN];
	static unsigned f1[MAXN], f2[MAXN];
	const size_t M = 3, N = 5, K = 70;
	h_rng r;
	size_t f, o, i;

	h_rng_init(&r, 4);
	for (f = 0; f < sizeof fmts / sizeof *fmts; f++)
		for (o = 0; o < sizeof inner / sizeof *inner; o++) {
			const fpl_block_format b = blk(fmts[f]);
			fpl_accum_model m;
			fpl_state s1, s2;
			int q;

			fill(&r, A, M * K, o == 2 ? 40 : -1);
			fill(&r, B, K * N, -1);
			for (i = 0; i < 32; i++)
				A[K + i] = o == 1 ? -0.0 : 0.0;	/* a zero block in row 1 */
			fpl_accum_init(&m);
			fpl_accum_set_block(&m, 0, &b);
			fpl_accum_set_block(&m, 1, &b);
			h_check(fpl_accum_parse_order(&m, inner[o]) == 0);
			m.acc_rnd = (fpl_rnd)((f + o) % 3 == 0 ? FPL_RND_TN : FPL_RND_NE);
			fpl_state_init(&s1, 9);
			fpl_state_init(&s2, 9);
			setenv("FPLAB_ACCUM", "ref", 1);
			q = fpl_accum_gemm(r1, N, &m, 0, M, N, K, A, K, 0, B, N, 0, f1, &s1);
			unsetenv("FPLAB_ACCUM");
			q |= fpl_accum_gemm(r2, N, &m, 0, M, N, K, A, K, 0, B, N, 0, f2, &s2);
			if (!h_check(q == 0)) {
				h_fail("%s --order %s: gemm failed", fmts[f], inner[o]);
				continue;
			}
			for (i = 0; i < M * N; i++)
				if (!h_check(same_out(r1[i], r2[i]) && f1[i] == f2[i]))
					h_fail("%s --order %s: output %zu %a (flags %x), reference %a "
					       "(flags %x)", fmts[f], inner[o], i, r2[i], f2[i], r1[i],
					       f1[i]);
			h_check(!memcmp(s1.count, s2.count, sizeof s1.count)
				&& s1.counter == s2.counter);
		}
}

/* ------------------------------------------------------- bad models */

static void test_refused(void)
{
	fpl_block_format b = blk("mxfp8"), b16 = blk("mxfp8:16"), t = blk("nvfp4:16x16");
	fpl_accum_model m;
	fpl_state st;
	double a[4] = { 1, 2, 3, 4 }, r;

	fpl_state_init(&st, 0);
	fpl_accum_init(&m);
	h_check(fpl_accum_parse_order(&m, "block") == 0);
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* no block operands */
	fpl_accum_set_block(&m, 0, &b);
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* B plain */
	fpl_accum_set_block(&m, 1, &b16);
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* 32 and 16 */
	fpl_accum_set_block(&m, 1, &b);
	h_check(fpl_accum_check(&m, &st) == 0);
	h_check(fpl_accum_steps(&m, 70, 0) == 2 * 3 + 2);
	h_check(fpl_accum_sum(&r, &m, 4, a, 1, NULL, NULL, &st) == FPL_EINVAL);
	m.prod_exact = 0;
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* rounded products */
	m.prod_exact = 1;
	fpl_accum_set_block(&m, 1, &t);
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* tiles */
	h_check(fpl_accum_parse_order(&m, "sequential") == 0);
	h_check(fpl_accum_check(&m, &st) == 0);		/* tiles load fine */
	m.b_load = FPL_LOAD_GIVEN;
	h_check(fpl_accum_check(&m, &st) == FPL_EINVAL);	/* a block is not given */
	/* the B operand's 1-D blocks run along K whatever the spec's axis */
	fpl_accum_init(&m);
	fpl_accum_set_block(&m, 1, &b);
	h_check(m.b_blk.axis == 0 && m.b_block == 1);
	fpl_accum_set_block(&m, 0, &b);
	h_check(m.a_blk.axis == -1 && m.a_block == 1);
}

int main(void)
{
	h_init("tblockgemm");
	test_block_order();
	test_dequantized();
	test_shortcut();
	test_refused();
	return h_done();
}
