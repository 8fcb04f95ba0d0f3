/* SPDX-License-Identifier: MIT */
/*
 * adam.c - torch.optim.Adam's update (fplab/optim.h, "adam"; AdamW is
 * its decoupled decay, applied by optim.c, then this with wd = 0):
 *   d = g + wd*w                 (sgd.c)
 *   m = m + (1-b1)*(d - m)       d - m, (1-b1)*that, m + that (arith), into state
 *   v = b2*v + (1-b2)*d*d        b2*v, (1-b2)*d, that*d, the sum (arith), into state
 *   den = sqrt(v)/bc2s + eps     sqrt, /bc2s, +eps (arith)
 *   u = (lr/bc1) * (m/den)       m/den, then times the constant (arith)
 * bc1 = 1 - b1^t and bc2s = sqrt(1 - b2^t) in binary64, as PyTorch's
 * Python floats.  The m and v update is shared with LAMB (opt__moments).
 */
#include <math.h>

#include "optim/optim_internal.h"

int opt__moments(fpl_optim *o, opt_tensor *T)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *A = &p->arith, *S = &p->state;
	fpl_rnd ar = p->arith_rnd, sr = p->state_rnd;
	double *d = o->scr[SCR_D], *a = o->scr[SCR_A], *b = o->scr[SCR_B], *k = o->scr[SCR_K];
	double *m = T->s1, *v = T->s2;
	size_t n = T->n;
	int r;

	if ((r = opt__sub(A, ar, &T->st, a, d, m, n))
	    || (r = opt__mul(A, ar, &T->st, a, opt__bcast(k, 1 - h->beta1, n), a, n))
	    || (r = opt__add(A, ar, &T->st, a, m, a, n))
	    || (r = opt__store(o, T, FPL_OPT_SLOT_STATE, S, sr, m, a))
	    || (r = opt__mul(A, ar, &T->st, a, opt__bcast(k, h->beta2, n), v, n))
	    || (r = opt__mul(A, ar, &T->st, b, opt__bcast(k, 1 - h->beta2, n), d, n))
	    || (r = opt__mul(A, ar, &T->st, b, b, d, n))
	    || (r = opt__add(A, ar, &T->st, a, a, b, n)))
		return r;
	return opt__store(o, T, FPL_OPT_SLOT_STATE, S, sr, v, a);
}

int opt__adam(fpl_optim *o, opt_tensor *T, const double *wc, double wd)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *A = &p->arith;
	fpl_rnd ar = p->arith_rnd;
	double *a = o->scr[SCR_A], *k = o->scr[SCR_K], *u = o->scr[SCR_U];
	double tt = (double)o->t;
	double bc1 = 1 - pow(h->beta1, tt), bc2s = sqrt(1 - pow(h->beta2, tt));
	double step = h->lr / bc1;
	size_t n = T->n;
	int r;

	if ((r = opt__decay_grad(o, T, wc, wd))
	    || (r = opt__moments(o, T))
	    || (r = opt__sqrt(A, ar, &T->st, a, T->s2, n))
	    || (r = opt__div(A, ar, &T->st, a, a, opt__bcast(k, bc2s, n), n))
	    || (r = opt__add(A, ar, &T->st, a, a, opt__bcast(k, h->eps, n), n))
	    || (r = opt__div(A, ar, &T->st, a, T->s1, a, n))
	    || (r = opt__mul(A, ar, &T->st, u, opt__bcast(k, step, n), a, n)))
		return r;
	opt__mark(o, step, a, n);
	return 0;
}
