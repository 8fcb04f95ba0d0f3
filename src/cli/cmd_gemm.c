/* SPDX-License-Identifier: MIT */
/*
 * cmd_gemm.c - `fplab gemm`: C = A.B (m x k times k x n, either operand
 * optionally transposed) with every output under an accumulation model
 * (fplab/accum.h), or a sweep of models, with exact errors
 * (fplab/accum_error.h).
 *
 * Invariant: A and B are stored as given (A k x m under --transa, B n x k
 * under --transb) and handed to fpl_accum_gemm in that layout, so the
 * draw schedule and the bits are the library's, on any thread count.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char gemm_usage[] =
	"usage: fplab gemm " CLI_MODEL_SYNOPSIS "\n"
	"    [--gen GEN -m M -n N -k K | -a FILE -b FILE] [--transa] [--transb]\n"
	"    [--backend emu|native|both|onednn] [-o FILE] [--tsv|--json|--ndjson]\n";

enum { OPT_TRANSA = CLI_OPT_CMD, OPT_TRANSB };

static struct gemm_opts {
	struct cli_model mo;
	const char *afile, *bfile, *output;
	long m, n, k;		/* -1 when not given */
	int transa, transb;
	enum cli_report report;
	enum cli_backend backend;
} opt;

/* One rule for every size, given (-m -n -k) or read from the files:
 * m, n and k from 1 to 2^30, m*n*k at most 2^40 products. */
#define GEMM_DIM_MAX (1L << 30)
#define GEMM_DIM_RANGE "from 1 to 2^30 (1073741824)"

static int dim(const char *o, const char *arg, long *v)
{
	char e[CLI_WHAT_MAX];

	if (cli_parse_long(arg, v) || *v < 1 || *v > GEMM_DIM_MAX)
		return usage_error(gemm_usage, "%s: '%s' is not a size " GEMM_DIM_RANGE, o,
				   fpl_escape(e, sizeof e, arg));
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_MODEL_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		CLI_BACKEND_LONGOPT,
		{ "transa", no_argument, NULL, OPT_TRANSA },
		{ "transb", no_argument, NULL, OPT_TRANSB },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char e[CLI_WHAT_MAX];
	int c, rc;

	memset(&opt, 0, sizeof opt);
	opt.m = opt.n = opt.k = -1;
	optind = 0;
	cli_model_init(&opt.mo);
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "ha:b:m:n:k:o:", longopts,
				NULL)) != -1) {
		rc = cli_model_option(&opt.mo, c, optarg);
		if (rc < 0)
			return usage_error(gemm_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case CLI_OPT_BACKEND:
			if (cli_backend_parse(cli_arg_shown(optarg), &opt.backend))
				return CLI_EXIT_USAGE;
			break;
		case 'a': opt.afile = optarg; break;
		case 'b': opt.bfile = optarg; break;
		case 'o': opt.output = optarg; break;
		case 'm': if (dim("-m", optarg, &opt.m)) return CLI_EXIT_USAGE; break;
		case 'n': if (dim("-n", optarg, &opt.n)) return CLI_EXIT_USAGE; break;
		case 'k': if (dim("-k", optarg, &opt.k)) return CLI_EXIT_USAGE; break;
		case OPT_TRANSA: opt.transa = 1; break;
		case OPT_TRANSB: opt.transb = 1; break;
		default:
			return usage_error(gemm_usage, NULL);
		}
	}
	if (optind < argc)
		return usage_error(gemm_usage, "unexpected argument '%s'",
				   fpl_escape(e, sizeof e, argv[optind]));
	if (opt.mo.gen.kind && (opt.afile || opt.bfile))
		return usage_error(gemm_usage, "--gen and -a/-b are two sources: give one");
	if (!opt.mo.gen.kind && !opt.afile && !opt.bfile)
		return usage_error(gemm_usage, "no input: give --gen GEN -m M -n N -k K, or -a FILE "
				   "-b FILE");
	if (opt.mo.gen.kind && (opt.m < 0 || opt.n < 0 || opt.k < 0))
		return usage_error(gemm_usage, "--gen needs the sizes -m M -n N -k K (missing %s)",
				   opt.m < 0 ? "-m" : opt.n < 0 ? "-n" : "-k");
	if (!opt.mo.gen.kind && (!opt.afile || !opt.bfile))
		return usage_error(gemm_usage, "a product needs both -a FILE and -b FILE");
	if ((double)opt.m * (double)opt.n * (double)opt.k > 0x1p40)
		return usage_error(gemm_usage, "-m %ld -n %ld -k %ld: more than 2^40 products",
				   opt.m, opt.n, opt.k);
	return 0;
}

/* t must be a matrix whose sizes follow the rule of -m -n -k. */
static int shape2(const struct cli_tensor *t, const char *o, const char *file, const char *what)
{
	char w[CLI_WHAT_MAX];

	cli_what(w, o, file);
	if (t->ndim != 2)
		return error("%s: gemm takes a matrix (2-D) for %s, not a %d-D tensor", w, what,
			     t->ndim);
	if (t->shape[0] < 1 || t->shape[1] < 1 || t->shape[0] > (uint64_t)GEMM_DIM_MAX
	    || t->shape[1] > (uint64_t)GEMM_DIM_MAX)
		return error("%s: %s is %llux%llu: gemm takes sizes " GEMM_DIM_RANGE
			     ", from files as from -m -n -k", w, what, (unsigned long long)t->shape[0],
			     (unsigned long long)t->shape[1]);
	return 0;
}

/* A and B, generated or read; sizes into opt.m, opt.n, opt.k.  0 or -1. */
static int inputs(struct cli_tensor *a, struct cli_tensor *b)
{
	if (opt.mo.gen.kind) {
		size_t na = (size_t)opt.m * (size_t)opt.k, nb = (size_t)opt.k * (size_t)opt.n;

		a->v = malloc(na * sizeof *a->v);
		b->v = malloc(nb * sizeof *b->v);
		if (!a->v || !b->v)
			return error("out of memory");
		a->n = na;
		b->n = nb;
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 1, a->v, na);
		fpl__gen_fill(&opt.mo.gen, opt.mo.ro.st.seed, 2, b->v, nb);
		return 0;
	}
	if (cli_tensor_read_exact(a, opt.afile) || cli_tensor_read_exact(b, opt.bfile))
		return -1;
	if (shape2(a, "-a", opt.afile, "A") || shape2(b, "-b", opt.bfile, "B"))
		return -1;
	{
		long am = (long)a->shape[opt.transa], ak = (long)a->shape[!opt.transa];
		long bk = (long)b->shape[opt.transb], bn = (long)b->shape[!opt.transb];

		char wa[CLI_WHAT_MAX], wb[CLI_WHAT_MAX];

		if (ak != bk)
			return error("%s is %llux%llu%s and %s is %llux%llu%s: the inner "
				     "dimensions (k) differ, %ld and %ld", cli_what(wa, "-a", opt.afile),
				     (unsigned long long)a->shape[0], (unsigned long long)a->shape[1],
				     opt.transa ? " (transposed)" : "", cli_what(wb, "-b", opt.bfile),
				     (unsigned long long)b->shape[0], (unsigned long long)b->shape[1],
				     opt.transb ? " (transposed)" : "", ak, bk);
		if ((opt.m >= 0 && opt.m != am) || (opt.n >= 0 && opt.n != bn) ||
		    (opt.k >= 0 && opt.k != ak))
			return error("the files give m=%ld n=%ld k=%ld, which the -m/-n/-k given "
				     "contradict", am, bn, ak);
		if ((double)am * (double)bn * (double)ak > 0x1p40)
			return error("the files give m=%ld n=%ld k=%ld: more than 2^40 products",
				     am, bn, ak);
		opt.m = am;
		opt.n = bn;
		opt.k = ak;
	}
	return 0;
}

/* Job j on A and B (stored layouts: A m x k, k x m transposed; B k x n,
 * n x k transposed): the files' decimals loaded exactly (cli_operand_load;
 * draws in the logical order, B's after A's m*k), then the run.  0 or -1. */
static int run_job(struct cli_model_job *j, const struct cli_tensor *a,
		   const struct cli_tensor *b, double *c, size_t m, size_t n, size_t k,
		   struct cli_accum_row *row)
{
	char wa[CLI_WHAT_MAX], wb[CLI_WHAT_MAX];
	struct cli_operand oa = { a, cli_what(wa, "-a", opt.afile), opt.transa ? m : k,
				  opt.transa, 0, 0 };
	struct cli_operand ob = { b, cli_what(wb, "-b", opt.bfile), opt.transb ? k : n,
				  opt.transb, (uint64_t)m * k, 1 };
	double *al = NULL, *bl = NULL;
	int rc = 0;

	if (!j->generated)
		rc = cli_operand_load(j, &oa, &al) || cli_operand_load(j, &ob, &bl) ? -1 : 0;
	if (!rc)
		rc = cli_accum_run(j, opt.mo.reference_given, CLI_RUN_GEMM, c, m, n, k,
				   al ? al : a->v, opt.transa ? m : k, opt.transa, bl ? bl : b->v,
				   opt.transb ? k : n, opt.transb, row);
	free(al);
	free(bl);
	return rc;
}

int cmd_gemm(int argc, char **argv)
{
	static const char *const id_cols[] = { "m", "n", "k" };
	const char *cols[CLI_MODEL_NCOLS + 3 + CLI_ACCUM_NCOLS + CLI_ACCUM_NBLOCKCOLS];
	struct cli_tensor a, b;
	struct cli_model_job *jobs = NULL;
	struct cli_accum_row row;
	struct cli_table t;
	size_t nj = 0, j, m, n, k;
	double *c = NULL;
	int rc, blk;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(gemm_usage);
	if (rc)
		return rc;
	rc = cli_model_grid(&opt.mo, &jobs, &nj);
	if (rc)
		return rc == -2 ? usage_error(gemm_usage, NULL) : CLI_EXIT_FAIL;
	rc = cli_backend_check(gemm_usage, opt.backend, nj, opt.output, opt.mo.profile);
	if (rc) {
		free(jobs);
		return rc;
	}
	if (opt.output && nj > 1) {
		free(jobs);
		return usage_error(gemm_usage, "-o %s: a sweep of %zu models has no single result; "
				   "run one model to write it", opt.output, nj);
	}
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	rc = inputs(&a, &b);
	m = (size_t)opt.m;
	n = (size_t)opt.n;
	k = (size_t)opt.k;
	if (!rc) {
		c = malloc((m * n + 1) * sizeof *c);
		if (!c)
			rc = error("out of memory");
	}
	memcpy(cols, cli_model_cols, sizeof cli_model_cols);
	memcpy(cols + CLI_MODEL_NCOLS, id_cols, sizeof id_cols);
	memcpy(cols + CLI_MODEL_NCOLS + 3, cli_accum_cols, sizeof cli_accum_cols);
	memcpy(cols + CLI_MODEL_NCOLS + 3 + CLI_ACCUM_NCOLS, cli_accum_block_cols,
	       sizeof cli_accum_block_cols);
	blk = cli_model_has_blocks(jobs, nj);
	if (!rc && opt.backend != CLI_BACKEND_EMU)
		rc = cli_operands_native_exact(&a, opt.afile, &b, opt.bfile);
	if (!rc && opt.backend != CLI_BACKEND_EMU) {
		rc = cli_native_accum(&jobs[0], opt.backend, opt.report, CLI_RUN_GEMM, c, m, n, k,
				      a.v, opt.transa ? m : k, opt.transa, b.v, opt.transb ? k : n,
				      opt.transb, opt.mo.profile);
	} else if (!rc) {
		cli_table_begin(&t, stdout, opt.report, cols,
				CLI_MODEL_NCOLS + 3 + CLI_ACCUM_NCOLS
					+ (blk ? CLI_ACCUM_NBLOCKCOLS : 0));
		cli_progress_start("gemm", (size_t)((double)nj * CLI_ACCUM_WORK(m, n, k)));
		for (j = 0; j < nj && !rc; j++) {
			rc = run_job(&jobs[j], &a, &b, c, m, n, k, &row);
			if (rc)
				break;
			cli_model_cells(&t, &jobs[j]);
			cli_table_int(&t, (long long)m);
			cli_table_int(&t, (long long)n);
			cli_table_int(&t, (long long)k);
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
	if (!rc && opt.output) {
		uint64_t shape[2] = { m, n };

		rc = cli_accum_write(opt.output, c, m * n, 2, shape);
	}
	free(c);
	cli_tensor_release(&a);
	cli_tensor_release(&b);
	free(jobs);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
