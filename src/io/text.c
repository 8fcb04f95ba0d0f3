/* SPDX-License-Identifier: MIT */
/*
 * text.c - text tensors: numbers (decimal or C99 hex float, inf, nan, any
 * sign) separated by blanks and newlines, '#' starts a comment that runs
 * to the end of the line.  One tensor per file; its count is known once
 * the stream has reached the end.
 *
 * Invariant: a token that is not entirely a number is an error naming the
 * file, the line and the token; nothing is skipped silently.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int io_text_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	int rc = io_tensors_alloc(tf, 1);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", tf->path);
	struct io_tensor *t = &tf->t[0];
	io_name_from_file(tf, t->info.name, sizeof t->info.name);
	t->info.dtype = FPL_DT_TEXT;
	t->info.ndim = 1;
	t->info.count = 0;	/* known after reading */
	return 0;
}

int io_text_stream_open(fpl_tensor_stream *s, char *err, size_t errlen)
{
	fpl_tensor_file *tf = s->tf;
	if (tf->is_stdin) {
		s->fp = stdin;
		s->own_fp = 0;
	} else {
		s->fp = fopen(tf->path, "r");
		if (!s->fp)
			return io_fail(err, errlen, FPL_EIO, "cannot open '%s': %s", tf->path,
				       strerror(errno));
		s->own_fp = 1;
	}
	s->left = UINT64_MAX;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int io_text_read(fpl_tensor_stream *s, double *d, float *f, size_t cap, size_t *got,
		 char *err, size_t errlen)
{
	const char *name = s->tf->is_stdin ? "stdin" : s->tf->path;
	size_t n = 0;
	while (n < cap && !s->eof) {
		if (!s->cur) {
			errno = 0;
			ssize_t len = getline(&s->line, &s->linecap, s->fp);
			if (len < 0) {
				if (ferror(s->fp)) {
					*got = n;
					return io_fail(err, errlen, FPL_EIO, "%s: %s", name,
						       strerror(errno ? errno : EIO));
				}
				s->eof = 1;
				s->t->info.count = s->done + n;
				break;
			}
			if (memchr(s->line, 0, (size_t)len)) {
				*got = n;
				return io_fail(err, errlen, FPL_EPARSE,
					       "%s: line %ld: NUL byte (binary data? give --dtype)",
					       name, s->lineno + 1);
			}
			s->lineno++;
			char *hash = strchr(s->line, '#');
			if (hash)
				*hash = 0;
			s->cur = s->line;
		}
		char *p = s->cur;
		while (*p && is_blank(*p))
			p++;
		if (!*p) {
			s->cur = NULL;
			continue;
		}
		char *tok = p;
		while (*p && !is_blank(*p))
			p++;
		char save = *p;
		*p = 0;
		char *end;
		double v = strtod(tok, &end);
		if (end == tok || *end) {
			*got = n;
			s->done += n;
			int rc = io_fail(err, errlen, FPL_EPARSE, "%s: line %ld: '%.60s' is not a number",
					 name, s->lineno, tok);
			*p = save;
			return rc;
		}
		*p = save;
		s->cur = p;
		if (f)
			f[n++] = (float)v;
		else
			d[n++] = v;
	}
	s->done += n;
	*got = n;
	return 0;
}
