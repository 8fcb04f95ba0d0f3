/* SPDX-License-Identifier: MIT */
/*
 * cli_report.c - the machine-readable reports shared by every command:
 * tables printed as aligned text, TSV (a header line, then rows) or JSON
 * (an array of objects), and JSON string literals.
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
	int i;

	memset(t, 0, sizeof *t);
	t->fp = fp;
	t->kind = kind;
	t->cols = cols;
	t->ncols = ncols;
	if (kind == CLI_REPORT_TSV) {
		for (i = 0; i < ncols; i++)
			fprintf(fp, "%s%c", cols[i], i + 1 < ncols ? '\t' : '\n');
	} else if (kind == CLI_REPORT_JSON) {
		fputc('[', fp);
	} else {
		for (i = 0; i < ncols; i++)
			cli_table_str(t, cols[i]);
	}
}

/* One cell, already text; `quote` for JSON strings. */
static void table_cell(struct cli_table *t, const char *s, int quote)
{
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
		fputs(t->col ? ", " : (t->rows ? ",\n {" : "\n {"), t->fp);
		cli_json_str(t->fp, t->cols[t->col]);
		fputs(": ", t->fp);
		if (quote)
			cli_json_str(t->fp, s);
		else
			fputs(s, t->fp);
		if (t->col + 1 == t->ncols)
			fputc('}', t->fp);
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

void cli_table_end(struct cli_table *t)
{
	size_t i, *width;
	int c;

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
