/* SPDX-License-Identifier: MIT */
/*
 * allreduce_schedule.c - the all-reduce schedules of fplab/allreduce.h as
 * data: fpl_ar_schedule_build and the algorithm names.
 *
 * The invariant a reader must know: transfers are emitted in the order
 * the header states (by step, then src, then dst), so the simulator, the
 * MPI runner and the tests can walk the list without sorting it; empty
 * ranges are never emitted, but step numbers follow the header's
 * formulas whether or not a step has a transfer left.
 */
#include <stdlib.h>
#include <string.h>

#include <fplab/allreduce.h>
#include <fplab/error.h>

static const char *const names[FPL_AR_COUNT] = { "sequential", "ring", "tree", "hier",
						  "hier-ring" };

const char *fpl_ar_algo_name(fpl_ar_algo a)
{
	return (unsigned)a < FPL_AR_COUNT ? names[a] : "?";
}

int fpl_ar_algo_grouped(fpl_ar_algo a)
{
	return a == FPL_AR_HIER || a == FPL_AR_HIER_RING;
}

int fpl_ar_algo_parse(const char *s, fpl_ar_algo *a)
{
	int i;

	if (!s || !a)
		return FPL_EINVAL;
	for (i = 0; i < FPL_AR_COUNT; i++)
		if (!strcmp(s, names[i])) {
			*a = (fpl_ar_algo)i;
			return 0;
		}
	return FPL_ENOTFOUND;
}

/* A growing transfer list. */
typedef struct xlist {
	fpl_ar_xfer *x;
	size_t n, cap;
	int oom;
} xlist;

static void push(xlist *L, uint32_t step, uint32_t src, uint32_t dst, uint64_t lo, uint64_t hi,
		 fpl_ar_op op)
{
	if (lo >= hi || L->oom)
		return;
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 64;
		fpl_ar_xfer *p = realloc(L->x, cap * sizeof *p);
		if (!p) {
			L->oom = 1;
			return;
		}
		L->x = p;
		L->cap = cap;
	}
	L->x[L->n++] = (fpl_ar_xfer){ step, src, dst, lo, hi, op };
}

/* Chunk c of Q over n elements: [floor(c*n/Q), floor((c+1)*n/Q)). */
static uint64_t cut(uint64_t c, uint64_t n, uint64_t Q)
{
	return (uint64_t)((unsigned __int128)c * n / Q);
}

/*
 * A ring over Q members, member q being node q*stride, starting at step
 * s0; returns the next free step (s0 + 2(Q-1)).
 */
static uint32_t ring(xlist *L, uint32_t s0, uint32_t Q, uint32_t stride, uint64_t n)
{
	uint32_t s, q;

	for (s = 0; Q > 1 && s + 1 < Q; s++)
		for (q = 0; q < Q; q++) {
			uint64_t c = (q + Q - s % Q) % Q;	/* (q - s) mod Q */
			push(L, s0 + s, q * stride, ((q + 1) % Q) * stride, cut(c, n, Q),
			     cut(c + 1, n, Q), FPL_AR_ADD);
		}
	for (s = 0; Q > 1 && s + 1 < Q; s++)
		for (q = 0; q < Q; q++) {
			uint64_t c = (q + 1 + Q - s % Q) % Q;	/* (q + 1 - s) mod Q */
			push(L, s0 + Q - 1 + s, q * stride, ((q + 1) % Q) * stride, cut(c, n, Q),
			     cut(c + 1, n, Q), FPL_AR_COPY);
		}
	return Q > 1 ? s0 + 2 * (Q - 1) : s0;
}

static uint32_t sequential(xlist *L, uint32_t P, uint64_t n)
{
	uint32_t i;

	if (P == 1)
		return 0;
	for (i = 1; i < P; i++)
		push(L, i - 1, i, 0, 0, n, FPL_AR_ADD);
	for (i = 1; i < P; i++)
		push(L, P - 1, 0, i, 0, n, FPL_AR_COPY);
	return P;
}

static uint32_t tree(xlist *L, uint32_t P, uint64_t n)
{
	uint32_t levels = 0, s, i;

	while (levels < 32 && (1ull << levels) < P)
		levels++;
	for (s = 0; s < levels; s++) {
		uint64_t h = 1ull << s;
		for (i = 0; i < P; i++)
			if (i % (2 * h) == h)
				push(L, s, i, (uint32_t)(i - h), 0, n, FPL_AR_ADD);
	}
	for (s = levels; s-- > 0;) {
		uint64_t h = 1ull << s;
		for (i = 0; i < P; i++)
			if (i % (2 * h) == 0 && i + h < P)
				push(L, 2 * levels - 1 - s, i, (uint32_t)(i + h), 0, n, FPL_AR_COPY);
	}
	return 2 * levels;
}

static uint32_t hier(xlist *L, uint32_t P, uint32_t G, uint64_t n)
{
	uint32_t Q = P / G, t, q, m, s;

	for (t = 0; t + 1 < G; t++)
		for (q = 0; q < Q; q++)
			push(L, t, q * G + t + 1, q * G, 0, n, FPL_AR_ADD);
	s = ring(L, G - 1, Q, G, n);
	if (G == 1)
		return s;
	for (q = 0; q < Q; q++)
		for (m = 1; m < G; m++)
			push(L, s, q * G, q * G + m, 0, n, FPL_AR_COPY);
	return s + 1;
}

/*
 * hier-ring: the APS paper's three stages with every step moving one
 * chunk per link, as a ring does.  Q groups of G, member m of group q is
 * node q*G + m, the leader m = 0; chunks of a group are G chunks of n.
 */
static uint32_t hier_ring(xlist *L, uint32_t P, uint32_t G, uint64_t n)
{
	uint32_t Q = P / G, q, m, s, t, s1;

	/* a ring reduce-scatter in each group: member m ends with chunk (m+1) mod G */
	for (s = 0; s + 1 < G; s++)
		for (q = 0; q < Q; q++)
			for (m = 0; m < G; m++) {
				uint64_t c = (m + G - s % G) % G;
				push(L, s, q * G + m, q * G + (m + 1) % G, cut(c, n, G),
				     cut(c + 1, n, G), FPL_AR_ADD);
			}
	/* gather: member t+1 sends its chunk (t+2) mod G to the leader */
	for (t = 0; t + 1 < G; t++)
		for (q = 0; q < Q; q++) {
			uint64_t c = (t + 2) % G;
			push(L, G - 1 + t, q * G + t + 1, q * G, cut(c, n, G), cut(c + 1, n, G),
			     FPL_AR_COPY);
		}
	s1 = ring(L, G > 1 ? 2 * (G - 1) : 0, Q, G, n);
	/* scatter: the leader sends chunk (t+2) mod G to member t+1 */
	for (t = 0; t + 1 < G; t++)
		for (q = 0; q < Q; q++) {
			uint64_t c = (t + 2) % G;
			push(L, s1 + t, q * G, q * G + t + 1, cut(c, n, G), cut(c + 1, n, G),
			     FPL_AR_COPY);
		}
	/* a ring all-gather in each group */
	for (s = 0; s + 1 < G; s++)
		for (q = 0; q < Q; q++)
			for (m = 0; m < G; m++) {
				uint64_t c = (m + 1 + G - s % G) % G;
				push(L, s1 + G - 1 + s, q * G + m, q * G + (m + 1) % G, cut(c, n, G),
				     cut(c + 1, n, G), FPL_AR_COPY);
			}
	return G > 1 ? s1 + 2 * (G - 1) : s1;
}

int fpl_ar_schedule_build(fpl_ar_schedule *s, fpl_ar_algo algo, uint32_t nodes,
			  uint32_t group, uint64_t n)
{
	xlist L = { NULL, 0, 0, 0 };
	uint32_t steps;

	if (!s)
		return FPL_EINVAL;
	memset(s, 0, sizeof *s);
	if (nodes == 0 || (unsigned)algo >= FPL_AR_COUNT)
		return FPL_EINVAL;
	if (fpl_ar_algo_grouped(algo) && (group == 0 || nodes % group != 0))
		return FPL_EINVAL;
	switch (algo) {
	case FPL_AR_SEQUENTIAL: steps = sequential(&L, nodes, n); break;
	case FPL_AR_RING: steps = ring(&L, 0, nodes, 1, n); break;
	case FPL_AR_TREE: steps = tree(&L, nodes, n); break;
	case FPL_AR_HIER: steps = hier(&L, nodes, group, n); break;
	default: steps = hier_ring(&L, nodes, group, n); break;
	}
	if (L.oom) {
		free(L.x);
		return FPL_ENOMEM;
	}
	s->algo = algo;
	s->nodes = nodes;
	s->group = fpl_ar_algo_grouped(algo) ? group : 0;
	s->n = n;
	s->steps = steps;
	s->x = L.x;
	s->nx = L.n;
	return 0;
}

void fpl_ar_schedule_release(fpl_ar_schedule *s)
{
	if (!s)
		return;
	free(s->x);
	s->x = NULL;
	s->nx = 0;
}
