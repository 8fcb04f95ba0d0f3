/* SPDX-License-Identifier: MIT */
/*
 * util/sbuf.h - appending formatted text to a caller's buffer, as
 * snprintf does: what does not fit is cut (the buffer stays
 * NUL-terminated when size > 0), and len counts the bytes the whole text
 * needs, so a caller can report the size it should have passed.
 */
#ifndef FPLAB_UTIL_SBUF_H
#define FPLAB_UTIL_SBUF_H

#include <stddef.h>

typedef struct fpl__sbuf {
	char *p;		/* may be NULL when size is 0 */
	size_t size, len;
} fpl__sbuf;

void fpl__sbuf_put(fpl__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
