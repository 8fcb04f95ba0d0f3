/* SPDX-License-Identifier: MIT */
/*
 * x86/gemm_fma32.c - the binary32 GEMM on the CPU's fma (FMA3, AVX2):
 * fplab's native twin of the profile fp32-fma, and the engine of the
 * accumulation code's fast binary32 path (chain_fma.c).
 *
 * Each output is one chain, c = fma(a_k, b_k, c) for k ascending from C
 * or +0, run in a vector lane by VFMADD231PS; a 6 x 16 register block of
 * outputs (12 ymm accumulators) walks B packed in 16-column panels.
 * Blocking chooses which chains run side by side, never a chain's order,
 * so every output is the sequential fmaf loop's: the profile fp32-fma.
 * A narrow last panel is zero-padded (a padded lane's chain is discarded)
 * and computed through a copy of its C block.
 *
 * Floating-point environment: each thread runs under MXCSR 0x1f80
 * (round to nearest even, no FTZ, no DAZ, all exceptions masked) and puts
 * its own MXCSR back, so the IEEE binary32 fma is what runs whatever the
 * caller set.
 *
 * NaNs: the hardware quiets the first NaN operand.  With the accumulator
 * as the destination and the broadcast a_k as the second operand, this
 * form returns, on the AMD Zen CPUs measured, the NaN of a_k first, then
 * b_k, then the accumulator; an invalid operation (inf * 0) gives the
 * default NaN 0xffc00000.  Those are the engine's fma rules (x86 NaN
 * rule, priority a, b, acc), so NaN payloads match the profile; the
 * native test checks it on the CPU it runs on (tests/tnative_kernels.c).
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "native/native_internal.h"
#include "util/parallel.h"

#define MR 6
#define NR 16

/* c[r*ldc + j] (r < 6, j < 16) = its chain over k < K, b a K x 16 panel. */
static void block6x16(const float *a, size_t lda, const float *b, size_t K, float *c, size_t ldc)
{
	__m256 c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
	__m256 c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
	__m256 c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
	__m256 c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
	__m256 c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
	__m256 c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
	const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
	const float *a4 = a + 4 * lda, *a5 = a + 5 * lda;
	size_t k;

	for (k = 0; k < K; k++) {
		const __m256 b0 = _mm256_loadu_ps(b + k * NR), b1 = _mm256_loadu_ps(b + k * NR + 8);
		__m256 av;
		av = _mm256_broadcast_ss(a0 + k);
		c00 = _mm256_fmadd_ps(av, b0, c00);
		c01 = _mm256_fmadd_ps(av, b1, c01);
		av = _mm256_broadcast_ss(a1 + k);
		c10 = _mm256_fmadd_ps(av, b0, c10);
		c11 = _mm256_fmadd_ps(av, b1, c11);
		av = _mm256_broadcast_ss(a2 + k);
		c20 = _mm256_fmadd_ps(av, b0, c20);
		c21 = _mm256_fmadd_ps(av, b1, c21);
		av = _mm256_broadcast_ss(a3 + k);
		c30 = _mm256_fmadd_ps(av, b0, c30);
		c31 = _mm256_fmadd_ps(av, b1, c31);
		av = _mm256_broadcast_ss(a4 + k);
		c40 = _mm256_fmadd_ps(av, b0, c40);
		c41 = _mm256_fmadd_ps(av, b1, c41);
		av = _mm256_broadcast_ss(a5 + k);
		c50 = _mm256_fmadd_ps(av, b0, c50);
		c51 = _mm256_fmadd_ps(av, b1, c51);
	}
	_mm256_storeu_ps(c, c00);
	_mm256_storeu_ps(c + 8, c01);
	_mm256_storeu_ps(c + ldc, c10);
	_mm256_storeu_ps(c + ldc + 8, c11);
	_mm256_storeu_ps(c + 2 * ldc, c20);
	_mm256_storeu_ps(c + 2 * ldc + 8, c21);
	_mm256_storeu_ps(c + 3 * ldc, c30);
	_mm256_storeu_ps(c + 3 * ldc + 8, c31);
	_mm256_storeu_ps(c + 4 * ldc, c40);
	_mm256_storeu_ps(c + 4 * ldc + 8, c41);
	_mm256_storeu_ps(c + 5 * ldc, c50);
	_mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

static void block1x16(const float *a, const float *b, size_t K, float *c)
{
	__m256 c0 = _mm256_loadu_ps(c), c1 = _mm256_loadu_ps(c + 8);
	size_t k;

	for (k = 0; k < K; k++) {
		const __m256 av = _mm256_broadcast_ss(a + k);
		c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + k * NR), c0);
		c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + k * NR + 8), c1);
	}
	_mm256_storeu_ps(c, c0);
	_mm256_storeu_ps(c + 8, c1);
}

typedef struct job {
	const float *A, *B;
	float *C, *panel;	/* panel: K x 16 floats of this thread */
	size_t N, K, r0, r1;	/* rows [r0, r1) of this thread */
} job;

static void *rows(void *arg)
{
	job *w = arg;
	const size_t K = w->K, N = w->N;
	const unsigned csr = _mm_getcsr();
	float *panel = w->panel;
	size_t j0, i, k, j;

	_mm_setcsr(0x1f80);
	for (j0 = 0; j0 < N; j0 += NR) {
		const size_t nr = N - j0 < NR ? N - j0 : NR;
		for (k = 0; k < K; k++) {	/* pack B[.., j0..j0+nr), zero-padded */
			for (j = 0; j < nr; j++)
				panel[k * NR + j] = w->B[k * N + j0 + j];
			for (; j < NR; j++)
				panel[k * NR + j] = 0.0f;
		}
		for (i = w->r0; i < w->r1;) {
			const float *a = w->A + i * K;
			float *c = w->C + i * N + j0;
			const size_t mr = w->r1 - i < MR ? w->r1 - i : MR;
			if (nr == NR && mr == MR) {
				block6x16(a, K, panel, K, c, N);
			} else if (nr == NR) {
				size_t r;
				for (r = 0; r < mr; r++)
					block1x16(a + r * K, panel, K, c + r * N);
			} else {	/* a narrow panel: through a padded copy */
				float t[MR * NR];
				size_t r, q;
				memset(t, 0, sizeof t);
				for (r = 0; r < mr; r++)
					memcpy(t + r * NR, c + r * N, nr * sizeof *t);
				if (mr == MR)
					block6x16(a, K, panel, K, t, NR);
				else
					for (r = 0; r < mr; r++)
						block1x16(a + r * K, panel, K, t + r * NR);
				for (r = 0; r < mr; r++)
					for (q = 0; q < nr; q++)
						c[r * N + q] = t[r * NR + q];
			}
			i += mr;
		}
	}
	_mm_setcsr(csr);
	return NULL;
}

int fpl__native_fma32_gemm(int beta, size_t m, size_t n, size_t kk, const float *a,
			   const float *b, float *c, int threads)
{
	const size_t blocks = (m + MR - 1) / MR;
	job w[FPL_MAX_THREADS];
	int t;
	float *panels;

	/* below 1.6e7 fmas (about 250^3) one thread is faster than two: the
	 * start and join of a thread (15-60 us) cost more than half the work
	 * saves (measured on Zen 5, 1 vs 2 threads at 128 .. 1024) */
	threads = fpl__spawn_threads(threads, blocks, (double)m * (double)n * (double)kk, 1.6e7);
	/* every buffer first, so that a failure writes nothing */
	panels = malloc((size_t)threads * (kk ? kk : 1) * NR * sizeof *panels);
	if (!panels)
		return FPL_ENOMEM;
	if (!beta)
		memset(c, 0, m * n * sizeof *c);
	for (t = 0; t < threads; t++) {
		size_t b0, b1;
		fpl__spawn_share(blocks, threads, t, &b0, &b1);
		w[t] = (job){ a, b, c, panels + (size_t)t * (kk ? kk : 1) * NR, n, kk,
			      b0 * MR < m ? b0 * MR : m, b1 * MR < m ? b1 * MR : m };
	}
	fpl__spawn(rows, w, sizeof *w, threads);
	free(panels);
	return 0;
}
