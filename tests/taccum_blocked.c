/* SPDX-License-Identifier: MIT */
/*
 * tests/taccum_blocked.c - the truncation chains in mode tz
 * (accum/chain_blocked.c: blocked and C-less sequential chains with
 * exact products, each step a binary64 sum masked to the accumulator's
 * precision) against the reference path (FPLAB_ACCUM=ref, dot.c on the
 * engine's fma), on the same data: every output's bits and flags, the
 * state's counts, flags and counter.  The fast runs go through every
 * kernel: FPLAB_ACCUM unset (AVX-512 where the CPU and kernel set allow
 * it), avx2 and nosimd (portable), 1 and 2 threads, inexact tracked and
 * untracked.  The expected values come from the reference path, which
 * tests/taccum.c checks against an independent implementation; the
 * kernels are also run directly against the engine's fpl_fma, step by
 * step, on running sums that hold -0 (no GEMM reaches that: its chains
 * start at +0).
 *
 * Cases: e4m3fn x e4m3fn and e5m2 x e4m3fn into e8m13 (fplab's fp8
 * training policy), e2m3 into fp16, e4m3fn into bf16 and fp32 (+sat);
 * blocked:1/5/16/128 with fp32 and fp16 promotion (the block additions
 * by truncation too, C with tiny, huge and special values), sequential,
 * pairs:4;
 * N with every tail of a 64-lane tile and an 8-lane register, K that
 * blocks divide or not; data with many zeros (whole zero rows and
 * columns, signed zeros), subnormal inputs, values at the top of the
 * input formats, and data the path must decline (inf, NaN, sums too
 * wide for binary64, overflow of a narrow accumulator), with and without
 * C.  The test asserts where the path must be taken and where not
 * (fpl__acc_tz_runs, J->tz_trunc's effect).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "accum/chain_blocked.h"

#define NELEM(x) (sizeof x / sizeof *x)

static const char *const env_modes[] = { "", "avx2", "nosimd" };

static int avx512_kernels(void)
{
	return fpl_cpu()->avx512f && !strcmp(fpl_kernels_selected(), "avx512");
}

/* The kernel that FPLAB_ACCUM=env runs (fpl__acc_tz_runs' index). */
static int kernel_of(const char *env)
{
	int simd = strcmp(env, "nosimd") && fpl_cpu()->avx2 && fpl_cpu()->fma;

#ifndef FPL_HAVE_X86_KERNELS
	return 0;
#endif
	return simd && !*env && avx512_kernels() ? 2 : simd;
}

/* Data kinds. */
enum { D_MODERATE, D_ZEROS, D_TINY, D_TOP, D_SPECIAL, D_WIDE, D_COUNT };
static const char *const kind_name[] = { "moderate", "zeros", "tiny", "top", "special", "wide" };

static double gen(h_rng *g, const fpl_format *f, int kind)
{
	uint64_t u = h_rng_next(g);

	switch (kind) {
	case D_ZEROS:	/* half zeros of both signs (a ReLU's output) */
		if (u % 2)
			return (u >> 8) & 1 ? -0.0 : 0.0;
		return h_rng_value(g, -4, 3, 53, 0);
	case D_TINY:	/* around the input format's subnormals */
		return h_rng_value(g, f->emin - f->m - 1, f->emin + 2, 53, 0);
	case D_TOP:	/* its largest binades below 2^emax (<= max) */
		return h_rng_value(g, f->emax - 2, f->emax - 1, 53, 0);
	case D_SPECIAL:
		if (u % 13 == 0)
			return (u >> 8) % 3 == 0 ? NAN : (u >> 8) & 1 ? -INFINITY : INFINITY;
		return h_rng_value(g, -4, 3, 53, 0);
	case D_WIDE:
		return h_rng_value(g, f->emin - f->m - 1, f->emax, 53, 0);
	default:
		return h_rng_value(g, -4, 3, 53, 0);
	}
}

typedef struct result {
	double *c;
	unsigned *fl;
	fpl_state st;
	int rc;
} result;

static void run_env(const char *env, const fpl_accum_model *m, size_t M, size_t N, size_t K,
		    const double *a, const double *b, const double *c0, int beta, int threads,
		    unsigned untracked, result *r)
{
	if (*env)
		setenv("FPLAB_ACCUM", env, 1);
	else
		unsetenv("FPLAB_ACCUM");
	memcpy(r->c, c0, M * N * sizeof *c0);
	fpl_state_init(&r->st, 5);
	r->st.threads = threads;
	r->st.counter = 77;
	r->st.untracked = untracked;
	r->rc = fpl_accum_gemm(r->c, N, m, beta, M, N, K, a, K, 0, b, N, 0, r->fl, &r->st);
	unsetenv("FPLAB_ACCUM");
}

/* Some value not finite? */
static int nonfinite(const double *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 1;
	return 0;
}

/* One case against the reference in every env mode, thread count and
 * tracking; *taken: some fast run used the truncation chains (which it
 * must not where A or B holds inf or NaN). */
static void check_case(const fpl_accum_model *m, const char *what, size_t M, size_t N,
		       size_t K, int kind, int beta, h_rng *g, int *taken)
{
	size_t nA = M * K, nB = K * N, nC = M * N, i, e;
	double *a = malloc(nA * sizeof *a), *b = malloc(nB * sizeof *b);
	double *c0 = malloc(nC * sizeof *c0);
	result R[2];
	unsigned u;
	int t, v, special;
	char buf[64];

	for (i = 0; i < nA; i++)
		a[i] = gen(g, &m->a, kind);
	for (i = 0; i < nB; i++)
		b[i] = gen(g, &m->b, kind);
	if (kind == D_ZEROS && M > 1 && K > 2) {	/* a zero row and a zero column of A */
		memset(a + K, 0, K * sizeof *a);
		for (i = 0; i < M; i++)
			a[i * K + 1] = i % 2 ? -0.0 : 0.0;
	}
	special = nonfinite(a, nA) || nonfinite(b, nB);
	for (i = 0; i < nC; i++)
		c0[i] = kind == D_TOP ? h_rng_value(g, m->promo.emax - 1, m->promo.emax, 53, 0)
				      : gen(g, &m->promo, kind);	/* C: overflowing sums */
	for (v = 0; v < 2; v++) {
		R[v].c = malloc(nC * sizeof(double));
		R[v].fl = malloc(nC * sizeof(unsigned));
	}
	for (u = 0; u <= FPL_FLAG_INEXACT; u += FPL_FLAG_INEXACT) {
		run_env("ref", m, M, N, K, a, b, c0, beta, 1, u, &R[0]);
		for (e = 0; e < NELEM(env_modes); e++)
			for (t = 1; t <= 2; t++) {
				uint64_t before = fpl__acc_tz_runs[kernel_of(env_modes[e])];
				int ok;
				run_env(env_modes[e], m, M, N, K, a, b, c0, beta, t, u, &R[1]);
				if (fpl__acc_tz_runs[kernel_of(env_modes[e])] > before) {
					*taken = 1;
					if (!h_check(!special || m->a.specials == FPL_SPEC_NONE))
						h_fail("%s: taken with inf or NaN in A or B", what);
				}
				ok = R[1].rc == R[0].rc;
				for (i = 0; ok && !R[0].rc && i < nC; i++)
					if (!h_check(h_same(R[0].c[i], R[1].c[i])
						     && R[0].fl[i] == R[1].fl[i])) {
						h_fail("%s (%s, %zux%zux%zu, beta %d, env '%s', %d threads, "
						       "untracked %#x): output %zu: ref %a [%s], fast %a [%s]",
						       what, kind_name[kind], M, N, K, beta, env_modes[e], t,
						       u, i, R[0].c[i], h_flags(R[0].fl[i], buf, 32),
						       R[1].c[i], h_flags(R[1].fl[i], buf + 32, 32));
						ok = 0;
					}
				if (!h_check(ok && h_same_state(&R[0].st, &R[1].st)) && ok)
					h_fail("%s (%s, env '%s', %d threads, untracked %#x): state "
					       "differs: flags %#x/%#x inexact %llu/%llu", what,
					       kind_name[kind], env_modes[e], t, u, R[0].st.flags,
					       R[1].st.flags, (unsigned long long)R[0].st.count[0],
					       (unsigned long long)R[1].st.count[0]);
			}
	}
	for (v = 0; v < 2; v++) {
		free(R[v].c);
		free(R[v].fl);
	}
	free(a);
	free(b);
	free(c0);
}

static void model(fpl_accum_model *m, const char *a, const char *b, const char *acc,
		  const char *order)
{
	fpl_accum_init(m);
	if (fpl_accum_parse_spec(a, &m->a, &m->a_rnd, NULL)
	    || fpl_accum_parse_spec(b, &m->b, &m->b_rnd, NULL)
	    || fpl_accum_parse_spec(acc, &m->acc, &m->acc_rnd, NULL)
	    || fpl_accum_parse_order(m, order))
		h_fail("cannot build model %s x %s -> %s %s", a, b, acc, order);
	m->acc_rnd = FPL_RND_TZ;
}

/* Models whose chains the path takes on moderate data (expect 1), ones
 * it must decline whatever the data (expect 0), and ones where the data
 * decide (-1). */
static const struct {
	const char *a, *b, *acc, *order;
	int expect;
} models[] = {
	{ "e4m3fn", "e4m3fn", "e8m13", "blocked:128:fp32", 1 },
	{ "e5m2", "e4m3fn", "e8m13", "blocked:128:fp32", 1 },
	{ "e4m3fn", "e4m3fn", "e8m13", "blocked:5:fp16", 1 },
	{ "e5m2", "e4m3fn", "e8m13", "blocked:16", 1 },
	{ "e4m3fn", "e4m3fn", "e8m13", "blocked:1", 1 },
	{ "e4m3fn", "e4m3fn", "e8m13", "sequential", 1 },
	{ "e4m3fn", "e4m3fn", "e8m13", "pairs:4", 1 },
	{ "e4m3fn", "e4m3fn", "bf16", "blocked:16", 1 },
	{ "e4m3fn", "e4m3fn", "fp32+sat", "blocked:8", 1 },
	{ "e2m3", "e2m3", "fp16", "blocked:16", 1 },
	{ "e2m3", "e2m3", "e5m2", "blocked:8", 1 },
	/* q = -18 < fp16's emin -14: subnormal sums; DAZ; fnuz zeros; evenodd */
	{ "e4m3fn", "e4m3fn", "fp16", "blocked:16", 0 },
	{ "e4m3fn", "e4m3fn", "e8m13+daz", "blocked:16", 0 },
	{ "e2m3", "e2m3", "e4m3fnuz", "blocked:8", 0 },
	{ "e4m3fn", "e4m3fn", "e8m13", "evenodd:8", 0 },
	/* bf16 products span more than 53 bits of binary64 */
	{ "bf16", "bf16", "e8m13", "blocked:8", 0 },
	/* sums of e2m1 products reach e3m4's max (15.5) for some data: then
	 * declined (overflow), else taken */
	{ "e2m1", "e2m1", "e3m4", "blocked:8", -1 },
	{ "e2m1", "e2m1", "e3m4", "sequential", -1 },
};

static void test_models(void)
{
	size_t i, r, reps = h_sanitized() ? 2 : 3;
	int kind;
	h_rng g;

	h_rng_init(&g, 31);
	for (i = 0; i < NELEM(models); i++) {
		const uint64_t promo0 = fpl__acc_tz_promo_runs;
		int taken_mod = 0;
		char what[128];
		fpl_accum_model m;

		model(&m, models[i].a, models[i].b, models[i].acc, models[i].order);
		snprintf(what, sizeof what, "%s x %s -> %s:tz %s", models[i].a, models[i].b,
			 models[i].acc, models[i].order);
		for (kind = 0; kind < D_COUNT; kind++)
			for (r = 0; r < reps; r++) {
				size_t M = 1 + h_rng_below(&g, 4), N = 1 + h_rng_below(&g, 140);
				size_t K = 1 + h_rng_below(&g, 300);
				/* the first rep without C, so that a model the
				 * truncation chains take (from +0) is taken in
				 * every build and for every seed */
				int beta = r ? (int)h_rng_below(&g, 2) : 0, taken = 0;
				check_case(&m, what, M, N, K, kind, beta, &g, &taken);
				if (kind == D_MODERATE || kind == D_ZEROS)
					taken_mod |= taken;
			}
		if (models[i].expect >= 0 && !h_check(taken_mod == models[i].expect))
			h_fail("%s: truncation chains %s", what,
			       models[i].expect ? "never taken" : "taken where they must not be");
		/* the block additions by truncation: blocked models taken (and
		 * pairs:B, a blocked job over its permuted copy) */
		if (models[i].expect >= 0
		    && !h_check((fpl__acc_tz_promo_runs > promo0)
				== (models[i].expect && (!strncmp(models[i].order, "blocked", 7)
							 || !strncmp(models[i].order, "pairs:", 6)))))
			h_fail("%s: promo additions by truncation %s", what,
			       fpl__acc_tz_promo_runs > promo0 ? "taken" : "not taken");
	}
	h_note("models: %zu models x %d data kinds against the reference", NELEM(models),
	       D_COUNT);
}

/* Every tail: N = 1 .. 129, 64-lane tiles and partial registers. */
static void test_tails(void)
{
	fpl_accum_model m;
	size_t N;
	int taken = 0;
	h_rng g;

	h_rng_init(&g, 32);
	model(&m, "e4m3fn", "e4m3fn", "e8m13", "blocked:7:fp32");
	for (N = 1; N <= 129; N += h_sanitized() ? 9 : 1)
		check_case(&m, "tails e4m3fn -> e8m13 blocked:7", 2, N, 23, D_ZEROS, 1, &g, &taken);
	if (!h_check(taken))
		h_fail("tails: truncation chains never taken");
	h_note("tails: N = 1 .. 129");
}

/* 10^6 outputs of the fp8 policy's forward and backward models. */
static void test_million(void)
{
	fpl_accum_model m;
	int taken = 0;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 33);
	model(&m, "e4m3fn", "e4m3fn", "e8m13", "blocked:16:fp32");
	check_case(&m, "e4m3fn -> e8m13 blocked:16, 10^6 outputs", 2000, 500, 40, D_ZEROS, 1,
		   &g, &taken);
	model(&m, "e5m2", "e4m3fn", "e8m13", "blocked:16:fp32");
	check_case(&m, "e5m2 x e4m3fn -> e8m13 blocked:16, 10^6 outputs", 2000, 500, 40,
		   D_MODERATE, 0, &g, &taken);
	if (!h_check(taken))
		h_fail("million: truncation chains never taken");
	h_note("million: 10^6 outputs per model");
}

/*
 * The kernels themselves against fpl_fma step by step (tz into e8m13),
 * on running sums that start with -0, +0 and values (skip0 0: zero-a
 * steps must run), and with +0 and values only (skip0 1: they may be
 * skipped, chain_blocked.c's (6)).
 */
typedef void kernel_fn(const double *, const double *, size_t, size_t, size_t, size_t,
		       uint64_t, double *, uint64_t *);

enum { KK = 24, KNJ = 61 };

/* One kernel over [0, k1) from s0 against want[] and inex_want[]. */
static void check_kernel(const char *name, kernel_fn *fn, int usable, const double *a,
			 const double *b, size_t k1, size_t nj, uint64_t keep, int skip0,
			 const double *s0, const double *want, const uint64_t *inex_want,
			 int count)
{
	double got[KNJ];
	uint64_t inex[KNJ];
	size_t jj;

	if ((usable == 2 && !(fpl_cpu()->avx2 && fpl_cpu()->fma))
	    || (usable == 3 && !fpl_cpu()->avx512f))
		return;
	memcpy(got, s0, sizeof got);
	memset(inex, 0, sizeof inex);
	fn(a, b, KNJ, nj, 0, k1, keep, got, count ? inex : NULL);
	for (jj = 0; jj < nj; jj++)
		if (!h_check(h_same(got[jj], want[jj]) && (!count || inex[jj] == inex_want[jj])))
			h_fail("kernels: %s, skip0 %d, k1 %zu, lane %zu: %a (%llu inexact), "
			       "engine %a (%llu)", name, skip0, k1, jj, got[jj],
			       (unsigned long long)inex[jj], want[jj],
			       (unsigned long long)inex_want[jj]);
	for (; jj < KNJ; jj++)
		if (!h_check(h_same(got[jj], s0[jj])))
			h_fail("kernels: %s wrote lane %zu beyond nj %zu", name, jj, nj);
}

static void test_kernels(void)
{
	static const struct {
		const char *name;
		kernel_fn *fn;
		int usable;
	} kern[] = {
		{ "portable", fpl__acc_tz_kernel_c, 1 },
#ifdef FPL_HAVE_X86_KERNELS
		{ "avx2", fpl__acc_tz_kernel_avx2, 2 },
		{ "avx512", fpl__acc_tz_kernel_avx512, 3 },
#endif
	};
	const fpl_format f = h_format("e8m13"), f8 = h_format("e4m3fn");
	const uint64_t keep = ~((1ull << (52 - f.m)) - 1);
	enum { K = KK, NJ = KNJ };
	double a[K], b[K * NJ], s0[NJ], want[NJ];
	uint64_t inex_want[NJ];
	size_t k, jj, x, rep;
	int skip0;
	h_rng g;

	h_rng_init(&g, 34);
	for (rep = 0; rep < 200; rep++) {
		fpl_state st;
		fpl_state_init(&st, 1);
		for (k = 0; k < K; k++) {
			a[k] = k % 3 == 0 ? (k & 4 ? -0.0 : 0.0)
					  : fpl_round(&f8, h_rng_value(&g, -4, 3, 53, 0), FPL_RND_NE, &st);
			for (jj = 0; jj < NJ; jj++)
				b[k * NJ + jj] = (jj + k) % 7 == 0 ? -0.0
						  : fpl_round(&f8, h_rng_value(&g, -6, 4, 53, 0), FPL_RND_NE, &st);
		}
		for (skip0 = 0; skip0 <= 1; skip0++) {
			for (jj = 0; jj < NJ; jj++) {
				s0[jj] = jj % 3 == 0 ? (skip0 ? 0.0 : -0.0) : jj % 3 == 1 ? 0.0
				       : fpl_round(&f, h_rng_value(&g, -3, 3, 53, 0), FPL_RND_TZ, &st);
				want[jj] = s0[jj];
				inex_want[jj] = 0;
			}
			/* the kernels over [0, k1) for every k1: a -0 may last one
			 * step only, and every prefix is checked */
			for (k = 0; k < K; k++) {
				for (jj = 0; jj < NJ; jj++) {
					fpl_state_clear_flags(&st);
					want[jj] = fpl_fma(&f, a[k], b[k * NJ + jj], want[jj], FPL_RND_TZ, &st);
					inex_want[jj] += (st.flags & FPL_FLAG_INEXACT) != 0;
					if (!h_check(!(st.flags & ~FPL_FLAG_INEXACT)))
						h_fail("kernels: the engine raised %#x", st.flags);
				}
				for (x = 0; x < NELEM(kern); x++)
					check_kernel(kern[x].name, kern[x].fn, kern[x].usable, a, b, k + 1,
						     NJ - rep % 9, keep, skip0, s0, want, inex_want,
						     rep % 2);
			}
		}
	}
	h_note("kernels: portable%s against fpl_fma, -0 lanes included",
	       NELEM(kern) > 1 ? ", avx2, avx512" : "");
}

int main(void)
{
	h_init("taccum_blocked");
	test_kernels();
	test_tails();
	test_models();
	test_million();
	return h_done();
}
