/* SPDX-License-Identifier: MIT */
/*
 * classify_avx512.c - hist_classify_f32 with AVX-512 (F, BW, DQ, VL): the
 * per-element classification of binary32 data (classify.c) sixteen lanes
 * at a time, classes, extremes and errors in one pass per element; and
 * hist_add_f32_avx512, fpl_hist_add_f32's whole fast path with it.  There,
 * for the modes ne, tz, tp, tn (hist_cast_setup), the cast itself is done in the lanes (cast16) in the same
 * pass that classifies, one read of x from memory and nothing written but
 * the exponent bytes of a block (2 KiB, in L1); otherwise x is scaled and
 * cast by fpl_round_array_f32 in chunks of FCH into h->yf and classified
 * while in L2.  Either way the exponent tables and accumulators are kept
 * over the whole call and added to h once.  Selected at run time by
 * hist.c where the kernel set in use is "avx512" (so the CPU has
 * F/DQ/BW/VL and FMA; FPLAB_KERNELS=avx2 gives the AVX2 loop, ref the
 * portable one); only this file is compiled with the AVX-512 flags.
 *
 * Invariant: every per-element value equals the portable loop's, so the
 * counts, bins, extremes and maxima are bit-identical to hist_classify_f32's:
 *  - the classes are the same integer comparisons of |v| and |y| bits
 *    (unsigned compares of values < 2^31, as the portable loop's signed
 *    ones), each counted by a masked add into its own byte of a 32-bit
 *    lane (at most BLK / 16 = 128 per lane and block: no carry between
 *    the bytes), the bytes summed apart per block (the fast pass below
 *    counts its two masks by popcnt instead, on the integer ports);
 *  - a block is first done by the fast pass (one16f), which assumes no v
 *    is NaN or infinite and then drops the masks and counts that only
 *    such lanes can change (its comment); the maximum of the |v| bits
 *    tells afterwards whether the assumption held, and a block where it
 *    did not is done again from scratch by the full pass (one16), so
 *    every block's figures are one16's;
 *  - the biased exponents of |v| (bits >> 23) are packed to bytes, a block
 *    at a time; every finite nonzero v has its exponent between those of
 *    the block's least and greatest |v| (the extremes, exact), bins lo..hi.
 *    Below NARROW bins each bin is counted by compares of all the block's
 *    bytes with it (popcnt of each compare's 64-lane mask); up to 64 bins
 *    (the usual case: the values of a tensor span a few tens of binades)
 *    by a bit-sliced positional population count (count_csa: each byte
 *    one bit of a 32- or 64-bit word, words added by carry-save adders);
 *    wider, each byte by a scalar increment into one of four tables.
 *    Either way every byte is counted once in its own bin, and no scatter
 *    (no lane conflict) is involved; bins 0 and 255 are a byte counter
 *    per lane (at most BLK / GRP = 32 vectors a block: no overflow);
 *  - zeros and NaN/inf inputs are bins 0 and 255: bin 0 less the binary32
 *    subnormal v (counted one by one, only in a block whose least |v| is
 *    one) less the +0 lanes of a short last group (masked loads read +0)
 *    is the zero count; +0 lanes are in no class, no extreme and add +0 to
 *    every sum;
 *  - the relative error is the same IEEE binary32 division d / |v|
 *    (vdivps rounds like divss; lanes that do not count are zeroed by the
 *    mask), |y - v| the same binary32 subtraction (as ||y| - |v||: y has
 *    v's sign or is zero); maxima over +0 and finite values are exact in
 *    any order (vmaxps with the accumulator second, so a NaN lane,
 *    impossible here, would be ignored as there);
 *  - the engine's casts (fpl_round_array_f32) run on h's state in storage
 *    order, so element j takes draw j as in hist.c's other paths, and
 *    the scaling by 2^k is a binary32 multiply, which rounds like the
 *    portable path's x * s (the same operation).
 *
 * The cast in the lanes (cast16) gives y and the events bit for bit as
 * fpl_round_array_f32 (whose contract is the scalar fpl_round's), under
 * hist_cast_setup's conditions: mode ne, tz, tp or tn; m <= 22, emin >=
 * -126 and emax <= 127 (every value of the format and its least quantum
 * are binary32 numbers); no bit flips.  Tiny v (below 2^emin, not 0) are
 * cast in the lanes only with gradual underflow, no DAZ, and tininess
 * before rounding or emin >= -125; for the other formats (bf16 and tf32
 * by default, FTZ, DAZ) a block with a tiny v goes to the engine, like
 * one with a NaN (below): for the rest nothing differs, as a v >= 2^emin
 * rounds to at least 2^emin (never tiny, never flushed) and DAZ reads
 * only tiny operands.  For a finite v with x = |v| (its bits, which order
 * like the values):
 *  - rn, x rounded to p = m + 1 bits with an unbounded exponent, is an
 *    integer operation on the bits (as in the array kernels,
 *    kernels/x86/round_direct.c): with s = 23 - m bits to discard, ne adds
 *    2^(s-1) - 1 plus the kept lsb (the implicit bit when s = 23) and
 *    clears them, tz clears them, tp and tn add 2^s - 1 first in the
 *    lanes whose magnitude rounds up (tp: v > 0, tn: v < 0); a carry
 *    moves into the next binade, which is right.  A NaN or infinite v
 *    gives garbage: its block is cast by the engine instead (below).
 *  - Overflow iff rn > max.  What an overflow gives (round_pack.c's
 *    overflow(): +-inf, NaN, +-max saturating or toward zero) and the
 *    events it raises depend only on the mode and the sign, so both are
 *    taken once from the scalar engine (fpl_round of +-2 max, which
 *    overflows in every mode): |y| = |ovp| or |ovn| and the events
 *    dpos/dneg per overflowing lane.
 *  - 2^emin <= x, no overflow: y = rn, inexact iff rn != x, not tiny.
 *  - 0 < x < 2^emin (tiny): the quantum is Q = 2^(emin-m), C = 2^23 Q a
 *    binary32 normal; x + C lies in [C, 2C], where binary32's spacing is
 *    exactly Q, so one addition with embedded rounding (to nearest even,
 *    toward zero, or toward +inf in the lanes whose magnitude rounds up)
 *    rounds x / Q to an integer K as the mode does, and (x + C) - C = K Q
 *    is exact (Sterbenz): y = K Q <= 2^emin, a value of the format.
 *    Inexact iff K Q != x; underflow iff inexact and tiny, where tiny is x
 *    < 2^emin before rounding, and rn < 2^emin after rounding (rn is the
 *    rounding to p bits with an unbounded exponent when x is a binary32
 *    normal; below 2^(emin-1) it cannot reach 2^emin, and emin >= -125
 *    makes every x from 2^(emin-1) a binary32 normal).
 *  - x = 0: y = x, exact (fnuz's +0 for -0 is a sign, which the
 *    classification never reads).
 * No other event can be raised by a finite v (invalid and division by
 * zero need a NaN or infinite operand; saturation comes only with an
 * overflow; flushing only with FTZ formats, excluded).  The events are
 * added to h's state at the end (st->count and the sticky flags, as the
 * engine does), st->counter moves by n (the modes draw nothing).  A block
 * with a NaN or infinite v (the fast pass's check), or a tiny one the
 * lanes do not cast (the block's least nonzero |v|), is cast by
 * fpl_round_array_f32 from its first element's draw and classified by
 * block(); if that call fails, h's state is restored and nothing is added.
 * The call runs with the default MXCSR (no FTZ/DAZ: the sums and the
 * tiny-lane subtraction need it), restored at the end.
 *
 * Only the four sums differ, within the bounds tests/thist.c states: the
 * relative error and its square are summed in binary32 per block of 2048
 * (per lane, 128 terms, then across the lanes by halves): any summation
 * order errs by at most (127 + 4) * 2^-24 < 2^-16 of their sum, the
 * portable loop's (per block of 1024) by 1023 * 2^-24 < 2^-14.  The full
 * pass adds r * r rounded, as there; the fast pass adds the exact square
 * (one FMA), which moves each term by at most 2^-24 of itself, so the two
 * loops still differ by less than 2^-14 + 2^-16 + 2^-24 < 2^-13 of the
 * sum; the absolute error is summed in binary64 per lane (d * d is exact
 * in binary64, so an FMA adding it rounds like the portable loop's add of
 * the square; the fast pass keeps the low and high eight lanes in two
 * accumulators each, the full pass adds lo * lo + hi * hi, one rounding
 * of a sum of two exact squares: other summation orders of the same
 * terms), at most n * 2^-53 relative on each side.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include <fplab/array.h>

#include "hist/hist_internal.h"

#define BLK 2048	/* elements per block: binary32 partial sums */
#define GRP 64		/* elements per group: four vectors */
#define NARROW 16	/* bins counted by compares below this range */
#define FCH 16384	/* elements cast per fpl_round_array_f32 call (fused path) */
_Static_assert(FCH <= HIST_F32_CHUNK, "h->xf and h->yf hold FCH values");

typedef struct acc16 {
	__m512i k;			/* class counts of each lane, a byte each
					 * (at most 64 a block): y == 0, y < min
					 * normal, y not finite (finite nonzero v);
					 * v NaN/inf or y not finite (no absolute
					 * error) */
	__m512i mx, mi;			/* max / min |v| bits, finite nonzero v */
	__m512 rs, rq, rmx, dmx;	/* relative error sum, squares, max; abs max */
	__m512d ds, dq, ds2, dq2;	/* absolute error sum, squares (ds2, dq2:
					 * the high halves, fast blocks) */
	uint32_t nun, nlt;		/* fast blocks: the y == 0 and y < min
					 * normal counts (popcnt of the masks) */
	__m512i fl;			/* the cast in the lanes (cast16): inexact,
					 * underflow, overflow of v > 0 and of v <
					 * 0, a byte each per lane */
} acc16;

typedef struct vconst {
	__m512i absm, fmax, mn, one, b1, b2, b3, b23;	/* b1..b3: 1 << 8, 16, 24;
							 * b23 = b2 + b3 */
} vconst;

/* One vector: classes, extremes, errors; returns the biased exponents of
 * |v|. */
static inline __attribute__((always_inline)) __m512i one16(acc16 *a, const vconst *c,
							   __m512 fv, __m512 fy)
{
	__m512i ux = _mm512_and_si512(_mm512_castps_si512(fv), c->absm);
	__m512i uy = _mm512_and_si512(_mm512_castps_si512(fy), c->absm);
	/* finite nonzero v: 1 <= |v| bits <= fmax */
	__mmask16 fin = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ux, c->one), c->fmax);
	__mmask16 ni = _mm512_cmpgt_epu32_mask(ux, c->fmax);
	__mmask16 yinf = _mm512_cmpgt_epu32_mask(uy, c->fmax);
	__mmask16 un = _mm512_mask_cmpeq_epi32_mask(fin, uy, _mm512_setzero_si512());
	__mmask16 lt = _mm512_mask_cmplt_epu32_mask(fin, uy, c->mn);
	__mmask16 bad = _kor_mask16(ni, yinf);
	__mmask16 ok = _kandn_mask16(yinf, fin);
	a->k = _mm512_mask_add_epi32(a->k, un, a->k, c->one);
	a->k = _mm512_mask_add_epi32(a->k, lt, a->k, c->b1);
	a->k = _mm512_mask_add_epi32(a->k, _kand_mask16(fin, yinf), a->k, c->b2);
	a->k = _mm512_mask_add_epi32(a->k, bad, a->k, c->b3);
	a->mx = _mm512_mask_max_epu32(a->mx, fin, a->mx, ux);
	a->mi = _mm512_mask_min_epu32(a->mi, fin, a->mi, ux);
	__m512 d = _mm512_castsi512_ps(
		_mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(fy, fv)), c->absm));
	__m512 r = _mm512_maskz_div_ps(ok, d, _mm512_castsi512_ps(ux));
	a->rs = _mm512_add_ps(a->rs, r);
	a->rq = _mm512_add_ps(a->rq, _mm512_mul_ps(r, r));
	a->rmx = _mm512_max_ps(r, a->rmx);
	d = _mm512_mask_mov_ps(d, bad, _mm512_setzero_ps());	/* 0 where bad */
	a->dmx = _mm512_max_ps(d, a->dmx);
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
	__m512d hi = _mm512_cvtps_pd(
		_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
	a->ds = _mm512_add_pd(a->ds, _mm512_add_pd(lo, hi));
	a->dq = _mm512_add_pd(a->dq, _mm512_fmadd_pd(hi, hi, _mm512_mul_pd(lo, lo)));
	return _mm512_srli_epi32(ux, 23);
}

/* one16 for a fast block: one where no v is NaN or infinite (block()
 * checks it afterwards with mx, and does a block that is not fast again
 * with one16).  There fin is |v| != 0 and one16's ni is empty, so bad =
 * yinf (a non-finite y comes only from a finite nonzero v: the cast of
 * +-0 is +-0), the overflow and the no-absolute-error counts are both
 * popcnt(yinf), ok = fin less yinf; its masked max of |v| is the plain
 * max (the other lanes are zeros); d is zeroed where yinf as there.  So
 * every count, extreme and maximum is one16's; the absolute error's halves go to two accumulators each (the
 * same terms, summed in another order; d * d is exact in binary64, so
 * the FMA adds the exact square with one rounding, as one16's; the
 * relative error's square is added exactly by an FMA too, within the
 * bound stated at the top). */
static inline __attribute__((always_inline)) __m512i one16f(acc16 *a, const vconst *c,
							    __m512 fv, __m512 fy)
{
	__m512i ux = _mm512_and_si512(_mm512_castps_si512(fv), c->absm);
	__m512i uy = _mm512_and_si512(_mm512_castps_si512(fy), c->absm);
	__mmask16 fin = _mm512_test_epi32_mask(ux, ux);
	__mmask16 yfin = _mm512_cmple_epu32_mask(uy, c->fmax);
	__mmask16 un = _mm512_mask_testn_epi32_mask(fin, uy, uy);
	__mmask16 lt = _mm512_mask_cmplt_epu32_mask(fin, uy, c->mn);
	a->nun += (uint32_t)__builtin_popcount(un);
	a->nlt += (uint32_t)__builtin_popcount(lt);
	a->k = _mm512_mask_add_epi32(a->k, yfin, a->k, c->b23);
	a->mx = _mm512_max_epu32(a->mx, ux);
	a->mi = _mm512_mask_min_epu32(a->mi, fin, a->mi, ux);
	__m512 d = _mm512_castsi512_ps(
		_mm512_maskz_and_epi32(yfin, _mm512_castps_si512(_mm512_sub_ps(fy, fv)), c->absm));
	__m512 r = _mm512_maskz_div_ps(fin, d, _mm512_castsi512_ps(ux));
	a->rs = _mm512_add_ps(a->rs, r);
	a->rq = _mm512_fmadd_ps(r, r, a->rq);
	a->rmx = _mm512_max_ps(r, a->rmx);
	a->dmx = _mm512_max_ps(d, a->dmx);
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
	__m512d hi = _mm512_cvtps_pd(
		_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
	a->ds = _mm512_add_pd(a->ds, lo);
	a->ds2 = _mm512_add_pd(a->ds2, hi);
	a->dq = _mm512_fmadd_pd(lo, lo, a->dq);
	a->dq2 = _mm512_fmadd_pd(hi, hi, a->dq2);
	return _mm512_srli_epi32(ux, 23);
}

#define ONE16(fast, a, c, fv, fy) ((fast) ? one16f(a, c, fv, fy) : one16(a, c, fv, fy))

/* Four vectors; the 64 exponent bytes to eb (the packs interleave lanes:
 * irrelevant to a histogram). */
static inline __attribute__((always_inline)) void one64(acc16 *a, const vconst *c,
							const __m512 fv[4], const __m512 fy[4],
							uint8_t *eb, int fast)
{
	__m512i e0 = ONE16(fast, a, c, fv[0], fy[0]);
	__m512i e1 = ONE16(fast, a, c, fv[1], fy[1]);
	__m512i p01 = _mm512_packus_epi32(e0, e1);
	__m512i e2 = ONE16(fast, a, c, fv[2], fy[2]);
	__m512i e3 = ONE16(fast, a, c, fv[3], fy[3]);
	__m512i p23 = _mm512_packus_epi32(e2, e3);
	_mm512_storeu_si512((void *)eb, _mm512_packus_epi16(p01, p23));
}

/* one64 on a whole group at v, y: each vector loaded where it is used
 * (fewer live registers than loading the group first). */
static inline __attribute__((always_inline)) void one64_at(acc16 *a, const vconst *c,
							   const float *v, const float *y,
							   uint8_t *eb, int fast)
{
	__m512i e0 = ONE16(fast, a, c, _mm512_loadu_ps(v), _mm512_loadu_ps(y));
	__m512i e1 = ONE16(fast, a, c, _mm512_loadu_ps(v + 16), _mm512_loadu_ps(y + 16));
	__m512i p01 = _mm512_packus_epi32(e0, e1);
	__m512i e2 = ONE16(fast, a, c, _mm512_loadu_ps(v + 32), _mm512_loadu_ps(y + 32));
	__m512i e3 = ONE16(fast, a, c, _mm512_loadu_ps(v + 48), _mm512_loadu_ps(y + 48));
	__m512i p23 = _mm512_packus_epi32(e2, e3);
	_mm512_storeu_si512((void *)eb, _mm512_packus_epi16(p01, p23));
}

/* Count GRP exponent bytes into the four tables. */
static inline void count_bytes(uint64_t (*t)[256], const uint8_t *eb)
{
	for (int j = 0; j < GRP; j += 4) {
		t[0][eb[j]]++;
		t[1][eb[j + 1]]++;
		t[2][eb[j + 2]]++;
		t[3][eb[j + 3]]++;
	}
}

/* The count of bin b among the ng * GRP exponent bytes in ev, by
 * compares: each compare's 64-bit mask counted by popcnt, which runs on
 * the integer ports beside the vector work (two sums: shorter chains). */
static inline __attribute__((always_inline)) uint64_t count_pc(const __m512i *ev, size_t ng,
							       int b)
{
	const __m512i bb = _mm512_set1_epi8((char)b);
	uint64_t c0 = 0, c1 = 0;
	size_t j = 0;
	for (; j + 2 <= ng; j += 2) {
		c0 += (uint64_t)__builtin_popcountll(_mm512_cmpeq_epi8_mask(ev[j], bb));
		c1 += (uint64_t)__builtin_popcountll(_mm512_cmpeq_epi8_mask(ev[j + 1], bb));
	}
	if (j < ng)
		c0 += (uint64_t)__builtin_popcountll(_mm512_cmpeq_epi8_mask(ev[j], bb));
	return c0 + c1;
}

/* One bin alone: a byte per lane counts the equal bytes of the ng <=
 * BLK / GRP = 32 vectors (no overflow), summed by vpsadbw. */
static uint64_t count_one(const uint8_t *eb, size_t ng, int b)
{
	const __m512i one = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
	__m512i bb = _mm512_set1_epi8((char)b), acc = zero;
	for (size_t j = 0; j < ng; j++) {
		__m512i e = _mm512_load_si512((const void *)(eb + GRP * j));
		acc = _mm512_mask_add_epi8(acc, _mm512_cmpeq_epi8_mask(e, bb), acc, one);
	}
	return (uint64_t)_mm512_reduce_add_epi64(_mm512_sad_epu8(acc, zero));
}

/* Bins lo..hi of the ng exponent byte vectors at eb into t by compares
 * (the vectors loaded once; a whole block with a constant trip count). */
static void count_window(uint64_t *t, const uint8_t *eb, size_t ng, int lo, int hi)
{
	__m512i ev[BLK / GRP];
	for (size_t j = 0; j < ng; j++)
		ev[j] = _mm512_load_si512((const void *)(eb + GRP * j));
	if (ng == BLK / GRP)
		for (int b = lo; b <= hi; b++)
			t[b] += count_pc(ev, BLK / GRP, b);
	else
		for (int b = lo; b <= hi; b++)
			t[b] += count_pc(ev, ng, b);
}

/*
 * Bins lo..hi (hi - lo < 64) of the ng exponent byte vectors at eb into
 * t, by a positional population count (Harley-Seal's carry-save adders,
 * bit-sliced): each byte b becomes the word 1 << (b - lo), 64-bit (eight
 * to a vector) or, when hi - lo < 32, 32-bit (sixteen to a vector);
 * vpsllv gives 0 for a count of 64 (32) or more, so bytes outside the
 * window add nothing: the caller makes sure there are none but 0 and
 * 255, which are outside it when lo <= 191.  Bit j of lane l of the
 * planes P0..P8 is bit k of a binary counter, so that the count of bin lo
 * + j among the elements of lane l is sum_k 2^k Pk[l].j: a carry-save
 * adder (a ^ b ^ c, majority(a, b, c): two ternary ops) adds three
 * one-bit inputs into a sum and a carry bit of double weight without
 * losing anything; fifteen of them fold sixteen words into P0..P3 and a
 * sixteens word, which ripples into P4..P8 (csa_add16); a short block's
 * last words ripple in one by one.  The count of a lane and bin is at
 * most the words per lane, BLK / 8 = 256 < 2^NPL: no carry leaves P8.  At
 * the end the planes are read out, a 64-bit word at a time as a byte mask
 * of 64 bins (32-bit lanes: two lanes, bytes j and j + 32 the same bin):
 * the planes of weight 1..16 into one byte counter (at most 8 * 31 = 248
 * per byte), those of weight 32..256 into another (at most 8 * 15 = 120,
 * times 32), both added to t.
 */
#define CSA(hi, lo, a, b, c)                                            \
	do {                                                            \
		__m512i a_ = (a), b_ = (b), c_ = (c);                   \
		hi = _mm512_ternarylogic_epi64(a_, b_, c_, 0xe8);       \
		lo = _mm512_ternarylogic_epi64(a_, b_, c_, 0x96);       \
	} while (0)

#define NPL 9	/* planes: counts up to 2^9 - 1 >= BLK / 8 per lane and bin */
_Static_assert(BLK / 8 < (1 << NPL), "the planes hold a block's counts");

/* Add one word to the planes: a ripple of half adders. */
static inline __attribute__((always_inline)) void csa_add1(__m512i *p, __m512i w, int k0)
{
	for (int k = k0; k < NPL; k++) {
		__m512i c = _mm512_and_si512(p[k], w);
		p[k] = _mm512_xor_si512(p[k], w);
		w = c;
	}
}

/* Add sixteen words to the planes (Harley-Seal: fifteen carry-save
 * adders, the sixteens word rippled into P4 and up). */
static inline __attribute__((always_inline)) void csa_add16(__m512i *p, const __m512i *w)
{
	__m512i ta, tb, fa, fb, ea, eb, sx;
	CSA(ta, p[0], p[0], w[0], w[1]);
	CSA(tb, p[0], p[0], w[2], w[3]);
	CSA(fa, p[1], p[1], ta, tb);
	CSA(ta, p[0], p[0], w[4], w[5]);
	CSA(tb, p[0], p[0], w[6], w[7]);
	CSA(fb, p[1], p[1], ta, tb);
	CSA(ea, p[2], p[2], fa, fb);
	CSA(ta, p[0], p[0], w[8], w[9]);
	CSA(tb, p[0], p[0], w[10], w[11]);
	CSA(fa, p[1], p[1], ta, tb);
	CSA(ta, p[0], p[0], w[12], w[13]);
	CSA(tb, p[0], p[0], w[14], w[15]);
	CSA(fb, p[1], p[1], ta, tb);
	CSA(eb, p[2], p[2], fa, fb);
	CSA(sx, p[3], p[3], ea, eb);
	csa_add1(p, sx, 4);
}

/* The words of GPW groups of exponent bytes (already less lo, at jb):
 * 1 << j in 64-bit lanes (wide: 8 bytes a vector, bins lo..lo+63) or in
 * 32-bit lanes (16 bytes a vector, bins lo..lo+31). */
static inline __attribute__((always_inline)) __m512i csa_word(const uint8_t *jb, int q, int wide)
{
	if (wide)
		return _mm512_sllv_epi64(_mm512_set1_epi64(1),
					 _mm512_cvtepu8_epi64(_mm_loadl_epi64(
						 (const __m128i *)(const void *)(jb + 8 * q))));
	return _mm512_sllv_epi32(_mm512_set1_epi32(1),
				 _mm512_cvtepu8_epi32(_mm_loadu_si128(
					 (const __m128i *)(const void *)(jb + 16 * q))));
}

static inline __attribute__((always_inline)) void count_csa_w(uint64_t *t, const uint8_t *eb,
							      size_t ng, int lo, int wide)
{
	const __m512i vlo = _mm512_set1_epi8((char)lo);
	_Alignas(64) uint8_t jb[BLK];
	for (size_t j = 0; j < ng; j++)
		_mm512_store_si512((void *)(jb + GRP * j),
				   _mm512_sub_epi8(_mm512_load_si512((const void *)(eb + GRP * j)),
						   vlo));
	__m512i p[NPL];
	for (int k = 0; k < NPL; k++)
		p[k] = _mm512_setzero_si512();
	/* 16 words: 128 bytes (wide) or 256 */
	const size_t per = wide ? 128 : 256, nb = ng * GRP;
	size_t b = 0;
	for (; b + per <= nb; b += per) {
		__m512i w[16];
		for (int q = 0; q < 16; q++)
			w[q] = csa_word(jb + b, q, wide);
		csa_add16(p, w);
	}
	for (int q = 0; b < nb; b += wide ? 8 : 16, q++)
		csa_add1(p, csa_word(jb + b, 0, wide), 0);
	/* read out: each 64-bit word of a plane as a byte mask; with 32-bit
	 * lanes bytes j and j + 32 are the same bin */
	_Alignas(64) uint64_t pw[NPL][8];
	for (int k = 0; k < NPL; k++)
		_mm512_store_si512((void *)pw[k], p[k]);
	__m512i a1 = _mm512_setzero_si512(), a2 = a1;
	for (int k = 0; k < 5; k++) {
		const __m512i wk = _mm512_set1_epi8((char)(1 << k));
		for (int l = 0; l < 8; l++)
			a1 = _mm512_mask_add_epi8(a1, _cvtu64_mask64(pw[k][l]), a1, wk);
	}
	for (int k = 5; k < NPL; k++) {
		const __m512i wk = _mm512_set1_epi8((char)(1 << (k - 5)));
		for (int l = 0; l < 8; l++)
			a2 = _mm512_mask_add_epi8(a2, _cvtu64_mask64(pw[k][l]), a2, wk);
	}
	_Alignas(64) uint8_t c1[64], c2[64];
	_mm512_store_si512((void *)c1, a1);
	_mm512_store_si512((void *)c2, a2);
	for (int q = 0; q < (wide ? 8 : 4); q++) {
		__m512i s = _mm512_add_epi64(
			_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(c1 + 8 * q))),
			_mm512_slli_epi64(_mm512_cvtepu8_epi64(_mm_loadl_epi64(
						  (const __m128i *)(const void *)(c2 + 8 * q))),
					  5));
		if (!wide)
			s = _mm512_add_epi64(
				s, _mm512_add_epi64(
					   _mm512_cvtepu8_epi64(_mm_loadl_epi64(
						   (const __m128i *)(const void *)(c1 + 32 + 8 * q))),
					   _mm512_slli_epi64(
						   _mm512_cvtepu8_epi64(_mm_loadl_epi64(
							   (const __m128i *)(const void *)(c2 + 32 + 8 * q))),
						   5)));
		_mm512_storeu_si512((void *)(t + lo + 8 * q),
				    _mm512_add_epi64(_mm512_loadu_si512((const void *)(t + lo + 8 * q)), s));
	}
}

static void count_csa(uint64_t *t, const uint8_t *eb, size_t ng, int lo, int hi)
{
	if (hi - lo < 32)
		count_csa_w(t, eb, ng, lo, 0);
	else
		count_csa_w(t, eb, ng, lo, 1);
}

/* The sum over the lanes of the byte at bit sh of each. */
static uint32_t field(__m512i k, int sh)
{
	__m512i f = _mm512_and_si512(_mm512_srl_epi32(k, _mm_cvtsi32_si128(sh)),
				     _mm512_set1_epi32(0xff));
	return (uint32_t)_mm512_reduce_add_epi32(f);
}

/* One block of m <= BLK elements into *acc: classes, extremes and errors
 * in one pass, storing the exponent bytes; then the bins, by compares over
 * the block's range of exponents where it is narrow (the usual case: the
 * values of a tensor span a few tens of binades), else one by one. */
/* One pass over a block (fast: one16f, else one16), the exponent bytes
 * to eb; returns the groups stored, *pad the +0 lanes read past m.  pf:
 * input to prefetch (the next chunk), or NULL. */
static inline __attribute__((always_inline)) size_t pass(acc16 *a, const vconst *c,
							 const float *v, const float *y,
							 size_t m, const float *pf, uint8_t *eb,
							 uint32_t *pad, int fast)
{
	a->k = a->mx = _mm512_setzero_si512();
	a->nun = a->nlt = 0;
	a->fl = _mm512_setzero_si512();
	a->mi = _mm512_set1_epi32(-1);
	a->rs = a->rq = a->rmx = a->dmx = _mm512_setzero_ps();
	a->ds = a->dq = a->ds2 = a->dq2 = _mm512_setzero_pd();
	__m512 fv[4], fy[4];
	size_t i = 0, g = 0;	/* g: groups stored */
	for (; i + GRP <= m; i += GRP, g++) {
		if (pf)
			for (int j = 0; j < 4; j++)
				_mm_prefetch((const char *)(pf + i + 16 * j), _MM_HINT_T1);
		one64_at(a, c, v + i, y + i, eb + GRP * g, fast);
	}
	*pad = 0;
	if (i < m) {
		/* the short last group: masked loads read +0 beyond m, zeros of
		 * exponent 0 that add +0 to every sum */
		int rem = (int)(m - i);
		for (int j = 0; j < 4; j++) {
			int r = rem - 16 * j;
			__mmask16 k = r >= 16 ? (__mmask16)0xffff
				      : r <= 0 ? (__mmask16)0 : (__mmask16)((1u << r) - 1);
			fv[j] = _mm512_maskz_loadu_ps(k, v + i + 16 * j);
			fy[j] = _mm512_maskz_loadu_ps(k, y + i + 16 * j);
		}
		one64(a, c, fv, fy, eb + GRP * g, fast);
		g++;
		*pad = (uint32_t)(GRP - rem);
	}
	return g;
}

/* ---- the cast in the lanes: hist_add_f32_avx512's own rounding ---- */

/* Constants of cast16 (cast_setup). */
typedef struct rconst {
	__m512i mask, halfm1, klor, s, minm1, umin, max, aovp, aovn;	/* aovp, aovn:
									 * |y| of an overflow */
	__m512 C, scale;
	fpl_rnd rnd;
	int scaled;
	uint32_t tiny_lo;	/* blocks with a nonzero |v| below: the engine */
	uint64_t dpos[FPL_NFLAGS], dneg[FPL_NFLAGS];	/* the events of one overflow */
} rconst;

/*
 * The cast of sixteen finite v (the header comment argues it) and one16f
 * on v and the cast, in one: returns the biased exponents of |v|.  The
 * classes, errors and extremes read only |v| and |y| (v and y have the
 * same sign), so y's sign is never made: q = |y| in every lane but the
 * overflows, whose |y| is |ovp| or |ovn| (with v's sign), handled apart
 * (rare).  Lanes with a NaN or an infinite v get meaningless figures;
 * the caller then does the block again through the engine.
 */
static inline __attribute__((always_inline)) __m512i cast16(acc16 *a, const vconst *c,
							    const rconst *r, __m512 fv)
{
	__m512i x = _mm512_and_si512(_mm512_castps_si512(fv), c->absm);
	__mmask16 tiny = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(x, c->one), r->minm1);
	__m512i rn, tr = _mm512_andnot_si512(r->mask, x);
	__m512 af = _mm512_castsi512_ps(x), t;
	__mmask16 neg = 0;
	if (r->rnd == FPL_RND_NE) {
		/* (x >> s) & 1 | klor: A & B | C = 0xea */
		__m512i kl = _mm512_ternarylogic_epi32(_mm512_srlv_epi32(x, r->s), c->one, r->klor,
						       0xea);
		rn = _mm512_andnot_si512(r->mask,
					 _mm512_add_epi32(_mm512_add_epi32(x, kl), r->halfm1));
		t = _mm512_add_round_ps(af, r->C, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	} else if (r->rnd == FPL_RND_TZ) {
		rn = tr;
		t = _mm512_add_round_ps(af, r->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	} else {
		/* tp, tn: the magnitude rounds up in the lanes of one sign */
		neg = _mm512_movepi32_mask(_mm512_castps_si512(fv));
		__mmask16 up = r->rnd == FPL_RND_TP ? (__mmask16)~neg : neg;
		rn = _mm512_mask_mov_epi32(
			tr, up, _mm512_andnot_si512(r->mask, _mm512_add_epi32(x, r->mask)));
		t = _mm512_add_round_ps(af, r->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
		t = _mm512_mask_add_round_ps(t, up, af, r->C,
					     _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
	}
	t = _mm512_sub_ps(t, r->C);
	__m512i q = _mm512_mask_mov_epi32(rn, tiny, _mm512_castps_si512(t));
	__mmask16 ovf = _mm512_cmpgt_epu32_mask(rn, r->max);
	__mmask16 ix = _mm512_cmpneq_epi32_mask(q, x);
	__mmask16 un = _mm512_mask_cmplt_epu32_mask(ix & tiny, rn, r->umin);
	a->fl = _mm512_mask_add_epi32(a->fl, ix, a->fl, c->one);
	a->fl = _mm512_mask_add_epi32(a->fl, un, a->fl, c->b1);
	/* one16f on v and y = +-q: ovf lanes have q = rn > max >= min
	 * normal, so they are in neither y == 0 nor y < min normal */
	__mmask16 fin = _mm512_test_epi32_mask(x, x);
	__mmask16 yz = _mm512_mask_testn_epi32_mask(fin, q, q);
	__mmask16 lt = _mm512_mask_cmplt_epu32_mask(fin, q, c->mn);
	a->nun += (uint32_t)__builtin_popcount(yz);
	a->nlt += (uint32_t)__builtin_popcount(lt);
	a->mx = _mm512_max_epu32(a->mx, x);
	a->mi = _mm512_mask_min_epu32(a->mi, fin, a->mi, x);
	__m512 d = _mm512_castsi512_ps(_mm512_and_si512(
		_mm512_castps_si512(_mm512_sub_ps(_mm512_castsi512_ps(q), af)), c->absm));
	if (__builtin_expect(ovf != 0, 0)) {
		/* overflows: |y| = |ov| of v's sign; inexact counted from them
		 * (the engine's events of an overflow, r->dpos/dneg); a
		 * non-finite y has no errors and counts as one (fields 16, 24 of
		 * a->k, as one16's) */
		neg = _mm512_movepi32_mask(_mm512_castps_si512(fv));
		__mmask16 op = ovf & (__mmask16)~neg, on = ovf & neg;
		a->fl = _mm512_mask_sub_epi32(a->fl, ovf & ix, a->fl, c->one);
		a->fl = _mm512_mask_add_epi32(a->fl, op, a->fl, c->b2);
		a->fl = _mm512_mask_add_epi32(a->fl, on, a->fl, c->b3);
		__m512i ay = _mm512_mask_mov_epi32(r->aovp, on, r->aovn);
		__mmask16 inf = ovf & _mm512_cmpgt_epu32_mask(ay, c->fmax);
		a->k = _mm512_mask_add_epi32(a->k, inf, a->k, c->b23);
		d = _mm512_castsi512_ps(_mm512_mask_mov_epi32(
			_mm512_castps_si512(d), ovf,
			_mm512_maskz_and_epi32(
				(__mmask16)~inf,
				_mm512_castps_si512(_mm512_sub_ps(_mm512_castsi512_ps(ay), af)), c->absm)));
	}
	__m512 rr = _mm512_maskz_div_ps(fin, d, af);
	a->rs = _mm512_add_ps(a->rs, rr);
	a->rq = _mm512_fmadd_ps(rr, rr, a->rq);
	a->rmx = _mm512_max_ps(rr, a->rmx);
	a->dmx = _mm512_max_ps(d, a->dmx);
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
	__m512d hi = _mm512_cvtps_pd(
		_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
	a->ds = _mm512_add_pd(a->ds, lo);
	a->ds2 = _mm512_add_pd(a->ds2, hi);
	a->dq = _mm512_fmadd_pd(lo, lo, a->dq);
	a->dq2 = _mm512_fmadd_pd(hi, hi, a->dq2);
	return _mm512_srli_epi32(x, 23);
}

/* v = x 2^k (exact: f32_ok in hist.c) where the call scales. */
static inline __attribute__((always_inline)) __m512 scaled(const rconst *r, __m512 fx)
{
	return r->scaled ? _mm512_mul_ps(fx, r->scale) : fx;
}

/* pass() for hist_add_f32_avx512's own cast: v from x (scaled), y cast
 * in the lanes, one16f on both. */
static inline __attribute__((always_inline)) size_t pass_cast(acc16 *a, const vconst *c,
							      const rconst *r, const float *x,
							      size_t m, uint8_t *eb,
							      uint32_t *pad)
{
	a->k = a->mx = _mm512_setzero_si512();
	a->nun = a->nlt = 0;
	a->fl = _mm512_setzero_si512();
	a->mi = _mm512_set1_epi32(-1);
	a->rs = a->rq = a->rmx = a->dmx = _mm512_setzero_ps();
	a->ds = a->dq = a->ds2 = a->dq2 = _mm512_setzero_pd();
	size_t i = 0, g = 0;
	for (; i + GRP <= m; i += GRP, g++) {
		__m512i e0 = cast16(a, c, r, scaled(r, _mm512_loadu_ps(x + i)));
		__m512i e1 = cast16(a, c, r, scaled(r, _mm512_loadu_ps(x + i + 16)));
		__m512i p01 = _mm512_packus_epi32(e0, e1);
		__m512i e2 = cast16(a, c, r, scaled(r, _mm512_loadu_ps(x + i + 32)));
		__m512i e3 = cast16(a, c, r, scaled(r, _mm512_loadu_ps(x + i + 48)));
		__m512i p23 = _mm512_packus_epi32(e2, e3);
		_mm512_storeu_si512((void *)(eb + GRP * g), _mm512_packus_epi16(p01, p23));
	}
	*pad = 0;
	if (i < m) {
		/* masked loads read +0 beyond m: cast exactly to +0 */
		int rem = (int)(m - i);
		__m512i e[4];
		for (int j = 0; j < 4; j++) {
			int rr = rem - 16 * j;
			__mmask16 k = rr >= 16 ? (__mmask16)0xffff
				      : rr <= 0 ? (__mmask16)0 : (__mmask16)((1u << rr) - 1);
			e[j] = cast16(a, c, r, scaled(r, _mm512_maskz_loadu_ps(k, x + i + 16 * j)));
		}
		_mm512_storeu_si512((void *)(eb + GRP * g),
				    _mm512_packus_epi16(_mm512_packus_epi32(e[0], e[1]),
							_mm512_packus_epi32(e[2], e[3])));
		g++;
		*pad = (uint32_t)(GRP - rem);
	}
	return g;
}

/* The rest of a block after its pass (a, the g groups of exponent bytes
 * at eb, pad lanes, fast: done by one16f): the bins into t, the rest into
 * *acc; v: the block's values (read only where one is a binary32
 * subnormal). */
static void tally(hist_f32_acc *acc, uint64_t (*t)[256], const acc16 *pa, const uint8_t *eb,
		  size_t g, uint32_t pad, size_t m, int fast, const float *v)
{
	const acc16 a = *pa;	/* (a copy the compiler keeps in registers) */
	uint32_t bmx = (uint32_t)_mm512_reduce_max_epu32(a.mx);
	uint32_t bmi = (uint32_t)_mm512_reduce_min_epu32(a.mi);
	/* bins 1..254: every finite nonzero v has its exponent in
	 * [bmi >> 23, bmx >> 23]; bin 0 (zeros, binary32 subnormals, the
	 * pad) and 255 (NaN/inf) are counted apart and never left in the
	 * tables */
	uint32_t b0, cni;
	int lo = (int)(bmi >> 23), hi = (int)(bmx >> 23);
	lo = lo < 1 ? 1 : lo;
	hi = hi > 254 ? 254 : hi;
	if (bmx && hi - lo >= NARROW && hi - lo < 64 && lo <= 191) {
		b0 = (uint32_t)count_one(eb, g, 0);
		cni = fast ? 0 : (uint32_t)count_one(eb, g, 255);
		count_csa(t[0], eb, g, lo, hi);
	} else if (bmx && hi - lo >= NARROW) {
		b0 = cni = 0;
		for (size_t j = 0; j < g; j++)
			count_bytes(t, eb + GRP * j);
		for (int q = 0; q < 4; q++) {
			b0 += (uint32_t)t[q][0];
			cni += (uint32_t)t[q][255];
			t[q][0] = t[q][255] = 0;
		}
	} else {
		/* a fast block has no NaN/inf v: bin 255 is empty */
		b0 = (uint32_t)count_one(eb, g, 0);
		cni = fast ? 0 : (uint32_t)count_one(eb, g, 255);
		if (bmx)
			count_window(t[0], eb, g, lo, hi);
	}
	uint32_t nsub = bmi < 0x00800000u ? hist_f32_subnormals(acc, v, m) : 0;
	uint32_t cz = b0 - nsub - pad, cun = field(a.k, 0) + a.nun;
	uint32_t clt = field(a.k, 8) + a.nlt;
	uint32_t cov = field(a.k, 16), cbad = field(a.k, 24);
	if (fast == 1)	/* one16f counted the finite y, pad lanes included */
		cov = cbad = (uint32_t)(GRP * g) - cov;
	float amx = _mm512_reduce_max_ps(a.rmx), dm = _mm512_reduce_max_ps(a.dmx);
	float acc1 = _mm512_reduce_add_ps(a.rs), acc2 = _mm512_reduce_add_ps(a.rq);
	acc->nz += cz;
	acc->nni += cni;
	acc->nun += cun;
	acc->nsub += clt - cun;
	acc->nov += cov;
	acc->en += (uint32_t)m - cz - cni - cov;
	acc->an += (uint32_t)m - cbad;
	acc->es += acc1;
	acc->esq += acc2;
	acc->as += _mm512_reduce_add_pd(_mm512_add_pd(a.ds, a.ds2));
	acc->asq += _mm512_reduce_add_pd(_mm512_add_pd(a.dq, a.dq2));
	acc->emx = amx > acc->emx ? amx : acc->emx;
	acc->amxa = dm > acc->amxa ? dm : acc->amxa;
	acc->bmax = bmx > acc->bmax ? bmx : acc->bmax;
	acc->bmin = bmi < acc->bmin ? bmi : acc->bmin;
}

static void block(hist_f32_acc *acc, uint64_t (*t)[256], const vconst *c, const float *v,
		  const float *y, size_t m, const float *pf)
{
	acc16 a;
	_Alignas(64) uint8_t eb[BLK];
	uint32_t pad;
	/* the fast pass, then the full one where v had a NaN or an infinity
	 * (|v| bits above those of the largest float) */
	size_t g = pass(&a, c, v, y, m, pf, eb, &pad, 1);
	int fast = (uint32_t)_mm512_reduce_max_epu32(a.mx) <= 0x7f7fffffu;
	if (!fast)
		g = pass(&a, c, v, y, m, NULL, eb, &pad, 0);
	tally(acc, t, &a, eb, g, pad, m, fast, v);
}

static void consts(vconst *c, const fpl_hist *h)
{
	const float mnf = (float)h->cfg.fmt.min_normal;
	uint32_t mn;
	memcpy(&mn, &mnf, 4);
	c->absm = _mm512_set1_epi32(0x7fffffff);
	c->fmax = _mm512_set1_epi32(0x7f7fffff);
	c->mn = _mm512_set1_epi32((int)mn);
	c->one = _mm512_set1_epi32(1);
	c->b1 = _mm512_set1_epi32(1 << 8);
	c->b2 = _mm512_set1_epi32(1 << 16);
	c->b3 = _mm512_set1_epi32(1 << 24);
	c->b23 = _mm512_set1_epi32((1 << 16) | (1 << 24));
}

static void finish(fpl_hist *h, hist_f32_acc *acc, uint64_t (*t)[256], size_t n)
{
	for (int b = 1; b < 255; b++)
		acc->bins[b] = t[0][b] + t[1][b] + t[2][b] + t[3][b];
	hist_f32_commit(h, acc, n);
}

void hist_classify_f32_avx512(fpl_hist *h, const float *v, const float *y, size_t n)
{
	vconst c;
	consts(&c, h);
	hist_f32_acc acc;
	hist_f32_acc_init(&acc, h);
	uint64_t t[4][256];
	memset(t, 0, sizeof t);
	for (size_t i0 = 0; i0 < n; i0 += BLK)
		block(&acc, t, &c, v + i0, y + i0, n - i0 < BLK ? n - i0 : BLK, NULL);
	finish(h, &acc, t, n);
}

/* Can cast16 do h's casts?  Fills *r when it can (returns 1). */
static int cast_setup(rconst *r, const fpl_hist *h)
{
	hist_cast hc;
	if (!hist_cast_setup(&hc, h))
		return 0;
	const int s32 = hc.s, k = h->scale_log2;
	r->mask = _mm512_set1_epi32((int)((1u << s32) - 1));
	r->halfm1 = _mm512_set1_epi32((int)((1u << (s32 - 1)) - 1));
	r->klor = _mm512_set1_epi32(s32 == 23);
	r->s = _mm512_set1_epi32(s32);
	r->minm1 = _mm512_set1_epi32((int)(hc.min - 1));
	r->umin = _mm512_set1_epi32(hc.tiny_before ? -1 : (int)hc.min);
	r->max = _mm512_set1_epi32((int)hc.max);
	r->C = _mm512_set1_ps(hc.C);
	r->scale = _mm512_set1_ps(ldexpf(1.0f, k));
	r->scaled = k != 0;
	r->rnd = h->cfg.rnd;
	r->tiny_lo = hc.tiny_fb ? hc.min : 0;
	r->aovp = _mm512_set1_epi32((int)hc.aovp);
	r->aovn = _mm512_set1_epi32((int)hc.aovn);
	memcpy(r->dpos, hc.dpos, sizeof hc.dpos);
	memcpy(r->dneg, hc.dneg, sizeof hc.dneg);
	return 1;
}

/* v of block x[0..m) into h->xf (scaled, as cast16 saw it). */
static const float *block_v(fpl_hist *h, const rconst *r, const float *x, size_t m)
{
	if (!r->scaled)
		return x;
	float s = ldexpf(1.0f, h->scale_log2);
	for (size_t i = 0; i < m; i++)
		h->xf[i] = x[i] * s;
	return h->xf;
}

/* hist_add_f32_avx512 with cast16: one pass over x per block, the engine
 * only for blocks with a NaN or infinite v. */
static int add_cast(fpl_hist *h, const rconst *r, const float *x, size_t n)
{
	vconst c;
	consts(&c, h);
	hist_f32_acc acc;
	hist_f32_acc_init(&acc, h);
	uint64_t t[4][256];
	memset(t, 0, sizeof t);
	fpl_state *st = &h->cfg.st;
	const fpl_state keep = *st;
	const uint64_t idx0 = st->counter;
	uint64_t ev[4] = { 0, 0, 0, 0 };	/* inexact, underflow, overflows > 0, < 0 */
	const unsigned csr = _mm_getcsr();
	_mm_setcsr(0x1f80);	/* the default: cast16's sums assume no FTZ or DAZ */
	for (size_t i0 = 0; i0 < n; i0 += BLK) {
		size_t m = n - i0 < BLK ? n - i0 : BLK;
		acc16 a;
		_Alignas(64) uint8_t eb[BLK];
		uint32_t pad;
		size_t g = pass_cast(&a, &c, r, x + i0, m, eb, &pad);
		if ((uint32_t)_mm512_reduce_max_epu32(a.mx) <= 0x7f7fffffu &&
		    (uint32_t)_mm512_reduce_min_epu32(a.mi) >= r->tiny_lo) {
			const float *v = x + i0;
			if ((uint32_t)_mm512_reduce_min_epu32(a.mi) < 0x00800000u)
				v = block_v(h, r, x + i0, m);	/* binary32 subnormals */
			tally(&acc, t, &a, eb, g, pad, m, 2, v);
			for (int q = 0; q < 4; q++)
				ev[q] += field(a.fl, 8 * q);
			continue;
		}
		/* a NaN or an infinity (or a tiny v the lanes do not cast): the
		 * engine casts the block, with element j's draw (st->counter =
		 * idx0 + j) */
		const float *v = block_v(h, r, x + i0, m);
		st->counter = idx0 + i0;
		int rc = fpl_round_array_f32(&h->cfg.fmt, h->yf, v, m, h->cfg.rnd, st);
		if (rc) {
			*st = keep;	/* nothing added to h */
			_mm_setcsr(csr);
			return rc;
		}
		block(&acc, t, &c, v, h->yf, m, NULL);
	}
	_mm_setcsr(csr);
	st->counter = idx0 + n;
	uint64_t add[FPL_NFLAGS];
	for (int i = 0; i < FPL_NFLAGS; i++)
		add[i] = ev[2] * r->dpos[i] + ev[3] * r->dneg[i];
	add[0] += ev[0];
	add[1] += ev[1];
	for (int i = 0; i < FPL_NFLAGS; i++) {
		st->count[i] += add[i];
		if (add[i])
			st->flags |= 1u << i;
	}
	finish(h, &acc, t, n);
	return 0;
}

int hist_add_f32_avx512(fpl_hist *h, const float *x, size_t n)
{
	rconst r;
	if (n && cast_setup(&r, h))
		return add_cast(h, &r, x, n);
	vconst c;
	consts(&c, h);
	hist_f32_acc acc;
	hist_f32_acc_init(&acc, h);
	uint64_t t[4][256];
	memset(t, 0, sizeof t);
	const int k = h->scale_log2;
	const __m512 s = _mm512_set1_ps(ldexpf(1.0f, k));
	for (size_t i0 = 0; i0 < n; i0 += FCH) {
		size_t m = n - i0 < FCH ? n - i0 : FCH;
		const float *v = x + i0;
		if (k) {
			/* v = x 2^k, exact (f32_ok in hist.c) */
			size_t i = 0;
			for (; i + 16 <= m; i += 16)
				_mm512_storeu_ps(h->xf + i, _mm512_mul_ps(_mm512_loadu_ps(v + i), s));
			for (; i < m; i++)
				h->xf[i] = v[i] * ldexpf(1.0f, k);
			v = h->xf;
		}
		int rc = fpl_round_array_f32(&h->cfg.fmt, h->yf, v, m, h->cfg.rnd, &h->cfg.st);
		if (rc)
			return rc;	/* FPL_EFORMAT comes at the first chunk */
		/* the next chunk's input, brought in while this one is classified */
		const float *pf = i0 + FCH < n ? x + i0 + FCH : NULL;
		size_t npf = pf ? (n - i0 - FCH) : 0;
		for (size_t i = 0; i < m; i += BLK)
			block(&acc, t, &c, v + i, h->yf + i, m - i < BLK ? m - i : BLK,
			      i < npf ? pf + i : NULL);
	}
	finish(h, &acc, t, n);
	return 0;
}
