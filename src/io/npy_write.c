/* SPDX-License-Identifier: MIT */
/*
 * npy_write.c - the header of a little-endian version 1.0 .npy file.
 *
 * Invariant: magic, version, header length and the dict literal together
 * take a multiple of 64 bytes (numpy's alignment), the literal ending in
 * '\n', so numpy and fplab's reader both accept the file.
 */
#include <string.h>

#include "io/io.h"

FPL_API int fpl_npy_write_header(FILE *fp, fpl_dtype dtype, uint64_t n)
{
	return fpl_npy_write_header_shape(fp, dtype, 1, &n);
}

FPL_API int fpl_npy_write_header_shape(FILE *fp, fpl_dtype dtype, int ndim,
				       const uint64_t *shape)
{
	return fpl_npy_write_header_ex(fp, dtype, ndim, shape, 0);
}

FPL_API int fpl_npy_write_header_ex(FILE *fp, fpl_dtype dtype, int ndim,
				    const uint64_t *shape, int fortran_order)
{
	const char *descr;
	switch (dtype) {
	case FPL_DT_F64: descr = "<f8"; break;
	case FPL_DT_F32: descr = "<f4"; break;
	case FPL_DT_F16: descr = "<f2"; break;
	case FPL_DT_BF16: descr = "<u2"; break;
	case FPL_DT_E4M3FN:
	case FPL_DT_E5M2:
	case FPL_DT_U8: descr = "|u1"; break;	/* U8..U64: packed codes (fplab/block.h) */
	case FPL_DT_U16: descr = "<u2"; break;
	case FPL_DT_U32: descr = "<u4"; break;
	case FPL_DT_U64: descr = "<u8"; break;
	default: return FPL_EINVAL;
	}
	if (!fp || ndim < 0 || ndim > FPL_TENSOR_MAXDIM || (ndim && !shape))
		return FPL_EINVAL;
	char dict[64 + 24 * FPL_TENSOR_MAXDIM];
	int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (",
			   descr, fortran_order ? "True" : "False");
	for (int i = 0; i < ndim; i++)
		len += snprintf(dict + len, sizeof dict - (size_t)len, "%llu,%s",
				(unsigned long long)shape[i], i + 1 < ndim ? " " : "");
	len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
	size_t total = 10 + (size_t)len + 1;
	size_t pad = (64 - total % 64) % 64;
	size_t hl = (size_t)len + pad + 1;
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				  (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8) };
	if (fwrite(pre, 1, 10, fp) != 10 || fwrite(dict, 1, (size_t)len, fp) != (size_t)len)
		return FPL_EIO;
	for (size_t i = 0; i < pad; i++)
		if (putc(' ', fp) == EOF)
			return FPL_EIO;
	if (putc('\n', fp) == EOF)
		return FPL_EIO;
	return 0;
}
