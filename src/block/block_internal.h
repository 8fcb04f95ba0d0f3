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

/* The exponent k of a power-of-two rule's scale 2^k for amax > 0
 * (finite), clamped into the scale format's range (*clamped set then);
 * wide: the element's precision with binary64's range (ceil, even). */
int fpl__blk_pow2_exp(const fpl_block_format *b, const fpl_format *wide, double amax,
		      int *clamped);

/* The fast path of fpl_block_round (block_fast.c): 0 done, 1 not
 * applicable (nothing written, st untouched), or an error. */
int fpl__blk_round_fast(const fpl_block_format *b, double *y, const double *x,
			const fpl__blk_view *v, fpl_rnd rnd, fpl_state *st,
			fpl_block_stats *stats);

/* fpl_block_round by the reference path only (tests compare the two). */
int fpl__block_round_ref(const fpl_block_format *b, double *y, const double *x,
			 const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			 fpl_block_stats *stats);

/* fpl_block_round_f32 by the binary64 path only (widen, round, narrow). */
int fpl__block_round_f32_ref(const fpl_block_format *b, float *y, const float *x,
			     const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			     fpl_block_stats *stats);

/* Calls of fpl_block_round_f32 that took a vector kernel (for the tests). */
extern uint64_t fpl__bq_fast_runs;

/* Nonzero (tests only): the AVX-512 sp kernel redoes every group of
 * blocks by its float steps, the path it takes where its carry cannot
 * decide a tiny lane (x86/block_f32_avx512.c's group16); same bits. */
extern int fpl__bq_force_redo;

/* Calls of fpl_block_round that took the fast path (for the tests). */
extern uint64_t fpl__blk_fast_runs;

#endif
