/* SPDX-License-Identifier: MIT */
/*
 * src/hist/hist_internal.h - shared pieces of the histogram library.
 *
 * Invariant: scratch arrays hold HIST_CHUNK elements; every engine call
 * works on at most that many values.
 */
#ifndef FPLAB_HIST_INTERNAL_H
#define FPLAB_HIST_INTERNAL_H

#include <fplab/hist.h>

#define HIST_CHUNK 8192
#define HIST_MX_MAX 4096

/* Classify values (see fplab/hist.h) after the cast; x unscaled input,
 * v = scaled value, y = cast of v. */
void hist_classify_f64(fpl_hist *h, const double *x, const double *v, const double *y,
		       size_t n);
/* The same in binary32 with v = x * 2^k exactly (k = h->scale_log2). */
void hist_classify_f32(fpl_hist *h, const float *v, const float *y, size_t n);

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
