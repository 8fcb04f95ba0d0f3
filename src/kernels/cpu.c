/* SPDX-License-Identifier: MIT */
/*
 * cpu.c - CPU feature detection.  A feature counts only when CPUID
 * reports it AND the OS saves the register state it needs (XGETBV):
 * YMM for AVX2/FMA, YMM+ZMM+opmask for AVX-512.  Detected once, under
 * pthread_once; the result is read-only afterwards.
 */
#include <pthread.h>
#include <string.h>

#include "kernels/kernels_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xgetbv0(void)
{
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}

static void detect(fpl_cpu_features *c)
{
	unsigned a, b, cx, d, max;
	int osxsave, ymm = 0, zmm = 0;

	memset(c, 0, sizeof *c);
	if (!__get_cpuid(0, &max, &b, &cx, &d) || max < 7)
		return;
	__cpuid(1, a, b, cx, d);
	osxsave = (cx >> 27) & 1;
	if (osxsave) {
		unsigned long long x = xgetbv0();
		ymm = (x & 0x6) == 0x6;
		zmm = (x & 0xe6) == 0xe6;
	}
	c->fma = ymm && ((cx >> 12) & 1);
	c->f16c = ymm && ((cx >> 29) & 1);
	__cpuid_count(7, 0, a, b, cx, d);
	c->avx2 = ymm && ((b >> 5) & 1);
	c->avx512f = zmm && ((b >> 16) & 1);
	c->avx512dq = zmm && ((b >> 17) & 1);
	c->avx512bw = zmm && ((b >> 30) & 1);
	c->avx512vl = zmm && ((b >> 31) & 1);
	c->avx512_fp16 = zmm && ((d >> 23) & 1);
	c->amx_bf16 = (d >> 22) & 1;
	c->amx_tile = (d >> 24) & 1;
	__cpuid_count(7, 1, a, b, cx, d);
	c->avx512_bf16 = zmm && ((a >> 5) & 1);
}

/* AMD (and Hygon) CPUs, by the CPUID vendor string. */
static int detect_amd(void)
{
	unsigned max, b, c, d;

	if (!__get_cpuid(0, &max, &b, &c, &d))
		return 0;
	return (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u)	/* AuthenticAMD */
	       || (b == 0x6f677948u && d == 0x6e65476eu && c == 0x656e6975u);	/* HygonGenuine */
}
#else
static void detect(fpl_cpu_features *c)
{
	memset(c, 0, sizeof *c);
}

static int detect_amd(void)
{
	return 0;
}
#endif

static fpl_cpu_features features;
static int amd;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static void detect_once(void)
{
	detect(&features);
	amd = detect_amd();
}

/* Detection runs exactly once (pthread_once), so concurrent first calls
 * neither race on `features` nor see it half written. */
const fpl_cpu_features *fpl_cpu(void)
{
	pthread_once(&features_once, detect_once);
	return &features;
}

/* Non-temporal stores for outputs beyond the caches: they save the
 * read-for-ownership of every written line on Intel CPUs, but on AMD Zen
 * 5 the direct kernels ran slower with them than with plain stores
 * (binary32 bf16 sp 0.66 against 0.85 of memcpy, binary64 e2m1 sp 0.58
 * against 0.77, one thread, 2^24 elements), so AMD CPUs get plain ones. */
int fpl__cpu_stream_stores(void)
{
	pthread_once(&features_once, detect_once);
	return !amd;
}
