/* SPDX-License-Identifier: MIT */
/*
 * src/hist/hist_internal.h - shared pieces of the histogram library.
 *
 * Invariant: scratch arrays hold HIST_CHUNK elements (xf and yf
 * HIST_F32_CHUNK); every engine call works on at most that many values.
 */
#ifndef FPLAB_HIST_INTERNAL_H
#define FPLAB_HIST_INTERNAL_H

#include <fplab/hist.h>

#define HIST_CHUNK 8192
#define HIST_F32_CHUNK 65536	/* h->xf and h->yf: 256 KiB each, in L2 */
#define HIST_MX_MAX 4096

/* Classify values (see fplab/hist.h) after the cast; x unscaled input,
 * v = scaled value, y = cast of v. */
void hist_classify_f64(fpl_hist *h, const double *x, const double *v, const double *y,
		       size_t n);
/* The same in binary32 with v = x * 2^k exactly (k = h->scale_log2):
 * the portable loop (classify.c). */
void hist_classify_f32(fpl_hist *h, const float *v, const float *y, size_t n);

#ifdef FPL_HAVE_X86_KERNELS
/* The same with AVX2 and FMA (x86/classify_avx2.c): call only when
 * fpl_cpu()->avx2 and ->fma.  Counts, bins, extremes and maxima are
 * bit-identical to hist_classify_f32; the four sums differ by summation
 * order only (binary32 per block of 1024 for the relative error, binary64
 * for the absolute error, as there). */
void hist_classify_f32_avx2(fpl_hist *h, const float *v, const float *y, size_t n);
/* fpl_hist_add_f32's fast path with it where hist_cast_setup allows the
 * cast in the lanes (x86/classify_avx2.c): as hist_add_f32_avx512 with
 * that cast; returns 1 (nothing done) where it does not allow it. */
int hist_add_f32_avx2(fpl_hist *h, const float *x, size_t n);
/* The same with AVX-512 F/BW/DQ/VL (x86/classify_avx512.c): call only
 * when fpl_cpu() has them and ->fma.  Same guarantees as the AVX2 loop:
 * counts, bins, extremes and maxima bit-identical to hist_classify_f32,
 * the sums differ by summation order only. */
void hist_classify_f32_avx512(fpl_hist *h, const float *v, const float *y, size_t n);
/* The whole of fpl_hist_add_f32's fast path with it, for x[0..n) where
 * hist.c's f32_ok holds: scale by 2^k, cast with h's format, mode and
 * state and classify, the exponent tables and accumulators kept over all
 * n and added to h once.  The cast is done in the lanes where the mode
 * and format allow (ne, tz, tp, tn, gradual underflow; the file argues
 * it gives fpl_round_array_f32's values and events bit for bit), else by
 * fpl_round_array_f32 (at most HIST_F32_CHUNK values a call in storage
 * order, so element j still takes draw j, through h->xf and h->yf);
 * returns fpl_round_array_f32's error (then nothing is added to h's
 * counts: FPL_EFORMAT comes at the first call). */
int hist_add_f32_avx512(fpl_hist *h, const float *x, size_t n);
#endif

/* What the SIMD loops need to cast h's binary32 values in their lanes
 * (x86/classify_avx512.c argues the cast), from hist_cast_setup(). */
typedef struct hist_cast {
	int s;			/* 23 - m: the bits a normal value loses */
	uint32_t min, max;	/* bits of 2^emin and of the format's max */
	uint32_t aovp, aovn;	/* |y| bits of an overflow of v > 0, v < 0 */
	int tiny_before;	/* tininess before rounding */
	int tiny_fb;		/* 1: a block with a v below 2^emin (not 0) goes to
				 * the engine: the lanes do not cast it */
	float C, Q;		/* 2^23 Q, Q = 2^(emin-m) */
	uint64_t dpos[FPL_NFLAGS], dneg[FPL_NFLAGS];	/* events of an overflow */
} hist_cast;

/* Can the lanes cast for h (mode ne, tz, tp or tn, m <= 22, emin >= -126,
 * emax <= 127, no flips)?  Then fills *hc and returns 1, else 0.  They
 * cast the values below 2^emin too where the format has gradual
 * underflow, no DAZ, and tininess before rounding or emin >= -125; else
 * tiny_fb is set. */
int hist_cast_setup(hist_cast *hc, const fpl_hist *h);

/* What a binary32 classification gathers over one call, before
 * hist_f32_commit() adds it to h. */
typedef struct hist_f32_acc {
	uint64_t nz, nni, nun, nsub, nov, en, an;	/* classes; err_n, abs_n */
	double es, esq, as, asq;	/* err_sum, err_sumsq, abs_sum, abs_sumsq */
	float emx, amxa;	/* err_max (starting at h->err_max), this call's abs max */
	uint32_t bmax, bmin;	/* extreme |v| bits over finite nonzero v; bmax 0: none */
	uint64_t bins[256];	/* v by biased exponent (1..254 used) */
	uint64_t dsub[23];	/* binary32 subnormal v by binade -149..-127 */
} hist_f32_acc;

/* Start *a for h (sets emx from h->err_max, bmin to the bits of inf). */
void hist_f32_acc_init(hist_f32_acc *a, const fpl_hist *h);
/* Count the binary32 subnormals among v[0..m) into a->dsub by binade;
 * returns how many there were. */
uint32_t hist_f32_subnormals(hist_f32_acc *a, const float *v, size_t m);
/* Add *a, gathered over n values, to h (bins to hist, and to hist_in
 * shifted by -k when k = h->scale_log2 != 0). */
void hist_f32_commit(fpl_hist *h, const hist_f32_acc *a, size_t n);

/* Recompute lo/hi, in_lo/in_hi and the suggestions from hist_in. */
void hist_suggest(fpl_hist *h);

/* floor(log2 |x|) of a finite nonzero binary64 / binary32. */
static inline int hist_ilogb64(uint64_t abits)
{
	int e = (int)(abits >> 52);
	if (e)
		return e - 1023;
	return -1074 + 63 - __builtin_clzll(abits);
}

static inline int hist_ilogb32(uint32_t abits)
{
	int e = (int)(abits >> 23);
	if (e)
		return e - 127;
	return -149 + 31 - __builtin_clz(abits);
}

#endif
