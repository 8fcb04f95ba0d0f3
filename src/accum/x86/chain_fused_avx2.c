/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_fused_avx2.c - chain_fused_body.h's group sums on AVX2
 * (J->simd == 1): the same sums and the same bad lanes as the portable
 * instance, bit for bit, with the lanes held in registers across the
 * group (sixteen lanes, four registers, per pass; then four; the last
 * nj mod 4 lanes by the portable body itself, compiled here).
 *
 * Why the bits are the portable ones.  Per lane and step the portable
 * body computes, in binary64 mode ne,
 *     p = a b,  t = s + p,  bb = t - s,  err = (s - (t - bb)) + (p - bb),
 *     bad |= err != 0,  s = t.
 * Here:
 *  - p and t are the same VMULPD and VADDPD of the same operands, so the
 *    sums, and the next step's s, are the same bits;
 *  - three of TwoSum's subtractions and its last addition run as FMA
 *    with a factor 1.0 (to spread them over the multiply ports): fma(u,
 *    1, v) is u + v rounded once, since u 1 = u exactly, and fma(u, 1,
 *    -v), fnmadd(u, 1, v) are u - v and v - u the same way; the sign of
 *    an exact zero is the one a sum's rule gives (+0 in mode ne unless
 *    both terms are -0), and an inf or NaN operand gives an inf or NaN
 *    either way.  So every err has the same value as the portable one,
 *    NaN or not;
 *  - instead of testing each err, the errs of a lane are ORed together as
 *    bit patterns, and the lane is bad iff the OR has a bit other than
 *    the sign.  err != 0 holds iff err is not +-0, that is iff err has a
 *    bit set outside the sign (a NaN's exponent is all ones), and the OR
 *    of the errs has such a bit iff one of them does: the same bad.
 * The static condition of chain_fused.c (exact products, no partial sum
 * overflowing) is what makes a good lane's sum exact; nothing here
 * depends on it beyond what the portable body does.  -ffp-contract=off
 * does not bind intrinsics: each operation above is written as the one
 * instruction it must be.
 */
#include <immintrin.h>

#include "accum/accum_internal.h"

#define FUSED_SUMS_NAME fused_sums_tail
#define FUSED_SUMS_STORAGE static
#include "accum/chain_fused_body.h"

/* One step of four lanes: *s += p, the addition's TwoSum error ORed
 * into *e (the header's operations, in that order). */
static inline void step(__m256d *s, __m256d p, __m256d *e, __m256d one)
{
	const __m256d t = _mm256_add_pd(*s, p);
	const __m256d bb = _mm256_fmsub_pd(t, one, *s);	/* t - s */
	const __m256d x = _mm256_sub_pd(t, bb);		/* t - bb */
	const __m256d y = _mm256_fnmadd_pd(x, one, *s);	/* s - x */
	const __m256d z = _mm256_sub_pd(p, bb);		/* p - bb */

	*e = _mm256_or_pd(*e, _mm256_fmadd_pd(y, one, z));	/* y + z */
	*s = t;
}

/* bad[0..3] |= lane of e has a bit set outside the sign. */
static inline void note_bad(__m256d e, unsigned char *bad)
{
	const __m256i mag = _mm256_and_si256(_mm256_castpd_si256(e),
					     _mm256_set1_epi64x(0x7fffffffffffffffll));
	const int zero = _mm256_movemask_pd(
		_mm256_castsi256_pd(_mm256_cmpeq_epi64(mag, _mm256_setzero_si256())));
	int l;

	for (l = 0; l < 4; l++)
		bad[l] |= (unsigned char)(((zero >> l) & 1) ^ 1);
}

/* Sixteen lanes from b, sum and bad (each at its lane 0), steps k0..k1-1. */
static void lanes16(const double *arow, const double *b, size_t ldb, size_t k0, size_t k1,
		    double *sum, unsigned char *bad)
{
	const __m256d one = _mm256_set1_pd(1.0);
	__m256d s0 = _mm256_loadu_pd(sum), s1 = _mm256_loadu_pd(sum + 4);
	__m256d s2 = _mm256_loadu_pd(sum + 8), s3 = _mm256_loadu_pd(sum + 12);
	__m256d e0 = _mm256_setzero_pd(), e1 = e0, e2 = e0, e3 = e0;
	size_t k;

	for (k = k0; k < k1; k++) {
		const __m256d a = _mm256_broadcast_sd(arow + k);
		const double *bk = b + k * ldb;
		step(&s0, _mm256_mul_pd(a, _mm256_loadu_pd(bk)), &e0, one);
		step(&s1, _mm256_mul_pd(a, _mm256_loadu_pd(bk + 4)), &e1, one);
		step(&s2, _mm256_mul_pd(a, _mm256_loadu_pd(bk + 8)), &e2, one);
		step(&s3, _mm256_mul_pd(a, _mm256_loadu_pd(bk + 12)), &e3, one);
	}
	_mm256_storeu_pd(sum, s0);
	_mm256_storeu_pd(sum + 4, s1);
	_mm256_storeu_pd(sum + 8, s2);
	_mm256_storeu_pd(sum + 12, s3);
	note_bad(e0, bad);
	note_bad(e1, bad + 4);
	note_bad(e2, bad + 8);
	note_bad(e3, bad + 12);
}

/* Four lanes, as lanes16. */
static void lanes4(const double *arow, const double *b, size_t ldb, size_t k0, size_t k1,
		   double *sum, unsigned char *bad)
{
	const __m256d one = _mm256_set1_pd(1.0);
	__m256d s = _mm256_loadu_pd(sum), e = _mm256_setzero_pd();
	size_t k;

	for (k = k0; k < k1; k++)
		step(&s, _mm256_mul_pd(_mm256_broadcast_sd(arow + k), _mm256_loadu_pd(b + k * ldb)),
		     &e, one);
	_mm256_storeu_pd(sum, s);
	note_bad(e, bad);
}

void fpl__acc_fused_sums_avx2(const double *arow, const double *b, size_t ldb, size_t nj,
			      size_t k0, size_t k1, double *sum, unsigned char *bad)
{
	size_t jj = 0;

	for (; jj + 16 <= nj; jj += 16)
		lanes16(arow, b + jj, ldb, k0, k1, sum + jj, bad + jj);
	for (; jj + 4 <= nj; jj += 4)
		lanes4(arow, b + jj, ldb, k0, k1, sum + jj, bad + jj);
	if (jj < nj)
		fused_sums_tail(arow, b + jj, ldb, nj - jj, k0, k1, sum + jj, bad + jj);
}
