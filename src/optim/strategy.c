/* SPDX-License-Identifier: MIT */
/*
 * strategy.c - how an update u reaches the weights (fplab/optim.h,
 * "strategies"): none and stochastic round w - u into `weight`;
 * fp32-master rounds M - u into the master and derives the stored weight;
 * split keeps only the stored weight and the trail, the low bits of the
 * binary32 master, recombines them for a step and splits M' again; kahan
 * carries a compensation c in `weight`.  Also the report's counts.
 *
 * Split's invariant: weight and master share sign, exponent field and
 * bias, so the master's code is the weight's code followed by
 * trail_bits more fraction bits.  Cutting the code is truncation toward
 * zero (subnormals, infinities and zeros included), and the pair
 * (weight, trail) holds every bit of the master.  A NaN master is cut
 * like any code: the stored weight is its top bits (a NaN, or an
 * infinity when all of the payload lies in the trail) and the pair still
 * recombines to the master's bits.
 *
 * Block slots (block.c): a block master or a block weight of none and
 * stochastic receives M - u, w - u or w - k*w held to odd in binary64 and
 * quantized; fp32-master's stored weight is the master quantized.
 */
#include <math.h>
#include <string.h>

#include <fplab/error.h>

#include "engine/internal.h"
#include "optim/optim_internal.h"

/* The binary32 code of x, a value of binary32 (NaN payloads kept). */
static uint32_t f32_code(double x)
{
	uint64_t u = fpl__bits(x);

	if (fpl__isnan(x))
		return (uint32_t)((u >> 63) << 31) | 0x7f800000u
		       | (uint32_t)((u >> 29) & 0x7fffffu);
	{
		float f = (float)x;
		uint32_t c;
		memcpy(&c, &f, sizeof c);
		return c;
	}
}

static double f32_value(uint32_t c)
{
	if ((c & 0x7f800000u) == 0x7f800000u && (c & 0x7fffffu)) {
		uint64_t u = ((uint64_t)(c >> 31) << 63) | 0x7ff0000000000000ull
			     | ((uint64_t)(c & 0x7fffffu) << 29);
		return fpl__from_bits(u);
	}
	{
		float f;
		memcpy(&f, &c, sizeof f);
		return (double)f;
	}
}

void opt__split(const fpl_optim *o, double m, double *w, void *trail, size_t i)
{
	uint32_t c = f32_code(m), mask = (uint32_t)((1ull << o->trail_bits) - 1);
	uint32_t t = c & mask;

	*w = f32_value(c & ~mask);
	switch (o->trail_bytes) {
	case 1: ((uint8_t *)trail)[i] = (uint8_t)t; break;
	case 2: ((uint16_t *)trail)[i] = (uint16_t)t; break;
	default: ((uint32_t *)trail)[i] = t; break;
	}
}

double opt__recombine(const fpl_optim *o, double w, const void *trail, size_t i)
{
	uint32_t t;

	switch (o->trail_bytes) {
	case 1: t = ((const uint8_t *)trail)[i]; break;
	case 2: t = ((const uint16_t *)trail)[i]; break;
	default: t = ((const uint32_t *)trail)[i]; break;
	}
	return f32_value(f32_code(w) | t);
}

double *opt__begin(fpl_optim *o, opt_tensor *T)
{
	double *w0 = o->scr[SCR_W0], *w1 = o->scr[SCR_W1], *wc;
	size_t i, n = T->n;

	switch (o->cfg.policy.master) {
	case FPL_MASTER_FP32:
		wc = T->m;
		memcpy(w1, T->w, n * sizeof *w1);
		break;
	case FPL_MASTER_SPLIT:
		wc = o->scr[SCR_M];
		for (i = 0; i < n; i++)
			wc[i] = opt__recombine(o, T->w[i], T->trail, i);
		memcpy(w1, T->w, n * sizeof *w1);
		break;
	case FPL_MASTER_KAHAN:
		wc = T->w;
		memcpy(w1, T->m, n * sizeof *w1);
		break;
	default:
		wc = T->w;
		break;
	}
	memcpy(w0, wc, n * sizeof *w0);
	memset(o->nz, 0, n);
	return wc;
}

/* Kahan: y = yv (already -u - c, rounded), s = w + y, c = (s - w) - y,
 * w = s; yv lives in scr[SCR_A]. */
static int kahan_tail(fpl_optim *o, opt_tensor *T)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	double *y = o->scr[SCR_A], *s = o->scr[SCR_B], *t = o->scr[SCR_C];
	size_t n = T->n;
	int r;

	if ((r = opt__add(&p->weight, p->weight_rnd, &T->st, s, T->w, y, n))
	    || (r = opt__sub(&p->weight, p->weight_rnd, &T->st, t, s, T->w, n))
	    || (r = opt__sub(&p->weight, p->weight_rnd, &T->st, T->m, t, y, n)))
		return r;
	memcpy(T->w, s, n * sizeof *s);
	return 0;
}

/*
 * Is the weight that carries the updates a block slot (an fp32-master's
 * block master, or the block weight of none and stochastic)?  Then its
 * slot, format and mode.  The update's exact result is then held to odd
 * in binary64 and quantized (block.c), one rounding's draws.
 */
static int block_carrier(const fpl_opt_policy *p, int *slot, const fpl_format **f,
			 fpl_rnd *rnd)
{
	if (p->master == FPL_MASTER_FP32 && p->master_is_block) {
		*slot = FPL_OPT_SLOT_MASTER;
		*f = &p->master_fmt;
		*rnd = FPL_RND_NE;
		return 1;
	}
	if ((p->master == FPL_MASTER_NONE || p->master == FPL_MASTER_STOCHASTIC)
	    && p->weight_is_block) {
		*slot = FPL_OPT_SLOT_WEIGHT;
		*f = &p->weight;
		*rnd = p->master == FPL_MASTER_STOCHASTIC ? p->weight_sr : p->weight_rnd;
		return 1;
	}
	return 0;
}

int opt__apply(fpl_optim *o, opt_tensor *T, double *wc, const double *u)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	const fpl_format *bf;
	size_t i, n = T->n;
	fpl_rnd br;
	int r, bs;

	if (block_carrier(p, &bs, &bf, &br)) {
		if ((r = opt__odd_sub(T, wc, wc, u)))
			return r;
		return opt__store(o, T, bs, bf, br, wc, wc);
	}
	switch (p->master) {
	case FPL_MASTER_FP32:
	case FPL_MASTER_SPLIT:
		return opt__sub(&p->master_fmt, FPL_RND_NE, &T->st, wc, wc, u, n);
	case FPL_MASTER_KAHAN: {
		double *nu = o->scr[SCR_C];
		for (i = 0; i < n; i++)
			nu[i] = fpl__neg_num(u[i]);
		/* y = -u - c */
		if ((r = opt__sub(&p->weight, p->weight_rnd, &T->st, o->scr[SCR_A], nu, T->m, n)))
			return r;
		return kahan_tail(o, T);
	}
	case FPL_MASTER_STOCHASTIC:
		return opt__sub(&p->weight, p->weight_sr, &T->st, wc, wc, u, n);
	default:
		return opt__sub(&p->weight, p->weight_rnd, &T->st, wc, wc, u, n);
	}
}

/* w - k*w with one rounding: fma(-k, w, w); kahan: y = fma(-k, w, -c). */
int opt__apply_decay(fpl_optim *o, opt_tensor *T, double *wc, double k)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	const double *nk = opt__bcast(o->scr[SCR_K], -k, T->n);
	const fpl_format *bf;
	size_t i, n = T->n;
	fpl_rnd br;
	int r, bs;

	if (block_carrier(p, &bs, &bf, &br)) {
		if ((r = opt__odd_fma(T, wc, nk, wc, wc)))
			return r;
		return opt__store(o, T, bs, bf, br, wc, wc);
	}
	switch (p->master) {
	case FPL_MASTER_FP32:
	case FPL_MASTER_SPLIT:
		return opt__fma(&p->master_fmt, FPL_RND_NE, &T->st, wc, nk, wc, wc, n);
	case FPL_MASTER_KAHAN: {
		double *nc = o->scr[SCR_C];
		for (i = 0; i < n; i++)
			nc[i] = fpl__neg_num(T->m[i]);
		if ((r = opt__fma(&p->weight, p->weight_rnd, &T->st, o->scr[SCR_A], nk, T->w, nc, n)))
			return r;
		return kahan_tail(o, T);
	}
	case FPL_MASTER_STOCHASTIC:
		return opt__fma(&p->weight, p->weight_sr, &T->st, wc, nk, wc, wc, n);
	default:
		return opt__fma(&p->weight, p->weight_rnd, &T->st, wc, nk, wc, wc, n);
	}
}

static int same(double a, double b)
{
	return fpl__bits(a) == fpl__bits(b);
}

int opt__derive(fpl_optim *o, opt_tensor *T)
{
	const fpl_opt_policy *p = &o->cfg.policy;

	return opt__store(o, T, FPL_OPT_SLOT_WEIGHT, &p->weight, p->weight_rnd, T->w, T->m);
}

int opt__end(fpl_optim *o, opt_tensor *T, const double *wc, fpl_opt_report *rep)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	const double *w0 = o->scr[SCR_W0], *w1 = o->scr[SCR_W1];
	const unsigned char *nz = o->nz;
	uint64_t nzc = 0, van = 0, stale = 0;
	size_t i, n = T->n;
	int r;

	if (p->master == FPL_MASTER_FP32) {
		if ((r = opt__derive(o, T)))
			return r;
	} else if (p->master == FPL_MASTER_SPLIT) {
		for (i = 0; i < n; i++)
			opt__split(o, wc[i], &T->w[i], T->trail, i);
	}
	for (i = 0; i < n; i++) {
		int moved = !same(w0[i], wc[i]);

		if (p->master == FPL_MASTER_KAHAN)
			moved |= !same(w1[i], T->m[i]);
		nzc += nz[i];
		van += nz[i] && !moved;
		if (p->master == FPL_MASTER_FP32 || p->master == FPL_MASTER_SPLIT)
			stale += moved && same(w1[i], T->w[i]);
	}
	if (rep) {
		rep->params += n;
		rep->nonzero += nzc;
		rep->vanished += van;
		rep->stale += stale;
	}
	return 0;
}
