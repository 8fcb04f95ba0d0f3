/* SPDX-License-Identifier: MIT */
/*
 * util/errmsg.h - the one-line error message of the library's readers
 * and parsers: functions that return a status also write what went wrong
 * into a caller's buffer (err, errlen; err may be NULL when errlen is 0).
 */
#ifndef FPLAB_UTIL_ERRMSG_H
#define FPLAB_UTIL_ERRMSG_H

#include <stddef.h>

/* vsnprintf the message into err when errlen > 0; returns status. */
int fpl__fail(char *err, size_t errlen, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
