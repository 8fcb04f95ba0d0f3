/* SPDX-License-Identifier: MIT */
/*
 * cli_accum.c - one run of a model for `dot`, `gemm` and `reduce`: the
 * simulation, its errors against the exact reference, the report columns
 * and the -o output.
 *
 * Invariant: each job of a grid starts from a fresh state (counter 0, the
 * run's seed), so a row of a sweep has the bits of the same model run
 * alone, and no job's bits depend on the thread count (fplab/accum.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/* ------------------------------------------------------------- report */
const char *const cli_model_cols[CLI_MODEL_NCOLS] = {
	"a_format", "b_format", "prod", "acc", "order", "out_format"
};
const char *const cli_accum_cols[CLI_ACCUM_NCOLS] = {
	"result", "exact", "mean_rel_error", "rms_rel_error", "max_rel_error",
	"median_rel_error", "normwise_error", "bound",
	"inexact", "underflow", "overflow", "saturated", "flushed", "invalid", "became_zero",
	"nan", "inf", "seconds", "reference_seconds", "mflops"
};

const char *const cli_accum_block_cols[CLI_ACCUM_NBLOCKCOLS] = {
	"blocks", "amax_saturated", "scale_clamped", "nan_blocks", "zero_blocks",
	"zeroed_elements"
};

int cli_model_has_blocks(const struct cli_model_job *jobs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (jobs[i].mod.a_block || jobs[i].mod.b_block)
			return 1;
	return 0;
}

void cli_accum_block_cells(struct cli_table *t, const struct cli_accum_row *r)
{
	cli_table_int(t, (long long)r->blocks.blocks);
	cli_table_int(t, (long long)r->blocks.amax_saturated);
	cli_table_int(t, (long long)r->blocks.scale_range);
	cli_table_int(t, (long long)r->blocks.nan_blocks);
	cli_table_int(t, (long long)r->blocks.zero_blocks);
	cli_table_int(t, (long long)r->blocks.flushed);
}

void cli_model_cells(struct cli_table *t, const struct cli_model_job *j)
{
	cli_table_str(t, j->a);
	cli_table_str(t, j->b);
	cli_table_str(t, j->prod);
	cli_table_str(t, j->acc);
	cli_table_str(t, j->order);
	cli_table_str(t, j->out);
}

/* x, or no value where `has` is 0. */
static void num_if(struct cli_table *t, int has, double x)
{
	if (has)
		cli_table_num(t, x);
	else
		cli_table_none(t);
}

void cli_accum_cells(struct cli_table *t, const struct cli_accum_row *r)
{
	/* the engine's flag indices of the count columns, as cli_errstats */
	static const int flag[6] = { 0, 1, 2, 5, 6, 4 };
	int i, rel = r->rel_n > 0;

	num_if(t, r->has_result, r->result);
	num_if(t, r->has_result, r->exact);
	num_if(t, rel, r->mean_rel);
	num_if(t, rel, r->rms_rel);
	num_if(t, rel, r->max_rel);
	num_if(t, rel, r->median_rel);
	num_if(t, r->has_bound && r->compared && !isnan(r->normwise), r->normwise);
	num_if(t, r->has_bound, r->bound);
	for (i = 0; i < 6; i++)
		cli_table_int(t, (long long)r->count[flag[i]]);
	cli_table_int(t, (long long)r->became_zero);
	cli_table_int(t, (long long)r->nan);
	cli_table_int(t, (long long)r->inf);
	cli_table_num(t, r->seconds);
	cli_table_num(t, r->reference_seconds);
	cli_table_num(t, r->seconds > 0 ? r->flops / r->seconds / 1e6 : 0);
}

static int cmp_double(const void *p, const void *q)
{
	double a = *(const double *)p, b = *(const double *)q;

	return a < b ? -1 : a > b;
}

int cli_accum_compare(struct cli_accum_row *row, const double *r, const double *ref, size_t n)
{
	double *rel = malloc((n + 1) * sizeof *rel), sum = 0, sq = 0, mx = 0, x;
	size_t i, q = 0;
	int ex;

	if (!rel)
		return error("out of memory");
	row->rel_n = row->compared = row->became_zero = row->nan = row->inf = 0;
	for (i = 0; i < n; i++) {
		row->nan += isnan(r[i]) != 0;
		row->inf += isinf(r[i]) != 0;
		if (!isfinite(ref[i]))
			continue;	/* not compared */
		row->compared++;
		if (!isfinite(r[i]))
			rel[q++] = INFINITY;	/* a failed result */
		else if (ref[i] != 0) {
			row->became_zero += r[i] == 0;
			rel[q++] = fabs(r[i] - ref[i]) / fabs(ref[i]);
		}
	}
	row->rel_n = q;
	row->mean_rel = row->rms_rel = row->max_rel = row->median_rel = 0;
	if (q) {
		for (i = 0; i < q; i++) {
			sum += rel[i];
			mx = rel[i] > mx ? rel[i] : mx;
		}
		/* the RMS with the squares scaled by a power of two near the max */
		if (mx > 0 && isfinite(mx)) {
			ex = ilogb(mx);
			for (i = 0; i < q; i++) {
				x = ldexp(rel[i], -ex);
				sq += x * x;
			}
			row->rms_rel = ldexp(sqrt(sq / (double)q), ex);
		} else {
			row->rms_rel = mx;
		}
		qsort(rel, q, sizeof *rel, cmp_double);
		row->mean_rel = sum / (double)q;
		row->max_rel = mx;
		row->median_rel = q % 2 ? rel[q / 2] : rel[q / 2 - 1] / 2 + rel[q / 2] / 2;
	}
	free(rel);
	return 0;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ----------------------------------------------------------- one run */
/* The message of a failed load or run. */
static int run_error(const struct cli_model_job *j, int rc, int sum)
{
	if (rc == FPL_ERANGE)
		return error("an input is not a value of its format (%s%s%s): inputs taken as "
			     "given (':given', or a profile's) must be; round them with -f FORMAT",
			     j->a, sum ? "" : ", ", sum ? "" : j->b);
	return error("%s", fpl_strerror(rc));
}

/* x[0..n) rounded (ne) into f, into a new array *r; 0 or -1. */
static int round_copy(const fpl_format *f, size_t n, const double *x, double **r)
{
	fpl_state st;
	size_t i;

	*r = malloc((n + 1) * sizeof **r);
	if (!*r)
		return error("out of memory");
	fpl_state_init(&st, 0);
	for (i = 0; i < n; i++)
		(*r)[i] = fpl_round(f, x[i], FPL_RND_NE, &st);
	return 0;
}

int cli_accum_given(const struct cli_model_job *j, size_t na, const double *a, double **ra,
		    size_t nb, const double *b, double **rb)
{
	*ra = *rb = NULL;
	if (!j->generated)
		return 0;
	if (j->mod.a_load == FPL_LOAD_GIVEN && round_copy(&j->mod.a, na, a, ra))
		return -1;
	if (b && j->mod.b_load == FPL_LOAD_GIVEN && round_copy(&j->mod.b, nb, b, rb)) {
		free(*ra);
		*ra = NULL;
		return -1;
	}
	return 0;
}

int cli_accum_run(struct cli_model_job *j, int reference_given, int kind, double *c,
		  size_t m, size_t n, size_t k, const double *a, size_t lda, int transa,
		  const double *b, size_t ldb, int transb, struct cli_accum_row *row)
{
	const fpl_accum_model *mod = &j->mod;
	double *al = NULL, *bl = NULL, *ex = NULL, *ga = NULL, *gb = NULL, t0;
	uint64_t done = 0;	/* the reference's terms, for the progress bar */
	uint64_t mdone = 0;	/* the model's terms */
	double work;
	fpl_accum_errors e;
	int rc;

	memset(row, 0, sizeof *row);
	if (kind == CLI_RUN_SUM && mod->order == FPL_ORDER_BLOCK)
		return error("--order block multiplies two block-scaled operands: a sum has "
			     "no products (use it with dot or gemm)");
	if (cli_accum_given(j, m * k, a, &ga, kind == CLI_RUN_SUM ? 0
				 : kind == CLI_RUN_DOT ? (k ? (k - 1) * ldb + 1 : 0) : k * n,
			    kind == CLI_RUN_SUM ? NULL : b, &gb))
		return -1;
	if (ga)
		a = ga;
	if (gb)
		b = gb;
	al = malloc((m * k + 1) * sizeof *al);
	bl = malloc((k * n + 1) * sizeof *bl);
	ex = malloc((m * n + 1) * sizeof *ex);
	if (!al || !bl || !ex) {
		rc = error("out of memory");
		goto out;
	}
	/* the loads the run will make (st read only: same counter) */
	fpl_block_stats_init(&row->blocks);
	rc = fpl_accum_gemm_loads_blocks(al, kind == CLI_RUN_SUM ? NULL : bl, NULL, mod, m, n, k,
					 a, lda, transa, kind == CLI_RUN_SUM ? NULL : b, ldb,
					 transb, NULL, 0, &j->st, &row->blocks, &row->blocks);
	if (rc) {
		rc = run_error(j, rc, kind == CLI_RUN_SUM);
		goto out;
	}
	t0 = cli_now();
	/* the model's finished terms move the bar during a long GEMM
	 * (fpl_state.progress); what a path does not count is added after */
	j->st.progress = &mdone;
	cli_progress_watch(&mdone);
	if (kind == CLI_RUN_SUM)
		rc = fpl_accum_sum(c, mod, k, a, 1, NULL, NULL, &j->st);
	else if (kind == CLI_RUN_DOT)
		rc = fpl_accum_dot(c, mod, k, a, 1, b, (ptrdiff_t)ldb, NULL, NULL, &j->st);
	else
		rc = fpl_accum_gemm(c, n, mod, 0, m, n, k, a, lda, transa, b, ldb, transb, NULL,
				    &j->st);
	row->seconds = cli_now() - t0;
	cli_progress_watch(NULL);
	j->st.progress = NULL;
	if (rc) {
		rc = run_error(j, rc, kind == CLI_RUN_SUM);
		goto out;
	}
	work = (double)m * (double)n * (double)k;
	if ((double)mdone < work)
		cli_progress_add((size_t)(work - (double)mdone));
	cli_progress_watch(&done);
	/* the loaded inputs in the layouts gemm reads: A m x k (lda k), B k x n */
	t0 = cli_now();
	rc = reference_given
		? fpl_accum_errors_gemm_progress(&e, ex, c, n, mod, m, n, k, a, lda, transa,
						 kind == CLI_RUN_SUM ? NULL : b, ldb, transb, NULL,
						 0, j->st.threads, &done)
		: fpl_accum_errors_gemm_progress(&e, ex, c, n, mod, m, n, k, al, k, 0,
						 kind == CLI_RUN_SUM ? NULL : bl, n, 0, NULL, 0,
						 j->st.threads, &done);
	cli_progress_watch(NULL);
	if (rc) {
		rc = error("error measurement failed: %s", fpl_strerror(rc));
		goto out;
	}
	row->reference_seconds = cli_now() - t0;
	row->has_result = kind != CLI_RUN_GEMM;
	row->has_bound = 1;
	row->result = kind == CLI_RUN_GEMM ? NAN : c[0];
	row->exact = kind == CLI_RUN_GEMM ? NAN : ex[0];
	row->rel_n = e.rel_n;
	row->compared = e.compared;
	row->mean_rel = e.mean_rel;
	row->rms_rel = e.rms_rel;
	row->max_rel = e.max_rel;
	row->median_rel = e.median_rel;
	row->normwise = e.normwise;
	row->bound = e.bound;
	row->became_zero = e.became_zero;
	row->nan = e.nan;
	row->inf = e.inf;
	memcpy(row->count, j->st.count, sizeof row->count);
	row->flops = kind == CLI_RUN_SUM ? (double)k : 2.0 * (double)m * (double)n * (double)k;
	rc = 0;
out:
	free(ga);
	free(gb);
	free(al);
	free(bl);
	free(ex);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------- output */
int cli_accum_write(const char *path, const double *v, size_t n, int ndim,
		    const uint64_t *shape)
{
	struct cli_writer w;
	fpl_tensor_info info;
	enum cli_out_kind kind = cli_out_from_path(path, CLI_OUT_TEXT);
	int rc;

	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "result");
	info.dtype = FPL_DT_F64;
	info.ndim = ndim;
	if (ndim > 0)
		memcpy(info.shape, shape, (size_t)ndim * sizeof *shape);
	info.count = n;
	if (cli_writer_open(&w, path, kind, NULL, n))
		return -1;
	rc = cli_writer_tensor(&w, &info, FPL_DT_UNKNOWN);
	if (!rc)
		rc = cli_writer_put(&w, v, n);
	return cli_writer_close(&w, !rc);
}
