/* SPDX-License-Identifier: MIT */
/*
 * mlp.c - the multi-layer perceptron of fplab/train.h: the initial
 * weights, and the forward and backward pass of one node over its rows
 * of the minibatch, every rounding through the library (fpl_accum_gemm,
 * fpl_accum_sum, fpl_reduce, the array operations).
 *
 * The invariant: each rounding role of a node and layer has its own
 * state, fpl_state_fork(parent, ., tr__id(node, layer, role)), used from
 * counter 0 in a fixed order (rows ascending, then columns), so the bits
 * depend on the seed, the step and the rows only.  The GEMMs and sums run
 * with inexact untracked (the training reports no inexact counts): the
 * same bits, and binary32-fma models take the hardware GEMM.
 *
 * Softmax and log-sum-exp run one fpl_reduce per row (MPFR's exp and log
 * inside, the costliest part of a binary32 step), the bias gradients one
 * fpl_accum_sum per column; rows and columns are split over the threads
 * with item i's state at counter i*D (D draws per call), exactly where a
 * sequential loop of calls would have it, so the split changes no bit.
 *
 * ReLU: H = Z except H = +0 where Z < 0 (exact; -0 and NaN kept).  So
 * H > 0 exactly where Z > 0, and the backward pass reads its mask from
 * H: no copy of Z is kept.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <mpfr.h>

#include <fplab/array.h>
#include <fplab/error.h>
#include <fplab/reduce.h>

#include "train/train_internal.h"
#include "util/gen.h"

void tr__init_weights(const fpl_trainer *t, size_t j, double *w)
{
	size_t l = j / 2 + 1, n = t->tsize[j];

	if (j % 2) {
		memset(w, 0, n * sizeof *w);	/* b_l = +0 */
	} else {
		double r = 1 / sqrt((double)t->cfg.sizes[l - 1]);
		struct fpl__gen g = { FPL__GEN_UNIFORM, -r, r };

		fpl__gen_fill(&g, t->cfg.seed, (uint64_t)l, w, n);
	}
}

/* The state of one role: a fork, with inexact untracked for the
 * accumulation functions (the others ignore the field). */
static void role(fpl_state *st, const fpl_state *parent, uint64_t node, size_t l, int r)
{
	fpl_state_fork(parent, st, tr__id(node, l, r));
	st->untracked = FPL_FLAG_INEXACT;
}

/* Add st's counts, inexact excluded, into acc. */
static void add(uint64_t *acc, const fpl_state *st)
{
	int i;

	for (i = 0; i < FPL_NFLAGS; i++)
		if (1u << i != FPL_FLAG_INEXACT)
			acc[i] += st->count[i];
}

/*
 * Independent library calls, items [0, n), each taking the same number
 * D of draws from one state: item i's state is st at counter c0 + i*D,
 * where a sequential loop would have it.  Item 0 runs first on st itself
 * (D is its counter advance); the others are split over st->threads.
 */
typedef int (*item_fn)(void *ctx, size_t i, fpl_state *st);

typedef struct itemjob {
	item_fn fn;
	void *ctx;
	size_t lo, hi;
	fpl_state st;		/* st at item lo's position, flags zeroed */
	int rc;
	pthread_t tid;
	int spawned;
} itemjob;

static void *items_run(void *arg)
{
	itemjob *j = arg;
	size_t i;

	for (i = j->lo; i < j->hi && !j->rc; i++)
		j->rc = j->fn(j->ctx, i, &j->st);
	return NULL;
}

/* A spawned worker: fpl_reduce's MPFR keeps per-thread caches, which
 * the thread frees before it ends (MPFR's shared caches stay). */
static void *items_thread(void *arg)
{
	items_run(arg);
	mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	return NULL;
}

#define MAX_ITEM_THREADS 16

static int par_items(size_t n, item_fn fn, void *ctx, fpl_state *st)
{
	itemjob jobs[MAX_ITEM_THREADS];
	size_t nt = st->threads > 1 ? (size_t)st->threads : 1, k, m;
	uint64_t c0 = st->counter, D;
	int rc, i;

	if (n == 0)
		return 0;
	if ((rc = fn(ctx, 0, st)))
		return rc;
	D = st->counter - c0;
	c0 = st->counter;
	m = n - 1;
	if (nt > MAX_ITEM_THREADS)
		nt = MAX_ITEM_THREADS;
	if (nt > m)
		nt = m ? m : 1;
	for (k = 0; k < nt; k++) {
		itemjob *j = &jobs[k];

		j->fn = fn;
		j->ctx = ctx;
		j->lo = 1 + m * k / nt;
		j->hi = 1 + m * (k + 1) / nt;
		j->st = *st;
		fpl_state_clear_flags(&j->st);
		j->st.counter = c0 + (j->lo - 1) * D;
		j->rc = 0;
		j->spawned = k > 0 && !pthread_create(&j->tid, NULL, items_thread, j);
	}
	items_run(&jobs[0]);
	for (k = 1; k < nt; k++) {
		if (jobs[k].spawned)
			pthread_join(jobs[k].tid, NULL);
		else
			items_run(&jobs[k]);	/* no thread: here, the same bits */
	}
	for (k = 0; k < nt; k++) {
		if (jobs[k].rc && !rc)
			rc = jobs[k].rc;
		st->flags |= jobs[k].st.flags;
		for (i = 0; i < FPL_NFLAGS; i++)
			st->count[i] += jobs[k].st.count[i];
	}
	if (!rc)
		st->counter = c0 + m * D;
	return rc;
}

/* One row of softmax or logsumexp. */
typedef struct rowctx {
	fpl_reduce_op op;
	const fpl_accum_model *red;
	size_t C;
	const double *in;
	double *out;		/* softmax: C per row; logsumexp: 1 per row */
} rowctx;

static int row_item(void *ctx, size_t i, fpl_state *st)
{
	const rowctx *c = ctx;

	return fpl_reduce(c->out + i * (c->op == FPL_REDUCE_SOFTMAX ? c->C : 1), c->op, 0, c->red,
			  c->C, c->in + i * c->C, 1, st);
}

static int reduce_rows(fpl_reduce_op op, const fpl_accum_model *red, size_t n, size_t C,
		       const double *in, double *out, fpl_state *st)
{
	rowctx c = { op, red, C, in, out };

	return par_items(n, row_item, &c, st);
}

/* One column sum of G (the bias gradient). */
typedef struct colctx {
	const fpl_accum_model *red;
	size_t n, m;
	const double *G;
	double *out;
} colctx;

static int col_item(void *ctx, size_t j, fpl_state *st)
{
	const colctx *c = ctx;

	return fpl_accum_sum(&c->out[j], c->red, c->n, c->G + j, (ptrdiff_t)c->m, NULL, NULL, st);
}

/* H_l = relu(Z_l) in place (see the file's comment). */
/*
 * A stored tensor (rows x cols, row-major) into a slot: blocks over its
 * dims with a block format (fpl_block_round), else fpl_round_array.  In
 * place is allowed (y == x), as both calls allow it.
 */
static int store(const fpl_train_block *blk, const fpl_format *f, fpl_rnd r, double *y,
		 const double *x, size_t rows, size_t cols, fpl_state *st)
{
	size_t dims[2] = { rows, cols };

	if (blk->on)
		return rows && cols ? fpl_block_round(&blk->b, y, x, dims, 2, r, st, NULL) : 0;
	return fpl_round_array(f, y, x, rows * cols, r, st);
}

static void relu(double *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (h[i] < 0)
			h[i] = 0;
}

int tr__forward(fpl_trainer *t, const fpl_state *parent, uint64_t node, const fpl_dataset *ds,
		const size_t *rows, size_t n, int want_loss, tr_counts *c)
{
	const fpl_train_policy *p = &t->pol;
	const size_t *sz = t->cfg.sizes;
	size_t d = sz[0], C = sz[t->L], l, i, j;
	fpl_state st;
	int r = 0;

	for (i = 0; i < n; i++) {
		const float *x = ds->x + rows[i] * d;
		for (j = 0; j < d; j++)
			t->xin[i * d + j] = x[j];
	}
	role(&st, parent, node, 0, TR_INPUT);
	if ((r = store(&p->act_block, &p->act, p->act_rnd, t->h[0], t->xin, n, d, &st)))
		return r;
	add(c->act, &st);
	for (l = 1; l <= t->L; l++) {
		size_t m = sz[l], k = sz[l - 1];
		const double *W = fpl_optim_weights(t->opt, 2 * (l - 1));
		const double *b = fpl_optim_weights(t->opt, 2 * (l - 1) + 1);
		double *z = t->h[l];

		for (i = 0; i < n; i++)
			memcpy(z + i * m, b, m * sizeof *z);	/* C: the bias on every row */
		role(&st, parent, node, l, TR_FWD);
		if ((r = fpl_accum_gemm(z, m, &t->fwd_m, 1, n, m, k, t->h[l - 1], k, 0, W, k, 1,
					NULL, &st)))
			return r;
		add(c->act, &st);
		role(&st, parent, node, l, TR_ACT);
		if ((r = store(&p->act_block, &p->act, p->act_rnd, z, z, n, m, &st)))
			return r;
		add(c->act, &st);
		if (l < t->L)
			relu(z, n * m);
	}
	if (!want_loss)
		return 0;
	/* the loss: logsumexp of the logits minus the label's, binary64 */
	role(&st, parent, node, t->L, TR_LOSS);
	if ((r = reduce_rows(FPL_REDUCE_LOGSUMEXP, &p->red, n, C, t->h[t->L], t->lse, &st)))
		return r;
	for (i = 0; i < n; i++) {
		t->lse[i] = t->lse[i] - t->h[t->L][i * C + (size_t)ds->y[rows[i]]];
		c->loss_sum += t->lse[i];
	}
	return 0;
}

/* G_L = (softmax(z) - onehot) * c into t->ga. */
static int dlogits(fpl_trainer *t, const fpl_state *parent, uint64_t node, const fpl_dataset *ds,
		   const size_t *rows, size_t n, double cscale, tr_counts *c)
{
	const fpl_train_policy *p = &t->pol;
	size_t C = t->cfg.sizes[t->L], i, k;
	fpl_state st;
	int r;

	role(&st, parent, node, t->L, TR_SOFTMAX);
	if ((r = reduce_rows(FPL_REDUCE_SOFTMAX, &p->red, n, C, t->h[t->L], t->prob, &st)))
		return r;
	add(c->grad, &st);
	for (i = 0; i < n; i++)
		for (k = 0; k < C; k++) {
			t->onehot[i * C + k] = (int32_t)k == ds->y[rows[i]] ? 1 : 0;
			t->kc[i * C + k] = cscale;
		}
	role(&st, parent, node, t->L, TR_DLOGIT);
	{	/* a block grad: the arithmetic in binary32 (ne), then the blocks */
		fpl_rnd ar = p->grad_block.on ? FPL_RND_NE : p->grad_rnd;

		if ((r = fpl_sub_array(&t->gsub, t->ga, t->prob, t->onehot, n * C, ar, &st))
		    || (r = fpl_mul_array(&t->gmul, t->ga, t->ga, t->kc, n * C, ar, &st)))
			return r;
		if (p->grad_block.on
		    && (r = store(&p->grad_block, &p->grad, p->grad_rnd, t->ga, t->ga, n, C, &st)))
			return r;
	}
	add(c->grad, &st);
	return 0;
}

int tr__backward(fpl_trainer *t, const fpl_state *parent, uint64_t node, const fpl_dataset *ds,
		 const size_t *rows, size_t n, double cscale, double *g, tr_counts *c)
{
	const fpl_train_policy *p = &t->pol;
	const size_t *sz = t->cfg.sizes;
	size_t l, i;
	fpl_state st;
	int r;

	if ((r = dlogits(t, parent, node, ds, rows, n, cscale, c)))
		return r;
	for (l = t->L; l >= 1; l--) {
		size_t m = sz[l], k = sz[l - 1];
		const double *W = fpl_optim_weights(t->opt, 2 * (l - 1));
		double *dW = g + t->toff[2 * (l - 1)], *db = g + t->toff[2 * (l - 1) + 1];
		double *G = t->ga, *D = t->gb, *H = t->h[l - 1];

		/* dW = G^T H, then into grad; with rht, (R G)^T (R H) */
		role(&st, parent, node, l, TR_DW);
		{
			const double *GA = G, *HB = H;

			if (p->rht.n) {	/* along K: the node's rows */
				tr__rht_rows(t->rg, m, G, m, n, m, t->rht_s, 0);
				tr__rht_rows(t->rh, k, H, k, n, k, t->rht_s, 0);
				GA = t->rg;
				HB = t->rh;
			}
			if ((r = fpl_accum_gemm(dW, k, &t->dw_m, 0, m, k, n, GA, m, 1, HB, k, 0, NULL,
						&st)))
				return r;
		}
		add(c->grad, &st);
		role(&st, parent, node, l, TR_DW_ROUND);
		if ((r = store(&p->grad_block, &p->grad, p->grad_rnd, dW, dW, m, k, &st)))
			return r;
		add(c->grad, &st);
		/* db_j = the column sums of G, then into grad */
		role(&st, parent, node, l, TR_DB);
		{
			colctx cc = { &p->red, n, m, G, t->db };
			if ((r = par_items(m, col_item, &cc, &st)))
				return r;
		}
		add(c->grad, &st);
		role(&st, parent, node, l, TR_DB_ROUND);
		if ((r = store(&p->grad_block, &p->grad, p->grad_rnd, db, t->db, 1, m, &st)))
			return r;
		add(c->grad, &st);
		if (l == 1)
			break;
		/* D = G W, into grad, masked by ReLU's H > 0 */
		role(&st, parent, node, l, TR_DX);
		if ((r = fpl_accum_gemm(D, k, &t->dx_m, 0, n, k, m, G, m, 0, W, k, 0, NULL, &st)))
			return r;
		add(c->grad, &st);
		role(&st, parent, node, l, TR_DX_ROUND);
		if ((r = store(&p->grad_block, &p->grad, p->grad_rnd, D, D, n, k, &st)))
			return r;
		add(c->grad, &st);
		for (i = 0; i < n * k; i++)
			if (!(H[i] > 0))
				D[i] = 0;
		t->ga = D;
		t->gb = G;
	}
	return 0;
}
