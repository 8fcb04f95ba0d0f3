/* SPDX-License-Identifier: MIT */
/*
 * x86/block_f32_avx2.c - block quantization of binary32 tensors with
 * AVX2 (the avx2 kernel set), eight lanes at a time: the power-of-two
 * rules (floor, ceil, even, rceil), nearest-even and sp, runs of eight
 * full blocks of 32 by group8 (their amax by a transposing tree of
 * maxima, their scales in the lanes of one vector), other blocks one at
 * a time (one_block2), each element by vec8; the amax rule (NVFP4):
 * e2m1 elements with exact quotients by e2m1_block2 (nearest-even, the
 * thresholds of block_f32_avx512.c's e2m1_block, whose comment argues
 * them) and e2m1_sp_block2 (sp, e2m1_sp_vec's grid and binary64 test),
 * their constants cached per D; q32 quotients by q32_block2 (vec8 on
 * the binary32 quotients, block_f32_avx512.c's q32_vec); its other
 * blocks by fpl__bq_block_scalar.
 *
 * Why the bits, flags and events equal the reference's: the steps are
 * those of block_f32_avx512.c (its header and fast_vec's comment), with
 * what AVX2 lacks done otherwise, each exact:
 *  - the scale of each block is fpl__bq_kpow2 (block_f32.h) of its
 *    largest magnitude bits, as in one_block;
 *  - rounding to the quantum Q = 2^(e' - 127 - m) by the magic constant C
 *    = 2^(e' - 127 + 23 - m): (|x| + C) - C in nearest-even (MXCSR set to
 *    the default for the call); sp truncates by that result less Q where
 *    it exceeds |x| (a nearest rounding is at most one quantum above the
 *    truncation), then adds Q where the draw carries;
 *  - sp's fraction F of a quantum, in 32 bits, from x's significand M
 *    (with the implicit bit for a normal x): |x| / Q = M / 2^sh, sh = e'
 *    - max(be, 1) + 23 - m, so F = M << (32 - sh) | M >> (sh - 32) (AVX2's
 *    variable shifts give 0 for counts of 32 and more, and a negative
 *    count is such a count), exactly k_round's F;
 *  - unsigned comparisons F > ~r' as signed ones of both biased by 2^31;
 *    magnitudes (below 2^31) compare signed directly;
 *  - the draws' high words by 32-bit products (fpl__dr2_mix_hi8 of
 *    kernels/x86/draw_avx2.h: x * k mod 2^64 from vpmuludq and
 *    vpmulld).
 * Blocks whose scale leaves the binary32 constants' range (kb_init's
 * conditions) and NaN blocks go to fpl__bq_block_scalar / NaN, as there.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "block/block_f32.h"
#include "kernels/x86/draw_avx2.h"

#define KI static inline __attribute__((always_inline))
#define GOLD 0x9e3779b97f4a7c15ull
#define PF_AHEAD 1024

typedef struct kc2 {
	__m256i absm, sgn, fracm, impl, one, zero, cexp, fexp, m23, dreach, dones, rmask, bias;
	__m256i c9m, sht, glo, ghi, x7f;
	/* group8's vector fpl__bq_kpow2 and kb_init (as block_f32_avx512.c's kc_init) */
	__m256i infb1, minnorm, ebias, kthr, kminv, kmaxv, kkoff, kklo, kkhi, maxeb;
	__m256i dones1;	/* one quantum at x's binade, 2^(23-m) in its bits */
	int sp, tb, m, isp;
	uint64_t key, c0;
} kc2;

/* The high words of fpl__draw(key, idx + i), i = 0..7, in lane order
 * (kernels/x86/draw_avx2.h), then biased for the signed comparison:
 * (~(h & rmask)) ^ 2^31. */
KI __m256i draws8(const kc2 *c, uint64_t idx)
{
	__m256i base = _mm256_set1_epi64x((long long)(c->key + (idx + 1) * GOLD));
	__m256i h = fpl__dr2_mix_hi8(_mm256_add_epi64(base, c->glo), _mm256_add_epi64(base, c->ghi), 1);

	/* ~(h & rmask) ^ 2^31 = (h & rmask) ^ 0x7fffffff */
	return _mm256_xor_si256(_mm256_and_si256(h, c->rmask), c->x7f);
}

typedef struct kb2 {
	__m256i kk, minb, reach, ones, maxb, um;
} kb2;

/* Per-lane event counts (flushed before they wrap); vec8 counts the
 * exact lanes ex of its nel elements, the others inexact lanes inex. */
typedef struct vc2 {
	__m256i inex, unf, sat, fl, ex;
	uint64_t nel;
} vc2;

KI __m256i tailv(size_t left)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int l = left >= 8 ? 8 : (int)left;

	return _mm256_cmpgt_epi32(_mm256_set1_epi32(l), idx);
}

/* q32_vec8's per-block values: fp32(D), fp32(X), fp32(s). */
typedef struct q32c {
	__m256 Df, Xf, sf;
} q32c;

/* Eight elements u of a block, rounded on x's own bits (q NULL) or on
 * the q32 quotients fp32(|x|) / fp32(D) (q32_vec8); their events into
 * vc and asat. */
KI void vec8(const kc2 *c, const kb2 *B, __m256i u, __m256i dhb, float *y, __m256i tm, int full,
	     int sp, int tb, vc2 *vc, __m256i *asat, const q32c *q)
{
	__m256i ax = _mm256_and_si256(u, c->absm);
	__m256i a = q ? _mm256_castps_si256(_mm256_div_ps(_mm256_castsi256_ps(ax), q->Df)) : ax;
	__m256i be = _mm256_srli_epi32(a, 23);
	__m256i e = _mm256_max_epi32(be, B->kk);
	__m256i e23 = _mm256_slli_epi32(e, 23);
	__m256 af = _mm256_castsi256_ps(a);
	__m256 C = _mm256_castsi256_ps(_mm256_add_epi32(e23, c->cexp));
	__m256i yb, ex, tiny, sat, lt = c->zero;

	if (!sp) {
		yb = _mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(af, C), C));
		ex = _mm256_cmpeq_epi32(yb, a);
		lt = _mm256_cmpgt_epi32(tb ? B->minb : B->reach, a);
		tiny = _mm256_andnot_si256(ex, lt);
	} else if (c->isp && _mm256_testz_si256(_mm256_cmpgt_epi32(B->minb, a),
						_mm256_cmpgt_epi32(a, c->zero))) {
		/* (formats with a wide exponent range, where such vectors are
		 * the rule: block_f32_avx512.c's fast_vec) no lane in (0,
		 * 2^(emin+k)): every quantum is 2^(be - 127 - m), the low 23 - m
		 * bits of a, so F = a << (9 + m) (sign, exponent and kept bits
		 * fall off), up iff F > ~r' (biased, signed), the result the
		 * kept bits plus one quantum where up (a carry into the exponent
		 * field is the next binade's value, as adding Q gives); exact
		 * iff no bit below the quantum; none tiny (a >= 2^(emin+k), the
		 * tininess threshold in every mode), a zero lane stays +0,
		 * exact */
		__m256i qm = _mm256_sub_epi32(c->dones1, c->one);
		__m256i up = _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_sllv_epi32(a, c->sht), c->bias), dhb);

		yb = _mm256_add_epi32(_mm256_andnot_si256(qm, a), _mm256_and_si256(up, c->dones1));
		ex = _mm256_cmpeq_epi32(_mm256_and_si256(a, qm), c->zero);
		tiny = c->zero;
	} else {
		__m256 Q = _mm256_castsi256_ps(_mm256_sub_epi32(e23, c->m23));
		__m256 t1 = _mm256_sub_ps(_mm256_add_ps(af, C), C);
		__m256 tr = _mm256_sub_ps(t1, _mm256_and_ps(_mm256_cmp_ps(t1, af, _CMP_GT_OQ), Q));
		__m256 rem = _mm256_sub_ps(af, tr);
		__m256i bp = _mm256_max_epi32(be, c->one);
		__m256i M = _mm256_or_si256(_mm256_and_si256(a, c->fracm),
					    _mm256_and_si256(_mm256_cmpgt_epi32(be, c->zero), c->impl));
		__m256i cnt = _mm256_add_epi32(_mm256_sub_epi32(bp, e), c->c9m);	/* 32 - sh */
		__m256i F = _mm256_or_si256(_mm256_sllv_epi32(M, cnt),
					    _mm256_srlv_epi32(M, _mm256_sub_epi32(c->zero, cnt)));
		__m256i up = _mm256_cmpgt_epi32(_mm256_xor_si256(F, c->bias), dhb);

		yb = _mm256_castps_si256(_mm256_add_ps(tr, _mm256_and_ps(_mm256_castsi256_ps(up), Q)));
		ex = _mm256_cmpeq_epi32(_mm256_castps_si256(rem), c->zero);
		if (tb) {
			tiny = _mm256_cmpgt_epi32(B->minb, a);
		} else {
			__m256i F2 = _mm256_xor_si256(_mm256_sllv_epi32(a, c->sht), c->bias);
			__m256i noreach = _mm256_xor_si256(_mm256_cmpgt_epi32(F2, dhb), _mm256_set1_epi32(-1));

			tiny = _mm256_or_si256(_mm256_cmpgt_epi32(B->ones, a),
					       _mm256_and_si256(_mm256_cmpgt_epi32(B->minb, a), noreach));
		}
		tiny = _mm256_andnot_si256(ex, tiny);
	}
	/* flushed: x != 0 rounded to 0 (on x's bits: inexact and 0; a q32
	 * quotient may itself be 0).  In nearest-even on x's bits, a vector
	 * without lanes below the tininess threshold (lt: reach, or 2^(emin
	 * + k) before rounding, both above every magnitude that rounds to 0,
	 * at most half the smallest quantum) has neither tiny nor flushed
	 * lanes: the rule for wide exponent ranges (isp), where the test
	 * saves more than it costs */
	if (sp || q || !c->isp || !_mm256_testz_si256(lt, lt)) {
		vc->fl = _mm256_sub_epi32(vc->fl, _mm256_andnot_si256(q ? _mm256_cmpeq_epi32(ax, c->zero) : ex,
								      _mm256_cmpeq_epi32(yb, c->zero)));
		vc->unf = _mm256_sub_epi32(vc->unf, tiny);
	}
	/* masked-off lanes of a tail: x loaded as +0, exact, not tiny, no
	 * flush, not saturated; ex is masked (its count is subtracted from
	 * the elements done, flush) */
	if (!full)
		ex = _mm256_and_si256(ex, tm);
	/* saturated lanes, branch-free (frequent under floor) */
	sat = _mm256_cmpgt_epi32(yb, B->maxb);
	yb = _mm256_min_epi32(yb, B->maxb);
	vc->sat = _mm256_sub_epi32(vc->sat, sat);
	/* the block's largest element saturated: in nearest-even, iff any
	 * lane saturated (rounding is monotone, so the lane of amax rounds
	 * at least as high as any other); in sp each lane has its own draw */
	*asat = _mm256_or_si256(*asat, sp ? _mm256_and_si256(sat, _mm256_cmpeq_epi32(ax, B->um)) : sat);
	/* inexact = not exact, or saturated: counted as the elements done
	 * less the exact unsaturated lanes */
	vc->ex = _mm256_sub_epi32(vc->ex, _mm256_andnot_si256(sat, ex));
	if (q)	/* (r X) s: r X exact, one rounding (q32_vec8) */
		yb = _mm256_castps_si256(_mm256_mul_ps(_mm256_mul_ps(_mm256_castsi256_ps(yb), q->Xf), q->sf));
	yb = _mm256_or_si256(yb, _mm256_xor_si256(u, ax));	/* x's sign */
	if (full)
		_mm256_storeu_si256((__m256i *)y, yb);
	else
		_mm256_maskstore_epi32((int *)y, tm, yb);
}

static uint64_t vsum(__m256i v)
{
	uint32_t w[8];
	uint64_t s = 0;
	int i;

	_mm256_storeu_si256((__m256i *)w, v);
	for (i = 0; i < 8; i++)
		s += w[i];
	return s;
}

static void flush(vc2 *vc, fpl__bq_acc *a)
{
	uint64_t ns = vsum(vc->sat);

	a->count[0] += vsum(vc->inex) + vc->nel - vsum(vc->ex);
	a->count[1] += vsum(vc->unf);
	a->count[2] += ns;
	a->count[5] += ns;
	a->s.saturated += ns;
	a->s.flushed += vsum(vc->fl);
	vc->inex = vc->unf = vc->sat = vc->fl = vc->ex = _mm256_setzero_si256();
	vc->nel = 0;
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* The largest magnitude bits of x[lo, hi) (NaN and inf included, as
 * unsigned binary32 bits): a maximum over the block's vectors, the tail
 * masked, then folded across the lanes. */
KI uint32_t block_umax(const kc2 *c, const float *x, size_t lo, size_t hi)
{
	__m256i mx = c->zero, m;
	size_t j;

	for (j = lo; j + 8 <= hi; j += 8)
		mx = _mm256_max_epu32(mx, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + j)),
							   c->absm));
	if (j < hi)
		mx = _mm256_max_epu32(mx, _mm256_and_si256(_mm256_maskload_epi32((const int *)(x + j),
										 tailv(hi - j)),
							   c->absm));
	m = _mm256_max_epu32(mx, _mm256_permute2x128_si256(mx, mx, 1));
	m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4e));
	m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xb1));
	return (uint32_t)_mm256_cvtsi256_si32(m);
}

/* Block [lo, hi) alone: its largest magnitude, its scale by
 * fpl__bq_kpow2, then vec8 (or fpl__bq_block_scalar where the scale
 * leaves vec8's binary32 constants); all its events. */
KI void one_block2(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t lo,
		   size_t hi, fpl__bq_acc *a, vc2 *vc, int sp, int tb)
{
	__m256i asat = c->zero;
	uint32_t um;
	int k = 0, clamped = 0, kk;
	size_t j;
	kb2 B;

	um = block_umax(c, x, lo, hi);
	a->s.blocks++;
	a->s.elements += hi - lo;
	if (um >= 0x7f800000u) {
		a->s.nan_blocks++;
		for (j = lo; j < hi; j++)
			y[j] = NAN;
		return;
	}
	if (um == 0)
		a->s.zero_blocks++;
	else
		k = fpl__bq_kpow2(p, um, &clamped);
	a->s.scale_range += (uint64_t)clamped;
	kk = p->emin + k + 127;
	if (kk < p->m + 34 || kk + 23 - p->m > 254 || (int)(um >> 23) + 23 - p->m > 254 || k > 200
	    || k < -200) {
		float amax;

		memcpy(&amax, &um, 4);
		fpl__bq_block_scalar(p, y, x, lo, hi, ldexp(1.0, k), amax, a);
		return;
	}
	{
		union { uint64_t u; double d; } t = { (uint64_t)(1023 + k) << 52 };
		double mxv = (double)p->maxe * t.d;

		B.kk = _mm256_set1_epi32(kk);
		B.minb = _mm256_set1_epi32(kk << 23);
		B.reach = _mm256_sub_epi32(B.minb, c->dreach);
		B.ones = _mm256_sub_epi32(B.minb, c->dones);
		B.maxb = _mm256_set1_epi32(mxv >= 0x1p128 ? 0x7f800000 : (int)f2u((float)mxv));
		B.um = _mm256_set1_epi32((int)um);
	}
	for (j = lo; j + 8 <= hi; j += 8)
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + j)),
		     sp ? draws8(c, c->c0 + j) : c->zero, y + j, c->zero, 1, sp, tb, vc, &asat, NULL);
	if (j < hi) {
		__m256i tm = tailv(hi - j);

		vec8(c, &B, _mm256_maskload_epi32((const int *)(x + j), tm),
		     sp ? draws8(c, c->c0 + j) : c->zero, y + j, tm, 0, sp, tb, vc, &asat, NULL);
	}
	a->s.amax_saturated += (uint64_t)!_mm256_testz_si256(asat, asat);
	vc->nel += hi - lo;
}

/* The largest magnitude bits of 8 full blocks of 32 at x, lane
 * (b >> 1) + 4 (b & 1) for block b: each block's four vectors reduced to
 * one, then a transposing tree of maxima (each level halves the partial
 * maxima per block and doubles the blocks per vector): 128-bit halves
 * (blocks 2i, 2i + 1 in the low and high half), then twice the pairs of
 * 32-bit lanes within each half (shuffle_ps 0x88 / 0xdd take the even /
 * odd lanes of A then B). */
KI __m256i umax8(const kc2 *c, const float *x)
{
	__m256i l0[8], l1[4], l2[2];
	int i;

	for (i = 0; i < 8; i++) {
		const float *b = x + 32 * i;
		__m256i m0 = _mm256_max_epu32(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)b), c->absm),
					      _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(b + 8)), c->absm));
		__m256i m1 = _mm256_max_epu32(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)(b + 16)), c->absm),
					      _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(b + 24)), c->absm));

		l0[i] = _mm256_max_epu32(m0, m1);
	}
	for (i = 0; i < 4; i++)	/* low half: block 2i, high half: block 2i + 1 */
		l1[i] = _mm256_max_epu32(_mm256_permute2x128_si256(l0[2 * i], l0[2 * i + 1], 0x20),
					 _mm256_permute2x128_si256(l0[2 * i], l0[2 * i + 1], 0x31));
	for (i = 0; i < 2; i++) {	/* low: blocks 4i, 4i, 4i+2, 4i+2; high: 4i+1, 4i+1, 4i+3, 4i+3 */
		__m256 A = _mm256_castsi256_ps(l1[2 * i]), Bv = _mm256_castsi256_ps(l1[2 * i + 1]);

		l2[i] = _mm256_max_epu32(_mm256_castps_si256(_mm256_shuffle_ps(A, Bv, 0x88)),
					 _mm256_castps_si256(_mm256_shuffle_ps(A, Bv, 0xdd)));
	}
	{	/* low: blocks 0, 2, 4, 6; high: 1, 3, 5, 7 */
		__m256 A = _mm256_castsi256_ps(l2[0]), Bv = _mm256_castsi256_ps(l2[1]);

		return _mm256_max_epu32(_mm256_castps_si256(_mm256_shuffle_ps(A, Bv, 0x88)),
					_mm256_castps_si256(_mm256_shuffle_ps(A, Bv, 0xdd)));
	}
}

/*
 * Eight full blocks of 32 at x + lo: the eight scales at once in the
 * lanes (fpl__bq_kpow2 on vectors, as block_f32_avx512.c's group16: k =
 * E - emax_e, plus one where amax's fraction bits exceed the rule's
 * threshold kthr (kc2 init: kpow2's test rewritten for a normal amax; the
 * floor rule's threshold 2^31 - 1 is never exceeded by a fraction below
 * 2^23); 0 for a zero block; clamped into [kmin, kmax]), and one_block2's
 * conditions for its binary32 constants, as integer compares (every
 * quantity a small integer or magnitude bits below 2^31, so signed
 * compares order them); maxb = max_e 2^k's bits, maxe's bits plus k in
 * the exponent field (a normal result where kk >= m + 34, min'd with
 * inf's bits, the narrowed 2^128 and above, as one_block2's binary64
 * product narrowed); then each block by vec8 with its lanes of these;
 * the blocks one_block2 would not give to vec8 (NaN or inf, subnormal
 * amax, tiny or huge scales) by one_block2.  The order of the blocks does
 * not matter: each element's result, flags and draw depend on its
 * block's scale and its own index only, and the counts are sums.
 */
KI void group8(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t lo,
	       fpl__bq_acc *a, vc2 *vc, int sp, int tb)
{
	__m256i umv = umax8(c, x + lo);
	__m256i zerom = _mm256_cmpeq_epi32(umv, c->zero);
	__m256i be = _mm256_srli_epi32(umv, 23);
	__m256i k = _mm256_sub_epi32(be, c->ebias), kcl, kk, maxb, slowm, clm;
	int32_t kkv[8], maxbv[8], umvv[8];
	vc2 lv;	/* vec8's counts, in registers */
	int b, slow, fastm, nf, nasat = 0;

	k = _mm256_sub_epi32(k, _mm256_cmpgt_epi32(_mm256_and_si256(umv, c->fracm), c->kthr));
	k = _mm256_andnot_si256(zerom, k);
	kcl = _mm256_min_epi32(_mm256_max_epi32(k, c->kminv), c->kmaxv);
	clm = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi32(k, kcl), zerom),
				  _mm256_set1_epi32(-1));	/* a zero block's scale is not clamped */
	kk = _mm256_add_epi32(kcl, c->kkoff);
	slowm = _mm256_or_si256(_mm256_cmpgt_epi32(umv, c->infb1),
				_mm256_andnot_si256(zerom, _mm256_cmpgt_epi32(c->minnorm, umv)));
	slowm = _mm256_or_si256(slowm, _mm256_or_si256(_mm256_cmpgt_epi32(c->kklo, kk),
						       _mm256_cmpgt_epi32(kk, c->kkhi)));
	slowm = _mm256_or_si256(slowm, _mm256_cmpgt_epi32(be, c->kkhi));
	maxb = _mm256_min_epu32(_mm256_add_epi32(c->maxeb, _mm256_slli_epi32(kcl, 23)),
				_mm256_add_epi32(c->infb1, c->one));
	slow = _mm256_movemask_ps(_mm256_castsi256_ps(slowm));
	fastm = ~slow & 0xff;
	nf = __builtin_popcount((unsigned)fastm);
	{
		a->s.blocks += (uint64_t)nf;
		a->s.elements += 32 * (uint64_t)nf;
		a->s.zero_blocks += (uint64_t)__builtin_popcount(
			(unsigned)(_mm256_movemask_ps(_mm256_castsi256_ps(zerom)) & fastm));
		a->s.scale_range += (uint64_t)__builtin_popcount(
			(unsigned)(_mm256_movemask_ps(_mm256_castsi256_ps(clm)) & fastm));
	}
	_mm256_storeu_si256((__m256i *)kkv, kk);
	_mm256_storeu_si256((__m256i *)maxbv, maxb);
	_mm256_storeu_si256((__m256i *)umvv, umv);
	lv.inex = lv.unf = lv.sat = lv.fl = lv.ex = c->zero;
	lv.nel = 0;
	for (b = 0; b < 8; b++) {
		size_t l = lo + 32 * (size_t)b;
		int ln = (b >> 1) + 4 * (b & 1);	/* umax8's lane of block b */
		__m256i asat = c->zero;
		kb2 B;

		/* the memory PF_AHEAD elements ahead: x to read, y's lines to own */
		_mm_prefetch((const char *)(x + l + PF_AHEAD), _MM_HINT_T0);
		_mm_prefetch((const char *)(x + l + PF_AHEAD + 16), _MM_HINT_T0);
		__builtin_prefetch(y + l + PF_AHEAD, 1, 3);
		__builtin_prefetch(y + l + PF_AHEAD + 16, 1, 3);
		if ((slow >> ln) & 1)
			continue;
		B.kk = _mm256_set1_epi32(kkv[ln]);
		B.maxb = _mm256_set1_epi32(maxbv[ln]);
		B.um = _mm256_set1_epi32(umvv[ln]);
		B.minb = _mm256_slli_epi32(B.kk, 23);
		B.reach = _mm256_sub_epi32(B.minb, c->dreach);
		B.ones = _mm256_sub_epi32(B.minb, c->dones);
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + l)),
		     sp ? draws8(c, c->c0 + l) : c->zero, y + l, c->zero, 1, sp, tb, &lv, &asat, NULL);
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + l + 8)),
		     sp ? draws8(c, c->c0 + l + 8) : c->zero, y + l + 8, c->zero, 1, sp, tb, &lv, &asat, NULL);
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + l + 16)),
		     sp ? draws8(c, c->c0 + l + 16) : c->zero, y + l + 16, c->zero, 1, sp, tb, &lv, &asat, NULL);
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + l + 24)),
		     sp ? draws8(c, c->c0 + l + 24) : c->zero, y + l + 24, c->zero, 1, sp, tb, &lv, &asat, NULL);
		nasat += !_mm256_testz_si256(asat, asat);
	}
	a->s.amax_saturated += (uint64_t)nasat;
	vc->inex = _mm256_add_epi32(vc->inex, lv.inex);
	vc->unf = _mm256_add_epi32(vc->unf, lv.unf);
	vc->sat = _mm256_add_epi32(vc->sat, lv.sat);
	vc->fl = _mm256_add_epi32(vc->fl, lv.fl);
	vc->ex = _mm256_add_epi32(vc->ex, lv.ex);
	vc->nel += 32 * (uint64_t)nf;
	for (b = 0; b < 8; b++)
		if ((slow >> ((b >> 1) + 4 * (b & 1))) & 1)
			one_block2(c, p, y, x, lo + 32 * (size_t)b, lo + 32 * (size_t)b + 32, a, vc, sp, tb);
}

/* Power-of-two rules: blocks [id0, id1), row by row; runs of eight full
 * blocks of 32 by group8, the others by one_block2. */
KI void body(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0, size_t id1,
	     fpl__bq_acc *a, int sp, int tb)
{
	size_t id = id0, row = id0 / p->nbr, br = id0 % p->nbr, since = 0;
	const size_t nfull = p->tr == 32 ? p->R / 32 : 0;	/* full blocks per row */
	vc2 vc;

	vc.inex = vc.unf = vc.sat = vc.fl = vc.ex = c->zero;
	vc.nel = 0;
	while (id < id1) {
		size_t lo = row * p->R + br * p->tr, len = p->R - br * p->tr, step;

		if (br + 8 <= nfull && id + 8 <= id1) {
			group8(c, p, y, x, lo, a, &vc, sp, tb);
			step = 8;
			len = 256;
		} else {
			len = len < p->tr ? len : p->tr;
			_mm_prefetch((const char *)(x + lo + PF_AHEAD), _MM_HINT_T0);
			_mm_prefetch((const char *)(x + lo + PF_AHEAD + 16), _MM_HINT_T0);
			__builtin_prefetch(y + lo + PF_AHEAD, 1, 3);
			__builtin_prefetch(y + lo + PF_AHEAD + 16, 1, 3);
			one_block2(c, p, y, x, lo, lo + len, a, &vc, sp, tb);
			step = 1;
		}
		id += step;
		br += step;
		if (br == p->nbr) {
			br = 0;
			row++;
		}
		since += len;
		if (since >= (1u << 30)) {
			flush(&vc, a);
			since = 0;
		}
	}
	flush(&vc, a);
}

static void run_ne(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		   size_t id1, fpl__bq_acc *a)
{
	body(c, p, y, x, id0, id1, a, 0, 0);
}

static void run_ne_tb(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		      size_t id1, fpl__bq_acc *a)
{
	body(c, p, y, x, id0, id1, a, 0, 1);
}

static void run_sp(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		   size_t id1, fpl__bq_acc *a)
{
	body(c, p, y, x, id0, id1, a, 1, 0);
}

static void run_sp_tb(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		      size_t id1, fpl__bq_acc *a)
{
	body(c, p, y, x, id0, id1, a, 1, 1);
}

/* RD(T) for a positive binary64 T in binary32's normal range, as bits,
 * less one where T is a binary32 and up is set (e2m1_block's a >= T). */
static int32_t rd_bits(double T, int up)
{
	float f = (float)T;	/* nearest-even */
	double g = (double)f;

	/* f > T > 0 normal: the binary32 below is f's bits less one
	 * (written without branches: the first test is a coin toss) */
	return (int32_t)f2u(f) - (int32_t)(g > T) - (int32_t)(g == T && up);
}

/* The amax rule's e2m1 block in nearest-even with exact quotients
 * (e2m1_block of block_f32_avx512.c, eight lanes at a time): its
 * thresholds th_i (bits of RD(t_i D), less one for a tie going up) and
 * the code K = #{i : |x| > th_i} by signed compares (magnitudes and
 * thresholds below 2^31), y = RN(v_K D) from a table (K = 8, the
 * overflow, gives v_7 D = 6 D, saturated), inexact unless |x| is
 * exactly v_K D (ebits), tiny = not |x| >= 0.875 D (before rounding: D).
 * 0 when D is outside [2^-100, 2^100] (nothing done). */
typedef struct e2c {
	uint64_t key;		/* D's bits; 0: empty (D > 0) */
	int32_t th[8], yt[8], et[8], tt, ge[8];
} e2c;

#define E2C_N 64	/* entries of the cache of e2m1_block2's constants */
#define AMAX_BATCH 16	/* run_amax2's blocks per batch */

/* e2m1_block2's constants for D (a pure function of D and tiny_before,
 * fixed for the call), from the cache or computed into it. */
static const e2c *e2m1_consts(const kc2 *c, e2c *cache, double D)
{
	static const double tv[8] = { 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7 };
	static const double vv[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
	static const double gv[8] = { 0.5, 1, 1.5, 2, 3, 4, 6, 8 };
	uint64_t key;
	e2c *e;
	int i;

	memcpy(&key, &D, 8);
	e = cache + ((key * GOLD) >> 58);
	if (e->key == key)
		return e;
	for (i = 0; i < 8; i++) {
		double v = vv[i] * D;	/* exact */
		float f = (float)v;

		e->th[i] = rd_bits(tv[i] * D, i & 1);
		e->yt[i] = (int32_t)f2u(f);
		e->et[i] = (double)f == v ? e->yt[i] : -1;
		e->ge[i] = rd_bits(gv[i] * D, 1);	/* e2m1_sp_vec8's grid */
	}
	e->tt = rd_bits(c->tb ? D : 0.875 * D, 1);
	e->key = key;
	return e;
}

/* The constants of e2m1_block2's vectors, for one D. */
typedef struct e2v {
	__m256i th[8], ytab, etab, tt;
} e2v;

/* Eight elements u of e2m1_block2's block (tm: the lanes in it, full:
 * all eight). */
KI void e2m1_vec8(const kc2 *c, const e2v *E, __m256i u, float *y, __m256i tm, int full,
		  vc2 *vc, __m256i *asat)
{
	const __m256i seven = _mm256_set1_epi32(7);
	__m256i av = _mm256_and_si256(u, c->absm), K = c->zero, Kc, yb, eb, sat, inex, tiny, fl;
	int i;

	for (i = 0; i < 8; i++)
		K = _mm256_sub_epi32(K, _mm256_cmpgt_epi32(av, E->th[i]));
	Kc = _mm256_min_epi32(K, seven);
	sat = _mm256_cmpgt_epi32(K, seven);
	yb = _mm256_permutevar8x32_epi32(E->ytab, Kc);
	eb = _mm256_or_si256(_mm256_permutevar8x32_epi32(E->etab, Kc), sat);
	inex = _mm256_cmpeq_epi32(av, eb);
	inex = full ? _mm256_xor_si256(inex, _mm256_set1_epi32(-1)) : _mm256_andnot_si256(inex, tm);
	tiny = _mm256_andnot_si256(_mm256_cmpgt_epi32(av, E->tt), inex);
	/* K = 0 and x != 0; masked-off lanes load +0 */
	fl = _mm256_andnot_si256(_mm256_cmpeq_epi32(av, c->zero), _mm256_cmpeq_epi32(K, c->zero));
	if (!full)
		sat = _mm256_and_si256(sat, tm);
	vc->inex = _mm256_sub_epi32(vc->inex, inex);
	vc->unf = _mm256_sub_epi32(vc->unf, tiny);
	vc->sat = _mm256_sub_epi32(vc->sat, sat);
	vc->fl = _mm256_sub_epi32(vc->fl, fl);
	/* the block's largest element saturated iff any lane did: K is
	 * nondecreasing in |x| (thresholds in increasing order), so the lane
	 * of amax has the largest K */
	*asat = _mm256_or_si256(*asat, sat);
	yb = _mm256_or_si256(yb, _mm256_xor_si256(u, av));	/* x's sign */
	if (full)
		_mm256_storeu_si256((__m256i *)y, yb);
	else
		_mm256_maskstore_epi32((int *)y, tm, yb);
}

static int e2m1_block2(const kc2 *c, float *y, const float *x, size_t lo, size_t hi, double D,
		       fpl__bq_acc *a, vc2 *vc, e2c *cache)
{
	const e2c *e;
	e2v E;
	__m256i asat = c->zero;
	size_t j;
	int i;

	if (!(D >= 0x1p-100 && D <= 0x1p100))
		return 0;
	e = e2m1_consts(c, cache, D);
	for (i = 0; i < 8; i++)
		E.th[i] = _mm256_set1_epi32(e->th[i]);
	E.ytab = _mm256_loadu_si256((const __m256i *)e->yt);
	E.etab = _mm256_loadu_si256((const __m256i *)e->et);
	E.tt = _mm256_set1_epi32(e->tt);
	if (hi - lo == 16) {	/* NVFP4's full blocks */
		e2m1_vec8(c, &E, _mm256_loadu_si256((const __m256i *)(x + lo)), y + lo, c->zero, 1, vc,
			  &asat);
		e2m1_vec8(c, &E, _mm256_loadu_si256((const __m256i *)(x + lo + 8)), y + lo + 8, c->zero,
			  1, vc, &asat);
	} else {
		for (j = lo; j < hi; j += 8) {
			__m256i tm = tailv(hi - j);

			if (hi - j >= 8)
				e2m1_vec8(c, &E, _mm256_loadu_si256((const __m256i *)(x + j)), y + j, tm, 1,
					  vc, &asat);
			else
				e2m1_vec8(c, &E, _mm256_maskload_epi32((const int *)(x + j), tm), y + j, tm,
					  0, vc, &asat);
		}
	}
	a->s.amax_saturated += (uint64_t)!_mm256_testz_si256(asat, asat);
	return 1;
}

/* The binary64 lanes 4h .. 4h + 3 of eight binary32 lanes v. */
KI __m256d half_pd(__m256 v, int h)
{
	return _mm256_cvtps_pd(h ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v));
}

/* Eight 32-bit masks from two vectors of four 64-bit masks (lo: lanes
 * 0..3, hi: 4..7): one 32-bit half of each, in lane order. */
KI __m256i pack_masks(__m256d lo, __m256d hi)
{
	__m256 s = _mm256_shuffle_ps(_mm256_castpd_ps(lo), _mm256_castpd_ps(hi), 0x88);

	return _mm256_permute4x64_epi64(_mm256_castps_si256(s), 0xd8);
}

/*
 * Eight elements u of an e2m1 block in sp with exact quotients by D
 * (block_f32_avx512.c's e2m1_sp_vec, eight lanes): ps_i = |x| >= g_i D
 * for the grid g = 0.5, 1, 1.5, 2, 3, 4, 6, 8 (e->ge: RD(g_i D) less one
 * where exact, as e2m1_block2's thresholds; every g_i D a normal
 * binary32 range value, D in [2^-100, 2^100]), K = #{i : ps_i}, so
 * |x| / D lies in [G0_K, G1_K), G0 = 0, 0.5, 1, 1.5, 2, 3, 4, 6 (e2m1's
 * values), G1_K = G0_K + QT_K (its quantum there).  sp rounds up iff the
 * fraction f = (|x| / D - G0_K) / QT_K and w = r' 2^-32 (r' the draw's
 * top R bits in place) have f + w >= 1 (F + r' >= 2^32 with F = floor(f
 * 2^32), r' an integer: kf_pick's argument), that is |x| - T D >= 0 with
 * T = G1_K - QT_K w (exact in binary64: QT_K a power of two, w of 32
 * bits); the fma gives the exact difference rounded once, whose sign and
 * zeroness are the exact one's (it cannot underflow to zero: every term
 * is a multiple of 2^-149 2^-100 2^-34, far above binary64's subnormals).
 * The result G0_F D, F = min(K + up, 7), is exact in binary64 (3 bits
 * times D's 28) and narrowed once to binary32 (the reference's narrowed
 * r D); saturated iff |x| >= 8 D or |x| >= 6 D and up; inexact iff |x| !=
 * G0_K D or saturated; flushed iff x != 0, K = 0 and not up; tiny after
 * rounding iff not "reach": rounded at precision m + 1 (quantum 0.25 in
 * [0.5, 1)) it stays below D, i.e. not |x| >= (1 - w / 4) D; before
 * rounding iff |x| < D.  Masked-off lanes (+0) have none of the events.
 */
KI void e2m1_sp_vec8(const kc2 *c, const e2c *e, __m256d Dv, __m256i u, __m256i dhb, __m256i umv,
		     float *y, __m256i tm, int full, vc2 *vc, __m256i *asat)
{
	const __m256 G0 = _mm256_setr_ps(0, 0.5f, 1, 1.5f, 2, 3, 4, 6);
	const __m256 G1 = _mm256_setr_ps(0.5f, 1, 1.5f, 2, 3, 4, 6, 8);
	const __m256 QT = _mm256_setr_ps(0.5f, 0.5f, 0.5f, 0.5f, 1, 1, 2, 2);
	const __m256d zero = _mm256_setzero_pd();
	__m256i av = _mm256_and_si256(u, c->absm), K = c->zero, p0 = c->zero, p1 = c->zero, p6 = c->zero,
		p7 = c->zero, up, inex, reach = c->zero, F, sat, tiny, fl;
	/* r' as a signed integer less 2^31: ~dhb (dhb = ~r' ^ 2^31) */
	__m256i rs = _mm256_xor_si256(dhb, _mm256_set1_epi32(-1));
	__m256 g1, qt, g0, ys[2];
	__m256d uh[2], ih[2], rh[2];
	int i, h;

	for (i = 0; i < 8; i++) {
		__m256i ps = _mm256_cmpgt_epi32(av, _mm256_set1_epi32(e->ge[i]));

		K = _mm256_sub_epi32(K, ps);
		if (i == 0)
			p0 = ps;
		else if (i == 1)
			p1 = ps;
		else if (i == 6)
			p6 = ps;
		else if (i == 7)
			p7 = ps;
	}
	g1 = _mm256_permutevar8x32_ps(G1, K);	/* K = 8 (saturated) reads lane 0: unused */
	qt = _mm256_permutevar8x32_ps(QT, K);
	g0 = _mm256_permutevar8x32_ps(G0, K);
	for (h = 0; h < 2; h++) {
		__m128i rq = h ? _mm256_extracti128_si256(rs, 1) : _mm256_castsi256_si128(rs);
		__m256d xd = half_pd(_mm256_castsi256_ps(av), h);
		__m256d w = _mm256_mul_pd(_mm256_add_pd(_mm256_cvtepi32_pd(rq), _mm256_set1_pd(0x1p31)),
					  _mm256_set1_pd(0x1p-32));	/* r' 2^-32, exact */
		__m256d T = _mm256_fnmadd_pd(half_pd(qt, h), w, half_pd(g1, h));

		uh[h] = _mm256_cmp_pd(_mm256_fnmadd_pd(T, Dv, xd), zero, _CMP_GE_OQ);
		ih[h] = _mm256_cmp_pd(_mm256_fnmadd_pd(half_pd(g0, h), Dv, xd), zero, _CMP_NEQ_OQ);
		if (!c->tb) {
			__m256d T2 = _mm256_fnmadd_pd(_mm256_set1_pd(0.25), w, _mm256_set1_pd(1));

			rh[h] = _mm256_cmp_pd(_mm256_fnmadd_pd(T2, Dv, xd), zero, _CMP_GE_OQ);
		}
	}
	up = pack_masks(uh[0], uh[1]);
	inex = pack_masks(ih[0], ih[1]);
	if (!c->tb)
		reach = pack_masks(rh[0], rh[1]);
	F = _mm256_min_epi32(_mm256_sub_epi32(K, up), _mm256_set1_epi32(7));
	g0 = _mm256_permutevar8x32_ps(G0, F);
	for (h = 0; h < 2; h++)
		ys[h] = _mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_mul_pd(half_pd(g0, h), Dv)));
	sat = _mm256_or_si256(p7, _mm256_and_si256(p6, up));
	inex = _mm256_or_si256(inex, sat);
	tiny = _mm256_andnot_si256(c->tb ? p1 : reach, inex);
	fl = _mm256_andnot_si256(_mm256_or_si256(p0, up), _mm256_xor_si256(_mm256_cmpeq_epi32(av, c->zero),
									   _mm256_set1_epi32(-1)));
	vc->inex = _mm256_sub_epi32(vc->inex, inex);
	vc->unf = _mm256_sub_epi32(vc->unf, tiny);
	vc->sat = _mm256_sub_epi32(vc->sat, sat);
	vc->fl = _mm256_sub_epi32(vc->fl, fl);
	*asat = _mm256_or_si256(*asat, _mm256_and_si256(sat, _mm256_cmpeq_epi32(av, umv)));
	{
		__m256 yv = _mm256_insertf128_ps(ys[0], _mm256_castps256_ps128(ys[1]), 1);
		__m256i yb = _mm256_or_si256(_mm256_castps_si256(yv), _mm256_xor_si256(u, av));

		if (full)
			_mm256_storeu_si256((__m256i *)y, yb);
		else
			_mm256_maskstore_epi32((int *)y, tm, yb);
	}
}

/* An e2m1 block in sp with exact quotients by D by e2m1_sp_vec8 (0 when D
 * is outside [2^-100, 2^100]: nothing done). */
static int e2m1_sp_block2(const kc2 *c, float *y, const float *x, size_t lo, size_t hi, double D,
			  uint32_t um, fpl__bq_acc *a, vc2 *vc, e2c *cache)
{
	const e2c *e;
	__m256i asat = c->zero, umv = _mm256_set1_epi32((int)um);
	__m256d Dv = _mm256_set1_pd(D);
	size_t j;

	if (!(D >= 0x1p-100 && D <= 0x1p100))
		return 0;
	e = e2m1_consts(c, cache, D);
	for (j = lo; j < hi; j += 8) {
		__m256i tm = tailv(hi - j);

		if (hi - j >= 8)
			e2m1_sp_vec8(c, e, Dv, _mm256_loadu_si256((const __m256i *)(x + j)),
				     draws8(c, c->c0 + j), umv, y + j, tm, 1, vc, &asat);
		else
			e2m1_sp_vec8(c, e, Dv, _mm256_maskload_epi32((const int *)(x + j), tm),
				     draws8(c, c->c0 + j), umv, y + j, tm, 0, vc, &asat);
	}
	a->s.amax_saturated += (uint64_t)!_mm256_testz_si256(asat, asat);
	return 1;
}

/*
 * A block of the amax rule with q32 quotients (block_f32_avx512.c's
 * q32_vec, eight lanes): q = fp32(|x|) / fp32(D), the reference's
 * binary32 division (nearest-even, MXCSR's default for the call),
 * rounded by vec8 on q's bits with scale 1 (B0: kk = emin + 127), then y
 * = (r X) s in binary32.  Taken only where that is exact and vec8's
 * constants hold: fp32(D) normal and |x| <= fp32(D) 2^100 (every q below
 * 2^101, vec8's magic constants finite; a q32 quotient may be
 * subnormal or 0, which vec8 rounds as any x), B0 usable (kb_ok), and r
 * X in binary32's normal range for every element r != 0 (X 2^(emin - m)
 * >= 2^-126, X max_e < 2^127): r X has at most 4 + 11 bits, so it is
 * exact, and the one rounding of (r X) s is that of the exact r X s = r
 * D (X s exact in binary64: 11 + 24 bits), the reference's narrowed
 * binary64 r D.  flushed: x != 0 with r = 0 (vec8).  0 where it does not
 * apply (nothing done).
 */
static int q32_block2(const kc2 *c, const fpl__bq *p, const kb2 *B0, float *y, const float *x,
		      size_t lo, size_t hi, double X, float amax, uint32_t um, fpl__bq_acc *a,
		      vc2 *vc)
{
	const float Df = (float)(X * p->s);
	__m256i asat = c->zero;
	q32c q;
	kb2 B;
	size_t j;

	if (!(Df >= 0x1p-126f) || amax > Df * 0x1p100f || !(X * ldexp(1.0, p->emin - p->m) >= 0x1p-126)
	    || !(X * p->maxe < 0x1p127))
		return 0;
	B = *B0;
	B.um = _mm256_set1_epi32((int)um);
	q.Df = _mm256_set1_ps(Df);
	q.Xf = _mm256_set1_ps((float)X);
	q.sf = _mm256_set1_ps((float)p->s);
	for (j = lo; j + 8 <= hi; j += 8)
		vec8(c, &B, _mm256_loadu_si256((const __m256i *)(x + j)),
		     c->sp ? draws8(c, c->c0 + j) : c->zero, y + j, c->zero, 1, c->sp, c->tb, vc, &asat, &q);
	if (j < hi) {
		__m256i tm = tailv(hi - j);

		vec8(c, &B, _mm256_maskload_epi32((const int *)(x + j), tm),
		     c->sp ? draws8(c, c->c0 + j) : c->zero, y + j, tm, 0, c->sp, c->tb, vc, &asat, &q);
	}
	a->s.amax_saturated += (uint64_t)!_mm256_testz_si256(asat, asat);
	vc->nel += hi - lo;
	return 1;
}

/* The amax rule: each block's largest magnitude as in body, its scale by
 * fpl__bq_amax_scale; e2m1 elements in nearest-even with exact
 * quotients by e2m1_block2, every other block by fpl__bq_block_scalar
 * (the reference's own calls). */
static void run_amax2(const kc2 *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		      size_t id1, fpl__bq_acc *a)
{
	const int e2m1 = !p->sp && !p->q32 && p->m == 1 && p->emin == 0 && p->emax == 2
			 && p->maxe == 6.0f;
	const int e2m1s = p->sp && !p->q32 && p->m == 1 && p->emin == 0 && p->emax == 2
			  && p->maxe == 6.0f;
	/* q32_block2's scale-1 constants (one_block2's for k = 0), usable
	 * where their conditions hold and s is of ordinary size */
	const int kk0 = p->emin + 127;
	const int q32 = p->q32 && kk0 >= p->m + 34 && kk0 + 23 - p->m <= 254 && p->s >= 0x1p-60
			&& p->s <= 0x1p60;
	kb2 B0;
	size_t id, nb, row = id0 / p->nbr, br = id0 % p->nbr, since = 0;
	e2c cache[E2C_N];
	vc2 vc;

	memset(cache, 0, sizeof cache);
	B0.kk = _mm256_set1_epi32(kk0);
	B0.minb = _mm256_set1_epi32(kk0 << 23);
	B0.reach = _mm256_sub_epi32(B0.minb, c->dreach);
	B0.ones = _mm256_sub_epi32(B0.minb, c->dones);
	B0.maxb = _mm256_set1_epi32((int)f2u(p->maxe));
	B0.um = c->zero;
	vc.inex = vc.unf = vc.sat = vc.fl = vc.ex = c->zero;
	vc.nel = 0;
	for (id = id0; id < id1; id += nb) {
		size_t blo[AMAX_BATCH], bhi[AMAX_BATCH], ib, done = 0;
		uint32_t bum[AMAX_BATCH];
		double bX[AMAX_BATCH];

		/* the batch's scales first (independent chains of the division
		 * and rounding, which overlap), then its elements */
		nb = id1 - id < AMAX_BATCH ? id1 - id : AMAX_BATCH;
		for (ib = 0; ib < nb; ib++) {
			size_t lo = row * p->R + br * p->tr, len = p->R - br * p->tr, hi, j;
			uint32_t um;
			int clamped = 0;
			double X = 1;
			float amax;

			len = len < p->tr ? len : p->tr;
			hi = lo + len;
			if (++br == p->nbr) {
				br = 0;
				row++;
			}
			_mm_prefetch((const char *)(x + lo + PF_AHEAD), _MM_HINT_T0);
			__builtin_prefetch(y + lo + PF_AHEAD, 1, 3);
			bum[ib] = um = block_umax(c, x, lo, hi);
			blo[ib] = lo;
			bhi[ib] = hi;
			done += len;
			a->s.blocks++;
			a->s.elements += len;
			if (um >= 0x7f800000u) {
				a->s.nan_blocks++;
				for (j = lo; j < hi; j++)
					y[j] = NAN;
				continue;
			}
			memcpy(&amax, &um, 4);
			if (um == 0)
				a->s.zero_blocks++;
			else
				X = fpl__bq_amax_scale(p, amax, &clamped);
			a->s.scale_range += (uint64_t)clamped;
			bX[ib] = X;
		}
		for (ib = 0; ib < nb; ib++) {
			size_t lo = blo[ib], hi = bhi[ib];
			uint32_t um = bum[ib];
			double X = bX[ib];
			float amax;

			if (um >= 0x7f800000u)
				continue;
			memcpy(&amax, &um, 4);
			if (!(e2m1 && e2m1_block2(c, y, x, lo, hi, X * p->s, a, &vc, cache))
			    && !(e2m1s && e2m1_sp_block2(c, y, x, lo, hi, X * p->s, um, a, &vc, cache))
			    && !(q32 && q32_block2(c, p, &B0, y, x, lo, hi, X, amax, um, a, &vc)))
				fpl__bq_block_scalar(p, y, x, lo, hi, X, amax, a);
		}
		since += done;
		if (since >= (1u << 30)) {
			flush(&vc, a);
			since = 0;
		}
	}
	flush(&vc, a);
}

void fpl__bq_avx2(const fpl__bq *p, float *y, const float *x, size_t id0, size_t id1,
		  fpl__bq_acc *a)
{
	const unsigned csr = _mm_getcsr();
	kc2 c;

	_mm_setcsr(0x1f80);
	c.absm = _mm256_set1_epi32(0x7fffffff);
	c.sgn = _mm256_set1_epi32((int)0x80000000u);
	c.fracm = _mm256_set1_epi32(0x7fffff);
	c.impl = _mm256_set1_epi32(0x800000);
	c.one = _mm256_set1_epi32(1);
	c.zero = _mm256_setzero_si256();
	c.cexp = _mm256_set1_epi32((23 - p->m) << 23);
	c.fexp = _mm256_set1_epi32((int)((127u + 127u + (unsigned)p->m + 32u) << 23));
	c.m23 = _mm256_set1_epi32(p->m << 23);
	c.dreach = _mm256_set1_epi32(1 << (22 - p->m));
	c.dones = _mm256_set1_epi32(1 << (23 - p->m));
	c.rmask = _mm256_set1_epi32((int)p->rmask);
	c.bias = _mm256_set1_epi32((int)0x80000000u);
	c.x7f = _mm256_set1_epi32(0x7fffffff);
	c.c9m = _mm256_set1_epi32(9 + p->m);
	c.sht = _mm256_set1_epi32(9 + p->m);
	c.infb1 = _mm256_set1_epi32(0x7f800000 - 1);
	c.minnorm = _mm256_set1_epi32(0x800000);
	c.ebias = _mm256_set1_epi32(127 + p->emax);
	c.kthr = _mm256_set1_epi32(
		p->rule == FPL_BRULE_CEIL    ? (int)(0x800000u - (1u << (23 - p->m)))
		: p->rule == FPL_BRULE_EVEN  ? (int)(0x800000u - (1u << (22 - p->m)) - 1)
		: p->rule == FPL_BRULE_RCEIL ? (int)(p->smax & 0x7fffffu)
					     : 0x7fffffff);
	c.kminv = _mm256_set1_epi32(p->kmin);
	c.kmaxv = _mm256_set1_epi32(p->kmax);
	c.kkoff = _mm256_set1_epi32(p->emin + 127);
	c.kklo = _mm256_set1_epi32(p->m + 34);
	c.kkhi = _mm256_set1_epi32(254 - 23 + p->m);
	c.maxeb = _mm256_set1_epi32((int)f2u(p->maxe));
	c.glo = _mm256_setr_epi64x(0, (long long)GOLD, (long long)(4 * GOLD), (long long)(5 * GOLD));
	c.ghi = _mm256_setr_epi64x((long long)(2 * GOLD), (long long)(3 * GOLD), (long long)(6 * GOLD),
				   (long long)(7 * GOLD));
	c.dones1 = _mm256_set1_epi32(1 << (23 - p->m));
	/* vec8's integer sp steps: worth their test only where lanes below
	 * the element's smallest normal are rare (e4m3, e5m2 under N(0, 1)
	 * data), as block_f32_avx512.c's isp */
	c.isp = p->emax - p->emin >= 8;
	c.sp = p->sp;
	c.tb = p->tiny_before;
	c.m = p->m;
	c.key = p->key;
	c.c0 = p->c0;
	if (p->amax) {
		run_amax2(&c, p, y, x, id0, id1, a);
	} else if (c.sp) {
		(c.tb ? run_sp_tb : run_sp)(&c, p, y, x, id0, id1, a);
	} else {
		(c.tb ? run_ne_tb : run_ne)(&c, p, y, x, id0, id1, a);
	}
	_mm_setcsr(csr);
}

uint32_t fpl__bq_finite_umax_avx2(const float *x, size_t n)
{
	const __m256i absm = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
	__m256i m0 = _mm256_setzero_si256(), m1 = m0, m;
	size_t j = 0;

	/* finite magnitudes compare signed (below 2^31); a lane at or
	 * above inf's bits is replaced by 0 before the maximum */
	for (; j + 16 <= n; j += 16) {
		__m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + j)), absm);
		__m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + j + 8)), absm);

		_mm_prefetch((const char *)(x + j + 2048), _MM_HINT_T0);
		m0 = _mm256_max_epi32(m0, _mm256_andnot_si256(_mm256_cmpgt_epi32(a, _mm256_sub_epi32(inf, _mm256_set1_epi32(1))), a));
		m1 = _mm256_max_epi32(m1, _mm256_andnot_si256(_mm256_cmpgt_epi32(b, _mm256_sub_epi32(inf, _mm256_set1_epi32(1))), b));
	}
	m = _mm256_max_epi32(m0, m1);
	m = _mm256_max_epi32(m, _mm256_permute2x128_si256(m, m, 1));
	m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0x4e));
	m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0xb1));
	{
		uint32_t um = (uint32_t)_mm256_cvtsi256_si32(m);

		for (; j < n; j++) {
			uint32_t u = f2u(x[j]) & 0x7fffffffu;

			um = u < 0x7f800000u && u > um ? u : um;
		}
		return um;
	}
}
