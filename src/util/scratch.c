/* SPDX-License-Identifier: MIT */
/*
 * util/scratch.c - the per-thread cache of util/scratch.h.
 *
 * Invariant: a block's capacity is stored in the 64 bytes before the
 * pointer handed out (keeping 64-byte alignment of the payload); a block
 * is either handed out or in exactly one thread's cache, never both.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/scratch.h"

#define HDR 64

typedef struct cache {
	void *blk[FPL__SCRATCH_KEEP];	/* raw blocks (header included) */
	size_t cap[FPL__SCRATCH_KEEP];	/* payload bytes */
	int n;
} cache;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int key_ok;

static void drop(void *p)
{
	cache *c = p;
	int i;

	for (i = 0; i < c->n; i++)
		free(c->blk[i]);
	free(c);
}

static void make_key(void)
{
	key_ok = pthread_key_create(&key, drop) == 0;
}

/* This thread's cache, created on first use; NULL when it cannot be. */
static cache *get(void)
{
	cache *c;

	pthread_once(&once, make_key);
	if (!key_ok)
		return NULL;
	c = pthread_getspecific(key);
	if (!c && (c = calloc(1, sizeof *c)) && pthread_setspecific(key, c)) {
		free(c);
		c = NULL;
	}
	return c;
}

void *fpl__scratch_alloc(size_t n)
{
	cache *c = get();
	unsigned char *b;
	int i, best = -1;

	if (n == 0)
		n = 1;
	if (c)
		for (i = 0; i < c->n; i++)
			if (c->cap[i] >= n && (best < 0 || c->cap[i] < c->cap[best]))
				best = i;
	if (best >= 0) {
		b = c->blk[best];
		c->n--;
		c->blk[best] = c->blk[c->n];
		c->cap[best] = c->cap[c->n];
		return b + HDR;
	}
	if (n > SIZE_MAX - HDR || posix_memalign((void **)&b, HDR, n + HDR))
		return NULL;
	*(size_t *)b = n;
	return b + HDR;
}

void fpl__scratch_free(void *p)
{
	cache *c;
	unsigned char *b;
	size_t cap;
	int i, small = 0;

	if (!p)
		return;
	b = (unsigned char *)p - HDR;
	cap = *(size_t *)b;
	c = get();
	if (!c) {
		free(b);
		return;
	}
	if (c->n < FPL__SCRATCH_KEEP) {
		c->blk[c->n] = b;
		c->cap[c->n++] = cap;
		return;
	}
	for (i = 1; i < c->n; i++)	/* full: keep the larger ones */
		if (c->cap[i] < c->cap[small])
			small = i;
	if (c->cap[small] < cap) {
		free(c->blk[small]);
		c->blk[small] = b;
		c->cap[small] = cap;
	} else {
		free(b);
	}
}
