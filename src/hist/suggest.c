/* SPDX-License-Identifier: MIT */
/*
 * suggest.c - which power-of-two scale suits the data: the APS choice
 * (the largest 2^k that does not overflow) and the k that minimises the
 * estimated values that become zero plus those that overflow, over the
 * exponent histogram.
 *
 * Invariant: suggestions read only the unscaled input (amax, hist_in), so
 * they are the same whatever scaling the run itself applied.
 */
#include <math.h>
#include <stdlib.h>

#include <fplab/ops.h>

#include "hist/hist_internal.h"

/* Does +-a cast to f in mode rnd overflow? */
static int overflows(const fpl_format *f, fpl_rnd rnd, double a)
{
	fpl_state st;
	fpl_state_init(&st, 0);
	double y1 = fpl_round(f, a, rnd, &st);
	double y2 = fpl_round(f, -a, rnd, &st);
	return (st.flags & FPL_FLAG_OVERFLOW) || !isfinite(y1) || !isfinite(y2);
}

FPL_API int fpl_hist_aps_k(const fpl_format *f, fpl_rnd rnd, double amax)
{
	if (!(amax > 0) || !isfinite(amax))
		return 0;
	int k = f->emax - ilogb(amax);
	/* amax * 2^k lies in [2^emax, 2^(emax+1)): it may round past max */
	int a = k / 2, b = k - a;
	double v = amax * ldexp(1.0, a) * ldexp(1.0, b);
	if (!isfinite(v) || overflows(f, rnd, v))
		k--;
	return k;
}

void hist_suggest(fpl_hist *h)
{
	h->lo = h->in_lo = 1;
	h->hi = h->in_hi = 0;
	for (int i = 0; i < FPL_HIST_NBINS; i++) {
		if (h->hist[i]) {
			if (h->lo > h->hi)
				h->lo = i + FPL_HIST_EMIN;
			h->hi = i + FPL_HIST_EMIN;
		}
		if (h->hist_in[i]) {
			if (h->in_lo > h->in_hi)
				h->in_lo = i + FPL_HIST_EMIN;
			h->in_hi = i + FPL_HIST_EMIN;
		}
	}
	h->aps_k = fpl_hist_aps_k(&h->cfg.fmt, h->cfg.rnd, h->amax);
	h->best_k = 0;
	h->best_loss = 0;
	if (h->in_lo > h->in_hi)
		return;
	/*
	 * Binade e shifted by k: becomes zero when e + k <= e_minsub - 2 (all of
	 * [2^(e+k), 2^(e+k+1)) is below half the min subnormal), overflow when
	 * e + k > e_max.  The loss of k is the sum of both tails.
	 */
	int ulim = h->e_minsub - 2, olim = h->e_max;
	int kmin_c = ulim - h->in_hi - 1, kmax_c = olim - h->in_lo + 1;
	/* cum(e) = values in binades <= e */
	static __thread uint64_t cum[FPL_HIST_NBINS];
	uint64_t run = 0, total;
	for (int i = 0; i < FPL_HIST_NBINS; i++)
		cum[i] = run += h->hist_in[i];
	total = run;
#define CUM(e) ((e) < FPL_HIST_EMIN ? 0 : (e) > FPL_HIST_EMAX ? total : cum[(e) - FPL_HIST_EMIN])
#define LOSS(k) (CUM(ulim - (k)) + (total - CUM(olim - (k))))
	uint64_t best = UINT64_MAX;
	int bk_lo = 0, bk_hi = 0;
	for (int k = kmin_c; k <= kmax_c; k++) {
		uint64_t loss = LOSS(k);
		if (loss < best) {
			best = loss;
			bk_lo = bk_hi = k;
		} else if (loss == best)
			bk_hi = k;
	}
	/* the minimiser nearest the middle of [bk_lo, bk_hi] */
	int mid = (int)floor((bk_lo + bk_hi) / 2.0);
	int pick = bk_lo, dist = 1 << 30;
	for (int k = bk_lo; k <= bk_hi; k++) {
		int d = abs(k - mid);
		if (LOSS(k) == best && d < dist) {
			dist = d;
			pick = k;
		}
	}
#undef LOSS
#undef CUM
	h->best_k = pick;
	h->best_loss = best;
}
