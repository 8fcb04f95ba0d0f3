/* SPDX-License-Identifier: MIT */
/*
 * trainer.c - the fpl_trainer of fplab/train.h: creation (validation,
 * initial weights, the optimizer, every buffer a step needs), the
 * data-parallel step (each node's forward and backward pass, the
 * all-reduce of every tensor, the optimizer), the epoch over a permutation
 * of the data, and the evaluation.
 *
 * The invariant: a step's draws come from the run's state at position
 * `step` (t->step, the steps taken so far), forked per node, layer and
 * role (train_internal.h); the all-reduce of tensor j of layer l from
 * the fork tr__id(0, l, TR_COMM_W or TR_COMM_B), which fpl_allreduce
 * forks again per node.  Nodes run one after another, each GEMM on
 * cfg.threads threads: the bits never depend on the thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "train/train_internal.h"

void fpl_train_config_init(fpl_train_config *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof *c);
	c->nsizes = 3;
	c->sizes[0] = 784;
	c->sizes[1] = 256;
	c->sizes[2] = 10;
	c->batch = 128;
	c->nodes = 1;
	fpl_opt_hyper_init(&c->hyper, FPL_OPT_SGD);
	c->hyper.lr = 0.1;
	c->hyper.momentum = 0.9;
	c->seed = 1;
	c->threads = 1;
}

void fpl_trainer_free(fpl_trainer *t)
{
	size_t l;

	if (!t)
		return;
	fpl_optim_free(t->opt);
	for (l = 0; l <= FPL_TRAIN_MAX_LAYERS; l++)
		free(t->h[l]);
	free(t->ga);
	free(t->gb);
	free(t->prob);
	free(t->onehot);
	free(t->kc);
	free(t->xin);
	free(t->db);
	free(t->lse);
	free(t->grads);
	free(t->sum);
	free(t->gp);
	free(t->rows);
	free(t->rg);
	free(t->rh);
	free(t);
}

/* a * b without overflow into *out (limit 2^40 elements per buffer). */
static int mul_ok(size_t a, size_t b, size_t *out)
{
	if (a && b > ((size_t)1 << 40) / a)
		return 0;
	*out = a * b;
	return 1;
}

static int check_config(const fpl_train_config *c)
{
	size_t l, x;

	if (c->nsizes < 2 || c->nsizes > FPL_TRAIN_MAX_LAYERS + 1 || c->nodes < 1
	    || c->batch < c->nodes || c->threads < 0)
		return FPL_EINVAL;
	for (l = 0; l < c->nsizes; l++)
		if (c->sizes[l] < 1 || !mul_ok(c->sizes[l], c->batch, &x))
			return FPL_EINVAL;
	for (l = 1; l < c->nsizes; l++)
		if (!mul_ok(c->sizes[l], c->sizes[l - 1], &x))
			return FPL_EINVAL;
	return 0;
}

static int check_format(const fpl_format *f, fpl_rnd r)
{
	fpl_format t = *f;

	if ((unsigned)r >= FPL_RND_COUNT)
		return FPL_EINVAL;
	return fpl_format_finish(&t) ? FPL_EFORMAT : 0;
}

/* A model with operand blocks a and b set where on (fpl_accum_set_block
 * turns 1-D blocks along K); 0 or FPL_EFORMAT. */
static int with_blocks(fpl_accum_model *m, const fpl_train_block *a, fpl_rnd ar,
		       const fpl_train_block *b, fpl_rnd br)
{
	int r = 0;

	if (a->on && !(r = fpl_accum_set_block(m, 0, &a->b)))
		m->a_rnd = ar;
	if (!r && b->on && !(r = fpl_accum_set_block(m, 1, &b->b)))
		m->b_rnd = br;
	return r;
}

static int models(fpl_trainer *t)
{
	const fpl_train_policy *p = &t->pol;
	int r;

	t->fwd_m = p->fwd;
	t->dw_m = p->bwd;
	t->dx_m = p->bwd;
	if ((r = with_blocks(&t->fwd_m, &p->fwd_ops.a, p->fwd_ops.a_rnd, &p->fwd_ops.b,
			     p->fwd_ops.b_rnd))
	    || (r = with_blocks(&t->dw_m, &p->bwd_ops.a, p->bwd_ops.a_rnd, &p->bwd_ops.b,
				p->bwd_ops.b_rnd))
	    || (r = with_blocks(&t->dx_m, &p->bwd_ops.a, p->bwd_ops.a_rnd, &p->fwd_ops.b,
				p->fwd_ops.b_rnd)))
		return r;
	return 0;
}

static int check_policy(const fpl_train_policy *p, const fpl_train_config *c)
{
	int r;

	if ((r = fpl_accum_check(&p->fwd, NULL)) || (r = fpl_accum_check(&p->bwd, NULL))
	    || (r = fpl_accum_check(&p->red, NULL)) || (r = check_format(&p->act, p->act_rnd))
	    || (r = check_format(&p->grad, p->grad_rnd))
	    || (r = check_format(&p->comm.comm, p->comm.comm_rnd))
	    || (r = check_format(&p->comm.acc, p->comm.acc_rnd)))
		return r;
	/* given inputs, rht, APS loss scaling, hier's group
	 * (fpl_train_policy_check) */
	if (fpl_train_policy_check(p, c, NULL, 0) || (unsigned)p->comm.algo >= FPL_AR_COUNT
	    || (p->comm.scaling == FPL_AR_SCALE_LOSS && !(isfinite(p->comm.loss_scale)
							  && p->comm.loss_scale > 0)))
		return FPL_EINVAL;
	return 0;
}

static void *alloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* The random Hadamard transform's signs (from its seed, or the run's)
 * and the rotated dW operands, when pol.rht is on. */
static int rht_buffers(fpl_trainer *t)
{
	const fpl_train_rht *h = &t->pol.rht;

	if (!h->n)
		return 0;
	tr__rht_signs(h->seeded ? h->seed : t->cfg.seed, t->rht_s);
	t->rg = alloc(t->cfg.batch * t->maxw, sizeof(double));
	t->rh = alloc(t->cfg.batch * t->maxw, sizeof(double));
	return t->rg && t->rh ? 0 : FPL_ENOMEM;
}

static int buffers(fpl_trainer *t)
{
	const fpl_train_config *c = &t->cfg;
	size_t B = c->batch, C = c->sizes[t->L], l;

	for (l = 0; l <= t->L; l++)
		if (!(t->h[l] = alloc(B * c->sizes[l], sizeof(double))))
			return FPL_ENOMEM;
	t->ga = alloc(B * t->maxw, sizeof(double));
	t->gb = alloc(B * t->maxw, sizeof(double));
	t->prob = alloc(B * C, sizeof(double));
	t->onehot = alloc(B * C, sizeof(double));
	t->kc = alloc(B * C, sizeof(double));
	t->xin = alloc(B * c->sizes[0], sizeof(double));
	t->db = alloc(t->maxw, sizeof(double));
	t->lse = alloc(B, sizeof(double));
	t->rows = alloc(B, sizeof(size_t));
	t->gp = alloc(c->nodes, sizeof *t->gp);
	if (t->nparams > ((size_t)1 << 40) / c->nodes)
		return FPL_ENOMEM;
	t->grads = alloc(t->nparams * c->nodes, sizeof(double));
	if (c->nodes > 1)
		t->sum = alloc(t->nparams, sizeof(double));
	if (!t->ga || !t->gb || !t->prob || !t->onehot || !t->kc || !t->xin || !t->db || !t->lse
	    || !t->rows || !t->gp || !t->grads || (c->nodes > 1 && !t->sum))
		return FPL_ENOMEM;
	return rht_buffers(t);
}

/* The initial weights and the optimizer over them. */
static int optimizer(fpl_trainer *t)
{
	fpl_opt_config oc;
	double *w0[2 * FPL_TRAIN_MAX_LAYERS] = { NULL };
	size_t cols[2 * FPL_TRAIN_MAX_LAYERS];
	fpl_state st;
	size_t j;
	int r = 0;

	for (j = 0; j < t->nt; j++)	/* W_l (sizes[l] x sizes[l-1]), b_l */
		cols[j] = j % 2 ? t->cfg.sizes[j / 2 + 1] : t->cfg.sizes[j / 2];

	for (j = 0; j < t->nt && !r; j++)
		if (!(w0[j] = alloc(t->tsize[j], sizeof(double))))
			r = FPL_ENOMEM;
		else
			tr__init_weights(t, j, w0[j]);
	if (!r) {
		fpl_opt_config_init(&oc);
		oc.hyper = t->cfg.hyper;
		oc.policy = t->pol.opt;
		oc.scaler = t->pol.scaler;
		oc.threads = t->run.threads;
		oc.cols = cols;	/* W_l: rows of sizes[l-1]; b_l: one row */
		fpl_state_init(&st, t->cfg.seed);
		st.stream = TR_STREAM_OPTIM;
		r = fpl_optim_create(&t->opt, &oc, t->nt, t->tsize, (const double *const *)w0, &st);
	}
	for (j = 0; j < t->nt; j++)
		free(w0[j]);
	return r;
}

int fpl_trainer_create(fpl_trainer **out, const fpl_train_config *cfg,
		       const fpl_train_policy *pol)
{
	fpl_trainer *t;
	size_t l;
	int r;

	if (!out)
		return FPL_EINVAL;
	*out = NULL;
	if (!cfg || !pol)
		return FPL_EINVAL;
	if ((r = check_config(cfg)) || (r = check_policy(pol, cfg)))
		return r;
	if (!(t = calloc(1, sizeof *t)))
		return FPL_ENOMEM;
	t->cfg = *cfg;
	t->pol = *pol;
	t->L = cfg->nsizes - 1;
	t->nt = 2 * t->L;
	for (l = 0; l <= t->L; l++)
		if (cfg->sizes[l] > t->maxw)
			t->maxw = cfg->sizes[l];
	for (l = 1; l <= t->L; l++) {
		size_t j = 2 * (l - 1);

		t->tsize[j] = cfg->sizes[l] * cfg->sizes[l - 1];
		t->tsize[j + 1] = cfg->sizes[l];
		t->toff[j] = t->nparams;
		t->toff[j + 1] = t->nparams + t->tsize[j];
		t->nparams += t->tsize[j] + t->tsize[j + 1];
	}
	fpl_state_init(&t->run, cfg->seed);
	t->run.stream = TR_STREAM_STEP;
	t->run.threads = cfg->threads < 1 ? 1 : cfg->threads;
	t->gmul = pol->grad;
	t->gsub = pol->grad;
	if (pol->grad_block.on) {	/* the block is rounded once, after */
		fpl_format_lookup(&t->gmul, "fp32");
		t->gsub = t->gmul;
	}
	t->gmul.daz = 0;
	if ((r = models(t)) || (r = buffers(t)) || (r = optimizer(t))) {
		fpl_trainer_free(t);
		return r;
	}
	*out = t;
	return 0;
}

static int check_rows(const fpl_trainer *t, const fpl_dataset *ds, const size_t *rows, size_t n)
{
	size_t i;

	if (!ds || !rows || ds->d != t->cfg.sizes[0] || (!ds->x && ds->n) || (!ds->y && ds->n))
		return FPL_EINVAL;
	for (i = 0; i < n; i++)
		if (rows[i] >= ds->n || ds->y[rows[i]] < 0
		    || (size_t)ds->y[rows[i]] >= t->cfg.sizes[t->L])
			return FPL_EINVAL;
	return 0;
}

/* The all-reduce of every tensor over the nodes' gradients, into t->sum. */
static int allreduce(fpl_trainer *t, const fpl_state *parent, fpl_train_stats *st)
{
	uint32_t P = t->cfg.nodes, i;
	size_t j;
	int r, k;

	for (j = 0; j < t->nt; j++) {
		size_t l = j / 2 + 1;
		fpl_ar_config ac = t->pol.comm;
		fpl_state cs;

		ac.nodes = P;
		ac.threads = t->run.threads;
		ac.keep_fp32 = (t->pol.comm_fp32 >> (l - 1) & 1)
			       || ((t->pol.comm_fp32 & FPL_TRAIN_COMM_FP32_LAST) && l == t->L);
		for (i = 0; i < P; i++)
			t->gp[i] = t->grads + (size_t)i * t->nparams + t->toff[j];
		fpl_state_fork(parent, &cs, tr__id(0, l, j % 2 ? TR_COMM_B : TR_COMM_W));
		if ((r = fpl_allreduce(t->sum + t->toff[j], NULL, &ac, t->gp, t->tsize[j], &cs)))
			return r;
		if (st)
			for (k = 1; k < FPL_NFLAGS; k++)
				st->comm_count[k] += cs.count[k];
	}
	return 0;
}

int fpl_trainer_step(fpl_trainer *t, const fpl_dataset *ds, const size_t *rows,
		     fpl_train_stats *st)
{
	const double *gs[2 * FPL_TRAIN_MAX_LAYERS];
	uint32_t P, p;
	size_t B, per, j;
	tr_counts c;
	fpl_opt_report rep;
	fpl_state parent;
	double cscale;
	int r, k;

	if (!t)
		return FPL_EINVAL;
	B = t->cfg.batch;
	P = t->cfg.nodes;
	if ((r = check_rows(t, ds, rows, B)))
		return r;
	memset(&c, 0, sizeof c);
	cscale = fpl_optim_scale(t->opt) / (double)B;
	parent = t->run;
	parent.counter = t->step;
	per = B / P;
	for (p = 0; p < P; p++) {
		size_t lo = p * per, n = p == P - 1 ? B - lo : per;

		if ((r = tr__forward(t, &parent, p, ds, rows + lo, n, 1, &c))
		    || (r = tr__backward(t, &parent, p, ds, rows + lo, n, cscale,
					 t->grads + (size_t)p * t->nparams, &c)))
			return r;
	}
	if (P > 1 && (r = allreduce(t, &parent, st)))
		return r;
	for (j = 0; j < t->nt; j++)
		gs[j] = (P > 1 ? t->sum : t->grads) + t->toff[j];
	if ((r = fpl_optim_step_scaled(t->opt, gs, &rep)))
		return r;
	t->step++;
	if (st) {
		st->steps++;
		st->skipped += (uint64_t)rep.skipped;
		st->loss_sum += c.loss_sum / (double)B;
		st->loss_n++;
		st->updates += rep.nonzero;
		st->vanished += rep.vanished;
		st->scale = rep.next_scale;
		for (k = 1; k < FPL_NFLAGS; k++) {
			st->act_count[k] += c.act[k];
			st->grad_count[k] += c.grad[k];
			st->opt_count[k] += rep.grad_count[k] + rep.update_count[k];
		}
	}
	return 0;
}

/* perm = the epoch's order: Fisher-Yates, j uniform in [0, i] from draw
 * i of stream TR_STREAM_PERM + epoch (a 64 x 64-bit multiply-high: the
 * bias is below i / 2^64). */
static void permutation(size_t *perm, size_t n, uint64_t seed, uint64_t epoch)
{
	size_t i;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i > 1; i--) {
		uint64_t d = fpl_random_draw(seed, TR_STREAM_PERM + epoch, (uint64_t)(i - 1));
		size_t j = (size_t)(((unsigned __int128)d * (unsigned __int128)i) >> 64), tmp;

		tmp = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = tmp;
	}
}

int fpl_trainer_epoch(fpl_trainer *t, const fpl_dataset *ds, fpl_train_stats *st,
		      void (*progress)(void *ctx, size_t done, size_t total), void *ctx)
{
	size_t *perm, steps, s;
	int r = 0;

	if (!t || !ds || ds->d != t->cfg.sizes[0])
		return FPL_EINVAL;
	if (!(perm = alloc(ds->n, sizeof *perm)))
		return FPL_ENOMEM;
	permutation(perm, ds->n, t->cfg.seed, t->epoch);
	steps = ds->n / t->cfg.batch;
	for (s = 0; s < steps && !r; s++) {
		r = fpl_trainer_step(t, ds, perm + s * t->cfg.batch, st);
		if (!r && progress)
			progress(ctx, s + 1, steps);
	}
	free(perm);
	if (!r)
		t->epoch++;
	return r;
}

int fpl_trainer_evaluate(fpl_trainer *t, const fpl_dataset *ds, double *accuracy, double *loss)
{
	size_t B, C, i, k, lo, correct = 0;
	double lsum = 0;
	fpl_state parent;
	int r;

	if (!t || !ds || ds->d != t->cfg.sizes[0] || (ds->n && (!ds->x || !ds->y)))
		return FPL_EINVAL;
	B = t->cfg.batch;
	C = t->cfg.sizes[t->L];
	fpl_state_init(&parent, t->cfg.seed);
	parent.stream = TR_STREAM_EVAL;
	parent.threads = t->run.threads;
	for (lo = 0; lo < ds->n; lo += B) {
		size_t n = ds->n - lo < B ? ds->n - lo : B;
		tr_counts c;

		for (i = 0; i < n; i++)
			t->rows[i] = lo + i;
		if ((r = check_rows(t, ds, t->rows, n)))
			return r;
		memset(&c, 0, sizeof c);
		parent.counter = lo / B;
		if ((r = tr__forward(t, &parent, 0, ds, t->rows, n, 1, &c)))
			return r;
		lsum += c.loss_sum;
		for (i = 0; i < n; i++) {
			const double *z = t->h[t->L] + i * C;
			size_t best = C;

			for (k = 0; k < C; k++)	/* the first largest; NaN never wins */
				if (!isnan(z[k]) && (best == C || z[k] > z[best]))
					best = k;
			correct += best != C && (int32_t)best == ds->y[lo + i];
		}
	}
	if (accuracy)
		*accuracy = ds->n ? (double)correct / (double)ds->n : NAN;
	if (loss)
		*loss = ds->n ? lsum / (double)ds->n : NAN;
	return 0;
}

const double *fpl_trainer_weights(const fpl_trainer *t, size_t l)
{
	if (!t || l < 1 || l > t->L)
		return NULL;
	return fpl_optim_weights(t->opt, 2 * (l - 1));
}

const double *fpl_trainer_bias(const fpl_trainer *t, size_t l)
{
	if (!t || l < 1 || l > t->L)
		return NULL;
	return fpl_optim_weights(t->opt, 2 * (l - 1) + 1);
}
