/* SPDX-License-Identifier: MIT */
/*
 * th100.c - fplab's h100-* profiles against the bits an NVIDIA H100 gave
 * (issue 26).  No GPU is needed: the GPU's outputs are recorded in
 * tests/data/h100 (tools/tensorcore_probe.py ran the probes on the GPU,
 * tools/tensorcore_record.py kept them; env.json names the GPU, driver,
 * cuBLAS and PyTorch).  The expected values are the GPU's, never fplab's.
 *
 * For each kind (bf16, fp16, e4m3 x e4m3, e4m3 x e5m2) and probe set S
 * (align, group, round, promote, special, random K, wide K, cancel128):
 *   S_c, S_d   cuBLAS in a 4096 x 4096 embedding: C[:, :32] and the
 *              diagonal, against the kind's profile (h100-bf16, h100-fp16,
 *              h100-fp8 with B in e4m3fn or e5m2);
 *   S_small    K = 100 as an m x n problem: the profile as it is (bf16;
 *              fp16's kernel for it is not modelled: 618 of 1024 differ);
 *   S_c, K = 100: the embedded problem runs a kernel that takes the
 *              partial group of K mod 16 first: the profile on inputs with
 *              16 - K mod 16 zeros in front reproduces it;
 *   S_lo       torch.matmul's bf16/fp16 output: the profile with
 *              --out-format bf16:ne / fp16:ne;
 *   S_fast     torch._scaled_mm with use_fast_accum: h100-fp8-fast.
 * tails.npz: K that is no multiple of 16 (1 to 1030), N(0, 1) inputs, as
 * a 32 x 32 problem and embedded in 256 x 256 and 4096 x 4096 outputs.
 * cuBLAS picks a kernel per problem: groups of 16 with the partial group
 * last or first, groups of 8 (odd K, large problems), or one the profile
 * does not model (split-K or another order).  The table below, from the
 * fit (tools/tensorcore_probe.py --tails; fplab-models(7)), says which;
 * each modelled entry must match bit for bit, the others are counted.
 * Every output must match bit for bit, NaNs included (0x7fffffff).  Two
 * wrong models must fail somewhere, so that the data can tell models
 * apart: the plain fp32 fma chain, and h100-bf16 aligned to the leading
 * exponent (the fused order's default) instead of the exponent sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/fplab.h>

#include "harness.h"

typedef struct mat {
	float *v;
	size_t r, c;
} mat;

static int load(fpl_tensor_file *tf, const char *name, mat *out)
{
	char err[512];
	long i = fpl_tensor_find(tf, name);
	const fpl_tensor_info *ti;
	fpl_tensor_stream *s;
	size_t got = 0, n;

	out->v = NULL;
	if (i < 0)
		return 0;
	ti = fpl_tensor_get(tf, (size_t)i);
	out->r = ti->shape[0];
	out->c = ti->ndim == 2 ? ti->shape[1] : 1;
	n = out->r * out->c;
	out->v = malloc((n ? n : 1) * sizeof(float));
	if (!out->v || fpl_tensor_stream_open(&s, tf, (size_t)i, err, sizeof err)) {
		h_fail("%s: %s", name, err);
		free(out->v);
		out->v = NULL;
		return 0;
	}
	if (fpl_tensor_stream_read_f32(s, out->v, n, &got, err, sizeof err) || got != n) {
		h_fail("%s: read %zu of %zu: %s", name, got, n, err);
		free(out->v);
		out->v = NULL;
	}
	fpl_tensor_stream_close(s);
	return out->v != NULL;
}

/* C = A B under m (A m x K, B K x n), with z zeros in front of K. */
static double *gemm(const fpl_accum_model *m, const mat *A, const mat *B, size_t z)
{
	size_t K = A->c + z, i, k, j;
	double *a = calloc(A->r * K, sizeof *a), *b = calloc(K * B->c, sizeof *b),
	       *c = calloc(A->r * B->c, sizeof *c);
	fpl_state st;

	fpl_state_init(&st, 1);
	for (i = 0; i < A->r; i++)
		for (k = 0; k < A->c; k++)
			a[i * K + z + k] = A->v[i * A->c + k];
	for (k = 0; k < B->r; k++)
		for (j = 0; j < B->c; j++)
			b[(z + k) * B->c + j] = B->v[k * B->c + j];
	if (fpl_accum_gemm(c, B->c, m, 0, A->r, B->c, K, a, K, 0, b, B->c, 0, NULL, &st)) {
		h_fail("fpl_accum_gemm refused the model");
		free(c);
		c = NULL;
	}
	free(a);
	free(b);
	return c;
}

static uint32_t bits32(double x)
{
	return h_bits32((float)x);	/* exact: every result is a binary32 value */
}

/* Compare C[:, :32] (or the diagonal) with the recorded want; returns the
 * number of mismatches, reporting the first few when `report`. */
static size_t compare(const char *what, const double *C, size_t n, const mat *want, int diag,
		      int report)
{
	size_t bad = 0, i, j, rows = want->r, cols = diag ? 1 : want->c;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			size_t at = diag ? i * n + i : i * n + j;
			uint32_t w = h_bits32(want->v[i * cols + j]), g = bits32(C[at]);
			if (w != g && bad++ < 3 && report)
				h_note("%s[%zu,%zu]: GPU %08x (%a), fplab %08x (%a)", what, i,
				       diag ? i : j, w, (double)want->v[i * cols + j], g, C[at]);
		}
	return bad;
}

typedef struct kind {
	const char *file, *profile, *b_format, *low;
} kind;

static const kind kinds[] = {
	{ "bf16", "h100-bf16", NULL, "bf16" },
	{ "fp16", "h100-fp16", NULL, "fp16" },
	{ "e4m3", "h100-fp8", NULL, NULL },
	{ "e4m3e5m2", "h100-fp8", "e5m2", NULL },
};

static void model_of(const kind *kd, const char *profile, fpl_accum_model *m)
{
	fpl_accum_init(m);
	if (fpl_accum_profile(m, profile))
		h_fail("no profile %s", profile);
	if (kd->b_format && fpl_accum_parse_spec(kd->b_format, &m->b, NULL, NULL))
		h_fail("bad format %s", kd->b_format);
}

/* Check one recorded output: counts into *n, mismatches into *bad. */
/* One model's product of A and B (z zeros in front of K), computed on
 * first use, so that the outputs recorded for it share one GEMM. */
typedef struct product {
	const fpl_accum_model *m;
	const mat *A, *B;
	size_t z;
	int done;
	double *C;	/* NULL when refused (already reported) */
} product;

static const double *product_get(product *p)
{
	if (!p->done) {
		p->done = 1;
		p->C = gemm(p->m, p->A, p->B, p->z);
	}
	return p->C;
}

static void check_out(fpl_tensor_file *tf, const char *set, const char *suffix, product *p,
		      int diag, size_t *n, size_t *bad)
{
	char name[128], what[160];
	mat want;
	const double *C;
	size_t b;

	if (suffix)
		snprintf(name, sizeof name, "%s_%s", set, suffix);
	else
		snprintf(name, sizeof name, "%s", set);
	if (!load(tf, name, &want))
		return;
	C = product_get(p);
	if (C) {
		snprintf(what, sizeof what, "%s (%zu leading zeros)", name, p->z);
		b = compare(what, C, p->B->c, &want, diag, 1);
		if (!h_check(b == 0))
			h_fail("%s: %zu of %zu outputs differ from the GPU", name, b,
			       want.r * (diag ? 1 : want.c));
		*n += want.r * (diag ? 1 : want.c);
		*bad += b;
	}
	free(want.v);
}

/* A wrong model on one set must differ from the GPU somewhere. */
static void must_differ(fpl_tensor_file *tf, const char *set, const fpl_accum_model *m,
			const char *why)
{
	char name[128];
	mat A, B, want;
	double *C;

	snprintf(name, sizeof name, "%s_a", set);
	load(tf, name, &A);
	snprintf(name, sizeof name, "%s_b", set);
	load(tf, name, &B);
	snprintf(name, sizeof name, "%s_c", set);
	load(tf, name, &want);
	if (A.v && B.v && want.v && (C = gemm(m, &A, &B, 0))) {
		size_t b = compare(set, C, B.c, &want, 0, 0);
		if (!h_check(b > 0))
			h_fail("%s: %s matches the GPU too: the data cannot tell it apart", set, why);
		else
			h_note("%s: %s: %zu of %zu outputs differ (as they must)", set, why, b,
			       want.r * want.c);
		free(C);
	}
	free(A.v);
	free(B.v);
	free(want.v);
}

/* Which model reproduces each tails entry: 'L' groups of 16 from k = 0
 * (the profile), 'F' groups of 16 with the partial group first, 'l'
 * groups of 8 from k = 0, 'f' groups of 8 with the partial group first,
 * '-' none: the kernels for small, mid (256) and pad (4096). */
static const struct tail {
	const char *kind;
	int K;
	char rule[4];
} tails_tab[] = {
	{ "bf16", 1, "LLL" },	{ "bf16", 2, "LLL" },	  { "bf16", 8, "LLL" },
	{ "bf16", 15, "--l" },	{ "bf16", 17, "--l" },	  { "bf16", 24, "LLL" },
	{ "bf16", 31, "--l" },	{ "bf16", 33, "--f" },	  { "bf16", 40, "LLL" },
	{ "bf16", 48, "LLL" },	{ "bf16", 100, "LLF" },	  { "bf16", 127, "---" },
	{ "bf16", 130, "FFF" }, { "bf16", 250, "---" },	  { "bf16", 1000, "LLL" },
	{ "bf16", 1030, "--F" },
	{ "fp16", 1, "LLL" },	{ "fp16", 2, "LLL" },	  { "fp16", 8, "LLL" },
	{ "fp16", 15, "LLl" },	{ "fp16", 17, "LLl" },	  { "fp16", 24, "LLL" },
	{ "fp16", 31, "LLl" },	{ "fp16", 33, "LLf" },	  { "fp16", 40, "LLL" },
	{ "fp16", 48, "LLL" },	{ "fp16", 100, "-LF" },	  { "fp16", 127, "-L-" },
	{ "fp16", 130, "FFF" }, { "fp16", 250, "---" },	  { "fp16", 1000, "LLL" },
	{ "fp16", 1030, "--F" },
};

static void check_tails(const char *dir, size_t *total, size_t *totalbad)
{
	static const char *const tags[3] = { "small", "mid", "pad" };
	char path[1024], err[512];
	fpl_tensor_file *tf;
	size_t i, t, n = 0, bad = 0, unmodelled = 0;

	snprintf(path, sizeof path, "%s/h100/tails.npz", dir);
	if (fpl_tensor_open(&tf, path, NULL, err, sizeof err)) {
		h_check(0);
		h_fail("%s", err);
		return;
	}
	for (i = 0; i < sizeof tails_tab / sizeof *tails_tab; i++) {
		const struct tail *e = &tails_tab[i];
		char name[128];
		mat A, B;
		fpl_accum_model m;

		fpl_accum_init(&m);
		fpl_accum_profile(&m, !strcmp(e->kind, "bf16") ? "h100-bf16" : "h100-fp16");
		snprintf(name, sizeof name, "%s_%d_a", e->kind, e->K);
		load(tf, name, &A);
		snprintf(name, sizeof name, "%s_%d_b", e->kind, e->K);
		load(tf, name, &B);
		if (!h_check(A.v && B.v)) {
			h_fail("tails %s K=%d: missing", e->kind, e->K);
		} else {
			for (t = 0; t < 3; t++) {
				char r = e->rule[t];
				size_t F = r == 'l' || r == 'f' ? 8 : 16, z = 0;
				if (r == '-') {
					unmodelled += 32 * 32;
					continue;
				}
				if (r == 'F' || r == 'f')
					z = (F - (size_t)e->K % F) % F;
				m.block = F;
				snprintf(name, sizeof name, "%s_%d_%s", e->kind, e->K, tags[t]);
				{
					product p = { &m, &A, &B, z, 0, NULL };
					check_out(tf, name, NULL, &p, 0, &n, &bad);
					free(p.C);
				}
			}
		}
		free(A.v);
		free(B.v);
	}
	h_note("tails: %zu outputs in modelled kernels, %zu differ; %zu outputs of the kernels "
	       "no profile models (split-K or another order) not compared",
	       n, bad, unmodelled);
	*total += n;
	*totalbad += bad;
	fpl_tensor_close(tf);
}

int main(void)
{
	const char *dir = getenv("FPLAB_TEST_DATA") ? getenv("FPLAB_TEST_DATA") : "tests/data";
	size_t total = 0, totalbad = 0, ki, i;

	h_init("th100");
	for (ki = 0; ki < sizeof kinds / sizeof *kinds; ki++) {
		const kind *kd = &kinds[ki];
		char path[1024], err[512];
		fpl_tensor_file *tf;
		fpl_accum_model m, lo, fast;
		size_t n = 0, bad = 0;

		snprintf(path, sizeof path, "%s/h100/%s.npz", dir, kd->file);
		if (fpl_tensor_open(&tf, path, NULL, err, sizeof err)) {
			h_check(0);
			h_fail("%s", err);
			continue;
		}
		model_of(kd, kd->profile, &m);
		model_of(kd, kd->profile, &lo);
		if (kd->low) {
			lo.out_set = 1;
			lo.out_rnd = FPL_RND_NE;
			if (fpl_accum_parse_spec(kd->low, &lo.out, NULL, NULL))
				h_fail("bad format %s", kd->low);
		}
		model_of(kd, "h100-fp8-fast", &fast);
		for (i = 0; i < fpl_tensor_count(tf); i++) {
			const char *nm = fpl_tensor_get(tf, i)->name;
			size_t len = strlen(nm), z;
			char set[128], name[160];
			mat A, B;

			if (len < 3 || strcmp(nm + len - 2, "_a") || len - 2 >= sizeof set)
				continue;
			memcpy(set, nm, len - 2);
			set[len - 2] = 0;
			load(tf, nm, &A);
			snprintf(name, sizeof name, "%s_b", set);
			load(tf, name, &B);
			if (!A.v || !B.v) {
				h_check(0);
				h_fail("%s: missing inputs", set);
				free(A.v);
				free(B.v);
				continue;
			}
			/* the embedded K = 100 problem takes the partial group first */
			z = A.c % m.block ? m.block - A.c % m.block : 0;
			if (strcmp(set, "random100"))
				z = 0;
			product pm = { &m, &A, &B, z, 0, NULL }, p0 = { &m, &A, &B, 0, 0, NULL },
				plo = { &lo, &A, &B, 0, 0, NULL }, pfast = { &fast, &A, &B, 0, 0, NULL };
			check_out(tf, set, "c", &pm, 0, &n, &bad);
			check_out(tf, set, "d", &pm, 1, &n, &bad);
			/* The 32 x 32 x 100 problem itself: bf16's kernel runs the
			 * groups from k = 0, its last group partial; fp16's is a
			 * kernel the profile does not reproduce (618 of 1024 differ;
			 * fplab-models(7)), left out here and said so. */
			if (!strcmp(set, "random100") && !strcmp(kd->file, "fp16"))
				h_note("%s_small: not checked: fp16's 32 x 32 x 100 kernel is not modelled",
				       set);
			else
				check_out(tf, set, "small", z ? &p0 : &pm, 0, &n, &bad);
			if (kd->low)
				check_out(tf, set, "lo", &plo, 0, &n, &bad);
			if (!kd->low)
				check_out(tf, set, "fast", &pfast, 0, &n, &bad);
			free(pm.C);
			free(p0.C);
			free(plo.C);
			free(pfast.C);
			free(A.v);
			free(B.v);
		}
		h_note("%s (%s): %zu recorded outputs, %zu differ", kd->file, kd->profile, n, bad);
		if (!h_check(n > 1000))
			h_fail("%s: only %zu outputs recorded", kd->file, n);
		total += n;
		totalbad += bad;
		if (ki == 0) {
			fpl_accum_model wrong;
			fpl_accum_init(&wrong);
			fpl_accum_profile(&wrong, "fp32-fma");
			wrong.a_load = wrong.b_load = FPL_LOAD_ROUND;
			must_differ(tf, "wide64", &wrong, "an fp32 fma chain");
			wrong = m;
			wrong.fused_ref = FPL_FUSED_LEAD;
			wrong.fused_w = 26;
			must_differ(tf, "wide64", &wrong, "fused:16:26:tz (leading exponent)");
		}
		fpl_tensor_close(tf);
	}
	check_tails(dir, &total, &totalbad);
	h_note("all kinds: %zu recorded outputs, %zu differ", total, totalbad);
	return h_done();
}
