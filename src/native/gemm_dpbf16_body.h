/* SPDX-License-Identifier: MIT */
/*
 * native/gemm_dpbf16_body.h - the driver of the VDPBF16PS GEMM (packing,
 * register blocking, row split over threads, tails), written once and
 * included twice: by x86/gemm_avx512bf16.c with AVX512-BF16 intrinsics,
 * and by tests/tnative_kernels.c with plain C that computes one
 * VDPBF16PS step per lane as DESIGN.md §5 states it.  The test runs the
 * very same driver on any CPU against the profile "avx512bf16", so only
 * the few vector operations below are left to the native test.
 *
 * The includer defines, before including:
 *   DP_GEMM            the name of the entry point to define
 *   DP_LINKAGE         its storage class (empty, or static)
 *   DP_ACC             a vector of 16 binary32 accumulators
 *   DP_PAIRS           a vector of 16 bf16 pairs (32-bit elements, the
 *                      even k in the low half, the odd k in the high half)
 *   DP_ZEROC()         DP_ACC of +0
 *   DP_LOADC(p)        DP_ACC from the 16 floats at p (no alignment)
 *   DP_STOREC(p, v)    the 16 floats of v to p
 *   DP_LOADB(p)        DP_PAIRS from the 16 uint32_t at p (64-byte aligned)
 *   DP_BCAST(p)        DP_PAIRS holding the uint32_t at p in every lane
 *   DP_STEP(c, a, b)   c = VDPBF16PS(c, a, b): per lane j,
 *                      c_j = fma(a_j.lo, b_j.lo, fma(a_j.hi, b_j.hi, c_j))
 *                      with a as the instruction's src1 (first in NaN
 *                      priority), b as src2
 *   DP_ENV_ENTER()     in each worker, before its first step: declares
 *                      what it needs and sets MXCSR (may be empty)
 *   DP_ENV_LEAVE()     in each worker, after its last step: restores it
 *   DP_MIN_WORK        m*n*kk below which one thread runs it all
 * The functions below are ordinary C; only those vector operations are
 * macros (not the macro-generated bodies STYLE.md warns against: one
 * driver, two instruction sets, so that the test runs the shipped one).
 *
 * Layout.  A pair vector's element p of a row of A is the 32-bit word
 * bf16(A[i][2p]) | bf16(A[i][2p+1]) << 16, bf16(x) being the top half of
 * the float (the inputs are bf16 values, checked by the caller); B is
 * packed in panels of 32 columns, pair p of column j the word
 * bf16(B[2p][j]) | bf16(B[2p+1][j]) << 16.  An odd kk is padded with a
 * +0 element in both A and B (k = kk, the high half of the last pair),
 * columns past n with +0.  Every output is ONE chain: from C or +0, pair
 * 0, 1, ..., ceil(kk/2)-1, each pair a DP_STEP; the blocking only
 * chooses which chains run side by side.  The file that includes this
 * one argues what that computes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "util/parallel.h"

#define DP_MR 8		/* rows of a register block */
#define DP_NR 32	/* columns of a register block: two vectors */

typedef struct dp_job {
	const float *A, *B;
	float *C;
	uint32_t *ap;		/* packed A: row i's pairs at ap + i*KP */
	uint32_t *bp;		/* packed B: panel q at bp + q*KP*DP_NR */
	size_t M, N, K, KP;	/* KP = ceil(K/2) pairs */
	size_t r0, r1;		/* rows of this worker */
	size_t q0, q1;		/* B panels this worker packs */
	int beta;
} dp_job;

static uint32_t dp_bits(const float *p)
{
	uint32_t u;
	memcpy(&u, p, sizeof u);
	return u;
}

/* The pair (lo, hi) of bf16 values held in floats; NULL is +0. */
static uint32_t dp_pair(const float *lo, const float *hi)
{
	return dp_bits(lo) >> 16 | (hi ? dp_bits(hi) & 0xffff0000u : 0u);
}

/* Rows [r0, r1) of A into pairs. */
static void dp_pack_a(const dp_job *w)
{
	const size_t K = w->K, KP = w->KP;
	size_t i, p;

	for (i = w->r0; i < w->r1; i++) {
		const float *a = w->A + i * K;
		uint32_t *d = w->ap + i * KP;
		for (p = 0; p < K / 2; p++)
			d[p] = dp_pair(a + 2 * p, a + 2 * p + 1);
		if (K & 1)
			d[p] = dp_pair(a + 2 * p, NULL);
	}
}

/* B panels [q0, q1) into pairs, zero-padded. */
static void dp_pack_b(const dp_job *w)
{
	const size_t K = w->K, KP = w->KP, N = w->N;
	size_t q, p, j;

	for (q = w->q0; q < w->q1; q++) {
		const size_t j0 = q * DP_NR, nr = N - j0 < DP_NR ? N - j0 : DP_NR;
		uint32_t *d = w->bp + q * KP * DP_NR;
		for (p = 0; p < KP; p++, d += DP_NR) {
			const float *b0 = w->B + 2 * p * N + j0;
			if (2 * p + 1 < K)
				for (j = 0; j < nr; j++)
					d[j] = dp_pair(b0 + j, b0 + N + j);
			else
				for (j = 0; j < nr; j++)
					d[j] = dp_pair(b0 + j, NULL);
			for (; j < DP_NR; j++)
				d[j] = 0;
		}
	}
}

/* c[r*ldc + j] (r < 8, j < 32) = its chain over the KP pairs, from c
 * (beta) or +0; a: 8 rows of pairs, lda apart; b: a packed panel. */
static void dp_block8(const uint32_t *a, size_t lda, const uint32_t *b, size_t KP, float *c,
		      size_t ldc, int beta)
{
	DP_ACC c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
	const uint32_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
	const uint32_t *a4 = a + 4 * lda, *a5 = a + 5 * lda, *a6 = a + 6 * lda, *a7 = a + 7 * lda;
	size_t p;

	if (beta) {
		c00 = DP_LOADC(c), c01 = DP_LOADC(c + 16);
		c10 = DP_LOADC(c + ldc), c11 = DP_LOADC(c + ldc + 16);
		c20 = DP_LOADC(c + 2 * ldc), c21 = DP_LOADC(c + 2 * ldc + 16);
		c30 = DP_LOADC(c + 3 * ldc), c31 = DP_LOADC(c + 3 * ldc + 16);
		c40 = DP_LOADC(c + 4 * ldc), c41 = DP_LOADC(c + 4 * ldc + 16);
		c50 = DP_LOADC(c + 5 * ldc), c51 = DP_LOADC(c + 5 * ldc + 16);
		c60 = DP_LOADC(c + 6 * ldc), c61 = DP_LOADC(c + 6 * ldc + 16);
		c70 = DP_LOADC(c + 7 * ldc), c71 = DP_LOADC(c + 7 * ldc + 16);
	} else {
		c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = DP_ZEROC();
		c40 = c41 = c50 = c51 = c60 = c61 = c70 = c71 = DP_ZEROC();
	}
	for (p = 0; p < KP; p++) {
		const DP_PAIRS b0 = DP_LOADB(b + p * DP_NR), b1 = DP_LOADB(b + p * DP_NR + 16);
		DP_PAIRS av;
		av = DP_BCAST(a0 + p);
		DP_STEP(c00, av, b0);
		DP_STEP(c01, av, b1);
		av = DP_BCAST(a1 + p);
		DP_STEP(c10, av, b0);
		DP_STEP(c11, av, b1);
		av = DP_BCAST(a2 + p);
		DP_STEP(c20, av, b0);
		DP_STEP(c21, av, b1);
		av = DP_BCAST(a3 + p);
		DP_STEP(c30, av, b0);
		DP_STEP(c31, av, b1);
		av = DP_BCAST(a4 + p);
		DP_STEP(c40, av, b0);
		DP_STEP(c41, av, b1);
		av = DP_BCAST(a5 + p);
		DP_STEP(c50, av, b0);
		DP_STEP(c51, av, b1);
		av = DP_BCAST(a6 + p);
		DP_STEP(c60, av, b0);
		DP_STEP(c61, av, b1);
		av = DP_BCAST(a7 + p);
		DP_STEP(c70, av, b0);
		DP_STEP(c71, av, b1);
	}
	DP_STOREC(c, c00);
	DP_STOREC(c + 16, c01);
	DP_STOREC(c + ldc, c10);
	DP_STOREC(c + ldc + 16, c11);
	DP_STOREC(c + 2 * ldc, c20);
	DP_STOREC(c + 2 * ldc + 16, c21);
	DP_STOREC(c + 3 * ldc, c30);
	DP_STOREC(c + 3 * ldc + 16, c31);
	DP_STOREC(c + 4 * ldc, c40);
	DP_STOREC(c + 4 * ldc + 16, c41);
	DP_STOREC(c + 5 * ldc, c50);
	DP_STOREC(c + 5 * ldc + 16, c51);
	DP_STOREC(c + 6 * ldc, c60);
	DP_STOREC(c + 6 * ldc + 16, c61);
	DP_STOREC(c + 7 * ldc, c70);
	DP_STOREC(c + 7 * ldc + 16, c71);
}

/* One row of 32 outputs: the same chains as a row of dp_block8. */
static void dp_block1(const uint32_t *a, const uint32_t *b, size_t KP, float *c, int beta)
{
	DP_ACC c0 = beta ? DP_LOADC(c) : DP_ZEROC(), c1 = beta ? DP_LOADC(c + 16) : DP_ZEROC();
	size_t p;

	for (p = 0; p < KP; p++) {
		const DP_PAIRS av = DP_BCAST(a + p);
		DP_STEP(c0, av, DP_LOADB(b + p * DP_NR));
		DP_STEP(c1, av, DP_LOADB(b + p * DP_NR + 16));
	}
	DP_STOREC(c, c0);
	DP_STOREC(c + 16, c1);
}

/* mr rows (1..8) of a register block: dp_block8 when there are 8. */
static void dp_rows(const uint32_t *a, size_t KP, const uint32_t *b, float *c, size_t ldc,
		    size_t mr, int beta)
{
	size_t r;

	if (mr == DP_MR) {
		dp_block8(a, KP, b, KP, c, ldc, beta);
		return;
	}
	for (r = 0; r < mr; r++)
		dp_block1(a + r * KP, b, KP, c + r * ldc, beta);
}

/* Phase 1 of a worker: pack its rows of A and its share of B's panels. */
static void *dp_pack(void *arg)
{
	const dp_job *w = arg;

	dp_pack_a(w);
	dp_pack_b(w);
	return NULL;
}

/* Phase 2: rows [r0, r1), every panel. */
static void *dp_compute(void *arg)
{
	const dp_job *w = arg;
	const size_t N = w->N, KP = w->KP;
	size_t j0, i;
	DP_ENV_ENTER();

	for (j0 = 0; j0 < N; j0 += DP_NR) {
		const size_t nr = N - j0 < DP_NR ? N - j0 : DP_NR;
		const uint32_t *b = w->bp + j0 / DP_NR * KP * DP_NR;
		for (i = w->r0; i < w->r1; i += DP_MR) {
			const size_t mr = w->r1 - i < DP_MR ? w->r1 - i : DP_MR;
			const uint32_t *a = w->ap + i * KP;
			float *c = w->C + i * N + j0;
			if (nr == DP_NR) {
				dp_rows(a, KP, b, c, N, mr, w->beta);
			} else {	/* a narrow panel: through a padded copy of C */
				float t[DP_MR * DP_NR];
				size_t r;
				memset(t, 0, sizeof t);
				if (w->beta)
					for (r = 0; r < mr; r++)
						memcpy(t + r * DP_NR, c + r * N, nr * sizeof *t);
				dp_rows(a, KP, b, t, DP_NR, mr, w->beta);
				for (r = 0; r < mr; r++)
					memcpy(c + r * N, t + r * DP_NR, nr * sizeof *t);
			}
		}
	}
	DP_ENV_LEAVE();
	return NULL;
}

DP_LINKAGE int DP_GEMM(int beta, size_t m, size_t n, size_t kk, const float *a, const float *b,
		       float *c, int threads)
{
	const size_t KP = (kk + 1) / 2, blocks = (m + DP_MR - 1) / DP_MR;
	const size_t panels = (n + DP_NR - 1) / DP_NR;
	dp_job w[FPL_MAX_THREADS];
	uint32_t *ap, *bp;
	int t;

	if (!m || !n)
		return 0;
	threads = fpl__spawn_threads(threads, blocks, (double)m * (double)n * (double)kk,
				     (double)(DP_MIN_WORK));
	/* every buffer first, so that a failure writes nothing; 64-byte
	 * aligned panels for the vector loads */
	ap = malloc((m * KP > 0 ? m * KP : 1) * sizeof *ap);
	bp = aligned_alloc(64, (panels * KP > 0 ? panels * KP : 1) * DP_NR * sizeof *bp);
	if (!ap || !bp) {
		free(ap);
		free(bp);
		return FPL_ENOMEM;
	}
	for (t = 0; t < threads; t++) {
		size_t b0, b1, q0, q1;
		fpl__spawn_share(blocks, threads, t, &b0, &b1);
		fpl__spawn_share(panels, threads, t, &q0, &q1);
		w[t] = (dp_job){ a, b, c, ap, bp, m, n, kk, KP,
				 b0 * DP_MR < m ? b0 * DP_MR : m, b1 * DP_MR < m ? b1 * DP_MR : m,
				 q0, q1, beta };
	}
	fpl__spawn(dp_pack, w, sizeof *w, threads);
	fpl__spawn(dp_compute, w, sizeof *w, threads);
	free(ap);
	free(bp);
	return 0;
}
