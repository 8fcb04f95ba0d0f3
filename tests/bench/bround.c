/* SPDX-License-Identifier: MIT */
/*
 * bround.c - speed of rounding a binary64 array of 2^24 elements into
 * every format of 16 bits or fewer that the kernels do in registers
 * (bf16, fp16, the fp8 formats, the MX fp6/fp4 formats), in ne and sp, on
 * 1 and 2 threads (issue 2, item 5; issue 14, item 6).  Each figure is
 * printed in Melem/s and as a fraction of memcpy of the same bytes
 * measured in the same run, so that the ratio, not the noisy absolute
 * figure, is what is compared with the targets: ne >= 0.8 and sp >= 0.6
 * of memcpy on one thread.  Inputs are N(0, 1): most values are in range,
 * some are subnormal in the fp8 formats and many in the fp6/fp4 ones.  A
 * second table does the same for binary32 arrays (fpl_round_array_f32,
 * the usual tensor-dump type), against memcpy of their bytes, with the
 * same targets.
 */
#include <stdio.h>
#include <string.h>

#include <fplab/fplab.h>

#include "bench.h"

#define N (1u << 24)

typedef struct ctx {
	const fpl_format *f;
	fpl_rnd rnd;
	int threads;
	double *x, *y;
	float *xf, *yf;
} ctx;

static void do_memcpy(void *p)
{
	ctx *c = p;
	memcpy(c->y, c->x, N * sizeof *c->x);
}

static void do_memcpy_f32(void *p)
{
	ctx *c = p;
	memcpy(c->yf, c->xf, N * sizeof *c->xf);
}

static void do_round_f32(void *p)
{
	ctx *c = p;
	fpl_state st;

	fpl_state_init(&st, 42);
	st.threads = c->threads;
	if (fpl_round_array_f32(c->f, c->yf, c->xf, N, c->rnd, &st)) {
		fprintf(stderr, "bround: fpl_round_array_f32 failed\n");
		exit(1);
	}
}

static void do_round(void *p)
{
	ctx *c = p;
	fpl_state st;

	fpl_state_init(&st, 42);
	st.threads = c->threads;
	if (fpl_round_array(c->f, c->y, c->x, N, c->rnd, &st)) {
		fprintf(stderr, "bround: fpl_round_array failed\n");
		exit(1);
	}
}

int main(void)
{
	static const char *const formats[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e4m3fnuz",
					       "e5m2fnuz", "e3m2", "e2m3", "e2m1" };
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_SP };
	static const char *const tname[] = { ">=0.80", ">=0.60" };
	const double target[] = { 0.8, 0.6 };
	const int nfig = (int)(2 * sizeof formats / sizeof *formats);
	int reps = bench_reps(), fails = 0;
	ctx c = { 0 };
	double tcopy, mcopy;
	size_t i, j;
	int th;

	c.x = malloc(N * sizeof *c.x);
	c.y = malloc(N * sizeof *c.y);
	if (!c.x || !c.y)
		return 1;
	bench_gauss(c.x, N, 1.0, 1);
	memset(c.y, 0, N * sizeof *c.y);
	tcopy = bench_best(do_memcpy, &c, reps);
	mcopy = N / tcopy / 1e6;
	printf("bround: 2^24 binary64 elements, kernels %s, best of %d\n", fpl_kernels_selected(), reps);
	printf("%-8s %-4s %7s %10s %8s %7s\n", "format", "mode", "threads", "Melem/s", "memcpy", "target");
	printf("%-8s %-4s %7d %10.0f %8.2f %7s\n", "memcpy", "-", 1, mcopy, 1.0, "-");
	for (i = 0; i < sizeof formats / sizeof *formats; i++) {
		fpl_format f;
		fpl_format_lookup(&f, formats[i]);
		c.f = &f;
		for (j = 0; j < 2; j++) {
			for (th = 1; th <= 2; th++) {
				double t, ratio;
				c.rnd = modes[j];
				c.threads = th;
				t = bench_best(do_round, &c, reps);
				ratio = tcopy / t;
				printf("%-8s %-4s %7d %10.0f %8.2f %7s%s\n", formats[i], fpl_rnd_name(modes[j]),
				       th, N / t / 1e6, ratio, th == 1 ? tname[j] : "-",
				       th == 1 && ratio < target[j] ? "  below target" : "");
				fails += th == 1 && ratio < target[j];
			}
		}
	}
	printf("bround: %d of %d one-thread binary64 figures below target\n", fails, nfig);

	c.xf = malloc(N * sizeof *c.xf);
	c.yf = malloc(N * sizeof *c.yf);
	if (!c.xf || !c.yf)
		return 1;
	for (i = 0; i < N; i++)
		c.xf[i] = (float)c.x[i];
	memset(c.yf, 0, N * sizeof *c.yf);
	tcopy = bench_best(do_memcpy_f32, &c, reps);
	printf("\nbinary32 arrays (fpl_round_array_f32), same values\n");
	printf("%-8s %-4s %7s %10s %8s %7s\n", "format", "mode", "threads", "Melem/s", "memcpy",
	       "target");
	printf("%-8s %-4s %7d %10.0f %8.2f %7s\n", "memcpy", "-", 1, N / tcopy / 1e6, 1.0, "-");
	fails = 0;
	for (i = 0; i < sizeof formats / sizeof *formats; i++) {
		fpl_format f;
		fpl_format_lookup(&f, formats[i]);
		c.f = &f;
		for (j = 0; j < 2; j++) {
			double t, ratio;
			c.rnd = modes[j];
			c.threads = 1;
			t = bench_best(do_round_f32, &c, reps);
			ratio = tcopy / t;
			printf("%-8s %-4s %7d %10.0f %8.2f %7s%s\n", formats[i], fpl_rnd_name(modes[j]), 1,
			       N / t / 1e6, ratio, tname[j], ratio < target[j] ? "  below target" : "");
			fails += ratio < target[j];
		}
	}
	printf("bround: %d of %d binary32 figures below target\n", fails, nfig);
	free(c.xf);
	free(c.yf);
	free(c.x);
	free(c.y);
	return 0;
}
