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
	"    [--gen GEN -n N | -x FILE] [--sample] [-o FILE] [--tsv|--json|--ndjson]\n";

enum { OPT_SAMPLE = CLI_OPT_CMD };

static struct reduce_opts {
	struct cli_model mo;
	const char *xfile, *output;
	long n;			/* -1 when not given */
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
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
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
				return usage_error(reduce_usage, "-n: '%s' is not a length >= 1",
						   optarg);
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
		return usage_error(reduce_usage, "unexpected argument '%s'", argv[optind + 1]);
	if (fpl_reduce_parse(argv[optind], &opt.op)) {
		cli_unknown("operation", argv[optind], op_names, 7);
		return usage_error(reduce_usage, NULL);
	}
	if (opt.sample && opt.op != FPL_REDUCE_VAR && opt.op != FPL_REDUCE_VAR_WELFORD)
		return usage_error(reduce_usage, "--sample applies to var and var-welford");
	if (opt.mo.gen.kind && opt.xfile)
		return usage_error(reduce_usage, "--gen and -x are two sources: give one");
	if (!opt.mo.gen.kind && !opt.xfile)
		return usage_error(reduce_usage, "no input: give --gen GEN -n N, or -x FILE");
	if (opt.mo.gen.kind && opt.n < 0)
		return usage_error(reduce_usage, "--gen needs -n N, the length of the vector");
	return 0;
}

static int inputs(struct cli_tensor *x)
{
	if (opt.mo.gen.kind) {
		x->n = (size_t)opt.n;
		x->v = malloc(x->n * sizeof *x->v);
		if (!x->v)
			return error("out of memory");
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 1, x->v, x->n);
		return 0;
	}
	if (cli_tensor_read(x, opt.xfile))
		return -1;
	if (x->ndim != 1)
		return error("-x %s: reduce takes a vector (1-D), not a %d-D tensor", opt.xfile,
			     x->ndim);
	if (!x->n)
		return error("-x %s: the vector is empty", opt.xfile);
	if (opt.n >= 0 && (size_t)opt.n != x->n)
		return error("-n %ld but -x %s holds %zu values", opt.n, opt.xfile, x->n);
	return 0;
}

#define NID 7		/* op, the model (one input format), n */

/* One job of an operation other than sum: out[nout], errors into row. */
static int run_op(struct cli_model_job *j, const struct cli_tensor *x, double *out,
		  size_t nout, struct cli_accum_row *row)
{
	unsigned flags = opt.sample ? FPL_REDUCE_SAMPLE : 0;
	double *xl = malloc(x->n * sizeof *xl), *ref = malloc(nout * sizeof *ref), t0;
	int rc;

	memset(row, 0, sizeof *row);
	if (!xl || !ref) {
		rc = error("out of memory");
		goto out;
	}
	rc = fpl_accum_gemm_loads(xl, NULL, NULL, &j->mod, 1, 1, x->n, x->v, x->n, 0, NULL, 0, 0,
				  NULL, 0, &j->st);
	if (rc) {
		rc = error("an input is not a value of its format (%s): inputs taken as given "
			   "(':given', or a profile's) must be; round them with -f FORMAT", j->a);
		goto out;
	}
	t0 = cli_now();
	rc = fpl_reduce(out, opt.op, flags, &j->mod, x->n, x->v, 1, &j->st);
	row->seconds = cli_now() - t0;
	if (rc) {
		rc = error("%s", fpl_strerror(rc));
		goto out;
	}
	cli_progress_add(x->n);
	t0 = cli_now();
	rc = fpl_reduce_reference(ref, opt.op, flags, x->n, opt.mo.reference_given ? x->v : xl, 1);
	row->reference_seconds = cli_now() - t0;
	if (rc) {
		rc = error("reference failed: %s", fpl_strerror(rc));
		goto out;
	}
	/* the errors as dot's, against the binary64 reference; no
	 * normwise error or bound */
	t0 = cli_now();
	rc = cli_accum_compare(row, out, ref, nout);
	row->reference_seconds += cli_now() - t0;
	if (rc)
		goto out;
	cli_progress_add(x->n + 1);
	row->has_result = nout == 1;
	row->result = out[0];
	row->exact = ref[0];
	memcpy(row->count, j->st.count, sizeof row->count);
	row->flops = (double)x->n;
	rc = 0;
out:
	free(xl);
	free(ref);
	return rc ? -1 : 0;
}

int cmd_reduce(int argc, char **argv)
{
	/* every operation takes one input: one format column */
	static const char *const id_cols[] = {
		"op", "format", "prod", "acc", "order", "out_format", "n"
	};
	const char *cols[NID + CLI_ACCUM_NCOLS];
	struct cli_tensor x;
	struct cli_model_job *jobs = NULL;
	struct cli_accum_row row;
	struct cli_table t;
	size_t nj = 0, j, nout = 1;
	double *out = NULL;
	int rc;

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
		nout = fpl_reduce_outputs(opt.op, x.n);
		out = malloc((nout + 1) * sizeof *out);
		if (!out)
			rc = error("out of memory");
	}
	memcpy(cols, id_cols, sizeof id_cols);
	memcpy(cols + NID, cli_accum_cols, sizeof cli_accum_cols);
	if (!rc) {
		cli_table_begin(&t, stdout, opt.report, cols, NID + CLI_ACCUM_NCOLS);
		cli_progress_start("reduce", (size_t)((double)nj * CLI_ACCUM_WORK(1, 1, x.n)));
		for (j = 0; j < nj && !rc; j++) {
			if (opt.op == FPL_REDUCE_SUM)
				rc = cli_accum_run(&jobs[j], opt.mo.reference_given, CLI_RUN_SUM, out,
						   1, 1, x.n, x.v, x.n, 0, NULL, 0, 0, &row);
			else
				rc = run_op(&jobs[j], &x, out, nout, &row);
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
		}
		cli_progress_end();
		if (rc)
			cli_table_abandon(&t);
		else
			cli_table_end(&t);
	}
	if (!rc && opt.output) {
		uint64_t shape[1] = { nout };

		rc = cli_accum_write(opt.output, out, nout, nout == 1 &&
				     opt.op != FPL_REDUCE_SOFTMAX ? 0 : 1, shape);
	}
	free(out);
	cli_tensor_release(&x);
	free(jobs);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
