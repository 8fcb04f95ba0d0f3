/* SPDX-License-Identifier: MIT */
/*
 * cli_round_native.c - `fplab round --backend native|both`: binary32
 * values converted by the CPU's own instruction (fplab/native.h: F16C's
 * VCVTPS2PH into fp16, AVX512-BF16's VCVTNEPS2BF16 into bf16) beside
 * fplab's emulation of it, chunk by chunk.
 *
 * The emulated twin of a conversion is a format and a mode: fp16 is
 * fplab's fp16 (tests/tnative.c shows why every bit agrees); the bf16
 * instruction reads fp32 denormals as zero and so flushes every input
 * below 2^-126, which is bf16 with subnormals flushed and tininess
 * detected before rounding.  Under --backend both the job rounds into
 * that twin, and the report says so.
 *
 * mismatches counts the elements whose encodings differ (NaN payloads and
 * the sign of zero included).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *conversions(void)
{
	static char buf[160];
	size_t n, i, len = 0;
	const fpl_native_kernel *k = fpl_native_kernels(&n);

	buf[0] = 0;
	for (i = 0; i < n; i++)
		if (k[i].op == FPL_NATIVE_ROUND && len < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s (%s)",
						len ? ", " : "", k[i].profile, k[i].name);
	return len ? buf : "none in this build";
}

int cli_round_native_setup(struct cli_round_native *rn, enum cli_backend be, fpl_format *fmt,
			   fpl_rnd rnd, size_t chunk)
{
	const char *opt = be == CLI_BACKEND_BOTH ? "both" : "native", *why;

	memset(rn, 0, sizeof *rn);
	rn->be = be;
	if (be == CLI_BACKEND_EMU)
		return 0;
	rn->k = fpl_native_find(FPL_NATIVE_ROUND, fmt->name);
	if (!rn->k)
		return error("--backend %s: -f %s has no native conversion (native conversions: "
			     "%s)", opt, fmt->name, conversions());
	if (!fpl_native_usable(rn->k, &why))
		return error("--backend %s: the conversion %s into %s cannot run here: %s", opt,
			     rn->k->name, fmt->name, why);
	{
		char mode[8];
		const char *p = rn->k->modes, *name = fpl_rnd_name(rnd);
		int found = 0;

		while (*p && !found) {
			size_t len = strcspn(p, " ");
			snprintf(mode, sizeof mode, "%.*s", (int)len, p);
			found = !strcmp(mode, name);
			p += len + (p[len] == ' ');
		}
		if (!found)
			return error("--backend %s: the conversion %s has the modes %s, not -r %s",
				     opt, rn->k->name, rn->k->modes, name);
	}
	if (!strcmp(rn->k->profile, "bf16")) {
		/* VCVTNEPS2BF16: inputs below 2^-126 are read as zero */
		fmt->subnormal = FPL_SUB_FTZ;
		fmt->tininess = FPL_TINY_BEFORE;
		if (fpl_format_finish(fmt))
			return error("internal: the bf16 twin format");
		rn->twin_note = "bf16 with inputs below 2^-126 flushed (ftz, tininess before)";
	} else {
		rn->twin_note = fmt->name;
	}
	rn->fmt = *fmt;
	rn->rnd = rnd;
	rn->xf = malloc((chunk + 1) * sizeof *rn->xf);
	rn->codes = malloc((chunk + 1) * sizeof *rn->codes);
	rn->yn = malloc((chunk + 1) * sizeof *rn->yn);
	if (!rn->xf || !rn->codes || !rn->yn) {
		cli_round_native_release(rn);
		return error("out of memory");
	}
	return 0;
}

void cli_round_native_release(struct cli_round_native *rn)
{
	free(rn->xf);
	free(rn->codes);
	free(rn->yn);
	rn->xf = NULL;
	rn->codes = NULL;
	rn->yn = NULL;
}

int cli_round_native_chunk(struct cli_round_native *rn, const double *x, double *y, size_t n)
{
	double t0;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rn->xf[i] = (float)x[i];
		if (!(rn->xf[i] == x[i] || (isnan(x[i]) && isnan(rn->xf[i]))))
			return error("input %llu (%.17g) is not a binary32 value: the native "
				     "conversion takes binary32 inputs",
				     (unsigned long long)(rn->n + i + 1), x[i]);
	}
	t0 = cli_now();
	rc = fpl_native_round_f32(rn->k, rn->rnd, rn->xf, n, rn->codes);
	rn->t_native += cli_now() - t0;
	if (rc)
		return error("native %s: %s", rn->k->name, fpl_strerror(rc));
	for (i = 0; i < n; i++) {
		rn->yn[i] = fpl_decode(&rn->fmt, rn->codes[i]);
		cli_errstats_add(&rn->es, x[i], rn->yn[i]);
	}
	if (rn->be == CLI_BACKEND_BOTH) {
		for (i = 0; i < n; i++)
			rn->mismatches += fpl_encode(&rn->fmt, y[i]) != rn->codes[i];
	} else {
		memcpy(y, rn->yn, n * sizeof *y);
	}
	rn->n += n;
	return 0;
}

/* One backend's row. */
static void row(struct cli_table *t, const char *backend, const char *kernel,
		const struct cli_round_native *rn, const struct cli_errstats *es, double seconds)
{
	uint64_t ev[CLI_ERRSTATS_NEVENTS], count[FPL_NFLAGS];
	double err[CLI_ERRSTATS_NERRORS];

	memset(count, 0, sizeof count);
	cli_errstats_values(es, count, ev, err);
	cli_table_str(t, backend);
	cli_table_str(t, kernel);
	cli_table_str(t, rn->twin_note);
	cli_table_str(t, fpl_rnd_name(rn->rnd));
	cli_table_int(t, (long long)rn->n);
	if (rn->be == CLI_BACKEND_BOTH)
		cli_table_int(t, (long long)rn->mismatches);
	else
		cli_table_none(t);
	cli_table_num_or_none(t, err[2]);	/* max_rel_error */
	cli_table_num_or_none(t, err[5]);	/* max_abs_error */
	cli_table_num(t, seconds);
	cli_table_num(t, seconds > 0 ? (double)rn->n / seconds / 1e6 : 0);
}

void cli_round_native_report(const struct cli_round_native *rn, const struct cli_errstats *emu,
			     double emu_seconds, enum cli_report report, FILE *fp)
{
	static const char *const cols[] = { "backend", "kernel", "format", "mode", "n",
					    "mismatches", "max_rel_error", "max_abs_error",
					    "seconds", "melem_per_s" };
	struct cli_table t;

	cli_table_begin(&t, fp, report, cols, (int)(sizeof cols / sizeof *cols));
	row(&t, "native", rn->k->name, rn, &rn->es, rn->t_native);
	if (rn->be == CLI_BACKEND_BOTH)
		row(&t, "emu", "engine", rn, emu, emu_seconds);
	cli_table_end(&t);
	if (rn->mismatches)
		error("warning: the native conversion %s and the emulation differ in %llu of %llu "
		      "values", rn->k->name, (unsigned long long)rn->mismatches,
		      (unsigned long long)rn->n);
}
