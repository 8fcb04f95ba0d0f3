/* SPDX-License-Identifier: MIT */
/*
 * allreduce.c - fpl_allreduce: the simulator of fplab/allreduce.h.  P
 * private buffers, one forked state per node, the schedule walked step
 * by step; every rounding is one of allreduce_round.c's public helpers,
 * called with a copy of the node's state, so an MPI rank that calls them
 * with its own state makes the very same roundings.
 *
 * The invariant a reader must know: inside a step no transfer reads
 * elements that another transfer of that step writes, and no node
 * receives twice (a property of every schedule, checked by the tests),
 * so executing the transfers in place, in any order and in any thread,
 * is the header's start-of-step snapshot; and draws are explicit
 * indices, so the bits do not depend on threads.  Flags are gathered
 * per thread and added up (integer sums, order-free); the report's sum
 * of relative errors is exact (fpl_exact) for the same reason.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/allreduce.h>
#include <fplab/error.h>
#include <fplab/exact.h>

#include "engine/internal.h"
#include "util/parallel.h"

#define BLK 256	/* elements per helper call */

/* Transfers of one step with the same sender and range: one rounding. */
typedef struct unit {
	uint32_t src;
	uint64_t lo, hi;
	size_t x0, x1;	/* the transfers, S->x[x0 .. x1-1] */
} unit;

/* What one thread gathers. */
typedef struct tacc {
	unsigned fl;
	uint64_t cnt[FPL_NFLAGS];
	/* report */
	fpl_exact rel, abserr, absval;
	double max_rel;
	int max_nan;
	uint64_t rel_n, nan, inf, zero;
} tacc;

typedef struct run {
	const fpl_ar_config *cfg;
	const fpl_ar_schedule *S;
	const double *const *g;
	double *buf;		/* node i's buffer at buf + i*n */
	const double *out;
	uint64_t n;
	uint32_t P;
	fpl_state *node;
	int shift;
	/* the current step */
	uint32_t step;
	unit *u;
	uint64_t *off;		/* off[k]: first flat index of unit k; off[nu] total */
	size_t nu;
	tacc *t;		/* FPL_MAX_THREADS */
} run;

/* Add the flags a helper committed into a scratch state. */
static void gather(tacc *T, const fpl_state *s)
{
	int k;

	T->fl |= s->flags;
	for (k = 0; k < FPL_NFLAGS; k++)
		T->cnt[k] += s->count[k];
}

static fpl_state scratch_of(const fpl_state *node)
{
	fpl_state s = *node;
	fpl_state_clear_flags(&s);
	return s;
}

/* ------------------------------------------------------------ phases */

static void cast_range(void *vc, size_t a, size_t b, int t)
{
	run *R = vc;

	while (a < b) {
		uint64_t i = a / R->n, e = a % R->n;
		size_t len = b - a;
		fpl_state s = scratch_of(&R->node[i]);

		if (len > R->n - e)
			len = (size_t)(R->n - e);
		if (len > BLK)
			len = BLK;
		fpl_ar_round_cast(R->buf + i * R->n + e, R->g[i] + e, len, e, R->shift, R->cfg, &s);
		gather(&R->t[t], &s);
		a += len;
	}
}

static void step_range(void *vc, size_t a, size_t b, int t)
{
	run *R = vc;
	double tmp[BLK];
	size_t k = 0, lo = 0, hi = R->nu;

	while (hi - lo > 1) {	/* the last unit with off <= a */
		size_t mid = (lo + hi) / 2;
		if (R->off[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	for (k = lo; a < b; k++) {
		const unit *U = &R->u[k];
		size_t end = R->off[k + 1] < b ? (size_t)R->off[k + 1] : b;

		while (a < end) {
			size_t len = end - a < BLK ? end - a : BLK, x;
			uint64_t e = U->lo + (a - R->off[k]);
			fpl_state s = scratch_of(&R->node[U->src]);

			fpl_ar_round_send(tmp, R->buf + U->src * R->n + e, len, e, R->step, R->cfg,
					  R->n, &s);
			gather(&R->t[t], &s);
			for (x = U->x0; x < U->x1; x++) {
				const fpl_ar_xfer *X = &R->S->x[x];
				double *d = R->buf + X->dst * R->n + e;
				if (X->op == FPL_AR_COPY) {
					memcpy(d, tmp, len * sizeof *d);
					continue;
				}
				s = scratch_of(&R->node[X->dst]);
				fpl_ar_round_add(d, tmp, len, e, R->step, R->cfg, R->n, &s);
				gather(&R->t[t], &s);
			}
			a += len;
		}
	}
}

/*
 * A block comm format: the cast and each send must see a whole buffer or
 * a whole range, since the block grid starts at its first element; the
 * parallel work is then over nodes (cast) and units (step), one call
 * each, not over pieces of BLK elements.  The adds still go piece by
 * piece (element-wise, explicit draws: the split does not matter).
 */
static void cast_block(void *vc, size_t a, size_t b, int t)
{
	run *R = vc;

	for (; a < b; a++) {
		fpl_state s = scratch_of(&R->node[a]);

		fpl_ar_round_cast(R->buf + a * R->n, R->g[a], (size_t)R->n, 0, R->shift, R->cfg, &s);
		gather(&R->t[t], &s);
	}
}

static void step_block(void *vc, size_t a, size_t b, int t)
{
	run *R = vc;

	for (; a < b; a++) {
		const unit *U = &R->u[a];
		size_t len = (size_t)(U->hi - U->lo), x, k;
		double *tmp = malloc(len * sizeof *tmp + 1);
		fpl_state s = scratch_of(&R->node[U->src]);

		if (!tmp) {	/* as the helpers do: the failure shows as NaN */
			for (x = U->x0; x < U->x1; x++)
				for (k = 0; k < len; k++)
					R->buf[R->S->x[x].dst * R->n + U->lo + k] = NAN;
			continue;
		}
		fpl_ar_round_send(tmp, R->buf + U->src * R->n + U->lo, len, U->lo, R->step, R->cfg,
				  R->n, &s);
		gather(&R->t[t], &s);
		for (x = U->x0; x < U->x1; x++) {
			const fpl_ar_xfer *X = &R->S->x[x];
			double *d = R->buf + X->dst * R->n + U->lo;
			if (X->op == FPL_AR_COPY) {
				memcpy(d, tmp, len * sizeof *d);
				continue;
			}
			s = scratch_of(&R->node[X->dst]);
			fpl_ar_round_add(d, tmp, len, U->lo, R->step, R->cfg, R->n, &s);
			gather(&R->t[t], &s);
		}
		free(tmp);
	}
}

static int is_block(const fpl_ar_config *cfg)
{
	return cfg->comm_is_block && !cfg->keep_fp32;
}

/* Group the transfers x0..x1-1 of one step into units and run them. */
static void run_step(run *R, size_t x0, size_t x1, int threads)
{
	const fpl_ar_xfer *x = R->S->x;
	size_t i;

	R->step = x[x0].step;
	R->nu = 0;
	R->off[0] = 0;
	for (i = x0; i < x1; i++) {
		unit *U = R->nu ? &R->u[R->nu - 1] : NULL;
		if (U && U->src == x[i].src && U->lo == x[i].lo && U->hi == x[i].hi) {
			U->x1 = i + 1;
			continue;
		}
		R->u[R->nu] = (unit){ x[i].src, x[i].lo, x[i].hi, i, i + 1 };
		R->off[R->nu + 1] = R->off[R->nu] + (x[i].hi - x[i].lo);
		R->nu++;
	}
	if (is_block(R->cfg))
		fpl__parallel(R->nu, threads, step_block, R);
	else
		fpl__parallel((size_t)R->off[R->nu], threads, step_range, R);
}

/* The error pass: node 0's result against the exact sums. */
typedef struct erun {
	const double *const *g;
	const double *out;
	uint32_t P;
	tacc *t;		/* FPL_MAX_THREADS */
} erun;

/* Exact sums, errors and events of node 0's result (out).  A result
 * that is NaN or infinite where the exact sum is finite and nonzero
 * counts as relative (and absolute) error +inf. */
static void report_range(void *vc, size_t a, size_t b, int t)
{
	erun *R = vc;
	tacc *T = &R->t[t];
	fpl_exact E;
	size_t e;
	uint32_t i;

	for (e = a; e < b; e++) {
		double r = R->out[e], rel;
		int sg;

		fpl_exact_init(&E);
		for (i = 0; i < R->P; i++)
			fpl_exact_add(&E, R->g[i][e]);
		sg = fpl_exact_sign(&E);
		if (isnan(r))
			T->nan++;
		else if (isinf(r))
			T->inf++;
		else if (r == 0 && sg != 0 && sg != 2)
			T->zero++;
		if (E.nan || E.pinf || E.ninf || sg == 0)
			continue;
		if (isfinite(r)) {
			rel = fpl_exact_relerr(&E, r);
			fpl_exact_add(&T->abserr, fpl_exact_abserr(&E, r));
		} else {
			rel = INFINITY;
			fpl_exact_add(&T->abserr, INFINITY);
		}
		if (sg < 0)
			fpl_exact_neg(&E);
		fpl_exact_add_exact(&T->absval, &E);
		T->rel_n++;
		fpl_exact_add(&T->rel, rel);
		if (isnan(rel))
			T->max_nan = 1;
		else if (rel > T->max_rel)
			T->max_rel = rel;
	}
}

/* The error fields of rep, with the per-thread accumulators t (their
 * report fields are reset here). */
static void report_errors(fpl_ar_report *rep, const double *out, const double *const *g,
			  uint32_t P, size_t n, int threads, tacc *t)
{
	fpl_exact rel, abserr, absval;
	erun R = { g, out, P, t };
	int k;

	for (k = 0; k < FPL_MAX_THREADS; k++) {
		fpl_exact_init(&t[k].rel);
		fpl_exact_init(&t[k].abserr);
		fpl_exact_init(&t[k].absval);
		t[k].max_rel = 0;
		t[k].max_nan = 0;
		t[k].rel_n = t[k].nan = t[k].inf = t[k].zero = 0;
	}
	fpl__parallel(n, threads, report_range, &R);
	fpl_exact_init(&rel);
	fpl_exact_init(&abserr);
	fpl_exact_init(&absval);
	rep->rel_n = rep->nan = rep->inf = rep->became_zero = 0;
	rep->max_rel = 0;
	for (k = 0; k < FPL_MAX_THREADS; k++) {
		tacc *T = &t[k];
		fpl_exact_add_exact(&rel, &T->rel);
		fpl_exact_add_exact(&abserr, &T->abserr);
		fpl_exact_add_exact(&absval, &T->absval);
		rep->rel_n += T->rel_n;
		rep->nan += T->nan;
		rep->inf += T->inf;
		rep->became_zero += T->zero;
		if (T->max_nan)
			rep->max_rel = NAN;
		else if (T->max_rel > rep->max_rel && !isnan(rep->max_rel))
			rep->max_rel = T->max_rel;
	}
	rep->avg_rel = rep->rel_n ? fpl_exact_value(&rel) / (double)rep->rel_n : 0;
	rep->l1_rel = rep->rel_n ? fpl_exact_value(&abserr) / fpl_exact_value(&absval) : 0;
}

int fpl_ar_report_errors(fpl_ar_report *rep, const double *out, const double *const *g,
			 uint32_t P, size_t n, int threads)
{
	tacc *t;
	uint32_t i;

	if (!rep || P == 0 || (n && (!out || !g)))
		return FPL_EINVAL;
	for (i = 0; n && i < P; i++)
		if (!g[i])
			return FPL_EINVAL;
	t = calloc(FPL_MAX_THREADS, sizeof *t);
	if (!t)
		return FPL_ENOMEM;
	threads = threads < 1 ? 1 : threads > FPL_MAX_THREADS ? FPL_MAX_THREADS : threads;
	report_errors(rep, out, g, P, n, threads, t);
	free(t);
	return 0;
}

/* ------------------------------------------------------------ driver */

static int check(const fpl_ar_config *cfg, const double *const *g, const double *out, size_t n,
		 const fpl_state *st)
{
	uint32_t i;

	if (!cfg || !st || cfg->nodes == 0 || (unsigned)cfg->algo >= FPL_AR_COUNT)
		return FPL_EINVAL;
	if (fpl_ar_algo_grouped(cfg->algo) && (cfg->group == 0 || cfg->nodes % cfg->group))
		return FPL_EINVAL;
	if ((unsigned)cfg->comm_rnd >= FPL_RND_COUNT || (unsigned)cfg->acc_rnd >= FPL_RND_COUNT)
		return FPL_EINVAL;
	if ((unsigned)cfg->scaling > FPL_AR_SCALE_APS)
		return FPL_EINVAL;
	if (cfg->scaling == FPL_AR_SCALE_LOSS && !(cfg->loss_scale > 0 && isfinite(cfg->loss_scale)))
		return FPL_EINVAL;
	if (is_block(cfg) && (cfg->scaling != FPL_AR_SCALE_NONE ||
			      fpl_block_check(&cfg->comm_block, NULL, 0)))
		return FPL_EINVAL;
	if (n == 0)
		return 0;
	if (!g || !out || n > SIZE_MAX / sizeof(double) / cfg->nodes)
		return FPL_EINVAL;
	for (i = 0; i < cfg->nodes; i++)
		if (!g[i])
			return FPL_EINVAL;
	return 0;
}

/* max |g| over all nodes; NaN when some value is NaN. */
static double max_abs(const double *const *g, uint32_t P, size_t n)
{
	double m = 0;
	uint32_t i;
	size_t e;

	for (i = 0; i < P; i++)
		for (e = 0; e < n; e++) {
			double a = fabs(g[i][e]);
			if (isnan(a))
				return a;
			if (a > m)
				m = a;
		}
	return m;
}

/* Bytes of one transfer of len values in a block format: codes and
 * scales bit-packed (the header). */
static uint64_t block_bytes(const fpl_block_format *b, uint64_t len)
{
	size_t dims[1] = { (size_t)len }, nb = 0;
	uint64_t bits;

	fpl_block_layout(b, dims, 1, &nb, NULL, NULL);
	bits = len * (uint64_t)b->elem.nbits + nb * (uint64_t)b->scale.nbits
	       + (b->tensor_scale ? 32 : 0);
	return (bits + 7) / 8;
}

/* Bytes sent by the busiest node. */
static uint64_t busiest(const fpl_ar_schedule *S, const fpl_ar_config *cfg, uint64_t *per)
{
	uint64_t bpv = cfg->keep_fp32 ? 4 : (uint64_t)(cfg->comm.nbits + 7) / 8, m = 0;
	size_t x;
	uint32_t i;

	memset(per, 0, S->nodes * sizeof *per);
	for (x = 0; x < S->nx; x++)
		per[S->x[x].src] += is_block(cfg)
			? block_bytes(&cfg->comm_block, S->x[x].hi - S->x[x].lo)
			: (S->x[x].hi - S->x[x].lo) * bpv;
	for (i = 0; i < S->nodes; i++)
		if (per[i] > m)
			m = per[i];
	return m;
}

static void finish_report(fpl_ar_report *rep, run *R, const fpl_ar_schedule *S, uint64_t *per,
			  int threads)
{
	size_t dims[1] = { (size_t)R->n };
	uint32_t i;
	int t, k;

	memset(rep, 0, sizeof *rep);
	rep->n = R->n;
	rep->steps = S->steps;
	rep->bytes_sent = busiest(S, R->cfg, per) + (R->cfg->scaling == FPL_AR_SCALE_APS
						      && !R->cfg->keep_fp32);
	rep->scale_log2 = R->shift;
	rep->bits_per_value = R->cfg->keep_fp32 ? 32 : is_block(R->cfg)
		? fpl_block_bits(&R->cfg->comm_block, dims, 1) : R->cfg->comm.nbits;
	for (t = 0; t < FPL_MAX_THREADS; t++)
		for (k = 0; k < FPL_NFLAGS; k++)
			rep->count[k] += R->t[t].cnt[k];
	report_errors(rep, R->out, R->g, R->P, (size_t)R->n, threads, R->t);
	rep->nodes_agree = 1;
	for (i = 1; i < R->P; i++)
		if (memcmp(R->buf + (size_t)i * R->n, R->buf, (size_t)R->n * sizeof(double))) {
			rep->nodes_agree = 0;
			break;
		}
}

int fpl_allreduce(double *out, fpl_ar_report *rep, const fpl_ar_config *cfg,
		  const double *const *g, size_t n, fpl_state *st)
{
	fpl_ar_schedule S;
	run *R = NULL;
	uint64_t *per = NULL;
	uint32_t P, i;
	int threads, rc, t, k;
	size_t x, x1;

	rc = check(cfg, g, out, n, st);
	if (rc)
		return rc;
	P = cfg->nodes;
	threads = cfg->threads < 1 ? 1 : cfg->threads > FPL_MAX_THREADS ? FPL_MAX_THREADS
									 : cfg->threads;
	rc = fpl_ar_schedule_build(&S, cfg->algo, P, cfg->group, n);
	if (rc)
		return rc;
	R = calloc(1, sizeof *R);
	if (R) {
		R->buf = malloc(n ? (size_t)P * n * sizeof(double) : 1);
		R->node = malloc(P * sizeof *R->node);
		R->u = malloc((P + 1) * sizeof *R->u);
		R->off = malloc((P + 2) * sizeof *R->off);
		R->t = calloc(FPL_MAX_THREADS, sizeof *R->t);
		per = malloc(P * sizeof *per);
	}
	if (!R || !R->buf || !R->node || !R->u || !R->off || !R->t || !per) {
		rc = FPL_ENOMEM;
		goto out;
	}
	R->cfg = cfg;
	R->S = &S;
	R->g = g;
	R->n = n;
	R->P = P;
	R->out = out;
	for (i = 0; i < P; i++)
		fpl_state_fork(st, &R->node[i], i);
	R->shift = cfg->scaling == FPL_AR_SCALE_APS && n ? fpl_ar_aps_shift(cfg, max_abs(g, P, n)) : 0;

	if (n && is_block(cfg))
		fpl__parallel(P, threads, cast_block, R);
	else if (n)
		fpl__parallel((size_t)P * n, threads, cast_range, R);
	for (x = 0; x < S.nx; x = x1) {
		for (x1 = x + 1; x1 < S.nx && S.x[x1].step == S.x[x].step;)
			x1++;
		run_step(R, x, x1, threads);
	}
	for (x = 0; x < n; x++) {
		double r = R->buf[x];
		if (cfg->keep_fp32 || cfg->scaling == FPL_AR_SCALE_NONE)
			out[x] = r;
		else if (cfg->scaling == FPL_AR_SCALE_LOSS)
			out[x] = r / cfg->loss_scale;
		else
			out[x] = ldexp(r, -R->shift);
	}

	{	/* flags into st (the report gathers the same counts) */
		unsigned fl = 0;
		for (t = 0; t < FPL_MAX_THREADS; t++) {
			fl |= R->t[t].fl;
			for (k = 0; k < FPL_NFLAGS; k++)
				st->count[k] += R->t[t].cnt[k];
		}
		st->flags |= fl;
	}
	if (rep)
		finish_report(rep, R, &S, per, threads);
	st->counter++;
out:
	if (R) {
		free(R->buf);
		free(R->node);
		free(R->u);
		free(R->off);
		free(R->t);
		free(R);
	}
	free(per);
	fpl_ar_schedule_release(&S);
	return rc;
}
