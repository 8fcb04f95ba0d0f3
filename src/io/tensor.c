/* SPDX-License-Identifier: MIT */
/*
 * tensor.c - fpl_tensor_open() and the streams: picks the reader for a
 * file, then delivers elements chunk by chunk as binary64 or binary32.
 *
 * Invariant: a stream holds at most IO_BUFBYTES of file data at a time
 * (plus the caller's buffer), so memory stays bounded whatever the file
 * size; every short read is reported as truncation, never as zeros.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "io/io.h"

int io_tensors_alloc(fpl_tensor_file *tf, size_t n)
{
	tf->t = calloc(n ? n : 1, sizeof *tf->t);
	if (!tf->t)
		return FPL_ENOMEM;
	tf->n = n;
	for (size_t i = 0; i < n; i++)
		tf->t[i].member = -1;
	return 0;
}

void io_name_from_file(fpl_tensor_file *tf, char *name, size_t cap)
{
	const char *b = tf->is_stdin ? "stdin" : tf->base;
	const char *dot = strrchr(b, '.');
	size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	if (n >= cap)
		n = cap - 1;
	memcpy(name, b, n);
	name[n] = 0;
}

/*
 * The options of fpl_tensor_opts that apply to tf->kind, now known:
 * offset, count and big_endian to raw input only; dtype to raw input and
 * as the raw-code override of .npy/.npz (checked by their reader), never
 * to text (but "text" itself) or .safetensors (which carry their dtypes).
 * Returns 0 or FPL_EINVAL with a message naming the input and option.
 */
static int check_opts(const fpl_tensor_file *tf, char *err, size_t errlen)
{
	const fpl_tensor_opts *o = &tf->opts;
	const char *name = tf->is_stdin ? "stdin" : tf->shown;
	fpl_tensor_kind k = tf->kind;
	const char *opt = o->offset ? "--offset" : o->count ? "--count"
			: o->big_endian ? "--big-endian" : NULL;
	if (k == FPL_TK_RAW || k == FPL_TK_AUTO)
		return 0;
	if (opt)
		return io_fail(err, errlen, FPL_EINVAL, "%s: %s applies to raw input only", name,
			       opt);
	if (o->dtype == FPL_DT_UNKNOWN || (k == FPL_TK_TEXT && o->dtype == FPL_DT_TEXT))
		return 0;
	if (k == FPL_TK_SAFETENSORS)
		return io_fail(err, errlen, FPL_EINVAL,
			       "%s: --dtype does not apply: a .safetensors file names the dtype "
			       "of each tensor", name);
	if (k == FPL_TK_TEXT)
		return io_fail(err, errlen, FPL_EINVAL,
			       "%s: --dtype %s does not apply to text input", name,
			       fpl_dtype_name(o->dtype));
	if (o->dtype == FPL_DT_TEXT)
		return io_fail(err, errlen, FPL_EINVAL, "%s: --dtype text applies to text input only",
			       name);
	return 0;
}

static const char *ext_of(const char *base)
{
	const char *dot = strrchr(base, '.');
	return dot ? dot + 1 : "";
}

/*
 * Copy what is left of `src` into an unlinked temporary file and make it
 * tf's source: a regular file, read as often as the caller needs.  At most
 * the spool limit is copied; more is an error, so the disk use is bounded.
 */
static int spool(fpl_tensor_file *tf, int src, char *err, size_t errlen)
{
	const char *name = tf->is_stdin ? "stdin" : tf->shown;
	const char *dir = getenv("TMPDIR");
	uint64_t max = tf->opts.spool_max ? tf->opts.spool_max : FPL_SPOOL_MAX, total = 0;
	char path[4096];
	char *buf;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof path, "%s/fplab-spool-XXXXXX", dir) >= (int)sizeof path)
		return io_fail(err, errlen, FPL_EIO, "%s: TMPDIR is too long", name);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return io_fail(err, errlen, FPL_EIO,
			       "%s: cannot create a temporary file in '%s' to read the input twice: %s",
			       name, dir, strerror(errno));
	unlink(path);
	buf = malloc(IO_BUFBYTES);
	if (!buf) {
		close(fd);
		return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", name);
	}
	for (;;) {
		ssize_t r = read(src, buf, IO_BUFBYTES);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return io_fail(err, errlen, FPL_EIO, "%s: %s", name, strerror(e));
		}
		if (r == 0)
			break;
		if (total + (uint64_t)r > max) {
			free(buf);
			close(fd);
			return io_fail(err, errlen, FPL_ERANGE,
				       "%s: input that cannot be read twice is kept in a temporary "
				       "file of at most %llu bytes, and this one is larger: save it "
				       "to a file first", name, (unsigned long long)max);
		}
		for (ssize_t w = 0; w < r;) {
			ssize_t k = write(fd, buf + w, (size_t)(r - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				int e = errno;
				free(buf);
				close(fd);
				return io_fail(err, errlen, FPL_EIO,
					       "%s: cannot write the temporary copy in '%s': %s", name,
					       dir, strerror(e));
			}
			w += k;
		}
		total += (uint64_t)r;
	}
	free(buf);
	if (tf->fd > 0)
		close(tf->fd);
	tf->fd = fd;
	tf->spooled = 1;
	tf->sequential = 0;
	tf->size = total;
	return 0;
}

/* The kind from the extension, then from the first bytes. */
static fpl_tensor_kind detect(fpl_tensor_file *tf)
{
	const char *e = ext_of(tf->base);
	if (strcasecmp(e, "npy") == 0)
		return FPL_TK_NPY;
	if (strcasecmp(e, "npz") == 0)
		return FPL_TK_NPZ;
	if (strcasecmp(e, "safetensors") == 0)
		return FPL_TK_SAFETENSORS;
	if (strcasecmp(e, "txt") == 0 || strcasecmp(e, "text") == 0 || strcasecmp(e, "dat") == 0)
		return FPL_TK_TEXT;
	unsigned char m[9];
	long long r = tf->fd >= 0 ? io_pread_full(tf->fd, m, sizeof m, 0) : 0;
	if (r >= 6 && memcmp(m, "\x93NUMPY", 6) == 0)
		return FPL_TK_NPY;
	if (r >= 4 && (memcmp(m, "PK\3\4", 4) == 0 || memcmp(m, "PK\5\6", 4) == 0))
		return FPL_TK_NPZ;
	if (r == 9 && m[8] == '{') {
		uint64_t n = 0;
		for (int i = 7; i >= 0; i--)
			n = n << 8 | m[i];
		if (n >= 2 && n <= tf->size - 8)
			return FPL_TK_SAFETENSORS;
	}
	if (tf->opts.dtype != FPL_DT_UNKNOWN && tf->opts.dtype != FPL_DT_TEXT)
		return FPL_TK_RAW;
	return FPL_TK_TEXT;
}

FPL_API int fpl_tensor_open(fpl_tensor_file **out, const char *path, const fpl_tensor_opts *opts,
			    char *err, size_t errlen)
{
	if (!out || !path)
		return io_fail(err, errlen, FPL_EINVAL, "no file name");
	*out = NULL;
	fpl_tensor_file *tf = calloc(1, sizeof *tf);
	if (!tf || !(tf->path = strdup(path)) || !(tf->shown = malloc(4 * strlen(path) + 1))) {
		if (tf)
			free(tf->path);
		free(tf);
		return io_fail(err, errlen, FPL_ENOMEM, "out of memory");
	}
	fpl_escape(tf->shown, 4 * strlen(path) + 1, path);
	const char *sl = strrchr(tf->path, '/');
	tf->base = sl ? sl + 1 : tf->path;
	if (opts)
		tf->opts = *opts;
	tf->fd = -1;
	int rc = 0;
	tf->is_stdin = strcmp(path, "-") == 0;
	if (tf->is_stdin && tf->opts.reread) {
		rc = spool(tf, 0, err, errlen);
		if (rc)
			goto fail;
		goto opened;
	}
	if (tf->is_stdin) {
		fpl_tensor_kind k = tf->opts.kind;
		if (k == FPL_TK_AUTO)
			k = tf->opts.dtype != FPL_DT_UNKNOWN && tf->opts.dtype != FPL_DT_TEXT
				    ? FPL_TK_RAW : FPL_TK_TEXT;
		if (k != FPL_TK_RAW && k != FPL_TK_TEXT) {
			rc = io_fail(err, errlen, FPL_EUNSUPPORTED,
				     "stdin: only raw and text input can be read from stdin");
			goto fail;
		}
		tf->kind = k;
		if ((rc = check_opts(tf, err, errlen)))
			goto fail;
		tf->fd = 0;
		tf->sequential = 1;
		rc = k == FPL_TK_RAW ? io_raw_open(tf, err, errlen) : io_text_open(tf, err, errlen);
		if (rc)
			goto fail;
		*out = tf;
		return 0;
	}

	tf->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (tf->fd < 0) {
		rc = io_fail(err, errlen, FPL_EIO, "cannot open '%s': %s", tf->shown, strerror(errno));
		goto fail;
	}
	struct stat sb;
	if (fstat(tf->fd, &sb) < 0) {
		rc = io_fail(err, errlen, FPL_EIO, "%s: %s", tf->shown, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(sb.st_mode)) {
		rc = io_fail(err, errlen, FPL_EIO, "%s: is a directory", tf->shown);
		goto fail;
	}
	tf->size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
	tf->sequential = !S_ISREG(sb.st_mode);
	if (tf->sequential && tf->opts.reread) {
		rc = spool(tf, tf->fd, err, errlen);
		if (rc)
			goto fail;
	}
opened:
	tf->kind = tf->opts.kind == FPL_TK_AUTO ? detect(tf) : tf->opts.kind;
	if ((rc = check_opts(tf, err, errlen)))
		goto fail;
	if (tf->sequential && tf->kind != FPL_TK_RAW && tf->kind != FPL_TK_TEXT) {
		rc = io_fail(err, errlen, FPL_EUNSUPPORTED,
			     "%s: not a regular file: .npy, .npz and .safetensors files are read "
			     "at offsets; save it to a file first", tf->shown);
		goto fail;
	}
	switch (tf->kind) {
	case FPL_TK_NPY: rc = io_npy_open(tf, err, errlen); break;
	case FPL_TK_NPZ:
		if (!tf->spooled) {
			close(tf->fd);
			tf->fd = -1;
		}
		rc = io_npz_open(tf, err, errlen);
		break;
	case FPL_TK_SAFETENSORS: rc = io_safetensors_open(tf, err, errlen); break;
	case FPL_TK_RAW: rc = io_raw_open(tf, err, errlen); break;
	case FPL_TK_TEXT:
		/* a regular file is reopened by each stream; a pipe or FIFO
		 * cannot be (a second open of a FIFO waits for a new writer),
		 * so its descriptor is kept, as a spooled copy's is */
		if (!tf->spooled && !tf->sequential) {
			close(tf->fd);
			tf->fd = -1;
		}
		rc = io_text_open(tf, err, errlen);
		break;
	default: rc = io_fail(err, errlen, FPL_EINVAL, "%s: bad file kind", tf->shown);
	}
	if (rc)
		goto fail;
	*out = tf;
	return 0;
fail:
	fpl_tensor_close(tf);
	return rc;
}

FPL_API void fpl_tensor_close(fpl_tensor_file *tf)
{
	if (!tf)
		return;
	if (tf->fd > 0)
		close(tf->fd);
	if (tf->zip)
		zip_discard(tf->zip);
	free(tf->t);
	free(tf->path);
	free(tf->shown);
	free(tf);
}

FPL_API size_t fpl_tensor_count(const fpl_tensor_file *tf)
{
	return tf ? tf->n : 0;
}

FPL_API const fpl_tensor_info *fpl_tensor_get(const fpl_tensor_file *tf, size_t i)
{
	return tf && i < tf->n ? &tf->t[i].info : NULL;
}

FPL_API long fpl_tensor_find(const fpl_tensor_file *tf, const char *name)
{
	if (!tf || !name)
		return -1;
	for (size_t i = 0; i < tf->n; i++)
		if (strcmp(tf->t[i].info.name, name) == 0)
			return (long)i;
	return -1;
}

const char *io_where(const fpl_tensor_stream *s, char *buf, size_t cap)
{
	const fpl_tensor_file *tf = s->tf;
	char name[FPL_ESCAPED_NAME_MAX];
	if (tf->kind == FPL_TK_NPZ || tf->kind == FPL_TK_SAFETENSORS)
		snprintf(buf, cap, "%s: tensor '%s'", tf->shown,
			 fpl_escape(name, sizeof name, s->t->info.name));
	else
		snprintf(buf, cap, "%s", tf->is_stdin ? "stdin" : tf->shown);
	return buf;
}

FPL_API int fpl_tensor_stream_open(fpl_tensor_stream **out, fpl_tensor_file *tf, size_t i,
				   char *err, size_t errlen)
{
	if (!out || !tf || i >= tf->n)
		return io_fail(err, errlen, FPL_EINVAL, "no tensor %zu", i);
	*out = NULL;
	struct io_tensor *t = &tf->t[i];
	const char *tn = t->info.name;
	int multi = tf->kind == FPL_TK_NPZ || tf->kind == FPL_TK_SAFETENSORS;
	if (t->bad[0])
		return multi ? io_fail(err, errlen, FPL_EUNSUPPORTED, "%s: tensor '%s': %s",
				       tf->shown, tn, t->bad)
			     : io_fail(err, errlen, FPL_EUNSUPPORTED, "%s: %s", tf->shown, t->bad);
	if (tf->kind == FPL_TK_TEXT && tf->sequential && tf->streamed)
		return io_fail(err, errlen, FPL_EUNSUPPORTED,
			       "%s: a pipe can be read only once (the reader spools it when "
			       "asked to read twice)", tf->is_stdin ? "stdin" : tf->shown);
	fpl_tensor_stream *s = calloc(1, sizeof *s);
	if (!s)
		return io_fail(err, errlen, FPL_ENOMEM, "out of memory");
	s->tf = tf;
	s->t = t;
	s->fd = -1;
	s->dtype = t->info.dtype;
	s->be = t->info.big_endian;
	s->esize = fpl_dtype_size(s->dtype);
	s->left = t->info.count;
	int rc = 0;
	if (tf->kind == FPL_TK_TEXT) {
		rc = io_text_stream_open(s, err, errlen);
		if (rc) {
			free(s);
			return rc;
		}
		tf->streamed = tf->sequential;
		*out = s;
		return 0;
	}
	s->buf = malloc(IO_BUFBYTES);
	if (!s->buf) {
		free(s);
		return io_fail(err, errlen, FPL_ENOMEM, "out of memory");
	}
	if (tf->kind == FPL_TK_NPZ) {
		zip_file_t *zf = zip_fopen_index(tf->zip, (zip_uint64_t)t->member, 0);
		if (!zf) {
			rc = io_fail(err, errlen, FPL_EIO, "%s: tensor '%s': %s", tf->shown, tn,
				     zip_strerror(tf->zip));
			goto fail;
		}
		s->zf = zf;
		/* skip the member's .npy header */
		uint64_t skip = t->data_off;
		while (skip > 0) {
			size_t n = skip < IO_BUFBYTES ? (size_t)skip : IO_BUFBYTES;
			zip_int64_t r = zip_fread(zf, s->buf, n);
			if (r <= 0) {
				rc = io_fail(err, errlen, FPL_EPARSE, "%s: tensor '%s': %s", tf->shown,
					     tn, r < 0 ? zip_file_strerror(zf) : "truncated member");
				goto fail;
			}
			skip -= (uint64_t)r;
		}
	} else {
		s->fd = tf->fd;
		s->pos = t->data_off;
		s->sequential = tf->sequential;
		if (s->sequential) {
			if (s->left == 0)
				s->left = UINT64_MAX;	/* to the end */
			if (tf->streamed) {
				rc = io_fail(err, errlen, FPL_EUNSUPPORTED,
					     "%s: a pipe can be read only once", tf->shown);
				goto fail;
			}
			tf->streamed = 1;
			/* skip --offset bytes */
			uint64_t skip = t->data_off;
			while (skip > 0) {
				size_t n = skip < IO_BUFBYTES ? (size_t)skip : IO_BUFBYTES;
				ssize_t r = read(s->fd, s->buf, n);
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0) {
					rc = io_fail(err, errlen, FPL_EPARSE,
						     "%s: offset %llu beyond the end of the input",
						     tf->is_stdin ? "stdin" : tf->shown,
						     (unsigned long long)t->data_off);
					goto fail;
				}
				skip -= (uint64_t)r;
			}
		}
	}
	*out = s;
	return 0;
fail:
	fpl_tensor_stream_close(s);
	return rc;
}

/* Read up to n bytes into dst from the stream's source; returns bytes read
 * (short only at the end of the source) or -1 with a message. */
static long long src_read(fpl_tensor_stream *s, void *dst, size_t n, char *err, size_t errlen)
{
	char where[FPL_TENSOR_NAME_MAX + 300];
	if (s->zf) {
		size_t done = 0;
		while (done < n) {
			zip_int64_t r = zip_fread(s->zf, (char *)dst + done, n - done);
			if (r < 0)
				return io_fail(err, errlen, -1, "%s: %s", io_where(s, where, sizeof where),
					       zip_file_strerror(s->zf));
			if (r == 0)
				break;
			done += (size_t)r;
		}
		return (long long)done;
	}
	if (s->sequential) {
		size_t done = 0;
		while (done < n) {
			ssize_t r = read(s->fd, (char *)dst + done, n - done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return io_fail(err, errlen, -1, "%s: %s", io_where(s, where, sizeof where),
					       strerror(errno));
			if (r == 0)
				break;
			done += (size_t)r;
		}
		return (long long)done;
	}
	long long r = io_pread_full(s->fd, dst, n, s->pos);
	if (r < 0)
		return io_fail(err, errlen, -1, "%s: %s", io_where(s, where, sizeof where),
			       strerror(errno));
	s->pos += (uint64_t)r;
	return r;
}

static int truncated(fpl_tensor_stream *s, char *err, size_t errlen)
{
	char where[FPL_TENSOR_NAME_MAX + 300];
	return io_fail(err, errlen, FPL_EPARSE,
		       "%s: truncated data: %llu elements expected, only %llu present",
		       io_where(s, where, sizeof where),
		       (unsigned long long)s->t->info.count, (unsigned long long)s->done);
}

/* At the end of an npz member, read once more so that libzip reaches the
 * member's end and checks its CRC (it does so only then). */
static int zip_end(fpl_tensor_stream *s, char *err, size_t errlen)
{
	if (!s->zf)
		return 0;
	unsigned char c;
	zip_int64_t r = zip_fread(s->zf, &c, 1);
	zip_fclose(s->zf);
	s->zf = NULL;
	if (r != 0) {
		char where[FPL_TENSOR_NAME_MAX + 300];
		return io_fail(err, errlen, FPL_EPARSE, "%s: %s", io_where(s, where, sizeof where),
			       r < 0 ? "corrupt member (CRC or inflate error)"
				     : "member longer than its header says");
	}
	return 0;
}

/* io_decode_int's note: an integer binary64 cannot hold, for the list. */
static int note_int(void *ctx, size_t pos, const fpl_wide *w)
{
	return io_note_inexact(ctx, pos, w);
}

static int stream_read(fpl_tensor_stream *s, double *d, float *f, size_t cap, size_t *got,
		       char *err, size_t errlen)
{
	if (!s || !got || (cap && !d && !f))
		return io_fail(err, errlen, FPL_EINVAL, "bad stream arguments");
	*got = 0;
	if (s->fp || s->tf->kind == FPL_TK_TEXT)
		return io_text_read(s, d, f, cap, got, err, errlen);
	s->ninx = 0;
	uint64_t want = s->left < cap ? s->left : cap;
	if (want == 0)
		return 0;
	size_t es = s->esize;

	/* Fast path: little-endian f32 to f32 straight into the caller's buffer. */
	if (f && s->dtype == FPL_DT_F32 && !s->be && !s->sequential) {
		long long r = src_read(s, f, (size_t)want * 4, err, errlen);
		if (r < 0)
			return FPL_EIO;
		s->done += (uint64_t)r / 4;
		s->left -= (uint64_t)r / 4;
		*got = (size_t)r / 4;
		if ((uint64_t)r != want * 4)
			return truncated(s, err, errlen);
		return s->left == 0 ? zip_end(s, err, errlen) : 0;
	}

	size_t per = IO_BUFBYTES / es;
	size_t total = 0;
	while (total < want) {
		size_t n = want - total < per ? (size_t)(want - total) : per;
		long long r;
		if (s->sequential) {
			r = src_read(s, s->buf + s->carry, n * es - s->carry, err, errlen);
			if (r < 0)
				return FPL_EIO;
			r += (long long)s->carry;
		} else {
			r = src_read(s, s->buf, n * es, err, errlen);
			if (r < 0)
				return FPL_EIO;
		}
		size_t whole = (size_t)r / es;
		if (fpl_dtype_is_int(s->dtype)) {
			if (io_decode_int(s->dtype, s->be, s->buf, d ? d + total : NULL,
					  f ? f + total : NULL, whole, total, note_int, s)) {
				char where[FPL_TENSOR_NAME_MAX + 300];
				*got = total;
				return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory",
					       io_where(s, where, sizeof where));
			}
		} else if (f)
			io_decode_f32(s->dtype, s->be, s->buf, f + total, whole);
		else
			io_decode_f64(s->dtype, s->be, s->buf, d + total, whole);
		total += whole;
		s->done += whole;
		if (s->left != UINT64_MAX)
			s->left -= whole;
		if (whole < n) {
			size_t rest = (size_t)r - whole * es;
			*got = total;
			if (s->left == UINT64_MAX) {	/* stdin to its end */
				if (rest) {
					char where[FPL_TENSOR_NAME_MAX + 300];
					return io_fail(err, errlen, FPL_EPARSE,
						       "%s: %zu trailing bytes after %llu %s elements",
						       io_where(s, where, sizeof where), rest,
						       (unsigned long long)s->done,
						       fpl_dtype_name(s->dtype));
				}
				s->left = 0;
				s->t->info.count = s->done;
				return 0;
			}
			return truncated(s, err, errlen);
		}
		s->carry = 0;
	}
	*got = total;
	return s->left == 0 ? zip_end(s, err, errlen) : 0;
}

FPL_API int fpl_tensor_stream_read(fpl_tensor_stream *s, double *buf, size_t cap, size_t *got,
				   char *err, size_t errlen)
{
	return stream_read(s, buf, NULL, cap, got, err, errlen);
}

FPL_API int fpl_tensor_stream_read_f32(fpl_tensor_stream *s, float *buf, size_t cap,
				       size_t *got, char *err, size_t errlen)
{
	return stream_read(s, NULL, buf, cap, got, err, errlen);
}

FPL_API void fpl_tensor_stream_close(fpl_tensor_stream *s)
{
	if (!s)
		return;
	if (s->zf)
		zip_fclose(s->zf);
	if (s->fp && s->own_fp)
		fclose(s->fp);
	free(s->line);
	free(s->buf);
	free(s->inx);
	free(s);
}

FPL_API const fpl_inexact *fpl_tensor_stream_inexact(const fpl_tensor_stream *s, size_t *n)
{
	*n = s ? s->ninx : 0;
	return s ? s->inx : NULL;
}
