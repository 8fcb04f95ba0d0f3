/* SPDX-License-Identifier: MIT */
/*
 * fplab/hist.h - how the values of a tensor fare when cast to a format:
 * class counts, cast error, the exponent histogram and suggested scales.
 *
 * Use: fpl_hist_init() with a configuration; if fpl_hist_needs_scan()
 * (APS scaling), stream the tensor once through fpl_hist_scan*(); stream
 * it through fpl_hist_add*(); fpl_hist_finish(); read the fields;
 * fpl_hist_release().  Several tensors add up with fpl_hist_merge().
 * The library never prints; the command `fplab hist` formats the results.
 *
 * Classification of one input value x (after the scale s of the
 * configuration: v = x*s, rounded as y = round(v) with the format, mode
 * and state of the configuration):
 *   zeros        x == +-0
 *   nan_inf      x is NaN or infinite
 *   became_zero  x finite nonzero and y == +-0 (rounded or flushed to zero;
 *                not the IEEE underflow flag, which is in events[])
 *   subnormal    0 < |y| < min_normal (precision lost to gradual underflow)
 *   normal       y finite with |y| >= min_normal and the cast did not overflow
 *   overflow     the cast overflowed (the engine's overflow flag: y is inf,
 *                NaN, or +-max when saturating)
 * so count = zeros + nan_inf + became_zero + subnormal + normal + overflow.
 * A scaled value binary64 cannot hold (x*s beyond its range, or below its
 * smallest subnormal) is cast exactly from the product x*s, as are the
 * numbers of fpl_hist_add_exact, so every cast goes through the engine.
 *
 * Events: events[i] counts the casts that raised the engine's flag of
 * index i (as fpl_state.count: FPL_FLAG_INEXACT is index 0, UNDERFLOW 1,
 * the IEEE flag, tiny and inexact, OVERFLOW 2, ..., FLUSHED 6); zeros and
 * NaN/inf inputs take part (a NaN or inf may raise invalid or saturated).
 * events[2] (overflow) equals the overflow class.
 *
 * Errors of the cast, v the scaled value presented to the format:
 * relative |y - v| / |v| over finite nonzero v whose y is finite (a value
 * that became zero counts as 1, saturation as its actual error), and
 * absolute |y - v| over finite v (zeros included) whose y is finite;
 * their max, sum and sum of squares (mean = sum/n, RMS = sqrt(sumsq/n)).
 */
#ifndef FPLAB_HIST_H
#define FPLAB_HIST_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/number.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exponent bins: floor(log2 |v|) for every finite nonzero binary64 v. */
#define FPL_HIST_EMIN (-1074)
#define FPL_HIST_EMAX 1023
#define FPL_HIST_NBINS (FPL_HIST_EMAX - FPL_HIST_EMIN + 1)

typedef enum fpl_hist_scaling {
	FPL_HSCALE_FIXED = 0,	/* multiply by cfg.scale (1: no scaling) */
	FPL_HSCALE_APS,		/* per tensor 2^k, the largest k whose cast of max|x| does
				 * not overflow (APS paper, sec. 3.3); needs a scan pass */
	FPL_HSCALE_MX		/* OCP MX v1.0: blocks of cfg.mx_block consecutive values
				 * share the scale X = 2^(floor(log2 amax) - emax), clamped to
				 * e8m0's 2^-127..2^127; elements are cast as x/X */
} fpl_hist_scaling;

typedef struct fpl_hist_config {
	fpl_format fmt;		/* finished target format */
	fpl_rnd rnd;
	fpl_state st;		/* seed, stream, sr_bits, threads; copied, counter from 0 */
	fpl_hist_scaling scaling;
	double scale;		/* FPL_HSCALE_FIXED: the multiplier (scale x loss scale), > 0 */
	int mx_block;		/* FPL_HSCALE_MX: block size, 1..4096 (32 in OCP MX) */
} fpl_hist_config;

/* Defaults: the given format, ne, seed 0, scale 1, mx_block 32. */
FPL_API void fpl_hist_config_init(fpl_hist_config *cfg, const fpl_format *fmt);

typedef struct fpl_hist {
	/* counts of input values (see the classification above) */
	uint64_t count, zeros, nan_inf, became_zero, subnormal, normal, overflow;
	/* the engine's event counts of the casts, indexed like fpl_state.count
	 * (set by fpl_hist_finish) */
	uint64_t events[FPL_NFLAGS];
	/* relative error of the cast */
	uint64_t err_n;
	double err_max, err_sum, err_sumsq;	/* mean = sum/n, RMS = sqrt(sumsq/n) */
	/* absolute error of the cast */
	uint64_t abs_n;
	double abs_max, abs_sum, abs_sumsq;
	/* input (unscaled) extremes over finite nonzero values; amin = inf when none */
	double amax, amin;
	/* the scale used: FIXED: cfg.scale; APS: 2^scale_log2; MX: per block
	 * (scale_varies = 1, and mx_blocks blocks); merged totals whose parts
	 * differ also set scale_varies */
	double scale;
	int scale_log2;		/* log2(scale) when scale is a power of two, else 0 */
	int scale_pow2;		/* 1 when scale is a power of two */
	int scale_varies;
	uint64_t mx_blocks;
	/* exponent histograms: hist[e - FPL_HIST_EMIN] counts values with
	 * floor(log2 |v|) == e, v the scaled value presented to the format;
	 * hist_in the same for the unscaled input x.  lo..hi (and in_lo..in_hi)
	 * bound the nonempty bins; lo > hi when all are empty. */
	uint64_t hist[FPL_HIST_NBINS];
	uint64_t hist_in[FPL_HIST_NBINS];
	int lo, hi, in_lo, in_hi;
	/* the format's range, as exponents: min subnormal, min normal, max
	 * binade (emax); and max itself */
	int e_minsub, e_minnorm, e_max;
	/* suggested power-of-two scales 2^k for this data (unscaled input):
	 * aps_k: the largest k for which max|x| * 2^k does not overflow
	 *        (0 when there is no finite nonzero value);
	 * best_k: the k minimising the estimated values lost to zero plus
	 *        overflow, from hist_in by binades (a value counts as lost to
	 *        zero when its binade lies wholly below half the min subnormal,
	 *        as overflow when it lies above emax); among ties the one nearest the middle of the
	 *        tied range; best_loss is that estimate. */
	int aps_k, best_k;
	uint64_t best_loss;

	/* private */
	fpl_hist_config cfg;
	int scanned, finished;
	double *xs, *y, *mxbuf;
	int *mxk;		/* MX: per block of the chunk, log2 of 1/X */
	fpl_inexact *mxinx;	/* MX: inexact numbers gathered with mxbuf */
	size_t mxninx, mxcapinx;
	float *xf, *yf;
	size_t mxfill;
	uint64_t ovf_direct;	/* overflows seen bit-level (non-finite y) */
	fpl_inexact *wide;	/* scratch: the exact numbers of one chunk */
	size_t capwide;
} fpl_hist;

/* Set up (allocates scratch).  Returns 0, FPL_EINVAL (bad scale, block
 * size, mode) or FPL_ENOMEM. */
FPL_API int fpl_hist_init(fpl_hist *h, const fpl_hist_config *cfg);
/* Free the scratch (the results stay readable). */
FPL_API void fpl_hist_release(fpl_hist *h);

/* 1 when the data must be scanned (fpl_hist_scan*) before fpl_hist_add*. */
FPL_API int fpl_hist_needs_scan(const fpl_hist *h);
/* First pass (APS): note the extremes of x. */
FPL_API void fpl_hist_scan(fpl_hist *h, const double *x, size_t n);
FPL_API void fpl_hist_scan_f32(fpl_hist *h, const float *x, size_t n);

/*
 * Classify n more values.  The f32 variant is the fast path (plain or APS
 * scaling with a format that fits binary32); it is exact for any input
 * that is a binary32 value.  Returns 0 or an engine status.
 */
FPL_API int fpl_hist_add(fpl_hist *h, const double *x, size_t n);
FPL_API int fpl_hist_add_f32(fpl_hist *h, const float *x, size_t n);

/*
 * fpl_hist_add for values read from text: x[ix[k].pos] is the nearest
 * binary64 of the number ix[k].w, which binary64 cannot hold (0.1, 1e-400,
 * 1e400, fplab/number.h); those numbers are scaled and cast exactly, each
 * rounded once, binned by their own binade (numbers beyond binary64's
 * range in the end bins) and their error measured against themselves
 * (the absolute error as the relative error times the number's nearest
 * binary64, which is within a rounding of |y - v|), so
 * that `hist` and `round` agree on every input.  The APS and MX scales
 * are chosen from the binary64 values.  ix sorted by pos, each pos < n.
 * Returns 0, FPL_EINVAL or an engine status.
 */
FPL_API int fpl_hist_add_exact(fpl_hist *h, const double *x, size_t n,
			       const fpl_inexact *ix, size_t nix);

/* Flush a partial MX block, settle the counts, events, bins and
 * suggestions. */
FPL_API int fpl_hist_finish(fpl_hist *h);

/* Add the counts, errors and histograms of `part` (finished) to `total`
 * (initialised with fpl_hist_init or zeroed by a previous merge), then
 * recompute total's suggestions. */
FPL_API void fpl_hist_merge(fpl_hist *total, const fpl_hist *part);

/* The APS exponent for data whose largest magnitude is amax: the largest
 * k such that +-amax*2^k cast to f in mode rnd does not overflow. */
FPL_API int fpl_hist_aps_k(const fpl_format *f, fpl_rnd rnd, double amax);

#ifdef __cplusplus
}
#endif
#endif
