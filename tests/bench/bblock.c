/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bblock.c - speed of block-scaled quantization (fplab/
 * block.h) of binary32 tensors, issue 25's floor: "quantization of
 * binary32 arrays at >= 0.6 x memcpy per core".
 *
 * For each named block format (or those on the command line), in
 * nearest-even and sp element rounding: fpl_block_round_f32 of n binary32
 * values (N(0, 1), n/1024 rows of 1024, default n = 2^24: 64 MiB in, 64
 * MiB out, beyond the caches) on one thread, beside memcpy of the same
 * 4n bytes, the two timed in turns (memcpy, then the quantization)
 * FPLAB_BENCH_REPS times (default 5), best of each, so both see the same
 * moments of a shared machine.  A row: the format and mode, MB/s of
 * binary32 input, the ratio to memcpy, and "floor 0.6: met" or "NOT met"
 * (tests/bench/floors.sh collects those lines).  Then, for comparison,
 * fpl_block_round of the widened binary64 values (no floor).
 * FPLAB_KERNELS picks the kernel set measured (avx512, avx2, ref); when
 * it is avx512, the binary32 rows are measured again under the avx2 set
 * (rows "avx2: FORMAT", best of 3; FPLAB_BENCH_AVX2=0 skips them), since
 * the floor holds on AVX2-only CPUs too;
 * FPLAB_BENCH_CLOCK=thread times by the thread's CPU time (bench.h).
 * Usage: bblock [-n N] [FORMAT...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "bench.h"

#define FLOOR 0.6

struct ctx {
	const fpl_block_format *b;
	fpl_rnd rnd;
	float *x, *y;
	double *xd, *yd;
	size_t n, dims[2];
	fpl_state st;
};

static void run_copy(void *p)
{
	struct ctx *c = p;

	memcpy(c->y, c->x, c->n * sizeof *c->x);
}

static void run_f32(void *p)
{
	struct ctx *c = p;

	fpl_block_round_f32(c->b, c->y, c->x, c->dims, 2, c->rnd, &c->st, NULL);
}

static void run_copy64(void *p)
{
	struct ctx *c = p;

	memcpy(c->yd, c->xd, c->n * sizeof *c->xd);
}

static void run_f64(void *p)
{
	struct ctx *c = p;

	fpl_block_round(c->b, c->yd, c->xd, c->dims, 2, c->rnd, &c->st, NULL);
}

/* Best times of base and op, timed in turns. */
static void turns(void (*base)(void *), void (*op)(void *), struct ctx *c, int reps, double *tb,
		  double *to)
{
	int i;

	*tb = *to = 1e30;
	for (i = 0; i < reps; i++) {
		double t = bench_best(base, c, 1);

		*tb = t < *tb ? t : *tb;
		t = bench_best(op, c, 1);
		*to = t < *to ? t : *to;
	}
}

/* The binary32 rows of the named formats under the selected kernel set,
 * each mode; label prefixes each row ("avx2: " for the second pass).
 * Returns the rows NOT met. */
static int f32_rows(struct ctx *c, const char *const *names, int nn, int reps, const char *label)
{
	static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_SP };
	int i, m, misses = 0;

	for (i = 0; i < nn; i++) {
		fpl_block_format b;
		char err[256], row[64];

		if (fpl_block_parse(&b, names[i], err, sizeof err)) {
			fprintf(stderr, "bblock: %s\n", err[0] ? err : "not a block format");
			exit(2);
		}
		c->b = &b;
		snprintf(row, sizeof row, "%s%s", label, names[i]);
		for (m = 0; m < 2; m++) {
			double tb, to, q;

			c->rnd = modes[m];
			fpl_state_init(&c->st, 1);
			turns(run_copy, run_f32, c, reps, &tb, &to);
			q = tb / to;
			printf("%-22s %-3s %10.0f %8.3f  floor %.1f: %s\n", row, fpl_rnd_name(c->rnd),
			       4.0 * (double)c->n / to / 1e6, q, FLOOR, q >= FLOOR ? "met" : "NOT met");
			misses += q < FLOOR;
		}
	}
	return misses;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "mxfp8",      "mxfp8-e5m2", "mxfp6-e3m2",
						"mxfp6-e2m3", "mxfp4",      "mxint8",
						"nvfp4",      "nvfp4:q32" };
	const char *const *names = defaults;
	struct ctx c;
	size_t n = (size_t)1 << 24, j;
	int nn = (int)(sizeof defaults / sizeof *defaults), i, reps = bench_reps(), misses = 0;
	char main_set[32];

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n = (size_t)strtoull(argv[2], NULL, 10) / 1024 * 1024;
		argc -= 2;
		argv += 2;
	}
	if (argc > 1) {
		names = (const char *const *)(argv + 1);
		nn = argc - 1;
	}
	memset(&c, 0, sizeof c);
	c.n = n ? n : 1024;
	c.dims[0] = c.n / 1024;
	c.dims[1] = 1024;
	c.xd = malloc(c.n * sizeof *c.xd);
	c.x = malloc(c.n * sizeof *c.x);
	c.y = malloc(c.n * sizeof *c.y);
	if (!c.x || !c.y || !c.xd)
		return 1;
	bench_gauss(c.xd, c.n, 1.0, 25);
	for (j = 0; j < c.n; j++)
		c.x[j] = (float)c.xd[j];
	memset(c.y, 0, c.n * sizeof *c.y);
	snprintf(main_set, sizeof main_set, "%s", fpl_kernels_selected());
	printf("bblock: fpl_block_round_f32 of %zu binary32 values, one thread, kernels %s%s; "
	       "ratio = memcpy time / time, floor %.1f\n",
	       c.n, main_set, bench_want_avx2() ? " then avx2" : "", FLOOR);
	printf("%-22s %-3s %10s %8s\n", "format", "rnd", "MB/s", "x memcpy");
	misses += f32_rows(&c, names, nn, reps, "");
	if (bench_want_avx2() && fpl_kernels_select("avx2") == 0) {
		printf("the avx2 set (AVX2-only CPUs: the same floor):\n");
		misses += f32_rows(&c, names, nn, reps < 3 ? reps : 3, "avx2: ");
		fpl_kernels_select(main_set);
	}
	free(c.x);
	free(c.y);
	c.yd = malloc(c.n * sizeof *c.yd);
	if (!c.yd)
		return 1;
	printf("for comparison, fpl_block_round of the binary64 values (no floor):\n");
	for (i = 0; i < nn; i++) {
		fpl_block_format b;
		double tb, to;

		if (fpl_block_parse(&b, names[i], NULL, 0))
			continue;
		c.b = &b;
		c.rnd = FPL_RND_NE;
		fpl_state_init(&c.st, 1);
		turns(run_copy64, run_f64, &c, reps < 3 ? reps : 3, &tb, &to);
		printf("%-22s %-3s %10.0f %8.3f  (binary64)\n", names[i], "ne",
		       8.0 * (double)c.n / to / 1e6, tb / to);
	}
	printf("bblock: %d rows NOT met\n", misses);
	free(c.xd);
	free(c.yd);
	return 0;
}
