/* SPDX-License-Identifier: MIT */
/*
 * fplab/error.h - status codes.  Library functions that can fail return 0
 * on success or one of these negative codes; they never print or exit.
 * Numeric exceptions are not errors: they are flags in fpl_state.
 */
#ifndef FPLAB_ERROR_H
#define FPLAB_ERROR_H

#include <fplab/export.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	FPL_OK = 0,
	FPL_EINVAL = -1,	/* invalid argument (mode, size, NULL pointer) */
	FPL_EFORMAT = -2,	/* impossible or unsupported format */
	FPL_ENOTFOUND = -3,	/* unknown name */
	FPL_EIO = -4,		/* input/output error (errno is set) */
	FPL_ENOMEM = -5,	/* out of memory */
	FPL_EPARSE = -6,	/* malformed input data */
	FPL_EUNSUPPORTED = -7,	/* valid but not supported (dtype, feature) */
	FPL_ERANGE = -8		/* value or size out of range */
};

/* A static, lower-case message for a status code ("invalid argument"). */
FPL_API const char *fpl_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif
