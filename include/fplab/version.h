/* SPDX-License-Identifier: MIT */
/* fplab/version.h - library version. */
#ifndef FPLAB_VERSION_H
#define FPLAB_VERSION_H

#include <fplab/export.h>

#define FPL_VERSION_MAJOR 0
#define FPL_VERSION_MINOR 1
#define FPL_VERSION_PATCH 0
#define FPL_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif
/* The version of the library actually linked, e.g. "0.1.0". */
FPL_API const char *fpl_version(void);
#ifdef __cplusplus
}
#endif
#endif
