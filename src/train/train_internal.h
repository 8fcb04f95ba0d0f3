/* SPDX-License-Identifier: MIT */
/*
 * train/train_internal.h - the private side of fplab/train.h: the
 * trainer object with every buffer a step needs (allocated once, at
 * create), the random streams of a run, and the pieces of a step (mlp.c:
 * initial weights, the forward and backward pass of one node).
 *
 * The invariant a reader must know: every rounding of a step draws from
 * a state forked from the run's state at position `step` by the id
 * tr__id(node, layer, role), so the bits depend on the seed and the data
 * order only; the thread count reaches the GEMMs (st.threads) and never
 * a draw index.
 */
#ifndef FPLAB_TRAIN_INTERNAL_H
#define FPLAB_TRAIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/train.h>

/* Streams of a run's states (seed = cfg.seed), apart from the optimizer's
 * own forks and util/gen.h's generator streams. */
#define TR_STREAM_STEP 0x747261696e000001ull	/* a step's roundings */
#define TR_STREAM_OPTIM 0x747261696e000002ull	/* parent of fpl_optim's forks */
#define TR_STREAM_EVAL 0x747261696e000003ull	/* fpl_trainer_evaluate */
#define TR_STREAM_PERM 0x747261696e000004ull	/* the epoch's permutation */
/* (the permutation takes TR_STREAM_PERM + epoch: the sign vector's
 * stream is far from it) */
#define TR_STREAM_RHT 0x7268740000000000ull	/* rht's sign vector (hadamard.c) */
#define TR_RHT_N 16				/* rht's block: 16 rows */

/* Roles of the roundings of one node and layer. */
enum tr_role {
	TR_INPUT = 0,	/* H_0: X rounded into act */
	TR_FWD,		/* forward GEMM */
	TR_ACT,		/* Z rounded into act */
	TR_LOSS,	/* logsumexp per example */
	TR_SOFTMAX,	/* softmax per example */
	TR_DLOGIT,	/* p - onehot and * c, into grad */
	TR_DW,		/* dW GEMM */
	TR_DW_ROUND,	/* dW into grad */
	TR_DB,		/* bias-gradient sums */
	TR_DB_ROUND,	/* db into grad */
	TR_DX,		/* D = G W GEMM */
	TR_DX_ROUND,	/* D into grad */
	TR_COMM_W,	/* all-reduce of W_l (node 0's id) */
	TR_COMM_B,	/* all-reduce of b_l */
	TR_NROLES
};

static inline uint64_t tr__id(uint64_t node, size_t layer, int role)
{
	return (node * (FPL_TRAIN_MAX_LAYERS + 1) + (uint64_t)layer) * TR_NROLES + (uint64_t)role;
}

struct fpl_trainer {
	fpl_train_config cfg;
	fpl_train_policy pol;
	size_t L;			/* layers */
	size_t nt;			/* tensors: 2L */
	size_t tsize[2 * FPL_TRAIN_MAX_LAYERS];	/* elements of tensor j */
	size_t toff[2 * FPL_TRAIN_MAX_LAYERS];	/* its offset in a gradient block */
	size_t nparams;
	size_t maxw;			/* widest layer (sizes[0..L]) */
	fpl_optim *opt;
	fpl_state run;			/* seed, threads; the parent of every fork */
	fpl_format gmul;		/* grad without DAZ: G * c rounds the exact product
					 * (binary32 for a block grad) */
	/* the GEMM models with the policy's operand blocks (fwd_ops, bwd_ops)
	 * set (fpl_accum_set_block: 1-D blocks along K): forward; dW = G^T H;
	 * the input gradient G W, whose W takes fwd_ops.b (the weights') */
	fpl_accum_model fwd_m, dw_m, dx_m;
	fpl_format gsub;		/* p - onehot: grad, or binary32 for a block grad */
	uint64_t step, epoch;		/* steps and epochs so far (fork positions) */

	/* buffers for B rows */
	double *h[FPL_TRAIN_MAX_LAYERS + 1];	/* H_0..H_L, B x sizes[l] */
	double *ga, *gb;		/* G_l and G_{l-1}, B x maxw */
	double *prob, *onehot, *kc;	/* B x classes: softmax, one-hot, the constant c */
	double *xin;			/* B x sizes[0]: X rows as binary64 */
	double *db;			/* maxw: a bias gradient before its rounding */
	double *lse;			/* B: per-example loss */
	size_t *rows;			/* B: evaluation's row indices */
	double *grads;			/* P blocks of nparams: each node's gradients */
	double *sum;			/* nparams: the all-reduced gradients (P > 1) */
	const double **gp;		/* P pointers for fpl_allreduce */
	/* the random Hadamard transform (pol.rht.n = 16; else NULL) */
	double rht_s[TR_RHT_N];	/* its signs (tr__rht_signs) */
	double *rg, *rh;		/* B x maxw: R G and R H_{l-1} for the dW GEMM */
};

/* What one node's pass adds to the stats (before they reach the caller). */
typedef struct tr_counts {
	uint64_t act[FPL_NFLAGS], grad[FPL_NFLAGS];
	double loss_sum;		/* sum over the node's rows, binary64, row order */
} tr_counts;

/* ------------------------------------------------------------ mlp.c */
/* The initial weights of tensor j into w (tsize[j] values). */
void tr__init_weights(const fpl_trainer *t, size_t j, double *w);
/*
 * The forward pass of rows[0..n) of ds on one node, states forked from
 * `parent` (the run's state at its position) by tr__id(node, l, role):
 * H_0..H_L in t->h; the per-example loss in t->lse and added to
 * c->loss_sum when want_loss.  Returns 0 or an error.
 */
int tr__forward(fpl_trainer *t, const fpl_state *parent, uint64_t node, const fpl_dataset *ds,
		const size_t *rows, size_t n, int want_loss, tr_counts *c);
/*
 * The backward pass after tr__forward on the same rows: node's gradients
 * (every tensor, already times S/B) into g (nparams values, tensor j at
 * t->toff[j]).  S is the loss scale, B the global batch.
 */
int tr__backward(fpl_trainer *t, const fpl_state *parent, uint64_t node, const fpl_dataset *ds,
		 const size_t *rows, size_t n, double cscale, double *g, tr_counts *c);

/* ------------------------------------------------------------ hadamard.c */

/* The signs of the random Hadamard transform of `seed`: s[i] = -1 when
 * bit 63 of fpl_random_draw(seed, TR_STREAM_RHT, i) is set, else +1
 * (i = 0..15): a pure function of the seed. */
void tr__rht_signs(uint64_t seed, double s[TR_RHT_N]);
/*
 * The random Hadamard transform of the rows of x (rows x cols, row i at
 * x + i*ldx) into y (row i at y + i*ldy), along the row index, blocks of
 * 16 rows [16b, 16b + 16): y_block = R x_block with R = (1/4) H16 diag(s)
 * (H16 Sylvester's, H16[i][j] = (-1)^popcount(i & j)), or with transpose
 * = 1 its inverse R^T = (1/4) diag(s) H16.  The last rows % 16 rows are
 * copied unchanged.  binary64 arithmetic, every addition rounded to
 * nearest (hadamard.c: exact for integer multiples of one 2^e below
 * 2^(e+49)); no flags, no draws.  y may be x (with ldy = ldx); otherwise
 * they may not overlap.  Columns cols..ld-1 are not touched.
 */
void tr__rht_rows(double *y, size_t ldy, const double *x, size_t ldx, size_t rows, size_t cols,
		  const double s[TR_RHT_N], int transpose);

#endif
