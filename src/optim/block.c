/* SPDX-License-Identifier: MIT */
/*
 * block.c - the block-format storage slots of an optimizer step
 * (fplab/optim.h, "block formats"): which slot holds a block format,
 * the store of a tensor into a slot (a plain rounding or a block
 * quantization over the tensor's dims), and the binary64 round-to-odd
 * intermediates a block slot quantizes where a plain slot rounds one
 * operation's exact result.
 *
 * Why the odd intermediate quantizes as the exact value would (the
 * power-of-two scale rules, elements of p <= 51 significant bits, no
 * binary64 overflow or underflow): let v be exact and o its odd rounding
 * into binary64 (53 bits).  o = v when v fits; otherwise o is v
 * truncated with its last bit set, so o lies strictly between the same
 * two neighbours of v on any grid of at most 52 bits per binade, never
 * on one of them, and, on a grid of at most 51 bits, on the same side of
 * the midpoint between them.  Hence (1) floor(log2 |o|) =
 * floor(log2 |v|) and the largest |x| of a block keeps its binade, so
 * floor's scale is v's; rounding amax to the element's precision (ceil,
 * even) and comparing amax / max_e with powers of two (rceil: max_e has
 * at most 51 significant bits) give v's results; (2) an element is x / X
 * with X a power of two, an exact binary64 division, and its rounding at
 * p <= 51 bits (or a coarser subnormal grid) in any mode is v's: the two
 * candidates, the side of the midpoint and the inexactness are the same;
 * a stochastic rounding's R bits below the kept ones are v's when
 * p + R <= 52 (fpl_wide_hold's condition, number.c).  The amax rule's
 * scales are not powers of two: there the quantization is that of o.
 */
#include <string.h>

#include <fplab/error.h>

#include "optim/optim_internal.h"

const fpl_block_format *opt__block(const fpl_opt_policy *p, int s)
{
	switch (s) {
	case FPL_OPT_SLOT_WEIGHT: return p->weight_is_block ? &p->weight_block : NULL;
	case FPL_OPT_SLOT_MASTER: return p->master_is_block ? &p->master_block : NULL;
	case FPL_OPT_SLOT_GRAD: return p->grad_is_block ? &p->grad_block : NULL;
	case FPL_OPT_SLOT_STATE: return p->state_is_block ? &p->state_block : NULL;
	default: return NULL;
	}
}

int opt__store(fpl_optim *o, opt_tensor *T, int s, const fpl_format *f, fpl_rnd r, double *z,
	       const double *x)
{
	const fpl_block_format *b = opt__block(&o->cfg.policy, s);

	if (!b)
		return opt__round(f, r, &T->st, z, x, T->n);
	if (!T->n)
		return 0;
	return fpl_block_round(b, z, x, T->dims, T->nd, r, &T->st, &o->bstat[s]);
}

/* binary64 in round-to-odd on a scratch copy of T's state: no flips, its
 * draws and flags thrown away. */
static void odd_env(const opt_tensor *T, fpl_format *f64, fpl_state *tmp)
{
	fpl_format_ieee(f64, 11, 52);
	*tmp = T->st;
	tmp->flip = FPL_FLIP_NONE;
	tmp->flip_prob = 0;
}

int opt__odd_sub(opt_tensor *T, double *z, const double *a, const double *b)
{
	fpl_format f;
	fpl_state t;

	odd_env(T, &f, &t);
	return opt__sub(&f, FPL_RND_OD, &t, z, a, b, T->n);
}

int opt__odd_mul(opt_tensor *T, double *z, const double *a, const double *b)
{
	fpl_format f;
	fpl_state t;

	odd_env(T, &f, &t);
	return opt__mul(&f, FPL_RND_OD, &t, z, a, b, T->n);
}

int opt__odd_fma(opt_tensor *T, double *z, const double *a, const double *b, const double *c)
{
	fpl_format f;
	fpl_state t;

	odd_env(T, &f, &t);
	return opt__fma(&f, FPL_RND_OD, &t, z, a, b, c, T->n);
}
