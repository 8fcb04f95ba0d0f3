/* SPDX-License-Identifier: MIT */
/*
 * cli_input.c - reading numbers: text (several per line, with file and
 * line in every message) and binary or .npy input streamed in chunks.
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
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


#include "cli/cli.h"

/* A file name as messages show it (control characters escaped; a very
 * long one cut), "stdin" for NULL or "-". */
#define SHOWN_MAX 1024
static const char *shown_name(char *buf, const char *path)
{
	return fpl_escape(buf, SHOWN_MAX, path && strcmp(path, "-") ? path : "stdin");
}

/* -------------------------------------------------------- text input */
fpl_dtype cli_text_dtype;

int cli_text_open(struct cli_text *t, const char *path)
{
	char sh[SHOWN_MAX];

	if (cli_text_dtype != FPL_DT_UNKNOWN)	/* --dtype is never ignored */
		return error("%s: --dtype applies to .npy/.npz files of raw codes, not to text",
			     shown_name(sh, path));
	memset(t, 0, sizeof *t);
	if (!path || !strcmp(path, "-")) {
		t->fp = stdin;
		return 0;
	}
	t->name = path;
	t->fp = fopen(path, "r");
	if (!t->fp)
		return error("cannot open '%s': %s", shown_name(sh, path), strerror(errno));
	t->own = 1;
	return 0;
}

void cli_text_release(struct cli_text *t)
{
	if (t->own && t->fp)
		fclose(t->fp);
	free(t->buf);
	free(t->inexact.v);
	memset(t, 0, sizeof *t);
}

/* Append {pos, *w} to the list.  Returns 0 or -1 (message printed). */
static int inexact_add(struct cli_inexact_list *l, size_t pos, const fpl_wide *w)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		fpl_inexact *v = realloc(l->v, cap * sizeof *v);

		if (!v)
			return error("out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].pos = pos;
	l->v[l->n].w = *w;
	l->n++;
	return 0;
}

static int text_where(const struct cli_text *t, char *buf, size_t len)
{
	char sh[SHOWN_MAX];

	if (t->name)
		return snprintf(buf, len, "%s: line %ld", shown_name(sh, t->name), t->line);
	return snprintf(buf, len, "stdin: line %ld", t->line);
}

static int empty_field(const struct cli_text *t)
{
	char where[SHOWN_MAX + 64];

	text_where(t, where, sizeof where);
	return error("%s: empty field", where);
}

/* Parse the numbers of t->pos (a NUL-terminated rest of the line) into
 * vals, at most max; leaves t->pos at the rest, or NULL at the line's end.
 * Numbers are separated by blanks or one comma (CSV); an empty field
 * ("1,,2", a leading or trailing comma) is an error naming the line. */
static int text_tokens(struct cli_text *t, double *vals, size_t max, size_t *n)
{
	static const char blanks[] = " \t\r\n\v\f";
	static const char seps[] = " \t\r\n\v\f,";
	char where[SHOWN_MAX + 64];
	char *p = t->pos;
	size_t k = 0;
	fpl_wide w;
	int rc;

	for (;;) {
		char *tok, save;
		size_t len;

		p += strspn(p, blanks);
		if (!*p) {
			t->pos = NULL;
			break;
		}
		if (*p == ',')
			return empty_field(t);
		if (k == max) {
			t->pos = p;
			break;
		}
		tok = p;
		len = strcspn(p, seps);
		save = p[len];
		p[len] = 0;
		rc = fpl_parse_number(tok, &vals[k], &w);
		if (rc < 0) {
			char shown[4 * 40 + 1];

			text_where(t, where, sizeof where);
			if (len > 40)
				tok[40] = 0;
			fpl_escape(shown, sizeof shown, tok);
			return error("%s: '%s%s' is not a number", where, shown, len > 40 ? "..." : "");
		}
		if (rc > 0 && inexact_add(&t->inexact, k, &w))
			return -1;
		p[len] = save;
		p += len;
		k++;
		p += strspn(p, blanks);
		if (*p == ',') {	/* one separator: a field must follow */
			p++;
			p += strspn(p, blanks);
			if (!*p || *p == ',')
				return empty_field(t);
		}
	}
	*n = k;
	t->partial = t->pos != NULL;
	return 0;
}

int cli_text_line(struct cli_text *t, double *vals, size_t max, size_t *n)
{
	char where[SHOWN_MAX + 64], sh[SHOWN_MAX];
	ssize_t len;

	*n = 0;
	t->inexact.n = 0;
	if (t->pos)
		return text_tokens(t, vals, max, n) ? -1 : 1;
	for (;;) {
		char *p;

		errno = 0;
		len = getline(&t->buf, &t->cap, t->fp);
		if (len < 0) {
			if (ferror(t->fp))
				return error("read error on '%s': %s", shown_name(sh, t->name),
					     strerror(errno ? errno : EIO));
			t->partial = 0;
			return 0;
		}
		t->line++;
		if ((size_t)len != strlen(t->buf)) {
			text_where(t, where, sizeof where);
			return error("%s: NUL byte in text input (binary file? use --in)", where);
		}
		p = strchr(t->buf, '#');
		if (p)
			*p = 0;
		t->pos = t->buf;
		if (text_tokens(t, vals, max, n))
			return -1;
		if (*n)
			return 1;
	}
}

/* ------------------------------------------------------ binary input */
static const char *const in_names[] = {
	"text", "f64", "f32", "f16", "bf16", "npy", "codes"
};

int cli_in_parse(const char *s, enum cli_in_kind *out)
{
	int i = cli_name_index("input kind", s, in_names, sizeof in_names / sizeof *in_names);

	if (i < 0)
		return -2;
	*out = (enum cli_in_kind)i;
	return 0;
}

static size_t code_bytes(const fpl_format *f)
{
	return f->nbits <= 8 ? 1 : f->nbits <= 16 ? 2 : f->nbits <= 32 ? 4 : 8;
}

static size_t in_elem_size(const struct cli_reader *r)
{
	switch (r->kind) {
	case CLI_IN_F64: return 8;
	case CLI_IN_F32: return 4;
	case CLI_IN_F16:
	case CLI_IN_BF16: return 2;
	case CLI_IN_CODES: return code_bytes(r->codes_fmt);
	default: return 0;
	}
}

int cli_dtype_parse(const char *s, fpl_dtype *out)
{
	static const char *const names[] = { "f64", "f32", "f16", "bf16", "e4m3fn", "e5m2" };
	char sh[SHOWN_MAX];

	if (!fpl_dtype_parse(s, out) && *out != FPL_DT_TEXT && !fpl_dtype_is_int(*out))
		return 0;
	fpl_escape(sh, sizeof sh, s);
	if (!cli_closest(s, names, 6))
		error("unknown dtype '%s'; the dtypes are f64 f32 f16 bf16 e4m3fn e5m2", sh);
	else
		cli_unknown("dtype", sh, names, 6);
	return -2;
}

int cli_in_dtype_parse(const char *s, fpl_dtype *out)
{
	static const char *const names[] = { "f64", "f32", "f16", "bf16", "e4m3fn", "e5m2",
					     "int8", "int16", "int32", "int64", "uint8", "uint16",
					     "uint32", "uint64" };
	char sh[SHOWN_MAX];

	if (!fpl_dtype_parse(s, out) && *out != FPL_DT_TEXT)
		return 0;
	fpl_escape(sh, sizeof sh, s);
	if (!cli_closest(s, names, 14))
		error("unknown dtype '%s'; the dtypes are f64 f32 f16 bf16 e4m3fn e5m2 and the "
		      "integers int8 int16 int32 int64 uint8 uint16 uint32 uint64", sh);
	else
		cli_unknown("dtype", sh, names, 14);
	return -2;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n > k && !strcasecmp(s + n - k, suf);
}

int cli_is_tensor_file(const char *path)
{
	unsigned char m[9];
	struct stat sb;
	FILE *fp;
	size_t k;

	if (!path || !strcmp(path, "-") || stat(path, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	if (has_suffix(path, ".npy") || has_suffix(path, ".npz") ||
	    has_suffix(path, ".safetensors"))
		return 1;
	fp = fopen(path, "rb");
	if (!fp)
		return 0;	/* the reader says why */
	k = fread(m, 1, sizeof m, fp);
	fclose(fp);
	if (k >= 6 && !memcmp(m, "\x93NUMPY", 6))
		return 1;
	if (k >= 4 && !memcmp(m, "PK\x03\x04", 4))
		return 1;
	/* safetensors: a little-endian u64 header length, then '{' */
	return k == 9 && m[8] == '{' && !m[7] && !m[6] && !m[5];
}

/* The walk of both: C order index j against storage index off; to_c
 * picks the direction of the copy. */
static void fortran_walk(double *dst, const double *src, int ndim, const uint64_t *shape,
			 int to_c)
{
	uint64_t idx[FPL_TENSOR_MAXDIM] = { 0 }, stride[FPL_TENSOR_MAXDIM], n = 1, off = 0, j;
	int d;

	for (d = 0; d < ndim; d++) {
		stride[d] = n;	/* column-major: the first index varies fastest */
		n *= shape[d];
	}
	/* walk the C order (last index fastest), keeping off = storage index */
	for (j = 0; j < n; j++) {
		if (to_c)
			dst[j] = src[off];
		else
			dst[off] = src[j];
		for (d = ndim - 1; d >= 0; d--) {
			off += stride[d];
			if (++idx[d] < shape[d])
				break;
			off -= stride[d] * shape[d];
			idx[d] = 0;
		}
	}
}

void cli_fortran_to_c(double *dst, const double *src, int ndim, const uint64_t *shape)
{
	fortran_walk(dst, src, ndim, shape, 1);
}

void cli_c_to_fortran(double *dst, const double *src, int ndim, const uint64_t *shape)
{
	fortran_walk(dst, src, ndim, shape, 0);
}

/* Open the stream of tensor r->ti of r->tf; 0 or -1 (message printed). */
static int tensor_next(struct cli_reader *r)
{
	char err[1024];
	int rc;

	if (r->ts)
		fpl_tensor_stream_close(r->ts);
	r->ts = NULL;
	err[0] = 0;
	rc = fpl_tensor_stream_open(&r->ts, r->tf, r->ti, err, sizeof err);
	if (rc)
		return error("%s", err[0] ? err : fpl_strerror(rc));
	r->info = fpl_tensor_get(r->tf, r->ti);
	return 0;
}

int cli_reader_open(struct cli_reader *r, const char *path, enum cli_in_kind kind,
		    const fpl_format *codes_fmt, fpl_dtype npy_dtype)
{
	char err[1024];
	int rc;

	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->codes_fmt = codes_fmt;
	r->name = (path && strcmp(path, "-")) ? path : NULL;
	if (kind == CLI_IN_TEXT && !cli_is_tensor_file(path))
		return cli_text_open(&r->text, path);
	if (kind == CLI_IN_TEXT || kind == CLI_IN_NPY) {
		fpl_tensor_opts o;

		if (!r->name)
			return error("--in npy needs a file name, not stdin");
		memset(&o, 0, sizeof o);
		o.kind = kind == CLI_IN_NPY ? FPL_TK_NPY : FPL_TK_AUTO;
		o.dtype = npy_dtype;
		r->kind = CLI_IN_NPY;
		err[0] = 0;
		rc = fpl_tensor_open(&r->tf, path, &o, err, sizeof err);
		if (rc) {
			error("%s", err[0] ? err : fpl_strerror(rc));
			cli_reader_release(r);
			return -1;
		}
		if (!fpl_tensor_count(r->tf)) {
			char sh[SHOWN_MAX];

			error("'%s' holds no tensor", shown_name(sh, path));
			cli_reader_release(r);
			return -1;
		}
		if (tensor_next(r)) {
			cli_reader_release(r);
			return -1;
		}
		return 0;
	}
	if (!r->name) {
		r->fp = stdin;
		return 0;
	}
	r->fp = fopen(path, "rb");
	if (!r->fp) {
		char sh[SHOWN_MAX];

		return error("cannot open '%s': %s", shown_name(sh, path), strerror(errno));
	}
	r->own = 1;
	return 0;
}

/* Binary16 and bfloat16 bit patterns to binary64, exactly. */
static double half_to_double(unsigned h)
{
	unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31) {
		if (!m)
			return s ? -INFINITY : INFINITY;
		{
			uint64_t b = ((uint64_t)s << 63) | (0x7ffULL << 52) | ((uint64_t)m << 42);

			memcpy(&v, &b, sizeof v);
			return v;
		}
	}
	v = e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
	return s ? -v : v;
}

/* Binary32 bits to binary64, bit for bit: a C float-to-double conversion
 * quietens a signalling NaN on x86, losing the invalid flag its use
 * raises, so NaNs are widened by hand (sign, payload into place). */
static double f32_bits_to_double(uint32_t b)
{
	float f;

	if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu)) {
		uint64_t d = (uint64_t)(b >> 31) << 63 | 0x7ffull << 52 | (uint64_t)(b & 0x7fffffu) << 29;
		double v;

		memcpy(&v, &d, sizeof v);
		return v;
	}
	memcpy(&f, &b, sizeof f);
	return (double)f;
}

static double bf16_to_double(unsigned h)
{
	return f32_bits_to_double((uint32_t)h << 16);
}

static uint64_t load_le(const unsigned char *p, size_t w)
{
	uint64_t v = 0;

	while (w--)
		v = (v << 8) | p[w];
	return v;
}

int cli_reader_read(struct cli_reader *r, double *buf, size_t cap, size_t *got)
{
	char err[1024];
	size_t w = in_elem_size(r), k, i;
	char sh[SHOWN_MAX];
	const char *name = shown_name(sh, r->name);
	int rc;

	*got = 0;
	r->inexact.n = 0;
	if (r->kind == CLI_IN_TEXT) {
		/* values in any layout: gather whole lines; a line is at most cap */
		while (*got < cap) {
			size_t n;

			rc = cli_text_line(&r->text, buf + *got, cap - *got, &n);
			if (rc < 0)
				return -1;
			if (rc == 0)
				break;
			for (i = 0; i < r->text.inexact.n; i++)
				if (inexact_add(&r->inexact, *got + r->text.inexact.v[i].pos,
						&r->text.inexact.v[i].w))
					return -1;
			*got += n;
		}
		r->done += *got;
		return 0;
	}
	if (r->kind == CLI_IN_NPY) {
		for (;;) {
			const fpl_inexact *v;
			size_t nv;

			err[0] = 0;
			rc = fpl_tensor_stream_read(r->ts, buf, cap, got, err, sizeof err);
			if (rc)
				return error("%s", err[0] ? err : fpl_strerror(rc));
			/* text through this path (--in npy never is): keep the
			 * exact numbers for fpl_round_wide */
			v = fpl_tensor_stream_inexact(r->ts, &nv);
			for (i = 0; i < nv; i++)
				if (inexact_add(&r->inexact, v[i].pos, &v[i].w))
					return -1;
			if (*got || r->ti + 1 >= fpl_tensor_count(r->tf))
				break;
			r->ti++;	/* next tensor of an .npz or .safetensors */
			if (tensor_next(r))
				return -1;
			if (r->on_tensor && r->on_tensor(r->on_tensor_ctx, r->info))
				return -1;
		}
		r->done += *got;
		return 0;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (r->kind == CLI_IN_F64) {
		/* the file's bytes are the values: read them in place */
		k = fread(buf, 1, cap * 8, r->fp);
		if (k < cap * 8 && ferror(r->fp))
			return error("read error on '%s': %s", name, strerror(errno ? errno : EIO));
		if (k % 8)
			return error("'%s': truncated: %zu trailing bytes after %llu elements of 8 bytes",
				     name, k % 8, (unsigned long long)(r->done + k / 8));
		*got = k / 8;
		r->done += *got;
		return 0;
	}
#endif
	if (r->rawcap < cap * w) {
		free(r->raw);
		r->raw = malloc(cap * w);
		if (!r->raw) {
			r->rawcap = 0;
			return error("out of memory");
		}
		r->rawcap = cap * w;
	}
	k = fread(r->raw, 1, cap * w, r->fp);
	if (k < cap * w && ferror(r->fp))
		return error("read error on '%s': %s", name, strerror(errno ? errno : EIO));
	if (k % w)
		return error("'%s': truncated: %zu trailing bytes after %llu elements of %zu bytes",
			     name, k % w, (unsigned long long)(r->done + k / w), w);
	k /= w;
	for (i = 0; i < k; i++) {
		const unsigned char *p = r->raw + i * w;
		uint64_t b = load_le(p, w);

		switch (r->kind) {
		case CLI_IN_F64:
			memcpy(&buf[i], &b, 8);
			break;
		case CLI_IN_F32:
			buf[i] = f32_bits_to_double((uint32_t)b);
			break;
		case CLI_IN_F16:
			buf[i] = half_to_double((unsigned)b);
			break;
		case CLI_IN_BF16:
			buf[i] = bf16_to_double((unsigned)b);
			break;
		default:
			if (r->codes_fmt->nbits < 64 && (b >> r->codes_fmt->nbits))
				return error("'%s': element %llu: code 0x%llx has more than %d bits",
					     name, (unsigned long long)(r->done + i),
					     (unsigned long long)b, r->codes_fmt->nbits);
			buf[i] = fpl_decode(r->codes_fmt, b);
			break;
		}
	}
	*got = k;
	r->done += k;
	return 0;
}

void cli_reader_release(struct cli_reader *r)
{
	if (r->kind == CLI_IN_TEXT)
		cli_text_release(&r->text);
	free(r->inexact.v);
	if (r->ts)
		fpl_tensor_stream_close(r->ts);
	if (r->tf)
		fpl_tensor_close(r->tf);
	if (r->own && r->fp)
		fclose(r->fp);
	free(r->raw);
	memset(r, 0, sizeof *r);
}
