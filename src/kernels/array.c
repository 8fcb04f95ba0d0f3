/* SPDX-License-Identifier: MIT */
/*
 * array.c - the array driver: element-wise operations over blocks, split
 * across threads, fast kernels first and the scalar engine for the lanes
 * they mark.
 *
 * Why the array results equal the scalar ones bit for bit:
 *  - a lane the kernel does not mark is in the normal range of the
 *    format, not NaN/inf, and (for operations) has operands in
 *    [2^-450, 2^450] or zero; there the kernel's rounding is the same
 *    fixed-point rounding as fpl__round_unp's (kernel_body.h), and the
 *    operation's exact-to-odd intermediate rounds like the exact value
 *    (p <= 51, and p + R <= 52 for sp);
 *  - every other lane is recomputed by the scalar engine from the
 *    original operands with the same draw index idx0 + j;
 *  - blocks are written through a scratch buffer, so y may alias x.
 * Plain rounding, when the kernel set has a direct kernel (AVX-512:
 * x86/round_direct.c; AVX2: x86/round_direct_avx2.c), skips the blocks:
 * the kernel reads x and writes z in registers and calls back into the
 * scalar engine for the lanes it cannot do, with the same index, before
 * it stores their vector (the same obligations, argued in that file).
 * Random draws depend only on the element index, never on the thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "util/parallel.h"

#define BLOCK 512
#define FLAG_INDEX(fl) __builtin_ctz(fl)	/* st->count[] index of a flag */
#define STREAM_MIN (1u << 20)	/* 8 MiB of output: beyond the caches
					 * (non-temporal where the CPU gains:
					 * fpl__cpu_stream_stores) */

typedef struct job {
	const fpl_format *f;
	fpl_rnd rnd;
	const fpl_state *st;
	const fpl_kernels *k;
	fpl_kparams kp;
	int fast;
	int stream;		/* large output: the set's streaming store */
	int op;			/* FPL_KOP_* or ARR_* */
	const fpl_format *from;	/* ARR_CONVERT: the source format (with DAZ) */
	double *z;
	const double *a, *b, *c;
	const float *xf;	/* binary32 round: input and output instead of a, z */
	float *yf;
	uint64_t idx0;
	uint64_t counts[FPL_MAX_THREADS][FPL_NFLAGS];
} job;

/* The scalar engine on element j; `x` replaces a[j] when not NULL: the
 * binary32 path widens its block first, and a conversion reads its block
 * through the source format's DAZ, after which it is a plain rounding. */
static double scalar(const job *J, size_t j, const double *x, unsigned *fl)
{
	const fpl_format *f = J->f;
	uint64_t idx = J->idx0 + j;
	double a = x ? *x : J->a[j];

	switch (J->op) {
	case FPL_KOP_ADD: return fpl__add_ix(f, a, J->b[j], J->rnd, J->st, idx, fl);
	case FPL_KOP_SUB: return fpl__add_ix(f, a, fpl__neg_num(J->b[j]), J->rnd, J->st, idx, fl);
	case FPL_KOP_MUL: return fpl__mul_ix(f, a, J->b[j], J->rnd, J->st, idx, fl);
	case FPL_KOP_DIV: return fpl__div_ix(f, a, J->b[j], J->rnd, J->st, idx, fl);
	case FPL_KOP_SQRT: return fpl__sqrt_ix(f, a, J->rnd, J->st, idx, fl);
	case FPL_KOP_FMA: return fpl__fma_ix(f, a, J->b[j], J->c[j], J->rnd, J->st, idx, fl);
	case ARR_MIN: return fpl__minmax_ix(f, a, J->b[j], -1, J->rnd, J->st, idx, fl);
	case ARR_MAX: return fpl__minmax_ix(f, a, J->b[j], 1, J->rnd, J->st, idx, fl);
	default: return fpl__round_ix(f, a, J->rnd, J->st, idx, fl);
	}
}

static void count(uint64_t *cnt, unsigned fl)
{
	while (fl) {
		cnt[__builtin_ctz(fl)]++;
		fl &= fl - 1;
	}
}

/* binary32 to binary64 by the bits, so that a signaling NaN stays
 * signaling (the hardware conversion quiets it and the engine would not
 * see the invalid operand). */
static void widen(double *d, const float *x, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++) {
		uint32_t b;
		memcpy(&b, &x[i], sizeof b);
		d[i] = (double)x[i];
		if ((b & 0x7fffffffu) > 0x7f800000u)
			d[i] = fpl__from_bits(((uint64_t)(b >> 31) << 63) | FPL__EXP_MASK
					      | ((uint64_t)(b & 0x7fffffu) << 29));
	}
}

/* Results are values of f, which fits in binary32 (fits_f32): exact. */
static void narrow(float *y, const double *d, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		y[i] = (float)d[i];
}

/* Plain rounding of a binary64 array by a set's direct kernel: results
 * go straight to z, the kernel calls back for the lanes it leaves. */
typedef struct direct_ctx {
	const job *J;
	size_t lo;
	uint64_t *cnt;
} direct_ctx;

/* x is the kernel's copy of the input; binary32 arrays are widened again
 * here by the bits, since the kernel's widening quiets signaling NaNs. */
static double direct_slow(void *ctx, size_t j, double x)
{
	const direct_ctx *d = ctx;
	unsigned fl = 0;
	double r;

	if (d->J->xf)
		widen(&x, d->J->xf + d->lo + j, 1);
	r = scalar(d->J, d->lo + j, &x, &fl);
	count(d->cnt, fl);
	return r;
}

static void range_direct(const job *J, size_t lo, size_t hi, uint64_t *cnt)
{
	direct_ctx d = { J, lo, cnt };
	fpl_kcounts kc;

	if (J->xf)
		J->k->round_direct(&J->kp, J->yf + lo, J->xf + lo, 1, hi - lo, J->idx0 + lo,
				   J->stream, direct_slow, &d, &kc);
	else
		J->k->round_direct(&J->kp, J->z + lo, J->a + lo, 0, hi - lo, J->idx0 + lo,
				   J->stream, direct_slow, &d, &kc);
	cnt[FLAG_INDEX(FPL_FLAG_INEXACT)] += kc.inexact;
	cnt[FLAG_INDEX(FPL_FLAG_UNDERFLOW)] += kc.underflow;
	cnt[FLAG_INDEX(FPL_FLAG_OVERFLOW)] += kc.overflow;
	cnt[FLAG_INDEX(FPL_FLAG_SATURATED)] += kc.saturated;
}

static void range(void *ctx, size_t lo, size_t hi, int t)
{
	job *J = ctx;
	uint64_t *cnt = J->counts[t];
	double tmp[BLOCK], odd[BLOCK], in[BLOCK];
	uint64_t spc[BLOCK];
	size_t j, i, nb;
	int sub = 0;

	if (J->fast && J->op == ARR_ROUND && J->k->round_direct) {
		range_direct(J, lo, hi, cnt);
		return;
	}
	for (j = lo; j < hi; j += nb) {
		const double *src;
		nb = hi - j < BLOCK ? hi - j : BLOCK;
		if (J->xf) {
			widen(in, J->xf + j, nb);
			src = in;
		} else if (J->op == ARR_CONVERT) {
			for (i = 0; i < nb; i++)
				in[i] = fpl__daz(J->from, J->a[j + i]);
			src = in;
		} else {
			src = J->a + j;
		}
		if (!J->fast) {
			for (i = 0; i < nb; i++) {
				unsigned fl = 0;
				tmp[i] = scalar(J, j + i, src == in ? &in[i] : NULL, &fl);
				count(cnt, fl);
			}
		} else {
			fpl_kcounts kc;
			size_t nspc;
			int arith = J->op < FPL_KOP_COUNT;
			if (arith) {
				J->k->odd[J->op](&J->kp, odd, J->a + j, J->b ? J->b + j : NULL,
						 J->c ? J->c + j : NULL, nb, spc);
				src = odd;
			}
			/* Blocks with tiny values take the variant that handles
			 * gradual underflow; the choice follows the previous block
			 * (the results are the same either way). */
			J->k->round(&J->kp, tmp, src, nb, spc, arith, sub, J->idx0 + j, &kc);
			if (!sub && kc.tiny && J->kp.sub_fast) {
				sub = 1;
				J->k->round(&J->kp, tmp, src, nb, spc, 1, 1, J->idx0 + j, &kc);
			} else if (sub && !kc.tiny) {
				sub = 0;
			}
			cnt[FLAG_INDEX(FPL_FLAG_INEXACT)] += kc.inexact;
			cnt[FLAG_INDEX(FPL_FLAG_UNDERFLOW)] += kc.underflow;
			nspc = kc.special;
			for (i = 0; nspc && i < nb; i++) {
				if (spc[i]) {
					unsigned fl = 0;
					nspc--;
					tmp[i] = scalar(J, j + i, src == in ? &in[i] : NULL, &fl);
					count(cnt, fl);
				}
			}
		}
		if (J->yf)
			narrow(J->yf + j, tmp, nb);
		else if (J->stream)
			J->k->store_stream(J->z + j, tmp, nb);
		else
			memcpy(J->z + j, tmp, nb * sizeof *tmp);
	}
}

static uint64_t bits_of(double x)
{
	return fpl__bits(x);
}

/* Can the kernels do this call?  See the header comment for why each
 * condition is needed. */
static int fast_ok(const fpl_format *f, int op, fpl_rnd rnd, const fpl_state *st)
{
	if (st->flip != FPL_FLIP_NONE && st->flip_prob > 0)
		return 0;
	if (f->specials == FPL_SPEC_E8M0 || f->emax < f->emin || f->m > 51)
		return 0;
	if (op == ARR_ROUND || op == ARR_CONVERT)
		return 1;
	if (op == ARR_MIN || op == ARR_MAX)
		return 0;
	if (f->m > 50 || f->e > 9 || !f->explim)
		return 0;
	if (rnd == FPL_RND_SP && f->m + 1 + st->sr_bits > 52)
		return 0;
	return 1;
}

static int run(const fpl_format *f, const fpl_format *from, int op, double *z,
	       const double *a, const double *b, const double *c, float *yf, const float *xf,
	       size_t n, fpl_rnd rnd, fpl_state *st);

int fpl__array_run(const fpl_format *f, int op, double *z, const double *a, const double *b,
		   const double *c, size_t n, fpl_rnd rnd, fpl_state *st)
{
	return run(f, NULL, op, z, a, b, c, NULL, NULL, n, rnd, st);
}

static int run(const fpl_format *f, const fpl_format *from, int op, double *z,
	       const double *a, const double *b, const double *c, float *yf, const float *xf,
	       size_t n, fpl_rnd rnd, fpl_state *st)
{
	int unary = op == ARR_ROUND || op == ARR_CONVERT || op == FPL_KOP_SQRT;
	job *J;
	int t, i, threads;

	if (!f || !st || (unsigned)rnd >= FPL_RND_COUNT)
		return FPL_EINVAL;
	if (n == 0)
		return 0;
	if (xf ? !yf : (!z || !a || (!unary && !b) || (op == FPL_KOP_FMA && !c)))
		return FPL_EINVAL;
	if (rnd == FPL_RND_SP && (st->sr_bits < 1 || st->sr_bits > 32))
		return FPL_EINVAL;
	J = calloc(1, sizeof *J);
	if (!J)
		return FPL_ENOMEM;
	J->f = f;
	J->rnd = rnd;
	J->st = st;
	{
		int ks;	/* table and status from one selection record */
		J->k = fpl__kernels_get(&ks);
		if (!J->k || ks) {
			free(J);
			return ks ? ks : FPL_EINVAL;
		}
	}
	J->op = op;
	J->from = from;
	J->z = z;
	J->a = a;
	J->b = b;
	J->c = c;
	J->xf = xf;
	J->yf = yf;
	J->idx0 = st->counter;
	J->fast = fast_ok(f, op, rnd, st);
	J->stream = n >= STREAM_MIN && fpl__cpu_stream_stores();
	J->kp.rnd = rnd;
	J->kp.s = (uint64_t)(52 - f->m);
	/* only sp reads sr_bits (checked above); other modes must not let a
	 * stray value overflow the deep-underflow arithmetic below */
	int R = rnd == FPL_RND_SP ? st->sr_bits : 32;
	J->kp.sr_bits = (uint64_t)R;
	J->kp.zero_special = f->specials == FPL_SPEC_FNUZ;
	J->kp.sub_fast = f->subnormal == FPL_SUB_YES;
	J->kp.tiny_before = f->tininess == FPL_TINY_BEFORE;
	J->kp.emin_b = (uint64_t)(f->emin + 1023);
	J->kp.qsub_bits = bits_of(ldexp(1.0, f->emin - f->m));
	J->kp.deep_ok = R + f->m - f->emin <= 1023;
	J->kp.deep_scale = J->kp.deep_ok ? ldexp(1.0, R + f->m - f->emin) : 0;
	J->kp.min_bits = bits_of(f->min_normal);
	J->kp.max_bits = bits_of(f->max);
	J->kp.key = fpl__draw_key(st->seed, st->stream);
	J->kp.lo_bits = bits_of(f->daz && f->min_normal > 0x1p-450 ? f->min_normal : 0x1p-450);
	J->kp.hi_bits = bits_of(0x1p450);
	/* round_pack.c's overflow(): saturation, else inf, else NaN */
	J->kp.ovf_sat = (uint64_t)fpl__saturates(f);
	for (i = 0; i < 2; i++)
		J->kp.ovf_bits[i] = bits_of(fpl__saturates(f) ? (i ? -f->max : f->max)
					    : fpl__has_inf(f) ? (i ? -INFINITY : INFINITY)
					    : fpl__nan_signed(f, i));

	threads = st->threads < 1 ? 1 : st->threads;
	fpl__parallel(n, threads, range, J);

	for (t = 0; t < FPL_MAX_THREADS; t++)
		for (i = 0; i < FPL_NFLAGS; i++) {
			st->count[i] += J->counts[t][i];
			if (J->counts[t][i])
				st->flags |= 1u << i;
		}
	st->counter += n;
	free(J);
	return 0;
}

int fpl_round_array(const fpl_format *f, double *y, const double *x, size_t n, fpl_rnd rnd,
		    fpl_state *st)
{
	return fpl__array_run(f, ARR_ROUND, y, x, NULL, NULL, n, rnd, st);
}

/* fpl_convert is fpl_round of DAZ(from, x): without DAZ a plain rounding
 * (and the direct kernels), with it the blocks read x through DAZ. */
int fpl_convert_array(const fpl_format *to, const fpl_format *from, double *y, const double *x,
		      size_t n, fpl_rnd rnd, fpl_state *st)
{
	if (!from)
		return FPL_EINVAL;
	if (!from->daz)
		return fpl__array_run(to, ARR_ROUND, y, x, NULL, NULL, n, rnd, st);
	return run(to, from, ARR_CONVERT, y, x, NULL, NULL, NULL, NULL, n, rnd, st);
}

/* Does every value of f fit in binary32? */
static int fits_f32(const fpl_format *f)
{
	return f->explim && f->m <= 23 && f->emax <= 127 && f->emin >= -126
	       && f->emin - f->m >= -149;
}

int fpl_round_array_f32(const fpl_format *f, float *y, const float *x, size_t n, fpl_rnd rnd,
			fpl_state *st)
{
	if (!f || !st)
		return FPL_EINVAL;
	if (!fits_f32(f))
		return FPL_EFORMAT;
	return run(f, NULL, ARR_ROUND, NULL, NULL, NULL, NULL, y, x, n, rnd, st);
}

int fpl_encode_array(const fpl_format *f, uint64_t *codes, const double *x, size_t n)
{
	size_t j;

	if (!f || (n && (!codes || !x)))
		return FPL_EINVAL;
	for (j = 0; j < n; j++)
		codes[j] = fpl_encode(f, x[j]);
	return 0;
}

int fpl_decode_array(const fpl_format *f, double *x, const uint64_t *codes, size_t n)
{
	size_t j;
	uint64_t limit;

	if (!f || (n && (!codes || !x)))
		return FPL_EINVAL;
	limit = f->nbits >= 64 ? ~0ull : (1ull << f->nbits) - 1;
	for (j = 0; j < n; j++)
		if (codes[j] > limit)
			return FPL_ERANGE;
	for (j = 0; j < n; j++)
		x[j] = fpl_decode(f, codes[j]);
	return 0;
}
