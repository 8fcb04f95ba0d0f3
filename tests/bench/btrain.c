/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/btrain.c - emulated training speed (issue 15, item 6):
 * seconds per epoch of Fashion-MNIST on 784-256-10 with batch 128 (468
 * steps) for the presets fp32, bf16-mixed and fp8-e4m3, and the ratio of
 * each to fp32 in the same run, on every online core (as `fplab train`
 * runs).  fp32 and bf16-mixed run one whole epoch; an epoch of fp8-e4m3
 * (every GEMM on the emulated e4m3fn/e5m2 path with a 14-bit
 * accumulator) takes minutes here, so every preset is also timed on the
 * same first FPLAB_BENCH_STEPS steps (default 24) and scaled to an epoch:
 * the ratios compare those like with like.  Without the data set it says
 * so and skips.  Never fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fplab/fplab.h>
#include <fplab/dataset.h>
#include <fplab/train.h>

#include "bench.h"

typedef struct run_ctx {
	const char *preset;
	fpl_train_config cfg;
	const fpl_dataset *ds;
	size_t steps;		/* 0: a whole epoch */
	int rc;
} run_ctx;

/* One trainer; a whole epoch, or the first `steps` batches in order. */
static double run(run_ctx *r)
{
	fpl_train_policy p;
	fpl_trainer *t;
	size_t *rows, s, i, B = r->cfg.batch;
	double t0, dt;

	r->rc = fpl_train_policy_preset(&p, r->preset);
	if (!r->rc)
		r->rc = fpl_trainer_create(&t, &r->cfg, &p);
	if (r->rc)
		return 0;
	rows = malloc(B * sizeof *rows);
	if (!rows) {
		fpl_trainer_free(t);
		r->rc = FPL_ENOMEM;
		return 0;
	}
	t0 = bench_now();
	if (!r->steps) {
		r->rc = fpl_trainer_epoch(t, r->ds, NULL, NULL, NULL);
	} else {
		for (s = 0; s < r->steps && !r->rc; s++) {
			for (i = 0; i < B; i++)
				rows[i] = (s * B + i) % r->ds->n;
			r->rc = fpl_trainer_step(t, r->ds, rows, NULL);
		}
	}
	dt = bench_now() - t0;
	free(rows);
	fpl_trainer_free(t);
	return dt;
}

int main(void)
{
	static const char *const presets[] = { "fp32", "bf16-mixed", "fp8-e4m3" };
	const char *e = getenv("FPLAB_BENCH_STEPS");
	size_t steps = e && atoi(e) > 0 ? (size_t)atoi(e) : 24, per, i;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double part[3] = { 0 }, full[3] = { 0 };
	fpl_dataset ds;
	char err[512];
	run_ctx r;
	int rc;

	rc = fpl_dataset_fashion_mnist(&ds, NULL, 0, 0, err, sizeof err);
	if (rc) {
		printf("btrain: skipped: %s\n", err);
		return 0;
	}
	fpl_train_config_init(&r.cfg);	/* 784-256-10, batch 128, sgd 0.1 0.9 */
	r.cfg.threads = cores < 1 ? 1 : cores > 1024 ? 1024 : (int)cores;
	r.ds = &ds;
	per = ds.n / r.cfg.batch;
	if (steps > per)
		steps = per;
	printf("btrain: Fashion-MNIST %zu examples, 784-256-10, batch %zu (%zu steps per epoch), "
	       "%d thread%s; kernels %s\n", ds.n, r.cfg.batch, per, r.cfg.threads,
	       r.cfg.threads == 1 ? "" : "s", fpl_kernels_selected());
	for (i = 0; i < 3; i++) {
		r.preset = presets[i];
		r.steps = steps;
		part[i] = run(&r) * (double)per / (double)steps;
		if (!r.rc && i < 2) {
			r.steps = 0;
			full[i] = run(&r);
		}
		if (r.rc) {
			printf("  %-11s error: %s\n", presets[i], fpl_strerror(r.rc));
			part[i] = 0;
			continue;
		}
		printf("  %-11s %8.2f s per epoch scaled from %zu steps", presets[i], part[i], steps);
		if (part[0] > 0)
			printf("  (%6.2f x fp32)", part[i] / part[0]);
		if (full[i] > 0)
			printf("; a whole epoch %.2f s (%.2f x fp32's)", full[i], full[i] / full[0]);
		printf("\n");
	}
	printf("  (one run each: an epoch of fp8-e4m3 takes minutes, so it is only scaled)\n");
	fpl_dataset_free(&ds);
	return 0;
}
