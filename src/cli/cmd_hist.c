/* SPDX-License-Identifier: MIT */
/*
 * cmd_hist.c - `fplab hist`: how the values of tensor dumps fare in a
 * format: per tensor and in total, the counts of zeros, NaN/inf,
 * became zero, subnormal, normal and overflow, the engine's events and the
 * cast's relative and absolute error (the shared statistics, cli.h), the
 * exponent histogram and the suggested power-of-two scales; as a terminal
 * chart, --tsv, --json, --ndjson, and --svg FILE.  Under a block format
 * (-f mxfp4, nvfp4, any spec, or --mx N: fplab/hist_block.h) the same
 * for the elements after block scaling, plus the block view.
 *
 * Invariant: memory is bounded whatever the file: each tensor's result is
 * printed as soon as it is finished (file order) and dropped, except the
 * running total and, with --svg, the first HIST_SVG_MAX tensors.  Under a
 * block format whose blocks lie within rows (mxfp8 ...) the tensor goes
 * in bands of rows; under the others (tiles, columns, a tensor scale:
 * nvfp4) it is read whole, so memory is bounded by the largest tensor.  A bad
 * input (exit 1) leaves the report of the tensors before it on stdout and
 * no SVG file; the SVG is written through cli_output (temporary + rename).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_plot.h"
#include "cli/hist_render.h"

#define CHUNK 65536	/* elements per read */

static const char hist_usage[] =
	"usage: fplab hist " CLI_ROUND_SYNOPSIS "\n"
	"    [--dtype DTYPE] [--offset N] [--count N] [--big-endian] [--tensor NAME]\n"
	"    [--scale S] [--loss-scale S] [--aps | --mx N] [--tsv|--json|--ndjson]\n"
	"    [--svg FILE] [--list] [FILE...]\n";

enum {
	OPT_DTYPE = CLI_OPT_CMD, OPT_OFFSET, OPT_COUNT, OPT_BIGEND, OPT_TENSOR, OPT_SCALE,
	OPT_LOSS, OPT_APS, OPT_MX, OPT_SVG, OPT_LIST
};

static struct hist_opts {
	struct cli_round ro;
	fpl_tensor_opts topts;
	const char **tensors;	/* --tensor names */
	int ntensors;
	double scale;
	const char *scale_arg, *loss_arg;
	int aps, mx;
	enum cli_report report;
	const char *svg;
	int list;		/* --list: name, dtype and shape of each tensor */
} opt;

double hist_frac(uint64_t value, uint64_t count)
{
	return count ? (double)value / (double)count : 0.0;
}

/* "2^k", "2**k" or a positive finite number. */
static int parse_scale(const char *s, double *out)
{
	long k;
	if (!strncmp(s, "2^", 2) || !strncmp(s, "2**", 3)) {
		if (cli_parse_long(s + (s[1] == '^' ? 2 : 3), &k) || k < -1074 || k > 1023)
			return -1;
		*out = ldexp(1.0, (int)k);
		return 0;
	}
	if (cli_parse_double(s, out) || !(*out > 0) || !isfinite(*out))
		return -1;
	return 0;
}

/*
 * --mx N: one spelling of the general block form, block:FMT:e8m0:N:floor
 * (OCP MX v1.0's scale rule and scale format, blocks of N along the last
 * axis) with -f's format, switches included, as the element format
 * (saturating, as every block format's elements).
 */
static int mx_block(int n)
{
	fpl_block_format *b = &opt.ro.block;
	char err[256];

	if (fpl_block_parse(b, "mxfp8", err, sizeof err))
		return error("%s", err), CLI_EXIT_FAIL;
	b->elem = opt.ro.fmt;
	b->elem.overflow = FPL_OVF_SATURATE;
	b->size = n;
	fpl_block_spec(b, b->name, sizeof b->name);
	int frc = fpl_format_finish(&b->elem);
	if (frc || fpl_block_check(b, err, sizeof err))
		return usage_error(hist_usage, "--mx %d with -f %s: %s", n, opt.ro.fmt.name,
				   frc ? "not an element format" : err);
	opt.ro.is_block = 1;
	opt.ro.fmt = b->elem;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "big-endian", no_argument, NULL, OPT_BIGEND },
		{ "tensor", required_argument, NULL, OPT_TENSOR },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "loss-scale", required_argument, NULL, OPT_LOSS },
		{ "aps", no_argument, NULL, OPT_APS },
		{ "mx", required_argument, NULL, OPT_MX },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const dtype_names[] = { "f64",   "f32",   "f16",    "bf16",   "e4m3fn",
						    "e5m2",  "text",  "int8",   "int16",  "int32",
						    "int64", "uint8", "uint16", "uint32", "uint64" };
	int c, rc;
	double v;
	long l;
	/* fresh state on every call: the fuzz harness runs commands in-process */
	memset(&opt, 0, sizeof opt);
	optind = 0;

	cli_round_init(&opt.ro);
	opt.scale = 1.0;
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "h", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(hist_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case OPT_DTYPE:
			if (fpl_dtype_parse(optarg, &opt.topts.dtype)) {
				cli_unknown("dtype", optarg, dtype_names, 15);
				return usage_error(hist_usage, NULL);
			}
			break;
		case OPT_OFFSET:
			if (cli_parse_u64(optarg, &opt.topts.offset))
				return usage_error(hist_usage, "--offset: '%s' is not a byte count", optarg);
			break;
		case OPT_COUNT:
			if (cli_parse_u64(optarg, &opt.topts.count))
				return usage_error(hist_usage, "--count: '%s' is not a count", optarg);
			break;
		case OPT_BIGEND:
			opt.topts.big_endian = 1;
			break;
		case OPT_TENSOR: {
			const char **nt = realloc(opt.tensors,
						  (size_t)(opt.ntensors + 1) * sizeof *opt.tensors);
			if (!nt)	/* opt.tensors stays valid and is freed by the caller */
				return error("out of memory"), CLI_EXIT_FAIL;
			opt.tensors = nt;
			opt.tensors[opt.ntensors++] = optarg;
			break;
		}
		case OPT_SCALE:
		case OPT_LOSS:
			if (parse_scale(optarg, &v))
				return usage_error(hist_usage, "--%s: '%s' is not a positive number or 2^k",
						   c == OPT_SCALE ? "scale" : "loss-scale", optarg);
			opt.scale *= v;
			*(c == OPT_SCALE ? &opt.scale_arg : &opt.loss_arg) = optarg;
			break;
		case OPT_APS:
			opt.aps = 1;
			break;
		case OPT_MX:
			if (cli_parse_long(optarg, &l) || l < 1 || l > INT_MAX)
				return usage_error(hist_usage, "--mx: block size '%s' is not a positive "
						   "integer", optarg);
			opt.mx = (int)l;
			break;
		case OPT_SVG:
			if (!cli_plot_svg_name_ok(optarg))
				return usage_error(hist_usage, "--svg '%s': the picture is SVG: give a "
						   "name ending in .svg (or - for stdout)", optarg);
			opt.svg = optarg;
			break;
		case OPT_LIST:
			opt.list = 1;
			break;
		default:
			return usage_error(hist_usage, NULL);
		}
	}
	if (opt.aps + (opt.mx > 0) + (opt.scale_arg || opt.loss_arg) > 1)
		return usage_error(hist_usage, "--aps, --mx and --scale/--loss-scale exclude each other");
	if (!isfinite(opt.scale) || opt.scale <= 0)
		return usage_error(hist_usage, "the product of --scale and --loss-scale is out of range");
	opt.ro.block_ok = 1;
	rc = cli_round_finish(&opt.ro);
	if (rc == -2)
		return usage_error(hist_usage, NULL);
	if (rc)
		return CLI_EXIT_FAIL;
	if (opt.ro.is_block && (opt.aps || opt.mx || opt.scale_arg || opt.loss_arg))
		return usage_error(hist_usage, "-f %s: a block format scales each block itself; "
				   "--aps, --mx, --scale and --loss-scale apply to plain formats "
				   "(the block size is part of the spec: mxfp4:16)", opt.ro.block.name);
	return opt.mx ? mx_block(opt.mx) : 0;
}

/* "stdin" for "-", else the path: how messages name an input. */
static const char *input_name(const char *path)
{
	return strcmp(path, "-") ? path : "stdin";
}

/* One pass over tensor i: scan (APS) or classify.  Text and integers are
 * classified exactly: the numbers binary64 cannot hold go in as
 * themselves. */
static int pass(fpl_tensor_file *tf, size_t i, fpl_hist *h, int scan, float *xf, double *xd)
{
	char err[1024], shown[FPL_ESCAPED_NAME_MAX];
	fpl_tensor_stream *s;
	const fpl_tensor_info *in = fpl_tensor_get(tf, i);
	int wide = in->dtype == FPL_DT_F64 || in->dtype == FPL_DT_TEXT || fpl_dtype_is_int(in->dtype);
	size_t got;
	int rc;

	if (fpl_tensor_stream_open(&s, tf, i, err, sizeof err))
		return error("%s", err);
	for (;;) {
		rc = wide ? fpl_tensor_stream_read(s, xd, CHUNK, &got, err, sizeof err)
			  : fpl_tensor_stream_read_f32(s, xf, CHUNK, &got, err, sizeof err);
		if (got) {
			if (scan && wide)
				fpl_hist_scan(h, xd, got);
			else if (scan)
				fpl_hist_scan_f32(h, xf, got);
			else {
				size_t nix;
				const fpl_inexact *ix = fpl_tensor_stream_inexact(s, &nix);
				int r2 = wide ? fpl_hist_add_exact(h, xd, got, ix, nix)
					      : fpl_hist_add_f32(h, xf, got);
				if (r2) {
					fpl_tensor_stream_close(s);
					return error("tensor '%s': %s",
						     fpl_escape(shown, sizeof shown, in->name),
						     fpl_strerror(r2));
				}
			}
		}
		if (rc) {
			fpl_tensor_stream_close(s);
			return error("%s", err);
		}
		if (!got)
			break;
	}
	fpl_tensor_stream_close(s);
	return 0;
}

/*
 * Under a block format: tensor i quantized and classified
 * (fplab/hist_block.h).  Where b's blocks lie within rows of the last
 * axis and there is no tensor scale, it goes in bands of whole rows (of
 * whole blocks for a 1-D tensor) of about BAND values, so memory stays
 * bounded; else it is read whole (tiles, columns, other axes, the whole
 * tensor and a tensor scale need all of it).  Text and integers come in as
 * their nearest binary64, as `round -f BLOCK` reads them.
 */
#define BAND (1 << 20)

/* Values per band for a tensor of nd axes (last dimension last), 0 to
 * read it whole. */
static size_t band_of(const fpl_block_format *b, int nd, size_t last)
{
	int axis = b->axis < 0 ? nd + b->axis : b->axis;
	size_t unit = nd == 1 ? (size_t)b->size : last;

	if (b->tensor_scale || b->shape != FPL_BLOCK_1D || b->size <= 0 || axis != nd - 1
	    || unit == 0 || unit > BAND)
		return 0;
	return BAND / unit * unit;
}

/* Read up to `want` values (all there are when fewer) into x. */
static int read_band(fpl_tensor_stream *s, double *x, size_t want, size_t *n)
{
	char err[1024];
	size_t got;

	*n = 0;
	while (*n < want) {
		size_t ask = want - *n < CHUNK ? want - *n : CHUNK;
		if (fpl_tensor_stream_read(s, x + *n, ask, &got, err, sizeof err))
			return error("%s", err);
		if (!got)
			break;
		*n += got;
	}
	return 0;
}

static int block_tensor(fpl_tensor_file *tf, size_t i, const char *path, struct hist_entry *e)
{
	const fpl_tensor_info *in = fpl_tensor_get(tf, i);
	const fpl_block_format *b = &opt.ro.block;
	char err[1024], shown[FPL_ESCAPED_NAME_MAX];
	fpl_tensor_stream *s;
	size_t dims[FPL_BLOCK_MAX_DIMS], n = 0, cap, got, band, want = 1;
	int known = in->dtype != FPL_DT_TEXT && in->count;	/* the shape before reading */
	int nd = known && in->ndim ? in->ndim : 1, rc = 0;
	int fortran = known && in->fortran_order && in->ndim > 1;
	double *x;

	fpl_escape(shown, sizeof shown, in->name);
	if (in->ndim > FPL_BLOCK_MAX_DIMS)
		return error("%s: tensor '%s' has %d axes; block formats take at most %d",
			     input_name(path), shown, in->ndim, FPL_BLOCK_MAX_DIMS);
	dims[0] = 1;
	for (int d = 0; known && d < in->ndim; d++)
		dims[d] = (size_t)in->shape[d];
	/* a Fortran-order tensor is read whole and put in C order: its
	 * blocks run along its last axis as numpy shows it */
	band = fortran ? 0 : band_of(b, nd, dims[nd - 1]);
	cap = band ? band : CHUNK;
	x = malloc(cap * sizeof *x);
	if (!x)
		return error("out of memory");
	if (fpl_tensor_stream_open(&s, tf, i, err, sizeof err)) {
		free(x);
		return error("%s", err);
	}
	if (band) {	/* bands of whole rows, the draws continuing (hist_block.h) */
		fpl_block_format pb = *b;
		pb.axis = -1;
		for (;;) {
			size_t pd[2];
			if ((rc = read_band(s, x, band, &got)) || !got)
				break;
			pd[0] = nd == 1 ? got : got / dims[nd - 1];
			pd[1] = dims[nd - 1];
			n += got;
			if (nd > 1 && got % dims[nd - 1]) {
				rc = error("%s: tensor '%s': truncated", input_name(path), shown);
				break;
			}
			rc = fpl_hist_add_block_part(&e->h, &e->bv, &pb, x, pd, nd == 1 ? 1 : 2);
			if (rc) {
				rc = error("%s: tensor '%s': %s", input_name(path), shown, fpl_strerror(rc));
				break;
			}
		}
	} else {	/* whole */
		for (;;) {
			if (cap - n < CHUNK) {
				double *nx = cap > SIZE_MAX / 2 / sizeof *x
						     ? NULL : realloc(x, 2 * cap * sizeof *x);
				if (!nx) {
					rc = error("%s: tensor '%s' does not fit in memory",
						   input_name(path), shown);
					break;
				}
				x = nx;
				cap *= 2;
			}
			if ((rc = read_band(s, x + n, CHUNK, &got)) || !got)
				break;
			n += got;
		}
	}
	fpl_tensor_stream_close(s);
	if (!known)
		dims[0] = n;	/* text and stdin: the length is known now */
	for (int d = 0; d < nd; d++)
		want *= dims[d];
	if (!rc && want != n)
		rc = error("%s: tensor '%s': read %zu values, its shape holds %zu", input_name(path),
			   shown, n, want);
	if (!rc && fortran) {
		double *c = malloc(n * sizeof *c + 1);

		if (!c) {
			rc = error("%s: tensor '%s' does not fit in memory", input_name(path), shown);
		} else {
			cli_fortran_to_c(c, x, in->ndim, in->shape);
			free(x);
			x = c;
		}
	}
	if (!rc) {
		rc = band ? fpl_hist_block_finish(&e->h, &e->bv, b, dims, nd)
			  : fpl_hist_add_block(&e->h, &e->bv, b, x, dims, nd);
		if (rc)
			rc = error("%s: tensor '%s': %s", input_name(path), shown, fpl_strerror(rc));
	}
	free(x);
	return rc;
}

static int classify_tensor(fpl_tensor_file *tf, size_t i, const char *path, int multi_file,
			   struct hist_entry *e, const fpl_hist_config *cfg, float *xf, double *xd)
{
	const fpl_tensor_info *in = fpl_tensor_get(tf, i);
	char shown[FPL_ESCAPED_NAME_MAX];
	int rc;

	if (multi_file)
		snprintf(e->name, sizeof e->name, "%s:%s", input_name(path), in->name);
	else
		snprintf(e->name, sizeof e->name, "%s", in->name);
	e->dtype = in->dtype;
	e->ndim = in->ndim;
	memcpy(e->shape, in->shape, sizeof e->shape);
	fpl_hist_config c = *cfg;
	c.st.stream = cfg->st.stream + i;	/* stochastic streams per tensor */
	rc = fpl_hist_init(&e->h, &c);
	if (rc)
		return error("%s", fpl_strerror(rc));
	fpl_hist_block_init(&e->bv);
	if (opt.ro.is_block)
		rc = block_tensor(tf, i, path, e);
	else if (fpl_hist_needs_scan(&e->h))
		rc = pass(tf, i, &e->h, 1, xf, xd);	/* the reader spooled a pipe */
	if (!rc && !opt.ro.is_block)
		rc = pass(tf, i, &e->h, 0, xf, xd);
	if (rc) {
		fpl_hist_release(&e->h);
		return -1;
	}
	rc = fpl_hist_finish(&e->h);
	if (in->dtype == FPL_DT_TEXT || (e->ndim == 1 && e->shape[0] == 0 && e->h.count)) {
		e->ndim = 1;	/* text and stdin: the length is known now */
		e->shape[0] = e->h.count;
	}
	fpl_hist_release(&e->h);
	if (rc)
		return error("%s", fpl_strerror(rc));
	if (e->h.count == 0)
		warning("%s: tensor '%s' is empty", input_name(path),
			fpl_escape(shown, sizeof shown, in->name));
	return 0;
}

/* ---------------------------------------------- --tsv, --json, --ndjson */
/*
 * The columns: the tensor, its class counts (overflow and became_zero
 * among the shared columns), the error and event statistics every
 * measuring command reports (cli_errstats_cols, one meaning across
 * commands) but its nan and inf counts, the class fractions, the extremes
 * and the scales.  fpl_hist counts NaN and infinite inputs together
 * (nan_inf) and the casts that overflowed (overflow), not the NaN and
 * infinite results one by one, so hist has no nan and inf columns: the
 * two classes say it.
 */
#define NHEAD 7
#define NTAIL 7
#define NSTATS (CLI_ERRSTATS_NCOLS - 2)
#define NCOLS (NHEAD + NSTATS + NTAIL)
static const char *const head_cols[NHEAD] = {
	"tensor", "dtype", "n", "zeros", "nan_inf", "subnormal", "normal"
};
static const char *const tail_cols[NTAIL] = {
	"became_zero_frac", "subnormal_frac", "overflow_frac", "amax", "applied_scale", "aps_log2",
	"best_log2"
};
/* under a block format, its block view after the others (fplab/hist_block.h) */
#define NBLK 11
static const char *const block_cols[NBLK] = {
	"bits_per_value", "blocks", "amax_saturated", "scale_clamped", "nan_blocks",
	"zero_blocks", "blocks_flushed", "blocks_saturated", "min_scale", "max_scale",
	"tensor_scale"
};
static const char *colnames[NCOLS + NBLK];

static int ncols(void)
{
	return NCOLS + (opt.ro.is_block ? NBLK : 0);
}

static const char *const *hist_cols(void)
{
	int k = 0;
	for (int i = 0; i < NHEAD; i++)
		colnames[k++] = head_cols[i];
	for (int i = 0; i < CLI_ERRSTATS_NCOLS; i++)
		if (i != CLI_ERRSTATS_NEVENTS - 2 && i != CLI_ERRSTATS_NEVENTS - 1)
			colnames[k++] = cli_errstats_cols[i];	/* not nan, inf */
	for (int i = 0; i < NTAIL; i++)
		colnames[k++] = tail_cols[i];
	for (int i = 0; i < NBLK; i++)
		colnames[k++] = block_cols[i];
	return colnames;
}

static void scale_str(char *buf, size_t cap, const fpl_hist *h)
{
	if (h->scale_varies)
		snprintf(buf, cap, "%s", opt.ro.is_block ? "block" : "varies");
	else if (h->scale_pow2)
		snprintf(buf, cap, "2^%d", h->scale_log2);
	else
		cli_shortest(buf, h->scale);
}

/* The shared statistics of a finished fpl_hist; count[] are its events
 * with the overflow class for the overflow flag (the same number: every
 * cast, the exact ones too, goes through the engine). */
static void hist_errstats(const fpl_hist *h, struct cli_errstats *es, uint64_t *count)
{
	memset(es, 0, sizeof *es);
	es->n = h->count;
	es->became_zero = h->became_zero;
	es->rel_n = h->err_n;
	es->rel_sum = h->err_sum;
	es->rel_sumsq = h->err_sumsq;
	es->rel_max = h->err_max;
	es->abs_n = h->abs_n;
	es->abs_sum = h->abs_sum;
	es->abs_sumsq = h->abs_sumsq;
	es->abs_max = h->abs_max;
	/* a finite value whose cast is NaN or infinite: error +inf (cli.h) */
	if (h->ovf_direct) {
		es->rel_n += h->ovf_direct;
		es->abs_n += h->ovf_direct;
		es->rel_sum = es->rel_sumsq = es->rel_max = INFINITY;
		es->abs_sum = es->abs_sumsq = es->abs_max = INFINITY;
	}
	memcpy(count, h->events, FPL_NFLAGS * sizeof *count);
	count[__builtin_ctz(FPL_FLAG_OVERFLOW)] = h->overflow;
}

/* The block view's cells (bv NULL: a plain format, none). */
static void block_cells(struct cli_table *t, const fpl_hist_block *bv)
{
	if (!bv)
		return;
	if (bv->s.elements)
		cli_table_num(t, bv->bits_sum / (double)bv->s.elements);
	else
		cli_table_none(t);
	cli_table_int(t, (long long)bv->s.blocks);
	cli_table_int(t, (long long)bv->s.amax_saturated);
	cli_table_int(t, (long long)bv->s.scale_range);
	cli_table_int(t, (long long)bv->s.nan_blocks);
	cli_table_int(t, (long long)bv->s.zero_blocks);
	cli_table_int(t, (long long)bv->blocks_flushed);
	cli_table_int(t, (long long)bv->blocks_saturated);
	if (bv->scale_lo <= bv->scale_hi) {
		cli_table_num(t, bv->min_scale);
		cli_table_num(t, bv->max_scale);
	} else {
		cli_table_none(t);
		cli_table_none(t);
	}
	if (bv->tensors && !bv->tscale_varies)
		cli_table_num(t, bv->tscale);
	else
		cli_table_none(t);
}

/* One row of ncols() cells. */
static void hist_row(struct cli_table *t, const char *name, const char *dtype, const fpl_hist *h,
		     const fpl_hist_block *bv)
{
	char s[CLI_VALUE_MAX], shown[FPL_ESCAPED_NAME_MAX + 256];
	struct cli_errstats es;
	uint64_t count[FPL_NFLAGS], ev[CLI_ERRSTATS_NEVENTS];
	double err[CLI_ERRSTATS_NERRORS];
	int i;

	cli_table_str(t, fpl_escape(shown, sizeof shown, name));
	if (dtype)
		cli_table_str(t, dtype);
	else
		cli_table_none(t);	/* the total of several tensors */
	cli_table_int(t, (long long)h->count);
	cli_table_int(t, (long long)h->zeros);
	cli_table_int(t, (long long)h->nan_inf);
	cli_table_int(t, (long long)h->subnormal);
	cli_table_int(t, (long long)h->normal);
	hist_errstats(h, &es, count);
	cli_errstats_values(&es, count, ev, err);
	for (i = 0; i < CLI_ERRSTATS_NEVENTS - 2; i++)	/* not nan, inf */
		cli_table_int(t, (long long)ev[i]);
	for (i = 0; i < CLI_ERRSTATS_NERRORS; i++)
		cli_table_num_or_none(t, err[i]);
	cli_table_num(t, hist_frac(h->became_zero, h->count));
	cli_table_num(t, hist_frac(h->subnormal, h->count));
	cli_table_num(t, hist_frac(h->overflow, h->count));
	cli_table_num(t, h->amax);
	scale_str(s, sizeof s, h);
	cli_table_str(t, s);
	cli_table_int(t, h->aps_k);
	cli_table_int(t, h->best_k);
	block_cells(t, bv);
}

/* --json under a block format: the scale bins and the losses per block. */
static void json_block(const fpl_hist_block *bv)
{
	int top = 0;

	printf(",\n     \"scale_bins\": {\"lo\": %d, \"hi\": %d, \"counts\": [", bv->scale_lo,
	       bv->scale_hi);
	for (int b = bv->scale_lo; b <= bv->scale_hi; b++)
		printf("%s%llu", b > bv->scale_lo ? ", " : "",
		       (unsigned long long)bv->scale_hist[b - FPL_HIST_EMIN]);
	for (int i = 0; i < FPL_HB_NBUCKETS; i++)
		if (bv->flushed_by[i] || bv->saturated_by[i])
			top = i;
	fputs("]},\n     \"lost_per_block\": {\"up_to\": [", stdout);
	for (int i = 0; i <= top; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)fpl_hist_block_bucket_max(i));
	fputs("], \"flushed\": [", stdout);
	for (int i = 0; i <= top; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)bv->flushed_by[i]);
	fputs("], \"saturated\": [", stdout);
	for (int i = 0; i <= top; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)bv->saturated_by[i]);
	fputs("]}", stdout);
}

/* --json: the row's object (written as an NDJSON row, so the cells are
 * the table's), then the shape, the best-scale estimate and the bins. */
static void json_tensor(const char *name, const char *dtype, const struct hist_entry *e,
			const fpl_hist *h, const fpl_hist_block *bv)
{
	struct cli_table t;
	char *mem = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&mem, &len);

	if (m) {
		cli_table_begin(&t, m, CLI_REPORT_NDJSON, hist_cols(), ncols());
		hist_row(&t, name, dtype, h, bv);
		cli_table_end(&t);
		fclose(m);
	}
	if (len >= 2)	/* drop the closing "}\n" */
		fwrite(mem, 1, len - 2, stdout);
	else
		fputs("{\"tensor\": null", stdout);
	free(mem);
	fputs(", \"shape\": [", stdout);
	for (int i = 0; e && i < e->ndim; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)e->shape[i]);
	printf("], \"best_loss_estimate\": %llu,\n", (unsigned long long)h->best_loss);
	printf("     \"bins\": {\"lo\": %d, \"hi\": %d, \"counts\": [", h->lo, h->hi);
	for (int b = h->lo; b <= h->hi; b++)
		printf("%s%llu", b > h->lo ? ", " : "",
		       (unsigned long long)h->hist[b - FPL_HIST_EMIN]);
	fputs("]}", stdout);
	if (bv)
		json_block(bv);
	fputs("}", stdout);
}

/* ------------------------------------------------- the streamed report */
/*
 * Each tensor's result is printed as soon as it is finished, in file
 * order; what stays in memory to the end is the running total and the
 * first HIST_SVG_MAX tensors when an SVG is asked for.  The heading needs
 * only the format (the range exponents come from `total`, initialised
 * before the first tensor); it is printed with the first result, so a
 * file that cannot be opened at all leaves stdout empty.
 */
/* the block view to report: under a block format only */
#define BV(p) (opt.ro.is_block ? (p) : NULL)

struct report {
	int begun;		/* the heading is out */
	struct hist_run run;
	fpl_hist total;		/* running total of every tensor */
	fpl_hist_block btotal;	/* its block view (block formats) */
	size_t ntensors;	/* tensors read */
	struct cli_table t;	/* --tsv, --ndjson */
	int colour;
};

static void report_begin(struct report *rp)
{
	const struct hist_run *r = &rp->run;
	const fpl_format *f = r->fmt;
	const fpl_hist *h = &rp->total;
	char a[CLI_VALUE_MAX], b[CLI_VALUE_MAX], c[CLI_VALUE_MAX];

	if (rp->begun)
		return;
	rp->begun = 1;
	switch (opt.report) {
	case CLI_REPORT_TSV:
	case CLI_REPORT_NDJSON:
		cli_table_begin(&rp->t, stdout, opt.report, hist_cols(), ncols());
		break;
	case CLI_REPORT_JSON:
		fputs("{\"format\": ", stdout);
		cli_json_str(stdout, r->block ? r->block->name : f->name);
		if (r->block) {
			char spec[2 * FPL_BLOCK_NAME_MAX];
			fpl_block_spec(r->block, spec, sizeof spec);
			fputs(", \"block\": ", stdout);
			cli_json_str(stdout, spec);
			fputs(", \"element_format\": ", stdout);
			cli_json_str(stdout, f->name);
		}
		printf(", \"mode\": \"%s\", \"scaling\": ", fpl_rnd_name(r->rnd));
		cli_json_str(stdout, r->scaling);
		printf(",\n \"range\": {\"min_subnormal\": %s, \"min_normal\": %s, \"max\": %s, "
		       "\"e_min_subnormal\": %d, \"e_min_normal\": %d, \"e_max\": %d},\n",
		       cli_shortest(a, f->min_subnormal), cli_shortest(b, f->min_normal),
		       cli_shortest(c, f->max), h->e_minsub, h->e_minnorm, h->e_max);
		fputs(" \"tensors\": [", stdout);
		break;
	default:
		hist_chart_head(stdout, r);
	}
}

static void report_tensor(struct report *rp, const struct hist_entry *e)
{
	report_begin(rp);
	switch (opt.report) {
	case CLI_REPORT_TSV:
	case CLI_REPORT_NDJSON:
		hist_row(&rp->t, e->name, fpl_dtype_name(e->dtype), &e->h, BV(&e->bv));
		break;
	case CLI_REPORT_JSON:
		fputs(rp->ntensors > 1 ? ",\n    " : "\n    ", stdout);
		json_tensor(e->name, fpl_dtype_name(e->dtype), e, &e->h, BV(&e->bv));
		break;
	default:
		hist_chart_one(stdout, e->name, e, &e->h, BV(&e->bv), &rp->run, rp->colour);
	}
}

/* The total: a row of its own (TSV, NDJSON, text) when there are several
 * tensors; JSON always has "total" (null when there was no tensor). */
static void report_end(struct report *rp)
{
	int several = rp->ntensors > 1;

	report_begin(rp);
	switch (opt.report) {
	case CLI_REPORT_TSV:
	case CLI_REPORT_NDJSON:
		if (several)
			hist_row(&rp->t, "(total)", NULL, &rp->total, BV(&rp->btotal));
		cli_table_end(&rp->t);
		break;
	case CLI_REPORT_JSON:
		fputs(rp->ntensors ? "\n ],\n \"total\":\n    " : "],\n \"total\": null", stdout);
		if (rp->ntensors)
			json_tensor("(total)", NULL, NULL, &rp->total, BV(&rp->btotal));
		fputs("\n}\n", stdout);
		break;
	default:
		if (several)
			hist_chart_one(stdout, "(total)", NULL, &rp->total, BV(&rp->btotal), &rp->run,
				       rp->colour);
		else if (!rp->ntensors)
			fputs("(no tensors)\n", stdout);
	}
}

/* A finished tensor: print it, add it to the total, keep it for the SVG. */
static int report_add(struct report *rp, const struct hist_entry *e)
{
	rp->ntensors++;
	report_tensor(rp, e);
	if (cli_flush_stdout())	/* streamed: out before the next tensor is read */
		return -1;	/* a full disk: said once, with its errno */
	fpl_hist_merge(&rp->total, &e->h);
	fpl_hist_block_merge(&rp->btotal, &e->bv);
	if (!opt.svg)
		return 0;
	if (rp->run.n == HIST_SVG_MAX) {
		rp->run.more++;
		return 0;
	}
	struct hist_entry *ne = realloc(rp->run.e, (rp->run.n + 1) * sizeof *ne);
	if (!ne)
		return error("out of memory");
	rp->run.e = ne;
	rp->run.e[rp->run.n++] = *e;
	return 0;
}

/* "no tensor 'x' in FILE; did you mean 'y'?" or the list of names. */
static int no_tensor(fpl_tensor_file *tf, const char *path, const char *want)
{
	size_t nt = fpl_tensor_count(tf);
	const char **names = malloc((nt ? nt : 1) * sizeof *names);
	char a[FPL_ESCAPED_NAME_MAX], b[FPL_ESCAPED_NAME_MAX];
	const char *near = NULL;

	for (size_t i = 0; names && i < nt; i++)
		names[i] = fpl_tensor_get(tf, i)->name;
	if (names)
		near = cli_closest(want, names, nt);
	fpl_escape(a, sizeof a, want);
	if (near)
		error("%s: no tensor '%s'; did you mean '%s'?", input_name(path), a,
		      fpl_escape(b, sizeof b, near));
	else {
		error("%s: no tensor '%s'; the file has %zu tensor%s%s", input_name(path), a, nt,
		      nt == 1 ? "" : "s", nt ? ":" : "");
		for (size_t i = 0; i < nt && i < 20; i++)
			fprintf(stderr, "  %s\n", fpl_escape(b, sizeof b, names ? names[i] : "?"));
		if (nt > 20)
			fprintf(stderr, "  ... and %zu more ('fplab hist --list %s' lists them)\n",
				nt - 20, path);
	}
	free(names);
	return -1;
}

/* Is tensor i of tf among the --tensor names (or are there none)? */
static int selected(fpl_tensor_file *tf, size_t i)
{
	if (!opt.ntensors)
		return 1;
	for (int k = 0; k < opt.ntensors; k++)
		if (!strcmp(opt.tensors[k], fpl_tensor_get(tf, i)->name))
			return 1;
	return 0;
}

/* Read every selected tensor of every file, reporting each as it is done. */
static int collect(char **files, int nfiles, struct report *rp, const fpl_hist_config *cfg)
{
	float *xf = malloc(CHUNK * sizeof *xf);
	double *xd = malloc(CHUNK * sizeof *xd);
	struct hist_entry *e = malloc(sizeof *e);
	int rc = 0;

	if (!xf || !xd || !e)
		rc = error("out of memory");
	for (int f = 0; f < nfiles && !rc; f++) {
		fpl_tensor_file *tf;
		char err[1024];
		if (fpl_tensor_open(&tf, files[f], &opt.topts, err, sizeof err)) {
			rc = error("%s", err);
			break;
		}
		size_t nt = fpl_tensor_count(tf);
		/* --tensor: each name must exist in every file */
		for (int k = 0; k < opt.ntensors && !rc; k++)
			if (fpl_tensor_find(tf, opt.tensors[k]) < 0)
				rc = no_tensor(tf, files[f], opt.tensors[k]);
		for (size_t i = 0; i < nt && !rc; i++) {
			if (!selected(tf, i))
				continue;
			memset(e, 0, sizeof *e);
			rc = classify_tensor(tf, i, files[f], nfiles > 1, e, cfg, xf, xd);
			if (!rc)
				rc = report_add(rp, e);
		}
		if (!rc && nt == 0)
			warning("%s: no tensors", input_name(files[f]));
		fpl_tensor_close(tf);
	}
	free(xf);
	free(xd);
	free(e);
	return rc;
}

/* --list: one row per tensor of every file (name, dtype, shape), read
 * from the headers only. */
static int list_tensors(char **files, int nfiles)
{
	static const char *const cols[] = { "file", "tensor", "dtype", "shape" };
	struct cli_table t;
	char shown[FPL_ESCAPED_NAME_MAX], shape[FPL_TENSOR_MAXDIM * 22 + 3];
	int rc = 0;

	cli_table_begin(&t, stdout, opt.report, cols, 4);
	for (int f = 0; f < nfiles && !rc; f++) {
		fpl_tensor_file *tf;
		char err[1024];

		if (fpl_tensor_open(&tf, files[f], &opt.topts, err, sizeof err)) {
			rc = error("%s", err);
			break;
		}
		for (size_t i = 0; i < fpl_tensor_count(tf); i++) {
			const fpl_tensor_info *in = fpl_tensor_get(tf, i);
			size_t k = 0;

			k += (size_t)snprintf(shape + k, sizeof shape - k, "[");
			for (int d = 0; d < in->ndim; d++)
				k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%llu", d ? ", " : "",
						      (unsigned long long)in->shape[d]);
			snprintf(shape + k, sizeof shape - k, "]");
			if (in->dtype == FPL_DT_TEXT)
				snprintf(shape, sizeof shape, "[?]");	/* known once read */
			cli_table_str(&t, input_name(files[f]));
			cli_table_str(&t, fpl_escape(shown, sizeof shown, in->name));
			cli_table_str(&t, fpl_dtype_name(in->dtype));
			cli_table_str(&t, shape);
		}
		fpl_tensor_close(tf);
	}
	cli_table_end(&t);
	return rc;
}

static void scaling_name(char *buf, size_t cap, fpl_hist_config *cfg)
{
	int k;

	if (opt.aps) {
		cfg->scaling = FPL_HSCALE_APS;
		snprintf(buf, cap, "aps");
	} else if (opt.ro.is_block) {
		snprintf(buf, cap, "block");	/* the scales are the format's */
	} else if (opt.scale == 1)
		snprintf(buf, cap, "none");
	else if (frexp(opt.scale, &k) == 0.5)
		snprintf(buf, cap, "2^%d", k - 1);
	else
		cli_shortest(buf, opt.scale);
}

int cmd_hist(int argc, char **argv)
{
	struct report rp;
	fpl_hist_config cfg;
	char scaling[64];
	int rc;

	memset(&rp, 0, sizeof rp);
	rc = parse_args(argc, argv);
	if (rc < 0) {
		free(opt.tensors);
		return usage_help(hist_usage);
	}
	if (rc) {
		free(opt.tensors);
		return rc;
	}
	if (opt.list) {
		static char *stdin_list[] = { "-" };
		rc = optind < argc ? list_tensors(argv + optind, argc - optind)
				   : list_tensors(stdin_list, 1);
		free(opt.tensors);
		return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	}
	fpl_hist_config_init(&cfg, &opt.ro.fmt);
	cfg.rnd = opt.ro.rnd;
	cfg.st = opt.ro.st;
	cfg.scale = opt.scale;
	scaling_name(scaling, sizeof scaling, &cfg);
	opt.topts.reread = opt.aps;	/* two passes: a pipe is spooled by the reader */
	rp.run.fmt = &opt.ro.fmt;
	rp.run.rnd = opt.ro.rnd;
	rp.run.scaling = scaling;
	rp.run.block = opt.ro.is_block ? &opt.ro.block : NULL;
	fpl_hist_block_init(&rp.btotal);
	rp.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	rc = fpl_hist_init(&rp.total, &cfg);
	if (rc) {
		free(opt.tensors);
		return error("%s", fpl_strerror(rc)), CLI_EXIT_FAIL;
	}
	fpl_hist_release(&rp.total);	/* merged into: no scratch needed */
	if (optind < argc)
		rc = collect(argv + optind, argc - optind, &rp, &cfg);
	else {
		static char *stdin_only[] = { "-" };	/* no FILE: standard input */
		rc = collect(stdin_only, 1, &rp, &cfg);
	}
	if (!rc) {
		report_end(&rp);
		rp.run.total = rp.ntensors > 1 ? &rp.total : NULL;
		rp.run.btotal = rp.ntensors > 1 ? &rp.btotal : NULL;
	}
	if (!rc && opt.svg) {
		struct cli_output o;
		if (cli_output_open(&o, opt.svg))
			rc = -1;
		else {
			hist_svg(o.fp, &rp.run);
			rc = cli_output_close(&o, 1);
		}
	}
	free(rp.run.e);
	free(opt.tensors);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
