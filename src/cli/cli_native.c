/* SPDX-License-Identifier: MIT */
/*
 * cli_native.c - `--backend native|emu|both` for dot and gemm: the CPU's
 * own kernel (fplab/native.h) beside the emulated profile that claims to
 * reproduce it, on the same inputs.
 *
 * The report has one row per backend: the kernel and the profile, the
 * blocking each uses, `mismatches` (outputs whose binary32 encodings
 * differ between the two, NaN payloads and the sign of zero included;
 * null when only one backend ran), each one's errors against the exact
 * result (fplab/accum_error.h, on the same loaded inputs) and speed.
 *
 * Invariant: both backends see the same inputs.  Generated data and files
 * go through cli_accum_given (rounded into the profile's input formats
 * when generated), and the native kernel gets those values as floats,
 * exactly (a value that is not a binary32 value is refused with its
 * position).
 *
 * --backend onednn puts oneDNN's own matmul (cli_onednn.c, loaded at run
 * time) in the native row: its bf16 matmul when the model's inputs are
 * bf16 (kernel onednn-bf16), else its f32 matmul (onednn-f32); the
 * blocking cell names oneDNN's implementation.  Any model may stand
 * beside it (a profile or options), so oneDNN's blocking can be probed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/native.h>

#include "cli/cli.h"

int cli_backend_parse(const char *arg, enum cli_backend *b)
{
	if (!strcmp(arg, "emu"))
		*b = CLI_BACKEND_EMU;
	else if (!strcmp(arg, "native"))
		*b = CLI_BACKEND_NATIVE;
	else if (!strcmp(arg, "both"))
		*b = CLI_BACKEND_BOTH;
	else if (!strcmp(arg, "onednn"))
		*b = CLI_BACKEND_ONEDNN;
	else
		return error("--backend: '%s' is not emu, native, both or onednn", arg);
	return 0;
}

static void gemm_profiles(char *buf, size_t size);

int cli_backend_check(const char *usage, enum cli_backend be, size_t nj, const char *output,
		      const char *profile)
{
	const char *name = be == CLI_BACKEND_BOTH ? "both"
			   : be == CLI_BACKEND_ONEDNN ? "onednn" : "native";
	char names[160];

	if (be == CLI_BACKEND_ONEDNN) {	/* any one model, beside oneDNN */
		if (nj > 1)
			return usage_error(usage, "--backend onednn runs one model beside oneDNN, "
					   "not a sweep of %zu", nj);
		if (output)
			return usage_error(usage, "-o %s: --backend onednn has two results; "
					   "choose native or emu to write one", output);
		return 0;
	}
	if (be != CLI_BACKEND_EMU && !profile) {
		gemm_profiles(names, sizeof names);
		return usage_error(usage, "--backend %s needs --profile NAME, the profile of a "
				   "native kernel (%s)", name, names);
	}
	if (be != CLI_BACKEND_EMU && nj > 1)
		return usage_error(usage, "--backend %s runs one model, a profile with a native "
				   "kernel, not a sweep of %zu", name, nj);
	if (output && be == CLI_BACKEND_BOTH)
		return usage_error(usage, "-o %s: --backend both has two results; choose native "
				   "or emu to write one", output);
	return 0;
}

/* The names of the profiles with a native GEMM kernel, space-separated. */
static void gemm_profiles(char *buf, size_t size)
{
	size_t n, i, len = 0;
	const fpl_native_kernel *k = fpl_native_kernels(&n);

	buf[0] = 0;
	for (i = 0; i < n; i++)
		if (k[i].op == FPL_NATIVE_GEMM && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "",
						k[i].profile);
	if (!len)
		snprintf(buf, size, "none in this build");
}

static const fpl_native_kernel *cli_native_kernel(const char *cmd_profile_opt, const char *profile)
{
	const fpl_native_kernel *k;
	const char *why;
	char names[160];

	gemm_profiles(names, sizeof names);
	if (!profile) {
		error("--backend %s needs --profile NAME, the profile of a native kernel (%s)",
		      cmd_profile_opt, names);
		return NULL;
	}
	k = fpl_native_find(FPL_NATIVE_GEMM, profile);
	if (!k) {
		error("--profile %s has no native kernel (profiles with one: %s)", profile, names);
		return NULL;
	}
	if (!fpl_native_usable(k, &why)) {
		error("--backend %s: the kernel %s (profile %s) cannot run here: %s",
		      cmd_profile_opt, k->name, profile, why);
		return NULL;
	}
	return k;
}

/* x as a float, exactly, into *f; -1 (message) when x is not a binary32
 * value.  NaNs keep sign and payload bits (the conversion is exact for a
 * NaN that came from a binary32 or bf16 value).  The element is named as
 * NAME[i][j], or NAME[i] for a vector (j < 0), indices from 0. */
static int to_float(double x, float *f, const char *name, size_t i, long j)
{
	char at[64];

	*f = (float)x;
	if (*f == x || (isnan(x) && isnan(*f)))
		return 0;
	if (j < 0)
		snprintf(at, sizeof at, "%s[%zu]", name, i);
	else
		snprintf(at, sizeof at, "%s[%zu][%ld]", name, i, j);
	return error("%s = %.17g is not a binary32 value: the native kernel takes binary32 "
		     "inputs", at, x);
}

/* One backend's row. */
static void row_cells(struct cli_table *t, int kind, const char *backend, const char *kernel,
		      const char *profile, const char *blocking, size_t m, size_t n, size_t k,
		      double result, double exact, long long mism, const fpl_accum_errors *e,
		      double seconds, double flops)
{
	cli_table_str(t, backend);
	cli_table_str(t, kernel);
	cli_table_str(t, profile);
	cli_table_str(t, blocking);
	if (kind == CLI_RUN_GEMM) {
		cli_table_int(t, (long long)m);
		cli_table_int(t, (long long)n);
	}
	cli_table_int(t, (long long)k);
	if (kind != CLI_RUN_GEMM) {
		cli_table_num(t, result);
		cli_table_num(t, exact);
	}
	if (mism < 0)
		cli_table_none(t);
	else
		cli_table_int(t, mism);
	if (e->rel_n) {	/* no value over no values (cli_accum_cells) */
		cli_table_num(t, e->mean_rel);
		cli_table_num(t, e->rms_rel);
		cli_table_num(t, e->max_rel);
		cli_table_num(t, e->median_rel);
	} else {
		cli_table_none(t);
		cli_table_none(t);
		cli_table_none(t);
		cli_table_none(t);
	}
	cli_table_num_or_none(t, e->compared ? e->normwise : NAN);
	cli_table_num(t, e->bound);
	cli_table_int(t, (long long)e->nan);
	cli_table_int(t, (long long)e->inf);
	cli_table_num(t, seconds);
	cli_table_num(t, seconds > 0 ? flops / seconds / 1e6 : 0);
}

int cli_native_accum(struct cli_model_job *j, enum cli_backend be, enum cli_report report,
		     int kind, double *c, size_t m, size_t n, size_t k,
		     const double *a, size_t lda, int transa, const double *b, size_t ldb,
		     int transb, const char *profile)
{
	static const char *const gemm_cols[] = {
		"backend", "kernel", "profile", "blocking", "m", "n", "k", "mismatches",
		"mean_rel_error", "rms_rel_error", "max_rel_error", "median_rel_error",
		"normwise_error", "bound", "nan", "inf", "seconds", "mflops"
	};
	static const char *const dot_cols[] = {
		"backend", "kernel", "profile", "blocking", "n", "result", "exact", "mismatches",
		"mean_rel_error", "rms_rel_error", "max_rel_error", "median_rel_error",
		"normwise_error", "bound", "nan", "inf", "seconds", "mflops"
	};
	const int dnnl = be == CLI_BACKEND_ONEDNN;
	const char *opt = be == CLI_BACKEND_BOTH ? "both" : dnnl ? "onednn" : "native";
	const fpl_native_kernel *kn = dnnl ? NULL : cli_native_kernel(opt, profile);
	const int dnnl_bf16 = j->mod.a.e == 8 && j->mod.a.m == 7;
	const char *kname = dnnl ? dnnl_bf16 ? "onednn-bf16" : "onednn-f32" : NULL;
	char impl[128], pname[512];
	const double flops = 2.0 * (double)m * (double)n * (double)k;
	double *ga = NULL, *gb = NULL, *ex = NULL, *cn = NULL, t0, tn;
	float *A = NULL, *B = NULL, *C = NULL;
	struct cli_accum_row emu;
	fpl_accum_errors en;
	fpl_format f32;
	long long mism = -1;
	size_t i, q;
	int rc = -1;

	if (!kn && !dnnl)
		return -1;
	if (kind == CLI_RUN_SUM)
		return error("--backend %s: reductions have no native kernel", opt);
	if (dnnl) {
		if (fpl_accum_describe(&j->mod, pname, sizeof pname))
			snprintf(pname, sizeof pname, "?");
		if (!strncmp(pname, "--profile ", 10))
			memmove(pname, pname + 10, strlen(pname + 10) + 1);
		if (profile && strcmp(pname, profile) == 0)
			snprintf(pname, sizeof pname, "%s", profile);
	} else {	/* the native kernel computes the profile, not a variant of it */
		char d[512], want[64];
		snprintf(want, sizeof want, "--profile %s", kn->profile);
		if (fpl_accum_describe(&j->mod, d, sizeof d) || strcmp(d, want))
			return error("--backend %s: other options changed the profile %s into "
				     "'%s'; the native kernel computes the profile itself", opt,
				     kn->profile, d);
	}
	/* the inputs both backends take */
	if (cli_accum_given(j, m * k, a, &ga, kind == CLI_RUN_DOT ? (k - 1) * ldb + 1 : k * n, b,
			    &gb))
		return -1;
	if (ga)
		a = ga;
	if (gb)
		b = gb;
	A = malloc((m * k + 1) * sizeof *A);
	B = malloc((k * n + 1) * sizeof *B);
	C = malloc((m * n + 1) * sizeof *C);
	cn = malloc((m * n + 1) * sizeof *cn);
	ex = malloc((m * n + 1) * sizeof *ex);
	if (!A || !B || !C || !cn || !ex) {
		error("out of memory");
		goto out;
	}
	for (i = 0; i < m; i++)
		for (q = 0; q < k; q++)
			if (kind == CLI_RUN_DOT ? to_float(a[q], &A[q], "x", q, -1)
			    : to_float(transa ? a[q * lda + i] : a[i * lda + q], &A[i * k + q], "A",
				       i, (long)q))
				goto out;
	for (q = 0; q < k; q++)
		for (i = 0; i < n; i++) {
			if (kind == CLI_RUN_DOT ? to_float(b[q * ldb], &B[q], "y", q, -1)
			    : to_float(transb ? b[i * ldb + q] : b[q * ldb + i], &B[q * n + i], "B",
				       q, (long)i))
				goto out;
		}
	/* the emulation (its errors, flags and time), unless native only */
	if ((be == CLI_BACKEND_BOTH || dnnl)
	    && cli_accum_run(j, 1, kind, c, m, n, k, a, lda, transa, b, ldb, transb, &emu))
		goto out;
	t0 = cli_now();
	if (dnnl) {
		rc = cli_onednn_gemm(dnnl_bf16, m, n, k, A, B, C, j->st.threads, impl,
				     sizeof impl);
		tn = cli_now() - t0;
		if (rc)
			goto out;
	} else {
		rc = fpl_native_gemm(kn, 0, m, n, k, A, B, C, j->st.threads);
		tn = cli_now() - t0;
	}
	if (rc) {
		rc = error("native %s: %s%s", kn->name, fpl_strerror(rc),
			   rc == FPL_ERANGE ? " (inputs must be values of the profile's input "
					      "format)" : "");
		goto out;
	}
	for (i = 0; i < m * n; i++)
		cn[i] = (double)C[i];
	rc = fpl_accum_errors_gemm(&en, ex, cn, n, &j->mod, m, n, k, a, lda, transa, b, ldb,
				   transb, NULL, 0, j->st.threads);
	if (rc) {
		rc = error("error measurement failed: %s", fpl_strerror(rc));
		goto out;
	}
	fpl_format_lookup(&f32, "fp32");
	if (be == CLI_BACKEND_BOTH || dnnl) {
		mism = 0;
		for (i = 0; i < m * n; i++) {
			uint32_t u;
			memcpy(&u, &C[i], sizeof u);
			mism += fpl_encode(&f32, c[i]) != u;
		}
	}
	{
		struct cli_table t;
		const int gemm = kind == CLI_RUN_GEMM;
		double res = gemm ? NAN : cn[0], exa = gemm ? NAN : ex[0];

		cli_table_begin(&t, stdout, report, gemm ? gemm_cols : dot_cols,
				gemm ? (int)(sizeof gemm_cols / sizeof *gemm_cols)
				     : (int)(sizeof dot_cols / sizeof *dot_cols));
		if (dnnl)
			row_cells(&t, kind, "onednn", kname, pname, impl, m, n, k, res, exa, mism,
				  &en, tn, flops);
		else
			row_cells(&t, kind, "native", kn->name, kn->profile, kn->blocking, m, n,
				  k, res, exa, mism, &en, tn, flops);
		if (be == CLI_BACKEND_BOTH || dnnl) {
			fpl_accum_errors ee;
			char blk[CLI_SPEC_MAX + 8];

			memset(&ee, 0, sizeof ee);
			ee.rel_n = emu.rel_n;
			ee.compared = emu.compared;
			ee.mean_rel = emu.mean_rel;
			ee.rms_rel = emu.rms_rel;
			ee.max_rel = emu.max_rel;
			ee.median_rel = emu.median_rel;
			ee.nan = emu.nan;
			ee.inf = emu.inf;
			ee.normwise = emu.normwise;
			ee.bound = emu.bound;
			snprintf(blk, sizeof blk, "order %s", j->order);
			row_cells(&t, kind, "emu", "engine", dnnl ? pname : kn->profile, blk, m, n, k,
				  gemm ? NAN : emu.result, gemm ? NAN : emu.exact, mism, &ee,
				  emu.seconds, flops);
		}
		cli_table_end(&t);
	}
	if (mism > 0)
		error("warning: the native kernel %s and the emulated profile %s differ in %lld "
		      "of %zu outputs", dnnl ? kname : kn->name, dnnl ? pname : kn->profile,
		      mism, m * n);
	/* -o writes the native result */
	memcpy(c, cn, m * n * sizeof *c);
	rc = 0;
out:
	free(ga);
	free(gb);
	free(A);
	free(B);
	free(C);
	free(cn);
	free(ex);
	return rc ? -1 : 0;
}
