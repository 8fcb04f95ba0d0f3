/* SPDX-License-Identifier: MIT */
/*
 * tests/tminmax.c - fpl_min, fpl_max (IEEE 754-2019 minimum/maximum: a NaN
 * operand gives NaN, -0 < +0) and fpl_compare (quiet: -1, 0, 1, or 2 when
 * unordered, -0 == +0, invalid only for a signaling NaN), on every pair of
 * codes of several small formats, with DAZ on and off.
 * Expected values: the order is decided here from the operands' values;
 * the chosen operand is rounded by the MPFR oracle (a no-op for values of
 * the format), and a NaN result is the oracle's NaN pick for the same
 * operands (first NaN, quieted, narrowed; invalid for a signaling NaN).
 */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "oracle.h"

static double daz(const oracle_fmt *o, double x)
{
	if (o->daz && x != 0 && fabs(x) < o->min_normal)
		return signbit(x) ? -0.0 : 0.0;
	return x;
}

/* -1, 0, 1 with -0 < +0 when `signed_zero`. */
static int order(double a, double b, int signed_zero)
{
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	if (signed_zero && a == 0)
		return (signbit(b) != 0) - (signbit(a) != 0);
	return 0;
}

static void run(const char *name, int dz)
{
	fpl_format f;
	oracle_fmt o;
	fpl_state st;
	uint64_t i, j, n;
	int ok, k;
	static const fpl_rnd modes[2] = { FPL_RND_NE, FPL_RND_TZ };

	if (!h_check(fpl_format_lookup(&f, name) == 0))
		return;
	f.daz = dz;
	fpl_format_finish(&f);
	oracle_fmt_init(&o, &f);
	fpl_state_init(&st, 1);
	n = 1ull << oracle_nbits(&o);
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			double x[2] = { oracle_decode(&o, i, &ok), oracle_decode(&o, j, &ok) };
			double a = daz(&o, x[0]), b = daz(&o, x[1]);
			int nan = a != a || b != b, c, want_c;
			int snan = (a != a && !(h_bits(a) & 0x0008000000000000ull)) ||
				   (b != b && !(h_bits(b) & 0x0008000000000000ull));

			for (k = 0; k < 2; k++) {
				fpl_rnd r = modes[k];
				double wmin, wmax, got;
				unsigned fmin, fmax;
				if (nan) {
					wmin = wmax = oracle_op2(&o, OR_ADD, x[0], x[1], r, &fmin);
					fmax = fmin;
				} else {
					int ord = order(a, b, 1);
					wmin = oracle_round(&o, ord <= 0 ? a : b, r, &fmin);
					wmax = oracle_round(&o, ord >= 0 ? a : b, r, &fmax);
				}
				st.flags = 0;
				got = fpl_min(&f, x[0], x[1], r, &st);
				h_expect("min", &f, r, 2, x, wmin, fmin, got, st.flags);
				st.flags = 0;
				got = fpl_max(&f, x[0], x[1], r, &st);
				h_expect("max", &f, r, 2, x, wmax, fmax, got, st.flags);
			}
			st.flags = 0;
			c = fpl_compare(&f, x[0], x[1], &st);
			want_c = nan ? 2 : order(a, b, 0);
			if (!h_check(c == want_c && st.flags == (snan ? (unsigned)FPL_FLAG_INVALID : 0u)))
				h_fail("compare %s daz=%d (%a, %a): %d flags %#x, want %d flags %#x", name, dz,
				       x[0], x[1], c, st.flags, want_c, snan ? FPL_FLAG_INVALID : 0);
		}
}

int main(void)
{
	static const char *names[] = { "e4m3fn", "e5m2", "e4m3fnuz", "e2m1", "e3m2", "e8m0" };
	size_t i;
	int dz;

	h_init("tminmax");
	for (i = 0; i < sizeof names / sizeof *names; i++)
		for (dz = 0; dz < 2; dz++)
			run(names[i], dz);
	oracle_thread_done();
	return h_done();
}
