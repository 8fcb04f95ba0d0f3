/* SPDX-License-Identifier: MIT */
/*
 * fplab/train.h - training a multi-layer perceptron under a precision
 * policy, data-parallel over simulated nodes, every rounding emulated.
 *
 * The pieces are the library's own: GEMMs through fpl_accum_gemm under
 * accumulation models (fplab/accum.h), softmax and log-sum-exp through
 * fpl_reduce (fplab/reduce.h), gradients all-reduced by fpl_allreduce
 * (fplab/allreduce.h), the update by fpl_optim (fplab/optim.h).  This
 * file adds the network, the policy that names a format for each part,
 * and the loop.
 *
 * ------------------------------------------------------------ network
 * Layers sizes[0] - sizes[1] - ... - sizes[L] (sizes[0] = features,
 * sizes[L] = classes); layer l (1..L) has weights W_l (sizes[l] x
 * sizes[l-1], row-major) and bias b_l (sizes[l]); ReLU after every layer
 * but the last; softmax cross-entropy on the last.  Initialisation
 * (from the seed only): W_l[i][j] uniform in [-r, r), r = 1/sqrt(fan_in)
 * (PyTorch's nn.Linear default bound for the weights, kaiming_uniform
 * with a = sqrt(5)), b_l = 0; value e of W_l is draw e of generator
 * stream l of the seed (util/gen.h's uniform), then handed to fpl_optim
 * (which rounds it into the policy's weight or master format).
 * Optimizer tensors, in this order: W_1, b_1, W_2, b_2, ..., W_L, b_L.
 *
 * ------------------------------------------------------------ one step
 * A minibatch of B examples (rows of X, features as binary32 values),
 * split over P nodes: node p takes rows [p*B/P, (p+1)*B/P) (B/P rounded
 * down; the last node takes the rest).  Each node, with H_0 = its rows
 * of X rounded into `act` (act_rnd):
 *   forward, l = 1..L:
 *     Z_l = H_{l-1} W_l^T + b_l: fpl_accum_gemm under `fwd`, A = H_{l-1},
 *       B = W_l transposed (the stored weights, fpl_optim_weights), the
 *       chain of output (i, j) starting from b_l[j] (beta = 1: C holds
 *       the bias broadcast over the rows);
 *     Z_l rounded into `act` (act_rnd); H_l = max(Z_l, 0) for l < L
 *       (exact; -0 and NaN kept as they are), H_L = Z_L (the logits).
 *   loss (reported, not differentiated through): per example,
 *     fpl_reduce logsumexp of its logits under `red` minus the logit of
 *     its label, in binary64; the batch loss is their mean in binary64.
 *   backward, with S the loss scale (fpl_optim_scale) and c = S / B:
 *     G_L[i][k] = (softmax_k(z_i) - [k == y_i]) * c: softmax by
 *       fpl_reduce under `red`, the subtraction and the multiplication
 *       by the binary64 constant c each one rounding into `grad`
 *       (grad_rnd);
 *     for l = L..1:
 *       dW_l = G_l^T H_{l-1}: fpl_accum_gemm under `bwd` (A = G_l
 *         transposed, B = H_{l-1}; with rht, A = (R G_l)^T and B = R
 *         H_{l-1}, fpl_train_rht), then rounded into `grad`;
 *       db_l[j] = sum over this node's rows of G_l[i][j]: fpl_accum_sum
 *         under `red`, rounded into `grad`;
 *       for l > 1: D = G_l W_l under `bwd`, rounded into `grad`; G_{l-1}
 *         = D where Z_{l-1} > 0, else +0.
 *   Node p's gradients (dW_l, db_l of every layer: already multiplied by
 *   S and divided by the GLOBAL batch B, so their sum over nodes is S
 *   times the batch-mean gradient) are all-reduced tensor by tensor with
 *   fpl_allreduce under `comm` (its scaling: none, loss or APS; layers in
 *   keep_fp32 reduced in binary32); P = 1 skips the all-reduce entirely
 *   (no cast: a single node's gradient is the sum).  The sums go to
 *   fpl_optim_step_scaled, which checks them for inf/NaN (dynamic
 *   scaling skips the step), unscales and updates.
 * Random draws: each rounding above draws from a state forked from the
 * run's state by (step, node, layer, role), so the bits depend on the
 * seed and the data order only, never on threads.  Precisely: the run's
 * state is (seed, a stream of its own) at counter = the number of steps
 * taken so far; each (node, layer, role) gets fpl_state_fork(run, .,
 * id), the roles being H_0's rounding, the forward GEMM, Z's rounding,
 * the loss, the softmax, G_L's two roundings, the dW GEMM, its rounding,
 * the bias sums, their rounding, the D GEMM and its rounding; within a
 * role the calls take that state's draws in order (rows, or bias
 * columns, ascending: fpl_reduce and fpl_accum_sum calls run on several
 * threads at the counters a sequential loop would give them).  Tensor
 * j's all-reduce forks the run's state once more (id of node 0, its
 * layer and role W or b) and fpl_allreduce forks that per node.  The
 * optimizer's streams fork from (seed, another stream); evaluation's
 * from (seed, a third stream) at counter = the batch number, so an
 * evaluation does not move the training's draws and gives the same
 * result when repeated on the same weights.
 * The GEMMs and bias sums run with inexact untracked (fplab/state.h): the
 * same bits, the hardware GEMM for binary32-fma models, and no inexact
 * counts (the stats below never count inexact).
 *
 * ------------------------------------------------------------ policy
 * A policy names a format for every part; fpl_train_policy_preset fills
 * one by name, fpl_train_policy_set changes one key (the policy file's
 * `key = value` lines, `fplab-train(1)`), fpl_train_policy_load reads a
 * file of such lines over a preset.
 */
#ifndef FPLAB_TRAIN_H
#define FPLAB_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/accum.h>
#include <fplab/allreduce.h>
#include <fplab/block.h>
#include <fplab/dataset.h>
#include <fplab/export.h>
#include <fplab/optim.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FPL_TRAIN_MAX_LAYERS 16

/*
 * A block-scaled format in a slot of a policy (fplab/block.h); on = 0:
 * the slot's plain format applies.  With on = 1 the slot's plain format
 * holds b.elem and its mode rounds the elements.
 */
typedef struct fpl_train_block {
	int on;
	fpl_block_format b;
} fpl_train_block;

/* A GEMM's operands as block formats: the trainer sets them on a copy of
 * the GEMM's model (fpl_accum_set_block: 1-D blocks along K), in place
 * of the model's input formats. */
typedef struct fpl_train_operands {
	fpl_train_block a, b;
	fpl_rnd a_rnd, b_rnd;
} fpl_train_operands;

/*
 * NVFP4 training's random Hadamard transform (key rht): with n = 16, the
 * dW GEMM's operands G and H (the node's rows along K) are multiplied,
 * blocks of 16 rows at a time, by R = (1/4) H16 diag(s) before they are
 * loaded (quantized) by the bwd model; since R is orthogonal, (R G)^T
 * (R H) = G^T H in exact arithmetic and only the rounding changes.  The
 * 16 signs s come from seed when seeded, else from the run's seed
 * (cfg.seed); rows past the last multiple of 16 are not transformed.
 * (train/hadamard.c states the arithmetic.)  n = 0: none.
 */
typedef struct fpl_train_rht {
	unsigned n;			/* 0 (none) or 16 */
	int seeded;			/* 1: seed gives the signs; 0: cfg.seed does */
	uint64_t seed;
} fpl_train_rht;

typedef struct fpl_train_policy {
	char name[64];			/* preset name or file name, for reports */
	fpl_accum_model fwd;		/* forward GEMMs */
	fpl_accum_model bwd;		/* backward GEMMs (dW and dX) */
	fpl_accum_model red;		/* softmax, log-sum-exp, bias-gradient sums */
	fpl_format act;			/* stored activations and logits */
	fpl_rnd act_rnd;
	fpl_format grad;		/* stored gradients */
	fpl_rnd grad_rnd;
	fpl_opt_policy opt;		/* weights, master, optimizer state, update */
	fpl_opt_scaler scaler;		/* loss scaling */
	fpl_ar_config comm;		/* all-reduce: algo, group, comm and acc formats,
					 * scaling (nodes and threads are set by the run) */
	fpl_train_block act_block;	/* act as a block format: every stored activation
					 * tensor (H_0, Z_l: rows x features) is
					 * fpl_block_round-ed with its dims */
	fpl_train_block grad_block;	/* grad likewise (G_L, dW_l, db_l, D); the
					 * arithmetic of G_L is then binary32 */
	fpl_train_operands fwd_ops, bwd_ops;	/* GEMM operands along K */
	fpl_train_rht rht;		/* the dW GEMM's operands rotated along K */
	uint32_t comm_fp32;		/* bit l-1 set: layer l's gradients (W_l and b_l)
					 * are all-reduced in binary32 (keep_fp32);
					 * FPL_TRAIN_COMM_FP32_LAST: the last layer,
					 * whatever the network's depth */
} fpl_train_policy;

#define FPL_TRAIN_COMM_FP32_LAST (1u << 31)
#define FPL_TRAIN_COMM_FP32_ALL ((1u << FPL_TRAIN_MAX_LAYERS) - 1)

/*
 * The presets (fplab-train(1) lists their keys):
 *   fp32           everything binary32: fwd and bwd the fp32-fma profile
 *                  (inputs rounded into fp32), red fp32 sequential, act,
 *                  grad fp32, optimizer none:fp32 (preset of optim.h),
 *                  no scaling, comm fp32 ring.
 *   bf16-mixed     bf16 GEMM inputs (rounded), exact products, fp32
 *                  accumulator sequential ne; act and grad bf16; red fp32;
 *                  fp32-master:bf16; no scaling; comm fp32.
 *   fp16-mixed     as bf16-mixed with fp16, and dynamic loss scaling
 *                  (fpl_opt_scaler_init's defaults).
 *   fp16-pure      fp16 everywhere: GEMM inputs, accumulator (sequential
 *                  ne), act, grad, red, optimizer none:fp16; no scaling.
 *   fp8-e4m3       the usual fp8 recipe: forward GEMMs with e4m3fn inputs
 *                  (A and B), backward GEMMs with e5m2 gradients (A) and
 *                  e4m3fn activations or weights (B), exact products, an
 *                  accumulator of 14 significant bits (e8m13: fp32's
 *                  exponent; about what fp8 tensor cores keep, per the
 *                  DeepSeek-V3 report) in tz, promoted into fp32 every 128
 *                  terms (order blocked:128:fp32); act e4m3fn, grad e5m2,
 *                  red fp32, fp32-master:bf16 (weights bf16, fp32 master
 *                  and state), no scaling, comm fp32.
 *   aps-e4m3-comm  fp32 compute (as fp32) with gradients all-reduced in
 *                  e4m3fn with APS scaling, the last layer in fp32: the
 *                  APS paper's setting.
 *   mxfp8          every GEMM operand quantized as mxfp8:rceil blocks of 32
 *                  along K (fwd_ops, bwd_ops), fp32 GEMM models (inputs
 *                  rounded into fp32, fp32 accumulator), act and grad
 *                  bf16, fp32-master:bf16, comm fp32.
 *   nvfp4          as mxfp8 with nvfp4 operands: 1x16 blocks for the
 *                  activations and gradients, 16x16 tiles for the weights
 *                  (fwd_ops.b, also W's operand in the input gradient),
 *                  the gradient operand (bwd_ops.a) in sp, the rest ne.
 *                  rht none: the random Hadamard transform is an option
 *                  (rht = 16 or 16:SEED).
 * Returns 0 or FPL_ENOTFOUND.
 */
FPL_API int fpl_train_policy_preset(fpl_train_policy *p, const char *name);
/* (Every preset's optimizer receives the backward pass's gradients:
 * opt.grad = grad.  fp16-pure also all-reduces in fp16, comm and its
 * accumulator: "fp16 everywhere".) */

/* The preset names, NULL-terminated. */
FPL_API const char *const *fpl_train_presets(void);

/*
 * Set one key of a policy from its text value (a policy file line, a CLI
 * override).  Keys (fplab-train(1) documents each):
 *   fwd, bwd, red        an accumulation model in the CLI's spelling,
 *                        e.g. "--profile fp32-fma" or "-f bf16 --acc fp32
 *                        --order blocked:128"; or the sub-keys fwd.in,
 *                        fwd.a, fwd.b, fwd.prod, fwd.acc, fwd.order,
 *                        fwd.out, fwd.profile (and bwd.*, red.*)
 *   act, grad            FORMAT[:MODE]
 *   master               none | fp32-master | split | kahan | stochastic
 *   weight, state, arith, unscale, master-format   FORMAT[:MODE]
 *   loss-scale           none | S | dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]]
 *   comm, comm-acc       FORMAT[:MODE]
 *   comm-scale           none | loss:S | aps
 *   algo                 sequential | ring | tree | hier:G (fplab allreduce)
 *   fwd.a-block, fwd.b-block, bwd.a-block, bwd.b-block
 *                        none | BLOCKSPEC[:MODE] (fplab/block.h): the GEMM
 *                        models' operands A and B as block formats
 *                        (fpl_accum_set_block: 1-D blocks along K, tiles
 *                        kept); the weights' operand of the input-gradient
 *                        GEMM takes fwd.b-block
 *   act, grad, comm, weight, state, master-format also take
 *                        BLOCKSPEC[:MODE] (weight: with master none,
 *                        stochastic or fp32-master; master-format: with
 *                        fp32-master, mode ne; else fpl_train_policy_check
 *                        refuses it); arith, unscale, comm-acc refuse one
 *                        (FPL_EPARSE: an arithmetic slot rounds each scalar
 *                        operation's result, which a block scale cannot
 *                        define)
 *   rht                  none | 16 | 16:SEED: the 16-point random Hadamard
 *                        transform of the dW GEMM's operands along K
 *                        (fpl_train_rht; SEED a whole number below 2^64,
 *                        default the run's seed); other sizes are refused
 *   comm-fp32            none | last | all | a comma list of layer numbers
 *   weight-sr            sp | se: the stochastic strategy's mode (optim.h
 *                        weight_sr)
 * A model value (fwd, bwd, red) is a whole model: its options apply in
 * order over fpl_accum_init's defaults ("-f SPEC", "--a-format SPEC",
 * "--b-format SPEC" with SPEC's mode or ":given", "--prod exact|SPEC",
 * "--acc SPEC", "--order ORDER", "--out-format SPEC", "--profile NAME"
 * replacing everything before it); a sub-key changes one part of the
 * current model (fwd.in as -f; fwd.out also takes `none`).  `grad` also
 * sets the optimizer's gradient format (opt.grad).  comm-fp32's `last`
 * is the bit FPL_TRAIN_COMM_FP32_LAST, whatever the depth.  Numbers are
 * read with strtod (decimal or hex, correctly rounded).
 * Setting `master` re-derives the optimizer formats from the weight
 * format as fpl_opt_policy_preset does, keeping the weight's own modes
 * (weight_rnd, weight_sr); later keys override.  A value is checked
 * whole: on error the policy is unchanged.  Returns 0,
 * FPL_ENOTFOUND (unknown key) or FPL_EPARSE (bad value), with a one-line
 * message in err (may be NULL when errlen is 0).
 */
FPL_API int fpl_train_policy_set(fpl_train_policy *p, const char *key, const char *value,
				 char *err, size_t errlen);

/*
 * Read a policy file: `key = value` lines, `#` comments and blank lines;
 * an optional first key `preset = NAME` starts from that preset (else
 * fp32).  name becomes the file's base name without extension.  Errors:
 * FPL_EIO, FPL_ENOTFOUND, FPL_EPARSE with "FILE:LINE: message" in err
 * (lines up to 1023 characters; a NUL or a control character other than
 * tab, CR, VT and FF is "FILE:LINE:COLUMN: byte 0xNN: not a text file");
 * *p changes only when the whole file
 * reads.
 */
FPL_API int fpl_train_policy_load(fpl_train_policy *p, const char *path, char *err,
				  size_t errlen);

/* The policy as a policy file (every key, one per line, after a comment
 * line naming it; weight before master, which re-derives the formats
 * of the keys after it), into buf (may be NULL when size is 0); returns
 * the length it needs (as snprintf).  Loading it gives the same policy
 * (name aside) whenever its formats are catalogue names with switches. */
FPL_API size_t fpl_train_policy_describe(const fpl_train_policy *p, char *buf, size_t size);

typedef struct fpl_train_config {
	size_t nsizes;			/* L + 1, 2..FPL_TRAIN_MAX_LAYERS + 1 */
	size_t sizes[FPL_TRAIN_MAX_LAYERS + 1];
	size_t batch;			/* global batch B >= nodes */
	uint32_t nodes;			/* P >= 1 */
	fpl_opt_hyper hyper;		/* optimizer and its hyperparameters */
	uint64_t seed;			/* initial weights and data order */
	int threads;			/* 0 or 1: one; bits never depend on it */
} fpl_train_config;

/* 784-256-10, batch 128, 1 node, sgd lr 0.1 momentum 0.9, seed 1, one
 * thread. */
FPL_API void fpl_train_config_init(fpl_train_config *c);

/* What happened during the steps since the last fpl_train_stats reset
 * (the caller zeroes it; steps add into it). */
/*
 * Does policy p fit a run of cfg, so that no step fails on it?  A model
 * that takes an input as given (":given", a profile) must be handed only
 * values of its format: fwd's A the activations (act) and B the weights
 * (opt.weight), and with A given, C the biases (opt.weight) into the
 * running sum's format (acc, promo for the blocked order); bwd's A the gradients (grad), B the activations and, with
 * two layers or more, the weights; red's A the logits (act) and the
 * gradients (grad); so each of those formats must be a subset of the
 * model's.  Also refused: rht with n other than 0 and 16, or with a bwd
 * that takes A or B as given (the rotated operands are no format's
 * values), APS loss scaling, a hier group that does not divide
 * cfg->nodes.  Returns 0 or FPL_EINVAL with a one-line message in
 * err naming the key and the reason.  fpl_trainer_create runs it.
 */
FPL_API int fpl_train_policy_check(const fpl_train_policy *p, const fpl_train_config *cfg,
				   char *err, size_t errlen);

typedef struct fpl_train_stats {
	uint64_t steps, skipped;	/* steps (skipped ones included) and skipped ones */
	double loss_sum;		/* sum of the batch losses (binary64) */
	uint64_t loss_n;		/* batches in loss_sum (non-finite losses included) */
	uint64_t updates, vanished;	/* optim report's nonzero and vanished, summed */
	double scale;			/* loss scale after the last step */
	/* flag counts per tensor kind: every rounding of activations (H_0,
	 * fwd GEMMs and act), of gradients (softmax, G_L, bwd GEMMs, grad,
	 * bias sums), of the all-reduce, and of the optimizer step (its
	 * report's grad_count + update_count); the loss's logsumexp is not
	 * counted, and count[0] (inexact) stays 0 */
	uint64_t act_count[FPL_NFLAGS], grad_count[FPL_NFLAGS];
	uint64_t comm_count[FPL_NFLAGS], opt_count[FPL_NFLAGS];
} fpl_train_stats;

typedef struct fpl_trainer fpl_trainer;

/*
 * A trainer for one policy: initial weights from cfg->seed (the same for
 * every policy), optimizer created, every buffer of a step allocated
 * (activations for B rows, each node's gradients: P * parameters
 * doubles).  Returns 0, FPL_EINVAL (sizes, batch, nodes, hyperparameters,
 * a policy fpl_train_policy_check refuses: a given input its format cannot
 * hold, hier's group not dividing nodes, APS loss scaling: a step hands
 * the optimizer gradients it already scaled), FPL_EFORMAT, FPL_ENOMEM.
 */
FPL_API int fpl_trainer_create(fpl_trainer **out, const fpl_train_config *cfg,
			       const fpl_train_policy *pol);
FPL_API void fpl_trainer_free(fpl_trainer *t);

/*
 * One epoch over ds (ds->d == sizes[0], labels < sizes[L]): the examples
 * in the order of a permutation drawn from (seed, epoch) (Fisher-Yates on
 * fplab's generator: the same order for every policy; epoch counts this
 * trainer's completed epochs from 0; for i = n-1 down to 1, swap i with
 * j = floor(d * (i+1) / 2^64), d = fpl_random_draw(seed, a permutation
 * stream + epoch, i)), in minibatches of
 * B (the last, shorter batch dropped), each one step as above.  Stats
 * are added into *st (may be NULL).  progress (may be NULL) is called
 * after each step with (ctx, done, total).  Returns 0 or an error.
 */
FPL_API int fpl_trainer_epoch(fpl_trainer *t, const fpl_dataset *ds, fpl_train_stats *st,
			      void (*progress)(void *ctx, size_t done, size_t total),
			      void *ctx);

/* One step on the B examples rows[0..B) of ds (a test hook and the
 * building block of fpl_trainer_epoch).  FPL_EINVAL for a row out of
 * range, a label >= sizes[L] or ds->d != sizes[0]; the library's errors
 * otherwise. */
FPL_API int fpl_trainer_step(fpl_trainer *t, const fpl_dataset *ds, const size_t *rows,
			     fpl_train_stats *st);

/*
 * Accuracy and mean loss on ds with the current stored weights: the
 * forward pass of the policy (one node, batches of B, the last one
 * shorter), prediction = the first largest logit (NaN logits never
 * win; all NaN is wrong), loss = the mean over the examples of the
 * step's per-example loss.  Returns 0 or an error.
 */
FPL_API int fpl_trainer_evaluate(fpl_trainer *t, const fpl_dataset *ds, double *accuracy,
				 double *loss);

/* The stored weights of layer l (1..L): W (sizes[l] x sizes[l-1]) and b;
 * NULL for l out of range.  Valid until the next step. */
FPL_API const double *fpl_trainer_weights(const fpl_trainer *t, size_t l);
FPL_API const double *fpl_trainer_bias(const fpl_trainer *t, size_t l);

#ifdef __cplusplus
}
#endif
#endif
