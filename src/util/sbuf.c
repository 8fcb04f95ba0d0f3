/* SPDX-License-Identifier: MIT */
/* util/sbuf.c - see util/sbuf.h. */
#include <stdarg.h>
#include <stdio.h>

#include "util/sbuf.h"

void fpl__sbuf_put(fpl__sbuf *b, const char *fmt, ...)
{
	const int room = b->p && b->len < b->size;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room ? b->size - b->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
}
