/* SPDX-License-Identifier: MIT */
/*
 * barith.c - speed of array add, mul and fma in bf16, fp16 and e4m3fn in
 * every deterministic mode (issue 2, item 5: at least 150 Mop/s each on
 * one core).  Operands are values of the format (N(0,1) rounded into it),
 * as they are in a simulation.  The baseline is native binary32 a*b+c on
 * the same number of elements in the same run, printed for scale.
 */
#include <stdio.h>
#include <string.h>

#include <fplab/fplab.h>

#include "bench.h"

#define N (1u << 22)

typedef struct ctx {
	const fpl_format *f;
	fpl_rnd rnd;
	int op;
	double *a, *b, *c, *z;
	float *fa, *fb, *fc, *fz;
} ctx;

static void do_native(void *p)
{
	ctx *c = p;
	size_t i;
	for (i = 0; i < N; i++)
		c->fz[i] = c->fa[i] * c->fb[i] + c->fc[i];
}

static void do_op(void *p)
{
	ctx *c = p;
	fpl_state st;
	int rc;

	fpl_state_init(&st, 7);
	switch (c->op) {
	case 0: rc = fpl_add_array(c->f, c->z, c->a, c->b, N, c->rnd, &st); break;
	case 1: rc = fpl_mul_array(c->f, c->z, c->a, c->b, N, c->rnd, &st); break;
	default: rc = fpl_fma_array(c->f, c->z, c->a, c->b, c->c, N, c->rnd, &st); break;
	}
	if (rc) {
		fprintf(stderr, "barith: array operation failed\n");
		exit(1);
	}
}

int main(void)
{
	static const char *const formats[] = { "bf16", "fp16", "e4m3fn" };
	int reps = bench_reps(), low = 0;
	ctx c = { 0 };
	double tn;
	size_t i;
	int r, op;

	c.a = malloc(N * sizeof(double));
	c.b = malloc(N * sizeof(double));
	c.c = malloc(N * sizeof(double));
	c.z = malloc(N * sizeof(double));
	c.fa = malloc(N * sizeof(float));
	c.fb = malloc(N * sizeof(float));
	c.fc = malloc(N * sizeof(float));
	c.fz = malloc(N * sizeof(float));
	if (!c.a || !c.b || !c.c || !c.z || !c.fa || !c.fb || !c.fc || !c.fz)
		return 1;
	bench_gauss(c.a, N, 1.0, 11);
	bench_gauss(c.b, N, 1.0, 12);
	bench_gauss(c.c, N, 1.0, 13);
	for (i = 0; i < N; i++) {
		c.fa[i] = (float)c.a[i];
		c.fb[i] = (float)c.b[i];
		c.fc[i] = (float)c.c[i];
	}
	tn = bench_best(do_native, &c, reps);
	printf("barith: 2^22 elements, one thread, kernels %s, best of %d\n", fpl_kernels_selected(), reps);
	printf("native binary32 a*b+c: %.0f Mop/s\n", N / tn / 1e6);
	printf("%-7s %-4s %9s %9s %9s   (Mop/s; target >= 150)\n", "format", "mode", "add", "mul", "fma");
	for (i = 0; i < sizeof formats / sizeof *formats; i++) {
		double *src[3] = { c.a, c.b, c.c };
		fpl_format f;
		fpl_state st;

		fpl_format_lookup(&f, formats[i]);
		fpl_state_init(&st, 0);
		c.f = &f;
		for (op = 0; op < 3; op++)	/* operands become values of f */
			fpl_round_array(&f, src[op], src[op], N, FPL_RND_NE, &st);
		for (r = 0; r < FPL_RND_COUNT; r++) {
			double mops[3];
			if (fpl_rnd_is_stochastic((fpl_rnd)r))
				continue;
			c.rnd = (fpl_rnd)r;
			for (op = 0; op < 3; op++) {
				c.op = op;
				mops[op] = N / bench_best(do_op, &c, reps) / 1e6;
				low += mops[op] < 150;
			}
			printf("%-7s %-4s %9.0f %9.0f %9.0f%s\n", formats[i], fpl_rnd_name(c.rnd), mops[0],
			       mops[1], mops[2],
			       mops[0] < 150 || mops[1] < 150 || mops[2] < 150 ? "  below target" : "");
		}
		/* restore N(0,1) operands for the next format */
		bench_gauss(c.a, N, 1.0, 11);
		bench_gauss(c.b, N, 1.0, 12);
		bench_gauss(c.c, N, 1.0, 13);
	}
	printf("barith: %d of %d figures below 150 Mop/s\n", low, 3 * 7 * 3);
	return 0;
}
