/* SPDX-License-Identifier: MIT */
/*
 * dataset_int.c - integer tensors (labels, byte images) from .npy, .npz
 * and .safetensors files, which fplab/tensor.h lists but does not stream
 * (its dtypes are floating-point).  Used by dataset_tensors.c only when
 * the tensor reader refuses a tensor's dtype.
 *
 * The .npy header is parsed by the tensor reader's own parser
 * (io_npy_parse): the descr of an integer dtype ('<i8', '|u1', '|b1')
 * is replaced, in a copy of the header, by a float descr of the same
 * width and length ('<f8'; '|u1' with a one-byte raw-code override), so
 * the parser checks the rest (keys, shape, fortran_order, overflow) as
 * for any .npy, and the real element type is kept here.
 *
 * Invariant: the bytes of a tensor (count x width) must fit exactly where
 * the container says they are, checked at open; reads still report a
 * short read as truncation.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "io/io.h"
#include "train/dataset_internal.h"

#define INT_HDR_MAX (1u << 20)	/* npy header bytes */
#define ST_HDR_MAX (100u << 20)	/* safetensors header bytes */

/* 'i'/'u'/'b' and width of an npy descr such as '<i8', or 0. */
static int npy_int_descr(const char *s, size_t len, ds_int_tensor *t)
{
	if (len != 3 || !strchr("<>|=", s[0]) || !strchr("iub", s[1]) || !strchr("1248", s[2]))
		return 0;
	t->kind = s[1];
	t->width = s[2] - '0';
	t->big_endian = s[0] == '>';
	return !(t->kind == 'b' && t->width != 1);
}

/*
 * Parse an .npy header (len bytes from the magic) of an integer tensor
 * into t; *hdr gets the header's length.  FPL_ENOTFOUND: not an integer
 * descr; *need > len: read more bytes and try again.
 */
static int npy_header(const unsigned char *buf, size_t len, ds_int_tensor *t, uint64_t *hdr,
		      size_t *need, char *msg, size_t ml)
{
	fpl_tensor_info info;
	unsigned char *copy;
	*need = 0;
	/* the header's length and the prefix checks: the parser, on a prefix */
	int rc = io_npy_parse(buf, len, FPL_DT_UNKNOWN, &info, hdr, need, msg, ml);
	if (*need > len)
		return rc;
	const char *h = (const char *)buf, *end = h + *need;
	const char *k = NULL;
	for (const char *p = h; p + 7 <= end; p++)
		if ((p[0] == '\'' || p[0] == '"') && memcmp(p + 1, "descr", 5) == 0 && p[6] == p[0]) {
			k = p + 7;
			break;
		}
	while (k && k < end && (*k == ' ' || *k == ':'))
		k++;
	if (!k || k >= end || (*k != '\'' && *k != '"'))
		return rc ? rc : FPL_ENOTFOUND;
	const char *v = k + 1, *q = memchr(v, *k, (size_t)(end - v));
	if (!q || !npy_int_descr(v, (size_t)(q - v), t))
		return rc ? rc : FPL_ENOTFOUND;
	copy = malloc(*need);
	if (!copy)
		return io_fail(msg, ml, FPL_ENOMEM, "out of memory");
	memcpy(copy, buf, *need);
	char *cv = (char *)copy + (v - h);
	fpl_dtype ov = FPL_DT_UNKNOWN;
	if (t->width == 1) {
		memcpy(cv, "|u1", 3);
		ov = FPL_DT_E4M3FN;	/* any one-byte type: only the shape is used */
	} else
		cv[1] = 'f';
	rc = io_npy_parse(copy, *need, ov, &info, hdr, need, msg, ml);
	free(copy);
	if (rc)
		return rc;
	t->ndim = info.ndim;
	memcpy(t->shape, info.shape, sizeof t->shape);
	t->count = info.count;
	t->fortran_order = info.fortran_order;
	return 0;
}

/* count * width must equal avail bytes. */
static int check_fit(const ds_int_tensor *t, uint64_t avail, char *err, size_t errlen)
{
	uint64_t nb;
	if (__builtin_mul_overflow(t->count, (uint64_t)t->width, &nb) || nb != avail)
		return io_fail(err, errlen, FPL_EPARSE,
			       "%s: header says %llu elements of %d bytes but %llu bytes hold them",
			       t->where, (unsigned long long)t->count, t->width,
			       (unsigned long long)avail);
	return 0;
}

/* The npy header at the start of a byte source, read by rd(). */
static int npy_open_common(ds_int_tensor *t, uint64_t total,
			   long long (*rd)(ds_int_tensor *, void *, size_t, uint64_t),
			   char *err, size_t errlen)
{
	unsigned char pre[IO_NPY_PREFIX], *h = NULL;
	char msg[300];
	uint64_t hdr;
	size_t need;
	long long r = rd(t, pre, sizeof pre, 0);
	if (r < 0)
		return io_fail(err, errlen, FPL_EIO, "%s: read error", t->where);
	int rc = npy_header(pre, (size_t)r, t, &hdr, &need, msg, sizeof msg);
	if (rc && need > (size_t)r && (size_t)r == sizeof pre) {
		h = malloc(need);
		if (!h)
			return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", t->where);
		memcpy(h, pre, sizeof pre);
		r = rd(t, h + sizeof pre, need - sizeof pre, sizeof pre);
		if (r < 0) {
			free(h);
			return io_fail(err, errlen, FPL_EIO, "%s: read error", t->where);
		}
		rc = npy_header(h, sizeof pre + (size_t)r, t, &hdr, &need, msg, sizeof msg);
		free(h);
	}
	if (rc == FPL_ENOTFOUND)
		return rc;
	if (rc)
		return io_fail(err, errlen, rc, "%s: %s", t->where, msg);
	t->pos = hdr;
	return check_fit(t, total > hdr ? total - hdr : 0, err, errlen);
}

static long long fd_rd(ds_int_tensor *t, void *buf, size_t n, uint64_t off)
{
	return io_pread_full(t->fd, buf, n, off);
}

static long long zip_rd(ds_int_tensor *t, void *buf, size_t n, uint64_t off)
{
	(void)off;	/* zip members are read front to back */
	size_t done = 0;
	while (done < n) {
		zip_int64_t r = zip_fread(t->zf, (char *)buf + done, n - done);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (long long)done;
}

/* Member NAME.npy (or NAME) of an .npz; name NULL: the only member. */
static int npz_open(ds_int_tensor *t, const char *path, const char *name, char *err,
		    size_t errlen)
{
	int zerr = 0;
	zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
	if (!z)
		return io_fail(err, errlen, FPL_EPARSE, "%s: not a readable zip archive", path);
	t->zip = z;
	zip_int64_t idx = -1;
	if (name) {
		char m[FPL_TENSOR_NAME_MAX + 8];
		snprintf(m, sizeof m, "%s.npy", name);
		idx = zip_name_locate(z, m, 0);
		if (idx < 0)
			idx = zip_name_locate(z, name, 0);
	} else if (zip_get_num_entries(z, 0) == 1)
		idx = 0;
	if (idx < 0)
		return FPL_ENOTFOUND;
	zip_stat_t st;
	if (zip_stat_index(z, (zip_uint64_t)idx, 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
		return io_fail(err, errlen, FPL_EPARSE, "%s: %s", t->where, zip_strerror(z));
	t->zf = zip_fopen_index(z, (zip_uint64_t)idx, 0);
	if (!t->zf)
		return io_fail(err, errlen, FPL_EPARSE, "%s: %s", t->where, zip_strerror(z));
	return npy_open_common(t, st.size, zip_rd, err, errlen);
}

/* 'i'/'u'/'b' and width of a safetensors dtype, or 0. */
static int st_int_dtype(const char *s, ds_int_tensor *t)
{
	static const struct {
		const char *n;
		char kind;
		int width;
	} tab[] = { { "I8", 'i', 1 },  { "U8", 'u', 1 },  { "I16", 'i', 2 }, { "U16", 'u', 2 },
		    { "I32", 'i', 4 }, { "U32", 'u', 4 }, { "I64", 'i', 8 }, { "U64", 'u', 8 },
		    { "BOOL", 'b', 1 } };
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(s, tab[i].n) == 0) {
			t->kind = tab[i].kind;
			t->width = tab[i].width;
			return 1;
		}
	return 0;
}

/* Entry `v` of a safetensors header into t (data offsets relative). */
static int st_entry(ds_int_tensor *t, json_t *v, uint64_t *b, uint64_t *e, char *err,
		    size_t errlen)
{
	json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
	       *off = json_object_get(v, "data_offsets");
	if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
	    json_array_size(off) != 2 || json_array_size(sh) > FPL_TENSOR_MAXDIM)
		return io_fail(err, errlen, FPL_EPARSE, "%s: malformed header entry", t->where);
	if (!st_int_dtype(json_string_value(dt), t))
		return FPL_ENOTFOUND;
	t->ndim = (int)json_array_size(sh);
	t->count = 1;
	for (int k = 0; k < t->ndim; k++) {
		json_t *x = json_array_get(sh, (size_t)k);
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    __builtin_mul_overflow(t->count, (uint64_t)json_integer_value(x), &t->count))
			return io_fail(err, errlen, FPL_EPARSE, "%s: bad shape", t->where);
		t->shape[k] = (uint64_t)json_integer_value(x);
	}
	json_t *jb = json_array_get(off, 0), *je = json_array_get(off, 1);
	if (!json_is_integer(jb) || !json_is_integer(je) || json_integer_value(jb) < 0 ||
	    json_integer_value(je) < json_integer_value(jb))
		return io_fail(err, errlen, FPL_EPARSE, "%s: bad data_offsets", t->where);
	*b = (uint64_t)json_integer_value(jb);
	*e = (uint64_t)json_integer_value(je);
	return check_fit(t, *e - *b, err, errlen);
}

static int st_open(ds_int_tensor *t, const char *path, const char *name, uint64_t size,
		   char *err, size_t errlen)
{
	unsigned char l8[8];
	uint64_t hl = 0, b = 0, e = 0;
	if (io_pread_full(t->fd, l8, 8, 0) != 8)
		return io_fail(err, errlen, FPL_EPARSE, "%s: truncated header", path);
	for (int i = 7; i >= 0; i--)
		hl = hl << 8 | l8[i];
	if (hl > ST_HDR_MAX || hl > size - 8)
		return io_fail(err, errlen, FPL_EPARSE, "%s: header length %llu is implausible",
			       path, (unsigned long long)hl);
	char *h = malloc((size_t)hl + 1);
	if (!h)
		return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", path);
	if (io_pread_full(t->fd, h, (size_t)hl, 8) != (long long)hl) {
		free(h);
		return io_fail(err, errlen, FPL_EPARSE, "%s: truncated header", path);
	}
	json_error_t je;
	json_t *root = json_loadb(h, (size_t)hl, 0, &je);
	free(h);
	if (!json_is_object(root)) {
		json_decref(root);
		return io_fail(err, errlen, FPL_EPARSE, "%s: header is not a JSON object", path);
	}
	json_t *v = NULL;
	if (name)
		v = json_object_get(root, name);
	else {
		const char *key;
		json_t *x;
		int seen = 0;
		json_object_foreach(root, key, x)
			if (strcmp(key, "__metadata__") != 0) {
				v = x;
				seen++;
			}
		if (seen != 1)
			v = NULL;
	}
	int rc = v && json_is_object(v) ? st_entry(t, v, &b, &e, err, errlen) : FPL_ENOTFOUND;
	json_decref(root);
	if (rc)
		return rc;
	if (e > size - 8 - hl)
		return io_fail(err, errlen, FPL_EPARSE, "%s: data_offsets beyond the end of the file",
			       t->where);
	t->pos = 8 + hl + b;
	t->big_endian = 0;
	return 0;
}

int ds_int_open(ds_int_tensor *t, const char *path, const char *name, char *err,
		size_t errlen)
{
	unsigned char magic[8];
	struct stat st;
	memset(t, 0, sizeof *t);
	t->fd = -1;
	char sp[300], sn[4 * 64 + 1];
	/* names escaped (fpl_escape) for messages; a long one cut */
	fpl_escape(sp, sizeof sp, path);
	if (name)
		snprintf(t->where, sizeof t->where, "%s: tensor '%s'", sp,
			 fpl_escape(sn, sizeof sn, name));
	else
		snprintf(t->where, sizeof t->where, "%s", sp);
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0 || fstat(t->fd, &st) < 0)
		return io_fail(err, errlen, FPL_EIO, "%s: cannot open: %s", sp, strerror(errno));
	long long r = io_pread_full(t->fd, magic, sizeof magic, 0);
	if (r >= 6 && memcmp(magic, "\x93NUMPY", 6) == 0)
		return npy_open_common(t, (uint64_t)st.st_size, fd_rd, err, errlen);
	if (r >= 4 && memcmp(magic, "PK\003\004", 4) == 0) {
		close(t->fd);
		t->fd = -1;
		return npz_open(t, path, name, err, errlen);
	}
	if (r == 8)
		return st_open(t, path, name, (uint64_t)st.st_size, err, errlen);
	return FPL_ENOTFOUND;
}

static uint64_t get_uint(const unsigned char *p, int w, int be)
{
	uint64_t v = 0;
	for (int i = 0; i < w; i++)
		v = v << 8 | p[be ? i : w - 1 - i];
	return v;
}

/* Append {pos, the integer (neg, magnitude m)} to *l; -1 when out of memory. */
static int note_wide(fpl_inexact **l, size_t *nl, size_t *cap, size_t pos, int neg, uint64_t m)
{
	if (*nl == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		fpl_inexact *v = realloc(*l, c * sizeof *v);
		if (!v)
			return -1;
		*l = v;
		*cap = c;
	}
	memset(&(*l)[*nl], 0, sizeof **l);
	(*l)[*nl].pos = pos;
	(*l)[*nl].w.negative = neg;
	(*l)[*nl].w.lo = m;	/* m 2^0, exactly: no sticky */
	(*nl)++;
	return 0;
}

/* Does binary64 hold the integer of magnitude m (at most 53 significant bits)? */
static int exact64(uint64_t m)
{
	return m == 0 || 64 - __builtin_clzll(m) - __builtin_ctzll(m) <= 53;
}

/* ds_int_read, and with l not NULL the list of ds_int_read_exact. */
static int read_ints(ds_int_tensor *t, float *f, double *d, size_t n, fpl_inexact **l,
		     size_t *nl, size_t *cap, char *err, size_t errlen)
{
	unsigned char buf[1 << 14];
	size_t per = sizeof buf / (size_t)t->width, done = 0;
	while (done < n) {
		size_t k = n - done < per ? n - done : per, nb = k * (size_t)t->width;
		long long r = t->zf ? zip_rd(t, buf, nb, 0) : io_pread_full(t->fd, buf, nb, t->pos);
		if (r < 0)
			return io_fail(err, errlen, t->zf ? FPL_EPARSE : FPL_EIO, "%s: %s", t->where,
				       t->zf ? zip_file_strerror(t->zf) : strerror(errno));
		if ((size_t)r != nb)
			return io_fail(err, errlen, FPL_EPARSE, "%s: truncated data", t->where);
		t->pos += nb;
		for (size_t i = 0; i < k; i++) {
			uint64_t u = get_uint(buf + i * (size_t)t->width, t->width, t->big_endian);
			int neg = t->kind == 'i' && (u >> (8 * t->width - 1)) & 1;
			if (t->kind == 'b')
				u = u != 0;
			if (neg) {
				/* sign-extend: the value is u - 2^(8w) */
				int64_t s = t->width == 8 ? (int64_t)u
							  : (int64_t)u - ((int64_t)1 << (8 * t->width));
				if (f)
					f[done + i] = (float)s;
				else
					d[done + i] = (double)s;
				u = t->width == 8 ? -u : ((uint64_t)1 << (8 * t->width)) - u;
			} else if (f)
				f[done + i] = (float)u;
			else
				d[done + i] = (double)u;
			if (l && !exact64(u) && note_wide(l, nl, cap, t->done + i, neg, u))
				return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", t->where);
		}
		done += k;
		t->done += k;
	}
	if (t->zf && t->done == t->count) {
		/* one more read makes libzip check the member's CRC */
		zip_int64_t r = zip_fread(t->zf, buf, 1);
		if (r != 0)
			return io_fail(err, errlen, FPL_EPARSE, "%s: %s", t->where,
				       r < 0 ? "corrupt member (CRC or inflate error)"
					     : "member longer than its header says");
	}
	return 0;
}

int ds_int_read(ds_int_tensor *t, float *f, double *d, size_t n, char *err, size_t errlen)
{
	return read_ints(t, f, d, n, NULL, NULL, NULL, err, errlen);
}

int ds_int_read_exact(ds_int_tensor *t, double *d, size_t n, fpl_inexact **l, size_t *nl,
		      size_t *cap, char *err, size_t errlen)
{
	return read_ints(t, NULL, d, n, l, nl, cap, err, errlen);
}

void ds_int_close(ds_int_tensor *t)
{
	if (t->zf)
		zip_fclose(t->zf);
	if (t->zip)
		zip_discard(t->zip);
	if (t->fd >= 0)
		close(t->fd);
	t->zf = t->zip = NULL;
	t->fd = -1;
}
