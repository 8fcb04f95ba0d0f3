/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_ne64_avx2.c - the verified NE64 chains (chain_fast.c's
 * verify_ok, J->verify) on AVX2: the twin of x86/chain_ne_avx512.c's
 * verified kernel, four binary64 lanes a register, sixteen outputs of a
 * tile (four registers) held in registers over the whole range of steps,
 * then the next sixteen; the inexact counts kept per lane in registers.
 * It serves the jobs that kernel serves on AVX-512 and that nothing else
 * takes on AVX2: the bf16 hardware profiles (avx512bf16 and onednn-bf16:
 * pairs and pairs:B over bf16 into fp32 with DAZ and FTZ), fp32 x fp32
 * into fp32 sequential, bf16 into bf16 blocked, evenodd chains whose
 * accumulator is no binary32 (chain_fast.c's evenodd, stride 2).
 *
 * Why a kept lane is the reference's step.  The reference's step is
 * fpl__fma_ix(acc, a, b, s): the exact x = s + a*b rounded once to
 * nearest-even into acc.  Here a, b are values of A's and B's formats, s
 * a value of acc, and verify_ok holds: mode ne, acc's m <= 50, every
 * product a*b exact in binary64 and |s + a*b| < 2^1023 (chain_fast.c's
 * products_exact64), and with a DAZ accumulator no subnormal among the
 * loaded A, B, C and no subnormal results (so the reference's operands
 * are the values read here: a running sum is the next step's operand).
 *  (1) The sum and its error.  t = fma(a, b, s) is RN(a*b + s) = RN(s +
 *    p) with p = a*b the exact product: Knuth's TwoSum's first sum.  Its
 *    other steps: bb = RN(t - s), e1 = RN(s - RN(t - bb)), e2' = fnmadd
 *    (a, b, bb) = RN(bb - a*b) = RN(bb - p) = -RN(p - bb) (RN is
 *    symmetric): the negated second error term of TwoSum, so e1 - e2' is
 *    TwoSum's e1 + e2 and e = RN(e1 - e2') = (s + p) - t exactly (TwoSum
 *    is exact when no operation overflows: |s + p| < 2^1023 bounds t, and
 *    no intermediate of TwoSum overflows unless the first sum does,
 *    Boldo, Graillat and Muller, "On the robustness of the 2Sum and
 *    Fast2Sum algorithms", ACM TOMS 44(4), 2017).  The build's
 *    -ffp-contract=off, and the intrinsics, keep the operations apart.
 *    e = 0 iff e1 = e2' (e1 - e2' is then 0; otherwise RN of a nonzero
 *    difference of binary64 values is not 0): the step is exact iff e1
 *    == e2' (compared ordered: a NaN lane, from an inf or NaN operand,
 *    counts as exact here and fails the range test of (3)).
 *  (2) An inexact sum rounded to odd.  Where e != 0, x = t + e is no
 *    binary64 and lies strictly between t and its neighbour on e's side;
 *    t is replaced by RO(x), x rounded to odd at 53 bits: t itself when
 *    t's last significand bit is 1, else that neighbour.  Within one sign
 *    the bit patterns are ordered as the magnitudes (across a binade
 *    too), so with u = bits(t) the neighbour away from zero (e of t's
 *    sign) is u + 1, which for an even u is u | 1, and the one towards
 *    zero (e of the other sign) is u - 1, odd for an even u.  So RO(x) =
 *    (u - d) | 1 with d = 1 iff t is even and e's sign differs from t's
 *    (d = the top bit of bits(e) ^ u, shifted down, and not u's last
 *    bit); for an odd u it is u.  t is not 0 (a nonzero exact sum of
 *    multiples of 2^-1074 is no smaller than 2^-1074, so RN never gives 0
 *    for it) nor inf (the bound), so u +- 1 stays a finite nonzero value
 *    of t's sign.  By the round-to-odd theorem (Boldo and Melquiond,
 *    "Emulation of FMA and correctly rounded sums: proved algorithms
 *    using rounding to odd", IEEE Trans. Computers 57(4), 2008:
 *    RN_p(RO_q(x)) = RN_p(x) for q >= p + 2, here q = 53 and p = m + 1 <=
 *    51) the rounding of RO(x) to nearest-even in acc, done in (3), is
 *    x's own.  As in x86/chain_ne_avx512.c, the tests of (3) stay true of
 *    x: RO(x) is odd at 53 bits, so it is no value of acc and y != RO(x)
 *    (the step counts inexact, as it must: x is no binary64); x lies
 *    strictly between RO(x)'s two even neighbours, so 2^emin <= |RO(x)|
 *    (2^emin even) gives |x| > 2^emin, and |RO(x)| < L gives a rounding
 *    of x at most max.  Where e = 0, t is the exact x and is kept as it
 *    is (the blend below picks RO(x) only in the lanes with e != 0).
 *  (3) The rounding into acc: y = (t + C) - C with C = 1.5 * 2^52 * q, q
 *    = 2^(E-m) the quantum of acc at t (2^E <= |t| < 2^(E+1)), C's bits
 *    those of t's exponent field plus (52 - m) << 52 with the fraction
 *    2^51: x86/chain_ne_avx512.c argues that this is t rounded to
 *    nearest-even at m+1 bits for every t with 2^emin <= |t| and m <=
 *    50, in the default MXCSR (nearest-even, no DAZ or FTZ: this file
 *    changes no control state; chain_ne.c's AVX2 kernel relies on the
 *    same).  Kept lanes: 2^emin <= |t| < L, L = the least binary64 whose
 *    rounding exceeds max (that file's L), tested on the bits: with A =
 *    bits(|t|) < 2^63, (A - bits(2^emin)) <= (bits(L) - 1 - bits(2^emin))
 *    unsigned, done by AVX2's signed compare as (A + (2^63 -
 *    bits(2^emin))) > ((bits(L) - 1 - bits(2^emin)) ^ 2^63) for a lane
 *    to redo (adding 2^63 modulo 2^64 flips the top bit, which turns the
 *    unsigned order into the signed one).  A kept lane is neither tiny
 *    (|x| >= 2^emin under both tininess rules; FTZ and DAZ do not touch
 *    it) nor overflowing nor special: its value is y and its only flag
 *    inexact, raised iff y != t (t is x, or RO(x) as argued in (2)).
 *    With F32 the rounding is cvtps_pd(cvtpd_ps(t)): for a kept lane t
 *    lies in binary32's normal range (2^-126 <= 2^emin <= |t|) and its
 *    rounding at 24 bits is at most max <= FLT_MAX (no overflow), so the
 *    conversion (nearest-even, the default MXCSR; no FTZ or DAZ) is t
 *    rounded to nearest-even at m + 1 = 24 bits, and the conversion back
 *    is exact: the same y.
 *  (4) Every other lane (zero, tiny, overflow, inf, NaN) is recomputed
 *    from the step's original operands by fpl__acc_ne64_slow (the
 *    engine's fpl__fma_ix with the step's draw index, as the reference
 *    does: fpl__acc_idx(T, k, jj); mode ne takes no draws), its count
 *    taken back.  Invalid or overflow raised in MXCSR by the discarded
 *    computation of such lanes is never read (the engine keeps its own
 *    flags).  Lanes past the tile's end (B's panel J->Bp is padded with
 *    +0, the sums here with +0) are never kept nor redone: their values
 *    and counts are dropped.
 *
 * Speed: a register step runs (1) and (3); a group step (GR registers,
 * step k) in which some lane is inexact in binary64 or is to be redone
 * takes redo, which recomputes the group's registers from their old
 * sums, takes the fast step's counts back and does (2), (3) and (4) for
 * every lane: the same values.  For jobs whose steps are mostly inexact
 * in binary64 (products and acc together wider than 53 bits: fp32
 * inputs) the kernel does (2) in every register instead (ODD: a blend
 * keeps the exact lanes' t), so only the lanes of (4) go to redo.  Both
 * give the same bits; the choice is speed only.  Without ODD, a group
 * of whole registers tests the range of (3) on all of it at once: the
 * minimum and the maximum of its |t| (vminpd, vmaxpd) against 2^emin
 * and L as doubles; without NaN lanes these are the exact extremes, so
 * every lane is in range iff both tests pass, and a NaN lane (which the
 * extremes may drop or return) is flagged by its inexact test (compared
 * unordered there), so the group is redone whole either way.  Binary32
 * accumulators (acc's m = 23, its normal range inside binary32's: F32)
 * round by conversion, as (3) says.
 */
#include <immintrin.h>
#include <string.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)
#define GR 4		/* registers per group */
#define GL (4 * GR)	/* lanes per group */
_Static_assert(NT % GL == 0, "whole groups in a padded tile");

typedef struct par4 {
	__m256i sign, expm, cadd, bias, range, one;
	__m256d absm, lo, hi;	/* |.| mask; 2^emin and L as doubles */
} par4;

uint64_t fpl__acc_ne64_avx2_runs, fpl__acc_ne64_avx2_redos;

/* (1): t = RN(s + a*b) and TwoSum's e1 and e2' (e = e1 - e2'); *inx the
 * lanes with e != 0, and with UQ also the NaN lanes. */
__attribute__((always_inline)) static inline __m256d two_sum(__m256d av, __m256d bv,
							    __m256d sv, __m256d *e1,
							    __m256d *e2, __m256d *inx,
							    const int UQ)
{
	const __m256d t = _mm256_fmadd_pd(av, bv, sv);
	const __m256d bb = _mm256_sub_pd(t, sv);

	*e1 = _mm256_sub_pd(sv, _mm256_sub_pd(t, bb));
	*e2 = _mm256_fnmadd_pd(av, bv, bb);
	*inx = UQ ? _mm256_cmp_pd(*e1, *e2, _CMP_NEQ_UQ) : _mm256_cmp_pd(*e1, *e2, _CMP_NEQ_OQ);
	return t;
}

/* (2): t made odd in the lanes of inx (RO of t + e, e = e1 - e2'). */
static inline __m256d make_odd(const par4 *P, __m256d t, __m256d e1, __m256d e2, __m256d inx)
{
	const __m256i u = _mm256_castpd_si256(t);
	const __m256i e = _mm256_castpd_si256(_mm256_sub_pd(e1, e2));
	const __m256i d = _mm256_andnot_si256(u, _mm256_srli_epi64(_mm256_xor_si256(e, u), 63));
	const __m256i v = _mm256_or_si256(_mm256_sub_epi64(u, d), P->one);

	return _mm256_blendv_pd(t, _mm256_castsi256_pd(v), inx);
}

/* (3): t rounded into acc, right in the kept lanes: (t + C) - C, or
 * with F32 (acc's m = 23 and its normal range inside binary32's) the
 * conversions to binary32 and back: t's rounding to nearest-even at 24
 * bits, the same in the kept lanes (normal in binary32, no overflow:
 * their rounding is at most max). */
__attribute__((always_inline)) static inline __m256d round_acc(const par4 *P, __m256d t,
							      const int F32)
{
	__m256d c;

	if (F32)
		return _mm256_cvtps_pd(_mm256_cvtpd_ps(t));
	c = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_and_si256(_mm256_castpd_si256(t), P->expm),
						 P->cadd));
	return _mm256_sub_pd(_mm256_add_pd(t, c), c);
}

/* (3)'s range test on the bits: the lanes of t not kept (all ones). */
static inline __m256i out_of_range(const par4 *P, __m256d t)
{
	const __m256i u = _mm256_castpd_si256(t);

	return _mm256_cmpgt_epi64(_mm256_add_epi64(_mm256_andnot_si256(P->sign, u), P->bias),
				  P->range);
}

/* *cv += -1 in the lanes where y != t. */
static inline void count(__m256i *cv, __m256d y, __m256d t)
{
	*cv = _mm256_add_epi64(*cv, _mm256_castpd_si256(_mm256_cmp_pd(y, t, _CMP_NEQ_UQ)));
}

/* One register's fast step: y (the rounding of t, or with ODD of t made
 * odd), its count in *cv, and the lanes that send the group to
 * redo: with ODD *flag = the lanes out of range; else *flag = the
 * inexact and NaN lanes and *at = |t| (the range is tested on the
 * group: group_flag), or when not FULL both in *flag. */
__attribute__((always_inline)) static inline __m256d step4(const par4 *P, __m256d av,
							  const double *b, __m256d sv, __m256i *cv,
							  __m256i *flag, __m256d *at, const int ODD,
							  const int F32, const int FULL)
{
	const __m256d bv = _mm256_loadu_pd(b);
	__m256d e1, e2, inx, t = two_sum(av, bv, sv, &e1, &e2, &inx, !ODD), y;

	if (ODD)
		t = make_odd(P, t, e1, e2, inx);
	y = round_acc(P, t, F32);
	count(cv, y, t);
	if (ODD)
		*flag = out_of_range(P, t);
	else if (FULL)
		*flag = _mm256_castpd_si256(inx), *at = _mm256_and_pd(t, P->absm);
	else
		*flag = _mm256_or_si256(_mm256_castpd_si256(inx), out_of_range(P, t));
	return y;
}

/*
 * The step k of a group (tile lanes base .. base + 15, n of them valid)
 * done again with every lane right: per register, the fast step's value
 * recomputed and its counts taken back (cv is the fast step's), then
 * (1), (2), (3), and (4) for the valid lanes out of range; y[] the new
 * sums (a register past the tile's end computed as the others, never
 * fixed).
 */
__attribute__((always_inline)) static inline void redo(fpl__acc_tile *T, const par4 *P,
						       size_t k, size_t base, size_t n,
						       const __m256d *sold, __m256d *y, __m256i *cv,
						       const int ODD, const int F32)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *bk = J->B + k * J->N + T->j0 + base;
	const double *bp = J->Bp + (T->j0 / NT * J->K + k) * NT + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	const __m256d av = _mm256_set1_pd(a);
	size_t r, l;

	__atomic_fetch_add(&fpl__acc_ne64_avx2_redos, 1, __ATOMIC_RELAXED);
	for (r = 0; r < GR; r++) {
		__m256i flag, bad, c0 = _mm256_setzero_si256(), c1 = c0;
		__m256d e1, e2, inx, t, yr, at;
		double so[4], yo[4];
		uint64_t bm[4];

		(void)step4(P, av, bp + 4 * r, sold[r], &c0, &flag, &at, ODD, F32, 0);
		t = two_sum(av, _mm256_loadu_pd(bp + 4 * r), sold[r], &e1, &e2, &inx, 0);
		t = make_odd(P, t, e1, e2, inx);
		yr = round_acc(P, t, F32);
		count(&c1, yr, t);
		bad = out_of_range(P, t);
		/* cv: less the fast step's count, plus the kept lanes' */
		cv[r] = _mm256_add_epi64(_mm256_sub_epi64(cv[r], c0), _mm256_andnot_si256(bad, c1));
		_mm256_storeu_pd(so, sold[r]);
		_mm256_storeu_pd(yo, yr);
		_mm256_storeu_si256((__m256i *)bm, bad);
		for (l = 0; l < 4 && 4 * r + l < n; l++)
			if (bm[l])
				yo[l] = fpl__acc_ne64_slow(T, a, bk[4 * r + l], so[l],
							   idx0 + 4 * r + l, base + 4 * r + l);
		y[r] = _mm256_loadu_pd(yo);
	}
}

/* redo out of the hot loop, instantiated for each variant (the fast
 * step's counts differ): ODD and F32 as the caller's constants. */
__attribute__((noinline)) static void redo_cold(fpl__acc_tile *T, const par4 *P, size_t k,
						size_t base, size_t n, const __m256d *sold,
						__m256d *y, __m256i *cv, int odd, int f32)
{
	if (odd && f32)
		redo(T, P, k, base, n, sold, y, cv, 1, 1);
	else if (odd)
		redo(T, P, k, base, n, sold, y, cv, 1, 0);
	else if (f32)
		redo(T, P, k, base, n, sold, y, cv, 0, 1);
	else
		redo(T, P, k, base, n, sold, y, cv, 0, 0);
}

/* Does the group step need redo: any flag of a valid lane, and for the
 * fast steps without ODD on a FULL group, a |t| below 2^emin or not
 * below L (min and max of the registers' |t|: a NaN there may be
 * dropped, but its lane is flagged already). */
__attribute__((always_inline)) static inline int group_flag(const par4 *P, const __m256i *f,
							   const __m256d *at, size_t n,
							   const int ODD, const int FULL)
{
	const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
	__m256i x = f[0], v;
	__m256d mn = at[0], mx = at[0];
	int r;

	if (FULL) {
		for (r = 1; r < GR; r++)
			x = _mm256_or_si256(x, f[r]);
		if (!ODD) {
			for (r = 1; r < GR; r++) {
				mn = _mm256_min_pd(mn, at[r]);
				mx = _mm256_max_pd(mx, at[r]);
			}
			x = _mm256_or_si256(x, _mm256_castpd_si256(_mm256_or_pd(
						       _mm256_cmp_pd(mn, P->lo, _CMP_LT_OQ),
						       _mm256_cmp_pd(mx, P->hi, _CMP_GE_OQ))));
		}
		return !_mm256_testz_si256(x, x);
	}
	x = _mm256_setzero_si256();
	for (r = 0; r < GR; r++) {
		v = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n),
				       _mm256_add_epi64(lane, _mm256_set1_epi64x(4 * r)));
		x = _mm256_or_si256(x, _mm256_and_si256(f[r], v));
	}
	return !_mm256_testz_si256(x, x);
}

static void add_counts(uint64_t *cnt, __m256i cv, size_t n)
{
	uint64_t co[4];
	size_t l;

	_mm256_storeu_si256((__m256i *)co, cv);
	for (l = 0; l < n && l < 4; l++)
		cnt[l] -= co[l];	/* cv holds -count */
}

/* The chains of lanes base .. base + GL - 1 of the tile (n of them
 * valid; s[] holds GL sums, padded) over k = k0, k0+ks, ... below k1;
 * cnt[] += their inexact steps. */
__attribute__((always_inline)) static inline void group(fpl__acc_tile *T, const par4 *P,
							size_t k0, size_t k1, size_t ks,
							size_t base, size_t n, double *s,
							uint64_t *cnt, const int ODD, const int F32,
							const int FULL)
{
	const fpl__acc_job *J = T->J;
	const double *arow = J->A + T->i * J->K;
	const double *bp = J->Bp + T->j0 / NT * J->K * NT + base;
	__m256d sv[GR];
	__m256i cv[GR];
	size_t k;
	int r;

	for (r = 0; r < GR; r++) {
		sv[r] = _mm256_loadu_pd(s + 4 * r);
		cv[r] = _mm256_setzero_si256();
	}
	for (k = k0; k < k1; k += ks) {
		const __m256d av = _mm256_set1_pd(arow[k]);
		const double *b = bp + k * NT;
		__m256i f[GR];
		__m256d at[GR], y[GR];

		for (r = 0; r < GR; r++)
			y[r] = step4(P, av, b + 4 * r, sv[r], &cv[r], &f[r], &at[r], ODD, F32, FULL);
		if (__builtin_expect(group_flag(P, f, at, n, ODD, FULL), 0)) {
			__m256d so[GR], yo[GR];
			__m256i co[GR];
			for (r = 0; r < GR; r++)
				so[r] = sv[r], co[r] = cv[r];
			redo_cold(T, P, k, base, n, so, yo, co, ODD, F32);
			for (r = 0; r < GR; r++)
				y[r] = yo[r], cv[r] = co[r];
		}
		for (r = 0; r < GR; r++)
			sv[r] = y[r];
	}
	for (r = 0; r < GR; r++) {
		_mm256_storeu_pd(s + 4 * r, sv[r]);
		if (n > (size_t)(4 * r))
			add_counts(cnt + 4 * r, cv[r], n - (size_t)(4 * r));
	}
}

/* The tile's chains, GL lanes at a time. */
__attribute__((always_inline)) static inline void run(fpl__acc_tile *T, const par4 *P,
						      size_t k0, size_t k1, size_t ks,
						      double *sv, uint64_t *cnt, const int ODD,
						      const int F32)
{
	size_t j;

	for (j = 0; j < T->nj; j += GL) {
		if (T->nj - j >= GL)
			group(T, P, k0, k1, ks, j, GL, sv + j, cnt + j, ODD, F32, 1);
		else
			group(T, P, k0, k1, ks, j, T->nj - j, sv + j, cnt + j, ODD, F32, 0);
	}
}

static void run_00(fpl__acc_tile *T, const par4 *P, size_t k0, size_t k1, size_t ks,
		   double *sv, uint64_t *cnt)
{
	run(T, P, k0, k1, ks, sv, cnt, 0, 0);
}

static void run_01(fpl__acc_tile *T, const par4 *P, size_t k0, size_t k1, size_t ks,
		   double *sv, uint64_t *cnt)
{
	run(T, P, k0, k1, ks, sv, cnt, 0, 1);
}

static void run_10(fpl__acc_tile *T, const par4 *P, size_t k0, size_t k1, size_t ks,
		   double *sv, uint64_t *cnt)
{
	run(T, P, k0, k1, ks, sv, cnt, 1, 0);
}

static void run_11(fpl__acc_tile *T, const par4 *P, size_t k0, size_t k1, size_t ks,
		   double *sv, uint64_t *cnt)
{
	run(T, P, k0, k1, ks, sv, cnt, 1, 1);
}

void fpl__acc_ne64_avx2(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s)
{
	const fpl_accum_model *m = T->J->m;
	const fpl_format *f = &m->acc;
	const size_t nj = T->nj;
	const uint64_t half = 1ull << (51 - f->m);
	const uint64_t minb = fpl__bits(f->min_normal), maxb = fpl__bits(f->max);
	const uint64_t lim = maxb + half + 1 - ((maxb >> (52 - f->m)) & 1);
	/* mostly inexact in binary64: products and acc wider than 53 bits */
	const int odd = (m->a.m + 1) + (m->b.m + 1) + (f->m + 1) > 53;
	const int f32 = f->m == 23 && f->emin >= -126 && f->max <= 0x1.fffffep127;
	double sv[NT];
	uint64_t cnt[NT], total = 0;
	size_t jj;
	par4 P;

	__atomic_fetch_add(&fpl__acc_ne64_avx2_runs, 1, __ATOMIC_RELAXED);
	P.sign = _mm256_set1_epi64x((long long)FPL__SIGN_BIT);
	P.expm = _mm256_set1_epi64x(0x7ff0000000000000ll);
	P.cadd = _mm256_set1_epi64x((long long)(((uint64_t)(52 - f->m) << 52)
						| 0x0008000000000000ull));
	P.bias = _mm256_set1_epi64x((long long)(FPL__SIGN_BIT - minb));
	P.range = _mm256_set1_epi64x((long long)((lim - 1 - minb) ^ FPL__SIGN_BIT));
	P.one = _mm256_set1_epi64x(1);
	P.absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
	P.lo = _mm256_set1_pd(f->min_normal);
	P.hi = _mm256_set1_pd(fpl__from_bits(lim));
	memcpy(sv, s, nj * sizeof *s);
	memset(sv + nj, 0, (NT - nj) * sizeof *sv);
	memset(cnt, 0, sizeof cnt);
	if (odd)
		(f32 ? run_11 : run_10)(T, &P, k0, k1, ks, sv, cnt);
	else
		(f32 ? run_01 : run_00)(T, &P, k0, k1, ks, sv, cnt);
	memcpy(s, sv, nj * sizeof *s);
	for (jj = 0; jj < nj; jj++) {
		if (cnt[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		total += cnt[jj];
	}
	T->cnt[INEX_INDEX] += total;
}
