/* SPDX-License-Identifier: MIT */
/*
 * tests/tstate.c - robustness of the state and of the kernel selection.
 *  1. sr_bits: fpl_state_init sets 32; fpl_state_set_sr_bits accepts
 *     1..32 and refuses anything else with FPL_EINVAL, leaving the state.
 *  2. An out-of-range sr_bits (0, -1, 33, 64, INT_MIN, INT_MAX) written
 *     directly: the scalar operations in sp round with R clamped to 1..32
 *     (result and flags equal the oracle's for the clamped R, the counter
 *     advances by one) and never shift out of range (a SANITIZE=1 build
 *     aborts on any UBSan report); the array operations in sp return
 *     FPL_EINVAL with the output, flags and counter untouched; se and ne
 *     ignore sr_bits.
 *  3. Threads: several threads run fpl_round_array while another one
 *     re-selects kernel sets (fpl_kernels_select, also failing ones, which
 *     must change nothing) and calls fpl_cpu(); every result equals, bit
 *     for bit, the scalar loop computed before the threads start.  The
 *     first use of the kernels and of fpl_cpu() happens inside the
 *     threads.  FPLAB_KERNELS is removed for this part.
 *  4. A child run with FPLAB_KERNELS=nosuchset: the error stays an error
 *     (arrays fail with FPL_ENOTFOUND) until fpl_kernels_select("ref").
 *  5. fpl_state_fork, against its contract in state.h: the child copies
 *     seed, sr_bits, flip, flip_prob and threads, has zero flags and
 *     counts and counter 0, and the parent is unchanged; the child's
 *     stream depends on (parent stream, parent counter, id) only; the
 *     same (parent position, id) gives the same child; 100000 ids of one
 *     parent position give 100000 distinct streams and first draws;
 *     1000 parent counters x 100 ids, and 1000 parent streams, give
 *     distinct streams too (a 64-bit collision among 10^5 values has
 *     probability below 3e-10).  Statistics over 4096 children with
 *     stated bounds (false alarm below 1e-6 each): the mean of each of
 *     the 64 bits of draw 0 within 5 sigma of 0.5 for the top bit and 6
 *     sigma for every bit (sigma = 0.5/64), and the correlation of draw 0
 *     (as a uniform in [0,1)) between children id and id+1, and between
 *     children of parent counters c and c+1, below 5/sqrt(4095) in
 *     magnitude.  Finally, a copy of a state draws exactly what the
 *     original draws (sp rounding, value for value), while a fork does
 *     not: the documented reason fork exists.
 * Expected values: tests/oracle.c (MPFR) with the draw as input; in 3 the
 * reference is the scalar engine, whose agreement with the array
 * functions tarray establishes.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "oracle.h"

static const int bad_r[] = { 0, -1, 33, 64, INT_MIN, INT_MAX };
#define NBAD (sizeof bad_r / sizeof *bad_r)

static int clamp_r(int r)
{
	return r < 1 ? 1 : r > 32 ? 32 : r;
}

static void setter(void)
{
	fpl_state st;
	size_t i;

	fpl_state_init(&st, 5);
	if (!h_check(st.sr_bits == 32))
		h_fail("fpl_state_init: sr_bits %d, want 32", st.sr_bits);
	if (!h_check(fpl_state_set_sr_bits(&st, 1) == 0 && st.sr_bits == 1 &&
		     fpl_state_set_sr_bits(&st, 32) == 0 && st.sr_bits == 32))
		h_fail("fpl_state_set_sr_bits must accept 1 and 32");
	for (i = 0; i < NBAD; i++)
		if (!h_check(fpl_state_set_sr_bits(&st, bad_r[i]) == FPL_EINVAL && st.sr_bits == 32))
			h_fail("fpl_state_set_sr_bits(%d): want FPL_EINVAL and sr_bits kept, got %d",
			       bad_r[i], st.sr_bits);
	h_check(fpl_state_set_sr_bits(NULL, 8) == FPL_EINVAL);
}

/* Part 2, scalar: every operation, sp and se, each bad R. */
static void scalar_bad_r(const char *name, h_rng *r)
{
	fpl_format f;
	oracle_fmt o;
	size_t bi;
	int i;

	if (!h_check(fpl_format_lookup(&f, name) == 0))
		return;
	oracle_fmt_init(&o, &f);
	for (bi = 0; bi < NBAD; bi++)
		for (i = 0; i < 400; i++) {
			oracle_op op = (oracle_op)(i % 7);
			fpl_rnd m = i % 5 == 4 ? FPL_RND_SE : FPL_RND_SP;
			fpl_state st;
			oracle_res w;
			double x[3], got;
			uint64_t ctr, draw;
			int k;

			for (k = 0; k < 3; k++)
				x[k] = h_rng_value(r, o.emin - o.m - 2, o.emax + 1, 53, 0);
			fpl_state_init(&st, h_seed() + (uint64_t)i);
			st.sr_bits = bad_r[bi];
			st.counter = ctr = h_rng_next(r) >> 8;
			draw = fpl_random_draw(st.seed, st.stream, ctr);
			oracle_eval(&o, op, x, m, draw, clamp_r(bad_r[bi]), &w);
			got = h_engine(&f, op, x, m, &st);
			if (!h_expect(bad_r[bi] < 1 ? "sr_bits<1 clamped to 1" : "sr_bits>32 clamped to 32",
				      &f, m, op == OR_FMA ? 3 : op == OR_ROUND || op == OR_SQRT ? 1 : 2, x,
				      w.value, w.flags, got, st.flags))
				h_note("  op %d, sr_bits %d", (int)op, bad_r[bi]);
			if (!h_check(st.counter == ctr + 1 && st.sr_bits == bad_r[bi]))
				h_fail("%s sr_bits %d: counter %llu -> %llu, sr_bits now %d", name, bad_r[bi],
				       (unsigned long long)ctr, (unsigned long long)st.counter, st.sr_bits);
		}
}

/* Part 2, arrays: sp refuses, the state and the output untouched. */
static void array_bad_r(const char *name, h_rng *r)
{
	enum { N = 67 };
	double a[N], b[N], c[N], y[N], want[N];
	float xf[N], yf[N];
	fpl_format f, from;
	fpl_state st, s0;
	size_t bi, j;
	int rc[6], k;

	if (!h_check(fpl_format_lookup(&f, name) == 0 && fpl_format_lookup(&from, "fp32") == 0))
		return;
	for (j = 0; j < N; j++) {
		a[j] = h_rng_value(r, -20, 20, 53, 0);
		b[j] = h_rng_value(r, -20, 20, 53, 0);
		c[j] = h_rng_value(r, -20, 20, 53, 0);
		xf[j] = (float)a[j];
	}
	for (bi = 0; bi < NBAD; bi++) {
		fpl_state_init(&st, 9);
		st.sr_bits = bad_r[bi];
		st.counter = 1000;
		st.flags = FPL_FLAG_OVERFLOW;	/* must stay as it is */
		s0 = st;
		memset(y, 0x5a, sizeof y);
		memset(yf, 0x5a, sizeof yf);
		rc[0] = fpl_round_array(&f, y, a, N, FPL_RND_SP, &st);
		rc[1] = fpl_round_array_f32(&f, yf, xf, N, FPL_RND_SP, &st);
		rc[2] = fpl_add_array(&f, y, a, b, N, FPL_RND_SP, &st);
		rc[3] = fpl_fma_array(&f, y, a, b, c, N, FPL_RND_SP, &st);
		rc[4] = fpl_sqrt_array(&f, y, a, N, FPL_RND_SP, &st);
		rc[5] = fpl_convert_array(&f, &from, y, a, N, FPL_RND_SP, &st);
		for (k = 0; k < 6; k++)
			if (!h_check(rc[k] == FPL_EINVAL))
				h_fail("%s sp array op %d, sr_bits %d: status %d, want FPL_EINVAL", name, k,
				       bad_r[bi], rc[k]);
		for (j = 0; j < N; j++) {
			uint32_t u;
			memcpy(&u, &yf[j], sizeof u);
			if (h_bits(y[j]) != 0x5a5a5a5a5a5a5a5aull || u != 0x5a5a5a5au)
				break;
		}
		if (!h_check(j == N && st.counter == s0.counter && st.flags == s0.flags &&
			     !memcmp(st.count, s0.count, sizeof st.count) && st.sr_bits == s0.sr_bits))
			h_fail("%s sr_bits %d: a refused array call changed its output or state", name,
			       bad_r[bi]);
	}
	/* se and ne ignore sr_bits.  (INT_MIN/INT_MAX left out: see the report
	 * on array.c's deep_scale for an sr_bits that is not checked.) */
	for (bi = 0; bi < 4; bi++)
		for (k = 0; k < 2; k++) {
			fpl_rnd m = k ? FPL_RND_SE : FPL_RND_NE;
			fpl_state_init(&st, 9);
			st.sr_bits = bad_r[bi];
			s0 = st;
			for (j = 0; j < N; j++)
				want[j] = fpl_round(&f, a[j], m, &s0);
			rc[0] = fpl_round_array(&f, y, a, N, m, &st);
			for (j = 0; j < N && h_same(y[j], want[j]); j++)
				;
			if (!h_check(rc[0] == 0 && j == N && st.counter == s0.counter &&
				     st.flags == s0.flags))
				h_fail("%s %s array with sr_bits %d: status %d, element %zu differs", name,
				       fpl_rnd_name(m), bad_r[bi], rc[0], j);
		}
}

/* ------------------------------------------------ part 3: threads */

#define NWORK 3
#define NVEC 2

typedef struct shared {
	fpl_format f;
	double *x;
	size_t n;
	double *ref[NVEC];	/* scalar results: sp, ne */
	fpl_state end[NVEC];	/* the scalar loop's final state */
	int iters;
	atomic_int running;	/* workers not yet finished */
} shared;

static const fpl_rnd vec_mode[NVEC] = { FPL_RND_SP, FPL_RND_NE };

static void *worker(void *arg)
{
	shared *S = arg;
	double *y = malloc(S->n * sizeof *y);
	int it, v;

	for (it = 0; y && it < S->iters; it++) {
		fpl_state st;
		size_t j;
		int rc;

		v = it % NVEC;
		fpl_state_init(&st, 77);
		st.counter = 12345;
		st.threads = 1 + it % 2;
		rc = fpl_round_array(&S->f, y, S->x, S->n, vec_mode[v], &st);
		for (j = 0; j < S->n && h_same(y[j], S->ref[v][j]); j++)
			;
		if (!h_check(rc == 0 && j == S->n && st.counter == S->end[v].counter &&
			     st.flags == S->end[v].flags &&
			     !memcmp(st.count, S->end[v].count, sizeof st.count)))
			h_fail("thread array call %d (%s): status %d, first difference at %zu of %zu", it,
			       fpl_rnd_name(vec_mode[v]), rc, j, S->n);
	}
	free(y);
	atomic_fetch_sub(&S->running, 1);
	return NULL;
}

/* One round of re-selection; the checks hold because this is the only
 * thread that selects. */
static void reselect(const fpl_cpu_features *cpu0, int avx512_ok, int avx2_ok)
{
	const char *before, *reason;
	int rc;

	if (!h_check(fpl_kernels_select("ref") == 0 && !strcmp(fpl_kernels_selected(), "ref")))
		h_fail("fpl_kernels_select(\"ref\") failed");
	rc = fpl_kernels_select("avx2");
	if (!h_check(avx2_ok ? rc == 0 : rc == FPL_EUNSUPPORTED))
		h_fail("fpl_kernels_select(\"avx2\"): %d, expected %s", rc,
		       avx2_ok ? "0" : "FPL_EUNSUPPORTED");
	rc = fpl_kernels_select("avx512");
	if (!h_check(avx512_ok ? rc == 0 : rc == FPL_EUNSUPPORTED))
		h_fail("fpl_kernels_select(\"avx512\"): %d, expected %s", rc,
		       avx512_ok ? "0" : "FPL_EUNSUPPORTED");
	before = fpl_kernels_selected();
	reason = fpl_kernels_reason();
	if (!h_check(fpl_kernels_select("nosuchset") == FPL_ENOTFOUND &&
		     fpl_kernels_select(NULL) == FPL_EINVAL &&
		     !strcmp(fpl_kernels_selected(), before) && fpl_kernels_reason() == reason &&
		     strlen(reason) > 0 && fpl_kernels_status() == 0))
		h_fail("a failed fpl_kernels_select changed the selection (%s: %s)",
		       fpl_kernels_selected(), fpl_kernels_reason());
	if (!h_check(fpl_cpu() == cpu0))
		h_fail("fpl_cpu() moved");
}

static void *selector(void *arg)
{
	shared *S = arg;
	const fpl_cpu_features *c = fpl_cpu();
	int avx512_ok = strstr(fpl_kernels_compiled(), "avx512") && c->avx512f && c->avx512dq &&
			c->avx512bw && c->avx512vl && c->fma;
	int avx2_ok = strstr(fpl_kernels_compiled(), "avx2") && c->avx2 && c->fma;
	int i;

	for (i = 0; i < 50 || atomic_load(&S->running) > 0; i++)
		reselect(c, avx512_ok, avx2_ok);
	return NULL;
}

static void threads(void)
{
	shared S;
	pthread_t th[NWORK + 1];
	h_rng r;
	size_t j;
	int v, t, ok = 1;

	memset(&S, 0, sizeof S);
	S.n = 3001;
	S.iters = (int)h_scale(h_sanitized() ? 40 : 150, 2000);
	if (!h_check(fpl_format_lookup(&S.f, "bf16") == 0))
		return;
	S.x = malloc(S.n * sizeof *S.x);
	for (v = 0; v < NVEC; v++)
		S.ref[v] = malloc(S.n * sizeof *S.ref[v]);
	if (!S.x || !S.ref[0] || !S.ref[1])
		h_skip("out of memory");
	h_rng_init(&r, 3);
	for (j = 0; j < S.n; j++)
		S.x[j] = h_rng_value(&r, -140, 130, 53, j % 97 == 0);
	for (v = 0; v < NVEC; v++) {	/* the reference: the scalar engine */
		fpl_state_init(&S.end[v], 77);
		S.end[v].counter = 12345;
		for (j = 0; j < S.n; j++)
			S.ref[v][j] = fpl_round(&S.f, S.x[j], vec_mode[v], &S.end[v]);
	}
	atomic_init(&S.running, NWORK);
	for (t = 0; t < NWORK + 1 && ok; t++)
		ok = pthread_create(&th[t], NULL, t < NWORK ? worker : selector, &S) == 0;
	if (!ok)
		h_skip("cannot create threads");
	for (t = 0; t < NWORK + 1; t++)
		pthread_join(th[t], NULL);
	h_note("threads: %d array calls in each of %d threads, kernels %s (%s)", S.iters, NWORK,
	       fpl_kernels_selected(), fpl_kernels_reason());
	free(S.x);
	for (v = 0; v < NVEC; v++)
		free(S.ref[v]);
}

/* ------------------------------------------------ part 5: fork */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Number of equal neighbours after sorting v[0..n-1]. */
static size_t duplicates(uint64_t *v, size_t n)
{
	size_t i, d = 0;

	qsort(v, n, sizeof *v, cmp_u64);
	for (i = 1; i < n; i++)
		d += v[i] == v[i - 1];
	return d;
}

/* A parent state with every field away from its default. */
static void busy_parent(fpl_state *p)
{
	fpl_state_init(p, h_seed() ^ 0x666f726bull);
	p->stream = 9;
	p->counter = 12345;
	p->sr_bits = 7;
	p->flip = FPL_FLIP_FRACTION;
	p->flip_prob = 0.25;
	p->threads = 3;
	p->flags = FPL_FLAG_INEXACT | FPL_FLAG_OVERFLOW;
	p->count[0] = 5;
	p->count[2] = 1;
}

static void fork_fields(void)
{
	fpl_state p, p0, c, c2, q;
	int i, zero = 1;

	busy_parent(&p);
	p0 = p;
	memset(&c, 0xa5, sizeof c);
	fpl_state_fork(&p, &c, 42);
	for (i = 0; i < FPL_NFLAGS; i++)
		zero &= c.count[i] == 0;
	if (!h_check(c.seed == p.seed && c.sr_bits == 7 && c.flip == FPL_FLIP_FRACTION &&
		     c.flip_prob == 0.25 && c.threads == 3 && c.flags == 0 && zero && c.counter == 0))
		h_fail("fpl_state_fork: child fields seed %llu sr_bits %d flip %d flip_prob %g "
		       "threads %d flags %u counter %llu", (unsigned long long)c.seed, c.sr_bits,
		       (int)c.flip, c.flip_prob, c.threads, c.flags, (unsigned long long)c.counter);
	if (!h_check(!memcmp(&p, &p0, sizeof p)))
		h_fail("fpl_state_fork changed the parent");
	memset(&c2, 0x3c, sizeof c2);
	fpl_state_fork(&p, &c2, 42);
	if (!h_check(!memcmp(&c, &c2, sizeof c)))
		h_fail("fpl_state_fork: the same (parent position, id) gave different children");
	/* the stream is a function of (stream, counter, id) only */
	q = p;
	q.seed ^= 1;
	q.sr_bits = 32;
	q.flags = 0;
	q.flip = FPL_FLIP_NONE;
	q.threads = 1;
	fpl_state_fork(&q, &c2, 42);
	if (!h_check(c2.stream == c.stream && c2.seed == q.seed))
		h_fail("fpl_state_fork: the child stream depends on more than the parent position");
	q = p;
	q.counter++;
	fpl_state_fork(&q, &c2, 42);
	if (!h_check(c2.stream != c.stream))
		h_fail("fpl_state_fork: parent counters 12345 and 12346 give the same stream");
	q = p;
	q.stream++;
	fpl_state_fork(&q, &c2, 42);
	if (!h_check(c2.stream != c.stream))
		h_fail("fpl_state_fork: parent streams 9 and 10 give the same stream");
}

static void fork_distinct(void)
{
	enum { N = 100000 };
	uint64_t *s = malloc(N * sizeof *s), *d = malloc(N * sizeof *d);
	fpl_state p, c;
	size_t i, ds, dd;

	if (!s || !d) {
		free(s);
		free(d);
		h_skip("out of memory");
	}
	busy_parent(&p);
	for (i = 0; i < N; i++) {	/* one parent position, N ids */
		fpl_state_fork(&p, &c, i);
		s[i] = c.stream;
		d[i] = fpl_random_draw(c.seed, c.stream, 0);
	}
	ds = duplicates(s, N);
	dd = duplicates(d, N);
	if (!h_check(ds == 0 && dd == 0))
		h_fail("fpl_state_fork: %d ids of one parent position: %zu equal streams, "
		       "%zu equal first draws", N, ds, dd);
	for (i = 0; i < N; i++) {	/* 1000 parent counters x 100 ids */
		p.counter = 1000000 + i / 100;
		fpl_state_fork(&p, &c, i % 100);
		s[i] = c.stream;
	}
	if (!h_check(duplicates(s, N) == 0))
		h_fail("fpl_state_fork: 1000 parent counters x 100 ids give equal streams");
	p.counter = 7;
	for (i = 0; i < 1000; i++) {	/* 1000 parent streams, one counter, one id */
		p.stream = i;
		fpl_state_fork(&p, &c, 3);
		s[i] = c.stream;
	}
	if (!h_check(duplicates(s, 1000) == 0))
		h_fail("fpl_state_fork: 1000 parent streams give equal child streams");
	free(s);
	free(d);
}

static double unit(uint64_t u)
{
	return (double)(u >> 11) * 0x1p-53;
}

/* Pearson correlation of x[i] and y[i], i < n. */
static double correlation(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
	int i;

	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	return sxy / sqrt(sxx * syy);
}

static void fork_statistics(void)
{
	enum { N = 4096 };
	static double u[N + 1], v[N + 1];
	double sigma = 0.5 / 64, rho_max = 5 / sqrt(N - 1.0), rho1, rho2;
	unsigned ones[64] = { 0 };
	fpl_state p, c;
	int i, b, bad = -1;

	busy_parent(&p);
	for (i = 0; i <= N; i++) {
		uint64_t x;

		fpl_state_fork(&p, &c, (uint64_t)i);
		x = fpl_random_draw(c.seed, c.stream, c.counter);
		u[i] = unit(x);
		if (i < N)
			for (b = 0; b < 64; b++)
				ones[b] += (unsigned)(x >> b & 1);
	}
	for (b = 0; b < 64; b++)
		if (fabs(ones[b] / (double)N - 0.5) > 6 * sigma)
			bad = b;
	if (!h_check(fabs(ones[63] / (double)N - 0.5) <= 5 * sigma && bad < 0))
		h_fail("fpl_state_fork: first draws of %d children: top bit mean %.4f (bound "
		       "0.5 +- %.4f), bit %d beyond 6 sigma", N, ones[63] / (double)N, 5 * sigma,
		       bad);
	rho1 = correlation(u, u + 1, N);
	for (i = 0; i <= N; i++) {	/* same id, consecutive parent counters */
		p.counter = 500 + (uint64_t)i;
		fpl_state_fork(&p, &c, 11);
		v[i] = unit(fpl_random_draw(c.seed, c.stream, 0));
	}
	rho2 = correlation(v, v + 1, N);
	if (!h_check(fabs(rho1) < rho_max && fabs(rho2) < rho_max))
		h_fail("fpl_state_fork: correlation of neighbouring children %.4f (ids), %.4f "
		       "(parent counters), bound %.4f", rho1, rho2, rho_max);
	h_note("fork: top bit mean %.4f, neighbour correlations %.4f (ids) %.4f (counters), "
	       "bound %.4f", ones[63] / (double)N, rho1, rho2, rho_max);
}

/* A copy draws what the original draws; a fork does not.  se rounds an
 * inexact value either way with probability 1/2, so two independent
 * streams disagree on about half of the inexact values. */
static void fork_vs_copy(void)
{
	enum { N = 1000 };
	fpl_format f;
	fpl_state p, copy, child, ne;
	h_rng r;
	int i, k, same_copy = 1, differ = 0, inexact = 0;

	if (!h_check(fpl_format_lookup(&f, "bf16") == 0))
		return;
	fpl_state_init(&p, h_seed());
	fpl_state_init(&ne, 0);
	p.counter = 99;
	copy = p;
	fpl_state_fork(&p, &child, 0);
	child.counter = p.counter;	/* even at the same counter, another stream */
	h_rng_init(&r, 55);
	for (i = 0; i < N; i++) {
		double x = h_rng_value(&r, -20, 20, 53, 0);

		for (k = 0; k < 2; k++) {
			fpl_rnd m = k ? FPL_RND_SE : FPL_RND_SP;
			double a = fpl_round(&f, x, m, &p), b = fpl_round(&f, x, m, &copy);
			double c = fpl_round(&f, x, m, &child);

			same_copy &= h_same(a, b);
			if (m == FPL_RND_SE && fpl_round(&f, x, FPL_RND_NE, &ne) != x) {
				inexact++;
				differ += !h_same(a, c);
			}
		}
	}
	if (!h_check(same_copy && p.counter == copy.counter && p.flags == copy.flags))
		h_fail("a copied state must draw the very numbers of its original");
	/* Binomial(inexact, 1/2) below inexact/4: probability below 1e-25 for
	 * inexact >= 400 */
	if (!h_check(inexact >= 400 && differ > inexact / 4))
		h_fail("a forked state drew like its parent: %d of %d inexact se results differ",
		       differ, inexact);
	h_note("fork: copy drew like its original; fork differs on %d of %d inexact se results",
	       differ, inexact);
}

static void fork_tests(void)
{
	fork_fields();
	fork_distinct();
	fork_statistics();
	fork_vs_copy();
}

/* ------------------------------------------------ part 4: child */

static int child_main(void)
{
	fpl_format f;
	fpl_state st;
	double x = 1.5, y = 0;

	h_init("tstate[FPLAB_KERNELS=nosuchset]");
	fpl_format_lookup(&f, "bf16");
	fpl_state_init(&st, 1);
	if (!h_check(fpl_kernels_status() == FPL_ENOTFOUND && !strcmp(fpl_kernels_selected(), "none") &&
		     strstr(fpl_kernels_reason(), "nosuchset") != NULL))
		h_fail("FPLAB_KERNELS=nosuchset: status %d, selected %s, reason %s",
		       fpl_kernels_status(), fpl_kernels_selected(), fpl_kernels_reason());
	if (!h_check(fpl_round_array(&f, &y, &x, 1, FPL_RND_NE, &st) == FPL_ENOTFOUND && y == 0))
		h_fail("arrays must fail with FPL_ENOTFOUND under an unknown FPLAB_KERNELS");
	if (!h_check(fpl_kernels_select("other") == FPL_ENOTFOUND &&
		     fpl_kernels_status() == FPL_ENOTFOUND))
		h_fail("a failed select must leave the FPLAB_KERNELS error");
	if (!h_check(fpl_kernels_select("ref") == 0 && fpl_kernels_status() == 0 &&
		     !strcmp(fpl_kernels_selected(), "ref") &&
		     fpl_round_array(&f, &y, &x, 1, FPL_RND_NE, &st) == 0 && y == 1.5))
		h_fail("fpl_kernels_select(\"ref\") must clear the FPLAB_KERNELS error");
	return h_done();
}

static int run_child(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		char self[4096];
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		if (k < 0)
			_exit(1);
		self[k] = 0;
		setenv("FPLAB_KERNELS", "nosuchset", 1);
		setenv("TSTATE_CHILD", "1", 1);
		execl(self, self, (char *)NULL);
		_exit(1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int main(void)
{
	static const char *fmts[] = { "fp16", "bf16", "e4m3fn", "e5m2", "e2m1", "fp32" };
	h_rng r;
	size_t i;
	int rc;

	if (getenv("TSTATE_CHILD"))
		return child_main();
	unsetenv("FPLAB_KERNELS");	/* part 3 needs the automatic choice */
	h_init("tstate");
	setter();
	h_rng_init(&r, 1);
	for (i = 0; i < sizeof fmts / sizeof *fmts; i++)
		scalar_bad_r(fmts[i], &r);
	threads();	/* before any other array call: first use in threads */
	for (i = 0; i < sizeof fmts / sizeof *fmts; i++)
		array_bad_r(fmts[i], &r);
	fork_tests();
	rc = run_child();
	if (!h_check(rc == 0))
		h_fail("the run with FPLAB_KERNELS=nosuchset failed (exit %d)", rc);
	oracle_thread_done();
	return h_done();
}
