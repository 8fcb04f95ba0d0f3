/* SPDX-License-Identifier: MIT */
/*
 * src/mpi/ar_cli.h - the hook by which fplab-mpi runs `fplab allreduce`'s
 * own code (src/cli/cmd_allreduce.c) on MPI ranks: the same parsing, the
 * same inputs, the same sweep and the same row writer, with each layer's
 * all-reduce done by the ranks instead of fpl_allreduce.  No MPI types
 * here: fplab includes this header and never links Open MPI.
 *
 * Invariant: every rank runs the command with the same arguments (fplab-mpi
 * checks that before the command starts), so parsing and its usage errors
 * are the same on every rank; only the inputs read from files, and the
 * all-reduce itself, need the ranks to talk (the two hooks below).
 */
#ifndef FPLAB_MPI_AR_CLI_H
#define FPLAB_MPI_AR_CLI_H

#include <stddef.h>

#include <fplab/fplab.h>
#include <fplab/allreduce.h>

struct ar_backend {
	int rank, size;		/* this rank and the world size P */
	/*
	 * fpl_allreduce's contract on the ranks: g[0..P-1] are every node's
	 * n values (this rank reduces g[rank]; rank 0 also reads all of them
	 * for the exact sums); out receives node 0's result on every rank; rep
	 * on rank 0 the whole report (errors by fpl_ar_report_errors with
	 * `threads`, flag counts summed over ranks, bytes of the busiest), on
	 * the other ranks zeros with nodes_agree 1; st advances as
	 * fpl_allreduce's.  Collective.  0 or a negative fplab status (the
	 * same on every rank).
	 */
	int (*allreduce)(double *out, fpl_ar_report *rep, const fpl_ar_config *cfg,
			 const double *const *g, size_t n, fpl_state *st, int threads);
	/*
	 * Every rank's status rc into one status, the same on every rank:
	 * rank 0's when it is not 0, else 1 when some rank's is not 0, else
	 * 0.  *alone (may be NULL) is set to 1 on a rank whose rc was not 0
	 * while rank 0's was 0: its message is the one to show.  Collective.
	 */
	int (*agree)(int rc, int *alone);
	/* 1 on every rank when every rank passed the same v, else 0.
	 * Collective. */
	int (*same)(unsigned long long v);
};

/* NULL in fplab; fplab-mpi points it at its MPI hooks before it runs the
 * command (defined in cmd_allreduce.c). */
extern const struct ar_backend *cmd_allreduce_mpi;

#endif
