/* SPDX-License-Identifier: MIT */
/*
 * classify_avx2.c - hist_classify_f32 with AVX2 and FMA: the per-element
 * classification of binary32 data (classify.c) eight lanes at a time; and
 * hist_add_f32_avx2, fpl_hist_add_f32's fast path with the cast done in
 * the lanes in the same pass where hist_cast_setup allows it (the second
 * half of the file).  Selected at run time by hist.c (fpl_cpu()->avx2 and
 * ->fma, and a kernel set other than "ref" and "avx512"); only this file
 * is compiled with -mavx2 -mfma.
 *
 * Invariant: every per-element value equals the portable loop's: the
 * class masks are the same integer comparisons of |v| and |y| bits, the
 * relative error is the same IEEE binary32 division d / |v| (vdivps rounds
 * like divss; lanes that do not count are masked to +0 after it), and
 * |y - v| the same binary32 subtraction; maxima and extremes are exact
 * whatever the order.  Only the order of the four sums differs: relative
 * error in binary32 per block of 1024 (per lane of two sets of accumulators
 * taking alternate vectors, then across them),
 * absolute error in binary64 per lane (d * d is exact in binary64, so the
 * FMA adding it rounds like the portable loop's add of the square; the
 * squares of the low and high four lanes in two chains).  The fused pass
 * (cc8) computes the same values from the same operations on v and the
 * cast's |y|; it sums a group's four vectors by halves before adding
 * them to the accumulators (cc32: other orders of the same terms) and
 * sums r * r by FMAs (the exact square, then one rounding: each term
 * moved by at most 2^-24 of itself, within the bound the tests allow,
 * 2^-13 of the sum).
 *
 * Each block of 1024 (8 KiB of v and y, in L1) takes two passes, so that
 * each keeps its accumulators in the 16 registers (one pass spilled them,
 * and the spilled sums chained through memory):
 *   1. classes and extremes; the biased exponents of |v| are packed to
 *      bytes per group of 32 and counted into four interleaved tables
 *      (as in the portable loop) one group behind, so the integer units'
 *      increments overlap the vector work of the next group.  Zeros and
 *      NaN/inf inputs are not counted by compares: they are bins 0 and
 *      255, read and cleared per block (bin 0 less the binary32 subnormals,
 *      looked for only when the block's least |v| is one, less the +0
 *      padding of a short last group, is the zero count).
 *   2. relative and absolute errors.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include <fplab/array.h>

#include "hist/hist_internal.h"

#define BLK 1024	/* elements per block: binary32 partial sums */
#define GRP 32		/* elements per group: four vectors */

/* Per-lane accumulators of one block, in two sets: one per pass, so that
 * each pass keeps its accumulators in registers. */
typedef struct cacc {
	__m256i k;		/* minus the counts mod 256 (at most 128 a block),
				 * bytes 0-3 / 4-7 / 8-11 / 12-15 of each half: y == 0,
				 * y < min normal, y not finite (finite nonzero v);
				 * excluded from the absolute error */
	__m256i mx, mi;		/* max / min |v| bits over finite nonzero v */
} cacc;

typedef struct eacc {
	__m256 rs, rq, rmx;	/* relative error: sum, sum of squares, max */
	__m256 dmx;		/* absolute error max */
	__m256d ds, dq, dq2;	/* absolute error: sum, sum of squares of the
				 * low and the high four lanes */
} eacc;

typedef struct vconst {
	__m256i absm, fmax, mn;
} vconst;

/* Pass 1, one vector: count the classes, note the extremes; returns the
 * biased exponents of |v|. */
static inline __attribute__((always_inline)) __m256i classes8(cacc *a, const vconst *c,
							      __m256 fv, __m256 fy)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i ux = _mm256_and_si256(_mm256_castps_si256(fv), c->absm);
	__m256i uy = _mm256_and_si256(_mm256_castps_si256(fy), c->absm);
	__m256i z = _mm256_cmpeq_epi32(ux, zero);
	__m256i ni = _mm256_cmpgt_epi32(ux, c->fmax);
	__m256i zni = _mm256_or_si256(z, ni);
	/* y of zeros and NaN/inf inputs replaced by min normal: no class */
	__m256i uym = _mm256_blendv_epi8(uy, c->mn, zni);
	__m256i un = _mm256_cmpeq_epi32(uym, zero);
	__m256i lt = _mm256_cmpgt_epi32(c->mn, uym);
	__m256i ov = _mm256_cmpgt_epi32(uym, c->fmax);
	/* excluded from the absolute error: v NaN/inf or y not finite */
	__m256i badab = _mm256_or_si256(ni, _mm256_cmpgt_epi32(uy, c->fmax));
	a->k = _mm256_add_epi8(a->k, _mm256_packs_epi16(_mm256_packs_epi32(un, lt),
							_mm256_packs_epi32(ov, badab)));
	a->mx = _mm256_max_epu32(a->mx, _mm256_andnot_si256(zni, ux));
	a->mi = _mm256_min_epu32(a->mi, _mm256_or_si256(ux, zni));
	return _mm256_srli_epi32(ux, 23);
}

/* Pass 1, four vectors (lanes beyond the data read as +0 by masked
 * loads): store the 32 exponent bytes at eb. */
static inline __attribute__((always_inline)) void classes32(cacc *a, const vconst *c,
							    const __m256 fv[4],
							    const __m256 fy[4], uint8_t *eb)
{
	__m256i e0 = classes8(a, c, fv[0], fy[0]);
	__m256i e1 = classes8(a, c, fv[1], fy[1]);
	__m256i p01 = _mm256_packus_epi32(e0, e1);
	__m256i e2 = classes8(a, c, fv[2], fy[2]);
	__m256i e3 = classes8(a, c, fv[3], fy[3]);
	/* exponents 0..255 to bytes (the packs interleave lanes: order is
	 * irrelevant to a histogram) */
	__m256i p23 = _mm256_packus_epi32(e2, e3);
	_mm256_storeu_si256((__m256i *)eb, _mm256_packus_epi16(p01, p23));
}

/* Pass 2, one vector: the errors. */
static inline __attribute__((always_inline)) void errors8(eacc *a, const vconst *c, __m256 fv,
							  __m256 fy)
{
	__m256i ux = _mm256_and_si256(_mm256_castps_si256(fv), c->absm);
	__m256i uy = _mm256_and_si256(_mm256_castps_si256(fy), c->absm);
	__m256i z = _mm256_cmpeq_epi32(ux, _mm256_setzero_si256());
	__m256i ni = _mm256_cmpgt_epi32(ux, c->fmax);
	__m256i yinf = _mm256_cmpgt_epi32(uy, c->fmax);
	/* relative error over finite nonzero v with finite y; absolute error
	 * over finite v with finite y */
	__m256i badab = _mm256_or_si256(ni, yinf), bad = _mm256_or_si256(badab, z);
	__m256 d = _mm256_and_ps(_mm256_sub_ps(fy, fv), _mm256_castsi256_ps(c->absm));
	__m256 r = _mm256_div_ps(d, _mm256_castsi256_ps(ux));
	r = _mm256_andnot_ps(_mm256_castsi256_ps(bad), r);
	a->rs = _mm256_add_ps(a->rs, r);
	a->rq = _mm256_add_ps(a->rq, _mm256_mul_ps(r, r));
	a->rmx = _mm256_max_ps(a->rmx, r);
	d = _mm256_andnot_ps(_mm256_castsi256_ps(badab), d);
	a->dmx = _mm256_max_ps(a->dmx, d);
	/* absolute error in binary64: squares of binary32 values are exact,
	 * so each FMA rounds like an add of the square */
	__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
	__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
	a->ds = _mm256_add_pd(a->ds, _mm256_add_pd(lo, hi));
	a->dq = _mm256_fmadd_pd(lo, lo, a->dq);
	a->dq2 = _mm256_fmadd_pd(hi, hi, a->dq2);
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

static double hsum_pd(__m256d v)
{
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
	return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* Lanes of a vector, read as an array. */
typedef union {
	__m256 f;
	__m256i i;
	float fl[8];
	uint32_t u[8];
	uint8_t b[32];
} lanes;

/* Masked loads of the short last group at v + i, y + i: rem < GRP values,
 * +0 beyond (masked lanes are not read). */
static void load_short(__m256 fv[4], __m256 fy[4], const float *v, const float *y, int rem)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	for (int j = 0; j < 4; j++) {
		__m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem - 8 * j), iota);
		int off = 8 * j < rem ? 8 * j : 0;
		fv[j] = _mm256_maskload_ps(v + off, mk);
		fy[j] = _mm256_maskload_ps(y + off, mk);
	}
}

/* One block of m <= BLK elements into *acc: pass 1 (classes, extremes,
 * exponent bins), then pass 2 (errors) over the same block, in L1. */
static void block(hist_f32_acc *acc, uint64_t (*t)[256], const vconst *c, const float *v,
		  const float *y, size_t m)
{
	cacc a;
	a.k = a.mx = _mm256_setzero_si256();
	a.mi = _mm256_set1_epi32(-1);
	_Alignas(32) uint8_t eb[2][GRP];
	__m256 fv[4], fy[4];
	size_t i = 0, g = 0;	/* g: groups whose bytes are stored */
	for (; i + GRP <= m; i += GRP, g++) {
		for (int j = 0; j < 4; j++) {
			fv[j] = _mm256_loadu_ps(v + i + 8 * j);
			fy[j] = _mm256_loadu_ps(y + i + 8 * j);
		}
		classes32(&a, c, fv, fy, eb[g & 1]);
		if (g)
			count_bytes(t, eb[(g - 1) & 1]);
	}
	if (g)
		count_bytes(t, eb[(g - 1) & 1]);
	uint32_t pad = 0;
	if (i < m) {
		/* the short last group: +0 beyond m classifies as zeros of
		 * exponent 0, and adds +0 to every sum */
		load_short(fv, fy, v + i, y + i, (int)(m - i));
		classes32(&a, c, fv, fy, eb[0]);
		count_bytes(t, eb[0]);
		pad = (uint32_t)(GRP - (m - i));
	}

	/* two sets of accumulators, alternate vectors: shorter chains */
	eacc e, e1;
	e.rs = e.rq = e.rmx = e.dmx = _mm256_setzero_ps();
	e.ds = e.dq = e.dq2 = _mm256_setzero_pd();
	e1 = e;
	for (i = 0; i + 16 <= m; i += 16) {
		errors8(&e, c, _mm256_loadu_ps(v + i), _mm256_loadu_ps(y + i));
		errors8(&e1, c, _mm256_loadu_ps(v + i + 8), _mm256_loadu_ps(y + i + 8));
	}
	for (; i + 8 <= m; i += 8)
		errors8(&e, c, _mm256_loadu_ps(v + i), _mm256_loadu_ps(y + i));
	if (i < m) {
		load_short(fv, fy, v + i, y + i, (int)(m - i));
		errors8(&e, c, fv[0], fy[0]);
	}
	e.rs = _mm256_add_ps(e.rs, e1.rs);
	e.rq = _mm256_add_ps(e.rq, e1.rq);
	e.rmx = _mm256_max_ps(e.rmx, e1.rmx);
	e.dmx = _mm256_max_ps(e.dmx, e1.dmx);
	e.ds = _mm256_add_pd(e.ds, e1.ds);
	e.dq = _mm256_add_pd(_mm256_add_pd(e.dq, e1.dq), _mm256_add_pd(e.dq2, e1.dq2));

	uint32_t b0 = 0, cni = 0;
	for (int k = 0; k < 4; k++) {
		b0 += (uint32_t)t[k][0];
		cni += (uint32_t)t[k][255];
		t[k][0] = t[k][255] = 0;
	}
	lanes mx = { .i = a.mx }, mi = { .i = a.mi }, rmx = { .f = e.rmx }, dmx = { .f = e.dmx };
	lanes rs = { .f = e.rs }, rq = { .f = e.rq }, kc = { .i = a.k };
	uint32_t bmx = 0, bmi = 0xffffffffu;
	float acc1 = 0, acc2 = 0, amx = 0, dm = 0;
	for (int j = 0; j < 8; j++) {
		bmx = mx.u[j] > bmx ? mx.u[j] : bmx;
		bmi = mi.u[j] < bmi ? mi.u[j] : bmi;
		amx = rmx.fl[j] > amx ? rmx.fl[j] : amx;
		dm = dmx.fl[j] > dm ? dmx.fl[j] : dm;
		acc1 += rs.fl[j];
		acc2 += rq.fl[j];
	}
	uint32_t cnt[4] = { 0, 0, 0, 0 };
	for (int j = 0; j < 32; j++)
		cnt[(j >> 2) & 3] += (uint8_t)(0u - kc.b[j]);
	uint32_t nsub = bmi < 0x00800000u ? hist_f32_subnormals(acc, v, m) : 0;
	uint32_t cz = b0 - nsub - pad, cov = cnt[2];
	acc->nz += cz;
	acc->nni += cni;
	acc->nun += cnt[0];
	acc->nsub += cnt[1] - cnt[0];
	acc->nov += cov;
	acc->en += (uint32_t)m - cz - cni - cov;
	acc->an += (uint32_t)m - cnt[3];
	acc->es += acc1;
	acc->esq += acc2;
	acc->as += hsum_pd(e.ds);
	acc->asq += hsum_pd(e.dq);
	acc->emx = amx > acc->emx ? amx : acc->emx;
	acc->amxa = dm > acc->amxa ? dm : acc->amxa;
	acc->bmax = bmx > acc->bmax ? bmx : acc->bmax;
	acc->bmin = bmi < acc->bmin ? bmi : acc->bmin;
}

void hist_classify_f32_avx2(fpl_hist *h, const float *v, const float *y, size_t n)
{
	const float mnf = (float)h->cfg.fmt.min_normal;
	uint32_t mn;
	memcpy(&mn, &mnf, 4);
	const vconst c = { _mm256_set1_epi32(0x7fffffff), _mm256_set1_epi32(0x7f7fffff),
			   _mm256_set1_epi32((int)mn) };
	hist_f32_acc acc;
	hist_f32_acc_init(&acc, h);
	uint64_t t[4][256];
	memset(t, 0, sizeof t);
	for (size_t i0 = 0; i0 < n; i0 += BLK)
		block(&acc, t, &c, v + i0, y + i0, n - i0 < BLK ? n - i0 : BLK);
	for (int b = 1; b < 255; b++)
		acc.bins[b] = t[0][b] + t[1][b] + t[2][b] + t[3][b];
	hist_f32_commit(h, &acc, n);
}

/* ---- hist_add_f32_avx2: the cast in the lanes, in the same pass ----
 *
 * classify_avx512.c's cast16 with eight lanes (the same argument, under
 * the same conditions, hist_cast_setup), fused with classes8 and errors8
 * in one pass over each block of x (cc8; the accumulators that do not fit
 * the sixteen registers stay in L1), the exponent bytes counted into the
 * four tables one group behind as in block().  AVX2 has no embedded
 * rounding: the tiny lanes add C in the default mode (to nearest even;
 * the call sets the default MXCSR), K Q = (x + C) - C exact, and the
 * other modes correct it from the sign of K Q - x (K Q is within one
 * quantum of x): toward zero K Q - Q where K Q > x, away from zero K Q +
 * Q where K Q < x, which is that mode's rounding of x to a multiple of Q.
 * A block with a NaN or infinite v (the max of the |v| bits) takes its
 * exponent bytes back out of the tables and goes to the engine
 * (fpl_round_array_f32, from its first element's draw) and block().
 * For ne, where add_setup allows it, cn8 replaces cc8: the cast by one
 * binary32 addition and subtraction per lane, C chosen from the lane's
 * own exponent (its comment argues the bits), and fewer operations for
 * the classes; it gives cc8's y, classes and events in every lane.
 */
typedef struct rc8 {
	__m256i absm, one, mask, halfm1, klor, s, min, max, aovp, aovn, tpflip;
	__m256 C, Q, scale;
	/* the cast by one addition (cn8, ne only; add_setup's conditions) */
	__m256i emask, cexp, cs, ovt, unt;
	__m256 tmin;
	int fastne;
	fpl_rnd rnd;
	int scaled, tiny_before;
	uint32_t tiny_lo;	/* blocks with a nonzero |v| below: the engine */
} rc8;

/* A block cast and classified in one pass (cc8): the classes as
 * cacc's k (minus the counts, bytes) but over every lane, zeros and
 * padding included (block_cast takes them off): |y| == 0, |y| < min
 * normal, y not finite (twice: also no absolute error); the extremes; the
 * errors (eacc's, squares in two chains); the events (minus the counts):
 * exact lanes (inexact = lanes - exact), underflows, overflows of v > 0
 * and of v < 0. */
typedef struct cacc8 {
	__m256i k, mx, mi;	/* cn8: mi holds the min of |v| bits - 1 */
	__m256i kf;	/* cn8: minus the counts, bytes 0-3 / 4-7 / 8-11 / 12-15
			 * of each half: |y| == 0, |y| < min normal, exact
			 * lanes, underflows (k: only the non-finite y) */
	__m256 rs, rq, rmx, dmx;
	__m256d ds, dq;
	__m256i eq, un, op, on;
} cacc8;

static inline __attribute__((always_inline)) __m256 scaled8(const rc8 *r, __m256 fx)
{
	return r->scaled ? _mm256_mul_ps(fx, r->scale) : fx;
}

/* The cast of eight v (classify_avx512.c's cast16, with a to-nearest add
 * corrected for tz, tp, tn: the comment above) and classes8 + errors8 on v
 * and it; returns the biased exponents of |v|.  y's sign is never made
 * (only |y| is read: y has v's sign or is zero).  NaN and infinite v give
 * garbage: block_cast then undoes the block. */
static inline __attribute__((always_inline)) __m256i cc8(cacc8 *a, const vconst *c,
							 const rc8 *r, __m256 fv, __m256 *pr,
							 __m256 *pd)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i u = _mm256_castps_si256(fv), x = _mm256_and_si256(u, r->absm);
	__m256 af = _mm256_castsi256_ps(x);
	__m256i z = _mm256_cmpeq_epi32(x, zero);
	__m256i tiny = _mm256_andnot_si256(z, _mm256_cmpgt_epi32(r->min, x));
	__m256i tr = _mm256_andnot_si256(r->mask, x), rn, up;
	__m256 t = _mm256_sub_ps(_mm256_add_ps(af, r->C), r->C);
	if (r->rnd == FPL_RND_NE) {
		__m256i kl = _mm256_or_si256(_mm256_and_si256(_mm256_srlv_epi32(x, r->s), r->one),
					     r->klor);
		rn = _mm256_andnot_si256(r->mask, _mm256_add_epi32(_mm256_add_epi32(x, kl), r->halfm1));
	} else {
		rn = tr;
		__m256 gt = _mm256_cmp_ps(t, af, _CMP_GT_OQ);
		if (r->rnd != FPL_RND_TZ) {
			up = _mm256_xor_si256(_mm256_srai_epi32(u, 31), r->tpflip);
			rn = _mm256_blendv_epi8(
				tr, _mm256_andnot_si256(r->mask, _mm256_add_epi32(x, r->mask)), up);
			__m256 lt = _mm256_cmp_ps(t, af, _CMP_LT_OQ);
			t = _mm256_add_ps(t, _mm256_and_ps(_mm256_and_ps(lt, _mm256_castsi256_ps(up)),
							   r->Q));
			gt = _mm256_andnot_ps(_mm256_castsi256_ps(up), gt);
		}
		t = _mm256_sub_ps(t, _mm256_and_ps(gt, r->Q));
	}
	__m256i q = _mm256_blendv_epi8(rn, _mm256_castps_si256(t), tiny);
	__m256i ovf = _mm256_cmpgt_epi32(rn, r->max);
	__m256i eq = _mm256_cmpeq_epi32(q, x);
	__m256i un = _mm256_andnot_si256(eq, tiny);
	if (!r->tiny_before)
		un = _mm256_and_si256(un, _mm256_cmpgt_epi32(r->min, rn));
	a->eq = _mm256_add_epi32(a->eq, eq);
	a->un = _mm256_add_epi32(a->un, un);
	a->mx = _mm256_max_epu32(a->mx, x);
	a->mi = _mm256_min_epu32(a->mi, _mm256_or_si256(x, z));
	__m256 d;
	__m256i inf = zero;
	if (__builtin_expect(!_mm256_testz_si256(ovf, ovf), 0)) {
		/* overflows: |y| = |ov| of v's sign, events apart (an inexact
		 * overflow leaves the inexact count: eq - 1 there); a non-finite
		 * y has no errors */
		__m256i neg = _mm256_srai_epi32(u, 31);
		a->eq = _mm256_add_epi32(a->eq, _mm256_andnot_si256(eq, ovf));
		a->op = _mm256_add_epi32(a->op, _mm256_andnot_si256(neg, ovf));
		a->on = _mm256_add_epi32(a->on, _mm256_and_si256(neg, ovf));
		q = _mm256_blendv_epi8(q, _mm256_blendv_epi8(r->aovp, r->aovn, neg), ovf);
		inf = _mm256_and_si256(ovf, _mm256_cmpgt_epi32(q, c->fmax));
		d = _mm256_andnot_ps(_mm256_castsi256_ps(inf),
				     _mm256_and_ps(_mm256_sub_ps(_mm256_castsi256_ps(q), af),
						   _mm256_castsi256_ps(c->absm)));
	} else {
		d = _mm256_and_ps(_mm256_sub_ps(_mm256_castsi256_ps(q), af),
				  _mm256_castsi256_ps(c->absm));
	}
	__m256i yz = _mm256_cmpeq_epi32(q, zero), lt = _mm256_cmpgt_epi32(c->mn, q);
	a->k = _mm256_add_epi8(a->k, _mm256_packs_epi16(_mm256_packs_epi32(yz, lt),
							_mm256_packs_epi32(inf, inf)));
	/* zeros: 0 / 0 masked to +0 */
	*pr = _mm256_andnot_ps(_mm256_castsi256_ps(z), _mm256_div_ps(d, af));
	*pd = d;
	return _mm256_srli_epi32(x, 23);
}

/*
 * The cast of eight v for ne by one binary32 addition per lane, with
 * cc8's classes, extremes and errors (cn8; the fast variant where
 * add_setup allows it).  For finite x = |v| in the binade [2^e, 2^(e+1))
 * with e >= emin, let C = 2^(e+s) (s = 23 - m >= 1); x + C lies in [C,
 * 2C], where binary32's spacing is 2^(e+s-23) = 2^(e-m), the quantum of
 * p = m + 1 bits in x's binade; so x + C, rounded to nearest even (the
 * call runs with the default MXCSR), is C + K 2^(e-m) with K 2^(e-m) the
 * rounding of x to p bits, ties to the even K, which is rn's tie to the
 * even kept lsb (a carry to 2^(e+1) is K = 2^(m+1), exact too); and
 * (x + C) - C is exact (Sterbenz: x + C is in [C, 2C]).  For tiny x
 * (below 2^emin, zero included) C = 2^(emin+s) is hist_cast's C and the
 * same two operations are the tiny lanes' cast of cc8 (to nearest even).
 * So q = (x + C) - C with C's exponent field max(x's, emin's) + s is cc8's
 * q in every lane that does not overflow.  Those are the lanes with x <=
 * ovt (the largest x whose rn is <= max: add_setup finds it with cc8's
 * integer rn and checks it), whose exponent field plus s is at most 254
 * (add_setup's condition), so C is a binary32 normal there; lanes above
 * (overflows, NaN, inf) may compute garbage, which the rare branch below
 * replaces as cc8 does (a NaN or infinite v: block_cast redoes the block).
 * Exact iff q == x, as cc8 (an overflowing lane counts as exact there, as
 * cc8's eq - 1 correction makes it); underflow iff inexact and x < unt,
 * where unt is 2^emin (tininess before rounding) or the least x whose rn
 * is 2^emin (after: x < unt iff rn < 2^emin; add_setup checks it with
 * cc8's rn); both are <= 2^emin, so no lane at or above 2^emin and no
 * overflow is tiny, and a zero is exact.  The relative error divides by
 * max(|v|, 2^-149): |v| itself but for a zero, whose d is 0 (q = 0) and
 * gives 0 / 2^-149 = +0, cc8's masked result.  The least |v| is kept as
 * the unsigned min of x - 1 (a zero wraps to the top and drops out;
 * block_cast adds the 1 back).  The classes |y| == 0 and |y| < min normal,
 * exact and underflow are counted in bytes (kf, as cacc's k: at most BLK /
 * 8 = 128 a byte and block, -128 wraps to 0x80, read back as 128).
 */
static inline __attribute__((always_inline)) __m256i cn8(cacc8 *a, const vconst *c,
							 const rc8 *r, __m256 fv, __m256 *pr,
							 __m256 *pd)
{
	__m256i x = _mm256_and_si256(_mm256_castps_si256(fv), r->absm);
	__m256 af = _mm256_castsi256_ps(x);
	__m256 C = _mm256_castsi256_ps(
		_mm256_add_epi32(_mm256_max_epu32(_mm256_and_si256(x, r->emask), r->cexp), r->cs));
	__m256i q = _mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(af, C), C));
	__m256i ovf = _mm256_cmpgt_epi32(x, r->ovt);
	__m256i eq = _mm256_cmpeq_epi32(q, x);
	__m256i un = _mm256_andnot_si256(eq, _mm256_cmpgt_epi32(r->unt, x));
	a->mx = _mm256_max_epu32(a->mx, x);
	a->mi = _mm256_min_epu32(a->mi, _mm256_add_epi32(x, _mm256_set1_epi32(-1)));
	__m256 d;
	if (__builtin_expect(!_mm256_testz_si256(ovf, ovf), 0)) {
		/* as cc8: an overflowing lane counts as exact (the overflow's
		 * events, dpos/dneg, hold its inexact); un is 0 there (x > ovt
		 * >= unt) */
		__m256i neg = _mm256_srai_epi32(_mm256_castps_si256(fv), 31);
		eq = _mm256_or_si256(eq, ovf);
		a->op = _mm256_add_epi32(a->op, _mm256_andnot_si256(neg, ovf));
		a->on = _mm256_add_epi32(a->on, _mm256_and_si256(neg, ovf));
		q = _mm256_blendv_epi8(q, _mm256_blendv_epi8(r->aovp, r->aovn, neg), ovf);
		__m256i inf = _mm256_and_si256(ovf, _mm256_cmpgt_epi32(q, c->fmax));
		a->k = _mm256_add_epi8(a->k, _mm256_packs_epi16(_mm256_setzero_si256(),
								_mm256_packs_epi32(inf, inf)));
		d = _mm256_andnot_ps(_mm256_castsi256_ps(inf),
				     _mm256_and_ps(_mm256_sub_ps(_mm256_castsi256_ps(q), af),
						   _mm256_castsi256_ps(c->absm)));
	} else {
		d = _mm256_and_ps(_mm256_sub_ps(_mm256_castsi256_ps(q), af),
				  _mm256_castsi256_ps(c->absm));
	}
	__m256i yz = _mm256_cmpeq_epi32(q, _mm256_setzero_si256());
	__m256i lt = _mm256_cmpgt_epi32(c->mn, q);
	a->kf = _mm256_add_epi8(a->kf, _mm256_packs_epi16(_mm256_packs_epi32(yz, lt),
							  _mm256_packs_epi32(eq, un)));
	*pr = _mm256_div_ps(d, _mm256_max_ps(af, r->tmin));
	*pd = d;
	return _mm256_srli_epi32(x, 23);
}

#define CC8(fast, a, c, r, fv, pr, pd) ((fast) ? cn8(a, c, r, fv, pr, pd) : cc8(a, c, r, fv, pr, pd))

/* The absolute error's sum and sum of squares of one vector, in binary64
 * (the squares exact, their sum rounded once). */
static inline __attribute__((always_inline)) void dsum8(__m256 d, __m256d *s, __m256d *q)
{
	__m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
	__m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
	*s = _mm256_add_pd(lo, hi);
	*q = _mm256_fmadd_pd(hi, hi, _mm256_mul_pd(lo, lo));
}

/* Four vectors; the errors of the four summed by halves first, then
 * added to the accumulators once (short dependency chains, the
 * accumulators touched once a group). */
static inline __attribute__((always_inline)) void cc32(cacc8 *a, const vconst *c, const rc8 *r,
						       const __m256 fv[4], uint8_t *eb, int fast)
{
	__m256 r0, r1, r2, r3, d0, d1, d2, d3;
	__m256i e0 = CC8(fast, a, c, r, fv[0], &r0, &d0);
	__m256i e1 = CC8(fast, a, c, r, fv[1], &r1, &d1);
	__m256i p01 = _mm256_packus_epi32(e0, e1);
	__m256i e2 = CC8(fast, a, c, r, fv[2], &r2, &d2);
	__m256i e3 = CC8(fast, a, c, r, fv[3], &r3, &d3);
	_mm256_storeu_si256((__m256i *)eb, _mm256_packus_epi16(p01, _mm256_packus_epi32(e2, e3)));
	a->rs = _mm256_add_ps(a->rs, _mm256_add_ps(_mm256_add_ps(r0, r1), _mm256_add_ps(r2, r3)));
	a->rq = _mm256_add_ps(a->rq, _mm256_add_ps(_mm256_fmadd_ps(r0, r0, _mm256_mul_ps(r1, r1)),
						   _mm256_fmadd_ps(r2, r2, _mm256_mul_ps(r3, r3))));
	a->rmx = _mm256_max_ps(a->rmx, _mm256_max_ps(_mm256_max_ps(r0, r1), _mm256_max_ps(r2, r3)));
	a->dmx = _mm256_max_ps(a->dmx, _mm256_max_ps(_mm256_max_ps(d0, d1), _mm256_max_ps(d2, d3)));
	__m256d s0, s1, s2, s3, q0, q1, q2, q3;
	dsum8(d0, &s0, &q0);
	dsum8(d1, &s1, &q1);
	dsum8(d2, &s2, &q2);
	dsum8(d3, &s3, &q3);
	a->ds = _mm256_add_pd(a->ds, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
	a->dq = _mm256_add_pd(a->dq, _mm256_add_pd(_mm256_add_pd(q0, q1), _mm256_add_pd(q2, q3)));
}

static uint64_t lanesum(__m256i v)
{
	lanes l = { .i = v };
	uint64_t s = 0;
	for (int j = 0; j < 8; j++)
		s += l.u[j];
	return s;
}

/* The four byte fields of a class accumulator (bytes 4f..4f+3 of each
 * 16-byte half are field f, each minus a count mod 256) as counts: the
 * bytes negated, then summed apart by vpsadbw (fields 0 and 2 in one sum,
 * 1 and 3 in another: each 64-bit sum covers one field's eight bytes). */
static void fields(__m256i k, uint32_t cnt[4])
{
	const __m256i zero = _mm256_setzero_si256();
	const __m256i m02 = _mm256_set1_epi64x(0x00000000ffffffffLL);
	__m256i nb = _mm256_sub_epi8(zero, k);
	lanes s02 = { .i = _mm256_sad_epu8(_mm256_and_si256(nb, m02), zero) };
	lanes s13 = { .i = _mm256_sad_epu8(_mm256_andnot_si256(m02, nb), zero) };
	/* 64-bit sums: s.u[0], u[2] (low half: fields 0, 2), u[4], u[6] */
	cnt[0] += s02.u[0] + s02.u[4];
	cnt[2] += s02.u[2] + s02.u[6];
	cnt[1] += s13.u[0] + s13.u[4];
	cnt[3] += s13.u[2] + s13.u[6];
}

/* One block of m <= BLK values x (scaled into vb where the call scales)
 * cast and classified in one pass into *acc, t and ev (inexact,
 * underflow, overflows of v > 0 and v < 0); returns 0, having added
 * nothing, when a v is NaN or infinite. */
static inline __attribute__((always_inline)) int block_cast_t(hist_f32_acc *acc,
							      uint64_t (*t)[256],
							      const vconst *c, const rc8 *r,
							      const float *x, size_t m,
							      float *vb, uint64_t ev[4], int fast,
							      int sc)
{
	cacc8 a;
	a.k = a.mx = a.eq = a.un = a.op = a.on = _mm256_setzero_si256();
	a.kf = _mm256_setzero_si256();
	a.mi = _mm256_set1_epi32(-1);
	a.rs = a.rq = a.rmx = a.dmx = _mm256_setzero_ps();
	a.ds = a.dq = _mm256_setzero_pd();
	_Alignas(32) uint8_t eb[BLK / GRP][GRP];
	__m256 fv[4];
	size_t i = 0, g = 0;
	for (; i + GRP <= m; i += GRP, g++) {
		for (int j = 0; j < 4; j++) {
			fv[j] = _mm256_loadu_ps(x + i + 8 * j);
			if (sc)
				fv[j] = _mm256_mul_ps(fv[j], r->scale);
			if (sc)
				_mm256_store_ps(vb + i + 8 * j, fv[j]);
		}
		cc32(&a, c, r, fv, eb[g], fast);
		if (g)
			count_bytes(t, eb[g - 1]);
	}
	if (g)
		count_bytes(t, eb[g - 1]);
	uint32_t pad = 0;
	size_t lanes_done = i;
	if (i < m) {
		/* the short last group: +0 beyond m, exact, exponent 0 */
		const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
		int rem = (int)(m - i);
		for (int j = 0; j < 4; j++) {
			__m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem - 8 * j), iota);
			int off = 8 * j < rem ? 8 * j : 0;
			fv[j] = scaled8(r, _mm256_maskload_ps(x + i + off, mk));
			if (r->scaled)
				_mm256_maskstore_ps(vb + i + off, mk, fv[j]);
		}
		cc32(&a, c, r, fv, eb[g], fast);
		count_bytes(t, eb[g]);
		g++;
		pad = (uint32_t)(GRP - rem);
		lanes_done += GRP;
	}
	lanes mx = { .i = a.mx }, mi = { .i = a.mi }, rmx = { .f = a.rmx }, dmx = { .f = a.dmx };
	lanes rs = { .f = a.rs }, rq = { .f = a.rq };
	uint32_t bmx = 0, bmi = 0xffffffffu;
	float acc1 = 0, acc2 = 0, amx = 0, dm = 0;
	for (int j = 0; j < 8; j++) {
		bmx = mx.u[j] > bmx ? mx.u[j] : bmx;
		bmi = mi.u[j] < bmi ? mi.u[j] : bmi;
		amx = rmx.fl[j] > amx ? rmx.fl[j] : amx;
		dm = dmx.fl[j] > dm ? dmx.fl[j] : dm;
		acc1 += rs.fl[j];
		acc2 += rq.fl[j];
	}
	if (fast && bmi != 0xffffffffu)
		bmi++;	/* cn8 kept the min of |v| - 1 */
	if (bmx > 0x7f7fffffu || bmi < r->tiny_lo) {
		/* a NaN or an infinity, or a tiny v the lanes do not cast:
		 * take the block's bytes back out */
		for (size_t q = 0; q < g; q++)
			for (int j = 0; j < GRP; j += 4) {
				t[0][eb[q][j]]--;
				t[1][eb[q][j + 1]]--;
				t[2][eb[q][j + 2]]--;
				t[3][eb[q][j + 3]]--;
			}
		return 0;
	}
	uint32_t b0 = 0;
	for (int k = 0; k < 4; k++) {
		b0 += (uint32_t)t[k][0];
		t[k][0] = 0;	/* (bin 255 is empty: no NaN/inf v) */
	}
	uint32_t cnt[4] = { 0, 0, 0, 0 };
	fields(a.k, cnt);
	uint32_t cf[4] = { 0, 0, 0, 0 };	/* cn8's */
	if (fast) {
		fields(a.kf, cf);
		cnt[0] += cf[0];
		cnt[1] += cf[1];
	}
	const float *v = r->scaled ? vb : x;
	uint32_t nsub = bmi < 0x00800000u ? hist_f32_subnormals(acc, v, m) : 0;
	/* lanes with v = +-0 (and the padding): b0 less the binary32
	 * subnormals; their y is +-0, counted in cnt[0] and cnt[1] */
	uint32_t nzl = b0 - nsub, cz = nzl - pad, cov = cnt[2];
	acc->nz += cz;
	acc->nun += cnt[0] - nzl;
	acc->nsub += cnt[1] - cnt[0];
	acc->nov += cov;
	acc->en += (uint32_t)m - cz - cov;
	acc->an += (uint32_t)m - cnt[3];
	acc->es += acc1;
	acc->esq += acc2;
	acc->as += hsum_pd(a.ds);
	acc->asq += hsum_pd(a.dq);
	acc->emx = amx > acc->emx ? amx : acc->emx;
	acc->amxa = dm > acc->amxa ? dm : acc->amxa;
	acc->bmax = bmx > acc->bmax ? bmx : acc->bmax;
	acc->bmin = bmi < acc->bmin ? bmi : acc->bmin;
	const __m256i zero = _mm256_setzero_si256();
	if (fast) {
		ev[0] += lanes_done - cf[2];
		ev[1] += cf[3];
	} else {
		ev[0] += lanes_done - lanesum(_mm256_sub_epi32(zero, a.eq));
		ev[1] += lanesum(_mm256_sub_epi32(zero, a.un));
	}
	ev[2] += lanesum(_mm256_sub_epi32(zero, a.op));
	ev[3] += lanesum(_mm256_sub_epi32(zero, a.on));
	return 1;
}

static int block_cast(hist_f32_acc *acc, uint64_t (*t)[256], const vconst *c, const rc8 *r,
		      const float *x, size_t m, float *vb, uint64_t ev[4])
{
	/* the variants apart, so that the loop tests neither (sc: r->scaled) */
	if (r->fastne)
		return r->scaled ? block_cast_t(acc, t, c, r, x, m, vb, ev, 1, 1)
				 : block_cast_t(acc, t, c, r, x, m, vb, ev, 1, 0);
	return r->scaled ? block_cast_t(acc, t, c, r, x, m, vb, ev, 0, 1)
			 : block_cast_t(acc, t, c, r, x, m, vb, ev, 0, 0);
}

/* cc8's rn of |v| bits x for ne (s = 23 - m bits discarded). */
static uint32_t rn_ne(uint32_t x, int s)
{
	uint32_t mask = (1u << s) - 1, kl = ((x >> s) & 1) | (s == 23);
	return (x + kl + (1u << (s - 1)) - 1) & ~mask;
}

/* Can cn8 cast for r (ne)?  Sets r->fastne and its constants: ovt, the
 * largest x with rn(x) <= max, and unt (cn8's comment), both checked on
 * cc8's rn, and the exponent field of ovt plus s at most 254. */
static void add_setup(rc8 *r, const hist_cast *hc)
{
	const int s = hc->s;
	r->fastne = 0;
	if (r->rnd != FPL_RND_NE)
		return;
	/* rn(max + 2^(s-1) - 1) <= max; one more is the tie, which rounds to
	 * the even one of max and its successor */
	uint32_t ovt = hc->max + (1u << (s - 1)) - 1;
	if (!((hc->max >> s) & 1))
		ovt++;
	uint32_t unt = hc->tiny_before ? hc->min : hc->min - (1u << (s - 1));
	if (rn_ne(ovt, s) > hc->max || rn_ne(ovt + 1, s) <= hc->max || (ovt >> 23) + (uint32_t)s > 254)
		return;
	if (!hc->tiny_before && (rn_ne(unt, s) < hc->min || rn_ne(unt - 1, s) >= hc->min))
		return;
	r->emask = _mm256_set1_epi32(0x7f800000);
	r->cexp = _mm256_set1_epi32((int)(hc->min & 0x7f800000u));
	r->cs = _mm256_set1_epi32(s << 23);
	r->ovt = _mm256_set1_epi32((int)ovt);
	r->unt = _mm256_set1_epi32((int)unt);
	r->tmin = _mm256_castsi256_ps(_mm256_set1_epi32(1));
	r->fastne = 1;
}

int hist_add_f32_avx2(fpl_hist *h, const float *x, size_t n)
{
	hist_cast hc;
	if (!n || !hist_cast_setup(&hc, h))
		return 1;
	const int s32 = hc.s, k = h->scale_log2;
	rc8 r;
	r.absm = _mm256_set1_epi32(0x7fffffff);
	r.one = _mm256_set1_epi32(1);
	r.mask = _mm256_set1_epi32((int)((1u << s32) - 1));
	r.halfm1 = _mm256_set1_epi32((int)((1u << (s32 - 1)) - 1));
	r.klor = _mm256_set1_epi32(s32 == 23);
	r.s = _mm256_set1_epi32(s32);
	r.min = _mm256_set1_epi32((int)hc.min);
	r.max = _mm256_set1_epi32((int)hc.max);
	r.aovp = _mm256_set1_epi32((int)hc.aovp);
	r.aovn = _mm256_set1_epi32((int)hc.aovn);
	r.tpflip = _mm256_set1_epi32(h->cfg.rnd == FPL_RND_TP ? -1 : 0);
	r.C = _mm256_set1_ps(hc.C);
	r.Q = _mm256_set1_ps(hc.Q);
	r.scale = _mm256_set1_ps(ldexpf(1.0f, k));
	r.rnd = h->cfg.rnd;
	r.scaled = k != 0;
	r.tiny_before = hc.tiny_before;
	r.tiny_lo = hc.tiny_fb ? hc.min : 0;
	add_setup(&r, &hc);

	const float mnf = (float)h->cfg.fmt.min_normal;
	uint32_t mn;
	memcpy(&mn, &mnf, 4);
	const vconst c = { _mm256_set1_epi32(0x7fffffff), _mm256_set1_epi32(0x7f7fffff),
			   _mm256_set1_epi32((int)mn) };
	hist_f32_acc acc;
	hist_f32_acc_init(&acc, h);
	uint64_t t[4][256];
	memset(t, 0, sizeof t);
	fpl_state *st = &h->cfg.st;
	const fpl_state keep = *st;
	const uint64_t idx0 = st->counter;
	uint64_t ev[4] = { 0, 0, 0, 0 };	/* inexact, underflow, overflows > 0, < 0 */
	_Alignas(32) float vb[BLK], yb[BLK];
	const unsigned csr = _mm_getcsr();
	_mm_setcsr(0x1f80);	/* the default: to nearest, no FTZ or DAZ */
	for (size_t i0 = 0; i0 < n; i0 += BLK) {
		size_t m = n - i0 < BLK ? n - i0 : BLK;
		if (block_cast(&acc, t, &c, &r, x + i0, m, vb, ev))
			continue;
		/* a NaN or an infinity: the engine casts the block, from its
		 * first element's draw, and the loop above classifies it */
		const float *v = x + i0;
		if (r.scaled) {
			for (size_t i = 0; i < m; i++)
				vb[i] = x[i0 + i] * ldexpf(1.0f, k);
			v = vb;
		}
		st->counter = idx0 + i0;
		int rc = fpl_round_array_f32(&h->cfg.fmt, yb, v, m, h->cfg.rnd, st);
		if (rc) {
			*st = keep;
			_mm_setcsr(csr);
			return rc;
		}
		block(&acc, t, &c, v, yb, m);
	}
	_mm_setcsr(csr);
	st->counter = idx0 + n;
	for (int j = 0; j < FPL_NFLAGS; j++) {
		uint64_t a = ev[2] * hc.dpos[j] + ev[3] * hc.dneg[j] + (j < 2 ? ev[j] : 0);
		st->count[j] += a;
		if (a)
			st->flags |= 1u << j;
	}
	for (int b = 1; b < 255; b++)
		acc.bins[b] = t[0][b] + t[1][b] + t[2][b] + t[3][b];
	hist_f32_commit(h, &acc, n);
	return 0;
}
