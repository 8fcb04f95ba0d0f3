/* SPDX-License-Identifier: MIT */
/*
 * cmd_round.c - `fplab round`: round numbers from files or stdin into a
 * format, as CPFloat's cpfloat() does for a MATLAB array.
 *
 * Invariant: values are rounded in chunks of at most CHUNK elements, so
 * memory is bounded whatever the input size, and element j of the whole
 * input uses random draw j (the state's counter carries over from chunk
 * to chunk): results do not depend on the chunking.  Every number is
 * rounded once: binary64 values through fpl_round_array, and a text
 * number binary64 cannot hold (0.1) from its exact value through
 * fpl_round_parts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

#define CHUNK 65536	/* elements per fpl_round_array call */

static const char round_usage[] =
	"usage: fplab round " CLI_ROUND_SYNOPSIS "\n"
	"    [--in text|f64|f32|f16|bf16|npy|codes] [--dtype DTYPE]\n"
	"    [--out text|hex|bits|f64|f32|npy|npz|safetensors] [--out-dtype DTYPE]\n"
	"    [-o FILE] [--stats] [--tsv|--json] [FILE...]\n";

enum { OPT_IN = CLI_OPT_CMD, OPT_DTYPE, OPT_OUT, OPT_STATS, OPT_OUT_DTYPE };

static struct round_opts {
	struct cli_round ro;
	enum cli_in_kind in;
	fpl_dtype dtype;	/* --dtype: what an .npy of raw codes holds */
	enum cli_out_kind out;
	int out_set;		/* --out given (else from -o's extension) */
	fpl_dtype out_dtype;	/* --out-dtype: .npy element type */
	const char *output;
	int stats;
	enum cli_report report;
} opt;

/* Running statistics of --stats. */
static struct round_stats {
	uint64_t n;
	double max_relerr;
	double worst_x;		/* an input reaching max_relerr */
} stats;

/* The relative errors of a chunk; an inexact text number (listed in inx)
 * is compared as the number itself, not its nearest binary64 x[i]. */
static void note_errors(const double *x, const double *y, size_t n,
			const struct cli_inexact_list *inx)
{
	size_t i, k = 0;

	stats.n += n;
	if (!opt.stats)
		return;
	for (i = 0; i < n; i++) {
		int wide = inx && k < inx->n && inx->v[k].pos == i;
		double e;

		if (!isfinite(x[i]) || !isfinite(y[i]) || x[i] == 0) {
			k += (size_t)wide;
			continue;
		}
		if (wide)
			e = fpl_wide_relerr(&inx->v[k++].w, y[i]);
		else
			e = fabs((y[i] - x[i]) / x[i]);
		if (e > stats.max_relerr) {
			stats.max_relerr = e;
			stats.worst_x = x[i];
		}
	}
}

/*
 * Round x[0..n) into y.  The numbers listed in `inx` (read from text,
 * binary64 cannot hold them; x has their nearest binary64) are rounded
 * from their exact value instead, so that a decimal is rounded once.
 * Element i uses draw counter + i either way: the scalar calls advance
 * the counter as the array call does, and return the same bits.
 */
static int round_chunk(double *y, const double *x, size_t n, const struct cli_inexact_list *inx)
{
	const fpl_format *f = &opt.ro.fmt;
	fpl_state *st = &opt.ro.st;
	size_t i, k = 0;
	int rc;

	if (!inx || !inx->n) {
		rc = fpl_round_array(f, y, x, n, opt.ro.rnd, st);
		if (rc)
			return error("rounding failed: %s", fpl_strerror(rc));
	} else {
		for (i = 0; i < n; i++) {
			if (k < inx->n && inx->v[k].pos == i)
				y[i] = fpl_round_wide(f, &inx->v[k++].w, opt.ro.rnd, st);
			else
				y[i] = fpl_round(f, x[i], opt.ro.rnd, st);
		}
	}
	note_errors(x, y, n, inx);
	return 0;
}

/* Text in, text out: keep the line structure (one output line per input
 * line that holds numbers). */
static int round_lines(const char *path, FILE *out, double *x, double *y)
{
	struct cli_text t;
	char s[CLI_VALUE_MAX];
	size_t n, i;
	int rc;

	if (cli_text_open(&t, path))
		return -1;
	while ((rc = cli_text_line(&t, x, CHUNK, &n)) > 0) {
		if (round_chunk(y, x, n, &t.inexact)) {
			rc = -1;
			break;
		}
		/* a line longer than CHUNK numbers comes in pieces */
		for (i = 0; i < n; i++) {
			fputs(cli_value_str(s, y[i], opt.out, &opt.ro.fmt), out);
			fputc(i + 1 < n || t.partial ? ' ' : '\n', out);
		}
	}
	cli_text_release(&t);
	return rc;
}

/*
 * A column-major tensor to a flat output (text, raw): rounded in storage
 * order (draws counter + storage index), written in C (logical) order,
 * as numpy's a.ravel() or a.tofile() give it.  Held in memory whole.
 */
static int round_fortran(struct cli_reader *r, struct cli_writer *w)
{
	uint64_t n = r->info->count;
	double *x, *y, *z;
	size_t got, k = 0;
	int rc = 0;

	if (n > SIZE_MAX / 8 / 3)
		return error("'%s': tensor too large to reorder", r->name);
	x = malloc((size_t)n * 8 + 1);
	y = malloc((size_t)n * 8 + 1);
	z = malloc((size_t)n * 8 + 1);
	if (!x || !y || !z)
		rc = error("out of memory");
	while (!rc && k < n) {
		size_t want = n - k < CHUNK ? (size_t)(n - k) : CHUNK;

		rc = cli_reader_read(r, x + k, want, &got);
		if (!rc && !got)
			rc = error("'%s': truncated tensor", r->name);
		if (!rc)
			rc = round_chunk(y + k, x + k, got, &r->inexact);
		k += got;
	}
	if (!rc) {
		cli_fortran_to_c(z, y, r->info->ndim, r->info->shape);
		rc = cli_writer_put(w, z, (size_t)n);
	}
	free(x);
	free(y);
	free(z);
	return rc;
}

static int writer_tensor(void *w, const fpl_tensor_info *ti)
{
	return cli_writer_tensor(w, ti, opt.out_dtype);
}

/* Whether some tensor of tf has a Fortran order that matters. */
static int has_fortran(const fpl_tensor_file *tf)
{
	size_t i;

	for (i = 0; i < fpl_tensor_count(tf); i++)
		if (fpl_tensor_get(tf, i)->fortran_order && fpl_tensor_get(tf, i)->ndim > 1)
			return 1;
	return 0;
}

/* Any input, values streamed through the writer. */
static int round_stream(const char *path, struct cli_writer *w, double *x, double *y)
{
	struct cli_reader r;
	size_t got;
	int rc = 0;

	if (cli_reader_open(&r, path, opt.in, &opt.ro.fmt, opt.dtype))
		return -1;
	/* each tensor's name, shape, storage order and dtype go to a tensor
	 * output (.npy, .npz, .safetensors) */
	if (cli_writer_tensor(w, r.info, opt.out_dtype)) {
		cli_reader_release(&r);
		return -1;
	}
	r.on_tensor = writer_tensor;
	r.on_tensor_ctx = w;
	if (r.info && w->kind < CLI_OUT_NPY && has_fortran(r.tf)) {
		if (fpl_tensor_count(r.tf) == 1)
			rc = round_fortran(&r, w);
		else
			rc = error("'%s' holds Fortran-order tensors: a flat --out would lose their "
				   "order; use --out npz or safetensors", path);
		cli_reader_release(&r);
		return rc;
	}
	for (;;) {
		rc = cli_reader_read(&r, x, CHUNK, &got);
		if (rc || !got)
			break;
		rc = round_chunk(y, x, got, &r.inexact);
		if (!rc)
			rc = cli_writer_put(w, y, got);
		if (rc)
			break;
	}
	cli_reader_release(&r);
	return rc;
}

/* The element count of a single input known before reading, for the npy
 * header; UINT64_MAX when unknown (the writer then spools). */
static uint64_t known_count(int nfiles, char **files)
{
	struct stat sb;
	size_t w;

	if (nfiles != 1 || !strcmp(files[0], "-"))
		return UINT64_MAX;
	switch (opt.in) {
	case CLI_IN_F64: w = 8; break;
	case CLI_IN_F32: w = 4; break;
	case CLI_IN_F16: case CLI_IN_BF16: w = 2; break;
	default: return UINT64_MAX;
	}
	if (stat(files[0], &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size % w)
		return UINT64_MAX;
	return (uint64_t)sb.st_size / w;
}

static void print_stats(void)
{
	static const char *const cols[] = {
		"format", "mode", "n", "inexact", "underflow", "overflow", "saturated", "flushed",
		"max_relerr"
	};
	static const int flag_index[] = { 0, 1, 2, 5, 6 };
	struct cli_table t;
	size_t i;

	if (opt.report == CLI_REPORT_TEXT) {
		char a[CLI_VALUE_MAX], b[CLI_VALUE_MAX];

		fprintf(stderr, "round: %llu values to %s, mode %s\n", (unsigned long long)stats.n,
			opt.ro.fmt.name, fpl_rnd_name(opt.ro.rnd));
		for (i = 0; i < 5; i++)
			fprintf(stderr, "  %-10s %llu\n", cols[3 + i],
				(unsigned long long)opt.ro.st.count[flag_index[i]]);
		fprintf(stderr, "  %-10s %s", "max_relerr", cli_shortest(a, stats.max_relerr));
		if (stats.max_relerr > 0)
			fprintf(stderr, " (at %s)", cli_shortest(b, stats.worst_x));
		fputc('\n', stderr);
		return;
	}
	cli_table_begin(&t, stderr, opt.report, cols, 9);
	cli_table_str(&t, opt.ro.fmt.name);
	cli_table_str(&t, fpl_rnd_name(opt.ro.rnd));
	cli_table_int(&t, (long long)stats.n);
	for (i = 0; i < 5; i++)
		cli_table_int(&t, (long long)opt.ro.st.count[flag_index[i]]);
	cli_table_num(&t, stats.max_relerr);
	cli_table_end(&t);
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
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;
	/* fresh state on every call: the fuzz harness runs commands in-process */
	memset(&opt, 0, sizeof opt);
	cli_text_dtype = FPL_DT_UNKNOWN;
	memset(&stats, 0, sizeof stats);
	optind = 0;

	cli_round_init(&opt.ro);
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "ho:", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(round_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case OPT_IN:
			if (cli_in_parse(optarg, &opt.in))
				return usage_error(round_usage, NULL);
			break;
		case OPT_DTYPE:
			if (cli_dtype_parse(optarg, &opt.dtype))
				return usage_error(round_usage, NULL);
			cli_text_dtype = opt.dtype;
			break;
		case OPT_OUT:
			if (cli_out_parse(optarg, &opt.out))
				return usage_error(round_usage, NULL);
			opt.out_set = 1;
			break;
		case OPT_OUT_DTYPE:
			if (cli_dtype_parse(optarg, &opt.out_dtype))
				return usage_error(round_usage, NULL);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_STATS:
			opt.stats = 1;
			break;
		default:
			return usage_error(round_usage, NULL);
		}
	}
	if (opt.dtype != FPL_DT_UNKNOWN && opt.in != CLI_IN_NPY && opt.in != CLI_IN_TEXT)
		return usage_error(round_usage, "--dtype applies to tensor files (.npy, .npz of raw "
				   "codes), not to --in f64|f32|f16|bf16|codes, which say what "
				   "they hold");
	if (!opt.out_set)
		opt.out = cli_out_from_path(opt.output, opt.out);
	if (opt.out_dtype != FPL_DT_UNKNOWN && opt.out < CLI_OUT_NPY)
		return usage_error(round_usage, "--out-dtype applies to --out npy, npz and "
				   "safetensors only");
	rc = cli_round_finish(&opt.ro);
	if (rc == -2)
		return usage_error(round_usage, NULL);
	return rc ? CLI_EXIT_FAIL : 0;
}

int cmd_round(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct cli_writer w;
	char **files;
	int nfiles, i, rc = 0;
	int lines;
	double *x, *y;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(round_usage);
	if (rc)
		return rc;
	if (opt.report != CLI_REPORT_TEXT && !opt.stats)
		opt.stats = 1;	/* --tsv/--json report the statistics */
	files = argv + optind;
	nfiles = argc - optind;
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	lines = opt.in == CLI_IN_TEXT && opt.out <= CLI_OUT_BITS;
	x = malloc(CHUNK * sizeof *x);
	y = malloc(CHUNK * sizeof *y);
	if (!x || !y) {
		free(x);
		free(y);
		return error("out of memory"), CLI_EXIT_FAIL;
	}
	if (cli_writer_open(&w, opt.output, opt.out, &opt.ro.fmt, known_count(nfiles, files))) {
		free(x);
		free(y);
		return CLI_EXIT_FAIL;
	}
	for (i = 0; i < nfiles && !rc; i++)
		rc = lines && !cli_is_tensor_file(files[i]) ? round_lines(files[i], w.out.fp, x, y)
			: round_stream(files[i], &w, x, y);
	if (lines && !rc && ferror(w.out.fp))
		rc = cli_output_error(&w.out);
	rc = cli_writer_close(&w, !rc);
	free(x);
	free(y);
	if (!rc && opt.stats)
		print_stats();
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
