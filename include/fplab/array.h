/* SPDX-License-Identifier: MIT */
/*
 * fplab/array.h - element-wise operations on arrays.
 *
 * Each function computes, for j in 0..n-1, exactly what the scalar
 * function of fplab/ops.h computes, bit for bit and flag for flag, with
 * element j using random draw st->counter + j; afterwards st->counter has
 * grown by n and st->count holds the per-element event counts.  Work is
 * split over st->threads threads when n is large; the result does not
 * depend on the split.  The output may alias an input exactly (y == x) but
 * must not partially overlap one.  Returns 0, or FPL_EINVAL (NULL pointer
 * with n > 0, mode out of range), or FPL_ENOMEM.
 */
#ifndef FPLAB_ARRAY_H
#define FPLAB_ARRAY_H

#include <stddef.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

FPL_API int fpl_round_array(const fpl_format *f, double *y, const double *x, size_t n,
			    fpl_rnd rnd, fpl_state *st);

/* binary32 in and out; f must fit in binary32 (every value of f a float),
 * else FPL_EFORMAT. */
FPL_API int fpl_round_array_f32(const fpl_format *f, float *y, const float *x, size_t n,
				fpl_rnd rnd, fpl_state *st);

FPL_API int fpl_add_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_sub_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_mul_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_div_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_sqrt_array(const fpl_format *f, double *z, const double *a, size_t n,
			   fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_fma_array(const fpl_format *f, double *z, const double *a, const double *b,
			  const double *c, size_t n, fpl_rnd rnd, fpl_state *st);

/* IEEE 754-2019 minimum and maximum (fpl_min, fpl_max), element-wise. */
FPL_API int fpl_min_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);
FPL_API int fpl_max_array(const fpl_format *f, double *z, const double *a, const double *b,
			  size_t n, fpl_rnd rnd, fpl_state *st);

/* y[j] = fpl_convert(to, from, x[j]): values of `from` (its DAZ applies)
 * rounded into `to`.  from == NULL is FPL_EINVAL. */
FPL_API int fpl_convert_array(const fpl_format *to, const fpl_format *from, double *y,
			      const double *x, size_t n, fpl_rnd rnd, fpl_state *st);

/* r[j] = fpl_compare(f, a[j], b[j]): -1, 0, 1 or 2 (unordered).  The
 * exception to the rule above: a comparison takes no random draw, so
 * st->counter does not move; flags and counts are fpl_compare's. */
FPL_API int fpl_compare_array(const fpl_format *f, signed char *r, const double *a,
			      const double *b, size_t n, fpl_state *st);

/* Encode n values of f (see fpl_encode) into codes; a value without a code
 * gives FPL_CODE_NONE, ambiguous in 64-bit formats (fpl_encode_checked). */
FPL_API int fpl_encode_array(const fpl_format *f, uint64_t *codes, const double *x, size_t n);
/* Decode n codes of f; a code with bits above f->nbits is FPL_ERANGE. */
FPL_API int fpl_decode_array(const fpl_format *f, double *x, const uint64_t *codes, size_t n);

#ifdef __cplusplus
}
#endif
#endif
