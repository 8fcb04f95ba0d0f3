/* SPDX-License-Identifier: MIT */
/*
 * cmd_hist.c - `fplab hist`: how the values of tensor dumps fare in a
 * format: per tensor and in total, the counts of zeros, NaN/inf,
 * underflow, subnormal, normal and overflow, the cast's relative error,
 * the exponent histogram and the suggested power-of-two scales; as a
 * terminal chart, --tsv, --json, and --svg FILE.
 *
 * Invariant: every tensor is read and classified before anything is
 * printed, so a bad input (exit 1) leaves no partial report on stdout and
 * no SVG file; the SVG is written through cli_output (temporary + rename).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/hist_render.h"

#define CHUNK 65536	/* elements per read */

static const char hist_usage[] =
	"usage: fplab hist " CLI_ROUND_SYNOPSIS "\n"
	"    [--dtype DTYPE] [--offset N] [--count N] [--big-endian] [--tensor NAME]\n"
	"    [--scale S] [--loss-scale S] [--aps | --mx N] [--tsv|--json] [--svg FILE]\n"
	"    FILE...\n";

enum {
	OPT_DTYPE = CLI_OPT_CMD, OPT_OFFSET, OPT_COUNT, OPT_BIGEND, OPT_TENSOR, OPT_SCALE,
	OPT_LOSS, OPT_APS, OPT_MX, OPT_SVG
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const dtype_names[] = { "f64", "f32", "f16", "bf16", "e4m3fn", "e5m2",
						    "text" };
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
				cli_unknown("dtype", optarg, dtype_names, 7);
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
		case OPT_TENSOR:
			opt.tensors = realloc(opt.tensors, (size_t)(opt.ntensors + 1) * sizeof *opt.tensors);
			if (!opt.tensors)
				return error("out of memory"), CLI_EXIT_FAIL;
			opt.tensors[opt.ntensors++] = optarg;
			break;
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
			if (cli_parse_long(optarg, &l) || l < 1 || l > 4096)
				return usage_error(hist_usage, "--mx: block size '%s' is not in 1..4096",
						   optarg);
			opt.mx = (int)l;
			break;
		case OPT_SVG:
			opt.svg = optarg;
			break;
		default:
			return usage_error(hist_usage, NULL);
		}
	}
	if (opt.aps + (opt.mx > 0) + (opt.scale_arg || opt.loss_arg) > 1)
		return usage_error(hist_usage, "--aps, --mx and --scale/--loss-scale exclude each other");
	if (!isfinite(opt.scale) || opt.scale <= 0)
		return usage_error(hist_usage, "the product of --scale and --loss-scale is out of range");
	if (optind >= argc)
		return usage_error(hist_usage, "no input file");
	rc = cli_round_finish(&opt.ro);
	if (rc == -2)
		return usage_error(hist_usage, NULL);
	return rc ? CLI_EXIT_FAIL : 0;
}

/* One pass over tensor i: scan (APS) or classify. */
static int pass(fpl_tensor_file *tf, size_t i, fpl_hist *h, int scan, float *xf, double *xd)
{
	char err[1024];
	fpl_tensor_stream *s;
	const fpl_tensor_info *in = fpl_tensor_get(tf, i);
	int wide = in->dtype == FPL_DT_F64 || in->dtype == FPL_DT_TEXT;
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
				int r2 = wide ? fpl_hist_add(h, xd, got) : fpl_hist_add_f32(h, xf, got);
				if (r2) {
					fpl_tensor_stream_close(s);
					return error("tensor '%s': %s", in->name, fpl_strerror(r2));
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

static int classify_tensor(fpl_tensor_file *tf, size_t i, const char *path, int multi_file,
			   struct hist_entry *e, const fpl_hist_config *cfg, float *xf, double *xd)
{
	const fpl_tensor_info *in = fpl_tensor_get(tf, i);
	int rc;

	if (multi_file)
		snprintf(e->name, sizeof e->name, "%s:%s", path, in->name);
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
	if (fpl_hist_needs_scan(&e->h)) {
		if (!strcmp(path, "-"))
			rc = error("--aps reads the input twice: give a file, not stdin");
		else
			rc = pass(tf, i, &e->h, 1, xf, xd);
	}
	if (!rc)
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
		warning("%s: tensor '%s' is empty", path, in->name);
	return 0;
}

/* Read every selected tensor of every file. */
static int collect(char **files, int nfiles, struct hist_run *run, const fpl_hist_config *cfg)
{
	float *xf = malloc(CHUNK * sizeof *xf);
	double *xd = malloc(CHUNK * sizeof *xd);
	int rc = 0;

	if (!xf || !xd) {
		free(xf);
		free(xd);
		return error("out of memory");
	}
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
			if (fpl_tensor_find(tf, opt.tensors[k]) < 0) {
				const char **names = malloc((nt ? nt : 1) * sizeof *names);
				for (size_t i = 0; names && i < nt; i++)
					names[i] = fpl_tensor_get(tf, i)->name;
				error("%s: no tensor '%s'%s%s%s", files[f], opt.tensors[k],
				      names && cli_closest(opt.tensors[k], names, nt) ? "; did you mean '" : "",
				      names && cli_closest(opt.tensors[k], names, nt)
					      ? cli_closest(opt.tensors[k], names, nt) : "",
				      names && cli_closest(opt.tensors[k], names, nt) ? "'?" : "");
				free(names);
				rc = -1;
			}
		for (size_t i = 0; i < nt && !rc; i++) {
			if (opt.ntensors) {
				int want = 0;
				for (int k = 0; k < opt.ntensors; k++)
					want |= !strcmp(opt.tensors[k], fpl_tensor_get(tf, i)->name);
				if (!want)
					continue;
			}
			struct hist_entry *ne = realloc(run->e, (run->n + 1) * sizeof *ne);
			if (!ne) {
				rc = error("out of memory");
				break;
			}
			run->e = ne;
			memset(&run->e[run->n], 0, sizeof *ne);
			rc = classify_tensor(tf, i, files[f], nfiles > 1, &run->e[run->n], cfg, xf, xd);
			if (!rc)
				run->n++;
		}
		if (!rc && nt == 0)
			warning("%s: no tensors", files[f]);
		fpl_tensor_close(tf);
	}
	free(xf);
	free(xd);
	return rc;
}

/* ------------------------------------------------------------ --tsv */
static const char *const tsv_cols[] = {
	"tensor", "dtype", "count", "zeros", "nan_inf", "underflow", "subnormal", "normal",
	"overflow", "underflow_frac", "subnormal_frac", "overflow_frac", "err_max", "err_mean",
	"err_rms", "amax", "scale", "aps_log2", "best_log2"
};
#define NCOLS ((int)(sizeof tsv_cols / sizeof *tsv_cols))

static void row_values(const fpl_hist *h, double *v)
{
	v[0] = (double)h->count;
	v[1] = (double)h->zeros;
	v[2] = (double)h->nan_inf;
	v[3] = (double)h->underflow;
	v[4] = (double)h->subnormal;
	v[5] = (double)h->normal;
	v[6] = (double)h->overflow;
	v[7] = hist_frac(h->underflow, h->count);
	v[8] = hist_frac(h->subnormal, h->count);
	v[9] = hist_frac(h->overflow, h->count);
	v[10] = h->err_max;
	v[11] = h->err_n ? h->err_sum / (double)h->err_n : 0;
	v[12] = h->err_n ? sqrt(h->err_sumsq / (double)h->err_n) : 0;
	v[13] = h->amax;
}

static void scale_str(char *buf, size_t cap, const fpl_hist *h)
{
	if (h->scale_varies)
		snprintf(buf, cap, "%s", opt.mx ? "mx" : "varies");
	else if (h->scale_pow2)
		snprintf(buf, cap, "2^%d", h->scale_log2);
	else
		cli_shortest(buf, h->scale);
}

static void tsv_row(struct cli_table *t, const char *name, const char *dtype, const fpl_hist *h)
{
	double v[14];
	char s[CLI_VALUE_MAX];
	row_values(h, v);
	cli_table_str(t, name);
	cli_table_str(t, dtype);
	for (int i = 0; i < 7; i++)
		cli_table_int(t, (long long)v[i]);
	for (int i = 7; i < 14; i++)
		cli_table_num(t, v[i]);
	scale_str(s, sizeof s, h);
	cli_table_str(t, s);
	cli_table_int(t, h->aps_k);
	cli_table_int(t, h->best_k);
}

static void print_tsv(const struct hist_run *r)
{
	struct cli_table t;
	cli_table_begin(&t, stdout, CLI_REPORT_TSV, tsv_cols, NCOLS);
	for (size_t i = 0; i < r->n; i++)
		tsv_row(&t, r->e[i].name, fpl_dtype_name(r->e[i].dtype), &r->e[i].h);
	if (r->total)
		tsv_row(&t, "(total)", "-", r->total);
	cli_table_end(&t);
}

/* ------------------------------------------------------------ --json */
static void json_num(const char *key, double x, int comma)
{
	char s[CLI_VALUE_MAX];
	printf("\"%s\": ", key);
	if (isfinite(x))
		fputs(cli_shortest(s, x), stdout);
	else
		printf("\"%s\"", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
	if (comma)
		fputs(", ", stdout);
}

static void json_tensor(const char *name, const char *dtype, const struct hist_entry *e,
			const fpl_hist *h)
{
	double v[14];
	char s[CLI_VALUE_MAX];
	row_values(h, v);
	fputs("    {\"tensor\": ", stdout);
	cli_json_str(stdout, name);
	fputs(", \"dtype\": ", stdout);
	cli_json_str(stdout, dtype);
	fputs(", \"shape\": [", stdout);
	for (int i = 0; e && i < e->ndim; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)e->shape[i]);
	fputs("], ", stdout);
	for (int i = 0; i < 7; i++)
		printf("\"%s\": %llu, ", tsv_cols[2 + i], (unsigned long long)v[i]);
	for (int i = 7; i < 14; i++)
		json_num(tsv_cols[2 + i], v[i], 1);
	scale_str(s, sizeof s, h);
	fputs("\"scale\": ", stdout);
	cli_json_str(stdout, s);
	printf(", \"aps_log2\": %d, \"best_log2\": %d, \"best_loss_estimate\": %llu,\n",
	       h->aps_k, h->best_k, (unsigned long long)h->best_loss);
	printf("     \"bins\": {\"lo\": %d, \"hi\": %d, \"counts\": [", h->lo, h->hi);
	for (int b = h->lo; b <= h->hi; b++)
		printf("%s%llu", b > h->lo ? ", " : "",
		       (unsigned long long)h->hist[b - FPL_HIST_EMIN]);
	fputs("]}}", stdout);
}

static void print_json(const struct hist_run *r)
{
	const fpl_format *f = r->fmt;
	char a[CLI_VALUE_MAX], b[CLI_VALUE_MAX], c[CLI_VALUE_MAX];
	fputs("{\"format\": ", stdout);
	cli_json_str(stdout, f->name);
	printf(", \"mode\": \"%s\", \"scaling\": ", fpl_rnd_name(r->rnd));
	cli_json_str(stdout, r->scaling);
	printf(",\n \"range\": {\"min_subnormal\": %s, \"min_normal\": %s, \"max\": %s, "
	       "\"e_min_subnormal\": %d, \"e_min_normal\": %d, \"e_max\": %d},\n",
	       cli_shortest(a, f->min_subnormal), cli_shortest(b, f->min_normal),
	       cli_shortest(c, f->max), r->n ? r->e[0].h.e_minsub : 0,
	       r->n ? r->e[0].h.e_minnorm : 0, r->n ? r->e[0].h.e_max : 0);
	fputs(" \"tensors\": [\n", stdout);
	for (size_t i = 0; i < r->n; i++) {
		json_tensor(r->e[i].name, fpl_dtype_name(r->e[i].dtype), &r->e[i], &r->e[i].h);
		fputs(i + 1 < r->n ? ",\n" : "\n", stdout);
	}
	fputs(" ],\n \"total\":\n", stdout);
	json_tensor("(total)", "-", NULL, r->total ? r->total : (r->n ? &r->e[0].h : NULL));
	fputs("\n}\n", stdout);
}

int cmd_hist(int argc, char **argv)
{
	struct hist_run run = { 0 };
	fpl_hist_config cfg;
	fpl_hist total;
	char scaling[64];
	int rc;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(hist_usage);
	if (rc)
		return rc;
	fpl_hist_config_init(&cfg, &opt.ro.fmt);
	cfg.rnd = opt.ro.rnd;
	cfg.st = opt.ro.st;
	cfg.scale = opt.scale;
	if (opt.aps) {
		cfg.scaling = FPL_HSCALE_APS;
		snprintf(scaling, sizeof scaling, "aps");
	} else if (opt.mx) {
		cfg.scaling = FPL_HSCALE_MX;
		cfg.mx_block = opt.mx;
		snprintf(scaling, sizeof scaling, "mx%d", opt.mx);
	} else {
		int k;
		if (opt.scale == 1)
			snprintf(scaling, sizeof scaling, "none");
		else if (frexp(opt.scale, &k) == 0.5)
			snprintf(scaling, sizeof scaling, "2^%d", k - 1);
		else
			cli_shortest(scaling, opt.scale);
	}
	run.fmt = &opt.ro.fmt;
	run.rnd = opt.ro.rnd;
	run.scaling = scaling;

	rc = collect(argv + optind, argc - optind, &run, &cfg);
	if (!rc && run.n > 1) {
		if (fpl_hist_init(&total, &cfg))
			rc = error("out of memory");
		else {
			fpl_hist_release(&total);
			for (size_t i = 0; i < run.n; i++)
				fpl_hist_merge(&total, &run.e[i].h);
			run.total = &total;
		}
	}
	if (!rc && opt.svg) {
		struct cli_output o;
		if (cli_output_open(&o, opt.svg))
			rc = -1;
		else {
			hist_svg(o.fp, &run);
			rc = cli_output_close(&o, 1);
		}
	}
	if (!rc) {
		if (opt.report == CLI_REPORT_TSV)
			print_tsv(&run);
		else if (opt.report == CLI_REPORT_JSON)
			print_json(&run);
		else
			hist_chart(stdout, &run, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
	}
	free(run.e);
	free(opt.tensors);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
