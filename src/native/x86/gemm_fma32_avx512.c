/* SPDX-License-Identifier: MIT */
/*
 * x86/gemm_fma32_avx512.c - the binary32 GEMM on AVX-512 fma
 * (VFMADD231PS zmm): the same chains as x86/gemm_fma32.c (the profile
 * fp32-fma), at twice the width and with cache blocking.
 *
 * Each output is one chain, c = fma(a_k, b_k, c) for k ascending from C
 * or +0, run in a vector lane; a 6 x 32 register block of outputs (12
 * zmm accumulators) walks packed panels.  The blocking is GotoBLAS's:
 * K in blocks of KC taken in ascending order, B packed KC x NC in
 * 32-column micro-panels, A packed MC x KC in 6-row micro-panels.  K
 * blocking cuts no chain in pieces: between two K blocks a chain's
 * value waits in C, a binary32 store and reload that changes no bit, and
 * the next block continues it at the next k.  No partial sums are ever
 * added together, so every output is the sequential fmaf loop's.
 * Padded rows and columns (zero in the packed panels) run chains that
 * are discarded: an edge block goes through a copy of its C tile.
 *
 * Floating-point environment, NaNs: as x86/gemm_fma32.c (MXCSR 0x1f80
 * per thread and restored; the broadcast a_k is the fma's first source
 * operand, b_k the second, the accumulator the destination, and the
 * native test checks the NaN priority a, b, acc on the CPU it runs on).
 *
 * Threads: each takes a run of 6-row blocks (one thread below MIN_WORK),
 * with its own packing buffers; K is never split.
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "native/native_internal.h"
#include "util/parallel.h"

#define MR 6	/* rows of a register block */
#define NR 32	/* columns: two zmm */
#define KC 256	/* K block: a B micro-panel, KC x 32 floats, fits in L1 */
#define MC 144	/* rows of a packed A block (MC x KC floats in L2) */
#define NC 2048	/* columns of a packed B block */
/* m*n*k below which one thread is faster than two: starting and joining
 * a thread costs 15-60 us here, about 1.5e7 fmas of this kernel; measured
 * on Zen 5, two threads overtake one between 320^3 and 384^3 */
#define MIN_WORK 4e7

/* c[r*ldc + j] (r < 6, j < 32) continues its chain over kc steps of the
 * packed micro-panels a (kc x 6) and b (kc x 32). */
static void block6x32(const float *a, const float *b, size_t kc, float *c, size_t ldc)
{
	__m512 acc[MR][2];
	size_t k;
	int r;

#pragma GCC unroll 6
	for (r = 0; r < MR; r++) {
		acc[r][0] = _mm512_loadu_ps(c + (size_t)r * ldc);
		acc[r][1] = _mm512_loadu_ps(c + (size_t)r * ldc + 16);
	}
	for (k = 0; k < kc; k++) {
		const __m512 b0 = _mm512_load_ps(b + k * NR), b1 = _mm512_load_ps(b + k * NR + 16);
#pragma GCC unroll 6
		for (r = 0; r < MR; r++) {
			const __m512 av = _mm512_set1_ps(a[k * MR + (size_t)r]);
			acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
			acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
		}
	}
#pragma GCC unroll 6
	for (r = 0; r < MR; r++) {
		_mm512_storeu_ps(c + (size_t)r * ldc, acc[r][0]);
		_mm512_storeu_ps(c + (size_t)r * ldc + 16, acc[r][1]);
	}
}

/* pb = B[p0 .. p0+kc) x [j0 .. j0+nc) in 32-column micro-panels, each
 * kc x 32, the last one zero-padded. */
static void pack_b(const float *B, size_t N, size_t p0, size_t kc, size_t j0, size_t nc,
		   float *pb)
{
	size_t jp, k, j;

	for (jp = 0; jp < nc; jp += NR) {
		const size_t nr = nc - jp < NR ? nc - jp : NR;
		float *d = pb + jp * kc;
		const float *s = B + p0 * N + j0 + jp;
		if (nr == NR) {
			for (k = 0; k < kc; k++) {
				_mm512_store_ps(d + k * NR, _mm512_loadu_ps(s + k * N));
				_mm512_store_ps(d + k * NR + 16, _mm512_loadu_ps(s + k * N + 16));
			}
			continue;
		}
		for (k = 0; k < kc; k++) {
			for (j = 0; j < nr; j++)
				d[k * NR + j] = s[k * N + j];
			for (; j < NR; j++)
				d[k * NR + j] = 0.0f;
		}
	}
}

/* pa = A[i0 .. i0+mc) x [p0 .. p0+kc) in 6-row micro-panels, each kc x 6
 * (k major), the last one zero-padded. */
static void pack_a(const float *A, size_t K, size_t i0, size_t mc, size_t p0, size_t kc,
		   float *pa)
{
	size_t ip, k, r;

	for (ip = 0; ip < mc; ip += MR) {
		const size_t mr = mc - ip < MR ? mc - ip : MR;
		float *d = pa + ip * kc;
		const float *s = A + (i0 + ip) * K + p0;
		for (r = 0; r < mr; r++)
			for (k = 0; k < kc; k++)
				d[k * MR + r] = s[r * K + k];
		for (; r < MR; r++)
			for (k = 0; k < kc; k++)
				d[k * MR + r] = 0.0f;
	}
}

/* One MC x NC block of C, rows i0.., columns j0..: every micro-tile. */
static void macro(const float *pa, const float *pb, size_t mc, size_t nc, size_t kc, float *C,
		  size_t N, size_t i0, size_t j0)
{
	size_t jp, ip, r;

	for (jp = 0; jp < nc; jp += NR) {
		const size_t nr = nc - jp < NR ? nc - jp : NR;
		for (ip = 0; ip < mc; ip += MR) {
			const size_t mr = mc - ip < MR ? mc - ip : MR;
			float *c = C + (i0 + ip) * N + j0 + jp;
			float t[MR * NR];
			if (mr == MR && nr == NR) {
				block6x32(pa + ip * kc, pb + jp * kc, kc, c, N);
				continue;
			}
			memset(t, 0, sizeof t);	/* an edge: through a copy */
			for (r = 0; r < mr; r++)
				memcpy(t + r * NR, c + r * N, nr * sizeof *t);
			block6x32(pa + ip * kc, pb + jp * kc, kc, t, NR);
			for (r = 0; r < mr; r++)
				memcpy(c + r * N, t + r * NR, nr * sizeof *t);
		}
	}
}

typedef struct job {
	const float *A, *B;
	float *C, *pa, *pb;	/* pa: MC x KC, pb: KC x NC (rounded up) of this thread */
	size_t N, K, r0, r1;	/* rows [r0, r1) of this thread */
} job;

static void *rows(void *arg)
{
	job *w = arg;
	const size_t K = w->K, N = w->N;
	const unsigned csr = _mm_getcsr();
	size_t j0, p0, i0;

	_mm_setcsr(0x1f80);
	for (j0 = 0; j0 < N; j0 += NC) {
		const size_t nc = N - j0 < NC ? N - j0 : NC;
		for (p0 = 0; p0 < K; p0 += KC) {	/* K blocks in order */
			const size_t kc = K - p0 < KC ? K - p0 : KC;
			pack_b(w->B, N, p0, kc, j0, nc, w->pb);
			for (i0 = w->r0; i0 < w->r1; i0 += MC) {
				const size_t mc = w->r1 - i0 < MC ? w->r1 - i0 : MC;
				pack_a(w->A, K, i0, mc, p0, kc, w->pa);
				macro(w->pa, w->pb, mc, nc, kc, w->C, N, i0, j0);
			}
		}
	}
	_mm_setcsr(csr);
	return NULL;
}

int fpl__native_fma32_avx512_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
				  const float *b, float *c, int threads)
{
	const size_t blocks = (m + MR - 1) / MR;
	const size_t kc = kk < KC ? (kk ? kk : 1) : KC;
	/* lengths in floats, multiples of 16: every panel 64-byte aligned */
	const size_t pa_len = ((m < MC ? blocks * MR : MC) * kc + 15) & ~(size_t)15;
	const size_t pb_len = (kc * ((NC < n ? NC : n) + NR) + 15) & ~(size_t)15;
	job w[FPL_MAX_THREADS];
	size_t per;
	int t;
	float *buf;

	if (!m || !n)
		return 0;
	threads = fpl__spawn_threads(threads, blocks, (double)m * (double)n * (double)kk,
				     MIN_WORK);
	/* every buffer first, so that a failure writes nothing */
	per = pa_len + pb_len;
	buf = aligned_alloc(64, (size_t)threads * per * sizeof *buf);
	if (!buf)
		return FPL_ENOMEM;
	if (!beta)
		memset(c, 0, m * n * sizeof *c);
	if (!kk) {
		free(buf);
		return 0;
	}
	for (t = 0; t < threads; t++) {
		size_t b0, b1;
		fpl__spawn_share(blocks, threads, t, &b0, &b1);
		w[t] = (job){ a, b, c, buf + (size_t)t * per, buf + (size_t)t * per + pa_len,
			      n, kk, b0 * MR < m ? b0 * MR : m, b1 * MR < m ? b1 * MR : m };
	}
	fpl__spawn(rows, w, sizeof *w, threads);
	free(buf);
	return 0;
}
