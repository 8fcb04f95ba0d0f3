/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bmpi.c - the all-reduce on real MPI ranks (issue 12, item
 * 4), run by bmpi.sh under mpirun -np 4 on one machine: the time of
 * fplab-mpi's ring with packed 8-bit codes (e5m2 communication and
 * accumulator, ne: every value emulated) against MPI_Allreduce(MPI_SUM)
 * on binary32 for the same gradient size (2^22 values per rank unless
 * FPLAB_BENCH_MPI_LOG2N says otherwise), measured in the same run, as a
 * ratio; plus the wire alone: a ring of the same messages (1 byte per
 * value, Sendrecv, no arithmetic), and the time fplab's ring spends
 * waiting for messages.  Times are the slowest rank's, best of
 * FPLAB_BENCH_REPS (5; 3 for the emulated ring).  Never fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi/ar_mpi.h"
#include "bench.h"

/* The slowest rank's time of fn(ctx), best of reps. */
static double timed(void (*fn)(void *), void *ctx, int reps)
{
	double best = 1e30;
	int r;

	for (r = 0; r < reps; r++) {
		double t0, t, tmax;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		fn(ctx);
		t = MPI_Wtime() - t0;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (tmax < best)
			best = tmax;
	}
	return best;
}

typedef struct ctx {
	size_t n;
	int rank, size;
	const double *g;	/* this rank's gradient */
	double *x;
	float *f, *fsum;
	unsigned char *a, *b;
	fpl_ar_config cfg;
	fpl_ar_schedule S;
	double wait;
	int rc;
} ctx;

static void run_fplab(void *p)
{
	ctx *c = p;
	struct ar_mpi_stats s;
	fpl_state st;

	memcpy(c->x, c->g, c->n * sizeof *c->x);
	fpl_state_init(&st, 1);
	c->rc |= ar_mpi_layer(c->x, c->n, &c->cfg, &c->S, c->rank, MPI_COMM_WORLD, &st, NULL, &s,
			      NULL);
	c->wait = s.wait_seconds;
}

static void run_mpi(void *p)
{
	ctx *c = p;

	MPI_Allreduce(c->f, c->fsum, (int)c->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* The ring's messages alone: 2(P-1) Sendrecv of n/P bytes. */
static void run_wire(void *p)
{
	ctx *c = p;
	size_t chunk = c->n / (size_t)c->size;
	int s, next = (c->rank + 1) % c->size, prev = (c->rank + c->size - 1) % c->size;

	for (s = 0; s < 2 * (c->size - 1); s++)
		MPI_Sendrecv(c->a, (int)chunk, MPI_UNSIGNED_CHAR, next, s, c->b, (int)chunk,
			     MPI_UNSIGNED_CHAR, prev, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	const char *e = getenv("FPLAB_BENCH_MPI_LOG2N");
	int lg = e ? atoi(e) : 22, reps = bench_reps();
	ctx c;
	double *g, t_fp, t_mpi, t_wire, wait;
	size_t i;

	MPI_Init(&argc, &argv);
	memset(&c, 0, sizeof c);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);
	c.n = (size_t)1 << (lg >= 10 && lg <= 28 ? lg : 22);
	g = malloc(c.n * sizeof *g);
	c.x = malloc(c.n * sizeof *c.x);
	c.f = malloc(c.n * sizeof *c.f);
	c.fsum = malloc(c.n * sizeof *c.fsum);
	c.a = calloc(c.n, 1);
	c.b = calloc(c.n, 1);
	if (!g || !c.x || !c.f || !c.fsum || !c.a || !c.b) {
		fprintf(stderr, "bmpi: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	bench_gauss(g, c.n, 1e-3, 1234 + (uint64_t)c.rank);
	for (i = 0; i < c.n; i++)
		c.f[i] = (float)g[i];
	c.g = g;
	fpl_ar_config_init(&c.cfg);
	c.cfg.nodes = (uint32_t)c.size;
	fpl_format_lookup(&c.cfg.comm, "e5m2");
	c.cfg.acc = c.cfg.comm;
	if (fpl_ar_schedule_build(&c.S, FPL_AR_RING, c.cfg.nodes, 1, c.n))
		MPI_Abort(MPI_COMM_WORLD, 1);

	t_mpi = timed(run_mpi, &c, reps);
	t_wire = timed(run_wire, &c, reps);
	t_fp = timed(run_fplab, &c, reps < 3 ? reps : 3);
	MPI_Allreduce(&c.wait, &wait, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (c.rc)
		fprintf(stderr, "bmpi: rank %d: ar_mpi_layer failed\n", c.rank);
	if (!c.rank) {
		double mb = (double)c.n * 2 * (c.size - 1) / c.size;

		printf("all-reduce of 2^%d values per rank on %d ranks (one machine)\n", lg, c.size);
		printf("  MPI_Allreduce fp32 sum          %9.2f ms   %6.1f MB per rank in a ring\n",
		       t_mpi * 1e3, mb * 4 / 1e6);
		printf("  ring of 8-bit codes, wire only  %9.2f ms   %6.1f MB   %6.2fx MPI_Allreduce\n",
		       t_wire * 1e3, mb / 1e6, t_wire / t_mpi);
		printf("  fplab-mpi ring, e5m2 emulated   %9.2f ms   %6.1f MB   %6.2fx MPI_Allreduce"
		       " (%.2f ms of it waiting for messages)\n",
		       t_fp * 1e3, mb / 1e6, t_fp / t_mpi, wait * 1e3);
		fflush(stdout);
	}
	fpl_ar_schedule_release(&c.S);
	free(g);
	free(c.x);
	free(c.f);
	free(c.fsum);
	free(c.a);
	free(c.b);
	MPI_Finalize();
	return 0;
}
