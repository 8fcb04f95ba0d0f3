/* SPDX-License-Identifier: MIT */
/*
 * sgd.c - torch.optim.SGD's update (fplab/optim.h, "sgd"), and the two
 * pieces every optimizer shares: the L2 term d = g + wd*w and the mark of
 * the elements whose update is nonzero.
 *
 * Each line below is one array operation, one rounding per element into
 * the format named, in the header's order:
 *   d = g + wd*w            wd*w, then g + that (arith), when wd != 0
 *   b = d (t = 1)           rounded into state
 *   b = mu*b + (1-damp)*d   mu*b, (1-damp)*d, their sum (arith), into state
 *   d = d + mu*b            (nesterov) mu*b, then d + that (arith)
 *   u = lr*d                (arith)
 */
#include <string.h>

#include "optim/optim_internal.h"

void opt__mark(fpl_optim *o, double c, const double *x, size_t n)
{
	size_t i;

	if (c == 0)
		return;
	for (i = 0; i < n; i++)
		o->nz[i] |= x[i] != 0;
}

int opt__decay_grad(fpl_optim *o, opt_tensor *T, const double *wc, double wd)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	double *d = o->scr[SCR_D], *a = o->scr[SCR_A];
	size_t n = T->n;
	int r;

	if (wd == 0) {
		memcpy(d, o->scr[SCR_G], n * sizeof *d);
		return 0;
	}
	if ((r = opt__mul(&p->arith, p->arith_rnd, &T->st, a, opt__bcast(o->scr[SCR_K], wd, n), wc, n)))
		return r;
	return opt__add(&p->arith, p->arith_rnd, &T->st, d, o->scr[SCR_G], a, n);
}

int opt__sgd(fpl_optim *o, opt_tensor *T, const double *wc)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *A = &p->arith;
	fpl_rnd ar = p->arith_rnd;
	double *d = o->scr[SCR_D], *a = o->scr[SCR_A], *b = o->scr[SCR_B];
	double *k = o->scr[SCR_K], *u = o->scr[SCR_U];
	size_t n = T->n;
	int r;

	if ((r = opt__decay_grad(o, T, wc, h->weight_decay)))
		return r;
	if (h->momentum != 0) {
		double *mb = T->s1;

		if (o->t == 1) {
			r = opt__store(o, T, FPL_OPT_SLOT_STATE, &p->state, p->state_rnd, mb, d);
		} else if (!(r = opt__mul(A, ar, &T->st, a, opt__bcast(k, h->momentum, n), mb, n))
			   && !(r = opt__mul(A, ar, &T->st, b, opt__bcast(k, 1 - h->dampening, n), d, n))
			   && !(r = opt__add(A, ar, &T->st, a, a, b, n))) {
			r = opt__store(o, T, FPL_OPT_SLOT_STATE, &p->state, p->state_rnd, mb, a);
		}
		if (r)
			return r;
		if (h->nesterov) {
			if ((r = opt__mul(A, ar, &T->st, a, opt__bcast(k, h->momentum, n), mb, n))
			    || (r = opt__add(A, ar, &T->st, d, d, a, n)))
				return r;
		} else {
			memcpy(d, mb, n * sizeof *d);
		}
	}
	if ((r = opt__mul(A, ar, &T->st, u, opt__bcast(k, h->lr, n), d, n)))
		return r;
	opt__mark(o, h->lr, d, n);
	return 0;
}
