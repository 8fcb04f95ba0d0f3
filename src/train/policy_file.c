/* SPDX-License-Identifier: MIT */
/*
 * policy_file.c - fpl_train_policy_load: a policy file of `key = value`
 * lines (fplab-train(1)), `#` comments to the end of a line, blank lines,
 * an optional first key `preset = NAME`, every other key applied in order
 * through fpl_train_policy_set over the preset (fp32 when none is named).
 *
 * The invariant: the caller's policy changes only when the whole file
 * reads; the first bad line is reported as "FILE:LINE: message" (a byte
 * no text holds, a NUL or a control character, as FILE:LINE:COLUMN).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <fplab/error.h>

#include "train/train_internal.h"
#include "util/errmsg.h"

#define fail fpl__fail

/* s with its leading and trailing blanks cut (in place). */
static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* The file's base name without its extension, into name. */
static void base_name(char *name, size_t size, const char *path)
{
	const char *b = strrchr(path, '/'), *dot;
	size_t len;

	b = b ? b + 1 : path;
	dot = strrchr(b, '.');
	len = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	if (len >= size)
		len = size - 1;
	memcpy(name, b, len);
	name[len] = 0;
}

/* The next line of f into line (its newline dropped), *len its length.
 * 1, 0 at the end of the file, -1 for a line of size bytes or more. */
static int read_line(FILE *f, char *line, size_t size, size_t *len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (n + 1 == size)
			return -1;
		line[n++] = (char)c;
	}
	line[n] = 0;
	*len = n;
	return c == EOF && n == 0 ? 0 : 1;
}

/* The column (1-based) of line's first byte that no text line holds (a
 * NUL, a control character but tab, CR, VT and FF), or 0. */
static size_t binary_byte(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f)
			return i + 1;
	}
	return 0;
}

int fpl_train_policy_load(fpl_train_policy *p, const char *path, char *err, size_t errlen)
{
	fpl_train_policy t;
	char line[1024], msg[512];
	unsigned long ln = 0;
	size_t len, col;
	int keys = 0, rc = 0, got;
	FILE *f;

	if (err && errlen)
		err[0] = 0;
	if (!p || !path)
		return fail(err, errlen, FPL_EINVAL, "no policy or path");
	f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, FPL_EIO, "%s: cannot open: %s", path, strerror(errno));
	fpl_train_policy_preset(&t, "fp32");
	while ((got = read_line(f, line, sizeof line, &len)) != 0) {
		char *s, *eq, *key, *val;

		ln++;
		if (got < 0) {
			rc = fail(err, errlen, FPL_EPARSE, "%s:%lu: line too long (%zu bytes at "
				  "most)", path, ln, sizeof line - 1);
			break;
		}
		if ((col = binary_byte(line, len))) {
			rc = fail(err, errlen, FPL_EPARSE, "%s:%lu:%zu: byte 0x%02x: not a text "
				  "file", path, ln, col, (unsigned char)line[col - 1]);
			break;
		}
		if ((s = strchr(line, '#')))
			*s = 0;
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			rc = fail(err, errlen, FPL_EPARSE, "%s:%lu: expected 'key = value'", path, ln);
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		if (!*key || !*val) {
			rc = fail(err, errlen, FPL_EPARSE, "%s:%lu: expected 'key = value'", path, ln);
			break;
		}
		if (!strcmp(key, "preset")) {
			if (keys) {
				rc = fail(err, errlen, FPL_EPARSE,
					  "%s:%lu: preset must be the first key", path, ln);
				break;
			}
			if (fpl_train_policy_preset(&t, val)) {
				rc = fail(err, errlen, FPL_ENOTFOUND, "%s:%lu: unknown preset '%s'",
					  path, ln, val);
				break;
			}
		} else if ((rc = fpl_train_policy_set(&t, key, val, msg, sizeof msg))) {
			fail(err, errlen, rc, "%s:%lu: %s", path, ln, msg);
			break;
		}
		keys++;
	}
	if (!rc && ferror(f))
		rc = fail(err, errlen, FPL_EIO, "%s: read error", path);
	fclose(f);
	if (rc)
		return rc;
	base_name(t.name, sizeof t.name, path);
	*p = t;
	return 0;
}
