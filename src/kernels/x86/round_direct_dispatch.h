/* SPDX-License-Identifier: MIT */
/*
 * x86/round_direct_dispatch.h - the mode switch of the direct rounding
 * kernels (round_direct.c for AVX-512, round_direct_avx2.c for AVX2),
 * included by each after its kd_run(p, rnd, stream, f32, z, x, n, idx0,
 * slow, ctx, out).  kd_dispatch instantiates one kd_run per mode, element
 * type and store kind, so that all three are constants inside its loops;
 * an unknown mode leaves every count 0.  Streaming stores need the output
 * aligned to its element to reach vector alignment; otherwise plain ones.
 */
#ifndef FPL_KERNELS_X86_ROUND_DIRECT_DISPATCH_H
#define FPL_KERNELS_X86_ROUND_DIRECT_DISPATCH_H

#define KD_CASE(M) \
	case M: \
		if (f32 && stream) \
			kd_run(p, M, 1, 1, z, x, n, idx0, slow, ctx, out); \
		else if (f32) \
			kd_run(p, M, 0, 1, z, x, n, idx0, slow, ctx, out); \
		else if (stream) \
			kd_run(p, M, 1, 0, z, x, n, idx0, slow, ctx, out); \
		else \
			kd_run(p, M, 0, 0, z, x, n, idx0, slow, ctx, out); \
		return

static void kd_dispatch(const fpl_kparams *p, void *z, const void *x, int f32, size_t n,
			uint64_t idx0, int stream, fpl_kslow slow, void *ctx, fpl_kcounts *out)
{
	stream = stream && ((uintptr_t)z & (f32 ? 3 : 7)) == 0;
	switch (p->rnd) {
	KD_CASE(FPL_RND_NE);
	KD_CASE(FPL_RND_NA);
	KD_CASE(FPL_RND_NZ);
	KD_CASE(FPL_RND_TP);
	KD_CASE(FPL_RND_TN);
	KD_CASE(FPL_RND_TZ);
	KD_CASE(FPL_RND_OD);
	KD_CASE(FPL_RND_SP);
	KD_CASE(FPL_RND_SE);
	default:
		out->special = out->tiny = out->inexact = out->underflow = 0;
		out->overflow = out->saturated = 0;
		return;
	}
}

#undef KD_CASE
#endif
