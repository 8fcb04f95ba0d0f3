/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_ro32_avx2.c - x86/chain_ro32_avx512.c's binary32 tiles
 * (sequential and blocked:B:fp32 in mode ne, inputs and accumulator
 * inside binary32) on AVX2: eight outputs a register, a tile as two
 * groups of four registers, each group's 32 chains in registers for all
 * of K.  AVX2 has no embedded rounding, and this file leaves MXCSR alone
 * (nearest-even, the default every kernel here assumes; no control
 * state is read or changed): a step is one fma rounded to nearest, its
 * exact error by TwoSum, the add-and-subtract rounding into acc, and a
 * correction, taken off the fast path, for the one case where rounding
 * twice differs from rounding once.  (The round to odd of the AVX-512
 * kernel, built here from the error with integer operations, cost more
 * operations per step and a longer dependency chain per step than this.)
 *
 * The jobs (chain_fast.c's ro32_ok with J->simd == 1): those of the
 * AVX-512 kernel (A's, B's and acc's values binary32 values, acc's m <=
 * 21, its quanta >= 2^-147, no DAZ, max >= 2^emax, top = min(emax, 104 +
 * m) > emin + 1; blocked adds in IEEE binary32; K < 2^30) with also
 *  (P) m_a + m_b + 2 <= 24: a product a*b has at most 24 significant
 *      bits, so it is a binary32 number whenever 2^-126 <= |a*b| < 2^128;
 *  (E) emin >= -126: acc's normal binades are binary32-normal (the
 *      AVX-512 kernel needs it too: chain_fast.c asks it of both);
 *  (M) max + 2^top <= max32 = (2 - 2^-23) 2^127;
 * and not the sequential jobs that chain_ne.c's lean or lean2 kernels run
 * (faster there).  A step's exact value is x = s + a*b, s a value of
 * acc; the reference's step is RN_acc(x) with its flags.
 *
 * (1) The sum and its error.  s1 = fma(a, b, s) = RN32(x) (one rounding
 *   of the exact x).  nb = RN(s - s1), t = RN(s1 + nb), d1 = RN(s - t),
 *   d2 = fma(a, b, nb) = RN(p + nb), e = RN(d1 + d2): Knuth's TwoSum of
 *   s and p with -bb for its bb = RN(s1 - s) (RN is symmetric), so e =
 *   x - s1 exactly when p = a*b is a binary32 number and no operation
 *   overflows (both hold for the lanes kept, (4)).
 * (2) y = (s1 + C) - C, C = 1.5 * 2^23 * q, q = 2^(E-m) with 2^E <= |s1|
 *   < 2^(E+1) (C's bits: s1's exponent field plus (23-m) << 23, fraction
 *   2^22; E - m + 23 < 127 by top's bound): x86/chain_ro32_avx512.c's
 *   (4) with s1 for ro: y is the multiple of q nearest to s1, ties to
 *   the even multiple (|s1| < 2^(m+1) q <= 2^22 q, so s1 + C lies in
 *   [2^23 q, 2^24 q), whose binary32 numbers are the multiples of q, and
 *   the subtraction is exact).  For E >= emin (the kept lanes, (4)), the
 *   multiples of q near s1 are acc's values there (2^(E+1) too, with an
 *   even quotient, as in acc), so y = RN_acc(s1).
 * (3) RN_acc(s1) = RN_acc(x) unless s1 is a midpoint of acc and e != 0.
 *   RN_acc is a step function whose steps are at the midpoints of acc
 *   (the points halfway between consecutive values of acc); at |x| >=
 *   2^emin those are binary32 numbers (acc's half quantum 2^(E'-m-1) is
 *   a multiple of ulp32 = 2^(E'-23) in every binade E' >= emin, as m <=
 *   22).  If e = 0, x = s1.  If e != 0, x is no binary32 number and no
 *   binary32 number lies strictly between x and s1 (s1 = RN32(x)), so
 *   unless s1 is a midpoint the closed segment from x to s1 holds none,
 *   and RN_acc(x) = RN_acc(s1).  When s1 is a midpoint (its low
 *   23 - m fraction bits 1 << (22 - m): in binade E >= emin + 1 acc's
 *   midpoints there are the binary32 numbers with those bits; s1 is never
 *   a power of two then) and e != 0, x lies strictly inside (v, w), v
 *   and w the values of acc next to s1 (|x - s1| <= ulp32/2 < q/2), on
 *   e's side of s1, and RN_acc(x) is the one on that side: in magnitude
 *   bits(s1) + H when e has s1's sign, else bits(s1) - H, H = 1 << (22 -
 *   m) (q/2 in units of s1's ulp; the carry into the exponent field gives
 *   2^(E+1) at the binade's top, and bits(s1) - H >= bits(2^E) as s1 >=
 *   2^E + q/2).  Inexact: RN_acc(x) != x iff e != 0 (then x is no
 *   binary32 number, so no value of acc) or y != s1.  So the kernel
 *   counts (e != 0) | (y != s1) (per lane, the comparison mask, -1 or 0,
 *   subtracted from its count), and flags the lanes with s1 a midpoint
 *   and e != 0 (rare: x inexact in binary32 and rounded onto a tie);
 *   fix_reg recomputes their register's step with the same operations
 *   and replaces y by the neighbour on e's side, dm = (bits(e) ^
 *   bits(s1)) >> 31 (arithmetic: -1 when the signs differ) choosing the
 *   sign of H as (H ^ dm) - dm.  The count is the same either way.
 * (4) The lanes kept: 2^(emin+1) <= |s1| < 2^top, tested on s1's
 *   exponent field, and, when some product of a value of A's format and
 *   one of B's lies below 2^-126 ((P): then it may be no binary32
 *   number), |b| >= 2^(1-Ea) or b = 0, where Ea is a's exponent field
 *   (a != 0, finite): a normal a is at least 2^(Ea-127), so the kept
 *   nonzero products are at least 2^-126, binary32 numbers by (P) (a
 *   subnormal a keeps only b = 0; Ea > 150 keeps every b, the smallest
 *   product being 2^(Ea-127-149) >= 2^-125).  Then 2^emin < |x| < 2^top
 *   (RN32 is monotone, and 2^(emin+1) and 2^top are binary32 numbers):
 *   not tiny under either rule, RN_acc(x) <= 2^top <= max, so no
 *   overflow and the only flag is inexact.  p is a binary32 number: 0
 *   when a or b is 0, a kept product above, |p| <= |s| + |x| < max +
 *   2^top <= max32 by (M), so finite.  No operation of TwoSum overflows:
 *   their exact arguments are at most |s| + |s1| < max32 in magnitude
 *   (t is within an ulp of s, d1 and d2 below an ulp of s1).  Every
 *   other lane (zero and tiny sums, the top binades, inf, NaN, overflow,
 *   products that may be inexact) is recomputed by fpl__acc_ne64_slow
 *   from the step's operands as doubles and its draw index, as the
 *   reference does (ne takes no draws); the kernel's count of it is taken
 *   back.
 * (5) Lean tiles (J->ro32 == 2, chain_fast.c's ro32_ok: acc with
 *   subnormals and a signed zero, q_a q_b >= q_acc) keep every lane with
 *   |s1| < 2^top.  Every product is then a multiple of q_acc >= 2^-147
 *   with at most 24 bits, a binary32 number, and TwoSum is exact with
 *   subnormals too.  x86/chain_ro32_avx512.c's (5) applies: an x with
 *   |x| < 2^(emin+1) is a value of acc and a binary32 number, e = 0, s1 =
 *   x, and y = (x + C) - C = x: x is a multiple of q_acc = 2^(emin - m),
 *   q = 2^(E-m) divides it (E <= emin; for a binary32 subnormal x, E
 *   counts as -127 and q = 2^(-127-m) < q_acc by (E)), and |x| < 2^(m+1)
 *   q; x = 0 gives +0.  The reference returns x with no flag, the count
 *   adds nothing (e = 0, y = s1), and such an s1 is no midpoint with e
 *   != 0.  The zero's sign: as there (a chain from +0 never meets -0; a
 *   sequential tile with -0 among C's values runs the checked variant).
 * (6) Exact lean blocks (lean tiles of blocked jobs with G = 24 +
 *   log2(q_a q_b) >= emin + 2 and q_a q_b <= 2^(emax-m), acc's quantum
 *   at max): every partial sum of a block is a multiple of q_a q_b (the
 *   chain starts at +0; x = s + a*b is one if s is; y = RN_acc(x) is one
 *   too: where acc's quantum 2^(E-m) at y is at least q_a q_b, y is a
 *   multiple of it, and where it is smaller, x = k q_a q_b with |x| <
 *   2^(E+1) has k < 2^(m+1), so x is a value of acc and y = x; a
 *   saturated max is one too; inf and NaN stay flagged).  So an x with |x| <= 2^G is a binary32 number, e = 0,
 *   and RN32 being monotone, |s1| < 2^G gives it: the fast path of such
 *   a block skips TwoSum, counts y != s1, and flags every lane with |s1|
 *   >= min(2^G, 2^top) (one compare of the exponent field), which
 *   fix_reg then runs as above ((3), (4)), adjusting the count.  e4m3fn
 *   inputs: G = 6.  A group whose block flagged more than one step in
 *   eight runs its next blocks on the general lean variant (the same
 *   results, fewer recomputations).
 * Lanes past the tile's end (B's panel is padded with +0) are never
 * fixed nor counted (their masks are cleared); their values are
 * discarded.
 *
 * The block additions of blocked:B:P (P = IEEE binary32): R' = RN32(R +
 * blk).  rn = R + blk rounded to nearest with TwoSum's error e; kept
 * when |rn| > 2^-126 and |R|, |blk| < 2^126: then |R + blk| > 2^-126
 * (RN32 is monotone), not tiny under either rule, below 2^127, so no
 * overflow anywhere in TwoSum; inexact iff e != 0.  Other lanes run
 * fpl__add_ix with the step number K + block, as chain_fast.c's
 * blocked() does.  Without C a keep_first job takes block 0's sum itself
 * as R.  Inexact counts are kept per lane in 32 bits (K < 2^30).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "accum/accum_internal.h"
#include "accum/x86/chain_ro32_avx2.h"

#define NT FPL__ACC_TILE
#define NR 4	/* registers of a group */
_Static_assert(FPL__ACC_TILE == 2 * NR * 8, "a tile is two groups of four registers");

uint64_t fpl__acc_ro32_avx2_runs, fpl__acc_ro32_avx2_mids;

typedef struct ro8_par {
	__m256i expm, cadd, low, half, klo, klim, kexact, absm, bofs, pmin, pmax;
	int32_t plim[257];	/* (4)'s product test by a's exponent field */
} ro8_par;

/* (4)'s limit for a's magnitude bits u: lane b is dropped iff
 * bits(|b|) + 0x7fffffff (wrapping) < the limit as signed integers, that
 * is iff 0 < bits(|b|) < Tb with Tb = bits(2^(1-Ea)) (b = 0 maps to
 * INT32_MAX).  Index 256 is a = 0, 255 inf or NaN: no lane dropped (the
 * product is 0, or s1 is not finite and the range test drops it). */
static void plim_init(int32_t *lim)
{
	uint32_t E, t;

	for (E = 0; E < 257; E++) {
		t = E == 0 ? 0x7f800000u : E <= 127 ? (128 - E) << 23 : E <= 150 ? 1u << (150 - E) : 1u;
		lim[E] = E >= 255 ? INT32_MIN : INT32_MIN + (int32_t)(t - 1);
	}
}

/* The lanes of bad (register at tile lane base) by the reference's step. */
__attribute__((noinline)) static __m256 fix_step(fpl__acc_tile *T, size_t k, size_t base,
						__m256 sold, __m256 y, unsigned bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	float so[8], yo[8];

	_mm256_storeu_ps(so, sold);
	_mm256_storeu_ps(yo, y);
	while (bad) {
		int l = __builtin_ctz(bad);
		bad &= bad - 1;
		yo[l] = (float)fpl__acc_ne64_slow(T, a, b[l], (double)so[l], idx0 + (uint64_t)l,
						  base + (size_t)l);
	}
	return _mm256_loadu_ps(yo);
}

/* The block addition's lanes of bad by fpl__add_ix in promo. */
__attribute__((noinline)) static __m256 fix_add(fpl__acc_tile *T, uint64_t sn, size_t base,
					       __m256 x, __m256 yv, __m256 r, unsigned bad)
{
	const fpl_accum_model *m = T->J->m;
	const uint64_t idx0 = fpl__acc_idx(T, sn, base);
	float xo[8], yo[8], ro[8];

	_mm256_storeu_ps(xo, x);
	_mm256_storeu_ps(yo, yv);
	_mm256_storeu_ps(ro, r);
	while (bad) {
		int l = __builtin_ctz(bad);
		unsigned fl = 0;
		bad &= bad - 1;
		ro[l] = (float)fpl__add_ix(&m->promo, (double)xo[l], (double)yo[l], m->acc_rnd,
					   T->J->st, idx0 + (uint64_t)l, &fl);
		fpl__acc_note(T, base + (size_t)l, fl);
	}
	return _mm256_loadu_ps(ro);
}

/* One step of one register, every lane: s1 = RN32(x) (1), y = RN_acc(s1)
 * (2), the inexact steps counted in *cv (3), *flag the lanes
 * that need a second look: those not kept (4) and those whose s1 is a
 * midpoint of acc (3). */
static inline __attribute__((always_inline)) __m256
step8(const ro8_par *P, __m256 av, __m256 bv, __m256 sv, __m256i lim, __m256i valid,
      __m256i *cv, __m256i *flag, const int FULL, const int LEAN, const int PCHK,
      const int EXACT)
{
	const __m256 s1 = _mm256_fmadd_ps(av, bv, sv);
	const __m256i n = _mm256_castps_si256(s1);
	const __m256i ex = _mm256_and_si256(n, P->expm);
	const __m256 c = _mm256_castsi256_ps(_mm256_add_epi32(ex, P->cadd));
	const __m256 y = _mm256_sub_ps(_mm256_add_ps(s1, c), c);
	__m256i f;

	if (EXACT) {	/* (6): e = 0 below 2^G, every other lane flagged */
		f = _mm256_cmpgt_epi32(ex, P->kexact);
		*cv = _mm256_sub_epi32(*cv, _mm256_castps_si256(_mm256_cmp_ps(y, s1, _CMP_NEQ_UQ)));
	} else {
		const __m256 nb = _mm256_sub_ps(sv, s1);
		const __m256 e = _mm256_add_ps(_mm256_sub_ps(sv, _mm256_add_ps(s1, nb)),
					       _mm256_fmadd_ps(av, bv, nb));
		const __m256 ie = _mm256_cmp_ps(e, _mm256_setzero_ps(), _CMP_NEQ_UQ);
		const __m256 inex = _mm256_or_ps(ie, _mm256_cmp_ps(y, s1, _CMP_NEQ_UQ));
		f = LEAN ? _mm256_cmpgt_epi32(ex, P->klim)
			 : _mm256_cmpgt_epi32(_mm256_add_epi32(ex, P->klo), P->klim);
		if (PCHK)
			f = _mm256_or_si256(
				f, _mm256_cmpgt_epi32(lim, _mm256_add_epi32(
								   _mm256_and_si256(_mm256_castps_si256(bv),
										    P->absm),
								   P->bofs)));
		f = _mm256_or_si256(f, _mm256_and_si256(_mm256_castps_si256(ie), _mm256_cmpeq_epi32(
							       _mm256_and_si256(n, P->low), P->half)));
		*cv = _mm256_sub_epi32(*cv, _mm256_castps_si256(inex));
	}
	if (!FULL)
		f = _mm256_and_si256(f, valid);
	*flag = f;
	return y;
}

/* A register with flagged lanes (step8's flag, all valid), at tile lane
 * base, step k: step8's work again for them, (3)'s correction of the
 * kept midpoint lanes with e != 0, and the lanes not kept by the
 * reference's step; *back: their kernel counts (-1 each), to take back. */
__attribute__((noinline)) static __m256 fix_reg(fpl__acc_tile *T, const ro8_par *P, size_t k,
					       size_t base, __m256 av, __m256 bv, __m256 sv,
					       __m256 y, __m256i lim, __m256i valid, __m256i *back,
					       int lean, int pchk, int exact)
{
	const __m256 s1 = _mm256_fmadd_ps(av, bv, sv);
	const __m256i n = _mm256_castps_si256(s1), ex = _mm256_and_si256(n, P->expm);
	const __m256 nb = _mm256_sub_ps(sv, s1);
	const __m256 e = _mm256_add_ps(_mm256_sub_ps(sv, _mm256_add_ps(s1, nb)),
				       _mm256_fmadd_ps(av, bv, nb));
	const __m256i ie = _mm256_castps_si256(_mm256_cmp_ps(e, _mm256_setzero_ps(), _CMP_NEQ_UQ));
	const __m256i neq = _mm256_castps_si256(_mm256_cmp_ps(y, s1, _CMP_NEQ_UQ));
	const __m256i inex = _mm256_or_si256(ie, neq);
	const __m256i dm = _mm256_srai_epi32(_mm256_xor_si256(_mm256_castps_si256(e), n), 31);
	const __m256i alt = _mm256_add_epi32(n, _mm256_sub_epi32(_mm256_xor_si256(P->half, dm), dm));
	__m256i bad = lean ? _mm256_cmpgt_epi32(ex, P->klim)
			   : _mm256_cmpgt_epi32(_mm256_add_epi32(ex, P->klo), P->klim);
	__m256i mid;
	unsigned bm;

	if (pchk)
		bad = _mm256_or_si256(
			bad, _mm256_cmpgt_epi32(lim, _mm256_add_epi32(_mm256_and_si256(
									  _mm256_castps_si256(bv), P->absm),
								  P->bofs)));
	bad = _mm256_and_si256(bad, valid);
	mid = _mm256_andnot_si256(bad, _mm256_and_si256(
		ie, _mm256_cmpeq_epi32(_mm256_and_si256(n, P->low), P->half)));
	if (!_mm256_testz_si256(mid, mid)) {
		y = _mm256_blendv_ps(y, _mm256_castsi256_ps(alt), _mm256_castsi256_ps(mid));
		__atomic_fetch_add(&fpl__acc_ro32_avx2_mids, 1, __ATOMIC_RELAXED);
	}
	bm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(bad));
	/* the count step8 made, less the right one (bad lanes: none) */
	*back = _mm256_sub_epi32(exact ? neq : inex, _mm256_andnot_si256(bad, inex));
	if (bm)
		y = fix_step(T, k, base, sv, y, bm);
	return y;
}

/* The steps [k0, k1) of a group's four registers s[] (tile lanes q + 8r
 * + l, B's panel at bp); sums and counts in locals so that they stay in
 * registers, the variant known at compile time. */
static inline __attribute__((always_inline)) void
chains(fpl__acc_tile *T, const ro8_par *P, const float *bp, size_t q, size_t k0, size_t k1,
       __m256 *s, const __m256i *vm, __m256i *cnt, size_t *nfix, const int FULL,
       const int LEAN, const int PCHK, const int EXACT)
{
	const double *arow = T->J->A + T->i * T->J->K;
	const __m256i v0 = vm[0], v1 = vm[1], v2 = vm[2], v3 = vm[3];
	__m256 s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
	__m256i c0 = cnt[0], c1 = cnt[1], c2 = cnt[2], c3 = cnt[3];
	size_t k;

	for (k = k0; k < k1; k++) {
		const float a = (float)arow[k];
		const __m256 av = _mm256_set1_ps(a);
		const float *b = bp + k * NT + q;
		const __m256 bv0 = _mm256_loadu_ps(b), bv1 = _mm256_loadu_ps(b + 8);
		const __m256 bv2 = _mm256_loadu_ps(b + 16), bv3 = _mm256_loadu_ps(b + 24);
		__m256i lim = _mm256_setzero_si256(), f0, f1, f2, f3, any;
		__m256 y0, y1, y2, y3;
		if (PCHK) {
			uint32_t u;
			memcpy(&u, &a, sizeof u);
			u &= 0x7fffffffu;
			lim = _mm256_set1_epi32(P->plim[(u >> 23) | (uint32_t)(u == 0) << 8]);
		}
		y0 = step8(P, av, bv0, s0, lim, v0, &c0, &f0, FULL, LEAN, PCHK, EXACT);
		y1 = step8(P, av, bv1, s1, lim, v1, &c1, &f1, FULL, LEAN, PCHK, EXACT);
		y2 = step8(P, av, bv2, s2, lim, v2, &c2, &f2, FULL, LEAN, PCHK, EXACT);
		y3 = step8(P, av, bv3, s3, lim, v3, &c3, &f3, FULL, LEAN, PCHK, EXACT);
		any = _mm256_or_si256(_mm256_or_si256(f0, f1), _mm256_or_si256(f2, f3));
		if (__builtin_expect(!_mm256_testz_si256(any, any), 0)) {
			__m256i back;
			++*nfix;
			if (!_mm256_testz_si256(f0, f0)) {
				y0 = fix_reg(T, P, k, q, av, bv0, s0, y0, lim, v0, &back, LEAN, PCHK, EXACT);
				c0 = _mm256_add_epi32(c0, back);
			}
			if (!_mm256_testz_si256(f1, f1)) {
				y1 = fix_reg(T, P, k, q + 8, av, bv1, s1, y1, lim, v1, &back, LEAN,
					     PCHK, EXACT);
				c1 = _mm256_add_epi32(c1, back);
			}
			if (!_mm256_testz_si256(f2, f2)) {
				y2 = fix_reg(T, P, k, q + 16, av, bv2, s2, y2, lim, v2, &back, LEAN,
					     PCHK, EXACT);
				c2 = _mm256_add_epi32(c2, back);
			}
			if (!_mm256_testz_si256(f3, f3)) {
				y3 = fix_reg(T, P, k, q + 24, av, bv3, s3, y3, lim, v3, &back, LEAN,
					     PCHK, EXACT);
				c3 = _mm256_add_epi32(c3, back);
			}
		}
		s0 = y0;
		s1 = y1;
		s2 = y2;
		s3 = y3;
	}
	s[0] = s0;
	s[1] = s1;
	s[2] = s2;
	s[3] = s3;
	cnt[0] = c0;
	cnt[1] = c1;
	cnt[2] = c2;
	cnt[3] = c3;
}

/* chains() in the variant for (full, lean, pchk, exact); lean tiles need
 * no product test (5). */
static void chains_any(fpl__acc_tile *T, const ro8_par *P, const float *bp, size_t q, size_t k0,
		       size_t k1, __m256 *s, const __m256i *vm, __m256i *cnt, size_t *nfix, int full,
		       int lean, int pchk, int exact)
{
	if (exact && full)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 1, 1, 0, 1);
	else if (exact)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 0, 1, 0, 1);
	else if (lean && full)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 1, 1, 0, 0);
	else if (lean)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 0, 1, 0, 0);
	else if (full && pchk)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 1, 0, 1, 0);
	else if (full)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 1, 0, 0, 0);
	else if (pchk)
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 0, 0, 1, 0);
	else
		chains(T, P, bp, q, k0, k1, s, vm, cnt, nfix, 0, 0, 0, 0);
}

/* R + blk in promo (binary32) for one register, the kept lanes' inexact
 * additions counted in cv, the others by fix_add. */
static __m256 promo_add(fpl__acc_tile *T, const ro8_par *P, __m256 x, __m256 yv, __m256i valid,
			__m256i *cv, uint64_t sn, size_t base)
{
	const __m256 rn = _mm256_add_ps(x, yv);
	const __m256 bb = _mm256_sub_ps(rn, x);
	const __m256 e = _mm256_add_ps(_mm256_sub_ps(x, _mm256_sub_ps(rn, bb)),
				       _mm256_sub_ps(yv, bb));
	const __m256i big = _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(x), P->absm),
					     _mm256_and_si256(_mm256_castps_si256(yv), P->absm));
	const __m256i good = _mm256_and_si256(
		_mm256_and_si256(_mm256_cmpgt_epi32(_mm256_and_si256(_mm256_castps_si256(rn),
								     P->absm), P->pmin),
				 _mm256_cmpgt_epi32(P->pmax, big)), valid);
	const unsigned bad = (unsigned)_mm256_movemask_ps(
		_mm256_castsi256_ps(_mm256_andnot_si256(good, valid)));

	*cv = _mm256_sub_epi32(*cv, _mm256_and_si256(good, _mm256_castps_si256(_mm256_cmp_ps(
							       e, _mm256_setzero_ps(), _CMP_NEQ_UQ))));
	if (__builtin_expect(bad != 0, 0))
		return fix_add(T, sn, base, x, yv, rn, bad);
	return rn;
}

/* The group of tile lanes [q, q + 32) (some valid), from in[] into
 * out[], counts into co[]. */
static void group(fpl__acc_tile *T, const ro8_par *P, size_t q, int lean, int pchk, int exact,
		  const float *in, float *out, uint32_t *co)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const size_t K = J->K, nj = T->nj;
	const float *bp = J->Bf + T->j0 / NT * K * NT;
	const int blocked = m->order == FPL_ORDER_BLOCKED, full = nj >= q + 8 * NR;
	const size_t B = blocked ? m->block : K;
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256 S[NR], R[NR];
	__m256i cnt[NR], valid[NR];
	size_t k0, r, nfix;

	for (r = 0; r < NR; r++) {
		valid[r] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nj - (int)(q + 8 * r)), lane);
		R[r] = S[r] = _mm256_loadu_ps(in + q + 8 * r);
		cnt[r] = _mm256_setzero_si256();
	}
	for (k0 = 0; k0 < K; k0 += B) {
		const size_t k1 = K - k0 < B ? K : k0 + B;
		if (blocked)
			for (r = 0; r < NR; r++)
				S[r] = _mm256_setzero_ps();
		nfix = 0;
		chains_any(T, P, bp, q, k0, k1, S, valid, cnt, &nfix, full, lean, pchk, exact);
		/* sums past 2^G in more than one step in eight: the checked
		 * variant is faster for the blocks left (the same results) */
		exact = exact && nfix <= (k1 - k0) / 8;
		if (!blocked)
			break;
		if (!k0 && !J->C && J->keep_first) {
			for (r = 0; r < NR; r++)
				R[r] = S[r];
			continue;
		}
		for (r = 0; r < NR; r++)
			R[r] = promo_add(T, P, R[r], S[r], valid[r], &cnt[r], K + k0 / B, q + 8 * r);
	}
	for (r = 0; r < NR; r++) {
		_mm256_storeu_ps(out + q + 8 * r, blocked ? R[r] : S[r]);
		_mm256_storeu_si256((__m256i *)(co + q + 8 * r), cnt[r]);
	}
}

int fpl__acc_ro32_avx2(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const fpl_format *f = &m->acc;
	const size_t nj = T->nj;
	const int blocked = m->order == FPL_ORDER_BLOCKED;
	const int top = f->emax < 104 + f->m ? f->emax : 104 + f->m;
	/* some product of a value of A's format and one of B's below 2^-126 */
	const int pchk = m->a.emin - m->a.m + m->b.emin - m->b.m < -126;
	const int G = 24 + m->a.emin - m->a.m + m->b.emin - m->b.m;
	int lean = J->ro32 == 2, exact;
	float in[NT], out[NT];
	uint32_t co[NT];
	ro8_par P;
	size_t jj, q;

	for (jj = 0; jj < nj; jj++) {	/* every initial value a binary32 value */
		in[jj] = (float)res[jj];
		if (fpl__bits((double)in[jj]) != fpl__bits(res[jj]))
			return 0;
		if (fpl__bits(res[jj]) == FPL__SIGN_BIT && !blocked)
			lean = 0;	/* a chain from -0 */
	}
	for (; jj < NT; jj++)
		in[jj] = 0.0f;
	P.expm = _mm256_set1_epi32(0x7f800000);
	P.cadd = _mm256_set1_epi32(((23 - f->m) << 23) | 0x00400000);
	P.low = _mm256_set1_epi32((1 << (23 - f->m)) - 1);
	P.half = _mm256_set1_epi32(1 << (22 - f->m));
	/* kept: s1's exponent field in [emin + 128, top + 127), as
	 * field - (emin + 128) below the span, unsigned, by a signed compare
	 * after adding INT32_MIN; lean tiles: below top + 127 */
	P.klo = _mm256_set1_epi32(INT32_MAX - ((f->emin + 128) << 23) + 1);
	P.klim = _mm256_set1_epi32(INT32_MIN + (((top - f->emin - 1) << 23) - 1));
	if (lean)
		P.klim = _mm256_set1_epi32(((top + 127) << 23) - 1);
	P.absm = _mm256_set1_epi32(0x7fffffff);
	P.bofs = _mm256_set1_epi32(0x7fffffff);
	P.pmin = _mm256_set1_epi32(0x00800000);	/* |rn| > 2^-126 */
	P.pmax = _mm256_set1_epi32(0x7e800000);	/* |R|, |blk| < 2^126 */
	/* (6): every partial sum of a block a multiple of q_a q_b */
	exact = lean && blocked && G >= f->emin + 2 && G - 24 <= f->emax - f->m;
	P.kexact = _mm256_set1_epi32(((G < top ? G : top) + 127) * (1 << 23) - 1);
	if (pchk && !lean)
		plim_init(P.plim);
	for (q = 0; q < nj; q += 8 * NR)
		group(T, &P, q, lean, pchk && !lean, exact, in, out, co);
	for (jj = 0; jj < nj; jj++) {
		res[jj] = out[jj];
		if (co[jj])
			T->fl[jj] |= FPL_FLAG_INEXACT;
		T->cnt[__builtin_ctz(FPL_FLAG_INEXACT)] += co[jj];
	}
	__atomic_fetch_add(&fpl__acc_ro32_avx2_runs, 1, __ATOMIC_RELAXED);
	return 1;
}
