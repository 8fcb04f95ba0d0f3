/* SPDX-License-Identifier: MIT */
/*
 * optim.c - the fpl_optim object (fplab/optim.h): creation with its
 * validation and every buffer a step needs (no allocation per step),
 * the step itself (cast, check, unscale, optimizer, strategy, counts),
 * and the accessors.
 *
 * A step's order, which fixes the draws of every tensor's stream: all
 * tensors' casts first (dynamic scaling must see every gradient before
 * it decides to skip), then per tensor the unscale, the optimizer's
 * roundings and the strategy's.  Flags of the cast and the unscale go to
 * the report's grad_count, every other rounding's to update_count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "optim/optim_internal.h"

void fpl_optim_free(fpl_optim *o)
{
	size_t j;
	int i;

	if (!o)
		return;
	for (j = 0; j < o->nt; j++) {
		opt_tensor *T = &o->T[j];
		free(T->w);
		free(T->m);
		free(T->trail);
		free(T->s1);
		free(T->s2);
	}
	free(o->T);
	for (i = 0; i < SCR_COUNT; i++)
		free(o->scr[i]);
	free(o->nz);
	free(o->gsbuf);
	free(o);
}

static void *alloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* Buffers of one tensor. */
static int tensor_alloc(fpl_optim *o, opt_tensor *T)
{
	fpl_opt_master ms = o->cfg.policy.master;
	int ns = opt__nstate(&o->cfg.hyper);
	size_t n = T->n;

	T->w = alloc(n, sizeof(double));
	if (ms == FPL_MASTER_FP32 || ms == FPL_MASTER_KAHAN)
		T->m = alloc(n, sizeof(double));
	if (ms == FPL_MASTER_SPLIT)
		T->trail = alloc(n, (size_t)o->trail_bytes);
	if (ns >= 1)
		T->s1 = alloc(n, sizeof(double));
	if (ns >= 2)
		T->s2 = alloc(n, sizeof(double));
	if (!T->w || ((ms == FPL_MASTER_FP32 || ms == FPL_MASTER_KAHAN) && !T->m)
	    || (ms == FPL_MASTER_SPLIT && !T->trail) || (ns >= 1 && !T->s1) || (ns >= 2 && !T->s2))
		return FPL_ENOMEM;
	return 0;
}

/* The initial weights and state of one tensor (its stream's first draws). */
static int tensor_init(fpl_optim *o, opt_tensor *T, const double *w0)
{
	const fpl_opt_policy *p = &o->cfg.policy;
	double *k = o->scr[SCR_K];
	size_t i, n = T->n;
	int r = 0;

	switch (p->master) {
	case FPL_MASTER_FP32:
		if ((r = opt__store(o, T, FPL_OPT_SLOT_MASTER, &p->master_fmt, FPL_RND_NE, T->m, w0)))
			return r;
		r = opt__derive(o, T);
		break;
	case FPL_MASTER_SPLIT: {
		double *m = o->scr[SCR_M];
		if ((r = opt__round(&p->master_fmt, FPL_RND_NE, &T->st, m, w0, n)))
			return r;
		for (i = 0; i < n; i++)
			opt__split(o, m[i], &T->w[i], T->trail, i);
		break;
	}
	default:
		r = opt__store(o, T, FPL_OPT_SLOT_WEIGHT, &p->weight, p->weight_rnd, T->w, w0);
		break;
	}
	if (r)
		return r;
	if (o->cfg.hyper.algo == FPL_OPT_ADAGRAD && o->cfg.hyper.initial_accumulator_value != 0)
		r = opt__store(o, T, FPL_OPT_SLOT_STATE, &p->state, p->state_rnd, T->s1,
			       opt__bcast(k, o->cfg.hyper.initial_accumulator_value, n));
	return r;
}

/* Tensor j's dims: shapes[j], else rows of cols[j], else one row; a 1-D
 * shape is the row [1, n]. */
static void tensor_dims(const fpl_opt_config *c, size_t j, size_t n, opt_tensor *T)
{
	const fpl_opt_shape *s = c->shapes ? &c->shapes[j] : NULL;
	size_t cols = c->cols && n ? c->cols[j] : n;

	if (s && s->ndims >= 2) {
		T->nd = s->ndims;
		memcpy(T->dims, s->dims, (size_t)s->ndims * sizeof *T->dims);
		return;
	}
	if (s)
		cols = n;
	T->nd = 2;
	T->dims[0] = cols ? n / cols : 0;
	T->dims[1] = cols;
}

static int create(fpl_optim *o, const size_t *sizes, const double *const *w0,
		  const fpl_state *st)
{
	size_t j, total = 0;
	int i, r;

	o->T = alloc(o->nt, sizeof *o->T);
	if (!o->T)
		return FPL_ENOMEM;
	for (j = 0; j < o->nt; j++) {
		o->T[j].n = sizes[j];
		tensor_dims(&o->cfg, j, sizes[j], &o->T[j]);
		if (sizes[j] > o->nmax)
			o->nmax = sizes[j];
		if (total + sizes[j] < total)
			return FPL_ENOMEM;
		total += sizes[j];
	}
	for (i = 0; i < SCR_COUNT; i++)
		if (!(o->scr[i] = alloc(o->nmax, sizeof(double))))
			return FPL_ENOMEM;
	o->nz = alloc(o->nmax, 1);
	o->gsbuf = alloc(total, sizeof(double));
	if (!o->nz || !o->gsbuf)
		return FPL_ENOMEM;
	total = 0;
	for (j = 0; j < o->nt; j++) {
		opt_tensor *T = &o->T[j];

		fpl_state_fork(st, &T->st, (uint64_t)j);
		T->st.threads = o->cfg.threads < 1 ? 1 : o->cfg.threads;
		T->gs = o->gsbuf + total;
		total += T->n;
		if ((r = tensor_alloc(o, T)) || (r = tensor_init(o, T, w0[j])))
			return r;
	}
	return 0;
}

/* ndims in 1..FPL_BLOCK_MAX_DIMS, the product of the dims n. */
static int shape_ok(const fpl_opt_shape *s, size_t n)
{
	size_t p = 1;
	int k;

	if (s->ndims < 1 || s->ndims > FPL_BLOCK_MAX_DIMS)
		return 0;
	for (k = 0; k < s->ndims; k++) {
		if (s->dims[k] && p > SIZE_MAX / s->dims[k])
			return 0;
		p *= s->dims[k];
	}
	return p == n;
}

int fpl_optim_create(fpl_optim **out, const fpl_opt_config *cfg, size_t ntensors,
		     const size_t *sizes, const double *const *w0, const fpl_state *st)
{
	fpl_optim *o;
	size_t j;
	int r;

	if (!out)
		return FPL_EINVAL;
	*out = NULL;
	if (!cfg || !st || (ntensors && (!sizes || !w0)) || st->sr_bits < 1 || st->sr_bits > 32)
		return FPL_EINVAL;
	for (j = 0; j < ntensors; j++)
		if ((sizes[j] && !w0[j])
		    || (cfg->cols && sizes[j] && (!cfg->cols[j] || sizes[j] % cfg->cols[j]))
		    || (cfg->shapes && !shape_ok(&cfg->shapes[j], sizes[j])))
			return FPL_EINVAL;
	if ((r = opt__validate(cfg)))
		return r;
	o = calloc(1, sizeof *o);
	if (!o)
		return FPL_ENOMEM;
	o->cfg = *cfg;
	o->nt = ntensors;
	o->gcast = cfg->policy.grad;
	o->gcast.daz = 0;
	o->scale = cfg->scaler.kind == FPL_OPT_SCALE_CONST || cfg->scaler.kind == FPL_OPT_SCALE_DYNAMIC
		   ? cfg->scaler.scale : 1;
	if (cfg->policy.master == FPL_MASTER_SPLIT) {
		o->trail_bits = cfg->policy.master_fmt.m - cfg->policy.weight.m;
		o->trail_bytes = o->trail_bits <= 8 ? 1 : o->trail_bits <= 16 ? 2 : 4;
	}
	if ((r = create(o, sizes, w0, st))) {
		fpl_optim_free(o);
		return r;
	}
	o->cfg.cols = NULL;	/* read by create only: T[j].dims hold them */
	o->cfg.shapes = NULL;
	*out = o;
	return 0;
}

static void counts(const fpl_optim *o, uint64_t c[FPL_NFLAGS])
{
	size_t j;
	int i;

	memset(c, 0, FPL_NFLAGS * sizeof *c);
	for (j = 0; j < o->nt; j++)
		for (i = 0; i < FPL_NFLAGS; i++)
			c[i] += o->T[j].st.count[i];
}

static void delta(uint64_t *acc, const uint64_t *after, const uint64_t *before)
{
	int i;

	for (i = 0; i < FPL_NFLAGS; i++)
		acc[i] += after[i] - before[i];
}

/* The optimizer and the strategy on one tensor, g in scr[SCR_G]. */
static int update(fpl_optim *o, opt_tensor *T, fpl_opt_report *rep)
{
	const fpl_opt_hyper *h = &o->cfg.hyper;
	double *wc = opt__begin(o, T);
	int r;

	switch (h->algo) {
	case FPL_OPT_SGD: r = opt__sgd(o, T, wc); break;
	case FPL_OPT_ADAGRAD: r = opt__adagrad(o, T, wc); break;
	case FPL_OPT_ADAM: r = opt__adam(o, T, wc, h->weight_decay); break;
	case FPL_OPT_ADAMW: {
		double k = h->lr * h->weight_decay;
		if (k != 0) {
			if ((r = opt__apply_decay(o, T, wc, k)))
				return r;
			opt__mark(o, k, o->scr[SCR_W0], T->n);	/* k*w, w at the start */
		}
		r = opt__adam(o, T, wc, 0);
		break;
	}
	default: r = opt__lamb(o, T, wc); break;
	}
	if (r || (r = opt__apply(o, T, wc, o->scr[SCR_U])))
		return r;
	return opt__end(o, T, wc, rep);
}

static int step(fpl_optim *o, const double *const *G, int prescaled, fpl_opt_report *rep)
{
	fpl_opt_report R;
	uint64_t c0[FPL_NFLAGS], c1[FPL_NFLAGS], c2[FPL_NFLAGS], nonfinite = 0;
	size_t j;
	int r, skip;

	if (!o)
		return FPL_EINVAL;
	if (prescaled && o->cfg.scaler.kind == FPL_OPT_SCALE_APS)
		return FPL_EINVAL;
	memset(&R, 0, sizeof R);
	memset(o->bstat, 0, sizeof o->bstat);
	counts(o, c0);
	if ((r = opt__cast(o, G, prescaled, &nonfinite)))
		return r;
	counts(o, c1);
	delta(R.grad_count, c1, c0);
	R.scale = o->nt ? o->T[0].scale : fpl_optim_scale(o);
	R.nonfinite = nonfinite;
	skip = o->cfg.scaler.kind == FPL_OPT_SCALE_DYNAMIC && nonfinite > 0;
	if (!skip) {
		o->t++;
		for (j = 0; j < o->nt; j++) {
			opt_tensor *T = &o->T[j];
			uint64_t b[FPL_NFLAGS], a[FPL_NFLAGS];

			if (!T->n)
				continue;
			memcpy(b, T->st.count, sizeof b);
			if ((r = opt__unscale(o, T)))
				return r;
			memcpy(a, T->st.count, sizeof a);
			delta(R.grad_count, a, b);
			if ((r = update(o, T, &R)))
				return r;
		}
	}
	counts(o, c2);
	for (j = 0; j < FPL_NFLAGS; j++)	/* every other rounding */
		R.update_count[j] = c2[j] - c0[j] - R.grad_count[j];
	opt__scale_update(o, skip);
	R.skipped = skip;
	memcpy(R.block, o->bstat, sizeof R.block);
	R.t = o->t;
	R.next_scale = fpl_optim_scale(o);
	if (rep)
		*rep = R;
	return 0;
}

int fpl_optim_step(fpl_optim *o, const double *const *G, fpl_opt_report *rep)
{
	return step(o, G, 0, rep);
}

int fpl_optim_step_scaled(fpl_optim *o, const double *const *gs, fpl_opt_report *rep)
{
	return step(o, gs, 1, rep);
}

double fpl_optim_scale(const fpl_optim *o)
{
	if (!o)
		return 1;
	return o->cfg.scaler.kind == FPL_OPT_SCALE_CONST || o->cfg.scaler.kind == FPL_OPT_SCALE_DYNAMIC
	       ? o->scale : 1;
}

const double *fpl_optim_weights(const fpl_optim *o, size_t j)
{
	if (!o || j >= o->nt)
		return NULL;
	return o->T[j].w;
}

int fpl_optim_master(const fpl_optim *o, size_t j, double *out)
{
	const opt_tensor *T;
	size_t i;

	if (!o || j >= o->nt || (!out && o->T[j].n))
		return FPL_EINVAL;
	T = &o->T[j];
	switch (o->cfg.policy.master) {
	case FPL_MASTER_FP32:
		if (T->n)
			memcpy(out, T->m, T->n * sizeof *out);
		break;
	case FPL_MASTER_SPLIT:
		for (i = 0; i < T->n; i++)
			out[i] = opt__recombine(o, T->w[i], T->trail, i);
		break;
	default:
		if (T->n)
			memcpy(out, T->w, T->n * sizeof *out);
		break;
	}
	return 0;
}

void fpl_optim_flags(const fpl_optim *o, unsigned *flags, uint64_t count[FPL_NFLAGS])
{
	unsigned f = 0;
	size_t j;

	if (count)
		memset(count, 0, FPL_NFLAGS * sizeof *count);
	if (o)
		for (j = 0; j < o->nt; j++) {
			int i;
			f |= o->T[j].st.flags;
			if (count)
				for (i = 0; i < FPL_NFLAGS; i++)
					count[i] += o->T[j].st.count[i];
		}
	if (flags)
		*flags = f;
}
