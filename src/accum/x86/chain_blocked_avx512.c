/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_blocked_avx512.c - chain_blocked.h's truncation kernel
 * on AVX-512: a tile's running sums in up to eight registers of eight
 * lanes for the whole range, each step one fma (exact under
 * chain_blocked.c's condition, so the same value as the portable
 * kernel's a*b then +s) and one AND with the mask; inexact steps counted
 * per lane in eight more registers (an integer compare of the bits
 * before and after the mask).  A last, partial register loads and stores
 * its lanes under a mask (the others hold zeros and are never stored).
 */
#include <immintrin.h>

#include "accum/chain_blocked.h"

/* The block additions' lanes and the scan: chain_blocked_body.h's
 * loops, compiled for AVX-512 (the same results as their other
 * instances). */
#define TZ_PROMO_NAME fpl__acc_tz_promo_lanes_avx512
#define TZ_MAXBITS_NAME fpl__acc_tz_maxbits_avx512
#define TZ_KERNEL_STORAGE
#include "accum/chain_blocked_body.h"

static inline __attribute__((always_inline)) void
kernel(const double *arow, const double *b, size_t ldb, int nr, __mmask8 last, size_t k0,
       size_t k1, uint64_t keep, double *s, uint64_t *inex, int count)
{
	const __m512i vkeep = _mm512_set1_epi64((long long)keep), one = _mm512_set1_epi64(1);
	const __m512i neg0 = _mm512_set1_epi64((long long)0x8000000000000000ull);
	__m512d acc[8];
	__m512i cnt[8];
	__mmask8 any = 0;
	size_t k;
	int r, skip0;

	for (r = 0; r < nr; r++) {
		acc[r] = r == nr - 1 ? _mm512_maskz_loadu_pd(last, s + 8 * r)
				     : _mm512_loadu_pd(s + 8 * r);
		any |= _mm512_cmpeq_epi64_mask(_mm512_castpd_si512(acc[r]), neg0);
		cnt[r] = _mm512_setzero_si512();
	}
	skip0 = !any;	/* no lane holds -0 (the masked lanes are +0) */
	for (k = k0; k < k1; k++) {
		const double a = arow[k], *bk = b + k * ldb;
		__m512d va;

		if (a == 0 && skip0)
			continue;
		va = _mm512_set1_pd(a);
		for (r = 0; r < nr; r++) {
			__m512d bv = r == nr - 1 ? _mm512_maskz_loadu_pd(last, bk + 8 * r)
						 : _mm512_loadu_pd(bk + 8 * r);
			__m512i t = _mm512_castpd_si512(_mm512_fmadd_pd(va, bv, acc[r]));
			__m512i y = _mm512_and_si512(t, vkeep);
			if (count)
				cnt[r] = _mm512_mask_add_epi64(cnt[r], _mm512_cmpneq_epi64_mask(t, y),
							       cnt[r], one);
			acc[r] = _mm512_castsi512_pd(y);
		}
	}
	for (r = 0; r < nr; r++) {
		__mmask8 mk = r == nr - 1 ? last : (__mmask8)0xff;
		_mm512_mask_storeu_pd(s + 8 * r, mk, acc[r]);
		if (count)
			_mm512_mask_storeu_epi64(inex + 8 * r, mk,
						 _mm512_add_epi64(_mm512_maskz_loadu_epi64(mk, inex + 8 * r),
								  cnt[r]));
	}
}

/* kernel() with the counting fixed, so each copy is branch-free. */
static inline __attribute__((always_inline)) void
by_count(const double *arow, const double *b, size_t ldb, int nr, __mmask8 last, size_t k0,
	 size_t k1, uint64_t keep, double *s, uint64_t *inex)
{
	if (inex)
		kernel(arow, b, ldb, nr, last, k0, k1, keep, s, inex, 1);
	else
		kernel(arow, b, ldb, nr, last, k0, k1, keep, s, inex, 0);
}

/* One copy per register count, so the sums stay in registers. */
void fpl__acc_tz_kernel_avx512(const double *arow, const double *b, size_t ldb, size_t nj,
			       size_t k0, size_t k1, uint64_t keep, double *s, uint64_t *inex)
{
	const int nr = (int)((nj + 7) / 8);
	const __mmask8 last = (__mmask8)(0xffu >> (8 * (size_t)nr - nj));

	switch (nr) {
	case 1: by_count(arow, b, ldb, 1, last, k0, k1, keep, s, inex); break;
	case 2: by_count(arow, b, ldb, 2, last, k0, k1, keep, s, inex); break;
	case 3: by_count(arow, b, ldb, 3, last, k0, k1, keep, s, inex); break;
	case 4: by_count(arow, b, ldb, 4, last, k0, k1, keep, s, inex); break;
	case 5: by_count(arow, b, ldb, 5, last, k0, k1, keep, s, inex); break;
	case 6: by_count(arow, b, ldb, 6, last, k0, k1, keep, s, inex); break;
	case 7: by_count(arow, b, ldb, 7, last, k0, k1, keep, s, inex); break;
	case 8: by_count(arow, b, ldb, 8, last, k0, k1, keep, s, inex); break;
	default: break;	/* nj == 0 */
	}
}
