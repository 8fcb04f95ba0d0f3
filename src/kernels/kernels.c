/* SPDX-License-Identifier: MIT */
/*
 * kernels.c - choosing the kernel set.  The reference set always works;
 * the best set the CPU supports replaces it, unless FPLAB_KERNELS forces
 * one, in which case an unknown or unusable name is an error (array
 * operations then fail), never a silent fallback.
 *
 * Invariant: the selection (table, status, reason) is one immutable record,
 * published through a single pointer with release/acquire atomics.  The
 * first selection runs under pthread_once; fpl_kernels_select() swaps in
 * another finished record.  A reader therefore sees a whole record, old or
 * new, never a half-written one, and records are never freed, so a reason
 * string returned earlier stays valid.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels_internal.h"

typedef struct selection {
	const fpl_kernels *k;	/* NULL: FPLAB_KERNELS named an unusable set */
	int status;		/* 0, or why k is NULL */
	const char *reason;
} selection;

/*
 * The registry: every compiled set with its test of the CPU, best first.
 * The automatic choice is the first usable entry; the reference set is
 * last and always usable.  A new set is one entry here (and its file).
 */
typedef struct kset {
	const char *name;
	const fpl_kernels *k;
	int (*usable)(void);
	const char *needs;	/* what usable() checks, for messages */
	selection forced, autosel;
} kset;

static int always(void)
{
	return 1;
}

#ifdef FPL_HAVE_X86_KERNELS
static int avx512_usable(void)
{
	const fpl_cpu_features *c = fpl_cpu();
	return c->avx512f && c->avx512dq && c->avx512bw && c->avx512vl && c->fma;
}

static int avx2_usable(void)
{
	const fpl_cpu_features *c = fpl_cpu();
	return c->avx2 && c->fma;
}
#endif

static const kset sets[] = {
#ifdef FPL_HAVE_X86_KERNELS
	{ "avx512", &fpl__kernels_avx512, avx512_usable, "avx512f/dq/bw/vl+fma",
	  { &fpl__kernels_avx512, 0, "avx512: forced" },
	  { &fpl__kernels_avx512, 0, "avx512: cpu and os support avx512f/dq/bw/vl and fma" } },
	{ "avx2", &fpl__kernels_avx2, avx2_usable, "avx2+fma",
	  { &fpl__kernels_avx2, 0, "avx2: forced" },
	  { &fpl__kernels_avx2, 0, "avx2: cpu and os support avx2 and fma, not avx-512" } },
#endif
	{ "ref", &fpl__kernels_ref, always, "nothing",
	  { &fpl__kernels_ref, 0, "ref: forced" },
	  { &fpl__kernels_ref, 0, "ref: no faster set is supported here" } },
};
#define NSETS (sizeof sets / sizeof *sets)

/* The failed FPLAB_KERNELS record: written once, inside init(), before it
 * is published; read-only afterwards. */
static selection env_failure;
static char env_reason[160];

static const selection *current;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The record for a forced set `name`, or NULL with the error in *rc and
 * its explanation in why[len] (why may be NULL when len is 0). */
static const selection *select_named(const char *name, int *rc, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < NSETS; i++) {
		if (strcmp(name, sets[i].name))
			continue;
		if (sets[i].usable())
			return &sets[i].forced;
		snprintf(why, len, "%s: forced, but the cpu or os lacks %s", sets[i].name,
			 sets[i].needs);
		*rc = FPL_EUNSUPPORTED;
		return NULL;
	}
#ifndef FPL_HAVE_X86_KERNELS
	if (!strcmp(name, "avx512") || !strcmp(name, "avx2")) {
		snprintf(why, len, "%s: forced, but not compiled in (NATIVE=0)", name);
		*rc = FPL_EUNSUPPORTED;
		return NULL;
	}
#endif
	snprintf(why, len, "'%.60s': unknown kernel set (known: %s)", name, fpl_kernels_compiled());
	*rc = FPL_ENOTFOUND;
	return NULL;
}

static void publish(const selection *s)
{
	__atomic_store_n(&current, s, __ATOMIC_RELEASE);
}

static void init(void)
{
	const char *env = getenv("FPLAB_KERNELS");
	const selection *s;
	int rc = 0;

	if (env && *env) {
		s = select_named(env, &rc, env_reason, sizeof env_reason);
		if (!s) {
			env_failure.k = NULL;
			env_failure.status = rc;
			env_failure.reason = env_reason;
			s = &env_failure;
		}
	} else {
		size_t i = 0;
		while (!sets[i].usable())
			i++;	/* the last entry, ref, is always usable */
		s = &sets[i].autosel;
	}
	publish(s);
}

/* The record in use, after the first selection. */
static const selection *get(void)
{
	pthread_once(&once, init);
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

const fpl_kernels *fpl__kernels(void)
{
	return get()->k;
}

const fpl_kernels *fpl__kernels_get(int *status)
{
	const selection *s = get();

	*status = s->status;
	return s->k;
}

const char *fpl_kernels_compiled(void)
{
#ifdef FPL_HAVE_X86_KERNELS
	return "ref avx2 avx512";
#else
	return "ref";
#endif
}

const char *fpl_kernels_selected(void)
{
	const fpl_kernels *k = get()->k;
	return k ? k->name : "none";
}

const char *fpl_kernels_reason(void)
{
	return get()->reason;
}

int fpl_kernels_status(void)
{
	return get()->status;
}

int fpl_kernels_select(const char *name)
{
	const selection *s;
	int rc = 0;

	if (!name)
		return FPL_EINVAL;
	get();	/* the first selection happens once, before any swap */
	s = select_named(name, &rc, NULL, 0);
	if (!s)
		return rc;
	publish(s);
	return 0;
}
