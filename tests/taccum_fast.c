/* SPDX-License-Identifier: MIT */
/*
 * tests/taccum_fast.c - the accumulation layer's fast paths (chain_fast.c,
 * chain_fma.c) against its reference path (dot.c), on the same data: every
 * output's bits and flags, the state's counts, flags and counter must be
 * equal.  The reference is forced with FPLAB_ACCUM=ref (accum.h); the fast
 * paths run with FPLAB_ACCUM unset and with FPLAB_ACCUM=nosimd (no AVX2
 * fma kernel).  The expected values come from the reference path, which
 * tests/taccum.c checks against an independent implementation.
 *
 * Cases: input formats x accumulators x modes (stochastic included) x
 * orders (sequential, blocked, pairs, pairs:B with a narrower and a wider
 * promotion format, evenodd with an even and an odd B; K from 0 to 40,
 * so B divides K or not), data from moderate to tiny, huge (overflow),
 * small integers (exact steps), and with zeros, infinities and NaNs; beta
 * 0 and 1, with and without an output rounding, 1 and 2 threads.  The
 * test also asserts that each fast path was taken where the model and
 * data qualify (fpl__acc_path_runs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* chain_fast.c's path counters (accum_internal.h): ref, exact64, odd64,
 * fma32, ne64, fused64. */
extern uint64_t fpl__acc_path_runs[6];
/* chain_fma.c: jobs run as one register-blocked binary32 GEMM. */
extern uint64_t fpl__acc_whole_runs;

/* chain_ne.c: chain ranges run by the AVX-512 NE64 kernel. */
extern uint64_t fpl__acc_ne64_avx512_runs;
/* chain_fast.c: chain ranges run by the AVX-512 sp kernel. */
extern uint64_t fpl__acc_sp64_avx512_runs;
/* chain_ne.c: ranges run by the lean kernels; evenodd tiles run by the
 * binary32 evenodd kernel. */
extern uint64_t fpl__acc_ne64_lean_runs;
extern uint64_t fpl__acc_ne64_lean2_runs, fpl__acc_ne64_lean2_reruns, fpl__acc_ne64_lean2_weak;
extern uint64_t fpl__acc_eo32_runs;
/* x86/chain_ro32_avx512.c: sequential and blocked tiles run in binary32. */
extern uint64_t fpl__acc_ro32_runs;
/* x86/chain_ro32_avx2.c: the same on AVX2 (test_ro32_avx2_million). */
extern uint64_t fpl__acc_ro32_avx2_runs, fpl__acc_ro32_avx2_mids;
/* chain_fused.c: group sums run by x86/chain_fused_avx2.c. */
extern uint64_t fpl__acc_fused_avx2_runs;

/* The states' sr_bits in run_env (test_sp64_million varies it). */
static int sr_bits = 32;

static const char *const env_modes[] = { "ref", "", "nosimd", "avx2" };

/* Do this CPU and build run the AVX-512 accumulation kernels (the
 * avx512 kernel set in use, as chain_fast.c requires)? */
static int avx512_kernels(void)
{
	return fpl_cpu()->avx512f && !strcmp(fpl_kernels_selected(), "avx512");
}

typedef struct result {
	double *c;
	unsigned *fl;
	fpl_state st;
	int rc;
} result;

/* Data kinds (D_TINY0, tiny values and a third signed zeros, only for
 * test_signed_zeros). */
enum { D_MODERATE, D_WIDE, D_TINY, D_HUGE, D_INT, D_SPECIAL, D_BIG, D_COUNT, D_TINY0, D_MIX,
       D_MIXN };

static double gen(h_rng *g, const fpl_format *f, int kind)
{
	uint64_t u = h_rng_next(g);

	switch (kind) {
	case D_MIX:	/* mostly moderate; tiny, huge, wide and special ones among them */
		switch (u % 16) {
		case 0: return gen(g, f, D_TINY0);
		case 1: return gen(g, f, D_HUGE);
		case 2: return gen(g, f, D_WIDE);
		case 3: return gen(g, f, D_SPECIAL);
		default: return gen(g, f, D_MODERATE);
		}
	case D_MIXN:	/* the same without subnormals: zeros, huge, special ones */
		switch (u % 16) {
		case 0: return (u >> 8) & 1 ? -0.0 : 0.0;
		case 1: return gen(g, f, D_HUGE);
		case 2: return gen(g, f, D_SPECIAL);
		default: return gen(g, f, D_MODERATE);
		}
	case D_WIDE: return h_rng_value(g, f->emin - f->m - 2, f->emax + 1, 53, 0);
	case D_TINY0:
		if (u % 3 == 0)
			return (u >> 8) & 1 ? -0.0 : 0.0;
		/* fall through */
	case D_TINY: return h_rng_value(g, f->emin - f->m - 1, f->emin + 2, 53, 0);
	case D_HUGE: return h_rng_value(g, f->emax - 3, f->emax, 53, 0);
	case D_INT: return (double)((int)(u % 15) - 7);
	case D_BIG: return h_rng_value(g, f->emax / 2 - 3, f->emax / 2 - 1, 53, 0);
	case D_SPECIAL:
		if (u % 11 == 0) {
			switch ((u >> 8) % 4) {
			case 0: return (u >> 20) & 1 ? -0.0 : 0.0;
			case 1: return (u >> 20) & 1 ? -INFINITY : INFINITY;
			case 2: return h_from_bits(0x7ff8000000000000ull | ((u >> 24) & 0x7f) << 45);
			default: return 0.0;
			}
		}
		/* fall through */
	default: return h_rng_value(g, -4, 3, 53, 0);
	}
}

static void run_env(const char *env, const fpl_accum_model *m, size_t M, size_t N, size_t K,
		    const double *a, const double *b, const double *c0, int beta, int threads,
		    uint64_t seed, result *r)
{
	if (*env)
		setenv("FPLAB_ACCUM", env, 1);
	else
		unsetenv("FPLAB_ACCUM");
	memcpy(r->c, c0, M * N * sizeof *c0);
	fpl_state_init(&r->st, seed);
	fpl_state_set_sr_bits(&r->st, sr_bits);
	r->st.threads = threads;
	r->st.counter = 1000;
	r->rc = fpl_accum_gemm(r->c, N, m, beta, M, N, K, a, K, 0, b, N, 0, r->fl, &r->st);
	unsetenv("FPLAB_ACCUM");
}

/* One case under model m on the data a, b, c0: every env mode and
 * thread count against the reference. */
static void check_data(const fpl_accum_model *m, const char *what, size_t M, size_t N, size_t K,
		       int kind, int beta, uint64_t seed, const double *a, const double *b,
		       const double *c0)
{
	size_t nC = M * N, i, e;
	result R[2];
	int t, v;
	char buf[64];

	for (v = 0; v < 2; v++) {
		R[v].c = malloc(nC * sizeof(double));
		R[v].fl = malloc(nC * sizeof(unsigned));
	}
	run_env("ref", m, M, N, K, a, b, c0, beta, 1, seed, &R[0]);
	for (e = 1; e < sizeof env_modes / sizeof *env_modes; e++) {
		for (t = 1; t <= 2; t++) {
			int ok = 1;
			run_env(env_modes[e], m, M, N, K, a, b, c0, beta, t, seed, &R[1]);
			ok = R[1].rc == R[0].rc;
			for (i = 0; ok && !R[0].rc && i < nC; i++) {
				if (!h_check(h_same(R[0].c[i], R[1].c[i]) && R[0].fl[i] == R[1].fl[i])) {
					h_fail("%s (%s, env '%s', %d threads): output %zu: ref %a [%s], "
					       "fast %a [%s]", what, (const char *[]){ "moderate", "wide",
					       "tiny", "huge", "int", "special", "big", "",
					       "tiny+zeros", "mix", "mix, no subnormals" }[kind], env_modes[e], t, i,
					       R[0].c[i], h_flags(R[0].fl[i], buf, sizeof buf), R[1].c[i],
					       h_flags(R[1].fl[i], buf + 32, 32));
					ok = 0;
				}
			}
			if (!h_check(ok && h_same_state(&R[0].st, &R[1].st))) {
				if (ok)
					h_fail("%s (kind %d, env '%s', %d threads): state differs: flags "
					       "%#x/%#x inexact %llu/%llu counter %llu/%llu", what, kind,
					       env_modes[e], t, R[0].st.flags, R[1].st.flags,
					       (unsigned long long)R[0].st.count[0],
					       (unsigned long long)R[1].st.count[0],
					       (unsigned long long)R[0].st.counter,
					       (unsigned long long)R[1].st.counter);
			}
		}
	}
	for (v = 0; v < 2; v++) {
		free(R[v].c);
		free(R[v].fl);
	}
}

/* One case under model m on data of the given kind. */
static void check_case(const fpl_accum_model *m, const char *what, size_t M, size_t N, size_t K,
		       int kind, int beta, h_rng *g)
{
	size_t nA = M * K, nB = K * N, nC = M * N, i;
	double *a = malloc(nA * sizeof *a), *b = malloc(nB * sizeof *b);
	double *c0 = malloc(nC * sizeof *c0);
	uint64_t seed = h_rng_next(g);

	for (i = 0; i < nA; i++)
		a[i] = gen(g, &m->a, kind);
	for (i = 0; i < nB; i++)
		b[i] = gen(g, &m->b, kind);
	for (i = 0; i < nC; i++)
		c0[i] = gen(g, &m->acc, kind == D_SPECIAL ? D_MODERATE : kind);
	check_data(m, what, M, N, K, kind, beta, seed, a, b, c0);
	free(a);
	free(b);
	free(c0);
}

static void spec(fpl_format *f, fpl_rnd *r, const char *s)
{
	if (fpl_accum_parse_spec(s, f, r, NULL))
		h_fail("cannot parse spec %s", s);
}

/* m = profile prof (inputs rounded on load, pairs:8 where it pairs), or
 * else inputs of spec in (A and B alike) into acc, sequential order. */
static void model(fpl_accum_model *m, const char *prof, const char *in, const char *acc)
{
	if (prof) {
		fpl_accum_profile(m, prof);
		m->a_load = m->b_load = FPL_LOAD_ROUND;
		if (m->pair_block)
			m->pair_block = 8;
		return;
	}
	fpl_accum_init(m);
	spec(&m->a, &m->a_rnd, in);
	m->b = m->a;
	spec(&m->acc, &m->acc_rnd, acc);
}

static const char *const ins[] = { "e4m3fn", "e5m2", "bf16", "fp16", "fp32", "e2m3" };
static const char *const accs[] = { "fp16", "fp32", "bf16", "fp16+nosub", "fp16+ftz",
				    "fp32+daz+ftz", "fp32+sat", "e5m2", "e4m3fnuz", "fp16+sat" };
static const char *const orders[] = { "sequential", "blocked:8", "blocked:5:fp16", "pairs",
				      "pairs:4:fp16", "pairs:6", "evenodd:4", "evenodd:5", "fused:5",
				      "fused:16" };
static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN,
				 FPL_RND_TZ, FPL_RND_OD, FPL_RND_SP, FPL_RND_SE };
#define NELEM(x) (sizeof x / sizeof *x)

static void test_random(void)
{
	h_rng g;
	size_t i, j, o, q, reps = h_sanitized() ? 1 : 2;
	int kind;

	h_rng_init(&g, 11);
	for (i = 0; i < NELEM(ins); i++)
		for (j = 0; j < NELEM(accs); j++)
			for (o = 0; o < NELEM(orders); o++)
				for (q = 0; q < NELEM(modes); q++)
					for (kind = 0; kind < D_COUNT; kind++) {
						fpl_accum_model m;
						size_t r;
						char what[160];
						model(&m, NULL, ins[i], accs[j]);
						m.acc_rnd = modes[q];
						fpl_accum_parse_order(&m, orders[o]);
						if (h_rng_below(&g, 4) == 0) {
							m.out_set = 1;
							spec(&m.out, &m.out_rnd, "e4m3fn");
							m.out_rnd = modes[(q + 1) % NELEM(modes)];
						}
						snprintf(what, sizeof what, "%s x %s -> %s:%s %s%s",
							 ins[i], ins[i], accs[j], fpl_rnd_name(modes[q]),
							 orders[o], m.out_set ? " out e4m3fn" : "");
						for (r = 0; r < reps; r++) {
							size_t M = 1 + h_rng_below(&g, 5);
							size_t N = 1 + h_rng_below(&g, 80);
							size_t K = h_rng_below(&g, 41);
							check_case(&m, what, M, N, K, kind,
								   (int)h_rng_below(&g, 2), &g);
						}
					}
	h_note("random: models x data kinds against the reference path");
}

/* A model that must take a given path: the path counter moves. */
static void expect_path(const char *what, const char *a, const char *acc, fpl_rnd rnd,
			const char *order, int path, int kind)
{
	fpl_accum_model m;
	h_rng g;
	uint64_t before = fpl__acc_path_runs[path];

	h_rng_init(&g, 12);
	model(&m, NULL, a, acc);
	m.acc_rnd = rnd;
	fpl_accum_parse_order(&m, order);
	check_case(&m, what, 9, 70, 33, kind, 1, &g);
	if (!h_check(fpl__acc_path_runs[path] > before))
		h_fail("%s: path %d was not taken", what, path);
}

static void test_paths(void)
{
	enum { REF, EXACT64, ODD64, FMA32, NE64, FUSED64 };
	expect_path("bf16/fp32 ne fused:32 (fused64)", "bf16", "fp32", FPL_RND_NE, "fused:32",
		    FUSED64, D_MODERATE);
	expect_path("e4m3fn/fp16 sp fused:7 (fused64)", "e4m3fn", "fp16", FPL_RND_SP, "fused:7",
		    FUSED64, D_WIDE);
	expect_path("fp16/bf16 tz fused:5 specials (fused64)", "fp16", "bf16", FPL_RND_TZ,
		    "fused:5", FUSED64, D_SPECIAL);
	/* fp32 products need 48 bits, but partial sums of fp32 x fp32 may
	 * reach 2^256: still fused64; aligned fused stays on the reference */
	expect_path("bf16/fp32 fused:8:24 (ref)", "bf16", "fp32", FPL_RND_NE, "fused:8:24", REF,
		    D_MODERATE);
	expect_path("e4m3fn/fp16 ne (ne64)", "e4m3fn", "fp16", FPL_RND_NE, "sequential",
		    NE64, D_MODERATE);
	expect_path("e4m3fn/fp16 ne wide (ne64)", "e4m3fn", "fp16", FPL_RND_NE, "sequential",
		    NE64, D_WIDE);
	expect_path("e4m3fn/fp16 ne blocked, overflow (ne64)", "e4m3fn", "fp16", FPL_RND_NE,
		    "blocked:8", NE64, D_HUGE);
	expect_path("e4m3fn/fp16 sp (exact64)", "e4m3fn", "fp16", FPL_RND_SP, "sequential",
		    EXACT64, D_MODERATE);
	expect_path("e4m3fn/fp16 tz blocked (exact64)", "e4m3fn", "fp16", FPL_RND_TZ,
		    "blocked:8", EXACT64, D_WIDE);
	/* e5m2 products span 2^-32 .. 2^32: with fp16 that is 65 bits */
	expect_path("e5m2/fp16 tz blocked (odd64)", "e5m2", "fp16", FPL_RND_TZ, "blocked:8",
		    ODD64, D_WIDE);
	expect_path("bf16/fp16 sp (odd64)", "bf16", "fp16", FPL_RND_SP, "sequential", ODD64,
		    D_MODERATE);
	expect_path("bf16/fp32 ne (fma32)", "bf16", "fp32", FPL_RND_NE, "sequential", FMA32,
		    D_MODERATE);
	expect_path("fp16/fp32 ne (fma32)", "fp16", "fp32", FPL_RND_NE, "sequential", FMA32,
		    D_INT);
	expect_path("bf16/fp32 ne big (fma32, overflowing tiles)", "bf16", "fp32", FPL_RND_NE,
		    "sequential", FMA32, D_BIG);
	/* products below 2^-149: not fma32 (underflow) */
	expect_path("bf16/fp32 ne tiny (odd64)", "bf16", "fp32", FPL_RND_NE, "sequential",
		    ODD64, D_TINY);
	expect_path("fp32/fp32 ne (odd64)", "fp32", "fp32", FPL_RND_NE, "sequential", ODD64,
		    D_MODERATE);
	expect_path("bf16/fp32 ne specials (not fma32)", "bf16", "fp32", FPL_RND_NE,
		    "sequential", ODD64, D_SPECIAL);
	/* pairs:B runs as blocked over the permuted copy, evenodd as two
	 * chains stepped k by k (exact64 rather than ne64) */
	expect_path("bf16/fp32+daz+ftz pairs:8 (odd64)", "bf16", "fp32+daz+ftz", FPL_RND_NE,
		    "pairs:8", ODD64, D_TINY);
	expect_path("e4m3fn/fp16 ne pairs:6:fp16 (ne64)", "e4m3fn", "fp16", FPL_RND_NE,
		    "pairs:6:fp16", NE64, D_WIDE);
	expect_path("bf16/fp32+daz+ftz evenodd:8 (odd64)", "bf16", "fp32+daz+ftz", FPL_RND_NE,
		    "evenodd:8", ODD64, D_TINY);
	expect_path("e4m3fn/fp16 sp evenodd:5 (exact64)", "e4m3fn", "fp16", FPL_RND_SP,
		    "evenodd:5", EXACT64, D_MODERATE);
	expect_path("e4m3fn/fp16 ne evenodd (exact64)", "e4m3fn", "fp16", FPL_RND_NE, "evenodd",
		    EXACT64, D_HUGE);
	h_note("paths: each fast path taken where it applies");
}

/*
 * The NE64 kernels (chain_ne.c and x86/chain_ne_avx512.c) on 10^6
 * outputs per model: whole 64-lane tiles and a 52-lane tail, mixed data
 * with zeros, tiny, huge (overflowing) and special values, C given, every
 * env mode (AVX-512, AVX2, portable) against the reference path.
 */
/*
 * The verified NE64 variant (x86/chain_ne_avx512.c, TwoSum-checked
 * steps, rounded to odd where s + p is inexact in binary64) on 10^6
 * outputs per model: the hardware profiles it serves, bf16 into bf16 and
 * fp32 inputs into fp32, whole tiles and a tail, against the reference.  DAZ
 * accumulators get data without subnormals (with them the path is not
 * taken: the random test covers that).
 */
static void test_verify_million(void)
{
	static const struct {
		const char *what, *prof, *in, *acc, *ord;
		int kind;
	} c[] = {
		{ "avx512bf16", "avx512bf16", NULL, NULL, NULL, D_MIXN },
		{ "onednn-bf16, blocks of 8", "onednn-bf16", NULL, NULL, NULL, D_MIXN },
		{ "fp16-fma", "fp16-fma", NULL, NULL, NULL, D_MIX },
		{ "amx-bf16 (evenodd:32)", "amx-bf16", NULL, NULL, NULL, D_MIXN },
		{ "bf16/bf16 blocked:8:fp32", NULL, "bf16", "bf16", "blocked:8:fp32", D_MIX },
		/* the binary32 evenodd kernels (AVX-512 in env '', AVX2 in
		 * env 'avx2'; amx-bf16 above too): IEEE fp32 (subnormal
		 * inputs and results), fp16 inputs, a block longer than K */
		{ "bf16/fp32 evenodd:8", NULL, "bf16", "fp32", "evenodd:8", D_MIX },
		{ "fp16/fp32 evenodd:5", NULL, "fp16", "fp32", "evenodd:5", D_MIX },
		{ "bf16/fp32 evenodd:64", NULL, "bf16", "fp32", "evenodd:64", D_MODERATE },
		/* products of 48 bits: most sums s + p are inexact in
		 * binary64, the steps the kernel rounds to odd */
		{ "fp32/fp32 sequential", NULL, "fp32", "fp32", "sequential", D_MIX },
		{ "fp32/fp32 sequential, moderate", NULL, "fp32", "fp32", "sequential",
		  D_MODERATE },
		{ "fp32/bf16 blocked:16:fp32", NULL, "fp32", "bf16", "blocked:16:fp32", D_MIX },
	};
	uint64_t ne0 = fpl__acc_path_runs[4], eo0 = fpl__acc_eo32_runs;
	size_t i;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 21);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[80];
		if (c[i].prof) {
			model(&m, c[i].prof, NULL, NULL);
		} else {
			model(&m, NULL, c[i].in, c[i].acc);
			fpl_accum_parse_order(&m, c[i].ord);
		}
		snprintf(what, sizeof what, "%s (verified ne64), 10^6 outputs", c[i].what);
		check_case(&m, what, 2000, 500, 37, c[i].kind, 1, &g);
	}
	/* none of these is exact64: NE64 runs them only verified */
	if (avx512_kernels() && !h_check(fpl__acc_path_runs[4] > ne0))
		h_fail("verified ne64: the path was not taken on an AVX-512 CPU");
	if (avx512_kernels() && !h_check(fpl__acc_eo32_runs > eo0))
		h_fail("verified ne64: the binary32 evenodd kernels never ran on an AVX-512 CPU");
	h_note("verified ne64: 10^6 outputs per model");
}

static void test_fused64_million(void)
{
	static const char *const in[] = { "bf16", "e4m3fn", "fp16" };
	static const char *const acc[] = { "fp32", "fp16", "bf16" };
	static const char *const ord[] = { "fused:32", "fused:7", "fused:4" };
	static const fpl_rnd rnd[] = { FPL_RND_NE, FPL_RND_SP, FPL_RND_TN };
	uint64_t f0 = fpl__acc_path_runs[5];
	size_t i;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 19);
	for (i = 0; i < NELEM(in); i++) {
		fpl_accum_model m;
		char what[80];
		model(&m, NULL, in[i], acc[i]);
		m.acc_rnd = rnd[i];
		fpl_accum_parse_order(&m, ord[i]);
		snprintf(what, sizeof what, "%s/%s:%s %s, 10^6 outputs", in[i], acc[i],
			 fpl_rnd_name(rnd[i]), ord[i]);
		check_case(&m, what, 2000, 500, 40, D_MIX, 1, &g);
	}
	if (!h_check(fpl__acc_path_runs[5] > f0))
		h_fail("fused64 million: the FUSED64 path was not taken");
	h_note("fused64: 10^6 outputs per model");
}

static void test_ne64_million(void)
{
	static const char *const in[] = { "e4m3fn" };
	static const char *const ord[] = { "sequential", "blocked:5", "blocked:32:fp32" };
	uint64_t runs0 = fpl__acc_ne64_avx512_runs, ne0 = fpl__acc_path_runs[4];
	size_t i, o;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 17);
	for (i = 0; i < NELEM(in); i++)
		for (o = 0; o < NELEM(ord); o++) {
			fpl_accum_model m;
			char what[80];
			model(&m, NULL, in[i], "fp16");
			fpl_accum_parse_order(&m, ord[o]);
			snprintf(what, sizeof what, "%s/fp16 ne %s, 10^6 outputs", in[i], ord[o]);
			check_case(&m, what, 2000, 500, 12, D_MIX, 1, &g);
		}
	if (!h_check(fpl__acc_path_runs[4] > ne0))
		h_fail("ne64 million: the NE64 path was not taken");
	if (avx512_kernels() && !h_check(fpl__acc_ne64_avx512_runs > runs0))
		h_fail("ne64 million: the AVX-512 kernel never ran on an AVX-512 CPU");
	h_note("ne64: 10^6 outputs per model, AVX-512 kernel ranges %llu",
	       (unsigned long long)(fpl__acc_ne64_avx512_runs - runs0));
}

/*
 * The binary32 tiles (x86/chain_ro32_avx512.c: round to odd from two
 * fma, one rounding into acc) against the reference, every env mode and
 * 1 or 2 threads, 10^6 outputs per model (N = 500: a tile of 52 lanes
 * in every row), data with tiny, huge (overflow to inf, saturation),
 * subnormal, zero, inf and NaN values, C too (beta 1): bf16 and fp16
 * inputs whose sums are not exact in binary64 (the bf16 row of bgemm),
 * e4m3fn and e5m2 into fp16 blocked:32:fp32 (the promo additions in
 * binary32), a saturating and a flush-to-zero accumulator, an e4m3fn
 * accumulator (no inf), pairs:B (blocked with keep_first, no C), and
 * lean tiles (e4m3fn, e2m3, e5m2 inputs: x86/chain_ro32_avx512.c's (5);
 * e5m2's infinities times the +0 that pads a short tile's panel).
 */
static void test_ro32_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
		size_t K;
		int beta;
	} c[] = {
		{ "bf16", "fp16", "sequential", 40, 1 },
		{ "bf16", "fp16", "blocked:32:fp32", 70, 1 },
		{ "e4m3fn", "fp16", "blocked:32:fp32", 70, 1 },
		{ "fp16", "fp16", "sequential", 37, 1 },
		{ "e5m2", "fp16+sat", "blocked:5", 23, 1 },
		{ "e4m3fn", "fp16+ftz", "blocked:8", 30, 1 },
		{ "bf16", "e4m3fn", "sequential", 19, 1 },
		{ "bf16", "fp16", "pairs:6", 30, 0 },
		/* lean tiles: every sum a multiple of acc's smallest quantum;
		 * -0 in C sends a sequential tile to the checked kernel */
		{ "e4m3fn", "bf16", "sequential", 33, 1 },
		{ "e2m3", "fp16", "blocked:4:fp32", 21, 1 },
		{ "e4m3fn", "fp16", "pairs:6", 30, 0 },
		/* inputs with inf (inf * the panel's +0 pads of a short tile) */
		{ "e5m2", "bf16", "sequential", 26, 1 },
		{ "e5m2", "bf16", "blocked:8:fp32", 26, 1 },
	};
	uint64_t runs0 = fpl__acc_ro32_runs;
	size_t i;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 23);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[96];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, c[i].ord);
		snprintf(what, sizeof what, "%s/%s ne %s (binary32 tiles), 10^6 outputs", c[i].in,
			 c[i].acc, c[i].ord);
		check_case(&m, what, 2000, 500, c[i].K, D_MIX, c[i].beta, &g);
	}
	if (avx512_kernels() && !h_check(fpl__acc_ro32_runs > runs0))
		h_fail("ro32 million: the binary32 tiles never ran on an AVX-512 CPU");
	h_note("ro32: 10^6 outputs per model, tiles %llu",
	       (unsigned long long)(fpl__acc_ro32_runs - runs0));
}

/*
 * The lean NE64 kernels (chain_ne.c, x86/chain_ne_avx512.c) against the
 * reference, every env mode (AVX-512, FPLAB_ACCUM=avx2: the AVX2 one,
 * nosimd) and 1 or 2 threads.  Models whose tiny sums are exact: e4m3fn
 * into fp16 (sequential, blocked:32:fp32, fp16+sat) and e2m3 into
 * e4m3fn (three-bit accumulator: ranges of 8 steps).  Data: moderate
 * values with signed zeros and subnormal inputs (exact subnormal sums),
 * some rows of A and a few C values huge (ranges that overflow or whose
 * bound fails run the checked kernels), a few NaNs, and -0 in C (tiles
 * that start at -0 are not lean): 10^6 outputs per model, K = 40; then
 * K = 600 (several ranges of 256, a huge A value in the second range of
 * some rows only) on 130 columns (a tail of 2 lanes).
 */
static double lean_value(h_rng *g, const fpl_format *f, int huge)
{
	uint64_t u = h_rng_next(g);

	if (huge)
		return h_rng_value(g, f->emax - 1, f->emax, 53, 0);
	switch (u % 32) {
	case 0: return (u >> 8) & 1 ? -0.0 : 0.0;
	case 1:
	case 2: return h_rng_value(g, f->emin - f->m, f->emin - 1, 53, 0);
	default: return h_rng_value(g, -3, 2, 53, 0);
	}
}

static void lean_case(const fpl_accum_model *m, const char *what, size_t M, size_t N, size_t K,
		      h_rng *g)
{
	double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
	double *c0 = malloc(M * N * sizeof *c0);
	size_t i, k;

	for (i = 0; i < M; i++) {
		/* one row in 50 has a huge value: at k in [K/2, K) for K >= 512
		 * (that range only), anywhere otherwise */
		const size_t hk = h_rng_below(g, 50) ? K : K >= 512 ? K / 2 + h_rng_below(g, K / 2)
								  : h_rng_below(g, K);
		for (k = 0; k < K; k++)
			a[i * K + k] = lean_value(g, &m->a, k == hk);
	}
	for (i = 0; i < K * N; i++)
		b[i] = h_rng_below(g, 100000) ? lean_value(g, &m->b, 0) : NAN;
	for (i = 0; i < M * N; i++) {
		uint64_t u = h_rng_below(g, 1000);
		c0[i] = u == 0 ? -0.0 : u == 1 ? m->acc.max : u == 2 ? NAN
			: lean_value(g, &m->acc, 0);
	}
	check_data(m, what, M, N, K, D_MIX, 1, h_rng_next(g), a, b, c0);
	free(a);
	free(b);
	free(c0);
}

static void test_lean_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
	} c[] = {
		{ "e4m3fn", "fp16", "sequential" },
		{ "e4m3fn", "fp16", "blocked:32:fp32" },
		{ "e4m3fn", "fp16+sat", "sequential" },
		{ "e2m3", "e4m3fn", "sequential" },
	};
	uint64_t runs0 = fpl__acc_ne64_lean_runs, chk0 = fpl__acc_ne64_avx512_runs;
	size_t i;
	h_rng g;

	h_rng_init(&g, 23);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[96];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, c[i].ord);
		snprintf(what, sizeof what, "%s/%s ne %s (lean), 10^6 outputs", c[i].in, c[i].acc,
			 c[i].ord);
		if (!h_sanitized())
			lean_case(&m, what, 2000, 500, 40, &g);
		snprintf(what, sizeof what, "%s/%s ne %s (lean), K = 600", c[i].in, c[i].acc,
			 c[i].ord);
		lean_case(&m, what, h_sanitized() ? 6 : 40, 130, 600, &g);
	}
	if (fpl_cpu()->avx2 && fpl_cpu()->fma && !h_check(fpl__acc_ne64_lean_runs > runs0))
		h_fail("lean: the lean kernels never ran");
	/* ranges whose bound fails run the checked kernel */
	if (avx512_kernels() && !h_check(fpl__acc_ne64_avx512_runs > chk0))
		h_fail("lean: no range fell back to the checked AVX-512 kernel");
	h_note("lean ne64: 10^6 outputs per model, %llu lean ranges",
	       (unsigned long long)(fpl__acc_ne64_lean_runs - runs0));
}

/*
 * The AVX2 lean kernel with exactness checked per range (chain_ne.c's
 * lean2: FPLAB_ACCUM=avx2, or the avx2 kernel set) against the
 * reference, every env mode and 1 or 2 threads: sequential ne jobs that
 * EXACT64 does not cover (bf16 into fp16 and e4m3fn, fp16 into fp16).
 * Data: mixed (tiny, huge, special values: ranges whose bound fails),
 * moderate (the kernel throughout), and lean_case's (signed zeros,
 * subnormal inputs, huge rows, -0 and NaN in C) with K = 600, whose
 * tiny sums send lanes to the scalar rerun: 10^6 outputs per model.
 */
/* Products near acc's subnormal quantum q = 2^(emin-m): a and b are
 * +-2^(ceil((emin-m)/2)) (1 + j/128), so every product lies in
 * [q/2, 4q), has bits below q, and every sum of a row starts tiny
 * (initial sums +0).  lean2 must meet an inexact tiny step in every
 * group here, whatever the seed: the deterministic coverage of its
 * rerun path (lean_case meets one only by chance). */
static void tiny_case(const fpl_accum_model *m, const char *what, size_t M, size_t N,
		      size_t K, h_rng *g)
{
	double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
	double *c0 = calloc(M * N, sizeof *c0);
	const int e = m->acc.emin - m->acc.m, ea = e >= 0 ? e / 2 : -((1 - e) / 2);
	size_t i;

	for (i = 0; i < M * K; i++)
		a[i] = (h_rng_below(g, 2) ? -1.0 : 1.0) * ldexp(1.0 + (double)h_rng_below(g, 128) / 128, ea);
	for (i = 0; i < K * N; i++)
		b[i] = (h_rng_below(g, 2) ? -1.0 : 1.0) * ldexp(1.0 + (double)h_rng_below(g, 128) / 128,
								e - ea);
	check_data(m, what, M, N, K, D_TINY, 1, h_rng_next(g), a, b, c0);
	free(a);
	free(b);
	free(c0);
}

static void test_lean2_million(void)
{
	static const struct {
		const char *in, *acc;
	} c[] = {
		{ "bf16", "fp16" },
		{ "fp16", "fp16" },
		{ "bf16", "e4m3fn" },
	};
	uint64_t runs0 = fpl__acc_ne64_lean2_runs, re0 = fpl__acc_ne64_lean2_reruns;
	uint64_t wk0 = fpl__acc_ne64_lean2_weak;
	size_t i;
	h_rng g;

	h_rng_init(&g, 29);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[96];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, "sequential");
		snprintf(what, sizeof what, "%s/%s ne sequential (lean2), 10^6 outputs", c[i].in,
			 c[i].acc);
		if (!h_sanitized()) {
			check_case(&m, what, 2000, 500, 37, D_MIX, 1, &g);
			check_case(&m, what, 2000, 500, 37, D_MODERATE, 1, &g);
			lean_case(&m, what, 2000, 500, 40, &g);
		}
		snprintf(what, sizeof what, "%s/%s ne sequential (lean2), K = 600", c[i].in,
			 c[i].acc);
		lean_case(&m, what, h_sanitized() ? 6 : 40, 130, 600, &g);
		check_case(&m, what, h_sanitized() ? 6 : 40, 130, 600, D_MODERATE, 1, &g);
		snprintf(what, sizeof what, "%s/%s ne sequential (lean2), tiny sums", c[i].in,
			 c[i].acc);
		tiny_case(&m, what, 4, 64, 48, &g);
	}
	if (fpl_cpu()->avx2 && fpl_cpu()->fma && !h_check(fpl__acc_ne64_lean2_runs > runs0))
		h_fail("lean2: the AVX2 lean kernel never ran");
	if (fpl_cpu()->avx2 && fpl_cpu()->fma && !h_check(fpl__acc_ne64_lean2_reruns > re0))
		h_fail("lean2: no lane met a tiny sum");
	if (fpl_cpu()->avx2 && fpl_cpu()->fma && !h_check(fpl__acc_ne64_lean2_weak > wk0))
		h_fail("lean2: no weak step");
	h_note("lean2 ne64: 10^6 outputs per model, %llu ranges, %llu lanes rerun, %llu weak steps",
	       (unsigned long long)(fpl__acc_ne64_lean2_runs - runs0),
	       (unsigned long long)(fpl__acc_ne64_lean2_reruns - re0),
	       (unsigned long long)(fpl__acc_ne64_lean2_weak - wk0));
}

/* Mode sp on the AVX-512 sp kernel (x86/chain_sp_avx512.c): exact64
 * models (e4m3fn into fp16, e4m3fnuz) and verified ones (bf16 into
 * fp16, fp16 without subnormals or saturating, e5m2 and e4m3fnuz; e5m2
 * into bf16), 10^6 outputs each with
 * tiny, huge and special values among them, sr_bits 32, 17, 5 and 1,
 * sequential and blocked, every env mode and 1 or 2 threads against
 * FPLAB_ACCUM=ref (check_case): same bits, flags, counts and draws. */
static void test_sp64_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
		int R, kind;
	} c[] = {
		{ "bf16", "fp16:sp", "sequential", 32, D_MIX },
		{ "bf16", "fp16:sp", "sequential", 17, D_SPECIAL },
		{ "bf16", "fp16+nosub:sp", "blocked:5", 5, D_MIX },
		{ "e4m3fn", "fp16:sp", "sequential", 1, D_MIX },
		{ "e4m3fn", "fp16:sp", "blocked:5:fp32", 17, D_WIDE },
		{ "e5m2", "bf16:sp", "sequential", 5, D_TINY },
		{ "bf16", "fp16:sp", "sequential", 1, D_HUGE },
		{ "e4m3fn", "e4m3fnuz:sp", "sequential", 32, D_MIX },
		{ "bf16", "fp16+sat:sp", "blocked:8", 17, D_BIG },
		{ "bf16", "e5m2:sp", "sequential", 32, D_SPECIAL },	/* NaN payloads in mask */
		{ "bf16", "e4m3fnuz:sp", "blocked:5", 5, D_MIX },
	};
	uint64_t runs0 = fpl__acc_sp64_avx512_runs;
	size_t i;
	h_rng g;

	if (h_sanitized())
		return;
	h_rng_init(&g, 29);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[96];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, c[i].ord);
		sr_bits = c[i].R;
		snprintf(what, sizeof what, "%s/%s %s sr_bits %d, 10^6 outputs", c[i].in, c[i].acc,
			 c[i].ord, c[i].R);
		check_case(&m, what, 2000, 500, 13, c[i].kind, 1, &g);
	}
	sr_bits = 32;
	if (avx512_kernels() && !h_check(fpl__acc_sp64_avx512_runs > runs0))
		h_fail("sp64 million: the AVX-512 sp kernel never ran on an AVX-512 CPU");
	h_note("sp64: 10^6 outputs per model, AVX-512 kernel ranges %llu",
	       (unsigned long long)(fpl__acc_sp64_avx512_runs - runs0));
}

/* The profiles, on a larger GEMM over several tiles and threads (K = 65:
 * amx-bf16's last block shorter, onednn-bf16's blocks of 16 with an odd
 * last one). */
static void test_profiles(void)
{
	static const char *const prof[] = { "fp32-fma", "fp32-mul-add", "avx512bf16", "amx-bf16",
					    "onednn-bf16" };
	h_rng g;
	size_t p;
	int kind;

	h_rng_init(&g, 13);
	for (p = 0; p < NELEM(prof); p++)
		for (kind = 0; kind < D_COUNT; kind++) {
			fpl_accum_model m;
			fpl_accum_profile(&m, prof[p]);
			m.a_load = m.b_load = FPL_LOAD_ROUND;
			check_case(&m, prof[p], 7, 150, 65, kind, kind & 1, &g);
			if (m.pair_block) {	/* onednn-bf16's blocks at K = 65 */
				m.pair_block = 16;
				check_case(&m, "onednn-bf16, blocks of 16", 7, 150, 65, kind,
					   !(kind & 1), &g);
			}
		}
	h_note("profiles: fast and reference paths agree");
}

/*
 * Signed zeros at the ends of pairs:B and evenodd blocks: tiny data on
 * FTZ accumulators leaves -0 in chains (a tiny negative result flushed),
 * and short, odd K puts it where a wrong pad would show: pairs pads with
 * +0 (fma(+0, +0, -0) = +0 except in tn), evenodd runs only the k it
 * has (a -0 pad would turn +0 into -0 in tn, a +0 pad -0 into +0), and
 * pairs:B without C keeps block 0's -0.  Exact zeros among the data let
 * a chain's sign reach past its last term.  Modes ne and tn, beta 0 and
 * 1 (C tiny or zero, so often -0 after its FTZ load).
 */
static void test_signed_zeros(void)
{
	static const char *const ords[] = { "pairs:4", "pairs:6:fp16", "evenodd:4", "evenodd:5" };
	static const char *const acc[] = { "fp32+daz+ftz", "fp16+ftz" };
	static const fpl_rnd rnd[] = { FPL_RND_NE, FPL_RND_TN };
	static const size_t ks[] = { 1, 3, 4, 5, 7, 9, 13 };
	size_t o, a, q, k;
	int beta;
	h_rng g;

	h_rng_init(&g, 15);
	for (o = 0; o < NELEM(ords); o++)
		for (a = 0; a < NELEM(acc); a++)
			for (q = 0; q < NELEM(rnd); q++)
				for (k = 0; k < NELEM(ks); k++)
					for (beta = 0; beta < 2; beta++) {
						fpl_accum_model m;
						char what[96];
						model(&m, NULL, "e4m3fn", acc[a]);
						m.acc_rnd = rnd[q];
						fpl_accum_parse_order(&m, ords[o]);
						snprintf(what, sizeof what, "signed zeros: e4m3fn -> %s:%s %s K %zu",
							 acc[a], fpl_rnd_name(rnd[q]), ords[o], ks[k]);
						check_case(&m, what, 3, 40, ks[k], D_TINY0, beta, &g);
					}
	h_note("signed zeros: pads and block ends of pairs:B and evenodd");
}

/*
 * Inexact untracked (fpl_state.untracked): on every path the outputs are
 * the reference's bits, flags_out and the counts are the reference's
 * without inexact, the counter moves the same; binary32 fma models run
 * as one register-blocked GEMM (fpl__acc_whole_runs), full binary32
 * inputs included, and overflowing ones fall back to the tiles.
 */
static void test_untracked(void)
{
	static const char *const mods[][2] = { { "bf16", "fp32" }, { "fp16", "fp32" },
					       { "fp32", "fp32" }, { "e4m3fn", "fp16" } };
	static const size_t shapes[][3] = { { 1, 1, 1 }, { 7, 19, 5 }, { 6, 16, 64 },
					    { 13, 35, 33 }, { 12, 48, 130 }, { 3, 5, 0 } };
	const unsigned inex = FPL_FLAG_INEXACT;
	uint64_t whole0 = fpl__acc_whole_runs;
	size_t mi, si, i, e;
	int kind, beta, t;
	h_rng g;

	h_rng_init(&g, 14);
	for (mi = 0; mi < NELEM(mods); mi++)
		for (si = 0; si < NELEM(shapes); si++)
			for (kind = 0; kind < D_COUNT; kind++) {
				const size_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
				fpl_accum_model m;
				double *a = malloc((M * K + 1) * sizeof *a);
				double *b = malloc((K * N + 1) * sizeof *b), *c0 = malloc(M * N * sizeof *c0);
				result R[2];
				uint64_t seed = h_rng_next(&g);

				model(&m, NULL, mods[mi][0], mods[mi][1]);
				beta = (int)(si & 1);
				for (i = 0; i < M * K; i++)
					a[i] = gen(&g, &m.a, kind);
				for (i = 0; i < K * N; i++)
					b[i] = gen(&g, &m.b, kind);
				for (i = 0; i < M * N; i++)
					c0[i] = gen(&g, &m.acc, kind == D_SPECIAL ? D_MODERATE : kind);
				R[0].c = malloc(M * N * sizeof(double));
				R[0].fl = malloc(M * N * sizeof(unsigned));
				R[1].c = malloc(M * N * sizeof(double));
				R[1].fl = malloc(M * N * sizeof(unsigned));
				run_env("ref", &m, M, N, K, a, b, c0, beta, 1, seed, &R[0]);
				for (e = 1; e < NELEM(env_modes); e++)
					for (t = 1; t <= 2; t++) {
						int ok;
						if (*env_modes[e])
							setenv("FPLAB_ACCUM", env_modes[e], 1);
						memcpy(R[1].c, c0, M * N * sizeof *c0);
						fpl_state_init(&R[1].st, seed);
						R[1].st.threads = t;
						R[1].st.counter = 1000;
						R[1].st.untracked = inex;
						R[1].rc = fpl_accum_gemm(R[1].c, N, &m, beta, M, N, K, a, K, 0, b,
									 N, 0, R[1].fl, &R[1].st);
						unsetenv("FPLAB_ACCUM");
						ok = R[1].rc == R[0].rc;
						for (i = 0; ok && !R[0].rc && i < M * N; i++)
							ok = h_same(R[0].c[i], R[1].c[i])
							     && R[1].fl[i] == (R[0].fl[i] & ~inex);
						ok = ok && R[1].st.counter == R[0].st.counter
						     && R[1].st.flags == (R[0].st.flags & ~inex)
						     && R[1].st.count[0] == 0;
						for (i = 1; ok && i < FPL_NFLAGS; i++)
							ok = R[1].st.count[i] == R[0].st.count[i];
						if (!h_check(ok))
							h_fail("untracked inexact: %s/%s %zux%zux%zu kind %d beta %d "
							       "env '%s' %d threads: differs from the reference",
							       mods[mi][0], mods[mi][1], M, N, K, kind, beta,
							       env_modes[e], t);
					}
				free(R[0].c);
				free(R[0].fl);
				free(R[1].c);
				free(R[1].fl);
				free(a);
				free(b);
				free(c0);
			}
	if (!h_check(fpl__acc_whole_runs > whole0))
		h_fail("untracked inexact: the register-blocked binary32 GEMM never ran");
	h_note("untracked inexact: same bits, flags and counts less inexact; whole-GEMM runs %llu",
	       (unsigned long long)(fpl__acc_whole_runs - whole0));
}

/*
 * Mode sp on AVX2 (x86/chain_sp_avx2.c; issue 24, item 3).  The sp
 * chains under the avx2 kernel set (FPLAB_KERNELS=avx2's selection, so
 * that the default env mode runs the AVX2 kernel too, as do "avx2" and,
 * without it, "nosimd" the portable path), each model on 10^6 outputs
 * against FPLAB_ACCUM=ref with 1 and 2 threads (check_case: bits, flags,
 * counts, counter): verified jobs (bf16 into fp16 with TwoSum-inexact
 * sums from wide data, into fp32 whose s = 29 is below R = 32 and 30)
 * and EXACT64 ones (e4m3fn into fp16, e5m2 into bf16), special values,
 * tiny and huge results, fnuz, saturating and no-subnormal accumulators,
 * sr_bits 32, 31, 17, 5 and 1, sequential and blocked, N = 500 and 77
 * (tiles ending in a partial chunk of lanes).  Under sanitizers the
 * same models on 2000 outputs.  The kernel must have run.
 */
extern uint64_t fpl__acc_sp64_avx2_runs;
void fpl__acc_sp64_avx2_draws(const uint64_t *z, size_t n, int xs, uint64_t *hi);

/* splitmix64's finalizer, written here from its definition (Steele,
 * Lea and Flood; the engine's fpl__mix64 constants). */
static uint64_t sp2_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The AVX2 draws' high words (kernels/x86/draw_avx2.h) against
 * sp2_mix64 on 10^6 arguments: random ones, the draw arguments of
 * consecutive indices, and words with all-zero or all-one halves; bit
 * 32 (the high word's bit 0) compared only with the last xorshift
 * (xs = 1). */
static void test_sp64_avx2_draws(void)
{
	enum { NZ = 1 << 12 };
	static uint64_t z[NZ], hi[NZ];
	const size_t rounds = h_sanitized() ? 4 : 250;
	size_t r, i;
	int xs;
	h_rng g;

	if (!fpl_cpu()->avx2)
		return;
	h_rng_init(&g, 31);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NZ; i++) {
			uint64_t u = h_rng_next(&g);
			switch (r % 4) {
			case 0: z[i] = u; break;
			case 1: z[i] = 0x1234567890abcdefull + (u % 64 + i + 1) * 0x9e3779b97f4a7c15ull; break;
			case 2: z[i] = (u & 1 ? 0xffffffffull : 0) | (u & 2 ? 0xffffffff00000000ull : 0)
				       | (u >> 2 & 0x1f) << (u >> 8 & 63); break;
			default: z[i] = u >> (u & 63); break;
			}
		}
		for (xs = 0; xs < 2; xs++) {
			fpl__acc_sp64_avx2_draws(z, NZ, xs, hi);
			for (i = 0; i < NZ; i++) {
				uint64_t want = sp2_mix64(z[i]) >> 32, got = hi[i] & 0xffffffffull;
				uint64_t care = xs ? 0xffffffffull : 0xfffffffeull;
				if (!h_check(((want ^ got) & care) == 0)) {
					h_fail("sp64 avx2 draws: z %#llx xs %d: high word %#llx, want %#llx",
					       (unsigned long long)z[i], xs, (unsigned long long)got,
					       (unsigned long long)want);
					return;
				}
			}
		}
	}
	h_note("sp64 avx2 draws: %zu arguments against splitmix64", rounds * NZ);
}

static void test_sp64_avx2_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
		int R, kind;
		size_t N;
	} c[] = {
		{ "bf16", "fp16:sp", "sequential", 32, D_MIX, 500 },
		{ "bf16", "fp16:sp", "sequential", 31, D_WIDE, 500 },
		{ "bf16", "fp16:sp", "blocked:5", 17, D_SPECIAL, 77 },
		{ "bf16", "fp32:sp", "sequential", 32, D_MIX, 500 },
		{ "bf16", "fp32:sp", "sequential", 30, D_TINY, 77 },
		{ "bf16", "fp16+nosub:sp", "sequential", 5, D_TINY, 500 },
		{ "bf16", "fp16+sat:sp", "blocked:8", 1, D_HUGE, 500 },
		{ "bf16", "e4m3fnuz:sp", "sequential", 17, D_MIX, 77 },
		{ "e4m3fn", "fp16:sp", "sequential", 32, D_MIX, 500 },
		{ "e4m3fn", "fp16:sp", "blocked:5:fp32", 1, D_WIDE, 77 },
		{ "e5m2", "bf16:sp", "sequential", 5, D_SPECIAL, 500 },
	};
	const char *prev = fpl_kernels_selected();
	const int restore = strcmp(prev, "avx2") != 0;
	const uint64_t runs0 = fpl__acc_sp64_avx2_runs;
	size_t i;
	h_rng g;

	if (!fpl_cpu()->avx2 || !fpl_cpu()->fma || fpl_kernels_select("avx2"))
		return;
	h_rng_init(&g, 37);
	for (i = 0; i < NELEM(c); i++) {
		const size_t M = (h_sanitized() ? 2000 : 1000000) / c[i].N + 1;
		fpl_accum_model m;
		char what[112];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, c[i].ord);
		sr_bits = c[i].R;
		snprintf(what, sizeof what, "avx2 set: %s/%s %s sr_bits %d, %zux%zu outputs", c[i].in,
			 c[i].acc, c[i].ord, c[i].R, M, c[i].N);
		check_case(&m, what, M, c[i].N, 13, c[i].kind, 1, &g);
	}
	sr_bits = 32;
	if (restore && !h_check(fpl_kernels_select(prev) == 0))
		h_fail("sp64 avx2: cannot restore the kernel set %s", prev);
	if (!h_check(fpl__acc_sp64_avx2_runs > runs0))
		h_fail("sp64 avx2: the AVX2 sp kernel never ran on an AVX2 CPU");
	h_note("sp64 avx2: %s outputs per model under the avx2 set, AVX2 kernel ranges %llu",
	       h_sanitized() ? "2000" : "10^6", (unsigned long long)(fpl__acc_sp64_avx2_runs - runs0));
}

/*
 * The binary32 tiles on AVX2 (x86/chain_ro32_avx2.c: one fma rounded to
 * nearest, TwoSum's error, one rounding into acc with the midpoint
 * correction) against the reference, under the avx2 kernel set
 * (FPLAB_KERNELS=avx2, as bench/bgemm's [avx2] rows: env '' and 'avx2'
 * both run the AVX2 kernel), every env mode and 1 or 2 threads, 10^6
 * outputs per model (N = 500: a tile of 52 lanes, a group of 20, in
 * every row), test_ro32_million's data (tiny, huge, subnormal, zero,
 * inf and NaN values, C too): the models the AVX2 kernel takes (products
 * of at most 24 bits; sequential jobs that chain_ne.c's lean and lean2
 * kernels run stay there): bf16 into fp16 blocked:32:fp32 (products
 * below 2^-126: the per-lane product test) and into bf16, e4m3fn into
 * fp16 blocked:32:fp32 (lean tiles, the bgemm row), fp16 inputs (22-bit
 * products), a saturating and a flush-to-zero accumulator, e4m3fn
 * accumulators, pairs:B (keep_first, no C), lean sequential tiles (-0 in
 * C sends one to the checked variant) and inputs with inf.  Then small
 * integers (D_INT: exact sums, ties of acc whose binary32 sum is exact)
 * and moderate data on K = 300: e4m3fn blocks whose sums pass 2^6
 * (x86/chain_ro32_avx2.c's (6): flagged lanes, then the switch to the
 * general variant), bf16 sums inexact in binary32 that round onto a
 * midpoint of acc (the correction).
 */
static void test_ro32_avx2_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
		size_t K;
		int beta, kind;
	} c[] = {
		{ "bf16", "fp16", "blocked:32:fp32", 70, 1, D_MIX },
		{ "e4m3fn", "fp16", "blocked:32:fp32", 70, 1, D_MIX },
		{ "bf16", "bf16", "sequential", 40, 1, D_MIX },
		{ "fp16", "fp16", "blocked:16:fp32", 37, 1, D_MIX },
		{ "e5m2", "fp16+sat", "blocked:5", 23, 1, D_MIX },
		{ "e4m3fn", "fp16+ftz", "blocked:8", 30, 1, D_MIX },
		{ "bf16", "e4m3fn", "blocked:8:fp32", 19, 1, D_MIX },
		{ "bf16", "fp16", "pairs:6", 30, 0, D_MIX },
		{ "e4m3fn", "bf16", "sequential", 33, 1, D_MIX },
		{ "e2m3", "fp16", "blocked:4:fp32", 21, 1, D_MIX },
		{ "e4m3fn", "fp16", "pairs:6", 30, 0, D_MIX },
		{ "e5m2", "bf16", "sequential", 26, 1, D_MIX },
		{ "e5m2", "bf16", "blocked:8:fp32", 26, 1, D_MIX },
		{ "e4m3fn", "fp16", "blocked:32:fp32", 300, 1, D_INT },
		{ "e4m3fn", "fp16", "blocked:128:fp32", 300, 1, D_MODERATE },
		{ "bf16", "fp16", "blocked:64:fp32", 300, 1, D_MODERATE },
		{ "bf16", "bf16", "sequential", 300, 0, D_MODERATE },
	};
	const size_t M = h_sanitized() ? 4 : 2000;
	uint64_t runs0 = fpl__acc_ro32_avx2_runs, mids0 = fpl__acc_ro32_avx2_mids;
	char orig[32];
	size_t i;
	h_rng g;

	if (!fpl_cpu()->avx2 || !fpl_cpu()->fma) {
		h_note("ro32 avx2: skipped (no AVX2+FMA here)");
		return;
	}
	snprintf(orig, sizeof orig, "%s", fpl_kernels_selected());
	if (fpl_kernels_select("avx2")) {
		h_fail("ro32 avx2: cannot select the avx2 kernel set");
		return;
	}
	h_rng_init(&g, 31);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		uint64_t r0 = fpl__acc_ro32_avx2_runs;
		char what[112];
		model(&m, NULL, c[i].in, c[i].acc);
		fpl_accum_parse_order(&m, c[i].ord);
		snprintf(what, sizeof what, "%s/%s ne %s K %zu (AVX2 binary32 tiles), %zu outputs",
			 c[i].in, c[i].acc, c[i].ord, c[i].K, M * 500);
		check_case(&m, what, c[i].K > 100 ? M / 4 + 1 : M, 500, c[i].K, c[i].kind, c[i].beta,
			   &g);
		/* the bgemm rows' models must run the kernel */
		if (i < 3 && !h_check(fpl__acc_ro32_avx2_runs > r0))
			h_fail("%s: the AVX2 binary32 tiles did not run", what);
	}
	if (fpl_kernels_select(orig))
		h_fail("ro32 avx2: cannot restore the kernel set %s", orig);
	if (!h_check(fpl__acc_ro32_avx2_runs > runs0))
		h_fail("ro32 avx2: the AVX2 binary32 tiles never ran");
	if (!h_sanitized() && !h_check(fpl__acc_ro32_avx2_mids > mids0))
		h_fail("ro32 avx2: no sum needed the midpoint correction");
	h_note("ro32 avx2: %zu outputs per model, tiles %llu, midpoint corrections %llu", M * 500,
	       (unsigned long long)(fpl__acc_ro32_avx2_runs - runs0),
	       (unsigned long long)(fpl__acc_ro32_avx2_mids - mids0));
}

/*
 * An accumulator whose normal binades reach below binary32's (emin =
 * -139, p = 4, a custom bias: values down to 2^-142, binary32
 * subnormals): the binary32 tiles (AVX-512 and AVX2) must leave it to
 * the other paths (chain_fast.c's ro32_ok asks emin >= -126; the AVX-512
 * kernel, which took it, rounded such sums at the wrong quantum).  bf16
 * inputs near 2^-66, products near 2^-131, every env mode under each
 * kernel set this CPU runs, against the reference.
 */
static void test_ro32_low_emin(void)
{
	static const char *const sets[] = { "avx512", "avx2" };
	const size_t M = 40, N = 70, K = 16;
	double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
	double *c0 = malloc(M * N * sizeof *c0);
	fpl_accum_model m;
	char orig[32];
	size_t i, s;
	h_rng g;

	h_rng_init(&g, 37);
	fpl_accum_init(&m);
	spec(&m.a, &m.a_rnd, "bf16");
	m.b = m.a;
	if (fpl_format_params(&m.acc, 4, -139, -109)) {
		h_fail("low emin: cannot make the accumulator");
		return;
	}
	m.acc.subnormal = FPL_SUB_YES;
	m.acc_rnd = FPL_RND_NE;
	fpl_accum_parse_order(&m, "sequential");
	snprintf(orig, sizeof orig, "%s", fpl_kernels_selected());
	for (s = 0; s < NELEM(sets); s++) {
		if (fpl_kernels_select(sets[s]))
			continue;
		for (i = 0; i < M * K; i++)
			a[i] = h_rng_value(&g, -68, -64, 8, 0);
		for (i = 0; i < K * N; i++)
			b[i] = h_rng_value(&g, -68, -64, 8, 0);
		for (i = 0; i < M * N; i++)
			c0[i] = h_rng_below(&g, 4) ? 0.0 : h_rng_value(&g, -135, -125, 4, 0);
		check_data(&m, "bf16 -> p4,emin-139 sequential (low emin)", M, N, K, D_TINY, 1,
			   h_rng_next(&g), a, b, c0);
	}
	if (fpl_kernels_select(orig))
		h_fail("low emin: cannot restore the kernel set %s", orig);
	free(a);
	free(b);
	free(c0);
	h_note("low emin: the binary32 tiles leave acc below binary32's normal range alone");
}

/*
 * The FUSED64 group sums on AVX2 (x86/chain_fused_avx2.c, env 'avx2';
 * on an AVX-512 CPU env '' runs the AVX-512 twin, and 'nosimd' the
 * portable one, on the same data) on 10^6 outputs per model, against the
 * reference path, on data built for the fused sum's edges:
 *  - significands of 1 to m+1 bits at exponents top or top - d, d chosen
 *    so that the exact group sums span about 53 bits: some lanes' binary64
 *    additions are exact, some are off by the last bit (the TwoSum errors
 *    the kernel must see, or the lane is wrong);
 *  - zeros, infinities, quiet and signaling NaNs, subnormal and huge
 *    inputs (products overflowing the accumulator), inputs near the
 *    square root of acc's smallest normal (tiny and subnormal sums),
 *    rare enough that most lanes stay finite;
 *  - rows whose first group's exact sum lies next to a value of acc or a
 *    midpoint, below binary64's last bit (fedge_tie_row): a lane whose
 *    inexact binary64 sum were taken would round wrongly;
 *  - groups whose products cancel exactly (rows of A with equal pairs
 *    times columns of B with opposite pairs), with a zero C: an exact zero
 *    sum and its sign rule;
 *  - N with every tail of the kernel's passes (16 lanes, 4 lanes, and a
 *    last 1 to 3 lanes by the portable body), K not a multiple of F, F
 *    longer than K and F = 1.
 * Expected values come from the reference path (FPLAB_ACCUM=ref).
 */
static double fedge_value(h_rng *g, const fpl_accum_model *m, int is_c)
{
	const fpl_format *f = is_c ? &m->acc : &m->a;
	const uint64_t u = h_rng_next(g), r = u % (is_c ? 256 : 4096);
	/* group sums near 2^4 whose products at 2^(-2d) have their last bit
	 * at 2^(-2d-2m) span 53 bits when d is about (49 - 2m) / 2: jittered
	 * around it, some lanes are exact in binary64 and some are not */
	const int d = (49 - 2 * m->a.m) / 2 + (int)((u >> 40) % 7) - 3;
	int e;

	/* rare enough that most lanes stay finite over K terms */
	if (r < 2) {	/* specials, signaling NaNs included */
		switch ((u >> 10) % 5) {
		case 0: return (u >> 20) & 1 ? -INFINITY : INFINITY;
		case 1: return -INFINITY;
		case 2: return h_from_bits(0x7ff8000000000000ull | ((u >> 24) & 0xff) << 40);
		case 3: return h_from_bits(0xfff0000000000001ull | ((u >> 24) & 0xff) << 40);
		default: return NAN;
		}
	}
	if (r < 4)	/* huge: products, sums overflowing acc */
		return h_rng_value(g, f->emax - 2, f->emax, 53, 0);
	if (r < 100)	/* zeros */
		return (u >> 20) & 1 ? -0.0 : 0.0;
	if (r < (is_c ? 180 : 108))	/* subnormal */
		return h_rng_value(g, f->emin - f->m, f->emin - 1, 53, 0);
	/* tiny: products near acc's smallest normal (inputs subnormal, or
	 * flushed on load, where the format cannot get there) */
	if (r < (is_c ? 260 : 116)) {
		if (is_c)
			return h_rng_value(g, f->emin - f->m, f->emin + 1, 53, 0);
		return h_rng_value(g, m->acc.emin / 2 - 3, m->acc.emin / 2 + 1, 53, 0);
	}
	if (is_c)
		e = (int)((u >> 10) % 9) - 4;
	else
		e = (u >> 10) & 1 ? -d : (int)((u >> 12) % 3) - 1;
	if (e < f->emin - f->m)
		e = f->emin - f->m;
	return h_rng_value(g, e, e, 1 + (int)((u >> 16) % (uint64_t)(f->m + 1)), 0);
}

/*
 * Row arow of A (K deep) and its outputs c (N of them), made to put the
 * exact sum of the first group on an edge of acc's rounding, missed by
 * one bit in binary64: the group holds S + q + r, q = a_0 b_0j with a_0
 * a power of two (so q is a value of acc when b_0j has at most acc.m + 1
 * bits), S = c_j either +-0 or +-half an ulp of q in acc (q + S a value
 * of acc or a midpoint between two), r = a_1 b_1j with a_1 about 2^-50
 * times a_0: r lies around the last bit binary64 keeps of q, so q + S +
 * r is sometimes exact in binary64 and sometimes not, and then rounds
 * differently from its binary64 sum in every mode.  The rest of the
 * first group's row is zero.
 */
static void fedge_tie_row(const fpl_accum_model *m, double *arow, const double *b, double *c,
			  size_t N, size_t K, h_rng *g)
{
	const fpl_format *f = &m->a, *ac = &m->acc;
	const uint64_t u = h_rng_next(g);
	const int e0 = (int)(u % 3) - 1, lo = f->emin - f->m;
	const int e1 = e0 - 48 - (int)((u >> 4) % 12);
	const size_t F = m->block < K ? m->block : K;
	size_t j, k;

	if (K < 2)
		return;
	arow[0] = ldexp((u >> 8) & 1 ? -1.0 : 1.0, e0);
	arow[1] = ldexp((u >> 9) & 1 ? -1.0 : 1.0, e1 < lo ? lo : e1);
	for (k = 2; k < F; k++)
		arow[k] = 0;
	for (j = 0; j < N; j++) {
		const double q = arow[0] * b[j];
		const uint64_t v = h_rng_next(g);
		int eq;

		if (q == 0 || !isfinite(q))
			continue;
		eq = ilogb(q);
		if (eq < ac->emin || eq > ac->emax)
			continue;
		switch (v % 4) {
		case 0: c[j] = (v >> 8) & 1 ? -0.0 : 0.0; break;
		case 1: c[j] = ldexp(1.0, eq - ac->m - 1); break;
		case 2: c[j] = -ldexp(1.0, eq - ac->m - 1); break;
		default: break;	/* c[j] as generated */
		}
	}
}

/* One model on fedge data: M x N outputs, K deep. */
static void fedge_case(const fpl_accum_model *m, const char *what, size_t M, size_t N, size_t K,
		       h_rng *g)
{
	double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
	double *c0 = malloc(M * N * sizeof *c0);
	uint64_t seed = h_rng_next(g);
	size_t i, j, k;

	for (i = 0; i < M * K; i++)
		a[i] = fedge_value(g, m, 0);
	for (i = 0; i < K * N; i++)
		b[i] = fedge_value(g, m, 0);
	for (i = 0; i < M * N; i++)
		c0[i] = fedge_value(g, m, 1);
	/* exact cancellation: rows i = 0 mod 3 as pairs a, a; columns j = 0
	 * mod 4 as pairs b, -b (every group of an even F starts a pair); C
	 * zero (either sign) at half of those outputs */
	for (i = 0; i < M; i += 3)
		for (k = 0; k + 1 < K; k += 2)
			a[i * K + k + 1] = a[i * K + k];
	for (k = 0; k + 1 < K; k += 2)
		for (j = 0; j < N; j += 4)
			b[(k + 1) * N + j] = -b[k * N + j];
	for (i = 0; i < M; i += 6)
		for (j = 0; j < N; j += 4)
			c0[i * N + j] = ((i + j) % 5) & 1 ? -0.0 : 0.0;
	for (i = 2; i < M; i += 6)
		fedge_tie_row(m, a + i * K, b, c0 + i * N, N, K, g);
	check_data(m, what, M, N, K, D_MIX, 1, seed, a, b, c0);
	free(a);
	free(b);
	free(c0);
}

static void test_fused64_avx2_million(void)
{
	static const struct {
		const char *in, *acc, *ord;
		fpl_rnd rnd;
		size_t M, N, K;
	} c[] = {
		/* N: tiles of 64 and 61 = 3*16 + 3*4 + 1; groups 32, 32, 6 */
		{ "bf16", "fp32", "fused:32", FPL_RND_NE, 8000, 125, 70 },
		/* 63 = 3*16 + 3*4 + 3; groups 7, 7, 7, 2 */
		{ "e4m3fn", "fp16", "fused:7", FPL_RND_SP, 7875, 127, 23 },
		/* 66 = 64 + 2: a tail by the portable body alone; one group */
		{ "fp16", "bf16", "fused:64", FPL_RND_TN, 15152, 66, 40 },
		/* F = 1: S plus one product; 100 = 64 + 2*16 + 4 */
		{ "bf16", "fp16", "fused:1", FPL_RND_TZ, 10000, 100, 9 },
	};
	const int native = fpl_cpu()->avx2 && fpl_cpu()->fma && strcmp(fpl_kernels_selected(), "ref");
	uint64_t r0 = fpl__acc_fused_avx2_runs;
	size_t i;
	h_rng g;

	h_rng_init(&g, 24);
	for (i = 0; i < NELEM(c); i++) {
		const uint64_t p0 = fpl__acc_path_runs[5];
		fpl_accum_model m;
		char what[96];
		model(&m, NULL, c[i].in, c[i].acc);
		m.acc_rnd = c[i].rnd;
		fpl_accum_parse_order(&m, c[i].ord);
		snprintf(what, sizeof what, "fused64 avx2: %s/%s:%s %s %zux%zux%zu", c[i].in,
			 c[i].acc, fpl_rnd_name(c[i].rnd), c[i].ord, c[i].M, c[i].N, c[i].K);
		/* under the sanitizers a hundredth: the kernel's loads and
		 * stores at every tail, not the 10^6 */
		fedge_case(&m, what, c[i].M / (h_sanitized() ? 100 : 1), c[i].N, c[i].K, &g);
		if (!h_check(fpl__acc_path_runs[5] > p0))
			h_fail("%s: the FUSED64 path was not taken", what);
	}
	if (native && !h_check(fpl__acc_fused_avx2_runs > r0))
		h_fail("fused64 avx2: the AVX2 group sums never ran on an AVX2 CPU");
	h_note("fused64 avx2: %s outputs per model, edge data; AVX2 group sums %llu",
	       h_sanitized() ? "10^4" : "10^6", (unsigned long long)(fpl__acc_fused_avx2_runs - r0));
}

/*
 * The verified NE64 chains on AVX2 (x86/chain_ne64_avx2.c) under the
 * avx2 kernel set (as FPLAB_KERNELS=avx2 selects it: env '' and 'avx2'
 * then run that kernel, 'nosimd' the portable paths), every env mode and
 * 1 or 2 threads against the reference, 10^6 outputs per model: the
 * bf16 hardware profiles (DAZ and FTZ), fp32 inputs into fp32 (most sums
 * inexact in binary64: rounded to odd) and into a fp32 with DAZ, a
 * saturating fp32 and a fp16 with FTZ, bf16 into bf16 blocked and
 * evenodd (chains of stride 2), fp16 into a DAZ fp32.  Data (avx2_value):
 * moderate values, a few with exponents spread over 2^-40 .. 2^40 (sums
 * inexact in binary64 also for bf16), powers of two and all-ones
 * significands (binade edges, carries into the next binade), values
 * whose products reach acc's max (overflow) or its smallest normal
 * (tiny results: FTZ, underflow), signed zeros, infinities and NaNs;
 * without subnormals of acc where acc reads denormals as zero (the path
 * is not taken otherwise); the even rows of A and every other block of
 * 16 columns of B moderate only.  N = 500 and 1000: tiles of 52 and 40 lanes
 * (groups of 4 and 8 lanes in the kernel).
 */
extern uint64_t fpl__acc_ne64_avx2_runs, fpl__acc_ne64_avx2_redos;

static double avx2_value(h_rng *g, const fpl_format *f, const fpl_format *acc, int nosub,
			 int clean)
{
	const uint64_t u = h_rng_next(g);
	const double sg = (u >> 8) & 1 ? -1.0 : 1.0;
	const int e = (int)((u >> 12) % 17) - 8;

	switch (clean ? 63 : u % 64) {
	case 0: return sg * 0.0;
	case 1: return sg * INFINITY;
	case 2: return NAN;
	case 3:
	case 4: return h_rng_value(g, acc->emax / 2 - 1, acc->emax / 2, 53, 0);
	case 5:
	case 6:
		if (!nosub)
			return h_rng_value(g, acc->emin - f->m - 1, acc->emin + 1, 53, 0);
		return h_rng_value(g, acc->emin / 2 - 1, acc->emin / 2 + 1, 53, 0);
	case 7: return sg * ldexp(1.0, e);
	case 8: return sg * ldexp(2.0 - ldexp(1.0, -f->m), e);
	case 9:
	case 10:
	case 11: return h_rng_value(g, -40, 40, 53, 0);
	default: return h_rng_value(g, -6, 5, 53, 0);
	}
}

/* An acc value (C) without subnormals when nosub. */
static double avx2_cvalue(h_rng *g, const fpl_format *acc, int nosub)
{
	double v = avx2_value(g, acc, acc, nosub, 0);

	return nosub && v != 0 && fabs(v) < acc->min_normal ? 0.0 : v;
}

static void avx2_case(const fpl_accum_model *m, const char *what, size_t M, size_t N, size_t K,
		      int nosub, h_rng *g)
{
	double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
	double *c0 = malloc(M * N * sizeof *c0);
	size_t i;

	/* even rows of A and columns j with j/16 even moderate (groups of
	 * steps on the kernel's fast path), the others mixed */
	for (i = 0; i < M * K; i++)
		a[i] = avx2_value(g, &m->a, &m->acc, nosub, (i / K) % 2 == 0);
	for (i = 0; i < K * N; i++)
		b[i] = avx2_value(g, &m->b, &m->acc, nosub, (i % N) / 16 % 2 == 0);
	for (i = 0; i < M * N; i++)
		c0[i] = (i / N) % 2 == 0 && (i % N) / 16 % 2 == 0 ? avx2_value(g, &m->acc, &m->acc, 0, 1)
								 : avx2_cvalue(g, &m->acc, nosub);
	check_data(m, what, M, N, K, D_MIX, 1, h_rng_next(g), a, b, c0);
	free(a);
	free(b);
	free(c0);
}

static void test_ne64_avx2_million(void)
{
	static const struct {
		const char *prof, *in, *acc, *ord;
		size_t N, K;
		int nosub;
	} c[] = {
		{ "avx512bf16", NULL, NULL, NULL, 500, 37, 1 },
		{ "onednn-bf16", NULL, NULL, NULL, 1000, 40, 1 },	/* blocks of 8 */
		{ NULL, "fp32", "fp32", "sequential", 500, 37, 0 },
		{ NULL, "fp32", "fp32+daz+ftz", "pairs:6", 1000, 30, 1 },
		{ NULL, "fp32", "fp16+ftz", "sequential", 500, 37, 0 },
		{ NULL, "bf16", "bf16", "blocked:8:fp32", 1000, 37, 0 },
		{ NULL, "bf16", "bf16", "evenodd:5", 500, 37, 0 },
		{ NULL, "bf16", "fp32+sat", "blocked:8", 500, 37, 0 },
		{ NULL, "fp16", "fp32+daz+ftz", "sequential", 1000, 37, 1 },
	};
	const uint64_t runs0 = fpl__acc_ne64_avx2_runs, redo0 = fpl__acc_ne64_avx2_redos;
	const int avx2 = fpl_cpu()->avx2 && fpl_cpu()->fma;
	char keep[32];
	size_t i;
	h_rng g;

	snprintf(keep, sizeof keep, "%s", fpl_kernels_selected());
	if (avx2 && !h_check(fpl_kernels_select("avx2") == 0))
		h_fail("ne64 avx2: cannot select the avx2 kernel set");
	h_rng_init(&g, 31);
	for (i = 0; i < NELEM(c); i++) {
		fpl_accum_model m;
		char what[96];
		if (c[i].prof) {
			model(&m, c[i].prof, NULL, NULL);
			snprintf(what, sizeof what, "%s (ne64 avx2), 10^6 outputs", c[i].prof);
		} else {
			model(&m, NULL, c[i].in, c[i].acc);
			fpl_accum_parse_order(&m, c[i].ord);
			snprintf(what, sizeof what, "%s/%s %s (ne64 avx2), 10^6 outputs", c[i].in,
				 c[i].acc, c[i].ord);
		}
		/* under the sanitizers a few rows (a few tiles) */
		avx2_case(&m, what, h_sanitized() ? 4 : 1000000 / c[i].N, c[i].N, c[i].K,
			  c[i].nosub, &g);
	}
	fpl_kernels_select(keep);
	if (avx2 && !h_check(fpl__acc_ne64_avx2_runs > runs0 && fpl__acc_ne64_avx2_redos > redo0))
		h_fail("ne64 avx2: the kernel ran %llu ranges, %llu group steps redone",
		       (unsigned long long)(fpl__acc_ne64_avx2_runs - runs0),
		       (unsigned long long)(fpl__acc_ne64_avx2_redos - redo0));
	h_note("ne64 avx2: 10^6 outputs per model, %llu ranges, %llu group steps redone",
	       (unsigned long long)(fpl__acc_ne64_avx2_runs - runs0),
	       (unsigned long long)(fpl__acc_ne64_avx2_redos - redo0));
}

int main(void)
{
	h_init("taccum_fast");
	test_untracked();
	test_paths();
	test_ne64_million();
	test_ro32_million();
	test_lean_million();
	test_lean2_million();
	test_sp64_million();
	test_fused64_million();
	test_verify_million();
	test_profiles();
	test_signed_zeros();
	test_random();
	test_sp64_avx2_draws();
	test_sp64_avx2_million();
	test_ro32_avx2_million();
	test_ro32_low_emin();
	test_fused64_avx2_million();
	test_ne64_avx2_million();
	return h_done();
}
