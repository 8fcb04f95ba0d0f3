/* SPDX-License-Identifier: MIT */
/*
 * flip.c - soft errors: after rounding, flip one random bit of the
 * encoding with probability p (SEMANTICS.md, "Soft errors").  The draw
 * comes from the flip key, so enabling flips changes no rounding decision.
 */
#include "engine/internal.h"

double fpl__flip(const fpl_format *f, double r, const fpl_state *st, uint64_t idx)
{
	uint64_t d = fpl_random_draw(st->seed ^ FPL__FLIP_KEY, st->stream, idx);
	uint64_t code;
	unsigned width;

	if ((double)(d >> 11) * 0x1p-53 >= st->flip_prob)
		return r;
	width = st->flip == FPL_FLIP_FRACTION ? (unsigned)f->m : (unsigned)f->nbits;
	if (width == 0)
		return r;
	if (fpl_encode_checked(f, r, &code))
		return r;	/* no code to flip a bit of */
	code ^= 1ull << ((d & 0xffffffffu) % width);
	return fpl_decode(f, code);
}
