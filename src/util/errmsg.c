/* SPDX-License-Identifier: MIT */
/* util/errmsg.c - see util/errmsg.h. */
#include <stdarg.h>
#include <stdio.h>

#include "util/errmsg.h"

int fpl__fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return status;
}
