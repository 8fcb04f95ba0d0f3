/* SPDX-License-Identifier: MIT */
/*
 * native/gemm_amx_body.h - the driver of the AMX TDPBF16PS GEMM (packing
 * into tiles, 2 x 2 C tiles held across all of K, row split over
 * threads, tails), written once and included twice: by x86/gemm_amx.c
 * with the AMX intrinsics and by tests/tnative_kernels.c with plain C
 * that computes one TDPBF16PS as DESIGN.md §5 states it, so that the test
 * runs this driver on any CPU against the profile "amx-bf16".
 *
 * Tiles (every one 16 rows of 64 bytes): tmm0..3 hold a 32 x 32 block of
 * C (binary32; tmm0 rows 0-15 columns 0-15, tmm1 rows 0-15 columns
 * 16-31, tmm2 rows 16-31 columns 0-15, tmm3 rows 16-31 columns 16-31),
 * tmm4/5 the two 16-row A tiles of one K tile (row r: 16 bf16 pairs, k
 * ascending, the even k in the low half), tmm6/7 the two 16-column B
 * tiles (row p: for each column the pair (B[2p][j], B[2p+1][j])).
 *
 * The includer defines, before including:
 *   AMX_GEMM, AMX_LINKAGE   the entry point's name and storage class
 *   AMX_ENTER(), AMX_LEAVE()   in each worker, before the first and after
 *                      the last tile instruction (tile configuration,
 *                      MXCSR, tile release)
 *   AMX_ZERO(t)        tile t = +0
 *   AMX_LOADC(t, p, s), AMX_STOREC(t, p, s)   tile t from / to 16 rows
 *                      of 64 bytes at p, s bytes apart
 *   AMX_LOADT(t, p)    tile t from 16 rows of 64 bytes at p, contiguous
 *   AMX_DP(c, a, b)    TDPBF16PS tmm c, tmm a (src1), tmm b (src2)
 *   AMX_MIN_WORK       m*n*kk below which one thread runs it all
 *
 * Padding: rows of A past m and columns of B past n are +0 (their
 * outputs are discarded); positions k >= kk of the last K tile hold -0
 * in A and +0 in B, so each padded step is fma(-0, +0, x) = -0 + x = x
 * exactly for every x (x = +0 and x = -0 included): a padded block runs
 * the same chains as the shorter one.  The file that includes this one
 * argues what that computes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "util/parallel.h"

#define AMX_MB 32	/* rows of C per block: two tiles */
#define AMX_NB 32	/* columns of C per block: two tiles */
#define AMX_KB 32	/* k per tile */
#define AMX_TW 256	/* 32-bit words per tile */

typedef struct amx_job {
	const float *A, *B;
	float *C;
	uint32_t *ap;		/* A: tile (row tile rt, K tile kt) at ap + (rt*KT + kt)*256 */
	uint32_t *bp;		/* B: tile (column tile ct, kt) at bp + (ct*KT + kt)*256 */
	size_t M, N, K, KT;
	size_t r0, r1;		/* row blocks (of 32) of this worker */
	size_t q0, q1;		/* column blocks (of 32) of B this worker packs */
	int beta;
} amx_job;

/* The bf16 half of the float at p. */
static uint32_t amx_half(const float *p)
{
	uint32_t u;
	memcpy(&u, p, sizeof u);
	return u >> 16;
}

/* Row tiles 2*r0 .. 2*r1-1 of A. */
static void amx_pack_a(const amx_job *w)
{
	const size_t K = w->K, KT = w->KT;
	size_t rt, kt, r, p;

	for (rt = 2 * w->r0; rt < 2 * w->r1; rt++)
		for (kt = 0; kt < KT; kt++) {
			uint32_t *d = w->ap + (rt * KT + kt) * AMX_TW;
			for (r = 0; r < 16; r++) {
				const size_t i = rt * 16 + r;
				const float *a = i < w->M ? w->A + i * K : NULL;
				for (p = 0; p < 16; p++) {
					const size_t k = kt * AMX_KB + 2 * p;
					uint32_t lo = 0x8000u, hi = 0x8000u;	/* -0 past kk */
					if (!a)
						lo = hi = 0;
					else if (k + 1 < K)
						lo = amx_half(a + k), hi = amx_half(a + k + 1);
					else if (k < K)
						lo = amx_half(a + k);
					d[r * 16 + p] = lo | hi << 16;
				}
			}
		}
}

/* Column tiles 2*q0 .. 2*q1-1 of B. */
static void amx_pack_b(const amx_job *w)
{
	const size_t K = w->K, KT = w->KT, N = w->N;
	size_t ct, kt, p, j;

	for (ct = 2 * w->q0; ct < 2 * w->q1; ct++)
		for (kt = 0; kt < KT; kt++) {
			uint32_t *d = w->bp + (ct * KT + kt) * AMX_TW;
			for (p = 0; p < 16; p++) {
				const size_t k = kt * AMX_KB + 2 * p;
				for (j = 0; j < 16; j++) {
					const size_t col = ct * 16 + j;
					uint32_t lo = 0, hi = 0;	/* +0 past kk and n */
					if (col < N && k < K)
						lo = amx_half(w->B + k * N + col);
					if (col < N && k + 1 < K)
						hi = amx_half(w->B + (k + 1) * N + col);
					d[p * 16 + j] = lo | hi << 16;
				}
			}
		}
}

/* Phase 1 of a worker: pack its row tiles of A and its share of B's. */
static void *amx_pack(void *arg)
{
	const amx_job *w = arg;

	amx_pack_a(w);
	amx_pack_b(w);
	return NULL;
}

/* One 32 x 32 block of C at c (s bytes between rows): C tiles from c or
 * +0, every K tile in ascending order, back to c. */
static void amx_block(const amx_job *w, size_t rb, size_t cb, float *c, size_t s)
{
	const size_t KT = w->KT;
	const uint32_t *a0 = w->ap + 2 * rb * KT * AMX_TW, *a1 = a0 + KT * AMX_TW;
	const uint32_t *b0 = w->bp + 2 * cb * KT * AMX_TW, *b1 = b0 + KT * AMX_TW;
	char *cc = (char *)c;
	size_t kt;

	if (w->beta) {
		AMX_LOADC(0, cc, s);
		AMX_LOADC(1, cc + 64, s);
		AMX_LOADC(2, cc + 16 * s, s);
		AMX_LOADC(3, cc + 16 * s + 64, s);
	} else {
		AMX_ZERO(0);
		AMX_ZERO(1);
		AMX_ZERO(2);
		AMX_ZERO(3);
	}
	for (kt = 0; kt < KT; kt++) {
		AMX_LOADT(4, a0 + kt * AMX_TW);
		AMX_LOADT(5, a1 + kt * AMX_TW);
		AMX_LOADT(6, b0 + kt * AMX_TW);
		AMX_LOADT(7, b1 + kt * AMX_TW);
		AMX_DP(0, 4, 6);
		AMX_DP(1, 4, 7);
		AMX_DP(2, 5, 6);
		AMX_DP(3, 5, 7);
	}
	AMX_STOREC(0, cc, s);
	AMX_STOREC(1, cc + 64, s);
	AMX_STOREC(2, cc + 16 * s, s);
	AMX_STOREC(3, cc + 16 * s + 64, s);
}

/* Row blocks [r0, r1), every column block; an edge block goes through a
 * zero-padded 32 x 32 copy of C. */
static void *amx_compute(void *arg)
{
	const amx_job *w = arg;
	const size_t M = w->M, N = w->N;
	size_t rb, cb, r;
	AMX_ENTER();

	for (cb = 0; cb * AMX_NB < N; cb++)
		for (rb = w->r0; rb < w->r1; rb++) {
			const size_t i0 = rb * AMX_MB, j0 = cb * AMX_NB;
			const size_t mr = M - i0 < AMX_MB ? M - i0 : AMX_MB;
			const size_t nr = N - j0 < AMX_NB ? N - j0 : AMX_NB;
			float *c = w->C + i0 * N + j0;
			if (mr == AMX_MB && nr == AMX_NB) {
				amx_block(w, rb, cb, c, N * sizeof *c);
			} else {
				float t[AMX_MB * AMX_NB];
				memset(t, 0, sizeof t);
				if (w->beta)
					for (r = 0; r < mr; r++)
						memcpy(t + r * AMX_NB, c + r * N, nr * sizeof *t);
				amx_block(w, rb, cb, t, AMX_NB * sizeof *t);
				for (r = 0; r < mr; r++)
					memcpy(c + r * N, t + r * AMX_NB, nr * sizeof *t);
			}
		}
	AMX_LEAVE();
	return NULL;
}

AMX_LINKAGE int AMX_GEMM(int beta, size_t m, size_t n, size_t kk, const float *a,
			 const float *b, float *c, int threads)
{
	const size_t KT = (kk + AMX_KB - 1) / AMX_KB;
	const size_t rbs = (m + AMX_MB - 1) / AMX_MB, cbs = (n + AMX_NB - 1) / AMX_NB;
	amx_job w[FPL_MAX_THREADS];
	uint32_t *ap, *bp;
	int t;

	if (!m || !n)
		return 0;
	threads = fpl__spawn_threads(threads, rbs, (double)m * (double)n * (double)kk,
				     (double)(AMX_MIN_WORK));
	/* every buffer first, so that a failure writes nothing */
	ap = aligned_alloc(64, (rbs * KT > 0 ? rbs * KT : 1) * 2 * AMX_TW * sizeof *ap);
	bp = aligned_alloc(64, (cbs * KT > 0 ? cbs * KT : 1) * 2 * AMX_TW * sizeof *bp);
	if (!ap || !bp) {
		free(ap);
		free(bp);
		return FPL_ENOMEM;
	}
	for (t = 0; t < threads; t++) {
		size_t r0, r1, q0, q1;
		fpl__spawn_share(rbs, threads, t, &r0, &r1);
		fpl__spawn_share(cbs, threads, t, &q0, &q1);
		w[t] = (amx_job){ a, b, c, ap, bp, m, n, kk, KT, r0, r1, q0, q1, beta };
	}
	fpl__spawn(amx_pack, w, sizeof *w, threads);
	fpl__spawn(amx_compute, w, sizeof *w, threads);
	free(ap);
	free(bp);
	return 0;
}
