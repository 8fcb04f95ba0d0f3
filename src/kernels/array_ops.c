/* SPDX-License-Identifier: MIT */
/* array_ops.c - the element-wise arithmetic entry points of array.h; the
 * work is array.c's. */
#include "kernels/array_internal.h"

int fpl_add_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_ADD, z, a, b, NULL, n, rnd, st);
}

int fpl_sub_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_SUB, z, a, b, NULL, n, rnd, st);
}

int fpl_mul_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_MUL, z, a, b, NULL, n, rnd, st);
}

int fpl_div_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_DIV, z, a, b, NULL, n, rnd, st);
}

int fpl_sqrt_array(const fpl_format *f, double *z, const double *a, size_t n, fpl_rnd rnd,
		   fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_SQRT, z, a, NULL, NULL, n, rnd, st);
}

int fpl_fma_array(const fpl_format *f, double *z, const double *a, const double *b,
		  const double *c, size_t n, fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, FPL_KOP_FMA, z, a, b, c, n, rnd, st);
}
