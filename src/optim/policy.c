/* SPDX-License-Identifier: MIT */
/*
 * policy.c - names, defaults, presets and validation of fplab/optim.h:
 * the optimizer and strategy names, PyTorch's hyperparameter defaults,
 * the precision policy a strategy implies, the FP64 reference, the
 * scaler's defaults and spelling, the memory per parameter, and the
 * checks fpl_optim_create makes before it allocates anything.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/error.h>
#include <fplab/optim.h>

#include "optim/optim_internal.h"
#include "util/errmsg.h"

static const char *const algo_names[FPL_OPT_COUNT] = {
	"sgd", "adagrad", "adam", "adamw", "lamb"
};

static const char *const master_names[FPL_MASTER_COUNT] = {
	"none", "fp32-master", "split", "kahan", "stochastic"
};

const char *fpl_opt_algo_name(fpl_opt_algo a)
{
	return (unsigned)a < FPL_OPT_COUNT ? algo_names[a] : "?";
}

int fpl_opt_algo_parse(const char *s, fpl_opt_algo *out)
{
	int i;

	if (!s || !out)
		return FPL_EINVAL;
	for (i = 0; i < FPL_OPT_COUNT; i++)
		if (!strcmp(s, algo_names[i])) {
			*out = (fpl_opt_algo)i;
			return 0;
		}
	return FPL_ENOTFOUND;
}

const char *fpl_opt_master_name(fpl_opt_master m)
{
	return (unsigned)m < FPL_MASTER_COUNT ? master_names[m] : "?";
}

int fpl_opt_master_parse(const char *s, fpl_opt_master *out)
{
	int i;

	if (!s || !out)
		return FPL_EINVAL;
	for (i = 0; i < FPL_MASTER_COUNT; i++)
		if (!strcmp(s, master_names[i])) {
			*out = (fpl_opt_master)i;
			return 0;
		}
	return FPL_ENOTFOUND;
}

void fpl_opt_hyper_init(fpl_opt_hyper *h, fpl_opt_algo algo)
{
	if (!h)
		return;
	memset(h, 0, sizeof *h);
	h->algo = algo;
	h->beta1 = 0.9;
	h->beta2 = 0.999;
	switch (algo) {
	case FPL_OPT_ADAGRAD:
		h->lr = 1e-2;
		h->eps = 1e-10;
		break;
	case FPL_OPT_ADAM:
		h->lr = 1e-3;
		h->eps = 1e-8;
		break;
	case FPL_OPT_ADAMW:
		h->lr = 1e-3;
		h->eps = 1e-8;
		h->weight_decay = 1e-2;
		break;
	case FPL_OPT_LAMB:
		h->lr = 1e-3;
		h->eps = 1e-6;
		break;
	default:
		h->lr = 1e-3;
		break;
	}
}

/* A weight format whose codes are the top bits of binary32's. */
int opt__split_ok(const fpl_format *w)
{
	return w->e == 8 && w->m >= 0 && w->m < 23 && w->bias == 127
	       && w->subnormal == FPL_SUB_YES && !w->daz && w->specials == FPL_SPEC_IEEE
	       && !w->emax_limit_set && w->explim;
}

static int is_binary32(const fpl_format *f)
{
	return f->e == 8 && f->m == 23 && f->bias == 127 && f->subnormal == FPL_SUB_YES
	       && !f->daz && f->specials == FPL_SPEC_IEEE && !f->emax_limit_set && f->explim;
}

int fpl_opt_policy_preset(fpl_opt_policy *p, fpl_opt_master master, const fpl_format *weight)
{
	fpl_format f32;

	if (!p || !weight || (unsigned)master >= FPL_MASTER_COUNT)
		return FPL_EINVAL;
	if (master == FPL_MASTER_SPLIT && !opt__split_ok(weight))
		return FPL_EFORMAT;
	if (fpl_format_lookup(&f32, "fp32"))	/* binary32, by its catalogue name */
		return FPL_EFORMAT;
	memset(p, 0, sizeof *p);
	p->master = master;
	p->weight = *weight;
	p->weight_rnd = FPL_RND_NE;
	p->weight_sr = FPL_RND_SP;
	p->master_fmt = f32;
	p->grad = *weight;
	p->grad_rnd = p->unscale_rnd = p->state_rnd = p->arith_rnd = FPL_RND_NE;
	if (master == FPL_MASTER_FP32 || master == FPL_MASTER_SPLIT)
		p->unscale = p->state = p->arith = f32;
	else
		p->unscale = p->state = p->arith = *weight;
	return 0;
}

int fpl_opt_policy_preset_block(fpl_opt_policy *p, fpl_opt_master master,
				const fpl_block_format *w)
{
	fpl_format f32;
	int r;

	if (!p || !w || (unsigned)master >= FPL_MASTER_COUNT || master == FPL_MASTER_KAHAN)
		return FPL_EINVAL;
	if (master == FPL_MASTER_SPLIT || fpl_block_check(w, NULL, 0))
		return FPL_EFORMAT;
	if ((r = fpl_opt_policy_preset(p, master, &w->elem)))
		return r;
	fpl_format_lookup(&f32, "fp32");	/* the preset found it */
	p->weight_is_block = p->grad_is_block = 1;
	p->weight_block = p->grad_block = *w;
	p->unscale = p->arith = p->state = f32;
	if (master != FPL_MASTER_FP32) {
		p->state_is_block = 1;
		p->state_block = *w;
		p->state = w->elem;
	}
	return 0;
}

void fpl_opt_policy_reference(fpl_opt_policy *p)
{
	fpl_format f64;

	if (!p)
		return;
	fpl_format_ieee(&f64, 11, 52);
	memset(p, 0, sizeof *p);
	p->master = FPL_MASTER_NONE;
	p->weight = p->master_fmt = p->grad = p->unscale = p->state = p->arith = f64;
	p->weight_rnd = p->grad_rnd = p->unscale_rnd = p->state_rnd = p->arith_rnd = FPL_RND_NE;
	p->weight_sr = FPL_RND_SP;
}

void fpl_opt_scaler_init(fpl_opt_scaler *s)
{
	if (!s)
		return;
	memset(s, 0, sizeof *s);
	s->kind = FPL_OPT_SCALE_NONE;
	s->scale = 65536;
	s->growth = 2;
	s->backoff = 0.5;
	s->interval = 2000;
}

/* A number as strtod reads it, whole, no leading space (inf and nan
 * pass: the callers' range checks reject them).  0 or -1. */
static int scaler_num(const char *s, double *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	*out = strtod(s, &end);
	return *end ? -1 : 0;
}

/* dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]] (s starts "dynamic"). */
static int scaler_dynamic(fpl_opt_scaler *t, const char *s, char *err, size_t errlen)
{
	char buf[256], *f[6], *save = NULL, *p, *end;
	size_t n = 0, len = strlen(s);
	unsigned long long iv;

	if (len >= sizeof buf || s[len - 1] == ':' || strstr(s, "::"))
		return fpl__fail(err, errlen, FPL_EPARSE, "'%s': expected dynamic[:INIT[:GROWTH"
				 "[:BACKOFF[:INTERVAL]]]]", s);
	memcpy(buf, s, len + 1);
	for (p = strtok_r(buf, ":", &save); p && n < 6; p = strtok_r(NULL, ":", &save))
		f[n++] = p;
	t->kind = FPL_OPT_SCALE_DYNAMIC;
	if (n > 5)
		return fpl__fail(err, errlen, FPL_EPARSE, "'%s': dynamic takes at most "
				 "INIT:GROWTH:BACKOFF:INTERVAL", s);
	if (n > 1 && (scaler_num(f[1], &t->scale) || !(t->scale > 0) || !isfinite(t->scale)))
		return fpl__fail(err, errlen, FPL_EPARSE, "'%s': INIT '%s' must be a finite "
				 "number > 0", s, f[1]);
	if (n > 2 && (scaler_num(f[2], &t->growth) || !(t->growth > 1) || !isfinite(t->growth)))
		return fpl__fail(err, errlen, FPL_EPARSE, "'%s': GROWTH '%s' must be a finite "
				 "number > 1", s, f[2]);
	if (n > 3 && (scaler_num(f[3], &t->backoff) || !(t->backoff > 0) || !(t->backoff < 1)))
		return fpl__fail(err, errlen, FPL_EPARSE, "'%s': BACKOFF '%s' must be in (0, 1)",
				 s, f[3]);
	if (n > 4) {
		errno = 0;
		iv = isdigit((unsigned char)f[4][0]) ? strtoull(f[4], &end, 10) : 0;
		if (!iv || errno || *end || iv > UINT32_MAX)
			return fpl__fail(err, errlen, FPL_EPARSE, "'%s': INTERVAL '%s' is not a "
					 "count 1..%lu", s, f[4], (unsigned long)UINT32_MAX);
		t->interval = (uint32_t)iv;
	}
	return 0;
}

int fpl_opt_scaler_parse(fpl_opt_scaler *sc, const char *s, char *err, size_t errlen)
{
	fpl_opt_scaler t;
	char name[64];
	double v;
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!sc || !s)
		return fpl__fail(err, errlen, FPL_EINVAL, "no scaler or spelling");
	fpl_opt_scaler_init(&t);
	if (!strcmp(s, "aps"))
		t.kind = FPL_OPT_SCALE_APS;
	else if (!scaler_num(s, &v)) {
		if (!(v > 0) || !isfinite(v))
			return fpl__fail(err, errlen, FPL_EPARSE, "'%s': a constant scale must be "
					 "finite and > 0", s);
		t.kind = FPL_OPT_SCALE_CONST;
		t.scale = v;
	} else if (!strncmp(s, "dynamic", 7) && (!s[7] || s[7] == ':')) {
		if ((rc = scaler_dynamic(&t, s, err, errlen)))
			return rc;
	} else if (strcmp(s, "none")) {
		/* the word before any ':': unknown, or a malformed spelling */
		snprintf(name, sizeof name, "%.*s", (int)(strcspn(s, ":") % 63), s);
		if (!scaler_num(name, &v) || strchr("0123456789+-.", name[0]) ||
		    !strcmp(name, "none") || !strcmp(name, "aps"))
			return fpl__fail(err, errlen, FPL_EPARSE, "'%s': expected none, a scale "
					 "S > 0, dynamic[:INIT[:GROWTH[:BACKOFF[:INTERVAL]]]] or aps",
					 s);
		return fpl__fail(err, errlen, FPL_ENOTFOUND, "unknown loss scaling '%s'", name);
	}
	*sc = t;
	return 0;
}

void fpl_opt_config_init(fpl_opt_config *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof *c);
	fpl_opt_hyper_init(&c->hyper, FPL_OPT_SGD);
	fpl_opt_policy_reference(&c->policy);
	fpl_opt_scaler_init(&c->scaler);
	c->threads = 1;
}

int opt__nstate(const fpl_opt_hyper *h)
{
	switch (h->algo) {
	case FPL_OPT_SGD: return h->momentum != 0;
	case FPL_OPT_ADAGRAD: return 1;
	default: return 2;
	}
}

static double bytes(const fpl_format *f)
{
	return (double)((f->nbits + 7) / 8);
}

/* A block slot's bytes per value, its scales included (the nominal
 * block's; the element's alone when the block is the tensor's, a row
 * or a column: fpl_block_bits is then 0). */
static double block_bytes(const fpl_block_format *b)
{
	double bits = fpl_block_bits(b, NULL, 0);

	return (bits > 0 ? bits : (double)b->elem.nbits) / 8;
}

void fpl_opt_memory_per_param(const fpl_opt_config *c, fpl_opt_memory *m)
{
	const fpl_opt_policy *p;

	if (!m)
		return;
	memset(m, 0, sizeof *m);
	if (!c)
		return;
	p = &c->policy;
	m->weight = p->weight_is_block ? block_bytes(&p->weight_block) : bytes(&p->weight);
	switch (p->master) {
	case FPL_MASTER_FP32:
		m->master = p->master_is_block ? block_bytes(&p->master_block)
			    : bytes(&p->master_fmt);
		break;
	case FPL_MASTER_SPLIT: m->master = (double)(p->master_fmt.nbits - p->weight.nbits) / 8; break;
	case FPL_MASTER_KAHAN: m->master = bytes(&p->weight); break;
	default: m->master = 0; break;
	}
	m->state = opt__nstate(&c->hyper) * (p->state_is_block ? block_bytes(&p->state_block)
					     : bytes(&p->state));
	m->total = m->weight + m->master + m->state;
}

/* x finite and >= 0 */
static int nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

static int beta_ok(double b)
{
	return b >= 0 && b < 1;
}

static int hyper_ok(const fpl_opt_hyper *h)
{
	if ((unsigned)h->algo >= FPL_OPT_COUNT || !nonneg(h->lr) || !nonneg(h->weight_decay))
		return 0;
	switch (h->algo) {
	case FPL_OPT_SGD:
		if (!nonneg(h->momentum) || !isfinite(h->dampening))
			return 0;
		if (h->nesterov && (!(h->momentum > 0) || h->dampening != 0))
			return 0;
		return 1;
	case FPL_OPT_ADAGRAD:
		return nonneg(h->lr_decay) && nonneg(h->initial_accumulator_value) && nonneg(h->eps);
	default:
		return beta_ok(h->beta1) && beta_ok(h->beta2) && nonneg(h->eps);
	}
}

/* A format descriptor that fpl_format_finish accepts as it is. */
static int format_ok(const fpl_format *f)
{
	fpl_format g = *f;

	return fpl_format_finish(&g) == 0 && g.nbits == f->nbits && g.emin == f->emin
	       && g.emax == f->emax;
}

static int rnd_ok(fpl_rnd r)
{
	return (unsigned)r < FPL_RND_COUNT;
}

static int scaler_ok(const fpl_opt_scaler *s)
{
	switch (s->kind) {
	case FPL_OPT_SCALE_NONE:
	case FPL_OPT_SCALE_APS:
		return 1;
	case FPL_OPT_SCALE_CONST:
		return isfinite(s->scale) && s->scale > 0;
	case FPL_OPT_SCALE_DYNAMIC:
		return isfinite(s->scale) && s->scale > 0 && isfinite(s->growth) && s->growth > 1
		       && s->backoff > 0 && s->backoff < 1 && s->interval >= 1;
	default:
		return 0;
	}
}

/* The block slots (fplab/optim.h, "block formats"). */
static int block_ok(const fpl_opt_config *c)
{
	const fpl_opt_policy *p = &c->policy;
	int s;

	if (p->weight_is_block && (p->master == FPL_MASTER_KAHAN || p->master == FPL_MASTER_SPLIT))
		return FPL_EINVAL;
	if (p->master_is_block && p->master != FPL_MASTER_FP32)
		return FPL_EINVAL;
	if (p->grad_is_block && c->scaler.kind == FPL_OPT_SCALE_APS)
		return FPL_EINVAL;
	for (s = 0; s < FPL_OPT_NSLOTS; s++)
		if (opt__block(p, s) && fpl_block_check(opt__block(p, s), NULL, 0))
			return FPL_EFORMAT;
	return 0;
}

int opt__validate(const fpl_opt_config *c)
{
	const fpl_opt_policy *p = &c->policy;

	if (!hyper_ok(&c->hyper) || !scaler_ok(&c->scaler) || c->threads < 0)
		return FPL_EINVAL;
	if ((unsigned)p->master >= FPL_MASTER_COUNT || !rnd_ok(p->weight_rnd)
	    || !rnd_ok(p->grad_rnd) || !rnd_ok(p->unscale_rnd) || !rnd_ok(p->state_rnd)
	    || !rnd_ok(p->arith_rnd))
		return FPL_EINVAL;
	if (p->master == FPL_MASTER_STOCHASTIC && !fpl_rnd_is_stochastic(p->weight_sr))
		return FPL_EINVAL;
	if (!format_ok(&p->weight) || !format_ok(&p->grad) || !format_ok(&p->unscale)
	    || !format_ok(&p->state) || !format_ok(&p->arith))
		return FPL_EFORMAT;
	if ((p->master == FPL_MASTER_FP32 || p->master == FPL_MASTER_SPLIT)
	    && !format_ok(&p->master_fmt))
		return FPL_EFORMAT;
	if (p->master == FPL_MASTER_SPLIT && (!opt__split_ok(&p->weight)
					      || !is_binary32(&p->master_fmt)))
		return FPL_EFORMAT;
	return block_ok(c);
}
