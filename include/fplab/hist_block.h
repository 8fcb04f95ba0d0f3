/* SPDX-License-Identifier: MIT */
/*
 * fplab/hist_block.h - `hist` under a block-scaled format (fplab/block.h):
 * the per-tensor view of fplab/hist.h for the elements after block
 * scaling, and a block view (the block scales, the elements each block
 * loses to zero or to saturation).
 *
 * Use: fpl_hist_init() with cfg.fmt = the block format's element format
 * and fixed scale 1; fpl_hist_add_block() once with the whole tensor (it
 * finishes h: fpl_hist_finish() is then a no-op), or, for a format without
 * a tensor scale, fpl_hist_add_block_part() for successive parts and
 * fpl_hist_block_finish(); fpl_hist_merge() and fpl_hist_block_merge()
 * add tensors up.
 *
 * The tensor is quantized with fpl_block_quantize (mode, seed, stream of
 * h->cfg, element j taking draw j), so every number here is what
 * `fplab round -f BLOCK` does to the same values.  With D_b = X_b * s the
 * block's divisor (s the per-tensor scale, 1 without ts), e_j the
 * element and y_j = e_j * D_b the dequantized value, fpl_hist's fields
 * mean (x_j the input, a binary64):
 *   zeros, nan_inf  the input classes, as fplab/hist.h;
 *   became_zero     x_j finite nonzero, e_j = +-0 (the block's `flushed`);
 *   subnormal       0 < |e_j| < the element's min normal;
 *   overflow        the element's rounding overflowed (the engine's
 *                   overflow flag: e_j = +-max_e, saturated), plus every
 *                   finite nonzero x_j of a block given the NaN scale
 *                   (y_j is NaN: a finite value whose result is NaN);
 *   normal          the rest;
 *   hist[]          floor(log2 |x_j / D_b|), exactly, over the finite
 *                   nonzero x_j outside NaN blocks (the quotient the
 *                   element format is given); hist_in[] floor(log2 |x_j|);
 *   errors          of the dequantized value: |y_j - x_j| / |x_j| and
 *                   |y_j - x_j| in x's units (binary64), over the x_j
 *                   whose y_j is finite (a zero in a NaN block has none);
 *   events          the engine's flags of the element roundings;
 *   scale_varies = 1, mx_blocks = the blocks.
 */
#ifndef FPLAB_HIST_BLOCK_H
#define FPLAB_HIST_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/block.h>
#include <fplab/export.h>
#include <fplab/hist.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buckets of "elements lost per block": bucket 0 holds 0, bucket i >= 1
 * the counts k with 2^(i-2) < k <= 2^(i-1): 1, 2, 3-4, 5-8, 9-16 ... */
#define FPL_HB_NBUCKETS 48

typedef struct fpl_hist_block {
	fpl_block_stats s;	/* the library's block events (fplab/block.h) */
	uint64_t tensors;
	uint64_t blocks_flushed;	/* blocks with at least one element flushed to zero */
	uint64_t blocks_saturated;	/* blocks with at least one element saturated */
	/* blocks (NaN blocks excepted) by elements flushed, by elements
	 * saturated, in the buckets above */
	uint64_t flushed_by[FPL_HB_NBUCKETS], saturated_by[FPL_HB_NBUCKETS];
	/* the block scales X_b (not times s) of the blocks that hold a
	 * finite nonzero value and no NaN or inf: scale_hist[e - FPL_HIST_EMIN]
	 * counts floor(log2 X_b) == e; scale_lo > scale_hi when none */
	uint64_t scale_hist[FPL_HIST_NBINS];
	int scale_lo, scale_hi;
	double min_scale, max_scale;	/* over the same blocks; 0 when none */
	double tscale;		/* the per-tensor scale s (1 without ts) */
	int tscale_varies;	/* merged tensors with different s */
	double bits_sum;	/* sum over tensors of bits per value x elements */
} fpl_hist_block;

FPL_API void fpl_hist_block_init(fpl_hist_block *bv);

/*
 * Quantize x (dims[0..ndims-1], row-major) under b with h's mode and
 * state and classify it into h (initialised, nothing added yet) and bv
 * (added to).  Returns 0, FPL_EINVAL (bad arguments, shape b cannot
 * block), FPL_ENOMEM or fpl_block_quantize's error.
 */
FPL_API int fpl_hist_add_block(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
			       const double *x, const size_t *dims, int ndims);

/*
 * The same in parts, for a format without a tensor scale (ts: FPL_EINVAL):
 * x[0..n) is the next part of the tensor in storage order and holds whole
 * blocks only, shaped dims so that b blocks the part as it blocks the
 * tensor (for 1-D blocks along the last axis: whole rows, as [rows, last
 * dimension] with the axis given as -1; for a 1-D tensor a multiple of the
 * block size, the last part shorter).  Element j of a part takes the
 * draw after those of the parts before it, so the parts give the whole
 * tensor's numbers.  Then fpl_hist_block_finish() with the whole tensor's
 * dims settles h (finished) and bv.  Returns as fpl_hist_add_block.
 */
FPL_API int fpl_hist_add_block_part(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
				    const double *x, const size_t *dims, int ndims);
FPL_API int fpl_hist_block_finish(fpl_hist *h, fpl_hist_block *bv, const fpl_block_format *b,
				  const size_t *dims, int ndims);

/* Add part to total. */
FPL_API void fpl_hist_block_merge(fpl_hist_block *total, const fpl_hist_block *part);

/* The bucket of k elements lost, and the largest k of bucket i. */
FPL_API int fpl_hist_block_bucket(uint64_t k);
FPL_API uint64_t fpl_hist_block_bucket_max(int i);

#ifdef __cplusplus
}
#endif
#endif
