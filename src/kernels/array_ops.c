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

int fpl_min_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, ARR_MIN, z, a, b, NULL, n, rnd, st);
}

int fpl_max_array(const fpl_format *f, double *z, const double *a, const double *b, size_t n,
		  fpl_rnd rnd, fpl_state *st)
{
	return fpl__array_run(f, ARR_MAX, z, a, b, NULL, n, rnd, st);
}

/* A comparison rounds nothing and draws nothing: one pass, no threads. */
int fpl_compare_array(const fpl_format *f, signed char *r, const double *a, const double *b,
		      size_t n, fpl_state *st)
{
	size_t j;

	if (!f || !st || (n && (!r || !a || !b)))
		return FPL_EINVAL;
	for (j = 0; j < n; j++)
		r[j] = (signed char)fpl_compare(f, a[j], b[j], st);
	return 0;
}
