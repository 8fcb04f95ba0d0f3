/* SPDX-License-Identifier: MIT */
/*
 * fplab_mpi.c - fplab-mpi, the helper that `fplab allreduce --mpi` runs:
 * the all-reduce of fplab/allreduce.h on real MPI ranks (rank = node),
 * bit for bit the simulation's.  fplab itself never links Open MPI.
 * Two ways in:
 *
 *     mpirun -np P fplab-mpi allreduce [fplab allreduce's options]
 *     mpirun -np P fplab-mpi --layer N:DIST [--layer ...] [options]
 *
 * The first is what `fplab allreduce --mpi ...` execs (next to the fplab
 * binary, else on PATH), with its own arguments unchanged: every rank
 * first checks that its arguments equal rank 0's (else the first rank
 * that differs names the difference, and all exit 1), then runs fplab's
 * own cmd_allreduce (fplab-mpi links the CLI) with the hooks of
 * src/mpi/ar_cli.h: each layer is all-reduced by the ranks here, and
 * rank 0 prints the report with the simulator's row writer.
 *
 * ------------------------------------------------- the second way: the
 * low-level argument list the bit-for-bit test (tests/cli/allreduce_mpi.sh)
 * compares with fplab-mpi-sim, every value explicit:
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ar_cli.h"
#include "mpi/ar_job.h"
#include "mpi/ar_mpi.h"

/* main.c's main, renamed when built for fplab-mpi (see the Makefile). */
int fplab_cli_main(int argc, char **argv);

/* ------------------------------------------- `fplab-mpi allreduce ...` */
static MPI_Comm cli_comm;
static struct ar_backend cli_be;

/* ar_cli.h's allreduce hook: this rank is node cli_be.rank. */
static int cli_allreduce(double *out, fpl_ar_report *rep, const fpl_ar_config *cfg,
			 const double *const *g, size_t n, fpl_state *st, int threads)
{
	unsigned long long b, mb = 0, c[FPL_NFLAGS], sum[FPL_NFLAGS];
	uint64_t count[FPL_NFLAGS] = { 0 };
	struct ar_mpi_stats stats;
	fpl_ar_schedule S;
	uint32_t steps;
	int rc, all, agree = 1, k;

	memset(rep, 0, sizeof *rep);
	rep->nodes_agree = 1;
	memcpy(out, g[cli_be.rank], n * sizeof *out);
	/* the same on every rank: built from the same configuration */
	rc = fpl_ar_schedule_build(&S, cfg->algo, cfg->nodes, cfg->group, n);
	if (rc)
		return rc;
	steps = S.steps;
	memset(&stats, 0, sizeof stats);
	rc = ar_mpi_layer(out, n, cfg, &S, cli_be.rank, cli_comm, st, count, &stats, &agree);
	fpl_ar_schedule_release(&S);
	if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, cli_comm) != MPI_SUCCESS)
		return FPL_EIO;
	if (all)
		return all;
	b = stats.bytes_sent;
	for (k = 0; k < FPL_NFLAGS; k++)
		c[k] = count[k];
	if (MPI_Reduce(&b, &mb, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, cli_comm) != MPI_SUCCESS ||
	    MPI_Reduce(c, sum, FPL_NFLAGS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, cli_comm)
	    != MPI_SUCCESS)
		return FPL_EIO;
	if (!cli_be.rank) {
		rep->n = n;
		rep->steps = steps;
		/* APS: the paper's 1 byte, as fpl_allreduce counts it */
		rep->bytes_sent = mb + (cfg->scaling == FPL_AR_SCALE_APS && !cfg->keep_fp32);
		rep->scale_log2 = stats.scale_log2;
		for (k = 0; k < FPL_NFLAGS; k++)
			rep->count[k] = sum[k];
		rep->nodes_agree = agree;
		rc = fpl_ar_report_errors(rep, out, g, cfg->nodes, n, threads);
	}
	if (MPI_Bcast(&rc, 1, MPI_INT, 0, cli_comm) != MPI_SUCCESS)
		return FPL_EIO;
	return rc;
}

/* ar_cli.h's agree hook. */
static int cli_agree(int rc, int *alone)
{
	int r0 = rc, bad = rc != 0, any = 1;

	if (MPI_Bcast(&r0, 1, MPI_INT, 0, cli_comm) != MPI_SUCCESS ||
	    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, cli_comm) != MPI_SUCCESS)
		r0 = r0 ? r0 : 1;
	if (alone)
		*alone = rc && !r0;
	return r0 ? r0 : any ? 1 : 0;
}

/* ar_cli.h's same hook. */
static int cli_same(unsigned long long v)
{
	unsigned long long lo = v, hi = v;

	if (MPI_Allreduce(&v, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, cli_comm) != MPI_SUCCESS ||
	    MPI_Allreduce(&v, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, cli_comm) != MPI_SUCCESS)
		return 0;
	return lo == hi;
}

/* Argument i of v[0..n) for a message: with its option name before it, or
 * its value after it, when one of the two is a value. */
static void arg_text(char *buf, size_t len, char *const *v, int n, int i)
{
	int val = v[i][0] != '-';

	if (val && i > 0 && v[i - 1][0] == '-' && !strchr(v[i - 1], '='))
		snprintf(buf, len, "'%s %s'", v[i - 1], v[i]);
	else if (!val && !strchr(v[i], '=') && i + 1 < n && v[i + 1][0] != '-')
		snprintf(buf, len, "'%s %s'", v[i], v[i + 1]);
	else
		snprintf(buf, len, "'%s'", v[i]);
}

/* Every rank's arguments after argv[0] against rank 0's: 0 when all are
 * the same; else 1 on every rank, after a message from the first rank
 * that differs naming the first difference.  Collective. */
static int same_args(int argc, char **argv, int rank)
{
	unsigned long long len = 0;
	char *blob, **v0, a[512], b[512];
	int n0 = 0, i, me = INT_MAX, first, k;
	size_t off = 0;

	for (i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, cli_comm);
	blob = malloc(len + 1);
	if (!blob) {
		fprintf(stderr, "fplab-mpi: out of memory\n");
		MPI_Abort(cli_comm, 1);
	}
	if (!rank)
		for (i = 1; i < argc; i++) {
			memcpy(blob + off, argv[i], strlen(argv[i]) + 1);
			off += strlen(argv[i]) + 1;
		}
	MPI_Bcast(blob, (int)len, MPI_CHAR, 0, cli_comm);
	for (off = 0; off < len; off += strlen(blob + off) + 1)
		n0++;
	v0 = malloc(((size_t)n0 + 1) * sizeof *v0);
	if (!v0) {
		fprintf(stderr, "fplab-mpi: out of memory\n");
		MPI_Abort(cli_comm, 1);
	}
	for (off = 0, k = 0; off < len; off += strlen(blob + off) + 1)
		v0[k++] = blob + off;
	for (i = 0; i < n0 && i < argc - 1 && !strcmp(v0[i], argv[i + 1]); i++)
		;
	if (i < n0 || i < argc - 1)
		me = rank;
	MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, cli_comm);
	if (first == rank) {
		if (i < n0)
			arg_text(b, sizeof b, v0, n0, i);
		if (i < argc - 1)
			arg_text(a, sizeof a, argv + 1, argc - 1, i);
		if (i < n0 && i < argc - 1)
			fprintf(stderr, "fplab: %s: rank %d was started with %s where rank 0 has %s: "
				"every rank needs the same arguments\n", argv[1], rank, a, b);
		else if (i < n0)
			fprintf(stderr, "fplab: %s: rank %d was started without %s, which rank 0 has: "
				"every rank needs the same arguments\n", argv[1], rank, b);
		else
			fprintf(stderr, "fplab: %s: rank %d was started with %s, which rank 0 has not: "
				"every rank needs the same arguments\n", argv[1], rank, a);
	}
	free(v0);
	free(blob);
	return first == INT_MAX ? 0 : 1;
}

/* `fplab-mpi allreduce ...`: fplab's own command on every rank. */
static int cli_run(int argc, char **argv, int rank, int size)
{
	if (strcmp(argv[1], "allreduce")) {
		if (!rank)
			fprintf(stderr, "fplab-mpi: '%s': fplab-mpi runs `allreduce` only\n", argv[1]);
		return 2;
	}
	cli_comm = MPI_COMM_WORLD;
	if (same_args(argc, argv, rank))
		return 1;
	cli_be.rank = rank;
	cli_be.size = size;
	cli_be.allreduce = cli_allreduce;
	cli_be.agree = cli_agree;
	cli_be.same = cli_same;
	cmd_allreduce_mpi = &cli_be;
	return fplab_cli_main(argc, argv);
}

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
	if (argc > 1 && argv[1][0] != '-') {
		rc = cli_run(argc, argv, rank, size);
		MPI_Finalize();
		return rc;
	}
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
