/* SPDX-License-Identifier: MIT */
/*
 * tests/tarith8.c - every operand pair, exhaustively, in every small format:
 * the named formats of 8 bits or fewer (SEMANTICS.md's table) and every
 * IEEE-style eXmY with e+m <= 7.  add, sub, mul, div on all pairs of codes
 * (NaNs, infinities and both zeros included), sqrt and round on every code
 * (round also on points between neighbouring codes), and fma on 10^5
 * random triples of codes (10^6 in check-long), in the seven
 * deterministic modes with the format's default switches; value bits
 * (sign of zero, NaN payload) and flags, and the per-flag counters.
 *
 * Expected values come from tests/oracle.c (GNU MPFR, oracle.h's recipe);
 * operands are decoded from their bit fields by the oracle's own decoder.
 * check-long runs the same sweep again with the canonical NaN rule.
 * (Stochastic modes are tstochastic's.)
 */
#include <stdio.h>
#include <string.h>

#include "exhaust.h"
#include "harness.h"
#include "oracle.h"

static const char *named[] = {
	"e5m2", "e4m3fn", "e4m3ieee", "e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz",
	"e3m4", "e3m2", "e2m3", "e2m1", "e8m0",
};

static int same_fields(const fpl_format *a, const fpl_format *b)
{
	return a->e == b->e && a->m == b->m && a->bias == b->bias &&
	       a->subnormal == b->subnormal && a->specials == b->specials &&
	       a->overflow == b->overflow && a->tininess == b->tininess && a->daz == b->daz &&
	       a->nan_rule == b->nan_rule;
}

int main(void)
{
	fpl_format fs[64];
	int nf = 0, i, e, m, k;
	unsigned long long n;

	h_init("tarith8");
	for (i = 0; i < (int)(sizeof named / sizeof *named); i++) {
		int rc = fpl_format_lookup(&fs[nf], named[i]);
		if (!h_check(rc == 0)) {
			h_fail("fpl_format_lookup(\"%s\") = %d", named[i], rc);
			continue;
		}
		nf++;
	}
	for (e = 1; e <= 7; e++)
		for (m = 0; e + m <= 7; m++) {
			int dup = 0, rc = fpl_format_ieee(&fs[nf], e, m);
			if (!h_check(rc == 0)) {
				h_fail("fpl_format_ieee(%d, %d) = %d", e, m, rc);
				continue;
			}
			for (k = 0; k < nf; k++)
				dup |= same_fields(&fs[k], &fs[nf]);
			if (!dup)
				nf++;
		}
	for (i = 0; i < nf; i++) {
		n = exhaust_run(&fs[i], &fs[i], EX_ALL, EX_DET_MODES, h_threads());
		n += exhaust_fma(&fs[i], &fs[i], h_sanitized() ? 10000 : h_scale(100000, 1000000),
				 EX_DET_MODES, h_threads());
		h_note("%-12s %2d bits: %llu results", fs[i].name, fs[i].nbits, n);
		if (h_long() && fs[i].nbits <= 8) {
			fpl_format c = fs[i];
			c.nan_rule = FPL_NAN_CANONICAL;
			if (fpl_format_finish(&c) == 0)
				exhaust_run(&c, &fs[i], EX_ALL, EX_DET_MODES, h_threads());
		}
	}
	oracle_thread_done();
	return h_done();
}
