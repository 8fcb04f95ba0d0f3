/* SPDX-License-Identifier: MIT */
/*
 * tests/twide.c - formats too wide for exhaustive sweeps: fp16, bf16,
 * tf32, fp32, fp64 and random eXmY (e up to 11, m up to 52).  For each:
 *  - a TestFloat-style special table: exponent classes (smallest
 *    subnormal, subnormal, below and at and above 2^emin, around 1, the
 *    top binades) x significand patterns (1.0, 1.0..01, 1.1..1, 1.1..10,
 *    1.01, a middle bit), both signs, plus zeros, infinities, quiet and
 *    signaling NaNs: every pair for add, sub, mul, div, every value for
 *    sqrt, rounding of each value plus/minus half and quarter quanta, and
 *    fma on every triple of a subset;
 *  - random cases: 10^5 per operation and mode (10^7 in check-long for
 *    fp16, bf16, tf32 and fp32, 10^6 for fp64 and the random formats;
 *    fewer under AddressSanitizer), operands values of the format,
 *    add/sub operands often of nearby exponents.  8 random eXmY in
 *    check (the first is e11m52), 24 in check-long.
 * Seven deterministic modes, value bits and flags.  Expected values:
 * tests/oracle.c (MPFR); operands are built from bit patterns here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

typedef double (*fn2)(const fpl_format *, double, double, fpl_rnd, fpl_state *);

struct ctx {
	const fpl_format *f;
	oracle_fmt o;
	double *tab;
	size_t ntab;
	uint64_t nrand;
	uint64_t salt;
};

static const char *opname[] = { "round", "add", "sub", "mul", "div", "sqrt", "fma" };

static void check_all_modes(struct ctx *c, oracle_op op, const double *x, fpl_state *st)
{
	int k;

	oracle_res w[7];

	oracle_eval_modes(&c->o, op, x, h_det_modes, 7, 0, 32, w);
	for (k = 0; k < 7; k++) {
		fpl_rnd r = h_det_modes[k];
		double got;
		st->flags = 0;
		got = h_engine(c->f, op, x, r, st);
		h_expect(opname[op], c->f, r, op == OR_FMA ? 3 : op == OR_ROUND || op == OR_SQRT ? 1 : 2,
			 x, w[k].value, w[k].flags, got, st->flags);
	}
}

/* A value of the format: leading exponent E, significand pattern `pat`
 * (0..5) trimmed to the bits the format has at E. */
static double pattern_value(const oracle_fmt *o, int E, int pat, int sign)
{
	int lsb = E - o->m, bits;
	uint64_t s;
	double v;

	if (E < o->emin)
		lsb = o->emin - o->m;
	bits = E - lsb + 1;
	if (bits < 1 || E > o->emax || E < -1074)
		return NAN;
	switch (pat) {
	case 0: s = 1ull << (bits - 1); break;
	case 1: s = (1ull << (bits - 1)) | (bits > 1); break;
	case 2: s = bits >= 64 ? ~0ull : (1ull << bits) - 1; break;
	case 3: s = ((1ull << bits) - 1) & ~1ull; if (bits == 1) s = 1; break;
	case 4: s = (1ull << (bits - 1)) | (bits > 2 ? 1ull << (bits - 3) : 0); break;
	default: s = (1ull << (bits - 1)) | (1ull << ((bits - 1) / 2)); break;
	}
	v = ldexp((double)s, lsb);
	if (v > o->max)
		return NAN;
	return sign ? -v : v;
}

static void build_table(struct ctx *c)
{
	const oracle_fmt *o = &c->o;
	int cls[12], ncls = 0, i, p, sg;
	size_t n = 0;

	cls[ncls++] = o->emin - o->m;
	cls[ncls++] = o->emin - o->m + 1;
	cls[ncls++] = o->emin - 1;
	cls[ncls++] = o->emin;
	cls[ncls++] = o->emin + 1;
	cls[ncls++] = -1;
	cls[ncls++] = 0;
	cls[ncls++] = 1;
	cls[ncls++] = o->emax - 1;
	cls[ncls++] = o->emax;
	c->tab = malloc(200 * sizeof *c->tab);
	for (sg = 0; sg < 2; sg++) {
		double sgn = sg ? -1.0 : 1.0;
		c->tab[n++] = sgn * 0.0;
		c->tab[n++] = sgn * INFINITY;
		c->tab[n++] = h_from_bits(0x7ff8000000000000ull | (uint64_t)sg << 63);
		if (o->m >= 2)	/* a signaling NaN with a payload the format holds */
			c->tab[n++] = h_from_bits(0x7ff0000000000000ull | (1ull << (52 - o->m)) |
						  (uint64_t)sg << 63);
		for (i = 0; i < ncls; i++)
			for (p = 0; p < 6; p++) {
				double v = pattern_value(o, cls[i], p, sg);
				size_t k;
				int dup = 0;
				if (v != v)
					continue;
				for (k = 0; k < n; k++)
					dup |= h_same(c->tab[k], v);
				if (!dup)
					c->tab[n++] = v;
			}
	}
	c->ntab = n;
}

static void table_worker(void *arg, int k, int nth)
{
	struct ctx *c = arg;
	fpl_state st;
	size_t i, j, l, nsub = c->ntab < 40 ? c->ntab : 40;
	int op;

	fpl_state_init(&st, h_seed());
	for (i = (size_t)k; i < c->ntab; i += (size_t)nth) {
		double a = c->tab[i], q, x[3];
		for (op = OR_ADD; op <= OR_DIV; op++)
			for (j = 0; j < c->ntab; j++) {
				x[0] = a;
				x[1] = c->tab[j];
				check_all_modes(c, (oracle_op)op, x, &st);
			}
		x[0] = a;
		check_all_modes(c, OR_SQRT, x, &st);
		/* round: the value, and points a half and a quarter quantum off */
		check_all_modes(c, OR_ROUND, x, &st);
		if (isfinite(a) && a != 0) {
			int E = ilogb(a), lsb = (E < c->o.emin ? c->o.emin : E) - c->o.m;
			static const double fr[] = { 0.5, -0.5, 0.25, 0.75, 0x1.0000000001p-1, 0x1.fffffffffp-2 };
			for (j = 0; j < 6; j++) {
				q = a + ldexp(fr[j], lsb);
				if (q != a) {
					x[0] = q;
					check_all_modes(c, OR_ROUND, x, &st);
				}
			}
		}
		if (i < nsub)	/* fma on a subset of triples */
			for (j = 0; j < nsub; j++)
				for (l = 0; l < nsub; l += 3) {
					x[0] = a;
					x[1] = c->tab[j];
					x[2] = c->tab[(l + i + j) % c->ntab];
					check_all_modes(c, OR_FMA, x, &st);
				}
	}
	oracle_thread_done();
}

/* A random value of the format, sometimes special; near `near` when
 * `near` is finite and nonzero (for add/sub cancellation). */
static double rand_value(const oracle_fmt *o, h_rng *r, double near)
{
	uint64_t u = h_rng_next(r);
	int E, lsb;

	if (u % 97 == 0) {
		static const double sp[] = { 0.0, -0.0, INFINITY, -INFINITY };
		if ((u >> 8) % 5 < 4)
			return sp[(u >> 8) % 5];
		/* a NaN whose payload fits in m bits */
		{
			uint64_t fr = (h_rng_next(r) & 0x000fffffffffffffull) & ~(0x000fffffffffffffull >> (o->m ? o->m : 1));
			if (!fr)
				fr = 0x0008000000000000ull;
			return h_from_bits(0x7ff0000000000000ull | fr | (u >> 63 << 63));
		}
	}
	if (near == near && near != 0 && isfinite(near) && (u >> 16) % 2)
		E = ilogb(near) + (int)h_rng_below(r, (uint64_t)(2 * o->m + 7)) - (o->m + 3);
	else
		E = o->emin - o->m + (int)h_rng_below(r, (uint64_t)(o->emax - (o->emin - o->m) + 1));
	if (E > o->emax)
		E = o->emax;
	if (E < o->emin - o->m)
		E = o->emin - o->m;
	lsb = (E < o->emin ? o->emin : E) - o->m;
	{
		double v = h_rng_value(r, E, E, E - lsb + 1, 0);
		if (fabs(v) > o->max)
			v = copysign(o->max, v);
		return v;
	}
}

static void random_worker(void *arg, int k, int nth)
{
	struct ctx *c = arg;
	fpl_state st;
	h_rng r;
	uint64_t i;
	double x[3];

	fpl_state_init(&st, h_seed());
	h_rng_init(&r, c->salt * 16 + (uint64_t)k);
	for (i = (uint64_t)k; i < c->nrand; i += (uint64_t)nth) {
		x[0] = rand_value(&c->o, &r, NAN);
		x[1] = rand_value(&c->o, &r, x[0]);
		x[2] = rand_value(&c->o, &r, x[0] * x[1]);
		check_all_modes(c, OR_ADD, x, &st);
		check_all_modes(c, OR_SUB, x, &st);
		check_all_modes(c, OR_MUL, x, &st);
		check_all_modes(c, OR_DIV, x, &st);
		check_all_modes(c, OR_FMA, x, &st);
		x[0] = fabs(x[0]);
		check_all_modes(c, OR_SQRT, x, &st);
		/* round: a binary64 with 53 random-pattern bits around the range */
		x[0] = h_rng_value(&r, c->o.emin - c->o.m - 3, c->o.emax + 2, 53, 1);
		check_all_modes(c, OR_ROUND, x, &st);
	}
	oracle_thread_done();
}

static void run_format(const fpl_format *f, uint64_t nrand)
{
	static uint64_t salt;
	struct ctx c;
	unsigned long long before = h_failures();

	memset(&c, 0, sizeof c);
	c.f = f;
	oracle_fmt_init(&c.o, f);
	c.nrand = nrand;
	c.salt = ++salt;
	build_table(&c);
	h_parallel(h_threads(), table_worker, &c);
	h_parallel(h_threads(), random_worker, &c);
	h_note("%-8s (e=%d m=%d): table of %zu values, %llu random cases per op and mode, %llu failures",
	       f->name, f->e, f->m, c.ntab, (unsigned long long)nrand,
	       (unsigned long long)(h_failures() - before));
	free(c.tab);
}

int main(void)
{
	static const char *named[] = { "fp16", "bf16", "tf32", "fp32", "fp64" };
	int i, nrandfmt = h_long() ? 24 : 8;
	h_rng r;

	h_init("twide");
	for (i = 0; i < 5; i++) {
		fpl_format f;
		if (!h_check(fpl_format_lookup(&f, named[i]) == 0)) {
			h_fail("lookup %s", named[i]);
			continue;
		}
		run_format(&f, h_sanitized() ? 20000 : h_scale(100000, i < 4 ? 10000000 : 1000000));
	}
	h_rng_init(&r, 777);
	for (i = 0; i < nrandfmt; i++) {
		fpl_format f;
		int e = 2 + (int)h_rng_below(&r, 10), m = (int)h_rng_below(&r, 53);
		if (i == 0)
			e = 11, m = 52;	/* binary64 itself, IEEE-style */
		if (!h_check(fpl_format_ieee(&f, e, m) == 0)) {
			h_fail("fpl_format_ieee(%d, %d)", e, m);
			continue;
		}
		run_format(&f, h_sanitized() ? 10000 : h_scale(100000, 1000000));
	}
	oracle_thread_done();
	return h_done();
}
