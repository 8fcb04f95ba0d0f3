/* SPDX-License-Identifier: MIT */
/*
 * src/mpi/ar_job.h - what fplab-mpi and its simulation twin fplab-mpi-sim
 * share, without MPI: the argument list (the contract with `fplab
 * allreduce --mpi`, written out at the top of fplab_mpi.c), the layer
 * configurations, the generated or read gradients and the result file.
 *
 * Invariant: a node's gradients depend only on (seed, layer, node) or on
 * the node's own input file, never on how many processes compute them, so
 * a rank of an MPI run and the simulation see the same values.
 */
#ifndef FPLAB_MPI_AR_JOB_H
#define FPLAB_MPI_AR_JOB_H

#include <stdint.h>
#include <stdio.h>

#include <fplab/fplab.h>
#include <fplab/allreduce.h>

#include "util/gen.h"

#define AR_MAX_LIST 64	/* values of one comma list */

/* A generated layer: N values from a distribution (util/gen.h). */
struct ar_layer {
	uint64_t n;
	struct fpl__gen gen;
	int keep_fp32;		/* --keep-fp32 names this layer */
};

/* One configuration of the sweep: the cross product of the lists, in
 * cmd_allreduce's order (algo, group for hier, comm, acc, scale). */
struct ar_combo {
	fpl_ar_algo algo;
	uint32_t group;
	fpl_format comm, acc;
	fpl_rnd comm_rnd, acc_rnd;
	fpl_ar_scaling scaling;
	double loss_scale;
	char comm_s[64], acc_s[64], scale_s[64];	/* as given */
};

struct ar_job {
	const char *prog;			/* "fplab-mpi" or "fplab-mpi-sim" */
	struct ar_combo *combo;			/* the sweep, run one after another */
	size_t ncombo;
	uint32_t nodes;				/* --nodes, 0 when not given */
	uint64_t seed;
	int sr_bits;
	struct ar_layer *layer;			/* --layer, or the tensors of --in */
	size_t nlayers;
	const char *in;				/* --in PATTERN or FILE,FILE... */
	const char *out;			/* -o FILE or NULL */
	int tsv;				/* --tsv: one report row per layer on stdout */
	int quiet;				/* no usage or help text (MPI ranks but 0) */
};

/* Parse argv (see fplab_mpi.c).  0; 1 after --help (printed, exit 0);
 * 2 for a usage error (message printed unless quiet); -1 other errors. */
int ar_job_parse(struct ar_job *j, const char *prog, int quiet, int argc, char **argv);
void ar_job_release(struct ar_job *j);

/* The configuration of layer l under combination a for `nodes` nodes,
 * as the simulation takes it (keep_fp32 set, formats as given). */
void ar_job_config(const struct ar_job *j, size_t a, size_t l, uint32_t nodes,
		   fpl_ar_config *cfg);

/* The state every algorithm of the list starts from: seed, sr_bits. */
void ar_job_state(const struct ar_job *j, fpl_state *st);

/*
 * Node `node`'s values of layer l into x (j->layer[l].n of them):
 * generated, element e of fpl__gen_fill(gen, seed,
 * FPL__GEN_LAYER_STREAM(l, node)) -- the generator and stream of `fplab
 * allreduce --layers` -- or read from node's --in file (tensor l).
 * 0 or -1 (message printed).
 */
int ar_job_gradient(const struct ar_job *j, size_t l, uint32_t node, double *x);

/* With --in FILE,...: the list must name `nodes` files.  0 or -1. */
int ar_job_check_nodes(const struct ar_job *j, uint32_t nodes);

/* With --in: read node 0's file to learn the layers (count and sizes).
 * 0 or -1 (message printed). */
int ar_job_layers_from_input(struct ar_job *j);

/* The result file: binary64 values in host order (little-endian on
 * x86-64), every layer of the first algorithm, then of the next...;
 * FILE.npy gets a .npy header for a vector of `total` values.  0 or -1. */
int ar_out_open(FILE **fp, const struct ar_job *j, uint64_t total);
int ar_out_write(FILE *fp, const struct ar_job *j, const double *x, uint64_t n);
int ar_out_close(FILE *fp, const struct ar_job *j);

/* The report's columns: header, and the first cells of combination a's
 * rows (algo, comm, acc, scale), tab-separated, on stdout. */
void ar_job_print_header(void);
void ar_job_print_combo(const struct ar_job *j, size_t a);

/* A message "PROG: ..." on stderr; returns -1. */
int ar_error(const struct ar_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
