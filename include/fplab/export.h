/* SPDX-License-Identifier: MIT */
/* fplab/export.h - symbol visibility: the library builds with
 * -fvisibility=hidden and exports exactly what is marked FPL_API. */
#ifndef FPLAB_EXPORT_H
#define FPLAB_EXPORT_H
#if defined(__GNUC__)
#define FPL_API __attribute__((visibility("default")))
#else
#define FPL_API
#endif
#endif
