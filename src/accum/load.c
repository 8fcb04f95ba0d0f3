/* SPDX-License-Identifier: MIT */
/*
 * load.c - loading inputs into a model's formats (fplab/accum.h, Loads),
 * the one rule shared by the GEMM driver, its error report and the
 * reductions, so that their loads can never disagree.
 *
 * Invariant: a rounded load of element i uses draw c0 + i, exactly as
 * fpl_round_array numbers its elements; a given load changes nothing.
 */
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

int fpl__acc_load(double *buf, size_t n, const fpl_format *f, fpl_load kind, fpl_rnd rnd,
		  const fpl_state *st, uint64_t c0, uint64_t *cnt)
{
	fpl_state s;
	size_t i;
	int r;

	if (kind == FPL_LOAD_GIVEN) {
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
