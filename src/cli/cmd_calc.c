/* SPDX-License-Identifier: MIT */
/*
 * cmd_calc.c - `fplab calc OP`: element-wise arithmetic on rows of
 * operands (text columns, or parallel files of any --in kind), each
 * result rounded once into the format by the engine.
 *
 * Invariant: operands are used exactly as read (binary64), as the engine's
 * contract says, except a text number that binary64 cannot hold (0.1):
 * that one is first rounded once into the format (operand()).  Row j uses
 * random draw j, whether the rows come from text lines or from chunks of
 * binary files.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define CHUNK 16384

static const char calc_usage[] =
	"usage: fplab calc OP " CLI_ROUND_SYNOPSIS "\n"
	"    [--in text|f64|f32|f16|bf16|npy|codes] [--dtype DTYPE]\n"
	"    [--out text|hex|bits|f64|f32|npy|npz|safetensors] [--out-dtype DTYPE]\n"
	"    [--flags] [-o FILE] [--tsv|--json] [FILE...]\n"
	"OP is one of add sub mul div fma sqrt neg abs min max cmp\n";

enum { OPT_IN = CLI_OPT_CMD, OPT_DTYPE, OPT_OUT, OPT_FLAGS, OPT_OUT_DTYPE };

enum op { ADD, SUB, MUL, DIV, FMA, SQRT, NEG, ABS, MIN, MAX, CMP, NOPS };

static const char *const op_names[NOPS] = {
	"add", "sub", "mul", "div", "fma", "sqrt", "neg", "abs", "min", "max", "cmp"
};
static const int op_arity[NOPS] = { 2, 2, 2, 2, 3, 1, 1, 1, 2, 2, 2 };

static struct calc_opts {
	struct cli_round ro;
	enum op op;
	enum cli_in_kind in;
	fpl_dtype dtype;	/* --dtype: what an .npy of raw codes holds */
	enum cli_out_kind out;
	fpl_dtype out_dtype;	/* --out-dtype: .npy element type */
	int out_set;		/* --out given (else from -o's extension) */
	const char *output;
	int flags;
	enum cli_report report;
} opt;

/* One result; a comparison gives -1, 0, 1 or NaN (unordered). */
static double apply(const double *a)
{
	const fpl_format *f = &opt.ro.fmt;
	fpl_rnd r = opt.ro.rnd;
	fpl_state *st = &opt.ro.st;
	int c;

	switch (opt.op) {
	case ADD: return fpl_add(f, a[0], a[1], r, st);
	case SUB: return fpl_sub(f, a[0], a[1], r, st);
	case MUL: return fpl_mul(f, a[0], a[1], r, st);
	case DIV: return fpl_div(f, a[0], a[1], r, st);
	case FMA: return fpl_fma(f, a[0], a[1], a[2], r, st);
	case SQRT: return fpl_sqrt(f, a[0], r, st);
	case NEG: return fpl_round(f, -a[0], r, st);
	case ABS: return fpl_round(f, fabs(a[0]), r, st);
	case MIN: return fpl_min(f, a[0], a[1], r, st);
	case MAX: return fpl_max(f, a[0], a[1], r, st);
	default:
		c = fpl_compare(f, a[0], a[1], st);
		return c == 2 ? NAN : (double)c;
	}
}

/*
 * A text operand that binary64 cannot hold (0.1, 1e-400, 1e400) as a value
 * of the format: the number rounded once, in the mode (to nearest, ties to
 * even, in the stochastic modes), on a scratch state: reading an operand
 * raises no flag, takes no random draw and suffers no soft error; those
 * belong to the operation.
 */
static double operand(const fpl_wide *w)
{
	fpl_rnd r = fpl_rnd_is_stochastic(opt.ro.rnd) ? FPL_RND_NE : opt.ro.rnd;
	fpl_state scratch;

	fpl_state_init(&scratch, 0);
	return fpl_round_wide(&opt.ro.fmt, w, r, &scratch);
}

/* Replace the inexact numbers of a read (listed in l) in a by operand(). */
static void fix_operands(double *a, const struct cli_inexact_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		a[l->v[i].pos] = operand(&l->v[i].w);
}

/* ----------------------------------------------------------- text rows */
static const char *const row_cols[][5] = {
	{ "a", "result", "flags" },
	{ "a", "b", "result", "flags" },
	{ "a", "b", "c", "result", "flags" },
};

static void table_value(struct cli_table *t, double x)
{
	char s[CLI_VALUE_MAX];

	if (opt.out == CLI_OUT_TEXT || opt.op == CMP)
		cli_table_num(t, x);
	else
		cli_table_str(t, cli_value_str(s, x, opt.out, &opt.ro.fmt));
}

/* Print one row: result (and flags) as text, or a table row. */
static void put_row(FILE *out, struct cli_table *t, const double *a, double y, unsigned fl)
{
	char s[CLI_VALUE_MAX], fs[128];
	int k, n = op_arity[opt.op];

	if (opt.report != CLI_REPORT_TEXT) {
		for (k = 0; k < n; k++)
			table_value(t, a[k]);
		table_value(t, y);
		if (opt.flags)
			cli_table_str(t, cli_flag_names(fs, sizeof fs, fl));
		return;
	}
	if (opt.op == CMP)
		cli_shortest(s, y);
	else
		cli_value_str(s, y, opt.out, &opt.ro.fmt);
	fputs(s, out);
	if (opt.flags) {
		fputc(' ', out);
		fputs(cli_flag_names(fs, sizeof fs, fl), out);
	}
	fputc('\n', out);
}

static void begin_table(struct cli_table *t, FILE *out)
{
	int n = op_arity[opt.op];

	if (opt.report != CLI_REPORT_TEXT)
		cli_table_begin(t, out, opt.report, row_cols[n - 1], n + 1 + opt.flags);
}

/* Text columns from one file (or stdin): one row per line. */
static int calc_columns(const char *path, FILE *out)
{
	struct cli_text tx;
	struct cli_table t;
	double a[64];
	size_t n;
	int rc, arity = op_arity[opt.op];

	if (cli_text_open(&tx, path))
		return -1;
	begin_table(&t, out);
	while ((rc = cli_text_line(&tx, a, 64, &n)) > 0) {
		double y;

		if ((int)n != arity || tx.partial) {
			rc = error("%s%sline %ld: %s needs %d operand%s, found %s%zu",
				   tx.name ? tx.name : "stdin", ": ", tx.line,
				   op_names[opt.op], arity, arity > 1 ? "s" : "",
				   tx.partial ? "more than " : "", n);
			break;
		}
		fix_operands(a, &tx.inexact);
		opt.ro.st.flags = 0;
		y = apply(a);
		put_row(out, &t, a, y, opt.ro.st.flags);
	}
	if (opt.report != CLI_REPORT_TEXT)
		cli_table_end(&t);
	cli_text_release(&tx);
	return rc;
}

/* ------------------------------------------------------ parallel files */
static int array_op(double *y, double *const *a, size_t n)
{
	const fpl_format *f = &opt.ro.fmt;
	fpl_rnd r = opt.ro.rnd;
	fpl_state *st = &opt.ro.st;

	switch (opt.op) {
	case ADD: return fpl_add_array(f, y, a[0], a[1], n, r, st);
	case SUB: return fpl_sub_array(f, y, a[0], a[1], n, r, st);
	case MUL: return fpl_mul_array(f, y, a[0], a[1], n, r, st);
	case DIV: return fpl_div_array(f, y, a[0], a[1], n, r, st);
	case FMA: return fpl_fma_array(f, y, a[0], a[1], a[2], n, r, st);
	case SQRT: return fpl_sqrt_array(f, y, a[0], n, r, st);
	default: {
		size_t j;

		for (j = 0; j < n; j++) {
			double row[3] = { a[0][j], op_arity[opt.op] > 1 ? a[1][j] : 0, 0 };

			y[j] = apply(row);
		}
		return 0;
	}
	}
}

/* Read the next chunk of every operand file; all must give the same count. */
static int read_rows(struct cli_reader *r, char **files, double *const *a, size_t *got)
{
	int k, arity = op_arity[opt.op];
	size_t g0 = 0;

	for (k = 0; k < arity; k++) {
		size_t g = 0, more;

		/* fill the chunk as far as the file allows, so counts line up */
		while (g < CHUNK) {
			if (cli_reader_read(&r[k], a[k] + g, CHUNK - g, &more))
				return -1;
			fix_operands(a[k] + g, &r[k].inexact);
			if (!more)
				break;
			g += more;
		}
		if (k == 0)
			g0 = g;
		else if (g != g0)
			return error("'%s' and '%s' hold different numbers of values "
				     "(%llu and %llu)", files[0], files[k],
				     (unsigned long long)r[0].done, (unsigned long long)r[k].done);
	}
	*got = g0;
	return 0;
}

/*
 * Operands read from tensor files go element by element in storage order:
 * their shapes and storage orders must agree (else a C-order and a
 * Fortran-order operand would pair the wrong elements), and an .npy output
 * takes that shape, order and the first operand's dtype (cli_writer_tensor).
 * A Fortran-order tensor of 2 or more dimensions to a flat --out is refused
 * (round reorders it; calc does not yet).  Returns 0 or -1.
 */
static int tensor_layout(const struct cli_reader *r, char **files, int arity,
			 struct cli_writer *w)
{
	const fpl_tensor_info *i0 = r[0].info;
	int k;

	for (k = 1; k < arity; k++) {
		const fpl_tensor_info *ik = r[k].info;
		int f0 = i0 && i0->ndim > 1 && i0->fortran_order;
		int fk = ik && ik->ndim > 1 && ik->fortran_order;

		if (f0 != fk || (i0 && ik && (i0->ndim != ik->ndim ||
		    memcmp(i0->shape, ik->shape, sizeof i0->shape))))
			return error("'%s' and '%s' differ in shape or storage order",
				     files[0], files[k]);
	}
	if (i0 && i0->ndim > 1 && i0->fortran_order && w->kind < CLI_OUT_NPY)
		return error("'%s' is in Fortran order: use --out npy to keep it, or "
			     "store it in C order", files[0]);
	/* an integer first operand: binary64 out, as round -o and reduce -o */
	cli_writer_tensor(w, i0, opt.out_dtype == FPL_DT_UNKNOWN && i0 && fpl_dtype_is_int(i0->dtype)
					 ? FPL_DT_F64 : opt.out_dtype);
	return 0;
}

static int calc_files(char **files, struct cli_writer *w)
{
	struct cli_reader r[3];
	struct cli_table t;
	double *a[3] = { NULL, NULL, NULL }, *y;
	int k, arity = op_arity[opt.op], rc = 0, opened = 0;
	int rows = opt.flags || opt.report != CLI_REPORT_TEXT;

	y = malloc(CHUNK * sizeof *y);
	for (k = 0; k < arity; k++)
		a[k] = malloc(CHUNK * sizeof *a[k]);
	if (!y || !a[0] || (arity > 1 && !a[1]) || (arity > 2 && !a[2]))
		rc = error("out of memory");
	for (k = 0; k < arity && !rc; k++, opened++)
		rc = cli_reader_open(&r[k], files[k], opt.in, &opt.ro.fmt, opt.dtype);
	if (!rc)
		rc = tensor_layout(r, files, arity, w);
	if (rows)
		begin_table(&t, w->out.fp);
	while (!rc) {
		size_t got = 0, j;

		rc = read_rows(r, files, a, &got);
		if (rc || !got)
			break;
		if (!rows) {
			rc = array_op(y, a, got);
			if (rc)
				rc = error("%s failed: %s", op_names[opt.op], fpl_strerror(rc));
			else
				rc = cli_writer_put(w, y, got);
			continue;
		}
		for (j = 0; j < got; j++) {
			double row[3], res;

			for (k = 0; k < arity; k++)
				row[k] = a[k][j];
			opt.ro.st.flags = 0;
			res = apply(row);	/* before the flags are read: argument order is unspecified */
			put_row(w->out.fp, &t, row, res, opt.ro.st.flags);
		}
	}
	if (rows && opt.report != CLI_REPORT_TEXT)
		cli_table_end(&t);
	for (k = 0; k < opened; k++)
		cli_reader_release(&r[k]);
	for (k = 0; k < 3; k++)
		free(a[k]);
	free(y);
	return rc;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		{ "in", required_argument, NULL, OPT_IN },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "out-dtype", required_argument, NULL, OPT_OUT_DTYPE },
		{ "output", required_argument, NULL, 'o' },
		{ "flags", no_argument, NULL, OPT_FLAGS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;
	/* fresh state on every call: the fuzz harness runs commands in-process */
	memset(&opt, 0, sizeof opt);
	cli_text_dtype = FPL_DT_UNKNOWN;
	optind = 0;

	cli_round_init(&opt.ro);
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "ho:", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(calc_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case OPT_IN:
			if (cli_in_parse(optarg, &opt.in))
				return usage_error(calc_usage, NULL);
			break;
		case OPT_DTYPE:
			if (cli_in_dtype_parse(optarg, &opt.dtype))
				return usage_error(calc_usage, NULL);
			cli_text_dtype = opt.dtype;
			break;
		case OPT_OUT:
			if (cli_out_parse(optarg, &opt.out))
				return usage_error(calc_usage, NULL);
			opt.out_set = 1;
			break;
		case OPT_OUT_DTYPE:
			if (cli_dtype_parse(optarg, &opt.out_dtype))
				return usage_error(calc_usage, NULL);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_FLAGS:
			opt.flags = 1;
			break;
		default:
			return usage_error(calc_usage, NULL);
		}
	}
	return 0;
}

static int parse_op(const char *s)
{
	int i = cli_name_index("operation", s, op_names, NOPS);

	if (i < 0)
		return -1;
	opt.op = (enum op)i;
	return 0;
}

int cmd_calc(int argc, char **argv)
{
	struct cli_writer w;
	char **files;
	int nfiles, rc, arity, binary_out, rows;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(calc_usage);
	if (rc)
		return rc;
	if (optind >= argc)
		return usage_error(calc_usage, "missing OP");
	if (parse_op(argv[optind]))
		return usage_error(calc_usage, NULL);
	if (opt.dtype != FPL_DT_UNKNOWN && opt.in != CLI_IN_NPY && opt.in != CLI_IN_TEXT)
		return usage_error(calc_usage, "--dtype applies to tensor files (.npy, .npz of raw "
				   "codes), not to --in f64|f32|f16|bf16|codes, which say what "
				   "they hold");
	rc = cli_round_finish(&opt.ro);
	if (rc == -2)
		return usage_error(calc_usage, NULL);
	if (rc)
		return CLI_EXIT_FAIL;
	arity = op_arity[opt.op];
	files = argv + optind + 1;
	nfiles = argc - optind - 1;
	if (!opt.out_set)
		opt.out = cli_out_from_path(opt.output, opt.out);
	binary_out = opt.out > CLI_OUT_BITS;
	rows = opt.flags || opt.report != CLI_REPORT_TEXT;
	if (binary_out && rows)
		return usage_error(calc_usage, "--flags, --tsv and --json need a text --out");
	if (opt.out_dtype != FPL_DT_UNKNOWN && opt.out < CLI_OUT_NPY)
		return usage_error(calc_usage, "--out-dtype applies to --out npy, npz and "
				   "safetensors only");
	if (opt.in == CLI_IN_TEXT && nfiles <= 1 && !(arity == 1 && binary_out) &&
	    !(nfiles == 1 && cli_is_tensor_file(files[0]))) {
		if (binary_out)
			return usage_error(calc_usage, "binary --out needs one operand file per operand");
		if (cli_writer_open(&w, opt.output, opt.out, &opt.ro.fmt, UINT64_MAX))
			return CLI_EXIT_FAIL;
		rc = calc_columns(nfiles ? files[0] : "-", w.out.fp);
	} else {
		static char *stdin_only[] = { "-" };

		if (nfiles == 0 && arity == 1) {
			files = stdin_only;
			nfiles = 1;
		}
		if (nfiles != arity)
			return usage_error(calc_usage, "%s needs %d operand file%s, got %d",
					   op_names[opt.op], arity, arity > 1 ? "s" : "", nfiles);
		if (cli_writer_open(&w, opt.output, opt.out, &opt.ro.fmt, UINT64_MAX))
			return CLI_EXIT_FAIL;
		rc = calc_files(files, &w);
	}
	if (!rc && ferror(w.out.fp))
		rc = cli_output_error(&w.out);
	rc = cli_writer_close(&w, !rc);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
