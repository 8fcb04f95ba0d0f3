/* SPDX-License-Identifier: MIT */
/*
 * kernels.c - choosing the kernel set.  The reference set always works;
 * the best set the CPU supports replaces it, unless FPLAB_KERNELS forces
 * one, in which case an unknown or unusable name is an error (array
 * operations then fail), never a silent fallback.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels_internal.h"

static const fpl_kernels *chosen;
static int status;
static char reason[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int avx512_usable(void)
{
#ifdef FPL_HAVE_X86_KERNELS
	const fpl_cpu_features *c = fpl_cpu();
	return c->avx512f && c->avx512dq && c->avx512bw && c->avx512vl && c->fma;
#else
	return 0;
#endif
}

static int select_named(const char *name)
{
	if (!strcmp(name, "ref")) {
		chosen = &fpl__kernels_ref;
		snprintf(reason, sizeof reason, "ref: forced");
		return 0;
	}
	if (!strcmp(name, "avx512")) {
#ifdef FPL_HAVE_X86_KERNELS
		if (avx512_usable()) {
			chosen = &fpl__kernels_avx512;
			snprintf(reason, sizeof reason, "avx512: forced");
			return 0;
		}
		snprintf(reason, sizeof reason,
			 "avx512: forced, but the cpu or os lacks avx512f/dq/bw/vl+fma");
		return FPL_EUNSUPPORTED;
#else
		snprintf(reason, sizeof reason, "avx512: forced, but not compiled in (NATIVE=0)");
		return FPL_EUNSUPPORTED;
#endif
	}
	snprintf(reason, sizeof reason, "'%.60s': unknown kernel set (known: %s)", name,
		 fpl_kernels_compiled());
	return FPL_ENOTFOUND;
}

static void init(void)
{
	const char *env = getenv("FPLAB_KERNELS");

	if (env && *env) {
		status = select_named(env);
		if (status)
			chosen = NULL;
		return;
	}
#ifdef FPL_HAVE_X86_KERNELS
	if (avx512_usable()) {
		chosen = &fpl__kernels_avx512;
		snprintf(reason, sizeof reason, "avx512: cpu and os support avx512f/dq/bw/vl and fma");
		return;
	}
#endif
	chosen = &fpl__kernels_ref;
	snprintf(reason, sizeof reason, "ref: no faster set is supported here");
}

const fpl_kernels *fpl__kernels(void)
{
	pthread_once(&once, init);
	return chosen;
}

const char *fpl_kernels_compiled(void)
{
#ifdef FPL_HAVE_X86_KERNELS
	return "ref avx512";
#else
	return "ref";
#endif
}

const char *fpl_kernels_selected(void)
{
	const fpl_kernels *k = fpl__kernels();
	return k ? k->name : "none";
}

const char *fpl_kernels_reason(void)
{
	fpl__kernels();
	return reason;
}

int fpl_kernels_status(void)
{
	fpl__kernels();
	return status;
}

int fpl_kernels_select(const char *name)
{
	int rc;

	fpl__kernels();
	rc = select_named(name);
	if (!rc)
		status = 0;
	return rc;
}
