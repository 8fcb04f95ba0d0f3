/* SPDX-License-Identifier: MIT */
/*
 * util/scratch.h - large temporary buffers that are reused, not returned
 * to the system, between calls of one thread.
 *
 * A GEMM of a few hundred rows needs a few MiB of temporaries per call;
 * malloc hands them back to the kernel on free (heap trimming, munmap),
 * and the next call pays a page fault per 4 KiB again, which costs more
 * than the arithmetic.  fpl__scratch_free keeps up to FPL__SCRATCH_KEEP
 * blocks in a per-thread cache; fpl__scratch_alloc reuses the smallest
 * cached block that is large enough.  A thread's cache is freed when it
 * exits; the main thread's at process exit (reachable until then).
 * Contents of a reused block are whatever was left there.
 */
#ifndef FPLAB_UTIL_SCRATCH_H
#define FPLAB_UTIL_SCRATCH_H

#include <stddef.h>

#define FPL__SCRATCH_KEEP 6

/* n bytes (n = 0 gives a valid 1-byte block), aligned for any type, or
 * NULL when out of memory. */
void *fpl__scratch_alloc(size_t n);
/* Give p (from fpl__scratch_alloc, or NULL) back to this thread's cache. */
void fpl__scratch_free(void *p);

#endif
