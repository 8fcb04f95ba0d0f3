/* SPDX-License-Identifier: MIT */
/*
 * escape.c - names from files (tensor names, tokens of text input) made
 * safe to print: a terminal, a TSV row and a one-line message must not be
 * broken by a tab, a newline or an escape sequence hidden in a file.
 *
 * Invariant: the output holds no byte below 0x20 and no 0x7f; a backslash
 * is doubled, so the escaping can be undone.  Bytes of 0x80 and above pass
 * unchanged (UTF-8 names stay readable).
 */
#include <stdio.h>

#include <fplab/tensor.h>

FPL_API char *fpl_escape(char *buf, size_t cap, const char *s)
{
	size_t n = 0;

	if (!buf || cap == 0)
		return buf;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[5];
		const char *add = tmp;
		size_t k;

		switch (c) {
		case '\t': add = "\\t"; break;
		case '\n': add = "\\n"; break;
		case '\r': add = "\\r"; break;
		case '\\': add = "\\\\"; break;
		default:
			if (c < 0x20 || c == 0x7f)
				snprintf(tmp, sizeof tmp, "\\x%02x", c);
			else
				tmp[0] = (char)c, tmp[1] = 0;
		}
		for (k = 0; add[k]; k++)
			;
		if (n + k >= cap)
			break;	/* truncate at a whole escape */
		for (k = 0; add[k]; k++)
			buf[n++] = add[k];
	}
	buf[n] = 0;
	return buf;
}
