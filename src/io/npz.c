/* SPDX-License-Identifier: MIT */
/*
 * npz.c - .npz archives (numpy.savez / savez_compressed): a zip file with
 * one .npy member per tensor, stored or deflated, read through libzip.
 *
 * Invariant: opening reads each member's .npy header (decompressing only
 * its first bytes) and checks it against the member's uncompressed size;
 * the data are streamed later through zip_fread, whose CRC check catches
 * a corrupt member at its end.  The caller's dtype says what raw-code
 * members ('<u2', '|V1', ...) hold; float members keep their own dtype.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "io/io.h"

/*
 * Parse a member's .npy header held in h with the caller's dtype
 * override; *fit says how the override went: 1 it applied (raw codes of
 * its width, or a float member of that very dtype), 0 it did not apply (a
 * float member of another dtype keeps its own: an .npz may mix f32
 * members with raw-code ones), -1 raw codes of another width (an error
 * for this member only: FPL_EUNSUPPORTED, listed and refused when read).
 */
static int parse_member(const fpl_tensor_file *tf, const unsigned char *h, size_t len,
			fpl_tensor_info *info, uint64_t *hdr, size_t *need, int *fit, char *msg,
			size_t msglen)
{
	fpl_dtype ov = tf->opts.dtype;
	char own[256];
	int rc = io_npy_parse(h, len, ov, info, hdr, need, msg, msglen);
	*fit = rc == 0 && ov != FPL_DT_UNKNOWN;
	if (rc != FPL_EINVAL || ov == FPL_DT_UNKNOWN)
		return rc;
	if (io_npy_parse(h, len, FPL_DT_UNKNOWN, info, hdr, need, own, sizeof own) == 0)
		return 0;
	*fit = -1;
	return FPL_EUNSUPPORTED;
}

/* Read the .npy header of member i into t; returns 0 or a status, and
 * *fit as parse_member() does. */
static int member_header(fpl_tensor_file *tf, zip_uint64_t i, struct io_tensor *t,
			 uint64_t usize, int *fit, char *msg, size_t msglen)
{
	unsigned char pre[IO_NPY_PREFIX];
	*fit = 0;
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
	int rc = parse_member(tf, pre, (size_t)r, &t->info, &hdr, &need, fit, msg, msglen);
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
			rc = parse_member(tf, h, have, &t->info, &hdr, &need, fit, msg, msglen);
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

/*
 * A dtype override must apply to some member (opts.dtype names what raw
 * codes hold; an archive without any is a mistake, not a no-op).  When
 * none fit, the first member whose raw codes have another width says why.
 */
static int override_applies(const fpl_tensor_file *tf, int applied, long misfit, char *err,
			    size_t errlen)
{
	char en[FPL_ESCAPED_NAME_MAX];
	if (tf->opts.dtype == FPL_DT_UNKNOWN || tf->n == 0 || applied)
		return 0;
	if (misfit >= 0)
		return io_fail(err, errlen, FPL_EINVAL, "%s: tensor '%s': %s", tf->shown,
			       fpl_escape(en, sizeof en, tf->t[misfit].info.name),
			       tf->t[misfit].bad);
	return io_fail(err, errlen, FPL_EINVAL,
		       "%s: --dtype %s does not apply: no member holds raw codes ('<u2', "
		       "'|V2', '|u1' or '|V1')", tf->shown, fpl_dtype_name(tf->opts.dtype));
}

int io_npz_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	int zerr = 0;
	if (tf->spooled) {	/* a private copy of a pipe: libzip takes a duplicate */
		int fd = dup(tf->fd);
		tf->zip = fd < 0 ? NULL : zip_fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
		if (!tf->zip && fd >= 0)
			close(fd);
	} else
		tf->zip = zip_open(tf->path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
	if (!tf->zip) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, zerr);
		int rc = io_fail(err, errlen, FPL_EPARSE, "%s: not a readable .npz (zip): %s",
				 tf->shown, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return rc;
	}
	zip_int64_t n = zip_get_num_entries(tf->zip, 0);
	if (n < 0)
		n = 0;
	int rc = io_tensors_alloc(tf, (size_t)n);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", tf->shown);
	size_t k = 0;
	char msg[256], en[FPL_ESCAPED_NAME_MAX];
	int fit, applied = 0;
	long misfit = -1;	/* first member whose raw codes have another width */
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(tf->zip, (zip_uint64_t)i, 0, &st) < 0)
			return io_fail(err, errlen, FPL_EPARSE, "%s: member %lld: %s", tf->shown,
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
				       tf->shown);
		memcpy(t->info.name, name, nl);
		t->info.name[nl] = 0;
		t->member = i;
		fpl_escape(en, sizeof en, t->info.name);
		if (nl == len)
			return io_fail(err, errlen, FPL_EPARSE,
				       "%s: member '%s' is not an .npy file", tf->shown, en);
		if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
		    st.encryption_method != ZIP_EM_NONE)
			return io_fail(err, errlen, FPL_EUNSUPPORTED,
				       "%s: tensor '%s': encrypted members are not supported",
				       tf->shown, en);
		if ((st.valid & ZIP_STAT_COMP_METHOD) &&
		    !zip_compression_method_supported((zip_int32_t)st.comp_method, 0))
			return io_fail(err, errlen, FPL_EUNSUPPORTED,
				       "%s: tensor '%s': unsupported compression method %u",
				       tf->shown, en, (unsigned)st.comp_method);
		uint64_t usize = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
		rc = member_header(tf, (zip_uint64_t)i, t, usize, &fit, msg, sizeof msg);
		if (rc == FPL_EUNSUPPORTED) {	/* listed; refused when streamed */
			snprintf(t->bad, sizeof t->bad, "%s", msg);
			t->info.dtype = FPL_DT_UNKNOWN;
			rc = 0;
		}
		if (rc)
			return io_fail(err, errlen, rc, "%s: tensor '%s': %s", tf->shown, en, msg);
		applied |= fit > 0;
		if (fit < 0 && misfit < 0)
			misfit = (long)k;
		k++;
	}
	tf->n = k;
	return override_applies(tf, applied, misfit, err, errlen);
}
