/* SPDX-License-Identifier: MIT */
/*
 * native.c - the registry of native kernels: one entry per (operation,
 * profile), each with the features it needs and the test of this CPU.
 *
 * The kernels themselves are in native/x86/, the only files compiled with
 * ISA flags; this file is baseline x86-64 (or any architecture: without
 * FPL_HAVE_X86_KERNELS the table is empty of kernels and every lookup
 * says so).  A kernel is called only after its usable() said yes, so an
 * instruction the CPU lacks is never executed.
 *
 * The kernel set in use (fplab/kernels.h, FPLAB_KERNELS) caps the ISA:
 * under "ref" no native kernel runs, under "avx2" only those that need no
 * AVX-512 (f16c, fma32; not fma32-avx512 and the bf16, AMX and fp16
 * ones), so FPLAB_KERNELS=ref turns the CPU's own arithmetic off
 * everywhere.
 *
 * Two entries may share (op, profile), best first (fma32-avx512, then
 * fma32): fpl_native_find gives the first one usable here, so the kernel
 * set caps which one runs; both give the same bits.
 *
 * AMX: Linux hands out the tile-data state (XFEATURE_XTILEDATA, 8 KiB
 * per thread) only on request, arch_prctl(ARCH_REQ_XCOMP_PERM, 18); the
 * request is made once, by the first usable() of an AMX kernel, and is
 * process-wide.  Until it is granted, TILELOADD would raise SIGILL.
 */
#include <pthread.h>
#include <string.h>

#include "kernels/kernels_internal.h"
#include "native/f16_bits.h"
#include "native/native_internal.h"

#if defined(FPL_HAVE_X86_KERNELS) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Eight floats a step, in four independent 64-bit ORs (the check runs
 * before every bf16 GEMM: one OR per element was 40% of a 256^3
 * VDPBF16PS GEMM's time). */
int fpl__native_all_bf16(const float *x, size_t n)
{
	uint64_t q0 = 0, q1 = 0, q2 = 0, q3 = 0;
	uint32_t acc = 0;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t u[4];
		memcpy(u, x + i, sizeof u);
		q0 |= u[0], q1 |= u[1], q2 |= u[2], q3 |= u[3];
	}
	for (; i < n; i++) {
		uint32_t u;
		memcpy(&u, x + i, sizeof u);
		acc |= u;
	}
	q0 |= q1 | q2 | q3;
	acc |= (uint32_t)q0 | (uint32_t)(q0 >> 32);
	return (acc & 0xffffu) == 0;
}

int fpl__native_all_f16(const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, x + i, sizeof u);
		if (!fpl__f32_is_f16(u))
			return 0;
	}
	return 1;
}

#ifdef FPL_HAVE_X86_KERNELS
static int f16c_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (c->f16c)
		return 1;
	*why = "this CPU (or OS) lacks f16c";
	return 0;
}

static int fma32_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (c->avx2 && c->fma)
		return 1;
	*why = "this CPU (or OS) lacks avx2+fma";
	return 0;
}

static int avx512f_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (c->avx512f && c->fma)
		return 1;
	*why = "this CPU (or OS) lacks avx512f";
	return 0;
}

static int bf16_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (!(c->avx512f && c->avx512bw && c->avx512vl)) {
		*why = "this CPU (or OS) lacks avx512f/bw/vl (and avx512_bf16)";
		return 0;
	}
	if (!c->avx512_bf16) {
		*why = "this CPU lacks avx512_bf16";
		return 0;
	}
	return 1;
}

static int fp16_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (!(c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq)) {
		*why = "this CPU (or OS) lacks avx512f/bw/vl/dq (and avx512_fp16)";
		return 0;
	}
	if (!c->avx512_fp16) {
		*why = "this CPU lacks avx512_fp16";
		return 0;
	}
	return 1;
}

/* The AMX tile-data permission, asked once. */
static int amx_granted;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void amx_request(void)
{
#ifdef __linux__
	/* ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 */
	amx_granted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
	amx_granted = 0;
#endif
}

static int amx_usable(const char **why)
{
	const fpl_cpu_features *c = fpl_cpu();

	if (!(c->amx_tile && c->amx_bf16)) {
		*why = "this CPU lacks amx_tile/amx_bf16";
		return 0;
	}
	if (!bf16_usable(why))
		return 0;
	pthread_once(&amx_once, amx_request);
	if (!amx_granted) {
		*why = "the OS refused AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM)";
		return 0;
	}
	return 1;
}

#define BF16_IN "bf16 inputs held in floats"

/* The kernel set in use allows an ISA level: ref 0, avx2 1, avx512 2. */
static int set_allows(int level, const char **why)
{
	const char *s = fpl_kernels_selected();
	int have = !strcmp(s, "avx512") ? 2 : !strcmp(s, "avx2") ? 1 : 0;

	if (fpl_kernels_status()) {
		*why = "FPLAB_KERNELS names no usable kernel set";
		return 0;
	}
	if (have >= level)
		return 1;
	*why = have == 0 ? "the kernel set in use is ref (FPLAB_KERNELS=ref turns native "
			   "kernels off)"
			 : "the kernel set in use is avx2 (FPLAB_KERNELS=avx2 allows no AVX-512)";
	return 0;
}

static int f16c_ok(const char **why)
{
	return f16c_usable(why) && set_allows(1, why);
}

static int fma32_ok(const char **why)
{
	return fma32_usable(why) && set_allows(1, why);
}

static int fma32_avx512_ok(const char **why)
{
	return avx512f_usable(why) && set_allows(2, why);
}

static int bf16_ok(const char **why)
{
	return bf16_usable(why) && set_allows(2, why);
}

static int amx_ok(const char **why)
{
	return amx_usable(why) && set_allows(2, why);
}

static int fp16_ok(const char **why)
{
	return fp16_usable(why) && set_allows(2, why);
}

int fpl__native_fma32_gemm_best(int beta, size_t m, size_t n, size_t kk, const float *a,
				const float *b, float *c, int threads)
{
	const char *why;

	if (fma32_avx512_ok(&why))
		return fpl__native_fma32_avx512_gemm(beta, m, n, kk, a, b, c, threads);
	return fpl__native_fma32_gemm(beta, m, n, kk, a, b, c, threads);
}

static const fpl__native_impl impls[] = {
	{ { "f16c", FPL_NATIVE_ROUND, "fp16", "ne tn tp tz", "f16c",
	    "VCVTPS2PH per element, the mode in its immediate (MXCSR not read)" },
	  f16c_ok, NULL, fpl__native_f16c_round, NULL },
	{ { "avx512bf16-cvt", FPL_NATIVE_ROUND, "bf16", "ne", "avx512_bf16",
	    "VCVTNEPS2BF16 per element: nearest-even, denormal inputs read as zero" },
	  bf16_ok, NULL, fpl__native_bf16_round, NULL },
	{ { "fma32-avx512", FPL_NATIVE_GEMM, "fp32-fma", NULL, "avx512f",
	    "6x32 register blocks of VFMADD231PS zmm chains, k ascending from C or +0 "
	    "(K blocks in order, the chain kept in C between them)" },
	  fma32_avx512_ok, fpl__native_fma32_avx512_gemm, NULL, NULL },
	{ { "fma32", FPL_NATIVE_GEMM, "fp32-fma", NULL, "avx2+fma",
	    "6x16 register blocks of VFMADD231PS chains, k ascending from C or +0" },
	  fma32_ok, fpl__native_fma32_gemm, NULL, NULL },
	{ { "avx512bf16", FPL_NATIVE_GEMM, "avx512bf16", NULL, "avx512_bf16",
	    "VDPBF16PS chains, one per output over all k (pairs, odd element first) "
	    "from C or +0: no K blocking" },
	  bf16_ok, fpl__native_dpbf16_gemm, NULL, NULL },
	{ { "amx-bf16", FPL_NATIVE_GEMM, "amx-bf16", NULL, "amx_tile+amx_bf16",
	    "TDPBF16PS on 16x16 C tiles, K in tiles of 32 ascending, C held in the tile" },
	  amx_ok, fpl__native_amx_gemm, NULL, NULL },
	{ { "avx512fp16", FPL_NATIVE_GEMM, "fp16-fma", NULL, "avx512_fp16",
	    "8x64 register blocks of VFMADD231PH chains {rn-sae}, one per output, k "
	    "ascending from C or +0: no K blocking" },
	  fp16_ok, fpl__native_ph_gemm, NULL, NULL },
	{ { "avx512fp16-arith", FPL_NATIVE_ARITH, "fp16", "ne tn tp tz", "avx512_fp16",
	    "VADDPH, VMULPH, VFMADD213PH per element, the mode embedded (MXCSR not read)" },
	  fp16_ok, NULL, NULL, fpl__native_ph_arith },
};
#define NIMPLS (sizeof impls / sizeof *impls)

static fpl_native_kernel pubs[NIMPLS];
static pthread_once_t pubs_once = PTHREAD_ONCE_INIT;

static void pubs_fill(void)
{
	size_t i;

	for (i = 0; i < NIMPLS; i++)
		pubs[i] = impls[i].pub;
}

/* The entry behind a public record, or NULL. */
static const fpl__native_impl *impl_of(const fpl_native_kernel *k)
{
	size_t i;

	pthread_once(&pubs_once, pubs_fill);
	for (i = 0; i < NIMPLS; i++)
		if (k == &pubs[i])
			return &impls[i];
	return NULL;
}

const fpl_native_kernel *fpl_native_kernels(size_t *count)
{
	pthread_once(&pubs_once, pubs_fill);
	if (count)
		*count = NIMPLS;
	return pubs;
}
#else
static const fpl__native_impl *impl_of(const fpl_native_kernel *k)
{
	(void)k;
	return NULL;
}

const fpl_native_kernel *fpl_native_kernels(size_t *count)
{
	if (count)
		*count = 0;
	return NULL;
}
#endif

const fpl_native_kernel *fpl_native_find(fpl_native_op op, const char *profile)
{
	const fpl_native_kernel *k;
	size_t n, i;
	const fpl_native_kernel *first = NULL;

	if (!profile)
		return NULL;
	k = fpl_native_kernels(&n);
	for (i = 0; i < n; i++) {
		if (k[i].op != op || strcmp(k[i].profile, profile))
			continue;
		if (fpl_native_usable(&k[i], NULL))
			return &k[i];
		if (!first)
			first = &k[i];
	}
	return first;
}

int fpl_native_usable(const fpl_native_kernel *k, const char **why)
{
	const fpl__native_impl *p = impl_of(k);
	const char *w = "";
	int ok;

	if (!p) {
		if (why)
			*why = "not a native kernel of this build";
		return 0;
	}
	ok = p->usable(&w);
	if (why)
		*why = ok ? "" : w;
	return ok;
}

int fpl_native_gemm(const fpl_native_kernel *k, int beta, size_t m, size_t n, size_t kk,
		    const float *a, const float *b, float *c, int threads)
{
	const fpl__native_impl *p = impl_of(k);

	if (!p || p->pub.op != FPL_NATIVE_GEMM || !p->gemm || (m && n && !c)
	    || (m && kk && !a) || (kk && n && !b) || (beta != 0 && beta != 1))
		return FPL_EINVAL;
	if (!fpl_native_usable(k, NULL))
		return FPL_EUNSUPPORTED;
	if (threads < 1)
		threads = 1;
	if (!strcmp(p->pub.profile, "fp16-fma")) {
		if (!fpl__native_all_f16(a, m * kk) || !fpl__native_all_f16(b, kk * n)
		    || (beta && !fpl__native_all_f16(c, m * n)))
			return FPL_ERANGE;
	} else if (strcmp(p->pub.profile, "fp32-fma")
		   && (!fpl__native_all_bf16(a, m * kk) || !fpl__native_all_bf16(b, kk * n))) {
		return FPL_ERANGE;
	}
	if (!m || !n)
		return 0;
	return p->gemm(beta, m, n, kk, a, b, c, threads);
}

/* Is `mode` one of the space-separated words of `modes`? */
static int has_mode(const char *modes, const char *mode)
{
	size_t len = strlen(mode);
	const char *p = modes;

	while ((p = strstr(p, mode))) {
		if ((p == modes || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return 1;
		p++;
	}
	return 0;
}

int fpl_native_round_f32(const fpl_native_kernel *k, fpl_rnd rnd, const float *x, size_t n,
			 uint16_t *out)
{
	const fpl__native_impl *p = impl_of(k);

	if (!p || p->pub.op != FPL_NATIVE_ROUND || !p->round || (n && (!x || !out)))
		return FPL_EINVAL;
	if (!fpl_native_usable(k, NULL))
		return FPL_EUNSUPPORTED;
	if (!has_mode(p->pub.modes, fpl_rnd_name(rnd)))
		return FPL_EUNSUPPORTED;
	return p->round(rnd, x, n, out);
}

int fpl_native_arith_f16(const fpl_native_kernel *k, fpl_native_arith_op op, fpl_rnd rnd,
			 const uint16_t *a, const uint16_t *b, const uint16_t *c, size_t n,
			 uint16_t *out)
{
	const fpl__native_impl *p = impl_of(k);

	if (!p || p->pub.op != FPL_NATIVE_ARITH || !p->arith
	    || (op != FPL_NATIVE_ADD && op != FPL_NATIVE_MUL && op != FPL_NATIVE_FMA)
	    || (n && (!a || !b || !out || (op == FPL_NATIVE_FMA && !c))))
		return FPL_EINVAL;
	if (!fpl_native_usable(k, NULL))
		return FPL_EUNSUPPORTED;
	if (!has_mode(p->pub.modes, fpl_rnd_name(rnd)))
		return FPL_EUNSUPPORTED;
	return p->arith(op, rnd, a, b, c, n, out);
}
