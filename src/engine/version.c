/* SPDX-License-Identifier: MIT */
/* version.c - the version of the linked library. */
#include <fplab/version.h>

const char *fpl_version(void)
{
	return FPL_VERSION_STRING;
}
