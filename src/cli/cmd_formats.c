/* SPDX-License-Identifier: MIT */
/*
 * cmd_formats.c - `fplab formats`: the catalogue of named formats, the
 * details of one format, or every code of a small format.
 *
 * Invariant: every figure printed comes from the engine's finished
 * descriptor (fpl_format_finish) or its codec, never from a table here.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char formats_usage[] =
	"usage: fplab formats [--blocks] [--tsv|--json]\n"
	"   or: fplab formats [--table] [--tsv|--json] [-f FORMAT] [--params P,EMIN,EMAX]\n"
	"    [--subnormal 0|1|ftz] [--saturation 0|1|2] [--infinity 0|1] [--explim 0|1]\n"
	"    [--tininess before|after] [NAME]\n";

enum { OPT_TABLE = CLI_OPT_CMD, OPT_BLOCKS };

static struct formats_opts {
	struct cli_round ro;
	int table;
	int blocks;		/* --blocks: the block formats only */
	enum cli_report report;
} opt;

/*
 * What an overflow gives, in words: "saturate" (every infinity too),
 * "saturate-keep-inf", "inf", or "nan" where the format has no infinity
 * ("nan (no infinity)" in text).
 */
static const char *overflow_name(const fpl_format *f, int text)
{
	if (f->specials == FPL_SPEC_NONE || f->overflow == FPL_OVF_SATURATE)
		return "saturate";
	if (f->overflow == FPL_OVF_SATURATE_KEEP_INF)
		return f->specials == FPL_SPEC_IEEE ? "saturate-keep-inf" : "saturate";
	if (f->specials != FPL_SPEC_IEEE)
		return text ? "nan (no infinity)" : "nan";
	return f->overflow == FPL_OVF_INF_ALWAYS ? "inf-always" : "inf";
}

/* bf16 resolved by name with the CLI's default: no subnormals. */
static int bf16_no_subnormals(const fpl_format *f)
{
	return !strcmp(f->name, "bf16") && f->subnormal != FPL_SUB_YES;
}

static const char bf16_note[] =
	"no subnormals by default, as in chop and CPFloat; PyTorch and ml_dtypes\n"
	"               bfloat16 have them: --subnormal 1 (min_subnormal 2^-133 = 9.18e-41)";

/*
 * The names q43/E4M3 mean three formats in three tools; print each with
 * its fplab spelling and its max, computed here from the spelling.
 */
static void e4m3_names(void)
{
	static const struct {
		const char *tool, *meaning, *spelling, *fmt;
		int p, emin, emax;	/* p = 0: by name */
	} rows[] = {
		{ "fplab, OCP, ml_dtypes", "OCP OFP8 E4M3, no inf", "-f e4m3fn (e4m3, q43, E4M3)",
		  "e4m3fn", 0, 0, 0 },
		{ "CPFloat", "E4M3 preset: p 4, emin -6, emax 8, inf", "--params 4,-6,8", NULL, 4,
		  -6, 8 },
		{ "chop", "q43: t 4, emax 7, IEEE-style", "--params 4,7 or -f e4m3ieee", NULL, 4,
		  -6, 7 },
	};
	size_t i;

	printf("%-14s q43 and E4M3 name different formats in different tools:\n", "names");
	for (i = 0; i < sizeof rows / sizeof *rows; i++) {
		fpl_format g;
		char a[CLI_VALUE_MAX];
		int rc = rows[i].fmt ? fpl_format_lookup(&g, rows[i].fmt)
				     : fpl_format_params(&g, rows[i].p, rows[i].emin, rows[i].emax);

		printf("  %-22s %-40s %-28s max %s\n", rows[i].tool, rows[i].meaning,
		       rows[i].spelling, rc ? "?" : cli_shortest(a, g.max));
	}
}

/* The catalogue entry of a canonical name, or NULL. */
static const fpl_format_entry *entry_of(const char *name)
{
	size_t n, i;
	const fpl_format_entry *cat = fpl_format_catalogue(&n);

	for (i = 0; i < n; i++)
		if (!strcmp(cat[i].name, name))
			return &cat[i];
	return NULL;
}

/* "a b c" -> "a,b,c" into buf. */
static char *commas(char *buf, size_t len, const char *aliases)
{
	size_t i;

	snprintf(buf, len, "%s", aliases ? aliases : "");
	for (i = 0; buf[i]; i++)
		if (buf[i] == ' ')
			buf[i] = ',';
	return buf;
}

static int list_catalogue(void)
{
	static const char *const cols[] = {
		"name", "aliases", "e", "m", "bias", "specials", "max", "min_normal",
		"min_subnormal", "epsilon"
	};
	struct cli_table t;
	size_t n, i;
	const fpl_format_entry *cat = fpl_format_catalogue(&n);
	char al[256];

	int marked = 0;

	cli_table_begin(&t, stdout, opt.report, cols, 10);
	for (i = 0; i < n; i++) {
		struct cli_round ro;
		fpl_format f;
		char sub[CLI_VALUE_MAX + 4];

		/* the same defaults as -f NAME (bf16 without subnormals), so that
		 * this row and `fplab formats NAME` agree */
		cli_round_init(&ro);
		ro.format_arg = cat[i].name;
		if (cli_round_finish(&ro))
			return error("catalogue format '%s' does not resolve", cat[i].name);
		f = ro.fmt;
		cli_table_str(&t, cat[i].name);
		cli_table_str(&t, commas(al, sizeof al, cat[i].aliases));
		cli_table_int(&t, f.e);
		cli_table_int(&t, f.m);
		cli_table_int(&t, f.bias);
		cli_table_str(&t, fpl_specials_name(f.specials));
		cli_table_num(&t, f.max);
		cli_table_num(&t, f.min_normal);
		if (opt.report == CLI_REPORT_TEXT && bf16_no_subnormals(&f)) {
			/* a mark for the footnote, in text only */
			char a[CLI_VALUE_MAX];

			snprintf(sub, sizeof sub, "%s *", cli_shortest(a, f.min_subnormal));
			cli_table_str(&t, sub);
			marked = 1;
		} else
			cli_table_num(&t, f.min_subnormal);
		cli_table_num(&t, f.epsilon);
	}
	cli_table_end(&t);
	if (marked)
		printf("* bf16: no subnormals by default, as in chop and CPFloat (min_subnormal is\n"
		       "  min_normal); PyTorch and ml_dtypes bfloat16 have them: --subnormal 1\n");
	return 0;
}

/* ---------------------------------------------- block formats */
static const char *const block_cols[] = {
	"name", "aliases", "element_format", "scale_format", "block_shape", "scale_rule",
	"bits_per_value", "source"
};
#define NBLOCK ((int)(sizeof block_cols / sizeof *block_cols))

/* The shape field of a block format's general spelling ("32", "16x16"). */
static const char *shape_of(const fpl_block_format *b, char *buf, size_t len)
{
	char spec[2 * FPL_BLOCK_NAME_MAX];
	char *p, *q;

	fpl_block_spec(b, spec, sizeof spec);
	p = strchr(spec, ':');
	p = p ? strchr(p + 1, ':') : NULL;
	p = p ? strchr(p + 1, ':') : NULL;	/* block:ELEM:SCALE:^SHAPE:RULE */
	q = p ? strchr(p + 1, ':') : NULL;
	if (q)
		*q = 0;
	snprintf(buf, len, "%s", p ? p + 1 : "?");
	return buf;
}

/* The row of one block format; en NULL for one given by its spelling. */
static void block_row(struct cli_table *t, const fpl_block_format *b, const fpl_block_entry *en)
{
	char sh[64], rule[32];

	snprintf(rule, sizeof rule, "%s%s%s", fpl_block_rule_name(b->rule),
		 b->tensor_scale ? "+ts" : "", b->quot == FPL_BQUOT_FP32 ? "+q32" : "");
	cli_table_str(t, b->name);
	cli_table_str(t, en ? en->aliases : "");
	cli_table_str(t, b->elem.name);
	cli_table_str(t, b->scale.name);
	cli_table_str(t, shape_of(b, sh, sizeof sh));
	cli_table_str(t, rule);
	if (fpl_block_bits(b, NULL, 0) > 0)
		cli_table_num(t, fpl_block_bits(b, NULL, 0));
	else
		cli_table_none(t);	/* row, col, tensor: depends on the tensor */
	cli_table_str(t, en ? en->source : "");
}

static int list_blocks(void)
{
	struct cli_table t;
	size_t n, i;
	const fpl_block_entry *cat = fpl_block_catalogue(&n);

	cli_table_begin(&t, stdout, opt.report, block_cols, NBLOCK);
	for (i = 0; i < n; i++) {
		fpl_block_format b;

		if (fpl_block_parse(&b, cat[i].name, NULL, 0))
			return error("catalogue block format '%s' does not resolve", cat[i].name);
		block_row(&t, &b, &cat[i]);
	}
	cli_table_end(&t);
	if (opt.report == CLI_REPORT_TEXT)
		printf("bits_per_value counts the block scales (nvfp4: plus 32 bits per tensor); "
		       "see fplab-formats(5)\n");
	return 0;
}

static void block_details(const fpl_block_format *b)
{
	const fpl_block_entry *en = NULL;
	char spec[2 * FPL_BLOCK_NAME_MAX];
	size_t n, i;
	const fpl_block_entry *cat = fpl_block_catalogue(&n);
	struct cli_table t;

	for (i = 0; i < n; i++)
		if (!strcmp(cat[i].name, b->name))
			en = &cat[i];
	if (opt.report != CLI_REPORT_TEXT) {
		cli_table_begin(&t, stdout, opt.report, block_cols, NBLOCK);
		block_row(&t, b, en);
		cli_table_end(&t);
		return;
	}
	fpl_block_spec(b, spec, sizeof spec);
	printf("%-14s %s\n%-14s %s\n", "name", b->name, "spelling", spec);
	printf("%-14s %s%s\n%-14s %s\n", "element", b->elem.name,
	       b->elem_int ? " (MXINT8: int8 k, value k * 2^-6)" : "", "scale", b->scale.name);
	printf("%-14s %s\n", "rule", fpl_block_rule_name(b->rule));
	printf("%-14s %s\n", "tensor_scale", b->tensor_scale ? "fp32 per tensor" : "none");
	printf("%-14s %s\n", "quotient",
	       b->quot == FPL_BQUOT_FP32 ? "binary32 first (q32)" : "exact, rounded once");
	if (fpl_block_bits(b, NULL, 0) > 0)
		printf("%-14s %g\n", "bits_per_value", fpl_block_bits(b, NULL, 0));
	if (en)
		printf("%-14s %s\n", "source", en->source);
}

static const char *const detail_cols[] = {
	"name", "aliases", "e", "m", "p", "bias", "nbits", "emin", "emax", "subnormal_mode",
	"daz", "specials", "overflow_result", "tininess", "nan_rule", "explim", "max", "min_normal",
	"min_subnormal", "epsilon", "source"
};
#define NDETAIL ((int)(sizeof detail_cols / sizeof *detail_cols))

static void details(const fpl_format *f)
{
	const fpl_format_entry *en = entry_of(f->name);
	struct cli_table t;
	char al[256];

	if (opt.report == CLI_REPORT_TEXT) {
		/* "key  value" lines instead of a one-row table */
		char a[CLI_VALUE_MAX], h[CLI_VALUE_MAX];

		printf("%-14s %s\n", "name", f->name);
		printf("%-14s %s\n", "aliases", en ? commas(al, sizeof al, en->aliases) : "");
		printf("%-14s %d\n%-14s %d\n%-14s %d\n%-14s %d\n%-14s %d\n", "e", f->e, "m", f->m,
		       "p", f->m + 1, "bias", f->bias, "nbits", f->nbits);
		printf("%-14s %d\n%-14s %d\n", "emin", f->emin, "emax", f->emax);
		printf("%-14s %s\n%-14s %d\n", "subnormal", fpl_subnormal_name(f->subnormal),
		       "daz", f->daz);
		printf("%-14s %s\n%-14s %s\n", "specials", fpl_specials_name(f->specials),
		       "overflow", overflow_name(f, 1));
		printf("%-14s %s\n%-14s %s\n%-14s %d\n", "tininess",
		       f->tininess == FPL_TINY_BEFORE ? "before" : "after", "nan",
		       fpl_nan_rule_name(f->nan_rule), "explim", f->explim);
		printf("%-14s %s (%s)\n", "max", cli_shortest(a, f->max),
		       cli_value_str(h, f->max, CLI_OUT_HEX, f));
		printf("%-14s %s (%s)\n", "min_normal", cli_shortest(a, f->min_normal),
		       cli_value_str(h, f->min_normal, CLI_OUT_HEX, f));
		printf("%-14s %s (%s)\n", "min_subnormal", cli_shortest(a, f->min_subnormal),
		       cli_value_str(h, f->min_subnormal, CLI_OUT_HEX, f));
		printf("%-14s %s (%s)\n", "epsilon", cli_shortest(a, f->epsilon),
		       cli_value_str(h, f->epsilon, CLI_OUT_HEX, f));
		if (en && en->source && *en->source)
			printf("%-14s %s\n", "source", en->source);
		if (bf16_no_subnormals(f) && opt.ro.subnormal < 0)
			printf("%-14s %s\n", "note", bf16_note);
		if (en && (!strcmp(f->name, "e4m3fn") || !strcmp(f->name, "e4m3ieee")))
			e4m3_names();
		return;
	}
	cli_table_begin(&t, stdout, opt.report, detail_cols, NDETAIL);
	cli_table_str(&t, f->name);
	cli_table_str(&t, en ? commas(al, sizeof al, en->aliases) : "");
	cli_table_int(&t, f->e);
	cli_table_int(&t, f->m);
	cli_table_int(&t, f->m + 1);
	cli_table_int(&t, f->bias);
	cli_table_int(&t, f->nbits);
	cli_table_int(&t, f->emin);
	cli_table_int(&t, f->emax);
	cli_table_str(&t, fpl_subnormal_name(f->subnormal));
	cli_table_int(&t, f->daz);
	cli_table_str(&t, fpl_specials_name(f->specials));
	cli_table_str(&t, overflow_name(f, 0));
	cli_table_str(&t, f->tininess == FPL_TINY_BEFORE ? "before" : "after");
	cli_table_str(&t, fpl_nan_rule_name(f->nan_rule));
	cli_table_int(&t, f->explim);
	cli_table_num(&t, f->max);
	cli_table_num(&t, f->min_normal);
	cli_table_num(&t, f->min_subnormal);
	cli_table_num(&t, f->epsilon);
	cli_table_str(&t, en && en->source ? en->source : "");
	cli_table_end(&t);
}

static int code_table(const fpl_format *f)
{
	static const char *const cols[] = { "code", "value", "hex", "class" };
	struct cli_table t;
	uint64_t c, ncodes;

	if (f->nbits > 16)
		return usage_error(NULL, "--table: format '%s' has %d bits; at most 16 are listed",
				   f->name, f->nbits);
	ncodes = (uint64_t)1 << f->nbits;
	if (opt.report == CLI_REPORT_TEXT) {
		/* no alignment buffering for up to 65536 rows: fixed widths */
		char v[CLI_VALUE_MAX], h[CLI_VALUE_MAX], b[CLI_VALUE_MAX];

		printf("%-8s %-24s %-24s %s\n", "code", "value", "hex", "class");
		for (c = 0; c < ncodes; c++) {
			double x = fpl_decode(f, c);

			cli_code_str(b, f, c);
			printf("%-8s %-24s %-24s %s\n", b, cli_shortest(v, x),
			       cli_value_str(h, x, CLI_OUT_HEX, f), fpl_class_name(fpl_classify(f, x)));
		}
		return 0;
	}
	cli_table_begin(&t, stdout, opt.report, cols, 4);
	for (c = 0; c < ncodes; c++) {
		double x = fpl_decode(f, c);
		char b[CLI_VALUE_MAX], h[CLI_VALUE_MAX];

		cli_code_str(b, f, c);
		cli_table_str(&t, b);
		cli_table_num(&t, x);
		cli_table_str(&t, cli_value_str(h, x, CLI_OUT_HEX, f));
		cli_table_str(&t, fpl_class_name(fpl_classify(f, x)));
	}
	cli_table_end(&t);
	return 0;
}

int cmd_formats(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "blocks", no_argument, NULL, OPT_BLOCKS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc, any_format_opt = 0;

	memset(&opt, 0, sizeof opt);
	optind = 0;
	cli_round_init(&opt.ro);
	opt.ro.block_ok = 1;
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "h", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(formats_usage, NULL);
		if (rc > 0) {
			any_format_opt = 1;
			continue;
		}
		if (cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return usage_help(formats_usage);
		case OPT_TABLE:
			opt.table = 1;
			break;
		case OPT_BLOCKS:
			opt.blocks = 1;
			break;
		default:
			return usage_error(formats_usage, NULL);
		}
	}
	if (argc - optind > 1)
		return usage_error(formats_usage, "too many arguments");
	if (argc - optind == 1) {
		if (opt.ro.format_arg)
			return usage_error(formats_usage, "give the format as NAME or -f, not both");
		opt.ro.format_arg = argv[optind];
		any_format_opt = 1;
	}
	if (opt.blocks && (any_format_opt || opt.table))
		return usage_error(formats_usage, "--blocks lists the block formats; it takes no "
				   "format");
	if (opt.blocks)
		return list_blocks() ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (!any_format_opt && !opt.table) {
		/* text: the plain formats, then the block formats; a
		 * machine-readable report is one table: --blocks for the others */
		if (list_catalogue())
			return CLI_EXIT_FAIL;
		if (opt.report == CLI_REPORT_TEXT) {
			printf("\nblock formats (fplab formats --blocks):\n");
			if (list_blocks())
				return CLI_EXIT_FAIL;
		}
		return CLI_EXIT_OK;
	}
	rc = cli_round_finish(&opt.ro);
	if (rc == -2)
		return usage_error(formats_usage, NULL);
	if (rc)
		return CLI_EXIT_FAIL;
	if (opt.ro.is_block && opt.table)
		return usage_error(formats_usage, "--table: '%s' is a block format; list its "
				   "element format's codes with --table -f %s", opt.ro.block.name,
				   opt.ro.block.elem_int ? "e1m6" : opt.ro.block.elem.name);
	if (opt.ro.is_block) {
		block_details(&opt.ro.block);
		return CLI_EXIT_OK;
	}
	if (opt.table)
		return code_table(&opt.ro.fmt);
	details(&opt.ro.fmt);
	return CLI_EXIT_OK;
}
