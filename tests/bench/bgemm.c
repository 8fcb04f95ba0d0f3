/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bgemm.c - emulated GEMM throughput (issue 11, item 5; issue
 * 24, item 3): fpl_accum_gemm on one thread under the models of the
 * table below (256^3 unless a row says otherwise), in GFLOP/s
 * (2*M*N*K per second) and as a ratio to OpenBLAS's sgemm on one core
 * measured in the same run, with a memcpy bandwidth line as a machine
 * baseline.  OpenBLAS is loaded at run time (libopenblas.so.0, package
 * libopenblas-dev or libopenblas0): without it the ratios are skipped and
 * the missing package named.  Prints whether the floors hold; never fails.
 * On a CPU whose avx512 kernel set is in use, the rows with floors run
 * again under the avx2 set ("[avx2]" rows, held to the AVX2 floors), so
 * one run shows both machine kinds' paths.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fplab/fplab.h>

#include "bench.h"

#define DIM 256

typedef struct gemm_ctx {
	fpl_accum_model m;
	unsigned untracked;
	size_t M, N, K;
	const double *a, *b;
	double *c;
	int rc;
} gemm_ctx;

static void run_gemm(void *p)
{
	gemm_ctx *g = p;
	fpl_state st;

	fpl_state_init(&st, 7);
	st.threads = 1;
	st.untracked = g->untracked;
	g->rc = fpl_accum_gemm(g->c, g->N, &g->m, 0, g->M, g->N, g->K, g->a, g->K, 0, g->b, g->N,
			       0, NULL, &st);
}

/* cblas_sgemm(RowMajor = 101, NoTrans = 111, ...) */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
			 const float *, int, float, float *, int);
typedef struct blas_ctx {
	sgemm_fn sgemm;
	const float *a, *b;
	float *c;
} blas_ctx;

static void run_blas(void *p)
{
	blas_ctx *s = p;
	s->sgemm(101, 111, 111, DIM, DIM, DIM, 1.0f, s->a, DIM, s->b, DIM, 0.0f, s->c, DIM);
}

typedef struct copy_ctx {
	char *dst, *src;
	size_t n;
} copy_ctx;

static void run_copy(void *p)
{
	copy_ctx *c = p;
	memcpy(c->dst, c->src, c->n);
	__asm__ __volatile__("" : : "r"(c->dst) : "memory");
}

/* OpenBLAS sgemm on one thread, GFLOP/s, or 0 when it cannot be loaded. */
static double blas_gflops(const double *a, const double *b, int reps)
{
	const double flops = 2.0 * DIM * DIM * DIM;
	float *af = malloc(DIM * DIM * sizeof *af), *bf = malloc(DIM * DIM * sizeof *bf);
	float *cf = malloc(DIM * DIM * sizeof *cf);
	void *h;
	blas_ctx s;
	double t = 0;
	size_t i;

	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
	if (h && af && bf && cf) {
		void (*set_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
		s.sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
		if (set_threads)
			set_threads(1);
		if (s.sgemm) {
			for (i = 0; i < DIM * DIM; i++) {
				af[i] = (float)a[i];
				bf[i] = (float)b[i];
			}
			s.a = af;
			s.b = bf;
			s.c = cf;
			run_blas(&s);
			t = bench_best(run_blas, &s, reps * 4);
		}
	}
	free(af);
	free(bf);
	free(cf);
	return t > 0 ? flops / t * 1e-9 : 0;
}

/* ------------------------------------------------ the exact reference */

/*
 * Issue 24, item 4: the exact error reference (fpl_accum_errors_gemm) of
 * a GEMM against the emulated GEMM it checks, both on one thread, the
 * same loaded inputs, one run each (at this size one run takes seconds).
 * The size is 2048^3; that takes minutes per run on this machine,
 * so the row is measured at REF_DIM^3 (FPLAB_BENCH_REF_DIM overrides it).
 * Floor: the reference <= 0.5 x the emulated GEMM.
 */
#define REF_DIM 1024

typedef struct ref_ctx {
	fpl_accum_model m;
	size_t n;
	const double *a, *b;
	double *c;
	fpl_accum_errors e;
	int rc;
} ref_ctx;

static void run_ref_gemm(void *p)
{
	ref_ctx *x = p;
	fpl_state st;

	fpl_state_init(&st, 7);
	st.threads = 1;
	x->rc = fpl_accum_gemm(x->c, x->n, &x->m, 0, x->n, x->n, x->n, x->a, x->n, 0, x->b, x->n,
			       0, NULL, &st);
}

static void run_ref_errors(void *p)
{
	ref_ctx *x = p;

	x->rc = fpl_accum_errors_gemm(&x->e, NULL, x->c, x->n, &x->m, x->n, x->n, x->n, x->a, x->n,
				      0, x->b, x->n, 0, NULL, 0, 1);
}

/* CPU seconds of one run of fn(ctx): both sides run on one thread, and
 * CPU time does not count the waits of a shared machine. */
static double cpu_seconds(void (*fn)(void *), void *ctx)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	fn(ctx);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

static int bench_reference(void)
{
	static const struct {
		const char *label, *in, *acc;
	} cases[] = {
		{ "bf16 in, fp32 acc", "bf16", "fp32" },
		{ "e4m3fn in, fp16 acc", "e4m3fn", "fp16" },
		{ "fp32 in, fp32 acc", "fp32", "fp32" },
		{ "bf16 in, fp16 acc", "bf16", "fp16" },
		{ "fp64 in, fp64 acc", "fp64", "fp64" },
	};
	const char *env = getenv("FPLAB_BENCH_REF_DIM"), *only = getenv("FPLAB_BENCH_REF_INPUTS");
	size_t n = env && atoi(env) > 0 ? (size_t)atoi(env) : REF_DIM, i;
	double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
	double *al = malloc(n * n * sizeof *al), *bl = malloc(n * n * sizeof *bl);
	double *c = malloc(n * n * sizeof *c), worst = 0;
	fpl_state st;

	if (!a || !b || !al || !bl || !c)
		return 1;
	bench_gauss(a, n * n, 1.0, 3);
	bench_gauss(b, n * n, 1.0, 4);
	printf("bgemm reference: %zux%zux%zu (the issue's 2048^3 takes minutes here), one thread, "
	       "one run each, CPU seconds\n", n, n, n);
	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		ref_ctx x;
		double tg, tr;
		if (only && !strstr(only, cases[i].in))	/* FPLAB_BENCH_REF_INPUTS="bf16 e4m3fn" */
			continue;
		fpl_accum_init(&x.m);
		if (fpl_accum_parse_spec(cases[i].in, &x.m.a, &x.m.a_rnd, NULL)
		    || fpl_accum_parse_spec(cases[i].acc, &x.m.acc, &x.m.acc_rnd, NULL))
			return 1;
		x.m.b = x.m.a;
		fpl_state_init(&st, 7);
		if (fpl_accum_gemm_loads(al, bl, NULL, &x.m, n, n, n, a, n, 0, b, n, 0, NULL, 0, &st))
			return 1;
		x.m.a_load = x.m.b_load = FPL_LOAD_GIVEN;
		x.n = n;
		x.a = al;
		x.b = bl;
		x.c = c;
		tg = cpu_seconds(run_ref_gemm, &x);
		if (x.rc)
			return 1;
		tr = cpu_seconds(run_ref_errors, &x);
		if (x.rc)
			return 1;
		printf("  %-24s emulated GEMM %8.3f s   exact reference %8.3f s   %.3f x  %s\n",
		       cases[i].label, tg, tr, tr / tg, tr / tg <= 0.5 ? "met" : "NOT met");
		if (tr / tg > worst)
			worst = tr / tg;
	}
	/* bf16 in, fp32 acc, sequential ne is no emulation: fpl_accum_gemm
	 * runs it on the hardware (fma or AVX512-BF16 kernels, issue 11) */
	printf("  floor exact reference <= 0.5 x the emulated GEMM: %s (worst %.3f x; "
	       "bf16/fp32 runs on the hardware kernels, not emulated)\n",
	       worst <= 0.5 ? "met" : "NOT met", worst);
	free(a);
	free(b);
	free(al);
	free(bl);
	free(c);
	return 0;
}

/* Best CPU time of reps runs (this process): on a machine shared with
 * other jobs the wall clock also counts the time the process waits for
 * a core, while CPU time also counts any helper thread; floors are
 * judged on the better of the two figures. */
static double cpu_best(void (*fn)(void *), void *ctx, int reps)
{
	double best = 1e30;
	int i;

	for (i = 0; i < reps; i++) {
		struct timespec a, b;
		double t;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		fn(ctx);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
		if (t < best)
			best = t;
	}
	return best;
}

/* One row of the table: the model (a profile, or inputs, accumulator,
 * order and mode), its shape, and the floor it is held to (GFLOP/s per
 * core; 0: none).  Each row's label names its own model. */
typedef struct row {
	const char *label, *profile, *in, *acc, *order;
	fpl_rnd rnd;
	unsigned untracked;
	size_t M, N, K;
	double floor512, floor2;	/* on AVX-512 and on AVX2 */
} row;

/* Run one row under the kernel set in use and print it: its GFLOP/s
 * (wall and CPU time), the ratio to sgemm when measured, and its floor
 * (AVX-512's when avx512, else AVX2's) with met/NOT met; *gf the
 * wall-clock figure (0 on an error, which is printed).  1 when the model
 * cannot be set up. */
static int run_row(const row *r, const double *a, const double *b, double *c, int reps,
		   double blas, int avx512, const char *tag, double *gf)
{
	const double floor = avx512 ? r->floor512 : r->floor2;
	gemm_ctx x;
	double t, tc, gc;
	char label[96];
	int n;

	*gf = 0;
	if (r->profile) {
		if (fpl_accum_profile(&x.m, r->profile))
			return 1;
		x.m.a_load = x.m.b_load = FPL_LOAD_ROUND;	/* gaussian data */
	} else {
		fpl_accum_init(&x.m);
		if (fpl_accum_parse_spec(r->in, &x.m.a, &x.m.a_rnd, NULL)
		    || fpl_accum_parse_spec(r->acc, &x.m.acc, &x.m.acc_rnd, NULL)
		    || fpl_accum_parse_order(&x.m, r->order))
			return 1;
		x.m.b = x.m.a;
		x.m.acc_rnd = r->rnd;
	}
	x.untracked = r->untracked;
	x.M = r->M;
	x.N = r->N;
	x.K = r->K;
	x.a = a;
	x.b = b;
	x.c = c;
	snprintf(label, sizeof label, "%s%s", tag, r->label);
	run_gemm(&x);
	n = r->M * r->N * r->K > (size_t)DIM * DIM * DIM * 4 ? (reps + 1) / 2 : reps;
	t = bench_best(run_gemm, &x, n);
	tc = cpu_best(run_gemm, &x, n);
	if (x.rc) {
		printf("  %-52s error %d\n", label, x.rc);
		return 0;
	}
	*gf = 2.0 * (double)r->M * (double)r->N * (double)r->K / t * 1e-9;
	gc = 2.0 * (double)r->M * (double)r->N * (double)r->K / tc * 1e-9;
	printf("  %-52s %8.3f GFLOP/s per core (%.3f by CPU time)", label, *gf, gc);
	if (blas > 0)
		printf("   %.4f x sgemm", *gf / blas);
	if (floor > 0)
		printf("   floor >= %g (%s): %s", floor, avx512 ? "AVX-512" : "AVX2",
		       (gc > *gf ? gc : *gf) >= floor ? "met" : "NOT met");
	printf("\n");
	return 0;
}

#define BIG 1024

int main(void)
{
	static const row cases[] = {
		{ "e4m3fn in, fp16 acc, sequential, ne", NULL, "e4m3fn", "fp16", "sequential",
		  FPL_RND_NE, 0, DIM, DIM, DIM, 20, 10 },
		{ "  the same at 1024^3", NULL, "e4m3fn", "fp16", "sequential", FPL_RND_NE, 0, BIG,
		  BIG, BIG, 20, 10 },
		{ "e4m3fn in, fp16 acc, blocked:32:fp32, ne", NULL, "e4m3fn", "fp16",
		  "blocked:32:fp32", FPL_RND_NE, 0, DIM, DIM, DIM, 20, 10 },
		{ "bf16 in, fp16 acc, sequential, ne", NULL, "bf16", "fp16", "sequential", FPL_RND_NE,
		  0, DIM, DIM, DIM, 20, 10 },
		{ "bf16 in, fp32 acc, sequential, ne", NULL, "bf16", "fp32", "sequential", FPL_RND_NE,
		  0, DIM, DIM, DIM, 0, 0 },
		{ "bf16 in, fp16 acc, sequential, sp", NULL, "bf16", "fp16", "sequential", FPL_RND_SP,
		  0, DIM, DIM, DIM, 4, 4 },
		{ "bf16 in, fp32 acc, fused:32, ne", NULL, "bf16", "fp32", "fused:32", FPL_RND_NE, 0,
		  DIM, DIM, DIM, 4, 4 },
		{ "bf16 in, fp32 acc, sequential, ne, inexact untracked", NULL, "bf16", "fp32",
		  "sequential", FPL_RND_NE, FPL_FLAG_INEXACT, DIM, DIM, DIM, 0, 0 },
		{ "fp32-fma, inexact untracked", "fp32-fma", NULL, NULL, NULL, FPL_RND_NE,
		  FPL_FLAG_INEXACT, DIM, DIM, DIM, 0, 0 },
		{ "profile avx512bf16, 256x256x1024", "avx512bf16", NULL, NULL, NULL, FPL_RND_NE, 0,
		  DIM, DIM, BIG, 5, 5 },
		{ "profile amx-bf16, 256x256x1024", "amx-bf16", NULL, NULL, NULL, FPL_RND_NE, 0, DIM,
		  DIM, BIG, 5, 5 },
		{ "profile onednn-bf16, 256x256x1024", "onednn-bf16", NULL, NULL, NULL, FPL_RND_NE, 0,
		  DIM, DIM, BIG, 5, 5 },
		{ "profile fp16-fma, 256x256x1024", "fp16-fma", NULL, NULL, NULL, FPL_RND_NE, 0, DIM,
		  DIM, BIG, 5, 5 },
	};
	enum { NCASES = sizeof cases / sizeof *cases };
	/* the AVX-512 floors where the AVX-512 kernels run (FPLAB_KERNELS=avx2
	 * measures the AVX2 paths, held to the AVX2 floors) */
	const int reps = bench_reps();
	const int avx512 = fpl_cpu()->avx512f && !strcmp(fpl_kernels_selected(), "avx512");
	const size_t nbig = (size_t)BIG * BIG;
	double *a = malloc(nbig * sizeof *a), *b = malloc(nbig * sizeof *b);
	double *c = malloc(nbig * sizeof *c), blas, g[NCASES] = { 0 };
	copy_ctx cp = { malloc(64u << 20), malloc(64u << 20), 64u << 20 };
	size_t i;

	if (getenv("FPLAB_BENCH_REF_ONLY"))	/* the reference row alone */
		return bench_reference();
	if (!a || !b || !c || !cp.dst || !cp.src)
		return 1;
	bench_gauss(a, nbig, 1.0, 1);
	bench_gauss(b, nbig, 1.0, 2);
	memset(cp.src, 1, cp.n);
	memset(cp.dst, 2, cp.n);
	printf("bgemm: %dx%dx%d unless said, one thread, best of %d; kernels %s\n", DIM, DIM, DIM,
	       reps, fpl_kernels_selected());
	printf("  %-52s %8.2f GB/s\n", "memcpy 64 MiB (baseline)",
	       2.0 * (double)cp.n / bench_best(run_copy, &cp, reps) * 1e-9);
	blas = blas_gflops(a, b, reps);
	if (blas > 0)
		printf("  %-52s %8.2f GFLOP/s\n", "OpenBLAS sgemm (baseline)", blas);
	else
		printf("  OpenBLAS sgemm: not found (libopenblas.so.0); install libopenblas-dev "
		       "(apt-get install -y libopenblas-dev): ratios skipped\n");
	for (i = 0; i < NCASES; i++)
		if (run_row(&cases[i], a, b, c, reps, blas, avx512, "", &g[i]))
			return 1;
	/* On an AVX-512 machine the AVX2 twins of the floored rows too: the
	 * same rows again under the avx2 kernel set (fplab/kernels.h), each
	 * held to its AVX2 floor; the avx512 set is restored after. */
	if (avx512 && !fpl_kernels_select("avx2")) {
		printf("  the rows with floors again under the avx2 kernel set (AVX2 floors):\n");
		for (i = 0; i < NCASES; i++) {
			double g2;
			if (cases[i].floor2 > 0 && run_row(&cases[i], a, b, c, reps, blas, 0, "[avx2] ", &g2))
				return 1;
		}
		if (fpl_kernels_select("avx512"))
			return 1;
	}
	printf("  floor e4m3fn/fp16 >= 1 GFLOP/s per core: %s (%.3f)\n",
	       g[0] >= 1.0 ? "met" : "NOT met", g[0]);
	/* The hardware fma floor: with every flag tracked, each step also
	 * pays an exactness test (inexact counts); without inexact the path
	 * is a plain register-blocked kernel.  Both are printed. */
	if (blas > 0) {
		printf("  floor bf16/fp32 (hardware fma path) >= 0.3 x sgemm: %s (%.3f untracked "
		       "inexact; %.3f with inexact counted)\n",
		       g[7] >= 0.3 * blas ? "met" : "NOT met", g[7] / blas, g[4] / blas);
	} else {
		printf("  floor bf16/fp32 >= 0.3 x sgemm: not measured (no OpenBLAS)\n");
	}
	free(a);
	free(b);
	free(c);
	free(cp.dst);
	free(cp.src);
	return bench_reference();
}
