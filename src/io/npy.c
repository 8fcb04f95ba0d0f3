/* SPDX-License-Identifier: MIT */
/*
 * npy.c - the .npy header (versions 1.0, 2.0, 3.0) and single-tensor
 * .npy files.
 *
 * Format (numpy/lib/format.py): "\x93NUMPY", major, minor, header length
 * (u16 LE for 1.x, u32 LE for 2.x/3.x), then a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
 * spaces and a newline; the data follow.  The literal is tiny and fixed,
 * so it is parsed here by hand rather than with a general parser.
 * Invariant: a header is accepted only if all three keys are present,
 * nothing else is, and the dtype is one fplab reads: a float or integer
 * descr, or raw codes ('<u2', '|u1', '|V1', ...) that the caller's dtype
 * names.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"

/* Largest header accepted (numpy itself refuses more than 10000 bytes by
 * default; be generous but bounded). */
#define NPY_HDR_MAX (1u << 20)

struct lex {
	const char *p, *end;
};

static void skip_ws(struct lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static int accept(struct lex *l, char c)
{
	skip_ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return 1;
	}
	return 0;
}

/* A quoted string ('...' or "...") without escapes into out. */
static int lex_string(struct lex *l, char *out, size_t cap)
{
	skip_ws(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return -1;
	char q = *l->p++;
	size_t n = 0;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' || n + 1 >= cap)
			return -1;
		out[n++] = *l->p++;
	}
	if (l->p >= l->end)
		return -1;
	l->p++;
	out[n] = 0;
	return 0;
}

static int lex_word(struct lex *l, const char *w)
{
	size_t n = strlen(w);
	skip_ws(l);
	if ((size_t)(l->end - l->p) >= n && memcmp(l->p, w, n) == 0) {
		l->p += n;
		return 1;
	}
	return 0;
}

/* (d0, d1, ...) with an optional trailing comma; () is a scalar. */
static int lex_shape(struct lex *l, fpl_tensor_info *info, char *err, size_t errlen)
{
	if (!accept(l, '('))
		return io_fail(err, errlen, FPL_EPARSE, "malformed header: shape is not a tuple");
	info->ndim = 0;
	while (!accept(l, ')')) {
		skip_ws(l);
		if (l->p >= l->end || !isdigit((unsigned char)*l->p))
			return io_fail(err, errlen, FPL_EPARSE,
				       "malformed header: bad dimension in shape");
		uint64_t v = 0;
		while (l->p < l->end && isdigit((unsigned char)*l->p)) {
			if (v > (UINT64_MAX - 9) / 10)
				return io_fail(err, errlen, FPL_EPARSE,
					       "malformed header: dimension too large");
			v = v * 10 + (uint64_t)(*l->p++ - '0');
		}
		/* Python 2 longs: 3L */
		if (l->p < l->end && *l->p == 'L')
			l->p++;
		if (info->ndim >= FPL_TENSOR_MAXDIM)
			return io_fail(err, errlen, FPL_EUNSUPPORTED,
				       "more than %d dimensions", FPL_TENSOR_MAXDIM);
		info->shape[info->ndim++] = v;
		if (!accept(l, ',')) {
			if (!accept(l, ')'))
				return io_fail(err, errlen, FPL_EPARSE,
					       "malformed header: unterminated shape");
			break;
		}
	}
	uint64_t c = 1;
	for (int i = 0; i < info->ndim; i++)
		if (io_mul_overflow(c, info->shape[i], &c))
			return io_fail(err, errlen, FPL_ERANGE, "shape too large");
	info->count = c;
	return 0;
}

/* The fplab dtypes a raw-code descr of `width` bytes may hold, for hints. */
static const char *raw_choices(size_t width)
{
	return width == 2 ? "bf16|f16|uint16" : "e4m3fn|e5m2|uint8";
}

/* May raw codes be read as dtype t?  A float of their width, or the
 * unsigned integer of their width (the codes are then integers). */
static int raw_fits(fpl_dtype t, size_t width)
{
	return fpl_dtype_size(t) == width && t != FPL_DT_I8 && t != FPL_DT_I16;
}

/* The dtype of numpy kind 'i' or 'u' of `width` bytes, or FPL_DT_UNKNOWN. */
static fpl_dtype int_dtype(char kind, char width)
{
	static const fpl_dtype si[] = { FPL_DT_I8, FPL_DT_I16, FPL_DT_I32, FPL_DT_I64 },
			       ui[] = { FPL_DT_U8, FPL_DT_U16, FPL_DT_U32, FPL_DT_U64 };
	int k = width == '1' ? 0 : width == '2' ? 1 : width == '4' ? 2 : width == '8' ? 3 : -1;
	if (k < 0)
		return FPL_DT_UNKNOWN;
	return kind == 'i' ? si[k] : kind == 'u' ? ui[k] : FPL_DT_UNKNOWN;
}

/*
 * descr such as '<f4', '>f8', '<i8', '|u1', '<V2'.  Floats and integers
 * ('i1' to 'i8', 'u4', 'u8') carry their dtype; '|u1', '<u2' and void of
 * 1 or 2 bytes are ambiguous: ml_dtypes and PyTorch save the raw codes of
 * a type numpy lacks so (bf16 as '<u2' or '|V2', fp8 as '|u1' or '|V1'),
 * and numpy saves uint8 and uint16 integers so.  `override` says which
 * (bf16, f16 or uint16; e4m3fn, e5m2 or uint8).  An override that does
 * not fit is FPL_EINVAL: another width, a signed integer for raw codes,
 * or another dtype than the descr's own.  Raw codes without one are
 * FPL_EUNSUPPORTED with a hint (an .npz lists such a member and refuses
 * it when read).
 */
static int parse_descr(const char *d, fpl_dtype override, fpl_tensor_info *info, char *err,
		       size_t errlen)
{
	char bo = d[0];
	if (bo != '<' && bo != '>' && bo != '|' && bo != '=')
		return io_fail(err, errlen, FPL_EUNSUPPORTED, "unsupported dtype '%s'", d);
	info->big_endian = bo == '>';
	const char *k = d + 1;
	fpl_dtype t = FPL_DT_UNKNOWN;
	size_t raw = 0;	/* bytes of a raw-code descr */
	if (strcmp(k, "f8") == 0)
		t = FPL_DT_F64;
	else if (strcmp(k, "f4") == 0)
		t = FPL_DT_F32;
	else if (strcmp(k, "f2") == 0)
		t = FPL_DT_F16;
	else if (strcmp(k, "V2") == 0 || strcmp(k, "u2") == 0)
		raw = 2;
	else if (strcmp(k, "V1") == 0 || strcmp(k, "u1") == 0)
		raw = 1;
	else if (strlen(k) == 2)
		t = int_dtype(k[0], k[1]);
	if (!raw && t == FPL_DT_UNKNOWN)
		return io_fail(err, errlen, FPL_EUNSUPPORTED, "unsupported dtype '%s'", d);
	size_t os = fpl_dtype_size(override);
	if (raw && override == FPL_DT_UNKNOWN)
		return io_fail(err, errlen, FPL_EUNSUPPORTED,
			       "dtype '%s' holds raw codes of a type numpy lacks or %s integers; "
			       "say which with --dtype %s", d, raw == 2 ? "uint16" : "uint8",
			       raw_choices(raw));
	if (raw && os != raw)
		return io_fail(err, errlen, FPL_EINVAL,
			       "--dtype %s is %zu byte%s but the file's '%s' is %zu",
			       fpl_dtype_name(override), os, os == 1 ? "" : "s", d, raw);
	if (raw && !raw_fits(override, raw))
		return io_fail(err, errlen, FPL_EINVAL,
			       "--dtype %s does not apply to the file's '%s': it holds %s",
			       fpl_dtype_name(override), d, raw_choices(raw));
	if (raw)
		t = override;
	else if (override != FPL_DT_UNKNOWN && override != t)
		return io_fail(err, errlen, FPL_EINVAL,
			       "--dtype %s does not apply: the file's '%s' is %s (--dtype names "
			       "what the raw codes of a '<u2', '|V2', '|u1' or '|V1' dtype hold)",
			       fpl_dtype_name(override), d, fpl_dtype_name(t));
	if (fpl_dtype_size(t) == 1)
		info->big_endian = 0;
	info->dtype = t;
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int io_npy_parse(const unsigned char *buf, size_t len, fpl_dtype override,
		 fpl_tensor_info *info, uint64_t *hdr_len, size_t *need, char *err, size_t errlen)
{
	*need = IO_NPY_PREFIX;
	if (len < 10)
		return io_fail(err, errlen, FPL_EPARSE, "truncated header (%zu bytes)", len);
	if (memcmp(buf, "\x93NUMPY", 6) != 0)
		return io_fail(err, errlen, FPL_EPARSE, "not an .npy file (bad magic)");
	int major = buf[6];
	size_t pre;
	uint64_t hl;
	if (major == 1) {
		pre = 10;
		hl = (uint64_t)buf[8] | (uint64_t)buf[9] << 8;
	} else if (major == 2 || major == 3) {
		pre = 12;
		if (len < 12)
			return io_fail(err, errlen, FPL_EPARSE, "truncated header (%zu bytes)", len);
		hl = le32(buf + 8);
	} else
		return io_fail(err, errlen, FPL_EUNSUPPORTED, "unsupported .npy version %d.%d",
			       major, buf[7]);
	if (hl > NPY_HDR_MAX)
		return io_fail(err, errlen, FPL_EPARSE, "header length %llu is implausible",
			       (unsigned long long)hl);
	*need = pre + (size_t)hl;
	if (len < *need)
		return io_fail(err, errlen, FPL_EPARSE,
			       "truncated header (%llu bytes announced, %zu present)",
			       (unsigned long long)hl, len - pre);
	*hdr_len = pre + hl;

	struct lex l = { (const char *)buf + pre, (const char *)buf + pre + hl };
	int have_descr = 0, have_fo = 0, have_shape = 0, fortran = 0;
	char descr[32], key[32];
	memset(info->shape, 0, sizeof info->shape);
	if (!accept(&l, '{'))
		return io_fail(err, errlen, FPL_EPARSE, "malformed header: no '{'");
	while (!accept(&l, '}')) {
		if (lex_string(&l, key, sizeof key) < 0 || !accept(&l, ':'))
			return io_fail(err, errlen, FPL_EPARSE, "malformed header: bad key");
		if (strcmp(key, "descr") == 0 && !have_descr) {
			skip_ws(&l);
			if (l.p < l.end && *l.p == '[')
				return io_fail(err, errlen, FPL_EUNSUPPORTED,
					       "unsupported dtype: structured array");
			if (lex_string(&l, descr, sizeof descr) < 0)
				return io_fail(err, errlen, FPL_EPARSE,
					       "malformed header: bad descr");
			have_descr = 1;
		} else if (strcmp(key, "fortran_order") == 0 && !have_fo) {
			if (lex_word(&l, "True"))
				fortran = 1;
			else if (!lex_word(&l, "False"))
				return io_fail(err, errlen, FPL_EPARSE,
					       "malformed header: bad fortran_order");
			have_fo = 1;
		} else if (strcmp(key, "shape") == 0 && !have_shape) {
			int rc = lex_shape(&l, info, err, errlen);
			if (rc)
				return rc;
			have_shape = 1;
		} else
			return io_fail(err, errlen, FPL_EPARSE, "malformed header: key '%s'", key);
		if (!accept(&l, ',')) {
			if (!accept(&l, '}'))
				return io_fail(err, errlen, FPL_EPARSE,
					       "malformed header: expected ',' or '}'");
			break;
		}
	}
	info->fortran_order = fortran;	/* streams deliver storage order */
	if (!have_descr || !have_fo || !have_shape)
		return io_fail(err, errlen, FPL_EPARSE, "malformed header: missing %s",
			       !have_descr ? "'descr'" : !have_fo ? "'fortran_order'" : "'shape'");
	return parse_descr(descr, override, info, err, errlen);
}

long long io_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (long long)done;
}

/* Is the refusal msg about an integer descr ('|u1' without --dtype,
 * '|b1')?  The descr is the first quoted word of parse_descr's messages. */
static int integer_refused(const char *msg)
{
	const char *q = strchr(msg, '\'');
	return q && strchr("<>|=", q[1]) && q[1] && q[2] && strchr("iub", q[2])
	       && q[3] && strchr("1248", q[3]) && q[4] == '\'';
}

int io_npy_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	unsigned char pre[IO_NPY_PREFIX];
	char msg[256];
	long long r = io_pread_full(tf->fd, pre, sizeof pre, 0);
	if (r < 0)
		return io_fail(err, errlen, FPL_EIO, "%s: %s", tf->shown, strerror(errno));
	int rc = io_tensors_alloc(tf, 1);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", tf->shown);
	struct io_tensor *t = &tf->t[0];
	uint64_t hdr;
	size_t need;
	rc = io_npy_parse(pre, (size_t)r, tf->opts.dtype, &t->info, &hdr, &need, msg, sizeof msg);
	if (rc && need > (size_t)r && (size_t)r == sizeof pre) {
		unsigned char *h = malloc(need);
		if (!h)
			return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", tf->shown);
		r = io_pread_full(tf->fd, h, need, 0);
		if (r < 0) {
			free(h);
			return io_fail(err, errlen, FPL_EIO, "%s: %s", tf->shown, strerror(errno));
		}
		rc = io_npy_parse(h, (size_t)r, tf->opts.dtype, &t->info, &hdr, &need, msg,
				  sizeof msg);
		free(h);
	}
	if (rc == FPL_EUNSUPPORTED && integer_refused(msg)) {
		/* listed, with its shape, as an .npz lists such a member, and
		 * refused when streamed: train's integer reader (dataset_int.c,
		 * which the CLI's tensor input shares) reads a bool or uint8
		 * tensor, labels and byte images */
		io_name_from_file(tf, t->info.name, sizeof t->info.name);
		snprintf(t->bad, sizeof t->bad, "%s", msg);
		t->info.dtype = FPL_DT_UNKNOWN;
		return 0;
	}
	if (rc)
		return io_fail(err, errlen, rc, "%s: %s", tf->shown, msg);
	io_name_from_file(tf, t->info.name, sizeof t->info.name);
	size_t es = fpl_dtype_size(t->info.dtype);
	uint64_t nb;
	if (io_mul_overflow(t->info.count, es, &nb) || hdr > tf->size || nb != tf->size - hdr)
		return io_fail(err, errlen, FPL_EPARSE,
			       "%s: header says %llu elements of %zu bytes but %llu bytes follow",
			       tf->shown, (unsigned long long)t->info.count, es,
			       (unsigned long long)(hdr > tf->size ? 0 : tf->size - hdr));
	t->data_off = hdr;
	t->nbytes = nb;
	return 0;
}
