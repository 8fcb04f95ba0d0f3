/* SPDX-License-Identifier: MIT */
/*
 * text.c - text tensors: numbers (decimal or C99 hex float, inf, nan, any
 * sign) separated by blanks, tabs, newlines or one comma (CSV from
 * np.savetxt(..., delimiter=',')), '#' starts a comment that runs to the
 * end of the line.  An empty field ("1,,2", a leading or trailing comma)
 * is an error naming the line.  One tensor per file; its count is known once
 * the stream has reached the end.
 *
 * Invariant: a token that is not entirely a number is an error naming the
 * file, the line and the token; nothing is skipped silently.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"

int io_text_open(fpl_tensor_file *tf, char *err, size_t errlen)
{
	int rc = io_tensors_alloc(tf, 1);
	if (rc)
		return io_fail(err, errlen, rc, "%s: out of memory", tf->shown);
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
	if (tf->spooled || (tf->sequential && !tf->is_stdin)) {
		/* a private copy (read from its start) or a pipe, read once */
		int fd = dup(tf->fd);
		if (fd < 0 || (tf->spooled && lseek(fd, 0, SEEK_SET) < 0) ||
		    !(s->fp = fdopen(fd, "r"))) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return io_fail(err, errlen, FPL_EIO, "%s: %s",
				       tf->is_stdin ? "stdin" : tf->shown, strerror(e));
		}
		s->own_fp = 1;
	} else if (tf->is_stdin) {
		s->fp = stdin;
		s->own_fp = 0;
	} else {
		s->fp = fopen(tf->path, "r");
		if (!s->fp)
			return io_fail(err, errlen, FPL_EIO, "cannot open '%s': %s", tf->shown,
				       strerror(errno));
		s->own_fp = 1;
	}
	s->left = UINT64_MAX;
	if (fpl_format_lookup(&s->f32fmt, "fp32"))
		return io_fail(err, errlen, FPL_EINVAL, "fp32 is missing from the catalogue");
	fpl_state_init(&s->f32st, 0);
	return 0;
}

int io_note_inexact(fpl_tensor_stream *s, size_t pos, const fpl_wide *w)
{
	if (s->ninx == s->capinx) {
		size_t cap = s->capinx ? 2 * s->capinx : 64;
		fpl_inexact *v = realloc(s->inx, cap * sizeof *v);
		if (!v)
			return -1;
		s->inx = v;
		s->capinx = cap;
	}
	s->inx[s->ninx].pos = pos;
	s->inx[s->ninx].w = *w;
	s->ninx++;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int io_text_read(fpl_tensor_stream *s, double *d, float *f, size_t cap, size_t *got,
		 char *err, size_t errlen)
{
	const char *name = s->tf->is_stdin ? "stdin" : s->tf->shown;
	size_t n = 0;

	s->ninx = 0;
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
		if (*p == ',') {
			*got = n;
			s->done += n;
			return io_fail(err, errlen, FPL_EPARSE, "%s: line %ld: empty field", name,
				       s->lineno);
		}
		char *tok = p;
		while (*p && !is_blank(*p) && *p != ',')
			p++;
		char save = *p;
		*p = 0;
		double v;
		fpl_wide w;
		int prc = fpl_parse_number(tok, &v, &w);
		if (prc < 0) {
			char shown[4 * 60 + 1];
			size_t len = strlen(tok);
			*got = n;
			s->done += n;
			if (len > 60)
				tok[60] = 0;
			fpl_escape(shown, sizeof shown, tok);
			int rc = io_fail(err, errlen, FPL_EPARSE, "%s: line %ld: '%s%s' is not a number",
					 name, s->lineno, shown, len > 60 ? "..." : "");
			*p = save;
			return rc;
		}
		*p = save;
		while (*p && is_blank(*p))
			p++;
		if (*p == ',') {	/* one separator: a field must follow */
			p++;
			while (*p && is_blank(*p))
				p++;
			if (!*p || *p == ',') {
				*got = n;
				s->done += n;
				return io_fail(err, errlen, FPL_EPARSE,
					       "%s: line %ld: empty field", name, s->lineno);
			}
		}
		s->cur = p;
		if (prc > 0) {
			if (io_note_inexact(s, n, &w)) {
				*got = n;
				s->done += n;
				return io_fail(err, errlen, FPL_ENOMEM, "%s: out of memory", name);
			}
			if (f)	/* the number rounded once to binary32, not via binary64 */
				v = fpl_round_wide(&s->f32fmt, &w, FPL_RND_NE, &s->f32st);
		}
		if (f)
			f[n++] = (float)v;
		else
			d[n++] = v;
	}
	s->done += n;
	*got = n;
	return 0;
}
