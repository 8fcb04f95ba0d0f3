/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_ne_avx512.c - the NE64 chains (chain_ne.c) on AVX-512:
 * eight outputs per register, up to 64 outputs of a tile held in
 * registers for the whole range of steps (one lane = one output's chain,
 * the running sums never leave the registers between steps), the
 * inexact counts kept per lane in registers as well.
 *
 * Per step and lane: t = fma(a_k, b_kj, s_j) in binary64.  t is the
 * exact a*b + s (chain_fast.c's EXACT64 condition, which the NE64 path
 * requires), so the reference's step is t rounded once to nearest-even
 * into acc.  Here that rounding is done by the classic add-and-subtract
 * of a magic constant instead of chain_ne.c's integer idiom:
 *
 *   Why y = (t + C) - C is t rounded to nearest-even at m+1 bits.  Let
 *   2^e <= |t| < 2^(e+1) with e >= emin (the lanes kept here: 2^emin <=
 *   |t|), q = 2^(e-m) the quantum of acc at t, and C = 1.5 * 2^52 * q
 *   (its bits: those of t's exponent field plus (52-m) << 52, with the
 *   fraction 2^51; computed in integers from t's bits).  Every binary64
 *   in [2^52 q, 2^53 q) is a multiple of q and every multiple of q there
 *   is a binary64; |t| < 2^(m+1) q <= 2^51 q (m <= 50), so t + C lies in
 *   (2^52 q, 2^53 q), and the hardware's t + C in mode ne (the MXCSR
 *   default; this file changes no control state) is the exact t + C
 *   rounded to the nearest multiple of q, ties to the even multiple.
 *   Since C is an even multiple of q (1.5 * 2^52), the multiple chosen,
 *   minus C, is the nearest multiple of q to t with ties to an even
 *   multiple: t rounded to nearest-even in acc's binade at t, which is
 *   the engine's rounding whenever the result is a normal finite value
 *   (the carry into the next binade gives 2^(e+1), also a multiple of
 *   q).  The subtraction (t + C) - C is exact (both in [2^52 q, 2^53 q),
 *   a difference of multiples of q below 2^(m+2) q: Sterbenz).
 *   Lanes kept: 2^emin <= |t| < L, where L = the least binary64 whose
 *   rounding exceeds max (max + half an ulp, plus the smallest binary64
 *   step when max's last significand bit is even, since the tie then
 *   goes down to max), tested on the bits: A = bits(|t|), (A - bits(2^emin))
 *   <= (bits(L) - 1 - bits(2^emin)) unsigned.  A kept lane is neither
 *   tiny (|t| >= 2^emin under both tininess rules) nor overflowing (its
 *   rounding is at most max) nor special, so its only flag is inexact,
 *   raised iff y != t (t is the exact value).  Every other lane (zero,
 *   tiny, overflow, inf, NaN, and the lanes past the tile's end) is
 *   recomputed from the step's original operands by fpl__acc_ne64_slow
 *   (the engine's fpl__fma_ix with the step's draw index), as the
 *   reference does.  Invalid or overflow raised in MXCSR by the discarded
 *   computation of those lanes is never read (the engine keeps its own
 *   flags).
 *
 * The verified variant (J->verify: chain_fast.c takes it for mode ne
 * when the products are exact in binary64 but a product plus a value of
 * acc may not be): p = a*b is exact (the static condition (1) of
 * chain_fast.c), t = s + p is binary64's rounded sum, and Knuth's TwoSum
 * gives its error e = (s + p) - t exactly (no overflow: chain_fast.c's
 * condition bounds |s + p| below 2^1023; the build's -ffp-contract=off
 * keeps the additions apart).  Where e = 0, t is the exact s + a*b and
 * the argument above applies unchanged.  Where e != 0 the exact sum x =
 * t + e is no binary64; t is replaced by RO(x), x rounded to odd at 53
 * bits: t itself when t's last significand bit is 1 (x lies strictly
 * between t and its neighbour on e's side, and RO picks the odd one of
 * the two), else that neighbour (its bits +1 when e has t's sign, a step
 * away from zero, -1 otherwise; within one sign the bit patterns are
 * ordered as the values, across a binade too).  Then the rounding above
 * of RO(x) at m+1 <= 51 bits is x's own rounding to nearest-even, by the
 * round-to-odd theorem (Boldo and Melquiond, "Emulation of FMA and
 * correctly rounded sums: proved algorithms using rounding to odd", IEEE
 * Trans. Computers 57(4), 2008: RN_p(RO_q(x)) = RN_p(x) for q >= p + 2),
 * as chain_fast.c's ODD64 path also uses it.  The lane tests stay true
 * of x: RO(x) is odd at 53 bits, so no value of acc (m + 1 <= 51 bits)
 * and y != RO(x): the step counts inexact, as x is no binary64; and x
 * lies strictly between RO(x)'s two even neighbours, so 2^emin <= |RO(x)|
 * (2^emin is even) gives |x| > 2^emin (not tiny) and |RO(x)| < L gives
 * y <= max (y is RO(x)'s rounding).  A NaN lane (an inf or NaN operand)
 * fails the range test and goes to the reference.
 */
#include <immintrin.h>
#include <string.h>

#include "accum/accum_internal.h"

typedef struct kpar {
	__m512i signv, expm, cadd, minv, range, m1, one;
} kpar;

/* The lanes in bad (of the register at tile lane base, step k) by the
 * reference's step; the others keep y. */
__attribute__((noinline)) static __m512d fixup(fpl__acc_tile *T, size_t k, size_t base,
					      __m512d sold, __m512d y, unsigned bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	double so[8], yo[8];

	_mm512_storeu_pd(so, sold);
	_mm512_storeu_pd(yo, y);
	while (bad) {
		int l = __builtin_ctz(bad);
		bad &= bad - 1;
		yo[l] = fpl__acc_ne64_slow(T, a, b[l], so[l], idx0 + (uint64_t)l, base + (size_t)l);
	}
	return _mm512_loadu_pd(yo);
}

/* t for one register: fma(av, bv, sv) (exact by the NE64 condition) or,
 * when VER, p = av*bv (exact) and t = sv + p with TwoSum's error e of
 * the addition, made odd where e != 0: t = RO(sv + p), the exact sum
 * rounded to odd at 53 bits (the header's verified variant); ev = 0 (a
 * NaN lane is caught by the range test of CALC). */
#define TVAL(t, sv, bv, ev)                                                                    \
	do {                                                                                   \
		if (VER) {                                                                     \
			__m512d p_ = _mm512_mul_pd(av, (bv));                                  \
			__m512d bb_, e_;                                                       \
			__m512i u_;                                                            \
			__mmask8 inx_, up_;                                                    \
			(t) = _mm512_add_pd((sv), p_);                                         \
			bb_ = _mm512_sub_pd((t), (sv));                                        \
			e_ = _mm512_add_pd(_mm512_sub_pd((sv), _mm512_sub_pd((t), bb_)),       \
					   _mm512_sub_pd(p_, bb_));                            \
			inx_ = _mm512_cmp_pd_mask(e_, _mm512_setzero_pd(), _CMP_NEQ_OQ);       \
			if (inx_) {	/* rare for some models, usual for others */          \
				u_ = _mm512_castpd_si512(t);                                   \
				inx_ &= _mm512_testn_epi64_mask(u_, P.one);                    \
				up_ = (__mmask8)~(_mm512_movepi64_mask(_mm512_castpd_si512(e_)) \
						  ^ _mm512_movepi64_mask(u_));                 \
				u_ = _mm512_mask_add_epi64(u_, inx_ & up_, u_, P.one);         \
				u_ = _mm512_mask_sub_epi64(u_, inx_ & (__mmask8)~up_, u_, P.one); \
				(t) = _mm512_castsi512_pd(u_);                                 \
			}                                                                      \
			(ev) = 0;                                                              \
		} else {                                                                       \
			(t) = _mm512_fmadd_pd(av, (bv), (sv));                                 \
			(ev) = 0;                                                              \
		}                                                                              \
	} while (0)

/* One step of one register: y = the rounding of t (TVAL), bad = the
 * lanes of valid it cannot do; cv counts the inexact roundings of every
 * lane (a bad lane's count is taken back by FIX). */
#define CALC(sv, cv, bv, valid, y, bad)                                                        \
	do {                                                                                   \
		__m512d t_;                                                                    \
		__mmask8 ev_;                                                                  \
		TVAL(t_, (sv), (bv), ev_);                                                     \
		__m512i u_ = _mm512_castpd_si512(t_);                                          \
		__m512d c_ = _mm512_castsi512_pd(                                              \
			_mm512_add_epi64(_mm512_and_si512(u_, P.expm), P.cadd));               \
		__m512i A_ = _mm512_andnot_si512(P.signv, u_);                                 \
		(y) = _mm512_sub_pd(_mm512_add_pd(t_, c_), c_);                                \
		(bad) = _mm512_mask_cmpgt_epu64_mask((valid), _mm512_sub_epi64(A_, P.minv),   \
						     P.range) | (ev_ & (valid));               \
		(cv) = _mm512_mask_sub_epi64((cv), _mm512_cmp_pd_mask((y), t_, _CMP_NEQ_UQ),   \
					     (cv), P.m1);                                      \
	} while (0)

/* The bad lanes of one register (tile lane base) by the reference, their
 * kernel counts taken back (t recomputed as CALC did); then sv = y. */
#define FIX(sv, cv, y, bad, base)                                                              \
	do {                                                                                   \
		if (bad) {                                                                     \
			__m512d t_;                                                            \
			__mmask8 ev_;                                                          \
			TVAL(t_, (sv), bvec(T, k, (base), (bad)), ev_);                        \
			(void)ev_;                                                             \
			(cv) = _mm512_mask_add_epi64(                                          \
				(cv), (__mmask8)((bad) & _mm512_cmp_pd_mask((y), t_, _CMP_NEQ_UQ)), \
				(cv), P.m1);                                                   \
			(y) = fixup(T, k, (base), (sv), (y), (unsigned)(bad));                 \
		}                                                                              \
		(sv) = (y);                                                                    \
	} while (0)

/* b_kj for the lanes of bad (others 0). */
static inline __m512d bvec(fpl__acc_tile *T, size_t k, size_t base, __mmask8 bad)
{
	const fpl__acc_job *J = T->J;
	return _mm512_maskz_loadu_pd(bad, J->B + k * J->N + T->j0 + base);
}

#define STEP4(x0, x1, x2, x3, d0, d1, d2, d3, b, jb)                                           \
	do {                                                                                   \
		__m512d y0, y1, y2, y3;                                                        \
		__mmask8 e0, e1, e2, e3;                                                       \
		CALC(x0, d0, _mm512_loadu_pd(b), all, y0, e0);                                 \
		CALC(x1, d1, _mm512_loadu_pd((b) + 8), all, y1, e1);                           \
		CALC(x2, d2, _mm512_loadu_pd((b) + 16), all, y2, e2);                          \
		CALC(x3, d3, _mm512_loadu_pd((b) + 24), all, y3, e3);                          \
		if (__builtin_expect(!_kortestz_mask8_u8(_kor_mask8(e0, e1), _kor_mask8(e2, e3)), 0)) { \
			FIX(x0, d0, y0, e0, (jb));                                             \
			FIX(x1, d1, y1, e1, (jb) + 8);                                         \
			FIX(x2, d2, y2, e2, (jb) + 16);                                        \
			FIX(x3, d3, y3, e3, (jb) + 24);                                        \
		} else {                                                                       \
			x0 = y0;                                                               \
			x1 = y1;                                                               \
			x2 = y2;                                                               \
			x3 = y3;                                                               \
		}                                                                              \
	} while (0)

static void add_counts(uint64_t *cnt, __m512i cv, size_t n)
{
	uint64_t co[8];
	size_t l;

	_mm512_storeu_si512(co, cv);
	for (l = 0; l < n; l++)
		cnt[l] += co[l];
}

__attribute__((always_inline)) static inline void run(fpl__acc_tile *T, size_t k0, size_t k1,
						     size_t ks, double *s, uint64_t *cnt,
						     const int VER)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *f = &J->m->acc;
	const size_t nj = T->nj;
	/* B's column panel: packed (J->Bp, rows of 64) or in place */
	const size_t N = J->Bp ? FPL__ACC_TILE : J->N;
	const uint64_t half = 1ull << (51 - f->m);
	const uint64_t minb = fpl__bits(f->min_normal), maxb = fpl__bits(f->max);
	const uint64_t lim = maxb + half + 1 - ((maxb >> (52 - f->m)) & 1);
	const double *arow = J->A + T->i * J->K;
	const double *bcol = J->Bp ? J->Bp + T->j0 / FPL__ACC_TILE * J->K * FPL__ACC_TILE
				   : J->B + T->j0;
	const __mmask8 all = 0xff;
	size_t j0 = 0, k;
	kpar P;

	P.signv = _mm512_set1_epi64((long long)0x8000000000000000ull);
	P.expm = _mm512_set1_epi64(0x7ff0000000000000ll);
	P.cadd = _mm512_set1_epi64((long long)(((uint64_t)(52 - f->m) << 52) | 0x0008000000000000ull));
	P.minv = _mm512_set1_epi64((long long)minb);
	P.range = _mm512_set1_epi64((long long)(lim - 1 - minb));
	P.m1 = _mm512_set1_epi64(-1);
	P.one = _mm512_set1_epi64(1);
	/* whole tiles of 64 lanes: eight registers, no masks */
	for (; nj - j0 >= 64; j0 += 64) {
		__m512d s0 = _mm512_loadu_pd(s + j0), s1 = _mm512_loadu_pd(s + j0 + 8);
		__m512d s2 = _mm512_loadu_pd(s + j0 + 16), s3 = _mm512_loadu_pd(s + j0 + 24);
		__m512d s4 = _mm512_loadu_pd(s + j0 + 32), s5 = _mm512_loadu_pd(s + j0 + 40);
		__m512d s6 = _mm512_loadu_pd(s + j0 + 48), s7 = _mm512_loadu_pd(s + j0 + 56);
		__m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
		__m512i c6 = c0, c7 = c0;
		for (k = k0; k < k1; k += ks) {
			const __m512d av = _mm512_set1_pd(arow[k]);
			const double *b = bcol + k * N + j0;
			STEP4(s0, s1, s2, s3, c0, c1, c2, c3, b, j0);
			STEP4(s4, s5, s6, s7, c4, c5, c6, c7, b + 32, j0 + 32);
		}
		_mm512_storeu_pd(s + j0, s0);
		_mm512_storeu_pd(s + j0 + 8, s1);
		_mm512_storeu_pd(s + j0 + 16, s2);
		_mm512_storeu_pd(s + j0 + 24, s3);
		_mm512_storeu_pd(s + j0 + 32, s4);
		_mm512_storeu_pd(s + j0 + 40, s5);
		_mm512_storeu_pd(s + j0 + 48, s6);
		_mm512_storeu_pd(s + j0 + 56, s7);
		add_counts(cnt + j0, c0, 8);
		add_counts(cnt + j0 + 8, c1, 8);
		add_counts(cnt + j0 + 16, c2, 8);
		add_counts(cnt + j0 + 24, c3, 8);
		add_counts(cnt + j0 + 32, c4, 8);
		add_counts(cnt + j0 + 40, c5, 8);
		add_counts(cnt + j0 + 48, c6, 8);
		add_counts(cnt + j0 + 56, c7, 8);
	}
	/* the rest: one register at a time, the last one masked */
	for (; j0 < nj; j0 += 8) {
		const size_t n = nj - j0 < 8 ? nj - j0 : 8;
		const __mmask8 valid = (__mmask8)((1u << n) - 1);
		__m512d s0 = _mm512_maskz_loadu_pd(valid, s + j0);
		__m512i c0 = _mm512_setzero_si512();
		for (k = k0; k < k1; k += ks) {
			const __m512d av = _mm512_set1_pd(arow[k]);
			__m512d y0;
			__mmask8 e0;
			CALC(s0, c0, _mm512_maskz_loadu_pd(valid, bcol + k * N + j0), valid, y0, e0);
			FIX(s0, c0, y0, e0, j0);
		}
		_mm512_mask_storeu_pd(s + j0, valid, s0);
		add_counts(cnt + j0, c0, n);
	}
}

void fpl__acc_ne64_avx512(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			  uint64_t *cnt)
{
	if (T->J->verify)
		run(T, k0, k1, ks, s, cnt, 1);
	else
		run(T, k0, k1, ks, s, cnt, 0);
}

/* The lean kernel (chain_ne.c's lean argument: every lane's t is exact,
 * 2^emin > |t| only for values of acc, |t| below L, no -0): the 64
 * chains in eight registers, each step t = fma(a, b, s) and y = (t + C)
 * - C as above for every lane, no range test and no fixup; a lane's
 * inexact steps (y != t: both never -0, so the bits compare as the
 * values) counted in a register. */
void fpl__acc_ne64_lean_avx512(const double *arow, const double *bp, size_t k0, size_t k1,
			       size_t ks, int m, double *s, uint64_t *cnt)
{
	const __m512i expm = _mm512_set1_epi64(0x7ff0000000000000ll);
	const __m512i cadd =
		_mm512_set1_epi64((long long)(((uint64_t)(52 - m) << 52) | 0x0008000000000000ull));
	const __m512i m1 = _mm512_set1_epi64(-1);
	__m512d s0 = _mm512_loadu_pd(s), s1 = _mm512_loadu_pd(s + 8);
	__m512d s2 = _mm512_loadu_pd(s + 16), s3 = _mm512_loadu_pd(s + 24);
	__m512d s4 = _mm512_loadu_pd(s + 32), s5 = _mm512_loadu_pd(s + 40);
	__m512d s6 = _mm512_loadu_pd(s + 48), s7 = _mm512_loadu_pd(s + 56);
	__m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
	__m512i c6 = c0, c7 = c0;
	size_t k;

	for (k = k0; k < k1; k += ks) {
		const __m512d av = _mm512_set1_pd(arow[k]);
		const double *b = bp + k * FPL__ACC_TILE;
#define LEAN(sv, cv, bb)                                                                       \
	do {                                                                                   \
		__m512d t_ = _mm512_fmadd_pd(av, _mm512_loadu_pd(bb), (sv));                   \
		__m512d c_ = _mm512_castsi512_pd(                                              \
			_mm512_add_epi64(_mm512_and_si512(_mm512_castpd_si512(t_), expm), cadd)); \
		(sv) = _mm512_sub_pd(_mm512_add_pd(t_, c_), c_);                               \
		(cv) = _mm512_mask_sub_epi64(                                                  \
			(cv),                                                                  \
			_mm512_cmpneq_epi64_mask(_mm512_castpd_si512(sv), _mm512_castpd_si512(t_)), \
			(cv), m1);                                                             \
	} while (0)
		LEAN(s0, c0, b);
		LEAN(s1, c1, b + 8);
		LEAN(s2, c2, b + 16);
		LEAN(s3, c3, b + 24);
		LEAN(s4, c4, b + 32);
		LEAN(s5, c5, b + 40);
		LEAN(s6, c6, b + 48);
		LEAN(s7, c7, b + 56);
#undef LEAN
	}
	_mm512_storeu_pd(s, s0);
	_mm512_storeu_pd(s + 8, s1);
	_mm512_storeu_pd(s + 16, s2);
	_mm512_storeu_pd(s + 24, s3);
	_mm512_storeu_pd(s + 32, s4);
	_mm512_storeu_pd(s + 40, s5);
	_mm512_storeu_pd(s + 48, s6);
	_mm512_storeu_pd(s + 56, s7);
	add_counts(cnt, c0, 8);
	add_counts(cnt + 8, c1, 8);
	add_counts(cnt + 16, c2, 8);
	add_counts(cnt + 24, c3, 8);
	add_counts(cnt + 32, c4, 8);
	add_counts(cnt + 40, c5, 8);
	add_counts(cnt + 48, c6, 8);
	add_counts(cnt + 56, c7, 8);
}

/*
 * The evenodd tile in binary32 (J->eo32, chain_fast.c: the order
 * evenodd, mode ne, acc's values those of IEEE binary32 (its subnormal
 * handling and DAZ free), A's and B's formats inside binary32, the
 * verified NE64 conditions on the data): the even chain, the odd chain
 * and S of all 64 outputs in registers as binary32, sixteen lanes a
 * register, each step done by the hardware and checked.
 *
 *   A chain step x = s + a*b (a, b, s binary32 values: the exact x) is
 *   done three times by the fma with embedded rounding: rn, rd and ru =
 *   x rounded to nearest-even, down and up in binary32 (no control
 *   state read or changed: {sae} modes).  A lane is kept when 2^-126 <
 *   |rn| <= max (bits: |rn|'s bits - bits(2^-126) - 1 <= bits(max) -
 *   bits(2^-126) - 1 unsigned; a NaN's bits lie above).  Then x > 2^-126
 *   in magnitude (rn is monotone and 2^-126 a binary32 value), so x is
 *   not tiny under either tininess rule and no flush touches it.  The
 *   operands are read as the reference reads them: with a DAZ acc,
 *   verify_ok's data condition leaves no subnormal in A, B and C, and
 *   acc then has no subnormal results (verify_ok refuses DAZ with
 *   subnormals), so no running sum is one; without DAZ a subnormal
 *   operand is read exactly (MXCSR.DAZ clear, the default this layer
 *   assumes, as for the rounding above; the {sae} forms change nothing
 *   there);
 *   |rn| <= max means x does not overflow; the reference's result is
 *   then x rounded to nearest-even at 24 bits, rn itself, and its only
 *   flag is inexact, raised iff x is not a binary32 value, iff rd != ru.
 *   Every other lane (zero, tiny, overflow, NaN or inf operands) is done
 *   by the reference's step with its operands and draw index, as in
 *   fixup() above.  The additions even + odd and S + u are the same
 *   with the add in place of the fma (fpl__add_ix for the other lanes).
 *   Every value involved is a binary32 value, so the conversions between
 *   the registers and the tile's doubles are exact.
 * Lanes past the tile's end (B's panel is padded with +0) are never
 * kept nor fixed; their values are discarded.
 */
typedef struct eo_par {
	__m512i absm, minb1, range, m1;
} eo_par;

static void eo_fix_step(fpl__acc_tile *T, size_t k, size_t base, __m512 sold, __m512 *y,
			__mmask16 bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	float so[16], yo[16];
	unsigned m = bad;

	_mm512_storeu_ps(so, sold);
	_mm512_storeu_ps(yo, *y);
	while (m) {
		int l = __builtin_ctz(m);
		m &= m - 1;
		yo[l] = (float)fpl__acc_ne64_slow(T, a, b[l], (double)so[l], idx0 + (uint64_t)l,
						  base + (size_t)l);
	}
	*y = _mm512_loadu_ps(yo);
}

static void eo_fix_add(fpl__acc_tile *T, uint64_t sn, size_t base, __m512 x, __m512 yv,
		       __m512 *r, __mmask16 bad)
{
	const fpl_accum_model *m = T->J->m;
	const uint64_t idx0 = fpl__acc_idx(T, sn, base);
	float xo[16], yo[16], ro[16];
	unsigned mk = bad;

	_mm512_storeu_ps(xo, x);
	_mm512_storeu_ps(yo, yv);
	_mm512_storeu_ps(ro, *r);
	while (mk) {
		int l = __builtin_ctz(mk);
		unsigned fl = 0;
		mk &= mk - 1;
		ro[l] = (float)fpl__add_ix(&m->acc, (double)xo[l], (double)yo[l], m->acc_rnd,
					   T->J->st, idx0 + (uint64_t)l, &fl);
		fpl__acc_note(T, base + (size_t)l, fl);
	}
	*r = _mm512_loadu_ps(ro);
}

/* rn, the kept-lane test and the inexact count of one register; OP is
 * the fma or the add with embedded rounding. */
#define EO_CHECK(rn, rd, ru, cv, valid, bad)                                                   \
	do {                                                                                   \
		__m512i A_ = _mm512_and_si512(_mm512_castps_si512(rn), P->absm);               \
		(bad) = _mm512_mask_cmpgt_epu32_mask((valid), _mm512_sub_epi32(A_, P->minb1),  \
						     P->range);                                \
		(cv) = _mm512_mask_sub_epi32(                                                  \
			(cv), _mm512_mask_cmp_ps_mask((__mmask16)((valid) & ~(bad)), (rd), (ru),  \
						      _CMP_NEQ_UQ),                            \
			(cv), P->m1);                                                          \
	} while (0)

#define RN_ (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define RD_ (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define RU_ (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)

static inline __m512 eo_step(fpl__acc_tile *T, const eo_par *P, __m512 av, const float *b,
			     __m512 sv, __m512i *cv, __mmask16 valid, size_t k, size_t base)
{
	const __m512 bv = _mm512_loadu_ps(b);
	__m512 rn = _mm512_fmadd_round_ps(av, bv, sv, RN_);
	__m512 rd = _mm512_fmadd_round_ps(av, bv, sv, RD_);
	__m512 ru = _mm512_fmadd_round_ps(av, bv, sv, RU_);
	__mmask16 bad;

	EO_CHECK(rn, rd, ru, *cv, valid, bad);
	if (__builtin_expect(bad != 0, 0))
		eo_fix_step(T, k, base, sv, &rn, bad);
	return rn;
}

static inline __m512 eo_add(fpl__acc_tile *T, const eo_par *P, __m512 x, __m512 y, __m512i *cv,
			    __mmask16 valid, uint64_t sn, size_t base)
{
	__m512 rn = _mm512_add_round_ps(x, y, RN_);
	__m512 rd = _mm512_add_round_ps(x, y, RD_);
	__m512 ru = _mm512_add_round_ps(x, y, RU_);
	__mmask16 bad;

	EO_CHECK(rn, rd, ru, *cv, valid, bad);
	if (__builtin_expect(bad != 0, 0))
		eo_fix_add(T, sn, base, x, y, &rn, bad);
	return rn;
}

void fpl__acc_eo32_avx512(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const size_t K = J->K, B = J->m->block, nj = T->nj;
	const double *arow = J->A + T->i * K;
	const float *bp = J->Bf + T->j0 / FPL__ACC_TILE * K * FPL__ACC_TILE;
	const uint32_t minb1 = 0x00800001u;	/* bits(2^-126) + 1 */
	__m512 S[4], ch[2][4];
	__m512i cnt[4];
	__mmask16 valid[4];
	uint32_t co[16];
	eo_par P;
	size_t k0, k, r, l;

	P.absm = _mm512_set1_epi32(0x7fffffff);
	P.minb1 = _mm512_set1_epi32((int)minb1);
	P.range = _mm512_set1_epi32((int)(0x7f7fffffu - minb1));
	P.m1 = _mm512_set1_epi32(-1);
	for (r = 0; r < 4; r++) {
		const size_t n = nj > 16 * r ? (nj - 16 * r < 16 ? nj - 16 * r : 16) : 0;
		const __mmask8 lo = (__mmask8)(n >= 8 ? 0xff : (1u << n) - 1);
		const __mmask8 hi = (__mmask8)(n >= 16 ? 0xff : n > 8 ? (1u << (n - 8)) - 1 : 0);
		__m256 a = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(lo, res + 16 * r));
		__m256 b = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(hi, res + 16 * r + 8));
		valid[r] = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
		S[r] = _mm512_insertf32x8(_mm512_castps256_ps512(a), b, 1);
		cnt[r] = _mm512_setzero_si512();
	}
	for (k0 = 0; k0 < K; k0 += B) {
		const size_t k1 = K - k0 < B ? K : k0 + B;
		const uint64_t sn = K + 2 * (k0 / B);
		for (r = 0; r < 4; r++)
			ch[0][r] = ch[1][r] = _mm512_setzero_ps();
		for (k = k0; k < k1; k++) {
			const __m512 av = _mm512_set1_ps((float)arow[k]);
			const float *b = bp + k * FPL__ACC_TILE;
			__m512 *c = ch[(k - k0) & 1];
			c[0] = eo_step(T, &P, av, b, c[0], &cnt[0], valid[0], k, 0);
			c[1] = eo_step(T, &P, av, b + 16, c[1], &cnt[1], valid[1], k, 16);
			c[2] = eo_step(T, &P, av, b + 32, c[2], &cnt[2], valid[2], k, 32);
			c[3] = eo_step(T, &P, av, b + 48, c[3], &cnt[3], valid[3], k, 48);
		}
		for (r = 0; r < 4; r++) {
			ch[0][r] = eo_add(T, &P, ch[0][r], ch[1][r], &cnt[r], valid[r], sn, 16 * r);
			S[r] = eo_add(T, &P, S[r], ch[0][r], &cnt[r], valid[r], sn + 1, 16 * r);
		}
	}
	for (r = 0; r < 4; r++) {
		double out[16];
		_mm512_storeu_pd(out, _mm512_cvtps_pd(_mm512_castps512_ps256(S[r])));
		_mm512_storeu_pd(out + 8, _mm512_cvtps_pd(_mm512_extractf32x8_ps(S[r], 1)));
		_mm512_storeu_si512(co, cnt[r]);
		for (l = 0; l < 16 && 16 * r + l < nj; l++) {
			res[16 * r + l] = out[l];
			if (co[l])
				T->fl[16 * r + l] |= FPL_FLAG_INEXACT;
			T->cnt[__builtin_ctz(FPL_FLAG_INEXACT)] += co[l];
		}
	}
}
#undef RN_
#undef RD_
#undef RU_
