/* SPDX-License-Identifier: MIT */
/*
 * tests/tspecial.c - inputs outside the target's range and special
 * operands, in every named format, the seven deterministic modes, with
 * and without saturation and with the canonical NaN rule:
 *  - fpl_round of +-1e300, +-DBL_MAX, +-DBL_TRUE_MIN, +-0, +-inf, values
 *    just above max and at the overflow tie, half the smallest subnormal,
 *    quiet and signaling NaNs with assorted payloads (including payload
 *    bits only below the format's fraction width);
 *  - NaN operands in every position of add, sub, mul, div, sqrt, fma
 *    (first NaN wins, a signaling NaN anywhere raises invalid);
 *  - fpl_convert from fp16 (every code, DAZ of the source on and off) into
 *    e4m3fn, e5m2, bf16 and e2m1.
 * Expected values: tests/oracle.c (MPFR and SEMANTICS.md's special rules).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "oracle.h"

static const char *names[] = { "fp64", "fp32", "tf32", "fp16", "bf16", "e5m2", "e4m3fn",
			       "e4m3ieee", "e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz", "e3m4",
			       "e3m2", "e2m3", "e2m1", "e8m0" };

static const uint64_t nans[] = {
	0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7fffffffffffffffull, 0xffffffffffffffffull,
	0x7ff0000000000001ull, 0xfff0000000000001ull, 0x7ff4000000000000ull, 0xfff2000000000000ull,
	0x7ff8000000000001ull, 0x7ffc000000000000ull, 0x7ff0800000000000ull, 0x7ff0000100000000ull,
};

static int ninputs(const oracle_fmt *o, double *v)
{
	int n = 0, s;
	size_t i;

	for (s = 0; s < 2; s++) {
		double g = s ? -1 : 1;
		v[n++] = g * 1e300;
		v[n++] = g * DBL_MAX;
		v[n++] = g * DBL_TRUE_MIN;
		v[n++] = g * 0.0;
		v[n++] = g * INFINITY;
		v[n++] = g * o->max;
		v[n++] = g * nextafter(o->max, INFINITY);
		v[n++] = g * o->max * (1 + ldexp(1, -o->m - 1));	/* the tie above max */
		v[n++] = g * o->max * (1 + ldexp(1, -o->m - 2));
		v[n++] = g * ldexp(1, o->emax + 1);
		v[n++] = g * ldexp(1, o->emin - o->m - 1);	/* half the smallest subnormal */
		v[n++] = g * ldexp(1.5, o->emin - o->m - 1);
		v[n++] = g * ldexp(1, o->emin - o->m - 60);
		v[n++] = g * nextafter(o->min_normal, 0);
		v[n++] = g * 1e-300;
	}
	for (i = 0; i < sizeof nans / sizeof *nans; i++)
		v[n++] = h_from_bits(nans[i]);
	return n;
}

static void rounds(const fpl_format *base)
{
	int sat, can, k, i, n;
	double v[64];

	for (sat = 0; sat < 2; sat++)
		for (can = 0; can < 2; can++) {
			fpl_format f = *base;
			oracle_fmt o;
			fpl_state st;
			f.overflow = sat ? FPL_OVF_SATURATE : FPL_OVF_INF;
			f.nan_rule = can ? FPL_NAN_CANONICAL : FPL_NAN_X86;
			fpl_format_finish(&f);
			oracle_fmt_init(&o, &f);
			fpl_state_init(&st, 1);
			n = ninputs(&o, v);
			for (i = 0; i < n; i++)
				for (k = 0; k < 7; k++) {
					fpl_rnd r = h_det_modes[k];
					unsigned fl;
					double w = oracle_round(&o, v[i], r, &fl), got;
					st.flags = 0;
					got = fpl_round(&f, v[i], r, &st);
					h_expect("round", &f, r, 1, &v[i], w, fl, got, st.flags);
				}
		}
}

static void nan_operands(const fpl_format *base)
{
	double vals[] = { 1.5, -0.0, INFINITY, 0, 0, 0 };
	int can, i, j, l, p;
	fpl_state st;

	fpl_state_init(&st, 1);
	for (can = 0; can < 2; can++) {
		fpl_format f = *base;
		oracle_fmt o;
		f.nan_rule = can ? FPL_NAN_CANONICAL : FPL_NAN_X86;
		fpl_format_finish(&f);
		oracle_fmt_init(&o, &f);
		for (p = 0; p < 12; p++) {
			vals[3] = h_from_bits(nans[p]);
			vals[4] = h_from_bits(nans[(p + 5) % 12]);
			vals[5] = h_from_bits(nans[(p + 7) % 12]);
			for (i = 0; i < 6; i++)
				for (j = 0; j < 6; j++)
					for (l = 0; l < 6; l++) {
						double x[3] = { vals[i], vals[j], vals[l] }, got;
						oracle_res w;
						oracle_op op;
						if (i < 3 && j < 3 && l < 3)
							continue;
						for (op = OR_ADD; op <= OR_FMA; op++) {
							oracle_eval(&o, op, x, FPL_RND_NE, 0, 32, &w);
							st.flags = 0;
							got = h_engine(&f, op, x, FPL_RND_NE, &st);
							h_expect(op == OR_FMA ? "fma" : op == OR_SQRT ? "sqrt" : "op2",
								 &f, FPL_RND_NE, op == OR_FMA ? 3 : 2, x, w.value,
								 w.flags, got, st.flags);
						}
					}
		}
	}
}

static void converts(void)
{
	static const char *tos[] = { "e4m3fn", "e5m2", "bf16", "e2m1", "e8m0" };
	fpl_format from, to;
	oracle_fmt ofrom, oto;
	fpl_state st;
	size_t t;
	uint64_t c;
	int daz, k, ok;

	fpl_state_init(&st, 1);
	for (daz = 0; daz < 2; daz++) {
		fpl_format_lookup(&from, "fp16");
		from.daz = daz;
		fpl_format_finish(&from);
		oracle_fmt_init(&ofrom, &from);
		for (t = 0; t < sizeof tos / sizeof *tos; t++) {
			fpl_format_lookup(&to, tos[t]);
			oracle_fmt_init(&oto, &to);
			for (c = 0; c < 65536; c++) {
				double x[2] = { oracle_decode(&ofrom, c, &ok), daz ? ofrom.min_normal : 0 };
				for (k = 0; k < 7; k++) {
					fpl_rnd r = h_det_modes[k];
					oracle_res w;
					double got;
					oracle_eval(&oto, OR_CONVERT, x, r, 0, 32, &w);
					st.flags = 0;
					got = fpl_convert(&to, &from, x[0], r, &st);
					h_expect(daz ? "convert from fp16+daz" : "convert from fp16", &to, r, 1,
						 x, w.value, w.flags, got, st.flags);
				}
			}
		}
	}
}

int main(void)
{
	size_t i;

	h_init("tspecial");
	for (i = 0; i < sizeof names / sizeof *names; i++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, names[i]) == 0)) {
			h_fail("lookup %s", names[i]);
			continue;
		}
		rounds(&f);
		nan_operands(&f);
	}
	converts();
	oracle_thread_done();
	return h_done();
}
