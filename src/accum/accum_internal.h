/* SPDX-License-Identifier: MIT */
/*
 * accum/accum_internal.h - the accumulation layer's private interface.
 *
 * The invariant a reader must know: every rounding of an output's chain
 * takes its draw index from fpl__acc_idx(job, step, output), the schedule
 * of accum.h, and nothing else; so a tile of outputs may be computed by
 * any thread in any order and give the same bits.  The unit of work is a
 * tile: one row i of outputs, columns j0 .. j0+nj-1 (nj <= FPL__ACC_TILE),
 * run step by step, each step over the whole tile (the shape a vectorised
 * kernel would take).
 */
#ifndef FPLAB_ACCUM_INTERNAL_H
#define FPLAB_ACCUM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/accum.h>

#include "engine/internal.h"

#define FPL__ACC_TILE 64

/* One operation, its inputs already loaded into their formats. */
typedef struct fpl__acc_job {
	const fpl_accum_model *m;
	const fpl_state *st;
	size_t M, N, K;
	int sum;		/* value terms (fpl_accum_sum): no B, no products */
	const double *A;	/* M x K row-major, loaded */
	const double *B;	/* K x N row-major, loaded; NULL for a sum */
	const double *C;	/* M x N row-major, loaded initial values, or NULL */
	uint64_t base;		/* draw index of step 0 of output 0 */
	uint64_t MN;
	fpl_format f64;		/* binary64, for exact comparisons */
	fpl_state plain;	/* no flips: the state of those comparisons */
} fpl__acc_job;

/* A tile being computed: flags per output and event counts. */
typedef struct fpl__acc_tile {
	const fpl__acc_job *J;
	size_t i, j0, nj;
	unsigned fl[FPL__ACC_TILE];
	uint64_t cnt[FPL_NFLAGS];
	double *scratch;	/* fused: 2F+1 doubles */
} fpl__acc_tile;

static inline uint64_t fpl__acc_idx(const fpl__acc_tile *T, uint64_t step, size_t jj)
{
	const fpl__acc_job *J = T->J;
	return J->base + step * J->MN + (uint64_t)(T->i * J->N + T->j0 + jj);
}

/* Record the flags of one rounding of output jj. */
static inline void fpl__acc_note(fpl__acc_tile *T, size_t jj, unsigned f)
{
	T->fl[jj] |= f;
	while (f) {
		T->cnt[__builtin_ctz(f)]++;
		f &= f - 1;
	}
}

/* Compute the tile's outputs into res[0..nj) (dot.c). */
void fpl__acc_tile_run(fpl__acc_tile *T, double *res);

/*
 * fused.c: one group of a fused order: S plus the nt terms ops[1+2t] *
 * ops[2+2t] (ops[0] = S; values have 1.0 as their second factor), summed
 * as accum.h says and rounded once into m->acc with draw idx.
 */
double fpl__acc_fused_group(const fpl_accum_model *m, double *ops, size_t nt,
			    const fpl_state *st, uint64_t idx, unsigned *fl);

/* f = the catalogue format `name` (model.c). */
void fpl__acc_fmt(fpl_format *f, const char *name);

/* The running-sum format: promo for blocked, acc otherwise. */
static inline const fpl_format *fpl__acc_sum_format(const fpl_accum_model *m)
{
	return m->order == FPL_ORDER_BLOCKED ? &m->promo : &m->acc;
}

#endif
