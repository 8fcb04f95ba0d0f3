/* SPDX-License-Identifier: MIT */
/*
 * tests/exhaust.c - exhaustive sweeps over small formats (see exhaust.h).
 * Expected values: tests/oracle.c (MPFR).  The engine is only called.
 */
#include "exhaust.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"

struct sweep {
	const fpl_format *f;
	oracle_fmt o;
	double *vals;
	size_t nvals;
	unsigned opmask, modemask;
	fpl_rnd modes[FPL_RND_COUNT];
	int nmodes;
	unsigned long long done[16];
};

typedef double (*op2_fn)(const fpl_format *, double, double, fpl_rnd, fpl_state *);

static const struct {
	unsigned bit;
	oracle_op op;
	op2_fn fn;
	const char *name;
} ops2[] = {
	{ EX_ADD, OR_ADD, fpl_add, "add" },
	{ EX_SUB, OR_SUB, fpl_sub, "sub" },
	{ EX_MUL, OR_MUL, fpl_mul, "mul" },
	{ EX_DIV, OR_DIV, fpl_div, "div" },
};

/* Compare one result; count the expected flags. */
static void one(const struct sweep *s, const char *what, fpl_rnd r, int n, const double *x,
		const oracle_res *want, double got, fpl_state *st, uint64_t *cnt)
{
	int i;

	h_expect(what, s->f, r, n, x, want->value, want->flags, got, st->flags);
	st->flags = 0;
	for (i = 0; i < FPL_NFLAGS; i++)
		if (want->flags & (1u << i))
			cnt[i]++;
}

static void worker(void *arg, int k, int nth)
{
	struct sweep *s = arg;
	const fpl_format *f = s->f;
	fpl_state st;
	uint64_t cnt[FPL_NFLAGS] = { 0 };
	unsigned long long n = 0;
	size_t i, j;
	int q, r, b;

	fpl_state_init(&st, h_seed());
	for (i = (size_t)k; i < s->nvals; i += (size_t)nth) {
		double a = s->vals[i];
		for (q = 0; q < 4; q++) {
			if (!(s->opmask & ops2[q].bit))
				continue;
			for (j = 0; j < s->nvals; j++) {
				double x[2] = { a, s->vals[j] };
				oracle_res want[FPL_RND_COUNT];
				oracle_eval_modes(&s->o, ops2[q].op, x, s->modes, s->nmodes, 0, 32, want);
				for (r = 0; r < s->nmodes; r++) {
					fpl_rnd m = s->modes[r];
					double got = ops2[q].fn(f, x[0], x[1], m, &st);
					one(s, ops2[q].name, m, 2, x, &want[r], got, &st, cnt);
					n++;
				}
			}
		}
		for (r = 0; r < FPL_RND_COUNT; r++) {
			oracle_res want;
			if (!(s->modemask & (1u << r)))
				continue;
			if (s->opmask & EX_SQRT) {
				oracle_eval(&s->o, OR_SQRT, &a, (fpl_rnd)r, 0, 32, &want);
				one(s, "sqrt", (fpl_rnd)r, 1, &a, &want,
				    fpl_sqrt(f, a, (fpl_rnd)r, &st), &st, cnt);
				n++;
			}
			if (s->opmask & EX_ROUND) {
				/* the code itself, and points between it and the next code */
				double pts[4];
				int np = 1;
				pts[0] = a;
				if (i + 1 < s->nvals && a == a && s->vals[i + 1] == s->vals[i + 1]) {
					double c = s->vals[i + 1], mid = a + (c - a) / 2;
					pts[np++] = mid;
					pts[np++] = a + (c - a) / 4;
					pts[np++] = a + 3 * ((c - a) / 4);
				}
				for (b = 0; b < np; b++) {
					oracle_eval(&s->o, OR_ROUND, &pts[b], (fpl_rnd)r, 0, 32, &want);
					one(s, "round", (fpl_rnd)r, 1, &pts[b], &want,
					    fpl_round(f, pts[b], (fpl_rnd)r, &st), &st, cnt);
					n++;
				}
			}
		}
	}
	for (i = 0; i < FPL_NFLAGS; i++)
		if (!h_check(st.count[i] == cnt[i]))
			h_fail("%s: count of flag %s is %llu, expected %llu", f->name,
			       fpl_flag_name((int)i), (unsigned long long)st.count[i],
			       (unsigned long long)cnt[i]);
	s->done[k] = n;
	oracle_thread_done();
}

unsigned long long exhaust_run(const fpl_format *f, const fpl_format *codes_from,
			       unsigned opmask, unsigned modemask, int threads)
{
	struct sweep *s = calloc(1, sizeof *s);
	oracle_fmt oc;
	unsigned long long total = 0;
	uint64_t c, ncodes;
	int k;

	oracle_fmt_init(&s->o, f);
	oracle_fmt_init(&oc, codes_from);
	ncodes = 1ull << oracle_nbits(&oc);
	s->f = f;
	s->opmask = opmask;
	s->modemask = modemask;
	for (k = 0; k < FPL_RND_COUNT; k++)
		if (modemask & (1u << k))
			s->modes[s->nmodes++] = (fpl_rnd)k;
	s->vals = malloc(ncodes * sizeof *s->vals);
	/* codes in order of value along the positive and the negative half
	 * (so that neighbours are adjacent for the EX_ROUND midpoints) */
	for (c = 0; c < ncodes; c++) {
		int ok;
		double v = oracle_decode(&oc, c, &ok);
		if (ok)
			s->vals[s->nvals++] = v;
	}
	if (threads > 16)
		threads = 16;
	h_parallel(threads, worker, s);
	for (k = 0; k < threads; k++)
		total += s->done[k];
	free(s->vals);
	free(s);
	return total;
}

/* ------------------------------------------------------------ fma */

struct fma_job {
	const fpl_format *f;
	oracle_fmt o;
	const double *vals;
	size_t nvals;
	unsigned modemask;
	fpl_rnd modes[FPL_RND_COUNT];
	int nmodes;
	uint64_t ntriples;
	uint64_t salt;
};

static void fma_worker(void *arg, int k, int nth)
{
	struct fma_job *j = arg;
	fpl_state st;
	h_rng rng;
	uint64_t i, cnt[FPL_NFLAGS] = { 0 };
	int r, b;

	fpl_state_init(&st, h_seed());
	h_rng_init(&rng, j->salt * 64 + (uint64_t)k);
	for (i = (uint64_t)k; i < j->ntriples; i += (uint64_t)nth) {
		double x[3];
		oracle_res want[FPL_RND_COUNT];
		for (b = 0; b < 3; b++)
			x[b] = j->vals[h_rng_below(&rng, j->nvals)];
		oracle_eval_modes(&j->o, OR_FMA, x, j->modes, j->nmodes, 0, 32, want);
		for (r = 0; r < j->nmodes; r++) {
			fpl_rnd m = j->modes[r];
			double got = fpl_fma(j->f, x[0], x[1], x[2], m, &st);
			h_expect("fma", j->f, m, 3, x, want[r].value, want[r].flags, got, st.flags);
			st.flags = 0;
			for (b = 0; b < FPL_NFLAGS; b++)
				if (want[r].flags & (1u << b))
					cnt[b]++;
		}
	}
	for (b = 0; b < FPL_NFLAGS; b++)
		if (!h_check(st.count[b] == cnt[b]))
			h_fail("%s: fma: count of flag %s is %llu, expected %llu", j->f->name,
			       fpl_flag_name(b), (unsigned long long)st.count[b],
			       (unsigned long long)cnt[b]);
	oracle_thread_done();
}

unsigned long long exhaust_fma(const fpl_format *f, const fpl_format *codes_from,
			       uint64_t ntriples, unsigned modemask, int threads)
{
	static uint64_t salt;
	struct fma_job j;
	oracle_fmt oc;
	uint64_t c, ncodes;
	double *vals;
	int r, nm = 0;

	memset(&j, 0, sizeof j);
	oracle_fmt_init(&j.o, f);
	oracle_fmt_init(&oc, codes_from);
	ncodes = 1ull << oracle_nbits(&oc);
	vals = malloc(ncodes * sizeof *vals);
	for (c = 0; c < ncodes; c++) {
		int ok;
		double v = oracle_decode(&oc, c, &ok);
		if (ok)
			vals[j.nvals++] = v;
	}
	j.f = f;
	j.vals = vals;
	j.modemask = modemask;
	for (r = 0; r < FPL_RND_COUNT; r++)
		if (modemask & (1u << r))
			j.modes[j.nmodes++] = (fpl_rnd)r;
	j.ntriples = ntriples;
	j.salt = ++salt;
	h_parallel(threads, fma_worker, &j);
	free(vals);
	for (r = 0; r < FPL_RND_COUNT; r++)
		nm += (modemask >> r) & 1;
	return ntriples * (unsigned long long)nm;
}
