/* SPDX-License-Identifier: MIT */
/*
 * fplab_mpi.c - fplab-mpi, the helper that `fplab allreduce --mpi` runs:
 * the all-reduce of fplab/allreduce.h on real MPI ranks (rank = node),
 * bit for bit the simulation's.  fplab itself never links Open MPI.
 *
 *     mpirun -np P fplab-mpi --layer N:DIST [--layer ...] [options]
 *
 * ------------------------------------------------- the contract with
 * `fplab allreduce --mpi` (src/cli/cmd_allreduce.c): it parses its own
 * options, then execs fplab-mpi (next to the fplab binary, else on PATH)
 * with this explicit argument list, every value already resolved:
 *   --nodes P          optional; must equal the MPI world size
 *   --algo A[,A...]    sequential, ring, tree, hier:G (hier alone takes
 *                      --group G); each runs from a fresh state, in order
 *   --group G          hier's G when the algo does not name it
 *   --comm SPEC        communication format, FORMAT[+switches][:MODE] as
 *   --acc SPEC         fpl_accum_parse_spec reads it (default fp32)
 *   -r MODE            mode of comm and acc where SPEC names none (ne)
 *   --scale none|loss:S|aps
 *   --keep-fp32 L,...  0-based layer indices reduced in binary32
 *   --seed N, --sr-bits R   as fplab's (defaults 0 and 32)
 *   --layer N:DIST     one per layer, in order: N values per node from
 *                      DIST = ones | uniform:A,B | normal:MU,SIGMA |
 *                      lognormal:MU,SIGMA | ints:A,B; value e of node i
 *                      of layer l is element e of fpl__gen_fill(DIST,
 *                      seed, FPL__GEN_LAYER_STREAM(l, i)) (util/gen.h),
 *                      the generator cli_layers_generate uses
 *   --in PATTERN       instead of --layer: node i reads PATTERN with "{}"
 *                      replaced by i (an .npz/.safetensors/.npy file);
 *                      tensor l is layer l (cmd_allreduce's --inputs)
 *   -o FILE            rank 0 writes node 0's result, binary64 in host
 *                      order, algo by algo and layer by layer (FILE.npy:
 *                      with a .npy header, one vector)
 *   --tsv              rank 0 prints one row per (algo, layer): algo,
 *                      layer, n, steps, bytes_sent, scale_log2, the seven
 *                      flag counts summed over ranks, nodes_agree -- the
 *                      fpl_ar_report fields that do not need the exact sum
 * Exit status: 0, 1 (an error, message on stderr from rank 0 or the
 * failing rank), 2 (usage, as fplab's).  fplab-mpi-sim takes the same
 * list (with --nodes required) and runs fpl_allreduce: the test compares
 * the two files and the two reports byte for byte.
 *
 * Per layer each rank: generates (or reads) its own gradient; for APS
 * all-reduces max|g| (MPI_MAX on binary64, exact, as fpl_ar_aps_shift
 * needs; the report counts the paper's 1 byte as the simulation does);
 * casts with fpl_ar_round_cast; walks the schedule with one MPI message
 * per transfer carrying packed codes (ar_mpi.c); scales back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ar_job.h"
#include "mpi/ar_mpi.h"

struct row {
	uint64_t bytes;		/* busiest rank */
	uint64_t count[FPL_NFLAGS];
	int agree;
};

/* Gather the rank's figures into rank 0's row. */
static int report_row(const struct ar_mpi_stats *s, const uint64_t count[FPL_NFLAGS],
		      struct row *r, MPI_Comm comm)
{
	unsigned long long b = s->bytes_sent, c[FPL_NFLAGS], sum[FPL_NFLAGS], mb = 0;
	int k;

	for (k = 0; k < FPL_NFLAGS; k++)
		c[k] = count[k];
	if (MPI_Reduce(&b, &mb, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, comm) != MPI_SUCCESS ||
	    MPI_Reduce(c, sum, FPL_NFLAGS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm) != MPI_SUCCESS)
		return -1;
	r->bytes = mb;
	for (k = 0; k < FPL_NFLAGS; k++)
		r->count[k] = sum[k];
	return 0;
}

static void print_row(const struct ar_job *j, size_t a, size_t l, const fpl_ar_schedule *S,
		      const struct row *r, int aps, int shift)
{
	int k;

	ar_job_print_combo(j, a);
	printf("\t%zu\t%llu\t%u\t%llu\t%d", l, (unsigned long long)S->n, (unsigned)S->steps,
	       (unsigned long long)(r->bytes + (unsigned)aps), shift);
	for (k = 0; k < FPL_NFLAGS; k++)
		printf("\t%llu", (unsigned long long)r->count[k]);
	printf("\t%d\n", r->agree);
}

/* Every layer under algorithm a.  0 or -1 (message printed). */
static int run_algo(const struct ar_job *j, size_t a, int rank, int size, FILE *out,
		    MPI_Comm comm)
{
	fpl_state st;
	size_t l;
	int rc = 0;

	ar_job_state(j, &st);
	for (l = 0; l < j->nlayers && !rc; l++) {
		size_t n = (size_t)j->layer[l].n;
		double *x = malloc(n * sizeof *x);
		uint64_t count[FPL_NFLAGS] = { 0 };
		struct ar_mpi_stats stats;
		fpl_ar_schedule S;
		fpl_ar_config cfg;
		struct row r;
		int ok = x != NULL, all_ok;

		ar_job_config(j, a, l, (uint32_t)size, &cfg);
		if (ok && ar_job_gradient(j, l, (uint32_t)rank, x))
			ok = 0;
		MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
		if (!all_ok) {
			free(x);
			return x ? -1 : ar_error(j, "out of memory");
		}
		rc = fpl_ar_schedule_build(&S, cfg.algo, cfg.nodes, cfg.group, n);
		if (rc) {
			free(x);
			return rank ? -1 : ar_error(j, "layer %zu: %s", l, fpl_strerror(rc));
		}
		rc = ar_mpi_layer(x, n, &cfg, &S, rank, comm, &st, count, &stats,
				  j->tsv ? &r.agree : NULL);
		if (rc)
			ar_error(j, "rank %d, layer %zu: %s", rank, l, fpl_strerror(rc));
		else if (j->tsv && report_row(&stats, count, &r, comm))
			rc = ar_error(j, "MPI_Reduce failed");
		if (!rc && !rank && j->tsv)
			print_row(j, a, l, &S, &r, cfg.scaling == FPL_AR_SCALE_APS && !cfg.keep_fp32,
				  stats.scale_log2);
		if (!rc && !rank && ar_out_write(out, j, x, n))
			rc = -1;
		fpl_ar_schedule_release(&S);
		free(x);
	}
	return rc ? -1 : 0;
}

static int run(const struct ar_job *j, int rank, int size, MPI_Comm comm)
{
	uint64_t total = 0;
	FILE *out = NULL;
	size_t a, l;
	int rc = 0;

	if (j->nodes && j->nodes != (uint32_t)size) {
		if (!rank)
			ar_error(j, "--nodes %u but %d MPI ranks", (unsigned)j->nodes, size);
		return 1;
	}
	for (l = 0; l < j->nlayers; l++)
		total += j->layer[l].n;
	if (!rank && ar_out_open(&out, j, total * j->ncombo))
		rc = -1;
	MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
	if (rc)
		return 1;
	rc = rank ? 0 : ar_job_check_nodes(j, (uint32_t)size);
	MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
	if (rc)
		return 1;
	if (!rank && j->tsv)
		ar_job_print_header();
	for (a = 0; a < j->ncombo && !rc; a++)
		rc = run_algo(j, a, rank, size, out, comm);
	if (!rank && ar_out_close(out, j))
		rc = -1;
	if (!rank && (fflush(stdout) || ferror(stdout)))
		rc = ar_error(j, "cannot write the report");
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ar_job j;
	int rank, size, rc;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fprintf(stderr, "fplab-mpi: MPI_Init failed\n");
		return 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* usage messages and --help from rank 0 only */
	rc = ar_job_parse(&j, "fplab-mpi", rank != 0, argc, argv);
	if (rc) {
		MPI_Finalize();
		return rc == 1 ? 0 : rc == 2 ? 2 : 1;
	}
	rc = run(&j, rank, size, MPI_COMM_WORLD);
	ar_job_release(&j);
	if (rc)
		MPI_Abort(MPI_COMM_WORLD, rc);
	MPI_Finalize();
	return rc;
}
