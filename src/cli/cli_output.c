/* SPDX-License-Identifier: MIT */
/*
 * cli_output.c - writing numbers and reports: value formatting (text,
 * hex, bits), atomic output files, binary/.npy writers and the --tsv /
 * --json report tables.
 *
 * Invariant: nothing here exits; every failure prints one message through
 * error() (or usage_error()) and returns a negative value.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "cli/cli.h"

/* ------------------------------------------------------- value output */
static const char *const out_names[] = { "text", "hex", "bits", "f64", "f32", "npy" };

int cli_out_parse(const char *s, enum cli_out_kind *out)
{
	int i = cli_name_index("output kind", s, out_names, sizeof out_names / sizeof *out_names);

	if (i < 0)
		return -2;
	*out = (enum cli_out_kind)i;
	return 0;
}

char *cli_shortest(char *buf, double x)
{
	char e[CLI_VALUE_MAX];
	int prec, ex;

	if (isnan(x))
		return strcpy(buf, "nan");
	if (isinf(x))
		return strcpy(buf, x < 0 ? "-inf" : "inf");
	/* fewest significant digits that read back exactly */
	for (prec = 1; prec < 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	snprintf(e, sizeof e, "%.*e", prec - 1, x);
	ex = atoi(strchr(e, 'e') + 1);
	/* plain notation for moderate exponents, as %g would choose */
	if (ex >= -4 && ex < 17)
		snprintf(buf, CLI_VALUE_MAX, "%.*f", prec - 1 - ex > 0 ? prec - 1 - ex : 0, x);
	else
		snprintf(buf, CLI_VALUE_MAX, "%s", e);
	return buf;
}

char *cli_value_str(char *buf, double x, enum cli_out_kind kind, const fpl_format *f)
{
	uint64_t c;

	switch (kind) {
	case CLI_OUT_HEX:
		if (isnan(x))
			return strcpy(buf, "nan");
		snprintf(buf, CLI_VALUE_MAX, "%a", x);
		return buf;
	case CLI_OUT_BITS:
		c = fpl_encode(f, x);
		if (c == FPL_CODE_NONE)
			return strcpy(buf, "none");
		return cli_code_str(buf, f, c);
	default:
		return cli_shortest(buf, x);
	}
}

char *cli_code_str(char *buf, const fpl_format *f, uint64_t c)
{
	static const char hex[] = "0123456789abcdef";
	int digits = (f->nbits + 3) / 4, i;

	if (digits < 1)
		digits = 1;
	if (digits > 16)
		digits = 16;
	buf[0] = '0';
	buf[1] = 'x';
	for (i = 0; i < digits; i++)
		buf[2 + i] = hex[(c >> (4 * (digits - 1 - i))) & 15];
	buf[2 + digits] = 0;
	return buf;
}

/* ------------------------------------------------------ atomic output */
int cli_output_open(struct cli_output *o, const char *path)
{
	int fd;

	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->fp = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		return error("out of memory");
	{
		struct stat sb;

		/* a device or FIFO (/dev/null, /dev/full, a pipe) is written in
		 * place: renaming over it would replace the node by a file */
		if (!stat(path, &sb) && !S_ISREG(sb.st_mode)) {
			o->fp = fopen(path, "wb");
			if (!o->fp) {
				error("cannot open '%s': %s", path, strerror(errno));
				free(o->path);
				o->path = NULL;
				return -1;
			}
			return 0;
		}
	}
	o->tmp = malloc(strlen(path) + 32);
	if (!o->tmp) {
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return error("out of memory");
	}
	sprintf(o->tmp, "%s.tmp-XXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(errno));
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return -1;
	}
	/* mkstemp makes 0600; give the usual umask-governed mode */
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	o->fp = fdopen(fd, "wb");
	if (!o->fp) {
		close(fd);
		unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return error("cannot create '%s': %s", path, strerror(errno));
	}
	return 0;
}

int cli_output_close(struct cli_output *o, int ok)
{
	int rc = 0;

	if (!o->fp)
		return ok ? 0 : -1;
	if (!o->path) {
		o->fp = NULL;
		return ok ? 0 : -1;
	}
	if (ok) {
		errno = 0;
		if (fflush(o->fp) || ferror(o->fp))
			rc = error("write error on '%s': %s", o->path, strerror(errno ? errno : EIO));
		if (fclose(o->fp) && !rc)
			rc = error("write error on '%s': %s", o->path, strerror(errno ? errno : EIO));
		if (!rc && o->tmp && rename(o->tmp, o->path))
			rc = error("cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
	} else {
		fclose(o->fp);
		rc = -1;
	}
	if (rc && o->tmp)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
	return rc;
}

int cli_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		return error("write error on stdout: %s", strerror(errno ? errno : EIO));
	return 0;
}

/* ------------------------------------------------------------ writer */
int cli_writer_open(struct cli_writer *w, const char *path, enum cli_out_kind kind,
		    const fpl_format *f, uint64_t known)
{
	memset(w, 0, sizeof *w);
	w->kind = kind;
	w->f = f;
	w->known = known;
	if (cli_output_open(&w->out, path))
		return -1;
	if (kind == CLI_OUT_NPY) {
		if (known == UINT64_MAX) {
			w->spool = tmpfile();
			if (!w->spool) {
				cli_output_close(&w->out, 0);
				return error("cannot create a temporary file: %s", strerror(errno));
			}
		} else if (fpl_npy_write_header(w->out.fp, FPL_DT_F64, known)) {
			cli_output_close(&w->out, 0);
			return error("write error on '%s': %s", path ? path : "stdout",
				     strerror(errno ? errno : EIO));
		}
	}
	return 0;
}

static int put_binary(struct cli_writer *w, FILE *fp, const double *v, size_t n)
{
	size_t es = w->kind == CLI_OUT_F32 ? 4 : 8, i;
	unsigned char *p;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (es == 8) {
		if (fwrite(v, 8, n, fp) != n)
			return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
				     strerror(errno ? errno : EIO));
		return 0;
	}
#endif
	if (w->bufcap < n * es) {
		free(w->buf);
		w->buf = malloc(n * es);
		w->bufcap = w->buf ? n * es : 0;
		if (!w->buf)
			return error("out of memory");
	}
	p = w->buf;
	for (i = 0; i < n; i++) {
		uint64_t b;
		size_t k;

		if (es == 4) {
			float fl = (float)v[i];
			uint32_t b32;

			memcpy(&b32, &fl, 4);
			b = b32;
		} else {
			memcpy(&b, &v[i], 8);
		}
		for (k = 0; k < es; k++)
			*p++ = (unsigned char)(b >> (8 * k));
	}
	if (fwrite(w->buf, es, n, fp) != n)
		return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
			     strerror(errno ? errno : EIO));
	return 0;
}

int cli_writer_put(struct cli_writer *w, const double *v, size_t n)
{
	char s[CLI_VALUE_MAX];
	size_t i;

	w->n += n;
	switch (w->kind) {
	case CLI_OUT_F64:
	case CLI_OUT_F32:
		return put_binary(w, w->out.fp, v, n);
	case CLI_OUT_NPY:
		return put_binary(w, w->spool ? w->spool : w->out.fp, v, n);
	default:
		for (i = 0; i < n; i++) {
			fputs(cli_value_str(s, v[i], w->kind, w->f), w->out.fp);
			fputc('\n', w->out.fp);
		}
		if (ferror(w->out.fp))
			return error("write error on '%s': %s",
				     w->out.path ? w->out.path : "stdout", strerror(errno ? errno : EIO));
		return 0;
	}
}

static int copy_spool(struct cli_writer *w)
{
	char buf[65536];
	size_t k;

	if (fflush(w->spool) || ferror(w->spool) || fseek(w->spool, 0, SEEK_SET))
		return error("temporary file: %s", strerror(errno ? errno : EIO));
	if (fpl_npy_write_header(w->out.fp, FPL_DT_F64, w->n))
		return error("write error on '%s': %s", w->out.path ? w->out.path : "stdout",
			     strerror(errno ? errno : EIO));
	while ((k = fread(buf, 1, sizeof buf, w->spool)) > 0)
		if (fwrite(buf, 1, k, w->out.fp) != k)
			return error("write error on '%s': %s",
				     w->out.path ? w->out.path : "stdout", strerror(errno ? errno : EIO));
	if (ferror(w->spool))
		return error("temporary file: %s", strerror(errno ? errno : EIO));
	return 0;
}

int cli_writer_close(struct cli_writer *w, int ok)
{
	int rc = 0;

	if (ok && w->kind == CLI_OUT_NPY) {
		if (w->spool)
			rc = copy_spool(w);
		else if (w->n != w->known)
			rc = error("internal: npy header announced %llu values, wrote %llu",
				   (unsigned long long)w->known, (unsigned long long)w->n);
	}
	if (w->spool)
		fclose(w->spool);
	free(w->buf);
	rc = cli_output_close(&w->out, ok && !rc) || rc ? -1 : 0;
	memset(w, 0, sizeof *w);
	return rc;
}

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
