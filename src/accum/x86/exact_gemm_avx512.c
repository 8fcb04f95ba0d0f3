/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/exact_gemm_avx512.c - exact_gemm.c's micro kernel for
 * AVX-512: 6 rows x 16 columns, E and G in 24 zmm accumulators, one fma
 * per product and per product of magnitudes.  An fma is one correctly
 * rounded node of exact_gemm.c's certificate, so where the certificate
 * holds the sums are exact and equal to every other kernel's.
 *
 * fpl__exact_rd_avx512: error_gemm.c's readings of the certified
 * outputs (gemm_outputs), 8 outputs at a time, the same IEEE operations
 * lane by lane: the certificate's bound 2^min(g + 53 + slack, 1023) is
 * built from its exponent bits (g + 53 >= -1021: a normal number), the
 * comparison tg < bound is ordered (a NaN fails, as !(tg < bound) does
 * in the scalar code), TwoSum of y and -te is the same five additions
 * (no fma: nothing to contract), and |d| / |e| is the correctly rounded
 * IEEE division (masked off where d or e is zero: 0 or +inf instead,
 * the scalar code's choices).  y finite makes result_class(y) 0 and e
 * is te itself (no C).  Every other output (a failed certificate or
 * TwoSum, a non-finite y) is left to the scalar code, which decides it
 * from scratch: the split changes no bits.
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

size_t fpl__exact_rd_avx512(size_t n, const double *te, const double *tg, const double *y,
			    const int *tb, int ta, int slack, double *ex, double *rel,
			    double *ab, double *dn, unsigned char *cls, uint32_t *left)
{
	const __m512d mag = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffll));
	const __m512d sgn = _mm512_castsi512_pd(_mm512_set1_epi64((long long)0x8000000000000000ull));
	const __m512d inf = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff0000000000000ll));
	const __m512d zero = _mm512_setzero_pd();
	const __m256i vta = _mm256_set1_epi32(ta), glo = _mm256_set1_epi32(-1074);
	const __m256i ghi = _mm256_set1_epi32(970), top = _mm256_set1_epi32(1023);
	const __m256i plus = _mm256_set1_epi32(53 + slack);
	const __m512i bias = _mm512_set1_epi64(1023);
	const __m128i c_abs = _mm_set1_epi8(FPL__EXACT_C_ABS);
	const __m128i c_rel = _mm_set1_epi8(FPL__EXACT_C_ABS | FPL__EXACT_C_REL);
	const __m128i c_zero = _mm_set1_epi8(FPL__EXACT_C_ABS | FPL__EXACT_C_REL | FPL__EXACT_C_ZERO);
	size_t c, nl = 0;

	for (c = 0; c < n; c += 8) {
		__mmask8 m = n - c >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - c)) - 1);
		__m512d e = _mm512_maskz_loadu_pd(m, te + c), g = _mm512_maskz_loadu_pd(m, tg + c);
		__m512d yv = _mm512_maskz_loadu_pd(m, y + c), b, t, z, r, ad;
		__m256i w = _mm256_add_epi32(_mm256_maskz_loadu_epi32(m, tb + c), vta), lim;
		__mmask8 ok, ez, dz, y0, more;
		__m128i cl;

		ok = m & _mm256_cmpge_epi32_mask(w, glo) & _mm256_cmple_epi32_mask(w, ghi);
		lim = _mm256_min_epi32(_mm256_add_epi32(w, plus), top);
		ok &= _mm512_cmp_pd_mask(g,
					 _mm512_castsi512_pd(_mm512_slli_epi64(
						 _mm512_add_epi64(_mm512_cvtepi32_epi64(lim), bias), 52)),
					 _CMP_LT_OQ);
		ok &= _mm512_cmp_pd_mask(_mm512_and_pd(yv, mag), inf, _CMP_LT_OQ);
		/* TwoSum(y, -e): t = y + b, z = t - y, (y - (t - z)) + (b - z) */
		b = _mm512_xor_pd(e, sgn);
		t = _mm512_add_pd(yv, b);
		z = _mm512_sub_pd(t, yv);
		r = _mm512_add_pd(_mm512_sub_pd(yv, _mm512_sub_pd(t, z)), _mm512_sub_pd(b, z));
		ok &= _mm512_cmp_pd_mask(_mm512_and_pd(t, mag), inf, _CMP_LT_OQ);
		ok &= _mm512_cmp_pd_mask(r, zero, _CMP_EQ_OQ);
		ad = _mm512_and_pd(t, mag);
		ez = _mm512_cmp_pd_mask(e, zero, _CMP_EQ_OQ);
		dz = _mm512_cmp_pd_mask(t, zero, _CMP_EQ_OQ);
		y0 = _mm512_cmp_pd_mask(yv, zero, _CMP_EQ_OQ);
		r = _mm512_maskz_div_pd((__mmask8)(~dz & ~ez & ok), ad, _mm512_and_pd(e, mag));
		r = _mm512_mask_mov_pd(r, (__mmask8)(~dz & ez), inf);
		if (ex)
			_mm512_mask_storeu_pd(ex + c, ok, e);
		_mm512_mask_storeu_pd(rel + c, ok, r);
		_mm512_mask_storeu_pd(ab + c, ok, ad);
		_mm512_mask_storeu_pd(dn + c, ok, g);
		cl = _mm_mask_mov_epi8(c_abs, (__mmask16)(uint8_t)~ez, c_rel);
		cl = _mm_mask_mov_epi8(cl, (__mmask16)(uint8_t)(~ez & y0), c_zero);
		_mm_mask_storeu_epi8(cls + c, (__mmask16)ok, cl);
		for (more = (__mmask8)(m & ~ok); more; more &= (__mmask8)(more - 1))
			left[nl++] = (uint32_t)(c + (size_t)__builtin_ctz(more));
	}
	return nl;
}
