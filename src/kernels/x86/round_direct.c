/* SPDX-License-Identifier: MIT */
/*
 * x86/round_direct.c - rounding a binary64 or binary32 array into a
 * format with AVX-512 intrinsics, eight binary64 or sixteen binary32
 * lanes at a time, straight from x to z.
 *
 * The normal range is the arithmetic of kernel_body.h (kb_pick,
 * kb_round_lane), whose comment explains why it rounds exactly like the
 * scalar engine: with a = the magnitude bits of x and s = 52 - m, adding
 * the mode's increment to a and clearing the low s bits rounds, a carry
 * moving into the next binade.  Here it is written with intrinsics, and
 * nothing goes through memory but x and z: at a handful of integer
 * operations per lane, the scratch block, the spc array and the copy of
 * the portable kernels were most of the time.  The kept lsb of a normal
 * lane is bit s of a, or 1 when s = 52 (m = 0: the implicit bit).
 *
 * Tiny lanes, 0 < |x| < 2^emin, with gradual underflow: the quantum there
 * is Q = 2^(emin-m), not a fixed number of binary64 ulps.  In units of
 * Q 2^-s the tiny range is a fixed-point range: Y = floor(|x| 2^s / Q) is
 * the significand M of x (53 bits with the implicit one; 52 without for
 * a binary64 subnormal, whose exponent is that of the smallest binade)
 * shifted right by emin_b - max(be, 1), be the biased exponent of x and
 * emin_b that of 2^emin, and the bits shifted out are the lost part.  Y
 * is below 2^52, a binary64 subnormal encoding whose quantum is 2^s
 * units, so the normal range's arithmetic with the same constant shift
 * rounds it.  With the lost bits folded into Y's last bit (a sticky bit,
 * s >= 2 places below the kept lsb, hence below the half bit) the
 * decision is that for |x|: the kept bits and the half bit are Y's, and
 * "anything below the half bit" is Y's low bits or sticky.  sp reads T,
 * the R bits below the kept lsb, which Y holds when R <= s (and then
 * without the sticky bit: T is floor(fraction 2^R), the lost bits lie
 * below it).  A carry out of the range gives 2^52, that is 2^emin.  The
 * result K 2^s converts exactly to binary64 and scales by 2^(emin-52)
 * exactly (a multiple of Q).  No floating-point operation sees a
 * subnormal operand, which would take a slow microcode assist.  This is
 * kd_tiny, for the vectors of kd_vec (heads, tails, rare vectors, and
 * binary64 spans where tiny lanes are rare).
 *
 * The common loops (kd_loop, binary64; kf_run, binary32) use a shorter
 * route for tiny lanes, whose proof is at kf_vec and kd_fast: with C =
 * 2^p Q (p = 52 or 23, the lane type's fraction bits), |x| + C lies in
 * [C, 2C], where the lane type's spacing is exactly Q, so one addition
 * with embedded rounding (ne: to nearest even, tz: toward zero, tp/tn:
 * toward +inf in the lanes whose magnitude rounds up) rounds |x| / Q to
 * an integer as the mode does, and subtracting C is exact (Sterbenz);
 * the other modes truncate that way and decide from rem = |x| - K Q,
 * which is exact too, as kb_pick decides from the discarded bits.
 * Spans of vectors where tiny lanes are frequent (fp6 and fp4 with N(0,
 * 1) data) run branch-free; the others branch per vector: the same bits
 * and counts either way.
 *
 * Tininess after rounding: the scalar engine asks whether x rounded to
 * precision p with an unbounded exponent (same mode and draw) is below
 * 2^emin.  Only |x| in [2^(emin-1), 2^emin) can reach 2^emin, and for a
 * normal x of the lane type that rounding is the normal range's
 * arithmetic on the raw bits, rn, computed for every lane anyway: a tiny
 * inexact lane underflows iff rn < 2^emin.  Where x's binade below
 * 2^emin is not normal in the lane type (emin = -1022, or -126 for
 * binary32 lanes) the lanes that reach 2^emin go to the scalar engine.
 *
 * binary32 lanes (kf_vec): the format fits binary32, so its values and its
 * normal-range rounding are binary32's; the binary64 encoding of a float
 * is its binary32 encoding with the exponent rebiased and 29 zero bits
 * appended, so the kept bits, the half bit, the lost bits and sp's T are
 * the same bits, and the same increments round the same way with s32 =
 * s - 29.  A vector kf_vec cannot do (an overflow, inf, NaN, or tiny lanes
 * of a format it cannot scale) is widened exactly to two binary64
 * vectors and done by kd_vec; its results are values of the format and
 * narrow exactly.
 *
 * Stores: non-temporal for large outputs where the CPU gains from them
 * (array.c, fpl__cpu_stream_stores), plain ones elsewhere.  The
 * floating-point steps assume the default MXCSR (RNE, no DAZ or FTZ),
 * which the entry point sets for the call and then restores.
 *
 * Draws are fpl__draw(key, idx) for element index idx, computed in the
 * lanes (vpmullq; for binary32 lanes only the high words, which is all
 * sp and se read), so the bits do not depend on the blocking.  Lanes the
 * kernel cannot do (results above max, inf and NaN inputs, fnuz zeros,
 * tiny lanes of the other subnormal flavours) are done by the caller's
 * scalar engine before the vector is stored.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels_internal.h"

#define KD_INLINE static inline __attribute__((always_inline))

/* Loop invariants, broadcast once per call. */
typedef struct kd_c {
	__m512i one, minus1, imp, absm;
	__m512i s, q, mask, half, halfm1;	/* constant shift s = 52 - m */
	__m512i klor;				/* 1 when s = 52: the implicit bit is kept */
	__m512i lal, rmask;			/* sp: 64 - s, the top R bits of a draw */
	__m512i minm1, min, zs, maxzs, lanes_g;
	__m512i max, inf, ovf_pos, ovf_neg;	/* rare lanes: see kd_rare */
	__m512i frac, emin_b;			/* tiny lanes: see kd_tiny */
	__m512d unit;				/* 2^(emin-52) */
	__m512i umin;				/* see kd_fast */
	uint64_t key;
	int tiny_before, sub_ok, zero_special, ovf_sat;
	int uok;				/* emin_b >= 2: see kd_tiny */
} kd_c;

#define KD_GOLDEN 0x9e3779b97f4a7c15ull	/* fpl__draw's index step */

/* splitmix64's finalizer (fpl__mix64) on eight lanes, less its last
 * xorshift z ^ (z >> 31) (kd_draw and kf_dh apply it). */
KD_INLINE __m512i kd_mix2(__m512i z)
{
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
	return _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0x94d049bb133111ebull));
}

/* The argument of fpl__draw's mix for element idx0 + k in lane k. */
KD_INLINE __m512i kd_base(const kd_c *c, uint64_t idx0)
{
	return _mm512_add_epi64(_mm512_set1_epi64((long long)(c->key + (idx0 + 1) * KD_GOLDEN)),
				c->lanes_g);
}

/* fpl__draw(key, idx0 + k) in lane k. */
KD_INLINE __m512i kd_draw(const kd_c *c, uint64_t idx0)
{
	__m512i z = kd_mix2(kd_base(c, idx0));
	return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* kb_pick on eight lanes: a = magnitude bits, neg = sign lanes, kl the
 * kept lsb (0 or 1), d the draws (sp, se).  The quantum is c->q. */
KD_INLINE __m512i kd_pick(const kd_c *c, fpl_rnd rnd, __m512i a, __mmask8 neg, __m512i kl,
			  __m512i d)
{
	const __m512i tr = _mm512_andnot_si512(c->mask, a);

	switch (rnd) {
	case FPL_RND_NE:
		return _mm512_andnot_si512(c->mask,
					   _mm512_add_epi64(_mm512_add_epi64(a, kl), c->halfm1));
	case FPL_RND_NA:
		return _mm512_andnot_si512(c->mask, _mm512_add_epi64(a, c->half));
	case FPL_RND_NZ:
		return _mm512_andnot_si512(c->mask, _mm512_add_epi64(a, c->halfm1));
	case FPL_RND_TP:
		return _mm512_mask_mov_epi64(_mm512_andnot_si512(c->mask, _mm512_add_epi64(a, c->mask)),
					     neg, tr);
	case FPL_RND_TN:
		return _mm512_mask_mov_epi64(tr, neg,
					     _mm512_andnot_si512(c->mask, _mm512_add_epi64(a, c->mask)));
	case FPL_RND_OD: {
		__mmask8 up = _mm512_test_epi64_mask(a, c->mask) & _mm512_testn_epi64_mask(kl, kl);
		return _mm512_mask_or_epi64(tr, up, tr, c->q);
	}
	case FPL_RND_SP: {
		/* T + r >= 2^R as the carry out of 64 bits of T' + r': T' the
		 * fraction below the kept lsb left-aligned (a << (64 - s): the
		 * kept bits fall off), r' the top R bits of the draw; the
		 * fraction's bits below the top R do not change the carry
		 * (kf_vec's sp lanes, with 64 for 32) */
		__m512i T = _mm512_sllv_epi64(a, c->lal);
		__m512i sum = _mm512_add_epi64(T, _mm512_and_si512(d, c->rmask));
		return _mm512_mask_add_epi64(tr, _mm512_cmplt_epu64_mask(sum, T), tr, c->q);
	}
	case FPL_RND_SE: {
		__mmask8 up = _mm512_test_epi64_mask(a, c->mask) & _mm512_movepi64_mask(d);
		return _mm512_mask_add_epi64(tr, up, tr, c->q);
	}
	default:	/* tz */
		return tr;
	}
}

/* The kept lsb of a lane whose encoding a has the quantum 2^s: bit s, or
 * the implicit bit when s = 52 (klor = 1; not for scaled tiny lanes). */
KD_INLINE __m512i kd_kl(const kd_c *c, __m512i a, __m512i klor)
{
	/* (a >> s) & 1 | klor in one ternary-logic op: A & B | C = 0xea */
	return _mm512_ternarylogic_epi64(_mm512_srlv_epi64(a, c->s), c->one, klor, 0xea);
}

/* Results above max, and zero results when zeros are special (fnuz):
 * r - zs > max - zs, unsigned, with zs = 1 or 0. */
KD_INLINE __mmask8 kd_bad(const kd_c *c, __m512i r)
{
	return _mm512_cmpgt_epu64_mask(_mm512_sub_epi64(r, c->zs), c->maxzs);
}

/* The counters, one per lane: inexact and underflowing lanes among those
 * the kernel does. */
typedef struct kd_acc {
	__m512i inexact, under;
} kd_acc;

/* A vector done by kd_tiny: the rounded magnitudes, the tiny lanes left
 * to the scalar engine, and the inexact and underflowing lanes. */
typedef struct kd_tout {
	__m512i r;
	__mmask8 spc, inexact, under;
} kd_tout;

/* A vector with tiny lanes (rare): the scaled arithmetic of the header
 * comment when the format allows it, else the scalar engine for them. */
KD_INLINE kd_tout kd_tiny(const kd_c *c, fpl_rnd rnd, __m512i u, __mmask8 tiny, uint64_t idx0)
{
	kd_tout o;
	__m512i a = _mm512_and_si512(u, c->absm), a0 = a, d = _mm512_setzero_si512(), r, klor;
	__mmask8 neg = _mm512_movepi64_mask(u), sticky = 0, tu = tiny;

	if (c->sub_ok) {
		/* Y = floor(|x| / Q * 2^s) = M >> (emin_b - max(be, 1)), with M
		 * the significand and be the biased exponent of x (integer
		 * arithmetic: subnormal floating-point operands are slow) */
		__m512i be = _mm512_srli_epi64(a, 52), fr = _mm512_and_si512(a, c->frac);
		__m512i M = _mm512_mask_or_epi64(fr, _mm512_test_epi64_mask(be, be), fr, c->imp);
		__m512i sh = _mm512_sub_epi64(c->emin_b, _mm512_max_epu64(be, c->one));
		__m512i lost = _mm512_sub_epi64(_mm512_sllv_epi64(c->one, sh), c->one);
		sticky = _mm512_mask_test_epi64_mask(tiny, M, lost);
		a = _mm512_mask_mov_epi64(a, tiny, _mm512_srlv_epi64(M, sh));
		if (rnd != FPL_RND_SP)
			a = _mm512_mask_or_epi64(a, sticky, a, c->one);
	}
	if (rnd == FPL_RND_SP || rnd == FPL_RND_SE)
		d = kd_draw(c, idx0);
	klor = _mm512_maskz_mov_epi64((__mmask8)~tiny, c->klor);
	r = kd_pick(c, rnd, a, neg, kd_kl(c, a, klor), d);
	o.inexact = _mm512_test_epi64_mask(a, c->mask) | sticky;
	if (c->sub_ok) {
		/* K 2^s units of 2^(emin-52): exact, r <= 2^52 */
		__m512d back = _mm512_mul_pd(_mm512_cvtepu64_pd(r), c->unit);
		r = _mm512_mask_mov_epi64(r, tiny, _mm512_castpd_si512(back));
		/* tininess after rounding: is x rounded to precision p with an
		 * unbounded exponent (same mode and draw) below 2^emin?  Only
		 * |x| >= 2^(emin-1) can reach 2^emin, and for a binary64
		 * normal x (uok: emin_b >= 2) that rounding is the normal
		 * range's arithmetic on the raw bits; for the others, a lane
		 * that reaches 2^emin goes to the scalar engine */
		o.spc = 0;
		if (!c->tiny_before && c->uok)
			tu = tiny & _mm512_cmplt_epu64_mask(kd_pick(c, rnd, a0, neg,
								    kd_kl(c, a0, c->klor), d),
							    c->min);
		else if (!c->tiny_before)
			o.spc = tiny & _mm512_cmpge_epu64_mask(r, c->min);
	} else {
		o.spc = tiny;
	}
	o.under = o.inexact & tu;
	o.r = r;
	return o;
}

/* Rare lanes, found by kd_bad or kd_tiny: what the kernel still does
 * itself, and the scalar engine for the rest. */
typedef struct kd_rout {
	__m512i r;		/* the vector with signs, every lane done */
	__mmask8 scalar;	/* lanes the scalar engine did (flags counted there) */
	__mmask8 ovf;		/* overflows done here: inexact too */
} kd_rout;

typedef struct kd_rcnt {
	size_t special, overflow, saturated;
} kd_rcnt;

/*
 * r: rounded magnitudes; bad: lanes with r above max or a special zero;
 * spc: tiny lanes for the scalar engine.  Done here, as round_pack.c's
 * overflow() does them:
 *  - finite x whose result overflows: +-max when the mode goes toward
 *    zero (tz, od; tp for negatives, tn for positives; sp and se when the
 *    draw kept the truncation and the truncation is at most max), else
 *    ovf_bits (inf, NaN, or max with "saturated");
 *  - fnuz zeros: +0 (the format has no -0), flags as computed.
 * NaN and infinite inputs, and spc, go to the scalar engine.
 */
static __attribute__((noinline)) kd_rout kd_rare(const kd_c *c, fpl_rnd rnd, __m512i u,
						 __m512i r, __mmask8 bad, __mmask8 spc,
						 __mmask8 live, size_t j, fpl_kslow slow,
						 void *ctx, kd_rcnt *cnt)
{
	__m512i a = _mm512_and_si512(u, c->absm), sign = _mm512_andnot_si512(c->absm, u);
	__mmask8 neg = _mm512_movepi64_mask(u), fin = _mm512_cmplt_epu64_mask(a, c->inf);
	__mmask8 scalar = (spc | (bad & (__mmask8)~fin)) & live;
	__mmask8 ovf = bad & fin & _mm512_cmpgt_epu64_mask(r, c->max) & (__mmask8)~scalar & live;
	__mmask8 inf;
	kd_rout o;

	switch (rnd) {
	case FPL_RND_TZ:
	case FPL_RND_OD:
		inf = 0;
		break;
	case FPL_RND_TP:
		inf = (__mmask8)~neg;
		break;
	case FPL_RND_TN:
		inf = neg;
		break;
	case FPL_RND_SP:
	case FPL_RND_SE: {
		__m512i tr = _mm512_andnot_si512(c->mask, a);
		inf = _mm512_cmpneq_epi64_mask(r, tr) | _mm512_cmpgt_epu64_mask(tr, c->max);
		break;
	}
	default:
		inf = 0xff;
		break;
	}
	inf &= ovf;
	/* zero magnitudes keep no sign only when zeros are special (fnuz) */
	if (c->zero_special)
		sign = _mm512_maskz_mov_epi64(_mm512_test_epi64_mask(r, r), sign);
	o.r = _mm512_or_si512(r, sign);
	o.r = _mm512_mask_mov_epi64(o.r, ovf & (__mmask8)~inf, _mm512_or_si512(c->max, sign));
	o.r = _mm512_mask_mov_epi64(o.r, inf & (__mmask8)~neg, c->ovf_pos);
	o.r = _mm512_mask_mov_epi64(o.r, inf & neg, c->ovf_neg);
	cnt->overflow += (size_t)__builtin_popcount(ovf);
	if (c->ovf_sat)
		cnt->saturated += (size_t)__builtin_popcount(inf);
	if (scalar) {
		double in[8], res[8];
		unsigned m = scalar;
		_mm512_storeu_pd(in, _mm512_castsi512_pd(u));
		_mm512_storeu_pd(res, _mm512_castsi512_pd(o.r));
		while (m) {
			unsigned i = (unsigned)__builtin_ctz(m);
			res[i] = slow(ctx, j + i, in[i]);
			cnt->special++;
			m &= m - 1;
		}
		o.r = _mm512_castpd_si512(_mm512_loadu_pd(res));
	}
	o.scalar = scalar;
	o.ovf = ovf;
	return o;
}

/* One vector at offset j, lanes `live` (all but in a head or tail). */
KD_INLINE __m512i kd_vec(const kd_c *c, fpl_rnd rnd, __m512i u, size_t j, uint64_t idx0,
			 __mmask8 live, kd_acc *acc, fpl_kslow slow, void *ctx, kd_rcnt *cnt)
{
	__m512i a = _mm512_and_si512(u, c->absm), d = _mm512_setzero_si512(), r;
	/* 0 < a < 2^emin as one unsigned compare: a - 1 wraps for zero */
	__mmask8 tiny = _mm512_cmplt_epu64_mask(_mm512_add_epi64(a, c->minus1), c->minm1) & live;
	__mmask8 spc = 0, bad, inexact, under = 0;

	if (__builtin_expect(tiny != 0, 0)) {
		kd_tout o = kd_tiny(c, rnd, u, tiny, idx0);
		r = o.r;
		spc = o.spc;
		inexact = o.inexact & live;
		under = o.under & live;
	} else {
		if (rnd == FPL_RND_SP || rnd == FPL_RND_SE)
			d = kd_draw(c, idx0);
		r = kd_pick(c, rnd, a, _mm512_movepi64_mask(u), kd_kl(c, a, c->klor), d);
		inexact = _mm512_test_epi64_mask(a, c->mask) & live;
	}
	bad = kd_bad(c, r) & live;
	if (__builtin_expect((bad | spc) != 0, 0)) {
		kd_rout o = kd_rare(c, rnd, u, r, bad, spc, live, j, slow, ctx, cnt);
		inexact = (inexact | o.ovf) & (__mmask8)~o.scalar;
		under &= (__mmask8)~o.scalar;
		r = o.r;
	} else {
		r = _mm512_ternarylogic_epi64(r, u, c->absm, 0xf4);	/* r | (u & ~absm) */
	}
	acc->inexact = _mm512_mask_sub_epi64(acc->inexact, inexact, acc->inexact, c->minus1);
	if (under)
		acc->under = _mm512_mask_sub_epi64(acc->under, under, acc->under, c->minus1);
	return r;
}

/* kd_vec out of line, for the loops' rare vectors: inlined there, its
 * temporaries made the compiler keep the loops' counters in memory. */
#define KD_VEC_CASE(M) \
	case M: \
		return kd_vec(c, M, u, j, idx0, live, acc, slow, ctx, cnt)

static __attribute__((noinline)) __m512i kd_vec_nl(const kd_c *c, fpl_rnd rnd, __m512i u,
						   size_t j, uint64_t idx0, __mmask8 live,
						   kd_acc *acc, fpl_kslow slow, void *ctx,
						   kd_rcnt *cnt)
{
	switch (rnd) {
	KD_VEC_CASE(FPL_RND_NE);
	KD_VEC_CASE(FPL_RND_NA);
	KD_VEC_CASE(FPL_RND_NZ);
	KD_VEC_CASE(FPL_RND_TP);
	KD_VEC_CASE(FPL_RND_TN);
	KD_VEC_CASE(FPL_RND_OD);
	KD_VEC_CASE(FPL_RND_SP);
	KD_VEC_CASE(FPL_RND_SE);
	default:
		return kd_vec(c, FPL_RND_TZ, u, j, idx0, live, acc, slow, ctx, cnt);
	}
}

#undef KD_VEC_CASE

/* Element access: binary64 lanes, or binary32 lanes widened on loading
 * (exact; a signaling NaN is quieted, but NaN lanes go to the scalar
 * engine, which reads the original) and narrowed on storing (exact: the
 * caller checked that every value of the format fits). */
KD_INLINE __m512i kd_load(const void *x, size_t j, __mmask8 m, int f32)
{
	if (f32) {
		const float *xf = (const float *)x + j;
		return _mm512_castpd_si512(_mm512_cvtps_pd(m == 0xff ? _mm256_loadu_ps(xf)
							   : _mm256_maskz_loadu_ps(m, xf)));
	}
	if (m == 0xff)
		return _mm512_loadu_si512((const double *)x + j);
	return _mm512_maskz_loadu_epi64(m, (const double *)x + j);
}

KD_INLINE void kd_store(void *z, size_t j, __m512i r, __mmask8 m, int stream, int f32)
{
	if (f32) {
		float *zf = (float *)z + j;
		__m256 v = _mm512_cvtpd_ps(_mm512_castsi512_pd(r));
		if (m != 0xff)
			_mm256_mask_storeu_ps(zf, m, v);
		else if (stream)
			_mm256_stream_ps(zf, v);
		else
			_mm256_storeu_ps(zf, v);
		return;
	}
	if (m != 0xff)
		_mm512_mask_storeu_epi64((double *)z + j, m, r);
	else if (stream)
		_mm512_stream_si512((void *)((double *)z + j), r);
	else
		_mm512_storeu_si512((double *)z + j, r);
}

/* ---- binary32 arrays: sixteen 32-bit lanes ------------------------- */

/* Loop invariants of the binary32 lanes (kf_setup).  s32 = s - 29: the
 * float fraction bits below the kept lsb. */
typedef struct kf_c {
	__m512i absm, one, q, mask, half, halfm1, klor, s, lal;	/* lal = 32 - s32 */
	__m512i minm1, min, max, rmask, rlo, odd_words;	/* rlo = rmask >> (32 - s32) */
	__m512i umin, sgn;			/* see kf_vec; the sign bit */
	__m512 C, Qf, halfQ, tscale, t55;	/* tiny lanes: see kf_vec */
	int ok;					/* 1 <= s32: the 32-bit lanes apply */
	int tiny_ok;				/* tiny lanes done in the 32-bit lanes */
	int uok, tiny_before, zero_special;
} kf_c;

/* The high words of the draws of elements idx..idx+15, in element order,
 * from z0, z1 = kd_base(idx), kd_base(idx + 8): sp and se read only the
 * top R <= 32 bits of a draw.  The last xorshift of the mix, z ^ (z >>
 * 31), changes the high word h of z only by h >> 31: it is done on the
 * high words. */
KD_INLINE __m512i kf_dh(const kf_c *f, __m512i z0, __m512i z1, int top_only)
{
	__m512i h = _mm512_permutex2var_epi32(kd_mix2(z0), f->odd_words, kd_mix2(z1));
	if (top_only)	/* h >> 31 leaves the top bit alone (se reads only it) */
		return h;
	return _mm512_xor_si512(h, _mm512_srli_epi32(h, 31));
}

/* The draws of the sixteen elements whose mix arguments are z0, z1, as
 * kf_pick and kf_vec read them: the high words before the last xorshift
 * (kf_dh), which se's top bit and sp's aligned increment (kf_pick) do not
 * see; sp's tiny lanes apply it (kf_dn). */
KD_INLINE __m512i kf_draws(const kf_c *f, __m512i z0, __m512i z1)
{
	return kf_dh(f, z0, z1, 1);
}

/* ~r' for sp's tiny lanes from kf_draws' h: r' = the draw's top R bits in
 * place (high word h ^ (h >> 31), masked), complemented, in one ternary
 * op: ~((A ^ B) & C) = 0xd7. */
KD_INLINE __m512i kf_dn(const kf_c *f, __m512i h)
{
	return _mm512_ternarylogic_epi32(h, _mm512_srli_epi32(h, 31), f->rmask, 0xd7);
}

/* kd_pick on sixteen binary32 lanes: the same increments on the float
 * bits (kd_pick's comment); dh is kf_draws' h.  sp rounds up iff T + r
 * >= 2^R, T the R bits below the kept lsb (T = floor(F 2^R / 2^s32), F
 * the s32 fraction bits there), r the draw's top R bits.  That is an
 * increment like the other modes': with r'' = r 2^(s32-R) when R <= s32
 * and floor(r / 2^(R-s32)) when R > s32 (the top s32 bits of r' = r
 * 2^(32-R), r' >> (32 - s32)), T + r >= 2^R iff F + r'' >= 2^s32, the
 * carry into the kept lsb of a + r''.  R <= s32: T = floor(F /
 * 2^(s32-R)) >= 2^R - r iff F >= (2^R - r) 2^(s32-R) (an integer bound).
 * R > s32: T = F 2^(R-s32), r = r'' 2^(R-s32) + l with l < 2^(R-s32),
 * so T + r = (F + r'') 2^(R-s32) + l reaches 2^R iff F + r'' >= 2^s32.
 * r'' = (h >> (32 - s32)) & (rmask >> (32 - s32)): the last xorshift
 * h ^ (h >> 31) changes bit 0 of h only, which the shift drops (32 - s32
 * >= 9), and a + r'' < 2^31 + 2^23 does not wrap.  (The carry out of 32
 * bits, T'' > ~r', that sp's tiny lanes read: kf_vec.) */
KD_INLINE __m512i kf_pick(const kf_c *f, fpl_rnd rnd, __m512i a, __mmask16 neg, __m512i dh)
{
	const __m512i tr = _mm512_andnot_si512(f->mask, a);
	/* (a >> s) & 1 | klor: A & B | C = 0xea */
	__m512i kl = _mm512_ternarylogic_epi32(_mm512_srlv_epi32(a, f->s), f->one, f->klor, 0xea);

	switch (rnd) {
	case FPL_RND_NE:
		return _mm512_andnot_si512(f->mask, _mm512_add_epi32(_mm512_add_epi32(a, kl), f->halfm1));
	case FPL_RND_NA:
		return _mm512_andnot_si512(f->mask, _mm512_add_epi32(a, f->half));
	case FPL_RND_NZ:
		return _mm512_andnot_si512(f->mask, _mm512_add_epi32(a, f->halfm1));
	case FPL_RND_TP:
		return _mm512_mask_mov_epi32(_mm512_andnot_si512(f->mask, _mm512_add_epi32(a, f->mask)),
					     neg, tr);
	case FPL_RND_TN:
		return _mm512_mask_mov_epi32(tr, neg,
					     _mm512_andnot_si512(f->mask, _mm512_add_epi32(a, f->mask)));
	case FPL_RND_OD: {
		__mmask16 up = _mm512_test_epi32_mask(a, f->mask) & _mm512_testn_epi32_mask(kl, kl);
		return _mm512_mask_or_epi32(tr, up, tr, f->q);
	}
	case FPL_RND_SP: {
		__m512i r2 = _mm512_and_si512(_mm512_srlv_epi32(dh, f->lal), f->rlo);
		return _mm512_andnot_si512(f->mask, _mm512_add_epi32(a, r2));
	}
	case FPL_RND_SE:
		/* up iff inexact and the draw's top bit: tp's increment
		 * (mask, a carry iff a discarded bit is set) where the top
		 * bit is set (h >> 31 arithmetic: all ones there) */
		return _mm512_andnot_si512(f->mask,
					   _mm512_add_epi32(a, _mm512_and_si512(_mm512_srai_epi32(dh, 31),
										f->mask)));
	default:	/* tz */
		return tr;
	}
}

/* What a binary32 vector reports to the loop. */
typedef struct kf_out {
	__m512i r;
	__mmask16 inexact, under, tiny, odd;
} kf_out;

/*
 * Sixteen binary32 lanes.  Zero and normal lanes: kf_pick on the raw bits
 * (rn).  Tiny lanes, 0 < |x| < 2^emin, when tf (branch-free, or the vector
 * has one) and f->tiny_ok: with C = 2^23 Q, Q = 2^(emin-m) the subnormal
 * quantum, |x| + C lies in [C, 2C], where binary32's spacing is Q, so one
 * addition rounded toward zero (embedded rounding, whatever MXCSR says)
 * is C + K Q with K = floor(|x| / Q), K's lsb the last bit of the sum;
 * K Q = that sum - C is exact (Sterbenz), and so is rem = |x| - K Q: if
 * K = 0 it is |x|, else |x| >= Q and rem < Q <= 2^e(x) is a multiple of
 * |x|'s ulp (< Q: m <= 22).  The mode then decides from rem (a positive
 * float, compared by its bits) as kb_pick does from the discarded bits:
 * ne up iff rem > Q/2 or rem = Q/2 and K odd, na iff rem >= Q/2, nz iff
 * rem > Q/2, tp/tn iff inexact with the sign, od iff inexact and K even,
 * se iff inexact and the draw's top bit, sp iff T + r >= 2^R with T =
 * floor(rem/Q 2^R), read as the carry out of 32 bits of T' + r', T' the
 * top R bits of floor(rem 2^32/Q), computed exactly by two fused steps
 * and a truncating conversion (rem 2^32/Q < 2^32).  The result (K + up) Q
 * <= 2^emin is exact: the sum's encoding plus up (C + (K + up) Q <= 2C,
 * in a binade of spacing Q), less C, merged into rn in the tiny lanes by
 * one masked subtraction (na and nz: K Q + up Q).  In branch-free spans
 * the zero lanes go with the tiny ones: 0 + C = C, rem = 0, and no mode
 * moves it, so they give +0, inexact in no lane.  Tininess after rounding as in kd_tiny: rn of a tiny lane is x
 * rounded to precision p with an unbounded exponent when x's binade
 * below 2^emin is a float normal (uok); tiny_ok is off when that fails
 * and tininess is after rounding.  odd: lanes above max, inf, NaN, and
 * tiny lanes when the lanes cannot do them; the caller then does the
 * vector in binary64 lanes.  An fnuz zero result is +0 (flags as
 * computed, as kd_rare).
 */
KD_INLINE kf_out kf_vec(const kf_c *f, fpl_rnd rnd, __m512i u, __m512i dh, int tf)
{
	__m512i a = _mm512_and_si512(u, f->absm);
	__mmask16 neg = _mm512_movepi32_mask(u);
	/* branch-free (tf): the zero lanes too, which the tiny-lane steps
	 * give +0, exactly (0 + C = C in every mode, rem = 0, no draw read
	 * moves it); otherwise 0 < |x| < 2^emin, whose lanes branch */
	__mmask16 tiny = tf && f->tiny_ok ? _mm512_cmplt_epu32_mask(a, f->min)
		: _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, f->one), f->minm1);
	__m512i rn = kf_pick(f, rnd, a, neg, dh), r = rn;
	kf_out o;

	/* inf and NaN give rn >= bits(inf) > max too (no wrap: a < 2^31) */
	o.odd = _mm512_cmpgt_epu32_mask(rn, f->max);
	if (tf || tiny) {
		__m512 af = _mm512_castsi512_ps(a);
		if (!f->tiny_ok) {
			o.odd |= tiny;
		} else if (rnd == FPL_RND_NE || rnd == FPL_RND_TZ) {
			/* one addition in the mode itself: |x| + C rounds |x| / Q
			 * to an integer as the mode does, and - C is exact (in
			 * the tiny lanes: the others keep rn) */
			__m512 t;
			if (rnd == FPL_RND_NE)
				t = _mm512_add_round_ps(af, f->C, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
			else
				t = _mm512_add_round_ps(af, f->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			r = _mm512_castps_si512(_mm512_mask_sub_ps(_mm512_castsi512_ps(rn), tiny, t, f->C));
		} else if (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_SE) {
			/* the magnitude rounds up in the lanes of one sign (se:
			 * whose draw has its top bit set; up iff inexact there):
			 * toward +inf there, toward zero in the others */
			__mmask16 upl = rnd == FPL_RND_TP ? (__mmask16)~neg
					: rnd == FPL_RND_TN ? neg : _mm512_movepi32_mask(dh);
			__m512 t = _mm512_add_round_ps(af, f->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			t = _mm512_mask_add_round_ps(t, upl, af, f->C,
						     _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
			r = _mm512_castps_si512(_mm512_mask_sub_ps(_mm512_castsi512_ps(rn), tiny, t, f->C));
		} else if (rnd == FPL_RND_OD) {
			/* truncation K Q, inexact iff K Q != |x|; od makes K
			 * odd (its lsb is the sum's last bit: one to the sum's
			 * encoding, C + K Q <= C + (2^m - 1) Q < 2C, whose
			 * spacing is Q) */
			__m512i rz = _mm512_castps_si512(
				_mm512_add_round_ps(af, f->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
			__m512 kq = _mm512_sub_ps(_mm512_castsi512_ps(rz), f->C);
			__mmask16 ix = _mm512_cmpneq_epi32_mask(_mm512_castps_si512(kq), a);
			rz = _mm512_mask_or_epi32(rz, ix, rz, f->one);
			r = _mm512_castps_si512(_mm512_mask_sub_ps(_mm512_castsi512_ps(rn), tiny,
								   _mm512_castsi512_ps(rz), f->C));
		} else if (rnd == FPL_RND_SP) {
			/* rz = C + K Q (toward zero); then rem 2^32/Q = |x|
			 * 2^32/Q - K 2^32 in two fused steps, each exact: rz
			 * tscale - 2^55 = (rz - C) 2^32/Q = K 2^32 (C tscale =
			 * 2^55, K < 2^m), and |x| tscale - K 2^32 = rem 2^32/Q
			 * (rem's bits scaled, below 2^32).  T'' is its
			 * truncation, and T + r >= 2^R as the carry out of 32
			 * bits of T' + r', T' = the top R bits of T'' in place:
			 * the bits of T'' below them (l < 2^(32-R)) leave T'' +
			 * r' = (T + r) 2^(32-R) + l at or above 2^32 exactly
			 * when T + r >= 2^R; with 32-bit T'' and r', T'' + r' >=
			 * 2^32 iff T'' > 2^32 - 1 - r' = ~r' (kf_dn), one
			 * compare.  K + 1 as one more in rz's encoding (as se) */
			__m512 rz = _mm512_add_round_ps(af, f->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			__m512 kt = _mm512_fmsub_ps(rz, f->tscale, f->t55);
			__m512i T = _mm512_cvttps_epu32(_mm512_fmsub_ps(af, f->tscale, kt));
			__m512i rzi = _mm512_castps_si512(rz);
			rzi = _mm512_mask_add_epi32(rzi, _mm512_cmpgt_epu32_mask(T, kf_dn(f, dh)), rzi, f->one);
			r = _mm512_castps_si512(_mm512_mask_sub_ps(_mm512_castsi512_ps(rn), tiny,
								   _mm512_castsi512_ps(rzi), f->C));
		} else {
			/* na, nz: from rem = |x| - K Q */
			__m512 rz = _mm512_add_round_ps(af, f->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			__m512 kq = _mm512_sub_ps(rz, f->C), rem = _mm512_sub_ps(af, kq);
			__m512i rb = _mm512_castps_si512(rem), hb = _mm512_castps_si512(f->halfQ);
			__mmask16 up = rnd == FPL_RND_NA ? _mm512_cmpge_epu32_mask(rb, hb)
						     : _mm512_cmpgt_epu32_mask(rb, hb);
			kq = _mm512_mask_add_ps(kq, up, kq, f->Qf);
			r = _mm512_mask_mov_epi32(rn, tiny, _mm512_castps_si512(kq));
		}
		/* as in kd_fast */
		o.inexact = _mm512_cmpneq_epi32_mask(r, a);
		o.under = _mm512_mask_cmplt_epu32_mask(o.inexact & tiny, rn, f->umin);
	} else {
		o.inexact = _mm512_test_epi32_mask(a, f->mask);
		o.under = 0;
	}
	/* x's sign on the magnitude r (< 2^31 in every lane not odd): r | (u
	 * & sign), one ternary op (A | (B & C) = 0xf8); fnuz: a zero result
	 * loses its sign (+0: the zeroing mask drops the lanes with r = 0) */
	o.tiny = tiny;
	if (f->zero_special)
		o.r = _mm512_maskz_ternarylogic_epi32(_mm512_test_epi32_mask(r, r), r, u, f->sgn, 0xf8);
	else
		o.r = _mm512_ternarylogic_epi32(r, u, f->sgn, 0xf8);
	return o;
}

static void kf_setup(kf_c *f, const fpl_kparams *p, fpl_rnd rnd)
{
	int s32 = (int)p->s - 29, m = 52 - (int)p->s, emin = (int)p->emin_b - 1023;
	uint64_t R = p->sr_bits;
	double dmin, dmax;
	float fmin, fmax;
	uint32_t min32, max32;
	int i, w[16];

	f->ok = s32 >= 1 && s32 <= 23;
	if (!f->ok)
		return;
	memcpy(&dmin, &p->min_bits, sizeof dmin);
	memcpy(&dmax, &p->max_bits, sizeof dmax);
	fmin = (float)dmin;	/* values of the format: exact (fits_f32) */
	fmax = (float)dmax;
	memcpy(&min32, &fmin, sizeof min32);
	memcpy(&max32, &fmax, sizeof max32);
	f->absm = _mm512_set1_epi32(0x7fffffff);
	f->one = _mm512_set1_epi32(1);
	f->q = _mm512_set1_epi32((int)(1u << s32));
	f->mask = _mm512_set1_epi32((int)((1u << s32) - 1));
	f->half = _mm512_set1_epi32((int)(1u << (s32 - 1)));
	f->halfm1 = _mm512_set1_epi32((int)((1u << (s32 - 1)) - 1));
	f->klor = _mm512_set1_epi32(s32 == 23);
	f->s = _mm512_set1_epi32(s32);
	f->lal = _mm512_set1_epi32(32 - s32);
	f->minm1 = _mm512_set1_epi32((int)(min32 - 1));
	f->min = _mm512_set1_epi32((int)min32);
	f->max = _mm512_set1_epi32((int)max32);
	f->umin = _mm512_set1_epi32(p->tiny_before ? -1 : (int)min32);
	f->sgn = _mm512_set1_epi32((int)0x80000000u);
	f->rmask = _mm512_set1_epi32((int)(0xffffffffu << (32 - R)));	/* 1 <= R <= 32 */
	f->rlo = _mm512_set1_epi32((int)((0xffffffffu << (32 - R)) >> (32 - s32)));
	for (i = 0; i < 16; i++)
		w[i] = 2 * i + 1;
	f->odd_words = _mm512_loadu_si512(w);
	f->C = _mm512_set1_ps(ldexpf(1.0f, emin - m + 23));
	f->Qf = _mm512_set1_ps(ldexpf(1.0f, emin - m));
	f->halfQ = _mm512_set1_ps(ldexpf(1.0f, emin - m - 1));
	f->tscale = _mm512_set1_ps(emin - m >= -95 ? ldexpf(1.0f, 32 - emin + m) : 0.0f);
	f->t55 = _mm512_set1_ps(0x1p55f);	/* C tscale */
	f->uok = emin >= -125;
	f->tiny_before = (int)p->tiny_before;
	f->zero_special = (int)p->zero_special;
	/* C a float normal, Q/2 a float, and for sp 2^32/Q a float */
	f->tiny_ok = p->sub_fast && emin - m + 23 >= -126 && emin - m - 1 >= -149
		     && (f->tiny_before || f->uok) && (rnd != FPL_RND_SP || emin - m >= -95);
}

/* Elements j..j+k-1 of a binary32 call (k <= 16) in binary64 lanes,
 * masked (heads, tails, and vectors kf_vec cannot do). */
static __attribute__((noinline)) void kf_wide(const kd_c *c, fpl_rnd rnd, float *z,
					      const float *x, size_t j, size_t k, uint64_t idx0,
					      int stream, kd_acc *acc, fpl_kslow slow, void *ctx,
					      kd_rcnt *cnt)
{
	size_t h;

	for (h = 0; h < k; h += 8) {
		size_t kk = k - h < 8 ? k - h : 8;
		__mmask8 m = (__mmask8)((1u << kk) - 1);
		kd_store(z, j + h, kd_vec_nl(c, rnd, kd_load(x, j + h, m, 1), j + h, idx0 + j + h, m,
					     acc, slow, ctx, cnt), m, stream && kk == 8, 1);
	}
}

/*
 * The binary32 loop: kf_vec on sixteen lanes, kf_wide for a vector it
 * cannot do.  It runs in spans of KF_SPAN vectors, each either branching
 * to the tiny-lane code only for a vector with a tiny lane, or (after a
 * span with at least KF_TON such vectors) branch-free, until a span has
 * fewer than KF_TOFF tiny lanes (zero lanes counted with them there, as
 * kf_vec does them): the same bits and counts either way,
 * only the speed differs (with N(0, 1) data, fp6 and fp4 have tiny lanes
 * in most vectors, the fp8 formats in a few).  sp and se compute a
 * vector's draws one vector ahead (by index, as always), so that their
 * multiplies are not on the path of the vector that reads them.
 */
#define KF_SPAN 64
#define KF_TON 3
#define KF_TOFF 3

/* One span of kf_run: vectors j..end-1, branch-free when tf; returns the
 * vectors with a tiny lane (tf = 0) or the tiny and zero lanes (tf = 1). */
KD_INLINE size_t kf_span(const kd_c *c, const kf_c *f, fpl_rnd rnd, int stream, int tf, float *z,
			 const float *x, size_t j, size_t end, uint64_t idx0, kd_acc *acc,
			 fpl_kslow slow, void *ctx, kd_rcnt *cnt)
{
	const int draws = rnd == FPL_RND_SP || rnd == FPL_RND_SE;
	const __m512i m1 = _mm512_set1_epi32(-1);
	__m512i vix = _mm512_setzero_si512(), vun = vix;	/* per-lane counts, < 2^31 */
	size_t ntiny = 0;

	__m512i z0 = kd_base(c, idx0 + j), z1 = kd_base(c, idx0 + j + 8);
	const __m512i step = _mm512_set1_epi64((long long)(16 * KD_GOLDEN));
	__m512i dh = draws ? kf_draws(f, z0, z1) : _mm512_setzero_si512();

	for (; j < end; j += 16) {
		__m512i u = _mm512_loadu_si512(x + j), dhn = dh;
		/* the next vector's draws first (unused after the last):
		 * their multiplies start an iteration before they are read */
		if (draws) {
			z0 = _mm512_add_epi64(z0, step);
			z1 = _mm512_add_epi64(z1, step);
			dhn = kf_draws(f, z0, z1);
		}
		kf_out o = kf_vec(f, rnd, u, dh, tf);
		dh = dhn;
		if (__builtin_expect(o.odd != 0, 0)) {
			kf_wide(c, rnd, z, x, j, 16, idx0, stream, acc, slow, ctx, cnt);
		} else {
			vix = _mm512_mask_sub_epi32(vix, o.inexact, vix, m1);
			vun = _mm512_mask_sub_epi32(vun, o.under, vun, m1);
			if (stream)
				_mm512_stream_si512((void *)(z + j), o.r);
			else
				_mm512_storeu_si512(z + j, o.r);
		}
		ntiny += tf ? (size_t)__builtin_popcount(o.tiny) : o.tiny != 0;
	}
	/* the 32-bit lanes to 64 bits, into *acc */
	acc->inexact = _mm512_add_epi64(acc->inexact,
					_mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(vix)),
							 _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(vix, 1))));
	acc->under = _mm512_add_epi64(acc->under,
				      _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(vun)),
						       _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(vun, 1))));
	return ntiny;
}

KD_INLINE void kf_run(const kd_c *c, const kf_c *f, fpl_rnd rnd, int stream, float *z,
		      const float *x, size_t n, uint64_t idx0, kd_acc *acc, fpl_kslow slow,
		      void *ctx, kd_rcnt *cnt)
{
	size_t j = 0;
	int bf = 0;

	if (stream && ((uintptr_t)z & 63)) {
		size_t h = (64 - ((uintptr_t)z & 63)) / 4;
		if (h > n)
			h = n;
		kf_wide(c, rnd, z, x, 0, h, idx0, 0, acc, slow, ctx, cnt);
		j = h;
	}
	while (j + 16 <= n) {
		size_t nv = (n - j) / 16 > KF_SPAN ? KF_SPAN : (n - j) / 16, end = j + 16 * nv;
		if (bf)
			bf = kf_span(c, f, rnd, stream, 1, z, x, j, end, idx0, acc, slow, ctx, cnt)
			     >= KF_TOFF;
		else
			bf = kf_span(c, f, rnd, stream, 0, z, x, j, end, idx0, acc, slow, ctx, cnt)
			     >= KF_TON && f->tiny_ok;
		j = end;
	}
	if (j < n)
		kf_wide(c, rnd, z, x, j, n - j, idx0, 0, acc, slow, ctx, cnt);
}

/* ---- binary64 arrays: the common loop ------------------------------ */

/* Constants of kd_fast's tiny lanes (kd_fsetup). */
typedef struct kd_f {
	__m512d C, Qd, halfQ, tscale;
	__m512i rmask;
	int tiny_ok;
} kd_f;

/* What a binary64 vector reports to the loop. */
typedef struct kd_out {
	__m512i r;
	__mmask8 inexact, under, tiny, odd;
} kd_out;

/*
 * Eight binary64 lanes, kf_vec's arithmetic on the binary64 encoding:
 * zero and normal lanes by kd_pick on the raw bits (rn); tiny lanes, when
 * tf (branch-free, or the vector has one) and g->tiny_ok, by |x| + C
 * with C = 2^52 Q, binary64's spacing Q in [C, 2C]: in the mode itself
 * for ne and tz, else rounded toward zero, K Q = that - C and rem = |x| -
 * K Q exact (kf_vec's argument with 52 for 23: |x|'s ulp is below Q as
 * m <= 51), and the mode's decision from rem; sp's T' is the top R bits
 * of floor(rem 2^64 / Q) (exact scaling, truncating conversion, rem
 * 2^64 / Q < 2^64) and the carry out of 64 bits of T' + r', r' the top R
 * bits of the draw.  Tininess after rounding by rn (kd_tiny's comment).
 * odd: lanes above max, inf, NaN, and tiny lanes the lanes cannot do;
 * the caller then does the vector with kd_vec.  An fnuz zero result is
 * +0, as kd_rare makes it.
 */
KD_INLINE kd_out kd_fast(const kd_c *c, const kd_f *g, fpl_rnd rnd, __m512i u, __m512i d, int tf)
{
	__m512i a = _mm512_and_si512(u, c->absm);
	__mmask8 neg = _mm512_movepi64_mask(u);
	__mmask8 tiny = _mm512_cmplt_epu64_mask(_mm512_add_epi64(a, c->minus1), c->minm1);
	__m512i rn = kd_pick(c, rnd, a, neg, kd_kl(c, a, c->klor), d), r = rn;
	kd_out o;

	/* inf and NaN give rn >= bits(inf) > max too (no wrap: a < 2^63) */
	o.odd = _mm512_cmpgt_epu64_mask(rn, c->max);
	if (tf || tiny) {
		__m512d af = _mm512_castsi512_pd(a), t;
		if (!g->tiny_ok) {
			o.odd |= tiny;
		} else if (rnd == FPL_RND_NE || rnd == FPL_RND_TZ) {
			if (rnd == FPL_RND_NE)
				t = _mm512_add_round_pd(af, g->C, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
			else
				t = _mm512_add_round_pd(af, g->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			t = _mm512_sub_pd(t, g->C);
			r = _mm512_mask_mov_epi64(rn, tiny, _mm512_castpd_si512(t));
		} else if (rnd == FPL_RND_TP || rnd == FPL_RND_TN) {	/* as kf_vec */
			t = _mm512_add_round_pd(af, g->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			t = _mm512_mask_add_round_pd(t, rnd == FPL_RND_TP ? (__mmask8)~neg : neg, af, g->C,
						     _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
			t = _mm512_sub_pd(t, g->C);
			r = _mm512_mask_mov_epi64(rn, tiny, _mm512_castpd_si512(t));
		} else if (rnd == FPL_RND_OD || rnd == FPL_RND_SE) {	/* as kf_vec */
			__m512d rz = _mm512_add_round_pd(af, g->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			__m512d kq = _mm512_sub_pd(rz, g->C);
			__mmask8 ix = _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(kq), a);
			if (rnd == FPL_RND_OD)
				kq = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_mask_or_epi64(
							   _mm512_castpd_si512(rz), ix,
							   _mm512_castpd_si512(rz), c->one)),
						   g->C);
			else
				kq = _mm512_mask_add_pd(kq, ix & _mm512_movepi64_mask(d), kq, g->Qd);
			r = _mm512_mask_mov_epi64(rn, tiny, _mm512_castpd_si512(kq));
		} else {
			__m512d rz = _mm512_add_round_pd(af, g->C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
			__m512d kq = _mm512_sub_pd(rz, g->C), rem = _mm512_sub_pd(af, kq);
			__m512i rb = _mm512_castpd_si512(rem), hb = _mm512_castpd_si512(g->halfQ);
			__mmask8 up, kodd = _mm512_test_epi64_mask(_mm512_castpd_si512(rz), c->one);
			__mmask8 ix = _mm512_test_epi64_mask(rb, rb);
			switch (rnd) {
			case FPL_RND_NA:
				up = _mm512_cmpge_epu64_mask(rb, hb);
				break;
			case FPL_RND_NZ:
				up = _mm512_cmpgt_epu64_mask(rb, hb);
				break;
			case FPL_RND_TP:
				up = ix & (__mmask8)~neg;
				break;
			case FPL_RND_TN:
				up = ix & neg;
				break;
			case FPL_RND_OD:
				up = ix & (__mmask8)~kodd;
				break;
			case FPL_RND_SP: {
				/* the bits of T' below the top R do not change the
				 * carry (kf_pick's comment) */
				__m512i T = _mm512_cvttpd_epu64(_mm512_mul_pd(rem, g->tscale));
				__m512i sum = _mm512_add_epi64(T, _mm512_and_si512(d, g->rmask));
				up = _mm512_cmplt_epu64_mask(sum, T);
				break;
			}
			case FPL_RND_SE:
				up = ix & _mm512_movepi64_mask(d);
				break;
			default:
				up = 0;
				break;
			}
			kq = _mm512_mask_add_pd(kq, up, kq, g->Qd);
			r = _mm512_mask_mov_epi64(rn, tiny, _mm512_castpd_si512(kq));
		}
		/* inexact iff the result differs from |x|; a tiny inexact
		 * lane underflows when tininess is before rounding (umin =
		 * all ones) or x rounded with an unbounded exponent, rn, is
		 * below 2^emin */
		o.inexact = _mm512_cmpneq_epi64_mask(r, a);
		o.under = _mm512_mask_cmplt_epu64_mask(o.inexact & tiny, rn, c->umin);
	} else {
		o.inexact = _mm512_test_epi64_mask(a, c->mask);
		o.under = 0;
	}
	o.tiny = tiny;
	/* x's sign on r, as in kf_vec (r < 2^63 in every lane not odd) */
	const __m512i sgn = _mm512_set1_epi64(INT64_MIN);
	if (c->zero_special)
		o.r = _mm512_maskz_ternarylogic_epi64(_mm512_test_epi64_mask(r, r), r, u, sgn, 0xf8);
	else
		o.r = _mm512_ternarylogic_epi64(r, u, sgn, 0xf8);
	return o;
}

static void kd_fsetup(kd_f *g, const fpl_kparams *p, fpl_rnd rnd, int uok)
{
	int m = 52 - (int)p->s, emin = (int)p->emin_b - 1023, R = (int)p->sr_bits;

	g->C = _mm512_set1_pd(ldexp(1.0, emin - m + 52));
	g->Qd = _mm512_set1_pd(ldexp(1.0, emin - m));
	g->halfQ = _mm512_set1_pd(ldexp(1.0, emin - m - 1));
	g->tscale = _mm512_set1_pd(emin - m >= -959 ? ldexp(1.0, 64 - emin + m) : 0.0);
	g->rmask = _mm512_set1_epi64((long long)(~0ull << (64 - R)));	/* 1 <= R <= 32 */
	/* C a normal double, Q/2 a double, for sp 2^64/Q a double */
	g->tiny_ok = p->sub_fast && emin - m + 52 >= -1022 && emin - m - 1 >= -1074
		     && (p->tiny_before || uok) && (rnd != FPL_RND_SP || emin - m >= -959);
}

/* The binary64 loop, as kf_run: spans of KF_SPAN vectors, branching to
 * the tiny-lane code per vector or branch-free (after KD_TON vectors with
 * a tiny lane in a span, until fewer than KD_TOFF tiny lanes: eight lanes
 * a vector make the branch-free code pay off later than in kf_run);
 * kd_vec for a vector kd_fast cannot do. */
#define KD_TON 24
#define KD_TOFF 16

/* One span of kd_loop: vectors j..end-1, branch-free when tf; returns
 * the vectors with a tiny lane (tf = 0) or the tiny lanes (tf = 1). */
KD_INLINE size_t kd_span(const kd_c *c, const kd_f *g, fpl_rnd rnd, int stream, int tf, double *z,
			 const double *x, size_t j, size_t end, uint64_t idx0, kd_acc *acc,
			 fpl_kslow slow, void *ctx, kd_rcnt *cnt)
{
	const int draws = rnd == FPL_RND_SP || rnd == FPL_RND_SE;
	size_t ntiny = 0;
	__m512i vix = _mm512_setzero_si512(), vun = vix;	/* in registers, not *acc */

	if (!tf) {	/* kd_vec, whose tiny lanes take a branch to kd_tiny */
		kd_acc la;
		la.inexact = la.under = vix;
		for (; j < end; j += 8) {
			__m512i u = _mm512_loadu_si512(x + j);
			__mmask8 tiny = _mm512_cmplt_epu64_mask(
				_mm512_add_epi64(_mm512_and_si512(u, c->absm), c->minus1), c->minm1);
			kd_store(z, j, kd_vec(c, rnd, u, j, idx0 + j, 0xff, &la, slow, ctx, cnt), 0xff,
				 stream, 0);
			ntiny += tiny != 0;
		}
		acc->inexact = _mm512_add_epi64(acc->inexact, la.inexact);
		acc->under = _mm512_add_epi64(acc->under, la.under);
		return ntiny;
	}
	for (; j < end; j += 8) {
		__m512i u = _mm512_loadu_si512(x + j), r;
		__m512i d = draws ? kd_draw(c, idx0 + j) : _mm512_setzero_si512();
		kd_out o = kd_fast(c, g, rnd, u, d, tf);
		if (__builtin_expect(o.odd != 0, 0)) {
			r = kd_vec_nl(c, rnd, u, j, idx0 + j, 0xff, acc, slow, ctx, cnt);
		} else {
			vix = _mm512_mask_sub_epi64(vix, o.inexact, vix, c->minus1);
			vun = _mm512_mask_sub_epi64(vun, o.under, vun, c->minus1);
			r = o.r;
		}
		kd_store(z, j, r, 0xff, stream, 0);
		ntiny += tf ? (size_t)__builtin_popcount(o.tiny) : o.tiny != 0;
	}
	acc->inexact = _mm512_add_epi64(acc->inexact, vix);
	acc->under = _mm512_add_epi64(acc->under, vun);
	return ntiny;
}

KD_INLINE void kd_loop(const kd_c *c, const kd_f *g, fpl_rnd rnd, int stream, double *z,
		       const double *x, size_t j, size_t n, uint64_t idx0, kd_acc *acc,
		       fpl_kslow slow, void *ctx, kd_rcnt *cnt)
{
	int bf = 0;

	while (j + 8 <= n) {
		size_t nv = (n - j) / 8 > KF_SPAN ? KF_SPAN : (n - j) / 8, end = j + 8 * nv;
		if (bf)
			bf = kd_span(c, g, rnd, stream, 1, z, x, j, end, idx0, acc, slow, ctx, cnt)
			     >= KD_TOFF;
		else
			bf = kd_span(c, g, rnd, stream, 0, z, x, j, end, idx0, acc, slow, ctx, cnt)
			     >= KD_TON && g->tiny_ok;
		j = end;
	}
	if (j < n) {
		__mmask8 m = (__mmask8)((1u << (n - j)) - 1);
		kd_store(z, j, kd_vec(c, rnd, kd_load(x, j, m, 0), j, idx0 + j, m, acc, slow, ctx, cnt),
			 m, 0, 0);
	}
}

KD_INLINE void kd_run(const fpl_kparams *p, fpl_rnd rnd, int stream, int f32, void *z,
		      const void *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
		      fpl_kcounts *out)
{
	kd_c c;
	kd_acc acc;
	kd_rcnt cnt = { 0, 0, 0 };
	size_t j = 0;
	uint64_t s = p->s, R = p->sr_bits;

	c.one = _mm512_set1_epi64(1);
	c.minus1 = _mm512_set1_epi64(-1);
	c.imp = _mm512_set1_epi64(1ll << 52);
	c.absm = _mm512_set1_epi64(0x7fffffffffffffffll);
	c.s = _mm512_set1_epi64((long long)s);
	c.q = _mm512_set1_epi64((long long)(1ull << s));
	c.mask = _mm512_set1_epi64((long long)((1ull << s) - 1));
	c.half = _mm512_set1_epi64((long long)(1ull << (s - 1)));
	c.halfm1 = _mm512_set1_epi64((long long)((1ull << (s - 1)) - 1));
	c.klor = _mm512_set1_epi64(s == 52);
	c.lal = _mm512_set1_epi64((long long)(64 - s));
	c.rmask = _mm512_set1_epi64((long long)(~0ull << (64 - R)));	/* 1 <= R <= 32 */
	c.min = _mm512_set1_epi64((long long)p->min_bits);
	c.umin = _mm512_set1_epi64(p->tiny_before ? -1ll : (long long)p->min_bits);
	c.minm1 = _mm512_set1_epi64((long long)(p->min_bits - 1));
	c.zs = _mm512_set1_epi64((long long)p->zero_special);
	c.max = _mm512_set1_epi64((long long)p->max_bits);
	c.inf = _mm512_set1_epi64(0x7ff0000000000000ll);
	c.ovf_pos = _mm512_set1_epi64((long long)p->ovf_bits[0]);
	c.ovf_neg = _mm512_set1_epi64((long long)p->ovf_bits[1]);
	c.ovf_sat = (int)p->ovf_sat;
	c.zero_special = (int)p->zero_special;
	c.maxzs = _mm512_set1_epi64((long long)(p->max_bits - p->zero_special));
	c.frac = _mm512_set1_epi64(0x000fffffffffffffll);
	c.emin_b = _mm512_set1_epi64((long long)p->emin_b);
	c.unit = _mm512_set1_pd(ldexp(1.0, (int)p->emin_b - 1023 - 52));
	c.lanes_g = _mm512_set_epi64((long long)(7 * KD_GOLDEN), (long long)(6 * KD_GOLDEN),
				     (long long)(5 * KD_GOLDEN), (long long)(4 * KD_GOLDEN),
				     (long long)(3 * KD_GOLDEN), (long long)(2 * KD_GOLDEN),
				     (long long)KD_GOLDEN, 0);
	c.key = p->key;
	c.tiny_before = (int)p->tiny_before;
	c.uok = p->emin_b >= 2;
	/* scaled tiny lanes need the sticky bit below the half bit (s >= 2)
	 * and, for sp, all R bits of T among the s they keep */
	c.sub_ok = p->sub_fast && s >= 2 && (rnd != FPL_RND_SP || R <= s);
	acc.inexact = acc.under = _mm512_setzero_si512();

	if (f32) {
		kf_c f;
		kf_setup(&f, p, rnd);
		if (f.ok) {
			kf_run(&c, &f, rnd, stream, z, x, n, idx0, &acc, slow, ctx, &cnt);
			goto done;
		}
	}
	/* Streaming stores need aligned vectors (64 bytes, 32 for binary32):
	 * a masked head gets there. */
	if (stream) {
		size_t vb = f32 ? 32 : 64, eb = f32 ? 4 : 8, off = (uintptr_t)z & (vb - 1);
		if (off) {
			size_t h = (vb - off) / eb;
			__mmask8 m;
			if (h > n)
				h = n;
			m = (__mmask8)((1u << h) - 1);
			kd_store(z, 0, kd_vec(&c, rnd, kd_load(x, 0, m, f32), 0, idx0, m, &acc, slow,
					      ctx, &cnt), m, 0, f32);
			j = h;
		}
	}
	if (!f32) {
		kd_f g;
		kd_fsetup(&g, p, rnd, c.uok);
		kd_loop(&c, &g, rnd, stream, z, x, j, n, idx0, &acc, slow, ctx, &cnt);
		goto done;
	}
	for (; j + 8 <= n; j += 8)
		kd_store(z, j, kd_vec(&c, rnd, kd_load(x, j, 0xff, f32), j, idx0 + j, 0xff, &acc,
				      slow, ctx, &cnt), 0xff, stream, f32);
	if (j < n) {
		__mmask8 m = (__mmask8)((1u << (n - j)) - 1);
		kd_store(z, j, kd_vec(&c, rnd, kd_load(x, j, m, f32), j, idx0 + j, m, &acc, slow, ctx,
				      &cnt), m, 0, f32);
	}
done:
	if (stream)
		_mm_sfence();
	out->special = cnt.special;
	out->overflow = cnt.overflow;
	out->saturated = cnt.saturated;
	out->tiny = 0;
	out->inexact = (size_t)_mm512_reduce_add_epi64(acc.inexact);
	out->underflow = (size_t)_mm512_reduce_add_epi64(acc.under);
}

#include "kernels/x86/round_direct_dispatch.h"

void fpl__round_direct_avx512(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			      uint64_t idx0, int stream, fpl_kslow slow, void *ctx,
			      fpl_kcounts *out)
{
	/* the floating-point steps (kf_vec's subtractions, the widening,
	 * the scaling of tiny results) assume RNE without DAZ or FTZ: the
	 * default MXCSR, restored with the caller's flags on return */
	const unsigned csr = _mm_getcsr();

	_mm_setcsr(0x1f80);
	kd_dispatch(p, z, x, f32, n, idx0, stream, slow, ctx, out);
	_mm_setcsr(csr);
}
