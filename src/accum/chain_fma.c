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
 *
 * Without inexact tracking (st->untracked, no output rounding) nothing
 * is counted, so the products need not be binary32 values: the lsb and
 * lead conditions alone keep every step free of underflow (a tiny c + p
 * is still a multiple of 2^-149, hence exact) and of overflow short of
 * an infinite result.  The job then runs as one GEMM (fma32_whole): with
 * AVX2 the native kernel fma32 (native/x86/gemm_fma32.c: 6 x 16 register
 * blocks, each output a vector lane whose chain runs k ascending from its
 * initial value), else the same blocking in portable fmaf loops.
 * Blocking changes which chains run side by side, never a chain's order,
 * so the bits are the tiles'.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FMA32_X86 1
#endif
#include <fenv.h>
#include <limits.h>

#include <fplab/kernels.h>

#include "accum/accum_internal.h"
#include "native/native_internal.h"
#include "util/parallel.h"
#include "util/scratch.h"

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

/*
 * The whole path's quick scan: x as binary32 into out; 0 when some x is
 * not a finite binary32 value, else *lo and *hi the leading exponents
 * (floor(log2|x|)) of the smallest and the largest nonzero |x| (lo =
 * INT_MAX when all are zero).  A binary32 value has at most 24
 * significant bits, so its lsb is at least its lead minus 23: a bound
 * the caller may use in place of scan()'s exact lsb.  Branch-free
 * minimum and maximum of |x|, so it vectorizes.
 */
#ifdef FMA32_X86
/* The AVX2 part of quick(): the first n - n % 4 values. */
__attribute__((target("avx2"))) static int quick4(const double *x, size_t n, float *out,
						   double *mn_out, double *mx_out)
{
	const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
	const __m256d fmax = _mm256_set1_pd(0x1.fffffep127), inf = _mm256_set1_pd(INFINITY);
	const __m256d zero = _mm256_setzero_pd();
	__m256d mn = inf, mx = zero, bad = zero;
	double a[4], b[4];
	size_t i;
	int k;

	for (i = 0; i + 4 <= n; i += 4) {
		const __m256d v = _mm256_loadu_pd(x + i), av = _mm256_and_pd(v, absm);
		const __m128 f = _mm256_cvtpd_ps(v);
		_mm_storeu_ps(out + i, f);
		bad = _mm256_or_pd(bad, _mm256_cmp_pd(_mm256_cvtps_pd(f), v, _CMP_NEQ_UQ));
		bad = _mm256_or_pd(bad, _mm256_cmp_pd(av, fmax, _CMP_NLE_UQ));
		mn = _mm256_min_pd(mn, _mm256_blendv_pd(av, inf, _mm256_cmp_pd(av, zero, _CMP_EQ_OQ)));
		mx = _mm256_max_pd(mx, av);
	}
	_mm256_storeu_pd(a, mn);
	_mm256_storeu_pd(b, mx);
	for (k = 0; k < 4; k++) {
		*mn_out = a[k] < *mn_out ? a[k] : *mn_out;
		*mx_out = b[k] > *mx_out ? b[k] : *mx_out;
	}
	return _mm256_movemask_pd(bad) == 0;
}
#endif

static int quick(const double *x, size_t n, float *out, int *lo, int *hi, int simd)
{
	double mn = INFINITY, mx = 0;
	int ok = 1;
	size_t i = 0;

#ifdef FMA32_X86
	if (simd) {
		ok = quick4(x, n, out, &mn, &mx);
		i = n - n % 4;
	}
#else
	(void)simd;
#endif
	for (; i < n; i++) {
		const double v = x[i], a = fabs(v), az = a == 0 ? INFINITY : a;
		const float f = (float)v;
		out[i] = f;
		ok &= ((double)f == v) & (a <= 0x1.fffffep127);
		mn = az < mn ? az : mn;
		mx = a > mx ? a : mx;
	}
	*lo = mn == INFINITY ? INT_MAX : ilogb(mn);
	*hi = mx == 0 ? INT_MIN : ilogb(mx);
	return ok;
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
	J->Af = fpl__scratch_alloc(nA * sizeof *J->Af);
	J->Bf = fpl__scratch_alloc(nB * sizeof *J->Bf);
	if (!J->Af || !J->Bf) {
		fpl__acc_fast_release(J);
		return FPL_ENOMEM;
	}
	J->whole = (st->untracked & FPL_FLAG_INEXACT) && !m->out_set;
	if (J->whole) {
		int la, ha, lb, hb;
		if (!quick(J->A, nA, J->Af, &la, &ha, J->simd)
		    || !quick(J->B, nB, J->Bf, &lb, &hb, J->simd)) {
			fpl__acc_fast_release(J);
			return 0;
		}
		/* no nonzero in A or B: every product is zero */
		if (la == INT_MAX || lb == INT_MAX || (la - 23 + lb - 23 >= -149 && ha + hb <= 126))
			return 1;
		/* the bound was not enough: the exact lsb below decides */
	}
	if (!scan(&sa, J->A, nA, J->Af) || !scan(&sb, J->B, nB, J->Bf)
	    || (sa.bits && sb.bits
		&& ((!J->whole && sa.bits + sb.bits > 24) || sa.lsb + sb.lsb < -149
		    || sa.lead + sb.lead > 126))) {
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

/* ------------------------------------------------------------ whole */

uint64_t fpl__acc_whole_runs;

typedef struct whole_job {
	const fpl__acc_job *J;
	float *C;		/* M x N, initial values in, results out */
	size_t r0, r1;		/* rows of this thread */
} whole_job;

/* The portable whole GEMM (no AVX2, or FPLAB_ACCUM=nosimd): each output
 * of rows [r0, r1) its fmaf chain, k ascending. */
static void *whole_rows(void *arg)
{
	whole_job *w = arg;
	const fpl__acc_job *J = w->J;
	const size_t K = J->K, N = J->N;
	size_t i, j, k;

	for (i = w->r0; i < w->r1; i++)
		for (j = 0; j < N; j++) {
			float c = w->C[i * N + j];
			for (k = 0; k < K; k++)
				c = fmaf(J->Af[i * K + k], J->Bf[k * N + j], c);
			w->C[i * N + j] = c;
		}
	return NULL;
}

int fpl__acc_fma32_whole(const fpl__acc_job *J, double *out, ptrdiff_t soi, ptrdiff_t soj,
			 unsigned *flags_out, int threads)
{
	const size_t M = J->M, N = J->N;
	float *C = fpl__scratch_alloc(M * N * sizeof *C);
	size_t i, j;

	if (!C)
		return FPL_ENOMEM;
	if (J->C) {
		for (i = 0; i < M * N; i++)
			C[i] = (float)J->C[i];
	} else {
		memset(C, 0, M * N * sizeof *C);
	}
#if defined(FMA32_X86) && defined(FPL_HAVE_X86_KERNELS)
	if (J->simd) {	/* the native kernel: the same chains on VFMADD231PS */
		if (fpl__native_fma32_gemm_best(1, M, N, J->K, J->Af, J->Bf, C, threads)) {
			fpl__scratch_free(C);
			return FPL_ENOMEM;
		}
	} else
#endif
	{
		whole_job w[FPL_MAX_THREADS];
		int t;

		threads = fpl__spawn_threads(threads, M, (double)M * (double)N * (double)J->K, 1e6);
		for (t = 0; t < threads; t++) {
			w[t].J = J;
			w[t].C = C;
			fpl__spawn_share(M, threads, t, &w[t].r0, &w[t].r1);
		}
		fpl__spawn(whole_rows, w, sizeof *w, threads);
	}
	{	/* an infinite chain is the only event possible here */
		int bad = 0;
		for (i = 0; i < M * N; i++)
			bad |= !(fabsf(C[i]) <= 0x1.fffffep127f);	/* inf or NaN */
		if (bad) {
			fpl__scratch_free(C);
			return 0;	/* overflowed: the tiles (and the reference) redo it */
		}
	}
	for (i = 0; i < M; i++) {
		double *o = out + (ptrdiff_t)i * soi;
		const float *c = C + i * N;
		if (soj == 1)
			for (j = 0; j < N; j++)
				o[j] = (double)c[j];
		else
			for (j = 0; j < N; j++)
				o[(ptrdiff_t)j * soj] = (double)c[j];
	}
	if (flags_out)
		memset(flags_out, 0, M * N * sizeof *flags_out);
	__atomic_fetch_add(&fpl__acc_whole_runs, 1, __ATOMIC_RELAXED);
	fpl__scratch_free(C);
	return 1;
}

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
