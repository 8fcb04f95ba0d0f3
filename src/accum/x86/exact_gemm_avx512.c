/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/exact_gemm_avx512.c - exact_gemm.c's micro kernel for
 * AVX-512: 6 rows x 16 columns, E and G in 24 zmm accumulators, one fma
 * per product and per product of magnitudes.  An fma is one correctly
 * rounded node of exact_gemm.c's certificate, so where the certificate
 * holds the sums are exact and equal to every other kernel's.
 */
#include <immintrin.h>

#include "accum/exact_internal.h"

void fpl__exact_mk_avx512(size_t kc, const double *ap, const double *bp, double *e, double *g,
			  size_t ldo)
{
	__m512d e0[6], e1[6], g0[6], g1[6];
	const __m512d mag = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffll));
	size_t k;
	int r;

	for (r = 0; r < 6; r++) {
		e0[r] = _mm512_loadu_pd(e + (size_t)r * ldo);
		e1[r] = _mm512_loadu_pd(e + (size_t)r * ldo + 8);
		g0[r] = _mm512_loadu_pd(g + (size_t)r * ldo);
		g1[r] = _mm512_loadu_pd(g + (size_t)r * ldo + 8);
	}
	for (k = 0; k < kc; k++, ap += 12, bp += 16) {
		__m512d b0 = _mm512_loadu_pd(bp), b1 = _mm512_loadu_pd(bp + 8);
		__m512d c0 = _mm512_and_pd(b0, mag), c1 = _mm512_and_pd(b1, mag);
		for (r = 0; r < 6; r++) {
			__m512d a = _mm512_set1_pd(ap[r]), aa = _mm512_set1_pd(ap[6 + r]);
			e0[r] = _mm512_fmadd_pd(a, b0, e0[r]);
			e1[r] = _mm512_fmadd_pd(a, b1, e1[r]);
			g0[r] = _mm512_fmadd_pd(aa, c0, g0[r]);
			g1[r] = _mm512_fmadd_pd(aa, c1, g1[r]);
		}
	}
	for (r = 0; r < 6; r++) {
		_mm512_storeu_pd(e + (size_t)r * ldo, e0[r]);
		_mm512_storeu_pd(e + (size_t)r * ldo + 8, e1[r]);
		_mm512_storeu_pd(g + (size_t)r * ldo, g0[r]);
		_mm512_storeu_pd(g + (size_t)r * ldo + 8, g1[r]);
	}
}
