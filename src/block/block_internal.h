/* SPDX-License-Identifier: MIT */
/*
 * block/block_internal.h - what the block files share: the grid view of a
 * tensor (every block shape is a tile of a [batch, R, C] view) and the
 * element format used for MXINT8.
 *
 * Invariant: block id = (bt * nbr + br) * nbc + bc is the row-major index
 * of the scale tensor fpl_block_layout describes, and element (bt, row,
 * col) is x[(bt * R + row) * C + col], its draw index st->counter + that.
 */
#ifndef FPLAB_BLOCK_INTERNAL_H
#define FPLAB_BLOCK_INTERNAL_H

#include <fplab/block.h>
#include <fplab/error.h>

typedef struct fpl__blk_view {
	size_t batch, R, C;	/* the tensor as [batch, R, C] */
	size_t tr, tc;		/* a block is tr x tc (shorter at the ends) */
	size_t nbr, nbc;	/* blocks per batch: nbr x nbc */
	size_t nblocks, n;	/* blocks, elements */
} fpl__blk_view;

/* The view of dims under b; sdims/sndims as fpl_block_layout. */
int fpl__blk_view_of(const fpl_block_format *b, const size_t *dims, int ndims,
		     fpl__blk_view *v, size_t *sdims, int *sndims);

/* MXINT8's element as a format: e1m6, bias 1, no specials, so its values
 * are exactly k * 2^-6 for |k| <= 127 (subnormals k < 64, normals
 * 64 <= k <= 127), saturating. */
int fpl__blk_int8_format(fpl_format *f);

#endif
