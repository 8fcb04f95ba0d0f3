/* SPDX-License-Identifier: MIT */
/*
 * util/gen.c - the seeded generators of util/gen.h.
 *
 * Invariant: a value depends only on (seed, stream, index), never on the
 * thread, the chunking or the caller (the CLI or an MPI rank).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fplab/state.h>

#include "util/gen.h"

/* A whole, non-blank string strtod reads; overflow gives +-inf (then
 * refused as not finite), underflow the rounded value. */
static int number(const char *s, const char *end, double *v)
{
	char buf[128], *e;
	size_t n = (size_t)(end - s);

	if (!n || n >= sizeof buf || s[0] == ' ' || s[0] == '\t')
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	*v = strtod(buf, &e);
	return *e || !isfinite(*v) ? -1 : 0;
}

int fpl__gen_parse(struct fpl__gen *g, const char *s)
{
	static const char *const names[] = { "ones", "uniform", "normal", "lognormal", "ints",
					       "loguniform" };
	size_t len = strcspn(s, ":"), i;
	const char *par, *comma;
	double p, q;

	for (i = 0; i < 6; i++)
		if (strlen(names[i]) == len && !strncmp(s, names[i], len))
			break;
	if (i == 6)
		return -1;
	g->kind = (enum fpl__gen_kind)(FPL__GEN_ONES + i);
	g->p = g->q = 0;
	if (g->kind == FPL__GEN_ONES)
		return s[len] ? -2 : 0;
	par = s[len] ? s + len + 1 : NULL;
	comma = par ? strchr(par, ',') : NULL;
	if (!comma || number(par, comma, &p) || number(comma + 1, comma + 1 + strlen(comma + 1), &q))
		return -2;
	if (g->kind == FPL__GEN_INTS && (p != floor(p) || q != floor(q) || p > q ||
					 fabs(p) > 0x1p40 || fabs(q) > 0x1p40))
		return -2;
	if (g->kind == FPL__GEN_UNIFORM && !(p <= q))
		return -2;
	if (g->kind == FPL__GEN_LOGUNIFORM && !(p <= q && p >= -1074 && q <= 1023))
		return -2;
	if ((g->kind == FPL__GEN_NORMAL || g->kind == FPL__GEN_LOGNORMAL) && !(q >= 0))
		return -2;
	g->p = p;
	g->q = q;
	return 0;
}

/* Uniform in [0, 1): the 53 high bits of a draw. */
static double unit(uint64_t seed, uint64_t stream, uint64_t i)
{
	return (double)(fpl_random_draw(seed, stream, i) >> 11) * 0x1p-53;
}

void fpl__gen_fill(const struct fpl__gen *g, uint64_t seed, uint64_t stream, double *x,
		   size_t n)
{
	uint64_t s = FPL__GEN_STREAM + stream;
	size_t i;

	for (i = 0; i < n; i++) {
		switch (g->kind) {
		case FPL__GEN_UNIFORM:
			x[i] = g->p + (g->q - g->p) * unit(seed, s, i);
			break;
		case FPL__GEN_INTS:
			x[i] = g->p + floor(unit(seed, s, i) * (g->q - g->p + 1));
			break;
		case FPL__GEN_NORMAL:
		case FPL__GEN_LOGNORMAL: {
			/* Box-Muller on draws 2i (in (0, 1]) and 2i + 1 */
			double u1 = 1 - unit(seed, s, 2 * (uint64_t)i);
			double u2 = unit(seed, s, 2 * (uint64_t)i + 1);
			double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

			x[i] = g->p + g->q * z;
			if (g->kind == FPL__GEN_LOGNORMAL)
				x[i] = exp(x[i]);
			break;
		}
		case FPL__GEN_LOGUNIFORM: {
			/* magnitude 2^(A + (B - A) u) from the 53 high bits of the
			 * draw, the sign from its lowest bit (not among them) */
			uint64_t d = fpl_random_draw(seed, s, i);
			double m = exp2(g->p + (g->q - g->p) * ((double)(d >> 11) * 0x1p-53));

			x[i] = d & 1 ? -m : m;
			break;
		}
		default:
			x[i] = 1;
		}
	}
}
