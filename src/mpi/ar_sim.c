/* SPDX-License-Identifier: MIT */
/*
 * ar_sim.c - fplab-mpi-sim: the simulation side of the MPI test.  Takes
 * fplab-mpi's argument list (fplab_mpi.c), with --nodes P required,
 * generates or reads every node's gradients and runs fpl_allreduce, then
 * writes the result file and the --tsv report exactly as fplab-mpi does.
 * No MPI: built with plain cc wherever the library builds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ar_job.h"

static void print_row(const struct ar_job *j, size_t a, size_t l, const fpl_ar_report *r)
{
	int k;

	ar_job_print_combo(j, a);
	printf("\t%zu\t%llu\t%u\t%llu\t%d", l, (unsigned long long)r->n, (unsigned)r->steps,
	       (unsigned long long)r->bytes_sent, r->scale_log2);
	for (k = 0; k < FPL_NFLAGS; k++)
		printf("\t%llu", (unsigned long long)r->count[k]);
	printf("\t%d\n", r->nodes_agree);
}

/* Layer l under algorithm a on P nodes; out receives n values. */
static int run_layer(const struct ar_job *j, size_t a, size_t l, fpl_state *st, double *out)
{
	uint32_t P = j->nodes, i;
	size_t n = (size_t)j->layer[l].n;
	double *g = malloc((size_t)P * n * sizeof *g);
	const double **gp = malloc(P * sizeof *gp);
	fpl_ar_config cfg;
	fpl_ar_report rep;
	int rc = 0;

	if (!g || !gp)
		rc = ar_error(j, "out of memory");
	for (i = 0; !rc && i < P; i++) {
		gp[i] = g + (size_t)i * n;
		rc = ar_job_gradient(j, l, i, g + (size_t)i * n);
	}
	ar_job_config(j, a, l, P, &cfg);
	if (!rc && (rc = fpl_allreduce(out, &rep, &cfg, gp, n, st)))
		rc = ar_error(j, "layer %zu: %s", l, fpl_strerror(rc));
	if (!rc && j->tsv)
		print_row(j, a, l, &rep);
	free(g);
	free(gp);
	return rc;
}

int main(int argc, char **argv)
{
	struct ar_job j;
	uint64_t total = 0;
	FILE *out = NULL;
	size_t a, l;
	int rc = ar_job_parse(&j, "fplab-mpi-sim", 0, argc, argv);

	if (rc)
		return rc == 1 ? 0 : rc == 2 ? 2 : 1;
	if (!j.nodes) {
		ar_error(&j, "--nodes P is required");
		ar_job_release(&j);
		return 2;
	}
	if (ar_job_check_nodes(&j, j.nodes)) {
		ar_job_release(&j);
		return 1;
	}
	for (l = 0; l < j.nlayers; l++)
		total += j.layer[l].n;
	if (ar_out_open(&out, &j, total * j.ncombo))
		rc = -1;
	if (!rc && j.tsv)
		ar_job_print_header();
	for (a = 0; !rc && a < j.ncombo; a++) {
		fpl_state st;

		ar_job_state(&j, &st);
		for (l = 0; !rc && l < j.nlayers; l++) {
			double *x = malloc((size_t)j.layer[l].n * sizeof *x);

			rc = x ? run_layer(&j, a, l, &st, x) : ar_error(&j, "out of memory");
			if (!rc)
				rc = ar_out_write(out, &j, x, j.layer[l].n);
			free(x);
		}
	}
	if (ar_out_close(out, &j))
		rc = -1;
	if (fflush(stdout) || ferror(stdout))
		rc = ar_error(&j, "cannot write the report");
	ar_job_release(&j);
	return rc ? 1 : 0;
}
