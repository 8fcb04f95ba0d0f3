/* SPDX-License-Identifier: MIT */
/*
 * tests/tflip.c - soft errors (st->flip, st->flip_prob).  After rounding,
 * with probability p one bit of the result's encoding is flipped: a
 * fraction bit (FPL_FLIP_FRACTION) or any bit (FPL_FLIP_ANY).  Checked:
 *  - exactly one bit differs from the unflipped result (same draw index,
 *    flips off), and it is a fraction bit for FPL_FLIP_FRACTION;
 *  - agreement with SEMANTICS.md: flip iff (d >> 11) 2^-53 < p with
 *    d = fpl_random_draw(seed ^ 0x666c6970, stream, i), bit (d mod 2^32)
 *    mod m or mod nbits;
 *  - over 10^5 results the flip rate is within 5 standard deviations of p;
 *  - p = 0 never flips, p = 1 always does.
 * The unflipped result comes from the engine with flips off (its rounding
 * is tested against MPFR elsewhere); codes are decoded by the oracle's
 * hand decoder.
 */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "oracle.h"

static void run(const char *name, fpl_flip kind, double p, fpl_rnd r, uint64_t n)
{
	fpl_format f;
	oracle_fmt o;
	fpl_state sf, s0;
	h_rng rng;
	uint64_t i, flips = 0, eligible = 0;

	if (!h_check(fpl_format_lookup(&f, name) == 0))
		return;
	oracle_fmt_init(&o, &f);
	h_rng_init(&rng, (uint64_t)kind * 1000 + (uint64_t)(p * 100));
	fpl_state_init(&sf, h_seed());
	sf.flip = kind;
	sf.flip_prob = p;
	sf.stream = 5;
	fpl_state_init(&s0, h_seed());
	s0.stream = 5;
	for (i = 0; i < n; i++) {
		double x = h_rng_value(&rng, o.emin - 2, o.emax, 53, 0);
		double y0 = fpl_round(&f, x, r, &s0), y = fpl_round(&f, x, r, &sf);
		uint64_t c0 = fpl_encode(&f, y0), c, d, diff;
		int nbits = oracle_nbits(&o), flip, bit, ok;
		double want;

		if (y0 != y0 || c0 == FPL_CODE_NONE)
			continue;
		eligible++;
		d = fpl_random_draw(h_seed() ^ 0x666c6970ull, 5, i);
		flip = ldexp((double)(d >> 11), -53) < p;
		bit = (int)((d & 0xffffffffu) % (uint64_t)(kind == FPL_FLIP_FRACTION ? f.m : nbits));
		want = flip ? oracle_decode(&o, c0 ^ (1ull << bit), &ok) : y0;
		if (!h_check(h_same(y, want)))
			h_fail("%s flip=%d p=%g %s i=%llu x=%a: got %a, unflipped %a, expected %a (bit %d, flip %d)",
			       name, (int)kind, p, fpl_rnd_name(r), (unsigned long long)i, x, y, y0,
			       want, bit, flip);
		if (y == y) {
			c = fpl_encode(&f, y);
			diff = c ^ c0;
			if (!h_same(y, y0)) {
				flips++;
				if (!h_check(c != FPL_CODE_NONE && diff && !(diff & (diff - 1)) &&
					     (kind != FPL_FLIP_FRACTION || diff < (1ull << f.m))))
					h_fail("%s flip=%d: codes %#llx -> %#llx differ in more than one bit or outside the fraction",
					       name, (int)kind, (unsigned long long)c0, (unsigned long long)c);
			}
		} else if (flip) {
			flips++;	/* flipped into a NaN code */
		}
	}
	{
		double mean = (double)eligible * p, sd = sqrt((double)eligible * p * (1 - p));
		if (!h_check(fabs((double)flips - mean) <= 5 * sd + 1e-9))
			h_fail("%s flip=%d p=%g: %llu flips in %llu results, expected %.1f +- 5*%.1f",
			       name, (int)kind, p, (unsigned long long)flips,
			       (unsigned long long)eligible, mean, sd);
	}
}

int main(void)
{
	static const char *fmts[] = { "bf16", "fp16", "e4m3fn", "e5m2", "e2m1", "fp32", "e4m3fnuz" };
	uint64_t n = h_scale(100000, 1000000);
	size_t k;

	h_init("tflip");
	for (k = 0; k < sizeof fmts / sizeof *fmts; k++) {
		run(fmts[k], FPL_FLIP_FRACTION, 0.1, FPL_RND_NE, n);
		run(fmts[k], FPL_FLIP_ANY, 0.3, FPL_RND_SP, n / 4);
		run(fmts[k], FPL_FLIP_ANY, 0.0, FPL_RND_NE, 1000);
		run(fmts[k], FPL_FLIP_FRACTION, 1.0, FPL_RND_TZ, 1000);
	}
	oracle_thread_done();
	return h_done();
}
