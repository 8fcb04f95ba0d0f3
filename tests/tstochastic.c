/* SPDX-License-Identifier: MIT */
/*
 * tests/tstochastic.c - stochastic rounding (sp, se).
 *  1. Exact agreement with SEMANTICS.md's definition: for random operands
 *     in several formats, operations and R (sr_bits), the engine's result
 *     and flags equal the oracle's, fed the same draw
 *     fpl_random_draw(seed, stream, counter); every result is one of the
 *     two neighbours; the counter advances by one per call.
 *  2. Statistics: over 10^5 draws the frequency of rounding away is within
 *     5 standard deviations of the exact probability T / 2^R (sp) or 1/2
 *     (se); exact results never move.
 *  3. Array operations: same seed, same bits and counts with st.threads =
 *     1, 2 and 3, equal to the scalar loop (element j uses draw counter+j).
 * Expected values: tests/oracle.c (MPFR); the draw is the generator's
 * output, an input of the definition, not a result under test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

static const char *fmts[] = { "fp16", "bf16", "e4m3fn", "e5m2", "e2m1", "e4m3fnuz", "e8m0", "fp32" };
static const int rbits[] = { 32, 1, 3, 8, 16, 31 };

/* A value of f taken from a random binary64 rounded (by the oracle) into f. */
static double value_of(const oracle_fmt *o, h_rng *r)
{
	unsigned fl;
	double x = h_rng_value(r, o->emin - o->m - 2, o->emax + 1, 53, 1);
	return oracle_round(o, x, FPL_RND_NE, &fl);
}

static void exactness(void)
{
	size_t fi;
	uint64_t n = h_scale(20000, 500000), i;
	h_rng r;

	h_rng_init(&r, 1);
	for (fi = 0; fi < sizeof fmts / sizeof *fmts; fi++) {
		fpl_format f;
		oracle_fmt o;
		fpl_state st;
		if (!h_check(fpl_format_lookup(&f, fmts[fi]) == 0))
			continue;
		for (i = 0; i < n; i++) {
			oracle_op op = (oracle_op)h_rng_below(&r, 7);
			fpl_rnd m = h_rng_below(&r, 2) ? FPL_RND_SP : FPL_RND_SE;
			double x[3], got;
			oracle_res w;
			uint64_t draw, ctr;
			int k;

			f.subnormal = (fpl_subnormal)(i % 3 == 2 ? h_rng_below(&r, 3) : 0);
			f.tininess = (fpl_tininess)h_rng_below(&r, 2);
			fpl_format_finish(&f);
			oracle_fmt_init(&o, &f);
			fpl_state_init(&st, h_seed() + i);
			st.stream = h_rng_below(&r, 4);
			st.counter = h_rng_next(&r) >> h_rng_below(&r, 64);
			st.sr_bits = rbits[h_rng_below(&r, 6)];
			for (k = 0; k < 3; k++)
				x[k] = value_of(&o, &r);
			if (op == OR_ROUND)	/* any binary64, not only values of f */
				x[0] = h_rng_value(&r, o.emin - o.m - 2, o.emax + 1, 53, 1);
			ctr = st.counter;
			draw = fpl_random_draw(st.seed, st.stream, ctr);
			oracle_eval(&o, op, x, m, draw, st.sr_bits, &w);
			got = h_engine(&f, op, x, m, &st);
			h_expect(op == OR_ROUND ? "sr round" : op == OR_FMA ? "sr fma" : "sr op", &f, m,
				 op == OR_FMA ? 3 : 2, x, w.value, w.flags, got, st.flags);
			if (!h_check(h_same(got, w.lo) || h_same(got, w.hi) ||
				     (f.subnormal == FPL_SUB_FTZ && got == 0)))
				h_fail("%s: %s result %a is neither neighbour %a nor %a", f.name,
				       m == FPL_RND_SP ? "sp" : "se", got, w.lo, w.hi);
			if (!h_check(st.counter == ctr + 1))
				h_fail("%s: counter advanced from %llu to %llu", f.name,
				       (unsigned long long)ctr, (unsigned long long)st.counter);
		}
	}
	oracle_thread_done();
}

/* Frequency of rounding away over n draws against the exact probability. */
static void frequency(const fpl_format *f, double x, fpl_rnd m, int R, uint64_t n)
{
	oracle_fmt o;
	oracle_res w;
	fpl_state st;
	uint64_t i, away = 0, other = 0;
	double p, mean, sd;

	oracle_fmt_init(&o, f);
	oracle_eval(&o, OR_ROUND, &x, m, 0, R, &w);
	fpl_state_init(&st, h_seed() ^ 0x5eed);
	st.sr_bits = R;
	for (i = 0; i < n; i++) {
		double y = fpl_round(f, x, m, &st);
		if (h_same(y, w.hi) && !h_same(w.lo, w.hi))
			away++;
		else if (!h_same(y, w.lo))
			other++;
	}
	if (!h_check(other == 0))
		h_fail("%s %s R=%d x=%a: %llu results neither %a nor %a", f->name,
		       m == FPL_RND_SP ? "sp" : "se", R, x, (unsigned long long)other, w.lo, w.hi);
	if (!w.stochastic_split || h_same(w.lo, w.hi))	/* exact, or both overflow alike */
		p = 0;
	else if (m == FPL_RND_SE)
		p = 0.5;
	else
		p = ldexp((double)w.T, -R);
	mean = (double)n * p;
	sd = sqrt((double)n * p * (1 - p));
	if (!h_check(fabs((double)away - mean) <= 5 * sd + 1e-9))
		h_fail("%s %s R=%d x=%a: rounded away %llu times of %llu, expected %.1f +- 5*%.1f (p=%.9g)",
		       f->name, m == FPL_RND_SP ? "sp" : "se", R, x, (unsigned long long)away,
		       (unsigned long long)n, mean, sd, p);
}

static void statistics(void)
{
	static const double xs[] = { 0x1.0008p0, 0x1.0001p0, 0x1.003ffp0, 0x1.002p0, 1.0 / 3,
				     -0x1.2345678p-3, 0x1p-26, 0x1.ffffp15, 1000.3, -0x1.8p-25 };
	static const char *names[] = { "fp16", "e4m3fn" };
	uint64_t n = h_scale(100000, 1000000);
	size_t i, k;

	for (k = 0; k < 2; k++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, names[k]) == 0))
			continue;
		for (i = 0; i < sizeof xs / sizeof *xs; i++) {
			frequency(&f, xs[i], FPL_RND_SP, 32, n);
			frequency(&f, xs[i], FPL_RND_SE, 32, n);
			frequency(&f, xs[i], FPL_RND_SP, 3, n);
		}
		frequency(&f, 1.0, FPL_RND_SP, 32, 1000);	/* exact: never moves */
	}
	oracle_thread_done();
}

static void arrays(void)
{
	size_t n = 100003, j;
	double *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *y1), *y2 = malloc(n * sizeof *y2);
	double *ys = malloc(n * sizeof *ys);
	fpl_format f;
	h_rng r;
	int t, m;

	h_rng_init(&r, 3);
	fpl_format_lookup(&f, "bf16");
	for (j = 0; j < n; j++)
		x[j] = h_rng_value(&r, -130, 130, 53, 1);
	for (m = 0; m < 2; m++) {
		fpl_rnd rm = m ? FPL_RND_SE : FPL_RND_SP;
		fpl_state s1, ss;
		fpl_state_init(&ss, 42);
		ss.counter = 1000;
		for (j = 0; j < n; j++)
			ys[j] = fpl_round(&f, x[j], rm, &ss);
		for (t = 1; t <= 3; t++) {
			int rc;
			fpl_state_init(&s1, 42);
			s1.counter = 1000;
			s1.threads = t;
			rc = fpl_round_array(&f, y1, x, n, rm, &s1);
			if (!h_check(rc == 0)) {
				h_fail("fpl_round_array threads=%d returned %d", t, rc);
				continue;
			}
			for (j = 0; j < n; j++)
				if (!h_check(h_same(y1[j], ys[j]))) {
					h_fail("%s array threads=%d element %zu (%a): %a, scalar %a",
					       rm == FPL_RND_SP ? "sp" : "se", t, j, x[j], y1[j], ys[j]);
					break;
				}
			if (!h_check(s1.counter == ss.counter && s1.flags == ss.flags &&
				     memcmp(s1.count, ss.count, sizeof s1.count) == 0))
				h_fail("array threads=%d: counter/flags/counts differ from the scalar loop", t);
			if (t == 1)
				memcpy(y2, y1, n * sizeof *y1);
			else if (!h_check(memcmp(y1, y2, n * sizeof *y1) == 0))
				h_fail("array sp/se results differ between 1 and %d threads", t);
		}
	}
	free(x);
	free(y1);
	free(y2);
	free(ys);
}

/* The generator's bits look uniform (each of the top 32 bits near 1/2). */
static void draws(void)
{
	uint64_t i, n = 200000, ones[64] = { 0 };
	int b;

	for (i = 0; i < n; i++) {
		uint64_t d = fpl_random_draw(h_seed(), 7, i);
		for (b = 0; b < 64; b++)
			ones[b] += (d >> b) & 1;
	}
	for (b = 0; b < 64; b++)
		if (!h_check(fabs((double)ones[b] - n / 2.0) < 5 * sqrt(n / 4.0)))
			h_fail("fpl_random_draw bit %d set %llu times of %llu", b,
			       (unsigned long long)ones[b], (unsigned long long)n);
	if (!h_check(fpl_random_draw(1, 2, 3) == fpl_random_draw(1, 2, 3) &&
		     fpl_random_draw(1, 2, 3) != fpl_random_draw(1, 2, 4) &&
		     fpl_random_draw(1, 2, 3) != fpl_random_draw(1, 3, 3) &&
		     fpl_random_draw(1, 2, 3) != fpl_random_draw(2, 2, 3)))
		h_fail("fpl_random_draw is not a function of (seed, stream, index)");
}

int main(void)
{
	h_init("tstochastic");
	draws();
	exactness();
	h_note("exactness done");
	statistics();
	h_note("statistics done");
	arrays();
	oracle_thread_done();
	return h_done();
}
