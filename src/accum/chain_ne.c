/* SPDX-License-Identifier: MIT */
/*
 * chain_ne.c - the EXACT64 chains (chain_fast.c) in mode ne with the
 * rounding done in registers: per step, t = fma(a_k, b_kj, s_j) in
 * binary64 (exact: chain_fast.c's exactness condition, so the fma and
 * s + a*b are the same exact value) and t rounded to nearest-even into
 * acc: lane by lane by the fixed-point idiom of kernel_body.h (kb_pick,
 * ne), argued below; the AVX2 kernel (chain4) and the AVX-512 one
 * (x86/chain_ne_avx512.c) by an add-and-subtract of a magic constant,
 * argued there, with the same lanes kept (range test below) and the same
 * fallback.
 *
 * Why a lane's result and flags are fpl__fma_ix's.  With A = |t|'s
 * binary64 bits, s = 52 - m, mask = 2^s - 1, half = 2^(s-1) and kl = bit
 * s of A, Y = (A + half - 1 + kl) & ~mask is |t| rounded to nearest-even
 * at m+1 bits, a carry moving into the next binade (kernel_body.h argues
 * it).  That is the engine's rounding of t whenever 2^emin <= |t| and Y
 * <= bits(max): the normal range of acc, where neither tininess rule can
 * call the result tiny and nothing overflows; there the only flag is
 * inexact, raised iff Y != A.  Every other lane (zero, tiny, overflow,
 * inf, NaN: A < bits(2^emin), A >= bits(inf) or Y > bits(max)) is recomputed by
 * fpl__fma_ix from the step's original operands and its draw index, as
 * the reference does.  Mode ne takes no draws, so idx only matters for
 * those lanes.
 *
 * The lean kernels (J->lean: lean_chain below, lean4 here, and
 * fpl__acc_ne64_lean_avx512 in x86/chain_ne_avx512.c) keep every lane
 * and drop the range test, under two conditions: a static one
 * (chain_fast.c's lean_ok) and one per range of steps, checked before
 * the range runs.
 *  Static: mode ne, t exact (EXACT64), acc with subnormals (no FTZ, no
 *  DAZ), a signed zero (not fnuz), m <= 50, and q_a * q_b >= q_acc (the
 *  smallest quanta: 2^-18 >= 2^-24 for e4m3fn into fp16).  Then every
 *  product and every value of acc is a multiple of q_acc = 2^(emin-m),
 *  so is every t, and a t with |t| < 2^emin is a multiple of q_acc
 *  below 2^emin: a value of acc (a subnormal or 0), with at most m
 *  significant bits.  The reference returns it unchanged with no flag
 *  (underflow needs an inexact result, round_pack.c); the kernel's
 *  (t + C) - C rounds at m+1 significant bits relative to t's own
 *  exponent (the argument of x86/chain_ne_avx512.c holds for any t of at
 *  most 2^51 q: there q = 2^(e-m) with 2^e <= |t|), which leaves a value
 *  of at most m bits unchanged, and counts no inexact (y == t).  t = 0:
 *  C's bits are then cadd's, a normal binary64, and y = (0 + C) - C =
 *  +0, the reference's result unless both s and a*b are -0 (the exact
 *  zero sum in ne is +0 otherwise).  A running sum is -0 only after a
 *  step with t = -0, which needs s = -0: so a tile whose sums start with
 *  no -0 never has one, and lean_chain sends a tile with a -0 among its
 *  initial sums to the checked kernels (ne_range) whole.  No lane can be
 *  NaN or infinite while the range condition holds (below).  What is
 *  left is overflow.
 *  Per range: n steps k of the range, S = max |s| over the tile's lanes
 *  at its start, D = sum over the range of |a_k| * bmax_k, bmax_k = max
 *  over the panel's columns of |b_kj| (J->bmax, chain_fast.c; inf when
 *  one is a NaN).  With u = 2^-(m+1), a kept rounding gives |y| <= |t|
 *  (1 + u) (a subnormal y is exact), so by induction every step's
 *  |t_k| <= (S + D) (1 + u)^n <= (S + D) (1 + 2nu) when nu <= 1/2
 *  (e^x <= 1 + 2x for 0 <= x <= 1; the ranges have n <= 2^m steps,
 *  LEAN_CHUNK at most).  The range runs lean only when every |s| is
 *  below L (its bits below L's: a NaN fails) and (S + D) (1 + 2nu) (1 +
 *  2^-30) < L computed in binary64 (D's n products and sums, each
 *  rounded, err by less than (n+3) 2^-53 <= 2^-31 relative: the factor
 *  1 + 2^-30 covers them and the two products; an infinite or NaN a or
 *  b makes D inf or NaN and the test false).  Then every |t| < L: no
 *  step of the range overflows or meets an inf or NaN, and every lane
 *  is the reference's with inexact iff y != t.  A range that fails the
 *  test runs on ne_range (the checked kernels) from the same sums.
 *
 * lean2 (J->lean == 2, AVX2 only: chain_fast.c's lean2_ok) runs
 * sequential jobs whose sums are not exact by the static condition
 * EXACT64, such as bf16 x bf16 into fp16 (products from 2^-266 up), on
 * the lean rounding, with exactness, range and tininess checked on the
 * data.  Static: mode ne; every product a*b exact in binary64, its sum
 * with a value of acc below 2^1023 (products_exact64); products' and
 * acc's quanta at least 2^-1022 (so a nonzero t, a multiple of one of
 * them, is never a binary64 subnormal); acc with subnormals, no DAZ, a
 * signed zero, m <= 50, and 2^(emax+1) <= 2^53 q_acc (fp16: 2^16 <=
 * 2^29).  Per range of n steps (as the lean ranges; stride 1):
 *  Bound.  Bd = (S + D + n q_acc) (1 + 2nu) (1 + 2^-30), S and D as
 *  above.  Every step's rounding, kept or the engine's, gives |y| <=
 *  |t| (1 + u) + q_acc/2 (a normal y within a relative u; a subnormal
 *  y, rounded at the absolute quantum q_acc, within q_acc/2), so by
 *  induction |t_k| <= (S + D + k q_acc/2)(1 + u)^k < Bd (the factor
 *  1 + 2^-30 covering D's and Bd's rounding as above).  The range runs
 *  lean2 only when every |s| is below L and Bd < L: no step overflows
 *  or meets an inf or NaN (D is then finite).
 *  Exactness.  A value v != 0 of a format with m bits is a multiple of
 *  its quantum 2^(e-m), e = max(floor(log2 |v|), emin), and 2^(e-m) >
 *  |v| 2^-(m+1).  So a product a_k b_kj != 0 is a multiple of a power
 *  of two 2^r > g_k = |a_k| bmin_k 2^-(m_a+m_b+2), bmin_k = J->bmin's
 *  least nonzero |b| of the row (exact: a value of B), and s, a value
 *  of acc, a multiple of q_acc: t = s + a_k b_kj is an integer multiple
 *  of Q = min(q_acc, 2^r) (both powers of two) with |t| < Bd, exact in
 *  binary64 when Bd <= 2^53 Q: Bd < L <= 2^(emax+1) <= 2^53 q_acc
 *  (static), and Bd <= 2^53 g_k, tested as G = min over the range's k
 *  with a_k != 0 of |a_k| bmin_k (each product rounded down by at most
 *  a relative 2^-53) >= Bd 2^(m_a+m_b+2-53) (1 + 2^-30).  A zero
 *  product leaves t = s.  Then fma(a, b, s), one rounding of the exact
 *  s + a b, is that exact t, and so is lane()'s s + a*b.
 *  Rounding.  Exact t with 2^emin <= |t| < L: the lean kernels' (t + C)
 *  - C, the reference's value, inexact iff y != t.  t = +0 (fma's exact
 *  zero sum, the reference's sign): y = +0, exact.  t = -0 needs s and
 *  a b both -0; lean2_avx2's y is never -0 (argued there), so only the
 *  first step of a lane whose sum at the range's start is -0 can meet
 *  one (a -0 sum can arise here from the engine rounding a tiny
 *  negative t; a tile with one among its initial sums runs engine_range
 *  whole), and lean2_sub reruns every such lane as below.
 *  0 < |t| < 2^emin: t need not be a value of acc here (a product's
 *  quantum may be below q_acc), and lean2_avx2 takes C from t's own
 *  exponent, which rounds at a quantum below q_acc: every such step,
 *  exact or not, is watched for, and every lane of a group that met one
 *  is rerun over the whole range from the range's initial sum by lane()
 *  (t exact as just argued; its tiny, zero and overflow steps go to the
 *  engine), its kernel sums and counts dropped (after such a step a
 *  lane's kernel sums may be off acc's grid: finite, |y| <= |t| (1 + u)
 *  still, and unused).  A range that fails Bound or Exactness runs
 *  engine_range: each step of each lane by fpl__fma_ix, the reference's
 *  own step.
 */
#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NE64_X86 1
#endif

#include <fplab/kernels.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)

typedef struct ne_par {
	uint64_t s, mask, halfm1, min_bits, max_bits;
} ne_par;

static void ne_par_init(ne_par *q, const fpl_format *f)
{
	q->s = (uint64_t)(52 - f->m);
	q->mask = (1ull << q->s) - 1;
	q->halfm1 = (1ull << (q->s - 1)) - 1;
	q->min_bits = fpl__bits(f->min_normal);
	q->max_bits = fpl__bits(f->max);
}

/* The engine's step for lane jj (anything the formula does not cover). */
double fpl__acc_ne64_slow(fpl__acc_tile *T, double a, double b, double s, uint64_t idx, size_t jj)
{
	const fpl_accum_model *m = T->J->m;
	unsigned fl = 0;
	double r = fpl__fma_ix(&m->acc, a, b, s, m->acc_rnd, T->J->st, idx, &fl);
	fpl__acc_note(T, jj, fl);
	return r;
}

/* One lane by the formula; *inex counts an inexact step. */
static double lane(fpl__acc_tile *T, const ne_par *q, double a, double b, double s,
		   uint64_t idx, size_t jj, uint64_t *inex)
{
	double t = s + a * b;	/* exact (chain_fast.c) */
	uint64_t u = fpl__bits(t), sgn = u & FPL__SIGN_BIT, A = u ^ sgn;
	uint64_t Y = (A + q->halfm1 + ((A >> q->s) & 1)) & ~q->mask;

	if (A < q->min_bits || Y > q->max_bits)
		return fpl__acc_ne64_slow(T, a, b, s, idx, jj);
	*inex += Y != A;
	return fpl__from_bits(Y | sgn);
}

#ifdef NE64_X86
#define NE64_TARGET __attribute__((target("avx2,fma")))

/* The AVX2 kernel: lanes [0, n4) (n4 a multiple of 4) of the chains
 * [k0, k1), sixteen lanes (four registers) held in registers over all
 * the steps, then four at a time.  A lane's rounding is (t + C) - C with
 * C = 1.5 * 2^52 * q, q the quantum of acc at t (C's bits: t's exponent
 * field plus (52-m) << 52, fraction 2^51): x86/chain_ne_avx512.c argues
 * that this is t rounded to nearest-even in acc for every t with 2^emin
 * <= |t| and m <= 50 (plan() takes NE64 only with acc's m <= 50).  Kept
 * lanes: x = bits(|t|) - bits(2^emin) in [0, range], range = bits(L) - 1
 * - bits(2^emin) with L the least binary64 that rounds above max (that
 * file's L); signed 64-bit compares suffice (both sides below 2^63).
 * cnt[jj] counts lane jj's inexact steps as -1 each (comparison masks),
 * only for kept lanes; the others are recomputed by fpl__acc_ne64_slow
 * with the step's operands and draw index, which notes their flags. */
typedef struct ne4_par {
	__m256i sign, expm, cadd, minv, range, zero;
} ne4_par;

/* One register of one step: y (the kept lanes' rounding) and bad (the
 * lanes to recompute); cv counts the kept lanes' inexact steps. */
NE64_TARGET static inline __m256d ne4_calc(const ne4_par *P, __m256d av, const double *b,
					   __m256d sv, __m256i *cv, __m256i *bad)
{
	__m256d t = _mm256_fmadd_pd(av, _mm256_loadu_pd(b), sv);
	__m256i u = _mm256_castpd_si256(t);
	__m256d c = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_and_si256(u, P->expm), P->cadd));
	__m256d y = _mm256_sub_pd(_mm256_add_pd(t, c), c);
	__m256i x = _mm256_sub_epi64(_mm256_andnot_si256(P->sign, u), P->minv);
	__m256i neq = _mm256_castpd_si256(_mm256_cmp_pd(y, t, _CMP_NEQ_UQ));

	*bad = _mm256_or_si256(_mm256_cmpgt_epi64(P->zero, x), _mm256_cmpgt_epi64(x, P->range));
	*cv = _mm256_add_epi64(*cv, _mm256_andnot_si256(*bad, neq));
	return y;
}

/* The bad lanes of one register (tile lane base, step k) recomputed. */
NE64_TARGET static __m256d ne4_fix(fpl__acc_tile *T, double a, const double *b, __m256d sv,
				   __m256d y, __m256i bad, size_t k, size_t base)
{
	double so[4], yo[4];
	int lanes = _mm256_movemask_pd(_mm256_castsi256_pd(bad)), l;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);

	_mm256_storeu_pd(so, sv);
	_mm256_storeu_pd(yo, y);
	for (l = 0; l < 4; l++)
		if (lanes >> l & 1)
			yo[l] = fpl__acc_ne64_slow(T, a, b[l], so[l], idx0 + (uint64_t)l,
						   base + (size_t)l);
	return _mm256_loadu_pd(yo);
}

NE64_TARGET static inline __m256d ne4_step(fpl__acc_tile *T, const ne4_par *P, __m256d av,
					   double a, const double *b, __m256d sv, __m256i *cv,
					   size_t k, size_t base)
{
	__m256i bad;
	__m256d y = ne4_calc(P, av, b, sv, cv, &bad);

	if (!_mm256_testz_si256(bad, bad))
		y = ne4_fix(T, a, b, sv, y, bad, k, base);
	return y;
}

NE64_TARGET static void chain4(fpl__acc_tile *T, const ne_par *q, size_t k0, size_t k1,
			       size_t ks, double *s, size_t n4, int64_t *cnt)
{
	const fpl__acc_job *J = T->J;
	const double *arow = J->A + T->i * J->K, *bcol = J->B + T->j0;
	const uint64_t half = q->halfm1 + 1;
	const uint64_t lim = q->max_bits + half + 1 - ((q->max_bits >> q->s) & 1);
	ne4_par P;
	size_t j = 0, k;

	P.sign = _mm256_set1_epi64x((long long)FPL__SIGN_BIT);
	P.expm = _mm256_set1_epi64x(0x7ff0000000000000ll);
	P.cadd = _mm256_set1_epi64x((long long)((q->s << 52) | 0x0008000000000000ull));
	P.minv = _mm256_set1_epi64x((long long)q->min_bits);
	P.range = _mm256_set1_epi64x((long long)(lim - 1 - q->min_bits));
	P.zero = _mm256_setzero_si256();
	for (; n4 - j >= 16; j += 16) {
		__m256d s0 = _mm256_loadu_pd(s + j), s1 = _mm256_loadu_pd(s + j + 4);
		__m256d s2 = _mm256_loadu_pd(s + j + 8), s3 = _mm256_loadu_pd(s + j + 12);
		__m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
		for (k = k0; k < k1; k += ks) {
			const double a = arow[k], *b = bcol + k * J->N + j;
			const __m256d av = _mm256_set1_pd(a);
			s0 = ne4_step(T, &P, av, a, b, s0, &c0, k, j);
			s1 = ne4_step(T, &P, av, a, b + 4, s1, &c1, k, j + 4);
			s2 = ne4_step(T, &P, av, a, b + 8, s2, &c2, k, j + 8);
			s3 = ne4_step(T, &P, av, a, b + 12, s3, &c3, k, j + 12);
		}
		_mm256_storeu_pd(s + j, s0);
		_mm256_storeu_pd(s + j + 4, s1);
		_mm256_storeu_pd(s + j + 8, s2);
		_mm256_storeu_pd(s + j + 12, s3);
		_mm256_storeu_si256((__m256i *)(cnt + j), c0);
		_mm256_storeu_si256((__m256i *)(cnt + j + 4), c1);
		_mm256_storeu_si256((__m256i *)(cnt + j + 8), c2);
		_mm256_storeu_si256((__m256i *)(cnt + j + 12), c3);
	}
	for (; j < n4; j += 4) {
		__m256d s0 = _mm256_loadu_pd(s + j);
		__m256i c0 = _mm256_setzero_si256();
		for (k = k0; k < k1; k += ks) {
			const double a = arow[k];
			s0 = ne4_step(T, &P, _mm256_set1_pd(a), a, bcol + k * J->N + j, s0, &c0, k, j);
		}
		_mm256_storeu_pd(s + j, s0);
		_mm256_storeu_si256((__m256i *)(cnt + j), c0);
	}
}

/* The AVX2 lean kernel (the lean argument below): the 64 chains of s[]
 * over k = k0, k0+ks, ... below k1, b_kj = bp[k*64 + j], 32 lanes (eight
 * registers) at a time; cnt[j] += lane j's inexact steps.  A step's
 * rounding is chain4's (t + C) - C, every lane kept.  Its exact steps
 * are counted two registers to a counter: -1 per step in the low 32
 * bits for the first (the compare's all-ones), +2^32 for the second (the
 * all-ones shifted left by 32: -2^32); a range has fewer than 2^31 steps
 * (LEAN_CHUNK), so neither half carries into the other. */
#define LEAN4(sv, bb)                                                                          \
	do {                                                                                   \
		__m256d t_ = _mm256_fmadd_pd(av, _mm256_loadu_pd(bb), (sv));                   \
		__m256d c_ = _mm256_castsi256_pd(                                              \
			_mm256_add_epi64(_mm256_and_si256(_mm256_castpd_si256(t_), expm), cadd)); \
		(sv) = _mm256_sub_pd(_mm256_add_pd(t_, c_), c_);                               \
		eq_ = _mm256_cmpeq_epi64(_mm256_castpd_si256(sv), _mm256_castpd_si256(t_));     \
	} while (0)
#define LEAN4X2(sa, sb, cv, bb)                                                                \
	do {                                                                                   \
		__m256i eq_, eqa_;                                                             \
		LEAN4(sa, bb);                                                                 \
		eqa_ = eq_;                                                                    \
		LEAN4(sb, (bb) + 4);                                                           \
		(cv) = _mm256_sub_epi64(_mm256_add_epi64((cv), eqa_), _mm256_slli_epi64(eq_, 32)); \
	} while (0)

NE64_TARGET static void lean4(const double *arow, const double *bp, size_t k0, size_t k1,
			      size_t ks, int m, double *s, uint64_t *cnt)
{
	const __m256i expm = _mm256_set1_epi64x(0x7ff0000000000000ll);
	const __m256i cadd = _mm256_set1_epi64x((long long)(((uint64_t)(52 - m) << 52)
							    | 0x0008000000000000ull));
	const uint64_t n = (k1 - k0 + ks - 1) / ks;
	size_t j, k;

	for (j = 0; j < NT; j += 32) {
		__m256d s0 = _mm256_loadu_pd(s + j), s1 = _mm256_loadu_pd(s + j + 4);
		__m256d s2 = _mm256_loadu_pd(s + j + 8), s3 = _mm256_loadu_pd(s + j + 12);
		__m256d s4 = _mm256_loadu_pd(s + j + 16), s5 = _mm256_loadu_pd(s + j + 20);
		__m256d s6 = _mm256_loadu_pd(s + j + 24), s7 = _mm256_loadu_pd(s + j + 28);
		__m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0;
		uint64_t eo[16];
		int l;
		for (k = k0; k < k1; k += ks) {
			const __m256d av = _mm256_set1_pd(arow[k]);
			const double *b = bp + k * NT + j;
			LEAN4X2(s0, s1, e0, b);
			LEAN4X2(s2, s3, e1, b + 8);
			LEAN4X2(s4, s5, e2, b + 16);
			LEAN4X2(s6, s7, e3, b + 24);
		}
		_mm256_storeu_pd(s + j, s0);
		_mm256_storeu_pd(s + j + 4, s1);
		_mm256_storeu_pd(s + j + 8, s2);
		_mm256_storeu_pd(s + j + 12, s3);
		_mm256_storeu_pd(s + j + 16, s4);
		_mm256_storeu_pd(s + j + 20, s5);
		_mm256_storeu_pd(s + j + 24, s6);
		_mm256_storeu_pd(s + j + 28, s7);
		_mm256_storeu_si256((__m256i *)eo, e0);
		_mm256_storeu_si256((__m256i *)(eo + 4), e1);
		_mm256_storeu_si256((__m256i *)(eo + 8), e2);
		_mm256_storeu_si256((__m256i *)(eo + 12), e3);
		/* counter lane l: c = eb * 2^32 - ea (mod 2^64), ea and eb the
		 * exact steps of lanes 8(l/4) + l%4 and that + 4 */
		for (l = 0; l < 16; l++) {
			const size_t base = j + (size_t)(l / 4) * 8 + (size_t)(l % 4);
			const uint64_t ea = (uint32_t)(0u - (uint32_t)eo[l]);
			cnt[base] += n - ea;
			cnt[base + 4] += n - ((eo[l] + ea) >> 32);
		}
	}
}
#undef LEAN4X2
#undef LEAN4

/* lean2 (J->lean == 2, argued above): lean4's rounding over the 64
 * chains of s[] for k in [k0, k1) (stride 1), cnt[j] += lane j's
 * inexact steps, and a watch for tiny sums.  A step's C is lean4's,
 * formed as c K: c = bits(t) & expm, as a binary64 2^e for t of
 * exponent e (t is never a binary64 subnormal: the static condition)
 * and +0 for t = +-0, and K = 1.5 * 2^(52-m), so c K = 1.5 * 2^52 *
 * 2^(e-m) exactly, lean4's C; y = fnmadd(c, K, fma(c, K, t)) rounds t +
 * C and then that minus C once each, lean4's (t + C) - C bit for bit,
 * in two operations.  y is never -0: for t = +-0, c = 0 and y = (t + 0)
 * - 0 = +0 in nearest-even; else the sum is positive (C > 2 |t|) and an
 * exact zero difference is +0.  The eight registers of 32 chains go by
 * pairs (lanes j+8p .. j+8p+3 and the next four): eq, all ones for a
 * lane with y == t, of both registers folded by one vshufps (their
 * upper 32-bit halves: dword d of the result is lane (d & 1) + 2 (d >>
 * 2) of the first register when d & 2 == 0, of the second otherwise)
 * into one register of eight 32-bit counters of exact steps (n <=
 * LEAN_CHUNK < 2^32), and the same fold of c (upper halves: 2^20 e, e
 * t's exponent field, 0 for t = +-0) minus 1 (mod 2^32) into a running
 * unsigned minimum, m0 over pairs 0 and 1 and m1 over pairs 2 and 3:
 * t = +-0 gives 0xffffffff, so a minimum below 2^20 e_min - 1 (tinyb -
 * 1, e_min the field of 2^emin) in dword d means a step with 0 < |t| <
 * 2^emin in that lane of one of the two pairs, exact or not (C from t's
 * own exponent rounds it at a quantum below q_acc): bad[] is set for
 * both lanes of that position.  Per pair 5 vector operations besides
 * the 5 per register of the rounding and eq.  Registers (AVX2 has 16):
 * the eight sums, m0, m1, a_k's broadcast and K stay in registers; expm
 * and the all-ones are read from memory at each use (cst[], volatile:
 * with them in registers gcc spilled two of the sums, and their store
 * and reload lengthened every step's chain), and gcc keeps the four
 * counters on the stack (a load and a store per pair and step, off the
 * sums' chains). */
#define LEAN2(sv, bb, e_, q_)                                                                  \
	do {                                                                                   \
		__m256d t_ = _mm256_fmadd_pd(av, _mm256_loadu_pd(bb), (sv));                   \
		__m256d c_;                                                                    \
		c_ = _mm256_and_pd(t_, cst[0]);                                                \
		(e_) = _mm256_castpd_si256(c_);                                                \
		(sv) = _mm256_fnmadd_pd(c_, kq, _mm256_fmadd_pd(c_, kq, t_));                  \
		(q_) = _mm256_castsi256_ps(                                                    \
			_mm256_cmpeq_epi64(_mm256_castpd_si256(sv), _mm256_castpd_si256(t_))); \
	} while (0)
#define LEAN2X2(sa, sb, cv, bb, mn)                                                            \
	do {                                                                                   \
		__m256i ea_, eb_, x_, f_;                                                      \
		__m256 qa_, qb_;                                                               \
		LEAN2(sa, bb, ea_, qa_);                                                       \
		LEAN2(sb, (bb) + 4, eb_, qb_);                                                 \
		x_ = _mm256_castps_si256(_mm256_shuffle_ps(qa_, qb_, 0xdd));                   \
		(cv) = _mm256_sub_epi32((cv), x_);                                             \
		f_ = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(ea_),           \
							  _mm256_castsi256_ps(eb_), 0xdd));    \
		f_ = _mm256_add_epi32(f_, _mm256_castpd_si256(cst[1]));                        \
		(mn) = _mm256_min_epu32((mn), f_);                                             \
	} while (0)

NE64_TARGET static void lean2_avx2(const double *arow, const double *bp, size_t k0, size_t k1,
				   int m, uint32_t tinyb, double *s, uint64_t *cnt,
				   unsigned char *bad)
{
	const __m256d kq = _mm256_set1_pd(ldexp(1.5, 52 - m));
	volatile __m256d cst[2];	/* expm, all-ones: read at each use */
	const uint64_t n = k1 - k0;
	size_t j, k;

	cst[0] = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff0000000000000ll));
	cst[1] = _mm256_castsi256_pd(_mm256_set1_epi32(-1));
	for (j = 0; j < NT; j += 32) {
		__m256d s0 = _mm256_loadu_pd(s + j), s1 = _mm256_loadu_pd(s + j + 4);
		__m256d s2 = _mm256_loadu_pd(s + j + 8), s3 = _mm256_loadu_pd(s + j + 12);
		__m256d s4 = _mm256_loadu_pd(s + j + 16), s5 = _mm256_loadu_pd(s + j + 20);
		__m256d s6 = _mm256_loadu_pd(s + j + 24), s7 = _mm256_loadu_pd(s + j + 28);
		__m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0;
		__m256i m0 = _mm256_set1_epi64x(-1), m1 = m0;
		uint32_t eo[32], mo[16];
		int l;
		for (k = k0; k < k1; k++) {
			const __m256d av = _mm256_set1_pd(arow[k]);
			const double *b = bp + k * NT + j;
			LEAN2X2(s0, s1, e0, b, m0);
			LEAN2X2(s2, s3, e1, b + 8, m0);
			LEAN2X2(s4, s5, e2, b + 16, m1);
			LEAN2X2(s6, s7, e3, b + 24, m1);
		}
		_mm256_storeu_pd(s + j, s0);
		_mm256_storeu_pd(s + j + 4, s1);
		_mm256_storeu_pd(s + j + 8, s2);
		_mm256_storeu_pd(s + j + 12, s3);
		_mm256_storeu_pd(s + j + 16, s4);
		_mm256_storeu_pd(s + j + 20, s5);
		_mm256_storeu_pd(s + j + 24, s6);
		_mm256_storeu_pd(s + j + 28, s7);
		_mm256_storeu_si256((__m256i *)eo, e0);
		_mm256_storeu_si256((__m256i *)(eo + 8), e1);
		_mm256_storeu_si256((__m256i *)(eo + 16), e2);
		_mm256_storeu_si256((__m256i *)(eo + 24), e3);
		_mm256_storeu_si256((__m256i *)mo, m0);
		_mm256_storeu_si256((__m256i *)(mo + 8), m1);
		/* counter dword 8p + d: the exact steps of lane 8p + lp(d),
		 * lp(d) = 4 ((d >> 1) & 1) + (d & 1) + 2 (d >> 2) */
		for (l = 0; l < 32; l++) {
			const int d = l & 7;
			const size_t lp = (size_t)(4 * ((d >> 1) & 1) + (d & 1) + 2 * (d >> 2));
			cnt[j + (size_t)(l - d) + lp] += n - eo[l];
		}
		for (l = 0; l < 16; l++)
			if (mo[l] < tinyb - 1) {
				const int d = l & 7;
				const size_t lp = (size_t)(4 * ((d >> 1) & 1) + (d & 1) + 2 * (d >> 2));
				const size_t r = (size_t)(l >> 3) * 16;
				bad[j + r + lp] = bad[j + r + 8 + lp] = 1;
			}
	}
}
#undef LEAN2X2
#undef LEAN2
#endif

uint64_t fpl__acc_ne64_avx512_runs;

uint64_t fpl__acc_ne64_lean_runs;

/* The chains over k = k0, k0+ks, ... below k1 of the tile in s[], step
 * numbers k, every lane checked (the kernels above and x86/). */
static void ne_range(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s)
{
	const fpl__acc_job *J = T->J;
	const size_t nj = T->nj;
	int64_t cnt[NT];
	uint64_t inex[NT], total = 0;
	ne_par q;
	size_t k, jj, n4 = 0;

	ne_par_init(&q, &J->m->acc);
	memset(cnt, 0, sizeof cnt);
	memset(inex, 0, sizeof inex);
#ifdef FPL_HAVE_X86_KERNELS
	if (J->simd >= 2) {
		__atomic_fetch_add(&fpl__acc_ne64_avx512_runs, 1, __ATOMIC_RELAXED);
		fpl__acc_ne64_avx512(T, k0, k1, ks, s, inex);
		for (jj = 0; jj < nj; jj++) {
			if (inex[jj])
				T->fl[jj] |= FPL_FLAG_INEXACT;
			total += inex[jj];
		}
		T->cnt[INEX_INDEX] += total;
		return;
	}
#endif
#ifdef NE64_X86
	if (J->simd) {
		n4 = nj & ~(size_t)3;
		if (n4)
			chain4(T, &q, k0, k1, ks, s, n4, cnt);
	}
#endif
	for (k = k0; k < k1; k += ks) {
		const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0;
		const uint64_t idx0 = fpl__acc_idx(T, k, 0);
		for (jj = n4; jj < nj; jj++)
			s[jj] = lane(T, &q, a, b[jj], s[jj], idx0 + jj, jj, &inex[jj]);
	}
	for (jj = 0; jj < nj; jj++) {
		uint64_t n = jj < n4 ? (uint64_t)-cnt[jj] : inex[jj];
		if (n)
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += n;
	}
	T->cnt[INEX_INDEX] += total;
}

/* The lean chains (J->lean): ranges of at most LEAN_CHUNK steps, each on
 * a lean kernel when the bound of the header comment holds, else on
 * ne_range. */
#define LEAN_CHUNK 1024

static void lean_chain(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *f = &J->m->acc;
	const size_t nj = T->nj, K = J->K;
	const double *arow = J->A + T->i * K;
	const double *bp = J->Bp + T->j0 / NT * K * NT, *bmax = J->bmax + T->j0 / NT * K;
	const uint64_t maxb = fpl__bits(f->max);
	/* L: the least binary64 that rounds above max (x86/chain_ne_avx512.c) */
	const uint64_t Lb = maxb + (1ull << (51 - f->m)) + 1 - ((maxb >> (52 - f->m)) & 1);
	const double L = fpl__from_bits(Lb), u = ldexp(1.0, -(f->m + 1));
	/* steps per range: n u <= 1/2 for the bound's 1 + 2 n u */
	const size_t chunk = f->m < 10 ? (size_t)1 << f->m : LEAN_CHUNK;
	double pad[NT] __attribute__((aligned(64)));
	double *sv = nj == NT ? s : pad;
	uint64_t cnt[NT] = { 0 }, total = 0;
	size_t jj, c0, c1, k;

	for (jj = 0; jj < nj; jj++)
		if (fpl__bits(s[jj]) == FPL__SIGN_BIT) {	/* a -0: not lean */
			ne_range(T, k0, k1, ks, s);
			return;
		}
	if (sv != s) {
		memcpy(sv, s, nj * sizeof *s);
		for (jj = nj; jj < NT; jj++)
			sv[jj] = 0.0;
	}
	for (c0 = k0; c0 < k1; c0 = c1) {
		const size_t n = (k1 - c0 + ks - 1) / ks < chunk ? (k1 - c0 + ks - 1) / ks : chunk;
		double D = 0, D1 = 0, D2 = 0, D3 = 0;
		uint64_t A = 0;
		c1 = c0 + n * ks < k1 ? c0 + n * ks : k1;
		/* S = max |s| by the bits (a NaN's bits lie above L's) */
		for (jj = 0; jj < nj; jj++) {
			uint64_t x = fpl__bits(sv[jj]) & ~FPL__SIGN_BIT;
			A = x > A ? x : A;
		}
		for (k = c0; k + 3 * ks < c1; k += 4 * ks) {
			D += fabs(arow[k]) * bmax[k];
			D1 += fabs(arow[k + ks]) * bmax[k + ks];
			D2 += fabs(arow[k + 2 * ks]) * bmax[k + 2 * ks];
			D3 += fabs(arow[k + 3 * ks]) * bmax[k + 3 * ks];
		}
		for (; k < c1; k += ks)
			D += fabs(arow[k]) * bmax[k];
		D += (D1 + D2) + D3;
		if (A < Lb && (fpl__from_bits(A) + D) * (1 + 2 * (double)n * u) * (1 + 0x1p-30) < L) {
			__atomic_fetch_add(&fpl__acc_ne64_lean_runs, 1, __ATOMIC_RELAXED);
#ifdef FPL_HAVE_X86_KERNELS
			if (J->simd >= 2) {
				fpl__acc_ne64_lean_avx512(arow, bp, c0, c1, ks, f->m, sv, cnt);
				continue;
			}
#endif
#ifdef NE64_X86
			lean4(arow, bp, c0, c1, ks, f->m, sv, cnt);
			continue;
#endif
		}
		if (sv != s)
			memcpy(s, sv, nj * sizeof *s);
		ne_range(T, c0, c1, ks, s);
		if (sv != s)
			memcpy(sv, s, nj * sizeof *s);
	}
	if (sv != s)
		memcpy(s, sv, nj * sizeof *s);
	for (jj = 0; jj < nj; jj++) {
		if (cnt[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += cnt[jj];
	}
	T->cnt[INEX_INDEX] += total;
}

#ifdef NE64_X86
/* Every step of [k0, k1) of every lane by the engine (lean2's ranges
 * whose bound fails, tiles with a -0 among their sums). */
static void engine_range(fpl__acc_tile *T, size_t k0, size_t k1, double *s)
{
	const fpl__acc_job *J = T->J;
	size_t k, jj;

	for (k = k0; k < k1; k++) {
		const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0;
		const uint64_t idx0 = fpl__acc_idx(T, k, 0);
		for (jj = 0; jj < T->nj; jj++)
			s[jj] = fpl__acc_ne64_slow(T, a, b[jj], s[jj], idx0 + jj, jj);
	}
}

uint64_t fpl__acc_ne64_lean2_runs, fpl__acc_ne64_lean2_reruns;

/* lean2's steps [c0, c1) of the tile in sv[] (all NT lanes), each
 * exact and below L (the header comment's lean2 paragraph): the kernel,
 * then the lanes of a group that met a tiny sum and those whose sum at
 * c0 is -0 rerun by lane() from their sums at c0, step by step over all
 * of them (their chains overlap); cnt[] += the inexact steps. */
static void lean2_sub(fpl__acc_tile *T, const ne_par *q, const double *arow, const double *bp,
		      size_t c0, size_t c1, uint32_t tinyb, double *sv, uint64_t *cnt)
{
	double s0[NT];
	uint64_t rc[NT] = { 0 };
	unsigned char bad[NT] = { 0 };
	size_t jj, k, i, nb = 0, list[NT];

	memcpy(s0, sv, sizeof s0);
	lean2_avx2(arow, bp, c0, c1, T->J->m->acc.m, tinyb, sv, rc, bad);
	for (jj = 0; jj < T->nj; jj++) {
		if (!bad[jj] && fpl__bits(s0[jj]) != FPL__SIGN_BIT) {
			cnt[jj] += rc[jj];
			continue;
		}
		sv[jj] = s0[jj];
		list[nb++] = jj;
	}
	if (!nb)
		return;
	__atomic_fetch_add(&fpl__acc_ne64_lean2_reruns, nb, __ATOMIC_RELAXED);
	/* step by step over the rerun lanes: their chains overlap */
	for (k = c0; k < c1; k++)
		for (i = 0; i < nb; i++) {
			jj = list[i];
			sv[jj] = lane(T, q, arow[k], bp[k * NT + jj], sv[jj], fpl__acc_idx(T, k, jj), jj,
				      &cnt[jj]);
		}
}

/* lean2's range sums (the header comment's lean2 paragraph) over steps
 * [c0, c1): *D = the sum of |a_k| bmax_k (each product and sum rounded:
 * the bound's 1 + 2^-30 covers any order) and *G = the least |a_k|
 * bmin_k over the k with a_k != 0 (a NaN product leaves it unchanged:
 * min_pd returns its second operand then), INFINITY when none. */
NE64_TARGET static void lean2_dg(const double *arow, const double *bmax, const double *bmin,
				 size_t c0, size_t c1, double *Dp, double *Gp)
{
	const __m256d sign = _mm256_set1_pd(-0.0), zero = _mm256_setzero_pd();
	const __m256d inf = _mm256_set1_pd(INFINITY);
	__m256d d4 = zero, d4b = zero, g4 = inf;
	double d[4], g[4], D, G;
	size_t k = c0;

	for (; k + 8 <= c1; k += 8) {
		const __m256d x = _mm256_andnot_pd(sign, _mm256_loadu_pd(arow + k));
		const __m256d y = _mm256_andnot_pd(sign, _mm256_loadu_pd(arow + k + 4));
		const __m256d gx = _mm256_mul_pd(x, _mm256_loadu_pd(bmin + k));
		const __m256d gy = _mm256_mul_pd(y, _mm256_loadu_pd(bmin + k + 4));
		d4 = _mm256_add_pd(d4, _mm256_mul_pd(x, _mm256_loadu_pd(bmax + k)));
		d4b = _mm256_add_pd(d4b, _mm256_mul_pd(y, _mm256_loadu_pd(bmax + k + 4)));
		g4 = _mm256_min_pd(_mm256_blendv_pd(inf, gx, _mm256_cmp_pd(x, zero, _CMP_NEQ_UQ)), g4);
		g4 = _mm256_min_pd(_mm256_blendv_pd(inf, gy, _mm256_cmp_pd(y, zero, _CMP_NEQ_UQ)), g4);
	}
	_mm256_storeu_pd(d, _mm256_add_pd(d4, d4b));
	_mm256_storeu_pd(g, g4);
	D = (d[0] + d[1]) + (d[2] + d[3]);
	G = g[0] < g[1] ? g[0] : g[1];
	G = g[2] < G ? g[2] : G;
	G = g[3] < G ? g[3] : G;
	for (; k < c1; k++) {
		const double x0 = fabs(arow[k]), g0 = x0 * bmin[k];
		D += x0 * bmax[k];
		G = x0 != 0 && g0 < G ? g0 : G;
	}
	*Dp = D;
	*Gp = G;
}

uint64_t fpl__acc_ne64_lean2_weak;

/* One weak step k of lean2 (a product's quantum may be too small for
 * the range's exactness bound) for every lane of sv[]: t = s + p in
 * binary64 with TwoSum's error e (exact: p = a*b is exact and |s + p| <
 * 2^1023, products_exact64); e == 0 makes t exact and the lane lane()'s
 * (the formula, or the engine for tiny, zero and overflowing t), else
 * the engine's step. */
static void weak_step(fpl__acc_tile *T, const ne_par *q, double a, const double *b, size_t k,
		      double *sv, uint64_t *cnt)
{
	size_t jj;

	__atomic_fetch_add(&fpl__acc_ne64_lean2_weak, 1, __ATOMIC_RELAXED);
	for (jj = 0; jj < T->nj; jj++) {
		const double s = sv[jj], p = a * b[jj], t = s + p, bb = t - s;
		const double e = (s - (t - bb)) + (p - bb);
		const uint64_t idx = fpl__acc_idx(T, k, jj);
		sv[jj] = e == 0 ? lane(T, q, a, b[jj], s, idx, jj, &cnt[jj])
			 : fpl__acc_ne64_slow(T, a, b[jj], s, idx, jj);
	}
}

/* lean2: sequential chains (stride 1) by ranges of at most chunk steps,
 * each on lean2_avx2 when the bound of the header comment's lean2
 * paragraph holds, else on engine_range; lanes that met a tiny sum
 * rerun the range by lane() from the range's start. */
static void lean2_chain(fpl__acc_tile *T, size_t k0, size_t k1, double *s)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *f = &J->m->acc;
	const size_t nj = T->nj, K = J->K;
	const double *arow = J->A + T->i * K;
	const double *bp = J->Bp + T->j0 / NT * K * NT, *bmax = J->bmax + T->j0 / NT * K;
	const double *bmin = J->bmin + T->j0 / NT * K;
	const uint64_t maxb = fpl__bits(f->max);
	const uint64_t Lb = maxb + (1ull << (51 - f->m)) + 1 - ((maxb >> (52 - f->m)) & 1);
	const double L = fpl__from_bits(Lb), u = ldexp(1.0, -(f->m + 1));
	const double qacc = ldexp(1.0, f->emin - f->m);
	const double xs = ldexp(1.0, J->m->a.m + J->m->b.m + 2 - 53) * (1 + 0x1p-30);
	const size_t chunk = f->m < 10 ? (size_t)1 << f->m : LEAN_CHUNK;
	const uint32_t tinyb = (uint32_t)(fpl__bits(f->min_normal) >> 32);
	double pad[NT] __attribute__((aligned(64)));
	double *sv = nj == NT ? s : pad;
	uint64_t cnt[NT] = { 0 }, total = 0;
	ne_par q;
	size_t jj, c0, c1;

	ne_par_init(&q, f);
	for (jj = 0; jj < nj; jj++)
		if (fpl__bits(s[jj]) == FPL__SIGN_BIT) {	/* a -0: not lean */
			engine_range(T, k0, k1, s);
			return;
		}
	if (sv != s) {
		memcpy(sv, s, nj * sizeof *s);
		for (jj = nj; jj < NT; jj++)
			sv[jj] = 0.0;
	}
	for (c0 = k0; c0 < k1; c0 = c1) {
		const size_t n = k1 - c0 < chunk ? k1 - c0 : chunk;
		double D, G, Bd;
		uint64_t A = 0;
		c1 = c0 + n;
		for (jj = 0; jj < nj; jj++) {
			uint64_t x = fpl__bits(sv[jj]) & ~FPL__SIGN_BIT;
			A = x > A ? x : A;
		}
		lean2_dg(arow, bmax, bmin, c0, c1, &D, &G);
		Bd = (fpl__from_bits(A) + D + (double)n * qacc) * (1 + 2 * (double)n * u)
		     * (1 + 0x1p-30);
		if (A < Lb && Bd < L) {
			const double gth = Bd * xs;
			size_t x0 = c0, w;
			__atomic_fetch_add(&fpl__acc_ne64_lean2_runs, 1, __ATOMIC_RELAXED);
			if (G >= gth) {
				lean2_sub(T, &q, arow, bp, c0, c1, tinyb, sv, cnt);
				continue;
			}
			/* weak steps (|a_k| bmin_k below the threshold) one by
			 * one, the lean kernel between them */
			for (w = c0; w < c1; w++) {
				if (arow[w] == 0 || fabs(arow[w]) * bmin[w] >= gth)
					continue;
				if (w > x0)
					lean2_sub(T, &q, arow, bp, x0, w, tinyb, sv, cnt);
				weak_step(T, &q, arow[w], bp + w * NT, w, sv, cnt);
				x0 = w + 1;
			}
			if (c1 > x0)
				lean2_sub(T, &q, arow, bp, x0, c1, tinyb, sv, cnt);
			continue;
		}
		if (sv != s)
			memcpy(s, sv, nj * sizeof *s);
		engine_range(T, c0, c1, s);
		if (sv != s)
			memcpy(sv, s, nj * sizeof *s);
	}
	if (sv != s)
		memcpy(s, sv, nj * sizeof *s);
	for (jj = 0; jj < nj; jj++) {
		if (cnt[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += cnt[jj];
	}
	T->cnt[INEX_INDEX] += total;
}
#endif

/* The chains over k = k0, k0+ks, ... below k1 of the tile in s[], step
 * numbers k. */
void fpl__acc_ne64_chain(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s)
{
#ifdef NE64_X86
	if (T->J->lean == 2) {
		lean2_chain(T, k0, k1, s);
		return;
	}
#endif
	if (T->J->lean)
		lean_chain(T, k0, k1, ks, s);
	else
		ne_range(T, k0, k1, ks, s);
}

#ifdef NE64_X86
/*
 * The evenodd tile in binary32 on AVX2 (J->eo32 == 2, chain_fast.c's
 * eo32_ok: as x86/chain_ne_avx512.c's kernel, whose argument this
 * follows, and also every product of a value of A's format and one of
 * B's exact in binary32 when normal: m_a + m_b + 2 <= 24).  AVX2 has no
 * embedded rounding, so a step is p = a*b and t = s + p in the default
 * mode (nearest-even, MXCSR untouched) and its exactness comes from
 * Knuth's TwoSum: bb = t - s, e1 = s - (t - bb), e2' = bb - p, all exact
 * and e1 - e2' = (s + p) - t exactly when no operation overflows, so the
 * step is exact iff e1 == e2'.  Kept lanes: 2^-126 < |t| < 2^126 and
 * 2^-126 < |p| < 2^126.  Then p, a product of at most 24 significant
 * bits in the normal range, is the exact a*b, and t = RN(s + a*b): the
 * reference's result (x86/chain_ne_avx512.c's argument: not tiny, no
 * overflow); and no step of TwoSum overflows: |s| <= |t| + |p| + ulp(t)
 * < 2^127, bb and t - bb are within ulp(t) of p and s, the rest smaller
 * (an overflowed bb would give e1 = e2' = inf and a false "exact").
 * Tested on the magnitudes' bits as signed 32-bit integers (all below
 * 2^31): the smaller above bits(2^-126), the larger not above bits(2^126)
 * - 1.  The additions even + odd and S + u are the same with p the
 * second operand, a value of acc (its lower bound not tested: 0 is fine).  Other lanes of the tile go to the
 * reference's step (fpl__acc_ne64_slow, fpl__add_ix); lanes past its end
 * are never kept nor fixed.  Sixteen lanes (two registers per chain) at
 * a time over all of K.
 */
typedef struct eo8_par {
	__m256i absm, minb, maxb;
} eo8_par;

/* t = x + y and the kept (ok) and inexact masks of one register: |t|
 * and yabs (|y|'s bits) below 2^126, |t| and ylo above 2^-126. */
NE64_TARGET static inline __m256 eo8_sum(const eo8_par *P, __m256 x, __m256 y, __m256i yabs,
					 __m256i ylo, __m256i valid, __m256i *cv, __m256i *bad)
{
	const __m256 t = _mm256_add_ps(x, y);
	const __m256 bb = _mm256_sub_ps(t, x);
	const __m256 e1 = _mm256_sub_ps(x, _mm256_sub_ps(t, bb));
	const __m256 e2 = _mm256_sub_ps(bb, y);
	const __m256i At = _mm256_and_si256(_mm256_castps_si256(t), P->absm);
	const __m256i lo = _mm256_min_epi32(At, ylo), hi = _mm256_max_epi32(At, yabs);
	const __m256i ok = _mm256_andnot_si256(_mm256_cmpgt_epi32(hi, P->maxb),
					       _mm256_cmpgt_epi32(lo, P->minb));
	const __m256i inex = _mm256_castps_si256(_mm256_cmp_ps(e1, e2, _CMP_NEQ_UQ));

	*cv = _mm256_sub_epi32(*cv, _mm256_and_si256(_mm256_and_si256(inex, ok), valid));
	*bad = _mm256_andnot_si256(ok, valid);
	return t;
}

NE64_TARGET static __m256 eo8_fix_step(fpl__acc_tile *T, size_t k, size_t base, __m256 sold,
				       __m256 y, int bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	float so[8], yo[8];

	_mm256_storeu_ps(so, sold);
	_mm256_storeu_ps(yo, y);
	while (bad) {
		int l = __builtin_ctz((unsigned)bad);
		bad &= bad - 1;
		yo[l] = (float)fpl__acc_ne64_slow(T, a, b[l], (double)so[l], idx0 + (uint64_t)l,
						  base + (size_t)l);
	}
	return _mm256_loadu_ps(yo);
}

NE64_TARGET static __m256 eo8_fix_add(fpl__acc_tile *T, uint64_t sn, size_t base, __m256 x,
				      __m256 yv, __m256 r, int bad)
{
	const fpl_accum_model *m = T->J->m;
	const uint64_t idx0 = fpl__acc_idx(T, sn, base);
	float xo[8], yo[8], ro[8];

	_mm256_storeu_ps(xo, x);
	_mm256_storeu_ps(yo, yv);
	_mm256_storeu_ps(ro, r);
	while (bad) {
		int l = __builtin_ctz((unsigned)bad);
		unsigned fl = 0;
		bad &= bad - 1;
		ro[l] = (float)fpl__add_ix(&m->acc, (double)xo[l], (double)yo[l], m->acc_rnd,
					   T->J->st, idx0 + (uint64_t)l, &fl);
		fpl__acc_note(T, base + (size_t)l, fl);
	}
	return _mm256_loadu_ps(ro);
}

NE64_TARGET static inline __m256 eo8_step(fpl__acc_tile *T, const eo8_par *P, __m256 av,
					  const float *b, __m256 s, __m256i valid, __m256i *cv,
					  size_t k, size_t base)
{
	const __m256 p = _mm256_mul_ps(av, _mm256_loadu_ps(b));
	const __m256i pabs = _mm256_and_si256(_mm256_castps_si256(p), P->absm);
	__m256i bad;
	__m256 t = eo8_sum(P, s, p, pabs, pabs, valid, cv, &bad);
	int bm = _mm256_movemask_ps(_mm256_castsi256_ps(bad));

	if (__builtin_expect(bm != 0, 0))
		t = eo8_fix_step(T, k, base, s, t, bm);
	return t;
}

NE64_TARGET static inline __m256 eo8_add(fpl__acc_tile *T, const eo8_par *P, __m256 x, __m256 y,
					 __m256i valid, __m256i *cv, uint64_t sn, size_t base)
{
	__m256i bad;
	/* y, a value of acc, may be 0 or tiny: bits(1) stands in for its
	 * lower bound */
	__m256 t = eo8_sum(P, x, y, _mm256_and_si256(_mm256_castps_si256(y), P->absm),
			   _mm256_set1_epi32(0x3f800000), valid, cv, &bad);
	int bm = _mm256_movemask_ps(_mm256_castsi256_ps(bad));

	if (__builtin_expect(bm != 0, 0))
		t = eo8_fix_add(T, sn, base, x, y, t, bm);
	return t;
}

NE64_TARGET void fpl__acc_eo32_avx2(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const size_t K = J->K, B = J->m->block, nj = T->nj;
	const double *arow = J->A + T->i * K;
	const float *bp = J->Bf + T->j0 / NT * K * NT;
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	eo8_par P;
	size_t q, k0, k, l;

	P.absm = _mm256_set1_epi32(0x7fffffff);
	P.minb = _mm256_set1_epi32(0x00800000);
	P.maxb = _mm256_set1_epi32(0x7e7fffff);	/* below 2^126 */
	for (q = 0; q < nj; q += 16) {
		/* lanes q + l < nj of each register */
		const __m256i v0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(nj - q)), lane);
		const __m256i v1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(nj - q) - 8), lane);
		float sf[16];
		uint32_t co[16];
		__m256 S0, S1;
		__m256i c0 = _mm256_setzero_si256(), c1 = c0;
		for (l = 0; l < 16; l++)
			sf[l] = q + l < nj ? (float)res[q + l] : 0.0f;
		S0 = _mm256_loadu_ps(sf);
		S1 = _mm256_loadu_ps(sf + 8);
		for (k0 = 0; k0 < K; k0 += B) {
			const size_t k1 = K - k0 < B ? K : k0 + B;
			const uint64_t sn = K + 2 * (k0 / B);
			__m256 e0 = _mm256_setzero_ps(), e1 = e0, o0 = e0, o1 = e0;
			for (k = k0; k < k1; k++) {
				const __m256 av = _mm256_set1_ps((float)arow[k]);
				const float *b = bp + k * NT + q;
				if ((k - k0) & 1) {
					o0 = eo8_step(T, &P, av, b, o0, v0, &c0, k, q);
					o1 = eo8_step(T, &P, av, b + 8, o1, v1, &c1, k, q + 8);
				} else {
					e0 = eo8_step(T, &P, av, b, e0, v0, &c0, k, q);
					e1 = eo8_step(T, &P, av, b + 8, e1, v1, &c1, k, q + 8);
				}
			}
			e0 = eo8_add(T, &P, e0, o0, v0, &c0, sn, q);
			e1 = eo8_add(T, &P, e1, o1, v1, &c1, sn, q + 8);
			S0 = eo8_add(T, &P, S0, e0, v0, &c0, sn + 1, q);
			S1 = eo8_add(T, &P, S1, e1, v1, &c1, sn + 1, q + 8);
		}
		_mm256_storeu_ps(sf, S0);
		_mm256_storeu_ps(sf + 8, S1);
		_mm256_storeu_si256((__m256i *)co, c0);
		_mm256_storeu_si256((__m256i *)(co + 8), c1);
		for (l = 0; l < 16 && q + l < nj; l++) {
			res[q + l] = sf[l];
			if (co[l])
				T->fl[q + l] |= FPL_FLAG_INEXACT;
			T->cnt[INEX_INDEX] += co[l];
		}
	}
}
#endif
