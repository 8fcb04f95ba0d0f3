/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/bnative.c - native GEMM and conversion speed beside the
 * emulation and the libraries (issue 14, item 5).
 *
 * GEMM C = A.B, square n = 256, 512, 1024, row-major and contiguous, on 1
 * and 2 threads, in GFLOP/s (2 n^3 per second): OpenBLAS sgemm (loaded at
 * run time, as bgemm does, with OPENBLAS_CORETYPE=SkylakeX where the CPU
 * has AVX-512, its fastest sgemm there, else unset; the kernel it ran is
 * printed), oneDNN's f32 and bf16 matmul (when built with
 * FPL_HAVE_DNNL and the primitive is implemented for this CPU), fplab's
 * binary32 paths (the native "fma32-avx512" and "fma32" (AVX2) kernels
 * and fpl_accum_gemm under the
 * fp32-fma profile with inexact untracked), its native bf16 kernels
 * ("avx512bf16", "amx-bf16") and fp16 kernel ("avx512fp16", inputs
 * rounded to fp16) where the CPU has them, and the emulated
 * avx512bf16 profile at 256 only (software: slow, and labelled so).
 * Every ratio is to a baseline measured in the same run, same size and
 * thread count; one-thread figures are timed by the calling thread's CPU
 * time (every path runs a one-thread call in the caller, OpenBLAS and
 * oneDNN included, so other processes of a shared machine do not count),
 * two-thread ones and the 2-over-1 table by the wall clock; each figure
 * is the better of two measurements, the paths
 * taken in one order and then in the reverse one.  Then fp32 -> 16-bit
 * conversion against memcpy of the same input bytes (the two timed
 * alternately), one thread; two threads against one for the fp32 kernels
 * at 64 .. 1024; and the floors as met / not met /
 * not measurable here (reason).  Best of N runs; no timed assertion.
 * The one failure is a correctness one: a native kernel whose bits differ
 * from its emulated twin's (exit 1).
 *
 *   bnative             the full report (under a minute on 2 cores)
 *   bnative --speedup   bf16-over-fp32 GEMM speedups as TSV, one thread,
 *                       for experiments/bf16-speedup.sh (under a minute)
 *
 * oneDNN threads: Debian's libdnnl is built on OpenMP (libgomp); the
 * thread count is set with omp_set_num_threads (found with dlsym, since
 * this file is not compiled with -fopenmp) before each primitive is
 * created and run, which is what OMP_NUM_THREADS would set for the whole
 * process.
 *
 * oneDNN's kernels: on a CPU with AMX, oneDNN's bf16 matmul runs its AMX
 * kernel (the AMX floor compares with that), which computes what the
 * amx-bf16 profile computes; VDPBF16PS, and the onednn-bf16 profile, are
 * its AVX512_CORE_BF16 kernels.  oneDNN chooses its ISA once per process
 * (dnnl_set_max_cpu_isa works only before its first call), so the
 * VDPBF16PS floor's baseline is measured by a second run of this program,
 * `bnative --dnnl-avx512bf16` (internal), which caps oneDNN at
 * AVX512_CORE_BF16 (dnnl_set_max_cpu_isa, and ONEDNN_MAX_CPU_ISA for
 * its environment) before any other oneDNN call and prints the figures
 * and the implementation oneDNN ran ("impl", as ONEDNN_VERBOSE names it).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fplab/fplab.h>
#include <fplab/native.h>
#ifdef FPL_HAVE_DNNL
#include <dnnl.h>
#endif

#include "bench.h"

#define NMAX 1024		/* largest GEMM size; the data is NMAX^2 */
#define EMU_BF16_MAX 256	/* the emulated bf16 GEMM runs at this size and below */
#define CHECK_N 512		/* native fma32 == emulated fp32-fma, checked here */
#define CVT_N (1u << 24)	/* conversion: elements */
#define MIN_TIME 0.25		/* seconds of runs per GEMM figure, at least */

static const size_t sizes[] = { 256, 512, 1024 };
#define NSIZES (sizeof sizes / sizeof *sizes)

enum path {
	P_BLAS,
	P_DNNL_F32,
	P_DNNL_BF16,
	P_DNNL_BF16_A512,
	P_FMA32,
	P_FMA32_AVX2,
	P_EMU_F32,
	P_DPBF16,
	P_AMX,
	P_FP16,
	P_EMU_BF16,
	NPATH
};

static const char *const path_label[NPATH] = {
	"OpenBLAS sgemm",
	"oneDNN f32 matmul",
	"oneDNN bf16 matmul",
	"oneDNN bf16 matmul capped at AVX512_CORE_BF16",
	"fplab fp32 native fma32-avx512 (AVX-512)",
	"fplab fp32 native fma32 (AVX2)",
	"fplab fp32 emulated fp32-fma (inexact untracked)",
	"fplab bf16 native avx512bf16 (VDPBF16PS)",
	"fplab bf16 native amx-bf16 (TDPBF16PS)",
	"fplab fp16 native avx512fp16 (VFMADD231PH)",
	"fplab bf16 EMULATED avx512bf16 (software)",
};

/* cblas_sgemm(RowMajor = 101, NoTrans = 111, ...) */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
			 const float *, int, float, float *, int);

/* The inputs, shared by every path; size n uses the first n*n of each. */
typedef struct data {
	float *af, *bf;		/* N(0, 1) binary32 */
	float *ab, *bb;		/* the same rounded to bf16 (ne), held in floats */
	uint16_t *a16, *b16;	/* their bf16 encodings, for oneDNN */
	float *ah, *bh;		/* af, bf rounded to fp16 (ne), held in floats */
	double *ahd, *bhd;	/* ah, bh as doubles */
	double *ad, *bd;	/* af, bf as doubles, for fpl_accum_gemm */
	double *abd, *bbd;	/* ab, bb as doubles */
	float *c, *c2;
	double *cd;
} data;

#ifdef FPL_HAVE_DNNL
typedef struct dnnl_prim {
	dnnl_primitive_t p;
	dnnl_memory_t a, b, c;
} dnnl_prim;
#endif

/* What the run found: libraries, kernels, and why a path is absent. */
typedef struct bench {
	data d;
	sgemm_fn sgemm;
	void (*blas_threads)(int);
	void (*omp_threads)(int);
	const fpl_native_kernel *k[NPATH];	/* the native paths' kernels */
	char blas_core[64];			/* openblas_get_corename() */
	char blas_env[96];			/* what bnative did to OPENBLAS_CORETYPE */
	const char *why[NPATH];			/* NULL: the path runs here */
	char impl[2][96];			/* oneDNN implementation, f32 / bf16 */
	char dnnl_why[160];
	/* the capped oneDNN bf16 matmul, measured by the second run */
	double a512[NSIZES][2];			/* GFLOP/s, [size][threads - 1] */
	double a512_dp[NSIZES][2];		/* fplab's VDPBF16PS beside it, same run */
	char a512_impl[96], a512_isa[32], a512_why[160];
#ifdef FPL_HAVE_DNNL
	dnnl_engine_t eng;
	dnnl_stream_t strm;
#endif
} bench;

/* One timed GEMM. */
typedef struct job {
	const bench *b;
	enum path p;
	size_t n;
	int threads;
	fpl_accum_model m;
#ifdef FPL_HAVE_DNNL
	dnnl_prim q;
#endif
	int rc;
} job;

/* The inputs of a path or profile: 0 binary32, 1 bf16, 2 fp16. */
static int input_kind(enum path p)
{
	return p == P_DPBF16 || p == P_AMX || p == P_EMU_BF16 ? 1 : p == P_FP16 ? 2 : 0;
}

static const float *in_a(const data *d, int kind)
{
	return kind == 1 ? d->ab : kind == 2 ? d->ah : d->af;
}

static const float *in_b(const data *d, int kind)
{
	return kind == 1 ? d->bb : kind == 2 ? d->bh : d->bf;
}

static const double *in_ad(const data *d, int kind)
{
	return kind == 1 ? d->abd : kind == 2 ? d->ahd : d->ad;
}

static const double *in_bd(const data *d, int kind)
{
	return kind == 1 ? d->bbd : kind == 2 ? d->bhd : d->bd;
}

static void run_job(void *ctx)
{
	job *j = ctx;
	const data *d = &j->b->d;
	int n = (int)j->n, kind = input_kind(j->p);
	fpl_state st;

	switch (j->p) {
	case P_BLAS:
		j->b->sgemm(101, 111, 111, n, n, n, 1.0f, d->af, n, d->bf, n, 0.0f, d->c, n);
		break;
	case P_FMA32:
	case P_FMA32_AVX2:
	case P_DPBF16:
	case P_AMX:
	case P_FP16:
		j->rc = fpl_native_gemm(j->b->k[j->p], 0, j->n, j->n, j->n, in_a(d, kind),
					in_b(d, kind), d->c, j->threads);
		break;
	case P_EMU_F32:
	case P_EMU_BF16:
		fpl_state_init(&st, 1);
		st.threads = j->threads;
		st.untracked = FPL_FLAG_INEXACT;
		j->rc = fpl_accum_gemm(d->cd, j->n, &j->m, 0, j->n, j->n, j->n, in_ad(d, kind),
				       j->n, 0, in_bd(d, kind), j->n, 0, NULL, &st);
		break;
	case P_DNNL_F32:
	case P_DNNL_BF16:
#ifdef FPL_HAVE_DNNL
	{
		dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, j->q.a }, { DNNL_ARG_WEIGHTS, j->q.b },
					    { DNNL_ARG_DST, j->q.c } };
		j->rc = (int)dnnl_primitive_execute(j->q.p, j->b->strm, 3, args);
		if (!j->rc)
			j->rc = (int)dnnl_stream_wait(j->b->strm);
	}
#endif
		break;
	default:
		j->rc = -1;
	}
}

#ifdef FPL_HAVE_DNNL
static const char *dnnl_isa_name(dnnl_cpu_isa_t isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return "other";
	}
}

/* A matmul primitive on j's size and dtype, its memories on the bench's
 * arrays; impl receives its implementation name.  0 or a dnnl status. */
static int dnnl_make(job *j, char *impl, size_t implsz)
{
	const bench *b = j->b;
	int bf16 = j->p == P_DNNL_BF16;
	dnnl_dims_t dims = { (dnnl_dim_t)j->n, (dnnl_dim_t)j->n };
	dnnl_data_type_t in = bf16 ? dnnl_bf16 : dnnl_f32;
	dnnl_memory_desc_t amd, bmd, cmd;
	dnnl_matmul_desc_t md;
	dnnl_primitive_desc_t pd;
	const char *name = NULL;
	int rc;

	memset(&j->q, 0, sizeof j->q);
	if (b->omp_threads)
		b->omp_threads(j->threads);
	if ((rc = dnnl_memory_desc_init_by_tag(&amd, 2, dims, in, dnnl_ab))
	    || (rc = dnnl_memory_desc_init_by_tag(&bmd, 2, dims, in, dnnl_ab))
	    || (rc = dnnl_memory_desc_init_by_tag(&cmd, 2, dims, dnnl_f32, dnnl_ab))
	    || (rc = dnnl_matmul_desc_init(&md, &amd, &bmd, NULL, &cmd))
	    || (rc = dnnl_primitive_desc_create(&pd, &md, NULL, b->eng, NULL)))
		return rc;
	if (!dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) && name)
		snprintf(impl, implsz, "%s", name);
	rc = dnnl_primitive_create(&j->q.p, pd);
	dnnl_primitive_desc_destroy(pd);
	if (rc)
		return rc;
	if ((rc = dnnl_memory_create(&j->q.a, &amd, b->eng,
				     bf16 ? (void *)b->d.a16 : (void *)b->d.af))
	    || (rc = dnnl_memory_create(&j->q.b, &bmd, b->eng,
					bf16 ? (void *)b->d.b16 : (void *)b->d.bf))
	    || (rc = dnnl_memory_create(&j->q.c, &cmd, b->eng, b->d.c)))
		return rc;
	return 0;
}

static void dnnl_drop(job *j)
{
	dnnl_memory_destroy(j->q.a);
	dnnl_memory_destroy(j->q.b);
	dnnl_memory_destroy(j->q.c);
	dnnl_primitive_destroy(j->q.p);
	memset(&j->q, 0, sizeof j->q);
}

/* Engine and stream; the bf16 primitive tried once at 256 so that a CPU
 * it is not implemented for is said once, with the reason. */
static void dnnl_open(bench *b)
{
	const dnnl_version_t *v = dnnl_version();
	const char *isa = dnnl_isa_name(dnnl_get_effective_cpu_isa());
	job j = { 0 };
	int rc;

	if (dnnl_engine_create(&b->eng, dnnl_cpu, 0) || dnnl_stream_create(&b->strm, b->eng,
									   dnnl_stream_default_flags)) {
		b->why[P_DNNL_F32] = b->why[P_DNNL_BF16] = "no oneDNN CPU engine";
		return;
	}
	snprintf(b->dnnl_why, sizeof b->dnnl_why,
		 "oneDNN %d.%d.%d (OpenMP runtime, effective ISA %s): bf16 matmul not "
		 "implemented for this CPU (oneDNN's bf16 needs avx512_core)",
		 v->major, v->minor, v->patch, isa);
	j.b = b;
	j.n = 256;
	j.threads = 1;
	j.p = P_DNNL_F32;
	if ((rc = dnnl_make(&j, b->impl[0], sizeof b->impl[0])))
		b->why[P_DNNL_F32] = "oneDNN f32 matmul primitive creation failed";
	dnnl_drop(&j);
	j.p = P_DNNL_BF16;
	if ((rc = dnnl_make(&j, b->impl[1], sizeof b->impl[1])))
		b->why[P_DNNL_BF16] = rc == dnnl_unimplemented ? b->dnnl_why
					: "oneDNN bf16 matmul primitive creation failed";
	dnnl_drop(&j);
}
#endif

static double measure(const bench *b, enum path p, size_t n, int threads);
static int data_fill(data *d);

#ifdef FPL_HAVE_DNNL
/*
 * bnative --dnnl-avx512bf16: oneDNN capped at AVX512_CORE_BF16 before
 * its first call; prints "isa NAME", then "impl NAME" and one
 * "g N THREADS GFLOPS DPGFLOPS" per size and thread count: oneDNN's and
 * fplab's VDPBF16PS kernel's (0 when it cannot run here), measured in
 * turn in this run, each the best of three, in the order oneDNN, fplab,
 * fplab, oneDNN, oneDNN, fplab; or "why REASON".  Exit status 0 unless out of memory.
 */
static int dnnl_capped_main(void)
{
	static bench b;
	const char *why = "";
	dnnl_status_t rc;
	size_t s;
	int th;

	setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16", 1);
	rc = dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core_bf16);
	if (data_fill(&b.d))
		return 1;
	b.omp_threads = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	dnnl_open(&b);
	b.k[P_DPBF16] = fpl_native_find(FPL_NATIVE_GEMM, "avx512bf16");
	if (!b.k[P_DPBF16] || !fpl_native_usable(b.k[P_DPBF16], &why))
		b.why[P_DPBF16] = "no VDPBF16PS kernel here";
	printf("isa\t%s\n", dnnl_isa_name(dnnl_get_effective_cpu_isa()));
	if (rc != dnnl_success) {
		printf("why\tdnnl_set_max_cpu_isa(avx512_core_bf16) failed (status %d)\n", (int)rc);
		return 0;
	}
	if (b.why[P_DNNL_BF16]) {
		printf("why\t%s\n", b.why[P_DNNL_BF16]);
		return 0;
	}
	printf("impl\t%s\n", b.impl[1]);
	for (s = 0; s < NSIZES; s++)
		for (th = 1; th <= 2; th++) {
			static const enum path turn[6] = { P_DNNL_BF16, P_DPBF16, P_DPBF16,
							   P_DNNL_BF16, P_DNNL_BF16, P_DPBF16 };
			double g = 0, d = 0, x;
			int i;

			for (i = 0; i < 6; i++) {
				enum path p = turn[i];
				double *best = p == P_DPBF16 ? &d : &g;

				x = measure(&b, p, sizes[s], th);
				*best = x > *best ? x : *best;
			}
			printf("g\t%zu\t%d\t%.6g\t%.6g\n", sizes[s], th, g, d);
		}
	return fflush(stdout) ? 1 : 0;
}

/* Run bnative --dnnl-avx512bf16 and keep its figures (b->a512). */
static void dnnl_capped(bench *b)
{
	char exe[4096], cmd[4200], line[512];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	FILE *p;
	int got = 0;

	b->why[P_DNNL_BF16_A512] = b->a512_why;
	snprintf(b->a512_why, sizeof b->a512_why, "the capped oneDNN run (bnative "
		 "--dnnl-avx512bf16) failed");
	if (k <= 0 || strchr(exe, '\''))
		return;
	exe[k] = 0;
	snprintf(cmd, sizeof cmd, "'%s' --dnnl-avx512bf16", exe);
	fflush(stdout);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof line, p)) {
		size_t n, s;
		int th;
		double g, d;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "isa\t", 4))
			snprintf(b->a512_isa, sizeof b->a512_isa, "%.31s", line + 4);
		else if (!strncmp(line, "impl\t", 5))
			snprintf(b->a512_impl, sizeof b->a512_impl, "%.95s", line + 5);
		else if (!strncmp(line, "why\t", 4))
			snprintf(b->a512_why, sizeof b->a512_why, "%.159s", line + 4);
		else if (sscanf(line, "g\t%zu\t%d\t%lf\t%lf", &n, &th, &g, &d) == 4 && th >= 1
			 && th <= 2)
			for (s = 0; s < NSIZES; s++)
				if (sizes[s] == n && g > 0) {
					b->a512[s][th - 1] = g;
					b->a512_dp[s][th - 1] = d;
					got = 1;
				}
	}
	if (p && pclose(p) == 0 && got && b->a512_impl[0])
		b->why[P_DNNL_BF16_A512] = NULL;
}
#endif

static const char *cpu_model(void)
{
	static char name[128] = "unknown CPU";
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof line, f)) {
		char *p = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && p) {
			snprintf(name, sizeof name, "%s", p + 2);
			name[strcspn(name, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return name;
}

/* OpenBLAS, loaded as bgemm loads it; b->sgemm NULL when absent. */
static void blas_open(bench *b)
{
	const char *env = getenv("OPENBLAS_CORETYPE");
	char *(*corename)(void);
	void *h;

	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	/* OpenBLAS at its best here: its SkylakeX kernels where the CPU has
	 * AVX-512 (on Zen 4/5 its own choice may be Haswell's, half as fast),
	 * else its own choice; read once, when the library loads */
	if (fpl_cpu()->avx512f) {
		snprintf(b->blas_env, sizeof b->blas_env, "OPENBLAS_CORETYPE=SkylakeX set by "
			 "bnative (the environment had %s)", env ? env : "none");
		setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
	} else {
		snprintf(b->blas_env, sizeof b->blas_env, "OPENBLAS_CORETYPE unset by bnative "
			 "(the environment had %s)", env ? env : "none");
		unsetenv("OPENBLAS_CORETYPE");
	}
	snprintf(b->blas_core, sizeof b->blas_core, "unknown");
	h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		b->sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
		b->blas_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
		corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
		if (corename && corename())
			snprintf(b->blas_core, sizeof b->blas_core, "%s", corename());
	}
	if (!b->sgemm)
		b->why[P_BLAS] = "OpenBLAS sgemm: not found (libopenblas.so.0); "
				 "apt-get install -y libopenblas-dev";
}

/* The native kernels and the oneDNN and OpenBLAS libraries this run has. */
static void bench_open(bench *b)
{
	static const struct {
		enum path p;
		const char *name;
	} nat[] = { { P_FMA32, "fma32-avx512" }, { P_FMA32_AVX2, "fma32" },
		    { P_DPBF16, "avx512bf16" }, { P_AMX, "amx-bf16" }, { P_FP16, "avx512fp16" } };
	const fpl_native_kernel *all;
	size_t i, j, nk;

	blas_open(b);
	all = fpl_native_kernels(&nk);
	for (i = 0; i < sizeof nat / sizeof *nat; i++) {	/* by name: both fp32 ones */
		const char *why = "";
		for (j = 0; j < nk && strcmp(all[j].name, nat[i].name); j++)
			;
		b->k[nat[i].p] = j < nk ? &all[j] : NULL;
		if (!b->k[nat[i].p])
			b->why[nat[i].p] = "not in this build (NATIVE=0 or not x86-64)";
		else if (!fpl_native_usable(b->k[nat[i].p], &why))
			b->why[nat[i].p] = why;
	}
#ifdef FPL_HAVE_DNNL
	b->omp_threads = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	dnnl_open(b);
	dnnl_capped(b);
#else
	b->why[P_DNNL_F32] = b->why[P_DNNL_BF16] = b->why[P_DNNL_BF16_A512] =
		"libdnnl-dev not installed (sudo apt-get install -y libdnnl-dev)";
#endif
}

/* Fill the inputs: N(0, 1) floats, their bf16 roundings, the doubles. */
static int data_fill(data *d)
{
	const size_t nn = (size_t)NMAX * NMAX;
	double *tmp = malloc(nn * sizeof *tmp);
	fpl_format bf16, fp16;
	fpl_state st;
	size_t i;
	int pass;

	d->af = malloc(nn * sizeof *d->af), d->bf = malloc(nn * sizeof *d->bf);
	d->ab = malloc(nn * sizeof *d->ab), d->bb = malloc(nn * sizeof *d->bb);
	d->a16 = malloc(nn * sizeof *d->a16), d->b16 = malloc(nn * sizeof *d->b16);
	d->ad = malloc(nn * sizeof *d->ad), d->bd = malloc(nn * sizeof *d->bd);
	d->abd = malloc(nn * sizeof *d->abd), d->bbd = malloc(nn * sizeof *d->bbd);
	d->c = malloc(nn * sizeof *d->c), d->c2 = malloc(nn * sizeof *d->c2);
	d->cd = malloc(nn * sizeof *d->cd);
	d->ah = malloc(nn * sizeof *d->ah), d->bh = malloc(nn * sizeof *d->bh);
	d->ahd = malloc(nn * sizeof *d->ahd), d->bhd = malloc(nn * sizeof *d->bhd);
	if (!d->ah || !d->bh || !d->ahd || !d->bhd || fpl_format_lookup(&fp16, "fp16"))
		return -1;
	if (!tmp || !d->af || !d->bf || !d->ab || !d->bb || !d->a16 || !d->b16 || !d->ad || !d->bd
	    || !d->abd || !d->bbd || !d->c || !d->c2 || !d->cd || fpl_format_lookup(&bf16, "bf16"))
		return -1;
	fpl_state_init(&st, 1);
	for (pass = 0; pass < 2; pass++) {
		float *f = pass ? d->bf : d->af, *h = pass ? d->bb : d->ab;
		double *fd = pass ? d->bd : d->ad, *hd = pass ? d->bbd : d->abd;
		uint16_t *e = pass ? d->b16 : d->a16;
		bench_gauss(tmp, nn, 1.0, (uint64_t)pass + 1);
		for (i = 0; i < nn; i++)
			f[i] = (float)tmp[i];
		if (fpl_round_array_f32(&bf16, h, f, nn, FPL_RND_NE, &st)
		    || fpl_round_array_f32(&fp16, pass ? d->bh : d->ah, f, nn, FPL_RND_NE, &st))
			return -1;
		for (i = 0; i < nn; i++) {
			uint32_t u;
			memcpy(&u, h + i, sizeof u);
			e[i] = (uint16_t)(u >> 16);
			fd[i] = f[i];
			hd[i] = h[i];
			(pass ? d->bhd : d->ahd)[i] = (pass ? d->bh : d->ah)[i];
		}
	}
	free(tmp);
	memset(d->c, 0, nn * sizeof *d->c);
	return 0;
}

/* The calling thread's CPU time: a one-thread run of every path (OpenBLAS
 * and oneDNN set to one thread run in the caller too) timed without the
 * time other processes of a shared machine take from it. */
static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Set while two-thread figures are compared with one-thread ones: both
 * then by the wall clock. */
static int wall_only;

static double cpu_best(void (*fn)(void *), void *ctx, int reps)
{
	double best = 1e30;
	int i;

	for (i = 0; i < reps; i++) {
		double t0 = cpu_now(), t;
		fn(ctx);
		t = cpu_now() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* GFLOP/s of path p at size n on `threads` threads (one thread: CPU time
 * of the calling thread, cpu_now; two: wall clock): one warm-up run, then
 * the best of at least bench_reps() runs and MIN_TIME seconds (at most 100
 * runs).  0 when the path is absent here, -1 on an error (printed). */
static double measure(const bench *b, enum path p, size_t n, int threads)
{
	const double flops = 2.0 * (double)n * (double)n * (double)n;
	job j;
	double t0, t, best;
	int reps, cpu;

	if (b->why[p] || (p == P_EMU_BF16 && n > EMU_BF16_MAX))
		return 0;
	if (p == P_DNNL_BF16_A512) {	/* measured by the second run */
		size_t s;
		for (s = 0; s < NSIZES && sizes[s] != n; s++)
			;
		return s < NSIZES ? b->a512[s][threads - 1] : 0;
	}
	memset(&j, 0, sizeof j);
	j.b = b, j.p = p, j.n = n, j.threads = threads;
	if (p == P_BLAS && b->blas_threads)
		b->blas_threads(threads);
	if ((p == P_EMU_F32 && fpl_accum_profile(&j.m, "fp32-fma"))
	    || (p == P_EMU_BF16 && fpl_accum_profile(&j.m, "avx512bf16")))
		return -1;
#ifdef FPL_HAVE_DNNL
	if ((p == P_DNNL_F32 || p == P_DNNL_BF16) && dnnl_make(&j, (char[96]){ 0 }, 96)) {
		dnnl_drop(&j);
		return -1;
	}
#endif
	cpu = threads == 1 && !wall_only;
	t0 = cpu ? cpu_now() : bench_now();
	run_job(&j);
	t = (cpu ? cpu_now() : bench_now()) - t0;
	reps = bench_reps();
	if (t * reps < MIN_TIME)
		reps = t * 100 < MIN_TIME ? 100 : (int)(MIN_TIME / t) + 1;
	best = j.rc ? 0 : cpu ? cpu_best(run_job, &j, reps) : bench_best(run_job, &j, reps);
#ifdef FPL_HAVE_DNNL
	if (p == P_DNNL_F32 || p == P_DNNL_BF16)
		dnnl_drop(&j);
#endif
	if (j.rc) {
		fprintf(stderr, "bnative: %s at %zu: error %d (%s)\n", path_label[p], n, j.rc,
			p == P_DNNL_F32 || p == P_DNNL_BF16 ? "a dnnl_status_t" : fpl_strerror(j.rc));
		return -1;
	}
	return flops / (best < t ? best : t) * 1e-9;
}

static void print_ratio(double g, double base)
{
	if (g > 0 && base > 0)
		printf(" %10.3f", g / base);
	else
		printf(" %10s", "-");
}

/*
 * r[p] for every path at size n on `threads` threads, each path measured
 * twice, in path order and then in reverse order, the better figure kept:
 * a burst of load from elsewhere, or the spinning threads a library
 * leaves behind after its call, then weighs on no path more than on its
 * baselines.  The emulated bf16 GEMM (seconds per run) is measured once.
 */
static void measure_both_ways(const bench *b, double r[NPATH], size_t n, int threads)
{
	int p;

	for (p = 0; p < NPATH; p++)
		r[p] = measure(b, (enum path)p, n, threads);
	for (p = NPATH - 1; p >= 0; p--) {
		double again;
		if (r[p] <= 0 || p == P_EMU_BF16)
			continue;
		again = measure(b, (enum path)p, n, threads);
		r[p] = again > r[p] ? again : r[p];
	}
}

/* The table: g[size][threads-1][path], 0 where a path did not run. */
static void gemm_table(const bench *b, double g[NSIZES][2][NPATH])
{
	size_t s;
	int th, p;

	printf("\n%5s %7s  %-50s %9s %10s %10s\n", "size", "threads", "path", "GFLOP/s",
	       "x OpenBLAS", "x oneDNN32");
	for (s = 0; s < NSIZES; s++) {
		for (th = 1; th <= 2; th++) {
			double *r = g[s][th - 1];
			measure_both_ways(b, r, sizes[s], th);
			for (p = 0; p < NPATH; p++) {
				if (r[p] == 0)
					continue;
				printf("%5zu %7d  %-50s ", sizes[s], th, path_label[p]);
				if (r[p] < 0) {
					printf("%9s\n", "error");
					continue;
				}
				printf("%9.2f", r[p]);
				print_ratio(r[p], r[P_BLAS]);
				print_ratio(r[p], r[P_DNNL_F32]);
				printf("\n");
			}
		}
	}
}

/* Outputs of the native kernel k (inputs of kind input_kind()) that differ, bit
 * for bit, from fpl_accum_gemm under profile at size n; -1 on an error. */
static long check_native(const bench *b, const fpl_native_kernel *k, const char *profile,
			 int kind, size_t n)
{
	const data *d = &b->d;
	fpl_accum_model m;
	fpl_state st;
	long bad = 0;
	size_t i;

	fpl_state_init(&st, 1);
	st.threads = 2;
	st.untracked = FPL_FLAG_INEXACT;
	if (fpl_accum_profile(&m, profile)
	    || fpl_native_gemm(k, 0, n, n, n, in_a(d, kind), in_b(d, kind), d->c2, 2)
	    || fpl_accum_gemm(d->cd, n, &m, 0, n, n, n, in_ad(d, kind), n, 0, in_bd(d, kind), n, 0,
			      NULL, &st))
		return -1;
	for (i = 0; i < n * n; i++) {
		float e = (float)d->cd[i];
		bad += memcmp(&e, d->c2 + i, sizeof e) != 0;
	}
	return bad;
}

/* Native kernels against their emulated twins; 1 when any differs. */
static int checks(const bench *b)
{
	static const struct {
		enum path p;
		const char *profile;
		size_t n;
	} c[] = { { P_FMA32, "fp32-fma", CHECK_N }, { P_FMA32_AVX2, "fp32-fma", CHECK_N },
		  { P_DPBF16, "avx512bf16", 256 },
		  { P_AMX, "amx-bf16", 256 }, { P_FP16, "fp16-fma", 256 } };
	size_t i;
	int fail = 0;

	printf("\n");
	for (i = 0; i < sizeof c / sizeof *c; i++) {
		long bad;
		if (b->why[c[i].p]) {
			printf("check: native %s == emulated %s: skipped (%s)\n", b->k[c[i].p]
			       ? b->k[c[i].p]->name : c[i].profile, c[i].profile, b->why[c[i].p]);
			continue;
		}
		bad = check_native(b, b->k[c[i].p], c[i].profile, input_kind(c[i].p), c[i].n);
		printf("check: native %s == emulated %s at %zu^3: %s", b->k[c[i].p]->name,
		       c[i].profile, c[i].n, bad == 0 ? "yes, every bit" : "NO");
		if (bad > 0)
			printf(" (%ld of %zu outputs differ)", bad, c[i].n * c[i].n);
		if (bad < 0)
			printf(" (error)");
		printf("\n");
		fail |= bad != 0;
	}
	return fail;
}

typedef struct cvt_ctx {
	const fpl_native_kernel *k;
	fpl_format f;
	float *x, *y;
	uint16_t *h;
	int rc;
} cvt_ctx;

static void run_memcpy(void *p)
{
	cvt_ctx *c = p;
	memcpy(c->y, c->x, CVT_N * sizeof *c->x);
	__asm__ __volatile__("" : : "r"(c->y) : "memory");
}

static void run_native_cvt(void *p)
{
	cvt_ctx *c = p;
	c->rc |= fpl_native_round_f32(c->k, FPL_RND_NE, c->x, CVT_N, c->h);
}

static void run_round_f32(void *p)
{
	cvt_ctx *c = p;
	fpl_state st;

	fpl_state_init(&st, 1);
	c->rc |= fpl_round_array_f32(&c->f, c->y, c->x, CVT_N, FPL_RND_NE, &st);
}

/* Best time of fn over reps runs, each run alternating with a memcpy so
 * that both see the same load (*tcopy: the best memcpy among them); 0
 * when skipped (why not NULL), -1 on an error. */
static double cvt_time(cvt_ctx *c, const char *why, void (*fn)(void *), int reps, double *tcopy)
{
	double t = 1e30;
	int i;

	*tcopy = 0;
	if (why)
		return 0;
	c->rc = 0;
	fn(c);
	*tcopy = 1e30;
	for (i = 0; i < reps && !c->rc; i++) {
		double t0 = bench_now(), t1, t2;
		run_memcpy(c);
		t1 = bench_now();
		fn(c);
		t2 = bench_now();
		*tcopy = t1 - t0 < *tcopy ? t1 - t0 : *tcopy;
		t = t2 - t1 < t ? t2 - t1 : t;
	}
	return c->rc ? -1 : t;
}

/* One conversion row; its ratio to its memcpy, 0 when it did not run. */
static double cvt_row(const char *label, const char *why, double t, double tcopy)
{
	if (t == 0) {
		printf("  %-44s skipped: %s\n", label, why);
		return 0;
	}
	if (t < 0) {
		printf("  %-44s error\n", label);
		return 0;
	}
	printf("  %-44s %9.0f %8.2f %9.0f\n", label, CVT_N / t * 1e-6, tcopy / t,
	       CVT_N / tcopy * 1e-6);
	return tcopy / t;
}

/* fp32 -> 16-bit conversion against memcpy; r[0] VCVTNEPS2BF16, r[1]
 * fplab's own bf16 ne, r[2] F16C; *why when the native bf16 is absent. */
static int conversion(double r[3], const char **why)
{
	static const char *const label[3] = { "native avx512bf16-cvt (VCVTNEPS2BF16), bf16",
					      "fplab fpl_round_array_f32, bf16 (floats out)",
					      "native f16c (VCVTPS2PH), fp16" };
	const fpl_native_kernel *kb = fpl_native_find(FPL_NATIVE_ROUND, "bf16");
	const fpl_native_kernel *kh = fpl_native_find(FPL_NATIVE_ROUND, "fp16");
	const char *wb = "", *wh = "";
	const int reps = 2 * bench_reps();
	double chunk[4096], t[3], tc[3];
	cvt_ctx c = { 0 };
	size_t i;

	c.x = malloc(CVT_N * sizeof *c.x);
	c.y = malloc(CVT_N * sizeof *c.y);
	c.h = malloc(CVT_N * sizeof *c.h);
	if (!c.x || !c.y || !c.h || fpl_format_lookup(&c.f, "bf16"))
		return -1;
	for (i = 0; i < CVT_N; i += 4096) {
		size_t k;
		bench_gauss(chunk, 4096, 1.0, i + 7);
		for (k = 0; k < 4096; k++)
			c.x[i + k] = (float)chunk[k];
	}
	memset(c.y, 0, CVT_N * sizeof *c.y);
	memset(c.h, 0, CVT_N * sizeof *c.h);
	if (!kb || !fpl_native_usable(kb, &wb))
		*why = kb ? wb : "no avx512bf16-cvt kernel in this build";
	if (!kh || !fpl_native_usable(kh, &wh))
		wh = kh ? wh : "no f16c kernel in this build";
	c.k = kb;
	t[0] = cvt_time(&c, *why, run_native_cvt, reps, &tc[0]);
	t[1] = cvt_time(&c, NULL, run_round_f32, reps, &tc[1]);
	c.k = kh;
	t[2] = cvt_time(&c, *wh ? wh : NULL, run_native_cvt, reps, &tc[2]);
	printf("\nconversion: 2^24 binary32 N(0,1) -> 16 bits, nearest even, one thread, best of "
	       "%d;\nratio = elements/s over memcpy of the same 64 MiB of binary32 input, the two "
	       "timed alternately\n", reps);
	printf("  %-44s %9s %8s %9s\n", "path", "Melem/s", "x memcpy", "memcpy");
	r[0] = cvt_row(label[0], *why, t[0], tc[0]);
	r[1] = cvt_row(label[1], NULL, t[1], tc[1]);
	r[2] = cvt_row(label[2], wh, t[2], tc[2]);
	free(c.x);
	free(c.y);
	free(c.h);
	return 0;
}

static const size_t th_sizes[] = { 64, 128, 192, 256, 384, 512, 1024 };
#define NTH (sizeof th_sizes / sizeof *th_sizes)

/*
 * Two threads against one for the fp32 kernels at 64 .. 1024: each
 * figure the better of two, measured 1, 2, 2, 1 threads in turn, so that
 * load from elsewhere weighs on both alike; both by the wall clock.  worst[q] receives the
 * smallest 2-over-1 ratio of kernel q (0: AVX-512, 1: AVX2), at_n[q] its
 * size; 0 where the kernel is absent.
 */
static void threads_table(const bench *b, double worst[2], size_t at_n[2])
{
	static const enum path ps[2] = { P_FMA32, P_FMA32_AVX2 };
	size_t s;
	int q;

	wall_only = 1;
	printf("\ntwo threads against one, both by the wall clock\n");
	printf("%5s  %-42s %9s %9s %9s\n", "size", "path", "1 thread", "2 threads", "2 / 1");
	for (q = 0; q < 2; q++) {
		worst[q] = 0, at_n[q] = 0;
		if (b->why[ps[q]]) {
			printf("skip: %s: %s\n", path_label[ps[q]], b->why[ps[q]]);
			continue;
		}
		for (s = 0; s < NTH; s++) {
			const size_t n = th_sizes[s];
			double g1 = measure(b, ps[q], n, 1), g2 = measure(b, ps[q], n, 2), x;
			x = measure(b, ps[q], n, 2);
			g2 = x > g2 ? x : g2;
			x = measure(b, ps[q], n, 1);
			g1 = x > g1 ? x : g1;
			if (g1 <= 0 || g2 <= 0)
				continue;
			printf("%5zu  %-42s %9.2f %9.2f %9.3f\n", n, path_label[ps[q]], g1, g2,
			       g2 / g1);
			if (worst[q] == 0 || g2 / g1 < worst[q])
				worst[q] = g2 / g1, at_n[q] = n;
		}
	}
	wall_only = 0;
}

static void floors(const bench *b, double g[NSIZES][2][NPATH], const double cvt[3],
		   const char *cvt_why, const double worst[2], const size_t at_n[2])
{
	const double *r = g[NSIZES - 1][0];	/* 1024, one thread: per core */
	const double dp = r[P_DPBF16], on = r[P_DNNL_BF16], amx = r[P_AMX], f32 = r[P_FMA32];
	/* the second run's pair, measured in turn in that run */
	const double on512 = b->a512[NSIZES - 1][0], dp512 = b->a512_dp[NSIZES - 1][0];

	printf("\nfloors (per core: 1024^3, one thread)\n");
	printf("floor: fp32 AVX-512 GEMM (fma32-avx512) at 1024 >= 0.85 x OpenBLAS sgemm: ");
	if (f32 > 0 && r[P_BLAS] > 0)
		printf("%s (%.3f x OpenBLAS, kernel %s; fma32 AVX2 %.3f)\n",
		       f32 >= 0.85 * r[P_BLAS] ? "met" : "NOT met", f32 / r[P_BLAS], b->blas_core,
		       r[P_FMA32_AVX2] > 0 ? r[P_FMA32_AVX2] / r[P_BLAS] : 0.0);
	else
		printf("not measurable here (%s)\n", b->why[P_FMA32] ? b->why[P_FMA32]
			: b->why[P_BLAS] ? b->why[P_BLAS] : "a run failed");
	/* slower: by more than 5%, the spread of two best-of figures of one
	 * path taken in turn on a shared machine */
	printf("floor: two threads never slower than one (fp32 kernels, 64 .. 1024, 5%% "
	       "tolerance): ");
	if (worst[0] > 0 || worst[1] > 0)
		printf("%s (worst 2/1: fma32-avx512 %.3f at %zu, fma32 %.3f at %zu; a ratio "
		       "under 1 on a loaded machine may be its load)\n",
		       (worst[0] == 0 || worst[0] >= 0.95) && (worst[1] == 0 || worst[1] >= 0.95)
		       ? "met" : "NOT met", worst[0], at_n[0], worst[1], at_n[1]);
	else
		printf("not measurable here (no fp32 native kernel)\n");
	/* VDPBF16PS against oneDNN's VDPBF16PS kernels, not its AMX ones */
	printf("floor: VDPBF16PS GEMM at 1024 >= 0.8 x oneDNN bf16 capped at AVX512_CORE_BF16: ");
	if (dp > 0 && dp512 > 0 && on512 > 0)
		printf("%s (%.3f x oneDNN %s, both measured in the second run; %.3f against "
		       "this run's fplab figure)\n", dp512 >= 0.8 * on512 ? "met" : "not met",
		       dp512 / on512, b->a512_impl, dp / on512);
	else
		printf("not measurable here (%s)\n", b->why[P_DPBF16] ? b->why[P_DPBF16]
			: b->why[P_DNNL_BF16_A512] ? b->why[P_DNNL_BF16_A512] : "a run failed");
	printf("floor: AMX >= 0.5 x oneDNN AMX bf16 and >= 5x fplab fp32: ");
	if (amx > 0 && on > 0 && f32 > 0 && strstr(b->impl[1], "amx"))
		printf("%s (%.3f x oneDNN %s, %.2f x fplab fp32)\n",
		       amx >= 0.5 * on && amx >= 5 * f32 ? "met" : "not met", amx / on, b->impl[1],
		       amx / f32);
	else
		printf("not measurable here (%s)\n", b->why[P_AMX] ? b->why[P_AMX]
			: b->why[P_DNNL_BF16] ? b->why[P_DNNL_BF16]
			: amx > 0 && on > 0 ? "oneDNN's bf16 matmul did not use AMX" : "a run failed");
	printf("floor: fp32->bf16 conversion >= 0.9 x memcpy (VCVTNEPS2BF16): ");
	if (cvt[0] > 0)
		printf("%s (%.2f)\n", cvt[0] >= 0.9 ? "met" : "not met", cvt[0]);
	else
		printf("not measurable here (%s)\n", cvt_why ? cvt_why : "the run failed");
	printf("floor: fp32->bf16 conversion >= 0.9 x memcpy (fplab fpl_round_array_f32 ne): ");
	if (cvt[1] > 0)
		printf("%s (%.2f)\n", cvt[1] >= 0.9 ? "met" : "not met", cvt[1]);
	else
		printf("not measurable here (the run failed)\n");
}

/* GFLOP/s of path p at size n (NMAX or EMU_BF16_MAX) on one thread,
 * measured once per run. */
static double speed(const bench *b, double memo[NPATH][2], enum path p, size_t n)
{
	double *g = &memo[p][n == NMAX];

	if (*g <= 0)
		*g = measure(b, p, n, 1);
	return *g;
}

/* Measure every path --speedup uses, then again in reverse order, the
 * better figure kept (as measure_both_ways). */
static void speed_all(const bench *b, double memo[NPATH][2])
{
	static const struct {
		enum path p;
		size_t n;
	} f[] = { { P_DPBF16, NMAX }, { P_AMX, NMAX }, { P_FMA32, NMAX }, { P_DNNL_BF16, NMAX },
		  { P_DNNL_F32, NMAX }, { P_EMU_BF16, EMU_BF16_MAX }, { P_FMA32, EMU_BF16_MAX },
		  { P_EMU_F32, EMU_BF16_MAX } };
	int i;

	for (i = 0; i < (int)(sizeof f / sizeof *f); i++)
		speed(b, memo, f[i].p, f[i].n);
	for (i = (int)(sizeof f / sizeof *f) - 1; i >= 0; i--) {
		double *g = &memo[f[i].p][f[i].n == NMAX], again;
		if (*g <= 0 || f[i].p == P_EMU_BF16)
			continue;
		again = measure(b, f[i].p, f[i].n, 1);
		*g = again > *g ? again : *g;
	}
}

static void put_gflops(double g)
{
	if (g > 0)
		printf("\t%.4g", g);
	else
		printf("\t-");
}

/* One TSV row of --speedup: path's GFLOP/s over its fp32 twin's. */
static void speedup_row(const bench *b, double memo[NPATH][2], enum path p, enum path over,
			size_t n, const char *name, const char *over_name, const char *note)
{
	double g = speed(b, memo, p, n), f = speed(b, memo, over, n);

	printf("%s\t%zu\t1", name, n);
	put_gflops(g);
	printf("\t%s", over_name);
	put_gflops(f);
	if (g > 0 && f > 0)
		printf("\t%.4g\t%s\n", g / f, note);
	else
		printf("\t-\tskipped: %s\n", b->why[p] ? b->why[p] : b->why[over] ? b->why[over]
		       : "a run failed");
}

/* bnative --speedup: bf16 over fp32 GEMM, one thread, for the experiment. */
static void speedup(const bench *b)
{
	static double memo[NPATH][2];

	speed_all(b, memo);
	printf("path\tsize\tthreads\tgflops\tover\tover_gflops\tspeedup\tnote\n");
	speedup_row(b, memo, P_DPBF16, P_FMA32, NMAX, "native-avx512bf16", "native-fma32",
		    "VDPBF16PS vs VFMADD231PS, both fplab");
	speedup_row(b, memo, P_AMX, P_FMA32, NMAX, "native-amx-bf16", "native-fma32",
		    "TDPBF16PS vs VFMADD231PS, both fplab");
	speedup_row(b, memo, P_DNNL_BF16, P_DNNL_F32, NMAX, "onednn-bf16", "onednn-f32",
		    b->impl[1][0] ? b->impl[1] : "oneDNN");
	speedup_row(b, memo, P_EMU_BF16, P_FMA32, EMU_BF16_MAX, "emulated-avx512bf16",
		    "native-fma32", "software emulation of VDPBF16PS, not a native path");
	speedup_row(b, memo, P_EMU_BF16, P_EMU_F32, EMU_BF16_MAX, "emulated-avx512bf16",
		    "emulated-fp32-fma", "both emulated, inexact untracked");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bnative [--speedup]\n");
}

int main(int argc, char **argv)
{
	static bench b;
	static double g[NSIZES][2][NPATH];
	double cvt[3] = { 0 }, worst[2];
	size_t at_n[2];
	const char *cvt_why = NULL;
	size_t nk, i;
	const fpl_native_kernel *k;
	int mode = 0, fail;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
#ifdef FPL_HAVE_DNNL
	if (argc == 2 && !strcmp(argv[1], "--dnnl-avx512bf16"))
		return dnnl_capped_main();
#endif
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--speedup"))) {
		usage(stderr);
		return 2;
	}
	mode = argc == 2;
	if (data_fill(&b.d)) {
		fprintf(stderr, "bnative: out of memory\n");
		return 1;
	}
	bench_open(&b);
	if (mode) {
		speedup(&b);
		return fflush(stdout) ? 1 : 0;
	}
	printf("bnative: GEMM C = A.B, square, row-major, inputs N(0,1) (bf16 and fp16 paths: "
	       "rounded to bf16, fp16), best of >= %d runs and >= %.2f s per figure\n",
	       bench_reps(), MIN_TIME);
	printf("CPU: %s; fplab kernels %s\n", cpu_model(), fpl_kernels_selected());
	printf("timing: one thread by the calling thread's CPU time (other load on a shared "
	       "machine not counted), two threads by the wall clock\n");
	if (b.sgemm)
		printf("OpenBLAS: kernel %s (%s)\n", b.blas_core, b.blas_env);
	k = fpl_native_kernels(&nk);
	for (i = 0; i < nk; i++) {
		const char *why = "";
		int ok = fpl_native_usable(&k[i], &why);
		printf("native %-15s %s%s\n", k[i].name, ok ? "usable" : "not usable: ", why);
	}
	if (b.why[P_DNNL_F32])
		printf("oneDNN: skipped: %s\n", b.why[P_DNNL_F32]);
	else
		printf("oneDNN: f32 matmul available; threads set with omp_set_num_threads "
		       "(libgomp)%s\n", b.omp_threads ? "" : ": NOT FOUND, oneDNN uses its default");
	if (!b.why[P_DNNL_F32])
		printf("oneDNN implementation: f32 %s, bf16 %s\n", b.impl[0],
		       b.why[P_DNNL_BF16] ? "none (skipped, below)" : b.impl[1]);
	if (!b.why[P_DNNL_BF16_A512])
		printf("oneDNN capped at AVX512_CORE_BF16 (a second run, bnative "
		       "--dnnl-avx512bf16): effective ISA %s, bf16 implementation %s\n",
		       b.a512_isa, b.a512_impl);
	for (i = 0; i < NPATH; i++)
		if (b.why[i] && i != P_DNNL_F32 && (i != P_DNNL_BF16 || !b.why[P_DNNL_F32]))
			printf("skip: %s: %s\n", path_label[i], b.why[i]);
	printf("note: %s runs at %d only (software, several orders slower)\n",
	       path_label[P_EMU_BF16], EMU_BF16_MAX);
	gemm_table(&b, g);
	threads_table(&b, worst, at_n);
	fail = checks(&b);
	if (conversion(cvt, &cvt_why))
		return 1;
	floors(&b, g, cvt, cvt_why, worst, at_n);
	if (fflush(stdout))
		return 1;
	return fail;
}
