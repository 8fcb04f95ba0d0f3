/* SPDX-License-Identifier: MIT */
/*
 * chain_fma.c - sequential chains on the CPU's binary32 fma: a model whose
 * semantics are hardware fp32 fma (exact products, IEEE binary32
 * accumulator, ne, sequential) runs each output's chain, k ascending, as
 * r = fmaf(a_k, b_k, r): an AVX2 kernel over 8-column vectors (chosen at
 * run time by CPUID and XGETBV, fpl_cpu()), a portable fmaf loop for the
 * rest.  The order of each chain is the reference's; only different
 * outputs run side by side.
 *
 * The invariant: a job takes this path only when, for its model AND its
 * loaded data, every step is one IEEE binary32 fma whose result, flags
 * and counts the engine's fpl__fma_ix(fp32, ne) also gives; fma32_prepare
 * checks it, and a tile whose chains overflow is handed back to the
 * reference whole.
 *
 * Why the bits are the engine's: the engine implements IEEE 754
 * fusedMultiplyAdd for binary32 in ne, and so does the hardware
 * (vfmadd231ps, glibc's fmaf) with MXCSR in round-to-nearest without FTZ
 * or DAZ (checked here).  NaN payload rules differ, so no input may be
 * NaN or inf; then no NaN arises (a product is finite, and inf + finite =
 * inf), and a chain that reaches inf is redone by the reference.
 *
 * The flags, counted per step without the hardware's sticky flags.  The
 * data conditions: every loaded a and b is finite and a binary32 value;
 * with bits(x) the significant bits of x, lsb(x) the exponent of its
 * lowest set bit and lead(x) of its highest, max bits(a) + max bits(b)
 * <= 24, min lsb(a) + min lsb(b) >= -149 and max lead(a) + max lead(b) <=
 * 126 (over the nonzero elements).  Then every product p = a*b is exactly
 * a binary32 value, and every p and every chain value c (a binary32
 * value) is a multiple of 2^-149.  Consequences, per step r = RN(c + p):
 *  - underflow cannot occur: c + p is a multiple of 2^-149, so a tiny c +
 *    p is a subnormal exactly and the step is exact (IEEE raises
 *    underflow only for an inexact tiny result);
 *  - overflow makes r infinite, and the chain stays infinite: such tiles
 *    go back to the reference (counts then come from it);
 *  - so a step raises inexact or nothing, and it is exact iff
 *    RN(r - c) == p and RN(r - p) == c.  If exact, r - c = p and r - p =
 *    c are binary32 values, so both hold.  If inexact, let x be the one of
 *    c, p of larger magnitude and y the other: by Fast2Sum (Dekker 1971;
 *    binary, gradual underflow) r - x is exactly representable, so
 *    RN(r - x) = r - x != y, and one test fails.
 * Each lane counts its exact steps; K minus that count is the number of
 * inexact events of that output, and the output's flag is inexact when
 * it is not zero.  -ffp-contract=off (Makefile) keeps r - c and r - p
 * from being contracted into the fma.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FMA32_X86 1
#endif
#include <fenv.h>

#include <fplab/kernels.h>

#include "accum/accum_internal.h"

#define NT FPL__ACC_TILE
#define INEX_INDEX __builtin_ctz(FPL_FLAG_INEXACT)

/* ------------------------------------------------------------ checks */

typedef struct stats {
	int bits, lsb, lead;	/* max bits, min lsb, max lead over nonzeros */
} stats;

/* Fold x into s; 0 when x is not a finite binary32 value. */
static int fold(stats *s, double x)
{
	uint64_t u = fpl__bits(x) & ~FPL__SIGN_BIT, f;
	int e, lead, lsb;

	if (!(fabs(x) <= 0x1.fffffep127) || (double)(float)x != x)
		return 0;
	if (u == 0)
		return 1;
	e = (int)(u >> 52);
	f = u & ((1ull << 52) - 1);
	if (e == 0) {	/* binary64 subnormals are not binary32 values */
		return 0;
	}
	f |= 1ull << 52;
	lead = e - 1023;
	lsb = lead - 52 + __builtin_ctzll(f);
	if (lead - lsb + 1 > s->bits)
		s->bits = lead - lsb + 1;
	if (lsb < s->lsb)
		s->lsb = lsb;
	if (lead > s->lead)
		s->lead = lead;
	return 1;
}

/* Stats of n values (as binary32 copies into out when out != NULL). */
static int scan(stats *s, const double *x, size_t n, float *out)
{
	size_t i;

	s->bits = 0;
	s->lsb = 1 << 20;
	s->lead = -(1 << 20);
	for (i = 0; i < n; i++) {
		if (!fold(s, x[i]))
			return 0;
		if (out)
			out[i] = (float)x[i];
	}
	return 1;
}

/* Is f IEEE binary32 with every rule the hardware has? */
static int is_binary32(const fpl_format *f)
{
	return f->e == 8 && f->m == 23 && f->bias == 127 && f->explim && !f->emax_limit_set
	       && f->subnormal == FPL_SUB_YES && !f->daz && f->specials == FPL_SPEC_IEEE
	       && f->overflow == FPL_OVF_INF;
}

/* Is the current thread's floating-point environment round-to-nearest
 * without FTZ or DAZ (threads started later inherit it)? */
static int env_ok(void)
{
#ifdef FMA32_X86
	unsigned csr = _mm_getcsr();
	if (csr & ((1u << 15) | (1u << 6) | (3u << 13)))
		return 0;
#endif
	return fegetround() == FE_TONEAREST;
}

int fpl__acc_fma32_prepare(fpl__acc_job *J)
{
	const fpl_accum_model *m = J->m;
	const fpl_state *st = J->st;
	stats sa, sb, sc;
	size_t nA = J->M * J->K, nB = J->K * J->N;

	if (J->sum || !m->prod_exact || m->order != FPL_ORDER_SEQUENTIAL || m->acc_rnd != FPL_RND_NE
	    || !is_binary32(&m->acc) || (st->flip != FPL_FLIP_NONE && st->flip_prob > 0)
	    || J->K == 0 || J->K > ((size_t)1 << 30) || !env_ok())
		return 0;
	if (J->C && !scan(&sc, J->C, J->M * J->N, NULL))
		return 0;
	J->Af = malloc(nA * sizeof *J->Af);
	J->Bf = malloc(nB * sizeof *J->Bf);
	if (!J->Af || !J->Bf) {
		fpl__acc_fast_release(J);
		return FPL_ENOMEM;
	}
	if (!scan(&sa, J->A, nA, J->Af) || !scan(&sb, J->B, nB, J->Bf)
	    || (sa.bits && sb.bits
		&& (sa.bits + sb.bits > 24 || sa.lsb + sb.lsb < -149 || sa.lead + sb.lead > 126))) {
		fpl__acc_fast_release(J);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ kernels */

/* One column: c = fma(a_k, b_k, c) for k < K, b_k = b[k*ldb]; *ex = the
 * number of exact steps. */
static void col_scalar(const float *a, const float *b, size_t ldb, size_t K, float *c,
		       int32_t *ex)
{
	float s = *c;
	int32_t n = 0;
	size_t k;

	for (k = 0; k < K; k++) {
		float x = a[k], y = b[k * ldb], p = x * y, r = fmaf(x, y, s);
		n += (r - s == p) & (r - p == s);
		s = r;
	}
	*c = s;
	*ex = n;
}

#ifdef FMA32_X86
#define FMA32_TARGET __attribute__((target("avx2,fma")))

/* One step of vector q: r = fma(a, b, c); exact lanes add 1 to e (the
 * comparison's all-ones lane is -1). */
#define FMA32_STEP(q)                                                                       \
	do {                                                                                \
		__m256 bv = _mm256_loadu_ps(bk + 8 * (q)), p = _mm256_mul_ps(av, bv);     \
		__m256 r = _mm256_fmadd_ps(av, bv, c##q);                                   \
		__m256 t1 = _mm256_cmp_ps(_mm256_sub_ps(r, c##q), p, _CMP_EQ_OQ);          \
		__m256 t2 = _mm256_cmp_ps(_mm256_sub_ps(r, p), c##q, _CMP_EQ_OQ);          \
		e##q = _mm256_sub_epi32(e##q, _mm256_castps_si256(_mm256_and_ps(t1, t2))); \
		c##q = r;                                                                   \
	} while (0)

/* 32 columns: four independent vectors of chains, k ascending. */
FMA32_TARGET static void cols32(const float *a, const float *b, size_t ldb, size_t K, float *c,
				int32_t *ex)
{
	__m256 c0 = _mm256_loadu_ps(c), c1 = _mm256_loadu_ps(c + 8);
	__m256 c2 = _mm256_loadu_ps(c + 16), c3 = _mm256_loadu_ps(c + 24);
	__m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0;
	size_t k;

	for (k = 0; k < K; k++) {
		const __m256 av = _mm256_broadcast_ss(a + k);
		const float *bk = b + k * ldb;
		FMA32_STEP(0);
		FMA32_STEP(1);
		FMA32_STEP(2);
		FMA32_STEP(3);
	}
	_mm256_storeu_ps(c, c0);
	_mm256_storeu_ps(c + 8, c1);
	_mm256_storeu_ps(c + 16, c2);
	_mm256_storeu_ps(c + 24, c3);
	_mm256_storeu_si256((__m256i *)ex, e0);
	_mm256_storeu_si256((__m256i *)(ex + 8), e1);
	_mm256_storeu_si256((__m256i *)(ex + 16), e2);
	_mm256_storeu_si256((__m256i *)(ex + 24), e3);
}

FMA32_TARGET static void cols8(const float *a, const float *b, size_t ldb, size_t K, float *c,
			       int32_t *ex)
{
	__m256 c0 = _mm256_loadu_ps(c);
	__m256i e0 = _mm256_setzero_si256();
	size_t k;

	for (k = 0; k < K; k++) {
		const __m256 av = _mm256_broadcast_ss(a + k);
		const float *bk = b + k * ldb;
		FMA32_STEP(0);
	}
	_mm256_storeu_ps(c, c0);
	_mm256_storeu_si256((__m256i *)ex, e0);
}
#endif

int fpl__acc_fma32_tile(fpl__acc_tile *T, double *res)
{
	const fpl__acc_job *J = T->J;
	const size_t K = J->K, N = J->N, nj = T->nj;
	const float *a = J->Af + T->i * K, *b = J->Bf + T->j0;
	float c[NT];
	int32_t ex[NT];
	uint64_t ninex = 0;
	size_t jj = 0;

	for (jj = 0; jj < nj; jj++)
		c[jj] = J->C ? (float)J->C[T->i * N + T->j0 + jj] : 0.0f;
	jj = 0;
#ifdef FMA32_X86
	if (J->simd) {
		for (; jj + 32 <= nj; jj += 32)
			cols32(a, b + jj, N, K, c + jj, ex + jj);
		for (; jj + 8 <= nj; jj += 8)
			cols8(a, b + jj, N, K, c + jj, ex + jj);
	}
#endif
	for (; jj < nj; jj++)
		col_scalar(a, b + jj, N, K, c + jj, ex + jj);
	for (jj = 0; jj < nj; jj++)
		if (!(fabsf(c[jj]) <= 0x1.fffffep127f))
			return 0;	/* overflowed: the reference redoes the tile */
	for (jj = 0; jj < nj; jj++) {
		uint64_t inex = K - (uint64_t)ex[jj];
		res[jj] = (double)c[jj];
		if (inex)
			T->fl[jj] |= FPL_FLAG_INEXACT;
		ninex += inex;
	}
	T->cnt[INEX_INDEX] += ninex;
	fpl__acc_tile_out(T, res);
	return 1;
}
