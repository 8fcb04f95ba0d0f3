/* SPDX-License-Identifier: MIT */
/*
 * adagrad.c - torch.optim.Adagrad's update (fplab/optim.h, "adagrad"):
 *   clr = lr / (1 + (t-1)*lr_decay)       binary64 constant
 *   d = g + wd*w                          (sgd.c)
 *   s = s + d*d                           d*d, s + that (arith), into state
 *   den = sqrt(s) + eps                   sqrt, + eps (arith)
 *   u = clr * (d / den)                   d/den, clr*that (arith)
 * PyTorch's addcdiv_(grad, std, value=-clr) is the last two lines.
 */
#include "optim/optim_internal.h"

int opt__adagrad(fpl_optim *o, opt_tensor *T, const double *wc)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *A = &p->arith;
	fpl_rnd ar = p->arith_rnd;
	double *d = o->scr[SCR_D], *a = o->scr[SCR_A], *k = o->scr[SCR_K];
	double *u = o->scr[SCR_U], *s = T->s1;
	double clr = h->lr / (1 + (double)(o->t - 1) * h->lr_decay);
	size_t n = T->n;
	int r;

	if ((r = opt__decay_grad(o, T, wc, h->weight_decay))
	    || (r = opt__mul(A, ar, &T->st, a, d, d, n))
	    || (r = opt__add(A, ar, &T->st, a, s, a, n))
	    || (r = opt__store(o, T, FPL_OPT_SLOT_STATE, &p->state, p->state_rnd, s, a))
	    || (r = opt__sqrt(A, ar, &T->st, a, s, n))
	    || (r = opt__add(A, ar, &T->st, a, a, opt__bcast(k, h->eps, n), n))
	    || (r = opt__div(A, ar, &T->st, a, d, a, n))
	    || (r = opt__mul(A, ar, &T->st, u, opt__bcast(k, clr, n), a, n)))
		return r;
	opt__mark(o, clr, a, n);
	return 0;
}
