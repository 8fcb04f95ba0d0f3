/* SPDX-License-Identifier: MIT */
/*
 * load.c - loading inputs into a model's formats (fplab/accum.h, Loads),
 * the one rule shared by the GEMM driver, its error report and the
 * reductions, so that their loads can never disagree.
 *
 * Invariant: a rounded load of element i uses draw c0 + i, exactly as
 * fpl_round_array numbers its elements; a given load changes nothing.
 */
#include <string.h>

#include "accum/accum_internal.h"

int fpl__acc_is_value(const fpl_format *f, double x)
{
	fpl_format g = *f;
	fpl_state s;
	unsigned fl = 0;

	if (fpl__isnan(x))
		return f->specials != FPL_SPEC_NONE;
	if (fpl__isinf(x))
		return fpl__has_inf(f);
	/* a flushing format holds its subnormals as values; DAZ reads them
	 * as zero but does not make them non-values */
	if (g.subnormal == FPL_SUB_FTZ)
		g.subnormal = FPL_SUB_YES;
	g.daz = 0;
	fpl_format_finish(&g);
	fpl_state_init(&s, 0);
	return fpl__bits(fpl__round_ix(&g, x, FPL_RND_NE, &s, 0, &fl)) == fpl__bits(x);
}

/*
 * Formats whose values are exactly the binary32 values with the low 23 -
 * m fraction bits zero (binary32, tf32, bf16: IEEE, binary32's exponent
 * field and bias, subnormals, no DAZ or flush, no narrower range).
 */
static int binary32_prefix(const fpl_format *f)
{
	return f->e == 8 && f->m <= 23 && f->bias == 127 && f->explim && !f->emax_limit_set
	       && f->subnormal == FPL_SUB_YES && !f->daz && f->specials == FPL_SPEC_IEEE
	       && f->overflow == FPL_OVF_INF;
}

/* Is every x[i] (none a NaN) a value of such a format with m fraction
 * bits?  Then rounding it is the identity, exact, in every mode. */
static int all_values(const double *x, size_t n, int m)
{
	const uint32_t low = (uint32_t)((1ull << (23 - m)) - 1);
	size_t i, j;

	for (i = 0; i < n; i += 1024) {
		size_t e = n - i < 1024 ? n : i + 1024;
		int ok = 1;
		for (j = i; j < e; j++) {
			const float v = (float)x[j];
			uint32_t u;
			memcpy(&u, &v, sizeof u);
			ok &= ((double)v == x[j]) & ((u & low) == 0);
		}
		if (!ok)
			return 0;
	}
	return 1;
}

int fpl__acc_load(double *buf, size_t n, const fpl_format *f, fpl_load kind, fpl_rnd rnd,
		  const fpl_state *st, uint64_t c0, uint64_t *cnt)
{
	fpl_state s;
	size_t i;
	int r;

	/* Inputs already in the format (a training loop's stored values)
	 * round to themselves without a flag: skip the rounding, unless
	 * soft errors may flip a rounded result. */
	if (kind == FPL_LOAD_ROUND && binary32_prefix(f)
	    && (st->flip == FPL_FLIP_NONE || !(st->flip_prob > 0)) && all_values(buf, n, f->m))
		return 0;

	if (kind == FPL_LOAD_GIVEN) {
		/* the values of a flushing or DAZ format are those of the
		 * plain one (fpl__acc_is_value): the scan decides most inputs */
		fpl_format g = *f;
		if (g.subnormal == FPL_SUB_FTZ)
			g.subnormal = FPL_SUB_YES;
		g.daz = 0;
		if (binary32_prefix(&g) && all_values(buf, n, g.m))
			return 0;
		for (i = 0; i < n; i++)
			if (!fpl__acc_is_value(f, buf[i]))
				return FPL_ERANGE;
		return 0;
	}
	if (!n)
		return 0;
	s = *st;
	fpl_state_clear_flags(&s);
	s.counter = c0;
	if ((r = fpl_round_array(f, buf, buf, n, rnd, &s)))
		return r;
	for (i = 0; cnt && i < FPL_NFLAGS; i++)
		cnt[i] += s.count[i];
	return 0;
}

int fpl__acc_load_operand(double *buf, size_t rows, size_t cols, const fpl_accum_model *m,
			  int which, const fpl_state *st, uint64_t c0, uint64_t *cnt,
			  fpl_block_stats *bs)
{
	const fpl_block_format *b = which ? &m->b_blk : &m->a_blk;
	const size_t dims[2] = { rows, cols };
	fpl_state s;
	size_t i;
	int r;

	if (!(which ? m->b_block : m->a_block))
		return fpl__acc_load(buf, rows * cols, which ? &m->b : &m->a,
				     which ? m->b_load : m->a_load, which ? m->b_rnd : m->a_rnd, st,
				     c0, cnt);
	if (!rows || !cols)
		return 0;
	/* the whole operand at once: element (r, c) takes draw c0 + r*cols
	 * + c (block.h's numbering), as fpl__acc_load's element r*cols + c */
	s = *st;
	fpl_state_clear_flags(&s);
	s.counter = c0;
	if ((r = fpl_block_round(b, buf, buf, dims, 2, which ? m->b_rnd : m->a_rnd, &s, bs)))
		return r;
	for (i = 0; cnt && i < FPL_NFLAGS; i++)
		cnt[i] += s.count[i];
	return 0;
}
