/* SPDX-License-Identifier: MIT */
/*
 * tests/tswitch.c - the format switches, exhaustively: tininess (after,
 * before) x subnormals (yes, no-round, ftz) x daz (0, 1) x overflow (inf,
 * saturate), every operand pair for add, sub, mul, div and every operand
 * for sqrt and round, fma on 10^5 random triples, in the seven
 * deterministic modes.  make check: e4m3fn, e5m2, e4m3fnuz, e3m2, e2m1 and
 * e8m0 (one format of each kind of specials; only the first two under
 * AddressSanitizer, with 10^4 triples).  make check-long: the full cross
 * product over every named format of 8 bits or fewer and every IEEE-style
 * eXmY with e+m <= 7, with the canonical NaN rule as a fifth switch.
 *
 * Operands are every code of the plain format (so subnormal codes are
 * operands even when the switched format has none, which exercises DAZ and
 * no-round).  Expected values: tests/oracle.c (MPFR), which implements
 * each switch from SEMANTICS.md independently of the engine.
 */
#include <stdio.h>

#include "exhaust.h"
#include "harness.h"
#include "oracle.h"

static unsigned long long total;

static void run_switches(const fpl_format *base)
{
	int tin, sub, daz, sat, nan;
	int nnan = h_long() ? 2 : 1;

	for (nan = 0; nan < nnan; nan++)
		for (tin = 0; tin < 2; tin++)
			for (sub = 0; sub < 3; sub++)
				for (daz = 0; daz < 2; daz++)
					for (sat = 0; sat < 2; sat++) {
						fpl_format f = *base;
						int rc;
						f.tininess = tin ? FPL_TINY_BEFORE : FPL_TINY_AFTER;
						f.subnormal = (fpl_subnormal)sub;
						f.daz = daz;
						f.overflow = sat ? FPL_OVF_SATURATE : FPL_OVF_INF;
						f.nan_rule = nan ? FPL_NAN_CANONICAL : FPL_NAN_X86;
						rc = fpl_format_finish(&f);
						if (!h_check(rc == 0)) {
							h_fail("%s: fpl_format_finish with switches = %d",
							       base->name, rc);
							continue;
						}
						total += exhaust_run(&f, base, EX_ALL, EX_DET_MODES,
								     h_threads());
						total += exhaust_fma(&f, base,
								     h_sanitized() ? 10000 : h_scale(100000, 200000),
								     EX_DET_MODES, h_threads());
					}
	h_note("%-12s all switch combinations done (%llu results so far)", base->name, total);
}

int main(void)
{
	/* check: the first six; check-long: all of them, then every eXmY */
	static const char *named[] = { "e4m3fn", "e5m2", "e4m3fnuz", "e3m2", "e2m1", "e8m0",
				       "e4m3ieee", "e5m2fnuz", "e4m3b11fnuz", "e3m4", "e2m3" };
	int i, e, m, nnamed = h_long() ? 11 : h_sanitized() ? 2 : 6;

	h_init("tswitch");
	for (i = 0; i < nnamed; i++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, named[i]) == 0)) {
			h_fail("fpl_format_lookup(\"%s\") failed", named[i]);
			continue;
		}
		run_switches(&f);
	}
	if (h_long())
		for (e = 1; e <= 7; e++)
			for (m = 0; e + m <= 7; m++) {
				fpl_format f;
				if (h_check(fpl_format_ieee(&f, e, m) == 0))
					run_switches(&f);
			}
	oracle_thread_done();
	return h_done();
}
