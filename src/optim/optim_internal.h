/* SPDX-License-Identifier: MIT */
/*
 * optim_internal.h - the private side of fplab/optim.h: the optimizer
 * object, the tensor record, the array arithmetic with its binary64
 * fast path, and the pieces a step is made of (scaler, optimizers,
 * strategies).
 *
 * The invariant a reader must know: every rounding of tensor j goes
 * through one of the opt__* array operations below on that tensor's own
 * state T->st, one draw per element per rounding, in the order of the
 * header's formulas, so the bits never depend on threads; the binary64
 * fast path advances the counter and counts flags exactly as the engine
 * would.
 */
#ifndef FPLAB_OPTIM_INTERNAL_H
#define FPLAB_OPTIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/optim.h>

/* Scratch buffers of a step, nmax elements each. */
enum {
	SCR_G = 0,	/* unscaled gradient g */
	SCR_D,		/* d */
	SCR_U,		/* u */
	SCR_A,		/* temporaries */
	SCR_B,
	SCR_C,
	SCR_K,		/* a broadcast constant */
	SCR_M,		/* split: the recombined master during a step */
	SCR_W0,		/* the carrying weight at the start of the step */
	SCR_W1,		/* kahan: c at the start; fp32-master, split: the stored weight */
	SCR_COUNT
};

typedef struct opt_tensor {
	size_t n;
	int nd;			/* its dims for block slots: [1, n] when not given */
	size_t dims[FPL_BLOCK_MAX_DIMS];
	fpl_state st;		/* fpl_state_fork(st, ., j) */
	double *w;		/* stored weights, values of `weight` */
	double *m;		/* fp32-master: the master; kahan: the compensation c */
	void *trail;		/* split: the low bits of the master, trail_bytes each */
	double *s1, *s2;	/* optimizer state: momentum / sum / m, and v */
	double *gs;		/* this step's scaled gradients (values of `grad`) */
	double scale;		/* S of this step */
} opt_tensor;

struct fpl_optim {
	fpl_opt_config cfg;
	fpl_format gcast;	/* `grad` without DAZ: the cast rounds the exact G*S */
	size_t nt, nmax;
	opt_tensor *T;
	double *scr[SCR_COUNT];
	unsigned char *nz;	/* per element: u's exact value is nonzero */
	double *gsbuf;		/* every tensor's gs, one block */
	uint64_t t;		/* steps taken (not skipped) */
	double scale;		/* const, dynamic: S of the next step */
	uint32_t tracker;	/* dynamic: consecutive steps without a skip */
	int trail_bits, trail_bytes;	/* split */
	fpl_block_stats bstat[FPL_OPT_NSLOTS];	/* this step's block events */
};

/* ---------------------------------------------------------------- arith.c */
/*
 * z = a op b (c) over n elements rounded into f in rnd with st: exactly
 * fpl_*_array (same bits, flags, counts, counter advance), computed in
 * plain C when f is plain IEEE binary64, rnd ne, st has no flips and
 * the C environment rounds to nearest without FTZ/DAZ (exact IEEE
 * operations; inexact detected by error-free transforms, any other lane
 * handed to the engine), unless FPLAB_OPTIM is "ref" (an FPLAB_OPTIM
 * other than "", "auto" or "ref": FPL_ENOTFOUND).  The _k variants take
 * a constant for b, broadcast through the scratch buffer k (nmax
 * elements).
 */
int opt__fast64(const fpl_format *f, fpl_rnd rnd, const fpl_state *st);
int opt__add(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n);
int opt__sub(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n);
int opt__mul(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n);
int opt__div(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, size_t n);
int opt__sqrt(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	      size_t n);
int opt__fma(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	     const double *b, const double *c, size_t n);
int opt__round(const fpl_format *f, fpl_rnd r, fpl_state *st, double *z, const double *a,
	       size_t n);
/* The constant c as an array of n in k. */
const double *opt__bcast(double *k, double c, size_t n);

/* ---------------------------------------------------------------- block.c */
/* Slot s's block format, or NULL when the slot is plain. */
const fpl_block_format *opt__block(const fpl_opt_policy *p, int s);
/* z = x stored into slot s: rounded into f in r (plain) or quantized as
 * blocks of s's format over T's dims, elements in r (block), with T's
 * draws counter .. counter+n-1 either way.  z may alias x. */
int opt__store(fpl_optim *o, opt_tensor *T, int s, const fpl_format *f, fpl_rnd r, double *z,
	       const double *x);
/* The exact a - b, a*b and fma(a, b, c) held in binary64 rounded to odd,
 * for a block slot to quantize (no draw, no flag, T's state untouched). */
int opt__odd_sub(opt_tensor *T, double *z, const double *a, const double *b);
int opt__odd_mul(opt_tensor *T, double *z, const double *a, const double *b);
int opt__odd_fma(opt_tensor *T, double *z, const double *a, const double *b, const double *c);

/* ---------------------------------------------------------------- policy.c */
int opt__validate(const fpl_opt_config *c);
/* 1 when f is a format `split` can pair with binary32. */
int opt__split_ok(const fpl_format *w);
/* Number of optimizer state tensors. */
int opt__nstate(const fpl_opt_hyper *h);

/* ---------------------------------------------------------------- scaler.c */
/* Choose each tensor's S, cast G (or copy gs), count the nonfinite
 * scaled gradients; returns 0 or an error. */
int opt__cast(fpl_optim *o, const double *const *G, int prescaled, uint64_t *nonfinite);
/* g = gs / S rounded into unscale, into scr[SCR_G]. */
int opt__unscale(fpl_optim *o, opt_tensor *T);
/* The dynamic scale after a step (skipped or not). */
void opt__scale_update(fpl_optim *o, int skipped);

/* ---------------------------------------------------------------- strategy.c */
/* The weight the optimizer reads (the master when there is one); for
 * split the master is recombined into scr[SCR_M] first. */
double *opt__begin(fpl_optim *o, opt_tensor *T);
/* w = w - u (u in scr[SCR_U]), or, with decay, w = w - k*w (one rounding). */
int opt__apply(fpl_optim *o, opt_tensor *T, double *wc, const double *u);
int opt__apply_decay(fpl_optim *o, opt_tensor *T, double *wc, double k);
/* The stored weight w from the master m (fp32-master): rounded into
 * `weight`, or block-rounded over the tensor's rows. */
int opt__derive(fpl_optim *o, opt_tensor *T);
/* Derive the stored weight from the master, and count. */
int opt__end(fpl_optim *o, opt_tensor *T, const double *wc, fpl_opt_report *rep);
/* Split a binary32 value into its stored weight and trail, and back. */
void opt__split(const fpl_optim *o, double m, double *w, void *trail, size_t i);
double opt__recombine(const fpl_optim *o, double w, const void *trail, size_t i);

/* ---------------------------------------------------------------- the optimizers */
/* Each computes u into scr[SCR_U] and the nonzero mask o->nz from
 * g = scr[SCR_G] and the carrying weight wc, updating the state. */
int opt__sgd(fpl_optim *o, opt_tensor *T, const double *wc);
int opt__adagrad(fpl_optim *o, opt_tensor *T, const double *wc);
int opt__adam(fpl_optim *o, opt_tensor *T, const double *wc, double wd);
int opt__lamb(fpl_optim *o, opt_tensor *T, const double *wc);
/* Adam's m and v from d = scr[SCR_D] (adam.c; LAMB shares it). */
int opt__moments(fpl_optim *o, opt_tensor *T);
/* d = g + wd*w into scr[SCR_D] (a copy of g when wd is 0). */
int opt__decay_grad(fpl_optim *o, opt_tensor *T, const double *wc, double wd);
/* nz[i] = (c != 0 && x[i] != 0): the exact product c*x[i] is nonzero. */
void opt__mark(fpl_optim *o, double c, const double *x, size_t n);

#endif
