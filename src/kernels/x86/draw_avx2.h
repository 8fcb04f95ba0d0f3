/* SPDX-License-Identifier: MIT */
/*
 * kernels/x86/draw_avx2.h - fpl__draw's splitmix64 finalizer (fpl__mix64,
 * engine/internal.h) on four 64-bit lanes with AVX2, which has no 64-bit
 * multiply, computing only what stochastic rounding reads: the HIGH 32
 * bits of each lane's draw.  Only for files compiled for AVX2 (-mavx2).
 * The one home of this arithmetic: the AVX2 array kernels
 * (x86/round_direct_avx2.c), the AVX2 sp chains (accum/x86/
 * chain_sp_avx2.c) and the AVX2 block quantizer (block/x86/
 * block_f32_avx2.c) all draw through it.
 *
 * Contract: fpl__dr2_mix_hi(z, xs) returns, in the high 32-bit word of
 * lane l, bits 63..32 of fpl__mix64(z_l), exactly; the low words are
 * unspecified (callers mask them off).  With xs = 0 bit 32 (the low bit
 * of the high word) is also unspecified: a caller reading only the top
 * R <= 31 bits may pass xs = 0 and save two operations.
 *
 * Why.  fpl__mix64(z) = x3 ^ (x3 >> 31), x3 = x2 * K2, x2 = x1 ^ (x1 >>
 * 27), x1 = (z ^ (z >> 30)) * K1, all mod 2^64.
 *  - x * k mod 2^64 for k = kh 2^32 + kl and x = hi 2^32 + lo is lo*kl +
 *    ((lo*kh + hi*kl) mod 2^32) 2^32: vpmuludq gives the 64-bit lo*kl,
 *    one vpmulld by ks (k with its halves swapped: kh in the low word,
 *    kl in the high word) gives lo*kh in the low and hi*kl in the high
 *    word, each mod 2^32 (fpl__dr2_mul64: x1 in full, as x2 and hence
 *    x3's high word need all of x1's bits).
 *  - x3's high word alone is hi(lo*kl) + lo*kh + hi*kl mod 2^32 (lo, hi
 *    now x2's words): the sum of vpmuludq's product and the vpmulld
 *    vector, added in 32-bit lanes (no carry from the low word is wanted:
 *    the high word of lo*kl already is hi(lo*kl)), has hi(lo*kl) + hi*kl
 *    in the high word; adding the vpmulld vector shifted left by 32 adds
 *    lo*kh there.
 *  - the high word of x3 ^ (x3 >> 31) is h ^ (h >> 31), h = x3's high
 *    word (x3 >> 31's high word is x3's bit 63 alone, at bit 32): a
 *    64-bit shift of the lane by 31 puts exactly h >> 31 in the high
 *    word, whatever the low word holds.  It changes bit 32 only.
 *  - fpl__dr2_mix_hi8 packs the high words of two such vectors into
 *    eight 32-bit lanes before the last additions, so the final sum and
 *    xorshift run once for eight draws (the xorshift then by a 32-bit
 *    shift: h >> 31 of a 32-bit h is its top bit).
 */
#ifndef FPLAB_KERNELS_X86_DRAW_AVX2_H
#define FPLAB_KERNELS_X86_DRAW_AVX2_H

#include <immintrin.h>

#define FPL__DR2_INLINE static inline __attribute__((always_inline))

/* x * k mod 2^64 on four lanes, k = kh 2^32 + kl given as kl (in the low
 * word of each lane) and ks = kl 2^32 + kh. */
FPL__DR2_INLINE __m256i fpl__dr2_mul64(__m256i x, __m256i kl, __m256i ks)
{
	__m256i t = _mm256_mullo_epi32(x, ks);	/* lo*kh low word, hi*kl high word */
	__m256i hi = _mm256_add_epi64(_mm256_slli_epi64(t, 32),
				      _mm256_and_si256(t, _mm256_set1_epi64x((long long)0xffffffff00000000ull)));
	return _mm256_add_epi64(_mm256_mul_epu32(x, kl), hi);
}

/* x2 = the first xorshift, multiply and second xorshift of fpl__mix64,
 * all 64 bits of each lane. */
FPL__DR2_INLINE __m256i fpl__dr2_mix1(__m256i z)
{
	z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
	z = fpl__dr2_mul64(z, _mm256_set1_epi64x(0x1ce4e5b9), _mm256_set1_epi64x(0x1ce4e5b9bf58476dll));
	return _mm256_xor_si256(z, _mm256_srli_epi64(z, 27));
}

/* fpl__mix64(z)'s high word in each lane's high word (the header's
 * contract; xs = 0 leaves bit 32 unspecified). */
FPL__DR2_INLINE __m256i fpl__dr2_mix_hi(__m256i z, const int xs)
{
	__m256i a = fpl__dr2_mix1(z);
	__m256i t = _mm256_mullo_epi32(a, _mm256_set1_epi64x(0x133111eb94d049bbll));
	__m256i h = _mm256_add_epi32(_mm256_add_epi32(_mm256_mul_epu32(a, _mm256_set1_epi64x(0x133111eb)),
						      t),
				     _mm256_slli_epi64(t, 32));
	return xs ? _mm256_xor_si256(h, _mm256_srli_epi64(h, 31)) : h;
}

/* The high words of the draws of za (lanes 0, 1, 4, 5 of the result) and
 * zb (lanes 2, 3, 6, 7), packed as eight 32-bit lanes in lane order:
 * lane l of the result is bits 63..32 of fpl__mix64 of the l-th state
 * (za's lanes 0, 1, zb's 0, 1, za's 2, 3, zb's 2, 3).  xs = 0 leaves bit
 * 0 of each lane unspecified, as fpl__dr2_mix_hi. */
FPL__DR2_INLINE __m256i fpl__dr2_mix_hi8(__m256i za, __m256i zb, const int xs)
{
	const __m256i kl = _mm256_set1_epi64x(0x133111eb), ks = _mm256_set1_epi64x(0x133111eb94d049bbll);
	__m256i a = fpl__dr2_mix1(za), b = fpl__dr2_mix1(zb);
	__m256i ta = _mm256_mullo_epi32(a, ks), tb = _mm256_mullo_epi32(b, ks);
	__m256i va = _mm256_add_epi32(_mm256_mul_epu32(a, kl), ta);	/* hi(lo*kl) + hi*kl */
	__m256i vb = _mm256_add_epi32(_mm256_mul_epu32(b, kl), tb);
	__m256i h = _mm256_add_epi32(
		_mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(va), _mm256_castsi256_ps(vb),
						      _MM_SHUFFLE(3, 1, 3, 1))),
		_mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(ta), _mm256_castsi256_ps(tb),
						      _MM_SHUFFLE(2, 0, 2, 0))));	/* + lo*kh */
	return xs ? _mm256_xor_si256(h, _mm256_srli_epi32(h, 31)) : h;
}

#endif
