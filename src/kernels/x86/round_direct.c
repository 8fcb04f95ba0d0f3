/* SPDX-License-Identifier: MIT */
/*
 * x86/round_direct.c - rounding a binary64 array into a format with
 * AVX-512 intrinsics, eight lanes at a time, straight from x to z.
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
 * subnormal operand, which would take a slow microcode assist.  Tininess
 * after rounding is the scalar engine's when a tiny lane reaches 2^emin,
 * as in the portable kernels.
 *
 * Draws are fpl__draw(key, idx) for element index idx, computed in the
 * lanes (vpmullq), so the bits do not depend on the blocking.  Lanes the
 * kernel cannot do (results above max, inf and NaN inputs, fnuz zeros,
 * tiny lanes of the other subnormal flavours) are done by the caller's
 * scalar engine before the vector is stored.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/kernels_internal.h"

#define KD_INLINE static inline __attribute__((always_inline))

/* Loop invariants, broadcast once per call. */
typedef struct kd_c {
	__m512i one, minus1, imp, absm;
	__m512i s, q, mask, half, halfm1;	/* constant shift s = 52 - m */
	__m512i klor;				/* 1 when s = 52: the implicit bit is kept */
	__m512i c1, c2, R, Rsh;			/* sp: T = (rest >> c1) << c2, draw >> Rsh */
	__m512i minm1, min, zs, maxzs, lanes_g;
	__m512i max, inf, ovf_pos, ovf_neg;	/* rare lanes: see kd_rare */
	__m512i frac, emin_b;			/* tiny lanes: see kd_tiny */
	__m512d unit;				/* 2^(emin-52) */
	uint64_t key;
	int tiny_before, sub_ok, zero_special, ovf_sat;
} kd_c;

#define KD_GOLDEN 0x9e3779b97f4a7c15ull	/* fpl__draw's index step */

/* fpl__draw(key, idx0 + k) in lane k. */
KD_INLINE __m512i kd_draw(const kd_c *c, uint64_t idx0)
{
	__m512i z = _mm512_add_epi64(_mm512_set1_epi64((long long)(c->key + (idx0 + 1) * KD_GOLDEN)),
				     c->lanes_g);
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0x94d049bb133111ebull));
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
		__m512i T = _mm512_sllv_epi64(_mm512_srlv_epi64(_mm512_and_si512(a, c->mask), c->c1),
					      c->c2);
		__m512i t = _mm512_srlv_epi64(_mm512_add_epi64(T, _mm512_srlv_epi64(d, c->Rsh)), c->R);
		return _mm512_mask_add_epi64(tr, _mm512_test_epi64_mask(t, t), tr, c->q);
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
	__m512i a = _mm512_and_si512(u, c->absm), d = _mm512_setzero_si512(), r, klor;
	__mmask8 neg = _mm512_movepi64_mask(u), sticky = 0;

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
		/* tininess after rounding: a tiny lane that reaches 2^emin may
		 * not be tiny at precision p with unbounded exponent */
		o.spc = c->tiny_before ? 0 : tiny & _mm512_cmpge_epu64_mask(r, c->min);
	} else {
		o.spc = tiny;
	}
	o.under = o.inexact & tiny;
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
	c.c1 = _mm512_set1_epi64((long long)(s >= R ? s - R : 0));
	c.c2 = _mm512_set1_epi64((long long)(s >= R ? 0 : R - s));
	c.R = _mm512_set1_epi64((long long)R);
	c.Rsh = _mm512_set1_epi64((long long)(64 - R));
	c.min = _mm512_set1_epi64((long long)p->min_bits);
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
	/* scaled tiny lanes need the sticky bit below the half bit (s >= 2)
	 * and, for sp, all R bits of T among the s they keep */
	c.sub_ok = p->sub_fast && s >= 2 && (rnd != FPL_RND_SP || R <= s);
	acc.inexact = acc.under = _mm512_setzero_si512();

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
	for (; j + 8 <= n; j += 8)
		kd_store(z, j, kd_vec(&c, rnd, kd_load(x, j, 0xff, f32), j, idx0 + j, 0xff, &acc,
				      slow, ctx, &cnt), 0xff, stream, f32);
	if (j < n) {
		__mmask8 m = (__mmask8)((1u << (n - j)) - 1);
		kd_store(z, j, kd_vec(&c, rnd, kd_load(x, j, m, f32), j, idx0 + j, m, &acc, slow, ctx,
				      &cnt), m, 0, f32);
	}
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
	kd_dispatch(p, z, x, f32, n, idx0, stream, slow, ctx, out);
}
