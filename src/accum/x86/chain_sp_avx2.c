/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_sp_avx2.c - the EXACT64 chains (chain_fast.c) in mode
 * sp on AVX2: x86/chain_sp_avx512.c's kernel with four lanes per
 * register.  One lane = one output's chain; a chunk of NL outputs of a
 * tile is held in registers over the steps, each step's stochastic
 * rounding done in registers, the lanes' draws computed with vector
 * operations too (a block of steps ahead).
 * That file's header argues the lanes; what differs here is how AVX2,
 * without 64-bit multiplies, unsigned 64-bit compares or mask registers,
 * computes the same things.
 *
 * The step value.  t = fma(a_k, b_kj, s_j), exact under EXACT64; for the
 * verified variant (J->verify, chain_fast.c's verify_sp_ok) p = a*b
 * (exact) and t = s + p with Knuth's TwoSum error e = (s + p) - t, exact
 * (|s + p| < 2^1023, gradual underflow, -ffp-contract=off), a lane with
 * e != 0 or NaN being bad: x86/chain_sp_avx512.c's argument, the same
 * operations.
 *
 * The draw.  Lane l of register r of the chunk at tile lane j0 has draw
 * index idx(k, j0 + 4r + l) = idx(k, j0) + 4r + l (fpl__acc_idx is linear
 * in the lane and in the step), so its splitmix64 argument is z(k) + (4r
 * + l) G, z(k) = key + (idx(k, j0) + 1) G, and z(k + ks) = z(k) + ks MN G,
 * all mod 2^64 as fpl__draw computes it.  The rounding reads only the top
 * R <= 32 bits of the draw d: kernels/x86/draw_avx2.h computes d's high
 * word exactly (its header argues the split multiplies), bit 32 left
 * out when R < 32 (masked off below).
 *
 * The rounding, by adding the draw and truncating.  Let u = bits(t), s =
 * 52 - m (m <= 50: 2 <= s <= 52), mask = 2^s - 1, q = 2^s, L = u & mask
 * (the s bits below acc's kept bit at t, for 2^emin <= |t|), r = the top
 * R bits of d (an integer below 2^R) and T the R bits of |t| just below
 * the kept bit (zeros past t's own fraction bits: t is exact).  The
 * engine rounds |t| away from zero iff T + r >= 2^R (x86/
 * chain_sp_avx512.c's header).  Here inc = (d & ~(2^(64-R) - 1)) >> (64 -
 * s) = floor(r 2^(s-R)), an integer below 2^s, and the kernel computes
 * y = (u + inc) & ~mask.  Claim: L + inc >= 2^s iff T + r >= 2^R.
 *  - s >= R: L = T 2^(s-R) + L' with 0 <= L' < 2^(s-R) and inc = r
 *    2^(s-R), so L + inc = (T + r) 2^(s-R) + L', which is >= 2^s iff T +
 *    r >= 2^R (L' is less than one unit of 2^(s-R)).
 *  - s < R: T = L 2^(R-s) (L's s bits, then zeros) and r = inc 2^(R-s) +
 *    rho with rho < 2^(R-s), so T + r = (L + inc) 2^(R-s) + rho, which is
 *    >= 2^R iff L + inc >= 2^s.
 * L + inc < 2^(s+1), so u + inc is u with one unit added at bit s
 * exactly when the engine rounds away (the carry running on into the
 * exponent field as the truncation plus one quantum does), and clearing
 * the low s bits leaves y = (u & ~mask) + q or u & ~mask: the AVX-512
 * kernel's result, whose header shows it is the engine's (sign kept: no
 * carry reaches bit 63 on a kept lane, whose rounding is at most
 * bits(max)).  A kept lane is inexact iff L != 0, that is iff y != u: L
 * = 0 gives T = 0, inc < 2^s, no carry, y = u; L != 0 puts u strictly
 * between u & ~mask and (u & ~mask) + q.
 *
 * Lanes kept: x86/chain_sp_avx512.c's, bits(2^emin) <= A <= bits(max)
 * with A = u without its sign, tested as (A - minb) <= (maxb - minb)
 * unsigned; AVX2 compares signed, and x <=u y iff (x ^ 2^63) <=s (y ^
 * 2^63), x ^ 2^63 = x + 2^63 mod 2^64: so one add of 2^63 - minb to A
 * and one signed compare against (maxb - minb) ^ 2^63.  Such a lane
 * raises inexact at most, counted per lane.  Every other lane (zero,
 * tiny, beyond max, inf or NaN, TwoSum's inexact sums; lanes past the
 * tile's end are masked out) is bad.
 *
 * The loop.  draws() computes the increments of a block of KB steps
 * ahead (they depend on the indices only, not on the data), then
 * steps() runs the chunk's registers step after step while
 * no lane is bad; at a step with a bad lane it commits nothing and
 * returns that step's rounded values and lane classes, and run() does
 * the step lane by lane: a bad lane by fpl__acc_ne64_slow (the
 * reference's fpl__fma_ix in acc's mode, sp, with the same operands
 * a_k, b_kj (B's own copy), s_j and draw index, its flags and counts
 * noted as the reference notes them), the others taking the kernel's
 * value and inexact.  The hot loops have no call, so their registers
 * stay in registers.  Per-lane counts: each committed step adds the lane's
 * exactness mask (-1 where exact) to a counter, so inexact steps =
 * committed steps + counter.  The discarded vector results of bad lanes
 * and whatever MXCSR flags they raised are never read (this file changes
 * no control state; the layer runs in the default MXCSR, round to
 * nearest without FTZ or DAZ).
 */
#include <immintrin.h>
#include <string.h>

#include "accum/accum_internal.h"
#include "kernels/x86/draw_avx2.h"

#define G 0x9e3779b97f4a7c15ull
#define NR 2		/* registers of four lanes per chunk */
#define NL (4 * NR)	/* lanes per chunk; divides FPL__ACC_TILE */
#define KB 32		/* steps per block of draws */

#define SP2_INLINE static inline __attribute__((always_inline))

typedef struct sp2 {
	__m256i mask;		/* 2^s - 1 */
	__m256i rmask;		/* the top R bits of a lane */
	__m256i sign;		/* 2^63 */
	__m256i bias;		/* 2^63 - bits(2^emin) */
	__m256i rangex;		/* (bits(max) - bits(2^emin)) ^ 2^63 */
	__m256i off[NR];	/* (4r + l) G in lane l of register r */
	__m128i rsh;		/* 64 - s */
	uint64_t zstep;		/* ks MN G */
} sp2;

/* A step that steps() did not commit: the kernel's values, the bad
 * lanes and the kept inexact ones (bit l: lane l of the chunk). */
typedef struct spstop {
	double y[NL];
	unsigned bad, inex;
} spstop;

/* t of one register (the header's step value), *ev the lanes whose
 * TwoSum error is not 0 (VER; else all clear). */
SP2_INLINE __m256i tval(__m256d av, __m256d bv, __m256d sv, const int VER, __m256i *ev)
{
	if (VER) {
		__m256d p = _mm256_mul_pd(av, bv), t = _mm256_add_pd(sv, p);
		__m256d bb = _mm256_sub_pd(t, sv);
		__m256d e = _mm256_add_pd(_mm256_sub_pd(sv, _mm256_sub_pd(t, bb)), _mm256_sub_pd(p, bb));
		*ev = _mm256_castpd_si256(_mm256_cmp_pd(e, _mm256_setzero_pd(), _CMP_NEQ_UQ));
		return _mm256_castpd_si256(t);
	}
	*ev = _mm256_setzero_si256();
	return _mm256_castpd_si256(_mm256_fmadd_pd(av, bv, sv));
}

/* The draws' increments (the header's inc = (d & top R bits) >> (64 -
 * s)) of nb <= KB steps k, k + ks, ... from z0 = z(k): d[i NR + r] for
 * step k + i ks, register r of the chunk.  Kept apart from the steps so
 * that their long chains of dependent operations overlap freely. */
SP2_INLINE void draws(const sp2 *P, uint64_t z0, size_t nb, __m256i *d, const int XS)
{
	const __m256i zs = _mm256_set1_epi64x((long long)P->zstep);
	__m256i z = _mm256_set1_epi64x((long long)z0);
	size_t i;
	int r;

	for (i = 0; i < nb; i++, z = _mm256_add_epi64(z, zs))
		for (r = 0; r < NR; r++)
			d[i * NR + r] = _mm256_srl_epi64(
				_mm256_and_si256(fpl__dr2_mix_hi(_mm256_add_epi64(z, P->off[r]), XS),
						 P->rmask),
				P->rsh);
}

/* The chunk's steps k + i ks for i = i0, ..., nb - 1 from x[] (the
 * running sums) and c[] (the counters), d[] their increments (draws()):
 * returns the first i not committed (nb when all were), x[] and c[] as
 * after the committed steps, and at a step with a bad lane its values in
 * *o.  b: B's (or Bp's) column of the chunk's lane 0 at step 0, row
 * stride ldb; TAIL: only the lanes of valid[] exist (masked loads, never
 * bad). */
SP2_INLINE size_t steps(const sp2 *P, const double *arow, const double *b, size_t ldb, size_t k,
			size_t ks, size_t i0, size_t nb, const __m256i *d, double *xm, int64_t *cm,
			spstop *o, const __m256i *valid, const int VER, const int TAIL)
{
	__m256i c[NR];
	__m256d x[NR];
	size_t i;
	int r;

	for (r = 0; r < NR; r++) {
		x[r] = _mm256_loadu_pd(xm + 4 * r);
		c[r] = _mm256_loadu_si256((const __m256i *)(cm + 4 * r));
	}
	for (i = i0; i < nb; i++) {
		const size_t kk = k + i * ks;
		const __m256d av = _mm256_broadcast_sd(arow + kk);
		const double *bk = b + kk * ldb;
		__m256i yi[NR], ex[NR], bad[NR], any;
		for (r = 0; r < NR; r++) {
			__m256d bv = TAIL ? _mm256_maskload_pd(bk + 4 * r, valid[r])
					  : _mm256_loadu_pd(bk + 4 * r);
			__m256i ev, u = tval(av, bv, x[r], VER, &ev);
			__m256i A = _mm256_andnot_si256(P->sign, u);
			yi[r] = _mm256_andnot_si256(P->mask, _mm256_add_epi64(u, d[i * NR + r]));
			ex[r] = _mm256_cmpeq_epi64(yi[r], u);
			bad[r] = _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_add_epi64(A, P->bias), P->rangex),
						 ev);
			if (TAIL)
				bad[r] = _mm256_and_si256(bad[r], valid[r]);
		}
		any = bad[0];
		for (r = 1; r < NR; r++)
			any = _mm256_or_si256(any, bad[r]);
		if (__builtin_expect(!_mm256_testz_si256(any, any), 0)) {
			o->bad = o->inex = 0;
			for (r = 0; r < NR; r++) {
				unsigned bm = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(bad[r]));
				unsigned em = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(ex[r]));
				_mm256_storeu_pd(o->y + 4 * r, _mm256_castsi256_pd(yi[r]));
				o->bad |= bm << (4 * r);
				o->inex |= (~(bm | em) & 0xfu) << (4 * r);
			}
			break;
		}
		for (r = 0; r < NR; r++) {
			x[r] = _mm256_castsi256_pd(yi[r]);
			c[r] = _mm256_add_epi64(c[r], ex[r]);
		}
	}
	for (r = 0; r < NR; r++) {
		_mm256_storeu_pd(xm + 4 * r, x[r]);
		_mm256_storeu_si256((__m256i *)(cm + 4 * r), c[r]);
	}
	return i;
}

/* Step kn of the chunk at tile lane j0 (n lanes) lane by lane, the
 * header's loop: a bad lane by the reference's step, the others taking
 * the kernel's value and inexact. */
static void redo_step(fpl__acc_tile *T, size_t kn, size_t j0, size_t n, const spstop *o,
		      double *x, uint64_t *cnt)
{
	const fpl__acc_job *J = T->J;
	const double a = J->A[T->i * J->K + kn];
	size_t l;

	for (l = 0; l < n; l++) {
		if (o->bad >> l & 1) {
			x[l] = fpl__acc_ne64_slow(T, a, J->B[kn * J->N + T->j0 + j0 + l], x[l],
						  fpl__acc_idx(T, kn, j0 + l), j0 + l);
		} else {
			x[l] = o->y[l];
			cnt[j0 + l] += o->inex >> l & 1;
		}
	}
}

uint64_t fpl__acc_sp64_avx2_runs;

SP2_INLINE void run(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s, uint64_t *cnt,
		    const int VER, const int XS)
{
	const fpl__acc_job *J = T->J;
	const fpl_format *f = &J->m->acc;
	const size_t nj = T->nj, K = J->K;
	const size_t ldb = J->Bp ? FPL__ACC_TILE : J->N;
	const uint64_t minb = fpl__bits(f->min_normal), maxb = fpl__bits(f->max);
	const uint64_t sh = (uint64_t)(52 - f->m), R = J->kp.sr_bits, key = J->kp.key;
	const double *arow = J->A + T->i * K;
	const double *bcol = J->Bp ? J->Bp + T->j0 / FPL__ACC_TILE * K * FPL__ACC_TILE
				   : J->B + T->j0;
	size_t j0, l;
	sp2 P;
	int r;

	__atomic_fetch_add(&fpl__acc_sp64_avx2_runs, 1, __ATOMIC_RELAXED);
	P.mask = _mm256_set1_epi64x((long long)((1ull << sh) - 1));
	P.rmask = _mm256_set1_epi64x((long long)(~0ull << (64 - R)));	/* 1 <= R <= 32 */
	P.sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
	P.bias = _mm256_set1_epi64x((long long)(0x8000000000000000ull - minb));
	P.rangex = _mm256_set1_epi64x((long long)((maxb - minb) ^ 0x8000000000000000ull));
	for (r = 0; r < NR; r++)
		P.off[r] = _mm256_set_epi64x((long long)((4 * (uint64_t)r + 3) * G),
					     (long long)((4 * (uint64_t)r + 2) * G),
					     (long long)((4 * (uint64_t)r + 1) * G),
					     (long long)((4 * (uint64_t)r) * G));
	P.rsh = _mm_cvtsi64_si128((long long)(64 - sh));
	P.zstep = (uint64_t)ks * J->MN * G;
	for (j0 = 0; j0 < nj; j0 += NL) {
		const size_t n = nj - j0 < NL ? nj - j0 : NL;
		double x[NL];
		int64_t c[NL];
		uint64_t done = 0;
		__m256i valid[NR], d[KB * NR];
		size_t k, nb;
		spstop o;

		memset(x, 0, sizeof x);
		memset(c, 0, sizeof c);
		memset(&o, 0, sizeof o);
		memcpy(x, s + j0, n * sizeof *x);
		for (r = 0; r < NR; r++)
			valid[r] = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n),
						      _mm256_set_epi64x(4 * r + 3, 4 * r + 2,
									4 * r + 1, 4 * r));
		for (k = k0; k < k1; k += nb * ks) {
			size_t i = 0;
			nb = (k1 - k + ks - 1) / ks < KB ? (k1 - k + ks - 1) / ks : KB;
			draws(&P, key + (fpl__acc_idx(T, k, j0) + 1) * G, nb, d, XS);
			while (i < nb) {
				const size_t in = n == NL ? steps(&P, arow, bcol + j0, ldb, k, ks, i, nb, d,
								  x, c, &o, valid, VER, 0)
							  : steps(&P, arow, bcol + j0, ldb, k, ks, i, nb, d,
								  x, c, &o, valid, VER, 1);
				const size_t kn = k + in * ks;
				done += in - i;
				if (in >= nb)
					break;
				redo_step(T, kn, j0, n, &o, x, cnt);
				i = in + 1;
			}
		}
		memcpy(s + j0, x, n * sizeof *x);
		for (l = 0; l < n; l++)
			cnt[j0 + l] += done + (uint64_t)c[l];
	}
}

void fpl__acc_sp64_avx2(fpl__acc_tile *T, size_t k0, size_t k1, size_t ks, double *s,
			uint64_t *cnt)
{
	const int xs = T->J->kp.sr_bits == 32;

	if (T->J->verify && xs)
		run(T, k0, k1, ks, s, cnt, 1, 1);
	else if (T->J->verify)
		run(T, k0, k1, ks, s, cnt, 1, 0);
	else if (xs)
		run(T, k0, k1, ks, s, cnt, 0, 1);
	else
		run(T, k0, k1, ks, s, cnt, 0, 0);
}

void fpl__acc_sp64_avx2_draws(const uint64_t *z, size_t n, int xs, uint64_t *hi)
{
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		__m256i h = xs ? fpl__dr2_mix_hi(_mm256_loadu_si256((const __m256i *)(z + i)), 1)
			       : fpl__dr2_mix_hi(_mm256_loadu_si256((const __m256i *)(z + i)), 0);
		_mm256_storeu_si256((__m256i *)(hi + i), _mm256_srli_epi64(h, 32));
	}
}
