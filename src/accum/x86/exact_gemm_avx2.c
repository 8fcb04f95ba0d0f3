/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/exact_gemm_avx2.c - exact_gemm.c's micro kernel for AVX2 and
 * FMA: 5 rows x 4 columns, E and G in 10 ymm accumulators (16 registers
 * in all), one fma per product and per product of magnitudes; each fma
 * is one correctly rounded node of exact_gemm.c's certificate, so the
 * sums equal every other kernel's where it holds.
 */
#include <immintrin.h>

#include "accum/exact_internal.h"

void fpl__exact_mk_avx2(size_t kc, const double *ap, const double *bp, double *e, double *g,
			size_t ldo)
{
	__m256d E[5], G[5];
	const __m256d mag = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
	size_t k;
	int r;

	for (r = 0; r < 5; r++) {
		E[r] = _mm256_loadu_pd(e + (size_t)r * ldo);
		G[r] = _mm256_loadu_pd(g + (size_t)r * ldo);
	}
	for (k = 0; k < kc; k++, ap += 10, bp += 4) {
		__m256d b = _mm256_loadu_pd(bp), c = _mm256_and_pd(b, mag);
		for (r = 0; r < 5; r++) {
			E[r] = _mm256_fmadd_pd(_mm256_broadcast_sd(ap + r), b, E[r]);
			G[r] = _mm256_fmadd_pd(_mm256_broadcast_sd(ap + 5 + r), c, G[r]);
		}
	}
	for (r = 0; r < 5; r++) {
		_mm256_storeu_pd(e + (size_t)r * ldo, E[r]);
		_mm256_storeu_pd(g + (size_t)r * ldo, G[r]);
	}
}
