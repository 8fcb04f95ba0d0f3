/* SPDX-License-Identifier: MIT */
/*
 * tests/ttrain.c - training under a precision policy (fplab/train.h).
 *
 * Expected values never come from the code under test:
 *  - the P = 1 fp32 run against a plain fp32 training loop written here
 *    in C float arithmetic (fmaf chains k ascending from the bias, ReLU,
 *    softmax as fpl_reduce computes it under a sequential fp32 model with
 *    exp correctly rounded to float by MPFR, the gradient, dW, db and dX
 *    chains, torch.optim.SGD as optim.h's none:fp32 policy orders it),
 *    every weight bit for bit after 5 steps on a 64-12-8-4 network, with
 *    momentum 0 and 0.9; the initial weights against util/gen.h's
 *    formula over fpl_random_draw;
 *  - presets by their documented fields; fpl_train_policy_set on every
 *    key, good and bad values (status and message); policy files
 *    (comments, blanks, a preset line, a bad line as FILE:LINE);
 *    describe -> load gives the same policy (the same description and the
 *    same training bits);
 *  - fpl_train_policy_check: given inputs against the formats that feed
 *    them, each verdict derived by hand from the formats' parameters (a
 *    refused policy is refused by fpl_trainer_create too, an accepted one
 *    takes steps);
 *  - behaviour: fp32 learns the generated set (> 90%), the same bits on
 *    1 and 2 threads and on a re-run, P = 2 close to P = 1 (tolerance
 *    below), dynamic scaling skips overflowing steps, aps-e4m3-comm runs
 *    on 4 nodes, fp8-e4m3 beats chance; bad configurations' statuses;
 *  - the optimizer's block slots: master-format and state as blocks (the
 *    fields as written, the description), the arithmetic slots refused
 *    with the reason, a block master without fp32-master refused; mxfp8
 *    master and state in sp the same on 1 and 2 threads; an exact block
 *    (binary32 elements, e8m0 scales by rceil) equal to fp32-master.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpfr.h>

#include <fplab/dataset.h>
#include <fplab/train.h>

#include "harness.h"

#define CHECK(cond, ...) do { if (!h_check(cond)) h_fail(__VA_ARGS__); } while (0)
#define GEN_STREAM 0x67656e0000000000ull	/* util/gen.h's FPL__GEN_STREAM */

static fpl_train_policy preset(const char *name)
{
	fpl_train_policy p;
	int r = fpl_train_policy_preset(&p, name);

	if (!h_check(r == 0))
		h_fail("preset %s: %d", name, r);
	return p;
}

static fpl_trainer *make(const fpl_train_config *c, const fpl_train_policy *p)
{
	fpl_trainer *t = NULL;
	int r = fpl_trainer_create(&t, c, p);

	if (!h_check(r == 0 && t))
		h_fail("fpl_trainer_create (%s): %d", p->name, r);
	return t;
}

static void small_config(fpl_train_config *c, size_t nsizes, const size_t *sizes, size_t batch)
{
	size_t l;

	fpl_train_config_init(c);
	c->nsizes = nsizes;
	for (l = 0; l < nsizes; l++)
		c->sizes[l] = sizes[l];
	c->batch = batch;
	c->seed = 7;
}

/* A view of examples [lo, lo + n) of ds (not owned). */
static fpl_dataset view(const fpl_dataset *ds, size_t lo, size_t n)
{
	fpl_dataset v = *ds;

	v.n = n;
	v.x = ds->x + lo * ds->d;
	v.y = ds->y + lo;
	return v;
}

/* Every weight and bias of two trainers: bit for bit (tol < 0) or the
 * largest absolute difference. */
static double compare(const fpl_trainer *a, const fpl_trainer *b, const fpl_train_config *c,
		      int *same)
{
	double md = 0;
	size_t l, i;

	*same = 1;
	for (l = 1; l < c->nsizes; l++) {
		size_t nw = c->sizes[l] * c->sizes[l - 1], nb = c->sizes[l];
		const double *wa = fpl_trainer_weights(a, l), *wb = fpl_trainer_weights(b, l);
		const double *ba = fpl_trainer_bias(a, l), *bb = fpl_trainer_bias(b, l);

		for (i = 0; i < nw + nb; i++) {
			double x = i < nw ? wa[i] : ba[i - nw], y = i < nw ? wb[i] : bb[i - nw];
			if (!h_same(x, y))
				*same = 0;
			if (fabs(x - y) > md || isnan(x - y))
				md = isnan(x - y) ? INFINITY : fabs(x - y);
		}
	}
	return md;
}

static int epoch(fpl_trainer *t, const fpl_dataset *ds, fpl_train_stats *st)
{
	int r = fpl_trainer_epoch(t, ds, st, NULL, NULL);

	if (!h_check(r == 0))
		h_fail("fpl_trainer_epoch: %d", r);
	return r;
}

/* ------------------------------------------------------------ the plain loop */

#define RL 3			/* layers of the reference network */
static const size_t RS[RL + 1] = { 64, 12, 8, 4 };
#define RB 16			/* batch */
#define RSTEPS 5

/* exp(x) correctly rounded to binary32 (MPFR, 24 bits, nearest). */
static float exp_f(float x)
{
	mpfr_t a, y;
	float r;

	mpfr_init2(a, 24);
	mpfr_init2(y, 24);
	mpfr_set_flt(a, x, MPFR_RNDN);
	mpfr_exp(y, a, MPFR_RNDN);
	r = mpfr_get_flt(y, MPFR_RNDN);
	mpfr_clear(a);
	mpfr_clear(y);
	return r;
}

typedef struct plain {
	float W[RL + 1][12 * 64], b[RL + 1][12];	/* layer l at index l */
	float mW[RL + 1][12 * 64], mb[RL + 1][12];	/* momentum buffers */
	float H[RL + 1][RB][64];
	float G[RB][64], D[RB][64];
	float dW[RL + 1][12 * 64], db[RL + 1][12];
	unsigned t;
} plain;

/* torch.optim.SGD on one tensor as optim.h's none:fp32 policy orders it:
 * g unscaled by S = 1 (a rounding into fp32: the identity); with momentum
 * buf = g at t = 1, else buf = mu*buf + 1*g (three roundings); u = lr*d;
 * w = w - u.  lr and mu are binary32 values, so each float product is
 * the exact product rounded once, as the library rounds it. */
static void plain_sgd(float *w, float *buf, const float *g, size_t n, unsigned t, float lr,
		      float mu)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float d = g[i];
		if (mu != 0) {
			if (t == 1) {
				buf[i] = d;
			} else {
				float a = mu * buf[i], bb = 1.0f * d;
				buf[i] = a + bb;
			}
			d = buf[i];
		}
		w[i] = w[i] - lr * d;
	}
}

static void plain_step(plain *P, const fpl_dataset *ds, const size_t *rows, float lr, float mu)
{
	const size_t C = RS[RL];
	size_t l, i, j, k;

	for (i = 0; i < RB; i++)
		for (k = 0; k < RS[0]; k++)
			P->H[0][i][k] = ds->x[rows[i] * RS[0] + k];
	for (l = 1; l <= RL; l++)
		for (i = 0; i < RB; i++)
			for (j = 0; j < RS[l]; j++) {
				float acc = P->b[l][j];
				for (k = 0; k < RS[l - 1]; k++)
					acc = fmaf(P->H[l - 1][i][k], P->W[l][j * RS[l - 1] + k], acc);
				P->H[l][i][j] = l < RL && acc < 0 ? 0.0f : acc;
			}
	/* softmax (max, x - max, exp, sequential sum from +0, division),
	 * then (p - onehot) * (S/B) with S = 1, B = 16 */
	for (i = 0; i < RB; i++) {
		float m = P->H[RL][i][0], e[16], s = 0;
		for (k = 1; k < C; k++)
			if (P->H[RL][i][k] > m)
				m = P->H[RL][i][k];
		for (k = 0; k < C; k++) {
			e[k] = exp_f(P->H[RL][i][k] - m);
			s = s + e[k];
		}
		for (k = 0; k < C; k++) {
			float p = e[k] / s;
			float oh = (int32_t)k == ds->y[rows[i]] ? 1.0f : 0.0f;
			P->G[i][k] = (p - oh) * (1.0f / RB);
		}
	}
	for (l = RL; l >= 1; l--) {
		size_t m = RS[l], kk = RS[l - 1];
		for (j = 0; j < m; j++) {
			float s = 0;
			for (k = 0; k < kk; k++) {
				float acc = 0;
				for (i = 0; i < RB; i++)
					acc = fmaf(P->G[i][j], P->H[l - 1][i][k], acc);
				P->dW[l][j * kk + k] = acc;
			}
			for (i = 0; i < RB; i++)
				s = s + P->G[i][j];
			P->db[l][j] = s;
		}
		if (l == 1)
			break;
		for (i = 0; i < RB; i++)
			for (k = 0; k < kk; k++) {
				float acc = 0;
				for (j = 0; j < m; j++)
					acc = fmaf(P->G[i][j], P->W[l][j * kk + k], acc);
				P->D[i][k] = P->H[l - 1][i][k] > 0 ? acc : 0.0f;
			}
		memcpy(P->G, P->D, sizeof P->G);
	}
	P->t++;
	for (l = 1; l <= RL; l++) {
		plain_sgd(P->W[l], P->mW[l], P->dW[l], RS[l] * RS[l - 1], P->t, lr, mu);
		plain_sgd(P->b[l], P->mb[l], P->db[l], RS[l], P->t, lr, mu);
	}
}

static void step_rows(size_t *rows, size_t s, size_t n)
{
	size_t i;

	for (i = 0; i < RB; i++)
		rows[i] = (s * RB * 5 + i * 7) % n;
}

static void test_plain(const fpl_dataset *ds, float mu, int threads)
{
	fpl_train_config c;
	fpl_train_policy p = preset("fp32");
	fpl_trainer *t;
	plain *P = calloc(1, sizeof *P);
	size_t l, i, s, rows[RB], bad = 0;
	const float lr = 0.1f;

	small_config(&c, RL + 1, RS, RB);
	c.hyper.lr = lr;
	c.hyper.momentum = mu;
	c.threads = threads;
	if (!P || !(t = make(&c, &p))) {
		free(P);
		return;
	}
	/* initial weights: util/gen.h's uniform on [-r, r), stream l, then
	 * rounded into fp32 by the optimizer; biases +0 */
	for (l = 1; l <= RL; l++) {
		double r = 1 / sqrt((double)RS[l - 1]);
		const double *w = fpl_trainer_weights(t, l), *b = fpl_trainer_bias(t, l);
		for (i = 0; i < RS[l] * RS[l - 1]; i++) {
			double u = (double)(fpl_random_draw(c.seed, GEN_STREAM + l, i) >> 11) * 0x1p-53;
			P->W[l][i] = (float)(-r + (r - -r) * u);
			bad += !h_same(w[i], P->W[l][i]);
		}
		for (i = 0; i < RS[l]; i++)
			bad += !h_same(b[i], 0.0);
	}
	if (!h_check(bad == 0))
		h_fail("initial weights: %zu differ from the uniform formula", bad);
	for (s = 0; s < RSTEPS; s++) {
		fpl_train_stats st;
		int r;

		memset(&st, 0, sizeof st);
		step_rows(rows, s, ds->n);
		r = fpl_trainer_step(t, ds, rows, &st);
		if (!h_check(r == 0 && st.steps == 1 && st.skipped == 0 && isfinite(st.loss_sum))) {
			h_fail("step %zu: %d", s, r);
			break;
		}
		plain_step(P, ds, rows, lr, mu);
	}
	bad = 0;
	for (l = 1; l <= RL; l++) {
		const double *w = fpl_trainer_weights(t, l), *b = fpl_trainer_bias(t, l);
		for (i = 0; i < RS[l] * RS[l - 1]; i++)
			if (!h_same(w[i], P->W[l][i]) && bad++ < 3)
				h_note("layer %zu w[%zu]: library %a, plain loop %a", l, i, w[i],
				       (double)P->W[l][i]);
		for (i = 0; i < RS[l]; i++)
			if (!h_same(b[i], P->b[l][i]) && bad++ < 3)
				h_note("layer %zu b[%zu]: library %a, plain loop %a", l, i, b[i],
				       (double)P->b[l][i]);
	}
	if (!h_check(bad == 0))
		h_fail("P = 1 fp32 (momentum %g, %d threads): %zu weights differ from the plain "
		       "fp32 loop after %d steps", (double)mu, threads, bad, RSTEPS);
	fpl_trainer_free(t);
	free(P);
}

/* ------------------------------------------------------------ presets */

static void test_presets(void)
{
	const char *const *names = fpl_train_presets();
	fpl_train_policy p, q;
	size_t n = 0;

	for (; names[n]; n++) {
		p = preset(names[n]);
		if (!h_check(!strcmp(p.name, names[n])))
			h_fail("preset %s names itself %s", names[n], p.name);
	}
	if (!h_check(n == 8))
		h_fail("%zu presets", n);
	/* the block presets by their documented fields (fplab/train.h) */
	p = preset("mxfp8");
	CHECK(p.fwd_ops.a.on && p.fwd_ops.b.on && p.bwd_ops.a.on && p.bwd_ops.b.on
		&& !strcmp(p.fwd_ops.a.b.elem.name, "e4m3fn") && !strcmp(p.bwd_ops.a.b.elem.name, "e4m3fn")
		&& p.fwd_ops.a.b.size == 32 && p.fwd_ops.a.b.rule == FPL_BRULE_RCEIL
		&& p.bwd_ops.a_rnd == FPL_RND_NE && !p.act_block.on && p.fwd.a.m == 23,
	      "mxfp8 preset");
	p = preset("nvfp4");
	CHECK(p.fwd_ops.a.on && p.fwd_ops.a.b.shape == FPL_BLOCK_1D && p.fwd_ops.a.b.size == 16
		&& p.fwd_ops.b.b.shape == FPL_BLOCK_TILE && p.fwd_ops.b.b.rows == 16
		&& p.fwd_ops.b.b.cols == 16 && !strcmp(p.fwd_ops.b.b.elem.name, "e2m1")
		&& p.fwd_ops.b.b.tensor_scale && p.bwd_ops.a_rnd == FPL_RND_SP
		&& p.fwd_ops.a_rnd == FPL_RND_NE && p.bwd_ops.b_rnd == FPL_RND_NE,
	      "nvfp4 preset");
	if (!h_check(fpl_train_policy_preset(&p, "fp64") == FPL_ENOTFOUND))
		h_fail("unknown preset accepted");

	p = preset("fp32");
	CHECK(p.fwd.a.m == 23 && p.fwd.a_load == FPL_LOAD_ROUND && p.fwd.prod_exact
		&& p.fwd.acc.m == 23 && p.fwd.order == FPL_ORDER_SEQUENTIAL && p.act.m == 23
		&& p.grad.m == 23 && p.opt.master == FPL_MASTER_NONE && p.opt.weight.m == 23
		&& p.scaler.kind == FPL_OPT_SCALE_NONE && p.comm.comm.m == 23
		&& p.comm.algo == FPL_AR_RING && p.comm_fp32 == 0,
	      "fp32 preset fields");
	q = preset("bf16-mixed");
	CHECK(!strcmp(q.fwd.a.name, "bf16") && !strcmp(q.bwd.b.name, "bf16") && q.fwd.acc.m == 23
		&& !strcmp(q.act.name, "bf16") && !strcmp(q.grad.name, "bf16")
		&& q.red.acc.m == 23 && q.opt.master == FPL_MASTER_FP32
		&& !strcmp(q.opt.weight.name, "bf16") && q.opt.master_fmt.m == 23
		&& q.scaler.kind == FPL_OPT_SCALE_NONE,
	      "bf16-mixed preset fields");
	q = preset("fp16-mixed");
	CHECK(!strcmp(q.fwd.a.name, "fp16") && !strcmp(q.act.name, "fp16")
		&& q.opt.master == FPL_MASTER_FP32 && q.scaler.kind == FPL_OPT_SCALE_DYNAMIC
		&& q.scaler.scale == 65536 && q.scaler.growth == 2 && q.scaler.backoff == 0.5
		&& q.scaler.interval == 2000,
	      "fp16-mixed preset fields");
	q = preset("fp16-pure");
	CHECK(!strcmp(q.fwd.acc.name, "fp16") && !strcmp(q.red.acc.name, "fp16")
		&& q.opt.master == FPL_MASTER_NONE && !strcmp(q.opt.weight.name, "fp16")
		&& !strcmp(q.opt.arith.name, "fp16") && q.scaler.kind == FPL_OPT_SCALE_NONE,
	      "fp16-pure preset fields");
	q = preset("fp8-e4m3");
	CHECK(!strcmp(q.fwd.a.name, "e4m3fn") && !strcmp(q.fwd.b.name, "e4m3fn")
		&& !strcmp(q.bwd.a.name, "e5m2") && !strcmp(q.bwd.b.name, "e4m3fn")
		&& q.fwd.prod_exact && q.fwd.acc.e == 8 && q.fwd.acc.m == 13
		&& q.fwd.acc_rnd == FPL_RND_TZ && q.fwd.order == FPL_ORDER_BLOCKED
		&& q.fwd.block == 128 && q.fwd.promo.m == 23 && !strcmp(q.act.name, "e4m3fn")
		&& !strcmp(q.grad.name, "e5m2") && q.red.acc.m == 23
		&& q.opt.master == FPL_MASTER_FP32 && !strcmp(q.opt.weight.name, "bf16"),
	      "fp8-e4m3 preset fields");
	q = preset("aps-e4m3-comm");
	CHECK(q.fwd.acc.m == 23 && !strcmp(q.comm.comm.name, "e4m3fn")
		&& q.comm.scaling == FPL_AR_SCALE_APS && q.comm_fp32 == FPL_TRAIN_COMM_FP32_LAST,
	      "aps-e4m3-comm preset fields");
}

/* ------------------------------------------------------------ keys */

static void set_ok(fpl_train_policy *p, const char *key, const char *value)
{
	char err[256] = "x";
	int r = fpl_train_policy_set(p, key, value, err, sizeof err);

	if (!h_check(r == 0 && err[0] == 0))
		h_fail("set %s = %s: %d (%s)", key, value, r, err);
}

static void set_bad(const char *key, const char *value, int status, const char *needle)
{
	fpl_train_policy p = preset("fp32"), q = p;
	char err[256] = "", a[4096], b[4096];
	int r = fpl_train_policy_set(&p, key, value, err, sizeof err);

	fpl_train_policy_describe(&p, a, sizeof a);
	fpl_train_policy_describe(&q, b, sizeof b);
	if (!h_check(r == status && strstr(err, needle) && !strchr(err, '\n') && !strcmp(a, b)))
		h_fail("set %s = %s: %d '%s' (expected %d and '%s', policy unchanged)", key, value,
		       r, err, status, needle);
}

static void test_keys(void)
{
	fpl_train_policy p = preset("fp32");

	set_ok(&p, "fwd", "-f bf16 --acc fp32 --order blocked:128");
	CHECK(!strcmp(p.fwd.a.name, "bf16") && !strcmp(p.fwd.b.name, "bf16")
		&& p.fwd.a_load == FPL_LOAD_ROUND && p.fwd.order == FPL_ORDER_BLOCKED
		&& p.fwd.block == 128,
	      "fwd = -f bf16 ...");
	set_ok(&p, "bwd", "--profile avx512bf16");
	CHECK(p.bwd.order == FPL_ORDER_PAIRS && p.bwd.a_load == FPL_LOAD_GIVEN,
	      "bwd = --profile avx512bf16");
	set_ok(&p, "red", "--a-format fp16:tz --b-format bf16 --prod fp32:tn --acc fp16:od "
	       "--order pairwise:4 --out-format fp32:nz");
	CHECK(!strcmp(p.red.a.name, "fp16") && p.red.a_rnd == FPL_RND_TZ
		&& !strcmp(p.red.b.name, "bf16") && !p.red.prod_exact && p.red.prod_rnd == FPL_RND_TN
		&& p.red.acc_rnd == FPL_RND_OD && p.red.order == FPL_ORDER_PAIRWISE
		&& p.red.leaf == 4 && p.red.out_set && p.red.out_rnd == FPL_RND_NZ,
	      "red = ...");
	set_ok(&p, "fwd.in", "fp16:given");
	set_ok(&p, "fwd.a", "e4m3fn");
	set_ok(&p, "fwd.b", "e5m2:sp");
	set_ok(&p, "fwd.prod", "bf16:tz");
	set_ok(&p, "fwd.acc", "e8m13:tz");
	set_ok(&p, "fwd.order", "kahan");
	set_ok(&p, "fwd.out", "bf16");
	CHECK(!strcmp(p.fwd.a.name, "e4m3fn") && p.fwd.a_load == FPL_LOAD_ROUND
		&& !strcmp(p.fwd.b.name, "e5m2") && p.fwd.b_rnd == FPL_RND_SP
		&& p.fwd.b_load == FPL_LOAD_ROUND && !p.fwd.prod_exact && p.fwd.acc.m == 13
		&& p.fwd.order == FPL_ORDER_KAHAN && p.fwd.out_set,
	      "fwd.* sub-keys");
	set_ok(&p, "fwd.out", "none");
	set_ok(&p, "fwd.prod", "exact");
	CHECK(!p.fwd.out_set && p.fwd.prod_exact,
	      "fwd.out none, fwd.prod exact");
	set_ok(&p, "bwd.profile", "fp32-fma");
	set_ok(&p, "red.acc", "fp32");
	set_ok(&p, "act", "bf16:sp");
	set_ok(&p, "grad", "e5m2+sat:tz");
	CHECK(!strcmp(p.act.name, "bf16") && p.act_rnd == FPL_RND_SP && p.grad.e == 5
		&& p.grad.overflow == FPL_OVF_SATURATE && p.grad_rnd == FPL_RND_TZ
		&& p.opt.grad.e == 5,
	      "act, grad");
	set_ok(&p, "weight", "bf16");
	set_ok(&p, "master", "split");
	CHECK(p.opt.master == FPL_MASTER_SPLIT && p.opt.master_fmt.m == 23
		&& p.opt.arith.m == 23 && p.opt.grad.e == 5,
	      "master split");
	set_ok(&p, "master", "kahan");
	CHECK(p.opt.master == FPL_MASTER_KAHAN && !strcmp(p.opt.arith.name, "bf16"),
	      "master kahan re-derives the formats");
	set_ok(&p, "master", "stochastic");
	set_ok(&p, "weight-sr", "se");
	set_ok(&p, "state", "fp16:tz");
	set_ok(&p, "arith", "fp32:tn");
	set_ok(&p, "unscale", "fp32");
	set_ok(&p, "master-format", "fp32:ne");
	CHECK(p.opt.weight_sr == FPL_RND_SE && !strcmp(p.opt.state.name, "fp16")
		&& p.opt.state_rnd == FPL_RND_TZ && p.opt.arith_rnd == FPL_RND_TN,
	      "optimizer formats");
	set_ok(&p, "loss-scale", "1024");
	CHECK(p.scaler.kind == FPL_OPT_SCALE_CONST && p.scaler.scale == 1024,
	      "loss-scale 1024");
	set_ok(&p, "loss-scale", "dynamic");
	CHECK(p.scaler.kind == FPL_OPT_SCALE_DYNAMIC && p.scaler.scale == 65536,
	      "loss-scale dynamic");
	set_ok(&p, "loss-scale", "dynamic:128:4:0.25:10");
	CHECK(p.scaler.scale == 128 && p.scaler.growth == 4 && p.scaler.backoff == 0.25
		&& p.scaler.interval == 10,
	      "loss-scale dynamic:128:4:0.25:10");
	set_ok(&p, "loss-scale", "none");
	CHECK(p.scaler.kind == FPL_OPT_SCALE_NONE,
	      "loss-scale none");
	set_ok(&p, "comm", "e5m2:sp");
	set_ok(&p, "comm-acc", "fp16");
	set_ok(&p, "comm-scale", "loss:1024");
	set_ok(&p, "algo", "hier:4");
	CHECK(p.comm.comm.e == 5 && p.comm.comm_rnd == FPL_RND_SP && p.comm.acc.m == 10
		&& p.comm.scaling == FPL_AR_SCALE_LOSS && p.comm.loss_scale == 1024
		&& p.comm.algo == FPL_AR_HIER && p.comm.group == 4,
	      "comm keys");
	set_ok(&p, "comm-scale", "aps");
	set_ok(&p, "algo", "tree");
	CHECK(p.comm.scaling == FPL_AR_SCALE_APS && p.comm.algo == FPL_AR_TREE,
	      "comm-scale aps, algo tree");
	set_ok(&p, "comm-fp32", "1,3,last");
	CHECK(p.comm_fp32 == (5u | FPL_TRAIN_COMM_FP32_LAST),
	      "comm-fp32 1,3,last");
	set_ok(&p, "comm-fp32", "all");
	CHECK(p.comm_fp32 == FPL_TRAIN_COMM_FP32_ALL,
	      "comm-fp32 all");
	set_ok(&p, "comm-fp32", "none");
	CHECK(p.comm_fp32 == 0,
	      "comm-fp32 none");

	set_bad("nope", "1", FPL_ENOTFOUND, "unknown key 'nope'");
	set_bad("fwd.nope", "1", FPL_ENOTFOUND, "unknown key");
	set_bad("fwd", "-f bf17", FPL_EPARSE, "unknown format");
	set_bad("fwd", "-f bf16 --acc", FPL_EPARSE, "needs a value");
	set_bad("fwd", "--frob 1", FPL_EPARSE, "unknown model option");
	set_bad("fwd", "--order blocked", FPL_EPARSE, "bad order");
	set_bad("bwd", "--profile nope", FPL_EPARSE, "unknown profile");
	set_bad("red.acc", "fp32:xx", FPL_EPARSE, "expected FORMAT");
	set_bad("act", "fp32:given", FPL_EPARSE, "expected FORMAT");
	set_bad("grad", "e9m99", FPL_EPARSE, "format");
	set_bad("master", "fp64-master", FPL_EPARSE, "expected none");
	set_bad("master", "split", FPL_EPARSE, "binary32's top bits");	/* weight fp32 */
	set_bad("weight-sr", "ne", FPL_EPARSE, "sp or se");
	set_bad("master-format", "fp32:tz", FPL_EPARSE, "rounded in ne");
	set_bad("loss-scale", "0", FPL_EPARSE, "expected none");
	set_bad("loss-scale", "-3", FPL_EPARSE, "expected none");
	set_bad("loss-scale", "dynamic:1:1", FPL_EPARSE, "GROWTH > 1");
	set_bad("loss-scale", "dynamic:1:2:1.5", FPL_EPARSE, "BACKOFF");
	set_bad("loss-scale", "dynamic:1:2:0.5:0", FPL_EPARSE, "INTERVAL");
	set_bad("loss-scale", "dynamic:1:2:0.5:1:9", FPL_EPARSE, "expected none");
	set_bad("loss-scale", "inf", FPL_EPARSE, "expected none");
	set_bad("comm-scale", "loss:0", FPL_EPARSE, "loss:S");
	set_bad("comm-scale", "apx", FPL_EPARSE, "loss:S");
	set_bad("algo", "hier", FPL_EPARSE, "hier:G");
	set_bad("algo", "hier:0", FPL_EPARSE, "hier:G");
	set_bad("algo", "star", FPL_EPARSE, "hier:G");
	set_bad("comm-fp32", "0", FPL_EPARSE, "comma list");
	set_bad("comm-fp32", "17", FPL_EPARSE, "comma list");
	set_bad("comm-fp32", "1,", FPL_EPARSE, "comma list");
	set_bad("comm", "fp8", FPL_EPARSE, "format");
	CHECK(fpl_train_policy_set(NULL, "act", "fp32", NULL, 0) == FPL_EINVAL,
	      "NULL policy");
}

/* ------------------------------------------------------------ files */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		h_fail("cannot write %s", path);
}

static void test_files(const fpl_dataset *ds)
{
	char dir[] = "/tmp/ttrainXXXXXX", path[256], err[512], a[4096], b[4096];
	const char *const *names = fpl_train_presets();
	fpl_train_policy p, q;
	size_t i;
	int r;

	if (!mkdtemp(dir)) {
		h_fail("mkdtemp");
		return;
	}
	snprintf(path, sizeof path, "%s/mine.policy", dir);
	write_file(path, "# a policy\n\n  preset = bf16-mixed   # start here\n"
		   "act = fp16:tz\n\t\nloss-scale=dynamic:1024\n# done\n");
	r = fpl_train_policy_load(&p, path, err, sizeof err);
	CHECK(r == 0 && !strcmp(p.name, "mine") && !strcmp(p.act.name, "fp16")
		&& p.act_rnd == FPL_RND_TZ && p.scaler.kind == FPL_OPT_SCALE_DYNAMIC
		&& p.scaler.scale == 1024 && !strcmp(p.fwd.a.name, "bf16"),
	      "load: %d %s", r, err);
	write_file(path, "act = bf16\n");
	r = fpl_train_policy_load(&p, path, err, sizeof err);
	CHECK(r == 0 && p.fwd.a.m == 23 && !strcmp(p.act.name, "bf16"),
	      "load without preset starts from fp32: %d %s", r, err);

	q = p;
	write_file(path, "# x\npreset = fp32\nact = bf16\n\nact = fp99\n");
	r = fpl_train_policy_load(&q, path, err, sizeof err);
	snprintf(a, sizeof a, "%s:5: act: unknown format", path);
	CHECK(r == FPL_EPARSE && !strncmp(err, a, strlen(a)) && !strcmp(q.act.name, "bf16"),
	      "bad line: %d '%s'", r, err);
	write_file(path, "act = bf16\npreset = fp32\n");
	r = fpl_train_policy_load(&q, path, err, sizeof err);
	snprintf(a, sizeof a, "%s:2: preset must be the first key", path);
	CHECK(r == FPL_EPARSE && !strcmp(err, a),
	      "late preset: %d '%s'", r, err);
	write_file(path, "preset = fp64\n");
	r = fpl_train_policy_load(&q, path, err, sizeof err);
	CHECK(r == FPL_ENOTFOUND && strstr(err, ":1: unknown preset 'fp64'"),
	      "unknown preset: %d '%s'", r, err);
	write_file(path, "frob = 1\n");
	r = fpl_train_policy_load(&q, path, err, sizeof err);
	CHECK(r == FPL_ENOTFOUND && strstr(err, ":1: unknown key 'frob'"),
	      "unknown key: %d '%s'", r, err);
	write_file(path, "act bf16\n");
	r = fpl_train_policy_load(&q, path, err, sizeof err);
	CHECK(r == FPL_EPARSE && strstr(err, ":1: expected 'key = value'"),
	      "no '=': %d '%s'", r, err);
	/* a byte no text holds: named with its line and column, not "line
	 * too long" (a NUL cut the line short for fgets) */
	{
		static const char bin[] = "act = bf16\nac\0t = fp16\n";
		FILE *fp = fopen(path, "wb");

		if (fp) {
			fwrite(bin, 1, sizeof bin - 1, fp);
			fclose(fp);
		}
		r = fpl_train_policy_load(&q, path, err, sizeof err);
		snprintf(a, sizeof a, "%s:2:3: byte 0x00: not a text file", path);
		CHECK(r == FPL_EPARSE && !strcmp(err, a), "NUL byte: %d '%s'", r, err);
		write_file(path, "act = bf16\n\x1b[31m\n");
		r = fpl_train_policy_load(&q, path, err, sizeof err);
		snprintf(a, sizeof a, "%s:2:1: byte 0x1b: not a text file", path);
		CHECK(r == FPL_EPARSE && !strcmp(err, a), "escape byte: %d '%s'", r, err);
	}
	/* lines of 1023 characters read (the documented limit), 1024 do not:
	 * "act = fp16" then blanks */
	{
		char line[1100];

		memset(line, ' ', sizeof line);
		memcpy(line, "act = fp16", 10);
		line[1023] = '\n';
		line[1024] = 0;
		write_file(path, line);
		r = fpl_train_policy_load(&q, path, err, sizeof err);
		CHECK(r == 0 && !strcmp(q.act.name, "fp16"), "a 1023-character line: %d '%s'", r,
		      err);
		line[1023] = ' ';
		line[1024] = '\n';
		line[1025] = 0;
		write_file(path, line);
		r = fpl_train_policy_load(&q, path, err, sizeof err);
		CHECK(r == FPL_EPARSE && strstr(err, ":1: line too long"),
		      "a 1024-character line: %d '%s'", r, err);
	}
	snprintf(a, sizeof a, "%s/absent.policy", dir);
	r = fpl_train_policy_load(&q, a, err, sizeof err);
	CHECK(r == FPL_EIO && strstr(err, "absent.policy"),
	      "absent: %d '%s'", r, err);

	/* describe -> load: the same description for every preset and for
	 * a policy with every kind of key changed */
	for (i = 0; names[i] || i == 6; i++) {
		size_t len;
		if (names[i]) {
			p = preset(names[i]);
		} else {
			p = preset("fp8-e4m3");
			set_ok(&p, "red", "--a-format fp16+daz:tz --b-format bf16 --prod fp32:tn "
			       "--acc fp16+ftz:od --order fused:4:12:ne --out-format e4m3fn+sat:sp");
			set_ok(&p, "master", "split");
			set_ok(&p, "weight-sr", "se");
			set_ok(&p, "loss-scale", "dynamic:0.1:3.5:0.125:7");
			set_ok(&p, "comm-scale", "loss:0.3");
			set_ok(&p, "algo", "hier:2");
			set_ok(&p, "comm-fp32", "2,last");
			snprintf(p.name, sizeof p.name, "custom");
		}
		len = fpl_train_policy_describe(&p, a, sizeof a);
		if (!h_check(len > 0 && len < sizeof a && strlen(a) == len
			     && fpl_train_policy_describe(&p, NULL, 0) == len)) {
			h_fail("describe %s: %zu", p.name, len);
			continue;
		}
		snprintf(path, sizeof path, "%s/%s.policy", dir, p.name);
		write_file(path, a);
		r = fpl_train_policy_load(&q, path, err, sizeof err);
		fpl_train_policy_describe(&q, b, sizeof b);
		if (!h_check(r == 0 && !strcmp(a, b) && !strcmp(q.name, p.name)))
			h_fail("round trip of %s: %d %s\n%s---\n%s", p.name, r, err, a, b);
		if (!names[i])
			break;
	}
	/* ... and the same training bits (fp8-e4m3's, 3 steps) */
	{
		fpl_train_config c;
		fpl_trainer *t1, *t2;
		size_t sizes[3] = { 64, 8, 4 }, rows[RB], s;
		int same;

		p = preset("fp8-e4m3");
		fpl_train_policy_describe(&p, a, sizeof a);
		snprintf(path, sizeof path, "%s/fp8.policy", dir);
		write_file(path, a);
		fpl_train_policy_load(&q, path, err, sizeof err);
		small_config(&c, 3, sizes, RB);
		t1 = make(&c, &p);
		t2 = make(&c, &q);
		for (s = 0; t1 && t2 && s < 3; s++) {
			step_rows(rows, s, ds->n);
			fpl_trainer_step(t1, ds, rows, NULL);
			fpl_trainer_step(t2, ds, rows, NULL);
		}
		if (t1 && t2) {
			compare(t1, t2, &c, &same);
			CHECK(same,
	      "a described and loaded fp8-e4m3 trains differently");
		}
		fpl_trainer_free(t1);
		fpl_trainer_free(t2);
	}
	for (i = 0; names[i]; i++) {
		snprintf(path, sizeof path, "%s/%s.policy", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/custom.policy", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/fp8.policy", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/mine.policy", dir);
	unlink(path);
	rmdir(dir);
}

/* ------------------------------------------------------------ behaviour */

static void test_errors(const fpl_dataset *ds)
{
	fpl_train_config c;
	fpl_train_policy p = preset("fp32");
	fpl_trainer *t = NULL;
	size_t sizes[3] = { 64, 8, 4 }, rows[RB] = { 0 };

	small_config(&c, 3, sizes, RB);
	c.nsizes = 1;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL && !t,
	      "nsizes 1");
	c.nsizes = FPL_TRAIN_MAX_LAYERS + 2;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "nsizes 18");
	small_config(&c, 3, sizes, RB);
	c.sizes[1] = 0;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "size 0");
	small_config(&c, 3, sizes, 4);
	c.nodes = 5;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "batch < nodes");
	c.nodes = 0;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "nodes 0");
	small_config(&c, 3, sizes, RB);
	c.hyper.lr = -1;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "lr < 0");
	small_config(&c, 3, sizes, RB);
	p.act.m = 99;
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EFORMAT,
	      "bad act format");
	p = preset("fp32");
	c.nodes = 3;
	fpl_train_policy_set(&p, "algo", "hier:2", NULL, 0);
	CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL,
	      "hier:2 on 3 nodes");
	p = preset("fp32");
	c.nodes = 1;
	CHECK(fpl_trainer_create(NULL, &c, &p) == FPL_EINVAL,
	      "NULL out");
	t = make(&c, &p);
	if (!t)
		return;
	rows[3] = ds->n;
	CHECK(fpl_trainer_step(t, ds, rows, NULL) == FPL_EINVAL,
	      "row out of range");
	{
		fpl_dataset v = *ds;
		v.d = 63;
		rows[3] = 0;
		CHECK(fpl_trainer_step(t, &v, rows, NULL) == FPL_EINVAL
			&& fpl_trainer_epoch(t, &v, NULL, NULL, NULL) == FPL_EINVAL,
	      "d mismatch");
	}
	CHECK(!fpl_trainer_weights(t, 0) && !fpl_trainer_weights(t, 3) && fpl_trainer_weights(t, 2)
		&& !fpl_trainer_bias(t, 3),
	      "weights(l) range");
	{
		fpl_train_config d;
		fpl_train_config_init(&d);
		CHECK(d.nsizes == 3 && d.sizes[0] == 784 && d.sizes[1] == 256 && d.sizes[2] == 10
			&& d.batch == 128 && d.nodes == 1 && d.hyper.algo == FPL_OPT_SGD
			&& d.hyper.lr == 0.1 && d.hyper.momentum == 0.9 && d.seed == 1
			&& d.threads == 1,
	      "config defaults");
	}
	fpl_trainer_free(t);
}

/* fpl_train_policy_check: policy `base` with key = value pairs (NULL
 * ended), on a network of nsizes sizes: the status, and the message
 * holds `needle` when refused.  Subset verdicts derived by hand below. */
static void check_one(const char *what, const char *base, const char *const *kv,
		      size_t nsizes, int want, const char *needle)
{
	static const size_t sizes[3] = { 64, 8, 4 };
	fpl_train_policy p = preset(base);
	fpl_train_config c;
	fpl_trainer *t = NULL;
	char err[1024] = "";
	int r, rc;

	for (; kv && kv[0]; kv += 2)
		set_ok(&p, kv[0], kv[1]);
	small_config(&c, nsizes, sizes, RB);
	c.sizes[nsizes - 1] = 4;
	r = fpl_train_policy_check(&p, &c, err, sizeof err);
	CHECK(r == want && (!want || (strstr(err, needle) && !strchr(err, '\n'))),
	      "%s: check %d '%s' (expected %d and '%s')", what, r, err, want, needle);
	rc = fpl_trainer_create(&t, &c, &p);
	CHECK(rc == want, "%s: create %d (expected %d)", what, rc, want);
	fpl_trainer_free(t);
}

/* An accepted policy with given inputs really takes steps: the check is
 * no looser than the loads (a refused given load is FPL_ERANGE). */
static void check_steps(const char *what, const char *base, const char *const *kv,
			size_t nsizes, const fpl_dataset *ds)
{
	static const size_t sizes[3] = { 64, 8, 4 };
	fpl_train_policy p = preset(base);
	fpl_train_config c;
	fpl_trainer *t;
	size_t rows[RB], s;
	int r = 0;

	for (; kv && kv[0]; kv += 2)
		set_ok(&p, kv[0], kv[1]);
	small_config(&c, nsizes, sizes, RB);
	c.sizes[nsizes - 1] = 4;
	t = make(&c, &p);
	for (s = 0; t && s < 3 && !r; s++) {
		step_rows(rows, s, ds->n);
		r = fpl_trainer_step(t, ds, rows, NULL);
	}
	CHECK(t && r == 0, "%s: a step fails: %d", what, r);
	fpl_trainer_free(t);
}

static void test_check(const fpl_dataset *ds)
{
	/* the policy file: fwd.profile avx512bf16 over fp32 (act =
	 * fp32: 23 fraction bits, bf16 has 7) */
	static const char *const prof[] = { "fwd.profile", "avx512bf16", NULL };
	/* over bf16-mixed (act, weight bf16) every input is a bf16 value */
	static const char *const all[] = { "fwd.profile", "avx512bf16", "bwd.profile", "amx-bf16",
					   NULL };
	/* e5m2 into fp16: both 5 exponent bits, bias 15, subnormals, inf
	 * and NaN; 2 fraction bits within 10: a subset */
	static const char *const e5[] = { "act", "e5m2", "fwd.a", "fp16:given", NULL };
	/* e4m3fn into e5m2: 3 fraction bits, e5m2 has 2 */
	static const char *const e4[] = { "act", "e4m3fn", "fwd.a", "e5m2:given", NULL };
	/* bf16 into fp16: 7 <= 10 fraction bits, but bf16's max (about
	 * 3.4e38) is far above fp16's 65504 */
	static const char *const bf[] = { "act", "bf16", "fwd.a", "fp16:given", NULL };
	/* e4m3ieee into e4m3fn: the same bias 7, 3 fraction bits, emin -6,
	 * max 240 <= 448: every finite value is one, but e4m3ieee's
	 * infinity is not (e4m3fn has none) */
	static const char *const inf[] = { "act", "e4m3ieee", "fwd.a", "e4m3fn:given", NULL };
	/* bwd.b takes the activations (dW) and, from two layers, the
	 * weights (the input gradient): act bf16, weight fp32 */
	static const char *const bw[] = { "act", "bf16", "bwd.b", "bf16:given", NULL };
	/* red.a takes the logits (act) and the gradients (grad = fp32) */
	static const char *const rd[] = { "act", "bf16", "red.a", "bf16:given", NULL };
	/* fwd.b takes the weights: bf16-mixed stores them in bf16, fp16
	 * lacks bf16's range */
	static const char *const wt[] = { "fwd.b", "fp16:given", NULL };
	/* fwd.a given: the biases (weight = fp64) start each chain as given
	 * values of the running sum's format, fp32 (acc, order sequential):
	 * 52 fraction bits do not fit 23.  With blocked:16:fp64 the running
	 * sum is the promotion format fp64: they fit. */
	static const char *const bias[] = { "weight", "fp64", "fwd.a", "fp32:given", NULL };
	static const char *const bias2[] = { "weight", "fp64", "fwd.a", "fp32:given",
					     "fwd.order", "blocked:16:fp64", NULL };
	fpl_train_policy p = preset("fp32");
	fpl_train_config c;
	char err[512];

	check_one("biases into acc", "fp32", bias, 3, FPL_EINVAL,
		  "fwd takes the biases as given fp32 values (fwd.a = fp32:given: no rounding), "
		  "but weight = fp64 has values fp32 lacks");
	check_one("biases into promo", "fp32", bias2, 3, 0, "");
	check_steps("biases into promo", "fp32", bias2, 3, ds);
	check_one("profile over fp32", "fp32", prof, 3, FPL_EINVAL,
		  "fwd takes the activations as given bf16 values (fwd.profile avx512bf16");
	check_one("profile over fp32 (key)", "fp32", prof, 3, FPL_EINVAL, "act = fp32");
	check_one("profiles over bf16-mixed", "bf16-mixed", all, 3, 0, "");
	check_steps("profiles over bf16-mixed", "bf16-mixed", all, 3, ds);
	check_one("e5m2 in fp16", "fp32", e5, 3, 0, "");
	check_steps("e5m2 in fp16", "fp32", e5, 3, ds);
	check_one("e4m3fn in e5m2", "fp32", e4, 3, FPL_EINVAL, "act = e4m3fn has values e5m2 lacks");
	check_one("bf16 in fp16", "fp32", bf, 3, FPL_EINVAL, "act = bf16 has values fp16 lacks");
	check_one("e4m3ieee in e4m3fn", "fp32", inf, 3, FPL_EINVAL,
		  "act = e4m3ieee has values e4m3fn lacks");
	check_one("bwd.b, one layer", "fp32", bw, 2, 0, "");
	check_steps("bwd.b, one layer", "fp32", bw, 2, ds);
	check_one("bwd.b, two layers", "fp32", bw, 3, FPL_EINVAL,
		  "bwd takes the weights as given bf16 values (bwd.b = bf16:given");
	check_one("red.a", "fp32", rd, 3, FPL_EINVAL, "red takes the gradients");
	check_one("fwd.b", "bf16-mixed", wt, 3, FPL_EINVAL, "weight = bf16 has values fp16 lacks");
	/* APS loss scaling (no key sets it: the struct does) */
	p.scaler.kind = FPL_OPT_SCALE_APS;
	small_config(&c, 2, (const size_t[]){ 64, 4 }, RB);
	CHECK(fpl_train_policy_check(&p, &c, err, sizeof err) == FPL_EINVAL
		&& !strncmp(err, "loss-scale: ", 12), "APS loss scaling: '%s'", err);
}

static size_t progress_calls;

static void progress(void *ctx, size_t done, size_t total)
{
	(void)ctx;
	if (done == ++progress_calls && done <= total)
		return;
	h_fail("progress %zu of %zu after %zu calls", done, total, progress_calls);
}

/* fp32 learns, threads and re-runs change nothing, P = 2 stays close. */
static void test_learning(const fpl_dataset *all)
{
	fpl_dataset tr = view(all, 0, 1600), te = view(all, 1600, 400);
	size_t sizes[3] = { 32, 16, 4 };
	fpl_train_config c;
	fpl_train_policy p = preset("fp32");
	fpl_trainer *t1, *t2, *t3, *t4;
	fpl_train_stats st;
	double acc = 0, loss = 0, first = 0, md;
	int e, same, r;

	small_config(&c, 3, sizes, 32);
	t1 = make(&c, &p);
	c.threads = 2;
	t2 = make(&c, &p);
	if (!t1 || !t2)
		return;
	for (e = 0; e < 3; e++) {
		memset(&st, 0, sizeof st);
		progress_calls = 0;
		if (fpl_trainer_epoch(t1, &tr, &st, progress, NULL))
			break;
		CHECK(progress_calls == 50 && st.steps == 50 && st.loss_n == 50 && st.skipped == 0
			&& st.scale == 1 && st.updates > 0 && st.opt_count[0] == 0
			&& st.act_count[0] == 0 && st.grad_count[0] == 0,
	      "epoch %d stats: %zu calls, %llu steps", e, progress_calls,
				  (unsigned long long)st.steps);
		if (e == 0)
			first = st.loss_sum / (double)st.loss_n;
		epoch(t2, &tr, NULL);
	}
	r = fpl_trainer_evaluate(t1, &te, &acc, &loss);
	h_note("fp32, 32-16-4, 3 epochs of 1600: first epoch loss %.4f, last %.4f; test accuracy "
	       "%.4f, loss %.4f", first, st.loss_sum / (double)st.loss_n, acc, loss);
	CHECK(r == 0 && acc > 0.9 && loss < first && st.loss_sum / (double)st.loss_n < first,
	      "fp32 does not learn: %d, accuracy %g", r, acc);
	compare(t1, t2, &c, &same);
	CHECK(same,
	      "1 and 2 threads give different weights");
	fpl_trainer_free(t1);
	fpl_trainer_free(t2);

	/* P = 2: re-run identical, threads identical, close to P = 1 */
	small_config(&c, 3, sizes, 32);
	t1 = make(&c, &p);
	c.nodes = 2;
	t2 = make(&c, &p);
	t3 = make(&c, &p);
	c.threads = 2;
	t4 = make(&c, &p);
	if (t1 && t2 && t3 && t4) {
		size_t s, rows[32], i;
		for (s = 0; s < 10; s++) {
			for (i = 0; i < 32; i++)
				rows[i] = (s * 32 + i * 3) % tr.n;
			fpl_trainer_step(t1, &tr, rows, NULL);
			fpl_trainer_step(t2, &tr, rows, NULL);
			fpl_trainer_step(t3, &tr, rows, NULL);
			fpl_trainer_step(t4, &tr, rows, NULL);
		}
		compare(t2, t3, &c, &same);
		CHECK(same,
	      "P = 2 re-run differs");
		compare(t2, t4, &c, &same);
		CHECK(same,
	      "P = 2 on 2 threads differs");
		md = compare(t1, t2, &c, &same);
		/* the nodes' partial sums change the summation order: a few
		 * binary32 ulps per step on weights below 1, grown by 10 steps
		 * of momentum (measured: 4.5e-8); 2^-20 leaves a margin of 20 */
		h_note("P = 2 vs P = 1 after 10 steps: max |difference| %.3g (%s)", md,
		       same ? "equal" : "not equal");
		CHECK(md <= 0x1p-20 && !same,
	      "P = 2 is %g away from P = 1", md);
	}
	fpl_trainer_free(t1);
	fpl_trainer_free(t2);
	fpl_trainer_free(t3);
	fpl_trainer_free(t4);
}

/*
 * The optimizer's block slots in a policy: master-format and state take
 * block formats (fields and modes read back), the arithmetic slots refuse
 * them with the reason; a trainer with an mxfp8 master and state in sp
 * gives the same weights on 1 and 2 threads, and an exact block (binary32
 * elements, e8m0 scales, rceil: x / 2^k is exact) in both slots gives
 * fp32-master's weights bit for bit.
 */
static void test_block_opt(const fpl_dataset *ds)
{
	size_t sizes[3] = { 64, 8, 4 }, rows[RB], s, i;
	fpl_train_policy p = preset("fp32"), q;
	fpl_train_config c;
	fpl_trainer *t1, *t2, *t3, *t4;
	char a[4096], err[256];
	int same;

	set_ok(&p, "master", "fp32-master");
	q = p;
	set_ok(&p, "master-format", "mxfp8");
	set_ok(&p, "state", "mxfp8:rceil:sp");
	CHECK(p.opt.master_is_block && !strcmp(p.opt.master_block.name, "mxfp8")
	      && p.opt.state_is_block && p.opt.state_block.rule == FPL_BRULE_RCEIL
	      && p.opt.state_rnd == FPL_RND_SP && p.opt.state.m == 3,
	      "block master-format and state not set as written");
	fpl_train_policy_describe(&p, a, sizeof a);
	CHECK(strstr(a, "\nmaster-format = block:e4m3fn:e8m0:32:floor:ne\n")
	      && strstr(a, "\nstate = block:e4m3fn:e8m0:32:rceil:sp\n"), "describe: %s", a);
	for (i = 0; i < 2; i++) {	/* a plain value clears the block */
		fpl_train_policy r = p;
		set_ok(&r, i ? "state" : "master-format", "fp32");
		CHECK(i ? !r.opt.state_is_block : !r.opt.master_is_block, "plain after block");
	}
	set_bad("arith", "mxfp8", FPL_EPARSE, "arithmetic slot rounds the result of each scalar");
	set_bad("unscale", "nvfp4", FPL_EPARSE, "a block's scale, a function of a whole block");
	set_bad("comm-acc", "mxfp4", FPL_EPARSE, "is a block-scaled format: an arithmetic slot");
	set_bad("master-format", "mxfp8:sp", FPL_EPARSE, "rounded in ne");
	small_config(&c, 3, sizes, RB);
	{	/* a block master without fp32-master */
		fpl_train_policy r = preset("fp32");
		set_ok(&r, "master-format", "mxfp8");
		CHECK(fpl_train_policy_check(&r, &c, err, sizeof err) == FPL_EINVAL
		      && strstr(err, "needs master = fp32-master"), "block master, none: '%s'", err);
	}
	t1 = make(&c, &p);
	c.threads = 2;
	t2 = make(&c, &p);
	c.threads = 1;
	set_ok(&q, "master-format", "block:fp32:e8m0:32:rceil");
	set_ok(&q, "state", "block:fp32:e8m0:32:rceil");
	t3 = make(&c, &q);
	q = preset("fp32");
	set_ok(&q, "master", "fp32-master");
	t4 = make(&c, &q);
	for (s = 0; t1 && t2 && t3 && t4 && s < 6; s++) {
		for (i = 0; i < RB; i++)
			rows[i] = (s * RB + i * 7) % ds->n;
		fpl_trainer_step(t1, ds, rows, NULL);
		fpl_trainer_step(t2, ds, rows, NULL);
		fpl_trainer_step(t3, ds, rows, NULL);
		fpl_trainer_step(t4, ds, rows, NULL);
	}
	if (t1 && t2 && t3 && t4) {
		compare(t1, t2, &c, &same);
		CHECK(same, "mxfp8 master and state in sp: 1 and 2 threads differ");
		compare(t3, t4, &c, &same);
		CHECK(same, "an exact block master and state differ from fp32-master");
		compare(t1, t4, &c, &same);
		CHECK(!same, "an mxfp8 master and state change nothing");
	}
	fpl_trainer_free(t1);
	fpl_trainer_free(t2);
	fpl_trainer_free(t3);
	fpl_trainer_free(t4);
}

/* Dynamic scaling: a huge initial scale overflows fp16 gradients, and
 * every such step is skipped with the scale halved. */
static void test_dynamic(const fpl_dataset *ds)
{
	size_t sizes[3] = { 64, 8, 4 }, rows[RB], s;
	fpl_train_config c;
	fpl_train_policy p = preset("fp16-mixed");
	fpl_trainer *t, *ref;
	fpl_train_stats st;
	int same;

	set_ok(&p, "loss-scale", "dynamic:0x1p100");
	small_config(&c, 3, sizes, RB);
	t = make(&c, &p);
	ref = make(&c, &p);
	if (!t || !ref)
		return;
	memset(&st, 0, sizeof st);
	for (s = 0; s < 4; s++) {
		step_rows(rows, s, ds->n);
		fpl_trainer_step(t, ds, rows, &st);
	}
	compare(t, ref, &c, &same);
	CHECK(st.steps == 4 && st.skipped == 4 && st.scale == 0x1p96 && same
		&& st.grad_count[2] > 0,
	      "dynamic scale 2^100: %llu steps, %llu skipped, scale %g, overflows %llu, "
			  "weights %s", (unsigned long long)st.steps, (unsigned long long)st.skipped,
			  st.scale, (unsigned long long)st.grad_count[2], same ? "same" : "changed");
	fpl_trainer_free(t);
	fpl_trainer_free(ref);

	/* the default 65536 on this network: steps run and the weights move */
	p = preset("fp16-mixed");
	t = make(&c, &p);
	ref = make(&c, &p);
	if (!t || !ref)
		return;
	memset(&st, 0, sizeof st);
	for (s = 0; s < 3; s++) {
		step_rows(rows, s, ds->n);
		fpl_trainer_step(t, ds, rows, &st);
	}
	compare(t, ref, &c, &same);
	CHECK(st.skipped < 3 && !same,
	      "fp16-mixed at 65536: %llu skipped",
						     (unsigned long long)st.skipped);
	fpl_trainer_free(t);
	fpl_trainer_free(ref);
}

/* aps-e4m3-comm on 4 nodes; fp8-e4m3 beats chance. */
static void test_low(const fpl_dataset *all)
{
	fpl_dataset tr = view(all, 0, 1600), te = view(all, 1600, 400);
	size_t sizes[3] = { 32, 16, 4 };
	fpl_train_config c;
	fpl_train_policy p;
	fpl_trainer *t, *f;
	fpl_train_stats st;
	double acc = 0, facc = 0;
	int same, r;

	small_config(&c, 3, sizes, 32);
	c.nodes = 4;
	p = preset("aps-e4m3-comm");
	t = make(&c, &p);
	p = preset("fp32");
	f = make(&c, &p);
	if (t && f) {
		memset(&st, 0, sizeof st);
		epoch(t, &tr, &st);
		epoch(f, &tr, NULL);
		r = fpl_trainer_evaluate(t, &te, &acc, NULL);
		fpl_trainer_evaluate(f, &te, &facc, NULL);
		compare(t, f, &c, &same);
		h_note("aps-e4m3-comm, 4 nodes, 1 epoch: accuracy %.4f (fp32 comm %.4f)", acc, facc);
		CHECK(r == 0 && !same && acc > 0.5 && st.steps == 50 && st.comm_count[0] == 0,
	      "aps-e4m3-comm on 4 nodes: %d, accuracy %g", r, acc);
	}
	fpl_trainer_free(t);
	fpl_trainer_free(f);

	small_config(&c, 3, sizes, 32);
	p = preset("fp8-e4m3");
	t = make(&c, &p);
	if (t) {
		int e;
		for (e = 0; e < 2; e++)
			epoch(t, &tr, NULL);
		r = fpl_trainer_evaluate(t, &te, &acc, NULL);
		h_note("fp8-e4m3, 2 epochs: accuracy %.4f (chance 0.25)", acc);
		CHECK(r == 0 && acc > 0.5,
	      "fp8-e4m3 accuracy %g", acc);
	}
	fpl_trainer_free(t);
}

int main(void)
{
	fpl_dataset small, blobs;

	h_init("ttrain");
	if (fpl_dataset_generate(&small, 80, 64, 4, 3) || fpl_dataset_generate(&blobs, 2000, 32, 4, 5)) {
		h_fail("fpl_dataset_generate");
		return h_done();
	}
	test_presets();
	test_keys();
	test_files(&small);
	test_errors(&small);
	test_check(&small);
	test_plain(&small, 0, 1);
	test_plain(&small, 0.9f, 1);
	test_plain(&small, 0.9f, 2);
	test_learning(&blobs);
	test_dynamic(&small);
	test_block_opt(&small);
	test_low(&blobs);
	fpl_dataset_free(&small);
	fpl_dataset_free(&blobs);
	mpfr_free_cache();
	return h_done();
}
