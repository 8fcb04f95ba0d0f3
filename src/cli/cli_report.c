/* SPDX-License-Identifier: MIT */
/*
 * cli_report.c - the machine-readable reports shared by every command:
 * tables printed as aligned text, TSV (a header line, then rows), JSON
 * (an array of objects) or NDJSON (an object per line), JSON string
 * literals, and the error and event statistics every measuring command
 * reports under the same column names.
 *
 * Invariant: TSV and JSON rows are written as they come; only the aligned
 * text form buffers its cells, to size the columns.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* ------------------------------------------- machine-readable reports */
int cli_report_option(enum cli_report *kind, int c)
{
	switch (c) {
	case CLI_OPT_TSV: *kind = CLI_REPORT_TSV; return 1;
	case CLI_OPT_JSON: *kind = CLI_REPORT_JSON; return 1;
	case CLI_OPT_NDJSON: *kind = CLI_REPORT_NDJSON; return 1;
	default: return 0;
	}
}

void cli_json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

void cli_table_begin(struct cli_table *t, FILE *fp, enum cli_report kind,
		     const char *const *cols, int ncols)
{
	memset(t, 0, sizeof *t);
	t->fp = fp;
	t->kind = kind;
	t->cols = cols;
	t->ncols = ncols;
}

static void table_cell(struct cli_table *t, const char *s, int quote);

/* The header (TSV's column names, JSON's '[', TEXT's first row), written
 * with the first cell or at the end: a command that fails before its
 * first row leaves nothing on stdout. */
static void table_start(struct cli_table *t)
{
	int i;

	if (t->started)
		return;
	t->started = 1;
	if (t->kind == CLI_REPORT_TSV) {
		for (i = 0; i < t->ncols; i++)
			fprintf(t->fp, "%s%c", t->cols[i], i + 1 < t->ncols ? '\t' : '\n');
	} else if (t->kind == CLI_REPORT_JSON) {
		fputc('[', t->fp);
	} else if (t->kind == CLI_REPORT_TEXT) {
		for (i = 0; i < t->ncols; i++)
			table_cell(t, t->cols[i], 1);
	}
}

/* One cell, already text; `quote` for JSON strings. */
static void table_cell(struct cli_table *t, const char *s, int quote)
{
	table_start(t);
	if (t->kind == CLI_REPORT_TEXT) {
		if (t->ncells == t->capcells) {
			size_t nc = t->capcells ? 2 * t->capcells : 64;
			char **c = realloc(t->cells, nc * sizeof *c);

			if (!c)
				return;
			t->cells = c;
			t->capcells = nc;
		}
		t->cells[t->ncells++] = strdup(s);
	} else if (t->kind == CLI_REPORT_TSV) {
		fputs(s, t->fp);
		fputc(t->col + 1 < t->ncols ? '\t' : '\n', t->fp);
	} else {
		if (t->kind == CLI_REPORT_NDJSON)
			fputs(t->col ? ", " : "{", t->fp);
		else
			fputs(t->col ? ", " : (t->rows ? ",\n {" : "\n {"), t->fp);
		cli_json_str(t->fp, t->cols[t->col]);
		fputs(": ", t->fp);
		if (quote)
			cli_json_str(t->fp, s);
		else
			fputs(s, t->fp);
		if (t->col + 1 == t->ncols)
			fputs(t->kind == CLI_REPORT_NDJSON ? "}\n" : "}", t->fp);
	}
	if (++t->col == t->ncols) {
		t->col = 0;
		t->rows++;
	}
}

void cli_table_str(struct cli_table *t, const char *s)
{
	table_cell(t, s ? s : "", 1);
}

void cli_table_num(struct cli_table *t, double x)
{
	char buf[CLI_VALUE_MAX];

	cli_shortest(buf, x);
	table_cell(t, buf, !isfinite(x));
}

void cli_table_int(struct cli_table *t, long long v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", v);
	table_cell(t, buf, 0);
}

void cli_table_none(struct cli_table *t)
{
	table_cell(t, t->kind == CLI_REPORT_TEXT ? "-" : t->kind == CLI_REPORT_TSV ? "" : "null", 0);
}

void cli_table_num_or_none(struct cli_table *t, double x)
{
	if (isnan(x))
		cli_table_none(t);
	else
		cli_table_num(t, x);
}

void cli_table_abandon(struct cli_table *t)
{
	if (t->started) {
		cli_table_end(t);
		return;
	}
	free(t->cells);
	t->cells = NULL;
}

void cli_table_end(struct cli_table *t)
{
	size_t i, *width;
	int c;

	table_start(t);
	if (t->kind == CLI_REPORT_JSON) {
		fputs(t->rows ? "\n]\n" : "]\n", t->fp);
		return;
	}
	if (t->kind != CLI_REPORT_TEXT)
		return;
	width = calloc((size_t)t->ncols, sizeof *width);
	for (i = 0; width && i < t->ncells; i++) {
		size_t l = t->cells[i] ? strlen(t->cells[i]) : 0;

		c = (int)(i % (size_t)t->ncols);
		if (l > width[c])
			width[c] = l;
	}
	for (i = 0; i < t->ncells; i++) {
		const char *s = t->cells[i] ? t->cells[i] : "";

		c = (int)(i % (size_t)t->ncols);
		if (c + 1 == t->ncols || !width)
			fprintf(t->fp, "%s\n", s);
		else
			fprintf(t->fp, "%-*s  ", (int)width[c], s);
		free(t->cells[i]);
	}
	free(width);
	free(t->cells);
	t->cells = NULL;
	t->ncells = t->capcells = 0;
}

/* ------------------------------------------ error and event statistics */
const char *const cli_errstats_cols[CLI_ERRSTATS_NCOLS] = {
	"inexact", "underflow", "overflow", "saturated", "flushed", "invalid", "became_zero",
	"nan", "inf", "mean_rel_error", "rms_rel_error", "max_rel_error",
	"mean_abs_error", "rms_abs_error", "max_abs_error"
};

/* The engine's flag indices of the first six columns. */
static const int errstats_flag[6] = { 0, 1, 2, 5, 6, 4 };

static void add_abs(struct cli_errstats *s, double e)
{
	s->abs_n++;
	s->abs_sum += e;
	s->abs_sumsq += e * e;
	if (e > s->abs_max)
		s->abs_max = e;
}

static void add_rel(struct cli_errstats *s, double x, double rel)
{
	s->rel_n++;
	s->rel_sum += rel;
	s->rel_sumsq += rel * rel;
	if (rel > s->rel_max) {
		s->rel_max = rel;
		s->worst = x;
	}
}

/* A result y that is NaN or infinite: counted, and, where the exact
 * value is finite, an error of +inf (cli.h: a failed result never looks
 * accurate).  Returns 1 when y was such a result. */
static int add_failed(struct cli_errstats *s, double x, double y)
{
	if (isfinite(y))
		return 0;
	if (isnan(y))
		s->nan++;
	else
		s->inf++;
	if (isfinite(x)) {
		add_abs(s, INFINITY);
		add_rel(s, x, INFINITY);
	}
	return 1;
}

void cli_errstats_add_rel(struct cli_errstats *s, double xd, double y, double rel)
{
	/* x is finite and nonzero (a number binary64 cannot hold), though xd
	 * may be 0 or inf when x lies beyond binary64's range */
	s->n++;
	if (!isfinite(y)) {
		s->nan += isnan(y) != 0;
		s->inf += isinf(y) != 0;
		add_abs(s, INFINITY);
		add_rel(s, xd, INFINITY);
		return;
	}
	if (y == 0)
		s->became_zero++;
	/* x is within 2^-53 |xd| of xd: its abs error is rel |xd| */
	if (isfinite(xd))
		add_abs(s, rel * fabs(xd));
	add_rel(s, xd, rel);
}

void cli_errstats_add(struct cli_errstats *s, double x, double y)
{
	s->n++;
	if (add_failed(s, x, y) || !isfinite(x))
		return;
	add_abs(s, fabs(y - x));
	if (x == 0)
		return;
	if (y == 0)
		s->became_zero++;
	add_rel(s, x, fabs((y - x) / x));
}

void cli_errstats_merge(struct cli_errstats *to, const struct cli_errstats *from)
{
	to->n += from->n;
	to->became_zero += from->became_zero;
	to->nan += from->nan;
	to->inf += from->inf;
	to->rel_n += from->rel_n;
	to->abs_n += from->abs_n;
	to->rel_sum += from->rel_sum;
	to->rel_sumsq += from->rel_sumsq;
	to->abs_sum += from->abs_sum;
	to->abs_sumsq += from->abs_sumsq;
	if (from->rel_max > to->rel_max) {
		to->rel_max = from->rel_max;
		to->worst = from->worst;
	}
	if (from->abs_max > to->abs_max)
		to->abs_max = from->abs_max;
}

void cli_errstats_values(const struct cli_errstats *s, const uint64_t count[FPL_NFLAGS],
			 uint64_t ev[CLI_ERRSTATS_NEVENTS], double err[CLI_ERRSTATS_NERRORS])
{
	double rn = (double)s->rel_n, an = (double)s->abs_n;
	int i;

	for (i = 0; i < 6; i++)
		ev[i] = count[errstats_flag[i]];
	ev[6] = s->became_zero;
	ev[7] = s->nan;
	ev[8] = s->inf;
	/* no value over no values (NaN, an empty cell) */
	err[0] = s->rel_n ? s->rel_sum / rn : NAN;
	err[1] = s->rel_n ? sqrt(s->rel_sumsq / rn) : NAN;
	err[2] = s->rel_n ? s->rel_max : NAN;
	err[3] = s->abs_n ? s->abs_sum / an : NAN;
	err[4] = s->abs_n ? sqrt(s->abs_sumsq / an) : NAN;
	err[5] = s->abs_n ? s->abs_max : NAN;
}

void cli_errstats_cells(struct cli_table *t, const struct cli_errstats *s,
			const uint64_t count[FPL_NFLAGS])
{
	uint64_t ev[CLI_ERRSTATS_NEVENTS];
	double err[CLI_ERRSTATS_NERRORS];
	int i;

	cli_errstats_values(s, count, ev, err);
	for (i = 0; i < CLI_ERRSTATS_NEVENTS; i++)
		cli_table_int(t, (long long)ev[i]);
	for (i = 0; i < CLI_ERRSTATS_NERRORS; i++)
		cli_table_num_or_none(t, err[i]);
}

char *cli_flag_names(char *buf, size_t len, unsigned flags)
{
	size_t k = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < FPL_NFLAGS; i++)
		if (flags & (1u << i))
			k += (size_t)snprintf(buf + k, len > k ? len - k : 0, "%s%s", k ? "," : "",
					      fpl_flag_name(i));
	if (!k)
		snprintf(buf, len, "-");
	return buf;
}
