/* SPDX-License-Identifier: MIT */
/*
 * cmd_dot.c - `fplab dot`: one dot product x . y under an accumulation
 * model (fplab/accum.h), or a sweep of models, with its exact value and
 * errors (fplab/accum_error.h).
 *
 * Invariant: the inputs are made or read once; every job of the grid
 * runs on them from a fresh state, so each row is the run alone.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char dot_usage[] =
	"usage: fplab dot " CLI_MODEL_SYNOPSIS "\n"
	"    [--gen GEN -n N | -a FILE -b FILE] [--backend emu|native|both|onednn]\n"
	"    [-o FILE] [--tsv|--json|--ndjson]\n";

static struct dot_opts {
	struct cli_model mo;
	const char *afile, *bfile, *output;
	long n;			/* -n, -1 when not given */
	enum cli_report report;
	enum cli_backend backend;
} opt;

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_MODEL_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		CLI_BACKEND_LONGOPT,
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
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "ha:b:n:o:", longopts, NULL)) !=
	       -1) {
		rc = cli_model_option(&opt.mo, c, optarg);
		if (rc < 0)
			return usage_error(dot_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case CLI_OPT_BACKEND:
			if (cli_backend_parse(cli_arg_shown(optarg), &opt.backend))
				return CLI_EXIT_USAGE;
			break;
		case 'a':
			opt.afile = optarg;
			break;
		case 'b':
			opt.bfile = optarg;
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'n':
			if (cli_parse_long(optarg, &opt.n) || opt.n < 1 || opt.n > (1L << 40))
				return usage_error(dot_usage, "-n: '%s' is not a length from 1 to 2^40 "
						   "(1099511627776)", fpl_escape(e, sizeof e, optarg));
			break;
		default:
			return usage_error(dot_usage, NULL);
		}
	}
	if (optind < argc)
		return usage_error(dot_usage, "unexpected argument '%s'",
				   fpl_escape(e, sizeof e, argv[optind]));
	if (opt.mo.gen.kind && (opt.afile || opt.bfile))
		return usage_error(dot_usage, "--gen and -a/-b are two sources: give one");
	if (!opt.mo.gen.kind && !opt.afile && !opt.bfile)
		return usage_error(dot_usage, "no input: give --gen GEN -n N, or -a FILE -b FILE");
	if (opt.mo.gen.kind && opt.n < 0)
		return usage_error(dot_usage, "--gen needs -n N, the length of the vectors");
	if (!opt.mo.gen.kind && (!opt.afile || !opt.bfile))
		return usage_error(dot_usage, "a dot product needs both -a FILE and -b FILE");
	return 0;
}

/* The two vectors, generated or read; 0 or -1. */
static int inputs(struct cli_tensor *x, struct cli_tensor *y)
{
	char wa[CLI_WHAT_MAX], wb[CLI_WHAT_MAX];

	if (opt.mo.gen.kind) {
		size_t n = (size_t)opt.n;

		x->v = malloc(n * sizeof *x->v);
		y->v = malloc(n * sizeof *y->v);
		if (!x->v || !y->v)
			return error("out of memory");
		x->n = y->n = n;
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 1, x->v, n);
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 2, y->v, n);
		return 0;
	}
	if (cli_tensor_read_exact(x, opt.afile) || cli_tensor_read_exact(y, opt.bfile))
		return -1;
	cli_what(wa, "-a", opt.afile);
	cli_what(wb, "-b", opt.bfile);
	if (x->ndim != 1)
		return error("%s: a dot product takes a vector (1-D), not a %d-D tensor", wa,
			     x->ndim);
	if (y->ndim != 1)
		return error("%s: a dot product takes a vector (1-D), not a %d-D tensor", wb,
			     y->ndim);
	if (x->n != y->n)
		return error("%s has %zu elements but %s has %zu: the lengths must agree", wa, x->n,
			     wb, y->n);
	if (!x->n)
		return error("%s: the vectors are empty: a dot product takes lengths from 1 to "
			     "2^40", wa);
	if (opt.n >= 0 && (size_t)opt.n != x->n)
		return error("-n %ld but the files hold vectors of %zu", opt.n, x->n);
	return 0;
}

/* Job j on the vectors: the files' decimals loaded exactly (cli_operand_load,
 * B's draws after A's n), then the run.  0 or -1. */
static int run_job(struct cli_model_job *j, const struct cli_tensor *x,
		   const struct cli_tensor *y, double *r, struct cli_accum_row *row)
{
	char wa[CLI_WHAT_MAX], wb[CLI_WHAT_MAX];
	struct cli_operand oa = { x, cli_what(wa, "-a", opt.afile), 1, 0, 0, 0 };
	struct cli_operand ob = { y, cli_what(wb, "-b", opt.bfile), 1, 0, x->n, 1 };
	double *xa = NULL, *yb = NULL;
	int rc = 0;

	if (!j->generated)
		rc = cli_operand_load(j, &oa, &xa) || cli_operand_load(j, &ob, &yb) ? -1 : 0;
	if (!rc)
		rc = cli_accum_run(j, opt.mo.reference_given, CLI_RUN_DOT, r, 1, 1, x->n,
				   xa ? xa : x->v, x->n, 0, yb ? yb : y->v, 1, 0, row);
	free(xa);
	free(yb);
	return rc;
}

int cmd_dot(int argc, char **argv)
{
	static const char *const id_cols[] = { "n" };
	const char *cols[CLI_MODEL_NCOLS + 1 + CLI_ACCUM_NCOLS + CLI_ACCUM_NBLOCKCOLS];
	struct cli_tensor x, y;
	struct cli_model_job *jobs = NULL;
	struct cli_accum_row row;
	struct cli_table t;
	size_t nj = 0, j;
	double r = 0;
	int rc, blk;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(dot_usage);
	if (rc)
		return rc;
	rc = cli_model_grid(&opt.mo, &jobs, &nj);
	if (rc)
		return rc == -2 ? usage_error(dot_usage, NULL) : CLI_EXIT_FAIL;
	rc = cli_backend_check(dot_usage, opt.backend, nj, opt.output, opt.mo.profile);
	if (rc) {
		free(jobs);
		return rc;
	}
	if (opt.output && nj > 1) {
		free(jobs);
		return usage_error(dot_usage, "-o %s: a sweep of %zu models has no single result; "
				   "run one model to write it", opt.output, nj);
	}
	memset(&x, 0, sizeof x);
	memset(&y, 0, sizeof y);
	rc = inputs(&x, &y);
	memcpy(cols, cli_model_cols, sizeof cli_model_cols);
	memcpy(cols + CLI_MODEL_NCOLS, id_cols, sizeof id_cols);
	memcpy(cols + CLI_MODEL_NCOLS + 1, cli_accum_cols, sizeof cli_accum_cols);
	memcpy(cols + CLI_MODEL_NCOLS + 1 + CLI_ACCUM_NCOLS, cli_accum_block_cols,
	       sizeof cli_accum_block_cols);
	blk = cli_model_has_blocks(jobs, nj);
	if (!rc && opt.backend != CLI_BACKEND_EMU)
		rc = cli_operands_native_exact(&x, opt.afile, &y, opt.bfile);
	if (!rc && opt.backend != CLI_BACKEND_EMU) {
		rc = cli_native_accum(&jobs[0], opt.backend, opt.report, CLI_RUN_DOT, &r, 1, 1,
				      x.n, x.v, x.n, 0, y.v, 1, 0, opt.mo.profile);
	} else if (!rc) {
		cli_table_begin(&t, stdout, opt.report, cols,
				CLI_MODEL_NCOLS + 1 + CLI_ACCUM_NCOLS
					+ (blk ? CLI_ACCUM_NBLOCKCOLS : 0));
		cli_progress_start("dot", (size_t)((double)nj * CLI_ACCUM_WORK(1, 1, x.n)));
		for (j = 0; j < nj && !rc; j++) {
			rc = run_job(&jobs[j], &x, &y, &r, &row);
			if (rc)
				break;
			cli_model_cells(&t, &jobs[j]);
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
		rc = cli_accum_write(opt.output, &r, 1, 0, NULL);
	cli_tensor_release(&x);
	cli_tensor_release(&y);
	free(jobs);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
