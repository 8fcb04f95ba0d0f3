/* SPDX-License-Identifier: MIT */
/*
 * tests/harness.c - counters, seed, failure reports and helpers shared by
 * the test programs (see harness.h).  Nothing here computes an expected
 * value: that is tests/oracle.c's job.
 */
#include "harness.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long max_printed = 20;
#define MAX_PRINTED max_printed

static const char *g_name = "test";
static uint64_t g_seed;
static int g_long;
static atomic_ullong g_checks, g_failures;
static struct timespec g_t0;
static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

const fpl_rnd h_det_modes[7] = {
	FPL_RND_NE, FPL_RND_NA, FPL_RND_NZ, FPL_RND_TP, FPL_RND_TN, FPL_RND_TZ, FPL_RND_OD
};

/* Read the environment once, whether h_init or h_long/h_seed comes first. */
static void read_env(void)
{
	static int done;
	const char *s = getenv("FPLAB_SEED");
	const char *l = getenv("FPLAB_LONG");

	if (done)
		return;
	done = 1;
	clock_gettime(CLOCK_MONOTONIC, &g_t0);
	if (s && *s)
		g_seed = strtoull(s, NULL, 0);
	else
		g_seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
	g_long = l && *l && strcmp(l, "0") != 0;
	if (getenv("FPLAB_TEST_MAXFAIL"))	/* how many failures to print */
		max_printed = strtoull(getenv("FPLAB_TEST_MAXFAIL"), NULL, 0);
}

void h_init(const char *name)
{
	g_name = name;
	read_env();
	printf("%s: seed %llu (replay with FPLAB_SEED=%llu)%s\n", name,
	       (unsigned long long)g_seed, (unsigned long long)g_seed,
	       g_long ? ", long run" : "");
	fflush(stdout);
}

uint64_t h_seed(void)
{
	read_env();
	return g_seed;
}

int h_long(void)
{
	read_env();
	return g_long;
}

uint64_t h_scale(uint64_t n, uint64_t n_long)
{
	return h_long() ? n_long : n;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(H_ASAN)
#define H_ASAN 1
#endif

int h_sanitized(void)
{
#ifdef H_ASAN
	return 1;
#else
	return 0;
#endif
}

double h_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

fpl_format h_format(const char *name)
{
	fpl_format f;
	if (fpl_format_lookup(&f, name))
		h_fail("no format %s", name);
	return f;
}

static double elapsed(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - g_t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - g_t0.tv_nsec);
}

int h_done(void)
{
	unsigned long long c = atomic_load(&g_checks), f = atomic_load(&g_failures);

	printf("%s: %llu checks, %llu failures, %.1f s (seed %llu)\n", g_name, c, f,
	       elapsed(), (unsigned long long)g_seed);
	fflush(stdout);
	if (f == 0 && c == 0) {
		printf("%s: no check was run\n", g_name);
		return 1;
	}
	return f ? 1 : 0;
}

void h_skip(const char *why)
{
	printf("%s: skipped: %s\n", g_name, why);
	fflush(stdout);
	exit(H_SKIP);
}

/* 1 when this thread's last h_check failed and no h_fail reported it yet:
 * h_fail then does not count the failure a second time. */
static _Thread_local int t_pending;

int h_check(int ok)
{
	atomic_fetch_add(&g_checks, 1);
	if (!ok)
		atomic_fetch_add(&g_failures, 1);
	t_pending = !ok;
	return ok;
}

uint64_t h_failures(void)
{
	return atomic_load(&g_failures);
}

static atomic_ullong g_printed;

void h_fail(const char *fmt, ...)
{
	unsigned long long n = atomic_fetch_add(&g_printed, 1) + 1;
	va_list ap;

	if (!t_pending)
		atomic_fetch_add(&g_failures, 1);
	t_pending = 0;

	if (n > MAX_PRINTED)
		return;
	pthread_mutex_lock(&g_print);
	printf("%s: FAIL: ", g_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (n == MAX_PRINTED)
		printf("%s: (further failures counted, not printed)\n", g_name);
	fflush(stdout);
	pthread_mutex_unlock(&g_print);
}

void h_note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g_print);
	printf("%s: ", g_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" [%.1f s]\n", elapsed());
	fflush(stdout);
	pthread_mutex_unlock(&g_print);
}

uint64_t h_bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

double h_from_bits(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

float h_f32(uint32_t u)
{
	float x;
	memcpy(&x, &u, sizeof x);
	return x;
}

uint32_t h_bits32(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

double h_widen32(uint32_t b)
{
	if ((b & 0x7fffffffu) > 0x7f800000u)
		return h_from_bits((uint64_t)(b >> 31) << 63 | 0x7ff0000000000000ull
				   | (uint64_t)(b & 0x7fffffu) << 29);
	return (double)h_f32(b);
}

int h_same(double a, double b)
{
	return h_bits(a) == h_bits(b);
}

const char *h_flags(unsigned fl, char *buf, size_t len)
{
	static const char *names[] = { "inexact", "underflow", "overflow", "divbyzero",
				       "invalid", "saturated", "flushed" };
	size_t used = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < 7; i++)
		if (fl & (1u << i)) {
			int k = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", names[i]);
			if (k < 0 || (size_t)k >= len - used)
				break;
			used += (size_t)k;
		}
	if (fl >> 7)
		snprintf(buf + used, len - used, "%s0x%x", used ? "|" : "", fl >> 7 << 7);
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

const char *h_format_desc(const fpl_format *f, char *buf, size_t len)
{
	static const char *sub[] = { "yes", "no-round", "ftz" };
	static const char *spec[] = { "ieee", "fn", "fnuz", "none", "e8m0" };

	snprintf(buf, len, "%s(e=%d m=%d bias=%d sub=%s daz=%d %s %s tiny=%s nan=%s explim=%d%s)",
		 f->name, f->e, f->m, f->bias,
		 (unsigned)f->subnormal < 3 ? sub[f->subnormal] : "?", f->daz,
		 (unsigned)f->specials < 5 ? spec[f->specials] : "?",
		 f->overflow == FPL_OVF_SATURATE ? "saturate" : "inf",
		 f->tininess == FPL_TINY_BEFORE ? "before" : "after",
		 f->nan_rule == FPL_NAN_CANONICAL ? "canonical" : "x86", f->explim,
		 f->emax_limit_set ? " emax_limit" : "");
	return buf;
}

static const char *mode_name(fpl_rnd r)
{
	static const char *n[] = { "ne", "na", "nz", "tp", "tn", "tz", "sp", "se", "od" };
	return (unsigned)r < 9 ? n[r] : "?";
}

int h_expect(const char *what, const fpl_format *f, fpl_rnd rnd, int nops,
	     const double *ops, double exp_v, unsigned exp_fl, double got_v, unsigned got_fl)
{
	char desc[200], ops_s[200], ef[100], gf[100];
	size_t used = 0;
	int i;

	if (h_check(h_same(exp_v, got_v) && exp_fl == got_fl))
		return 1;
	ops_s[0] = 0;
	for (i = 0; i < nops; i++) {
		int k = snprintf(ops_s + used, sizeof ops_s - used, "%s%a", i ? ", " : "", ops[i]);
		if (k < 0 || (size_t)k >= sizeof ops_s - used)
			break;
		used += (size_t)k;
	}
	h_fail("%s %s mode %s (%s): expected %a [0x%016llx] {%s}, got %a [0x%016llx] {%s}",
	       what, h_format_desc(f, desc, sizeof desc), mode_name(rnd), ops_s, exp_v,
	       (unsigned long long)h_bits(exp_v), h_flags(exp_fl, ef, sizeof ef), got_v,
	       (unsigned long long)h_bits(got_v), h_flags(got_fl, gf, sizeof gf));
	return 0;
}

/* ------------------------------------------------------------- random */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void h_rng_init(h_rng *r, uint64_t salt)
{
	uint64_t s = h_seed() ^ (salt * 0xd1342543de82ef95ull);
	r->s = splitmix(&s);
}

uint64_t h_rng_next(h_rng *r)
{
	return splitmix(&r->s);
}

uint64_t h_rng_below(h_rng *r, uint64_t n)
{
	return n ? h_rng_next(r) % n : 0;
}

/* A significand of `bits` bits (top bit set), TestFloat-style weighting. */
static uint64_t rand_sig(h_rng *r, int bits)
{
	uint64_t top = 1ull << (bits - 1), low = top - 1, s;
	unsigned k = (unsigned)h_rng_below(r, 8);

	switch (k) {
	case 0:	/* a run of ones from the top, the rest zero */
		s = low & ~(low >> h_rng_below(r, (uint64_t)bits));
		break;
	case 1:	/* a run of zeros from the top, the rest ones */
		s = low >> h_rng_below(r, (uint64_t)bits);
		break;
	case 2:	/* one bit set */
		s = bits > 1 ? 1ull << h_rng_below(r, (uint64_t)bits - 1) : 0;
		break;
	case 3:	/* all but one bit set */
		s = bits > 1 ? low & ~(1ull << h_rng_below(r, (uint64_t)bits - 1)) : 0;
		break;
	default:
		s = h_rng_next(r) & low;
	}
	return top | (s & low);
}

double h_rng_value(h_rng *r, int elo, int ehi, int bits, int specials)
{
	uint64_t u = h_rng_next(r);
	int sign = (int)(u & 1);
	double x;

	if (specials && (u >> 1) % 64 == 0) {
		static const uint64_t sp[] = { 0, 0x7ff0000000000000ull, 0x7ff8000000000000ull,
					       0x7ff4000000000000ull, 0x7ffc000000000001ull };
		uint64_t b = sp[(u >> 8) % 5];
		if (b > 0x7ff0000000000000ull)	/* random payload in the top bits */
			b |= (h_rng_next(r) & 0x0007ffffffffffffull) & ~(0x0003ffffffffffffull >> (h_rng_next(r) % 52));
		return h_from_bits(b | ((uint64_t)sign << 63));
	}
	if (bits < 1)
		bits = 1;
	if (bits > 53)
		bits = 53;
	{
		int ex = elo + (int)h_rng_below(r, (uint64_t)(ehi - elo + 1));
		uint64_t s;

		if (ex > 1023)
			ex = 1023;
		if (ex < -1074)
			ex = -1074;
		if (ex - (bits - 1) < -1074)	/* stay exact in binary64 */
			bits = ex + 1075;
		s = rand_sig(r, bits);
		/* exact: s has `bits` bits, scaled so its top bit has weight 2^ex */
		x = ldexp((double)s, ex - (bits - 1));
	}
	return sign ? -x : x;
}

/* ------------------------------------------------------------ threads */

struct job {
	void (*fn)(void *, int, int);
	void *arg;
	int k, n;
};

static void *run_job(void *p)
{
	struct job *j = p;
	j->fn(j->arg, j->k, j->n);
	return NULL;
}

void h_parallel(int nthreads, void (*fn)(void *arg, int k, int n), void *arg)
{
	pthread_t th[16];
	struct job jobs[16];
	int i;

	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 16)
		nthreads = 16;
	for (i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){ fn, arg, i, nthreads };
		if (i > 0 && pthread_create(&th[i], NULL, run_job, &jobs[i]) != 0) {
			fprintf(stderr, "%s: cannot create a thread\n", g_name);
			exit(1);
		}
	}
	run_job(&jobs[0]);
	for (i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
}

int h_threads(void)
{
	const char *s = getenv("FPLAB_TEST_THREADS");
	int n = s && *s ? atoi(s) : 2;
	return n < 1 ? 1 : n > 16 ? 16 : n;
}

double h_engine(const fpl_format *f, oracle_op op, const double *x, fpl_rnd r, fpl_state *st)
{
	switch (op) {
	case OR_ROUND: return fpl_round(f, x[0], r, st);
	case OR_ADD: return fpl_add(f, x[0], x[1], r, st);
	case OR_SUB: return fpl_sub(f, x[0], x[1], r, st);
	case OR_MUL: return fpl_mul(f, x[0], x[1], r, st);
	case OR_DIV: return fpl_div(f, x[0], x[1], r, st);
	case OR_SQRT: return fpl_sqrt(f, x[0], r, st);
	case OR_FMA: return fpl_fma(f, x[0], x[1], x[2], r, st);
	default: return 0;
	}
}

int h_same_state(const fpl_state *a, const fpl_state *b)
{
	return a->flags == b->flags && a->counter == b->counter
	       && memcmp(a->count, b->count, sizeof a->count) == 0;
}
