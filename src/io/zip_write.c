/* SPDX-License-Identifier: MIT */
/*
 * zip_write.c - a streaming writer of stored (uncompressed) zip archives,
 * enough for .npz files that numpy's np.load and libzip read.
 *
 * Invariant: every member is written as local header (sizes and CRC zero,
 * general-purpose flag bit 3), data, then a data descriptor with the real
 * CRC-32 and sizes, so the output never seeks (a pipe works); the central
 * directory at the end repeats them.  No zip64: an archive or member past
 * 4 GiB - 1 is refused with FPL_ERANGE rather than written wrong.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/io.h"

struct zip_entry {
	char *name;
	uint32_t crc, size, off;
};

struct fpl_zip_writer {
	FILE *fp;
	uint64_t pos;			/* bytes written so far */
	struct zip_entry *e;
	size_t n, cap;
	int open;			/* a member is being written */
	uLong crc;
	uint64_t size;
};

static int put(fpl_zip_writer *z, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, z->fp) != n)
		return FPL_EIO;
	z->pos += n;
	return 0;
}

/* Little-endian fields into b; returns the next position. */
static unsigned char *le(unsigned char *b, uint32_t v, int w)
{
	for (int i = 0; i < w; i++)
		*b++ = (unsigned char)(v >> (8 * i));
	return b;
}

FPL_API int fpl_zip_writer_open(fpl_zip_writer **out, FILE *fp)
{
	fpl_zip_writer *z = calloc(1, sizeof *z);

	*out = NULL;
	if (!fp)
		return FPL_EINVAL;
	if (!z)
		return FPL_ENOMEM;
	z->fp = fp;
	*out = z;
	return 0;
}

FPL_API int fpl_zip_member_begin(fpl_zip_writer *z, const char *name)
{
	unsigned char h[30], *p = h;
	size_t nl = strlen(name);

	if (z->open || !nl || nl > 0xffff)
		return FPL_EINVAL;
	if (z->pos > 0xffffffffu)
		return FPL_ERANGE;
	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 8;
		struct zip_entry *e = realloc(z->e, cap * sizeof *e);

		if (!e)
			return FPL_ENOMEM;
		z->e = e;
		z->cap = cap;
	}
	z->e[z->n].name = strdup(name);
	if (!z->e[z->n].name)
		return FPL_ENOMEM;
	z->e[z->n].off = (uint32_t)z->pos;
	z->n++;
	p = le(p, 0x04034b50, 4);
	p = le(p, 20, 2);		/* version needed: 2.0 */
	p = le(p, 8, 2);		/* sizes in the data descriptor */
	p = le(p, 0, 2);		/* stored */
	p = le(p, 0, 2);		/* time 00:00 */
	p = le(p, 0x21, 2);		/* date 1980-01-01 */
	p = le(p, 0, 4);
	p = le(p, 0, 4);
	p = le(p, 0, 4);
	p = le(p, (uint32_t)nl, 2);
	le(p, 0, 2);
	z->open = 1;
	z->crc = crc32(0L, Z_NULL, 0);
	z->size = 0;
	if (put(z, h, 30) || put(z, name, nl))
		return FPL_EIO;
	return 0;
}

FPL_API int fpl_zip_member_write(fpl_zip_writer *z, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t k = n;

	if (!z->open)
		return FPL_EINVAL;
	while (k) {
		uInt c = k > 0x40000000u ? 0x40000000u : (uInt)k;

		z->crc = crc32(z->crc, p, c);
		p += c;
		k -= c;
	}
	z->size += n;
	if (z->size > 0xffffffffu)
		return FPL_ERANGE;
	return put(z, data, n);
}

FPL_API int fpl_zip_member_end(fpl_zip_writer *z)
{
	unsigned char d[16], *p = d;
	struct zip_entry *e = &z->e[z->n - 1];

	if (!z->open)
		return FPL_EINVAL;
	z->open = 0;
	e->crc = (uint32_t)z->crc;
	e->size = (uint32_t)z->size;
	p = le(p, 0x08074b50, 4);
	p = le(p, e->crc, 4);
	p = le(p, e->size, 4);
	le(p, e->size, 4);
	return put(z, d, 16);
}

/* The central directory and its end record. */
static int central(fpl_zip_writer *z)
{
	uint64_t start = z->pos;
	unsigned char h[46], *p;

	if (z->n > 0xffff)
		return FPL_ERANGE;
	for (size_t i = 0; i < z->n; i++) {
		size_t nl = strlen(z->e[i].name);

		p = h;
		p = le(p, 0x02014b50, 4);
		p = le(p, 20, 2);
		p = le(p, 20, 2);
		p = le(p, 8, 2);
		p = le(p, 0, 2);
		p = le(p, 0, 2);
		p = le(p, 0x21, 2);
		p = le(p, z->e[i].crc, 4);
		p = le(p, z->e[i].size, 4);
		p = le(p, z->e[i].size, 4);
		p = le(p, (uint32_t)nl, 2);
		p = le(p, 0, 2);	/* extra */
		p = le(p, 0, 2);	/* comment */
		p = le(p, 0, 2);	/* disk */
		p = le(p, 0, 2);	/* internal attributes */
		p = le(p, 0, 4);	/* external attributes */
		le(p, z->e[i].off, 4);
		if (put(z, h, 46) || put(z, z->e[i].name, nl))
			return FPL_EIO;
	}
	if (z->pos > 0xffffffffu)
		return FPL_ERANGE;
	p = h;
	p = le(p, 0x06054b50, 4);
	p = le(p, 0, 2);
	p = le(p, 0, 2);
	p = le(p, (uint32_t)z->n, 2);
	p = le(p, (uint32_t)z->n, 2);
	p = le(p, (uint32_t)(z->pos - start), 4);
	p = le(p, (uint32_t)start, 4);
	le(p, 0, 2);
	return put(z, h, 22);
}

FPL_API int fpl_zip_writer_close(fpl_zip_writer *z, int finish)
{
	int rc = 0;

	if (!z)
		return 0;
	if (finish)
		rc = z->open ? FPL_EINVAL : central(z);
	for (size_t i = 0; i < z->n; i++)
		free(z->e[i].name);
	free(z->e);
	free(z);
	return rc;
}
