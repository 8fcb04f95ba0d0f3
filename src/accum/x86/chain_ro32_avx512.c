/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_ro32_avx512.c - sequential and blocked tiles in mode ne
 * whose inputs and accumulator live inside binary32 (J->ro32,
 * chain_fast.c's ro32_ok: bf16, fp16, e4m3fn, e5m2 inputs into an fp16,
 * bf16 or e4m3fn-like accumulator, blocked sums promoted to IEEE fp32), in
 * binary32 registers: sixteen outputs a register, the 64 chains of a tile
 * in four registers for all of K, each step two fma with embedded
 * rounding, a round-to-odd from them and one add-and-subtract rounding
 * into acc; no control state is read or changed ({sae} forms).
 *
 * A step's exact value is x = s + a*b (a, b values of A's and B's
 * formats, s a value of acc: all binary32 values, so the conversions to
 * and from the tile's doubles are exact, NaNs included: the engine's NaNs
 * are quiet with at most m payload bits, and a tile whose initial values
 * do not survive the round trip bit for bit is left to chain_fast.c).
 * The reference's step is RN_acc(x) (fpl__fma_ix, nearest-even), with
 * its flags.
 *
 * (1) Round to odd.  rd = fma(a, b, s) rounded down, ru = rounded up
 *   (each one rounding of the exact x).  When x is a binary32 number rd =
 *   ru = x; otherwise they are its two binary32 neighbours, consecutive
 *   encodings of one sign, one of them with an odd significand.  ro =
 *   rd when rd's last bit is 1, else ru: that is x itself or the odd
 *   neighbour, i.e. RO(x), x rounded to odd at 24 bits.  RO is monotone
 *   and fixes every binary32 number.  (x = 0 exactly: ro is +0 or -0, a
 *   lane left to the reference, (3), or kept in a lean tile, (5).)
 * (2) RN_acc(RO(x)) = RN_acc(x), with acc's m <= 21.  At |x| >= 2^emin
 *   (the lanes kept, (3)) let 2^e <= |x| < 2^(e+1); acc's values and
 *   the midpoints between them near x are multiples of 2^(e-m-1), hence
 *   of 2^(e-22) = 2 ulp32(x): even binary32 numbers (at a binade edge,
 *   2^e itself is even, and so is 2^e - 2^(e-23) two binary32 steps below).
 *   If x is not a binary32 number, x and RO(x) lie strictly inside one
 *   interval between consecutive even binary32 numbers, which contains
 *   no value of acc and no midpoint, so RN_acc is constant on it.
 *   Inexactness: if x is a binary32 number, RO(x) = x.  Otherwise
 *   RO(x) is odd, so no value of acc, and x no value of acc either (a
 *   value of acc is a binary32 number).  So RN_acc(x) != x iff y != ro.
 * (3) The lanes kept: 2^(emin+1) <= |rd| < 2^top, top = min(emax,
 *   104 + m), tested on rd's exponent field (rd, not ro: it is ready one
 *   blend earlier).  Then 2^emin <= |x| < 2^top: for x > 0, x >= rd, and
 *   x < 2^top unless x = rd = ru (binary32 numbers in between); for x <
 *   0, |x| <= |rd| and |x| >= |ru| >= |rd| - ulp32(rd) >= 2^emin.  So x
 *   is not tiny under either tininess rule, RN_acc(x) <= 2^top <= max
 *   (ro32_ok requires max >= 2^emax): no overflow, and the only flag is
 *   inexact.  Every other lane (zero, tiny, the lowest and the top
 *   binades, inf, NaN, and the binary32 overflow of an fma) is
 *   recomputed by fpl__acc_ne64_slow from the step's operands as doubles
 *   and its draw index, as the reference does (ne takes no draws).
 * (4) y = (ro + C) - C, C = 1.5 * 2^23 * q, q = 2^(e-m) with 2^e <= |rd|
 *   < 2^(e+1) (C's bits: rd's exponent field plus (23-m) << 23, fraction
 *   2^22; e - m + 23 < 127 by top's bound), both additions with embedded
 *   nearest-even rounding: x86/chain_ne_avx512.c's argument with 24 bits
 *   for 53 (binary32 numbers in [2^23 q, 2^24 q) are the multiples of q
 *   there; |ro| < 2^(m+1) q <= 2^22 q since m <= 21; the subtraction
 *   exact by Sterbenz) makes y the multiple of q nearest to ro, ties to
 *   even.  ro lies in rd's binade (ru = rd + ulp is odd when ro = ru, so
 *   no power of two), except for x < 0 with |rd| = 2^e and ro = ru =
 *   -(2^e - ulp32): there q is twice acc's quantum at ro, and y = -2^e,
 *   which is also RN_acc(ro) (ro within one ulp32 of a multiple of 2q).
 *   So y = RN_acc(ro) = RN_acc(x) (2).  Inexact: in the kept binades
 *   acc's values are the binary32 numbers whose low 23 - m fraction bits
 *   are 0, so y != ro iff ro has one of those bits set: the count tests
 *   ro's bits (every lane; a bad lane's count is taken back before its
 *   fixup).
 * (5) Lean tiles (J->ro32 == 2: acc with subnormals and a signed zero,
 *   no DAZ, q_a * q_b >= q_acc, chain_fast.c's ro32_ok) keep every lane
 *   with |rd| < 2^top, the low end included.  Every product and every
 *   value of acc is then a multiple of q_acc = 2^(emin-m), so is x, and
 *   an x with |x| < 2^(emin+1) has at most m+1 significant bits above
 *   q_acc: it is a value of acc (a subnormal, 0, or in the lowest
 *   binade), a binary32 number (|x| >= 2^-147 or 0), so rd = ru = ro =
 *   x, y = (x + C) - C = x (rounding at m+1 bits of x's own binade
 *   changes nothing; x = 0 gives +0), and the reference returns x with
 *   no flag (underflow needs an inexact result), the count adding
 *   nothing (ro's low bits are 0).  The zero's sign: x = 0 is +0 in ne
 *   unless s and a*b are both -0, and a running sum is -0 only after
 *   such a step (a nonzero x never rounds to 0 here, and the fixed lanes
 *   of the top binades give no zero), so a chain that starts at +0 (every
 *   blocked chain, a sequential one without -0 in C: the tile checks it)
 *   never meets -0.
 * Lanes past the tile's end (B's panel is padded with +0) are never kept
 * nor fixed; their values are discarded.
 *
 * The block additions of blocked:B:P (P = IEEE binary32, acc_rnd ne):
 * R' = RN32(R + blk), R and blk binary32 values.  rn, rd, ru: the sum
 * rounded three ways (embedded); RN32 is rn; kept when 2^-126 < |rn| <=
 * max32: then |R + blk| > 2^-126 (rn is monotone, 2^-126 + 2^-149 the
 * least binary32 above 2^-126, its rounding interval above 2^-126) so
 * neither tininess rule calls it tiny, and rn is finite: no overflow;
 * inexact iff rd != ru.  Other lanes run fpl__add_ix with the step
 * number K + block, as chain_fast.c's blocked() does.  Without C a
 * keep_first job takes block 0's sum itself as R (chain_fast.c).
 * Inexact counts are kept per lane in 32 bits (ro_ok: K < 2^30).
 */
#include <immintrin.h>
#include <string.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE
_Static_assert(FPL__ACC_TILE == 64, "a tile is four registers of sixteen lanes");
#define RN_ (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define RD_ (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define RU_ (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)

uint64_t fpl__acc_ro32_runs;

typedef struct ro_par {
	__m512i expm, eminf, span, cadd, one, low, m1, absm, pmin1, pspan;
} ro_par;

/* The lanes of bad (register r, step k) by the reference's step. */
__attribute__((noinline)) static __m512 fix_step(fpl__acc_tile *T, size_t k, size_t base,
						__m512 sold, __m512 y, unsigned bad)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0 + base;
	const uint64_t idx0 = fpl__acc_idx(T, k, base);
	float so[16], yo[16];

	_mm512_storeu_ps(so, sold);
	_mm512_storeu_ps(yo, y);
	while (bad) {
		int l = __builtin_ctz(bad);
		bad &= bad - 1;
		yo[l] = (float)fpl__acc_ne64_slow(T, a, b[l], (double)so[l], idx0 + (uint64_t)l,
						  base + (size_t)l);
	}
	return _mm512_loadu_ps(yo);
}

/* The block addition's lanes of bad by fpl__add_ix in promo. */
__attribute__((noinline)) static __m512 fix_add(fpl__acc_tile *T, uint64_t sn, size_t base,
					       __m512 x, __m512 yv, __m512 r, unsigned bad)
{
	const fpl_accum_model *m = T->J->m;
	const uint64_t idx0 = fpl__acc_idx(T, sn, base);
	float xo[16], yo[16], ro[16];

	_mm512_storeu_ps(xo, x);
	_mm512_storeu_ps(yo, yv);
	_mm512_storeu_ps(ro, r);
	while (bad) {
		int l = __builtin_ctz(bad);
		unsigned fl = 0;
		bad &= bad - 1;
		ro[l] = (float)fpl__add_ix(&m->promo, (double)xo[l], (double)yo[l], m->acc_rnd,
					   T->J->st, idx0 + (uint64_t)l, &fl);
		fpl__acc_note(T, base + (size_t)l, fl);
	}
	return _mm512_loadu_ps(ro);
}

/* One step of one register: (1), (3), (4).  y: the rounding; ro: the
 * round to odd; every lane's inexact step counted in cv (a bad lane's
 * count is taken back by fix_step); bad: the lanes of valid not kept. */
#define STEP(y, ro, sv, bv, valid, cv, bad)                                                     \
	do {                                                                                   \
		const __m512 rd_ = _mm512_fmadd_round_ps(av, (bv), (sv), RD_);                 \
		const __m512 ru_ = _mm512_fmadd_round_ps(av, (bv), (sv), RU_);                 \
		const __m512i ex_ = _mm512_and_si512(_mm512_castps_si512(rd_), P->expm);        \
		const __m512 c_ = _mm512_castsi512_ps(_mm512_add_epi32(ex_, P->cadd));         \
		(ro) = _mm512_mask_blend_ps(                                                   \
			_mm512_test_epi32_mask(_mm512_castps_si512(rd_), P->one), ru_, rd_);   \
		(bad) = LEAN ? _mm512_mask_cmpge_epu32_mask((valid), ex_, P->span)              \
			     : _mm512_mask_cmpge_epu32_mask((valid),                            \
							    _mm512_sub_epi32(ex_, P->eminf),    \
							    P->span);                           \
		(y) = _mm512_sub_round_ps(_mm512_add_round_ps((ro), c_, RN_), c_, RN_);         \
		(cv) = _mm512_mask_sub_epi32(                                                  \
			(cv), _mm512_test_epi32_mask(_mm512_castps_si512(ro), P->low), (cv),   \
			P->m1);                                                                \
	} while (0)

/* R + blk in promo (binary32) for one register, the kept lanes' inexact
 * additions counted in cv, the others by fix_add. */
static inline __m512 promo_add(fpl__acc_tile *T, const ro_par *P, __m512 x, __m512 yv,
			       __mmask16 valid, __m512i *cv, uint64_t sn, size_t base)
{
	const __m512 rn = _mm512_add_round_ps(x, yv, RN_);
	const __m512 rd = _mm512_add_round_ps(x, yv, RD_);
	const __m512 ru = _mm512_add_round_ps(x, yv, RU_);
	const __m512i A = _mm512_and_si512(_mm512_castps_si512(rn), P->absm);
	const __mmask16 good = _mm512_mask_cmple_epu32_mask(valid, _mm512_sub_epi32(A, P->pmin1),
							     P->pspan);
	const __mmask16 bad = _kandn_mask16(good, valid);

	*cv = _mm512_mask_sub_epi32(*cv, _mm512_mask_cmp_ps_mask(good, rd, ru, _CMP_NEQ_UQ), *cv,
				    P->m1);
	if (__builtin_expect(bad != 0, 0))
		return fix_add(T, sn, base, x, yv, rn, bad);
	return rn;
}

/* The steps [k0, k1) of the four registers s[] (tile lanes 16r + l);
 * the sums and counts in locals so that they stay in registers, FULL
 * (every lane valid) known at compile time. */
static inline __attribute__((always_inline)) void
chains(fpl__acc_tile *T, const ro_par *P, const float *bp, size_t k0, size_t k1, __m512 *s,
       const __mmask16 *vm, __m512i *cnt, const int FULL, const int LEAN)
{
	const double *arow = T->J->A + T->i * T->J->K;
	const __mmask16 v0 = FULL ? 0xffff : vm[0], v1 = FULL ? 0xffff : vm[1];
	const __mmask16 v2 = FULL ? 0xffff : vm[2], v3 = FULL ? 0xffff : vm[3];
	__m512 s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
	__m512i c0 = cnt[0], c1 = cnt[1], c2 = cnt[2], c3 = cnt[3];
	size_t k;

	for (k = k0; k < k1; k++) {
		const __m512 av = _mm512_set1_ps((float)arow[k]);
		const float *b = bp + k * NT;
		__mmask16 b0, b1, b2, b3;
		__m512 y0, y1, y2, y3, r0, r1, r2, r3;
		STEP(y0, r0, s0, _mm512_loadu_ps(b), v0, c0, b0);
		STEP(y1, r1, s1, _mm512_loadu_ps(b + 16), v1, c1, b1);
		STEP(y2, r2, s2, _mm512_loadu_ps(b + 32), v2, c2, b2);
		STEP(y3, r3, s3, _mm512_loadu_ps(b + 48), v3, c3, b3);
		/* a bad lane by the reference, the kernel's count of it (ro's
		 * low bits not 0) taken back */
#define FIX(n, base)                                                                           \
	do {                                                                                   \
		c##n = _mm512_mask_add_epi32(                                                  \
			c##n, b##n & _mm512_test_epi32_mask(_mm512_castps_si512(r##n), P->low), \
			c##n, P->m1);                                                          \
		y##n = fix_step(T, k, (base), s##n, y##n, b##n);                               \
	} while (0)
		if (__builtin_expect(!_kortestz_mask16_u8(_kor_mask16(b0, b1), _kor_mask16(b2, b3)), 0)) {
			if (b0)
				FIX(0, 0);
			if (b1)
				FIX(1, 16);
			if (b2)
				FIX(2, 32);
			if (b3)
				FIX(3, 48);
		}
#undef FIX
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
#undef STEP

int fpl__acc_ro32_avx512(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const fpl_accum_model *m = J->m;
	const fpl_format *f = &m->acc;
	const size_t K = J->K, nj = T->nj;
	const float *bp = J->Bf + T->j0 / NT * K * NT;
	const int blocked = m->order == FPL_ORDER_BLOCKED;
	const size_t B = blocked ? m->block : K;
	const int top = f->emax < 104 + f->m ? f->emax : 104 + f->m;
	int lean = J->ro32 == 2;
	__m512 S[4], R[4];
	__m512i cnt[4];
	__mmask16 valid[4];
	float in[NT];
	uint32_t co[16];
	ro_par P;
	size_t jj, k0, r, l;

	for (jj = 0; jj < nj; jj++) {	/* every initial value a binary32 value */
		in[jj] = (float)res[jj];
		if (fpl__bits((double)in[jj]) != fpl__bits(res[jj]))
			return 0;
		if (fpl__bits(res[jj]) == FPL__SIGN_BIT && !blocked)
			lean = 0;	/* a chain from -0 */
	}
	for (; jj < NT; jj++)
		in[jj] = 0.0f;
	P.expm = _mm512_set1_epi32(0x7f800000);
	/* kept: rd's exponent field in [emin + 1, top) */
	P.eminf = _mm512_set1_epi32((f->emin + 128) << 23);
	P.span = _mm512_set1_epi32((top - f->emin - 1) << 23);
	P.low = _mm512_set1_epi32((1 << (23 - f->m)) - 1);
	if (lean)	/* kept: rd's exponent field below top */
		P.span = _mm512_set1_epi32((top + 127) << 23);
	P.cadd = _mm512_set1_epi32(((23 - f->m) << 23) | 0x00400000);
	P.one = _mm512_set1_epi32(1);
	P.m1 = _mm512_set1_epi32(-1);
	P.absm = _mm512_set1_epi32(0x7fffffff);
	P.pmin1 = _mm512_set1_epi32(0x00800001);	/* bits(2^-126) + 1 */
	P.pspan = _mm512_set1_epi32(0x7f7fffff - 0x00800001);
	for (r = 0; r < 4; r++) {
		const size_t n = nj > 16 * r ? (nj - 16 * r < 16 ? nj - 16 * r : 16) : 0;
		valid[r] = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
		R[r] = S[r] = _mm512_loadu_ps(in + 16 * r);
		cnt[r] = _mm512_setzero_si512();
	}
	for (k0 = 0; k0 < K; k0 += B) {
		const size_t k1 = K - k0 < B ? K : k0 + B;
		if (blocked)
			for (r = 0; r < 4; r++)
				S[r] = _mm512_setzero_ps();
		if (lean && nj == NT)
			chains(T, &P, bp, k0, k1, S, valid, cnt, 1, 1);
		else if (lean)
			chains(T, &P, bp, k0, k1, S, valid, cnt, 0, 1);
		else if (nj == NT)
			chains(T, &P, bp, k0, k1, S, valid, cnt, 1, 0);
		else
			chains(T, &P, bp, k0, k1, S, valid, cnt, 0, 0);
		if (!blocked)
			break;
		if (!k0 && !J->C && J->keep_first) {
			for (r = 0; r < 4; r++)
				R[r] = S[r];
			continue;
		}
		for (r = 0; r < 4; r++)
			R[r] = promo_add(T, &P, R[r], S[r], valid[r], &cnt[r], K + k0 / B, 16 * r);
	}
	for (r = 0; r < 4; r++) {
		float out[16];
		_mm512_storeu_ps(out, blocked ? R[r] : S[r]);
		_mm512_storeu_si512(co, cnt[r]);
		for (l = 0; l < 16 && 16 * r + l < nj; l++) {
			res[16 * r + l] = out[l];
			if (co[l])
				T->fl[16 * r + l] |= FPL_FLAG_INEXACT;
			T->cnt[__builtin_ctz(FPL_FLAG_INEXACT)] += co[l];
		}
	}
	__atomic_fetch_add(&fpl__acc_ro32_runs, 1, __ATOMIC_RELAXED);
	return 1;
}
