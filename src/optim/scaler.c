/* SPDX-License-Identifier: MIT */
/*
 * scaler.c - loss scaling of a step (fplab/optim.h, "scaling"): the
 * choice of S per tensor (none, constant, GradScaler's dynamic scale,
 * APS's 2^k), the backward pass's cast of G*S into `grad`, the inf/NaN
 * check, the unscale into `unscale`, and GradScaler's update.
 *
 * The cast rounds the exact product G*S once: for S = 1 it is a plain
 * rounding of G, for another binary64 S the engine's multiplication in
 * `grad` with DAZ off (G is a true gradient, not a value of grad), and
 * for APS fpl_ar_round_cast itself (G*2^k rounded once with no binary64
 * intermediate; zeros, infinities and NaNs unscaled), with the tensor's
 * draws counter .. counter+n-1, the counter then advanced by n.  APS's k
 * is fpl_ar_aps_shift's with comm = grad and one node, clamped to
 * [-1022, 1023] so that S = 2^k is a normal binary64 for the unscale
 * (the clamp only bites for |G| beyond 2^900 or below 2^-900).
 * A block grad (not with APS) quantizes G, or G*S held in binary64
 * rounded to odd (block.c), with the same draws.
 */
#include <math.h>
#include <string.h>

#include <fplab/allreduce.h>
#include <fplab/error.h>

#include "optim/optim_internal.h"

static int aps_k(const fpl_optim *o, const double *G, size_t n)
{
	fpl_ar_config ac;
	double m = 0;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		double a = fabs(G[i]);
		if (isnan(a)) {
			m = a;
			break;
		}
		if (a > m)
			m = a;
	}
	fpl_ar_config_init(&ac);
	ac.comm = o->cfg.policy.grad;
	ac.acc = ac.comm;
	ac.comm_rnd = ac.acc_rnd = o->cfg.policy.grad_rnd;
	ac.nodes = 1;
	ac.scaling = FPL_AR_SCALE_APS;
	k = fpl_ar_aps_shift(&ac, m);
	return k < -1022 ? -1022 : k > 1023 ? 1023 : k;
}

static int cast_one(fpl_optim *o, opt_tensor *T, const double *G)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	double *k = o->scr[SCR_K];

	if (o->cfg.scaler.kind == FPL_OPT_SCALE_APS) {
		fpl_ar_config ac;
		int sh = aps_k(o, G, T->n);

		T->scale = ldexp(1, sh);
		fpl_ar_config_init(&ac);
		ac.comm = ac.acc = p->grad;
		ac.comm_rnd = ac.acc_rnd = p->grad_rnd;
		ac.scaling = FPL_AR_SCALE_APS;
		fpl_ar_round_cast(T->gs, G, T->n, T->st.counter, sh, &ac, &T->st);
		T->st.counter += T->n;
		return 0;
	}
	if (p->grad_is_block) {	/* G*S held to odd, then quantized (block.c) */
		int r;

		if (T->scale != 1
		    && (r = opt__odd_mul(T, T->gs, G, opt__bcast(k, T->scale, T->n))))
			return r;
		return opt__store(o, T, FPL_OPT_SLOT_GRAD, &p->grad, p->grad_rnd, T->gs,
				  T->scale != 1 ? T->gs : G);
	}
	if (T->scale == 1)
		return opt__round(&p->grad, p->grad_rnd, &T->st, T->gs, G, T->n);
	return opt__mul(&o->gcast, p->grad_rnd, &T->st, T->gs, G,
			opt__bcast(k, T->scale, T->n), T->n);
}

int opt__cast(fpl_optim *o, const double *const *G, int prescaled, uint64_t *nonfinite)
{
	double S;
	size_t j, i;
	uint64_t bad = 0;
	int r;

	for (j = 0; j < o->nt; j++)
		if (o->T[j].n && (!G || !G[j]))
			return FPL_EINVAL;
	switch (o->cfg.scaler.kind) {
	case FPL_OPT_SCALE_CONST: S = o->cfg.scaler.scale; break;
	case FPL_OPT_SCALE_DYNAMIC: S = o->scale; break;
	default: S = 1; break;
	}
	for (j = 0; j < o->nt; j++) {
		opt_tensor *T = &o->T[j];

		T->scale = S;
		if (!T->n)
			continue;
		if (prescaled) {
			memcpy(T->gs, G[j], T->n * sizeof *T->gs);
		} else if ((r = cast_one(o, T, G[j])) != 0) {
			return r;
		}
		for (i = 0; i < T->n; i++)
			bad += (uint64_t)!isfinite(T->gs[i]);
	}
	*nonfinite = bad;
	return 0;
}

int opt__unscale(fpl_optim *o, opt_tensor *T)
{
	const fpl_opt_policy *p = &o->cfg.policy;

	/* gs / 1 is gs: without DAZ to apply to it, a plain rounding */
	if (T->scale == 1 && !p->unscale.daz)
		return opt__round(&p->unscale, p->unscale_rnd, &T->st, o->scr[SCR_G], T->gs, T->n);
	return opt__div(&p->unscale, p->unscale_rnd, &T->st, o->scr[SCR_G], T->gs,
			opt__bcast(o->scr[SCR_K], T->scale, T->n), T->n);
}

/* GradScaler.update: backoff on a skip (and the growth tracker reset),
 * growth after `interval` consecutive unskipped steps. */
void opt__scale_update(fpl_optim *o, int skipped)
{
	const fpl_opt_scaler *s = &o->cfg.scaler;

	if (s->kind != FPL_OPT_SCALE_DYNAMIC)
		return;
	if (skipped) {
		o->scale *= s->backoff;
		o->tracker = 0;
		return;
	}
	if (++o->tracker >= s->interval) {
		o->scale *= s->growth;
		o->tracker = 0;
	}
}
