/* SPDX-License-Identifier: MIT */
/*
 * bround.c - speed of rounding arrays of 2^24 elements into every format
 * of 16 bits or fewer that the kernels do in registers (bf16, fp16, the
 * fp8 formats, the MX fp6/fp4 formats), binary64 arrays (fpl_round_array)
 * and binary32 arrays (fpl_round_array_f32, the usual tensor dumps), in
 * every rounding mode on one thread and in ne and sp on all threads, and
 * of hist's classification of binary32 data; then the table of issue 24's
 * floors, each row met or NOT met (issue 24, items 1, 2 and 8).
 *
 * Every figure is a fraction of memcpy of the same bytes (on as many
 * threads as the row): the best time of memcpy over the best time of the
 * operation, the two timed in turns, memcpy then the operation, FPLAB_
 * BENCH_REPS times (default 5), so that both see the same moments of a
 * shared machine and the ratios, not the noisy absolute figures, are
 * compared.  Inputs are N(0, 1): most values are in range, some
 * are subnormal in the fp8 formats and many (a third in e2m1) in the
 * fp6/fp4 ones, the case the kernels are designed for.  The floors: 0.8
 * for ne and the other deterministic modes (na nz tp tn tz od), 0.7 for
 * the stochastic ones (sp se), 0.5 for hist.  FPLAB_KERNELS picks the
 * kernel set measured; FPLAB_BENCH_CLOCK=thread times by the thread's CPU
 * time (bench.h), for a shared machine, and then measures one thread.
 *
 * When the selected set is avx512, the same tables and floor rows are
 * measured again under the avx2 set (the path of AVX2-only CPUs such as
 * AMD Zen 3), its floor rows labelled "avx2:", so that `make bench`'s
 * floors table shows both machine kinds; that pass takes 3 repetitions
 * (fewer than FPLAB_BENCH_REPS when that is larger) to keep the bench
 * near two minutes.  FPLAB_BENCH_AVX2=0 leaves it out.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fplab/fplab.h>

#include "bench.h"

#define N (1u << 24)
#define NFMT 9
#define NTH 2	/* one thread, all threads */

static const char *const formats[NFMT] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					   "e5m2fnuz", "e3m2", "e2m3", "e2m1" };
#define SMALL 6	/* formats[SMALL..] are fp6/fp4 */

typedef struct ctx {
	const fpl_format *f;
	fpl_rnd rnd;
	int threads, f32;
	double *x, *y;
	float *xf, *yf;
} ctx;

/* memcpy of the array's bytes on c->threads threads, each its slice */
typedef struct slice {
	char *dst;
	const char *src;
	size_t n;
} slice;

static void *copy_slice(void *p)
{
	slice *s = p;
	memcpy(s->dst, s->src, s->n);
	return NULL;
}

static void do_memcpy(void *p)
{
	ctx *c = p;
	size_t bytes = (size_t)N * (c->f32 ? sizeof *c->xf : sizeof *c->x), per;
	char *dst = c->f32 ? (char *)c->yf : (char *)c->y;
	const char *src = c->f32 ? (const char *)c->xf : (const char *)c->x;
	pthread_t t[64];
	slice s[64] = { { NULL, NULL, 0 } };
	int i, nt = c->threads < 1 ? 1 : c->threads < 64 ? c->threads : 64;

	per = (bytes / (size_t)nt + 63) & ~(size_t)63;
	for (i = 0; i < nt; i++) {
		size_t lo = per * (size_t)i < bytes ? per * (size_t)i : bytes;
		size_t hi = lo + per < bytes ? lo + per : bytes;
		s[i].dst = dst + lo;
		s[i].src = src + lo;
		s[i].n = hi - lo;
		if (i && pthread_create(&t[i], NULL, copy_slice, &s[i]))
			copy_slice(&s[i]), t[i] = 0;
	}
	copy_slice(&s[0]);
	for (i = 1; i < nt; i++)
		if (t[i])
			pthread_join(t[i], NULL);
}

static void do_round(void *p)
{
	ctx *c = p;
	fpl_state st;
	int rc;

	fpl_state_init(&st, 42);
	st.threads = c->threads;
	rc = c->f32 ? fpl_round_array_f32(c->f, c->yf, c->xf, N, c->rnd, &st)
		    : fpl_round_array(c->f, c->y, c->x, N, c->rnd, &st);
	if (rc) {
		fprintf(stderr, "bround: rounding failed (%d)\n", rc);
		exit(1);
	}
}

/* hist's classification of the binary32 array (fpl_hist_add_f32) */
static void do_hist(void *p)
{
	ctx *c = p;
	fpl_hist_config cfg;
	fpl_hist h;

	fpl_hist_config_init(&cfg, c->f);
	if (fpl_hist_init(&h, &cfg) || fpl_hist_add_f32(&h, c->xf, N) || fpl_hist_finish(&h)) {
		fprintf(stderr, "bround: hist failed\n");
		exit(1);
	}
	fpl_hist_release(&h);
}

/* fractions of memcpy: [type][threads][format][mode] of the set being
 * measured, 0 when not measured */
static double q_round[2][NTH][NFMT][FPL_RND_COUNT];
static double t_copy[2][NTH];	/* best memcpy over the pass, for the MB/s line */

/* Best of reps runs of fn and of memcpy, taken in turns, so that both
 * see the same machine: the fraction t(memcpy) / t(fn). */
static double paired(void (*fn)(void *), ctx *c, int type, int ti, int reps)
{
	double bc = 1e30, bf = 1e30;
	int k;

	for (k = 0; k < reps; k++) {
		double t0, t1, t2;
		c->f32 = type;
		t0 = bench_now();
		do_memcpy(c);
		t1 = bench_now();
		fn(c);
		t2 = bench_now();
		if (t1 - t0 < bc)
			bc = t1 - t0;
		if (t2 - t1 < bf)
			bf = t2 - t1;
	}
	if (t_copy[type][ti] == 0 || bc < t_copy[type][ti])
		t_copy[type][ti] = bc;
	return bc / bf;
}

static double ratio(int type, int ti, int fi, int r)
{
	return q_round[type][ti][fi][r];
}

static int stochastic(int r)
{
	return r == FPL_RND_SP || r == FPL_RND_SE;
}

/* One row of the floors table: the worst figure over its formats
 * [f0, f1) and modes (stochastic or not), with where it was. */
static int floor_row(const char *what, int type, int ti, int f0, int f1, int sto, double fl,
		     const int threads[NTH])
{
	double worst = 1e9;
	int wf = -1, wr = -1, fi, r;
	char where[64];

	for (fi = f0; fi < f1; fi++)
		for (r = 0; r < FPL_RND_COUNT; r++) {
			double q = ratio(type, ti, fi, r);
			if (q > 0 && stochastic(r) == sto && q < worst)
				worst = q, wf = fi, wr = r;
		}
	if (wf < 0)
		return 0;
	snprintf(where, sizeof where, "%s %s", formats[wf], fpl_rnd_name((fpl_rnd)wr));
	printf("%-50s %2d %6.2f  %-14s %5.2f  %s\n", what, threads[ti], worst, where, fl,
	       worst >= fl ? "met" : "NOT met");
	return worst < fl;
}

static const char *const tname[2] = { "binary64", "binary32" };

/* One pass over every format, mode and type under the selected kernel
 * set: fills q_round and prints the two tables of fractions. */
static void measure(ctx *c, int reps, const int nth[NTH])
{
	int type, ti, fi, r;

	memset(q_round, 0, sizeof q_round);
	memset(t_copy, 0, sizeof t_copy);
	for (type = 0; type < 2; type++) {
		printf("\n%s arrays, kernels %s: fraction of memcpy (one thread%s)\n", tname[type],
		       fpl_kernels_selected(), nth[1] > 1 ? "; ne and sp also all threads" : "");
		printf("%-8s", "format");
		for (r = 0; r < FPL_RND_COUNT; r++)
			printf(" %5s", fpl_rnd_name((fpl_rnd)r));
		if (nth[1] > 1)
			printf(" %7s %7s", "ne-all", "sp-all");
		printf("\n");
		for (fi = 0; fi < NFMT; fi++) {
			fpl_format f;
			fpl_format_lookup(&f, formats[fi]);
			c->f = &f;
			c->f32 = type;
			for (ti = 0; ti < (nth[1] > 1 ? NTH : 1); ti++) {
				c->threads = nth[ti];
				for (r = 0; r < FPL_RND_COUNT; r++) {
					if (ti && r != FPL_RND_NE && r != FPL_RND_SP)
						continue;
					c->rnd = (fpl_rnd)r;
					q_round[type][ti][fi][r] = paired(do_round, c, type, ti, reps);
				}
			}
			c->f = NULL;
		}
		for (fi = 0; fi < NFMT; fi++) {
			printf("%-8s", formats[fi]);
			for (r = 0; r < FPL_RND_COUNT; r++)
				printf(" %5.2f", ratio(type, 0, fi, r));
			if (nth[1] > 1)
				printf(" %7.2f %7.2f", ratio(type, 1, fi, FPL_RND_NE),
				       ratio(type, 1, fi, FPL_RND_SP));
			printf("\n");
		}
		printf("memcpy: %.0f MB/s one thread", (double)N * (type ? 4 : 8) / t_copy[type][0] / 1e6);
		if (nth[1] > 1)
			printf(", %.0f MB/s %d threads",
			       (double)N * (type ? 4 : 8) / t_copy[type][1] / 1e6, nth[1]);
		printf("\n");
	}
}

/* The floor rows of the pass in q_round, each prefixed by label; returns
 * the rows NOT met. */
static int floor_rows(const char *label, const int nth[NTH])
{
	int ti, type, misses = 0;

	for (ti = 0; ti < (nth[1] > 1 ? NTH : 1); ti++)
		for (type = 0; type < 2; type++) {
			char what[96];
			snprintf(what, sizeof what, "%sround %s arrays, bf16/fp16/fp8, ne..od", label,
				 tname[type]);
			misses += floor_row(what, type, ti, 0, SMALL, 0, 0.8, nth);
			snprintf(what, sizeof what, "%sround %s arrays, bf16/fp16/fp8, sp se", label,
				 tname[type]);
			misses += floor_row(what, type, ti, 0, SMALL, 1, 0.7, nth);
			snprintf(what, sizeof what, "%sround %s arrays, fp6/fp4, ne..od", label, tname[type]);
			misses += floor_row(what, type, ti, SMALL, NFMT, 0, 0.8, nth);
			snprintf(what, sizeof what, "%sround %s arrays, fp6/fp4, sp se", label, tname[type]);
			misses += floor_row(what, type, ti, SMALL, NFMT, 1, 0.7, nth);
		}
	return misses;
}

int main(void)
{
	int reps = bench_reps(), nth[NTH], misses = 0, avx2;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double q_hist;
	char main_set[32];
	ctx c = { 0 };
	size_t i;

	nth[0] = 1;
	/* all threads, unless the clock is the thread's CPU time */
	nth[1] = ncpu > 1 && !bench_thread_clock() ? (int)(ncpu < 64 ? ncpu : 64) : 1;
	c.x = malloc(N * sizeof *c.x);
	c.y = malloc(N * sizeof *c.y);
	c.xf = malloc(N * sizeof *c.xf);
	c.yf = malloc(N * sizeof *c.yf);
	if (!c.x || !c.y || !c.xf || !c.yf)
		return 1;
	bench_gauss(c.x, N, 1.0, 1);
	for (i = 0; i < N; i++)
		c.xf[i] = (float)c.x[i];
	memset(c.y, 0, N * sizeof *c.y);
	memset(c.yf, 0, N * sizeof *c.yf);

	snprintf(main_set, sizeof main_set, "%s", fpl_kernels_selected());
	avx2 = bench_want_avx2();
	printf("bround: 2^24 N(0, 1) elements, kernels %s%s, best of %d, threads 1 and %d, %s\n",
	       main_set, avx2 ? " then avx2" : "", reps, nth[1],
	       bench_thread_clock() ? "thread CPU time" : "wall clock");
	measure(&c, reps, nth);

	/* hist: classification into e4m3fn against memcpy of the binary32 bytes */
	{
		fpl_format f;
		fpl_format_lookup(&f, "e4m3fn");
		c.f = &f;
		c.f32 = 1;
		c.threads = 1;
		q_hist = paired(do_hist, &c, 1, 0, reps);
		c.f = NULL;
	}

	printf("\nissue 24 floors (worst figure of each row, ratios from this run, kernels %s)\n",
	       main_set);
	printf("%-50s %2s %6s  %-14s %5s\n", "row", "th", "worst", "where", "floor");
	misses += floor_rows("", nth);
	printf("%-50s %2d %6.2f  %-14s %5.2f  %s\n", "hist classification (binary32, N(0,1))", 1, q_hist,
	       "e4m3fn ne", 0.5, q_hist >= 0.5 ? "met" : "NOT met");
	misses += q_hist < 0.5;

	if (avx2 && fpl_kernels_select("avx2") == 0) {
		int r2 = reps < 3 ? reps : 3;
		printf("\nthe avx2 set (AVX2-only CPUs), best of %d\n", r2);
		measure(&c, r2, nth);
		printf("\nissue 24 floors, kernels avx2 (worst figure of each row, ratios from this "
		       "run, best of %d)\n", r2);
		printf("%-50s %2s %6s  %-14s %5s\n", "row", "th", "worst", "where", "floor");
		misses += floor_rows("avx2: ", nth);
		fpl_kernels_select(main_set);
	}
	printf("bround: %d rows NOT met\n", misses);
	free(c.x);
	free(c.y);
	free(c.xf);
	free(c.yf);
	return 0;
}
