/* SPDX-License-Identifier: MIT */
/* kernels/array_internal.h - the array driver shared by array.c and
 * array_ops.c. */
#ifndef FPLAB_ARRAY_INTERNAL_H
#define FPLAB_ARRAY_INTERNAL_H

#include "kernels/kernels_internal.h"

/* Operations beyond the kernels' arithmetic (fpl_kop): */
#define ARR_ROUND FPL_KOP_COUNT		/* plain rounding of a */
#define ARR_CONVERT (FPL_KOP_COUNT + 1)	/* a, a value of a DAZ format, rounded */
#define ARR_MIN (FPL_KOP_COUNT + 2)	/* fpl_min, fpl_max: the scalar engine */
#define ARR_MAX (FPL_KOP_COUNT + 3)

/* z[j] = op(a[j], b[j], c[j]) rounded into f, for j < n (array.h). */
int fpl__array_run(const fpl_format *f, int op, double *z, const double *a, const double *b,
		   const double *c, size_t n, fpl_rnd rnd, fpl_state *st);

#endif
