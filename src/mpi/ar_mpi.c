/* SPDX-License-Identifier: MIT */
/*
 * ar_mpi.c - one layer's all-reduce as node `rank` of a library schedule,
 * with point-to-point MPI messages carrying packed codes of the
 * communication format (ceil(nbits/8) bytes per value, little-endian:
 * 1 byte for the 8-bit formats), the report's count.
 *
 * The invariant a reader must know: this rank makes exactly the roundings
 * fpl_allreduce makes for its node -- the cast (fpl_ar_round_cast), one
 * fpl_ar_round_send per (step, range) it sends, whatever the number of
 * receivers, and one fpl_ar_round_add per ADD it receives -- with the
 * node state fpl_state_fork(st, &node, rank) and the header's explicit
 * draw indices; and a received value is decode(encode(v)) = v (codec.h:
 * exact for every value of the format, NaNs included).  Within a step
 * every send is rounded and posted before any receive is applied, which
 * is the header's start-of-step snapshot.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ar_mpi.h"

/* The format a layer really travels in (keep_fp32: binary32). */
static const fpl_format *wire_format(const fpl_ar_config *cfg, fpl_format *f32)
{
	if (!cfg->keep_fp32)
		return &cfg->comm;
	fpl_format_ieee(f32, 8, 23);
	return f32;
}

size_t ar_mpi_width(const fpl_format *f)
{
	return (size_t)(f->nbits + 7) / 8;
}

/* Values (already values of f) to w-byte little-endian codes, and back. */
static int pack(unsigned char *out, const double *v, size_t len, const fpl_format *f, size_t w)
{
	size_t j, b;

	for (j = 0; j < len; j++) {
		uint64_t c;

		if (fpl_encode_checked(f, v[j], &c))
			return FPL_ERANGE;
		for (b = 0; b < w; b++)
			out[j * w + b] = (unsigned char)(c >> (8 * b));
	}
	return 0;
}

static void unpack(double *v, const unsigned char *in, size_t len, const fpl_format *f, size_t w)
{
	size_t j, b;

	for (j = 0; j < len; j++) {
		uint64_t c = 0;

		for (b = 0; b < w; b++)
			c |= (uint64_t)in[j * w + b] << (8 * b);
		v[j] = fpl_decode(f, c);
	}
}

/* The APS shift from the global max|g| (an exact binary64 MPI_MAX; NaN
 * is sent as +inf, which gives the same k = 0). */
static int aps_shift(const double *x, size_t n, const fpl_ar_config *cfg, MPI_Comm comm,
		     struct ar_mpi_stats *stats, int *shift)
{
	double m = 0, gm;
	size_t e;

	for (e = 0; e < n; e++) {
		double a = fabs(x[e]);

		if (isnan(a)) {
			m = INFINITY;
			break;
		}
		if (a > m)
			m = a;
	}
	if (MPI_Allreduce(&m, &gm, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
		return FPL_EIO;
	stats->aps_bytes = sizeof gm;
	*shift = fpl_ar_aps_shift(cfg, gm);
	return 0;
}

/* Scratch of one step: packed buffers for the sends and the receive. */
struct scratch {
	unsigned char *sbuf, *rbuf;
	double *v;
	MPI_Request *req;
	size_t cap;
};

/* One step, transfers x0..x1-1 of the schedule. */
static int run_step(double *x, const fpl_ar_schedule *S, size_t x0, size_t x1, uint32_t me,
		    const fpl_ar_config *cfg, const fpl_format *wf, size_t w, fpl_state *node,
		    MPI_Comm comm, struct scratch *sc, struct ar_mpi_stats *stats)
{
	const fpl_ar_xfer *X = S->x;
	uint32_t step = X[x0].step;
	int nreq = 0, tag = (int)(step & 0x7fff), rc;
	size_t i, k, recv = x1;
	double t0;

	/* sends: one rounding per (range), one message per receiver */
	for (i = x0; i < x1; i = k) {
		size_t len = (size_t)(X[i].hi - X[i].lo);

		for (k = i + 1; k < x1 && X[k].src == X[i].src && X[k].lo == X[i].lo &&
				X[k].hi == X[i].hi; k++)
			;
		if (X[i].src != me)
			continue;
		fpl_ar_round_send(sc->v, x + X[i].lo, len, X[i].lo, step, cfg, S->n, node);
		if ((rc = pack(sc->sbuf, sc->v, len, wf, w)))
			return rc;
		for (; i < k; i++) {
			if (MPI_Isend(sc->sbuf, (int)(len * w), MPI_UNSIGNED_CHAR, (int)X[i].dst, tag,
				      comm, &sc->req[nreq++]) != MPI_SUCCESS)
				return FPL_EIO;
			stats->bytes_sent += len * w;
		}
		break;	/* a node sends one range per step in every schedule */
	}
	for (i = x0; i < x1; i++)
		if (X[i].dst == me) {
			if (recv != x1)
				return FPL_EINVAL;	/* the header: never twice */
			recv = i;
			if (MPI_Irecv(sc->rbuf, (int)((X[i].hi - X[i].lo) * w), MPI_UNSIGNED_CHAR,
				      (int)X[i].src, tag, comm, &sc->req[nreq++]) != MPI_SUCCESS)
				return FPL_EIO;
		}
	t0 = MPI_Wtime();
	if (nreq && MPI_Waitall(nreq, sc->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return FPL_EIO;
	stats->wait_seconds += MPI_Wtime() - t0;
	if (recv != x1) {
		const fpl_ar_xfer *R = &X[recv];
		size_t len = (size_t)(R->hi - R->lo);

		unpack(sc->v, sc->rbuf, len, wf, w);
		if (R->op == FPL_AR_ADD)
			fpl_ar_round_add(x + R->lo, sc->v, len, R->lo, step, cfg, S->n, node);
		else
			memcpy(x + R->lo, sc->v, len * sizeof *x);
	}
	return 0;
}

/* Does some step have this rank send two different ranges?  (None of the
 * library's schedules does; run_step relies on it.) */
static int sends_one_range(const fpl_ar_schedule *S, uint32_t me)
{
	size_t i, first = S->nx;

	for (i = 0; i < S->nx; i++) {
		if (i && S->x[i].step != S->x[i - 1].step)
			first = S->nx;
		if (S->x[i].src != me)
			continue;
		if (first == S->nx)
			first = i;
		else if (S->x[i].lo != S->x[first].lo || S->x[i].hi != S->x[first].hi)
			return 0;
	}
	return 1;
}

/* *agree = 1 when every rank holds rank 0's bits (before scaling back,
 * as the report compares), compared in pieces through buf. */
static int nodes_agree(const double *x, size_t n, int rank, MPI_Comm comm, unsigned char *buf,
		       size_t cap, int *agree)
{
	size_t per = cap / sizeof *x, a, len;
	int same = 1;

	for (a = 0; a < n; a += len) {
		len = n - a < per ? n - a : per;
		if (!rank)
			memcpy(buf, x + a, len * sizeof *x);
		if (MPI_Bcast(buf, (int)(len * sizeof *x), MPI_UNSIGNED_CHAR, 0, comm) != MPI_SUCCESS)
			return FPL_EIO;
		if (memcmp(buf, x + a, len * sizeof *x))
			same = 0;
	}
	if (MPI_Allreduce(&same, agree, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
		return FPL_EIO;
	return 0;
}

int ar_mpi_layer(double *x, size_t n, const fpl_ar_config *cfg, const fpl_ar_schedule *S,
		 int rank, MPI_Comm comm, fpl_state *st, uint64_t counts[FPL_NFLAGS],
		 struct ar_mpi_stats *stats, int *agree)
{
	fpl_format f32;
	const fpl_format *wf = wire_format(cfg, &f32);
	size_t w = ar_mpi_width(wf), x0, x1;
	struct scratch sc = { NULL, NULL, NULL, NULL, 0 };
	fpl_state node;
	int rc = 0, shift = 0, k;

	memset(stats, 0, sizeof *stats);
	if (S->n != n || (uint32_t)rank >= S->nodes || !sends_one_range(S, (uint32_t)rank))
		return FPL_EINVAL;
	if (n > (size_t)0x7fffffff / w)
		return FPL_ERANGE;	/* one MPI message per range */
	if (cfg->scaling == FPL_AR_SCALE_APS && !cfg->keep_fp32 && n &&
	    (rc = aps_shift(x, n, cfg, comm, stats, &shift)))
		return rc;
	stats->scale_log2 = shift;
	fpl_state_fork(st, &node, (uint64_t)rank);
	sc.sbuf = malloc(n * w + 8);
	sc.rbuf = malloc(n * w + 1);
	sc.v = malloc(n * sizeof *sc.v + 1);
	sc.req = malloc((S->nodes + 1) * sizeof *sc.req);
	if (!sc.sbuf || !sc.rbuf || !sc.v || !sc.req) {
		rc = FPL_ENOMEM;
		goto out;
	}
	for (x0 = 0; x0 < n; x0 += x1) {	/* the cast, through scratch: no aliasing */
		x1 = n - x0 < 4096 ? n - x0 : 4096;
		fpl_ar_round_cast(sc.v, x + x0, x1, x0, shift, cfg, &node);
		memcpy(x + x0, sc.v, x1 * sizeof *x);
	}
	for (x0 = 0; x0 < S->nx && !rc; x0 = x1) {
		for (x1 = x0 + 1; x1 < S->nx && S->x[x1].step == S->x[x0].step; x1++)
			;
		rc = run_step(x, S, x0, x1, (uint32_t)rank, cfg, wf, w, &node, comm, &sc, stats);
	}
	if (!rc && agree)
		rc = nodes_agree(x, n, rank, comm, sc.sbuf, n * w + 8, agree);
	if (rc)
		goto out;
	for (x0 = 0; x0 < n; x0++) {
		if (cfg->keep_fp32 || cfg->scaling == FPL_AR_SCALE_NONE)
			break;
		x[x0] = cfg->scaling == FPL_AR_SCALE_LOSS ? x[x0] / cfg->loss_scale
							  : ldexp(x[x0], -shift);
	}
	for (k = 0; counts && k < FPL_NFLAGS; k++)
		counts[k] += node.count[k];
	st->flags |= node.flags;
	for (k = 0; k < FPL_NFLAGS; k++)
		st->count[k] += node.count[k];
	st->counter++;
out:
	free(sc.sbuf);
	free(sc.rbuf);
	free(sc.v);
	free(sc.req);
	return rc;
}
