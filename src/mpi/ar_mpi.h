/* SPDX-License-Identifier: MIT */
/*
 * src/mpi/ar_mpi.h - one layer's all-reduce on real MPI ranks: the rank
 * plays node `rank` of the library's schedule, with the library's own
 * roundings (fpl_ar_round_send, fpl_ar_round_add), so its result equals
 * fpl_allreduce's bit for bit.  Used by fplab-mpi and the MPI bench.
 */
#ifndef FPLAB_MPI_AR_MPI_H
#define FPLAB_MPI_AR_MPI_H

#include <mpi.h>

#include <fplab/fplab.h>
#include <fplab/allreduce.h>

struct ar_mpi_stats {
	uint64_t bytes_sent;	/* this rank: packed codes sent, plus APS's all-reduce */
	uint64_t aps_bytes;	/* of which APS's max-exponent all-reduce: 1, or 1 + 8 */
	int scale_log2;		/* APS's shift (0 otherwise) */
	double wait_seconds;	/* time in MPI_Waitall: the wire, and waiting for peers */
};

/* Bytes per packed code on the wire: 1, 2, 4 or 8 by f->nbits. */
size_t ar_mpi_width(const fpl_format *f);

/*
 * All-reduce layer x (n values, this rank's gradient on entry, node 0's
 * result scaled back on exit, the same on every rank) as node `rank` of
 * `sch` (built for cfg's algo, nodes, group and n) under cfg, exactly as
 * fpl_allreduce does it for that node: scaling, initial cast into comm
 * (draws 0..n-1 of the node's stream), then the schedule.  st is the
 * simulation's state before this layer: the node state is
 * fpl_state_fork(st, &node, rank), and st->counter advances by 1.  The
 * node's flag counts are added to counts (may be NULL).  agree (may be
 * NULL, on every rank alike) receives 1 when every rank ends with rank
 * 0's bits, as fpl_ar_report.nodes_agree.  Collective over comm.  0, or a negative fplab status / MPI failure as FPL_EIO
 * (message printed).
 */
int ar_mpi_layer(double *x, size_t n, const fpl_ar_config *cfg, const fpl_ar_schedule *sch,
		 int rank, MPI_Comm comm, fpl_state *st, uint64_t counts[FPL_NFLAGS],
		 struct ar_mpi_stats *stats, int *agree);

#endif
