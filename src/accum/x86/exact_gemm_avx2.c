/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/exact_gemm_avx2.c - exact_gemm.c's micro kernel for AVX2 and
 * FMA: 6 rows x 8 columns, E in 12 ymm accumulators over the slice of k,
 * then G in the same registers over the same slice (16 registers do not
 * hold both at once); one fma per product and per product of magnitudes,
 * each one correctly rounded node of exact_gemm.c's certificate, so the
 * sums equal every other kernel's where it holds.
 */
#include <immintrin.h>

#include "accum/exact_internal.h"

/* out[r*ldo + 0..8) += sum over k < kc of a(k, r) b(k) (mag: |b|), a(k,
 * r) = ap[k*12 + off + r].  Named accumulators, not an array: GCC keeps
 * an array's stores in the loop. */
#define LD(r) c##r##0 = _mm256_loadu_pd(out + r * ldo), c##r##1 = _mm256_loadu_pd(out + r * ldo + 4)
#define ST(r) _mm256_storeu_pd(out + r * ldo, c##r##0), _mm256_storeu_pd(out + r * ldo + 4, c##r##1)
#define ROW(r)                                                                             \
	do {                                                                               \
		__m256d a_ = _mm256_broadcast_sd(ap + off + r);                             \
		c##r##0 = _mm256_fmadd_pd(a_, b0, c##r##0);                                \
		c##r##1 = _mm256_fmadd_pd(a_, b1, c##r##1);                                \
	} while (0)

static inline void pass(size_t kc, const double *ap, int off, const double *bp, int mag,
			double *out, size_t ldo)
{
	__m256d c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
	const __m256d m = _mm256_castsi256_pd(_mm256_set1_epi64x(mag ? 0x7fffffffffffffffll : -1ll));
	size_t k;

	LD(0);
	LD(1);
	LD(2);
	LD(3);
	LD(4);
	LD(5);
	for (k = 0; k < kc; k++, ap += 12, bp += 8) {
		__m256d b0 = _mm256_and_pd(_mm256_loadu_pd(bp), m);
		__m256d b1 = _mm256_and_pd(_mm256_loadu_pd(bp + 4), m);
		ROW(0);
		ROW(1);
		ROW(2);
		ROW(3);
		ROW(4);
		ROW(5);
	}
	ST(0);
	ST(1);
	ST(2);
	ST(3);
	ST(4);
	ST(5);
}

void fpl__exact_mk_avx2(size_t kc, const double *ap, const double *bp, double *e, double *g,
			size_t ldo)
{
	pass(kc, ap, 0, bp, 0, e, ldo);
	pass(kc, ap, 6, bp, 1, g, ldo);
}
