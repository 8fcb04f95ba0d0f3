/* SPDX-License-Identifier: MIT */
/*
 * block_f32.c - fpl_block_round_f32: block quantization of binary32
 * tensors (fplab/block.h), by a vector kernel in one pass per block
 * (x86/block_f32_avx512.c, x86/block_f32_avx2.c) where one applies, and
 * otherwise by the binary64 path on the widened values.
 *
 * The contract is the binary64 one on the exact binary64 images of the
 * inputs, with y_j the dequantized value rounded once to binary32
 * (nearest-even).  Widening a binary32 is exact, so the reference path
 * widens, calls fpl_block_round and narrows; a kernel must give the same
 * bits, flags, counts and events (the kernels' headers say why they do).
 *
 * When a kernel applies: 1-D blocks of consecutive elements (along the
 * last axis, or one block per row), nearest-even or sp element rounding,
 * no soft errors, an element format of at most 10 stored mantissa bits
 * and a small exponent range with gradual underflow, saturation, no DAZ
 * and no fnuz or e8m0 specials (every named element format), and either a
 * power-of-two rule with exact quotients, or the amax rule (with or
 * without a tensor scale, exact or q32) into a scale format of at most 10
 * mantissa bits with subnormals (NVFP4's e4m3fn).  The
 * kernel is picked by the kernel set in use (FPLAB_KERNELS): avx512,
 * avx2, or none (ref).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_f32.h"
#include "block/block_internal.h"
#include "engine/internal.h"
#include "kernels/kernels_internal.h"
#include "util/parallel.h"
#include "util/scratch.h"

uint64_t fpl__bq_fast_runs;
int fpl__bq_force_redo;

static int elem_ok(const fpl_format *e)
{
	return e->subnormal == FPL_SUB_YES && !e->daz && e->overflow == FPL_OVF_SATURATE
	       && (e->specials == FPL_SPEC_IEEE || e->specials == FPL_SPEC_FN
		   || e->specials == FPL_SPEC_NONE)
	       && e->m <= 10 && e->emin >= -60 && e->emax <= 60;
}

static fpl__bq_kernel pick_kernel(void)
{
#ifdef FPL_HAVE_X86_KERNELS
	const fpl_kernels *k = fpl__kernels();

	if (k && !strcmp(k->name, "avx512"))
		return fpl__bq_avx512;
	if (k && !strcmp(k->name, "avx2"))
		return fpl__bq_avx2;
#endif
	return NULL;
}

static int applicable(const fpl_block_format *b, const fpl__blk_view *v, fpl_rnd rnd,
		      const fpl_state *st)
{
	if (v->tc != 1 || v->C != 1 || v->n == 0)
		return 0;
	if ((rnd != FPL_RND_NE && rnd != FPL_RND_SP)
	    || (st->flip != FPL_FLIP_NONE && st->flip_prob > 0))
		return 0;
	if (!elem_ok(&b->elem))
		return 0;
	if (b->rule == FPL_BRULE_AMAX)
		return b->scale.subnormal == FPL_SUB_YES && !b->scale.daz && b->scale.m <= 10
		       && b->scale.specials != FPL_SPEC_E8M0 && b->elem.m <= 3 && b->elem.emax <= 8
		       && b->scale.max <= 0x1p200 && b->scale.min_subnormal >= 0x1p-200;
	return !b->tensor_scale && b->quot == FPL_BQUOT_EXACT;
}

/* The tensor scale s, as block_quant.c's tensor_scale on the widened
 * values: amax over the finite elements / (max_scale * max_e). */
static double tensor_scale(const fpl_block_format *b, const float *x, size_t n,
			   fpl_block_stats *stats, fpl__bq_kernel kern)
{
	fpl_format fp32;
	fpl_state z;
	uint32_t umax = 0;
	unsigned fl = 0;
	double t;
	size_t j;

#ifdef FPL_HAVE_X86_KERNELS
	if (kern == fpl__bq_avx512)
		umax = fpl__bq_finite_umax_avx512(x, n);
	else if (kern == fpl__bq_avx2)
		umax = fpl__bq_finite_umax_avx2(x, n);
	else
#endif
		for (j = 0; j < n; j++) {
			uint32_t u;

			memcpy(&u, x + j, 4);
			u &= 0x7fffffffu;
			umax = u < 0x7f800000u && u > umax ? u : umax;
		}
	(void)kern;
	if (umax == 0)
		return 1;
	if (fpl_format_lookup(&fp32, "fp32"))
		return 1;
	fp32.overflow = FPL_OVF_SATURATE;
	fpl_format_finish(&fp32);
	fpl_state_init(&z, 0);
	{
		float a;

		memcpy(&a, &umax, 4);
		t = fpl__div_ix(&fp32, a, b->scale.max * b->elem.max, FPL_RND_NE, &z, 0, &fl);
	}
	if ((fl & FPL_FLAG_SATURATED) || !(t >= fp32.min_subnormal)) {
		stats->scale_range++;
		t = t > 1 ? fp32.max : fp32.min_subnormal;
	}
	return t;
}

void fpl__bq_block_scalar(const fpl__bq *p, float *y, const float *x, size_t lo, size_t hi,
			  double X, float amax, fpl__bq_acc *a)
{
	const double D = X * p->s;
	int amax_sat = 0;
	size_t j;

	for (j = lo; j < hi; j++) {
		double xv = x[j], r;
		unsigned fl = 0;

		if (p->q32)
			r = fpl__round_ix(p->elem, (double)((float)xv / (float)D), p->rnd, p->st,
					  p->c0 + j, &fl);
		else
			r = fpl__div_ix(p->elem, xv, D, p->rnd, p->st, p->c0 + j, &fl);
		if (fl & FPL_FLAG_SATURATED) {
			a->s.saturated++;
			amax_sat |= fabs(xv) == (double)amax;
		}
		a->s.flushed += xv != 0 && r == 0;
		while (fl) {
			a->count[__builtin_ctz(fl)]++;
			fl &= fl - 1;
		}
		y[j] = (float)(r * D);
	}
	a->s.amax_saturated += (uint64_t)amax_sat;
}

typedef struct job {
	const fpl__bq *p;
	fpl__bq_kernel kern;
	float *y;
	const float *x;
	size_t nblocks;
	int t, threads;
	fpl__bq_acc a;
} job;

static void *run(void *arg)
{
	job *jb = arg;
	size_t lo, hi;

	fpl__spawn_share(jb->nblocks, jb->threads, jb->t, &lo, &hi);
	if (lo < hi)
		jb->kern(jb->p, jb->y, jb->x, lo, hi, &jb->a);
	return NULL;
}

static int fast(const fpl_block_format *b, float *y, const float *x, const fpl__blk_view *v,
		fpl_rnd rnd, fpl_state *st, fpl_block_stats *stats, fpl__bq_kernel kern)
{
	job jobs[FPL_MAX_THREADS];
	fpl__bq p;
	int threads, t, i;
	double mx = b->elem.max, sm;
	int em;

	memset(&p, 0, sizeof p);
	p.R = v->R;
	p.tr = v->tr;
	p.nbr = v->nbr;
	p.c0 = st->counter;
	p.key = fpl__draw_key(st->seed, st->stream);
	p.sp = rnd == FPL_RND_SP;
	p.rmask = p.sp ? 0xffffffffu << (32 - st->sr_bits) : 0;
	p.m = b->elem.m;
	p.emin = b->elem.emin;
	p.emax = b->elem.emax;
	p.tiny_before = b->elem.tininess == FPL_TINY_BEFORE;
	p.maxe = (float)mx;
	sm = frexp(mx, &em);
	p.smax = (uint32_t)ldexp(sm, 24);
	p.rule = b->rule;
	p.kmin = ilogb(b->scale.min_subnormal);
	p.kmax = b->scale.emax;
	p.amax = b->rule == FPL_BRULE_AMAX;
	p.q32 = b->quot == FPL_BQUOT_FP32;
	p.s = b->tensor_scale ? tensor_scale(b, x, v->n, stats, kern) : 1.0;
	p.dv = mx * p.s;
	p.sm = b->scale.m;
	p.semin = b->scale.emin;
	p.smaxv = b->scale.max;
	p.sminv = b->scale.min_subnormal;
	p.elem = &b->elem;
	p.st = st;
	p.rnd = rnd;

	threads = fpl__spawn_threads(st->threads, v->nblocks, (double)v->n, 65536.0);
	memset(jobs, 0, sizeof jobs);
	for (t = 0; t < threads; t++) {
		jobs[t].p = &p;
		jobs[t].kern = kern;
		jobs[t].y = y;
		jobs[t].x = x;
		jobs[t].nblocks = v->nblocks;
		jobs[t].t = t;
		jobs[t].threads = threads;
	}
	fpl__spawn(run, jobs, sizeof jobs[0], threads);
	for (t = 0; t < threads; t++) {
		const fpl__bq_acc *a = &jobs[t].a;

		fpl_block_stats_add(stats, &a->s);
		for (i = 0; i < FPL_NFLAGS; i++) {
			st->count[i] += a->count[i];
			if (a->count[i])
				st->flags |= 1u << i;
		}
	}
	st->counter += v->n;
	__atomic_fetch_add(&fpl__bq_fast_runs, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Where no kernel applies: widen, the binary64 path, narrow. */
int fpl__block_round_f32_ref(const fpl_block_format *b, float *y, const float *x,
			     const size_t *dims, int ndims, fpl_rnd rnd, fpl_state *st,
			     fpl_block_stats *stats)
{
	fpl__blk_view v;
	double *w;
	size_t j;
	int rc;

	if (!b || fpl__blk_view_of(b, dims, ndims, &v, NULL, NULL))
		return FPL_EINVAL;
	if (v.n && (!x || !y))
		return FPL_EINVAL;
	w = malloc((v.n ? v.n : 1) * sizeof *w);
	if (!w)
		return FPL_ENOMEM;
	for (j = 0; j < v.n; j++)
		w[j] = x[j];
	rc = fpl_block_round(b, w, w, dims, ndims, rnd, st, stats);
	if (!rc)
		for (j = 0; j < v.n; j++)
			y[j] = (float)w[j];
	free(w);
	return rc;
}

int fpl_block_round_f32(const fpl_block_format *b, float *y, const float *x, const size_t *dims,
			int ndims, fpl_rnd rnd, fpl_state *st, fpl_block_stats *stats)
{
	fpl__blk_view v;
	fpl_block_stats local;
	fpl__bq_kernel kern;

	if (!b || fpl__blk_view_of(b, dims, ndims, &v, NULL, NULL))
		return FPL_EINVAL;
	if (v.n && (!x || !y))
		return FPL_EINVAL;
	if ((unsigned)rnd >= FPL_RND_COUNT || !st
	    || (rnd == FPL_RND_SP && (st->sr_bits < 1 || st->sr_bits > 32)))
		return FPL_EINVAL;
	if (!stats) {
		fpl_block_stats_init(&local);
		stats = &local;
	}
	kern = pick_kernel();
	if (kern && applicable(b, &v, rnd, st))
		return fast(b, y, x, &v, rnd, st, stats, kern);
	return fpl__block_round_f32_ref(b, y, x, dims, ndims, rnd, st, stats);
}
