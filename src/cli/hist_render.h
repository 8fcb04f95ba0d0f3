/* SPDX-License-Identifier: MIT */
/*
 * hist_render.h - what `fplab hist` (cmd_hist.c) hands to its renderers
 * (hist_render.c): the finished histograms of one run, per tensor and in
 * total, and the description of the cast.
 */
#ifndef FPLAB_CLI_HIST_RENDER_H
#define FPLAB_CLI_HIST_RENDER_H

#include <stdio.h>

#include <fplab/fplab.h>

struct hist_entry {
	char name[FPL_TENSOR_NAME_MAX + 64];	/* "tensor" or "FILE:tensor" */
	fpl_dtype dtype;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	fpl_hist h;
	fpl_hist_block bv;	/* under a block format: the block view */
};

/* At most this many tensors get an SVG panel (the total always does): the
 * SVG is what `hist` keeps in memory to the end, so this bounds it. */
#define HIST_SVG_MAX 64

struct hist_run {
	const fpl_format *fmt;
	fpl_rnd rnd;
	const char *scaling;	/* "none", "2^-3", "1000", "aps", "mx32" */
	struct hist_entry *e;	/* the tensors kept for the SVG, in file order */
	size_t n;
	size_t more;		/* tensors read beyond those n (no panel) */
	fpl_hist *total;	/* NULL when there is one tensor */
	const fpl_block_format *block;	/* the block format, NULL for a plain one */
	fpl_hist_block *btotal;	/* its block view of the total (with total) */
};

/* value/count as a fraction, 0 when count is 0 */
double hist_frac(uint64_t value, uint64_t count);

/* The terminal chart: its heading, then one tensor (e NULL for the total)
 * at a time as each is finished; colour: ANSI colours.  bv: under a block
 * format, the block view (blocks, their scales by binade, the elements
 * each block lost), printed after the tensor's chart; else NULL. */
void hist_chart_head(FILE *fp, const struct hist_run *r);
void hist_chart_one(FILE *fp, const char *name, const struct hist_entry *e, const fpl_hist *h,
		    const fpl_hist_block *bv, const struct hist_run *r, int colour);

/* One self-contained SVG document: a panel per kept tensor (and the
 * total), a note naming how many more were read, or a note that there were
 * no tensors. */
void hist_svg(FILE *fp, const struct hist_run *r);

#endif
