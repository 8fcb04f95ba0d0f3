/* SPDX-License-Identifier: MIT */
/*
 * x86/round_direct_avx2.c - rounding a binary64 or binary32 array into a
 * format with AVX2 intrinsics, straight from x to z (the avx2 set's
 * KERNEL_ROUND_DIRECT; x86/round_direct.c is the AVX-512 twin).
 *
 * The arithmetic is round_direct.c's, whose header comment (and
 * kernel_body.h's) argues why it rounds like the scalar engine: with a
 * the magnitude bits and s the number of encoding bits below the kept
 * lsb, adding the mode's increment to a and clearing the low s bits
 * rounds, a carry moving into the next binade; tiny lanes (gradual
 * underflow) are scaled to the fixed-point range Y = M >> (emin_b -
 * max(be, 1)) with a sticky bit and rounded with the same constant
 * shift.  What AVX2 lacks is emulated:
 *  - unsigned 64-bit compares: x <u y is (x ^ 2^63) <s (y ^ 2^63), and
 *    x ^ 2^63 = x + 2^63 (mod 2^64), so "0 < a < min" is one add and one
 *    signed compare of a + (2^63 - 1) with (min - 1) ^ 2^63, and "r - zs
 *    > max - zs" one add of 2^63 - zs and one compare;
 *  - 64-bit multiplies (fpl__draw's splitmix64 by a constant k): lo*kl +
 *    ((lo*kh + hi*kl) << 32), one vpmuludq and one vpmulld for both
 *    cross products; sp and se read only the top 32 bits of a draw, so
 *    the second multiply and the last xorshift compute only the high
 *    words (kd_mix, by kernels/x86/draw_avx2.h, which argues it);
 *  - masks: all-ones lanes; tp and tn select by the sign bit of x itself
 *    (vblendvpd);
 *  - cvtepu64_pd for the scaled tiny results K <= 2^52: the bits K +
 *    bits(2^52) are the double 2^52 + K, exact, from which 2^52 is
 *    subtracted exactly.
 *
 * binary32 arrays (the format fits binary32, so its values and its
 * normal-range rounding are binary32's): eight 32-bit lanes on the float
 * bits, s32 = 23 - m.  The binary64 encoding of a float value is its
 * binary32 encoding with the exponent rebiased and 29 zero bits appended,
 * so the kept bits, the half bit, the lost bits and sp's T (the R bits
 * below the kept lsb, zero below the float's last bit) are the same bits:
 * the same increments round the same way.  sp adds the top R bits of
 * the draw, aligned under the kept lsb, and truncates (kd_pick's comment
 * says why that is T + r >= 2^R).  For a tiny lane (kf_sp) sp compares
 * T + r >= 2^R as a carry out of 32 bits instead: T' = T 2^(32-R), r' =
 * r 2^(32-R), and T + r >= 2^R iff T' + r' wraps, that is iff
 * max_epu32(T' + r', T') != T' + r'.  A vector whose lanes are zero or
 * normal and not above max after rounding is done there; a vector with
 * tiny lanes by kf_tfast (kf_sp, kf_gen: their comments); any other
 * vector (an overflow, inf, NaN) is widened exactly to two
 * binary64 vectors and done by the binary64 code, whose results are
 * values of the format and narrow exactly.
 *
 * Tininess after rounding: the scalar engine asks whether x rounded to
 * precision p with an unbounded exponent, same mode and draw, is below
 * 2^emin.  Only |x| in [2^(emin-1), 2^emin) can reach 2^emin, and for a
 * normal x that rounding is the normal range's arithmetic on the raw
 * bits (constant shift), so a tiny lane underflows iff it is inexact and
 * that result is below min (round_direct.c sends the lanes reaching
 * 2^emin to the scalar engine instead; with N(0, 1) data in e2m1 that is
 * one lane in seven).  When x's binade below 2^emin is not normal in the
 * lane type (emin = -1022, or -126 for binary32 lanes) those lanes still
 * go to the scalar engine.
 *
 * Every mode has branch-free vectors that do zero, normal and tiny lanes
 * alike (formats with gradual underflow): ne rounds tiny lanes with one
 * IEEE addition of the constant 2^p Q, whose spacing is the subnormal
 * quantum Q (kf_ne, kd_ne64); sp computes K = (M >> t) + carry straight
 * from the significand (kf_sp, kd_sp64), and the other modes K = M >> t
 * plus the mode's decision from the discarded bits T, in the integer
 * domain (kf_gen, kd_gen64).  The directed modes (tp tn tz), and na, nz,
 * od and se of binary32 arrays whose format has a wide tiny range, run
 * instead one formula for every lane (kf_uni, kd_uni64: K q with q =
 * max(ulp(x), Q) and K the integer vroundps picks from x / q, or for na
 * nz od se one addition of C = 2^23 q (2^52 q) in the mode's MXCSR
 * direction; their comment argues exactness), as cheap as the fast vector and without a
 * branch to tiny-lane code.  ne, tp, tn and tz, wherever kd_setup's
 * conditions hold (every format of 16 bits or fewer, both array types),
 * run the cheapest of these: one signed addition x + sign(x) C in the
 * mode's MXCSR direction, then - sign(x) C (kf_c1, kd_c1, whose comment
 * argues it), about fourteen vector operations per vector; before it the
 * ne and directed loops were compute-bound on a Zen 5 core (as fast
 * from L2 as from memory).  The floating-point steps need the default
 * MXCSR (RNE, no DAZ or FTZ), which the entry point sets for the call
 * and then restores, and the loops that set another direction put the
 * default back around every call of other code.
 *
 * Speed (AVX2 has sixteen vector registers): every hot loop is a tight
 * inner loop that breaks out to the rare vector's code and starts again
 * after it, so that gcc allocates the loop's registers for it alone; the
 * counts are kept in general registers by movemask and popcnt of the lane
 * masks, not in vector accumulators (which, with the rare code inside
 * the loop, gcc had kept on the stack: a store-to-load chain per
 * vector).
 *
 * Overflowing lanes go to the scalar engine here (round_direct.c does
 * them in the kernel); they are rare in data that fits the format.  A
 * zero result of an fnuz format (no -0) is +0 with the flags computed for
 * it, as round_direct.c has it, in the C loops (kf_c1, kd_c1: free
 * there, by the sign of the zero difference), and in the ne and uni loops of binary32
 * arrays when the tiny range is wide (kf_sign; kd_sign has the same
 * option, unused: binary64 arrays measured slower with it): with N(0, 1) data e4m3fnuz rounds a value to zero in one
 * binary32 vector in three hundred, which the scalar engine made 15%
 * slower; the adaptive loops and kd_full still give such lanes to the
 * scalar engine.
 *
 * Draws are fpl__draw(key, idx) of the element index, so no result
 * depends on the blocking; counts are the scalar engine's: normal lanes
 * never underflow (r >= tr >= 2^emin) and never overflow (r <= max was
 * checked); the lanes given to slow() are counted there.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels_internal.h"
#include "kernels/x86/draw_avx2.h"

#define KD_INLINE static inline __attribute__((always_inline))
#define KD_GOLDEN 0x9e3779b97f4a7c15ull	/* fpl__draw's index step */

/* Loop invariants, broadcast once per call: binary64 lanes. */
typedef struct kd_c {
	__m256i one, absm, imp, frac, emin_b, magic;
	__m256i q, mask, half, halfm1, klor;
	__m128i s, ssh;				/* shift counts s, 64 - s */
	__m256i rmask;				/* sp: the top R bits of a draw */
	__m256i minm1x;				/* (min - 1) ^ 2^63 */
	__m256i biaszs, maxzsx;			/* 2^63 - zs, (max - zs) ^ 2^63 */
	__m256i min;
	__m256i lanes_g, step;			/* k * golden in lane k; 4 * golden */
	__m256d two52, unit;
	__m256d nC;				/* ne: 2^52 Q (kd_ne64) */
	uint64_t key;
	int tiny_before, sub_ok, uok;		/* uok: emin_b >= 2 (kd_full) */
	int nok;				/* kd_ne64 applies */
	int sok;				/* sp: kd_sp64 applies */
	int ton;				/* kd_run64 may go branch-free */
	int s52;				/* s = 52: the kept lsb is the implicit bit */
	__m256i tb;				/* sp: emin_b + s */
	__m256d qd;				/* sp: Q = 2^(emin-m) */
	int uni;				/* kd_uni64 applies */
	__m256i uexp, um, uq, uinv;		/* kd_uni64: exponent mask, m << 52, bits(Q), bits(1) << 1 */
	__m256d ureach;				/* tp tn: the reach threshold */
	int cq;					/* na nz od se of kd_uni64 apply */
	__m256i uc, uh, uql, ureachb;		/* (52 - m) << 52, 53 << 52, 52 << 52, bits(ureach Q) */
	int zs;					/* fnuz: zeros are special (kd_sign) */
	__m256i fbiaszs, fmaxzsx;		/* kd_full: biaszs, maxzsx with fnuz zeros odd */
	int cok;				/* kd_c1 applies */
	__m256i cmax, cti;			/* kd_c1: bits of max, the tiny threshold */
	__m256d ctp;				/* kd_c1, tp tn: +-(2^emin - Q/2) */
	__m256i uti;				/* kd_uni64: the tiny threshold */
} kd_c;

/* The same for binary32 lanes. */
typedef struct kf_c {
	__m256i absm, q, mask, half, halfm1, klor, one;
	__m256i minm1x, biaszs, maxzsx;		/* as kd_c, 32-bit */
	__m256i rmask;				/* sp: the top R bits of a word */
	__m256i glo, ghi, step;			/* draw offsets: lanes 0,1,4,5 and 2,3,6,7; 8 * golden */
	__m256i frac, imp, min;			/* tiny lanes (kf_tfast) */
	__m256 nC;				/* ne: 2^23 Q (kf_ne) */
	__m128i s, lal;				/* s32, 32 - s32 */
	int ok;					/* s32 >= 1: the 32-bit path applies */
	int tok, tiny_before;			/* kf_tfast applies */
	int uok;				/* emin > -126 (kf_tfast) */
	int nok;				/* kf_ne applies */
	int s52;				/* s32 = 23 (kd_c's s52) */
	__m256i tb;				/* tiny lanes: emin_b32 + s32 */
	__m256 qf;				/* tiny lanes: Q = 2^(emin-m) */
	int uni;				/* kf_uni applies */
	__m256i uexp, um, uq, uinv;		/* kf_uni: exponent mask, m << 23, bits(Q), 254 << 23 */
	__m256 ureach;				/* tp tn: the reach threshold */
	int cq;					/* na nz od se of kf_uni apply */
	__m256i uc, uh, uql, ureachb;		/* (23 - m) << 23, 24 << 23, 23 << 23, bits(ureach Q) */
	int zs;					/* fnuz: zeros are special (kf_sign) */
	uint32_t max32;				/* bits of max as a float */
	int cok;				/* kf_c1 applies */
	__m256i cmax, cti;			/* kf_c1: bits of max, the tiny threshold */
	__m256 ctp;				/* kf_c1, tp tn: +-(2^emin - Q/2) */
	__m256i uti;				/* kf_uni: the tiny threshold */
} kf_c;

/* splitmix64's finalizer (fpl__mix64) on four lanes, by draw_avx2.h
 * (which argues it): kd_mixx(z, xs) is the draw's high word in each
 * lane's high word (the low words are garbage: sp reads the top R <= 32
 * bits, se the top bit); the last xorshift changes bit 0 of that word
 * only, which sp reads only when R = 32 and se never: xs = 0 leaves it
 * out (kd_xs).  kd_mix_hi8 packs two vectors' high words in lane order. */
#define kd_mixx(z, xs) fpl__dr2_mix_hi((z), (xs))
#define kd_mix_hi8(za, zb, xs) fpl__dr2_mix_hi8((za), (zb), (xs))

KD_INLINE __m256i kd_mix(__m256i z)
{
	return kd_mixx(z, 1);
}

/* Whether a draw's last xorshift matters (kd_mixx): sp with R = 32. */
#define kd_xs(rnd, r32) ((rnd) == FPL_RND_SP && (r32))

/* The splitmix state of fpl__draw(key, idx + k) in lane k (offsets g:
 * k * golden): kd_mix of it is the draw. */
KD_INLINE __m256i kd_base(uint64_t key, uint64_t idx, __m256i g)
{
	return _mm256_add_epi64(_mm256_set1_epi64x((long long)(key + (idx + 1) * KD_GOLDEN)), g);
}

/* fpl__draw(key, idx + k)'s high word in lane k. */
KD_INLINE __m256i kd_draw(uint64_t key, uint64_t idx, __m256i g)
{
	return kd_mix(kd_base(key, idx, g));
}

KD_INLINE __m256i kd_blend(__m256i a, __m256i b, __m256i m)
{
	return _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b),
						    _mm256_castsi256_pd(m)));
}

/* The result of magnitude r (r < 2^63) with u's sign; with zs (a
 * constant: the loops for fnuz formats, whose zeros are special: the
 * format has no -0) a zero result is +0, as the scalar engine gives it,
 * with the flags computed for it.  Loops without zs keep maxzsx and
 * biaszs such that zero results are odd lanes (kd_run). */
KD_INLINE __m256i kd_sign(const kd_c *c, __m256i r, __m256i u, int zs)
{
	__m256i sign = _mm256_andnot_si256(c->absm, u);
	if (zs)
		sign = _mm256_andnot_si256(_mm256_cmpeq_epi64(r, _mm256_setzero_si256()), sign);
	return _mm256_or_si256(r, sign);
}

/* kd_sign on eight binary32 lanes. */
KD_INLINE __m256i kf_sign(const kf_c *f, __m256i r, __m256i u, int zs)
{
	__m256i sign = _mm256_andnot_si256(f->absm, u);
	if (zs)
		sign = _mm256_andnot_si256(_mm256_cmpeq_epi32(r, _mm256_setzero_si256()), sign);
	return _mm256_or_si256(r, sign);
}

/* kb_pick on four binary64 lanes: a the magnitudes, u the inputs (their
 * sign bits choose for tp and tn), kl the kept lsb, d the draws. */
KD_INLINE __m256i kd_pick(const kd_c *c, fpl_rnd rnd, __m256i a, __m256i u, __m256i kl,
			  __m256i d)
{
	const __m256i tr = _mm256_andnot_si256(c->mask, a);
	const __m256i zero = _mm256_setzero_si256();

	switch (rnd) {
	case FPL_RND_NE:
		return _mm256_andnot_si256(c->mask,
					   _mm256_add_epi64(_mm256_add_epi64(a, kl), c->halfm1));
	case FPL_RND_NA:
		return _mm256_andnot_si256(c->mask, _mm256_add_epi64(a, c->half));
	case FPL_RND_NZ:
		return _mm256_andnot_si256(c->mask, _mm256_add_epi64(a, c->halfm1));
	case FPL_RND_TP:
		return kd_blend(_mm256_andnot_si256(c->mask, _mm256_add_epi64(a, c->mask)), tr, u);
	case FPL_RND_TN:
		return kd_blend(tr, _mm256_andnot_si256(c->mask, _mm256_add_epi64(a, c->mask)), u);
	case FPL_RND_OD: {
		/* up: inexact and kept lsb 0.  When the kept lsb is bit s of a
		 * (s < 52), adding q to a truncation whose bit s is 0 is setting
		 * it, and setting it where it is 1 changes nothing: od is then
		 * tr | q for inexact lanes, whatever kl */
		__m256i ex = _mm256_cmpeq_epi64(_mm256_and_si256(a, c->mask), zero);
		if (!c->s52)
			return _mm256_or_si256(tr, _mm256_andnot_si256(ex, c->q));
		return _mm256_or_si256(tr, _mm256_and_si256(
			_mm256_andnot_si256(ex, _mm256_cmpeq_epi64(kl, zero)), c->q));
	}
	case FPL_RND_SP:
		/* T + r >= 2^R, r the top R bits of the draw, iff a + (r
		 * 2^(s-R)) carries into the kept bits (the low bits of a
		 * below T, if any, cannot push an integer sum over 2^R), and
		 * for s < R iff a + floor(r 2^(s-R)) does (T's low R - s bits
		 * are zero): both are a + ((d & top R bits) >> (64 - s)),
		 * added and truncated like the other modes */
		return _mm256_andnot_si256(c->mask,
					   _mm256_add_epi64(a, _mm256_srl_epi64(_mm256_and_si256(d, c->rmask),
										c->ssh)));
	case FPL_RND_SE: {
		__m256i ex = _mm256_cmpeq_epi64(_mm256_and_si256(a, c->mask), zero);
		__m256i up = _mm256_sll_epi64(_mm256_srli_epi64(d, 63), c->s);
		return _mm256_add_epi64(tr, _mm256_andnot_si256(ex, up));
	}
	default:	/* tz */
		return tr;
	}
}

/* The kept lsb: bit s of a, or 1 where klor (s = 52: the implicit bit). */
KD_INLINE __m256i kd_kl(const kd_c *c, __m256i a, __m256i klor)
{
	return _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi64(a, c->s), c->one), klor);
}

/* Lanes of a needing more than the normal range: 0 < a < min, or whose
 * rounded r is above max or a special zero. */
KD_INLINE __m256i kd_odd_lanes(const kd_c *c, __m256i a, __m256i r)
{
	/* a + (2^63 - 1) = (a - 1) ^ 2^63: 0 < a < min as a signed compare */
	return _mm256_or_si256(_mm256_cmpgt_epi64(c->minm1x, _mm256_add_epi64(a, c->absm)),
			       _mm256_cmpgt_epi64(_mm256_add_epi64(r, c->biaszs), c->maxzsx));
}

/* The counters: per-lane counts of inexact and underflowing lanes among
 * those done here (a lane adds 1 by subtracting an all-ones mask). */
typedef struct kd_acc {
	__m256i inexact, under;
	__m256i tiny;		/* tiny lanes seen by branch-free vectors */
	size_t *special;	/* lanes done by slow(): a pointer, so that a
				 * loop's own kd_acc never escapes and stays in
				 * registers */
} kd_acc;

/* The lanes spc of r recomputed by the scalar engine from u (the call's
 * element j + lane), which counts their flags. */
static __attribute__((noinline)) __m256i kd_scalar(__m256i r, __m256i u, __m256i spc, size_t j,
						   size_t *special, fpl_kslow slow,
						   void *ctx)
{
	double in[4], res[4];
	unsigned m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(spc));

	_mm256_storeu_pd(in, _mm256_castsi256_pd(u));
	_mm256_storeu_pd(res, _mm256_castsi256_pd(r));
	while (m) {
		unsigned i = (unsigned)__builtin_ctz(m);
		res[i] = slow(ctx, j + i, in[i]);
		(*special)++;
		m &= m - 1;
	}
	return _mm256_castpd_si256(_mm256_loadu_pd(res));
}

/*
 * One binary64 vector with every case: the lanes in `live` (all-ones
 * lanes) of u, element j of the call (draw index idx).  Tiny lanes are
 * scaled when the format allows it (round_direct.c's kd_tiny); lanes
 * above max, inf, NaN, fnuz zeros and the other tiny lanes go to slow()
 * before the vector is returned.
 */
KD_INLINE __m256i kd_full(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i live, size_t j,
			   uint64_t idx, kd_acc *acc, fpl_kslow slow, void *ctx, int bf)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i a = _mm256_and_si256(u, c->absm), sign = _mm256_andnot_si256(c->absm, u);
	__m256i a0 = a, d = zero, sticky = zero, spc = zero, under = zero, klor, r, inexact, bad;
	__m256i tiny = _mm256_and_si256(_mm256_cmpgt_epi64(c->minm1x, _mm256_add_epi64(a, c->absm)),
					live);
	/* bf: branch-free, as if there were tiny lanes (the blends by tiny
	 * then change nothing in the others) */
	int any_tiny = bf || !_mm256_testz_si256(tiny, tiny);

	if (any_tiny && c->sub_ok) {
		/* Y = M >> (emin_b - max(be, 1)), the lost bits as sticky */
		__m256i be = _mm256_srli_epi64(a, 52), fr = _mm256_and_si256(a, c->frac);
		__m256i be0 = _mm256_cmpeq_epi64(be, zero);
		__m256i M = _mm256_or_si256(fr, _mm256_andnot_si256(be0, c->imp));
		__m256i sh = _mm256_sub_epi64(c->emin_b, _mm256_sub_epi64(be, be0));
		__m256i lost = _mm256_sub_epi64(_mm256_sllv_epi64(c->one, sh), c->one);
		sticky = _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(M, lost), zero),
					     tiny);
		a = kd_blend(a, _mm256_srlv_epi64(M, sh), tiny);
		if (rnd != FPL_RND_SP)
			a = _mm256_or_si256(a, _mm256_and_si256(sticky, c->one));
	}
	if (rnd == FPL_RND_SP || rnd == FPL_RND_SE)
		d = kd_draw(c->key, idx, c->lanes_g);
	klor = _mm256_andnot_si256(tiny, c->klor);
	r = kd_pick(c, rnd, a, u, kd_kl(c, a, klor), d);
	inexact = _mm256_or_si256(
		_mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(a, c->mask), zero), live),
		sticky);
	if (any_tiny) {
		if (c->sub_ok) {
			/* K 2^s units of 2^(emin-52), K <= 2^52: exact */
			__m256d k = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(r, c->magic)),
						  c->two52);
			__m256i tu = tiny;
			r = kd_blend(r, _mm256_castpd_si256(_mm256_mul_pd(k, c->unit)), tiny);
			/* tininess after rounding: is x rounded to precision p
			 * with an unbounded exponent (same mode and draw) below
			 * 2^emin?  That is the normal range's arithmetic on the
			 * raw bits (a binary64 normal when emin_b >= 2: only
			 * |x| >= 2^(emin-1) can reach 2^emin).  Otherwise the
			 * lanes that reach 2^emin go to the scalar engine. */
			if (!c->tiny_before && c->uok)
				tu = _mm256_and_si256(tiny, _mm256_cmpgt_epi64(
					c->min, kd_pick(c, rnd, a0, u, kd_kl(c, a0, c->klor), d)));
			else if (!c->tiny_before)
				spc = _mm256_andnot_si256(_mm256_cmpgt_epi64(c->min, r), tiny);
			under = _mm256_and_si256(inexact, tu);
		} else {
			spc = tiny;
		}
	}
	bad = _mm256_and_si256(_mm256_cmpgt_epi64(_mm256_add_epi64(r, c->fbiaszs), c->fmaxzsx), live);
	spc = _mm256_or_si256(spc, bad);
	r = _mm256_or_si256(r, sign);
	if (!_mm256_testz_si256(spc, spc)) {
		r = kd_scalar(r, u, spc, j, acc->special, slow, ctx);
		inexact = _mm256_andnot_si256(spc, inexact);
		under = _mm256_andnot_si256(spc, under);
	}
	acc->inexact = _mm256_sub_epi64(acc->inexact, inexact);
	acc->under = _mm256_sub_epi64(acc->under, under);
	if (bf)
		acc->tiny = _mm256_sub_epi64(acc->tiny, tiny);
	return r;
}

/* kf_finish on four binary64 lanes (kd_ne64, kd_sp64). */
KD_INLINE __m256i kd_finish(const kd_c *c, __m256i u, __m256i a, __m256i r, __m256i rn,
			    __m256i tiny, __m256i *exact, __m256i *under, int *odd, int zs)
{
	__m256i eq = _mm256_cmpeq_epi64(r, a);
	__m256i o = _mm256_cmpgt_epi64(_mm256_add_epi64(r, c->biaszs), c->maxzsx);

	if (!c->tiny_before && c->uok)
		tiny = _mm256_and_si256(tiny, _mm256_cmpgt_epi64(c->min, rn));
	else if (!c->tiny_before)
		o = _mm256_or_si256(o, _mm256_andnot_si256(_mm256_cmpgt_epi64(c->min, r), tiny));
	*odd = !_mm256_testz_si256(o, o);
	*exact = eq;
	*under = _mm256_andnot_si256(eq, tiny);
	return kd_sign(c, r, u, zs);
}

/*
 * kf_sp on four binary64 lanes (c->sok): sp with every zero, normal and
 * tiny lane done in place.  Normal lanes are kd_pick's; a tiny lane is
 * (M >> t) + carry units of Q, t = emin_b + s - max(be, 1) the bits of M
 * below Q, T the top R of them left-aligned in 64 bits (shifts of 64 or
 * more give 0), d's top R bits added, the carry out of 64 bits read by a
 * signed compare of the biased values; K < 2^(m+1) <= 2^52 converts
 * exactly through 2^52 + K and K Q is exact.  Tininess after rounding as
 * in kd_ne64.
 */
KD_INLINE __m256i kd_sp64(const kd_c *c, __m256i u, __m256i d, __m256i *exact, __m256i *under,
			  __m256i *tinyp, int *odd)
{
	const __m256i zero = _mm256_setzero_si256(), sb = _mm256_set1_epi64x(INT64_MIN);
	__m256i a = _mm256_and_si256(u, c->absm), dm = _mm256_and_si256(d, c->rmask);
	__m256i rn = _mm256_andnot_si256(c->mask, _mm256_add_epi64(a, _mm256_srl_epi64(dm, c->ssh)));
	__m256i tiny = _mm256_cmpgt_epi64(c->minm1x, _mm256_add_epi64(a, c->absm));
	__m256i be = _mm256_srli_epi64(a, 52), be0 = _mm256_cmpeq_epi64(be, zero);
	__m256i M = _mm256_or_si256(_mm256_and_si256(a, c->frac), _mm256_andnot_si256(be0, c->imp));
	__m256i t = _mm256_sub_epi64(c->tb, _mm256_sub_epi64(be, be0));
	__m256i sl = _mm256_sub_epi64(_mm256_set1_epi64x(64), t);
	__m256i T = _mm256_and_si256(_mm256_or_si256(_mm256_sllv_epi64(M, sl),
						     _mm256_srlv_epi64(M, _mm256_sub_epi64(zero, sl))),
				     c->rmask);
	__m256i sum = _mm256_add_epi64(T, dm);
	__m256i carry = _mm256_cmpgt_epi64(_mm256_xor_si256(T, sb), _mm256_xor_si256(sum, sb));
	__m256i K = _mm256_sub_epi64(_mm256_srlv_epi64(M, t), carry);
	__m256i rt = _mm256_castpd_si256(_mm256_mul_pd(
		_mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(K, c->magic)), c->two52), c->qd));
	__m256i r = kd_blend(rn, rt, tiny);

	*tinyp = tiny;
	return kd_finish(c, u, a, r, rn, tiny, exact, under, odd, 0);
}

/*
 * Every mode but sp (kd_sp64) on four binary64 lanes with every zero,
 * normal and tiny lane done in place, in the integer domain (c->sok).
 * Normal lanes are kd_pick's (rn).  A tiny lane has |x| = (M / 2^t) Q,
 * with M the significand (implicit bit included), Q = 2^(emin-m) the
 * subnormal quantum and t = emin_b + s - max(be, 1) >= s >= 1 the bits of
 * M below Q: its truncation is K = M >> t (0 when t >= 64: vpsrlvq) and
 * the discarded fraction f = (M mod 2^t) / 2^t in [0, 1).  T = M << (64 -
 * t) is f 2^64 exactly when t <= 64; when t > 64, K = 0 and 0 < f <
 * 2^53 / 2^65 < 1/2, and T is M (below): nonzero and below 2^63, as
 * f 2^64 itself, which is all the modes read of it.  They read T as
 * kb_pick reads the discarded bits: ne adds 1 iff T > 2^63 or T = 2^63
 * and K is odd, that is iff T + (K & 1) > 2^63 (no wrap: for t < 64, T's
 * low 64 - t bits are 0, so T <= 2^64 - 2; for t >= 64, T < 2^53); na iff
 * T >= 2^63 (T's sign bit); nz iff T > 2^63 (T ^ 2^63 > 0, signed); tp
 * (tn) iff T != 0 and x is positive (negative); od sets K's last bit iff
 * T != 0; se adds the draw's top bit iff T != 0; tz adds nothing.  The
 * result K <= 2^m (|x| < 2^emin = 2^m Q) converts exactly through the bits
 * 2^52 + K, and K Q, a multiple of Q not above 2^emin, is a binary64 value:
 * the product is exact (default MXCSR: no FTZ).  A lane is exact iff its
 * result is |x|; tininess after rounding as kd_sp64's (kd_finish).  No
 * floating-point operation sees a subnormal operand.
 */
KD_INLINE __m256i kd_gen64(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i d, __m256i *exact,
			   __m256i *under, __m256i *tinyp, int *odd)
{
	const __m256i zero = _mm256_setzero_si256(), sb = _mm256_set1_epi64x(INT64_MIN);
	__m256i a = _mm256_and_si256(u, c->absm);
	__m256i rn = kd_pick(c, rnd, a, u, kd_kl(c, a, c->klor), d);
	__m256i tiny = _mm256_cmpgt_epi64(c->minm1x, _mm256_add_epi64(a, c->absm));
	__m256i be = _mm256_srli_epi64(a, 52), be0 = _mm256_cmpeq_epi64(be, zero);
	__m256i M = _mm256_or_si256(_mm256_and_si256(a, c->frac), _mm256_andnot_si256(be0, c->imp));
	__m256i t = _mm256_sub_epi64(c->tb, _mm256_sub_epi64(be, be0));
	__m256i c64 = _mm256_set1_epi64x(64);
	__m256i T;

	/* the nonzero T < 2^63 for t > 64 matters only to the modes that read
	 * T != 0 (tp tn od se): ne, na and nz add nothing for any T < 2^63
	 * when K = 0, tz reads no T.  Those four take T = M there, a shift by
	 * max(64 - t, 0): the dword max of the count with 0 clamps a negative
	 * count (both its dwords negative) to 0 and keeps one in 0..63 (high
	 * dword 0); M < 2^53 is nonzero and below 2^63, as required. */
	if (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_OD || rnd == FPL_RND_SE)
		T = _mm256_sllv_epi64(M, _mm256_max_epi32(_mm256_sub_epi64(c64, t), zero));
	else
		T = _mm256_sllv_epi64(M, _mm256_sub_epi64(c64, t));
	__m256i K = _mm256_srlv_epi64(M, t), nz = _mm256_cmpeq_epi64(T, zero), rt, r;

	switch (rnd) {
	case FPL_RND_NE:
		K = _mm256_sub_epi64(K, _mm256_cmpgt_epi64(
			_mm256_xor_si256(_mm256_add_epi64(T, _mm256_and_si256(K, c->one)), sb), zero));
		break;
	case FPL_RND_NA:
		K = _mm256_sub_epi64(K, _mm256_cmpgt_epi64(zero, T));
		break;
	case FPL_RND_NZ:
		K = _mm256_sub_epi64(K, _mm256_cmpgt_epi64(_mm256_xor_si256(T, sb), zero));
		break;
	case FPL_RND_TP:	/* up unless exact or x negative */
		K = _mm256_add_epi64(K, _mm256_andnot_si256(
			_mm256_or_si256(nz, _mm256_cmpgt_epi64(zero, u)), c->one));
		break;
	case FPL_RND_TN:	/* up unless exact or x positive */
		K = _mm256_add_epi64(K, _mm256_andnot_si256(
			_mm256_or_si256(nz, _mm256_cmpgt_epi64(u, _mm256_set1_epi64x(-1))), c->one));
		break;
	case FPL_RND_OD:
		K = _mm256_or_si256(K, _mm256_andnot_si256(nz, c->one));
		break;
	case FPL_RND_SE:
		K = _mm256_add_epi64(K, _mm256_andnot_si256(nz, _mm256_srli_epi64(d, 63)));
		break;
	default:	/* tz (sp is kd_sp64's) */
		break;
	}
	rt = _mm256_castpd_si256(_mm256_mul_pd(
		_mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(K, c->magic)), c->two52), c->qd));
	r = kd_blend(rn, rt, tiny);
	*tinyp = tiny;
	return kd_finish(c, u, a, r, rn, tiny, exact, under, odd, 0);
}

/* A binary64 vector with a tiny or odd lane (c->sok): kd_sp64 or
 * kd_gen64 with the vector's draws d, or kd_full when a lane is odd even
 * for them; counts into acc. */
KD_INLINE __m256i kd_xv(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i d, size_t j, uint64_t idx,
			kd_acc *acc, fpl_kslow slow, void *ctx)
{
	__m256i eq, un, ti, r;
	int odd;

	if (rnd == FPL_RND_SP)
		r = kd_sp64(c, u, d, &eq, &un, &ti, &odd);
	else
		r = kd_gen64(c, rnd, u, d, &eq, &un, &ti, &odd);
	if (__builtin_expect(odd, 0))
		return kd_full(c, rnd, u, _mm256_set1_epi64x(-1), j, idx, acc, slow, ctx, 0);
	acc->inexact = _mm256_sub_epi64(acc->inexact, _mm256_xor_si256(eq, _mm256_set1_epi64x(-1)));
	acc->under = _mm256_sub_epi64(acc->under, un);
	acc->tiny = _mm256_sub_epi64(acc->tiny, ti);
	return r;
}

/* Lanes 0..k-1 live, as all-ones binary64 lanes. */
KD_INLINE __m256i kd_live(size_t k)
{
	return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)k), _mm256_set_epi64x(3, 2, 1, 0));
}

/* Elements j..j+k-1 (k < 4) of a binary64 call, through a small buffer. */
static void kd_part64(const kd_c *c, fpl_rnd rnd, double *z, const double *x, size_t j, size_t k,
		      uint64_t idx0, kd_acc *acc, fpl_kslow slow, void *ctx)
{
	double b[4] = { 0, 0, 0, 0 };
	__m256i r;

	memcpy(b, x + j, k * sizeof *b);
	r = kd_full(c, rnd, _mm256_castpd_si256(_mm256_loadu_pd(b)), kd_live(k), j, idx0 + j, acc,
		    slow, ctx, 0);
	_mm256_storeu_pd(b, _mm256_castsi256_pd(r));
	memcpy(z + j, b, k * sizeof *b);
}

/* Eight binary32 lanes (k of them live) through the binary64 code. */
KD_INLINE __m256 kd_wide8(const kd_c *c, fpl_rnd rnd, __m256 v, size_t k, size_t j, uint64_t idx,
		       kd_acc *acc, fpl_kslow slow, void *ctx)
{
	__m256i lo = _mm256_castpd_si256(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));
	__m256i hi = _mm256_castpd_si256(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));

	lo = kd_full(c, rnd, lo, kd_live(k < 4 ? k : 4), j, idx, acc, slow, ctx, 0);
	if (k > 4)
		hi = kd_full(c, rnd, hi, kd_live(k - 4), j + 4, idx + 4, acc, slow, ctx, 0);
	return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_castsi256_pd(hi)),
			       _mm256_cvtpd_ps(_mm256_castsi256_pd(lo)));
}

/* kd_wide8 of the eight elements at xj, out of line (kd_odd64's comment). */
KD_INLINE __m256 kd_wide8o(const kd_c *c, fpl_rnd rnd, const float *xj,
						  size_t j, uint64_t idx, kd_acc *acc,
						  fpl_kslow slow, void *ctx)
{
	return kd_wide8(c, rnd, _mm256_loadu_ps(xj), 8, j, idx, acc, slow, ctx);
}

/* Elements j..j+k-1 (k < 8) of a binary32 call. */
static void kd_part32(const kd_c *c, fpl_rnd rnd, float *z, const float *x, size_t j, size_t k,
		      uint64_t idx0, kd_acc *acc, fpl_kslow slow, void *ctx)
{
	float b[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };

	memcpy(b, x + j, k * sizeof *b);
	_mm256_storeu_ps(b, kd_wide8(c, rnd, _mm256_loadu_ps(b), k, j, idx0 + j, acc, slow, ctx));
	memcpy(z + j, b, k * sizeof *b);
}

/* The common binary64 vector: normal or zero lanes whose results are not
 * above max; d the draws (sp, se).  Returns the results, or sets *odd when
 * some lane is not such (the caller then uses kd_xv or kd_full). */
KD_INLINE __m256i kd_fast64(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i d, __m256i *ex,
			    int *odd)
{
	__m256i a = _mm256_and_si256(u, c->absm), r;

	r = kd_pick(c, rnd, a, u, kd_kl(c, a, c->klor), d);
	{
		__m256i o = kd_odd_lanes(c, a, r);
		*odd = !_mm256_testz_si256(o, o);
	}
	*ex = _mm256_cmpeq_epi64(_mm256_and_si256(a, c->mask), _mm256_setzero_si256());
	return kd_sign(c, r, u, 0);
}

/* kb_pick on eight binary32 lanes: a the magnitudes (or scaled tiny
 * ones), kl the kept lsb, dh the high words of the draws, T the fraction
 * below the kept lsb left-aligned in 32 bits (sp: T' of the header). */
KD_INLINE __m256i kf_pick(const kf_c *f, fpl_rnd rnd, __m256i a, __m256i u, __m256i kl,
			  __m256i dh, __m256i T)
{
	const __m256i zero = _mm256_setzero_si256();
	const __m256i tr = _mm256_andnot_si256(f->mask, a);

	switch (rnd) {
	case FPL_RND_NE:
		return _mm256_andnot_si256(f->mask,
					   _mm256_add_epi32(_mm256_add_epi32(a, kl), f->halfm1));
	case FPL_RND_NA:
		return _mm256_andnot_si256(f->mask, _mm256_add_epi32(a, f->half));
	case FPL_RND_NZ:
		return _mm256_andnot_si256(f->mask, _mm256_add_epi32(a, f->halfm1));
	case FPL_RND_TP:
		return _mm256_castps_si256(_mm256_blendv_ps(
			_mm256_castsi256_ps(_mm256_andnot_si256(f->mask, _mm256_add_epi32(a, f->mask))),
			_mm256_castsi256_ps(tr), _mm256_castsi256_ps(u)));
	case FPL_RND_TN:
		return _mm256_castps_si256(_mm256_blendv_ps(
			_mm256_castsi256_ps(tr),
			_mm256_castsi256_ps(_mm256_andnot_si256(f->mask, _mm256_add_epi32(a, f->mask))),
			_mm256_castsi256_ps(u)));
	case FPL_RND_OD: {	/* as kd_pick's od (s32 < 23: bit s32 is the kept lsb) */
		__m256i ex = _mm256_cmpeq_epi32(_mm256_and_si256(a, f->mask), zero);
		if (!f->s52)
			return _mm256_or_si256(tr, _mm256_andnot_si256(ex, f->q));
		return _mm256_or_si256(tr, _mm256_and_si256(
			_mm256_andnot_si256(ex, _mm256_cmpeq_epi32(kl, zero)), f->q));
	}
	case FPL_RND_SP: {
		/* T' + r' wraps iff T + r >= 2^R (header comment) */
		__m256i sum = _mm256_add_epi32(T, dh);
		__m256i nc = _mm256_cmpeq_epi32(_mm256_max_epu32(sum, T), sum);
		return _mm256_add_epi32(tr, _mm256_andnot_si256(nc, f->q));
	}
	case FPL_RND_SE: {
		__m256i ex = _mm256_cmpeq_epi32(_mm256_and_si256(a, f->mask), zero);
		__m256i up = _mm256_sll_epi32(_mm256_srli_epi32(dh, 31), f->s);
		return _mm256_add_epi32(tr, _mm256_andnot_si256(ex, up));
	}
	default:	/* tz */
		return tr;
	}
}

/* The draws' high words of lanes j..j+7 (sp: their top R bits). */
KD_INLINE __m256i kf_dh(const kf_c *f, fpl_rnd rnd, int r32, __m256i zlo, __m256i zhi)
{
	__m256i dh;
	if (rnd != FPL_RND_SP && rnd != FPL_RND_SE)
		return _mm256_setzero_si256();
	dh = kd_mix_hi8(zlo, zhi, kd_xs(rnd, r32));
	return rnd == FPL_RND_SP && !r32 ? _mm256_and_si256(dh, f->rmask) : dh;
}

/* The common binary32 vector (as kd_fast64): zero or normal lanes whose
 * results are not above max; *odd when some lane is not such.  dh: kf_dh
 * of the vector (sp: the draws' top R bits, so that adding them under
 * the kept lsb and truncating rounds as kd_pick's sp). */
KD_INLINE __m256i kf_fast(const kf_c *f, fpl_rnd rnd, __m256i u, __m256i dh, __m256i *ex,
			  int *odd)
{
	__m256i a = _mm256_and_si256(u, f->absm), r, o, kl;

	if (rnd == FPL_RND_SP) {
		/* kd_pick's sp: a + ((r' & top R bits) >> (32 - s32)), the
		 * float having no bits below T's top s32 */
		r = _mm256_andnot_si256(f->mask,
					_mm256_add_epi32(a, _mm256_srl_epi32(dh, f->lal)));
	} else {
		kl = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi32(a, f->s), f->one), f->klor);
		r = kf_pick(f, rnd, a, u, kl, dh, _mm256_setzero_si256());
	}
	o = _mm256_or_si256(_mm256_cmpgt_epi32(f->minm1x, _mm256_add_epi32(a, f->absm)),
			    _mm256_cmpgt_epi32(_mm256_add_epi32(r, f->biaszs), f->maxzsx));
	*odd = !_mm256_testz_si256(o, o);
	*ex = _mm256_cmpeq_epi32(_mm256_and_si256(a, f->mask), _mm256_setzero_si256());
	return kf_sign(f, r, u, 0);
}

/*
 * The end of the branch-free vectors kf_ne and kf_sp, whose results r
 * (magnitudes) are exact in exactly the lanes where r = |x| = a: *exact gets
 * those lanes, *under the inexact ones among the tiny lanes that are
 * tiny after rounding, *odd whether a lane is above max, inf, NaN, a
 * special zero, or (no uok) a tiny lane reaching 2^emin, which the
 * slow path then does.  Tininess after rounding: rn, the normal range's
 * arithmetic on the raw bits with the same draw, is x rounded with an
 * unbounded exponent (uok: x's binade below 2^emin is normal in the
 * lane type).  Returns r with x's sign.
 */
KD_INLINE __m256i kf_finish(const kf_c *f, __m256i u, __m256i a, __m256i r, __m256i rn,
			    __m256i tiny, __m256i *exact, __m256i *under, int *odd, int zs)
{
	__m256i eq = _mm256_cmpeq_epi32(r, a);
	__m256i o = _mm256_cmpgt_epi32(_mm256_add_epi32(r, f->biaszs), f->maxzsx);

	if (!f->tiny_before && f->uok)
		tiny = _mm256_and_si256(tiny, _mm256_cmpgt_epi32(f->min, rn));
	else if (!f->tiny_before)
		o = _mm256_or_si256(o, _mm256_andnot_si256(_mm256_cmpgt_epi32(f->min, r), tiny));
	*odd = !_mm256_testz_si256(o, o);
	*exact = eq;
	*under = _mm256_andnot_si256(eq, tiny);
	return kf_sign(f, r, u, zs);
}

/*
 * Stochastic rounding (sp) of eight binary32 lanes with every zero,
 * normal and tiny lane done in place, branch-free.  Normal lanes are
 * kf_fast's.  For a tiny lane (0 < |x| < 2^emin) with significand M (the
 * implicit bit included) and t = emin_b32 + s32 - max(be, 1) the number
 * of M's bits below the subnormal quantum Q = 2^(emin-m), the result is
 * K Q with K = (M >> t) + carry, carry when T + r >= 2^R, T the R bits of
 * M below its kept lsb (M << (32 - t) left-aligned, or M >> (t - 32) when
 * t > 32; the top R of them) and r the draw's top R bits: T' + r' wraps
 * in 32 bits (the header comment).  K < 2^(m+1) converts exactly and K Q
 * is a multiple of Q below 2^(emin+1), a binary32 value: the product is
 * exact.  A lane is exact iff its result equals |x|.  Tininess after
 * rounding as in kf_ne: rn (the normal arithmetic on the raw bits, same
 * draw) is x rounded with an unbounded exponent.  kf_gen does the other
 * modes the same way.
 */
KD_INLINE __m256i kf_sp(const kf_c *f, int r32, __m256i u, __m256i dh, __m256i *inex,
			__m256i *under, __m256i *tinyp, int *odd)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i a = _mm256_and_si256(u, f->absm);
	__m256i rn = _mm256_andnot_si256(f->mask, _mm256_add_epi32(a, _mm256_srl_epi32(dh, f->lal)));
	__m256i tiny = _mm256_cmpgt_epi32(f->minm1x, _mm256_add_epi32(a, f->absm));
	__m256i be = _mm256_srli_epi32(a, 23), be0 = _mm256_cmpeq_epi32(be, zero);
	__m256i M = _mm256_or_si256(_mm256_and_si256(a, f->frac), _mm256_andnot_si256(be0, f->imp));
	__m256i t = _mm256_sub_epi32(f->tb, _mm256_sub_epi32(be, be0));
	__m256i sl = _mm256_sub_epi32(_mm256_set1_epi32(32), t);
	__m256i T = _mm256_or_si256(_mm256_sllv_epi32(M, sl), _mm256_srlv_epi32(M, _mm256_sub_epi32(zero, sl)));
	__m256i sum, carry, K, rt, r, eq;

	if (!r32)
		T = _mm256_and_si256(T, f->rmask);
	sum = _mm256_add_epi32(T, dh);
	carry = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_max_epu32(sum, T), sum),
				 _mm256_set1_epi32(-1));
	K = _mm256_sub_epi32(_mm256_srlv_epi32(M, t), carry);
	rt = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(K), f->qf));
	r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rn), _mm256_castsi256_ps(rt),
						 _mm256_castsi256_ps(tiny)));
	*tinyp = tiny;
	r = kf_finish(f, u, a, r, rn, tiny, &eq, under, odd, 0);
	*inex = _mm256_xor_si256(eq, _mm256_set1_epi32(-1));
	return r;
}

/*
 * Every mode but sp (kf_sp) on eight binary32 lanes with every zero,
 * normal and tiny lane done in place, branch-free (f->tok): kd_gen64's
 * arithmetic in 32-bit lanes.  Normal lanes are kf_pick's (rn); a tiny
 * lane has |x| = (M / 2^t) Q, M the 24-bit significand, t = emin_b32 + s32
 * - max(be, 1) >= 1, K = M >> t (0 for t >= 32) and T = M << (32 - t) =
 * f 2^32 exactly for t <= 32; for t > 32, K = 0, 0 < f < 2^24 / 2^33 <
 * 1/2 and T is M (nonzero, below 2^31, as f 2^32).  The decisions are
 * kd_gen64's with 2^31 for 2^63 (ne: T + (K & 1) > 2^31 without wrap, T's
 * low 32 - t bits being 0).  K <= 2^m <= 2^23 converts exactly, and K Q,
 * a multiple of Q = 2^(emin-m) >= 2^-149 not above 2^emin, is a binary32
 * value: the product is exact.  Exact lanes, tininess after rounding and
 * odd lanes as kf_sp's (kf_finish).
 */
KD_INLINE __m256i kf_gen(const kf_c *f, fpl_rnd rnd, __m256i u, __m256i dh, __m256i *inex,
			 __m256i *under, __m256i *tinyp, int *odd)
{
	const __m256i zero = _mm256_setzero_si256(), sb = _mm256_set1_epi32(INT32_MIN);
	__m256i a = _mm256_and_si256(u, f->absm);
	__m256i kl = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi32(a, f->s), f->one), f->klor);
	__m256i rn = kf_pick(f, rnd, a, u, kl, dh, zero);
	__m256i tiny = _mm256_cmpgt_epi32(f->minm1x, _mm256_add_epi32(a, f->absm));
	__m256i be = _mm256_srli_epi32(a, 23), be0 = _mm256_cmpeq_epi32(be, zero);
	__m256i M = _mm256_or_si256(_mm256_and_si256(a, f->frac), _mm256_andnot_si256(be0, f->imp));
	__m256i t = _mm256_sub_epi32(f->tb, _mm256_sub_epi32(be, be0));
	__m256i c32 = _mm256_set1_epi32(32);
	__m256i T;

	/* as kd_gen64: T = M (< 2^24, nonzero) for t > 32 where T != 0 is read */
	if (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_OD || rnd == FPL_RND_SE)
		T = _mm256_sllv_epi32(M, _mm256_max_epi32(_mm256_sub_epi32(c32, t), zero));
	else
		T = _mm256_sllv_epi32(M, _mm256_sub_epi32(c32, t));
	__m256i K = _mm256_srlv_epi32(M, t), nz = _mm256_cmpeq_epi32(T, zero), rt, r, eq;

	switch (rnd) {
	case FPL_RND_NE:
		K = _mm256_sub_epi32(K, _mm256_cmpgt_epi32(
			_mm256_xor_si256(_mm256_add_epi32(T, _mm256_and_si256(K, f->one)), sb), zero));
		break;
	case FPL_RND_NA:
		K = _mm256_sub_epi32(K, _mm256_cmpgt_epi32(zero, T));
		break;
	case FPL_RND_NZ:
		K = _mm256_sub_epi32(K, _mm256_cmpgt_epi32(_mm256_xor_si256(T, sb), zero));
		break;
	case FPL_RND_TP:
		K = _mm256_add_epi32(K, _mm256_andnot_si256(
			_mm256_or_si256(nz, _mm256_cmpgt_epi32(zero, u)), f->one));
		break;
	case FPL_RND_TN:
		K = _mm256_add_epi32(K, _mm256_andnot_si256(
			_mm256_or_si256(nz, _mm256_cmpgt_epi32(u, _mm256_set1_epi32(-1))), f->one));
		break;
	case FPL_RND_OD:
		K = _mm256_or_si256(K, _mm256_andnot_si256(nz, f->one));
		break;
	case FPL_RND_SE:
		K = _mm256_add_epi32(K, _mm256_andnot_si256(nz, _mm256_srli_epi32(dh, 31)));
		break;
	default:	/* tz (sp is kf_sp's) */
		break;
	}
	rt = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(K), f->qf));
	r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rn), _mm256_castsi256_ps(rt),
						 _mm256_castsi256_ps(tiny)));
	*tinyp = tiny;
	r = kf_finish(f, u, a, r, rn, tiny, &eq, under, odd, 0);
	*inex = _mm256_xor_si256(eq, _mm256_set1_epi32(-1));
	return r;
}

/* The tiny-lane vector of the binary32 loops (f->tok): kf_sp for sp,
 * else kf_gen. */
KD_INLINE __m256i kf_tfast(const kf_c *f, fpl_rnd rnd, int r32, __m256i u, __m256i dh,
			   __m256i *inex, __m256i *under, __m256i *tinyp, int *odd)
{
	if (rnd == FPL_RND_SP)
		return kf_sp(f, r32, u, dh, inex, under, tinyp, odd);
	(void)r32;
	return kf_gen(f, rnd, u, dh, inex, under, tinyp, odd);
}

/*
 * Round to nearest even with every zero, normal and tiny lane done in
 * place, branch-free (f->nok): eight binary32 lanes.  Normal and zero
 * lanes take the raw-bit arithmetic (rn).  A tiny lane, 0 < |x| < 2^emin,
 * rounds to a multiple of the subnormal quantum Q = 2^(emin-m): with C =
 * 2^23 Q, |x| + C lies in [C, 2C] where binary32's spacing is Q, so the
 * one IEEE addition (RNE: the call runs with the default MXCSR) rounds
 * |x|/Q to the nearest integer, ties to even, which is exactly the
 * format's gradual-underflow rounding; subtracting C is then exact
 * (Sterbenz).  No sticky bit or shift is needed: the hardware sees all of
 * |x|.  A tiny lane is exact iff that result equals |x|.  Tininess after
 * rounding is kf_tfast's: rn of a tiny lane is x rounded with an
 * unbounded exponent (uok), or the lanes reaching 2^emin go to the slow
 * path.  exact: the exact lanes; under: the underflowing ones; *odd: a
 * lane above max, inf, NaN, a special zero, or such a tiny lane.
 */
KD_INLINE __m256i kf_ne(const kf_c *f, __m256i u, __m256i *exact, __m256i *under, int *odd,
			int zs)
{
	__m256i a = _mm256_and_si256(u, f->absm);
	__m256i kl = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi32(a, f->s), f->one), f->klor);
	__m256i rn = _mm256_andnot_si256(f->mask, _mm256_add_epi32(_mm256_add_epi32(a, kl), f->halfm1));
	__m256i tiny = _mm256_cmpgt_epi32(f->minm1x, _mm256_add_epi32(a, f->absm));
	__m256i rt = _mm256_castps_si256(
		_mm256_sub_ps(_mm256_add_ps(_mm256_castsi256_ps(a), f->nC), f->nC));
	__m256i r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rn),
							 _mm256_castsi256_ps(rt),
							 _mm256_castsi256_ps(tiny)));
	return kf_finish(f, u, a, r, rn, tiny, exact, under, odd, zs);
}

/* kf_ne on four binary64 lanes (c->nok): C = 2^52 Q, binary64's spacing
 * in [C, 2C]. */
KD_INLINE __m256i kd_ne64(const kd_c *c, __m256i u, __m256i *exact, __m256i *under, int *odd,
			  int zs)
{
	__m256i a = _mm256_and_si256(u, c->absm);
	__m256i rn = _mm256_andnot_si256(
		c->mask, _mm256_add_epi64(_mm256_add_epi64(a, kd_kl(c, a, c->klor)), c->halfm1));
	__m256i tiny = _mm256_cmpgt_epi64(c->minm1x, _mm256_add_epi64(a, c->absm));
	__m256i rt = _mm256_castpd_si256(
		_mm256_sub_pd(_mm256_add_pd(_mm256_castsi256_pd(a), c->nC), c->nC));
	__m256i r = kd_blend(rn, rt, tiny);
	return kd_finish(c, u, a, r, rn, tiny, exact, under, odd, zs);
}

/*
 * Every lane in one formula: na, nz, tp, tn, tz, od and se on eight
 * binary32 lanes, zero, normal and tiny lanes alike, branch-free (f->uni:
 * gradual underflow, m >= 1, Q = 2^(emin-m) a normal float; for na, nz,
 * od and se also f->cq, below).
 *
 * The result of rounding x into the format is K q, where q = max(ulp(x),
 * Q) is the format's quantum at x (ulp(x) = 2^(e-m), e the exponent of
 * x; Q below 2^emin, where the format is fixed-point) and K the integer
 * the mode picks from v = x / q.
 *
 * tp, tn, tz: as bits, q = max(bits(x) & exponent - (m << 23), bits(Q))
 * (a signed max: for a tiny lane the difference is below bits(Q), or
 * negative), and 1/q = bits 254 << 23 minus those bits, a normal float
 * because q lies in [2^(emin-m), 2^(127-m)], m >= 1 and emin - m >= -126.
 * v = x (1/q) is exact: a power-of-two scaling of a binary32 value to |v|
 * < 2^(m+1) that is either an upscaling (tiny lanes) or stays normal; the
 * rounding of v to an integer is vroundps with the mode's direction in
 * its immediate (MXCSR not read): trunc for tz, ceil of the signed v for
 * tp (up for positive lanes, toward zero for negative ones), floor for
 * tn; K q is exact (K <= 2^(m+1) an integer, q a power of two, K q >= Q
 * normal when nonzero) or overflows to inf.  vroundps keeps the sign of v
 * (ceil(-0.3) = -0), so the results carry x's sign.
 *
 * na, nz, od, se: no division and no product.  C = 2^23 q has the bits
 * max(bits(x) & exponent, bits(2^emin)) + ((23 - m) << 23), and a = |x| <
 * 2^(e+1) <= C (m <= 22; a tiny lane: a < 2^emin <= C), so a sum C + w
 * with 0 <= w <= C lies in [C, 2C], where binary32's spacing is q: the
 * one addition rounds w to a multiple of q in the direction of the MXCSR
 * set by the loop (KD_UNI_CSR), and subtracting C again is exact (both
 * multiples of q, the difference at most 2C - C).  A rounding in a
 * direction d is monotone and leaves every value of the format's grid in
 * place, so rounding w first in d (an inexact a + h or a - h) and then
 * C + that in d gives the one rounding of C + w in d:
 *  - od: C + a toward zero is C + trunc(a/q) q, whose last encoding bit
 *    is K's (C's fraction bits are zero, K < 2^(m+1) <= 2^23); setting it
 *    when t - C != a and taking C off is od's K q;
 *  - na: floor((a + h)/q) q with h = q/2 (bits: C's minus 24 << 23, a
 *    normal float: emin - m - 1 >= -126), both additions rounded down:
 *    the nearest multiple, ties away from zero; a zero difference t - C
 *    is -0 when rounding down, hence the sign bit cleared;
 *  - nz: ceil((a - h)/q) q, both additions rounded up: the nearest
 *    multiple, ties toward zero.  For a < h, a - h lies in [-h, 0) and C
 *    + it rounds up to C, result 0, except a = 0, where C - h is a float
 *    and the difference -h: max(0, .) makes it +0 (and keeps a NaN: the
 *    maximum returns its second operand when one is a NaN).  Without it,
 *    and without na's cleared sign, such lanes would be odd (their sign
 *    bit set) and done by the slow path: speed, not bits;
 *  - se: the truncation (od's t - C) plus q (bits: C's minus 23 << 23)
 *    when it is not a and the draw's top bit is set, at most 2^(e+1),
 *    exact.
 * A carry to K = 2^(m+1) is the next binade's 2^(e+1), as the format has
 * it.  Lanes with e >= 105 + m make C's exponent field overflow (C inf,
 * or a negative C of tiny magnitude): their result is NaN or within an
 * ulp of a, above max, because f->cq requires max < 2^(105+m).
 *
 * A result above max, a NaN or inf input (the sums stay inf or NaN) is
 * an odd lane for the slow path; an fnuz zero result is +0 (kf_sign)
 * when zs is 1, and with zs = 2 (fnuz zeros left to the slow path, by
 * the constants kd_run sets) an odd lane too.  Without zs = 2 the test is
 * on the input, one compare: a > cmax (bits of max, or less, kd_setup's
 * cap), since a lane not above max rounds to at most max in every mode
 * (rounding is monotone and max is a value of the format; od's max is
 * odd), so every lane whose result could be above max, inf or NaN is
 * odd; with zs = 2 the result is tested, zeros included.
 * Inexact iff K q != |x|.  Underflow: a tiny inexact lane, and when
 * tininess is after rounding, one whose x rounded to p = m + 1 bits with
 * an unbounded exponent does not reach 2^emin.  Only x in [2^(emin-1),
 * 2^emin) can reach it, where that rounding is of 2|v| = |x| / (Q/2) to
 * an integer, reaching 2^(m+1) iff 2|v| > 2^(m+1) - 1 with an up
 * decision (tp on positive, tn on negative lanes, se on a set draw bit:
 * |v| > 2^m - 1/2), iff 2|v| >= 2^(m+1) - 1/2 (na; ne too), iff 2|v| >
 * 2^(m+1) - 1/2 (nz), never for tz and od (od's K is odd); ureach holds
 * 2^m - 1/4 or 2^m - 1/2, exact floats (m <= 22), and for a tiny lane (v
 * = |x| / Q) ureachb the bits of ureach Q (minus one for na's >=), a
 * compare of a's bits.  All of x below 2^(emin-1) has 2|v| < 2^m: no
 * reach.  The lanes tiny after rounding are then a < uti, one compare of
 * a's bits: uti = bits(2^emin), or for na and nz after rounding ureachb
 * + 1, the first bits that reach; tp, tn and se take the reaching lanes
 * off by their compare of v or their draw.  Zero lanes fall below uti
 * but are exact: *under gets the tiny lanes and the caller counts those
 * that are not exact.
 */
KD_INLINE __m256i kf_uni(const kf_c *f, fpl_rnd rnd, __m256i u, __m256i dh, __m256i *exact,
			 __m256i *under, __m256i *tinyp, int *odd, int zs)
{
	const __m256 sgn = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
	__m256i a = _mm256_and_si256(u, f->absm);
	__m256 xf = _mm256_castsi256_ps(u), af = _mm256_castsi256_ps(a);
	__m256i tiny = _mm256_cmpgt_epi32(f->uti, a);
	__m256i reach = _mm256_setzero_si256(), rm, rb = u, eq, o;

	if (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_TZ) {
		__m256i qb = _mm256_max_epi32(_mm256_sub_epi32(_mm256_and_si256(a, f->uexp), f->um),
					      f->uq);
		__m256 inv = _mm256_castsi256_ps(_mm256_sub_epi32(f->uinv, qb));
		__m256 v = _mm256_mul_ps(xf, inv), K;
		if (rnd == FPL_RND_TP) {
			K = _mm256_round_ps(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
			reach = _mm256_castps_si256(_mm256_cmp_ps(v, f->ureach, _CMP_GT_OQ));
		} else if (rnd == FPL_RND_TN) {
			K = _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
			reach = _mm256_castps_si256(
				_mm256_cmp_ps(_mm256_xor_ps(v, sgn), f->ureach, _CMP_GT_OQ));
		} else {
			K = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
		}
		rb = _mm256_castps_si256(_mm256_mul_ps(K, _mm256_castsi256_ps(qb)));
		rm = _mm256_and_si256(rb, f->absm);
	} else {
		__m256i cb = _mm256_add_epi32(_mm256_max_epi32(_mm256_and_si256(a, f->uexp), f->min),
					      f->uc);
		__m256 C = _mm256_castsi256_ps(cb), rt;
		if (rnd == FPL_RND_NA) {	/* rounded down (MXCSR) */
			__m256 h = _mm256_castsi256_ps(_mm256_sub_epi32(cb, f->uh));
			rt = _mm256_andnot_ps(sgn, _mm256_sub_ps(_mm256_add_ps(_mm256_add_ps(af, h), C), C));
		} else if (rnd == FPL_RND_NZ) {	/* rounded up (MXCSR) */
			__m256 h = _mm256_castsi256_ps(_mm256_sub_epi32(cb, f->uh));
			rt = _mm256_max_ps(_mm256_setzero_ps(),
					   _mm256_sub_ps(_mm256_add_ps(_mm256_sub_ps(af, h), C), C));
		} else {	/* od, se: rounded toward zero (MXCSR) */
			__m256 t = _mm256_add_ps(af, C), tr = _mm256_sub_ps(t, C);
			__m256 nx = _mm256_cmp_ps(tr, af, _CMP_NEQ_UQ);
			if (rnd == FPL_RND_OD) {
				rt = _mm256_sub_ps(_mm256_or_ps(t, _mm256_and_ps(nx, _mm256_castsi256_ps(f->one))),
						   C);
			} else {
				__m256 db = _mm256_castsi256_ps(_mm256_srai_epi32(dh, 31));
				__m256 q = _mm256_castsi256_ps(_mm256_sub_epi32(cb, f->uql));
				rt = _mm256_add_ps(tr, _mm256_and_ps(_mm256_and_ps(nx, db), q));
				reach = _mm256_and_si256(_mm256_cmpgt_epi32(a, f->ureachb),
							 _mm256_castps_si256(db));
			}
		}
		rm = _mm256_castps_si256(rt);
	}
	eq = _mm256_cmpeq_epi32(rm, a);
	o = zs == 2 ? _mm256_cmpgt_epi32(_mm256_add_epi32(rm, f->biaszs), f->maxzsx)
		    : _mm256_cmpgt_epi32(a, f->cmax);
	*odd = !_mm256_testz_si256(o, o);
	*tinyp = tiny;
	if (!f->tiny_before && (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_SE))
		tiny = _mm256_andnot_si256(reach, tiny);
	*exact = eq;
	*under = tiny;
	if (rnd != FPL_RND_TP && rnd != FPL_RND_TN && rnd != FPL_RND_TZ)
		return kf_sign(f, rm, u, zs == 1);
	if (zs == 1)	/* +0 for a zero result (kf_sign) */
		rb = _mm256_andnot_si256(
			_mm256_andnot_si256(f->absm, _mm256_cmpeq_epi32(rm, _mm256_setzero_si256())), rb);
	return rb;	/* K q carries x's sign */
}

/* kf_uni on four binary64 lanes (c->uni, c->cq): the same formulas.  tp
 * tn tz: 2046 << 52 for 1/q, m << 52, and the signed 64-bit max by a
 * compare and a blend (AVX2 has no vpmaxsq); q in [2^(emin-m),
 * 2^(1023-m)] and m >= 1 keep 1/q normal.  na nz od se: C = 2^52 q, with
 * the bits max(bits(x) & exponent, bits(2^emin)) + ((52 - m) << 52), the
 * maximum taken on the dwords (the low dwords of both are zero, the high
 * ones nonnegative), h = q/2 (53 << 52 off C's bits: emin - m - 1 >=
 * -1022), q (52 << 52 off), K < 2^(m+1) <= 2^52 in C's fraction bits;
 * lanes with e >= 972 + m have C's exponent field overflow (c->cq: max <
 * 2^(972+m)). */
KD_INLINE __m256i kd_uni64(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i d, __m256i *exact,
			   __m256i *under, __m256i *tinyp, int *odd, int zs)
{
	const __m256d sgn = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MIN));
	__m256i a = _mm256_and_si256(u, c->absm);
	__m256d xf = _mm256_castsi256_pd(u), af = _mm256_castsi256_pd(a);
	__m256i tiny = _mm256_cmpgt_epi64(c->uti, a);
	__m256i reach = _mm256_setzero_si256(), rm, rb = u, eq, o;

	if (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_TZ) {
		__m256i qe = _mm256_sub_epi64(_mm256_and_si256(a, c->uexp), c->um);
		__m256i qb = kd_blend(qe, c->uq, _mm256_cmpgt_epi64(c->uq, qe));
		__m256d inv = _mm256_castsi256_pd(_mm256_sub_epi64(c->uinv, qb));
		__m256d v = _mm256_mul_pd(xf, inv), K;
		if (rnd == FPL_RND_TP) {
			K = _mm256_round_pd(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
			reach = _mm256_castpd_si256(_mm256_cmp_pd(v, c->ureach, _CMP_GT_OQ));
		} else if (rnd == FPL_RND_TN) {
			K = _mm256_round_pd(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
			reach = _mm256_castpd_si256(
				_mm256_cmp_pd(_mm256_xor_pd(v, sgn), c->ureach, _CMP_GT_OQ));
		} else {
			K = _mm256_round_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
		}
		rb = _mm256_castpd_si256(_mm256_mul_pd(K, _mm256_castsi256_pd(qb)));
		rm = _mm256_and_si256(rb, c->absm);
	} else {
		__m256i cb = _mm256_add_epi64(_mm256_max_epi32(_mm256_and_si256(a, c->uexp), c->min),
					      c->uc);
		__m256d C = _mm256_castsi256_pd(cb), rt;
		if (rnd == FPL_RND_NA) {
			__m256d h = _mm256_castsi256_pd(_mm256_sub_epi64(cb, c->uh));
			rt = _mm256_andnot_pd(sgn, _mm256_sub_pd(_mm256_add_pd(_mm256_add_pd(af, h), C), C));
		} else if (rnd == FPL_RND_NZ) {
			__m256d h = _mm256_castsi256_pd(_mm256_sub_epi64(cb, c->uh));
			rt = _mm256_max_pd(_mm256_setzero_pd(),
					   _mm256_sub_pd(_mm256_add_pd(_mm256_sub_pd(af, h), C), C));
		} else {
			__m256d t = _mm256_add_pd(af, C), tr = _mm256_sub_pd(t, C);
			__m256d nx = _mm256_cmp_pd(tr, af, _CMP_NEQ_UQ);
			if (rnd == FPL_RND_OD) {
				rt = _mm256_sub_pd(_mm256_or_pd(t, _mm256_and_pd(nx, _mm256_castsi256_pd(c->one))),
						   C);
			} else {
				__m256d db = _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_setzero_si256(), d));
				__m256d q = _mm256_castsi256_pd(_mm256_sub_epi64(cb, c->uql));
				rt = _mm256_add_pd(tr, _mm256_and_pd(_mm256_and_pd(nx, db), q));
				reach = _mm256_and_si256(_mm256_cmpgt_epi64(a, c->ureachb),
							 _mm256_castpd_si256(db));
			}
		}
		rm = _mm256_castpd_si256(rt);
	}
	eq = _mm256_cmpeq_epi64(rm, a);
	o = zs == 2 ? _mm256_cmpgt_epi64(_mm256_add_epi64(rm, c->biaszs), c->maxzsx)
		    : _mm256_cmpgt_epi64(a, c->cmax);
	*odd = !_mm256_testz_si256(o, o);
	*tinyp = tiny;
	if (!c->tiny_before && (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_SE))
		tiny = _mm256_andnot_si256(reach, tiny);
	*exact = eq;
	*under = tiny;
	if (rnd != FPL_RND_TP && rnd != FPL_RND_TN && rnd != FPL_RND_TZ)
		return kd_sign(c, rm, u, zs == 1);
	if (zs == 1)
		rb = _mm256_andnot_si256(
			_mm256_andnot_si256(c->absm, _mm256_cmpeq_epi64(rm, _mm256_setzero_si256())), rb);
	return rb;
}

/*
 * ne, tp, tn and tz on eight binary32 lanes, zero, normal and tiny lanes
 * alike, by one signed addition (f->cok): the cheapest vectors of the
 * file, about fourteen vector operations where kf_ne and kf_uni take
 * twenty-odd, which kept the ne and directed rows compute-bound on one
 * Zen 5 core (the loops ran as fast from L2 as from memory).
 *
 * Rounding.  With q = max(ulp(x), Q) the format's quantum at x (kf_uni)
 * and C = 2^23 q (bits max(bits(x) & exponent, bits(2^emin)) + ((23 - m)
 * << 23)), a = |x| < 2^(e+1) <= C (a tiny lane: a < 2^emin <= 2^(emin
 * - m + 23) = C), so C + a lies in [C, 2C], where binary32's spacing is
 * q.  Let sC be C with x's sign.  The one IEEE addition t = x + sC =
 * sign(x) (C + a) rounds C + a to a multiple of q in the direction of the
 * MXCSR the loop sets (KD_C_CSR): ties to even for ne (the parity of the
 * multiple C + K q, C's fraction bits being zero and K <= 2^(m+1) <=
 * 2^23, is K's, the parity of the format's significand), toward +inf for
 * tp (up in magnitude for x > 0, down for x < 0), toward -inf for tn,
 * toward zero for tz; t - sC = sign(x) K q is exact (both are multiples
 * of q, the difference at most C).  That is the format's rounding of x
 * (K q with a carry to K = 2^(m+1) the next binade's 2^(e+1)).
 *
 * Zeros.  t - sC is a zero exactly when K = 0 (x = 0 included); an exact
 * zero difference is +0 in every direction but toward -inf, where it is
 * -0 (IEEE 754, 6.3).  The reference gives a zero result x's sign, and
 * +0 in an fnuz format (no -0; kd_sign): for ne, tp and tz that is r |
 * sign(x), or r itself when zs; for tn r & (bits(x) | absm) (the sign
 * bit kept only when x's is set), or, when zs, -0 replaced by +0.
 * Nonzero results already carry x's sign, unchanged by these.
 *
 * Flags.  A lane is exact iff r == x as floats (the fnuz +0 of a -0
 * input is exact, as in kf_sign).  Lanes with a > bits(max) (above max,
 * inf, NaN) are odd: the vector goes to kd_wide8o.  Every other lane
 * rounds to at most max, a value of the format (rounding is monotone and
 * leaves max in place), so no result above max, and C is finite (f->cok:
 * max < 2^(105+m), as for kf_uni's cq; a lane rounding to K q = 2^(e+1)
 * gives t = C + 2^(e+1) <= 2C, finite because 2^(e+1) <= max).
 * Underflow: inexact and tiny; with tininess after rounding, only x in
 * [2^(emin-1), 2^emin) can reach 2^emin (kf_uni's comment): for ne iff
 * |x| >= 2^emin - Q/4 (the tie goes to 2^emin, which is even), for tp
 * iff x > 2^emin - Q/2, for tn iff x < -(2^emin - Q/2), never for tz.
 * So the tiny lanes are a < cti (bits; cti = bits(2^emin - Q/4) for ne
 * after rounding, bits(2^emin) otherwise), minus, for tp and tn after
 * rounding, the lanes reaching (one compare with ctp = +-(2^emin -
 * Q/2)).  Both thresholds are binary32 values (m + 2 bits, checked in
 * kd_setup).  Zero lanes fall below cti but are exact: the caller counts
 * underflow as tiny and not exact.
 */
KD_INLINE __m256i kf_c1(const kf_c *f, fpl_rnd rnd, __m256i u, __m256i *exact, __m256i *tiny,
			int *odd, int zs)
{
	const __m256i sgnb = _mm256_set1_epi32(INT32_MIN);
	__m256i a = _mm256_and_si256(u, f->absm), sign = _mm256_and_si256(u, sgnb);
	__m256i cb = _mm256_add_epi32(_mm256_max_epi32(_mm256_and_si256(u, f->uexp), f->min), f->uc);
	__m256 x = _mm256_castsi256_ps(u), sC = _mm256_castsi256_ps(_mm256_or_si256(cb, sign));
	__m256i r = _mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(x, sC), sC));
	__m256i o = _mm256_cmpgt_epi32(a, f->cmax), ti = _mm256_cmpgt_epi32(f->cti, a);

	*odd = !_mm256_testz_si256(o, o);
	if (!f->tiny_before && rnd == FPL_RND_TP)
		ti = _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(x, f->ctp, _CMP_GT_OQ)), ti);
	else if (!f->tiny_before && rnd == FPL_RND_TN)
		ti = _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(x, f->ctp, _CMP_LT_OQ)), ti);
	*tiny = ti;
	if (rnd == FPL_RND_TN && zs)
		r = _mm256_andnot_si256(_mm256_cmpeq_epi32(r, sgnb), r);
	else if (rnd == FPL_RND_TN)
		r = _mm256_and_si256(r, _mm256_or_si256(u, f->absm));
	else if (!zs)
		r = _mm256_or_si256(r, sign);
	*exact = _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(r), x, _CMP_EQ_OQ));
	return r;
}

/* kf_c1 on four binary64 lanes (c->cok): C = 2^52 q, the bits max(bits(x)
 * & exponent, bits(2^emin)) + ((52 - m) << 52) with the maximum taken on
 * the dwords (kd_uni64), K <= 2^(m+1) <= 2^52 in C's fraction bits, C
 * finite because max < 2^(972+m); thresholds of m + 2 <= 53 bits. */
KD_INLINE __m256i kd_c1(const kd_c *c, fpl_rnd rnd, __m256i u, __m256i *exact, __m256i *tiny,
			int *odd, int zs)
{
	const __m256i sgnb = _mm256_set1_epi64x(INT64_MIN);
	__m256i a = _mm256_and_si256(u, c->absm), sign = _mm256_and_si256(u, sgnb);
	__m256i cb = _mm256_add_epi64(_mm256_max_epi32(_mm256_and_si256(u, c->uexp), c->min), c->uc);
	__m256d x = _mm256_castsi256_pd(u), sC = _mm256_castsi256_pd(_mm256_or_si256(cb, sign));
	__m256i r = _mm256_castpd_si256(_mm256_sub_pd(_mm256_add_pd(x, sC), sC));
	__m256i o = _mm256_cmpgt_epi64(a, c->cmax), ti = _mm256_cmpgt_epi64(c->cti, a);

	*odd = !_mm256_testz_si256(o, o);
	if (!c->tiny_before && rnd == FPL_RND_TP)
		ti = _mm256_andnot_si256(_mm256_castpd_si256(_mm256_cmp_pd(x, c->ctp, _CMP_GT_OQ)), ti);
	else if (!c->tiny_before && rnd == FPL_RND_TN)
		ti = _mm256_andnot_si256(_mm256_castpd_si256(_mm256_cmp_pd(x, c->ctp, _CMP_LT_OQ)), ti);
	*tiny = ti;
	if (rnd == FPL_RND_TN && zs)
		r = _mm256_andnot_si256(_mm256_cmpeq_epi64(r, sgnb), r);
	else if (rnd == FPL_RND_TN)
		r = _mm256_and_si256(r, _mm256_or_si256(u, c->absm));
	else if (!zs)
		r = _mm256_or_si256(r, sign);
	*exact = _mm256_castpd_si256(_mm256_cmp_pd(_mm256_castsi256_pd(r), x, _CMP_EQ_OQ));
	return r;
}

static uint32_t kd_fbits(double v)
{
	float x = (float)v;
	uint32_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static void kd_setup(kd_c *c, kf_c *f, const fpl_kparams *p, fpl_rnd rnd)
{
	uint64_t s = p->s, R = p->sr_bits, s32 = s - 29;
	int emin = (int)p->emin_b - 1023, m = 52 - (int)s;
	double dmin, dmax;
	uint32_t min32, max32, zs = (uint32_t)p->zero_special;

	c->one = _mm256_set1_epi64x(1);
	c->absm = _mm256_set1_epi64x(0x7fffffffffffffffll);
	c->imp = _mm256_set1_epi64x(1ll << 52);
	c->frac = _mm256_set1_epi64x(0x000fffffffffffffll);
	c->emin_b = _mm256_set1_epi64x((long long)p->emin_b);
	c->magic = _mm256_set1_epi64x(0x4330000000000000ll);
	c->q = _mm256_set1_epi64x((long long)(1ull << s));
	c->mask = _mm256_set1_epi64x((long long)((1ull << s) - 1));
	c->half = _mm256_set1_epi64x((long long)(1ull << (s - 1)));
	c->halfm1 = _mm256_set1_epi64x((long long)((1ull << (s - 1)) - 1));
	c->klor = _mm256_set1_epi64x(s == 52);
	c->s52 = s == 52;
	c->s = _mm_cvtsi64_si128((long long)s);
	c->ssh = _mm_cvtsi64_si128((long long)(64 - s));
	c->rmask = _mm256_set1_epi64x((long long)(~0ull << (64 - R)));	/* 1 <= R <= 32 */
	c->minm1x = _mm256_set1_epi64x((long long)((p->min_bits - 1) ^ 0x8000000000000000ull));
	/* the ne and uni loops make fnuz zeros +0 themselves (kd_sign), with
	 * these; kd_full and the adaptive loops (kd_run) give them to the
	 * scalar engine, with fbiaszs and fmaxzsx */
	c->zs = (int)p->zero_special;
	c->biaszs = _mm256_set1_epi64x((long long)0x8000000000000000ull);
	c->maxzsx = _mm256_set1_epi64x((long long)(p->max_bits ^ 0x8000000000000000ull));
	c->fbiaszs = _mm256_set1_epi64x((long long)(0x8000000000000000ull - p->zero_special));
	c->fmaxzsx = _mm256_set1_epi64x(
		(long long)((p->max_bits - p->zero_special) ^ 0x8000000000000000ull));
	c->min = _mm256_set1_epi64x((long long)p->min_bits);
	c->lanes_g = _mm256_set_epi64x((long long)(3 * KD_GOLDEN), (long long)(2 * KD_GOLDEN),
				       (long long)KD_GOLDEN, 0);
	c->step = _mm256_set1_epi64x((long long)(4 * KD_GOLDEN));
	c->two52 = _mm256_set1_pd(0x1p52);
	c->unit = _mm256_set1_pd(ldexp(1.0, (int)p->emin_b - 1023 - 52));
	c->key = p->key;
	c->tiny_before = (int)p->tiny_before;
	/* scaled tiny lanes need the sticky bit below the half bit (s >= 2)
	 * and, for sp, all R bits of T among the s they keep */
	c->sub_ok = p->sub_fast && s >= 2 && (rnd != FPL_RND_SP || R <= s);
	c->uok = p->emin_b >= 2;
	/* kd_ne64: 2^52 Q a normal double (Q = 2^(emin-m) >= 2^-1074 holds
	 * for every format narrower than binary64) */
	c->nok = p->sub_fast && emin - m + 52 >= -1022 && emin - m >= -1074;
	c->nC = _mm256_set1_pd(ldexp(1.0, emin - m + 52));
	/* kd_sp64: gradual underflow, Q a binary64 value */
	c->sok = p->sub_fast && emin - m >= -1074;
	c->tb = _mm256_set1_epi64x((long long)(p->emin_b + s));
	c->qd = _mm256_set1_pd(ldexp(1.0, emin - m));
	c->ton = c->sok || (rnd != FPL_RND_SP && c->sub_ok);
	/* kd_uni64: gradual underflow, m >= 1, Q a normal double; na nz od
	 * se (cq) also h = Q/2 normal and max < 2^(972+m) */
	c->cq = emin - m - 1 >= -1022 && p->max_bits < (uint64_t)(972 + m + 1023) << 52;
	c->uni = p->sub_fast && m >= 1 && emin - m >= -1022 && rnd != FPL_RND_SP
		 && rnd != FPL_RND_NE
		 && (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_TZ || c->cq);
	c->uexp = _mm256_set1_epi64x(0x7ff0000000000000ll);
	c->um = _mm256_set1_epi64x((long long)((uint64_t)m << 52));
	c->uq = _mm256_set1_epi64x((long long)((uint64_t)(emin - m + 1023) << 52));
	c->uinv = _mm256_set1_epi64x((long long)(2046ull << 52));
	c->ureach = _mm256_set1_pd(ldexp(1.0, m) - (rnd == FPL_RND_NA || rnd == FPL_RND_NZ ? 0.25 : 0.5));
	c->uc = _mm256_set1_epi64x((long long)((uint64_t)(52 - m) << 52));
	c->uh = _mm256_set1_epi64x((long long)(53ull << 52));
	c->uql = _mm256_set1_epi64x((long long)(52ull << 52));
	{	/* bits of ureach Q = 2^emin - 2^(emin-m-2) (na: - 1/4 Q) or
		 * 2^emin - 2^(emin-m-1), exact; na's >= is > of one less */
		double rq = ldexp(1.0, emin) - ldexp(1.0, emin - m - (rnd == FPL_RND_NA || rnd == FPL_RND_NZ ? 2 : 1));
		uint64_t rb;
		memcpy(&rb, &rq, sizeof rb);
		c->ureachb = _mm256_set1_epi64x((long long)(rb - (rnd == FPL_RND_NA)));
	}

	/* kd_c1: gradual underflow, 2^emin and C = 2^52 Q normal doubles, max
	 * < 2^(972+m), and the tiny threshold 2^emin - Q/4 (ne after rounding)
	 * a double (its last bit 2^(emin-m-2)) */
	c->cok = p->sub_fast && emin >= -1022 && emin - m + 52 >= -1022
		 && (p->tiny_before || emin - m - 2 >= -1074);
	{	/* lanes above max or at least 2^(971+m) (C could overflow) are odd */
		uint64_t cap = ((uint64_t)(971 + m + 1023) << 52) - 1;
		c->cmax = _mm256_set1_epi64x((long long)(p->max_bits < cap ? p->max_bits : cap));
	}
	c->uti = !p->tiny_before && (rnd == FPL_RND_NA || rnd == FPL_RND_NZ)
		 ? _mm256_add_epi64(c->ureachb, c->one) : c->min;
	{
		double t = !p->tiny_before && rnd == FPL_RND_NE
			? ldexp(1.0, emin) - ldexp(1.0, emin - m - 2) : ldexp(1.0, emin);
		double tp = ldexp(1.0, emin) - ldexp(1.0, emin - m - 1);
		uint64_t tb;
		memcpy(&tb, &t, sizeof tb);
		c->cti = _mm256_set1_epi64x((long long)tb);
		c->ctp = _mm256_set1_pd(rnd == FPL_RND_TN ? -tp : tp);
	}

	/* binary32 lanes: only when called for a format that fits binary32
	 * (s >= 29); min and max are then binary32 values */
	f->ok = s >= 30 && s <= 52;
	f->tok = f->nok = f->uni = f->zs = f->cok = 0;
	f->max32 = 0;
	if (!f->ok)
		return;
	memcpy(&dmin, &p->min_bits, sizeof dmin);
	memcpy(&dmax, &p->max_bits, sizeof dmax);
	min32 = kd_fbits(dmin);
	max32 = kd_fbits(dmax);
	f->absm = _mm256_set1_epi32(0x7fffffff);
	f->one = _mm256_set1_epi32(1);
	f->q = _mm256_set1_epi32((int)(1u << s32));
	f->mask = _mm256_set1_epi32((int)((1u << s32) - 1));
	f->half = _mm256_set1_epi32((int)(1u << (s32 - 1)));
	f->halfm1 = _mm256_set1_epi32((int)((1u << (s32 - 1)) - 1));
	f->klor = _mm256_set1_epi32(s32 == 23);
	f->s52 = s32 == 23;
	f->minm1x = _mm256_set1_epi32((int)((min32 - 1) ^ 0x80000000u));
	f->zs = (int)zs;
	f->max32 = max32;
	f->biaszs = _mm256_set1_epi32((int)0x80000000u);
	f->maxzsx = _mm256_set1_epi32((int)(max32 ^ 0x80000000u));
	f->rmask = _mm256_set1_epi32((int)(0xffffffffu << (32 - R)));	/* 1 <= R <= 32 */
	f->glo = _mm256_set_epi64x((long long)(5 * KD_GOLDEN), (long long)(4 * KD_GOLDEN),
				   (long long)KD_GOLDEN, 0);
	f->ghi = _mm256_set_epi64x((long long)(7 * KD_GOLDEN), (long long)(6 * KD_GOLDEN),
				   (long long)(3 * KD_GOLDEN), (long long)(2 * KD_GOLDEN));
	f->step = _mm256_set1_epi64x((long long)(8 * KD_GOLDEN));
	f->s = _mm_cvtsi64_si128((long long)s32);
	f->lal = _mm_cvtsi64_si128((long long)(32 - s32));
	f->frac = _mm256_set1_epi32(0x7fffff);
	f->imp = _mm256_set1_epi32(0x800000);
	f->min = _mm256_set1_epi32((int)min32);
	f->tiny_before = (int)p->tiny_before;
	f->uok = emin > -126;
	/* kf_ne: gradual underflow, 2^23 Q a normal float (m <= 22 and emin
	 * >= -126 make it at least 2^-125) */
	f->nok = p->sub_fast && emin >= -126;
	f->nC = _mm256_set1_ps(ldexpf(1.0f, emin - m + 23));
	/* kf_tfast (kf_sp, kf_gen): gradual underflow, Q = 2^(emin-m) >=
	 * 2^-149 a binary32 value */
	f->tb = _mm256_set1_epi32(emin + 127 + (int)s32);
	f->qf = _mm256_set1_ps(ldexpf(1.0f, emin - m));
	f->tok = p->sub_fast && emin >= -126;
	/* kf_uni: gradual underflow, m >= 1, Q a normal float; na nz od se
	 * (cq) also h = Q/2 normal and max < 2^(105+m) */
	f->cq = emin - m - 1 >= -126 && max32 < (uint32_t)(105 + m + 127) << 23;
	f->uni = p->sub_fast && m >= 1 && emin - m >= -126 && rnd != FPL_RND_SP && rnd != FPL_RND_NE
		 && (rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_TZ || f->cq);
	f->uexp = _mm256_set1_epi32(0x7f800000);
	f->um = _mm256_set1_epi32((int)((uint32_t)m << 23));
	f->uq = _mm256_set1_epi32((int)((uint32_t)(emin - m + 127) << 23));	/* used when uni */
	f->uinv = _mm256_set1_epi32(254 << 23);
	f->ureach = _mm256_set1_ps(ldexpf(1.0f, m) - (rnd == FPL_RND_NA || rnd == FPL_RND_NZ ? 0.25f : 0.5f));
	f->uc = _mm256_set1_epi32((int)((uint32_t)(23 - m) << 23));
	f->uh = _mm256_set1_epi32(24 << 23);
	f->uql = _mm256_set1_epi32(23 << 23);
	/* bits of ureach Q (kd_c's ureachb), a binary32 value in [2^(emin-1),
	 * 2^emin) with m + 2 bits: exact */
	f->ureachb = _mm256_set1_epi32((int)(kd_fbits(ldexp(1.0, emin) - ldexp(1.0, emin - m - (rnd == FPL_RND_NA || rnd == FPL_RND_NZ ? 2 : 1)))
					     - (rnd == FPL_RND_NA)));
	/* kf_c1: gradual underflow, 2^emin and C = 2^23 Q normal floats, max <
	 * 2^(105+m), the thresholds binary32 values (2^emin - Q/4 for ne after
	 * rounding: its last bit 2^(emin-m-2); 2^emin - Q/2 for tp tn) */
	f->cok = p->sub_fast && emin >= -126 && emin - m + 23 >= -126
		 && (p->tiny_before || emin - m - 2 >= -149);
	{	/* lanes above max or at least 2^(104+m) (C could overflow) are odd */
		uint32_t cap = ((uint32_t)(104 + m + 127) << 23) - 1;
		f->cmax = _mm256_set1_epi32((int)(max32 < cap ? max32 : cap));
	}
	f->uti = !p->tiny_before && (rnd == FPL_RND_NA || rnd == FPL_RND_NZ)
		 ? _mm256_add_epi32(f->ureachb, f->one) : f->min;
	f->cti = _mm256_set1_epi32((int)(!p->tiny_before && rnd == FPL_RND_NE
		 ? kd_fbits(ldexp(1.0, emin) - ldexp(1.0, emin - m - 2)) : min32));
	f->ctp = _mm256_set1_ps((float)((rnd == FPL_RND_TN ? -1 : 1)
		 * (ldexp(1.0, emin) - ldexp(1.0, emin - m - 1))));
}

/* Sum of four 64-bit lanes. */
static uint64_t kd_hsum64(__m256i v)
{
	uint64_t t[4];
	_mm256_storeu_si256((__m256i *)t, v);
	return t[0] + t[1] + t[2] + t[3];
}

/* Lanes of an all-ones mask, counted by movemask and popcnt on the
 * integer ports: the hot loops keep their counts in general registers,
 * no loop-carried vector to spill. */
KD_INLINE unsigned kd_cnt64(__m256i m)
{
	return (unsigned)__builtin_popcount((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(m)));
}

KD_INLINE unsigned kd_cnt32(__m256i m)
{
	return (unsigned)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m)));
}

KD_INLINE void kd_st(void *p, __m256i r, int stream)
{
	if (stream)
		_mm256_stream_si256((__m256i *)p, r);
	else
		_mm256_storeu_si256((__m256i *)p, r);
}

/*
 * The rare vectors of the branching loops, out of line: a hot loop
 * breaks out to them and starts again after, so that its registers are
 * allocated for it alone (AVX2 has sixteen; with the rare code inlined,
 * gcc kept the loop's counters on the stack, a store-to-load chain per
 * vector).  The same arithmetic as before, so the same bits and counts;
 * the draws are recomputed from the index (the same bits).
 */
KD_INLINE __m256i kd_odd64(const kd_c *c, fpl_rnd rnd, const double *xj,
						  size_t j, uint64_t idx, kd_acc *acc,
						  fpl_kslow slow, void *ctx)
{
	__m256i u = _mm256_loadu_si256((const __m256i *)xj);

	if (c->sok)
		return kd_xv(c, rnd, u, kd_draw(c->key, idx, c->lanes_g), j, idx, acc, slow, ctx);
	return kd_full(c, rnd, u, _mm256_set1_epi64x(-1), j, idx, acc, slow, ctx, 0);
}

KD_INLINE __m256i kd_odd32(const kd_c *c, const kf_c *f, fpl_rnd rnd,
						  int r32, const float *xj, size_t j, uint64_t idx,
						  kd_acc *acc, fpl_kslow slow, void *ctx)
{
	__m256i u = _mm256_loadu_si256((const __m256i *)xj);

	if (f->ok && f->tok) {
		__m256i inex, un, ti, r;
		int odd;
		r = kf_tfast(f, rnd, r32, u,
			     kf_dh(f, rnd, r32, kd_base(c->key, idx, f->glo),
				   kd_base(c->key, idx, f->ghi)),
			     &inex, &un, &ti, &odd);
		if (!odd) {
			acc->inexact = _mm256_add_epi64(acc->inexact,
							_mm256_set_epi64x(0, 0, 0, kd_cnt32(inex)));
			acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, kd_cnt32(un)));
			return r;
		}
	}
	return _mm256_castps_si256(kd_wide8(c, rnd, _mm256_castsi256_ps(u), 8, j, idx, acc, slow, ctx));
}

/*
 * The loops run in spans of KD_SPAN vectors, each in one of two modes:
 * the fast vectors with a branch to the full code for a vector with a
 * rare lane, or (when tiny lanes are allowed for and frequent: KD_TON
 * such vectors in the last span) branch-free vectors that do tiny lanes
 * in place, until a span has fewer than KD_TOFF tiny lanes.  Both give
 * the same bits and counts; only the speed differs.  (With N(0, 1) data
 * e4m3fn has a tiny lane in one vector in twenty and stays with the
 * branch; e3m2, e2m3 and e2m1, in more than half, are faster without.)
 */
#define KD_SPAN 64
#define KD_TON 24
#define KD_TOFF 16

KD_INLINE void kd_run64(const kd_c *c, fpl_rnd rnd, int r32, int stream, double *z,
			const double *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
			kd_acc *acc)
{
	const int draws = rnd == FPL_RND_SP || rnd == FPL_RND_SE, xs = kd_xs(rnd, r32);
	const __m256i ones = _mm256_set1_epi64x(-1);
	size_t j = 0, inexact = 0, under = 0;
	int tmode = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 8;
		if (h > n)
			h = n;
		kd_part64(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	while (j + 4 <= n) {
		size_t nv = (n - j) / 4 > KD_SPAN ? KD_SPAN : (n - j) / 4, end = j + 4 * nv, nodd = 0;
		if (!tmode) {
			while (j < end) {
				__m256i zb = kd_base(c->key, idx0 + j, c->lanes_g);
				for (; j < end; j += 4, zb = _mm256_add_epi64(zb, c->step)) {
					__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), ex, r;
					__m256i d = draws ? kd_mixx(zb, xs) : _mm256_setzero_si256();
					int odd;
					r = kd_fast64(c, rnd, u, d, &ex, &odd);
					if (__builtin_expect(odd, 0))
						break;
					inexact += 4 - kd_cnt64(ex);
					kd_st(z + j, r, stream);
				}
				if (j < end) {
					kd_st(z + j, kd_odd64(c, rnd, x + j, j, idx0 + j, acc, slow, ctx),
					      stream);
					nodd++;
					j += 4;
				}
			}
			tmode = c->ton && nodd >= KD_TON;
		} else if (c->sok) {
			/* branch-free: kd_sp64 or kd_gen64, kd_full for an odd lane */
			size_t ntiny = 0;
			while (j < end) {
				__m256i zb = kd_base(c->key, idx0 + j, c->lanes_g);
				for (; j < end; j += 4, zb = _mm256_add_epi64(zb, c->step)) {
					__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, un, ti, r;
					__m256i d = draws ? kd_mixx(zb, xs) : _mm256_setzero_si256();
					int odd;
					if (rnd == FPL_RND_SP)
						r = kd_sp64(c, u, d, &eq, &un, &ti, &odd);
					else
						r = kd_gen64(c, rnd, u, d, &eq, &un, &ti, &odd);
					ntiny += kd_cnt64(ti);
					if (__builtin_expect(odd, 0))
						break;
					inexact += 4 - kd_cnt64(eq);
					under += kd_cnt64(un);
					kd_st(z + j, r, stream);
				}
				if (j < end) {
					kd_st(z + j, kd_full(c, rnd, _mm256_loadu_si256((const __m256i *)(x + j)),
							     ones, j, idx0 + j, acc, slow, ctx, 0),
					      stream);
					j += 4;
				}
			}
			tmode = ntiny >= KD_TOFF;
		} else {
			/* a kd_acc of the span's own, which never escapes */
			kd_acc la;
			la.inexact = la.under = la.tiny = _mm256_setzero_si256();
			la.special = acc->special;
			for (; j < end; j += 4) {
				__m256i u = _mm256_loadu_si256((const __m256i *)(x + j));
				kd_st(z + j, kd_full(c, rnd, u, ones, j, idx0 + j, &la, slow, ctx, 1), stream);
			}
			acc->inexact = _mm256_add_epi64(acc->inexact, la.inexact);
			acc->under = _mm256_add_epi64(acc->under, la.under);
			tmode = kd_hsum64(la.tiny) >= KD_TOFF;
		}
	}
	if (j < n)
		kd_part64(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

KD_INLINE void kd_run32(const kd_c *c, const kf_c *f, fpl_rnd rnd, int r32, int stream, float *z,
			const float *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
			kd_acc *acc)
{
	size_t j = 0, inexact = 0, under = 0;
	int tmode = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 4;
		if (h > n)
			h = n;
		kd_part32(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	while (j + 8 <= n) {
		size_t nv = (n - j) / 8 > KD_SPAN ? KD_SPAN : (n - j) / 8, end = j + 8 * nv;
		size_t nodd = 0, ntiny = 0;
		if (!tmode) {
			while (j < end) {
				__m256i zlo = kd_base(c->key, idx0 + j, f->glo);
				__m256i zhi = kd_base(c->key, idx0 + j, f->ghi);
				for (; j < end; j += 8, zlo = _mm256_add_epi64(zlo, f->step),
				     zhi = _mm256_add_epi64(zhi, f->step)) {
					__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), ex, r;
					int odd;
					if (!f->ok)	/* kd_odd32 does every vector */
						break;
					r = kf_fast(f, rnd, u, kf_dh(f, rnd, r32, zlo, zhi), &ex, &odd);
					if (__builtin_expect(odd, 0))
						break;
					inexact += 8 - kd_cnt32(ex);
					kd_st(z + j, r, stream);
				}
				if (j < end) {
					kd_st(z + j, kd_odd32(c, f, rnd, r32, x + j, j, idx0 + j, acc, slow,
							      ctx), stream);
					nodd++;
					j += 8;
				}
			}
			tmode = f->tok && nodd >= KD_TON;
		} else {
			while (j < end) {
				__m256i zlo = kd_base(c->key, idx0 + j, f->glo);
				__m256i zhi = kd_base(c->key, idx0 + j, f->ghi);
				for (; j < end; j += 8, zlo = _mm256_add_epi64(zlo, f->step),
				     zhi = _mm256_add_epi64(zhi, f->step)) {
					__m256i u = _mm256_loadu_si256((const __m256i *)(x + j));
					__m256i inex, un, ti, r;
					int odd;
					r = kf_tfast(f, rnd, r32, u, kf_dh(f, rnd, r32, zlo, zhi), &inex, &un,
						     &ti, &odd);
					ntiny += kd_cnt32(ti);
					if (__builtin_expect(odd, 0))
						break;
					inexact += kd_cnt32(inex);
					under += kd_cnt32(un);
					kd_st(z + j, r, stream);
				}
				if (j < end) {
					kd_st(z + j, _mm256_castps_si256(kd_wide8o(c, rnd, x + j, j, idx0 + j,
										    acc, slow, ctx)),
					      stream);
					j += 8;
				}
			}
			tmode = ntiny >= KD_TOFF;
		}
	}
	if (j < n)
		kd_part32(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* Round to nearest even, binary64 lanes, when kd_ne64 applies: one
 * branch-free vector per four elements, kd_odd64 for a vector with an
 * odd lane; exact and underflowing lanes counted in registers. */
KD_INLINE void kd_run64_ne(const kd_c *c, int stream, double *z, const double *x, size_t n,
			   uint64_t idx0, fpl_kslow slow, void *ctx, kd_acc *acc, int zs)
{
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 8;
		if (h > n)
			h = n;
		kd_part64(c, FPL_RND_NE, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	while (j + 4 <= n) {
		for (; j + 4 <= n; j += 4) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, un, r;
			int odd;
			r = kd_ne64(c, u, &eq, &un, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			inexact += 4 - kd_cnt64(eq);
			under += kd_cnt64(un);
			kd_st(z + j, r, stream);
		}
		if (j + 4 <= n) {
			kd_st(z + j, kd_odd64(c, FPL_RND_NE, x + j, j, idx0 + j, acc, slow, ctx), stream);
			j += 4;
		}
	}
	if (j < n)
		kd_part64(c, FPL_RND_NE, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* The same for binary32 lanes (kf_ne). */
KD_INLINE void kf_run32_ne(const kd_c *c, const kf_c *f, int stream, float *z, const float *x,
			   size_t n, uint64_t idx0, fpl_kslow slow, void *ctx, kd_acc *acc, int zs)
{
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 4;
		if (h > n)
			h = n;
		kd_part32(c, FPL_RND_NE, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	while (j + 8 <= n) {
		for (; j + 8 <= n; j += 8) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, un, r;
			int odd;
			r = kf_ne(f, u, &eq, &un, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			inexact += 8 - kd_cnt32(eq);
			under += kd_cnt32(un);
			kd_st(z + j, r, stream);
		}
		if (j + 8 <= n) {
			kd_st(z + j, _mm256_castps_si256(kd_wide8o(c, FPL_RND_NE, x + j, j, idx0 + j, acc,
								    slow, ctx)),
			      stream);
			j += 8;
		}
	}
	if (j < n)
		kd_part32(c, FPL_RND_NE, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* MXCSR for the uni loops (kf_uni's sums with C): na rounds down, nz up,
 * od and se toward zero; tp, tn and tz use vroundps with its own
 * direction and exact products.  The default 0x1f80 (RNE, exceptions
 * masked, no DAZ or FTZ) is put back for every call of the other code
 * (odd vectors, heads, tails). */
#define KD_UNI_CSR(rnd) ((rnd) == FPL_RND_NA ? 0x3f80u : (rnd) == FPL_RND_NZ ? 0x5f80u \
			 : (rnd) == FPL_RND_OD || (rnd) == FPL_RND_SE ? 0x7f80u : 0x1f80u)

/* The modes of kf_uni, binary32 lanes: one branch-free vector per eight
 * elements (draws for se only), kd_wide8o for a vector with an odd
 * lane; exact and underflowing lanes counted in general registers. */
KD_INLINE void kf_run32_uni(const kd_c *c, const kf_c *f, fpl_rnd rnd, int stream, float *z,
			    const float *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
			    kd_acc *acc, int zs)
{
	const unsigned csr = KD_UNI_CSR(rnd);
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 4;
		if (h > n)
			h = n;
		kd_part32(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	_mm_setcsr(csr);
	while (j + 8 <= n) {
		__m256i zlo = kd_base(c->key, idx0 + j, f->glo);
		__m256i zhi = kd_base(c->key, idx0 + j, f->ghi);
		for (; j + 8 <= n; j += 8, zlo = _mm256_add_epi64(zlo, f->step),
		     zhi = _mm256_add_epi64(zhi, f->step)) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, un, ti, r;
			int odd;
			unsigned me;
			r = kf_uni(f, rnd, u, kf_dh(f, rnd, 0, zlo, zhi), &eq, &un, &ti, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			me = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
			inexact += 8 - (unsigned)__builtin_popcount(me);
			under += (unsigned)__builtin_popcount(
				(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(un)) & ~me);
			kd_st(z + j, r, stream);
		}
		if (j + 8 <= n) {
			_mm_setcsr(0x1f80);
			kd_st(z + j, _mm256_castps_si256(kd_wide8o(c, rnd, x + j, j, idx0 + j, acc,
								    slow, ctx)),
			      stream);
			_mm_setcsr(csr);
			j += 8;
		}
	}
	_mm_setcsr(0x1f80);
	if (j < n)
		kd_part32(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* The same for binary64 lanes (kd_uni64), kd_odd64 for an odd vector. */
KD_INLINE void kd_run64_uni(const kd_c *c, fpl_rnd rnd, int stream, double *z, const double *x,
			    size_t n, uint64_t idx0, fpl_kslow slow, void *ctx, kd_acc *acc, int zs)
{
	const unsigned csr = KD_UNI_CSR(rnd);
	const int draws = rnd == FPL_RND_SE;
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 8;
		if (h > n)
			h = n;
		kd_part64(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	_mm_setcsr(csr);
	while (j + 4 <= n) {
		__m256i zb = kd_base(c->key, idx0 + j, c->lanes_g);
		for (; j + 4 <= n; j += 4, zb = _mm256_add_epi64(zb, c->step)) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, un, ti, r;
			__m256i d = draws ? kd_mixx(zb, 0) : _mm256_setzero_si256();
			int odd;
			unsigned me;
			r = kd_uni64(c, rnd, u, d, &eq, &un, &ti, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			me = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(eq));
			inexact += 4 - (unsigned)__builtin_popcount(me);
			under += (unsigned)__builtin_popcount(
				(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(un)) & ~me);
			kd_st(z + j, r, stream);
		}
		if (j + 4 <= n) {
			_mm_setcsr(0x1f80);
			kd_st(z + j, kd_odd64(c, rnd, x + j, j, idx0 + j, acc, slow, ctx), stream);
			_mm_setcsr(csr);
			j += 4;
		}
	}
	_mm_setcsr(0x1f80);
	if (j < n)
		kd_part64(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* MXCSR for the C loops (kf_c1, kd_c1): the mode's own direction; ne
 * needs no change. */
#define KD_C_CSR(rnd) ((rnd) == FPL_RND_TP ? 0x5f80u : (rnd) == FPL_RND_TN ? 0x3f80u \
		       : (rnd) == FPL_RND_TZ ? 0x7f80u : 0x1f80u)

/* ne, tp, tn, tz by kf_c1, binary32 lanes: one branch-free vector per
 * eight elements, kd_wide8o (under the default MXCSR) for a vector with
 * an odd lane; inexact lanes counted from the exact mask, underflowing
 * ones as tiny and not exact, in general registers. */
KD_INLINE void kf_run32_c(const kd_c *c, const kf_c *f, fpl_rnd rnd, int stream, float *z,
			  const float *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
			  kd_acc *acc, int zs)
{
	const unsigned csr = KD_C_CSR(rnd);
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 4;
		if (h > n)
			h = n;
		kd_part32(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	if (csr != 0x1f80u)
		_mm_setcsr(csr);
	while (j + 8 <= n) {
		for (; j + 8 <= n; j += 8) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, ti, r;
			unsigned me;
			int odd;
			r = kf_c1(f, rnd, u, &eq, &ti, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			me = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
			inexact += 8 - (unsigned)__builtin_popcount(me);
			under += (unsigned)__builtin_popcount(
				(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(ti)) & ~me);
			kd_st(z + j, r, stream);
		}
		if (j + 8 <= n) {
			if (csr != 0x1f80u)
				_mm_setcsr(0x1f80);
			kd_st(z + j, _mm256_castps_si256(kd_wide8o(c, rnd, x + j, j, idx0 + j, acc,
								    slow, ctx)),
			      stream);
			if (csr != 0x1f80u)
				_mm_setcsr(csr);
			j += 8;
		}
	}
	if (csr != 0x1f80u)
		_mm_setcsr(0x1f80);
	if (j < n)
		kd_part32(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

/* The same for binary64 lanes (kd_c1), kd_odd64 for an odd vector. */
KD_INLINE void kd_run64_c(const kd_c *c, fpl_rnd rnd, int stream, double *z, const double *x,
			  size_t n, uint64_t idx0, fpl_kslow slow, void *ctx, kd_acc *acc, int zs)
{
	const unsigned csr = KD_C_CSR(rnd);
	size_t j = 0, inexact = 0, under = 0;

	if (stream && ((uintptr_t)z & 31)) {
		size_t h = (32 - ((uintptr_t)z & 31)) / 8;
		if (h > n)
			h = n;
		kd_part64(c, rnd, z, x, 0, h, idx0, acc, slow, ctx);
		j = h;
	}
	if (csr != 0x1f80u)
		_mm_setcsr(csr);
	while (j + 4 <= n) {
		for (; j + 4 <= n; j += 4) {
			__m256i u = _mm256_loadu_si256((const __m256i *)(x + j)), eq, ti, r;
			unsigned me;
			int odd;
			r = kd_c1(c, rnd, u, &eq, &ti, &odd, zs);
			if (__builtin_expect(odd, 0))
				break;
			me = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(eq));
			inexact += 4 - (unsigned)__builtin_popcount(me);
			under += (unsigned)__builtin_popcount(
				(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(ti)) & ~me);
			kd_st(z + j, r, stream);
		}
		if (j + 4 <= n) {
			if (csr != 0x1f80u)
				_mm_setcsr(0x1f80);
			kd_st(z + j, kd_odd64(c, rnd, x + j, j, idx0 + j, acc, slow, ctx), stream);
			if (csr != 0x1f80u)
				_mm_setcsr(csr);
			j += 4;
		}
	}
	if (csr != 0x1f80u)
		_mm_setcsr(0x1f80);
	if (j < n)
		kd_part64(c, rnd, z, x, j, n - j, idx0, acc, slow, ctx);
	acc->inexact = _mm256_add_epi64(acc->inexact, _mm256_set_epi64x(0, 0, 0, (long long)inexact));
	acc->under = _mm256_add_epi64(acc->under, _mm256_set_epi64x(0, 0, 0, (long long)under));
}

KD_INLINE void kd_run(const fpl_kparams *p, fpl_rnd rnd, int stream, int f32, void *z,
		      const void *x, size_t n, uint64_t idx0, fpl_kslow slow, void *ctx,
		      fpl_kcounts *out)
{
	kd_c c;
	kf_c f;
	kd_acc acc;
	size_t special = 0;

	/* the uni loops (kf_uni, kd_uni64) where they measured faster than
	 * the adaptive ones (AMD Zen 5, 2^24 N(0, 1) elements): the directed
	 * modes always, whose rounding is one vroundps; na, nz, od and se
	 * when the tiny range is wide: binary32 arrays with emin >= -10 (the
	 * e4m3 formats, fp6, fp4), where the adaptive loop's branch to the
	 * tiny-lane code was taken in one vector in ten or more, and
	 * binary64 arrays with emin >= -6 (e4m3fn na: 8.1 ms against 9.2 ms
	 * for the adaptive loop, since na nz od se add C instead of
	 * dividing; e4m3fnuz, emin = -7, has half as many tiny lanes and
	 * measured faster in the adaptive loop).  Speed only: the bits are
	 * the same. */
	const int directed = rnd == FPL_RND_TP || rnd == FPL_RND_TN || rnd == FPL_RND_TZ;
	const int wide_tiny = (int)p->emin_b - 1023 >= -10;
	const int wide_tiny64 = (int)p->emin_b - 1023 >= -6;

	kd_setup(&c, &f, p, rnd);
	acc.inexact = acc.under = acc.tiny = _mm256_setzero_si256();
	acc.special = &special;
	/* the ne and uni loops of binary32 arrays do fnuz zeros in place,
	 * instantiated with zs for them, when the tiny range is wide
	 * (e4m3fnuz nz: 0.77 of memcpy against 0.63; e5m2fnuz, whose zero
	 * results are rare, measured slower so, as did binary64 arrays,
	 * with half as many lanes per vector); the others leave them to
	 * kd_full (the constants that make zero results odd lanes) */
	const int adaptive = !(rnd == FPL_RND_NE && f32 && f.nok) && !(rnd == FPL_RND_NE && !f32 && c.nok)
			     && !(f32 && f.uni && (directed || wide_tiny))
			     && !(!f32 && c.uni && (directed || wide_tiny64));
	const int zs = p->zero_special && !adaptive && wide_tiny && f32;
	/* the C loops (kf_c1, kd_c1) for ne and the directed modes wherever
	 * they apply: fewer vector operations than every other loop here;
	 * they do fnuz zeros themselves, their odd vectors through kd_full's
	 * constants */
	const int cl = (rnd == FPL_RND_NE || directed) && (f32 ? f.cok : c.cok);
	if (p->zero_special && (!zs || cl)) {
		c.biaszs = c.fbiaszs;
		c.maxzsx = c.fmaxzsx;
		f.biaszs = _mm256_set1_epi32((int)(0x80000000u - 1));
		f.maxzsx = _mm256_set1_epi32((int)((f.max32 - 1) ^ 0x80000000u));
	}
	if (cl && f32 && p->zero_special)
		kf_run32_c(&c, &f, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 1);
	else if (cl && f32)
		kf_run32_c(&c, &f, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (cl && p->zero_special)
		kd_run64_c(&c, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 1);
	else if (cl)
		kd_run64_c(&c, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (rnd == FPL_RND_NE && f32 && f.nok && zs)
		kf_run32_ne(&c, &f, stream, z, x, n, idx0, slow, ctx, &acc, 1);
	else if (rnd == FPL_RND_NE && f32 && f.nok)
		kf_run32_ne(&c, &f, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (rnd == FPL_RND_NE && !f32 && c.nok)
		kd_run64_ne(&c, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (f32 && f.uni && (directed || wide_tiny) && zs)
		kf_run32_uni(&c, &f, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 1);
	else if (f32 && f.uni && (directed || wide_tiny) && p->zero_special)
		kf_run32_uni(&c, &f, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 2);
	else if (f32 && f.uni && (directed || wide_tiny))
		kf_run32_uni(&c, &f, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (!f32 && c.uni && (directed || wide_tiny64) && p->zero_special)
		kd_run64_uni(&c, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 2);
	else if (!f32 && c.uni && (directed || wide_tiny64))
		kd_run64_uni(&c, rnd, stream, z, x, n, idx0, slow, ctx, &acc, 0);
	else if (f32 && rnd == FPL_RND_SP && p->sr_bits == 32)
		kd_run32(&c, &f, rnd, 1, stream, z, x, n, idx0, slow, ctx, &acc);
	else if (f32)
		kd_run32(&c, &f, rnd, 0, stream, z, x, n, idx0, slow, ctx, &acc);
	else if (rnd == FPL_RND_SP && p->sr_bits == 32)
		kd_run64(&c, rnd, 1, stream, z, x, n, idx0, slow, ctx, &acc);
	else
		kd_run64(&c, rnd, 0, stream, z, x, n, idx0, slow, ctx, &acc);
	if (stream)
		_mm_sfence();
	out->special = special;
	out->overflow = out->saturated = 0;	/* overflows go to slow(), counted there */
	out->tiny = 0;
	out->inexact = (size_t)kd_hsum64(acc.inexact);
	out->underflow = (size_t)kd_hsum64(acc.under);
}

#include "kernels/x86/round_direct_dispatch.h"

void fpl__round_direct_avx2(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			    uint64_t idx0, int stream, fpl_kslow slow, void *ctx,
			    fpl_kcounts *out)
{
	/* the floating-point steps (kf_ne's additions, the widening, the
	 * scaling of tiny results) assume RNE without DAZ or FTZ: the
	 * default MXCSR, restored with the caller's flags on return */
	const unsigned csr = _mm_getcsr();

	_mm_setcsr(0x1f80);
	kd_dispatch(p, z, x, f32, n, idx0, stream, slow, ctx, out);
	_mm_setcsr(csr);
}
