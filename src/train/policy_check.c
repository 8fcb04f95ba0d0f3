/* SPDX-License-Identifier: MIT */
/*
 * policy_check.c - fpl_train_policy_check: does a policy fit a run, so
 * that no step can fail on it?  Every model that takes an input as given
 * (":given", or a profile: no rounding on load) must be handed only
 * values of its format, so the format the trainer stores that input in
 * (act, grad, weight; the biases too, which start the forward GEMM's
 * chains in the running sum's format) must be a subset of it; and the
 * keys a step cannot honour (APS loss scaling, a hier group that does not
 * divide the nodes) are refused with the key and the reason.
 *
 * The invariant: the subset test is exact for the formats fplab makes
 * (sign-symmetric, a grid of 2^m values per binade): a finite value of a
 * binade E of `src` is in `dst` when the binade's largest value (all m
 * fraction bits set, or the format's max in its top binade) is, and the
 * subnormals of `src` are when its largest and smallest subnormals are;
 * infinity and NaN are probed themselves.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <fplab/error.h>
#include <fplab/ops.h>

#include "train/train_internal.h"
#include "util/errmsg.h"

#define fail fpl__fail

/* x rounds to itself in f (as a given load reads it: a flushing format
 * holds its subnormals, DAZ does not make them non-values). */
static int holds(const fpl_format *f, double x)
{
	fpl_format g = *f;
	fpl_state s;
	double y;

	if (g.subnormal == FPL_SUB_FTZ)
		g.subnormal = FPL_SUB_YES;
	g.daz = 0;
	if (fpl_format_finish(&g))
		return 0;
	fpl_state_init(&s, 0);
	y = fpl_round(&g, x, FPL_RND_NE, &s);
	return isnan(x) ? isnan(y) : y == x;
}

/* Is every value src can hold (finite, inf, NaN) a value of dst? */
static int subset(const fpl_format *src, const fpl_format *dst)
{
	int e;

	if (holds(src, INFINITY) && !holds(dst, INFINITY))
		return 0;
	if (holds(src, NAN) && !holds(dst, NAN))
		return 0;
	if (!holds(dst, src->max) || !holds(dst, src->min_normal))
		return 0;
	if (src->min_subnormal < src->min_normal	/* subnormals: the grid, the largest */
	    && (!holds(dst, src->min_subnormal)
		|| !holds(dst, src->min_normal - src->min_subnormal)))
		return 0;
	for (e = src->emin; e <= src->emax; e++) {
		double top = ldexp(2 - ldexp(1, -src->m), e);

		if (top > src->max)
			top = src->max;
		if (!holds(dst, top))
			return 0;
	}
	return 1;
}

/* The profile a model is, into name (empty when none). */
static void profile_of(const fpl_accum_model *m, char *name, size_t size)
{
	char buf[512];

	name[0] = 0;
	if (!fpl_accum_describe(m, buf, sizeof buf) && !strncmp(buf, "--profile ", 10))
		snprintf(name, size, "%.*s", (int)strcspn(buf + 10, " "), buf + 10);
}

/* One given input: model `key` (fwd, bwd, red), its input `in` (a or b;
 * "acc" for the bias that starts each chain, loaded as given into the
 * running sum's format when a is given) of format dst, fed the values of
 * `what`, stored in src (key `skey`). */
static int given(const fpl_accum_model *m, const char *key, const char *in,
		 const fpl_format *dst, const char *what, const char *skey,
		 const fpl_format *src, char *err, size_t errlen)
{
	char prof[64], how[96], fix[96];

	if (subset(src, dst))
		return 0;
	profile_of(m, prof, sizeof prof);
	if (prof[0])
		snprintf(how, sizeof how, "%s.profile %s", key, prof);
	else if (!strcmp(in, "acc"))
		snprintf(how, sizeof how, "%s.a = %s:given", key, m->a.name);
	else
		snprintf(how, sizeof how, "%s.%s = %s:given", key, in, dst->name);
	if (!strcmp(in, "acc"))
		snprintf(fix, sizeof fix, "round the inputs (%s.a = %s)", key, m->a.name);
	else
		snprintf(fix, sizeof fix, "let %s round them (%s.%s = %s)", key, key, in,
			 dst->name);
	return fail(err, errlen, FPL_EINVAL,
		    "%s takes %s as given %s values (%s: no rounding), but %s = %s has values "
		    "%s lacks: set %s = %s (or a format within it), or %s", key, what, dst->name,
		    how, skey, src->name, dst->name, skey, dst->name, fix);
}

/* The running sum's format, into which a GEMM loads C: promo for the
 * blocked order and pairs:B, acc otherwise (accum.h). */
static const fpl_format *sum_format(const fpl_accum_model *m)
{
	return m->order == FPL_ORDER_BLOCKED || (m->order == FPL_ORDER_PAIRS && m->pair_block)
	       ? &m->promo : &m->acc;
}

/*
 * Block formats (fplab/block.h): a block weight goes with none,
 * stochastic or fp32-master and a block master with fp32-master (the
 * optimizer's rule, fplab/optim.h); a block comm format scales itself, so
 * comm-scale must be none; and a GEMM input loaded as given must already
 * be a value of its format, which block-dequantized values are not (they
 * are element times scale), so a model that loads as given is refused
 * beside any block slot.
 */
static int block_check(const fpl_train_policy *p, char *err, size_t errlen)
{
	int any = p->act_block.on || p->grad_block.on || p->fwd_ops.a.on || p->fwd_ops.b.on
		  || p->bwd_ops.a.on || p->bwd_ops.b.on || p->opt.weight_is_block;

	if (p->opt.weight_is_block && (p->opt.master == FPL_MASTER_KAHAN
				       || p->opt.master == FPL_MASTER_SPLIT))
		return fail(err, errlen, FPL_EINVAL, "weight: the block format %s takes master = "
			    "none, stochastic or fp32-master; %s keeps %s",
			    p->opt.weight_block.name, fpl_opt_master_name(p->opt.master),
			    p->opt.master == FPL_MASTER_SPLIT
			    ? "the weight as the top bits of a binary32 master"
			    : "a compensation computed in the weight's format");
	if (p->opt.master_is_block && p->opt.master != FPL_MASTER_FP32)
		return fail(err, errlen, FPL_EINVAL, "master-format: the block format %s needs "
			    "master = fp32-master (a master copy stored as blocks), not %s",
			    p->opt.master_block.name, fpl_opt_master_name(p->opt.master));

	if (p->comm.comm_is_block && p->comm.scaling != FPL_AR_SCALE_NONE)
		return fail(err, errlen, FPL_EINVAL, "comm: the block format %s carries its own "
			    "scales; comm-scale must be none", p->comm.comm_block.name);
	if (any && (p->fwd.a_load == FPL_LOAD_GIVEN || p->fwd.b_load == FPL_LOAD_GIVEN
		    || p->bwd.a_load == FPL_LOAD_GIVEN || p->bwd.b_load == FPL_LOAD_GIVEN
		    || p->red.a_load == FPL_LOAD_GIVEN))
		return fail(err, errlen, FPL_EINVAL, "a block format (act, grad, weight or a GEMM operand) "
			    "with a model that loads its inputs as given: block values are elements "
			    "times scales, not values of a format; give the models a format "
			    "(fwd.in = fp32)");
	return 0;
}

/* rht: the 16-point transform only; it rotates the dW GEMM's operands in
 * binary64 (train/hadamard.c), values of no format, so bwd must round its
 * inputs. */
static int rht_check(const fpl_train_policy *p, char *err, size_t errlen)
{
	const fpl_format *f = p->bwd.a_load == FPL_LOAD_GIVEN ? &p->bwd.a : &p->bwd.b;
	char prof[64], how[96];

	if (p->rht.n && p->rht.n != TR_RHT_N)
		return fail(err, errlen, FPL_EINVAL, "rht: a %u-point transform; only the 16-point "
			    "one is implemented", p->rht.n);
	if (!p->rht.n || (p->bwd.a_load != FPL_LOAD_GIVEN && p->bwd.b_load != FPL_LOAD_GIVEN))
		return 0;
	profile_of(&p->bwd, prof, sizeof prof);
	if (prof[0])
		snprintf(how, sizeof how, "bwd.profile %s", prof);
	else
		snprintf(how, sizeof how, "bwd.%s = %s:given",
			 p->bwd.a_load == FPL_LOAD_GIVEN ? "a" : "b", f->name);
	return fail(err, errlen, FPL_EINVAL, "rht: the random Hadamard transform hands the dW "
		    "GEMM rotated operands (binary64 values of no stored format), but bwd takes "
		    "its inputs as given (%s): let bwd round them (bwd.in = %s)", how, f->name);
}

int fpl_train_policy_check(const fpl_train_policy *p, const fpl_train_config *cfg, char *err,
			   size_t errlen)
{
	const fpl_format *w;
	int r;

	if (err && errlen)
		err[0] = 0;
	if (!p || !cfg)
		return fail(err, errlen, FPL_EINVAL, "no policy or config");
	if ((r = block_check(p, err, errlen)) || (r = rht_check(p, err, errlen)))
		return r;
	w = &p->opt.weight;
	/* forward: A = the activations (H_0 = X rounded into act), B = W */
	if (p->fwd.a_load == FPL_LOAD_GIVEN
	    && (r = given(&p->fwd, "fwd", "a", &p->fwd.a, "the activations", "act", &p->act, err,
			  errlen)))
		return r;
	/* ... and C = the biases (weight), loaded the way A is, into the
	 * running sum's format */
	if (p->fwd.a_load == FPL_LOAD_GIVEN
	    && (r = given(&p->fwd, "fwd", "acc", sum_format(&p->fwd), "the biases", "weight", w,
			  err, errlen)))
		return r;
	if (p->fwd.b_load == FPL_LOAD_GIVEN
	    && (r = given(&p->fwd, "fwd", "b", &p->fwd.b, "the weights", "weight", w, err,
			  errlen)))
		return r;
	/* backward: A = the gradients; B = the activations (dW) and, below
	 * the last layer, the weights (the input gradient) */
	if (p->bwd.a_load == FPL_LOAD_GIVEN
	    && (r = given(&p->bwd, "bwd", "a", &p->bwd.a, "the gradients", "grad", &p->grad, err,
			  errlen)))
		return r;
	if (p->bwd.b_load == FPL_LOAD_GIVEN
	    && ((r = given(&p->bwd, "bwd", "b", &p->bwd.b, "the activations", "act", &p->act,
			   err, errlen))
		|| (cfg->nsizes > 2
		    && (r = given(&p->bwd, "bwd", "b", &p->bwd.b, "the weights", "weight", w, err,
				  errlen)))))
		return r;
	/* reductions: the logits (act) and the bias gradients (grad) */
	if (p->red.a_load == FPL_LOAD_GIVEN
	    && ((r = given(&p->red, "red", "a", &p->red.a, "the logits", "act", &p->act, err,
			   errlen))
		|| (r = given(&p->red, "red", "a", &p->red.a, "the gradients", "grad", &p->grad,
			      err, errlen))))
		return r;
	if (p->scaler.kind == FPL_OPT_SCALE_APS)
		return fail(err, errlen, FPL_EINVAL, "loss-scale: APS needs the true gradients, "
			    "which a training step does not have (comm-scale = aps scales the "
			    "all-reduce)");
	if (p->comm.algo == FPL_AR_HIER && (p->comm.group < 1 || cfg->nodes % p->comm.group))
		return fail(err, errlen, FPL_EINVAL, "algo: hier:%u needs a group that divides "
			    "the %u nodes", (unsigned)p->comm.group, (unsigned)cfg->nodes);
	return 0;
}
