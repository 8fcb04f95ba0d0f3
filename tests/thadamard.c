/* SPDX-License-Identifier: MIT */
/*
 * tests/thadamard.c - NVFP4 training's 16-point random Hadamard transform
 * (train/hadamard.c, the trainer's key rht).
 *
 * Expected values never come from the code under test:
 *  - the transform against R = (1/4) H16 diag(s) built here by
 *    Sylvester's construction (H1 = [1], H2n = [[Hn, Hn], [Hn, -Hn]]) and
 *    applied as a straight-line matrix product: bit for bit on integer
 *    inputs (where both are exact), within the stated error bound on any
 *    binary64 inputs (reference in long double); the inverse (transpose
 *    = 1) against R^T likewise; unit vectors give R's columns;
 *  - orthogonality: R^T (R x) = x and |R x|^2 = |x|^2 exactly on integer
 *    inputs; the tail rows (rows % 16) copied, columns past cols never
 *    written, in place = out of place; an infinity or a NaN spreads over
 *    its block only;
 *  - the weight gradient: (R G)^T (R H) through fpl_accum_gemm (binary64,
 *    as the trainer calls it) equals G^T H summed here in integers, bit
 *    for bit, with K a multiple of 16 and not;
 *  - the signs: bit 63 of fpl_random_draw(seed, "rht" stream, i), the same
 *    from two threads and on a repeat, balanced over many seeds;
 *  - the trainer: with every format binary64 and no blocks, one step
 *    with rht equals one without to binary64's rounding; under nvfp4 rht
 *    changes the bits, rht = 16 takes the run's seed (= 16:SEED with
 *    that seed), and an epoch gives the same bits on 1 and 2 threads;
 *  - the key: good and bad spellings with their messages, describe ->
 *    set reads rht back; a bwd that loads as given, and a size other than
 *    16 set by hand, are refused by the check and by fpl_trainer_create.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/dataset.h>
#include <fplab/train.h>

#include "harness.h"
#include "train/train_internal.h"

#define CHECK(cond, ...) do { if (!h_check(cond)) h_fail(__VA_ARGS__); } while (0)
#define N 16
#define RHT_STREAM 0x7268740000000000ull	/* the stream hadamard.c documents */

static double H16[N][N];

/* Sylvester: H1 = [1]; H2n = [[Hn, Hn], [Hn, -Hn]]. */
static void sylvester(void)
{
	size_t n, i, j;

	H16[0][0] = 1;
	for (n = 1; n < N; n *= 2)
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++) {
				H16[i][j + n] = H16[i][j];
				H16[i + n][j] = H16[i][j];
				H16[i + n][j + n] = -H16[i][j];
			}
}

/* R[i][j] = H16[i][j] s[j] / 4 (transpose: R^T[i][j] = s[i] H16[j][i] / 4). */
static double rmat(const double *s, size_t i, size_t j, int transpose)
{
	return transpose ? s[i] * H16[j][i] / 4 : H16[i][j] * s[j] / 4;
}

static void signs_of(uint64_t seed, double *s)
{
	size_t i;

	for (i = 0; i < N; i++)
		s[i] = fpl_random_draw(seed, RHT_STREAM, i) >> 63 ? -1 : 1;
}

/* A random integer in (-2^bits, 2^bits), times 2^e. */
static double rint_val(h_rng *r, int bits, int e)
{
	double v = (double)h_rng_below(r, (uint64_t)1 << bits);

	return ldexp(h_rng_below(r, 2) ? -v : v, e);
}

/* ------------------------------------------------------------ signs */

typedef struct { uint64_t seed0; double s[64][N]; } sign_job;

static void sign_worker(void *arg, int k, int n)
{
	sign_job *j = arg;
	int i;

	for (i = k; i < 64; i += n)
		tr__rht_signs(j->seed0 + (uint64_t)i, j->s[i]);
}

static void test_signs(void)
{
	double s[N], t[N], u[N];
	static sign_job job;
	size_t i, neg = 0, total = 0;
	uint64_t seed;
	int same;

	for (seed = 0; seed < 1000; seed++) {
		tr__rht_signs(seed, s);
		signs_of(seed, t);
		for (i = 0; i < N; i++) {
			CHECK(s[i] == t[i], "signs of seed %llu, %zu: %g, expected %g",
			      (unsigned long long)seed, i, s[i], t[i]);
			neg += s[i] < 0;
			total++;
		}
	}
	CHECK(neg > total * 45 / 100 && neg < total * 55 / 100, "signs: %zu of %zu negative", neg,
	      total);
	tr__rht_signs(7, s);
	tr__rht_signs(7, u);
	CHECK(!memcmp(s, u, sizeof s), "signs of seed 7: a repeat differs");
	tr__rht_signs(8, u);
	CHECK(memcmp(s, u, sizeof s) != 0, "seeds 7 and 8 give the same signs");
	/* from two threads: the same as one by one */
	job.seed0 = h_seed();
	h_parallel(2, sign_worker, &job);
	same = 1;
	for (i = 0; i < 64; i++) {
		tr__rht_signs(job.seed0 + i, s);
		same &= !memcmp(s, job.s[i], sizeof s);
	}
	CHECK(same, "signs from two threads differ from one thread's");
}

/* ------------------------------------------------------------ the transform */

/* y = R x (or R^T x) block by block in long double, the straight-line
 * product (rows past the last full block copied). */
static void reference(long double *y, const double *x, size_t rows, size_t cols, size_t ld,
		      const double *s, int transpose)
{
	size_t b, i, j, c;

	for (b = 0; b + N <= rows; b += N)
		for (i = 0; i < N; i++)
			for (c = 0; c < cols; c++) {
				long double acc = 0;

				for (j = 0; j < N; j++)
					acc += (long double)rmat(s, i, j, transpose)
					       * x[(b + j) * ld + c];
				y[(b + i) * cols + c] = acc;
			}
	for (i = rows - rows % N; i < rows; i++)
		for (c = 0; c < cols; c++)
			y[i * cols + c] = x[i * ld + c];
}

static void test_exact(h_rng *r, size_t rows, size_t cols, size_t ld, int transpose)
{
	double *x = calloc(rows * ld, sizeof *x), *y = malloc(rows * ld * sizeof *y);
	double *z = malloc(rows * ld * sizeof *z), *w = malloc(rows * ld * sizeof *w);
	long double *ref = malloc(rows * cols * sizeof *ref);
	double s[N];
	size_t i, c, bad = 0;
	int e = (int)h_rng_below(r, 40) - 20;

	signs_of(h_seed() + rows, s);
	for (i = 0; i < rows * ld; i++)	/* integers times 2^e, below 2^(e+30) */
		x[i] = rint_val(r, 30, e);
	for (i = 0; i < rows * ld; i++)
		y[i] = z[i] = -99.5;	/* the padding past cols: never written */
	tr__rht_rows(y, ld, x, ld, rows, cols, s, transpose);
	reference(ref, x, rows, cols, ld, s, transpose);
	for (i = 0; i < rows; i++)
		for (c = 0; c < ld; c++) {
			double want = c < cols ? (double)ref[i * cols + c] : -99.5;

			if (!h_same(y[i * ld + c], want) && bad++ < 3)
				h_fail("R%s x, %zu x %zu, [%zu][%zu]: %a, expected %a",
				       transpose ? "^T" : "", rows, cols, i, c, y[i * ld + c], want);
		}
	h_check(bad == 0);
	/* the inverse gives x back exactly, and in place = out of place */
	tr__rht_rows(z, ld, y, ld, rows, cols, s, !transpose);
	memcpy(w, y, rows * ld * sizeof *w);
	tr__rht_rows(w, ld, w, ld, rows, cols, s, !transpose);
	for (i = 0, bad = 0; i < rows; i++)
		for (c = 0; c < cols; c++)
			bad += !h_same(z[i * ld + c], x[i * ld + c]) || !h_same(w[i * ld + c], z[i * ld + c]);
	CHECK(bad == 0, "R%s then its inverse, %zu x %zu: %zu values differ from x (or in place)",
	      transpose ? "^T" : "", rows, cols, bad);
	free(x);
	free(y);
	free(z);
	free(w);
	free(ref);
}

/* Any binary64 inputs: within gamma_4 * sum |x_j| / 4 (hadamard.c) plus
 * the long double reference's own error. */
static void test_bound(h_rng *r)
{
	double x[N * 3], y[N * 3], s[N];
	long double ref[N * 3];
	size_t it, i, c;
	const double u = ldexp(1, -53), g4 = 4 * u / (1 - 4 * u);

	for (it = 0; it < h_scale(2000, 50000); it++) {
		int t = (int)(it % 2);

		signs_of(it, s);
		for (i = 0; i < N * 3; i++)
			x[i] = h_rng_value(r, -30, 30, 53, 0);
		tr__rht_rows(y, 3, x, 3, N, 3, s, t);
		reference(ref, x, N, 3, 3, s, t);
		for (i = 0; i < N; i++)
			for (c = 0; c < 3; c++) {
				double sum = 0, tol;
				size_t j;

				for (j = 0; j < N; j++)
					sum += fabs(x[j * 3 + c]);
				tol = (g4 + 32 * ldexp(1, -64)) * sum / 4;
				if (!h_check(fabsl((long double)y[i * 3 + c] - ref[i * 3 + c]) <= tol))
					h_fail("R x, any inputs: [%zu][%zu] %a, reference %La, bound %a",
					       i, c, y[i * 3 + c], ref[i * 3 + c], tol);
			}
	}
}

/* R's columns (unit vectors), |R x|^2 = |x|^2, specials. */
static void test_columns_norm(h_rng *r)
{
	double x[N], y[N], s[N], nx = 0, ny = 0;
	size_t i, j, bad = 0;

	signs_of(3, s);
	for (j = 0; j < N; j++) {
		memset(x, 0, sizeof x);
		x[j] = 1;
		tr__rht_rows(y, 1, x, 1, N, 1, s, 0);
		for (i = 0; i < N; i++)
			bad += y[i] != H16[i][j] * s[j] / 4;
	}
	CHECK(bad == 0, "R e_j is not column j of (1/4) H16 diag(s): %zu values", bad);
	for (i = 0; i < N; i++)
		x[i] = rint_val(r, 10, 0);
	tr__rht_rows(y, 1, x, 1, N, 1, s, 0);
	for (i = 0; i < N; i++) {
		nx += x[i] * x[i];
		ny += y[i] * y[i];
	}
	CHECK(nx == ny, "|R x|^2 = %a, |x|^2 = %a", ny, nx);
	/* an infinity: every output of its block inf or NaN; the next block
	 * untouched */
	{
		double a[2 * N], b[2 * N];

		for (i = 0; i < 2 * N; i++)
			a[i] = (double)i;
		a[5] = INFINITY;
		tr__rht_rows(b, 1, a, 1, 2 * N, 1, s, 0);
		for (i = 0, bad = 0; i < N; i++)
			bad += !(isinf(b[i]) || isnan(b[i])) || isnan(b[N + i]) || isinf(b[N + i]);
		CHECK(bad == 0, "an infinity in the first block: %zu outputs wrong", bad);
		a[5] = NAN;
		tr__rht_rows(b, 1, a, 1, 2 * N, 1, s, 0);
		for (i = 0, bad = 0; i < N; i++)
			bad += !isnan(b[i]) || isnan(b[N + i]);
		CHECK(bad == 0, "a NaN in the first block: %zu outputs wrong", bad);
	}
	/* zero rows: nothing happens */
	tr__rht_rows(y, 1, x, 1, 0, 1, s, 0);
}

/* (R G)^T (R H) = G^T H: integers, exact everywhere. */
static void test_dw(h_rng *r, size_t n, size_t m, size_t k)
{
	double *G = malloc(n * m * sizeof *G), *H = malloc(n * k * sizeof *H);
	double *RG = malloc(n * m * sizeof *RG), *RH = malloc(n * k * sizeof *RH);
	double *dw = malloc(m * k * sizeof *dw), *dw0 = malloc(m * k * sizeof *dw0);
	double s[N];
	fpl_accum_model mod;
	fpl_state st;
	size_t i, j, q, bad = 0, bad0 = 0;
	int rc;

	signs_of(h_seed() ^ n, s);
	for (i = 0; i < n * m; i++)
		G[i] = rint_val(r, 8, 0);
	for (i = 0; i < n * k; i++)
		H[i] = rint_val(r, 8, 0);
	tr__rht_rows(RG, m, G, m, n, m, s, 0);
	tr__rht_rows(RH, k, H, k, n, k, s, 0);
	fpl_accum_init(&mod);	/* binary64 inputs and accumulator, exact products */
	mod.a = mod.b = mod.acc = h_format("fp64");
	fpl_state_init(&st, 1);
	rc = fpl_accum_gemm(dw, k, &mod, 0, m, k, n, RG, m, 1, RH, k, 0, NULL, &st);
	rc |= fpl_accum_gemm(dw0, k, &mod, 0, m, k, n, G, m, 1, H, k, 0, NULL, &st);
	CHECK(rc == 0, "fpl_accum_gemm: %d", rc);
	for (i = 0; i < m; i++)
		for (j = 0; j < k; j++) {
			long long want = 0;

			for (q = 0; q < n; q++)
				want += (long long)G[q * m + i] * (long long)H[q * k + j];
			bad += dw[i * k + j] != (double)want;
			bad0 += dw0[i * k + j] != (double)want;
		}
	CHECK(bad == 0 && bad0 == 0, "dW with rht, K = %zu: %zu of %zu differ from G^T H (%zu "
	      "without rht)", n, bad, m * k, bad0);
	free(G);
	free(H);
	free(RG);
	free(RH);
	free(dw);
	free(dw0);
}

/* ------------------------------------------------------------ the key */

static void expect_set(fpl_train_policy *p, const char *v, int want, const char *msg)
{
	char err[256];
	int rc = fpl_train_policy_set(p, "rht", v, err, sizeof err);

	CHECK(rc == want, "rht = '%s': %d, expected %d (%s)", v, rc, want, err);
	if (msg)
		CHECK(strstr(err, msg) != NULL, "rht = '%s': message '%s', expected '%s'", v, err,
		      msg);
}

static void test_key(void)
{
	static const char *const bad[] = {
		"", "on", "16x", "16:", "16:x", "16:-1", "16:+1", "16: 7", " 16", "16:7:1",
		"16:18446744073709551616", "x:7", NULL
	};
	fpl_train_policy p, q;
	char buf[4096], err[256], *line, *save = NULL;
	size_t i;
	int rc;

	fpl_train_policy_preset(&p, "nvfp4");
	CHECK(p.rht.n == 0, "nvfp4's rht: %u, expected none", p.rht.n);
	fpl_train_policy_describe(&p, buf, sizeof buf);
	CHECK(strstr(buf, "rht") == NULL, "nvfp4's describe names rht: %s", buf);
	expect_set(&p, "16", 0, NULL);
	CHECK(p.rht.n == 16 && !p.rht.seeded, "rht = 16: n %u, seeded %d", p.rht.n, p.rht.seeded);
	expect_set(&p, "16:18446744073709551615", 0, NULL);
	CHECK(p.rht.seeded && p.rht.seed == UINT64_MAX, "rht = 16:2^64-1: seed %llu",
	      (unsigned long long)p.rht.seed);
	expect_set(&p, "16:7", 0, NULL);
	CHECK(p.rht.n == 16 && p.rht.seeded && p.rht.seed == 7, "rht = 16:7");
	q = p;
	for (i = 0; bad[i]; i++) {
		expect_set(&p, bad[i], FPL_EPARSE, "rht: expected none, 16 or 16:SEED");
		CHECK(!memcmp(&p.rht, &q.rht, sizeof p.rht), "rht = '%s' changed the policy", bad[i]);
	}
	expect_set(&p, "32", FPL_EPARSE, "only the 16-point transform");
	expect_set(&p, "4:1", FPL_EPARSE, "only the 16-point transform");
	/* describe -> set: rht reads back */
	fpl_train_policy_describe(&p, buf, sizeof buf);
	CHECK(strstr(buf, "\nrht = 16:7\n") != NULL, "describe: %s", buf);
	fpl_train_policy_preset(&q, "nvfp4");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strstr(line, " = ");

		if (line[0] == '#' || !eq)
			continue;
		*eq = 0;
		rc = fpl_train_policy_set(&q, line, eq + 3, err, sizeof err);
		CHECK(rc == 0, "describe's line %s: %s", line, err);
	}
	CHECK(!memcmp(&q.rht, &p.rht, sizeof p.rht), "rht after describe -> set");
	expect_set(&p, "16", 0, NULL);
	fpl_train_policy_describe(&p, buf, sizeof buf);
	CHECK(strstr(buf, "\nrht = 16\n") != NULL, "describe of rht = 16: %s", buf);
	expect_set(&p, "none", 0, NULL);
	CHECK(p.rht.n == 0, "rht = none");
	/* a bwd that takes its inputs as given */
	{
		fpl_train_config c;

		fpl_train_config_init(&c);
		fpl_train_policy_preset(&p, "fp32");
		fpl_train_policy_set(&p, "rht", "16", NULL, 0);
		CHECK(fpl_train_policy_check(&p, &c, err, sizeof err) == 0, "fp32 + rht: %s", err);
		fpl_train_policy_set(&p, "bwd.profile", "fp32-fma", NULL, 0);
		rc = fpl_train_policy_check(&p, &c, err, sizeof err);
		CHECK(rc == FPL_EINVAL && strstr(err, "rht: ") && strstr(err, "bwd.profile fp32-fma"),
		      "rht with a given bwd: %d '%s'", rc, err);
		fpl_train_policy_preset(&p, "fp32");
		p.rht.n = 8;	/* set by hand: fpl_train_policy_set cannot */
		rc = fpl_train_policy_check(&p, &c, err, sizeof err);
		CHECK(rc == FPL_EINVAL && strstr(err, "only the 16-point"), "rht.n = 8: %d '%s'", rc,
		      err);
		{
			fpl_trainer *t = NULL;

			CHECK(fpl_trainer_create(&t, &c, &p) == FPL_EINVAL && !t,
			      "fpl_trainer_create with rht.n = 8");
		}
	}
}

/* ------------------------------------------------------------ the trainer */

static fpl_trainer *make(const fpl_train_config *c, const fpl_train_policy *p)
{
	fpl_trainer *t = NULL;
	int r = fpl_trainer_create(&t, c, p);

	CHECK(r == 0 && t, "fpl_trainer_create: %d", r);
	return t;
}

static void set(fpl_train_policy *p, const char *key, const char *v)
{
	char err[256];

	if (!h_check(fpl_train_policy_set(p, key, v, err, sizeof err) == 0))
		h_fail("set %s = %s: %s", key, v, err);
}

/* Largest |a - b| over every weight and bias; *same: bit for bit. */
static double diff(const fpl_trainer *a, const fpl_trainer *b, const fpl_train_config *c,
		   int *same)
{
	double md = 0;
	size_t l, i;

	*same = 1;
	for (l = 1; l < c->nsizes; l++) {
		size_t nw = c->sizes[l] * c->sizes[l - 1], nb = c->sizes[l];
		const double *wa = fpl_trainer_weights(a, l), *wb = fpl_trainer_weights(b, l);
		const double *ba = fpl_trainer_bias(a, l), *bb = fpl_trainer_bias(b, l);

		for (i = 0; i < nw + nb; i++) {
			double x = i < nw ? wa[i] : ba[i - nw], y = i < nw ? wb[i] : bb[i - nw];

			*same &= h_same(x, y);
			if (!(fabs(x - y) <= md))
				md = fabs(x - y);
		}
	}
	return md;
}

/* Everything binary64, no blocks: a step with rht = one without, but for
 * binary64's roundings (of the transform and of the GEMM's sums). */
static void test_binary64_step(const fpl_dataset *ds, size_t batch)
{
	static const char *const keys[] = { "act", "grad", "weight", "state", "arith", "unscale",
					    "comm", "comm-acc", NULL };
	fpl_train_config c;
	fpl_train_policy p, q;
	fpl_trainer *a, *b;
	size_t rows[64], i, l;
	double md, mw = 0;
	int same;

	fpl_train_config_init(&c);
	c.nsizes = 3;
	c.sizes[0] = ds->d;
	c.sizes[1] = 24;
	c.sizes[2] = 4;
	c.batch = batch;
	c.seed = 11;
	fpl_train_policy_preset(&p, "fp32");
	set(&p, "fwd", "-f fp64 --acc fp64");
	set(&p, "bwd", "-f fp64 --acc fp64");
	set(&p, "red", "-f fp64 --acc fp64");
	for (i = 0; keys[i]; i++)
		set(&p, keys[i], "fp64");
	q = p;
	set(&q, "rht", "16:3");
	a = make(&c, &p);
	b = make(&c, &q);
	if (!a || !b)
		goto out;
	for (l = 1; l < c.nsizes; l++)	/* the size of the first update */
		for (i = 0; i < c.sizes[l] * c.sizes[l - 1]; i++)
			mw = fmax(mw, fabs(fpl_trainer_weights(a, l)[i]));
	for (i = 0; i < batch; i++)
		rows[i] = i;
	CHECK(fpl_trainer_step(a, ds, rows, NULL) == 0 && fpl_trainer_step(b, ds, rows, NULL) == 0,
	      "binary64 steps");
	md = diff(a, b, &c, &same);
	CHECK(md <= ldexp(mw, -40), "binary64, batch %zu: rht changes a weight by %a (weights "
	      "up to %a)", batch, md, mw);
out:
	fpl_trainer_free(a);
	fpl_trainer_free(b);
}

/* nvfp4: rht changes the bits; rht = 16 is 16:SEED with the run's seed;
 * an epoch on 1 and 2 threads gives the same bits. */
static void test_nvfp4(const fpl_dataset *ds)
{
	fpl_train_config c;
	fpl_train_policy p, q, d;
	fpl_trainer *t[5] = { NULL };
	int same, k;
	char seed[32];

	fpl_train_config_init(&c);
	c.nsizes = 3;
	c.sizes[0] = ds->d;
	c.sizes[1] = 32;
	c.sizes[2] = 4;
	c.batch = 40;	/* 2 blocks of 16 and 8 rows untransformed */
	c.seed = 5;
	fpl_train_policy_preset(&p, "nvfp4");
	q = p;
	set(&q, "rht", "16");
	d = p;
	snprintf(seed, sizeof seed, "16:%llu", (unsigned long long)c.seed);
	set(&d, "rht", seed);
	t[0] = make(&c, &p);
	t[1] = make(&c, &q);
	t[2] = make(&c, &d);
	c.threads = 2;
	t[3] = make(&c, &q);
	c.threads = 1;
	set(&d, "rht", "16:6");
	t[4] = make(&c, &d);
	for (k = 0; k < 5; k++)
		if (!t[k] || !h_check(fpl_trainer_epoch(t[k], ds, NULL, NULL, NULL) == 0)) {
			h_fail("nvfp4: trainer %d: no epoch", k);
			goto out;
		}
	diff(t[0], t[1], &c, &same);
	CHECK(!same, "nvfp4: rht = 16 changes no bit");
	diff(t[1], t[2], &c, &same);
	CHECK(same, "nvfp4: rht = 16 differs from 16:SEED with the run's seed");
	diff(t[1], t[3], &c, &same);
	CHECK(same, "nvfp4 with rht: 1 and 2 threads differ");
	diff(t[1], t[4], &c, &same);
	CHECK(!same, "nvfp4: rht seeds 5 and 6 give the same bits");
out:
	for (k = 0; k < 5; k++)
		fpl_trainer_free(t[k]);
}

int main(void)
{
	h_rng r;
	fpl_dataset ds;

	h_init("thadamard");
	h_rng_init(&r, 0x686164);
	sylvester();
	test_signs();
	test_exact(&r, 16, 1, 1, 0);
	test_exact(&r, 16, 1, 1, 1);
	test_exact(&r, 37, 5, 7, 0);	/* 2 blocks, 5 rows copied, padding */
	test_exact(&r, 48, 3, 3, 1);
	test_exact(&r, 5, 2, 2, 0);	/* no block at all */
	test_bound(&r);
	test_columns_norm(&r);
	test_dw(&r, 48, 7, 5);
	test_dw(&r, 37, 6, 9);
	test_dw(&r, 16, 1, 1);
	test_key();
	if (fpl_dataset_generate(&ds, 400, 12, 4, 9)) {
		h_fail("fpl_dataset_generate");
		return h_done();
	}
	test_binary64_step(&ds, 48);
	test_binary64_step(&ds, 37);
	test_nvfp4(&ds);
	fpl_dataset_free(&ds);
	return h_done();
}
