/* SPDX-License-Identifier: MIT */
/*
 * native/gemm_ph_body.h - the driver of the fp16 GEMM on VFMADD231PH
 * (packing into fp16 encodings, register blocking, row split over
 * threads, tails), written once and included twice: by
 * x86/gemm_avx512fp16.c with AVX512-FP16 intrinsics, and by
 * tests/tnative_kernels.c with plain C that computes one fp16 fma per
 * lane.  The test runs the very same driver on any CPU against the
 * profile "fp16-fma", so only the few vector operations below are left
 * to the native test.
 *
 * The includer defines, before including:
 *   PH_GEMM            the name of the entry point to define
 *   PH_LINKAGE         its storage class (empty, or static)
 *   PH_ACC             a vector of 32 fp16 values (accumulators, or A
 *                      or B operands)
 *   PH_LOAD(p)         PH_ACC from the 32 uint16_t at p (64-byte aligned)
 *   PH_STORE(p, v)     the 32 encodings of v to p (64-byte aligned)
 *   PH_BCAST(p)        PH_ACC holding the uint16_t at p in every lane
 *   PH_STEP(c, a, b)   c = fma(a, b, c) per lane: the exact a_j*b_j + c_j
 *                      rounded once to binary16 in nearest even,
 *                      subnormals kept; a is A's broadcast (the first
 *                      multiplicand), b B's panel (the second), c the
 *                      accumulator (the addend)
 *   PH_ENV_ENTER()     in each worker, before its first step (may be empty)
 *   PH_ENV_LEAVE()     in each worker, after its last step
 *   PH_MIN_WORK        m*n*kk below which one thread runs it all
 * The functions below are ordinary C; only those vector operations are
 * macros (one driver, two instruction sets, so that the test runs the
 * shipped one).
 *
 * Layout.  Every input is an fp16 value held in a float (the caller
 * checked: native.c, fpl__native_all_f16); native/f16_bits.h turns it
 * into its encoding by the bits, so NaN payloads, signaling NaNs and
 * subnormals arrive in the vector lanes unchanged.  A is packed row by
 * row (row i's K encodings at ap + i*K); B in panels of 64 columns, row
 * k of panel q at bp + (q*K + k)*64, columns past n +0.  C goes through a
 * 8 x 64 tile of encodings per register block: C's values (beta = 1) or
 * +0 (beta = 0) in, the results out, converted back by the bits; the
 * padding lanes of a narrow panel or a row tail are discarded.  Every
 * output is ONE chain: from C or +0, k = 0, 1, ..., kk-1, one PH_STEP
 * each; the blocking only chooses which chains run side by side.  The
 * file that includes this one argues what that computes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "native/f16_bits.h"
#include "util/parallel.h"

#define PH_MR 8		/* rows of a register block */
#define PH_NR 64	/* columns of a register block: two vectors */

typedef struct ph_job {
	const float *A, *B;
	float *C;
	uint16_t *ap;		/* packed A: row i at ap + i*K */
	uint16_t *bp;		/* packed B: panel q at bp + q*K*PH_NR */
	size_t M, N, K;
	size_t r0, r1;		/* rows of this worker */
	size_t q0, q1;		/* B panels this worker packs */
	int beta;
} ph_job;

static uint16_t ph_code(const float *p)
{
	uint32_t u;
	memcpy(&u, p, sizeof u);
	return fpl__f32_to_f16(u);
}

static void ph_put(float *p, uint16_t h)
{
	const uint32_t u = fpl__f16_to_f32(h);
	memcpy(p, &u, sizeof u);
}

/* Rows [r0, r1) of A and B panels [q0, q1) into encodings. */
static void *ph_pack(void *arg)
{
	const ph_job *w = arg;
	const size_t K = w->K, N = w->N;
	size_t i, k, q, j;

	for (i = w->r0; i < w->r1; i++)
		for (k = 0; k < K; k++)
			w->ap[i * K + k] = ph_code(w->A + i * K + k);
	for (q = w->q0; q < w->q1; q++) {
		const size_t j0 = q * PH_NR, nr = N - j0 < PH_NR ? N - j0 : PH_NR;
		uint16_t *d = w->bp + q * K * PH_NR;
		for (k = 0; k < K; k++, d += PH_NR) {
			for (j = 0; j < nr; j++)
				d[j] = ph_code(w->B + k * N + j0 + j);
			for (; j < PH_NR; j++)
				d[j] = 0;
		}
	}
	return NULL;
}

/* t (an 8 x 64 tile) = each lane's chain over the K steps from t's value;
 * a: 8 packed rows, K apart; b: a packed panel. */
static void ph_block8(const uint16_t *a, const uint16_t *b, size_t K, uint16_t *t)
{
	PH_ACC c00 = PH_LOAD(t), c01 = PH_LOAD(t + 32), c10 = PH_LOAD(t + 64);
	PH_ACC c11 = PH_LOAD(t + 96), c20 = PH_LOAD(t + 128), c21 = PH_LOAD(t + 160);
	PH_ACC c30 = PH_LOAD(t + 192), c31 = PH_LOAD(t + 224), c40 = PH_LOAD(t + 256);
	PH_ACC c41 = PH_LOAD(t + 288), c50 = PH_LOAD(t + 320), c51 = PH_LOAD(t + 352);
	PH_ACC c60 = PH_LOAD(t + 384), c61 = PH_LOAD(t + 416), c70 = PH_LOAD(t + 448);
	PH_ACC c71 = PH_LOAD(t + 480);
	size_t k;

	for (k = 0; k < K; k++) {
		const PH_ACC b0 = PH_LOAD(b + k * PH_NR), b1 = PH_LOAD(b + k * PH_NR + 32);
		PH_ACC av;
		av = PH_BCAST(a + k);
		PH_STEP(c00, av, b0);
		PH_STEP(c01, av, b1);
		av = PH_BCAST(a + K + k);
		PH_STEP(c10, av, b0);
		PH_STEP(c11, av, b1);
		av = PH_BCAST(a + 2 * K + k);
		PH_STEP(c20, av, b0);
		PH_STEP(c21, av, b1);
		av = PH_BCAST(a + 3 * K + k);
		PH_STEP(c30, av, b0);
		PH_STEP(c31, av, b1);
		av = PH_BCAST(a + 4 * K + k);
		PH_STEP(c40, av, b0);
		PH_STEP(c41, av, b1);
		av = PH_BCAST(a + 5 * K + k);
		PH_STEP(c50, av, b0);
		PH_STEP(c51, av, b1);
		av = PH_BCAST(a + 6 * K + k);
		PH_STEP(c60, av, b0);
		PH_STEP(c61, av, b1);
		av = PH_BCAST(a + 7 * K + k);
		PH_STEP(c70, av, b0);
		PH_STEP(c71, av, b1);
	}
	PH_STORE(t, c00);
	PH_STORE(t + 32, c01);
	PH_STORE(t + 64, c10);
	PH_STORE(t + 96, c11);
	PH_STORE(t + 128, c20);
	PH_STORE(t + 160, c21);
	PH_STORE(t + 192, c30);
	PH_STORE(t + 224, c31);
	PH_STORE(t + 256, c40);
	PH_STORE(t + 288, c41);
	PH_STORE(t + 320, c50);
	PH_STORE(t + 352, c51);
	PH_STORE(t + 384, c60);
	PH_STORE(t + 416, c61);
	PH_STORE(t + 448, c70);
	PH_STORE(t + 480, c71);
}

/* One row of 64 lanes: the same chains as a row of ph_block8. */
static void ph_block1(const uint16_t *a, const uint16_t *b, size_t K, uint16_t *t)
{
	PH_ACC c0 = PH_LOAD(t), c1 = PH_LOAD(t + 32);
	size_t k;

	for (k = 0; k < K; k++) {
		const PH_ACC av = PH_BCAST(a + k);
		PH_STEP(c0, av, PH_LOAD(b + k * PH_NR));
		PH_STEP(c1, av, PH_LOAD(b + k * PH_NR + 32));
	}
	PH_STORE(t, c0);
	PH_STORE(t + 32, c1);
}

/* Rows [r0, r1), every panel: C through the tile, block by block. */
static void *ph_compute(void *arg)
{
	const ph_job *w = arg;
	const size_t N = w->N, K = w->K;
	_Alignas(64) uint16_t t[PH_MR * PH_NR];
	size_t j0, i, r, j;
	PH_ENV_ENTER();

	for (j0 = 0; j0 < N; j0 += PH_NR) {
		const size_t nr = N - j0 < PH_NR ? N - j0 : PH_NR;
		const uint16_t *b = w->bp + j0 / PH_NR * K * PH_NR;
		for (i = w->r0; i < w->r1; i += PH_MR) {
			const size_t mr = w->r1 - i < PH_MR ? w->r1 - i : PH_MR;
			const uint16_t *a = w->ap + i * K;
			float *c = w->C + i * N + j0;
			memset(t, 0, sizeof t);
			if (w->beta)
				for (r = 0; r < mr; r++)
					for (j = 0; j < nr; j++)
						t[r * PH_NR + j] = ph_code(c + r * N + j);
			if (mr == PH_MR)
				ph_block8(a, b, K, t);
			else
				for (r = 0; r < mr; r++)
					ph_block1(a + r * K, b, K, t + r * PH_NR);
			for (r = 0; r < mr; r++)
				for (j = 0; j < nr; j++)
					ph_put(c + r * N + j, t[r * PH_NR + j]);
		}
	}
	PH_ENV_LEAVE();
	return NULL;
}

PH_LINKAGE int PH_GEMM(int beta, size_t m, size_t n, size_t kk, const float *a, const float *b,
		       float *c, int threads)
{
	const size_t blocks = (m + PH_MR - 1) / PH_MR, panels = (n + PH_NR - 1) / PH_NR;
	ph_job w[FPL_MAX_THREADS];
	uint16_t *ap, *bp;
	int t;

	if (!m || !n)
		return 0;
	threads = fpl__spawn_threads(threads, blocks, (double)m * (double)n * (double)kk,
				     (double)(PH_MIN_WORK));
	/* every buffer first, so that a failure writes nothing; 64-byte
	 * aligned panels for the vector loads */
	ap = malloc((m * kk > 0 ? m * kk : 1) * sizeof *ap);
	bp = aligned_alloc(64, (panels * kk > 0 ? panels * kk : 1) * PH_NR * sizeof *bp);
	if (!ap || !bp) {
		free(ap);
		free(bp);
		return FPL_ENOMEM;
	}
	for (t = 0; t < threads; t++) {
		size_t b0, b1, q0, q1;
		fpl__spawn_share(blocks, threads, t, &b0, &b1);
		fpl__spawn_share(panels, threads, t, &q0, &q1);
		w[t] = (ph_job){ a, b, c, ap, bp, m, n, kk,
				 b0 * PH_MR < m ? b0 * PH_MR : m, b1 * PH_MR < m ? b1 * PH_MR : m,
				 q0, q1, beta };
	}
	fpl__spawn(ph_pack, w, sizeof *w, threads);
	fpl__spawn(ph_compute, w, sizeof *w, threads);
	free(ap);
	free(bp);
	return 0;
}
