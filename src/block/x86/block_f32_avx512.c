/* SPDX-License-Identifier: MIT */
/*
 * x86/block_f32_avx512.c - block quantization of binary32 tensors with
 * AVX-512, one pass per block in registers: the block's largest
 * magnitude, its scale, and every element rounded, counted and
 * dequantized, sixteen binary32 lanes at a time (eight binary64 lanes for
 * the amax rule's exact quotients).
 *
 * The routes.  Power-of-two rules: runs of sixteen full blocks of 32
 * (group16: the sixteen amax in the lanes of one vector by a transposing
 * tree of maxima, the sixteen scales computed there at once, memory
 * prefetched two groups ahead), each block then rounded by fast_vec on
 * x's own bits; other blocks one at a time (one_block), also by
 * fast_vec; the rare blocks whose scale leaves fast_vec's binary32
 * constants (tiny or huge amax, subnormal amax) by k_round.  The amax
 * rule: runs of sixteen full blocks of 16 (amax_group16: the sixteen
 * amax by the same tree of maxima, the sixteen scales in the lanes of
 * two binary64 vectors by amax_scales16, e2m1's thresholds for all
 * sixteen at once by e2m1_cols and e2m1_grid), each block then by
 * e2m1_vec (e2m1, nearest-even), e2m1_sp_vec (e2m1, sp), exact_vec or
 * q32_vec; other blocks one at a time (amax_blocks, the scale by
 * fpl__bq_amax_scale): q32 by q32_vec (fast_vec's steps on the binary32
 * quotient), exact quotients of e2m1 elements in nearest-even by
 * e2m1_block (thresholds, no division), other exact quotients by exact8
 * (binary64 lanes; exact_vec is exact8 on both halves of a vector);
 * blocks whose binary32 D is not a normal number by
 * fpl__bq_block_scalar (the reference's calls).  The order in which a
 * group's blocks are rounded does not matter: each element's result,
 * flags and draw depend on its block's scale and its own index only,
 * and the counts are sums; nor does doing a group again (group16's
 * redo, after a vector fast_vec's sp carry cannot decide), its counts
 * then taken from the second run alone.  sp counts its events by
 * popcounts in scalars (its vector units are the busier), nearest-even
 * in vector lanes.
 *
 * Why the bits equal the reference's (block_quant.c on the widened
 * values, then rounded to binary32).
 *
 * Scale.  amax is the largest |x_j| as integer bits (the order of the
 * magnitudes; NaN and inf on top, so "amax bits >= 0x7f800000" is the
 * reference's NaN-or-inf test).  A power-of-two rule's exponent is
 * fpl__bq_kpow2 (group16 computes the same on vectors: E - emax_e plus
 * one where the fraction bits of amax exceed the rule's threshold, which
 * is kpow2's test rewritten), the amax rule's scale fpl__bq_amax_scale
 * (block_f32.h proves each equal to the reference's).  A NaN block is
 * all NaN (the binary32 image of the reference's NaN), takes no flag; a
 * zero block has scale 1 and gives its signed zeros back, exactly,
 * without flags.
 *
 * Element rounding, general form (k_round; fast_vec and q32_vec make
 * the same decisions on the same bits, their comments say how).  Write |x| = M 2^(e - 23), M its 24-bit
 * significand (a subnormal is first scaled by 2^64, exactly, to
 * normalize it), and let the exact quotient be q = x / 2^k, exponent
 * e_q = e - k.  The element's quantum at q is 2^(e' - m), e' = max(e_q,
 * emin), so q / quantum = M / 2^sh with sh = 23 - m + (e' - e_q): K = M >>
 * sh is the truncated result in quanta and F = the sh bits below,
 * left-aligned in 32 bits (bits further than 32 below the kept lsb are
 * dropped: only when sh > 32, where F < 2^24 is far from a tie, and sp
 * reads only the top R <= 32 bits).  This is the reference's
 * fpl__round_unp on the same exact value: its kept bits are K, its half
 * bit and rest are F's top bit and the others, its sp T is F's top R
 * bits.  nearest-even rounds up iff F > 2^31 - (K & 1) (more than half,
 * or exactly half with K odd); sp iff T + r >= 2^R, that is F + r' >=
 * 2^32 with r' the draw's top R bits in place, F > ~r' (kf_pick's proof
 * in kernels/x86/round_direct.c), r' from fpl__draw(key, c0 + j), the
 * high word of the 64-bit mix.  Inexact: M != K << sh.  The result K +
 * up quanta, scaled by 2^(e' - m) (vscalefps, exact: a small integer
 * times a power of two well inside binary32), is compared with max_e:
 * above it the reference overflows, and the saturating element gives
 * +-max_e with overflow, inexact and saturated (every mode saturates:
 * in sp an overflow needs K + up quanta above max_e, and then the
 * reference's to_inf is true).  Tininess after rounding, as the
 * reference decides it: e_q < emin - 1, or e_q = emin - 1 and q rounded
 * at precision m + 1 (quantum 2^(e_q - m): K2 = M >> (23 - m), F2 = the
 * bits below) stays below 2^emin (does not carry K2 = all ones up),
 * with the same mode and draw; before rounding: e_q < emin.  Underflow =
 * tiny and inexact.  The dequantized value r 2^k is exact in binary64 and
 * vscalefps rounds it once to binary32 (nearest-even, also on overflow
 * to inf and into binary32's subnormals): the narrowed reference.
 *
 * Events: saturated = lanes above max_e (the only source of the engine's
 * saturated flag here), flushed = nonzero x with K + up = 0, a block's
 * largest element saturated = a saturated lane whose bits equal the
 * amax bits, scale_range = the clamp of the scale rule; flags are counted
 * per lane as the engine counts them per result.
 *
 * The amax rule (NVFP4), D = X s.  q32: q = fp32(x) / fp32(D) is a
 * binary32 division, as the reference's, and q is then rounded as above
 * with k = 0; y = r D is formed in binary64 (exact: r has 2 bits, D at
 * most 35) and narrowed once.  Exact quotients: q = x / D in binary64
 * and its remainder rem = x - q D (exact with an fma, as for any
 * correctly rounded quotient that does not underflow).  The grids the
 * rounding reads (the element's values, its midpoints, and sp's R-bit
 * fractions of a quantum: at most 4 + 32 bits, binary64 numbers) contain
 * no point strictly between the exact quotient and q (q is the nearest
 * binary64 number), so the exact quotient lies on the same side of every
 * grid point as q, unless it lies just below q and q is on a grid point;
 * then it lies on the same side as q's predecessor.  So the binary64
 * pipeline (k_round64, the same steps on 52-bit fractions) reads the
 * bits of q, or of q - 1 ulp when |exact| < |q| (rem of the other sign),
 * and inexact is also set when rem != 0.  Blocks whose binary32 D is not
 * a normal number go to fpl__bq_block_scalar (the reference's own
 * calls).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "block/block_f32.h"
#include "block/block_internal.h"

#define KI static inline __attribute__((always_inline))
#define GOLD 0x9e3779b97f4a7c15ull
#define PF_AHEAD 1024	/* elements: software prefetch distance of group16 */

typedef struct kc {
	__m512i one, zero, c32, absm, sgn, minnorm, fracm, impl, bias, c64;
	__m512i emin, emin1, sh0, sht, half, ones, mv, rmask, odd, lanes_g, cexp, fexp, dreach, dones;
	__m512i qm, rq;
	__m512i g8, g16, g32;
	__m512i m23, infb, ebias, kthr, kminv, kmaxv, kkoff, kklo, kkhi, maxeb, blk_order;
	__m512 two64, maxe, nan;
	int sp, tiny_before, isp, e2m1, e2m1s;
	uint64_t key, c0;
} kc;

typedef struct kr {
	__m512 mag;
	__mmask16 inex, unf, sat, zero;
} kr;

KI __m512i mix2(__m512i z)
{
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
	return _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0x94d049bb133111ebull));
}

/* The draws of elements idx .. idx + 15 from z0, the mix arguments of
 * idx .. idx + 7 (kd_base): h, the high words of the 64-bit mix before
 * its last xorshift (the word fpl__draw returns is h ^ (h >> 31), which
 * differs from h in bit 0 only). */
KI __m512i draws_h(const kc *c, __m512i z0)
{
	__m512i z1 = _mm512_add_epi64(z0, c->g8);

	return _mm512_permutex2var_epi32(mix2(z0), c->odd, mix2(z1));
}

/* ~(r') from h: r' = the top R bits of the draw's high word, in place. */
KI __m512i dh_of(const kc *c, __m512i h)
{
	/* ~((h ^ (h >> 31)) & rmask): ~((A ^ B) & C) = 0xd7 */
	return _mm512_ternarylogic_epi32(h, _mm512_srli_epi32(h, 31), c->rmask, 0xd7);
}

/* The mix arguments of the draws of idx .. idx + 7. */
KI __m512i zbase(const kc *c, uint64_t idx)
{
	return _mm512_add_epi64(_mm512_set1_epi64((long long)(c->key + (idx + 1) * GOLD)),
				c->lanes_g);
}

/* ~(r') for elements idx .. idx + 15. */
KI __m512i draws16(const kc *c, uint64_t idx)
{
	return dh_of(c, draws_h(c, zbase(c, idx)));
}

/* Round the magnitudes a (binary32 bits) divided by 2^k into the element
 * format; dh: draws16 (sp). */
KI kr k_round(const kc *c, __m512i a, __m512i kv, __m512i dh)
{
	kr r;
	__mmask16 sub = _mm512_cmplt_epu32_mask(a, c->minnorm);
	__mmask16 nz = _mm512_test_epi32_mask(a, a);
	__m512 af = _mm512_castsi512_ps(a);
	__m512i an = _mm512_castps_si512(_mm512_mask_mul_ps(af, sub, af, c->two64));
	__m512i be = _mm512_srli_epi32(an, 23);
	__m512i M = _mm512_maskz_or_epi32(nz, _mm512_and_si512(an, c->fracm), c->impl);
	__m512i eq = _mm512_sub_epi32(_mm512_mask_sub_epi32(be, sub, be, c->c64),
				      _mm512_add_epi32(kv, c->bias));
	__m512i d = _mm512_max_epi32(_mm512_sub_epi32(c->emin, eq), c->zero);
	__m512i sh = _mm512_add_epi32(c->sh0, d);
	__m512i K = _mm512_srlv_epi32(M, sh);
	__m512i F = _mm512_or_si512(_mm512_sllv_epi32(M, _mm512_sub_epi32(c->c32, sh)),
				    _mm512_srlv_epi32(M, _mm512_sub_epi32(sh, c->c32)));
	__mmask16 inex = _mm512_cmpneq_epi32_mask(M, _mm512_sllv_epi32(K, sh));
	__m512i thr = c->sp ? dh : _mm512_sub_epi32(c->half, _mm512_and_si512(K, c->one));
	__mmask16 up = _mm512_cmpgt_epu32_mask(F, thr);
	__m512i Rk = _mm512_mask_add_epi32(K, up, K, c->one);
	__m512i ee = _mm512_add_epi32(eq, d);
	__m512 mag = _mm512_scalef_ps(_mm512_cvtepi32_ps(Rk),
				      _mm512_cvtepi32_ps(_mm512_sub_epi32(ee, c->mv)));
	__mmask16 sat = _mm512_cmp_ps_mask(mag, c->maxe, _CMP_GT_OQ), tiny;

	if (c->tiny_before) {
		tiny = _mm512_cmplt_epi32_mask(eq, c->emin);
	} else {
		__m512i K2 = _mm512_srlv_epi32(M, c->sh0);
		__m512i F2 = _mm512_sllv_epi32(M, c->sht);
		__m512i t2 = c->sp ? dh : _mm512_sub_epi32(c->half, _mm512_and_si512(K2, c->one));
		__mmask16 reach = _mm512_cmpgt_epu32_mask(F2, t2) & _mm512_cmpeq_epi32_mask(K2, c->ones);

		tiny = _mm512_cmplt_epi32_mask(eq, c->emin1)
		       | (_mm512_cmpeq_epi32_mask(eq, c->emin1) & (__mmask16)~reach);
	}
	r.mag = _mm512_mask_mov_ps(mag, sat, c->maxe);
	r.sat = sat;
	r.unf = tiny & inex;
	r.inex = inex | sat;
	r.zero = nz & _mm512_cmpeq_epi32_mask(Rk, c->zero);
	return r;
}

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static void kc_init(kc *c, const fpl__bq *p)
{
	int w[16], i;

	c->one = _mm512_set1_epi32(1);
	c->zero = _mm512_setzero_si512();
	c->c32 = _mm512_set1_epi32(32);
	c->absm = _mm512_set1_epi32(0x7fffffff);
	c->sgn = _mm512_set1_epi32((int)0x80000000u);
	c->minnorm = _mm512_set1_epi32(0x800000);
	c->fracm = _mm512_set1_epi32(0x7fffff);
	c->impl = _mm512_set1_epi32(0x800000);
	c->bias = _mm512_set1_epi32(127);
	c->c64 = _mm512_set1_epi32(64);
	c->emin = _mm512_set1_epi32(p->emin);
	c->emin1 = _mm512_set1_epi32(p->emin - 1);
	c->sh0 = _mm512_set1_epi32(23 - p->m);
	c->sht = _mm512_set1_epi32(9 + p->m);
	c->half = _mm512_set1_epi32((int)0x80000000u);
	c->ones = _mm512_set1_epi32((2 << p->m) - 1);
	c->mv = _mm512_set1_epi32(p->m);
	c->m23 = _mm512_set1_epi32(p->m << 23);
	c->rmask = _mm512_set1_epi32((int)p->rmask);
	c->cexp = _mm512_set1_epi32((23 - p->m) << 23);	/* C = 2^(e' + 23 - m) */
	c->fexp = _mm512_set1_epi32((int)((127u + 127u + (unsigned)p->m + 32u) << 23));	/* 2^(32 - log2 Q) */
	c->dreach = _mm512_set1_epi32(1 << (22 - p->m));
	c->dones = _mm512_set1_epi32(1 << (23 - p->m));
	c->qm = _mm512_set1_epi32((1 << (23 - p->m)) - 1);
	c->rq = _mm512_set1_epi32((int)(p->rmask >> (9 + p->m)));
	/* group16's vector fpl__bq_kpow2 and kb_init */
	c->infb = _mm512_set1_epi32(0x7f800000);
	c->g8 = _mm512_set1_epi64((long long)(8 * GOLD));
	c->g16 = _mm512_set1_epi64((long long)(16 * GOLD));
	c->g32 = _mm512_set1_epi64((long long)(32 * GOLD));
	c->ebias = _mm512_set1_epi32(127 + p->emax);
	c->kthr = _mm512_set1_epi32(
		p->rule == FPL_BRULE_CEIL    ? (int)(0x800000u - (1u << (23 - p->m)))
		: p->rule == FPL_BRULE_EVEN  ? (int)(0x800000u - (1u << (22 - p->m)) - 1)
		: p->rule == FPL_BRULE_RCEIL ? (int)(p->smax & 0x7fffffu)
					     : -1);
	c->kminv = _mm512_set1_epi32(p->kmin);
	c->kmaxv = _mm512_set1_epi32(p->kmax);
	c->kkoff = _mm512_set1_epi32(p->emin + 127);
	c->kklo = _mm512_set1_epi32(p->m + 34);
	c->kkhi = _mm512_set1_epi32(254 - 23 + p->m);
	c->maxeb = _mm512_set1_epi32((int)f2u(p->maxe));
	for (i = 0; i < 16; i++)
		w[i] = 4 * (i % 4) + i / 4;
	c->blk_order = _mm512_loadu_si512(w);
	for (i = 0; i < 16; i++)
		w[i] = 2 * i + 1;
	c->odd = _mm512_loadu_si512(w);
	c->lanes_g = _mm512_set_epi64((long long)(7 * GOLD), (long long)(6 * GOLD),
				      (long long)(5 * GOLD), (long long)(4 * GOLD),
				      (long long)(3 * GOLD), (long long)(2 * GOLD),
				      (long long)GOLD, 0);
	c->two64 = _mm512_set1_ps(0x1p64f);
	c->maxe = _mm512_set1_ps(p->maxe);
	c->nan = _mm512_set1_ps(NAN);
	c->sp = p->sp;
	/* fast_vec's integer sp steps: worth their test only where lanes
	 * below the element's smallest normal are rare (e4m3, e5m2 under
	 * N(0, 1) data; e2m1's and e2m3's blocks have them in most vectors) */
	c->isp = p->emax - p->emin >= 8;
	/* e2m1 elements in nearest-even: e2m1_block */
	c->e2m1 = !p->sp && p->m == 1 && p->emin == 0 && p->emax == 2 && p->maxe == 6.0f;
	/* e2m1 elements in sp: e2m1_sp_vec */
	c->e2m1s = p->sp && p->m == 1 && p->emin == 0 && p->emax == 2 && p->maxe == 6.0f;
	c->tiny_before = p->tiny_before;
	c->key = p->key;
	c->c0 = p->c0;
}

KI void count(fpl__bq_acc *a, const kr *r)
{
	uint64_t ns = (uint64_t)__builtin_popcount(r->sat);

	a->count[0] += (uint64_t)__builtin_popcount(r->inex);	/* inexact */
	a->count[1] += (uint64_t)__builtin_popcount(r->unf);	/* underflow */
	a->count[2] += ns;					/* overflow */
	a->count[5] += ns;					/* saturated */
	a->s.saturated += ns;
	a->s.flushed += (uint64_t)__builtin_popcount(r->zero);
}

KI __mmask16 tailmask(size_t left)
{
	return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* The block's largest magnitude bits. */
KI uint32_t block_umax(const kc *c, const float *x, size_t lo, size_t hi)
{
	__m512i um = c->zero;
	size_t j;

	for (j = lo; j < hi; j += 16) {
		__m512i u = _mm512_maskz_loadu_epi32(tailmask(hi - j), x + j);
		um = _mm512_max_epu32(um, _mm512_and_si512(u, c->absm));
	}
	return (uint32_t)_mm512_reduce_max_epu32(um);
}

static void nan_block(const kc *c, float *y, size_t lo, size_t hi)
{
	size_t j;

	for (j = lo; j < hi; j += 16)
		_mm512_mask_storeu_ps(y + j, tailmask(hi - j), c->nan);
}

/* The per-block constants of fast_vec (bits of binary32 values): with
 * kk = emin + k + 127 the biased exponent of 2^(emin + k), the element's
 * smallest normal in x's units. */
typedef struct kb {
	__m512i kk, minb, reach, ones, maxb, um;
} kb;

/* Per-lane event counters (32-bit lanes, flushed before they can wrap). */
typedef struct vcnt {
	__m512i inex, unf, sat, fl;
	uint64_t ninex, nunf, nsat, nfl;	/* the same, counted in scalars */
} vcnt;

/* Whether block scale 2^k (largest magnitude bits um) takes fast_vec, and
 * its constants: kk >= m + 2 keeps every quantum 2^(max(be, kk) - 127 - m)
 * a normal binary32 number (and subnormal x far below the smallest
 * element quantum), and max(be, kk) + 23 - m <= 254 keeps the magic
 * constant C below (2^(max(be, kk) - 127 + 23 - m)) finite. */
static inline int kb_init(const kc *c, kb *B, const fpl__bq *p, int k, uint32_t um)
{
	int kk = p->emin + k + 127, bm = (int)(um >> 23);
	union { uint64_t u; double d; } t = { (uint64_t)(1023 + (k > -1000 && k < 1000 ? k : 0)) << 52 };
	double mx = (double)p->maxe * t.d;	/* exact */

	if (kk < p->m + 34 || kk + 23 - p->m > 254 || bm + 23 - p->m > 254 || k > 200 || k < -200)
		return 0;
	B->kk = _mm512_set1_epi32(kk);
	B->minb = _mm512_slli_epi32(B->kk, 23);
	B->reach = _mm512_sub_epi32(B->minb, c->dreach);
	B->ones = _mm512_sub_epi32(B->minb, c->dones);
	B->maxb = _mm512_set1_epi32(mx >= 0x1p128 ? 0x7f800000 : (int)f2u((float)mx));
	return 1;
}

/* fast_vec's handling of its rare sp vectors (below).  The redo by
 * FV_FLOAT is taken with a chance of about 2^-(23-m) per tiny lane, so
 * tblockfast sets fpl__bq_force_redo (block_internal.h) to make group16
 * redo every sp group, and checks that path too. */
enum { FV_INLINE, FV_DEFER, FV_FLOAT };

/* fast_vec's sp steps on the floating-point quotient (the comment above
 * fast_vec), any lanes, with the draws' compared bits dh (dh_of); also
 * q32_vec's sp steps on its quotients. */
KI void sp_float_dh(const kc *c, const kb *B, __m512i a, __m512i dh, int tb, __m512i *ybp,
		    __mmask16 *inexp, __mmask16 *tinyp)
{
	__m512i e23 = _mm512_slli_epi32(_mm512_max_epi32(_mm512_srli_epi32(a, 23), B->kk), 23);
	__m512 af = _mm512_castsi512_ps(a);
	__m512 C = _mm512_castsi512_ps(_mm512_add_epi32(e23, c->cexp));
	__m512 tr = _mm512_sub_ps(
		_mm512_add_round_ps(af, C, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), C);
	__m512 rem = _mm512_sub_ps(af, tr);
	__m512 S = _mm512_castsi512_ps(_mm512_sub_epi32(c->fexp, e23));
	__m512i F = _mm512_cvtt_roundps_epu32(_mm512_mul_ps(rem, S), _MM_FROUND_NO_EXC);
	__mmask16 up = _mm512_cmpgt_epu32_mask(F, dh);
	__m512 Q = _mm512_castsi512_ps(_mm512_sub_epi32(e23, c->m23));
	__mmask16 inex = _mm512_test_epi32_mask(_mm512_castps_si512(rem), _mm512_castps_si512(rem));

	*ybp = _mm512_castps_si512(_mm512_mask_add_ps(tr, up, tr, Q));
	*inexp = inex;
	if (tb)
		*tinyp = _mm512_mask_cmplt_epu32_mask(inex, a, B->minb);
	else
		*tinyp = _mm512_mask_cmple_epi32_mask(
			inex, _mm512_sub_epi32(a, _mm512_srlv_epi32(dh, c->sht)), B->ones);
}

/* sp_float_dh from the draws' high words h. */
KI void sp_float(const kc *c, const kb *B, __m512i a, __m512i h, int tb, __m512i *ybp,
		 __mmask16 *inexp, __mmask16 *tinyp)
{
	sp_float_dh(c, B, a, dh_of(c, h), tb, ybp, inexp, tinyp);
}

/*
 * Sixteen elements u (binary32 bits) of a block with scale 2^k, on x's
 * own scale: the element's grid times 2^k is the grid of the dequantized
 * value, so rounding |x| to it gives |r| 2^k directly.  At |x| (biased
 * exponent be) the grid's quantum is Q = 2^(e' - m), e' = max(be, kk) -
 * 127, k_round's quantum times 2^k.  With C = 2^(e' + 23 - m) (a
 * binary32, kb_init), |x| < 2^(e'+1) <= C / 2^(22-m), so |x| + C lies in
 * [C, 2C), where binary32's spacing is exactly Q: the addition rounds
 * |x| to a multiple of Q as the mode says (nearest-even: C / Q = 2^23 is
 * even, so the parity of the sum's last bit is that of the kept count K),
 * and subtracting C is exact.  sp (sp_float; fast_vec's carry steps
 * give the same bits where they apply, their comments say why)
 * truncates (toward zero, embedded rounding), rem = |x| - t is exact
 * (|x| and t multiples of ulp(|x|), or t = 0), F = floor(rem 2^(32 -
 * log2 Q)) (vscalefps exact, or below 2^-126 where the floor is 0
 * anyway) is k_round's F, the fraction of a
 * quantum in 32 bits, and it rounds up iff F > ~r'.  Inexact: the result
 * differs from |x|.  Tininess after rounding in nearest-even: x in the
 * binade below 2^(emin+k) reaches it iff its significand is at least
 * 2^24 - 2^(22-m), so tiny iff a < reach; in sp iff its top m + 1 bits
 * are all ones (a >= ones) and the draw carries F2 = a << (9 + m) (the
 * fraction at precision m + 1): F2 + r' >= 2^32 iff L + (r' >> (9+m)) >=
 * 2^(23-m), L = a's low 23 - m bits (kf_pick's argument), so with the
 * top bits all ones iff a + (r' >> (9+m)) >= 2^(emin+k) (lower binades
 * stay below it); r' >> (9+m) = 2^(23-m) - 1 - (~r' >> (9+m)), so tiny
 * iff a - (dh >> (9+m)) <= ones (signed: a < 2^31, dh >> (9+m) <
 * 2^(23-m)).  Saturation: rounded bits above those of
 * max_e 2^k (the order of binary32 magnitudes; max_e 2^k >= 2^128
 * leaves inf, the narrowed 2^128, alone).
 */
KI void fast_vec(const kc *c, const kb *B, __m512i u, __m512i h, float *y, __mmask16 t,
		 int sp, int tb, int mode, vcnt *vc, __mmask16 *asat, __m512i *racc)
{
	const __m512i minus1 = _mm512_set1_epi32(-1);
	__m512i a = _mm512_and_si512(u, c->absm);
	/* e' << 23: the exponent field of the quantum's binade */
	__m512i e23 = _mm512_slli_epi32(_mm512_max_epi32(_mm512_srli_epi32(a, 23), B->kk), 23);
	__m512 af = _mm512_castsi512_ps(a);
	__m512 C = _mm512_castsi512_ps(_mm512_add_epi32(e23, c->cexp));
	__mmask16 tiny, inex, sat;
	__m512i yb;

	if (!sp) {
		__m512 r = _mm512_sub_ps(_mm512_add_ps(af, C), C);

		yb = _mm512_castps_si512(r);
		inex = _mm512_cmpneq_epi32_mask(yb, a);
		tiny = _mm512_mask_cmplt_epu32_mask(inex, a, tb ? B->minb : B->reach);
	} else if (c->isp && !_mm512_mask_cmplt_epu32_mask(_mm512_test_epi32_mask(a, a), a,
							     B->minb)) {
		/* (formats with a wide exponent range, kc_init, where such
		 * vectors are the rule) no lane in (0, 2^(emin+k)): the quantum is 2^(23-m) in a's
		 * bits (e' = be), so kf_pick's integer steps: F = L << (9+m),
		 * L = a & qm the 23 - m bits below the quantum (sign,
		 * exponent and kept bits fall off), up iff F > ~r', that is
		 * F + r' >= 2^32, that is L + r'' >= 2^(23-m) with r'' = r'
		 * >> (9+m) (r' = r'' 2^(9+m) + l, l < 2^(9+m), and F a
		 * multiple of 2^(9+m)): the carry out of a's low 23 - m bits
		 * in a + r''.  So (a + r'') & ~qm is the kept bits plus one
		 * quantum iff up (a carry into the exponent is the next
		 * binade's value, as the addition of Q gives; a zero lane
		 * stays 0, r'' < 2^(23-m); a + r'' < 2^31 + 2^23 does not
		 * wrap).  r'' = (h >> (9+m)) & (rmask >> (9+m)): the
		 * draw's last xorshift changes bit 0 of h only, which the
		 * shift drops.  Inexact iff bits below the quantum; none tiny
		 * (a >= 2^(emin+k), and with ne's a - (dh >> (9+m)) > ones). */
		__m512i r2 = _mm512_and_si512(_mm512_srlv_epi32(h, c->sht), c->rq);

		yb = _mm512_andnot_si512(c->qm, _mm512_add_epi32(a, r2));
		inex = _mm512_test_epi32_mask(a, c->qm);
		tiny = 0;
	} else {
		/*
		 * Lanes below 2^(emin+k) too, by the same carry: with V =
		 * 2^(emin+k) (bits minb) and Q = 2^-m V the quantum there, a
		 * tiny lane 0 <= |x| < V is first moved to xs = RZ(|x| + V) in
		 * [V, 2V) (one addition toward zero, embedded rounding),
		 * where binary32's spacing is u = 2^-s Q, s = 23 - m: xs = V +
		 * N u, N = floor(|x| / u) = K 2^s + L with K = floor(|x| / Q)
		 * and L = floor(f 2^s), f = |x| / Q - K the fraction of a
		 * quantum.  The reference rounds up iff T + r >= 2^R, T =
		 * floor(f 2^R).  R <= s: T = floor(L / 2^(s-R)) and r'' = r
		 * 2^(s-R), so up iff L + r'' >= 2^s (kf_pick's argument).  R
		 * > s: T = L 2^(R-s) + t, t = floor((f - L 2^-s) 2^R) <
		 * 2^(R-s), and r = r'' 2^(R-s) + l, l < 2^(R-s), so T + r =
		 * (L + r'') 2^(R-s) + t + l with t + l < 2^(R-s+1) - 1: up if
		 * L + r'' >= 2^s, not up if L + r'' <= 2^s - 2, and undecided
		 * by L alone at L + r'' = 2^s - 1, the low s bits of xs + r''
		 * all ones (L + r'' < 2^(s+1) - 1): such a vector (a chance
		 * of 2^-s per tiny lane) goes to sp_float (FV_INLINE; FV_DEFER
		 * reports it to the caller, which then does its lanes again
		 * with FV_FLOAT, sp_float for every vector).  Otherwise
		 * (xs + r'') & ~qm is V + (K + up) Q, and subtracting V
		 * (exact: both in [V, 2V]) leaves the reference's (K + up) Q
		 * (<= V: no saturation).  The other lanes are the wide-range
		 * path's.  Inexact iff the result differs from |x| (a grid
		 * point stays: f = 0, T = 0, no carry).  Tininess after
		 * rounding: sp_float's a - (dh >> (9+m)) <= ones, with dh >>
		 * (9+m) = qm - r'' (~r' >> (9+m) = ~(r' >> (9+m)) in 23 - m
		 * bits) and ones + qm = minb - 1, is a + r'' < minb (no wrap:
		 * a + r'' < 2^31 + 2^23).
		 */
		__mmask16 tm = _mm512_cmplt_epu32_mask(a, B->minb), rare = 0;
		__m512i r2 = _mm512_and_si512(_mm512_srlv_epi32(h, c->sht), c->rq);
		__m512 Vf = _mm512_castsi512_ps(B->minb);
		__m512i xs = _mm512_castps_si512(_mm512_mask_add_round_ps(
			af, tm, af, Vf, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
		__m512i sm = _mm512_add_epi32(xs, r2);

		/* FV_DEFER: the smallest ~sm & qm of the tiny lanes so far,
		 * 0 after such a vector (vector steps, no mask register) */
		if (mode == FV_DEFER)
			*racc = _mm512_mask_min_epu32(*racc, tm, *racc, _mm512_andnot_si512(sm, c->qm));
		else if (mode == FV_INLINE)
			rare = _mm512_mask_cmpeq_epi32_mask(tm, _mm512_and_si512(sm, c->qm), c->qm);
		if (mode == FV_FLOAT || (mode == FV_INLINE && __builtin_expect(rare != 0, 0))) {
			sp_float(c, B, a, h, tb, &yb, &inex, &tiny);
		} else {
			__m512 ys = _mm512_castsi512_ps(_mm512_andnot_si512(c->qm, sm));

			yb = _mm512_castps_si512(_mm512_mask_sub_ps(ys, tm, ys, Vf));
			inex = _mm512_cmpneq_epi32_mask(yb, a);
			if (tb)
				tiny = inex & tm;
			else
				tiny = _mm512_mask_cmplt_epu32_mask(inex, _mm512_add_epi32(a, r2), B->minb);
		}
	}
	/* the counts: sp's vector work is the larger, and its counts go to
	 * the scalar units (popcounts of the masks); nearest-even's stay in
	 * vector lanes, the faster there */
	if (sp) {
		vc->nfl += (uint64_t)__builtin_popcount(_mm512_mask_testn_epi32_mask(inex, yb, yb));
		vc->nunf += (uint64_t)__builtin_popcount(tiny);
	} else {
		vc->fl = _mm512_mask_sub_epi32(vc->fl, _mm512_mask_testn_epi32_mask(inex, yb, yb), vc->fl,
					       minus1);
		vc->unf = _mm512_mask_sub_epi32(vc->unf, tiny, vc->unf, minus1);
	}
	/* saturated lanes: frequent enough under floor (mxfp4: a block's
	 * amax in (6, 8) quanta) that a branch would cost more than this */
	sat = _mm512_cmpgt_epu32_mask(yb, B->maxb);
	yb = _mm512_min_epu32(yb, B->maxb);
	*asat |= _mm512_mask_cmpeq_epi32_mask(sat, a, B->um);
	inex |= sat;
	if (sp) {
		vc->nsat += (uint64_t)__builtin_popcount(sat);
		vc->ninex += (uint64_t)__builtin_popcount(inex);
	} else {
		vc->sat = _mm512_mask_sub_epi32(vc->sat, sat, vc->sat, minus1);
		vc->inex = _mm512_mask_sub_epi32(vc->inex, inex, vc->inex, minus1);
	}
	yb = _mm512_ternarylogic_epi32(yb, u, c->sgn, 0xf8);	/* A | (B & C) */
	if (t == 0xffff)
		_mm512_storeu_si512(y, yb);
	else
		_mm512_mask_storeu_epi32(y, t, yb);
}

/* The amax rule's q32 quotients: q = fp32(|x|) / fp32(D) (the
 * reference's binary32 division, nearest-even), rounded as fast_vec
 * rounds on x's bits with k = 0 (B for scale 1, kk = emin + 127), then
 * y = (r X) s in binary32: r X is exact (2 + 4 bits of e2m1 and e4m3,
 * well inside binary32's normal range), so the one rounding of the
 * product by s is that of the exact r X s, the reference's narrowed
 * binary64 r D.  flushed counts nonzero x whose element is 0 (q itself
 * may be 0); a block's largest element is the lane with x's bits um. */
KI void q32_vec(const kc *c, const kb *B, __m512i u, __m512 Dfv, __m512 Xf, __m512 sf,
		__m512i dh, float *y, __mmask16 t, int sp, int tb, vcnt *vc, __mmask16 *asat)
{
	const __m512i minus1 = _mm512_set1_epi32(-1);
	__m512i ax = _mm512_and_si512(u, c->absm);
	__m512 af = _mm512_div_ps(_mm512_castsi512_ps(ax), Dfv);
	__m512i a = _mm512_castps_si512(af);
	__m512i e23 = _mm512_slli_epi32(_mm512_max_epi32(_mm512_srli_epi32(a, 23), B->kk), 23);
	__m512 C = _mm512_castsi512_ps(_mm512_add_epi32(e23, c->cexp));
	__mmask16 tiny, inex, sat, fl;
	__m512i yb;
	__m512 yv;

	if (!sp) {
		yb = _mm512_castps_si512(_mm512_sub_ps(_mm512_add_ps(af, C), C));
		inex = _mm512_cmpneq_epi32_mask(yb, a);
		tiny = _mm512_mask_cmplt_epu32_mask(inex, a, tb ? B->minb : B->reach);
	} else {
		sp_float_dh(c, B, a, dh, tb, &yb, &inex, &tiny);
	}
	sat = _mm512_cmpgt_epu32_mask(yb, B->maxb);
	yb = _mm512_min_epu32(yb, B->maxb);
	*asat |= _mm512_mask_cmpeq_epi32_mask(sat, ax, B->um);
	inex |= sat;
	fl = _mm512_mask_testn_epi32_mask(_mm512_test_epi32_mask(ax, ax), yb, yb);
	vc->unf = _mm512_mask_sub_epi32(vc->unf, tiny, vc->unf, minus1);
	vc->sat = _mm512_mask_sub_epi32(vc->sat, sat, vc->sat, minus1);
	vc->fl = _mm512_mask_sub_epi32(vc->fl, fl, vc->fl, minus1);
	vc->inex = _mm512_mask_sub_epi32(vc->inex, inex, vc->inex, minus1);
	yv = _mm512_mul_ps(_mm512_mul_ps(_mm512_castsi512_ps(yb), Xf), sf);
	yb = _mm512_ternarylogic_epi32(_mm512_castps_si512(yv), u, c->sgn, 0xf8);
	if (t == 0xffff)
		_mm512_storeu_si512(y, yb);
	else
		_mm512_mask_storeu_epi32(y, t, yb);
}

static void vc_flush(vcnt *vc, fpl__bq_acc *a)
{
	uint64_t ns = (uint64_t)_mm512_reduce_add_epi64(
		_mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(vc->sat)),
				 _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(vc->sat, 1))));
#define VSUM(v) (uint64_t)_mm512_reduce_add_epi64(                                          \
	_mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)),                  \
			 _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v, 1))))
	a->count[0] += VSUM(vc->inex);
	a->count[1] += VSUM(vc->unf);
	a->count[2] += ns;
	a->count[5] += ns;
	a->s.saturated += ns;
	a->s.flushed += VSUM(vc->fl);
#undef VSUM
	a->count[0] += vc->ninex;
	a->count[1] += vc->nunf;
	a->count[2] += vc->nsat;
	a->count[5] += vc->nsat;
	a->s.saturated += vc->nsat;
	a->s.flushed += vc->nfl;
	vc->inex = vc->unf = vc->sat = vc->fl = _mm512_setzero_si512();
	vc->ninex = vc->nunf = vc->nsat = vc->nfl = 0;
}

/* A block by k_round (the blocks kb_init declines). */
static void slow_block(const kc *c, float *y, const float *x, size_t lo, size_t hi, int k,
		       uint32_t um, fpl__bq_acc *a)
{
	__m512i kv = _mm512_set1_epi32(k), umv = _mm512_set1_epi32((int)um);
	__m512 kf = _mm512_set1_ps((float)k);
	__mmask16 asat = 0;
	size_t j;

	for (j = lo; j < hi; j += 16) {
		__mmask16 t = tailmask(hi - j);
		__m512i u = _mm512_maskz_loadu_epi32(t, x + j);
		__m512i av = _mm512_and_si512(u, c->absm);
		__m512i dh = c->sp ? draws16(c, c->c0 + j) : c->zero;
		kr r = k_round(c, av, kv, dh);
		__m512 yv = _mm512_scalef_round_ps(r.mag, kf, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);

		yv = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(yv), _mm512_and_si512(u, c->sgn)));
		_mm512_mask_storeu_ps(y + j, t, yv);
		count(a, &r);
		asat |= r.sat & _mm512_cmpeq_epi32_mask(av, umv);
	}
	a->s.amax_saturated += asat != 0;
}

/* Block [lo, hi) alone: scale by fpl__bq_kpow2, then fast_vec or
 * slow_block; all its events. */
KI void one_block(const kc *c, const fpl__bq *p, float *y, const float *x, size_t lo, size_t hi,
		  fpl__bq_acc *a, vcnt *vc, int sp, int tb)
{
	uint32_t um = block_umax(c, x, lo, hi);
	int k = 0, clamped = 0;
	__mmask16 asat = 0;
	size_t j;
	kb B;

	a->s.blocks++;
	a->s.elements += hi - lo;
	if (um >= 0x7f800000u) {
		a->s.nan_blocks++;
		nan_block(c, y, lo, hi);
		return;
	}
	if (um == 0)
		a->s.zero_blocks++;
	else
		k = fpl__bq_kpow2(p, um, &clamped);
	a->s.scale_range += (uint64_t)clamped;
	B.um = _mm512_set1_epi32((int)um);
	if (!kb_init(c, &B, p, k, um)) {
		slow_block(c, y, x, lo, hi, k, um, a);
		return;
	}
	for (j = lo; j < hi; j += 16) {
		__mmask16 t = tailmask(hi - j);
		__m512i u = _mm512_maskz_loadu_epi32(t, x + j);

		fast_vec(c, &B, u, sp ? draws_h(c, zbase(c, c->c0 + j)) : c->zero, y + j, t, sp, tb,
			 FV_INLINE, vc, &asat, NULL);
	}
	a->s.amax_saturated += asat != 0;
}

/* The transposing tree of maxima: l0[2i] and l0[2i + 1] hold 16 partial
 * maxima of blocks 2i and 2i + 1; lane b of the result is block b's
 * maximum (each level halves the partials per block and doubles the
 * blocks per vector, the lanes put in block order at the end). */
KI __m512i umax_tree(const kc *c, const __m512i *l0)
{
	__m512i l1[8], l2[4], l3[2], v;
	int i;

	for (i = 0; i < 8; i++)
		l1[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(l0[2 * i], l0[2 * i + 1], 0x44),
					 _mm512_shuffle_i32x4(l0[2 * i], l0[2 * i + 1], 0xee));
	for (i = 0; i < 4; i++)	/* chunks: blocks 4i .. 4i+3 */
		l2[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(l1[2 * i], l1[2 * i + 1], 0x88),
					 _mm512_shuffle_i32x4(l1[2 * i], l1[2 * i + 1], 0xdd));
	for (i = 0; i < 2; i++) {	/* chunk j: blocks 8i+j, 8i+4+j, two each */
		__m512 A = _mm512_castsi512_ps(l2[2 * i]), B = _mm512_castsi512_ps(l2[2 * i + 1]);

		l3[i] = _mm512_max_epu32(_mm512_castps_si512(_mm512_shuffle_ps(A, B, 0x88)),
					 _mm512_castps_si512(_mm512_shuffle_ps(A, B, 0xdd)));
	}
	{	/* lane 4j + p: block j + 4p */
		__m512 A = _mm512_castsi512_ps(l3[0]), B = _mm512_castsi512_ps(l3[1]);

		v = _mm512_max_epu32(_mm512_castps_si512(_mm512_shuffle_ps(A, B, 0x88)),
				     _mm512_castps_si512(_mm512_shuffle_ps(A, B, 0xdd)));
	}
	return _mm512_permutexvar_epi32(c->blk_order, v);
}

/* The largest magnitude bits of 16 blocks of 32 at x, lane b for block b:
 * a max of the two vectors of each block, then umax_tree. */
KI __m512i umax16(const kc *c, const float *x)
{
	__m512i l0[16];
	int i;

	for (i = 0; i < 16; i++)
		l0[i] = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(x + 32 * i), c->absm),
					 _mm512_and_si512(_mm512_loadu_si512(x + 32 * i + 16), c->absm));
	return umax_tree(c, l0);
}

/* The same for 16 blocks of 16 at x. */
KI __m512i umax16b(const kc *c, const float *x)
{
	__m512i l0[16];
	int i;

	for (i = 0; i < 16; i++)
		l0[i] = _mm512_and_si512(_mm512_loadu_si512(x + 16 * i), c->absm);
	return umax_tree(c, l0);
}

/* group16's fast_vec blocks (those not in slowm) with mode FV_DEFER or
 * FV_FLOAT, their counts into *lv (set here); zb: the mix arguments of
 * the draws of x[lo..].  The number of blocks whose largest element
 * saturated, or -1 where FV_DEFER met a vector for sp_float. */
KI int group_blocks(const kc *c, float *y, const float *x, size_t lo, __mmask16 slowm, __m512i kk,
		    __m512i maxb, __m512i umv, __m512i zb, int sp, int tb, int mode, vcnt *lv)
{
	__m512i racc = c->qm;
	int b, nasat = 0;

	lv->inex = lv->unf = lv->sat = lv->fl = c->zero;
	lv->ninex = lv->nunf = lv->nsat = lv->nfl = 0;
	for (b = 0; b < 16; b++, zb = sp ? _mm512_add_epi64(zb, c->g32) : zb) {
		size_t l = lo + 32 * (size_t)b;
		__m512i bi = _mm512_set1_epi32(b);
		__mmask16 asat = 0;
		kb B;

		/* the memory two groups ahead: x to read, y's lines to own */
		_mm_prefetch((const char *)(x + l + PF_AHEAD), _MM_HINT_T0);
		_mm_prefetch((const char *)(x + l + PF_AHEAD + 16), _MM_HINT_T0);
		__builtin_prefetch(y + l + PF_AHEAD, 1, 3);
		__builtin_prefetch(y + l + PF_AHEAD + 16, 1, 3);
		if ((slowm >> b) & 1)
			continue;
		B.kk = _mm512_permutexvar_epi32(bi, kk);
		B.maxb = _mm512_permutexvar_epi32(bi, maxb);
		B.um = _mm512_permutexvar_epi32(bi, umv);
		B.minb = _mm512_slli_epi32(B.kk, 23);
		B.reach = _mm512_sub_epi32(B.minb, c->dreach);
		B.ones = _mm512_sub_epi32(B.minb, c->dones);
		fast_vec(c, &B, _mm512_loadu_si512(x + l), sp ? draws_h(c, zb) : c->zero, y + l,
			 0xffff, sp, tb, mode, lv, &asat, &racc);
		fast_vec(c, &B, _mm512_loadu_si512(x + l + 16),
			 sp ? draws_h(c, _mm512_add_epi64(zb, c->g16)) : c->zero,
			 y + l + 16, 0xffff, sp, tb, mode, lv, &asat, &racc);
		nasat += asat != 0;
	}
	if (_mm512_testn_epi32_mask(racc, racc) || (mode == FV_DEFER && sp && fpl__bq_force_redo))
		return -1;
	return nasat;
}

/* group_blocks with FV_FLOAT (sp), out of the way of group16's code. */
__attribute__((noinline, cold)) static int group_redo(const kc *c, float *y, const float *x,
						       size_t lo, __mmask16 slowm, __m512i kk,
						       __m512i maxb, __m512i umv, __m512i zb, int tb,
						       vcnt *lv)
{
	return group_blocks(c, y, x, lo, slowm, kk, maxb, umv, zb, 1, tb, FV_FLOAT, lv);
}

/* Sixteen full blocks of 32 at x + lo: the scales of all sixteen at once
 * in the lanes (fpl__bq_kpow2 on vectors: k = E - emax_e + (the fraction
 * of amax above the rule's threshold), kc_init), then each block by
 * fast_vec; the blocks kb_init would decline (NaN or inf, subnormal amax,
 * tiny or huge scales) by one_block. */
KI void group16(const kc *c, const fpl__bq *p, float *y, const float *x, size_t lo,
		fpl__bq_acc *a, vcnt *vc, int sp, int tb)
{
	__m512i umv = umax16(c, x + lo);
	__mmask16 zerom = _mm512_testn_epi32_mask(umv, umv);
	__mmask16 slowm = _mm512_cmpge_epu32_mask(umv, c->infb)
			  | (_mm512_cmplt_epu32_mask(umv, c->minnorm) & (__mmask16)~zerom);
	__m512i be = _mm512_srli_epi32(umv, 23);
	__m512i k = _mm512_sub_epi32(be, c->ebias);
	__m512i kcl, kk, maxb;
	__mmask16 clm;
	vcnt lv;	/* fast_vec's counts, in registers (vc is in memory) */
	int b, nasat = 0;

	k = _mm512_mask_add_epi32(k, _mm512_cmpgt_epu32_mask(_mm512_and_si512(umv, c->fracm), c->kthr),
				  k, c->one);
	k = _mm512_maskz_mov_epi32((__mmask16)~zerom, k);
	kcl = _mm512_min_epi32(_mm512_max_epi32(k, c->kminv), c->kmaxv);
	clm = _mm512_cmpneq_epi32_mask(k, kcl);
	kk = _mm512_add_epi32(kcl, c->kkoff);
	slowm |= _mm512_cmplt_epi32_mask(kk, c->kklo) | _mm512_cmpgt_epi32_mask(kk, c->kkhi)
		 | _mm512_cmpgt_epi32_mask(be, c->kkhi);
	maxb = _mm512_min_epu32(_mm512_add_epi32(c->maxeb, _mm512_slli_epi32(kcl, 23)), c->infb);
	{
		int nf = __builtin_popcount((__mmask16)~slowm);

		a->s.blocks += (uint64_t)nf;
		a->s.elements += 32 * (uint64_t)nf;
		a->s.zero_blocks += (uint64_t)__builtin_popcount(zerom & (__mmask16)~slowm);
		a->s.scale_range += (uint64_t)__builtin_popcount(clm & (__mmask16)~slowm);
	}
	/* the mix arguments of the draws of x[lo..]: kd_base, then + 32 golden per block */
	__m512i zb = sp ? _mm512_add_epi64(_mm512_set1_epi64((long long)(c->key + (c->c0 + lo + 1) * GOLD)),
					   c->lanes_g)
			: c->zero;

	/* the fast_vec blocks first, in a loop without calls (lv stays in
	 * registers), then the others by one_block; in the rare event
	 * (fast_vec, FV_DEFER) of a vector that needs sp_float, the fast_vec
	 * blocks once more, every vector by sp_float, their counts afresh */
	nasat = group_blocks(c, y, x, lo, slowm, kk, maxb, umv, zb, sp, tb, FV_DEFER, &lv);
	if (__builtin_expect(nasat < 0, 0))
		nasat = group_redo(c, y, x, lo, slowm, kk, maxb, umv, zb, tb, &lv);
	a->s.amax_saturated += (uint64_t)nasat;
	vc->inex = _mm512_add_epi32(vc->inex, lv.inex);
	vc->unf = _mm512_add_epi32(vc->unf, lv.unf);
	vc->sat = _mm512_add_epi32(vc->sat, lv.sat);
	vc->fl = _mm512_add_epi32(vc->fl, lv.fl);
	vc->ninex += lv.ninex;
	vc->nunf += lv.nunf;
	vc->nsat += lv.nsat;
	vc->nfl += lv.nfl;
	for (b = 0; slowm; b++, slowm >>= 1)
		if (slowm & 1)
			one_block(c, p, y, x, lo + 32 * (size_t)b, lo + 32 * (size_t)b + 32, a, vc, sp, tb);
}

/* Power-of-two rules: blocks [id0, id1), row by row; runs of sixteen
 * full blocks of 32 by group16. */
KI void pow2_body(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		  size_t id1, fpl__bq_acc *a, int sp, int tb)
{
	size_t id = id0, row = id0 / p->nbr, br = id0 % p->nbr, since = 0;
	const size_t nfull = p->tr == 32 ? p->R / 32 : 0;	/* full blocks per row */
	vcnt vc;

	vc.inex = vc.unf = vc.sat = vc.fl = c->zero;
	vc.ninex = vc.nunf = vc.nsat = vc.nfl = 0;
	while (id < id1) {
		size_t lo = row * p->R + br * p->tr, len = p->R - br * p->tr, step;

		if (br + 16 <= nfull && id + 16 <= id1) {
			group16(c, p, y, x, lo, a, &vc, sp, tb);
			step = 16;
			len = 512;
		} else {
			len = len < p->tr ? len : p->tr;
			one_block(c, p, y, x, lo, lo + len, a, &vc, sp, tb);
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
			vc_flush(&vc, a);
			since = 0;
		}
	}
	vc_flush(&vc, a);
}

static void pow2_ne(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		    size_t id1, fpl__bq_acc *a)
{
	pow2_body(c, p, y, x, id0, id1, a, 0, 0);
}

static void pow2_ne_tb(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		       size_t id1, fpl__bq_acc *a)
{
	pow2_body(c, p, y, x, id0, id1, a, 0, 1);
}

static void pow2_sp(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		    size_t id1, fpl__bq_acc *a)
{
	pow2_body(c, p, y, x, id0, id1, a, 1, 0);
}

static void pow2_sp_tb(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		       size_t id1, fpl__bq_acc *a)
{
	pow2_body(c, p, y, x, id0, id1, a, 1, 1);
}

static void run_pow2(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		     size_t id1, fpl__bq_acc *a)
{
	if (c->sp)
		(c->tiny_before ? pow2_sp_tb : pow2_sp)(c, p, y, x, id0, id1, a);
	else
		(c->tiny_before ? pow2_ne_tb : pow2_ne)(c, p, y, x, id0, id1, a);
}

/* The binary64 pipeline for the amax rule's exact quotients: k_round's
 * steps on 8 lanes of 52-bit fractions (the comment at the top). */
typedef struct kr8 {
	__m512d mag;
	__mmask8 inex, unf, sat, zero;
} kr8;

KI kr8 k_round64(const kc *c, const fpl__bq *p, __m512i a, __mmask8 sticky, __mmask8 nz,
		 __m512i dh)
{
	const __m512i one = _mm512_set1_epi64(1), zero = _mm512_setzero_si512();
	const __m512i c64 = _mm512_set1_epi64(64);
	__m512i M = _mm512_maskz_or_epi64(nz, _mm512_and_si512(a, _mm512_set1_epi64(0xfffffffffffffll)),
					  _mm512_set1_epi64(1ll << 52));
	__m512i eq = _mm512_sub_epi64(_mm512_srli_epi64(a, 52), _mm512_set1_epi64(1023));
	__m512i d = _mm512_max_epi64(_mm512_sub_epi64(_mm512_set1_epi64(p->emin), eq), zero);
	__m512i sh0 = _mm512_set1_epi64(52 - p->m);
	__m512i sh = _mm512_add_epi64(sh0, d);
	__m512i K = _mm512_srlv_epi64(M, sh);
	__m512i F = _mm512_or_si512(_mm512_sllv_epi64(M, _mm512_sub_epi64(c64, sh)),
				    _mm512_srlv_epi64(M, _mm512_sub_epi64(sh, c64)));
	__mmask8 inex = _mm512_cmpneq_epi64_mask(M, _mm512_sllv_epi64(K, sh)) | sticky;
	__m512i half = _mm512_set1_epi64((long long)0x8000000000000000ull);
	__m512i thr = c->sp ? dh : _mm512_sub_epi64(half, _mm512_and_si512(K, one));
	__mmask8 up = _mm512_cmpgt_epu64_mask(F, thr);
	__m512i Rk = _mm512_mask_add_epi64(K, up, K, one);
	__m512i ee = _mm512_add_epi64(eq, d);
	__m512d mag = _mm512_scalef_pd(_mm512_cvtepi64_pd(Rk),
				       _mm512_cvtepi64_pd(_mm512_sub_epi64(ee, _mm512_set1_epi64(p->m))));
	__m512d maxe = _mm512_set1_pd((double)p->maxe);
	__mmask8 sat = _mm512_cmp_pd_mask(mag, maxe, _CMP_GT_OQ), tiny;
	kr8 r;

	if (c->tiny_before) {
		tiny = _mm512_cmplt_epi64_mask(eq, _mm512_set1_epi64(p->emin));
	} else {
		__m512i K2 = _mm512_srlv_epi64(M, sh0);
		__m512i F2 = _mm512_sllv_epi64(M, _mm512_set1_epi64(12 + p->m));
		__m512i t2 = c->sp ? dh : _mm512_sub_epi64(half, _mm512_and_si512(K2, one));
		__mmask8 reach = _mm512_cmpgt_epu64_mask(F2, t2)
				 & _mm512_cmpeq_epi64_mask(K2, _mm512_set1_epi64((2 << p->m) - 1));
		__m512i e1 = _mm512_set1_epi64(p->emin - 1);

		tiny = _mm512_cmplt_epi64_mask(eq, e1) | (_mm512_cmpeq_epi64_mask(eq, e1) & (__mmask8)~reach);
	}
	r.mag = _mm512_mask_mov_pd(mag, sat, maxe);
	r.sat = sat;
	r.unf = tiny & inex;
	r.inex = inex | sat;
	r.zero = nz & _mm512_cmpeq_epi64_mask(Rk, zero);
	return r;
}

/* ~(r') for 8 lanes as 64-bit words: the top R bits of the draw in
 * place, the low 32 bits then all ones in the complement. */
KI __m512i draws8(const kc *c, uint64_t idx)
{
	__m512i z = mix2(_mm512_add_epi64(_mm512_set1_epi64((long long)(c->key + (idx + 1) * GOLD)),
					  c->lanes_g));
	__m512i rm = _mm512_slli_epi64(_mm512_and_si512(c->rmask, _mm512_set1_epi64(0xffffffffll)), 32);

	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
	return _mm512_ternarylogic_epi64(z, rm, rm, 0x3f);
}

KI void count8(fpl__bq_acc *a, const kr8 *r)
{
	uint64_t ns = (uint64_t)__builtin_popcount(r->sat);

	a->count[0] += (uint64_t)__builtin_popcount(r->inex);
	a->count[1] += (uint64_t)__builtin_popcount(r->unf);
	a->count[2] += ns;
	a->count[5] += ns;
	a->s.saturated += ns;
	a->s.flushed += (uint64_t)__builtin_popcount(r->zero);
}

/* Eight elements x[j..] (mask t) with the exact quotient by D. */
KI __mmask8 exact8(const kc *c, const fpl__bq *p, float *y, const float *x, size_t j,
		   __mmask8 t, __m512d Dv, uint32_t um, fpl__bq_acc *a)
{
	__m256i u = _mm256_maskz_loadu_epi32(t, x + j);
	__m512d xd = _mm512_cvtps_pd(_mm256_castsi256_ps(u));
	__m512d q = _mm512_div_pd(xd, Dv);
	__m512d rem = _mm512_fnmadd_pd(q, Dv, xd);
	__m512i qb = _mm512_castpd_si512(q), rb = _mm512_castpd_si512(rem);
	const __m512i absm = _mm512_set1_epi64(0x7fffffffffffffffll);
	__mmask8 nz = _mm512_test_epi64_mask(qb, absm);
	__mmask8 sticky = _mm512_test_epi64_mask(rb, absm);
	/* |exact| < |q|: rem nonzero with the sign opposite to q's */
	__mmask8 below = sticky & _mm512_test_epi64_mask(_mm512_xor_si512(qb, rb),
							 _mm512_set1_epi64((long long)0x8000000000000000ull));
	__m512i aq = _mm512_and_si512(qb, absm);
	__m512i dh = c->sp ? draws8(c, c->c0 + j) : _mm512_setzero_si512();
	kr8 r;
	__m512d yd;
	__m256i yv;

	aq = _mm512_mask_sub_epi64(aq, below, aq, _mm512_set1_epi64(1));
	r = k_round64(c, p, aq, sticky, nz, dh);
	/* x != 0 with q = 0 cannot happen: |q| >= 2^-149 / D is a normal
	 * binary64 number */
	yd = _mm512_mul_pd(r.mag, Dv);
	yv = _mm256_castps_si256(_mm512_cvtpd_ps(yd));
	yv = _mm256_or_si256(yv, _mm256_and_si256(u, _mm256_set1_epi32((int)0x80000000u)));
	_mm256_mask_storeu_epi32(y + j, t, yv);
	count8(a, &r);
	return r.sat & _mm256_cmpeq_epi32_mask(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
					       _mm256_set1_epi32((int)um));
}


/*
 * The amax rule's exact quotients for e2m1 elements in nearest-even
 * (NVFP4), without a division.  The element of q = |x| / D is decided by
 * where |x| lies among the thresholds t_i D, t = 0.25, 0.75, 1.25, 1.75,
 * 2.5, 3.5, 5 (the midpoints of 0, 0.5, 1, 1.5, 2, 3, 4, 6) and 7 (the
 * midpoint of 6 and 8, the overflow threshold: 8 is the next value of
 * the grid with an unbounded exponent).  t_i D is exact in binary64 (t
 * has <= 3 significant bits, D = X s at most 11 + 24).  For a binary32 a
 * and a real T, a > T iff a > RD(T), RD rounding T down to binary32
 * (no binary32 lies strictly between RD(T) and T), and a >= T iff a >
 * RD(T) - 1 ulp when T is a binary32 (RD(T) = T), else iff a > RD(T);
 * with nonnegative binary32 numbers ordered as their bits, each test is
 * one unsigned compare of a's bits with th_i = bits(RD(t_i D)), less one
 * where a tie goes up.  A tie (q on a threshold) goes to the even code of
 * its two neighbours, nearest-even's rule: the upper one for i = 1, 3,
 * 5, 7 (1, 2, 4 and 8), the lower one for i even.  code = the number of
 * thresholds a passes (th is nondecreasing: T_i < T_{i+1}, and where a
 * tie lowers th_{i+1} by one, RD(T_{i+1}) = T_{i+1} > T_i >= RD(T_i)),
 * found by a binary search over the lanes of th; code 8 is the
 * overflow: the element saturates to 6 with overflow, inexact and
 * saturated, as the reference's saturating overflow does.  The result is
 * v_code D (v = 0, 0.5, 1, 1.5, 2, 3, 4, 6), exact in binary64 and
 * narrowed once to binary32 (ytab, the reference's narrowed r D);
 * inexact iff a differs from v_code D, that is, unless v_code D is a
 * binary32 (ebits) with a's bits.  Tininess (element emin = 0): after
 * rounding, the reference rounds q at precision 2 with an unbounded
 * exponent, and q < 1 stays below 1 iff q < 0.875 (0.875 is the midpoint
 * of 0.75 and 1, a tie going to 1, the even one): tiny iff not a >=
 * 0.875 D; before rounding iff not a >= D.  Underflow = tiny and
 * inexact; flushed = x != 0 with code 0.
 */
KI __m512i ge_th(__m512d T, __m256i up)
{
	__m256 r = _mm512_cvt_roundpd_ps(T, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	__mmask8 ex = _mm512_cmpeq_pd_mask(_mm512_cvtps_pd(r), T);

	return _mm512_castsi256_si512(_mm256_mask_sub_epi32(_mm256_castps_si256(r), ex & (__mmask8)_mm256_movepi32_mask(up),
							    _mm256_castps_si256(r), _mm256_set1_epi32(1)));
}

static int e2m1_block(const kc *c, float *y, const float *x, size_t lo, size_t hi, double D,
		      uint32_t um, fpl__bq_acc *a, vcnt *vc)
{
	const __m512i m1 = _mm512_set1_epi32(-1);
	const __m512d tv = _mm512_set_pd(7, 5, 3.5, 2.5, 1.75, 1.25, 0.75, 0.25);
	const __m512d vv = _mm512_set_pd(6, 4, 3, 2, 1.5, 1, 0.5, 0);
	const __m256i odd = _mm256_set_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
	const __m512i lo8 = _mm512_set_epi32(7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 5, 4, 3, 2, 1, 0);
	__m512i th, ytab, ebits, tt, code;
	__m512d Dv = _mm512_set1_pd(D), yd;
	__m256 y8;
	__mmask16 asat = 0;
	size_t j;

	if (!(D >= 0x1p-100 && D <= 0x1p100))
		return 0;
	/* th_i, lanes 8.. never passed */
	th = _mm512_inserti64x4(ge_th(_mm512_mul_pd(tv, Dv), odd), _mm256_set1_epi32(-1), 1);
	/* the tininess threshold, >= 0.875 D or >= D */
	tt = _mm512_permutexvar_epi32(_mm512_setzero_si512(),
				      ge_th(_mm512_set1_pd(c->tiny_before ? D : 0.875 * D), _mm256_set1_epi32(-1)));
	yd = _mm512_mul_pd(vv, Dv);
	y8 = _mm512_cvtpd_ps(yd);
	ytab = _mm512_permutexvar_epi32(lo8, _mm512_castsi256_si512(_mm256_castps_si256(y8)));
	ebits = _mm512_inserti64x4(
		_mm512_castsi256_si512(_mm256_mask_mov_epi32(
			_mm256_set1_epi32(-1), _mm512_cmpeq_pd_mask(_mm512_cvtps_pd(y8), yd),
			_mm256_castps_si256(y8))),
		_mm256_set1_epi32(-1), 1);
	for (j = lo; j < hi; j += 16) {
		__mmask16 t = tailmask(hi - j), nz, inex, sat, tiny, fl;
		__m512i u = _mm512_maskz_loadu_epi32(t, x + j);
		__m512i av = _mm512_and_si512(u, c->absm), yb, p;

		/* code = #{i : a > th_i}: steps 8, 4, 2, 1 */
		code = _mm512_maskz_mov_epi32(_mm512_cmpgt_epu32_mask(av, _mm512_permutexvar_epi32(_mm512_set1_epi32(7), th)),
					      _mm512_set1_epi32(8));
		p = _mm512_add_epi32(code, _mm512_set1_epi32(3));
		code = _mm512_mask_add_epi32(code, _mm512_cmpgt_epu32_mask(av, _mm512_permutexvar_epi32(p, th)), code,
					     _mm512_set1_epi32(4));
		p = _mm512_add_epi32(code, c->one);
		code = _mm512_mask_add_epi32(code, _mm512_cmpgt_epu32_mask(av, _mm512_permutexvar_epi32(p, th)), code,
					     _mm512_set1_epi32(2));
		code = _mm512_mask_add_epi32(code, _mm512_cmpgt_epu32_mask(av, _mm512_permutexvar_epi32(code, th)),
					     code, c->one);
		nz = _mm512_test_epi32_mask(av, av);
		sat = _mm512_cmpeq_epi32_mask(code, _mm512_set1_epi32(8));
		inex = _mm512_cmpneq_epi32_mask(av, _mm512_permutexvar_epi32(code, ebits)) & t;
		tiny = _mm512_mask_cmple_epu32_mask(inex, av, tt);
		fl = nz & _mm512_testn_epi32_mask(code, code);
		yb = _mm512_ternarylogic_epi32(_mm512_permutexvar_epi32(code, ytab), u, c->sgn, 0xf8);
		_mm512_mask_storeu_epi32(y + j, t, yb);
		vc->inex = _mm512_mask_sub_epi32(vc->inex, inex, vc->inex, m1);
		vc->unf = _mm512_mask_sub_epi32(vc->unf, tiny, vc->unf, m1);
		vc->sat = _mm512_mask_sub_epi32(vc->sat, sat & t, vc->sat, m1);
		vc->fl = _mm512_mask_sub_epi32(vc->fl, fl & t, vc->fl, m1);
		asat |= sat & t & _mm512_cmpeq_epi32_mask(av, _mm512_set1_epi32((int)um));
	}
	a->s.amax_saturated += asat != 0;
	return 1;
}

/* The amax rule's constants for the whole call: q32's rounding
 * constants of scale 1 (B0; kb_ok: usable for every block, s and its
 * binary32 image away from binary32's edges) and s in binary32. */
typedef struct ka {
	kb B0;
	int kb_ok;
	__m512 sf;
} ka;

/* The elements of block [lo, hi) (um its largest magnitude bits, below
 * 0x7f800000) with scale X, D = X s; a->s.amax_saturated as well. */
KI void amax_elems(const kc *c, const fpl__bq *p, const ka *K, float *y, const float *x,
		   size_t lo, size_t hi, uint32_t um, double X, fpl__bq_acc *a, vcnt *vc)
{
	double D = X * p->s;
	int asat = 0;
	float amax;
	size_t j;

	memcpy(&amax, &um, 4);
	if (p->q32) {
		float Df = (float)D;
		kb B;

		if (!(Df >= 0x1p-126f) || amax > Df * 0x1p100f || !K->kb_ok) {
			fpl__bq_block_scalar(p, y, x, lo, hi, X, amax, a);
			return;
		}
		B = K->B0;
		B.um = _mm512_set1_epi32((int)um);
		{
			__m512 Dfv = _mm512_set1_ps(Df), Xf = _mm512_set1_ps((float)X);
			__mmask16 am = 0;

			_mm_prefetch((const char *)(x + lo + PF_AHEAD), _MM_HINT_T0);
			__builtin_prefetch(y + lo + PF_AHEAD, 1, 3);
			for (j = lo; j < hi; j += 16) {
				__mmask16 t = tailmask(hi - j);
				__m512i u = t == 0xffff ? _mm512_loadu_si512(x + j)
							: _mm512_maskz_loadu_epi32(t, x + j);

				q32_vec(c, &B, u, Dfv, Xf, K->sf, c->sp ? draws16(c, c->c0 + j) : c->zero,
					y + j, t, c->sp, c->tiny_before, vc, &am);
			}
			asat = am != 0;
		}
	} else if (c->e2m1 && e2m1_block(c, y, x, lo, hi, D, um, a, vc)) {
		return;	/* (it counts amax_saturated) */
	} else {
		__m512d Dv = _mm512_set1_pd(D);

		for (j = lo; j < hi; j += 8) {
			size_t left = hi - j;
			__mmask8 t = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1);

			asat |= exact8(c, p, y, x, j, t, Dv, um, a) != 0;
		}
	}
	a->s.amax_saturated += (uint64_t)asat;
}

#define AMAX_BATCH 8

/* Blocks [id0, id1) of the amax rule one at a time, in batches of
 * AMAX_BATCH blocks: first every block's amax and scale (chains of
 * dependent steps, independent across the blocks, which the CPU then
 * overlaps), then the elements. */
static void amax_blocks(const kc *c, const fpl__bq *p, const ka *K, float *y, const float *x,
			size_t id0, size_t id1, fpl__bq_acc *a, vcnt *vc)
{
	size_t id, nb, row = id0 / p->nbr, br = id0 % p->nbr;

	for (id = id0; id < id1; id += nb) {
		size_t blo[AMAX_BATCH], bhi[AMAX_BATCH], ib;
		uint32_t bum[AMAX_BATCH];
		double bX[AMAX_BATCH];

		nb = id1 - id < AMAX_BATCH ? id1 - id : AMAX_BATCH;
		for (ib = 0; ib < nb; ib++) {
			size_t lo, hi;
			uint32_t um;
			int clamped = 0;
			float amax;
			double X = 1;

			/* fpl__bq_range's block, stepped without its division */
			lo = row * p->R + br * p->tr;
			hi = lo + (p->R - br * p->tr < p->tr ? p->R - br * p->tr : p->tr);
			if (++br == p->nbr) {
				br = 0;
				row++;
			}
			blo[ib] = lo;
			bhi[ib] = hi;
			bum[ib] = um = block_umax(c, x, lo, hi);
			a->s.blocks++;
			a->s.elements += hi - lo;
			if (um >= 0x7f800000u) {
				a->s.nan_blocks++;
				nan_block(c, y, lo, hi);
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
		for (ib = 0; ib < nb; ib++)
			if (bum[ib] < 0x7f800000u)
				amax_elems(c, p, K, y, x, blo[ib], bhi[ib], bum[ib], bX[ib], a, vc);
	}
}

/*
 * The amax rule's scales of 16 blocks at once, lane b for block b with
 * largest magnitude bits um_b (0 < um_b < 0x7f800000), as
 * fpl__bq_amax_scale: the quotient q = amax / dv in binary64 (q32: the
 * binary32 quotient amax / fp32(dv), widened; a lane where it is 0 or
 * inf goes to *slow), then rounded to nearest-even into the scale
 * format as fpl__bq_round_scale does, by the addition of C = 2^(e' + 52 -
 * sm), e' = max(e_q, semin) (q < 2^(e'+1) <= C 2^(sm - 51), so q + C lies
 * in [C, 2C), where binary64's spacing is the scale's quantum 2^(e' -
 * sm): the addition rounds q to it in the default mode, the subtraction
 * is exact), saturated at smaxv, raised to sminv below it (both
 * *clamped).  q is a normal binary64 number (amax in [2^-149, 2^128),
 * dv = max_e s with s a positive binary32: |e_q| < 300), as
 * fpl__bq_round_scale assumes, and below 2^1000.  X in two halves.
 */
KI void amax_scales16(const fpl__bq *p, __m512i umv, __m512d *X, __mmask16 *clamped,
		      __mmask16 *slow)
{
	const __m512d smaxv = _mm512_set1_pd(p->smaxv), sminv = _mm512_set1_pd(p->sminv);
	const __m512i eoff = _mm512_set1_epi64(1023 + p->semin), coff = _mm512_set1_epi64(52 - p->sm);
	__m512 qf = _mm512_div_ps(_mm512_castsi512_ps(umv), _mm512_set1_ps((float)p->dv));
	__mmask16 cl = 0;
	int h;

	*slow = 0;
	if (p->q32) {
		__m512i qb = _mm512_castps_si512(qf);

		*slow = _mm512_testn_epi32_mask(qb, qb) | _mm512_cmpge_epu32_mask(qb, _mm512_set1_epi32(0x7f800000));
	}
	for (h = 0; h < 2; h++) {
		__m512d q, C, r;
		__m512i E;
		__mmask8 sat, low;

		if (p->q32)
			q = _mm512_cvtps_pd(h ? _mm512_extractf32x8_ps(qf, 1) : _mm512_castps512_ps256(qf));
		else
			q = _mm512_div_pd(_mm512_cvtps_pd(h ? _mm512_extractf32x8_ps(_mm512_castsi512_ps(umv), 1)
							    : _mm512_castps512_ps256(_mm512_castsi512_ps(umv))),
					  _mm512_set1_pd(p->dv));
		E = _mm512_max_epi64(_mm512_srli_epi64(_mm512_castpd_si512(q), 52), eoff);
		C = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(E, coff), 52));
		r = _mm512_sub_pd(_mm512_add_pd(q, C), C);
		sat = _mm512_cmp_pd_mask(r, smaxv, _CMP_GT_OQ);
		r = _mm512_mask_mov_pd(r, sat, smaxv);
		low = _mm512_cmp_pd_mask(r, sminv, _CMP_LT_OQ);
		X[h] = _mm512_mask_mov_pd(r, low, sminv);
		cl |= (__mmask16)((unsigned)(sat | low) << (8 * h));
	}
	*clamped = cl;
}

/*
 * The e2m1 thresholds of e2m1_block for 16 blocks, column i lane b for
 * block b (D_b in [2^-100, 2^100], two halves): th[i] = bits(RD(t_i D)),
 * less one for odd i where t_i D is a binary32 (a tie goes up: 1, 2, 4,
 * 8), yv[i] = bits(RN(v_i D)) and ev[i] = those bits where v_i D is a
 * binary32, else all ones (i = 1 .. 7; v_0 D = 0), tt = the tininess
 * threshold (>= 0.875 D, or >= D before rounding), all as e2m1_block's
 * th, ytab, ebits and tt.
 */
typedef struct e2cols {
	uint32_t th[8][16], yv[8][16], ev[8][16], tt[16];
} e2cols;

KI __m512i rd_ge(__m512d T0, __m512d T1, int up)
{
	__m256 r0 = _mm512_cvt_roundpd_ps(T0, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	__m256 r1 = _mm512_cvt_roundpd_ps(T1, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	__mmask16 ex = (__mmask16)(_mm512_cmpeq_pd_mask(_mm512_cvtps_pd(r0), T0)
				   | (unsigned)_mm512_cmpeq_pd_mask(_mm512_cvtps_pd(r1), T1) << 8);
	__m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(r0)),
				       _mm256_castps_si256(r1), 1);

	return up ? _mm512_mask_sub_epi32(r, ex, r, _mm512_set1_epi32(1)) : r;
}

static void e2m1_cols(const kc *c, const __m512d *D, e2cols *e)
{
	static const double tv[8] = { 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7 };
	static const double vv[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
	int i;

	for (i = 0; i < 8; i++) {
		__m512d t = _mm512_set1_pd(tv[i]), v = _mm512_set1_pd(vv[i]);
		__m512d y0 = _mm512_mul_pd(v, D[0]), y1 = _mm512_mul_pd(v, D[1]);
		__m256 f0 = _mm512_cvtpd_ps(y0), f1 = _mm512_cvtpd_ps(y1);
		__mmask16 ex = (__mmask16)(_mm512_cmpeq_pd_mask(_mm512_cvtps_pd(f0), y0)
					   | (unsigned)_mm512_cmpeq_pd_mask(_mm512_cvtps_pd(f1), y1) << 8);
		__m512i yb = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(f0)),
						_mm256_castps_si256(f1), 1);

		_mm512_storeu_si512(e->th[i], rd_ge(_mm512_mul_pd(t, D[0]), _mm512_mul_pd(t, D[1]), i & 1));
		_mm512_storeu_si512(e->yv[i], yb);
		_mm512_storeu_si512(e->ev[i], _mm512_mask_mov_epi32(_mm512_set1_epi32(-1), ex, yb));
	}
	{
		__m512d f = _mm512_set1_pd(c->tiny_before ? 1.0 : 0.875);

		_mm512_storeu_si512(e->tt, rd_ge(_mm512_mul_pd(f, D[0]), _mm512_mul_pd(f, D[1]), 1));
	}
}

/*
 * A block of 16 elements by e2m1_block's decisions with column b of e:
 * pass_i = (a > th_i), nested (th nondecreasing, e2m1_block's comment),
 * so the code is the largest i + 1 with pass_i, and choosing yv and ev
 * by the passes in order of i leaves those of the code; code 8 (pass_7)
 * keeps yv_7 = RN(6 D), the saturated value, with ev all ones (inexact).
 */
KI void e2m1_vec(const kc *c, const e2cols *e, int b, uint32_t um, float *y, const float *x,
		 vcnt *vc, __mmask16 *asat)
{
	const __m512i m1 = _mm512_set1_epi32(-1);
	__m512i u = _mm512_loadu_si512(x), av = _mm512_and_si512(u, c->absm), yb, eb;
	__mmask16 k, k0, nz, inex, tiny;
	int i;

	k0 = _mm512_cmpgt_epu32_mask(av, _mm512_set1_epi32((int)e->th[0][b]));
	yb = _mm512_maskz_mov_epi32(k0, _mm512_set1_epi32((int)e->yv[1][b]));
	eb = _mm512_maskz_mov_epi32(k0, _mm512_set1_epi32((int)e->ev[1][b]));
	for (i = 1; i < 7; i++) {
		k = _mm512_cmpgt_epu32_mask(av, _mm512_set1_epi32((int)e->th[i][b]));
		yb = _mm512_mask_mov_epi32(yb, k, _mm512_set1_epi32((int)e->yv[i + 1][b]));
		eb = _mm512_mask_mov_epi32(eb, k, _mm512_set1_epi32((int)e->ev[i + 1][b]));
	}
	k = _mm512_cmpgt_epu32_mask(av, _mm512_set1_epi32((int)e->th[7][b]));	/* saturated */
	eb = _mm512_mask_mov_epi32(eb, k, m1);
	nz = _mm512_test_epi32_mask(av, av);
	inex = _mm512_cmpneq_epi32_mask(av, eb);
	tiny = _mm512_mask_cmple_epu32_mask(inex, av, _mm512_set1_epi32((int)e->tt[b]));
	_mm512_storeu_si512(y, _mm512_ternarylogic_epi32(yb, u, c->sgn, 0xf8));
	vc->inex = _mm512_mask_sub_epi32(vc->inex, inex, vc->inex, m1);
	vc->unf = _mm512_mask_sub_epi32(vc->unf, tiny, vc->unf, m1);
	vc->sat = _mm512_mask_sub_epi32(vc->sat, k, vc->sat, m1);
	vc->fl = _mm512_mask_sub_epi32(vc->fl, nz & (__mmask16)~k0, vc->fl, m1);
	*asat |= _mm512_mask_cmpeq_epi32_mask(k, av, _mm512_set1_epi32((int)um));
}

/*
 * e2m1 elements in sp with exact quotients (NVFP4 sp), without a
 * division.  The values g = 0, 0.5, 1, 1.5, 2, 3, 4, 6 and 8 (the next
 * value of the grid with an unbounded exponent, where the overflow
 * starts) are the reference's grid of q = |x| / D: quantum 0.5 below 2
 * (the subnormals of emin = 0 included), 1 in [2, 4), 2 in [4, 8).  K =
 * #{i >= 1 : q >= g_i} (0 .. 8) is found by eight compares of |x|'s
 * bits with ge_i = bits(RD(g_i D)), less one where g_i D is a binary32
 * (e2m1_block's argument for a >= T; the ge_i nondecreasing; g_i D
 * exact in binary64 and, for D in [2^-100, 2^100], a normal binary32
 * range).  K = 8: q >= 8, the overflow: the element saturates to 6,
 * with overflow, inexact and saturated, whatever the draw.  K <= 7: q
 * lies in [g_K, g_K+1), the truncation is g_K, the fraction f = (q -
 * g_K) / Q (Q = g_K+1 - g_K), and sp rounds up iff f >= 1 - r' 2^-32
 * (fast_vec's F > ~r' with F the top 32 bits of f: F + r' >= 2^32 iff
 * f 2^32 >= 2^32 - r', an integer), that is iff |x| >= T D with T =
 * g_K+1 - Q r' 2^-32.  T is a multiple of 2^-33 in (0, 8], exact in
 * binary64 (the fnmadd forming it rounds nothing), and the sign of
 * fnmadd(T, D, |x|) = |x| - T D rounded once is the sign of the exact
 * difference (a nonzero one is a multiple of 2^-160 or more, far from
 * underflowing).  Inexact iff |x| != g_K D (an fnmadd, exact to the
 * sign the same way), or K = 8.  The result is g_F, F = min(K + up, 7)
 * (g_7 = 6 also for the saturated), y = RN(g_F D) (exact product in
 * binary64, narrowed once).  Tininess after rounding: q rounded at
 * precision 2 (quantum 0.25 in [0.5, 1)) stays below 1 unless q >= 0.75
 * and rounds up there, iff q >= 1 - 0.25 r' 2^-32 (as above; true for
 * every q >= 1), so tiny = not |x| >= (1 - 0.25 r' 2^-32) D; before
 * rounding: q < 1 (K < 2).  flushed = x != 0 with F = 0.
 */
typedef struct e2grid {
	uint32_t ge[8][16];	/* column i: g_i+1 (0.5 .. 8), lane b: block b */
} e2grid;

static void e2m1_grid(const __m512d *D, e2grid *g)
{
	static const double gv[8] = { 0.5, 1, 1.5, 2, 3, 4, 6, 8 };
	int i;

	for (i = 0; i < 8; i++) {
		__m512d t = _mm512_set1_pd(gv[i]);

		_mm512_storeu_si512(g->ge[i], rd_ge(_mm512_mul_pd(t, D[0]), _mm512_mul_pd(t, D[1]), 1));
	}
}

KI void e2m1_sp_vec(const kc *c, const e2grid *g, int b, double D, uint32_t um, __m512i dh,
		    float *y, const float *x, vcnt *vc, __mmask16 *asat)
{
	const __m512i m1 = _mm512_set1_epi32(-1), seven = _mm512_set1_epi64(7);
	const __m512d G0 = _mm512_set_pd(6, 4, 3, 2, 1.5, 1, 0.5, 0);
	const __m512d G1 = _mm512_set_pd(8, 6, 4, 3, 2, 1.5, 1, 0.5);
	const __m512d QT = _mm512_set_pd(2, 2, 1, 1, 0.5, 0.5, 0.5, 0.5);
	const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1), quarter = _mm512_set1_pd(0.25);
	const __m512d Dv = _mm512_set1_pd(D), two32 = _mm512_set1_pd(0x1p-32);
	__m512i u = _mm512_loadu_si512(x), av = _mm512_and_si512(u, c->absm), K = c->zero;
	__m512i r = _mm512_xor_si512(dh, m1);	/* r' */
	__mmask16 ps[8], up = 0, inex = 0, reach = 0, nz, sat, tiny, fl;
	__m256 yh[2];
	int i, h;

	for (i = 0; i < 8; i++) {
		ps[i] = _mm512_cmpgt_epu32_mask(av, _mm512_set1_epi32((int)g->ge[i][b]));
		K = _mm512_mask_sub_epi32(K, ps[i], K, m1);
	}
	for (h = 0; h < 2; h++) {
		__m256i ah = h ? _mm512_extracti64x4_epi64(av, 1) : _mm512_castsi512_si256(av);
		__m256i rh = h ? _mm512_extracti64x4_epi64(r, 1) : _mm512_castsi512_si256(r);
		__m512i K64 = _mm512_cvtepu32_epi64(h ? _mm512_extracti64x4_epi64(K, 1) : _mm512_castsi512_si256(K));
		__m512d xd = _mm512_cvtps_pd(_mm256_castsi256_ps(ah));
		__m512d w = _mm512_mul_pd(_mm512_cvtepu32_pd(rh), two32);	/* r' 2^-32, exact */
		__m512d T = _mm512_fnmadd_pd(_mm512_permutexvar_pd(K64, QT), w, _mm512_permutexvar_pd(K64, G1));
		__mmask8 uh = _mm512_cmp_pd_mask(_mm512_fnmadd_pd(T, Dv, xd), zero, _CMP_GE_OQ);
		__mmask8 ih = _mm512_cmp_pd_mask(_mm512_fnmadd_pd(_mm512_permutexvar_pd(K64, G0), Dv, xd), zero,
						 _CMP_NEQ_OQ);
		__m512i F = _mm512_min_epu64(_mm512_mask_add_epi64(K64, uh, K64, _mm512_set1_epi64(1)), seven);

		if (!c->tiny_before) {
			__m512d T2 = _mm512_fnmadd_pd(quarter, w, one);
			__mmask8 rch = _mm512_cmp_pd_mask(_mm512_fnmadd_pd(T2, Dv, xd), zero, _CMP_GE_OQ);

			reach |= (__mmask16)((unsigned)rch << (8 * h));
		}
		yh[h] = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_permutexvar_pd(F, G0), Dv));
		up |= (__mmask16)((unsigned)uh << (8 * h));
		inex |= (__mmask16)((unsigned)ih << (8 * h));
	}
	nz = _mm512_test_epi32_mask(av, av);
	sat = ps[7] | (ps[6] & up);
	inex |= sat;
	tiny = inex & (__mmask16)~(c->tiny_before ? ps[1] : reach);
	fl = nz & (__mmask16)~(ps[0] | up);
	{
		__m512i yb = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(yh[0])),
						_mm256_castps_si256(yh[1]), 1);

		_mm512_storeu_si512(y, _mm512_ternarylogic_epi32(yb, u, c->sgn, 0xf8));
	}
	/* counted in scalars, as fast_vec's sp counts */
	vc->ninex += (uint64_t)__builtin_popcount(inex);
	vc->nunf += (uint64_t)__builtin_popcount(tiny);
	vc->nsat += (uint64_t)__builtin_popcount(sat);
	vc->nfl += (uint64_t)__builtin_popcount(fl);
	*asat |= _mm512_mask_cmpeq_epi32_mask(sat, av, _mm512_set1_epi32((int)um));
}

/* Sixteen elements u of a block (largest magnitude bits um) with the
 * exact quotients by D, as exact8 on each half (dh: draws16's ~r' in
 * 32-bit lanes, put in the top word of 64-bit lanes over a low word of
 * ones, draws8's form), counted into vc. */
KI void exact_vec(const kc *c, const fpl__bq *p, __m512i u, __m512d Dv, __m512i dh, uint32_t um,
		  float *y, vcnt *vc, __mmask16 *asat)
{
	const __m512i absm = _mm512_set1_epi64(0x7fffffffffffffffll), m1 = _mm512_set1_epi32(-1);
	const __m512i sgn64 = _mm512_set1_epi64((long long)0x8000000000000000ull);
	__m256 yh[2];
	__mmask16 inex = 0, unf = 0, sat = 0, zr = 0;
	int h;

	for (h = 0; h < 2; h++) {
		__m256i uh = h ? _mm512_extracti64x4_epi64(u, 1) : _mm512_castsi512_si256(u);
		__m512d xd = _mm512_cvtps_pd(_mm256_castsi256_ps(uh));
		__m512d q = _mm512_div_pd(xd, Dv);
		__m512d rem = _mm512_fnmadd_pd(q, Dv, xd);
		__m512i qb = _mm512_castpd_si512(q), rb = _mm512_castpd_si512(rem);
		__mmask8 nz = _mm512_test_epi64_mask(qb, absm);
		__mmask8 sticky = _mm512_test_epi64_mask(rb, absm);
		__mmask8 below = sticky & _mm512_test_epi64_mask(_mm512_xor_si512(qb, rb), sgn64);
		__m512i aq = _mm512_and_si512(qb, absm);
		__m512i d64 = c->sp ? _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(h ? _mm512_extracti64x4_epi64(dh, 1)
											       : _mm512_castsi512_si256(dh)),
									32),
						      _mm512_set1_epi64(0xffffffffll))
				    : _mm512_setzero_si512();
		kr8 r;

		aq = _mm512_mask_sub_epi64(aq, below, aq, _mm512_set1_epi64(1));
		r = k_round64(c, p, aq, sticky, nz, d64);
		yh[h] = _mm512_cvtpd_ps(_mm512_mul_pd(r.mag, Dv));
		inex |= (__mmask16)((unsigned)r.inex << (8 * h));
		unf |= (__mmask16)((unsigned)r.unf << (8 * h));
		sat |= (__mmask16)((unsigned)r.sat << (8 * h));
		zr |= (__mmask16)((unsigned)r.zero << (8 * h));
	}
	{
		__m512i yb = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(yh[0])),
						_mm256_castps_si256(yh[1]), 1);
		__m512i av = _mm512_and_si512(u, c->absm);

		_mm512_storeu_si512(y, _mm512_ternarylogic_epi32(yb, u, c->sgn, 0xf8));
		vc->inex = _mm512_mask_sub_epi32(vc->inex, inex, vc->inex, m1);
		vc->unf = _mm512_mask_sub_epi32(vc->unf, unf, vc->unf, m1);
		vc->sat = _mm512_mask_sub_epi32(vc->sat, sat, vc->sat, m1);
		vc->fl = _mm512_mask_sub_epi32(vc->fl, zr, vc->fl, m1);
		*asat |= _mm512_mask_cmpeq_epi32_mask(sat, av, _mm512_set1_epi32((int)um));
	}
}

/* Sixteen full blocks of 16 at x + lo (the amax rule): the largest
 * magnitudes by umax16b, the scales by amax_scales16, then each block's
 * elements by e2m1_vec (e2m1 in nearest-even, exact quotients, D within
 * e2m1_block's range) or amax_elems; NaN, zero and the blocks
 * amax_scales16 sends to slow by amax_blocks (their own scale). */
static void amax_group16(const kc *c, const fpl__bq *p, const ka *K, float *y, const float *x,
			 size_t lo, size_t id, fpl__bq_acc *a, vcnt *vc)
{
	__m512i umv = umax16b(c, x + lo);
	__mmask16 zerom = _mm512_testn_epi32_mask(umv, umv);
	__mmask16 slowm = zerom | _mm512_cmpge_epu32_mask(umv, c->infb), clm, sl, e2m, exm = 0, q3m = 0, e2s = 0;
	__m512d X[2], D[2];
	double Xb[16], Db[16];
	float Dfb[16], Xfb[16];
	uint32_t umb[16];
	e2cols e;
	e2grid gr;
	vcnt lv;	/* e2m1_vec's counts, in registers (vc is in memory) */
	int b, nasat = 0;

	lv.inex = lv.unf = lv.sat = lv.fl = c->zero;
	lv.ninex = lv.nunf = lv.nsat = lv.nfl = 0;
	amax_scales16(p, umv, X, &clm, &sl);
	slowm |= sl;
	D[0] = _mm512_mul_pd(X[0], _mm512_set1_pd(p->s));
	D[1] = _mm512_mul_pd(X[1], _mm512_set1_pd(p->s));
	_mm512_storeu_pd(Xb, X[0]);
	_mm512_storeu_pd(Xb + 8, X[1]);
	_mm512_storeu_pd(Db, D[0]);
	_mm512_storeu_pd(Db + 8, D[1]);
	_mm512_storeu_si512(umb, umv);
	e2m = 0;
	if (c->e2m1 && !p->q32) {
		const __m512d lo_ = _mm512_set1_pd(0x1p-100), hi_ = _mm512_set1_pd(0x1p100);

		e2m = (__mmask16)((_mm512_cmp_pd_mask(D[0], lo_, _CMP_GE_OQ) & _mm512_cmp_pd_mask(D[0], hi_, _CMP_LE_OQ))
				  | (unsigned)(_mm512_cmp_pd_mask(D[1], lo_, _CMP_GE_OQ)
					       & _mm512_cmp_pd_mask(D[1], hi_, _CMP_LE_OQ)) << 8);
		e2m &= (__mmask16)~slowm;
		if (e2m)
			e2m1_cols(c, D, &e);
	} else if (c->e2m1s && !p->q32) {
		const __m512d lo_ = _mm512_set1_pd(0x1p-100), hi_ = _mm512_set1_pd(0x1p100);

		e2s = (__mmask16)((_mm512_cmp_pd_mask(D[0], lo_, _CMP_GE_OQ) & _mm512_cmp_pd_mask(D[0], hi_, _CMP_LE_OQ))
				  | (unsigned)(_mm512_cmp_pd_mask(D[1], lo_, _CMP_GE_OQ)
					       & _mm512_cmp_pd_mask(D[1], hi_, _CMP_LE_OQ)) << 8);
		e2s &= (__mmask16)~slowm;
		exm = (__mmask16)~(slowm | e2s);
		if (e2s)
			e2m1_grid(D, &gr);
	} else if (!p->q32) {
		exm = (__mmask16)~slowm;
	} else if (K->kb_ok) {	/* amax_elems's test for q32_vec */
		__m256 d0 = _mm512_cvtpd_ps(D[0]), d1 = _mm512_cvtpd_ps(D[1]);
		__m512 Df = _mm512_insertf32x8(_mm512_castps256_ps512(d0), d1, 1);

		q3m = _mm512_cmp_ps_mask(Df, _mm512_set1_ps(0x1p-126f), _CMP_GE_OQ)
		      & _mm512_cmp_ps_mask(_mm512_castsi512_ps(umv), _mm512_mul_ps(Df, _mm512_set1_ps(0x1p100f)),
					   _CMP_LE_OQ)
		      & (__mmask16)~slowm;
		_mm512_storeu_ps(Dfb, Df);
		_mm512_storeu_ps(Xfb, _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(X[0])),
							 _mm512_cvtpd_ps(X[1]), 1));
	}
	{
		int nf = __builtin_popcount((__mmask16)~slowm);

		a->s.blocks += (uint64_t)nf;
		a->s.elements += 16 * (uint64_t)nf;
		a->s.scale_range += (uint64_t)__builtin_popcount(clm & (__mmask16)~slowm);
	}
	/* the e2m1_vec blocks first, in a loop without calls (its counts
	 * stay in registers), then the others */
	for (b = 0; b < 16; b++) {
		size_t l = lo + 16 * (size_t)b;
		__mmask16 asat = 0;

		if (!(((e2m | e2s | exm | q3m) >> b) & 1))
			continue;
		_mm_prefetch((const char *)(x + l + PF_AHEAD), _MM_HINT_T0);
		__builtin_prefetch(y + l + PF_AHEAD, 1, 3);
		if ((e2m >> b) & 1) {
			e2m1_vec(c, &e, b, umb[b], y + l, x + l, &lv, &asat);
		} else if ((e2s >> b) & 1) {
			e2m1_sp_vec(c, &gr, b, Db[b], umb[b], draws16(c, c->c0 + l), y + l, x + l, &lv, &asat);
		} else if ((exm >> b) & 1) {
			exact_vec(c, p, _mm512_loadu_si512(x + l), _mm512_set1_pd(Db[b]),
				  c->sp ? draws16(c, c->c0 + l) : c->zero, umb[b], y + l, &lv, &asat);
		} else {
			kb B = K->B0;

			B.um = _mm512_set1_epi32((int)umb[b]);
			q32_vec(c, &B, _mm512_loadu_si512(x + l), _mm512_set1_ps(Dfb[b]), _mm512_set1_ps(Xfb[b]),
				K->sf, c->sp ? draws16(c, c->c0 + l) : c->zero, y + l, 0xffff, c->sp,
				c->tiny_before, &lv, &asat);
		}
		nasat += asat != 0;
	}
	for (b = 0; b < 16; b++) {
		size_t l = lo + 16 * (size_t)b;

		if ((slowm >> b) & 1)
			amax_blocks(c, p, K, y, x, id + (size_t)b, id + (size_t)b + 1, a, vc);
		else if (!(((e2m | e2s | exm | q3m) >> b) & 1))
			amax_elems(c, p, K, y, x, l, l + 16, umb[b], Xb[b], a, vc);
	}
	a->s.amax_saturated += (uint64_t)nasat;
	vc->inex = _mm512_add_epi32(vc->inex, lv.inex);
	vc->unf = _mm512_add_epi32(vc->unf, lv.unf);
	vc->sat = _mm512_add_epi32(vc->sat, lv.sat);
	vc->fl = _mm512_add_epi32(vc->fl, lv.fl);
	vc->ninex += lv.ninex;
	vc->nunf += lv.nunf;
	vc->nsat += lv.nsat;
	vc->nfl += lv.nfl;
}

/* The amax rule: blocks [id0, id1), runs of sixteen full blocks of 16
 * by amax_group16, the others by amax_blocks. */
static void run_amax(const kc *c, const fpl__bq *p, float *y, const float *x, size_t id0,
		     size_t id1, fpl__bq_acc *a)
{
	size_t id = id0, row = id0 / p->nbr, br = id0 % p->nbr, since = 0;
	const size_t nfull = p->tr == 16 ? p->R / 16 : 0;	/* full blocks per row */
	vcnt vc;
	ka K;

	K.B0.kk = K.B0.minb = K.B0.reach = K.B0.ones = K.B0.maxb = K.B0.um = c->zero;
	K.kb_ok = kb_init(c, &K.B0, p, 0, 0) && p->s >= 0x1p-60 && p->s <= 0x1p60;
	K.sf = _mm512_set1_ps((float)p->s);
	vc.inex = vc.unf = vc.sat = vc.fl = c->zero;
	vc.ninex = vc.nunf = vc.nsat = vc.nfl = 0;
	while (id < id1) {
		size_t step;

		if (br + 16 <= nfull && id + 16 <= id1) {
			amax_group16(c, p, &K, y, x, row * p->R + br * 16, id, a, &vc);
			step = 16;
		} else {
			/* to the row's end, or to where the next group can start */
			step = br < nfull && nfull - br >= 16 ? 1 : p->nbr - br;
			step = step < id1 - id ? step : id1 - id;
			amax_blocks(c, p, &K, y, x, id, id + step, a, &vc);
		}
		id += step;
		br += step;
		if (br == p->nbr) {
			br = 0;
			row++;
		}
		since += step * p->tr;
		if (since >= (1u << 30)) {
			vc_flush(&vc, a);
			since = 0;
		}
	}
	vc_flush(&vc, a);
}

void fpl__bq_avx512(const fpl__bq *p, float *y, const float *x, size_t id0, size_t id1,
		    fpl__bq_acc *a)
{
	/* the floating-point steps assume RNE without DAZ or FTZ: the
	 * default MXCSR, the caller's restored on return */
	const unsigned csr = _mm_getcsr();
	kc c;

	_mm_setcsr(0x1f80);
	kc_init(&c, p);
	if (p->amax)
		run_amax(&c, p, y, x, id0, id1, a);
	else
		run_pow2(&c, p, y, x, id0, id1, a);
	_mm_setcsr(csr);
}

/* The largest magnitude bits of x[0 .. n), NaN and inf included: four
 * independent maxima, software prefetch 8 KiB ahead (a read-only stream
 * at the memory's pace). */
static uint32_t any_umax(const float *x, size_t n)
{
	const __m512i absm = _mm512_set1_epi32(0x7fffffff);
	__m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
	size_t j = 0;

	for (; j + 64 <= n; j += 64) {
		_mm_prefetch((const char *)(x + j + 2048), _MM_HINT_T0);
		_mm_prefetch((const char *)(x + j + 2048 + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(x + j + 2048 + 32), _MM_HINT_T0);
		_mm_prefetch((const char *)(x + j + 2048 + 48), _MM_HINT_T0);
		m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + j), absm));
		m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(x + j + 16), absm));
		m2 = _mm512_max_epu32(m2, _mm512_and_si512(_mm512_loadu_si512(x + j + 32), absm));
		m3 = _mm512_max_epu32(m3, _mm512_and_si512(_mm512_loadu_si512(x + j + 48), absm));
	}
	for (; j < n; j += 16) {
		__mmask16 t = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);

		m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_maskz_loadu_epi32(t, x + j), absm));
	}
	return (uint32_t)_mm512_reduce_max_epu32(
		_mm512_max_epu32(_mm512_max_epu32(m0, m1), _mm512_max_epu32(m2, m3)));
}

/* The finite maximum: any_umax where no NaN or inf is there (its result
 * is then the same), else the masked maxima below. */
uint32_t fpl__bq_finite_umax_avx512(const float *x, size_t n)
{
	const __m512i absm = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
	__m512i m0 = _mm512_setzero_si512(), m1 = m0;
	size_t j = 0;
	uint32_t um = any_umax(x, n);

	if (um < 0x7f800000u)
		return um;

	for (; j + 32 <= n; j += 32) {
		__m512i a = _mm512_and_si512(_mm512_loadu_si512(x + j), absm);
		__m512i b = _mm512_and_si512(_mm512_loadu_si512(x + j + 16), absm);

		m0 = _mm512_mask_max_epu32(m0, _mm512_cmplt_epu32_mask(a, inf), m0, a);
		m1 = _mm512_mask_max_epu32(m1, _mm512_cmplt_epu32_mask(b, inf), m1, b);
	}
	for (; j < n; j += 16) {
		__mmask16 t = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
		__m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(t, x + j), absm);

		m0 = _mm512_mask_max_epu32(m0, _mm512_cmplt_epu32_mask(a, inf), m0, a);
	}
	return (uint32_t)_mm512_reduce_max_epu32(_mm512_max_epu32(m0, m1));
}
