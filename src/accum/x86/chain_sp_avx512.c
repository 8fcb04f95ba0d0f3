/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_sp_avx512.c - the EXACT64 chains (chain_fast.c) in mode
 * sp on AVX-512: one lane = one output's chain, 32 outputs of a tile in
 * four registers for the whole range of steps, each step's stochastic
 * rounding done in registers with the lane's draw computed there too.
 *
 * Per step k and lane j: t = fma(a_k, b_kj, s_j) in binary64.  The
 * EXACT64 condition (chain_fast.c, exact64_ok: the path this kernel
 * serves, or its verified variant below) makes s + a*b exact in binary64 for every finite operand, so
 * the fma is that exact value with no rounding at all, and the
 * reference's step, fpl__fma_ix(acc, a, b, s, sp, st, idx), is the engine's
 * sp rounding of t into acc with the draw d = fpl_random_draw(seed,
 * stream, idx), idx = fpl__acc_idx(T, k, j) (accum_internal.h).
 *
 * The verified variant (J->verify: chain_fast.c's verify_sp_ok, for
 * sequential and blocked jobs in mode sp whose products are exact in
 * binary64 but whose s + a*b may not be, e.g. bf16 x bf16 into fp16):
 * p = a*b is exact (condition (1) of chain_fast.c's header), t = s + p
 * is binary64's rounded sum and Knuth's TwoSum gives its error e = (s +
 * p) - t exactly (|s + p| < 2^1023 by verify_sp_ok; TwoSum is exact with
 * gradual underflow too; -ffp-contract=off keeps the operations apart).
 * A lane with e != 0, or e NaN (an inf or NaN operand), is bad and goes
 * to the reference; on the others t is the exact s + a*b and everything
 * below applies unchanged.
 *
 * The draw.  fpl__draw(key, idx) = mix64(key + (idx + 1) G) with G =
 * 0x9e3779b97f4a7c15 and key = fpl__draw_key(seed, stream) (engine/
 * internal.h; fpl_random_draw is exactly that).  Lane l of the register
 * at tile lane jb has idx = idx(k, jb) + l, and idx(k + ks, j) = idx(k, j)
 * + ks MN (fpl__acc_idx is linear in the step), so the argument of mix64
 * is z(k, jb) + l G with z(k + ks, jb) = z(k, jb) + ks MN G and z(k, jb +
 * 8) = z(k, jb) + 8 G, all mod 2^64 as the scalar code computes it.  The
 * kernel keeps z(k, 0) + l G in one register, adds 8 G per register and
 * ks MN G per step, and applies mix64 (its three xorshifts and two
 * VPMULLQ, the 64-bit low products the scalar uint64_t multiplications
 * give): every lane's draw is the reference's, bit for bit.
 *
 * The rounding (round_direct.c's kd_pick, case FPL_RND_SP, whose
 * argument this reuses).  Let u = bits(t), A = u without its sign, s = 52
 * - m (m = acc's fraction bits, m <= 50 on this path: J->simd >= 2), mask
 * = 2^s - 1, q = 2^s.  For 2^emin <= |t|, acc's quantum at t is the last
 * kept bit of t's significand, bit s of A: the engine rounds |t| away
 * from zero iff T + r >= 2^R, T the R = sr_bits bits of |t| just below
 * that bit (zeros past t's own 52 fraction bits: t is exact) and r the
 * top R bits of d.  With T' = A << (64 - s) (the s bits below the kept
 * bit, left-aligned in 64 bits; the sign and kept bits fall off) and r' =
 * d & ~(2^(64-R) - 1), the carry out of 64 bits of T' + r' is that
 * decision: T' = T 2^(64-R) + T'' with T'' < 2^(64-R) when s >= R (the
 * bits below the top R cannot carry into them, r' having zeros there)
 * and T' = T 2^(64-R) exactly when s < R (T is the s bits followed by
 * zeros).  The carry is seen as T' + r' < T' (unsigned).  The result is
 * then u & ~mask (the truncation, sign kept) plus q when rounding away:
 * bits(|t|) truncated plus one quantum is the next value of the binade's
 * grid, and the carry into the exponent field gives 2^(e+1) exactly as
 * the engine's (a magnitude below 2^63, no carry into the sign).
 *
 * Lanes kept: bits(2^emin) <= A <= bits(max), tested as (A - bits(2^emin))
 * <= (bits(max) - bits(2^emin)) unsigned.  Such a lane is neither zero nor
 * inf nor NaN; tininess cannot hold under either rule (|t| >= 2^emin and
 * its rounding, at least the truncation, >= 2^emin: a value of acc); and
 * it cannot overflow: the truncation and bits(max) are both multiples of
 * q in the bit encoding (acc's values have at most m fraction bits), so
 * a truncation below bits(max) plus q is at most bits(max), and a
 * truncation equal to it means A = bits(max) exactly, with nothing to
 * round.  Its one possible flag is inexact, raised iff A & mask != 0
 * (t is the exact value; the rounding then moves it either way), counted
 * per lane.  fnuz's zeros never arise (the result is >= 2^emin).  Every
 * other lane (zero t: the sign of an exact zero sum, fnuz; tiny;
 * beyond max; inf or NaN operands; the masked lanes past the tile's
 * end) is recomputed from the step's original operands a_k, b_kj, s_j by
 * fpl__acc_ne64_slow, the reference's fpl__fma_ix in acc's mode (sp)
 * with the same draw index, which notes its flags and counts as the
 * reference does; the kernel counts nothing for such a lane (its t may
 * be a NaN whose payload depends on the operand order the compiler
 * picked for the addition).  The discarded vector results of those lanes
 * and whatever MXCSR flags their computation raised are never read (the
 * engine keeps its own flags; this file changes no control state).
 */
#include <immintrin.h>
#include <string.h>

#include "accum/accum_internal.h"

#define G 0x9e3779b97f4a7c15ull

typedef struct spar {
	__m512i mask, q, lal, rmask, signv, minv, range, m1, c1, c2, g8;
} spar;

/* mix64 (fpl__mix64) on eight lanes. */
static inline __attribute__((always_inline)) __m512i mix(const spar *P, __m512i z)
{
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
	z = _mm512_mullo_epi64(z, P->c1);
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
	z = _mm512_mullo_epi64(z, P->c2);
	return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* One step of one register: y = the sp rounding of t = fma(av, bv, sv)
 * with draws mix(z), bad = the lanes of valid the kernel cannot do, cv
 * counts the inexact lanes among the others (a bad lane's t may be a NaN
 * whose payload the compiler's choice of operand order decides: never
 * read). */
/* t (the step's exact value on the lanes kept): fma(av, bv, sv), or when
 * VER, p = av*bv (exact) and t = sv + p with TwoSum's error, the lanes
 * where it is not 0 (or NaN) in *ev. */
static inline __attribute__((always_inline)) __m512i tval(__m512d av, __m512d bv, __m512d sv,
							  const int VER, __mmask8 *ev)
{
	if (VER) {
		__m512d p = _mm512_mul_pd(av, bv), t = _mm512_add_pd(sv, p);
		__m512d bb = _mm512_sub_pd(t, sv);
		*ev = _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_sub_pd(sv, _mm512_sub_pd(t, bb)),
						       _mm512_sub_pd(p, bb)),
					 _mm512_setzero_pd(), _CMP_NEQ_UQ);
		return _mm512_castpd_si512(t);
	}
	*ev = 0;
	return _mm512_castpd_si512(_mm512_fmadd_pd(av, bv, sv));
}

static inline __attribute__((always_inline)) __m512d calc(const spar *P, __m512d av, __m512d bv,
							  __m512d sv, __m512i z, __m512i *cv,
							  __mmask8 valid, __mmask8 *bad,
							  const int VER)
{
	__mmask8 ev;
	__m512i u = tval(av, bv, sv, VER, &ev);
	__m512i d = _mm512_and_si512(mix(P, z), P->rmask);
	__m512i T = _mm512_sllv_epi64(u, P->lal);
	__m512i tr = _mm512_andnot_si512(P->mask, u);
	__mmask8 up = _mm512_cmplt_epu64_mask(_mm512_add_epi64(T, d), T);
	__m512i A = _mm512_andnot_si512(P->signv, u);

	*bad = _mm512_mask_cmpgt_epu64_mask(valid, _mm512_sub_epi64(A, P->minv), P->range)
	       | (ev & valid);
	*cv = _mm512_mask_sub_epi64(*cv, _kandn_mask8(*bad, _mm512_test_epi64_mask(u, P->mask)),
				    *cv, P->m1);
	return _mm512_castsi512_pd(_mm512_mask_add_epi64(tr, up, tr, P->q));
}

/* The bad lanes of one register (tile lane base, step k) by the
 * reference's step (calc counted nothing for them). */
__attribute__((noinline)) static __m512d fixup(fpl__acc_tile *T, size_t k, size_t base,
					      __m512d sold, __m512d y, __mmask8 bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	unsigned lanes = bad;
	double so[8], yo[8];

	_mm512_storeu_pd(so, sold);
	_mm512_storeu_pd(yo, y);
	while (lanes) {
		int l = __builtin_ctz(lanes);
		lanes &= lanes - 1;
		yo[l] = fpl__acc_ne64_slow(T, a, b[l], so[l], idx0 + (uint64_t)l, base + (size_t)l);
	}
	return _mm512_loadu_pd(yo);
}

static void add_counts(uint64_t *cnt, __m512i cv, size_t n)
{
	int64_t co[8];
	size_t l;

	_mm512_storeu_si512(co, cv);
	for (l = 0; l < n; l++)
		cnt[l] += (uint64_t)co[l];
}

uint64_t fpl__acc_sp64_avx512_runs;

__attribute__((always_inline)) static inline void run(fpl__acc_tile *T, size_t k0, size_t k1,
						     size_t ks, double *s, uint64_t *cnt,
						     const int VER)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *f = &J->m->acc;
	const size_t nj = T->nj;
	const size_t N = J->Bp ? FPL__ACC_TILE : J->N;
	const uint64_t minb = fpl__bits(f->min_normal), maxb = fpl__bits(f->max);
	const uint64_t sh = (uint64_t)(52 - f->m), R = J->kp.sr_bits;
	const uint64_t key = J->kp.key, stepg = (uint64_t)ks * J->MN * G;
	const double *arow = J->A + T->i * J->K;
	const double *bcol = J->Bp ? J->Bp + T->j0 / FPL__ACC_TILE * J->K * FPL__ACC_TILE
				   : J->B + T->j0;
	const __m512i lanes = _mm512_set_epi64((long long)(7 * G), (long long)(6 * G),
					       (long long)(5 * G), (long long)(4 * G),
					       (long long)(3 * G), (long long)(2 * G), (long long)G, 0);
	size_t j0 = 0, k;
	spar P;

	__atomic_fetch_add(&fpl__acc_sp64_avx512_runs, 1, __ATOMIC_RELAXED);
	P.mask = _mm512_set1_epi64((long long)((1ull << sh) - 1));
	P.q = _mm512_set1_epi64((long long)(1ull << sh));
	P.lal = _mm512_set1_epi64((long long)(64 - sh));
	P.rmask = _mm512_set1_epi64((long long)(~0ull << (64 - R)));	/* 1 <= R <= 32 */
	P.signv = _mm512_set1_epi64((long long)0x8000000000000000ull);
	P.minv = _mm512_set1_epi64((long long)minb);
	P.range = _mm512_set1_epi64((long long)(maxb - minb));
	P.m1 = _mm512_set1_epi64(-1);
	P.c1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
	P.c2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
	P.g8 = _mm512_set1_epi64((long long)(8 * G));
	/* 32 lanes (four registers) at a time, the last register masked */
	for (; j0 < nj; j0 += 32) {
		const size_t nr = nj - j0 >= 32 ? 4 : (nj - j0 + 7) / 8;	/* registers used */
		__mmask8 v[4];
		__m512d x[4];
		__m512i c[4];
		__m512i z = _mm512_add_epi64(
			_mm512_set1_epi64((long long)(key + (fpl__acc_idx(T, k0, j0) + 1) * G)), lanes);
		const __m512i zstep = _mm512_set1_epi64((long long)stepg);
		size_t r;

		for (r = 0; r < 4; r++) {
			size_t n = r < nr ? (nj - j0 - 8 * r < 8 ? nj - j0 - 8 * r : 8) : 0;
			v[r] = (__mmask8)((1u << n) - 1);
			x[r] = _mm512_maskz_loadu_pd(v[r], s + j0 + 8 * r);
			c[r] = _mm512_setzero_si512();
		}
		if (nr == 4 && v[3] == 0xff) {
			for (k = k0; k < k1; k += ks, z = _mm512_add_epi64(z, zstep)) {
				const __m512d av = _mm512_set1_pd(arow[k]);
				const double *b = bcol + k * N + j0;
				__m512d y[4];
				__mmask8 e[4];
				__m512i zr = z;
				for (r = 0; r < 4; r++) {
					y[r] = calc(&P, av, _mm512_loadu_pd(b + 8 * r), x[r], zr, &c[r],
						    0xff, &e[r], VER);
					zr = _mm512_add_epi64(zr, P.g8);
				}
				if (__builtin_expect(!_kortestz_mask8_u8(_kor_mask8(e[0], e[1]),
									 _kor_mask8(e[2], e[3])), 0))
					for (r = 0; r < 4; r++)
						if (e[r])
							y[r] = fixup(T, k, j0 + 8 * r, x[r], y[r], e[r]);
				for (r = 0; r < 4; r++)
					x[r] = y[r];
			}
		} else {
			for (k = k0; k < k1; k += ks, z = _mm512_add_epi64(z, zstep)) {
				const __m512d av = _mm512_set1_pd(arow[k]);
				const double *b = bcol + k * N + j0;
				__m512i zr = z;
				for (r = 0; r < nr; r++) {
					__mmask8 e;
					__m512d y = calc(&P, av, _mm512_maskz_loadu_pd(v[r], b + 8 * r),
							 x[r], zr, &c[r], v[r], &e, VER);
					if (e)
						y = fixup(T, k, j0 + 8 * r, x[r], y, e);
					x[r] = y;
					zr = _mm512_add_epi64(zr, P.g8);
				}
			}
		}
		for (r = 0; r < nr; r++) {
			_mm512_mask_storeu_pd(s + j0 + 8 * r, v[r], x[r]);
			add_counts(cnt + j0 + 8 * r, c[r], (size_t)__builtin_popcount(v[r]));
		}
	}
}

void fpl__acc_sp64_avx512(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			  uint64_t *cnt)
{
	if (T->J->verify)
		run(T, k0, k1, ks, s, cnt, 1);
	else
		run(T, k0, k1, ks, s, cnt, 0);
}
