/* SPDX-License-Identifier: MIT */
/*
 * dataset_gen.c - fpl_dataset_generate(): `classes` Gaussian blobs in
 * [0, 1]^d, a small learnable set for tests.
 *
 * Class c's centre, coordinate j, is 0.2 + 0.6 u with u uniform in [0, 1)
 * from draw c*d + j of stream GEN_CENTRES; example i (class i % classes)
 * is its centre plus noise of standard deviation GEN_SIGMA in every
 * coordinate, clamped to [0, 1], then rounded once to binary32.  The
 * noise is approximately Gaussian: the sum of the four 16-bit fields of
 * draw i*d + j of stream GEN_NOISE, centred and scaled (Irwin-Hall, four
 * terms), so only additions and multiplications of exactly representable
 * binary64 values are used: no libm function whose last bit varies
 * between platforms, hence the same bytes everywhere (the build uses
 * -ffp-contract=off).
 *
 * Invariant: features are pure functions of (seed, i, j, d, classes);
 * n only says how many examples there are.
 */
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>
#include <fplab/state.h>

#include "train/dataset_internal.h"

#define GEN_CENTRES 0x63656e7472657300ull	/* stream "centres" */
#define GEN_NOISE 0x6e6f697365000000ull		/* stream "noise" */
#define GEN_SIGMA 0.1

/* Uniform in [0, 1): the top 53 bits of a draw. */
static double unit(uint64_t r)
{
	return (double)(r >> 11) * 0x1p-53;
}

/* Mean 0, variance 1: four uniform 16-bit fields, each (k + 1/2) / 2^16,
 * sum to mean 2 and variance 4/12, hence (sum - 2) * sqrt(3). */
static double noise(uint64_t r)
{
	double s = 0;
	for (int k = 0; k < 4; k++)
		s += ((double)((r >> (16 * k)) & 0xffff) + 0.5) * 0x1p-16;
	return (s - 2.0) * 1.7320508075688772;
}

FPL_API int fpl_dataset_generate(fpl_dataset *ds, size_t n, size_t d, unsigned classes,
				 uint64_t seed)
{
	size_t nd, cd;
	if (!ds)
		return FPL_EINVAL;
	memset(ds, 0, sizeof *ds);
	if (n == 0 || d == 0 || classes < 2 || classes > DS_MAX_LABEL + 1u)
		return FPL_EINVAL;
	if (__builtin_mul_overflow(n, d, &nd) || nd > DS_MAX_ELEMS ||
	    __builtin_mul_overflow((size_t)classes, d, &cd))
		return FPL_ENOMEM;
	double *centre = malloc(cd * sizeof *centre);
	ds->x = malloc(nd * sizeof *ds->x);
	ds->y = malloc(n * sizeof *ds->y);
	if (!centre || !ds->x || !ds->y) {
		free(centre);
		fpl_dataset_free(ds);
		return FPL_ENOMEM;
	}
	for (size_t k = 0; k < cd; k++)
		centre[k] = 0.2 + 0.6 * unit(fpl_random_draw(seed, GEN_CENTRES, k));
	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned)(i % classes);
		ds->y[i] = (int32_t)c;
		for (size_t j = 0; j < d; j++) {
			double v = centre[(size_t)c * d + j] +
				   GEN_SIGMA * noise(fpl_random_draw(seed, GEN_NOISE, i * d + j));
			ds->x[i * d + j] = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
		}
	}
	free(centre);
	ds->n = n;
	ds->d = d;
	ds->classes = classes;
	return 0;
}
