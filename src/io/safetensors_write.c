/* SPDX-License-Identifier: MIT */
/*
 * safetensors_write.c - the header of a .safetensors file: an 8-byte
 * little-endian length, then a JSON object mapping each tensor's name to
 * {"dtype", "shape", "data_offsets"}.
 *
 * Invariant: the data_offsets tile the data section exactly, in the order
 * given (tensor i at the sum of the sizes before it), and the header is
 * padded with spaces to a multiple of 8 bytes, as the reference
 * implementation writes it; fplab's reader (which requires the tiling)
 * and the Python safetensors package both accept it.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

static const char *st_dtype(fpl_dtype t)
{
	switch (t) {
	case FPL_DT_F64: return "F64";
	case FPL_DT_F32: return "F32";
	case FPL_DT_F16: return "F16";
	case FPL_DT_BF16: return "BF16";
	case FPL_DT_E4M3FN: return "F8_E4M3";
	case FPL_DT_E5M2: return "F8_E5M2";
	case FPL_DT_U8: return "U8";	/* U8..U64: packed codes (fplab/block.h) */
	case FPL_DT_U16: return "U16";
	case FPL_DT_U32: return "U32";
	case FPL_DT_U64: return "U64";
	default: return NULL;
	}
}

/* The JSON object of n tensors, or NULL (*rc says why). */
static json_t *st_header(size_t n, const fpl_tensor_info *t, int *rc)
{
	json_t *root = json_object();
	uint64_t off = 0;

	*rc = FPL_ENOMEM;
	for (size_t i = 0; root && i < n; i++) {
		const char *dt = st_dtype(t[i].dtype);
		json_t *o, *shape;
		uint64_t count = 1, nb;

		if (!dt || t[i].ndim < 0 || t[i].ndim > FPL_TENSOR_MAXDIM ||
		    json_object_get(root, t[i].name) || !strcmp(t[i].name, "__metadata__")) {
			*rc = FPL_EINVAL;
			break;
		}
		shape = json_array();
		for (int d = 0; shape && d < t[i].ndim; d++) {
			count *= t[i].shape[d];
			json_array_append_new(shape, json_integer((json_int_t)t[i].shape[d]));
		}
		nb = count * fpl_dtype_size(t[i].dtype);
		o = json_pack("{s:s, s:o, s:[I, I]}", "dtype", dt, "shape", shape,
			      "data_offsets", (json_int_t)off, (json_int_t)(off + nb));
		if (!o || json_object_set_new(root, t[i].name, o))
			break;
		off += nb;
		if (i + 1 == n)
			*rc = 0;
	}
	if (!n && root)
		*rc = 0;
	if (*rc) {
		json_decref(root);
		return NULL;
	}
	return root;
}

FPL_API int fpl_safetensors_write_header(FILE *fp, size_t n, const fpl_tensor_info *t)
{
	unsigned char len[8];
	json_t *root;
	char *s;
	size_t sl, pad;
	int rc;

	if (!fp || (n && !t))
		return FPL_EINVAL;
	root = st_header(n, t, &rc);
	if (!root)
		return rc;
	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!s)
		return FPL_ENOMEM;
	sl = strlen(s);
	pad = (8 - sl % 8) % 8;
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)((uint64_t)(sl + pad) >> (8 * i));
	rc = fwrite(len, 1, 8, fp) == 8 && fwrite(s, 1, sl, fp) == sl ? 0 : FPL_EIO;
	for (size_t i = 0; !rc && i < pad; i++)
		if (putc(' ', fp) == EOF)
			rc = FPL_EIO;
	free(s);
	return rc;
}
