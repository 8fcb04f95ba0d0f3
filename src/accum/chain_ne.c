/* SPDX-License-Identifier: MIT */
/*
 * chain_ne.c - the EXACT64 chains (chain_fast.c) in mode ne with the
 * rounding done in registers: per step, t = fma(a_k, b_kj, s_j) in
 * binary64 (exact: chain_fast.c's exactness condition, so the fma and
 * s + a*b are the same exact value) and t rounded to nearest-even into
 * acc by the fixed-point idiom of kernel_body.h (kb_pick, ne), an AVX2
 * kernel four lanes at a time and the same formula lane by lane.
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
 */
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

/* Lanes [0, n4) of one step, n4 a multiple of 4; cnt[jj] counts lane
 * jj's inexact steps (as -1 per step: the comparison masks); lanes the
 * formula cannot do are recomputed by fpl__acc_ne64_slow. */
NE64_TARGET static void step4(fpl__acc_tile *T, const ne_par *q, double a, const double *b,
			      double *s, size_t n4, uint64_t idx0, int64_t *cnt)
{
	const __m256d av = _mm256_set1_pd(a);
	const __m256i sign = _mm256_set1_epi64x((long long)FPL__SIGN_BIT);
	const __m256i one = _mm256_set1_epi64x(1), hm1 = _mm256_set1_epi64x((long long)q->halfm1);
	const __m256i mask = _mm256_set1_epi64x((long long)q->mask);
	const __m256i minb = _mm256_set1_epi64x((long long)q->min_bits);
	const __m256i maxb = _mm256_set1_epi64x((long long)q->max_bits);
	const __m256i infm1 = _mm256_set1_epi64x(0x7fefffffffffffffll);
	const __m128i sh = _mm_cvtsi64_si128((long long)q->s);
	size_t jj;

	for (jj = 0; jj < n4; jj += 4) {
		__m256d sv = _mm256_loadu_pd(s + jj);
		__m256d t = _mm256_fmadd_pd(av, _mm256_loadu_pd(b + jj), sv);
		__m256i u = _mm256_castpd_si256(t), sg = _mm256_and_si256(u, sign);
		__m256i A = _mm256_xor_si256(u, sg);
		__m256i kl = _mm256_and_si256(_mm256_srl_epi64(A, sh), one);
		__m256i Y = _mm256_andnot_si256(mask, _mm256_add_epi64(A, _mm256_add_epi64(hm1, kl)));
		/* signed compares: A < 2^63, but Y wraps for a NaN with a long
		 * payload, so A >= inf is tested apart */
		__m256i bad = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi64(minb, A),
							      _mm256_cmpgt_epi64(Y, maxb)),
					      _mm256_cmpgt_epi64(A, infm1));
		__m256i neq = _mm256_andnot_si256(_mm256_cmpeq_epi64(Y, A), _mm256_set1_epi64x(-1));
		__m256i c = _mm256_loadu_si256((const __m256i *)(cnt + jj));
		_mm256_storeu_si256((__m256i *)(cnt + jj),
				    _mm256_add_epi64(c, _mm256_andnot_si256(bad, neq)));
		_mm256_storeu_pd(s + jj, _mm256_castsi256_pd(_mm256_or_si256(Y, sg)));
		if (!_mm256_testz_si256(bad, bad)) {
			double so[4];
			int lanes = _mm256_movemask_pd(_mm256_castsi256_pd(bad)), l;
			_mm256_storeu_pd(so, sv);
			for (l = 0; l < 4; l++)
				if (lanes >> l & 1)
					s[jj + (size_t)l] = fpl__acc_ne64_slow(T, a, b[jj + (size_t)l], so[l],
								      idx0 + jj + (size_t)l,
								      jj + (size_t)l);
		}
	}
}
#endif

uint64_t fpl__acc_ne64_avx512_runs;

/* The chains [k0, k1) of the tile in s[], step numbers k. */
void fpl__acc_ne64_chain(fpl__acc_tile *T, size_t k0, size_t k1, double *s)
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
		fpl__acc_ne64_avx512(T, k0, k1, s, inex);
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
	if (J->simd)
		n4 = nj & ~(size_t)3;
#endif
	for (k = k0; k < k1; k++) {
		const double a = J->A[T->i * J->K + k], *b = J->B + k * J->N + T->j0;
		const uint64_t idx0 = fpl__acc_idx(T, k, 0);
#ifdef NE64_X86
		if (n4)
			step4(T, &q, a, b, s, n4, idx0, cnt);
#endif
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
