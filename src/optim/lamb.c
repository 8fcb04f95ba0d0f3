/* SPDX-License-Identifier: MIT */
/*
 * lamb.c - LAMB (You et al. 2020, Algorithm 2 with bias correction and
 * phi = identity; fplab/optim.h, "lamb"):
 *   m, v as Adam (adam.c), wd not added to g
 *   mh = m / bc1, vh = v / bc2           (arith)
 *   r = mh / (sqrt(vh) + eps)            sqrt, + eps, / (arith)
 *   q = r + wd*w                         wd*w, r + that (arith), when wd != 0
 *   trust = ||w|| / ||q||, or 1          norms: s = fma(x_i, x_i, s) from
 *                                        +0 in index order, then sqrt
 *   u = (lr*trust) * q                   lr*trust one rounding, then the product
 * The norms are scalar operations on the tensor's stream: element i of a
 * norm uses draw counter + i, then the counter advances by n, and each
 * sqrt, the division and lr*trust take one draw each.
 */
#include <math.h>

#include <fplab/ops.h>

#include "engine/internal.h"
#include "optim/optim_internal.h"

/* sqrt(sum x_i^2) in f: one fma per term, then one sqrt. */
static double norm(const fpl_format *f, fpl_rnd rnd, fpl_state *st, const double *x, size_t n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned fl = 0;
		s = fpl__fma_ix(f, x[i], x[i], s, rnd, st, st->counter + i, &fl);
		fpl__commit(st, fl);
	}
	st->counter += n;
	return fpl_sqrt(f, s, rnd, st);
}

int opt__lamb(fpl_optim *o, opt_tensor *T, const double *wc)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *A = &p->arith;
	fpl_rnd ar = p->arith_rnd;
	double *a = o->scr[SCR_A], *b = o->scr[SCR_B], *k = o->scr[SCR_K];
	double *q = o->scr[SCR_C], *u = o->scr[SCR_U];
	double tt = (double)o->t;
	double bc1 = 1 - pow(h->beta1, tt), bc2 = 1 - pow(h->beta2, tt);
	double wn, qn, trust = 1, lt;
	size_t n = T->n;
	int r;

	if ((r = opt__decay_grad(o, T, wc, 0))
	    || (r = opt__moments(o, T))
	    || (r = opt__div(A, ar, &T->st, a, T->s1, opt__bcast(k, bc1, n), n))
	    || (r = opt__div(A, ar, &T->st, b, T->s2, opt__bcast(k, bc2, n), n))
	    || (r = opt__sqrt(A, ar, &T->st, b, b, n))
	    || (r = opt__add(A, ar, &T->st, b, b, opt__bcast(k, h->eps, n), n))
	    || (r = opt__div(A, ar, &T->st, q, a, b, n)))
		return r;
	if (h->weight_decay != 0
	    && ((r = opt__mul(A, ar, &T->st, a, opt__bcast(k, h->weight_decay, n), wc, n))
		|| (r = opt__add(A, ar, &T->st, q, q, a, n))))
		return r;
	wn = norm(A, ar, &T->st, wc, n);
	qn = norm(A, ar, &T->st, q, n);
	if (wn != 0 && qn != 0)
		trust = fpl_div(A, wn, qn, ar, &T->st);
	lt = fpl_mul(A, h->lr, trust, ar, &T->st);
	if ((r = opt__mul(A, ar, &T->st, u, opt__bcast(k, lt, n), q, n)))
		return r;
	opt__mark(o, lt, q, n);
	return 0;
}
