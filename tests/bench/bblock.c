/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bblock.c - block-scaled quantization (fplab/block.h):
 * fpl_block_round of n binary64 values (normal, sigma 1, one tensor of
 * n/1024 rows of 1024) for each block format named on the command line
 * (default mxfp8 mxfp4 nvfp4), beside memcpy of the same binary64 array
 * measured in the same run, one thread, best of FPLAB_BENCH_REPS.
 * Prints "FORMAT  Melem/s  x memcpy".  Usage: bblock [-n N] [FORMAT...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "bench.h"

struct ctx {
	const fpl_block_format *b;
	double *x, *y;
	size_t n, dims[2];
	fpl_state st;
};

static void run_copy(void *p)
{
	struct ctx *c = p;

	memcpy(c->y, c->x, c->n * sizeof *c->x);
}

static void run_block(void *p)
{
	struct ctx *c = p;

	fpl_block_round(c->b, c->y, c->x, c->dims, 2, FPL_RND_NE, &c->st, NULL);
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "mxfp8", "mxfp4", "nvfp4" };
	const char *const *names = defaults;
	struct ctx c;
	size_t n = (size_t)1 << 22;
	int nn = 3, i, reps = bench_reps();
	double tc;

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
	c.x = malloc(c.n * sizeof *c.x);
	c.y = malloc(c.n * sizeof *c.y);
	if (!c.x || !c.y)
		return 1;
	bench_gauss(c.x, c.n, 1.0, 25);
	memset(c.y, 0, c.n * sizeof *c.y);
	tc = bench_best(run_copy, &c, reps);
	printf("%-28s %10.1f Melem/s\n", "memcpy (binary64)", (double)c.n / tc / 1e6);
	for (i = 0; i < nn; i++) {
		fpl_block_format b;
		char err[256];
		double t;

		if (fpl_block_parse(&b, names[i], err, sizeof err)) {
			fprintf(stderr, "bblock: %s\n", err[0] ? err : "not a block format");
			return 2;
		}
		c.b = &b;
		fpl_state_init(&c.st, 1);
		t = bench_best(run_block, &c, reps);
		printf("%-28s %10.1f Melem/s  %.3f x memcpy\n", names[i], (double)c.n / t / 1e6,
		       tc / t);
	}
	free(c.x);
	free(c.y);
	return 0;
}
