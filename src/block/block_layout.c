/* SPDX-License-Identifier: MIT */
/*
 * block_layout.c - the block grid of a tensor.  Every shape is a tile of
 * a three-axis view [batch, R, C] of the row-major tensor:
 *   1-D blocks of B along axis a: batch = prod(dims[<a]), R = dims[a],
 *     C = prod(dims[>a]), tiles B x 1 (B = R for row and col);
 *   RxC tiles: batch = prod(dims[<nd-2]), R = dims[nd-2] (1 for a 1-D
 *     tensor), C = dims[nd-1];
 *   tensor: batch = 1, R = 1, C = n, one 1 x n tile.
 * A side that does not divide its axis leaves a shorter last block.
 */
#include <stdint.h>

#include "block/block_internal.h"

static size_t cdiv(size_t a, size_t b)
{
	return b ? (a + b - 1) / b : 0;
}

static size_t prod(const size_t *d, int lo, int hi)
{
	size_t p = 1;
	int i;

	for (i = lo; i < hi; i++)
		p *= d[i];
	return p;
}

int fpl__blk_view_of(const fpl_block_format *b, const size_t *dims, int nd, fpl__blk_view *v,
		     size_t *sdims, int *sndims)
{
	size_t sd[FPL_BLOCK_MAX_DIMS];
	int i, snd = nd;

	size_t n = 1;

	if (!b || !dims || nd < 1 || nd > FPL_BLOCK_MAX_DIMS)
		return FPL_EINVAL;
	for (i = 0; i < nd; i++) {
		if (dims[i] && n > SIZE_MAX / 8 / dims[i])	/* elements must be addressable */
			return FPL_EINVAL;
		n *= dims[i];
		sd[i] = dims[i];
	}
	if (b->shape == FPL_BLOCK_1D) {
		int a = b->axis < 0 ? nd + b->axis : b->axis;

		if (a < 0 || a >= nd)
			return FPL_EINVAL;
		v->batch = prod(dims, 0, a);
		v->R = dims[a];
		v->C = prod(dims, a + 1, nd);
		v->tr = b->size > 0 ? (size_t)b->size : (v->R ? v->R : 1);
		v->tc = 1;
		sd[a] = cdiv(v->R, v->tr);
	} else if (b->shape == FPL_BLOCK_TILE) {
		v->batch = nd > 2 ? prod(dims, 0, nd - 2) : 1;
		v->R = nd > 1 ? dims[nd - 2] : 1;
		v->C = dims[nd - 1];
		v->tr = (size_t)b->rows;
		v->tc = (size_t)b->cols;
		if (nd > 1)
			sd[nd - 2] = cdiv(v->R, v->tr);
		sd[nd - 1] = cdiv(v->C, v->tc);
	} else if (b->shape == FPL_BLOCK_TENSOR) {
		v->batch = 1;
		v->R = 1;
		v->C = prod(dims, 0, nd);
		v->tr = 1;
		v->tc = v->C ? v->C : 1;
		snd = 1;
		sd[0] = v->C ? 1 : 0;
	} else {
		return FPL_EINVAL;
	}
	v->nbr = cdiv(v->R, v->tr);
	v->nbc = cdiv(v->C, v->tc);
	v->nblocks = v->batch * v->nbr * v->nbc;
	v->n = v->batch * v->R * v->C;
	if (sdims)
		for (i = 0; i < snd; i++)
			sdims[i] = sd[i];
	if (sndims)
		*sndims = snd;
	return 0;
}

int fpl_block_layout(const fpl_block_format *b, const size_t *dims, int ndims, size_t *nblocks,
		     size_t *sdims, int *sndims)
{
	fpl__blk_view v;
	int rc = fpl__blk_view_of(b, dims, ndims, &v, sdims, sndims);

	if (!rc && nblocks)
		*nblocks = v.nblocks;
	return rc;
}
