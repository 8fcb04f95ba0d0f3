/* SPDX-License-Identifier: MIT */
/*
 * safetensors.c - .safetensors files: an 8-byte little-endian header size
 * N, N bytes of JSON {"name": {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {...}}, then the
 * data, offsets counted from the end of the header.  The JSON is parsed
 * by jansson (duplicate keys rejected); tensors keep the header's order.
 *
 * Invariant: as in the format's reference implementation, the tensors,
 * sorted by (begin, end), tile the data section exactly: the first begins
 * at 0, each begins where the previous ends, the last ends at the end of
 * the file (no overlap, no gap, no trailing bytes; a zero-size tensor has
 * begin == end); and end - begin == count * element size.  A tensor of a
 * dtype fplab does not read is listed with the reason and refused when
 * streamed; its bytes still count in the tiling.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

/* Header sizes above this are refused (the format's reference limit). */
#define ST_HDR_MAX (100u << 20)

static fpl_dtype st_dtype(const char *s)
{
	static const struct {
		const char *n;
		fpl_dtype t;
	} tab[] = { { "F64", FPL_DT_F64 },	   { "F32", FPL_DT_F32 },
		    { "F16", FPL_DT_F16 },	   { "BF16", FPL_DT_BF16 },
		    { "F8_E4M3", FPL_DT_E4M3FN }, { "F8_E5M2", FPL_DT_E5M2 },
		    { "I8", FPL_DT_I8 },	   { "I16", FPL_DT_I16 },
		    { "I32", FPL_DT_I32 },	   { "I64", FPL_DT_I64 },
		    { "U8", FPL_DT_U8 },	   { "U16", FPL_DT_U16 },
		    { "U32", FPL_DT_U32 },	   { "U64", FPL_DT_U64 } };
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(s, tab[i].n) == 0)
			return tab[i].t;
	return FPL_DT_UNKNOWN;
}

static int get_u64(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* One header entry into t; returns 0 or FPL_EPARSE with msg. */
static int entry(json_t *v, struct io_tensor *t, uint64_t dsize, char *msg, size_t ml)
{
	if (!json_is_object(v))
		return io_fail(msg, ml, FPL_EPARSE, "header entry is not an object");
	json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
	       *off = json_object_get(v, "data_offsets");
	if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(off) ||
	    json_array_size(off) != 2)
		return io_fail(msg, ml, FPL_EPARSE,
			       "header entry lacks dtype, shape or data_offsets");
	size_t nd = json_array_size(sh);
	if (nd > FPL_TENSOR_MAXDIM)
		return io_fail(msg, ml, FPL_EPARSE, "more than %d dimensions", FPL_TENSOR_MAXDIM);
	uint64_t c = 1;
	t->info.ndim = (int)nd;
	for (size_t k = 0; k < nd; k++) {
		if (get_u64(json_array_get(sh, k), &t->info.shape[k]) < 0)
			return io_fail(msg, ml, FPL_EPARSE, "bad dimension in shape");
		if (io_mul_overflow(c, t->info.shape[k], &c))
			return io_fail(msg, ml, FPL_EPARSE, "shape too large");
	}
	t->info.count = c;
	uint64_t b, e;
	if (get_u64(json_array_get(off, 0), &b) < 0 || get_u64(json_array_get(off, 1), &e) < 0 ||
	    b > e)
		return io_fail(msg, ml, FPL_EPARSE, "bad data_offsets");
	if (e > dsize)
		return io_fail(msg, ml, FPL_EPARSE,
			       "data_offsets [%llu, %llu] beyond the %llu data bytes of the file",
			       (unsigned long long)b, (unsigned long long)e,
			       (unsigned long long)dsize);
	t->data_off = b;
	t->nbytes = e - b;
	const char *ds = json_string_value(dt);
	t->info.dtype = st_dtype(ds);
	if (t->info.dtype == FPL_DT_UNKNOWN) {
		snprintf(t->bad, sizeof t->bad, "unsupported dtype '%.40s'", ds);
		return 0;
	}
	uint64_t nb;
	size_t es = fpl_dtype_size(t->info.dtype);
	if (io_mul_overflow(c, es, &nb) || nb != e - b)
		return io_fail(msg, ml, FPL_EPARSE,
			       "header says %llu elements of %zu bytes but data_offsets hold %llu bytes",
			       (unsigned long long)c, es, (unsigned long long)(e - b));
	return 0;
}

/* A tensor's bytes in the data section, for the tiling check. */
struct span {
	uint64_t b, e;
	size_t i;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *p = x, *q = y;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->e != q->e)
		return p->e < q->e ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/*
 * The tensors of tf (data_off still relative to the data section) sorted
 * by (begin, end) must tile [0, dsize): each begins where the previous
 * ended.  Every entry already has end <= dsize.  Returns 0 or FPL_EPARSE
 * with a message naming the file and the tensors.
 */
static int check_tiling(const fpl_tensor_file *tf, uint64_t dsize, char *err, size_t errlen)
{
	struct span *s = malloc((tf->n ? tf->n : 1) * sizeof *s);
	char a[FPL_ESCAPED_NAME_MAX], b[FPL_ESCAPED_NAME_MAX];
	uint64_t end = 0;
	int rc = 0;
	if (!s)
		return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", tf->shown);
	for (size_t i = 0; i < tf->n; i++) {
		s[i].b = tf->t[i].data_off;
		s[i].e = s[i].b + tf->t[i].nbytes;
		s[i].i = i;
	}
	qsort(s, tf->n, sizeof *s, span_cmp);
	for (size_t k = 0; k < tf->n && !rc; k++) {
		const char *name = tf->t[s[k].i].info.name;
		/* all before k tile [0, end), so end is s[k - 1].e */
		if (s[k].b < end)
			rc = io_fail(err, errlen, FPL_EPARSE,
				     "%s: tensor '%s': data_offsets [%llu, %llu] overlap tensor "
				     "'%s' [%llu, %llu]", tf->shown, fpl_escape(a, sizeof a, name),
				     (unsigned long long)s[k].b, (unsigned long long)s[k].e,
				     fpl_escape(b, sizeof b, tf->t[s[k - 1].i].info.name),
				     (unsigned long long)s[k - 1].b, (unsigned long long)s[k - 1].e);
		else if (s[k].b > end)
			rc = io_fail(err, errlen, FPL_EPARSE,
				     "%s: data_offsets leave a gap of %llu byte%s before tensor '%s'",
				     tf->shown, (unsigned long long)(s[k].b - end),
				     s[k].b - end == 1 ? "" : "s", fpl_escape(a, sizeof a, name));
		end = s[k].e;
	}
	free(s);
	if (!rc && end < dsize)
		rc = io_fail(err, errlen, FPL_EPARSE,
			     tf->n ? "%s: %llu byte%s after the last tensor"
				   : "%s: %llu data byte%s but no tensors",
			     tf->shown, (unsigned long long)(dsize - end), dsize - end == 1 ? "" : "s");
	return rc;
}

int io_safetensors_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	unsigned char pre[8];
	long long r = io_pread_full(tf->fd, pre, 8, 0);
	if (r < 0)
		return io_fail(err, errlen, FPL_EIO, "%s: %s", tf->shown, strerror(errno));
	if (r < 8)
		return io_fail(err, errlen, FPL_EPARSE, "%s: truncated header (%lld bytes)",
			       tf->shown, r);
	uint64_t hn = 0;
	for (int i = 7; i >= 0; i--)
		hn = hn << 8 | pre[i];
	if (hn > ST_HDR_MAX || hn > tf->size - 8)
		return io_fail(err, errlen, FPL_EPARSE,
			       "%s: header size %llu exceeds the file (%llu bytes)", tf->shown,
			       (unsigned long long)hn, (unsigned long long)tf->size);
	char *h = malloc(hn ? hn : 1);
	if (!h)
		return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", tf->shown);
	r = io_pread_full(tf->fd, h, hn, 8);
	if (r != (long long)hn) {
		free(h);
		return io_fail(err, errlen, FPL_EIO, "%s: cannot read the header", tf->shown);
	}
	json_error_t je;
	json_t *root = json_loadb(h, hn, JSON_REJECT_DUPLICATES, &je);
	free(h);
	if (!root)
		return io_fail(err, errlen, FPL_EPARSE, "%s: bad JSON header: %s (offset %d)",
			       tf->shown, je.text, je.position);
	int rc = 0;
	char msg[256];
	if (!json_is_object(root)) {
		rc = io_fail(err, errlen, FPL_EPARSE, "%s: JSON header is not an object", tf->shown);
		goto out;
	}
	size_t n = json_object_size(root);
	if ((rc = io_tensors_alloc(tf, n))) {
		rc = io_fail(err, errlen, rc, "%s: out of memory", tf->shown);
		goto out;
	}
	uint64_t dstart = 8 + hn, dsize = tf->size - dstart;
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		if (strcmp(key, "__metadata__") == 0)
			continue;
		struct io_tensor *t = &tf->t[k];
		if (strlen(key) >= sizeof t->info.name) {
			rc = io_fail(err, errlen, FPL_EUNSUPPORTED, "%s: tensor name too long",
				     tf->shown);
			goto out;
		}
		strcpy(t->info.name, key);
		if ((rc = entry(v, t, dsize, msg, sizeof msg))) {
			char en[FPL_ESCAPED_NAME_MAX];
			rc = io_fail(err, errlen, rc, "%s: tensor '%s': %s", tf->shown,
				     fpl_escape(en, sizeof en, key), msg);
			goto out;
		}
		k++;
	}
	tf->n = k;
	if ((rc = check_tiling(tf, dsize, err, errlen)))
		goto out;
	for (size_t i = 0; i < k; i++)
		tf->t[i].data_off += dstart;
out:
	json_decref(root);
	return rc;
}
