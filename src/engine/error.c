/* SPDX-License-Identifier: MIT */
/* error.c - the one table of status messages. */
#include <fplab/error.h>

const char *fpl_strerror(int status)
{
	switch (status) {
	case FPL_OK: return "success";
	case FPL_EINVAL: return "invalid argument";
	case FPL_EFORMAT: return "impossible or unsupported format";
	case FPL_ENOTFOUND: return "unknown name";
	case FPL_EIO: return "input/output error";
	case FPL_ENOMEM: return "out of memory";
	case FPL_EPARSE: return "malformed input";
	case FPL_EUNSUPPORTED: return "not supported";
	case FPL_ERANGE: return "out of range";
	default: return "unknown error";
	}
}
