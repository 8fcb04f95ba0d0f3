/* SPDX-License-Identifier: MIT */
/*
 * bound.c - the unit roundoff u of an accumulation model and the
 * classical bound gamma_K' = K' u / (1 - K' u) (fplab/accum_error.h).
 *
 * The invariant: K' is the most roundings one term, or C, can go through
 * in the order as accum.h defines it, counted in the worst case: every
 * rounding step on the term's path counts (a chain's first step from +0
 * rounds the exact product), the addition of C counts as if beta = 1
 * (the bound has no beta argument, and one more step only weakens it),
 * and only steps that are exact by construction are left out (the +0
 * pad of pairs: fma(+0, +0, S) is S, up to the sign of a zero).  Then
 * every order computes, barring overflow and underflow,
 * R = sum_k x_k prod_{i <= K'_k} (1 + d_ki) (x_0..x_{K-1} the exact
 * terms a_k b_k, x_K = C), K'_k <= K', |d_ki| <= u, and Higham's
 * Lemma 3.1 gives |R - E| <= gamma_K' sum_k |x_k|.  Kahan and Neumaier
 * are the exception: K' = K + 1 stands for their own bound,
 * 2u + O(K u^2) (Higham (4.8), Neumaier 1974), which lies below
 * gamma_{K+1} while K u is small.  fplab-models(7) states the same
 * table; tests/taccerr.c counts the steps from the orders' definitions.
 */
#include <math.h>

#include <fplab/accum_error.h>

#include "accum/accum_internal.h"

/* Unit roundoff of one rounding into f in mode rnd: 2^-p in the nearest
 * modes, 2^(1-p) in the others (the result is one of the two neighbours
 * of the exact value). */
static double fmt_u(const fpl_format *f, fpl_rnd rnd)
{
	int nearest = rnd == FPL_RND_NE || rnd == FPL_RND_NA || rnd == FPL_RND_NZ;
	return ldexp(1.0, nearest ? -(f->m + 1) : -f->m);
}

double fpl_accum_unit_roundoff(const fpl_accum_model *mod)
{
	double u, v;

	if (!mod)
		return NAN;
	u = fmt_u(&mod->acc, mod->acc_rnd);
	if (!mod->prod_exact && (v = fmt_u(&mod->prod, mod->prod_rnd)) > u)
		u = v;
	if (fpl__acc_promotes(mod) && (v = fmt_u(&mod->promo, fpl__acc_promo_rnd(mod))) > u)
		u = v;
	if (mod->order == FPL_ORDER_BLOCK && (v = fmt_u(&mod->promo, mod->promo_rnd)) > u)
		u = v;	/* the block's inner rounding */
	if (mod->out_set && (v = fmt_u(&mod->out, mod->out_rnd)) > u)
		u = v;
	/* fused:F:W: the alignment moves the group's exact sum by at most
	 * (F+1) quanta 2^(E-W+1) (tz; half that in ne), each at most
	 * 2^(1-W) max|x| <= 2^(1-W) sum|x|: a perturbation of every term by a
	 * relative amount below v, i.e. one more "rounding" per group. */
	/* expsum: E is at most the largest term's leading exponent + 1 (ea+eb+1
	 * <= floor(log2|ab|) + 1 and eS+1 for normal inputs and S; subnormal
	 * ones are the underflow the bound leaves out): twice the quantum. */
	if (mod->order == FPL_ORDER_FUSED && mod->fused_w > 0) {
		v = ldexp((double)mod->block + 1,
			  (mod->fused_rnd == FPL_RND_NE ? -mod->fused_w : 1 - mod->fused_w)
				  + (mod->fused_ref == FPL_FUSED_EXPSUM));
		if (v > u)
			u = v;
	}
	return u;
}

static double cdiv(double a, double b)
{
	return ceil(a / b);
}

/* ceil(log2 n) for n >= 1. */
static double clog2(double n)
{
	double d = 0, p = 1;

	while (p < n) {
		p *= 2;
		d += 1;
	}
	return d;
}

/* K' for inner length k >= 1, products and output aside. */
static double order_k(const fpl_accum_model *m, double K)
{
	double L = (double)m->leaf, B = (double)m->block, P = m->pair_long && K > (double)m->pair_long ? (double)m->pair_long
									 : (double)m->pair_block;

	switch (m->order) {
	case FPL_ORDER_PAIRWISE:	/* leaf chain from +0, tree depth, C + T */
		return fmin(L, K) + clog2(cdiv(K, L)) + 1;
	case FPL_ORDER_BLOCKED:		/* block chain from +0, R + block per block */
		return fmin(B, K) + cdiv(K, B);
	case FPL_ORDER_FUSED:		/* one rounding per group, and W's alignment;
					 * /P: block 0's groups, then R + block per block */
		if (m->fused_promote)
			return cdiv(fmin((double)m->fused_promote, K), B) * (m->fused_w > 0 ? 2 : 1)
			       + cdiv(K, (double)m->fused_promote);
		return cdiv(K, B) * (m->fused_w > 0 ? 2 : 1);
	case FPL_ORDER_EVENODD:		/* half-block chain, even + odd, S + u per block */
		return ceil(fmin(B, K) / 2) + 1 + cdiv(K, B);
	case FPL_ORDER_PAIRS:		/* the pad is exact; pairs:B as blocked */
		return P > 0 ? fmin(P, K) + cdiv(K, P) : K;
	case FPL_ORDER_BLOCK:		/* P_j, S + P_j X_A X_B per block, the tensor
					 * scales (the scalings by powers of two, and
					 * s_A s_B, are exact but for underflow) */
		return 1 + cdiv(K, (double)fpl__acc_kblock(m))
		       + (m->a_blk.tensor_scale || m->b_blk.tensor_scale);
	case FPL_ORDER_KAHAN:
	case FPL_ORDER_NEUMAIER:	/* their own bound, see the top */
		return K + 1;
	default:			/* sequential: C or the first term, K steps */
		return K;
	}
}

/* K': the most roundings one term (or C) goes through. */
static double kprime(const fpl_accum_model *m, size_t k)
{
	double n = k ? order_k(m, (double)k) + (m->prod_exact ? 0 : 1) : 0;

	return n + (m->out_set ? 1 : 0);
}

double fpl_accum_bound(const fpl_accum_model *mod, size_t k)
{
	double u, n;

	if (!mod)
		return NAN;
	u = fpl_accum_unit_roundoff(mod);
	n = kprime(mod, k);
	if (n == 0)
		return 0;
	return n * u >= 1 ? INFINITY : n * u / (1 - n * u);
}
