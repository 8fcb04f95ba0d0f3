/* SPDX-License-Identifier: MIT */
/*
 * policy_file.c - fpl_train_policy_load: a policy file of `key = value`
 * lines (fplab-train(1)), `#` comments to the end of a line, blank lines,
 * an optional first key `preset = NAME`, every other key applied in order
 * through fpl_train_policy_set over the preset (fp32 when none is named).
 *
 * The invariant: the caller's policy changes only when the whole file
 * reads; the first bad line is reported as "FILE:LINE: message".
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

int fpl_train_policy_load(fpl_train_policy *p, const char *path, char *err, size_t errlen)
{
	fpl_train_policy t;
	char line[1024], msg[512];
	unsigned long ln = 0;
	int keys = 0, rc = 0;
	FILE *f;

	if (err && errlen)
		err[0] = 0;
	if (!p || !path)
		return fail(err, errlen, FPL_EINVAL, "no policy or path");
	f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, FPL_EIO, "%s: cannot open: %s", path, strerror(errno));
	fpl_train_policy_preset(&t, "fp32");
	while (fgets(line, sizeof line, f)) {
		char *s, *eq, *key, *val;

		ln++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = fail(err, errlen, FPL_EPARSE, "%s:%lu: line too long", path, ln);
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
