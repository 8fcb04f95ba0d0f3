/* SPDX-License-Identifier: MIT */
/*
 * tests/toptim.c - optimizer steps (fplab/optim.h).
 *
 * Expected values never come from the code under test:
 *  - every optimizer in the FP64 reference policy against literals
 *    computed by a Python mirror of PyTorch's formulas (plain floats, op
 *    by op as the header writes them; LAMB's fma norms through
 *    fractions.Fraction), 3 elements, 3 steps, bit for bit;
 *  - sgd (momentum, dampening, nesterov, weight decay) and adam in fp16
 *    and bf16 for the strategies none, fp32-master, kahan and stochastic
 *    against a straight-line model over the public scalar operations
 *    (fpl_round, fpl_mul, fpl_add, fpl_sub, fpl_div, fpl_sqrt, fpl_fma)
 *    on the tensor's fork, the counter set to each rounding's draw index
 *    (one array of n draws per formula step, in the header's order), bit
 *    for bit with flag counts; the same model in binary64 on specials
 *    and extreme values checks the reference's C fast path;
 *  - stochastic: the same bits on 1 and 2 threads, other bits for another
 *    seed, and the mean of many sp updates within 6 sigma of the exact one;
 *  - Split SGD: 500 momentum steps on 4096 parameters, split:bf16's
 *    recombined master equal to fp32-master:bf16's bit for bit, its stored
 *    weight the master's top 16 bits, fp32-master's ne copy different in
 *    some elements (the fraction is printed);
 *  - vanishing by hand (w = 1, u = 2^-12 in fp16), Kahan's 2^k steps;
 *  - loss scaling by hand: constant S keeps a gradient below fp16's
 *    smallest subnormal, dynamic scale history, APS shifts;
 *  - memory per parameter by hand; bad configurations' status codes;
 *  - fpl_opt_scaler_parse on good spellings (fields by hand) and bad ones
 *    (status and a word of the message), *sc untouched on error;
 *  - block slots (state, master, weight, grad as mxfp8; ne, sp, se) for
 *    sgd with momentum and adam, flat and as 3 rows of 40 (short last
 *    blocks), against a straight-line model with a hand OCP MX floor
 *    quantizer over fpl_round (element j of a tensor at draw counter + j),
 *    bit for bit with flag counts and the report's block and element
 *    counts; stochastic elements the same on 1 and 3 threads; the bad
 *    block configurations' status codes;
 *  - FPLAB_OPTIM=ref (the engine for every array operation) against the
 *    default (the binary64 C fast path where it applies): the same
 *    weights, masters and flag counts for the FP64 reference, a
 *    binary64-arithmetic fp16 policy and fp32-master:bf16 with Adam on
 *    values from subnormal to huge; an unknown FPLAB_OPTIM is an error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fplab/optim.h>

#include "harness.h"

static fpl_optim *make(const fpl_opt_config *c, size_t n, const double *w0, uint64_t seed)
{
	fpl_state st;
	fpl_optim *o = NULL;
	const double *W[1] = { w0 };
	int r;

	fpl_state_init(&st, seed);
	r = fpl_optim_create(&o, c, 1, &n, W, &st);
	if (!h_check(r == 0))
		h_fail("fpl_optim_create: %d", r);
	return o;
}

static int step1(fpl_optim *o, const double *g, fpl_opt_report *rep)
{
	const double *G[1] = { g };
	int r = fpl_optim_step(o, G, rep);
	if (!h_check(r == 0))
		h_fail("fpl_optim_step: %d", r);
	return r;
}

/* ------------------------------------------------------------ FP64 by hand */

static void test_reference(void)
{
	static const double w0[3] = { 0.5, -1.25, 2.0 };
	static const double G[3][3] = { { 0.1, -0.3, 0.7 }, { 0.2, -0.3, 0.5 }, { 0.3, 0.25, -0.4 } };
	/* python3 mirror of the header's formulas (PyTorch's, foreach=False):
	 *  sgd:     d = g + wd*w; b = d (t=1) else mu*b + (1-damp)*d;
	 *           d = d + mu*b (nesterov) or b; w = w - lr*d
	 *  adagrad: clr = lr/(1+(t-1)*lr_decay); s = s + d*d;
	 *           w = w - clr*(d/(sqrt(s)+eps))
	 *  adam:    m = m + (1-b1)*(d-m); v = b2*v + ((1-b2)*d)*d;
	 *           w = w - (lr/(1-b1**t))*(m/(sqrt(v)/sqrt(1-b2**t)+eps))
	 *  adamw:   w = fma(-(lr*wd), w, w) first, then adam with wd = 0
	 *  lamb:    r = (m/bc1)/(sqrt(v/bc2)+eps); q = r + wd*w;
	 *           trust = sqrt(sum fma)/sqrt(sum fma); w = w - (lr*trust)*q */
	static const double want[8][3] = {
		/* sgd lr 0.1 */ { 0x1.c28f5c28f5c28p-2, -0x1.370a3d70a3d70p+0, 0x1.eb851eb851eb8p+0 },
		/* sgd lr 0.05 momentum 0.9 dampening 0.1 */ { 0x1.d2ca57a786c22p-2, -0x1.31e83e425aee7p+0, 0x1.e161e4f765fd9p+0 },
		/* sgd lr 0.05 momentum 0.9 nesterov */ { 0x1.b5753a3ec02f2p-2, -0x1.2e77c45cbbc2bp+0, 0x1.d99210385c67ep+0 },
		/* sgd lr 0.1 momentum 0.5 weight_decay 0.01 */ { 0x1.ae8469a9086edp-2, -0x1.2c1cab81f969ep+0, 0x1.d592953adc974p+0 },
		/* adagrad lr 0.1 lr_decay 0.01 iav 0.1 wd 0.02 eps 1e-10 */ { 0x1.6ad390cfefce6p-2, -0x1.286bfa9a66a3fp+0, 0x1.e32e07d3e0a64p+0 },
		/* adam lr 0.01 wd 0.05 betas 0.9 0.999 eps 1e-8 */ { 0x1.e1d6f00f8e6c2p-2, -0x1.399697f82f894p+0, 0x1.f988f99509fc3p+0 },
		/* adamw lr 0.01 wd 0.1 betas 0.9 0.999 eps 1e-8 */ { 0x1.e08fffa0ecb25p-2, -0x1.390e040ba3ddbp+0, 0x1.f85879d1c34ffp+0 },
		/* lamb lr 0.01 wd 0.1 betas 0.9 0.999 eps 1e-6 */ { 0x1.d285b6a0e0333p-2, -0x1.36a3420c2a0f9p+0, 0x1.f5848ca8040f0p+0 },
	};
	int k, s, i;

	for (k = 0; k < 8; k++) {
		fpl_opt_config c;
		fpl_optim *o;
		fpl_opt_report rep;
		const double *w;

		fpl_opt_config_init(&c);
		switch (k) {
		case 0: c.hyper.lr = 0.1; break;
		case 1: c.hyper.lr = 0.05; c.hyper.momentum = 0.9; c.hyper.dampening = 0.1; break;
		case 2: c.hyper.lr = 0.05; c.hyper.momentum = 0.9; c.hyper.nesterov = 1; break;
		case 3: c.hyper.lr = 0.1; c.hyper.momentum = 0.5; c.hyper.weight_decay = 0.01; break;
		case 4:
			fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAGRAD);
			c.hyper.lr = 0.1; c.hyper.lr_decay = 0.01;
			c.hyper.initial_accumulator_value = 0.1; c.hyper.weight_decay = 0.02;
			break;
		case 5:
			fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM);
			c.hyper.lr = 0.01; c.hyper.weight_decay = 0.05;
			break;
		case 6:
			fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAMW);
			c.hyper.lr = 0.01; c.hyper.weight_decay = 0.1;
			break;
		default:
			fpl_opt_hyper_init(&c.hyper, FPL_OPT_LAMB);
			c.hyper.lr = 0.01; c.hyper.weight_decay = 0.1;
			break;
		}
		o = make(&c, 3, w0, 1);
		if (!o)
			continue;
		for (s = 0; s < 3; s++)
			step1(o, G[s], &rep);
		w = fpl_optim_weights(o, 0);
		for (i = 0; i < 3; i++)
			if (!h_check(h_same(w[i], want[k][i])))
				h_fail("reference case %d element %d: want %a got %a", k, i,
				       want[k][i], w[i]);
		h_check(rep.t == 3 && rep.params == 3 && rep.nonzero == 3 && rep.vanished == 0);
		fpl_optim_free(o);
	}
}

/* ------------------------------------------------------------ the scalar model */

enum { M_ROUND, M_ADD, M_SUB, M_MUL, M_DIV, M_SQRT, M_FMA };

typedef struct mdl {
	fpl_opt_config c;
	fpl_state st;
	uint64_t ctr;
	size_t n;
	double *w, *M, *cc, *s1, *s2, *t1, *t2, *t3, *d, *u, *g;
	uint64_t t;
} mdl;

/* z[i] = op(a[i], b[i], c[i]) (NULL b or c: the constant kb, kc), element i
 * with draw ctr + i; then ctr += n. */
static void mop(mdl *m, int op, const fpl_format *f, fpl_rnd r, double *z, const double *a,
		const double *b, double kb, const double *c, double kc)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		double x = a[i], y = b ? b[i] : kb, v = c ? c[i] : kc;
		m->st.counter = m->ctr + i;
		switch (op) {
		case M_ROUND: z[i] = fpl_round(f, x, r, &m->st); break;
		case M_ADD: z[i] = fpl_add(f, x, y, r, &m->st); break;
		case M_SUB: z[i] = fpl_sub(f, x, y, r, &m->st); break;
		case M_MUL: z[i] = fpl_mul(f, x, y, r, &m->st); break;
		case M_DIV: z[i] = fpl_div(f, x, y, r, &m->st); break;
		case M_SQRT: z[i] = fpl_sqrt(f, x, r, &m->st); break;
		default: z[i] = fpl_fma(f, x, y, v, r, &m->st); break;
		}
	}
	m->ctr += m->n;
}

/* constant times array: c*a, with the constant first as the library writes it */
static void mconst(mdl *m, int op, const fpl_format *f, fpl_rnd r, double *z, double k,
		   const double *a)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		m->st.counter = m->ctr + i;
		z[i] = op == M_MUL ? fpl_mul(f, k, a[i], r, &m->st) : fpl_div(f, a[i], k, r, &m->st);
	}
	m->ctr += m->n;
}

static double *dup0(size_t n)
{
	return calloc(n, sizeof(double));
}

static void mdl_init(mdl *m, const fpl_opt_config *c, size_t n, const double *w0, uint64_t seed)
{
	const fpl_opt_policy *p = &c->policy;
	fpl_state parent;

	memset(m, 0, sizeof *m);
	m->c = *c;
	m->n = n;
	fpl_state_init(&parent, seed);
	fpl_state_fork(&parent, &m->st, 0);
	m->w = dup0(n); m->M = dup0(n); m->cc = dup0(n); m->s1 = dup0(n); m->s2 = dup0(n);
	m->t1 = dup0(n); m->t2 = dup0(n); m->t3 = dup0(n); m->d = dup0(n); m->u = dup0(n);
	m->g = dup0(n);
	if (p->master == FPL_MASTER_FP32) {
		mop(m, M_ROUND, &p->master_fmt, FPL_RND_NE, m->M, w0, NULL, 0, NULL, 0);
		mop(m, M_ROUND, &p->weight, p->weight_rnd, m->w, m->M, NULL, 0, NULL, 0);
	} else {
		mop(m, M_ROUND, &p->weight, p->weight_rnd, m->w, w0, NULL, 0, NULL, 0);
	}
}

static void mdl_free(mdl *m)
{
	free(m->w); free(m->M); free(m->cc); free(m->s1); free(m->s2);
	free(m->t1); free(m->t2); free(m->t3); free(m->d); free(m->u); free(m->g);
}

/* One step, no loss scaling: the header's formulas, written again. */
static void mdl_step(mdl *m, const double *G)
{
	const fpl_opt_policy *p = &m->c.policy;
	const fpl_opt_hyper *h = &m->c.hyper;
	const fpl_format *A = &p->arith, *S = &p->state, *W = &p->weight;
	fpl_rnd ar = p->arith_rnd, sr = p->state_rnd, wr = p->weight_rnd;
	double *wc = p->master == FPL_MASTER_FP32 ? m->M : m->w;
	size_t i, n = m->n;

	m->t++;
	mop(m, M_ROUND, &p->grad, p->grad_rnd, m->t1, G, NULL, 0, NULL, 0);	/* cast, S = 1 */
	mop(m, M_DIV, &p->unscale, p->unscale_rnd, m->g, m->t1, NULL, 1, NULL, 0);
	memcpy(m->d, m->g, n * sizeof *m->d);
	if (h->weight_decay != 0) {
		mconst(m, M_MUL, A, ar, m->t1, h->weight_decay, wc);
		mop(m, M_ADD, A, ar, m->d, m->g, m->t1, 0, NULL, 0);
	}
	if (h->algo == FPL_OPT_SGD) {
		if (h->momentum != 0) {
			if (m->t == 1) {
				mop(m, M_ROUND, S, sr, m->s1, m->d, NULL, 0, NULL, 0);
			} else {
				mconst(m, M_MUL, A, ar, m->t1, h->momentum, m->s1);
				mconst(m, M_MUL, A, ar, m->t2, 1 - h->dampening, m->d);
				mop(m, M_ADD, A, ar, m->t1, m->t1, m->t2, 0, NULL, 0);
				mop(m, M_ROUND, S, sr, m->s1, m->t1, NULL, 0, NULL, 0);
			}
			if (h->nesterov) {
				mconst(m, M_MUL, A, ar, m->t1, h->momentum, m->s1);
				mop(m, M_ADD, A, ar, m->d, m->d, m->t1, 0, NULL, 0);
			} else {
				memcpy(m->d, m->s1, n * sizeof *m->d);
			}
		}
		mconst(m, M_MUL, A, ar, m->u, h->lr, m->d);
	} else {	/* adam */
		double bc1 = 1 - pow(h->beta1, (double)m->t), bc2s = sqrt(1 - pow(h->beta2, (double)m->t));
		mop(m, M_SUB, A, ar, m->t1, m->d, m->s1, 0, NULL, 0);
		mconst(m, M_MUL, A, ar, m->t1, 1 - h->beta1, m->t1);
		mop(m, M_ADD, A, ar, m->t1, m->s1, m->t1, 0, NULL, 0);
		mop(m, M_ROUND, S, sr, m->s1, m->t1, NULL, 0, NULL, 0);
		mconst(m, M_MUL, A, ar, m->t1, h->beta2, m->s2);
		mconst(m, M_MUL, A, ar, m->t2, 1 - h->beta2, m->d);
		mop(m, M_MUL, A, ar, m->t2, m->t2, m->d, 0, NULL, 0);
		mop(m, M_ADD, A, ar, m->t1, m->t1, m->t2, 0, NULL, 0);
		mop(m, M_ROUND, S, sr, m->s2, m->t1, NULL, 0, NULL, 0);
		mop(m, M_SQRT, A, ar, m->t1, m->s2, NULL, 0, NULL, 0);
		mconst(m, M_DIV, A, ar, m->t1, bc2s, m->t1);
		mop(m, M_ADD, A, ar, m->t1, m->t1, NULL, h->eps, NULL, 0);
		mop(m, M_DIV, A, ar, m->t1, m->s1, m->t1, 0, NULL, 0);
		mconst(m, M_MUL, A, ar, m->u, h->lr / bc1, m->t1);
	}
	switch (p->master) {
	case FPL_MASTER_FP32:
		mop(m, M_SUB, &p->master_fmt, FPL_RND_NE, m->M, m->M, m->u, 0, NULL, 0);
		mop(m, M_ROUND, W, wr, m->w, m->M, NULL, 0, NULL, 0);
		break;
	case FPL_MASTER_KAHAN:
		for (i = 0; i < n; i++)
			m->t3[i] = -m->u[i];
		mop(m, M_SUB, W, wr, m->t1, m->t3, m->cc, 0, NULL, 0);	/* y */
		mop(m, M_ADD, W, wr, m->t2, m->w, m->t1, 0, NULL, 0);	/* s */
		mop(m, M_SUB, W, wr, m->t3, m->t2, m->w, 0, NULL, 0);
		mop(m, M_SUB, W, wr, m->cc, m->t3, m->t1, 0, NULL, 0);
		memcpy(m->w, m->t2, n * sizeof *m->w);
		break;
	case FPL_MASTER_STOCHASTIC:
		mop(m, M_SUB, W, p->weight_sr, m->w, m->w, m->u, 0, NULL, 0);
		break;
	default:
		mop(m, M_SUB, W, wr, m->w, m->w, m->u, 0, NULL, 0);
		break;
	}
}

/* sgd and adam, fp16 and bf16, four strategies, against the model. */
static void test_model(void)
{
	static const char *const fmts[] = { "fp16", "bf16" };
	static const fpl_opt_master ms[] = { FPL_MASTER_NONE, FPL_MASTER_FP32, FPL_MASTER_KAHAN,
					     FPL_MASTER_STOCHASTIC };
	enum { N = 64, STEPS = 4 };
	double w0[N], G[STEPS][N], *got = malloc(N * sizeof *got);
	h_rng rng;
	int fi, mi, ai, s;
	size_t i;

	h_rng_init(&rng, 11);
	for (i = 0; i < N; i++) {
		w0[i] = h_rng_value(&rng, -3, 1, 30, 0);
		for (s = 0; s < STEPS; s++)
			G[s][i] = h_rng_value(&rng, -12, 2, 40, 0);
	}
	w0[0] = 0;
	G[0][1] = 0;
	for (fi = 0; fi < 2; fi++)
		for (mi = 0; mi < 4; mi++)
			for (ai = 0; ai < 4; ai++) {
				fpl_format f = h_format(fmts[fi]);
				fpl_opt_config c;
				fpl_optim *o;
				mdl m;
				uint64_t cnt[FPL_NFLAGS];
				int bad = 0, k;

				fpl_opt_config_init(&c);
				if (ai == 3)
					fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM);
				c.hyper.lr = 0.01;
				if (ai == 1) {
					c.hyper.momentum = 0.9;
					c.hyper.dampening = 0.25;
					c.hyper.weight_decay = 0.01;
				} else if (ai == 2) {
					c.hyper.momentum = 0.5;
					c.hyper.nesterov = 1;
				} else if (ai == 3) {
					c.hyper.weight_decay = 0.1;
					c.hyper.eps = 1e-3;
				}
				fpl_opt_policy_preset(&c.policy, ms[mi], &f);
				if (ms[mi] == FPL_MASTER_STOCHASTIC) {	/* every draw's place checked */
					c.policy.weight_sr = fi ? FPL_RND_SE : FPL_RND_SP;
					c.policy.arith_rnd = c.policy.state_rnd = FPL_RND_SP;
					c.policy.grad_rnd = FPL_RND_SE;
				}
				o = make(&c, N, w0, 99);
				if (!o)
					continue;
				mdl_init(&m, &c, N, w0, 99);
				for (s = 0; s < STEPS; s++) {
					step1(o, G[s], NULL);
					mdl_step(&m, G[s]);
				}
				fpl_optim_master(o, 0, got);
				for (i = 0; i < N; i++) {
					double wm = ms[mi] == FPL_MASTER_FP32 ? m.M[i] : m.w[i];
					if (!h_same(fpl_optim_weights(o, 0)[i], m.w[i]) || !h_same(got[i], wm))
						bad++;
				}
				fpl_optim_flags(o, NULL, cnt);
				for (k = 0; k < FPL_NFLAGS; k++)
					if (cnt[k] != m.st.count[k])
						bad++;
				if (!h_check(bad == 0))
					h_fail("model: %s %s case %d: %d mismatches", fmts[fi],
					       fpl_opt_master_name(ms[mi]), ai, bad);
				mdl_free(&m);
				fpl_optim_free(o);
			}
	free(got);
}

/* The reference's C fast path against the scalar engine (the model) on
 * values that send lanes to the engine: specials, tiny and huge. */
static void test_fast64(void)
{
	enum { N = 48, STEPS = 3 };
	static const double sp[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, 0x1p-1000,
				     0x1p-960, 0x1p1000, 0x1.fffffffffffffp1023, -0x1p-1022,
				     3.0, 1e-300, 1e300 };
	double w0[N], G[STEPS][N];
	h_rng rng;
	int ai, s, k;
	size_t i;

	h_rng_init(&rng, 12);
	for (i = 0; i < N; i++) {
		int wide = i < 30;	/* then values of a normal training run */
		w0[i] = i < 14 ? sp[(i + 5) % 14]
			: wide ? h_rng_value(&rng, -1000, 1000, 53, 0) : h_rng_value(&rng, -8, 2, 53, 0);
		for (s = 0; s < STEPS; s++)
			G[s][i] = i < 14 && s == 0 ? sp[i]
				  : wide ? h_rng_value(&rng, -1060, 1020, 53, 0)
				  : h_rng_value(&rng, -20, 0, 53, 0);
	}
	for (ai = 0; ai < 2; ai++) {
		fpl_opt_config c;
		fpl_optim *o;
		mdl m;
		uint64_t cnt[FPL_NFLAGS];
		int bad = 0;

		fpl_opt_config_init(&c);
		if (ai) {
			fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM);
			c.hyper.weight_decay = 0.5;
		} else {
			c.hyper.momentum = 0.9;
			c.hyper.weight_decay = 3;
			c.hyper.lr = 0x1p-3;
		}
		o = make(&c, N, w0, 5);
		if (!o)
			continue;
		mdl_init(&m, &c, N, w0, 5);
		for (s = 0; s < STEPS; s++) {
			step1(o, G[s], NULL);
			mdl_step(&m, G[s]);
		}
		for (i = 0; i < N; i++)
			if (!h_same(fpl_optim_weights(o, 0)[i], m.w[i])) {
				if (bad++ < 3)
					h_fail("fast64 case %d element %zu: want %a got %a", ai, i,
					       m.w[i], fpl_optim_weights(o, 0)[i]);
			}
		fpl_optim_flags(o, NULL, cnt);
		for (k = 0; k < FPL_NFLAGS; k++)
			if (cnt[k] != m.st.count[k]) {
				bad++;
				h_fail("fast64 case %d flag %s: want %llu got %llu", ai, fpl_flag_name(k),
				       (unsigned long long)m.st.count[k], (unsigned long long)cnt[k]);
			}
		h_check(bad == 0);
		mdl_free(&m);
		fpl_optim_free(o);
	}
}

/* ------------------------------------------------------------ FPLAB_OPTIM */

/* Steps of one configuration; weights, master and counts into out. */
static int run_env(const fpl_opt_config *c, size_t n, const double *w0, double (*G)[64],
		   int steps, double *w, double *M, uint64_t cnt[FPL_NFLAGS])
{
	fpl_optim *o = make(c, n, w0, 21);
	int s;

	if (!o)
		return -1;
	for (s = 0; s < steps; s++)
		step1(o, G[s], NULL);
	memcpy(w, fpl_optim_weights(o, 0), n * sizeof *w);
	fpl_optim_master(o, 0, M);
	fpl_optim_flags(o, NULL, cnt);
	fpl_optim_free(o);
	return 0;
}

static void test_env(void)
{
	enum { N = 64, STEPS = 4 };
	double w0[N], G[STEPS][N], w[2][N], M[2][N];
	uint64_t cnt[2][FPL_NFLAGS];
	fpl_format bf = h_format("bf16"), f16 = h_format("fp16"), f64 = h_format("fp64");
	h_rng rng;
	int k, e, s;
	size_t i;

	h_rng_init(&rng, 13);
	for (i = 0; i < N; i++) {
		int wide = i % 4 == 0;
		w0[i] = wide ? h_rng_value(&rng, -140, 120, 53, 0) : h_rng_value(&rng, -6, 1, 53, 0);
		for (s = 0; s < STEPS; s++)
			G[s][i] = wide ? h_rng_value(&rng, -1060, 1000, 53, 0)
				       : h_rng_value(&rng, -20, 0, 53, 0);
	}
	G[0][1] = 0;
	G[1][2] = INFINITY;
	G[2][3] = NAN;
	for (k = 0; k < 3; k++) {
		fpl_opt_config c;
		int bad = 0;

		fpl_opt_config_init(&c);
		fpl_opt_hyper_init(&c.hyper, k == 1 ? FPL_OPT_SGD : FPL_OPT_ADAM);
		c.hyper.weight_decay = 0.01;
		if (k == 1) {
			c.hyper.momentum = 0.9;
			fpl_opt_policy_preset(&c.policy, FPL_MASTER_NONE, &f16);
			c.policy.arith = c.policy.state = c.policy.unscale = f64;
		} else if (k == 2) {
			fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &bf);
		}
		for (e = 0; e < 2; e++) {
			if (e)
				setenv("FPLAB_OPTIM", "ref", 1);
			run_env(&c, N, w0, G, STEPS, w[e], M[e], cnt[e]);
			unsetenv("FPLAB_OPTIM");
		}
		for (i = 0; i < N; i++)
			if (!h_same(w[0][i], w[1][i]) || !h_same(M[0][i], M[1][i])) {
				if (bad++ < 3)
					h_fail("FPLAB_OPTIM case %d element %zu: ref %a/%a, fast %a/%a",
					       k, i, w[1][i], M[1][i], w[0][i], M[0][i]);
			}
		for (s = 0; s < FPL_NFLAGS; s++)
			if (cnt[0][s] != cnt[1][s])
				bad++;
		if (!h_check(bad == 0))
			h_fail("FPLAB_OPTIM case %d: %d mismatches", k, bad);
	}
	{
		fpl_opt_config c;
		fpl_optim *o;
		const double *Gp[1] = { G[0] };
		size_t n = N;

		fpl_opt_config_init(&c);
		o = make(&c, n, w0, 1);
		setenv("FPLAB_OPTIM", "bogus", 1);
		if (o)
			h_check(fpl_optim_step(o, Gp, NULL) == FPL_ENOTFOUND);
		unsetenv("FPLAB_OPTIM");
		fpl_optim_free(o);
	}
}

/* ------------------------------------------------------------ stochastic */

static void run_adam(const char *f, int threads, uint64_t seed, size_t n, double *out)
{
	fpl_format wf = h_format(f);
	fpl_opt_config c;
	fpl_optim *o;
	double *w0 = malloc(n * sizeof *w0), *g = malloc(n * sizeof *g);
	h_rng rng;
	size_t i;
	int s;

	h_rng_init(&rng, 21);
	for (i = 0; i < n; i++)
		w0[i] = h_rng_value(&rng, -4, 0, 24, 0);
	fpl_opt_config_init(&c);
	fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAMW);
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_STOCHASTIC, &wf);
	c.policy.arith_rnd = c.policy.state_rnd = FPL_RND_SP;
	c.threads = threads;
	o = make(&c, n, w0, seed);
	for (s = 0; o && s < 3; s++) {
		for (i = 0; i < n; i++)
			g[i] = h_rng_value(&rng, -10, 0, 24, 0);
		step1(o, g, NULL);
	}
	if (o)
		memcpy(out, fpl_optim_weights(o, 0), n * sizeof *out);
	fpl_optim_free(o);
	free(w0);
	free(g);
}

static void test_stochastic(void)
{
	size_t n = 1u << 17, i, diff = 0, same = 1;
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	fpl_format f16 = h_format("fp16");
	fpl_opt_config cf;
	fpl_optim *o;
	enum { M = 4096 };
	double w0[M], g[M], mean = 0, want = 1 - 0x1p-12, sd = 0x1p-12 / 64;

	run_adam("fp16", 1, 3, n, a);
	run_adam("fp16", 2, 3, n, b);
	run_adam("fp16", 1, 4, n, c);
	for (i = 0; i < n; i++) {
		same &= h_same(a[i], b[i]);
		diff += !h_same(a[i], c[i]);
	}
	if (!h_check(same))
		h_fail("stochastic adamw: 1 and 2 threads differ");
	if (!h_check(diff > n / 100))
		h_fail("stochastic adamw: another seed changes only %zu of %zu", diff, n);
	/* w = 1, u = 2^-12 exactly: sp gives 1 - 2^-11 or 1 with probability
	 * 1/2 each (fp16's spacing below 1 is 2^-11), so the mean of M
	 * elements is 1 - 2^-12 with standard deviation 2^-12/sqrt(M). */
	for (i = 0; i < M; i++) {
		w0[i] = 1;
		g[i] = 1;
	}
	fpl_opt_config_init(&cf);
	cf.hyper.lr = 0x1p-12;
	fpl_opt_policy_preset(&cf.policy, FPL_MASTER_STOCHASTIC, &f16);
	o = make(&cf, M, w0, 8);
	if (o) {
		step1(o, g, NULL);
		for (i = 0; i < M; i++)
			mean += fpl_optim_weights(o, 0)[i];
		mean /= M;
		if (!h_check(fabs(mean - want) < 6 * sd))
			h_fail("stochastic mean %a, want %a within %a", mean, want, 6 * sd);
	}
	fpl_optim_free(o);
	free(a);
	free(b);
	free(c);
}

/* ------------------------------------------------------------ split */

static uint32_t f32bits(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static void test_split(void)
{
	size_t n = 4096, i, differ = 0;
	int steps = h_sanitized() ? 100 : 500, s, bad = 0;
	fpl_format bf = h_format("bf16");
	fpl_opt_config c;
	fpl_optim *sp, *fm;
	double *w0 = malloc(n * sizeof *w0), *g = malloc(n * sizeof *g);
	double *ms = malloc(n * sizeof *ms), *mf = malloc(n * sizeof *mf);
	fpl_opt_report rs, rf;
	h_rng rng;

	h_rng_init(&rng, 31);
	for (i = 0; i < n; i++)
		w0[i] = h_rng_value(&rng, -6, 1, 53, 0);
	fpl_opt_config_init(&c);
	c.hyper.lr = 0.01;
	c.hyper.momentum = 0.9;
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_SPLIT, &bf);
	sp = make(&c, n, w0, 1);
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &bf);
	fm = make(&c, n, w0, 1);
	for (s = 0; sp && fm && s < steps; s++) {
		for (i = 0; i < n; i++)
			g[i] = h_rng_value(&rng, -14, -2, 53, 0);
		step1(sp, g, &rs);
		step1(fm, g, &rf);
	}
	if (sp && fm) {
		const double *ws = fpl_optim_weights(sp, 0), *wf = fpl_optim_weights(fm, 0);

		fpl_optim_master(sp, 0, ms);
		fpl_optim_master(fm, 0, mf);
		for (i = 0; i < n; i++) {
			bad += !h_same(ms[i], mf[i]);
			bad += f32bits(ws[i]) != (f32bits(ms[i]) & 0xffff0000u);
			differ += !h_same(ws[i], wf[i]);
		}
		if (!h_check(bad == 0))
			h_fail("split: %d mismatches against fp32-master", bad);
		if (!h_check(differ > 0))
			h_fail("split: fp32-master's ne copy never differs from the truncation");
		h_note("split:bf16 vs fp32-master:bf16 after %d steps: masters equal, stored bf16 "
		       "differs in %.3f of %zu elements; stale %llu and %llu", steps,
		       (double)differ / (double)n, n, (unsigned long long)rs.stale,
		       (unsigned long long)rf.stale);
	}
	fpl_optim_free(sp);
	fpl_optim_free(fm);
	free(w0); free(g); free(ms); free(mf);
}

/* ------------------------------------------------------------ vanishing */

static void test_vanish(void)
{
	fpl_format f16 = h_format("fp16");
	static const fpl_opt_master ms[3] = { FPL_MASTER_NONE, FPL_MASTER_FP32, FPL_MASTER_KAHAN };
	double w0[1] = { 1 }, g[1] = { 1 }, m[1];
	int k, s;

	for (k = 0; k < 3; k++) {
		fpl_opt_config c;
		fpl_optim *o;
		fpl_opt_report r;

		fpl_opt_config_init(&c);
		c.hyper.lr = 0x1p-12;	/* u = 2^-12: 1 - 2^-12 is fp16's tie, even is 1 */
		fpl_opt_policy_preset(&c.policy, ms[k], &f16);
		o = make(&c, 1, w0, 1);
		if (!o)
			continue;
		step1(o, g, &r);
		fpl_optim_master(o, 0, m);
		if (k == 0)
			h_check(r.nonzero == 1 && r.vanished == 1 && r.stale == 0
				&& fpl_optim_weights(o, 0)[0] == 1);
		if (k == 1)	/* the master moves, the fp16 copy does not */
			h_check(r.nonzero == 1 && r.vanished == 0 && r.stale == 1
				&& m[0] == 1 - 0x1p-12 && fpl_optim_weights(o, 0)[0] == 1);
		if (k == 2) {	/* w stays, c = 2^-12 holds the update */
			if (!h_check(r.nonzero == 1 && r.vanished == 0 && fpl_optim_weights(o, 0)[0] == 1))
				h_fail("kahan step 1: vanished %llu w %a", (unsigned long long)r.vanished,
				       fpl_optim_weights(o, 0)[0]);
			/* every second step moves w by 2^-11: after 2^8 steps 1 - 2^-4 */
			for (s = 1; s < 256; s++)
				step1(o, g, &r);
			if (!h_check(fpl_optim_weights(o, 0)[0] == 1 - 0x1p-4))
				h_fail("kahan after 256 steps: %a", fpl_optim_weights(o, 0)[0]);
		}
		if (k == 0) {
			for (s = 1; s < 256; s++)
				step1(o, g, &r);
			h_check(fpl_optim_weights(o, 0)[0] == 1 && r.vanished == 1);
		}
		fpl_optim_free(o);
	}
}

/* ------------------------------------------------------------ loss scaling */

static void test_scaling(void)
{
	fpl_format f16 = h_format("fp16");
	fpl_opt_config c;
	fpl_optim *o;
	fpl_opt_report r;
	double w0[2] = { 0x1p-20, 1 }, g[2], m[2];
	int k, s;

	/* constant S: 2^-30 is below fp16's 2^-24; with S = 1024 it is 2^-20,
	 * a subnormal of fp16, unscaled exactly into binary32 */
	for (k = 0; k < 2; k++) {
		fpl_opt_config_init(&c);
		c.hyper.lr = 1;
		fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f16);
		c.scaler.kind = FPL_OPT_SCALE_CONST;
		c.scaler.scale = k ? 1024 : 1;
		o = make(&c, 2, w0, 1);
		if (!o)
			continue;
		g[0] = 0x1p-30;
		g[1] = 0.5;
		step1(o, g, &r);
		fpl_optim_master(o, 0, m);
		if (k == 0 && !h_check(r.nonzero == 1 && m[0] == 0x1p-20 && r.grad_count[1] == 1
				       && r.scale == 1))
			h_fail("S = 1: nonzero %llu master %a underflows %llu",
			       (unsigned long long)r.nonzero, m[0], (unsigned long long)r.grad_count[1]);
		if (k == 1 && !h_check(r.nonzero == 2 && m[0] == 0x1p-20 - 0x1p-30 && r.grad_count[1] == 0
				       && r.scale == 1024 && r.next_scale == 1024))
			h_fail("S = 1024: nonzero %llu master %a", (unsigned long long)r.nonzero, m[0]);
		fpl_optim_free(o);
	}

	/* dynamic: S0 = 1024, interval 3; step 3's gradient 100 overflows fp16
	 * when scaled (102400 > 65504): skipped, S halves, the tracker restarts;
	 * three clean steps later S doubles.  A NaN gradient skips too. */
	{
		static const double gv[8] = { 1, 1, 100, 1, 1, 1, 1, NAN };
		static const double used[8] = { 1024, 1024, 1024, 512, 512, 512, 1024, 1024 };
		static const double next[8] = { 1024, 1024, 512, 512, 512, 1024, 1024, 512 };
		static const int skip[8] = { 0, 0, 1, 0, 0, 0, 0, 1 };
		static const uint64_t t[8] = { 1, 2, 2, 3, 4, 5, 6, 6 };
		double before;

		fpl_opt_config_init(&c);
		c.hyper.lr = 0x1p-4;
		fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f16);
		fpl_opt_scaler_init(&c.scaler);
		c.scaler.kind = FPL_OPT_SCALE_DYNAMIC;
		c.scaler.scale = 1024;
		c.scaler.interval = 3;
		o = make(&c, 2, w0, 1);
		for (s = 0; o && s < 8; s++) {
			g[0] = gv[s];
			g[1] = 0.5;
			fpl_optim_master(o, 0, m);
			before = m[1];
			if (!h_check(fpl_optim_scale(o) == used[s]))
				h_fail("dynamic step %d: scale %g want %g", s, fpl_optim_scale(o), used[s]);
			step1(o, g, &r);
			fpl_optim_master(o, 0, m);
			if (!h_check(r.skipped == skip[s] && r.scale == used[s] && r.next_scale == next[s]
				     && r.t == t[s] && (m[1] == before) == skip[s]
				     && r.nonfinite == (uint64_t)skip[s] && r.params == (skip[s] ? 0 : 2)))
				h_fail("dynamic step %d: skipped %d scale %g next %g t %llu", s, r.skipped,
				       r.scale, r.next_scale, (unsigned long long)r.t);
		}
		fpl_optim_free(o);
	}

	/* step_scaled with gradients the test scaled (fpl_mul into fp16 by
	 * fpl_optim_scale) gives fpl_optim_step's bits */
	{
		fpl_optim *o2;
		fpl_state tmp;
		double gs[2], m2[2];
		int bad = 0;

		fpl_opt_config_init(&c);
		fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM);
		fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f16);
		c.scaler.kind = FPL_OPT_SCALE_DYNAMIC;
		c.scaler.scale = 4096;
		c.scaler.interval = 2;
		o = make(&c, 2, w0, 1);
		o2 = make(&c, 2, w0, 1);
		fpl_state_init(&tmp, 0);
		for (s = 0; o && o2 && s < 6; s++) {
			const double *GS[1] = { gs };
			g[0] = s == 2 ? 40 : 0.01 * (s + 1);
			g[1] = -3e-6;
			for (k = 0; k < 2; k++)
				gs[k] = fpl_mul(&f16, g[k], fpl_optim_scale(o2), FPL_RND_NE, &tmp);
			step1(o, g, &r);
			h_check(fpl_optim_step_scaled(o2, GS, NULL) == 0);
			fpl_optim_master(o, 0, m);
			fpl_optim_master(o2, 0, m2);
			bad += !h_same(m[0], m2[0]) || !h_same(m[1], m2[1])
			       || fpl_optim_scale(o) != fpl_optim_scale(o2);
		}
		/* 4096: steps 1, 2 grow it to 8192; step 3 (40*8192 > 65504) backs
		 * off to 4096; steps 4, 5 grow it to 8192; step 6 counts one */
		if (!h_check(bad == 0 && fpl_optim_scale(o) == 8192))
			h_fail("step_scaled: %d mismatches, scale %g", bad, fpl_optim_scale(o));
		fpl_optim_free(o);
		fpl_optim_free(o2);
	}

	/* APS: fp16's max 65504 < 2^16.  max|G| = 3: 3*2^14 = 49152 < 65504 <
	 * 3*2^15, k = 14; max|G| = 0.001: 2^25 * 0.001 = 33554.4 < 65504 <
	 * 2^26 * 0.001, k = 25.  A constant-scaled step_scaled is refused. */
	{
		static const double gmax[2] = { 3, 0.001 }, want[2] = { 0x1p14, 0x1p25 };
		const double *G[1] = { g };

		for (k = 0; k < 2; k++) {
			fpl_opt_config_init(&c);
			fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f16);
			c.scaler.kind = FPL_OPT_SCALE_APS;
			o = make(&c, 2, w0, 1);
			if (!o)
				continue;
			g[0] = -gmax[k];
			g[1] = gmax[k] / 4;
			step1(o, g, &r);
			if (!h_check(r.scale == want[k] && r.next_scale == 1 && fpl_optim_scale(o) == 1))
				h_fail("aps %g: scale %a want %a", gmax[k], r.scale, want[k]);
			h_check(fpl_optim_step_scaled(o, G, &r) == FPL_EINVAL);
			fpl_optim_free(o);
		}
	}
}

/* ------------------------------------------------------------ memory, errors */

static void test_memory(void)
{
	static const struct {
		fpl_opt_master m;
		const char *f;
		fpl_opt_algo a;
		double mom, want;
	} T[] = {
		{ FPL_MASTER_NONE, "fp16", FPL_OPT_SGD, 0, 2 },		/* 2 */
		{ FPL_MASTER_FP32, "bf16", FPL_OPT_ADAM, 0, 14 },	/* 2 + 4 + 2*4 */
		{ FPL_MASTER_SPLIT, "bf16", FPL_OPT_SGD, 0.9, 8 },	/* 2 + 2 + 4 */
		{ FPL_MASTER_KAHAN, "fp16", FPL_OPT_ADAM, 0, 8 },	/* 2 + 2 + 2*2 */
		{ FPL_MASTER_STOCHASTIC, "bf16", FPL_OPT_ADAGRAD, 0, 4 },	/* 2 + 0 + 2 */
		{ FPL_MASTER_NONE, "e4m3fn", FPL_OPT_LAMB, 0, 3 },	/* 1 + 0 + 2*1 */
		{ FPL_MASTER_FP32, "fp16", FPL_OPT_SGD, 0.9, 10 },	/* 2 + 4 + 4 */
	};
	fpl_opt_config c;
	fpl_opt_memory m;
	size_t i;

	for (i = 0; i < sizeof T / sizeof T[0]; i++) {
		fpl_format f = h_format(T[i].f);
		fpl_opt_config_init(&c);
		fpl_opt_hyper_init(&c.hyper, T[i].a);
		c.hyper.momentum = T[i].mom;
		fpl_opt_policy_preset(&c.policy, T[i].m, &f);
		fpl_opt_memory_per_param(&c, &m);
		if (!h_check(m.total == T[i].want && m.total == m.weight + m.master + m.state))
			h_fail("memory %s:%s %s: %g want %g", fpl_opt_master_name(T[i].m), T[i].f,
			       fpl_opt_algo_name(T[i].a), m.total, T[i].want);
	}
	fpl_opt_config_init(&c);	/* reference adam: 8 + 0 + 16 */
	fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM);
	fpl_opt_memory_per_param(&c, &m);
	h_check(m.total == 24 && m.weight == 8 && m.master == 0 && m.state == 16);
}

static int create_rc(const fpl_opt_config *c)
{
	fpl_optim *o = (fpl_optim *)&o;
	double w[1] = { 1 };
	const double *W[1] = { w };
	size_t n = 1;
	fpl_state st;
	int r;

	fpl_state_init(&st, 1);
	r = fpl_optim_create(&o, c, 1, &n, W, &st);
	if (r && !h_check(o == NULL))
		h_fail("create failed with %d but *out is not NULL", r);
	fpl_optim_free(o);
	return r;
}

static void test_errors(void)
{
	fpl_format f16 = h_format("fp16"), bf = h_format("bf16");
	fpl_opt_config c, b;
	fpl_opt_policy p;
	fpl_optim *o;
	fpl_state st;
	fpl_opt_algo a;
	fpl_opt_master m;
	size_t n1 = 1, n0 = 0;
	double w[1] = { 1 }, out[1];
	const double *W[1] = { w }, *NW[1] = { NULL };
	int i;

	for (i = 0; i < FPL_OPT_COUNT; i++)
		h_check(fpl_opt_algo_parse(fpl_opt_algo_name((fpl_opt_algo)i), &a) == 0 && (int)a == i);
	for (i = 0; i < FPL_MASTER_COUNT; i++)
		h_check(fpl_opt_master_parse(fpl_opt_master_name((fpl_opt_master)i), &m) == 0
			&& (int)m == i);
	h_check(!strcmp(fpl_opt_master_name(FPL_MASTER_FP32), "fp32-master"));
	h_check(fpl_opt_algo_parse("rmsprop", &a) == FPL_ENOTFOUND);
	h_check(fpl_opt_master_parse("fp16", &m) == FPL_ENOTFOUND);
	h_check(fpl_opt_policy_preset(&p, FPL_MASTER_SPLIT, &f16) == FPL_EFORMAT);
	h_check(fpl_opt_policy_preset(&p, FPL_MASTER_COUNT, &f16) == FPL_EINVAL);
	h_check(fpl_opt_policy_preset(NULL, FPL_MASTER_NONE, &f16) == FPL_EINVAL);
	h_check(fpl_opt_policy_preset(&p, FPL_MASTER_SPLIT, &bf) == 0);

	fpl_opt_config_init(&b);
	h_check(create_rc(&b) == 0);
	fpl_state_init(&st, 1);
	h_check(fpl_optim_create(NULL, &b, 1, &n1, W, &st) == FPL_EINVAL);
	h_check(fpl_optim_create(&o, NULL, 1, &n1, W, &st) == FPL_EINVAL && !o);
	h_check(fpl_optim_create(&o, &b, 1, &n1, W, NULL) == FPL_EINVAL && !o);
	h_check(fpl_optim_create(&o, &b, 1, NULL, W, &st) == FPL_EINVAL && !o);
	h_check(fpl_optim_create(&o, &b, 1, &n1, NW, &st) == FPL_EINVAL && !o);
	/* an empty optimizer and an empty tensor step fine */
	h_check(fpl_optim_create(&o, &b, 0, NULL, NULL, &st) == 0 && o);
	h_check(fpl_optim_step(o, NULL, NULL) == 0 && fpl_optim_weights(o, 0) == NULL);
	h_check(fpl_optim_master(o, 0, out) == FPL_EINVAL);
	fpl_optim_free(o);
	h_check(fpl_optim_create(&o, &b, 1, &n0, NW, &st) == 0 && o);
	h_check(fpl_optim_step(o, NW, NULL) == 0);
	fpl_optim_free(o);
	h_check(fpl_optim_create(&o, &b, 1, &n1, W, &st) == 0 && o);
	h_check(fpl_optim_step(o, NULL, NULL) == FPL_EINVAL && fpl_optim_step(o, NW, NULL) == FPL_EINVAL);
	h_check(fpl_optim_step(NULL, W, NULL) == FPL_EINVAL);
	h_check(fpl_optim_master(o, 1, out) == FPL_EINVAL && fpl_optim_weights(o, 1) == NULL);
	fpl_optim_free(o);
	fpl_optim_free(NULL);

#define BAD(code, stmt) do { c = b; stmt; if (!h_check(create_rc(&c) == (code))) \
	h_fail("bad config (%s) does not give %s", #stmt, #code); } while (0)
	BAD(FPL_EINVAL, c.hyper.lr = -1);
	BAD(FPL_EINVAL, c.hyper.lr = NAN);
	BAD(FPL_EINVAL, c.hyper.weight_decay = -0.5);
	BAD(FPL_EINVAL, c.hyper.momentum = -0.1);
	BAD(FPL_EINVAL, c.hyper.nesterov = 1);
	BAD(FPL_EINVAL, (c.hyper.nesterov = 1, c.hyper.momentum = 0.9, c.hyper.dampening = 0.1));
	BAD(FPL_EINVAL, c.hyper.algo = FPL_OPT_COUNT);
	BAD(FPL_EINVAL, (fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAM), c.hyper.beta1 = 1));
	BAD(FPL_EINVAL, (fpl_opt_hyper_init(&c.hyper, FPL_OPT_LAMB), c.hyper.beta2 = -0.1));
	BAD(FPL_EINVAL, (fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAMW), c.hyper.eps = -1));
	BAD(FPL_EINVAL, (fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAGRAD), c.hyper.lr_decay = -1));
	BAD(FPL_EINVAL, (fpl_opt_hyper_init(&c.hyper, FPL_OPT_ADAGRAD),
			 c.hyper.initial_accumulator_value = -1));
	BAD(FPL_EINVAL, c.policy.master = FPL_MASTER_COUNT);
	BAD(FPL_EINVAL, c.policy.arith_rnd = FPL_RND_COUNT);
	BAD(FPL_EINVAL, c.policy.grad_rnd = (fpl_rnd)-1);
	BAD(FPL_EINVAL, (fpl_opt_policy_preset(&c.policy, FPL_MASTER_STOCHASTIC, &f16),
			 c.policy.weight_sr = FPL_RND_NE));
	BAD(FPL_EFORMAT, (fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f16),
			  c.policy.master = FPL_MASTER_SPLIT));
	BAD(FPL_EFORMAT, (fpl_opt_policy_preset(&c.policy, FPL_MASTER_SPLIT, &bf),
			  c.policy.master_fmt = f16));
	BAD(FPL_EFORMAT, c.policy.arith.m = 60);
	BAD(FPL_EINVAL, c.scaler.kind = (fpl_opt_scaling)9);
	BAD(FPL_EINVAL, (c.scaler.kind = FPL_OPT_SCALE_CONST, c.scaler.scale = 0));
	BAD(FPL_EINVAL, (c.scaler.kind = FPL_OPT_SCALE_CONST, c.scaler.scale = INFINITY));
	BAD(FPL_EINVAL, (c.scaler.kind = FPL_OPT_SCALE_DYNAMIC, c.scaler.growth = 1));
	BAD(FPL_EINVAL, (c.scaler.kind = FPL_OPT_SCALE_DYNAMIC, c.scaler.backoff = 1));
	BAD(FPL_EINVAL, (c.scaler.kind = FPL_OPT_SCALE_DYNAMIC, c.scaler.interval = 0));
	BAD(FPL_EINVAL, c.threads = -1);
	BAD(0, (fpl_opt_policy_preset(&c.policy, FPL_MASTER_SPLIT, &bf),
		c.scaler.kind = FPL_OPT_SCALE_DYNAMIC));
#undef BAD
}

/* ------------------------------------------------------------ scaler spelling */

/* s parses into kind k, scale, growth, backoff, interval (by hand). */
static void scaler_ok(const char *s, fpl_opt_scaling k, double scale, double growth,
		      double backoff, uint32_t interval)
{
	fpl_opt_scaler sc;
	char err[256];
	int r = fpl_opt_scaler_parse(&sc, s, err, sizeof err);

	if (!h_check(r == 0 && sc.kind == k && sc.scale == scale && sc.growth == growth &&
		     sc.backoff == backoff && sc.interval == interval))
		h_fail("fpl_opt_scaler_parse('%s'): %d (%s) kind %d %g %g %g %u", s, r, err,
		       (int)sc.kind, sc.scale, sc.growth, sc.backoff, (unsigned)sc.interval);
}

/* s fails with status code, err containing `word`, sc unchanged. */
static void scaler_bad(const char *s, int code, const char *word)
{
	fpl_opt_scaler sc, before;
	char err[256];
	int r;

	memset(&sc, 0x5a, sizeof sc);
	before = sc;
	r = fpl_opt_scaler_parse(&sc, s, err, sizeof err);
	if (!h_check(r == code && strstr(err, word) && !memcmp(&sc, &before, sizeof sc)))
		h_fail("fpl_opt_scaler_parse('%s'): %d, want %d; '%s' lacks '%s'", s, r, code,
		       err, word);
}

static void test_scaler_parse(void)
{
	fpl_opt_scaler sc;

	scaler_ok("none", FPL_OPT_SCALE_NONE, 65536, 2, 0.5, 2000);
	scaler_ok("aps", FPL_OPT_SCALE_APS, 65536, 2, 0.5, 2000);
	scaler_ok("1024", FPL_OPT_SCALE_CONST, 1024, 2, 0.5, 2000);
	scaler_ok("0x1p-3", FPL_OPT_SCALE_CONST, 0.125, 2, 0.5, 2000);
	scaler_ok("dynamic", FPL_OPT_SCALE_DYNAMIC, 65536, 2, 0.5, 2000);
	scaler_ok("dynamic:128", FPL_OPT_SCALE_DYNAMIC, 128, 2, 0.5, 2000);
	scaler_ok("dynamic:128:4:0.25:10", FPL_OPT_SCALE_DYNAMIC, 128, 4, 0.25, 10);
	scaler_ok("dynamic:1:1.5:0.75:4294967295", FPL_OPT_SCALE_DYNAMIC, 1, 1.5, 0.75,
		  4294967295u);
	scaler_bad("0", FPL_EPARSE, "constant scale");
	scaler_bad("-3", FPL_EPARSE, "constant scale");
	scaler_bad("inf", FPL_EPARSE, "constant scale");
	scaler_bad("", FPL_EPARSE, "expected none");
	scaler_bad("5x", FPL_EPARSE, "expected none");
	scaler_bad("1024:2", FPL_EPARSE, "expected none");
	scaler_bad("none:1", FPL_EPARSE, "expected none");
	scaler_bad("dynamik", FPL_ENOTFOUND, "unknown loss scaling 'dynamik'");
	scaler_bad("static:5", FPL_ENOTFOUND, "unknown loss scaling 'static'");
	scaler_bad("dynamicx", FPL_ENOTFOUND, "'dynamicx'");
	scaler_bad("dynamic:", FPL_EPARSE, "expected dynamic");
	scaler_bad("dynamic::2", FPL_EPARSE, "expected dynamic");
	scaler_bad("dynamic:0", FPL_EPARSE, "INIT '0'");
	scaler_bad("dynamic:1e999", FPL_EPARSE, "INIT");
	scaler_bad("dynamic:1:1", FPL_EPARSE, "GROWTH '1'");
	scaler_bad("dynamic:1:2:1", FPL_EPARSE, "BACKOFF '1'");
	scaler_bad("dynamic:1:2:0", FPL_EPARSE, "BACKOFF");
	scaler_bad("dynamic:1:2:0.5:0", FPL_EPARSE, "INTERVAL '0'");
	scaler_bad("dynamic:1:2:0.5:+5", FPL_EPARSE, "INTERVAL");
	scaler_bad("dynamic:1:2:0.5:4294967296", FPL_EPARSE, "INTERVAL");
	scaler_bad("dynamic:1:2:0.5:1:9", FPL_EPARSE, "at most");
	h_check(fpl_opt_scaler_parse(NULL, "none", NULL, 0) == FPL_EINVAL);
	h_check(fpl_opt_scaler_parse(&sc, NULL, NULL, 0) == FPL_EINVAL);
	h_check(fpl_opt_scaler_parse(&sc, "bad", NULL, 0) == FPL_ENOTFOUND);
}

/* ------------------------------------------------------------ speed */

static void test_speed(void)
{
	static const fpl_opt_master ms[2] = { FPL_MASTER_NONE, FPL_MASTER_FP32 };
	size_t n = 10000, i;
	int steps = h_sanitized() ? 20 : 1000, k, s;
	fpl_format f16 = h_format("fp16");
	double *w0 = malloc(n * sizeof *w0), *g = malloc(n * sizeof *g);
	h_rng rng;

	h_rng_init(&rng, 41);
	for (i = 0; i < n; i++) {
		w0[i] = h_rng_value(&rng, -4, 0, 53, 0);
		g[i] = h_rng_value(&rng, -10, -2, 53, 0);
	}
	for (k = 0; k < 3; k++) {
		fpl_opt_config c;
		fpl_optim *o;
		double t0;

		fpl_opt_config_init(&c);
		c.hyper.lr = 0.01;
		if (k < 2)
			fpl_opt_policy_preset(&c.policy, ms[k], &f16);
		o = make(&c, n, w0, 1);
		if (!o)
			continue;
		t0 = h_now();
		for (s = 0; s < steps; s++)
			step1(o, g, NULL);
		h_note("%d sgd steps on %zu parameters, %s: %.3f s", steps, n,
		       k < 2 ? (k ? "fp32-master:fp16" : "none:fp16") : "fp64 reference",
		       h_now() - t0);
		fpl_optim_free(o);
	}
	free(w0);
	free(g);
}

/* ------------------------------------------------------------ block weights */
/*
 * fp32-master with an mxfp4 stored weight (OCP floor rule, blocks of 32:
 * here one short block per row).  By hand: w0 = [[1, 5], [0.25, 0.75]].
 * Row 0: amax 5, X = 2^(floor(log2 5) - 2) = 1; 5 ties between e2m1's 4
 * (code 6) and 6 (code 7): even, 4.  Row 1: amax 0.75, X = 2^(-1 - 2) =
 * 1/8, quotients 2 and 6, exact.  So [1, 4, 0.25, 0.75] with cols = 2;
 * flat (one row of 4, X = 1): 0.25 ties between 0 and 0.5 -> 0, 0.75
 * ties between 0.5 and 1 -> 1 (even codes): [1, 4, 0, 1].  The master
 * keeps w0.
 */
static void test_block_weight(void)
{
	static const double w0[4] = { 1, 5, 0.25, 0.75 };
	static const double rows[4] = { 1, 4, 0.25, 0.75 }, flat[4] = { 1, 4, 0, 1 };
	const double *W[1] = { w0 };
	fpl_opt_config c;
	fpl_format f32;
	fpl_optim *o = NULL;
	fpl_state st;
	size_t n = 4, cols = 2, bad = 3;
	int r, i;

	fpl_opt_config_init(&c);
	fpl_format_lookup(&f32, "fp32");
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &f32);
	c.policy.weight_is_block = 1;
	if (!h_check(fpl_block_parse(&c.policy.weight_block, "mxfp4", NULL, 0) == 0))
		h_fail("parse mxfp4");
	c.policy.weight = c.policy.weight_block.elem;
	fpl_state_init(&st, 1);
	c.cols = &cols;
	r = fpl_optim_create(&o, &c, 1, &n, W, &st);
	if (!h_check(r == 0))
		h_fail("block weight: create %d", r);
	for (i = 0; o && i < 4; i++)
		if (!h_check(fpl_optim_weights(o, 0)[i] == rows[i]))
			h_fail("block weight, rows of 2: w[%d] = %g, want %g", i,
			       fpl_optim_weights(o, 0)[i], rows[i]);
	fpl_optim_free(o);
	o = NULL;
	c.cols = NULL;
	r = fpl_optim_create(&o, &c, 1, &n, W, &st);
	for (i = 0; !r && i < 4; i++)
		if (!h_check(fpl_optim_weights(o, 0)[i] == flat[i]))
			h_fail("block weight, flat: w[%d] = %g, want %g", i, fpl_optim_weights(o, 0)[i],
			       flat[i]);
	fpl_optim_free(o);
	o = NULL;
	c.cols = &bad;	/* 3 does not divide 4 */
	if (!h_check(fpl_optim_create(&o, &c, 1, &n, W, &st) == FPL_EINVAL && !o))
		h_fail("cols not dividing the size accepted");
	c.cols = NULL;
	c.policy.master = FPL_MASTER_KAHAN;	/* a compensation in the weight's format */
	if (!h_check(fpl_optim_create(&o, &c, 1, &n, W, &st) == FPL_EINVAL && !o))
		h_fail("a block weight with kahan accepted");
}

/* ------------------------------------------------------------ block slots */
/*
 * A straight-line model of block slots, written from the OCP MX v1.0
 * rule (floor: X = 2^(floor(log2 amax) - emax_e), elements round(x / X)
 * saturating, e8m0 range 2^-127..2^127, a zero block scale 1) over the
 * scalar engine: element j of a tensor takes draw counter + j (row-major).
 * The optimizer's formulas are mdl_step's; the block slots quantize where
 * the plain ones round, the results of one operation (M - u, w - u) held
 * in binary64 rounded to odd first (fpl_sub in od: no draw).
 */
typedef struct bmdl {
	fpl_opt_config c;
	fpl_state st;
	uint64_t ctr;
	size_t n, cols;
	fpl_format el;		/* e4m3fn, saturating */
	double *w, *M, *s1, *s2, *t1, *t2, *d, *u, *g;
	uint64_t t, blocks, elems;
} bmdl;

/* z = x quantized as mxfp8 blocks of 32 along rows of cols, elements in r. */
static void bq(bmdl *m, fpl_rnd r, double *z, const double *x)
{
	size_t row, b, j;

	for (row = 0; row < m->n / m->cols; row++)
		for (b = 0; b < m->cols; b += 32) {
			size_t lo = row * m->cols + b, len = m->cols - b < 32 ? m->cols - b : 32;
			double amax = 0, X = 1;
			int e;

			for (j = 0; j < len; j++)
				amax = fmax(amax, fabs(x[lo + j]));
			if (amax > 0) {
				frexp(amax, &e);	/* amax in [2^(e-1), 2^e) */
				e = e - 1 - 8;		/* e4m3fn: emax 8 */
				X = ldexp(1, e < -127 ? -127 : e > 127 ? 127 : e);
			}
			for (j = 0; j < len; j++) {
				m->st.counter = m->ctr + lo + j;
				z[lo + j] = fpl_round(&m->el, x[lo + j] / X, r, &m->st) * X;
			}
			m->blocks++;
			m->elems += len;
		}
	m->ctr += m->n;
}

/* z = round(a op b) in f (plain), one draw per element */
static void bop(bmdl *m, int op, const fpl_format *f, fpl_rnd r, double *z, const double *a,
		const double *b, double kb)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		double y = b ? b[i] : kb;

		m->st.counter = m->ctr + i;
		switch (op) {
		case M_ROUND: z[i] = fpl_round(f, a[i], r, &m->st); break;
		case M_ADD: z[i] = fpl_add(f, a[i], y, r, &m->st); break;
		case M_SUB: z[i] = fpl_sub(f, a[i], y, r, &m->st); break;
		case M_MUL: z[i] = fpl_mul(f, y, a[i], r, &m->st); break;	/* constant first */
		case M_DIV: z[i] = fpl_div(f, a[i], y, r, &m->st); break;
		default: z[i] = fpl_sqrt(f, a[i], r, &m->st); break;
		}
	}
	m->ctr += m->n;
}

/* a - b held in binary64 rounded to odd (no draw, no flag in m->st) */
static void bodd(bmdl *m, double *z, const double *a, const double *b)
{
	fpl_format f64 = h_format("fp64");
	fpl_state tmp = m->st;
	size_t i;

	for (i = 0; i < m->n; i++)
		z[i] = fpl_sub(&f64, a[i], b[i], FPL_RND_OD, &tmp);
}

static void bstore_state(bmdl *m, double *z, const double *x)
{
	const fpl_opt_policy *p = &m->c.policy;

	if (p->state_is_block)
		bq(m, p->state_rnd, z, x);
	else
		bop(m, M_ROUND, &p->state, p->state_rnd, z, x, NULL, 0);
}

static void bmdl_init(bmdl *m, const fpl_opt_config *c, size_t n, size_t cols, const double *w0)
{
	const fpl_opt_policy *p = &c->policy;
	fpl_state parent;

	memset(m, 0, sizeof *m);
	m->c = *c;
	m->n = n;
	m->cols = cols;
	m->el = h_format("e4m3fn");
	m->el.overflow = FPL_OVF_SATURATE;
	fpl_state_init(&parent, 5);
	fpl_state_fork(&parent, &m->st, 0);
	m->w = dup0(n); m->M = dup0(n); m->s1 = dup0(n); m->s2 = dup0(n); m->t1 = dup0(n);
	m->t2 = dup0(n); m->d = dup0(n); m->u = dup0(n); m->g = dup0(n);
	if (p->master == FPL_MASTER_FP32) {
		if (p->master_is_block)
			bq(m, FPL_RND_NE, m->M, w0);
		else
			bop(m, M_ROUND, &p->master_fmt, FPL_RND_NE, m->M, w0, NULL, 0);
		if (p->weight_is_block)
			bq(m, p->weight_rnd, m->w, m->M);
		else
			bop(m, M_ROUND, &p->weight, p->weight_rnd, m->w, m->M, NULL, 0);
	} else if (p->weight_is_block) {
		bq(m, p->weight_rnd, m->w, w0);
	} else {
		bop(m, M_ROUND, &p->weight, p->weight_rnd, m->w, w0, NULL, 0);
	}
}

static void bmdl_free(bmdl *m)
{
	free(m->w); free(m->M); free(m->s1); free(m->s2); free(m->t1); free(m->t2);
	free(m->d); free(m->u); free(m->g);
}

/* One step (no loss scaling): sgd with momentum or adam, as mdl_step. */
static void bmdl_step(bmdl *m, const double *G)
{
	const fpl_opt_policy *p = &m->c.policy;
	const fpl_opt_hyper *h = &m->c.hyper;
	const fpl_format *A = &p->arith;
	fpl_rnd ar = p->arith_rnd;

	m->t++;
	if (p->grad_is_block)
		bq(m, p->grad_rnd, m->t1, G);
	else
		bop(m, M_ROUND, &p->grad, p->grad_rnd, m->t1, G, NULL, 0);
	bop(m, M_DIV, &p->unscale, p->unscale_rnd, m->g, m->t1, NULL, 1);
	memcpy(m->d, m->g, m->n * sizeof *m->d);
	if (h->algo == FPL_OPT_SGD) {
		if (m->t == 1) {
			bstore_state(m, m->s1, m->d);
		} else {
			bop(m, M_MUL, A, ar, m->t1, m->s1, NULL, h->momentum);
			bop(m, M_MUL, A, ar, m->t2, m->d, NULL, 1 - h->dampening);
			bop(m, M_ADD, A, ar, m->t1, m->t1, m->t2, 0);
			bstore_state(m, m->s1, m->t1);
		}
		bop(m, M_MUL, A, ar, m->u, m->s1, NULL, h->lr);
	} else {	/* adam, wd 0 */
		double bc1 = 1 - pow(h->beta1, (double)m->t), bc2s = sqrt(1 - pow(h->beta2, (double)m->t));
		bop(m, M_SUB, A, ar, m->t1, m->d, m->s1, 0);
		bop(m, M_MUL, A, ar, m->t1, m->t1, NULL, 1 - h->beta1);
		bop(m, M_ADD, A, ar, m->t1, m->s1, m->t1, 0);
		bstore_state(m, m->s1, m->t1);
		bop(m, M_MUL, A, ar, m->t1, m->s2, NULL, h->beta2);
		bop(m, M_MUL, A, ar, m->t2, m->d, NULL, 1 - h->beta2);
		{	/* that * d: the variable first */
			size_t i;
			for (i = 0; i < m->n; i++) {
				m->st.counter = m->ctr + i;
				m->t2[i] = fpl_mul(A, m->t2[i], m->d[i], ar, &m->st);
			}
			m->ctr += m->n;
		}
		bop(m, M_ADD, A, ar, m->t1, m->t1, m->t2, 0);
		bstore_state(m, m->s2, m->t1);
		bop(m, M_SQRT, A, ar, m->t1, m->s2, NULL, 0);
		bop(m, M_DIV, A, ar, m->t1, m->t1, NULL, bc2s);
		bop(m, M_ADD, A, ar, m->t1, m->t1, NULL, h->eps);
		bop(m, M_DIV, A, ar, m->t1, m->s1, m->t1, 0);
		bop(m, M_MUL, A, ar, m->u, m->t1, NULL, h->lr / bc1);
	}
	if (p->master == FPL_MASTER_FP32) {
		if (p->master_is_block) {
			bodd(m, m->M, m->M, m->u);
			bq(m, FPL_RND_NE, m->M, m->M);
		} else {
			bop(m, M_SUB, &p->master_fmt, FPL_RND_NE, m->M, m->M, m->u, 0);
		}
		if (p->weight_is_block)
			bq(m, p->weight_rnd, m->w, m->M);
		else
			bop(m, M_ROUND, &p->weight, p->weight_rnd, m->w, m->M, NULL, 0);
	} else if (p->weight_is_block) {
		bodd(m, m->w, m->w, m->u);
		bq(m, p->master == FPL_MASTER_STOCHASTIC ? p->weight_sr : p->weight_rnd, m->w, m->w);
	} else {
		bop(m, M_SUB, &p->weight, p->master == FPL_MASTER_STOCHASTIC ? p->weight_sr
		    : p->weight_rnd, m->w, m->w, m->u, 0);
	}
}

static fpl_block_format mxfp8(void)
{
	fpl_block_format b;

	if (!h_check(fpl_block_parse(&b, "mxfp8", NULL, 0) == 0))
		h_fail("parse mxfp8");
	return b;
}

/* One block configuration (case k) of the model test. */
static void block_case(int k, fpl_opt_config *c, const char **what)
{
	fpl_block_format b = mxfp8();
	fpl_format bf = h_format("bf16");

	fpl_opt_config_init(c);
	c->hyper.lr = 0.01;
	if (k % 2)
		fpl_opt_hyper_init(&c->hyper, FPL_OPT_ADAM);
	else
		c->hyper.momentum = 0.9, c->hyper.dampening = 0.25;
	c->hyper.lr = 0.01;
	c->hyper.eps = 1e-3;
	switch (k / 2) {
	case 0:		/* the brief's case: fp32-master:bf16 with state = mxfp8 */
		*what = "state=mxfp8";
		fpl_opt_policy_preset(&c->policy, FPL_MASTER_FP32, &bf);
		c->policy.state_is_block = 1;
		c->policy.state_block = b;
		c->policy.state = b.elem;
		break;
	case 1:		/* stochastic elements of the state */
		*what = "state=mxfp8:sp";
		fpl_opt_policy_preset(&c->policy, FPL_MASTER_FP32, &bf);
		c->policy.state_is_block = 1;
		c->policy.state_block = b;
		c->policy.state = b.elem;
		c->policy.state_rnd = FPL_RND_SP;
		break;
	case 2:		/* a block master, a block stored weight, grads in sp */
		*what = "fp32-master:mxfp8,master=mxfp8,grad=mxfp8:sp";
		fpl_opt_policy_preset_block(&c->policy, FPL_MASTER_FP32, &b);
		c->policy.master_is_block = 1;
		c->policy.master_block = b;
		c->policy.master_fmt = b.elem;
		c->policy.grad_rnd = FPL_RND_SP;
		break;
	default:	/* none:mxfp8 (weight, grad, state blocks), stochastic weight */
		*what = "stochastic:mxfp8:sp";
		fpl_opt_policy_preset_block(&c->policy, FPL_MASTER_STOCHASTIC, &b);
		c->policy.weight_sr = FPL_RND_SP;
		c->policy.state_rnd = FPL_RND_SE;
		break;
	}
}

static void test_block_model(void)
{
	enum { ROWS = 3, COLS = 40, N = ROWS * COLS, STEPS = 4 };
	double w0[N], G[STEPS][N], *got = malloc(N * sizeof *got);
	h_rng rng;
	size_t i, cols = COLS;
	int k, s, shaped;

	h_rng_init(&rng, 23);
	for (i = 0; i < N; i++) {
		w0[i] = h_rng_value(&rng, -6, 1, 30, 0);
		for (s = 0; s < STEPS; s++)
			G[s][i] = h_rng_value(&rng, -12, 3, 40, 0);
	}
	for (i = 40; i < 72; i++)	/* a zero block (row 1, elements 0..31) */
		w0[i] = G[0][i] = 0;
	G[1][5] = 3e3;		/* beyond e4m3fn's 448 times its block's scale */
	for (k = 0; k < 8; k++)
		for (shaped = 0; shaped < 2; shaped++) {
			fpl_opt_config c;
			fpl_opt_shape sh = { 2, { ROWS, COLS } };
			fpl_optim *o = NULL;
			fpl_opt_report rep;
			fpl_state st;
			const double *W[1] = { w0 };
			size_t n = N;
			uint64_t cnt[FPL_NFLAGS], blocks = 0, elems = 0;
			const char *what = "";
			bmdl m;
			int bad = 0, f, sl;

			block_case(k, &c, &what);
			if (shaped)	/* rows of 40: a short block of 8 per row */
				c.shapes = &sh;
			fpl_state_init(&st, 5);
			if (!h_check(fpl_optim_create(&o, &c, 1, &n, W, &st) == 0))
				h_fail("block model: %s: create", what);
			if (!o)
				continue;
			bmdl_init(&m, &c, N, shaped ? cols : N, w0);
			m.blocks = m.elems = 0;
			for (s = 0; s < STEPS; s++) {
				step1(o, G[s], &rep);
				bmdl_step(&m, G[s]);
				for (sl = 0; sl < FPL_OPT_NSLOTS; sl++) {
					blocks += rep.block[sl].blocks;
					elems += rep.block[sl].elements;
				}
			}
			fpl_optim_master(o, 0, got);
			for (i = 0; i < N; i++) {
				double wm = c.policy.master == FPL_MASTER_FP32 ? m.M[i] : m.w[i];

				if (!h_same(fpl_optim_weights(o, 0)[i], m.w[i]) || !h_same(got[i], wm))
					bad++;
			}
			fpl_optim_flags(o, NULL, cnt);
			for (f = 0; f < FPL_NFLAGS; f++)
				if (cnt[f] != m.st.count[f])
					bad++;
			if (!h_check(bad == 0 && blocks == m.blocks && elems == m.elems))
				h_fail("block model: %s, %s, %s: %d mismatches, blocks %llu want %llu",
				       what, k % 2 ? "adam" : "sgd", shaped ? "3x40" : "flat", bad,
				       (unsigned long long)blocks, (unsigned long long)m.blocks);
			bmdl_free(&m);
			fpl_optim_free(o);
		}
	free(got);
}

/* Stochastic block elements: the same bits on 1 and 3 threads. */
static void test_block_threads(void)
{
	enum { N = 5000 };
	double *w0 = malloc(N * sizeof *w0), *g = malloc(N * sizeof *g), *a = malloc(N * sizeof *a);
	fpl_opt_config c;
	fpl_block_format b;
	h_rng rng;
	size_t i;
	int t, s, bad = 0;

	h_rng_init(&rng, 31);
	for (i = 0; i < N; i++)
		w0[i] = h_rng_value(&rng, -8, 0, 30, 0);
	h_check(fpl_block_parse(&b, "mxfp4", NULL, 0) == 0);
	for (t = 1; t <= 3; t += 2) {
		fpl_optim *o;
		const char *what;

		block_case(3, &c, &what);
		fpl_opt_policy_preset_block(&c.policy, FPL_MASTER_STOCHASTIC, &b);
		c.policy.state_rnd = c.policy.grad_rnd = c.policy.weight_sr = FPL_RND_SP;
		c.threads = t;
		o = make(&c, N, w0, 3);
		for (s = 0; o && s < 3; s++) {
			h_rng_init(&rng, 100 + (uint64_t)s);
			for (i = 0; i < N; i++)
				g[i] = h_rng_value(&rng, -10, 0, 30, 0);
			step1(o, g, NULL);
		}
		for (i = 0; o && i < N; i++) {
			if (t == 1)
				a[i] = fpl_optim_weights(o, 0)[i];
			else
				bad += !h_same(a[i], fpl_optim_weights(o, 0)[i]);
		}
		fpl_optim_free(o);
	}
	if (!h_check(bad == 0))
		h_fail("block slots in sp: %d weights differ between 1 and 3 threads", bad);
	free(w0);
	free(g);
	free(a);
}

/* The bad block configurations: status codes. */
static void test_block_errors(void)
{
	fpl_opt_config c;
	fpl_block_format b = mxfp8();
	fpl_format bf = h_format("bf16");

	fpl_opt_config_init(&c);
	h_check(fpl_opt_policy_preset_block(&c.policy, FPL_MASTER_KAHAN, &b) == FPL_EINVAL);
	h_check(fpl_opt_policy_preset_block(&c.policy, FPL_MASTER_SPLIT, &b) == FPL_EFORMAT);
	h_check(fpl_opt_policy_preset_block(NULL, FPL_MASTER_NONE, &b) == FPL_EINVAL);
	/* the preset: arith, unscale binary32, grad and (none) state blocks */
	h_check(fpl_opt_policy_preset_block(&c.policy, FPL_MASTER_NONE, &b) == 0);
	h_check(c.policy.weight_is_block && c.policy.grad_is_block && c.policy.state_is_block
		&& !c.policy.master_is_block && c.policy.arith.m == 23 && c.policy.unscale.m == 23);
	h_check(fpl_opt_policy_preset_block(&c.policy, FPL_MASTER_FP32, &b) == 0);
	h_check(!c.policy.state_is_block && c.policy.state.m == 23);
	/* a block master needs fp32-master; a block grad refuses APS */
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_NONE, &bf);
	c.policy.master_is_block = 1;
	c.policy.master_block = b;
	h_check(create_rc(&c) == FPL_EINVAL);
	fpl_opt_policy_preset(&c.policy, FPL_MASTER_FP32, &bf);
	c.policy.grad_is_block = 1;
	c.policy.grad_block = b;
	c.scaler.kind = FPL_OPT_SCALE_APS;
	h_check(create_rc(&c) == FPL_EINVAL);
	c.scaler.kind = FPL_OPT_SCALE_DYNAMIC;
	h_check(create_rc(&c) == 0);
	c.policy.state_is_block = 1;	/* an invalid descriptor */
	c.policy.state_block = b;
	c.policy.state_block.size = 0;
	c.policy.state_block.shape = FPL_BLOCK_TILE;
	c.policy.state_block.rows = -1;
	h_check(create_rc(&c) == FPL_EFORMAT);
}

int main(void)
{
	double t;

	h_init("toptim");
	t = h_now();
	test_errors();
	test_block_weight();
	test_block_errors();
	test_memory();
	test_reference();
	test_vanish();
	test_scaling();
	test_scaler_parse();
	h_note("by hand: %.2f s", h_now() - t);
	t = h_now();
	test_model();
	test_fast64();
	test_env();
	h_note("models: %.2f s", h_now() - t);
	t = h_now();
	test_stochastic();
	test_split();
	h_note("stochastic and split: %.2f s", h_now() - t);
	t = h_now();
	test_block_model();
	test_block_threads();
	h_note("block slots: %.2f s", h_now() - t);
	test_speed();
	return h_done();
}
