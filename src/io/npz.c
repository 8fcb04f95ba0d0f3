/* SPDX-License-Identifier: MIT */
/*
 * npz.c - .npz archives (numpy.savez / savez_compressed): a zip file with
 * one .npy member per tensor, stored or deflated, read through libzip.
 *
 * Invariant: opening reads each member's .npy header (decompressing only
 * its first bytes) and checks it against the member's uncompressed size;
 * the data are streamed later through zip_fread, whose CRC check catches
 * a corrupt member at its end.
 */
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "io/io.h"

/* Read the .npy header of member i into t; returns 0 or a status. */
static int member_header(fpl_tensor_file *tf, zip_uint64_t i, struct io_tensor *t,
			 uint64_t usize, char *msg, size_t msglen)
{
	unsigned char pre[IO_NPY_PREFIX];
	zip_file_t *zf = zip_fopen_index(tf->zip, i, 0);
	if (!zf)
		return io_fail(msg, msglen, FPL_EPARSE, "%s", zip_strerror(tf->zip));
	zip_int64_t r = zip_fread(zf, pre, sizeof pre);
	if (r < 0) {
		int rc = io_fail(msg, msglen, FPL_EPARSE, "%s", zip_file_strerror(zf));
		zip_fclose(zf);
		return rc;
	}
	uint64_t hdr;
	size_t need;
	int rc = io_npy_parse(pre, (size_t)r, tf->opts.dtype, &t->info, &hdr, &need, msg, msglen);
	if (rc && need > (size_t)r && (size_t)r == sizeof pre && need <= usize) {
		unsigned char *h = malloc(need);
		if (!h) {
			zip_fclose(zf);
			return io_fail(msg, msglen, FPL_ENOMEM, "out of memory");
		}
		memcpy(h, pre, sizeof pre);
		size_t have = sizeof pre;
		while (have < need) {
			r = zip_fread(zf, h + have, need - have);
			if (r <= 0)
				break;
			have += (size_t)r;
		}
		if (r < 0)
			rc = io_fail(msg, msglen, FPL_EPARSE, "%s", zip_file_strerror(zf));
		else
			rc = io_npy_parse(h, have, tf->opts.dtype, &t->info, &hdr, &need, msg,
					  msglen);
		free(h);
	}
	zip_fclose(zf);
	if (rc)
		return rc;
	size_t es = fpl_dtype_size(t->info.dtype);
	uint64_t nb;
	if (io_mul_overflow(t->info.count, es, &nb) || hdr > usize || nb != usize - hdr)
		return io_fail(msg, msglen, FPL_EPARSE,
			       "header says %llu elements of %zu bytes but %llu bytes follow",
			       (unsigned long long)t->info.count, es,
			       (unsigned long long)(hdr > usize ? 0 : usize - hdr));
	t->data_off = hdr;
	t->nbytes = nb;
	return 0;
}

int io_npz_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	int zerr = 0;
	tf->zip = zip_open(tf->path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
	if (!tf->zip) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, zerr);
		int rc = io_fail(err, errlen, FPL_EPARSE, "%s: not a readable .npz (zip): %s",
				 tf->path, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return rc;
	}
	zip_int64_t n = zip_get_num_entries(tf->zip, 0);
	if (n < 0)
		n = 0;
	int rc = io_tensors_alloc(tf, (size_t)n);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", tf->path);
	size_t k = 0;
	char msg[256];
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(tf->zip, (zip_uint64_t)i, 0, &st) < 0)
			return io_fail(err, errlen, FPL_EPARSE, "%s: member %lld: %s", tf->path,
				       (long long)i, zip_strerror(tf->zip));
		const char *name = (st.valid & ZIP_STAT_NAME) ? st.name : "";
		size_t len = strlen(name);
		if (len == 0 || name[len - 1] == '/')
			continue;	/* directory entry */
		struct io_tensor *t = &tf->t[k];
		/* the tensor name is the member name without ".npy" */
		size_t nl = len >= 4 && strcmp(name + len - 4, ".npy") == 0 ? len - 4 : len;
		if (nl >= sizeof t->info.name)
			return io_fail(err, errlen, FPL_EUNSUPPORTED, "%s: member name too long",
				       tf->path);
		memcpy(t->info.name, name, nl);
		t->info.name[nl] = 0;
		t->member = i;
		if (nl == len)
			return io_fail(err, errlen, FPL_EPARSE,
				       "%s: member '%s' is not an .npy file", tf->path, name);
		if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
		    st.encryption_method != ZIP_EM_NONE)
			return io_fail(err, errlen, FPL_EUNSUPPORTED,
				       "%s: tensor '%s': encrypted members are not supported",
				       tf->path, t->info.name);
		if ((st.valid & ZIP_STAT_COMP_METHOD) &&
		    !zip_compression_method_supported((zip_int32_t)st.comp_method, 0))
			return io_fail(err, errlen, FPL_EUNSUPPORTED,
				       "%s: tensor '%s': unsupported compression method %u",
				       tf->path, t->info.name, (unsigned)st.comp_method);
		uint64_t usize = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
		rc = member_header(tf, (zip_uint64_t)i, t, usize, msg, sizeof msg);
		if (rc == FPL_EUNSUPPORTED) {	/* listed; refused when streamed */
			snprintf(t->bad, sizeof t->bad, "%s", msg);
			t->info.dtype = FPL_DT_UNKNOWN;
			rc = 0;
		}
		if (rc)
			return io_fail(err, errlen, rc, "%s: tensor '%s': %s", tf->path,
				       t->info.name, msg);
		k++;
	}
	tf->n = k;
	return 0;
}
