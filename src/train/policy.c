/* SPDX-License-Identifier: MIT */
/*
 * policy.c - training precision policies (fplab/train.h): the presets,
 * fpl_train_policy_set (one `key = value` line of a policy file or a CLI
 * override) and fpl_train_policy_describe (the policy as such lines).
 *
 * The invariant: describe writes every key in a spelling that set reads
 * back into the same policy (formats by name and switches, modes by
 * their two letters, numbers with 17 significant digits), so describe
 * followed by fpl_train_policy_load is the identity on everything but
 * the name.  A key's value is checked whole before anything changes.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>

#include "train/train_internal.h"
#include "util/errmsg.h"
#include "util/sbuf.h"

static const char *const preset_names[] = {
	"fp32", "bf16-mixed", "fp16-mixed", "fp16-pure", "fp8-e4m3", "aps-e4m3-comm", "mxfp8",
	"nvfp4", NULL
};

const char *const *fpl_train_presets(void)
{
	return preset_names;
}

#define fail fpl__fail

static void fmt(fpl_format *f, const char *name)
{
	fpl_format_lookup(f, name);	/* catalogue names: cannot fail */
}

/* A GEMM model: inputs a (A) and b (B) rounded in ne, exact products,
 * accumulator acc in acc_rnd, sequential. */
static void gemm_model(fpl_accum_model *m, const char *a, const char *b, const char *acc,
		       fpl_rnd acc_rnd)
{
	fpl_accum_init(m);
	fmt(&m->a, a);
	fmt(&m->b, b);
	fmt(&m->acc, acc);
	m->acc_rnd = acc_rnd;
}

static void fp32_policy(fpl_train_policy *p)
{
	fpl_format f32;

	memset(p, 0, sizeof *p);
	fpl_accum_init(&p->fwd);	/* fp32-fma with the inputs rounded into fp32 */
	p->bwd = p->fwd;
	fpl_accum_init(&p->red);
	fmt(&p->act, "fp32");
	p->grad = p->act;
	p->act_rnd = p->grad_rnd = FPL_RND_NE;
	fmt(&f32, "fp32");
	fpl_opt_policy_preset(&p->opt, FPL_MASTER_NONE, &f32);
	fpl_opt_scaler_init(&p->scaler);
	fpl_ar_config_init(&p->comm);
	p->comm_fp32 = 0;
}

/* bf16-mixed and fp16-mixed: low-precision GEMM inputs, act and grad,
 * an fp32 accumulator, master and reduction. */
static void mixed_policy(fpl_train_policy *p, const char *low)
{
	fpl_format w;

	fp32_policy(p);
	gemm_model(&p->fwd, low, low, "fp32", FPL_RND_NE);
	p->bwd = p->fwd;
	fmt(&p->act, low);
	p->grad = p->act;
	fmt(&w, low);
	fpl_opt_policy_preset(&p->opt, FPL_MASTER_FP32, &w);
}

/* The optimizer receives the backward pass's gradients: in grad's
 * format, or, for a block grad (whose values are the block's, not the
 * element format's), the all-reduced sums rounded into binary32. */
static void opt_grad(fpl_train_policy *t)
{
	if (t->grad_block.on) {
		fmt(&t->opt.grad, "fp32");
		t->opt.grad_rnd = FPL_RND_NE;
	} else {
		t->opt.grad = t->grad;
		t->opt.grad_rnd = t->grad_rnd;
	}
}

static void block(fpl_train_block *b, const char *spec)
{
	b->on = fpl_block_parse(&b->b, spec, NULL, 0) == 0;	/* valid specs: cannot fail */
}

/*
 * mxfp8 and nvfp4: GEMMs whose operands are block formats along K (the
 * trainer sets them on the models), exact products, an fp32 accumulator;
 * a bf16 copy of activations and gradients, fp32 master with bf16 weights.
 */
static void block_policy(fpl_train_policy *p, const char *a, const char *w, const char *g,
			 fpl_rnd grnd)
{
	fpl_format bf;

	fp32_policy(p);
	gemm_model(&p->fwd, "fp32", "fp32", "fp32", FPL_RND_NE);
	p->bwd = p->fwd;
	fmt(&p->act, "bf16");
	p->grad = p->act;
	fmt(&bf, "bf16");
	fpl_opt_policy_preset(&p->opt, FPL_MASTER_FP32, &bf);
	block(&p->fwd_ops.a, a);	/* H: activations */
	block(&p->fwd_ops.b, w);	/* W */
	block(&p->bwd_ops.a, g);	/* G: gradients */
	block(&p->bwd_ops.b, a);	/* H in dW = G^T H; W in dX = G W takes fwd.b-block */
	p->bwd_ops.a_rnd = grnd;
}

int fpl_train_policy_preset(fpl_train_policy *p, const char *name)
{
	fpl_train_policy t;
	fpl_format w;

	if (!p || !name)
		return FPL_EINVAL;
	if (!strcmp(name, "fp32")) {
		fp32_policy(&t);
	} else if (!strcmp(name, "bf16-mixed")) {
		mixed_policy(&t, "bf16");
	} else if (!strcmp(name, "fp16-mixed")) {
		mixed_policy(&t, "fp16");
		t.scaler.kind = FPL_OPT_SCALE_DYNAMIC;
	} else if (!strcmp(name, "fp16-pure")) {
		fp32_policy(&t);
		gemm_model(&t.fwd, "fp16", "fp16", "fp16", FPL_RND_NE);
		t.bwd = t.fwd;
		t.red = t.fwd;
		fmt(&t.act, "fp16");
		t.grad = t.act;
		fpl_opt_policy_preset(&t.opt, FPL_MASTER_NONE, &t.act);
		fmt(&t.comm.comm, "fp16");
		t.comm.acc = t.comm.comm;
	} else if (!strcmp(name, "fp8-e4m3")) {
		fp32_policy(&t);
		gemm_model(&t.fwd, "e4m3fn", "e4m3fn", "e8m13", FPL_RND_TZ);
		fpl_accum_parse_order(&t.fwd, "blocked:128:fp32");
		t.bwd = t.fwd;
		fmt(&t.bwd.a, "e5m2");
		fmt(&t.act, "e4m3fn");
		fmt(&t.grad, "e5m2");
		fmt(&w, "bf16");
		fpl_opt_policy_preset(&t.opt, FPL_MASTER_FP32, &w);
	} else if (!strcmp(name, "mxfp8")) {
		/* OCP MX, as Transformer Engine's MXFP8 recipe: e4m3 elements
		 * forward and backward, 32 along K, e8m0 scales by rceil */
		block_policy(&t, "mxfp8:rceil", "mxfp8:rceil", "mxfp8:rceil", FPL_RND_NE);
	} else if (!strcmp(name, "nvfp4")) {
		/* NVFP4 training (NVIDIA 2025): 1x16 blocks for activations and
		 * gradients, 16x16 tiles for weights (the same blocks for W and
		 * W^T), stochastic rounding of the gradients */
		block_policy(&t, "nvfp4", "nvfp4:16x16", "nvfp4", FPL_RND_SP);
		/* rht stays none: the transform is an option (rht = 16[:SEED]) */
	} else if (!strcmp(name, "aps-e4m3-comm")) {
		fp32_policy(&t);
		fmt(&t.comm.comm, "e4m3fn");
		t.comm.acc = t.comm.comm;
		t.comm.scaling = FPL_AR_SCALE_APS;
		t.comm_fp32 = FPL_TRAIN_COMM_FP32_LAST;
	} else {
		return FPL_ENOTFOUND;
	}
	/* the optimizer receives the backward pass's gradients */
	opt_grad(&t);
	snprintf(t.name, sizeof t.name, "%s", name);
	*p = t;
	return 0;
}

/* ------------------------------------------------------------ values */

/* FORMAT[:MODE] (":given" where given is not NULL). */
static int spec(const char *key, const char *v, fpl_format *f, fpl_rnd *r, int *given,
		char *err, size_t errlen)
{
	int rc = fpl_accum_parse_spec(v, f, r, given);

	if (rc == FPL_ENOTFOUND)
		return fail(err, errlen, FPL_EPARSE, "%s: unknown format in '%s'", key, v);
	if (rc == FPL_EFORMAT)
		return fail(err, errlen, FPL_EPARSE, "%s: impossible format '%s'", key, v);
	if (rc)
		return fail(err, errlen, FPL_EPARSE,
			    "%s: expected FORMAT[+daz][+ftz][+nosub][+sat][:MODE%s], got '%s'", key,
			    given ? "|:given" : "", v);
	return 0;
}

/*
 * A block format as a slot's value: SPEC or SPEC:MODE (fplab/block.h's
 * grammar; MODE rounds the elements, into *r).  1 when v is not spelled
 * as a block spec (the caller reads a plain format), 0, or FPL_EPARSE
 * with the message.
 */
static int block_value(const char *key, const char *v, fpl_train_block *blk, fpl_rnd *r,
		       char *err, size_t errlen)
{
	char e1[256], e2[256], head[160];
	const char *colon = strrchr(v, ':');
	fpl_rnd m;

	if (!fpl_block_is_spec(v))
		return 1;
	if (!fpl_block_parse(&blk->b, v, e1, sizeof e1)) {
		blk->on = 1;
		*r = FPL_RND_NE;
		return 0;
	}
	if (colon && !fpl_rnd_parse(colon + 1, &m) && (size_t)(colon - v) < sizeof head) {
		snprintf(head, sizeof head, "%.*s", (int)(colon - v), v);
		if (!fpl_block_parse(&blk->b, head, e2, sizeof e2)) {
			blk->on = 1;
			*r = m;
			return 0;
		}
	}
	return fail(err, errlen, FPL_EPARSE, "%s: %s", key, e1[0] ? e1 : "not a block format");
}

/* A slot that takes a plain or a block format: act, grad. */
static int slot(const char *key, const char *v, fpl_format *f, fpl_rnd *r, fpl_train_block *blk,
		char *err, size_t errlen)
{
	fpl_train_block nb;
	fpl_rnd nr;
	int rc = block_value(key, v, &nb, &nr, err, errlen);

	if (rc == 1) {
		if ((rc = spec(key, v, f, r, NULL, err, errlen)))
			return rc;
		blk->on = 0;
		return 0;
	}
	if (rc)
		return rc;
	*blk = nb;
	*f = nb.b.elem;
	*r = nr;
	return 0;
}

/*
 * An arithmetic slot (arith, unscale, comm-acc) takes no block format, a
 * semantic rule (fplab-train(1)): it rounds the result of each scalar
 * operation, and a block's scale is a function of a whole block of stored
 * values.
 */
static int plain_only(const char *key, const char *v, char *err, size_t errlen)
{
	if (!fpl_block_is_spec(v))
		return 0;
	return fail(err, errlen, FPL_EPARSE, "%s: '%s' is a block-scaled format: an arithmetic "
		    "slot rounds the result of each scalar operation, and a block's scale, a "
		    "function of a whole block of stored values, cannot define one result; give a "
		    "plain format (act, grad, comm, weight, master-format and state take block "
		    "formats)", key, v);
}

/* fwd.a-block, fwd.b-block, bwd.a-block, bwd.b-block: none or a block
 * format whose 1-D blocks run along the GEMM's K (a tile shape is kept). */
static int operand_key(fpl_train_policy *t, const char *key, const char *v, char *err,
		       size_t errlen)
{
	fpl_train_operands *o;
	fpl_train_block nb, *blk;
	fpl_rnd nr = FPL_RND_NE, *r;
	int rc;

	if (!strncmp(key, "fwd.", 4))
		o = &t->fwd_ops;
	else if (!strncmp(key, "bwd.", 4))
		o = &t->bwd_ops;
	else
		return 1;
	if (!strcmp(key + 4, "a-block")) {
		blk = &o->a;
		r = &o->a_rnd;
	} else if (!strcmp(key + 4, "b-block")) {
		blk = &o->b;
		r = &o->b_rnd;
	} else {
		return 1;
	}
	if (!strcmp(v, "none")) {
		memset(blk, 0, sizeof *blk);
		*r = FPL_RND_NE;
		return 0;
	}
	rc = block_value(key, v, &nb, &nr, err, errlen);
	if (rc == 1)
		return fail(err, errlen, FPL_EPARSE, "%s: expected none or a block format "
			    "(mxfp8, nvfp4, block:ELEM:SCALE:...)[:MODE], got '%s'", key, v);
	if (rc)
		return rc;
	*blk = nb;
	*r = nr;
	return 0;
}

/* A whole number in [lo, hi]. */
static int number_u(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* A finite binary64 number (correctly rounded by strtod). */
static int number_d(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || *s == ' ')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* The model's pieces, as the CLI spells them. */
static int model_piece(fpl_accum_model *m, const char *key, const char *opt, const char *v,
		       char *err, size_t errlen)
{
	int given = 0, rc;

	if (!strcmp(opt, "-f") || !strcmp(opt, "in")) {
		if ((rc = spec(key, v, &m->a, &m->a_rnd, &given, err, errlen)))
			return rc;
		m->b = m->a;
		m->b_rnd = m->a_rnd;
		m->a_load = m->b_load = given ? FPL_LOAD_GIVEN : FPL_LOAD_ROUND;
	} else if (!strcmp(opt, "--a-format") || !strcmp(opt, "a")) {
		if ((rc = spec(key, v, &m->a, &m->a_rnd, &given, err, errlen)))
			return rc;
		m->a_load = given ? FPL_LOAD_GIVEN : FPL_LOAD_ROUND;
	} else if (!strcmp(opt, "--b-format") || !strcmp(opt, "b")) {
		if ((rc = spec(key, v, &m->b, &m->b_rnd, &given, err, errlen)))
			return rc;
		m->b_load = given ? FPL_LOAD_GIVEN : FPL_LOAD_ROUND;
	} else if (!strcmp(opt, "--prod") || !strcmp(opt, "prod")) {
		if (!strcmp(v, "exact"))
			m->prod_exact = 1;
		else if ((rc = spec(key, v, &m->prod, &m->prod_rnd, NULL, err, errlen)))
			return rc;
		else
			m->prod_exact = 0;
	} else if (!strcmp(opt, "--acc") || !strcmp(opt, "acc")) {
		return spec(key, v, &m->acc, &m->acc_rnd, NULL, err, errlen);
	} else if (!strcmp(opt, "--order") || !strcmp(opt, "order")) {
		rc = fpl_accum_parse_order(m, v);
		if (rc) {	/* the spellings from the library's one table */
			size_t no, i, k = 0;
			const fpl_accum_order_entry *o = fpl_accum_orders(&no);
			char list[256] = "";

			for (i = 0; i < no; i++)
				k += (size_t)snprintf(list + k, k < sizeof list ? sizeof list - k : 0,
						      "%s%s", i ? ", " : "", o[i].spelling);
			return fail(err, errlen, FPL_EPARSE, "%s: bad order '%s' (%s)", key, v, list);
		}
	} else if (!strcmp(opt, "--out-format") || !strcmp(opt, "out")) {
		if (!strcmp(v, "none")) {
			m->out_set = 0;
		} else {
			if ((rc = spec(key, v, &m->out, &m->out_rnd, NULL, err, errlen)))
				return rc;
			m->out_set = 1;
		}
	} else if (!strcmp(opt, "--profile") || !strcmp(opt, "profile")) {
		if (fpl_accum_profile(m, v))
			return fail(err, errlen, FPL_EPARSE, "%s: unknown profile '%s'", key, v);
	} else {
		return fail(err, errlen, FPL_EPARSE, "%s: unknown model option '%s'", key, opt);
	}
	return 0;
}

/* A whole model: options over fpl_accum_init's defaults. */
static int model_value(fpl_accum_model *m, const char *key, const char *value, char *err,
		       size_t errlen)
{
	fpl_accum_model t;
	char buf[512], *tok[64], *save = NULL, *s;
	size_t n = 0, i;
	int rc;

	if (strlen(value) >= sizeof buf)
		return fail(err, errlen, FPL_EPARSE, "%s: value too long", key);
	strcpy(buf, value);
	for (s = strtok_r(buf, " \t", &save); s; s = strtok_r(NULL, " \t", &save)) {
		if (n == sizeof tok / sizeof *tok)
			return fail(err, errlen, FPL_EPARSE, "%s: too many words", key);
		tok[n++] = s;
	}
	if (n == 0)
		return fail(err, errlen, FPL_EPARSE, "%s: empty model", key);
	fpl_accum_init(&t);
	for (i = 0; i < n; i += 2) {
		if (i + 1 == n)
			return fail(err, errlen, FPL_EPARSE, "%s: '%s' needs a value", key, tok[i]);
		if ((rc = model_piece(&t, key, tok[i], tok[i + 1], err, errlen)))
			return rc;
	}
	if (fpl_accum_check(&t, NULL))
		return fail(err, errlen, FPL_EPARSE, "%s: the model is not usable", key);
	*m = t;
	return 0;
}

/* The loss scaling of fpl_opt_scaler_parse but aps (per tensor scaling
 * is fplab optim's; the trainer's all-reduce has comm-scale = aps). */
static int loss_scale(fpl_opt_scaler *sc, const char *key, const char *v, char *err,
		      size_t errlen)
{
	fpl_opt_scaler t;

	if (!fpl_opt_scaler_parse(&t, v, NULL, 0) && t.kind != FPL_OPT_SCALE_APS) {
		*sc = t;
		return 0;
	}
	return fail(err, errlen, FPL_EPARSE,
		    "%s: expected none, S > 0 or dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]] "
		    "(INIT > 0, GROWTH > 1, 0 < BACKOFF < 1, INTERVAL >= 1), got '%s'", key, v);
}

static int comm_fp32(uint32_t *mask, const char *key, const char *v, char *err, size_t errlen)
{
	char buf[256], *s, *save = NULL;
	uint32_t m = 0;

	if (!strcmp(v, "none")) {
		*mask = 0;
		return 0;
	}
	if (!strcmp(v, "all")) {
		*mask = FPL_TRAIN_COMM_FP32_ALL;
		return 0;
	}
	if (strlen(v) >= sizeof buf || !*v || v[strlen(v) - 1] == ',')
		goto bad;
	strcpy(buf, v);
	for (s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		unsigned long l;

		if (!strcmp(s, "last"))
			m |= FPL_TRAIN_COMM_FP32_LAST;
		else if (!number_u(s, 1, FPL_TRAIN_MAX_LAYERS, &l))
			m |= 1u << (l - 1);
		else
			goto bad;
	}
	*mask = m;
	return 0;
bad:
	return fail(err, errlen, FPL_EPARSE,
		    "%s: expected none, last, all or a comma list of layers 1..%d (and last), "
		    "got '%s'", key, FPL_TRAIN_MAX_LAYERS, v);
}

static int comm_scale(fpl_ar_config *c, const char *key, const char *v, char *err,
		      size_t errlen)
{
	double s;

	if (!strcmp(v, "none")) {
		c->scaling = FPL_AR_SCALE_NONE;
		c->loss_scale = 1;
	} else if (!strcmp(v, "aps")) {
		c->scaling = FPL_AR_SCALE_APS;
		c->loss_scale = 1;
	} else if (!strncmp(v, "loss:", 5) && !number_d(v + 5, &s) && s > 0) {
		c->scaling = FPL_AR_SCALE_LOSS;
		c->loss_scale = s;
	} else {
		return fail(err, errlen, FPL_EPARSE, "%s: expected none, loss:S (S > 0) or aps, "
			    "got '%s'", key, v);
	}
	return 0;
}

static int algo(fpl_ar_config *c, const char *key, const char *v, char *err, size_t errlen)
{
	unsigned long g = 1;
	fpl_ar_algo a;

	if (!strncmp(v, "hier:", 5)) {
		if (number_u(v + 5, 1, 0xffffffffu, &g))
			goto bad;
		a = FPL_AR_HIER;
	} else if (!strcmp(v, "hier") || fpl_ar_algo_parse(v, &a)) {
		goto bad;
	}
	c->algo = a;
	c->group = (uint32_t)g;
	return 0;
bad:
	return fail(err, errlen, FPL_EPARSE,
		    "%s: expected sequential, ring, tree or hier:G (G >= 1), got '%s'", key, v);
}

/*
 * rht: none, 16 or 16:SEED (fpl_train_rht): NVFP4 training's 16-point
 * random Hadamard transform of the dW GEMM's operands, its signs from
 * SEED (a decimal whole number below 2^64) or from the run's seed.
 */
static int rht_key(fpl_train_rht *h, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':');
	size_t hl = colon ? (size_t)(colon - v) : strlen(v);
	unsigned long long seed = 0;
	unsigned long n;
	char head[32], *end;

	if (!strcmp(v, "none")) {
		memset(h, 0, sizeof *h);
		return 0;
	}
	if (hl >= sizeof head)
		goto bad;
	memcpy(head, v, hl);
	head[hl] = 0;
	if (number_u(head, 0, ULONG_MAX, &n))
		goto bad;
	if (n != TR_RHT_N)
		return fail(err, errlen, FPL_EPARSE, "rht: only the 16-point transform "
			    "(NVIDIA's NVFP4 recipe) is implemented, got '%s'", v);
	if (colon) {
		const char *d = colon + 1;

		if (*d < '0' || *d > '9')	/* no sign, no space, not empty */
			goto bad;
		errno = 0;
		seed = strtoull(d, &end, 10);
		if (errno || *end)
			goto bad;
	}
	h->n = TR_RHT_N;
	h->seeded = colon != NULL;
	h->seed = (uint64_t)seed;
	return 0;
bad:
	return fail(err, errlen, FPL_EPARSE, "rht: expected none, 16 or 16:SEED (SEED a whole "
		    "number below 2^64; 16 alone takes the run's seed), got '%s'", v);
}

/* The optimizer keys. */
static int opt_key(fpl_train_policy *t, const char *key, const char *v, char *err,
		   size_t errlen)
{
	fpl_opt_policy *o = &t->opt;
	fpl_rnd r = FPL_RND_NE;
	fpl_format f;
	int rc;

	if ((!strcmp(key, "arith") || !strcmp(key, "unscale"))
	    && (rc = plain_only(key, v, err, errlen)))
		return rc;
	if (!strcmp(key, "master")) {
		fpl_opt_master m;

		if (fpl_opt_master_parse(v, &m))
			return fail(err, errlen, FPL_EPARSE, "master: expected none, fp32-master, "
				    "split, kahan or stochastic, got '%s'", v);
		fpl_rnd wr = o->weight_rnd, ws = o->weight_sr;
		fpl_block_format wb = o->weight_block;
		int wib = o->weight_is_block;

		f = o->weight;	/* the preset rewrites *o: not an alias of it */
		if (wib && fpl_opt_policy_preset_block(o, m, &wb))
			return fail(err, errlen, FPL_EPARSE, "master: %s %s; the block weight %s "
				    "takes none, stochastic or fp32-master", v, m == FPL_MASTER_SPLIT
				    ? "keeps the weight as the top bits of a binary32 master"
				    : "keeps a compensation computed in the weight's format", wb.name);
		if (!wib && fpl_opt_policy_preset(o, m, &f))
			return fail(err, errlen, FPL_EPARSE, "master: %s needs a weight format that "
				    "is binary32's top bits (bf16); weight is %s", v, o->weight.name);
		o->weight_rnd = wr;	/* the weight's own modes stay */
		o->weight_sr = ws;
		o->grad = t->grad;	/* the backward pass's (opt_grad) */
		o->grad_rnd = t->grad_rnd;
		o->grad_is_block = 0;
		opt_grad(t);
		return 0;
	}
	if (!strcmp(key, "weight-sr")) {
		if (fpl_rnd_parse(v, &r) || !fpl_rnd_is_stochastic(r))
			return fail(err, errlen, FPL_EPARSE, "weight-sr: expected sp or se, got '%s'",
				    v);
		o->weight_sr = r;
		return 0;
	}
	if (!strcmp(key, "master-format")) {
		fpl_train_block mb = { o->master_is_block, o->master_block };

		if ((rc = slot(key, v, &f, &r, &mb, err, errlen)))
			return rc;
		if (r != FPL_RND_NE)
			return fail(err, errlen, FPL_EPARSE, "master-format: the master is rounded "
				    "in ne (a block master's elements too), got '%s'", v);
		o->master_fmt = f;
		o->master_is_block = mb.on;
		o->master_block = mb.b;
		return 0;
	}
	if (!strcmp(key, "weight")) {
		fpl_train_block wb = { o->weight_is_block, o->weight_block };

		if ((rc = slot(key, v, &o->weight, &o->weight_rnd, &wb, err, errlen)))
			return rc;
		o->weight_is_block = wb.on;
		o->weight_block = wb.b;
		return 0;
	}
	if (!strcmp(key, "state")) {
		fpl_train_block sb = { o->state_is_block, o->state_block };

		if ((rc = slot(key, v, &o->state, &o->state_rnd, &sb, err, errlen)))
			return rc;
		o->state_is_block = sb.on;
		o->state_block = sb.b;
		return 0;
	}
	if (!strcmp(key, "arith"))
		return spec(key, v, &o->arith, &o->arith_rnd, NULL, err, errlen);
	if (!strcmp(key, "unscale"))
		return spec(key, v, &o->unscale, &o->unscale_rnd, NULL, err, errlen);
	return 1;	/* not an optimizer key */
}

static int model_key(fpl_train_policy *t, const char *key, const char *v, char *err,
		     size_t errlen)
{
	fpl_accum_model *m, c;
	const char *dot = strchr(key, '.');
	size_t len = dot ? (size_t)(dot - key) : strlen(key);
	int rc;

	if (len == 3 && !strncmp(key, "fwd", 3))
		m = &t->fwd;
	else if (len == 3 && !strncmp(key, "bwd", 3))
		m = &t->bwd;
	else if (len == 3 && !strncmp(key, "red", 3))
		m = &t->red;
	else
		return 1;
	if (!dot)
		return model_value(m, key, v, err, errlen);
	if (!strcmp(dot + 1, "in") || !strcmp(dot + 1, "a") || !strcmp(dot + 1, "b")
	    || !strcmp(dot + 1, "prod") || !strcmp(dot + 1, "acc") || !strcmp(dot + 1, "order")
	    || !strcmp(dot + 1, "out") || !strcmp(dot + 1, "profile")) {
		c = *m;
		if ((rc = model_piece(&c, key, dot + 1, v, err, errlen)))
			return rc;
		if (fpl_accum_check(&c, NULL))
			return fail(err, errlen, FPL_EPARSE, "%s: the model is not usable", key);
		*m = c;
		return 0;
	}
	return 1;
}

int fpl_train_policy_set(fpl_train_policy *p, const char *key, const char *value, char *err,
			 size_t errlen)
{
	fpl_train_policy t;
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!p || !key || !value)
		return fail(err, errlen, FPL_EINVAL, "no policy, key or value");
	t = *p;
	if ((rc = operand_key(&t, key, value, err, errlen)) <= 0
	    || (rc = model_key(&t, key, value, err, errlen)) <= 0
	    || (rc = opt_key(&t, key, value, err, errlen)) <= 0) {
		/* done above */
	} else if (!strcmp(key, "act")) {
		rc = slot(key, value, &t.act, &t.act_rnd, &t.act_block, err, errlen);
	} else if (!strcmp(key, "grad")) {
		rc = slot(key, value, &t.grad, &t.grad_rnd, &t.grad_block, err, errlen);
		opt_grad(&t);
	} else if (!strcmp(key, "loss-scale")) {
		rc = loss_scale(&t.scaler, key, value, err, errlen);
	} else if (!strcmp(key, "comm")) {
		fpl_train_block cb = { t.comm.comm_is_block, t.comm.comm_block };

		rc = slot(key, value, &t.comm.comm, &t.comm.comm_rnd, &cb, err, errlen);
		t.comm.comm_is_block = cb.on;
		t.comm.comm_block = cb.b;
	} else if (!strcmp(key, "comm-acc")) {
		if (!(rc = plain_only(key, value, err, errlen)))
			rc = spec(key, value, &t.comm.acc, &t.comm.acc_rnd, NULL, err, errlen);
	} else if (!strcmp(key, "comm-scale")) {
		rc = comm_scale(&t.comm, key, value, err, errlen);
	} else if (!strcmp(key, "algo")) {
		rc = algo(&t.comm, key, value, err, errlen);
	} else if (!strcmp(key, "comm-fp32")) {
		rc = comm_fp32(&t.comm_fp32, key, value, err, errlen);
	} else if (!strcmp(key, "rht")) {
		rc = rht_key(&t.rht, value, err, errlen);
	} else {
		return fail(err, errlen, FPL_ENOTFOUND, "unknown key '%s'", key);
	}
	if (rc)
		return rc;
	*p = t;
	return 0;
}

/* ------------------------------------------------------------ describing */

/* NAME[+switches]:MODE, as fpl_accum_parse_spec reads it. */
static void put_spec(fpl__sbuf *b, const char *key, const fpl_format *f, fpl_rnd r)
{
	fpl_accum_model m;
	char buf[256];

	/* fpl_accum_describe spells formats with their switches: borrow it
	 * through a model whose A format is f (the first "-f X:MODE" word) */
	fpl_accum_init(&m);
	m.a = m.b = *f;
	m.a_rnd = m.b_rnd = r;
	m.prod_exact = 0;	/* never a profile */
	if (fpl_accum_describe(&m, buf, sizeof buf) == 0 && !strncmp(buf, "-f ", 3))
		fpl__sbuf_put(b, "%s = %.*s\n", key, (int)strcspn(buf + 3, " "), buf + 3);
	else
		fpl__sbuf_put(b, "%s = %s:%s\n", key, f->name, fpl_rnd_name(r));
}

/* A slot that may hold a block format. */
static void put_slot(fpl__sbuf *b, const char *key, const fpl_format *f, fpl_rnd r,
		     const fpl_train_block *blk)
{
	char buf[160];

	if (!blk->on) {
		put_spec(b, key, f, r);
		return;
	}
	fpl_block_spec(&blk->b, buf, sizeof buf);
	fpl__sbuf_put(b, "%s = %s:%s\n", key, buf, fpl_rnd_name(r));
}

static void put_operand(fpl__sbuf *b, const char *key, const fpl_train_block *blk, fpl_rnd r)
{
	char buf[160];

	if (!blk->on)	/* none: left out, as every preset a file starts from has it */
		return;
	fpl_block_spec(&blk->b, buf, sizeof buf);
	fpl__sbuf_put(b, "%s = %s:%s\n", key, buf, fpl_rnd_name(r));
}

static void put_model(fpl__sbuf *b, const char *key, const fpl_accum_model *m)
{
	char buf[512];

	if (fpl_accum_describe(m, buf, sizeof buf))
		buf[0] = 0;
	fpl__sbuf_put(b, "%s = %s\n", key, buf);
}

static void put_comm_fp32(fpl__sbuf *b, uint32_t m)
{
	int l, first = 1;

	fpl__sbuf_put(b, "comm-fp32 = ");
	if (m == 0) {
		fpl__sbuf_put(b, "none\n");
		return;
	}
	if (m == FPL_TRAIN_COMM_FP32_ALL) {
		fpl__sbuf_put(b, "all\n");
		return;
	}
	for (l = 1; l <= FPL_TRAIN_MAX_LAYERS; l++)
		if (m & (1u << (l - 1))) {
			fpl__sbuf_put(b, "%s%d", first ? "" : ",", l);
			first = 0;
		}
	if (m & FPL_TRAIN_COMM_FP32_LAST)
		fpl__sbuf_put(b, "%slast", first ? "" : ",");
	fpl__sbuf_put(b, "\n");
}

size_t fpl_train_policy_describe(const fpl_train_policy *p, char *buf, size_t size)
{
	fpl__sbuf b = { buf, size, 0 };
	const fpl_opt_policy *o;
	const fpl_opt_scaler *s;

	if (buf && size)
		buf[0] = 0;
	if (!p)
		return 0;
	o = &p->opt;
	s = &p->scaler;
	fpl__sbuf_put(&b, "# fplab-train policy %s\n", p->name[0] ? p->name : "(unnamed)");
	put_model(&b, "fwd", &p->fwd);
	put_model(&b, "bwd", &p->bwd);
	put_model(&b, "red", &p->red);
	put_operand(&b, "fwd.a-block", &p->fwd_ops.a, p->fwd_ops.a_rnd);
	put_operand(&b, "fwd.b-block", &p->fwd_ops.b, p->fwd_ops.b_rnd);
	put_operand(&b, "bwd.a-block", &p->bwd_ops.a, p->bwd_ops.a_rnd);
	put_operand(&b, "bwd.b-block", &p->bwd_ops.b, p->bwd_ops.b_rnd);
	if (p->rht.n && p->rht.seeded)	/* none: left out, as the operands' */
		fpl__sbuf_put(&b, "rht = %u:%llu\n", p->rht.n, (unsigned long long)p->rht.seed);
	else if (p->rht.n)
		fpl__sbuf_put(&b, "rht = %u\n", p->rht.n);
	put_slot(&b, "act", &p->act, p->act_rnd, &p->act_block);
	put_slot(&b, "grad", &p->grad, p->grad_rnd, &p->grad_block);
	/* weight, then master (which derives the formats of the next keys
	 * from the weight format) */
	{
		fpl_train_block wb = { o->weight_is_block, o->weight_block };
		put_slot(&b, "weight", &o->weight, o->weight_rnd, &wb);
	}
	fpl__sbuf_put(&b, "weight-sr = %s\n", fpl_rnd_name(o->weight_sr));
	fpl__sbuf_put(&b, "master = %s\n", fpl_opt_master_name(o->master));
	{
		fpl_train_block mb = { o->master_is_block, o->master_block };
		fpl_train_block sb = { o->state_is_block, o->state_block };

		put_slot(&b, "master-format", &o->master_fmt, FPL_RND_NE, &mb);
		put_slot(&b, "state", &o->state, o->state_rnd, &sb);
	}
	put_spec(&b, "arith", &o->arith, o->arith_rnd);
	put_spec(&b, "unscale", &o->unscale, o->unscale_rnd);
	if (s->kind == FPL_OPT_SCALE_CONST)
		fpl__sbuf_put(&b, "loss-scale = %.17g\n", s->scale);
	else if (s->kind == FPL_OPT_SCALE_DYNAMIC)
		fpl__sbuf_put(&b, "loss-scale = dynamic:%.17g:%.17g:%.17g:%u\n", s->scale, s->growth,
		    s->backoff, (unsigned)s->interval);
	else
		fpl__sbuf_put(&b, "loss-scale = none\n");
	{
		fpl_train_block cb = { p->comm.comm_is_block, p->comm.comm_block };
		put_slot(&b, "comm", &p->comm.comm, p->comm.comm_rnd, &cb);
	}
	put_spec(&b, "comm-acc", &p->comm.acc, p->comm.acc_rnd);
	if (p->comm.scaling == FPL_AR_SCALE_LOSS)
		fpl__sbuf_put(&b, "comm-scale = loss:%.17g\n", p->comm.loss_scale);
	else
		fpl__sbuf_put(&b, "comm-scale = %s\n", p->comm.scaling == FPL_AR_SCALE_APS ? "aps" : "none");
	if (p->comm.algo == FPL_AR_HIER)
		fpl__sbuf_put(&b, "algo = hier:%u\n", (unsigned)p->comm.group);
	else
		fpl__sbuf_put(&b, "algo = %s\n", fpl_ar_algo_name(p->comm.algo));
	put_comm_fp32(&b, p->comm_fp32);
	return b.len;
}
