/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bhist.c - speed of `fplab hist`'s classification of binary32
 * data (issue 4: at least 500 MB/s of f32 input per core; issue 14: at
 * least 0.4 of memcpy per core), against baselines measured in the same
 * run on the same data: memcpy of the buffer, and reading the same .npy
 * file through the tensor reader.  hist's own work is also timed alone,
 * on data cast beforehand, for the portable loop and (where the CPU runs
 * it) the AVX2 and AVX-512 loops.  One thread.  Prints MB/s (1 MB = 10^6
 * bytes of f32 input) and ratios.  Last, issue 24's floor: hist into
 * e4m3fn, ne, at >= 0.5 of memcpy, on two data sets, each timed in turns
 * with a memcpy of the same data (best of each): N(0, 1) (as bround
 * measures it) and the gradient-like data above (the case users have;
 * it supersedes issue 14's 0.4 target, no longer printed), with the
 * kernel set in use (FPLAB_KERNELS), then, where that set is avx512, the
 * same two under the avx2 set (lines "avx2: ..."; FPLAB_BENCH_AVX2=0
 * skips them).  Where the AVX-512 or AVX2 loop
 * casts itself (ne, tz, tp, tn), hist does not call fpl_round_array_f32:
 * its line is then the engine alone, for reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fplab/fplab.h>

#include "bench.h"
#include "hist/hist_internal.h"

#define N (16u << 20)	/* 16 Mi floats = 64 MiB */
#define CH 65536

static float *x, *dst;
static char path[256];
static const char *fmt_name;
static uint64_t sink;

static void run_memcpy(void *c)
{
	(void)c;
	memcpy(dst, x, (size_t)N * 4);
	sink += (uint64_t)dst[N / 2];
}

static void classify(fpl_hist *h, const float *v, size_t n)
{
	if (fpl_hist_add_f32(h, v, n)) {
		fprintf(stderr, "bhist: classification failed\n");
		exit(1);
	}
}

static void run_round(void *c)
{
	fpl_state st;
	fpl_state_init(&st, 0);
	for (size_t i = 0; i < N; i += CH)
		fpl_round_array_f32((const fpl_format *)c, dst + i, x + i, CH, FPL_RND_NE, &st);
	sink += (uint64_t)dst[7];
}

static void run_classify(void *c)
{
	fpl_hist h;
	fpl_hist_init(&h, (const fpl_hist_config *)c);
	for (size_t i = 0; i < N; i += CH)
		classify(&h, x + i, CH);
	fpl_hist_finish(&h);
	sink += h.became_zero;
	fpl_hist_release(&h);
}

/* hist's own work alone: classify the first OWN values of x against
 * their cast in dst (both in L2, as the cast is in fpl_hist_add_f32), in
 * the chunks fpl_hist_add_f32 uses, N values in all */
#define OWN 32768
typedef void (*classify_fn)(fpl_hist *h, const float *v, const float *y, size_t n);
static classify_fn own_fn;

static void run_own(void *c)
{
	fpl_hist h;
	fpl_hist_init(&h, (const fpl_hist_config *)c);
	for (size_t i = 0; i < N; i += HIST_CHUNK)
		own_fn(&h, x + i % OWN, dst + i % OWN, HIST_CHUNK);
	sink += h.became_zero;
	fpl_hist_release(&h);
}

/* issue 24's floor: memcpy and hist of g in turns, best of reps each;
 * returns t(memcpy) / t(hist) */
static double paired_hist(const fpl_hist_config *cfg, const float *g, int reps)
{
	double bc = 1e30, bh = 1e30;
	for (int k = 0; k < reps; k++) {
		double t0 = bench_now();
		memcpy(dst, g, (size_t)N * 4);
		double t1 = bench_now();
		fpl_hist h;
		fpl_hist_init(&h, cfg);
		classify(&h, g, N);
		fpl_hist_finish(&h);
		double t2 = bench_now();
		sink += h.normal + (uint64_t)dst[N / 3];
		fpl_hist_release(&h);
		bc = t1 - t0 < bc ? t1 - t0 : bc;
		bh = t2 - t1 < bh ? t2 - t1 : bh;
	}
	return bc / bh;
}

/* read the file through the reader; hist != NULL also classifies */
static void read_file(const fpl_hist_config *cfg)
{
	fpl_tensor_file *tf;
	fpl_tensor_stream *s;
	char err[512];
	size_t got;
	fpl_hist h;
	if (fpl_tensor_open(&tf, path, NULL, err, sizeof err) ||
	    fpl_tensor_stream_open(&s, tf, 0, err, sizeof err)) {
		fprintf(stderr, "bhist: %s\n", err);
		exit(1);
	}
	if (cfg)
		fpl_hist_init(&h, cfg);
	while (fpl_tensor_stream_read_f32(s, dst, CH, &got, err, sizeof err) == 0 && got) {
		if (cfg)
			classify(&h, dst, got);
		else
			sink += (uint64_t)dst[0];
	}
	if (cfg) {
		fpl_hist_finish(&h);
		sink += h.normal;
		fpl_hist_release(&h);
	}
	fpl_tensor_stream_close(s);
	fpl_tensor_close(tf);
}

static void run_read(void *c)
{
	(void)c;
	read_file(NULL);
}

static void run_read_classify(void *c)
{
	read_file((const fpl_hist_config *)c);
}

/* Issue 24's floor pair under the selected kernels: hist into e4m3fn,
 * ne, of N(0, 1) data (*qn) and of the gradient-like data x (*qg), each
 * as a ratio to memcpy timed in turns.  0, or 1 when out of memory. */
static int floor_pair(int reps, double *qn, double *qg)
{
	fpl_format f8;
	fpl_hist_config c8;
	double *gd = malloc((size_t)N * sizeof *gd);
	float *g = malloc((size_t)N * 4);

	if (!gd || !g || fpl_format_lookup(&f8, "e4m3fn")) {
		free(gd);
		free(g);
		return 1;
	}
	bench_gauss(gd, N, 1.0, 1);
	for (size_t i = 0; i < N; i++)
		g[i] = (float)gd[i];
	free(gd);
	fpl_hist_config_init(&c8, &f8);
	*qn = paired_hist(&c8, g, reps);
	*qg = paired_hist(&c8, x, reps);
	free(g);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = bench_reps();
	fmt_name = argc > 1 ? argv[1] : "e4m3fn";
	x = malloc((size_t)N * 4);
	dst = malloc((size_t)N * 4);
	double *tmp = malloc(CH * sizeof *tmp);
	if (!x || !dst || !tmp)
		return 1;
	/* gradient-like data: log-normal magnitudes spanning 2^-40..2^10 */
	for (size_t i = 0; i < N; i += CH) {
		bench_gauss(tmp, CH, 8.0, 12345 + i);
		for (size_t j = 0; j < CH; j++)
			x[i + j] = (float)(__builtin_exp2(tmp[j] - 15) * ((j & 1) ? -1 : 1));
	}
	free(tmp);
	const char *td = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/fplab-bhist-%d.npy", td && *td ? td : "/tmp", (int)getpid());
	FILE *fp = fopen(path, "wb");
	if (!fp || fpl_npy_write_header(fp, FPL_DT_F32, N) || fwrite(x, 4, N, fp) != N || fclose(fp)) {
		fprintf(stderr, "bhist: cannot write %s\n", path);
		return 1;
	}
	fpl_format f;
	if (fpl_format_lookup(&f, fmt_name)) {
		fprintf(stderr, "bhist: unknown format %s\n", fmt_name);
		return 1;
	}
	fpl_hist_config cfg;
	fpl_hist_config_init(&cfg, &f);

	double mb = (double)N * 4 / 1e6;
	double t_mem = bench_best(run_memcpy, NULL, reps);
	double t_read = bench_best(run_read, NULL, reps);
	double t_cls = bench_best(run_classify, &cfg, reps);
	double t_rnd = bench_best(run_round, &f, reps);
	double t_all = bench_best(run_read_classify, &cfg, reps);
	/* dst = the cast of x, for the own-work timings */
	{
		fpl_state st;
		fpl_state_init(&st, 0);
		fpl_round_array_f32(&f, dst, x, OWN, FPL_RND_NE, &st);
	}
	own_fn = hist_classify_f32;
	double t_own_ref = bench_best(run_own, &cfg, reps), t_own_avx2 = 0, t_own_avx512 = 0;
#ifdef FPL_HAVE_X86_KERNELS
	const fpl_cpu_features *cpu = fpl_cpu();
	if (cpu->avx2 && cpu->fma) {
		own_fn = hist_classify_f32_avx2;
		t_own_avx2 = bench_best(run_own, &cfg, reps);
	}
	if (cpu->avx512f && cpu->avx512bw && cpu->avx512dq && cpu->avx512vl && cpu->fma) {
		own_fn = hist_classify_f32_avx512;
		t_own_avx512 = bench_best(run_own, &cfg, reps);
	}
#endif
	unlink(path);
	/* does fpl_hist_add_f32 cast in its own pass here (hist.c)? */
	int fused = 0;
#ifdef FPL_HAVE_X86_KERNELS
	fused = strcmp(fpl_kernels_selected(), "ref") != 0 && cpu->avx2 && cpu->fma;
#endif
	double q24 = 0, q24g = 0;
	if (floor_pair(reps, &q24, &q24g))
		return 1;
	printf("bhist: %u f32 values (%.0f MB), format %s, one thread, best of %d, kernels %s\n",
	       N, mb, fmt_name, reps, fpl_kernels_selected());
	printf("  %-34s %8.0f MB/s\n", "memcpy 64 MiB (baseline)", mb / t_mem);
	printf("  %-34s %8.0f MB/s\n", "read .npy (page cache, 256K buffer)", mb / t_read);
	printf("  %-34s %8.0f MB/s  (%.2fx memcpy)\n", "classify in memory (fpl_hist)", mb / t_cls,
	       t_mem / t_cls);
	printf("  %-34s %8.0f MB/s  (%.2fx reading alone)\n", "read + classify", mb / t_all,
	       t_read / t_all);
	if (fused)
		printf("  %-34s %8.0f MB/s  (the engine alone: hist casts in its own pass)\n",
		       "  fpl_round_array_f32", mb / t_rnd);
	else {
		printf("  %-34s %8.0f MB/s  (the engine's share of classify)\n",
		       "  of which fpl_round_array_f32", mb / t_rnd);
		printf("  %-34s %8.0f MB/s\n", "  hist's own work (classify - round)",
		       t_cls > t_rnd ? mb / (t_cls - t_rnd) : 0.0);
	}
	printf("  %-34s %8.0f MB/s\n", "  hist's own work in L2, portable", mb / t_own_ref);
	if (t_own_avx2 > 0)
		printf("  %-34s %8.0f MB/s  (%.2fx portable)\n", "  hist's own work in L2, avx2",
		       mb / t_own_avx2, t_own_ref / t_own_avx2);
	if (t_own_avx512 > 0)
		printf("  %-34s %8.0f MB/s  (%.2fx portable)\n", "  hist's own work in L2, avx512",
		       mb / t_own_avx512, t_own_ref / t_own_avx512);
	printf("  target: classification >= 500 MB/s per core: %s\n",
	       mb / t_cls >= 500 ? "met" : "NOT met");
	printf("  issue 24: hist of N(0, 1) into e4m3fn, ne, %.2f x memcpy (in turns), floor "
	       "0.5: %s\n",
	       q24, q24 >= 0.5 ? "met" : "NOT met");
	printf("  issue 24: hist of gradient-like data into e4m3fn, ne, %.2f x memcpy (in turns), "
	       "floor 0.5: %s\n",
	       q24g, q24g >= 0.5 ? "met" : "NOT met");
	/* the avx2 set too where the main one is avx512 (as bround): the
	 * floor holds on AVX2-only CPUs */
	{
		char main_set[32];
		snprintf(main_set, sizeof main_set, "%s", fpl_kernels_selected());
		if (bench_want_avx2() && fpl_kernels_select("avx2") == 0) {
			double q2 = 0, q2g = 0;
			if (floor_pair(reps, &q2, &q2g))
				return 1;
			printf("  avx2: hist of N(0, 1) into e4m3fn, ne, %.2f x memcpy (in turns), "
			       "floor 0.5: %s\n", q2, q2 >= 0.5 ? "met" : "NOT met");
			printf("  avx2: hist of gradient-like data into e4m3fn, ne, %.2f x memcpy (in "
			       "turns), floor 0.5: %s\n", q2g, q2g >= 0.5 ? "met" : "NOT met");
			fpl_kernels_select(main_set);
		}
	}
	return sink == 42 ? 2 : 0;
}
