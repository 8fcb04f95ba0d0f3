/* SPDX-License-Identifier: MIT */
/*
 * tests/taccum.c - accumulation models (fplab/accum.h): dot, sum, GEMM.
 *
 * Expected values never come from the code under test:
 *  - an independent reference per order, straight-line C over the public
 *    scalar operations (fpl_round, fpl_add, fpl_sub, fpl_mul, fpl_fma) on
 *    a state whose counter is set to the draw index accum.h's schedule
 *    gives each rounding; fused sums and neumaier's comparison by MPFR at
 *    a precision that holds every term exactly; compared bit for bit, with
 *    per-output flags, counts and the counter's advance;
 *  - hand-derived facts (sums of ones, small-integer GEMM, an fmaf loop,
 *    VDPBF16PS corner cases and fp16-fma's ties, subnormals, overflow and
 *    NaNs worked out in the comments).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include <fplab/accum.h>

#include "harness.h"

/* ------------------------------------------------------------ reference */

typedef struct ref {
	const fpl_accum_model *m;
	fpl_state *st;		/* counts accumulate; flags are per output */
	uint64_t base, MN, o;	/* draw of step s: base + s*MN + o */
	int sum;
	size_t K;
	const double *a, *b;	/* this output's loaded a_k and b_k */
	double *t;		/* value terms (sum, rounded products) */
	int exact;
	uint64_t P;
} ref;

static void at(ref *R, uint64_t s)
{
	R->st->counter = R->base + s * R->MN + R->o;
}

static double neg(double x)
{
	return isnan(x) ? x : -x;
}

static double r_add(ref *R, const fpl_format *f, double x, double y, uint64_t s)
{
	at(R, s);
	return fpl_add(f, x, y, R->m->acc_rnd, R->st);
}

static double r_sub(ref *R, double x, double y, uint64_t s)
{
	at(R, s);
	return fpl_sub(&R->m->acc, x, y, R->m->acc_rnd, R->st);
}

static double r_fma(ref *R, double a, double b, double c, uint64_t s)
{
	at(R, s);
	return fpl_fma(&R->m->acc, a, b, c, R->m->acc_rnd, R->st);
}

/* s + t_k */
static double plus(ref *R, size_t k, double s, uint64_t step)
{
	if (R->exact)
		return r_fma(R, R->a[k], R->b[k], s, step);
	return r_add(R, &R->m->acc, s, R->t[k], step);
}

/* Pairwise over terms [lo, hi), split as accum.h states it for terms. */
static double pw(ref *R, size_t lo, size_t hi)
{
	size_t n = hi - lo, L = R->m->leaf, h, k;
	double l, r;

	if (n <= L) {
		double v = 0.0;
		for (k = lo; k < hi; k++)
			v = plus(R, k, v, R->P + k);
		return v;
	}
	h = L * (((n + L - 1) / L + 1) / 2);
	l = pw(R, lo, lo + h);
	r = pw(R, lo + h, hi);
	return r_add(R, &R->m->acc, l, r, R->P + R->K + (lo + h) / L - 1);
}

/* DAZ as the unit reads an operand. */
static double daz(const fpl_format *f, double x)
{
	if (f->daz && x != 0 && fabs(x) < f->min_normal)
		return copysign(0.0, x);
	return x;
}

/* |s| >= |a*b| (or |t|), by MPFR; false on NaN. */
static int ge_mpfr(ref *R, double s, size_t k)
{
	mpfr_t x, y;
	int r;

	mpfr_inits2(128, x, y, (mpfr_ptr)0);
	mpfr_set_d(x, daz(&R->m->acc, s), MPFR_RNDN);
	if (R->exact) {
		mpfr_set_d(y, daz(&R->m->acc, R->a[k]), MPFR_RNDN);
		mpfr_t z;
		mpfr_init2(z, 128);
		mpfr_set_d(z, daz(&R->m->acc, R->b[k]), MPFR_RNDN);
		mpfr_mul(y, y, z, MPFR_RNDN);
		mpfr_clear(z);
	} else {
		mpfr_set_d(y, daz(&R->m->acc, R->t[k]), MPFR_RNDN);
	}
	r = !mpfr_nan_p(x) && !mpfr_nan_p(y) && mpfr_cmpabs(x, y) >= 0;
	mpfr_clears(x, y, (mpfr_ptr)0);
	return r;
}

/* A real number held by MPFR rounded once into f (fpl_round_parts). */
static double round_mpfr(const fpl_format *f, mpfr_t v, fpl_rnd rnd, fpl_state *st)
{
	mpfr_t w;
	mpz_t z;
	int t, neg_;
	long e;
	uint64_t hi, lo;

	mpfr_init2(w, 128);
	t = mpfr_set(w, v, MPFR_RNDZ);
	neg_ = mpfr_signbit(w) != 0;
	mpfr_abs(w, w, MPFR_RNDN);
	mpz_init(z);
	e = mpfr_get_z_2exp(z, w);	/* |w| = z * 2^e, z < 2^128 */
	lo = mpz_get_ui(z);
	mpz_tdiv_q_2exp(z, z, 64);
	hi = mpz_get_ui(z);
	mpz_clear(z);
	mpfr_clear(w);
	return fpl_round_parts(f, neg_, e, hi, lo, t != 0, rnd, st);
}

/* One fused group: S and terms [k0, k1), by MPFR, exactly or aligned. */
static double fused_ref(ref *R, double S, size_t k0, size_t k1, uint64_t step)
{
	const fpl_accum_model *m = R->m;
	const fpl_format *f = &m->acc;
	size_t n = k1 - k0 + 1, i;
	double x[2 * 4096 + 2];
	int nz = 0, nneg = 0, npos = 0, pinf = 0, ninf = 0, inval = 0;
	long E = 0;
	int any = 0;
	mpfr_t sum, term, q;
	double r;

	x[0] = daz(f, S);
	x[1] = 1.0;
	for (i = 1; i < n; i++) {
		size_t k = k0 + i - 1;
		x[2 * i] = daz(f, R->exact ? R->a[k] : R->t[k]);
		x[2 * i + 1] = daz(f, R->exact ? R->b[k] : 1.0);
	}
	at(R, step);
	/* first NaN among S, a_0, b_0, ... */
	for (i = 0; i < 2 * n; i++) {
		if (i == 1)
			continue;
		if (isnan(x[i]))
			return fpl_round(f, x[i], m->acc_rnd, R->st);
	}
	for (i = 0; i < n; i++) {
		double p = x[2 * i], y = x[2 * i + 1];
		if (isinf(p) || isinf(y)) {
			if (p == 0 || y == 0)
				inval = 1;
			else if (signbit(p) != signbit(y))
				ninf = 1;
			else
				pinf = 1;
		}
		if (p != 0 && y != 0)
			nz++;
		else if (!!signbit(p) != !!signbit(y))
			nneg++;
		else
			npos++;
	}
	if (inval || (pinf && ninf))
		return fpl_mul(f, INFINITY, 0.0, m->acc_rnd, R->st);
	if (pinf || ninf)
		return fpl_round(f, ninf ? -INFINITY : INFINITY, m->acc_rnd, R->st);
	mpfr_inits2(4600, sum, term, q, (mpfr_ptr)0);
	mpfr_set_zero(sum, 1);
	for (i = 0; i < n; i++) {
		mpfr_set_d(term, x[2 * i], MPFR_RNDN);
		mpfr_mul_d(term, term, x[2 * i + 1], MPFR_RNDN);	/* exact at 4600 bits */
		if (!mpfr_zero_p(term) && (!any || mpfr_get_exp(term) - 1 > E)) {
			E = mpfr_get_exp(term) - 1;
			any = 1;
		}
	}
	for (i = 0; i < n; i++) {
		mpfr_set_d(term, x[2 * i], MPFR_RNDN);
		mpfr_mul_d(term, term, x[2 * i + 1], MPFR_RNDN);
		if (m->fused_w && !mpfr_zero_p(term)) {
			/* round |term| / 2^(E-W+1) to an integer, tz or ne */
			long qx = E - m->fused_w + 1;
			mpfr_mul_2si(term, term, -qx, MPFR_RNDN);
			mpfr_rint(term, term, m->fused_rnd == FPL_RND_NE ? MPFR_RNDN : MPFR_RNDZ);
			mpfr_mul_2si(term, term, qx, MPFR_RNDN);
		}
		mpfr_add(sum, sum, term, MPFR_RNDN);	/* exact */
	}
	if (mpfr_zero_p(sum)) {
		int zs = nz || (nneg && npos) ? m->acc_rnd == FPL_RND_TN : nneg > 0;
		r = fpl_round(f, zs ? -0.0 : 0.0, m->acc_rnd, R->st);
	} else {
		r = round_mpfr(f, sum, m->acc_rnd, R->st);
	}
	mpfr_clears(sum, term, q, (mpfr_ptr)0);
	return r;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* Steps per output, from the schedule's list (not fpl_accum_steps). */
static uint64_t ref_steps(const fpl_accum_model *m, size_t K, int sum)
{
	uint64_t P = (!sum && !m->prod_exact) ? K : 0;
	switch (m->order) {
	case FPL_ORDER_SEQUENTIAL: return P + K + 1;
	case FPL_ORDER_PAIRWISE: return P + K + (K ? ceil_div(K, m->leaf) : 1) + 1;
	case FPL_ORDER_BLOCKED: return P + K + ceil_div(K, m->block) + 1;
	case FPL_ORDER_KAHAN: return P + 4 * K + 1;
	case FPL_ORDER_NEUMAIER: return P + 4 * K + 2;
	case FPL_ORDER_FUSED: return P + ceil_div(K, m->block) + 1;
	case FPL_ORDER_PAIRS:
		return P + 2 * ceil_div(K, 2) + (m->pair_block ? ceil_div(K, m->pair_block) : 0) + 1;
	case FPL_ORDER_EVENODD: return P + K + 2 * ceil_div(K, m->block) + 1;
	default: return 0;
	}
}

/* The reference value of one output whose loaded initial value is c0v
 * (NULL: from +0). */
static double ref_output(ref *R, const double *c0v)
{
	const fpl_accum_model *m = R->m;
	size_t K = R->K, k;
	double s = c0v ? *c0v : 0.0, c = 0.0;

	R->exact = !R->sum && m->prod_exact;
	R->P = (!R->sum && !m->prod_exact) ? K : 0;
	for (k = 0; k < K; k++) {
		if (R->sum) {
			R->t[k] = R->a[k];
		} else if (!m->prod_exact) {
			at(R, k);
			R->t[k] = fpl_mul(&m->prod, R->a[k], R->b[k], m->prod_rnd, R->st);
		}
	}
	switch (m->order) {
	case FPL_ORDER_SEQUENTIAL:
		for (k = 0; k < K; k++)
			s = plus(R, k, s, R->P + k);
		break;
	case FPL_ORDER_PAIRWISE: {
		double T = K ? pw(R, 0, K) : 0.0;
		s = c0v ? r_add(R, &m->acc, s, T, R->P + K + (K ? ceil_div(K, m->leaf) : 1) - 1) : T;
		break;
	}
	case FPL_ORDER_BLOCKED:
		for (k = 0; k < K; k += m->block) {
			size_t j, e = k + m->block < K ? k + m->block : K;
			double v = 0.0;
			for (j = k; j < e; j++)
				v = plus(R, j, v, R->P + j);
			s = r_add(R, &m->promo, s, v, R->P + K + k / m->block);
		}
		break;
	case FPL_ORDER_KAHAN:
		for (k = 0; k < K; k++) {
			uint64_t q = R->P + 4 * k;
			double y = R->exact ? r_fma(R, R->a[k], R->b[k], neg(c), q)
					    : r_sub(R, R->t[k], c, q);
			double u = r_add(R, &m->acc, s, y, q + 1);
			double w = r_sub(R, u, s, q + 2);
			c = r_sub(R, w, y, q + 3);
			s = u;
		}
		break;
	case FPL_ORDER_NEUMAIER:
		for (k = 0; k < K; k++) {
			uint64_t q = R->P + 4 * k;
			int ge = ge_mpfr(R, s, k);
			double u = plus(R, k, s, q), w, v;
			if (ge) {
				w = r_sub(R, s, u, q + 1);
				v = plus(R, k, w, q + 2);
			} else {
				w = R->exact ? r_fma(R, R->a[k], R->b[k], neg(u), q + 1)
					     : r_sub(R, R->t[k], u, q + 1);
				v = r_add(R, &m->acc, w, s, q + 2);
			}
			c = r_add(R, &m->acc, c, v, q + 3);
			s = u;
		}
		s = r_add(R, &m->acc, s, c, R->P + 4 * K);
		break;
	case FPL_ORDER_FUSED:
		for (k = 0; k < K; k += m->block)
			s = fused_ref(R, s, k, k + m->block < K ? k + m->block : K,
				      R->P + k / m->block);
		break;
	case FPL_ORDER_PAIRS: {
		/* pairs:B: each block of B terms its own chain from +0, then
		 * S = S + block in promo, step P + 2*ceil(K/2) + block index */
		size_t B = m->pair_block ? m->pair_block : K + 2, k0;
		for (k0 = 0; k0 < K; k0 += B) {
			size_t e = k0 + B < K ? k0 + B : K;
			double v = m->pair_block ? 0.0 : s;
			for (k = k0; k < e; k += 2) {
				uint64_t q = R->P + k;	/* pair k/2: steps P + 2i, P + 2i + 1 */
				if (k + 1 < K)
					v = plus(R, k + 1, v, q);
				else
					v = R->exact ? r_fma(R, 0.0, 0.0, v, q)
						     : r_add(R, &m->acc, v, 0.0, q);
				v = plus(R, k, v, q + 1);
			}
			/* beta = 0: block 0 is R itself, no addition */
			s = m->pair_block && (k0 || c0v) ? r_add(R, &m->promo, s, v,
								 R->P + 2 * ceil_div(K, 2) + k0 / B)
							 : v;
		}
		break;
	}
	case FPL_ORDER_EVENODD:
		for (k = 0; k < K; k += m->block) {
			size_t j, e = k + m->block < K ? k + m->block : K;
			double ch[2] = { 0.0, 0.0 }, u;
			uint64_t q = R->P + K + 2 * (k / m->block);
			for (j = k; j < e; j++)
				ch[(j - k) % 2] = plus(R, j, ch[(j - k) % 2], R->P + j);
			u = r_add(R, &m->acc, ch[0], ch[1], q);
			s = r_add(R, &m->acc, s, u, q + 1);
		}
		break;
	default:
		break;
	}
	if (m->out_set) {
		at(R, ref_steps(m, K, R->sum) - 1);
		s = fpl_round(&m->out, s, m->out_rnd, R->st);
	}
	return s;
}

/* ------------------------------------------------------------ random cases */

static double gen(h_rng *g, const fpl_format *f, int specials)
{
	uint64_t u = h_rng_next(g);
	int lo = f->emin - f->m - 2, hi = f->emax + 1;
	if (specials && u % 23 == 0) {
		switch ((u >> 8) % 4) {
		case 0: return (u >> 20) & 1 ? -0.0 : 0.0;
		case 1: return (u >> 20) & 1 ? -INFINITY : INFINITY;
		case 2: return h_from_bits(0x7ff8000000000000ull | ((u >> 24) & 0x7f) << 45);
		default: return f->min_normal * 0.75;
		}
	}
	if (u % 5 == 0)	/* mostly moderate values, so sums mean something */
		return h_rng_value(g, lo, hi, 53, 0);
	return h_rng_value(g, -4, 3, 53, 0);
}

static const char *fmt_names[] = { "fp16", "bf16", "e4m3fn", "e5m2", "fp32", "fp16+nosub",
				   "bf16+daz+ftz" };
static const fpl_rnd modes[] = { FPL_RND_NE, FPL_RND_TZ, FPL_RND_TP, FPL_RND_OD,
				 FPL_RND_SP, FPL_RND_SE };
static const char *orders[] = { "sequential", "pairwise", "pairwise:4", "blocked:8",
				"blocked:5:fp16", "kahan", "neumaier", "fused:4",
				"fused:3:12", "fused:5:8:ne", "fused:64", "pairs",
				"pairs:4", "pairs:6:fp16", "evenodd:8", "evenodd" };
#define N_ORDERS (sizeof orders / sizeof *orders)

static void spec(fpl_format *f, const char *s)
{
	fpl_rnd r = FPL_RND_NE;
	if (fpl_accum_parse_spec(s, f, &r, NULL))
		h_fail("cannot parse spec %s", s);
}

/*
 * One random GEMM (or dot, or sum) under model m, checked against the
 * reference output by output.  kind: 0 gemm, 1 dot, 2 sum.
 */
static void check_case(const fpl_accum_model *m, int kind, size_t M, size_t N, size_t K,
		       int transa, int transb, int beta, int specials, h_rng *g, int threads,
		       const char *what)
{
	size_t lda = transa ? M + 1 : K + 2, ldb = transb ? K + 1 : N + 3, ldc = N + 1;
	double *a = calloc(M * lda + K * lda + 8, sizeof *a);
	double *b = calloc(K * ldb + N * ldb + 8, sizeof *b);
	double *c = calloc(M * ldc + 8, sizeof *c), *c_in = calloc(M * ldc + 8, sizeof *c);
	double *A = calloc(M * K + 1, sizeof *A), *B = calloc(K * N + 1, sizeof *B);
	double *Cl = calloc(M * N + 1, sizeof *Cl), *t = calloc(K + 1, sizeof *t);
	double *ak = calloc(K + 1, sizeof *ak), *bk = calloc(K + 1, sizeof *bk);
	unsigned *fo = calloc(M * N + 1, sizeof *fo);
	fpl_state st, rs;
	uint64_t c0, L, S;
	size_t i, j, k;
	int sum = kind == 2, rc;
	char buf[256];

	if (kind) {
		M = N = 1;
		ldc = 1;
	}
	for (i = 0; i < M; i++)
		for (k = 0; k < K; k++)
			a[transa ? k * lda + i : i * lda + k] = gen(g, &m->a, specials);
	for (k = 0; k < K; k++)
		for (j = 0; j < N; j++)
			b[transb ? j * ldb + k : k * ldb + j] = gen(g, &m->b, specials);
	for (i = 0; i < M * ldc; i++)
		c[i] = c_in[i] = gen(g, &m->acc, specials);
	if (m->a_load == FPL_LOAD_GIVEN) {	/* make every input a value */
		fpl_state tmp;
		fpl_state_init(&tmp, 0);
		for (i = 0; i < M * lda + K * lda; i++)
			a[i] = fpl_round(&m->a, a[i], FPL_RND_NE, &tmp);
		for (i = 0; i < K * ldb + N * ldb; i++)
			b[i] = fpl_round(&m->b, b[i], FPL_RND_NE, &tmp);
		for (i = 0; i < M * ldc; i++)
			c[i] = c_in[i] = fpl_round((m->order == FPL_ORDER_BLOCKED || (m->order == FPL_ORDER_PAIRS && m->pair_block)) ? &m->promo : &m->acc,
						   c[i], FPL_RND_NE, &tmp);
	}
	fpl_state_init(&st, h_rng_next(g));
	st.counter = h_rng_next(g) >> 20;
	st.threads = threads;
	rs = st;
	c0 = st.counter;
	if (kind == 0)
		rc = fpl_accum_gemm(c, ldc, m, beta, M, N, K, a, lda, transa, b, ldb, transb, fo, &st);
	else if (kind == 1)
		rc = fpl_accum_dot(c, m, K, a, 1, b, (ptrdiff_t)ldb, beta ? c : NULL, fo, &st);
	else
		rc = fpl_accum_sum(c, m, K, a, 1, beta ? c : NULL, fo, &st);
	fpl_accum_describe(m, buf, sizeof buf);
	if (!h_check(rc == 0)) {
		h_fail("%s: %s: status %d", what, buf, rc);
		goto out;
	}
	/* reference loads: A (i,k) c0 + i*K + k; B (k,j) c0 + MK + k*N + j;
	 * C c0 + MK + KN + o */
	for (i = 0; i < M; i++)
		for (k = 0; k < K; k++) {
			double x = kind ? a[k] : a[transa ? k * lda + i : i * lda + k];
			rs.counter = c0 + i * K + k;
			A[i * K + k] = m->a_load == FPL_LOAD_GIVEN ? x
				       : fpl_round(&m->a, x, m->a_rnd, &rs);
		}
	for (k = 0; k < K && !sum; k++)
		for (j = 0; j < N; j++) {
			double x = kind ? b[k * ldb] : b[transb ? j * ldb + k : k * ldb + j];
			rs.counter = c0 + M * K + k * N + j;
			B[k * N + j] = m->b_load == FPL_LOAD_GIVEN ? x
				       : fpl_round(&m->b, x, m->b_rnd, &rs);
		}
	L = M * K + (sum ? 0 : K * N) + M * N;
	for (i = 0; beta && i < M * N; i++) {
		const fpl_format *sf = (m->order == FPL_ORDER_BLOCKED || (m->order == FPL_ORDER_PAIRS && m->pair_block)) ? &m->promo : &m->acc;
		rs.counter = c0 + M * K + (sum ? 0 : K * N) + i;
		Cl[i] = m->a_load == FPL_LOAD_GIVEN ? c_in[(i / N) * ldc + i % N]
			: fpl_round(sf, c_in[(i / N) * ldc + i % N], m->acc_rnd, &rs);
	}
	S = ref_steps(m, K, sum);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			ref R = { m, &rs, c0 + L, M * N, i * N + j, sum, K, ak, bk, t, 0, 0 };
			double want, got = c[i * ldc + j];
			for (k = 0; k < K; k++) {
				ak[k] = A[i * K + k];
				bk[k] = sum ? 1.0 : B[k * N + j];
			}
			rs.flags = 0;
			want = ref_output(&R, beta ? &Cl[i * N + j] : NULL);
			if (!h_check(h_same(want, got) && rs.flags == fo[i * N + j])) {
				char f1[96], f2[96];
				h_fail("%s: %s: M%zu N%zu K%zu beta%d out (%zu,%zu): want %a "
				       "[%s] got %a [%s]", what, buf, M, N, K, beta, i, j, want,
				       h_flags(rs.flags, f1, sizeof f1), got,
				       h_flags(fo[i * N + j], f2, sizeof f2));
				goto out;
			}
		}
	for (i = 0; i < FPL_NFLAGS; i++)
		if (!h_check(rs.count[i] == st.count[i])) {
			h_fail("%s: %s: K%zu count[%s] want %llu got %llu", what, buf, K,
			       fpl_flag_name((int)i), (unsigned long long)rs.count[i],
			       (unsigned long long)st.count[i]);
			break;
		}
	if (!h_check(st.counter == c0 + L + S * M * N))
		h_fail("%s: %s: counter advanced %llu, want %llu", what, buf,
		       (unsigned long long)(st.counter - c0),
		       (unsigned long long)(L + S * M * N));
out:
	free(a); free(b); free(c); free(c_in); free(A); free(B); free(Cl); free(t); free(ak);
	free(bk); free(fo);
}

static void test_random(void)
{
	static const size_t Ks[] = { 0, 1, 2, 3, 7, 9, 33, 70 };
	h_rng g;
	size_t fi, o, mi, ki;
	uint64_t n = 0;

	h_rng_init(&g, 11);
	for (fi = 0; fi < sizeof fmt_names / sizeof *fmt_names; fi++)
		for (o = 0; o < N_ORDERS; o++)
			for (mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
				fpl_accum_model m;
				uint64_t u = h_rng_next(&g);
				fpl_accum_init(&m);
				/* inputs: a random catalogue format near the accumulator's */
				spec(&m.acc, fmt_names[fi]);
				spec(&m.a, fmt_names[(fi + u % 3) % 7]);
				spec(&m.b, fmt_names[(fi + (u >> 2) % 2) % 7]);
				m.a_rnd = modes[(u >> 4) % 6];
				m.b_rnd = modes[(u >> 7) % 6];
				m.acc_rnd = modes[mi];
				m.prod_exact = (u >> 10) % 3 != 0;
				spec(&m.prod, fmt_names[(u >> 12) % 7]);
				m.prod_rnd = modes[(u >> 15) % 6];
				if (fpl_accum_parse_order(&m, orders[o]))
					h_fail("parse order %s", orders[o]);
				if ((u >> 40) % 4 == 0)
					m.a_load = m.b_load = FPL_LOAD_GIVEN;
				if ((u >> 18) % 3 == 0) {
					m.out_set = 1;
					spec(&m.out, fmt_names[(u >> 20) % 7]);
					m.out_rnd = modes[(u >> 23) % 6];
				}
				for (ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
					size_t K = Ks[ki];
					int beta = (int)((u >> (26 + ki)) & 1);
					check_case(&m, 0, 2 + ki % 3, 3 + ki % 2, K, ki & 1, (ki >> 1) & 1,
						   beta, 1, &g, 1 + (int)(ki % 2), "gemm");
					check_case(&m, 1, 1, 1, K, 0, 0, !beta, 1, &g, 1, "dot");
					check_case(&m, 2, 1, 1, K, 0, 0, beta, 1, &g, 1, "sum");
					n += 3;
				}
				/* enough work for two threads: 21 rows of 70 (two tiles) */
				check_case(&m, 0, 21, 70, 9, 0, 1, (int)(u & 1), 1, &g, 2, "gemm2");
				n++;
			}
	h_note("random: %llu gemm/dot/sum cases against the reference", (unsigned long long)n);
}

/* ------------------------------------------------------------ hand facts */

static double sum_ones(const char *acc, const char *order)
{
	fpl_accum_model m;
	fpl_state st;
	double *x = malloc(4096 * sizeof *x), r = -1;
	size_t i;

	for (i = 0; i < 4096; i++)
		x[i] = 1.0;
	fpl_accum_init(&m);
	spec(&m.acc, acc);
	m.a = m.acc;
	fpl_accum_parse_order(&m, order);
	fpl_state_init(&st, 1);
	if (fpl_accum_sum(&r, &m, 4096, x, 1, NULL, NULL, &st))
		r = -2;
	free(x);
	return r;
}

static void test_ones(void)
{
	/* fp16: 2048 + 1 is a tie between 2048 and 2050 (ulp 2): even, 2048.
	 * bf16: ulp(256) = 2, stuck at 256.  e4m3fn: ulp(16) = 2, stuck at 16.
	 * kahan: the compensation carries the lost ones; pairwise: every
	 * partial sum is a power of two up to 4096, exact in fp16. */
	struct { const char *acc, *order; double want; } c[] = {
		{ "fp16", "sequential", 2048 }, { "bf16", "sequential", 256 },
		{ "e4m3fn", "sequential", 16 }, { "fp16", "kahan", 4096 },
		{ "fp16", "pairwise", 4096 }, { "fp16", "pairwise:128", 4096 },
		{ "fp16", "neumaier", 4096 },
	};
	size_t i;
	for (i = 0; i < sizeof c / sizeof *c; i++) {
		double r = sum_ones(c[i].acc, c[i].order);
		if (!h_check(r == c[i].want))
			h_fail("sum of 4096 ones, %s %s: want %g got %g", c[i].acc, c[i].order,
			       c[i].want, r);
	}
}

static void test_int_gemm(void)
{
	enum { M = 13, N = 11, K = 37 };
	double a[M * K], b[K * N], c[M * N];
	long long want;
	fpl_accum_model m;
	fpl_state st;
	h_rng g;
	size_t i, j, k;
	const char *ord[] = { "sequential", "pairwise:3", "blocked:8:fp64", "kahan", "fused:5" };

	h_rng_init(&g, 12);
	for (i = 0; i < M * K; i++)
		a[i] = (double)((int)h_rng_below(&g, 17) - 8);
	for (i = 0; i < K * N; i++)
		b[i] = (double)((int)h_rng_below(&g, 17) - 8);
	for (k = 0; k < sizeof ord / sizeof *ord; k++) {
		fpl_accum_init(&m);
		spec(&m.a, "e4m3fn");	/* -8..8 are e4m3fn values */
		m.b = m.a;
		spec(&m.acc, "fp64");
		fpl_accum_parse_order(&m, ord[k]);
		fpl_state_init(&st, 2);
		if (!h_check(fpl_accum_gemm(c, N, &m, 0, M, N, K, a, K, 0, b, N, 0, NULL, &st) == 0))
			h_fail("int gemm %s: status", ord[k]);
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				size_t q;
				want = 0;
				for (q = 0; q < K; q++)
					want += (long long)a[i * K + q] * (long long)b[q * N + j];
				if (!h_check(c[i * N + j] == (double)want))
					h_fail("int gemm %s (%zu,%zu): want %lld got %g", ord[k], i, j,
					       want, c[i * N + j]);
			}
		if (!h_check(st.flags == 0))
			h_fail("int gemm %s: flags %#x", ord[k], st.flags);
	}
}

static void test_fmaf(void)
{
	h_rng g;
	fpl_accum_model m;
	int rep;

	h_rng_init(&g, 13);
	fpl_accum_profile(&m, "fp32-fma");
	for (rep = 0; rep < 200; rep++) {
		size_t K = 1 + h_rng_below(&g, 300), k;
		float af[300], bf[300], s = 0.0f;
		double a[300], b[300], r;
		fpl_state st;
		for (k = 0; k < K; k++) {
			af[k] = (float)h_rng_value(&g, -20, 20, 24, 0);
			bf[k] = (float)h_rng_value(&g, -20, 20, 24, 0);
			a[k] = af[k];
			b[k] = bf[k];
			s = fmaf(af[k], bf[k], s);	/* no contraction question: an fmaf call */
		}
		fpl_state_init(&st, 3);
		if (!h_check(fpl_accum_dot(&r, &m, K, a, 1, b, 1, NULL, NULL, &st) == 0
			     && h_same(r, (double)s)))
			h_fail("fp32-fma vs fmaf loop, K %zu: want %a got %a", K, (double)s, r);
	}
	/* fp32-mul-add: s = s + (a*b rounded), in float arithmetic */
	fpl_accum_profile(&m, "fp32-mul-add");
	for (rep = 0; rep < 100; rep++) {
		size_t K = 1 + h_rng_below(&g, 100), k;
		volatile float p, s = 0.0f;
		double a[100], b[100], r;
		fpl_state st;
		for (k = 0; k < K; k++) {
			float x = (float)h_rng_value(&g, -20, 20, 24, 0);
			float y = (float)h_rng_value(&g, -20, 20, 24, 0);
			a[k] = x;
			b[k] = y;
			p = x * y;
			s = s + p;
		}
		fpl_state_init(&st, 3);
		if (!h_check(fpl_accum_dot(&r, &m, K, a, 1, b, 1, NULL, NULL, &st) == 0
			     && h_same(r, (double)s)))
			h_fail("fp32-mul-add vs float loop, K %zu: want %a got %a", K, (double)s, r);
	}
	/* given inputs must be fp32 values */
	{
		double a[2] = { 0.1, 1 }, b[2] = { 1, 1 }, r = 7;
		fpl_state st;
		fpl_state_init(&st, 3);
		fpl_accum_profile(&m, "fp32-fma");
		if (!h_check(fpl_accum_dot(&r, &m, 2, a, 1, b, 1, NULL, NULL, &st) == FPL_ERANGE
			     && r == 7 && st.counter == 0))
			h_fail("fp32-fma with a non-fp32 input: want FPL_ERANGE, untouched");
	}
}

/* fused:K with exact alignment is the exact sum rounded once. */
static void test_fused_exact(void)
{
	h_rng g;
	int rep;

	h_rng_init(&g, 14);
	for (rep = 0; rep < 200; rep++) {
		size_t K = 1 + h_rng_below(&g, 40), k;
		double a[40], b[40], r, want;
		fpl_accum_model m;
		fpl_state st, s2;
		mpfr_t sum, t;
		char ord[32];
		fpl_accum_init(&m);
		spec(&m.a, "fp64");
		m.b = m.a;
		spec(&m.acc, rep % 2 ? "fp16" : "bf16");
		m.acc_rnd = modes[rep % 6];
		snprintf(ord, sizeof ord, "fused:%zu", K);
		fpl_accum_parse_order(&m, ord);
		mpfr_inits2(4600, sum, t, (mpfr_ptr)0);
		mpfr_set_zero(sum, 1);
		for (k = 0; k < K; k++) {	/* fp64 inputs: products beyond binary64 */
			a[k] = h_rng_value(&g, -30, 30, 53, 0);
			b[k] = k % 2 ? -a[k - 1] * 0.75 : h_rng_value(&g, -30, 30, 53, 0);
			mpfr_set_d(t, a[k], MPFR_RNDN);
			mpfr_mul_d(t, t, b[k], MPFR_RNDN);
			mpfr_add(sum, sum, t, MPFR_RNDN);
		}
		fpl_state_init(&st, 5 + (uint64_t)rep);
		s2 = st;
		s2.counter = 2 * K + 1;	/* loads A, B, C; then step 0 */
		want = mpfr_zero_p(sum) ? 0.0 : round_mpfr(&m.acc, sum, m.acc_rnd, &s2);
		if (!h_check(fpl_accum_dot(&r, &m, K, a, 1, b, 1, NULL, NULL, &st) == 0
			     && h_same(r, want)))
			h_fail("fused:%zu exact, %s: want %a got %a", K, fpl_rnd_name(m.acc_rnd),
			       want, r);
		mpfr_clears(sum, t, (mpfr_ptr)0);
	}
}

static void gemm_sr(uint64_t seed, int threads, double *c)
{
	enum { D = 48 };
	static double a[D * D], b[D * D];
	fpl_accum_model m;
	fpl_state st;
	h_rng g;
	size_t i;

	h_rng_init(&g, 15);
	for (i = 0; i < D * D; i++) {
		a[i] = h_rng_value(&g, -3, 3, 53, 0);
		b[i] = h_rng_value(&g, -3, 3, 53, 0);
	}
	fpl_accum_init(&m);
	spec(&m.a, "bf16");
	m.b = m.a;
	spec(&m.acc, "fp16:sp");
	m.acc_rnd = FPL_RND_SP;
	fpl_state_init(&st, seed);
	st.threads = threads;
	if (fpl_accum_gemm(c, D, &m, 0, D, D, D, a, D, 0, b, D, 1, NULL, &st))
		h_fail("gemm_sr: status");
}

static void test_threads(void)
{
	enum { D = 48 };
	static double c1[D * D], c2[D * D], c3[D * D];
	size_t i, same = 1, diff = 0;

	gemm_sr(21, 1, c1);
	gemm_sr(21, 2, c2);
	gemm_sr(22, 2, c3);
	for (i = 0; i < D * D; i++) {
		same &= h_same(c1[i], c2[i]);
		diff += !h_same(c1[i], c3[i]);
	}
	if (!h_check(same))
		h_fail("stochastic gemm: 1 and 2 threads differ");
	if (!h_check(diff > 0))
		h_fail("stochastic gemm: another seed gives the same bits");
}

/* VDPBF16PS and TDPBF16PS corner cases, derived by hand. */
static void test_bf16_profiles(void)
{
	fpl_accum_model m, amx;
	fpl_state st;
	double r, c;

	fpl_accum_profile(&m, "avx512bf16");
	fpl_accum_profile(&amx, "amx-bf16");
	fpl_state_init(&st, 4);
	{	/* DAZ on the accumulator: C = 2^-127 (an fp32 denormal) reads as 0.
		 * Pair 0: odd 0*0 + C -> +0; even 1 * 2^-126 + 0 = 2^-126.  Without
		 * DAZ it would be 2^-126 + 2^-127 = 1.5 * 2^-126. */
		double a[2] = { 1, 0 }, b[2] = { 0x1p-126, 0 };
		c = 0x1p-127;
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(r == 0x1p-126))
			h_fail("avx512bf16 DAZ accumulator: want 0x1p-126 got %a", r);
	}
	{	/* FTZ of the intermediate: odd 2^-64 * 2^-63 = 2^-127 (tiny) -> +0;
		 * even 1.5 * 2^-126 + 0 = 1.5 * 2^-126.  Unflushed: 2^-125. */
		double a[2] = { 1.5, 0x1p-64 }, b[2] = { 0x1p-126, 0x1p-63 };
		fpl_state_clear_flags(&st);
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 0x1.8p-126 && (st.flags & FPL_FLAG_FLUSHED)))
			h_fail("avx512bf16 FTZ intermediate: want 0x1.8p-126 got %a", r);
	}
	{	/* Order: C = 1, even product 2^-24 + 2^-31 (a0 = 1 + 2^-7), odd
		 * product 2^-24.  Odd first: 1 + 2^-24 is a tie -> 1; then
		 * 1 + 2^-24 + 2^-31 -> 1 + 2^-23.  Even first would give
		 * 1 + 2^-23, then (1 + 2^-23) + 2^-24, a tie -> 1 + 2^-22. */
		double a[2] = { 1 + 0x1p-7, 1 }, b[2] = { 0x1p-24, 0x1p-24 };
		c = 1;
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("avx512bf16 odd-first: want 1+2^-23 got %a", r);
		/* amx: even chain 2^-24 + 2^-31, odd 2^-24, sum 2^-23 + 2^-31
		 * exact; 1 + that -> 1 + 2^-23 */
		fpl_accum_dot(&r, &amx, 2, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("amx-bf16: want 1+2^-23 got %a", r);
	}
	{	/* NaN priority src1.lo first: a_0 wins over b_1 */
		double n1 = h_from_bits(0x7ff8200000000000ull), n2 = h_from_bits(0xfff8400000000000ull);
		double a[2] = { n1, 1 }, b[2] = { 1, n2 };
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(h_same(r, n1)))
			h_fail("avx512bf16 NaN priority: want %a got %a", n1, r);
	}
	{	/* onednn-bf16, K = 1024: two blocks of 512, each a chain from +0,
		 * added in fp32.  Block 0 = 1; block 1 = 2^-24 + 2^-24 = 2^-23
		 * exactly; R = 1 + 2^-23.  One chain (avx512bf16) adds 2^-24 to 1
		 * twice, a tie each time: 1. */
		static double a[1024], b[1024];
		fpl_accum_model od;
		size_t i;
		for (i = 0; i < 1024; i++)
			a[i] = b[i] = 0;
		a[0] = b[0] = 1;
		a[512] = a[513] = 0x1p-24;
		b[512] = b[513] = 1;
		fpl_accum_profile(&od, "onednn-bf16");
		fpl_accum_dot(&r, &od, 1024, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("onednn-bf16 two blocks: want 1+2^-23 got %a", r);
		fpl_accum_dot(&r, &m, 1024, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1))
			h_fail("avx512bf16 one chain: want 1 got %a", r);
		/* the block sum is IEEE fp32, not flushed: block 0 = 2^-125,
		 * block 1 = -1.5 * 2^-126, R = 2^-127 (a subnormal) */
		a[0] = 1;
		b[0] = 0x1p-125;
		a[512] = -1.5;
		b[512] = 0x1p-126;
		a[513] = 0;
		fpl_accum_dot(&r, &od, 1024, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 0x1p-127))
			h_fail("onednn-bf16 subnormal block sum: want 2^-127 got %a", r);
		/* a chain that FTZ leaves at -0 stays -0 with beta = 0 (no
		 * +0 + block): K = 2, the even product -2^-140 is flushed */
		{
			double a2[2] = { -0x1p-70, 0 }, b2[2] = { 0x1p-70, 0 };
			fpl_accum_dot(&r, &od, 2, a2, 1, b2, 1, NULL, NULL, &st);
			if (!h_check(h_same(r, -0.0)))
				h_fail("onednn-bf16 flushed chain: want -0 got %a", r);
		}
		/* K <= 512: one chain, the avx512bf16 profile's bits */
		for (i = 0; i < 512; i++) {
			a[i] = fpl_round(&od.a, sin((double)i) * 3, FPL_RND_NE, &st);
			b[i] = fpl_round(&od.a, cos((double)i * 7) / 5, FPL_RND_NE, &st);
		}
		{
			double r2;
			fpl_accum_dot(&r, &od, 512, a, 1, b, 1, NULL, NULL, &st);
			fpl_accum_dot(&r2, &m, 512, a, 1, b, 1, NULL, NULL, &st);
			if (!h_check(h_same(r, r2)))
				h_fail("onednn-bf16 K = 512: want the one chain's %a got %a", r2, r);
		}
	}
	{	/* onednn-bf16's blocks follow K: 512 up to K = 1024, 1024 above.
		 * a_0 b_0 = 1 and the pair (1022, 1023) 2^-24 each: K = 1024,
		 * blocks [0, 512) and [512, 1024): 1 + 2^-23 (block 1 = 2^-23
		 * exactly).  K = 1026: blocks [0, 1024) and [1024, 1026): block 0
		 * is one chain, 1 + 2^-24 twice, a tie to even each time: 1; block
		 * 1 = 0; R = 1.  K = 2050, the same pattern moved up by 1024:
		 * blocks [1024, 2048) = 1, the others 0: R = 1 (blocks of 512 would
		 * give 1 + 2^-23). */
		static double a[2050], b[2050];
		fpl_accum_model od, o512;
		size_t i;
		for (i = 0; i < 2050; i++)
			a[i] = b[i] = 0;
		a[0] = b[0] = 1;
		a[1022] = a[1023] = 0x1p-24;
		b[1022] = b[1023] = 1;
		fpl_accum_profile(&od, "onednn-bf16");
		fpl_accum_profile(&o512, "avx512bf16");
		fpl_accum_parse_order(&o512, "pairs:512");
		fpl_accum_dot(&r, &od, 1024, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("onednn-bf16 K = 1024, blocks of 512: want 1+2^-23 got %a", r);
		fpl_accum_dot(&r, &od, 1026, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1))
			h_fail("onednn-bf16 K = 1026, blocks of 1024: want 1 got %a", r);
		fpl_accum_dot(&r, &o512, 1026, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("pairs:512 K = 1026: want 1+2^-23 got %a", r);
		a[0] = b[0] = a[1022] = a[1023] = b[1022] = b[1023] = 0;
		a[1024] = b[1024] = 1;
		a[1536] = a[1537] = 0x1p-24;
		b[1536] = b[1537] = 1;
		fpl_accum_dot(&r, &od, 2050, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1))
			h_fail("onednn-bf16 K = 2050, blocks of 1024: want 1 got %a", r);
		fpl_accum_dot(&r, &o512, 2050, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 1 + 0x1p-23))
			h_fail("pairs:512 K = 2050: want 1+2^-23 got %a", r);
		{	/* the same through gemm (1 x 1), its pairs-to-blocked path */
			double cg;
			fpl_accum_gemm(&cg, 1, &od, 0, 1, 1, 2050, a, 2050, 0, b, 1, 0, NULL, &st);
			if (!h_check(cg == 1))
				h_fail("onednn-bf16 gemm K = 2050: want 1 got %a", cg);
		}
	}
	{	/* pairs:B/L's spelling: avx512bf16 with pairs:512/1024 is the
		 * profile onednn-bf16; L must be even and above B */
		static const char *const bad[] = { "pairs:512/512", "pairs:512/1023", "pairs:512/",
						   "pairs:/1024", "pairs:512/256", "pairs:511/1024" };
		fpl_accum_model t;
		char d[256];
		size_t i;
		fpl_accum_profile(&t, "avx512bf16");
		if (!h_check(fpl_accum_parse_order(&t, "pairs:512/1024") == 0
			     && fpl_accum_describe(&t, d, sizeof d) == 0
			     && !strcmp(d, "--profile onednn-bf16")))
			h_fail("pairs:512/1024 does not describe as --profile onednn-bf16");
		for (i = 0; i < sizeof bad / sizeof *bad; i++) {
			fpl_accum_profile(&t, "avx512bf16");
			if (!h_check(fpl_accum_parse_order(&t, bad[i]) != 0))
				h_fail("%s parsed", bad[i]);
		}
		fpl_accum_profile(&t, "avx512bf16");
		t.acc_rnd = FPL_RND_TZ;	/* not the profile: the options spell L */
		fpl_accum_parse_order(&t, "pairs:512/1024:bf16");
		if (!h_check(fpl_accum_describe(&t, d, sizeof d) == 0
			     && strstr(d, "pairs:512/1024:") != NULL))
			h_fail("pairs:512/1024:bf16 described as '%s'", d);
		{	/* fpl_accum_check: L even, above B, and only with B */
			static const size_t bl[][2] = { { 512, 1024 }, { 0, 1024 }, { 512, 511 },
							{ 512, 512 }, { 512, 1026 } };
			static const int ok[] = { 1, 0, 0, 0, 1 };
			for (i = 0; i < 5; i++) {
				fpl_accum_profile(&t, "onednn-bf16");
				t.pair_block = bl[i][0];
				t.pair_long = bl[i][1];
				if (!h_check((fpl_accum_check(&t, NULL) == 0) == ok[i]))
					h_fail("fpl_accum_check pairs:%zu/%zu", bl[i][0], bl[i][1]);
			}
		}
	}
	{	/* amx: C = -0 with zero products gives +0 */
		double a[3] = { 0, -0.0, 0 }, b[3] = { 1, 1, -1 };
		c = -0.0;
		fpl_accum_dot(&r, &amx, 3, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(h_same(r, 0.0)))
			h_fail("amx-bf16 -0 + zeros: want +0 got %a", r);
	}
}

/* One fp16-fma dot product of hand-made fp16 values: want (bits, NaN
 * payloads and the sign of zero included) and the status. */
static void fp16_dot(const char *what, size_t K, const double *a, const double *b,
		     const double *c, double want, int want_rc)
{
	fpl_accum_model m;
	fpl_state st;
	double r = 7;
	int rc;

	fpl_accum_profile(&m, "fp16-fma");
	fpl_state_init(&st, 5);
	rc = fpl_accum_dot(&r, &m, K, a, 1, b, 1, c, NULL, &st);
	if (!h_check(rc == want_rc && (want_rc || h_same(r, want))))
		h_fail("fp16-fma %s: want %a (status %d) got %a (status %d)", what, want, want_rc,
		       r, rc);
}

/*
 * The profile fp16-fma: a VFMADD231PH loop, s = fma(a_k, b_k, s) in
 * IEEE binary16 (11-bit significand, normals from 2^-14, subnormals down
 * to 2^-24, max 65504), nearest even, from +0 or C.  Values by hand:
 */
static void test_fp16_profile(void)
{
	const double qnan = h_from_bits(0x7ff8000000000000ull);
	fpl_accum_model m;
	h_rng g;
	int rep;

	{	/* 2048 + 1 + 1: in [2048, 4096) fp16's spacing is 2, so 2049 is a
		 * tie between 2048 (significand even) and 2050: 2048, twice.
		 * binary32 (fp32-fma) keeps 2050. */
		double a[3] = { 2048, 1, 1 }, b[3] = { 1, 1, 1 }, r;
		fpl_state st;
		fp16_dot("2048 + 1 + 1", 3, a, b, NULL, 2048, 0);
		fpl_accum_profile(&m, "fp32-fma");
		fpl_state_init(&st, 5);
		fpl_accum_dot(&r, &m, 3, a, 1, b, 1, NULL, NULL, &st);
		if (!h_check(r == 2050))
			h_fail("fp32-fma 2048 + 1 + 1: want 2050 got %a", r);
	}
	{	/* subnormals kept: 2^-14 * 2^-10 = 2^-24, the smallest subnormal;
		 * + 2^-14 * 2^-11 = 1.5 * 2^-24, a tie between codes 1 and 2:
		 * the even one, 2^-23.  With FTZ or DAZ it would be 0. */
		double a[2] = { 0x1p-14, 0x1p-14 }, b[2] = { 0x1p-10, 0x1p-11 };
		fp16_dot("subnormal tie", 2, a, b, NULL, 0x1p-23, 0);
	}
	{	/* a product below half the smallest subnormal: 2^-14 * 2^-12 =
		 * 2^-26 rounds to +0, and -2^-26 to -0 from C = -0 */
		double a[1] = { -0x1p-14 }, b[1] = { 0x1p-12 }, c = -0.0;
		fp16_dot("tiny product from -0", 1, a, b, &c, -0.0, 0);
		/* from +0 (beta = 0): -2^-26 + 0 rounds to -0 too (the exact sum
		 * is negative, not zero) */
		fp16_dot("tiny product from +0", 1, a, b, NULL, -0.0, 0);
	}
	{	/* an exact -0 product plus +0: +0 in ne */
		double a[1] = { -0.0 }, b[1] = { 1 };
		fp16_dot("-0 * 1 + 0", 1, a, b, NULL, 0.0, 0);
	}
	{	/* overflow: 65504 + 16 = 65520, half way to 2^16: rounds to the
		 * even 2^16, beyond max: +inf.  65504 + 15 stays 65504. */
		double a[2] = { 65504, 16 }, b[2] = { 1, 1 }, a2[2] = { 65504, 15 };
		fp16_dot("65504 + 16", 2, a, b, NULL, INFINITY, 0);
		fp16_dot("65504 + 15", 2, a2, b, NULL, 65504, 0);
	}
	{	/* from C (beta = 1): 1 + 2^-11 is a tie -> 1; (1 + 2^-10) + 2^-11
		 * is a tie -> 1 + 2^-9 (even significand) */
		double a[1] = { 0x1p-11 }, b[1] = { 1 }, c = 1, c2 = 1 + 0x1p-10;
		fp16_dot("1 + 2^-11", 1, a, b, &c, 1, 0);
		fp16_dot("(1 + 2^-10) + 2^-11", 1, a, b, &c2, 1 + 0x1p-9, 0);
	}
	{	/* NaN: inf * 0 is the default NaN (sign 1, quiet); a NaN a wins
		 * over later terms and C */
		double a[2] = { INFINITY, 1 }, b[2] = { 0, 2 }, c = 1, r;
		fpl_format h;
		fpl_state st;
		fpl_format_lookup(&h, "fp16");
		fpl_accum_profile(&m, "fp16-fma");
		fpl_state_init(&st, 5);
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(fpl_encode(&h, r) == 0xfe00u && (st.flags & FPL_FLAG_INVALID)))
			h_fail("fp16-fma inf * 0: want 0xfe00 got 0x%04llx",
			       (unsigned long long)fpl_encode(&h, r));
		a[0] = fpl_decode(&h, 0x7d01u);	/* signaling, payload 0x101 */
		b[0] = -qnan;
		c = qnan;
		fpl_accum_dot(&r, &m, 2, a, 1, b, 1, &c, NULL, &st);
		if (!h_check(fpl_encode(&h, r) == 0x7f01u))
			h_fail("fp16-fma first NaN: want 0x7f01 (a quieted) got 0x%04llx",
			       (unsigned long long)fpl_encode(&h, r));
	}
	{	/* given inputs must be fp16 values: 0.1 is not */
		double a[1] = { 0.1 }, b[1] = { 1 };
		fp16_dot("0.1 not an fp16 value", 1, a, b, NULL, 0, FPL_ERANGE);
	}
	/* random: against the independent reference (sequential fmas over
	 * fpl_fma in fp16), GEMM shapes, C given or not, specials */
	fpl_accum_profile(&m, "fp16-fma");
	h_rng_init(&g, 16);
	for (rep = 0; rep < 24; rep++) {
		const size_t K = (size_t)h_rng_below(&g, 70);
		check_case(&m, rep % 3, 1 + (size_t)h_rng_below(&g, 9),
			   1 + (size_t)h_rng_below(&g, 9), K, rep & 1, (rep >> 1) & 1,
			   (rep >> 2) & 1, rep % 5 != 0, &g, 1 + rep % 2, "fp16-fma profile");
	}
}

static void test_model_text(void)
{
	size_t n, i;
	const fpl_accum_profile_entry *p = fpl_accum_profiles(&n);
	char buf[256];
	fpl_accum_model m, m2;

	for (i = 0; i < n; i++) {
		if (!h_check(fpl_accum_profile(&m, p[i].name) == 0)) {
			h_fail("profile %s is listed but does not build", p[i].name);
			continue;
		}
		fpl_accum_describe(&m, buf, sizeof buf);
		if (!h_check(!strncmp(buf, "--profile ", 10) && !strcmp(buf + 10, p[i].name)))
			h_fail("describe profile %s: %s", p[i].name, buf);
	}
	/* the orders' table: one entry per enum value, in order, each
	 * spelling's mandatory part (parameters set to 4) parsed back */
	{
		const fpl_accum_order_entry *o = fpl_accum_orders(&n);
		char s[64];

		h_check(n == FPL_ORDER_COUNT);
		for (i = 0; i < n; i++) {
			size_t k, j = 0;

			for (k = 0; o[i].spelling[k] && o[i].spelling[k] != '[' && j < 60; k++)
				if (o[i].spelling[k] < 'A' || o[i].spelling[k] > 'Z')
					s[j++] = o[i].spelling[k];
				else if (k == 0 || o[i].spelling[k - 1] < 'A' || o[i].spelling[k - 1] > 'Z')
					s[j++] = '4';
			s[j] = 0;
			fpl_accum_init(&m);
			if (!h_check(o[i].order == (fpl_accum_order)i
				     && !strcmp(o[i].name, fpl_accum_order_name(o[i].order))
				     && !strncmp(o[i].spelling, o[i].name, strlen(o[i].name))
				     && o[i].summary && o[i].summary[0]
				     && fpl_accum_parse_order(&m, s) == 0 && m.order == o[i].order))
				h_fail("order table entry %zu: %s, %s (parsed as '%s')", i, o[i].name,
				       o[i].spelling, s);
		}
	}
	fpl_accum_init(&m);
	spec(&m.a, "e4m3fn");
	m.b = m.a;
	fpl_accum_parse_spec("fp16:sp", &m.acc, &m.acc_rnd, NULL);
	fpl_accum_parse_order(&m, "blocked:128:fp32");
	fpl_accum_describe(&m, buf, sizeof buf);
	if (!h_check(!strcmp(buf, "-f e4m3fn:ne --prod exact --acc fp16:sp --order blocked:128:fp32")))
		h_fail("describe: %s", buf);
	m2 = m;
	if (!h_check(fpl_accum_parse_order(&m2, "fused:16:24:ne") == 0 && m2.block == 16
		     && m2.fused_w == 24 && m2.fused_rnd == FPL_RND_NE))
		h_fail("parse fused:16:24:ne");
	if (!h_check(fpl_accum_parse_order(&m2, "fused") == FPL_EPARSE
		     && fpl_accum_parse_order(&m2, "pairwise:0") == FPL_EPARSE
		     && fpl_accum_parse_order(&m2, "fused:4:65") == FPL_EPARSE
		     && fpl_accum_parse_order(&m2, "zigzag") == FPL_ENOTFOUND
		     && fpl_accum_parse_order(&m2, "blocked:4:nofmt") == FPL_ENOTFOUND))
		h_fail("parse order errors");
}

/* fpl_state.progress: a tile path counts every term (m * n * K), from
 * any number of threads, and the results do not depend on it. */
static void test_progress(void)
{
	enum { M = 37, N = 70, K = 19 };
	static double a[M * K], b[K * N], c1[M * N], c2[M * N];
	fpl_accum_model m;
	fpl_state st;
	uint64_t done;
	size_t i;
	int t, same = 1;

	for (i = 0; i < M * K; i++)
		a[i] = (double)((int)(i * 7 % 13) - 6) / 8;
	for (i = 0; i < K * N; i++)
		b[i] = (double)((int)(i * 5 % 11) - 5) / 4;
	fpl_accum_init(&m);
	if (!h_check(!fpl_accum_parse_spec("e4m3fn", &m.a, &m.a_rnd, NULL) &&
		     !fpl_accum_parse_spec("e4m3fn", &m.b, &m.b_rnd, NULL) &&
		     !fpl_accum_parse_spec("fp16", &m.acc, &m.acc_rnd, NULL))) {
		h_fail("progress: the model does not parse");
		return;
	}
	for (t = 1; t <= 3; t++) {
		fpl_state_init(&st, 5);
		st.threads = t;
		done = 0;
		st.progress = &done;
		if (!h_check(!fpl_accum_gemm(c1, N, &m, 0, M, N, K, a, K, 0, b, N, 0, NULL, &st)))
			h_fail("progress: gemm failed");
		if (!h_check(done == (uint64_t)M * N * K))
			h_fail("progress: %d threads counted %llu terms, not %d", t,
			       (unsigned long long)done, M * N * K);
		fpl_state_init(&st, 5);
		st.threads = t;
		if (!h_check(!fpl_accum_gemm(c2, N, &m, 0, M, N, K, a, K, 0, b, N, 0, NULL, &st)))
			h_fail("progress: gemm failed");
		for (i = 0; i < M * N; i++)
			same &= h_same(c1[i], c2[i]);
	}
	if (!h_check(same))
		h_fail("progress: the results change with a progress counter");
}

/* fpl_accum_describe_part: each part of h100-fp8 in the spelling the
 * profile's comment (fplab-models(7)) gives by hand, the truncation
 * and the bad part. */
static void test_describe_part(void)
{
	static const struct {
		fpl_accum_part p;
		const char *want;
	} parts[] = {
		{ FPL_PART_A, "e4m3fn:given" },
		{ FPL_PART_B, "e4m3fn:given" },
		{ FPL_PART_PROD, "exact" },
		{ FPL_PART_ACC, "e8m13+inf+nanones:tz" },
		{ FPL_PART_ORDER, "fused:32:15:tz:expsum/128:fp32+nanones:ne" },
		{ FPL_PART_OUT, "none" },
	};
	fpl_accum_model m;
	char d[128];
	size_t i;

	fpl_accum_profile(&m, "h100-fp8");
	for (i = 0; i < sizeof parts / sizeof *parts; i++) {
		int rc = fpl_accum_describe_part(&m, parts[i].p, d, sizeof d);
		if (!h_check(rc == 0 && !strcmp(d, parts[i].want)))
			h_fail("h100-fp8 part %d: want '%s' got '%s' (%d)", (int)parts[i].p,
			       parts[i].want, d, rc);
	}
	if (!h_check(fpl_accum_describe_part(&m, FPL_PART_ORDER, d, 6) == FPL_ERANGE
		     && !strcmp(d, "fused")))
		h_fail("a 6-byte buffer: want FPL_ERANGE and 'fused', got '%s'", d);
	if (!h_check(fpl_accum_describe_part(&m, (fpl_accum_part)99, d, sizeof d) == FPL_EINVAL))
		h_fail("part 99 accepted");
}

int main(void)
{
	h_init("taccum");
	test_model_text();
	test_ones();
	test_int_gemm();
	test_fmaf();
	test_fused_exact();
	test_threads();
	test_progress();
	test_bf16_profiles();
	test_fp16_profile();
	test_random();
	test_describe_part();
	return h_done();
}
