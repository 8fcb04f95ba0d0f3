/* SPDX-License-Identifier: MIT */
/*
 * cmd_reduce.c - `fplab reduce OP`: sum, mean, variance (two-pass and
 * Welford), 2-norm, softmax or log-sum-exp of a vector under an
 * accumulation model (fplab/reduce.h), or a sweep of models, against the
 * library's reference.
 *
 * Invariant: `sum` runs as fpl_accum_sum and is measured like a dot
 * product (fpl_accum_errors_gemm: normwise error and bound); the other
 * operations run through fpl_reduce and are compared with
 * fpl_reduce_reference output by output (no normwise error, no bound).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char reduce_usage[] =
	"usage: fplab reduce OP " CLI_MODEL_SYNOPSIS "\n"
	"    [--gen GEN -n N | -x FILE] [--sample] [-o FILE] [--out-dtype DTYPE]\n"
	"    [--tsv|--json|--ndjson]\n";

enum { OPT_SAMPLE = CLI_OPT_CMD, OPT_OUT_DTYPE };

static struct reduce_opts {
	struct cli_model mo;
	const char *xfile, *output;
	long n;			/* -1 when not given */
	size_t rows;		/* softmax, logsumexp: reductions along the last axis */
	fpl_dtype out_dtype;	/* --out-dtype */
	int sample;
	fpl_reduce_op op;
	enum cli_report report;
} opt;

static const char *const op_names[] = {
	"sum", "mean", "var", "var-welford", "norm2", "softmax", "logsumexp"
};

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_MODEL_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		{ "sample", no_argument, NULL, OPT_SAMPLE },
		{ "out-dtype", required_argument, NULL, OPT_OUT_DTYPE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char e[CLI_WHAT_MAX];
	int c, rc;

	memset(&opt, 0, sizeof opt);
	opt.n = -1;
	optind = 0;
	cli_model_init(&opt.mo);
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "hx:n:o:", longopts, NULL)) !=
	       -1) {
		rc = cli_model_option(&opt.mo, c, optarg);
		if (rc < 0)
			return usage_error(reduce_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case 'x':
			opt.xfile = optarg;
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'n':
			if (cli_parse_long(optarg, &opt.n) || opt.n < 1 || opt.n > (1L << 40))
				return usage_error(reduce_usage, "-n: '%s' is not a length from 1 "
						   "to 2^40 (1099511627776)",
						   fpl_escape(e, sizeof e, optarg));
			break;
		case OPT_OUT_DTYPE:
			if (cli_dtype_parse(optarg, &opt.out_dtype))
				return CLI_EXIT_USAGE;
			break;
		case OPT_SAMPLE:
			opt.sample = 1;
			break;
		default:
			return usage_error(reduce_usage, NULL);
		}
	}
	if (optind >= argc)
		return usage_error(reduce_usage, "no operation: give one of sum mean var "
				   "var-welford norm2 softmax logsumexp");
	if (optind + 1 < argc)
		return usage_error(reduce_usage, "unexpected argument '%s'",
				   fpl_escape(e, sizeof e, argv[optind + 1]));
	if (fpl_reduce_parse(argv[optind], &opt.op)) {
		cli_unknown("operation", fpl_escape(e, sizeof e, argv[optind]), op_names, 7);
		return usage_error(reduce_usage, NULL);
	}
	if (opt.sample && opt.op != FPL_REDUCE_VAR && opt.op != FPL_REDUCE_VAR_WELFORD)
		return usage_error(reduce_usage, "--sample applies to var and var-welford");
	if (opt.out_dtype != FPL_DT_UNKNOWN && !opt.output)
		return usage_error(reduce_usage, "--out-dtype applies to -o FILE");
	if (opt.mo.gen.kind && opt.xfile)
		return usage_error(reduce_usage, "--gen and -x are two sources: give one");
	if (!opt.mo.gen.kind && !opt.xfile)
		return usage_error(reduce_usage, "no input: give --gen GEN -n N, or -x FILE");
	if (opt.mo.gen.kind && opt.n < 0)
		return usage_error(reduce_usage, "--gen needs -n N, the length of the vector");
	return 0;
}

/* Softmax and logsumexp reduce along the last axis, as numpy and PyTorch
 * do: a (batch, classes) tensor is `rows` reductions of `classes` values. */
static int along_last_axis(void)
{
	return opt.op == FPL_REDUCE_SOFTMAX || opt.op == FPL_REDUCE_LOGSUMEXP;
}

/* The input, generated or read; opt.rows (rows of the last axis).  0 or -1. */
static int inputs(struct cli_tensor *x)
{
	char wx[CLI_WHAT_MAX];

	opt.rows = 1;
	if (opt.mo.gen.kind) {
		x->n = (size_t)opt.n;
		x->ndim = 1;
		x->shape[0] = x->n;
		x->v = malloc(x->n * sizeof *x->v);
		if (!x->v)
			return error("out of memory");
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 1, x->v, x->n);
		return 0;
	}
	if (cli_tensor_read_exact(x, opt.xfile))
		return -1;
	cli_what(wx, "-x", opt.xfile);
	if (x->ndim != 1 && !(along_last_axis() && x->ndim > 1))
		return error("%s: reduce %s takes a vector (1-D), not a %d-D tensor (softmax and "
			     "logsumexp take any tensor, along its last axis)", wx,
			     fpl_reduce_name(opt.op), x->ndim);
	if (!x->n)
		return error("%s: the %s is empty", wx, x->ndim > 1 ? "tensor" : "vector");
	opt.rows = x->n / x->shape[x->ndim - 1];
	if (opt.n >= 0 && (size_t)opt.n != x->n / opt.rows)
		return error("-n %ld but %s holds %s of %llu values", opt.n, wx,
			     opt.rows > 1 ? "rows" : "a vector",
			     (unsigned long long)x->shape[x->ndim - 1]);
	return 0;
}

#define NID 7		/* op, the model (one input format), n */

/*
 * Row r of x (len values from r*len) as a vector of its own, with its
 * decimals that binary64 cannot hold (positions from the row's start,
 * into *inx, grown as needed; *k: the next of x's list).  0 or -1.
 */
static int row_of(const struct cli_tensor *x, size_t r, size_t len, struct cli_tensor *rt,
		  fpl_inexact **inx, size_t *k)
{
	size_t k0 = *k, i;

	memset(rt, 0, sizeof *rt);
	rt->v = x->v + r * len;
	rt->n = len;
	rt->ndim = 1;
	rt->shape[0] = len;
	while (*k < x->ninx && x->inx[*k].pos < (r + 1) * len)
		(*k)++;
	if (*k == k0)
		return 0;
	if (!(rt->inx = realloc(*inx, (*k - k0) * sizeof **inx)))
		return error("out of memory");
	*inx = rt->inx;
	for (i = k0; i < *k; i++) {
		rt->inx[i - k0] = x->inx[i];
		rt->inx[i - k0].pos -= r * len;
	}
	rt->ninx = *k - k0;
	return 0;
}

/*
 * One job of an operation other than sum: each of opt.rows rows of x is
 * one reduction (fpl_reduce, its draws after the previous row's), the
 * file's decimals loaded exactly (cli_operand_load), into out (the rows'
 * outputs one after the other); errors over all outputs into row.
 */
static int run_op(struct cli_model_job *j, const struct cli_tensor *x, double *out,
		  size_t nout, struct cli_accum_row *row)
{
	unsigned flags = opt.sample ? FPL_REDUCE_SAMPLE : 0;
	size_t len = x->n / opt.rows, nper = nout / opt.rows, r, k = 0;
	double *xl = malloc((len + 1) * sizeof *xl), *ref = malloc((nout + 1) * sizeof *ref);
	double *xe = NULL, t0;
	char wx[CLI_WHAT_MAX], what[CLI_WHAT_MAX + 32];
	fpl_inexact *inx = NULL;
	int rc = 0;

	memset(row, 0, sizeof *row);
	fpl_block_stats_init(&row->blocks);
	if (!xl || !ref)
		rc = error("out of memory");
	cli_what(wx, "-x", opt.xfile);
	for (r = 0; r < opt.rows && !rc; r++) {
		struct cli_tensor rt;
		struct cli_operand o = { &rt, what, 1, 0, 0, 0 };

		snprintf(what, sizeof what, opt.rows > 1 ? "%s: row %zu" : "%s", wx, r);
		double *unused;

		/* a generated row taken as given is rounded into its format
		 * first, as for sum (cli_accum_given) */
		if ((rc = row_of(x, r, len, &rt, &inx, &k))
		    || (j->generated ? (rc = cli_accum_given(j, len, rt.v, &xe, 0, NULL, &unused))
				     : (rc = cli_operand_load(j, &o, &xe))))
			break;
		if (xe)
			rt.v = xe;
		/* the load fpl_reduce makes (st read only), with its block
		 * events added into the row's */
		rc = fpl_accum_gemm_loads_blocks(xl, NULL, NULL, &j->mod, 1, 1, len, rt.v, len, 0,
						 NULL, 0, 0, NULL, 0, &j->st, &row->blocks, NULL);
		if (rc) {
			rc = error("an input is not a value of its format (%s): inputs taken as "
				   "given (':given', or a profile's) must be; round them with -f "
				   "FORMAT", j->a);
			break;
		}
		t0 = cli_now();
		rc = fpl_reduce(out + r * nper, opt.op, flags, &j->mod, len, rt.v, 1, &j->st);
		row->seconds += cli_now() - t0;
		if (rc) {
			rc = error("%s", fpl_strerror(rc));
			break;
		}
		cli_progress_add(len);
		t0 = cli_now();
		/* the reference of the given values: the generated ones as
		 * rounded for a given load, a file's as read (the nearest
		 * binary64 of a number binary64 cannot hold) */
		rc = fpl_reduce_reference(ref + r * nper, opt.op, flags, len,
					  !opt.mo.reference_given ? xl
					  : j->generated ? rt.v : x->v + r * len, 1);
		row->reference_seconds += cli_now() - t0;
		cli_progress_add(len);
		if (rc) {
			rc = error("reference failed: %s", fpl_strerror(rc));
			break;
		}
		free(xe);
		xe = NULL;
	}
	if (rc)
		goto out;
	t0 = cli_now();
	rc = cli_accum_compare(row, out, ref, nout);
	row->reference_seconds += cli_now() - t0;
	if (rc)
		goto out;
	cli_progress_add(1);
	row->has_result = nout == 1;
	row->result = out[0];
	row->exact = ref[0];
	memcpy(row->count, j->st.count, sizeof row->count);
	row->flops = (double)x->n;
out:
	free(xe);
	free(inx);
	free(xl);
	free(ref);
	return rc ? -1 : 0;
}

/* Job j: sum through cli_accum_run (the file's decimals loaded exactly,
 * cli_operand_load), any other operation through run_op.  0 or -1. */
static int run_job(struct cli_model_job *j, const struct cli_tensor *x, double *out,
		   size_t nout, struct cli_accum_row *row)
{
	char wx[CLI_WHAT_MAX];
	struct cli_operand ox = { x, cli_what(wx, "-x", opt.xfile), 1, 0, 0, 0 };
	double *xa = NULL;
	int rc;

	if (opt.op != FPL_REDUCE_SUM)
		return run_op(j, x, out, nout, row);
	if (!j->generated && cli_operand_load(j, &ox, &xa))
		return -1;
	rc = cli_accum_run(j, opt.mo.reference_given, CLI_RUN_SUM, out, 1, 1, x->n,
			   xa ? xa : x->v, x->n, 0, NULL, 0, 0, row);
	free(xa);
	return rc;
}

/*
 * -o: softmax in the input's shape, logsumexp in its shape without the
 * last axis, both in the input's dtype (binary64 for text and generated
 * input), as numpy and PyTorch keep it; any other operation one binary64
 * value; --out-dtype names another dtype.  0 or -1.
 */
static int write_result(const struct cli_tensor *x, const double *out, size_t nout)
{
	struct cli_writer w;
	fpl_tensor_info info;
	int rc;

	memset(&info, 0, sizeof info);
	snprintf(info.name, sizeof info.name, "result");
	info.dtype = FPL_DT_F64;
	info.count = nout;
	if (along_last_axis()) {
		if (x->dtype != FPL_DT_UNKNOWN && x->dtype != FPL_DT_TEXT)
			info.dtype = x->dtype;
		info.ndim = opt.op == FPL_REDUCE_SOFTMAX ? x->ndim : x->ndim - 1;
		memcpy(info.shape, x->shape, (size_t)info.ndim * sizeof *info.shape);
	}
	if (cli_writer_open(&w, opt.output, cli_out_from_path(opt.output, CLI_OUT_TEXT), NULL,
			    nout))
		return -1;
	rc = cli_writer_tensor(&w, &info, opt.out_dtype);
	if (!rc)
		rc = cli_writer_put(&w, out, nout);
	return cli_writer_close(&w, !rc);
}

int cmd_reduce(int argc, char **argv)
{
	/* every operation takes one input: one format column */
	static const char *const id_cols[] = {
		"op", "format", "prod", "acc", "order", "out_format", "n"
	};
	const char *cols[NID + CLI_ACCUM_NCOLS + CLI_ACCUM_NBLOCKCOLS];
	struct cli_tensor x;
	struct cli_model_job *jobs = NULL;
	struct cli_accum_row row;
	struct cli_table t;
	size_t nj = 0, j, nout = 1;
	double *out = NULL;
	int rc, blk;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(reduce_usage);
	if (rc)
		return rc;
	rc = cli_model_grid(&opt.mo, &jobs, &nj);
	if (rc)
		return rc == -2 ? usage_error(reduce_usage, NULL) : CLI_EXIT_FAIL;
	if (opt.output && nj > 1) {
		free(jobs);
		return usage_error(reduce_usage, "-o %s: a sweep of %zu models has no single "
				   "result; run one model to write it", opt.output, nj);
	}
	memset(&x, 0, sizeof x);
	rc = inputs(&x);
	if (!rc) {
		nout = opt.rows * fpl_reduce_outputs(opt.op, x.n / opt.rows);
		out = malloc((nout + 1) * sizeof *out);
		if (!out)
			rc = error("out of memory");
	}
	memcpy(cols, id_cols, sizeof id_cols);
	memcpy(cols + NID, cli_accum_cols, sizeof cli_accum_cols);
	memcpy(cols + NID + CLI_ACCUM_NCOLS, cli_accum_block_cols, sizeof cli_accum_block_cols);
	blk = cli_model_has_blocks(jobs, nj);	/* the block columns, as dot's */
	if (!rc) {
		cli_table_begin(&t, stdout, opt.report, cols,
				NID + CLI_ACCUM_NCOLS + (blk ? CLI_ACCUM_NBLOCKCOLS : 0));
		cli_progress_start("reduce", (size_t)((double)nj * CLI_ACCUM_WORK(1, 1, x.n)));
		for (j = 0; j < nj && !rc; j++) {
			rc = run_job(&jobs[j], &x, out, nout, &row);
			if (rc)
				break;
			cli_table_str(&t, fpl_reduce_name(opt.op));
			cli_table_str(&t, jobs[j].a);
			cli_table_str(&t, jobs[j].prod);
			cli_table_str(&t, jobs[j].acc);
			cli_table_str(&t, jobs[j].order);
			cli_table_str(&t, jobs[j].out);
			cli_table_int(&t, (long long)x.n);
			cli_accum_cells(&t, &row);
			if (blk)
				cli_accum_block_cells(&t, &row);
		}
		cli_progress_end();
		if (rc)
			cli_table_abandon(&t);
		else
			cli_table_end(&t);
	}
	if (!rc && opt.output)
		rc = write_result(&x, out, nout);
	free(out);
	cli_tensor_release(&x);
	free(jobs);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
