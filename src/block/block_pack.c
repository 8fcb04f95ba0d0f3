/* SPDX-License-Identifier: MIT */
/*
 * block_pack.c - packed storage of block codes (fplab/block.h): codes of
 * up to 4 bits two per byte along the last axis, low nibble first, each
 * row starting on a byte; wider codes little-endian in 1, 2, 4 or 8
 * bytes.
 */
#include <string.h>

#include "block/block_internal.h"

int fpl_block_code_bytes(int nbits, int *per_byte)
{
	if (per_byte)
		*per_byte = nbits <= 4 ? 2 : 1;
	return nbits <= 8 ? 1 : nbits <= 16 ? 2 : nbits <= 32 ? 4 : 8;
}

/* Rows (all axes but the last) and the last axis's length. */
static int rows_of(const size_t *dims, int ndims, size_t *rows, size_t *last)
{
	int i;

	if (!dims || ndims < 1)
		return -1;
	*rows = 1;
	for (i = 0; i + 1 < ndims; i++)
		*rows *= dims[i];
	*last = dims[ndims - 1];
	return 0;
}

size_t fpl_block_pack(void *out, const uint64_t *codes, int nbits, const size_t *dims, int ndims)
{
	unsigned char *o = out;
	size_t rows, last, r, j, k = 0;
	int per, w = fpl_block_code_bytes(nbits, &per), b;

	if (rows_of(dims, ndims, &rows, &last) || nbits < 1 || nbits > 64)
		return 0;
	for (r = 0; r < rows; r++) {
		for (j = 0; j < last; j++) {
			uint64_t c = codes[r * last + j];

			if (nbits < 64 && c >> nbits)
				return 0;
			if (per == 2) {
				if (j % 2 == 0)
					o[k] = (unsigned char)c;
				else
					o[k++] |= (unsigned char)(c << 4);
				continue;
			}
			for (b = 0; b < w; b++)
				o[k++] = (unsigned char)(c >> (8 * b));
		}
		if (per == 2 && last % 2)
			k++;
	}
	return k;
}

int fpl_block_unpack(uint64_t *codes, const void *in, size_t len, int nbits, const size_t *dims,
		     int ndims)
{
	const unsigned char *p = in;
	size_t rows, last, r, j, k = 0;
	int per, w = fpl_block_code_bytes(nbits, &per), b;

	if (rows_of(dims, ndims, &rows, &last) || nbits < 1 || nbits > 64)
		return FPL_EINVAL;
	if (len != rows * (per == 2 ? (last + 1) / 2 : last * (size_t)w))
		return FPL_EPARSE;
	for (r = 0; r < rows; r++) {
		for (j = 0; j < last; j++) {
			uint64_t c = 0;

			if (per == 2) {
				c = j % 2 ? (uint64_t)(p[k++] >> 4) : (uint64_t)(p[k] & 15);
			} else {
				for (b = 0; b < w; b++)
					c |= (uint64_t)p[k++] << (8 * b);
			}
			codes[r * last + j] = c;
		}
		if (per == 2 && last % 2)
			k++;
	}
	return 0;
}
