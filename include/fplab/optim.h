/* SPDX-License-Identifier: MIT */
/*
 * fplab/optim.h - optimizer steps under a precision policy: SGD,
 * Adagrad, Adam, AdamW and LAMB; master-weight strategies (none, an fp32
 * master copy, Split SGD, Kahan-compensated weights, stochastic
 * rounding); constant, dynamic and APS loss scaling.
 *
 * An fpl_optim holds the weights of a set of tensors (a model's layers),
 * the optimizer state and the loss scaler.  Each step takes one gradient
 * per weight and updates everything as a training loop on the simulated
 * hardware would; the report says what the step lost.
 *
 * ------------------------------------------------------------ arithmetic
 * Every operation of the update formulas below is ONE rounding into the
 * arithmetic format `arith` in arith_rnd, with the operands as stored
 * (values of their formats) and the hyperparameters (lr, betas, eps,
 * weight decay, 1 - beta, bias corrections, the Adagrad step size) used
 * as exact binary64 constants: fpl_mul(arith, lr, d) rounds the exact
 * product lr*d once.  Hyperparameter expressions (1 - beta1^t, lr /
 * (1 + (t-1)*lr_decay), sqrt(1 - beta2^t)) are computed in binary64 and
 * then used as constants, as PyTorch computes them in Python floats.
 * State tensors (momentum, Adagrad's sum, Adam's m and v) are rounded
 * into `state` in state_rnd when they are stored; a value read back is
 * that stored value.  A binary64 policy (every format binary64, ne,
 * master none, no scaling) is the FP64 reference: it computes each
 * formula in plain binary64 arithmetic, operation by operation in the
 * order written below.
 *
 * ------------------------------------------------------------ optimizers
 * t is the step number, 1 for the first step that is not skipped; g the
 * gradient after unscaling (below), w the weight the optimizer reads
 * (the master when there is one), lr the learning rate, wd the weight
 * decay.  Each optimizer produces an update u (the amount subtracted
 * from w); "w - u" is then applied by the strategy (Strategies).  The
 * formulas are PyTorch 2.x's (torch.optim, foreach=False, maximize=False,
 * amsgrad=False, differentiable=False), LAMB's is the paper's:
 *  sgd      d = g + wd*w (when wd != 0); with momentum mu != 0:
 *           b = d at t = 1, else b = mu*b + (1 - dampening)*d (stored in
 *           state); then d = d + mu*b with nesterov, d = b without;
 *           u = lr*d.
 *  adagrad  clr = lr / (1 + (t - 1)*lr_decay); d = g + wd*w (wd != 0);
 *           s = s + d*d (s starts at initial_accumulator_value, stored
 *           in state); den = sqrt(s) + eps; u = clr * (d / den).
 *           (PyTorch: std = sum.sqrt().add_(eps); param.addcdiv_(grad,
 *           std, value=-clr).)
 *  adam     d = g + wd*w (wd != 0); m = m + (1 - beta1)*(d - m) (PyTorch's
 *           lerp); v = beta2*v + (1 - beta2)*d*d (as mul_ then addcmul_:
 *           (1 - beta2)*d, times d, added to beta2*v); bc1 = 1 - beta1^t,
 *           bc2s = sqrt(1 - beta2^t) (binary64 constants);
 *           den = sqrt(v) / bc2s + eps; u = (lr / bc1) * (m / den).
 *           eps is added after the square root and the bias correction,
 *           as PyTorch does (not inside the root).
 *  adamw    first w = w - (lr*wd)*w applied by the strategy as its own
 *           update (PyTorch: param.mul_(1 - lr*wd), which rounds w*(1 -
 *           lr*wd) once; fplab rounds w - (lr*wd)*w once, the same real
 *           number; skipped when lr*wd is 0), then adam with wd = 0 on the
 *           decayed w.
 *  lamb     m, v as adam (wd not added to g); mh = m / bc1, vh = v /
 *           bc2 (bc2 = 1 - beta2^t); r = mh / (sqrt(vh) + eps);
 *           q = r + wd*w; trust = ||w|| / ||q|| when both norms are
 *           nonzero, else 1 (norms over the tensor, each s = fma(x_i,
 *           x_i, s) in arith in index order from +0, one rounding per
 *           term with the square exact, then one sqrt; the division
 *           one rounding); u = (lr*trust) * q, lr*trust one rounding.
 *           (You et al., "Large batch optimization for deep learning",
 *           2020, Algorithm 2 with bias correction and phi = identity.)
 * Draws: roundings of tensor j use the stream fpl_state_fork(st, ., j)
 * of the state given at creation, one draw per element per rounding in
 * the order of the formulas, so stochastic results never depend on
 * threads.
 *
 * ------------------------------------------------------------ strategies
 *  none         w is stored in `weight`; w' = w - u rounded into weight
 *               in weight_rnd.  The update arithmetic and state use the
 *               policy's formats (an fp16-only optimizer: all fp16).
 *  fp32-master  a master copy M in `master` (binary32 by default); M' =
 *               M - u rounded into master in ne; the stored weight is M'
 *               rounded into weight in weight_rnd.
 *  split        Split SGD: the master is binary32 and the weight the
 *               format `weight` that shares its exponent field (bf16 for
 *               binary32): the stored weight is the master truncated (tz)
 *               to the weight's precision and the trail the remaining low
 *               bits (16 for bf16); a step recombines them (exactly the
 *               master), computes M' = M - u in ne as fp32-master does,
 *               and splits M' again.  Its master is bit for bit
 *               fp32-master's; only the stored weight differs (tz
 *               instead of weight_rnd).
 *  kahan        w and a compensation c, both in `weight` in weight_rnd:
 *               y = -u - c; s = w + y; c = (s - w) - y; w = s (Kahan
 *               summation of the updates; each operation one rounding
 *               into weight).
 *  stochastic   as none with w' = w - u rounded in weight_sr (sp or se).
 *
 * ------------------------------------------------------------ scaling
 * fpl_optim_step takes the true gradients G (binary64) and models the
 * backward pass of a scaled loss: the gradient the optimizer receives is
 * G*S rounded into `grad` in grad_rnd (one rounding of the exact
 * product); it is unscaled by g = gs / S rounded into `unscale` in
 * unscale_rnd (one rounding) before the optimizer reads it.  S is 1
 * (none), the constant S, the dynamic scale, or per tensor 2^k with
 * APS's k (fpl_ar_aps_shift with comm = grad and one node: the largest
 * power of two that keeps max|G| finite in grad; clamped to [-1022,
 * 1023] so that 2^k is a binary64 normal; the cast is
 * fpl_ar_round_cast's).  With S = 1 (none)
 * the unscale is still a rounding into `unscale` (an identity when grad
 * fits in unscale).
 * Dynamic scaling (PyTorch's GradScaler semantics): when any scaled
 * gradient of any tensor is inf or NaN the step is skipped (weights,
 * master and state untouched, t not advanced) and S = S*backoff;
 * otherwise the step runs and, after growth_interval consecutive steps
 * without a skip, S = S*growth.  A skipped step's casts have taken
 * their draws and counted their flags (grad_count).  Constant scaling never skips (an inf
 * reaches the optimizer).
 *
 * ------------------------------------------------------------ block formats
 * The storage slots weight, master, grad and state may hold a block
 * format (fplab/block.h): where the plain slot rounds a tensor into its
 * format, the block slot quantizes the tensor with fpl_block_round (the
 * slot's mode rounds the elements; stats into the report's block[slot])
 * over the tensor's dims (fpl_opt_config.shapes, else rows of cols,
 * else one row), so blocks of B run along the last axis unless the
 * block format says otherwise.  A block rounding of tensor j takes the
 * draws counter .. counter+n-1 of its stream and advances it by n, as
 * the plain rounding it replaces does, so stochastic rounding of
 * elements never depends on threads.  Where the plain slot rounds the
 * exact result of one operation (the cast G*S, the master's M - u, the
 * weight's w - u and w - k*w of none and stochastic), the block slot
 * quantizes that result held in binary64 rounded to odd (no draw, no
 * flag): exact when it fits binary64 (G*S with S a power of two, as
 * every dynamic and APS scale and S = 1), and otherwise, for the
 * power-of-two scale rules (floor, ceil, even, rceil) and elements of at
 * most 51 significant bits (and p + R <= 52 for sp), quantized as the exact value would be (the odd
 * value lies in the same binade and on the same side of every midpoint
 * of the coarser grids; number.c's "reading a number once" argument);
 * the amax rule's scale and quotients see the odd value.  The state
 * slot quantizes the stored momentum, sum, m and v (values of arith)
 * at the points where the plain slot rounds them into state.  The
 * stored weight of fp32-master is the master quantized in weight_rnd.
 * The arithmetic slots (arith, unscale) take no block format: each
 * rounds the result of one scalar operation, which a block's scale, a
 * function of a whole block of stored values, cannot define.  Nor do
 * kahan (its compensation is arithmetic in the weight format) and split
 * (its weight is binary32's top bits); a block master needs
 * fp32-master; a block grad refuses APS scaling (the block scales carry
 * what APS's shift would: its k is a plain format's).  With a block grad
 * the scaled gradients are block values: inf and NaN only in blocks (NaN
 * blocks) where G*S held in binary64 has one, so dynamic scaling skips on those and never on a
 * block's saturation (counted in block[FPL_OPT_SLOT_GRAD]).
 */
#ifndef FPLAB_OPTIM_H
#define FPLAB_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/block.h>
#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_opt_algo {
	FPL_OPT_SGD = 0,
	FPL_OPT_ADAGRAD,
	FPL_OPT_ADAM,
	FPL_OPT_ADAMW,
	FPL_OPT_LAMB,
	FPL_OPT_COUNT
} fpl_opt_algo;

/* "sgd", "adagrad", "adam", "adamw", "lamb". */
FPL_API const char *fpl_opt_algo_name(fpl_opt_algo a);
FPL_API int fpl_opt_algo_parse(const char *s, fpl_opt_algo *out);

typedef struct fpl_opt_hyper {
	fpl_opt_algo algo;
	double lr;		/* >= 0 */
	double weight_decay;	/* >= 0; L2 on the gradient (sgd, adagrad, adam),
				 * decoupled (adamw, lamb) */
	double momentum;	/* sgd: >= 0 */
	double dampening;	/* sgd */
	int nesterov;		/* sgd: needs momentum > 0 and dampening 0 */
	double lr_decay;	/* adagrad: >= 0 */
	double initial_accumulator_value;	/* adagrad: >= 0 */
	double beta1, beta2;	/* adam, adamw, lamb: in [0, 1) */
	double eps;		/* adagrad, adam, adamw, lamb: >= 0 */
} fpl_opt_hyper;

/* PyTorch's defaults for `algo`, lr included (sgd 1e-3 as fplab's
 * default; adagrad 1e-2; adam, adamw 1e-3; lamb 1e-3), momentum 0,
 * dampening 0, nesterov 0, weight decay 0 (adamw 1e-2, lamb 0), lr_decay
 * 0, initial_accumulator_value 0, betas 0.9 and 0.999, eps 1e-10 for
 * adagrad, 1e-8 for adam and adamw, 1e-6 for lamb. */
FPL_API void fpl_opt_hyper_init(fpl_opt_hyper *h, fpl_opt_algo algo);

typedef enum fpl_opt_master {
	FPL_MASTER_NONE = 0,
	FPL_MASTER_FP32,	/* "fp32-master" */
	FPL_MASTER_SPLIT,	/* "split" */
	FPL_MASTER_KAHAN,	/* "kahan" */
	FPL_MASTER_STOCHASTIC,	/* "stochastic" */
	FPL_MASTER_COUNT
} fpl_opt_master;

FPL_API const char *fpl_opt_master_name(fpl_opt_master m);
FPL_API int fpl_opt_master_parse(const char *s, fpl_opt_master *out);

/* The precision policy of a step. */
typedef struct fpl_opt_policy {
	fpl_opt_master master;
	fpl_format weight;	/* stored weights */
	fpl_rnd weight_rnd;	/* none, kahan: the update's rounding; fp32-master: how
				 * the stored weight is derived; split: ignored (tz) */
	fpl_rnd weight_sr;	/* stochastic: sp or se */
	fpl_format master_fmt;	/* fp32-master and split: binary32 (split requires
				 * a master that extends `weight` with the same
				 * exponent field: bf16 in binary32) */
	fpl_format grad;	/* gradients as the backward pass stores them */
	fpl_rnd grad_rnd;
	fpl_format unscale;	/* unscaled gradients */
	fpl_rnd unscale_rnd;
	fpl_format state;	/* momentum, Adagrad's sum, Adam's m and v */
	fpl_rnd state_rnd;
	fpl_format arith;	/* every operation of the update */
	fpl_rnd arith_rnd;
	/*
	 * Block formats (fplab/block.h) in the storage slots, each "the
	 * tensor is stored as blocks": with X_is_block = 1 the slot's plain
	 * format holds X_block's element format and its mode rounds the
	 * elements (section "block formats" above says where and how).
	 */
	int weight_is_block;	/* none, stochastic, fp32-master (kahan and split:
				 * FPL_EINVAL) */
	fpl_block_format weight_block;
	int master_is_block;	/* fp32-master only; elements in ne */
	fpl_block_format master_block;
	int grad_is_block;	/* not with APS scaling (FPL_EINVAL) */
	fpl_block_format grad_block;
	int state_is_block;
	fpl_block_format state_block;
} fpl_opt_policy;

/*
 * The policy a strategy implies for a weight format, the one `fplab
 * optim --policy STRATEGY:FORMAT` uses:
 *   none, kahan, stochastic: every format (grad, unscale, state, arith)
 *     is `weight`, every mode ne (weight_sr sp);
 *   fp32-master, split: grad = weight (the backward pass's storage),
 *     unscale, state, arith and master binary32, modes ne.
 * weight_rnd ne.  Returns 0, FPL_EINVAL (NULL, master out of range) or
 * FPL_EFORMAT (split with a weight that is not a prefix of binary32:
 * exponent field other than 8 bits or m >= 23, or a non-IEEE format).
 */
FPL_API int fpl_opt_policy_preset(fpl_opt_policy *p, fpl_opt_master master,
				  const fpl_format *weight);

/*
 * The same for a block-format weight w (fplab/block.h): weight = w; grad
 * = w (the backward pass's storage, as above); state = w for none and
 * stochastic ("every format is the weight's"), binary32 for fp32-master;
 * arith and unscale binary32 for every strategy (an arithmetic slot
 * takes no block format: a block's scale is a function of the whole
 * block, not of one operation's result); master binary32; modes ne
 * (weight_sr sp).  Returns 0, FPL_EINVAL (NULL, master out of range,
 * kahan: its compensation is operations in the weight's format) or
 * FPL_EFORMAT (split: its weight is the top bits of a binary32 master;
 * an invalid w).
 */
FPL_API int fpl_opt_policy_preset_block(fpl_opt_policy *p, fpl_opt_master master,
					const fpl_block_format *w);

/* The FP64 reference: every format binary64, ne, master none. */
FPL_API void fpl_opt_policy_reference(fpl_opt_policy *p);

typedef enum fpl_opt_scaling {
	FPL_OPT_SCALE_NONE = 0,
	FPL_OPT_SCALE_CONST,	/* constant S */
	FPL_OPT_SCALE_DYNAMIC,	/* GradScaler */
	FPL_OPT_SCALE_APS	/* per tensor 2^k from max|G| */
} fpl_opt_scaling;

typedef struct fpl_opt_scaler {
	fpl_opt_scaling kind;
	double scale;		/* constant: S; dynamic: the initial scale (> 0, finite) */
	double growth;		/* dynamic: > 1 (PyTorch 2.0) */
	double backoff;		/* dynamic: in (0, 1) (PyTorch 0.5) */
	uint32_t interval;	/* dynamic: >= 1 (PyTorch 2000) */
} fpl_opt_scaler;

/* none, scale 65536, growth 2, backoff 0.5, interval 2000 (GradScaler's
 * defaults, used when kind is set to dynamic). */
FPL_API void fpl_opt_scaler_init(fpl_opt_scaler *s);

/* The loss scaling spelled s into *sc:
 *   none                 no scaling
 *   S                    a constant S, a finite number > 0
 *   dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]]
 *                        GradScaler, the fields not given at
 *                        fpl_opt_scaler_init's defaults: INIT finite > 0,
 *                        GROWTH finite > 1, BACKOFF in (0, 1), INTERVAL a
 *                        decimal count 1..2^32-1; no field is empty
 *   aps                  per tensor 2^k from max|G|
 * Numbers are strtod's (no leading space; hexadecimal floats too).
 * Returns 0, FPL_EINVAL (NULL sc or s), FPL_ENOTFOUND (a word other than
 * none, dynamic and aps before the first ':') or FPL_EPARSE, with a
 * one-line message in err (when errlen > 0) that quotes s and does not
 * name an option; *sc is unchanged on error. */
FPL_API int fpl_opt_scaler_parse(fpl_opt_scaler *sc, const char *s, char *err, size_t errlen);

/* A tensor's dims (row-major), for the block grid of block slots. */
typedef struct fpl_opt_shape {
	int ndims;			/* 1..FPL_BLOCK_MAX_DIMS */
	size_t dims[FPL_BLOCK_MAX_DIMS];
} fpl_opt_shape;

typedef struct fpl_opt_config {
	fpl_opt_hyper hyper;
	fpl_opt_policy policy;
	fpl_opt_scaler scaler;
	int threads;		/* 0 or 1: one; the bits never depend on it */
	const size_t *cols;	/* NULL, or per tensor the length of its last axis (a
				 * divisor of its size): the tensor is rows x cols;
				 * read by fpl_optim_create only */
	const fpl_opt_shape *shapes;	/* NULL, or per tensor its dims (their product
				 * its size); takes precedence over cols; read by
				 * fpl_optim_create only.  Neither: one row of n.  A
				 * 1-D shape [n] is the row [1, n] */
} fpl_opt_config;

/* sgd defaults, the reference policy, no scaling, one thread. */
FPL_API void fpl_opt_config_init(fpl_opt_config *c);

/*
 * Memory per parameter, in bytes, of a policy for an optimizer: the
 * stored weight (ceil(nbits/8) of `weight`), the master or its
 * equivalent (fp32-master: the master's ceil(nbits/8); split: the
 * trail, master bits minus weight bits, in bytes; kahan: the
 * compensation, one weight; none, stochastic: 0) and the optimizer state
 * (number of state tensors times ceil(nbits/8) of `state`: sgd 1 with
 * momentum, else 0; adagrad 1; adam, adamw, lamb 2).  Gradients are not
 * counted.  A block slot (weight, master, state) counts fpl_block_bits /
 * 8 of its nominal block, scales included (mxfp8: 1.03125), or its
 * element's bits / 8 when that depends on the tensor (row, col, tensor).
 */
typedef struct fpl_opt_memory {
	double weight, master, state, total;
} fpl_opt_memory;
FPL_API void fpl_opt_memory_per_param(const fpl_opt_config *c, fpl_opt_memory *m);

typedef struct fpl_optim fpl_optim;

/*
 * A new optimizer over `ntensors` tensors of sizes[j] elements whose
 * initial weights are w0[j] (binary64 values): each is rounded into the
 * master format (fp32-master, split) in ne and the stored weight derived
 * from it, or rounded into `weight` in weight_rnd (none, kahan,
 * stochastic; c = +0); these roundings, then Adagrad's nonzero
 * initial_accumulator_value rounded into `state`, take the first draws
 * of each tensor's stream, n per rounding.  `st` supplies the seed and the parent stream of
 * the per-tensor forks and receives nothing (each tensor's state is its
 * own; fpl_optim_flags gathers them).  Returns 0, FPL_EINVAL (NULL, a
 * hyperparameter outside its range, a mode out of range, a scaler outside
 * its range) FPL_EFORMAT (as fpl_opt_policy_preset for split) or
 * FPL_ENOMEM; *out is NULL on error.
 */
FPL_API int fpl_optim_create(fpl_optim **out, const fpl_opt_config *cfg, size_t ntensors,
			     const size_t *sizes, const double *const *w0, const fpl_state *st);
FPL_API void fpl_optim_free(fpl_optim *o);

/* The storage slots that may hold a block format, indexing the report. */
typedef enum fpl_opt_slot {
	FPL_OPT_SLOT_WEIGHT = 0,
	FPL_OPT_SLOT_MASTER,
	FPL_OPT_SLOT_GRAD,
	FPL_OPT_SLOT_STATE,
	FPL_OPT_NSLOTS
} fpl_opt_slot;

/* What one step did. */
typedef struct fpl_opt_report {
	int skipped;		/* dynamic scaling found an inf or NaN */
	double scale;		/* S used for this step's gradients (APS: of tensor 0) */
	double next_scale;	/* S for the next step */
	uint64_t t;		/* the optimizer's step count after this step */
	uint64_t params;	/* elements (0 when skipped) */
	uint64_t nonzero;	/* elements whose update was nonzero: u's exact
				 * value (the last multiplication by lr before its
				 * rounding, or the decoupled decay) is not zero */
	uint64_t vanished;	/* of those, elements whose weight did not change:
				 * the master (fp32-master, split), w and c (kahan),
				 * w (none, stochastic); equal as values, bit for bit
				 * including the sign of zero */
	uint64_t stale;		/* elements whose stored weight did not change
				 * although the master did (fp32-master, split) */
	uint64_t nonfinite;	/* scaled gradients that are inf or NaN */
	uint64_t grad_count[FPL_NFLAGS];	/* flags of the gradient roundings
						 * (scaled cast and unscale) */
	uint64_t update_count[FPL_NFLAGS];	/* flags of every other rounding */
	fpl_block_stats block[FPL_OPT_NSLOTS];	/* this step's block events per
						 * block slot (all zero for a plain
						 * slot; a skipped step's cast too) */
} fpl_opt_report;

/*
 * One step with the true gradients G[j] (sizes[j] binary64 values each):
 * scaled, rounded into grad, checked, unscaled, then the optimizer and
 * the strategy, as above.  rep may be NULL.  Returns 0, FPL_EINVAL (NULL
 * G with elements) or FPL_ENOMEM (nothing changed).
 */
FPL_API int fpl_optim_step(fpl_optim *o, const double *const *G, fpl_opt_report *rep);

/*
 * One step with gradients the caller already scaled by fpl_optim_scale()
 * and stored in `grad` (a training loop's backward pass did both): the
 * check, unscale and update as fpl_optim_step, without the cast.  APS
 * scaling is per step and needs the true gradients: FPL_EINVAL here.
 */
FPL_API int fpl_optim_step_scaled(fpl_optim *o, const double *const *gs, fpl_opt_report *rep);

/* The loss scale the next step uses (1 for none; APS: 1). */
FPL_API double fpl_optim_scale(const fpl_optim *o);

/* The stored weights of tensor j (values of `weight`), valid until the
 * next step or fpl_optim_free; NULL for j out of range. */
FPL_API const double *fpl_optim_weights(const fpl_optim *o, size_t j);

/* The weight that carries the updates, into out (sizes[j] values): the
 * master (fp32-master; split: recombined), w (none, stochastic, kahan:
 * w, not w - c).  FPL_EINVAL for j out of range. */
FPL_API int fpl_optim_master(const fpl_optim *o, size_t j, double *out);

/* Sticky flags and counts of every rounding so far, all tensors. */
FPL_API void fpl_optim_flags(const fpl_optim *o, unsigned *flags, uint64_t count[FPL_NFLAGS]);

#ifdef __cplusplus
}
#endif
#endif
